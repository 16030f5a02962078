"""Shared fixtures and builders: the real Annex 15 and FRVT 1:1 tables, located offline
through AUDIT_DATA_DIR; small synthetic rates and score tables; the reports several test
files read, built once in a run; a loopback HTTP server for the download tests."""

from __future__ import annotations

import contextlib
import functools
import http.server
import io
import os
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from filelock import FileLock
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


# --- the order of the files --------------------------------------------------------------

#: The test files that take longest, longest first (seconds of --durations=0 summed by
#: file, measured on 2 cores; a file building a report the others share comes first, one
#: reading it late). pytest-xdist hands whole files to its workers (``--dist loadfile``)
#: in the order collected (``--no-loadscope-reorder``): started first, no long file is
#: left to run alone on one core at the end. The other files follow in their own order.
LONGEST_FIRST = (
    "tests/test_figures.py",
    "tests/test_streaming.py",
    "tests/test_properties.py",
    "tests/test_crossgroup_reports.py",
    "tests/test_uncertainty.py",
    "tests/test_report_kernels.py",
    "tests/test_install.py",
    "tests/test_report_safety.py",
    "tests/test_frvt11_report.py",
    "tests/test_drawing.py",
    "tests/test_forkserver.py",
    "tests/test_notebooks.py",
    "tests/test_cli.py",
    "tests/test_voxceleb.py",
    "tests/test_report_interrupt.py",
    "tests/test_report_pages.py",
    "tests/test_hostile_reports.py",
    "tests/test_weighted.py",
    "tests/test_plots_pareto.py",
    "tests/test_background.py",
    "tests/test_compare.py",
    "tests/test_report_ownership.py",
    "tests/test_pareto.py",
    "tests/test_frontpage.py",
    "tests/test_scores.py",
)


def pytest_collection_modifyitems(items):
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


# --- reports several files read, built once in a run ----------------------------------------


@dataclass(frozen=True)
class Built:
    """A report built once in a test run by ``audit <argv>``: its folder, the folder of its
    figures' records (:func:`figcheck.kernel_hook`), the command's exit status and what it
    printed. The tests that read it share it: none may change it (copy it first)."""

    report: Path
    records: Path
    status: int
    printed: str


#: In a built folder, once the build has finished (and what it printed, or how it failed).
DONE, FAILED = "done.txt", "failed.txt"


def build_once(tmp_path_factory, key: str, argv: list[str], name: str) -> Built:
    """``audit <argv>`` into the report ``name``, run once in a test run, whichever worker
    asks first: the other workers wait for it under a file lock and read its folder
    (pytest-xdist's pattern for a session fixture run once). The figures of its notebooks
    are recorded as :mod:`figcheck` reads them."""
    from figcheck import kernel_hook

    from audit.cli import main

    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "built-once"
    root.mkdir(exist_ok=True)
    folder = root / key
    with FileLock(str(root / f"{key}.lock")):
        if (folder / FAILED).is_file():
            pytest.fail(f"the shared report {key!r} failed in another worker:\n"
                        + (folder / FAILED).read_text())  # fmt: skip
        if not (folder / DONE).is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            printed = io.StringIO()
            try:
                with (
                    pytest.MonkeyPatch.context() as monkeypatch,
                    contextlib.redirect_stdout(printed),
                ):
                    kernel_hook(folder, monkeypatch)
                    status = main(
                        [*argv, "--reports-dir", str(folder / "reports"), "--no-progress"]
                    )
            except BaseException as error:
                (folder / FAILED).write_text(f"{type(error).__name__}: {error}")
                raise
            (folder / "status.txt").write_text(str(status))
            (folder / DONE).write_text(printed.getvalue())
    return Built(
        report=folder / "reports" / name,
        records=folder / "figure-records",
        status=int((folder / "status.txt").read_text()),
        printed=(folder / DONE).read_text(),
    )


@pytest.fixture(scope="session")
def annex15_built(tmp_path_factory, shared_server, annex15_file):
    """``audit report`` on the real Annex 15 table (the front page's tests and the figures'
    read it)."""
    argv = ["report", "--data", str(annex15_file), "--name", "annex15"]
    argv += ["-p", "n_replicates", "200", "-p", "verdict_replicates", "10"]
    return build_once(tmp_path_factory, "annex15", argv, "annex15")


@pytest.fixture(scope="session")
def fmr_only_file(tmp_path_factory, annex15_file):
    """The Annex 15 FMRs alone (126 algorithms): the most common published shape."""
    frame = pd.read_csv(annex15_file)
    path = tmp_path_factory.mktemp("fmr-only") / "fmr_only.csv"
    frame[[c for c in frame.columns if not c.startswith("FNMR.")]].to_csv(path, index=False)
    return path


