"""The counting of one pass: the zone and segment of every row of a chunk, the counts
per (zone, segment), the rows of KEEP zones and the counts in the sub-zones of
SPLIT zones (what :func:`audit.scores.zones.partial` returns for a
:class:`~audit.scores.zones.Plan`).

Two implementations give the same counts, the same kept rows in the same order
and the same sub-zone counts, bit for bit:

``"compiled"``
    One loop over the rows in C (:mod:`audit.scores._compiled`, built when audit
    is installed where a C compiler is found): the zone and segment of a row, its
    count, its sub-zone, in one go, without the interpreter's lock, so that the
    chunks a pass reads side by side (:class:`audit.scores.streaming.LocalEngine`)
    are counted on every core, each into its own partial.  Nothing to start: it
    counts from the first chunk, of any size.
``"numpy"``
    Array operations on blocks of rows that stay in the processor's cache: the
    fallback where the compiled loops were not built.

:data:`KERNEL` says which counts (by default the compiled loops where they were
built); :func:`use` chooses, for tests and benchmarks.

A row's zone is read from the plan's lookup table on the top bits of the order
key of its score rounded to float32 (:func:`audit.scores.zones.key32`; rounding
never reverses an order), one level finer where an entry holds a bound (up to
:data:`FINE_BITS` more bits, as many as keep the plan's finer tables small), and by
a binary search of the float64 score among the bounds of its entry where the entry
(or its finer one) holds some.  Its segment is ``g`` (mated, group ``g``), ``G + g``
(within-group non-mated) or ``2G`` (cross-group non-mated).
"""

from __future__ import annotations

import functools
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

#: Bits of the float32 order key resolved by the lookup table of zones, and at most by its
#: finer tables for the entries holding a bound (where a plan has them).  18 bits count a
#: chunk as fast as 20 (4.2 ms against 4.4 for 2^20 rows of two algorithms) and build a
#: plan's table in 4 ms instead of 20.
LUT_BITS = 18
FINE_BITS = 8


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


KERNELS = ("auto", "compiled", "numpy")
#: What ``kernel`` may be where the compiled loops were not built.
WITHOUT_KERNEL = (
    "'auto' or 'numpy' ('compiled' needs audit's compiled loops, built when audit is "
    "installed where a C compiler is found)"
)
#: What ``kernel`` may be where the library of the compiled loops is of other source.
STALE_KERNEL = "'auto' or 'numpy' ('compiled' needs audit's compiled loops: {reason})"
STALE_WARNING = "{reason}; NumPy counts meanwhile (the same counts, about half as fast)"


class StaleLibrary(ImportError):
    """The library of the compiled loops was built from other source than this audit's
    (:mod:`audit.scores._compiled` refuses it)."""


#: Rows per block of the NumPy path: the temporaries of a block stay in cache.
_BLOCK = 1 << 17
#: Kept rows from which :func:`group` places them with two threads.
_GROUP_SPLIT = 1 << 20
#: Groups up to which the NumPy path reads a chunk's segments from a table of its codes.
_TABLE_GROUPS = 64


def compiled_available() -> bool:
    """Whether the compiled loops were built (:mod:`audit.scores._compiled`), from this
    audit's source (else :class:`~audit.exceptions.InstallWarning`, once, saying so)."""
    return _compiled_state() is None


@functools.cache
def _compiled_state() -> str | None:
    """None where the compiled loops load; else why not ("" where they were not built)."""
    try:
        _load()
    except StaleLibrary as error:
        from audit.exceptions import InstallWarning, warn

        warn(STALE_WARNING.format(reason=error), InstallWarning)
        return str(error)
    except (ImportError, OSError):  # not built, or a library the system cannot load
        return ""
    return None


def _load() -> None:
    import audit.scores._compiled  # noqa: F401


#: The kernel in use: ``"auto"`` (the default) counts with the compiled loops where
#: they were built and with NumPy elsewhere; ``"compiled"`` with the compiled loops
#: (refused where they were not built); ``"numpy"`` with NumPy.
KERNEL = "auto"


def use(kernel: str) -> str:
    """Count with ``kernel`` (``"auto"``, ``"compiled"`` or ``"numpy"``) from now on;
    returns the kernel used before.

    >>> before = use("numpy")
    >>> _ = use(before)
    """
    from audit.validation import Options, check, refuse

    global KERNEL
    check("kernel", kernel, Options(KERNELS))
    if kernel == "compiled" and not compiled_available():
        reason = _compiled_state()
        raise refuse(
            "kernel", kernel, STALE_KERNEL.format(reason=reason) if reason else WITHOUT_KERNEL
        )
    before, KERNEL = KERNEL, kernel
    return before


def compiled_now() -> bool:
    """Whether a chunk is counted by the compiled loops now."""
    if KERNEL == "compiled":
        return True
    return KERNEL == "auto" and compiled_available()


