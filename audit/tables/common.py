"""Reading the user's tables as text, and naming their cells in messages.

:mod:`audit.rates` and :mod:`audit.scores` read a CSV with every cell as text
(no value is converted, guessed or dropped before it is validated), Parquet as
it is, or a DataFrame, and point at problems by file, CSV line (or DataFrame
row) and column.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

CANNOT_READ = "{source}: cannot be read as CSV: {reason}"
DUPLICATE_COLUMN = "{source}: column {column!r} appears more than once"
EMPTY_LABEL = "{where}, column {column!r}: the label is empty{more}"


class Source:
    """Where a table came from, to name a row of it in messages.

    ``lines`` holds the file line of every row of a CSV (blank lines, which
    carry no data, are not rows, so rows and lines need not be consecutive).
    """

    def __init__(self, name: str, *, csv: bool, lines: np.ndarray | None = None):
        self.name = name
        self.csv = csv
        self.lines = lines

    def where(self, frame: pd.DataFrame, position: int) -> str:
        """``"<file>, line N"`` for a CSV, ``"<name>, row <label>"`` otherwise."""
        if self.csv:
            line = self.lines[position] if self.lines is not None else position + 2
            return f"{self.name}, line {line}"
        return f"{self.name}, row {frame.index[position]}"


def read_table(
    source: str | os.PathLike | pd.DataFrame, error: type[Exception]
) -> tuple[pd.DataFrame, Source]:
    """A CSV as text cells, a Parquet file, or a (shallow copy of a) DataFrame.

    Raises ``error`` with :data:`CANNOT_READ` when the file cannot be read and
    :data:`DUPLICATE_COLUMN` when a CSV header repeats a name (pandas would
    rename the second one silently).
    """
    if isinstance(source, pd.DataFrame):
        return source.copy(deep=False), Source("<DataFrame>", csv=False)
    path = Path(source)
    name = str(path)
    try:
        if path.suffix.lower() == ".parquet":
            return pd.read_parquet(path), Source(name, csv=False)
        with open(path, encoding="utf-8-sig", newline="") as handle:
            header = handle.readline().rstrip("\r\n").split(",")
        frame = pd.read_csv(
            path,
            dtype=str,
            keep_default_na=False,
            na_filter=False,
            encoding="utf-8-sig",
            skip_blank_lines=False,
        )
    except (
        OSError,
        UnicodeDecodeError,
        pd.errors.ParserError,
        pd.errors.EmptyDataError,
        ImportError,
    ) as reason:
        raise error(CANNOT_READ.format(source=name, reason=reason)) from reason
    seen: set[str] = set()
    for column in header:
        if column in seen:
            raise error(DUPLICATE_COLUMN.format(source=name, column=column))
        seen.add(column)
    # a blank line is no row, but the lines after it keep their numbers
    empty = (
        (frame == "").all(axis=1).to_numpy(dtype=bool) if len(frame.columns) else np.zeros(0, bool)
    )
    lines = np.arange(2, len(frame) + 2)[~empty]
    frame = frame.loc[~empty].reset_index(drop=True)
    return frame, Source(name, csv=True, lines=lines)


def blank(values: pd.Series) -> np.ndarray:
    """True where a cell is missing or only whitespace."""
    return (values.isna() | (values.astype("string").str.strip() == "")).to_numpy(dtype=bool)


def first(mask: np.ndarray) -> tuple[int, int]:
    """Position of the first True, and how many more there are."""
    positions = np.flatnonzero(mask)
    return int(positions[0]), len(positions) - 1


def more(count: int) -> str:
    """The tail of a message counting the further offending cells."""
    return f" (and {count} more such cell(s))" if count > 0 else ""


def labels(frame: pd.DataFrame, column: str, source: Source, error: type[Exception]) -> pd.Series:
    """A label column as text, positionally indexed; ``error`` with :data:`EMPTY_LABEL`
    names the first empty cell."""
    raw = frame[column]
    empty = blank(raw)
    if empty.any():
        at, count = first(empty)
        raise error(
            EMPTY_LABEL.format(where=source.where(frame, at), column=column, more=more(count))
        )
    return raw.astype(str).reset_index(drop=True)
