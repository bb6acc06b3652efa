// Verify-and-revise review for domain 'afib', condition C5 (verify_revise) (generated; do not edit).
// Parameters: $subject_id, $object_id (entity ids the triplet's names were linked to).
// Directed paths of at most 3 validated assertions, shortest first.
MATCH (s:KG_afib {id: $subject_id}) USING INDEX SEEK s:KG_afib(id)
MATCH (o:KG_afib {id: $object_id}) USING INDEX SEEK o:KG_afib(id)
CALL (s, o) {
  MATCH p = (s)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN|PARTICIPATES_IN|TARGETS*1..3]->(o)
  WHERE all(r IN relationships(p) WHERE r.validated = true)
  RETURN relationships(p) AS rels, false AS via_class
  UNION
  MATCH (s)-[:MEMBER_OF]->(k:KG_afib)
  MATCH p = (k)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN|PARTICIPATES_IN|TARGETS*1..3]->(o)
  WHERE s.id IN coalesce(relationships(p)[0].member_ids, [])
    AND all(r IN relationships(p) WHERE r.validated = true)
  RETURN relationships(p) AS rels, true AS via_class
}
WITH [r IN rels | r.assertion_id] AS chain, [r IN rels | r.direction] AS directions,
     via_class
RETURN chain, directions, via_class
ORDER BY size(chain), chain
LIMIT 16
