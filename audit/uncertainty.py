"""Uncertainty of the fairness measures, of the FFMC verdicts and of the Pareto frontier.

Error rates are estimates from finite numbers of comparisons, and the NIST FRVT
Part 3 Annex 15 transcription (Howard et al. 2022, sec. 3.3) moreover rounds
every FMR to a 0.1-decade grid ``10**(k/10)`` with a floor at ``1e-5``.  This
module says which conclusions survive that uncertainty.  Three sources of
replicates feed one analysis:

* :func:`transcription_sensitivity` (Annex 15): each FMR is redrawn uniformly
  in log10 within its 0.1-decade bin, and a floored FMR uniformly in log10
  between a documented lower limit and the top of the floor's bin; each FNMR
  uniformly within its last printed decimal.  This is a sensitivity analysis of
  the rounding, not a sampling distribution.
* :func:`parametric_bootstrap` (rates with counts of mated and non-mated
  comparisons): each group's error count is redrawn from a binomial with the
  observed rate, i.e. comparisons are treated as independent.
* :func:`score_bootstrap` (raw scores with subject identities): subjects are
  resampled with replacement within their demographic group, every comparison
  of a drawn subject coming along (a stratified cluster bootstrap), and the
  rates are recomputed by a caller-supplied function, threshold included.
  ``unit="comparison"`` resamples single comparisons instead, for contrast.

Each gives arrays of replicate rates of shape ``(n_replicates, n_algorithms,
n_groups)``; every registered rate measure is evaluated on all replicates at
once (stacked as ``(n_replicates * n_algorithms, n_groups)``), then summarised
into an :class:`UncertaintyResult`: percentile intervals of each measure and of
its terms, the stability of the ranking, of dataset-level statistics quoted in
the paper (ranges, the alpha at which the FMR term's contribution crosses one
half) and the probability of each algorithm being on the accuracy/fairness
Pareto frontier.  :func:`verdict_stability` reruns the FFMC audit on a subset
of replicates, and :func:`robustness_summary` writes the plain-language
paragraph.  Group rates get binomial intervals from :func:`binomial_interval`
(Wilson score or Clopper-Pearson) via :func:`rate_intervals`.

All randomness comes from ``numpy.random.default_rng(seed)``; results record
their parameters in ``attrs`` (frames) or ``params`` (results).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import special, stats

from audit.accuracy import group_weights, read_counts
from audit.ffmc import ffmc_table, first_crossing
from audit.measures import MeasureResult, UndefinedMeasureWarning
from audit.pareto import TIE_RTOL, efficient  # one tie tolerance for every frontier
from audit.rates import COUNT_COLUMNS, rate_matrices
from audit.registry import Measure, get_measure, measure_names

# Error messages: constants, so that tests can check them exactly.
BAD_LEVEL = "level must lie strictly between 0 and 1, got {level!r}"
BAD_METHOD = "method must be 'wilson' or 'clopper-pearson', got {method!r}"
BAD_COUNTS = "binomial counts need whole numbers 0 <= k <= n with n > 0; {problem}"
NO_COUNTS = (
    "the table has no {column!r} column and no counts were given: a binomial interval "
    "or a parametric bootstrap needs the number of {kind} comparisons per group "
    "(give the column, or counts=<frame or CSV with group, n_mated, n_nonmated>)"
)
NO_COMPARISONS = "some (algorithm, group) has no mated or no non-mated comparison"
COUNTS_COLUMNS = (
    "{source}: no column {missing}; a binomial interval or bootstrap needs both n_mated and "
    "n_nonmated"
)
BAD_REPLICATES = "n_replicates must be a positive whole number, got {value!r}"
NOT_ON_GRID = (
    "{count} FMR value(s) are not on the {step}-decade grid 10**(k*{step}) (first: "
    "row {row}, column {column}, FMR {value!r}); the transcription redraw applies only "
    "to grid-rounded rates"
)
BELOW_FLOOR = "{count} FMR value(s) lie below the floor {floor!r} (first: {value!r})"
BAD_FLOOR_LOWER = (
    "floor_lower must be positive and at most the floor {floor!r} (or None for the "
    "floor's own bin), got {value!r}"
)
MISSING_SCORE_COLUMN = "the score table has no column {column!r}; its columns are {columns}"
BAD_UNIT = "unit must be 'subject' or 'comparison', got {unit!r}"
SCORE_MEASURE = "measure {name!r} needs scores, not rates; uncertainty covers rate measures"
RATES_MISSING = "replicate {replicate}: the rates function returned no rate for {what}"

#: Default lower limit (log10) for an FMR transcribed at the 1e-5 floor: one decade
#: below the floor.  See :func:`transcription_redraws` for the reasoning.
FLOOR_LOWER = 1e-6

#: Values quoted by Howard et al. (2022) on Annex 15 at alpha = 0.5, keyed by the
#: statistic names of :attr:`UncertaintyResult.statistics`.
HOWARD_2022_CLAIMS: dict[str, tuple[float, str]] = {
    "garbe.min": (0.165, "sec. 4.3: GARBE spans 0.165 - 0.618"),
    "garbe.max": (0.618, "sec. 4.3: GARBE spans 0.165 - 0.618"),
    "garbe.fmr_term.median": (0.74, "sec. 4.3: median A = 0.74"),
    "garbe.fnmr_term.median": (0.33, "sec. 4.3: median B = 0.33"),
    "garbe.crossing.mean": (0.4, "sec. 4.3: mean share of A passes 1/2 at alpha = 0.4"),
    "ir.min": (2.4, "sec. 4.2: IR spans 2.4 - 26.38"),
    "ir.max": (26.38, "sec. 4.2: IR spans 2.4 - 26.38"),
    "ir.fmr_term.max": (63.1, "sec. 4.2 / 4.4: practical maximum 63.1 (alpha = 1)"),
    "fdr.q05": (0.9, "sec. 4.1: over 95% of FDR values lie in 0.9 - 1"),
    "fdr.crossing.median": (0.99, "sec. 4.1: median share of A passes 1/2 at alpha = 0.99"),
    "frontier.size": (9, "sec. 4.5: 9 algorithms on the frontier (total FNMR weighted by the "
                         "mated counts, which the CSV lacks)"),
}

#: Default grid of alpha values for the crossing statistics: 0.01 steps, then
#: 0.001 steps above 0.9 (where the FDR crossing lies).
ALPHA_GRID = np.unique(np.round(np.concatenate(
    [np.linspace(0.0, 0.9, 91), np.linspace(0.9, 1.0, 101)]), 6))


# --------------------------------------------------------------------------- checks


def _check_level(level: float) -> float:
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(BAD_LEVEL.format(level=level))
    return level


def _check_replicates(n_replicates) -> int:
    if isinstance(n_replicates, bool) or not isinstance(n_replicates, (int, np.integer)) \
            or n_replicates < 1:
        raise ValueError(BAD_REPLICATES.format(value=n_replicates))
    return int(n_replicates)


def _rate_measures(measures) -> list[Measure]:
    names = measure_names() if measures is None else list(measures)
    chosen = []
    for name in names:
        measure = name if isinstance(name, Measure) else get_measure(name)
        if measure.inputs != "rates":
            if measures is None:
                continue
            raise ValueError(SCORE_MEASURE.format(name=measure.name))
        chosen.append(measure)
    return chosen


# ----------------------------------------------------------------- binomial intervals


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
    level = _check_level(level)
    if method not in ("wilson", "clopper-pearson"):
        raise ValueError(BAD_METHOD.format(method=method))
    k, n = np.broadcast_arrays(np.asarray(k, dtype="float64"), np.asarray(n, dtype="float64"))
    if not (np.all(np.isfinite(k)) and np.all(np.isfinite(n))):
        raise ValueError(BAD_COUNTS.format(problem="got a non-finite count"))
    if np.any(k != np.round(k)) or np.any(n != np.round(n)):
        raise ValueError(BAD_COUNTS.format(problem="got a fractional count"))
    if np.any(n <= 0) or np.any(k < 0) or np.any(k > n):
        raise ValueError(BAD_COUNTS.format(problem="got k < 0, k > n or n <= 0"))
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
            low = np.where(k == 0, 0.0, stats.beta.ppf(tail, np.maximum(k, 1.0), n - k + 1.0))
            high = np.where(k == n, 1.0, stats.beta.ppf(1.0 - tail, k + 1.0, np.maximum(n - k, 1.0)))
    return low, high


def count_matrices(table: pd.DataFrame, counts=None) -> tuple[np.ndarray, np.ndarray]:
    """Mated and non-mated comparison counts as (algorithm x group) arrays.

    From the table's ``n_mated`` and ``n_nonmated`` columns, or from
    ``counts``: a frame (or CSV path) with columns ``group``, ``n_mated``,
    ``n_nonmated`` and optionally ``algorithm`` (without it the counts apply to
    every algorithm).  Rows and columns follow :func:`audit.rates.rate_matrices`.
    A counts table is read and checked by :func:`audit.accuracy.read_counts`:
    a count that is not a non-negative whole number (``100.7``, ``abc``), an
    unknown or missing group raises :class:`audit.accuracy.WeightsError` (a
    ``ValueError``) naming the source, line (or row) and column.

    Returns
    -------
    (n_mated, n_nonmated)
        int64 arrays of shape (n_algorithms, n_groups).
    """
    algorithms, groups, _, _ = rate_matrices(table)
    if counts is None:
        out = []
        for column, kind in (("n_mated", "mated"), ("n_nonmated", "non-mated")):
            if column not in table.columns:
                raise ValueError(NO_COUNTS.format(column=column, kind=kind))
            wide = table.pivot(index="algorithm", columns="group", values=column)
            out.append(wide.loc[algorithms, groups].to_numpy(dtype="int64"))
        return out[0], out[1]
    if not isinstance(counts, (pd.DataFrame, str, os.PathLike)):
        counts = pd.DataFrame(counts)
    arrays = read_counts(counts, algorithms, groups)
    lacking = [c for c in COUNT_COLUMNS if c not in arrays]
    if lacking:
        source = "<DataFrame>" if isinstance(counts, pd.DataFrame) else str(counts)
        raise ValueError(COUNTS_COLUMNS.format(source=source, missing=" or ".join(lacking)))
    return arrays["n_mated"].astype("int64"), arrays["n_nonmated"].astype("int64")


def rate_intervals(table: pd.DataFrame, *, counts=None, level: float = 0.95,
                   method: str = "wilson") -> pd.DataFrame:
    """Binomial confidence intervals of every group's FMR and FNMR.

    The error counts are recovered as ``round(rate * n)`` with ``n`` the
    number of non-mated (FMR) or mated (FNMR) comparisons (see
    :func:`count_matrices`).  Treats comparisons as independent; comparisons
    that share a subject are not, so with scores at hand prefer
    :func:`score_bootstrap`.

    Returns
    -------
    pandas.DataFrame
        The table with ``fmr_low``, ``fmr_high``, ``fnmr_low``, ``fnmr_high``
        added (and the counts used); ``attrs`` record method and level.

    Examples
    --------
    >>> from audit.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"algorithm": ["a", "a"], "group": ["F", "M"],
    ...     "fmr": [0.0, 1e-4], "fnmr": [0.02, 0.01],
    ...     "n_mated": [1000, 1000], "n_nonmated": [100_000, 100_000]}))
    >>> rate_intervals(t)[["group", "fnmr_low", "fnmr_high"]].round(4)
      group  fnmr_low  fnmr_high
    0     F    0.0130     0.0307
    1     M    0.0054     0.0183
    """
    algorithms, groups, fmr, fnmr = rate_matrices(table)
    n_mated, n_nonmated = count_matrices(table, counts)
    out = table.copy()
    alg_pos = algorithms.get_indexer(table["algorithm"])
    grp_pos = groups.get_indexer(table["group"])
    for rate, n, name in ((fmr, n_nonmated, "fmr"), (fnmr, n_mated, "fnmr")):
        k = np.round(rate * n)
        low, high = binomial_interval(k, n, level=level, method=method)
        out[f"{name}_low"] = low[alg_pos, grp_pos]
        out[f"{name}_high"] = high[alg_pos, grp_pos]
    out["n_mated"] = n_mated[alg_pos, grp_pos]
    out["n_nonmated"] = n_nonmated[alg_pos, grp_pos]
    out.attrs.update(table.attrs)
    out.attrs["interval"] = {"method": method, "level": level,
                             "assumes": "independent comparisons (binomial counts)"}
    return out


# ------------------------------------------------------------------------ replicates


def parametric_replicates(table: pd.DataFrame, *, counts=None, n_replicates: int = 1000,
                          seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Parametric-bootstrap replicates of the group rates from binomial counts.

    Each replicate draws ``K ~ Binomial(n_nonmated, FMR)`` and
    ``K' ~ Binomial(n_mated, FNMR)`` for every (algorithm, group) and returns
    ``K / n_nonmated`` and ``K' / n_mated``.

    Returns
    -------
    (fmr, fnmr)
        Arrays of shape (n_replicates, n_algorithms, n_groups).

    Examples
    --------
    >>> from audit.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"algorithm": ["a", "a"], "group": ["F", "M"],
    ...     "fmr": [1e-4, 2e-4], "fnmr": [0.02, 0.01],
    ...     "n_mated": [1000, 1000], "n_nonmated": [100_000, 100_000]}))
    >>> fmr, fnmr = parametric_replicates(t, n_replicates=3, seed=1)
    >>> fmr.shape
    (3, 1, 2)
    """
    n_replicates = _check_replicates(n_replicates)
    _, _, fmr, fnmr = rate_matrices(table)
    n_mated, n_nonmated = count_matrices(table, counts)
    if (n_mated <= 0).any() or (n_nonmated <= 0).any():
        raise ValueError(BAD_COUNTS.format(problem=NO_COMPARISONS))
    rng = np.random.default_rng(seed)
    size = (n_replicates, *fmr.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        fmr_reps = rng.binomial(n_nonmated, fmr, size=size) / n_nonmated
        fnmr_reps = rng.binomial(n_mated, fnmr, size=size) / n_mated
    return fmr_reps, fnmr_reps


def transcription_bins(fmr, fnmr, *, step: float = 0.1, floor: float = 1e-5,
                       floor_lower: float | None = FLOOR_LOWER, fnmr_half_width: float = 5e-5):
    """The interval each transcribed rate may come from (see :func:`transcription_redraws`).

    Returns
    -------
    (fmr_low, fmr_high, fnmr_low, fnmr_high)
        Arrays shaped like ``fmr``; the FMR bounds are log10 values.
    """
    fmr = np.atleast_2d(np.asarray(fmr, dtype="float64"))
    fnmr = np.atleast_2d(np.asarray(fnmr, dtype="float64"))
    if floor_lower is None:
        floor_lower = 10.0 ** (np.log10(floor) - 0.5 * step)
    if not 0.0 < floor_lower <= floor:
        raise ValueError(BAD_FLOOR_LOWER.format(floor=floor, value=floor_lower))
    below = fmr < floor * (1.0 - 1e-9)
    if below.any():
        raise ValueError(BELOW_FLOOR.format(count=int(below.sum()), floor=floor,
                                            value=float(fmr[below][0])))
    with np.errstate(divide="ignore"):
        log = np.log10(fmr)
    k = np.round(log / step)
    off = ~(np.abs(log - k * step) < 1e-6)
    if off.any():
        row, column = (int(i[0]) for i in np.nonzero(off))
        raise ValueError(NOT_ON_GRID.format(count=int(off.sum()), step=step, row=row,
                                            column=column, value=float(fmr[row, column])))
    low, high = (k - 0.5) * step, (k + 0.5) * step
    floored = np.abs(log - np.log10(floor)) < 1e-6
    low = np.where(floored, np.log10(floor_lower), low)
    high = np.where(floored, np.log10(floor) + 0.5 * step, high)
    fnmr_low = np.clip(fnmr - fnmr_half_width, 0.0, 1.0)
    fnmr_high = np.clip(fnmr + fnmr_half_width, 0.0, 1.0)
    return low, high, fnmr_low, fnmr_high


def transcription_redraws(fmr, fnmr, *, n_replicates: int = 1000, seed: int = 0,
                          step: float = 0.1, floor: float = 1e-5,
                          floor_lower: float | None = FLOOR_LOWER,
                          fnmr_half_width: float = 5e-5) -> tuple[np.ndarray, np.ndarray]:
    r"""Redraw rounded Annex 15 rates uniformly within their rounding bins.

    An FMR transcribed as :math:`10^{k\,\mathrm{step}}` is redrawn as
    :math:`10^{u}` with :math:`u` uniform on
    :math:`[(k-\tfrac12)\mathrm{step},\ (k+\tfrac12)\mathrm{step}]` (round to
    nearest on the log scale).  An FMR at the ``floor`` (1e-5) only says that
    the rate was at most the top of the floor's bin; it is redrawn with
    :math:`u` uniform on :math:`[\log_{10}\mathrm{floor\_lower},\
    \log_{10}\mathrm{floor} + \tfrac12\mathrm{step}]`.  An FNMR is redrawn
    uniformly within ``fnmr_half_width`` (half its last printed decimal,
    5e-5 for 4 decimals), clipped to [0, 1].  ``floor_lower=None`` treats
    the floor like any grid value (its own bin only: rounding, no censoring).

    The default ``floor_lower = 1e-6``, one decade below the floor, is a
    deliberately wide choice: the thresholds were set for an overall FMR of
    1e-4 (Howard et al. sec. 3.3), the largest group FMR in the table is
    6.3e-4 (0.8 decade above), and group FMRs two decades below the overall
    rate are plausible for the least confused groups; the table itself cannot
    tell.  Conclusions that hold down to 1e-6 hold for any limit above it;
    run again with e.g. ``floor_lower=10**-5.5`` to see a milder censoring.

    Returns
    -------
    (fmr, fnmr)
        Arrays of shape (n_replicates, n_algorithms, n_groups).

    Examples
    --------
    >>> fmr, fnmr = transcription_redraws([[1e-5, 1e-4]], [[0.01, 0.02]], n_replicates=2000)
    >>> bool((fmr[..., 0] <= 10**-4.95).all() and (fmr[..., 0] >= 1e-6).all())
    True
    >>> bool((abs(np.log10(fmr[..., 1]) + 4) <= 0.05).all())
    True
    """
    n_replicates = _check_replicates(n_replicates)
    low, high, fnmr_low, fnmr_high = transcription_bins(
        fmr, fnmr, step=step, floor=floor, floor_lower=floor_lower,
        fnmr_half_width=fnmr_half_width)
    rng = np.random.default_rng(seed)
    size = (n_replicates, *low.shape)
    fmr_reps = 10.0 ** (low + rng.random(size) * (high - low))
    fnmr_reps = fnmr_low + rng.random(size) * (fnmr_high - fnmr_low)
    return fmr_reps, fnmr_reps


def replicate_measures(fmr_reps, fnmr_reps, measures=None, *,
                       alpha: float = 0.5) -> dict[str, MeasureResult]:
    """Every registered rate measure on every replicate, in one call per measure.

    The replicates, of shape (n_replicates, n_algorithms, n_groups), are
    stacked as (n_replicates * n_algorithms, n_groups) for the measure and
    reshaped back.  Undefined cases follow each measure's documented
    convention (their warnings are silenced here and counted instead, in the
    ``undefined`` masks).

    Returns
    -------
    dict
        Measure name -> :class:`~audit.measures.MeasureResult` whose arrays have
        shape (n_replicates, n_algorithms).

    Examples
    --------
    >>> fmr = np.full((4, 3, 2), 1e-4); fnmr = np.full((4, 3, 2), 0.01)
    >>> replicate_measures(fmr, fnmr, ["garbe"])["garbe"].value.shape
    (4, 3)
    """
    fmr_reps = np.asarray(fmr_reps, dtype="float64")
    fnmr_reps = np.asarray(fnmr_reps, dtype="float64")
    shape = fmr_reps.shape[:-1]
    flat_fmr = fmr_reps.reshape(-1, fmr_reps.shape[-1])
    flat_fnmr = fnmr_reps.reshape(-1, fnmr_reps.shape[-1])
    out = {}
    for measure in _rate_measures(measures):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMeasureWarning)
            result = measure(flat_fmr, flat_fnmr, alpha=alpha)
        out[measure.name] = MeasureResult(*(np.asarray(getattr(result, part)).reshape(shape) for part in
                                            ("value", "fmr_term", "fnmr_term", "undefined")))
    return out


