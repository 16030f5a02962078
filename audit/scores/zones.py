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
computed by a binary search only for the few rows whose table entry holds a
bound; so a pass costs a few array operations per row, whatever the number of
zones.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

from audit.tables.chunks import Chunk, Options, Piece, read_chunk

COUNT, KEEP, SPLIT = 0, 1, 2  # a zone's rows are counted, kept, or counted in sub-zones

#: Bits of the float32 order key resolved by the lookup table of zones, and by its
#: second level, for the entries holding a bound.
LUT_BITS = 20
FINE_BITS = 8
#: Entries of the lookup tables of all algorithms together, at most.
_LUT_ENTRIES = 1 << 23


def key32(score: np.ndarray) -> np.ndarray:
    """uint32 keys in the order of ``float32(score)`` (rounding keeps the order of
    ``score``, ties aside); the two zeros share a key."""
    with np.errstate(over="ignore"):  # beyond float32: infinities, still in order
        bits = (np.asarray(score, dtype=np.float32) + np.float32(0)).view(np.uint32)
    flip = (bits.view(np.int32) >> 31).view(np.uint32)
    flip |= np.uint32(1 << 31)
    bits ^= flip
    return bits


def key64(score: np.ndarray) -> np.ndarray:
    """uint64 keys in the order of the float64 ``score``; the two zeros share a key."""
    bits = (np.asarray(score, dtype=np.float64) + 0.0).view(np.uint64)
    flip = (bits.view(np.int64) >> 63).view(np.uint64)
    flip |= np.uint64(1 << 63)
    bits ^= flip
    return bits


def unkey64(key) -> np.ndarray:
    """The float64 of each key of :func:`key64` (zero for the zeros' key)."""
    key = np.asarray(key, dtype=np.uint64)
    negative = (key >> np.uint64(63)) == 0
    bits = np.where(negative, ~key, key ^ np.uint64(1 << 63))
    return bits.view(np.float64) + 0.0


#: Groups up to which a chunk's segments are read from a table of its codes.
_TABLE_GROUPS = 64


