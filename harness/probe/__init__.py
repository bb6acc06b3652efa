"""The graph-generation probe (MedG-KRP): model-built causal graphs scored against the domain.

A model grows a causal graph around each root concept of a domain ("what does X cause",
"what causes X", up to the declared depth), then checks candidate pairs for missing edges;
every step runs through the model runner as a stage (harness.runner.stage), so it is cached,
resumable after a crash and can use the Batch API. Generated concept names are mapped to the
domain's entities (exact name, synonym or xref; fuzzy; optionally an embedding model and a
model verification), every decision recorded, and the graphs are scored against the compiled
domain graph with the seed's path rule, exact edges and the curve over k.

Module map: compiled (generated/<d>/probe/), names (normalising and screening names), graph
(a generated graph and its provenance), expansion (the requests of each step and how answers
grow the graph), reference (the domain graph), distances (bounded path lengths, batched),
mapping and embeddings (node mapping), responders (offline oracle and noisy responders),
scoring, ratings (human review sheets and ratings), run (the whole `kgbench probe`), cli.
"""
