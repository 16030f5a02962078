"""Reading the user's tables as text, and naming their cells in messages.

:mod:`audit.tables.rates` and :mod:`audit.scores` read a CSV with every cell as text
(no value is converted, guessed or dropped before it is validated), Parquet as
it is, or a DataFrame, and point at problems by file, CSV line (or DataFrame
row) and column.  A CSV is split by one CSV parser (header and rows alike), a
row with more or fewer fields than the header is refused, reads stop at
``max_bytes`` (:data:`MAX_BYTES` by default) and at the first NUL byte, and
every number check is shared here (:func:`refuse_non_real`, :func:`refuse_rounded`,
:func:`refuse_inexact_integers`, :func:`whole_numbers`) so that every reader refuses the
same values.
"""

from __future__ import annotations

import codecs
import csv
import io
import lzma
import os
import re
import warnings
import zlib
from decimal import Decimal, InvalidOperation
from pathlib import Path

import numpy as np
import pandas as pd

from audit.tables.labels import check_spellings

CANNOT_READ = "{source}: cannot be read as CSV: {reason}"
CANNOT_READ_LINE = "{source}, line {line}: cannot be read as CSV: {reason}"
CANNOT_READ_PARQUET = "{source}: cannot be read as Parquet: {reason}"
DUPLICATE_COLUMN = "{source}: column {column!r} appears more than once"
EMPTY_LABEL = "{where}, column {column!r}: the label is empty{more}"
MISSING_COLUMN = "{source}: column {column!r} is missing{hint}"
IGNORED_NEEDED = (
    "{source}: column {column!r} is left out by ignore (command line --ignore-columns), "
    "and the table needs it{hint}; keep it"
)
MISSING_VALUE = "{where}, column {column!r}: value is missing{more}"
NOT_NUMERIC = "{where}, column {column!r}: {value!r} is not a number{more}"
NOT_A_LABEL = (
    "{where}, column {column!r}: {value} is a {kind}, not a label; write one text or "
    "number a cell{more}"
)

#: Spellings of a missing value (compared lower-cased and stripped): read as missing, never as 0.
SPELLED_NAN = ("nan", "-nan", "+nan", "na", "n/a", "null", "none")
NO_HEADER = "{source}: the file is empty; a table starts with a header line of column names"
RAGGED_ROW = (
    "{source}, line {line}: {found} field(s), but the header (line {header_line}) has "
    "{expected}; every row needs one field per column (a comma inside a value needs quotes)"
)
TOO_LARGE = (
    "{source}: larger than the limit of {limit} bytes; pass a larger max_bytes "
    "(read_rates(..., max_bytes=...)) to read it"
)
NUL_BYTE = "{source}: byte {offset} is a NUL byte; a CSV is text, and this file is not"
OTHER_ENCODING = (
    "{source}: the file is in {encoding} ({how}), not UTF-8; read it with "
    "encoding={codec!r} (command line: --encoding {codec})"
)
NOT_UTF8 = (
    "{source}: byte {offset} (0x{byte:02x}) is not UTF-8; the file may be in a single-byte "
    "encoding such as latin-1 or cp1252 (Windows): read it with encoding='latin-1' or "
    "encoding='cp1252' (command line: --encoding cp1252), or save it as UTF-8"
)
NOT_ENCODING = "{source}: byte {offset} (0x{byte:02x}) cannot be read as {encoding}"
#: An encoding given for a table that is not text (it would be read as if not given).
ENCODING_NOT_TEXT = (
    "{source}: encoding={encoding!r} (command line --encoding) reads a CSV's text, and this "
    "table is not one (a Parquet file's text is UTF-8 by its format); leave it out"
)
#: A file the encoding's decoder refuses as a whole, at no one byte (Python's words).
UNREADABLE_AS = "{source}: the file cannot be read as {encoding}: {reason}"
#: UTF-16 or UTF-32 without a byte-order mark, when told to read it as such.
NO_BYTE_ORDER_MARK = (
    "{source}: the file does not start with a byte-order mark, so its byte order is not "
    "known; read it with encoding='{codec}-le' or encoding='{codec}-be' (command line: "
    "--encoding {codec}-le or --encoding {codec}-be)"
)
ZIP_FILE = (
    "{source}: the file is a zip archive; unzip it and give the CSV inside (gzip, bzip2 and "
    "xz files are read as they are)"
)
NOT_PARQUET = (
    "{source}: named .parquet but is not a Parquet file (it does not start with the "
    "Parquet magic bytes PAR1)"
)

