"""Cypher generation: typed constructs, one emitter per construct, dialects as subclasses.

The way sqlglot generates SQL: each construct is a small frozen dataclass (a typed view of
what to say, never Cypher text), `CypherGenerator.TRANSFORMS` maps its type to the method
that says it, and a dialect subclass overrides only what its server spells differently. All
Neo4j-5-specific syntax (`COUNT { }` and `EXISTS { }` subqueries, scoped `CALL (x) { }`,
`USING INDEX SEEK` hints) lives in `Neo4j5`, so a second graph store is one subclass.

Labels, relationship types and property keys in constructs are validated spec identifiers;
every value reaches the server as a parameter (`$rows`, `$candidate_ids`, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

# --- constructs (typed view-models) ---------------------------------------------------------


@dataclass(frozen=True)
class UniqueId:
    """A uniqueness constraint on the namespace label's `id`."""

    name: str
    label: str


@dataclass(frozen=True)
class PropertyIndex:
    name: str
    label: str
    key: str


@dataclass(frozen=True)
class MergeNodes:
    """Nodes of one kind from `$rows` ({id, props}): namespaced, every declared property
    written (a property absent from a row is set to null, i.e. removed).

    `properties` are the declared keys other than `id`: written from a map literal whose keys
    the planner sees, so it can prove the MERGE's `id` is never rewritten (a `SET n = $map`
    could rewrite it, which costs an Eager operator that buffers every row of the batch)."""

    label: str
    extra_labels: tuple[str, ...]
    properties: tuple[str, ...] = ()
    class_param: str | None = None  # a last label from this statement parameter (see below)


# A node statement's class label may come from a statement parameter (the load plan's
# `params`, a validated spec identifier) rather than be spelled in the text: the statements
# of every entity class are then one text, which a freshly started server plans once instead
# of once per class (each distinct text is planned on first use, in 50-150 ms of a cold
# JVM's time). Relationship types stay spelled (see MergeAssertionEdges).


@dataclass(frozen=True)
class ReconcileNodes:
    """The ids of the existing nodes, among `$rows`' ids, that lack one of the statement's
    kind and class labels (an entity whose class changed, an id that moved to another kind).
    A read: the load deletes those nodes before the MERGE, which puts the labels in its
    pattern and would otherwise try to create a second node with the id and fail on the
    uniqueness constraint; the load then re-creates the node and, from the rows that still
    hold them, its relationships. (A delete in this statement would plan an Eager.)"""

    label: str
    extra_labels: tuple[str, ...]
    class_param: str | None = None  # as MergeNodes'


@dataclass(frozen=True)
class MergeAssertionEdges:
    """The role edges (HAS_SUBJECT, HAS_OBJECT) and the direct typed edge of reified
    assertions of one predicate, from `$rows`; their nodes are a MergeNodes of their own,
    sent the same rows just before. (In one statement with the node's properties the planner
    cannot tell a node's property from an edge's of the same name, e.g. `direction`, and
    plans an Eager.) The type is spelled, never a parameter: the plan of a relationship MERGE
    whose type is `$(...)` expands untyped and then filters on the type, and at 30,000
    assertions a first load spent 99 s in it against 4.6 s in these statements."""

    label: str
    predicate: str
    edge_properties: tuple[str, ...] = ()


@dataclass(frozen=True)
class MergeSupports:
    label: str
    properties: tuple[str, ...] = ()


@dataclass(frozen=True)
class MergeMembers:
    label: str


@dataclass(frozen=True)
class UnpairedDirectEdges:
    """Direct edges without the assertion that names them (must be 0)."""

    label: str
    predicates: tuple[str, ...]


@dataclass(frozen=True)
class UnpairedAssertions:
    """Assertions without exactly one subject, one object and their direct edge (must be 0)."""

    label: str
    predicates: tuple[str, ...]


@dataclass(frozen=True)
class UnevidencedAssertions:
    """Assertions with neither a SUPPORTS link nor a stated reason (must be 0)."""

    label: str


@dataclass(frozen=True)
class CountNodes:
    label: str
    kind: str  # the second label: Entity, Assertion, EvidenceSource or an entity class


@dataclass(frozen=True)
class CountRelationships:
    label: str
    type: str
    start: str | None = None  # second label of the start node, if any
    end: str | None = None


