"""The metric panel as metrics.yaml declares it: each metric's kind, fields and options.

The fields a metric pairs are checked against the response and gold schemas of the spec, and
the per-kind options (a chain kind's reading, the unsupported-claims compatibility table) are
required exactly where the kind reads them, so the scorer never meets a half-declared metric.
"""

from __future__ import annotations

from typing import Any

from kgbench.errors import SpecError

from . import ir
from .jsonschemas import spec_fields
from .schema import suggest
from .yamlfile import YamlDoc


def parse_metrics(doc: YamlDoc) -> tuple[ir.Metric, ...]:
    out = []
    seen: set[str] = set()
    for i, m in enumerate(doc.data["metrics"]):
        if m["name"] in seen:
            raise SpecError(
                f"duplicate metric '{m['name']}'", doc.location(["metrics", i, "name"], "name")
            )
        seen.add(m["name"])
        for key, allowed in (
            ("response_field", spec_fields("response.yaml", "ModelResponse")),
            ("gold_field", spec_fields("scenario.yaml", "Gold")),
        ):
            if m[key] not in allowed:
                raise SpecError(
                    f"unknown {key.replace('_', ' ')} '{m[key]}'"
                    + suggest(m[key], allowed)
                    + "; expected one of "
                    + ", ".join(allowed),
                    doc.location(["metrics", i, key], key),
                )
        out.append(
            ir.Metric(
                name=m["name"],
                title=m["title"],
                kind=m["kind"],
                response_field=m["response_field"],
                gold_field=m["gold_field"],
                defined_when=m["defined_when"],
                higher_is_better=bool(m["higher_is_better"]),
                binary=bool(m.get("binary")),
                description=" ".join(str(m["description"]).split()),
                reading=_metric_reading(m, doc, i),
                claim_support=_claim_support(m, doc, i),
            )
        )
    return tuple(out)


CHAIN_KINDS = ("chain_precision", "chain_recall", "chain_f1")


def _metric_reading(m: dict[str, Any], doc: YamlDoc, i: int) -> str | None:
    """A chain kind's reading (required there, and meaningless elsewhere)."""
    reading = m.get("reading")
    if (m["kind"] in CHAIN_KINDS) != (reading is not None):
        raise SpecError(
            f"metric '{m['name']}': `reading` is required for the chain kinds "
            f"({', '.join(CHAIN_KINDS)}) and allowed for no other",
            doc.location(["metrics", i], "reading"),
        )
    return None if reading is None else str(reading)


def _claim_support(m: dict[str, Any], doc: YamlDoc, i: int) -> ir.ClaimSupport | None:
    """The unsupported_claims kind's compatibility table (required there, nowhere else)."""
    table = m.get("claim_support")
    if (m["kind"] == "unsupported_claims") != (table is not None):
        raise SpecError(
            f"metric '{m['name']}': `claim_support` is required for the unsupported_claims "
            "kind and allowed for no other",
            doc.location(["metrics", i], "claim_support"),
        )
    if table is None:
        return None
    kinds = []
    for k, kind in enumerate(table["kinds"]):
        words = tuple(" ".join(str(w).lower().split()) for w in kind["words"])
        if not all(words):
            raise SpecError(
                f"metric '{m['name']}': claim kind '{kind['name']}' has an empty word",
                doc.location(["metrics", i, "claim_support", "kinds", k, "words"], "words"),
            )
        kinds.append(
            ir.ClaimKind(
                name=str(kind["name"]),
                words=words,
                supported_by=tuple(
                    ir.ClaimSupporter(role=str(s["role"]), direction=s.get("direction"))
                    for s in kind["supported_by"]
                ),
            )
        )
    return ir.ClaimSupport(kinds=tuple(kinds))
