"""The shapes of the field's rates tables: column names, units and one-sided tables.

:func:`audit.tables.rates.read_rates` calls :func:`prepare` on the raw table
before it tells the layout apart, and :func:`check_plausible` on the tidy
table it returns.  :func:`prepare`

* refuses a leading unnamed column (the index ``DataFrame.to_csv`` writes
  unless told ``index=False``) with a hint, rather than dropping it;
* renames the user's columns to ours (``columns={"algorithm": "system",
  "group": "nationality"}``), refusing a mapped column that is not there;
* leaves out the columns the user names (``ignore=["Dataset", "Mean"]``),
  refusing a name that is not a column (nothing else is ever dropped; the
  tidy table lists them in ``attrs["ignored_columns"]``);
* reads wide rate columns written with another separator (``FMR_African``
  with ``separator="_"``), or with the rate after the group
  (``African_FMR`` with ``rate_position="suffix", separator="_"``); a table
  whose only rate columns put the rate after the group is refused, unless
  read so, with a message naming those options (:data:`RATE_AFTER_GROUP`);
* divides rates given in percent by 100 (``units="percent"``), and refuses a
  fraction table with a value above 1 with a hint when every value lies in
  [0, 100] (the table then looks like percent).

A rates table may hold one error rate only (an FMR-only table, as in NIST's
FRVT 1:1 demographic results, or an FNMR-only one): :func:`available_rates`
says which rates a tidy table has.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import pandas as pd

from audit.exceptions import ImplausibleRatesWarning, ParameterError, UsageError, warn
from audit.tables.common import Source, cell

RATES = ("fmr", "fnmr")
UNITS = ("fraction", "percent")
#: Where a wide column name puts the rate: before the group (``FMR.F.Black``) or after it
#: (``African_FMR``).
RATE_POSITIONS = ("prefix", "suffix")
_WIDE = re.compile(r"^(FMR|FNMR)\.(.+)$")
#: A column that looks like a group followed by a rate, at any separator.
_SUFFIX_LIKE = re.compile(r"^(.+?)([^A-Za-z0-9]+)(FMR|FNMR)$")

# Error messages: constants, so that tests can check them exactly.
INDEX_COLUMN = (
    "{source}: the first column has no name ({column!r}): it looks like the index pandas "
    "writes with DataFrame.to_csv(); write the file with to_csv(index=False), or give the "
    "column a name and map or remove it (nothing is dropped silently)"
)
MAPPED_MISSING = (
    "{source}: column {theirs!r} (given for {ours!r} in the column mapping) is missing; "
    "the columns are {columns}"
)
MAPPED_CLASH = (
    "{source}: the column mapping renames {theirs!r} to {ours!r}, but the table already "
    "has a column {ours!r}"
)
BAD_MAPPING = (
    "column mapping {text!r}: expected comma-separated ours=theirs pairs, "
    "e.g. 'algorithm=system,group=nationality'"
)
OURS_TWICE = (
    "column mapping {text!r}: {ours!r} is given twice; each of ours stands for one column "
    "of the table"
)
MAPPED_TWICE = (
    "{source}: the column mapping names the table's column {theirs!r} for both {first!r} and "
    "{second!r}; a column of the table can stand for one of ours only"
)
SAME_NAME = (
    "{source}: the columns {first!r} and {second!r} would both be read as {name!r} ({how}); "
    "rename one of them in the file, or map them to distinct names with --columns"
)
UNREAD_NAME = (
    "parameter columns: {ours!r} (given for the table's column {theirs!r}) is not a name "
    "audit reads; a mapping names ours first (ours=theirs), each one of {names}, an "
    "attribute ({attributes}) or a wide rate column ({wide})"
)
BAD_IGNORE = "parameter ignore: expected a list of column names, got {value!r}"
IGNORED_MISSING = (
    "{source}: column {column!r} (named in ignore, command line --ignore-columns) is not "
    "in the table; its columns are {columns}"
)
RATE_AFTER_GROUP = (
    "{source}: the rate comes after the group in {examples}; read such a table with "
    "rate_position='suffix', separator={separator!r} (command line: --rate-position "
    "suffix --separator {separator}), name its algorithm column with columns= (command "
    "line: --columns algorithm=<name>) and leave out its other columns ({others}) with "
    "ignore= (command line: --ignore-columns <names>); nothing is dropped unless named"
)
NO_SUFFIX_COLUMNS = (
    "{source}: rate_position='suffix' reads columns <group>{separator}FMR and "
    "<group>{separator}FNMR, and none of the columns {columns} is one (the separator is "
    "{separator!r}: separator=, command line --separator)"
)
NO_PREFIX_COLUMNS = (
    "{source}: separator={separator!r} (command line --separator) reads columns "
    "FMR{separator}<group> and FNMR{separator}<group>, and none of the columns {columns} is "
    "one; without it, FMR.<group> columns are read"
)
OUT_OF_PERCENT = (
    "{where}, column {column!r}: {value!r} lies outside [0, 100] (the table was read "
    "with units='percent'){more}"
)
LOOKS_PERCENT = (
    "{where}, column {column!r}: {value!r} lies outside [0, 1]{more}; every rate in the "
    "table lies in [0, 100], so it looks like percent: read it with units='percent' "
    "(command line: --units percent)"
)
IMPLAUSIBLE = (
    "{source}: the median {rate} is {median:.3g}. {rate}s above {limit:g} are unusual at a "
    "real operating point, and a table in percent whose values all happen to be at most 1 "
    "looks exactly like this. If the table is in percent, read it with units='percent' "
    "(command line: --units percent); if these rates are fractions, say so with "
    "units='fraction' (command line: --units fraction), which silences this warning"
)


def parse_mapping(text: str | Mapping[str, str] | None) -> dict[str, str]:
    """``"algorithm=system,group=nationality"`` as ``{"algorithm": "system", ...}``.

    >>> parse_mapping("algorithm=system, group=nationality")
    {'algorithm': 'system', 'group': 'nationality'}
    """
    if text is None:
        return {}
    if isinstance(text, Mapping):
        return {str(k): str(v) for k, v in text.items()}
    mapping = {}
    for part in str(text).split(","):
        ours, sep, theirs = part.partition("=")
        if not sep or not ours.strip() or not theirs.strip():
            raise UsageError(BAD_MAPPING.format(text=text))
        if ours.strip() in mapping:
            raise UsageError(OURS_TWICE.format(text=text, ours=ours.strip()))
        mapping[ours.strip()] = theirs.strip()
    return mapping


def _rate_pattern(separator: str, rate_position: str) -> re.Pattern:
    """A wide rate column as ``separator`` and ``rate_position`` write it: ``FMR.<group>``
    (groups: the rate, the group), or ``<group>_FMR`` (groups: the group, the rate)."""
    mark = re.escape(separator)
    if rate_position == "suffix":
        return re.compile(rf"^(.+){mark}(FMR|FNMR)$")
    return re.compile(rf"^(FMR|FNMR){mark}(.+)$")


def check_mapping(
    columns: str | Mapping[str, str] | None,
    *,
    names: tuple[str, ...],
    attributes: tuple[str, ...],
    separator: str = ".",
    rate_position: str = "prefix",
) -> None:
    """Refuse (:data:`UNREAD_NAME`) a column mapping that gives a column of the table a
    name audit does not read: one of ``names``, one of the ``attributes``, or a wide rate
    column (``FMR.<group>``, or as ``separator`` and ``rate_position`` write it).

    ``--columns foo=Algorithm`` renamed the table's algorithm column to a name read
    nowhere, and the file was then refused for a missing column ``'Algorithm'``.

    >>> check_mapping("algorithm=system", names=("algorithm",), attributes=())
    >>> check_mapping("algo=system", names=("algorithm",), attributes=())
    Traceback (most recent call last):
    ...
    audit.exceptions.ParameterError: parameter columns: 'algo' (given for the table's column 'system') is not a name audit reads; a mapping names ours first (ours=theirs), each one of algorithm, an attribute (none) or a wide rate column (FMR.<group>, FNMR.<group>)
    """
    wide = _rate_pattern(separator, rate_position)
    if rate_position == "suffix":
        written = f"<group>{separator}FMR, <group>{separator}FNMR"
    else:
        written = f"FMR{separator}<group>, FNMR{separator}<group>"
    for ours, theirs in parse_mapping(columns).items():
        if ours in names or ours in attributes or wide.match(ours) or _WIDE.match(ours):
            continue
        raise ParameterError(
            UNREAD_NAME.format(
                ours=ours,
                theirs=theirs,
                names=", ".join(names),
                attributes=", ".join(attributes) or "none",
                wide=written,
            )
        )


def parse_list(text: str | list[str] | tuple[str, ...] | None) -> tuple[str, ...] | None:
    """``"gender,race"`` as ``("gender", "race")``; ``None`` stays ``None``.

    >>> parse_list("gender, race")
    ('gender', 'race')
    """
    if text is None:
        return None
    if isinstance(text, str):
        return tuple(p.strip() for p in text.split(",") if p.strip())
    return tuple(text)


def _refuse_first_cell(frame, parsed, flagged, message: str, source: Source, error) -> None:
    """Raise ``error(message)`` at the first cell, column by column, where ``flagged`` is
    true of the parsed values, counting that column's other flagged cells."""
    for column, values in parsed.items():
        positions = np.flatnonzero(flagged(values))
        if len(positions):
            at, more = int(positions[0]), len(positions) - 1
            raise error(
                message.format(
                    where=source.where(frame, at),
                    column=column,
                    value=cell(frame[column], at),
                    more=source.more(more),
                )
            )


def ignored_columns(ignore) -> tuple[str, ...]:
    """The columns to leave out: ``"Dataset,Mean"`` or a list as a tuple; ``None`` as ``()``.

    >>> ignored_columns("Dataset, Mean")
    ('Dataset', 'Mean')
    """
    if ignore is None:
        return ()
    if isinstance(ignore, str):
        return parse_list(ignore)
    if not isinstance(ignore, (list, tuple)) or not all(isinstance(c, str) for c in ignore):
        raise ParameterError(BAD_IGNORE.format(value=ignore))
    return tuple(ignore)


def _refuse_rate_after_group(names: list[str], source: Source, error) -> None:
    """Refuse, naming the options that read it, a table whose rate columns all put the
    rate after the group (``African_FMR``) and that has no rate column of ours."""
    if rate_columns(names):
        return
    found = [(c, _SUFFIX_LIKE.match(c)) for c in names]
    found = [(c, m) for c, m in found if m is not None]
    if not found:
        return
    separators = [m.group(2) for _, m in found]
    separator = max(set(separators), key=separators.count)
    rated = {c for c, _ in found}
    raise error(
        RATE_AFTER_GROUP.format(
            source=source.name,
            examples=", ".join(repr(c) for c, _ in found[:3]) + (", ..." if len(found) > 3 else ""),
            separator=separator,
            others=", ".join(
                repr(c) for c in names if c not in rated and c not in ("algorithm", "Algorithm")
            )
            or "none",
        )
    )


def rate_columns(columns) -> list[str]:
    """The columns of a raw table that hold rates (long ``fmr``/``fnmr``, wide ``FMR.<g>``)."""
    return [c for c in columns if c in RATES or _WIDE.match(c)]


def prepare(
    frame: pd.DataFrame,
    source: Source,
    error: type[Exception],
    *,
    columns: Mapping[str, str] | str | None = None,
    separator: str = ".",
    units: str | None = None,
    rate_position: str = "prefix",
    ignore=None,
) -> pd.DataFrame:
    """The raw table with our column names and rates as fractions; see the module docstring.

    The options are those :func:`audit.tables.rates.read_rates` checked (its
    declared parameters): they are trusted here.
    """
    names = [str(c) for c in frame.columns]
    leave_out = ignored_columns(ignore)
    for column in leave_out:
        if column not in names:
            raise error(IGNORED_MISSING.format(source=source.name, column=column, columns=names))
    if leave_out:
        source.ignored = tuple(leave_out)  # a column then missing is said as left out
        frame = frame.drop(columns=[c for c in frame.columns if str(c) in leave_out])
        names = [str(c) for c in frame.columns]
    if names and (names[0] == "" or re.match(r"^Unnamed: \d+$", names[0])):
        raise error(INDEX_COLUMN.format(source=source.name, column=names[0]))
    mapping = parse_mapping(columns)
    renames = {}
    for ours, theirs in mapping.items():
        if theirs not in names:
            raise error(
                MAPPED_MISSING.format(source=source.name, theirs=theirs, ours=ours, columns=names)
            )
        if theirs in renames:
            raise UsageError(
                MAPPED_TWICE.format(
                    source=source.name, theirs=theirs, first=renames[theirs], second=ours
                )
            )
        if ours in names and ours != theirs and ours not in mapping.values():
            raise error(MAPPED_CLASH.format(source=source.name, theirs=theirs, ours=ours))
        renames[theirs] = ours
    names = [renames.get(c, c) for c in names]
    if rate_position == "suffix":
        pattern = _rate_pattern(separator, rate_position)
        if not any(pattern.match(c) for c in names):
            raise error(
                NO_SUFFIX_COLUMNS.format(source=source.name, separator=separator, columns=names)
            )
        names = [pattern.sub(r"\2.\1", c) for c in names]
    elif separator != ".":
        pattern = _rate_pattern(separator, rate_position)
        if not any(pattern.match(c) for c in names):  # the option would do nothing
            raise error(
                NO_PREFIX_COLUMNS.format(source=source.name, separator=separator, columns=names)
            )
        names = [pattern.sub(r"\1.\2", c) for c in names]
    _refuse_rate_after_group(names, source, error)
    if "algorithm" in names and "Algorithm" not in names and any(_WIDE.match(c) for c in names):
        names = ["Algorithm" if c == "algorithm" else c for c in names]
    _refuse_same_names([str(c) for c in frame.columns], names, renames, separator, source, error)
    frame = frame.copy(deep=False)
    frame.columns = names
    rates = rate_columns(names)
    parsed = {}
    for c in rates:
        if names.count(c) != 1:
            continue
        numbers = pd.to_numeric(frame[c], errors="coerce")
        if pd.api.types.is_bool_dtype(numbers) or pd.api.types.is_complex_dtype(numbers):
            continue  # not real numbers: the reader refuses the column, naming the cell
        parsed[c] = numbers.to_numpy(dtype="float64", na_value=np.nan)
    if units == "percent":
        _refuse_first_cell(
            frame,
            parsed,
            lambda v: ~np.isnan(v) & ~((v >= 0.0) & (v <= 100.0)),
            OUT_OF_PERCENT,
            source,
            error,
        )
        for column, values in parsed.items():
            raw = frame[column].astype(object).to_numpy()
            frame[column] = np.where(np.isnan(values), raw, values / 100.0)
        return frame
    numbers = [v[~np.isnan(v)] for v in parsed.values()]
    every = np.concatenate(numbers) if numbers else np.zeros(0)
    if every.size and (every > 1.0).any() and ((every >= 0.0) & (every <= 100.0)).all():
        _refuse_first_cell(frame, parsed, lambda v: v > 1.0, LOOKS_PERCENT, source, error)
    return frame


def _refuse_same_names(
    original: list[str],
    names: list[str],
    renames: Mapping[str, str],
    separator: str,
    source: Source,
    error: type[Exception],
) -> None:
    """Refuse two columns that the mapping or the separator give one name, naming both
    and what renamed them (a table cannot hold one column twice)."""
    seen: dict[str, str] = {}
    for before, after in zip(original, names, strict=True):
        if after not in seen:
            seen[after] = before
            continue
        how = [
            f"the mapping names {c!r} {after!r}"
            if c in renames
            else f"the separator {separator!r} reads {c!r} as {after!r}"
            for c in (seen[after], before)
            if c != after
        ]
        raise error(
            SAME_NAME.format(
                source=source.name, first=seen[after], second=before, name=after, how="; ".join(how)
            )
        )


def available_rates(table: pd.DataFrame) -> tuple[str, ...]:
    """The error rates a tidy rates table holds: ``("fmr", "fnmr")``, ``("fmr",)`` or ``("fnmr",)``.

    >>> available_rates(pd.DataFrame(columns=["algorithm", "group", "fmr"]))
    ('fmr',)
    """
    return tuple(r for r in RATES if r in table.columns)


SWAPPED = (
    "{source}: the FMR exceeds the FNMR in {count} of {cells} cells (median FMR {fmr:.3g}, "
    "median FNMR {fnmr:.3g}). At a real operating point the FMR is far below the FNMR "
    "(NIST's tables: FMR about 1e-4, FNMR about 1e-2), so the FMR and FNMR columns may be "
    "swapped; every measure but at alpha 0.5 would then change. If the rates are as meant, "
    "say so with fmr_above_fnmr=True (command line: --fmr-above-fnmr), which silences this "
    "warning"
)

#: Median rates above which a table read as fractions looks like percent: the FNMR of a
#: poor system may reach 0.2, an FMR above a few percent is no operating point.
PLAUSIBLE_MEDIAN = {"fmr": 0.05, "fnmr": 0.2}


def check_plausible(
    table: pd.DataFrame, units: str | None, source: Source, *, fmr_above_fnmr: bool = False
) -> None:
    """Warn (:class:`ImplausibleRatesWarning`) when a file's rates look misread.

    * In percent: a median FMR above 0.05 or a median FNMR above 0.2
      (:data:`PLAUSIBLE_MEDIAN`; :data:`IMPLAUSIBLE`), for files read
      without ``units`` -- a DataFrame built in code says what it holds, and
      so does ``units="fraction"``.
    * Swapped: the FMR above the FNMR in most (algorithm, group) cells of a
      two-sided table (:data:`SWAPPED`), unless ``fmr_above_fnmr``.
    """
    where = table.attrs.get("source", "<DataFrame>")
    if units is None and source.name != "<DataFrame>":
        for rate in available_rates(table):
            median = float(np.median(table[rate].to_numpy(dtype="float64")))
            limit = PLAUSIBLE_MEDIAN[rate]
            if median > limit:
                warn(
                    IMPLAUSIBLE.format(source=where, rate=rate.upper(), median=median, limit=limit),
                    ImplausibleRatesWarning,
                )
    if fmr_above_fnmr or len(available_rates(table)) < 2:
        return
    fmr, fnmr = table["fmr"].to_numpy(dtype="float64"), table["fnmr"].to_numpy(dtype="float64")
    above = int((fmr > fnmr).sum())
    if above > len(fmr) / 2:
        warn(
            SWAPPED.format(
                source=where,
                count=above,
                cells=len(fmr),
                fmr=float(np.median(fmr)),
                fnmr=float(np.median(fnmr)),
            ),
            ImplausibleRatesWarning,
        )


def default_accuracy(table: pd.DataFrame) -> str:
    """The Pareto accuracy axis a table allows: total FNMR when it has FNMRs, else total FMR."""
    return "total_fnmr" if "fnmr" in available_rates(table) else "total_fmr"


ACCURACY_ABSENT = (
    "the table has no {rate}, so {accuracy!r} cannot be the accuracy axis; use "
    "accuracy={other!r} (command line: --accuracy {other})"
)


def check_accuracy(table: pd.DataFrame, accuracy: str) -> None:
    """Refuse a total-rate accuracy axis whose rate a one-sided table lacks."""
    rate = {"total_fnmr": "fnmr", "total_fmr": "fmr"}.get(accuracy)
    if rate is not None and rate not in available_rates(table):
        raise UsageError(
            ACCURACY_ABSENT.format(
                rate=rate.upper(), accuracy=accuracy, other=default_accuracy(table)
            )
        )
