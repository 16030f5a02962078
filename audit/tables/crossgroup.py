"""Cross-group impostor tables: the FMR of every (enrolment group, probe group) pair.

NIST's FRVT demographic results (NISTIR 8280, Grother et al. 2019) give, for
impostor comparisons, the FMR of every pair of groups: the enrolled image from
one group, the probe from another (or the same).  FMR(a, b) need not equal
FMR(b, a): the enrolment and probe images differ.  A rates table holds one
group per row and cannot say this; :func:`audit.tables.rates.read_rates`
reads such a table in one of two layouts:

* **long**: one row per (algorithm, pair), columns ``algorithm``, ``group_1``
  (the enrolment side), ``group_2`` (the probe side), ``fmr`` and optionally
  ``n_nonmated``, named as the score reader names the two sides of a
  comparison;
* **wide**: ``Algorithm``, then one ``FMR.<enrolment><SEP><probe>`` column per
  pair, with the pair separator ``SEP`` given by the user
  (``pair_separator="|"`` reads ``FMR.F.Black|M.White``).

Every algorithm needs the full square of pairs over the groups named, or
exactly the pairs the user declares (``pairs=[("A", "B"), ...]``), and no pair
may appear twice.  Every group needs its within-group pair (a, a): the
within-group FMRs are the table every FMR measure reads.

``read_rates`` returns them as an FMR-only rates table (one row per algorithm
and group, ``fmr`` = FMR(g, g)) and keeps the pair matrix beside it, in
``attrs["cross_group"]`` (a :class:`CrossGroupRates`; :func:`cross_group`
reads it), where the standard measures never look and the cross-group
measures (:mod:`audit.measures.crossgroup`) do.

A table with one group per row whose labels look like pairs (``A|A``,
``A|B``, ``B|A``, ``B|B``) is read as asked, each pair a group of its own, with
a :class:`PairLikeGroupsWarning` that points here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from audit.exceptions import PairLikeGroupsWarning, UnknownNameError, UsageError, warn
from audit.tables import common as tables
from audit.tables.common import Source
from audit.tables.rates import (
    EMPTY,
    UNKNOWN_COLUMNS,
    WIDE_RATE,
    RatesError,
    _check_counts,
    _counts,
    _labels,
    _numbers,
    group_attributes,
)

#: The long layout's names of the two sides: enrolment, probe (as in the score reader).
SIDES = ("group_1", "group_2")

# Error messages: constants, so that tests can check them exactly.
DUPLICATE_PAIR = (
    "{where}: algorithm {algorithm!r}, pair ({enrol!r}, {probe!r}) repeats (first at {first})"
)
MISSING_PAIRS = (
    "{source}: algorithm {algorithm!r} (first at {where}) has no FMR for the pair(s) "
    "{pairs} (enrolment group, probe group); {rule}"
)
FULL_SQUARE = (
    "every algorithm needs every pair of the {count} groups {groups}, within-group pairs "
    "included, unless the pairs measured are declared (read_rates(..., pairs=[...]); "
    "command line: --pairs)"
)
DECLARED_RULE = "every algorithm needs every declared pair"
UNDECLARED_PAIR = (
    "{where}: algorithm {algorithm!r}, pair ({enrol!r}, {probe!r}) is not among the "
    "declared pairs{more}"
)
NO_WITHIN = (
    "{source}: no within-group pair for group(s) {groups}; every group needs its "
    "within-group FMR (enrolment and probe in the same group), which every FMR measure "
    "reads{declared}"
)
FNMR_IN_PAIRS = (
    "{source}: column {column!r}: a cross-group table holds impostor FMRs per pair of "
    "groups; an FNMR belongs to one group (a mated pair has one group), so it has no "
    "place in it; read FNMRs from a table of their own"
)
BAD_PAIR_LABEL = (
    "{source}, column {column!r}: the pair separator {separator!r} occurs {count} time(s) "
    "in {label!r}; a pair is written <enrolment group>{separator}<probe group>, so it must "
    "occur exactly once (choose a separator that no group name contains)"
)
EMPTY_SIDE = "{source}, column {column!r}: the {side} group of {label!r} is empty"
MIXED_SIDES = (
    "{source}: give the groups either as one column 'group' or, for a cross-group "
    "table, as two columns 'group_1' (enrolment) and 'group_2' (probe), not both"
)
ONE_SIDE = (
    "{source}: column {missing!r} is missing; a cross-group table names both sides of a "
    "pair: 'group_1' (enrolment) and 'group_2' (probe)"
)
SEPARATOR_ON_LONG = (
    "{source}: a pair separator was given, but the table is in the long layout (columns "
    "{columns}); a long cross-group table names the two sides of each pair in the columns "
    "'group_1' (enrolment) and 'group_2' (probe), and a pair separator splits the wide "
    "layout's FMR.<enrolment group><separator><probe group> column names"
)
BAD_DECLARED = (
    "pairs: expected (enrolment group, probe group) pairs, e.g. [('A', 'B'), ('B', 'A')], "
    "got {value!r}"
)
DECLARED_TEXT = (
    "pairs {text!r}: a pair written as text needs the pair separator to split it "
    "(pair_separator=..., command line: --pair-separator), e.g. 'A|B,B|A' with '|'"
)
BAD_DECLARED_TEXT = (
    "pairs {text!r}: {item!r} is not <enrolment group>{separator}<probe group> "
    "(the separator {separator!r} must occur exactly once, with a group on each side)"
)
DECLARED_TWICE = "pairs: ({enrol!r}, {probe!r}) is declared twice"
PAIRS_NOT_CROSS = (
    "{source}: pairs were declared, but the table is not a cross-group table; give the "
    "columns 'group_1' and 'group_2' (long layout) or a pair separator (wide layout)"
)
PAIR_LIKE = (
    "{source}: the group labels look like pairs of groups ({examples}): split at "
    "{separator!r}, they pair {count} groups with one another, within-group pairs "
    "included. As read, each pair counts as a group of its own. If each label is an "
    "(enrolment group, probe group) pair of an impostor table, read it as a cross-group "
    "table: {hint}"
)
PAIR_LIKE_WIDE = (
    "read_rates(..., pair_separator={separator!r}) (command line: --pair-separator {separator!r})"
)
PAIR_LIKE_LONG = (
    "give the two sides in the columns 'group_1' (enrolment) and 'group_2' (probe) "
    "instead of one 'group' column"
)
UNKNOWN_ALGORITHMS = "unknown algorithm(s) {names}; the cross-group table holds {known}"

#: How many missing pairs a message lists before it counts the rest.
_LISTED = 8


@dataclass(frozen=True, eq=False)
class CrossGroupRates:
    """The cross-group FMRs of a table: one (enrolment group x probe group) matrix per algorithm.

    Attributes
    ----------
    algorithms
        The algorithms, in the order of the table.
    groups
        The groups, in order of first appearance (enrolment side first).
    fmr
        float64 array of shape (n_algorithms, n_groups, n_groups), read-only:
        ``fmr[k, i, j]`` is the FMR of algorithm ``k`` over impostor
        comparisons enrolled in group ``i`` and probed from group ``j``; NaN
        where the pair was not measured (only with declared pairs).
    n_nonmated
        int64 array of the same shape, the impostor comparisons of each pair
        (0 where not measured), or ``None`` when the table gives no counts.

    Immutable: pandas deep-copies a frame's ``attrs`` on every operation, and
    an immutable object is its own copy.
    """

    algorithms: pd.Index
    groups: pd.Index
    fmr: np.ndarray
    n_nonmated: np.ndarray | None = None

    def __post_init__(self):
        for array in (self.fmr, self.n_nonmated):
            if array is not None:
                array.flags.writeable = False

    def __deepcopy__(self, memo):
        return self

    @property
    def measured(self) -> np.ndarray:
        """(n_groups, n_groups) bool: the pairs measured (the same for every algorithm)."""
        if len(self.algorithms) == 0:
            return np.ones((len(self.groups),) * 2, dtype=bool)
        return ~np.isnan(self.fmr[0])

    @property
    def within(self) -> np.ndarray:
        """The within-group FMRs, FMR(g, g): shape (n_algorithms, n_groups)."""
        return np.diagonal(self.fmr, axis1=1, axis2=2).copy()

    def select(self, algorithms: Sequence[str]) -> CrossGroupRates:
        """The matrices of ``algorithms``, in that order; KeyError naming unknown ones."""
        algorithms = pd.Index([str(a) for a in algorithms], name="algorithm")
        if algorithms.equals(self.algorithms):
            return self
        positions = self.algorithms.get_indexer(algorithms)
        if (positions < 0).any():
            unknown = list(algorithms[positions < 0])
            raise UnknownNameError(
                UNKNOWN_ALGORITHMS.format(names=unknown, known=list(self.algorithms))
            )
        counts = None if self.n_nonmated is None else self.n_nonmated[positions]
        return CrossGroupRates(algorithms, self.groups, self.fmr[positions], counts)

    def matrix(self, algorithm: str) -> pd.DataFrame:
        """One algorithm's FMRs: index the enrolment group, columns the probe group."""
        return pd.DataFrame(
            self.select([algorithm]).fmr[0],
            index=pd.Index(self.groups, name="enrolment group"),
            columns=pd.Index(self.groups, name="probe group"),
        )

    def frame(self) -> pd.DataFrame:
        """The measured pairs as a tidy frame: ``algorithm``, ``group_1`` (enrolment),
        ``group_2`` (probe), ``fmr`` and ``n_nonmated`` when given; algorithm by
        algorithm, the pairs row by row of the matrix."""
        n_alg, n = len(self.algorithms), len(self.groups)
        i, j = np.nonzero(self.measured)
        out = pd.DataFrame(
            {
                "algorithm": np.repeat(self.algorithms.to_numpy(dtype=object), len(i)),
                "group_1": np.tile(self.groups.to_numpy(dtype=object)[i], n_alg),
                "group_2": np.tile(self.groups.to_numpy(dtype=object)[j], n_alg),
                "fmr": self.fmr[:, i, j].ravel() if n else np.zeros(0),
            }
        )
        if self.n_nonmated is not None:
            out["n_nonmated"] = self.n_nonmated[:, i, j].ravel()
        for column in ("algorithm", *SIDES):
            out[column] = out[column].astype("string")
        return out


