"""Rank agreement: Kendall's tau-b and Spearman's rho, with bootstrap intervals over algorithms.

Two measures (or one measure on two evaluations) rank the same algorithms; how
alike are the two rankings?  Kendall's tau-b (``scipy.stats.kendalltau``,
``variant="b"``) is the share of concordant minus discordant pairs of
algorithms, corrected for ties:

.. math::

    \\tau_b = \\frac{n_c - n_d}{\\sqrt{(n_0 - n_x)(n_0 - n_y)}}

with :math:`n_0` the pairs of algorithms, :math:`n_x` (:math:`n_y`) those tied
in :math:`x` (:math:`y`), pairs tied in both counted in each.  Spearman's rho
(``scipy.stats.spearmanr``) is the correlation of the mid-ranks.  Both are 1
for the same order, -1 for the reverse, near 0 for unrelated orders.

The interval is a percentile bootstrap over algorithms: the algorithms are
resampled with replacement ``n_replicates`` times and the coefficient is
recomputed on each resample (an algorithm drawn twice forms a pair tied in
both variables, which tau-b leaves out).  For tau-b every replicate is
computed at once from the pairs' sign matrices :math:`S^x_{ij} =
\\operatorname{sign}(x_i - x_j)` and the replicate's counts :math:`c` of each
algorithm: :math:`n_c - n_d = \\tfrac12 c^\\top (S^x \\circ S^y) c` and
:math:`n_0 - n_x = \\tfrac12 c^\\top |S^x| c` -- the same number scipy gives
on the resampled values (a test checks it).  Each pair of variables draws its
own resamples from a generator seeded by ``seed`` and the two names, so a
pair's interval does not change when other variables are added.

A percentile interval needs replicates in each of its tails: with fewer than
:func:`min_replicates` (``2 / (1 - level)``, 40 at 95%) it would be read off one
or two replicates, which need not hold the coefficient itself, and none is given
(``low`` and ``high`` are NaN, as without replicates).

An algorithm without a finite value in either variable (an undefined measure)
is left out of that pair only, and ``n`` says how many were used: nothing
undefined flows into a ranking.
"""

from __future__ import annotations

import warnings
import zlib
from collections.abc import Sequence

import numpy as np
import pandas as pd

from audit.exceptions import ParameterError
from audit.validation import Integer, Options, validate_params

#: Fewest algorithms a coefficient is computed on.
MIN_ALGORITHMS = 3


def _rng(seed: int, names: Sequence[str]) -> np.random.Generator:
    """A generator seeded by ``seed`` and the names of the variables compared."""
    return np.random.default_rng([seed, *(zlib.crc32(str(n).encode("utf-8")) for n in names)])


def _counts(n: int, n_replicates: int, rng: np.random.Generator) -> np.ndarray:
    """How often each of ``n`` items is drawn in each of ``n_replicates`` resamples of size n."""
    draws = rng.integers(0, n, size=(n_replicates, n))
    flat = draws + n * np.arange(n_replicates)[:, None]
    return np.bincount(flat.ravel(), minlength=n * n_replicates).reshape(n_replicates, n)


def average_ranks(values, axis: int = -1) -> np.ndarray:
    """Mid-ranks of ``values`` along ``axis``, 1 for the smallest, ties averaged.

    ``scipy.stats.rankdata(values, axis=axis, method="average")`` for values
    without NaN (a test checks it), in NumPy alone: one stable sort, the start
    and end of each run of ties, and the mean of the two.  Importing
    :mod:`scipy.stats` costs more than ranking every replicate of a report.

    >>> average_ranks(np.array([[3.0, 1.0, 3.0, 2.0]]))
    array([[3.5, 1. , 3.5, 2. ]])
    """
    values = np.moveaxis(np.asarray(values, dtype="float64"), axis, -1)
    n = values.shape[-1]
    if n == 0:
        return np.moveaxis(np.empty(values.shape), -1, axis)
    order = np.argsort(values, axis=-1, kind="stable")
    ordered = np.take_along_axis(values, order, axis=-1)
    position = np.broadcast_to(np.arange(n), ordered.shape)
    first = np.ones(ordered.shape, dtype=bool)  # the first of a run of ties
    first[..., 1:] = ordered[..., 1:] != ordered[..., :-1]
    last = np.ones(ordered.shape, dtype=bool)  # the last of a run of ties
    last[..., :-1] = first[..., 1:]
    start = np.maximum.accumulate(np.where(first, position, 0), axis=-1)
    end = np.flip(np.minimum.accumulate(np.flip(np.where(last, position, n - 1), -1), axis=-1), -1)
    ranks = np.empty(ordered.shape)
    np.put_along_axis(ranks, order, (start + end) / 2.0 + 1.0, axis=-1)
    return np.moveaxis(ranks, -1, axis)


