"""From comparison scores to per-group error rates at an operating point.

Vendors and test labs hold comparison scores, not finished rate tables.  This
module reads a long table of scores, validates it as strictly as
:mod:`audit.rates` validates rates, reduces it to per-group **sufficient
statistics** and turns those into the tidy rates table that every rate-based
measure, the FFMC audit and the Pareto frontier consume.

Score table
-----------
One row per comparison, columns:

* ``algorithm`` -- the system that produced the score;
* ``score`` -- a finite number; ``higher_is_match=True`` (similarity, default)
  or ``False`` (distance: lower means a match);
* ``mated`` -- True for a mated (genuine, same person) comparison, False for a
  non-mated (impostor) one; ``True``/``False``/``1``/``0`` are accepted;
* the demographic group, either one label for both sides (``group``, or one
  column per attribute named with ``attributes=[...]``) or one label per side
  (``group_1`` and ``group_2``, or ``<attribute>_1`` and ``<attribute>_2``), so
  that cross-group non-mated pairs can be represented.  A mated pair must have
  the same group on both sides;
* optionally the subjects compared, ``subject_1`` and ``subject_2`` (e.g.
  enrolment and probe speaker), kept as they are for a bootstrap that resamples
  subjects (:func:`audit.uncertainty.score_bootstrap`).  A mated pair must have
  the same subject on both sides.

Conventions
-----------
Decision rule
    With similarity scores a comparison is declared a match when
    ``score >= threshold``; with distances when ``score <= threshold``
    (ISO/IEC 19795-1).  ``FMR(t)`` is the fraction of non-mated comparisons
    declared a match, ``FNMR(t)`` the fraction of mated ones declared a
    non-match.
Operating point at a target FMR
    The threshold is set on the **pooled** non-mated scores of an algorithm
    (within-group and cross-group pairs alike).  Among all thresholds whose
    pooled FMR does not exceed the target, the most permissive one is taken
    (the lowest similarity threshold), so that the FNMR is as small as the
    constraint allows.  Because FMR is a step function, the attained FMR is the
    largest attainable value ``k / N <= target`` (``k`` false matches among
    ``N`` non-mated comparisons): **it never exceeds the target**, and is
    recorded next to it (``attained_fmr``) because it may fall below it --
    for instance to 0 when ``target * N < 1``.  Ties are never split: all
    comparisons with the same score get the same decision, so a block of tied
    non-mated scores that would overshoot the target is rejected entirely.
    The reported threshold is the smallest observed score (of any comparison of
    that algorithm) that is accepted, so it reads as a real score value; when
    every observed score must be rejected it is the next float above the
    largest score.
Per-group rates
    A group's FNMR is computed on its mated comparisons; its FMR on its
    **within-group** non-mated comparisons (both sides in the group), as in the
    NIST FRVT Part 3 tables.  Cross-group non-mated comparisons enter the pooled
    FMR that sets the threshold (and the global rates of SED_G), not a group's
    FMR.  A group without mated or without within-group non-mated comparisons
    has an undefined rate and is refused with a :class:`ScoresError`.

Sufficient statistics and the streaming seam
--------------------------------------------
Everything downstream of :func:`score_stats` reads only a :class:`ScoreStats`:
per (algorithm, group) the sorted mated scores and the sorted within-group
non-mated scores, and per algorithm the sorted cross-group non-mated scores.
Rates at any threshold are then two binary searches per group
(:meth:`ScoreStats.counts`), and the threshold at a target FMR is an order
statistic of the pooled non-mated scores, found by binary searches and
position slices on the same sorted arrays (:func:`_operating_points`).
Building the statistics in memory (:func:`score_stats_from_arrays`) costs
about one ``numpy.sort`` of the scores and one extra copy of them; the 100
operating points of a sweep then cost a few milliseconds, whatever the size
(``benchmarks/bench_scores.py`` measures both).

**The seam is the** :class:`ScoreStats` **constructor.**  A streaming or
distributed backend that cannot hold the scores in memory needs only to
produce, per segment, a sorted one-dimensional float64 array in match
orientation (distances negated, as described in :class:`ScoreStats`) -- for
instance a
``numpy.memmap`` written by an external merge sort, or by merging sorted
chunks produced on several machines -- and pass the lists to
``ScoreStats(algorithms=..., groups=..., mated=..., nonmated=..., cross=...,
higher_is_match=...)``: every function below then runs unchanged, reading
those arrays only through ``len``, ``searchsorted``, element and slice access
and strided samples (``tests/test_scores.py`` checks this with memory maps).
A backend that keeps fine histograms instead of sorted scores would
implement :meth:`ScoreStats.counts` and the threshold search on bin edges,
with a loss of resolution stated by its bin width.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from audit import tables
from audit.tables import Source as _Source
from audit.tables import blank as _blank
from audit.tables import first as _first
from audit.tables import more as _more

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
    "{source}: give the group either as one column {single!r} or as two columns "
    "{sides}, not both"
)
MISSING_VALUE = "{where}, column {column!r}: value is missing{more}"
NOT_NUMERIC = "{where}, column {column!r}: {value!r} is not a number{more}"
NOT_FINITE = "{where}, column {column!r}: {value!r} is not finite{more}"
BAD_MATED = (
    "{where}, column 'mated': {value!r} is not a mated flag (True/False or 1/0){more}"
)
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
    raw = frame["score"]
    if pd.api.types.is_float_dtype(raw.dtype) or pd.api.types.is_integer_dtype(raw.dtype):
        values = raw.to_numpy(dtype="float64", na_value=np.nan)
        missing = np.isnan(values)
        if missing.any():
            at, more = _first(missing)
            raise ScoresError(MISSING_VALUE.format(
                where=source.where(frame, at), column="score", more=_more(more)))
    else:
        blank = _blank(raw)
        if blank.any():
            at, more = _first(blank)
            raise ScoresError(MISSING_VALUE.format(
                where=source.where(frame, at), column="score", more=_more(more)))
        values = pd.to_numeric(raw, errors="coerce").to_numpy(dtype="float64", na_value=np.nan)
        bad = np.isnan(values)
        if bad.any():
            text = raw.astype("string").str.strip().str.lower()
            spelled = text.isin(["nan", "-nan", "+nan", "na", "n/a", "null", "none"]).to_numpy(bool)
            if (bad & ~spelled).any():
                at, more = _first(bad & ~spelled)
                raise ScoresError(NOT_NUMERIC.format(
                    where=source.where(frame, at), column="score", value=raw.iloc[at],
                    more=_more(more)))
            at, more = _first(bad)
            raise ScoresError(MISSING_VALUE.format(
                where=source.where(frame, at), column="score", more=_more(more)))
    infinite = np.isinf(values)
    if infinite.any():
        at, more = _first(infinite)
        value = raw.iloc[at]
        value = value.item() if isinstance(value, np.generic) else value
        raise ScoresError(NOT_FINITE.format(
            where=source.where(frame, at), column="score", value=value, more=_more(more)))
    return values


def _mated_values(frame: pd.DataFrame, source: _Source) -> np.ndarray:
    raw = frame["mated"]
    if pd.api.types.is_bool_dtype(raw.dtype) and not raw.isna().any():
        return raw.to_numpy(dtype=bool)
    blank = _blank(raw)
    if blank.any():
        at, more = _first(blank)
        raise ScoresError(MISSING_VALUE.format(
            where=source.where(frame, at), column="mated", more=_more(more)))
    text = raw.astype(str).str.strip().str.lower()
    true = text.isin(TRUE_WORDS).to_numpy(bool)
    false = text.isin(FALSE_WORDS).to_numpy(bool)
    bad = ~(true | false)
    if bad.any():
        at, more = _first(bad)
        raise ScoresError(BAD_MATED.format(
            where=source.where(frame, at), value=raw.iloc[at], more=_more(more)))
    return true


def _label_values(frame: pd.DataFrame, column: str, source: _Source) -> pd.Series:
    return tables.labels(frame, column, source, ScoresError)


def read_scores(source: str | os.PathLike | pd.DataFrame, *, higher_is_match: bool = True,
                attributes: Sequence[str] | None = None,
                ignore: Sequence[str] = ()) -> pd.DataFrame:
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
            raise ScoresError(MIXED_GROUP_COLUMNS.format(
                source=where.name, single=name, sides=[f"{name}_1", f"{name}_2"]))
        if sides:
            for column in (f"{name}_1", f"{name}_2"):
                if column not in columns:
                    raise ScoresError(MISSING_COLUMN.format(
                        source=where.name, column=column,
                        hint=" (a group given per side needs both sides)"))
            group_columns += [f"{name}_1", f"{name}_2"]
            two_sided.append(True)
        elif single:
            group_columns.append(name)
            two_sided.append(False)
        else:
            hint = (" (give a group column, group_1 and group_2, or attribute columns and "
                    "read_scores(..., attributes=[...]))" if attributes is None else "")
            raise ScoresError(MISSING_COLUMN.format(source=where.name, column=name, hint=hint))
    subjects = [c for c in SUBJECT_COLUMNS if c in columns]
    if len(subjects) == 1:
        missing = next(c for c in SUBJECT_COLUMNS if c not in columns)
        raise ScoresError(MISSING_COLUMN.format(
            source=where.name, column=missing, hint=" (subjects are given for both sides)"))
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
        for name, sided in zip(names, two_sided):
            column = f"{name}{side}" if sided else name
            value = _label_values(frame, column, where)
            if len(names) > 1:  # joined by ".", later split on it: a dot would be ambiguous
                dotted = value.str.contains(".", regex=False).to_numpy(bool)
                if dotted.any():
                    at, more = _first(dotted)
                    raise ScoresError(DOTTED_ATTRIBUTE.format(
                        where=where.where(frame, at), column=column, value=value.iloc[at],
                        attributes=list(names), more=_more(more)))
            values.append(value)
        return values

    if any(two_sided):
        side_1, side_2 = _join(parts("_1")), _join(parts("_2"))
    else:
        side_1 = side_2 = _join(parts(""))
    group_1, group_2 = _sides(side_1, side_2, mated, MATED_CROSS_GROUP, frame, where)
    table = pd.DataFrame({
        "algorithm": pd.Categorical(algorithm.to_numpy(), categories=pd.unique(algorithm)),
        "score": score,
        "mated": mated,
        "group_1": group_1,
        "group_2": group_2,
    })
    if subjects:
        first, second = (_label_values(frame, c, where) for c in SUBJECT_COLUMNS)
        table["subject_1"], table["subject_2"] = _sides(first, second, mated, MATED_TWO_SUBJECTS,
                                                        frame, where)
    table.attrs["higher_is_match"] = bool(higher_is_match)
    table.attrs["attributes"] = tuple(attributes) if attributes is not None else ()
    table.attrs["source"] = where.name
    return table


def _sides(first: pd.Series, second: pd.Series, mated: np.ndarray, message: str,
           frame: pd.DataFrame, where: _Source) -> tuple[pd.Categorical, pd.Categorical]:
    """The labels of the two sides of each comparison as categoricals over one set of
    categories (in order of first appearance); a mated pair with two different labels
    is refused with ``message``."""
    differ = (first != second).to_numpy(bool) & mated
    if differ.any():
        at, more = _first(differ)
        raise ScoresError(message.format(
            where=where.where(frame, at), first=first.iloc[at], second=second.iloc[at],
            more=_more(more)))
    n = len(first)
    codes, categories = pd.factorize(pd.concat([first, second], ignore_index=True), sort=False)
    dtype = pd.CategoricalDtype(pd.Index(categories, dtype="string"), ordered=False)
    return (pd.Categorical.from_codes(codes[:n], dtype=dtype),
            pd.Categorical.from_codes(codes[n:], dtype=dtype))


def _join(parts: list[pd.Series]) -> pd.Series:
    label = parts[0].reset_index(drop=True)
    for part in parts[1:]:
        label = label + "." + part.reset_index(drop=True)
    return label


# ------------------------------------------------------------- sufficient statistics


@dataclass
class ScoreStats:
    """Per-group sufficient statistics of a score table.

    All scores are stored in *match orientation* (higher means more likely a
    match): distances are negated on the way in and thresholds negated back on
    the way out, so every computation uses ``accept = score >= t``.

    Attributes
    ----------
    algorithms, groups
        Labels, in order of first appearance.
    mated, nonmated
        ``mated[a][g]`` and ``nonmated[a][g]``: sorted (ascending) mated and
        within-group non-mated scores of algorithm ``a`` in group ``g``.
    cross
        ``cross[a]``: sorted cross-group non-mated scores of algorithm ``a``.
    higher_is_match, attributes
        As given to :func:`read_scores`.  With several attributes each group
        label is their values joined by ``"."`` (values without ``"."``).
    """

    algorithms: pd.Index
    groups: pd.Index
    mated: list[list[np.ndarray]]
    nonmated: list[list[np.ndarray]]
    cross: list[np.ndarray]
    higher_is_match: bool = True
    attributes: tuple = ()

    # -- the seam: everything below reads the statistics only through these counts
    def counts(self, a: int, thresholds) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Counts at internal thresholds ``t`` (match orientation) for algorithm ``a``.

        Returns ``(false_matches, false_non_matches, cross_false_matches)``:
        arrays of shape (n_groups, n_thresholds), (n_groups, n_thresholds) and
        (n_thresholds,) counting within-group non-mated ``>= t``, mated
        ``< t`` and cross-group non-mated ``>= t``.
        """
        t = np.atleast_1d(np.asarray(thresholds, dtype="float64"))
        fm = np.array([len(s) - np.searchsorted(s, t, "left") for s in self.nonmated[a]],
                      dtype="int64").reshape(len(self.groups), len(t))
        fnm = np.array([np.searchsorted(s, t, "left") for s in self.mated[a]],
                       dtype="int64").reshape(len(self.groups), len(t))
        cross = len(self.cross[a]) - np.searchsorted(self.cross[a], t, "left")
        return fm, fnm, cross.astype("int64")

    def n_mated(self, a: int) -> np.ndarray:
        return np.array([len(s) for s in self.mated[a]], dtype="int64")

    def n_nonmated(self, a: int) -> np.ndarray:
        return np.array([len(s) for s in self.nonmated[a]], dtype="int64")

    def n_pooled_nonmated(self, a: int) -> int:
        return int(self.n_nonmated(a).sum() + len(self.cross[a]))

    def segments(self, a: int) -> list[np.ndarray]:
        return [*self.mated[a], *self.nonmated[a], self.cross[a]]

    def to_internal(self, threshold):
        """A threshold in the caller's units, in match orientation."""
        t = np.asarray(threshold, dtype="float64")
        return t if self.higher_is_match else -t

    def to_external(self, threshold):
        t = np.asarray(threshold, dtype="float64")
        return t if self.higher_is_match else -t

    def algorithm_index(self, name) -> int:
        try:
            return self.algorithms.get_loc(name)
        except KeyError:
            raise KeyError(UNKNOWN_ALGORITHM.format(name=name, names=list(self.algorithms))) from None


