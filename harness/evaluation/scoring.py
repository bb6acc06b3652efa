"""The scorer (paper section 3.7): one pass of the metric panel over one parsed response.

`score_response` is the library function over plain dicts, and `apply_policy` the declared
unparseable-answer policy it and the public facade (kgbench.scoring) apply. The rest of the
scorer lives beside it, one concept a module: `compiled_scorer` (a compiled domain's panel,
lexicon and response contract, `scorer_of`), `run_inputs` (what a run folder gives scoring,
and `domain_of`, which compiled domain a run is scored with) and `run_scoring` (`kgbench
score`, `score_run`). The panel, the lexicon and the response contract always come from a
compiled domain (generated/<domain>/metrics.json, the contract's MetricPanel, so a domain's
declared metrics are scored without code here): the harness holds no copy of them.

Whatever a model returns is scored, never a crash: text that is not JSON, JSON of the wrong
shape, fields of the wrong type, unknown ids, very long or hostile strings. A field that does
not have its contract type counts as absent (nothing is credited for it), and the item is
flagged as a parse failure so the panel can report it beside the scores.

Every item gets a parse status from the one judge (harness/evaluation/judge.py, which the
runner calls too). An answer with no JSON object in it is "unparseable": under the declared
policy (spec/declarations/metrics.yaml, `unparseable_policy`) it either counts as a wrong
answer (intent-to-treat: scored as an empty answer) or is left out of the means
(per-protocol); the panel carries both where they differ. Judging is linear in the answer
(no backtracking regular expression), and numbers read from the responses log are checked
before use, so no answer and no log line can make scoring slow or large.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.compiled import CompiledDomain
from harness.evaluation.lexicon import Lexicon
from harness.evaluation.metrics import UNPARSEABLE_POLICIES, score_panel
from kgbench.contract import Metric
from kgbench.errors import UserError

from .compiled_scorer import CompiledScorer, scorer_of
from .judge import judge

DOMAIN_NAME = re.compile(r"[a-z][a-z0-9_]*")


def apply_policy(
    scores: dict[str, float | None], status: str, policy: str
) -> dict[str, float | None]:
    """The scores an item contributes under a policy: per-protocol leaves an unparseable
    answer out (every metric undefined), intent-to-treat keeps it as scored (an empty answer:
    0 on every metric defined for it)."""
    if policy not in UNPARSEABLE_POLICIES:
        raise UserError(
            f"unknown unparseable-answer policy '{policy}'; expected one of "
            + ", ".join(UNPARSEABLE_POLICIES)
        )
    if policy == "per_protocol" and status == "unparseable":
        return dict.fromkeys(scores)
    return dict(scores)


class ResponseScores(dict[str, float | None]):
    """Metric name -> value (None where undefined), plus how the answer was read.

    A dict, so existing callers index it as before; `parse_status` is one of PARSE_STATUSES
    and `problems` says what was wrong with the answer.
    """

    def __init__(
        self, scores: dict[str, float | None], parse_status: str, problems: tuple[str, ...]
    ) -> None:
        super().__init__(scores)
        self.parse_status = parse_status
        self.problems = problems


# --- scoring one response -----------------------------------------------------------------


def score_response(
    gold: dict[str, Any],
    response: Any,
    context: dict[str, Any] | None,
    *,
    lexicon: Lexicon | None = None,
    metrics: Sequence[Metric] | None = None,
    domain: str | Path | CompiledDomain | None = None,
    policy: str | None = None,
) -> ResponseScores:
    """Score one response on the metric panel: metric name -> value, None where undefined.

    `gold` uses the scenario's gold field names; `response` is the contract object (a dict),
    or anything else a model produced (text, malformed JSON), which is scored as well as it
    can be; `context` is the extracted subgraph as `kgbench extract` writes it, None under C1.
    The result is a dict that also carries `parse_status` (see PARSE_STATUSES).

    The compiled domain (`domain`: a name, a compiled folder or a handle, opened by
    CompiledDomain.open; else the `domain` the context names, when it is compiled under
    generated/) supplies the panel, the lexicon (synonyms, intervention classes), the
    response contract and the unparseable-answer policy, exactly as `kgbench score` uses
    them, so the two agree on every input. `lexicon`, `metrics` and `policy` override it
    (`Lexicon.from_context` matches names without a graph: exact ids and names only).
    Without a compiled domain there is no panel and no contract to score against: a
    UserError says to name one.
    """
    gold = gold if isinstance(gold, dict) else {}
    scorer = _scorer_named(domain, context)
    if scorer is None:
        raise UserError(
            "score_response needs a compiled domain for its panel and response contract: "
            "pass domain='<name>' (compiled under generated/) or a context that names one"
        )
    verdict = judge(response, scorer.contract)
    lexicon = scorer.lexicon if lexicon is None else lexicon
    metrics = scorer.metrics if metrics is None else metrics
    policy = scorer.policy if policy is None else policy
    scores = score_panel(metrics, gold, verdict.response, context, lexicon)
    return ResponseScores(
        apply_policy(scores, verdict.parse_status, policy),
        verdict.parse_status,
        verdict.problems,
    )


def _scorer_named(
    domain: str | Path | CompiledDomain | None, context: dict[str, Any] | None
) -> CompiledScorer | None:
    """The scorer of `domain` (the one opener's rule; one that is not compiled is the opener's
    message), else of the domain the context names, when that is a plain name compiled under
    generated/ (a context is data: its name is never read as a path); None otherwise."""
    if domain is not None:
        return scorer_of(domain)
    name = context.get("domain") if isinstance(context, dict) else None
    if not isinstance(name, str) or not DOMAIN_NAME.fullmatch(name):
        return None
    try:
        return scorer_of(name)
    except UserError:
        return None  # a context from an uncompiled domain: no panel to score with
