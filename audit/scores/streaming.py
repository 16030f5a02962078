"""Score sets larger than memory: the same operating points and score measures, read
chunk by chunk.

:class:`StreamingScores` gives the results of :func:`audit.scores.sweep`,
:func:`~audit.scores.rates_at_fmr`, :func:`~audit.scores.thresholds_at_fmr`,
:func:`~audit.scores.rates_at_thresholds` and :func:`~audit.scores.det_points`
-- the same values, bit for bit -- and of any function that reads the
statistics through :class:`~audit.scores.stats.SufficientStatistics` (the EER
table and every score measure of :mod:`audit.measures.scores`, through
:meth:`StreamingScores.apply`), from a Parquet dataset (a file, a folder or a
glob, read row group by row group) or from a sequence of DataFrames, without
holding the scores: memory is bounded by the ``memory`` parameter, not by the
data.  Every chunk is validated as :func:`~audit.scores.read_scores`
validates a table (:mod:`audit.tables.chunks`).

Method
------
What the passes have learnt is held by :class:`~audit.scores.streamed.StreamedStats`
(:mod:`audit.scores.streamed`): per algorithm, counts per segment below a
growing set of edges and windows of kept scores.  :meth:`StreamingScores.apply`
runs a function on it until an attempt records nothing it could not answer;
after each attempt one pass over the data (:mod:`audit.scores.zones`) learns
what was missing.  Every pass is a map over chunks and an associative merge,
so the same passes run in one process (:class:`LocalEngine`) or on a Dask
cluster (:class:`audit.scores.dask.DaskEngine`).

Passes are planned on a sample -- every ``k``-th row of up to 8 chunks spread
evenly over the data, some ``100 sqrt(N)`` rows of ``N``, or ``300 sqrt(N)``
where the windows planned on the smaller do not fit the memory budget (in one
process those chunks are read once, for the samples and the first pass).  The
function runs on the sample first: every order statistic it reads there (the ``(k+1)``-th
largest pooled non-mated score of a target FMR, an EER crossing, a DET
quantile...) gives a window of scores around it, :data:`_Z` standard errors
of its rank on each side, kept in the first pass as far as the memory budget
allows (a window too large is counted at steps of two standard errors
instead, so that the next pass keeps one step).  Later passes place their
windows the same way, inside the intervals that exact counts point to; an
interval the sample has too few scores in is kept whole, or counted in
``2**bits`` sub-intervals when too large.  When the chunks are alike (rows in
no particular order of score), the first pass answers a sweep: one pass over
the data.  When the sample misleads (data sorted by score, say), more passes
find the same answer: the sample only saves passes, it never changes a value.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import re
import warnings
from collections.abc import Callable, Sequence
from itertools import chain

import numpy as np
import pandas as pd

from audit.exceptions import ParameterError
from audit.scores.runs import Run, equal_error
from audit.scores.stats import SufficientStatistics
from audit.scores.streamed import Line, StreamedStats, Window, aligned, learnt
from audit.scores.thresholds import (
    det_points,
    rates_at_fmr,
    rates_at_thresholds,
    sweep,
    thresholds_at_fmr,
)
from audit.scores.zones import COUNT, KEEP, SPLIT, Partial, Plan, merge, partial, zones_pass
from audit.tables.chunks import (
    NO_PARQUET,
    Options,
    Piece,
    data_bytes,
    group_columns,
    in_order,
    once,
    parquet_files,
    pieces,
    read_chunk,
    schema_names,
    source_name,
)
from audit.tables.labels import STREAMED_SPELLINGS, check_spellings
from audit.tables.scores import EMPTY, ScoresError, joined_spellings
from audit.validation import Names, validate_params

__all__ = [
    "NO_PARQUET",
    "LocalEngine",
    "StreamedStats",
    "StreamingScores",
    "data_bytes",
    "parquet_files",
    "parse_memory",
]

BAD_MEMORY = "parameter memory: expected a positive size such as 4GB or 512MB, got {value!r}"
MEMORY_PAST_FLOAT = (
    "memory {value!r} is more bytes than a floating-point number holds (1.8e+308); give "
    "the memory a pass may use, such as 4GB or 512MB"
)
UNKNOWN_ENGINE = "unknown engine {name!r}; use 'streaming' or 'dask'"
TOO_MANY_PASSES = "no answer after {passes} passes over the data"

_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
_UNITS |= {"KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40}

#: Bytes of memory per kept score (the score, its segment and zone, their sorting).
_BYTES_PER_KEPT = 64
#: Bytes of memory per row of a chunk held as arrays.
_BYTES_PER_ROW = 16
#: Chunks read for the sample that plans the first pass (evenly spread), and the most
#: rows the sample holds (fewer when the memory budget is small).
_SAMPLE_PIECES = 8
_SAMPLE_ROWS = 1 << 23
#: Rows of the sample, in multiples of ``sqrt(N)`` of ``N`` (and at least
#: :data:`_SAMPLE_MIN`): the smaller first, whose windows are wider, the larger only
#: where those do not fit the memory budget.  Side by side on two cores
#: (``benchmarks/bench_scale.py``, 2 GB): at 1e8 comparisons a sweep took 1.40 s
#: (median of 9) where the larger sample alone took 1.49 s; at 1e9 the smaller's windows
#: do not fit, and drawing both took 12.8 s against 12.0 (median of 3; the smaller
#: sample, learnt and planned on, is 0.37 s of a 10.5 s sweep).  The smaller alone at
#: 1e9 took a second pass: 22.5 s.
_SAMPLE_FACTORS = (100, 300)
_SAMPLE_MIN = 1 << 16
#: Margin of a window planned from the sample, in standard errors of its rank.
_Z = 6.0
#: Sample scores an interval needs for a window to be placed in it from the sample.
_MIN_SAMPLED = 16
#: Sub-intervals counted in one pass, at most.
_SUB_ZONES = 1 << 16
#: A split interval is counted in at least ``2**_LEAST_BITS`` sub-intervals, however
#: small the memory budget.
_LEAST_BITS = 2
#: Attempts after which :meth:`StreamingScores.apply` gives up (a fault of audit's, not of
#: the data).  Each pass narrows a split interval at least ``2**_LEAST_BITS``-fold, so one
#: score is found among the 2**64 keys of float64 scores within ``64 // _LEAST_BITS``
#: passes, and an answer needs a few such searches in sequence (an EER two: the window of
#: its crossing, then the score after it); room is left for four.  At a budget of 1 kB,
#: an EER table of 2,000 integer scores took 64 passes, a sweep 57.
_MAX_PASSES = 4 * 64 // _LEAST_BITS


def parse_memory(value) -> int:
    """Bytes in ``value``: a number, or text such as ``"4GB"``, ``"512MB"``, ``"2GiB"`` or
    ``"1e9"``.

    >>> parse_memory("4GB"), parse_memory("1.5 GiB"), parse_memory(1000), parse_memory("2e9")
    (4000000000, 1610612736, 1000, 2000000000)
    """
    if isinstance(value, int | np.integer) and not isinstance(value, bool) and value > 0:
        return int(value)
    # a float as Python writes it (1e+22 reads as the number 1e22 below)
    text = repr(float(value)) if isinstance(value, float | np.floating) else str(value)
    number = r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
    match = re.fullmatch(rf"\s*({number})\s*([a-zA-Z]*)\s*", text)
    if match is None or match.group(2).upper() not in _UNITS:
        raise ParameterError(BAD_MEMORY.format(value=value))
    size = float(match.group(1)) * _UNITS[match.group(2).upper()]
    if size == math.inf:  # "1e400", "1e308TB": positive, and past what a float holds
        raise ParameterError(MEMORY_PAST_FLOAT.format(value=value))
    # "0", and "0.5B", which would round down to no memory at all
    if not 1 <= size:
        raise ParameterError(BAD_MEMORY.format(value=value))
    return int(size)


# ----------------------------------------------------------------------- engines


class LocalEngine:
    """Runs each pass over the chunks in this process: ``threads`` chunks at a time
    (Arrow decodes and the compiled loop or NumPy counts without holding the
    interpreter), merged in order.  By default two threads a core used (at most
    two cores): while a thread waits for the interpreter or for Arrow's own
    decoding threads, the others keep the cores busy.  Side by side at 1e9
    comparisons on two cores: 12.2 s with two threads, 11.4 s with three, 10.8 s
    with four, 10.9 s with six; each thread holds one chunk more in memory."""

    def __init__(self, *, progress: bool = False, threads: int | None = None):
        self.progress = progress
        self.threads = threads if threads is not None else 2 * min(2, os.cpu_count() or 1)

    def map_reduce(self, function: Callable, merge: Callable, items: list, *args, label=""):
        result = None
        parts = in_order(lambda item: function(item, *args), items, self.threads)
        if self.progress:
            from audit.config import progress_bar

            parts = progress_bar(parts, total=len(items), desc=label, unit="row group", leave=False)
        for part in parts:
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
    raise ParameterError(UNKNOWN_ENGINE.format(name=engine))


# ------------------------------------------------------------------- the facade


class StreamingScores:
    """Operating points and measures of a score set read chunk by chunk (see the module
    docstring).

    Parameters
    ----------
    source
        A Parquet file, a folder of Parquet files, a glob (``"scores/*.parquet"``),
        or a list of these (their files in the order given); or a DataFrame, or a
        sequence of DataFrames (chunks of one score table).
    memory
        Memory budget, bytes or text (``"4GB"``): sizes the scores kept and the
        sub-interval counts of each pass (row groups are read whole; write files
        with row groups well under the budget).  The counts at the edges a pass
        places are not within it: a row of ``2 * groups + 1`` counts an edge (and
        one a thread), and an order statistic whose window is not kept places up to
        seven edges, so that a DET curve of 100 groups (40,000 order statistics) of
        2,000,000 comparisons took 2.4 GB beyond the process's start at a budget of
        50 MB (at 500 MB the scores fit whole: 150 MB).  Of 12 groups, as the command
        line draws at most, it took 110 MB at 5 MB.
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

    @validate_params("higher_is_match", "attributes", ignore=Names(empty=True))
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
        kind = type(source).__name__  # an iterator is kept as a list: named as given
        self.source = once(source)  # named in messages, after its chunks are listed
        self.memory = parse_memory(memory)
        self.options = Options(
            bool(higher_is_match), None if attributes is None else tuple(attributes), tuple(ignore)
        )
        self.attributes = tuple(attributes) if attributes is not None else ()
        self.engine = _engine(engine, client, progress)
        # an empty chunk (a row group, file or DataFrame of no rows) adds nothing, as for
        # read_scores; a source of nothing but empty chunks is refused as empty
        self.pieces = [
            piece for piece in pieces(self.source, kind, self.options.ignore) if piece.rows
        ]
        self.passes = 0  # over the data, the sample's aside
        self._stats: StreamedStats | None = None
        self._sample: StreamedStats | None = None
        self._sample_rows = 0

    # -- the public results, as the in-memory functions give them
    def apply(self, function: Callable[[SufficientStatistics], object]):
        """``function(stats)`` for a function reading the statistics only through
        :class:`~audit.scores.stats.SufficientStatistics` (every operating point
        and score measure of ``audit``, e.g. ``audit.measures.scores.eer_table``
        or ``audit.measures.registry.evaluate_scores``): passes over the data
        until an attempt needs nothing more.  The warnings ``function`` gives are those
        of that last attempt, given once: an attempt that needs more is no answer, and
        what it warned of may not hold of the data."""
        if self._stats is None:
            self._first_pass(function)
            self._refuse_spellings()
        stats = self._stats
        for _ in range(_MAX_PASSES):
            stats.needs = []
            try:
                with warnings.catch_warnings(record=True) as said:
                    warnings.simplefilter("always")  # the filters outside judge them below
                    result = function(stats)
            except Exception:
                if not stats.needs:
                    _say(said)
                    raise
            if not stats.needs:
                _say(said)
                return result
            self._learn(stats.needs)
        raise RuntimeError(TOO_MANY_PASSES.format(passes=self.passes))

    def sweep(self, targets=None) -> pd.DataFrame:
        """As :func:`audit.scores.sweep`."""
        return self.apply(lambda stats: sweep(stats, targets))

    def thresholds_at_fmr(self, targets, algorithm=None) -> pd.DataFrame:
        """As :func:`audit.scores.thresholds_at_fmr`."""
        return self.apply(lambda stats: thresholds_at_fmr(stats, targets, algorithm))

    def rates_at_fmr(self, target_fmr: float = 1e-3) -> pd.DataFrame:
        """As :func:`audit.scores.rates_at_fmr`."""
        return self.apply(lambda stats: rates_at_fmr(stats, target_fmr))

    def rates_at_thresholds(self, thresholds) -> pd.DataFrame:
        """As :func:`audit.scores.rates_at_thresholds`."""
        return self.apply(lambda stats: rates_at_thresholds(stats, thresholds))

    def det_points(self, *, n_points: int = 200) -> pd.DataFrame:
        """As :func:`audit.scores.det_points`."""
        return self.apply(lambda stats: det_points(stats, n_points=n_points))

    @property
    def labels(self) -> tuple[list, list]:
        """Algorithms and groups, in order of first appearance."""
        if self._stats is None:
            self._first_pass(lambda stats: None)
            self._refuse_spellings()
        return list(self._stats.algorithms), list(self._stats.groups)

    # -- passes
    def _run(self, plan: Plan, items: list[Piece], label: str) -> Partial:
        # later passes read only the columns they count: the first checked the subjects
        options = dataclasses.replace(self.options, subjects=False)
        return self.engine.map_reduce(zones_pass, merge, items, options, plan, label=label)

    def _first_pass(self, function) -> None:
        """The sample, then a first pass planned on it (see the module docstring)."""
        if not self.pieces:
            raise ScoresError(EMPTY.format(source=self._name()))
        count = min(len(self.pieces), _SAMPLE_PIECES)
        at = np.unique(np.linspace(0, len(self.pieces) - 1, count).round().astype(int))
        chosen = [self.pieces[i] for i in at.tolist()]
        read = sum(p.rows for p in chosen)
        root = math.sqrt(sum(p.rows for p in self.pieces))
        most = min(_SAMPLE_ROWS, self.memory // _BYTES_PER_KEPT // 4)
        rows = [min(most, max(_SAMPLE_MIN, int(f * root))) for f in _SAMPLE_FACTORS]
        strides = sorted({max(1, -(-read // max(1, r))) for r in rows}, reverse=True)
        # in this process the sample's chunks are read once: the first pass reuses them
        cache = None
        if isinstance(self.engine, LocalEngine) and read * _BYTES_PER_ROW <= self.memory // 4:
            cache = {}
        for stride in strides:
            plan = Plan(keep_new=True, stride=stride)
            try:
                sample = self.engine.map_reduce(
                    _read_pass, merge, chosen, self.options, plan, cache, label="sample"
                )
            except ScoresError as error:
                self._first_bad(getattr(error, "piece", None))
                raise
            self._sample_rows = sample.rows
            labels, lines = self._learnt(plan, sample, ordered=True)
            self._sample = StreamedStats(
                *labels, lines, self.options.higher_is_match, self.attributes
            )
            if stride == 1 and len(chosen) == len(self.pieces):
                self._stats = self._sample  # the sample is the data
                return
            plan, fits = self._plan_from_sample(function)
            if fits:
                break
        self.passes += 1
        first = self.engine.map_reduce(
            _read_pass, merge, self.pieces, self.options, plan, cache, label="pass 1"
        )
        labels, lines = self._learnt(plan, first)
        self._stats = StreamedStats(*labels, lines, self.options.higher_is_match, self.attributes)
        self._sample = aligned(self._sample, *labels)

    def _first_bad(self, piece: Piece | None) -> None:
        """Raise the error of the first bad chunk before ``piece`` (a bad chunk of the
        sample, which reads them out of order), read in order, if there is one: the
        first bad cell is the one named, as when the data is read whole."""
        if piece is None or piece not in self.pieces:
            return
        before = self.pieces[: self.pieces.index(piece)]
        for _ in in_order(lambda p: read_chunk(p, self.options), before):
            pass

    def _plan_from_sample(self, function) -> tuple[Plan, bool]:
        """KEEP windows around every order statistic ``function`` reads on the sample,
        a margin of :data:`_Z` standard errors of its rank on each side, in order of
        size as far as the memory allows; and whether every window is kept."""
        sample = self._sample
        sample.record, sample.needs = [], []
        try:
            with warnings.catch_warnings():  # of the sample, not of the data: not said
                warnings.simplefilter("ignore")
                function(sample)
        except Exception:  # noqa: BLE001  (a sample may lack what the data has)
            pass
        records, sample.record = sample.record, None
        windows: dict[int, list] = {}
        for record in records:
            a = record[1]
            if record[0] == "rank":
                _, a, columns, ranks, _ = record
                values = sample._population(a, sample.lines[a].windows[-np.inf], columns)
                spans = _arounds(values, ranks, -np.inf, np.inf)
            else:
                spans = [self._crossing(sample, a, record[2])]
            windows.setdefault(a, []).extend(span for span in spans if span is not None)
        chosen, points, uncut, _ = self._budget(sample, windows, {})
        plan = self._plan(list(sample.algorithms), list(sample.groups), chosen, {}, points)
        return plan, not points and not uncut

    @staticmethod
    def _crossing(sample: StreamedStats, a: int, g: int) -> tuple | None:
        """A window around the sample's EER crossing of group ``g``: a margin of
        :data:`_Z` standard errors of ``FMR - FNMR`` there, in ranks of the group's
        scores (at most its larger count times the error)."""
        window = sample.lines[a].windows[-np.inf]
        n = len(sample.groups)
        mated, nonmated = window.by_segment[g], window.by_segment[n + g]
        if not len(mated) or not len(nonmated):
            return None
        eer, at, _, _ = equal_error(Run(mated), Run(nonmated))
        values = sample._population(a, window, (g, n + g))
        small, large = sorted((len(mated), len(nonmated)))
        f = min(max(eer, 1 / small), 0.5)
        error = large * math.sqrt(f * (1 - f) * (1 / small + 1 / large))
        return _around(values, int(np.searchsorted(values, at, "left")), -np.inf, np.inf, error)

    def _budget(self, sample: StreamedStats, windows: dict, intervals: dict) -> tuple:
        """What to do with the windows (joined where they overlap; those inside an
        interval kept whole left out), each sized by the sample's rows in it: keep the
        smallest, as many as the memory budget holds; count the others at the steps
        of their ladders, so that the next pass keeps a step.  Returns the windows to
        keep, the bounds of the steps, the windows without steps, and the budget left."""
        budget = self.memory // _BYTES_PER_KEPT
        sizes = []
        for a, spans in windows.items():
            line = sample.lines[a]
            if line is None:
                continue
            everything = sample._population(a, line.windows[-np.inf], sample._columns("all"))
            scale = self._rows(a) / max(1, len(everything))
            for lo, hi, ladder in _union(spans):
                if any(lo >= i_lo and hi <= i_hi for i_lo, i_hi in intervals.get(a, ())):
                    continue
                first, last = np.searchsorted(everything, [lo, hi], "left")
                sizes.append(((last - first) * scale, a, lo, hi, ladder))
        keep: dict[int, list] = {}
        points: dict[int, set] = {}
        uncut = []
        for size, a, lo, hi, ladder in sorted(sizes, key=lambda x: x[0]):
            if size <= budget:
                budget -= size
                keep.setdefault(a, []).append((lo, hi))
            elif steps := {v for v in ladder if lo < v < hi}:
                points.setdefault(a, set()).update(steps)
            else:
                uncut.append((a, lo, hi))
        return keep, points, uncut, budget

    def _rows(self, a: int) -> int:
        """Rows of algorithm ``a`` (all of the data's, when known)."""
        if self._stats is None:
            return sum(p.rows for p in self.pieces) // max(1, len(self._sample.algorithms))
        return int(self._stats.lines[a].totals.sum())

    def _learn(self, needs: list[tuple]) -> None:
        """One pass learning what an attempt needed: narrow windows around what it
        looked for where the sample shows where that lies, whole intervals (kept, or
        counted in sub-intervals when too large) elsewhere."""
        stats, sample = self._stats, self._sample
        points: dict[int, set] = {}
        windows: dict[int, list] = {}
        intervals: dict[int, set] = {}
        for need in needs:
            kind, a = need[0], need[1]
            if kind == "point":
                points.setdefault(a, set()).add(need[2])
                continue
            lo, hi = need[-2], need[-1]
            line = stats.lines[a]
            i = int(np.searchsorted(line.edges, lo, "left"))
            if hi == np.nextafter(lo, np.inf):
                # every score of the interval is lo: a window without a pass (ties)
                inside = line.below[i + 1] - line.below[i]
                line.windows[lo] = Window(lo, hi, [np.broadcast_to(lo, (int(n),)) for n in inside])
                continue
            span = None
            if sample.lines[a] is not None:
                if kind == "rank":
                    columns, rank = need[2], need[3]
                    below = int(line.below[i, list(columns)].sum())
                    inside = int(line.below[i + 1, list(columns)].sum()) - below
                    values = sample._population(a, sample.lines[a].windows[-np.inf], columns)
                    values = values[np.searchsorted(values, lo) : np.searchsorted(values, hi)]
                    if len(values) >= _MIN_SAMPLED:
                        at = (rank - below + 0.5) / inside * len(values)
                        span = _around(values, at, lo, hi)
                else:
                    span = self._crossing(sample, a, need[2])
                    if span is not None:
                        span = (max(span[0], lo), min(span[1], hi), span[2])
                        span = span if span[0] < span[1] else None
            if span is None or span[:2] == (lo, hi):
                intervals.setdefault(a, set()).add((lo, hi))
            else:
                windows.setdefault(a, []).append(span)
        if not windows and not intervals and not points:
            stats._sorted.clear()
            return
        keep, cuts, uncut, budget = self._budget(sample, windows, intervals)
        for a, bounds in cuts.items():
            points.setdefault(a, set()).update(bounds)
        for a, lo, _ in uncut:  # back to the interval holding the window
            line = stats.lines[a]
            i = int(np.searchsorted(line.edges, lo, "right")) - 1
            intervals.setdefault(a, set()).add((float(line.edges[i]), float(line.edges[i + 1])))
        split: dict[int, list] = {}
        for rows, a, lo, hi in sorted(
            (int(stats.lines[a].rows(lo, hi)), a, lo, hi)
            for a, spans in intervals.items()
            for lo, hi in spans
        ):
            if rows <= budget:
                budget -= rows
                keep.setdefault(a, []).append((lo, hi))
            else:
                split.setdefault(a, []).append((lo, hi))
        n_split = sum(len(s) for s in split.values())
        bits = self._bits(n_split, 2 * len(stats.groups) + 1)
        plan = self._plan(list(stats.algorithms), list(stats.groups), keep, split, points, bits)
        self.passes += 1
        labels, lines = self._learnt(plan, self._run(plan, self.pieces, f"pass {self.passes}"))
        for label, line in zip(labels[0], lines, strict=True):
            known = stats.lines[stats.algorithms.get_loc(label)]
            known.add_edges(line.edges[1:-1], line.below[1:-1])
            known.windows.update(line.windows)
        stats._sorted.clear()

    def _bits(self, n_split: int, width: int) -> int:
        """Sub-intervals of a split interval, as a power of two: at most
        :data:`_SUB_ZONES` in all, and their counts within a quarter of the memory
        budget (but at least ``2**_LEAST_BITS``).  Each chunk's result holds
        ``n_split * 2**bits * width`` counts (8 bytes each), one a thread and the merged
        one, and the line learns as many."""
        held = 8 * width * max(1, n_split) * (getattr(self.engine, "threads", 1) + 2)
        most = min(_SUB_ZONES // max(1, n_split), self.memory // 4 // held)
        return int(np.clip(math.floor(math.log2(max(1, most))), _LEAST_BITS, 16))

    def _refuse_spellings(self) -> None:
        """Two spellings of one label (by case, spaces, invisible characters or Unicode
        normalisation) refused as :func:`~audit.scores.read_scores` refuses them, each
        named by the file and row where it first appears."""
        for column, labels in (
            ("algorithm", self._stats.algorithms),
            ("group", self._stats.groups),
        ):
            labels = [str(label) for label in labels]
            found = functools.cache(
                lambda i, column=column, labels=labels: self._first(column, labels[i])
            )
            attributes = self.options.attributes or ()
            if column == "group" and len(attributes) > 1:  # attribute by attribute
                columns = self._columns
                joined_spellings(
                    labels,
                    attributes,
                    [f"{a}_1" in columns for a in attributes],
                    lambda i, found=found: (found(i)[2], found(i)[3], found(i)[2][2]),
                    source=self._name(),
                    merge=False,
                    message=STREAMED_SPELLINGS,
                )
                continue
            check_spellings(
                labels,
                lambda i, found=found: found(i)[0],
                source=self._name(),
                column=column,
                error=ScoresError,
                message=STREAMED_SPELLINGS,
                column_of=None if column == "algorithm" else lambda i, found=found: found(i)[1],
            )

    @functools.cached_property
    def _columns(self) -> list[str]:
        """The columns of the source (of its first chunk with rows), read once."""
        piece = next((p for p in self.pieces if p.rows), self.pieces[0])
        return (
            list(map(str, piece.frame.columns)) if piece.path is None else schema_names(piece.path)
        )

    def _first(self, column: str, label: str) -> tuple[str, str, tuple, str]:
        """Where ``label`` of ``column`` first appears: its file (or ``<DataFrame>``) and
        row (and column, of a group given per side), found by reading the chunks in order
        until one holds it; the column holding it there (of a group: its first side
        that does); and its place (chunk, row, side) and the row alone, to compare."""
        options = dataclasses.replace(self.options, subjects=False)
        for at, piece in enumerate(self.pieces):
            chunk = read_chunk(piece, options)
            names = chunk.algorithms if column == "algorithm" else chunk.groups
            if label not in names:
                continue
            code = names.index(label)
            sides = [chunk.algorithm] if column == "algorithm" else [chunk.group_1, chunk.group_2]
            rows = [np.flatnonzero(side == code) for side in sides]
            held = [(int(r[0]), k) for k, r in enumerate(rows) if len(r)]
            if held:
                row, side = min(held)
                place = (at, row, side)
                if column == "algorithm":
                    return piece.at(row), column, place, piece.at(row)
                named = group_columns(self._columns, self.options.attributes)
                if named[0] == named[1]:  # one column gives both sides
                    return piece.at(row), named[side], place, piece.at(row)
                # the side's column named too: the label may be on either
                text = f"{piece.at(row)}, column {named[side]!r}"
                return text, named[side], place, piece.at(row)
        return self._name(), column, (len(self.pieces), 0, 0), self._name()

    def _name(self) -> str:
        """The source as messages name it (:func:`~audit.tables.chunks.source_name`)."""
        return source_name(self.source)

    def _learnt(self, plan: Plan, partial: Partial, ordered=False) -> tuple[tuple, list[Line]]:
        if partial is None or partial.rows == 0:
            raise ScoresError(EMPTY.format(source=self._name()))
        return learnt(plan, partial, ordered=ordered)

    def _plan(self, algorithms, groups, keep, split, points, bits: int = 16) -> Plan:
        bounds, actions = [], []
        for a in range(len(algorithms)):
            spans = [(lo, hi, KEEP) for lo, hi in keep.get(a, [])]
            spans += [(lo, hi, SPLIT) for lo, hi in split.get(a, [])]
            values = {float(t) for t in points.get(a, ())}
            for lo, hi, _ in spans:
                values |= {lo, hi}
            b = np.array(sorted(v for v in values if np.isfinite(v)), dtype=np.float64)
            action = np.full(len(b) + 1, COUNT, dtype=np.int8)
            for lo, hi, kind in spans:
                first = 0 if lo == -np.inf else int(np.searchsorted(b, lo, "left")) + 1
                last = len(b) if hi == np.inf else int(np.searchsorted(b, hi, "left"))
                action[first : last + 1] = kind
            bounds.append(b)
            actions.append(action)
        return Plan(
            tuple(algorithms),
            tuple(groups),
            tuple(bounds),
            tuple(actions),
            bits=bits,
        )


def _read_pass(piece: Piece, options: Options, plan: Plan, cache: dict | None) -> Partial:
    """:func:`audit.scores.zones.zones_pass`, keeping the chunks a sample reads in
    ``cache`` (a dict, in this process) for the next pass, which takes them from it."""
    chunk = None if cache is None else cache.pop(piece, None)
    if chunk is None:
        try:
            chunk = read_chunk(piece, options)
        except ScoresError as error:
            error.piece = piece  # which: a sample reads the chunks out of order
            raise
        if cache is not None and plan.keep_new:
            cache[piece] = chunk
    return partial(chunk, plan)


def _say(said: list) -> None:
    """Give again the warnings recorded by :func:`warnings.catch_warnings`, to the filters
    and the display in force."""
    for w in said:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)


def _union(spans: list[tuple]) -> list[tuple]:
    """Overlapping (lo, hi, ladder) spans joined (their ladders too)."""
    out: list[list] = []
    for lo, hi, ladder in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
            out[-1][2].append(ladder)  # joined once at the end: many overlap
        else:
            out.append([lo, hi, [ladder]])
    return [(lo, hi, tuple(chain.from_iterable(ladders))) for lo, hi, ladders in out]


def _around(values: np.ndarray, at: float, lo: float, hi: float, error: float | None = None):
    """A window ``(start, stop, ladder)`` of the sorted sample ``values`` (all in
    ``[lo, hi)``) around position ``at``: ``[start, stop)`` reaches :data:`_Z`
    standard errors of a rank there on each side (``error``: that standard error, if
    not the binomial one), ``lo`` or ``hi`` past the first or last value; ``ladder``
    cuts it every two standard errors, for a pass that counts rather than keeps."""
    return _arounds(values, [at], lo, hi, None if error is None else [error])[0]


def _arounds(values: np.ndarray, at, lo: float, hi: float, error=None) -> list[tuple]:
    """:func:`_around` at each position of ``at`` (and ``error``, if given), at once: a
    distribution's order statistics ask for hundreds of windows of one population."""
    m = len(values)
    at = np.asarray(at, dtype=np.float64)
    if error is None:
        p = np.minimum(np.maximum(at / m, 0.0), 1.0)
        error = np.sqrt(m * p * (1 - p))
    error = np.asarray(error, dtype=np.float64)
    margin = _Z * error + 2 * _Z
    first, last = np.floor(at - margin).astype(np.int64), np.ceil(at + margin).astype(np.int64)
    # float64 before lo and hi join them (float32 scores would round those)
    start = np.where(first > 0, values[np.clip(first, 0, m - 1)].astype(np.float64), lo)
    after = np.nextafter(values[np.clip(last, 0, m - 1)], np.inf).astype(np.float64)
    stop = np.where(last < m - 1, after, hi)
    # the steps of each ladder rise along a row, and so do the values there: a ladder is
    # its row's values at the steps inside the sample, each once
    steps = np.round(at[:, None] + np.maximum(1.0, error)[:, None] * np.arange(-_Z, _Z + 1, 2))
    inside = (steps > 0) & (steps < m)
    cut = values[np.where(inside, steps, 0).astype(np.intp)]
    distinct = inside.copy()
    distinct[:, 1:] &= ~(inside[:, :-1] & (cut[:, 1:] == cut[:, :-1]))
    return [
        (float(a), float(b), tuple(row[keep].tolist()))
        for a, b, row, keep in zip(start.tolist(), stop.tolist(), cut, distinct, strict=True)
    ]
