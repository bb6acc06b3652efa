"""`kgbench run` and `kgbench serve-reference`.

Both are plain typer-annotated functions, so the main CLI can mount them at top level
(`app.command("run")(run_command)`) or as a group (`app.add_typer(runner_app)`). User
problems print one message on stderr and exit 2; the run summary goes to stderr and the
response log's path to stdout, so scripts can do `log=$(kgbench run ...)`.
"""

from __future__ import annotations

import ipaddress
import signal
import sys
import threading
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

runner_app = typer.Typer(
    name="runner",
    help="Run models over a run folder; serve the local reference endpoint.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _err() -> Console:
    from kgbench.cliutil import stderr_console

    return stderr_console(soft_wrap=True)


def _user_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """UserError -> one message on stderr, exit 2 (as kgbench.cli does for its commands)."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from kgbench.errors import UserError

        try:
            return func(*args, **kwargs)
        except UserError as exc:
            from kgbench.cliutil import print_user_error

            print_user_error(exc, _err())
            raise typer.Exit(exc.exit_code) from None

    return wrapper


@_user_errors
def run_command(
    run_dir: Annotated[
        Path, typer.Option("--run-dir", help="The run folder (holds run.json and prompts/).")
    ],
    model: Annotated[
        str,
        typer.Option(
            "--model",
            help="openai:<model> (OPENAI_API_KEY; --base-url for any OpenAI-compatible server) "
            "or ref:oracle | ref:context-reader | ref:ungrounded (in-process, no network).",
        ),
    ],
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 "
            "(default: $OPENAI_BASE_URL, else api.openai.com).",
        ),
    ] = None,
    temperature: Annotated[
        float | None, typer.Option(help="Sampling temperature (default: not sent).")
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="Seed; replicate r is sent seed + r (default: not sent).")
    ] = None,
    max_tokens: Annotated[
        int | None, typer.Option("--max-tokens", help="Answer token limit (default: not sent).")
    ] = None,
    replicates: Annotated[int, typer.Option(help="Samples per prompt.")] = 1,
    concurrency: Annotated[
        int, typer.Option(help="Most requests in flight (adapts down on 429).")
    ] = 16,
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="Re-send requests logged as failed.")
    ] = False,
    batch: Annotated[
        bool, typer.Option("--batch", help="Use the Batch API (half price, up to 24 h).")
    ] = False,
    limit: Annotated[int | None, typer.Option(help="Only the first N prompts.")] = None,
    price_in: Annotated[
        float | None, typer.Option("--price-in", help="USD per 1M input tokens.")
    ] = None,
    price_out: Annotated[
        float | None, typer.Option("--price-out", help="USD per 1M output tokens.")
    ] = None,
    structured: Annotated[
        bool,
        typer.Option(
            "--structured/--no-structured",
            help="Send the response schema as strict structured output (falls back automatically "
            "when the endpoint rejects response_format).",
        ),
    ] = True,
    cache_dir: Annotated[
        Path | None,
        typer.Option(
            "--cache-dir", help="Shared response cache (default <repo>/.cache/responses)."
        ),
    ] = None,
    cache: Annotated[
        bool, typer.Option("--cache/--no-cache", help="Reuse and fill the shared cache.")
    ] = True,
    log_name: Annotated[
        str | None,
        typer.Option(
            "--log-name",
            help="Responses log responses/NAME.jsonl (default: the model's slug). A log holds "
            "one endpoint and one set of parameters; name another log to run another.",
        ),
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds before one request times out.")] = 300.0,
    max_attempts: Annotated[
        int, typer.Option("--max-attempts", help="Sends per request on 5xx/timeouts/drops.")
    ] = 6,
    backoff_base: Annotated[
        float, typer.Option("--backoff-base", help="Backoff base in seconds.")
    ] = 1.0,
    backoff_cap: Annotated[
        float, typer.Option("--backoff-cap", help="Longest backoff in seconds.")
    ] = 60.0,
    poll_interval: Annotated[
        float, typer.Option("--poll-interval", help="First batch poll wait, seconds.")
    ] = 10.0,
    poll_max: Annotated[
        float, typer.Option("--poll-max", help="Longest batch poll wait, seconds.")
    ] = 300.0,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait/--no-wait", help="With --batch: wait for results, or submit and exit."
        ),
    ] = True,
    batch_max_requests: Annotated[int, typer.Option(hidden=True)] = 50_000,
    batch_max_bytes: Annotated[int, typer.Option(hidden=True)] = 200 * 1024 * 1024,
) -> None:
    """Send every prompt of a run folder to a model; resumable, cached, exactly one record each."""
    from .api import RunConfig, run_model
    from .batch import BatchLimits, BatchOptions
    from .engine import RetryPolicy
    from .plan import Settings

    config = RunConfig(
        run_dir=run_dir,
        model=model,
        base_url=base_url,
        settings=Settings(temperature, seed, max_tokens, structured, replicates),
        concurrency=concurrency,
        retry_failed=retry_failed,
        batch=batch,
        limit=limit,
        price_in=price_in,
        price_out=price_out,
        cache_dir=cache_dir,
        use_cache=cache,
        log_name=log_name,
        timeout_s=timeout,
        policy=RetryPolicy(max_attempts=max_attempts, base_s=backoff_base, cap_s=backoff_cap),
        batch_options=BatchOptions(
            limits=BatchLimits(batch_max_requests, batch_max_bytes),
            poll_interval_s=poll_interval,
            poll_cap_s=poll_max,
            wait=wait,
        ),
    )
    err = _err()
    result = run_model(config, err)
    for line in result.lines:
        err.print(line, markup=False)
    typer.echo(str(result.log_path))


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@_user_errors
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
    from harness.server import FaultPlan, ReferenceServer, ServerConfig, parse_fault_kinds
    from kgbench.errors import UserError

    if not _loopback(host):
        raise UserError(
            f"--host {host} is not a loopback address; the reference server has no auth"
        )
    if not 0.0 <= fault_rate <= 1.0:
        raise UserError("--fault-rate must be between 0 and 1")
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
    from kgbench.cliutil import escape

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


runner_app.command("run")(run_command)
runner_app.command("serve-reference")(serve_reference_command)