@dataclass(frozen=True)
class VerifyExact:
    """The assertions between two linked entities, both ways, and the class-level claims
    that apply to the subject (verify-and-revise review: exact check and correction)."""

    label: str
    predicates: tuple[str, ...]


@dataclass(frozen=True)
class VerifyPath:
    """Directed paths of at most `max_length` validated assertions from subject to object
    (also from a class the subject is a member of, when the first claim applies to it):
    unvalidated edges verify nothing, as C3 shows validated chains only."""

    label: str
    predicates: tuple[str, ...]
    max_length: int
    limit: int = 16


@dataclass(frozen=True)
class VerifyReview:
    """One round trip for a triplet: the `exact` rows (what the graph holds between the two
    entities: the correction for a refuted triplet) and, only
    when none of them states the claimed predicate forward and the predicate is signed, the
    shortest path over validated assertions whose composed sign is the claimed one (`paths`,
    at most one) and the shortest of the opposite sign (`opposite`: a graph holding both
    cannot tell the sign). Parameters: $subject_id, $object_id, $predicate, $sign (+1, -1,
    or 0 for an unsigned predicate, which no path can support)."""

    exact: VerifyExact
    path: VerifyPath


Construct = (
    UniqueId
    | PropertyIndex
    | MergeNodes
    | ReconcileNodes
    | MergeAssertionEdges
    | MergeSupports
    | MergeMembers
    | UnpairedDirectEdges
    | UnpairedAssertions
    | UnevidencedAssertions
    | CountNodes
    | CountRelationships
    | VerifyExact
    | VerifyPath
    | VerifyReview
)


def _method(kind: type) -> str:
    """MergeNodes -> merge_nodes: the emitter's name for a construct type."""
    name = kind.__name__
    return "".join(f"_{ch.lower()}" if ch.isupper() else ch for ch in name).lstrip("_")


CONSTRUCTS: tuple[type, ...] = (
    UniqueId,
    PropertyIndex,
    MergeNodes,
    ReconcileNodes,
    MergeAssertionEdges,
    MergeSupports,
    MergeMembers,
    UnpairedDirectEdges,
    UnpairedAssertions,
    UnevidencedAssertions,
    CountNodes,
    CountRelationships,
    VerifyExact,
    VerifyPath,
    VerifyReview,
)

# --- the generator --------------------------------------------------------------------------


