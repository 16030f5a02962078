"""Score sets chunk by chunk, each chunk read and validated on its own.

A source is a Parquet file, a folder of Parquet files, a glob, a list of these, or
a sequence of DataFrames; its chunks are the row groups of the files (or the DataFrames), in
order.  :func:`read_chunk` gives a chunk as arrays -- scores in match
orientation, mated flags, and every label as an integer code into a short
list of labels -- with no per-row strings and, for the usual columns
(numbers, booleans, integer or text labels), without pandas: Arrow arrays
straight to NumPy, labels checked on their distinct values.  Anything else,
and any chunk with a problem, goes through :func:`audit.tables.scores.validate`,
which accepts what :func:`~audit.scores.read_scores` accepts and names the
file, row and column of the first problem with the same messages.

The streaming engine (:mod:`audit.scores.streaming`) reads a pass's chunks
with it; :func:`read_parquet_scores` fills the table of
:func:`~audit.scores.read_scores` with them, chunk after chunk.
"""

from __future__ import annotations

import glob
import os
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from audit.exceptions import AuditError, ParameterError
from audit.tables.common import (
    CANNOT_READ_PARQUET,
    PARQUET_SUFFIXES,
    Source,
    blank,
    inexact_integers,
    is_glob,
    is_parquet_name,
    parquet_names,
)
from audit.tables.labels import STREAMED_SPELLINGS
from audit.tables.scores import (
    EMPTY,
    IGNORED_MISSING,
    ScoresError,
    _layout,
    refuse_partition,
    validate,
)

NO_PARQUET = "{source}: no Parquet file matches"
NO_PATH = "the path of the Parquet scores is empty; name a file, a folder or a glob"
SAME_FILE = (
    "{again} is {first} again (through a link), so its comparisons would be counted "
    "twice; read each file once (a link to a folder is read as that folder)"
)
NOT_PARQUET_IN_FOLDER = (
    "{folder}: {file} is not named as a Parquet file ({suffixes}), and a folder of scores "
    "is read whole: move it out of the folder, or give a glob of the files to read "
    "(e.g. '{folder}/**/*.parquet')"
)
COLUMNS_DIFFER = (
    "{source}: columns {columns}, where the first chunk ({first}) has {expected}; the "
    "chunks of one score table have the same columns"
)
CHANGED = (
    "{source}: the file changed while it was being read (it is gone, or its size or "
    "modification time is not what it was at the start); a score set streamed in chunks "
    "is read in several passes, which must all find its files as they were: leave them "
    "unchanged until audit has finished, or read a copy"
)
TWICE = (
    "{again}: this Parquet file is listed twice (as {first}, and again through another "
    "file, folder or glob of the list), so its comparisons would be counted twice; list "
    "each file once"
)
BAD_SOURCE = (
    "the scores to stream must be a Parquet file, folder or glob, a list of them, or "
    "DataFrames (one, or a list of chunks of one score table); got {kind}"
)
NOTHING = (
    "the scores to stream are an empty {kind}: give a Parquet file, folder or glob, a "
    "list of them, or DataFrames"
)

#: Rows at the head of a chunk searched first for the order in which labels appear
#: (when there are few labels).
_HEAD = 1 << 12
_HEAD_LABELS = 64


def path_text(path: str | os.PathLike) -> str:
    """A path as text: what a path-like object stands for (:func:`os.fspath`), not its
    ``str``, which may be anything."""
    return os.fsdecode(os.fspath(path)) if isinstance(path, os.PathLike) else str(path)


def parquet_files(source: str | os.PathLike) -> list[str]:
    """The Parquet files of a file, a folder or a glob.

    A folder is read whole: every file below it named as a Parquet file
    (:data:`~audit.tables.common.PARQUET_SUFFIXES`, any case), and any other file refused
    (:data:`NOT_PARQUET_IN_FOLDER`), where it was left out without a word.  As Arrow,
    Dask and Spark read such a folder, a file or folder whose name starts with ``.``
    or ``_`` (``_SUCCESS``, ``_metadata``, ``.part-0.crc``) is not read."""
    text = path_text(source)
    if not text.strip():  # "" would be the working folder, and all the Parquet below it
        raise ParameterError(NO_PATH)
    if is_glob(text):
        files = sorted(glob.glob(text, recursive=True))
    elif Path(text).is_dir():
        files = []
        seen = {os.path.realpath(text)}
        # a linked folder is read as the folder it is (as a linked file is)
        for top, folders, names in os.walk(text, followlinks=True):
            folders[:] = sorted(f for f in folders if not f.startswith((".", "_")))
            for folder in list(folders):
                real = os.path.realpath(os.path.join(top, folder))
                if real in seen:  # a link back, or to a folder read already: a loop
                    raise ScoresError(SAME_FILE.format(again=os.path.join(top, folder), first=real))
                seen.add(real)
            for name in sorted(names):
                path = Path(top) / name
                if name.startswith((".", "_")):
                    continue
                if not is_parquet_name(path):
                    raise ScoresError(
                        NOT_PARQUET_IN_FOLDER.format(
                            folder=text,
                            file=path.relative_to(text).as_posix(),
                            suffixes=", ".join(PARQUET_SUFFIXES),
                        )
                    )
                files.append(str(path))
        files.sort()
    else:
        files = [text]
    if not files:
        raise ScoresError(NO_PARQUET.format(source=text))
    first: dict[str, str] = {}
    for path in files:  # one file reached twice, through a link: counted twice
        again = first.setdefault(os.path.realpath(path), path)
        if again != path:
            raise ScoresError(SAME_FILE.format(again=path, first=again))
    return files


