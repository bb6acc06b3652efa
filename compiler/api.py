"""The compiler's entry points: validate a domain, compile it to generated/<domain>/.

`compile_domain` is a pure function of the spec: it reads spec files and writes artifacts,
never talking to a database or a model. A compile whose inputs and compiler versions match
the existing manifest is a no-op (checked with hashes only, without importing LinkML).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kgbench.gcpause import gc_paused
from kgbench.io import sha256_file

from .paths import GENERATED_DIR, TEMPLATES_DIR, resolve_domain_dir

# Subfolders of generated/<domain>/ written by other commands, preserved across compiles.
PRESERVED = ("gold", "scenarios", "datasets")


@dataclass(frozen=True)
class CompileResult:
    domain: str
    out_dir: Path
    files: int
    up_to_date: bool
    warnings: tuple[str, ...] = ()  # integrity findings the domain downgraded to warnings


def validate_domain(domain: str | Path):
    """Load and validate a domain; returns the IR. Raises SpecError on any problem."""
    from .frontend import load_domain

    return load_domain(domain)


def check_domain(domain: str | Path, build: bool = False):
    """`kgbench validate`: every check `compile` runs, and nothing written.

    All user errors come from the frontend: the backends raise none of their own (they turn
    a validated IR into text; `tests/test_validate_onepass.py` holds them to that), so
    validating is the frontend alone and the two commands cannot disagree on a domain.
    `build=True` also builds every artifact into memory and drops it (`validate --build`):
    what a compile costs, without writing.
    """
    from .frontend import DomainSummary, load_domain

    result = load_domain(domain, derive=build)
    if build:
        with gc_paused():  # as compile_domain writes the outputs (it says why)
            for artifact in iter_artifacts(result):
                # a streamed artifact is made (and hashed) here, as compile writes it
                _ = artifact.sha256
    return DomainSummary(
        result.name,
        result.version,
        len(result.entities),
        len(result.assertions),
        len(result.evidence_sources),
        len(result.supports),
        result.warnings,
    )


def build_artifacts(domain_ir) -> list:
    """Run every backend over the IR and add the manifest; returns the artifacts in order."""
    return list(iter_artifacts(domain_ir))


def iter_artifacts(domain_ir) -> Iterator:
    """Every backend's artifacts, then the manifest, yielded one at a time.

    The manifest hashes the others: a streamed artifact's hash is recorded when the consumer
    (the writer) has read its chunks, so a large output is made once and never held whole;
    one not read by then is made here only to be hashed.
    """
    from .backends import BACKENDS, EmitContext, manifest

    ctx = EmitContext()
    artifacts = []
    paths: set[str] = set()
    for backend in BACKENDS:
        emitted = backend.emit(domain_ir, ctx)
        stray = [a.path for a in emitted if not backend.owns(a.path)]
        if stray:  # a broken invariant: a backend writes only what it declares
            raise AssertionError(f"backend {backend.name} wrote undeclared {stray}")
        if paths & {a.path for a in emitted}:  # a broken invariant between backends
            raise AssertionError("two backends wrote the same path")
        paths |= {a.path for a in emitted}
        artifacts.extend(emitted)
        yield from emitted
    template_inputs = [
        (f"templates/{name}", sha256_file(TEMPLATES_DIR / name))
        for name in sorted(ctx.template_files)
    ]
    yield manifest.build(domain_ir, artifacts, template_inputs, BACKENDS, ctx)


def compile_domain(
    domain: str | Path, out_root: Path | None = None, force: bool = False
) -> CompileResult:
    domain_dir = resolve_domain_dir(domain)
    out_dir = (out_root or GENERATED_DIR) / domain_dir.name
    if not force:
        current = up_to_date(domain_dir, out_root)
        if current is not None:
            return current
    from .writer import write_tree

    domain_ir = validate_domain(domain_dir)
    written = [0]

    def counted():
        for artifact in iter_artifacts(domain_ir):
            written[0] += 1
            yield artifact

    # Writing allocates rows by the million, none in a cycle, and each full collection walked
    # the whole IR again: at 4,000,000 assertions a 3-column import CSV took 11.7 s instead of
    # 3.0 s (gc.freeze alone is not enough: what the backends build after it is walked by
    # every full collection); at 250,000 the outputs' CPU went 16.3 -> 12.5 s.
    with gc_paused():
        write_tree(out_dir, counted(), keep=PRESERVED)
    return CompileResult(domain_dir.name, out_dir, written[0], False, domain_ir.warnings)


def up_to_date(domain: str | Path, out_root: Path | None = None) -> CompileResult | None:
    """The result of a no-op compile when generated/<domain>/ is current, else None.

    Decided from hashes alone, before anything heavier than hashlib is imported (no LinkML,
    pyarrow, numpy, pydantic or backend): `compiler.freshness` says what "current" means
    (imported here: `validate` never asks, and its import is the compiler's versions too)."""
    from .freshness import current_outputs

    current = current_outputs(domain, out_root)
    if current is None:
        return None
    name, out_dir, files = current
    return CompileResult(name, out_dir, files, True)