def _segment_counts(key: np.ndarray, n_seg: int) -> np.ndarray:
    """``numpy.bincount(key, minlength=n_seg)``, counting codes two at a time when few."""
    if n_seg > 128 or len(key) < 2:
        return np.bincount(key, minlength=n_seg)
    even = len(key) - len(key) % 2
    pair = key[0:even:2].astype(np.intp)
    pair *= n_seg
    pair += key[1:even:2]
    both = np.bincount(pair, minlength=n_seg * n_seg).reshape(n_seg, n_seg)
    counts = both.sum(axis=0) + both.sum(axis=1)
    if even < len(key):
        counts[key[-1]] += 1
    return counts


#: Rows per block when gathering segments: small enough for a block's scores,
#: keys and sort order to stay in cache, large enough to amortise the Python loop.
_BLOCK = 1 << 16


def score_stats_from_arrays(score, mated, group_1, group_2=None, algorithm=None, *,
                            groups: Sequence | None = None,
                            algorithms: Sequence | None = None,
                            higher_is_match: bool = True,
                            attributes: Sequence[str] = ()) -> ScoreStats:
    """:class:`ScoreStats` from plain arrays (no validation: use :func:`read_scores` first).

    ``group_1``/``group_2`` and ``algorithm`` are integer codes (0-based);
    ``groups`` and ``algorithms`` their labels (default: the codes).

    Every row belongs to one *segment*: (algorithm, mated, group) or
    (algorithm, cross-group non-mated).  The rows are gathered segment by
    segment into one buffer in two passes over blocks of :data:`_BLOCK` rows
    (count each block's segment codes; then a stable radix sort of the
    block's codes and one copy of each of its runs to its place), and each
    segment of the buffer is sorted in place.  Cost: about one
    ``numpy.sort`` of the scores (sorting the segments separately is cheaper
    than one sort of all the scores, which pays for most of the gathering);
    extra memory: one copy of the scores (the statistics themselves) plus a
    few blocks.  The segments are views of that one buffer.
    """
    score = np.asarray(score, dtype="float64")
    mated = np.asarray(mated, dtype=bool)
    group_1 = np.asarray(group_1)
    group_2 = None if group_2 is None else np.asarray(group_2)
    n = len(score)
    n_groups = (int(group_1.max()) + 1 if n else 0) if groups is None else len(groups)
    if algorithm is None:
        n_alg = 1
    else:
        algorithm = np.asarray(algorithm)
        n_alg = (int(algorithm.max()) + 1 if n else 0) if algorithms is None else len(algorithms)
    width = 2 * n_groups + 1  # segments per algorithm: G mated, G within-group non-mated, cross
    n_seg = n_alg * width
    key_dtype = np.int8 if n_seg <= 2**7 else np.int16 if n_seg <= 2**15 else np.int32

    def keys(lo: int, hi: int) -> np.ndarray:
        """Segment code of rows lo:hi: a*width + g (mated), + G (non-mated), 2G (cross)."""
        m = mated[lo:hi]
        key = group_1[lo:hi].astype(key_dtype)
        key += np.logical_not(m).view(np.int8).astype(key_dtype) * key_dtype(n_groups)
        if group_2 is not None:
            cross = group_2[lo:hi] != group_1[lo:hi]
            cross &= ~m
            key[cross] = 2 * n_groups
        if algorithm is not None:
            key += algorithm[lo:hi].astype(key_dtype) * key_dtype(width)
        return key

    starts = range(0, n, _BLOCK)
    per_block = np.array([_segment_counts(keys(lo, lo + _BLOCK), n_seg) for lo in starts],
                         dtype=np.int64).reshape(len(starts), n_seg)
    offsets = np.zeros(n_seg + 1, dtype=np.int64)
    np.cumsum(per_block.sum(axis=0), out=offsets[1:])
    # where each block's run of each segment goes in the buffer
    at = (offsets[:-1] + np.cumsum(per_block, axis=0) - per_block).tolist()
    cuts = np.zeros((len(starts), n_seg + 1), dtype=np.int64)
    np.cumsum(per_block, axis=1, out=cuts[:, 1:])
    cuts = cuts.tolist()
    buffer = np.empty(n, dtype="float64")
    for b, lo in enumerate(starts):
        block = score[lo:lo + _BLOCK].take(np.argsort(keys(lo, lo + _BLOCK), kind="stable"))
        cut, to = cuts[b], at[b]
        for k in np.flatnonzero(per_block[b]).tolist():
            buffer[to[k]:to[k] + cut[k + 1] - cut[k]] = block[cut[k]:cut[k + 1]]
    if not higher_is_match:
        np.negative(buffer, out=buffer)
    segments = [buffer[offsets[k]:offsets[k + 1]] for k in range(n_seg)]
    for segment in segments:
        segment.sort()
    return ScoreStats(
        algorithms=pd.Index(list(algorithms) if algorithms is not None else list(range(n_alg)),
                            name="algorithm"),
        groups=pd.Index(list(groups) if groups is not None else list(range(n_groups)), name="group"),
        mated=[segments[a * width:a * width + n_groups] for a in range(n_alg)],
        nonmated=[segments[a * width + n_groups:a * width + 2 * n_groups] for a in range(n_alg)],
        cross=[segments[a * width + 2 * n_groups] for a in range(n_alg)],
        higher_is_match=higher_is_match, attributes=tuple(attributes),
    )


