"""A local OpenAI-compatible reference server over loopback, with fault injection.

It lets the runner (and its tests and benchmark) exercise the real `openai` client against a
real HTTP endpoint without a network or a key: `/v1/chat/completions` answers with a
reference responder, and a seeded fraction of requests fails the ways real endpoints fail
(429 with Retry-After, 500, a dropped connection, a hang past the client timeout, malformed
JSON, a truncated answer). The Files and Batches endpoints support the batch path.

One thread per connection (`ThreadingHTTPServer`, HTTP/1.1 keep-alive): simple, and 32
concurrent requests with 200 ms latency overlap instead of queueing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from harness.evaluation.responders import RESPONDERS, is_responder, responder_names
from kgbench.untrusted import ParseError, parse_json

from ..compiled import CompiledDomain
from .completions import Answerer, load_gold
from .faults import FaultPlan
from .store import Store

# The largest request body read: a Batch API input file (harness.runner.batch caps one at
# 200 MB) with room to spare. A larger declared length is refused before anything is read.
MAX_BODY_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class ServerConfig:
    """Everything that shapes the server's behaviour; defaults give a fault-free server."""

    host: str = "127.0.0.1"
    port: int = 0
    responder: str = "context-reader"
    latency_ms: float = 0.0
    faults: FaultPlan = field(default_factory=FaultPlan)
    run_dir: Path | None = None
    retry_after_ms: int = 1000
    hang_s: float = 600.0
    structured: bool = True
    batch_step_ms: float = 200.0
    expire_batches: int = 0
    probe_domain: str | None = None
    """A compiled domain whose graph-generation probe prompts the server answers (with the
    probe's reference responders, harness.probe.responders)."""
    probe_responder: str = "oracle"
    verify_domain: str | CompiledDomain | None = None
    """A compiled domain (an open handle, a name or a folder) whose verify-and-revise (C5) step prompts the server
    answers with the `verifier` step responder (harness.verify.responders); answer prompts go
    to the named reference responder."""


