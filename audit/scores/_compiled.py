"""The compiled loops of :mod:`audit.scores.counting` (numba: the ``fast`` extra).

Imported only when the compiled kernel counts, so that importing ``audit`` never
imports numba.  Compiled at the first call for each combination of array types and
cached on disk (numba's cache, beside this file or in the user's cache folder), so
that the next process loads the machine code (about 10 ms) instead of compiling it
(about a second); where neither folder can be written, compiled in each process.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.core import types
from numba.extending import intrinsic

from audit.scores.counting import FINE_BITS

FINE_MASK = np.uint32((1 << FINE_BITS) - 1)


def _jit(function):
    """``function`` compiled without the interpreter's lock, cached on disk where numba
    finds a folder it can write (it refuses ``cache=True`` otherwise: no cache then)."""
    try:
        return numba.njit(nogil=True, cache=True)(function)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return numba.njit(nogil=True)(function)


@intrinsic
def bits(typingctx, x):
    """The bits of a float as the unsigned integer of its size (a cast, not a copy)."""
    unsigned = types.uint32 if x == types.float32 else types.uint64

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], context.get_value_type(unsigned))

    return unsigned(x), codegen


@_jit
def zones(
    score, algorithm, group_1, group_2, mated,  # the rows
    a_plan, a_new, g_map, n_groups, table, n_codes,  # codes to indices and segments
    lut, lut_bits, fine, bounds, bound_start, zone_start, ids,  # the plan's zones
    first_split, split_low, split_shift, n_bits,  # its SPLIT zones
    first_keep, plan_zones, keep_new, width,
    counts, split, kept_at, kept_zone,
):  # fmt: skip
    """Add each row to ``counts`` (zone id x ``width`` + segment, flat) and, in a SPLIT
    zone, to ``split``; put the place and zone of each kept row in ``kept_at`` and
    ``kept_zone``; return how many rows are kept.  What the NumPy path of
    :func:`audit.scores.counting.count` computes, row by row."""
    coarse = np.uint32(32 - lut_bits)
    finer = np.uint32(32 - lut_bits - FINE_BITS)
    top32 = np.uint32(1 << 31)
    top64 = np.uint64(1 << 63)
    slots = len(split_low)
    kept = 0
    for i in range(len(score)):
        if n_codes:
            segment = np.int64(
                table[((np.int64(group_1[i]) * n_codes + group_2[i]) << 1) + mated[i]]
            )
        else:
            g1 = g_map[group_1[i]]
            if mated[i]:
                segment = g1
            elif g_map[group_2[i]] == g1:
                segment = n_groups + g1
            else:
                segment = 2 * n_groups
        z = a_new[algorithm[i]]
        if z < 0:  # an algorithm of the plan: its zone
            a = a_plan[algorithm[i]]
            key = bits(np.float32(score[i]) + np.float32(0.0))  # one key for both zeros
            key ^= np.uint32(np.int32(key) >> 31) | top32
            z = lut[(np.int64(a) << lut_bits) + np.int64(key >> coarse)]
            if z < 0:
                z = fine[(np.int64(-1 - z) << FINE_BITS) + np.int64((key >> finer) & FINE_MASK)]
                if z < 0:  # a bound in this entry too: search the bounds
                    x = np.float64(score[i])
                    lo, hi = bound_start[a], bound_start[a + 1]
                    while lo < hi:
                        mid = (lo + hi) >> 1
                        if bounds[mid] <= x:
                            lo = mid + 1
                        else:
                            hi = mid
                    z = ids[zone_start[a] + lo - bound_start[a]]
            slot = z - first_split
            if slot >= 0 and slot < slots:
                key64 = bits(np.float64(score[i]) + 0.0)
                key64 ^= np.uint64(np.int64(key64) >> 63) | top64
                step = (key64 - split_low[slot]) >> split_shift[slot]
                split[((np.int64(slot) << n_bits) + np.int64(step)) * width + segment] += 1
        counts[np.int64(z) * width + segment] += 1
        if z >= first_keep and (z < plan_zones or keep_new):
            kept_at[kept] = i
            kept_zone[kept] = z
            kept += 1
    return kept


@_jit
def zones_known(
    score, algorithm, group_1, group_2, mated,  # the rows
    a_plan, table, n_codes,  # codes to the plan's algorithms, and to segments
    lut, lut_bits, fine, bounds, bound_start, zone_start, ids,  # the plan's zones
    first_split, split_low, split_shift, n_bits,  # its SPLIT zones
    first_keep, width,
    counts, split, kept_at, kept_zone, kept_segment,
):  # fmt: skip
    """:func:`zones` for the usual chunk, its algorithms all in the plan and its groups
    few enough for a table of segments: one tight loop finds each row's zone and
    segment, counts it, and marks the rows of SPLIT and KEEP zones; a second loop
    over the marked rows counts the sub-zones and keeps the others' places, zones
    and segments (in ``kept_at``, ``kept_zone``, ``kept_segment``, in the order of
    the rows).  Returns how many rows are kept.  About 1.5x faster than
    :func:`zones`, whose rarer cases cost the usual one in every row.

    The places in the tables are computed as unsigned integers: numba checks every
    signed index for a negative one (counted from the end), which costs the loop
    about a tenth of its time."""
    coarse = np.uint32(32 - lut_bits)
    finer = np.uint32(32 - lut_bits - FINE_BITS)
    top32 = np.uint32(1 << 31)
    top64 = np.uint64(1 << 63)
    codes, columns = np.uint64(n_codes), np.uint64(width)
    lut_shift, fine_shift = np.uint64(lut_bits), np.uint64(FINE_BITS)
    marked = 0
    for i in range(len(score)):
        code = (np.uint64(group_1[i]) * codes + np.uint64(group_2[i])) << np.uint64(1)
        segment = np.uint64(table[code + np.uint64(mated[i])])
        a = np.uint64(a_plan[np.uint64(algorithm[i])])
        key = bits(np.float32(score[i]) + np.float32(0.0))  # one key for both zeros
        key ^= np.uint32(np.int32(key) >> 31) | top32
        z = np.int64(lut[(a << lut_shift) + np.uint64(key >> coarse)])
        if z < 0:
            entry = (np.uint64(-1 - z) << fine_shift) + np.uint64((key >> finer) & FINE_MASK)
            z = np.int64(fine[entry])
            if z < 0:  # a bound in this entry too: search the bounds
                x = np.float64(score[i])
                lo, hi = bound_start[a], bound_start[a + 1]
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if bounds[mid] <= x:
                        lo = mid + 1
                    else:
                        hi = mid
                z = np.int64(ids[zone_start[a] + lo - bound_start[a]])
        counts[np.uint64(z) * columns + segment] += 1
        if z >= first_split:
            kept_at[marked] = i
            kept_zone[marked] = z
            kept_segment[marked] = segment
            marked += 1
    kept = 0
    for j in range(marked):
        z = np.int64(kept_zone[j])
        if z < first_keep:  # a SPLIT zone: its sub-zone
            slot = z - first_split
            key64 = bits(np.float64(score[kept_at[j]]) + 0.0)
            key64 ^= np.uint64(np.int64(key64) >> 63) | top64
            step = (key64 - split_low[slot]) >> split_shift[slot]
            split[((slot << n_bits) + np.int64(step)) * width + kept_segment[j]] += 1
        else:
            kept_at[kept] = kept_at[j]
            kept_zone[kept] = kept_zone[j]
            kept_segment[kept] = kept_segment[j]
            kept += 1
    return kept


@_jit
def kept_rows(
    score, group_1, group_2, mated, g_map, n_groups, rows, out_score, out_segment,
):  # fmt: skip
    """The score and the segment of each kept row (at places ``rows``)."""
    for j in range(len(rows)):
        i = rows[j]
        g1 = g_map[group_1[i]]
        if mated[i]:
            segment = g1
        elif g_map[group_2[i]] == g1:
            segment = n_groups + g1
        else:
            segment = 2 * n_groups
        out_score[j] = score[i]
        out_segment[j] = segment


@_jit
def scatter(cell, score, at, out):
    """Each score to the next place of its cell (``at``: where each cell starts); places
    unsigned, as in :func:`zones_known`."""
    for i in range(len(cell)):
        c = np.uint64(cell[i])
        out[np.uint64(at[c])] = score[i]
        at[c] += 1


@_jit
def least_at_or_above(values, t):
    """Whether some value (finite, as every score is) is at least ``t``, and the least
    of them: a scan without a branch to mispredict."""
    least = np.inf
    for i in range(len(values)):
        v = values[i]
        w = v if v >= t else np.inf
        least = w if w < least else least
    return least < np.inf, least
