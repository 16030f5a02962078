"""Calibrated cells: a rate fixed by how the thresholds were set, not measured.

NIST's FRVT 1:1 demographic tables set each algorithm's threshold so that one
cell has a fixed FMR: white men's FMR is 0.001 for every one of the 240
algorithms.  That number says how the threshold was chosen, nothing about
the algorithm; averaged into a total FMR it pulls every algorithm towards
0.001 alike, and a ratio that divides by it measures the other cells against
the threshold setting.

**The rule** (:func:`calibrated_cells`).  A cell -- a group's rate, or a
measured pair of a cross-group impostor table -- is a calibration of that
rate when

* at least :data:`MIN_ALGORITHMS` algorithms give it, and
* at least :data:`SHARE` of them give it exactly the same value, as written,
  and
* that value is the cell's own: fewer than :data:`ELSEWHERE` of the rate's
  other cells (the other groups, and the other measured pairs of a
  cross-group table) hold it -- a value many cells share is a floor or a
  grid step, which :func:`audit.analysis.quality.data_quality` reports --
  and it lies strictly between 0 and 1 (the rate's bounds).

On Annex 15 no cell qualifies: its most repeated cell, M.White's FMR, sits at
the 1e-5 floor for 114 of 126 algorithms (90%), a value 25% of the other FMR
cells hold too.  On FRVT 1:1 exactly one does: M.White's within-group FMR
(``MW_MW``), 0.001 for 240 of 240 algorithms and in 0.6% of the other cells.

**What it is kept out of.**

* A total of the rate, the accuracy axis of a frontier
  (:func:`audit.analysis.pareto.frontier_frame` leaves the calibrated groups
  out of total FMR or FNMR, through
  :func:`audit.analysis.accuracy.overall_rates`'s ``leave_out``, and says so).
* A ratio whose denominator is the calibrated cell reads "relative to the
  calibrated cell" (:func:`relative_label`): a ratio to a reference group
  that is the calibrated one, and a max/min ratio of the rate (the Inequity
  Rate's FMR term, SER) for the algorithms whose lowest cell is the
  calibrated one (:func:`calibrated_cells` counts them, ``lowest_for``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from audit.tables.crossgroup import cross_group
from audit.tables.layouts import available_rates
from audit.tables.rates import rate_matrices
from audit.validation import RATES_TABLE, validate_params

#: Fewest algorithms for which a repeated value can tell a calibration.
MIN_ALGORITHMS = 10
#: Least share of the algorithms with the same value in a calibrated cell.
SHARE = 0.95
#: A calibrated value is held by fewer than this share of the rate's other cells.
ELSEWHERE = 0.05
#: The label of a ratio whose denominator is a calibrated cell.
RELATIVE = "relative to the calibrated cell"
#: The measures whose value is a max/min ratio of the FMR over the groups (whose
#: denominator is the lowest group's FMR): the Inequity Rate's FMR term and SER.
MIN_RATIO_MEASURES = ("ir", "ser")

CALIBRATED = (
    "{rate} of {cell} is {value:g} for {count} of {total} algorithms: a calibration (the "
    "thresholds were set so), not a measurement"
)
LEFT_OUT = "kept out of total {rate} (a frontier's accuracy axis)"
LOWEST = (
    "it is the lowest {rate} of {lowest} of {total} algorithms, whose max/min {rate} ratios "
    "(the Inequity Rate's {rate} term, SER) are {relative}"
)
NONE_FOUND = (
    "no cell holds one value of its own for {share:.0%} of the algorithms: no calibration found"
)
TOO_FEW = "fewer than {count} algorithms: calibration is not looked for"

_COLUMNS = [
    "rate",
    "kind",
    "cell",
    "group_1",
    "group_2",
    "value",
    "algorithms",
    "total_algorithms",
    "share",
    "lowest_for",
    "sentence",
]


def _modal(values: np.ndarray) -> tuple[float, int]:
    """The most common value of a vector (ignoring NaN) and how many times it occurs."""
    present = values[~np.isnan(values)]
    if not len(present):
        return np.nan, 0
    unique, counts = np.unique(present, return_counts=True)
    at = int(np.argmax(counts))
    return float(unique[at]), int(counts[at])


def _is_calibration(value: float, count: int, total: int, elsewhere: float) -> bool:
    return (
        total >= MIN_ALGORITHMS
        and count >= SHARE * total
        and np.isfinite(value)
        and 0.0 < value < 1.0
        and elsewhere < ELSEWHERE
    )


@validate_params(table=RATES_TABLE)
def calibrated_cells(table: pd.DataFrame) -> pd.DataFrame:
    """The calibrated cells of a rates table (the rule is in the module docstring).

    Returns
    -------
    pandas.DataFrame
        One row per calibrated cell: ``rate`` (``fmr``/``fnmr``), ``kind``
        (``group``: a group's rate, as every measure reads it; ``pair``: a
        cross-group pair of a cross-group table), ``cell`` (the group, or
        ``a|b``), ``group_1``/``group_2`` (the pair's sides; the group twice
        for a group), ``value``, ``algorithms`` (with that value),
        ``total_algorithms``, ``share``, ``lowest_for`` (for a group: the
        algorithms whose lowest group rate it is, the denominator of their
        max/min ratio; NA for a pair) and ``sentence``.  Empty (with the
        columns) when there is none; ``attrs["sentence"]`` says so or sums
        them up.

    Examples
    --------
    >>> from audit.tables.rates import read_rates
    >>> fmr = {"F": [2e-3 + k * 1e-4 for k in range(12)], "M": [1e-3] * 12}
    >>> t = read_rates(pd.DataFrame({"Algorithm": [f"a{k}" for k in range(12)],
    ...                              "FMR.F": fmr["F"], "FMR.M": fmr["M"]}))
    >>> calibrated_cells(t)[["rate", "cell", "value", "algorithms", "lowest_for"]]
      rate cell  value  algorithms  lowest_for
    0  fmr    M  0.001          12          12
    """
    algorithms, groups, fmr, fnmr = rate_matrices(table)
    total = len(algorithms)
    rows = []
    cross = cross_group(table)
    for rate, matrix in (("fmr", fmr), ("fnmr", fnmr)):
        if rate not in available_rates(table) or total < MIN_ALGORITHMS:
            continue
        cells = [(g, g, "group", matrix[:, k]) for k, g in enumerate(groups)]
        if rate == "fmr" and cross is not None:
            measured = cross.measured & ~np.eye(len(cross.groups), dtype=bool)
            for i, j in zip(*np.nonzero(measured), strict=True):
                a, b = cross.groups[i], cross.groups[j]
                cells.append((a, b, "pair", cross.fmr[:, i, j]))
        every = np.column_stack([values for *_, values in cells])  # (algorithms, cells)
        lowest_rate = np.nanmin(matrix, axis=1)
        for k, (a, b, kind, values) in enumerate(cells):
            value, count = _modal(values)
            others = np.delete(every, k, axis=1)
            others = others[~np.isnan(others)]
            elsewhere = float((others == value).mean()) if others.size else 0.0
            if not _is_calibration(value, count, total, elsewhere):
                continue
            lowest = int((values == lowest_rate).sum()) if kind == "group" else pd.NA
            cell = a if kind == "group" else f"{a}|{b}"
            sentence = CALIBRATED.format(
                rate=rate.upper(), cell=cell, value=value, count=count, total=total
            )
            sentence += "; " + LEFT_OUT.format(rate=rate.upper())
            if kind == "group" and lowest:
                sentence += "; " + LOWEST.format(
                    rate=rate.upper(), lowest=lowest, total=total, relative=RELATIVE
                )
            rows.append(
                dict(
                    rate=rate,
                    kind=kind,
                    cell=cell,
                    group_1=a,
                    group_2=b,
                    value=value,
                    algorithms=count,
                    total_algorithms=total,
                    share=count / total,
                    lowest_for=lowest,
                    sentence=sentence,
                )
            )
    out = pd.DataFrame(rows, columns=_COLUMNS)
    out["lowest_for"] = out["lowest_for"].astype("Int64")
    for column in ("rate", "kind", "cell", "group_1", "group_2", "sentence"):
        out[column] = out[column].astype("string")
    if total < MIN_ALGORITHMS:
        out.attrs["sentence"] = TOO_FEW.format(count=MIN_ALGORITHMS)
    elif len(out):
        out.attrs["sentence"] = ". ".join(str(s)[:1].upper() + str(s)[1:] for s in out["sentence"])
    else:
        out.attrs["sentence"] = NONE_FOUND.format(share=SHARE)
    return out


def label_ratios(
    values: pd.DataFrame, table: pd.DataFrame, cells: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Measure values with the max/min FMR ratios that divide by a calibrated cell labelled.

    For each row of a measure of :data:`MIN_RATIO_MEASURES` whose algorithm's
    lowest group FMR -- the denominator of its max/min FMR ratio -- is a
    calibrated cell's, the column ``calibration`` reads ``"FMR term relative
    to the calibrated cell M.White"``; every other row reads ``""``.  A table
    without a calibrated FMR cell is returned unchanged (no column added).

    Parameters
    ----------
    values
        One row per (measure, algorithm): :func:`audit.measures.registry.evaluate_many`.
    table
        The rates table the values were computed on.
    cells
        Its :func:`calibrated_cells` (computed when not given).
    """
    cells = calibrated_cells(table) if cells is None else cells
    cells = cells[(cells["rate"] == "fmr") & (cells["kind"] == "group")]
    if not len(cells):
        return values
    algorithms, groups, fmr, _ = rate_matrices(table)
    lowest = np.nanmin(fmr, axis=1)
    label = pd.Series("", index=algorithms.astype(str), dtype=object)
    for cell in cells["cell"]:
        at_minimum = fmr[:, groups.get_loc(cell)] == lowest
        label[at_minimum & (label == "").to_numpy()] = f"FMR term {RELATIVE} {cell}"
    out = values.copy()
    ratio = out["measure"].isin(MIN_RATIO_MEASURES).to_numpy()
    named = out["algorithm"].astype(str).map(label).fillna("").to_numpy(dtype=object)
    out["calibration"] = pd.array(np.where(ratio, named, ""), dtype="string")
    return out


def relative_label(label: str) -> str:
    """A ratio's label when its denominator is a calibrated cell.

    >>> relative_label("FMR ratio to M.White")
    'FMR ratio to M.White (relative to the calibrated cell)'
    """
    return f"{label} ({RELATIVE})"


__all__ = [
    "MIN_ALGORITHMS",
    "RELATIVE",
    "SHARE",
    "calibrated_cells",
    "label_ratios",
    "relative_label",
]