def cross_group(table: pd.DataFrame) -> CrossGroupRates | None:
    """The pair matrices of a rates table read from a cross-group table, else ``None``.

    Follows the table's algorithms (a table filtered to some algorithms gets
    their matrices only, in its order).
    """
    cross = table.attrs.get("cross_group")
    if not isinstance(cross, CrossGroupRates):
        return None
    return cross.select(pd.unique(table["algorithm"].astype(str)))


def is_cross_group(columns: Sequence[str], pair_separator: str | None) -> bool:
    """Whether a raw table (our column names) is read as a cross-group table: it names
    the two sides (``group_1``, ``group_2``), or a pair separator was given."""
    return pair_separator is not None or any(side in columns for side in SIDES)


def parse_pairs(pairs, separator: str | None) -> list[tuple[str, str]] | None:
    """Declared pairs as a list of ``(enrolment, probe)``; ``None`` stays ``None``.

    ``pairs`` is an iterable of 2-sequences, or text ``"A|B,B|A"`` split at
    commas and then at ``separator``.

    >>> parse_pairs("A|B, B|A", "|")
    [('A', 'B'), ('B', 'A')]
    >>> parse_pairs([["A", "A"]], None)
    [('A', 'A')]
    """
    if pairs is None:
        return None
    if isinstance(pairs, str):
        if separator is None:
            raise UsageError(DECLARED_TEXT.format(text=pairs))
        out = []
        for item in pairs.split(","):
            item = item.strip()
            enrol, _, probe = item.partition(separator)
            if item.count(separator) != 1 or not enrol.strip() or not probe.strip():
                raise UsageError(
                    BAD_DECLARED_TEXT.format(text=pairs, item=item, separator=separator)
                )
            out.append((enrol.strip(), probe.strip()))
    else:
        out = []
        try:
            items = list(pairs)
        except TypeError:
            raise UsageError(BAD_DECLARED.format(value=pairs)) from None
        for item in items:
            if isinstance(item, str) or not hasattr(item, "__len__") or len(item) != 2:
                raise UsageError(BAD_DECLARED.format(value=item))
            enrol, probe = (str(side) for side in item)
            if not enrol.strip() or not probe.strip():
                raise UsageError(BAD_DECLARED.format(value=item))
            out.append((enrol, probe))
    if not out:
        raise UsageError(BAD_DECLARED.format(value=pairs))
    seen: set[tuple[str, str]] = set()
    for pair in out:
        if pair in seen:
            raise UsageError(DECLARED_TWICE.format(enrol=pair[0], probe=pair[1]))
        seen.add(pair)
    return out