def segments(group_1, group_2, mated, n_groups: int) -> np.ndarray:
    """Segment of each row: ``g`` mated, ``G + g`` within-group non-mated, ``2G`` cross."""
    small = np.int16 if 2 * n_groups < 1 << 15 else np.int32
    segment = np.asarray(group_1).astype(small)
    nonmated = ~np.asarray(mated)
    np.add(segment, small(n_groups), out=segment, where=nonmated)
    if group_2 is not group_1:
        cross = group_1 != group_2
        cross &= nonmated
        np.copyto(segment, small(2 * n_groups), where=cross)
    return segment


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
        fine: list[np.ndarray] = []  # second-level tables, FINE_BITS more bits each
        held = 0
        for a, bounds in enumerate(self.bounds):
            # zone of a table entry: the bounds in entries below it; where a bound falls,
            # -1 - p: the entry's table p, one level finer (-1 in it where a bound falls)
            keys = key32(bounds) >> np.uint32(32 - lut_bits - FINE_BITS)
            at = (keys >> np.uint32(FINE_BITS)).astype(np.intp)
            per_entry = np.bincount(at, minlength=size)
            table = lut[a * size : (a + 1) * size]
            np.cumsum(per_entry, out=table)
            table -= per_entry.astype(np.int32)
            entries = np.unique(at)
            below = table[entries] + np.int32(offsets[a])
            table += np.int32(offsets[a])
            table[:] = ids.take(table)
            if not len(entries):
                continue
            table[entries] = -1 - (held + np.arange(len(entries), dtype=np.int32))
            sub = (keys & np.uint32((1 << FINE_BITS) - 1)).astype(np.intp)
            where = np.searchsorted(entries, at) * (1 << FINE_BITS) + sub
            per_sub = np.bincount(where, minlength=len(entries) << FINE_BITS)
            per_sub = per_sub.reshape(len(entries), 1 << FINE_BITS)
            finer = np.cumsum(per_sub, axis=1) - per_sub + below[:, None]
            finer = ids.take(finer).astype(np.int32).ravel()
            finer[where] = -1
            fine.append(finer)
            held += len(entries)
        split = natural[actions[natural] == SPLIT]
        low = np.zeros(len(split), dtype=np.uint64)
        shift = np.zeros(len(split), dtype=np.uint64)
        for i, z in enumerate(split.tolist()):
            a = int(np.searchsorted(offsets, z, "right") - 1)
            low[i], shift[i] = self._split_key(a, z - int(offsets[a]))
        for name, value in (
            ("lut", lut),
            ("fine", np.concatenate(fine) if fine else np.zeros(0, np.int32)),
            ("_lut_bits", lut_bits),
            ("offsets", offsets),
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
    of KEEP zones, scores as float64.  ``split``: (SPLIT zones, 2**bits, 2G + 1)
    counts in sub-zones.
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


def _identity(mapping: np.ndarray) -> bool:
    return bool((mapping == np.arange(len(mapping))).all())


#: Rows per block within a chunk: the temporaries of a block stay in cache.
_BLOCK = 1 << 17


class _Work(threading.local):
    """The arrays a block of rows is worked in: one set per thread, reused block after
    block, so that a pass allocates (and the system maps in) no new memory per row."""

    def __init__(self):
        self.f32 = np.empty(_BLOCK, np.float32)
        self.u32 = np.empty(_BLOCK, np.uint32)
        self.i32 = np.empty(_BLOCK, np.int32)
        self.zone = np.empty(_BLOCK, np.int32)
        self.entry = np.empty(_BLOCK, np.intp)
        self.code = np.empty(_BLOCK, np.intp)
        self.index = np.empty(_BLOCK, np.intp)
        self.segment = np.empty(_BLOCK, np.int16)
        self.mask = np.empty(_BLOCK, bool)


_WORK = _Work()


def partial(chunk: Chunk, plan: Plan) -> Partial:
    """The counts, kept scores and sub-zone counts of one validated chunk."""
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
    kept, sub = [], []
    table = _segment_table(g_map, len(groups))
    for lo in range(0, len(chunk), _BLOCK):
        block = Chunk(
            *(
                getattr(chunk, name)[lo : lo + _BLOCK]
                for name in ("score", "mated", "algorithm", "group_1", "group_2")
            ),
            chunk.algorithms,
            chunk.groups,
            chunk.first,
        )
        _count(block, plan, a_map, g_map, table, counts, kept, sub, width)
    if sub:  # one count of the sub-zones' cells per chunk (there may be many cells)
        split += np.bincount(np.concatenate(sub), minlength=split.size).reshape(split.shape)
    counts = counts.reshape(total, width)
    # from zone ids back to zones in the order of the bounds
    counts = np.concatenate([counts[plan.ids], counts[plan.zones :]])
    if kept:
        ids = np.concatenate([k[0] for k in kept])
        natural = np.concatenate([plan.natural, np.arange(plan.zones, total)]).astype(np.int32)
        natural = natural.take(ids)
        kept = [
            (natural, np.concatenate([k[1] for k in kept]), np.concatenate([k[2] for k in kept]))
        ]
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


def _segment_table(g_map: np.ndarray, n_groups: int) -> np.ndarray | None:
    """The segment of each (group 1, group 2, mated) code of a chunk (groups mapped by
    ``g_map``), or None when there are too many groups for a table."""
    if len(g_map) > _TABLE_GROUPS or n_groups > _TABLE_GROUPS:
        return None
    g1, g2 = np.meshgrid(g_map, g_map, indexing="ij")
    table = np.where(g1 == g2, n_groups + g1, 2 * n_groups)
    return np.stack([table, g1], axis=-1).astype(np.int16).ravel()


def _count(
    block: Chunk, plan: Plan, a_map, g_map, table, counts, kept: list, sub: list, width
) -> None:
    """Add the counts of a block of rows to ``counts``, its kept rows to ``kept``, the
    cells of its rows in sub-zones to ``sub``."""
    n = len(block)
    work = _WORK
    segment = _segments(block, g_map, table, width, work.segment[:n])
    n_plan = len(plan.algorithms)
    zone = _zones(block, a_map, plan, work)
    new = None
    if len(a_map) and int(a_map.max()) >= n_plan:
        algorithm = a_map.take(block.algorithm)
        new = np.flatnonzero(algorithm >= n_plan)
        zone[new] = plan.zones + algorithm[new] - n_plan
    index = work.index[:n]
    np.multiply(zone, width, out=index, casting="unsafe")
    np.add(index, segment, out=index, casting="unsafe")
    counts += np.bincount(index, minlength=len(counts))
    mask = np.greater_equal(zone, plan.first_keep, out=work.mask[:n])
    rows = np.flatnonzero(mask)  # new algorithms' zones come last
    if new is not None and not plan.keep_new:
        rows = rows[zone[rows] < plan.zones]
    if len(rows):
        kept.append(
            (zone[rows], block.score[rows].astype(np.float64), segment[rows].astype(np.int32))
        )
    slots = len(plan.split_low)
    if slots:
        rows = np.flatnonzero(zone >= plan.first_split)
        slot = zone[rows] - plan.first_split
        inside = slot < slots
        rows, slot = rows[inside], slot[inside]
        step = key64(block.score[rows]) - plan.split_low.take(slot)
        step >>= plan.split_shift.take(slot)
        at = (slot.astype(np.intp) << plan.bits) + step.astype(np.intp)
        at *= width
        at += segment[rows]
        sub.append(at)


def _segments(block: Chunk, g_map, table, width: int, out: np.ndarray) -> np.ndarray:
    """The segment of each row (in ``out``): one lookup of ``table`` on the chunk's own
    codes (group 1, group 2, mated), or arithmetic on the groups mapped by ``g_map``."""
    if table is None:
        group_1 = g_map.take(block.group_1)
        group_2 = group_1 if block.group_2 is block.group_1 else g_map.take(block.group_2)
        return segments(group_1, group_2, block.mated, (width - 1) // 2)
    code = _WORK.code[: len(block)]
    np.multiply(block.group_1, np.intp(len(g_map)), out=code, casting="unsafe")
    np.add(code, block.group_2, out=code, casting="unsafe")
    np.left_shift(code, 1, out=code)
    np.bitwise_or(code, block.mated.view(np.int8), out=code, casting="unsafe")
    return table.take(code, out=out, mode="clip")


def _zones(block: Chunk, a_map: np.ndarray, plan: Plan, work: _Work) -> np.ndarray:
    """Global zone of each row of the plan's algorithms (rows of others: anything), in
    ``work.zone``."""
    n = len(block)
    zone = work.zone[:n]
    n_plan = len(plan.algorithms)
    if n_plan == 0:
        zone[:] = 0
        return zone
    score = block.score
    # the order key of the score as float32 (see key32), its top bits a table entry
    rounded = work.f32[:n]
    np.add(score, np.float32(0), out=rounded, casting="same_kind")
    flip = np.right_shift(rounded.view(np.int32), 31, out=work.i32[:n])
    key = np.bitwise_or(flip.view(np.uint32), np.uint32(1 << 31), out=work.u32[:n])
    np.bitwise_xor(key, rounded.view(np.uint32), out=key)
    entry = np.right_shift(
        key, np.uint32(32 - plan._lut_bits), out=work.entry[:n], casting="unsafe"
    )
    if n_plan > 1:
        offset = (np.minimum(a_map, n_plan - 1).astype(np.intp) << plan._lut_bits).take(
            block.algorithm, out=work.index[:n], mode="clip"
        )
        entry += offset
    plan.lut.take(entry, out=zone, mode="clip")
    ambiguous = np.flatnonzero(np.less(zone, 0, out=work.mask[:n]))
    if len(ambiguous):  # one level finer
        sub = key[ambiguous] >> np.uint32(32 - plan._lut_bits - FINE_BITS)
        sub &= np.uint32((1 << FINE_BITS) - 1)
        finer = (-1 - zone[ambiguous]).astype(np.intp) << FINE_BITS
        finer += sub
        zone[ambiguous] = plan.fine.take(finer)
        ambiguous = ambiguous[zone[ambiguous] < 0]
    if len(ambiguous):
        which = np.zeros(len(ambiguous), np.int32)
        if n_plan > 1:
            which = np.minimum(a_map.take(block.algorithm[ambiguous]), n_plan - 1)
        for a in np.unique(which).tolist():
            rows = ambiguous[which == a]
            natural = plan.offsets[a] + np.searchsorted(
                plan.bounds[a], score[rows].astype(np.float64), "right"
            )
            zone[rows] = plan.ids.take(natural)
    return zone


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
