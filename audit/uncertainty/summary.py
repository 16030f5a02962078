"""Verdict stability, the paper's claims over replicates, and the plain-language summary."""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd

from audit.analysis.ffmc import ffmc_table, ffmc_verdicts
from audit.analysis.quality import FLOOR_FRACTION, decade_grid, floor_of
from audit.measures.registry import bound_measures
from audit.tables.crossgroup import CrossGroupRates, cross_group
from audit.tables.layouts import available_rates
from audit.tables.rates import rate_matrices
from audit.uncertainty.checks import ANALYSIS, FLOOR_LOWER, OPTIONAL_FUNCTION
from audit.uncertainty.onerate import one_rate_analysis
from audit.uncertainty.results import (
    UncertaintyResult,
    parametric_bootstrap,
    transcription_sensitivity,
)
from audit.validation import FRAME, RATES_TABLE, MeasureRefs, optional, validate_params

# ---------------------------------------------------------------- verdict stability


@validate_params(table=RATES_TABLE)
def replicate_table(
    table: pd.DataFrame, fmr: np.ndarray, fnmr: np.ndarray, pairs: np.ndarray | None = None
) -> pd.DataFrame:
    """A copy of ``table`` with its rates replaced by one replicate's (algorithm x group)
    arrays (the rates it holds: the other is ignored), and with ``pairs`` its cross-group
    matrices (:func:`audit.tables.crossgroup.cross_group`) by the replicate's."""
    algorithms, groups, _, _ = rate_matrices(table)
    alg_pos = algorithms.get_indexer(table["algorithm"])
    grp_pos = groups.get_indexer(table["group"])
    out = table.copy()
    for rate, values in (("fmr", fmr), ("fnmr", fnmr)):
        if rate in available_rates(table):
            out[rate] = values[alg_pos, grp_pos]
    cross = cross_group(table)
    if pairs is not None and cross is not None:
        out.attrs["cross_group"] = CrossGroupRates(
            cross.algorithms, cross.groups, np.array(pairs, dtype="float64"), cross.n_nonmated
        )
    return out


