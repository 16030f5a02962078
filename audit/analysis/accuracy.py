"""Overall accuracy of each algorithm: total FMR and total FNMR over the groups.

Howard et al. (sec. 4.5) put "total FNMR across all demographic groups" on the
accuracy axis of their Pareto down-select: the group FNMRs of Annex 15
averaged with the groups' numbers of mated comparisons as weights,

.. math::

    \\mathrm{FNMR}_{total} = \\frac{\\sum_g n^{mated}_g\\,\\mathrm{FNMR}_g}{\\sum_g n^{mated}_g},
    \\qquad
    \\mathrm{FMR}_{total} = \\frac{\\sum_g n^{non\\text{-}mated}_g\\,\\mathrm{FMR}_g}
                                 {\\sum_g n^{non\\text{-}mated}_g},

which is the pooled error rate: all false non-matches over all mated
comparisons.  The counts can come from the rates table's ``n_mated`` and
``n_nonmated`` columns, from a counts file, or from a mapping.

The Annex 15 CSV carries no counts (the NIST report prints them in the
Annex 15 introduction; no machine-readable copy is known, and this package
does not make any up).  Without counts the only defensible default is
**equal weights**, every group counting ``1/n_groups``; the totals then
differ from the paper's (e.g. didiglobalface-001: 0.0031 with equal weights,
~0.0022 in the paper).  Whatever the weights, the result says which were used
in ``attrs["weights"]``, in plain words, and every downstream table and figure
repeats it.

A group can be left out of a total (``leave_out={"fmr": ["M.White"]}``): a
calibrated cell (:mod:`audit.analysis.calibration`), whose rate was fixed by
how the thresholds were set, would pull every algorithm's total towards it
alike; the remaining groups' weights are renormalised and the description
says which groups were left out.

An accuracy from another table (:func:`join_accuracy`), e.g. NIST's FNMR at
FMR 1e-5 on the Mugshot set beside an FMR-only fairness table, is joined by
algorithm name, exactly; the algorithms of one table only and the empty
accuracy cells are named, never dropped silently.

A counts file is a CSV with a column ``group`` (the labels of the rates
table, e.g. ``F.Black``), a column ``n_mated`` and/or ``n_nonmated`` (whole
numbers), and optionally a column ``algorithm`` for counts that differ by
algorithm (then every algorithm of the rates table needs every group).  A
rate whose count column is absent is averaged with equal weights, and the
description says so.
"""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from audit.exceptions import ParameterError, WeightsError
from audit.tables import common as tables
from audit.tables.common import blank as _blank
from audit.tables.rates import COUNT_COLUMNS, RATE_COUNTS, rate_matrices
from audit.validation import RATES_TABLE, Mapping_Any, Options, optional, validate_params

# Error messages: constants, so that tests can check them exactly.
BAD_WEIGHTS = (
    "weights must be 'equal', 'counts', a mapping, a DataFrame or the path of an existing "
    "counts CSV, got {weights!r}"
)
NO_COUNTS_FILE = (
    "weights {weights!r}: no such counts CSV{hint}; weights are 'equal', 'counts' (the "
    "table's count columns) or the path of a counts CSV"
)
NO_COUNT_COLUMNS = (
    "weights 'counts' (command line --weights counts) needs the count column n_mated "
    "and/or n_nonmated in the rates table{source}, which has neither; give a counts file "
    "(or mapping) instead, or 'equal'"
)
COUNTS_CANNOT_READ = tables.CANNOT_READ
COUNTS_MISSING_COLUMN = (
    "{source}: column {column!r} is missing; a counts table has the columns group, "
    "n_mated and/or n_nonmated, and optionally algorithm"
)
COUNTS_NO_COUNT_COLUMN = (
    "{source}: no count column; a counts table has the columns group, n_mated and/or "
    "n_nonmated, and optionally algorithm"
)
COUNTS_UNKNOWN_COLUMNS = (
    "{source}: unknown column(s) {columns}; a counts table has the columns group, "
    "n_mated and/or n_nonmated, and optionally algorithm"
)
COUNTS_BAD_COUNT = "{where}, column {column!r}: {value!r} is not a non-negative whole number"
COUNTS_TOO_LARGE = tables.COUNT_TOO_LARGE
COUNTS_BOOLEAN = tables.BOOLEAN
COUNTS_BAD_WEIGHT = "{where}, column {column!r}: {value!r} is not a finite non-negative number"
COUNTS_EMPTY_LABEL = "{where}, column {column!r}: the label is empty"
COUNTS_DUPLICATE = "{where}: {key} repeats (first at {first})"
COUNTS_UNKNOWN_GROUPS = (
    "{source}: group(s) {groups} are not in the rates table, whose groups are {known}"
)
COUNTS_MISSING_GROUPS = (
    "{source}: no count for group(s) {groups}{algorithm}; every group of the rates table needs one"
)
COUNTS_UNKNOWN_ALGORITHMS = "{source}: algorithm(s) {algorithms} are not in the rates table"
COUNTS_MISSING_ALGORITHMS = "{source}: no counts for algorithm(s) {algorithms}"
ZERO_WEIGHTS = (
    "{source}: the {column} weights of algorithm(s) {algorithms} sum to 0, so their "
    "total {rate} is undefined"
)
BAD_MAPPING = (
    "<mapping>: expected {{group: weight}}, {{group: (n_mated, n_nonmated)}} or "
    "{{'n_mated': {{group: n}}, 'n_nonmated': {{group: n}}}}; got the value {value!r} "
    "for key {key!r}"
)
BAD_LEAVE_OUT = (
    "parameter leave_out: expected {{rate: [group, ...]}} with rate 'fmr' or 'fnmr' and "
    "groups of the table ({groups}), keeping at least one group, got {value!r}"
)
LEFT_OUT = "; {rate} leaves out {groups} (each other group's weight renormalised)"
EQUAL_LEFT_OUT = (
    "equal weights over {kept} of the {n} groups (each counts 1/{kept}); {groups} left out"
)

