"""The one judge of a model's answer: read it, check it against its response schema, and say
how much of it can be scored (issue 32 item 3).

The runner (a record's `parse_status`, `parse_ok`, `schema_ok`, `schema_errors`) and the scorer
(the fields it scores) both call `judge` with a `Contract` compiled once from the schema, so
an answer has one verdict. The contract is a small interpreter of the JSON Schema subset the
compiled schemas use, not a general validator: jsonschema cost the scorer about 4x in
throughput (170 µs an answer). Being small, it must not pass for more than it is: a schema
using a keyword or shape it does not interpret is refused when the contract is built
(`ContractError`, naming the schema and the JSON pointer), never silently ignored, and
tests/evaluation/test_judge.py holds its `schema_ok` to jsonschema's Draft 2020-12 verdict on
a corpus of hostile answers.

What it interprets: an object root with `properties`, `required` and a boolean
`additionalProperties`; properties of type string (optionally an `enum` of strings), boolean,
number, integer, each optionally `[T, "null"]`; arrays (`minItems`, `maxItems`) of strings or
of closed-or-open objects whose properties are such scalars, all of them required; `$ref` to
`#/$defs/...`; and the annotations (`description`, `title`, ...).

Parse statuses (`PARSE_STATUSES`, declared with the record in kgbench.contract):
  ok            the whole answer is a JSON object, every contract field of its type
  schema_error  the whole answer is a JSON object; fields missing or mistyped count as absent
  extracted     a JSON object found inside other text (a code fence, prose), scored as read
  unparseable   no JSON object at all (prose, cut-off JSON, an array): nothing to score

Parsing is linear in the answer (no backtracking regular expression), nesting is bounded
(`MAX_DEPTH`), and a number Python will not convert is "not JSON", so no answer can make the
judge slow, deep or crash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from operator import itemgetter
from typing import Any, NamedTuple

from kgbench.contract import PARSE_STATUSES as PARSE_STATUSES  # re-exported: the verdicts
from kgbench.errors import Location, UserError
from kgbench.io import canonical_json, sha256_text
from kgbench.untrusted import MAX_DEPTH, ParseError, parse_json

MAX_PROBLEMS = 10
FENCE = "```"
MAX_FENCED_BLOCKS = 3

# Keywords that say nothing about validity (JSON Schema annotations), accepted anywhere.
ANNOTATIONS = frozenset(
    {"description", "title", "$comment", "examples", "default", "$schema", "$id", "deprecated"}
)
SCALARS = ("string", "boolean", "number", "integer")


class ContractError(UserError):
    """A response schema the judge cannot interpret exactly (refused, never half-read)."""


# --- the compiled contract ----------------------------------------------------------------


def _scalar_ok(kind: str, value: Any) -> bool:
    """Draft 2020-12's type check for one scalar kind (bool is not a number; an integer is
    a whole number, 1.0 included)."""
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind == "number":
        return isinstance(value, (int, float))
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


SCALAR_PROBLEM = {
    "string": "expected a string",
    "boolean": "expected true or false",
    "number": "expected a number",
    "integer": "expected an integer",
}


@dataclass(frozen=True)
class KeyRule:
    """One key of an object inside a list (a claim's subject, a triplet's index)."""

    name: str
    kind: str  # one of SCALARS
    nullable: bool = False
    enum: frozenset[str] | None = None

    def ok(self, value: Any) -> bool:
        if value is None and self.nullable:
            return True
        if not _scalar_ok(self.kind, value):
            return False
        return self.enum is None or value in self.enum


@dataclass(frozen=True)
class FieldRule:
    """The contract type of one response field: a scalar, a list of strings, or a list of
    objects whose keys are all required scalars (claims, triplets)."""

    kind: str  # one of SCALARS | "string_list" | "object_list"
    keys: tuple[str, ...] = ()
    nullable: bool = False  # null is a value (an abstaining recommendation)
    enum: frozenset[str] | None = None
    key_rules: tuple[KeyRule, ...] = ()
    """Per key of an object_list item; () means every key is a plain string (the fast path)."""
    closed_items: bool = False
    """An object_list item may hold no key but `keys` (additionalProperties: false)."""
    min_items: int = 0
    max_items: int | None = None

    def clean(self, value: Any) -> tuple[Any, str | None]:
        """The value if it has this type (list items of another type dropped), else None;
        with the problem, None when the value is valid as the schema says."""
        if value is None and self.nullable:
            return None, None
        # the common kinds first, inline: this runs for every field of every answer
        kind = self.kind
        if kind == "string":
            ok = isinstance(value, str)
        elif kind == "string_list" or kind == "object_list":
            if not isinstance(value, list):
                return None, "expected a list"
            if kind == "string_list":
                kept: list[Any] = [v for v in value if isinstance(v, str)]
                extra = 0
            else:
                kept, extra = self._objects(value)
            if len(kept) != len(value):
                return kept, f"{len(value) - len(kept)} item(s) of the wrong shape dropped"
            if extra:
                return kept, f"{extra} item(s) with fields not in the contract"
            if (self.min_items and len(value) < self.min_items) or (
                self.max_items is not None and len(value) > self.max_items
            ):
                return kept, f"{len(value)} items, outside {self.min_items}..{self.max_items or ''}"
            return kept, None
        elif kind == "boolean":
            ok = isinstance(value, bool)
        else:
            ok = _scalar_ok(kind, value)
        if not ok:
            return None, SCALAR_PROBLEM[kind]
        if self.enum is not None and value not in self.enum:
            return None, "not one of the allowed values"
        return value, None

    def _objects(self, value: list[Any]) -> tuple[list[dict[str, Any]], int]:
        """The items of `value` that are objects with a valid value under each key, reduced to
        those keys, and how many kept items had other keys too (a problem when items are
        closed). This runs for every claim of every answer, so with plain string keys the
        check is two C calls per item (the keys' values at once; `str.join`, which takes
        strings only), no frame per key."""
        keys, n = self.keys, len(self.keys)
        kept: list[dict[str, Any]] = []
        extra = 0
        if self.key_rules:
            for v in value:
                if isinstance(v, dict) and all(
                    r.name in v and r.ok(v[r.name]) for r in self.key_rules
                ):
                    kept.append({k: v[k] for k in keys})
                    extra += len(v) != n
        elif n < 2:  # itemgetter of one key returns the value itself, not a tuple
            for v in value:
                if isinstance(v, dict) and all(isinstance(v.get(k), str) for k in keys):
                    kept.append({k: v[k] for k in keys})
                    extra += len(v) != n
        else:
            get = _getter(keys)
            for v in value:
                if isinstance(v, dict):
                    try:
                        vals = get(v)
                        "".join(vals)  # TypeError unless every value is a str
                    except (KeyError, TypeError):
                        continue
                    kept.append(dict(zip(keys, vals, strict=True)))
                    extra += len(v) != n
        return kept, (extra if self.closed_items else 0)


@cache
def _getter(keys: tuple[str, ...]) -> itemgetter:
    return itemgetter(*keys)


@dataclass(frozen=True)
class Contract:
    """A response schema compiled once (`compile_contract`): one rule per field."""

    fields: dict[str, FieldRule]
    required: tuple[str, ...]
    closed: bool = True
    digest: str = ""
    """sha256 of the schema's canonical JSON: which schema a recorded judgement was made under."""
    exact: bool = field(default=False, compare=False)
    """An answer judged "ok" equals its cleaned fields (closed root, closed object items), so a
    recorded "ok" answer is scored as it stands, without cleaning it again."""

    def clean(self, obj: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """The contract fields that have their type; problems, as short fixed messages (none
        exactly when the object is valid against the schema)."""
        out: dict[str, Any] = {}
        problems: list[str] = []
        for name, rule in self.fields.items():
            if name not in obj:
                if name in self.required:
                    problems.append(f"missing field '{name}'")
                continue
            value, problem = rule.clean(obj[name])
            if problem:
                problems.append(f"field '{name}': {problem}")
            if value is not None or (rule.nullable and obj[name] is None):
                out[name] = value
        if self.closed:
            extra = len(obj.keys() - self.fields.keys())
            if extra:
                problems.append(f"{extra} field(s) not in the contract")
        return out, problems


def compile_contract(schema: Any, source: str = "response schema") -> Contract:
    """The contract of a response JSON Schema; a ContractError names `source` and the JSON
    pointer of the first keyword or shape the judge does not interpret."""
    return _Compiler(schema, source).root()


class _Compiler:
    def __init__(self, schema: Any, source: str) -> None:
        self.schema = schema
        self.source = source

    def refuse(self, pointer: str, what: str) -> ContractError:
        return ContractError(
            f"the response schema uses {what}, which the answer judge does not interpret "
            "(harness/evaluation/judge.py); it would be ignored, so it is refused",
            Location(self.source, field=pointer or "/"),
        )

    def node(
        self, node: Any, pointer: str, allowed: set[str], seen: frozenset[str] = frozenset()
    ) -> dict[str, Any]:
        """`node` with a `$ref` resolved; every keyword must be in `allowed` or an annotation.
        A $ref that comes back to itself (`seen`) is refused, not followed forever."""
        if not isinstance(node, dict):
            raise self.refuse(pointer, f"a non-object schema ({type(node).__name__})")
        if "$ref" in node:
            ref = node["$ref"]
            others = set(node) - ANNOTATIONS - {"$ref"}
            defs = self.schema.get("$defs") if isinstance(self.schema, dict) else None
            name = ref[len("#/$defs/") :] if isinstance(ref, str) else ""
            if (
                others
                or not isinstance(ref, str)
                or not ref.startswith("#/$defs/")
                or not isinstance(defs, dict)
                or name not in defs
            ):
                raise self.refuse(pointer, f"a $ref it cannot resolve alone ({ref!r})")
            if ref in seen:
                raise self.refuse(pointer, f"a $ref that refers back to itself ({ref!r})")
            return self.node(defs[name], f"/$defs/{name}", allowed, seen | {ref})
        unknown = sorted(set(node) - ANNOTATIONS - allowed)
        if unknown:
            raise self.refuse(f"{pointer}/{unknown[0]}", f"the keyword '{unknown[0]}'")
        return node

    def type_of(
        self, node: dict[str, Any], pointer: str, kinds: tuple[str, ...]
    ) -> tuple[str, bool]:
        kind = node.get("type")
        nullable = False
        if isinstance(kind, list) and len(kind) == 2 and "null" in kind:
            kind = next(t for t in kind if t != "null")
            nullable = True
        if kind not in kinds:
            raise self.refuse(f"{pointer}/type", f"the type {node.get('type')!r} here")
        return kind, nullable

    def enum_of(
        self, node: dict[str, Any], pointer: str, kind: str, nullable: bool
    ) -> frozenset[str] | None:
        if "enum" not in node:
            return None
        values = node["enum"]
        if (
            kind != "string"
            or nullable
            or not isinstance(values, list)
            or not values
            or not all(isinstance(v, str) for v in values)
        ):
            raise self.refuse(f"{pointer}/enum", "an enum other than strings on a string")
        return frozenset(values)

    def closed(self, node: dict[str, Any], pointer: str) -> bool:
        extra = node.get("additionalProperties", True)
        if not isinstance(extra, bool):
            raise self.refuse(f"{pointer}/additionalProperties", "a schema for extra fields")
        return not extra

    def object_parts(self, node: dict[str, Any], pointer: str) -> tuple[dict[str, Any], list[str]]:
        props = node.get("properties", {})
        required = node.get("required", [])
        if (
            not isinstance(props, dict)
            or not isinstance(required, list)
            or not all(isinstance(name, str) for name in required)
        ):
            raise self.refuse(pointer, "malformed properties or required")
        for name in required:
            if name not in props:
                raise self.refuse(
                    f"{pointer}/required", f"a required field without a property ({name!r})"
                )
        return props, required

    def root(self) -> Contract:
        root = self.node(
            self.schema, "", {"type", "properties", "required", "additionalProperties", "$defs"}
        )
        if root.get("type") != "object":
            raise self.refuse("/type", "a root that is not type 'object'")
        props, required = self.object_parts(root, "")
        fields = {name: self.field(p, f"/properties/{name}") for name, p in props.items()}
        closed = self.closed(root, "")
        exact = closed and all(r.closed_items for r in fields.values() if r.kind == "object_list")
        return Contract(
            fields, tuple(required), closed, sha256_text(canonical_json(self.schema)), exact
        )

    def field(self, prop: Any, pointer: str) -> FieldRule:
        node = self.node(prop, pointer, {"type", "enum", "items", "minItems", "maxItems"})
        kind, nullable = self.type_of(node, pointer, (*SCALARS, "array"))
        if kind in SCALARS:
            if {"items", "minItems", "maxItems"} & node.keys():
                raise self.refuse(pointer, "array keywords on a scalar")
            return FieldRule(
                kind, nullable=nullable, enum=self.enum_of(node, pointer, kind, nullable)
            )
        if "enum" in node:
            raise self.refuse(f"{pointer}/enum", "an enum on an array")
        bounds = [node.get(k, d) for k, d in (("minItems", 0), ("maxItems", None))]
        for b in bounds:
            if b is not None and (isinstance(b, bool) or not isinstance(b, int) or b < 0):
                raise self.refuse(pointer, "a malformed minItems or maxItems")
        at = f"{pointer}/items"
        items = self.node(
            node.get("items"), at, {"type", "properties", "required", "additionalProperties"}
        )
        item_kind, item_null = self.type_of(items, at, ("string", "object"))
        if item_null:
            raise self.refuse(f"{at}/type", "nullable list items")
        if item_kind == "string":
            if len(items) - len(ANNOTATIONS & items.keys()) > 1:
                raise self.refuse(at, "object keywords on string items")
            return FieldRule(
                "string_list", nullable=nullable, min_items=bounds[0], max_items=bounds[1]
            )
        props, required = self.object_parts(items, at)
        if set(required) != set(props):
            raise self.refuse(f"{at}/required", "optional keys in list items")
        rules = []
        for name, p in props.items():
            key = self.node(p, f"{at}/properties/{name}", {"type", "enum"})
            k, null = self.type_of(key, f"{at}/properties/{name}", SCALARS)
            rules.append(
                KeyRule(name, k, null, self.enum_of(key, f"{at}/properties/{name}", k, null))
            )
        plain = all(r.kind == "string" and not r.nullable and r.enum is None for r in rules)
        return FieldRule(
            "object_list",
            tuple(r.name for r in rules),
            nullable=nullable,
            key_rules=() if plain else tuple(rules),
            closed_items=self.closed(items, at),
            min_items=bounds[0],
            max_items=bounds[1],
        )


# --- reading an answer --------------------------------------------------------------------


def fenced_blocks(text: str, limit: int = MAX_FENCED_BLOCKS) -> list[str]:
    """Bodies of the first `limit` ```-fenced blocks, an optional `json` tag dropped.

    Found with `str.find`, so the cost is linear in the text. The regular expression this
    replaces (```(?:json)?\\s*(.*?)```) backtracked quadratically on an unclosed fence
    followed by whitespace: one 100 kB answer took 30 s to score.
    """
    out: list[str] = []
    pos = 0
    while len(out) < limit:
        start = text.find(FENCE, pos)
        if start < 0:
            break
        end = text.find(FENCE, start + len(FENCE))
        if end < 0:
            break
        body = text[start + len(FENCE) : end]
        if body[:4].lower() == "json":
            body = body[4:]
        out.append(body.strip())
        pos = end + len(FENCE)
    return out


def parse_text(raw: str) -> tuple[Any, str | None]:
    """(value, how): how is "whole" when the whole text is JSON, "extracted" when a fenced
    block or the outermost braces are, None when nothing parses."""
    text = raw.strip()
    attempts: list[tuple[str, str]] = [(text, "whole")]
    attempts += [(b, "extracted") for b in fenced_blocks(text)]
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        attempts.append((text[start : end + 1], "extracted"))
    for attempt, how in attempts:
        try:
            return parse_json(attempt, max_depth=MAX_DEPTH, allow_nan=True), how
        except ParseError:  # not JSON, too deep, an integer Python will not convert
            continue
    return None, None


class Judgement(NamedTuple):
    """One answer's verdict: how it was read, its well-typed contract fields, what was wrong.

    `value` is the JSON value read (the whole answer, or the part extracted from it; None when
    nothing parsed) and `whole` whether the whole answer was that JSON: the runner records
    `value` as `parsed` only then, so an answer is never repaired in the log. (A named tuple:
    one is made per answer scored, and a frozen dataclass costs a setattr per field.)"""

    response: dict[str, Any]
    parse_ok: bool
    schema_ok: bool
    problems: tuple[str, ...]
    parse_status: str = "ok"  # one of PARSE_STATUSES
    value: Any = None
    whole: bool = False


NOT_JSON = Judgement({}, False, False, ("not JSON",), "unparseable")


def judge(answer: Any, contract: Contract) -> Judgement:
    """The verdict on one answer: text is read whole, else from a code fence or the outermost
    braces; anything else (a log's already-parsed object) is taken as the whole answer."""
    value, how = parse_text(answer) if isinstance(answer, str) else (answer, "whole")
    if how is None:
        return NOT_JSON
    whole = how == "whole"
    if not isinstance(value, dict):
        problem = f"expected a JSON object, got {type(value).__name__}"
        return Judgement({}, True, False, (problem,), "unparseable", value, whole)
    clean, problems = contract.clean(value)
    status = "schema_error" if problems else "ok"
    return Judgement(
        clean,
        True,
        not problems,
        tuple(problems[:MAX_PROBLEMS]),
        status if whole else "extracted",
        value,
        whole,
    )


def judged_ok(value: dict[str, Any]) -> Judgement:
    """The verdict already recorded for a whole answer judged "ok" under an exact contract:
    its cleaned fields are the object itself (see `Contract.exact`)."""
    return Judgement(value, True, True, (), "ok", value, True)
