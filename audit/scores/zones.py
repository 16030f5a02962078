"""One pass over the chunks of a score set: per-segment counts in zones of the score
line, the scores of some zones kept, finer counts inside others.

A :class:`Plan` cuts the line of (internal, match-orientation) scores of each
algorithm at sorted bounds into zones -- zone ``z`` holds the scores ``s`` with
``bounds[z-1] <= s < bounds[z]`` -- and says what to do in each: count the rows
of each *segment* (:data:`COUNT`; every zone is counted), keep their scores
(:data:`KEEP`), or count them in ``2**bits`` sub-zones of equal width in the
order key of the floats (:data:`SPLIT`).  The segments of an algorithm are its
mated rows per group, its within-group non-mated rows per group, and its
cross-group non-mated rows: ``2G + 1`` columns for ``G`` groups.

:func:`zones_pass` maps a chunk to a :class:`Partial`; :func:`merge` merges two
partials (associative: any tree of merges gives the same result).  The zone of
each row is read from a lookup table on the top :data:`LUT_BITS` bits of the
order key of its score rounded to float32 (rounding never reverses an order), and
by a binary search among the bounds of its entry alone for the rows whose table
entry holds some; so a pass costs a few operations per row, whatever the number
of zones.
The counting itself is :mod:`audit.scores.counting` (a compiled loop, or NumPy).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from audit.scores import counting
from audit.scores.counting import FINE_BITS, LUT_BITS, key32, key64, unkey64
from audit.tables.chunks import Chunk, Options, Piece, read_chunk

COUNT, KEEP, SPLIT = 0, 1, 2  # a zone's rows are counted, kept, or counted in sub-zones

#: Entries of the lookup tables of all algorithms together, at most.
_LUT_ENTRIES = 1 << 23
#: Bytes the finer tables of a plan take at most (see :class:`Plan`): each table resolves
#: as many bits of :data:`~audit.scores.counting.FINE_BITS` as keep them all within it,
#: and a plan of more entries holding bounds than one bit allows has none.  More bits
#: leave fewer rows to search among their entry's bounds, and tables too large for the
#: cache cost more than that saves.  On a chunk of 2^20 rows of
#: ``benchmarks/bench_scale.py`` (the least of 30 rounds, the variants alternating): the
#: streamed report's plan of 22,000 bounds an algorithm at 2 GB (8,800 entries holding
#: bounds) counts in 30.5 ms without finer tables, 29.3 at 4 bits, 25.5 at 5, 23.0 at 6
#: (2.25 MB), 25.8 at 7 and 28.3 at 8 (9 MB); at 400 MB, 30.7 ms without and 24.3 at 6
#: bits; at 4 GB (4,200 entries), 24.1 ms without, 20.6 at 6 bits (1.08 MB), 21.1 at 7
#: (2.17 MB) and 22.0 at 8.  A sweep's plan has 8-bit tables of a few kB (5.1-5.5 ms a
#: chunk, 8.0-8.5 without).
_FINE_BYTES = 5 << 19
#: Bits of the finer tables, at least: with fewer, so many rows are still searched among
#: their entry's bounds that the tables cost more than they save (the report's plan at
#: 2 GB above, in a run of its own: 33.8 ms at 2 bits and 34.1 at 3, against 31.4
#: without, 30.9 at 4 and 27.7 at 5).
_FINE_LEAST = 4


@dataclass(frozen=True)
class Plan:
    """What one pass computes.

    ``algorithms`` and ``groups``: the labels known when planning, indexing
    ``bounds`` (per algorithm: sorted distinct floats) and ``actions`` (per
    algorithm and zone).  A label met in a chunk and not in the plan is added
    after them; an algorithm the plan does not know has one zone, counted (kept
    when ``keep_new``).  ``stride``: take every ``stride``-th row of a chunk only
    (samples).
    """

    algorithms: tuple = ()
    groups: tuple = ()
    bounds: tuple = ()
    actions: tuple = ()
    bits: int = 16
    keep_new: bool = False
    stride: int = 1
    lut: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        n = len(self.algorithms)
        zones = np.array([len(b) + 1 for b in self.bounds], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(zones)]).astype(np.int64)
        actions = (
            np.concatenate([np.asarray(a, dtype=np.int8) for a in self.actions])
            if n
            else np.zeros(0, np.int8)
        )
        # rows carry zone ids numbered COUNT zones first, then SPLIT, then KEEP: a row's
        # action is a comparison of its id, and a SPLIT zone's id less the first is its slot
        natural = np.argsort(np.array([0, 2, 1])[actions], kind="stable")
        ids = np.empty(len(actions), dtype=np.int32)
        ids[natural] = np.arange(len(actions), dtype=np.int32)
        lut_bits = LUT_BITS
        while n > 1 and (n << lut_bits) > _LUT_ENTRIES and lut_bits > 8:
            lut_bits -= 1
        size = 1 << lut_bits
        lut = np.empty(n * size, dtype=np.int32)
        bound_start = offsets - np.arange(n + 1)  # where each algorithm's bounds start
        keys = [key32(b) >> np.uint32(32 - lut_bits - FINE_BITS) for b in self.bounds]
        at = [(k >> np.uint32(FINE_BITS)).astype(np.intp) for k in keys]
        holding = [np.unique(e) for e in at]  # the entries holding bounds, per algorithm
        # finer tables for the entries holding bounds, of as many bits as stay in the
        # cache; without them each such row is placed among its entry's bounds alone
        finer_bits, entries_held = FINE_BITS, sum(len(e) for e in holding)
        while finer_bits and entries_held << (finer_bits + 2) > _FINE_BYTES:
            finer_bits -= 1
        finer_bits = finer_bits if finer_bits >= _FINE_LEAST else 0
        entry_start: list[np.ndarray] = []  # where the bounds of each entry holding some start
        fine: list[np.ndarray] = []  # the finer tables, finer_bits more bits each
        held = 0
        for a in range(n):
            # zone of a table entry: the bounds in entries below it; where bounds fall,
            # -1 - p: the entry's place p in entry_start (and its finer table, -1 in it
            # where a bound falls), whose bounds a row's score is searched among
            per_entry = np.bincount(at[a], minlength=size)
            table = lut[a * size : (a + 1) * size]
            np.cumsum(per_entry, out=table)
            table -= per_entry.astype(np.int32)
            entries = holding[a]
            below = table[entries] + np.int32(offsets[a])
            table += np.int32(offsets[a])
            table[:] = ids.take(table)
            if not len(entries):
                continue
            table[entries] = -1 - (held + np.arange(len(entries), dtype=np.int32))
            # (sorted bounds have sorted entries: each entry's bounds follow the last's)
            entry_start.append(bound_start[a] + np.searchsorted(at[a], entries, "left"))
            held += len(entries)
            if finer_bits:
                sub = keys[a] >> np.uint32(FINE_BITS - finer_bits)
                sub = (sub & np.uint32((1 << finer_bits) - 1)).astype(np.intp)
                where = np.searchsorted(entries, at[a]) * (1 << finer_bits) + sub
                per_sub = np.bincount(where, minlength=len(entries) << finer_bits)
                per_sub = per_sub.reshape(len(entries), 1 << finer_bits)
                finer = np.cumsum(per_sub, axis=1) - per_sub + below[:, None]
                finer = ids.take(finer).astype(np.int32).ravel()
                finer[where] = -1
                fine.append(finer)
        flat = (
            np.concatenate([np.asarray(b, dtype=np.float64) for b in self.bounds])
            if n
            else np.zeros(0)
        )
        split = natural[actions[natural] == SPLIT]
        low = np.zeros(len(split), dtype=np.uint64)
        shift = np.zeros(len(split), dtype=np.uint64)
        for i, z in enumerate(split.tolist()):
            a = int(np.searchsorted(offsets, z, "right") - 1)
            low[i], shift[i] = self._split_key(a, z - int(offsets[a]))
        for name, value in (
            ("lut", lut),
            ("entry_start", np.concatenate([*entry_start, [len(flat)]]).astype(np.int64)),
            ("fine_bits", finer_bits),
            ("fine", np.concatenate(fine) if fine else np.zeros(0, np.int32)),
            ("_lut_bits", lut_bits),
            ("offsets", offsets),
            ("flat_bounds", flat),
            ("bound_start", bound_start),
            ("zone_actions", actions),
            ("ids", ids),
            ("natural", natural),
            ("first_split", int((actions == COUNT).sum())),
            ("first_keep", int((actions != KEEP).sum())),
            ("split_low", low),
            ("split_shift", shift),
            ("index", {label: i for i, label in enumerate(self.algorithms)}),
            ("group_index", {label: i for i, label in enumerate(self.groups)}),
        ):
            object.__setattr__(self, name, value)

    def split_slot(self, z: int) -> int:
        """Slot of SPLIT zone ``z`` (in order over all algorithms) in a partial's ``split``."""
        return int(self.ids[z]) - self.first_split

    @property
    def zones(self) -> int:
        """Zones of the plan's algorithms, all together."""
        return int(self.offsets[-1])

    def zone_bounds(self, a: int, z: int) -> tuple[float, float]:
        """The scores ``lo <= s < hi`` of zone ``z`` of algorithm ``a``."""
        bounds = self.bounds[a]
        lo = bounds[z - 1] if z > 0 else -np.inf
        hi = bounds[z] if z < len(bounds) else np.inf
        return float(lo), float(hi)

    def _split_key(self, a: int, z: int) -> tuple[int, int]:
        """First key and shift of the sub-zones of zone ``z``: sub-zone ``(key - low) >> shift``."""
        lo, hi = key64(np.array(self.zone_bounds(a, z)))
        span = int(hi) - int(lo)
        return int(lo), max(0, (span - 1).bit_length() - self.bits)

    def sub_bounds(self, a: int, z: int) -> np.ndarray:
        """The inner bounds of the sub-zones of SPLIT zone ``z`` of algorithm ``a``."""
        low, shift = self._split_key(a, z)
        span = int(key64(np.array([self.zone_bounds(a, z)[1]]))[0]) - low
        steps = np.arange(1, 1 << self.bits, dtype=np.uint64) << np.uint64(shift)
        return unkey64(np.uint64(low) + steps[steps < np.uint64(span)])


