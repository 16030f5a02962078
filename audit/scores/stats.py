"""Per-group sufficient statistics of a score table (:class:`ScoreStats`): the streaming seam."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from audit.exceptions import UnknownNameError
from audit.scores.runs import Run, cut_points, equal_error, kth_of_sorted, least_at_or_above
from audit.tables.scores import UNKNOWN_ALGORITHM
from audit.validation import SCORES, Names, validate_params


class SufficientStatistics:
    """What everything downstream of the statistics reads, and all it reads.

    :class:`ScoreStats` holds the sorted scores in memory;
    :class:`audit.scores.streaming.StreamedStats` answers the same questions from
    counts and windows of scores gathered in passes over data that memory does not
    hold.  Operating points (:mod:`audit.scores.thresholds`) and score measures
    (:mod:`audit.measures.scores`) use only these attributes and methods, so both
    give the same values, bit for bit.  Scores and thresholds are internal: in
    match orientation (higher means more likely a match).

    Attributes: ``algorithms``, ``groups`` (:class:`pandas.Index`),
    ``higher_is_match``, ``attributes``.  Methods: :meth:`counts`,
    :meth:`n_mated`, :meth:`n_nonmated`, :meth:`n_pooled_nonmated`, :meth:`rates_held`,
    :meth:`score_range`, :meth:`cut_points`, :meth:`smallest_at_or_above`,
    :meth:`equal_error`, :meth:`order_statistics`, :meth:`pooled_order_statistics`,
    :meth:`medians`, :meth:`to_internal`, :meth:`to_external`, :meth:`algorithm_index`.
    """

    algorithms: pd.Index
    groups: pd.Index
    higher_is_match: bool
    attributes: tuple

    def to_internal(self, threshold):
        """A threshold in the caller's units, in match orientation."""
        t = np.asarray(threshold, dtype="float64")
        return t if self.higher_is_match else -t

    def to_external(self, threshold):
        t = np.asarray(threshold, dtype="float64")
        return t if self.higher_is_match else -t

    def rates_held(self) -> tuple[str, ...]:
        """The error rates these scores give: ``("fmr", "fnmr")``, or ``("fmr",)`` for a
        set of non-mated comparisons only, ``("fnmr",)`` for mated comparisons only."""
        algorithms = range(len(self.algorithms))
        mated = any(self.n_mated(a).sum() > 0 for a in algorithms)
        nonmated = any(self.n_pooled_nonmated(a) > 0 for a in algorithms)
        return tuple(rate for rate, held in (("fmr", nonmated), ("fnmr", mated)) if held)

    def medians(self, a: int) -> tuple[float, float]:
        """The median mated score and the median non-mated score (within and across
        groups) of algorithm ``a``, internal (NaN for none): as :func:`numpy.median`,
        the mean of the two middle scores of an even count."""

        def median(mated: bool, n: int) -> float:
            if not n:
                return np.nan
            middle = self.pooled_order_statistics(a, mated, [(n - 1) // 2, n // 2])
            return float(np.mean(middle))

        return median(True, int(self.n_mated(a).sum())), median(False, self.n_pooled_nonmated(a))

    def algorithm_index(self, name) -> int:
        try:
            return self.algorithms.get_loc(name)
        except KeyError:
            raise UnknownNameError(
                UNKNOWN_ALGORITHM.format(name=name, names=list(self.algorithms))
            ) from None


@dataclass
class ScoreStats(SufficientStatistics):
    """Per-group sufficient statistics of a score table.

    All scores are stored in *match orientation* (higher means more likely a
    match): distances are negated on the way in and thresholds negated back on
    the way out, so every computation uses ``accept = score >= t``.

    Attributes
    ----------
    algorithms, groups
        Labels, in order of first appearance.
    mated, nonmated
        ``mated[a][g]`` and ``nonmated[a][g]``: sorted (ascending) mated and
        within-group non-mated scores of algorithm ``a`` in group ``g``.
    cross
        ``cross[a]``: sorted cross-group non-mated scores of algorithm ``a``.
    higher_is_match, attributes
        As given to :func:`read_scores`.  With several attributes each group
        label is their values joined by ``"."`` (values without ``"."``).
    """

    algorithms: pd.Index
    groups: pd.Index
    mated: list[list[np.ndarray]]
    nonmated: list[list[np.ndarray]]
    cross: list[np.ndarray]
    higher_is_match: bool = True
    attributes: tuple = ()

    # -- the seam: everything below reads the statistics only through these counts
    def counts(self, a: int, thresholds) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Counts at internal thresholds ``t`` (match orientation) for algorithm ``a``.

        Returns ``(false_matches, false_non_matches, cross_false_matches)``:
        arrays of shape (n_groups, n_thresholds), (n_groups, n_thresholds) and
        (n_thresholds,) counting within-group non-mated ``>= t``, mated
        ``< t`` and cross-group non-mated ``>= t``.
        """
        t = np.atleast_1d(np.asarray(thresholds, dtype="float64"))
        fm = np.array(
            [len(s) - np.searchsorted(s, t, "left") for s in self.nonmated[a]], dtype="int64"
        ).reshape(len(self.groups), len(t))
        fnm = np.array(
            [np.searchsorted(s, t, "left") for s in self.mated[a]], dtype="int64"
        ).reshape(len(self.groups), len(t))
        cross = len(self.cross[a]) - np.searchsorted(self.cross[a], t, "left")
        return fm, fnm, cross.astype("int64")

    def n_mated(self, a: int) -> np.ndarray:
        return np.array([len(s) for s in self.mated[a]], dtype="int64")

    def n_nonmated(self, a: int) -> np.ndarray:
        return np.array([len(s) for s in self.nonmated[a]], dtype="int64")

    def n_pooled_nonmated(self, a: int) -> int:
        return int(self.n_nonmated(a).sum() + len(self.cross[a]))

    def segments(self, a: int) -> list[np.ndarray]:
        return [*self.mated[a], *self.nonmated[a], self.cross[a]]

    def score_range(self, a: int) -> tuple[float, float]:
        """The smallest and the largest score of algorithm ``a``."""
        segments = [s for s in self.segments(a) if len(s)]
        return min(s[0] for s in segments), max(s[-1] for s in segments)

    def cut_points(self, a: int, kk: np.ndarray) -> np.ndarray:
        """Per count ``k`` (below the pooled non-mated count): the smallest threshold
        with at most ``k`` pooled non-mated scores at or above it
        (:func:`audit.scores.runs.cut_points`)."""
        runs = [s for s in (*self.nonmated[a], self.cross[a]) if len(s)]
        return cut_points(runs, np.asarray(kk))

    def smallest_at_or_above(self, a: int, thresholds) -> np.ndarray:
        """The smallest score of algorithm ``a`` at or above each threshold (inf if none)."""
        return least_at_or_above(self.segments(a), thresholds)

    def equal_error(self, a: int, g: int) -> tuple[float, float, float, float]:
        """(eer, internal threshold, fmr, fnmr) of group ``g`` (it has mated and
        within-group non-mated scores): :func:`audit.scores.runs.equal_error`."""
        return equal_error(Run(self.mated[a][g]), Run(self.nonmated[a][g]))

    def order_statistics(self, a: int, g: int, k) -> np.ndarray:
        """The ``k``-th smallest (0-based, an array) of group ``g``'s mated and
        within-group non-mated scores taken together."""
        return kth_of_sorted([self.mated[a][g], self.nonmated[a][g]], k)

    def pooled_order_statistics(self, a: int, mated: bool, k) -> np.ndarray:
        """The ``k``-th smallest (0-based, an array) of algorithm ``a``'s mated scores,
        or of its non-mated scores (within and across groups), every group together."""
        runs = self.mated[a] if mated else [*self.nonmated[a], self.cross[a]]
        return kth_of_sorted(runs, k)


def _segment_counts(key: np.ndarray, n_seg: int) -> np.ndarray:
    """``numpy.bincount(key, minlength=n_seg)``, counting codes two at a time when few."""
    if n_seg > 128 or len(key) < 2:
        return np.bincount(key, minlength=n_seg)
    even = len(key) - len(key) % 2
    pair = key[0:even:2].astype(np.intp)
    pair *= n_seg
    pair += key[1:even:2]
    both = np.bincount(pair, minlength=n_seg * n_seg).reshape(n_seg, n_seg)
    counts = both.sum(axis=0) + both.sum(axis=1)
    if even < len(key):
        counts[key[-1]] += 1
    return counts


#: Rows per block when gathering segments: small enough for a block's scores,
#: keys and sort order to stay in cache, large enough to amortise the Python loop.
_BLOCK = 1 << 16


@validate_params("higher_is_match", attributes=Names(empty=True))
def score_stats_from_arrays(
    score,
    mated,
    group_1,
    group_2=None,
    algorithm=None,
    *,
    groups: Sequence | None = None,
    algorithms: Sequence | None = None,
    higher_is_match: bool = True,
    attributes: Sequence[str] = (),
) -> ScoreStats:
    """:class:`ScoreStats` from plain arrays (no validation: use :func:`read_scores` first).

    ``group_1``/``group_2`` and ``algorithm`` are integer codes (0-based);
    ``groups`` and ``algorithms`` their labels (default: the codes).

    Every row belongs to one *segment*: (algorithm, mated, group) or
    (algorithm, cross-group non-mated).  The rows are gathered segment by
    segment into one buffer in two passes over blocks of :data:`_BLOCK` rows
    (count each block's segment codes; then a stable radix sort of the
    block's codes and one copy of each of its runs to its place), and each
    segment of the buffer is sorted in place.  Cost: about one
    ``numpy.sort`` of the scores (sorting the segments separately is cheaper
    than one sort of all the scores, which pays for most of the gathering);
    extra memory: one copy of the scores (the statistics themselves) plus a
    few blocks.  The segments are views of that one buffer.
    """
    score = np.asarray(score)
    if score.dtype not in (np.float32, np.float64):  # float32 is widened block by block
        score = score.astype("float64")
    mated = np.asarray(mated, dtype=bool)
    group_1 = np.asarray(group_1)
    group_2 = None if group_2 is None else np.asarray(group_2)
    n = len(score)
    n_groups = (int(group_1.max()) + 1 if n else 0) if groups is None else len(groups)
    if algorithm is None:
        n_alg = 1
    else:
        algorithm = np.asarray(algorithm)
        n_alg = (int(algorithm.max()) + 1 if n else 0) if algorithms is None else len(algorithms)
    width = 2 * n_groups + 1  # segments per algorithm: G mated, G within-group non-mated, cross
    n_seg = n_alg * width
    key_dtype = np.int8 if n_seg <= 2**7 else np.int16 if n_seg <= 2**15 else np.int32

    def keys(lo: int, hi: int) -> np.ndarray:
        """Segment code of rows lo:hi: a*width + g (mated), + G (non-mated), 2G (cross)."""
        m = mated[lo:hi]
        key = group_1[lo:hi].astype(key_dtype)
        key += np.logical_not(m).view(np.int8).astype(key_dtype) * key_dtype(n_groups)
        if group_2 is not None:
            cross = group_2[lo:hi] != group_1[lo:hi]
            cross &= ~m
            key[cross] = 2 * n_groups
        if algorithm is not None:
            key += algorithm[lo:hi].astype(key_dtype) * key_dtype(width)
        return key

    starts = range(0, n, _BLOCK)
    per_block = np.array(
        [_segment_counts(keys(lo, lo + _BLOCK), n_seg) for lo in starts], dtype=np.int64
    ).reshape(len(starts), n_seg)
    offsets = np.zeros(n_seg + 1, dtype=np.int64)
    np.cumsum(per_block.sum(axis=0), out=offsets[1:])
    # where each block's run of each segment goes in the buffer
    at = (offsets[:-1] + np.cumsum(per_block, axis=0) - per_block).tolist()
    cuts = np.zeros((len(starts), n_seg + 1), dtype=np.int64)
    np.cumsum(per_block, axis=1, out=cuts[:, 1:])
    cuts = cuts.tolist()
    buffer = np.empty(n, dtype="float64")
    for b, lo in enumerate(starts):
        block = score[lo : lo + _BLOCK].take(np.argsort(keys(lo, lo + _BLOCK), kind="stable"))
        cut, to = cuts[b], at[b]
        for k in np.flatnonzero(per_block[b]).tolist():
            buffer[to[k] : to[k] + cut[k + 1] - cut[k]] = block[cut[k] : cut[k + 1]]
    if not higher_is_match:
        np.negative(buffer, out=buffer)
    segments = [buffer[offsets[k] : offsets[k + 1]] for k in range(n_seg)]
    for segment in segments:
        segment.sort()
    return ScoreStats(
        algorithms=pd.Index(
            list(algorithms) if algorithms is not None else list(range(n_alg)), name="algorithm"
        ),
        groups=pd.Index(
            list(groups) if groups is not None else list(range(n_groups)), name="group"
        ),
        mated=[segments[a * width : a * width + n_groups] for a in range(n_alg)],
        nonmated=[segments[a * width + n_groups : a * width + 2 * n_groups] for a in range(n_alg)],
        cross=[segments[a * width + 2 * n_groups] for a in range(n_alg)],
        higher_is_match=higher_is_match,
        attributes=tuple(attributes),
    )


@validate_params(scores=SCORES)
def score_stats(scores: pd.DataFrame | ScoreStats) -> ScoreStats:
    """The sufficient statistics of a validated score table (see :func:`read_scores`).

    A :class:`ScoreStats` (or any :class:`SufficientStatistics`) is passed
    through, so every function below accepts either and the sorting is done once.
    """
    if isinstance(scores, SufficientStatistics):
        return scores
    return score_stats_from_arrays(
        scores["score"].to_numpy(),
        scores["mated"].to_numpy(dtype=bool),
        scores["group_1"].cat.codes.to_numpy(),
        scores["group_2"].cat.codes.to_numpy(),
        scores["algorithm"].cat.codes.to_numpy(),
        groups=list(scores["group_1"].cat.categories),
        algorithms=list(scores["algorithm"].cat.categories),
        higher_is_match=scores.attrs.get("higher_is_match", True),
        attributes=scores.attrs.get("attributes", ()),
    )
