"""Score sets larger than memory: the same operating points, read chunk by chunk.

:class:`StreamingScores` gives the results of :func:`audit.scores.sweep`,
:func:`~audit.scores.rates_at_fmr`, :func:`~audit.scores.thresholds_at_fmr` and
:func:`~audit.scores.rates_at_thresholds` -- the same values, bit for bit --
from a Parquet dataset (a file, a folder or a glob, read row group by row
group) or from a sequence of DataFrames, without holding the scores: memory is
bounded by the ``memory`` parameter, not by the data.  Every chunk is
validated as :func:`~audit.scores.read_scores` validates a table (messages name
the file and the row within it).

Method
------
Every pass is a map over chunks and an associative merge of the partial
results, so the same passes run in one process (:class:`LocalEngine`) or on a
Dask cluster (:class:`audit.scores.dask.DaskEngine`).

1. **Counts.**  Per (algorithm, segment) counts -- mated and within-group
   non-mated per group, cross-group non-mated -- the smallest score of each
   algorithm, and two histograms per algorithm (its pooled non-mated scores,
   all its scores) on the top 16 bits of an order-preserving integer key of
   the float64 score (the two zeros share a key).  The labels are merged in
   order of first appearance, so groups come out in the order
   :func:`~audit.scores.read_scores` gives them.
2. **Brackets.**  The threshold at a target FMR is set by ``v``, the
   ``(k+1)``-th largest pooled non-mated score (see :mod:`audit.scores`); the
   histogram names the bin holding it.  While a bin holds more scores than the
   memory allows, a further pass histograms the 16 bits below inside it (down
   to a single key, whose scores need not be kept: they are all ``v``).
3. **Collect.**  One pass keeps the scores inside the brackets only, with
   their segments, and counts per segment the scores above each bracket and
   the smallest one.  ``v`` is read off the sorted pooled non-mated scores of
   its bracket by its rank; the threshold ``t*`` is the float just above it, as
   in memory; the counts at ``t*`` are those above the bracket plus those kept
   at or above ``t*``, and the reported threshold is the smallest score at or
   above ``t*``.

So a sweep costs two passes over the data (more only for brackets still too
full after the first histogram, which takes heavy ties or an extremely narrow
distribution); :func:`~audit.scores.rates_at_thresholds` one more (counts at
the given thresholds).

Not streamed yet: the EER, the DET points and the score measures that read
whole distributions (DFI, CEI, SED); they need the in-memory engine.  The EER
and the DET quantiles are order statistics of one group's scores, so they fit
the same bracketing passes with per-segment histograms.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from audit.scores.thresholds import (
    DEFAULT_TARGETS,
    _allowed_false_matches,
    _rates_frame,
    _targets,
    _tidy,
    at_target,
)
from audit.tables.common import Source
from audit.tables.scores import NO_NONMATED, UNKNOWN_ALGORITHM, ScoresError, arrow_frame, validate

BAD_MEMORY = "memory must be a positive size such as 4GB or 512MB, got {value!r}"
NO_PARQUET = "{source}: no Parquet file matches"
UNKNOWN_ENGINE = "unknown engine {name!r}; use 'streaming' or 'dask'"

#: Bits of the order key resolved by each histogram pass.
_BITS = 16
#: Bytes of working memory per row of a chunk (the chunk as read, its validated
#: table, keys, codes and temporaries), to size chunks from the memory budget.
_BYTES_PER_ROW = 96
_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
_UNITS |= {"KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}


def parse_memory(value) -> int:
    """Bytes in ``value``: an int, or text such as ``"4GB"``, ``"512MB"`` or ``"2GiB"``.

    >>> parse_memory("4GB"), parse_memory("1.5 GiB"), parse_memory(1000)
    (4000000000, 1610612736, 1000)
    """
    if isinstance(value, int | np.integer) and not isinstance(value, bool) and value > 0:
        return int(value)
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", str(value))
    if match is None or match.group(2).upper() not in _UNITS or float(match.group(1)) <= 0:
        raise ValueError(BAD_MEMORY.format(value=value))
    return int(float(match.group(1)) * _UNITS[match.group(2).upper()])


# ------------------------------------------------------------------------ sources


def parquet_files(source: str | os.PathLike) -> list[str]:
    """The Parquet files of a file, a folder (all ``*.parquet`` below it) or a glob."""
    text = str(source)
    if any(ch in text for ch in "*?["):
        files = sorted(glob.glob(text, recursive=True))
    elif Path(text).is_dir():
        files = sorted(str(p) for p in Path(text).rglob("*.parquet"))
    else:
        files = [text]
    if not files:
        raise ScoresError(NO_PARQUET.format(source=text))
    return files


@dataclass(frozen=True)
class _Piece:
    """One chunk to read: a row group of a Parquet file, or a DataFrame."""

    path: str | None = None
    row_group: int = 0
    offset: int = 0  # rows of the file (or of the sequence) before this chunk
    frame: pd.DataFrame | None = field(default=None, compare=False)


def pieces(source) -> list[_Piece]:
    """The chunks of ``source`` (Parquet path, folder or glob; or DataFrames) in order."""
    if isinstance(source, pd.DataFrame):
        source = [source]
    if isinstance(source, str | os.PathLike):
        import pyarrow.parquet as pq

        out = []
        for path in parquet_files(source):
            try:
                metadata = pq.read_metadata(path)
            except (OSError, ValueError) as reason:
                raise ScoresError(f"{path}: cannot be read as Parquet: {reason}") from reason
            offset = 0
            for g in range(metadata.num_row_groups):
                out.append(_Piece(path=path, row_group=g, offset=offset))
                offset += metadata.row_group(g).num_rows
        return out
    out, offset = [], 0
    for frame in source:
        out.append(_Piece(offset=offset, frame=frame))
        offset += len(frame)
    return out


def data_bytes(source) -> int:
    """Bytes of the data when held in memory (Parquet: uncompressed column sizes)."""
    if isinstance(source, str | os.PathLike):
        import pyarrow.parquet as pq

        total = 0
        for path in parquet_files(source):
            metadata = pq.read_metadata(path)
            for g in range(metadata.num_row_groups):
                total += metadata.row_group(g).total_byte_size
        return total
    frames = [source] if isinstance(source, pd.DataFrame) else source
    return int(sum(f.memory_usage(deep=False).sum() for f in frames))


@dataclass(frozen=True)
class _Options:
    higher_is_match: bool = True
    attributes: tuple | None = None
    ignore: tuple = ()


def _read(piece: _Piece, options: _Options) -> pd.DataFrame:
    """The validated table of one chunk; rows named by their place in the file."""
    if piece.path is not None:
        import pyarrow.parquet as pq

        frame = arrow_frame(pq.ParquetFile(piece.path).read_row_group(piece.row_group))
        name = piece.path
    else:
        frame = piece.frame.copy(deep=False)
        name = "<DataFrame>"
    frame.index = pd.RangeIndex(piece.offset, piece.offset + len(frame))
    return validate(
        frame,
        Source(name, csv=False),
        higher_is_match=options.higher_is_match,
        attributes=options.attributes,
        ignore=options.ignore,
    )


# -------------------------------------------------------------------------- keys

_TOP = np.uint64(1 << 63)


def _key(score: np.ndarray) -> np.ndarray:
    """uint64 keys whose integer order is the float order of ``score`` (float64)."""
    bits = (score + 0.0).view(np.uint64)  # -0.0 + 0.0 is 0.0: the zeros share a key
    negative = (bits & _TOP) != 0
    return np.where(negative, ~bits, bits | _TOP)


def _unkey(key) -> np.ndarray:
    key = np.asarray(key, dtype=np.uint64)
    negative = (key & _TOP) == 0
    return np.where(negative, ~key, key & ~_TOP).view(np.float64)


# --------------------------------------------------------------- pass 1: counts


def _ordered_union(first: list, second: list) -> list:
    seen = set(first)
    return first + [x for x in second if x not in seen]


@dataclass
class _Counts:
    """Pass 1 partial result, in its own label space (merged by label)."""

    algorithms: list
    groups: list  # index space of the arrays below
    order_1: list  # groups in order of first appearance on side 1, then side 2
    order_2: list
    counts: np.ndarray  # (n_alg, 2 * n_groups + 1): mated, within non-mated, cross
    low: np.ndarray  # (n_alg,) smallest score, match orientation
    histogram: np.ndarray  # (n_alg, 2, 2**_BITS) pooled non-mated, all scores, by top key bits
    rows: int = 0

    def reindex(self, algorithms: list, groups: list) -> _Counts:
        """The same counts over (larger) label lists."""
        a_at = np.array([algorithms.index(a) for a in self.algorithms], dtype=np.intp)
        g_at = np.array([groups.index(g) for g in self.groups], dtype=np.intp)
        n_g = len(groups)
        counts = np.zeros((len(algorithms), 2 * n_g + 1), dtype=np.int64)
        if len(a_at):
            old = len(self.groups)
            columns = np.concatenate([g_at, g_at + n_g, [2 * n_g]])
            counts[np.ix_(a_at, columns)] = self.counts[:, : 2 * old + 1]
        low = np.full(len(algorithms), np.inf)
        low[a_at] = self.low
        histogram = np.zeros((len(algorithms), 2, 1 << _BITS), dtype=np.int64)
        histogram[a_at] = self.histogram
        return _Counts(
            algorithms, groups, self.order_1, self.order_2, counts, low, histogram, self.rows
        )


def _merge_counts(left: _Counts, right: _Counts) -> _Counts:
    algorithms = _ordered_union(left.algorithms, right.algorithms)
    groups = _ordered_union(left.groups, right.groups)
    a, b = left.reindex(algorithms, groups), right.reindex(algorithms, groups)
    return _Counts(
        algorithms,
        groups,
        _ordered_union(left.order_1, right.order_1),
        _ordered_union(left.order_2, right.order_2),
        a.counts + b.counts,
        np.minimum(a.low, b.low),
        a.histogram + b.histogram,
        a.rows + b.rows,
    )


@dataclass
class _Chunk:
    """A validated chunk as codes in a given label space."""

    score: np.ndarray  # float64, match orientation
    algorithm: np.ndarray
    segment: np.ndarray  # 0..G-1 mated, G..2G-1 within non-mated, 2G cross
    nonmated: np.ndarray


def _codes(table: pd.DataFrame, algorithms: list, groups: list) -> _Chunk:
    n_g = len(groups)
    small = np.int16 if 2 * n_g < 2**15 else np.int32
    a_map = np.array([algorithms.index(x) for x in table["algorithm"].cat.categories], np.int32)
    g_map = np.array([groups.index(x) for x in table["group_1"].cat.categories], dtype=small)
    g1 = g_map[table["group_1"].cat.codes.to_numpy()]
    g2 = g_map[table["group_2"].cat.codes.to_numpy()]
    mated = table["mated"].to_numpy()
    nonmated = ~mated
    segment = g1 + nonmated.view(np.int8).astype(small) * small(n_g)
    cross = g1 != g2
    cross &= nonmated
    segment[cross] = 2 * n_g
    score = table["score"].to_numpy().astype(np.float64)
    if not table.attrs["higher_is_match"]:
        np.negative(score, out=score)
    algorithm = table["algorithm"].cat.codes.to_numpy()
    if len(a_map) > 1 or (len(a_map) and a_map[0] != 0):
        algorithm = a_map[algorithm]
    else:
        algorithm = np.zeros(len(score), dtype=np.int8)
    return _Chunk(score, algorithm, segment, nonmated)


def _pass_counts(piece: _Piece, options: _Options) -> _Counts:
    table = _read(piece, options)
    algorithms = list(table["algorithm"].cat.categories)
    groups = list(table["group_1"].cat.categories)
    g1 = table["group_1"].cat.codes.to_numpy()
    g2 = table["group_2"].cat.codes.to_numpy()
    # side-1 first appearances are the leading categories; side 2 needs its own order
    n_side_1 = int((np.bincount(g1, minlength=len(groups)) > 0).sum())
    order_2 = [groups[c] for c in pd.unique(g2)]
    chunk = _codes(table, algorithms, groups)
    width = 2 * len(groups) + 1
    counts = np.bincount(
        chunk.algorithm.astype(np.intp) * width + chunk.segment, minlength=len(algorithms) * width
    ).reshape(len(algorithms), width)
    low = np.array(
        [chunk.score[chunk.algorithm == a].min(initial=np.inf) for a in range(len(algorithms))]
    )
    top = (_key(chunk.score) >> np.uint64(64 - _BITS)).astype(np.intp)
    top += chunk.algorithm.astype(np.intp) << _BITS
    size = len(algorithms) << _BITS
    histogram = np.stack(
        [np.bincount(top[chunk.nonmated], minlength=size), np.bincount(top, minlength=size)]
    ).reshape(2, len(algorithms), 1 << _BITS)
    histogram = histogram.transpose(1, 0, 2).copy()
    return _Counts(
        algorithms, groups, groups[:n_side_1], order_2, counts, low, histogram, len(table)
    )


# ----------------------------------------------------- passes 2-3: the brackets


@dataclass(frozen=True)
class _Bracket:
    algorithm: int
    low: int  # first key of the bracket
    shift: int  # the bracket holds keys low .. low + 2**shift - 1


@dataclass
class _Inside:
    """Rows of a chunk inside the brackets, and what lies above each bracket."""

    key: np.ndarray  # of the rows inside a bracket
    which: np.ndarray  # their bracket
    score: np.ndarray
    segment: np.ndarray
    nonmated: np.ndarray
    above: np.ndarray  # (n_brackets, segments): rows above each bracket, per segment
    lowest_above: np.ndarray  # (n_brackets,): smallest score above each bracket


def _inside(chunk: _Chunk, brackets: list[_Bracket], width: int) -> _Inside:
    """Sort the chunk's rows against the brackets (disjoint within an algorithm)."""
    parts = []
    above = np.zeros((len(brackets), width), dtype=np.int64)
    lowest_above = np.full(len(brackets), np.inf)
    for a in sorted({b.algorithm for b in brackets}):
        mine = sorted(
            (i for i, b in enumerate(brackets) if b.algorithm == a), key=lambda i: brackets[i].low
        )
        mine = np.array(mine, dtype=np.intp)
        lows = np.array([brackets[i].low for i in mine], dtype=np.uint64)
        lasts = np.array(
            [brackets[i].low + (1 << brackets[i].shift) - 1 for i in mine], dtype=np.uint64
        )
        rows = chunk.algorithm == a
        score, segment, nonmated = chunk.score[rows], chunk.segment[rows], chunk.nonmated[rows]
        key = _key(score)
        at = np.searchsorted(lows, key, "right") - 1
        inside = at >= 0
        inside[inside] = key[inside] <= lasts[at[inside]]
        parts.append(
            (key[inside], mine[at[inside]], score[inside], segment[inside], nonmated[inside])
        )
        # rows above the j-th bracket: those past more than j bracket ends
        past = np.searchsorted(lasts, key, "left")
        bins = np.bincount(past * width + segment, minlength=(len(mine) + 1) * width).reshape(
            len(mine) + 1, width
        )
        above[mine] = np.cumsum(bins[::-1], axis=0)[::-1][1:]
        low = np.full(len(mine) + 1, np.inf)
        np.minimum.at(low, past, score)
        lowest_above[mine] = np.minimum.accumulate(low[::-1])[::-1][1:]
    if not parts:
        empty = np.zeros(0)
        return _Inside(
            empty.astype(np.uint64),
            empty.astype(np.intp),
            empty,
            empty.astype(np.intp),
            empty.astype(bool),
            above,
            lowest_above,
        )
    return _Inside(*(np.concatenate(p) for p in zip(*parts, strict=True)), above, lowest_above)


