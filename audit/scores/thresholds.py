"""Operating points: thresholds at target FMRs, per-group rates at thresholds, sweeps, DET points.

Conventions (the full statement is in :mod:`audit.scores`):

Decision rule
    A comparison is declared a match when ``score >= threshold`` (similarities)
    or ``score <= threshold`` (distances, ISO/IEC 19795-1).  A non-mated
    comparison whose score falls on the threshold exactly is a false match; a
    mated one on it is a true match.
Threshold at a target FMR
    Set on the pooled non-mated scores of an algorithm: the most permissive
    threshold whose pooled FMR does not exceed the target, so the attained FMR
    ``k / N`` never exceeds it (and may fall below it, to 0 when
    ``target * N < 1``).
Ties
    Never split: every comparison with the same score gets the same decision,
    so a block of tied non-mated scores that would overshoot the target is
    rejected whole.
Reported threshold
    The smallest observed score that is accepted (a real score value), or the
    next float above the largest score when every score must be rejected.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from audit.scores.runs import merged_quantiles
from audit.scores.stats import SufficientStatistics, score_stats
from audit.tables.rates import RATE_COUNTS
from audit.tables.scores import (
    DEFAULT_TARGETS,
    MATED_ONLY,
    NO_COMPARISONS,
    NO_DET_CURVE,
    NO_NONMATED,
    ScoresError,
)
from audit.validation import (
    OPERATING_POINTS,
    SCORES,
    TARGETS,
    Integer,
    Text,
    Thresholds,
    optional,
    validate_params,
)

#: The count behind each rate: FMR over non-mated comparisons, FNMR over mated ones.
COUNTS = {rate: column for rate, (column, _) in RATE_COUNTS.items()}

#: NIST's operating point for its demographic summaries: one threshold per algorithm
#: giving an overall FMR of 3e-5 (NISTIR 8429, the FRTE 1:1 demographic-effects table;
#: :mod:`audit.measures.nist`).  ``rates_at_fmr(scores, NIST_OPERATING_FMR)``, or
#: ``audit scores --operating-point nist`` (:data:`audit.validation.OPERATING_POINTS`).
NIST_OPERATING_FMR = OPERATING_POINTS["nist"]


def _allowed_false_matches(targets: np.ndarray, n: int) -> np.ndarray:
    """Largest k with k / n <= target (as float64), per target."""
    k = np.floor(targets * n).astype("int64")
    k = np.clip(k, 0, n)
    up = (k + 1 <= n) & ((k + 1) / n <= targets)
    k = np.where(up, k + 1, k)
    down = (k > 0) & (k / n > targets)
    return np.where(down, k - 1, k)


def _operating_points(
    stats: SufficientStatistics, a: int, targets: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """Internal thresholds, pooled false-match counts there and the pooled count N.

    The threshold for ``k`` allowed false matches is the smallest ``t`` (in
    float order) with ``count(pooled non-mated >= t) <= k``: ``low`` (the
    smallest score) when ``k >= N``, otherwise the float just above ``v``, the
    ``(k+1)``-th largest pooled non-mated score (:meth:`ScoreStats.cut_points`
    finds it without sorting).  The reported threshold is the smallest observed
    score at or above ``t``, which takes the same decisions.
    """
    n = stats.n_pooled_nonmated(a)
    if n == 0:
        if stats.rates_held() == ("fnmr",):
            raise ScoresError(MATED_ONLY)
        raise ScoresError(NO_NONMATED.format(algorithm=stats.algorithms[a]))
    k = _allowed_false_matches(targets, n)
    low, _ = stats.score_range(a)
    t_star = np.full(len(targets), low)
    todo = np.flatnonzero(k < n)
    if len(todo):
        t_star[todo] = stats.cut_points(a, k[todo])
    # report the smallest observed score that is accepted (same decisions as t_star)
    observed = stats.smallest_at_or_above(a, t_star)
    internal = np.where(np.isfinite(observed), observed, t_star)
    false_matches, _, cross = stats.counts(a, internal)
    return internal, false_matches.sum(axis=0) + cross, n


@validate_params(targets=TARGETS, algorithm=optional(Text()))
def thresholds_at_fmr(
    stats: SufficientStatistics | pd.DataFrame, targets, algorithm=None
) -> pd.DataFrame:
    """Thresholds setting the pooled FMR of each algorithm at or below each target.

    Returns one row per (algorithm, target): ``algorithm``, ``target_fmr``,
    ``threshold`` (in the caller's units), ``attained_fmr`` (pooled, never
    above the target), ``n_pooled_nonmated``.  The threshold is the most
    permissive one whose pooled FMR does not exceed the target; tied scores
    are never split, and a score on the threshold is a match (the conventions
    of :mod:`audit.scores.thresholds`).
    """
    stats = score_stats(stats)
    indices = (
        range(len(stats.algorithms)) if algorithm is None else [stats.algorithm_index(algorithm)]
    )
    columns = {
        "algorithm": [],
        "target_fmr": [],
        "threshold": [],
        "_internal": [],
        "attained_fmr": [],
        "n_pooled_nonmated": [],
    }
    for a in indices:
        internal, attained, n = _operating_points(stats, a, targets)
        columns["algorithm"] += [stats.algorithms[a]] * len(targets)
        columns["target_fmr"].append(targets)
        columns["threshold"].append(stats.to_external(internal))
        columns["_internal"].append(internal)
        columns["attained_fmr"].append(attained / n)
        columns["n_pooled_nonmated"].append(np.full(len(targets), n, dtype=np.int64))
    out = {
        name: values if name == "algorithm" else np.concatenate(values)
        for name, values in columns.items()
    }
    return pd.DataFrame(out)


def _rates_frame(
    stats: SufficientStatistics, a: int, internal: np.ndarray, held: tuple[str, ...]
) -> dict[str, np.ndarray]:
    """Per-group rates (n_groups, n_thresholds) at internal thresholds, refusing empty groups.

    Only the rates ``held`` (:meth:`ScoreStats.rates_held`, asked once by the caller):
    a set of non-mated comparisons only gives FMRs, of mated ones only FNMRs.
    """
    counts = {"fmr": stats.n_nonmated(a), "fnmr": stats.n_mated(a)}
    kinds = {"fmr": "within-group non-mated", "fnmr": "mated"}
    for g in range(len(stats.groups)):
        for rate in (r for r in ("fnmr", "fmr") if r in held and counts[r][g] == 0):
            raise ScoresError(
                NO_COMPARISONS.format(
                    algorithm=stats.algorithms[a],
                    group=stats.groups[g],
                    kind=kinds[rate],
                    rate=rate.upper(),
                )
            )
    fm, fnm, _ = stats.counts(a, internal)
    errors = {"fmr": fm, "fnmr": fnm}
    out = {rate: errors[rate] / counts[rate][:, None] for rate in held}
    out |= {COUNTS[rate]: counts[rate] for rate in ("fnmr", "fmr") if rate in held}
    return out


def _strings(labels, index: np.ndarray):
    """A pandas ``string`` array of ``str(labels[i])`` for ``i`` in ``index``."""
    return pd.array([str(label) for label in labels], dtype="string").take(index)


def _tidy(
    stats: SufficientStatistics, blocks: list[tuple[int, dict, dict]], held: tuple[str, ...]
) -> pd.DataFrame:
    """Assemble rates blocks into the tidy long table, one row per (algorithm, [point,] group)."""
    n_grp = len(stats.groups)
    sizes = [rates[held[0]].shape[1] * n_grp for _, rates, _ in blocks]
    group = np.tile(np.arange(n_grp), sum(sizes) // n_grp if n_grp else 0)
    table = {"algorithm": _strings(stats.algorithms, np.repeat([a for a, _, _ in blocks], sizes))}
    if stats.attributes:
        # attribute values hold no "." when there are several (read_scores refuses it);
        # a single attribute's value is the whole label, dots and all
        split = [str(g).split(".", len(stats.attributes) - 1) for g in stats.groups]
        for i, name in enumerate(stats.attributes):
            table[name] = _strings([s[i] for s in split], group)
    table["group"] = _strings(stats.groups, group)
    for rate in held:
        table[rate] = np.concatenate([rates[rate].T.ravel() for _, rates, _ in blocks])
    for rate in ("fnmr", "fmr"):
        if rate in held:
            table[COUNTS[rate]] = np.concatenate(
                [np.tile(rates[COUNTS[rate]], rates[rate].shape[1]) for _, rates, _ in blocks]
            ).astype("int64")
    for name in blocks[0][2]:
        table[name] = np.concatenate(
            [np.repeat(np.asarray(extra[name]), n_grp) for _, _, extra in blocks]
        )
    return pd.DataFrame(table)


@validate_params(thresholds=Thresholds(), scores=SCORES)
def rates_at_thresholds(scores: pd.DataFrame | SufficientStatistics, thresholds) -> pd.DataFrame:
    """Per-group FMR and FNMR at given thresholds (caller's units), one row per
    (algorithm, threshold, group), with a ``threshold`` column.

    ``thresholds``: a scalar or 1-D array applied to every algorithm, or a
    mapping ``{algorithm: threshold(s)}``.
    """
    stats = score_stats(scores)
    held = stats.rates_held()
    blocks = []
    for a, name in enumerate(stats.algorithms):
        t = thresholds[name] if isinstance(thresholds, dict) else thresholds
        t = np.atleast_1d(np.asarray(t, dtype="float64"))
        internal = stats.to_internal(t)
        blocks.append((a, _rates_frame(stats, a, internal, held), {"threshold": t}))
    return _tidy(stats, blocks, held)


@validate_params(targets=optional(TARGETS), scores=SCORES)
def sweep(scores: pd.DataFrame | SufficientStatistics, targets=None) -> pd.DataFrame:
    """Per-group rates at a grid of target FMRs.

    Parameters
    ----------
    scores
        A validated score table (:func:`read_scores`) or its :class:`ScoreStats`.
    targets
        Target pooled FMRs in (0, 1]; default :data:`DEFAULT_TARGETS`
        (0.1% to 10%, log-spaced, 21 points).

    Returns
    -------
    pandas.DataFrame
        One row per (algorithm, target, group): the columns of
        :func:`audit.tables.rates.read_rates` (``algorithm``, attributes, ``group``,
        ``fmr``, ``fnmr``), ``n_mated``, ``n_nonmated``, then ``target_fmr``,
        ``threshold`` (caller's units) and ``attained_fmr`` (pooled FMR at the
        threshold, never above the target).
    """
    stats = score_stats(scores)
    targets = DEFAULT_TARGETS if targets is None else targets  # checked: TARGETS
    points = [_operating_points(stats, a, targets) for a in range(len(stats.algorithms))]
    held = stats.rates_held()
    blocks = []
    for a, (internal, attained, n) in enumerate(points):
        blocks.append(
            (
                a,
                _rates_frame(stats, a, internal, held),
                {
                    "target_fmr": targets,
                    "threshold": stats.to_external(internal),
                    "attained_fmr": attained / n,
                },
            )
        )
    return _tidy(stats, blocks, held)


@validate_params("target_fmr", scores=SCORES)
def rates_at_fmr(
    scores: pd.DataFrame | SufficientStatistics, target_fmr: float = 1e-3
) -> pd.DataFrame:
    """Per-group FMR and FNMR at the threshold giving a pooled FMR of ``target_fmr``.

    The result is the tidy rates table of :func:`audit.tables.rates.read_rates`
    (``algorithm``, attribute columns, ``group``, ``fmr``, ``fnmr``,
    ``n_mated``, ``n_nonmated``), so every rate-based measure, the FFMC audit
    and the Pareto frontier work on it unchanged.  The operating point is
    recorded in ``attrs``: ``target_fmr`` (float), and per algorithm
    ``threshold`` and ``attained_fmr`` (dicts keyed by algorithm name).  The
    threshold is the most permissive one whose pooled FMR does not exceed
    the target, so the attained FMR never exceeds it; tied scores are never
    split, and a score on the threshold is a match (the conventions of
    :mod:`audit.scores.thresholds`).

    Examples
    --------
    >>> import pandas as pd
    >>> from audit.tables.scores import read_scores
    >>> scores = read_scores(pd.DataFrame({
    ...     "algorithm": "a", "group": ["F"] * 4 + ["M"] * 4,
    ...     "score": [0.9, 0.8, 0.3, 0.1, 0.7, 0.6, 0.5, 0.2],
    ...     "mated": [True, True, False, False] * 2}))
    >>> table = rates_at_fmr(scores, 0.25)
    >>> table[["group", "fmr", "fnmr", "n_mated", "n_nonmated"]]
      group  fmr  fnmr  n_mated  n_nonmated
    0     F  0.0   0.0        2           2
    1     M  0.5   0.0        2           2
    >>> table.attrs["threshold"], table.attrs["attained_fmr"]
    ({'a': 0.5}, {'a': 0.25})
    """
    return at_target(sweep(scores, [target_fmr]), target_fmr)


def at_target(swept: pd.DataFrame, target_fmr: float) -> pd.DataFrame:
    """A one-target sweep as the rates table of :func:`rates_at_fmr`: the operating
    point's threshold and attained FMR per algorithm move into ``attrs``."""
    thresholds = dict(zip(swept["algorithm"], swept["threshold"], strict=False))
    attained = dict(zip(swept["algorithm"], swept["attained_fmr"], strict=False))
    table = swept.drop(columns=["target_fmr", "threshold", "attained_fmr"])
    table.attrs["target_fmr"] = float(target_fmr)
    table.attrs["threshold"] = {str(k): float(v) for k, v in thresholds.items()}
    table.attrs["attained_fmr"] = {str(k): float(v) for k, v in attained.items()}
    return table


@validate_params(n_points=Integer(2), scores=SCORES)
def det_points(scores, *, n_points: int = 200) -> pd.DataFrame:
    """Per-group DET curve points: ``algorithm``, ``group``, ``fmr``, ``fnmr``.

    Thresholds at ``n_points`` quantiles of each group's pooled (mated and
    within-group non-mated) scores (``numpy.quantile``'s, from the order
    statistics it interpolates: :func:`audit.scores.runs.merged_quantiles`,
    without joining the two sorted arrays); the rates come from
    :meth:`ScoreStats.counts`, as everywhere else.  The input of
    :func:`audit.report.plots.scores.det_curves`.  A group without mated or without
    within-group non-mated comparisons has no curve; where no group has both, a
    :class:`~audit.tables.scores.ScoresError` says which kind the scores hold.
    """
    stats = score_stats(scores)
    rows = []
    for a, algorithm in enumerate(stats.algorithms):
        n_mated, n_nonmated = stats.n_mated(a), stats.n_nonmated(a)
        for g, group in enumerate(stats.groups):
            if n_mated[g] == 0 or n_nonmated[g] == 0:
                continue
            t = np.unique(
                merged_quantiles(
                    int(n_mated[g] + n_nonmated[g]),
                    np.linspace(0, 1, n_points),
                    lambda k, a=a, g=g: stats.order_statistics(a, g, k),
                )
            )
            false_matches, false_non_matches, _ = stats.counts(a, t)
            rows.append(
                pd.DataFrame(
                    {
                        "algorithm": str(algorithm),
                        "group": str(group),
                        "fmr": false_matches[g] / n_nonmated[g],
                        "fnmr": false_non_matches[g] / n_mated[g],
                    }
                )
            )
    if not rows:
        held = stats.rates_held()
        kind = RATE_COUNTS[held[0]][1] if len(held) == 1 else None
        why = "" if kind is None else f": the scores hold {kind} comparisons only"
        raise ScoresError(NO_DET_CURVE.format(why=why))
    return pd.concat(rows, ignore_index=True)
