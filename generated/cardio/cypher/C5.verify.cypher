// Verify-and-revise review for domain 'cardio', condition C5 (verify_revise) (generated; do not edit).
// Parameters: $subject_id, $object_id (entity ids the triplet's names were linked to),
// $predicate (the claimed predicate), $sign (its sign: +1, -1, or 0 when unsigned).
// One round trip: the checks of C5.verify_exact.cypher and C5.verify_path.cypher;
// the path search runs only when no assertion states the claim, over validated assertions only, and returns the
// shortest path whose composed sign is the claimed one and the shortest of the opposite sign.
MATCH (s:KG_cardio {id: $subject_id}) USING INDEX SEEK s:KG_cardio(id)
MATCH (o:KG_cardio {id: $object_id}) USING INDEX SEEK o:KG_cardio(id)
CALL (s, o) {
  CALL (s, o) {
    MATCH (s)-[r:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN|CONTRAINDICATED_FOR|HAS_NO_EFFECT_ON|INDICATED_FOR|MAY_CAUSE_ADVERSE_EFFECT|PARTICIPATES_IN|TARGETS]->(o)
    RETURN r, 'forward' AS orientation, false AS via_class
    UNION
    MATCH (o)-[r:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN|CONTRAINDICATED_FOR|HAS_NO_EFFECT_ON|INDICATED_FOR|MAY_CAUSE_ADVERSE_EFFECT|PARTICIPATES_IN|TARGETS]->(s)
    RETURN r, 'reverse' AS orientation, false AS via_class
    UNION
    MATCH (s)-[:MEMBER_OF]->(:KG_cardio)-[r:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN|CONTRAINDICATED_FOR|HAS_NO_EFFECT_ON|INDICATED_FOR|MAY_CAUSE_ADVERSE_EFFECT|PARTICIPATES_IN|TARGETS]->(o)
    WHERE s.id IN coalesce(r.member_ids, [])
    RETURN r, 'forward' AS orientation, true AS via_class
  }
  WITH r, orientation, via_class ORDER BY r.assertion_id, orientation
  RETURN collect({assertion_id: r.assertion_id, predicate: type(r), orientation: orientation,
                  via_class: via_class, direction: r.direction, validated: r.validated}) AS found
}
CALL (s, o, found) {
  WITH s, o, found
  WHERE $sign <> 0
    AND none(x IN found WHERE x.orientation = 'forward' AND x.predicate = $predicate)
  CALL (s, o) {
    MATCH p = (s)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN|PARTICIPATES_IN|TARGETS*1..3]->(o)
    WHERE all(r IN relationships(p) WHERE r.validated = true)
    RETURN relationships(p) AS rels
    UNION
    MATCH (s)-[:MEMBER_OF]->(k:KG_cardio)
    MATCH p = (k)-[:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN|PARTICIPATES_IN|TARGETS*1..3]->(o)
    WHERE s.id IN coalesce(relationships(p)[0].member_ids, [])
      AND all(r IN relationships(p) WHERE r.validated = true)
    RETURN relationships(p) AS rels
  }
  WITH [r IN rels | r.assertion_id] AS chain,
       reduce(sign = 1, r IN rels |
              sign * CASE r.direction WHEN 'decrease' THEN -1 ELSE 1 END) AS sign
  ORDER BY size(chain), chain
  WITH sign, collect(chain)[0] AS chain
  RETURN collect(CASE WHEN sign = $sign THEN chain END) AS paths,
         collect(CASE WHEN sign <> $sign THEN chain END) AS opposite
}
RETURN found, paths, opposite