@dataclass(frozen=True)
class Piece:
    """One chunk to read: a row group of a Parquet file, or a DataFrame."""

    path: str | None = None
    row_group: int = 0
    offset: int = 0  # rows of the file (or of the sequence) before this chunk
    rows: int = 0
    frame: pd.DataFrame | None = field(default=None, compare=False)
    #: The file's modification time (ns) and size when its row groups were listed: a
    #: file that differs when a chunk is read has changed since (see :data:`CHANGED`).
    stamp: tuple[int, int] | None = None
    #: The only chunk of its source with rows: what a message counts of it, it counts of
    #: the whole source.
    alone: bool = False

    def at(self, row: int = 0) -> str:
        """Row ``row`` of this chunk as messages name it: its file (or ``<DataFrame>``)
        and its row there."""
        return f"{self.path if self.path is not None else '<DataFrame>'}, row {self.offset + row}"


def _stamp(path: str) -> tuple[int, int] | None:
    """The modification time (ns) and size of a file (None where it cannot be read:
    reading its metadata then says why)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def _metadata(path: str):
    import pyarrow.parquet as pq

    try:
        return pq.read_metadata(path)
    except (OSError, ValueError) as reason:
        raise ScoresError(
            CANNOT_READ_PARQUET.format(source=path, reason=f"{type(reason).__name__}: {reason}")
        ) from reason


def _paths_or_frames(source, kind: str | None = None) -> tuple[list[str], list[pd.DataFrame]]:
    """``source`` as its Parquet files (each path, folder or glob expanded, in the order
    given) or as its DataFrames; a source of neither kind is refused, naming its type
    (``kind``, where ``source`` is a list made of what was given: see :func:`once`)."""
    kind = kind or type(source).__name__
    if isinstance(source, str | os.PathLike):
        return parquet_files(source), []
    if isinstance(source, pd.DataFrame):
        return [], [source]
    items = _items(source)
    if items is not None and not items:
        raise ParameterError(NOTHING.format(kind=kind))
    if items is not None and all(isinstance(item, pd.DataFrame) for item in items):
        return [], items
    if items is not None and all(isinstance(item, str | os.PathLike) for item in items):
        paths = [path for item in items for path in parquet_files(item)]
        seen: dict[str, str] = {}
        for path in paths:  # a file counted twice would count its comparisons twice
            real = os.path.realpath(path)
            if real in seen:
                raise ParameterError(TWICE.format(first=seen[real], again=path))
            seen[real] = path
        return paths, []
    if items is not None:
        kind += " of " + ", ".join(sorted({type(item).__name__ for item in items}))
    raise ParameterError(BAD_SOURCE.format(kind=kind))


def _items(source) -> list | None:
    """The items of a source that is a sequence of chunks (a list, a tuple, an array, a
    Series, an iterator...), in order; ``None`` for one that is not: a mapping's or a
    set's order is not an order of chunks, and bytes are not paths."""
    if isinstance(source, str | os.PathLike | pd.DataFrame | Mapping | Set) or _is_bytes(source):
        return None
    if isinstance(source, np.ndarray) and source.ndim == 0:  # one value, not a sequence
        return None
    return list(source) if isinstance(source, Iterable) else None


def _is_bytes(value) -> bool:
    return isinstance(value, bytes | bytearray | memoryview)


def once(source):
    """``source``, read as often as it is asked for: an iterator (read once) as a list."""
    return list(source) if isinstance(source, Iterator) else source


