"""The CLI commands as the main CLI will mount them, and the standalone server."""

from __future__ import annotations

import io
import subprocess
import sys

from rich.console import Console
from typer.testing import CliRunner

from harness.runner.api import RunConfig, run_model
from kgbench.cli import app

from .conftest import fast_env, make_run_folder


def _app():
    return app


def test_run_command_prints_the_log_path_and_a_summary(tmp_path):
    folder = make_run_folder(tmp_path / "run", 5)
    result = CliRunner().invoke(
        _app(), ["run", "--run-dir", str(folder), "--model", "ref:ungrounded"]
    )
    assert result.exit_code == 0, result.output
    assert "ref-ungrounded.jsonl" in result.stdout
    assert "requests planned 5: ok 5" in result.stderr


def test_user_errors_exit_2_with_one_message(tmp_path, monkeypatch):
    folder = make_run_folder(tmp_path / "run", 2)
    monkeypatch.delenv("OPENAI_API_KEY")
    runner = CliRunner()
    cases = [
        (["--model", "openai:gpt-4o"], "OPENAI_API_KEY is not set"),
        (["--model", "claude"], "not a model spec"),
        (["--model", "ref:oracle", "--batch"], "--batch needs an openai: model"),
    ]
    for args, message in cases:
        result = runner.invoke(_app(), ["run", "--run-dir", str(folder), *args])
        assert result.exit_code == 2, result.output
        assert message in result.stderr and "Traceback" not in result.output
    bad = runner.invoke(_app(), ["serve-reference", "--host", "0.0.0.0", "--port", "0"])
    assert bad.exit_code == 2 and "not a loopback address" in bad.stderr


def test_progress_bar_on_a_terminal(tmp_path):
    folder = make_run_folder(tmp_path / "run", 15)
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=160)
    result = run_model(RunConfig(run_dir=folder, model="ref:context-reader"), console)
    assert result.tally.final_ok == 15 and "15/15" in out.getvalue()


def test_serve_reference_standalone_answers_the_openai_client():
    from openai import OpenAI

    proc = subprocess.Popen(
        [sys.executable, "-m", "kgbench", "serve-reference", "--port", "0", "--latency-ms", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=fast_env(),
    )
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        client = OpenAI(base_url=url, api_key="sk-test-CANARY-123456", max_retries=0)
        assert {m.id for m in client.models.list()} >= {"oracle", "context-reader"}
        text = "# Scenario S1\nx\n# Candidate options\n- Apixaban\n- Warfarin\n"
        answer = client.chat.completions.create(
            model="ungrounded", messages=[{"role": "user", "content": text}]
        )
        assert '"recommended_intervention": "Apixaban"' in answer.choices[0].message.content
        assert answer.usage.prompt_tokens == len(text) // 4
    finally:
        proc.terminate()
        proc.wait(timeout=10)
