// Padding query for domain 'cardio', condition C6 (knowledge_graph_volume_matched) (generated; do not edit).
// A volume-matched control: the padding assertions the harness chose (irrelevant to the item,
// drawn in a seeded order; see harness/graph/volume.py), fetched by id with the same
// projection as every extraction query, so they render exactly like retrieved assertions.
// Parameters: $assertion_ids. Returns one row: `assertions` and their evidence `sources`.
UNWIND $assertion_ids AS assertion_id
MATCH (a:KG_cardio {id: assertion_id}) USING INDEX SEEK a:KG_cardio(id)
MATCH (a)-[:HAS_SUBJECT]->(s:KG_cardio)
MATCH (a)-[:HAS_OBJECT]->(o:KG_cardio)
OPTIONAL MATCH (e:KG_cardio)-[l:SUPPORTS]->(a)
WITH a, s, o, e, l ORDER BY e.id
WITH a, s, o, collect(e {.id, recommendation_class: l.recommendation_class, level_of_evidence: l.level_of_evidence}) AS evidence, collect(e) AS supporting
WITH collect(a {.*, subject: s {.id, .name, .category}, object: o {.id, .name, .category}, evidence: evidence}) AS assertions, collect(supporting) AS supporting
// each evidence source once, as in the extraction queries
CALL (supporting) {
  UNWIND supporting AS cited
  UNWIND cited AS e
  WITH DISTINCT e
  RETURN collect(e {.*}) AS sources
}
RETURN assertions, sources
