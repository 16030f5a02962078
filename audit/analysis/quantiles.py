"""Quantiles, percentiles and medians along an axis, NaN left out, by one sort.

The FFMC criteria and the uncertainty summaries take medians and quantiles
of many short rows (the 126 algorithms of each alpha, the 1000 replicates of
each algorithm).  ``np.nanquantile`` computes those one row at a time
(``apply_along_axis``) as soon as a single NaN is present; here every row is
sorted at once (NaN sorts last), the number of valid values of each row is
counted, and the two order statistics are interpolated exactly as numpy's
default ``method="linear"`` does (same index arithmetic, same
interpolation formula), so the values are identical to ``np.nanquantile``
and ``np.nanmedian``, bit for bit.  A row with no valid value gives NaN
(without a warning).
"""

from __future__ import annotations

import numpy as np


def _sorted(values, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Values sorted along the last axis (NaN last) and the count of valid values per row."""
    x = np.moveaxis(np.asarray(values, dtype="float64"), axis, -1)
    x = np.sort(x, axis=-1)
    return x, x.shape[-1] - np.isnan(x).sum(axis=-1)


def _take(x: np.ndarray, index: np.ndarray) -> np.ndarray:
    return np.take_along_axis(x, index[..., None], axis=-1)[..., 0]


def nanquantile(values, q, *, axis: int = -1) -> np.ndarray:
    """Quantile(s) ``q`` (in [0, 1]) along ``axis``, NaN ignored; as ``np.nanquantile``.

    Parameters
    ----------
    values
        Array of any shape.
    q
        A quantile or a 1-d sequence of them.
    axis
        The axis reduced.

    Returns
    -------
    numpy.ndarray
        Shape ``values.shape`` without ``axis``, preceded by ``len(q)`` when
        ``q`` is a sequence (as numpy).

    Examples
    --------
    >>> nanquantile([[1.0, np.nan, 3.0, 2.0], [np.nan] * 4], 0.25)
    array([1.5, nan])
    >>> nanquantile([1.0, 2.0, 3.0, 4.0], [0.1, 0.9])
    array([1.3, 3.7])
    """
    x, n = _sorted(values, axis)
    qs = np.asarray(q, dtype="float64")
    out = np.empty(qs.shape + n.shape)
    empty = n == 0
    last = np.maximum(n - 1, 0)
    for i, quantile in np.ndenumerate(qs):
        virtual = last * quantile
        previous = np.floor(virtual)
        above = virtual >= last
        low = np.where(above, last, previous).astype(np.intp)
        high = np.where(above, last, previous + 1).astype(np.intp)
        gamma = virtual - previous
        a, b = _take(x, low), _take(x, high)
        with np.errstate(invalid="ignore"):  # inf - inf: NaN, as numpy gives
            diff = b - a
            result = a + diff * gamma
            result = np.where(gamma >= 0.5, b - diff * (1 - gamma), result)
        out[i] = np.where(empty, np.nan, result)
    return out


def nanpercentile(values, p, *, axis: int = -1) -> np.ndarray:
    """Percentile(s) ``p`` (in [0, 100]) along ``axis``, NaN ignored; as ``np.nanpercentile``.

    Examples
    --------
    >>> nanpercentile([[1.0, 2.0, np.nan, 4.0]], [5, 95], axis=1)
    array([[1.1],
           [3.8]])
    """
    return nanquantile(values, np.true_divide(np.asarray(p, dtype="float64"), 100), axis=axis)


def nanmedian(values, *, axis: int = -1) -> np.ndarray:
    """Median along ``axis``, NaN ignored; as ``np.nanmedian`` (mean of the two middle values).

    Examples
    --------
    >>> nanmedian([[4.0, 1.0, np.nan, 2.0], [1.0, 2.0, 3.0, 4.0]])
    array([2. , 2.5])
    """
    x, n = _sorted(values, axis)
    high = n // 2
    low = np.where(n % 2 == 1, high, high - 1)
    with np.errstate(invalid="ignore"):  # inf + -inf: NaN, as numpy gives
        middle = (_take(x, np.maximum(low, 0)) + _take(x, np.minimum(high, x.shape[-1] - 1))) / 2.0
    return np.where(n == 0, np.nan, middle)
