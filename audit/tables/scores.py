"""Reader of comparison-score tables: one row per comparison, validated strictly.

See :mod:`audit.scores` for the conventions (decision rule, operating point,
per-group rates) that the reader prepares for.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from audit.exceptions import DataWarning, ScoresError, warn
from audit.tables import common as tables
from audit.tables import layouts
from audit.tables.common import Source as _Source
from audit.tables.common import blank as _blank
from audit.tables.common import first as _first
from audit.tables.labels import SPELLINGS, check_spellings, label_key, label_kinds
from audit.validation import SOURCE, Names, refuse, validate_params

# Error messages: constants, so that tests can check them exactly.
CANNOT_READ = tables.CANNOT_READ
EMPTY = "{source}: the score table has no rows"
MISSING_COLUMN = tables.MISSING_COLUMN
UNKNOWN_COLUMNS = (
    "{source}: unknown column(s) {columns}; expected algorithm, score, mated and the "
    "group column(s). Rename or remove them, or name them in ignore=[...] (command line "
    "--ignore-columns; nothing is dropped silently)"
)
IGNORED_MISSING = layouts.IGNORED_MISSING
DUPLICATE_COLUMN = tables.DUPLICATE_COLUMN
MATED_TWO_SUBJECTS = (
    "{where}: a mated comparison has subject {first!r} on one side and {second!r} on the "
    "other; both sides of a mated pair are the same person{more}"
)
SUBJECT_COLUMNS = ("subject_1", "subject_2")
PARTITIONED = (
    "{source}: column {column!r} is given by the name of its folder {folder!r} (a Hive "
    "partition), which audit does not read: write the column into the files "
    "(pyarrow.dataset.dataset(folder, partitioning='hive') reads them with it)"
)
MIXED_GROUP_COLUMNS = (
    "{source}: give the group either as one column {single!r} or as two columns {sides}, not both"
)
MISSING_VALUE = tables.MISSING_VALUE
NOT_NUMERIC = tables.NOT_NUMERIC
NOT_FINITE = "{where}, column {column!r}: {value!r} is not finite{more}"
BOOLEAN = tables.BOOLEAN
NOT_A_QUANTITY = tables.NOT_A_QUANTITY
INEXACT_INTEGER = tables.INEXACT_INTEGER
COMPLEX = tables.COMPLEX
UNDERFLOW = tables.UNDERFLOW
OVERFLOW = tables.OVERFLOW
BAD_MATED = "{where}, column 'mated': {value!r} is not a mated flag (True/False or 1/0){more}"
EMPTY_LABEL = tables.EMPTY_LABEL
NOT_A_LABEL = tables.NOT_A_LABEL
DOTTED_ATTRIBUTE = (
    "{where}, column {column!r}: {value!r} contains '.', which joins the values of the "
    "attributes {attributes} into one group label; a value with '.' would be cut or merged "
    "with another group, so rename it{more}"
)
MATED_CROSS_GROUP = (
    "{where}: a mated comparison has group {first!r} on one side and {second!r} on the "
    "other; both sides of a mated pair are the same person{more}"
)
NO_COMPARISONS = (
    "algorithm {algorithm!r}, group {group!r} has no {kind} comparisons, so its "
    "{rate} is undefined; every algorithm needs mated and within-group non-mated "
    "comparisons in every group"
)
NO_NONMATED = "algorithm {algorithm!r} has no non-mated comparisons: no threshold can be set on FMR"
MATED_ONLY = (
    "the scores hold mated comparisons only: no threshold can be set on FMR; their "
    "per-group FNMRs (an FNMR-only rates table) come at thresholds you give, with "
    "audit.scores.rates_at_thresholds(scores, thresholds)"
)
NO_DET_CURVE = (
    "a DET curve needs mated and within-group non-mated comparisons of one group, and no "
    "group of any algorithm holds both{why}"
)
UNKNOWN_ALGORITHM = "unknown algorithm {name!r}; the scores hold {names}"

TRUE_WORDS = frozenset({"true", "1", "1.0", "t", "yes"})
FALSE_WORDS = frozenset({"false", "0", "0.0", "f", "no"})

#: Default grid of target FMRs for :func:`sweep`: 0.1% to 10%, 10 per decade.
DEFAULT_TARGETS = np.logspace(-3, -1, 21)


# --------------------------------------------------------------------------- reading


def _score_values(frame: pd.DataFrame, source: _Source) -> np.ndarray:
    tables.refuse_non_real(frame, "score", source, ScoresError)
    raw = frame["score"]

    def refuse(mask: np.ndarray, message: str) -> None:
        tables.raise_at(mask, message, frame, raw, "score", source, ScoresError)

    if isinstance(raw.dtype, np.dtype) and raw.dtype.kind == "f":
        values = raw.to_numpy()  # float32 or float64, as given: no copy
        if np.isfinite(values).all():
            return values
    if pd.api.types.is_float_dtype(raw.dtype) or pd.api.types.is_integer_dtype(raw.dtype):
        values = raw.to_numpy(dtype="float64", na_value=np.nan)
        refuse(np.isnan(values), MISSING_VALUE)
        tables.refuse_inexact_integers(frame, "score", values, source, ScoresError)
    else:
        blank = _blank(raw)
        missing = tables.spelled_nan(raw) | blank
        # counted with the cells that spell a missing value ("nan"): as missing, said first
        # where no text comes before the first of them
        if blank.any() and not tables.text_before(raw, int(missing.argmax())):
            refuse(missing, MISSING_VALUE)
        values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
        bad = np.isnan(values)
        text = bad & ~missing
        if text.any() and not missing[: int(text.argmax())].any():  # (else said below)
            refuse(text, NOT_NUMERIC)
        refuse(missing & bad, MISSING_VALUE)
    tables.refuse_rounded(frame, "score", values, source, ScoresError)
    refuse(np.isinf(values), NOT_FINITE)
    return values


def _mated_values(frame: pd.DataFrame, source: _Source) -> np.ndarray:
    raw = frame["mated"]
    if pd.api.types.is_bool_dtype(raw.dtype) and not raw.isna().any():
        return raw.to_numpy(dtype=bool)
    tables.raise_at(_blank(raw), MISSING_VALUE, frame, raw, "mated", source, ScoresError)
    text = raw.astype(str).str.strip().str.lower()
    true = text.isin(TRUE_WORDS).to_numpy(bool)
    false = text.isin(FALSE_WORDS).to_numpy(bool)
    tables.raise_at(~(true | false), BAD_MATED, frame, raw, "mated", source, ScoresError)
    return true


#: Rows per block when coding labels: bounds the temporary integer codes.
_BLOCK = 1 << 20


def _factorize(values) -> tuple[np.ndarray, np.ndarray]:
    """``pandas.factorize`` (uniques in order of first appearance, -1 for missing) block
    by block, so that the codes are int32 rather than one int64 per row."""
    n = len(values)
    array = values.to_numpy() if isinstance(values, pd.Series) else np.asarray(values)
    if array.dtype.kind in "iu" and n:
        low, high = int(array.min()), int(array.max())
        if high - low < 1 << 15:  # small integers: a lookup table, no hashing
            return _factorize_small(array, low, high)
    codes = np.empty(n, dtype=np.int32)
    index: dict = {}
    uniques: list = []
    for lo in range(0, n, _BLOCK):
        block = values[lo : lo + _BLOCK]
        local, found = pd.factorize(block, sort=False, use_na_sentinel=True)
        remap = np.empty(len(found) + 1, dtype=np.int32)
        remap[-1] = -1
        for i, value in enumerate(found.tolist() if hasattr(found, "tolist") else found):
            at = index.get(value)
            if at is None:
                at = index[value] = len(uniques)
                uniques.append(value)
            remap[i] = at
        codes[lo : lo + _BLOCK] = remap[local]
    return codes, np.array(uniques, dtype=object) if uniques else np.array([], dtype=object)


def _factorize_small(array: np.ndarray, low: int, high: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_factorize` of integers in ``[low, high]`` (a range below 2**15)."""
    table = np.full(high - low + 1, -1, dtype=np.int16)
    uniques: list[int] = []
    for lo in range(0, len(array), _BLOCK):
        if (table >= 0).all():  # every value of the range seen: no new label can follow
            break
        block = array[lo : lo + _BLOCK]
        index = block if low == 0 else block.astype(np.intp) - low
        present = np.bincount(index, minlength=len(table)) > 0
        new = np.flatnonzero(present & (table < 0))
        if len(new):
            seen, first = np.unique(index, return_index=True)  # first position of each value
            first = first[np.searchsorted(seen, new)]
            for v in new[np.argsort(first, kind="stable")].tolist():
                table[v] = len(uniques)
                uniques.append(low + v)
    codes = np.empty(len(array), dtype=np.int16)
    for lo in range(0, len(array), _BLOCK):
        block = array[lo : lo + _BLOCK]
        codes[lo : lo + _BLOCK] = table[block if low == 0 else block.astype(np.intp) - low]
    return codes, np.array(uniques, dtype=array.dtype)