#: Default largest file read (bytes): :func:`read_table`'s ``max_bytes``.
MAX_BYTES = 2**30
#: Bytes read at a time, so that an endless input stops at the first bad chunk.
_CHUNK = 2**20
_PARQUET_MAGIC = b"PAR1"
BOOLEAN = "{where}, column {column!r}: {value!r} is a boolean, not a number{more}"
COMPLEX = "{where}, column {column!r}: {value!r} is a complex number, not a real one{more}"
NOT_A_QUANTITY = "{where}, column {column!r}: {value!r} is a {kind}, not a number{more}"
INEXACT_INTEGER = (
    "{where}, column {column!r}: {value} is an integer a 64-bit float cannot hold (it "
    "would be read as {read!r}, as the integers nearest it would be){more}"
)
UNDERFLOW = (
    "{where}, column {column!r}: {value!r} is too small for a 64-bit float (it would be "
    "read as {read!r}){more}"
)
OVERFLOW = (
    "{where}, column {column!r}: {value!r} is too large for a 64-bit float (it would be "
    "read as inf){more}"
)
COUNT_TOO_LARGE = (
    "{where}, column {column!r}: {value!r} is larger than the largest count a 64-bit "
    "integer holds (9223372036854775807){more}"
)

#: Largest count: a 64-bit signed integer.
INT64_MAX = int(np.iinfo(np.int64).max)
_DECIMAL = re.compile(r"^\s*\+?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$")
_MANTISSA_DIGIT = re.compile(r"^[^eE]*[1-9]")
#: A number written without an exponent ("7", "7.0", "7.5"): an integer where it has no
#: fraction.
_INTEGER_TEXT = re.compile(r"[+-]?[0-9]+(\.[0-9]*)?")
_SPELLED_INF = frozenset({"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"})


class Source:
    """Where a table came from, to name a row of it in messages.

    ``lines`` holds the file line on which every row of a CSV starts (blank
    lines, which carry no data, are not rows, and a quoted value may span
    several lines, so rows and lines need not be consecutive).
    """

    def __init__(
        self,
        name: str,
        *,
        csv: bool,
        lines: np.ndarray | None = None,
        merge_labels: bool = False,
        part: tuple[int, int] | None = None,
        later: tuple[str, ...] = (),
        spelled: str | None = None,
    ):
        self.name = name
        self.csv = csv
        self.lines = lines
        #: Spellings of one label (:mod:`audit.tables.labels`) read as one, not refused.
        self.merge_labels = merge_labels
        #: The rows ``(first, last)`` of a larger table that this one is, read on its own
        #: (a row group or batch of a Parquet file): a message counts its cells only.
        self.part = part
        #: The labels (``"algorithms"``, ``"groups"``, ``"subjects"``, as
        #: :func:`~audit.tables.labels.label_kinds` names them) whose spellings are not
        #: checked here: a reader checks them over every chunk of a source together (and
        #: can merge them there).
        self.later = later
        #: The refusal of two spellings of one label (``SPELLINGS`` of
        #: :mod:`audit.tables.labels` when None): a streamed chunk's says it cannot merge.
        self.spelled = spelled
        #: The columns the reader was asked to leave out (``ignore``), as it left them out.
        self.ignored: tuple[str, ...] = ()

    def missing(self, column: str, error: type[Exception], hint: str = "") -> Exception:
        """The refusal of this table lacking ``column`` (:func:`missing_column`: of
        ``ignore`` where it left the column out)."""
        return missing_column(self.name, column, error, hint, self.ignored)

    def where(self, frame: pd.DataFrame, position: int) -> str:
        """``"<file>, line N"`` for a CSV, ``"<name>, row <label>"`` otherwise."""
        if self.csv:
            line = self.lines[position] if self.lines is not None else position + 2
            return f"{self.name}, line {line}"
        return f"{self.name}, row {frame.index[position]}"

    def more(self, count: int) -> str:
        """The tail of a message counting the further offending cells (:func:`more`):
        of a part of a larger table, where they were counted, and that they were
        counted there only.

        >>> Source("s.parquet", csv=False, part=(1000, 1999)).more(2)
        ' (and 2 more such cell(s) in rows 1000 to 1999, read together; the other rows were not counted)'
        >>> Source("s.parquet", csv=False, part=(7, 7)).more(0)
        ' (a row read on its own; the other rows were not counted)'
        """
        if self.part is None:
            return more(count)
        first, last = self.part
        if first == last:
            return " (a row read on its own; the other rows were not counted)"
        counted = f"and {count} more such cell(s)" if count > 0 else "no other such cell"
        return f" ({counted} in rows {first} to {last}, read together; the other rows were not counted)"