#: The status of each algorithm in :func:`join_accuracy`.
JOINED = "joined"
EMPTY_CELL = "empty accuracy cell"
NOT_IN_ACCURACY = "not in the accuracy table"
NOT_IN_RATES = "not in the rates table"

# Which rate each count column weights, and the name of the total it gives.
_RATE_OF = {"n_mated": ("fnmr", "FNMR", "mated"), "n_nonmated": ("fmr", "FMR", "non-mated")}


class _Where:
    """Names a row of a counts table in messages: a CSV line, a DataFrame row or a mapping key."""

    def __init__(self, name: str, kind: str, source: tables.Source | None = None):
        self.name, self.kind, self.source = name, kind, source

    def __call__(self, frame: pd.DataFrame, position: int) -> str:
        if self.kind == "csv":
            return self.source.where(frame, position)
        if self.kind == "mapping":
            return f"{self.name}, group {frame['group'].iloc[position]!r}"
        return f"{self.name}, row {frame.index[position]!r}"

    # the interface of audit.tables.common.Source (a counts table is read whole)
    where = __call__
    more = staticmethod(tables.more)


def _read_counts(
    path: str | os.PathLike, *, max_bytes: int = tables.MAX_BYTES
) -> tuple[pd.DataFrame, _Where]:
    frame, source = tables.read_table(path, WeightsError, max_bytes=max_bytes)
    return frame, _Where(source.name, "csv", source)


def _from_mapping(weights: Mapping) -> tuple[pd.DataFrame, _Where]:
    """A counts frame (group, n_mated, n_nonmated) from one of the three mapping forms."""
    where = _Where("<mapping>", "mapping")
    keys = set(weights)
    if (
        keys
        and keys <= set(COUNT_COLUMNS)
        and all(isinstance(v, Mapping) for v in weights.values())
    ):
        groups = list(dict.fromkeys(g for column in COUNT_COLUMNS for g in weights.get(column, {})))
        frame = pd.DataFrame({"group": groups})
        for column in COUNT_COLUMNS:
            if column in weights:
                inner = weights[column]
                frame[column] = [inner.get(g, "") for g in groups]
        return frame, where
    rows = []
    for group, value in weights.items():
        if isinstance(value, (tuple, list)) and len(value) == 2:
            rows.append((group, value[0], value[1]))
        elif isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
            value, bool
        ):
            rows.append((group, value, value))
        else:
            raise WeightsError(BAD_MAPPING.format(value=value, key=group))
    return pd.DataFrame(rows, columns=["group", *COUNT_COLUMNS]), where


