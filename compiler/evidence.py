"""Evidence rules: where a source may stand, which claims contradict, what a class claim means.

A gold answer rests on outcome evidence, so the compiler makes the evidence trustworthy before
any backend sees it:

- **Study scope.** A trial, meta-analysis or cohort supports only assertions about what it
  studied: an assertion whose subject is an intervention (or class) it did not randomise or
  analyse, or a physiology edge (the subject is not an intervention) supported by a trial, is
  an error by default (a domain may declare `study_scope: warning`). This is what stops HOPE,
  a ramipril trial, from reaching labetalol through a shared blood-pressure edge.
- **Contradictions.** A benefit claim and a null or harm claim on one (subject, outcome,
  population) triple with no declared resolution fail the compile, naming both assertions.
- **Class-level claims.** An assertion whose subject is an intervention class applies to the
  class's members as the predicate's `members_inherit` annotation says: always, never, or only
  for classes the domain declares homogeneous. A claim on a class without members is an error.
- **Provenance labels.** The label each assertion carries in contexts is computed here from the
  declared rules (spec/declarations/conditions.yaml `provenance_labels`), never in a template, and a rule
  whose wording says "validated" or "unvalidated" must require that flag.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterator
from functools import cached_property
from itertools import groupby
from operator import itemgetter
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kgbench.scope import study_covers
from kgbench.suggest import unknown

from . import ir
from .schema import suggest
from .tables import ErrorList, Table
from .yamlfile import YamlDoc

# Source types whose support is a study of what it names (they declare studied_interventions).
STUDY_TYPES = ("trial", "meta_analysis", "cohort")
NO_SOURCES: frozenset[str] = frozenset()
# Roles whose assertions from an intervention are outcome claims, and the effect each means.
BENEFIT, NO_EFFECT, HARM = "benefit", "no_effect", "harm"


def parse_rules(doc: YamlDoc) -> ir.EvidenceRules:
    """The domain's `evidence_rules` block (shape already checked against the LinkML schema)."""
    data = doc.data.get("evidence_rules") or {}
    return ir.EvidenceRules(
        study_scope=data.get("study_scope") or "error",
        homogeneous_classes=tuple(h["class_id"] for h in data.get("homogeneous_classes") or ()),
        composites=tuple(
            (c["outcome_id"], tuple(c["members"])) for c in data.get("composite_outcomes") or ()
        ),
        conflicts=tuple(
            ir.Conflict(tuple(c["assertions"]), str(c["resolution"]), " ".join(c["note"].split()))
            for c in data.get("conflicts") or ()
        ),
        component_credits=tuple(
            ir.ComponentCredit(
                str(c["assertion_id"]),
                tuple(c["components"]),
                str(c["evidence_id"]),
                " ".join(str(c["note"]).split()),
            )
            for c in data.get("component_credits") or ()
        ),
        evidence_gaps=tuple(
            ir.EvidenceGap(
                str(g["intervention_id"]),
                str(g["outcome_id"]),
                g.get("population_id") or None,
                str(g["evidence_id"]),
                " ".join(str(g["note"]).split()),
            )
            for g in data.get("evidence_gaps") or ()
        ),
    )


def parse_provenance(doc: YamlDoc) -> tuple[ir.ProvenanceRule, ...]:
    """Provenance label rules from the condition declarations, checked for honest wording."""
    out = []
    for i, r in enumerate(doc.data.get("provenance_labels") or ()):
        rule = ir.ProvenanceRule(
            label=" ".join(str(r["label"]).split()),
            relation_classes=tuple(r.get("relation_classes") or ()),
            roles=tuple(r.get("roles") or ()),
            causal_status=tuple(r.get("causal_status") or ()),
            source_types=tuple(r.get("source_types") or ()),
            validated=r.get("validated"),
            has_evidence=r.get("has_evidence"),
        )
        words = set(re.findall(r"[a-z]+", rule.label.lower()))
        wanted = False if "unvalidated" in words else True if "validated" in words else None
        if wanted is not None and rule.validated is not wanted:
            from kgbench.errors import SpecError

            raise SpecError(
                f"provenance label '{rule.label}' speaks of validation, so the rule must require "
                f"validated: {str(wanted).lower()}",
                doc.location(["provenance_labels", i, "validated"], "validated"),
            )
        out.append(rule)
    return tuple(out)


