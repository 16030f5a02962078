"""Replicates of a table of one error rate: an FMR-only or FNMR-only rates table, and the
(enrolment x probe) FMR matrix of a cross-group impostor table.

The two-sided redraws (:mod:`audit.uncertainty.replicates`) draw FMR and FNMR
together; a table of one rate has that one to redraw, from the same two sources:

* **with comparison counts** (``n_nonmated`` for an FMR, ``n_mated`` for an FNMR;
  a cross-group table's ``n_nonmated`` per pair): each cell's error count is
  redrawn as ``K ~ Binomial(n, rate)`` and the rate as ``K / n``, comparisons
  treated as independent (as :func:`audit.uncertainty.parametric_replicates`);
* **without**, the transcription redraw, by how the rate was printed:

  - on a decade grid with a floor (the Annex 15 FMRs): log-uniformly within its
    bin, a floored cell down to ``floor_lower``
    (:func:`audit.uncertainty.transcription_bins`);
  - with ``d`` decimals (the FRVT 1:1 FMRs: 4): uniformly within half a unit of
    the last decimal, ``rate +- 0.5 * 10**-d``, clipped to [0, 1]; a rate
    printed as 0 may have been anything below half that unit.

A calibrated cell (:mod:`audit.analysis.calibration`: the rate the thresholds
were set to hold, white men's FMR of 0.001 in FRVT 1:1) is not a measurement: it
keeps its value in every replicate.  Every measured pair of a cross-group table
is redrawn, and the within-group FMRs the rate measures read are the diagonal of
the redrawn matrix, so the pair measures and the rate measures of a replicate
come from one draw.

:func:`one_rate_analysis` makes the replicates and summarises them as the
two-sided analyses do (an :class:`~audit.uncertainty.UncertaintyResult`): the
intervals and rankings of the rate measures (each computed as on the table: on
its present term, :mod:`audit.measures.onesided`) and of the pair measures, and
frontier membership on the accuracy axis in use (total FMR on an FMR-only table).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from audit.analysis.accuracy import _from_table
from audit.analysis.calibration import calibrated_cells
from audit.analysis.quality import FLOOR_FRACTION, decade_grid, fixed_decimals, floor_of
from audit.exceptions import InputError
from audit.measures.contract import PairMeasure
from audit.measures.kernels import MeasureResult
from audit.measures.registry import get_measure, measure_names
from audit.tables.crossgroup import cross_group
from audit.tables.layouts import available_rates, default_accuracy
from audit.tables.rates import RATE_COUNTS, rate_matrices
from audit.uncertainty.checks import ANALYSIS, BAD_COUNTS, FLOOR_LOWER, NO_COMPARISONS
from audit.uncertainty.replicates import transcription_bins
from audit.validation import (
    Integer,
    Real,
    optional,
    validate_params,
)

NOT_PRINTED = (
    "the {rate}s are neither on a decade grid nor printed with a fixed number of decimals "
    "(at most {decimals}), so the transcription redraw does not apply"
)
NO_RATE_COUNTS = (
    "the table has no {column!r} column: a binomial bootstrap of its {rate} needs the "
    "number of {kind} comparisons of each cell"
)
NO_ONE_RATE = (
    "no uncertainty analysis: the table has no comparison counts ({column}) for a binomial "
    "bootstrap, and {reason}"
)
GRID_UNUSABLE = "its {rate}s sit on a {step:g}-decade grid but {reason}"


# ------------------------------------------------------------------ the redraws


@validate_params("n_replicates", "seed")
def binomial_redraws(values, counts, *, n_replicates: int = 1000, seed: int = 0, fixed=None):
    """Binomial redraws of rates of any shape: ``K ~ Binomial(n, rate)``, ``K / n``.

    NaN cells (pairs not measured) stay NaN; ``fixed`` (a boolean mask) cells keep their
    value.  Returns an array of shape ``(n_replicates, *values.shape)``.

    >>> reps = binomial_redraws([[1e-3, 0.5]], [[10_000, 10]], n_replicates=4, seed=1)
    >>> reps.shape, bool(((reps * [[10_000, 10]]) % 1 == 0).all())
    ((4, 1, 2), True)
    """
    values = np.asarray(values, dtype="float64")
    counts = np.broadcast_to(np.asarray(counts, dtype="float64"), values.shape)
    measured = ~np.isnan(values)
    if (counts[measured] <= 0).any():
        raise InputError(BAD_COUNTS.format(problem=NO_COMPARISONS))
    rng = np.random.default_rng(seed)
    n = counts[measured].astype("int64")
    draws = rng.binomial(n, values[measured], size=(n_replicates, len(n))) / n
    return _scatter(draws, values, measured, fixed)


@validate_params(
    "n_replicates", "seed", "floor_lower",
    step=optional(Real(0, 1, closed="right")), floor=optional(Real(0, 1, closed="right")),
    decimals=optional(Integer(0)),
)  # fmt: skip
def rounding_redraws(
    values,
    *,
    n_replicates: int = 1000,
    seed: int = 0,
    step: float | None = None,
    floor: float | None = None,
    floor_lower: float | None = FLOOR_LOWER,
    decimals: int | None = None,
    fixed=None,
):
    """Transcription redraws of rates of any shape, by how they were printed.

    With ``step`` (a decade grid, and its ``floor``): each rate log-uniformly within its
    bin, a floored one down to ``floor_lower``, as
    :func:`audit.uncertainty.transcription_redraws` redraws the Annex 15 FMRs.  With
    ``decimals``: uniformly within half a unit of the last decimal, clipped to [0, 1].
    NaN cells stay NaN; ``fixed`` cells keep their value.  Returns an array of shape
    ``(n_replicates, *values.shape)``.

    >>> reps = rounding_redraws([[0.0044, 0.0]], decimals=4, n_replicates=500)
    >>> float(reps[..., 0].min()) >= 0.00435 and float(reps[..., 0].max()) <= 0.00445
    True
    >>> float(reps[..., 1].min()) >= 0.0 and float(reps[..., 1].max()) <= 0.00005
    True
    """
    values = np.asarray(values, dtype="float64")
    measured = ~np.isnan(values)
    cells = values[measured]
    rng = np.random.default_rng(seed)
    u = rng.random((n_replicates, len(cells)))
    if step is not None:
        low, high, _, _ = transcription_bins(
            cells[None], np.zeros((1, len(cells))), step=step, floor=floor, floor_lower=floor_lower
        )
        draws = 10.0 ** (low[0] + u * (high[0] - low[0]))
    else:
        half = 0.5 * 10.0 ** -int(decimals)
        low, high = np.clip(cells - half, 0.0, 1.0), np.clip(cells + half, 0.0, 1.0)
        draws = low + u * (high - low)
    return _scatter(draws, values, measured, fixed)


def _scatter(draws: np.ndarray, values: np.ndarray, measured: np.ndarray, fixed) -> np.ndarray:
    """The redrawn measured cells back in place: NaN where not measured, ``fixed`` kept."""
    out = np.full((len(draws), *values.shape), np.nan)
    out[:, measured] = draws
    if fixed is not None and np.any(fixed):
        out[:, fixed] = values[fixed]
    return out


# ------------------------------------------------------------------ what a table supports


def rate_counts(table: pd.DataFrame, rate: str) -> np.ndarray | None:
    """The comparisons behind each cell of ``rate`` (algorithm x group, or algorithm x
    enrolment x probe for the FMRs of a cross-group table), or None without them."""
    cross = cross_group(table)
    if cross is not None and rate == "fmr":
        return None if cross.n_nonmated is None else cross.n_nonmated.astype("float64")
    column, _ = RATE_COUNTS[rate]
    if column not in table.columns:
        return None
    algorithms, groups, _, _ = rate_matrices(table)
    return _from_table(table, algorithms, groups)[column]


def _fixed(table: pd.DataFrame, rate: str, values: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """The calibrated cells of ``rate`` (:func:`audit.analysis.calibration.calibrated_cells`)
    as a mask of ``values`` (an algorithm's cell only where it holds the calibrated value),
    and their names."""
    cells = calibrated_cells(table)
    cells = cells[cells["rate"] == rate]
    mask = np.zeros(values.shape, dtype=bool)
    if not len(cells):
        return mask, []
    cross = cross_group(table)
    _, groups, _, _ = rate_matrices(table)
    for r in cells.itertuples():
        if values.ndim == 3:  # a cross-group matrix: the pair (group_1, group_2)
            i, j = cross.groups.get_loc(r.group_1), cross.groups.get_loc(r.group_2)
            mask[:, i, j] = values[:, i, j] == r.value
        else:
            k = groups.get_loc(r.cell)
            mask[:, k] = values[:, k] == r.value
    return mask, [str(c) for c in cells["cell"]]


def redraw_plan(
    table: pd.DataFrame, *, method: str = "auto", floor_lower: float | None = FLOOR_LOWER
) -> tuple[dict | None, str]:
    """How the one rate of ``table`` is redrawn (``method`` ``"auto"``, ``"counts"`` or
    ``"transcription"``), or None and why it cannot be.

    Returns
    -------
    (plan, reason)
        ``plan`` holds ``rate``, ``values`` (the matrix redrawn: the pair matrices of a
        cross-group table), ``pairs`` (whether it is), ``method`` (``"counts"``,
        ``"grid"`` or ``"decimals"``) and its parameters, ``fixed`` (the calibrated
        cells' mask) and ``fixed_cells`` (their names); ``reason`` is "" with a plan.
    """
    (rate,) = available_rates(table)
    cross = cross_group(table)
    pairs = cross is not None and rate == "fmr"
    algorithms, groups, fmr, fnmr = rate_matrices(table)
    values = cross.fmr if pairs else (fmr if rate == "fmr" else fnmr)
    fixed, fixed_cells = _fixed(table, rate, values)
    plan = {"rate": rate, "values": values, "pairs": pairs, "fixed": fixed}
    plan["fixed_cells"] = fixed_cells
    counts = rate_counts(table, rate)
    column, kind = RATE_COUNTS[rate]
    if method == "counts" or (method == "auto" and counts is not None):
        if counts is None:
            raise InputError(NO_RATE_COUNTS.format(column=column, rate=rate.upper(), kind=kind))
        return {**plan, "method": "counts", "counts": counts}, ""
    cells = values[~np.isnan(values)]
    step = decade_grid(cells)
    reason = ""
    if np.isfinite(step):
        floor = floor_of(cells)
        if (cells == 0).any():
            reason = f"{int((cells == 0).sum())} of them are 0, below any floor"
        elif not np.isfinite(floor):
            reason = (
                f"they have no floor (no smallest positive {rate.upper()} is shared by at "
                f"least {FLOOR_FRACTION:.0%} of the cells and by two)"
            )
        elif floor_lower is not None and not floor_lower <= floor:
            reason = f"their floor {floor!r} is below floor_lower {floor_lower!r}"
        if not reason or method == "transcription":
            floor = floor if np.isfinite(floor) else float(cells[cells > 0].min())
            return {**plan, "method": "grid", "step": step, "floor": floor}, ""
        reason = GRID_UNUSABLE.format(rate=rate.upper(), step=step, reason=reason)
    decimals = fixed_decimals(cells)
    if decimals is not None and not reason:
        return {**plan, "method": "decimals", "decimals": decimals}, ""
    if not reason:
        from audit.analysis.quality import MAX_DECIMALS

        reason = NOT_PRINTED.format(rate=rate.upper(), decimals=MAX_DECIMALS)
    if method == "transcription":
        raise InputError(reason[:1].upper() + reason[1:])
    return None, NO_ONE_RATE.format(column=column, reason=reason)


def redraw(plan: dict, *, n_replicates: int, seed: int, floor_lower=FLOOR_LOWER) -> np.ndarray:
    """The replicates of ``plan``'s matrix (:func:`redraw_plan`)."""
    common = {"n_replicates": n_replicates, "seed": seed, "fixed": plan["fixed"]}
    if plan["method"] == "counts":
        return binomial_redraws(plan["values"], plan["counts"], **common)
    if plan["method"] == "grid":
        return rounding_redraws(
            plan["values"],
            step=plan["step"],
            floor=plan["floor"],
            floor_lower=floor_lower,
            **common,
        )
    return rounding_redraws(plan["values"], decimals=plan["decimals"], **common)


def redrawn(plan: dict, *, floor_lower=FLOOR_LOWER) -> str:
    """What the redraw of ``plan`` does to each cell, in words (no column names)."""
    rate = plan["rate"].upper()
    each = f"each measured pair's {rate}" if plan["pairs"] else f"each {rate}"
    if plan["method"] == "counts":
        what = (
            f"{each} redrawn as a binomial count of errors over its comparisons, with the "
            "observed rate (comparisons taken as independent)"
        )
    elif plan["method"] == "grid":
        below = "within the floor's own bin" if floor_lower is None else f"down to {floor_lower:g}"
        what = (
            f"{each} redrawn uniformly in log10 within its {plan['step']:g}-decade bin, those "
            f"on the {plan['floor']:g} floor {below}"
        )
    else:
        decimals = plan["decimals"]
        half = f"{0.5 * 10.0**-decimals:.{decimals + 1}f}"
        what = (
            f"{each} redrawn uniformly within half a unit of its last printed decimal "
            f"({decimals} decimals: \N{PLUS-MINUS SIGN}{half})"
        )
    if plan["fixed_cells"]:
        cells = plan["fixed_cells"]
        what += (
            f", the calibrated {'cell' if len(cells) == 1 else 'cells'} {', '.join(cells)} "
            "kept as written (a calibration, not a measurement)"
        )
    return what


def describe(plan: dict, *, n_replicates: int, seed: int, floor_lower=FLOOR_LOWER) -> str:
    """What the redraw of ``plan`` does, in a sentence (without its full stop)."""
    kind = (
        "binomial (parametric) bootstrap" if plan["method"] == "counts" else "transcription redraw"
    )
    what = f"{kind}: {redrawn(plan, floor_lower=floor_lower)}"
    if plan["method"] == "counts":
        what += "; this understates the uncertainty where comparisons share a subject"
    elif plan["method"] == "grid" and floor_lower is not None:
        what += " (a censored value may lie anywhere below the floor)"
    what += f"; {n_replicates} replicates, seed {seed}"
    if plan["method"] != "counts":
        what += ". The intervals are ranges of values consistent with the rounding, not confidence intervals"
    return what


# ------------------------------------------------------------------ the analysis


@ANALYSIS
def one_rate_analysis(
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
):
    """The uncertainty analysis of a table of one rate, and a sentence saying what it did.

    ``measures`` may name rate and cross-group (pairs) measures; the frontier is that of
    ``fairness`` and ``accuracy`` (default: the total of the rate present, as a down-select
    of the table uses, calibrated cells left out: :func:`audit.analysis.pareto.accuracy_weights`).
    Returns ``(result, description)``; ``result`` is None, and ``description`` says why,
    when the table supports no redraw (:func:`redraw_plan`).
    """
    from audit.uncertainty.results import _analyse

    plan, reason = redraw_plan(table, method=method, floor_lower=floor_lower)
    if plan is None:
        return None, reason
    reps = redraw(plan, n_replicates=n_replicates, seed=seed, floor_lower=floor_lower)
    algorithms, groups, _, _ = rate_matrices(table)
    names = list(measures) if measures is not None else None
    if names is None:
        pair_names = measure_names(inputs="pairs") if plan["pairs"] else []
    else:
        pair_names = [n for n in names if _is_pairs(n)]
    rate_names = None if names is None else [n for n in names if not _is_pairs(n)]
    pair_reps = None
    if plan["pairs"]:
        cross = cross_group(table)
        at = cross.groups.get_indexer(groups)
        pair_reps = reps
        rate_reps = np.diagonal(reps, axis1=-2, axis2=-1)[..., at]
        if _is_pairs(fairness) and fairness not in pair_names:
            pair_names.append(fairness)
    else:
        rate_reps = reps
    missing = np.full_like(rate_reps, np.nan)
    fmr_reps, fnmr_reps = (rate_reps, missing) if plan["rate"] == "fmr" else (missing, rate_reps)
    extra = {}
    for name in pair_names:
        spec = get_measure(name) if isinstance(name, str) else name
        point = spec(cross.fmr, zero_division="flag")
        flat = pair_reps.reshape(-1, *pair_reps.shape[-2:])
        shape = pair_reps.shape[:2]
        replicated = spec(flat, zero_division="flag")
        extra[spec.name] = (
            spec.higher_is_fairer,
            MeasureResult(*(np.asarray(getattr(point, f))[None] for f in _PARTS)),
            MeasureResult(*(np.asarray(getattr(replicated, f)).reshape(shape) for f in _PARTS)),
        )
    kind = "parametric" if plan["method"] == "counts" else "transcription"
    params = {
        "seed": seed,
        "redraw": plan["method"],
        "rate": plan["rate"],
        "cross_group": plan["pairs"],
        "fixed_cells": plan["fixed_cells"],
        **({"step": plan["step"], "floor": plan["floor"]} if plan["method"] == "grid" else {}),
        **({"decimals": plan["decimals"]} if plan["method"] == "decimals" else {}),
        "floor_lower": floor_lower if plan["method"] == "grid" else None,
        "resampled": redrawn(plan, floor_lower=floor_lower),
    }
    result = _analyse(
        kind,
        table,
        fmr_reps,
        fnmr_reps,
        measures=rate_names,
        alpha=alpha,
        level=0.95,
        within=5,
        top=10,
        fairness=fairness,
        weights=weights,
        alpha_grid=None,
        params=params,
        extra=extra,
        accuracy=accuracy or default_accuracy(table),
        pairs=pair_reps,
    )
    return result, describe(plan, n_replicates=n_replicates, seed=seed, floor_lower=floor_lower)


_PARTS = ("value", "fmr_term", "fnmr_term", "undefined")


def _is_pairs(measure) -> bool:
    spec = get_measure(measure) if isinstance(measure, str) else measure
    return isinstance(spec, PairMeasure)


__all__ = [
    "binomial_redraws",
    "describe",
    "redrawn",
    "one_rate_analysis",
    "rate_counts",
    "redraw",
    "redraw_plan",
    "rounding_redraws",
]