def tau_b_replicates(x, y, counts: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of ``x`` and ``y`` on each resample given by ``counts``.

    ``counts`` is (replicates x algorithms): how often each algorithm is drawn.
    A resample whose values are all tied in one variable gives NaN.

    >>> x, y = np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 3.0, 2.0, 4.0])
    >>> round(float(tau_b_replicates(x, y, np.ones((1, 4)))[0]), 4)  # scipy: 0.6667
    0.6667
    """
    x, y = np.asarray(x, dtype="float64"), np.asarray(y, dtype="float64")
    sx, sy = _compared(x, x), _compared(y, y)
    c = np.asarray(counts)
    # whole counts make every term a whole number, each of a replicate's sums at most the
    # square of its draws (the algorithms): single precision holds them exactly up to
    # 4,096 draws (2**24) and gives the double-precision values at half the cost
    whole = c.dtype.kind in "biu" and c.sum(axis=1).max(initial=0) <= _EXACT_IN_FLOAT32
    exact = np.float32 if whole else np.float64
    c = c.astype(exact)

    def quadratic(signs: np.ndarray) -> np.ndarray:  # each replicate's c' signs c
        return ((c @ signs.astype(exact)) * c).sum(axis=1, dtype=exact).astype(np.float64)

    joint = quadratic(sx * sy)
    untied_x, untied_y = quadratic(np.abs(sx)), quadratic(np.abs(sy))
    with np.errstate(invalid="ignore", divide="ignore"):
        return joint / np.sqrt(untied_x * untied_y)


#: The most draws of a resample whose tau-b sums :func:`tau_b_replicates` computes in
#: single precision: the square of it, the largest sum, is a float32 integer (2**24).
_EXACT_IN_FLOAT32 = 4096


#: Pairs of algorithms whose signs :func:`tau_b` holds at once (about 32 MB a matrix):
#: the counts are summed over blocks of rows, so memory stays bounded.
_PAIRS_AT_ONCE = 1 << 22
#: Algorithms above which :func:`tau_b` is scipy's (imported for it): counting every
#: pair costs more than the import from here (0.2 s at 5,000), and scipy's count grows
#: as n log n.
_SCIPY_ABOVE = 5000

UNEQUAL = "the two variables give {x} and {y} values: one value for each algorithm is needed"
NOT_FLAT = (
    "Spearman's rho takes two one-dimensional variables, not arrays of {x} and {y} "
    "dimensions (scipy's spearmanr reads the columns of a table as variables)"
)


def _paired(x, y, flatten: bool = True) -> tuple[np.ndarray, np.ndarray] | None:
    """``x`` and ``y`` as float64, flattened (else refused unless one-dimensional); None
    where the coefficient is undefined, as scipy has it: fewer than two values, a NaN,
    or one variable all tied."""
    x, y = np.asarray(x, dtype="float64"), np.asarray(y, dtype="float64")
    if not flatten and (x.ndim != 1 or y.ndim != 1):
        raise ParameterError(NOT_FLAT.format(x=x.ndim, y=y.ndim))
    x, y = np.ravel(x), np.ravel(y)
    if len(x) != len(y):
        raise ParameterError(UNEQUAL.format(x=len(x), y=len(y)))
    if len(x) < 2 or np.isnan(x).any() or np.isnan(y).any():
        return None
    if np.all(x == x[0]) or np.all(y == y[0]):
        return None
    return x, y


def tau_b(x, y) -> float:
    """Kendall's tau-b of ``x`` and ``y``, as ``scipy.stats.kendalltau(x, y,
    variant="b").statistic`` gives it, bit for bit: the same whole counts of pairs, from
    the signs of the pairs' differences as in :func:`tau_b_replicates` (summed over
    blocks of rows), divided as scipy divides them; NaN where scipy's is (fewer than two
    values, a NaN, one variable all tied).  Importing :mod:`scipy.stats` costs more than
    computing every coefficient of a report; above :data:`_SCIPY_ABOVE` values the
    coefficient is scipy's own.

    >>> round(tau_b([1.0, 2.0, 3.0, 4.0], [1.0, 3.0, 2.0, 4.0]), 4)  # (5 - 1) / 6
    0.6667
    >>> tau_b([1.0, 1.0, 1.0], [1.0, 2.0, 3.0])
    nan
    """
    paired = _paired(x, y)
    if paired is None:
        return float("nan")
    x, y = paired
    if len(x) > _SCIPY_ABOVE:
        from scipy.stats import kendalltau

        return float(kendalltau(x, y, variant="b").statistic)
    # twice the concordant less the discordant pairs, and twice the pairs untied in each
    joint = untied_x = untied_y = 0
    step = max(1, _PAIRS_AT_ONCE // len(x))
    for start in range(0, len(x), step):
        sx, sy = (_compared(v[start : start + step], v) for v in (x, y))
        joint += int(np.sum(sx * sy, dtype=np.int64))
        untied_x += int(np.count_nonzero(sx))
        untied_y += int(np.count_nonzero(sy))
    tau = (joint // 2) / np.sqrt(untied_x // 2) / np.sqrt(untied_y // 2)
    return float(np.minimum(1.0, max(-1.0, tau)))


def _compared(rows: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The sign of each row's value against each value (-1, 0 or 1), by comparison: no
    difference to overflow, infinities ordered."""
    greater = np.greater(rows[:, None], values[None, :]).astype(np.int8)
    return greater - np.less(rows[:, None], values[None, :]).astype(np.int8)


