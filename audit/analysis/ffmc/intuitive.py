"""FFMC.1: intuitive net contributions of the FMR and FNMR terms as alpha varies."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from audit.analysis.ffmc.common import (
    CROSSING_WINDOW,
    FFMC1_ONE_TERM,
    FFMC1_PAIRS,
    TOLERANCE,
    CriterionResult,
    _call,
    _fmt,
    _grid,
    _measure,
    first_crossing,
    one_term,
)
from audit.analysis.quantiles import nanmedian, nanquantile
from audit.exceptions import UsageError
from audit.measures.contract import PairMeasure
from audit.measures.kernels import MeasureResult
from audit.measures.registry import Measure
from audit.tables.rates import rate_matrices
from audit.validation import RATES_TABLE, MeasureRef, validate_params


@validate_params("alpha_grid", measure=MeasureRef(), table=RATES_TABLE)
def ffmc1(table: pd.DataFrame, measure: str | Measure, *, alpha_grid=None) -> CriterionResult:
    """FFMC.1: relative contribution of the FMR term as alpha goes from 0 to 1.

    Parameters
    ----------
    table
        A validated rates table (:func:`audit.tables.rates.read_rates`).
    measure
        A registered measure or its name.
    alpha_grid
        Increasing alphas in [0, 1]; default :data:`ALPHA_GRID` (step 0.01).

    Returns
    -------
    CriterionResult
        ``detail``: one row per (algorithm, alpha) with ``value``,
        ``fmr_term``, ``fnmr_term``, ``share`` (the alpha term's relative
        contribution) and ``undefined``; ``by_alpha``: per alpha, the median,
        mean and quartiles of ``share`` and the min, quartiles, median and max
        of ``value``; ``summary``: ``crossing_alpha`` (median share first
        > 0.5, :func:`first_crossing`), ``crossing_alpha_mean``, ``monotone``,
        ``fraction_monotone`` (algorithms whose own share never decreases), ``median_fmr_term``,
        ``median_fnmr_term``, ``term_ratio`` (their ratio), ``share_at_half``.
    """
    m = _measure(measure)
    if isinstance(m, PairMeasure):
        raise UsageError(f"FFMC.1 of {m.name!r}: {FFMC1_PAIRS}")
    if one_term(m):
        raise UsageError(f"FFMC.1 of {m.name!r}: {FFMC1_ONE_TERM.format(rate=one_term(m))}")
    grid = _grid(alpha_grid)
    algorithms, _, fmr, fnmr = rate_matrices(table)
    return _ffmc1(m, algorithms, fmr, fnmr, grid)


def _ffmc1_arrays(m: Measure, fmr: np.ndarray, fnmr: np.ndarray, grid: np.ndarray):
    """The measure over the whole grid for rates of shape (..., n_algorithms, n_groups).

    One call of the measure for every alpha and every leading batch (e.g.
    replicate): returns ``(result, share, n_warnings)`` with arrays of shape
    (n_alphas, ..., n_algorithms).
    """
    shape = fmr.shape[:-1]
    n_groups = fmr.shape[-1]
    result, n_warnings = _call(m, fmr.reshape(-1, n_groups), fnmr.reshape(-1, n_groups), grid)
    share = m.alpha_share(result.fmr_term, result.fnmr_term, grid[:, None])
    share = np.broadcast_to(share, result.value.shape)
    full = (len(grid), *shape)
    parts = [
        np.broadcast_to(getattr(result, f), result.value.shape).reshape(full)
        for f in ("value", "fmr_term", "fnmr_term", "undefined")
    ]
    return MeasureResult(*parts), share.reshape(full), n_warnings


def _ffmc1_verdict(grid: np.ndarray, share: np.ndarray) -> dict[str, np.ndarray]:
    """FFMC.1's median share, crossing, monotonicity and verdict from shares of shape
    (n_alphas, ..., n_algorithms), per leading batch."""
    median = nanmedian(share, axis=-1)
    steps = np.diff(median, axis=0)
    if len(steps) == 0:
        rising = np.ones(median.shape[1:], dtype=bool)
    else:
        lowest = np.min(np.where(np.isnan(steps), np.inf, steps), axis=0)
        rising = ~np.isnan(steps).all(axis=0) & (lowest >= -TOLERANCE)
    monotone = rising & ~np.isnan(median[1:]).all(axis=0)
    crossing = np.asarray(first_crossing(grid, median))
    lo, hi = CROSSING_WINDOW
    with np.errstate(invalid="ignore"):
        passed = np.isfinite(crossing) & (lo <= crossing) & (crossing <= hi) & monotone
    return {"median": median, "monotone": monotone, "crossing": crossing, "passed": passed}


def _ffmc1(
    m: Measure,
    algorithms: pd.Index,
    fmr: np.ndarray,
    fnmr: np.ndarray,
    grid: np.ndarray,
    *,
    keep_detail: bool = True,
) -> CriterionResult:
    """:func:`ffmc1` on the rate matrices of a table.

    ``keep_detail=False`` leaves ``detail`` empty: the per-(algorithm, alpha)
    frame is what a figure needs, and for 100,000 algorithms it alone would
    hold hundreds of MB per measure, where the verdict needs only the summaries.
    """
    n = len(algorithms)
    result, share, n_warnings = _ffmc1_arrays(m, fmr, fnmr, grid)
    columns = {
        "value": result.value,
        "fmr_term": result.fmr_term,
        "fnmr_term": result.fnmr_term,
        "share": share,
    }
    undefined = result.undefined
    if keep_detail:
        detail = pd.DataFrame(
            {
                "algorithm": np.tile(algorithms.to_numpy(), len(grid)),
                "alpha": np.repeat(grid, n),
                **{k: v.ravel() for k, v in columns.items()},
                "undefined": undefined.ravel(),
            }
        )
        detail["algorithm"] = detail["algorithm"].astype("string")
    else:
        detail = pd.DataFrame()
    value = columns["value"]
    verdict = _ffmc1_verdict(grid, share)
    share_q25, share_q75 = nanquantile(share, [0.25, 0.75], axis=1)
    value_q25, value_q75 = nanquantile(value, [0.25, 0.75], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns give NaN, as wanted
        by_alpha = pd.DataFrame(
            {
                "alpha": grid,
                "share_median": verdict["median"],
                "share_mean": np.nanmean(share, axis=1),
                "share_q25": share_q25,
                "share_q75": share_q75,
                "value_min": np.nanmin(value, axis=1),
                "value_q25": value_q25,
                "value_median": nanmedian(value, axis=1),
                "value_q75": value_q75,
                "value_max": np.nanmax(value, axis=1),
                "n_undefined": undefined.sum(axis=1),
            }
        )
    half = int(np.argmin(np.abs(grid - 0.5)))
    median_a = float(nanmedian(columns["fmr_term"][half]))
    median_b = float(nanmedian(columns["fnmr_term"][half]))
    median = by_alpha["share_median"].to_numpy()
    monotone = bool(verdict["monotone"])
    with np.errstate(invalid="ignore"):
        own_steps = np.diff(share, axis=0)
    fraction_monotone = float(
        np.mean((np.nan_to_num(own_steps, nan=0.0) >= -TOLERANCE).all(axis=0))
    )
    crossing = float(verdict["crossing"])
    crossing_mean = first_crossing(grid, by_alpha["share_mean"].to_numpy())
    lo, hi = CROSSING_WINDOW
    passed = bool(verdict["passed"])
    ratio = median_a / median_b if np.isfinite(median_b) and median_b != 0.0 else np.nan
    summary = {
        "crossing_alpha": crossing,
        "crossing_alpha_mean": crossing_mean,
        "monotone": monotone,
        "fraction_monotone": fraction_monotone,
        "median_fmr_term": median_a,
        "median_fnmr_term": median_b,
        "term_ratio": ratio,
        "share_at_half": float(median[half]),
        "n_undefined_at_half": int(undefined[half].sum()),
        "n_warnings": n_warnings,
    }
    if m.share in ("fmr", "fnmr"):
        constant = 1 if m.share == "fmr" else 0
        why = f"one error type only ({m.share.upper()}): its FMR share is {constant} at every alpha"
    elif not np.isfinite(crossing):
        why = "median share of the alpha term never surpasses 50%"
    else:
        why = (
            f"median share of the alpha term surpasses 50% at alpha {crossing:.2f} "
            f"(mean: {_fmt(crossing_mean)}), {'inside' if lo <= crossing <= hi else 'outside'} "
            f"[{lo}, {hi}]"
        )
    if m.share in ("fmr", "fnmr"):
        trend = "alpha has no effect"
    else:
        trend = f"share {'rises monotonically' if monotone else 'does not rise monotonically'}"
    evidence = (
        f"{why}; {trend}; median A {_fmt(median_a)}, median B {_fmt(median_b)} (A/B {_fmt(ratio)})"
    )
    return CriterionResult(m.name, "FFMC.1", passed, evidence, summary, detail, by_alpha)
