"""An extraction through the driver costs one Bolt round trip (issue 33, item 7: warm p95 within
2x a `RETURN 1` round trip), counted on the wire between the real driver and the real server;
and its contexts are the ones an explicit read transaction returns, byte for byte, on both
example domains.

The count comes from a loopback relay the driver connects through: a round trip is the client
speaking after the server last spoke, however many Bolt messages it pipelines in between.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

import neo4j
import pytest

from harness.compiled import CompiledDomain
from harness.graph.extract import extract, read_records, read_transaction
from harness.graph.load import load
from harness.neo4j import connection_settings
from harness.scenario_files import read_scenarios

pytestmark = pytest.mark.neo4j


class RoundTrips:
    """A TCP relay on 127.0.0.1 to `upstream` that counts the client's turns to speak."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.count = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            server = socket.create_connection(self.upstream)
            last = {"client": False}  # who spoke last on this connection
            for src, dst, from_client in ((client, server, True), (server, client, False)):
                threading.Thread(
                    target=self._pump, args=(src, dst, from_client, last), daemon=True
                ).start()

    def _pump(self, src: socket.socket, dst: socket.socket, from_client: bool, last: dict) -> None:
        try:
            while data := src.recv(65536):
                with self._lock:  # counted before it is forwarded, so before any answer
                    if from_client and not last["client"]:
                        self.count += 1
                    last["client"] = from_client
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                s.close()

    def close(self) -> None:
        self.listener.close()


@pytest.fixture(scope="module")
def counted(request: pytest.FixtureRequest) -> Iterator[tuple[neo4j.Driver, RoundTrips]]:
    """A driver to the test session's server through a `RoundTrips` relay."""
    import os

    if os.environ.get("NEO4J_URI"):
        settings = connection_settings()
    else:
        settings = connection_settings(request.getfixturevalue("neo4j_embedded").state_dir)
    url = urlsplit(settings.uri)
    if url.scheme.endswith(("+s", "+ssc")):
        pytest.skip("the relay counts plain Bolt; NEO4J_URI is encrypted")
    relay = RoundTrips((url.hostname or "127.0.0.1", url.port or 7687))
    driver = neo4j.GraphDatabase.driver(f"bolt://127.0.0.1:{relay.port}", auth=settings.auth)
    try:
        yield driver, relay
    finally:
        driver.close()
        relay.close()


@pytest.fixture(scope="module")
def domains(neo4j_driver: neo4j.Driver) -> dict[str, CompiledDomain]:
    """Both example domains, loaded."""
    out = {}
    for name in ("cardio", "afib"):
        out[name] = CompiledDomain.open(name)
        load(neo4j_driver, out[name])
    return out


def _items(domain: CompiledDomain, step: int) -> list[dict]:
    return read_scenarios(domain.root / "scenarios" / "scenarios.jsonl")[::step]


def _trips(relay: RoundTrips, work) -> int:
    before = relay.count
    work()
    return relay.count - before


def test_an_extraction_is_one_round_trip(counted, domains):
    """Yes case: every grounded default condition of every fourth item of the example domain,
    one round trip each, a non-empty context included. No case beside it: the same query as a
    managed transaction (`execute_query`, what the read replaced) takes more, so the relay
    tells the two apart."""
    driver, relay = counted
    domain = domains["cardio"]
    items = _items(domain, 4)
    conditions = [c.id for c in domain.default_conditions if c.query]
    extract(driver, domain, items[0], conditions[0])  # the connection opened (HELLO, LOGON)
    trips, sizes = {}, []
    for item in items:
        for c in conditions:
            trips[item["scenario_id"], c] = _trips(
                relay,
                lambda i=item, c=c: sizes.append(len(extract(driver, domain, i, c)["assertions"])),
            )
    assert set(trips.values()) == {1}, {k: v for k, v in trips.items() if v != 1}
    assert len(trips) >= 3 * len(items) and max(sizes) > 5
    query = domain.read(domain.condition(conditions[0]).query)
    params = extract(driver, domain, items[0], conditions[0])["parameters"]
    managed = _trips(relay, lambda: driver.execute_query(query, parameters_=params, routing_="r"))
    assert managed > 1
    one = _trips(relay, lambda: read_records(driver, query, params, None))
    assert one == 1


@pytest.mark.parametrize("name", ["cardio", "afib"])
def test_contexts_are_those_of_a_read_transaction(neo4j_driver, domains, name):
    """Every condition (the volume-matched controls, which read their reference and padding
    too, included) of every third item: the one-round-trip read gives the bytes the explicit
    transaction gives."""
    domain = domains[name]
    work = [(s, c.id) for s in _items(domain, 3) for c in domain.conditions if c.query]
    direct = [extract(neo4j_driver, domain, s, c) for s, c in work]
    with read_transaction(neo4j_driver, None) as tx:
        in_tx = [extract(tx, domain, s, c) for s, c in work]
    assert json.dumps(direct) == json.dumps(in_tx)
    assert sum(len(c["assertions"]) for c in direct) > len(direct)  # not empty contexts
