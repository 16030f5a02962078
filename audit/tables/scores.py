"""Reader of comparison-score tables: one row per comparison, validated strictly.

See :mod:`audit.scores` for the conventions (decision rule, operating point,
per-group rates) that the reader prepares for.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import pandas as pd

from audit.tables import common as tables
from audit.tables.common import Source as _Source
from audit.tables.common import blank as _blank
from audit.tables.common import first as _first
from audit.tables.common import more as _more

# Error messages: constants, so that tests can check them exactly.
CANNOT_READ = tables.CANNOT_READ
EMPTY = "{source}: the score table has no rows"
MISSING_COLUMN = "{source}: column {column!r} is missing{hint}"
UNKNOWN_COLUMNS = (
    "{source}: unknown column(s) {columns}; expected algorithm, score, mated and the "
    "group column(s). Rename or remove them, or name them in ignore=[...] "
    "(nothing is dropped silently)"
)
DUPLICATE_COLUMN = tables.DUPLICATE_COLUMN
MATED_TWO_SUBJECTS = (
    "{where}: a mated comparison has subject {first!r} on one side and {second!r} on the "
    "other; both sides of a mated pair are the same person{more}"
)
SUBJECT_COLUMNS = ("subject_1", "subject_2")
MIXED_GROUP_COLUMNS = (
    "{source}: give the group either as one column {single!r} or as two columns {sides}, not both"
)
MISSING_VALUE = "{where}, column {column!r}: value is missing{more}"
NOT_NUMERIC = "{where}, column {column!r}: {value!r} is not a number{more}"
NOT_FINITE = "{where}, column {column!r}: {value!r} is not finite{more}"
BOOLEAN = tables.BOOLEAN
COMPLEX = tables.COMPLEX
UNDERFLOW = tables.UNDERFLOW
OVERFLOW = tables.OVERFLOW
BAD_MATED = "{where}, column 'mated': {value!r} is not a mated flag (True/False or 1/0){more}"
EMPTY_LABEL = tables.EMPTY_LABEL
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
BAD_TARGET = "target FMR must lie in (0, 1], got {value!r}"
UNKNOWN_ALGORITHM = "unknown algorithm {name!r}; the scores hold {names}"

TRUE_WORDS = frozenset({"true", "1", "1.0", "t", "yes"})
FALSE_WORDS = frozenset({"false", "0", "0.0", "f", "no"})

#: Default grid of target FMRs for :func:`sweep`: 0.1% to 10%, 10 per decade.
DEFAULT_TARGETS = np.logspace(-3, -1, 21)


class ScoresError(ValueError):
    """The score table is malformed; the message names file, row and column."""


# --------------------------------------------------------------------------- reading


def _score_values(frame: pd.DataFrame, source: _Source) -> np.ndarray:
    tables.refuse_non_real(frame, "score", source, ScoresError)
    raw = frame["score"]
    if pd.api.types.is_float_dtype(raw.dtype) or pd.api.types.is_integer_dtype(raw.dtype):
        values = raw.to_numpy(dtype="float64", na_value=np.nan)
        missing = np.isnan(values)
        if missing.any():
            at, more = _first(missing)
            raise ScoresError(
                MISSING_VALUE.format(
                    where=source.where(frame, at), column="score", more=_more(more)
                )
            )
    else:
        blank = _blank(raw)
        if blank.any():
            at, more = _first(blank)
            raise ScoresError(
                MISSING_VALUE.format(
                    where=source.where(frame, at), column="score", more=_more(more)
                )
            )
        values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
        bad = np.isnan(values)
        if bad.any():
            text = raw.astype("string").str.strip().str.lower()
            spelled = text.isin(["nan", "-nan", "+nan", "na", "n/a", "null", "none"]).to_numpy(bool)
            if (bad & ~spelled).any():
                at, more = _first(bad & ~spelled)
                raise ScoresError(
                    NOT_NUMERIC.format(
                        where=source.where(frame, at),
                        column="score",
                        value=raw.iloc[at],
                        more=_more(more),
                    )
                )
            at, more = _first(bad)
            raise ScoresError(
                MISSING_VALUE.format(
                    where=source.where(frame, at), column="score", more=_more(more)
                )
            )
    tables.refuse_rounded(frame, "score", values, source, ScoresError)
    infinite = np.isinf(values)
    if infinite.any():
        at, more = _first(infinite)
        value = raw.iloc[at]
        value = value.item() if isinstance(value, np.generic) else value
        raise ScoresError(
            NOT_FINITE.format(
                where=source.where(frame, at), column="score", value=value, more=_more(more)
            )
        )
    return values


def _mated_values(frame: pd.DataFrame, source: _Source) -> np.ndarray:
    raw = frame["mated"]
    if pd.api.types.is_bool_dtype(raw.dtype) and not raw.isna().any():
        return raw.to_numpy(dtype=bool)
    blank = _blank(raw)
    if blank.any():
        at, more = _first(blank)
        raise ScoresError(
            MISSING_VALUE.format(where=source.where(frame, at), column="mated", more=_more(more))
        )
    text = raw.astype(str).str.strip().str.lower()
    true = text.isin(TRUE_WORDS).to_numpy(bool)
    false = text.isin(FALSE_WORDS).to_numpy(bool)
    bad = ~(true | false)
    if bad.any():
        at, more = _first(bad)
        raise ScoresError(
            BAD_MATED.format(where=source.where(frame, at), value=raw.iloc[at], more=_more(more))
        )
    return true


def _label_values(frame: pd.DataFrame, column: str, source: _Source) -> pd.Series:
    return tables.labels(frame, column, source, ScoresError)


def read_scores(
    source: str | os.PathLike | pd.DataFrame,
    *,
    higher_is_match: bool = True,
    attributes: Sequence[str] | None = None,
    ignore: Sequence[str] = (),
) -> pd.DataFrame:
    """Read comparison scores from a CSV/Parquet file or a DataFrame, validated.

    Parameters
    ----------
    source
        Path of a CSV (or ``.parquet``) file, or a DataFrame, with columns
        ``algorithm``, ``score``, ``mated`` and the group (see the module
        docstring).
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

    Returns
    -------
    pandas.DataFrame
        One row per comparison in input order: ``algorithm`` (categorical),
        ``score`` (float64, as given), ``mated`` (bool), ``group_1`` and
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
    frame, where = tables.read_table(source, ScoresError)
    columns = [str(c) for c in frame.columns]
    if len(set(columns)) != len(columns):
        duplicate = next(c for c in columns if columns.count(c) > 1)
        raise ScoresError(DUPLICATE_COLUMN.format(source=where.name, column=duplicate))
    frame.columns = columns
    for required in ("algorithm", "score", "mated"):
        if required not in columns:
            hint = " (the system that produced each score)" if required == "algorithm" else ""
            raise ScoresError(MISSING_COLUMN.format(source=where.name, column=required, hint=hint))
    names = tuple(attributes) if attributes is not None else ("group",)
    group_columns: list[str] = []
    two_sided: list[bool] = []
    for name in names:
        single = name in columns
        sides = f"{name}_1" in columns or f"{name}_2" in columns
        if single and sides:
            raise ScoresError(
                MIXED_GROUP_COLUMNS.format(
                    source=where.name, single=name, sides=[f"{name}_1", f"{name}_2"]
                )
            )
        if sides:
            for column in (f"{name}_1", f"{name}_2"):
                if column not in columns:
                    raise ScoresError(
                        MISSING_COLUMN.format(
                            source=where.name,
                            column=column,
                            hint=" (a group given per side needs both sides)",
                        )
                    )
            group_columns += [f"{name}_1", f"{name}_2"]
            two_sided.append(True)
        elif single:
            group_columns.append(name)
            two_sided.append(False)
        else:
            hint = (
                " (give a group column, group_1 and group_2, or attribute columns and "
                "read_scores(..., attributes=[...]))"
                if attributes is None
                else ""
            )
            raise ScoresError(MISSING_COLUMN.format(source=where.name, column=name, hint=hint))
    subjects = [c for c in SUBJECT_COLUMNS if c in columns]
    if len(subjects) == 1:
        missing = next(c for c in SUBJECT_COLUMNS if c not in columns)
        raise ScoresError(
            MISSING_COLUMN.format(
                source=where.name, column=missing, hint=" (subjects are given for both sides)"
            )
        )
    known = {"algorithm", "score", "mated", *group_columns, *subjects, *ignore}
    unknown = [c for c in columns if c not in known]
    if unknown:
        raise ScoresError(UNKNOWN_COLUMNS.format(source=where.name, columns=unknown))
    if len(frame) == 0:
        raise ScoresError(EMPTY.format(source=where.name))

    algorithm = _label_values(frame, "algorithm", where)
    score = _score_values(frame, where)
    mated = _mated_values(frame, where)

    def parts(side: str) -> list[pd.Series]:
        values = []
        for name, sided in zip(names, two_sided, strict=False):
            column = f"{name}{side}" if sided else name
            value = _label_values(frame, column, where)
            if len(names) > 1:  # joined by ".", later split on it: a dot would be ambiguous
                dotted = value.str.contains(".", regex=False).to_numpy(bool)
                if dotted.any():
                    at, more = _first(dotted)
                    raise ScoresError(
                        DOTTED_ATTRIBUTE.format(
                            where=where.where(frame, at),
                            column=column,
                            value=value.iloc[at],
                            attributes=list(names),
                            more=_more(more),
                        )
                    )
            values.append(value)
        return values

    if any(two_sided):
        side_1, side_2 = _join(parts("_1")), _join(parts("_2"))
    else:
        side_1 = side_2 = _join(parts(""))
    group_1, group_2 = _sides(side_1, side_2, mated, MATED_CROSS_GROUP, frame, where)
    table = pd.DataFrame(
        {
            "algorithm": pd.Categorical(algorithm.to_numpy(), categories=pd.unique(algorithm)),
            "score": score,
            "mated": mated,
            "group_1": group_1,
            "group_2": group_2,
        }
    )
    if subjects:
        first, second = (_label_values(frame, c, where) for c in SUBJECT_COLUMNS)
        table["subject_1"], table["subject_2"] = _sides(
            first, second, mated, MATED_TWO_SUBJECTS, frame, where
        )
    table.attrs["higher_is_match"] = bool(higher_is_match)
    table.attrs["attributes"] = tuple(attributes) if attributes is not None else ()
    table.attrs["source"] = where.name
    return table


def _sides(
    first: pd.Series,
    second: pd.Series,
    mated: np.ndarray,
    message: str,
    frame: pd.DataFrame,
    where: _Source,
) -> tuple[pd.Categorical, pd.Categorical]:
    """The labels of the two sides of each comparison as categoricals over one set of
    categories (in order of first appearance); a mated pair with two different labels
    is refused with ``message``."""
    differ = (first != second).to_numpy(bool) & mated
    if differ.any():
        at, more = _first(differ)
        raise ScoresError(
            message.format(
                where=where.where(frame, at),
                first=first.iloc[at],
                second=second.iloc[at],
                more=_more(more),
            )
        )
    n = len(first)
    codes, categories = pd.factorize(pd.concat([first, second], ignore_index=True), sort=False)
    dtype = pd.CategoricalDtype(pd.Index(categories, dtype="string"), ordered=False)
    return (
        pd.Categorical.from_codes(codes[:n], dtype=dtype),
        pd.Categorical.from_codes(codes[n:], dtype=dtype),
    )


def _join(parts: list[pd.Series]) -> pd.Series:
    label = parts[0].reset_index(drop=True)
    for part in parts[1:]:
        label = label + "." + part.reset_index(drop=True)
    return label
