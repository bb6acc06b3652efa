"""Issue 28, item 3, for `kgbench load --bulk --force`: what the replacement may erase (the
decision, on hand-made inventories) and the store swap that deletes nothing before the new
database is complete (on real folders). The real bulk load, refusal and backup included, is
tests/graph/test_load_fast.py::test_bulk_load_gives_the_transactional_graph_and_refuses_a_full_database.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.graph.replace import Inventory, refusal, staging_home, swap_in
from kgbench.cli import app
from kgbench.errors import UserError

WHERE = "'neo4j' at bolt://127.0.0.1:7687"
EMPTY = Inventory(nodes=0)
# the database after `load --bulk` of mini: 34 nodes labelled Mini, and mini's stamp
OWN = Inventory(
    nodes=35,
    labels=(("Drug", 16), ("KgbenchLoad", 1), ("Mini", 34)),
    stamped=("mini",),
    labelled_nodes=35,
)
# the same plus cardio's graph, loaded transactionally beside it
TWO = Inventory(
    nodes=1360,
    labels=(("Cardio", 1324), ("KgbenchLoad", 2), ("Mini", 34)),
    stamped=("cardio", "mini"),
    labelled_nodes=1360,
)
# mini plus three nodes a user made by hand (two without a label)
HAND = Inventory(
    nodes=38,
    labels=(("KgbenchLoad", 1), ("Mini", 34), ("Note", 1)),
    stamped=("mini",),
    labelled_nodes=36,
)


def decide(held: Inventory, *, force: bool = False, yes: bool = False) -> str | None:
    return refusal(held, "mini", "Mini", WHERE, force=force, yes=yes)


def test_an_empty_database_is_replaced_without_asking() -> None:
    assert decide(EMPTY) is None


def test_a_database_that_is_not_empty_needs_force_and_the_refusal_says_what_it_holds() -> None:
    message = decide(OWN)
    assert message is not None
    assert "not empty (35 nodes (domains mini; labels: Drug 16, KgbenchLoad 1, Mini 34))" in message
    assert "--force" in message


def test_force_replaces_this_domains_own_graph_without_yes() -> None:
    """A reload of what --bulk put there loses nothing the compile cannot rebuild."""
    assert decide(OWN, force=True) is None


def test_force_refuses_to_erase_another_domain_without_yes_and_names_it() -> None:
    message = decide(TWO, force=True)
    assert message is not None
    assert "--force would erase 1325 nodes" in message  # cardio's 1324 and its stamp
    assert "the graphs of cardio" in message and "--yes" in message
    assert "nothing was stopped or changed" in message
    assert decide(TWO, force=True, yes=True) is None


def test_force_refuses_to_erase_nodes_kgbench_did_not_load_and_counts_the_unlabelled() -> None:
    message = decide(HAND, force=True)
    assert message is not None
    assert "--force would erase 3 nodes" in message
    assert "nodes kgbench did not load" in message and "2 without a label" in message
    assert decide(HAND, force=True, yes=True) is None


def test_yes_without_force_is_still_refused_on_a_full_database() -> None:
    message = decide(TWO, yes=True)
    assert message is not None and "pass --force" in message


def test_another_domains_bulk_load_counts_mini_as_foreign() -> None:
    """The same database seen from cardio: mini's graph is what would be lost."""
    assert OWN.foreign("cardio", "Cardio") == 35
    assert OWN.foreign("mini", "Mini") == 0


# --- the swap -------------------------------------------------------------------------------


def _store(home: Path, content: str) -> None:
    for part in ("databases", "transactions"):
        folder = home / "data" / part / "neo4j"
        folder.mkdir(parents=True)
        (folder / "neostore").write_text(f"{content} {part}", encoding="utf-8")


def _content(folder: Path) -> str:
    return (folder / "neostore").read_text(encoding="utf-8")