#: Byte-order marks of the encodings a CSV is most often saved in besides UTF-8 (longest
#: first: the UTF-32 little-endian mark begins with the UTF-16 one).
_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32", "utf-32"),
    (codecs.BOM_UTF32_BE, "UTF-32", "utf-32"),
    (codecs.BOM_UTF16_LE, "UTF-16", "utf-16"),
    (codecs.BOM_UTF16_BE, "UTF-16", "utf-16"),
)
#: Compressed files, by their first bytes: read through the decompressor of the standard library.
_COMPRESSED = ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\xfd7zXZ\x00", "lzma"))
_ZIP = b"PK\x03\x04"


#: The names a Parquet file ends in (any case): a file so named is read as Parquet, and a
#: folder of scores is read as the files so named below it.
PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")


def is_parquet_name(path: str | os.PathLike) -> bool:
    """Whether ``path`` is named as a Parquet file.

    >>> is_parquet_name("run/part-0.PARQUET"), is_parquet_name("a.pq"), is_parquet_name("a.csv")
    (True, True, False)
    """
    return os.fsdecode(os.fspath(path)).lower().endswith(PARQUET_SUFFIXES)


def is_glob(source: str | os.PathLike) -> bool:
    """Whether ``source`` is a glob of files (it holds ``*``, ``?`` or ``[``) rather than
    the path of one: a file or folder of that very name is read as named.

    >>> is_glob("runs/*.parquet"), is_glob("no-such-run-[1].csv"), is_glob("run.parquet")
    (True, True, False)
    """
    text = os.fsdecode(os.fspath(source))
    return any(ch in text for ch in "*?[") and not os.path.lexists(text)


def _open(path: Path, name: str, error: type[Exception]):
    """The file's bytes, decompressed when it is gzip, bzip2 or xz (whatever its name)."""
    with open(path, "rb") as handle:
        magic = handle.read(6)
    if magic.startswith(_ZIP):
        raise error(ZIP_FILE.format(source=name))
    for start, module in _COMPRESSED:
        if magic.startswith(start):
            import importlib

            return importlib.import_module(module).open(path, "rb")
    return open(path, "rb")


def _read_text(
    path: Path, name: str, max_bytes: int, error: type[Exception], encoding: str | None = None
) -> str:
    """The file as text, read chunk by chunk (decompressed first when it is gzip, bzip2 or
    xz): refused at the first NUL character, the first byte that is not of the encoding
    (UTF-8 unless ``encoding`` names another, the encoding then named in the message), or
    the first byte past ``max_bytes``."""
    decoder = _decoder(encoding)
    parts: list[str] = []
    read = 0
    with _open(path, name, error) as handle:
        while True:
            chunk = handle.read(min(_CHUNK, max_bytes + 1 - read))
            if not chunk:
                break
            if read == 0 and encoding is None:
                _refuse_other_encoding(chunk, name, error)
            read += len(chunk)
            if read > max_bytes:
                raise error(TOO_LARGE.format(source=name, limit=max_bytes))
            text = _decoded(decoder, chunk, read, name, encoding, error)
            nul = text.find("\0")
            if nul >= 0:
                at = _nul_offset(parts, text, nul, chunk, read, encoding)
                raise error(NUL_BYTE.format(source=name, offset=at))
            parts.append(text)
        parts.append(_decoded(decoder, b"", read, name, encoding, error, final=True))
    return "".join(parts)


def _decoder(encoding: str | None):
    """The incremental decoder of ``encoding`` (UTF-8 unless named): UTF-8's, named or
    not, skips a byte-order mark at the start of the file, as ``utf-8-sig`` does; the mark
    says how the text is written, and is no part of the first column's name."""
    if encoding is None or codecs.lookup(encoding).name == "utf-8":
        encoding = "utf-8-sig"
    return codecs.getincrementaldecoder(encoding)()


def _nul_offset(parts: list[str], text: str, nul: int, chunk: bytes, read: int, encoding) -> int:
    """Where in the file the NUL character ``text[nul]`` is, in bytes: ``text`` is the
    decoded ``chunk``, which ends at byte ``read``, and ``parts`` the text before it.  In
    UTF-8 (and a single-byte encoding) a NUL character is the first zero byte of the
    chunk; in another (UTF-16: two zero bytes, after others in every ASCII character) the
    text before it is written back in its encoding and counted."""
    if encoding is not None and codecs.lookup(encoding).name not in ("utf-8", "utf-8-sig"):
        try:
            return len(("".join(parts) + text[:nul]).encode(encoding))
        except UnicodeError:  # read by the codec, not written back: counted as UTF-8's
            pass
    return read - len(chunk) + chunk.find(b"\0")


