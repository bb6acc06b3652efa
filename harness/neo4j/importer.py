"""Bulk-load CSV files into a fresh Neo4j store with `neo4j-admin database import full`.

The import tool writes store files directly (about a million records per second, versus tens
of thousands per second for transactional `UNWIND` batches), but only into a store no server
has open. So: import into a folder, then `server.start(home=that_folder)` serves it. The folder
is a Neo4j home: the store lands in `store_dir/data/databases/<database>`, which is where the
embedded launcher looks. The tool creates no indexes or constraints; apply them afterwards.
"""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from kgbench.errors import UserError

from . import jvm

DEFAULT_IMPORT_HEAP = "1g"


@dataclass(frozen=True)
class ImportResult:
    """What an import produced; counts are parsed from the tool's summary (None if absent)."""

    store_dir: Path
    database: str
    seconds: float
    nodes: int | None
    relationships: int | None
    properties: int | None
    log_file: Path
    report_file: Path


def bulk_import(
    import_dir: Path | str,
    node_files: Sequence[str | Path],
    relationship_files: Sequence[str | Path] = (),
    database: str = "neo4j",
    *,
    store_dir: Path | str,
    delimiter: str | None = None,
    array_delimiter: str | None = None,
    quote: str | None = None,
    id_type: str | None = None,
    overwrite: bool = True,
    heap: str = DEFAULT_IMPORT_HEAP,
    max_off_heap_memory: str | None = None,
    extra_args: Sequence[str] = (),
    timeout: float | None = None,
) -> ImportResult:
    """Import CSV files into `store_dir` (a Neo4j home) as database `database`.

    `node_files` and `relationship_files` are passed verbatim as `--nodes=<value>` and
    `--relationships=<value>`, so they may be plain paths, `Label=path.csv`,
    `Label1:Label2=header.csv,part1.csv` or `TYPE=path.csv`; relative paths are resolved
    against `import_dir` (the tool's working directory). `delimiter`, `array_delimiter`
    (default `;`), `quote` and `id_type` map to the tool's options of the same name;
    `extra_args` go through unchanged (e.g. `--skip-bad-relationships`). Community Edition
    serves a single user database, `neo4j`, which is what the embedded launcher opens.

    Raises `UserError` with the tool's last lines when the import fails (usually bad CSV).
    """
    workdir = Path(import_dir).expanduser().resolve()
    home = Path(store_dir).expanduser().resolve()
    if not workdir.is_dir():
        raise UserError(f"Import directory {workdir} does not exist")
    if not node_files:
        raise UserError("bulk_import needs at least one node file")
    conf = home / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    (conf / "neo4j.conf").touch()
    logs = home / "logs"
    logs.mkdir(exist_ok=True)
    log_file = logs / "import.log"
    report_file = logs / "import.report"

    args = ["database", "import", "full"]
    args += [f"--nodes={value}" for value in node_files]
    args += [f"--relationships={value}" for value in relationship_files]
    options = {
        "--delimiter": delimiter,
        "--array-delimiter": array_delimiter,
        "--quote": quote,
        "--id-type": id_type,
        "--max-off-heap-memory": max_off_heap_memory,
    }
    args += [f"{name}={value}" for name, value in options.items() if value is not None]
    args += [f"--report-file={report_file}", *extra_args]
    if overwrite:
        args.append("--overwrite-destination")
    args.append(database)

    jvm.build()
    cmd = [
        jvm.java_executable(),
        *jvm.jvm_flags(heap),
        "-cp",
        jvm.classpath(),
        jvm.ADMIN_MAIN,
        *args,
    ]
    # NEO4J_HOME decides where the store goes; NEO4J_CONF must name an existing folder.
    env = {**os.environ, "NEO4J_HOME": str(home), "NEO4J_CONF": str(conf)}
    started = time.monotonic()
    with open(log_file, "wb") as log:
        try:
            result = subprocess.run(
                cmd, cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, timeout=timeout, check=False,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise UserError(
                f"neo4j-admin import into {home} took longer than {timeout:g} s; log: {log_file}"
            ) from None
    seconds = time.monotonic() - started
    if result.returncode != 0:
        raise UserError(
            f"neo4j-admin import into {home} failed (exit {result.returncode}). Last lines of "
            f"{log_file}:\n{jvm.tail(log_file)}"
        )
    summary = log_file.read_text(encoding="utf-8", errors="replace")
    return ImportResult(
        store_dir=home,
        database=database,
        seconds=round(seconds, 2),
        nodes=_count(summary, "nodes"),
        relationships=_count(summary, "relationships"),
        properties=_count(summary, "properties"),
        log_file=log_file,
        report_file=report_file,
    )


def _count(summary: str, what: str) -> int | None:
    """A count from the tool's closing summary ("Imported:\\n  3 nodes\\n  2 relationships")."""
    match = re.search(rf"^\s*(\d+) {what}\s*$", summary, flags=re.MULTILINE)
    return int(match.group(1)) if match else None
