"""Shared machinery for backends: artifacts, deterministic serialisers, the template engine."""

from __future__ import annotations

import csv
import fnmatch
import hashlib
import io
import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar

import jinja2

from kgbench.contract import Document
from kgbench.io import (
    RowTexts,
    compact_json_chunks,
    compact_rows_chunks,
    json_bytes,
    sha256_bytes,
)
from kgbench.textscan import contains_any, joined_strs

from ..paths import TEMPLATES_DIR

if TYPE_CHECKING:
    from ..ir import AssertionFacts, Domain


# A document or rows file with more rows than this is written compact and streamed
# (`Artifact.streamed`): the indented form disables CPython's C JSON encoder (two thirds of a
# 1,000,000-assertion compile) and a held copy of every output would not fit in memory. Every
# committed domain is far below it, so their outputs keep the indented form byte for byte.
COMPACT_ROWS = 10_000
CSV_BATCH = 20_000  # rows per chunk of a streamed CSV file


class Artifact:
    """One output file: a POSIX path relative to generated/<domain>/ and its exact bytes,
    either held (`content`) or made in chunks by `produce` when written (a large output,
    never held whole). A streamed artifact's sha256 and size are recorded as its chunks go
    by, so writing it once also hashes it for the manifest."""

    __slots__ = ("_content", "_digest", "_produce", "_size", "path")

    def __init__(
        self,
        path: str,
        content: bytes | None = None,
        produce: Callable[[], Iterable[bytes]] | None = None,
    ) -> None:
        if (content is None) == (produce is None):  # pragma: no cover - a compiler bug
            raise TypeError("an artifact has either content or produce")
        self.path = path
        self._content = content
        self._produce = produce
        self._digest: str | None = None
        self._size = 0

    @classmethod
    def streamed(cls, path: str, produce: Callable[[], Iterable[bytes]]) -> Artifact:
        return cls(path, produce=produce)

    @property
    def is_streamed(self) -> bool:
        return self._produce is not None

    def chunks(self) -> Iterator[bytes]:
        """The bytes in order; a streamed artifact's digest is known once they are all read."""
        if self._content is not None:
            yield self._content
            return
        assert self._produce is not None
        digest, size = hashlib.sha256(), 0
        for chunk in self._produce():
            digest.update(chunk)
            size += len(chunk)
            yield chunk
        self._digest, self._size = digest.hexdigest(), size

    @property
    def content(self) -> bytes:
        """The whole bytes (a streamed artifact is made again: for tests and small exports)."""
        return self._content if self._content is not None else b"".join(self.chunks())

    def _drain(self) -> None:
        if self._content is None and self._digest is None:
            for _ in self.chunks():
                pass

    @property
    def sha256(self) -> str:
        if self._content is not None:
            return sha256_bytes(self._content)
        self._drain()
        assert self._digest is not None
        return self._digest

    @property
    def size(self) -> int:
        if self._content is not None:
            return len(self._content)
        self._drain()
        return self._size

    def __repr__(self) -> str:
        return f"Artifact({self.path!r}, {'streamed' if self.is_streamed else len(self._content or b'')})"


@dataclass
class EmitContext:
    """Things backends share within one compile (e.g. template files they read)."""

    template_files: set[str] = field(default_factory=set)
    formats: dict[str, str] = field(default_factory=dict)  # contract document -> its version