def source_name(source) -> str:
    """``source`` as messages name it: its path; the first of a sequence of paths, and how
    many follow; or ``<DataFrame>``."""
    if isinstance(source, str | os.PathLike):
        return path_text(source)
    items = None if isinstance(source, Iterator) else _items(source)  # not read up here
    if items and all(isinstance(item, str | os.PathLike) for item in items):
        more = len(items) - 1
        return path_text(items[0]) + (f" (and {more} more)" if more else "")
    return "<DataFrame>"


def pieces(source, kind: str | None = None, ignore: Sequence[str] = ()) -> list[Piece]:
    """The chunks of ``source`` (Parquet paths, folders or globs; or DataFrames) in order
    (``kind``: what ``source`` was given as, for messages, where it is not that); their
    columns are the same but for those ``ignore`` leaves out, each in one chunk at least."""
    paths, frames = _paths_or_frames(source, kind)
    out = []
    first: tuple | None = None  # the first chunk with rows: where, and its columns
    seen: dict[str, None] = {}  # the columns of the chunks with rows, in file order
    for path in paths:
        stamp = _stamp(path)
        metadata = _metadata(path)
        if metadata.num_rows:
            names = parquet_names(metadata.schema.to_arrow_schema())
            first = _same_columns(first, path, names, ignore)
            seen.update(dict.fromkeys(names))
        offset = 0
        for g in range(metadata.num_row_groups):
            rows = metadata.row_group(g).num_rows
            out.append(Piece(path=path, row_group=g, offset=offset, rows=rows, stamp=stamp))
            offset += rows
    offset = 0
    for frame in frames:
        out.append(Piece(offset=offset, rows=len(frame), frame=frame))
        if len(frame):
            first = _same_columns(first, out[-1].at(), list(map(str, frame.columns)), ignore)
            seen.update(dict.fromkeys(map(str, frame.columns)))
        offset += len(frame)
    for column in ignore if first is not None else ():
        if column not in seen:
            raise ScoresError(
                IGNORED_MISSING.format(source=path_text(source), column=column, columns=list(seen))
            )
    with_rows = [i for i, piece in enumerate(out) if piece.rows]
    if len(with_rows) == 1:
        out[with_rows[0]] = replace(out[with_rows[0]], alone=True)
    return out


def schema_names(path: str) -> list[str]:
    """The column names of a Parquet file."""
    import pyarrow.parquet as pq

    return parquet_names(pq.read_schema(path))


def group_columns(columns, attributes) -> tuple[str, str]:
    """The columns of a score table's columns ``columns`` giving the group of each side
    of a comparison, as messages name them: ``group_1`` and ``group_2``, ``group``
    for both where one column gives both (or the one attribute's of ``attributes``);
    ``group`` where the group joins several attributes, of no one column.

    >>> group_columns(["algorithm", "score", "mated", "group_1", "group_2"], None)
    ('group_1', 'group_2')
    >>> group_columns(["algorithm", "score", "mated", "race"], ["race"])
    ('race', 'race')
    """
    names = tuple(attributes) if attributes else ("group",)
    if len(names) != 1:
        return "group", "group"
    if names[0] in columns:
        return names[0], names[0]
    return f"{names[0]}_1", f"{names[0]}_2"


def _same_columns(first: tuple | None, where: str, names, ignore: Sequence[str] = ()) -> tuple:
    """``(where, columns)`` of the first chunk; a later chunk whose columns differ
    from it (but for those ``ignore`` leaves out) is refused, naming both (each chunk
    alone could pass: a subject column present in one and not another, say)."""
    columns = frozenset(names) - frozenset(ignore)
    if first is not None and columns != first[1]:
        raise ScoresError(
            COLUMNS_DIFFER.format(
                source=where, columns=sorted(columns), first=first[0], expected=sorted(first[1])
            )
        )
    return first if first is not None else (where, columns)


def data_bytes(source) -> int:
    """Bytes of the data when held in memory (Parquet: uncompressed column sizes)."""
    paths, frames = _paths_or_frames(source)
    total = 0
    for path in paths:
        metadata = _metadata(path)
        for g in range(metadata.num_row_groups):
            total += metadata.row_group(g).total_byte_size
    return total + int(sum(f.memory_usage(deep=False).sum() for f in frames))


@dataclass(frozen=True)
class Options:
    """How to read the chunks: as :func:`~audit.scores.read_scores` reads a table."""

    higher_is_match: bool = True
    attributes: tuple | None = None
    ignore: tuple = ()
    #: Read (and check) the subject columns; a pass that has checked them once leaves
    #: them unread.
    subjects: bool = True
    #: The labels whose spellings the reader checks over every chunk together (and can
    #: merge there), not chunk by chunk: a streamed score set's algorithms and groups;
    #: ``read_scores``'s subjects too.
    later: tuple = ("algorithms", "groups")
    #: How a chunk refuses two spellings of one label of another kind (the subjects of
    #: a streamed score set): as a score set streamed, which cannot merge them.
    spelled: str = STREAMED_SPELLINGS


