"""`kgbench serve-reference`: the local OpenAI-compatible reference server, in the foreground.

A plain typer-annotated function, mounted at top level by kgbench/cli/main.py (whose root group
turns a UserError into one message and exit code 2). The server's URL goes to stdout, so
scripts can do `url=$(kgbench serve-reference --port 0 &)`; `python -m kgbench
serve-reference` runs it where the `kgbench` script is not on the PATH.
"""

from __future__ import annotations

import ipaddress
import signal
import sys
import threading
from pathlib import Path
from typing import Annotated

import typer

from kgbench.cliutil import escape, stderr_console


def _err():
    return stderr_console(soft_wrap=True)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve_reference_command(
    port: Annotated[
        int, typer.Option(help="TCP port (0: any free one; the URL is printed).")
    ] = 8089,
    host: Annotated[str, typer.Option(help="Loopback address to bind.")] = "127.0.0.1",
    responder: Annotated[
        str,
        typer.Option(
            help="oracle | context-reader | ungrounded (a request's model name may pick one)."
        ),
    ] = "context-reader",
    latency_ms: Annotated[float, typer.Option("--latency-ms", help="Delay per answer.")] = 200.0,
    fault_rate: Annotated[
        float, typer.Option("--fault-rate", help="Fraction of requests to fault.")
    ] = 0.0,
    faults: Annotated[
        str, typer.Option(help="Fault kinds: 429,500,drop,timeout,malformed,truncated.")
    ] = "429,500,drop,timeout,malformed,truncated",
    seed: Annotated[int, typer.Option(help="Fault seed (same seed, same faults).")] = 0,
    run_dir: Annotated[
        Path | None,
        typer.Option("--run-dir", help="Run folder with scenarios.jsonl (oracle gold)."),
    ] = None,
    retry_after_ms: Annotated[
        int, typer.Option("--retry-after-ms", help="Retry-After sent with 429s.")
    ] = 1000,
    hang_s: Annotated[
        float, typer.Option("--hang-s", help="How long a `timeout` fault hangs.")
    ] = 600.0,
    structured: Annotated[
        bool,
        typer.Option(
            "--structured/--no-structured", help="Accept response_format json_schema (else 400)."
        ),
    ] = True,
    batch_step_ms: Annotated[
        float, typer.Option("--batch-step-ms", help="Time per batch status step.")
    ] = 200.0,
    expire_batches: Annotated[
        int, typer.Option("--expire-batches", help="The first N batches expire half-way.")
    ] = 0,
    domain: Annotated[
        str | None,
        typer.Option(
            "--domain",
            help="Also answer this compiled domain's graph-generation probe prompts.",
        ),
    ] = None,
    probe_responder: Annotated[
        str,
        typer.Option(
            "--probe-responder",
            help="oracle | noisy | noisy-<rate> for probe prompts (a request's model name "
            "may pick one).",
        ),
    ] = "oracle",
) -> None:
    """Serve a local OpenAI-compatible endpoint answered by a reference responder."""
    from kgbench.errors import UserError
    from kgbench.ranges import check

    from . import FaultPlan, ReferenceServer, ServerConfig, parse_fault_kinds

    if not _loopback(host):
        raise UserError(
            f"--host {host} is not a loopback address; the reference server has no auth"
        )
    if not 0.0 <= fault_rate <= 1.0:
        raise UserError("--fault-rate must be between 0 and 1")
    check("--port", port, "port")
    check("--latency-ms", latency_ms, "latency_ms")
    if domain is not None:
        from harness.probe.responders import check_responder

        check_responder(probe_responder)
    try:
        kinds = parse_fault_kinds(faults)
        config = ServerConfig(
            host=host,
            port=port,
            responder=responder,
            latency_ms=latency_ms,
            faults=FaultPlan(fault_rate, kinds, seed),
            run_dir=run_dir,
            retry_after_ms=retry_after_ms,
            hang_s=hang_s,
            structured=structured,
            batch_step_ms=batch_step_ms,
            expire_batches=expire_batches,
            probe_domain=domain,
            probe_responder=probe_responder,
        )
        server = ReferenceServer(config)
    except (ValueError, KeyError, OSError) as exc:  # bad flags, scenarios.jsonl, port in use
        raise UserError(f"cannot start the reference server: {exc}") from None
    stop = threading.Event()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
    url = server.start()
    _err().print(
        f"reference server ({escape(responder)}) at [bold]{escape(url)}[/]; Ctrl-C to stop",
        markup=True,
    )
    typer.echo(url)
    sys.stdout.flush()
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