def score_stats(scores: pd.DataFrame | ScoreStats) -> ScoreStats:
    """The sufficient statistics of a validated score table (see :func:`read_scores`).

    A :class:`ScoreStats` is passed through, so every function below accepts
    either and the sorting is done once.
    """
    if isinstance(scores, ScoreStats):
        return scores
    return score_stats_from_arrays(
        scores["score"].to_numpy(dtype="float64"),
        scores["mated"].to_numpy(dtype=bool),
        scores["group_1"].cat.codes.to_numpy(),
        scores["group_2"].cat.codes.to_numpy(),
        scores["algorithm"].cat.codes.to_numpy(),
        groups=list(scores["group_1"].cat.categories),
        algorithms=list(scores["algorithm"].cat.categories),
        higher_is_match=scores.attrs.get("higher_is_match", True),
        attributes=scores.attrs.get("attributes", ()),
    )


# ----------------------------------------------------------------- operating points

_SIGN = np.int64(0x7FFFFFFFFFFFFFFF)


def _ordered(x: np.ndarray) -> np.ndarray:
    """Map float64 to int64 so that integer order is float order."""
    i = np.asarray(x, dtype="float64").view(np.int64)
    return np.where(i < 0, ~(i & _SIGN), i)


def _unordered(o: np.ndarray) -> np.ndarray:
    o = np.asarray(o, dtype=np.int64)
    i = np.where(o < 0, (~o) | ~_SIGN, o)
    return i.view(np.float64)


