"""Node mapping: every method on a small reference, with known decisions; the embedding
method on a tiny model2vec model the test builds itself; model verification through a stage."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from harness.probe.embeddings import EmbeddingModel
from harness.probe.mapping import Mapper
from harness.probe.reference import Entity, ReferenceGraph
from kgbench.errors import UserError

ENTITIES = [
    Entity("OUT_1", "Myocardial infarction", "ClinicalOutcome", ("MI", "heart infarct"), ("MESH:D009203",)),
    Entity("DIS_1", "Essential hypertension", "Disease", ("high blood pressure",), ()),
    Entity("OUT_2", "Stroke", "ClinicalOutcome", (), ()),
    Entity("DIS_2", "Heart failure with reduced ejection fraction", "Disease", ("HF",), ()),
    Entity("DIS_3", "Heart failure with preserved ejection fraction", "Disease", ("HF",), ()),
]  # fmt: skip


@pytest.fixture
def reference() -> ReferenceGraph:
    return ReferenceGraph({e.id: e for e in ENTITIES}, {("DIS_1", "OUT_2")})


def decide(reference, names, threshold=90.0, embedding=None, emb_threshold=0.9):
    mapper = Mapper(reference, threshold, embedding, emb_threshold)
    out = mapper.map_names(names)
    return {d.name: d for d in out.values()}


def test_exact_name_synonym_and_xref(reference):
    d = decide(reference, ["myocardial  INFARCTION", "High blood pressure", "mesh:d009203"])
    assert (d["myocardial  INFARCTION"].entity_id, d["myocardial  INFARCTION"].method) == (
        "OUT_1",
        "exact_name",
    )
    assert (d["High blood pressure"].entity_id, d["High blood pressure"].method) == (
        "DIS_1",
        "synonym",
    )
    assert (d["mesh:d009203"].entity_id, d["mesh:d009203"].method) == ("OUT_1", "xref")
    assert all(x.score == 100.0 for x in d.values())


def test_fuzzy_above_and_below_the_threshold(reference):
    d = decide(reference, ["Myocardial infarctions", "Acute stroke"], threshold=90)
    hit = d["Myocardial infarctions"]
    assert (hit.entity_id, hit.method) == ("OUT_1", "fuzzy") and 90 <= hit.score < 100
    miss = d["Acute stroke"]  # token_sort_ratio 66.7 to 'stroke'
    assert miss.entity_id is None and miss.method == "unmapped"
    # the same name with a lower declared threshold maps
    low = decide(reference, ["Acute stroke"], threshold=60)["Acute stroke"]
    assert (low.entity_id, low.method, low.score) == ("OUT_2", "fuzzy", pytest.approx(66.67))
    # equal best scores for two entities ('stroke', 'high blood pressure': 46.2) map to none
    tie = decide(reference, ["Strokes and seizures"], threshold=40)["Strokes and seizures"]
    assert tie.entity_id is None and tie.method == "ambiguous"
    assert tie.candidates == ["DIS_1", "OUT_2"]


def test_ties_between_entities_are_ambiguous_never_guessed(reference):
    d = decide(reference, ["HF"])["HF"]
    assert d.entity_id is None and d.method == "ambiguous"
    assert d.candidates == ["DIS_2", "DIS_3"]


def test_one_decision_per_normal_form(reference):
    out = Mapper(reference, 90).map_names(["Stroke", "stroke", "STROKE!"])
    assert list(out) == ["stroke"] and out["stroke"].name == "Stroke"


def tiny_model(folder: Path) -> Path:
    """A real model2vec model: a word-level tokenizer and hand-set static vectors in which
    'heart attack' lies next to 'myocardial infarction' and 'brain' next to 'stroke'."""
    from model2vec import StaticModel
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.normalizers import Lowercase
    from tokenizers.pre_tokenizers import Whitespace

    axes = {
        "mi": ["heart", "attack", "myocardial", "infarction", "infarct", "mi"],
        "stroke": ["stroke", "brain", "apoplexy"],
        "bp": ["blood", "pressure", "high", "essential", "hypertension"],
        "hf": ["failure", "ejection", "fraction", "reduced", "preserved", "with", "hf"],
    }
    words = ["[UNK]", "[PAD]", *(w for ws in axes.values() for w in ws), "banana"]
    vectors = np.zeros((len(words), 5), dtype=np.float32)
    for a, (_, ws) in enumerate(axes.items()):
        for w in ws:
            vectors[words.index(w), a] = 1.0
    vectors[words.index("banana"), 4] = 1.0
    tokenizer = Tokenizer(WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    tokenizer.normalizer = Lowercase()
    StaticModel(vectors=vectors, tokenizer=tokenizer, normalize=True).save_pretrained(str(folder))
    return folder


def test_embedding_maps_what_lexical_methods_cannot(reference, tmp_path):
    model = EmbeddingModel(tiny_model(tmp_path / "tiny-e5"))
    assert model.identity["name"] == "tiny-e5" and len(model.identity["sha256"]) == 64
    d = decide(reference, ["Heart attack", "Brain apoplexy", "Banana"], embedding=model)
    assert (d["Heart attack"].entity_id, d["Heart attack"].method) == ("OUT_1", "embedding")
    assert d["Heart attack"].score == pytest.approx(1.0, abs=1e-4)
    assert (d["Brain apoplexy"].entity_id, d["Brain apoplexy"].method) == ("OUT_2", "embedding")
    assert d["Banana"].entity_id is None and d["Banana"].method == "unmapped"
    assert d["Banana"].score == pytest.approx(0.0, abs=1e-4)  # recorded, below the threshold


def test_embedding_model_folder_errors_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="not a folder"):
        EmbeddingModel(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match=r"missing tokenizer\.json"):
        EmbeddingModel(tmp_path / "empty")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "tokenizer.json").write_text("{not json")
    (broken / "model.safetensors").write_bytes(b"\x00" * 16)
    with pytest.raises(UserError, match="cannot load it"):
        EmbeddingModel(broken)