def _listed(pairs: list[tuple[str, str]]) -> str:
    shown = ", ".join(f"({a!r}, {b!r})" for a, b in pairs[:_LISTED])
    return shown + (f" and {len(pairs) - _LISTED} more" if len(pairs) > _LISTED else "")


def _from_wide(
    frame: pd.DataFrame, source: Source, separator: str
) -> tuple[pd.DataFrame, np.ndarray, dict[str, str]]:
    """The pairs of a wide cross-group table as a long frame, the frame row of each
    pair, and a column naming each group (for messages)."""
    columns = [str(c) for c in frame.columns]
    if "Algorithm" not in columns:
        raise source.missing("Algorithm", RatesError, tables.WIDE_ALGORITHM)
    for column in columns:
        if columns.count(column) > 1:
            raise RatesError(tables.DUPLICATE_COLUMN.format(source=source.name, column=column))
    rates = {}
    for column in columns:
        if column == "Algorithm":
            continue
        match = WIDE_RATE.match(column)
        if match is not None and match.group(1) == "FNMR":
            raise RatesError(FNMR_IN_PAIRS.format(source=source.name, column=column))
        if match is None:
            raise RatesError(
                UNKNOWN_COLUMNS.format(
                    source=source.name,
                    columns=[c for c in columns if c != "Algorithm" and not WIDE_RATE.match(c)],
                    expected=f"Algorithm, FMR.<enrolment group>{separator}<probe group>",
                    hint="",
                )
            )
        label = match.group(2)
        count = label.count(separator)
        if count != 1:
            raise RatesError(
                BAD_PAIR_LABEL.format(
                    source=source.name,
                    column=column,
                    separator=separator,
                    count=count,
                    label=label,
                )
            )
        enrol, probe = label.split(separator)
        for side, name in ((enrol, "enrolment"), (probe, "probe")):
            if not side.strip():
                raise RatesError(
                    EMPTY_SIDE.format(source=source.name, column=column, side=name, label=label)
                )
        rates[column] = (enrol, probe)
    if not rates:
        raise source.missing(
            f"FMR.<enrolment group>{separator}<probe group>",
            RatesError,
            " (the wide cross-group layout has one FMR column per pair)",
        )
    if len(frame) == 0:
        raise RatesError(EMPTY.format(source=source.name))
    algorithms = _labels(frame, "Algorithm", source).to_numpy(dtype=object)
    values = [_numbers(frame, column, source) for column in rates]
    n_rows, n_pairs = len(frame), len(rates)
    sides = np.array(list(rates.values()), dtype=object).reshape(n_pairs, 2)
    pairs = pd.DataFrame(
        {
            "algorithm": np.repeat(algorithms, n_pairs),
            "group_1": np.tile(sides[:, 0], n_rows),
            "group_2": np.tile(sides[:, 1], n_rows),
            "fmr": np.column_stack(values).ravel(),
        }
    )
    named = {}
    for column, pair in rates.items():
        for group in pair:
            named.setdefault(group, column)
    return pairs, np.repeat(np.arange(n_rows), n_pairs), named


