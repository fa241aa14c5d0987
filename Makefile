# mcptape: `make demo` runs the main job on the bundled example; `make test` runs the tests.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-deps lock agent-envs test-quick lint bench bench-quick bench-against venv clean js

LOCK := requirements/test.lock

$(STAMP): pyproject.toml $(LOCK)
	@test -x $(PY) || "$$(scripts/find-python)" -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip >/dev/null
	$(PY) -m pip install -q -c $(LOCK) -e '.[test]'
	@touch $(STAMP)

# resolve .[test] anew in a scratch venv and write its exact versions to $(LOCK)
lock:
	rm -rf .venv-lock && "$$(scripts/find-python)" -m venv .venv-lock
	.venv-lock/bin/python -m pip install -q -e '.[test]'
	{ sed -n 1,2p $(LOCK); .venv-lock/bin/python -m pip freeze --exclude-editable; } > $(LOCK).new
	mv $(LOCK).new $(LOCK) && rm -rf .venv-lock

venv: $(STAMP)

demo: $(STAMP)
	$(PY) examples/demo.py

JS_STAMP := js/node_modules/.mcptape-installed

# the TypeScript helper's packages, exact versions from its lock file (skipped when current)
$(JS_STAMP): js/package-lock.json
	@command -v npm >/dev/null || (apt-get install -y nodejs npm >/dev/null)
	cd js && npm ci --no-audit --no-fund --loglevel=error
	@touch $(JS_STAMP)

js: $(JS_STAMP)

# Debian's chromium and chromium-driver (as root) and the mermaid npm package, for the browser tests.
test-deps:
	@scripts/install-test-deps

# the agent libraries' environments for tests/agents (.venv-agents/NAME from tests/agents/locks/NAME.txt;
# rebuilt only when a lock file or pyproject.toml changed)
agent-envs:
	@scripts/agent-envs

test: $(STAMP) $(JS_STAMP) test-deps agent-envs sdk1-env lint
	$(PY) -m pytest -n 2 -q

# the mcp SDK's 1.x line: .venv-sdk1 from tests/sdk1/lock.txt (rebuilt when the lock changes);
# tests/sdk1 drive it from the main suite
.PHONY: sdk1-env test-sdk1
sdk1-env:
	@scripts/sdk1-env

test-sdk1: $(STAMP) sdk1-env
	$(PY) -m pytest -q tests/sdk1

test-quick: $(STAMP)
	$(PY) -m pytest -q -m "not e2e"

# ruff (rules and format in pyproject.toml) and mypy (strict, pyproject.toml)
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

bench: $(STAMP)
	$(PY) -m bench

bench-quick: $(STAMP)
	$(PY) -m bench --quick

# the quick benchmarks on this tree and on git revision REV, alternately: which rows moved beyond the noise
REV ?= main
bench-against: $(STAMP)
	$(PY) -m bench --quick --against $(REV)

clean:
	rm -rf $(VENV) .venv-agents .venv-sdk1 build *.egg-info
