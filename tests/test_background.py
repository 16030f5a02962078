"""Work computed in a second process (audit.report.background): the same value as in the
kernel, its warnings and errors raised where the result is taken."""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit.exceptions import ReportFailed, ScoresError
from audit.report.background import WORKER_ENDED, Background, WorkerTraceback


def seeded_draws(n: int, *, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=n)


def warns_twice(value):
    warnings.warn("first of two", RuntimeWarning, stacklevel=1)
    warnings.warn("second of two", UserWarning, stacklevel=1)
    return value


def refuses(value):
    raise ScoresError(f"refused {value!r}")


def worker_pid() -> int:
    return os.getpid()


def naps(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def backend_and_modules(*names: str) -> tuple[str, list[bool]]:
    import matplotlib

    return matplotlib.get_backend(), [name in sys.modules for name in names]


def ends(status: int):
    os._exit(status)


def holds(started: str, release: str) -> int:
    """Say it started (the file ``started``), then wait for the file ``release``."""
    Path(started).write_text("")
    deadline = time.monotonic() + 60
    while not os.path.exists(release):
        if time.monotonic() > deadline:
            raise TimeoutError("never released")
        time.sleep(0.01)
    return os.getpid()


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + 60
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.01)


def _children() -> dict[int, str]:
    """This process's children, with their command lines (Linux /proc)."""
    found = {}
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except (OSError, ValueError):
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
            found[int(entry.name)] = command
    return found


@pytest.fixture
def background():
    made = Background(workers=1)
    yield made
    made.close()


def test_the_value_is_the_kernels_and_computed_in_another_process(background):
    draws = background.submit(seeded_draws, 1000, seed=7)
    elsewhere = background.submit(worker_pid)
    np.testing.assert_array_equal(draws.result(), seeded_draws(1000, seed=7))
    assert elsewhere.result() != os.getpid()


def test_a_frame_and_its_attrs_travel_both_ways(background):
    frame = pd.DataFrame({"group": pd.Categorical(["F", "M"]), "score": [0.25, 0.5]})
    frame.attrs["higher_is_match"] = False
    got = background.submit(pd.DataFrame.copy, frame).result()
    pd.testing.assert_frame_equal(got, frame)
    assert got.attrs == {"higher_is_match": False}


