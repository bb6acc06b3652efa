"""`python -m kgbench.contract [--check]`: write (or compare) the committed JSON Schemas."""

from __future__ import annotations

import sys

from . import DOCUMENTS, SCHEMAS_DIR, schema_bytes, schema_file


def main(argv: list[str] | None = None) -> int:
    check = "--check" in (sys.argv[1:] if argv is None else argv)
    stale = []
    SCHEMAS_DIR.mkdir(exist_ok=True)
    wanted = {schema_file(m): schema_bytes(m) for m in DOCUMENTS}
    for name, content in wanted.items():
        path = SCHEMAS_DIR / name
        if path.exists() and path.read_bytes() == content:
            continue
        stale.append(name)
        if not check:
            path.write_bytes(content)
    extra = sorted(p.name for p in SCHEMAS_DIR.glob("*.schema.json") if p.name not in wanted)
    if check and (stale or extra):
        print("stale contract schemas: " + ", ".join(stale + extra), file=sys.stderr)
        print(
            "run `python -m kgbench.contract` and commit kgbench/contract/schemas/", file=sys.stderr
        )
        return 1
    for name in extra:
        (SCHEMAS_DIR / name).unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