def count(chunk, plan, a_map: np.ndarray, g_map: np.ndarray, width: int, counts, split) -> list:
    """Add the rows of ``chunk`` to ``counts`` (zone ids x ``width`` segments, flat) and
    ``split`` (SPLIT slots, sub-zones, segments); return the kept rows as a list of
    (zone id, score, int32 segment) arrays, in the order of the rows, the scores as the
    chunk holds them (float32 or float64: a float32 score kept takes half the memory,
    and widens exactly).

    ``a_map`` and ``g_map`` map the chunk's algorithm and group codes to the
    indices of the partial (the plan's labels first, new ones after).
    """
    if compiled_now():
        return _count_compiled(chunk, plan, a_map, g_map, width, counts, split)
    return _count_numpy(chunk, plan, a_map, g_map, width, counts, split)


def group(kept: list, columns: np.ndarray, width: int, cells: int) -> tuple[np.ndarray, np.ndarray]:
    """The kept rows of a pass -- (zone, score, segment) arrays, chunk after
    chunk -- as their scores grouped by cell ``zone * width + columns[segment]``
    (``0 <= cell < cells``), in the order of the rows within a cell, as float64, and
    where each cell starts (``cells + 1`` bounds).

    A counting sort, chunk by chunk, into the one array of the result: no copy of
    all the rows is made beside it, and ``kept`` is emptied as it is read, so that
    each chunk's arrays are freed once placed (fresh memory is what a large pass
    pays for most, here).  From :data:`_GROUP_SPLIT` rows the chunks are placed by
    two threads, the first half's and the second half's, each from where its
    rows of a cell start."""
    total = sum(len(k[1]) for k in kept)
    sizes = np.zeros(cells, dtype=np.int64)
    half, seen, before_half = len(kept), 0, None
    for i, (zone, _, segment) in enumerate(kept):
        if before_half is None and seen >= total // 2 and total >= _GROUP_SPLIT:
            half, before_half = i, sizes.copy()
        sizes += np.bincount(_cells(zone, segment, columns, width), minlength=cells)
        seen += len(segment)
    starts = np.zeros(cells + 1, dtype=np.int64)
    np.cumsum(sizes, out=starts[1:])
    out = np.empty(int(starts[-1]), dtype=np.float64)
    compiled = compiled_now()
    if half == len(kept):
        _place(kept, range(len(kept)), columns, width, starts[:-1].copy(), out, compiled)
    else:
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(
                _place, kept, range(half), columns, width, starts[:-1].copy(), out, compiled
            )
            at = starts[:-1] + before_half  # where the second half's rows of a cell start
            _place(kept, range(half, len(kept)), columns, width, at, out, compiled)
            first.result()
    kept.clear()
    return starts, out


def _place(kept: list, chunks: range, columns, width: int, at, out, compiled: bool) -> None:
    """The rows of some chunks of ``kept`` into ``out`` from the places ``at`` (advanced
    per cell); each chunk's arrays let go once placed."""
    if compiled:
        from audit.scores._compiled import scatter
    cells = len(at)
    small = np.int16 if cells < 1 << 15 else np.int32
    for i in chunks:
        zone, score, segment = kept[i]
        kept[i] = None
        cell = _cells(zone, segment, columns, width)
        if compiled:
            scatter(cell, score, at, out)
            continue
        order = np.argsort(cell.astype(small), kind="stable")  # a radix sort when small
        cell = cell.take(order)
        here = np.bincount(cell, minlength=cells)
        first = np.cumsum(here) - here  # where each cell starts among the chunk's rows
        place = at.take(cell)
        place += np.arange(len(cell))
        place -= first.take(cell)
        out[place] = score.take(order)
        at += here


def _cells(zone: np.ndarray, segment: np.ndarray, columns: np.ndarray, width: int) -> np.ndarray:
    """The cell ``zone * width + columns[segment]`` of each kept row."""
    cell = zone.astype(np.int64)
    cell *= width
    cell += segment if columns is None else columns.take(segment)
    return cell


# ---------------------------------------------------------------- the compiled loop