def _parse_counts(frame: pd.DataFrame, column: str, where: _Where, *, whole: bool) -> np.ndarray:
    tables.refuse_non_real(frame, column, where, WeightsError)
    if whole:  # exact: no count passes through a float on its way in
        counts = tables.whole_numbers(frame, column, where, WeightsError, COUNTS_BAD_COUNT)
        return counts.astype("float64")
    raw = frame[column]
    parsed = pd.to_numeric(raw.where(~_blank(raw), None), errors="coerce").to_numpy(
        dtype="float64", na_value=np.nan
    )
    tables.refuse_rounded(frame, column, parsed, where, WeightsError)
    ok = np.isfinite(parsed) & (parsed >= 0)
    if not ok.all():
        at = int(np.flatnonzero(~ok)[0])
        message = COUNTS_BAD_WEIGHT
        value = tables.cell(raw, at)
        raise WeightsError(message.format(where=where(frame, at), column=column, value=value))
    return parsed


def _validate_counts(
    frame: pd.DataFrame, where: _Where, algorithms: pd.Index, groups: pd.Index, *, whole: bool
) -> dict[str, np.ndarray]:
    """Check a counts table against the rates table; return {count column: (n_alg, n_grp) array}."""
    frame = frame.copy()
    frame.columns = [str(c) for c in frame.columns]
    columns = list(frame.columns)
    if "group" not in columns:
        raise WeightsError(COUNTS_MISSING_COLUMN.format(source=where.name, column="group"))
    unknown = [c for c in columns if c not in {"algorithm", "group", *COUNT_COLUMNS}]
    if unknown:
        raise WeightsError(COUNTS_UNKNOWN_COLUMNS.format(source=where.name, columns=unknown))
    present = [c for c in COUNT_COLUMNS if c in columns]
    if not present:
        raise WeightsError(COUNTS_NO_COUNT_COLUMN.format(source=where.name))
    keys = ["algorithm", "group"] if "algorithm" in columns else ["group"]
    for key in keys:
        blank = _blank(frame[key])
        if blank.any():
            at = int(np.flatnonzero(blank)[0])
            raise WeightsError(COUNTS_EMPTY_LABEL.format(where=where(frame, at), column=key))
        frame[key] = frame[key].astype(str)
    duplicated = frame.duplicated(subset=keys).to_numpy()
    if duplicated.any():
        at = int(np.flatnonzero(duplicated)[0])
        values = frame[keys].iloc[at]
        same = (frame[keys] == values).all(axis=1).to_numpy()
        first = int(np.flatnonzero(same)[0])
        key = ", ".join(f"{k} {values[k]!r}" for k in keys)
        raise WeightsError(
            COUNTS_DUPLICATE.format(where=where(frame, at), key=key, first=where(frame, first))
        )
    known_groups = [str(g) for g in groups]
    extra = [g for g in pd.unique(frame["group"]) if g not in set(known_groups)]
    if extra:
        raise WeightsError(
            COUNTS_UNKNOWN_GROUPS.format(source=where.name, groups=extra, known=known_groups)
        )
    parsed = {c: _parse_counts(frame, c, where, whole=whole) for c in present}
    if "algorithm" in keys:
        known_algorithms = [str(a) for a in algorithms]
        extra = [a for a in pd.unique(frame["algorithm"]) if a not in set(known_algorithms)]
        if extra:
            raise WeightsError(
                COUNTS_UNKNOWN_ALGORITHMS.format(source=where.name, algorithms=extra)
            )
        missing = [a for a in known_algorithms if a not in set(frame["algorithm"])]
        if missing:
            raise WeightsError(
                COUNTS_MISSING_ALGORITHMS.format(source=where.name, algorithms=missing)
            )
        for algorithm, rows in frame.groupby("algorithm", sort=False)["group"]:
            lacking = [g for g in known_groups if g not in set(rows)]
            if lacking:
                raise WeightsError(
                    COUNTS_MISSING_GROUPS.format(
                        source=where.name, groups=lacking, algorithm=f" of algorithm {algorithm!r}"
                    )
                )
        out = {}
        for column, values in parsed.items():
            wide = pd.DataFrame(
                {"algorithm": frame["algorithm"], "group": frame["group"], "n": values}
            ).pivot(index="algorithm", columns="group", values="n")
            out[column] = wide.loc[known_algorithms, known_groups].to_numpy(dtype="float64")
        return out
    lacking = [g for g in known_groups if g not in set(frame["group"])]
    if lacking:
        raise WeightsError(
            COUNTS_MISSING_GROUPS.format(source=where.name, groups=lacking, algorithm="")
        )
    order = pd.Index(frame["group"]).get_indexer(known_groups)
    return {
        c: np.broadcast_to(v[order], (len(algorithms), len(groups))).copy()
        for c, v in parsed.items()
    }