def _pass_refine(piece, options, labels, brackets: list[_Bracket]) -> np.ndarray:
    """Histograms (bracket, pooled non-mated / all scores, bin) of the next 16 bits inside
    each bracket."""
    width = 2 * len(labels[1]) + 1
    found = _inside(_codes(_read(piece, options), *labels), brackets, width)
    low = np.array([b.low for b in brackets], dtype=np.uint64)[found.which]
    shift = np.array([b.shift - _BITS for b in brackets], dtype=np.uint64)[found.which]
    sub = ((found.key - low) >> shift).astype(np.intp) + (found.which << _BITS)
    size = len(brackets) << _BITS
    return (
        np.stack(
            [np.bincount(sub[found.nonmated], minlength=size), np.bincount(sub, minlength=size)],
            axis=1,
        )
        .reshape(len(brackets), 1 << _BITS, 2)
        .transpose(0, 2, 1)
        .copy()
    )


@dataclass
class _Kept:
    """Per bracket: its pooled non-mated keys and all its scores with their segments
    (none for a bracket of one key), the counts above it and the smallest score above."""

    keys: list[np.ndarray]
    scores: list[np.ndarray]
    segments: list[np.ndarray]
    above: np.ndarray
    lowest_above: np.ndarray


def _pass_collect(piece, options, labels, brackets: list[_Bracket]) -> _Kept:
    width = 2 * len(labels[1]) + 1
    found = _inside(_codes(_read(piece, options), *labels), brackets, width)
    keep = np.array([b.shift > 0 for b in brackets], dtype=bool)[found.which]
    which = found.which[keep]
    order = np.argsort(which, kind="stable")
    cuts = np.searchsorted(which[order], np.arange(len(brackets) + 1)).tolist()
    key, score, segment, nonmated = (
        x[keep][order] for x in (found.key, found.score, found.segment, found.nonmated)
    )
    parts = [slice(cuts[i], cuts[i + 1]) for i in range(len(brackets))]
    return _Kept(
        [key[p][nonmated[p]] for p in parts],
        [score[p] for p in parts],
        [segment[p] for p in parts],
        found.above,
        found.lowest_above,
    )