class CypherGenerator:
    """Says each construct in openCypher; `TRANSFORMS` is resolved once per class."""

    NAME: ClassVar[str] = "opencypher"
    TRANSFORMS: ClassVar[dict[type, Callable[[Any, Any], str]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Each dialect gets its own table: the base table, then its own `<construct>_sql`
        style methods (`merge_nodes` for MergeNodes, ...) override by name."""
        super().__init_subclass__(**kwargs)
        cls.TRANSFORMS = {kind: getattr(cls, _method(kind)) for kind in CONSTRUCTS}

    def generate(self, construct: Construct) -> str:
        try:
            emitter = self.TRANSFORMS[type(construct)]
        except KeyError:  # a broken invariant: a construct without an emitter
            raise AssertionError(f"{self.NAME} cannot say {type(construct).__name__}") from None
        return emitter(self, construct)

    # -- schema --
    def unique_id(self, c: UniqueId) -> str:
        return f"CREATE CONSTRAINT {c.name} IF NOT EXISTS FOR (n:{c.label}) REQUIRE n.id IS UNIQUE"

    def property_index(self, c: PropertyIndex) -> str:
        return f"CREATE INDEX {c.name} IF NOT EXISTS FOR (n:{c.label}) ON (n.{c.key})"

    # -- load --
    # No load statement may plan an Eager operator (a test EXPLAINs each): every label is in
    # the MERGE pattern, properties are written from map literals that never name the MERGE
    # key, and an assertion's node and its edges are two statements (see MergeAssertionEdges),
    # so no row's write can change what another row of the batch reads.
    @staticmethod
    def _props(var: str, source: str, keys: tuple[str, ...]) -> str:
        """`SET var += {k: source.k, ...}`: absent keys are null, which removes them."""
        if not keys:
            return ""
        items = ",\n    ".join(f"{k}: {source}.{k}" for k in keys)
        return f"\nSET {var} += {{\n    {items}\n}}"

    def dynamic(self, param: str) -> str:
        """A label read from the parameter `param` (a dialect's)."""
        raise NotImplementedError

    def merge_nodes(self, c: MergeNodes) -> str:
        labels = ":".join((c.label, *c.extra_labels))
        if c.class_param:
            labels += ":" + self.dynamic(c.class_param)
        return f"UNWIND $rows AS row\nMERGE (n:{labels} {{id: row.id}})" + self._props(
            "n", "row.props", c.properties
        )

    def reconcile_nodes(self, c: ReconcileNodes) -> str:
        kind = f"n:{'&'.join(c.extra_labels)}"
        if c.class_param:  # a label expression cannot name a parameter; labels() can
            kind = f"({kind} AND ${c.class_param} IN labels(n))"
        return (
            f"UNWIND $rows AS row\nMATCH (n:{c.label} {{id: row.id}})\n"
            f"WHERE NOT {kind}\nRETURN n.id AS id"
        )

    def merge_assertion_edges(self, c: MergeAssertionEdges) -> str:
        return (
            "UNWIND $rows AS row\n"
            f"MATCH (a:{c.label}:Assertion {{id: row.id}})\n"
            f"MATCH (s:{c.label}:Entity {{id: row.subject_id}})\n"
            f"MATCH (o:{c.label}:Entity {{id: row.object_id}})\n"
            "MERGE (a)-[:HAS_SUBJECT]->(s)\n"
            "MERGE (a)-[:HAS_OBJECT]->(o)\n"
            f"MERGE (s)-[r:{c.predicate} {{assertion_id: row.id}}]->(o)"
            + self._props("r", "row.edge_props", c.edge_properties)
        )

    def merge_supports(self, c: MergeSupports) -> str:
        return (
            "UNWIND $rows AS row\n"
            f"MATCH (e:{c.label}:EvidenceSource {{id: row.evidence_id}})\n"
            f"MATCH (a:{c.label}:Assertion {{id: row.assertion_id}})\n"
            "MERGE (e)-[s:SUPPORTS]->(a)" + self._props("s", "row.props", c.properties)
        )

    def merge_members(self, c: MergeMembers) -> str:
        return (
            "UNWIND $rows AS row\n"
            f"MATCH (m:{c.label}:Entity {{id: row.member_id}})\n"
            f"MATCH (k:{c.label}:Entity {{id: row.class_id}})\n"
            "MERGE (m)-[:MEMBER_OF]->(k)"
        )

    # -- checks --
    def count_nodes(self, c: CountNodes) -> str:
        return f"MATCH (n:{c.label}:{c.kind}) RETURN count(n) AS value"

    def count_relationships(self, c: CountRelationships) -> str:
        start = f":{c.label}" + (f":{c.start}" if c.start else "")
        end = f":{c.label}" + (f":{c.end}" if c.end else "")
        return f"MATCH ({start})-[r:{c.type}]->({end}) RETURN count(r) AS value"

    def unpaired_direct_edges(self, c: UnpairedDirectEdges) -> str:
        raise NotImplementedError  # needs existential subqueries: a dialect's

    def unpaired_assertions(self, c: UnpairedAssertions) -> str:
        raise NotImplementedError

    def unevidenced_assertions(self, c: UnevidencedAssertions) -> str:
        raise NotImplementedError

    # -- verification (verify-and-revise review; $subject_id, $object_id are parameters) --
    def _endpoints(self, label: str) -> str:
        return (
            f"MATCH (s:{label} {{id: $subject_id}}){self.index_seek('s', label)}\n"
            f"MATCH (o:{label} {{id: $object_id}}){self.index_seek('o', label)}\n"
        )

    def verify_exact(self, c: VerifyExact) -> str:
        types = "|".join(c.predicates)
        return (
            self._endpoints(c.label) + f"{self.scoped_call('s', 'o')}\n"
            f"  MATCH (s)-[r:{types}]->(o)\n"
            "  RETURN r, 'forward' AS orientation, false AS via_class\n"
            "  UNION\n"
            f"  MATCH (o)-[r:{types}]->(s)\n"
            "  RETURN r, 'reverse' AS orientation, false AS via_class\n"
            "  UNION\n"
            f"  MATCH (s)-[:MEMBER_OF]->(:{c.label})-[r:{types}]->(o)\n"
            "  WHERE s.id IN coalesce(r.member_ids, [])\n"
            "  RETURN r, 'forward' AS orientation, true AS via_class\n"
            "}\n"
            "RETURN r.assertion_id AS assertion_id, type(r) AS predicate, orientation, via_class,\n"
            "       r.direction AS direction, r.validated AS validated\n"
            "ORDER BY assertion_id, orientation"
        )

    def verify_path(self, c: VerifyPath) -> str:
        hops = f"[:{'|'.join(c.predicates)}*1..{c.max_length}]"
        return (
            self._endpoints(c.label) + f"{self.scoped_call('s', 'o')}\n"
            f"  MATCH p = (s)-{hops}->(o)\n"
            "  WHERE all(r IN relationships(p) WHERE r.validated = true)\n"
            "  RETURN relationships(p) AS rels, false AS via_class\n"
            "  UNION\n"
            f"  MATCH (s)-[:MEMBER_OF]->(k:{c.label})\n"
            f"  MATCH p = (k)-{hops}->(o)\n"
            "  WHERE s.id IN coalesce(relationships(p)[0].member_ids, [])\n"
            "    AND all(r IN relationships(p) WHERE r.validated = true)\n"
            "  RETURN relationships(p) AS rels, true AS via_class\n"
            "}\n"
            "WITH [r IN rels | r.assertion_id] AS chain, [r IN rels | r.direction] AS directions,\n"
            "     via_class\n"
            "RETURN chain, directions, via_class\n"
            f"ORDER BY size(chain), chain\nLIMIT {c.limit}"
        )

    def verify_review(self, c: VerifyReview) -> str:
        types = "|".join(c.exact.predicates)
        hops = f"[:{'|'.join(c.path.predicates)}*1..{c.path.max_length}]"
        label = c.exact.label
        return (
            self._endpoints(label) + f"{self.scoped_call('s', 'o')}\n"
            f"  {self.scoped_call('s', 'o')}\n"
            f"    MATCH (s)-[r:{types}]->(o)\n"
            "    RETURN r, 'forward' AS orientation, false AS via_class\n"
            "    UNION\n"
            f"    MATCH (o)-[r:{types}]->(s)\n"
            "    RETURN r, 'reverse' AS orientation, false AS via_class\n"
            "    UNION\n"
            f"    MATCH (s)-[:MEMBER_OF]->(:{label})-[r:{types}]->(o)\n"
            "    WHERE s.id IN coalesce(r.member_ids, [])\n"
            "    RETURN r, 'forward' AS orientation, true AS via_class\n"
            "  }\n"
            "  WITH r, orientation, via_class ORDER BY r.assertion_id, orientation\n"
            "  RETURN collect({assertion_id: r.assertion_id, predicate: type(r), "
            "orientation: orientation,\n"
            "                  via_class: via_class, direction: r.direction, "
            "validated: r.validated}) AS found\n"
            "}\n"
            f"{self.scoped_call('s', 'o', 'found')}\n"
            "  WITH s, o, found\n"
            "  WHERE $sign <> 0\n"
            "    AND none(x IN found WHERE x.orientation = 'forward' AND x.predicate = $predicate)\n"
            f"  {self.scoped_call('s', 'o')}\n"
            f"    MATCH p = (s)-{hops}->(o)\n"
            "    WHERE all(r IN relationships(p) WHERE r.validated = true)\n"
            "    RETURN relationships(p) AS rels\n"
            "    UNION\n"
            f"    MATCH (s)-[:MEMBER_OF]->(k:{label})\n"
            f"    MATCH p = (k)-{hops}->(o)\n"
            "    WHERE s.id IN coalesce(relationships(p)[0].member_ids, [])\n"
            "      AND all(r IN relationships(p) WHERE r.validated = true)\n"
            "    RETURN relationships(p) AS rels\n"
            "  }\n"
            "  WITH [r IN rels | r.assertion_id] AS chain,\n"
            "       reduce(sign = 1, r IN rels |\n"
            "              sign * CASE r.direction WHEN 'decrease' THEN -1 ELSE 1 END) AS sign\n"
            "  ORDER BY size(chain), chain\n"
            "  WITH sign, collect(chain)[0] AS chain\n"
            "  RETURN collect(CASE WHEN sign = $sign THEN chain END) AS paths,\n"
            "         collect(CASE WHEN sign <> $sign THEN chain END) AS opposite\n"
            "}\n"
            "RETURN found, paths, opposite"
        )

    # -- extraction (used by the template) --
    def scoped_call(self, *variables: str) -> str:
        """Opening of a subquery that sees `variables` of the outer query."""
        return f"CALL {{\n  WITH {', '.join(variables)}" if variables else "CALL {"

    def index_seek(self, variable: str, label: str) -> str:
        """A hint pinning a lookup to the id index ('' where the dialect has none)."""
        return ""


CypherGenerator.TRANSFORMS = {kind: getattr(CypherGenerator, _method(kind)) for kind in CONSTRUCTS}


class Neo4j5(CypherGenerator):
    """Neo4j 5 (Community and Enterprise, 5.26 LTS tested): the dialect kgbench runs on."""

    NAME: ClassVar[str] = "neo4j-5"

    def dynamic(self, param: str) -> str:
        # `$(expr)` labels: Neo4j 5.26 (MATCH, CREATE, MERGE, SET and REMOVE only)
        return f"$(${param})"

    # Both pairing checks walk the direct edges once and reach each edge's assertion through
    # the id index, then test its two role links from the assertion's side (Expand(Into) over
    # an assertion's few relationships). Walking from a subject instead visits every edge of
    # that subject for each of its assertions: the square of its degree, minutes on a hub of a
    # PrimeKG-sized graph. The seek is a hint, not a hope: on a small graph the cost model
    # may prefer the expansion (seen on the test fixtures), and a plain `USING INDEX` lets it
    # scan the whole index per edge instead; `USING INDEX SEEK` pins the seek.
    def _named_assertion(self, c: UnpairedDirectEdges | UnpairedAssertions) -> str:
        return (
            f"  MATCH (s)<-[:HAS_SUBJECT]-(a:{c.label}:Assertion {{id: r.assertion_id}})"
            "-[:HAS_OBJECT]->(o)\n"
            f"  USING INDEX SEEK a:{c.label}(id)\n"
            "  WHERE a.predicate = type(r)\n"
        )

    def unpaired_direct_edges(self, c: UnpairedDirectEdges) -> str:
        return (
            f"MATCH (s:{c.label})-[r:{'|'.join(c.predicates)}]->(o:{c.label})\n"
            "WHERE NOT EXISTS {\n"
            f"{self._named_assertion(c)}"
            "}\nRETURN count(r) AS value"
        )

    def unpaired_assertions(self, c: UnpairedAssertions) -> str:
        # All assertions less those named by a direct edge that pairs with them and that have
        # exactly one subject and one object (ids are unique, so DISTINCT counts assertions).
        return (
            f"MATCH (n:{c.label}:Assertion)\n"
            "WITH count(n) AS total\n"
            f"OPTIONAL MATCH (s:{c.label})-[r:{'|'.join(c.predicates)}]->(o:{c.label})\n"
            "WHERE EXISTS {\n"
            f"{self._named_assertion(c)}"
            "    AND COUNT { (a)-[:HAS_SUBJECT]->() } = 1 AND COUNT { (a)-[:HAS_OBJECT]->() } = 1\n"
            "}\nWITH total, count(DISTINCT r.assertion_id) AS paired\n"
            "RETURN total - paired AS value"
        )

    def unevidenced_assertions(self, c: UnevidencedAssertions) -> str:
        return (
            f"MATCH (a:{c.label}:Assertion)\n"
            "WHERE NOT EXISTS { (:EvidenceSource)-[:SUPPORTS]->(a) } AND a.no_evidence_reason IS NULL\n"
            "RETURN count(a) AS value"
        )

    def scoped_call(self, *variables: str) -> str:
        return f"CALL ({', '.join(variables)}) {{"

    def index_seek(self, variable: str, label: str) -> str:
        return f" USING INDEX SEEK {variable}:{label}(id)"


DIALECTS: dict[str, type[CypherGenerator]] = {Neo4j5.NAME: Neo4j5}