def read_counts(counts, algorithms, groups) -> dict[str, np.ndarray]:
    """Validated comparison counts from a counts CSV (path) or DataFrame.

    The counts table is read and checked exactly as ``weights=<file or
    DataFrame>`` is (see the module docstring): whole non-negative numbers,
    known groups and algorithms, no repeats; a malformed one raises
    :class:`WeightsError` naming the source, line (or row) and column.

    Returns
    -------
    dict
        ``{count column: float64 array (n_algorithms, n_groups)}`` for each of
        ``n_mated`` / ``n_nonmated`` the table has, rows and columns in the
        order of ``algorithms`` and ``groups``.

    Examples
    --------
    >>> counts = pd.DataFrame({"group": ["M", "F"], "n_mated": [30, 10]})
    >>> read_counts(counts, pd.Index(["a"]), pd.Index(["F", "M"]))["n_mated"]
    array([[10., 30.]])
    """
    if isinstance(counts, pd.DataFrame):
        frame, where = counts, _Where("<DataFrame>", "frame")
    else:
        frame, where = _read_counts(counts)
    return _validate_counts(frame, where, pd.Index(algorithms), pd.Index(groups), whole=True)


def _from_table(
    table: pd.DataFrame, algorithms: pd.Index, groups: pd.Index
) -> dict[str, np.ndarray]:
    present = [c for c in COUNT_COLUMNS if c in table.columns]
    if not present:
        source = table.attrs.get("source")
        raise WeightsError(NO_COUNT_COLUMNS.format(source=f" ({source})" if source else ""))
    return {
        c: table.pivot(index="algorithm", columns="group", values=c)
        .loc[algorithms, groups]
        .to_numpy(dtype="float64")
        for c in present
    }


def _resolve(
    table: pd.DataFrame, weights
) -> tuple[pd.Index, pd.Index, np.ndarray, np.ndarray, dict[str, np.ndarray], dict[str, str]]:
    """Rates, the weight arrays per count column, and the plain-language description of each."""
    algorithms, groups, fmr, fnmr = rate_matrices(table)
    n = len(groups)
    equal = f"equal group weights (each of the {n} groups counts 1/{n})"
    if isinstance(weights, str) and weights == "equal":
        return (
            algorithms,
            groups,
            fmr,
            fnmr,
            {},
            {
                "n_mated": equal + "; not weighted by comparison counts",
                "n_nonmated": equal + "; not weighted by comparison counts",
            },
        )
    if isinstance(weights, str) and weights == "counts":
        arrays = _from_table(table, algorithms, groups)
        source, what = (
            "the rates table",
            "number of {kind} comparisons ({column} column of {source})",
        )
    elif isinstance(weights, pd.DataFrame):
        arrays = _validate_counts(
            weights, _Where("<DataFrame>", "frame"), algorithms, groups, whole=True
        )
        source, what = (
            "<DataFrame>",
            "number of {kind} comparisons ({column} column of {source}{scope})",
        )
    elif isinstance(weights, Mapping):
        frame, where = _from_mapping(weights)
        arrays = _validate_counts(frame, where, algorithms, groups, whole=False)
        source, what = "<mapping>", "user-supplied {kind} weights ({source})"
    elif isinstance(weights, str) and not Path(weights).is_file():
        word = os.path.basename(weights).strip().lower()  # 'Counts', 'EQUAL': a word, mistyped
        hint = f" (did you mean {word!r}?)" if word in ("equal", "counts") else ""
        raise WeightsError(NO_COUNTS_FILE.format(weights=weights, hint=hint))
    elif isinstance(weights, (str, os.PathLike)):
        frame, where = _read_counts(weights)
        arrays = _validate_counts(frame, where, algorithms, groups, whole=True)
        source, what = (
            where.name,
            "number of {kind} comparisons ({column} column of {source}{scope})",
        )
    else:
        raise WeightsError(BAD_WEIGHTS.format(weights=weights))
    descriptions = {}
    for column in COUNT_COLUMNS:
        _, rate, kind = _RATE_OF[column]
        if column not in arrays:
            descriptions[column] = equal + f"; {source} gives no {column}"
            continue
        total = arrays[column].sum(axis=-1)
        zero = total == 0
        if zero.any():
            raise WeightsError(
                ZERO_WEIGHTS.format(
                    source=source, column=column, algorithms=list(algorithms[zero]), rate=rate
                )
            )
        per_algorithm = not np.allclose(arrays[column], arrays[column][:1], rtol=0, atol=0)
        scope = ", per algorithm" if per_algorithm else ", the same for every algorithm"
        descriptions[column] = "groups weighted by their " + what.format(
            kind=kind, column=column, source=source, scope=scope
        )
    return algorithms, groups, fmr, fnmr, arrays, descriptions