def _from_long(
    frame: pd.DataFrame, source: Source, count_tolerance: float | None
) -> tuple[pd.DataFrame, np.ndarray]:
    """The pairs of a long cross-group table, validated cell by cell, and their frame rows."""
    columns = [str(c) for c in frame.columns]
    sides = [side for side in SIDES if side in columns]
    if not sides:
        raise RatesError(SEPARATOR_ON_LONG.format(source=source.name, columns=columns))
    if "group" in columns:
        raise RatesError(MIXED_SIDES.format(source=source.name))
    for side in SIDES:
        if side not in columns:
            raise RatesError(ONE_SIDE.format(source=source.name, missing=side))
    for required in ("algorithm", "fmr"):
        if required not in columns:
            raise source.missing(required, RatesError)
    for column in ("fnmr", "n_mated"):
        if column in columns:
            raise RatesError(FNMR_IN_PAIRS.format(source=source.name, column=column))
    unknown = [c for c in columns if c not in ("algorithm", *SIDES, "fmr", "n_nonmated")]
    if unknown:
        raise RatesError(
            UNKNOWN_COLUMNS.format(
                source=source.name,
                columns=unknown,
                expected="algorithm, group_1 (enrolment), group_2 (probe), fmr, n_nonmated",
                hint="",
            )
        )
    if len(frame) == 0:
        raise RatesError(EMPTY.format(source=source.name))
    pairs = pd.DataFrame({"algorithm": _labels(frame, "algorithm", source)})
    for side in SIDES:
        pairs[side] = _labels(frame, side, source)
    pairs["fmr"] = _numbers(frame, "fmr", source)
    if "n_nonmated" in columns:
        pairs["n_nonmated"] = _counts(frame, "n_nonmated", source)
        _check_counts(pairs, frame, source, count_tolerance)
    for column in ("algorithm", *SIDES):
        pairs[column] = pairs[column].astype(object)
    return pairs, np.arange(len(frame))


