"""The scorer (paper section 3.7): one pass of the metric panel over one parsed response.

`score_response` is the library function over plain dicts. `score_run` is `kgbench score`:
it scores a run folder's responses logs with the compiled panel of the run's domain
(generated/<domain>/metrics.json, the contract's MetricPanel, so a domain's declared metrics
are scored without code here) and writes per-item scores and the aggregated panel. The panel,
the lexicon and the response contract always come from a compiled domain: the harness holds
no copy of them.

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

import heapq
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from harness.compiled import CompiledDomain
from harness.evaluation.claims import CITED_ASSERTION_FIELDS
from harness.evaluation.lexicon import Lexicon
from harness.evaluation.metrics import (
    CAUSAL_READINGS,
    CHAIN_KINDS,
    DEFINED_WHEN,
    KINDS,
    UNPARSEABLE_POLICIES,
    PanelPlan,
    score_panel,
)
from harness.runfolder import Prompt, RunFolder
from kgbench.contract import (
    Condition,
    IncompatibleArtifact,
    Metric,
    MetricPanel,
    OrderFigures,
    RecordView,
    ScoredPanel,
)
from kgbench.errors import Location, UserError
from kgbench.io import jsonl_text
from kgbench.untrusted import load_json_object

from .judge import Contract, Judgement, compile_contract, judge, judged_ok
from .responses_log import ResponsesLog, answer_of

MAX_UNKNOWN_IDS = 20
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
    domain: str | CompiledDomain | None = None,
    policy: str | None = None,
) -> ResponseScores:
    """Score one response on the metric panel: metric name -> value, None where undefined.

    `gold` uses the scenario's gold field names; `response` is the contract object (a dict),
    or anything else a model produced (text, malformed JSON), which is scored as well as it
    can be; `context` is the extracted subgraph as `kgbench extract` writes it, None under C1.
    The result is a dict that also carries `parse_status` (see PARSE_STATUSES).

    The compiled domain (`domain`, else the `domain` the context names, when it is compiled
    under generated/) supplies the panel, the lexicon (synonyms, intervention classes), the
    response contract and the unparseable-answer policy, exactly as `kgbench score` uses
    them, so the two agree on every input. `lexicon`, `metrics` and `policy` override it
    (`Lexicon.from_context` matches names without a graph: exact ids and names only).
    Without a compiled domain there is no panel and no contract to score against: a
    UserError says to name one.
    """
    gold = gold if isinstance(gold, dict) else {}
    scorer = _scorer_for(domain, context)
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


_SCORERS: dict[str, CompiledScorer | None] = {}


def _scorer_for(
    domain: str | CompiledDomain | None, context: dict[str, Any] | None
) -> CompiledScorer | None:
    """The compiled scorer of `domain`, or of the domain the context names (cached, and
    re-read when the domain is compiled again)."""
    if isinstance(domain, CompiledDomain):
        manifest = domain.manifest_path
        key = f"{manifest.resolve()}@{manifest.stat().st_mtime_ns}"
        if key not in _SCORERS:
            _SCORERS[key] = load_compiled_scorer(domain)
        return _SCORERS[key]
    name = domain
    if name is None and isinstance(context, dict) and isinstance(context.get("domain"), str):
        name = context["domain"]
    if not isinstance(name, str) or not DOMAIN_NAME.fullmatch(name):
        if domain is not None:
            raise UserError(f"'{domain}' is not a domain name")
        return None
    if name not in _SCORERS:
        try:
            _SCORERS[name] = load_compiled_scorer(CompiledDomain.open(name))
        except UserError:
            if domain is not None:
                raise  # a domain asked for by name must exist
            _SCORERS[name] = None  # a context from an uncompiled domain: no lexicon
    return _SCORERS[name]


def unknown_ids(response: dict[str, Any], lexicon: Lexicon, limit: int | None = None) -> list[str]:
    """Cited ids that name no assertion or evidence source of the graph (sorted; the first
    `limit` of them without sorting them all, for answers citing 100,000 ids)."""
    out: set[str] = set()
    for key in CITED_ASSERTION_FIELDS:
        out.update(set(response.get(key, ())).difference(lexicon.assertions))
    out.update(set(response.get("supporting_evidence_ids", ())).difference(lexicon.evidence_ids))
    return sorted(out) if limit is None else heapq.nsmallest(limit, out)


@dataclass(frozen=True)
class ItemScore:
    scores: dict[str, float | None]  # intent-to-treat values: what the answer earned
    parse_ok: bool
    schema_ok: bool
    problems: tuple[str, ...]
    unknown_ids: tuple[str, ...]
    parse_status: str = "ok"


@dataclass
class CompiledScorer:
    """A compiled domain's panel: its METRICS, lexicon, response contract and the declared
    policy for unparseable answers."""

    domain: str
    metrics: tuple[Metric, ...]
    lexicon: Lexicon
    contract: Contract
    policy: str
    plan: PanelPlan = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.plan = PanelPlan(self.metrics)  # the panel's dispatch, resolved once

    def judgement_of(self, record: dict[str, Any] | RecordView) -> tuple[Judgement, bool]:
        """The verdict on a log record's answer, and whether the runner read it whole.

        A record the runner judged under this very schema (`judged_with` is the contract's
        digest) as "ok" is taken as judged: under an exact contract its cleaned fields are
        the recorded object. Any other record (another status, an older runner, another
        tool) is judged here by the same judge, from the one answer `answer_of` picks."""
        answer, whole = answer_of(record)
        if (
            whole
            and record.get("parse_status") == "ok"
            and self.contract.exact
            and record.get("judged_with") == self.contract.digest
        ):
            return judged_ok(answer), True
        return judge(answer, self.contract), whole

    def score(
        self,
        gold: dict[str, Any],
        response: Any,
        context: dict[str, Any] | None,
        verdict: Judgement | None = None,
    ) -> ItemScore:
        """Score one answer: judged here, unless `verdict` is the judgement already made of
        it under this contract (a record the runner judged, `judgement_of`)."""
        verdict = judge(response, self.contract) if verdict is None else verdict
        scores = self.plan.score(gold, verdict.response, context, self.lexicon)
        unknown = unknown_ids(verdict.response, self.lexicon, MAX_UNKNOWN_IDS)
        return ItemScore(
            scores=scores,
            parse_ok=verdict.parse_ok,
            schema_ok=verdict.schema_ok,
            problems=verdict.problems,
            unknown_ids=tuple(unknown),
            parse_status=verdict.parse_status,
        )


def with_causal_reading(scorer: CompiledScorer, reading: str | None) -> CompiledScorer:
    """The scorer with its chain kinds read as `reading` (metrics.yaml: validated_chains is
    declared, gold_path the paper's single-path variant); None keeps the declared one."""
    if reading is None:
        return scorer
    if reading not in CAUSAL_READINGS:
        raise UserError(
            f"unknown causal reading '{reading}'; expected one of {', '.join(CAUSAL_READINGS)}"
        )
    metrics = tuple(
        m.model_copy(update={"reading": reading}) if m.kind in CHAIN_KINDS else m
        for m in scorer.metrics
    )
    return CompiledScorer(scorer.domain, metrics, scorer.lexicon, scorer.contract, scorer.policy)


def readings(metrics: Iterable[Metric]) -> dict[str, str]:
    """metric name -> the reading it was scored under (the chain kinds), for panel.json."""
    return {m.name: m.reading for m in metrics if m.reading is not None}


def load_compiled_scorer(compiled: CompiledDomain) -> CompiledScorer:
    """The compiled panel of a domain: metrics.json (checked against the contract, every
    kind and rule one this harness implements), kg.json's lexicon and the response schema."""
    panel = compiled.metrics
    where = Location(str(compiled.path_of(MetricPanel.PATH)))
    for m in panel.metrics:
        for what, value, known in (
            ("kind", m.kind, KINDS),
            ("defined_when rule", m.defined_when, DEFINED_WHEN),
        ):
            if value not in known:
                raise IncompatibleArtifact(
                    f"metric '{m.name}' has {what} '{value}', which this kgbench does not "
                    f"implement ({', '.join(known)}); run `make compile DOMAIN={compiled.name}`",
                    where,
                )
        needs = (
            ("reading", m.reading, m.kind in CHAIN_KINDS),
            ("claim_support", m.claim_support, m.kind == "unsupported_claims"),
        )
        for what, value, needed in needs:
            if needed and value is None:
                raise IncompatibleArtifact(
                    f"metric '{m.name}' (kind {m.kind}) has no {what}; it was compiled by an "
                    f"older kgbench: run `kgbench compile --domain {compiled.name}`",
                    where,
                )
        if m.reading is not None and m.reading not in CAUSAL_READINGS:
            raise IncompatibleArtifact(
                f"metric '{m.name}' has reading '{m.reading}', which this kgbench does not "
                f"implement ({', '.join(CAUSAL_READINGS)})",
                where,
            )
    schema_path = compiled.schema_path("response")
    if not schema_path.exists():
        raise UserError(f"{schema_path} is missing; run `make compile DOMAIN={compiled.name}`")
    contract = compile_contract(
        load_json_object(schema_path, "response JSON Schema"), str(schema_path)
    )
    return CompiledScorer(
        compiled.name,
        tuple(panel.metrics),
        Lexicon.from_graph(compiled.graph),
        contract,
        panel.unparseable_policy,
    )


# --- scoring a run folder -----------------------------------------------------------------


def parse_pair(text: str) -> tuple[str, str]:
    """ "C4:C2" -> ("C4", "C2"): the delta is the first minus the second."""
    parts = text.split(":")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise UserError(f"--pair expects two conditions as A:B (e.g. C4:C2), got {text!r}")
    a, b = (p.strip() for p in parts)
    if a == b:
        raise UserError(f"--pair {text!r} compares a condition with itself")
    return a, b


@dataclass
class RunInputs:
    """What scoring reads from a run folder, loaded once for every model."""

    folder: RunFolder
    domain: str | CompiledDomain | None = None
    _contexts: dict[tuple[str, str], dict[str, Any] | None] = field(default_factory=dict)

    @cached_property
    def scenarios(self) -> dict[str, dict[str, Any]]:
        return self.folder.scenarios_by_id()

    @cached_property
    def compiled(self) -> CompiledDomain:
        return self.folder.compiled(self.domain)

    @cached_property
    def scorer(self) -> CompiledScorer:
        return load_compiled_scorer(self.compiled)

    @cached_property
    def conditions(self) -> list[Condition]:
        return list(self.compiled.conditions)

    @cached_property
    def all_prompts(self) -> list[Prompt]:
        """Every prompt of the run: prompts.jsonl's, then the verify-and-revise answer prompts
        (prompts/verify.jsonl, written by `kgbench verify`; none when C5 did not run)."""
        known = {c.id for c in self.conditions}
        declared = {p.id for p in self.compiled.presentations}
        out = []
        for p in [*self.folder.prompts(), *self.folder.verify_prompts()]:
            if p.scenario_id not in self.scenarios or p.condition not in known:
                raise UserError(
                    f"prompt {p.prompt_id} does not belong to this run's scenarios and "
                    f"conditions; re-run `kgbench prompts --run-dir {self.folder.path}`"
                )
            if p.presentation is not None and p.presentation not in declared:
                # review 2026-12 ord.bogus-presentation: it was scored as if it were absent
                raise UserError(
                    f"prompt {p.prompt_id} names the presentation {p.presentation!r}, which "
                    f"this domain does not declare ({', '.join(sorted(declared)) or 'none'}); "
                    f"re-run `kgbench prompts --run-dir {self.folder.path} --order-variants`"
                )
            out.append(p)
        return out

    @cached_property
    def prompts(self) -> list[Prompt]:
        """The panel's prompts: the original presentation of each (scenario, condition)."""
        return [p for p in self.all_prompts if p.presentation is None]

    @cached_property
    def order_prompts(self) -> list[Prompt]:
        """The reordered or relabelled presentations (`kgbench prompts --order-variants`),
        scored apart from the panel by `order_figures`."""
        return [p for p in self.all_prompts if p.presentation is not None]

    def context(self, scenario_id: str, condition: str) -> dict[str, Any] | None:
        """The extracted context of a grounded condition (read once), None for C1."""
        key = (scenario_id, condition)
        if key not in self._contexts:
            grounded = any(
                c.id == condition and (c.grounded or c.verify is not None) for c in self.conditions
            )
            loaded = self.folder.context(scenario_id, condition) if grounded else None
            self._contexts[key] = loaded
        return self._contexts[key]

    @cached_property
    def declared_replicates(self) -> int | None:
        """run.json's `replicates`, when it declares them."""
        if not self.folder.run_json.exists():
            return None
        return self.folder.description.replicates

    def log_replicates(self, log_path: Path) -> int | None:
        """The declared replicates of one log: run.json's, else the runner's own record of
        its settings (responses/<log>.run.json), else None."""
        if self.declared_replicates is not None:
            return self.declared_replicates
        meta = self.folder.log_settings_of(log_path)
        settings = meta.get("settings") if isinstance(meta.get("settings"), dict) else {}
        return _positive_int(settings.get("replicates"))

    def replicates(self, logs: Iterable[ResponsesLog]) -> int:
        """How many replicates each prompt is expected to have (items per prompt).

        Every log's records were already bounded by its declared replicates (or by
        MAX_UNDECLARED_REPLICATES), so a corrupt `replicate` can never inflate this.
        """
        seen = [rep + 1 for log in logs for (_, rep) in log.records]
        return max([self.declared_replicates or 1, *seen])


def _positive_int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


CONTEXT_HEAD = "# Grounded context"
CONTEXT_END = "# Answer format"


def context_block_chars(text: str) -> int:
    """Characters of a prompt's grounded context block (from its heading to the answer
    format); 0 for a prompt without one (C1). Linear: two `str.find`."""
    start = text.find(CONTEXT_HEAD)
    if start < 0:
        return 0
    end = text.find(CONTEXT_END, start)
    return (end if end >= 0 else len(text)) - start


def context_volume(inputs: RunInputs) -> dict[str, dict[str, float | int]]:
    """Per condition, the mean size of what the model was given: characters of the grounded
    context block and assertions in the extracted context, over the panel's prompts. The
    conditions vary in volume (C4's block can be ten times C2's), which the paper
    says it holds apart from content: reported beside the scores so a reader can see it.
    A volume-matched control (C6, C7) adds how many of its prompts came within the declared
    tolerance of the reference condition's length (`matched` of `prompts`, `reference`)."""
    sums: dict[str, list[float]] = {}
    matched: dict[str, tuple[str, int]] = {}
    for prompt in inputs.prompts:
        context = inputs.context(prompt.scenario_id, prompt.condition)
        held = context.get("assertions") if isinstance(context, dict) else None
        row = sums.setdefault(prompt.condition, [0.0, 0.0, 0.0])
        row[0] += context_block_chars(prompt.text)
        row[1] += len(held) if isinstance(held, dict) else 0
        row[2] += 1
        record = context.get("volume_match") if isinstance(context, dict) else None
        if isinstance(record, dict):
            reference, n = matched.get(prompt.condition, (str(record.get("reference")), 0))
            matched[prompt.condition] = (reference, n + (record.get("matched") is True))
    return {
        cond: {
            "characters": round(chars / n, 1),
            "assertions": round(asserted / n, 2),
            "prompts": int(n),
            **(
                {"reference": matched[cond][0], "matched": matched[cond][1]}
                if cond in matched
                else {}
            ),
        }
        for cond, (chars, asserted, n) in sums.items()
        if n
    }


def score_items(inputs: RunInputs, log: ResponsesLog, replicates: int) -> list[dict[str, Any]]:
    """One item per (prompt, replicate): scored, failed or missing, never silently dropped."""
    scorer = inputs.scorer
    items = []
    for prompt in inputs.prompts:
        sid, cond = prompt.scenario_id, prompt.condition
        scenario = inputs.scenarios[sid]
        gold = scenario["gold"]
        for rep in range(replicates):
            rec = log.records.get((prompt.prompt_id, rep))
            item: dict[str, Any] = {
                "prompt_id": prompt.prompt_id,
                "scenario_id": sid,
                "condition": cond,
                "category": scenario.get("category", "uncategorised"),
                "replicate": rep,
            }
            if rec is None or rec.get("status") != "ok":
                item["status"] = "missing" if rec is None else "failed"
                item["error"] = None if rec is None else str(rec.get("error"))[:500]
                items.append(item)
                continue
            verdict, whole = scorer.judgement_of(rec)
            result = scorer.score(gold, None, inputs.context(sid, cond), verdict)
            item.update(
                status="scored",
                parse_status=result.parse_status,
                parse_ok=whole and result.parse_ok,
                schema_ok=result.schema_ok,
                problems=list(result.problems) or (["runner could not parse"] if not whole else []),
                unknown_ids=list(result.unknown_ids),
                scores=result.scores,
            )
            items.append(item)
    return items


DEFAULT_PAIRS = (("C4", "C2"),)


def default_pairs(inputs: RunInputs) -> list[tuple[str, str]]:
    """The contrasts a report shows unless told otherwise: C4 vs C2, and, for each
    verify-and-revise condition whose answer prompts this run holds (C5 ran), that condition
    vs C4 (verification vs the richest retrieval) and vs C1 (vs no grounding); and for each
    volume-matched control this run answered (C7: C3's block padded to C4's length), its
    reference vs it (content at equal length) and it vs its base (length at equal content)."""
    known = [c.id for c in inputs.conditions]
    out = [p for p in DEFAULT_PAIRS if all(c in known for c in p)]
    ran = {p.condition for p in inputs.folder.verify_prompts()}
    for cond in (c.id for c in inputs.conditions if c.verify is not None and c.id in ran):
        out += [(cond, other) for other in ("C4", "C1") if other in known]
    answered = {p.condition for p in inputs.prompts}
    for c in inputs.conditions:
        if c.volume_match is not None and c.id in answered:
            out += [(c.volume_match.reference, c.id), (c.id, c.volume_match.base)]
    return out


def score_run(
    run_dir: Path,
    log: str | None = None,
    pairs: Sequence[tuple[str, str]] | None = None,
    bootstrap: int = 10000,
    seed: int = 0,
    domain: str | CompiledDomain | None = None,
    causal_reading: str | None = None,
) -> list[Path]:
    """`kgbench score`: items.jsonl and panel.json under scores/<log>/ for each responses
    log (or for responses/<log>.jsonl alone), and order.json when the run holds reordered
    presentations (`kgbench prompts --order-variants`).

    `pairs` None: `default_pairs` (C4 vs C2, plus C5 vs C4 and C5 vs C1 when C5 ran).
    `causal_reading`: score the causal-edge metrics under another declared reading
    (gold_path, the paper's); panel.json's `readings` records the one used."""
    from .stats import build_panel

    if bootstrap < 100:
        raise UserError(f"--bootstrap must be at least 100 resamples, got {bootstrap}")
    folder = RunFolder.open(run_dir)
    inputs = RunInputs(folder, domain)
    # the compiled panel is checked before any log is read
    inputs.scorer = with_causal_reading(inputs.scorer, causal_reading)
    known = [c.id for c in inputs.conditions]
    if pairs is None:
        pairs = default_pairs(inputs)
    for a, b in pairs:
        for c in (a, b):
            if c not in known:
                raise UserError(
                    f"--pair names unknown condition '{c}'; this domain declares {', '.join(known)}"
                )
    # A verify-and-revise condition (C5) is in the panel only when it ran (`kgbench verify`
    # wrote its answer prompts), and an optional one (a volume-matched control) only when its
    # prompts were rendered; otherwise it would show as a condition nobody answered.
    ran = {p.condition for p in inputs.prompts}
    idle = {
        c.id for c in inputs.conditions if (c.verify is not None or c.optional) and c.id not in ran
    }
    for c in (c for pair in pairs for c in pair if c in idle):
        how = (
            f"`kgbench verify --run-dir {folder.path} --model ...`"
            if inputs.compiled.condition(c).verify is not None
            else f"`kgbench extract --condition {c} --run-dir {folder.path}`, then prompts and run"
        )
        raise UserError(f"--pair names {c}, which did not run here: run {how} first")
    known = [c for c in known if c not in idle]
    paths = folder.response_logs(log)
    logs = [ResponsesLog.read(p, inputs.log_replicates(p)) for p in paths]
    replicates = inputs.replicates(logs)
    volume = context_volume(inputs)
    written = []
    for path, log in zip(paths, logs, strict=True):
        items = score_items(inputs, log, replicates)
        panel = build_panel(
            items,
            inputs.scorer.metrics,
            known,
            pairs=pairs,
            bootstrap=bootstrap,
            seed=seed,
            policy=inputs.scorer.policy,
        )
        known_prompts = {p.prompt_id for p in inputs.all_prompts}
        panel.update(
            domain=inputs.compiled.name,
            model=log.model,
            slug=path.stem,
            replicates=replicates,
            readings=readings(inputs.scorer.metrics),
            context_volume=volume,
            log={
                "unreadable_records": log.unreadable,
                "superseded_records": log.superseded,
                "out_of_range_records": log.out_of_range,
                "records_for_unknown_prompts": sum(
                    1 for pid, _ in log.records if pid not in known_prompts
                ),
            },
        )
        ScoredPanel.model_validate(panel)  # what we write keeps its contract (else a bug)
        order = order_figures(inputs, log, bootstrap, seed) if inputs.order_prompts else None
        if order is not None:
            OrderFigures.model_validate(order)
        folder.write_order(path.stem, order)
        written.append(folder.write_scores(path.stem, jsonl_text(items), panel))
    return written


def order_figures(
    inputs: RunInputs, log: ResponsesLog, bootstrap: int, seed: int
) -> dict[str, Any]:
    """scores/<slug>/order.json: per condition, accuracy, position bias, flip rate and the
    accuracy delta under each declared presentation, paired with the original order
    (harness.evaluation.order; replicate 0)."""
    from .order import ACCURACY, ORIGINAL, analyse, arrangements, as_named, choice
    from .order import prompt_id as order_prompt_id

    presentations = inputs.compiled.presentations
    names_of = [ORIGINAL, *(p.id for p in presentations)]
    accuracy = ACCURACY if any(m.name == ACCURACY for m in inputs.scorer.metrics) else None
    accuracy = accuracy or inputs.scorer.metrics[0].name
    conditions = [c.id for c in inputs.conditions]
    varied = sorted(
        {(p.scenario_id, p.condition) for p in inputs.order_prompts},
        key=lambda x: (conditions.index(x[1]), x[0]),
    )
    by_condition: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    for sid, cond in varied:
        scenario = inputs.scenarios[sid]
        names = {c["intervention_id"]: c["label"] for c in scenario["candidates"]}
        rows = by_condition.setdefault(cond, {}).setdefault(sid, {})
        for name, arr in arrangements(scenario, presentations).items():
            rec = log.records.get((order_prompt_id(sid, cond, arr.answered_by), 0))
            if rec is None or rec.get("status") != "ok":
                continue
            answer, _ = answer_of(rec)
            chosen = choice(answer, arr, names, inputs.scorer.lexicon)
            result = inputs.scorer.score(
                scenario["gold"], as_named(answer, chosen, names), inputs.context(sid, cond)
            )
            rows[name] = {
                "choice": chosen,
                "first": arr.ids[0] if arr.ids else "",
                "k": arr.k,
                "accuracy": result.scores.get(accuracy),
            }
    return {
        "format_version": OrderFigures.FORMAT,
        "model": log.model,
        "accuracy_metric": accuracy,
        "presentations": [
            {"id": ORIGINAL, "description": "The options as the scenario lists them."},
            *({"id": p.id, "description": p.description} for p in presentations),
        ],
        "settings": {"bootstrap": bootstrap, "seed": seed, "replicate": 0},
        "conditions": {
            cond: analyse(rows, names_of, bootstrap, f"{seed}:{cond}")
            for cond, rows in by_condition.items()
        },
    }