@dataclass
class Chunk:
    """A validated chunk: codes into short lists of labels, scores in match orientation.

    ``score`` is float32 or float64 as given (other numbers as float64), negated
    for distances, exactly as :func:`~audit.scores.score_stats` holds it.  The
    labels are text, as in :func:`~audit.scores.read_scores`; ``group_1`` and
    ``group_2`` share ``groups``.  ``first`` lists the labels in order of first
    appearance: algorithms, groups on side 1, groups on side 2 (codes without
    rows appear in none).
    """

    score: np.ndarray
    mated: np.ndarray
    algorithm: np.ndarray
    group_1: np.ndarray
    group_2: np.ndarray
    algorithms: list[str]
    groups: list[str]
    first: tuple[list[str], list[str], list[str]]
    subjects: tuple | None = None  # (subject_1 codes, subject_2 codes, their labels)

    def __len__(self) -> int:
        return len(self.score)


def read_chunk(piece: Piece, options: Options) -> Chunk:
    """The validated chunk ``piece``; rows are named by their place in the file (or in
    the sequence of DataFrames) in messages."""
    import pyarrow as pa

    if piece.path is not None:
        with _reading(piece.path):
            file, columns = _open(piece, options)
            table = file.read_row_group(piece.row_group, columns=columns)
        return _chunk(piece, None, piece.path, columns, table, options)
    name = "<DataFrame>"
    frame = piece.frame
    columns = _columns([str(c) for c in frame.columns], name, options)
    table = None
    # scores of Python objects (text, integers, a mix) are read as read_scores reads
    # them: Arrow would make floats of integers a float cannot hold, without a word
    if "score" not in frame.columns or frame["score"].dtype != object:
        try:
            # the columns converted where they are, on this thread: pyarrow's pool of
            # threads for the columns of a frame, started anew at each call, took 3-5
            # times as long for a chunk of 1,250 to 20,000 rows, and gained nothing at 1e6
            # rows (text converts under the GIL); the chunks are read in a pool of their own
            table = pa.Table.from_pandas(frame, columns=columns, preserve_index=False, nthreads=1)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            table = None
    return _chunk(piece, frame, name, columns, table, options)


def read_batches(piece: Piece, options: Options, rows: int):
    """The chunk ``piece`` of a Parquet file as validated chunks of at most ``rows``
    rows, in order: a row group of any size is decoded a batch at a time."""
    import pyarrow as pa

    with _reading(piece.path):
        file, columns = _open(piece, options, stream=True)
        # decoded by this thread: the buffers of Arrow's own threads stay in their pools
        # (a score set of 5e6 rows took 2.6 times its arrays' memory, 2.3 this way; no slower)
        batches = file.iter_batches(
            batch_size=rows, row_groups=[piece.row_group], columns=columns, use_threads=False
        )
    offset = piece.offset
    while True:
        with _reading(piece.path):
            batch = next(batches, None)
        if batch is None:
            return
        alone = piece.alone and batch.num_rows == piece.rows
        part = Piece(piece.path, piece.row_group, offset, batch.num_rows, alone=alone)
        yield _chunk(part, None, piece.path, columns, pa.Table.from_batches([batch]), options)
        offset += batch.num_rows


class _reading:
    """Errors of reading a Parquet file as :class:`ScoresError` naming it."""

    def __init__(self, path: str):
        self.path = path

    def __enter__(self):
        return self

    def __exit__(self, kind, reason, traceback):
        import pyarrow as pa

        if isinstance(reason, AuditError) or not isinstance(  # audit's own said as they are
            reason, OSError | ValueError | pa.ArrowException
        ):
            return False
        raise ScoresError(
            CANNOT_READ_PARQUET.format(
                source=self.path, reason=f"{type(reason).__name__}: {reason}"
            )
        ) from reason


def _open(piece: Piece, options: Options, stream: bool = False) -> tuple:
    """The Parquet file of ``piece`` (text columns read as dictionaries) and the columns
    to read from it; ``stream``: its pages read as they are decoded, not a row group's
    at once."""
    import pyarrow.parquet as pq

    try:
        stat = os.stat(piece.path)
    except OSError:  # gone, or its folder: not found as the pass before found it
        if piece.stamp is None:  # not found when listed either: reading it says so
            raise
        raise ScoresError(CHANGED.format(source=piece.path)) from None
    if piece.stamp is not None and piece.stamp != (stat.st_mtime_ns, stat.st_size):
        raise ScoresError(CHANGED.format(source=piece.path))
    file = pq.ParquetFile(
        piece.path,
        metadata=_footer(piece.path, stat.st_mtime_ns, stat.st_size),
        read_dictionary=_text_columns(piece.path),
        **({"pre_buffer": False, "buffer_size": 1 << 20} if stream else {}),
    )
    return file, list(_file_columns(piece.path, stat.st_mtime_ns, stat.st_size, options))


