"""Data-quality audit of a rates table, part of every FFMC report.

A fairness measure can only be as good as the rates it reads. The Annex 15
transcription, for instance, prints FMR on a 0.1-decade grid (10^(k/10)) and
floors it at 1e-5: a third of the FMR cells sit on the floor, so the true
rate of those groups is only known to be at most 1e-5, and any ratio of FMRs
(IR, SER, NRB) is censored. :func:`data_quality` reports such facts;
:func:`floor_sensitivity` measures, for every registered measure, how much
its values move when the floored cells are pushed further down -- which
measures the floor actually affects.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from audit.analysis.text import count
from audit.measures.onesided import NOT_APPLICABLE, applicability, one_term_inputs
from audit.measures.registry import Measure, get_measure, measure_names
from audit.tables.layouts import RATES, available_rates
from audit.tables.rates import rate_matrices
from audit.validation import RATES_TABLE, MeasureRefs, Real, validate_params

#: A minimum value is reported as a floor when at least this fraction of cells sit on it.
FLOOR_FRACTION = 0.05
#: Grid steps (in decades) tested for quantisation.
GRID_STEPS = (0.1, 0.05, 0.2, 0.25, 0.5, 1.0)
GRID_TOLERANCE = 1e-6
MAX_DECIMALS = 8
#: Checks of :func:`data_quality` that flag the table when they find something (a value).
FLAGGED_CHECKS = ("decade_grid", "decimals", "floor")


def _grid_step(values: np.ndarray) -> tuple[float, float]:
    """The coarsest decade grid holding every positive value, and the fraction it holds."""
    positive = values[values > 0]
    if len(positive) == 0:
        return np.nan, np.nan
    exponents = np.log10(positive)
    best = (np.nan, 0.0)
    for step in sorted(GRID_STEPS, reverse=True):
        k = exponents / step
        on = float(np.mean(np.abs(k - np.round(k)) < GRID_TOLERANCE * max(1.0, 1.0 / step)))
        if on == 1.0:
            return step, on
        if on > best[1]:
            best = (step, on)
    return best


def decade_grid(values) -> float:
    """The coarsest decade grid (step in decades) holding every positive value, or NaN.

    >>> decade_grid([1e-5, 10 ** -4.9, 10 ** -3.3])
    0.1
    """
    step, share = _grid_step(np.asarray(values, dtype="float64").ravel())
    return float(step) if share == 1.0 else float("nan")


def _decimals(values: np.ndarray) -> tuple[float, int]:
    """The decimals most cells are printed with, and how many cells need more.

    NaN (and 0 cells) when most values need more than :data:`MAX_DECIMALS`.
    """
    needed = np.full(values.shape, MAX_DECIMALS + 1)
    for d in range(MAX_DECIMALS, -1, -1):
        exact = np.isclose(values, np.round(values, d), rtol=0.0, atol=1e-12)
        needed = np.where(exact, d, needed)
    counts = np.bincount(needed.ravel(), minlength=MAX_DECIMALS + 2)
    mode = int(np.argmax(counts))
    if mode > MAX_DECIMALS:
        return np.nan, 0
    return float(mode), int((needed > mode).sum())


def fixed_decimals(values) -> int | None:
    """The fewest decimals that write every value exactly (as :func:`data_quality`
    counts them), or None when some value needs more than :data:`MAX_DECIMALS`: the
    last printed decimal of a transcribed rate.

    >>> fixed_decimals([0.0044, 0.001, 0.0]), fixed_decimals([0.0044, 1 / 3])
    (4, None)
    """
    values = np.asarray(values, dtype="float64").ravel()
    values = values[~np.isnan(values)]
    if not len(values):
        return None
    for d in range(MAX_DECIMALS + 1):
        if np.isclose(values, np.round(values, d), rtol=0.0, atol=1e-12).all():
            return d
    return None


@validate_params(
    "alpha",
    measures=MeasureRefs(empty=True),
    factor=Real(1, closed="neither"),
    rtol=Real(0),
    table=RATES_TABLE,
)
def floor_sensitivity(
    table: pd.DataFrame,
    measures=None,
    *,
    factor: float = 10.0,
    alpha: float = 0.5,
    rtol: float = 0.01,
) -> pd.DataFrame:
    """How much each measure moves when the floored cells of each rate are lowered.

    The floor of a rate is its minimum positive value when at least
    :data:`FLOOR_FRACTION` of its cells sit on it. Every floored cell is
    divided by ``factor`` (a true rate that could lie anywhere below the
    floor), and the measure recomputed at ``alpha``.

    Returns
    -------
    pandas.DataFrame
        One row per (measure, rate) with a floor: ``floor``, ``n_cells``,
        ``fraction_changed`` (algorithms whose value moves by more than
        ``rtol`` relative), ``median_change`` and ``max_change`` (relative),
        ``affected`` (``fraction_changed > 0``): the measure's value depends
        on where below the floor the true rates lie.

    Examples
    --------
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"algorithm": ["a"] * 3, "group": ["F", "M", "X"],
    ...                              "fmr": [1e-5, 1e-5, 4e-5], "fnmr": [0.02, 0.03, 0.04]}))
    >>> floor_sensitivity(t, ["fdr", "ir"])[["measure", "affected"]].to_string(index=False)
    'measure  affected\\n    fdr     False\\n     ir      True'
    """
    _, _, fmr, fnmr = rate_matrices(table)
    if measures is None:
        chosen = [get_measure(n) for n in measure_names(inputs="rates")]
    else:
        chosen = [m if isinstance(m, Measure) else get_measure(m) for m in measures]
    available = available_rates(table)
    if available != RATES:  # one-sided: the measures that apply, the absent rate equal
        chosen = [m for m in chosen if applicability(m, available)[0] != NOT_APPLICABLE]
        fmr, fnmr, _ = one_term_inputs(fmr, fnmr, available)
    rows = []
    for rate, matrix in (("fmr", fmr), ("fnmr", fnmr)):
        if rate not in available:
            continue
        floor, on_floor = _floor(matrix)
        if not np.isfinite(floor):
            continue
        lowered = np.where(on_floor, matrix / factor, matrix)
        for m in chosen:
            new_fmr, new_fnmr = (lowered, fnmr) if rate == "fmr" else (fmr, lowered)
            # undefined values are flagged, and the change is computed on defined ones only
            before = m(fmr, fnmr, alpha=alpha, zero_division="flag")
            after = m(new_fmr, new_fnmr, alpha=alpha, zero_division="flag")
            before = np.where(before.undefined, np.nan, before.value)
            after = np.where(after.undefined, np.nan, after.value)
            with np.errstate(divide="ignore", invalid="ignore"):
                change = np.abs(after - before) / np.where(before == 0, 1.0, np.abs(before))
            both = np.isfinite(change)
            rows.append(
                {
                    "measure": m.name,
                    "rate": rate,
                    "floor": floor,
                    "n_cells": int(on_floor.sum()),
                    "fraction_changed": float(np.mean(change[both] > rtol))
                    if both.any()
                    else np.nan,
                    "median_change": float(np.median(change[both])) if both.any() else np.nan,
                    "max_change": float(np.max(change[both])) if both.any() else np.nan,
                }
            )
    out = pd.DataFrame(
        rows,
        columns=[
            "measure",
            "rate",
            "floor",
            "n_cells",
            "fraction_changed",
            "median_change",
            "max_change",
        ],
    )
    out["affected"] = out["fraction_changed"] > 0
    for column in ("measure", "rate"):
        out[column] = out[column].astype("string")
    out.attrs.update({"factor": factor, "alpha": alpha, "rtol": rtol})
    return out


def _floor(matrix: np.ndarray) -> tuple[float, np.ndarray]:
    positive = matrix[matrix > 0]
    if len(positive) == 0:
        return np.nan, np.zeros_like(matrix, dtype=bool)
    low = positive.min()
    on = matrix == low
    if on.sum() < FLOOR_FRACTION * matrix.size or on.sum() < 2:
        return np.nan, np.zeros_like(matrix, dtype=bool)
    return float(low), on


def floor_of(values) -> float:
    """The floor of a rate: its minimum positive value when enough cells share it, else NaN.

    A floor is the smallest positive value held by at least
    :data:`FLOOR_FRACTION` of the cells and by at least two of them (the
    Annex 15 FMR floor 1e-5, for instance); the rule :func:`data_quality` and
    :func:`floor_sensitivity` use.

    >>> floor_of([1e-5, 1e-5, 10 ** -4.9, 1e-4])
    1e-05
    >>> floor_of([1e-5, 10 ** -4.9, 1e-4])
    nan
    """
    return _floor(np.asarray(values, dtype="float64").ravel())[0]


@validate_params(
    measures=MeasureRefs(empty=True), factor=Real(1, closed="neither"), table=RATES_TABLE
)
def data_quality(table: pd.DataFrame, measures=None, *, factor: float = 10.0) -> pd.DataFrame:
    """Facts about a rates table that bear on the measures computed from it.

    For each rate (FMR, FNMR): the number of distinct values, the decade
    grid the values sit on (quantisation), the decimals they are printed
    with, the floor (a minimum value many cells share), and the cells at
    exactly 0 and exactly 1. Each finding names the measures it affects:
    for the floor, the measures :func:`floor_sensitivity` finds affected;
    for zeros, the measures not declared ``defined_at_zero`` that read the
    rate (their ``needs``).  A one-sided table has rows for its one rate.

    Returns
    -------
    pandas.DataFrame
        One row per (rate, check): ``rate``, ``check``, ``value`` (the grid
        step, decimals, floor value, ... or NaN), ``cells`` (cells concerned),
        ``total_cells``, ``algorithms`` (algorithms with such a cell; for
    ``decimals``, the cells printed with more decimals than most),
        ``total_algorithms``, ``detail`` (a sentence), ``affects`` (a
        comma-separated list of measure names, possibly empty) and
        ``flagged``: the row reports something a reader of the measures
        should know (:data:`FLAGGED_CHECKS` found -- a decade grid, a fixed
        number of decimals, a floor -- or a cell at exactly 0 or 1), as
        opposed to a count or a check that found nothing.

    Examples
    --------
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"algorithm": ["a", "a"], "group": ["F", "M"],
    ...                              "fmr": [1e-5, 1e-5], "fnmr": [0.0, 0.5]}))
    >>> zeros = data_quality(t, ["fdr", "ir"]).query("check == 'zero'")
    >>> zeros.set_index("rate")["affects"].to_dict()
    {'fmr': '', 'fnmr': 'ir'}
    """
    algorithms, _, fmr, fnmr = rate_matrices(table)
    if measures is None:
        chosen = [get_measure(n) for n in measure_names(inputs="rates")]
    else:
        chosen = [m if isinstance(m, Measure) else get_measure(m) for m in measures]
    sensitivity = floor_sensitivity(table, chosen, factor=factor)
    not_at_zero = {
        rate: ", ".join(
            m.name
            for m in chosen
            if m.properties.get("defined_at_zero") is False and rate in m.needs
        )
        for rate in RATES
    }
    n_alg = len(algorithms)
    rows = []
    for rate, matrix in (("fmr", fmr), ("fnmr", fnmr)):
        if rate not in available_rates(table):
            continue
        total = matrix.size
        label = rate.upper()
        distinct = np.unique(matrix)
        rows.append(
            dict(
                rate=rate,
                check="distinct_values",
                value=float(len(distinct)),
                cells=total,
                algorithms=n_alg,
                detail=f"{len(distinct)} distinct {label} values in {total} cells",
                affects="",
            )
        )
        step, on = _grid_step(matrix)
        if np.isfinite(step) and on == 1.0:
            detail = (
                f"every positive {label} lies on a {step:g}-decade grid (10^(k*{step:g})): "
                "the rates are quantised, so many algorithms tie"
            )
        else:
            detail = f"no decade grid holds every positive {label} value"
            step = np.nan
        n_on = int((matrix > 0).sum()) if np.isfinite(step) else 0
        rows.append(
            dict(
                rate=rate,
                check="decade_grid",
                value=step,
                cells=n_on,
                algorithms=n_alg if n_on else 0,
                detail=detail,
                affects="",
            )
        )
        decimals, n_more = _decimals(matrix)
        if np.isfinite(decimals):
            more = np.isclose(matrix, np.round(matrix, int(decimals)), rtol=0.0, atol=1e-12)
            detail = f"{label} printed with {int(decimals)} decimals" + (
                f", except {count(n_more, 'cell')} with more" if n_more else ""
            )
            rows.append(
                dict(
                    rate=rate,
                    check="decimals",
                    value=decimals,
                    cells=n_more,
                    algorithms=int((~more).any(axis=1).sum()),
                    detail=detail,
                    affects="",
                )
            )
        else:
            rows.append(
                dict(
                    rate=rate,
                    check="decimals",
                    value=np.nan,
                    cells=0,
                    algorithms=0,
                    detail=f"{label} not printed with a fixed number of decimals",
                    affects="",
                )
            )
        floor, on_floor = _floor(matrix)
        censored = sensitivity[(sensitivity["rate"] == rate) & sensitivity["affected"]]
        if np.isfinite(floor):
            n_floor_alg = int(on_floor.any(axis=1).sum())
            detail = (
                f"{int(on_floor.sum())} of {total} {label} cells sit on the floor {floor:g} "
                f"({n_floor_alg} of {n_alg} algorithms have a floored group): the true rate is "
                f"at most {floor:g}, so ratios of {label}s are censored"
            )
        else:
            n_floor_alg = 0
            detail = (
                f"no floor: no minimum {label} value is shared by {FLOOR_FRACTION:.0%} of the cells"
            )
        rows.append(
            dict(
                rate=rate,
                check="floor",
                value=floor,
                cells=int(on_floor.sum()),
                algorithms=n_floor_alg,
                detail=detail,
                affects=", ".join(censored["measure"].tolist()),
            )
        )
        for check, target in (("zero", 0.0), ("one", 1.0)):
            hit = matrix == target
            rows.append(
                dict(
                    rate=rate,
                    check=check,
                    value=target,
                    cells=int(hit.sum()),
                    algorithms=int(hit.any(axis=1).sum()),
                    detail=f"{count(hit.sum(), f'{label} cell')} "
                    f"{'is' if hit.sum() == 1 else 'are'} exactly {target:g}",
                    affects=not_at_zero[rate] if (check == "zero" and hit.any()) else "",
                )
            )
    out = pd.DataFrame(rows)
    out.insert(4, "total_cells", fmr.size)
    out.insert(6, "total_algorithms", n_alg)
    for column in ("rate", "check", "detail", "affects"):
        out[column] = out[column].astype("string")
    found = out["check"].isin(FLAGGED_CHECKS) & out["value"].notna()
    hit = out["check"].isin(["zero", "one"]) & (out["cells"] > 0)
    out["flagged"] = (found | hit).astype(bool)
    out.attrs["source"] = table.attrs.get("source", "")
    return out
