"""The compiled loops of :mod:`audit.scores.counting`: the C of ``_kernel.c``, built when
audit is installed where a C compiler is found (``setup.py``: an optional extension;
without one, the install goes on and NumPy counts).

Called through :mod:`ctypes`, which lets go of the interpreter's lock for the time of
each call, so that the chunks a pass reads side by side are counted on every core.
Nothing is compiled or imported at run time: the library loads in about a
millisecond.  Each function takes the arrays :func:`audit.scores.counting.count`
passes and checks their types before the C reads them (a wrong type is an error
here, never memory read as what it is not).

Importing this module raises ImportError where the extension was not built.
"""

from __future__ import annotations

import ctypes
import importlib.util

import numpy as np

from audit.scores.counting import StaleLibrary

#: The version of the C's interface this module binds (``AUDIT_KERNEL_ABI`` in
#: ``_kernel.c``, raised with every change to the loops' names, arguments or ``Zones``).
ABI = 4
STALE = (
    "audit's compiled kernel ({path}) was built from other source than this audit's "
    "({reason}); install audit again (make install, or pip install -e .) to rebuild it"
)


def _checked(lib: ctypes.CDLL, path: str) -> ctypes.CDLL:
    """``lib`` if it is the version of the interface this module binds, else
    :class:`~audit.scores.counting.StaleLibrary` (an ImportError: NumPy counts instead),
    before any of its loops is called."""
    try:
        version, size = lib.audit_kernel_abi, lib.audit_zones_size
    except AttributeError:
        raise StaleLibrary(STALE.format(path=path, reason="it tells no version")) from None
    for told in (version, size):
        told.restype, told.argtypes = ctypes.c_int64, []
    if version() != ABI:
        reason = f"version {version()}, where {ABI} is bound"
        raise StaleLibrary(STALE.format(path=path, reason=reason))
    if size() != ctypes.sizeof(_Zones):  # a change to the plan's fields, its version not raised
        reason = f"a plan of {size()} bytes, where {ctypes.sizeof(_Zones)} are bound"
        raise StaleLibrary(STALE.format(path=path, reason=reason))
    return lib


_I64, _F64, _P = ctypes.c_int64, ctypes.c_double, ctypes.c_void_p


class _Zones(ctypes.Structure):
    """The plan's zones as the C reads them (``Zones`` in ``_kernel.c``)."""

    _fields_ = [
        ("lut", _P),
        ("lut_bits", _I64),
        ("fine_bits", _I64),
        ("fine", _P),
        ("entry_start", _P),
        ("bounds", _P),
        ("bound_start", _P),
        ("zone_start", _P),
        ("ids", _P),
        ("first_split", _I64),
        ("split_low", _P),
        ("split_shift", _P),
        ("slots", _I64),
        ("n_bits", _I64),
        ("first_keep", _I64),
    ]


_spec = importlib.util.find_spec("audit.scores._kernel")
if _spec is None or not _spec.origin or not _spec.has_location:
    raise ImportError("audit's compiled kernel (audit.scores._kernel) is not built")
_LIB = _checked(ctypes.CDLL(_spec.origin), _spec.origin)


_LIB.audit_zones_known.restype = _I64
_LIB.audit_zones_known.argtypes = [_I64, _I64, ctypes.POINTER(_Zones), _I64] + [_P] * 6
_LIB.audit_zones_known.argtypes += [_I64, _P, _I64, _I64] + [_P] * 5
_LIB.audit_zones.restype = _I64
_LIB.audit_zones.argtypes = [_I64, _I64, ctypes.POINTER(_Zones), _I64] + [_P] * 8
_LIB.audit_zones.argtypes += [_I64, _P, _I64, _I64, _I64, _I64] + [_P] * 4
_LIB.audit_kept_rows.restype = _I64
_LIB.audit_kept_rows.argtypes = [_I64, _I64, _I64] + [_P] * 5 + [_I64] + [_P] * 3
_LIB.audit_scatter.restype = _I64
_LIB.audit_scatter.argtypes = [_I64, _I64, _P, _P, _P, _P]
_LIB.audit_least_at_or_above.restype = _F64
_LIB.audit_least_at_or_above.argtypes = [_I64, _P, _F64]

_LIB.audit_eight_rows.restype = _I64
_LIB.audit_eight_rows.argtypes = [_I64]

_SCORES = {np.dtype(np.float32): 0, np.dtype(np.float64): 1}
_CODES = {np.dtype(np.int8): 0, np.dtype(np.int16): 1, np.dtype(np.int32): 2}