@lru_cache(maxsize=256)
def _file_columns(path: str, mtime_ns: int, size: int, options: Options) -> tuple[str, ...]:
    """The columns a chunk of the Parquet file ``path`` needs (:func:`_columns`), checked
    once for all its row groups while the file keeps its time and size."""
    schema = _footer(path, mtime_ns, size).schema.to_arrow_schema()
    return tuple(_columns(parquet_names(schema), path, options))


@lru_cache(maxsize=256)
def _footer(path: str, mtime_ns: int, size: int):
    """The metadata of a Parquet file, read once for all its row groups (as long as the
    file keeps its time and size): its footer is otherwise parsed again for each."""
    import pyarrow.parquet as pq

    return pq.read_metadata(path)


def _chunk(piece: Piece, frame, name: str, columns: list[str], table, options: Options) -> Chunk:
    """The chunk from the Arrow table of ``piece``, through validation when the fast
    path declines."""
    chunk = None if table is None else _fast(table, columns, options)
    if chunk is None:
        chunk = _validated(piece, frame, name, columns, table, options)
    return chunk


@lru_cache(maxsize=256)
def _text_columns(path: str) -> list[str]:
    """Columns of a Parquet file stored as text: read as dictionaries, not strings."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    return [
        f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
    ]


def _columns(names: list[str], source: str, options: Options) -> list[str]:
    """The columns a chunk needs, the names checked as :func:`read_scores` checks them."""
    refuse_partition(names, source, options.attributes, options.ignore)
    # (a column ignore names need be in one chunk only: pieces() checks it)
    ignore = [c for c in options.ignore if c in names]
    attributes, two_sided, subjects = _layout(names, source, options.attributes, ignore)
    needed = ["algorithm", "score", "mated"]
    for name, sided in zip(attributes, two_sided, strict=True):
        needed += [f"{name}_1", f"{name}_2"] if sided else [name]
    return needed + (subjects if options.subjects else [])


# ----------------------------------------------------------------- the fast path


def _single(column):
    """A ChunkedArray as one Array (dictionaries unified)."""
    import pyarrow as pa

    if column.num_chunks == 1:
        return column.chunk(0)
    if pa.types.is_dictionary(column.type):
        column = column.unify_dictionaries()
    return pa.concat_arrays(column.chunks)


def _scores(array, higher_is_match: bool) -> np.ndarray | None:
    import pyarrow as pa

    if array.null_count:
        return None
    kind = array.type
    if pa.types.is_float32(kind) or pa.types.is_float64(kind):
        values = array.to_numpy(zero_copy_only=False)
        # every score finite: the least and the greatest are (a NaN makes both NaN)
        if len(values) and not (np.isfinite(values.min()) and np.isfinite(values.max())):
            return None
    elif pa.types.is_integer(kind):
        integers = array.to_numpy(zero_copy_only=False)
        values = integers.astype(np.float64)
        if integers.dtype.itemsize == 8 and inexact_integers(integers, values).any():
            return None  # validation names the integer a float64 cannot hold
    else:
        return None
    return values if higher_is_match else np.negative(values)


def _flags(array) -> np.ndarray | None:
    import pyarrow as pa

    if array.null_count:
        return None
    if pa.types.is_boolean(array.type):
        # the bits unpacked by NumPy: twice as fast as Arrow's conversion
        bits = np.frombuffer(array.buffers()[1], dtype=np.uint8)
        end = array.offset + len(array)
        return np.unpackbits(bits, count=end, bitorder="little")[array.offset :].view(bool)
    if pa.types.is_integer(array.type):
        values = array.to_numpy(zero_copy_only=False)
        mated = values == 1
        if (mated | (values == 0)).all():
            return mated
    return None


def _codes(array) -> tuple[np.ndarray, list[str]] | None:
    """Integer codes of a label column and the text of each code; None when the column
    is not plainly integers or text, or holds a missing or blank label."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if array.null_count:
        return None
    kind = array.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        array = pc.dictionary_encode(array)
        kind = array.type
    if pa.types.is_dictionary(kind):
        values = kind.value_type
        if not (
            pa.types.is_string(values)
            or pa.types.is_large_string(values)
            or pa.types.is_integer(values)
        ):
            return None
        labels = [str(v) for v in array.dictionary.to_pylist()]
        codes = array.indices.to_numpy(zero_copy_only=False)
        bad = np.flatnonzero(blank(pd.Series(labels, dtype=object))) if labels else []
        if len(bad) and np.isin(codes, bad).any():
            return None
        return codes, labels
    if pa.types.is_integer(kind):
        values = array.to_numpy(zero_copy_only=False)
        if not len(values):
            return values.astype(np.int8), []
        low, high = int(values.min()), int(values.max())
        if high - low < 1 << 15:
            if low == 0 and values.dtype.itemsize <= 2:
                codes = values  # small non-negative integers are their own codes
            else:
                codes = (values - low).astype(np.int16)
            return codes, [str(v) for v in range(low, high + 1)]
        codes, uniques = pd.factorize(values, sort=False)
        return codes, [str(v) for v in uniques.tolist()]
    return None