@pytest.fixture(scope="session")
def fmr_only_built(tmp_path_factory, shared_server, fmr_only_file):
    """``audit report`` on the Annex 15 FMRs alone."""
    argv = ["report", "--data", str(fmr_only_file), "--name", "fmr", "-p", "n_random", "200"]
    argv += ["-p", "n_replicates", "200", "-p", "verdict_replicates", "10"]
    return build_once(tmp_path_factory, "fmr-only", argv, "fmr")


@pytest.fixture(scope="session")
def compare_built(tmp_path_factory, shared_server, annex15_file, frvt11_file, frvt11_accuracy_file):
    """``audit compare annex15 frvt11`` offline, with FRVT 1:1's accuracy table: two heat
    maps of 28 and 20 measures, the rank scatter and the agreement across the datasets."""
    argv = ["compare", "annex15", "frvt11", "--replicates", "200"]
    argv += ["--accuracy-from", "frvt11=frvt11-accuracy:Mugshot, 1e-5"]
    argv += ["-p", "n_random", "300", "-p", "verdict_replicates", "10"]
    return build_once(tmp_path_factory, "compare", argv, "annex15-vs-frvt11")


@pytest.fixture(scope="session")
def cross_file(tmp_path_factory):
    """:func:`cross_long` as a CSV file named ``cross.csv``."""
    path = tmp_path_factory.mktemp("cross") / "cross.csv"
    cross_long().to_csv(path, index=False)
    return path


@pytest.fixture(scope="session")
def crossgroup_built(tmp_path_factory, shared_server, cross_file):
    """``audit report`` on the 4 x 4 cross-group table (:func:`cross_long`)."""
    argv = ["report", str(cross_file), "-p", "n_random", "200"]
    return build_once(tmp_path_factory, "crossgroup", argv, "cross")


@pytest.fixture(scope="session")
def scores_built(tmp_path_factory, shared_server, small_scores):
    """``audit scores`` on :func:`small_scores` (distances, subjects, cross-group pairs)."""
    argv = ["scores", str(small_scores), "--distance", "--target-fmr", "0.01", "--name", "scores"]
    argv += ["-p", "sweep_points", "5", "-p", "bootstrap_replicates", "20"]
    return build_once(tmp_path_factory, "scores", argv, "scores")


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    import matplotlib.pyplot as plt

    plt.close("all")


@pytest.fixture
def own_measures():
    """The measure registry as it was before the test, afterwards: the measures the test
    registered (itself or through a user module) are unregistered, and the user modules it
    imported are forgotten, so that the next test importing one registers its measures
    again rather than finding the module imported and registering nothing."""
    import sys

    from audit.measures import registry

    names, modules = set(registry.measure_names()), set(sys.modules)
    listed = list(registry._MODULES)
    yield
    for name in set(registry.measure_names()) - names:
        registry.unregister(name)
    for module in set(sys.modules) - modules:
        if module.startswith("tests.user_measures."):
            del sys.modules[module]
    registry._MODULES[:] = listed


@pytest.fixture(scope="session")
def shared_server():
    """One fork server for the reports of every test module that asks for it
    (``pytestmark = pytest.mark.usefixtures("shared_server")``) and of the reports built
    once (:func:`build_once`), in each worker: each command's and each
    :func:`~audit.report.runner.run_report`'s kernels and drawing processes are forked
    from it, as in a script running several reports in one
    :func:`audit.report.forkserver.started` block. The other tests see none
    (:func:`_own_servers`): a report's own server, and kernels started afresh, are the
    subject of tests/test_forkserver.py, test_report_kernels.py and
    test_report_safety.py."""
    from audit.report import forkserver

    with forkserver.started():
        yield


@pytest.fixture(scope="module", autouse=True)
def _own_servers(request):
    """The tests of a module that does not share the worker's server
    (:func:`shared_server`) run as if none were running, its module fixtures included:
    their commands start their own, and so do the commands they start in other
    processes (no server named in their environment)."""
    from audit.report import forkserver

    sharing = any("shared_server" in m.args for m in request.node.iter_markers("usefixtures"))
    with pytest.MonkeyPatch.context() as monkeypatch:
        if forkserver._server is not None and not sharing:
            monkeypatch.setattr(forkserver, "_server", None)
            monkeypatch.delenv(forkserver.ADDRESS, raising=False)
        yield


@pytest.fixture
def servers(monkeypatch):
    """The fork servers (:mod:`audit.report.forkserver`) started during the test, listed
    as they start (they start as usual)."""
    from audit.report import forkserver

    started = []
    original = forkserver._Server.__init__

    def recorded(self):
        started.append(self)
        original(self)

    monkeypatch.setattr(forkserver._Server, "__init__", recorded)
    return started


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
    # shutdown() waits for the loop to look again: every 20 ms, not the default 0.5 s
    serve = functools.partial(server.serve_forever, poll_interval=0.02)
    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield folder, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
