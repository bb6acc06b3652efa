"""The floor of a no-op compile: a bare interpreter (`python -I -S`, standard library only)
doing the work a no-op compile cannot avoid. It reads the manifest, hashes every recorded
input and output and the compiler's own sources, and lists the spec and template folders for
new files. It decides nothing and prints the number of files hashed.

`python -I -S bench/noop_floor.py WORK.json`, where WORK.json (written by `work_list`,
outside the timing) names the manifest, the files and the folders to list.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path


def work_list(domain: str, out_root: Path | None = None) -> dict:
    """What `compiler.api.up_to_date` reads for this domain, as absolute paths."""
    from compiler.paths import (
        DECLARATIONS_DIR,
        GENERATED_DIR,
        SPEC_DIR,
        TEMPLATES_DIR,
        recorded_path,
        resolve_domain_dir,
    )
    from compiler.versions import COMPILER_DIR, CONTRACT_DIR, KERNEL_FILES

    out_dir = (out_root or GENERATED_DIR) / resolve_domain_dir(domain).name
    manifest = json.loads((out_dir / "manifest.json").read_text(encoding="utf-8"))
    files = [str(recorded_path(e["path"])) for e in manifest["inputs"]]
    files += [str(out_dir / e["path"]) for e in manifest["outputs"]]
    sources = [str(p) for root in (COMPILER_DIR, CONTRACT_DIR) for p in sorted(root.rglob("*.py"))]
    return {
        "manifest": str(out_dir / "manifest.json"),
        "files": files + sources + [str(p) for p in KERNEL_FILES],
        "globs": [[str(SPEC_DIR), "*.yaml"], [str(DECLARATIONS_DIR), "*.yaml"]],
        "rglobs": [[str(TEMPLATES_DIR), "*.j2"]],
    }


def main(path: str) -> None:
    work = json.loads(Path(path).read_text(encoding="utf-8"))
    json.loads(Path(work["manifest"]).read_text(encoding="utf-8"))
    for name in work["files"]:
        hashlib.sha256(Path(name).read_bytes()).hexdigest()
    listed = [p for d, pattern in work["globs"] for p in Path(d).glob(pattern)]
    listed += [p for d, pattern in work["rglobs"] for p in Path(d).rglob(pattern)]
    print(len(work["files"]), len(listed))


if __name__ == "__main__":
    main(sys.argv[1])