@validate_params(
    "n_replicates",
    "alpha_grid",
    "seed",
    "n_random",
    measures=MeasureRefs(),
    criteria=OPTIONAL_FUNCTION,
    point=optional(FRAME),
    table=RATES_TABLE,
)
def verdict_stability(
    table: pd.DataFrame,
    result: UncertaintyResult,
    measures=None,
    *,
    n_replicates: int = 50,
    criteria: Callable | None = None,
    alpha_grid=None,
    seed: int = 0,
    n_random: int = 2000,
    point: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Share of replicates in which each FFMC verdict holds.

    Runs the FFMC audit (:func:`audit.analysis.ffmc.ffmc_table`, or ``criteria``, a
    function with the same signature) on the point table and on the first
    ``n_replicates`` replicates of ``result``, and returns one row per
    (measure, criterion): the point verdict ``passed`` (NA where the
    criterion does not apply), ``share_passed`` over the replicates and
    ``agreement``, the share agreeing with the point verdict.  The default
    audit runs on all replicates at once (:func:`audit.analysis.ffmc.ffmc_verdicts`,
    the same verdicts), its FFMC.2 search with ``n_random`` draws; a given
    ``criteria`` runs once per replicate table, given ``alpha_grid`` and ``seed``.

    Pass the settings of the FFMC audit the verdicts are read beside (a report's FFMC
    table): the stability of a verdict reached on another alpha grid, or by another
    search, is not the stability of the verdict shown.  ``point``, the audit of
    ``table`` already made with them (its columns ``measure``, ``criterion`` and
    ``passed``: :func:`~audit.analysis.ffmc.ffmc_table`, or
    :func:`~audit.analysis.ffmc.ffmc_report`'s ``table``), gives the point verdicts
    without running that audit again; its rows of other measures than ``measures``
    are left out, the others read in the order of ``measures``.
    """
    n = min(n_replicates, result.fmr.shape[0])
    if measures is not None:  # a table measure runs bound to the table's groups and counts
        measures = bound_measures(table, measures)
    if point is None and criteria is None:
        point = ffmc_table(table, measures, alpha_grid=alpha_grid, seed=seed, n_random=n_random)
    elif point is None:
        point = criteria(table, measures, alpha_grid=alpha_grid, seed=seed)
    elif measures is not None:  # its rows of the measures judged, in their order
        order = {m.name: i for i, m in enumerate(measures)}
        point = point[point["measure"].isin(order)]
        point = point.sort_values("measure", key=lambda s: s.map(order), kind="stable")
    keys = ["measure", "criterion"]
    if criteria is None:
        # every replicate at once: the verdicts ffmc_table gives each replicate table, of
        # the measures it audited (a table measure bound to the table)
        audited = bound_measures(table, list(dict.fromkeys(point["measure"])))
        passed = ffmc_verdicts(
            result.fmr[:n],
            result.fnmr[:n],
            audited,
            alpha_grid=alpha_grid,
            seed=seed,
            n_random=n_random,
            rates=available_rates(table),
            pairs=None if result.pairs is None else result.pairs[:n],
        )
    else:
        verdicts = []
        for i in range(n):
            pairs = None if result.pairs is None else result.pairs[i]
            replicate = criteria(
                replicate_table(table, result.fmr[i], result.fnmr[i], pairs),
                measures,
                alpha_grid=alpha_grid,
                seed=seed,
            )
            verdicts.append(
                replicate.set_index(keys)["passed"].astype("boolean").astype("float64")
            )  # NA (not applicable) -> NaN
        passed = pd.concat(verdicts, axis=1)
    passed = passed.reindex(point.set_index(keys).index)
    out = point[keys + ["passed"]].copy()
    out["passed"] = out["passed"].astype("boolean")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        share = np.nanmean(passed.to_numpy(dtype="float64"), axis=1)
    point_passed = out["passed"].astype("float64").to_numpy()
    out["share_passed"] = share
    out["agreement"] = np.where(
        np.isnan(point_passed), np.nan, np.where(point_passed == 1.0, share, 1.0 - share)
    )
    out.attrs.update({**result.params, "verdict_replicates": n})
    return out.reset_index(drop=True)


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
NO_FLOOR = (
    "they have no floor (no smallest positive FMR is shared by at least {fraction:.0%} "
    "of the cells and by two)"
)
FLOOR_BELOW_LOWER = "their floor {floor!r} is below floor_lower {value!r}"


@ANALYSIS
def analyse(
    table: pd.DataFrame,
    measures=None,
    *,
    method: str = "auto",
    n_replicates: int = 1000,
    seed: int = 0,
    alpha: float = 0.5,
    fairness: str = "garbe",
    weights="equal",
    floor_lower: float | None = FLOOR_LOWER,
    accuracy: str | None = None,
) -> tuple[UncertaintyResult | None, str]:
    """The uncertainty analysis a rates table supports, and a sentence saying which.

    ``method="auto"`` takes the binomial bootstrap (:func:`parametric_bootstrap`)
    when the table carries comparison counts, else the transcription redraw
    (:func:`transcription_sensitivity`) when its FMRs sit on a decade grid with a
    floor (as the Annex 15 transcription does: a smallest positive FMR shared by
    many cells, see :func:`audit.analysis.quality.floor_of`), no FMR is 0 and
    ``floor_lower`` (if not None) is at most that floor, else none, the
    description saying which condition failed. ``"counts"`` and
    ``"transcription"`` force one (a forced transcription raises
    ``ValueError`` on an FMR of 0 or a ``floor_lower`` above the floor);
    ``"none"`` skips it.  A table of one error rate (FMR or FNMR only, or a
    cross-group table) redraws that rate alone, from its counts or by how it
    was printed (:func:`audit.uncertainty.onerate.one_rate_analysis`: a decade
    grid, or a fixed number of decimals), with its pair measures when it has
    pairs.  ``weights`` (as in :func:`audit.analysis.accuracy.overall_rates`)
    weights the total of the frontier's ``accuracy`` axis (``"total_fnmr"`` or
    ``"total_fmr"``; default: the table's, :func:`audit.tables.layouts.default_accuracy`)
    whichever method runs, so the frontier probabilities match a down-select
    made with the same ``weights``; pass ``weights="counts"`` to weight by the
    table's comparison counts.

    Returns
    -------
    (result, description)
        ``result`` is None when no analysis applies; ``description`` says what
        was done, with the parameters, or why nothing was.
    """

    if method == "none":
        return None, "no uncertainty analysis (method='none')"
    rates = available_rates(table)
    if len(rates) == 1:
        return one_rate_analysis(
            table,
            measures,
            method=method,
            n_replicates=n_replicates,
            seed=seed,
            alpha=alpha,
            fairness=fairness,
            weights=weights,
            floor_lower=floor_lower,
            accuracy=accuracy,
        )
    accuracy = accuracy or "total_fnmr"
    has_counts = {"n_mated", "n_nonmated"} <= set(table.columns)
    step = decade_grid(table["fmr"].to_numpy())
    if method == "counts" or (method == "auto" and has_counts):
        result = parametric_bootstrap(
            table,
            measures,
            n_replicates=n_replicates,
            seed=seed,
            alpha=alpha,
            fairness=fairness,
            weights=weights,
            accuracy=accuracy,
        )
        return result, (
            f"binomial (parametric) bootstrap from the comparison counts: {n_replicates} "
            f"replicates, seed {seed}; comparisons are treated as independent, which "
            "understates the uncertainty where comparisons share a subject"
        )
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
        result = transcription_sensitivity(
            table,
            measures,
            n_replicates=n_replicates,
            seed=seed,
            step=step,
            floor=floor,
            floor_lower=floor_lower,
            alpha=alpha,
            fairness=fairness,
            weights=weights,
            accuracy=accuracy,
        )
        below = (
            "the floor's own bin"
            if floor_lower is None
            else f"down to {floor_lower:g} (a censored value may lie anywhere below the floor)"
        )
        return result, (
            f"transcription redraw: each FMR uniformly in log10 within its {step:g}-decade "
            f"bin, FMRs on the {floor:g} floor {below}, each FNMR within half its last "
            f"printed decimal; {n_replicates} replicates, seed {seed}. The intervals are "
            "ranges of values consistent with the rounding, not confidence intervals"
        )
    return None, NO_UNCERTAINTY