@dataclass
class Partial:
    """One pass over some chunks.

    ``algorithms`` and ``groups``: the plan's labels, then new ones in order of
    appearance; ``first``: the labels in order of first appearance (algorithms,
    groups on side 1, groups on side 2).  ``counts``: (zones, 2G + 1) -- the
    ``plan_zones`` zones of the plan's ``plan_algorithms`` algorithms, then one
    zone per new algorithm.  ``kept``: (zone, score, segment) arrays of the rows
    of KEEP zones, scores as the chunks hold them (float32 or float64).
    ``split``: (SPLIT zones, 2**bits, 2G + 1) counts in sub-zones.
    """

    algorithms: list
    groups: list
    first: tuple
    counts: np.ndarray
    kept: list
    split: np.ndarray
    rows: int
    plan_algorithms: int
    plan_zones: int


def zones_pass(piece: Piece, options: Options, plan: Plan) -> Partial:
    """The partial result of one chunk."""
    return partial(read_chunk(piece, options), plan)


def _labels(known: list, index: dict, present: list, codes_labels: list) -> np.ndarray:
    """Codes of a chunk mapped to indices in ``known`` (extended in place by the labels
    present and not yet known)."""
    for label in present:
        if label not in index:
            index[label] = len(known)
            known.append(label)
    return np.array([index.get(label, 0) for label in codes_labels], dtype=np.int32)


