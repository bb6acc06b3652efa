"""Which semantic-version bump a new release needs relative to the previous one.

Readers of a release parse its records by the published schemas, so the bump follows what a
change does to them:
  major  a field is removed or renamed (a rename is a removal plus an addition), retyped,
         newly required, no longer required, newly nullable, loses enum values or changes
         its pattern: an existing reader may break;
  minor  an optional field or an enum value is added: existing readers keep working;
  patch  the records change (content fixes, added or removed scenarios), the shipped graph
         (kgx/) changes, or the schemas change in ways no reader sees (descriptions).
Identical content needs no release at all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from kgbench.untrusted import lines as untrusted_lines
from kgbench.untrusted import parse_json_or_none

from ..gold_layout import BUMPS, GOLD, GOLD_SCHEMA, GRAPH_DIR, SCENARIO_SCHEMA, SCENARIOS


@dataclass
class Assessment:
    bump: str = "none"
    reasons: list[str] = field(default_factory=list)

    def need(self, bump: str, reason: str) -> None:
        if BUMPS.index(bump) > BUMPS.index(self.bump):
            self.bump = bump
        self.reasons.append(f"{reason} ({bump})")


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Follow $ref and unwrap `anyOf: [X, null]`; returns the node and whether null is allowed."""
    nullable = False
    for _ in range(20):
        if "$ref" in node:
            node = defs[node["$ref"].split("/")[-1]]
            continue
        branches = node.get("anyOf")
        if branches:
            non_null = [b for b in branches if b.get("type") != "null"]
            nullable = nullable or len(non_null) < len(branches)
            if len(non_null) == 1:
                node = non_null[0]
                continue
        break
    return node, nullable


def _types(node: dict[str, Any]) -> tuple[set[str], bool]:
    t = node.get("type")
    types = {t} if isinstance(t, str) else set(t or ())
    return types - {"null"}, "null" in types


def flatten(schema: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Field path -> what a reader relies on (types, nullability, required, enum, pattern)."""
    defs = schema.get("$defs", {})
    out: dict[str, dict[str, Any]] = {}

    def walk(node: dict[str, Any], path: str, required: bool, depth: int) -> None:
        node, nullable = _resolve(node, defs)
        types, null_type = _types(node)
        if not types and "enum" in node:
            types = {"string"}
        out[path] = {
            "types": sorted(types),
            "nullable": nullable or null_type,
            "required": required,
            "enum": sorted(map(str, node["enum"])) if "enum" in node else None,
            "pattern": node.get("pattern"),
        }
        if depth > 12:
            return
        req = set(node.get("required", ()))
        for name, sub in (node.get("properties") or {}).items():
            walk(sub, f"{path}.{name}" if path else name, name in req, depth + 1)
        if "items" in node and isinstance(node["items"], dict):
            walk(node["items"], f"{path}[]", True, depth + 1)

    walk(schema, "", True, 0)
    return out


def _parent(path: str) -> str | None:
    """The enclosing field of a flattened path ('a.b' -> 'a', 'a[]' -> 'a'); None at the top."""
    if path.endswith("[]"):
        return path[:-2]
    return path.rsplit(".", 1)[0] if "." in path else None


def compare_schemas(name: str, old: dict[str, Any], new: dict[str, Any], into: Assessment) -> None:
    before, after = flatten(old), flatten(new)
    for path in sorted(before.keys() - after.keys()):
        into.need("major", f"{name}: field '{path}' was removed or renamed")
    added = after.keys() - before.keys()
    for path in sorted(added):
        if _parent(path) in added:
            continue  # inside a new field: what a reader sees is the new field itself
        if after[path]["required"]:
            into.need("major", f"{name}: new required field '{path}'")
        else:
            into.need("minor", f"{name}: new optional field '{path}'")
    for path in sorted(before.keys() & after.keys()):
        a, b = before[path], after[path]
        label = f"{name}: field '{path or '(root)'}'"
        if a["types"] != b["types"]:
            into.need("major", f"{label} changed type {a['types']} -> {b['types']}")
        if not a["nullable"] and b["nullable"]:
            into.need("major", f"{label} may now be null")
        elif a["nullable"] and not b["nullable"]:
            into.need("minor", f"{label} may no longer be null")
        if not a["required"] and b["required"]:
            into.need("major", f"{label} is now required")
        elif a["required"] and not b["required"]:
            into.need("major", f"{label} is no longer required")
        if a["enum"] is not None or b["enum"] is not None:
            removed = set(a["enum"] or ()) - set(b["enum"] or ())
            added = set(b["enum"] or ()) - set(a["enum"] or ())
            if removed:
                into.need("major", f"{label} lost values {sorted(removed)}")
            if added:
                into.need("minor", f"{label} gained values {sorted(added)}")
        if a["pattern"] != b["pattern"]:
            into.need("major", f"{label} changed its pattern")


def _records(data: bytes) -> dict[str, str]:
    out = {}
    for n, line in untrusted_lines(data.decode("utf-8", errors="replace")):
        if line.strip():
            rec = parse_json_or_none(line)
            if not isinstance(rec, dict):
                rec = {"scenario_id": f"(unreadable line {n})"}
            out[str(rec.get("scenario_id"))] = json.dumps(rec, sort_keys=True)
    return out


def compare_records(name: str, old: bytes, new: bytes, into: Assessment) -> None:
    if old == new:
        return
    a, b = _records(old), _records(new)
    changed = sum(1 for k in a.keys() & b.keys() if a[k] != b[k])
    added, removed = len(b.keys() - a.keys()), len(a.keys() - b.keys())
    parts = [
        f"{n} {what}"
        for n, what in ((changed, "changed"), (added, "added"), (removed, "removed"))
        if n
    ]
    into.need("patch", f"{name}: records " + (", ".join(parts) or "reformatted"))


def assess(old_files: dict[str, bytes], new_files: dict[str, bytes]) -> Assessment:
    """The bump needed to go from one release's data files to another's."""
    out = Assessment()
    for rel in (SCENARIO_SCHEMA, GOLD_SCHEMA):
        if old_files[rel] != new_files[rel]:
            seen = len(out.reasons)
            old_schema = parse_json_or_none(old_files[rel].decode("utf-8", errors="replace"))
            new_schema = parse_json_or_none(new_files[rel].decode("utf-8", errors="replace"))
            compare_schemas(rel, old_schema or {}, new_schema or {}, out)
            if len(out.reasons) == seen:
                out.need("patch", f"{rel}: changed without affecting readers")
    for rel in (SCENARIOS, GOLD):
        compare_records(rel, old_files[rel], new_files[rel], out)
    old_graph, new_graph = _graph_files(old_files), _graph_files(new_files)
    if old_graph != new_graph:  # the graph is data of the release: a change is a new release
        if not old_graph:
            out.need("patch", f"the release now ships its graph ({GRAPH_DIR}/)")
        else:
            changed = sorted(set(old_graph) ^ set(new_graph)) or sorted(
                p for p in new_graph if old_graph[p] != new_graph[p]
            )
            out.need("patch", f"the graph changed ({', '.join(changed)})")
    return out


def _graph_files(files: dict[str, bytes]) -> dict[str, bytes]:
    return {p: data for p, data in files.items() if p.startswith(f"{GRAPH_DIR}/")}
