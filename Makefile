# Quick start: `make train` sets up a virtual environment and trains the default
# config; `make test` sets it up, runs the linters, builds the docs and runs the test suite.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
CONFIG ?= balloon
LOGDIR ?= logdir
ARGS ?=

.PHONY: install train test lint pylint docs bench clean

install: $(VENV)/.installed

$(VENV)/.installed: setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $@

train: install
	$(PY) -m agents.scripts.train --config=$(CONFIG) --logdir=$(LOGDIR) $(ARGS)

lint: install
	$(VENV)/bin/ruff check agents tests bench devtools
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/mypy

# BatchPPO's lint command with .pylintrc: about 2.5 minutes of CPU, so apart from `lint`.
pylint: install
	$(PY) -m pylint agents

# The documentation site (mkdocs.yml); --strict makes a broken link, a missing anchor
# or a docstring griffe cannot parse fail the build. `site/` is not committed.
docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

# The bytecode and the balloon's Numba kernels are compiled first: the suite starts about
# a hundred Python processes, and on a fresh clone each of them would compile the package
# again where PYTHONDONTWRITEBYTECODE is set (about 35 s of CPU in all), and the first ones
# to fly a balloon would each compile its kernels (about 5 s each). BLE's model files (the
# generative wind's decoder, Perciatelli44) are fetched once into the user's cache, so the
# tests that need them run.
test: lint docs
	$(PY) -m compileall -q agents tests examples
	$(PY) -m agents.env.balloon.precompile
	$(PY) -m agents.env.balloon.ble_models fetch
	$(PY) -m tests.run_all

clean:
	rm -rf $(VENV) *.egg-info site
