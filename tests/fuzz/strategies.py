"""Input generators shared by the fuzz targets: text near what each reader expects, and
mutations of the real files (a byte changed, a run duplicated, a tail cut)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

# Characters that matter to the readers: CSV quoting and separators, YAML indicators,
# JSON punctuation, code fences, control characters, a BOM, lone surrogates, other digits.
SPECIAL = [
    *",\"'\n\r\t |:-&*!%@`#[]{}<>?\\\x00\x1b\u00e9\ufeff\u202e\uff12",
    "```",
    "```json",
    "\\ud83d",
    "&a [*a, *a]",
    "- ",
    "ASR_0001",
    "DRG_0001",
    "CLS_001",
    "Lisinopril",
    "ACE inhibitor",
    "null",
    "true",
    "1e999",
    "NaN",
]
near_text = st.lists(st.one_of(st.sampled_from(SPECIAL), st.text(max_size=12)), max_size=60).map(
    "".join
)


@st.composite
def mutated(draw: st.DrawFn, original: bytes) -> bytes:
    """`original` with a few random edits: replace, insert, delete, duplicate, truncate."""
    data = bytearray(original)
    for _ in range(draw(st.integers(1, 6))):
        op = draw(st.sampled_from(["replace", "insert", "delete", "duplicate", "truncate"]))
        pos = draw(st.integers(0, max(0, len(data) - 1)))
        if op == "replace" and data:
            data[pos] = draw(st.integers(0, 255))
        elif op == "insert":
            piece = draw(st.sampled_from(SPECIAL)).encode("utf-8", "surrogatepass")
            data[pos:pos] = piece
        elif op == "delete":
            del data[pos : pos + draw(st.integers(1, 40))]
        elif op == "duplicate":
            end = min(len(data), pos + draw(st.integers(1, 200)))
            data[pos:pos] = data[pos:end] * draw(st.integers(1, 50))
        elif op == "truncate":
            del data[pos:]
    return bytes(data)


scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), near_text)
json_value = st.recursive(
    scalar,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6), st.dictionaries(near_text, inner, max_size=6)
    ),
    max_leaves=15,
)
FIELDS = (
    "recommended_intervention",
    "causal_path_assertion_ids",
    "adverse_effect_assertion_ids",
    "contraindication_assertion_ids",
    "supporting_evidence_ids",
    "claims",
    "uncertainty_flag",
    "rationale",
)


@st.composite
def contract_like(draw: st.DrawFn) -> dict[str, Any]:
    chosen = draw(st.lists(st.sampled_from(FIELDS), unique=True))
    out: dict[str, Any] = {f: draw(json_value) for f in chosen}
    if "claims" in out and draw(st.booleans()):
        out["claims"] = [
            {"subject": draw(near_text), "predicate": draw(near_text), "object": draw(near_text)}
            for _ in range(draw(st.integers(0, 5)))
        ]
    return out


@st.composite
def model_answer(draw: st.DrawFn) -> str:
    """Raw text a model might send: JSON, cut JSON, fenced, wrapped in prose, or anything."""
    obj = draw(st.one_of(contract_like(), json_value))
    dumped = json.dumps(obj, ensure_ascii=draw(st.booleans()))
    kind = draw(st.sampled_from(["whole", "cut", "fenced", "prose", "text", "storm"]))
    if kind == "cut":
        return dumped[: draw(st.integers(0, len(dumped)))]
    if kind == "fenced":
        return f"```json{draw(near_text)}\n{dumped}\n```{draw(near_text)}"
    if kind == "prose":
        return draw(near_text) + dumped + draw(near_text)
    if kind == "text":
        return draw(near_text)
    if kind == "storm":
        return draw(st.sampled_from(["{", "[", "```", "}", "\\ud83d", " "])) * draw(
            st.integers(0, 5000)
        )
    return dumped
