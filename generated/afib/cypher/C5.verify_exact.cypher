// Verify-and-revise review for domain 'afib', condition C5 (verify_revise) (generated; do not edit).
// Parameters: $subject_id, $object_id (entity ids the triplet's names were linked to).
// Every assertion between the two, both ways, and the class-level claims that apply to the subject.
MATCH (s:KG_afib {id: $subject_id}) USING INDEX SEEK s:KG_afib(id)
MATCH (o:KG_afib {id: $object_id}) USING INDEX SEEK o:KG_afib(id)
CALL (s, o) {
  MATCH (s)-[r:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN|CONTRAINDICATED_FOR|HAS_NO_EFFECT_ON|INDICATED_FOR|MAY_CAUSE_ADVERSE_EFFECT|PARTICIPATES_IN|TARGETS]->(o)
  RETURN r, 'forward' AS orientation, false AS via_class
  UNION
  MATCH (o)-[r:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN|CONTRAINDICATED_FOR|HAS_NO_EFFECT_ON|INDICATED_FOR|MAY_CAUSE_ADVERSE_EFFECT|PARTICIPATES_IN|TARGETS]->(s)
  RETURN r, 'reverse' AS orientation, false AS via_class
  UNION
  MATCH (s)-[:MEMBER_OF]->(:KG_afib)-[r:CAUSES_DECREASE_IN|CAUSES_INCREASE_IN|CONTRAINDICATED_FOR|HAS_NO_EFFECT_ON|INDICATED_FOR|MAY_CAUSE_ADVERSE_EFFECT|PARTICIPATES_IN|TARGETS]->(o)
  WHERE s.id IN coalesce(r.member_ids, [])
  RETURN r, 'forward' AS orientation, true AS via_class
}
RETURN r.assertion_id AS assertion_id, type(r) AS predicate, orientation, via_class,
       r.direction AS direction, r.validated AS validated
ORDER BY assertion_id, orientation