class Backend:
    """One output family: a name, the format version of what it writes, the paths it may
    write (glob patterns under generated/<domain>/) and `emit`, the IR to its artifacts.

    A new backend subclasses this and lists an instance in `BACKENDS`; `build_artifacts`
    checks every artifact against its backend's declared outputs, and the manifest records
    each backend's format version.
    """

    name: ClassVar[str]
    format_version: ClassVar[str]
    outputs: ClassVar[tuple[str, ...]]

    def emit(self, domain: Domain, ctx: EmitContext) -> list[Artifact]:
        raise NotImplementedError

    def owns(self, path: str) -> bool:
        return any(fnmatch.fnmatchcase(path, pattern) for pattern in self.outputs)

    @staticmethod
    def document(model: type[Document], data: dict[str, Any], ctx: EmitContext) -> Artifact:
        """A contract document, checked against its model before it is written: a mismatch
        is a bug in the compiler (pydantic's ValidationError, with its traceback)."""
        data = {model.VERSION_FIELD: model.FORMAT, **data}
        model.model_validate(data)
        ctx.formats[model.PATH] = model.FORMAT
        return Artifact(model.PATH, json_bytes(data))

    @staticmethod
    def large_document(
        model: type[Document],
        data: dict[str, Any],
        lists: dict[str, Callable[[], Iterable[dict[str, Any]]]],
        ctx: EmitContext,
        sample: int = 1000,
        texts: dict[str, Callable[[], RowTexts]] | None = None,
    ) -> Artifact:
        """A contract document whose `lists` (key -> a maker of its rows) are too long to
        hold: written compact and streamed, one row per line. The model checks the document
        with the first `sample` rows of each list (every row is made by the same code, and a
        whole check of millions of rows would cost as much as the compile). `texts`: makers
        of the same rows already encoded (`kgbench.jsoncolumns`), written instead of `lists`'
        (tests/test_scale.py holds the two to the same bytes)."""
        data = {model.VERSION_FIELD: model.FORMAT, **data}
        model.model_validate(
            {**data, **{k: list(itertools.islice(make(), sample)) for k, make in lists.items()}}
        )
        ctx.formats[model.PATH] = model.FORMAT
        written = {**lists, **(texts or {})}
        return Artifact.streamed(model.PATH, lambda: compact_json_chunks(data, written))


def facts_in_order(domain: Domain) -> Sequence[AssertionFacts | None]:
    """`domain.facts` aligned with `domain.assertions`: each assertion's facts, or None.

    The frontend derives them one per assertion in the assertions' order, so this is that
    tuple itself (checked: the same ids in the same order); otherwise they are looked up,
    once. A dict keyed by assertion id in each backend cost a lookup per row and, held by
    the streamed artifacts' makers until the manifest, hundreds of MB each at 4M assertions."""
    facts, assertions = domain.facts, domain.assertions
    ids = attrgetter("assertion_id")
    if len(facts) == len(assertions) and list(map(ids, facts)) == list(map(ids, assertions)):
        return facts
    by_id = {f.assertion_id: f for f in facts}
    return [by_id.get(a.assertion_id) for a in assertions]


def rows_artifact(
    path: str,
    n: int,
    make: Callable[[], Iterable[dict[str, Any]]],
    texts: Callable[[], RowTexts] | None = None,
) -> Artifact:
    """A JSON array of row objects: indented and held when small (the committed form),
    compact with one row per line and streamed beyond `COMPACT_ROWS` rows, from `texts`
    (the same rows already encoded, `kgbench.jsoncolumns`) where given."""
    if n > COMPACT_ROWS:
        return Artifact.streamed(path, lambda: compact_rows_chunks((texts or make)()))
    return Artifact(path, json_bytes(list(make())))