@validate_params("weights", table=RATES_TABLE)
def group_weights(table: pd.DataFrame, *, weights="equal") -> pd.DataFrame:
    """The normalised group weights behind :func:`overall_rates`, one row per (algorithm, group).

    Columns ``algorithm``, ``group``, ``w_fnmr`` (from the mated counts) and
    ``w_fmr`` (from the non-mated counts); each sums to 1 over an algorithm's
    groups.  ``attrs["weights"]`` describes them as in :func:`overall_rates`.

    Examples
    --------
    >>> import pandas as pd
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"Algorithm": ["a"], "FMR.F": [1e-4], "FNMR.F": [0.01],
    ...                              "FMR.M": [3e-4], "FNMR.M": [0.03]}))
    >>> group_weights(t, weights={"F": 1, "M": 3})[["group", "w_fnmr"]]
      group  w_fnmr
    0     F    0.25
    1     M    0.75
    """
    algorithms, groups, fmr, fnmr, arrays, descriptions = _resolve(table, weights)
    shape = fmr.shape
    out = pd.DataFrame(
        {
            "algorithm": pd.array(np.repeat(algorithms.to_numpy(), shape[1]), dtype="string"),
            "group": pd.array(np.tile(groups.to_numpy(), shape[0]), dtype="string"),
        }
    )
    for name, w in _normalised(arrays, shape).items():
        out[name] = w.ravel()
    out.attrs["weights"] = _describe(descriptions)
    return out


def _normalised(arrays: dict[str, np.ndarray], shape) -> dict[str, np.ndarray]:
    """The weights of each rate summing to 1 over the groups: ``w_fnmr`` and ``w_fmr``."""
    out = {}
    for column, name in (("n_mated", "w_fnmr"), ("n_nonmated", "w_fmr")):
        w = arrays.get(column, np.ones(shape))
        out[name] = w / w.sum(axis=-1, keepdims=True)
    return out


def weight_matrices(table: pd.DataFrame, *, weights="equal") -> dict[str, np.ndarray]:
    """The normalised group weights of :func:`group_weights` as (algorithm x group) arrays.

    Returns ``{"w_fnmr": array, "w_fmr": array}``, rows and columns in the
    order of :func:`audit.tables.rates.rate_matrices`; :func:`weighted_total`
    turns them and rates of any leading shape (e.g. replicates) into totals.

    Examples
    --------
    >>> import pandas as pd
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"Algorithm": ["a"], "FMR.F": [1e-4], "FNMR.F": [0.01],
    ...                              "FMR.M": [3e-4], "FNMR.M": [0.03]}))
    >>> weight_matrices(t, weights={"F": 1, "M": 3})["w_fnmr"]
    array([[0.25, 0.75]])
    """
    _, _, fmr, _, arrays, _ = _resolve(table, weights)
    return _normalised(arrays, fmr.shape)


def weighted_total(rates, weights) -> np.ndarray:
    r"""The weighted average of group rates over the last axis, :math:`\sum_g w_g r_g / \sum_g w_g`.

    ``rates`` may carry leading batch axes (e.g. replicates of shape
    (n_replicates, n_algorithms, n_groups)); ``weights`` broadcasts against it.

    >>> weighted_total([[0.01, 0.03]], [[1.0, 3.0]])
    array([0.025])
    """
    rates = np.asarray(rates, dtype="float64")
    weights = np.asarray(weights, dtype="float64")
    return (weights * rates).sum(axis=-1) / weights.sum(axis=-1)


def _describe(descriptions: dict[str, str]) -> str:
    if descriptions["n_mated"] == descriptions["n_nonmated"]:
        return f"total_fnmr and total_fmr: {descriptions['n_mated']}"
    return f"total_fnmr: {descriptions['n_mated']}; total_fmr: {descriptions['n_nonmated']}"


def _left_out(leave_out, groups: pd.Index) -> dict[str, np.ndarray]:
    """``leave_out`` as a mask of the groups per rate; ParameterError when malformed."""
    if leave_out is None:
        return {}
    names = [str(g) for g in groups]
    error = ParameterError(BAD_LEAVE_OUT.format(groups=names, value=leave_out))
    if not isinstance(leave_out, Mapping):
        raise error
    masks = {}
    for rate, chosen in leave_out.items():
        if rate not in ("fmr", "fnmr") or isinstance(chosen, str):
            raise error
        chosen = [str(g) for g in chosen]
        if any(g not in names for g in chosen):
            raise error
        mask = np.isin(names, chosen)
        if mask.all():
            raise error
        if mask.any():
            masks[rate] = mask
    return masks


