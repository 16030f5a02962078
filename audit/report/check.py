"""What ``audit check`` says of a rates table it read: its shape, groups, columns, units,
the columns it left out as asked, the spread of each rate, its calibrated cells, and which
measures apply to it; and of an accuracy table, each column's algorithms and empty cells.

Every user string (file name, group label, column name) is escaped for the terminal
(:func:`audit.report.text.one_line`): a label carrying an escape sequence or
a bidirectional override is shown as written, never acted on.
"""

from __future__ import annotations

import os

import pandas as pd

from audit.report.text import one_line


def _listed(names) -> str:
    """``names`` joined by ", ", each as written; quoted where a name holds a comma or
    begins or ends with white space, which the list would otherwise hide.

    >>> print(_listed(["Mean", "a,b", " x"]))
    Mean, 'a,b', ' x'
    """
    shown = [str(n) for n in names]
    return ", ".join(
        one_line(repr(n)) if "," in n or n != n.strip() else one_line(n) for n in shown
    )


def _stats(name: str, values: pd.Series) -> str:
    return (
        f"{name}: min {values.min():.3g}, median {values.median():.3g}, "
        f"max {values.max():.3g}, zeros {(values == 0).sum()}"
    )


def check_lines(path: str | os.PathLike, table: pd.DataFrame, sha256: str) -> list[str]:
    """The lines ``audit check`` prints for ``table``, read from ``path`` (checksum ``sha256``).

    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"algorithm": ["a", "a"], "group": ["F", "M"],
    ...                              "fmr": [1e-4, 2e-4], "fnmr": [0.01, 0.02]}))
    >>> check_lines("t.csv", t, "0" * 64)[:3]  # doctest: +NORMALIZE_WHITESPACE
    ['t.csv: valid; sha256 0000000000000000000000000000000000000000000000000000000000000000',
     '1 algorithms x 2 groups = 2 rows', 'groups: F, M']
    """
    from audit.analysis.calibration import calibrated_cells
    from audit.analysis.crossgroup import asymmetry_summary
    from audit.measures.registry import applicable_measures
    from audit.sources.datasets import DATASETS
    from audit.tables.crossgroup import cross_group
    from audit.tables.layouts import available_rates

    algorithms = table["algorithm"].nunique()
    groups = list(dict.fromkeys(table["group"]))
    cross = cross_group(table)
    lines = [f"{one_line(path)}: valid; sha256 {sha256}"]
    dataset = DATASETS.get(table.attrs.get("dataset") or "")
    if dataset is not None:
        lines.append(f"built-in dataset {dataset.name}: {dataset.title}")
    if table.attrs.get("ignored_columns"):
        ignored = _listed(table.attrs["ignored_columns"])
        lines.append(f"ignored columns (as asked, not read): {ignored}")
    if cross is None:
        lines.append(f"{algorithms} algorithms x {len(groups)} groups = {len(table)} rows")
    else:
        n_pairs = int(cross.measured.sum())
        square = "full square" if n_pairs == len(groups) ** 2 else "declared pairs"
        lines.append(
            f"cross-group table: {algorithms} algorithms x {n_pairs} pairs ({square} of "
            f"{len(groups)} groups, enrolment group x probe group) = {algorithms * n_pairs} rows"
        )
    lines.append("groups: " + _listed(groups))
    if cross is not None:
        lines.append(
            f"the FMR measures read the {len(groups)} within-group FMRs, FMR(g, g), of each "
            "algorithm: an FMR-only table"
        )
        if table.attrs.get("sides"):
            lines.append(table.attrs["sides"])
    lines.append("columns: " + _listed(table.columns))
    lines.append(f"units: {table.attrs['units']}")
    for column in available_rates(table):
        name = f"{column} (within-group)" if cross is not None else column
        lines.append(_stats(name, table[column]))
    if cross is not None:
        pairs = cross.frame()
        cross_pairs = pairs.loc[pairs["group_1"] != pairs["group_2"], "fmr"]
        lines.append(_stats("fmr (cross-group)", cross_pairs))
        summary = asymmetry_summary(table)
        lines.append(
            f"FMR(a, b) != FMR(b, a) in {summary['differ']} of {summary['pairs']} algorithm x "
            f"pairs of groups ({summary['share']:.0%}); largest ratio {summary['largest_fold']:.3g}"
        )
    for column in ("fmr", "fnmr"):
        if column not in table.columns:
            lines.append(f"{column}: absent ({available_rates(table)[0].upper()}-only table)")
    calibration = calibrated_cells(table)
    said = list(calibration["sentence"]) if len(calibration) else [calibration.attrs["sentence"]]
    lines += [f"calibration: {one_line(sentence)}" for sentence in said]
    for row in applicable_measures(table).itertuples():
        note = f": {row.note}" if row.note else ""
        lines.append(f"measure {row.measure}: {row.status}{one_line(note)}")
    return lines


def accuracy_lines(path: str | os.PathLike, sha256: str, dataset=None) -> list[str]:
    """The lines ``audit check`` prints for an accuracy table (an ``--accuracy-from``
    table): each column's algorithms, empty cells and range."""
    from audit.tables.accuracy import accuracy_columns, read_accuracy

    lines = [f"{one_line(path)}: valid; sha256 {sha256}"]
    if dataset is not None:
        lines.append(
            f"built-in dataset {dataset.name}: {dataset.title}, an accuracy table: give it to "
            "--accuracy-from with --accuracy-column"
        )
    for column in accuracy_columns(path):
        values = read_accuracy(path, column)
        lines.append(
            f"column {one_line(repr(column))}: {values.notna().sum()} of {len(values)} "
            f"algorithms, {values.isna().sum()} empty; min {values.min():.3g}, "
            f"max {values.max():.3g}"
        )
    return lines
