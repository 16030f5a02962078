# Two commands do all the set-up: `make report` (the full audit and reports on
# the Annex 15 data) and `make test`. Both create .venv and install the package
# into it on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
NAME ?= annex15
SCREEN ?= 1366,900

.PHONY: report report-scores test install compiled clean-venv screenshot

# again when the compiled counting loops' source changes: the install builds them
$(STAMP): pyproject.toml setup.py audit/scores/_kernel.c
	@echo "Setting up $(VENV) (once): audit and what it runs on (pandas, numpy, matplotlib,"
	@echo "seaborn, papermill, nbclient, nbconvert, ipykernel, pyarrow), its compiled counting"
	@echo "loops (with the C compiler, where there is one), and what the tests use (pytest,"
	@echo "hypothesis, scikit-learn, dask): about 100 packages, a few minutes."
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --disable-pip-version-check --progress-bar off -e '.[test,parquet]'
	@echo "$(VENV) is ready: $$($(BIN)/python -m pip list --disable-pip-version-check 2>/dev/null | tail -n +3 | wc -l) packages."
	touch $(STAMP)

install: $(STAMP)

# the package's modules compiled to bytecode, as an install from a wheel has them (and
# again those changed since): each process of a run -- the command, the server its kernels
# are forked from, a test's -- then loads them instead of compiling some 50 modules, also
# where PYTHONDONTWRITEBYTECODE keeps Python from writing what it compiles on import
compiled: $(STAMP)
	@$(BIN)/python -m compileall -q audit

report: compiled
	$(BIN)/audit report --name $(NAME)

# the same audit from raw comparison scores: the bt4vt VoxCeleb1-H files, fetched from PyPI
report-scores: compiled
	$(BIN)/audit scores

# the front page as headless Chromium draws it at laptop width (Debian: apt-get install chromium)
screenshot:
	profile=$$(mktemp -d) && chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
	  --no-first-run --user-data-dir=$$profile --window-size=$(SCREEN) \
	  --screenshot=$(CURDIR)/reports/$(NAME)-frontpage.png "file://$(CURDIR)/reports/$(NAME)/index.html"; \
	  status=$$?; rm -rf $$profile; exit $$status

test: compiled
	$(BIN)/python -m pytest

clean-venv:
	rm -rf $(VENV)
