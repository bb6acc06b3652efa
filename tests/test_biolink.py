"""Compile-time Biolink checks, knowledge levels and the prefix map (bad input and defaults).

Every bad input is one message naming file, line and field, exit code 2 from the command
line, and nothing written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from compiler.api import check_domain, compile_domain, validate_domain
from kgbench.cli import app
from kgbench.errors import UserError

SCHEMA = "schema.yaml"


def _edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {path.name}"
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def _cli_fails_writing_nothing(domain: Path, tmp_path: Path, *expected: str) -> str:
    """The compile command refuses with exit 2, one message, and writes nothing."""
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["compile", "--domain", str(domain), "--out", str(out)])
    assert result.exit_code == 2, result.output
    for text in expected:
        assert text in result.output, result.output
    assert not out.exists()
    return result.output


# --- Biolink terms ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "class_uri: biolink:Disease",
            "class_uri: biolink:Diseaze",
            r"field 'class_uri': 'biolink:Diseaze' is not a class of the Biolink Model 4\.4\.6 "
            r"\(did you mean 'biolink:Disease'\?\)",
        ),
        (
            "class_uri: biolink:Disease",
            "class_uri: biolink:Human",
            r"field 'class_uri': 'biolink:Human' is deprecated in the Biolink Model 4\.4\.6",
        ),
        (
            "class_uri: biolink:Disease",
            "class_uri: biolink:InformationContentEntity",
            r"field 'class_uri': 'biolink:InformationContentEntity' is abstract in the Biolink "
            r"Model 4\.4\.6",
        ),
        (
            "meaning: biolink:physically_interacts_with",
            "meaning: biolink:binds",
            r"field 'meaning': predicate TARGETS: 'biolink:binds' is deprecated",
        ),
        (
            "meaning: biolink:physically_interacts_with",
            "meaning: biolink:physically_interacts",
            r"field 'meaning': predicate TARGETS: 'biolink:physically_interacts' is not a "
            r"predicate of the "
            r"Biolink Model 4\.4\.6 \(did you mean 'biolink:physically_interacts_with'\?\)",
        ),
        (
            "meaning: biolink:actively_involved_in",
            "meaning: biolink:participates_in",
            r"field 'meaning': predicate PARTICIPATES_IN: 'biolink:participates_in' is not "
            r"canonical .*"
            r"biolink:has_participant",
        ),
        (
            '"object_direction_qualifier: increased"',
            '"object_direction_qualifier: upwards"',
            r"field 'biolink_qualifier': predicate CAUSES_INCREASE_IN: 'upwards' is not a value "
            r"of object_direction_qualifier \(biolink:DirectionQualifierEnum\)",
        ),
        (
            '"object_direction_qualifier: increased"',
            '"object_direction_qualifer: increased"',
            r"field 'biolink_qualifier': predicate CAUSES_INCREASE_IN: qualifier "
            r"'object_direction_qualifer' is not a slot of the Biolink Model 4\.4\.6 "
            r"\(did you mean 'object_direction_qualifier'\?\)",
        ),
    ],
)
def test_unknown_or_deprecated_biolink_terms_are_errors(
    mini_copy: Path, tmp_path: Path, old: str, new: str, message: str
) -> None:
    _edit(mini_copy / SCHEMA, old, new)
    with pytest.raises(UserError) as err:
        check_domain(mini_copy)
    text = str(err.value)
    assert len(text.splitlines()) == 1, text
    assert re.search(r"schema\.yaml, line \d+, " + message, text), text
    _cli_fails_writing_nothing(mini_copy, tmp_path, "schema.yaml, line")


def test_domain_and_range_violations_are_warnings_a_domain_may_accept(mini_copy: Path) -> None:
    # biolink:Procedure is outside the domain of treats, has_adverse_event, contraindicated_in
    _edit(mini_copy / SCHEMA, "class_uri: biolink:Treatment", "class_uri: biolink:Procedure")
    warnings = check_domain(mini_copy).warnings
    flagged = sorted(
        re.findall(r"predicate (\w+) \(biolink:\w+\) allows a Intervention", " ".join(warnings))
    )
    assert flagged == ["CONTRAINDICATED_FOR", "INDICATED_FOR", "MAY_CAUSE_ADVERSE_EFFECT"]
    assert all("[biolink, accept it in domain.yaml]" in w for w in warnings)
    accept = "".join(
        f"    - {{predicate: {p}, side: subject, class: Intervention, note: test}}\n"
        for p in flagged
    )
    text = (mini_copy / "domain.yaml").read_text()
    (mini_copy / "domain.yaml").write_text(text + "biolink:\n  accepted_violations:\n" + accept)
    assert not check_domain(mini_copy).warnings
    # an acceptance that matches nothing is stale: an error on its line
    _edit(mini_copy / SCHEMA, "class_uri: biolink:Procedure", "class_uri: biolink:Treatment")
    with pytest.raises(
        UserError, match=r"domain\.yaml, line \d+, field 'accepted_violations': accepted violation"
    ):
        check_domain(mini_copy)


def test_the_shipped_domains_have_no_biolink_findings() -> None:
    for name in ("cardio", "afib"):
        assert not [w for w in check_domain(name).warnings if "[biolink" in w], name


def test_manifest_reports_the_biolink_model(tmp_path: Path) -> None:
    mini = Path(__file__).parent / "fixtures" / "domains" / "mini"
    result = compile_domain(mini, out_root=tmp_path, force=True)
    manifest = json.loads((result.out_dir / "manifest.json").read_text())
    assert manifest["biolink_model_version"] == "4.4.6"
    assert manifest["compiler"]["biolink-model"] == "4.4.6"


# --- knowledge level and agent type -------------------------------------------------------


def test_knowledge_level_defaults_follow_the_strongest_source() -> None:
    domain = validate_domain("cardio")
    by_id = {e.evidence_id: e.source_type for e in domain.evidence_sources}
    sources: dict[str, set[str]] = {}
    for s in domain.supports:
        sources.setdefault(s.assertion_id, set()).add(by_id[s.evidence_id])
    for a in domain.assertions:
        kinds = sources.get(a.assertion_id, set())
        assert a.agent_type == "manual_agent"
        if not kinds:
            assert a.knowledge_level == "not_provided", a.assertion_id
        elif kinds == {"cohort"}:
            assert a.knowledge_level == "statistical_association", a.assertion_id
        else:
            assert a.knowledge_level == "knowledge_assertion", a.assertion_id
    assert {a.knowledge_level for a in domain.assertions} >= {
        "knowledge_assertion",
        "not_provided",
    }


def test_a_row_may_override_knowledge_level_and_agent_type(mini_copy: Path) -> None:
    path = mini_copy / "data" / "assertions.csv"
    lines = path.read_text().splitlines()
    lines[0] += ",knowledge_level,agent_type"
    lines[1] += ",prediction,computational_model"
    for i in range(2, len(lines)):
        lines[i] += ",,"
    path.write_text("\n".join(lines) + "\n")
    domain = validate_domain(mini_copy)
    first = domain.assertions[0]
    assert (first.knowledge_level, first.agent_type) == ("prediction", "computational_model")
    assert domain.assertions[1].knowledge_level == "knowledge_assertion"
    path.write_text(path.read_text().replace(",prediction,", ",guess,"))
    with pytest.raises(UserError, match=r"line 2, field 'knowledge_level': expected one of"):
        check_domain(mini_copy)


# --- prefixes and cross-references --------------------------------------------------------


@pytest.mark.parametrize(
    ("xref", "message"),
    [
        (
            "FOO:123",
            r"data/entities\.csv, line 2, field 'xrefs': undeclared CURIE prefix 'FOO' in "
            r"'FOO:123'; expected one of MONDO, HP, GO, CHEBI, DRUGBANK, UniProtKB",
        ),
        (
            "DrugBank:DB00722",
            r"undeclared CURIE prefix 'DrugBank' in 'DrugBank:DB00722' \(did you mean 'DRUGBANK'\?\)",
        ),
        (
            "DRUGBANK:00722",
            r"data/entities\.csv, line 2, field 'xrefs': 'DRUGBANK:00722' does not match the "
            r"DRUGBANK pattern \^DB\[0-9\]\{5\}\$",
        ),
    ],
)
def test_xrefs_follow_the_prefix_map(
    mini_copy: Path, tmp_path: Path, xref: str, message: str
) -> None:
    _edit(mini_copy / "data" / "entities.csv", "DRUGBANK:DB00722", xref)
    with pytest.raises(UserError) as err:
        check_domain(mini_copy)
    assert re.search(message, str(err.value)), str(err.value)
    _cli_fails_writing_nothing(mini_copy, tmp_path, "data/entities.csv, line 2, field 'xrefs'")


def test_the_xrefs_table_adds_to_the_entities_column(mini_copy: Path) -> None:
    table = mini_copy / "data" / "xrefs.csv"
    table.write_text("entity_id,xref\nDRG_0001,CHEBI:43755\n")
    _edit(
        mini_copy / "domain.yaml",
        "  intervention_classes: data/intervention_classes.csv\n",
        "  intervention_classes: data/intervention_classes.csv\n  xrefs: data/xrefs.csv\n",
    )
    entity = {e.id: e for e in validate_domain(mini_copy).entities}["DRG_0001"]
    assert entity.xrefs == ("DRUGBANK:DB00722", "CHEBI:43755")
    for row, message in (
        (
            "DRG_0001,DRUGBANK:DB00722",
            "line 2, field 'xref': 'DRUGBANK:DB00722' is already an xref",
        ),
        ("DRG_0099,CHEBI:43755", "line 2, field 'xref': unknown entity 'DRG_0099'"),
        ("DRG_0001,CHEBI:043755", "line 2, field 'xref': 'CHEBI:043755' does not match the CHEBI"),
    ):
        table.write_text(f"entity_id,xref\n{row}\n")
        with pytest.raises(UserError, match=re.escape(message)):
            check_domain(mini_copy)


def test_the_domain_prefix_must_be_declared(mini_copy: Path, tmp_path: Path) -> None:
    _edit(
        mini_copy / "domain.yaml",
        "version: 0.1.0\n",
        "version: 0.1.0\ncurie_prefix: kgbench.other\n",
    )
    with pytest.raises(
        UserError,
        match=r"domain\.yaml, line \d+, field 'curie_prefix': the domain's CURIE prefix "
        r"'kgbench\.other' is not declared in its schema",
    ):
        check_domain(mini_copy)
    _edit(mini_copy / "domain.yaml", "curie_prefix: kgbench.other", "curie_prefix: MONDO")
    with pytest.raises(UserError, match="is a standard vocabulary's prefix"):
        check_domain(mini_copy)


def test_a_missing_biolink_wheel_is_a_user_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """An environment without the pinned wheel says how to fix it (exit 2), never a traceback."""
    from importlib import metadata

    from compiler import biolink
    from kgbench.errors import UserError

    def missing(name: str):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(metadata, "distribution", missing)
    with pytest.raises(UserError, match="make venv") as info:
        biolink.package_version()
    assert info.value.exit_code == 2