def partial(chunk: Chunk, plan: Plan) -> Partial:
    """The counts, kept scores and sub-zone counts of one validated chunk
    (:func:`audit.scores.counting.count`)."""
    if plan.stride > 1:
        chunk = _every(chunk, plan.stride)
    algorithms, groups = list(plan.algorithms), list(plan.groups)
    a_index, g_index = dict(plan.index), dict(plan.group_index)
    a_map = _labels(algorithms, a_index, chunk.first[0], chunk.algorithms)
    g_map = _labels(groups, g_index, [*chunk.first[1], *chunk.first[2]], chunk.groups)
    width = 2 * len(groups) + 1
    extra = len(algorithms) - len(plan.algorithms)
    total = plan.zones + extra
    counts = np.zeros(total * width, dtype=np.int64)
    split = np.zeros((len(plan.split_low), 1 << plan.bits, width), dtype=np.int64)
    kept = counting.count(chunk, plan, a_map, g_map, width, counts, split)
    counts = counts.reshape(total, width)
    # from zone ids back to zones in the order of the bounds
    counts = np.concatenate([counts[plan.ids], counts[plan.zones :]])
    if kept:
        ids, score, segment = kept[0]
        natural = np.concatenate([plan.natural, np.arange(plan.zones, total)]).astype(np.int32)
        kept = [(natural.take(ids), score, segment)]
    return Partial(
        algorithms,
        groups,
        chunk.first,
        counts,
        kept,
        split,
        len(chunk),
        len(plan.algorithms),
        plan.zones,
    )


