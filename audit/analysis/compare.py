"""The cross-dataset audit: every measure on several evaluations, side by side.

A verdict or a ranking that holds on one evaluation may not hold on the next.
This module sets several rates tables (built-in datasets or files) beside
each other:

(a) **verdicts**: the FFMC verdicts of every measure on every dataset
    (:func:`dataset_verdicts`, gathered by :func:`verdict_matrix`), with the
    share of replicates in which each holds where an uncertainty analysis
    applies (:func:`audit.uncertainty.verdict_stability`, computed by the
    caller and passed in); :func:`verdict_summary` says, per measure, whether
    its verdicts agree on every criterion judged on more than one dataset;
(b) **rank agreement between measures**, per dataset: Kendall's tau-b
    between every pair of measures over the algorithms, with a bootstrap
    interval (:func:`audit.analysis.ranks.agreement_matrix` on
    :func:`measure_values`, every measure oriented so that a higher value is
    less fair, the accuracy beside them as an error rate);
(c) **one measure across two datasets** (:func:`compare_pair`): the
    algorithms present in both, matched by name exactly
    (:func:`match_algorithms`: the others listed, a near miss -- case, the
    kind of dash, Unicode normalisation, spaces -- named but not matched), and
    each measure's ranks in one against the other, with Kendall's tau-b and
    Spearman's rho and their intervals.  A measure is compared on what both
    tables hold (:func:`comparable_tables`): the rates both have (an FMR-only
    table and a two-sided one are compared on the FMR: a two-term measure on
    its FMR term alone, as on any FMR-only table) and, by default, the groups
    both have; a measure that does not apply to both is not compared there,
    and the reason is kept;
(d) **what holds** (:func:`holding`, :func:`holding_sentence`): the
    measures that apply to every dataset, whose verdicts agree wherever a
    criterion is judged on more than one dataset (and hold in at least
    ``robust`` of the replicates where that was measured), and whose
    rankings of the shared algorithms agree on every pair of datasets: the
    lower end of the interval of Kendall's tau-b above ``min_tau``.

Everything here reads validated rates tables and writes tidy frames; reading
the datasets is :func:`read_datasets`, drawing is
:mod:`audit.report.plots.compare`, the front page
:mod:`audit.report.comparepage`.
"""

from __future__ import annotations

import itertools
import os
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from audit.analysis.accuracy import join_accuracy, loose_name, overall_rates, unjoined
from audit.analysis.ffmc import CRITERIA, ffmc_table
from audit.analysis.pareto import ACCURACY_LABELS, _calibrated
from audit.analysis.ranks import agreement, average_ranks, min_replicates
from audit.exceptions import ParameterError, UnmatchedAlgorithmsWarning, warn
from audit.measures.contract import PairMeasure
from audit.measures.onesided import NOT_APPLICABLE
from audit.measures.registry import (
    applicable_measures,
    bound_measures,
    evaluate_many,
    table_measure,
)
from audit.tables.layouts import available_rates, default_accuracy
from audit.tables.rates import group_table, read_rates
from audit.uncertainty.checks import FLOOR_LOWER
from audit.validation import Integer, check, refuse, validate_params

#: The key of the accuracy beside the measures (an error rate: higher is worse).
ACCURACY = "accuracy"
#: Where an algorithm is, in :func:`match_algorithms`.
IN_BOTH = "in both"
ONLY_IN = "only in {label}"
#: A verdict holds when it holds in at least this share of the replicates.
ROBUST = 0.95

# Messages: constants, so that tests can check them exactly.
LABELS = "one label per dataset ({count}), each different"
SAME_LABEL = (
    "two datasets are labelled {label!r} ({first} and {second}); give each its own label "
    "(data_labels; on the command line, name a copy of the file differently)"
)
ACCURACY_KEYS = "keys among the dataset labels {labels}"
#: The messages of two datasets start with a word of ours: a warning is said as a sentence,
#: whose first letter is made a capital, and a label is said as it is written.
UNMATCHED = (
    "datasets {first} and {second} share {both} algorithms by exact name; {only_first} are in "
    "{first} only and {only_second} in {second} only, listed in the comparison's table "
    "of algorithms{near}"
)
NEAR = "; {count} of them match a name of the other table but for {how}, not matched: {names}"
FEW_GROUPS = (
    "datasets {first} and {second} share {count} group(s) ({groups}); a measure of a spread needs "
    "two: no measure is compared across them (shared_groups=False compares each "
    "dataset's own groups)"
)
NO_SHARED_RATE = (
    "dataset {first} holds {first_rates} and dataset {second} holds {second_rates}: no shared rate"
)
NOT_ON_BOTH = "not applicable to {label} on what both tables hold ({what}): {reason}"
PAIRS_ACROSS = (
    "reads a cross-group FMR matrix, and two tables are compared on the per-group rates "
    "both hold, not on a matrix"
)


# ------------------------------------------------------------------ reading several tables


def dataset_labels(paths: Sequence[str | os.PathLike], labels: Sequence[str] | None = None):
    """The label of each dataset: ``labels`` if given, else a built-in dataset's name
    (given by name or by its bytes) or the file's stem; refused when two are alike.

    >>> dataset_labels(["annex15", "/data/vendor-x.csv"])
    ['annex15', 'vendor-x']
    """
    from audit.sources.datasets import DATASETS, identify

    if labels is None:
        labels = []
        for given in paths:
            text = os.fspath(given)
            known = DATASETS.get(text) or identify(text)
            labels.append(known.name if known is not None else Path(text).stem)
    elif len(labels) != len(paths) or len(set(labels)) != len(labels):
        raise refuse("data_labels", list(labels), LABELS.format(count=len(paths)))
    seen: dict[str, str] = {}
    for label, given in zip(labels, paths, strict=True):
        if label in seen:
            raise ParameterError(
                SAME_LABEL.format(label=label, first=seen[label], second=os.fspath(given))
            )
        seen[label] = os.fspath(given)
    return list(labels)


