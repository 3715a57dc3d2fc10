# Developer entry points. Everything runs inside a local virtualenv (.venv),
# created and (re)installed on demand: editing pyproject.toml triggers a reinstall.

PYTHON ?= python3
VENV   ?= .venv
SHARED ?= ../shared
SEED   ?=

PY := $(VENV)/bin/python
PYPROJECT_HASH := $(shell (sha256sum pyproject.toml 2>/dev/null || shasum -a 256 pyproject.toml) | cut -c1-12)
STAMP := $(VENV)/.stamp-$(PYPROJECT_HASH)
PIP_FLAGS ?= --disable-pip-version-check --no-input

.DEFAULT_GOAL := help
.DELETE_ON_ERROR:
.PHONY: help install play test lint fmt bench clean distclean

help:
	@echo "make play      play a seeded bot-vs-bot round, move by move (SEED=n to choose the seed)"
	@echo "make test      lint, type-check, run the tests and the conformance scenarios"
	@echo "make lint      ruff check + mypy"
	@echo "make fmt       ruff format + ruff check --fix"
	@echo "make bench     engine benchmarks"
	@echo "make install   create $(VENV) and install the project with dev and test tools"
	@echo "make clean     remove caches and build output (distclean also removes $(VENV))"

install: $(STAMP)

$(STAMP):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { \
		echo "error: '$(PYTHON)' must be Python 3.11 or newer (set PYTHON=...)" >&2; exit 1; }
	@if [ ! -x "$(PY)" ]; then \
		echo "$(PYTHON) -m venv $(VENV)"; \
		$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); \
			echo "error: '$(PYTHON) -m venv' failed; on Debian/Ubuntu install it with: apt-get install python3-venv" >&2; \
			exit 1; }; \
	fi
	$(PY) -m pip install $(PIP_FLAGS) --upgrade pip
	$(PY) -m pip install $(PIP_FLAGS) -e '.[dev,tests,local]'
	@rm -f $(VENV)/.stamp-*
	@touch $@

play: install
	$(PY) -m shared_engine.demo $(if $(SEED),--seed $(SEED))

test: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy
	$(PY) -m pytest
	@if [ -d "$(SHARED)/scenarios" ]; then \
		echo "$(PY) -m shared_engine.scenarios tests/scenarios $(SHARED)/scenarios"; \
		$(PY) -m shared_engine.scenarios tests/scenarios $(SHARED)/scenarios; \
	else \
		echo "skipping shared scenarios: $(SHARED)/scenarios not found"; \
	fi

lint: install
	$(PY) -m ruff check .
	$(PY) -m mypy

fmt: install
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

bench: install
	$(PY) -m benchmarks.engine

clean:
	rm -rf build dist *.egg-info .mypy_cache .ruff_cache .pytest_cache .hypothesis cdk.out artifacts
	find . -path ./$(VENV) -prune -o -type d -name __pycache__ -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
