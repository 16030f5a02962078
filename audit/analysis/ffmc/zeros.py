"""FFMC.3: calculable when a group (or every group) shows no errors."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from audit.analysis.ffmc.cells import _cells_view, _pairs_of
from audit.analysis.ffmc.common import (
    CHUNK_VALUES,
    FFMC3_ALPHA,
    CriterionResult,
    _call,
    _measure,
)
from audit.measures.contract import PairMeasure
from audit.measures.registry import Measure
from audit.tables.crossgroup import CrossGroupRates
from audit.tables.rates import rate_matrices
from audit.validation import RATES_TABLE, MeasureRef, validate_params

FFMC3_CASES = ("one_fnmr_zero", "one_fmr_zero", "all_fnmr_zero", "all_fmr_zero", "all_zero")


def _zero_cases(fmr: np.ndarray, fnmr: np.ndarray) -> Iterable[tuple[str, np.ndarray, np.ndarray]]:
    n_groups = fmr.shape[-1]
    for g in range(n_groups):
        f = fnmr.copy()
        f[..., g] = 0.0
        yield "one_fnmr_zero", fmr, f
    for g in range(n_groups):
        f = fmr.copy()
        f[..., g] = 0.0
        yield "one_fmr_zero", f, fnmr
    yield "all_fnmr_zero", fmr, np.zeros_like(fnmr)
    yield "all_fmr_zero", np.zeros_like(fmr), fnmr
    yield "all_zero", np.zeros_like(fmr), np.zeros_like(fnmr)


@validate_params("alpha", measure=MeasureRef(), table=RATES_TABLE)
def ffmc3(
    table: pd.DataFrame, measure: str | Measure, *, alpha: float = FFMC3_ALPHA
) -> CriterionResult:
    """FFMC.3: is the measure still a number when a group (or every group) has no errors?

    Returns
    -------
    CriterionResult
        ``detail``: one row per case of :data:`FFMC3_CASES` with ``n`` (real
        algorithms x groups zeroed), ``n_finite``, ``n_flagged`` (values the
        measure flagged undefined), ``n_computed`` (finite and not flagged),
        ``n_warnings``, ``fraction_finite``, ``fraction_computed``;
        ``summary``: ``finite_<case>`` and ``computed_<case>`` per case.
    """
    m = _measure(measure)
    if isinstance(m, PairMeasure):
        return _pair_ffmc3(m, _pairs_of(table, m))
    _, _, fmr, fnmr = rate_matrices(table)
    return _ffmc3(m, fmr, fnmr, alpha)


def _ffmc3_counts(m: Measure, fmr: np.ndarray, fnmr: np.ndarray, alpha: float) -> dict:
    """FFMC.3's counts per case for rates of shape (..., n_algorithms, n_groups), per
    leading batch (e.g. replicate)."""
    batch, n_groups = fmr.shape[:-2], fmr.shape[-1]
    counts = {
        case: dict(n=0, n_finite=0, n_flagged=0, n_computed=0, n_warnings=0) for case in FFMC3_CASES
    }
    flat = (-1, n_groups)
    for case, f, g in _zero_cases(fmr.reshape(flat), fnmr.reshape(flat)):
        result, n_warn = _call(m, f, g, alpha)
        value = np.asarray(result.value, dtype="float64").reshape(fmr.shape[:-1])
        flagged = np.asarray(result.undefined, dtype=bool).reshape(fmr.shape[:-1])
        finite = np.isfinite(value)
        c = counts[case]
        c["n"] += value.shape[-1]
        c["n_finite"] += finite.sum(axis=-1)
        c["n_flagged"] += flagged.sum(axis=-1)
        c["n_computed"] += (finite & ~flagged).sum(axis=-1)
        c["n_warnings"] += n_warn
    one = [counts[case] for case in ("one_fnmr_zero", "one_fmr_zero")]
    counts["passed"] = np.logical_and.reduce(
        [np.broadcast_to(c["n_computed"] == c["n"], batch) for c in one]
    )
    return counts


def _ffmc3(m: Measure, fmr: np.ndarray, fnmr: np.ndarray, alpha: float) -> CriterionResult:
    """:func:`ffmc3` on the rate matrices of a table."""
    counts = _ffmc3_counts(m, fmr, fnmr, alpha)
    passed = bool(counts.pop("passed"))
    counts = {case: {k: int(v) for k, v in c.items()} for case, c in counts.items()}
    detail = pd.DataFrame([{"case": case, **c} for case, c in counts.items()])
    detail["case"] = detail["case"].astype("string")
    detail["fraction_finite"] = detail["n_finite"] / detail["n"]
    detail["fraction_computed"] = detail["n_computed"] / detail["n"]
    by_case = detail.set_index("case")
    summary: dict[str, float] = {"alpha": float(alpha)}
    for case in FFMC3_CASES:
        summary[f"finite_{case}"] = float(by_case.loc[case, "fraction_finite"])
        summary[f"computed_{case}"] = float(by_case.loc[case, "fraction_computed"])
    all_zero = by_case.loc["all_zero"]
    if all_zero["n_finite"] == all_zero["n"] and all_zero["n_flagged"] > 0:
        edge = (
            f"all groups at 0: finite only by convention ({int(all_zero['n_flagged'])} of "
            f"{int(all_zero['n'])} flagged undefined: {m.undefined})"
        )
    else:
        edge = (
            f"all groups at 0: {summary['finite_all_zero']:.0%} finite, "
            f"{summary['computed_all_zero']:.0%} computed by the formula"
        )
    evidence = (
        f"finite with one group's FNMR at 0: {summary['finite_one_fnmr_zero']:.1%}, "
        f"one group's FMR at 0: {summary['finite_one_fmr_zero']:.1%}; {edge}"
    )
    return CriterionResult(m.name, "FFMC.3", passed, evidence, summary, detail)


PAIR_CASES = ("one_within_zero", "one_cross_zero", "all_within_zero", "all_cross_zero", "all_zero")


def _pair_zero_cases(pairs: np.ndarray) -> Iterable[tuple[str, np.ndarray]]:
    """FFMC.3's cases for matrices of shape (n_algorithms, n, n): a case that zeroes each
    of several cells in turn comes as stacks of matrices, at most :data:`CHUNK_VALUES`
    values at a time."""
    n = pairs.shape[-1]
    measured = ~np.isnan(pairs[0]) if len(pairs) else np.ones((n, n), dtype=bool)
    eye = np.eye(n, dtype=bool)
    step = max(1, CHUNK_VALUES // max(1, pairs.size))
    for case, cells in (("one_within_zero", eye), ("one_cross_zero", ~eye)):
        i, j = np.nonzero(cells & measured)
        if len(i) == 0:
            yield case, pairs[:0]
        for start in range(0, len(i), step):
            rows, columns = i[start : start + step], j[start : start + step]
            stacked = np.repeat(pairs[None], len(rows), axis=0)
            stacked[np.arange(len(rows)), :, rows, columns] = 0.0
            yield case, stacked.reshape(-1, n, n)
    for case, cells in (("all_within_zero", eye), ("all_cross_zero", ~eye), ("all_zero", None)):
        zeroed = pairs.copy()
        zeroed[:, measured if cells is None else cells & measured] = 0.0
        yield case, zeroed


def _pair_ffmc3_counts(m: PairMeasure, pairs: np.ndarray) -> dict:
    """FFMC.3's counts per case for matrices of shape (..., n_algorithms, n, n), per leading
    batch (e.g. replicate), and the verdict ``passed`` (every one-pair case computed by
    the formula)."""
    pairs = np.asarray(pairs, dtype="float64")
    batch, n = pairs.shape[:-3], pairs.shape[-1]
    view = _cells_view(m)
    counts = {
        case: dict(n=0, n_finite=0, n_flagged=0, n_computed=0, n_warnings=0) for case in PAIR_CASES
    }
    flat = pairs.reshape(-1, n, n)  # the batches' algorithms one after another
    per_batch = flat.shape[0] // max(1, int(np.prod(batch)))
    for case, stacked in _pair_zero_cases(flat):
        if not len(stacked):  # no cell of this kind is measured
            continue
        cells = stacked.reshape(len(stacked), -1)
        result, n_warnings = _call(view, cells, np.full_like(cells, 0.5), FFMC3_ALPHA)
        # the cases of a chunk come as (cells zeroed, batch x algorithms): back per batch
        shape = (-1, *batch, per_batch)
        value = np.asarray(result.value, dtype="float64").reshape(shape)
        flagged = np.asarray(result.undefined, dtype=bool).reshape(shape)
        finite = np.isfinite(value)
        c = counts[case]
        c["n"] += value.shape[0] * value.shape[-1]
        c["n_finite"] += finite.sum(axis=(0, -1))
        c["n_flagged"] += flagged.sum(axis=(0, -1))
        c["n_computed"] += (finite & ~flagged).sum(axis=(0, -1))
        c["n_warnings"] += int(n_warnings)
    one = [counts[case] for case in ("one_within_zero", "one_cross_zero")]
    counts["passed"] = np.logical_and.reduce(
        [np.broadcast_to(c["n_computed"] == c["n"], batch) for c in one]
    )
    return counts


def _pair_ffmc3(m: PairMeasure, cross: CrossGroupRates) -> CriterionResult:
    """FFMC.3 of a pairs measure: is it still a number when a pair (or every pair of a
    kind) shows no false match?"""
    counts = _pair_ffmc3_counts(m, cross.fmr)
    counts.pop("passed")
    counts = {case: {k: int(v) for k, v in c.items()} for case, c in counts.items()}
    rows = [{"case": case, **c} for case, c in counts.items()]
    detail = pd.DataFrame(rows)
    detail["case"] = detail["case"].astype("string")
    with np.errstate(invalid="ignore", divide="ignore"):
        detail["fraction_finite"] = detail["n_finite"] / detail["n"]
        detail["fraction_computed"] = detail["n_computed"] / detail["n"]
    by_case = detail.set_index("case")
    summary: dict[str, float] = {}
    for case in PAIR_CASES:
        summary[f"finite_{case}"] = float(by_case.loc[case, "fraction_finite"])
        summary[f"computed_{case}"] = float(by_case.loc[case, "fraction_computed"])
    one = by_case.loc[["one_within_zero", "one_cross_zero"]]
    passed = bool((one["n_computed"] == one["n"]).all())

    def edge(case: str, words: str) -> str:
        row = by_case.loc[case]
        if row["n"] and row["n_finite"] == row["n"] and row["n_flagged"] > 0:
            return f"{words}: finite only by convention ({m.undefined})"
        return f"{words}: {summary[f'finite_{case}']:.0%} finite"

    evidence = (
        f"computed by the formula with one within-group pair's FMR at 0: "
        f"{summary['computed_one_within_zero']:.1%}, one cross-group pair's: "
        f"{summary['computed_one_cross_zero']:.1%}; "
        + "; ".join(
            edge(case, words)
            for case, words in (
                ("all_within_zero", "every within-group pair at 0"),
                ("all_cross_zero", "every cross-group pair at 0"),
                ("all_zero", "every pair at 0"),
            )
        )
    )
    return CriterionResult(m.name, "FFMC.3", passed, evidence, summary, detail)
