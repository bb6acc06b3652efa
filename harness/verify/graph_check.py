"""Review: link a triplet's names to domain entities and check it against the graph.

Screening comes first and never raises: a triplet that is not an object, names a predicate
outside the compiled vocabulary, has an empty or over-long name, links both ends to one
entity (a self-loop) or exceeds the declared count is recorded with its reason and counted.

Linking reuses the probe's mapper (one owner for name matching): exact name, synonym, xref,
then rapidfuzz at the declared threshold; a tie is ambiguous and links nothing. A triplet
with an end that cannot be linked is kept and marked `unverifiable`, as the seed keeps
incomplete knowledge (section 3.2.2).

Verification runs the compiled review queries with the linked ids as parameters only, and
reads the rows in the patient's population (a claim scoped to another population says
nothing about this patient; the gold builder's `holds_in` decides, one owner):
- `refuted` (reason `contradicted`) when a signed triplet meets, between the same two
  entities, a null result or an assertion of the opposite sign: the graph says otherwise;
- else `verified` by an exact assertion (right direction, right predicate and so sign);
- else `verified` by a directed path of at most m validated assertions whose composed sign
  is the predicate's, provided no validated path of the opposite sign exists (`mixed_signs`
  otherwise: the graph cannot tell the net sign);
- else `refuted`, with what the graph holds between the two ends (shown to the reviser only
  under the informed variant).
These depart from KGARevion's learned judge (conditions.yaml says how and why).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

import neo4j

from harness.compiled import CompiledDomain
from harness.probe.mapping import Mapper
from harness.probe.names import name_key, tidy
from harness.probe.reference import ReferenceGraph
from kgbench import contract

VERDICTS = ("verified", "refuted", "unverifiable", "rejected")
NULL_ROLE = "null_effect"  # the role of a null result (HAS_NO_EFFECT_ON)
EFFECT_ROLES = ("causal", "mechanistic")  # roles whose signed assertions state an effect


class Populations:
    """Whether a claim holds for the patient's population: the gold builder's reading
    (harness.scenarios.evidence.OutcomeJudge.holds_in: the population itself, those it lists
    under `applies_with`, claims of no population; own-evidence roles only in it). A domain
    without scenario rules, or a review with no population, scopes nothing."""

    def __init__(self, compiled: CompiledDomain) -> None:
        self.judge: Any = None
        if compiled.has_scenario_rules:
            from harness.scenarios.evidence import OutcomeJudge
            from harness.scenarios.kg import KnowledgeGraph
            from harness.scenarios.rules import load_rules

            self.judge = OutcomeJudge(KnowledgeGraph(compiled), load_rules(compiled))

    def holds(self, row: dict[str, Any], population: str | None) -> bool:
        if population is None or self.judge is None:
            return True
        return bool(self.judge.holds_in(row, population))


@dataclass(frozen=True)
class VerifySettings:
    """The compiled verify block of one condition, with its query texts loaded."""

    condition: str
    verify: contract.Verify
    exact_query: str
    path_query: str
    review_query: str | None = None  # one round trip (conditions.json 1.3); None before

    @classmethod
    def open(cls, compiled: CompiledDomain, condition: str) -> VerifySettings:
        cond = compiled.condition(condition)
        if cond.verify is None:
            from kgbench.errors import UserError

            raise UserError(f"condition {condition} is not a verify-and-revise condition")
        v = cond.verify
        review = compiled.read(v.queries.review) if v.queries.review else None
        return cls(
            condition,
            v,
            compiled.read(v.queries.exact),
            compiled.read(v.queries.path),
            review,
        )


@dataclass
class Verdict:
    """One triplet's review: what was proposed, how its ends linked, what the graph said."""

    subject: Any
    predicate: Any
    object: Any
    status: str  # verified | refuted | unverifiable | rejected
    reason: str = ""  # rejected: unknown_predicate, empty_name, too_long, self_loop, ...
    method: str | None = None  # exact | path (verified)
    subject_id: str | None = None
    object_id: str | None = None
    links: dict[str, Any] = field(default_factory=dict)  # end -> linking decision
    assertion_ids: list[str] = field(default_factory=list)
    correction: list[dict[str, Any]] = field(default_factory=list)
    population: str | None = None  # the patient population the review was scoped to
    query_ms: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def triplet_text(self) -> str:
        return f"{_shown(self.subject)} -{_shown(self.predicate)}-> {_shown(self.object)}"


