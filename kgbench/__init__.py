"""kgbench: a spec-driven benchmark compiler for causal-knowledge-graph grounding of LLMs."""

__version__ = "0.1.0"
