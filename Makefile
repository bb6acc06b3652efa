# kgbench: `make compile DOMAIN=cardio` and `make test` work on a fresh clone.
SHELL := /bin/bash
# No target picks a domain for you: name it (make compile DOMAIN=<name>, a folder under domains/).
DOMAIN ?=
need-domain = $(if $(strip $(DOMAIN)),,$(error name the domain: make $@ DOMAIN=<name> (a folder under domains/)))
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
KG := $(BIN)/kgbench
STAMP := $(VENV)/.installed
# KGX lives in its own environment (its pins conflict with linkml's; see pyproject.toml).
KGX_VENV := .venv-kgx
KGX_STAMP := $(KGX_VENV)/.installed
# inspect-ai and lm-eval, for the harness adapters (kgbench/integrations/), in their own
# environment too: inspect-ai pins fsspec<=2026.6.0 and (through s3fs) python-dateutil<3,
# below requirements.lock's fsspec 2026.9.0 and python-dateutil 4.0.0.
EVALS_VENV := .venv-evals
EVALS_STAMP := $(EVALS_VENV)/.installed
# linkml-lint walks folders recursively, so it is given schema files: spec/declarations/ holds data.
SCHEMA_FILES := $(wildcard spec/*.yaml spec/study/*.yaml domains/*/schema/*.yaml)

# CPU seconds per fuzz target in `make fuzz` (38 targets: about 8 CPU minutes, under 10 minutes
# on 2 idle cores; tests/fuzz/README.md has the measured examples per target).
FUZZ_SECONDS ?= 12

.PHONY: help venv kgx-venv evals-venv compile compile-all validate test lint format bench bench-scale fuzz neo4j neo4j-stop pilot export kgx-validate clean

help:
	@echo "make compile DOMAIN=cardio   compile a domain into generated/<domain>/"
	@echo "make test                    lint, check generated/ is fresh, run the whole suite"
	@echo "make bench                   run the benchmarks under bench/"
	@echo "make bench-scale             4,000,000-assertion domain: validate, compile, bulk load, extract (11 min on 2 idle cores, up to 45 shared; ~13 GB disk)"
	@echo "make fuzz                    the fuzz targets, long and random (FUZZ_SECONDS=$(FUZZ_SECONDS) CPU s per target)"
	@echo "make neo4j                   build and start the embedded Neo4j"
	@echo "make pilot DOMAIN=cardio     the whole pipeline end to end with the context-reader baseline"
	@echo "  WITH_C5=1 ORDER_VARIANTS=1  ... also C5 (verify-and-revise) and the option presentations"
	@echo "                             (stops the Neo4j it started; PILOT_ARGS=--keep-neo4j keeps it)"
	@echo "make export DOMAIN=cardio    KGX and LinkML JSON exports under runs/export/<domain>/"
	@echo "make kgx-validate DOMAIN=cardio  kgx validate (offline) on the domain's KGX export"

# The virtual environment is rebuilt whenever the pinned dependencies change.
$(STAMP): pyproject.toml setup.py requirements.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip==26.3
	$(BIN)/python -m pip install -q -c requirements.lock -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP)

# `kgx validate` runs offline through tools/kgx/kgx_offline.py (KGX would download Biolink).
$(KGX_STAMP): pyproject.toml requirements-kgx.lock
	@test -x $(KGX_VENV)/bin/python || $(PYTHON) -m venv $(KGX_VENV)
	$(KGX_VENV)/bin/python -m pip install -q --upgrade pip==26.3
	$(KGX_VENV)/bin/python -m pip install -q -c requirements-kgx.lock --group kgx
	@touch $(KGX_STAMP)

kgx-venv: $(KGX_STAMP)

# kgbench (editable, its own pins) plus the `evals` group; requirements-evals.lock pins all.
$(EVALS_STAMP): pyproject.toml setup.py requirements-evals.lock
	@test -x $(EVALS_VENV)/bin/python || $(PYTHON) -m venv $(EVALS_VENV)
	$(EVALS_VENV)/bin/python -m pip install -q --upgrade pip==26.3
	$(EVALS_VENV)/bin/python -m pip install -q -c requirements-evals.lock -e . --group evals
	@touch $(EVALS_STAMP)

evals-venv: $(EVALS_STAMP)

compile: $(STAMP)
	$(need-domain)
	$(KG) compile --domain $(DOMAIN)

compile-all: $(STAMP)
	@for d in domains/*/; do $(KG) compile --domain $$(basename $$d) || exit $$?; done

validate: $(STAMP)
	$(need-domain)
	$(KG) validate --domain $(DOMAIN)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@for f in $(SCHEMA_FILES); do echo "linkml-lint $$f"; $(BIN)/linkml-lint --config .linkmllint.yaml $$f || exit $$?; done

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# KGBENCH_REQUIRE_KGX / KGBENCH_REQUIRE_EVALS: the kgx validate tests and the inspect-ai and
# lm-eval adapter tests fail (instead of skipping) without .venv-kgx / .venv-evals.
test: $(STAMP) $(KGX_STAMP) $(EVALS_STAMP) lint
	KGBENCH_REQUIRE_KGX=1 KGBENCH_REQUIRE_EVALS=1 $(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)

# PrimeKG scale: too slow and too large for `make test` or `make bench` (SCALE_ARGS=--quick: 250k).
bench-scale: $(STAMP)
	$(BIN)/python -m bench.scale_bench $(SCALE_ARGS)

# The fuzz targets of tests/fuzz/ run briefly (and derandomized) in `make test`; here each
# gets as many fresh random inputs as fit FUZZ_SECONDS of CPU at its measured cost per example
# (tests/fuzz/settings.py), and the run ends with each target's examples and seconds.
# Failures are kept in .hypothesis/ and replayed first.
fuzz: $(STAMP)
	time KGBENCH_FUZZ_SECONDS=$(FUZZ_SECONDS) KGBENCH_FUZZ_RANDOM=1 \
		$(BIN)/python -m pytest tests/fuzz -q --hypothesis-show-statistics $(PYTEST_ARGS)

export: $(STAMP)
	$(need-domain)
	$(KG) export --domain $(DOMAIN) --format kgx
	$(KG) export --domain $(DOMAIN) --format linkml-json

kgx-validate: $(STAMP) $(KGX_STAMP)
	$(need-domain)
	$(BIN)/python tools/kgx/validate.py --domain $(DOMAIN)

neo4j: $(STAMP)
	$(KG) neo4j start

# WITH_C5=1 adds C5 (verify-and-revise); ORDER_VARIANTS=1 adds the option presentations.
pilot: $(STAMP)
	$(need-domain)
	$(KG) pilot --domain $(DOMAIN) $(if $(WITH_C5),--with-c5) $(if $(ORDER_VARIANTS),--order-variants) $(PILOT_ARGS)

neo4j-stop: $(STAMP)
	$(KG) neo4j stop

clean:
	rm -rf .cache/neo4j .cache/neo4j-cds .pytest_cache .ruff_cache
