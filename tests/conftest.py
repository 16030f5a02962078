"""Shared fixtures and builders: the real Annex 15 and FRVT 1:1 tables, located offline
through AUDIT_DATA_DIR; small synthetic rates and score tables; a loopback HTTP server for
the download tests."""

from __future__ import annotations

import functools
import http.server
import threading

import matplotlib
import numpy as np
import pandas as pd
import pytest
from hypothesis import settings

matplotlib.use("Agg")

# The property tests draw the same examples on every run and every machine (a failure in
# CI is a failure here); ``--hypothesis-profile explore`` draws new ones each run.
settings.register_profile("reproducible", derandomize=True, database=None)
settings.register_profile("explore", max_examples=500)
settings.load_profile("reproducible")

from audit.sources.annex15 import annex15_path  # noqa: E402
from audit.sources.datasets import dataset_path  # noqa: E402
from audit.tables.datasets import read_frvt11  # noqa: E402
from audit.tables.rates import rate_matrices, read_rates  # noqa: E402


@pytest.fixture
def drawing_apart(tmp_path, monkeypatch):
    """The notebook kernels started in this test draw their figures in a worker process
    (:mod:`audit.report.drawing`) however busy the machine: an IPython startup file tells
    them a core is spare."""
    startup = tmp_path / "ipython-drawing" / "profile_default" / "startup"
    startup.mkdir(parents=True)
    (startup / "00-drawing.py").write_text(
        "import audit.report.drawing\naudit.report.drawing.spare_cores = lambda: 1\n"
    )
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython-drawing"))


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
def frvt11_file():
    """The verified FRVT 1:1 gender x race CSV: found through AUDIT_DATA_DIR (a folder of
    dataset folders, or the Annex 15 folder beside them), else the cached download."""
    return dataset_path("frvt11")


@pytest.fixture(scope="session")
def frvt11_accuracy_file():
    """The verified FRVT 1:1 accuracy table (frvt_11_overview.csv), located likewise."""
    return dataset_path("frvt11-accuracy")


@pytest.fixture(scope="session")
def frvt11(frvt11_file):
    """The FRVT 1:1 table read as a cross-group table (960 rows: 240 algorithms x 4 groups)."""
    return read_frvt11(frvt11_file)


@pytest.fixture(scope="session")
def annex15_matrices(annex15):
    """(algorithms, groups, fmr, fnmr) of the Annex 15 table."""
    return rate_matrices(annex15)


def synthetic(
    n=4000, groups=("F", "M", "X"), seed=0, round_to=None, algorithms=("a", "b"), subjects=False
):
    """A score table (similarities) of ``len(algorithms) * n`` comparisons: 30% mated, 30%
    of the non-mated pairs across groups (``group_1`` != ``group_2``), group "M" shifted up
    by 0.3; with ``subjects``, ``subject_1``/``subject_2`` ids (30 per group, a mated pair
    shares its subject)."""
    rng = np.random.default_rng(seed)
    frames = []
    for algorithm in algorithms:
        g1 = rng.choice(groups, n)
        mated = rng.random(n) < 0.3
        g2 = np.where(mated | (rng.random(n) < 0.7), g1, rng.choice(groups, n))
        score = rng.normal(size=n) + 2.5 * mated + 0.3 * (g1 == "M")
        if round_to is not None:
            score = np.round(score, round_to)
        frame = pd.DataFrame(
            {"algorithm": algorithm, "score": score, "mated": mated, "group_1": g1, "group_2": g2}
        )
        if subjects:
            s1 = np.char.add(g1, rng.integers(0, 30, n).astype(str))
            frame["subject_1"] = s1
            frame["subject_2"] = np.where(
                mated, s1, np.char.add(g2, rng.integers(0, 30, n).astype(str))
            )
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


CROSS_GROUPS = ["A", "B", "C", "D"]
CROSS_ALGORITHMS = ["a", "b", "c"]


def cross_matrices() -> np.ndarray:
    """A cross-group impostor table: 3 algorithms x 4 x 4 pairs [algorithm, enrolment, probe]: within-group FMRs high,
    cross-group low, asymmetric cells, and a zero cell (algorithm c, pair (A, D))."""
    fmr = np.array(
        [
            [
                [1e-3, 1e-5, 2e-5, 1e-5],
                [3e-5, 2e-3, 1e-5, 1e-5],
                [1e-5, 1e-5, 4e-4, 5e-5],
                [1e-5, 2e-5, 5e-5, 1e-3],
            ],
            [
                [2e-4, 2e-5, 2e-5, 2e-5],
                [2e-5, 2e-4, 2e-5, 2e-5],
                [2e-5, 2e-5, 2e-4, 2e-5],
                [2e-5, 2e-5, 2e-5, 2e-4],
            ],
            [
                [5e-4, 1e-4, 1e-5, 0.0],
                [1e-5, 5e-4, 1e-5, 1e-5],
                [1e-5, 1e-5, 1e-3, 1e-5],
                [1e-5, 1e-5, 1e-5, 5e-4],
            ],
        ]
    )
    return fmr


def cross_long(fmr=None) -> pd.DataFrame:
    fmr = cross_matrices() if fmr is None else fmr
    rows = [
        (alg, g1, g2, fmr[k, i, j])
        for k, alg in enumerate(CROSS_ALGORITHMS)
        for i, g1 in enumerate(CROSS_GROUPS)
        for j, g2 in enumerate(CROSS_GROUPS)
    ]
    return pd.DataFrame(rows, columns=["algorithm", "group_1", "group_2", "fmr"])


def cross_wide(separator="|", prefix="FMR.", fmr=None) -> pd.DataFrame:
    fmr = cross_matrices() if fmr is None else fmr
    frame = pd.DataFrame({"Algorithm": CROSS_ALGORITHMS})
    for i, g1 in enumerate(CROSS_GROUPS):
        for j, g2 in enumerate(CROSS_GROUPS):
            frame[f"{prefix}{g1}{separator}{g2}"] = fmr[:, i, j]
    return frame


@pytest.fixture(scope="session")
def small_table(tmp_path_factory):
    """A CSV of six algorithms x four groups in the wide layout, all rates positive."""
    rng = np.random.default_rng(7)
    groups = ["F.Asian", "F.White", "M.Asian", "M.White"]
    frame = {"Algorithm": [f"alg-{i}" for i in range(6)]}
    for group in groups:
        frame[f"FNMR.{group}"] = np.round(rng.uniform(0.002, 0.05, 6), 4)
        frame[f"FMR.{group}"] = 10.0 ** (rng.integers(-50, -33, 6) / 10)  # Annex 15-like grid
    path = tmp_path_factory.mktemp("data") / "small.csv"
    pd.DataFrame(frame).to_csv(path, index=False)
    return path


@pytest.fixture(scope="session")
def small_scores(tmp_path_factory):
    """A CSV of distance scores (lower is a match): two systems x 6,000 comparisons with
    subject ids and cross-group impostor pairs (:func:`synthetic`, negated)."""
    frame = synthetic(6000, seed=3, algorithms=("sys-a", "sys-b"), subjects=True)
    frame["score"] = -frame["score"]
    path = tmp_path_factory.mktemp("scores") / "small.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002  (the base class's name)
        pass


@pytest.fixture
def http_folder(tmp_path):
    """``(folder, base_url)``: a folder served over HTTP on 127.0.0.1 for this test only."""
    folder = tmp_path / "served"
    folder.mkdir()
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield folder, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
