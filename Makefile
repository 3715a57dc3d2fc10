# Developer entry points. Everything runs inside a local virtualenv (.venv),
# created and (re)installed on demand: editing pyproject.toml triggers a reinstall.

PYTHON ?= python3
VENV   ?= .venv
SHARED ?= ../shared
SEED   ?=

PY := $(VENV)/bin/python
PYPROJECT_HASH := $(shell (sha256sum pyproject.toml 2>/dev/null || shasum -a 256 pyproject.toml) | cut -c1-12)
STAMP := $(VENV)/.stamp-$(PYPROJECT_HASH)
PLAY_STAMP := $(VENV)/.stamp-play-$(PYPROJECT_HASH)
PIP_FLAGS ?= --disable-pip-version-check --no-input

.DEFAULT_GOAL := help
.DELETE_ON_ERROR:
.PHONY: help install play demo simulate test test-types test-tiers lint fmt bench cost figures train-bots synth deploy-check preflight fault-sweep clean distclean

help:
	@echo "make play      start the game locally (embedded AWS, web client, bots): PORT=8080"
	@echo "make demo      one seeded bot-vs-bot round, move by move (SEED=...)"
	@echo "make simulate  bots against bots: win rates and round figures (MATCHES=200 SEED=1)"
	@echo "make test      lint, type-check, run the tests and the conformance scenarios"
	@echo "make lint      ruff check + mypy"
	@echo "make fmt       ruff format + ruff check --fix"
	@echo "make bench     performance and cost figures in one table (QUICK=1: fewer repeats)"
	@echo "make figures   bot strength and decision times, engine vs peer, cold start as deployed"
	@echo "make train-bots  fit the search bots' evaluation on self-play (shared_engine/weights.py)"
	@echo "               (QUICK=1; PEER=DIR PEER_PYTHON=PY for the peer engine)"
	@echo "make synth     synthesize the CDK app into cdk.out (CONTEXT='-c stage=prod -c bundle=true')"
	@echo "make deploy-check  rehearse a deploy: prod synth with the real layer, cdk-nag, the deploy rules, cfn-lint,"
	@echo "               Lambda size limits, every handler imported against the layer alone"
	@echo "make preflight  the AWS account's quotas and settings a deploy needs, read-only with"
	@echo "               your credentials: exit 1 if any is short (STAGE=prod CONTEXT='-c ...' STRICT=1)"
	@echo "make fault-sweep  every AWS call of a seeded match failing, one at a time (long)"
	@echo "make install   create $(VENV) and install the project with dev and test tools"
	@echo "make clean     remove caches and build output (distclean also removes $(VENV))"

NPM_STAMP := node_modules/.package-lock.json

install: $(STAMP) $(NPM_STAMP)

# The contract's code generators and compilers (package.json): npm dev dependencies.
$(NPM_STAMP): package.json package-lock.json
	@command -v npm >/dev/null || { echo "error: npm (node) is needed for the contract tests" >&2; exit 1; }
	npm ci --no-audit --no-fund

# The full toolset (tests, linters, CDK); `play` needs only the local stack.
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
	$(PY) -m pip install $(PIP_FLAGS) -e '.[dev,tests,local,infra]'
	@rm -f $(VENV)/.stamp-*
	@touch $@

$(PLAY_STAMP):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { \
		echo "error: '$(PYTHON)' must be Python 3.11 or newer (set PYTHON=...)" >&2; exit 1; }
	@[ -x "$(PY)" ] || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install $(PIP_FLAGS) -e '.[local]'
	@touch $@

play: $(if $(wildcard $(STAMP)),$(STAMP),$(PLAY_STAMP))
	$(PY) -m local $(if $(PORT),--port $(PORT)) $(if $(TURN_SECONDS),--turn-seconds $(TURN_SECONDS)) $(if $(INTERMISSION_SECONDS),--intermission-seconds $(INTERMISSION_SECONDS)) $(if $(VERBOSE),--verbose)

demo: $(PLAY_STAMP)
	$(PY) -m tools.demo $(if $(SEED),--seed $(SEED))

simulate: $(PLAY_STAMP)
	$(PY) -m tools.simulate --matches $(or $(MATCHES),200) --seed $(or $(SEED),1)

# The tiers wait on sockets, timers and a browser as well as compute: four workers keep two
# cores busy (WORKERS=0 runs them in this process). mypy runs beside them.
WORKERS ?= 4

test: install
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	@$(MAKE) --no-print-directory -j2 -Oline test-types test-tiers
	node --test tests/web/
	@if [ -d "$(SHARED)/scenarios" ]; then \
		echo "$(PY) -m shared_engine.scenarios tests/scenarios $(SHARED)/scenarios"; \
		$(PY) -m shared_engine.scenarios tests/scenarios $(SHARED)/scenarios; \
	else \
		echo "skipping shared scenarios: $(SHARED)/scenarios not found"; \
	fi

test-types: install
	$(PY) -m mypy

test-tiers: install
	$(PY) -m pytest -n $(WORKERS) --dist loadgroup --durations=20

lint: install
	$(PY) -m ruff check .
	$(PY) -m mypy

fmt: install
	$(PY) -m ruff format .
	$(PY) -m ruff check --fix .

# Engine, cold start, warm handlers on in-process moto, cost per match: docs/performance.md.
bench: install
	$(PY) -m benchmarks $(if $(QUICK),--quick)

# The cost of a match per AWS service, this checkout beside earlier ones in one run, the
# median of MATCHES (3) matches of each kind: one match's length varies with its deal
# (docs/performance.md): BEFORE="label=dir ..." (e.g. a git worktree of an earlier commit).
cost: install
	$(PY) -m benchmarks.compare --matches $(or $(MATCHES),3) $(foreach b,$(BEFORE),--before $(b))

# The search bots' learned evaluation (docs/performance.md): fitted on heuristic self-play,
# then on self-play of normal bots valued by that first fit (what hard values its leaves by).
train-bots: install
	$(PY) -m benchmarks.train --level easy --rounds 20000 --seed train --jobs 2
	$(PY) -m benchmarks.train --level normal --rounds 6000 --seed train-normal --jobs 2

# The goals' figures (docs/performance.md): bots, engine vs its peer, cold start as deployed.
figures: install
	$(PY) -m benchmarks.figures $(if $(QUICK),--quick) $(if $(JOBS),--jobs $(JOBS)) $(if $(PEER),--peer $(PEER)) $(if $(PEER_PYTHON),--peer-python $(PEER_PYTHON))

# The CDK app (infra/README.md): needs node; CONTEXT passes -c key=value as the cdk CLI does.
CONTEXT ?=

synth: install
	JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20 $(PY) -m infra.app $(CONTEXT)

# infra/README.md: what a first deploy must survive, checked without an AWS account.
deploy-check: install
	JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20 $(PY) -m infra.deploy_check

# infra/README.md "Before the first deploy": what the account must already have (read-only).
STAGE ?=

preflight: $(STAMP)
	$(PY) -m infra.preflight $(if $(STAGE),--stage $(STAGE)) $(CONTEXT) $(if $(STRICT),--strict)

# Every AWS call of the seeded match failing, each way, one at a time (the test tier
# runs a seeded sample of 60; CANASTA_FAULT_SEED=... replays a sample).
fault-sweep: install
	CANASTA_FAULT_SWEEP=all $(PY) -m pytest tests/reliability/test_faults.py -q -k seeded_sample

clean:
	rm -rf build dist *.egg-info .mypy_cache .ruff_cache .pytest_cache .hypothesis cdk.out artifacts
	find . -path ./$(VENV) -prune -o -type d -name __pycache__ -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV) node_modules
