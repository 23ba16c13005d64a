# Two entry points, both self-contained on a fresh machine with only Python 3:
#   make site  -> virtual environment + site dependencies, then a strict build into site/
#   make test  -> virtual environment + site and test dependencies (torch), the Debian
#                 tools the tests use (where it can install them), then pytest
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
# One pytest worker more than this machine has cores: a hang-by-design job's proof and a
# Slurm job spend seconds waiting, which left the CPUs 11 % idle over a CI run on two cores
# with one worker per core; the extra worker fills that time (3 % idle, about 3 minutes less).
WORKERS ?= $(shell $(PYTHON) -c "import os; print(len(os.sched_getaffinity(0)) + 1)")
PYTEST_ARGS ?= -n $(WORKERS) --dist loadfile
export NO_MKDOCS_2_WARNING := 1

.PHONY: site serve test test-deps bench clean system-deps

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.site-deps: pyproject.toml hooks/mkdocs-po-i18n/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e ./hooks/mkdocs-po-i18n -e .
	touch $@

$(VENV)/.test-deps: pyproject.toml hooks/mkdocs-po-i18n/pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e "./hooks/mkdocs-po-i18n[test]" -e ".[test]"
	touch $@ $(VENV)/.site-deps

site: $(VENV)/.site-deps
	$(BIN)/mkdocs build --strict

# Preview: not strict, so an outdated catalog or an edited snippet shows (with its
# notice or badge) instead of stopping the server; served at the root of 127.0.0.1:8000.
# make serve-sv (any language code): only English and Swedish, each rebuild faster.
serve: $(VENV)/.site-deps
	$(BIN)/po-i18n serve

serve-%: $(VENV)/.site-deps
	$(BIN)/po-i18n serve --lang $*

# Debian's gettext, Chromium, Slurm and munge for the tests, where missing and installable
# (root and apt-get); elsewhere the tests that need them say so and are skipped.
system-deps:
	@bash tests/system-deps.sh

# What make test installs, without running the tests (for running one test file).
test-deps: $(VENV)/.test-deps system-deps

test: $(VENV)/.test-deps system-deps
	$(BIN)/python -m pytest $(PYTEST_ARGS)

# Not part of the tests: what building and verifying costs, against its floors (~15 min with the preview part).
bench: $(VENV)/.test-deps
	$(BIN)/course bench

clean:
	rm -rf site $(VENV) .pytest_cache
