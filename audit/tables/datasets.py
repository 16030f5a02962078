"""Read any input by name or path: the built-in datasets' own layouts, and everyone else's.

:func:`read_data` is the one entry the command line and the notebooks read a
rates table through: a built-in dataset's name (``"annex15"``, ``"frvt11"``)
or a path, resolved by :func:`audit.sources.datasets.resolve` (a file
byte-identical to a built-in dataset is that dataset), then read by the
dataset's reader, or by :func:`audit.tables.rates.read_rates` with the
user's options.

**NIST FRVT 1:1 gender x race** (:func:`read_frvt11`, dataset ``frvt11``).
The transcription's first column is unnamed and holds the algorithm; then
one column per pair of groups, ``MW_MB, MW_MW, MB_MB, MB_MW, FW_FB, FW_FW,
FB_FB, FB_FW``: M/F the sex, W/B the race (white, black), ``X_Y`` the FMR of
impostor pairs between groups X and Y.  It is a cross-group impostor table
with 8 of the 16 cells of the 4 x 4 matrix (cross pairs only within one sex),
read through the cross-group reader (:mod:`audit.tables.crossgroup`) with
the pairs declared, into an FMR-only table of the four within-group FMRs
whose group labels carry two attributes, ``gender`` (``F``, ``M``) and
``race`` (``Black``, ``White``), spelled as Annex 15 spells them
(``M.White``), so that the FMR-only measures apply and a group means the same
in both datasets.  The transcription does not say which group of a cross
pair is the enrolment side: the first one written (``MW`` of ``MW_MB``) is
taken as ``group_1``, and ``attrs["sides"]`` says so.  Each algorithm's
threshold was set so that the FMR of white men is 0.001: that cell is a
calibration (:mod:`audit.analysis.calibration` finds it).
"""

from __future__ import annotations

import os
import re

import pandas as pd

from audit.exceptions import RatesError, UsageError
from audit.sources.datasets import DataSource, resolve
from audit.tables import common as tables
from audit.tables.crossgroup import read_cross_group
from audit.tables.rates import read_rates
from audit.validation import SOURCE, optional, validate_params

#: FRVT 1:1 codes of the two attributes, and the labels they are read as (Annex 15's).
FRVT11_SEX = {"F": "F", "M": "M"}
FRVT11_RACE = {"B": "Black", "W": "White"}
FRVT11_ATTRIBUTES = ("gender", "race")
_FRVT11_PAIR = re.compile(r"^([FM])([BW])_([FM])([BW])$")

# Messages: constants, so that tests can check them exactly.
FRVT11_LAYOUT = (
    "{source}: column {column!r} is not a pair of FRVT 1:1 groups; the table has an "
    "unnamed first column of algorithms, then columns <sex><race>_<sex><race> "
    "(sex F or M, race B or W), e.g. 'MW_MB'"
)
FRVT11_FIRST = (
    "{source}: the first column is named {column!r}; the FRVT 1:1 transcription's first "
    "column, of algorithms, has no name"
)
FIXED_LAYOUT = (
    "option {option} does not apply to built-in dataset {name!r}: it is read by a reader "
    "of its own ({layout})"
)
SIDES_UNKNOWN = (
    "the transcription does not say which group of a cross pair is the enrolment side: "
    "the first group written (MW of MW_MB) is taken as group_1"
)

#: The read_rates options, with the value that means "not given".
READ_OPTIONS = {
    "attributes": None,
    "count_tolerance": None,
    "columns": None,
    "separator": ".",
    "units": None,
    "pair_separator": None,
    "pairs": None,
    "rate_position": "prefix",
    "ignore": None,
    "merge_labels": False,
    "fmr_above_fnmr": False,
    "encoding": None,
}


def _frvt11_label(sex: str, race: str) -> str:
    return f"{FRVT11_SEX[sex]}.{FRVT11_RACE[race]}"