def _decoded(decoder, chunk: bytes, read: int, name: str, encoding, error, final=False) -> str:
    """``chunk``, the bytes up to byte ``read`` of the file, decoded; a byte the encoding
    refuses named by its place in the file (the decoder may hold bytes of the chunk
    before: the refused bytes are the last it was given), and a file it refuses as a
    whole (UTF-16 without a byte-order mark, say) by Python's reason."""
    try:
        return decoder.decode(chunk, final=final)
    except UnicodeDecodeError as reason:
        offset = read - len(reason.object) + reason.start
        byte = reason.object[reason.start]
        raise error(_undecodable(name, encoding, byte, offset)) from None
    except UnicodeError as reason:
        codec = codecs.lookup(encoding or "utf-8").name
        if "BOM" in str(reason) and codec in ("utf-16", "utf-32"):
            raise error(NO_BYTE_ORDER_MARK.format(source=name, codec=codec)) from None
        raise error(UNREADABLE_AS.format(source=name, encoding=encoding, reason=reason)) from None


def read_header(
    path: str | os.PathLike, error: type[Exception], encoding: str | None = None
) -> list[str]:
    """The column names of a CSV, read from its first record only, as :func:`read_table`
    reads the whole file: decompressed, in ``encoding`` (UTF-8 unless named, another
    refused with what to do), split by the CSV parser (a quoted name may hold a comma).
    At most :data:`_CHUNK` bytes are read: a header is short."""
    name = str(path)
    decoder = _decoder(encoding)
    with _open(Path(path), name, error) as handle:
        head = handle.read(_CHUNK)
    if encoding is None:
        _refuse_other_encoding(head, name, error)
    text = _decoded(decoder, head, len(head), name, encoding, error, final=len(head) < _CHUNK)
    try:
        return next((r for r in csv.reader(io.StringIO(text, newline="")) if r), [])
    except csv.Error as reason:
        raise error(CANNOT_READ_LINE.format(source=name, line=1, reason=reason)) from reason