def test_swap_keeps_the_old_store_as_a_backup_with_a_restore_note(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _store(home, "old")
    (home / "data" / "databases" / "system").mkdir()  # other databases are left alone
    staged = staging_home(home)
    _store(staged, "new")
    (staged / "logs").mkdir()
    (staged / "logs" / "import.log").write_text("Imported: 3 nodes\n", encoding="utf-8")
    backup = swap_in(home, staged, "neo4j", keep=True)
    assert backup is not None and backup.parent == home / "backups"
    assert _content(home / "data" / "databases" / "neo4j") == "new databases"
    assert _content(home / "data" / "transactions" / "neo4j") == "new transactions"
    assert _content(backup / "databases" / "neo4j") == "old databases"
    assert _content(backup / "transactions" / "neo4j") == "old transactions"
    note = (backup / "README.txt").read_text(encoding="utf-8")
    assert f"mv {backup / 'databases' / 'neo4j'} {home / 'data' / 'databases' / 'neo4j'}" in note
    assert (home / "data" / "databases" / "system").is_dir()
    assert (home / "logs" / "import.log").read_text(encoding="utf-8") == "Imported: 3 nodes\n"
    assert not staged.exists()
    # a second replacement keeps the first backup too
    staged = staging_home(home)
    _store(staged, "newer")
    second = swap_in(home, staged, "neo4j", keep=True)
    assert second is not None and second != backup and backup.is_dir()
    assert _content(second / "databases" / "neo4j") == "new databases"


def test_swap_of_an_empty_database_keeps_no_backup(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _store(home, "empty")
    staged = staging_home(home)
    _store(staged, "new")
    assert swap_in(home, staged, "neo4j", keep=False) is None
    assert not (home / "backups").exists()
    assert _content(home / "data" / "databases" / "neo4j") == "new databases"


def test_a_failed_swap_puts_the_old_store_back(tmp_path: Path, monkeypatch) -> None:
    """The move of the new store fails half-way (here: the second move of the new folders):
    the old folders are back where they were, and the error is one message."""
    home = tmp_path / "home"
    _store(home, "old")
    staged = staging_home(home)
    _store(staged, "new")
    real = os.replace
    calls = []

    def flaky(src, dst):
        calls.append(src)
        if len(calls) == 4:  # two old folders moved aside, one new moved in, then this
            raise OSError(28, "No space left on device")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", flaky)
    with pytest.raises(UserError, match=r"No space left on device.*old database is back"):
        swap_in(home, staged, "neo4j", keep=True)
    monkeypatch.setattr(os, "replace", real)
    assert _content(home / "data" / "databases" / "neo4j") == "old databases"
    assert _content(home / "data" / "transactions" / "neo4j") == "old transactions"


def test_a_staging_home_left_by_a_killed_import_is_started_afresh(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _store(home, "old")
    left = home / "bulk-staging" / "data" / "databases" / "neo4j"
    left.mkdir(parents=True)
    (left / "half").write_text("x", encoding="utf-8")
    staged = staging_home(home)
    assert staged.is_dir() and not any(staged.iterdir())
    assert _content(home / "data" / "databases" / "neo4j") == "old databases"


def test_cli_yes_needs_force() -> None:
    result = CliRunner().invoke(app, ["load", "--domain", "cardio", "--bulk", "--yes"])
    assert result.exit_code == 2
    assert "--yes only applies to --bulk --force" in result.output


def scanned_inventory(driver, database: str = "neo4j") -> Inventory:
    """The reference `replace.inventory` is held to: every node scanned (what it did before
    it read the count store)."""
    from harness.graph.stamp import STAMP_LABEL

    total = driver.execute_query(
        "MATCH (n) RETURN count(n) AS n, count(CASE WHEN size(labels(n)) > 0 THEN 1 END) AS l",
        database_=database,
    ).records
    labels = driver.execute_query(
        "MATCH (n) UNWIND labels(n) AS label RETURN label, count(*) AS n ORDER BY label",
        database_=database,
    ).records
    stamped = driver.execute_query(
        f"MATCH (m:{STAMP_LABEL}) RETURN m.domain AS d ORDER BY d", database_=database
    ).records
    return Inventory(
        nodes=int(total[0]["n"]),
        labels=tuple((str(r["label"]), int(r["n"])) for r in labels),
        stamped=tuple(str(r["d"]) for r in stamped),
        labelled_nodes=int(total[0]["l"]),
    )


@pytest.mark.neo4j
def test_the_inventory_from_the_count_store_is_the_scanned_one(neo4j_driver) -> None:
    """Issue 33, item 4: `inventory` reads the node counts from the count store and scans
    for nodes without a label only when the counts cannot rule them out. Yes: whatever the
    test server holds, the same inventory as a scan of every node. No: a node without a
    label and one under a label of its own, made by hand, are counted as the scan counts
    them (the unlabelled one reported as such)."""
    from harness.graph.replace import inventory

    assert inventory(neo4j_driver, "neo4j") == scanned_inventory(neo4j_driver)
    neo4j_driver.execute_query(
        "CREATE ({inventory_probe: 1}), (:InventoryProbe {inventory_probe: 1})"
    )
    try:
        held = inventory(neo4j_driver, "neo4j")
        assert held == scanned_inventory(neo4j_driver)
        assert held.nodes - held.labelled_nodes >= 1 and held.nodes_of("InventoryProbe") == 1
        assert "without a label" in held.describe()
    finally:
        neo4j_driver.execute_query("MATCH (n {inventory_probe: 1}) DETACH DELETE n")
    assert inventory(neo4j_driver, "neo4j") == scanned_inventory(neo4j_driver)