def _kept_weights(arrays: dict, masks: dict, rate: str, shape) -> np.ndarray:
    """A rate's group weights (its counts, or 1 each), 0 for the groups left out of it."""
    column, _ = RATE_COUNTS[rate]
    w = arrays.get(column, np.ones(shape))
    return w * ~masks[rate] if rate in masks else w


@validate_params("weights", rate=Options(("fmr", "fnmr")), leave_out=optional(Mapping_Any()))
def total_weights(table: pd.DataFrame, rate: str, *, weights="equal", leave_out=None) -> np.ndarray:
    """The weights by which :func:`overall_rates` averages ``rate``'s groups (``"fmr"`` or
    ``"fnmr"``) into its total, as an (algorithm x group) array in the order of
    :func:`audit.tables.rates.rate_matrices`, 0 for a group left out: the total of rates of
    any leading shape (e.g. replicates) is :func:`weighted_total` of them and these.

    >>> import pandas as pd
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"Algorithm": ["a"], "FMR.F": [1e-4], "FNMR.F": [0.01],
    ...                              "FMR.M": [3e-4], "FNMR.M": [0.03]}))
    >>> total_weights(t, "fmr", leave_out={"fmr": ["M"]})
    array([[1., 0.]])
    """
    _, groups, fmr, _, arrays, _ = _resolve(table, weights)
    return _kept_weights(arrays, _left_out(leave_out, groups), rate, fmr.shape)


@validate_params("weights", leave_out=optional(Mapping_Any()), table=RATES_TABLE)
def overall_rates(table: pd.DataFrame, *, weights="equal", leave_out=None) -> pd.DataFrame:
    r"""Total FMR and total FNMR of each algorithm: weighted averages of its group rates.

    .. math::
        \mathrm{FNMR}_{total} = \frac{\sum_g w^{m}_g \mathrm{FNMR}_g}{\sum_g w^{m}_g},\qquad
        \mathrm{FMR}_{total} = \frac{\sum_g w^{n}_g \mathrm{FMR}_g}{\sum_g w^{n}_g}

    Howard et al. sec. 4.5 weight FNMR by each group's number of mated
    comparisons (the pooled FNMR); FMR is weighted likewise by the non-mated
    comparisons.

    Parameters
    ----------
    table
        A validated rates table (:func:`audit.tables.rates.read_rates`).
    weights
        ``"equal"`` (default: every group counts ``1/n_groups``, the only
        defensible choice when no counts are known, as for the Annex 15 CSV);
        ``"counts"``: the table's ``n_mated``/``n_nonmated`` columns;
        a path or a DataFrame: a counts table (columns ``group``, ``n_mated``
        and/or ``n_nonmated``, optional ``algorithm``; whole numbers);
        a mapping ``{group: weight}`` (both rates), ``{group: (n_mated,
        n_nonmated)}`` or ``{"n_mated": {group: n}, "n_nonmated": {group: n}}``
        (finite non-negative numbers).  A rate without counts is averaged
        with equal weights, and the description says so.
    leave_out
        Groups left out of a rate's total, ``{"fmr": ["M.White"]}`` (the
        other groups' weights renormalised; the descriptions say so): a
        calibrated cell (:func:`audit.analysis.calibration.calibrated_cells`).

    Returns
    -------
    pandas.DataFrame
        Indexed by algorithm (table order), columns ``total_fmr`` and
        ``total_fnmr``.  ``attrs["weights"]`` says in plain words which
        weights were used; ``attrs["fnmr_weights"]`` and
        ``attrs["fmr_weights"]`` say it per rate.

    Raises
    ------
    WeightsError
        Unknown ``weights``, missing count columns, unknown or missing groups
        or algorithms, bad or duplicated counts, or weights summing to 0; the
        message names the source, line or key, and column.

    Examples
    --------
    >>> import pandas as pd
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"Algorithm": ["a"], "FMR.F": [1e-4], "FNMR.F": [0.01],
    ...                              "FMR.M": [3e-4], "FNMR.M": [0.03]}))
    >>> overall_rates(t)  # doctest: +NORMALIZE_WHITESPACE
               total_fmr  total_fnmr
    algorithm
    a             0.0002        0.02
    >>> overall_rates(t).attrs["weights"]
    'total_fnmr and total_fmr: equal group weights (each of the 2 groups counts 1/2); not weighted by comparison counts'
    >>> float(overall_rates(t, weights={"n_mated": {"F": 300, "M": 100}})["total_fnmr"].iloc[0])
    0.015
    """
    algorithms, groups, fmr, fnmr, arrays, descriptions = _resolve(table, weights)
    masks = _left_out(leave_out, groups)
    totals = {}
    for column, rates in (("n_nonmated", fmr), ("n_mated", fnmr)):
        rate = _RATE_OF[column][0]
        w = _kept_weights(arrays, masks, rate, rates.shape)
        if rate in masks:
            names = ", ".join(str(g) for g in groups[masks[rate]])
            if column in arrays:
                descriptions[column] += LEFT_OUT.format(rate=f"total_{rate}", groups=names)
            else:
                kept = int((~masks[rate]).sum())
                descriptions[column] = (
                    EQUAL_LEFT_OUT.format(kept=kept, n=len(groups), groups=names)
                    + descriptions[column].partition(")")[2]
                )
        totals[column] = weighted_total(rates, w)
    out = pd.DataFrame(
        {"total_fmr": totals["n_nonmated"], "total_fnmr": totals["n_mated"]}, index=algorithms
    )
    out.attrs["weights"] = _describe(descriptions)
    out.attrs["fnmr_weights"] = descriptions["n_mated"]
    out.attrs["fmr_weights"] = descriptions["n_nonmated"]
    return out


