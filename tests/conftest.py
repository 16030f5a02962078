"""Shared fixtures: the real Annex 15 table, located offline through AUDIT_DATA_DIR."""

from __future__ import annotations

import matplotlib
import pytest

matplotlib.use("Agg")

from audit.sources.annex15 import annex15_path  # noqa: E402
from audit.tables.rates import rate_matrices, read_rates  # noqa: E402


@pytest.fixture(scope="session")
def annex15_file():
    """The verified Annex 15 CSV: the copy named by AUDIT_DATA_DIR (as .ci/run sets it),
    else the cached download, fetched once from the pinned source."""
    return annex15_path()


@pytest.fixture(scope="session")
def annex15(annex15_file):
    """The validated tidy Annex 15 table (1,008 rows: 126 algorithms x 8 groups)."""
    return read_rates(annex15_file)


@pytest.fixture(scope="session")
def annex15_matrices(annex15):
    """(algorithms, groups, fmr, fnmr) of the Annex 15 table."""
    return rate_matrices(annex15)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")