def _check_pairs(
    pairs: pd.DataFrame,
    rows: np.ndarray,
    declared: list[tuple[str, str]] | None,
    frame: pd.DataFrame,
    source: Source,
) -> list[str]:
    """Refuse repeated pairs, undeclared pairs and missing pairs; return the groups."""
    keys = pairs[["algorithm", *SIDES]]
    duplicated = keys.duplicated().to_numpy()
    if duplicated.any():
        at = int(np.flatnonzero(duplicated)[0])
        algorithm, enrol, probe = keys.iloc[at]
        same = (
            (keys["algorithm"] == algorithm)
            & (keys["group_1"] == enrol)
            & (keys["group_2"] == probe)
        ).to_numpy()
        first = int(np.flatnonzero(same)[0])
        raise RatesError(
            DUPLICATE_PAIR.format(
                where=source.where(frame, int(rows[at])),
                algorithm=algorithm,
                enrol=enrol,
                probe=probe,
                first=source.where(frame, int(rows[first])),
            )
        )
    g1 = pairs["group_1"].to_numpy(dtype=object)
    g2 = pairs["group_2"].to_numpy(dtype=object)
    if declared is not None:
        groups = list(dict.fromkeys(side for pair in declared for side in pair))
        expected = declared
        rule = DECLARED_RULE
    else:
        groups = list(dict.fromkeys(np.column_stack([g1, g2]).ravel()))
        expected = [(a, b) for a in groups for b in groups]
        rule = FULL_SQUARE.format(count=len(groups), groups=groups)
    within = {(g, g) for g in groups}
    lacking = [g for g in groups if (g, g) not in set(expected)]
    if lacking:
        raise RatesError(
            NO_WITHIN.format(
                source=source.name,
                groups=lacking,
                declared=" (the declared pairs lack them)" if declared is not None else "",
            )
        )
    if declared is not None:
        allowed = set(declared)
        outside = np.array([(a, b) not in allowed for a, b in zip(g1, g2, strict=True)])
        if outside.any():
            at, more = tables.first(outside)
            raise RatesError(
                UNDECLARED_PAIR.format(
                    where=source.where(frame, int(rows[at])),
                    algorithm=pairs["algorithm"].iloc[at],
                    enrol=g1[at],
                    probe=g2[at],
                    more=source.more(more),
                )
            )
    codes, algorithms = pd.factorize(pairs["algorithm"], sort=False)
    short = np.bincount(codes, minlength=len(algorithms)) < len(expected)
    for index in np.flatnonzero(short)[:1]:
        present = set(zip(g1[codes == index], g2[codes == index], strict=True))
        missing = [p for p in expected if p not in present]
        missing.sort(key=lambda p: p not in within)  # a missing within-group pair first
        at = int(np.flatnonzero(codes == index)[0])
        raise RatesError(
            MISSING_PAIRS.format(
                source=source.name,
                algorithm=algorithms[index],
                where=source.where(frame, int(rows[at])),
                pairs=_listed(missing),
                rule=rule,
            )
        )
    return groups