#: Dashes other than the hyphen-minus, which transcriptions of one name use in turn.
_DASHES = dict.fromkeys(map(ord, "\u2010\u2011\u2012\u2013\u2014\u2212\ufe63\uff0d"), "-")


def loose_name(name: str) -> str:
    """A name as :func:`join_accuracy` (and :func:`audit.analysis.compare.match_algorithms`)
    compares it for a near match, never for the join: NFKC-normalised, every dash a
    hyphen-minus, case-folded, stripped."""
    return unicodedata.normalize("NFKC", name).translate(_DASHES).casefold().strip()


#: A join that left an algorithm of the rates table without an accuracy, or an algorithm
#: of the accuracy table unused, as a warning; ``used`` is what those without are left
#: out of (the frontier, a dataset's relations with the accuracy).
UNJOINED = (
    "accuracy {name!r}{source} joined by algorithm name: {joined} of the {total} "
    "algorithms of {table} have it; left out of {used}: {missing} not in the accuracy "
    "table{missing_names}{legend} and {empty} with an empty accuracy cell{empty_names}; "
    "{extra} algorithm(s) of the accuracy table are not in {table}{extra_names}"
)
#: After the names a join missed, where one of them is spelled alike in the other table.
NEAR_LEGEND = (
    " (~: spelled there alike but for case, white space at an end, Unicode normalisation "
    "or the kind of dash; not joined)"
)
#: How many names a sentence lists before it counts the rest.
_NAMED = 5


def _named(names: list[str]) -> str:
    """`` ('a', 'b', 'c')``, at most :data:`_NAMED` names and a count of the rest; "" for
    none."""
    if not names:
        return ""
    shown = ", ".join(names[:_NAMED])
    return f" ({shown}{f' and {len(names) - _NAMED} more' if len(names) > _NAMED else ''})"


def unjoined(join: pd.DataFrame, name: str, source, *, table: str, used: str) -> str | None:
    """The warning (:data:`UNJOINED`) of a :func:`join_accuracy` that left an algorithm of
    the rates table without an accuracy, or one of the accuracy table unused; None where
    every algorithm of both joined.  Names are quoted (a white space at an end shows),
    an unmatched one with the names spelled alike beside it (``'a ' ~ 'a'``).

    >>> acc = pd.Series([0.01, 0.02], index=["a ", "z"], name="Mugshot")
    >>> print(unjoined(join_accuracy(["a", "b"], acc), "Mugshot", None, table="t.csv",
    ...                used="the frontier"))  # doctest: +NORMALIZE_WHITESPACE
    accuracy 'Mugshot' joined by algorithm name: 0 of the 2 algorithms of t.csv have it;
    left out of the frontier: 2 not in the accuracy table ('a' ~ 'a ', 'b') (~: spelled
    there alike but for case, white space at an end, Unicode normalisation or the kind of
    dash; not joined) and 0 with an empty accuracy cell; 2 algorithm(s) of the accuracy
    table are not in t.csv ('a ', 'z')
    """
    status = join["status"].to_numpy(dtype=object)
    names = join["algorithm"].to_numpy(dtype=object)
    near = join["near"].to_numpy(dtype=object)
    absent = status == NOT_IN_ACCURACY
    missing = [
        repr(str(a)) + (" ~ " + ", ".join(repr(n) for n in str(n).split(", ")) if n else "")
        for a, n in zip(names[absent], near[absent], strict=True)
    ]
    extra = [repr(str(a)) for a in names[status == NOT_IN_RATES]]
    empty = [repr(str(a)) for a in names[status == EMPTY_CELL]]
    if not (missing or extra or empty):
        return None
    return UNJOINED.format(
        name=name,
        source=f" from {source}" if source else "",
        joined=int((status == JOINED).sum()),
        total=int((status != NOT_IN_RATES).sum()),
        table=table,
        used=used,
        missing=len(missing),
        missing_names=_named(missing),
        legend=NEAR_LEGEND if any(near[absent]) else "",
        empty=len(empty),
        empty_names=_named(empty),
        extra=len(extra),
        extra_names=_named(extra),
    )


