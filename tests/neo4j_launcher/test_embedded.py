"""The embedded Neo4j end to end: real JVM, real Bolt, real import tool (no mocks).

One server serves the session (`neo4j_embedded`); the import test starts and stops a second one
on the imported store. The quick failure tests start no Neo4j at all.
"""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import neo4j
import pytest
from neo4j import GraphDatabase
from neo4j.exceptions import AuthError

from harness.neo4j import (
    ConnectionSettings,
    ServerInfo,
    bulk_import,
    connection_settings,
    open_driver,
    server,
    start,
    status,
    stop,
)
from harness.neo4j.state import pid_is_launcher
from kgbench.errors import ServiceError, UserError


def _password(info: ServerInfo) -> str:
    assert info.password_file is not None
    return info.password_file.read_text(encoding="utf-8").strip()


@pytest.mark.neo4j
def test_return_one(neo4j_driver: neo4j.Driver) -> None:
    records, _, _ = neo4j_driver.execute_query("RETURN 1 AS one")
    assert records[0]["one"] == 1


@pytest.mark.neo4j
def test_embedded_listens_on_loopback_with_auth(neo4j_embedded: ServerInfo) -> None:
    assert neo4j_embedded.uri == f"bolt://127.0.0.1:{neo4j_embedded.port}"
    with GraphDatabase.driver(neo4j_embedded.uri, auth=("neo4j", _password(neo4j_embedded))) as d:
        records, _, _ = d.execute_query("RETURN 1 AS one")
    assert records[0]["one"] == 1


@pytest.mark.neo4j
def test_password_file_is_private(neo4j_embedded: ServerInfo) -> None:
    assert neo4j_embedded.password_file is not None
    assert stat.S_IMODE(neo4j_embedded.password_file.stat().st_mode) == 0o600
    assert len(_password(neo4j_embedded)) >= 24


@pytest.mark.neo4j
@pytest.mark.parametrize("password", ["wrong-password", "neo4j"])
def test_wrong_password_is_refused(neo4j_embedded: ServerInfo, password: str) -> None:
    with (
        GraphDatabase.driver(neo4j_embedded.uri, auth=("neo4j", password)) as driver,
        pytest.raises(AuthError),
    ):
        driver.verify_connectivity()


@pytest.mark.neo4j
def test_open_driver_reports_auth_failure_without_the_password(
    neo4j_embedded: ServerInfo,
) -> None:
    settings = ConnectionSettings(uri=neo4j_embedded.uri, user="neo4j", password="not-it-123")
    with pytest.raises(ServiceError) as caught:
        open_driver(settings)
    message = str(caught.value)
    assert neo4j_embedded.uri in message
    assert "authentication failed" in message
    assert "not-it-123" not in message
    assert "not-it-123" not in repr(settings)