def test_warnings_are_raised_where_the_result_is_taken(background):
    job = background.submit(warns_twice, 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert job.result() == 3
        assert job.result() == 3  # taken again: not raised again
    assert [(w.category, str(w.message)) for w in caught] == [
        (RuntimeWarning, "first of two"),
        (UserWarning, "second of two"),
    ]
    # at the place they were raised in the worker
    assert {os.path.basename(w.filename) for w in caught} == {"test_background.py"}


def test_an_error_is_raised_where_the_result_is_taken(background):
    job = background.submit(refuses, "x")
    with pytest.raises(ScoresError, match="refused 'x'") as raised:
        job.result()
    assert isinstance(raised.value.__cause__, WorkerTraceback)
    assert "in refuses" in str(raised.value.__cause__)  # the worker's traceback


def test_the_worker_draws_with_agg_and_imports_what_it_was_started_with(monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    background = Background(workers=1)
    background.start(["audit.report.plots.ffmc"])
    try:
        got = background.submit(backend_and_modules, "audit.report.plots.ffmc").result()
    finally:
        background.close()
    assert got == ("agg", [True])


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_the_worker_is_the_only_process_started(background):
    before = set(_children())
    pid = background.submit(worker_pid).result()
    started = {p: c for p, c in _children().items() if p not in before}
    assert list(started) == [pid]  # no resource tracker beside it


def test_a_worker_that_ends_fails_its_job_in_plain_words(background):
    with pytest.raises(ReportFailed) as raised:
        background.submit(ends, 3).result()
    assert str(raised.value) == WORKER_ENDED.format(status=3, job="ends")


def test_without_a_worker_the_function_runs_when_asked_for():
    background = Background(workers=0)
    job = background.submit(worker_pid)
    assert job.result() == os.getpid()
    with pytest.raises(ScoresError, match="refused 1"):
        background.submit(refuses, 1).result()
    background.close()


def test_while_the_worker_is_busy_the_jobs_it_has_not_taken_run_here_alike(background, tmp_path):
    started, release = tmp_path / "started", tmp_path / "release"
    held = background.submit(holds, str(started), str(release))
    _wait_for(started)  # the worker is busy with it
    here = background.submit(worker_pid)
    warned = background.submit(warns_twice, 5)
    refused = background.submit(refuses, "y")
    assert background.run_queued() == 3
    assert here.result() == os.getpid()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert warned.result() == 5
    assert [(w.category, str(w.message)) for w in caught] == [
        (RuntimeWarning, "first of two"),
        (UserWarning, "second of two"),
    ]
    assert {os.path.basename(w.filename) for w in caught} == {"test_background.py"}
    with pytest.raises(ScoresError, match="refused 'y'") as raised:
        refused.result()
    assert not isinstance(raised.value.__cause__, WorkerTraceback)  # raised here
    release.write_text("")
    assert held.result() != os.getpid()
    assert background.run_queued() == 0


#: The job the worker holds, for :func:`releases_and_waits`, run in this process.
_HELD = []


def releases_and_waits(release: str) -> int:
    """Release the worker's held job (:func:`holds`) and wait until its result is in."""
    Path(release).write_text("")
    deadline = time.monotonic() + 60
    while not _HELD[0].done():
        if time.monotonic() > deadline:
            raise TimeoutError("the held job never ended")
        time.sleep(0.01)
    return os.getpid()


def test_run_queued_until_a_job_is_done_leaves_the_rest_to_the_worker(
    background, tmp_path, monkeypatch
):
    """Once the job waited for is done, the next jobs are the worker's: what follows from
    its result can be asked for at once."""
    started, release = tmp_path / "started", tmp_path / "release"
    held = background.submit(holds, str(started), str(release))
    monkeypatch.setattr(sys.modules[__name__], "_HELD", [held])
    _wait_for(started)
    assert not held.done()
    first = background.submit(releases_and_waits, str(release))
    rest = [background.submit(naps, 0.2) for _ in range(3)]  # the worker busy with each
    assert background.run_queued(until=held) == 1
    assert held.done() and first.result() == os.getpid()
    assert held.result() != os.getpid()
    assert {job.result() for job in rest} == {held.result()}  # each the worker's
    assert background.run_queued(until=held) == 0
    assert Background(workers=0).run_queued(until=held) == 0  # no worker: nothing queued


def test_a_free_worker_takes_the_next_job_itself(background):
    job = background.submit(worker_pid)
    assert background.run_queued() == 0
    assert job.result() != os.getpid()
    assert Background(workers=0).run_queued() == 0


def evaluates(name: str, table: pd.DataFrame) -> pd.Series:
    from audit.measures.registry import evaluate

    return evaluate(table, name, alpha=0.5)["value"]


def test_the_worker_knows_the_measures_of_the_modules_the_kernel_imported(
    monkeypatch, own_measures
):
    """A user's measure module imported here is imported by the worker before the job."""
    from audit.measures.modules import import_measure_modules
    from audit.tables.rates import read_rates

    monkeypatch.chdir(Path(__file__).resolve().parent.parent)  # tests.user_measures importable
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent))
    table = read_rates(
        pd.DataFrame(
            {
                "Algorithm": ["a", "b"],
                "FMR.F": [1e-4, 2e-4],
                "FMR.M": [2e-4, 2e-4],
                "FNMR.F": [0.01, 0.03],
                "FNMR.M": [0.02, 0.03],
            }
        )
    )
    background = Background(workers=1)
    try:
        import_measure_modules(["tests.user_measures.my_measure"])
        got = background.submit(evaluates, "user_ncv", table).result()
        expected = evaluates("user_ncv", table)
    finally:
        background.close()
    pd.testing.assert_series_equal(got, expected)
    assert got.notna().all() and len(got) == 2