def _every(chunk: Chunk, stride: int) -> Chunk:
    """Every ``stride``-th row of a chunk."""
    rows = [
        np.ascontiguousarray(getattr(chunk, name)[::stride])
        for name in ("score", "mated", "algorithm", "group_1", "group_2")
    ]
    return Chunk(*rows, chunk.algorithms, chunk.groups, chunk.first)


# ----------------------------------------------------------------------- merging


def _ordered_union(first: list, second: list) -> list:
    seen = set(first)
    return first + [x for x in second if x not in seen]


def _segment_map(old: list, new: list) -> np.ndarray:
    """Column of each segment of ``old`` groups among those of ``new`` groups."""
    at = np.array([new.index(g) for g in old], dtype=np.intp)
    return np.concatenate([at, at + len(new), [2 * len(new)]])


def _reindex(part: Partial, algorithms: list, groups: list) -> Partial:
    """``part`` over (larger) lists of labels."""
    if part.algorithms == algorithms and part.groups == groups:
        return part
    n_plan, n_zones = part.plan_algorithms, part.plan_zones
    columns = _segment_map(part.groups, groups)
    rows = np.concatenate(
        [
            np.arange(n_zones),
            [n_zones + algorithms.index(a) - n_plan for a in part.algorithms[n_plan:]],
        ]
    ).astype(np.intp)
    width = 2 * len(groups) + 1
    counts = np.zeros((n_zones + len(algorithms) - n_plan, width), dtype=np.int64)
    counts[np.ix_(rows, columns)] = part.counts
    kept = [
        (rows.take(zone), score, columns.take(segment).astype(np.int32))
        for zone, score, segment in part.kept
    ]
    split = np.zeros((*part.split.shape[:2], width), dtype=np.int64)
    split[:, :, columns] = part.split
    return Partial(algorithms, groups, part.first, counts, kept, split, part.rows, n_plan, n_zones)


def merge(left: Partial, right: Partial) -> Partial:
    """The partial of the chunks of ``left`` then those of ``right`` (same plan)."""
    algorithms = _ordered_union(left.algorithms, right.algorithms)
    groups = _ordered_union(left.groups, right.groups)
    a = _reindex(left, algorithms, groups)
    b = _reindex(right, algorithms, groups)
    first = tuple(_ordered_union(x, y) for x, y in zip(left.first, right.first, strict=True))
    return Partial(
        algorithms,
        groups,
        first,
        a.counts + b.counts,
        a.kept + b.kept,
        a.split + b.split,
        a.rows + b.rows,
        a.plan_algorithms,
        a.plan_zones,
    )
