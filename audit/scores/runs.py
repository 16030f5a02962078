"""What is read off sorted runs of scores by bisection: the threshold at a count of
pooled non-mated scores, the equal-error crossing of a group, and order statistics
of two runs taken together (the DET quantiles).

A run is a sorted one-dimensional array of scores in match orientation (see
:class:`audit.scores.ScoreStats`), or a :class:`Run`: a window of such an array,
known only between two ranks.  The in-memory statistics pass whole arrays; the
streamed ones (:mod:`audit.scores.streaming`) pass the windows they have kept,
and the same code gives the same floats.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

_SIGN = np.int64(0x7FFFFFFFFFFFFFFF)


def _ordered(x: np.ndarray) -> np.ndarray:
    """Map float64 to int64 so that integer order is float order."""
    i = np.asarray(x, dtype="float64").view(np.int64)
    return np.where(i < 0, ~(i & _SIGN), i)


def _unordered(o: np.ndarray) -> np.ndarray:
    o = np.asarray(o, dtype=np.int64)
    i = np.where(o < 0, (~o) | ~_SIGN, o)
    return i.view(np.float64)


@dataclass(frozen=True)
class Run:
    """A sorted run of ``total`` scores of which ``values`` are known: the scores at
    ranks ``below`` to ``below + len(values) - 1``.

    Every score before them is smaller than every known one; ``after`` is the
    first score after them (``inf`` when none, or when only known to be at least as
    large as the first score after the other run of a pair: see :func:`equal_error`).
    :meth:`rank` is exact for thresholds from the smallest known value to ``after``.
    """

    values: np.ndarray
    below: int = 0
    total: int | None = None
    after: float = np.inf

    def __post_init__(self):
        if self.total is None:
            object.__setattr__(self, "total", len(self.values))

    def rank(self, t):
        """How many scores of the run lie below ``t``."""
        return self.below + np.searchsorted(self.values, t, "left")

    def before(self, t):
        """The largest known score below ``t`` (None when none is known)."""
        i = np.searchsorted(self.values, t, "left")
        return self.values[i - 1] if i > 0 else None

    def at_or_after(self, i: int) -> float:
        """The first known score from position ``i`` of ``values`` on (``after`` past them)."""
        return float(self.values[i]) if i < len(self.values) else self.after


def equal_error(mated: Run, nonmated: Run) -> tuple[float, float, float, float]:
    """EER of one group: (eer, internal threshold, fmr, fnmr) at the crossing.

    Candidate thresholds are every observed score and ``+inf``; the threshold
    minimising ``|FMR - FNMR|`` is taken (the smallest one on ties) and the
    EER is the mean of FMR and FNMR there (Elobaid et al., eq. 19).

    ``FMR - FNMR`` never increases with the threshold, so the crossing is found
    by bisection on the two sorted runs (no sort, no array of candidates):
    the first candidate where the difference is ``<= 0``, or the one before it
    if closer to zero -- moved back to the first candidate with the same
    difference, which is the one ``argmin`` over all candidates would take.

    Between two distinct candidates the difference falls by at least
    ``1 / max(n_mated, n_nonmated)``, far more than its rounding error, so the
    candidates of a window run suffice when the window holds the crossing, the
    candidate before it and, past its end, the first candidate after it (the
    ``after`` of either run).
    """
    n_m, n_nm = mated.total, nonmated.total

    def diff(t: float) -> float:
        fmr = (n_nm - nonmated.rank(t)) / n_nm
        return fmr - mated.rank(t) / n_m

    def first(run: Run, bound: float) -> float:
        """Smallest known score of ``run`` with ``diff <= bound`` (else its ``after``)."""
        array = run.values
        lo, hi = 0, len(array)  # diff(array[i]) <= bound for i >= hi
        while lo < hi:
            mid = (lo + hi) // 2
            if diff(array[mid]) <= bound:
                hi = mid
            else:
                lo = mid + 1
        return run.at_or_after(lo)

    def smallest(bound: float) -> float:
        return min(first(mated, bound), first(nonmated, bound))

    at = smallest(0.0)
    before = [v for run in (mated, nonmated) if (v := run.before(at)) is not None]
    if before:
        previous = float(max(before))
        if abs(diff(previous)) <= abs(diff(at)):
            at = smallest(diff(previous))
    fmr = (n_nm - nonmated.rank(at)) / n_nm
    fnmr = mated.rank(at) / n_m
    return (fmr + fnmr) / 2.0, at, float(fmr), float(fnmr)


def least_at_or_above(arrays: list[np.ndarray], thresholds) -> np.ndarray:
    """The least value of sorted arrays taken together at or above each threshold (+inf
    where none is), by a search in each."""
    t = np.atleast_1d(np.asarray(thresholds, dtype="float64"))
    least = np.full(len(t), np.inf)
    for s in arrays:
        if len(s):
            at = np.searchsorted(s, t, "left")
            np.minimum(least, s[np.minimum(at, len(s) - 1)], out=least, where=at < len(s))
    return least


#: Scores an array, on average, from which :func:`kth_of_sorted` searches the sorted arrays
#: rather than select in a copy of them all: a search costs about 64 steps of one
#: :func:`numpy.searchsorted` an array (some 0.2 ms an array), a selection about 4 ns a
#: score (side by side: 17 arrays of 50 million scores in all, 3.7 ms against 1.2 s;
#: 301 arrays of a million, 57 ms against 4 ms).
_SEARCHED_FROM = 50_000


def kth_of_sorted(arrays: list[np.ndarray], k) -> np.ndarray:
    """The ``k``-th smallest values (0-based, an array) of sorted float arrays taken
    together.  Where the arrays hold many scores each, found in the arrays themselves:
    for each ``k``, the least order key (:func:`audit.scores.counting.key64`) of a value
    with more than ``k`` scores at or below it, by bisection between the least and the
    greatest score, each step one :func:`numpy.searchsorted` an array for every ``k`` at
    once; no copy of the arrays is made.  Otherwise by a selection in one copy of them
    (:func:`kth_of_many`).  A zero is found as +0 (the two zeros share a key); a ``k``
    beyond the last score gives +inf."""
    from audit.scores.counting import key64, unkey64

    k = np.atleast_1d(np.asarray(k, dtype=np.int64))
    arrays = [a for a in arrays if len(a)]
    total = sum(len(a) for a in arrays)
    if (k >= total).any():  # beyond the last: +inf
        out = np.full(len(k), np.inf)
        inside = k < total
        if inside.any():
            out[inside] = kth_of_sorted(arrays, k[inside])
        return out
    if len(arrays) == 1:
        return arrays[0][k]
    searched = all(a.dtype == np.float64 for a in arrays)  # (by float64 values)
    if not searched or total < _SEARCHED_FROM * len(arrays):
        return kth_of_many(arrays, k)
    ends = np.array([[a[0], a[-1]] for a in arrays], dtype=np.float64)
    lo = np.full(len(k), key64(ends[:, 0].min()))
    hi = np.full(len(k), key64(ends[:, 1].max()))
    one = np.uint64(1)
    while (live := lo < hi).any():
        mid = lo + ((hi - lo) >> one)  # keys between two scores' keys are no NaN's
        value = unkey64(mid)
        at_or_below = np.searchsorted(arrays[0], value, "right")
        for other in arrays[1:]:
            at_or_below += np.searchsorted(other, value, "right")
        enough = at_or_below > k
        hi = np.where(live & enough, mid, hi)
        lo = np.where(live & ~enough, mid + one, lo)
    return unkey64(lo)


#: Scores from which :func:`kth_of_many` finds one or two ranks among the scores
#: between two values of a sample that bracket them, not in a copy of them all, and the
#: sample's size.  The copy is what a selection costs most: side by side, of 45 million
#: scores in 9 arrays, 1.0 s to copy them and 0.09 s to select in the copy, against
#: 0.26 s narrowed.
_NARROWED_FROM = 1 << 20
_NARROWING_SAMPLE = 1 << 14


def kth_of_many(arrays: list[np.ndarray], k: np.ndarray) -> np.ndarray:
    """The ``k``-th smallest values (0-based, an array) of the arrays together, in any
    order each, by a selection in the one copy their concatenation makes (partitioned in
    place: :func:`numpy.partition` would copy it again); one or two ranks of many scores
    by a selection among those a sample brackets them with (:func:`_narrowed`)."""
    k = np.asarray(k)
    wanted = np.unique(k)
    total = sum(len(a) for a in arrays)
    if total >= _NARROWED_FROM and len(wanted) <= 2:
        found = [_narrowed(arrays, rank, total) for rank in wanted.tolist()]
        if all(v is not None for v in found):
            return np.asarray(found)[np.searchsorted(wanted, k)]
    values = np.concatenate(arrays)
    values.partition(wanted)
    return values[k]


def _narrowed(arrays: list[np.ndarray], rank: int, total: int):
    """The ``rank``-th smallest of the arrays together, selected among the scores between
    two values of a sample of them that bracket it (8 standard errors of its place in
    the sample on each side); None where they do not (the sample misled).  The sample
    is drawn at places seeded by the rank: it decides how fast, not what is found."""
    places = np.sort(np.random.default_rng(rank).integers(0, total, _NARROWING_SAMPLE))
    ends = np.cumsum([0, *(len(a) for a in arrays)])
    sample = np.concatenate(
        [
            a[places[(places >= start) & (places < end)] - start]
            for a, start, end in zip(arrays, ends[:-1], ends[1:], strict=True)
        ]
    )
    sample.sort()
    at, margin = (rank + 0.5) / total * len(sample), 4 * math.sqrt(len(sample))
    low = sample[max(0, math.floor(at - margin))]
    high = sample[min(len(sample) - 1, math.ceil(at + margin))]
    below = sum(int(np.count_nonzero(a < low)) for a in arrays)
    between = np.concatenate([a[(a >= low) & (a <= high)] for a in arrays])
    if not below <= rank < below + len(between):
        return None
    between.partition(rank - below)
    return between[rank - below]


def merged_quantiles(n: int, q: np.ndarray, kth) -> np.ndarray:
    """``numpy.quantile`` (method "linear") of ``n`` sorted scores at ``q``, from the order
    statistics it interpolates (``kth(ranks)``, 0-based), with its formulas."""
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    following = previous + 1
    above = virtual >= n - 1
    previous[above] = n - 1
    following[above] = n - 1
    previous, following = previous.astype(np.intp), following.astype(np.intp)
    gamma = virtual - np.where(above, -1, previous)
    a, b = kth(previous), kth(following)
    with np.errstate(over="ignore", invalid="ignore"):
        diff = b - a
        result = a + diff * gamma
        np.subtract(b, diff * (1 - gamma), out=result, where=gamma >= 0.5)
    wide = ~np.isfinite(diff)
    if wide.any():  # scores near both ends of the floats (-1e308 and 1e308): b - a overflows
        # the same formulas on the halves, doubled back: halving and doubling are exact
        half_a, half_b, g = a[wide] / 2, b[wide] / 2, gamma[wide]
        half = half_b - half_a
        result[wide] = np.where(g >= 0.5, half_b - half * (1 - g), half_a + half * g) * 2
    return result


# ------------------------------------------------ threshold at a count of scores

#: Largest window of candidate scores that the threshold search sorts outright
#: instead of bisecting further.
_WINDOW = 1024

#: Size of the sample of the pooled non-mated scores that brackets each threshold.
_SKETCH = 1 << 14


def _union_of_ranges(start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """Sorted indices covered by the half-open ranges ``[start[i], stop[i])``, each once."""
    order = np.argsort(start, kind="stable")
    start, stop = start[order], np.maximum.accumulate(stop[order])
    # a range opens a new block unless it starts inside the blocks before it
    new = np.ones(len(start), dtype=bool)
    new[1:] = start[1:] > stop[:-1]
    first = np.flatnonzero(new)
    begin = start[first]
    end = np.append(stop[first[1:] - 1], stop[-1]) if len(first) else stop[:0]
    length = end - begin
    keep = length > 0
    begin, length = begin[keep], length[keep]
    if not len(begin):
        return np.zeros(0, dtype=np.int64)
    shift = np.repeat(begin - np.concatenate(([0], np.cumsum(length)[:-1])), length)
    return shift + np.arange(length.sum())


def _sketch_brackets(
    runs: list[np.ndarray], n: int, q: np.ndarray, low: float, high: float
) -> tuple[np.ndarray, np.ndarray]:
    """Likely bounds ``lo <= v < hi`` of the ``q``-th smallest pooled score, from a sample.

    Every ``step``-th score of each sorted run is kept; if ``c`` sample scores
    are ``<= x``, the pooled count ``<= x`` lies within ``step * (len(runs) + 1)``
    of ``step * c``, so bounds that far from ``q / step`` in the sorted sample
    hold unless ties get in the way (the caller checks them).
    """
    step = max(1, n // _SKETCH)
    sample = np.sort(np.concatenate([r[step - 1 :: step] for r in runs]))
    if not len(sample):
        return np.full(len(q), low), np.full(len(q), high)
    margin = len(runs) + 2
    at_lo = q // step - margin
    at_hi = q // step + margin
    lo = np.where(at_lo >= 0, sample[np.clip(at_lo, 0, len(sample) - 1)], low)
    hi = np.where(at_hi < len(sample), sample[np.clip(at_hi, 0, len(sample) - 1)], high)
    return lo, hi


def cut_points(runs: list[np.ndarray], kk: np.ndarray) -> np.ndarray:
    """Per count ``k`` in ``kk`` (each below the pooled size ``N``): the smallest ``t`` (in
    float order) with ``count(pooled >= t) <= k``, the float just above ``v``, the
    ``(k+1)``-th largest pooled score of the sorted ``runs`` (non-empty).

    ``v`` is found exactly, for all counts at once: bounds from a sorted sample
    of about :data:`_SKETCH` pooled scores (checked by exact counts; a count
    whose bounds fail, which only heavy ties can cause, starts from the whole
    range), then a bisection on the bit patterns of the floats (so ties and
    signed zeros follow float comparison) until fewer than :data:`_WINDOW`
    scores remain between the bounds of each count, then one sort of the union
    of those windows, from which each ``v`` is read by its rank.  Cost: a few
    hundred binary searches and sorts of a few thousand scores, independent of
    the number of scores but for the depth of the searches.
    """
    n = sum(len(s) for s in runs)
    nm_low = min(s[0] for s in runs)
    nm_max = max(s[-1] for s in runs)
    # invariant: count(>= lo) > k >= count(>= hi); below[r] = count(run r < bound)
    lo_f, hi_f = _sketch_brackets(runs, n, n - 1 - kk, nm_low, np.nextafter(nm_max, np.inf))
    below_lo = np.array([np.searchsorted(r, lo_f, "left") for r in runs], dtype=np.int64)
    below_hi = np.array([np.searchsorted(r, hi_f, "left") for r in runs], dtype=np.int64)
    wrong = (n - below_lo.sum(axis=0) <= kk) | (n - below_hi.sum(axis=0) > kk)
    if wrong.any():  # ties can defeat the sketch: start those from the whole range
        lo_f[wrong], hi_f[wrong] = nm_low, np.nextafter(nm_max, np.inf)
        below_lo[:, wrong] = 0
        below_hi[:, wrong] = np.array([len(r) for r in runs])[:, None]
    lo, hi = _ordered(lo_f), _ordered(hi_f)
    active = np.arange(len(kk))
    while True:
        window = below_hi[:, active].sum(axis=0) - below_lo[:, active].sum(axis=0)
        keep = (window > _WINDOW) & (hi[active] > lo[active] + 1)
        active = active[keep]
        if not len(active):
            break
        l, h = lo[active], hi[active]
        mid = l // 2 + h // 2 + ((l % 2) + (h % 2)) // 2
        t = _unordered(mid)
        below = np.array([np.searchsorted(r, t, "left") for r in runs], dtype=np.int64)
        ok = n - below.sum(axis=0) <= kk[active]
        hi[active] = np.where(ok, mid, h)
        lo[active] = np.where(ok, l, mid)
        below_hi[:, active] = np.where(ok, below, below_hi[:, active])
        below_lo[:, active] = np.where(ok, below_lo[:, active], below)
    result = _unordered(hi)
    open_ = np.flatnonzero(hi > lo + 1)
    if len(open_):
        # the (k+1)-th largest lies among the scores in [lo, hi): gather the union of
        # these windows once, sort it, and read each answer off by its rank
        # runs side by side in one index space, so that one union serves them all
        base = np.concatenate(([0], np.cumsum([len(r) for r in runs])))
        covered = _union_of_ranges(
            (below_lo[:, open_] + base[:-1, None]).ravel(),
            (below_hi[:, open_] + base[:-1, None]).ravel(),
        )
        cut = np.searchsorted(covered, base).tolist()
        union = np.sort(
            np.concatenate(
                [run.take(covered[cut[r] : cut[r + 1]] - base[r]) for r, run in enumerate(runs)]
            )
        )
        top = np.searchsorted(union, result[open_], "left")  # union scores below hi
        above = n - below_hi[:, open_].sum(axis=0)  # pooled scores at or above hi
        result[open_] = np.nextafter(union[top - (kk[open_] + 1 - above)], np.inf)
    return result