# -------------------------------------------------------------------------- frontier


def frontier_membership(fairness, accuracy, *, higher_is_fairer: bool = False,
                        weak: bool = False, tie_rtol: float = TIE_RTOL) -> np.ndarray:
    """Which algorithms are on the accuracy/fairness Pareto frontier, per replicate.

    ``fairness`` and ``accuracy`` (an error rate: lower is better) have shape
    (..., n_algorithms).  An algorithm is on the frontier when no other is at
    least as good on both axes and better on one (strict efficiency; the
    single-point definition printed as Howard et al. eq. 10 describes the
    best point, not a frontier).  ``weak=True`` keeps the weakly efficient ones
    (no rival strictly better on both).  An algorithm whose measure is
    undefined (NaN) in a replicate is off the frontier and dominates nothing.
    Uses :func:`audit.pareto.efficient` (values within ``tie_rtol`` of each
    other tie).

    Examples
    --------
    >>> frontier_membership([[0.5, 0.3, 0.4]], [[0.01, 0.02, 0.03]])
    array([[ True,  True, False]])
    """
    fairness = np.asarray(fairness, dtype="float64")
    accuracy = np.asarray(accuracy, dtype="float64")
    fair_axis = -fairness if higher_is_fairer else fairness
    points = np.stack([accuracy, fair_axis], axis=-1)
    missing = np.isnan(points).any(axis=-1)
    points = np.where(missing[..., None], np.inf, points)
    mask = np.asarray(efficient(points, higher_is_better=[False, False], weak=weak, rtol=tie_rtol))
    return mask & ~missing


