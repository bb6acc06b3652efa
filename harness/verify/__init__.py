"""Verify-and-revise grounding (condition C5, after KGARevion, arXiv:2410.04660 section 3).

Generate (the model proposes triplets per candidate), Review (each triplet's names are linked
to domain entities and checked with the compiled, parameterised review queries), Revise
(refuted triplets go back with the graph's correction, at most r rounds), Answer (the usual
JSON contract, given only the verified triplets and their assertion ids).

- `graph_check`: the compiled C5 block of conditions.json (`VerifySettings`, read through the
  contract) and review: linking, screening of hostile triplets, verification against Neo4j.
- `steps`: the generate and revise prompts and strict answer schemas, one line per assertion.
- `chains`: a triplet's history, what the generate and revise answers may say, the summary
  and `kgbench explain-run`'s rendering of one chain.
- `verified_context`: the verified triplets as an extracted context and the answer's block.
- `agent`: the multi-step driver through the runner's stages (`kgbench verify`).
- `responders`: reference generator, reviser and answerer, so every branch runs offline.
- `cli`: `kgbench verify` and `kgbench explain-run`.
"""