def declared_order(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON Schema with `properties` in declared (`required`) order, recursively; every other
    mapping sorted, so the bytes stay deterministic.

    Strict structured output (OpenAI, and the grammar engines behind vLLM and others) makes a
    model write an object's keys in the order of its schema's `properties`: for an answer
    schema that order is a decision of the spec (see spec/response.yaml), never alphabetical.
    """
    out: dict[str, Any] = {}
    for key in sorted(schema):
        value = schema[key]
        if key == "properties" and isinstance(value, dict):
            required = [n for n in schema.get("required", []) if n in value]
            order = required + sorted(set(value) - set(required))
            value = {name: declared_order(value[name]) for name in order}
        elif isinstance(value, dict):  # $defs, items, a property's own schema
            value = declared_order(value)
        elif isinstance(value, list):
            value = [declared_order(v) if isinstance(v, dict) else v for v in value]
        out[key] = value
    return out


def csv_bytes(header: list[str], rows: Iterable[list[Any]]) -> bytes:
    return b"".join(csv_chunks(header, rows))


def csv_chunks(header: list[str], rows: Iterable[list[Any]]) -> Iterator[bytes]:
    """A CSV file in chunks of `CSV_BATCH` rows (the same bytes as one write of all rows)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(header)
    it = iter(rows)
    while batch := list(itertools.islice(it, CSV_BATCH)):
        plain = _plain_csv(batch) if len(header) > 1 else None
        if plain is not None:
            buf.write(plain)
        else:
            writer.writerows(batch)
        yield buf.getvalue().encode("utf-8")
        buf.seek(0)
        buf.truncate()
    if buf.tell():
        yield buf.getvalue().encode("utf-8")


# What makes `csv.writer` (QUOTE_MINIMAL, lineterminator "\n") quote a field ('\r' does not
# in CPython 3.11, but a batch holding one takes the writer, which decides).
_QUOTED = ',"\r\n'


def _plain_csv(batch: list[list[Any]]) -> str | None:
    """The text `csv.writer.writerows(batch)` writes, built column by column, when every cell
    is a str holding nothing to quote (or a float or int, written as the writer writes them:
    `repr`); None for any other batch, which the writer takes. At scale most import-file
    batches are plain, and joining them is several times cheaper than the writer's per-field
    checks. Rows of one field are never plain (the writer quotes an empty one)."""
    width = len(batch[0])
    if width < 2 or any(len(row) != width for row in batch):
        return None
    return _plain_csv_columns(list(zip(*batch, strict=True)))


def _plain_csv_columns(columns: Sequence[Sequence[Any]]) -> str | None:
    """`_plain_csv` of the rows these columns (at least two, of equal length) hold."""
    columns = list(columns)
    if not columns or not len(columns[0]):  # no rows: the writer's (nothing)
        return None
    for i, column in enumerate(columns):
        text = joined_strs(column)
        if text is not None:  # every cell a str: written as it is unless it needs quoting
            if contains_any(text, _QUOTED):
                return None
            continue
        kinds = set(map(type, column))
        if kinds == {float}:
            columns[i] = tuple(map(float.__repr__, column))
        elif kinds == {int}:
            columns[i] = tuple(map(int.__repr__, column))
        else:
            return None
    return "\n".join(map(",".join, zip(*columns, strict=True))) + "\n"


def csv_column_chunks(
    header: list[str], batches: Iterable[Sequence[Sequence[Any]]]
) -> Iterator[bytes]:
    """`csv_chunks(header, rows)` for the rows given a batch at a time as columns (one
    sequence of cells per field, at least two fields): a plain batch is joined as it is,
    without making rows first; any other is the writer's."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(header)
    head = buf.getvalue()
    for columns in batches:
        plain = _plain_csv_columns(columns)
        if plain is None:
            buf.seek(0)
            buf.truncate()
            writer.writerows(zip(*columns, strict=True))
            plain = buf.getvalue()
        yield (head + plain).encode("utf-8")
        head = ""
    if head:
        yield head.encode("utf-8")


def csv_artifact(
    path: str,
    header: list[str],
    n: int,
    make: Callable[[], Iterable[Sequence[Sequence[Any]]]],
) -> Artifact:
    """A CSV file whose rows `make` gives a batch at a time as columns (`csv_column_chunks`),
    held when small and streamed beyond `COMPACT_ROWS` rows (same bytes)."""
    if n > COMPACT_ROWS:
        return Artifact.streamed(path, lambda: csv_column_chunks(header, make()))
    return Artifact(path, b"".join(csv_column_chunks(header, make())))


@cache
def environment() -> jinja2.Environment:
    """Compile-time templates: StrictUndefined so a missing variable is a loud error.

    Compile-time templates use `[[ ]]` and `[% %]`; `{{ }}` and `{% %}` pass through untouched
    into the generated prompt templates, which the harness renders at run time.
    """
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        variable_start_string="[[",
        variable_end_string="]]",
        block_start_string="[%",
        block_end_string="%]",
        comment_start_string="[#",
        comment_end_string="#]",
        autoescape=False,
    )


def render(name: str, ctx: EmitContext, **variables: Any) -> bytes:
    ctx.template_files.add(name)
    text = environment().get_template(name).render(**variables)
    return text.encode("utf-8")