def _in(array, dtype) -> np.ndarray:
    """``array`` as a contiguous array of ``dtype`` (itself when it is one already)."""
    return np.ascontiguousarray(array, dtype=dtype)


def _out(array: np.ndarray, dtype) -> int:
    """The address of an array the C writes into, checked to be what the C writes."""
    wanted = f"a compiled loop writes contiguous {np.dtype(dtype)}"
    if array.dtype != dtype:
        raise TypeError(f"{wanted}, not {array.dtype}")
    if not array.flags.c_contiguous:
        raise TypeError(f"{wanted}, not an array with gaps")
    if not array.flags.writeable:
        raise TypeError(f"{wanted}, not a read-only array")
    return array.ctypes.data


def _cells(counts: np.ndarray) -> int:
    """The address of the counts, whose places the C holds as 32-bit cells."""
    if counts.size >= 1 << 32:
        raise ValueError("a compiled loop counts fewer than 2**32 cells")
    return _out(counts, np.int64)


def score_type(dtype) -> np.dtype:
    """The type the loops read a score column of ``dtype`` as, and write kept scores in:
    float32 and float64 as they are, any other widened to float64."""
    dtype = np.dtype(dtype)
    return dtype if dtype in _SCORES else np.dtype(np.float64)


def _score(score) -> tuple[np.ndarray, int]:
    score = np.ascontiguousarray(score)
    score = score.astype(score_type(score.dtype), copy=False)
    return score, _SCORES[score.dtype]


def _codes(*codes) -> tuple[list[np.ndarray], int]:
    """Label codes of one integer type (the widest of theirs), and its number."""
    dtype = np.result_type(*codes)
    if dtype not in _CODES:
        dtype = np.dtype(np.int32)
    return [_in(c, dtype) for c in codes], _CODES[dtype]


def _zones(lut, lut_bits, fine_bits, fine, entry_start, bounds, bound_start, zone_start,
           ids, first_split, split_low, split_shift, n_bits,
           first_keep) -> tuple[_Zones, list]:  # fmt: skip
    held = [
        _in(lut, np.int32), _in(fine, np.int32), _in(entry_start, np.int64),
        _in(bounds, np.float64), _in(bound_start, np.int64), _in(zone_start, np.int64),
        _in(ids, np.int32), _in(split_low, np.uint64), _in(split_shift, np.uint64),
    ]  # fmt: skip
    address = [a.ctypes.data for a in held]
    zones = _Zones(
        address[0], lut_bits, fine_bits, address[1], address[2], address[3], address[4],
        address[5], address[6], first_split, address[7], address[8], len(held[7]), n_bits,
        first_keep,
    )  # fmt: skip
    return zones, held  # the arrays held while the C reads them


def zones(
    score, algorithm, group_1, group_2, mated,  # the rows
    a_plan, a_new, g_map, n_groups, table, n_codes,  # codes to indices and segments
    lut, lut_bits, fine_bits, fine, entry_start, bounds, bound_start, zone_start, ids,  # zones
    first_split, split_low, split_shift, n_bits,  # its SPLIT zones
    first_keep, plan_zones, keep_new, width,
    counts, split, kept_at, kept_zone,
):  # fmt: skip
    """Add each row to ``counts`` (zone id x ``width`` + segment, flat) and, in a SPLIT
    zone, to ``split``; put the place and zone of each kept row in ``kept_at`` and
    ``kept_zone``; return how many rows are kept.  What the NumPy path of
    :func:`audit.scores.counting.count` computes, row by row."""
    score, s_type = _score(score)
    (algorithm, group_1, group_2), c_type = _codes(algorithm, group_1, group_2)
    mated = _in(mated, np.uint8)
    plan, held = _zones(lut, lut_bits, fine_bits, fine, entry_start, bounds, bound_start,
                        zone_start, ids, first_split, split_low, split_shift, n_bits,
                        first_keep)  # fmt: skip
    a_plan, a_new, g_map = (_in(x, np.int64) for x in (a_plan, a_new, g_map))
    table = _in(table, np.int16)
    n = len(score)
    if len(kept_at) < n or len(kept_zone) < n:
        raise ValueError("kept_at and kept_zone hold a place for every row")
    kept = _LIB.audit_zones(
        s_type, c_type, ctypes.byref(plan), n, score.ctypes.data, algorithm.ctypes.data,
        group_1.ctypes.data, group_2.ctypes.data, mated.ctypes.data, a_plan.ctypes.data,
        a_new.ctypes.data, g_map.ctypes.data, n_groups, table.ctypes.data, n_codes,
        plan_zones, bool(keep_new), width, _cells(counts), _out(split, np.int64),
        _out(kept_at, np.int32), _out(kept_zone, np.int32),
    )  # fmt: skip
    del held
    return int(kept)


