"""Read and validate a table of per-group error rates into one tidy table.

Two layouts are accepted:

* **wide** (the NIST FRVT Part 3 Annex 15 transcription): one row per
  algorithm, a column ``Algorithm`` and one ``FMR.<group>`` and one
  ``FNMR.<group>`` column per demographic group, where ``<group>`` is a
  dot-separated list of attribute values (``F.Black``: gender, race).
* **long** (tidy): one row per algorithm and group, columns ``algorithm``,
  ``fmr``, ``fnmr``, the group labels (a ``group`` column and/or attribute
  columns such as ``gender`` and ``race``), and optionally the counts
  ``n_mated`` and ``n_nonmated`` of mated and non-mated comparisons.

Both give the same tidy table, one row per (algorithm, group), in the order
of the input: ``algorithm``, the attribute columns, ``group``, ``fmr``,
``fnmr`` and the counts when given.  Nothing is dropped, rounded or reordered;
any problem is refused with a :class:`RatesError` whose message names the
file, the row and the column.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from audit.exceptions import ParameterError, RatesError
from audit.tables import common as tables
from audit.tables import layouts
from audit.tables.common import Source as _Source
from audit.tables.common import blank as _blank
from audit.tables.common import first as _first
from audit.tables.labels import check_spellings
from audit.validation import RATES_TABLE, SOURCE, Integer, validate_params

#: Default names of the two dot-separated parts of a wide column's group label.
ANNEX15_ATTRIBUTES = ("gender", "race")
RATE_COLUMNS = ("fmr", "fnmr")
COUNT_COLUMNS = ("n_mated", "n_nonmated")
#: The count each rate rests on (FNMR on mated comparisons, FMR on non-mated ones), and
#: those comparisons in words.
RATE_COUNTS = {"fnmr": ("n_mated", "mated"), "fmr": ("n_nonmated", "non-mated")}
WIDE_RATE = re.compile(r"^(FMR|FNMR)\.(.+)$")

# Error messages: constants, so that tests can check them exactly.
CANNOT_READ = tables.CANNOT_READ
EMPTY = "{source}: the table has no rows"
#: The columns of the table :func:`read_rates` returns besides the attributes (and the
#: cross-group table's sides): no attribute may take one's name.
TABLE_COLUMNS = ("algorithm", "group", "group_1", "group_2", "fmr", "fnmr", "n_mated", "n_nonmated")
ATTRIBUTE_TAKEN = (
    "parameter attributes: {name!r} names a column of the rates table audit makes "
    "({columns}); give the attribute another name"
)
TOO_FEW_GROUPS = (
    "{source}: {count} demographic group(s) ({groups}); a fairness measure compares at "
    "least 2 groups"
)
UNKNOWN_LAYOUT = (
    "{source}: cannot tell the layout from the columns {columns}. Expected either the "
    "wide layout (Algorithm, FMR.<group>, FNMR.<group>, ...) or the long layout "
    "(algorithm, group or attribute columns, fmr, fnmr). Other names are mapped to ours "
    "with columns= (command line: --columns algorithm=system,group=nationality,fmr=FMR); "
    "FMR_<group> wide names are read with separator='_' (command line: --separator _)"
)
MISSING_COLUMN = tables.MISSING_COLUMN
UNKNOWN_COLUMNS = (
    "{source}: unknown column(s) {columns}; expected {expected}. Rename them, or leave "
    "them out with ignore= (command line: --ignore-columns); nothing is dropped "
    "silently{hint}"
)
DUPLICATE_COLUMN = tables.DUPLICATE_COLUMN
MISSING_VALUE = tables.MISSING_VALUE
NOT_NUMERIC = tables.NOT_NUMERIC
OUT_OF_RANGE = "{where}, column {column!r}: {value!r} lies outside [0, 1]{more}"
BAD_COUNT = "{where}, column {column!r}: {value!r} is not a non-negative whole number{more}"
EMPTY_LABEL = tables.EMPTY_LABEL
DUPLICATE_ROW = "{where}: algorithm {algorithm!r}, group {group!r} repeats {first}"
MISSING_GROUPS = (
    "{source}: algorithm {algorithm!r} (first at {where}) has no row for group(s) "
    "{groups}; every algorithm needs every group"
)
BOOLEAN = tables.BOOLEAN
COMPLEX = tables.COMPLEX
UNDERFLOW = tables.UNDERFLOW
OVERFLOW = tables.OVERFLOW
COUNT_TOO_LARGE = tables.COUNT_TOO_LARGE
RAGGED_ROW = tables.RAGGED_ROW
TOO_LARGE = tables.TOO_LARGE
NOT_PARQUET = tables.NOT_PARQUET
ZERO_COUNT = (
    "{where}, column {column!r}: 0 {kind} comparisons, so the {rate} of this row is "
    "undefined (0/0); every (algorithm, group) needs at least one{more}"
)
IMPOSSIBLE_RATE = (
    "{where}, column {column!r}: {value!r} with {count_column} {count} means "
    "{product:.10g} {kind} comparisons in error, which is not a whole number within "
    "{rule}; correct the rate or the count, or allow more with --count-tolerance "
    "<comparisons> (from Python, read_rates(..., count_tolerance=<comparisons>)){more}"
)
AS_WRITTEN = "the rounding of the rate as written (+-{tolerance:.3g})"
GIVEN_TOLERANCE = "count_tolerance={tolerance!r}"
ATTRIBUTE_CONTRADICTS_GROUP = (
    "{where}, column {column!r}: {value!r} contradicts group {group!r}, which has "
    "{column} {expected!r} at {first}; the attribute columns must agree with the group "
    "column"
)
GROUPS_SHARE_ATTRIBUTES = (
    "{where}: group {group!r} has the attribute values {values} of group {other!r} "
    "(at {first}); two groups with the same attributes cannot be told apart"
)
WRONG_ATTRIBUTE_COUNT = (
    "{source}: column {column!r} has {found} dot-separated group part(s), "
    "but the groups are read as {expected} attribute(s), {attributes} (as given, or as "
    "most groups split: attributes=, command line --attributes)"
)
EMPTY_ATTRIBUTE = (
    "{source}, column {column!r}: the {attribute} of group {group!r} is empty (the parts of "
    "a group, one per attribute {attributes}, are separated by '.'); a label is never "
    "empty: write it in the header"
)


def _numbers(frame: pd.DataFrame, column: str, source: _Source) -> np.ndarray:
    """Parse one column as float64, refusing blanks, text, NaN, inf and values outside [0, 1]."""
    raw = frame[column]

    def refuse(mask: np.ndarray, message: str) -> None:
        tables.raise_at(mask, message, frame, raw, column, source, RatesError)

    blank = _blank(raw)
    spelled_nan = tables.spelled_nan(raw)
    # counted with the cells that spell a missing value ("nan"): as missing, said first
    # where no text comes before the first of them
    if blank.any() and not tables.text_before(raw, int((blank | spelled_nan).argmax())):
        refuse(blank | spelled_nan, MISSING_VALUE)
    tables.refuse_non_real(frame, column, source, RatesError)
    parsed = pd.to_numeric(raw, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
    bad = np.isnan(parsed) & ~spelled_nan & ~blank
    if bad.any() and not spelled_nan[: int(bad.argmax())].any():  # (else said below)
        refuse(bad, NOT_NUMERIC)
    refuse(spelled_nan, MISSING_VALUE)
    tables.refuse_rounded(frame, column, parsed, source, RatesError)
    refuse(~((parsed >= 0.0) & (parsed <= 1.0)), OUT_OF_RANGE)
    return parsed + 0.0  # a rate written -0 is 0, and is shown so (not "-0")


def _counts(frame: pd.DataFrame, column: str, source: _Source) -> np.ndarray:
    raw = frame[column]
    blank = _blank(raw)
    if blank.any():  # counted with the cells that spell a missing value ("nan"): as missing
        missing = blank | tables.spelled_nan(raw)
        tables.raise_at(missing, MISSING_VALUE, frame, raw, column, source, RatesError)
    tables.refuse_non_real(frame, column, source, RatesError)
    return tables.whole_numbers(frame, column, source, RatesError, BAD_COUNT)


def _resolution(value) -> float:
    """Half a unit in the last written digit of a rate: ``"0.333"`` -> 0.0005 (a float
    counts as its shortest repr)."""
    text = repr(float(value)) if not isinstance(value, str) else value.strip().lower()
    mantissa, _, exponent = text.partition("e")
    decimals = len(mantissa.partition(".")[2])
    try:
        power = int(exponent) if exponent else 0
    except ValueError:
        power = 0
    return 0.5 * 10.0 ** (power - decimals)


def _check_counts(
    tidy: pd.DataFrame, frame: pd.DataFrame, source: _Source, count_tolerance: float | None
) -> None:
    """Refuse zero counts and rates that no whole number of errors out of the count gives."""
    for rate, (count_column, kind) in RATE_COUNTS.items():
        if count_column not in tidy or rate not in tidy:
            continue
        counts = tidy[count_column].to_numpy()
        zero = counts == 0
        if zero.any():
            at, more = _first(zero)
            raise RatesError(
                ZERO_COUNT.format(
                    where=source.where(frame, at),
                    column=count_column,
                    kind=kind,
                    rate=rate.upper(),
                    more=source.more(more),
                )
            )
        rates = tidy[rate].to_numpy(dtype="float64")
        n = counts.astype("float64")
        product = rates * n
        off = np.abs(product - np.round(product))
        if count_tolerance is None:
            raw = frame[rate]
            codes, uniques = pd.factorize(raw.to_numpy(dtype=object))
            half = np.array([_resolution(v) for v in uniques])[codes]
            allowed = n * half * (1 + 1e-9) + 1e-9 * np.maximum(1.0, product)
        else:
            allowed = np.full(len(n), count_tolerance)
        bad = off > allowed
        if bad.any():
            at, more = _first(bad)
            tolerance = float(allowed[at])
            rule = (
                AS_WRITTEN.format(tolerance=tolerance)
                if count_tolerance is None
                else GIVEN_TOLERANCE.format(tolerance=count_tolerance)
            )
            value = tables.cell(frame[rate], at)
            raise RatesError(
                IMPOSSIBLE_RATE.format(
                    where=source.where(frame, at),
                    column=rate,
                    value=value,
                    count_column=count_column,
                    count=int(counts[at]),
                    product=float(product[at]),
                    kind=kind,
                    rule=rule,
                    more=source.more(more),
                )
            )


def _check_attributes(
    tidy: pd.DataFrame, attributes: tuple[str, ...], frame: pd.DataFrame, source: _Source
) -> None:
    """With both a group column and attribute columns, each group must have one set of
    attribute values and each set of values one group."""
    group = tidy["group"]
    first_of_group = pd.Series(np.arange(len(tidy))).groupby(group.to_numpy()).transform("first")
    first_of_group = first_of_group.to_numpy()
    for name in attributes:
        values = tidy[name].to_numpy(dtype=object)
        expected = values[first_of_group]
        differ = values != expected
        if differ.any():
            at = int(np.flatnonzero(differ)[0])
            raise RatesError(
                ATTRIBUTE_CONTRADICTS_GROUP.format(
                    where=source.where(frame, at),
                    column=name,
                    value=values[at],
                    group=group.iloc[at],
                    expected=expected[at],
                    first=source.where(frame, int(first_of_group[at])),
                )
            )
    key = tidy[list(attributes)].astype(str).agg("\x1f".join, axis=1).to_numpy(dtype=object)
    first_of_key = pd.Series(np.arange(len(tidy))).groupby(key).transform("first").to_numpy()
    groups = group.to_numpy(dtype=object)
    clash = groups != groups[first_of_key]
    if clash.any():
        at = int(np.flatnonzero(clash)[0])
        raise RatesError(
            GROUPS_SHARE_ATTRIBUTES.format(
                where=source.where(frame, at),
                group=groups[at],
                values={name: tidy[name].iloc[at] for name in attributes},
                other=groups[first_of_key[at]],
                first=source.where(frame, int(first_of_key[at])),
            )
        )


def _labels(frame: pd.DataFrame, column: str, source: _Source) -> pd.Series:
    return tables.labels(frame, column, source, RatesError).astype("string")


def _check_complete(
    tidy: pd.DataFrame, positions: np.ndarray, frame: pd.DataFrame, source: _Source
) -> None:
    """Refuse duplicate (algorithm, group) rows and algorithms missing a group."""
    keys = tidy[["algorithm", "group"]]
    duplicated = keys.duplicated().to_numpy()
    if duplicated.any():
        at = int(np.flatnonzero(duplicated)[0])
        algorithm, group = keys.iloc[at]
        first = int(
            np.flatnonzero(
                ((keys["algorithm"] == algorithm) & (keys["group"] == group)).to_numpy()
            )[0]
        )
        raise RatesError(
            DUPLICATE_ROW.format(
                where=source.where(frame, int(positions[at])),
                algorithm=algorithm,
                group=group,
                first=f"(first at {source.where(frame, int(positions[first]))})",
            )
        )
    groups = pd.unique(tidy["group"])
    # no row repeats, so an algorithm lacks a group exactly when it has fewer rows
    codes, algorithms = pd.factorize(tidy["algorithm"], sort=False)
    short = np.bincount(codes, minlength=len(algorithms)) < len(groups)
    for index in np.flatnonzero(short)[:1]:
        algorithm = algorithms[index]
        present = set(tidy["group"].to_numpy(dtype=object)[codes == index])
        missing = [g for g in groups if g not in present]
        if missing:
            at = int(np.flatnonzero(codes == index)[0])
            raise RatesError(
                MISSING_GROUPS.format(
                    source=source.name,
                    algorithm=algorithm,
                    groups=missing,
                    where=source.where(frame, int(positions[at])),
                )
            )


def group_attributes(
    groups: list[str],
    attributes: Sequence[str] | None,
    source: _Source,
    column_of: Callable[[str], str],
) -> tuple[str, ...]:
    """The attribute names the dot-separated parts of the group labels stand for: two
    parts are gender and race unless named; a label with another number of parts than
    the names is refused, naming its column (``column_of(group)``)."""
    # as most groups split (not the first alone: a first header of FMR.F..AmIndian among
    # FMR.F.Asian and the others read every group whole, their gender and race dropped)
    counts = Counter(len(group.split(".")) for group in groups)
    parts = counts.most_common(1)[0][0] if groups else 0
    if attributes is None:
        attributes = ANNEX15_ATTRIBUTES if parts == 2 else ()
    attributes = tuple(attributes)
    for group in groups if attributes else ():
        found = group.split(".")
        if len(found) != len(attributes):
            raise RatesError(
                WRONG_ATTRIBUTE_COUNT.format(
                    source=source.name,
                    column=column_of(group),
                    found=len(found),
                    expected=len(attributes),
                    attributes=list(attributes),
                )
            )
        # FMR..Black, FMR.F.: an empty label, which a column of labels may not hold
        for attribute, part in zip(attributes, found, strict=True):
            if not part.strip():
                raise RatesError(
                    EMPTY_ATTRIBUTE.format(
                        source=source.name,
                        column=column_of(group),
                        attribute=attribute,
                        group=group,
                        attributes=list(attributes),
                    )
                )
    return attributes


def _from_wide(
    frame: pd.DataFrame, source: _Source, attributes: Sequence[str] | None
) -> pd.DataFrame:
    columns = [str(c) for c in frame.columns]
    frame.columns = columns
    if "Algorithm" not in columns:
        raise source.missing("Algorithm", RatesError, tables.WIDE_ALGORITHM)
    matches = {c: WIDE_RATE.match(c) for c in columns if c != "Algorithm"}
    unknown = [c for c, m in matches.items() if m is None]
    if unknown:
        raise RatesError(
            UNKNOWN_COLUMNS.format(
                source=source.name,
                columns=unknown,
                expected="Algorithm, FMR.<group>, FNMR.<group>",
                hint="",
            )
        )
    groups: list[str] = []
    for _column, match in matches.items():
        if match.group(2) not in groups:
            groups.append(match.group(2))
    # two spellings of one group in the header are two columns of one group: refused
    # (merged, they would give each algorithm the group twice, refused as a duplicate)
    first_column = {}
    for column, match in matches.items():
        first_column.setdefault(match.group(2), column)
    check_spellings(
        groups,
        lambda i: f"header, column {first_column[groups[i]]!r}",
        source=source.name,
        column="group",
        error=RatesError,
    )
    kinds = [k for k in ("FMR", "FNMR") if any(m.group(1) == k for m in matches.values())]
    for group in groups:
        for kind in kinds:  # a one-sided table holds one kind; a two-sided one both, per group
            if f"{kind}.{group}" not in columns:
                raise source.missing(
                    f"{kind}.{group}",
                    RatesError,
                    f" (group {group!r} has an {'FNMR' if kind == 'FMR' else 'FMR'} column)",
                )
    if not groups:
        raise source.missing(
            "FMR.<group>", RatesError, " (the wide layout has an FMR and an FNMR column per group)"
        )
    attributes = group_attributes(groups, attributes, source, lambda group: f"FMR.{group}")
    if len(frame) == 0:
        raise RatesError(EMPTY.format(source=source.name))
    algorithms = _labels(frame, "Algorithm", source)
    parsed = {c: _numbers(frame, c, source) for c in columns if c != "Algorithm"}  # file order
    stacked = {k: np.column_stack([parsed[f"{k}.{g}"] for g in groups]) for k in kinds}
    n_alg, n_grp = stacked[kinds[0]].shape
    tidy = pd.DataFrame({"algorithm": np.repeat(algorithms.to_numpy(), n_grp)})
    tidy["algorithm"] = tidy["algorithm"].astype("string")
    group_col = pd.array(np.tile(np.array(groups, dtype=object), n_alg), dtype="string")
    for i, name in enumerate(attributes):
        part = np.array([g.split(".")[i] for g in groups], dtype=object)
        tidy[name] = pd.array(np.tile(part, n_alg), dtype="string")
    tidy["group"] = group_col
    for kind, values in stacked.items():
        tidy[kind.lower()] = values.ravel()
    positions = np.repeat(np.arange(n_alg), n_grp)
    _check_complete(tidy, positions, frame, source)
    return tidy


def _from_long(
    frame: pd.DataFrame,
    source: _Source,
    attributes: Sequence[str] | None,
    count_tolerance: float | None = None,
) -> pd.DataFrame:
    columns = [str(c) for c in frame.columns]
    frame.columns = columns
    if attributes is None:
        attributes = tuple(a for a in ANNEX15_ATTRIBUTES if a in columns)
    attributes = tuple(attributes)
    for required in ("algorithm", *attributes):
        if required not in columns:
            raise source.missing(required, RatesError)
    rates = [r for r in RATE_COLUMNS if r in columns]  # one of them makes a one-sided table
    if not rates:
        raise source.missing("fmr", RatesError, " (and 'fnmr': give one or both)")
    if "group" not in columns and not attributes:
        raise source.missing(
            "group",
            RatesError,
            " (give a group column, or attribute columns named with attributes=[...], command "
            "line --attributes)",
        )
    known = {"algorithm", "group", *RATE_COLUMNS, *COUNT_COLUMNS, *attributes}
    unknown = [c for c in columns if c not in known]
    if unknown:
        raise RatesError(
            UNKNOWN_COLUMNS.format(
                source=source.name,
                columns=unknown,
                expected="algorithm, group and/or attribute columns, fmr, fnmr, n_mated, n_nonmated",
                hint="; attribute columns other than gender and race are named with "
                "attributes=[...] (command line --attributes)",
            )
        )
    if len(frame) == 0:
        raise RatesError(EMPTY.format(source=source.name))
    tidy = pd.DataFrame({"algorithm": _labels(frame, "algorithm", source)})
    for name in attributes:
        tidy[name] = _labels(frame, name, source)
    if "group" in columns:
        tidy["group"] = _labels(frame, "group", source)
        if attributes:
            _check_attributes(tidy, attributes, frame, source)
    else:
        tidy["group"] = tidy[list(attributes)].agg(".".join, axis=1).astype("string")
    for name in rates:
        tidy[name] = _numbers(frame, name, source)
    for name in COUNT_COLUMNS:
        if name in columns:
            tidy[name] = _counts(frame, name, source)
    _check_counts(tidy, frame, source, count_tolerance)
    _check_complete(tidy, np.arange(len(tidy)), frame, source)
    return tidy


@validate_params(
    "attributes",
    "count_tolerance",
    "columns",
    "separator",
    "units",
    "pair_separator",
    "pairs",
    "rate_position",
    "ignore",
    "merge_labels",
    "fmr_above_fnmr",
    "encoding",
    max_bytes=Integer(1),
    source=SOURCE,
)
def read_rates(
    source: str | os.PathLike | pd.DataFrame,
    *,
    attributes: Sequence[str] | None = None,
    count_tolerance: float | None = None,
    max_bytes: int = tables.MAX_BYTES,
    columns: Mapping[str, str] | str | None = None,
    separator: str = ".",
    units: str | None = None,
    pair_separator: str | None = None,
    pairs=None,
    rate_position: str = "prefix",
    ignore=None,
    merge_labels: bool = False,
    fmr_above_fnmr: bool = False,
    encoding: str | None = None,
) -> pd.DataFrame:
    """Read per-group error rates from a CSV/Parquet file or a DataFrame, validated.

    Parameters
    ----------
    source
        Path of a CSV (or ``.parquet``) file, or a DataFrame, in the wide or
        the long layout (see the module docstring).
    attributes
        Names of the demographic attributes making up a group. Wide layout:
        one name per dot-separated part of the group label (default
        ``("gender", "race")`` for two parts, none otherwise). Long layout:
        the attribute columns (default: whichever of ``gender`` and ``race``
        are present); with a ``group`` column too, they must agree with it.
    count_tolerance
        With counts, a rate times its count must be a whole number of
        errors: within the rounding of the rate as written (``None``,
        default: ``0.333`` with 10 comparisons gives 3.33 +- 0.005, refused),
        or within this many comparisons (``inf``: rates not checked against
        counts).
    max_bytes
        Largest file read (default :data:`audit.tables.common.MAX_BYTES`, 1 GiB).
    columns
        The user's column names for ours, ``{"algorithm": "system", "group":
        "nationality"}`` or ``"algorithm=system,group=nationality"``.
    separator
        What separates ``FMR``/``FNMR`` from the group in a wide column name
        (default ``"."``; ``"_"`` reads ``FMR_African``).
    rate_position
        Where a wide column name puts the rate: ``"prefix"`` (default,
        ``FMR.<group>``) or ``"suffix"`` (``<group><separator>FMR``:
        ``"suffix"`` with ``separator="_"`` reads ``African_FMR``).
    ignore
        Columns to leave out (``["Dataset", "Mean"]`` or ``"Dataset,Mean"``),
        e.g. a dataset name or summary columns beside the group rates; each
        must be a column of the table.  They are listed in
        ``attrs["ignored_columns"]``; no other column is ever dropped.
    units
        ``"percent"`` divides every rate by 100; ``"fraction"`` says the
        rates are fractions; ``None`` (default) reads fractions and, for
        a file, warns (:class:`~audit.tables.layouts.ImplausibleRatesWarning`)
        when a median rate exceeds 0.2.  See :mod:`audit.tables.layouts`.
    pair_separator
        Reads a wide cross-group impostor table: ``FMR.<enrolment><SEP><probe>``
        columns, one per pair of groups (``"|"`` reads ``FMR.F.Black|M.White``).
        A long cross-group table (columns ``group_1``, ``group_2``) needs none.
        See :mod:`audit.tables.crossgroup`.
    pairs
        The pairs a cross-group table measures, when not the full square:
        ``[("A", "B"), ...]`` (enrolment, probe), or text ``"A|B,B|A"`` split at
        ``pair_separator``.  Every group needs its within-group pair.
    merge_labels
        Labels that differ only by case, white space, an invisible character or
        Unicode normalisation (``"Black"`` and ``"black "``) are refused by
        default, naming both spellings; ``True`` reads them as the first
        spelling, with a warning for each (:mod:`audit.tables.labels`).
    fmr_above_fnmr
        The table's FMRs are meant to exceed its FNMRs in most cells (a very
        permissive threshold): no warning that the columns may be swapped
        (:func:`audit.tables.layouts.check_plausible`).
    encoding
        The text encoding of a CSV (``"utf-16"``, ``"cp1252"``, ...); UTF-8 by
        default, and a file in another is refused naming it
        (:func:`audit.tables.common.read_table`).  A gzip, bzip2 or xz file is
        read as it is.

    Returns
    -------
    pandas.DataFrame
        One row per (algorithm, group), in input order, with columns
        ``algorithm``, the attributes, ``group``, ``fmr``, ``fnmr`` (float64;
        a one-sided table has one of the two) and ``n_mated``/``n_nonmated``
        (int64) when given. ``attrs["source"]`` names the input,
        ``attrs["units"]`` the units read, ``attrs["ignored_columns"]`` the
        columns left out (``ignore``).  From a cross-group table: the
        within-group FMRs, FMR(g, g), as an FMR-only table, and the pair
        matrices in ``attrs["cross_group"]``
        (:func:`audit.tables.crossgroup.cross_group`).

    Raises
    ------
    RatesError
        With a message naming the file, row (CSV line) and column of the
        first problem; also when the table has fewer than 2 groups.

    Examples
    --------
    >>> import pandas as pd
    >>> wide = pd.DataFrame({"Algorithm": ["a"], "FMR.F": [1e-4], "FNMR.F": [0.01],
    ...                      "FMR.M": [2e-4], "FNMR.M": [0.02]})
    >>> read_rates(wide)[["algorithm", "group", "fmr", "fnmr"]]
      algorithm group     fmr  fnmr
    0         a     F  0.0001  0.01
    1         a     M  0.0002  0.02
    """
    # a cross-group table is read into a rates table, so its reader imports this module
    from audit.tables import crossgroup

    taken = [a for a in attributes or () if a in TABLE_COLUMNS]
    if taken:  # the attribute's column would overwrite the table's own, or be overwritten
        raise ParameterError(ATTRIBUTE_TAKEN.format(name=taken[0], columns=list(TABLE_COLUMNS)))
    layouts.check_mapping(
        columns,
        names=(*TABLE_COLUMNS, "Algorithm"),
        attributes=tuple(ANNEX15_ATTRIBUTES if attributes is None else attributes),
        separator=separator,
        rate_position=rate_position,
    )
    frame, where = tables.read_table(source, RatesError, max_bytes=max_bytes, encoding=encoding)
    where.merge_labels = merge_labels
    frame = layouts.prepare(
        frame,
        where,
        RatesError,
        columns=columns,
        separator=separator,
        units=units,
        rate_position=rate_position,
        ignore=ignore,
    )
    columns = [str(c) for c in frame.columns]
    if crossgroup.is_cross_group(columns, pair_separator):
        tidy = crossgroup.read_cross_group(
            frame,
            where,
            attributes=attributes,
            pair_separator=pair_separator,
            pairs=pairs,
            count_tolerance=count_tolerance,
        )
    elif pairs is not None:
        raise RatesError(crossgroup.PAIRS_NOT_CROSS.format(source=where.name))
    elif any(WIDE_RATE.match(c) for c in columns) or "Algorithm" in columns:
        tidy = _from_wide(frame, where, attributes)
        crossgroup.warn_pair_like(tidy, where, wide=True)
    elif {"fmr", "fnmr"} & set(columns) or "algorithm" in columns:
        tidy = _from_long(frame, where, attributes, count_tolerance)
        crossgroup.warn_pair_like(tidy, where, wide=False)
    else:
        raise RatesError(UNKNOWN_LAYOUT.format(source=where.name, columns=columns))
    groups = list(pd.unique(tidy["group"]))
    if len(groups) < 2:
        raise RatesError(TOO_FEW_GROUPS.format(source=where.name, count=len(groups), groups=groups))
    tidy.attrs["source"] = where.name
    tidy.attrs["units"] = units or "fraction"
    tidy.attrs["ignored_columns"] = list(layouts.ignored_columns(ignore))
    layouts.check_plausible(tidy, units, where, fmr_above_fnmr=fmr_above_fnmr)
    return tidy


@validate_params(table=RATES_TABLE)
def rate_matrices(table: pd.DataFrame) -> tuple[pd.Index, pd.Index, np.ndarray, np.ndarray]:
    """The per-group rates of a validated table as two (algorithm x group) arrays.

    Returns ``(algorithms, groups, fmr, fnmr)``; rows follow the table's order
    of algorithms, columns its order of groups.  The rate a one-sided table
    lacks is all NaN.
    """
    algorithms = pd.Index(pd.unique(table["algorithm"]), name="algorithm")
    groups = pd.Index(pd.unique(table["group"]), name="group")
    fmr, fnmr = (group_matrix(table, rate, algorithms, groups) for rate in RATE_COLUMNS)
    return algorithms, groups, fmr, fnmr


def group_matrix(
    table: pd.DataFrame, column: str, algorithms: pd.Index, groups: pd.Index
) -> np.ndarray:
    """One column of a validated table (a rate or a count) as an (algorithm x group)
    float64 array in the given orders; NaN where the table has no row for the cell, all
    NaN when it lacks the column.  Rows of other algorithms or groups are left out; two
    rows for one cell raise ``ValueError`` (a validated table has none)."""
    matrix = np.full((len(algorithms), len(groups)), np.nan)
    if column not in table.columns:
        return matrix
    # each row's cell, placed directly (a pivot and a reindex took 4 to 5 times as long)
    rows = algorithms.get_indexer(table["algorithm"])
    columns = groups.get_indexer(table["group"])
    inside = (rows >= 0) & (columns >= 0)
    rows, columns = rows[inside], columns[inside]
    cells = rows * len(groups) + columns
    if np.unique(cells).size != cells.size:
        raise ValueError(f"two rows of the table give {column} for one algorithm and group")
    matrix[rows, columns] = table[column].to_numpy(dtype="float64", na_value=np.nan)[inside]
    return matrix


def group_table(table: pd.DataFrame) -> pd.DataFrame:
    """The groups of a validated table, in its order, with their attribute values.

    Indexed by ``group``, one string column per attribute (the columns the
    readers place between ``algorithm`` and ``group``; none for groups given
    by label only).

    >>> t = read_rates(pd.DataFrame({"Algorithm": ["a"], "FMR.F.X": [1e-4], "FNMR.F.X": [0.01],
    ...                              "FMR.M.X": [2e-4], "FNMR.M.X": [0.02]}))
    >>> group_table(t).to_dict("index")
    {'F.X': {'gender': 'F', 'race': 'X'}, 'M.X': {'gender': 'M', 'race': 'X'}}
    """
    columns = list(table.columns)
    attributes = columns[columns.index("algorithm") + 1 : columns.index("group")]
    first = table.drop_duplicates("group")
    return first[attributes].astype("string").set_axis(pd.Index(first["group"], name="group"))