def _shown(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Linker:
    """Names -> entity ids, every decision kept (the probe's mapper over this domain)."""

    def __init__(self, compiled: CompiledDomain, fuzzy_threshold: float) -> None:
        reference = ReferenceGraph.from_kg(compiled.graph, ())
        self.mapper = Mapper(reference, fuzzy_threshold)

    def link(self, name: str) -> dict[str, Any]:
        decision = self.mapper.map_names([name])[name_key(name)]
        return decision.to_json()


class Reviewer:
    """Screens, links and verifies triplets against one loaded domain graph."""

    def __init__(
        self,
        driver: neo4j.Driver,
        compiled: CompiledDomain,
        settings: VerifySettings,
        database: str | None = None,
        one_round_trip: bool = True,
    ) -> None:
        self.driver = driver
        self.settings = settings
        self.database = database
        # One long-lived read session, auto-commit queries: a review is one short read, and a
        # session plus an explicit transaction per query (execute_query) costs more than the
        # query. One round trip (the compiled review query) where the domain has it: a
        # refuted triplet used to cost two, the exact check and then the path search, and a
        # round trip is most of a review's time (bench/verify_bench.py measures both).
        self.one_round_trip = one_round_trip and settings.review_query is not None
        self._session: neo4j.Session | None = None
        self.linker = Linker(compiled, settings.verify.fuzzy_threshold)
        self.vocabulary = set(settings.verify.predicates)
        self.signs = settings.verify.signs
        self.path_predicates = set(settings.verify.path_predicates)
        self.roles = {p["name"]: p.get("role") for p in compiled.graph.get("predicates", [])}
        self.populations = Populations(compiled)
        # an assertion's population, from kg.json (the typed edges the queries follow carry
        # no population; the Assertion nodes and kg.json do)
        self.population_of = {
            a["assertion_id"]: a.get("population_id") for a in compiled.graph["assertions"]
        }

    # -- screening -------------------------------------------------------------------------

    def screen(self, raw: Any) -> Verdict | None:
        """A rejected verdict for a triplet that cannot be reviewed, else None."""
        if not isinstance(raw, dict):
            return Verdict(raw, None, None, "rejected", "not_an_object")
        s, p, o = raw.get("subject"), raw.get("predicate"), raw.get("object")
        bad = Verdict(s, p, o, "rejected")
        if not all(isinstance(x, str) for x in (s, p, o)):
            bad.reason = "not_text"
        elif p not in self.vocabulary:
            bad.reason = "unknown_predicate"
        elif max(len(s), len(o)) > self.settings.verify.max_name_length:
            bad.reason = "too_long"
        elif not name_key(s) or not name_key(o):
            bad.reason = "empty_name"
        elif name_key(s) == name_key(o):
            bad.reason = "self_loop"
        else:
            return None
        return bad

    # -- review ----------------------------------------------------------------------------

    def review(self, raw: Any, population: str | None = None) -> Verdict:
        """The verdict of one proposed triplet for a patient of `population` (None: any
        population's claims count); never raises on model output."""
        rejected = self.screen(raw)
        if rejected is not None:
            return rejected
        s, p, o = tidy(raw["subject"]), raw["predicate"], tidy(raw["object"])
        verdict = Verdict(s, p, o, "unverifiable", population=population)
        sl, ol = self.linker.link(s), self.linker.link(o)
        verdict.links = {"subject": sl, "object": ol}
        verdict.subject_id, verdict.object_id = sl["entity_id"], ol["entity_id"]
        if verdict.subject_id is None or verdict.object_id is None:
            verdict.reason = "unlinked_" + ("subject" if verdict.subject_id is None else "object")
            return verdict
        if verdict.subject_id == verdict.object_id:
            verdict.status, verdict.reason = "rejected", "self_loop"
            return verdict
        self._verify(verdict)
        return verdict

    def check(
        self, subject_id: str, predicate: str, object_id: str, population: str | None = None
    ) -> Verdict:
        """The graph's verdict on a triplet already linked to entity ids (what `review`
        does after linking): for audits over every pair of the graph."""
        verdict = Verdict(subject_id, predicate, object_id, "unverifiable", population=population)
        verdict.subject_id, verdict.object_id = subject_id, object_id
        self._verify(verdict)
        return verdict

    def _run(self, query: str, verdict: Verdict, **extra: Any) -> list[dict[str, Any]]:
        params = {"subject_id": verdict.subject_id, "object_id": verdict.object_id, **extra}
        if self._session is None:
            self._session = self.driver.session(
                database=self.database, default_access_mode=neo4j.READ_ACCESS
            )
        return [r.data() for r in self._session.run(query, params)]  # type: ignore[arg-type]

    def close(self) -> None:
        """End the review session (the driver stays the caller's)."""
        if self._session is not None:
            self._session.close()
            self._session = None

    def _verify(self, verdict: Verdict) -> None:
        import time

        started = time.perf_counter()
        sign = self.signs.get(str(verdict.predicate), 0)
        opposite: list[str] | None = None
        if self.one_round_trip:
            rows, paths, opposite = self._review(verdict, sign)
        else:
            rows, paths = self._run(self.settings.exact_query, verdict), None
        rows = [{**r, "population_id": self.population_of.get(r["assertion_id"])} for r in rows]
        here = [
            r
            for r in rows
            if r["orientation"] == "forward" and self.populations.holds(r, verdict.population)
        ]
        contra = self._contradicting(here, verdict, sign)
        exact = sorted({r["assertion_id"] for r in here if r["predicate"] == verdict.predicate})
        if contra:
            verdict.status, verdict.reason = "refuted", "contradicted"
            self._correct(verdict, rows)
        elif exact:
            verdict.status, verdict.method, verdict.assertion_ids = "verified", "exact", exact
        else:
            if paths is not None:  # the review query searched already (or had no need to)
                chain = paths[0] if paths else None
            else:
                chain, opposite = self._path(verdict, sign) if sign else (None, None)
            if chain is not None and not opposite:
                verdict.status, verdict.method, verdict.assertion_ids = "verified", "path", chain
            else:
                verdict.status = "refuted"
                verdict.reason = (
                    "mixed_signs" if chain is not None else self._why(rows, verdict, sign)
                )
                self._correct(verdict, rows)
        verdict.query_ms = round((time.perf_counter() - started) * 1000, 3)

    def _contradicting(self, here: list[dict[str, Any]], verdict: Verdict, sign: int) -> bool:
        """Does the graph, in the patient's population, say otherwise between the two ends: a
        null result or the opposite sign against a signed claim? (A claimed null result is
        verified only by a null result in the population, as the gold reads null results.)"""
        for r in here:
            if r["predicate"] == verdict.predicate:
                continue
            role = self.roles.get(r["predicate"])
            their = self.signs.get(r["predicate"], 0) or _direction_sign(r.get("direction"))
            if sign and role == NULL_ROLE:
                return True
            if sign and role in EFFECT_ROLES and their == -sign:
                return True
        return False

    @staticmethod
    def _correct(verdict: Verdict, rows: list[dict[str, Any]]) -> None:
        verdict.correction = [
            {
                "assertion_id": r["assertion_id"],
                "predicate": r["predicate"],
                "orientation": r["orientation"],
                "via_class": r["via_class"],
                "population_id": r.get("population_id"),
            }
            for r in rows
        ]

    def _review(
        self, verdict: Verdict, sign: int
    ) -> tuple[list[dict[str, Any]], list[list[str]], list[str] | None]:
        """The exact rows and (when needed) the shortest validated path of the claimed sign
        and of the opposite one, from the compiled review query: one round trip whatever the
        verdict."""
        assert self.settings.review_query is not None
        rows = self._run(
            self.settings.review_query, verdict, predicate=str(verdict.predicate), sign=sign
        )
        if not rows:  # an end is not in the loaded graph: nothing between them
            return [], [], None
        found = sorted(rows[0]["found"], key=lambda r: (r["assertion_id"], r["orientation"]))
        opposite = rows[0].get("opposite") or []
        return found, [list(c) for c in rows[0]["paths"]], (list(opposite[0]) if opposite else None)

    def _path(self, verdict: Verdict, sign: int) -> tuple[list[str] | None, list[str] | None]:
        """The shortest validated path (then lowest ids) whose composed sign is the claimed
        one, and the shortest of the opposite sign."""
        chain = opposite = None
        for row in self._run(self.settings.path_query, verdict):
            signs = [-1 if d == "decrease" else 1 for d in row["directions"]]
            if math.prod(signs) == sign:
                chain = chain or list(row["chain"])
            else:
                opposite = opposite or list(row["chain"])
        return chain, opposite

    @staticmethod
    def _why(rows: list[dict[str, Any]], verdict: Verdict, sign: int) -> str:
        forward = [r for r in rows if r["orientation"] == "forward"]
        if forward:
            return "wrong_predicate" if not sign else "wrong_sign_or_predicate"
        if rows:
            return "wrong_direction"
        return "no_assertion" if not sign else "no_assertion_or_path"


def _direction_sign(direction: Any) -> int:
    return {"increase": 1, "decrease": -1}.get(direction, 0) if isinstance(direction, str) else 0


def correction_text(verdict: Verdict, entities: dict[str, dict[str, Any]]) -> str:
    """What the graph holds between a refuted triplet's ends, in words, for the reviser."""

    def name(eid: str | None) -> str:
        return str(entities.get(eid or "", {}).get("name", eid))

    s, o = name(verdict.subject_id), name(verdict.object_id)
    if not verdict.correction:
        return f"the graph holds no assertion between {s} and {o}, nor a supporting path"
    parts = []
    for c in verdict.correction:
        a, b = (s, o) if c["orientation"] == "forward" else (o, s)
        via = " (class-level claim)" if c["via_class"] else ""
        pop = c.get("population_id")
        where = f" in {entities.get(pop, {}).get('name', pop)}" if pop else ""
        parts.append(f"{a} -{c['predicate']}-> {b} [{c['assertion_id']}]{via}{where}")
    return "the graph holds " + "; ".join(parts)


def tally(verdicts: list[Verdict]) -> dict[str, Any]:
    """Counts by status and by rejection or refutation reason."""
    return {
        "by_status": dict(sorted(Counter(v.status for v in verdicts).items())),
        "by_reason": dict(sorted(Counter(v.reason for v in verdicts if v.reason).items())),
    }
