"""Review: link a triplet's names to domain entities and check it against the graph.

Screening comes first and never raises: a triplet that is not an object, names a predicate
outside the compiled vocabulary, has an empty or over-long name, links both ends to one
entity (a self-loop) or exceeds the declared count is recorded with its reason and counted.

Linking reuses the probe's mapper (one owner for name matching): exact name, synonym, xref,
then rapidfuzz at the declared threshold; a tie is ambiguous and links nothing. A triplet
with an end that cannot be linked is kept and marked `unverifiable`, as the seed keeps
incomplete knowledge (section 3.2.2).

Verification runs the compiled review queries with the linked ids as parameters only:
`verified` by an exact assertion (right direction, right predicate and so sign) or by a
directed path of at most m assertions whose composed sign is the predicate's; otherwise
`refuted`, with the graph's correction (what it holds between the two ends).
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

    def review(self, raw: Any) -> Verdict:
        """The verdict of one proposed triplet (never raises on model output)."""
        rejected = self.screen(raw)
        if rejected is not None:
            return rejected
        s, p, o = tidy(raw["subject"]), raw["predicate"], tidy(raw["object"])
        verdict = Verdict(s, p, o, "unverifiable")
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
        if self.one_round_trip:
            rows, paths = self._review(verdict, sign)
        else:
            rows, paths = self._run(self.settings.exact_query, verdict), None
        exact = sorted(
            {
                r["assertion_id"]
                for r in rows
                if r["orientation"] == "forward" and r["predicate"] == verdict.predicate
            }
        )
        if exact:
            verdict.status, verdict.method, verdict.assertion_ids = "verified", "exact", exact
        else:
            if paths is not None:  # the review query searched already (or had no need to)
                chain = paths[0] if paths else None
            else:
                chain = self._path(verdict, sign) if sign else None
            if chain is not None:
                verdict.status, verdict.method, verdict.assertion_ids = "verified", "path", chain
            else:
                verdict.status = "refuted"
                verdict.reason = self._why(rows, verdict, sign)
                verdict.correction = [
                    {
                        "assertion_id": r["assertion_id"],
                        "predicate": r["predicate"],
                        "orientation": r["orientation"],
                        "via_class": r["via_class"],
                    }
                    for r in rows
                ]
        verdict.query_ms = round((time.perf_counter() - started) * 1000, 3)

    def _review(self, verdict: Verdict, sign: int) -> tuple[list[dict[str, Any]], list[list[str]]]:
        """The exact rows and (when needed) the one shortest path of the claimed sign, from
        the compiled review query: one round trip whatever the verdict."""
        assert self.settings.review_query is not None
        rows = self._run(
            self.settings.review_query, verdict, predicate=str(verdict.predicate), sign=sign
        )
        if not rows:  # an end is not in the loaded graph: nothing between them
            return [], []
        found = sorted(rows[0]["found"], key=lambda r: (r["assertion_id"], r["orientation"]))
        return found, [list(c) for c in rows[0]["paths"]]

    def _path(self, verdict: Verdict, sign: int) -> list[str] | None:
        """The shortest path (then lowest ids) whose composed sign is the claimed one."""
        for row in self._run(self.settings.path_query, verdict):
            signs = [-1 if d == "decrease" else 1 for d in row["directions"]]
            if math.prod(signs) == sign:
                return list(row["chain"])
        return None

    @staticmethod
    def _why(rows: list[dict[str, Any]], verdict: Verdict, sign: int) -> str:
        forward = [r for r in rows if r["orientation"] == "forward"]
        if forward:
            return "wrong_predicate" if not sign else "wrong_sign_or_predicate"
        if rows:
            return "wrong_direction"
        return "no_assertion" if not sign else "no_assertion_or_path"


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
        parts.append(f"{a} -{c['predicate']}-> {b} [{c['assertion_id']}]{via}")
    return "the graph holds " + "; ".join(parts)


def tally(verdicts: list[Verdict]) -> dict[str, Any]:
    """Counts by status and by rejection or refutation reason."""
    return {
        "by_status": dict(sorted(Counter(v.status for v in verdicts).items())),
        "by_reason": dict(sorted(Counter(v.reason for v in verdicts if v.reason).items())),
    }
