# Two commands do all the set-up: `make report` (the full audit and reports on
# the Annex 15 data) and `make test`. Both create .venv and install the package
# into it on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
NAME ?= annex15

.PHONY: report test install clean-venv

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,parquet]'
	touch $(STAMP)

install: $(STAMP)

report: $(STAMP)
	$(BIN)/audit report --name $(NAME)

test: $(STAMP)
	$(BIN)/python -m pytest

clean-venv:
	rm -rf $(VENV)
