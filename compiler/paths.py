"""Where things live, and how paths appear in messages and artifacts."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from kgbench.locations import (
    DECLARATIONS_DIR,
    DOMAINS_DIR,
    GENERATED_DIR,
    PROJECT_ROOT,
    SPEC_DIR,
    TEMPLATES_DIR,
    shipped_name,
)

# kgbench.errors (dataclasses, hence inspect) and kgbench.suggest (difflib) are imported by
# the functions that raise, and `typing` only by a type checker: a no-op compile resolves its
# domain and output paths here, and its whole budget is about twice a bare interpreter's
# start (compiler/freshness.py).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from kgbench.errors import Location

__all__ = [
    "DECLARATIONS_DIR",
    "DOMAINS_DIR",
    "GENERATED_DIR",
    "PROJECT_ROOT",
    "SPEC_DIR",
    "TEMPLATES_DIR",
    "confined",
    "display_path",
    "read_input_bytes",
    "recorded_path",
    "repo_relative",
    "resolve_domain_dir",
    "shipped_imports",
]


def display_path(path: Path) -> str:
    """A path as the user would type it: relative to the working directory when possible."""
    try:
        return os.path.relpath(path)
    except ValueError:  # a different drive on Windows
        return str(path)


def repo_relative(path: Path) -> str:
    """A stable, machine-independent name for a file recorded in artifacts (POSIX style):
    `spec/...` and `templates/...` for what kgbench ships (in a clone or installed), else the
    path relative to the project."""
    shipped = shipped_name(path)
    if shipped is not None:
        return shipped
    try:
        return path.resolve().relative_to(PROJECT_ROOT).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def recorded_path(name: str) -> Path:
    """The file a `repo_relative` name stands for (the inverse mapping)."""
    head, _, rest = name.partition("/")
    if head == SPEC_DIR.name and rest:
        return SPEC_DIR / rest
    if head == TEMPLATES_DIR.name and rest:
        return TEMPLATES_DIR / rest
    return PROJECT_ROOT / name


def read_input_bytes(path: Path, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of a spec or data file, refusing what is not a regular file of sane size.

    A directory, a FIFO (which would block the read forever) or a device given where a file
    is expected is a clear error instead of a traceback or a hang; so is a file larger than
    `max_bytes`, checked before anything is read.
    """
    from kgbench.errors import Location, SpecError

    shown = display_path(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise SpecError(f"{what} not found", Location(shown)) from None
    except OSError as exc:
        raise SpecError(f"cannot read the {what}: {exc.strerror}", Location(shown)) from None
    if not stat.S_ISREG(info.st_mode):
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise SpecError(f"is {kind}; expected a {what}", Location(shown))
    if info.st_size > max_bytes:
        raise SpecError(
            f"is {info.st_size:,} bytes; expected a {what} of at most {max_bytes:,} bytes",
            Location(shown),
        )
    try:
        return path.read_bytes()
    except OSError as exc:
        raise SpecError(f"cannot read the {what}: {exc.strerror}", Location(shown)) from None


def confined(
    base: Path, rel: str, where: Location, allowed: tuple[Path, ...] = (), parent_refs: bool = False
) -> Path:
    """`base / rel`, refusing a path that leaves `base` (or one of the `allowed` folders).

    A domain is self-contained: a table path is relative, has no `..`, and after following
    symlinks still lies inside the domain folder, so a data-table entry can never read
    `/etc/passwd` or another project's files into an error message or a compiled artifact.
    `parent_refs` admits `..` for declarations that may name the shared declarations folder (e.g.
    `conditions: ../../spec/declarations/conditions.yaml`); where the path ends up is checked either way.
    The path is returned as written (not resolved), so messages name the file the user named.
    """
    from kgbench.errors import SpecError

    raw = Path(str(rel))
    if raw.is_absolute():
        raise SpecError(
            f"path '{rel}' is absolute; expected a path relative to the domain folder", where
        )
    if ".." in raw.parts and not parent_refs:
        raise SpecError(
            f"path '{rel}' contains '..'; expected a path inside the domain folder", where
        )
    resolved = (base / raw).resolve()
    roots = (base.resolve(), *(a.resolve() for a in allowed))
    if not any(resolved.is_relative_to(r) for r in roots):
        raise SpecError(
            f"path '{rel}' leads outside the domain folder; expected a file inside it", where
        )
    return base / raw


def shipped_imports(path: Path, data: object) -> dict[str, str]:
    """Imports of the core schema that do not exist where the domain says, mapped to the spec
    kgbench ships.

    A domain schema imports the core schema by a relative path, as laid out in a clone
    (`../../spec/kg`). For a domain outside the clone (with an installed kgbench, whose spec/
    is package data) that path leads nowhere; such an import of `<...>/spec/<name>` is read
    from kgbench's own spec/ instead. An import that exists is never redirected.
    """
    imports = data.get("imports") if isinstance(data, dict) else None
    mapped: dict[str, str] = {}
    for imp in imports if isinstance(imports, list) else []:
        name = str(imp)
        rel = Path(name)
        if ":" in name or rel.parent.name != SPEC_DIR.name:
            continue
        if not (path.parent / f"{name}.yaml").exists() and (SPEC_DIR / f"{rel.name}.yaml").exists():
            mapped[name] = str(SPEC_DIR / rel.name)
    return mapped


def resolve_domain_dir(domain: str | Path) -> Path:
    """Accept a domain name (a folder under domains/) or a path to its folder."""
    path = Path(domain)
    if path.is_dir():
        return path.resolve()
    candidate = DOMAINS_DIR / str(domain)
    if candidate.is_dir():
        return candidate.resolve()
    from kgbench.errors import SpecError
    from kgbench.suggest import suggest

    known = sorted(p.name for p in DOMAINS_DIR.glob("*") if (p / "domain.yaml").exists())
    raise SpecError(
        f"unknown domain '{domain}'"
        + suggest(str(domain), known)
        + "; known domains: "
        + ", ".join(known)
    )
