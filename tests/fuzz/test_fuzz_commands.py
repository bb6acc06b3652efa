"""Fuzz every command (issue 28 item 6): one hypothesis target per CLI command, over hostile
argv values and hostile input-file contents (JSON, JSON Lines, CSV, YAML), each asserting:

- the exit code is 0 or 2 (never 1, never an uncaught exception: no traceback);
- on exit 2, nothing was written (the workspace's files are as they were; flock files,
  which hold no data, excepted).

Every command runs in-process (typer's CliRunner) against a private world: a copy of
generated/cardio (with its releases) and the mini domain compiled into a temporary
generated/, a mini run folder answered by the oracle, and NEO4J_URI pointing at a closed
port, so the commands that need Neo4j meet a refused connection, fast. `neo4j start` and
`neo4j build` are left out (they start a JVM or a Maven build); `serve-reference` always gets
an unknown fault kind, so it never starts serving.

`make test` runs a few derandomized examples per target; `make fuzz` (KGBENCH_FUZZ_SECONDS,
KGBENCH_FUZZ_RANDOM=1) runs as many fresh ones as fit its seconds per target. A failure found becomes a regression test
beside the module it concerns.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from compiler.api import compile_domain
from kgbench.cli import app
from kgbench.locations import CHECKOUT as REPO

from .settings import budget
from .strategies import mutated, near_text

MINI = REPO / "tests" / "fixtures" / "domains" / "mini"
MINI_RUN = REPO / "tests" / "evaluation" / "fixtures" / "mini_run"
KNOWN_DOMAINS = {"cardio", "afib", "mini", "toy"}
# CPU ms per example (tests/fuzz/README.md): 62-170 across the commands; make test runs 1/64 of
# a cheap reader target's examples.
COMMAND_FUZZ = budget(ms=85, divisor=64)

# Values a user (or a script gone wrong) types on a command line.
HOSTILE_VALUES = [
    "",
    " ",
    "-1",
    "0",
    "nan",
    "inf",
    "-inf",
    "1e309",
    "9" * 5000,
    "x" * 5000,
    "../../etc/passwd",
    "/dev/zero",
    "/proc/self",
    "a\nb",
    "2.0.1\n",
    "\x1b[2J\x1b]0;pwned\x07",
    "\u2028",
    "--help-me",
    "C9",
    "C4:C4",
    "SCN_9999",
    "ref:bogus",
    "openai:",
    "noisy-oracle-nan",
]
hostile = st.one_of(st.sampled_from(HOSTILE_VALUES), near_text.filter(lambda t: "\x00" not in t))
number = st.one_of(
    st.integers(-(10**6), 10**7).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "inf", "-1", "0", "1", "9" * 5000, "1e309", "0x10"]),
)
BULK_FLAGS = [[], ["--bulk"], ["--bulk", "--force"], ["--bulk", "--force", "--yes"], ["--force"]]
BULK_FLAGS += [["--bulk", "--yes"], ["--yes"]]
not_a_domain = hostile.filter(lambda t: t.strip() not in KNOWN_DOMAINS)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A private world for the commands: generated/ copies, a run folder, input files."""
    root = tmp_path_factory.mktemp("world")
    generated = root / "generated"
    shutil.copytree(REPO / "generated" / "cardio", generated / "cardio")
    compile_domain(MINI, out_root=generated, force=True)
    run = root / "run"
    shutil.copytree(MINI_RUN, run)
    patch = pytest.MonkeyPatch()
    patch.setenv("NEO4J_URI", "bolt://127.0.0.1:1")
    patch.setenv("NEO4J_PASSWORD", "fuzz")
    patch.setenv("OPENAI_API_KEY", "sk-fuzz")
    runner = CliRunner()
    for args in (
        ["prompts", "--run-dir", str(run), "--domain", str(generated / "mini")],
        ["run", "--run-dir", str(run), "--model", "ref:oracle", "--no-cache"],
        ["score", "--run-dir", str(run)],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, result.output
    scenarios = (generated / "cardio" / "scenarios" / "scenarios.jsonl").read_bytes()
    reviews = (REPO / "domains" / "cardio" / "reviews.csv").read_bytes()
    yield {
        "root": root,
        "generated": generated,
        "run": run,
        "release": generated / "cardio" / "gold" / "2.0.0",
        "scenarios": b"\n".join(scenarios.split(b"\n")[:3]) + b"\n",
        "reviews": b"\n".join(reviews.split(b"\n")[:4]) + b"\n",
        "inputs": root / "inputs",
        "out": root / "out",
    }
    patch.undo()


def _snapshot(root: Path, skip: Path) -> dict[str, str]:
    """Every file under `root` (outside `skip`) and its content hash; lock files excepted."""
    out = {}
    for path in sorted(root.rglob("*")):
        if skip in path.parents or path.is_dir() or path.name.endswith(".lock"):
            continue
        try:
            out[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            out[str(path.relative_to(root))] = "unreadable"
    return out


def _input(world: dict[str, Any], name: str, data: bytes) -> str:
    folder = world["inputs"]
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_bytes(data)
    return str(path)


def _jsonl_lines(data: st.DataObject, base: bytes) -> bytes:
    """A scenario file: the real lines mutated, or hostile JSON in their place."""
    kind = data.draw(st.sampled_from(["mutated", "bigint", "deep", "nan", "text"]))
    if kind == "bigint":
        return base.replace(b'"age": ', b'"age": ' + b"9" * 5000 + b"0 * ", 1)
    if kind == "deep":
        return b"[" * 5000 + b"]" * 5000 + b"\n"
    if kind == "nan":
        return base.replace(b'"age": ', b'"age": NaN, "x": ', 1)
    if kind == "text":
        return data.draw(near_text).encode("utf-8", "surrogatepass")
    return data.draw(mutated(base))


def _csv(data: st.DataObject, base: bytes) -> bytes:
    kind = data.draw(st.sampled_from(["mutated", "huge", "nul", "formula"]))
    if kind == "huge":
        return base + b"SCN_0001," + b"f" * 64 + b",accept,me,2026-12-01," + b"n" * 200_000 + b"\n"
    if kind == "nul":
        return base.replace(b"kgbench", b"kg\x00bench", 1)
    if kind == "formula":
        return base.replace(b"kgbench maintainers", b'=HYPERLINK("http://x")', 1)
    return data.draw(mutated(base))


def _study_yaml(data: st.DataObject) -> bytes:
    """A study file whose numbers are hostile; its release path does not exist, so even a
    file that passes every other check stops there (nothing runs)."""
    text = (
        "name: fuzz\ndomain: cardio\nrelease:\n  path: /nonexistent/release\n"
        f"conditions: [C1]\nreplicates: {data.draw(number)}\n"
        f"sampling:\n  temperature: {data.draw(number)}\n"
        f"statistics:\n  bootstrap: {data.draw(number)}\n"
        "models:\n  - name: a\n    kind: reference\n    responder: noisy-oracle\n"
        f"    error_rate: {data.draw(number)}\n"
    ).encode("utf-8", "surrogatepass")
    return data.draw(st.one_of(st.just(text), mutated(text)))


def argv(command: str, data: st.DataObject, world: dict[str, Any]) -> list[str]:
    """Hostile arguments for one command (its option values and input files)."""
    d, out, run = data.draw, str(world["out"]), str(world["run"])
    # the world's copy of the example domain, by its folder: a name means the project's
    # generated/<name>/, which no fuzzed command may write
    example = str(world["generated"] / "cardio")

    def opt(flag: str, values: st.SearchStrategy[str]) -> list[str]:
        return [flag, d(values)] if d(st.booleans()) else []

    if command == "compile":
        return ["compile", "--domain", d(not_a_domain), "--out", f"{out}/g"]
    if command == "validate":
        return ["validate", "--domain", d(not_a_domain)]
    if command == "pilot":
        return [
            "pilot",
            "--domain",
            d(not_a_domain),
            "--responder",
            d(hostile),
            "--run-dir",
            f"{out}/p",
        ]
    if command == "export":
        return ["export", "--domain", d(not_a_domain), "--format", d(hostile), "--out", f"{out}/x"]
    if command == "study":
        config = _input(world, "study.yaml", _study_yaml(data))
        return ["study", "--domain", example, "--config", config, "--run-dir", f"{out}/s"]
    if command == "prompts":
        return [
            "prompts",
            "--run-dir",
            d(st.sampled_from([run, f"{out}/nope", "/dev/zero"])),
            "--domain",
            d(not_a_domain),
        ]
    if command == "run":
        return [
            "run", "--run-dir", run, "--model", d(st.sampled_from(["ref:oracle", "ref:first-option"]) | hostile),
            "--limit", "2", "--no-cache",
            *opt("--replicates", number), *opt("--temperature", number), *opt("--timeout", number),
            *opt("--price-in", number), *opt("--concurrency", number), *opt("--log-name", hostile),
        ]  # fmt: skip
    if command == "score":
        return [
            "score", "--run-dir", run, *opt("--bootstrap", number), *opt("--pair", hostile),
            *opt("--log-name", hostile), *opt("--domain", hostile), *opt("--seed", number),
        ]  # fmt: skip
    if command == "report":
        return ["report", "--run-dir", run, *opt("--log-name", hostile), *opt("--model", hostile)]
    if command == "extract":
        return [
            "extract",
            "--domain",
            d(st.sampled_from([example]) | hostile),
            "--run-dir",
            f"{out}/e",
            *opt("--scenario", hostile),
            *opt("--condition", hostile),
        ]
    if command == "load":
        return [
            "load",
            "--domain",
            d(st.sampled_from([example]) | hostile),
            *opt("--batch-size", number),
            # NEO4J_URI names a server kgbench does not manage: --bulk is refused before any
            # count or erase, and --force / --yes without what they qualify are usage errors
            *d(st.sampled_from(BULK_FLAGS)),
        ]
    if command == "generate":
        return [
            "generate", "--domain", d(st.sampled_from([example]) | hostile),
            *opt("--per-category", number), *opt("--seed", number), "--out", f"{out}/gen.jsonl",
        ]  # fmt: skip
    if command in ("check-scenarios", "audit", "explain"):
        path = _input(world, "s.jsonl", _jsonl_lines(data, world["scenarios"]))
        if command == "check-scenarios":
            return ["check-scenarios", path, "--domain", example]
        if command == "audit":
            return ["audit", "--domain", example, "--scenarios", path]
        return [
            "explain",
            d(st.sampled_from(["SCN_0001"]) | hostile),
            "--domain",
            example,
            "--scenarios",
            path,
        ]
    if command == "review":
        reviews = _input(world, "reviews.csv", _csv(data, world["reviews"]))
        return ["review", "--domain", example, "--reviews", reviews, "--out", f"{out}/r"]
    if command == "publish":
        scenarios = _input(world, "p.jsonl", _jsonl_lines(data, world["scenarios"]))
        return [
            "publish",
            "--domain",
            example,
            "--release",
            d(st.sampled_from(["3.0.0"]) | hostile),
            "--scenarios",
            scenarios,
        ]
    if command == "verify-release":
        copy = world["inputs"] / "release"
        if copy.exists():
            shutil.rmtree(copy)
        shutil.copytree(world["release"], copy)
        name = d(st.sampled_from(["scenarios.jsonl", "gold.jsonl", "manifest.json"]))
        (copy / name).write_bytes(d(mutated((copy / name).read_bytes())))
        return ["verify-release", str(copy), *opt("--digest", hostile)]
    if command == "dataset":
        copy = world["inputs"] / "release"
        if copy.exists():
            shutil.rmtree(copy)
        shutil.copytree(world["release"], copy)
        name = d(st.sampled_from(["scenarios.jsonl", "gold.jsonl", "manifest.json"]))
        (copy / name).write_bytes(d(mutated((copy / name).read_bytes())))
        return ["dataset", str(copy), "--out", f"{out}/dataset", *opt("--reviews", hostile)]
    if command == "pin-releases":
        return ["pin-releases", "--domain", d(not_a_domain)]
    if command == "probe":
        return [
            "probe", "--domain", example, "--model", d(st.sampled_from(["ref:oracle"]) | hostile),
            "--run-dir", f"{out}/probe", "--limit-roots", "1",
            *opt("--bootstrap", number), *opt("--temperature", number), *opt("--concurrency", number),
        ]  # fmt: skip
    if command == "probe-review":
        ratings = _input(
            world,
            "ratings.csv",
            _csv(data, b"model,root_id,graph_sha256,reviewer,accuracy,comprehensiveness,comment\n"),
        )
        return [
            "probe-review",
            "--run-dir",
            f"{out}/probe",
            "--ratings",
            ratings,
            *opt("--bootstrap", number),
        ]
    if command == "verify":
        return [
            "verify",
            "--run-dir",
            run,
            "--model",
            d(st.sampled_from(["ref:oracle"]) | hostile),
            *opt("--concurrency", number),
            *opt("--condition", hostile),
        ]
    if command == "explain-run":
        return ["explain-run", d(hostile), "--run-dir", run, *opt("--model", hostile)]
    if command == "serve-reference":
        return [
            "serve-reference", *opt("--port", number), *opt("--latency-ms", number),
            *opt("--fault-rate", number), *opt("--host", hostile), "--faults", "bogus-" + d(near_text),
        ]  # fmt: skip
    if command in ("neo4j status", "neo4j stop"):
        return [*command.split(), d(hostile.filter(lambda t: not t.startswith("-")))]
    raise AssertionError(f"no argv strategy for {command}")


COMMANDS = [
    "compile", "validate", "pilot", "export", "study", "prompts", "run", "score", "report",
    "extract", "load", "generate", "check-scenarios", "audit", "explain", "review", "publish",
    "verify-release", "dataset", "pin-releases", "probe", "probe-review", "verify", "explain-run",
    "serve-reference", "neo4j status", "neo4j stop",
]  # fmt: skip
LEFT_OUT = {"neo4j start", "neo4j build"}  # they start a JVM or a Maven build


def test_every_command_has_a_target() -> None:
    from tests.test_cli import COMMANDS as ALL

    assert {" ".join(p) for p in ALL} == set(COMMANDS) | LEFT_OUT


@pytest.mark.parametrize("command", COMMANDS)
@COMMAND_FUZZ
@given(data=st.data())
def test_any_arguments_and_input_files_exit_0_or_2(world, command: str, data) -> None:
    args = argv(command, data, world)
    before = _snapshot(world["root"], world["inputs"])
    result = CliRunner().invoke(app, args)
    exception = result.exception
    if isinstance(exception, SystemExit):
        exception = None
    assert exception is None, (args, result.output[-2000:], repr(exception))
    assert result.exit_code in (0, 2), (args, result.exit_code, result.output[-2000:])
    assert "Traceback" not in result.output, (args, result.output[-2000:])
    if result.exit_code == 2:
        after = _snapshot(world["root"], world["inputs"])
        changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
        assert not changed, (args, sorted(changed)[:10], result.output[-1000:])
