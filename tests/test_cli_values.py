"""Numbers and paths given on the command line are checked where they enter (issue 28 item
5; reliability review 2026-12: cli.run, cli.serve-reference, cli.load, cli.probe,
cli.probe-review, cli.verify, cli.pilot, cli.compile, cli.extract, cli.generate, neo.userinfo):
each bad value is exit 2 with one `error:` line, no traceback, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.neo4j.connect import ConnectionSettings, open_driver
from kgbench.cli import app
from kgbench.errors import ServiceError, UserError
from kgbench.ranges import RANGES, check


def cli(*args: str | Path, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(app, [str(a) for a in args], env=env)
    return result.exit_code, result.output


def _one_error(code: int, out: str, words: str) -> None:
    assert code == 2, out
    assert "Traceback" not in out
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and words in errors[0], out


@pytest.mark.parametrize(
    ("flag", "value", "words"),
    [
        ("--replicates", "1000000000", "--replicates must be an integer from 1 to 100"),
        ("--temperature", "nan", "--temperature must be a finite number from 0.0 to 2.0"),
        ("--temperature", "-1", "--temperature must be"),
        ("--temperature", "inf", "--temperature must be"),
        ("--timeout", "-1", "--timeout must be"),
        ("--price-in", "-3", "--price-in must be"),
        ("--price-out", "nan", "--price-out must be"),
        ("--max-attempts", "0", "--max-attempts must be"),
        ("--concurrency", "100000", "--concurrency must be"),
    ],
)
def test_cli_run_bad_numbers(tmp_path: Path, flag: str, value: str, words: str) -> None:
    run_dir = tmp_path / "run"
    code, out = cli("run", "--run-dir", run_dir, "--model", "ref:oracle", flag, value)
    _one_error(code, out, words)
    assert not run_dir.exists()


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--port", "-1"], "--port must be an integer from 0 to 65535"),
        (["--port", "70000"], "--port must be an integer from 0 to 65535"),
        (["--latency-ms", "-5"], "--latency-ms must be"),
        (["--latency-ms", "nan"], "--latency-ms must be"),
    ],
)
def test_cli_serve_reference_bad_values(args: list[str], words: str) -> None:
    code, out = cli("serve-reference", *args)
    _one_error(code, out, words)


@pytest.mark.parametrize("size", ["0", "-1"])
def test_cli_load_bad_batch_size(size: str) -> None:
    code, out = cli("load", "--domain", "cardio", "--batch-size", size)
    _one_error(code, out, "--batch-size must be an integer from 1")


def test_cli_probe_bad_bootstrap(tmp_path: Path) -> None:
    run_dir = tmp_path / "p7"
    args = ("probe", "--domain", "cardio", "--model", "ref:oracle", "--run-dir", run_dir)
    code, out = cli(*args, "--bootstrap", "0")
    _one_error(code, out, "--bootstrap must be an integer from 100")
    assert not run_dir.exists()


def test_cli_probe_review_bad_bootstrap(tmp_path: Path) -> None:
    code, out = cli("probe-review", "--run-dir", tmp_path, "--bootstrap", "-1")
    _one_error(code, out, "--bootstrap must be")


def test_cli_verify_bad_concurrency_leaves_no_lock(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    code, out = cli("verify", "--run-dir", run_dir, "--model", "ref:oracle", "--concurrency", "0")
    _one_error(code, out, "--concurrency must be")
    assert list(run_dir.rglob("*")) == []


def test_cli_pilot_unknown_responder_before_anything_runs(tmp_path: Path) -> None:
    run_dir = tmp_path / "pilot1"
    code, out = cli("pilot", "--domain", "cardio", "--responder", "bogus", "--run-dir", run_dir)
    _one_error(code, out, "unknown responder 'bogus'")
    assert not run_dir.exists() and "-- compile" not in out


def test_cli_compile_a_domain_name_too_long_for_the_disk(tmp_path: Path) -> None:
    code, out = cli("compile", "--domain", "x" * 5000, "--out", tmp_path / "g")
    assert code == 2 and "Traceback" not in out, out


def test_cli_compile_out_onto_a_file(tmp_path: Path) -> None:
    afile = tmp_path / "afile"
    afile.write_text("keep")
    code, out = cli("compile", "--domain", "cardio", "--out", afile, "--force")
    assert code == 2 and "Traceback" not in out and str(afile) in out, out
    assert afile.read_text() == "keep"


def test_cli_extract_run_dir_that_is_a_file_is_one_message(capsys) -> None:
    """cli.extract: `--run-dir` naming a file raised NotADirectoryError from a mkdir deep in
    extract (it needs Neo4j, so the boundary is tested directly): the command line's error
    boundary turns what the disk refuses into one message, exit 2."""
    import errno

    import typer

    from kgbench.cliutil import error_boundary

    with pytest.raises(typer.Exit) as caught, error_boundary():
        raise NotADirectoryError(errno.ENOTDIR, "Not a directory", "/x/afile/contexts/SCN_0001")
    assert caught.value.exit_code == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "/x/afile/contexts/SCN_0001: Not a directory" in err
    with pytest.raises(ZeroDivisionError), error_boundary():  # a bug keeps its traceback
        raise ZeroDivisionError


def test_cli_generate_out_in_proc(tmp_path: Path) -> None:
    code, out = cli("generate", "--domain", "cardio", "--out", "/proc/version")
    assert code == 2 and "Traceback" not in out, out


def test_neo_userinfo_no_password_in_any_message() -> None:
    canary = "PwCanary-7e3f9a"
    settings = ConnectionSettings(uri=f"bolt://neo4j:{canary}@127.0.0.1:1", password=canary)
    with pytest.raises(ServiceError) as caught:
        open_driver(settings, timeout=2)
    assert canary not in str(caught.value) and "bolt://***@127.0.0.1:1" in str(caught.value)
    env = {"NEO4J_URI": f"bolt://neo4j:{canary}@127.0.0.1:1", "NEO4J_PASSWORD": canary}
    code, out = cli("load", "--domain", "cardio", env=env)
    assert code == 2 and canary not in out and "Traceback" not in out, out


def test_every_declared_range_is_finite_and_ordered() -> None:
    for name, bounds in RANGES.items():
        assert bounds.low <= bounds.high and bounds.high < float("inf"), name
    assert check("x", None, "rate") is None
    with pytest.raises(UserError, match=r"x must be a finite number from 0\.0 to 1\.0, got nan"):
        check("x", float("nan"), "rate")
    with pytest.raises(UserError, match="an integer"):
        check("x", 1.5, "replicates")
    with pytest.raises(UserError):
        check("x", True, "replicates")
