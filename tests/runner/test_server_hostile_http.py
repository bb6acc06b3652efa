"""The reference server under malformed HTTP (reliability review 2026-12: sv.bad-length,
sv.length-1tb, sv.deep-json, sv.batches-badjson): a 4xx at once, never a 500, and the
server keeps serving."""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

import pytest

from harness.server.app import start_server_in_thread


@pytest.fixture
def address():
    url, stop = start_server_in_thread()
    parts = urlsplit(url)
    yield parts.hostname, parts.port
    stop()


def _post(address, path: str, body: bytes, length: str | None = None) -> bytes:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body) if length is None else length}\r\n"
        "Connection: close\r\n\r\n"
    ).encode()
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(head + body)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def _status(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1])


CHAT = "/v1/chat/completions"


@pytest.mark.parametrize(
    ("case", "path", "body", "length", "status"),
    [
        ("sv.bad-length", CHAT, b"{}", "abc", 400),
        ("sv.length-1tb", CHAT, b"{}", "1000000000000", 413),
        ("sv.deep-json", CHAT, b"[" * 100_000 + b"]" * 100_000, None, 400),
        ("sv.batches-badjson", "/v1/batches", b"{nope", None, 400),
        ("batches-not-object", "/v1/batches", b"[1]", None, 400),
    ],
)
def test_a_malformed_request_is_a_4xx_and_the_server_keeps_serving(
    address, case, path, body, length, status
) -> None:
    assert _status(_post(address, path, body, length)) == status, case
    ok = _post(
        address, CHAT, b'{"model": "ungrounded", "messages": [{"role": "user", "content": "x"}]}'
    )
    assert _status(ok) == 200, ok[:300]  # answered: the server keeps serving