class _Buffer(threading.local):
    """The places, zones and segments of kept rows (up to one per row), reused chunk
    after chunk by each thread."""

    def __init__(self):
        self.rows = self.zones = self.segments = np.empty(0, np.int32)

    def get(self, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if len(self.rows) < n:
            self.rows, self.zones, self.segments = (np.empty(n, np.int32) for _ in range(3))
        return self.rows[:n], self.zones[:n], self.segments[:n]


_BUFFER = _Buffer()


def _count_compiled(chunk, plan, a_map, g_map, width, counts, split) -> list:
    from audit.scores._compiled import kept_rows, score_type, zones, zones_known

    n_plan = len(plan.algorithms)
    a_map = np.asarray(a_map, dtype=np.int64)
    if not len(a_map):  # no rows
        return []
    g_map = np.asarray(g_map, dtype=np.int64)
    n_groups = (width - 1) // 2
    table = _segment_table(g_map, n_groups)
    mated = chunk.mated.view(np.uint8)
    kept_at, kept_zone, kept_segment = _BUFFER.get(len(chunk))
    if table is not None and int(a_map.max()) < n_plan:  # the usual chunk
        kept = zones_known(
            chunk.score, chunk.algorithm, chunk.group_1, chunk.group_2, mated,
            a_map, table, len(g_map),
            plan.lut, plan._lut_bits, plan.fine_bits, plan.fine, plan.entry_start,
            plan.flat_bounds, plan.bound_start,
            plan.offsets, plan.ids,
            plan.first_split, plan.split_low, plan.split_shift, plan.bits,
            plan.first_keep, width,
            counts, split.reshape(-1), kept_at, kept_zone, kept_segment,
        )  # fmt: skip
        if not kept:
            return []
        score = chunk.score.take(kept_at[:kept])
        return [(kept_zone[:kept].copy(), score, kept_segment[:kept].copy())]
    a_new = np.where(a_map >= n_plan, plan.zones + a_map - n_plan, -1).astype(np.int64)
    a_plan = np.minimum(a_map, max(n_plan - 1, 0)).astype(np.int64)
    n_codes = 0 if table is None else len(g_map)
    table = table if table is not None else np.zeros(2, np.int16)
    kept = zones(
        chunk.score, chunk.algorithm, chunk.group_1, chunk.group_2, mated,
        a_plan, a_new, g_map, n_groups, table, n_codes,
        plan.lut, plan._lut_bits, plan.fine_bits, plan.fine, plan.entry_start,
        plan.flat_bounds, plan.bound_start,
        plan.offsets, plan.ids,
        plan.first_split, plan.split_low, plan.split_shift, plan.bits,
        plan.first_keep, plan.zones, plan.keep_new, width,
        counts, split.reshape(-1), kept_at, kept_zone,
    )  # fmt: skip
    if not kept:
        return []
    written = score_type(chunk.score.dtype)  # as the compiled loop reads and writes them
    out = (kept_zone[:kept].copy(), np.empty(kept, written), np.empty(kept, np.int32))
    kept_rows(
        chunk.score, chunk.group_1, chunk.group_2, mated, g_map, n_groups, kept_at[:kept],
        out[1], out[2],
    )  # fmt: skip
    return [out]


# ------------------------------------------------------------------ the NumPy path


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


def _count_numpy(chunk, plan, a_map, g_map, width, counts, split) -> list:
    from audit.tables.chunks import Chunk

    kept, sub = [], []
    table = _segment_table(g_map, (width - 1) // 2)
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
        _count_block(block, plan, a_map, g_map, table, counts, kept, sub, width)
    if sub:  # one count of the sub-zones' cells per chunk (there may be many cells)
        split += np.bincount(np.concatenate(sub), minlength=split.size).reshape(split.shape)
    if not kept:
        return []
    return [tuple(np.concatenate([k[i] for k in kept]) for i in range(3))]


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


def _segment_table(g_map: np.ndarray, n_groups: int) -> np.ndarray | None:
    """The segment of each (group 1, group 2, mated) code of a chunk (groups mapped by
    ``g_map``), or None when there are too many groups for a table."""
    if len(g_map) > _TABLE_GROUPS or n_groups > _TABLE_GROUPS:
        return None
    g1, g2 = np.meshgrid(g_map, g_map, indexing="ij")
    table = np.where(g1 == g2, n_groups + g1, 2 * n_groups)
    return np.stack([table, g1], axis=-1).astype(np.int16).ravel()


def _count_block(
    block, plan, a_map, g_map, table, counts, kept: list, sub: list, width: int
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
        kept.append((zone[rows], block.score[rows], segment[rows].astype(np.int32)))
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


def _segments(block, g_map, table, width: int, out: np.ndarray) -> np.ndarray:
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


def _zones(block, a_map: np.ndarray, plan, work: _Work) -> np.ndarray:
    """Global zone of each row of the plan's algorithms (rows of others: anything), in
    ``work.zone``."""
    n = len(block)
    zone = work.zone[:n]
    n_plan = len(plan.algorithms)
    if n_plan == 0:
        zone[:] = 0
        return zone
    score = block.score
    # the order key of the score rounded to float32 (see key32), its top bits a table entry
    rounded = work.f32[:n]
    with np.errstate(over="ignore"):  # beyond float32: infinities, still in order
        np.copyto(rounded, score, casting="same_kind")
    rounded += np.float32(0)  # one key for both zeros
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
    if len(ambiguous) and plan.fine_bits:  # one level finer
        sub = key[ambiguous] >> np.uint32(32 - plan._lut_bits - plan.fine_bits)
        sub &= np.uint32((1 << plan.fine_bits) - 1)
        finer = (-1 - zone[ambiguous]).astype(np.intp) << plan.fine_bits
        finer += sub
        zone[ambiguous] = plan.fine.take(finer)
        ambiguous = ambiguous[zone[ambiguous] < 0]
    if len(ambiguous):  # an entry holding bounds: the score among the algorithm's
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