def read_frvt11(path: str | os.PathLike) -> pd.DataFrame:
    """The FRVT 1:1 gender x race table as a rates table (see the module docstring).

    Returns
    -------
    pandas.DataFrame
        As :func:`audit.tables.rates.read_rates` returns a cross-group table:
        one row per (algorithm, group) with ``algorithm``, ``gender``,
        ``race``, ``group`` and ``fmr`` (the within-group FMR), the 4 x 4
        pair matrices (8 cells measured) in ``attrs["cross_group"]``;
        ``attrs["sides"]`` says that the enrolment side is not known.
    """
    frame, where = tables.read_table(path, RatesError)
    columns = [str(c) for c in frame.columns]
    if not columns or columns[0] != "":
        raise RatesError(FRVT11_FIRST.format(source=where.name, column=columns[0]))
    renamed = {"": "Algorithm"}
    pairs = []
    for column in columns[1:]:
        match = _FRVT11_PAIR.match(column)
        if match is None:
            raise RatesError(FRVT11_LAYOUT.format(source=where.name, column=column))
        first, second = _frvt11_label(*match.group(1, 2)), _frvt11_label(*match.group(3, 4))
        renamed[column] = f"FMR.{first}|{second}"
        pairs.append((first, second))
    frame = frame.rename(columns=renamed)
    tidy = read_cross_group(
        frame, where, attributes=FRVT11_ATTRIBUTES, pair_separator="|", pairs=pairs
    )
    tidy.attrs["source"] = where.name
    tidy.attrs["units"] = "fraction"
    tidy.attrs["sides"] = SIDES_UNKNOWN
    return tidy


#: Built-in datasets read by a reader of their own, and a description of their layout.
READERS = {
    "frvt11": (read_frvt11, "an unnamed algorithm column, then one FMR column per pair"),
}


def read_source(source: DataSource, **options) -> pd.DataFrame:
    """Read a resolved input (:func:`audit.sources.datasets.resolve`) as a rates table.

    A built-in dataset with a reader of its own (:data:`READERS`) takes none of
    the :func:`~audit.tables.rates.read_rates` options (refused with
    :data:`FIXED_LAYOUT` when one is given); any other input is read by
    ``read_rates(path, **options)``.  ``attrs["dataset"]`` names the built-in
    dataset (``None`` for a user's file).
    """
    dataset = source.dataset
    reader = READERS.get(dataset.name) if dataset is not None else None
    if reader is None:
        table = read_rates(source.path, **options)
    else:
        for key, value in options.items():
            if value != READ_OPTIONS.get(key):
                raise UsageError(
                    FIXED_LAYOUT.format(
                        option=f"{key}={value!r}", name=dataset.name, layout=reader[1]
                    )
                )
        table = reader[0](source.path)
    table.attrs["dataset"] = dataset.name if dataset is not None else None
    return table


@validate_params(source=optional(SOURCE))
def read_data(source: str | os.PathLike | pd.DataFrame | None = None, **options) -> pd.DataFrame:
    """A validated rates table from a built-in dataset's name, a file or a DataFrame.

    Parameters
    ----------
    source
        A built-in dataset's name (``audit datasets`` lists them; ``None``:
        ``"annex15"``), the path of a rates table (a file byte-identical to a
        built-in dataset is read as that dataset), or a DataFrame.
    **options
        Options of :func:`audit.tables.rates.read_rates` (``units``,
        ``columns``, ``rate_position``, ``ignore``, ...), for inputs
        read by it.

    Examples
    --------
    >>> t = read_data(pd.DataFrame({"Algorithm": ["a"], "FMR.F": [1e-4], "FMR.M": [2e-4]}))
    >>> t[["algorithm", "group", "fmr"]]
      algorithm group     fmr
    0         a     F  0.0001
    1         a     M  0.0002
    """
    if isinstance(source, pd.DataFrame):
        return read_rates(source, **options)
    return read_source(resolve(source, kind="rates", default="annex15"), **options)


__all__ = ["read_data", "read_frvt11", "read_source"]
