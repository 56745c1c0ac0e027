# optnoise — set-up, demo and tests. Every target installs what it needs first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install demo test bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,spark]"
	touch $(STAMP)

demo: install
	$(BIN)/optnoise demo --out demo-output --force

# Two workers (pytest-xdist; tests/conftest.py keeps a module, and Spark, on one worker).
WORKERS ?= 2

test: install
	$(BIN)/python -m pytest -q -n $(WORKERS)

bench: install
	$(BIN)/python bench/verify.py
	$(BIN)/python bench/design.py
	$(BIN)/python bench/milp_models.py
	$(BIN)/python bench/sampling.py
	$(BIN)/python bench/exact_scale.py --quick
	$(BIN)/python bench/staircase.py
	$(BIN)/python bench/attack.py
	$(BIN)/python bench/startup.py
	$(BIN)/python bench/releases.py
	$(BIN)/python bench/release.py
	$(BIN)/python bench/channel.py --quick

clean:
	rm -rf $(VENV) demo-output .pytest_cache .hypothesis build src/*.egg-info