class _Labels:
    """A label column as integer codes (``-1`` nowhere) and its distinct labels as text,
    in order of first appearance: no per-row strings."""

    def __init__(self, codes: np.ndarray, labels: list[str]):
        self.codes = codes
        self.labels = labels

    def at(self, position: int) -> str:
        return self.labels[self.codes[position]]


def _refuse_unhashable(frame: pd.DataFrame, column: str, source: _Source) -> None:
    """:data:`NOT_A_LABEL` for the first cell of a label column that cannot be hashed --
    a list or an array (a Parquet column of lists), a mapping (of structs), a set --
    and so names no one label."""
    raw = frame[column]
    bad = np.fromiter((not _hashable(v) for v in raw.array), dtype=bool, count=len(raw))
    if bad.any():
        at, more = _first(bad)
        value = raw.iloc[at]
        kind = "list" if isinstance(value, list | np.ndarray) else type(value).__name__
        shown = repr(value.tolist() if isinstance(value, np.ndarray) else value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise ScoresError(
            NOT_A_LABEL.format(
                where=source.where(frame, at),
                column=column,
                value=shown,
                kind=kind,
                more=source.more(more),
            )
        )


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _label_values(
    frame: pd.DataFrame, column: str, source: _Source, spellings: bool = True
) -> _Labels:
    """Validate a label column on its distinct values only and return it as codes.

    The labels are the text of each value (``str``), as before; two values with the
    same text (``1`` and ``"1"``) are one label.  The first empty or missing cell is
    named with :data:`EMPTY_LABEL`.  Two spellings of one label are refused (or merged)
    unless ``spellings`` is false (the two sides of a group, checked together by
    :func:`_one_spelling_of_sides`; labels of a chunk of a source whose reader checks
    them over every chunk together, ``source.later``, by :func:`label_kinds`).
    """
    raw = frame[column]
    if isinstance(raw.dtype, pd.CategoricalDtype):
        codes, used = _factorize(raw.cat.codes.to_numpy())
        missing = np.flatnonzero(used < 0)
        if len(missing):  # a missing cell is code -1 of the categorical
            codes = np.where(codes == missing[0], -1, codes - (codes > missing[0]))
            used = used[used >= 0]
        uniques = raw.cat.categories.take(used)
    else:
        try:
            codes, uniques = _factorize(raw)
        except (TypeError, NotImplementedError):  # a cell no hash names: a list, a mapping
            # (Arrow's lists in a DataFrame fail as NotImplementedError)
            _refuse_unhashable(frame, column, source)
            raise
    empty = codes < 0
    if len(uniques):
        blank_unique = _blank(pd.Series(np.asarray(uniques, dtype=object), dtype=object))
        if blank_unique.any():
            empty |= blank_unique[np.maximum(codes, 0)]
    tables.raise_at(empty, EMPTY_LABEL, frame, frame[column], column, source, ScoresError)
    # two values with one text (1 and "1") are one label
    index: dict[str, int] = {}
    remap = np.array([index.setdefault(str(u), len(index)) for u in uniques], dtype=np.int64)
    labels = list(index)
    # two spellings of one label (case, spaces, invisible characters) are refused or merged
    merged: dict[str, str] = {}
    if spellings and label_kinds(column) not in source.later:
        firsts = _FirstRows([remap[codes] if len(labels) != len(remap) else codes])
        merged = check_spellings(
            labels,
            # where a label first appears, found only when a message names it
            lambda i: source.where(frame, firsts(i)[0]),
            source=source.name,
            column=column,
            error=ScoresError,
            merge=source.merge_labels,
            message=source.spelled or SPELLINGS,
        )
    if merged:
        labels, onto = _read_as(labels, merged)
        remap = onto[remap]
    dtype = np.int8 if len(labels) <= 127 else np.int16 if len(labels) <= 32767 else np.int32
    if len(labels) == len(remap):
        out = codes.astype(dtype, copy=False)
    else:
        out = remap.astype(dtype)[codes]
    return _Labels(out, labels)


#: Fewest comparisons of a kind (mated, or within-group non-mated) a group's rate rests on
#: before a warning: an FNMR from 30 mated comparisons moves by 3% with one of them.
FEW = 100
FEW_COMPARISONS = (
    "{source}: {count} (algorithm, group) rate(s) rest on fewer than {few} comparisons, "
    "so one comparison moves them by more than 1%: {cases}"
)
SUBJECT_IN_TWO_GROUPS = (
    "{source}: {count} subject(s) appear in more than one group, so their comparisons "
    "count for several groups (is the group a property of the comparison, not of the "
    "subject?): {cases}"
)


class ScoresWarning(DataWarning):
    """A score table was read, but some of its rates rest on little, or a subject belongs to
    two groups."""


#: Rows :func:`warn_thin` counts at a time.
_THIN_BLOCK = 1 << 18


def few_comparisons(source: str, algorithms, groups, counted: dict) -> str | None:
    """The :data:`FEW_COMPARISONS` message of the (algorithm, group) rates that rest on
    fewer than :data:`FEW` comparisons (none: None).  ``counted`` maps a kind of
    comparison (``"mated"``, ``"within-group non-mated"``) to its counts, algorithm by
    algorithm, group by group within one (a flat array); a count of 0 is no rate."""
    cases = []
    for kind, counts in counted.items():
        for k in np.flatnonzero((counts > 0) & (counts < FEW)):
            algorithm, group = algorithms[k // len(groups)], groups[k % len(groups)]
            cases.append(f"{algorithm!r}, {group!r}: {counts[k]} {kind}")
    if not cases:
        return None
    shown = "; ".join(cases[:5]) + ("; ..." if len(cases) > 5 else "")
    return FEW_COMPARISONS.format(source=source, count=len(cases), few=FEW, cases=shown)


def warn_thin(table: pd.DataFrame) -> None:
    """Warn (:class:`ScoresWarning`) when a group's FMR or FNMR rests on fewer than
    :data:`FEW` comparisons (:data:`FEW_COMPARISONS`), and when a subject appears in two
    groups (:data:`SUBJECT_IN_TWO_GROUPS`), with the numbers.

    The table is counted a block of rows at a time (:data:`_THIN_BLOCK`), with what is
    known of each subject (a group it is in, and whether it is in another): the memory of
    a block and of the subjects, not several times the table's (this runs on every score
    set read)."""
    source = table.attrs.get("source", "<DataFrame>")
    algorithms = table["algorithm"].cat.categories
    groups = table["group_1"].cat.categories
    codes = [table[c].array.codes for c in ("algorithm", "group_1", "group_2")]  # views
    mated = table["mated"].to_numpy(dtype=bool)
    size = len(algorithms) * len(groups)
    counted = {
        "mated": np.zeros(size, np.int64),
        "within-group non-mated": np.zeros(size, np.int64),
    }
    sides = [table[f"subject_{k}"].array.codes for k in (1, 2)] if "subject_1" in table else []
    subjects = table["subject_1"].cat.categories if sides else []
    first = np.full(len(subjects), -1, dtype=np.int64)  # a group each subject is in
    several = np.zeros(len(subjects), dtype=bool)  # in another too
    for lo in range(0, len(table), _THIN_BLOCK):
        a, g1, g2 = (c[lo : lo + _THIN_BLOCK].astype(np.int64) for c in codes)
        m = mated[lo : lo + _THIN_BLOCK]
        cell = a * len(groups) + g1
        counted["mated"] += np.bincount(cell[m], minlength=size)
        counted["within-group non-mated"] += np.bincount(cell[~m & (g1 == g2)], minlength=size)
        for side, g in zip(sides, (g1, g2), strict=False):
            s = side[lo : lo + _THIN_BLOCK].astype(np.int64)
            new = first[s] < 0
            first[s[new]] = g[new]  # one of the subject's groups, whichever row wrote last
            several[s[g != first[s]]] = True
    if (message := few_comparisons(source, algorithms, groups, counted)) is not None:
        warn(message, ScoresWarning)
    named = np.flatnonzero(several)
    if not len(named):
        return
    # the groups of the subjects named (at most 5), from a second look at their rows
    shown = named[:5]
    found = {int(x): set() for x in shown}
    for lo in range(0, len(table), _THIN_BLOCK):
        for side, group_codes in zip(sides, codes[1:], strict=True):
            s = side[lo : lo + _THIN_BLOCK]
            here = np.isin(s, shown)
            g = group_codes[lo : lo + _THIN_BLOCK]
            for subject, group in zip(s[here].tolist(), g[here].tolist(), strict=True):
                found[subject].add(group)
    text = "; ".join(
        f"{subjects[x]!r} in {[groups[g] for g in sorted(found[int(x)])]}" for x in shown
    ) + ("; ..." if len(named) > 5 else "")
    warn(SUBJECT_IN_TWO_GROUPS.format(source=source, count=len(named), cases=text), ScoresWarning)


def _one_spelling(
    table: pd.DataFrame, name: str, merge: bool, row_name, columns: list[str]
) -> pd.DataFrame:
    """The label columns of a score table read in chunks, with two spellings of one label
    refused (or merged) as :func:`validate` does row by row (:mod:`audit.tables.labels`),
    each named where it first appears by ``row_name(row)`` (its file and row there) and
    column (of the source's ``columns``).  A group's and a subject's labels are those of
    both sides; a group joining several attributes is checked attribute by attribute
    (:func:`joined_spellings`)."""
    from audit.tables.chunks import group_columns  # (it imports this module)

    attributes = table.attrs.get("attributes") or ("group",)
    sides_named = group_columns(columns, table.attrs.get("attributes"))
    sides = [c for c in ("group_1", "group_2") if c in table.columns]
    people = [c for c in SUBJECT_COLUMNS if c in table.columns]
    for column in ["algorithm", *sides[:1], *people[:1]]:
        values = table[column]
        labels = [str(c) for c in values.cat.categories]
        # of a group or a subject, both sides' (a label may first appear, or appear only,
        # on the second): views (.cat.codes would copy a byte a row)
        both = sides if column in sides else people if column in people else [column]
        held = [table[c].array.codes for c in both]
        names = sides_named if column in sides else both
        firsts = _FirstRows(held)
        if column in sides and len(attributes) > 1:
            merged = joined_spellings(
                labels,
                attributes,
                [f"{a}_1" in columns for a in attributes],
                lambda i, firsts=firsts: (firsts(i), row_name(firsts(i)[0]), firsts(i)[1]),
                source=name,
                merge=merge,
                message=SPELLINGS,
            )
        else:
            merged = check_spellings(
                labels,
                # a group's label named with the side's column: it may be on either
                lambda i, firsts=firsts, names=names: (
                    row_name(firsts(i)[0])
                    + ("" if len(set(names)) == 1 else f", column {names[firsts(i)[1]]!r}")
                ),
                source=name,
                column=column,
                error=ScoresError,
                merge=merge,
                column_of=lambda i, firsts=firsts, names=names: names[firsts(i)[1]],
            )
        if merged:  # labels read as others: codes onto the labels that remain
            keep, remap = _read_as(labels, merged)
            # the categories' own type kept (a group's and a subject's: pandas' strings)
            dtype = pd.CategoricalDtype(pd.Index(keep, dtype=values.cat.categories.dtype))
            for target, codes in zip(both, held, strict=True):
                codes = remap.astype(codes.dtype)[codes]
                table[target] = pd.Categorical.from_codes(codes, dtype=dtype, validate=False)
    return table


def arrow_frame(table) -> pd.DataFrame:
    """A pyarrow Table or RecordBatch as a DataFrame, text columns as categoricals.

    Text columns are dictionary-encoded in Arrow, so pandas never holds one
    Python string per row; numbers stay as stored (float32 scores stay float32).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = {}
    for name, column in zip(table.schema.names, table.columns, strict=True):
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            column = pc.dictionary_encode(column)
        columns[name] = column
    encoded = pa.table(columns) if isinstance(table, pa.Table) else pa.record_batch(columns)
    return encoded.to_pandas(split_blocks=True, self_destruct=isinstance(table, pa.Table))


def _is_parquet(source) -> bool:
    """A Parquet file, a folder (of Parquet files) or a glob."""
    if not isinstance(source, str | os.PathLike):
        return False
    text = str(source)
    return tables.is_parquet_name(text) or Path(text).is_dir() or tables.is_glob(text)


def refuse_partition(
    names: Sequence[str], source: str, attributes: Sequence[str] | None, ignore: Sequence[str]
) -> None:
    """Refuse a Parquet file lacking a column that its folder's name gives (``group=F/``,
    a Hive partition, which audit does not read) with :data:`PARTITIONED`, where the lack
    would be said as the file's own."""
    known = {"algorithm", "score", "mated", *SUBJECT_COLUMNS}
    for name in attributes if attributes is not None else ("group",):
        known |= {name, f"{name}_1", f"{name}_2"}
    for part in Path(source).parent.parts:
        key, equals, _ = part.partition("=")
        if equals and key in known and key not in names and key not in ignore:
            raise ScoresError(PARTITIONED.format(source=source, column=key, folder=part))


def _layout(
    columns: list[str], source_name: str, attributes: Sequence[str] | None, ignore: Sequence[str]
) -> tuple[tuple[str, ...], list[bool], list[str]]:
    """Check the column names; return the attribute names, whether each is given per
    side, and the subject columns."""
    if attributes is not None and len(attributes) == 0:  # no group at all: nothing compared
        raise refuse("attributes", [], "a non-empty list of the attribute columns or none")
    if len(set(columns)) != len(columns):
        duplicate = next(c for c in columns if columns.count(c) > 1)
        raise ScoresError(DUPLICATE_COLUMN.format(source=source_name, column=duplicate))
    for column in ignore:
        if column not in columns:
            raise ScoresError(
                IGNORED_MISSING.format(source=source_name, column=column, columns=columns)
            )
    ignored = tuple(ignore)
    columns = [c for c in columns if c not in ignored]  # as if they were not there

    def missing(column: str, hint: str = "") -> Exception:
        return tables.missing_column(source_name, column, ScoresError, hint, ignored)

    for required in ("algorithm", "score", "mated"):
        if required not in columns:
            raise missing(
                required,
                " (the system that produced each score)" if required == "algorithm" else "",
            )
    names = tuple(attributes) if attributes is not None else ("group",)
    group_columns: list[str] = []
    two_sided: list[bool] = []
    for name in names:
        single = name in columns
        sides = f"{name}_1" in columns or f"{name}_2" in columns
        if single and sides:
            raise ScoresError(
                MIXED_GROUP_COLUMNS.format(
                    source=source_name, single=name, sides=[f"{name}_1", f"{name}_2"]
                )
            )
        if sides:
            for column in (f"{name}_1", f"{name}_2"):
                if column not in columns:
                    raise missing(column, " (a group given per side needs both sides)")
            group_columns += [f"{name}_1", f"{name}_2"]
            two_sided.append(True)
        elif single:
            group_columns.append(name)
            two_sided.append(False)
        else:
            hint = (
                " (give a group column, group_1 and group_2, or attribute columns named with "
                "attributes=[...], command line --attributes)"
                if attributes is None
                else ""
            )
            raise missing(name, hint)
    subjects = [c for c in SUBJECT_COLUMNS if c in columns]
    if len(subjects) == 1:
        raise missing(
            next(c for c in SUBJECT_COLUMNS if c not in columns),
            " (subjects are given for both sides)",
        )
    known = {"algorithm", "score", "mated", *group_columns, *subjects}
    unknown = [c for c in columns if c not in known]
    if unknown:
        raise ScoresError(UNKNOWN_COLUMNS.format(source=source_name, columns=unknown))
    return names, two_sided, subjects


def check_columns(
    source: str | os.PathLike,
    *,
    attributes: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
    encoding: str | None = None,
) -> list[str]:
    """The column names of a score file, checked as :func:`read_scores` checks them,
    reading only its header (CSV, in ``encoding``, as :func:`read_scores` reads it) or
    schema (Parquet); returns the names."""
    name = str(source)
    try:
        if tables.is_parquet_name(name):
            import pyarrow.parquet as pq

            if encoding is not None:
                raise ScoresError(tables.ENCODING_NOT_TEXT.format(source=name, encoding=encoding))
            columns = tables.parquet_names(pq.read_schema(source))
            refuse_partition(columns, name, attributes, ignore)
        else:
            columns = tables.read_header(source, ScoresError, encoding)
    except (OSError, ImportError, ValueError) as reason:
        if isinstance(reason, ScoresError):
            raise
        raise ScoresError(CANNOT_READ.format(source=name, reason=reason)) from reason
    if len(set(columns)) != len(columns):
        duplicate = next(c for c in columns if columns.count(c) > 1)
        raise ScoresError(DUPLICATE_COLUMN.format(source=name, column=duplicate))
    _layout(columns, name, attributes, ignore)
    return columns


@validate_params(
    "higher_is_match",
    "attributes",
    "merge_labels",
    "encoding",
    ignore=Names(empty=True),
    source=SOURCE,
)
def read_scores(
    source: str | os.PathLike | pd.DataFrame,
    *,
    higher_is_match: bool = True,
    attributes: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
    merge_labels: bool = False,
    encoding: str | None = None,
) -> pd.DataFrame:
    """Read comparison scores from a CSV/Parquet file or a DataFrame, validated.

    Parameters
    ----------
    source
        Path of a CSV file, a Parquet file, a folder of Parquet files or a glob
        (``"run-42/*.parquet"``, read as one table, file after file), or a
        DataFrame, with columns ``algorithm``, ``score``, ``mated`` and the group
        (see the module docstring).  Parquet is read row group by row group into
        arrays of the final size, labels as integer codes: about the size of the
        result and one row group in memory.
    higher_is_match
        True for similarity scores (a match when ``score >= threshold``), False
        for distances (a match when ``score <= threshold``).
    attributes
        Names of attribute columns making up the group (e.g.
        ``["gender", "nationality"]``); the group label is their values joined
        by ``"."``, so with several attributes a value containing ``"."`` is
        refused (a single attribute, or a ``group`` column, may hold dots).  Each attribute is one column ``<name>`` or two,
        ``<name>_1`` and ``<name>_2``.  Default: a ``group`` column (or
        ``group_1`` and ``group_2``).
    ignore
        Columns present in the source that are to be ignored (anything else
        unknown is refused).
    merge_labels
        Labels that differ only by case, white space, an invisible character or
        Unicode normalisation are refused by default, naming both spellings;
        ``True`` reads them as the first spelling, with a warning for each
        (:mod:`audit.tables.labels`).
    encoding
        The text encoding of a CSV; UTF-8 by default, a file in another refused
        naming it (:func:`audit.tables.common.read_table`).

    Returns
    -------
    pandas.DataFrame
        One row per comparison in input order: ``algorithm`` (categorical),
        ``score`` (float32 or float64 as given; other numbers as float64),
        ``mated`` (bool), ``group_1`` and
        ``group_2`` (categoricals over the same groups, in order of first
        appearance), and ``subject_1``/``subject_2`` when given.  ``attrs`` holds ``higher_is_match``, ``attributes`` and
        ``source``.

    Raises
    ------
    ScoresError
        With a message naming the file, row (CSV line) and column of the first
        problem.

    Examples
    --------
    >>> import pandas as pd
    >>> table = read_scores(pd.DataFrame({
    ...     "algorithm": ["a", "a", "a"], "score": [0.9, 0.2, 0.4],
    ...     "mated": [True, False, False], "group": ["F", "F", "M"]}))
    >>> table[["score", "mated", "group_1", "group_2"]]
       score  mated group_1 group_2
    0    0.9   True       F       F
    1    0.2  False       F       F
    2    0.4  False       M       M
    """
    if _is_parquet(source):
        from audit.tables.chunks import Options, read_parquet_scores  # (it imports this module)

        if Path(source).is_file():
            tables.check_parquet(Path(source), str(source), ScoresError)
        named: list = []
        # (as the streaming engine gives them: tuples, the options a file's check caches by)
        options = Options(
            higher_is_match, None if attributes is None else tuple(attributes), tuple(ignore)
        )
        table = read_parquet_scores(source, options, named)
        table = _one_spelling(table, str(source), merge_labels, named[0], named[1])
    else:
        frame, where = tables.read_table(source, ScoresError, encoding=encoding)
        where.merge_labels = merge_labels
        table = validate(
            frame, where, higher_is_match=higher_is_match, attributes=attributes, ignore=ignore
        )
    warn_thin(table)
    return table


def validate(
    frame: pd.DataFrame,
    where: _Source,
    *,
    higher_is_match: bool = True,
    attributes: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
) -> pd.DataFrame:
    """:func:`read_scores` of a frame already read from ``where`` (for readers of
    chunks, which name their rows by the frame's index)."""
    columns = [str(c) for c in frame.columns]
    if len(set(columns)) != len(columns):
        duplicate = next(c for c in columns if columns.count(c) > 1)
        raise ScoresError(DUPLICATE_COLUMN.format(source=where.name, column=duplicate))
    frame.columns = columns
    names, two_sided, subjects = _layout(columns, where.name, attributes, ignore)
    if len(frame) == 0:
        raise ScoresError(EMPTY.format(source=where.name))

    algorithm = _label_values(frame, "algorithm", where)
    score = _score_values(frame, where)
    mated = _mated_values(frame, where)

    read: dict[str, _Labels] = {}  # an attribute given once a row is read once, for both sides

    def parts(side: str) -> list[_Labels]:
        values = []
        for name, sided in zip(names, two_sided, strict=False):
            column = f"{name}{side}" if sided else name
            if column in read:
                values.append(read[column])
                continue
            # checked below, attribute by attribute in the order given (a label given per
            # side: of both sides together), as a reader of chunks checks them
            value = read[column] = _label_values(frame, column, where, spellings=False)
            if len(names) > 1:  # joined by ".", later split on it: a dot would be ambiguous
                dotted = np.array(["." in label for label in value.labels], dtype=bool)
                if dotted.any():
                    at, more = _first(dotted[value.codes])
                    raise ScoresError(
                        DOTTED_ATTRIBUTE.format(
                            where=where.where(frame, at),
                            column=column,
                            value=value.at(at),
                            attributes=list(names),
                            more=where.more(more),
                        )
                    )
            values.append(value)
        return values

    firsts, seconds = (parts("_1"), parts("_2")) if any(two_sided) else (parts(""),) * 2
    for k, (name, sided) in enumerate(zip(names, two_sided, strict=True)):
        columns = (f"{name}_1", f"{name}_2") if sided else (name, name)
        firsts[k], seconds[k] = _one_spelling_of_sides(firsts[k], seconds[k], frame, where, columns)
    side_1, side_2 = (_join(firsts), _join(seconds)) if any(two_sided) else (_join(firsts),) * 2
    group_1, group_2 = _sides(
        side_1, side_2, mated, MATED_CROSS_GROUP, frame, where, joined=len(names) > 1
    )
    table = pd.DataFrame(
        {
            "algorithm": pd.Categorical.from_codes(
                algorithm.codes, dtype=pd.CategoricalDtype(algorithm.labels, ordered=False)
            ),
            "score": score,
            "mated": mated,
            "group_1": group_1,
            "group_2": group_2,
        },
        copy=False,
    )
    if subjects:
        first, second = (_label_values(frame, c, where, spellings=False) for c in SUBJECT_COLUMNS)
        first, second = _one_spelling_of_sides(first, second, frame, where, SUBJECT_COLUMNS)
        table["subject_1"], table["subject_2"] = _sides(
            first, second, mated, MATED_TWO_SUBJECTS, frame, where
        )
    table.attrs["higher_is_match"] = bool(higher_is_match)
    table.attrs["attributes"] = tuple(attributes) if attributes is not None else ()
    table.attrs["source"] = where.name
    return table


def _sides(
    first: _Labels,
    second: _Labels,
    mated: np.ndarray,
    message: str,
    frame: pd.DataFrame,
    where: _Source,
    joined: bool = False,
) -> tuple[pd.Categorical, pd.Categorical]:
    """The labels of the two sides of each comparison as categoricals over one set of
    categories (in order of first appearance, first side then second); a mated pair
    with two different labels is refused with ``message``, unless they are two
    spellings of one label (``joined``: attribute by attribute) that the reader of a
    chunk checks over every chunk together (``where.later``)."""
    index = {label: i for i, label in enumerate(first.labels)}
    for label in second.labels:
        index.setdefault(label, len(index))
    categories = list(index)
    dtype = (
        np.int8 if len(categories) <= 127 else np.int16 if len(categories) <= 32767 else np.int32
    )
    codes_1 = first.codes.astype(dtype, copy=False)
    if second is first:
        codes_2 = codes_1
    else:
        remap = np.array([index[label] for label in second.labels], dtype=dtype)
        identity = len(remap) == 0 or (remap == np.arange(len(remap))).all()
        codes_2 = second.codes.astype(dtype, copy=False) if identity else remap[second.codes]
        differ = codes_1 != codes_2
        differ &= mated
        kind = "subjects" if message is MATED_TWO_SUBJECTS else "groups"
        if differ.any() and kind in where.later:
            # two spellings of one label ("M", "m") are one label to be, or a refusal of
            # their own, once checked over every chunk together: not told apart here
            # (the keys of the labels of those pairs only: a chunk's subjects are many)
            rows = np.flatnonzero(differ)
            pairs = np.unique(np.stack([codes_1[rows], codes_2[rows]]), axis=1)
            keyed = {c: _key(categories[c], joined) for c in np.unique(pairs).tolist()}
            apart = {(a, b) for a, b in pairs.T.tolist() if keyed[a] != keyed[b]}
            differ[rows] = [
                (a, b) in apart
                for a, b in zip(codes_1[rows].tolist(), codes_2[rows].tolist(), strict=True)
            ]
        if differ.any():
            at, more = _first(differ)
            raise ScoresError(
                message.format(
                    where=where.where(frame, at),
                    first=categories[codes_1[at]],
                    second=categories[codes_2[at]],
                    more=where.more(more),
                )
            )
    category_dtype = pd.CategoricalDtype(pd.Index(categories, dtype="string"), ordered=False)
    return (
        pd.Categorical.from_codes(codes_1, dtype=category_dtype, validate=False),
        pd.Categorical.from_codes(codes_2, dtype=category_dtype, validate=False),
    )


def _read_as(labels: list[str], merged: dict[str, str]) -> tuple[list[str], np.ndarray]:
    """The labels that remain once each label of ``merged`` is read as the one it maps
    to (in order of first appearance), and where each of ``labels`` is among them."""
    kept = list(dict.fromkeys(merged.get(label, label) for label in labels))
    at = {label: i for i, label in enumerate(kept)}
    return kept, np.array([at[merged.get(label, label)] for label in labels], dtype=np.int64)


def _key(label: str, joined: bool) -> str | tuple[str, ...]:
    """The spelling-free form of a label (:func:`~audit.tables.labels.label_key`), of
    each attribute of a label joining several by "." where ``joined`` (kept apart: the
    form of "A．B" holds a ".")."""
    return tuple(map(label_key, label.split("."))) if joined else label_key(label)


def joined_spellings(
    labels: list[str],
    attributes: Sequence[str],
    sided: Sequence[bool],
    first_of: Callable[[int], tuple],
    *,
    source: str,
    merge: bool,
    message: str,
) -> dict[str, str]:
    """Spellings of one label in groups that join several attributes by "." (a score
    set read in chunks: ``"Black.F"``), refused or merged attribute by attribute, as a
    table read whole checks each attribute's columns: ``"Black .F"`` and ``"black.F"``
    are the race "Black" spelled two ways, while ``"A．B.C"`` and ``"A.B．C"`` are two
    groups.  ``first_of(i)`` tells where ``labels[i]`` first appears: an order, the
    row as messages name it, and the side (0 or 1); an attribute given per side
    (``sided``) is named by the side's column.  Returns each group read as another
    (empty unless ``merge``)."""
    parts = [label.split(".") for label in labels]
    for k, attribute in enumerate(attributes):
        held: dict[str, list[int]] = {}
        for i, p in enumerate(parts):
            held.setdefault(p[k], []).append(i)
        distinct = list(held)
        columns = (f"{attribute}_1", f"{attribute}_2") if sided[k] else (attribute, attribute)

        def first(j: int, held=held, distinct=distinct) -> tuple:
            return min((first_of(i) for i in held[distinct[j]]), key=lambda f: f[0])

        def named(j: int, first=first, columns=columns) -> str:
            _, row, side = first(j)
            return row if columns[0] == columns[1] else f"{row}, column {columns[side]!r}"

        merged = check_spellings(
            distinct,
            named,
            source=source,
            column=columns[0],
            error=ScoresError,
            merge=merge,
            message=message,
            column_of=lambda j, first=first, columns=columns: columns[first(j)[2]],
        )
        if merged:
            parts = [[merged.get(x, x) if m == k else x for m, x in enumerate(p)] for p in parts]
    joined = [".".join(p) for p in parts]
    return {label: new for label, new in zip(labels, joined, strict=True) if new != label}


class _FirstRows:
    """The first row where label ``i`` is held by any of some code arrays (``held``,
    each a column's codes over the same labels, ``-1`` for none), and which array holds
    it there (the first, where several do): found for every label at once, the first
    time a message asks (one sort of each array, where a search a label took a pass
    over the rows: minutes, for many labels)."""

    def __init__(self, held: list[np.ndarray]):
        self.held = held
        self.found: dict[int, tuple[int, int]] | None = None

    def __call__(self, i: int) -> tuple[int, int]:
        if self.found is None:
            self.found = {}
            for k, codes in enumerate(self.held):
                present, rows = np.unique(codes, return_index=True)
                for code, row in zip(present.tolist(), rows.tolist(), strict=True):
                    if code >= 0 and (row, k) < self.found.get(code, (len(codes), k)):
                        self.found[code] = (row, k)
        return self.found[i]


def _one_spelling_of_sides(
    first: _Labels,
    second: _Labels,
    frame: pd.DataFrame,
    where: _Source,
    columns: tuple[str, str],
) -> tuple[_Labels, _Labels]:
    """The two sides' labels (of ``columns``) with two spellings of one label refused
    (or merged, with ``where.merge_labels``, into the one that comes first, the first
    side's labels before the second's) as :func:`_label_values` does within a column,
    the two sides together: "M" in group_1 and "m" in group_2 are one group, and so
    are they in one column.  Each spelling is named at the row and column where it
    first appears.  ``first`` and ``second`` one object: one column giving both sides,
    checked alone (and returned as one object)."""
    if label_kinds(columns[0]) in where.later:
        return first, second
    one = first is second
    labels = list(dict.fromkeys([*first.labels, *second.labels]))
    index = {label: i for i, label in enumerate(labels)}
    # each side's codes over the labels of both
    held = [
        np.array([index[x] for x in side.labels], dtype=np.int64)[side.codes]
        for side in ((first,) if one else (first, second))
    ]
    firsts = _FirstRows(held)

    def named(i: int) -> str:
        row, side = firsts(i)
        told = where.where(frame, row)
        return told if columns[0] == columns[1] else f"{told}, column {columns[side]!r}"

    merged = check_spellings(
        labels,
        named,
        source=where.name,
        column=columns[0],
        error=ScoresError,
        merge=where.merge_labels,
        message=where.spelled or SPELLINGS,
        column_of=lambda i: columns[firsts(i)[1]],
    )
    if not merged:
        return first, second

    def read_as(side: _Labels) -> _Labels:
        kept, remap = _read_as(side.labels, merged)
        return _Labels(remap.astype(side.codes.dtype)[side.codes], kept)

    if one:
        read = read_as(first)
        return read, read
    return read_as(first), read_as(second)


def _join(parts: list[_Labels]) -> _Labels:
    """Labels of several attributes joined by ``"."``, combined on their codes."""
    if len(parts) == 1:
        return parts[0]
    combined = np.zeros(len(parts[0].codes), dtype=np.int64)
    for part in parts:
        combined *= len(part.labels)
        combined += part.codes
    codes, uniques = pd.factorize(combined, sort=False)
    labels = []
    for value in uniques.tolist():
        names = []
        for part in reversed(parts):
            value, code = divmod(value, len(part.labels))
            names.append(part.labels[code])
        labels.append(".".join(reversed(names)))
    return _Labels(codes, labels)