def spearman_rho(x, y) -> float:
    """Spearman's rho of ``x`` and ``y``, as ``scipy.stats.spearmanr(x, y).statistic``
    gives it, bit for bit: the correlation (:func:`numpy.corrcoef`) of the mid-ranks
    (:func:`average_ranks`); NaN where scipy's is (fewer than two values, a NaN, one
    variable all tied).  Each variable is one-dimensional.

    >>> round(spearman_rho([1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 1.0, 4.0, 3.0, 5.0]), 4)  # 1 - 6*4/120
    0.8
    """
    paired = _paired(x, y, flatten=False)
    if paired is None:
        return float("nan")
    ranks = np.column_stack((average_ranks(paired[0]), average_ranks(paired[1])))
    return float(np.corrcoef(ranks, rowvar=False)[1, 0])


def _spearman_replicates(x: np.ndarray, y: np.ndarray, draws: np.ndarray) -> np.ndarray:
    rx, ry = average_ranks(x[draws], axis=1), average_ranks(y[draws], axis=1)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(axis=1) / np.sqrt((rx**2).sum(axis=1) * (ry**2).sum(axis=1))


def min_replicates(level: float) -> int:
    """The fewest replicates with a coefficient that give a percentile interval at
    ``level``: one replicate expected beyond each end of it.

    >>> min_replicates(0.95), min_replicates(0.9), min_replicates(0.99)
    (40, 20, 200)
    """
    return int(np.ceil(round(2 / (1 - level), 9)))


def _interval(values: np.ndarray, level: float) -> tuple[float, float]:
    finite = values[np.isfinite(values)]
    if len(finite) < min_replicates(level):  # its tails would hold no replicate
        return np.nan, np.nan
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(finite, [tail, 100 - tail])
    return float(low), float(high)


#: The methods of :func:`agreement`.
METHODS = ("kendall", "spearman")


