"""Verify-and-revise grounding (condition C5, after KGARevion, arXiv:2410.04660 section 3).

Generate (the model proposes triplets per candidate), Review (each triplet's names are linked
to domain entities and checked with the compiled, parameterised review queries), Revise
(refuted triplets go back with the graph's correction, at most r rounds), Answer (the usual
JSON contract, given only the verified triplets and their assertion ids).

- `settings`: the compiled C5 block of conditions.json, read through the contract.
- `review`: linking, screening of hostile triplets, verification against Neo4j.
- `agent`: the multi-step driver through the runner's stages; the run folder's chain log.
- `responders`: reference generator, reviser and answerer, so every branch runs offline.
"""