@pytest.mark.neo4j
def test_connection_settings_read_the_embedded_state(
    neo4j_embedded: ServerInfo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NEO4J_URI", raising=False)
    settings = connection_settings(neo4j_embedded.state_dir)
    assert settings.source == "embedded"
    assert settings.uri == neo4j_embedded.uri
    assert settings.password == _password(neo4j_embedded)
    assert settings.password not in repr(settings)
    with open_driver(settings) as driver:
        records, _, _ = driver.execute_query("RETURN 2 AS two")
    assert records[0]["two"] == 2


@pytest.mark.neo4j
def test_status_reports_running(neo4j_embedded: ServerInfo) -> None:
    current = status(neo4j_embedded.state_dir)
    assert current.running
    assert current.uri == neo4j_embedded.uri
    assert current.pid == neo4j_embedded.pid
    assert pid_is_launcher(neo4j_embedded.pid)


@pytest.mark.neo4j
def test_second_start_is_idempotent(neo4j_embedded: ServerInfo) -> None:
    again = start(neo4j_embedded.state_dir)
    assert again.already_running
    assert (again.uri, again.pid) == (neo4j_embedded.uri, neo4j_embedded.pid)


@pytest.mark.neo4j
def test_start_on_another_port_while_running_is_refused(neo4j_embedded: ServerInfo) -> None:
    with pytest.raises(UserError, match="already runs"):
        start(neo4j_embedded.state_dir, port=neo4j_embedded.port + 1)


def test_unreachable_uri_names_the_uri(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")
    monkeypatch.setenv("NEO4J_PASSWORD", "whatever-secret-1")
    with pytest.raises(ServiceError) as caught:
        open_driver()
    message = str(caught.value)
    assert "bolt://127.0.0.1:1" in message
    assert "refused" in message
    assert "kgbench neo4j start" in message
    assert "whatever-secret-1" not in message


def test_timeout_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as silent:  # accepts TCP but never speaks Bolt
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        uri = f"bolt://127.0.0.1:{silent.getsockname()[1]}"
        monkeypatch.setenv("NEO4J_URI", uri)
        with pytest.raises(ServiceError, match="timed out") as caught:
            open_driver(timeout=1.0)
    assert uri in str(caught.value)


def test_no_server_configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NEO4J_URI", raising=False)
    with pytest.raises(ServiceError, match="kgbench neo4j start"):
        connection_settings(tmp_path)


def test_status_and_stop_when_nothing_runs(tmp_path: Path) -> None:
    assert not status(tmp_path).running
    assert stop(tmp_path) is False


def test_port_in_use_is_a_user_error(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        with pytest.raises(UserError, match="already in use"):
            start(tmp_path, port=busy.getsockname()[1])


def test_bad_heap_is_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="heap"):
        start(tmp_path, heap="lots")


def test_startup_failure_points_at_the_log(tmp_path: Path) -> None:
    home = tmp_path / "not-a-directory"
    home.write_text("a file where the Neo4j home should be")
    with pytest.raises(ServiceError) as caught:
        start(tmp_path / "state", home=home, timeout=60)
    assert str(tmp_path / "state" / "server.log") in str(caught.value)
    assert not status(tmp_path / "state").running


GENES = """id:ID(Gene),name,synonyms:string[],:LABEL
g1,TP53,p53;TRP53,Gene
g2,BRCA1,,Gene
g3,EGFR,ERBB1,Gene
"""
DISEASES = """id:ID(Disease),name
d1,Breast cancer
d2,Lung cancer
"""
ASSOCIATIONS = """:START_ID(Gene),:END_ID(Disease),score:float
g1,d1,0.9
g2,d1,0.8
g3,d2,0.7
"""


@pytest.mark.neo4j
def test_bulk_import_then_serve_then_stop(tmp_path: Path) -> None:
    csv_dir = tmp_path / "csv"
    csv_dir.mkdir()
    (csv_dir / "genes.csv").write_text(GENES)
    (csv_dir / "diseases.csv").write_text(DISEASES)
    (csv_dir / "assoc.csv").write_text(ASSOCIATIONS)
    store = tmp_path / "store"

    result = bulk_import(
        csv_dir,
        ["genes.csv", "Disease=diseases.csv"],
        ["ASSOCIATED_WITH=assoc.csv"],
        store_dir=store,
        array_delimiter=";",
    )
    assert (result.nodes, result.relationships) == (5, 3)
    assert (store / "data" / "databases" / "neo4j").is_dir()

    state_dir = tmp_path / "state"
    info = start(state_dir, home=store, watch_pid=os.getpid())
    try:
        assert info.home == store.resolve()
        with open_driver(connection_settings(state_dir)) as driver:
            records, _, _ = driver.execute_query(
                "MATCH (g:Gene) WITH count(g) AS genes "
                "MATCH (d:Disease) WITH genes, count(d) AS diseases "
                "MATCH ()-[r:ASSOCIATED_WITH]->() "
                "RETURN genes, diseases, count(r) AS rels"
            )
            assert dict(records[0]) == {"genes": 3, "diseases": 2, "rels": 3}
            records, _, _ = driver.execute_query(
                "MATCH (g:Gene {id: 'g1'}) RETURN g.synonyms AS syn"
            )
            assert records[0]["syn"] == ["p53", "TRP53"]
    finally:
        stopped = stop(state_dir)
    assert stopped
    assert not status(state_dir).running
    assert not (state_dir / "server.json").exists()
    assert not pid_is_launcher(info.pid)
    assert info.pid not in server._CHILDREN


def test_bulk_import_reports_bad_csv(tmp_path: Path) -> None:
    (tmp_path / "bad.csv").write_text("id:ID,name:int\nx,notanumber\n")
    with pytest.raises(UserError, match="import"):
        bulk_import(tmp_path, ["Thing=bad.csv"], store_dir=tmp_path / "store")
