"""A run folder: the one owner of its layout, of `run.json`, and of reading what it holds.

```
runs/<name>/
  run.json                       format_version, domain, compiled_domain (relative), ...
  scenarios.jsonl
  contexts/<scenario>/<condition>.json
  prompts/prompts.jsonl          (+ reordered presentations, `prompts --order-variants`)
  prompts/verify.jsonl           the verify-and-revise (C5) answer prompts, `kgbench verify`
  responses/<log>.jsonl          one per model (the model's slug) or --log-name
  responses/<log>.run.json       the runner's settings and counts for that log
  scores/<log>/items.jsonl, panel.json, order.json (order sensitivity, when rendered)
  verify/<slug>/stages/          the C5 steps' runner logs (generate, revise-k, answer)
  verify/<slug>/chains/<scenario>.json, summary.json
  probe/<model-slug>/            the graph-generation probe
  report/report.md, report.html
```

Every stage (extract, prompts, run, score, report, probe) asks this module where a file is
and reads it here, so a change to the layout or to `run.json` is one edit. A run folder is
user input (written by earlier `kgbench` steps, but also by hand), so every problem is a
`UserError` naming the file, the line where there is one, and the command that fixes it.

Two files have owners of their own, which this module calls: run.json's format and check
(harness.run_description) and a prompts file's lines (harness.prompt_file); `Prompt`,
`RunDescription` and `RUN_FORMAT` are re-exported here for the callers that hold a run folder.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cached_property
from pathlib import Path
from typing import Any

from kgbench import contract
from kgbench.errors import Location, UserError
from kgbench.io import atomic_write_json, atomic_write_text, read_json_object
from kgbench.untrusted import load_json_or_none

from .compiled import CompiledDomain
from .prompt_file import Prompt, read_prompts, write_prompts
from .run_description import (
    RUN_FORMAT,
    RUN_JSON,
    RunDescription,
    kept_on_rewrite,
    parse_description,
)
from .scenario_files import read_scenarios

__all__ = ["RUN_FORMAT", "Prompt", "RunDescription", "RunFolder"]

SCENARIOS = "scenarios.jsonl"
PROMPTS = Path("prompts") / "prompts.jsonl"
VERIFY_PROMPTS = Path("prompts") / "verify.jsonl"


class RunFolder:
    """A run folder on disk; cheap to create, reads lazily and each file at most once."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @classmethod
    def open(cls, path: Path) -> RunFolder:
        """An existing run folder (a missing one is a UserError)."""
        folder = cls(path)
        if not folder.path.is_dir():
            raise UserError(f"run folder {folder.path} does not exist")
        return folder

    def __repr__(self) -> str:
        return f"RunFolder({str(self.path)!r})"

    # --- layout ------------------------------------------------------------------------------

    @property
    def run_json(self) -> Path:
        return self.path / RUN_JSON

    @property
    def scenarios_file(self) -> Path:
        return self.path / SCENARIOS

    @property
    def prompts_file(self) -> Path:
        return self.path / PROMPTS

    @property
    def verify_prompts_file(self) -> Path:
        return self.path / VERIFY_PROMPTS

    @property
    def responses_dir(self) -> Path:
        return self.path / "responses"

    @property
    def scores_dir(self) -> Path:
        return self.path / "scores"

    @property
    def report_dir(self) -> Path:
        return self.path / "report"

    def context_path(self, scenario_id: str, condition: str) -> Path:
        return self.path / "contexts" / scenario_id / f"{condition}.json"

    def response_log(self, stem: str) -> Path:
        return self.responses_dir / f"{stem}.jsonl"

    def response_lock(self, stem: str) -> Path:
        """The lock every writer of responses/<stem>.jsonl holds (`kgbench run`, `kgbench
        verify` appending its C5 answers): one writer per log at a time."""
        return self.responses_dir / f".{stem}.lock"

    def log_settings(self, stem: str) -> Path:
        """responses/<stem>.run.json: what the runner records about one log."""
        return self.responses_dir / f"{stem}.run.json"

    def scores_for(self, stem: str) -> Path:
        return self.scores_dir / stem

    def order_file(self, stem: str) -> Path:
        """scores/<stem>/order.json: the order-sensitivity figures of one log."""
        return self.scores_for(stem) / "order.json"

    def probe_dir(self, slug: str) -> Path:
        return self.path / "probe" / slug

    @property
    def verify_root(self) -> Path:
        return self.path / "verify"

    def verify_dir(self, slug: str) -> Path:
        """verify/<slug>/: one model's verify-and-revise (C5) run: stages/, chains/, summary."""
        return self.verify_root / slug

    def chain_path(self, slug: str, scenario_id: str) -> Path:
        return self.verify_dir(slug) / "chains" / f"{scenario_id}.json"

    # --- run.json ----------------------------------------------------------------------------

    @cached_property
    def description(self) -> RunDescription:
        """run.json, checked: present, this format, and naming a domain."""
        if not self.run_json.exists():
            raise UserError(
                f"{self.run_json} not found; render the prompts first "
                f"(`kgbench prompts --run-dir {self.path}`), which writes it"
            )
        return self._parse(read_json_object(self.run_json, "run description (JSON object)"))

    def _parse(self, data: dict[str, Any]) -> RunDescription:
        return parse_description(data, self.path)

    def describe(self, compiled: CompiledDomain, **changes: Any) -> RunDescription:
        """Write run.json for `compiled` (keeping what other tools recorded); returns it.

        The compiled domain is recorded (relative to the run folder) only when it is not the
        project's generated/<domain>, which the name alone finds.
        """
        keep: dict[str, Any] = {}
        if self.run_json.exists():
            keep = kept_on_rewrite(read_json_object(self.run_json, "run description (JSON object)"))
        relative = None
        if not compiled.is_project_compile:
            relative = Path(os.path.relpath(compiled.root.resolve(), self.path.resolve()))
            relative = relative.as_posix()
        keep.pop("compiled_domain", None)
        description = self._parse(
            {
                **keep,
                "format_version": RUN_FORMAT,
                "domain": compiled.name,
                **({"compiled_domain": relative} if relative else {}),
                **changes,
            }
        )
        self.path.mkdir(parents=True, exist_ok=True)
        written = description.to_json()
        contract.RunDescriptionFile.model_validate(written)  # what we write keeps its contract
        atomic_write_json(self.run_json, written)
        self.__dict__["description"] = description
        return description

    # --- the compiled domain -------------------------------------------------------------------

    def _named_domains(self) -> list[str]:
        """The domains the run's scenarios name, sorted."""
        return sorted(
            {s.get("domain") for s in self.scenarios() if isinstance(s.get("domain"), str)}
        )

    def _scenarios_domain(self) -> str:
        """The one domain the run's scenarios name."""
        names = self._named_domains()
        if len(names) != 1:
            raise UserError(
                f"cannot tell the domain of {self.path}: it has no run.json and the scenarios "
                f"name {names or 'none'}; pass --domain"
            )
        return names[0]

    def compiled(
        self, domain: str | Path | CompiledDomain | None = None, describing: bool = False
    ) -> CompiledDomain:
        """The one rule for the compiled domain this run belongs to: `domain` (a handle, a
        name or a compiled folder) when given, else the one run.json records, else the one
        its scenarios name.

        `describing` is for a command that (re)writes run.json (`kgbench prompts`): a given
        domain is taken as is, and a run.json that cannot answer (another format, a missing
        compiled folder) gives way to the scenarios' one domain.
        """
        if domain is not None:
            compiled = CompiledDomain.open(domain)
            if describing:
                return compiled
            if self.run_json.exists() and compiled.name != self.description.domain:
                raise UserError(
                    f"--domain {str(domain)!r} is domain '{compiled.name}', but this run folder "
                    f"is of domain '{self.description.domain}': a run is scored only with its "
                    "own domain (its panel and lexicon); leave --domain out",
                    Location(str(self.run_json)),
                )
            self._check_scenario_domains()
            return compiled
        try:
            return self._recorded()
        except UserError:
            if not describing or not self.run_json.exists():
                raise
            names = self._named_domains()
            if len(names) != 1:
                raise
            return CompiledDomain.open(names[0])

    def _recorded(self) -> CompiledDomain:
        """The compiled domain run.json records (its folder, else its name), else the one the
        scenarios name; a recorded folder compiled for another domain is refused."""
        if not self.run_json.exists():
            return CompiledDomain.open(self._scenarios_domain())
        self._check_scenario_domains()
        recorded = self.description.compiled_domain
        if recorded is None:
            return CompiledDomain.open(self.description.domain)
        root = (self.path / recorded).resolve()
        if not (root / "manifest.json").exists():
            raise UserError(
                f"the compiled domain {recorded!r} (relative to the run folder) has no "
                f"manifest.json; recompile it, or run `kgbench prompts --run-dir {self.path} "
                "--domain <domain>`",
                Location(str(self.run_json)),
            )
        compiled = CompiledDomain.open(root)
        if compiled.name != self.description.domain:
            raise UserError(
                f"the compiled domain {recorded!r} (relative to the run folder) is of domain "
                f"'{compiled.name}', but run.json says '{self.description.domain}'; run "
                f"`kgbench prompts --run-dir {self.path} --domain <domain>`",
                Location(str(self.run_json)),
            )
        return compiled

    def _check_scenario_domains(self) -> None:
        """run.json's domain must be the one the run's scenarios name (a run.json edited to
        another domain had one domain's run scored with another's panel, exit 0)."""
        if not self.run_json.exists() or not self.scenarios_file.exists():
            return
        named = {s.get("domain") for s in self._scenarios if isinstance(s.get("domain"), str)}
        other = sorted(named - {self.description.domain})
        if other:
            raise UserError(
                f"says domain '{self.description.domain}', but the run's scenarios are of "
                f"{', '.join(repr(d) for d in other)}; run `kgbench prompts --run-dir "
                f"{self.path} --domain <domain>` to describe the run again",
                Location(str(self.run_json)),
            )

    def response_schema(
        self, compiled: CompiledDomain | None = None
    ) -> tuple[Path, dict[str, Any]]:
        """The response schema the run's prompts ask for, and its path; `compiled` is the
        run's compiled domain when the caller holds it open (else it is found here)."""
        explicit = self.description.response_schema
        if explicit is not None:
            path = (self.path / explicit).resolve()
            if not path.exists():
                raise UserError(
                    f"response_schema '{explicit}' not found (relative to the run folder)",
                    Location(str(self.run_json)),
                )
        else:
            path = self.compiled(compiled).schema_path("response")
            if not path.exists():
                raise UserError(
                    f"{path} is missing; run `kgbench compile --domain {self.description.domain}`"
                )
        return path, read_json_object(path, "JSON Schema")

    # --- scenarios and contexts ------------------------------------------------------------------

    def scenarios(self) -> list[dict[str, Any]]:
        if not self.scenarios_file.exists():
            raise UserError(
                f"{self.scenarios_file} not found: a run folder needs its scenarios (run "
                f"`kgbench generate --domain <domain> --out {self.scenarios_file}`, or copy a "
                "scenarios.jsonl there)"
            )
        return self._scenarios

    @cached_property
    def _scenarios(self) -> list[dict[str, Any]]:
        return read_scenarios(self.scenarios_file)

    def scenarios_by_id(self) -> dict[str, dict[str, Any]]:
        """Whole scenarios by id, each checked to carry a gold object (the oracle and the
        scorer read gold and candidate labels from them)."""
        out: dict[str, dict[str, Any]] = {}
        for scenario in self.scenarios():
            if not isinstance(scenario.get("gold"), dict):
                raise UserError(
                    f"scenario {scenario['scenario_id']} has no gold object; regenerate the "
                    "scenarios",
                    Location(str(self.scenarios_file)),
                )
            out[str(scenario["scenario_id"])] = scenario
        return out

    def has_contexts(self, condition: str) -> bool:
        """Whether any scenario's context of `condition` was extracted into this folder."""
        return next((self.path / "contexts").glob(f"*/{condition}.json"), None) is not None

    def context(self, scenario_id: str, condition: str) -> dict[str, Any]:
        """The extracted subgraph of a grounded condition; missing means extraction was not run."""
        path = self.context_path(scenario_id, condition)
        if not path.exists():
            raise UserError(
                f"missing context {path} for scenario {scenario_id} under {condition}; "
                f"run `kgbench extract --domain <domain> --run-dir {self.path}` first"
            )
        data = read_json_object(path, "extracted-context object")
        contract.parse(
            contract.Context,
            data,
            path,
            remedy=f"run `kgbench extract --domain <domain> --run-dir {self.path}` again",
        )
        for key, want in (("scenario_id", scenario_id), ("condition", condition)):
            if key in data and data[key] != want:
                raise UserError(
                    f"context is for {key} {data[key]!r}, expected {want!r}; re-run "
                    "`kgbench extract`",
                    Location(str(path)),
                )
        return data

    def write_contexts(self, contexts: Iterable[dict[str, Any]]) -> int:
        """Write extracted contexts (each names its scenario and condition); returns how many."""
        n = 0
        for ctx in contexts:
            atomic_write_json(self.context_path(ctx["scenario_id"], ctx["condition"]), ctx)
            n += 1
        return n

    # --- prompts -------------------------------------------------------------------------------

    def write_prompts(self, prompts: Iterable[Prompt]) -> Path:
        return write_prompts(self.prompts_file, prompts)

    def prompts(self, limit: int | None = None) -> list[Prompt]:
        """The rendered prompts in file order (the first `limit` of them)."""
        path = self.prompts_file
        if not path.exists():
            raise UserError(f"{path} not found; run `kgbench prompts --run-dir {self.path}` first")
        prompts = read_prompts(path, limit)
        if not prompts:
            raise UserError(f"{path} holds no prompts")
        return prompts

    def write_verify_prompts(self, prompts: Iterable[Prompt]) -> Path:
        """prompts/verify.jsonl: the C5 answer prompts, apart from prompts.jsonl (which
        `kgbench prompts` rewrites and `kgbench run` answers; C5 has no single prompt)."""
        return write_prompts(self.verify_prompts_file, prompts)

    def verify_prompts(self) -> list[Prompt]:
        """The C5 answer prompts; none when `kgbench verify` did not run here."""
        path = self.verify_prompts_file
        return read_prompts(path) if path.exists() else []

    # --- verify-and-revise (C5) --------------------------------------------------------------------

    def verify_runs(self) -> list[str]:
        """The slugs `kgbench verify` ran for here (verify/<slug>/), sorted."""
        root = self.verify_root
        return sorted(p.name for p in root.iterdir() if p.is_dir()) if root.is_dir() else []

    def write_chain(self, slug: str, scenario_id: str, chain: dict[str, Any]) -> None:
        atomic_write_json(self.chain_path(slug, scenario_id), chain)

    def chain(self, slug: str, scenario_id: str) -> dict[str, Any]:
        """One scenario's chain (every triplet's proposal, verdicts and revisions)."""
        path = self.chain_path(slug, scenario_id)
        if not path.exists():
            raise UserError(f"{path} does not exist; is {scenario_id} a scenario of this run?")
        chain = read_json_object(path, "verify-and-revise chain (JSON object)")
        if not isinstance(chain.get("triplets"), list):
            raise UserError("has no 'triplets' list; re-run `kgbench verify`", Location(str(path)))
        return chain

    def write_verify_summary(self, slug: str, summary: dict[str, Any]) -> None:
        atomic_write_json(self.verify_dir(slug) / "summary.json", summary)

    def verify_summaries(self, slug: str) -> list[dict[str, Any]]:
        """The log's verify-and-revise summary (verify/<slug>/summary.json) as a list of at
        most one; none when C5 did not run. An unreadable one is skipped: the panel, not this
        side table, is the report's contract."""
        path = self.verify_dir(slug) / "summary.json"
        data = load_json_or_none(path, max_depth=None) if path.is_file() else None
        return (
            [data] if isinstance(data, dict) and isinstance(data.get("first_review"), dict) else []
        )

    # --- responses, scores, probes -----------------------------------------------------------------

    def response_logs(self, stem: str | None = None) -> list[Path]:
        """responses/<stem>.jsonl (or every log), sorted; none at all is a UserError."""
        available = (
            sorted(self.responses_dir.glob("*.jsonl")) if self.responses_dir.is_dir() else []
        )
        if stem is not None:
            path = self.response_log(stem)
            if not path.exists():
                names = ", ".join(p.stem for p in available) or "none"
                raise UserError(f"no responses log {path} (logs here: {names})")
            return [path]
        if not available:
            raise UserError(
                f"no responses under {self.responses_dir}; answer the prompts first "
                f"(`kgbench run --run-dir {self.path} --model MODEL`)"
            )
        return available

    def log_settings_of(self, log: Path) -> dict[str, Any]:
        """What the runner recorded about a log (responses/<stem>.run.json); {} when absent
        or unreadable (it is informative, never required)."""
        path = log.with_suffix(".run.json")
        if not path.is_file():
            return {}
        value = load_json_or_none(path, max_depth=None)
        return value if isinstance(value, dict) else {}

    def write_scores(self, stem: str, items_text: str, panel: dict[str, Any]) -> Path:
        out = self.scores_for(stem)
        atomic_write_text(out / "items.jsonl", items_text)
        atomic_write_json(out / "panel.json", panel)
        return out / "panel.json"

    def write_order(self, stem: str, figures: dict[str, Any] | None) -> None:
        """scores/<stem>/order.json; None removes a stale one (the prompts were re-rendered
        without presentations), so a report never shows figures the run no longer has."""
        if figures is None:
            self.order_file(stem).unlink(missing_ok=True)
        else:
            atomic_write_json(self.order_file(stem), figures)

    def order_figures(self, stem: str) -> dict[str, Any] | None:
        """scores/<stem>/order.json, or None when order sensitivity was not scored."""
        path = self.order_file(stem)
        return read_json_object(path, "order figures (JSON object)") if path.is_file() else None

    def panels(self, stem: str | None = None) -> list[dict[str, Any]]:
        """The panel.json of every scored log (or of one), sorted by log name."""
        paths = sorted(self.scores_dir.glob("*/panel.json")) if self.scores_dir.is_dir() else []
        if stem is not None:
            paths = [p for p in paths if p.parent.name == stem]
        if not paths:
            what = f"log '{stem}'" if stem else "any model"
            raise UserError(
                f"no scores for {what} under {self.scores_dir}; run `kgbench score --run-dir "
                f"{self.path}` first"
            )
        panels = []
        for path in paths:
            panel = read_json_object(path, "panel written by `kgbench score`")
            if "overall" not in panel:
                raise UserError("not a panel written by `kgbench score`", Location(str(path)))
            contract.check_version(
                contract.ScoredPanel,
                panel,
                path,
                remedy=f"run `kgbench score --run-dir {self.path}` again",
            )
            panel.setdefault("slug", path.parent.name)
            panels.append(panel)
        return panels

    def probed(self, slug: str | None = None) -> dict[str, Path]:
        """slug -> probe folder, for every model the probe ran (or the one asked for)."""
        root = self.path / "probe"
        found = {p.name: p for p in sorted(root.iterdir()) if p.is_dir()} if root.is_dir() else {}
        return {s: p for s, p in found.items() if slug is None or s == slug}
