"""Statistics of a resample without its rows: scores sorted once, each counted as often as
a replicate drew it (:class:`SortedScores`, :class:`CountedStats`).

A bootstrap replicate of a score table repeats some rows (every comparison of a
subject drawn twice) and leaves others out.  Its statistics, the
:class:`~audit.scores.ScoreStats` of the resampled rows, are those of the
table's own scores, each counted as many times as its row was drawn.  So the
segments (per algorithm: mated and within-group non-mated per group,
cross-group non-mated) are sorted once, each score remembering the *unit* its
row belongs to (a subject, or the comparison itself), by
:func:`sorted_scores`; a replicate is a vector of counts, one per unit, and
:meth:`SortedScores.replicate` turns it into a :class:`CountedStats` in O(n),
without a sort: the same sorted scores with the running total of their counts
(a score not drawn counts 0).

:class:`CountedStats` answers every question of
:class:`~audit.scores.stats.SufficientStatistics` with the numbers the
statistics of the resampled rows give, bit for bit: a count below a threshold
is a binary search and a difference of running totals; the cut point at ``k``
pooled non-mated scores is read off the running total of each algorithm's
pooled non-mated scores (sorted once too); the equal error rate is
:func:`audit.scores.runs.equal_error` on runs whose ranks are running totals
and whose candidate thresholds are the drawn scores only, as for the resampled
rows; the smallest score at or above a threshold and the score range skip the
scores not drawn.  Operating points, rates and every score measure therefore
run on it unchanged (``tests/test_weighted.py`` checks them against the
resampled rows).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from audit.exceptions import ScoresError
from audit.scores.runs import Run, equal_error
from audit.scores.stats import SufficientStatistics

BAD_UNITS = (
    "units must give one whole number from 0 to n_units - 1 per row of the score table "
    "({rows} rows), got {problem}"
)
#: Largest pooled non-mated scores first counted when looking for a cut point.
_TOP = 4096

BAD_COUNTS = (
    "a replicate needs one non-negative whole count per unit ({units} units), got {problem}"
)


@dataclass(frozen=True)
class CountedRun(Run):
    """A sorted run of scores each standing for as many scores as it was drawn (0 or
    more): ``cumulative[i] - cumulative[0]`` scores lie before ``values[i]``
    (``len(cumulative) == len(values) + 1``).

    The known scores are those drawn at least once: :meth:`rank` counts them as often
    as drawn, and :meth:`before` and :meth:`at_or_after` skip those not drawn, so that
    :func:`audit.scores.runs.equal_error` (whose bisection may look at an undrawn
    score: its rank is that of the next drawn one) takes the same candidate
    thresholds as on the run of the resampled rows.
    """

    cumulative: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))

    def rank(self, t):
        """How many scores of the run lie below ``t``, each counted as often as drawn."""
        c = self.cumulative
        return self.below + c[self.values.searchsorted(t, "left")] - c[0]

    def before(self, t):
        """The largest drawn score below ``t`` (None when none is)."""
        i = np.searchsorted(self.values, t, "left")
        j = np.searchsorted(self.cumulative[: len(self.values)], self.cumulative[i], "left") - 1
        return self.values[j] if j >= 0 else None

    def at_or_after(self, i: int) -> float:
        """The first drawn score from position ``i`` on (``after`` past them)."""
        j = np.searchsorted(self.cumulative[1:], self.cumulative[i], "right")
        return float(self.values[j]) if j < len(self.values) else self.after


@dataclass
class SortedScores:
    """The segments of a score table sorted once, each score with its unit.

    Segment ``a * (2G + 1) + j`` of ``values`` (``offsets[s]`` to
    ``offsets[s + 1]``) holds algorithm ``a``'s mated scores of group ``j``
    (``j < G``), its within-group non-mated scores of group ``j - G``
    (``G <= j < 2G``) or its cross-group non-mated scores (``j = 2G``), sorted
    ascending in match orientation; ``units`` gives the unit (0 to
    ``n_units - 1``) of each score's row.  ``pooled_values`` holds each
    algorithm's non-mated scores (within- and cross-group) sorted together, from
    ``pooled_offsets[a]`` to ``pooled_offsets[a + 1]``, with their units in
    ``pooled_units``: the cut points read them.
    """

    algorithms: pd.Index
    groups: pd.Index
    values: np.ndarray
    units: np.ndarray
    offsets: np.ndarray
    pooled_values: np.ndarray
    pooled_units: np.ndarray
    pooled_offsets: np.ndarray
    n_units: int
    higher_is_match: bool = True
    attributes: tuple = ()

    def replicate(self, counts) -> CountedStats:
        """The statistics of the table in which every row of unit ``u`` appears
        ``counts[u]`` times (0: left out): equal to :func:`audit.scores.score_stats`
        of those rows.  O(n), no sort: two gathers of the counts and their running sums."""
        counts = np.asarray(counts)
        if counts.shape != (self.n_units,) or counts.dtype.kind not in "iu":
            problem = f"an array of shape {counts.shape} and dtype {counts.dtype}"
            raise ScoresError(BAD_COUNTS.format(units=self.n_units, problem=problem))
        if counts.dtype.kind == "i" and len(counts) and counts.min() < 0:
            raise ScoresError(
                BAD_COUNTS.format(units=self.n_units, problem=f"the count {counts.min()}")
            )
        # the running sums are int64; the counts gathered as int32 when they fit (half the bytes)
        small = not len(counts) or counts.max() < 2**31
        counts = counts.astype(np.int32 if small else np.int64, copy=False)
        return CountedStats(self, counts, _running(counts, self.units))


def _running(counts: np.ndarray, units: np.ndarray) -> np.ndarray:
    """The running total of the counts of the units, from 0 (one more entry than units)."""
    running = np.empty(len(units) + 1, dtype=np.int64)
    running[0] = 0
    np.cumsum(counts.take(units), out=running[1:])
    return running


def sorted_scores(scores: pd.DataFrame, units=None, n_units: int | None = None) -> SortedScores:
    """Sort the segments of a validated score table (:func:`audit.scores.read_scores`)
    once, each score with its unit.

    ``units``: the unit of each row, whole numbers from 0 to ``n_units - 1`` (e.g. the
    codes of the subjects); default every row its own unit (a comparison bootstrap).
    Cost: one sort of the scores by (segment, score) and one of the non-mated
    scores by (algorithm, score).

    Examples
    --------
    >>> from audit.scores import read_scores, rates_at_fmr
    >>> table = read_scores(pd.DataFrame({"algorithm": "a", "group": ["F", "F", "M", "M"],
    ...     "score": [0.9, 0.1, 0.8, 0.3], "mated": [True, False, True, False]}))
    >>> base = sorted_scores(table)
    >>> twice_the_first = base.replicate(np.array([2, 1, 0, 1]))  # rows 0, 0, 1, 3
    >>> twice_the_first.n_mated(0).tolist(), twice_the_first.n_nonmated(0).tolist()
    ([2, 0], [1, 1])
    """
    n = len(scores)
    if units is None:
        units, n_units = np.arange(n, dtype=np.int64), n
    else:
        units = np.asarray(units)
        if units.shape != (n,) or units.dtype.kind not in "iu":
            problem = f"an array of shape {units.shape} and dtype {units.dtype}"
            raise ScoresError(BAD_UNITS.format(rows=n, problem=problem))
        if n_units is None:
            n_units = int(units.max()) + 1 if n else 0
        if n and (units.min() < 0 or units.max() >= n_units):
            problem = f"units from {units.min()} to {units.max()} for {n_units} units"
            raise ScoresError(BAD_UNITS.format(rows=n, problem=problem))
    score = scores["score"].to_numpy(dtype="float64")
    higher_is_match = bool(scores.attrs.get("higher_is_match", True))
    if not higher_is_match:
        score = np.negative(score)
    mated = scores["mated"].to_numpy(dtype=bool)
    group_1 = scores["group_1"].cat.codes.to_numpy().astype(np.int64)
    group_2 = scores["group_2"].cat.codes.to_numpy().astype(np.int64)
    algorithm = scores["algorithm"].cat.codes.to_numpy().astype(np.int64)
    groups = list(scores["group_1"].cat.categories)
    algorithms = list(scores["algorithm"].cat.categories)
    n_groups, width = len(groups), 2 * len(groups) + 1
    # segment of each row: a*width + g (mated), + G (within-group non-mated), 2G (cross)
    key = group_1 + np.where(mated, 0, n_groups)
    key[~mated & (group_1 != group_2)] = 2 * n_groups
    key += algorithm * width
    n_seg = len(algorithms) * width
    key = key.astype(np.int8 if n_seg <= 2**7 else np.int16 if n_seg <= 2**15 else np.int32)
    # by score, then stably by segment (a radix sort of small integers)
    by_score = np.argsort(score)
    order = by_score[np.argsort(key[by_score], kind="stable")]
    offsets = np.zeros(n_seg + 1, dtype=np.int64)
    np.cumsum(np.bincount(key, minlength=n_seg), out=offsets[1:])
    pooled = by_score[~mated[by_score]]
    pooled = pooled[np.argsort(key[pooled] // width, kind="stable")]
    pooled_offsets = np.zeros(len(algorithms) + 1, dtype=np.int64)
    np.cumsum(np.bincount(algorithm[~mated], minlength=len(algorithms)), out=pooled_offsets[1:])
    small = np.int32 if n_units < 2**31 else np.int64
    return SortedScores(
        algorithms=pd.Index(algorithms, name="algorithm"),
        groups=pd.Index(groups, name="group"),
        values=score[order],
        units=units[order].astype(small),
        offsets=offsets,
        pooled_values=score[pooled],
        pooled_units=units[pooled].astype(small),
        pooled_offsets=pooled_offsets,
        n_units=int(n_units),
        higher_is_match=higher_is_match,
        attributes=tuple(scores.attrs.get("attributes", ())),
    )


class CountedStats(SufficientStatistics):
    """The statistics of one replicate: the scores of a :class:`SortedScores`, each
    counted as often as it was drawn (:meth:`SortedScores.replicate`).

    Answers the questions of :class:`~audit.scores.stats.SufficientStatistics` with
    the values :func:`audit.scores.score_stats` of the resampled rows gives.  A score
    not drawn stays in place with a count of 0: counts skip it by the running total,
    and the score range, the smallest score at or above a threshold, the cut points
    and the equal-error candidates move past it to the next drawn score.  The
    equal-error crossing of each group and the score range of each algorithm are
    found once and kept.
    """

    def __init__(self, base: SortedScores, counts: np.ndarray, running: np.ndarray):
        self.algorithms = base.algorithms
        self.groups = base.groups
        self.higher_is_match = base.higher_is_match
        self.attributes = base.attributes
        self._base = base
        self._counts = counts
        self._running = running
        self._offsets = base.offsets.tolist()
        self._totals = running[base.offsets[1:]] - running[base.offsets[:-1]]
        self._width = 2 * len(self.groups) + 1
        self._equal_error: dict = {}
        self._score_range: dict = {}
        self._counted: dict = {}

    def _segment(self, s: int) -> tuple[np.ndarray, np.ndarray]:
        """The scores of segment ``s`` and the running total before each (and after)."""
        lo, hi = self._offsets[s], self._offsets[s + 1]
        return self._base.values[lo:hi], self._running[lo : hi + 1]

    def _below(self, s: int, t: np.ndarray) -> np.ndarray:
        values, running = self._segment(s)
        return running[np.searchsorted(values, t, "left")] - running[0]

    def counts(self, a: int, thresholds) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """As :meth:`audit.scores.ScoreStats.counts`, each score counted as often as drawn
        (kept for the thresholds asked again: the two distribution measures ask for the
        same bin edges)."""
        t = np.atleast_1d(np.asarray(thresholds, dtype="float64"))
        key = (a, t.tobytes())
        found = self._counted.get(key)
        if found is None:
            found = self._counted[key] = self._count(a, t)
        return tuple(x.copy() for x in found)

    def _count(self, a: int, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n_groups, base = len(self.groups), a * self._width
        fnm = np.array([self._below(base + g, t) for g in range(n_groups)], dtype="int64").reshape(
            n_groups, len(t)
        )
        fm = self.n_nonmated(a)[:, None] - np.array(
            [self._below(base + n_groups + g, t) for g in range(n_groups)], dtype="int64"
        ).reshape(n_groups, len(t))
        cross_segment = base + 2 * n_groups
        cross = self._totals[cross_segment] - self._below(cross_segment, t)
        return fm, fnm, cross.astype("int64")

    def n_mated(self, a: int) -> np.ndarray:
        base = a * self._width
        return self._totals[base : base + len(self.groups)].copy()

    def n_nonmated(self, a: int) -> np.ndarray:
        base = a * self._width + len(self.groups)
        return self._totals[base : base + len(self.groups)].copy()

    def n_pooled_nonmated(self, a: int) -> int:
        return int(self.n_nonmated(a).sum() + self._totals[a * self._width + 2 * len(self.groups)])

    def _drawn(self, a: int) -> list[int]:
        """The segments of algorithm ``a`` with a score drawn."""
        base = a * self._width
        return [base + j for j in range(self._width) if self._totals[base + j] > 0]

    def score_range(self, a: int) -> tuple[float, float]:
        """The smallest and the largest drawn score of algorithm ``a`` (found once, then kept)."""
        found = self._score_range.get(a)
        if found is None:
            low, high = [], []
            for s in self._drawn(a):
                values, running = self._segment(s)
                low.append(values[np.searchsorted(running[1:], running[0], "right")])
                high.append(values[np.searchsorted(running[:-1], running[-1], "left") - 1])
            found = self._score_range[a] = (min(low), max(high))
        return found

    def cut_points(self, a: int, kk: np.ndarray) -> np.ndarray:
        """As :meth:`audit.scores.ScoreStats.cut_points`: the float just above the
        ``(k+1)``-th largest pooled non-mated score, counting down from the largest
        only as far as needed (a few times ``k``, for the thresholds at small FMRs)."""
        lo, hi = self._base.pooled_offsets[a], self._base.pooled_offsets[a + 1]
        kk = np.asarray(kk, dtype=np.int64)
        need = int(kk.max()) + 1 if len(kk) else 0
        size = min(hi - lo, max(_TOP, 4 * need))
        while True:
            # counts of the ``size`` largest pooled scores, from the largest down
            drawn = np.cumsum(self._counts.take(self._base.pooled_units[hi - size : hi][::-1]))
            if size == hi - lo or (len(drawn) and drawn[-1] >= need):
                break
            size = min(hi - lo, 4 * size)
        at = np.searchsorted(drawn, kk + 1, "left")  # first reaching k + 1, from the top
        return np.nextafter(self._base.pooled_values[hi - 1 - at], np.inf)

    def smallest_at_or_above(self, a: int, thresholds) -> np.ndarray:
        """The smallest drawn score of algorithm ``a`` at or above each threshold."""
        t = np.atleast_1d(np.asarray(thresholds, dtype="float64"))
        observed = np.full(len(t), np.inf)
        for s in self._drawn(a):
            values, running = self._segment(s)
            at = np.searchsorted(running[1:], running[np.searchsorted(values, t, "left")], "right")
            found = at < len(values)
            np.minimum(observed, values[np.minimum(at, len(values) - 1)], out=observed, where=found)
        return observed

    def _run(self, s: int) -> CountedRun:
        values, running = self._segment(s)
        return CountedRun(values, total=int(running[-1] - running[0]), cumulative=running)

    def equal_error(self, a: int, g: int) -> tuple[float, float, float, float]:
        """As :meth:`audit.scores.ScoreStats.equal_error` (found once per group, then kept)."""
        found = self._equal_error.get((a, g))
        if found is None:
            base = a * self._width
            found = equal_error(self._run(base + g), self._run(base + len(self.groups) + g))
            self._equal_error[(a, g)] = found
        return found

    def order_statistics(self, a: int, g: int, k) -> np.ndarray:
        """The ``k``-th smallest (0-based) of group ``g``'s mated and within-group
        non-mated scores, each counted as often as drawn (inf past the last)."""
        base = a * self._width
        parts = [self._segment(base + g), self._segment(base + len(self.groups) + g)]
        values = np.concatenate([v for v, _ in parts])
        counts = np.concatenate([np.diff(c) for _, c in parts])
        order = np.argsort(values, kind="stable")
        running = np.cumsum(counts[order])
        at = np.searchsorted(running, np.asarray(k), "right")
        if not len(values):
            return np.full(np.shape(k), np.inf)
        return np.where(at < len(values), values[order][np.minimum(at, len(values) - 1)], np.inf)
