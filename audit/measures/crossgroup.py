"""Measures of the cross-group impostor FMRs: one (enrolment x probe) matrix per algorithm.

NISTIR 8280 (Grother, Ngan & Hanaoka 2019) reports the FMR of impostor
comparisons for every pair of demographic groups as heat maps, and finds
impostors of the same sex, race or age false-matching more often than
impostors from another group; its matrices are "not quite symmetric because
images in the enrollment and verification sets are different".  The report
draws the matrices; it defines no number that sums them up.  The three
summaries here are ours, each a plain reading of what the heat maps show:

* :func:`within_cross_ratio`: how many times the mean within-group FMR
  exceeds the mean cross-group FMR (or the reverse);
* :func:`fmr_asymmetry`: the largest FMR(a, b) / FMR(b, a) over the pairs of
  groups;
* :func:`cell_gini`: GARBE's A term (Howard et al. eq. 7, the
  n/(n-1)-corrected Gini) over every cell of the matrix.

Each is a pure function of an array ``fmr_pairs`` of shape (n_algorithms,
n_groups, n_groups): ``fmr_pairs[k, i, j]`` is algorithm k's FMR over
impostor comparisons enrolled in group i and probed from group j, NaN where
the pair was not measured (the same pairs for every algorithm).  The
per-group and per-pair numbers behind the first two are
:func:`within_cross_table` and :func:`asymmetry_table`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from audit.exceptions import InputError
from audit.measures.kernels import (
    TOO_FEW_GROUPS,
    MeasureResult,
    gini,
    report_undefined,
)
from audit.tables.crossgroup import CrossGroupRates, cross_group
from audit.validation import validate_params

NISTIR_8280 = "Grother, Ngan & Hanaoka, NISTIR 8280 (2019), FRVT Part 3: Demographic Effects"

BAD_SHAPE = "fmr_pairs must have shape (n_algorithms, n_groups, n_groups), got {shape}"
UNEVEN = (
    "fmr_pairs: the pairs not measured (NaN) must be the same for every algorithm; "
    "algorithm {algorithm} differs from algorithm 0"
)
OUT_OF_RANGE = "fmr_pairs: {value!r} lies outside [0, 1]"
RATIO_UNDEFINED = (
    "within/cross FMR ratio undefined for {count} of {total} algorithm(s): the mean "
    "within-group or the mean cross-group FMR is 0 (or no pair of each kind is measured), "
    "so the ratio divides by zero; the value is NaN"
)
ASYMMETRY_UNDEFINED = (
    "FMR asymmetry undefined for {count} of {total} algorithm(s): a cross-group FMR is 0, "
    "so FMR(a, b) / FMR(b, a) divides by zero (or no pair of groups is measured both "
    "ways); the value is NaN"
)
GINI_UNDEFINED = (
    "Gini of the pair FMRs undefined for {count} of {total} algorithm(s): every pair's FMR "
    "is 0, so eq. 7 of Howard et al. divides by a zero mean; set to {value} (all cells equal)"
)
NEEDS_PAIRS = (
    "needs the cross-group FMR matrix (enrolment group x probe group), which a table of "
    "one group per row does not have; read a cross-group table (columns group_1 and "
    "group_2, or FMR.<enrolment><separator><probe> columns with a pair separator)"
)
NOT_CROSS = (
    "{source} has no cross-group FMR matrix (enrolment group x probe group): it was not "
    "read from a cross-group table"
)

#: What a cross-group measure needs, in :attr:`~audit.measures.contract.MeasureSpec.needs`.
PAIRS = "fmr_pairs"


def as_pairs(fmr_pairs) -> np.ndarray:
    """``fmr_pairs`` as float64 of shape (n_algorithms, n_groups, n_groups), checked:
    square, at least 2 groups, rates in [0, 1], the same pairs measured for every algorithm.

    One matrix of shape (n_groups, n_groups) is taken as one algorithm's.
    """
    pairs = np.asarray(fmr_pairs, dtype="float64")
    if pairs.ndim == 2:
        pairs = pairs[None]
    if pairs.ndim != 3 or pairs.shape[1] != pairs.shape[2]:
        raise InputError(BAD_SHAPE.format(shape=np.shape(fmr_pairs)))
    if pairs.shape[1] < 2:
        raise InputError(TOO_FEW_GROUPS.format(n=pairs.shape[1]))
    missing = np.isnan(pairs)
    if missing.any():
        uneven = (missing != missing[:1]).any(axis=(1, 2))
        if uneven.any():
            raise InputError(UNEVEN.format(algorithm=int(np.flatnonzero(uneven)[0])))
    with np.errstate(invalid="ignore"):
        outside = (pairs < 0.0) | (pairs > 1.0) | np.isinf(pairs)
    if outside.any():
        raise InputError(OUT_OF_RANGE.format(value=float(pairs[outside][0])))
    return pairs


def _masks(pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(within, cross): the measured within-group and cross-group cells, (n, n) each."""
    n = pairs.shape[-1]
    measured = ~np.isnan(pairs[0]) if len(pairs) else np.ones((n, n), dtype=bool)
    eye = np.eye(n, dtype=bool)
    return measured & eye, measured & ~eye