def read_datasets(
    paths: Sequence[str | os.PathLike],
    labels: Sequence[str] | None = None,
    **options,
) -> dict[str, pd.DataFrame]:
    """Each of ``paths`` (built-in dataset names or files) read as a rates table, by label.

    ``options`` (those of :func:`audit.tables.rates.read_rates`: ``units``,
    ``columns``, ...) apply to the files that are not built-in datasets; a
    built-in dataset is read as it is published.  At least two are needed.
    """
    from audit.sources.datasets import resolve
    from audit.tables.datasets import read_source

    paths = check(
        "data_paths", [os.fspath(p) for p in paths] if isinstance(paths, (list, tuple)) else paths
    )
    labels = dataset_labels(paths, labels)
    out = {}
    for label, given in zip(labels, paths, strict=True):
        source = resolve(given, kind="rates")
        out[label] = read_source(source, **(options if source.dataset is None else {}))
    return out


def _applying(found: pd.DataFrame) -> list[str]:
    """The names of the measures that :func:`applicable_measures` (of one table, or of
    several concatenated) says apply, in its order."""
    return list(found.loc[found["status"] != NOT_APPLICABLE, "measure"].astype(str))


def candidate_measures(
    tables: Mapping[str, pd.DataFrame], measures: Sequence[str] | None = None
) -> list[str]:
    """The measures compared: those given, or every measure (rate, table and cross-group)
    that applies to at least one of ``tables``, in the registry's order."""
    if measures is not None:
        return [str(m) for m in measures]
    found = pd.concat([applicable_measures(t) for t in tables.values()])
    return list(dict.fromkeys(_applying(found)))  # each once


# ------------------------------------------------------------------ (a) verdicts