def _merge_kept(left: _Kept, right: _Kept) -> _Kept:
    def join(x, y):
        return [np.concatenate([a, b]) for a, b in zip(x, y, strict=True)]

    return _Kept(
        join(left.keys, right.keys),
        join(left.scores, right.scores),
        join(left.segments, right.segments),
        left.above + right.above,
        np.minimum(left.lowest_above, right.lowest_above),
    )


# --------------------------------------------------------------- pass 4: rates


def _pass_rates(piece, options, labels, thresholds: list[np.ndarray]):
    """Per algorithm: counts (segments x thresholds) at or above each sorted threshold,
    and the smallest score at or above each."""
    chunk = _codes(_read(piece, options), *labels)
    width = 2 * len(labels[1]) + 1
    out = []
    for a, t in enumerate(thresholds):
        rows = chunk.algorithm == a
        score = chunk.score[rows]
        above = np.searchsorted(t, score, "right")  # thresholds <= score
        bins = np.bincount(
            chunk.segment[rows].astype(np.intp) * (len(t) + 1) + above,
            minlength=width * (len(t) + 1),
        ).reshape(width, len(t) + 1)
        lowest = np.full(len(t) + 1, np.inf)
        np.minimum.at(lowest, above, score)
        out.append((bins, lowest))
    return out