def fnmr_weights(table: pd.DataFrame, weights="equal") -> np.ndarray:
    """Weights of the groups in the total (overall) FNMR, shape (n_alg, n_groups).

    ``weights`` is read exactly as :func:`audit.accuracy.overall_rates` reads
    it (``"equal"``, ``"counts"``, a counts file or frame, a mapping), so the
    replicate totals are those of the Pareto report; an array is used as it is.
    """
    if isinstance(weights, np.ndarray):
        return np.atleast_2d(weights.astype("float64"))
    algorithms, groups, _, _ = rate_matrices(table)
    frame = group_weights(table, weights=weights)
    wide = frame.pivot(index="algorithm", columns="group", values="w_fnmr")
    return wide.loc[algorithms.astype(str), groups.astype(str)].to_numpy(dtype="float64")


def _total(rates: np.ndarray, weights: np.ndarray) -> np.ndarray:
    return (rates * weights).sum(axis=-1) / weights.sum(axis=-1)


# ------------------------------------------------------------------------- summaries


def _percentiles(values: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    tail = 100.0 * (1.0 - level) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns -> NaN
        low, high = np.nanpercentile(values, [tail, 100.0 - tail], axis=0)
    return low, high


def _ranks(values: np.ndarray, higher_is_fairer: bool) -> np.ndarray:
    """Rank 1 = fairest, ties averaged, undefined (NaN) last."""
    key = -values if higher_is_fairer else values
    key = np.where(np.isnan(key), np.inf, key)
    return stats.rankdata(key, axis=-1, method="average")


def _crossing(measure: Measure, fmr_term, fnmr_term, grid, statistic) -> np.ndarray:
    """First alpha of ``grid`` where the statistic (over algorithms) of the alpha share
    surpasses 1/2, per replicate (:func:`audit.ffmc.first_crossing`, as FFMC.1 reads it)."""
    summaries = np.empty((len(grid), fmr_term.shape[0]))
    for i, alpha in enumerate(grid):
        with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            share = np.asarray(measure.alpha_share(fmr_term, fnmr_term, alpha))
            if statistic in (np.nanmedian, np.nanmean) and not np.isnan(share).any():
                # same value, much faster
                summaries[i] = (np.median if statistic is np.nanmedian else np.mean)(share, axis=-1)
            else:
                summaries[i] = statistic(share, axis=-1)
    return first_crossing(grid, summaries)


def _statistics(results: dict[str, MeasureResult], measures: Sequence[Measure], frontier,
                grid) -> dict[str, np.ndarray]:
    """Dataset-level statistics (over algorithms) per replicate."""
    out: dict[str, np.ndarray] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for measure in measures:
            r = results[measure.name]
            name = measure.name
            values = r.value
            out[f"{name}.min"] = np.nanmin(values, axis=-1)
            out[f"{name}.q05"] = np.nanpercentile(values, 5, axis=-1)
            out[f"{name}.median"] = np.nanmedian(values, axis=-1)
            out[f"{name}.q95"] = np.nanpercentile(values, 95, axis=-1)
            out[f"{name}.max"] = np.nanmax(values, axis=-1)
            for term in ("fmr_term", "fnmr_term"):
                terms = np.asarray(getattr(r, term), dtype="float64")
                out[f"{name}.{term}.median"] = np.nanmedian(terms, axis=-1)
                out[f"{name}.{term}.max"] = np.nanmax(terms, axis=-1)
            out[f"{name}.undefined"] = r.undefined.sum(axis=-1).astype("float64")
            out[f"{name}.crossing.median"] = _crossing(measure, r.fmr_term, r.fnmr_term, grid, np.nanmedian)
            out[f"{name}.crossing.mean"] = _crossing(measure, r.fmr_term, r.fnmr_term, grid, np.nanmean)
    out["frontier.size"] = frontier.sum(axis=-1).astype("float64")
    return out


@dataclass(frozen=True)
class UncertaintyResult:
    """Replicate-based uncertainty of measures, rankings, statistics and frontier.

    Attributes
    ----------
    kind
        ``"transcription"``, ``"parametric"``, ``"subject"`` or ``"comparison"``.
    intervals
        One row per (measure, algorithm): the point ``value``, its percentile
        interval ``low``/``high``, the replicate standard deviation ``se``, the
        same for ``fmr_term`` and ``fnmr_term``, and ``undefined_share`` (share
        of replicates where the measure was undefined).
    ranking
        One row per (measure, algorithm): point ``rank`` (1 = fairest, ties
        averaged), its percentile interval ``rank_low``/``rank_high``,
        ``p_within`` (share of replicates with the rank within ``within`` of
        the point rank) and ``p_fairest`` (share where it is fairest).
    ranking_summary
        One row per measure: Spearman correlation of the replicate ranking with
        the point ranking (median and lower percentile), the share of
        replicates in which the point-fairest algorithm stays fairest, and the
        mean overlap of the top ``top`` algorithms.
    statistics
        One row per dataset-level statistic (e.g. ``garbe.max``,
        ``fdr.crossing.median``, ``frontier.size``): point value, percentile
        interval, replicate median.
    frontier
        One row per algorithm: ``total_fnmr`` and the fairness ``value`` with
        their intervals, ``on_frontier`` (point data) and
        ``frontier_probability`` (share of replicates on the frontier).
    replicate_statistics
        The statistics of every replicate (one row each).
    fmr, fnmr
        The replicate rates, (n_replicates, n_algorithms, n_groups).
    params
        Every parameter of the run (seed, replicates, level, ...).
    """

    kind: str
    intervals: pd.DataFrame
    ranking: pd.DataFrame
    ranking_summary: pd.DataFrame
    statistics: pd.DataFrame
    frontier: pd.DataFrame
    replicate_statistics: pd.DataFrame
    fmr: np.ndarray = field(repr=False)
    fnmr: np.ndarray = field(repr=False)
    params: dict = field(default_factory=dict)

    def summary(self, **options) -> str:
        """The plain-language paragraph of :func:`robustness_summary`."""
        return robustness_summary(self, **options)


def _analyse(kind: str, table: pd.DataFrame, fmr_reps, fnmr_reps, *, measures, alpha, level,
             within, top, fairness, weights, alpha_grid, params,
             extra: Mapping[str, tuple[bool, MeasureResult, MeasureResult]] | None = None
             ) -> UncertaintyResult:
    level = _check_level(level)
    chosen = _rate_measures(measures)
    fair_measure = get_measure(fairness) if isinstance(fairness, str) else fairness
    if fair_measure.name not in {m.name for m in chosen}:
        chosen.append(fair_measure)
    grid = ALPHA_GRID if alpha_grid is None else np.asarray(alpha_grid, dtype="float64")
    algorithms, groups, fmr0, fnmr0 = rate_matrices(table)
    point = replicate_measures(fmr0[None], fnmr0[None], chosen, alpha=alpha)
    reps = replicate_measures(fmr_reps, fnmr_reps, chosen, alpha=alpha)
    n_rep = fmr_reps.shape[0]

    rows, rank_rows, rank_summary = [], [], []
    summarised = [(m.name, m.higher_is_fairer, point[m.name], reps[m.name]) for m in chosen]
    summarised += [(name, *parts) for name, parts in (extra or {}).items()]
    for name, higher_is_fairer, p, r in summarised:
        frame = pd.DataFrame({"measure": name, "algorithm": algorithms.to_numpy()})
        for part in ("value", "fmr_term", "fnmr_term"):
            prefix = "" if part == "value" else f"{part}_"
            values = np.asarray(getattr(r, part), dtype="float64")
            low, high = _percentiles(values, level)
            frame[part] = np.asarray(getattr(p, part), dtype="float64")[0]
            frame[f"{prefix}low"] = low
            frame[f"{prefix}high"] = high
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                frame[f"{prefix}se"] = np.nanstd(values, axis=0, ddof=1) if n_rep > 1 else np.nan
        frame["undefined"] = p.undefined[0]
        frame["undefined_share"] = r.undefined.mean(axis=0)
        rows.append(frame)

        point_rank = _ranks(p.value, higher_is_fairer)[0]
        rep_rank = _ranks(r.value, higher_is_fairer)
        rank_low, rank_high = _percentiles(rep_rank, level)
        key = np.where(np.isnan(r.value), np.inf, -r.value if higher_is_fairer else r.value)
        # an undefined value is never the fairest; a replicate where all are undefined has none
        fairest = (key == key.min(axis=-1, keepdims=True)) & np.isfinite(key)
        rank_rows.append(pd.DataFrame({
            "measure": name, "algorithm": algorithms.to_numpy(), "rank": point_rank,
            "rank_low": rank_low, "rank_high": rank_high,
            "p_within": (np.abs(rep_rank - point_rank) <= within).mean(axis=0),
            "p_fairest": fairest.mean(axis=0),
        }))
        centred = rep_rank - rep_rank.mean(axis=-1, keepdims=True)
        centred0 = point_rank - point_rank.mean()
        with np.errstate(invalid="ignore", divide="ignore"):
            spearman = (centred @ centred0) / (np.linalg.norm(centred, axis=-1) * np.linalg.norm(centred0))
        point_top = point_rank <= np.sort(point_rank)[min(top, len(point_rank)) - 1]
        rep_order = np.argsort(rep_rank, axis=-1, kind="stable")[:, :top]
        overlap = point_top[rep_order].sum(axis=-1) / min(top, len(point_rank))
        best0 = int(np.argmin(point_rank))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # one algorithm: no correlation
            spearman_median = float(np.nanmedian(spearman))
            spearman_low = float(np.nanpercentile(spearman, 100.0 * (1.0 - level) / 2.0))
        rank_summary.append({
            "measure": name,
            "spearman_median": spearman_median,
            "spearman_low": spearman_low,
            "fairest": algorithms[best0],
            "p_fairest_kept": float(fairest[:, best0].mean()),
            f"top{top}_overlap": float(overlap.mean()),
        })

    w = fnmr_weights(table, weights)
    fair_point, fair_reps = point[fair_measure.name].value, reps[fair_measure.name].value
    acc_point, acc_reps = _total(fnmr0, w)[None], _total(fnmr_reps, w)
    on_point = frontier_membership(fair_point, acc_point, higher_is_fairer=fair_measure.higher_is_fairer)[0]
    on_reps = frontier_membership(fair_reps, acc_reps, higher_is_fairer=fair_measure.higher_is_fairer)
    acc_low, acc_high = _percentiles(acc_reps, level)
    fair_low, fair_high = _percentiles(fair_reps, level)
    frontier = pd.DataFrame({
        "algorithm": algorithms.to_numpy(), "total_fnmr": acc_point[0],
        "total_fnmr_low": acc_low, "total_fnmr_high": acc_high,
        "measure": fair_measure.name, "value": fair_point[0], "low": fair_low, "high": fair_high,
        "on_frontier": on_point, "frontier_probability": on_reps.mean(axis=0),
    })

    stat_point = _statistics(point, chosen, on_point[None], grid)
    stat_reps = _statistics(reps, chosen, on_reps, grid)
    replicate_statistics = pd.DataFrame(stat_reps)
    stat_rows = []
    for name, values in stat_reps.items():
        low, high = _percentiles(values[:, None], level)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            median = float(np.nanmedian(values))
        stat_rows.append({"statistic": name, "value": float(stat_point[name][0]),
                          "low": float(low[0]), "high": float(high[0]), "median": median,
                          "min": float(np.nanmin(values)) if np.isfinite(values).any() else np.nan,
                          "max": float(np.nanmax(values)) if np.isfinite(values).any() else np.nan})
    statistics = pd.DataFrame(stat_rows)

    params = {"kind": kind, "n_replicates": int(n_rep), "level": level, "alpha": alpha,
              "measures": [m.name for m in chosen] + list(extra or {}),
              "fairness": fair_measure.name,
              "weights": weights if isinstance(weights, str) else "custom",
              "within": within, "top": top, "interval": "percentile", **params}
    frames = [pd.concat(rows, ignore_index=True), pd.concat(rank_rows, ignore_index=True),
              pd.DataFrame(rank_summary), statistics, frontier, replicate_statistics]
    for frame in frames:
        frame.attrs.update(params)
    return UncertaintyResult(kind, *frames, fmr=np.asarray(fmr_reps), fnmr=np.asarray(fnmr_reps),
                             params=params)


# ------------------------------------------------------------------ public analyses


def transcription_sensitivity(table: pd.DataFrame, measures=None, *, n_replicates: int = 1000,
                              seed: int = 0, floor: float = 1e-5,
                              floor_lower: float | None = FLOOR_LOWER, step: float = 0.1,
                              fnmr_half_width: float = 5e-5, alpha: float = 0.5,
                              level: float = 0.95, fairness: str = "garbe",
                              weights="equal", within: int = 5, top: int = 10,
                              alpha_grid=None) -> UncertaintyResult:
    """Sensitivity of every measure, ranking, statistic and the frontier to Annex 15 rounding.

    Redraws the rates with :func:`transcription_redraws` ``n_replicates``
    times and summarises them (see :class:`UncertaintyResult`).  The
    intervals are ranges of plausible values given the rounding, not
    confidence intervals: sampling error comes on top.

    Examples
    --------
    >>> from audit.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"Algorithm": ["a", "b"], "FMR.F": [1e-5, 1e-4],
    ...     "FNMR.F": [0.01, 0.02], "FMR.M": [1e-4, 1e-4], "FNMR.M": [0.02, 0.02]}))
    >>> r = transcription_sensitivity(t, ["garbe"], n_replicates=200)
    >>> r.frontier[["algorithm", "on_frontier", "frontier_probability"]]
      algorithm  on_frontier  frontier_probability
    0         a         True                   1.0
    1         b         True                   1.0
    """
    _, _, fmr, fnmr = rate_matrices(table)
    fmr_reps, fnmr_reps = transcription_redraws(
        fmr, fnmr, n_replicates=n_replicates, seed=seed, step=step, floor=floor,
        floor_lower=floor_lower, fnmr_half_width=fnmr_half_width)
    params = {"seed": seed, "step": step, "floor": floor, "floor_lower": floor_lower,
              "fnmr_half_width": fnmr_half_width,
              "resampled": "each FMR uniform in log10 within its 0.1-decade bin (floored ones "
                           "down to floor_lower); each FNMR uniform within its last decimal"}
    return _analyse("transcription", table, fmr_reps, fnmr_reps, measures=measures, alpha=alpha,
                    level=level, within=within, top=top, fairness=fairness, weights=weights,
                    alpha_grid=alpha_grid, params=params)


def parametric_bootstrap(table: pd.DataFrame, measures=None, *, counts=None,
                         n_replicates: int = 1000, seed: int = 0, alpha: float = 0.5,
                         level: float = 0.95, fairness: str = "garbe", weights="counts",
                         within: int = 5, top: int = 10, alpha_grid=None) -> UncertaintyResult:
    """Parametric (binomial) bootstrap of every measure from comparison counts.

    Replicates come from :func:`parametric_replicates`; intervals are
    percentile intervals.  Comparisons are assumed independent, which
    understates the uncertainty when many share a subject: with scores use
    :func:`score_bootstrap`.  ``weights`` for the total FNMR default to the
    mated counts.

    Examples
    --------
    >>> from audit.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"algorithm": ["a", "a"], "group": ["F", "M"],
    ...     "fmr": [1e-4, 2e-4], "fnmr": [0.02, 0.01],
    ...     "n_mated": [1000, 1000], "n_nonmated": [100_000, 100_000]}))
    >>> r = parametric_bootstrap(t, ["fdr"], n_replicates=500, seed=1)
    >>> row = r.intervals.query("measure == 'fdr'").iloc[0]
    >>> bool(row.low < row.value < row.high)
    True
    """
    fmr_reps, fnmr_reps = parametric_replicates(table, counts=counts, n_replicates=n_replicates,
                                                seed=seed)
    if isinstance(weights, str) and weights == "counts" and counts is not None \
            and "n_mated" not in table.columns:
        weights = count_matrices(table, counts)[0].astype("float64")
    params = {"seed": seed, "counts": "table columns" if counts is None else "given",
              "resampled": "binomial error counts per (algorithm, group), comparisons independent"}
    return _analyse("parametric", table, fmr_reps, fnmr_reps, measures=measures, alpha=alpha,
                    level=level, within=within, top=top, fairness=fairness, weights=weights,
                    alpha_grid=alpha_grid, params=params)


def _check_columns(scores: pd.DataFrame, columns) -> None:
    for column in columns:
        if column is not None and column not in scores.columns:
            raise KeyError(MISSING_SCORE_COLUMN.format(column=column, columns=list(scores.columns)))


def _strata_sampler(labels: np.ndarray) -> Callable[[np.random.Generator], np.ndarray]:
    """A function drawing, for each position, a random position of the same stratum."""
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    starts = np.searchsorted(sorted_labels, sorted_labels, side="left")
    sizes = np.searchsorted(sorted_labels, sorted_labels, side="right") - starts

    def draw(rng: np.random.Generator) -> np.ndarray:
        return order[starts + np.floor(rng.random(len(order)) * sizes).astype("int64")]

    return draw


def _row_sampler(scores: pd.DataFrame, *, unit: str, subject: str, group: str, mated: str,
                 algorithm: str | None) -> Callable[[np.random.Generator], np.ndarray]:
    """A function returning the row positions of one bootstrap resample (set up once)."""
    if unit not in ("subject", "comparison"):
        raise ValueError(BAD_UNIT.format(unit=unit))
    if unit == "comparison":
        keys = [c for c in (algorithm, group, mated) if c is not None]
        draw = _strata_sampler(scores.groupby(keys, sort=False, observed=True).ngroup().to_numpy())
        return lambda rng: np.sort(draw(rng))
    codes, _ = pd.factorize(scores[subject])
    first = pd.Series(np.arange(len(codes))).groupby(codes).first().to_numpy()
    subject_groups, _ = pd.factorize(scores[group].to_numpy()[first])
    draw = _strata_sampler(subject_groups)
    order = np.argsort(codes, kind="stable")
    codes_in_order = codes[order]

    def rows(rng: np.random.Generator) -> np.ndarray:
        multiplicity = np.bincount(draw(rng), minlength=len(first))
        return np.repeat(order, multiplicity[codes_in_order])

    return rows


def resample_scores(scores: pd.DataFrame, rng: np.random.Generator, *, unit: str = "subject",
                    subject: str = "subject", group: str = "group", mated: str = "mated",
                    algorithm: str | None = "algorithm") -> pd.DataFrame:
    """One bootstrap resample of a long score table.

    ``unit="subject"``: the subjects of each group are drawn with replacement
    (as many as the group has); every row of a drawn subject is kept, once per
    draw, for every algorithm (a stratified cluster bootstrap; a subject's
    group is that of its first row).  Comparisons are clustered by the
    ``subject`` column: for trials between two people, name the column holding
    the reference (enrolment) subject.  ``unit="comparison"``: rows are drawn
    with replacement within each (algorithm, group, mated) stratum, as if
    comparisons were independent.

    Examples
    --------
    >>> s = pd.DataFrame({"subject": ["a", "a", "b", "c"], "group": ["F", "F", "F", "M"],
    ...                   "mated": [True, False, True, True], "score": [1.0, 0.1, 0.9, 0.8]})
    >>> resample_scores(s, np.random.default_rng(2), algorithm=None)["subject"].tolist()
    ['a', 'a', 'a', 'a', 'c']
    >>> resample_scores(s, np.random.default_rng(1), algorithm=None)["subject"].tolist()
    ['b', 'b', 'c']
    """
    rows = _row_sampler(scores, unit=unit, subject=subject, group=group, mated=mated,
                        algorithm=algorithm)(rng)
    return scores.iloc[rows].reset_index(drop=True)


def _aligned(rates_table: pd.DataFrame, algorithms, groups, replicate) -> tuple[np.ndarray, np.ndarray]:
    out = []
    for column in ("fmr", "fnmr"):
        wide = rates_table.pivot(index="algorithm", columns="group", values=column)
        wide = wide.reindex(index=algorithms, columns=groups)
        values = wide.to_numpy(dtype="float64")
        if np.isnan(values).any():
            i, j = (int(x[0]) for x in np.nonzero(np.isnan(values)))
            raise ValueError(RATES_MISSING.format(replicate=replicate,
                                                  what=f"({algorithms[i]!r}, {groups[j]!r})"))
        out.append(values)
    return out[0], out[1]


def _score_results(frame: pd.DataFrame, algorithms: pd.Index, replicate) -> dict[str, dict]:
    """Tidy (algorithm, measure, value, ...) rows -> {measure: {part: array over algorithms}}."""
    out = {}
    for name, rows in frame.groupby("measure", sort=False):
        rows = rows.set_index(rows["algorithm"].astype(str)).reindex(algorithms.astype(str))
        if rows["value"].isna().all():
            raise ValueError(RATES_MISSING.format(replicate=replicate, what=f"measure {name!r}"))
        out[str(name)] = {part: (rows[part].to_numpy(dtype="float64") if part in rows.columns
                                 else np.full(len(algorithms), np.nan))
                          for part in ("value", "fmr_term", "fnmr_term")}
        out[str(name)]["undefined"] = (rows["undefined"].fillna(False).to_numpy(dtype=bool)
                                       if "undefined" in rows.columns
                                       else np.isnan(out[str(name)]["value"]))
    return out


def score_bootstrap(scores: pd.DataFrame, rates: Callable[[pd.DataFrame], pd.DataFrame],
                    measures=None, *, score_measures: Callable[[pd.DataFrame], pd.DataFrame]
                    | None = None, unit: str = "subject", subject: str = "subject",
                    group: str = "group", mated: str = "mated",
                    algorithm: str | None = "algorithm", n_replicates: int = 200,
                    seed: int = 0, alpha: float = 0.5, level: float = 0.95,
                    fairness: str = "garbe", weights="equal", within: int = 5, top: int = 10,
                    alpha_grid=None) -> UncertaintyResult:
    """Bootstrap of every measure from raw scores, resampling subjects (default) or comparisons.

    Parameters
    ----------
    scores
        Long score table, one row per comparison (and algorithm), with the
        columns named by ``subject``, ``group``, ``mated`` and ``algorithm``
        (``None`` for a single system).
    rates
        Function turning a (resampled) score table into a tidy rates table
        (``algorithm``, ``group``, ``fmr``, ``fnmr``), e.g.
        ``lambda s: audit.scores.rates_at_fmr(s, 1e-3)``.  It is rerun on every
        replicate, so a threshold it sets from the data is re-estimated too.
    score_measures
        Optional function turning a (resampled) score table into tidy rows
        ``algorithm``, ``measure``, ``value`` (and optionally ``fmr_term``,
        ``fnmr_term``, ``undefined``) for measures that need the scores, e.g.
        :func:`audit.score_measures.evaluate_scores`; their intervals and
        ranking stability join those of the rate measures (direction from the
        registry, lower-is-fairer if unregistered).
    unit
        What is resampled, see :func:`resample_scores`.

    Returns
    -------
    UncertaintyResult
        ``kind`` is ``unit``; ``params["resampled"]`` says what was resampled.
    """
    _check_columns(scores, [subject if unit == "subject" else None, group, mated, algorithm])
    n_replicates = _check_replicates(n_replicates)
    rng = np.random.default_rng(seed)
    table = rates(scores)
    algorithms, groups, _, _ = rate_matrices(table)
    fmr_reps = np.empty((n_replicates, len(algorithms), len(groups)))
    fnmr_reps = np.empty_like(fmr_reps)
    score_point = {} if score_measures is None else _score_results(
        score_measures(scores), algorithms, "point")
    score_reps = {name: {part: [] for part in parts} for name, parts in score_point.items()}
    sampler = _row_sampler(scores, unit=unit, subject=subject, group=group, mated=mated,
                           algorithm=algorithm)
    for i in range(n_replicates):
        sample = scores.iloc[sampler(rng)].reset_index(drop=True)
        fmr_reps[i], fnmr_reps[i] = _aligned(rates(sample), algorithms, groups, i)
        if score_measures is not None:
            found = _score_results(score_measures(sample), algorithms, i)
            for name, parts in score_reps.items():
                for part, values in parts.items():
                    values.append(found[name][part])
    extra = {}
    for name, parts in score_reps.items():
        try:
            higher_is_fairer = get_measure(name).higher_is_fairer
        except KeyError:
            higher_is_fairer = False
        p = MeasureResult(*(np.asarray(score_point[name][part])[None] for part in
                            ("value", "fmr_term", "fnmr_term", "undefined")))
        r = MeasureResult(*(np.asarray(parts[part]) for part in
                            ("value", "fmr_term", "fnmr_term", "undefined")))
        extra[name] = (higher_is_fairer, p, r)
    resampled = (f"subjects ({subject!r}) with replacement within each {group!r}, all their "
                 "comparisons kept" if unit == "subject" else
                 f"comparisons with replacement within each ({algorithm!r}, {group!r}, {mated!r})")
    params = {"seed": seed, "unit": unit, "resampled": resampled}
    return _analyse(unit, table, fmr_reps, fnmr_reps, measures=measures, alpha=alpha, level=level,
                    within=within, top=top, fairness=fairness, weights=weights,
                    alpha_grid=alpha_grid, params=params, extra=extra)


def join_frontier_probability(frame: pd.DataFrame, result: UncertaintyResult) -> pd.DataFrame:
    """Add frontier membership probability and intervals to a per-algorithm table.

    ``frame`` is indexed by algorithm or has an ``algorithm`` column (e.g. the
    down-select table of :func:`audit.pareto.downselect`).  Added columns:
    ``frontier_probability``, ``fairness_low``/``fairness_high`` (interval of
    the frontier's fairness measure) and ``total_fnmr_low``/``total_fnmr_high``;
    ``attrs["uncertainty"]`` records how the replicates were made.

    Examples
    --------
    >>> from audit.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"Algorithm": ["a", "b"], "FMR.F": [1e-5, 1e-4],
    ...     "FNMR.F": [0.01, 0.02], "FMR.M": [1e-4, 1e-4], "FNMR.M": [0.02, 0.02]}))
    >>> r = transcription_sensitivity(t, ["garbe"], n_replicates=50)
    >>> table = pd.DataFrame({"fairness": [0.3]}, index=pd.Index(["a"], name="algorithm"))
    >>> join_frontier_probability(table, r)["frontier_probability"].tolist()
    [1.0]
    """
    extra = result.frontier.set_index("algorithm")[
        ["frontier_probability", "low", "high", "total_fnmr_low", "total_fnmr_high"]
    ].rename(columns={"low": "fairness_low", "high": "fairness_high"})
    extra.index = extra.index.astype(str)
    if "algorithm" in frame.columns:
        keys = frame["algorithm"].astype(str).to_numpy()
    else:
        keys = frame.index.astype(str).to_numpy()
    out = frame.copy()
    for column in extra.columns:
        out[column] = extra[column].reindex(keys).to_numpy()
    out.attrs.update(frame.attrs)
    out.attrs["uncertainty"] = {key: result.params[key] for key in
                                ("kind", "n_replicates", "level", "seed", "resampled")
                                if key in result.params}
    return out


# ---------------------------------------------------------------- verdict stability


def replicate_table(table: pd.DataFrame, fmr: np.ndarray, fnmr: np.ndarray) -> pd.DataFrame:
    """A copy of ``table`` with its rates replaced by one replicate's (algorithm x group) arrays."""
    algorithms, groups, _, _ = rate_matrices(table)
    alg_pos = algorithms.get_indexer(table["algorithm"])
    grp_pos = groups.get_indexer(table["group"])
    out = table.copy()
    out["fmr"] = fmr[alg_pos, grp_pos]
    out["fnmr"] = fnmr[alg_pos, grp_pos]
    return out


def verdict_stability(table: pd.DataFrame, result: UncertaintyResult, measures=None, *,
                      n_replicates: int = 50, criteria: Callable | None = None,
                      alpha_grid=None, seed: int = 0) -> pd.DataFrame:
    """Share of replicates in which each FFMC verdict holds.

    Runs the FFMC audit (:func:`audit.ffmc.ffmc_table`, or ``criteria``, a
    function with the same signature) on the point table and on the first
    ``n_replicates`` replicates of ``result`` (fewer than for the measures:
    the audit is slower than the measures), and returns one row per
    (measure, criterion): the point verdict ``passed`` (NA where the
    criterion does not apply), ``share_passed`` over the replicates and
    ``agreement``, the share agreeing with the point verdict.
    """
    if criteria is None:
        criteria = ffmc_table
    n = min(_check_replicates(n_replicates), result.fmr.shape[0])
    point = criteria(table, measures, alpha_grid=alpha_grid, seed=seed)
    keys = ["measure", "criterion"]
    verdicts = []
    for i in range(n):
        replicate = criteria(replicate_table(table, result.fmr[i], result.fnmr[i]), measures,
                             alpha_grid=alpha_grid, seed=seed)
        verdicts.append(replicate.set_index(keys)["passed"].astype("boolean")
                        .astype("float64"))  # NA (not applicable) -> NaN
    passed = pd.concat(verdicts, axis=1).reindex(point.set_index(keys).index)
    out = point[keys + ["passed"]].copy()
    out["passed"] = out["passed"].astype("boolean")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        share = np.nanmean(passed.to_numpy(dtype="float64"), axis=1)
    point_passed = out["passed"].astype("float64").to_numpy()
    out["share_passed"] = share
    out["agreement"] = np.where(np.isnan(point_passed), np.nan,
                                np.where(point_passed == 1.0, share, 1.0 - share))
    out.attrs.update({**result.params, "verdict_replicates": n})
    return out.reset_index(drop=True)


# ----------------------------------------------------------------- plain language


def _fmt(value: float) -> str:
    if not np.isfinite(value):
        return "undefined"
    if value == 0 or 1e-3 <= abs(value) < 1e4:
        return f"{value:.3g}"
    return f"{value:.2e}"


def _precision(value: float) -> float:
    """Half a unit of the last quoted digit of ``value`` (0.99 -> 0.005, 63.1 -> 0.05, 9 -> 0.5)."""
    text = repr(float(value))
    decimals = 0 if text.endswith(".0") else len(text.split(".")[1])
    return 0.5 * 10.0 ** -decimals


def check_claims(result: UncertaintyResult,
                 claims: Mapping[str, tuple[float, str]] = HOWARD_2022_CLAIMS) -> pd.DataFrame:
    """Check quoted values against the point data and the replicates.

    A claim is *reproduced* when the point value rounds to it (within half a
    unit of its last quoted digit) and *robust* when, moreover, the whole
    replicate interval does.

    Returns
    -------
    pandas.DataFrame
        One row per claim found among the statistics: ``statistic``,
        ``claimed``, ``source``, ``value``, ``low``, ``high``, ``reproduced``,
        ``robust``.
    """
    table = result.statistics.set_index("statistic")
    rows = []
    for name, (claimed, source) in claims.items():
        if name not in table.index:
            continue
        row = table.loc[name]
        tolerance = _precision(claimed)
        reproduced = bool(abs(row["value"] - claimed) <= tolerance + 1e-12)
        robust = bool(reproduced and claimed - tolerance - 1e-12 <= row["low"]
                      and row["high"] <= claimed + tolerance + 1e-12)
        rows.append({"statistic": name, "claimed": claimed, "source": source,
                     "value": row["value"], "low": row["low"], "high": row["high"],
                     "reproduced": reproduced, "robust": robust})
    out = pd.DataFrame(rows, columns=["statistic", "claimed", "source", "value", "low", "high",
                                      "reproduced", "robust"])
    out.attrs.update(result.params)
    return out


def robustness_summary(result: UncertaintyResult, *, verdicts: pd.DataFrame | None = None,
                       claims: Mapping[str, tuple[float, str]] | None = None,
                       threshold: float = 0.95) -> str:
    """A short plain-language paragraph: what is and is not robust.

    A conclusion counts as robust when it holds in at least ``threshold`` of
    the replicates: a claimed value (from ``claims``, e.g.
    :data:`HOWARD_2022_CLAIMS`; see :func:`check_claims`) holds over the replicate
    interval at the precision it was quoted with, a ranking
    keeps a Spearman correlation of at least 0.9, an algorithm's frontier
    membership is at least ``threshold`` (or at most ``1 - threshold``), an
    FFMC verdict agrees in at least ``threshold`` of the replicates.
    """
    p = result.params
    floor_lower = p.get("floor_lower")
    what = {"transcription": "redrawing every Annex 15 rate within its rounding bin, "
                             + ("floored FMRs within the floor's bin" if floor_lower is None
                                else f"floored FMRs down to {floor_lower:.3g}"),
            "parametric": "a binomial bootstrap of the error counts",
            "subject": "resampling subjects",
            "comparison": "resampling single comparisons"}.get(result.kind, result.kind)
    level = int(round(100 * p["level"]))
    lines = [f"Over {p['n_replicates']} replicates ({what}; seed {p.get('seed')}), with "
             f"{level}% percentile intervals:"]
    if claims:
        checked = check_claims(result, claims)
        groups = {
            "Robust to the rounding": checked[checked["reproduced"] & checked["robust"]],
            "Reproduced on the point data but not robust (the replicates move it beyond "
            "the quoted precision)": checked[checked["reproduced"] & ~checked["robust"]],
            "Not reproduced on the point data (not a rounding effect)": checked[~checked["reproduced"]],
        }
        for title, rows in groups.items():
            if len(rows):
                lines.append(title + ": " + "; ".join(
                    f"{r.statistic} = {_fmt(r.value)} (paper {_fmt(r.claimed)}; replicates "
                    f"{_fmt(r.low)} - {_fmt(r.high)})" for r in rows.itertuples()) + ".")
    summary = result.ranking_summary
    stable = summary[summary["spearman_low"] >= 0.9]["measure"].tolist()
    unstable = summary[summary["spearman_low"] < 0.9]
    if stable:
        lines.append("The rankings by " + ", ".join(stable) + " are stable (Spearman with the "
                     "point ranking >= 0.9 in the lower tail).")
    for row in unstable.itertuples():
        lines.append(f"The ranking by {row.measure} is not stable: Spearman down to "
                     f"{row.spearman_low:.2f} (median {row.spearman_median:.2f}).")
    lines.append("The fairest algorithm stays fairest in " + ", ".join(
        f"{100 * row.p_fairest_kept:.0f}% of replicates by {row.measure} ({row.fairest})"
        for row in summary.itertuples()) + ".")
    frontier = result.frontier
    solid = frontier[frontier["frontier_probability"] >= threshold]["algorithm"].tolist()
    shaky = frontier[(frontier["frontier_probability"] > 1 - threshold)
                     & (frontier["frontier_probability"] < threshold)]
    lines.append(f"Frontier ({p['fairness']} vs total FNMR): {int(frontier['on_frontier'].sum())} "
                 f"algorithm(s) on it with the point rates; {len(solid)} in at least "
                 f"{100 * threshold:.0f}% of replicates ({', '.join(solid) or 'none'})"
                 + ("; uncertain: " + ", ".join(f"{r.algorithm} {r.frontier_probability:.2f}"
                                                 for r in shaky.sort_values(
                                                     'frontier_probability', ascending=False)
                                                 .itertuples()) if len(shaky) else "") + ".")
    if verdicts is not None and len(verdicts):
        firm = verdicts[verdicts["agreement"] >= threshold]
        soft = verdicts[verdicts["agreement"] < threshold]
        lines.append(f"FFMC: {len(firm)} of {len(verdicts)} verdicts hold in at least "
                     f"{100 * threshold:.0f}% of {verdicts.attrs.get('verdict_replicates', '?')} "
                     "replicates" + ("; not robust: " + ", ".join(
                         f"{r.measure} {r.criterion} ({100 * r.agreement:.0f}%)"
                         for r in soft.itertuples()) if len(soft) else "") + ".")
    return " ".join(lines)


NO_UNCERTAINTY = (
    "no uncertainty analysis: the table has no comparison counts (n_mated, n_nonmated) for a "
    "binomial bootstrap, and its FMRs do not sit on a decade grid for a transcription redraw"
)
NO_TRANSCRIPTION = (
    "no uncertainty analysis: the table has no comparison counts (n_mated, n_nonmated) for a "
    "binomial bootstrap, and its FMRs sit on a {step:g}-decade grid but {reason}, so the "
    "transcription redraw does not apply"
)
ZERO_FMR = "{count} of them are 0, below any floor"
NO_FLOOR = ("they have no floor (no smallest positive FMR is shared by at least {fraction:.0%} "
            "of the cells and by two)")
FLOOR_BELOW_LOWER = "their floor {floor!r} is below floor_lower {value!r}"
BAD_ANALYSIS_METHOD = "method must be 'auto', 'counts', 'transcription' or 'none', got {method!r}"


def analyse(table: pd.DataFrame, measures=None, *, method: str = "auto", n_replicates: int = 1000,
            seed: int = 0, alpha: float = 0.5, fairness: str = "garbe", weights="equal",
            floor_lower: float | None = FLOOR_LOWER) -> tuple[UncertaintyResult | None, str]:
    """The uncertainty analysis a rates table supports, and a sentence saying which.

    ``method="auto"`` takes the binomial bootstrap (:func:`parametric_bootstrap`)
    when the table carries comparison counts, else the transcription redraw
    (:func:`transcription_sensitivity`) when its FMRs sit on a decade grid with a
    floor (as the Annex 15 transcription does: a smallest positive FMR shared by
    many cells, see :func:`audit.quality.floor_of`), no FMR is 0 and
    ``floor_lower`` (if not None) is at most that floor, else none, the
    description saying which condition failed. ``"counts"`` and
    ``"transcription"`` force one (a forced transcription raises
    ``ValueError`` on an FMR of 0 or a ``floor_lower`` above the floor);
    ``"none"`` skips it.  ``weights`` (as in
    :func:`audit.accuracy.overall_rates`) weights the total FNMR of the frontier
    whichever method runs, so the frontier probabilities match a down-select
    made with the same ``weights``; pass ``weights="counts"`` to weight by the
    table's comparison counts.

    Returns
    -------
    (result, description)
        ``result`` is None when no analysis applies; ``description`` says what
        was done, with the parameters, or why nothing was.
    """
    from audit.quality import FLOOR_FRACTION, decade_grid, floor_of

    if method not in ("auto", "counts", "transcription", "none"):
        raise ValueError(BAD_ANALYSIS_METHOD.format(method=method))
    has_counts = {"n_mated", "n_nonmated"} <= set(table.columns)
    step = decade_grid(table["fmr"].to_numpy())
    if method == "none":
        return None, "no uncertainty analysis (method='none')"
    if method == "counts" or (method == "auto" and has_counts):
        result = parametric_bootstrap(table, measures, n_replicates=n_replicates, seed=seed, alpha=alpha,
                                      fairness=fairness, weights=weights)
        return result, (f"binomial (parametric) bootstrap from the comparison counts: {n_replicates} "
                        f"replicates, seed {seed}; comparisons are treated as independent, which "
                        "understates the uncertainty where comparisons share a subject")
    fmr = table["fmr"].to_numpy(dtype="float64")
    floor = floor_of(fmr)
    if method == "auto" and np.isfinite(step):
        reason = None
        if (fmr == 0).any():
            reason = ZERO_FMR.format(count=int((fmr == 0).sum()))
        elif not np.isfinite(floor):
            reason = NO_FLOOR.format(fraction=FLOOR_FRACTION)
        elif floor_lower is not None and not floor_lower <= floor:
            reason = FLOOR_BELOW_LOWER.format(floor=floor, value=floor_lower)
        if reason is not None:
            return None, NO_TRANSCRIPTION.format(step=step, reason=reason)
    if method == "transcription" or (method == "auto" and np.isfinite(step)):
        step = step if np.isfinite(step) else 0.1
        if not np.isfinite(floor):  # forced, no shared floor: the smallest FMR is taken as it
            floor = float(fmr[fmr > 0].min())
        result = transcription_sensitivity(table, measures, n_replicates=n_replicates, seed=seed,
                                           step=step, floor=floor, floor_lower=floor_lower,
                                           alpha=alpha, fairness=fairness, weights=weights)
        below = ("the floor's own bin" if floor_lower is None
                 else f"down to {floor_lower:g} (a censored value may lie anywhere below the floor)")
        return result, (f"transcription redraw: each FMR uniformly in log10 within its {step:g}-decade "
                        f"bin, FMRs on the {floor:g} floor {below}, each FNMR within half its last "
                        f"printed decimal; {n_replicates} replicates, seed {seed}. The intervals are "
                        "ranges of values consistent with the rounding, not confidence intervals")
    return None, NO_UNCERTAINTY
