// Extraction query for domain 'afib', condition C4 (integrated) (generated; do not edit).
// The causal chains labelled with evidential and provenance status, with the indication, safety (adverse effects, contraindications, interactions) and uncertainty context.
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
MATCH (c:KG_afib {id: candidate_id}) USING INDEX SEEK c:KG_afib(id)
// the candidate's classes, read once: each class-level branch below starts from them
WITH candidate_id, c, [(c)-[:MEMBER_OF]->(k:KG_afib) | k] AS classes
CALL (c, classes) {
  // section causal_chains: Causal pathways with provenance
  // validated and unvalidated chains of at most 6 steps, no node twice, from one expansion;
  // the first 12 of each by strength DESC, size(chain), chain
  MATCH (t:KG_afib {id: $target_id}) USING INDEX SEEK t:KG_afib(id)
  CALL (c, t, classes) {
    MATCH p = (c)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN|PARTICIPATES_IN|TARGETS*1..6]->(t)
    WHERE all(n IN nodes(p) WHERE single(m IN nodes(p) WHERE m = n))
    RETURN relationships(p) AS rels
    UNION
    // a class-level claim that applies to the candidate as the first step
    UNWIND classes AS k
    MATCH (k)-[first:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN|PARTICIPATES_IN|TARGETS]->(x:KG_afib)
    WHERE c.id IN first.member_ids
    MATCH p = (x)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN|PARTICIPATES_IN|TARGETS*0..5]->(t)
    WHERE all(n IN [c] + nodes(p) WHERE single(m IN [c] + nodes(p) WHERE m = n))
    RETURN [first] + relationships(p) AS rels
  }
  WITH rels, [r IN rels | r.assertion_id] AS chain, [r IN rels | $evidence_rank[r.evidence_level]] AS ranks
  WITH rels, chain, reduce(w = head(ranks), x IN ranks | CASE WHEN x < w THEN x ELSE w END) AS strength, all(r IN rels WHERE r.validated) AS grp
  ORDER BY strength DESC, size(chain), chain
  WITH grp, collect({chain: chain, rels: rels}) AS ranked
  WHERE grp IS NOT NULL  // as both groups' filters: a step without a validation status is in neither
  UNWIND ranked[..12] AS top
  RETURN 'causal_chains' AS section, top.chain AS chain, top.rels AS rels
  UNION
  // section outcome_evidence: Outcome evidence for the target, including null results
  // the candidate's own claims, then its classes' claims, on the target or a composite of it
  MATCH (t:KG_afib) USING INDEX SEEK t:KG_afib(id) WHERE t.id IN $outcome_ids
  MATCH (c)-[r:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN|HAS_NO_EFFECT_ON]->(t)
  RETURN 'outcome_evidence' AS section, [r.assertion_id] AS chain, [r] AS rels
  UNION
  UNWIND classes AS k
  MATCH (t:KG_afib) USING INDEX SEEK t:KG_afib(id) WHERE t.id IN $outcome_ids
  MATCH (k)-[r:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN|HAS_NO_EFFECT_ON]->(t)
  WHERE c.id IN r.member_ids
  RETURN 'outcome_evidence' AS section, [r.assertion_id] AS chain, [r] AS rels
  UNION
  // section indications: Indications
  MATCH (c)-[r:INDICATED_FOR]->(:KG_afib)
  RETURN 'indications' AS section, [r.assertion_id] AS chain, [r] AS rels
  UNION
  UNWIND classes AS k
  MATCH (k)-[r:INDICATED_FOR]->(:KG_afib)
  WHERE c.id IN r.member_ids
  RETURN 'indications' AS section, [r.assertion_id] AS chain, [r] AS rels
  UNION
  // section safety: Safety
  MATCH (c)-[r:CONTRAINDICATED_FOR|INTERACTS_WITH|MAY_CAUSE_ADVERSE_EFFECT]->(:KG_afib)
  RETURN 'safety' AS section, [r.assertion_id] AS chain, [r] AS rels
  UNION
  UNWIND classes AS k
  MATCH (k)-[r:CONTRAINDICATED_FOR|INTERACTS_WITH|MAY_CAUSE_ADVERSE_EFFECT]->(:KG_afib)
  WHERE c.id IN r.member_ids
  RETURN 'safety' AS section, [r.assertion_id] AS chain, [r] AS rels
  UNION
  // section effect_modifiers: Effect modifiers in this patient's context
  UNWIND $context_ids AS context_id
  MATCH (m:KG_afib {id: context_id}) USING INDEX SEEK m:KG_afib(id)
  MATCH (m)-[r:REQUIRES_DOSE_ADJUSTMENT_IN]->(c)
  RETURN 'effect_modifiers' AS section, [r.assertion_id] AS chain, [r] AS rels
  UNION
  // a modifier of a class the candidate belongs to, as the class's members inherit it
  UNWIND classes AS k
  UNWIND $context_ids AS context_id
  MATCH (m:KG_afib {id: context_id}) USING INDEX SEEK m:KG_afib(id)
  MATCH (m)-[r:REQUIRES_DOSE_ADJUSTMENT_IN]->(k)
  WHERE c.id IN r.member_ids
  RETURN 'effect_modifiers' AS section, [r.assertion_id] AS chain, [r] AS rels
}
WITH collect({section: section, candidate_id: candidate_id, assertion_ids: chain}) AS paths, collect(rels) AS rels
// each assertion once, reached from its direct edge: the edge's ends are its subject and object
CALL (rels) {
  UNWIND rels AS path_rels
  UNWIND path_rels AS r
  WITH DISTINCT r
  MATCH (a:KG_afib {id: r.assertion_id}) USING INDEX SEEK a:KG_afib(id)
  WITH a, startNode(r) AS s, endNode(r) AS o
  OPTIONAL MATCH (e:KG_afib)-[l:SUPPORTS]->(a)
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
