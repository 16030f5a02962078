"""Shared fixtures: the real Annex 15 table, located offline through AUDIT_DATA_DIR."""

from __future__ import annotations

import os

import matplotlib
import pytest

matplotlib.use("Agg")

from audit.data import annex15_path  # noqa: E402
from audit.rates import rate_matrices, read_rates  # noqa: E402


@pytest.fixture(scope="session")
def annex15_file():
    if not os.environ.get("AUDIT_DATA_DIR") and os.environ.get("AUDIT_NETWORK_TESTS") != "1":
        pytest.fail(
            "set AUDIT_DATA_DIR to a folder holding the Annex 15 CSV (as .ci/run does), "
            "or AUDIT_NETWORK_TESTS=1 to let the tests download it"
        )
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
