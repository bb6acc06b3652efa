"""Licence and citation (issue 31, item 2): the code's licence file is the Apache-2.0 that
pyproject declares, CITATION.cff cites kgbench and the paper it implements, and each domain
declares a data licence that the compiler checks and the compiled manifest carries."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest
import yaml

from compiler.api import validate_domain
from kgbench.errors import UserError

REPO = Path(__file__).resolve().parents[1]
MINI = REPO / "tests" / "fixtures" / "domains" / "mini"


def test_the_license_file_is_the_apache_2_0_text_pyproject_declares():
    text = (REPO / "LICENSE").read_text()
    assert text.startswith(" " * 33 + "Apache License\n" + " " * 27 + "Version 2.0, January 2004")
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text and len(text.splitlines()) == 201
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert pyproject["project"]["license"] == "Apache-2.0"


def test_citation_cff_cites_kgbench_and_the_paper_without_an_invented_doi():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["type"] == "software"
    assert cff["license"] == "Apache-2.0" and cff["authors"]
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert cff["version"] == pyproject["project"]["version"]
    paper = cff["preferred-citation"]
    assert paper["title"] == (
        "Grounding Healthcare LLMs in a Causal Knowledge Graph: Framework, Metrics, "
        "and a Cardiovascular Pilot"
    )
    assert [a["family-names"] for a in paper["authors"]] == ["Mumtaz", "Noor", "Ahmed"]
    assert "doi" not in json.dumps(cff).lower()


@pytest.mark.parametrize("domain", ["cardio", "afib"])
def test_each_shipped_domain_declares_its_data_licence_and_the_compile_carries_it(domain):
    config = yaml.safe_load((REPO / "domains" / domain / "domain.yaml").read_text())
    manifest = json.loads((REPO / "generated" / domain / "manifest.json").read_text())
    assert config["data_license"] == manifest["data_license"] == "CC-BY-4.0"


def test_a_data_licence_that_is_not_an_spdx_data_licence_is_one_message(tmp_path):
    domain = tmp_path / "mini"
    shutil.copytree(MINI, domain)
    config = domain / "domain.yaml"
    config.write_text(
        config.read_text().replace("version: 0.1.0\n", "version: 0.1.0\ndata_license: CC-BY\n")
    )
    with pytest.raises(UserError) as caught:
        validate_domain(str(domain))
    message = str(caught.value)
    assert "domain.yaml, line 5, field 'data_license'" in message and "got 'CC-BY'" in message
    assert "CC-BY-4.0" in message
    config.write_text(
        config.read_text().replace("data_license: CC-BY\n", "data_license: CC0-1.0\n")
    )
    assert validate_domain(str(domain)).data_license == "CC0-1.0"
    config.write_text(config.read_text().replace("data_license: CC0-1.0\n", ""))
    assert validate_domain(str(domain)).data_license == ""  # optional: published as "unknown"