def read_cross_group(
    frame: pd.DataFrame,
    source: Source,
    *,
    attributes: Sequence[str] | None = None,
    pair_separator: str | None = None,
    pairs: Iterable | str | None = None,
    count_tolerance: float | None = None,
) -> pd.DataFrame:
    """A prepared raw cross-group table (:func:`audit.tables.layouts.prepare`) as the
    within-group rates table, with its :class:`CrossGroupRates` in ``attrs["cross_group"]``.

    Called by :func:`audit.tables.rates.read_rates`, which documents the
    parameters; ``attributes`` name the dot-separated parts of the group
    labels, in both layouts.
    """
    declared = parse_pairs(pairs, pair_separator)
    frame.columns = [str(c) for c in frame.columns]
    if {*SIDES, "group", "fmr", "algorithm"} & set(frame.columns):
        long, rows = _from_long(frame, source, count_tolerance)
        named: dict[str, str] = {}
    else:
        long, rows, named = _from_wide(frame, source, pair_separator)
    groups = _check_pairs(long, rows, declared, frame, source)
    attributes = group_attributes(
        groups, attributes, source, lambda group: named.get(group, "group_1")
    )
    algorithm_codes, algorithms = pd.factorize(long["algorithm"], sort=False)
    group_index = pd.Index(groups, name="group")
    i = group_index.get_indexer(long["group_1"])
    j = group_index.get_indexer(long["group_2"])
    n_alg, n = len(algorithms), len(groups)
    fmr = np.full((n_alg, n, n), np.nan)
    fmr[algorithm_codes, i, j] = long["fmr"].to_numpy(dtype="float64")
    counts = None
    if "n_nonmated" in long:
        counts = np.zeros((n_alg, n, n), dtype=np.int64)
        counts[algorithm_codes, i, j] = long["n_nonmated"].to_numpy(dtype=np.int64)
    cross = CrossGroupRates(
        pd.Index([str(a) for a in algorithms], name="algorithm"), group_index, fmr, counts
    )
    tidy = pd.DataFrame({"algorithm": np.repeat(cross.algorithms.to_numpy(dtype=object), n)})
    tidy["algorithm"] = tidy["algorithm"].astype("string")
    for k, name in enumerate(attributes):
        part = np.array([g.split(".")[k] for g in groups], dtype=object)
        tidy[name] = pd.array(np.tile(part, n_alg), dtype="string")
    tidy["group"] = pd.array(np.tile(np.array(groups, dtype=object), n_alg), dtype="string")
    tidy["fmr"] = cross.within.ravel()
    if counts is not None:
        tidy["n_nonmated"] = np.diagonal(counts, axis1=1, axis2=2).ravel()
    tidy.attrs["cross_group"] = cross
    return tidy


#: Candidate pair separators: runs of non-word characters (``|``, `` / ``, ``_``,
#: ``->``) and a word between spaces (`` vs ``).
_RUNS = re.compile(r"(?:[^\w]|_)+")
_SPACED_WORD = re.compile(r"\s+\w+\s+")


def pair_separator_of(groups: Sequence[str]) -> str | None:
    """The separator at which every group label splits into a pair of groups, if any.

    Labels look like pairs when, for one separator, each holds it exactly once
    with a label on each side, at least two labels are within-group pairs
    (``A|A``, ``B|B``) and another pairs two of those groups (``A|B``).
    Annex 15's ``F.Black`` does not: its sides never repeat.

    >>> pair_separator_of(["A|A", "A|B", "B|A", "B|B"])
    '|'
    >>> pair_separator_of(["F.Black", "F.White", "M.Black", "M.White"]) is None
    True
    """
    groups = [str(g) for g in groups]
    if len(groups) < 3:
        return None
    candidates = [m.group(0) for m in _RUNS.finditer(groups[0])]
    candidates += [m.group(0) for m in _SPACED_WORD.finditer(groups[0])]
    for separator in dict.fromkeys(candidates):
        if not all(g.count(separator) == 1 for g in groups):
            continue
        sides = [g.split(separator) for g in groups]
        if not all(a and b for a, b in sides):
            continue
        within = {a for a, b in sides if a == b}
        if len(within) >= 2 and any(a != b and a in within and b in within for a, b in sides):
            return separator
    return None


def warn_pair_like(tidy: pd.DataFrame, source: Source, *, wide: bool) -> None:
    """Warn (:class:`PairLikeGroupsWarning`) when a one-group-per-row table's group labels
    look like (enrolment, probe) pairs (:func:`pair_separator_of`)."""
    groups = list(pd.unique(tidy["group"]))
    separator = pair_separator_of(groups)
    if separator is None:
        return
    count = len({side for g in groups for side in g.split(separator)})
    warn(
        PAIR_LIKE.format(
            source=source.name,
            examples=", ".join(repr(g) for g in groups[:4]) + (", ..." if len(groups) > 4 else ""),
            separator=separator,
            count=count,
            hint=PAIR_LIKE_WIDE.format(separator=separator) if wide else PAIR_LIKE_LONG,
        ),
        PairLikeGroupsWarning,
    )