def _allowed_false_matches(targets: np.ndarray, n: int) -> np.ndarray:
    """Largest k with k / n <= target (as float64), per target."""
    k = np.floor(targets * n).astype("int64")
    k = np.clip(k, 0, n)
    up = (k + 1 <= n) & ((k + 1) / n <= targets)
    k = np.where(up, k + 1, k)
    down = (k > 0) & (k / n > targets)
    return np.where(down, k - 1, k)


#: Largest window of candidate scores that the threshold search sorts outright
#: instead of bisecting further.
_WINDOW = 1024


def _pooled_false_matches(runs: list[np.ndarray], t: np.ndarray) -> np.ndarray:
    """Pooled count of non-mated scores ``>= t`` over sorted runs, per threshold."""
    count = np.zeros(len(t), dtype=np.int64)
    for run in runs:
        count += len(run) - np.searchsorted(run, t, "left")
    return count


def _union_of_ranges(start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """Sorted indices covered by the half-open ranges ``[start[i], stop[i])``, each once."""
    order = np.argsort(start, kind="stable")
    start, stop = start[order], np.maximum.accumulate(stop[order])
    # a range opens a new block unless it starts inside the blocks before it
    new = np.ones(len(start), dtype=bool)
    new[1:] = start[1:] > stop[:-1]
    first = np.flatnonzero(new)
    begin = start[first]
    end = np.append(stop[first[1:] - 1], stop[-1]) if len(first) else stop[:0]
    length = end - begin
    keep = length > 0
    begin, length = begin[keep], length[keep]
    if not len(begin):
        return np.zeros(0, dtype=np.int64)
    shift = np.repeat(begin - np.concatenate(([0], np.cumsum(length)[:-1])), length)
    return shift + np.arange(length.sum())


#: Size of the sample of the pooled non-mated scores that brackets each threshold.
_SKETCH = 1 << 14


def _sketch_brackets(runs: list[np.ndarray], n: int, q: np.ndarray, low: float, high: float
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Likely bounds ``lo <= v < hi`` of the ``q``-th smallest pooled score, from a sample.

    Every ``step``-th score of each sorted run is kept; if ``c`` sample scores
    are ``<= x``, the pooled count ``<= x`` lies within ``step * (len(runs) + 1)``
    of ``step * c``, so bounds that far from ``q / step`` in the sorted sample
    hold unless ties get in the way (the caller checks them).
    """
    step = max(1, n // _SKETCH)
    sample = np.sort(np.concatenate([r[step - 1::step] for r in runs]))
    if not len(sample):
        return np.full(len(q), low), np.full(len(q), high)
    margin = len(runs) + 2
    at_lo = q // step - margin
    at_hi = q // step + margin
    lo = np.where(at_lo >= 0, sample[np.clip(at_lo, 0, len(sample) - 1)], low)
    hi = np.where(at_hi < len(sample), sample[np.clip(at_hi, 0, len(sample) - 1)], high)
    return lo, hi


def _operating_points(stats: ScoreStats, a: int, targets: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, int]:
    """Internal thresholds, pooled false-match counts there and the pooled count N.

    The threshold for ``k`` allowed false matches is the smallest ``t`` (in
    float order) with ``count(pooled non-mated >= t) <= k``: ``low`` (the
    smallest score) when ``k >= N``, otherwise the float just above ``v``, the
    ``(k+1)``-th largest pooled non-mated score.  ``v`` is found exactly, for
    all targets at once: bounds from a sorted sample of about :data:`_SKETCH`
    pooled scores (checked by exact counts; a target whose bounds fail, which
    only heavy ties can cause, starts from the whole range), then a bisection
    on the bit patterns of the floats (so ties and signed zeros follow float
    comparison) until fewer than :data:`_WINDOW` scores remain between the
    bounds of each target, then one sort of the union of those windows, from
    which each ``v`` is read by its rank.  Cost: a few hundred binary searches
    and sorts of a few thousand scores, independent of the number of scores
    but for the depth of the searches.  The reported threshold is the
    smallest observed score at or above ``t``, which takes the same decisions.
    """
    runs = [s for s in (*stats.nonmated[a], stats.cross[a]) if len(s)]
    n = sum(len(s) for s in runs)
    if n == 0:
        raise ScoresError(NO_NONMATED.format(algorithm=stats.algorithms[a]))
    k = _allowed_false_matches(targets, n)
    segments = [s for s in stats.segments(a) if len(s)]
    low = min(s[0] for s in segments)
    nm_low = min(s[0] for s in runs)
    nm_max = max(s[-1] for s in runs)
    t_star = np.full(len(targets), low)
    todo = np.flatnonzero(k < n)
    if len(todo):
        kk = k[todo]
        # invariant: count(>= lo) > k >= count(>= hi); below[r] = count(run r < bound)
        lo_f, hi_f = _sketch_brackets(runs, n, n - 1 - kk, nm_low, np.nextafter(nm_max, np.inf))
        below_lo = np.array([np.searchsorted(r, lo_f, "left") for r in runs], dtype=np.int64)
        below_hi = np.array([np.searchsorted(r, hi_f, "left") for r in runs], dtype=np.int64)
        wrong = (n - below_lo.sum(axis=0) <= kk) | (n - below_hi.sum(axis=0) > kk)
        if wrong.any():  # ties can defeat the sketch: start those from the whole range
            lo_f[wrong], hi_f[wrong] = nm_low, np.nextafter(nm_max, np.inf)
            below_lo[:, wrong] = 0
            below_hi[:, wrong] = np.array([len(r) for r in runs])[:, None]
        lo, hi = _ordered(lo_f), _ordered(hi_f)
        active = np.arange(len(todo))
        while True:
            window = below_hi[:, active].sum(axis=0) - below_lo[:, active].sum(axis=0)
            keep = (window > _WINDOW) & (hi[active] > lo[active] + 1)
            active = active[keep]
            if not len(active):
                break
            l, h = lo[active], hi[active]
            mid = l // 2 + h // 2 + ((l % 2) + (h % 2)) // 2
            t = _unordered(mid)
            below = np.array([np.searchsorted(r, t, "left") for r in runs], dtype=np.int64)
            ok = n - below.sum(axis=0) <= kk[active]
            hi[active] = np.where(ok, mid, h)
            lo[active] = np.where(ok, l, mid)
            below_hi[:, active] = np.where(ok, below, below_hi[:, active])
            below_lo[:, active] = np.where(ok, below_lo[:, active], below)
        result = _unordered(hi)
        open_ = np.flatnonzero(hi > lo + 1)
        if len(open_):
            # the (k+1)-th largest lies among the scores in [lo, hi): gather the union of
            # these windows once, sort it, and read each answer off by its rank
            # runs side by side in one index space, so that one union serves them all
            base = np.concatenate(([0], np.cumsum([len(r) for r in runs])))
            covered = _union_of_ranges((below_lo[:, open_] + base[:-1, None]).ravel(),
                                       (below_hi[:, open_] + base[:-1, None]).ravel())
            cut = np.searchsorted(covered, base).tolist()
            union = np.sort(np.concatenate([
                run.take(covered[cut[r]:cut[r + 1]] - base[r]) for r, run in enumerate(runs)]))
            top = np.searchsorted(union, result[open_], "left")  # union scores below hi
            above = n - below_hi[:, open_].sum(axis=0)  # pooled scores at or above hi
            result[open_] = np.nextafter(union[top - (kk[open_] + 1 - above)], np.inf)
        t_star[todo] = result
    # report the smallest observed score that is accepted (same decisions as t_star)
    observed = np.full(len(targets), np.inf)
    for s in segments:
        at = np.searchsorted(s, t_star, "left")
        np.minimum(observed, s[np.minimum(at, len(s) - 1)], out=observed, where=at < len(s))
    internal = np.where(np.isfinite(observed), observed, t_star)
    return internal, _pooled_false_matches(runs, internal), n


def thresholds_at_fmr(stats: ScoreStats | pd.DataFrame, targets, algorithm=None
                      ) -> pd.DataFrame:
    """Thresholds setting the pooled FMR of each algorithm at or below each target.

    Returns one row per (algorithm, target): ``algorithm``, ``target_fmr``,
    ``threshold`` (in the caller's units), ``attained_fmr`` (pooled, never
    above the target), ``n_pooled_nonmated``.  See the module docstring for
    the conventions.
    """
    stats = score_stats(stats)
    targets = _targets(targets)
    indices = (range(len(stats.algorithms)) if algorithm is None
               else [stats.algorithm_index(algorithm)])
    columns = {"algorithm": [], "target_fmr": [], "threshold": [], "_internal": [],
               "attained_fmr": [], "n_pooled_nonmated": []}
    for a in indices:
        internal, attained, n = _operating_points(stats, a, targets)
        columns["algorithm"] += [stats.algorithms[a]] * len(targets)
        columns["target_fmr"].append(targets)
        columns["threshold"].append(stats.to_external(internal))
        columns["_internal"].append(internal)
        columns["attained_fmr"].append(attained / n)
        columns["n_pooled_nonmated"].append(np.full(len(targets), n, dtype=np.int64))
    out = {name: values if name == "algorithm" else np.concatenate(values)
           for name, values in columns.items()}
    return pd.DataFrame(out)


def _targets(targets) -> np.ndarray:
    targets = np.atleast_1d(np.asarray(targets, dtype="float64"))
    bad = ~((targets > 0) & (targets <= 1))
    if bad.any():
        raise ValueError(BAD_TARGET.format(value=float(targets[bad][0])))
    return targets


def _rates_frame(stats: ScoreStats, a: int, internal: np.ndarray) -> dict[str, np.ndarray]:
    """Per-group rates (n_groups, n_thresholds) at internal thresholds, refusing empty groups."""
    n_m, n_nm = stats.n_mated(a), stats.n_nonmated(a)
    for g, group in enumerate(stats.groups):
        if n_m[g] == 0:
            raise ScoresError(NO_COMPARISONS.format(
                algorithm=stats.algorithms[a], group=group, kind="mated", rate="FNMR"))
        if n_nm[g] == 0:
            raise ScoresError(NO_COMPARISONS.format(
                algorithm=stats.algorithms[a], group=group, kind="within-group non-mated",
                rate="FMR"))
    fm, fnm, _ = stats.counts(a, internal)
    return {"fmr": fm / n_nm[:, None], "fnmr": fnm / n_m[:, None], "n_mated": n_m,
            "n_nonmated": n_nm}


def _strings(labels, index: np.ndarray):
    """A pandas ``string`` array of ``str(labels[i])`` for ``i`` in ``index``."""
    return pd.array([str(label) for label in labels], dtype="string").take(index)


def _tidy(stats: ScoreStats, blocks: list[tuple[int, dict, dict]]) -> pd.DataFrame:
    """Assemble rates blocks into the tidy long table, one row per (algorithm, [point,] group)."""
    n_grp = len(stats.groups)
    sizes = [rates["fmr"].shape[1] * n_grp for _, rates, _ in blocks]
    group = np.tile(np.arange(n_grp), sum(sizes) // n_grp if n_grp else 0)
    table = {"algorithm": _strings(stats.algorithms,
                                   np.repeat([a for a, _, _ in blocks], sizes))}
    if stats.attributes:
        # attribute values hold no "." when there are several (read_scores refuses it);
        # a single attribute's value is the whole label, dots and all
        split = [str(g).split(".", len(stats.attributes) - 1) for g in stats.groups]
        for i, name in enumerate(stats.attributes):
            table[name] = _strings([s[i] for s in split], group)
    table["group"] = _strings(stats.groups, group)
    table["fmr"] = np.concatenate([rates["fmr"].T.ravel() for _, rates, _ in blocks])
    table["fnmr"] = np.concatenate([rates["fnmr"].T.ravel() for _, rates, _ in blocks])
    for name in ("n_mated", "n_nonmated"):
        table[name] = np.concatenate([np.tile(rates[name], rates["fmr"].shape[1])
                                      for _, rates, _ in blocks]).astype("int64")
    for name in blocks[0][2]:
        table[name] = np.concatenate([np.repeat(np.asarray(extra[name]), n_grp)
                                      for _, _, extra in blocks])
    return pd.DataFrame(table)


def rates_at_thresholds(scores: pd.DataFrame | ScoreStats, thresholds) -> pd.DataFrame:
    """Per-group FMR and FNMR at given thresholds (caller's units), one row per
    (algorithm, threshold, group), with a ``threshold`` column.

    ``thresholds``: a scalar or 1-D array applied to every algorithm, or a
    mapping ``{algorithm: threshold(s)}``.
    """
    stats = score_stats(scores)
    blocks = []
    for a, name in enumerate(stats.algorithms):
        t = thresholds[name] if isinstance(thresholds, dict) else thresholds
        t = np.atleast_1d(np.asarray(t, dtype="float64"))
        internal = stats.to_internal(t)
        blocks.append((a, _rates_frame(stats, a, internal), {"threshold": t}))
    return _tidy(stats, blocks)


def sweep(scores: pd.DataFrame | ScoreStats, targets=None) -> pd.DataFrame:
    """Per-group rates at a grid of target FMRs.

    Parameters
    ----------
    scores
        A validated score table (:func:`read_scores`) or its :class:`ScoreStats`.
    targets
        Target pooled FMRs in (0, 1]; default :data:`DEFAULT_TARGETS`
        (0.1% to 10%, log-spaced, 21 points).

    Returns
    -------
    pandas.DataFrame
        One row per (algorithm, target, group): the columns of
        :func:`audit.rates.read_rates` (``algorithm``, attributes, ``group``,
        ``fmr``, ``fnmr``), ``n_mated``, ``n_nonmated``, then ``target_fmr``,
        ``threshold`` (caller's units) and ``attained_fmr`` (pooled FMR at the
        threshold, never above the target).
    """
    stats = score_stats(scores)
    targets = DEFAULT_TARGETS if targets is None else targets
    targets = _targets(targets)
    points = [_operating_points(stats, a, targets) for a in range(len(stats.algorithms))]
    blocks = []
    for a, (internal, attained, n) in enumerate(points):
        blocks.append((a, _rates_frame(stats, a, internal), {
            "target_fmr": targets,
            "threshold": stats.to_external(internal),
            "attained_fmr": attained / n,
        }))
    return _tidy(stats, blocks)


def rates_at_fmr(scores: pd.DataFrame | ScoreStats, target_fmr: float = 1e-3) -> pd.DataFrame:
    """Per-group FMR and FNMR at the threshold giving a pooled FMR of ``target_fmr``.

    The result is the tidy rates table of :func:`audit.rates.read_rates`
    (``algorithm``, attribute columns, ``group``, ``fmr``, ``fnmr``,
    ``n_mated``, ``n_nonmated``), so every rate-based measure, the FFMC audit
    and the Pareto frontier work on it unchanged.  The operating point is
    recorded in ``attrs``: ``target_fmr`` (float), and per algorithm
    ``threshold`` and ``attained_fmr`` (dicts keyed by algorithm name); see the
    module docstring for the threshold and tie conventions (the attained FMR
    never exceeds the target).

    Examples
    --------
    >>> import pandas as pd
    >>> scores = read_scores(pd.DataFrame({
    ...     "algorithm": "a", "group": ["F"] * 4 + ["M"] * 4,
    ...     "score": [0.9, 0.8, 0.3, 0.1, 0.7, 0.6, 0.5, 0.2],
    ...     "mated": [True, True, False, False] * 2}))
    >>> table = rates_at_fmr(scores, 0.25)
    >>> table[["group", "fmr", "fnmr", "n_mated", "n_nonmated"]]
      group  fmr  fnmr  n_mated  n_nonmated
    0     F  0.0   0.0        2           2
    1     M  0.5   0.0        2           2
    >>> table.attrs["threshold"], table.attrs["attained_fmr"]
    ({'a': 0.5}, {'a': 0.25})
    """
    table = sweep(scores, [target_fmr])
    thresholds = dict(zip(table["algorithm"], table["threshold"]))
    attained = dict(zip(table["algorithm"], table["attained_fmr"]))
    table = table.drop(columns=["target_fmr", "threshold", "attained_fmr"])
    table.attrs["target_fmr"] = float(target_fmr)
    table.attrs["threshold"] = {str(k): float(v) for k, v in thresholds.items()}
    table.attrs["attained_fmr"] = {str(k): float(v) for k, v in attained.items()}
    return table


def det_points(scores, *, n_points: int = 200) -> pd.DataFrame:
    """Per-group DET curve points: ``algorithm``, ``group``, ``fmr``, ``fnmr``.

    Thresholds at ``n_points`` quantiles of each group's pooled (mated and
    within-group non-mated) scores; the rates come from
    :meth:`ScoreStats.counts`, as everywhere else.  The input of
    :func:`audit.plots.scores.det_curves`.
    """
    stats = score_stats(scores)
    rows = []
    for a, algorithm in enumerate(stats.algorithms):
        n_mated, n_nonmated = stats.n_mated(a), stats.n_nonmated(a)
        for g, group in enumerate(stats.groups):
            if n_mated[g] == 0 or n_nonmated[g] == 0:
                continue
            both = np.concatenate([stats.mated[a][g], stats.nonmated[a][g]])
            t = np.unique(np.quantile(both, np.linspace(0, 1, n_points)))
            false_matches, false_non_matches, _ = stats.counts(a, t)
            rows.append(pd.DataFrame({"algorithm": str(algorithm), "group": str(group),
                                      "fmr": false_matches[g] / n_nonmated[g],
                                      "fnmr": false_non_matches[g] / n_mated[g]}))
    return pd.concat(rows, ignore_index=True)


def sweep_measures(scores: pd.DataFrame | ScoreStats, *, measures: Sequence[str] | None = None,
                   targets=None, alpha: float = 0.5) -> pd.DataFrame:
    """Every rate-based registered measure as a function of the operating point.

    Returns one row per (algorithm, target, measure): ``algorithm``,
    ``target_fmr``, ``attained_fmr``, ``threshold``, ``measure``, ``value``,
    ``fmr_term``, ``fnmr_term``, ``undefined``.  Undefined values follow each
    measure's documented convention and are flagged in ``undefined``; the
    per-point :class:`~audit.measures.UndefinedMeasureWarning` is not repeated
    for every point (the column says where).
    """
    from audit.measures import UndefinedMeasureWarning
    from audit.registry import evaluate, measure_names

    names = measures if measures is not None else measure_names(inputs="rates")
    table = sweep(scores, targets)
    frames = []
    for target, block in table.groupby("target_fmr", sort=False):
        points = block.drop_duplicates("algorithm").set_index("algorithm")
        for name in names:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UndefinedMeasureWarning)
                result = evaluate(block, name, alpha=alpha)
            result.index = result.index.astype(str)
            result = result.reset_index(names="algorithm")
            result.insert(1, "target_fmr", target)
            result.insert(2, "attained_fmr", points.loc[result["algorithm"], "attained_fmr"].to_numpy())
            result.insert(3, "threshold", points.loc[result["algorithm"], "threshold"].to_numpy())
            result.insert(4, "measure", name)
            frames.append(result)
    out = pd.concat(frames, ignore_index=True)
    out["algorithm"] = out["algorithm"].astype("string")
    out["measure"] = out["measure"].astype("string")
    return out