@validate_params("seed", "level", n_replicates=Integer(0), method=Options(METHODS))
def agreement(
    x,
    y,
    *,
    method: str = "kendall",
    n_replicates: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    names: Sequence[str] = ("x", "y"),
) -> dict:
    """Rank agreement of ``x`` and ``y`` (same algorithms, same order) with its interval.

    Parameters
    ----------
    x, y
        Values of two variables for the same algorithms; a non-finite value
        leaves its algorithm out.
    method
        ``"kendall"`` (tau-b) or ``"spearman"``.
    n_replicates
        Bootstrap resamples of the algorithms (0: no interval; fewer than
        :func:`min_replicates` with a coefficient give none either).
    seed, names
        The resamples' generator is seeded by ``seed`` and ``names``.
    level
        Coverage of the percentile interval.

    Returns
    -------
    dict
        ``value``, ``low``, ``high`` (NaN when not computed), ``n`` (algorithms
        used) and ``replicates`` (resamples with a defined coefficient).

    Examples
    --------
    >>> a = agreement([1, 2, 3, 4, 5], [2, 1, 3, 5, 4], n_replicates=0)
    >>> round(a["value"], 4), a["n"]
    (0.6, 5)
    """
    x, y = np.asarray(x, dtype="float64"), np.asarray(y, dtype="float64")
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    out = {"value": np.nan, "low": np.nan, "high": np.nan, "n": int(keep.sum()), "replicates": 0}
    if len(x) < MIN_ALGORITHMS or np.all(x == x[0]) or np.all(y == y[0]):
        return out
    out["value"] = tau_b(x, y) if method == "kendall" else spearman_rho(x, y)
    if n_replicates:
        rng = _rng(seed, [method, *names])
        if method == "kendall":
            values = tau_b_replicates(x, y, _counts(len(x), n_replicates, rng))
        else:
            draws = rng.integers(0, len(x), size=(n_replicates, len(x)))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                values = _spearman_replicates(x, y, draws)
        out["low"], out["high"] = _interval(values, level)
        out["replicates"] = int(np.isfinite(values).sum())
    return out


@validate_params("seed", "level", n_replicates=Integer(0))
def agreement_matrix(
    values: pd.DataFrame, *, n_replicates: int = 1000, seed: int = 0, level: float = 0.95
) -> pd.DataFrame:
    """Kendall's tau-b between every pair of columns of ``values``, with its interval.

    Parameters
    ----------
    values
        One row per algorithm, one column per variable (a measure oriented so
        that a higher value is less fair, an accuracy as an error rate).

    Returns
    -------
    pandas.DataFrame
        One row per unordered pair of columns, in column order: ``first``,
        ``second``, ``tau``, ``low``, ``high``, ``n`` and ``replicates``
        (:func:`agreement`).  ``attrs`` records ``n_replicates``, ``seed`` and
        ``level``.

    Examples
    --------
    >>> v = pd.DataFrame({"a": [1, 2, 3, 4], "b": [1, 2, 4, 3], "c": [4, 3, 2, 1]})
    >>> agreement_matrix(v, n_replicates=0)[["first", "second", "tau"]].round(4)
      first second     tau
    0     a      b  0.6667
    1     a      c -1.0000
    2     b      c -0.6667
    """
    columns = [str(c) for c in values.columns]
    # each column taken once (a column taken copies the frame's attrs: 552 copies, a
    # quarter of the time of 24 columns' 276 pairs)
    taken = {name: values[column] for name, column in zip(columns, values.columns, strict=True)}
    rows = []
    for i, first in enumerate(columns):
        for second in columns[i + 1 :]:
            a = agreement(
                taken[first],
                taken[second],
                n_replicates=n_replicates,
                seed=seed,
                level=level,
                names=(first, second),
            )
            rows.append(
                {
                    "first": first,
                    "second": second,
                    "tau": a["value"],
                    "low": a["low"],
                    "high": a["high"],
                    "n": a["n"],
                    "replicates": a["replicates"],
                }
            )
    out = pd.DataFrame(rows, columns=["first", "second", "tau", "low", "high", "n", "replicates"])
    out.attrs.update({"n_replicates": n_replicates, "seed": seed, "level": level})
    return out


def square(pairs: pd.DataFrame, columns: Sequence[str], value: str = "tau") -> pd.DataFrame:
    """The pairs of :func:`agreement_matrix` as a symmetric matrix (1 on the diagonal).

    >>> p = pd.DataFrame({"first": ["a"], "second": ["b"], "tau": [0.5]})
    >>> square(p, ["a", "b"])
         a    b
    a  1.0  0.5
    b  0.5  1.0
    """
    columns = [str(c) for c in columns]
    out = pd.DataFrame(np.nan, index=columns, columns=columns)
    for c in columns:
        out.loc[c, c] = 1.0
    for first, second, v in zip(pairs["first"], pairs["second"], pairs[value], strict=True):
        out.loc[first, second] = out.loc[second, first] = v
    return out


__all__ = [
    "METHODS",
    "MIN_ALGORITHMS",
    "NOT_FLAT",
    "UNEQUAL",
    "agreement",
    "agreement_matrix",
    "min_replicates",
    "spearman_rho",
    "square",
    "tau_b",
    "tau_b_replicates",
]