def zones_known(
    score, algorithm, group_1, group_2, mated,  # the rows
    a_plan, table, n_codes,  # codes to the plan's algorithms, and to segments
    lut, lut_bits, fine_bits, fine, entry_start, bounds, bound_start, zone_start, ids,  # zones
    first_split, split_low, split_shift, n_bits,  # its SPLIT zones
    first_keep, width,
    counts, split, kept_at, kept_zone, kept_segment,
):  # fmt: skip
    """:func:`zones` for the usual chunk, its algorithms all in the plan and its groups
    few enough for a table of segments: one tight loop finds each row's zone and
    segment, counts it, and marks the rows of SPLIT and KEEP zones; a second loop over
    the marked rows counts the sub-zones and keeps the others' places, zones and
    segments (in ``kept_at``, ``kept_zone``, ``kept_segment``, in the order of the
    rows).  Returns how many rows are kept."""
    score, s_type = _score(score)
    (algorithm, group_1, group_2), c_type = _codes(algorithm, group_1, group_2)
    mated = _in(mated, np.uint8)
    plan, held = _zones(lut, lut_bits, fine_bits, fine, entry_start, bounds, bound_start,
                        zone_start, ids, first_split, split_low, split_shift, n_bits,
                        first_keep)  # fmt: skip
    a_plan, table = _in(a_plan, np.int64), _in(table, np.int16)
    n = len(score)
    if min(len(kept_at), len(kept_zone), len(kept_segment)) < n:
        raise ValueError("kept_at, kept_zone and kept_segment hold a place for every row")
    kept = _LIB.audit_zones_known(
        s_type, c_type, ctypes.byref(plan), n, score.ctypes.data, algorithm.ctypes.data,
        group_1.ctypes.data, group_2.ctypes.data, mated.ctypes.data, a_plan.ctypes.data,
        len(a_plan), table.ctypes.data, n_codes, width, _cells(counts), _out(split, np.int64),
        _out(kept_at, np.int32), _out(kept_zone, np.int32), _out(kept_segment, np.int32),
    )  # fmt: skip
    del held
    return int(kept)


def kept_rows(
    score, group_1, group_2, mated, g_map, n_groups, rows, out_score, out_segment,
):  # fmt: skip
    """The score and the segment of each kept row (at places ``rows``)."""
    score, s_type = _score(score)
    (group_1, group_2), c_type = _codes(group_1, group_2)
    mated, g_map, rows = _in(mated, np.uint8), _in(g_map, np.int64), _in(rows, np.int32)
    if len(out_score) != len(rows) or len(out_segment) != len(rows):
        raise ValueError("out_score and out_segment hold one value per kept row")
    _LIB.audit_kept_rows(
        s_type, c_type, len(rows), score.ctypes.data, group_1.ctypes.data,
        group_2.ctypes.data, mated.ctypes.data, g_map.ctypes.data, n_groups,
        rows.ctypes.data, _out(out_score, score.dtype), _out(out_segment, np.int32),
    )  # fmt: skip


def scatter(cell, score, at, out) -> None:
    """Each score to the next place of its cell (``at``: where each cell starts,
    advanced per cell)."""
    cell = _in(cell, np.int64)
    score, s_type = _score(score)
    if len(score) != len(cell):
        raise ValueError("one cell per score")
    _LIB.audit_scatter(
        s_type, len(cell), cell.ctypes.data, score.ctypes.data,
        _out(at, np.int64), _out(out, np.float64),
    )  # fmt: skip


def eight_rows(on: bool | None = None) -> bool:
    """Whether :func:`zones_known` counts eight rows at a time (AVX2, where the processor
    has it: the same counts as a row at a time, in about half the time); ``on`` turns
    it on (where it can) or off."""
    return bool(_LIB.audit_eight_rows(-1 if on is None else int(bool(on))))


def least_at_or_above(values, t: float) -> tuple[bool, float]:
    """Whether some value (finite, as every score is) is at least ``t``, and the least
    of them: a scan without a branch to mispredict."""
    values = _in(values, np.float64)
    least = _LIB.audit_least_at_or_above(len(values), values.ctypes.data, float(t))
    return least < np.inf, least
