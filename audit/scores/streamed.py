"""What passes over a streamed score set have learnt, and the statistics answered from it.

What is known of the scores of each algorithm is a :class:`Line`: counts per
segment (mated and within-group non-mated per group, cross-group non-mated)
below a growing set of edges, and :class:`Window` s between two edges whose
scores are all kept.  :class:`StreamedStats` answers the questions of
:class:`~audit.scores.stats.SufficientStatistics` from the lines -- a count
below a threshold at an edge or inside a window, an order statistic inside a
window, the EER from the window holding its crossing -- and records what it
cannot answer yet in ``needs`` (with a stand-in answer, so that one attempt
finds all it misses); :class:`audit.scores.streaming.StreamingScores` runs the
passes that answer them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from audit.scores import counting
from audit.scores.runs import Run, equal_error, kth_of_many, kth_of_sorted, least_at_or_above
from audit.scores.stats import SufficientStatistics
from audit.scores.zones import COUNT, KEEP, SPLIT, Partial, Plan

#: Scans a window in no order answers before it is sorted (a sort costs about as
#: many scans as the log of its size: sorting pays once questions keep coming).
_SCANS = 8
#: Ranks asked at once above which a window is sorted rather than selected in.
_SELECT = 16


@dataclass
class Window:
    """All the scores ``lo <= s < hi`` of an algorithm, per segment: sorted when
    ``ordered``, else in no order, so that the few questions a sweep asks are
    answered by a scan or a selection (:func:`numpy.partition`) rather than a sort.
    After :data:`_SCANS` scans, it sorts itself."""

    lo: float
    hi: float
    by_segment: list[np.ndarray]
    ordered: bool = True
    scans: int = 0
    #: Segments sorted (in place) while the others are not: those an order statistic
    #: of many ranks was asked of.
    sorted_segments: set = field(default_factory=set)

    def population(self, columns: tuple) -> np.ndarray:
        """The scores of some segments, sorted."""
        if len(columns) == 1:
            return (
                self.by_segment[columns[0]]
                if self.ordered
                else np.sort(self.by_segment[columns[0]])
            )
        if self.hi == np.nextafter(self.lo, np.inf):  # one value: no copies of it
            return np.broadcast_to(self.lo, (sum(len(self.by_segment[c]) for c in columns),))
        return np.sort(np.concatenate([self.by_segment[c] for c in columns]))

    def sort(self, columns: tuple | None = None) -> None:
        """Sort the scores of each segment, or of the segments ``columns`` (in place)."""
        if self.ordered:
            return
        for c in range(len(self.by_segment)) if columns is None else columns:
            if c not in self.sorted_segments:
                self.by_segment[c].sort()
                self.sorted_segments.add(c)
        self.ordered = len(self.sorted_segments) == len(self.by_segment)

    def scan(self) -> bool:
        """Count one more question; True when it is to be answered by a scan (the
        window is still in no order), False once sorted."""
        if not self.ordered:
            self.scans += 1
            if self.scans >= _SCANS:
                self.sort()
        return not self.ordered

    def below(self, t: np.ndarray) -> np.ndarray:
        """How many scores of each segment lie below each threshold of ``t``:
        (thresholds, segments), one scan or search a segment for all of them."""
        out = np.zeros((len(t), len(self.by_segment)), dtype=np.int64)
        j = 0
        while j < len(t) and self.scan():  # a scan a threshold, until the window sorts
            out[j] = [np.count_nonzero(s < t[j]) for s in self.by_segment]
            j += 1
        if j < len(t):
            for c, s in enumerate(self.by_segment):
                if len(s):
                    out[j:, c] = np.searchsorted(s, t[j:], "left")
        return out

    def select(self, columns: tuple, ranks: np.ndarray) -> np.ndarray:
        """The scores at 0-based ascending ranks among some segments of a window in no
        order, by a selection (the least and the greatest by a scan)."""
        segments = [s for s in (self.by_segment[c] for c in columns) if len(s)]
        last = sum(len(s) for s in segments) - 1
        if np.isin(ranks, (0, last)).all():
            low = min(s.min() for s in segments) if (ranks == 0).any() else np.nan
            high = max(s.max() for s in segments) if (ranks == last).any() else np.nan
            return np.where(ranks == 0, low, high)
        return kth_of_many(segments, ranks)

    def kth(self, columns: tuple, ranks: np.ndarray) -> np.ndarray:
        """The scores at 0-based ascending ranks among some sorted segments of a window,
        found in the segments themselves (:func:`audit.scores.runs.kth_of_sorted`): no
        sorted copy of them together, which a window of millions of scores took
        seconds to make, again for each set of segments asked of it."""
        if self.hi == np.nextafter(self.lo, np.inf):  # one value
            return np.full(len(ranks), self.lo)
        return kth_of_sorted([self.by_segment[c] for c in columns], ranks)

    def least_at_or_above(self, columns: tuple, t: float) -> float | None:
        """The smallest score of some segments of a sorted window at or above ``t``
        (None when none is; scores are finite), by a search in each."""
        least = float(least_at_or_above([self.by_segment[c] for c in columns], t)[0])
        return None if least == np.inf else least

    def smallest_at_or_above(self, columns: tuple, t: float) -> float | None:
        """The smallest score of some segments at or above ``t`` (None when none is), by
        a scan of a window in no order (one compiled loop where it was built, a
        comparison and a copy of the scores at or above ``t`` otherwise)."""
        segments = [self.by_segment[c] for c in columns]
        if counting.compiled_now():
            from audit.scores._compiled import least_at_or_above

            found = [v for ok, v in (least_at_or_above(s, t) for s in segments) if ok]
        else:
            found = [f.min() for f in (s[s >= t] for s in segments) if len(f)]
        return float(min(found)) if found else None


class Line:
    """What is known of one algorithm's scores: counts per segment below each edge
    (``edges`` sorted, from -inf to inf), and windows between consecutive edges."""

    def __init__(self, totals: np.ndarray):
        self.edges = np.array([-np.inf, np.inf])
        self.below = np.stack([np.zeros_like(totals), totals])
        self.windows: dict[float, Window] = {}

    @property
    def totals(self) -> np.ndarray:
        return self.below[-1]

    def add_edges(self, edges: np.ndarray, below: np.ndarray) -> None:
        values = np.concatenate([self.edges, edges])
        rows = np.concatenate([self.below, below])
        order = np.argsort(values, kind="stable")
        values, rows = values[order], rows[order]
        new = np.ones(len(values), dtype=bool)
        new[1:] = values[1:] != values[:-1]
        self.edges, self.below = values[new], rows[new]

    def rows(self, lo: float, hi: float) -> int:
        """Rows between two edges."""
        i, j = np.searchsorted(self.edges, [lo, hi], "left")
        return int(self.below[j].sum() - self.below[i].sum())

    def interval(self, t: np.ndarray) -> np.ndarray:
        """Index ``i`` of the interval ``edges[i] <= t < edges[i + 1]`` (the last edge for inf)."""
        return np.minimum(np.searchsorted(self.edges, t, "right") - 1, len(self.edges) - 1)


# ------------------------------------------------------------- the statistics


class StreamedStats(SufficientStatistics):
    """The :class:`~audit.scores.stats.SufficientStatistics` of a streamed score set,
    from what passes over it have learnt (see the module docstring).

    A question it cannot answer yet is recorded in ``needs`` (with a stand-in
    answer); :meth:`StreamingScores.apply` runs passes until an attempt needs
    nothing.  ``record``, when a list, collects every order statistic read (to
    plan a pass from a sample).
    """

    def __init__(self, algorithms, groups, lines, higher_is_match, attributes):
        self.algorithms = pd.Index(algorithms, name="algorithm")
        self.groups = pd.Index(groups, name="group")
        self.lines: list[Line] = lines
        self.higher_is_match = higher_is_match
        self.attributes = attributes
        self.needs: list[tuple] = []
        self.record: list | None = None
        self._sorted: dict = {}
        self._found: dict = {}  # (algorithm, segments): {rank: score} found in windows

    # -- what a line answers
    def _below(self, a: int, thresholds) -> np.ndarray:
        """Counts per segment below each threshold, (thresholds, segments)."""
        line = self.lines[a]
        t = np.atleast_1d(np.asarray(thresholds, dtype="float64"))
        at = line.interval(t)
        out = line.below[at].copy()
        inside = np.flatnonzero(line.edges[at] != t)
        # the thresholds inside one window are counted together
        for i in np.unique(at[inside]).tolist():
            here = inside[at[inside] == i]
            window = line.windows.get(float(line.edges[i]))
            if window is None:
                self.needs.extend(("point", a, float(v)) for v in t[here].tolist())
                continue
            out[here] += window.below(t[here])
        return out

    def _columns(self, population: str, g: int = 0) -> tuple:
        n = len(self.groups)
        if population == "all":
            return tuple(range(2 * n + 1))
        if population == "nonmated":
            return tuple(range(n, 2 * n + 1))
        if population == "mated":
            return tuple(range(n))
        return (g, n + g)  # a group's mated and within-group non-mated scores

    def _locate(self, a: int, columns: tuple, ranks) -> np.ndarray:
        """The scores at 0-based ascending ranks among the segments ``columns``.  Each
        found in a window is kept: it is a score of the data whatever later passes
        learn, and an attempt after a pass asks again what the one before found."""
        line = self.lines[a]
        ranks = np.atleast_1d(np.asarray(ranks, dtype=np.int64))
        cumulative = line.below[:, list(columns)].sum(axis=1)
        if self.record is not None:
            self.record.append(("rank", a, columns, ranks.copy(), int(cumulative[-1])))
        found = self._found.setdefault((a, columns), {})
        known = [found.get(rank) for rank in ranks.tolist()]
        out = np.array([np.nan if v is None else v for v in known], dtype=np.float64)
        todo = np.isnan(out)
        at = np.searchsorted(cumulative, ranks, "right") - 1
        for i in np.unique(at[todo]).tolist():
            here = todo & (at == i)
            lo, hi = float(line.edges[i]), float(line.edges[i + 1])
            window = line.windows.get(lo)
            if window is None:
                for rank in np.unique(ranks[here]).tolist():
                    self.needs.append(("rank", a, columns, rank, lo, hi))
                out[here] = lo if np.isfinite(lo) else hi if np.isfinite(hi) else 0.0
                continue
            inside = ranks[here] - cumulative[i]
            if len(np.unique(inside)) <= _SELECT and window.scan():
                out[here] = window.select(columns, inside)
            elif (a, window.lo, columns) in self._sorted:  # (a sample's, planning on it)
                out[here] = self._sorted[a, window.lo, columns][inside]
            else:  # its segments sorted in place, once, for every question after
                window.sort(columns)
                out[here] = window.kth(columns, inside)
            found.update(zip(ranks[here].tolist(), out[here].tolist(), strict=True))
        return out

    def _population(self, a: int, window: Window, columns: tuple) -> np.ndarray:
        """The sorted scores of some segments in a window (kept for the next question)."""
        key = (a, window.lo, columns)
        if key not in self._sorted:
            self._sorted[key] = window.population(columns)
        return self._sorted[key]

    # -- the protocol
    def n_mated(self, a: int) -> np.ndarray:
        return self.lines[a].totals[: len(self.groups)].copy()

    def n_nonmated(self, a: int) -> np.ndarray:
        n = len(self.groups)
        return self.lines[a].totals[n : 2 * n].copy()

    def n_pooled_nonmated(self, a: int) -> int:
        return int(self.lines[a].totals[len(self.groups) :].sum())

    def counts(self, a: int, thresholds) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = len(self.groups)
        below = self._below(a, thresholds)
        totals = self.lines[a].totals
        false_matches = totals[n : 2 * n, None] - below[:, n : 2 * n].T
        return false_matches, below[:, :n].T.copy(), totals[2 * n] - below[:, 2 * n]

    def score_range(self, a: int) -> tuple[float, float]:
        n = int(self.lines[a].totals.sum())
        low, high = self._locate(a, self._columns("all"), [0, n - 1])
        return low, high

    def cut_points(self, a: int, kk: np.ndarray) -> np.ndarray:
        n = self.n_pooled_nonmated(a)
        v = self._locate(a, self._columns("nonmated"), n - 1 - np.asarray(kk))
        return np.nextafter(v, np.inf)

    def smallest_at_or_above(self, a: int, thresholds) -> np.ndarray:
        line = self.lines[a]
        columns = self._columns("all")
        total = int(line.totals.sum())
        t = np.atleast_1d(np.asarray(thresholds, dtype="float64"))
        out = np.full(len(t), np.inf)
        for j, i in enumerate(line.interval(t).tolist()):
            if line.edges[i] == t[j]:
                rank = int(line.below[i].sum())
            elif (window := line.windows.get(float(line.edges[i]))) is not None:
                if window.scan():
                    found = window.smallest_at_or_above(columns, t[j])
                else:
                    found = window.least_at_or_above(columns, t[j])
                if found is not None:
                    out[j] = found
                    continue
                rank = int(line.below[i + 1].sum())
            else:
                self.needs.append(("point", a, float(t[j])))
                out[j] = t[j]
                continue
            if rank < total:
                out[j] = self._locate(a, columns, [rank])[0]
        return out

    def equal_error(self, a: int, g: int) -> tuple[float, float, float, float]:
        """The EER of :func:`audit.scores.runs.equal_error`, from the window holding the
        crossing: the interval between edges where the last group candidate with
        ``FMR - FNMR > 0`` first found at an edge lies (see its docstring)."""
        line = self.lines[a]
        n = len(self.groups)
        mated, nonmated = line.below[:, g], line.below[:, n + g]
        n_m, n_nm = int(mated[-1]), int(nonmated[-1])
        diff = (n_nm - nonmated) / n_nm - mated / n_m  # at each edge, as equal_error has it
        inside = np.diff(mated + nonmated)  # group scores between consecutive edges
        j = int(np.flatnonzero((inside > 0) & (diff[:-1] > 0))[-1])
        lo = float(line.edges[j])
        window = line.windows.get(lo)
        if self.record is not None:
            self.record.append(("eer", a, g))
        if window is None:
            self.needs.append(("eer", a, g, lo, float(line.edges[j + 1])))
            return 0.5, lo if np.isfinite(lo) else 0.0, 0.5, 0.5

        window.sort()

        def runs(after: float) -> tuple[Run, Run]:
            return (
                Run(window.by_segment[g], int(mated[j]), n_m, after),
                Run(window.by_segment[n + g], int(nonmated[j]), n_nm, after),
            )

        m, nm = runs(np.inf)
        last = max(s[-1] for s in (m.values, nm.values) if len(s))
        rank = int(mated[j + 1] + nonmated[j + 1])  # the first group score after the window
        if (n_nm - nm.rank(last)) / n_nm - m.rank(last) / n_m > 0 and rank < n_m + n_nm:
            # no candidate of the window crosses: the crossing is that next score
            m, nm = runs(float(self._locate(a, self._columns("group", g), [rank])[0]))
        return equal_error(m, nm)

    def order_statistics(self, a: int, g: int, k) -> np.ndarray:
        return self._locate(a, self._columns("group", g), k)

    def pooled_order_statistics(self, a: int, mated: bool, k) -> np.ndarray:
        return self._locate(a, self._columns("mated" if mated else "nonmated"), k)


def learnt(plan: Plan, partial: Partial, *, ordered: bool = False) -> tuple[tuple, list[Line]]:
    """Labels (in order of first appearance) and lines of what one pass learnt; the
    windows' scores sorted when ``ordered`` (a sample, which answers many questions),
    else left in no order (see :class:`Window`).  The partial's kept rows are
    consumed (:func:`audit.scores.counting.group` frees them as it places them)."""
    algorithms = list(partial.first[0])
    groups = list(dict.fromkeys([*partial.first[1], *partial.first[2]]))
    columns = np.array(
        [groups.index(g) for g in partial.groups]
        + [len(groups) + groups.index(g) for g in partial.groups]
        + [2 * len(groups)],
        dtype=np.intp,
    )
    width = 2 * len(groups) + 1
    counts = np.zeros((len(partial.counts), width), dtype=np.int64)
    counts[:, columns] = partial.counts
    # kept scores grouped by (zone, segment); the partial's kept rows are consumed
    cuts = np.zeros(len(counts) * width + 1, dtype=np.int64)
    if partial.kept:
        # the groups may have been found in another order
        order = None if (columns == np.arange(width)).all() else columns
        cuts, score = counting.group(partial.kept, order, width, len(counts) * width)
        cuts = cuts.tolist()  # indexed one at a time below
        none = score[:0]
    split = np.zeros((*partial.split.shape[:2], width), dtype=np.int64)
    split[:, :, columns] = partial.split
    n_plan = partial.plan_algorithms
    lines = []
    for label in algorithms:
        p = partial.algorithms.index(label)
        if p < n_plan:
            first, last = int(plan.offsets[p]), int(plan.offsets[p + 1])
            bounds, actions = plan.bounds[p], plan.actions[p]
        else:
            first = last = plan.zones + p - n_plan
            last += 1
            bounds, actions = np.zeros(0), [KEEP if plan.keep_new else COUNT]
        zones = counts[first:last]
        line = Line(zones.sum(axis=0))
        below = np.cumsum(zones, axis=0)
        # the edges learnt, added at once: one sort of the line, not one a split zone
        edges, rows = [np.asarray(bounds, dtype=np.float64)], [below[:-1]]
        for z, action in enumerate(actions):
            lo = float(bounds[z - 1]) if z > 0 else -np.inf
            hi = float(bounds[z]) if z < len(bounds) else np.inf
            if action == KEEP:
                at = (first + z) * width
                # a segment without scores in the window is one shared empty array: with
                # many groups most are, and each view of its own held ~100 bytes (of
                # 12,000 windows of 61 segments, 87 MB for 100,000 scores)
                by_segment = [
                    score[cuts[at + c] : cuts[at + c + 1]] if cuts[at + c + 1] > cuts[at + c]
                    else none
                    for c in range(width)
                ]  # fmt: skip
                window = Window(lo, hi, by_segment, ordered=False)
                if ordered:
                    window.sort()
                line.windows[lo] = window
            elif action == SPLIT:
                slot = plan.split_slot(first + z)
                inner = plan.sub_bounds(p, z)
                start = below[z - 1] if z > 0 else np.zeros(width, dtype=np.int64)
                sub = np.cumsum(split[slot], axis=0)[: len(inner)]
                edges.append(np.asarray(inner, dtype=np.float64))
                rows.append(start + sub)
        line.add_edges(np.concatenate(edges), np.concatenate(rows))
        lines.append(line)
    return (algorithms, groups), lines


def aligned(sample: StreamedStats, algorithms: list, groups: list) -> StreamedStats:
    """The sample's statistics over the data's labels (None for an algorithm it lacks)."""
    n = len(sample.groups)
    lines: list = []
    for label in algorithms:
        if label not in sample.algorithms:
            lines.append(None)
            continue
        window = sample.lines[sample.algorithms.get_loc(label)].windows[-np.inf]

        def column(group, offset: int, window=window) -> np.ndarray:
            if group not in sample.groups:
                return np.zeros(0)
            return window.by_segment[sample.groups.get_loc(group) + offset]

        by_segment = [column(g, 0) for g in groups] + [column(g, n) for g in groups]
        by_segment.append(window.by_segment[2 * n])
        line = Line(np.array([len(x) for x in by_segment], dtype=np.int64))
        line.windows[-np.inf] = Window(-np.inf, np.inf, by_segment)
        lines.append(line)
    return StreamedStats(algorithms, groups, lines, sample.higher_is_match, sample.attributes)