def _appearance(codes: np.ndarray, labels: list[str]) -> list[str]:
    """The labels of the codes present, in order of first appearance."""
    if len(labels) > _HEAD_LABELS:  # many labels (subjects): one pass of hashing
        return [labels[c] for c in pd.unique(codes).tolist()]
    head = codes[:_HEAD]
    seen, at = np.unique(head, return_index=True)
    order = seen[np.argsort(at, kind="stable")].tolist()
    if len(order) < len(labels) and len(codes) > len(head):
        # is any other code present further on?  (one count; then where each first is)
        present = np.flatnonzero(np.bincount(codes, minlength=len(labels)))
        rest = np.setdiff1d(present, seen)
        firsts = [int(np.argmax(codes == c)) for c in rest.tolist()]
        order += rest[np.argsort(firsts, kind="stable")].tolist()
    return [labels[c] for c in order]


def _sides(first, second) -> tuple | None:
    """Codes of two label columns over one list of labels (the first's, then the
    second's new ones); None as :func:`_codes`."""
    if first is None or second is None:
        return None
    (codes_1, labels), (codes_2, labels_2) = first, second
    if labels_2 != labels[: len(labels_2)]:
        index = {label: i for i, label in enumerate(labels)}
        labels = labels + [x for x in labels_2 if x not in index]
        index = {label: i for i, label in enumerate(labels)}
        codes_2 = np.array([index[x] for x in labels_2], dtype=np.int32).take(codes_2)
    return codes_1, codes_2, labels


def _fast(table, columns: list[str], options: Options) -> Chunk | None:
    """The chunk from Arrow arrays, or None for anything out of the ordinary."""
    # (the table holds the columns read, checked as the file's: none to leave out)
    names, two_sided, subjects = _layout(list(table.schema.names), "", options.attributes, ())
    if len(names) != 1 or table.num_rows == 0:
        return None
    score = _scores(_single(table.column("score")), options.higher_is_match)
    mated = None if score is None else _flags(_single(table.column("mated")))
    algorithm = None if mated is None else _codes(_single(table.column("algorithm")))
    if algorithm is None:
        return None
    if two_sided[0]:
        sides = _sides(*(_codes(_single(table.column(f"{names[0]}{s}"))) for s in ("_1", "_2")))
        if sides is None:
            return None
        group_1, group_2, labels = sides
        differ = group_1 != group_2
        differ &= mated
        if differ.any():
            return None
        order_2 = _appearance(group_2, labels)
    else:
        side = _codes(_single(table.column(names[0])))
        if side is None:
            return None
        group_1, labels = side
        group_2 = group_1
        order_2 = None
    people = None
    if subjects:
        first, second = (_single(table.column(c)) for c in subjects)
        people = _sides(_codes(first), _codes(second))
        if people is None:
            return None
        differ = people[0] != people[1]
        differ &= mated
        if differ.any():
            return None
    order_1 = _appearance(group_1, labels)
    return Chunk(
        score=score,
        mated=mated,
        algorithm=algorithm[0],
        group_1=group_1,
        group_2=group_2,
        algorithms=algorithm[1],
        groups=labels,
        first=(_appearance(*algorithm), order_1, order_1 if order_2 is None else order_2),
        subjects=people,
    )


# ----------------------------------------------------------------- the full path


