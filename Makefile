# Everything a fresh machine with only python3 (3.11+) needs. See README.md.
#   make run   set up .venv and run the benchmark on the built-in development specimen
#   make test  set up .venv with every extra, the reference-library environments, and run the tests
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := .make
PIP := $(BIN)/python -m pip --disable-pip-version-check

# torch is installed first from the CPU build this machine keeps on disk (a range that it
# satisfies then installs nothing more; docs/reference/dependencies.md).
TORCH := torch==2.13.0

# Reference-library environments (parity tests) add themselves to TEST_DEPS in mk/*.mk.
TEST_DEPS := $(STAMP)/test
-include mk/*.mk

.PHONY: run test clean

run: $(STAMP)/core
	$(BIN)/trackverify run --out trackverify-results

# One worker per core (pytest-xdist); idle workers take tests from busy ones (worksteal).
test: $(TEST_DEPS)
	$(BIN)/python -m pytest -q -n auto --dist worksteal

$(STAMP)/venv:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	mkdir -p $(STAMP) && touch $@

$(STAMP)/core: $(STAMP)/venv pyproject.toml
	$(PIP) install --quiet -e .
	touch $@

$(STAMP)/test: $(STAMP)/venv pyproject.toml
	$(PIP) install --quiet $(TORCH)
	$(PIP) install --quiet -e '.[test,all]'
	touch $@ $(STAMP)/core

clean:
	rm -rf $(VENV) $(VENV)-* $(STAMP) trackverify-results
