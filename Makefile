# Boneyard developer tasks (GNU make).
VENV ?= .venv
PY = $(VENV)/bin/python
PYTHON ?= python3
PYTEST_ARGS ?=

.DELETE_ON_ERROR:
.PHONY: setup test lint bench-engine run clean FORCE

setup: $(VENV)/.installed

# The editable install maps each top-level package that exists when it runs, so the
# venv is reinstalled when that set changes (e.g. engine/ appears after the install).
PACKAGES := $(wildcard engine/__init__.py server/__init__.py clients/__init__.py proto/boneyard/__init__.py)

$(VENV)/.packages: FORCE
	@mkdir -p $(@D)
	@echo '$(PACKAGES)' | cmp -s - $@ || echo '$(PACKAGES)' > $@

$(VENV)/.installed: pyproject.toml $(VENV)/.packages
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip
	$(PY) -m pip install -e '.[dev]'
	touch $@

test: setup
	$(PY) -m pytest -q $(PYTEST_ARGS)

lint: setup
	$(PY) -m ruff check .
	$(PY) -m mypy engine

bench-engine: setup
	$(PY) benchmarks/bench_engine.py

run: setup
	@test -x $(VENV)/bin/boneyard-server || { \
	  echo "$(VENV)/bin/boneyard-server is missing: declare it in [project.scripts] of pyproject.toml" >&2; \
	  exit 1; }
	$(VENV)/bin/boneyard-server

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
	find . -name __pycache__ -type d -prune -exec rm -rf {} +

FORCE:
