"""Replicate rates: binomial redraws, Annex 15 transcription redraws, score resampling."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from audit.exceptions import InputError, ParameterError, ScoresError
from audit.measures import onesided
from audit.measures.kernels import MeasureResult
from audit.scores.stats import score_stats
from audit.scores.weighted import sorted_scores
from audit.tables.layouts import RATES
from audit.tables.rates import rate_matrices
from audit.uncertainty.checks import (
    BAD_COUNTS,
    BAD_FLOOR_LOWER,
    BELOW_FLOOR,
    FLOOR_LOWER,
    MISSING_SCORE_COLUMN,
    NO_COMPARISONS,
    NOT_ON_GRID,
    NOT_READ_SCORES,
    RATES_MISSING,
    RATES_TWICE,
    SCORE_COLUMNS,
    TRANSCRIPTION,
    _rate_measures,
)
from audit.uncertainty.intervals import count_matrices
from audit.validation import FRAME, RATES_TABLE, MeasureRefs, validate_params


@validate_params("n_replicates", "seed", table=RATES_TABLE)
def parametric_replicates(
    table: pd.DataFrame, *, counts=None, n_replicates: int = 1000, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
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
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"algorithm": ["a", "a"], "group": ["F", "M"],
    ...     "fmr": [1e-4, 2e-4], "fnmr": [0.02, 0.01],
    ...     "n_mated": [1000, 1000], "n_nonmated": [100_000, 100_000]}))
    >>> fmr, fnmr = parametric_replicates(t, n_replicates=3, seed=1)
    >>> fmr.shape
    (3, 1, 2)
    """
    _, _, fmr, fnmr = rate_matrices(table)
    n_mated, n_nonmated = count_matrices(table, counts)
    if (n_mated <= 0).any() or (n_nonmated <= 0).any():
        raise InputError(BAD_COUNTS.format(problem=NO_COMPARISONS))
    rng = np.random.default_rng(seed)
    size = (n_replicates, *fmr.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        fmr_reps = rng.binomial(n_nonmated, fmr, size=size) / n_nonmated
        fnmr_reps = rng.binomial(n_mated, fnmr, size=size) / n_mated
    return fmr_reps, fnmr_reps


@validate_params("floor_lower", **TRANSCRIPTION)
def transcription_bins(
    fmr,
    fnmr,
    *,
    step: float = 0.1,
    floor: float = 1e-5,
    floor_lower: float | None = FLOOR_LOWER,
    fnmr_half_width: float = 5e-5,
):
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
        raise ParameterError(BAD_FLOOR_LOWER.format(floor=floor, value=floor_lower))
    below = fmr < floor * (1.0 - 1e-9)
    if below.any():
        raise InputError(
            BELOW_FLOOR.format(count=int(below.sum()), floor=floor, value=float(fmr[below][0]))
        )
    with np.errstate(divide="ignore"):
        log = np.log10(fmr)
    k = np.round(log / step)
    off = ~(np.abs(log - k * step) < 1e-6)
    if off.any():
        row, column = (int(i[0]) for i in np.nonzero(off))
        raise InputError(
            NOT_ON_GRID.format(
                count=int(off.sum()),
                step=step,
                row=row,
                column=column,
                value=float(fmr[row, column]),
            )
        )
    low, high = (k - 0.5) * step, (k + 0.5) * step
    floored = np.abs(log - np.log10(floor)) < 1e-6
    low = np.where(floored, np.log10(floor_lower), low)
    high = np.where(floored, np.log10(floor) + 0.5 * step, high)
    fnmr_low = np.clip(fnmr - fnmr_half_width, 0.0, 1.0)
    fnmr_high = np.clip(fnmr + fnmr_half_width, 0.0, 1.0)
    return low, high, fnmr_low, fnmr_high


@validate_params("n_replicates", "seed", "floor_lower", **TRANSCRIPTION)
def transcription_redraws(
    fmr,
    fnmr,
    *,
    n_replicates: int = 1000,
    seed: int = 0,
    step: float = 0.1,
    floor: float = 1e-5,
    floor_lower: float | None = FLOOR_LOWER,
    fnmr_half_width: float = 5e-5,
) -> tuple[np.ndarray, np.ndarray]:
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
    low, high, fnmr_low, fnmr_high = transcription_bins(
        fmr, fnmr, step=step, floor=floor, floor_lower=floor_lower, fnmr_half_width=fnmr_half_width
    )
    rng = np.random.default_rng(seed)
    size = (n_replicates, *low.shape)
    fmr_reps = 10.0 ** (low + rng.random(size) * (high - low))
    fnmr_reps = fnmr_low + rng.random(size) * (fnmr_high - fnmr_low)
    return fmr_reps, fnmr_reps


@validate_params("alpha", measures=MeasureRefs())
def replicate_measures(
    fmr_reps, fnmr_reps, measures=None, *, alpha: float = 0.5, rates=RATES
) -> dict[str, MeasureResult]:
    """Every registered rate measure on every replicate, in one call per measure.

    The replicates, of shape (n_replicates, n_algorithms, n_groups), are
    stacked as (n_replicates * n_algorithms, n_groups) for the measure and
    reshaped back.  Undefined cases follow each measure's documented
    convention (their warnings are silenced here and counted instead, in the
    ``undefined`` masks).

    ``rates`` are the rates the table holds: of a one-sided table (``("fmr",)``
    or ``("fnmr",)``) the measures are computed as
    :func:`audit.measures.registry.evaluate` computes them
    (:mod:`audit.measures.onesided`): the absent rate equal in every group, a
    two-term measure at the alpha of its present term alone, the absent term
    NaN; a measure that does not apply is left out.

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
    rates = tuple(rates)
    one_alpha = None
    if rates != RATES:
        fmr_reps, fnmr_reps, one_alpha = onesided.one_term_inputs(fmr_reps, fnmr_reps, rates)
    shape = fmr_reps.shape[:-1]
    flat_fmr = fmr_reps.reshape(-1, fmr_reps.shape[-1])
    flat_fnmr = fnmr_reps.reshape(-1, fnmr_reps.shape[-1])
    out = {}
    for measure in _rate_measures(measures):
        at = alpha
        if one_alpha is not None:
            status, _ = onesided.applicability(measure, rates)
            if status == onesided.NOT_APPLICABLE:
                continue
            if status == onesided.ONE_TERM:
                at = one_alpha
        result = measure(flat_fmr, flat_fnmr, alpha=at, zero_division="flag")
        parts = {
            part: np.asarray(getattr(result, part)).reshape(shape)
            for part in ("value", "fmr_term", "fnmr_term", "undefined")
        }
        for rate in RATES:
            if rate not in rates:  # the absent rate's term, as evaluate reports it
                parts[f"{rate}_term"] = np.full(shape, np.nan)
        out[measure.name] = MeasureResult(**parts)
    return out


#: :func:`replicate_measures` without the check of its arguments, for the analyses that
#: pass it measures already chosen (an empty list: no rate measure, only pair measures).
_replicate_measures = replicate_measures.__wrapped__


def _check_columns(scores: pd.DataFrame, columns) -> None:
    for column in columns:
        if column is not None and column not in scores.columns:
            raise InputError(
                MISSING_SCORE_COLUMN.format(column=column, columns=list(scores.columns))
            )


def _strata_sampler(labels: np.ndarray) -> Callable[[np.random.Generator], np.ndarray]:
    """A function drawing, for each position, a random position of the same stratum."""
    order = np.argsort(labels, kind="stable")
    sorted_labels = labels[order]
    starts = np.searchsorted(sorted_labels, sorted_labels, side="left")
    sizes = np.searchsorted(sorted_labels, sorted_labels, side="right") - starts

    def draw(rng: np.random.Generator) -> np.ndarray:
        return order[starts + np.floor(rng.random(len(order)) * sizes).astype("int64")]

    return draw


def _unit_sampler(
    scores: pd.DataFrame, *, unit: str, subject: str, group: str, mated: str, algorithm: str | None
) -> tuple[np.ndarray, int, Callable[[np.random.Generator], np.ndarray]]:
    """The unit of each row, the number of units and a function drawing how many times
    each unit is in one bootstrap resample (set up once).

    A unit is a subject (``unit="subject"``: subjects drawn with replacement within
    their group, a subject's group that of its first row) or a comparison
    (``unit="comparison"``: rows drawn with replacement within each (algorithm,
    group, mated) stratum).
    """
    if unit == "comparison":
        keys = [c for c in (algorithm, group, mated) if c is not None]
        draw = _strata_sampler(scores.groupby(keys, sort=False, observed=True).ngroup().to_numpy())
        n = len(scores)
        return np.arange(n), n, lambda rng: np.bincount(draw(rng), minlength=n)
    codes, _ = pd.factorize(scores[subject])
    _, first = np.unique(codes, return_index=True)  # each subject's first row, by code
    subject_groups, _ = pd.factorize(scores[group].take(first).to_numpy())
    draw = _strata_sampler(subject_groups)
    return codes, len(first), lambda rng: np.bincount(draw(rng), minlength=len(first))


def _row_sampler(
    scores: pd.DataFrame, *, unit: str, subject: str, group: str, mated: str, algorithm: str | None
) -> Callable[[np.random.Generator], np.ndarray]:
    """A function returning the row positions of one bootstrap resample (set up once):
    every row of a unit, once per draw of the unit, in order of the units."""
    units, _, counts = _unit_sampler(
        scores, unit=unit, subject=subject, group=group, mated=mated, algorithm=algorithm
    )
    order = np.argsort(units, kind="stable")
    units_in_order = units[order]
    return lambda rng: np.repeat(order, counts(rng)[units_in_order])


def _replicates(
    scores: pd.DataFrame,
    *,
    replicate_as: str,
    unit: str,
    subject: str,
    group: str,
    mated: str,
    algorithm: str | None,
) -> tuple[object, Callable[[np.random.Generator], object]]:
    """What the rates and score-measure functions of a score bootstrap are given: for
    the point estimate, and a function making each replicate (set up once).

    ``replicate_as="table"``: ``scores`` itself and the resampled rows.
    ``"statistics"``: ``score_stats(scores)`` and the statistics of the same
    resample without its rows (:meth:`audit.scores.weighted.SortedScores.replicate`
    of the counts of each unit).
    """
    if replicate_as == "table":
        rows = _row_sampler(
            scores, unit=unit, subject=subject, group=group, mated=mated, algorithm=algorithm
        )
        return scores, lambda rng: scores.iloc[rows(rng)].reset_index(drop=True)
    for column in ("algorithm", "score", "mated", "group_1", "group_2"):
        if column not in scores.columns:
            raise ScoresError(NOT_READ_SCORES.format(column=column, problem="missing"))
    for column in ("algorithm", "group_1", "group_2"):
        dtype = scores[column].dtype
        if not isinstance(dtype, pd.CategoricalDtype):
            problem = f"of dtype {dtype}, not categorical"
            raise ScoresError(NOT_READ_SCORES.format(column=column, problem=problem))
    units, n_units, counts = _unit_sampler(
        scores, unit=unit, subject=subject, group=group, mated=mated, algorithm=algorithm
    )
    base = sorted_scores(scores, units, n_units)
    return score_stats(scores), lambda rng: base.replicate(counts(rng))


@validate_params(**SCORE_COLUMNS, scores=FRAME)
def resample_scores(
    scores: pd.DataFrame,
    rng: np.random.Generator,
    *,
    unit: str = "subject",
    subject: str = "subject",
    group: str = "group",
    mated: str = "mated",
    algorithm: str | None = "algorithm",
) -> pd.DataFrame:
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
    _check_columns(scores, [subject if unit == "subject" else None, group, mated, algorithm])
    rows = _row_sampler(
        scores, unit=unit, subject=subject, group=group, mated=mated, algorithm=algorithm
    )(rng)
    return scores.iloc[rows].reset_index(drop=True)


def _positions(labels, column: pd.Series) -> np.ndarray:
    """The position of each value of ``column`` among ``labels`` (-1 if absent): a
    dictionary lookup, cheaper than an index for the few rows of a replicate."""
    at = {label: i for i, label in enumerate(labels)}
    return np.array([at.get(value, -1) for value in column.to_numpy(dtype=object)], dtype=np.intp)


def _aligned(
    rates_table: pd.DataFrame, algorithms, groups, replicate
) -> tuple[np.ndarray, np.ndarray]:
    """The FMR and FNMR of a rates table as (algorithm x group) arrays in the order of
    ``algorithms`` and ``groups``; rows of other labels are left out, a missing or NaN
    rate and a pair given twice are refused."""
    rows = _positions(algorithms, rates_table["algorithm"])
    columns = _positions(groups, rates_table["group"])
    known = np.flatnonzero((rows >= 0) & (columns >= 0))
    cell = rows[known] * len(groups) + columns[known]
    once = np.unique(cell)
    if len(once) < len(cell):
        twice = once[np.bincount(np.searchsorted(once, cell)) > 1][0]
        i, j = divmod(int(twice), len(groups))
        raise InputError(
            RATES_TWICE.format(replicate=replicate, what=f"({algorithms[i]!r}, {groups[j]!r})")
        )
    out = []
    for column in ("fmr", "fnmr"):
        values = np.full(len(algorithms) * len(groups), np.nan)
        values[cell] = rates_table[column].to_numpy(dtype="float64")[known]
        values = values.reshape(len(algorithms), len(groups))
        if np.isnan(values).any():
            i, j = (int(x[0]) for x in np.nonzero(np.isnan(values)))
            raise InputError(
                RATES_MISSING.format(
                    replicate=replicate, what=f"({algorithms[i]!r}, {groups[j]!r})"
                )
            )
        out.append(values)
    return out[0], out[1]


def _score_results(frame: pd.DataFrame, algorithms: pd.Index, replicate) -> dict[str, dict]:
    """Tidy (algorithm, measure, value, ...) rows -> {measure: {part: array over algorithms}}
    (measures in order of first appearance; rows of other algorithms left out)."""
    names, codes = np.unique(frame["measure"].to_numpy(dtype=object), return_inverse=True)
    first = np.full(len(names), len(frame))
    np.minimum.at(first, codes, np.arange(len(frame)))
    position = _positions([str(a) for a in algorithms], frame["algorithm"].astype(str))
    parts = {
        part: frame[part].to_numpy(dtype="float64") if part in frame.columns else None
        for part in ("value", "fmr_term", "fnmr_term")
    }
    undefined = (
        frame["undefined"].fillna(False).to_numpy(dtype=bool)
        if "undefined" in frame.columns
        else None
    )
    out = {}
    for code in np.argsort(first, kind="stable").tolist():
        name = names[code]
        mine = np.flatnonzero((codes == code) & (position >= 0))
        at = position[mine]
        if len(np.unique(at)) < len(at):
            raise InputError(RATES_TWICE.format(replicate=replicate, what=f"measure {name!r}"))
        if len(at) < len(algorithms):  # an algorithm without a row
            raise InputError(RATES_MISSING.format(replicate=replicate, what=f"measure {name!r}"))
        found = {}
        for part, values in parts.items():
            found[part] = np.full(len(algorithms), np.nan)
            if values is not None:
                found[part][at] = values[mine]
        if undefined is None:
            found["undefined"] = np.isnan(found["value"])
        else:
            found["undefined"] = np.zeros(len(algorithms), dtype=bool)
            found["undefined"][at] = undefined[mine]
        out[str(name)] = found
    return out