def _merge_rates(left, right):
    return [(b1 + b2, np.minimum(m1, m2)) for (b1, m1), (b2, m2) in zip(left, right, strict=True)]


def _merge_sum(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    return left + right


# ----------------------------------------------------------------------- engines


class LocalEngine:
    """Runs each pass over the chunks in this process, one chunk at a time."""

    def __init__(self, *, progress: bool = False):
        self.progress = progress

    def map_reduce(self, function: Callable, merge: Callable, items: list, *args, label=""):
        result = None
        if self.progress:
            from tqdm.auto import tqdm

            items = tqdm(items, desc=label, unit="row group", leave=False)
        for item in items:
            part = function(item, *args)
            result = part if result is None else merge(result, part)
        return result


def _engine(engine, client, progress):
    if engine == "streaming":
        return LocalEngine(progress=progress)
    if engine == "dask":
        from audit.scores.dask import DaskEngine

        return DaskEngine(client=client)
    if hasattr(engine, "map_reduce"):
        return engine
    raise ValueError(UNKNOWN_ENGINE.format(name=engine))


# ------------------------------------------------------------------ the facade


class _Stats:
    """What :func:`audit.scores.thresholds._rates_frame` and ``_tidy`` read: labels,
    sizes and counts at the thresholds of the last rates pass."""

    def __init__(self, algorithms, groups, counts, higher_is_match, attributes):
        self.algorithms = pd.Index(algorithms, name="algorithm")
        self.groups = pd.Index(groups, name="group")
        self._counts = counts  # (n_alg, 2G+1)
        self.higher_is_match = higher_is_match
        self.attributes = attributes
        # a -> ({threshold: column}, counts >= threshold per segment and column)
        self.at: dict[int, tuple[dict, np.ndarray]] = {}

    def n_mated(self, a):
        return self._counts[a, : len(self.groups)].copy()

    def n_nonmated(self, a):
        n = len(self.groups)
        return self._counts[a, n : 2 * n].copy()

    def rates_held(self) -> tuple[str, ...]:
        """As :meth:`audit.scores.ScoreStats.rates_held`, from the pass-1 counts."""
        n = len(self.groups)
        nonmated, mated = self._counts[:, n:].sum() > 0, self._counts[:, :n].sum() > 0
        return tuple(rate for rate, held in (("fmr", nonmated), ("fnmr", mated)) if held)

    def counts(self, a, thresholds):
        columns, ge = self.at[a]
        at = np.array([columns[float(x)] for x in np.atleast_1d(thresholds)], dtype=np.intp)
        n = len(self.groups)
        fm = ge[n : 2 * n, at]
        fnm = self._counts[a, :n, None] - ge[:n, at]
        return fm, fnm, ge[2 * n, at]

    def to_external(self, threshold):
        t = np.asarray(threshold, dtype="float64")
        return t if self.higher_is_match else -t

    def to_internal(self, threshold):
        return self.to_external(threshold)


class StreamingScores:
    """Operating points of a score set read chunk by chunk (see the module docstring).

    Parameters
    ----------
    source
        A Parquet file, a folder of Parquet files, a glob (``"scores/*.parquet"``),
        or a sequence of DataFrames (chunks of one score table).
    memory
        Memory budget, bytes or text (``"4GB"``): sizes the kept scores of the
        collect pass (row groups are read whole; write files with row groups
        well under the budget).
    higher_is_match, attributes, ignore
        As for :func:`audit.scores.read_scores`.
    engine, client
        ``"streaming"`` (this process) or ``"dask"`` (a Dask cluster: ``client``
        a ``distributed.Client``, or None for the current one).
    progress
        Show a progress bar over the row groups of each pass.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from audit.scores import read_scores, sweep
    >>> rng = np.random.default_rng(0)
    >>> frame = pd.DataFrame({"algorithm": "a", "group": rng.choice(["F", "M"], 1000),
    ...                       "mated": rng.random(1000) < 0.3})
    >>> frame["score"] = rng.normal(size=1000) + 2 * frame["mated"]
    >>> chunks = [frame.iloc[i : i + 300] for i in range(0, 1000, 300)]
    >>> streamed = StreamingScores(chunks).sweep([0.01, 0.1])
    >>> streamed.equals(sweep(read_scores(frame), [0.01, 0.1]))
    True
    """

    def __init__(
        self,
        source,
        *,
        memory="4GB",
        higher_is_match: bool = True,
        attributes: Sequence[str] | None = None,
        ignore: Sequence[str] = (),
        engine="streaming",
        client=None,
        progress: bool = False,
    ):
        self.source = source
        self.memory = parse_memory(memory)
        self.options = _Options(
            bool(higher_is_match), None if attributes is None else tuple(attributes), tuple(ignore)
        )
        self.attributes = tuple(attributes) if attributes is not None else ()
        self.engine = _engine(engine, client, progress)
        self.pieces = pieces(source)
        self._first: _Counts | None = None

    # -- pass 1
    def _pass_1(self) -> _Counts:
        if self._first is None:
            partial = self.engine.map_reduce(
                _pass_counts, _merge_counts, self.pieces, self.options, label="counts"
            )
            groups = _ordered_union(partial.order_1, partial.order_2)
            self._first = partial.reindex(partial.algorithms, groups)
        return self._first

    @property
    def labels(self) -> tuple[list, list]:
        first = self._pass_1()
        return first.algorithms, first.groups

    def _stats(self) -> _Stats:
        first = self._pass_1()
        return _Stats(
            first.algorithms,
            first.groups,
            first.counts,
            self.options.higher_is_match,
            self.attributes,
        )

    def _indices(self, algorithm) -> list[int]:
        algorithms = self.labels[0]
        if algorithm is None:
            return list(range(len(algorithms)))
        if algorithm not in algorithms:
            raise KeyError(UNKNOWN_ALGORITHM.format(name=algorithm, names=algorithms))
        return [algorithms.index(algorithm)]

    # -- passes 2 and 3: the (k+1)-th largest pooled non-mated score per target
    def _cut_points(self, targets: np.ndarray, indices: list[int]):
        """Per algorithm: the internal thresholds (match orientation) at the targets, and
        the counts (segments x targets) at or above them."""
        first = self._pass_1()
        n_g = len(first.groups)
        width = 2 * n_g + 1
        wanted = {}  # (a, target) -> [rank among pooled non-mated, bracket, all scores in it]
        internal, counts = {}, {}
        for a in indices:
            n = int(first.counts[a, n_g:].sum())
            if n == 0:
                raise ScoresError(NO_NONMATED.format(algorithm=first.algorithms[a]))
            k = _allowed_false_matches(targets, n)
            # k >= n: every score is accepted, from the smallest one
            internal[a] = np.full(len(targets), first.low[a])
            counts[a] = np.repeat(first.counts[a][:, None], len(targets), axis=1)
            cumulative = np.cumsum(first.histogram[a, 0])
            for i in np.flatnonzero(k < n).tolist():
                q = n - 1 - int(k[i])  # 0-based rank, ascending
                b = int(np.searchsorted(cumulative, q, "right"))
                before = int(cumulative[b - 1]) if b else 0
                bracket = _Bracket(a, b << (64 - _BITS), 64 - _BITS)
                wanted[a, i] = [q - before, bracket, int(first.histogram[a, 1, b])]
        budget = max(1, self.memory // 4 // 16)  # scores (and segments) kept when collecting
        while True:
            share = budget // max(1, len({w[1] for w in wanted.values()}))
            open_ = sorted(
                {w[1] for w in wanted.values() if w[1].shift > 0 and w[2] > share},
                key=lambda b: (b.algorithm, b.low),
            )
            if not open_:
                break
            histograms = self.engine.map_reduce(
                _pass_refine,
                _merge_sum,
                self.pieces,
                self.options,
                self.labels,
                open_,
                label="refine",
            )
            for w in wanted.values():
                if w[1] in open_:
                    histogram = histograms[open_.index(w[1])]
                    cumulative = np.cumsum(histogram[0])
                    b = int(np.searchsorted(cumulative, w[0], "right"))
                    w[0] -= int(cumulative[b - 1]) if b else 0
                    shift = w[1].shift - _BITS
                    w[1] = _Bracket(w[1].algorithm, w[1].low + (b << shift), shift)
                    w[2] = int(histogram[1, b])
        if not wanted:
            return internal, counts
        brackets = sorted({w[1] for w in wanted.values()}, key=lambda b: (b.algorithm, b.low))
        kept = self.engine.map_reduce(
            _pass_collect,
            _merge_kept,
            self.pieces,
            self.options,
            self.labels,
            brackets,
            label="collect",
        )
        for (a, i), (rank, bracket, _) in wanted.items():
            j = brackets.index(bracket)
            if bracket.shift == 0:
                v = _unkey(np.uint64(bracket.low))
            else:
                v = _unkey(np.sort(kept.keys[j])[rank])
            t_star = np.nextafter(v, np.inf)
            accepted = kept.scores[j] >= t_star
            counts[a][:, i] = kept.above[j] + np.bincount(
                kept.segments[j][accepted], minlength=width
            )
            lowest = kept.scores[j][accepted].min(initial=kept.lowest_above[j])
            internal[a][i] = lowest if np.isfinite(lowest) else t_star
        return internal, counts

    # -- pass 4: counts at thresholds
    def _rates(self, thresholds: dict[int, np.ndarray]) -> tuple[_Stats, dict[int, np.ndarray]]:
        """Counts at the internal thresholds; returns the statistics and, per algorithm,
        the smallest observed score at or above each threshold (inf if none)."""
        stats = self._stats()
        sorted_t = [np.unique(thresholds.get(a, np.zeros(0))) for a in range(len(stats.algorithms))]
        result = self.engine.map_reduce(
            _pass_rates,
            _merge_rates,
            self.pieces,
            self.options,
            self.labels,
            sorted_t,
            label="rates",
        )
        lowest = {}
        for a, (bins, low) in enumerate(result):
            # counts >= t[j]: rows whose score has more than j thresholds at or below it
            ge = np.cumsum(bins[:, ::-1], axis=1)[:, ::-1][:, 1:]
            given = thresholds.get(a, np.zeros(0))
            column = np.searchsorted(sorted_t[a], given)
            smallest = np.minimum.accumulate(low[::-1])[::-1][1:]
            lowest[a] = smallest[column]
            # the internal thresholds reported (smallest observed score at or above each
            # one) take the same decisions: they share its column
            internal = np.where(np.isfinite(lowest[a]), lowest[a], given)
            keys = {float(x): int(c) for x, c in zip(given, column, strict=True)}
            keys |= {float(x): int(c) for x, c in zip(internal, column, strict=True)}
            stats.at[a] = (keys, ge)
        return stats, lowest

    def _points(self, targets, algorithm=None):
        targets = _targets(targets)
        indices = self._indices(algorithm)
        internal, counts = self._cut_points(targets, indices)
        stats = self._stats()
        for a in indices:
            stats.at[a] = ({float(t): i for i, t in enumerate(internal[a])}, counts[a])
        return targets, indices, stats, internal

    # -- the public results, as the in-memory functions give them
    def thresholds_at_fmr(self, targets, algorithm=None) -> pd.DataFrame:
        """As :func:`audit.scores.thresholds_at_fmr`."""
        targets, indices, stats, internal = self._points(targets, algorithm)
        columns = {k: [] for k in ("algorithm", "target_fmr", "threshold", "_internal")}
        columns |= {"attained_fmr": [], "n_pooled_nonmated": []}
        for a in indices:
            fm, _, cross = stats.counts(a, internal[a])
            n = int(stats.n_nonmated(a).sum() + stats._counts[a, -1])
            columns["algorithm"] += [stats.algorithms[a]] * len(targets)
            columns["target_fmr"].append(targets)
            columns["threshold"].append(stats.to_external(internal[a]))
            columns["_internal"].append(internal[a])
            columns["attained_fmr"].append((fm.sum(axis=0) + cross) / n)
            columns["n_pooled_nonmated"].append(np.full(len(targets), n, dtype=np.int64))
        return pd.DataFrame(
            {
                name: values if name == "algorithm" else np.concatenate(values)
                for name, values in columns.items()
            }
        )

    def sweep(self, targets=None) -> pd.DataFrame:
        """As :func:`audit.scores.sweep`."""
        targets, indices, stats, internal = self._points(
            DEFAULT_TARGETS if targets is None else targets
        )
        blocks = []
        for a in indices:
            fm, _, cross = stats.counts(a, internal[a])
            n = int(stats.n_nonmated(a).sum() + stats._counts[a, -1])
            blocks.append(
                (
                    a,
                    _rates_frame(stats, a, internal[a]),
                    {
                        "target_fmr": targets,
                        "threshold": stats.to_external(internal[a]),
                        "attained_fmr": (fm.sum(axis=0) + cross) / n,
                    },
                )
            )
        return _tidy(stats, blocks)

    def rates_at_fmr(self, target_fmr: float = 1e-3) -> pd.DataFrame:
        """As :func:`audit.scores.rates_at_fmr`."""
        return at_target(self.sweep([target_fmr]), target_fmr)

    def rates_at_thresholds(self, thresholds) -> pd.DataFrame:
        """As :func:`audit.scores.rates_at_thresholds`."""
        algorithms = self.labels[0]
        given, internal = {}, {}
        for a, name in enumerate(algorithms):
            t = thresholds[name] if isinstance(thresholds, dict) else thresholds
            given[a] = np.atleast_1d(np.asarray(t, dtype="float64"))
            internal[a] = given[a] if self.options.higher_is_match else -given[a]
        stats, _ = self._rates(internal)
        blocks = [
            (a, _rates_frame(stats, a, internal[a]), {"threshold": given[a]})
            for a in range(len(algorithms))
        ]
        return _tidy(stats, blocks)
