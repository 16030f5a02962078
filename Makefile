# Two commands do all the set-up: `make report` (the full audit and reports on
# the Annex 15 data) and `make test`. Both create .venv and install the package
# into it on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
NAME ?= annex15

.PHONY: report report-scores test install clean-venv

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,parquet]'
	touch $(STAMP)

install: $(STAMP)

report: $(STAMP)
	$(BIN)/audit report --name $(NAME)

# the same audit from raw comparison scores: the bt4vt VoxCeleb1-H files, fetched from PyPI
report-scores: $(STAMP)
	$(BIN)/audit scores

test: $(STAMP)
	$(BIN)/python -m pytest

clean-venv:
	rm -rf $(VENV)