def _validated(
    piece: Piece, frame, name: str, columns: list[str], table, options: Options
) -> Chunk:
    """The chunk through :func:`audit.tables.scores.validate` (its messages)."""
    if frame is not None:
        frame = frame[columns].copy(deep=False)
    else:
        from audit.tables.scores import arrow_frame

        frame = arrow_frame(table)
    frame.index = pd.RangeIndex(piece.offset, piece.offset + len(frame))
    # a part of the source, unless it is all of it: what a message counts, it counts here
    part = None if piece.alone else (piece.offset, piece.offset + len(frame) - 1)
    checked = validate(
        frame,
        # spellings of one label are checked over every chunk together, by the reader
        Source(name, csv=False, part=part, later=options.later, spelled=options.spelled),
        higher_is_match=options.higher_is_match,
        attributes=options.attributes,  # (the columns read: none to leave out)
    )
    groups = [str(g) for g in checked["group_1"].cat.categories]
    group_1 = checked["group_1"].cat.codes.to_numpy()
    group_2 = checked["group_2"].cat.codes.to_numpy()
    # side-1 first appearances are the leading categories; side 2 has its own order
    on_side_1 = int((np.bincount(group_1, minlength=len(groups)) > 0).sum())
    score = checked["score"].to_numpy()
    if not options.higher_is_match:
        score = np.negative(score)
    algorithms = [str(a) for a in checked["algorithm"].cat.categories]
    people = None
    if "subject_1" in checked.columns:
        people = (
            checked["subject_1"].cat.codes.to_numpy(),
            checked["subject_2"].cat.codes.to_numpy(),
            [str(x) for x in checked["subject_1"].cat.categories],
        )
    return Chunk(
        score=score,
        mated=checked["mated"].to_numpy(),
        algorithm=checked["algorithm"].cat.codes.to_numpy(),
        group_1=group_1,
        group_2=group_2,
        algorithms=algorithms,
        groups=groups,
        first=(algorithms, groups[:on_side_1], [groups[c] for c in pd.unique(group_2)]),
        subjects=people,
    )


# --------------------------------------------------- a whole score set in memory


def in_order(function, items, threads: int | None = None):
    """``function(item)`` of each item, in order, computed ``threads`` at a time (Arrow
    decodes and NumPy works without holding the interpreter): a few items in memory."""
    threads = threads if threads is not None else min(2, os.cpu_count() or 1)
    with ThreadPoolExecutor(max(1, threads)) as pool:
        running: deque = deque()
        for item in items:
            running.append(pool.submit(function, item))
            if len(running) > threads:
                yield running.popleft().result()
        while running:
            yield running.popleft().result()


class _Labels:
    """Labels in order of first appearance, shared by the columns that code them."""

    def __init__(self):
        self.labels: list[str] = []
        self.index: dict[str, int] = {}

    def add(self, present: list[str]) -> None:
        for label in present:
            if label not in self.index:
                self.index[label] = len(self.labels)
                self.labels.append(label)


class _Codes:
    """A column of label codes filled chunk by chunk, as small an integer as its labels
    allow."""

    def __init__(self, rows: int, labels: _Labels):
        self.codes = np.empty(rows, dtype=np.int8)
        self.labels = labels

    def put(self, at: int, codes: np.ndarray, labels: list[str]) -> None:
        known = self.labels
        if len(known.labels) > np.iinfo(self.codes.dtype).max:
            self.codes = self.codes.astype(np.int16 if len(known.labels) < 1 << 15 else np.int32)
        mapping = np.array([known.index.get(x, 0) for x in labels], dtype=self.codes.dtype)
        self.codes[at : at + len(codes)] = mapping.take(codes)

    def copy(self, rows: int) -> _Codes:
        """Another column with the same codes in its first ``rows`` rows (the rest of
        it not yet written, so not yet in memory)."""
        other = _Codes(0, self.labels)
        other.codes = np.empty_like(self.codes)
        other.codes[:rows] = self.codes[:rows]
        return other

    def categorical(self, order: list[str], dtype=None) -> pd.Categorical:
        """The codes as a categorical over ``order`` (the same labels, reordered)."""
        codes = self.codes
        if order != self.labels.labels:
            position = {label: i for i, label in enumerate(order)}
            remap = np.array([position[x] for x in self.labels.labels], dtype=codes.dtype)
            codes = remap.take(codes)
        dtype = pd.CategoricalDtype(order if dtype is None else pd.Index(order, dtype=dtype))
        return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)


#: Rows decoded at a time by :func:`read_parquet_scores`, whatever the row groups.
_BATCH = 1 << 17