class Stats:
    """Request counters, readable from the test process or over `GET /_stats`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        self.bodies: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0

    def bump(self, name: str, n: int = 1) -> None:
        with self._lock:
            self.counts[name] += n

    def sighting(self, digest: str) -> int:
        """Count one more sighting of a request body; return how many came before it."""
        with self._lock:
            nth = self.bodies[digest]
            self.bodies[digest] += 1
            return nth

    def enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def snapshot(self) -> dict[str, Any]:
        with self._lock:
            return {**self.counts, "max_in_flight": self.max_in_flight}


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256
    allow_reuse_address = True
    app: ReferenceServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "kgbench-reference/1"
    timeout = 120  # idle keep-alive connections
    disable_nagle_algorithm = True  # else Nagle + delayed ACK add ~40 ms per response
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: a request log could only leak what clients send."""

    def setup(self) -> None:
        super().setup()
        self.server.app._track(self.connection, add=True)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.server.app._track(self.connection, add=False)

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        declared = (self.headers.get("Content-Length") or "0").strip()
        if not re.fullmatch(r"[0-9]{1,18}", declared):
            self.close_connection = True
            return self.send_error_json(400, "Content-Length is not a byte count")
        length = int(declared)
        if length > MAX_BODY_BYTES:  # refused before reading (or allocating) any of it
            self.close_connection = True
            return self.send_error_json(413, f"request body over {MAX_BODY_BYTES} bytes")
        try:
            body = self.rfile.read(length) if length else b""
            self.server.app.handle(self, method, self.path.split("?", 1)[0], body)
        except (BrokenPipeError, ConnectionResetError, TimeoutError):
            self.close_connection = True
        except Exception as exc:  # a bad request must not kill the connection thread silently
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.send_error_json(500, f"reference server error: {type(exc).__name__}: {exc}")

    def send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self.send_bytes(status, json.dumps(obj).encode(), "application/json", headers)

    def send_bytes(
        self, status: int, data: bytes, ctype: str, headers: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self._headers_buffer.append(b"\r\n")  # end of headers, sent with the body at once
        self.wfile.write(b"".join(self._headers_buffer) + data)
        self._headers_buffer = []

    def send_error_json(self, status: int, message: str, param: str | None = None) -> None:
        kind = "invalid_request_error" if status < 500 else "server_error"
        error = {"message": message, "type": kind, "param": param, "code": None}
        self.send_json(status, {"error": error})


class ReferenceServer:
    """The server object: routes, fault injection, counters, lifecycle."""

    def __init__(
        self, config: ServerConfig, respond: Callable[..., dict[str, Any]] | None = None
    ) -> None:
        if not is_responder(config.responder):
            raise ValueError(
                f"unknown responder {config.responder!r}; known: {', '.join(responder_names())}"
            )
        self.config = config
        self.stats = Stats()
        self._stop = threading.Event()
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        self.answerer = Answerer(
            config.responder,
            load_gold(config.run_dir),
            respond,
            _probe_responder(config.probe_domain),
            config.probe_responder,
        )
        if config.verify_domain is not None:
            from harness.verify.responders import VerifyResponder

            self.answerer.verify = VerifyResponder(CompiledDomain.open(config.verify_domain))
        self.store = Store(
            self._batch_answer, config.batch_step_ms / 1000, config.expire_batches, self._stop
        )
        self.httpd = _HTTPServer((config.host, config.port), _Handler)
        self.httpd.app = self
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def serve_forever(self) -> None:
        self.httpd.serve_forever(poll_interval=0.1)

    def start(self) -> str:
        """Serve in a daemon thread; return the base URL."""
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        """Stop accepting, wake sleeping handlers, and close open connections."""
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._conns_lock:
            (self._conns.add if add else self._conns.discard)(conn)

    def _batch_answer(self, body: dict[str, Any]) -> dict[str, Any]:
        self.stats.bump("batch_lines")
        return self.answerer.answer(body)

    # -- routing ---------------------------------------------------------------------------

    def handle(self, h: _Handler, method: str, path: str, body: bytes) -> None:
        parts = [p for p in path.split("/") if p]
        if parts[:1] == ["v1"]:
            parts = parts[1:]
        route = (method, *parts[:1], len(parts))
        if route == ("GET", "_stats", 1):
            return h.send_json(200, self.stats.snapshot())
        if route == ("GET", "models", 1):
            data = [
                {"id": r, "object": "model", "created": 0, "owned_by": "kgbench"}
                for r in RESPONDERS
            ]
            return h.send_json(200, {"object": "list", "data": data})
        if method == "POST" and parts == ["chat", "completions"]:
            return self._chat(h, body)
        if parts[:1] == ["files"]:
            return self._files(h, method, parts, body)
        if parts[:1] == ["batches"]:
            return self._batches(h, method, parts, body)
        h.send_error_json(404, f"no route for {method} {path}")
        return None

    def _chat(self, h: _Handler, raw: bytes) -> None:
        self.stats.bump("chat_requests")
        if (h.headers.get("Authorization") or "").startswith("Bearer "):
            self.stats.bump("chat_with_bearer")  # counted, never stored: it holds the key
        organization = h.headers.get("OpenAI-Organization")
        if organization:
            # Per client identity (OPENAI_ORG_ID): a test tells a restarted runner's requests
            # from those a killed one had already put on the wire, without waiting for them.
            self.stats.bump(f"chat_requests_org:{organization[:64]}")
        try:
            body = parse_json(raw.decode("utf-8", errors="replace"), allow_nan=True)
        except ParseError:
            return h.send_error_json(400, "request body is not JSON")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return h.send_error_json(400, "'messages' is required", "messages")
        fmt = body.get("response_format")
        if (
            isinstance(fmt, dict)
            and fmt.get("type") == "json_schema"
            and not self.config.structured
        ):
            self.stats.bump("rejected_response_format")
            return h.send_error_json(
                400, "response_format of type 'json_schema' is not supported", "response_format"
            )
        digest = hashlib.sha256(raw).hexdigest()
        fault = self.config.faults.decide(digest, self.stats.sighting(digest))
        if fault:
            self.stats.bump(f"fault_{fault}")
        if fault == "429":
            wait_ms = self.config.retry_after_ms
            headers = {
                "Retry-After": str(max(1, -(-wait_ms // 1000))),
                "retry-after-ms": str(wait_ms),
            }
            h.send_json(
                429,
                {
                    "error": {
                        "message": "Rate limit reached (injected)",
                        "type": "requests",
                        "param": None,
                        "code": "rate_limit_exceeded",
                    }
                },
                headers,
            )
            return None
        if fault == "500":
            return h.send_error_json(500, "The server had an error (injected)")
        if fault == "drop":
            h.close_connection = True  # nothing written: the client sees the socket close
            return None
        self.stats.enter()
        try:
            if fault == "timeout" and self._stop.wait(self.config.hang_s):
                return None
            if self.config.latency_ms and self._stop.wait(self.config.latency_ms / 1000):
                return None
            try:
                completion = self.answerer.answer(body, fault)
            except Exception as exc:  # a responder bug must surface as a 500, not a hang
                return h.send_error_json(500, f"responder failed: {type(exc).__name__}: {exc}")
            self.stats.bump("chat_answered")
            h.send_json(200, completion)
        finally:
            self.stats.leave()
        return None

    def _files(self, h: _Handler, method: str, parts: list[str], body: bytes) -> None:
        if method == "POST" and len(parts) == 1:
            fields = _multipart(h.headers.get("Content-Type", ""), body)
            upload = fields.get("file")
            if upload is None:
                return h.send_error_json(400, "multipart field 'file' is required", "file")
            purpose = fields.get("purpose", (None, b"batch"))[1].decode()
            stored = self.store.add_file(upload[0] or "upload.jsonl", purpose, upload[1])
            self.stats.bump("files_uploaded")
            return h.send_json(200, stored.describe())
        stored = self.store.files.get(parts[1]) if len(parts) > 1 else None
        if stored is None:
            return h.send_error_json(404, "no such file")
        if method == "GET" and len(parts) == 3 and parts[2] == "content":
            self.stats.bump("files_downloaded")
            return h.send_bytes(200, stored.data, "application/octet-stream")
        if method == "GET" and len(parts) == 2:
            return h.send_json(200, stored.describe())
        return h.send_error_json(404, "no such route")

    def _batches(self, h: _Handler, method: str, parts: list[str], body: bytes) -> None:
        if method == "POST" and len(parts) == 1:
            try:
                request = parse_json((body or b"{}").decode("utf-8", errors="replace"))
            except ParseError as exc:
                return h.send_error_json(400, f"request body is not JSON: {exc.message}")
            if not isinstance(request, dict):
                return h.send_error_json(400, "request body is not a JSON object")
            if request.get("input_file_id") not in self.store.files:
                return h.send_error_json(400, "input_file_id not found", "input_file_id")
            self.stats.bump("batches_created")
            return h.send_json(200, self.store.create_batch(request).describe())
        if method == "GET" and len(parts) == 1:
            data = [b.describe() for b in sorted(self.store.batches.values(), key=lambda b: b.id)]
            return h.send_json(200, {"object": "list", "data": data[::-1], "has_more": False})
        job = self.store.batches.get(parts[1]) if len(parts) > 1 else None
        if job is None:
            return h.send_error_json(404, "no such batch")
        if method == "POST" and parts[2:] == ["cancel"]:
            self.store.cancel(job.id)
            return h.send_json(200, job.describe())
        self.stats.bump("batch_polls")
        return h.send_json(200, job.describe())


def _probe_responder(domain: str | None) -> Any:
    """The probe's reference responders for a compiled domain (None without a domain)."""
    if domain is None:
        return None
    from harness.probe.compiled import CompiledProbe
    from harness.probe.responders import ProbeResponder

    probe = CompiledProbe.open(domain)
    return ProbeResponder(probe, probe.reference_graph())


def _multipart(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """Parse multipart/form-data into {field: (filename, bytes)}; small and exact."""
    marker = "boundary="
    if marker not in content_type:
        return {}
    boundary = content_type.split(marker, 1)[1].split(";")[0].strip().strip('"').encode()
    fields: dict[str, tuple[str | None, bytes]] = {}
    for part in body.split(b"--" + boundary):
        if b"\r\n\r\n" not in part:
            continue
        head, data = part.split(b"\r\n\r\n", 1)
        data = data.removesuffix(b"\r\n")
        disposition = next(
            (
                ln
                for ln in head.decode("latin-1").split("\r\n")
                if ln.lower().startswith("content-disposition")
            ),
            "",
        )
        params = dict(
            (k.strip(), v.strip().strip('"'))
            for k, _, v in (p.partition("=") for p in disposition.split(";")[1:])
        )
        if "name" in params:
            fields[params["name"]] = (params.get("filename"), data)
    return fields


def start_server_in_thread(
    config: ServerConfig | None = None,
    respond: Callable[..., dict[str, Any]] | None = None,
    **overrides: Any,
) -> tuple[str, Callable[[], None]]:
    """Start a reference server on loopback in a daemon thread: (base_url, stop_fn).

    Keyword overrides are ServerConfig fields, e.g. `latency_ms=10, faults=FaultPlan(...)`.
    The server object is reachable as `stop_fn.server` (for its `stats`).
    """
    base = config or ServerConfig()
    if overrides:
        base = ServerConfig(**{**base.__dict__, **overrides})
    server = ReferenceServer(base, respond)
    url = server.start()
    stop = server.stop
    stop_fn: Any = lambda: stop()  # noqa: E731 - a plain callable that can carry `.server`
    stop_fn.server = server
    return url, stop_fn


def wait_until(predicate: Callable[[], bool], timeout: float = 10.0, step: float = 0.01) -> bool:
    """Poll `predicate` until true or timeout; for tests and the CLI."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()
