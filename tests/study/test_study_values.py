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
