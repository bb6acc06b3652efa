"""`kgbench extract`: run a condition's compiled query for a scenario and shape the result into
the self-contained context JSON the prompts and the scorer read (see harness/README.md).

Ordering is deterministic: sections in declaration order; paths by the candidate's position
in the scenario, then (causal chains) validated chains before unvalidated ones, each in the
section's declared chain order, else by length and assertion ids; evidence sorted by id.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import neo4j

from kgbench.contract import Context, VolumeMatch
from kgbench.errors import UserError

from ..compiled import CompiledDomain
from ..scenarios.chain_index import chain_rank_key

# The warm-up (`warm_up`) warms what the first pass needs, not the first pass: every grounded
# condition's query planned once for each plan-cache key the scenarios have (`plan_key`), then
# run over the first WARM_UP_SCENARIOS scenarios (the JIT, and the pages they read), on
# WARM_UP_SESSIONS sessions. The whole store is not read (two aggregate queries over every
# property): measured at 100k assertions (a fresh JVM each, A B A B, load 3.3), reading it
# made the warm-up 1-2 s longer and the first pass no faster (p95 38 against 17-26 ms without). The warm-up before issue 33
# (32 scenarios and per-target stand-ins for every candidate, 3 rounds) took 93-115 s on a
# 100k-assertion domain, longer than the extraction it prepared; issue 33 asks for at most 10 s.
WARM_UP_SCENARIOS = 8
WARM_UP_ROUNDS = 1
WARM_UP_SESSIONS = 2  # the machine's cores: planning is CPU-bound, one query per core


class _Prepared:
    """What every extraction of one compiled domain reads the same: its group ids and its
    compiled query texts. Worked out once per domain handle: `group_ids` walks every entity
    (1.5 ms a call at 100k assertions, 25,000 entities, half the query's own server time),
    and `domain.read` read the query's file on every call before this cache."""

    def __init__(self, domain: CompiledDomain) -> None:
        kinds = {c["name"] for c in domain.graph["entity_classes"] if c.get("is_group")}
        self.groups = frozenset(e["id"] for e in domain.graph["entities"] if e["category"] in kinds)
        self.queries: dict[str, str] = {}  # no reference to the domain: see _PREPARED

    def query(self, domain: CompiledDomain, rel: str) -> str:
        """`domain.read(rel)`, read once."""
        text = self.queries.get(rel)
        if text is None:
            text = self.queries[rel] = domain.read(rel)
        return text


# id(domain) -> (a weak reference to it, its _Prepared): by identity, not by equality, so a
# domain recompiled into the same folder and opened again gets its own; the entry goes with
# the handle.
_PREPARED: dict[int, tuple[weakref.ref, _Prepared]] = {}


def _prepared(domain: CompiledDomain) -> _Prepared:
    key = id(domain)
    hit = _PREPARED.get(key)
    if hit is not None and hit[0]() is domain:
        return hit[1]
    prepared = _Prepared(domain)
    ref = weakref.ref(domain, lambda _, key=key: _PREPARED.pop(key, None))
    _PREPARED[key] = (ref, prepared)
    return prepared


def group_ids(domain: CompiledDomain) -> frozenset[str]:
    """Ids of the intervention classes (entities of a class with `intervention_group`)."""
    return _prepared(domain).groups


def expected_assertions(
    domain: CompiledDomain, scenario: dict[str, Any], condition_id: str
) -> set[str]:
    """Assertions the compiled graph says this extraction must return.

    Its candidate_edges sections return every assertion from a candidate whose predicate is
    one of the section's (compiled) relationship types, and its context_modifiers sections every one from the
    population or a patient condition to a candidate: both are known from kg.json alone.
    (Chains depend on whole paths and are not predicted here.) An empty context is therefore
    expected exactly when this set is empty, as for a non-drug candidate without indications.
    """
    cond = domain.condition(condition_id)
    params = parameters(scenario, domain)
    candidates, context_ids = set(params["candidate_ids"]), set(params["context_ids"])
    out: set[str] = set()
    groups = group_ids(domain)
    for sec in cond.sections:
        wanted = set(sec.predicates)  # the relationship types its query matches
        if sec.shape not in ("candidate_edges", "context_modifiers"):
            continue
        for a in domain.graph["assertions"]:
            if a["predicate"] not in wanted:
                continue
            inherited = bool(candidates & set(a.get("member_ids") or ()))  # class-level
            from_candidate = sec.shape == "candidate_edges" and (
                a["subject_id"] in candidates or (inherited and a["subject_id"] in groups)
            )
            modifies = (
                sec.shape == "context_modifiers"
                and a["subject_id"] in context_ids
                and (
                    a["object_id"] in candidates
                    or (inherited and a["object_id"] in groups)  # a modifier of the class
                )
            )
            if from_candidate or modifies:
                out.add(a["assertion_id"])
    return out


def check_against_compile(
    context: dict[str, Any] | None, domain: CompiledDomain, scenario: dict[str, Any]
) -> None:
    """Every assertion the compiled graph says the extraction must return is in it.

    A graph that is unloaded, half-loaded or loaded from another compile returns fewer (often
    none: a prompt grounded in nothing); the stamp catches most of those before any query,
    and this catches the rest, per context.
    """
    if context is None:
        return
    missing = expected_assertions(domain, scenario, context["condition"]) - set(
        context["assertions"]
    )
    if missing:
        first = sorted(missing)[0]
        raise UserError(
            f"scenario {context['scenario_id']} under {context['condition']}: Neo4j returned "
            f"{len(context['assertions'])} assertion(s) but the compiled graph of "
            f"'{domain.name}' says it must return {len(missing)} more (e.g. {first}); the "
            f"loaded graph is not the compiled one: run `kgbench load --domain {domain.name}`"
        )


def parameters(scenario: dict[str, Any], domain: CompiledDomain) -> dict[str, Any]:
    """Query parameters; `outcome_ids` adds the composites that contain the target, since a
    claim on a composite (MACE) speaks for its components (myocardial infarction), and the
    outcome of each goal the patient states (scenarios.yaml `goals`), since the evidence for
    that goal may settle a tie (a domain without goals gets the target and composites only)."""
    patient = scenario.get("patient") or {}
    population = domain.population_of(scenario)  # none in a domain without populations
    context_ids = [*filter(None, [population]), *patient.get("condition_ids", [])]
    target = scenario["target_outcome_id"]
    composites = (domain.graph.get("evidence_rules") or {}).get("composite_outcomes") or []
    outcome_ids = [target, *sorted(c["outcome_id"] for c in composites if target in c["members"])]
    goals = domain.goal_outcomes
    stated = sorted({goals[f] for f in patient.get("condition_ids", []) if f in goals})
    goal_ids = [o for o in stated if o not in outcome_ids]
    params = {
        "candidate_ids": [c["intervention_id"] for c in scenario["candidates"]],
        "target_id": target,
        "outcome_ids": [*outcome_ids, *goal_ids],
        "context_ids": sorted(set(context_ids)),
        "evidence_rank": domain.evidence_rank,
    }
    if goal_ids:  # named apart, so no metric mistakes a goal's claim for a chain to the target
        params["goal_outcome_ids"] = goal_ids
    return params


# Values `_plain` returns as they are without a call: nearly every value of an assertion row.
_SCALARS = frozenset({str, int, float, bool, type(None)})

# A map's keys (as the server sent them) -> the same keys sorted. The rows of one query share a
# handful of key sets (an assertion's, an evidence source's, a subject's), so each is sorted
# once, not once per map; bounded, in case a domain's maps vary without end.
_KEY_ORDERS: dict[tuple[str, ...], tuple[str, ...]] = {}
_KEY_ORDERS_MAX = 4096


def _sorted_keys(keys: tuple[str, ...]) -> tuple[str, ...]:
    order = _KEY_ORDERS.get(keys)
    if order is None:
        order = tuple(sorted(keys))
        if len(_KEY_ORDERS) < _KEY_ORDERS_MAX:
            _KEY_ORDERS[keys] = order
    return order


def _plain(value: Any) -> Any:
    """Driver values to JSON-ready Python (lists stay lists, maps become dicts, keys sorted).
    Scalars are passed through inline, not by a call each, and a map's key order is looked up
    (`_sorted_keys`), not sorted per map: this conversion was half of an extraction's client
    CPU (cProfile, 100k-assertion domain)."""
    if isinstance(value, dict):
        return {
            k: v if type(v := value[k]) in _SCALARS else _plain(v)
            for k in _sorted_keys(tuple(value))
        }
    if isinstance(value, (list, tuple)):
        return [v if type(v) in _SCALARS else _plain(v) for v in value]
    return value


# The SUPPORTS link's properties, which each evidence entry of an assertion adds to its source's.
_LINK_KEYS = ("recommendation_class", "level_of_evidence")


def shaped_assertions(rows: list[Any], sources: list[Any]) -> dict[str, dict[str, Any]]:
    """Assertions as the query returns them, as JSON-ready dicts by id, evidence by id. Each
    row is converted once, and `extract` reads validation and levels from the result.

    The query sends each evidence source once (`sources`) and, per assertion, its links (the
    source's id and the link's properties): an assertion's evidence entry is the source's
    properties with the link's over them, keys sorted, as `e {.*, <link properties>}` would
    say it. (A source cited by many assertions was sent, read and converted once per
    citation: 88 entries of 16 sources in a C4 context of the example domain.)"""
    by_id = {}
    for src in sources:
        plain = _plain(src)
        by_id[plain["id"]] = (_sorted_keys((*plain, *_LINK_KEYS)), plain)
    assertions = {}
    for a in rows:
        item = _plain(a)
        entries = []
        for link in item["evidence"]:
            keys, src = by_id[link["id"]]
            entries.append({k: link[k] if k in _LINK_KEYS else src[k] for k in keys})
        entries.sort(key=lambda e: e["evidence_id"])
        item["evidence"] = entries
        assertions[item["assertion_id"]] = item
    return assertions


# Where extraction queries run: the driver (one auto-commit read per query) or an open
# transaction that a caller running many of them keeps for all (`read_transaction`).
Reader = neo4j.Driver | neo4j.Transaction

# Tries of one auto-commit read that fails with a retryable error (a transient server error, a
# dropped connection): the read changes nothing, so running it again is safe.
READ_ATTEMPTS = 3


def read_records(
    reader: Reader, query: str, params: dict[str, Any], database: str | None
) -> list[neo4j.Record]:
    """A read query's records, through the driver or in an open transaction.

    Through the driver it is one auto-commit query: RUN and PULL sent together, one round
    trip. `execute_query` (a managed transaction) costs two: BEGIN with RUN/PULL, then COMMIT
    (counted on the wire by tests/graph/test_extract_round_trip.py), and the 2026-12 review
    measured the warm p95 at 3-5x a `RETURN 1` round trip. The session shares the driver's
    `execute_query` bookmark manager, so a read still sees what `load` wrote through
    `execute_query`; a retryable error is tried again, at most READ_ATTEMPTS times in all,
    as a managed transaction would be."""
    if not isinstance(reader, neo4j.Driver):
        return list(reader.run(query, params))
    for attempt in range(1, READ_ATTEMPTS + 1):
        try:
            with reader.session(
                database=database,
                default_access_mode=neo4j.READ_ACCESS,
                bookmark_manager=reader.execute_query_bookmark_manager,
            ) as session:
                return list(session.run(query, params))
        except (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError) as exc:
            if attempt == READ_ATTEMPTS or not exc.is_retryable():
                raise
    raise AssertionError("unreachable")  # the loop returns or raises


@contextmanager
def read_transaction(driver: neo4j.Driver, database: str | None) -> Iterator[neo4j.Transaction]:
    """One read transaction for a run of extractions (the pilot's hundreds): the same
    queries and results as one `execute_query` each, without a session, BEGIN and COMMIT
    per query. The graph is not written meanwhile, so every read sees the same graph."""
    with (
        driver.session(database=database, default_access_mode=neo4j.READ_ACCESS) as session,
        session.begin_transaction() as tx,
    ):
        yield tx


def extract(
    driver: Reader,
    domain: CompiledDomain,
    scenario: dict[str, Any],
    condition_id: str,
    database: str | None = None,
) -> dict[str, Any] | None:
    """The context of one (scenario, condition); None for an ungrounded condition."""
    cond = domain.condition(condition_id)
    if not cond.query:
        return None
    params = parameters(scenario, domain)
    unknown = [
        i for i in [*params["candidate_ids"], params["target_id"]] if i not in domain.entities
    ]
    if unknown:
        raise UserError(
            f"scenario {scenario.get('scenario_id')}: unknown entity id(s) {', '.join(unknown)} in domain '{domain.name}'"
        )
    records = read_records(driver, _prepared(domain).query(domain, cond.query), params, database)
    row = records[0] if records else {"paths": [], "assertions": [], "sources": []}
    order = {cid: i for i, cid in enumerate(params["candidate_ids"])}
    assertions = shaped_assertions(row["assertions"], row["sources"])
    validated = {i: bool(a.get("validated")) for i, a in assertions.items()}
    levels = {i: {"evidence_level": a["evidence_level"]} for i, a in assertions.items()}
    by_section: dict[str, set[tuple[str, tuple[str, ...]]]] = {}  # one walk over the paths
    for p in row["paths"]:
        by_section.setdefault(p["section"], set()).add(
            (p["candidate_id"], tuple(p["assertion_ids"]))
        )
    sections = []
    for sec in cond.sections:
        paths = by_section.get(sec.name, set())

        def key(p: tuple[str, tuple[str, ...]], sec=sec) -> tuple:
            if sec.shape != "causal_chain":
                return (order.get(p[0], len(order)), len(p[1]), p[1])
            return (
                order.get(p[0], len(order)),
                not all(validated[i] for i in p[1]),
                chain_rank_key(p[1], levels, sec.chain_order or (), domain.evidence_rank),
            )

        ordered = sorted(paths, key=key)
        sections.append(
            {
                "name": sec.name,
                "title": sec.title,
                "shape": sec.shape,
                "paths": [{"candidate_id": c, "assertion_ids": list(ids)} for c, ids in ordered],
            }
        )
    populations = [a.get("population_id") for a in assertions.values()]
    groups = group_ids(domain)
    classes = [  # the class of a class-level claim (subject or object), so a prompt can name it
        a["subject_id"] if a["subject_id"] in groups else a["object_id"]
        for a in assertions.values()
        if a.get("member_ids")
    ]
    ids = [
        *params["candidate_ids"],
        *params["outcome_ids"],
        *filter(None, populations),
        *classes,
    ]
    entities = {
        i: {k: domain.entities[i][k] for k in ("id", "name", "category")} for i in sorted(set(ids))
    }
    context = {
        "format_version": Context.FORMAT,
        "domain": domain.name,
        "scenario_id": scenario["scenario_id"],
        "condition": condition_id,
        "parameters": params,
        "entities": entities,
        "sections": sections,
        "assertions": dict(sorted(assertions.items())),
    }
    if cond.volume_match is None:
        return context
    return _volume_matched(driver, domain, scenario, context, cond.volume_match, database)


def _volume_matched(
    driver: Reader,
    domain: CompiledDomain,
    scenario: dict[str, Any],
    context: dict[str, Any],
    match: VolumeMatch,
    database: str | None,
) -> dict[str, Any]:
    """A volume-matched control's context: its base block (already in `context`, from its
    own compiled query) padded to the item's reference block's length (harness.graph.volume),
    the padding fetched through the condition's compiled padding query and measured by
    rendering the compiled templates the prompts use."""
    from harness.evaluation.prompts import PromptRenderer

    from .volume import check_padding, pad

    reference = extract(driver, domain, scenario, match.reference, database)
    renderer = PromptRenderer(domain)

    def fetch(ids: list[str]) -> dict[str, dict[str, Any]]:
        records = read_records(
            driver,
            _prepared(domain).query(domain, match.padding_query),
            {"assertion_ids": ids},
            database,
        )
        row = records[0] if records else {"assertions": [], "sources": []}
        return shaped_assertions(row["assertions"], row["sources"])

    padded = pad(
        domain,
        context,
        reference or {},
        match,
        lambda condition, ctx: renderer.context_block(condition, ctx),
        fetch,
    )
    check_padding(padded, domain)
    return padded


def plan_key(params: dict[str, Any]) -> tuple:
    """The part of Neo4j's plan-cache key that the parameters make: each parameter's name and
    type, and for a string or a list its size bucket (0, 1, then the next power of ten, as
    Neo4j 5's `SizeBucket.computeBucket`). A compiled query of the example domain takes 1-3 s
    to plan on a cold JVM, and a scenario whose key differs (two outcome ids instead of one,
    a goal outcome) is planned again: the first pass paid those seconds inside one call."""

    def bucket(n: int) -> int:
        return n if n <= 1 else 10 ** math.ceil(math.log10(n))

    def info(value: Any) -> tuple:
        if isinstance(value, str):
            return ("str", bucket(len(value)))
        if isinstance(value, (list, tuple)):
            kinds = tuple(sorted({type(v).__name__ for v in value}))
            return ("list", kinds, bucket(len(value)))
        return (type(value).__name__,)

    return tuple((name, info(value)) for name, value in sorted(params.items()))


def warm_up_scenarios(domain: CompiledDomain, scenarios: list[dict[str, Any]]) -> list[dict]:
    """The scenarios the warm-up runs each query for: the first WARM_UP_SCENARIOS, then the
    first of every plan key they do not have, so that no query of the first pass is planned
    there. Its length grows with the distinct keys (a handful), not with the scenarios."""
    chosen = list(scenarios[:WARM_UP_SCENARIOS])
    seen = {plan_key(parameters(s, domain)) for s in chosen}
    for scenario in scenarios[WARM_UP_SCENARIOS:]:
        key = plan_key(parameters(scenario, domain))
        if key not in seen:
            seen.add(key)
            chosen.append(scenario)
    return chosen


def warm_up(
    driver: neo4j.Driver,
    domain: CompiledDomain,
    scenarios: list[dict[str, Any]],
    database: str | None = None,
    rounds: int = WARM_UP_ROUNDS,
) -> int:
    """Before the extraction whose latency counts: run every grounded condition's compiled
    query over `warm_up_scenarios`, `rounds` times (once by default), results discarded.

    After a fresh server start the first pass is several times slower than the next (issue
    17: p95 20.8 ms against 3.2 ms warm): each query is planned on first use (1-3 s each on
    the example domain and at 100k assertions, again for each plan key), the page cache is
    empty and the JVM's JIT has compiled nothing of the Cypher runtime. The plans come first,
    one run per (query, plan key) spread over WARM_UP_SESSIONS sessions (no two sessions plan
    the same); then the remaining runs warm the JIT and read the pages such queries read
    (not the whole store: see WARM_UP_SCENARIOS). Its cost grows with the queries and plan keys, not with the scenarios
    (issue 33, item 7: at most 10 s on a 100k-assertion domain). Returns the number of
    extraction queries run."""
    if not scenarios or rounds < 1:
        return 0
    queries = [domain.read(c.query) for c in domain.default_conditions if c.query]
    chosen = warm_up_scenarios(domain, scenarios)
    params = [parameters(s, domain) for s in chosen]
    firsts = {plan_key(p): i for i, p in reversed(list(enumerate(params)))}
    plans = [(q, params[i]) for i in sorted(firsts.values()) for q in queries]
    rest = [(q, p) for i, p in enumerate(params) if i not in firsts.values() for q in queries]
    work_rest = rest + [(q, p) for _ in range(rounds - 1) for p in params for q in queries]

    def run(item: tuple[str, dict[str, Any]]) -> None:
        read_records(driver, item[0], item[1], database)

    with ThreadPoolExecutor(WARM_UP_SESSIONS, thread_name_prefix="warm-up") as pool:
        list(pool.map(run, plans))  # every plan made before any run that would wait on it
        list(pool.map(run, work_rest))
    return len(plans) + len(work_rest)
