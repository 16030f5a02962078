"""Binomial intervals of the group rates (Wilson, Clopper-Pearson)."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from audit.analysis.accuracy import _from_table, read_counts
from audit.exceptions import InputError
from audit.tables.layouts import available_rates
from audit.tables.rates import COUNT_COLUMNS, RATE_COUNTS, rate_matrices
from audit.uncertainty.checks import (
    BAD_COUNTS,
    COUNTS_COLUMNS,
    INTERVAL_METHOD,
    NO_COUNTS,
)
from audit.validation import RATES_TABLE, validate_params


@validate_params("level", method=INTERVAL_METHOD)
def binomial_interval(k, n, *, level: float = 0.95, method: str = "wilson"):
    r"""Two-sided confidence interval of a binomial proportion ``k / n``.

    ``method="wilson"``: the Wilson score interval,

    .. math::
        \frac{\hat p + z^2/2n \pm z\sqrt{\hat p(1-\hat p)/n + z^2/4n^2}}{1 + z^2/n},
        \qquad z = \Phi^{-1}\left(\tfrac{1+\text{level}}{2}\right),

    whose coverage is close to ``level`` on average and which, unlike the Wald
    interval, is sensible at ``k = 0`` (the usual case for a group FMR).
    ``method="clopper-pearson"``: the exact interval from beta quantiles,
    :math:`[B(\tfrac{1-\text{level}}{2}; k, n-k+1),\ B(\tfrac{1+\text{level}}{2}; k+1, n-k)]`
    (0 at ``k = 0``, 1 at ``k = n``), whose coverage is at least ``level``.

    Vectorised: ``k`` and ``n`` broadcast.

    Returns
    -------
    (low, high)
        Arrays of the broadcast shape.

    Examples
    --------
    >>> low, high = binomial_interval(0, 100_000)
    >>> float(low), round(float(high), 8)
    (0.0, 3.841e-05)
    >>> low, high = binomial_interval(5, 10, method="clopper-pearson")
    >>> round(float(low), 4), round(float(high), 4)
    (0.1871, 0.8129)
    """
    k, n = np.broadcast_arrays(np.asarray(k, dtype="float64"), np.asarray(n, dtype="float64"))
    if not (np.all(np.isfinite(k)) and np.all(np.isfinite(n))):
        raise InputError(BAD_COUNTS.format(problem="got a non-finite count"))
    if np.any(k != np.round(k)) or np.any(n != np.round(n)):
        raise InputError(BAD_COUNTS.format(problem="got a fractional count"))
    if np.any(n <= 0) or np.any(k < 0) or np.any(k > n):
        raise InputError(BAD_COUNTS.format(problem="got k < 0, k > n or n <= 0"))
    from scipy import special  # here: not every report needs scipy

    tail = (1.0 - level) / 2.0
    if method == "wilson":
        z = special.ndtri(1.0 - tail)
        p = k / n
        denominator = 1.0 + z**2 / n
        centre = (p + z**2 / (2.0 * n)) / denominator
        half = z * np.sqrt(p * (1.0 - p) / n + z**2 / (4.0 * n**2)) / denominator
        low = np.where(k == 0, 0.0, np.clip(centre - half, 0.0, 1.0))
        high = np.where(k == n, 1.0, np.clip(centre + half, 0.0, 1.0))
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            # the beta distribution's quantile (scipy.stats.beta.ppf) is betaincinv
            low = np.where(k == 0, 0.0, special.betaincinv(np.maximum(k, 1.0), n - k + 1.0, tail))
            high = np.where(
                k == n, 1.0, special.betaincinv(k + 1.0, np.maximum(n - k, 1.0), 1.0 - tail)
            )
    return low, high


@validate_params(table=RATES_TABLE)
def count_matrices(table: pd.DataFrame, counts=None) -> tuple[np.ndarray, np.ndarray]:
    """Mated and non-mated comparison counts as (algorithm x group) arrays.

    From the table's ``n_mated`` and ``n_nonmated`` columns, or from
    ``counts``: a frame (or CSV path) with columns ``group``, ``n_mated``,
    ``n_nonmated`` and optionally ``algorithm`` (without it the counts apply to
    every algorithm).  Rows and columns follow :func:`audit.tables.rates.rate_matrices`.
    A counts table is read and checked by :func:`audit.analysis.accuracy.read_counts`:
    a count that is not a non-negative whole number (``100.7``, ``abc``), an
    unknown or missing group raises :class:`audit.analysis.accuracy.WeightsError` (a
    ``ValueError``) naming the source, line (or row) and column.

    Returns
    -------
    (n_mated, n_nonmated)
        int64 arrays of shape (n_algorithms, n_groups).
    """
    algorithms, groups, _, _ = rate_matrices(table)
    if counts is None:
        n = _table_counts(table, algorithms, groups, ("fnmr", "fmr"))
        return n["fnmr"], n["fmr"]
    if not isinstance(counts, (pd.DataFrame, str, os.PathLike)):
        counts = pd.DataFrame(counts)
    arrays = read_counts(counts, algorithms, groups)
    lacking = [c for c in COUNT_COLUMNS if c not in arrays]
    if lacking:
        source = "<DataFrame>" if isinstance(counts, pd.DataFrame) else str(counts)
        raise InputError(COUNTS_COLUMNS.format(source=source, missing=" or ".join(lacking)))
    return arrays["n_mated"].astype("int64"), arrays["n_nonmated"].astype("int64")


def _table_counts(table: pd.DataFrame, algorithms, groups, rates) -> dict[str, np.ndarray]:
    """The count column each of ``rates`` rests on (``n_mated`` for ``"fnmr"``,
    ``n_nonmated`` for ``"fmr"``) as an int64 (algorithm x group) array, by rate; a
    missing column refused, naming it."""
    for rate in rates:
        column, kind = RATE_COUNTS[rate]
        if column not in table.columns:
            raise InputError(NO_COUNTS.format(column=column, kind=kind))
    arrays = _from_table(table, algorithms, groups)  # the counts the accuracy reads
    return {rate: arrays[RATE_COUNTS[rate][0]].astype("int64") for rate in rates}


@validate_params("level", method=INTERVAL_METHOD, table=RATES_TABLE)
def rate_intervals(
    table: pd.DataFrame, *, counts=None, level: float = 0.95, method: str = "wilson"
) -> pd.DataFrame:
    """Binomial confidence intervals of every group's FMR and FNMR.

    The error counts are recovered as ``round(rate * n)`` with ``n`` the
    number of non-mated (FMR) or mated (FNMR) comparisons (see
    :func:`count_matrices`).  Treats comparisons as independent; comparisons
    that share a subject are not, so with scores at hand prefer
    :func:`score_bootstrap`.

    A one-sided table (FMRs alone, or FNMRs alone) needs only the count its rate rests
    on (``n_nonmated``, or ``n_mated``) and gets the intervals of that rate.

    Returns
    -------
    pandas.DataFrame
        The table with ``fmr_low``, ``fmr_high``, ``fnmr_low``, ``fnmr_high``
        added (those of the rate it holds, for a one-sided table) and the counts
        used; ``attrs`` record method and level.

    Examples
    --------
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"algorithm": ["a", "a"], "group": ["F", "M"],
    ...     "fmr": [0.0, 1e-4], "fnmr": [0.02, 0.01],
    ...     "n_mated": [1000, 1000], "n_nonmated": [100_000, 100_000]}))
    >>> rate_intervals(t)[["group", "fnmr_low", "fnmr_high"]].round(4)
      group  fnmr_low  fnmr_high
    0     F    0.0130     0.0307
    1     M    0.0054     0.0183
    """
    algorithms, groups, fmr, fnmr = rate_matrices(table)
    held = available_rates(table)
    if counts is None and len(held) == 1:  # one-sided: the count of its rate is enough
        n = _table_counts(table, algorithms, groups, held)
        n_mated, n_nonmated = n.get("fnmr"), n.get("fmr")
    else:
        n_mated, n_nonmated = count_matrices(table, counts)
    out = table.copy()
    alg_pos = algorithms.get_indexer(table["algorithm"])
    grp_pos = groups.get_indexer(table["group"])
    for rate, n, name in ((fmr, n_nonmated, "fmr"), (fnmr, n_mated, "fnmr")):
        if name not in held:  # the rate a one-sided table lacks: no interval
            continue
        k = np.round(rate * n)
        low, high = binomial_interval(k, n, level=level, method=method)
        out[f"{name}_low"] = low[alg_pos, grp_pos]
        out[f"{name}_high"] = high[alg_pos, grp_pos]
    for column, n in (("n_mated", n_mated), ("n_nonmated", n_nonmated)):
        if n is not None:
            out[column] = n[alg_pos, grp_pos]
    out.attrs.update(table.attrs)
    out.attrs["interval"] = {
        "method": method,
        "level": level,
        "assumes": "independent comparisons (binomial counts)",
    }
    return out
