"""`kgbench load --bulk`: a new database from the compiled neo4j-admin import files.

`neo4j-admin database import full` writes store files directly (hundreds of thousands of
records per second, several times the transactional load), but only into a database no
server has open, and it replaces that database whole. So the bulk load is for an empty
database of the embedded server kgbench manages: it counts what the database holds (a
database that is not empty is refused unless `force`, and one holding anything but this
domain's own graph also needs `yes`; `replace.py` says why), imports
generated/<domain>/neo4j/import/ (the files and arguments import.json lists) into a staging
home, stops the server, moves the old store into a backup and the new one in (only after the
import succeeded), starts the server again, applies the constraints and indexes (the tool makes
none), runs the compiled validation queries (the pairing checks read from the import files
beside the import, `pairing.py`; counts from the count store, `checks.py`) and stamps the
load as `kgbench load` does (`stamp`: "loading", then "loaded" once every check passed). A server the user runs
themselves (NEO4J_URI) is never stopped or written to behind their back: refused, with the
command that imports the same files into it.

After a failed import the server is started again all the same, on the database it had
(untouched), so a user is never left without it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from kgbench.errors import UserError
from kgbench.untrusted import load_json_object

from ..compiled import CompiledDomain
from ..neo4j import server
from ..neo4j.connect import connection_settings, open_driver
from ..neo4j.importer import bulk_import
from .checks import run_fast
from .load import LoadValidationError, apply_constraints
from .pairing import pairing_values
from .replace import inventory, refusal, staging_home, swap_in
from .stamp import manifest_digest, mark

DATABASE = "neo4j"  # Community Edition serves one user database, the one the launcher opens


@dataclass
class BulkReport:
    domain: str
    uri: str = ""
    nodes: int = 0
    relationships: int = 0
    seconds: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)  # stop, import, start, ...
    checks: list[tuple[str, int, int]] = field(default_factory=list)
    from_files: list[str] = field(default_factory=list)  # checks read from the import files
    replaced: int = 0  # nodes the database held before (with force)
    replaced_what: str = ""  # what they were (Inventory.describe)
    backup: Path | None = None  # where the replaced database was kept

    @property
    def records(self) -> int:
        return self.nodes + self.relationships

    @property
    def failures(self) -> list[tuple[str, int, int]]:
        return [c for c in self.checks if c[1] != c[2]]


def import_plan(domain: CompiledDomain) -> dict:
    """import.json, checked against the files beside it (a stale or damaged compile is a
    UserError naming the file, never a half-written database)."""
    folder = domain.import_dir
    path = folder / "import.json"
    if not path.is_file():
        raise UserError(
            f"{path}: missing; the compile predates bulk import files, run `make compile` again"
        )
    plan = load_json_object(path, "bulk import plan", max_depth=None)
    for key in ("nodes", "relationships", "array_delimiter", "id_type"):
        if key not in plan:
            raise UserError(f"{path}: no '{key}'; run `make compile` again")
    for name in [*plan["nodes"], *plan["relationships"]]:
        if not (folder / name).is_file():
            raise UserError(f"{path}: lists {name}, which {folder} lacks; run `make compile` again")
    return plan


def _refuse_own_server(uri: str, domain: CompiledDomain) -> None:
    folder = domain.import_dir
    raise UserError(
        f"--bulk writes the store files of a stopped server, so it only runs on the embedded "
        f"Neo4j kgbench manages, and NEO4J_URI names your own server ({uri}): load without "
        f"--bulk (transactional), or stop your server and run its own `neo4j-admin database "
        f"import full` on {folder} with the files and options in {folder / 'import.json'}"
    )


def bulk_load(
    domain: CompiledDomain,
    *,
    force: bool = False,
    yes: bool = False,
    state_dir: Path | str | None = None,
    validate: bool = True,
    progress: Callable[[str], None] | None = None,
    timeout: float | None = None,
) -> BulkReport:
    """Replace the embedded server's database with `domain`'s import files (see module doc).

    Raises UserError before anything is stopped when NEO4J_URI names the user's own server,
    NEO4J_DATABASE names a database other than neo4j, the database holds nodes and `force`
    is false, or it holds more than this domain's graph and `yes` is false (`replace.refusal`);
    LoadValidationError when a validation query fails afterwards (the replaced database is in
    `report.backup` all the same).
    """
    report = BulkReport(domain.name)
    say = progress or (lambda _msg: None)
    start_t = time.perf_counter()
    if os.environ.get("NEO4J_URI"):
        _refuse_own_server(os.environ["NEO4J_URI"], domain)
    database = os.environ.get("NEO4J_DATABASE") or DATABASE
    if database != DATABASE:
        raise UserError(
            f"NEO4J_DATABASE is '{database}', but the embedded Neo4j (Community Edition) "
            f"serves one database, '{DATABASE}', which --bulk replaces; unset NEO4J_DATABASE"
        )
    plan = import_plan(domain)
    info = server.start(state_dir)  # the running one, or started to look inside
    with open_driver(connection_settings(info.state_dir)) as driver:
        held = inventory(driver, database)
    refused = refusal(
        held, domain.name, domain.plan.label, f"'{database}' at {info.uri}", force=force, yes=yes
    )
    if refused:
        raise UserError(refused)
    report.replaced = held.nodes
    report.replaced_what = held.describe()
    phase = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal phase
        now = time.perf_counter()
        report.phases[name] = now - phase
        phase = now

    folder = domain.import_dir
    extra = ["--multiline-fields=true"] if plan.get("multiline_fields") else []
    staged = staging_home(info.home)
    # the pairing checks read from the import files in a thread, beside the import and the
    # start (the server's JVM leaves a core idle while it starts): pairing.py says why
    # their answer there is the graph's
    reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kgbench-pairing")
    paired = reader.submit(pairing_values, domain, plan) if validate else None
    reader.shutdown(wait=False)
    say("stopping the embedded Neo4j")
    server.stop(info.state_dir)
    lap("stop")
    try:
        say(f"neo4j-admin database import full ({len(plan['nodes'])} node files, "
            f"{len(plan['relationships'])} relationship files)")  # fmt: skip
        result = bulk_import(
            folder,
            plan["nodes"],
            plan["relationships"],
            database,
            store_dir=staged,
            array_delimiter=plan["array_delimiter"],
            id_type=plan["id_type"],
            extra_args=extra,
            timeout=timeout,
        )
        lap("import")
        # only now, with the new store complete, is the old one moved aside (kept if it held
        # anything); a failed import above leaves it where it was
        report.backup = swap_in(info.home, staged, database, keep=bool(held.nodes))
    finally:
        say("starting the embedded Neo4j")
        restarted = server.start(info.state_dir, home=info.home)
        lap("start")
    report.uri = restarted.uri
    report.nodes = result.nodes or 0
    report.relationships = result.relationships or 0
    with open_driver(connection_settings(restarted.state_dir)) as driver:
        digest = manifest_digest(domain)
        say("constraints and indexes")
        apply_constraints(driver, domain, database)
        with driver.session(database=database) as session:
            session.execute_write(mark, domain, digest, "loading")
        lap("constraints")
        if validate:
            say("validation queries")
            # every compiled check: the pairing checks the files answered, the rest on the
            # server, counts from the count store (checks.py says why none is dropped)
            known = paired.result() if paired else {}
            report.from_files = sorted(known)
            lap("pairing")  # what reading the files took beyond the import and the start
            report.checks = run_fast(driver, domain, database, known=known)
            lap("validate")
            if report.failures:
                lines = [f"{n}: {v} (expected {e})" for n, v, e in report.failures]
                raise LoadValidationError(
                    f"the bulk-imported graph of '{domain.name}' failed {len(lines)} "
                    f"validation check(s): "
                    + "; ".join(lines)
                    + (
                        f"; the database it replaced is kept in {report.backup}"
                        if report.backup
                        else ""
                    )
                )
        with driver.session(database=database) as session:
            session.execute_write(mark, domain, digest, "loaded")
    report.seconds = time.perf_counter() - start_t
    return report
