"""Run the kgbench inspect-ai task with inspect's offline mock model (in .venv-evals).

    python inspect_run.py RELEASE ANSWERS.json OUT.json LOG_DIR

The mock model answers each prompt with the text ANSWERS.json maps it to (what the model
answered in the kgbench run); OUT.json gets each sample's score value and completion, and the
task's aggregate metrics, read back from inspect's own log.
"""

from __future__ import annotations

import json
import sys

from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from kgbench.integrations.inspect import kgbench, score_values


def main(release: str, answers_file: str, out_file: str, log_dir: str) -> int:
    with open(answers_file, encoding="utf-8") as handle:
        answers = json.load(handle)

    def respond(messages, tools, tool_choice, config) -> ModelOutput:
        (message,) = messages  # the one user message kgbench renders
        output = ModelOutput.from_content(model="mockllm/model", content=answers[message.text])
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    model = get_model("mockllm/model", custom_outputs=respond)
    (log,) = inspect_eval(
        kgbench(release=release, condition="C1"), model=model, log_dir=log_dir, display="none"
    )
    log = read_eval_log(log.location)  # what inspect wrote, not what it holds in memory
    if log.status != "success":
        print(log.error, file=sys.stderr)
        return 1
    samples = {
        str(s.id): {
            "completion": s.output.completion,
            "scores": score_values(s.scores["kgbench_scorer"].value),
            "parse_status": s.scores["kgbench_scorer"].metadata["parse_status"],
        }
        for s in log.samples or []
    }
    metrics = {
        score.name: {name: m.value for name, m in score.metrics.items()}
        for score in log.results.scores
    }
    out = {"samples": samples, "metrics": metrics, "total": log.results.total_samples}
    with open(out_file, "w", encoding="utf-8") as handle:
        json.dump(out, handle)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
