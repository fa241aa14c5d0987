# mcptape: `make demo` runs the main job on the bundled example; `make test` runs the tests.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-deps test-quick bench bench-quick venv clean

$(STAMP): pyproject.toml
	@test -x $(PY) || "$$(scripts/find-python)" -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip >/dev/null
	$(PY) -m pip install -q -e '.[test]'
	@touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(PY) examples/demo.py

# Debian's chromium and chromium-driver (as root) and the mermaid npm package, for the browser tests.
test-deps:
	@scripts/install-test-deps

test: $(STAMP) test-deps
	$(PY) -m pytest -n 2 -q

test-quick: $(STAMP)
	$(PY) -m pytest -q -m "not e2e"

bench: $(STAMP)
	$(PY) -m bench

bench-quick: $(STAMP)
	$(PY) -m bench --quick

clean:
	rm -rf $(VENV) build *.egg-info