def _mean(pairs: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """The mean of ``cells`` of each algorithm's matrix; NaN where no cell is measured."""
    if not cells.any():
        return np.full(len(pairs), np.nan)
    return pairs[:, cells].mean(axis=-1)


def _fill(value: np.ndarray, undefined: np.ndarray, zero_division) -> np.ndarray:
    fill = np.nan if isinstance(zero_division, str) else float(zero_division)
    return np.where(undefined, fill, value)


@validate_params("zero_division")
def within_cross_ratio(fmr_pairs, *, zero_division="warn") -> MeasureResult:
    r"""How many times same-group impostors false-match more often than others, or the reverse.

    .. math::
        W = \operatorname{mean}_g FMR(g, g),\quad
        C = \operatorname{mean}_{a \ne b} FMR(a, b),\quad
        R = \max(W / C,\ C / W)

    over the measured pairs, every cell weighing the same.  NISTIR 8280 finds
    W above C (same-sex, same-race, same-age impostors), and then R = W / C.
    The fold makes 1 the value of a system whose FMR does not depend on
    whether the impostor shares the enrolled person's group, and ranks a
    departure either way alike; the signed W / C, per group and overall, is
    in :func:`within_cross_table`.  At least 1, unbounded above.  Undefined
    when W or C is 0: NaN, flagged, warned (``zero_division`` as for every
    measure).  The FNMR term is NaN: the measure reads impostor FMRs only.

    Examples
    --------
    >>> r = within_cross_ratio([[[4e-4, 1e-5], [3e-5, 2e-4]]])
    >>> round(float(r.value[0]), 6)  # W = 3e-4, C = 2e-5
    15.0
    """
    pairs = as_pairs(fmr_pairs)
    within, cross = _masks(pairs)
    w, c = _mean(pairs, within), _mean(pairs, cross)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = w / c
        value = np.maximum(ratio, 1.0 / ratio)
    undefined = ~np.isfinite(value)
    report_undefined(
        RATIO_UNDEFINED.format(count=int(undefined.sum()), total=len(value)),
        undefined,
        zero_division,
    )
    value = _fill(value, undefined, zero_division)
    return MeasureResult(value, value.copy(), np.full(len(value), np.nan), undefined)


def _both_ways(pairs: np.ndarray) -> np.ndarray:
    """(n, n) bool: the cross-group cells whose reverse pair is measured too."""
    _, cross = _masks(pairs)
    return cross & cross.T


@validate_params("zero_division")
def fmr_asymmetry(fmr_pairs, *, zero_division="warn") -> MeasureResult:
    r"""The largest ratio of a pair's FMR to the reverse pair's: enrolment side against probe side.

    .. math:: S = \max_{a \ne b} FMR(a, b) / FMR(b, a)

    over the pairs of groups measured both ways.  Both orders are in the
    maximum, so S is at least 1 (symmetric matrix) and unbounded above.
    Undefined when a cross-group FMR is 0 (FMR(a, b) / 0), or when no pair of
    groups is measured both ways: NaN, flagged, warned.  The per-pair ratios
    are in :func:`asymmetry_table`.

    Examples
    --------
    >>> r = fmr_asymmetry([[[1e-4, 2e-5], [1e-5, 1e-4]]])
    >>> float(r.value[0])
    2.0
    """
    pairs = as_pairs(fmr_pairs)
    cells = _both_ways(pairs)
    forward = pairs[:, cells]
    backward = np.swapaxes(pairs, 1, 2)[:, cells]
    undefined = (forward == 0.0).any(axis=-1) | (backward == 0.0).any(axis=-1)
    if not cells.any():
        value = np.full(len(pairs), np.nan)
        undefined = np.ones(len(pairs), dtype=bool)
    else:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            value = (forward / np.where(backward == 0.0, 1.0, backward)).max(axis=-1)
        undefined |= ~np.isfinite(value)
    report_undefined(
        ASYMMETRY_UNDEFINED.format(count=int(undefined.sum()), total=len(value)),
        undefined,
        zero_division,
    )
    value = _fill(value, undefined, zero_division)
    return MeasureResult(value, value.copy(), np.full(len(value), np.nan), undefined)


@validate_params("zero_division")
def cell_gini(fmr_pairs, *, zero_division="warn") -> MeasureResult:
    r"""GARBE's A term over every measured cell of the pair matrix (Howard et al. eq. 7).

    .. math:: G = \frac{m}{m-1}\,\frac{\sum_i\sum_j |x_i - x_j|}{2 m^2 \bar x}

    with :math:`x` the m measured cells, FMR(a, b) for every enrolment group a
    and probe group b (m = n^2 for the full square).  In [0, 1]: 0 when every
    pair has the same FMR, 1 when one pair holds every false match.  When
    every cell is 0 the mean is 0: set to 0 (all cells equal), flagged,
    warned, as GARBE's terms (:func:`audit.measures.kernels.gini`).

    Examples
    --------
    >>> r = cell_gini([[[1e-4, 1e-4], [1e-4, 1e-4]]])
    >>> float(r.value[0])
    0.0
    """
    pairs = as_pairs(fmr_pairs)
    measured = ~np.isnan(pairs[0]) if len(pairs) else np.ones(pairs.shape[1:], dtype=bool)
    cells = pairs[:, measured]
    g, undefined = gini.__wrapped__(
        cells, zero_division="flag" if isinstance(zero_division, str) else zero_division
    )
    fill = 0.0 if isinstance(zero_division, str) else float(zero_division)
    report_undefined(
        GINI_UNDEFINED.format(count=int(undefined.sum()), total=len(g), value=fill),
        undefined,
        zero_division,
    )
    return MeasureResult(g, g.copy(), np.full(len(g), np.nan), undefined)


def within_cross_table(cross: CrossGroupRates | pd.DataFrame) -> pd.DataFrame:
    """Within-group against cross-group FMR, per group and overall, for every algorithm.

    Per group g: ``within`` = FMR(g, g); ``cross_enrolled`` the mean FMR of the
    measured pairs enrolled in g and probed from another group (row g),
    ``cross_probed`` of those probed from g (column g), ``cross`` of both
    together; ``ratio`` = within / cross, signed (above 1: same-group
    impostors false-match more often).  One ``overall`` row per algorithm
    gives the mean within-group FMR, the mean cross-group FMR and their ratio
    (:func:`within_cross_ratio` is ``max(ratio, 1 / ratio)`` of it).  A ratio
    that divides by 0 is NaN, and ``undefined`` says so.

    Parameters
    ----------
    cross
        A :class:`~audit.tables.crossgroup.CrossGroupRates` or a rates table read
        from a cross-group table.

    Returns
    -------
    pandas.DataFrame
        Columns ``algorithm``, ``scope`` (``"group"`` or ``"overall"``),
        ``group`` (NA on overall rows), ``within``, ``cross_enrolled``,
        ``cross_probed``, ``cross``, ``ratio``, ``undefined``.
    """
    cross = _cross(cross)
    pairs = cross.fmr
    n_alg, n = pairs.shape[0], len(cross.groups)
    within_cells, cross_cells = _masks(pairs) if n_alg else (np.eye(n, dtype=bool),) * 2
    zeroed = np.where(cross_cells, np.nan_to_num(pairs), 0.0)
    weights = cross_cells.astype("float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        row = zeroed.sum(axis=2) / weights.sum(axis=1)
        column = zeroed.sum(axis=1) / weights.sum(axis=0)
        both = (zeroed.sum(axis=2) + zeroed.sum(axis=1)) / (
            weights.sum(axis=1) + weights.sum(axis=0)
        )
        within = np.diagonal(pairs, axis1=1, axis2=2)
        ratio = within / both
        overall_w, overall_c = _mean(pairs, within_cells), _mean(pairs, cross_cells)
        overall = overall_w / overall_c
    groups = pd.DataFrame(
        {
            "algorithm": np.repeat(cross.algorithms.to_numpy(dtype=object), n),
            "scope": "group",
            "group": np.tile(cross.groups.to_numpy(dtype=object), n_alg),
            "within": within.ravel(),
            "cross_enrolled": row.ravel(),
            "cross_probed": column.ravel(),
            "cross": both.ravel(),
            "ratio": ratio.ravel(),
        }
    )
    totals = pd.DataFrame(
        {
            "algorithm": cross.algorithms.to_numpy(dtype=object),
            "scope": "overall",
            "group": pd.NA,
            "within": overall_w,
            "cross_enrolled": overall_c,
            "cross_probed": overall_c,
            "cross": overall_c,
            "ratio": overall,
        }
    )
    out = pd.concat([groups, totals], ignore_index=True)
    position = np.concatenate([np.repeat(np.arange(n_alg), n), np.arange(n_alg)])
    out = out.iloc[np.argsort(position, kind="stable")].reset_index(drop=True)
    out["undefined"] = ~np.isfinite(out["ratio"].to_numpy(dtype="float64"))
    out.loc[out["undefined"], "ratio"] = np.nan
    for column in ("algorithm", "scope", "group"):
        out[column] = out[column].astype("string")
    return out


def asymmetry_table(cross: CrossGroupRates | pd.DataFrame) -> pd.DataFrame:
    """FMR(a, b) against FMR(b, a) for every pair of groups measured both ways.

    One row per algorithm and unordered pair {a, b} (a before b in the order
    of the groups): ``fmr_ab`` (enrolled in a, probed from b), ``fmr_ba``,
    ``ratio`` = fmr_ab / fmr_ba (NaN and ``undefined`` when fmr_ba is 0),
    ``fold`` = max(ratio, 1 / ratio) and ``differ`` (the two FMRs are not
    equal as written).  :func:`fmr_asymmetry` is the largest ``fold`` of an
    algorithm.
    """
    cross = _cross(cross)
    pairs = cross.fmr
    n_alg = pairs.shape[0]
    cells = _both_ways(pairs) if n_alg else np.zeros((len(cross.groups),) * 2, dtype=bool)
    a, b = np.nonzero(np.triu(cells, k=1))
    forward, backward = pairs[:, a, b], pairs[:, b, a]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = forward / backward
        fold = np.maximum(ratio, 1.0 / ratio)
    labels = cross.groups.to_numpy(dtype=object)
    out = pd.DataFrame(
        {
            "algorithm": np.repeat(cross.algorithms.to_numpy(dtype=object), len(a)),
            "group_a": np.tile(labels[a], n_alg),
            "group_b": np.tile(labels[b], n_alg),
            "fmr_ab": forward.ravel(),
            "fmr_ba": backward.ravel(),
            "ratio": ratio.ravel(),
            "fold": fold.ravel(),
            "differ": (forward != backward).ravel(),
        }
    )
    undefined = ~np.isfinite(out["ratio"].to_numpy()) | ~np.isfinite(out["fold"].to_numpy())
    out.loc[undefined, ["ratio", "fold"]] = np.nan
    out["undefined"] = undefined
    for column in ("algorithm", "group_a", "group_b"):
        out[column] = out[column].astype("string")
    return out


def _cross(cross: CrossGroupRates | pd.DataFrame) -> CrossGroupRates:
    if isinstance(cross, CrossGroupRates):
        return cross
    found = cross_group(cross)
    if found is None:
        raise InputError(NOT_CROSS.format(source=cross.attrs.get("source", "the table")))
    return found