def dataset_verdicts(
    table: pd.DataFrame,
    measures: Sequence[str] | None = None,
    *,
    alpha_grid=None,
    seed: int = 0,
    n_random: int = 2000,
    stability: pd.DataFrame | None = None,
    stability_note: str = "",
    point: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """The FFMC verdicts of ``measures`` on one table, with how each measure applies.

    Parameters
    ----------
    table
        A validated rates table.
    measures
        Measure names (default: every rate measure, and the cross-group ones
        on a cross-group table); a measure that does not apply gets ``passed``
        NA on every criterion and its reason in ``note``.
    alpha_grid, seed, n_random
        As :func:`audit.analysis.ffmc.ffmc_table`.
    stability
        :func:`audit.uncertainty.verdict_stability` of the same table, when an
        uncertainty analysis applies: its ``agreement`` is joined.
    stability_note
        What was done for the stability, or why nothing was (a sentence).
    point
        :func:`audit.analysis.ffmc.ffmc_table` of the same table, measures and
        settings, already made: its verdicts are taken instead of auditing again
        (:func:`dataset_audit` gives it to the stability as well).

    Returns
    -------
    pandas.DataFrame
        One row per (measure, criterion): ``measure``, ``label``,
        ``criterion``, ``status`` (computed, one term, not applicable),
        ``note``, ``passed`` (nullable boolean), ``evidence`` and
        ``agreement`` (NaN when not measured).  ``attrs["stability"]`` holds
        ``stability_note``.
    """
    applies = applicable_measures(table, measures).set_index("measure")
    audited = point
    if audited is None:
        audited = ffmc_table(table, measures, alpha_grid=alpha_grid, seed=seed, n_random=n_random)
    out = audited[["measure", "label", "criterion", "passed", "evidence"]].copy()
    out["status"] = [applies["status"].get(m, NOT_APPLICABLE) for m in out["measure"]]
    out["note"] = [applies["note"].get(m, "") for m in out["measure"]]
    out["agreement"] = np.nan
    if stability is not None and len(stability):
        keyed = stability.set_index(["measure", "criterion"])["agreement"]
        out["agreement"] = [
            float(keyed.get((m, c), np.nan))
            for m, c in zip(out["measure"], out["criterion"], strict=True)
        ]
    out["passed"] = out["passed"].astype("boolean")
    out = out[
        ["measure", "label", "criterion", "status", "note", "passed", "evidence", "agreement"]
    ]
    out.attrs["stability"] = stability_note
    return out.reset_index(drop=True)


def dataset_audit(
    table: pd.DataFrame,
    measures: Sequence[str] | None = None,
    *,
    alpha_grid=None,
    seed: int = 0,
    n_random: int = 2000,
    method: str = "auto",
    n_replicates: int = 50,
    alpha: float = 0.5,
    floor_lower: float | None = FLOOR_LOWER,
) -> pd.DataFrame:
    """:func:`dataset_verdicts` of one table with the stability of each verdict: the
    FFMC audit run once, on the table, then on the replicates of its uncertainty
    analysis (:func:`audit.uncertainty.analyse` of the measures that apply, by
    ``method``, ``n_replicates``, ``seed``, ``alpha`` and ``floor_lower``;
    :func:`audit.uncertainty.verdict_stability` with the audit's ``alpha_grid``,
    ``seed`` and ``n_random``).  ``attrs["stability"]`` says what was done, or why
    nothing was.  Each table's is independent of the others': a report computes them
    side by side."""
    from audit import uncertainty

    applicable = _applying(applicable_measures(table, measures))
    point = ffmc_table(table, measures, alpha_grid=alpha_grid, seed=seed, n_random=n_random)
    result, how = None, "no measure applies"
    if applicable:
        result, how = uncertainty.analyse(
            table,
            applicable,
            method=method,
            n_replicates=n_replicates,
            seed=seed,
            alpha=alpha,
            floor_lower=floor_lower,
        )
    stability = None
    if result is not None:
        stability = uncertainty.verdict_stability(
            table,
            result,
            applicable,
            n_replicates=n_replicates,
            seed=seed,
            alpha_grid=alpha_grid,
            n_random=n_random,
            point=point,
        )
    return dataset_verdicts(
        table,
        measures,
        alpha_grid=alpha_grid,
        seed=seed,
        n_random=n_random,
        stability=stability,
        stability_note=how,
        point=point,
    )


def verdict_matrix(verdicts: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """The verdicts of several datasets in one long table, ``dataset`` first.

    Every measure applicable to at least one dataset is kept, on every
    dataset (n/a, with the reason, where it does not apply); a measure that
    applies nowhere is left out.  ``attrs["stability"]`` maps each dataset to
    its stability note.
    """
    frames = [v.assign(dataset=label) for label, v in verdicts.items()]
    matrix = pd.concat(frames, ignore_index=True)
    somewhere = matrix.groupby("measure", sort=False)["status"].apply(
        lambda s: (s != NOT_APPLICABLE).any()
    )
    matrix = matrix[matrix["measure"].map(somewhere)]
    columns = ["dataset"] + [c for c in matrix.columns if c != "dataset"]
    out = matrix[columns].reset_index(drop=True)
    out.attrs["stability"] = {label: v.attrs.get("stability", "") for label, v in verdicts.items()}
    return out


def _word(passed) -> str:
    return "n/a" if pd.isna(passed) else ("pass" if passed else "FAIL")


def verdict_summary(matrix: pd.DataFrame, *, robust: float = ROBUST) -> pd.DataFrame:
    """Per measure: where it applies and whether its verdicts agree across datasets.

    A criterion is *compared* when it is judged (pass or fail) on more than
    one dataset; the verdicts *hold* when the measure applies to every dataset,
    at least one criterion is compared, every compared criterion has the same
    verdict on every dataset that judges it, and no verdict of a compared
    criterion holds in fewer than ``robust`` of the replicates where that was
    measured.

    Returns
    -------
    pandas.DataFrame
        One row per measure: ``measure``, ``label``, ``applies`` (the datasets
        it applies to, comma-separated), ``everywhere``, ``compared`` (the
        compared criteria), ``differs`` (``FFMC.2: pass on a, FAIL on b``; ``;``
        between criteria), ``shaky`` (``a FFMC.2 (80%)``), ``verdicts_hold``.
    """
    datasets = list(dict.fromkeys(matrix["dataset"]))
    rows = []
    for measure, part in matrix.groupby("measure", sort=False):
        applies = [
            d for d in datasets if (part[part["dataset"] == d]["status"] != NOT_APPLICABLE).any()
        ]
        compared, differs, shaky = [], [], []
        for criterion in CRITERIA:
            judged = part[(part["criterion"] == criterion) & part["passed"].notna()]
            if judged["dataset"].nunique() < 2:
                continue
            compared.append(criterion)
            if judged["passed"].nunique() > 1:
                differs.append(
                    f"{criterion}: "
                    + ", ".join(
                        f"{_word(p)} on {d}"
                        for d, p in zip(judged["dataset"], judged["passed"], strict=True)
                    )
                )
            weak = judged[judged["agreement"] < robust]
            shaky += [
                f"{d} {criterion} ({100 * a:.0f}%)"
                for d, a in zip(weak["dataset"], weak["agreement"], strict=True)
            ]
        everywhere = len(applies) == len(datasets)
        rows.append(
            {
                "measure": measure,
                "label": str(part["label"].iloc[0]),
                "applies": ", ".join(applies),
                "everywhere": everywhere,
                "compared": ", ".join(compared),
                "differs": "; ".join(differs),
                "shaky": ", ".join(shaky),
                "verdicts_hold": everywhere and bool(compared) and not differs and not shaky,
            }
        )
    return pd.DataFrame(
        rows,
        columns=[
            "measure",
            "label",
            "applies",
            "everywhere",
            "compared",
            "differs",
            "shaky",
            "verdicts_hold",
        ],
    )


# ------------------------------------------------------------------ (b) values and accuracy


def measure_values(
    table: pd.DataFrame, measures: Sequence[str] | None = None, *, alpha: float = 0.5
) -> pd.DataFrame:
    """Every applicable measure's value per algorithm, oriented so that higher is less fair.

    A measure whose higher value is fairer (FDR) is negated; an undefined
    value (flagged by the measure, or not finite) is NaN, so that it enters no
    ranking.  Measures that do not apply to ``table`` are left out.

    Returns
    -------
    pandas.DataFrame
        Indexed by algorithm (the table's order), one column per measure.
        ``attrs``: ``labels`` (measure to label), ``undefined`` (measure to
        the number of undefined values), ``rules`` (measure to the one-term
        rule it was computed under, "" when none), ``negated`` (the measures
        negated).
    """
    names = _applying(applicable_measures(table, measures))
    algorithms = pd.Index(pd.unique(table["algorithm"]), name="algorithm")
    out = pd.DataFrame(index=algorithms)
    attrs: dict = {"labels": {}, "undefined": {}, "rules": {}, "negated": []}
    if names:
        values = evaluate_many(table, names, alpha=alpha, zero_division="flag")
        specs = {s.name: s for s in bound_measures(table, names)}
        for name, part in values.groupby("measure", sort=False):
            spec = specs.get(name) or table_measure(name)
            v = part.set_index("algorithm")["value"].astype("float64")
            bad = part.set_index("algorithm")["undefined"].astype(bool) | ~np.isfinite(v)
            v = v.where(~bad)
            if spec.higher_is_fairer:
                v = -v
                attrs["negated"].append(str(name))
            out[str(name)] = v.reindex(algorithms).to_numpy()
            attrs["labels"][str(name)] = spec.label
            attrs["undefined"][str(name)] = int(bad.sum())
            rule = part["rule"].iloc[0] if "rule" in part else ""
            attrs["rules"][str(name)] = rule if isinstance(rule, str) else ""
    out.attrs.update(attrs)
    return out


def dataset_accuracy(
    table: pd.DataFrame, source=None, column: str | None = None, *, dataset: str | None = None
) -> tuple[pd.Series, str, pd.DataFrame | None]:
    """A dataset's accuracy per algorithm (an error rate: lower is better).

    Without ``source``: the total FNMR over the groups (equal weights), or the
    total FMR of an FMR-only table, leaving out a calibrated cell
    (:mod:`audit.analysis.calibration`), as the frontier's default axis does.
    With ``source`` and ``column``: that column of another table
    (:func:`audit.tables.accuracy.read_accuracy`), joined by algorithm name
    exactly (:func:`audit.analysis.accuracy.join_accuracy`); an algorithm of ``dataset``
    (its label) left without it, or of the other table unused, is warned of
    (:data:`audit.analysis.accuracy.UNJOINED`), as the frontier's join warns.

    Returns
    -------
    (values, label, join)
        ``values`` indexed by the table's algorithms (NaN where the join left
        none), its label, and the join (``None`` for a total rate).
    """
    from audit.tables.accuracy import accuracy_label, read_accuracy

    algorithms = pd.Index(pd.unique(table["algorithm"]), name="algorithm")
    if source is None:
        axis = default_accuracy(table)
        calibrated, said = _calibrated(table, axis, "exclude")
        overall = overall_rates(table, leave_out=calibrated)
        label = ACCURACY_LABELS[axis] + (" (calibrated cell left out)" if said else "")
        return overall[axis].reindex(algorithms).rename(ACCURACY), label, None
    series = read_accuracy(source, column)
    join = join_accuracy(algorithms, series)
    said = unjoined(
        join,
        str(series.name) if series.name is not None else str(column),
        series.attrs.get("source", source),
        table=f"dataset {dataset}" if dataset is not None else "the dataset",
        used="its relations with the measures",
    )
    if said is not None:
        warn(said, UnmatchedAlgorithmsWarning)
    values = pd.Series(
        join["accuracy"].to_numpy(dtype="float64")[: len(algorithms)], index=algorithms
    )
    label = str(series.attrs.get("label") or accuracy_label(column, str(source)))
    return values.rename(ACCURACY), label, join


def with_accuracy(values: pd.DataFrame, accuracy: pd.Series) -> pd.DataFrame:
    """``values`` with the accuracy as a last column (:data:`ACCURACY`, or ``accuracy
    (error rate)`` when a measure already has that name)."""
    key = ACCURACY if ACCURACY not in values.columns else f"{ACCURACY} (error rate)"
    out = values.copy()
    out[key] = accuracy.reindex(values.index).to_numpy(dtype="float64")
    out.attrs = dict(values.attrs)
    out.attrs["accuracy"] = key
    return out


# ------------------------------------------------------------------ (c) across datasets


def _difference(a: str, b: str) -> str:
    """What two loosely equal names differ by, in words."""
    from audit.analysis.accuracy import _DASHES

    if a.casefold() == b.casefold():
        return "case"
    if a.translate(_DASHES) == b.translate(_DASHES):
        return "the kind of dash"
    if a.strip() == b.strip():
        return "surrounding spaces"
    if unicodedata.normalize("NFKC", a) == unicodedata.normalize("NFKC", b):
        return "Unicode normalisation"
    return "case, dashes, spaces or Unicode normalisation"


def match_algorithms(
    first: Sequence[str], second: Sequence[str], labels: Sequence[str] = ("first", "second")
) -> pd.DataFrame:
    """The algorithms of two tables matched by name, exactly.

    Nothing is left out: an algorithm of one table only gets a row saying so.
    A name matching one of the other table but for case, the kind of dash
    (FRVT 1:1 writes ``x−laboratory-000`` with a minus sign), spaces or
    Unicode normalisation is named beside it (``near``, with ``differs``
    saying how) and still not matched: only the user can say that two
    spellings mean one algorithm.

    Returns
    -------
    pandas.DataFrame
        One row per algorithm: the first table's in its order, then the
        second's others; ``algorithm``, ``status`` (:data:`IN_BOTH` or
        ``only in <label>``), ``near`` (comma-separated) and ``differs``.

    Examples
    --------
    >>> match_algorithms(["a-1", "b-1", "C-2"], ["a-1", "c-2", "d\u22121"], ["x", "y"])  # doctest: +NORMALIZE_WHITESPACE
      algorithm     status near differs
    0       a-1    in both
    1       b-1  only in x
    2       C-2  only in x  c-2    case
    3       c-2  only in y  C-2    case
    4       d−1  only in y
    """
    first = [str(a) for a in dict.fromkeys(first)]
    second = [str(a) for a in dict.fromkeys(second)]
    in_second, in_first = set(second), set(first)
    loose: list[dict[str, list[str]]] = [{}, {}]
    for side, names in enumerate((first, second)):
        for name in names:
            loose[side].setdefault(loose_name(name), []).append(name)
    rows = []
    for side, names, other in ((0, first, in_second), (1, second, in_first)):
        for name in names:
            if name in other:
                if side == 0:
                    rows.append((name, IN_BOTH, "", ""))
                continue
            near = [n for n in loose[1 - side].get(loose_name(name), []) if n != name]
            differs = ", ".join(dict.fromkeys(_difference(name, n) for n in near))
            rows.append((name, ONLY_IN.format(label=labels[side]), ", ".join(near), differs))
    out = pd.DataFrame(rows, columns=["algorithm", "status", "near", "differs"])
    out.attrs["labels"] = list(labels)
    return out


def check_comparable(
    first: pd.DataFrame,
    second: pd.DataFrame,
    *,
    shared_groups: bool = True,
    names: tuple[str, str] | None = None,
) -> tuple[list[str], list[str]]:
    """The rates and the groups two tables share, in the first's order; a
    :class:`~audit.exceptions.ParameterError` naming them (``names``, else their
    sources) where they share no rate, or (``shared_groups``) fewer than two groups:
    what :func:`comparable_tables` needs, checked before any work by ``audit compare``.

    >>> import pandas as pd
    >>> from audit.tables.rates import read_rates
    >>> a = read_rates(pd.DataFrame({"algorithm": "x", "group": ["F", "M"], "fmr": [1e-4, 2e-4]}))
    >>> b = read_rates(pd.DataFrame({"algorithm": "x", "group": ["A", "B"], "fmr": [1e-4, 2e-4]}))
    >>> check_comparable(a, a)
    (['fmr'], ['F', 'M'])
    >>> check_comparable(a, b, names=("lab one", "lab two"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    audit.exceptions.ParameterError: datasets lab one and lab two share 0 group(s) (); ...
    """
    a_name, b_name = names or (
        first.attrs.get("source", "the first table"),
        second.attrs.get("source", "the second table"),
    )
    rates = [r for r in available_rates(first) if r in available_rates(second)]
    if not rates:
        raise ParameterError(
            NO_SHARED_RATE.format(
                first=a_name,
                second=b_name,
                first_rates="/".join(available_rates(first)).upper(),
                second_rates="/".join(available_rates(second)).upper(),
            )
        )
    b_groups = set(pd.unique(second["group"]))
    groups = [g for g in pd.unique(first["group"]) if g in b_groups]
    if shared_groups and len(groups) < 2:
        raise ParameterError(
            FEW_GROUPS.format(
                first=a_name, second=b_name, count=len(groups), groups=", ".join(map(str, groups))
            )
        )
    return rates, groups


def comparable_tables(
    first: pd.DataFrame, second: pd.DataFrame, *, shared_groups: bool = True
) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """Two tables reduced to what both hold: the shared rates and (by default) groups.

    Each is read again (:func:`audit.tables.rates.read_rates`) from its rows
    of the shared groups and its columns of the shared rates, so that a
    measure means the same on both sides: on an FMR-only table beside a
    two-sided one, both are FMR-only (a two-term measure is computed on its
    FMR term alone on both).  A cross-group table becomes its within-group
    FMRs.

    Returns
    -------
    (first, second, what)
        ``what`` says what is compared (``"FMR of F.Black, F.White, M.Black,
        M.White"``).

    Raises
    ------
    audit.exceptions.ParameterError
        When the tables share no rate, or fewer than two groups.
    """
    rates, groups = check_comparable(first, second, shared_groups=shared_groups)
    a_groups, b_groups = list(pd.unique(first["group"])), list(pd.unique(second["group"]))

    def reduced(table: pd.DataFrame, keep: list[str]) -> pd.DataFrame:
        attributes = list(group_table(table).columns)
        rows = table[table["group"].isin(keep)]
        frame = rows[["algorithm", *attributes, "group", *rates]].reset_index(drop=True)
        out = read_rates(frame, attributes=attributes or None)
        out.attrs["source"] = table.attrs.get("source", "<DataFrame>")
        return out

    what = "/".join(r.upper() for r in rates)
    if shared_groups:
        what += " of " + ", ".join(str(g) for g in groups)
        return reduced(first, groups), reduced(second, groups), what
    return reduced(first, a_groups), reduced(second, b_groups), what + " of each one's groups"


def _ranks(values: pd.Series) -> np.ndarray:
    """Rank 1 for the fairest (lowest oriented value), mid-ranks for ties, NaN kept."""
    x = values.to_numpy(dtype="float64")
    out = np.full(len(x), np.nan)
    finite = np.isfinite(x)
    out[finite] = average_ranks(x[finite])
    return out


@dataclass
class PairComparison:
    """One pair of datasets compared (:func:`compare_pair`)."""

    first: str
    second: str
    what: str
    matched: pd.DataFrame
    agreement: pd.DataFrame
    ranks: pd.DataFrame
    not_compared: dict[str, str] = field(default_factory=dict)

    @property
    def shared(self) -> list[str]:
        """The algorithms in both tables (exact names), in the first table's order."""
        return list(self.matched.loc[self.matched["status"] == IN_BOTH, "algorithm"])


@validate_params("alpha", "seed", "level", "shared_groups", n_replicates=Integer(0))
def compare_pair(
    first: tuple[str, pd.DataFrame],
    second: tuple[str, pd.DataFrame],
    measures: Sequence[str] | None = None,
    *,
    alpha: float = 0.5,
    accuracies: Mapping[str, pd.Series] | None = None,
    shared_groups: bool = True,
    n_replicates: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> PairComparison:
    """Each measure's ranking of the algorithms of two datasets, one against the other.

    Parameters
    ----------
    first, second
        ``(label, table)`` of each dataset.
    measures
        Measure names (default: every one that applies to both).
    alpha
        The measures' alpha (on two two-sided tables; an FMR-only comparison
        takes the FMR term alone).
    accuracies
        Each dataset's accuracy by label (:func:`dataset_accuracy`), compared
        as :data:`ACCURACY`: the same algorithm should be about as accurate
        on two evaluations of one kind, a check of the matching.
    shared_groups
        Compare on the groups both tables hold (default) or on each one's own.
    n_replicates, seed, level
        The bootstrap of the intervals (:func:`audit.analysis.ranks.agreement`).

    Returns
    -------
    PairComparison
        ``matched`` (:func:`match_algorithms`); ``agreement``, one row per
        measure compared: ``measure``, ``label``, ``n`` (shared algorithms with
        a value on both sides), ``kendall``, ``kendall_low``,
        ``kendall_high``, ``spearman``, ``spearman_low``, ``spearman_high``;
        ``ranks``, one row per (measure, shared algorithm): ``measure``,
        ``algorithm``, ``rank_first``, ``rank_second`` (1 = the fairest, or
        the most accurate, among the shared algorithms); ``not_compared``,
        measure to reason.  A warning
        (:class:`~audit.exceptions.UnmatchedAlgorithmsWarning`) says how many
        algorithms are in one table only.
    """
    (a_label, a_table), (b_label, b_table) = first, second
    matched = match_algorithms(
        pd.unique(a_table["algorithm"]), pd.unique(b_table["algorithm"]), (a_label, b_label)
    )
    _warn_unmatched(matched, a_label, b_label)
    shared = list(matched.loc[matched["status"] == IN_BOTH, "algorithm"])
    a_view, b_view, what = comparable_tables(a_table, b_table, shared_groups=shared_groups)
    if measures is None:  # every measure that applies to one of the two tables
        measures = candidate_measures({a_label: a_table, b_label: b_table})
    not_compared = {}
    usable = []
    for name in (str(m) for m in measures):
        if isinstance(table_measure(name), PairMeasure):
            not_compared[name] = PAIRS_ACROSS
            continue
        notes = {}
        for label, view in ((a_label, a_view), (b_label, b_view)):
            row = applicable_measures(view, [name]).iloc[0]
            if row["status"] == NOT_APPLICABLE:
                notes[label] = str(row["note"])
        if len(notes) == 2 and len(set(notes.values())) == 1:
            label = f"either ({a_label}, {b_label})"
            notes = {label: next(iter(notes.values()))}
        if notes:
            not_compared[name] = "; ".join(
                NOT_ON_BOTH.format(label=label, what=what, reason=note)
                for label, note in notes.items()
            )
        else:
            usable.append(name)
    a_values = measure_values(a_view, usable, alpha=alpha)
    b_values = measure_values(b_view, usable, alpha=alpha)
    labels = dict(a_values.attrs["labels"])
    if accuracies is not None and a_label in accuracies and b_label in accuracies:
        a_values = with_accuracy(a_values, accuracies[a_label])
        b_values = with_accuracy(b_values, accuracies[b_label])
        labels[a_values.attrs["accuracy"]] = "accuracy (error rate)"
    a_values, b_values = a_values.loc[shared], b_values.loc[shared]
    rows, ranks = [], []
    for name in a_values.columns:
        x, y = a_values[name], b_values[name]
        row = {"measure": name, "label": labels.get(name, name)}
        for method in ("kendall", "spearman"):
            got = agreement(
                x,
                y,
                method=method,
                n_replicates=n_replicates,
                seed=seed,
                level=level,
                names=(a_label, b_label, name),
            )
            row.update(
                {
                    "n": got["n"],
                    method: got["value"],
                    f"{method}_low": got["low"],
                    f"{method}_high": got["high"],
                }
            )
        rows.append(row)
        both = x.notna().to_numpy() & y.notna().to_numpy()
        ranks.append(
            pd.DataFrame(
                {
                    "measure": name,
                    "algorithm": np.asarray(shared, dtype=object)[both],
                    "rank_first": _ranks(x[both]),
                    "rank_second": _ranks(y[both]),
                }
            )
        )
    columns = ["measure", "label", "n"] + [
        f"{m}{s}" for m in ("kendall", "spearman") for s in ("", "_low", "_high")
    ]
    agreement_frame = pd.DataFrame(rows, columns=columns)
    agreement_frame.attrs.update(
        {"n_replicates": n_replicates, "seed": seed, "level": level, "what": what}
    )
    return PairComparison(
        first=a_label,
        second=b_label,
        what=what,
        matched=matched,
        agreement=agreement_frame,
        ranks=pd.concat(ranks, ignore_index=True)
        if ranks
        else pd.DataFrame(columns=["measure", "algorithm", "rank_first", "rank_second"]),
        not_compared=not_compared,
    )


def _warn_unmatched(matched: pd.DataFrame, first: str, second: str) -> None:
    status = matched["status"]
    only_first = int((status == ONLY_IN.format(label=first)).sum())
    only_second = int((status == ONLY_IN.format(label=second)).sum())
    if not only_first and not only_second:
        return
    near_rows = matched[matched["near"] != ""]
    near = ""
    if len(near_rows):
        near = NEAR.format(
            count=len(near_rows),
            how=" or ".join(dict.fromkeys(", ".join(near_rows["differs"]).split(", "))),
            names=", ".join(
                f"{a} ~ {n}" for a, n in zip(near_rows["algorithm"], near_rows["near"], strict=True)
            ),
        )
    warn(
        UNMATCHED.format(
            first=first,
            second=second,
            both=int((status == IN_BOTH).sum()),
            only_first=only_first,
            only_second=only_second,
            near=near,
        ),
        UnmatchedAlgorithmsWarning,
    )


def compare_all(
    tables: Mapping[str, pd.DataFrame], measures: Sequence[str] | None = None, **options
) -> list[PairComparison]:
    """:func:`compare_pair` on every pair of datasets, in the order given."""
    return [
        compare_pair((a, tables[a]), (b, tables[b]), measures, **options)
        for a, b in itertools.combinations(tables, 2)
    ]


def comparison_tables(pairs: Sequence[PairComparison]) -> dict[str, pd.DataFrame]:
    """The frames of every pair of datasets compared, one table each, ``first`` and
    ``second`` naming the pair: ``compare_algorithms`` (the matching),
    ``compare_ranks``, ``compare_cross_agreement`` and ``compare_not_compared``
    (measure, reason)."""
    out: dict[str, list[pd.DataFrame]] = {
        "compare_algorithms": [],
        "compare_ranks": [],
        "compare_cross_agreement": [],
        "compare_not_compared": [],
    }
    for pair in pairs:
        keys = {"first": pair.first, "second": pair.second}
        out["compare_algorithms"].append(pair.matched.assign(**keys))
        out["compare_ranks"].append(pair.ranks.assign(**keys))
        out["compare_cross_agreement"].append(pair.agreement.assign(**keys, compared_on=pair.what))
        out["compare_not_compared"].append(
            pd.DataFrame(
                {"measure": list(pair.not_compared), "reason": list(pair.not_compared.values())}
            ).assign(**keys)
        )
    frames = {}
    for name, parts in out.items():
        frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        first = [c for c in ("first", "second") if c in frame.columns]
        frames[name] = frame[first + [c for c in frame.columns if c not in first]]
    return frames


def verdict_grid(matrix: pd.DataFrame, *, robust: float = ROBUST) -> pd.DataFrame:
    """:func:`verdict_matrix` as a grid for reading: one row per measure (its label), one
    column per (dataset, criterion), ``pass``/``FAIL``/``n/a``, a share of replicates
    after a verdict that holds in fewer than ``robust`` of them (``pass (80%)``)."""
    cells = [
        _word(p) + (f" ({100 * a:.0f}%)" if a < robust else "")
        for p, a in zip(matrix["passed"], matrix["agreement"], strict=True)
    ]
    grid = matrix.assign(cell=cells).pivot_table(
        index=["measure", "label"],
        columns=["dataset", "criterion"],
        values="cell",
        aggfunc="first",
        sort=False,
    )
    grid = grid.droplevel("measure")
    return grid.reindex(
        columns=pd.MultiIndex.from_tuples(
            [
                (d, c)
                for d in dict.fromkeys(matrix["dataset"])
                for c in dict.fromkeys(matrix["criterion"])
            ],
            names=["dataset", "criterion"],
        )
    )


def striking_pairs(rank_agreement: pd.DataFrame, n: int = 5) -> pd.DataFrame:
    """On each dataset, the ``n`` pairs of variables that rank the algorithms least alike
    (lowest Kendall's tau-b), from :func:`audit.analysis.ranks.agreement_matrix` frames
    with a ``dataset`` column."""
    ranked = rank_agreement[rank_agreement["tau"].notna()].sort_values(["dataset", "tau"])
    return ranked.groupby("dataset", sort=False).head(n).reset_index(drop=True)


def check_accuracy_keys(
    labels: Sequence[str], sources: Mapping | None, columns: Mapping | None
) -> None:
    """Refuse accuracy sources or columns keyed by something other than a dataset's label,
    and a source without a column (or the reverse)."""
    sources, columns = dict(sources or {}), dict(columns or {})
    for name, given in (("accuracy_sources", sources), ("accuracy_columns", columns)):
        unknown = [k for k in given if k not in labels]
        if unknown:
            raise refuse(name, given, ACCURACY_KEYS.format(labels=list(labels)))
    if set(sources) != set(columns):
        raise refuse(
            "accuracy_columns", columns, f"a column for each of {sorted(sources)}, and no other"
        )


# ------------------------------------------------------------------ (d) what holds


@validate_params("min_tau")
def holding(
    summary: pd.DataFrame,
    pairs: Sequence[PairComparison],
    *,
    min_tau: float = 0.0,
) -> pd.DataFrame:
    """Per measure: do its verdicts and its rankings hold on every dataset?

    Parameters
    ----------
    summary
        :func:`verdict_summary` of the datasets.
    pairs
        :func:`compare_pair` of every pair of them.
    min_tau
        A ranking holds across two datasets when the lower end of the
        interval of Kendall's tau-b exceeds this (default 0: the two rankings
        agree beyond what resampling the algorithms explains).

    Returns
    -------
    pandas.DataFrame
        ``summary``'s rows with ``rankings`` (``a~b: tau 0.41 [0.27, 0.55]``;
        ``;`` between pairs), ``rankings_hold`` (compared on every pair, and
        holding on each), ``holds`` (verdicts and rankings) and ``reason`` (why
        not, in words; "" when it holds).
    """
    out = summary.copy()
    texts, holds_r, reasons = [], [], []
    for measure, verdicts_ok, differs, shaky, everywhere in zip(
        out["measure"],
        out["verdicts_hold"],
        out["differs"],
        out["shaky"],
        out["everywhere"],
        strict=True,
    ):
        parts, ok, why = [], True, []
        for pair in pairs:
            name = f"{pair.first}~{pair.second}"
            rows = pair.agreement[pair.agreement["measure"] == measure]
            if not len(rows) or not np.isfinite(rows["kendall"].iloc[0]):
                ok = False
                parts.append(f"{name}: not compared")
                continue
            r = rows.iloc[0]
            bounded = np.isfinite(r["kendall_low"])  # too few replicates: no interval
            interval = f"[{r['kendall_low']:.2f}, {r['kendall_high']:.2f}]"
            parts.append(
                f"{name}: tau {r['kendall']:.2f} {interval if bounded else '(no interval)'}"
            )
            if not bounded:
                ok = False
                why.append(
                    f"its rankings on {pair.first} and {pair.second} are not judged: Kendall's "
                    f"tau-b {r['kendall']:.2f} has no interval ({_too_few([pair])})"
                )
            elif not (r["kendall_low"] > min_tau):
                ok = False
                why.append(
                    f"its rankings on {pair.first} and {pair.second} do not agree "
                    f"(Kendall's tau-b {r['kendall']:.2f}, interval from {r['kendall_low']:.2f})"
                )
        if not everywhere:
            why.insert(0, "it does not apply to every dataset")
        elif differs:
            why.insert(0, f"its verdicts differ ({differs})")
        elif shaky:
            why.insert(
                0, f"a verdict holds in fewer than {100 * ROBUST:.0f}% of replicates ({shaky})"
            )
        elif not verdicts_ok:
            why.insert(0, "no criterion is judged on more than one dataset")
        if any(p.endswith("not compared") for p in parts) and everywhere:
            why.append("its ranking is not compared on every pair of datasets")
        texts.append("; ".join(parts))
        holds_r.append(ok)
        reasons.append("; ".join(why))
    out["rankings"] = texts
    out["rankings_hold"] = holds_r
    out["holds"] = out["verdicts_hold"].astype(bool) & out["rankings_hold"]
    out["reason"] = reasons
    out.attrs["min_tau"] = min_tau
    return out


def holding_sentence(
    held: pd.DataFrame, labels: Sequence[str], pairs: Sequence[PairComparison] = ()
) -> str:
    """The answer of the comparison in a few sentences (plain text): which measures hold
    (:func:`holding`), by which rule, and how strongly their rankings agree across the
    datasets beside the agreement of the accuracy, when ``pairs`` are given."""
    names = _and(list(labels))
    every = "both" if len(labels) == 2 else "all of"
    judged = held[held["everywhere"].astype(bool)]
    if not len(judged):
        return f"No measure applies to {every} {names}, so none can hold on every dataset."
    criteria = sorted({c for text in judged["compared"] for c in str(text).split(", ") if c})
    min_tau = held.attrs.get("min_tau", 0.0)
    shared = sorted({len(p.shared) for p in pairs})
    if shared == [0]:
        algorithms = "the shared algorithms (the datasets share none: no ranking is compared)"
    elif len(shared) == 1:
        algorithms = f"the {shared[0]} shared algorithms"
    else:
        algorithms = "the shared algorithms"
    beyond = "beyond chance" if min_tau == 0 else f"with a tau-b above {min_tau:g}"
    rule = (
        f"the same FFMC verdicts wherever a criterion is judged on more than one dataset "
        f"({_and(criteria) or 'none'}) and rankings of {algorithms} that agree {beyond} "
        f"(the {_level(pairs)} interval of Kendall's tau-b above {min_tau:g})"
    )
    kept = held[held["holds"].astype(bool)]
    where = "both" if len(labels) == 2 else "all of them"
    lows = [p.agreement["kendall_low"].to_numpy(dtype=float) for p in pairs]
    lows = np.concatenate(lows) if lows else np.empty(0)
    if lows.size and not np.isfinite(lows).any():
        text = (
            f"No measure is judged to hold on {names}: the rankings' agreement has no "
            f"interval ({_too_few(pairs)}), and a measure holds only with {rule}."
        )
    elif not len(kept):
        text = (
            f"No measure holds on {names}: of the {len(judged)} that apply to {where}, "
            f"none keeps {rule}."
        )
    else:
        if len(kept) == len(judged) == 1:
            count = "The one measure that applies"
        elif len(kept) == len(judged) == 2:
            count = "Both measures that apply"
        elif len(kept) == len(judged):
            count = f"All {len(kept)} measures that apply"
        else:
            count = f"{len(kept)} of the {len(judged)} measures that apply"
        verb = "holds" if len(kept) == 1 else "hold"
        text = f"{count} to {every} {names} {verb} on {where}, with {rule}: {_and(list(kept['label']))}."
    return " ".join([text, *_strength(judged, pairs)])


def _too_few(pairs: Sequence[PairComparison]) -> str:
    """Why the rank agreements of ``pairs`` have no interval, in words: no bootstrap
    replicates, or fewer than a percentile interval at their level needs
    (:func:`audit.analysis.ranks.min_replicates`)."""
    counts = sorted({int(p.agreement.attrs.get("n_replicates", 0)) for p in pairs})
    if counts in ([], [0]):
        return "no bootstrap replicates"
    level = max(float(p.agreement.attrs.get("level", 0.95)) for p in pairs)
    drawn = " or ".join(str(c) for c in counts)
    noun = "replicate" if counts == [1] else "replicates"
    return (
        f"{drawn} bootstrap {noun}, where a {100 * level:g}% interval needs at least "
        f"{min_replicates(level)}"
    )


def _level(pairs: Sequence[PairComparison]) -> str:
    levels = {p.agreement.attrs.get("level") for p in pairs} - {None}
    return f"{100 * levels.pop():g}%" if len(levels) == 1 else "bootstrap"


def _strength(judged: pd.DataFrame, pairs: Sequence[PairComparison]) -> list[str]:
    """How strongly the rankings agree across datasets, beside the accuracy's agreement."""
    rows = pd.concat([p.agreement for p in pairs], ignore_index=True) if pairs else None
    if rows is None or not len(rows):
        return []
    measures = rows[rows["measure"].isin(set(judged["measure"])) & rows["kendall"].notna()]
    if not len(measures):
        return []
    labels = dict(zip(judged["measure"], judged["label"], strict=True))
    low = measures.loc[measures["kendall"].idxmin()]
    high = measures.loc[measures["kendall"].idxmax()]
    if len(measures) == 1:  # one measure on one pair: its value, not a range
        text = (
            f"Across the datasets, Kendall's tau-b of {labels[low['measure']]}'s rankings "
            f"is {low['kendall']:.2f}"
        )
    else:
        text = (
            f"Across the datasets, Kendall's tau-b of a measure's rankings runs from "
            f"{low['kendall']:.2f} ({labels[low['measure']]}) to {high['kendall']:.2f} "
            f"({labels[high['measure']]})"
        )
    measured = set(judged["measure"])
    accuracy = [
        (f"{p.first} and {p.second}", value)
        for p in pairs
        for measure, value in zip(p.agreement["measure"], p.agreement["kendall"], strict=True)
        if str(measure).startswith(ACCURACY) and measure not in measured and np.isfinite(value)
    ]
    if len(accuracy) == 1:
        text += f", against {accuracy[0][1]:.2f} for the algorithms' accuracy"
    elif accuracy:  # several pairs: each value named by its pair
        values = ", ".join(f"{value:.2f} ({pair})" for pair, value in accuracy)
        text += f", against {values} for the algorithms' accuracy"
    return [text + "."]


def _and(items: Sequence[str]) -> str:
    items = [str(i) for i in items]
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


__all__ = [
    "ACCURACY",
    "IN_BOTH",
    "ONLY_IN",
    "PairComparison",
    "candidate_measures",
    "check_accuracy_keys",
    "check_comparable",
    "compare_all",
    "comparison_tables",
    "compare_pair",
    "comparable_tables",
    "dataset_accuracy",
    "dataset_audit",
    "dataset_labels",
    "dataset_verdicts",
    "holding",
    "holding_sentence",
    "match_algorithms",
    "measure_values",
    "read_datasets",
    "striking_pairs",
    "verdict_grid",
    "verdict_matrix",
    "verdict_summary",
    "with_accuracy",
]
