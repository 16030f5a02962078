"""The one quantile helper: identical to numpy's nan-aware quantiles, without the per-row path."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from audit.analysis.quantiles import nanmedian, nanpercentile, nanquantile


def _cases():
    rng = np.random.default_rng(0)
    for trial in range(60):
        shape = (int(rng.integers(1, 12)), int(rng.integers(1, 140)))
        x = rng.lognormal(size=shape) * 10.0 ** rng.integers(-6, 1)
        x[rng.random(shape) < rng.random() * 0.5] = np.nan
        if trial % 7 == 0:
            x[0] = np.nan  # a row with no valid value
        if trial % 5 == 0:
            x[rng.random(shape) < 0.1] = np.inf
        yield x


@pytest.mark.parametrize("axis", [0, 1])
def test_identical_to_numpy(axis):
    for x in _cases():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # numpy warns on all-NaN rows
            expected_q = np.nanquantile(x, [0.025, 0.25, 0.5, 0.75, 0.975], axis=axis)
            expected_p = np.nanpercentile(x, [2.5, 5, 95, 97.5], axis=axis)
            expected_m = np.nanmedian(x, axis=axis)
        assert np.array_equal(
            nanquantile(x, [0.025, 0.25, 0.5, 0.75, 0.975], axis=axis), expected_q, equal_nan=True
        )
        assert np.array_equal(
            nanpercentile(x, [2.5, 5, 95, 97.5], axis=axis), expected_p, equal_nan=True
        )
        assert np.array_equal(nanmedian(x, axis=axis), expected_m, equal_nan=True)


def test_scalar_quantile_and_empty_row():
    x = np.array([[1.0, 2.0, 3.0, 4.0], [np.nan] * 4])
    assert np.array_equal(nanquantile(x, 0.5), [2.5, np.nan], equal_nan=True)
    assert nanquantile(x, 0.5).shape == (2,)