def _refuse_other_encoding(head: bytes, name: str, error: type[Exception]) -> None:
    """Refuse a file that starts as UTF-16 or UTF-32 text (a byte-order mark, or NUL bytes
    between ASCII ones), naming the encoding and how to read it."""
    for bom, words, codec in _BOMS:
        if head.startswith(bom):
            raise error(
                OTHER_ENCODING.format(
                    source=name,
                    encoding=words,
                    codec=codec,
                    how="it starts with the byte-order mark of " + words,
                )
            )
    sample = head[: 2 * (min(len(head), 400) // 2)]
    if len(sample) < 4:
        return
    even, odd = (sample[k::2].count(b"\0") / (len(sample) // 2) for k in (0, 1))
    if max(even, odd) >= 0.9 and min(even, odd) <= 0.1:  # ASCII text in two-byte units
        raise error(
            OTHER_ENCODING.format(
                source=name,
                encoding="UTF-16",
                codec="utf-16-le" if odd > even else "utf-16-be",
                how="every other byte is a NUL byte, and there is no byte-order mark",
            )
        )


def _undecodable(name: str, encoding: str | None, byte: int, offset: int) -> str:
    if encoding is None:
        return NOT_UTF8.format(source=name, byte=byte, offset=offset)
    return NOT_ENCODING.format(source=name, encoding=encoding, byte=byte, offset=offset)


def _parse_csv(text: str, name: str, error: type[Exception]) -> tuple[pd.DataFrame, np.ndarray]:
    """Every cell of a CSV as text, and the line on which each row starts.

    The header and the rows are split by the same CSV parser (:mod:`csv`), so a
    quoted name may hold a comma or a newline; a row whose number of fields
    differs from the header's is refused with its line (never shifted into
    an index or padded).  Blank lines are skipped, keeping the numbers of the
    lines after them.
    """
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header: list[str] | None = None
    header_line = 0
    rows: list[list[str]] = []
    lines: list[int] = []
    line = 1  # the line on which the next record starts
    try:
        for record in reader:
            start, line = line, reader.line_num + 1
            if not record:  # a blank line
                continue
            if header is None:
                header, header_line = record, start
                continue
            if len(record) != len(header):
                raise error(
                    RAGGED_ROW.format(
                        source=name,
                        line=start,
                        found=len(record),
                        header_line=header_line,
                        expected=len(header),
                    )
                )
            rows.append(record)
            lines.append(start)
    except csv.Error as reason:
        raise error(CANNOT_READ_LINE.format(source=name, line=line, reason=reason)) from reason
    if header is None:
        raise error(NO_HEADER.format(source=name))
    seen: set[str] = set()
    for column in header:
        if column in seen:
            raise error(DUPLICATE_COLUMN.format(source=name, column=column))
        seen.add(column)
    cells = list(zip(*rows, strict=True)) if rows else [()] * len(header)
    frame = pd.DataFrame(
        {
            column: pd.Series(values, dtype=object)
            for column, values in zip(header, cells, strict=True)
        },
        index=pd.RangeIndex(len(rows)),
    )
    return frame, np.asarray(lines, dtype=np.int64)


def check_parquet(path: Path, name: str, error: type[Exception]) -> int:
    """Refuse a file that is not Parquet (no ``PAR1`` magic) with ``error``; return its size."""
    try:
        size = Path(path).stat().st_size
        with open(path, "rb") as handle:
            magic = handle.read(len(_PARQUET_MAGIC))
    except OSError as reason:
        raise error(CANNOT_READ_PARQUET.format(source=name, reason=reason)) from reason
    if magic != _PARQUET_MAGIC:
        raise error(NOT_PARQUET.format(source=name))
    return size


def parquet_names(schema) -> list[str]:
    """The columns of a Parquet file, from its Arrow ``schema``: less the row numbers
    pandas stores as an unnamed index (``__index_level_0__``, which ``pd.read_parquet``
    makes the frame's index again). A named index is a column of the file."""
    names = list(schema.names)
    try:
        metadata = schema.pandas_metadata
    except ValueError:  # not the JSON pandas writes: no index of pandas' is known
        return names
    index, columns = (
        (metadata.get("index_columns"), metadata.get("columns"))
        if isinstance(metadata, dict)
        else (None, None)
    )
    if not isinstance(index, list) or not isinstance(columns, list):
        return names
    unnamed = {
        c.get("field_name")
        for c in columns
        if isinstance(c, dict) and c.get("name") is None and c.get("field_name") in index
    }
    return [n for n in names if n not in unnamed]


def _read_parquet(path: Path, name: str, max_bytes: int, error: type[Exception]) -> pd.DataFrame:
    if check_parquet(path, name, error) > max_bytes:
        raise error(TOO_LARGE.format(source=name, limit=max_bytes))
    try:
        frame = pd.read_parquet(path)
    except ImportError as reason:
        raise error(CANNOT_READ_PARQUET.format(source=name, reason=reason)) from reason
    except Exception as reason:  # pyarrow's own errors (ArrowInvalid, ...) have no common base
        raise error(
            CANNOT_READ_PARQUET.format(source=name, reason=f"{type(reason).__name__}: {reason}")
        ) from reason
    # a named index pandas wrote (df.set_index("algorithm").to_parquet()) is a column of
    # the file, read as one; an unnamed one is pandas' row numbers
    named = [level for level in frame.index.names if level is not None]
    return frame.reset_index(level=named) if named else frame


def read_table(
    source: str | os.PathLike | pd.DataFrame,
    error: type[Exception],
    *,
    max_bytes: int = MAX_BYTES,
    encoding: str | None = None,
) -> tuple[pd.DataFrame, Source]:
    """A CSV as text cells, a Parquet file, or a (shallow copy of a) DataFrame.

    Raises ``error`` with :data:`CANNOT_READ` when the file cannot be read,
    :data:`RAGGED_ROW` when a row's number of fields differs from the
    header's, :data:`DUPLICATE_COLUMN` when a header repeats a name (pandas
    would rename the second one silently), :data:`TOO_LARGE` past
    ``max_bytes`` and :data:`NOT_PARQUET` for a ``.parquet`` file that is
    not one.  A CSV is UTF-8 (a UTF-8 byte-order mark is skipped) unless
    ``encoding`` names another; a UTF-16 or UTF-32 file, or bytes that are not
    UTF-8, are refused naming the encoding and ``encoding=``
    (:data:`OTHER_ENCODING`, :data:`NOT_UTF8`).  A gzip, bzip2 or xz file
    (``.csv.gz``, ...) is decompressed as it is read.
    """
    if isinstance(source, pd.DataFrame):
        if encoding is not None:
            raise error(ENCODING_NOT_TEXT.format(source="<DataFrame>", encoding=encoding))
        frame = source.copy(deep=False)
        name = "<DataFrame>"
        _unique_columns(frame, name, error)
        return frame, Source(name, csv=False)
    path = Path(source)
    name = str(path)
    if is_parquet_name(path):
        if encoding is not None:
            raise error(ENCODING_NOT_TEXT.format(source=name, encoding=encoding))
        frame = _read_parquet(path, name, max_bytes, error)
        _unique_columns(frame, name, error)
        return frame, Source(name, csv=False)
    try:
        text = _read_text(path, name, max_bytes, error, encoding)
    except (OSError, EOFError, UnicodeDecodeError, zlib.error, lzma.LZMAError) as reason:
        raise error(CANNOT_READ.format(source=name, reason=reason)) from reason
    frame, lines = _parse_csv(text, name, error)
    return frame, Source(name, csv=True, lines=lines)


def _unique_columns(frame: pd.DataFrame, name: str, error: type[Exception]) -> None:
    columns = [str(c) for c in frame.columns]
    seen: set[str] = set()
    for column in columns:
        if column in seen:
            raise error(DUPLICATE_COLUMN.format(source=name, column=column))
        seen.add(column)


#: Up to this many cells of text (or missing), :func:`blank` looks at each in Python: a
#: chunk's 8 labels take 3 us so, and 930 us through pandas' string methods.
_FEW_CELLS = 64


def blank(values: pd.Series) -> np.ndarray:
    """True where a cell is missing or only whitespace."""
    if len(values) <= _FEW_CELLS:
        cells = values.tolist()
        if all(isinstance(v, str) or _missing_scalar(v) for v in cells):
            return np.array([not isinstance(v, str) or not v.strip() for v in cells], dtype=bool)
    return (values.isna() | (values.astype("string").str.strip() == "")).to_numpy(dtype=bool)


def _missing_scalar(value) -> bool:
    """None, pandas' NA or a Python float NaN (other cells :func:`blank` leaves to pandas)."""
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def cell(column: pd.Series, at: int):
    """The value of ``column`` at position ``at`` as a message quotes it: a NumPy number
    as the Python number it is (``5.0``, not ``np.float64(5.0)``), text as text.

    >>> cell(pd.Series([0.5, 5.0]), 1)
    5.0
    """
    value = column.iloc[at]
    return value.item() if isinstance(value, np.generic) else value


def first(mask: np.ndarray) -> tuple[int, int]:
    """Position of the first True, and how many more there are."""
    positions = np.flatnonzero(mask)
    return int(positions[0]), len(positions) - 1


#: Why the wide layout needs its ``Algorithm`` column (a rates table's, a cross-group one's).
WIDE_ALGORITHM = " (the wide layout names each algorithm in it)"


def missing_column(
    name: str, column: str, error: type[Exception], hint: str = "", ignored=()
) -> Exception:
    """The refusal of table ``name`` lacking ``column`` (:data:`MISSING_COLUMN`, an
    ``error``); where ``ignore`` left it out (``ignored``), of that parameter
    (:data:`IGNORED_NEEDED`, a :class:`~audit.exceptions.ParameterError`).

    >>> print(missing_column("t.csv", "Algorithm", ValueError, ignored=("Algorithm",)))
    t.csv: column 'Algorithm' is left out by ignore (command line --ignore-columns), and the table needs it; keep it
    """
    if column in ignored:
        from audit.exceptions import ParameterError

        return ParameterError(IGNORED_NEEDED.format(source=name, column=column, hint=hint))
    return error(MISSING_COLUMN.format(source=name, column=column, hint=hint))


def more(count: int) -> str:
    """The tail of a message counting the further offending cells."""
    return f" (and {count} more such cell(s))" if count > 0 else ""


def labels(frame: pd.DataFrame, column: str, source: Source, error: type[Exception]) -> pd.Series:
    """A label column as text, positionally indexed; ``error`` with :data:`EMPTY_LABEL`
    names the first empty cell, and two spellings of one label are refused (or merged
    when ``source.merge_labels``; :func:`audit.tables.labels.check_spellings`)."""
    raw = frame[column]
    empty = blank(raw)
    if empty.any():
        at, count = first(empty)
        raise error(
            EMPTY_LABEL.format(
                where=source.where(frame, at), column=column, more=source.more(count)
            )
        )
    text = raw.astype(str).reset_index(drop=True)
    codes, uniques = pd.factorize(text, sort=False)
    merged = check_spellings(
        list(uniques),
        lambda i: source.where(frame, int(np.argmax(codes == i))),  # asked only to name one
        source=source.name,
        column=column,
        error=error,
        merge=source.merge_labels,
    )
    return text.replace(merged) if merged else text


def raise_at(
    mask: np.ndarray,
    message: str,
    frame: pd.DataFrame,
    raw: pd.Series,
    column: str,
    source: Source,
    error: type[Exception],
    **extra,
) -> None:
    """Raise ``error`` with ``message`` naming the first cell of ``column`` where ``mask``
    holds (its place, value, and how many more), if any; ``extra`` fields of the message
    are values, or arrays read at that cell. Every reader's check of a column raises
    through it."""
    if mask.any():
        at, count = first(mask)
        value = cell(raw, at)
        raise error(
            message.format(
                where=source.where(frame, at),
                column=column,
                value=value,
                more=source.more(count),
                **{k: v[at] if isinstance(v, np.ndarray) else v for k, v in extra.items()},
            )
        )


def refuse_non_real(
    frame: pd.DataFrame, column: str, source: Source, error: type[Exception]
) -> None:
    """Refuse booleans (:data:`BOOLEAN`), complex numbers (:data:`COMPLEX`), and dates,
    periods and durations (:data:`NOT_A_QUANTITY`) in a numeric column: pandas would read
    ``True`` as 1.0, drop an imaginary part, and read a date as a count of its time
    unit since 1970."""
    raw = frame[column]
    kind = raw.dtype.kind
    period = isinstance(raw.dtype, pd.PeriodDtype)
    if kind in "Mm" or period:
        present = raw.notna().to_numpy(bool)
        if present.any():
            at, others = first(present)
            raise error(
                NOT_A_QUANTITY.format(
                    where=source.where(frame, at),
                    column=column,
                    value=str(raw.iloc[at]),
                    kind="period" if period else "date" if kind == "M" else "duration",
                    more=source.more(others),
                )
            )
    if kind == "b" or isinstance(raw.dtype, pd.BooleanDtype):
        raise_at(raw.notna().to_numpy(bool), BOOLEAN, frame, raw, column, source, error)
    if kind == "c":
        raise_at(np.ones(len(raw), bool), COMPLEX, frame, raw, column, source, error)
    if kind == "O" and not getattr(
        source, "csv", False
    ):  # a CSV cell is text: "True" is refused as not a number
        present = set(map(type, raw.to_numpy(dtype=object)))
        if not any(issubclass(t, (bool, np.bool_, complex, np.complexfloating)) for t in present):
            return
        types = raw.map(type)
        boolean = types.map(lambda t: issubclass(t, (bool, np.bool_))).to_numpy(bool)
        raise_at(boolean, BOOLEAN, frame, raw, column, source, error)
        complex_ = types.map(lambda t: issubclass(t, (complex, np.complexfloating))).to_numpy(bool)
        raise_at(complex_, COMPLEX, frame, raw, column, source, error)


def inexact_integers(integers: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Where the float64 ``values`` of ``integers`` (int64 or uint64) are not the integers
    themselves: beyond 2**53 a float64 holds only some integers, and two scores that
    differ there would be read as one."""
    changed = np.zeros(len(values), dtype=bool)
    big = np.abs(values) >= 2.0**53
    if big.any():
        with np.errstate(invalid="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # 2**63 and 2**64 overflow: changed
            back = values[big].astype(integers.dtype)
        changed[big] = back != integers[big]
    return changed


def refuse_inexact_integers(
    frame: pd.DataFrame, column: str, values: np.ndarray, source: Source, error: type[Exception]
) -> None:
    """Refuse integers of an integer column that float64 ``values`` do not hold exactly
    (:data:`INEXACT_INTEGER`)."""
    raw = frame[column]
    if not pd.api.types.is_integer_dtype(raw.dtype):
        return
    unsigned = pd.api.types.is_unsigned_integer_dtype(raw.dtype)
    integers = raw.to_numpy(dtype=np.uint64 if unsigned else np.int64)
    changed = inexact_integers(integers, values)
    if changed.any():  # (the floats as Python's, as the messages print them)
        read = values.astype(object)
        raise_at(changed, INEXACT_INTEGER, frame, raw, column, source, error, read=read)


def refuse_rounded(
    frame: pd.DataFrame,
    column: str,
    parsed: np.ndarray,
    source: Source,
    error: type[Exception],
) -> None:
    """Refuse written numbers that a 64-bit float cannot hold: ``1e-400`` (read as 0,
    :data:`UNDERFLOW`; also subnormal values, which keep only a few digits), ``1e400``
    (read as inf, :data:`OVERFLOW`) and integers beyond 2**53 it holds only some of
    (:data:`INEXACT_INTEGER`; written, or integers of their own in a column of
    objects).  Only cells of a column of objects (text) can hold them."""
    raw = frame[column]
    if raw.dtype.kind != "O":
        return
    tiny = np.finfo(np.float64).tiny
    with np.errstate(invalid="ignore"):
        small = (np.abs(parsed) < tiny) & ~np.isnan(parsed)
        large = np.isinf(parsed)
        big = (np.abs(parsed) >= 2.0**53) & ~large
    if not (small.any() or large.any() or big.any()):
        return
    text = raw.map(lambda v: str(v).strip().lower() if isinstance(v, str) else "")
    nonzero = text.map(lambda t: bool(_MANTISSA_DIGIT.match(t))).to_numpy(bool)
    spelled_inf = text.isin(_SPELLED_INF).to_numpy(bool)
    raise_at(
        small & nonzero, UNDERFLOW, frame, raw, column, source, error, read=parsed.astype(object)
    )
    raise_at(large & ~spelled_inf, OVERFLOW, frame, raw, column, source, error)
    inexact = np.zeros(len(raw), dtype=bool)
    for i in np.flatnonzero(big).tolist():
        value = raw.iat[i]
        if isinstance(value, str):  # written as an integer (1e300 is written as a float)
            if not _INTEGER_TEXT.fullmatch(text.iat[i]):
                continue
            written = Decimal(text.iat[i])
            inexact[i] = written == written.to_integral_value() and int(written) != int(parsed[i])
        elif isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_):
            inexact[i] = int(value) != int(parsed[i])  # a Python or NumPy integer of its own
    raise_at(
        inexact, INEXACT_INTEGER, frame, raw, column, source, error, read=parsed.astype(object)
    )


def _whole(value) -> int | str:
    """An exact non-negative whole number within int64, or why not ("bad", "large")."""
    if isinstance(value, (bool, np.bool_)):
        return "bad"
    if isinstance(value, (int, np.integer)):
        value = int(value)
        return "bad" if value < 0 else ("large" if value > INT64_MAX else value)
    if isinstance(value, (float, np.floating)):
        text = repr(float(value))
    else:
        text = str(value)
    if not _DECIMAL.match(text) and not isinstance(value, (float, np.floating)):
        return "bad"
    try:
        number = Decimal(text.strip())
    except InvalidOperation:
        return "bad"
    if not number.is_finite() or number < 0 or number != number.to_integral_value():
        return "bad"
    return "large" if number > INT64_MAX else int(number)


def whole_numbers(
    frame: pd.DataFrame,
    column: str,
    source: Source,
    error: type[Exception],
    message: str,
) -> np.ndarray:
    """A count column as exact int64: every cell a whole number ``0 <= n <= 2**63 - 1``
    written exactly (``"12"``, ``"1.2e1"``, ``12.0``), else ``error`` with ``message``
    (not whole, negative, text, a boolean) or :data:`COUNT_TOO_LARGE`.  Nothing goes
    through a float, so ``9223372036854775808`` cannot wrap round."""
    raw = frame[column]
    if raw.dtype.kind in "iu":
        values = raw.to_numpy()
        bad = values < 0
        raise_at(bad, message, frame, raw, column, source, error)
        large = values > INT64_MAX if raw.dtype.kind == "u" else np.zeros(len(values), bool)
        raise_at(large, COUNT_TOO_LARGE, frame, raw, column, source, error)
        return values.astype(np.int64)
    if raw.dtype.kind == "f":
        values = raw.to_numpy(dtype="float64", na_value=np.nan)
        with np.errstate(invalid="ignore"):
            bad = ~(np.isfinite(values) & (values >= 0) & (values == np.round(values)))
            raise_at(bad, message, frame, raw, column, source, error)
            raise_at(values >= 2.0**63, COUNT_TOO_LARGE, frame, raw, column, source, error)
        return values.astype(np.int64)
    codes, uniques = pd.factorize(raw.to_numpy(dtype=object), use_na_sentinel=True)
    verdicts = [_whole(value) for value in uniques]
    kinds = np.array(
        [0 if isinstance(v, int) else (1 if v == "bad" else 2) for v in verdicts] + [1],
        dtype=np.int8,
    )[codes]  # code -1 (missing) picks the last entry: bad
    raise_at(kinds == 1, message, frame, raw, column, source, error)
    raise_at(kinds == 2, COUNT_TOO_LARGE, frame, raw, column, source, error)
    numbers = np.array([v if isinstance(v, int) else 0 for v in verdicts] + [0], dtype=np.int64)
    return numbers[codes]


def text_before(raw: pd.Series, at: int) -> bool:
    """Whether a cell of ``raw`` before position ``at`` (its first missing cell) holds
    no number: a column's first fault is the one said, whichever its kind.

    >>> text_before(pd.Series(["0.1", "x", "", "y"]), 2), text_before(pd.Series(["", "x"]), 0)
    (True, False)
    """
    head = raw.iloc[:at]
    parsed = pd.to_numeric(head, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    return bool((np.isnan(parsed) & ~(blank(head) | spelled_nan(head))).any())


def spelled_nan(raw: pd.Series) -> np.ndarray:
    """Where the cells of ``raw`` spell a missing value (:data:`SPELLED_NAN`)."""
    text = raw.astype("string").str.strip().str.lower()
    return text.isin(SPELLED_NAN).to_numpy(dtype=bool, na_value=False)
