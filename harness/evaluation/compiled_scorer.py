"""A compiled domain's scorer (paper section 3.7): its panel (metrics.json, the contract's
MetricPanel), its lexicon (kg.json) and its response contract (the one judge's compiled
interpreter of schemas/response.schema.json), read once and checked against what this harness
implements, so a domain compiled by another kgbench is one message, never a wrong score.

`scorer_of` is the one way to a domain's scorer by name, folder or handle (cached until the
domain is compiled again); `CompiledScorer.score` scores one answer, judged here unless the
record already carries the judgement made under the same contract (`judgement_of`).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass, field
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
    PanelPlan,
)
from kgbench.contract import IncompatibleArtifact, Metric, MetricPanel, RecordView
from kgbench.errors import Location, UserError
from kgbench.untrusted import load_json_object

from .judge import Contract, Judgement, compile_contract, judge, judged_ok
from .responses_log import answer_of, recorded_verdict

MAX_UNKNOWN_IDS = 20


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

        An answer is judged once. A record the runner judged under this very schema
        (`judged_with` is the contract's digest) carries its verdict (`judgement`, record
        1.2) and is taken as judged; a 1.1 record judged "ok" under an exact contract is too
        (its cleaned fields are the recorded object). Any other record (another schema, an
        older runner, another tool, a judgement of the wrong shape) is judged here by the
        same judge, from the one answer `answer_of` picks."""
        answer, whole = answer_of(record)
        if record.get("judged_with") == self.contract.digest:
            recorded = recorded_verdict(record, answer, whole)
            if recorded is not None:
                return recorded, whole
            if whole and record.get("parse_status") == "ok" and self.contract.exact:
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


_SCORERS: dict[str, CompiledScorer] = {}
_NAMED: dict[str, CompiledDomain] = {}  # a name's handle: opened (and checked) once


def scorer_of(domain: str | Path | CompiledDomain) -> CompiledScorer:
    """The scorer of a compiled domain, opened by the one opener (`CompiledDomain.open`: a
    name, a compiled folder or a handle), cached per compiled folder and read again when the
    domain is compiled again (its manifest changes). A name's handle is kept, so scoring
    answer after answer by name costs a stat, not a manifest check each."""
    name = domain if isinstance(domain, str) and "/" not in domain else None
    compiled = _NAMED.get(name) if name is not None else None
    if compiled is None:
        compiled = CompiledDomain.open(domain)
    manifest = compiled.manifest_path
    key = f"{manifest.resolve()}@{manifest.stat().st_mtime_ns}"
    if key not in _SCORERS:
        if name is not None and name in _NAMED:
            compiled = CompiledDomain.open(name)  # compiled again: checked again
        _SCORERS[key] = load_compiled_scorer(compiled)
    if name is not None:
        _NAMED[name] = compiled
    return _SCORERS[key]
