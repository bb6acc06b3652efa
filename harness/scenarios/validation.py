"""Validation of scenario files, generated or hand-written: schema first, then the graph.

The framework is scenario-source-agnostic: a clinician's vignette in the same format is
scored exactly like a generated item, so it must meet the same bar. Every record is checked
against generated/<domain>/schemas/scenario.schema.json, then against the graph: every id
exists and has the right kind, the preferred intervention is a candidate and acceptable (or,
when the answer is to abstain, nothing is), the gold path is a real chain from the preferred
intervention to the target outcome that lowers it, no acceptable answer is contraindicated by
a listed finding and no class is accepted unless declared homogeneous, every gold evidence
source supports a gold assertion, and the adverse-effect and contraindication ids are
assertions of those roles. Last, the item is judged by the one judgement every gate shares
(`audit.ItemJudge`): a gold answer the graph's own evidence does not give (a null or harm
result, a contraindication, no outcome evidence, another candidate qualified, a tie) is an
error here, in `publish` and in `audit` alike. Each problem names the file, line, scenario and
field.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from harness.compiled import CompiledDomain
from kgbench.errors import Location, UserError, UserErrors
from kgbench.io import iter_jsonl as read_jsonl
from kgbench.suggest import unknown

from .audit import ItemJudge
from .exclusive import clashes, exclusions
from .kg import KnowledgeGraph


@dataclass(frozen=True)
class Problem:
    location: Location
    scenario_id: str
    message: str

    def __str__(self) -> str:
        loc = self.location
        where = [loc.file, f"line {loc.line}", f"scenario {self.scenario_id}"]
        if loc.field:
            where.append(f"field '{loc.field}'")
        return ", ".join(where) + f": {self.message}"


@cache
def _validator(schema_path: Path):
    import jsonschema

    from kgbench.untrusted import load_json_object

    schema = load_json_object(schema_path, "JSON Schema", max_depth=None)
    return jsonschema.Draft202012Validator(schema)


def _field(path: Iterable[Any]) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _version_key(version: str) -> tuple[tuple[int, str], ...]:
    """MAJOR.MINOR.PATCH (the schema's pattern) in numeric order, without int() (a part may
    hold thousands of digits): shorter digit strings first, then by text."""
    return tuple((len(p.lstrip("0")), p.lstrip("0")) for p in version.split("."))


class _Checker:
    def __init__(self, domain: CompiledDomain, file: str, judge: ItemJudge | None = None) -> None:
        self.domain = domain
        self.kg = judge.kg if judge is not None else KnowledgeGraph(domain)
        self.file = file
        self.problems: list[Problem] = []
        self._judge = judge
        self._excluded: dict[str, frozenset[str]] | None = None

    @property
    def item_judge(self) -> ItemJudge:
        if self._judge is None:
            self._judge = ItemJudge(self.domain, self.kg)
        return self._judge

    def add(self, line: int, sid: str, field: str, message: str) -> None:
        self.problems.append(Problem(Location(self.file, line, field), sid, message))

    def schema(self, line: int, sid: str, record: dict[str, Any]) -> bool:
        validator = _validator(self.domain.schema_path("scenario"))
        errors = sorted(
            validator.iter_errors(record), key=lambda e: list(map(str, e.absolute_path))
        )
        for err in errors:
            path = list(err.absolute_path)
            if err.validator == "required":
                missing = err.message.split("'")[1] if "'" in err.message else "?"
                path.append(missing)
                message = f"'{missing}' is required"
            elif err.validator == "additionalProperties":
                message = err.message
            else:
                message = f"{err.message}"
            self.add(line, sid, _field(path) or "(record)", message)
        return not errors and self.known_version(line, sid, record["schema_version"])

    def known_version(self, line: int, sid: str, version: str) -> bool:
        """A record of a schema version newer than the compiled domain's is refused: this
        kgbench does not know what its fields mean (reliability review 2026-12,
        ck.future-version: a 9.0.0 record passed as valid). Older versions are read."""
        from kgbench.contract import ScenarioRules

        current = self.domain.document(ScenarioRules).scenario_schema_version
        if _version_key(version) <= _version_key(current):
            return True
        self.add(
            line,
            sid,
            "schema_version",
            f"schema_version {version[:40]!r} is newer than the scenario schema this kgbench "
            f"reads ({current}); update kgbench, or correct the version",
        )
        return False

    def entity(
        self,
        line: int,
        sid: str,
        field: str,
        value: str,
        kinds: set[str] | None = None,
        what: str = "entity",
    ) -> bool:
        ent = self.kg.entities.get(value)
        if ent is None:
            self.add(line, sid, field, unknown(what, value, self.kg.entities))
            return False
        if kinds is not None and ent["category"] not in kinds:
            self.add(
                line,
                sid,
                field,
                f"'{value}' is a {ent['category']}; expected {' or '.join(sorted(kinds))}",
            )
            return False
        return True

    def assertions(self, line: int, sid: str, field: str, ids: list[str], role: str | None) -> bool:
        ok = True
        for i, aid in enumerate(ids):
            a = self.kg.assertions.get(aid)
            if a is None:
                self.add(
                    line,
                    sid,
                    f"{field}[{i}]",
                    unknown("assertion", aid, self.kg.assertions),
                )
                ok = False
            elif role is not None and self.kg.role(a) != role:
                self.add(
                    line,
                    sid,
                    f"{field}[{i}]",
                    f"{aid} is a {a['predicate']} assertion (role {self.kg.role(a)}); expected role {role}",
                )
                ok = False
        return ok

    def graph(self, line: int, sid: str, s: dict[str, Any]) -> None:
        """Everything an item says about the graph: its ids exist and have the right kind,
        its gold answer is consistent and judged as the gold builder judges, its citations
        are assertions and sources of the domain."""
        if s["domain"] != self.domain.name:
            self.add(
                line, sid, "domain", f"domain '{s['domain']}' does not match '{self.domain.name}'"
            )
        target_ok, cands = self.references(line, sid, s)
        gold = s["gold"]
        self.answer(line, sid, gold, cands)
        ids_known = (
            target_ok
            and (s.get("population_id") is None or s["population_id"] in self.kg.entities)
            and all(
                c in self.kg.entities for c in (*cands, *(s["patient"].get("condition_ids") or ()))
            )
        )
        if ids_known:
            self.judged(line, sid, s)
        findings = set(s["patient"].get("condition_ids") or ())
        self.exclusive(line, sid, s, findings)
        for i, a in enumerate(gold["acceptable_interventions"]):
            for aid, found in self.contraindicated(a, findings):
                self.add(
                    line,
                    sid,
                    f"gold.acceptable_interventions[{i}]",
                    f"'{a}' is contraindicated for this patient: {aid} hits the listed finding "
                    f"{found}",
                )
        self.citations(line, sid, s, target_ok)

    def references(self, line: int, sid: str, s: dict[str, Any]) -> tuple[bool, list[str]]:
        """The item's entity ids (population, target, conditions, candidates) are the domain's,
        the candidates interventions listed once; (the target is known, the candidates)."""
        intervention_kinds = {
            c["name"] for c in self.kg.graph["entity_classes"] if c["is_intervention"]
        }
        if s.get("population_id") is not None:  # optional: the domain's default applies
            self.entity(line, sid, "population_id", s["population_id"])
        target_ok = self.entity(line, sid, "target_outcome_id", s["target_outcome_id"])
        for i, c in enumerate(s["patient"].get("condition_ids") or []):
            self.entity(line, sid, f"patient.condition_ids[{i}]", c)
        cands = [c["intervention_id"] for c in s["candidates"]]
        for i, c in enumerate(cands):
            self.entity(
                line, sid, f"candidates[{i}].intervention_id", c, intervention_kinds, "intervention"
            )
        if len(set(cands)) != len(cands):
            self.add(line, sid, "candidates", "a candidate is listed twice")
        return target_ok, cands

    def answer(self, line: int, sid: str, gold: dict[str, Any], cands: list[str]) -> None:
        """The gold answer is one of the item's: acceptable answers are interventions or
        homogeneous classes, the preferred one a candidate and acceptable, an abstention
        accepts nothing and expects uncertainty."""
        preferred = gold["preferred_intervention"]
        acceptable = gold["acceptable_interventions"]
        for i, a in enumerate(acceptable):
            if a not in self.kg.entities and a not in self.kg.classes:
                known = [*self.kg.entities, *self.kg.classes]
                self.add(
                    line,
                    sid,
                    f"gold.acceptable_interventions[{i}]",
                    unknown("intervention or class", a, known),
                )
            elif a in self.kg.group_ids and a not in self.kg.homogeneous:
                self.add(
                    line,
                    sid,
                    f"gold.acceptable_interventions[{i}]",
                    f"class '{a}' is not declared homogeneous; a heterogeneous class is never "
                    "an acceptable answer (list the acceptable interventions themselves)",
                )
        if preferred is None:
            if acceptable or not gold["expects_uncertainty"]:
                self.add(
                    line,
                    sid,
                    "gold.preferred_intervention",
                    "an item whose answer is to abstain (no preferred intervention) accepts "
                    "nothing and expects uncertainty",
                )
        else:
            if preferred not in cands:
                self.add(
                    line,
                    sid,
                    "gold.preferred_intervention",
                    f"'{preferred}' is not one of the candidates ({', '.join(cands)})",
                )
            if preferred not in acceptable:
                self.add(
                    line,
                    sid,
                    "gold.acceptable_interventions",
                    f"the preferred '{preferred}' must be acceptable",
                )

    def citations(self, line: int, sid: str, s: dict[str, Any], target_ok: bool) -> None:
        """What the gold cites: its evidence supports it, its causal path is a chain from the
        preferred answer to the target, its assertions have the kind their list names, its
        sources and the item's anchors exist."""
        gold = s["gold"]
        preferred = gold["preferred_intervention"]
        self.evidence_supports_gold(line, sid, gold)
        path = gold.get("causal_path_assertion_ids") or []
        if (
            self.assertions(line, sid, "gold.causal_path_assertion_ids", path, None)
            and path
            and target_ok
            and preferred is not None
        ):
            self.chain(line, sid, path, preferred, s["target_outcome_id"])
        self.assertions(
            line, sid, "gold.outcome_assertion_ids", gold.get("outcome_assertion_ids") or [], None
        )
        self.assertions(
            line,
            sid,
            "gold.adverse_effect_assertion_ids",
            gold.get("adverse_effect_assertion_ids") or [],
            "adverse_effect",
        )
        self.assertions(
            line,
            sid,
            "gold.contraindication_assertion_ids",
            gold.get("contraindication_assertion_ids") or [],
            "contraindication",
        )
        for i, e in enumerate(gold.get("evidence_source_ids") or []):
            if e not in self.kg.evidence:
                self.add(
                    line,
                    sid,
                    f"gold.evidence_source_ids[{i}]",
                    unknown("evidence source", e, self.kg.evidence),
                )
        self.assertions(
            line, sid, "anchor_assertion_ids", s.get("anchor_assertion_ids") or [], None
        )

    def exclusive(self, line: int, sid: str, s: dict[str, Any], findings: set[str]) -> None:
        """No finding of the patient excludes another, the population or the target
        (`incompatible_with` in the domain's entity_profiles), as the generator ensures."""
        if self._excluded is None:
            self._excluded = exclusions(self.item_judge.rules, self.kg)
        listed = list(s["patient"].get("condition_ids") or ())
        context = (s.get("population_id"), s["target_outcome_id"])
        profiles = self.item_judge.rules.entity_profiles
        for f, hit in clashes(self._excluded, listed, context):
            one_sided = set((profiles.get(f) or {}).get("incompatible_with") or ())
            where = (
                "incompatible_with in the domain's entity_profiles"
                if set(hit) <= one_sided
                else "exclusive_findings in the domain's scenarios.yaml"
            )
            self.add(
                line,
                sid,
                f"patient.condition_ids[{listed.index(f)}]",
                f"{f} excludes {', '.join(hit)} ({where}); a patient cannot hold both",
            )

    def judged(self, line: int, sid: str, s: dict[str, Any]) -> None:
        """The one judgement: the gold's answer must be the one the evidence rules give."""
        problem = self.item_judge.problem(self.item_judge.item(s))
        if problem is not None:
            self.add(line, sid, "gold.preferred_intervention", problem)

    def contraindicated(self, intervention: str, findings: set[str]) -> list[tuple[str, str]]:
        """Contraindication assertions (own or class-level) of an intervention or, for a class,
        of any member, that hit one of the findings."""
        members = self.kg.classes.get(intervention, {}).get("member_ids") or (intervention,)
        hits = []
        for m in members:
            for a, _ in self.kg.claims(m, ("contraindication",)):
                if a["object_id"] in findings:
                    hits.append((a["assertion_id"], a["object_id"]))
        return sorted(set(hits))

    def evidence_supports_gold(self, line: int, sid: str, gold: dict[str, Any]) -> None:
        """Every gold evidence source supports at least one gold assertion."""
        cited = set()
        for key in (
            "causal_path_assertion_ids",
            "outcome_assertion_ids",
            "adverse_effect_assertion_ids",
            "contraindication_assertion_ids",
        ):
            cited |= set(gold.get(key) or ())
        cited |= {a for chain in gold.get("causal_paths") or () for a in chain}  # every gold chain
        for i, e in enumerate(gold.get("evidence_source_ids") or []):
            if e in self.kg.evidence and not cited & set(self.supported_by.get(e, ())):
                self.add(
                    line,
                    sid,
                    f"gold.evidence_source_ids[{i}]",
                    f"{e} supports none of the gold assertions (path, outcome, adverse effects, "
                    "contraindications)",
                )

    @property
    def supported_by(self) -> dict[str, list[str]]:
        if not hasattr(self, "_supported_by"):
            out: dict[str, list[str]] = {}
            for aid, evs in self.kg.supports.items():
                for e in evs:
                    out.setdefault(e, []).append(aid)
            self._supported_by = out
        return self._supported_by

    def chain(self, line: int, sid: str, path: list[str], preferred: str, target: str) -> None:
        field = "gold.causal_path_assertion_ids"
        steps = [self.kg.assertions[i] for i in path]
        first = steps[0]
        starts_ok = first["subject_id"] == preferred or (
            first["subject_id"] in self.kg.group_ids
            and preferred in (first.get("member_ids") or ())
        )
        if not starts_ok:
            self.add(
                line,
                sid,
                f"{field}[0]",
                f"the gold path must start at the preferred intervention {preferred}; {path[0]} starts at {steps[0]['subject_id']}",
            )
        for i in range(1, len(steps)):
            if steps[i - 1]["object_id"] != steps[i]["subject_id"]:
                self.add(
                    line,
                    sid,
                    f"{field}[{i}]",
                    f"not a chain: {path[i - 1]} ends at {steps[i - 1]['object_id']} but {path[i]} starts at {steps[i]['subject_id']}",
                )
        if steps[-1]["object_id"] != target:
            self.add(
                line,
                sid,
                f"{field}[{len(path) - 1}]",
                f"the gold path must end at the target outcome {target}; {path[-1]} ends at {steps[-1]['object_id']}",
            )
        decreases = sum(1 for a in steps if a["direction"] == "decrease")
        if any(a["direction"] == "none" and self.kg.role(a) != "mechanistic" for a in steps):
            return  # a null result or undirected step: no net effect to check
        if decreases % 2 == 0:
            self.add(
                line,
                sid,
                field,
                f"the gold path's net effect increases the target {target} (each decreasing "
                "step flips the sign); the preferred answer must lower it",
            )


def validate_records(
    domain: CompiledDomain,
    records: list[tuple[int, dict[str, Any]]],
    file: str = "<generated>",
    item_judge: ItemJudge | None = None,
) -> list[Problem]:
    """Every problem of every record (schema, then graph checks for schema-valid records,
    then the shared item judgement)."""
    c = _Checker(domain, file, item_judge)
    seen: dict[str, int] = {}
    for line, record in records:
        sid = str(record.get("scenario_id", f"on line {line}"))
        if not c.schema(line, sid, record):
            continue
        if sid in seen:
            c.add(line, sid, "scenario_id", f"duplicate scenario id (first on line {seen[sid]})")
        seen.setdefault(sid, line)
        c.graph(line, sid, record)
    return c.problems


def check_file(domain: CompiledDomain, path: Path) -> list[dict[str, Any]]:
    """Read and validate a scenario file; raises UserErrors listing every problem."""
    records = list(read_jsonl(path, "scenario", printable=True))
    if not records:
        raise UserError(f"{path}: no scenarios in the file")
    problems = validate_records(domain, records, str(path))
    if problems:
        raise UserErrors(problems)
    return [r for _, r in records]
