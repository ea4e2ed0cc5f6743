# Memory Explorer. `make run` starts the dashboard; `make test` sets up and runs every test.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
PORT ?= 8501
# The dashboard listens on loopback unless told otherwise; beyond loopback it requires sign-in (README).
LISTEN := $(or $(MEMORY_LISTEN),$(STREAMLIT_SERVER_ADDRESS),127.0.0.1)

.PHONY: run api mcp test check venv clean system-deps bench bench-quick

# Installs go through uv (the versions constraints.txt pins: 11 s where pip took 35 s on a fresh
# machine); where uv cannot be had, pip installs the same. Compiled to bytecode at install, as pip
# does: where PYTHONDONTWRITEBYTECODE is set (CI's machines), nothing compiles it later, and every
# process the tests start would compile its libraries anew (the suite took 12 min instead of 8).
INSTALL = $(VENV)/bin/uv pip install -q --compile-bytecode --python $(PY) -c constraints.txt

# What running needs (make run, make api): the package and its dependencies only.
$(VENV)/.base: pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(PIP) install -q -c constraints.txt uv || true
	$(INSTALL) -e . || $(PIP) install -q -c constraints.txt -e .
	touch $@

# What testing adds: the test extra (pytest, hypothesis, ruff, mypy, playwright, schemathesis, ...).
$(VENV)/.installed: $(VENV)/.base
	$(INSTALL) -e '.[test]' || $(PIP) install -q -c constraints.txt -e '.[test]'
	touch $@

venv: $(VENV)/.installed

run: $(VENV)/.base
	$(PY) -m memory_core load sample_data/demo.json --if-empty
	MEMORY_LISTEN=$(LISTEN) $(PY) serve.py --server.address $(LISTEN) --server.port $(PORT) \
		--browser.gatherUsageStats false

api: $(VENV)/.base
	$(VENV)/bin/uvicorn memory_core.api:app --host 127.0.0.1 --port $(or $(API_PORT),8000)

# Memory for agents over MCP (Streamable HTTP at http://127.0.0.1:8765/mcp), on the same database as `make run`.
mcp: $(VENV)/.base
	$(PY) -m memory_core load sample_data/demo.json --if-empty
	$(PY) -m memory_core mcp --http --port $(or $(MCP_PORT),8765)

check: venv
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

system-deps:
	bash .ci/system-deps

# The whole suite on SQLite and, at the same time, on a throwaway PostgreSQL cluster (.ci/test-both).
test: system-deps check
	bash .ci/test-both $(PY)

# Benchmarks B1 to B10 on SQLite and PostgreSQL (B8's environment rows: bench/run.py --only b8env); results in
# bench/results.json and docs/benchmarks.md.
bench: venv system-deps
	$(PY) bench/run.py
	bash .ci/with-postgres $(PY) bench/run.py --backend postgresql

bench-quick: venv system-deps
	$(PY) bench/run.py --quick
	bash .ci/with-postgres $(PY) bench/run.py --quick --backend postgresql

clean:
	rm -rf $(VENV) .memory .pytest_cache .mypy_cache .ruff_cache
