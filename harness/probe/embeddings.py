"""Sentence embeddings for node mapping, from a static embedding model the user points to.

The seed mapped names with e5 embeddings; kgbench loads model2vec static models (a folder
with config.json, tokenizer.json and model.safetensors, e.g. one distilled from e5 with
model2vec's own tools): no torch, no GPU, milliseconds per thousand names. Loading is
offline (a local folder only; nothing is ever downloaded), and the model's identity (folder
name and the sha256 of its weights) is recorded beside every decision it makes.
"""

from __future__ import annotations

import hashlib
import os
from functools import cached_property
from pathlib import Path

import numpy as np

from kgbench.errors import UserError

REQUIRED_FILES = ("tokenizer.json", "model.safetensors")


class EmbeddingModel:
    """A loaded model2vec StaticModel; `encode` returns unit-length rows."""

    def __init__(self, path: Path) -> None:
        path = Path(path)
        if not path.is_dir():
            raise UserError(f"--embedding-model {path}: not a folder (a model2vec model folder)")
        missing = [f for f in REQUIRED_FILES if not (path / f).is_file()]
        if missing:
            raise UserError(
                f"--embedding-model {path}: missing {', '.join(missing)}; expected a model2vec "
                "model folder (config.json, tokenizer.json, model.safetensors)"
            )
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from model2vec import StaticModel

        try:
            self.model = StaticModel.from_pretrained(str(path), force_download=False)
        except Exception as exc:  # a corrupt folder is the user's input, not our bug
            raise UserError(
                f"--embedding-model {path}: cannot load it: {type(exc).__name__}: {exc}"
            ) from None
        self.path = path

    @cached_property
    def identity(self) -> dict[str, str]:
        digest = hashlib.sha256((self.path / "model.safetensors").read_bytes()).hexdigest()
        return {"name": self.path.name, "sha256": digest}

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.model.dim), dtype=np.float32)
        vectors = np.asarray(
            self.model.encode(texts, use_multiprocessing=False), dtype=np.float32
        ).reshape(len(texts), -1)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1.0, norms)
