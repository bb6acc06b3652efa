"""Numbers in a study file are checked where they enter (reliability review 2026-12:
st.rate-nan, st.replicates-bigint): NaN passed the schema's [0, 1] check and silently ran
another baseline; a 5,000-digit integer was a ValueError traceback."""

from __future__ import annotations

import pytest

from tests.study.test_study_config import BASE, invoke

NOISY = "    responder: noisy-oracle\n    error_rate: {rate}"

CASES = [
    ("st.rate-nan", "    responder: ungrounded", NOISY.format(rate=".nan"), 14, "error_rate"),
    ("rate-inf", "    responder: ungrounded", NOISY.format(rate=".inf"), 14, "error_rate"),
    ("st.replicates-bigint", "replicates: 1", "replicates: " + "9" * 5000, 6, None),
    ("temperature-nan", "  - name: b", "  - name: b\n    temperature: .nan", 12, "temperature"),
]


@pytest.mark.parametrize(("case", "old", "new", "line", "field"), CASES, ids=[c[0] for c in CASES])
def test_a_number_out_of_its_range_is_one_located_error(
    tmp_path, release, case, old, new, line, field
) -> None:
    text = BASE.replace(old, new).replace("{release}", str(release))
    config = tmp_path / "study.yaml"
    config.write_text(text)
    run_dir = tmp_path / "run"
    result = invoke(config, run_dir)
    assert result.exit_code == 2, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    where = f"study.yaml, line {line}" + (f", field '{field}'" if field else ":")
    assert where in lines[0], lines[0]
    assert "Traceback" not in result.output
    assert not run_dir.exists()


def _prepared_output(root, release) -> str:
    import io

    from rich.console import Console

    from bench.study_bench import study_yaml, synthetic_contexts
    from harness.compiled import CompiledDomain
    from harness.study.run import StudyPaths, claim, prepare
    from kgbench.cli.study import load_study

    root.mkdir(parents=True, exist_ok=True)
    path = root / "study.yaml"
    path.write_text(
        study_yaml(
            release, [("o", "oracle", None, None), ("g", "ungrounded", None, None)], 1, ("C1", "C4")
        )
    )
    config = load_study(path, "cardio")
    compiled = CompiledDomain.open("cardio")
    paths = StudyPaths(root / "run")
    buffer = io.StringIO()
    claim(config, paths)
    synthetic_contexts(config, compiled, paths.run_dir)
    prepare(config, paths, compiled, Console(file=buffer, width=400))
    return buffer.getvalue()


def test_st_path_tampered_an_unpinned_release_copy_is_warned_about(tmp_path, release) -> None:
    """st.path-tampered: a release given by path, copied away from its index and without a
    digest, can be a rehashed tamper; the study says it could not check that."""
    import shutil

    copy = tmp_path / "elsewhere" / "2.0.0"
    shutil.copytree(release, copy)
    out = _prepared_output(tmp_path, copy)
    assert "warning: release" in out and "pin `release.digest`" in out
    indexed = _prepared_output(tmp_path / "indexed", release)  # beside its index: no warning
    assert "warning: release" not in indexed
