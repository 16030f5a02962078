"""Measures, rankings, statistics and frontier membership over replicates (:class:`UncertaintyResult`)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from audit.analysis.accuracy import weight_matrices, weighted_total
from audit.analysis.ffmc import first_crossing
from audit.analysis.pareto import (  # one tie tolerance for every frontier
    TIE_RTOL,
    accuracy_weights,
    efficient,
)
from audit.analysis.quantiles import nanmedian, nanpercentile
from audit.analysis.ranks import average_ranks
from audit.exceptions import UsageError
from audit.measures import onesided
from audit.measures.contract import PairMeasure
from audit.measures.kernels import MeasureResult
from audit.measures.registry import Measure, bound_measures, get_measure
from audit.tables.layouts import RATES, available_rates
from audit.tables.rates import rate_matrices
from audit.uncertainty.checks import (
    ACCURACY_AXIS,
    CROSSING_GRID,
    FLOOR_LOWER,
    FRONTIER,
    OPTIONAL_FUNCTION,
    SCORE_COLUMNS,
    STABLE_SPEARMAN,
    SUMMARY,
    TRANSCRIPTION,
    _rate_measures,
)
from audit.uncertainty.claims import label, robustness_sentences, robustness_summary
from audit.uncertainty.intervals import count_matrices
from audit.uncertainty.replicates import (
    _aligned,
    _check_columns,
    _replicate_measures,
    _replicates,
    _score_results,
    parametric_replicates,
    transcription_redraws,
)
from audit.validation import FRAME, RATES_TABLE, Numbers, Options, validate_params

#: Replicates whose frontiers :func:`frontier_membership` finds in one call of
#: :func:`audit.analysis.pareto.efficient` (its O(n log n) sweep is batched; the
#: pairwise comparison it falls back to when an undefined value is set to inf
#: stays small and in cache).
FRONTIER_BLOCK = 64


@validate_params(fairness=Numbers(), accuracy=Numbers(), **FRONTIER)
def frontier_membership(
    fairness,
    accuracy,
    *,
    higher_is_fairer: bool = False,
    weak: bool = False,
    tie_rtol: float = TIE_RTOL,
) -> np.ndarray:
    """Which algorithms are on the accuracy/fairness Pareto frontier, per replicate.

    ``fairness`` and ``accuracy`` (an error rate: lower is better) have shape
    (..., n_algorithms).  An algorithm is on the frontier when no other is at
    least as good on both axes and better on one (strict efficiency; the
    single-point definition printed as Howard et al. eq. 10 describes the
    best point, not a frontier).  ``weak=True`` keeps the weakly efficient ones
    (no rival strictly better on both).  An algorithm whose measure is
    undefined (NaN) in a replicate is off the frontier and dominates nothing.
    Uses :func:`audit.analysis.pareto.efficient` (values within ``tie_rtol`` of each
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
    # pareto.efficient, batched over blocks of replicates
    flat = points.reshape(-1, *points.shape[-2:])
    mask = np.concatenate(
        [
            np.asarray(
                efficient(
                    flat[i : i + FRONTIER_BLOCK],
                    higher_is_better=[False, False],
                    weak=weak,
                    rtol=tie_rtol,
                )
            )
            for i in range(0, len(flat), FRONTIER_BLOCK)
        ]
    ).reshape(missing.shape)
    return mask & ~missing


@validate_params("weights", table=RATES_TABLE)
def fnmr_weights(table: pd.DataFrame, weights="equal") -> np.ndarray:
    """Weights of the groups in the total (overall) FNMR, shape (n_alg, n_groups).

    ``weights`` is read exactly as :func:`audit.analysis.accuracy.overall_rates` reads
    it (``"equal"``, ``"counts"``, a counts file or frame, a mapping), so the
    replicate totals are those of the Pareto report
    (:func:`audit.analysis.accuracy.weight_matrices`); an array is used as it is.
    """
    if isinstance(weights, np.ndarray):
        return np.atleast_2d(weights.astype("float64"))
    return weight_matrices(table, weights=weights)["w_fnmr"]


# ------------------------------------------------------------------------- summaries


def _percentiles(values: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    tail = 100.0 * (1.0 - level) / 2.0
    low, high = nanpercentile(values, [tail, 100.0 - tail], axis=0)  # all-NaN columns -> NaN
    return low, high


def _ranks(values: np.ndarray, higher_is_fairer: bool) -> np.ndarray:
    """Rank 1 = fairest, ties averaged, undefined (NaN) last."""
    key = -values if higher_is_fairer else values
    key = np.where(np.isnan(key), np.inf, key)
    return average_ranks(key, axis=-1)


#: Alphas whose shares are computed together when looking for the crossings.
CROSSING_CHUNK = 16


def _median_above_half(values: np.ndarray) -> np.ndarray:
    """Whether the median along the last axis, NaN left out, exceeds 1/2: ``nanmedian(values)
    > 0.5`` (and ``np.median`` where there is no NaN), decided without sorting.

    Of ``n`` values, ``c`` above 1/2: the median is above where ``c`` exceeds ``n / 2``,
    not where ``c`` falls short of it; where ``c`` is exactly ``n / 2`` it is the mean of
    the greatest value at or below 1/2 and the least above, computed as ``nanmedian``
    computes it.  No value (all NaN): False, as a NaN median compares.

    >>> nan = np.nan
    >>> _median_above_half(np.array([[0.1, 0.9, 0.6, nan], [0.2, 0.7, nan, nan],
    ...                              [0.4, 0.61, 0.5, 0.7], [nan, nan, nan, nan]]))
    array([ True, False,  True, False])
    """
    above = values > 0.5  # NaN: False
    n = np.count_nonzero(~np.isnan(values), axis=-1)
    c = np.count_nonzero(above, axis=-1)
    tied = 2 * c == n  # (n even) the two middle values straddle 1/2; or no value at all
    result = 2 * c > n
    if tied.any():
        rows = values[tied]
        # -inf + inf is NaN, as nanmedian gives it (no value: the two are -inf and inf)
        with np.errstate(invalid="ignore"):
            low = np.where(rows <= 0.5, rows, -np.inf).max(axis=-1)
            high = np.where(rows > 0.5, rows, np.inf).min(axis=-1)
            result[tied] = (low + high) / 2.0 > 0.5
    return result


def _crossing(measure: Measure, fmr_term, fnmr_term, grid) -> dict[str, np.ndarray]:
    """First alpha of ``grid`` where the median and the mean (over algorithms) of the alpha
    share surpass 1/2, per replicate (:func:`audit.analysis.ffmc.first_crossing`, as FFMC.1 reads it).

    The shares of a block of alphas are computed at once, shape (n_alphas, n_replicates,
    n_algorithms), and summarised along the algorithms; the blocks go up the grid until
    every replicate has crossed on both statistics (the alphas after a replicate's first
    crossing cannot change it).  A measure of one error type has the same share at every
    alpha: it is computed once.
    """
    grid = np.asarray(grid, dtype="float64")
    fmr_term = np.asarray(fmr_term, dtype="float64")
    fnmr_term = np.asarray(fnmr_term, dtype="float64")
    constant = measure.share in ("fmr", "fnmr")
    column = (-1, *[1] * fmr_term.ndim)
    batch = fmr_term.shape[:-1]
    found = {"median": np.full(batch, np.nan), "mean": np.full(batch, np.nan)}
    for start in range(0, len(grid), CROSSING_CHUNK):
        alphas = grid[start : start + CROSSING_CHUNK]
        with np.errstate(invalid="ignore", divide="ignore"):
            at = alphas[:1] if constant else alphas
            share = np.asarray(measure.alpha_share(fmr_term, fnmr_term, at.reshape(column)))
        share = np.broadcast_to(share, (len(at), *fmr_term.shape))
        # the median's crossing is where it exceeds 1/2, which is known without it
        summaries = {"median": _median_above_half(share).astype(np.float64)}
        if np.isnan(share).any():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN rows -> NaN
                summaries["mean"] = np.nanmean(share, axis=-1)
        else:  # same values, no NaN to leave out
            summaries["mean"] = np.mean(share, axis=-1)
        for name, summary in summaries.items():
            summary = np.broadcast_to(summary, (len(alphas), *batch))
            crossing = np.asarray(first_crossing(alphas, summary))
            found[name] = np.where(np.isnan(found[name]), crossing, found[name])
        if not (np.isnan(found["median"]).any() or np.isnan(found["mean"]).any()):
            break
    return found


def _statistics(
    results: dict[str, MeasureResult],
    measures: Sequence[Measure],
    frontier,
    grid,
    rates: tuple[str, ...] = RATES,
) -> dict[str, np.ndarray]:
    """Dataset-level statistics (over algorithms) per replicate: of a one-sided table
    (``rates`` of one rate) the terms of the rate present only, and no crossing (there is
    no second term for alpha to weigh)."""
    out: dict[str, np.ndarray] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for measure in measures:
            r = results[measure.name]
            name = measure.name
            values = r.value
            q05, q95 = nanpercentile(values, [5, 95], axis=-1)
            out[f"{name}.min"] = np.nanmin(values, axis=-1)
            out[f"{name}.q05"] = q05
            out[f"{name}.median"] = nanmedian(values, axis=-1)
            out[f"{name}.q95"] = q95
            out[f"{name}.max"] = np.nanmax(values, axis=-1)
            for rate in rates:
                term = f"{rate}_term"
                terms = np.asarray(getattr(r, term), dtype="float64")
                out[f"{name}.{term}.median"] = nanmedian(terms, axis=-1)
                out[f"{name}.{term}.max"] = np.nanmax(terms, axis=-1)
            out[f"{name}.undefined"] = r.undefined.sum(axis=-1).astype("float64")
            if rates != RATES:
                continue
            crossing = _crossing(measure, r.fmr_term, r.fnmr_term, grid)
            out[f"{name}.crossing.median"] = crossing["median"]
            out[f"{name}.crossing.mean"] = crossing["mean"]
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
        the point ranking (median and lower percentile, and ``spearman_share``,
        the share of replicates in which it is at least
        :data:`~audit.uncertainty.checks.STABLE_SPEARMAN`), the share of
        replicates in which the point-fairest algorithm stays fairest, and the
        mean overlap of the top ``top`` algorithms.
    statistics
        One row per dataset-level statistic (e.g. ``garbe.max``,
        ``fdr.crossing.median``, ``frontier.size``): point value, percentile
        interval, replicate median.
    frontier
        One row per algorithm: the accuracy (``total_fnmr``, or ``total_fmr``
        when that is the axis: ``params["accuracy"]``) and the fairness
        ``value`` with their intervals, ``on_frontier`` (point data) and
        ``frontier_probability`` (share of replicates on the frontier).
    replicate_statistics
        The statistics of every replicate (one row each).
    fmr, fnmr
        The replicate rates, (n_replicates, n_algorithms, n_groups) (the absent rate
        of a one-sided table NaN).
    params
        Every parameter of the run (seed, replicates, level, the ``rates`` redrawn,
        the ``accuracy`` axis, ...).
    pairs
        Of a cross-group table, the replicate pair matrices (n_replicates,
        n_algorithms, n_groups, n_groups); else None.
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
    pairs: np.ndarray | None = field(default=None, repr=False)

    def summary(self, **options) -> str:
        """The plain-language paragraph of :func:`robustness_summary`."""
        return robustness_summary(self, **options)

    def sentences(self, **options) -> list[str]:
        """The sentences of :func:`robustness_sentences`, one by one."""
        return robustness_sentences(self, **options)


def _analyse(
    kind: str,
    table: pd.DataFrame,
    fmr_reps,
    fnmr_reps,
    *,
    measures,
    alpha,
    level,
    within,
    top,
    fairness,
    weights,
    alpha_grid,
    params,
    extra: Mapping[str, tuple[bool, MeasureResult, MeasureResult]] | None = None,
    matrices: tuple | None = None,
    accuracy: str = "total_fnmr",
    pairs: np.ndarray | None = None,
) -> UncertaintyResult:
    """Summarise replicate rates (``extra``: measures already computed on them, e.g. score
    or pair measures, by name: (higher is fairer, point, replicates)).  A one-sided table
    has its measures computed as on the table (:func:`replicate_measures` with its
    ``rates``); the frontier is that of ``fairness`` and the total-rate axis ``accuracy``."""
    rates = available_rates(table)
    chosen = _rate_measures(measures, table)
    if rates != RATES:  # a measure that does not apply to a one-sided table is left out
        chosen = [m for m in chosen if onesided.applicability(m, rates)[0] != _NOT_APPLICABLE]
    # a table measure judges the frontier bound to the table, as it is audited
    (fair_measure,) = bound_measures(table, [fairness])
    if isinstance(fair_measure, PairMeasure):
        if fair_measure.name not in (extra or {}):
            raise UsageError(_FAIRNESS_PAIRS.format(name=fair_measure.name))
    elif rates != RATES and onesided.applicability(fair_measure, rates)[0] == _NOT_APPLICABLE:
        raise UsageError(
            onesided.NOT_APPLICABLE_HERE.format(
                name=fair_measure.name,
                source=table.attrs.get("source", "the table"),
                reason=onesided.applicability(fair_measure, rates)[1],
            )
        )
    elif fair_measure.name not in {m.name for m in chosen}:
        chosen.append(fair_measure)
    grid = CROSSING_GRID if alpha_grid is None else np.asarray(alpha_grid, dtype="float64")
    algorithms, groups, fmr0, fnmr0 = rate_matrices(table) if matrices is None else matrices
    point = _replicate_measures(fmr0[None], fnmr0[None], chosen, alpha=alpha, rates=rates)
    reps = _replicate_measures(fmr_reps, fnmr_reps, chosen, alpha=alpha, rates=rates)
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
        rank_rows.append(
            pd.DataFrame(
                {
                    "measure": name,
                    "algorithm": algorithms.to_numpy(),
                    "rank": point_rank,
                    "rank_low": rank_low,
                    "rank_high": rank_high,
                    "p_within": (np.abs(rep_rank - point_rank) <= within).mean(axis=0),
                    "p_fairest": fairest.mean(axis=0),
                }
            )
        )
        centred = rep_rank - rep_rank.mean(axis=-1, keepdims=True)
        centred0 = point_rank - point_rank.mean()
        with np.errstate(invalid="ignore", divide="ignore"):
            spearman = (centred @ centred0) / (
                np.linalg.norm(centred, axis=-1) * np.linalg.norm(centred0)
            )
        point_top = point_rank <= np.sort(point_rank)[min(top, len(point_rank)) - 1]
        rep_order = np.argsort(rep_rank, axis=-1, kind="stable")[:, :top]
        overlap = point_top[rep_order].sum(axis=-1) / min(top, len(point_rank))
        best0 = int(np.argmin(point_rank))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # one algorithm: no correlation
            spearman_median = float(nanmedian(spearman))
            spearman_low = float(nanpercentile(spearman, 100.0 * (1.0 - level) / 2.0))
        rank_summary.append(
            {
                "measure": name,
                "spearman_median": spearman_median,
                "spearman_low": spearman_low,
                "spearman_share": float((spearman >= STABLE_SPEARMAN).mean()),
                "fairest": algorithms[best0],
                "p_fairest_kept": float(fairest[:, best0].mean()),
                f"top{top}_overlap": float(overlap.mean()),
            }
        )

    if isinstance(weights, np.ndarray):  # given as they are, for the axis in use
        w = fnmr_weights(table, weights)
    else:
        w = accuracy_weights(table, accuracy, weights=weights)
    if isinstance(fair_measure, PairMeasure):
        _, fair_p, fair_r = extra[fair_measure.name]
        fair_point, fair_reps = fair_p.value, fair_r.value
    else:
        fair_point, fair_reps = point[fair_measure.name].value, reps[fair_measure.name].value
    rate0, rate_reps = (fmr0, fmr_reps) if accuracy == "total_fmr" else (fnmr0, fnmr_reps)
    acc_point, acc_reps = weighted_total(rate0, w)[None], weighted_total(rate_reps, w)
    on_point = frontier_membership(
        fair_point, acc_point, higher_is_fairer=fair_measure.higher_is_fairer
    )[0]
    on_reps = frontier_membership(
        fair_reps, acc_reps, higher_is_fairer=fair_measure.higher_is_fairer
    )
    acc_low, acc_high = _percentiles(acc_reps, level)
    fair_low, fair_high = _percentiles(fair_reps, level)
    frontier = pd.DataFrame(
        {
            "algorithm": algorithms.to_numpy(),
            accuracy: acc_point[0],
            f"{accuracy}_low": acc_low,
            f"{accuracy}_high": acc_high,
            "measure": fair_measure.name,
            "value": fair_point[0],
            "low": fair_low,
            "high": fair_high,
            "on_frontier": on_point,
            "frontier_probability": on_reps.mean(axis=0),
        }
    )

    stat_point = _statistics(point, chosen, on_point[None], grid, rates)
    stat_reps = _statistics(reps, chosen, on_reps, grid, rates)
    replicate_statistics = pd.DataFrame(stat_reps)
    stat_rows = []
    for name, values in stat_reps.items():
        low, high = _percentiles(values[:, None], level)
        median = float(nanmedian(values))
        stat_rows.append(
            {
                "statistic": name,
                "value": float(stat_point[name][0]),
                "low": float(low[0]),
                "high": float(high[0]),
                "median": median,
                "min": float(np.nanmin(values)) if np.isfinite(values).any() else np.nan,
                "max": float(np.nanmax(values)) if np.isfinite(values).any() else np.nan,
            }
        )
    statistics = pd.DataFrame(stat_rows)

    params = {
        "kind": kind,
        "n_replicates": int(n_rep),
        "level": level,
        "alpha": alpha,
        "measures": [m.name for m in chosen] + [n for n in extra or {} if n not in point],
        "fairness": fair_measure.name,
        "labels": {
            **{m.name: m.label for m in chosen},
            **{n: label(n) for n in extra or {}},
            fair_measure.name: fair_measure.label,
        },
        "rates": list(rates),
        "accuracy": accuracy,
        "weights": weights if isinstance(weights, str) else "custom",
        "within": within,
        "top": top,
        "interval": "percentile",
        **params,
    }
    frames = [
        pd.concat(rows, ignore_index=True),
        pd.concat(rank_rows, ignore_index=True),
        pd.DataFrame(rank_summary),
        statistics,
        frontier,
        replicate_statistics,
    ]
    for frame in frames:
        frame.attrs.update(params)
    return UncertaintyResult(
        kind,
        *frames,
        fmr=np.asarray(fmr_reps),
        fnmr=np.asarray(fnmr_reps),
        params=params,
        pairs=pairs,
    )


_NOT_APPLICABLE = onesided.NOT_APPLICABLE


_FAIRNESS_PAIRS = (
    "the frontier's measure {name!r} reads a cross-group FMR matrix, which these replicates "
    "do not redraw"
)


@validate_params(
    "n_replicates", "seed", "floor_lower", "alpha", "level", "weights", "alpha_grid",
    accuracy=ACCURACY_AXIS, **TRANSCRIPTION, **SUMMARY,
    table=RATES_TABLE,
)  # fmt: skip
def transcription_sensitivity(
    table: pd.DataFrame,
    measures=None,
    *,
    n_replicates: int = 1000,
    seed: int = 0,
    floor: float = 1e-5,
    floor_lower: float | None = FLOOR_LOWER,
    step: float = 0.1,
    fnmr_half_width: float = 5e-5,
    alpha: float = 0.5,
    level: float = 0.95,
    fairness: str = "garbe",
    weights="equal",
    within: int = 5,
    top: int = 10,
    alpha_grid=None,
    accuracy: str = "total_fnmr",
) -> UncertaintyResult:
    """Sensitivity of every measure, ranking, statistic and the frontier to Annex 15 rounding.

    Redraws the rates with :func:`transcription_redraws` ``n_replicates``
    times and summarises them (see :class:`UncertaintyResult`).  The
    intervals are ranges of plausible values given the rounding, not
    confidence intervals: sampling error comes on top.

    Examples
    --------
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"Algorithm": ["a", "b"], "FMR.F": [1e-5, 1e-4],
    ...     "FNMR.F": [0.01, 0.02], "FMR.M": [1e-4, 1e-4], "FNMR.M": [0.02, 0.02]}))
    >>> r = transcription_sensitivity(t, ["garbe"], n_replicates=200)
    >>> r.frontier[["algorithm", "on_frontier", "frontier_probability"]]
      algorithm  on_frontier  frontier_probability
    0         a         True                   1.0
    1         b         True                   1.0
    """
    matrices = rate_matrices(table)
    _, _, fmr, fnmr = matrices
    fmr_reps, fnmr_reps = transcription_redraws(
        fmr,
        fnmr,
        n_replicates=n_replicates,
        seed=seed,
        step=step,
        floor=floor,
        floor_lower=floor_lower,
        fnmr_half_width=fnmr_half_width,
    )
    params = {
        "seed": seed,
        "step": step,
        "floor": floor,
        "floor_lower": floor_lower,
        "fnmr_half_width": fnmr_half_width,
        "resampled": "each FMR uniform in log10 within its 0.1-decade bin (floored ones "
        "down to floor_lower); each FNMR uniform within its last decimal",
    }
    return _analyse(
        "transcription",
        table,
        fmr_reps,
        fnmr_reps,
        measures=measures,
        alpha=alpha,
        level=level,
        within=within,
        top=top,
        fairness=fairness,
        weights=weights,
        alpha_grid=alpha_grid,
        params=params,
        matrices=matrices,
        accuracy=accuracy,
    )


@validate_params(
    "n_replicates", "seed", "alpha", "level", "weights", "alpha_grid",
    accuracy=ACCURACY_AXIS, **SUMMARY,
    table=RATES_TABLE,
)  # fmt: skip
def parametric_bootstrap(
    table: pd.DataFrame,
    measures=None,
    *,
    counts=None,
    n_replicates: int = 1000,
    seed: int = 0,
    alpha: float = 0.5,
    level: float = 0.95,
    fairness: str = "garbe",
    weights="counts",
    within: int = 5,
    top: int = 10,
    alpha_grid=None,
    accuracy: str = "total_fnmr",
) -> UncertaintyResult:
    """Parametric (binomial) bootstrap of every measure from comparison counts.

    Replicates come from :func:`parametric_replicates`; intervals are
    percentile intervals.  Comparisons are assumed independent, which
    understates the uncertainty when many share a subject: with scores use
    :func:`score_bootstrap`.  ``weights`` for the total FNMR default to the
    mated counts.

    Examples
    --------
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"algorithm": ["a", "a"], "group": ["F", "M"],
    ...     "fmr": [1e-4, 2e-4], "fnmr": [0.02, 0.01],
    ...     "n_mated": [1000, 1000], "n_nonmated": [100_000, 100_000]}))
    >>> r = parametric_bootstrap(t, ["fdr"], n_replicates=500, seed=1)
    >>> row = r.intervals.query("measure == 'fdr'").iloc[0]
    >>> bool(row.low < row.value < row.high)
    True
    """
    fmr_reps, fnmr_reps = parametric_replicates(
        table, counts=counts, n_replicates=n_replicates, seed=seed
    )
    if (
        isinstance(weights, str)
        and weights == "counts"
        and counts is not None
        and "n_mated" not in table.columns
    ):
        weights = count_matrices(table, counts)[0].astype("float64")
    params = {
        "seed": seed,
        "counts": "table columns" if counts is None else "given",
        "resampled": "binomial error counts per (algorithm, group), comparisons independent",
    }
    return _analyse(
        "parametric",
        table,
        fmr_reps,
        fnmr_reps,
        measures=measures,
        alpha=alpha,
        level=level,
        within=within,
        top=top,
        fairness=fairness,
        weights=weights,
        alpha_grid=alpha_grid,
        params=params,
        accuracy=accuracy,
    )


@validate_params(
    "n_replicates", "seed", "alpha", "level", "weights", "alpha_grid",
    replicate_as=Options(("table", "statistics")), score_measures=OPTIONAL_FUNCTION,
    **SCORE_COLUMNS, **SUMMARY,
    scores=FRAME,
)  # fmt: skip
def score_bootstrap(
    scores: pd.DataFrame,
    rates: Callable[[pd.DataFrame], pd.DataFrame],
    measures=None,
    *,
    score_measures: Callable[[pd.DataFrame], pd.DataFrame] | None = None,
    unit: str = "subject",
    replicate_as: str = "table",
    subject: str = "subject",
    group: str = "group",
    mated: str = "mated",
    algorithm: str | None = "algorithm",
    n_replicates: int = 200,
    seed: int = 0,
    alpha: float = 0.5,
    level: float = 0.95,
    fairness: str = "garbe",
    weights="equal",
    within: int = 5,
    top: int = 10,
    alpha_grid=None,
) -> UncertaintyResult:
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
        :func:`audit.measures.registry.evaluate_scores`; their intervals and
        ranking stability join those of the rate measures (direction from the
        registry, lower-is-fairer if unregistered).
    unit
        What is resampled, see :func:`resample_scores`.
    replicate_as
        What ``rates`` and ``score_measures`` are given.  ``"table"`` (default):
        ``scores`` for the point estimate and the resampled rows for each
        replicate, DataFrames like ``scores``.  ``"statistics"``: their
        statistics, without making the rows; ``scores`` must be a validated
        score table (:func:`audit.scores.read_scores`).  The point estimate gets
        :func:`audit.scores.score_stats` of it; its segments are sorted once
        (:func:`audit.scores.weighted.sorted_scores`) and each replicate, the
        same draws as with ``"table"`` (same seed, same random numbers), is a
        count per subject (or comparison) given as an
        :class:`audit.scores.weighted.CountedStats`, equal to ``score_stats``
        of the resampled rows.  Every function of :mod:`audit.scores` and
        :mod:`audit.measures.scores` takes either and gives the same numbers
        (e.g. ``lambda s: audit.scores.rates_at_fmr(s, 1e-3)`` and
        :func:`audit.measures.registry.evaluate_scores`), at O(n) a replicate
        instead of a resample and a sort.

    Returns
    -------
    UncertaintyResult
        ``kind`` is ``unit``; ``params["resampled"]`` says what was resampled.
    """
    _check_columns(scores, [subject if unit == "subject" else None, group, mated, algorithm])
    point, replicate = _replicates(
        scores,
        replicate_as=replicate_as,
        unit=unit,
        subject=subject,
        group=group,
        mated=mated,
        algorithm=algorithm,
    )
    rng = np.random.default_rng(seed)
    table = rates(point)
    algorithms, groups, _, _ = rate_matrices(table)
    fmr_reps = np.empty((n_replicates, len(algorithms), len(groups)))
    fnmr_reps = np.empty_like(fmr_reps)
    score_point = (
        {} if score_measures is None else _score_results(score_measures(point), algorithms, "point")
    )
    score_reps = {name: {part: [] for part in parts} for name, parts in score_point.items()}
    for i in range(n_replicates):
        sample = replicate(rng)
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
        p = MeasureResult(
            *(
                np.asarray(score_point[name][part])[None]
                for part in ("value", "fmr_term", "fnmr_term", "undefined")
            )
        )
        r = MeasureResult(
            *(np.asarray(parts[part]) for part in ("value", "fmr_term", "fnmr_term", "undefined"))
        )
        extra[name] = (higher_is_fairer, p, r)
    resampled = (
        f"subjects ({subject!r}) with replacement within each {group!r}, all their comparisons kept"
        if unit == "subject"
        else f"comparisons with replacement within each ({algorithm!r}, {group!r}, {mated!r})"
    )
    params = {"seed": seed, "unit": unit, "resampled": resampled}
    return _analyse(
        unit,
        table,
        fmr_reps,
        fnmr_reps,
        measures=measures,
        alpha=alpha,
        level=level,
        within=within,
        top=top,
        fairness=fairness,
        weights=weights,
        alpha_grid=alpha_grid,
        params=params,
        extra=extra,
    )


def join_frontier_probability(frame: pd.DataFrame, result: UncertaintyResult) -> pd.DataFrame:
    """Add frontier membership probability and intervals to a per-algorithm table.

    ``frame`` is indexed by algorithm or has an ``algorithm`` column (e.g. the
    down-select table of :func:`audit.analysis.pareto.downselect`).  Added columns:
    ``frontier_probability``, ``fairness_low``/``fairness_high`` (interval of
    the frontier's fairness measure) and ``total_fnmr_low``/``total_fnmr_high``
    (``total_fmr_...`` on a total-FMR axis);
    ``attrs["uncertainty"]`` records how the replicates were made.

    Examples
    --------
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"Algorithm": ["a", "b"], "FMR.F": [1e-5, 1e-4],
    ...     "FNMR.F": [0.01, 0.02], "FMR.M": [1e-4, 1e-4], "FNMR.M": [0.02, 0.02]}))
    >>> r = transcription_sensitivity(t, ["garbe"], n_replicates=50)
    >>> table = pd.DataFrame({"fairness": [0.3]}, index=pd.Index(["a"], name="algorithm"))
    >>> join_frontier_probability(table, r)["frontier_probability"].tolist()
    [1.0]
    """
    axis = result.params.get("accuracy", "total_fnmr")
    extra = result.frontier.set_index("algorithm")[
        ["frontier_probability", "low", "high", f"{axis}_low", f"{axis}_high"]
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
    out.attrs["uncertainty"] = {
        key: result.params[key]
        for key in ("kind", "n_replicates", "level", "seed", "resampled")
        if key in result.params
    }
    return out