def join_accuracy(algorithms, accuracy: pd.Series) -> pd.DataFrame:
    """An accuracy from another table joined to the algorithms of a rates table, by name.

    Names are matched exactly (as written; ``str`` of each).  Nothing is
    dropped without a row saying why; an unmatched name that matches a name
    of the other table but for case, Unicode normalisation or the kind of
    dash (FRVT 1:1 writes ``x−laboratory-000`` with a minus sign) is shown
    beside it, ``near``, and still not joined: two tables that spell a name
    differently may mean different algorithms, and only the user can say.

    Parameters
    ----------
    algorithms
        The rates table's algorithms, in its order.
    accuracy
        Values indexed by algorithm (:func:`audit.tables.accuracy.read_accuracy`);
        NaN for an empty cell.

    Returns
    -------
    pandas.DataFrame
        One row per algorithm of either table (the rates table's first, in
        its order, then the accuracy table's others): ``algorithm``,
        ``accuracy`` (the accuracy table's value; NaN where its cell is empty
        or it lacks the algorithm), ``status`` (:data:`JOINED`,
        :data:`EMPTY_CELL`, :data:`NOT_IN_ACCURACY` or :data:`NOT_IN_RATES`)
        and ``near`` (for an unmatched name, the other table's names that
        match it loosely, comma-separated; else empty).

    Examples
    --------
    >>> acc = pd.Series([0.01, float("nan"), 0.03], index=["a", "b", "z"], name="Mugshot")
    >>> join_accuracy(["a", "b", "c"], acc)[["algorithm", "accuracy", "status"]]
      algorithm  accuracy                     status
    0         a      0.01                     joined
    1         b       NaN        empty accuracy cell
    2         c       NaN  not in the accuracy table
    3         z      0.03     not in the rates table
    >>> join_accuracy(["x\u2212lab-1"], pd.Series([0.02], index=["X-lab-1"]))["near"].tolist()
    ['X-lab-1', 'x−lab-1']
    """
    names = [str(a) for a in algorithms]
    index = [str(a) for a in accuracy.index]
    values = dict(
        zip(index, pd.to_numeric(accuracy, errors="coerce").to_numpy(dtype="float64"), strict=True)
    )
    known = set(names)
    rows = []
    for name in names:
        if name not in values:
            rows.append((name, np.nan, NOT_IN_ACCURACY))
        elif np.isnan(values[name]):
            rows.append((name, np.nan, EMPTY_CELL))
        else:
            rows.append((name, values[name], JOINED))
    rows += [(name, values[name], NOT_IN_RATES) for name in index if name not in known]
    out = pd.DataFrame(rows, columns=["algorithm", "accuracy", "status"])
    loose: dict[str, dict[str, list[str]]] = {"rates": {}, "accuracy": {}}
    for side, side_names in (("rates", names), ("accuracy", index)):
        for name in side_names:
            loose[side].setdefault(loose_name(name), []).append(name)
    other = {NOT_IN_ACCURACY: "accuracy", NOT_IN_RATES: "rates"}
    out["near"] = [
        ", ".join(loose[other[status]].get(loose_name(name), [])) if status in other else ""
        for name, status in zip(out["algorithm"], out["status"], strict=True)
    ]
    for column in ("algorithm", "status", "near"):
        out[column] = out[column].astype("string")
    return out


__all__ = [
    "WeightsError",
    "join_accuracy",
    "loose_name",
    "group_weights",
    "overall_rates",
    "read_counts",
    "weight_matrices",
    "weighted_total",
]
