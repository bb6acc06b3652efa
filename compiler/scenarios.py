"""Cross-checks of a domain's scenario rules (scenarios.yaml) against its validated graph.

The JSON Schema check (`load_declaration(path, "ScenarioRules")`) proves the shape; this module
proves the meaning: every entity id and class name the rules name exists, enum-like values
(categories, evidence levels, causal statuses) are ones the spec declares, ranges are ordered,
and every narrative template uses only the fields the generator fills. Problems are collected
and reported together, each with its file, line and field.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterable, Sequence
from typing import Any

from kgbench.suggest import unknown

from . import ir
from .paths import SPEC_DIR, repo_relative
from .schema import ROLES, SchemaModel, suggest
from .tables import ErrorList
from .yamlfile import YamlDoc, read_yaml

PATIENT_FIELDS = ("Pronoun", "pronoun", "possessive")
TEMPLATE_FIELDS = {
    "opening": ("Article", "age", "person", "conditions"),
    "labs": ("labs",),
    "pregnant": PATIENT_FIELDS,
    "not_pregnant": PATIENT_FIELDS,
    "outcome_phrase": ("name",),
}
CATEGORY_FIELDS = ("target", "population", "condition")
# Patterns whose instances are built around one anchor assertion (AnchorRule required).
ANCHORED = ("association", "contraindication", "adverse_effect")
# The scenario schema allows 2-6 candidates (spec/scenario.yaml).
CANDIDATE_LIMITS = (2, 6)


def _scenario_spec() -> dict:
    """Category names and version of spec/scenario.yaml, cached by the file's hash (the
    schema is long, and parsing it with the bounded loader on every compile adds up)."""
    from .cache import cached

    path = SPEC_DIR / "scenario.yaml"

    def build():
        data = read_yaml(path).data
        value = {
            "categories": list(data["enums"]["ScenarioCategory"]["permissible_values"]),
            "version": str(data["version"]),
        }
        return value, [path]

    return cached("scenario-spec", [path], "", build)


def scenario_categories() -> tuple[str, ...]:
    """The category names spec/scenario.yaml declares (one source of truth for both files)."""
    return tuple(_scenario_spec()["categories"])


def scenario_schema_version() -> str:
    return _scenario_spec()["version"]


class _Checker:
    """Walks the declaration once, adding one error per problem."""

    def __init__(self, doc: YamlDoc, domain: ir.Domain, model: SchemaModel) -> None:
        self.doc = doc
        self.errors = ErrorList()
        self.entities = {e.id: e for e in domain.entities}
        self.classes = {c.name: c for c in domain.entity_classes}
        self.conditions = domain.conditions
        self.scenario_ids = domain.id_schemes.scenarios if domain.id_schemes else None
        columns = {c.name: c for c in model.tables["assertions"].columns}
        self.evidence_levels = columns["evidence_level"].enum_values
        self.causal_status = columns["causal_status"].enum_values
        sources = {c.name: c for c in model.tables["evidence_sources"].columns}
        self.source_types = sources["source_type"].enum_values
        links = {c.name: c for c in model.tables["assertion_evidence"].columns}
        self.rec_classes = links["recommendation_class"].enum_values
        self.level_values = links["level_of_evidence"].enum_values
        self.evidence_ids = {e.evidence_id for e in domain.evidence_sources}
        self.assertions = domain.assertions
        self.roles = {p.name: p.role for p in domain.predicates}

    def add(self, path: Sequence[str | int], message: str) -> None:
        field = next((p for p in reversed(path) if isinstance(p, str)), None)
        self.errors.add(message, self.doc.location(list(path), field))

    def entity(self, path: Sequence[str | int], value: Any, what: str = "entity") -> None:
        if value is not None and value not in self.entities:
            self.add(path, unknown(what, value, self.entities))

    def population(self, path: Sequence[str | int], value: Any) -> None:
        """An entity of a population class (one error otherwise): a finding's `stated_in`
        names the patients it is said of, and a condition there would never match."""
        ent = self.entities.get(value)
        if ent is None:
            self.add(path, unknown("population", value, self.entities))
        elif not self.classes[ent.category].is_population:
            self.add(path, f"'{value}' is a {ent.category}, not a population")

    def entities_(self, path: Sequence[str | int], values: Iterable[Any] | None) -> None:
        for i, value in enumerate(values or ()):
            self.entity([*path, i], value)

    def intervention(self, path: Sequence[str | int], value: Any) -> bool:
        """An intervention or intervention class of the graph (one error otherwise)."""
        ent = self.entities.get(value)
        if ent is None:
            self.add(path, unknown("intervention", value, self.entities))
            return False
        if not self.classes[ent.category].is_intervention:
            self.add(path, f"'{value}' is a {ent.category}, not an intervention")
            return False
        return True

    def evidence(self, path: Sequence[str | int], value: Any) -> None:
        if str(value or "").strip() not in self.evidence_ids:
            self.add(path, unknown("evidence source", str(value or ""), self.evidence_ids))

    def class_names(self, path: Sequence[str | int], values: Iterable[Any] | None) -> None:
        for i, value in enumerate(values or ()):
            if value not in self.classes:
                self.add(
                    [*path, i],
                    f"unknown class '{value}'"
                    + suggest(str(value), self.classes)
                    + "; expected one of "
                    + ", ".join(self.classes),
                )

    def enum_values(
        self, path: Sequence[str | int], values: Iterable[Any] | None, allowed: Sequence[str]
    ) -> None:
        for i, value in enumerate(values or ()):
            if value not in allowed:
                self.add(
                    [*path, i],
                    f"unknown value '{value}'"
                    + suggest(str(value), allowed)
                    + "; expected one of "
                    + ", ".join(allowed),
                )

    def count_range(
        self, path: Sequence[str | int], value: dict | None, limits: tuple[int, int] | None = None
    ) -> None:
        if not value:
            return
        if value["min"] > value["max"]:
            self.add([*path, "min"], f"min {value['min']} is greater than max {value['max']}")
        if limits and (value["min"] < limits[0] or value["max"] > limits[1]):
            self.add(path, f"must lie within {limits[0]}-{limits[1]}")

    def template(
        self,
        path: Sequence[str | int],
        text: Any,
        fields: Sequence[str],
        withheld: dict[str, str] | None = None,
    ) -> None:
        """Every {field} of `text` is one of `fields`; `withheld` says why a field this
        declaration cannot use is missing."""
        if not isinstance(text, str):
            return
        try:
            names = [f for _, f, _, _ in string.Formatter().parse(text) if f is not None]
        except ValueError as exc:
            self.add(path, f"malformed template: {exc}")
            return
        for name in names:
            if withheld and name in withheld:
                self.add(path, f"template field '{{{name}}}' {withheld[name]}")
            elif name not in fields:
                self.add(
                    path,
                    f"unknown template field '{{{name}}}'"
                    + suggest(name, fields)
                    + "; expected "
                    + ", ".join("{" + f + "}" for f in fields),
                )

    def chain(self, path: Sequence[str | int], rule: dict | None) -> None:
        if not rule:
            return
        cond = rule.get("condition")
        if cond is not None:
            chained = [
                c.id for c in self.conditions if any(s.shape == "causal_chain" for s in c.sections)
            ]
            if cond not in chained:
                self.add(
                    [*path, "condition"],
                    f"condition '{cond}' has no causal_chain section"
                    + suggest(str(cond), chained)
                    + "; expected one of "
                    + ", ".join(chained),
                )
        if rule.get("min_hops", 1) > rule["max_hops"]:
            self.add([*path, "min_hops"], "min_hops is greater than max_hops")
        self.enum_values(
            [*path, "evidence_levels"], rule.get("evidence_levels"), self.evidence_levels
        )
        self.enum_values([*path, "causal_status"], rule.get("causal_status"), self.causal_status)
        self.class_names([*path, "via_classes"], rule.get("via_classes"))
        self.class_names([*path, "avoid_classes"], rule.get("avoid_classes"))

    def anchor(self, path: Sequence[str | int], rule: dict | None) -> None:
        if not rule:
            return
        self.enum_values(
            [*path, "evidence_levels"], rule.get("evidence_levels"), self.evidence_levels
        )
        self.enum_values([*path, "causal_status"], rule.get("causal_status"), self.causal_status)
        self.class_names([*path, "subject_classes"], rule.get("subject_classes"))


def check_scenario_rules(doc: YamlDoc, domain: ir.Domain, model: SchemaModel) -> ir.ScenarioRules:
    """Validate a ScenarioRules declaration against the domain; returns its IR form."""
    data = doc.data
    c = _Checker(doc, domain, model)
    c.class_names(["target_classes"], data["target_classes"])
    c.class_names(["treated_classes"], data.get("treated_classes"))
    c.class_names(["finding_classes"], data.get("finding_classes"))
    c.entity(["default_population"], data.get("default_population"))
    c.count_range(["candidates"], data["candidates"], CANDIDATE_LIMITS)
    c.count_range(["childbearing_age"], data.get("childbearing_age"), (0, 120))
    c.chain(["distractor_exclusion"], data["distractor_exclusion"])
    _check_gold_path_shapes(c, data)
    policy = data["outcome_evidence"]
    c.enum_values(
        ["outcome_evidence", "evidence_levels"], policy["evidence_levels"], c.evidence_levels
    )
    for key in ("study_source_types", "guideline_source_types"):
        c.enum_values(["outcome_evidence", key], policy.get(key), c.source_types)
    c.enum_values(
        ["outcome_evidence", "guideline_classes"], policy.get("guideline_classes"), c.rec_classes
    )
    scores = set()
    for i, score in enumerate(data.get("clinical_scores") or ()):
        scores.add(score["name"])
        c.entities_(["clinical_scores", i, "when"], score["when"])
        for j, comp in enumerate(score["components"]):
            c.entities_(["clinical_scores", i, "components", j, "findings"], comp.get("findings"))
            c.count_range(["clinical_scores", i, "components", j, "age"], comp.get("age"), (0, 120))
    for i, prof in enumerate(data.get("populations") or ()):
        for j, t in enumerate(prof.get("score_thresholds") or ()):
            if t["score"] not in scores:
                c.add(
                    ["populations", i, "score_thresholds", j, "score"],
                    f"unknown clinical score '{t['score']}'" + suggest(t["score"], scores),
                )
    c.enum_values(
        ["weak_evidence", "evidence_levels"],
        data["weak_evidence"]["evidence_levels"],
        c.evidence_levels,
    )
    c.anchor(["adverse_effects"], data.get("adverse_effects"))
    for i, group in enumerate(data.get("outcome_groups") or ()):
        c.entities_(["outcome_groups", i, "members"], group["members"])
    _check_goals(c, data)
    _check_exclusive(c, data)

    known = scenario_categories()
    declared: list[str] = []
    # without a default population a scenario may have none, so nothing can name it
    fields, withheld = CATEGORY_FIELDS, {}
    if data.get("default_population") is None:
        fields = tuple(f for f in CATEGORY_FIELDS if f != "population")
        withheld["population"] = (
            "needs default_population: without one a scenario may have no population to name"
        )
    for i, rule in enumerate(data["categories"]):
        path = ["categories", i]
        name = rule["category"]
        if name not in known:
            c.add(
                [*path, "category"],
                f"unknown category '{name}'"
                + suggest(name, known)
                + "; expected one of "
                + ", ".join(known),
            )
        elif name in declared:
            c.add([*path, "category"], f"category '{name}' is declared twice")
        declared.append(name)
        c.chain([*path, "path"], rule["path"])
        c.chain([*path, "mechanism"], rule.get("mechanism"))
        c.chain([*path, "pathways"], rule.get("pathways"))
        c.anchor([*path, "anchor"], rule.get("anchor"))
        c.class_names([*path, "salient_classes"], rule.get("salient_classes"))
        c.class_names([*path, "target_classes"], rule.get("target_classes"))
        pattern = rule["pattern"]
        if pattern in ANCHORED and not rule.get("anchor"):
            c.add(path, f"a {pattern} rule needs an anchor (which assertions it is built around)")
        if pattern == "competing":
            if not rule.get("competitors"):
                c.add(path, "a competing rule needs competitors (min and max)")
            c.count_range([*path, "competitors"], rule.get("competitors"), CANDIDATE_LIMITS)
        if pattern == "multiple_pathways" and not rule.get("min_pathways"):
            c.add(path, "a multiple_pathways rule needs min_pathways")
        for key in ("title", "decision"):
            c.template([*path, key], rule[key], fields, withheld)

    _check_pinned(c, data, declared)
    _check_profiles(c, data)
    _check_uncertainty(c, data)
    _check_indication_scopes(c, data)
    _check_stated_background(c, data)
    c.errors.raise_if_any()
    # the generator numbers its items in the domain's scenario id scheme (compiler/idschemes.py)
    ids = c.scenario_ids
    scheme = {"pattern": ids.pattern, "format": ids.format} if ids else None
    return ir.ScenarioRules(
        source=repo_relative(doc.path),
        scenario_schema_version=scenario_schema_version(),
        categories=tuple(declared),
        document=json.dumps({**data, "scenario_ids": scheme}, sort_keys=True, ensure_ascii=False),
    )


def _check_gold_path_shapes(c: _Checker, data: dict) -> None:
    """Each declared gold-path shape is a chain every condition a chain rule names can show
    (roles of its causal_chain section, at most its max_length steps), so a gold path taken
    by shape is always among the chains the grounded context shows."""
    named = {r["condition"] for r in _chain_rules(data) if r.get("condition") is not None}
    sections = [
        (cond.id, s)
        for cond in c.conditions
        if cond.id in named
        for s in cond.sections
        if s.shape == "causal_chain"
    ]
    for i, text in enumerate(data.get("gold_path_shapes") or ()):
        shape = str(text).split()
        bad = [r for r in shape if r not in ROLES]
        if bad:
            c.add(["gold_path_shapes", i], unknown("predicate role", bad[0], ROLES))
            continue
        for cid, s in sections:
            if not set(shape) <= set(s.roles) or len(shape) > s.max_length:
                c.add(
                    ["gold_path_shapes", i],
                    f"shape '{' '.join(shape)}' is not a chain condition {cid} shows (roles "
                    f"{', '.join(s.roles)}, at most {s.max_length} steps)",
                )


def _chain_rules(data: dict) -> list[dict]:
    out = [data["distractor_exclusion"]]
    for rule in data["categories"]:
        out += [r for r in (rule["path"], rule.get("mechanism"), rule.get("pathways")) if r]
    return out


def _check_pinned(c: _Checker, data: dict, declared: list[str]) -> None:
    seen: set[str] = set()
    for i, pin in enumerate(data.get("pinned") or ()):
        path = ["pinned", i]
        if pin["scenario_id"] in seen:
            c.add(
                [*path, "scenario_id"], f"pinned scenario '{pin['scenario_id']}' is declared twice"
            )
        seen.add(pin["scenario_id"])
        scheme = c.scenario_ids
        if scheme is not None and re.fullmatch(scheme.pattern, pin["scenario_id"]) is None:
            c.add(
                [*path, "scenario_id"],
                f"scenario id '{pin['scenario_id']}' is outside the domain's scenario id scheme "
                f"(expected {scheme.pattern})",
            )
        if pin["category"] not in declared:
            c.add(
                [*path, "category"],
                f"category '{pin['category']}' has no rule in categories"
                + suggest(pin["category"], declared),
            )
        c.entity([*path, "preferred"], pin["preferred"])
        c.entity([*path, "target_outcome"], pin["target_outcome"])
        c.entity([*path, "population"], pin.get("population"))
        c.entities_([*path, "candidates"], pin["candidates"])
        c.entities_([*path, "patient", "condition_ids"], pin["patient"].get("condition_ids"))
        for j, cand in enumerate(pin["candidates"]):
            ent = c.entities.get(cand)
            if ent is not None and not c.classes[ent.category].is_intervention:
                c.add(
                    [*path, "candidates", j], f"'{cand}' is a {ent.category}, not an intervention"
                )
        if pin["preferred"] not in pin["candidates"]:
            c.add(
                [*path, "preferred"], f"preferred '{pin['preferred']}' is not one of the candidates"
            )
        low, high = CANDIDATE_LIMITS
        if not low <= len(pin["candidates"]) <= high:
            c.add([*path, "candidates"], f"a scenario offers {low}-{high} candidates")
        target = c.entities.get(pin["target_outcome"])
        rule = next((r for r in data["categories"] if r["category"] == pin["category"]), {})
        allowed = rule.get("target_classes") or data["target_classes"]
        if target is not None and target.category not in allowed:
            c.add(
                [*path, "target_outcome"],
                f"'{target.id}' is a {target.category}; target_classes allow " + ", ".join(allowed),
            )


def _check_exclusive(c: _Checker, data: dict) -> None:
    """Each exclusive group names two or more entities, or one entity class (not both)."""
    for i, group in enumerate(data.get("exclusive_findings") or ()):
        path = ["exclusive_findings", i]
        members, kind = group.get("members"), group.get("entity_class")
        if (members is None) == (kind is None):
            c.add(path, "an exclusive group lists its members or names an entity_class (one)")
            continue
        if members is not None:
            c.entities_([*path, "members"], members)
            if len(set(members)) < 2:
                c.add([*path, "members"], "an exclusive group needs two or more findings")
        elif kind not in c.classes:
            c.add(
                [*path, "entity_class"],
                f"unknown class '{kind}'" + suggest(str(kind), c.classes),
            )


def _check_goals(c: _Checker, data: dict) -> None:
    """Goal findings and their outcomes are entities; a finding is one goal, never its own
    outcome; a goal_tie category needs goals to decide by."""
    seen: set[str] = set()
    for i, goal in enumerate(data.get("goals") or ()):
        path = ["goals", i]
        c.entity([*path, "finding"], goal["finding"])
        c.entity([*path, "outcome"], goal["outcome"])
        if goal["finding"] in seen:
            c.add([*path, "finding"], f"goal finding '{goal['finding']}' is declared twice")
        if goal["finding"] == goal["outcome"]:
            c.add([*path, "outcome"], "a goal points to an outcome other than its own finding")
        seen.add(goal["finding"])
    for i, rule in enumerate(data["categories"]):
        if rule["pattern"] == "goal_tie" and not data.get("goals"):
            c.add(
                ["categories", i, "pattern"],
                "a goal_tie rule needs `goals` (the stated priorities that break the tie)",
            )


def _check_profiles(c: _Checker, data: dict) -> None:
    seen: set[str] = set()
    for i, prof in enumerate(data.get("populations") or ()):
        path = ["populations", i]
        c.entity([*path, "population"], prof["population"])
        if prof["population"] in seen:
            c.add([*path, "population"], f"population '{prof['population']}' has two profiles")
        seen.add(prof["population"])
        c.count_range([*path, "age"], prof["age"], (0, 120))
        c.entities_([*path, "condition_ids"], prof.get("condition_ids"))
        c.entities_([*path, "applies_with"], prof.get("applies_with"))
        c.entities_([*path, "target_outcomes"], prof.get("target_outcomes"))
    seen = set()
    for i, prof in enumerate(data.get("entity_profiles") or ()):
        path = ["entity_profiles", i]
        c.entity([*path, "entity"], prof["entity"])
        c.entity([*path, "population"], prof.get("population"))
        c.entities_([*path, "incompatible_with"], prof.get("incompatible_with"))
        for j, pop in enumerate(prof.get("stated_in") or ()):
            c.population([*path, "stated_in", j], pop)
        if prof["entity"] in seen:
            c.add([*path, "entity"], f"entity '{prof['entity']}' has two profiles")
        seen.add(prof["entity"])
        c.template([*path, "sentence"], prof.get("sentence"), PATIENT_FIELDS)
    for i, lab in enumerate(data.get("labs") or ()):
        path = ["labs", i]
        c.entities_([*path, "when"], lab["when"])
        if lab["min"] > lab["max"]:
            c.add([*path, "min"], f"min {lab['min']} is greater than max {lab['max']}")
    for key, fields in TEMPLATE_FIELDS.items():
        c.template(["narrative", key], data["narrative"][key], fields)


def _check_uncertainty(c: _Checker, data: dict) -> None:
    rule = data.get("uncertainty")
    if not rule:
        return
    c.enum_values(["uncertainty", "class_order"], rule["class_order"], c.rec_classes)
    for i, value in enumerate(rule.get("weak_classes") or ()):
        if value not in rule["class_order"]:
            c.add(
                ["uncertainty", "weak_classes", i],
                f"class '{value}' is not in class_order ({', '.join(rule['class_order'])})",
            )
    c.enum_values(["uncertainty", "weak_levels"], rule.get("weak_levels"), c.level_values)


def _check_indication_scopes(c: _Checker, data: dict) -> None:
    """A scope names an intervention, conditions or populations that exist and a source; it
    leaves out none of the intervention's own validated indication edges (a scope that did
    would call the intervention "not indicated" where the graph says it is)."""
    seen: set[str] = set()
    for i, scope in enumerate(data.get("indication_scopes") or ()):
        path = ["indication_scopes", i]
        iid = scope["intervention_id"]
        if iid in seen:
            c.add([*path, "intervention_id"], f"'{iid}' has two indication scopes")
        seen.add(iid)
        c.evidence([*path, "evidence_id"], scope.get("evidence_id"))
        c.entities_([*path, "indicated_for"], scope["indicated_for"])
        if not c.intervention([*path, "intervention_id"], iid):
            continue
        left_out = sorted(
            {
                a.object_id
                for a in c.assertions
                if a.subject_id == iid
                and a.validated
                and c.roles.get(a.predicate) == "therapeutic"
                and a.object_id not in scope["indicated_for"]
            }
        )
        if left_out:
            c.add(
                [*path, "indicated_for"],
                f"the graph says {iid} is indicated for {', '.join(left_out)}, which the scope "
                "leaves out",
            )


def _check_stated_background(c: _Checker, data: dict) -> None:
    for i, rule in enumerate(data.get("stated_background") or ()):
        path = ["stated_background", i]
        for j, option in enumerate(rule["options"]):
            c.intervention([*path, "options", j], option)
        c.entity([*path, "finding"], rule["finding"], "finding")
        c.evidence([*path, "evidence_id"], rule.get("evidence_id"))
        c.template([*path, "absent"], rule["absent"], PATIENT_FIELDS)


__all__ = ["check_scenario_rules", "scenario_categories"]
