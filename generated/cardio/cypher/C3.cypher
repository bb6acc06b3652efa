// Extraction query for domain 'cardio', condition C3 (causal_graph) (generated; do not edit).
// The validated causal chain from each candidate to the target outcome (target, biological process, intermediate outcome, clinical outcome), plus directly attached adverse effects.
// Parameters: $candidate_ids (entity ids of the candidate actions), $target_id (the target
// outcome), $context_ids (the scenario population and the patient's conditions).
// Returns one row: `paths` (section, candidate, ordered assertion ids) and `assertions`
// (each assertion with its subject, object and evidence sources).
UNWIND $candidate_ids AS candidate_id
MATCH (c:KG_cardio {id: candidate_id})
CALL (c) {
  // section causal_chains: Validated causal pathways
  MATCH (t:KG_cardio {id: $target_id})
  MATCH p = (c)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN|PARTICIPATES_IN|TARGETS*1..5]->(t)
  WHERE all(r IN relationships(p) WHERE r.validated)
  RETURN 'causal_chains' AS section, [r IN relationships(p) | r.assertion_id] AS chain
  UNION
  // section adverse_effects: Adverse effects
  MATCH (c)-[r:MAY_CAUSE_ADVERSE_EFFECT]->(:KG_cardio)
  RETURN 'adverse_effects' AS section, [r.assertion_id] AS chain
}
WITH collect({section: section, candidate_id: candidate_id, assertion_ids: chain}) AS paths
CALL (paths) {
  UNWIND paths AS path
  UNWIND path.assertion_ids AS assertion_id
  WITH DISTINCT assertion_id
  MATCH (a:KG_cardio {id: assertion_id})
  MATCH (a)-[:HAS_SUBJECT]->(s:KG_cardio)
  MATCH (a)-[:HAS_OBJECT]->(o:KG_cardio)
  OPTIONAL MATCH (e:KG_cardio)-[:SUPPORTS]->(a)
  WITH a, s, o, e ORDER BY e.id
  WITH a, s, o, collect(e {.*}) AS evidence
  RETURN collect(a {.*, subject: s {.id, .name, .category}, object: o {.id, .name, .category}, evidence: evidence}) AS assertions
}
RETURN paths, assertions
