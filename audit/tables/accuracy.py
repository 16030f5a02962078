"""Read one accuracy column of a per-algorithm table: another axis for a Pareto frontier.

NIST's FRVT 1:1 report gives each algorithm's headline accuracy in a table of
its own, one column per NIST dataset and operating point (``Mugshot, 1e-5``:
the FNMR at an FMR of 1e-5 on the Mugshot set), beside its demographic FMR
table, which has no accuracy at all.  :func:`read_accuracy` reads one such
column, from a file or a built-in dataset (``frvt11-accuracy``), as a Series
indexed by algorithm, for :func:`audit.analysis.pareto.frontier_frame`'s
``accuracy``; the join by algorithm is
:func:`audit.analysis.accuracy.join_accuracy`.

The algorithm column is the one named ``algorithm``, ``Algorithm`` or
``Name`` (NIST's), else an unnamed first column.  An empty cell (the
algorithm was not run on that dataset) is read as missing, NaN, and the join
names it; any other value must be a finite number (a rank column is a
legitimate accuracy too), and an algorithm may appear once.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from audit.exceptions import ParameterError, RatesError
from audit.sources.datasets import resolve
from audit.tables import common as tables

#: Names of the algorithm column, in order of preference (NIST's table says ``Name``).
ALGORITHM_COLUMNS = ("algorithm", "Algorithm", "Name")

# Messages: constants, so that tests can check them exactly.
NO_ALGORITHM_COLUMN = (
    "{source}: no algorithm column; an accuracy table names its algorithms in a column "
    "called {names}, or in an unnamed first column (its columns are {columns})"
)
UNKNOWN_ACCURACY_COLUMN = (
    "parameter accuracy_column: expected a column of {source} other than its algorithm "
    "column, one of {columns}, got {value!r}"
)
NOT_FINITE = "{where}, column {column!r}: {value!r} is not a finite number{more}"
DUPLICATE_ALGORITHM = "{where}: algorithm {algorithm!r} repeats (first at {first})"


def _algorithm_column(columns: list[str], source: str) -> str:
    for name in ALGORITHM_COLUMNS:
        if name in columns:
            return name
    if columns and columns[0] == "":
        return ""
    raise RatesError(
        NO_ALGORITHM_COLUMN.format(
            source=source, names=" or ".join(repr(n) for n in ALGORITHM_COLUMNS), columns=columns
        )
    )


def accuracy_columns(source: str | os.PathLike | pd.DataFrame) -> list[str]:
    """The columns of an accuracy table that can be an accuracy (all but the algorithm's)."""
    if not isinstance(source, pd.DataFrame):
        source = resolve(source, kind="accuracy").path
    frame, where = tables.read_table(source, RatesError)
    columns = [str(c) for c in frame.columns]
    algorithm = _algorithm_column(columns, where.name)
    return [c for c in columns if c != algorithm]


def read_accuracy(source: str | os.PathLike | pd.DataFrame, column: str) -> pd.Series:
    """One accuracy column of a per-algorithm table, indexed by algorithm.

    Parameters
    ----------
    source
        A file (CSV or Parquet), a built-in accuracy dataset's name
        (``"frvt11-accuracy"``) or a DataFrame.
    column
        The column, e.g. ``"Mugshot, 1e-5"``.

    Returns
    -------
    pandas.Series
        float64, named ``column``, indexed by algorithm in file order; NaN
        for an empty cell.  ``attrs``: ``source`` (the file), ``dataset``
        (the built-in dataset, or ``None``), ``column`` and ``label`` (for
        an axis: :func:`accuracy_label`).

    Raises
    ------
    RatesError
        No algorithm column, an empty algorithm name, a repeated algorithm,
        a value that is not a finite number (naming file, line and column).
    ParameterError
        ``column`` is not a column of the table.

    Examples
    --------
    >>> frame = pd.DataFrame({"Name": ["a", "b"], "Mugshot, 1e-5": ["0.0031", ""]})
    >>> read_accuracy(frame, "Mugshot, 1e-5")
    algorithm
    a    0.0031
    b       NaN
    Name: Mugshot, 1e-5, dtype: float64
    """
    dataset = None
    if not isinstance(source, pd.DataFrame):
        resolved = resolve(source, kind="accuracy")
        source, dataset = resolved.path, resolved.dataset
    frame, where = tables.read_table(source, RatesError)
    frame.columns = [str(c) for c in frame.columns]
    columns = list(frame.columns)
    algorithm = _algorithm_column(columns, where.name)
    if column not in columns or column == algorithm:
        choices = [c for c in columns if c != algorithm]
        raise ParameterError(
            UNKNOWN_ACCURACY_COLUMN.format(source=where.name, columns=choices, value=column)
        )
    names = tables.labels(frame, algorithm, where, RatesError)
    repeated = names.duplicated().to_numpy()
    if repeated.any():
        at = int(np.flatnonzero(repeated)[0])
        first = int(np.flatnonzero((names == names.iloc[at]).to_numpy())[0])
        raise RatesError(
            DUPLICATE_ALGORITHM.format(
                where=where.where(frame, at),
                algorithm=names.iloc[at],
                first=where.where(frame, first),
            )
        )
    raw = frame[column]
    missing = tables.blank(raw) | tables.spelled_nan(raw)
    tables.refuse_non_real(frame, column, where, RatesError)
    values = (
        pd.to_numeric(raw.where(~missing), errors="coerce").to_numpy(
            dtype="float64", na_value=np.nan
        )
        + 0.0
    )  # an accuracy written -0 is 0, and is shown so (not "-0")
    tables.raise_at(
        ~missing & ~np.isfinite(values), NOT_FINITE, frame, raw, column, where, RatesError
    )
    out = pd.Series(values, index=pd.Index(names.to_numpy(dtype=object), name="algorithm"))
    out.name = column
    out.attrs.update(
        {
            "source": where.name,
            "dataset": dataset.name if dataset else None,
            "column": column,
            "label": accuracy_label(column, dataset.name if dataset else Path(where.name).name),
        }
    )
    return out


def accuracy_label(column: str, source: str) -> str:
    """An axis label for ``column`` of the accuracy table ``source``: NIST's
    ``<dataset>, <FMR>`` columns read as the FNMR at that FMR.

    >>> accuracy_label("Mugshot, 1e-5", "frvt11-accuracy")
    'FNMR at FMR 1e-5, Mugshot (frvt11-accuracy)'
    >>> accuracy_label("Mugshot, rank", "frvt11-accuracy")
    'Mugshot, rank (frvt11-accuracy)'
    """
    name, _, fmr = column.rpartition(", ")
    try:
        float(fmr)
    except ValueError:
        return f"{column} ({source})"
    return f"FNMR at FMR {fmr}, {name} ({source})" if name else f"{column} ({source})"


__all__ = ["accuracy_columns", "accuracy_label", "read_accuracy"]
