// Extraction query for domain 'cardio', condition C7 (causal_graph_volume_matched) (generated; do not edit).
// C3's block, padded with graph content irrelevant to the item to the length of the item's C4 block (a volume control).
// Parameters: $candidate_ids (entity ids of the candidate actions), $target_id (the target
// outcome), $outcome_ids (the target and the composite outcomes that contain it),
// $context_ids (the scenario population and the patient's conditions), $evidence_rank
// (evidence level -> rank, higher is stronger: how chains are ranked).
// A class-level claim (its subject an intervention class, or for an effect modifier its
// object) appears under each member it applies to: the compiler lists those members on the
// edge (`member_ids`).
// Returns one row: `paths` (section, candidate, ordered assertion ids), `assertions`
// (each assertion with its subject, object and evidence links) and `sources` (each evidence
// source the links name, once). Index hints pin every lookup to a seek on the domain's id
// index, whatever the planner's statistics say.
UNWIND $candidate_ids AS candidate_id
MATCH (c:KG_cardio {id: candidate_id}) USING INDEX SEEK c:KG_cardio(id)
// the candidate's classes, read once: each class-level branch below starts from them
WITH candidate_id, c, [(c)-[:MEMBER_OF]->(k:KG_cardio) | k] AS classes
CALL (c, classes) {
  // section causal_chains: Validated causal pathways
  // validated chains of at most 6 steps, no node twice; the first 12 by strength DESC, size(chain), chain
  MATCH (t:KG_cardio {id: $target_id}) USING INDEX SEEK t:KG_cardio(id)
  CALL (c, t, classes) {
    MATCH p = (c)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN|PARTICIPATES_IN|TARGETS*1..6]->(t)
    WHERE all(r IN relationships(p) WHERE r.validated)
      AND all(n IN nodes(p) WHERE single(m IN nodes(p) WHERE m = n))
    RETURN relationships(p) AS rels
    UNION
    // a class-level claim that applies to the candidate as the first step
    UNWIND classes AS k
    MATCH (k)-[first:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN|PARTICIPATES_IN|TARGETS]->(x:KG_cardio)
    WHERE c.id IN first.member_ids
    MATCH p = (x)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN|PARTICIPATES_IN|TARGETS*0..5]->(t)
    WHERE first.validated AND all(r IN relationships(p) WHERE r.validated)
      AND all(n IN [c] + nodes(p) WHERE single(m IN [c] + nodes(p) WHERE m = n))
    RETURN [first] + relationships(p) AS rels
  }
  WITH rels, [r IN rels | r.assertion_id] AS chain, [r IN rels | $evidence_rank[r.evidence_level]] AS ranks
  WITH rels, chain, reduce(w = head(ranks), x IN ranks | CASE WHEN x < w THEN x ELSE w END) AS strength
  ORDER BY strength DESC, size(chain), chain
  LIMIT 12
  RETURN 'causal_chains' AS section, chain, rels
  UNION
  // section outcome_evidence: Validated outcome evidence for the target
  // the candidate's own claims, then its classes' claims, on the target or a composite of it
  MATCH (t:KG_cardio) USING INDEX SEEK t:KG_cardio(id) WHERE t.id IN $outcome_ids
  MATCH (c)-[r:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(t)
  WHERE r.validated
  RETURN 'outcome_evidence' AS section, [r.assertion_id] AS chain, [r] AS rels
  UNION
  UNWIND classes AS k
  MATCH (t:KG_cardio) USING INDEX SEEK t:KG_cardio(id) WHERE t.id IN $outcome_ids
  MATCH (k)-[r:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN]->(t)
  WHERE c.id IN r.member_ids AND r.validated
  RETURN 'outcome_evidence' AS section, [r.assertion_id] AS chain, [r] AS rels
  UNION
  // section adverse_effects: Adverse effects
  MATCH (c)-[r:MAY_CAUSE_ADVERSE_EFFECT]->(:KG_cardio)
  RETURN 'adverse_effects' AS section, [r.assertion_id] AS chain, [r] AS rels
  UNION
  UNWIND classes AS k
  MATCH (k)-[r:MAY_CAUSE_ADVERSE_EFFECT]->(:KG_cardio)
  WHERE c.id IN r.member_ids
  RETURN 'adverse_effects' AS section, [r.assertion_id] AS chain, [r] AS rels
}
WITH collect({section: section, candidate_id: candidate_id, assertion_ids: chain}) AS paths, collect(rels) AS rels
// each assertion once, reached from its direct edge: the edge's ends are its subject and object
CALL (rels) {
  UNWIND rels AS path_rels
  UNWIND path_rels AS r
  WITH DISTINCT r
  MATCH (a:KG_cardio {id: r.assertion_id}) USING INDEX SEEK a:KG_cardio(id)
  WITH a, startNode(r) AS s, endNode(r) AS o
  OPTIONAL MATCH (e:KG_cardio)-[l:SUPPORTS]->(a)
  WITH a, s, o, e, l ORDER BY e.id
  WITH a, s, o, collect(e {.id, recommendation_class: l.recommendation_class, level_of_evidence: l.level_of_evidence}) AS evidence, collect(e) AS supporting
  RETURN collect(a {.*, subject: s {.id, .name, .category}, object: o {.id, .name, .category}, evidence: evidence}) AS assertions, collect(supporting) AS supporting
}
// each evidence source once, however many of the assertions cite it: an assertion's `evidence`
// names it by id, with its link's properties
CALL (supporting) {
  UNWIND supporting AS cited
  UNWIND cited AS e
  WITH DISTINCT e
  RETURN collect(e {.*}) AS sources
}
RETURN paths, assertions, sources
