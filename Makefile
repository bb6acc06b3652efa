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

FUZZ_EXAMPLES ?= 5000

.PHONY: help venv compile compile-all validate test lint format bench fuzz neo4j neo4j-stop pilot clean

help:
	@echo "make compile DOMAIN=cardio   compile a domain into generated/<domain>/"
	@echo "make test                    lint, check generated/ is fresh, run the whole suite"
	@echo "make bench                   run the benchmarks under bench/"
	@echo "make fuzz                    the fuzz targets, long and random (FUZZ_EXAMPLES=$(FUZZ_EXAMPLES))"
	@echo "make neo4j                   build and start the embedded Neo4j"
	@echo "make pilot DOMAIN=cardio     the whole pipeline end to end with the context-reader baseline"

# The virtual environment is rebuilt whenever the pinned dependencies change.
$(STAMP): pyproject.toml requirements.lock
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip==26.3
	$(BIN)/python -m pip install -q -c requirements.lock -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP)

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

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

test: $(STAMP) lint
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)

# The fuzz targets of tests/fuzz/ run briefly (and derandomized) in `make test`; here each
# gets FUZZ_EXAMPLES fresh random inputs. Failures are kept in .hypothesis/ and replayed first.
fuzz: $(STAMP)
	time KGBENCH_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) KGBENCH_FUZZ_RANDOM=1 \
		$(BIN)/python -m pytest tests/fuzz -q --hypothesis-show-statistics $(PYTEST_ARGS)

neo4j: $(STAMP)
	$(KG) neo4j start

pilot: $(STAMP)
	$(need-domain)
	$(KG) pilot --domain $(DOMAIN)

neo4j-stop: $(STAMP)
	$(KG) neo4j stop

clean:
	rm -rf .cache/neo4j .pytest_cache .ruff_cache