def outcome_effect(assertion: ir.Assertion, predicate: ir.Predicate) -> str | None:
    """benefit / no_effect / harm for an assertion read as an outcome claim, else None."""
    if predicate.role == "null_effect":
        return NO_EFFECT
    if predicate.role != "causal":
        return None
    if assertion.direction == "decrease":
        return BENEFIT
    if assertion.direction == "increase":
        return HARM
    return None


class EvidenceChecker:
    """Runs the evidence rules over a built domain; errors and warnings are collected."""

    def __init__(
        self,
        domain: ir.Domain,
        tables: dict[str, Table],
        doc: YamlDoc,
        errors: ErrorList,
        warnings: list[str],
    ) -> None:
        self.domain = domain
        self.tables = tables
        self.doc = doc
        self.errors = errors
        self.warnings = warnings
        self.category = {e.id: e.category for e in domain.entities}
        self.classes = domain.class_by_name
        self.members = {c.class_id: set(c.member_ids) for c in domain.intervention_classes}
        self.classes_of: dict[str, set[str]] = defaultdict(set)
        for c in domain.intervention_classes:
            for m in c.member_ids:
                self.classes_of[m].add(c.class_id)
        self.rules = domain.evidence_rules
        self.homogeneous = set(self.rules.homogeneous_classes)
        # The ids of group and of intervention entities: one set probe per assertion in the
        # checks below, instead of two dict lookups and a call (100,000 assertions).
        kinds = {
            name: (cls.is_group, cls.is_intervention or cls.is_group)
            for name, cls in self.classes.items()
        }
        no = (False, False)
        self.group_ids = {e for e, cat in self.category.items() if kinds.get(cat, no)[0]}
        self.intervention_ids = {e for e, cat in self.category.items() if kinds.get(cat, no)[1]}
        self._provenance_memo: dict[tuple[Any, ...], str] = {}

    @cached_property
    def _source_types(self) -> dict[str, frozenset[str]]:
        """Each assertion's source types (the provenance labels only: built on first use).

        Equal sets are one shared frozenset: a domain has a handful of source-type mixes, so
        `provenance` can key its memo on them at the cost of a pointer per assertion. The
        links come sorted by assertion, so each assertion's types are gathered as a run of
        links (a set per assertion, alive all at once, was ~0.2 KB each: the load's peak at
        4,000,000 assertions); a run met again (links out of order) is merged."""
        types = {e.evidence_id: e.source_type for e in self.domain.evidence_sources}
        shared: dict[frozenset[str], frozenset[str]] = {}
        out: dict[str, frozenset[str]] = {}
        for aid, run in groupby(self.domain.supports, key=itemgetter(0)):
            kinds = frozenset(types[s.evidence_id] for s in run)
            if aid in out:
                kinds |= out[aid]
            out[aid] = shared.setdefault(kinds, kinds)
        return out

    # helpers -------------------------------------------------------------------------------

    # Row indexes locate an error only: built on the first one, from the id columns (a dict
    # per row of a 4,000,000-row table would cost gigabytes on the happy path).
    @cached_property
    def _asr_row(self) -> dict[str, int]:
        return self.tables["assertions"].row_index("assertion_id")

    def _assertion(self, assertion_id: str) -> ir.Assertion:
        """The assertion with this id (one that exists). The assertions are sorted by id, so
        it is found by bisection; a dict of every assertion would be ~0.3 GB at 4,000,000."""
        assertions = self.domain.assertions
        i = bisect_left(assertions, assertion_id, key=itemgetter(0))
        if i < len(assertions) and assertions[i].assertion_id == assertion_id:
            return assertions[i]
        return next(a for a in assertions if a.assertion_id == assertion_id)  # not sorted

    @cached_property
    def _ev_row(self) -> dict[str, int]:
        return self.tables["evidence_sources"].row_index("evidence_id")

    @cached_property
    def _links(self) -> dict[tuple[str, str], int]:
        return self.tables["assertion_evidence"].row_index("assertion_id", "evidence_id")

    def _with_assertions(
        self, supports: tuple[ir.Support, ...]
    ) -> Iterator[tuple[ir.Support, ir.Assertion]]:
        """Each link with its assertion, by one walk down both (both are sorted by assertion
        id); a link out of that order is looked up by `_assertion` instead."""
        walk = iter(self.domain.assertions)
        a: ir.Assertion | None = None
        for s in supports:
            aid = s.assertion_id
            if a is None or a.assertion_id != aid:
                if a is None or a.assertion_id < aid:
                    a = next((x for x in walk if x.assertion_id >= aid), None)
                if a is None or a.assertion_id != aid:
                    a = self._assertion(aid)
            yield s, a

    def is_group(self, entity_id: str) -> bool:
        return entity_id in self.group_ids

    def is_intervention(self, entity_id: str) -> bool:
        return entity_id in self.intervention_ids

    def asr_location(self, assertion_id: str, field: str):
        return self.tables["assertions"].location(self._asr_row[assertion_id], field)

    def ev_location(self, evidence_id: str, field: str):
        return self.tables["evidence_sources"].location(self._ev_row[evidence_id], field)

    def rules_location(self, path: list, field: str):
        return self.doc.location(["evidence_rules", *path], field)

    def _assertion_columns(self) -> dict[str, Any] | None:
        """The assertions table's Arrow columns when they hold exactly the assertions checked
        (the frontend runs these checks only once every row passed the table rules), else
        None: a check then walks the records. A check asks the columns first whether it can
        find anything at all, and walks (and words) only if so, so its findings never depend
        on the shortcut."""
        arrow = self.tables["assertions"].arrow if "assertions" in self.tables else None
        if arrow is None or len(arrow["assertion_id"]) != len(self.domain.assertions):
            return None
        return arrow

    def _no_contradiction_possible(self) -> bool:
        """True when the columns show no (subject, outcome, population) with both a benefit
        claim and a no-effect or harm claim from an intervention (`outcome_effect`)."""
        columns = self._assertion_columns()
        if columns is None:
            return False
        predicates = self.domain.predicates
        pred, direction = columns["predicate"], columns["direction"]
        from_intervention = _among(columns["subject_id"], self.intervention_ids)
        causal = _among(pred, {p.name for p in predicates if p.role == "causal"})
        null = _among(pred, {p.name for p in predicates if p.role == "null_effect"})
        benefit = pc.and_(from_intervention, pc.and_(causal, pc.equal(direction, "decrease")))
        harm = pc.and_(causal, pc.equal(direction, "increase"))
        against = pc.and_(from_intervention, pc.or_(null, harm))
        if not _any(benefit) or not _any(against):
            return True
        keys = _row_keys(columns["subject_id"], columns["object_id"], columns["population_id"])
        if keys is None:
            return False
        return not np.isin(_take(keys, benefit), _take(keys, against)).any()

    # checks --------------------------------------------------------------------------------

    def run(self, derive: bool = True) -> tuple[ir.AssertionFacts, ...]:
        """Every check; then, with `derive`, each assertion's facts (none without)."""
        self.check_declarations()
        self.check_evidence_declares_scope()
        self.check_study_scope()
        self.check_null_claims()
        self.check_contradictions()
        member_ids = self.class_claims()  # also a check: a class claim needs members
        if not derive:
            return ()
        return tuple(
            ir.AssertionFacts(
                a.assertion_id, self.provenance(a), member_ids.get(a.assertion_id, ())
            )
            for a in self.domain.assertions
        )

    def check_declarations(self) -> None:
        """Every id the evidence rules name exists and has the right kind."""
        rules = self.doc.data.get("evidence_rules") or {}
        for i, h in enumerate(rules.get("homogeneous_classes") or ()):
            cid = h["class_id"]
            if not self.is_group(cid):
                self.errors.add(
                    f"'{cid}' is not an intervention class" + suggest(cid, self.members),
                    self.rules_location(["homogeneous_classes", i, "class_id"], "class_id"),
                )
        for i, c in enumerate(rules.get("composite_outcomes") or ()):
            for j, oid in enumerate([c["outcome_id"], *c["members"]]):
                if oid not in self.category:
                    path = ["composite_outcomes", i] + (["outcome_id"] if j == 0 else ["members"])
                    self.errors.add(
                        unknown("entity", oid, self.category),
                        self.rules_location(path, path[-1]),
                    )
        # the assertion ids, only where a declaration names assertions: read one by one, the
        # assertions would be made for nothing (`compiler.lazyrecords`)
        named = rules.get("conflicts") or rules.get("component_credits")
        ids = {a.assertion_id for a in self.domain.assertions} if named else set()
        for i, c in enumerate(rules.get("conflicts") or ()):
            for aid in c["assertions"]:
                if aid not in ids:
                    self.errors.add(
                        unknown("assertion", aid, ids),
                        self.rules_location(["conflicts", i, "assertions"], "assertions"),
                    )
            res = str(c["resolution"])
            if res != "contested" and res not in c["assertions"]:
                self.errors.add(
                    f"resolution must be 'contested' or one of the conflicting assertions "
                    f"({', '.join(c['assertions'])}); got {res!r}",
                    self.rules_location(["conflicts", i, "resolution"], "resolution"),
                )

        self.check_component_credits(rules, ids)
        self.check_evidence_gaps(rules)

    def check_component_credits(self, rules: dict[str, Any], ids: set[str]) -> None:
        """A credit names a claim on a declared composite, members of that composite only, and
        a source that exists."""
        composites = dict(self.rules.composites)
        evidence = {e.evidence_id for e in self.domain.evidence_sources}
        for i, c in enumerate(rules.get("component_credits") or ()):
            aid = str(c["assertion_id"])
            where = ["component_credits", i]
            if aid not in ids:
                self.errors.add(
                    unknown("assertion", aid, ids),
                    self.rules_location([*where, "assertion_id"], "assertion_id"),
                )
                continue
            outcome = self._assertion(aid).object_id
            if outcome not in composites:
                self.errors.add(
                    f"{aid} is a claim on {outcome}, not on a declared composite outcome "
                    f"({', '.join(sorted(composites)) or 'none declared'})",
                    self.rules_location([*where, "assertion_id"], "assertion_id"),
                )
                continue
            for m in c["components"]:
                if m not in composites[outcome]:
                    self.errors.add(
                        f"'{m}' is not a member of the composite {outcome} "
                        f"(members: {', '.join(composites[outcome])})",
                        self.rules_location([*where, "components"], "components"),
                    )
            if str(c["evidence_id"]) not in evidence:
                self.errors.add(
                    unknown("evidence source", str(c["evidence_id"]), evidence),
                    self.rules_location([*where, "evidence_id"], "evidence_id"),
                )

    def check_evidence_gaps(self, rules: dict[str, Any]) -> None:
        """A gap names an intervention, an outcome and (optionally) a population that exist,
        and the source that states it."""
        evidence = {e.evidence_id for e in self.domain.evidence_sources}
        populations = {e for e, cat in self.category.items() if cat == "Population"}
        for i, g in enumerate(rules.get("evidence_gaps") or ()):
            where = ["evidence_gaps", i]
            iid, oid = str(g["intervention_id"]), str(g["outcome_id"])
            if iid not in self.intervention_ids:
                self.errors.add(
                    unknown("intervention", iid, self.intervention_ids),
                    self.rules_location([*where, "intervention_id"], "intervention_id"),
                )
            if oid not in self.category or oid in self.intervention_ids:
                self.errors.add(
                    unknown("outcome", oid, self.category),
                    self.rules_location([*where, "outcome_id"], "outcome_id"),
                )
            pop = g.get("population_id")
            if pop and pop not in populations:
                self.errors.add(
                    unknown("population", str(pop), populations),
                    self.rules_location([*where, "population_id"], "population_id"),
                )
            if not str(g.get("evidence_id") or "").strip() or g["evidence_id"] not in evidence:
                self.errors.add(
                    "an evidence gap needs the source that states it: "
                    + unknown("evidence source", str(g.get("evidence_id") or ""), evidence),
                    self.rules_location([*where, "evidence_id"], "evidence_id"),
                )

    def check_evidence_declares_scope(self) -> None:
        """A trial names what it randomised; populations named must be populations."""
        for e in self.domain.evidence_sources:
            if e.source_type == "trial" and not e.studied_interventions:
                self.report_scope(
                    f"trial {e.evidence_id} declares no studied_interventions; a trial supports "
                    "only claims about the interventions it randomised",
                    self.ev_location(e.evidence_id, "studied_interventions"),
                )
            for ref in e.studied_interventions:
                if ref not in self.category:
                    self.errors.add(
                        unknown("entity", ref, self.category),
                        self.ev_location(e.evidence_id, "studied_interventions"),
                    )
                elif not self.is_intervention(ref):
                    self.errors.add(
                        f"'{ref}' is a {self.category[ref]}, not an intervention or class",
                        self.ev_location(e.evidence_id, "studied_interventions"),
                    )
            for ref in e.studied_populations:
                if ref not in self.category:
                    self.errors.add(
                        unknown("entity", ref, self.category),
                        self.ev_location(e.evidence_id, "studied_populations"),
                    )

    def studied(self, evidence: ir.EvidenceSource, subject: str) -> bool:
        return study_covers(
            evidence.studied_interventions,
            subject,
            homogeneous=self.homogeneous,
            classes_of_subject=self.classes_of.get(subject, ()),
            members_of_subject=self.members.get(subject, ()) if self.is_group(subject) else (),
        )

    def check_study_scope(self) -> None:
        evidence = {e.evidence_id: e for e in self.domain.evidence_sources}
        link_rows = self.tables["assertion_evidence"]
        studies = {k for k, e in evidence.items() if e.source_type in STUDY_TYPES}
        if not studies:  # every link below would be passed over
            return
        for s, a in self._with_assertions(self.domain.supports):
            if s.evidence_id not in studies:
                continue
            e = evidence[s.evidence_id]
            where = link_rows.location(self._link_index(s), "evidence_id")
            # The side of the claim that is an intervention: its subject, or for an effect
            # modifier (a population modifying a drug's effect) its object.
            about = next((x for x in (a.subject_id, a.object_id) if self.is_intervention(x)), None)
            if about is None:
                if e.source_type == "trial":
                    self.report_scope(
                        f"trial {e.evidence_id} supports {a.assertion_id}, a physiology edge "
                        f"({a.subject_id} is a {self.category[a.subject_id]}); support physiology "
                        "with a guideline, review or cohort, and attach trials to the claims "
                        "about the interventions they randomised",
                        where,
                    )
                continue
            if e.studied_interventions and not self.studied(e, about):
                self.report_scope(
                    f"{e.source_type} {e.evidence_id} supports {a.assertion_id} about "
                    f"{about}, which it did not study (studied: "
                    f"{', '.join(e.studied_interventions)})",
                    where,
                )

    def _link_index(self, support: ir.Support) -> int:
        return self._links[(support.assertion_id, support.evidence_id)]

    def report_scope(self, message: str, where) -> None:
        if self.rules.study_scope == "warning":
            self.warnings.append(f"{where}: {message}")
        else:
            self.errors.add(message, where)

    def check_null_claims(self) -> None:
        """A null result is its own kind of claim: role null_effect and causal_status no_effect
        go together, so no causal chain can silently pass through a null result."""
        null_predicates = {p.name for p in self.domain.predicates if p.role == "null_effect"}
        columns = self._assertion_columns()
        if columns is not None and not _any(
            pc.not_equal(
                _among(columns["predicate"], null_predicates),
                pc.equal(columns["causal_status"], "no_effect"),
            )
        ):
            return  # the columns say no row breaks the rule: nothing to word
        for a in self.domain.assertions:
            null_role = a.predicate in null_predicates
            if null_role != (a.causal_status == "no_effect"):
                want = "no_effect" if null_role else "not no_effect (only null_effect predicates)"
                self.errors.add(
                    f"causal_status of a {a.predicate} assertion must be {want}, "
                    f"got '{a.causal_status}'",
                    self.asr_location(a.assertion_id, "causal_status"),
                )

    def check_contradictions(self) -> None:
        """Benefit against no effect or harm on one triple needs a declared resolution."""
        resolved = [set(c.assertions) for c in self.rules.conflicts]
        by_triple: dict[tuple, list[tuple[str, str]]] = defaultdict(list)
        interventions = self.intervention_ids
        predicate = self.domain.predicate_by_name
        if self._no_contradiction_possible():
            return
        for a in self.domain.assertions:
            if a.subject_id not in interventions:
                continue
            effect = outcome_effect(a, predicate[a.predicate])
            if effect is not None:
                key = (a.subject_id, a.object_id, a.population_id)
                by_triple[key].append((a.assertion_id, effect))
        shared = [kv for kv in by_triple.items() if len(kv[1]) > 1]  # one claim contradicts none
        for (subj, obj, pop), claims in sorted(shared, key=lambda kv: kv[1][0][0]):
            benefit = [i for i, eff in claims if eff == BENEFIT]
            against = [i for i, eff in claims if eff != BENEFIT]
            for b in benefit:
                for c in against:
                    if any({b, c} <= r for r in resolved):
                        continue
                    self.errors.add(
                        f"{b} (benefit) and {c} ({dict(claims)[c].replace('_', ' ')}) contradict "
                        f"each other on {subj} -> {obj}"
                        + (f" in {pop}" if pop else "")
                        + "; declare a resolution under evidence_rules.conflicts in domain.yaml "
                        "(contested, or the assertion that stands)",
                        self.asr_location(c, "predicate"),
                    )

    def class_claims(self) -> dict[str, tuple[str, ...]]:
        """Members each class-level claim applies to, by its predicate's inheritance rule.

        A claim is class-level when its subject is an intervention class (a class's outcome
        claim, adverse effect, contraindication) or, its subject not being one, its object is
        (an effect modifier or an interaction that names the class: older age modifies the
        hypoglycaemia risk of sulfonylureas); either way contexts show it under each member."""
        out: dict[str, tuple[str, ...]] = {}
        groups = self.group_ids
        columns = self._assertion_columns()
        if not groups or (
            columns is not None
            and not _any(_among(columns["subject_id"], groups))
            and not _any(_among(columns["object_id"], groups))
        ):
            return out  # no assertion names a class
        for a in self.domain.assertions:
            if a.subject_id in groups:
                cls, side = a.subject_id, "subject_id"
            elif a.object_id in groups:
                cls, side = a.object_id, "object_id"
            else:
                continue
            members = self.members.get(cls)
            if not members:
                self.errors.add(
                    f"{a.assertion_id} is a class-level claim on '{cls}', which has no "
                    "members in intervention_classes",
                    self.asr_location(a.assertion_id, side),
                )
                continue
            rule = self.domain.predicate_by_name[a.predicate].members_inherit
            applies = rule == "always" or (rule == "homogeneous" and cls in self.homogeneous)
            out[a.assertion_id] = tuple(sorted(members)) if applies else ()
        return out

    def provenance(self, a: ir.Assertion) -> str:
        """The first declared provenance rule the assertion meets ("" for none). A rule reads
        only the five values of the key below, so each distinct key is judged once (a few
        dozen keys for millions of assertions)."""
        sources = self._sources_of(a.assertion_id)
        key = (a.predicate, a.relation_class, a.causal_status, a.validated, sources)
        label = self._provenance_memo.get(key)
        if label is None:
            label = self._provenance_memo[key] = self._first_provenance_rule(a, sources)
        return label

    def _first_provenance_rule(self, a: ir.Assertion, sources: frozenset[str]) -> str:
        role = self.domain.predicate_by_name[a.predicate].role
        for rule in self.domain.provenance_rules:
            if rule.relation_classes and a.relation_class not in rule.relation_classes:
                continue
            if rule.roles and role not in rule.roles:
                continue
            if rule.causal_status and a.causal_status not in rule.causal_status:
                continue
            if rule.source_types and not sources & set(rule.source_types):
                continue
            if rule.validated is not None and a.validated is not rule.validated:
                continue
            if rule.has_evidence is not None and bool(sources) is not rule.has_evidence:
                continue
            return rule.label
        return ""

    def _sources_of(self, assertion_id: str) -> frozenset[str]:
        return self._source_types.get(assertion_id, NO_SOURCES)


def _among(values, names) -> Any:
    """Whether each value is one of `names` (a Python collection of strings)."""
    return pc.is_in(values, value_set=pa.array(sorted(names), pa.string()))


def _any(mask) -> bool:
    return bool(pc.any(mask).as_py())


def _take(keys: np.ndarray, mask) -> np.ndarray:
    return keys[np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool)]


def _row_keys(*columns) -> np.ndarray | None:
    """One int64 per row, equal for equal rows (each column's dictionary codes in mixed
    radix), or None where the codes could overflow."""
    keys = np.zeros(len(columns[0]), dtype=np.int64)
    span = 1
    for column in columns:
        encoded = pc.dictionary_encode(column)
        width = max(len(encoded.dictionary), 1)
        if encoded.indices.null_count or span * width >= 2**62:
            return None
        keys = keys * width + encoded.indices.to_numpy(zero_copy_only=False)
        span *= width
    return keys
