"""Work computed in a second process (audit.report.background): the same value as in the
kernel, its warnings and errors raised where the result is taken."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd
import pytest

from audit.exceptions import ScoresError
from audit.report.background import Background


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
    with pytest.raises(ScoresError, match="refused 'x'"):
        job.result()


def test_without_a_worker_the_function_runs_when_asked_for():
    background = Background(workers=0)
    job = background.submit(worker_pid)
    assert job.result() == os.getpid()
    with pytest.raises(ScoresError, match="refused 1"):
        background.submit(refuses, 1).result()
    background.close()
