// Extraction query for domain 'afib', condition C3 (causal_graph) (generated; do not edit).
// The validated causal chain from each candidate to the target outcome (target, biological process, intermediate outcome, clinical outcome), plus directly attached adverse effects.
// Parameters: $candidate_ids (entity ids of the candidate actions), $target_id (the target
// outcome), $outcome_ids (the target and the composite outcomes that contain it),
// $context_ids (the scenario population and the patient's conditions).
// A class-level claim (its subject an intervention class) appears under each member it
// applies to: the compiler lists those members on the edge (`member_ids`).
// Returns one row: `paths` (section, candidate, ordered assertion ids) and `assertions`
// (each assertion with its subject, object and evidence sources). Index hints pin every
// lookup to a seek on the domain's id index, whatever the planner's statistics say.
UNWIND $candidate_ids AS candidate_id
MATCH (c:KG_afib {id: candidate_id}) USING INDEX SEEK c:KG_afib(id)
CALL (c) {
  // section causal_chains: Validated causal pathways
  // chains of the first declared shape that matches, per candidate
  MATCH (t:KG_afib {id: $target_id}) USING INDEX SEEK t:KG_afib(id)
  CALL (c, t) {
    MATCH p = (c)-[:PARTICIPATES_IN|TARGETS]->(:KG_afib)-[:PARTICIPATES_IN|TARGETS]->(:KG_afib)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(:KG_afib)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(t)
    WHERE all(r IN relationships(p) WHERE r.validated)
    RETURN 0 AS shape_rank, [r IN relationships(p) | r.assertion_id] AS chain
    UNION
    MATCH p = (c)-[:PARTICIPATES_IN|TARGETS]->(:KG_afib)-[:PARTICIPATES_IN|TARGETS]->(:KG_afib)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(:KG_afib)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(:KG_afib)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(t)
    WHERE all(r IN relationships(p) WHERE r.validated)
    RETURN 1 AS shape_rank, [r IN relationships(p) | r.assertion_id] AS chain
    UNION
    MATCH p = (c)-[:PARTICIPATES_IN|TARGETS]->(:KG_afib)-[:PARTICIPATES_IN|TARGETS]->(:KG_afib)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(:KG_afib)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(:KG_afib)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(:KG_afib)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(t)
    WHERE all(r IN relationships(p) WHERE r.validated)
    RETURN 2 AS shape_rank, [r IN relationships(p) | r.assertion_id] AS chain
    UNION
    MATCH p = (c)-[:PARTICIPATES_IN|TARGETS]->(:KG_afib)-[:PARTICIPATES_IN|TARGETS]->(:KG_afib)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(t)
    WHERE all(r IN relationships(p) WHERE r.validated)
    RETURN 3 AS shape_rank, [r IN relationships(p) | r.assertion_id] AS chain
    UNION
    MATCH p = (c)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(:KG_afib)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(t)
    WHERE all(r IN relationships(p) WHERE r.validated)
    RETURN 4 AS shape_rank, [r IN relationships(p) | r.assertion_id] AS chain
    UNION
    MATCH p = (c)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(:KG_afib)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(:KG_afib)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(t)
    WHERE all(r IN relationships(p) WHERE r.validated)
    RETURN 5 AS shape_rank, [r IN relationships(p) | r.assertion_id] AS chain
    UNION
    MATCH p = (c)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(t)
    WHERE all(r IN relationships(p) WHERE r.validated)
    RETURN 6 AS shape_rank, [r IN relationships(p) | r.assertion_id] AS chain
  }
  WITH shape_rank, chain ORDER BY shape_rank
  WITH collect({rank: shape_rank, chain: chain}) AS found
  UNWIND [f IN found WHERE f.rank = found[0].rank] AS best
  RETURN 'causal_chains' AS section, best.chain AS chain
  UNION
  // section outcome_evidence: Validated outcome evidence for the target
  // the candidate's own claims, then its classes' claims, on the target or a composite of it
  MATCH (t:KG_afib) USING INDEX SEEK t:KG_afib(id) WHERE t.id IN $outcome_ids
  MATCH (c)-[r:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(t)
  WHERE r.validated
  RETURN 'outcome_evidence' AS section, [r.assertion_id] AS chain
  UNION
  MATCH (t:KG_afib) USING INDEX SEEK t:KG_afib(id) WHERE t.id IN $outcome_ids
  MATCH (c)-[:MEMBER_OF]->(:KG_afib)-[r:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(t)
  WHERE c.id IN r.member_ids AND r.validated
  RETURN 'outcome_evidence' AS section, [r.assertion_id] AS chain
  UNION
  // section adverse_effects: Adverse effects
  MATCH (c)-[r:MAY_CAUSE_ADVERSE_EFFECT]->(:KG_afib)
  RETURN 'adverse_effects' AS section, [r.assertion_id] AS chain
  UNION
  MATCH (c)-[:MEMBER_OF]->(:KG_afib)-[r:MAY_CAUSE_ADVERSE_EFFECT]->(:KG_afib)
  WHERE c.id IN r.member_ids
  RETURN 'adverse_effects' AS section, [r.assertion_id] AS chain
}
WITH collect({section: section, candidate_id: candidate_id, assertion_ids: chain}) AS paths
CALL (paths) {
  UNWIND paths AS path
  UNWIND path.assertion_ids AS assertion_id
  WITH DISTINCT assertion_id
  MATCH (a:KG_afib {id: assertion_id}) USING INDEX SEEK a:KG_afib(id)
  MATCH (a)-[:HAS_SUBJECT]->(s:KG_afib)
  MATCH (a)-[:HAS_OBJECT]->(o:KG_afib)
  OPTIONAL MATCH (e:KG_afib)-[l:SUPPORTS]->(a)
  WITH a, s, o, e, l ORDER BY e.id
  WITH a, s, o, collect(e {.*, recommendation_class: l.recommendation_class, level_of_evidence: l.level_of_evidence}) AS evidence
  RETURN collect(a {.*, subject: s {.id, .name, .category}, object: o {.id, .name, .category}, evidence: evidence}) AS assertions
}
RETURN paths, assertions