def read_parquet_scores(source, options: Options, named: list | None = None) -> pd.DataFrame:
    """:func:`audit.tables.scores.read_scores` of a Parquet file, folder or glob: a
    batch of :data:`_BATCH` rows at a time (:func:`read_batches`) into arrays of the
    final size, so that memory holds the result and one batch: scores as given,
    labels as codes (one array for both sides of a group given once per row).
    ``named``, a list, receives the function naming a row of the result by its file
    and its row there (:func:`row_names`), and the columns of the files (of the first
    with rows)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pool = pa.default_memory_pool()
    items = pieces(source, ignore=options.ignore)
    if named is not None:
        named.append(row_names(items))
        files = [p.path for p in items if p.rows] or [p.path for p in items]
        named.append(schema_names(files[0]) if files else [])
    name = path_text(source)
    rows = sum(p.rows for p in items)
    if not rows:
        _columns(parquet_names(pq.read_schema(parquet_files(source)[0])), name, options)
        raise ScoresError(EMPTY.format(source=name))
    score = mated = None
    labels = {"algorithm": _Labels(), "group": _Labels(), "subject": _Labels()}
    columns = {
        "algorithm": _Codes(rows, labels["algorithm"]),
        "group_1": _Codes(rows, labels["group"]),
        "group_2": None,  # while every row's two sides are one group: group_1's codes
    }
    order: dict[str, list] = {"algorithm": [], "group_1": [], "group_2": []}
    order |= {"subject_1": [], "subject_2": []}
    at = 0
    # scores as given; every label's spellings checked of the whole table (_one_spelling)
    raw = Options(
        True, options.attributes, options.ignore, later=("algorithms", "groups", "subjects")
    )
    for chunk in (chunk for piece in items for chunk in read_batches(piece, raw, _BATCH)):
        n = len(chunk)
        if score is None or (score.dtype == np.float32 and chunk.score.dtype != np.float32):
            wider = np.empty(rows, dtype=chunk.score.dtype if score is None else np.float64)
            if score is not None:
                wider[:at] = score[:at]
            score = wider
        if mated is None:
            mated = np.empty(rows, dtype=bool)
        score[at : at + n] = chunk.score
        mated[at : at + n] = chunk.mated
        found = {"algorithm": chunk.first[0], "group_1": chunk.first[1]}
        found["group_2"] = chunk.first[2]
        labels["algorithm"].add(chunk.first[0])
        labels["group"].add([*chunk.first[1], *chunk.first[2]])
        columns["algorithm"].put(at, chunk.algorithm, chunk.algorithms)
        columns["group_1"].put(at, chunk.group_1, chunk.groups)
        if columns["group_2"] is None and not (
            chunk.group_2 is chunk.group_1 or np.array_equal(chunk.group_2, chunk.group_1)
        ):
            columns["group_2"] = columns["group_1"].copy(at)
        if columns["group_2"] is not None:
            columns["group_2"].put(at, chunk.group_2, chunk.groups)
        if chunk.subjects is not None:
            first, second, names = chunk.subjects
            found["subject_1"] = _appearance(first, names)
            found["subject_2"] = _appearance(second, names)
            labels["subject"].add([*found["subject_1"], *found["subject_2"]])
            for column, codes in (("subject_1", first), ("subject_2", second)):
                columns.setdefault(column, _Codes(rows, labels["subject"]))
                columns[column].put(at, codes, names)
        for column, present in found.items():
            order[column] = _ordered_union(order[column], present)
        at += n
        del chunk
        pool.release_unused()  # hand the batch's decoding buffers back
    groups = _ordered_union(order["group_1"], order["group_2"])
    group_1 = columns["group_1"].categorical(groups, "string")
    group_2 = group_1 if columns["group_2"] is None else None
    if group_2 is None:
        group_2 = columns["group_2"].categorical(groups, "string")
    table = pd.DataFrame(
        {
            "algorithm": columns["algorithm"].categorical(order["algorithm"]),
            "score": score,
            "mated": mated,
            "group_1": group_1,
            "group_2": group_2,
        },
        copy=False,
    )
    if "subject_1" in columns:
        people = _ordered_union(order["subject_1"], order["subject_2"])
        table["subject_1"] = columns["subject_1"].categorical(people, "string")
        table["subject_2"] = columns["subject_2"].categorical(people, "string")
    table.attrs["higher_is_match"] = bool(options.higher_is_match)
    table.attrs["attributes"] = tuple(options.attributes) if options.attributes is not None else ()
    table.attrs["source"] = name
    return table


def _ordered_union(first: list, second: list) -> list:
    seen = set(first)
    return first + [x for x in second if x not in seen]


def row_names(items: list[Piece]):
    """The function naming row ``i`` of the chunks ``items`` read one after another by
    its chunk's file (or ``<DataFrame>``) and its row there (:meth:`Piece.at`)."""
    starts = np.cumsum([0] + [p.rows for p in items])

    def name(row: int) -> str:
        i = int(np.searchsorted(starts, row, "right")) - 1
        return items[i].at(row - int(starts[i]))

    return name
