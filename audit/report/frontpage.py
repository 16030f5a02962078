"""The report's front page, ``index.html``: the findings first, then the notebooks,
figures, tables and the run.

The page is built after the notebooks have run, from the tables they wrote into
``tables/``, so it shows what the report holds whatever the input (a two-sided
table like Annex 15, FMR or FNMR only, comparison scores, streamed tables) and
whichever notebooks ran, and it says plainly when a finding does not apply.
Each section reads the tables of one kind, found by file name:

* **FFMC verdicts**: ``ffmc_table*.csv`` (``measure``, ``label``, ``criterion``,
  ``passed``, ``paper``, ``evidence``, and ``grouping`` in a scores report), with
  the matching ``ffmc_verdict_stability*.csv`` (``agreement`` over replicates),
  ``measure_applicability*.csv`` (a one-sided table) and ``measure_registry.csv``
  (each measure's ISO/IEC 19795-10 term: :func:`audit.measures.registry.measure_table`);
* **Calibration**: ``calibration*.csv`` (:func:`audit.analysis.calibration.calibrated_cells`),
  the cells whose rate is fixed by how the thresholds were set; shown only when
  there is one;
* **Group orderings**: ``group_extremes.csv`` and ``group_orderings.csv``
  (:mod:`audit.analysis.orderings`): per rate, how often each group is the worst
  and the best, and the most frequent orderings of the groups with how many
  distinct ones there are (:func:`orderings_data` builds what the section shows);
* **Pareto frontier**: ``pareto_all_<measure>.csv`` (``accuracy``, ``fairness``,
  ``on_frontier``, and ``accuracy_label``, ``calibration`` when written) with
  ``frontier_probability_<measure>.csv`` and, for an accuracy joined from
  another table, ``accuracy_join_<measure>.csv`` (what was not joined, why);
* **How sure**: ``robustness_*.csv`` (``topic``, ``sentence``:
  :func:`audit.report.outputs.save_sentences`);
* **Measures** (reports from scores): ``measures.csv``;
* **Data quality**: the ``flagged`` rows of ``data_quality*.csv``;
* **Warnings**: ``warnings_*.csv`` (:mod:`audit.report.notices`).

Under the title, the input: when a report does not carry a copy of it (a
built-in dataset whose licence forbids redistribution), a note says so and
where the same bytes come from (the manifest's ``input_copy`` and
``input_source``; ``accuracy_input`` for a second table).

Every string taken from a table, a file name or the manifest is escaped; the
page is self-contained (its style inline, no script, nothing fetched).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from audit.analysis.text import number
from audit.report.text import escape_html as e

#: Names of the accuracy axes of a down-select, as the notebooks write them.
ACCURACY_LABELS = {"total_fnmr": "Total FNMR", "total_fmr": "Total FMR"}
#: A verdict or a frontier membership counts as robust from this share of replicates.
ROBUST = 0.95
#: Shown when a section's table could not be read.
UNREADABLE = "This section could not be built from {table}: {reason}."

STYLE = """
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1f2328;
       max-width: 1120px; margin: 0 auto; padding: 1.2em 1.5em 3em; }
h1 { font-size: 1.75em; margin: 0.2em 0 0.1em; }
h2 { font-size: 1.3em; margin: 1.6em 0 0.5em; padding-bottom: 0.2em; border-bottom: 2px solid #d8dee4; }
h3 { font-size: 1.05em; margin: 1.2em 0 0.4em; }
a { color: #0550ae; }
code { font-size: 0.92em; overflow-wrap: anywhere; }
.meta { color: #57606a; margin: 0 0 0.6em; }
nav { font-size: 0.92em; margin: 0 0 1em; padding: 0.45em 0.8em; background: #f6f8fa; border-radius: 6px; }
nav a { margin-right: 0.9em; white-space: nowrap; }
.answer { font-size: 1.05em; margin: 0.3em 0; }
.note, .source { font-size: 0.88em; color: #57606a; }
.source { margin: 0.2em 0 0.8em; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 0.4em 0; }
th, td { text-align: left; vertical-align: top; padding: 4px 10px; border-bottom: 1px solid #d8dee4; }
thead th { border-bottom: 2px solid #afb8c1; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.verdicts td.cell { text-align: center; min-width: 6.5em; }
.badge { display: inline-block; min-width: 3.4em; padding: 1px 8px; border-radius: 10px; font-weight: 600;
         font-size: 0.9em; }
.pass { background: #dafbe1; color: #116329; }
.fail { background: #ffebe9; color: #a40e26; }
.na { background: #eaeef2; color: #57606a; }
.paper, .share { display: block; font-size: 0.8em; color: #57606a; }
.differs { color: #a40e26; font-weight: 600; }
.bar { display: inline-block; width: 90px; height: 0.7em; background: #eaeef2; margin-right: 6px;
       vertical-align: middle; border-radius: 2px; overflow: hidden; }
.bar span { display: block; height: 100%; background: #0969da; }
ul { padding-left: 1.4em; } li { margin: 0.15em 0; }
table.run td { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.88em;
               overflow-wrap: anywhere; }
figure { display: inline-block; width: 48%; margin: 0.5%; vertical-align: top; }
figure img { width: 100%; border: 1px solid #eaeef2; }
figcaption { font-size: 0.88em; color: #57606a; }
@media (max-width: 800px) { figure { width: 98%; } }
"""


# ------------------------------------------------------------------ reading the tables


def _read(path: Path) -> pd.DataFrame:
    """A table as the notebooks wrote it: an empty cell is missing, any other text kept
    (an algorithm called ``NA`` stays ``'NA'``)."""
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def _truth(value) -> bool | None:
    """True, False, or None for a missing or unknown value (a CSV cell of a boolean column)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value in ("True", "False"):
        return value == "True"
    if isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value)):
        return bool(value)
    return None


def _float(value) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def _href(path: Path, folder: Path) -> str:
    return e(quote(path.relative_to(folder).as_posix()))


def _source(paths: Sequence[Path], folder: Path) -> str:
    links = ", ".join(f'<a href="{_href(p, folder)}">{e(p.name)}</a>' for p in paths)
    return f'<p class="source">From {links}.</p>'


def _names(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c`` (escaped)."""
    items = [e(i) for i in items]
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _count(n: int, noun: str) -> str:
    """``1 measure``, ``2 measures``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _list(items: Sequence[str]) -> str:
    return "<ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>"


# ------------------------------------------------------------------ FFMC verdicts

_WORDS = {True: ("pass", "pass"), False: ("FAIL", "fail"), None: ("n/a", "na")}


def _badge(passed: bool | None) -> str:
    word, css = _WORDS[passed]
    return f'<span class="badge {css}">{word}</span>'


def _verdict_cell(passed, paper, agreement, evidence) -> str:
    title = f' title="{e(evidence)}"' if isinstance(evidence, str) and evidence else ""
    html = _badge(passed)
    if paper is not None:
        word = "pass" if paper else "fail"
        differs = passed is not None and passed != paper
        html += (
            f'<span class="paper{" differs" if differs else ""}">paper: {word}'
            + (" (differs)" if differs else "")
            + "</span>"
        )
    if agreement is not None and not math.isnan(agreement) and agreement < ROBUST:
        html += f'<span class="share">holds in {100 * agreement:.0f}% of replicates</span>'
    return f'<td class="cell"{title}>{html}</td>'


def _verdict_answer(cells: pd.DataFrame, labels: dict[str, str]) -> str:
    """The verdict table in sentences: who passes every criterion, who fails which, and how
    the audit compares with the paper's Table 2."""
    sentences = []
    passing, failing, unjudged = [], [], []
    for measure, part in cells.groupby("measure", sort=False):
        judged = part[part["passed"].notna()]
        if not len(judged):
            unjudged.append(labels[measure])
        elif judged["passed"].all():
            passing.append(labels[measure])
        else:
            failing.append(labels[measure])
    n_measures = cells["measure"].nunique()
    if passing:
        text = f"<strong>{_names(passing)}</strong> " + ("passes" if len(passing) == 1 else "pass")
        text += " every criterion that applies"
        if failing:
            verb = "fails" if len(failing) == 1 else "fail"
            text += f"; the other {_count(len(failing), 'measure')} {verb} at least one"
        sentences.append(text + ".")
    elif failing and n_measures == 1:
        sentences.append(f"<strong>{_names(failing)}</strong> fails at least one criterion.")
    elif failing:
        sentences.append(f"None of the {n_measures} measures passes every criterion that applies.")
    if unjudged:
        sentences.append(f"No criterion applies to {_names(unjudged)} on this table.")
    paper = cells[cells["paper"].notna()]
    if len(paper):
        judged = paper[paper["passed"].notna()]
        agree = judged[judged["passed"] == judged["paper"]]
        differ = judged[judged["passed"] != judged["paper"]]
        measures = [labels[m] for m in dict.fromkeys(paper["measure"])]
        text = (
            f"Howard et al. (Table 2) judge {_names(measures)}: the audit agrees with "
            + (
                f"all {len(judged)} of their verdicts"
                if len(agree) == len(judged) and len(judged)
                else f"{len(agree)} of their {len(judged)} verdicts"
            )
            + (" that apply here" if len(judged) < len(paper) else "")
        )
        if len(differ):
            text += "; it differs on " + ", ".join(
                f"{e(labels[r.measure])} {e(r.criterion)} (paper: "
                f"{'pass' if r.paper else 'fail'}, audit: {'pass' if r.passed else 'fail'})"
                for r in differ.itertuples()
            )
        if len(judged) < len(paper):
            text += (
                f" ({len(paper) - len(judged)} concern a criterion not applicable to this table)"
            )
        sentences.append(text + ".")
    if cells["agreement"].notna().any():
        shaky = cells[cells["agreement"] < ROBUST]
        if len(shaky):
            sentences.append(
                f"{_count(len(shaky), 'verdict')} "
                + ("holds" if len(shaky) == 1 else "hold")
                + f" in fewer than {100 * ROBUST:.0f}% of the replicates "
                "(marked in the table)."
            )
        else:
            sentences.append(
                f"Every verdict holds in at least {100 * ROBUST:.0f}% of the replicates of the "
                "uncertainty analysis."
            )
    first, rest = sentences[0], sentences[1:]
    return f'<p class="answer">{first}</p>' + (f"<p>{' '.join(rest)}</p>" if rest else "")


def _not_applicable(cells: pd.DataFrame, labels: dict[str, str], criteria: list[str]) -> str:
    """One line per reason a verdict is n/a, naming the cells it covers."""
    missing = cells[cells["passed"].isna()]
    if not len(missing):
        return ""
    lines = []
    for reason, part in missing.groupby("evidence", sort=False, dropna=False):
        reason = str(reason).removeprefix("not applicable: ") if isinstance(reason, str) else ""
        by_criteria: dict[tuple[str, ...], list[str]] = {}
        for measure, rows in part.groupby("measure", sort=False):
            by_criteria.setdefault(tuple(rows["criterion"]), []).append(labels[measure])
        where = "; ".join(
            ("every criterion" if list(c) == criteria else e(", ".join(c))) + " of " + _names(m)
            for c, m in by_criteria.items()
        )
        lines.append(f"{where}: {e(reason) or 'no reason given'}")
    return '<p class="note"><strong>n/a</strong> (not applicable): ' + "; ".join(lines) + ".</p>"


def _verdict_table(cells: pd.DataFrame, terms: dict[str, str] | None = None) -> str:
    """The verdicts, one row per measure, with each measure's ISO/IEC 19795-10 term when
    ``terms`` (measure to term) is given."""
    if not len(cells):
        return "<p>The FFMC table is empty: no measure was audited.</p>"
    criteria = list(dict.fromkeys(cells["criterion"]))
    labels = dict(zip(cells["measure"], cells["label"], strict=False))
    head = "".join(f"<th>{e(c)}</th>" for c in criteria)
    if terms is not None:
        head += "<th>ISO/IEC 19795-10 term</th>"
    rows = []
    for measure, part in cells.groupby("measure", sort=False):
        by = part.set_index("criterion")
        tds = "".join(
            _verdict_cell(
                by.loc[c, "passed"],
                by.loc[c, "paper"],
                by.loc[c, "agreement"],
                by.loc[c, "evidence"],
            )
            if c in by.index
            else "<td></td>"
            for c in criteria
        )
        name = labels[measure]
        extra = (
            f' <span class="note">(<code>{e(measure)}</code>)</span>'
            if name.lower() != str(measure).lower()
            else ""
        )
        if terms is not None:
            tds += f'<td class="note">{e(terms.get(str(measure), ""))}</td>'
        rows.append(f"<tr><th>{e(name)}{extra}</th>{tds}</tr>")
    table = (
        '<div class="scroll"><table class="verdicts"><thead><tr><th>Measure</th>'
        f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )
    return _verdict_answer(cells, labels) + table + _not_applicable(cells, labels, criteria)


def _iso_terms(tables: Path) -> dict[str, str] | None:
    """Measure to ISO/IEC 19795-10 term, from ``measure_registry.csv`` (None without it)."""
    path = tables / "measure_registry.csv"
    if not path.is_file():
        return None
    frame = _read(path)
    if not {"measure", "iso_term"} <= set(frame.columns):
        return None
    terms = frame["iso_term"].where(frame["iso_term"].notna(), "")
    return dict(zip(frame["measure"].astype(str), terms.astype(str), strict=True))


def _cells(frame: pd.DataFrame, stability: pd.DataFrame | None) -> pd.DataFrame:
    cells = pd.DataFrame(
        {
            "measure": frame["measure"].astype(str),
            "label": frame["label"].astype(str)
            if "label" in frame
            else frame["measure"].astype(str),
            "criterion": frame["criterion"].astype(str),
            "passed": [_truth(v) for v in frame["passed"]],
            "paper": [_truth(v) for v in frame["paper"]] if "paper" in frame else None,
            "evidence": frame["evidence"] if "evidence" in frame else None,
            "agreement": math.nan,
        }
    )
    cells = cells.astype({"passed": object, "paper": object, "agreement": "float64"})
    if stability is not None and {"measure", "criterion", "agreement"} <= set(stability):
        share = dict(
            zip(
                zip(
                    stability["measure"].astype(str),
                    stability["criterion"].astype(str),
                    strict=True,
                ),
                pd.to_numeric(stability["agreement"], errors="coerce"),
                strict=True,
            )
        )
        keys = zip(cells["measure"], cells["criterion"], strict=True)
        cells["agreement"] = [share.get(k, math.nan) for k in keys]
    return cells


def verdicts_section(folder: Path) -> str:
    tables = folder / "tables"
    paths = sorted(tables.glob("ffmc_table*.csv"))
    if not paths:
        return "<p>This report has no FFMC audit.</p>"
    blocks = []
    terms = _iso_terms(tables)
    for path in paths:
        suffix = path.stem.removeprefix("ffmc_table")
        frame = _read(path)
        stab_path = tables / f"ffmc_verdict_stability{suffix}.csv"
        stability = _read(stab_path) if stab_path.is_file() else None
        sources = [path] + ([stab_path] if stability is not None else [])
        if "grouping" in frame:
            groupings = frame.groupby("grouping", sort=False)
            for grouping, part in groupings:
                title = f"<h3>Groups by {e(grouping)}</h3>" if groupings.ngroups > 1 else ""
                blocks.append(title + _verdict_table(_cells(part, None), terms))
        else:
            blocks.append(_verdict_table(_cells(frame, stability), terms))
        blocks.append(
            _source(sources + ([tables / "measure_registry.csv"] if terms else []), folder)
        )
    applicability = sorted(tables.glob("measure_applicability*.csv"))
    for path in applicability:
        blocks.append(_applicability(_read(path)) + _source([path], folder))
    legend = (
        '<p class="note">Each criterion is a computation with a stated pass rule (Howard et al. '
        "sec. 3.4; the rules are in the FFMC notebook); <em>paper</em> is the verdict of Howard et "
        "al. Table 2 where the paper gives one. Hover over a verdict for its evidence."
        + (
            " The ISO/IEC 19795-10 term is the kind of measure the standard names that each "
            "corresponds to, where the correspondence is clear (empty otherwise); it is not a "
            "claim of conformance with the standard."
            if terms
            else ""
        )
        + "</p>"
    )
    return "".join(blocks) + legend


def _applicability(frame: pd.DataFrame) -> str:
    """A one-sided table: which measures are computed on one term, which not at all."""
    parts = []
    frame = frame.assign(note=frame["note"].where(frame["note"].notna(), ""))
    # one sentence per (status, reason), so each reason stands beside the measures it is for
    for (status, note), rows in frame.groupby(["status", "note"], sort=False):
        if status == "computed":
            continue
        status = _STATUS.get(str(status), str(status))
        parts.append(
            f"{e(status[:1].upper() + status[1:])}: {_names(rows['label'].astype(str).tolist())}"
            + (f" &mdash; {e(str(note))}" if note else "")
        )
    if not parts:
        return ""
    return '<p class="note"><strong>One-sided table.</strong> ' + ". ".join(parts) + ".</p>"


_STATUS = {"one term": "computed on one term"}


# ------------------------------------------------------------------ the frontier


def frontier_section(folder: Path) -> str:
    tables = folder / "tables"
    paths = sorted(tables.glob("pareto_all_*.csv"))
    if not paths:
        return "<p>This report has no Pareto down-select.</p>"
    return "".join(_frontier(path, folder) for path in paths)


def _text(row, key: str) -> str:
    """A text cell of a table's first row, "" when absent or empty."""
    value = row.get(key, "") if len(row) else ""
    return value if isinstance(value, str) else ""


def _frontier(path: Path, folder: Path) -> str:
    name = path.stem.removeprefix("pareto_all_")
    frame = _read(path)
    frame["algorithm"] = frame["algorithm"].astype(str)
    first = frame.iloc[0] if len(frame) else {}
    label = str(first.get("measure_label", name)) if len(frame) else name
    alpha = _float(first.get("alpha")) if len(frame) else None
    axis = str(first.get("accuracy_axis", "")) if len(frame) else ""
    axis_label = _text(first, "accuracy_label") or ACCURACY_LABELS.get(axis, axis or "accuracy")
    fairness_label = str(first.get("fairness_label", "")) if len(frame) else ""
    if not fairness_label or fairness_label == "nan":  # a table written before the column
        fairness_label = label + (f" (alpha {alpha:g})" if alpha is not None else "")
    on = frame[[bool(_truth(v)) for v in frame["on_frontier"]]].sort_values("accuracy")
    prob_path = path.with_name(f"frontier_probability_{name}.csv")
    probability = None
    if prob_path.is_file():
        p = _read(prob_path)
        probability = dict(zip(p["algorithm"].astype(str), p["frontier_probability"], strict=True))
    head = (
        f'<tr><th>Algorithm</th><th class="num">{e(axis_label)}</th>'
        f'<th class="num">{e(fairness_label)}</th>'
        + ("<th>Membership probability</th>" if probability is not None else "")
        + "</tr>"
    )
    accuracy, fairness = _column(on["accuracy"]), _column(on["fairness"])
    rows = []
    for r, acc, fair in zip(on.itertuples(), accuracy, fairness, strict=True):
        cells = (
            f'<td>{e(r.algorithm)}</td><td class="num">{e(acc)}</td><td class="num">{e(fair)}</td>'
        )
        if probability is not None:
            cells += _probability(probability.get(r.algorithm))
        rows.append(f"<tr>{cells}</tr>")
    html = (
        f'<p class="answer"><strong>{len(on)} of {len(frame)}</strong> algorithms are on the '
        f"Pareto frontier of {e(axis_label)} and {e(fairness_label)}: any algorithm off it is "
        "beaten by one on it that is at least as accurate and at least as fair.</p>"
        f'<div class="scroll"><table class="frontier"><thead>{head}</thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )
    calibration = _text(first, "calibration")
    if calibration:
        html += f'<p class="note">{e(calibration[:1].upper() + calibration[1:])}.</p>'
    join_path = path.with_name(f"accuracy_join_{name}.csv")
    if join_path.is_file():
        html += _join_note(join_path, axis_label)
    if probability is None:
        html += (
            '<p class="note">No membership probability: the uncertainty analysis did not run '
            "for this down-select (How sure, below, says why).</p>"
        )
    else:
        members = set(on["algorithm"])
        near = sorted(
            (
                (p, a)
                for a, p in probability.items()
                if a not in members and (_float(p) or 0.0) >= 1 - ROBUST
            ),
            reverse=True,
        )
        html += (
            '<p class="note">Membership probability: the share of replicates of the uncertainty '
            "analysis in which the algorithm is on the frontier. "
            + (
                "Off the frontier with the point rates but on it in some replicates: "
                + ", ".join(f"{e(a)} ({float(p):.3f})" for p, a in near)
                + "."
                if near
                else f"No other algorithm is on it in {100 * (1 - ROBUST):.0f}% of replicates or more."
            )
            + "</p>"
        )
    extra = [p for p in (prob_path, join_path) if p.is_file()]
    return html + _source([path, *extra], folder)


def _join_note(path: Path, axis_label: str) -> str:
    """What the join of an accuracy from another table left out, by reason."""
    join = _read(path)
    status = join["status"].astype(str)
    names = join["algorithm"].astype(str)
    near = join["near"] if "near" in join else pd.Series([""] * len(join))
    joined = int((status == "joined").sum())
    parts = []
    for reason in dict.fromkeys(status[status != "joined"]):
        chosen = [
            e(n) + (f" (~ {e(m)})" if isinstance(m, str) and m else "")
            for n, m in zip(names[status == reason], near[status == reason], strict=True)
        ]
        shown = ", ".join(chosen[:_JOIN_NAMED])
        if len(chosen) > _JOIN_NAMED:
            shown += f" and {len(chosen) - _JOIN_NAMED} more"
        parts.append(f"{_count(len(chosen), 'algorithm')} {e(reason)}: {shown}")
    if not parts:
        return f'<p class="note">{e(axis_label)} joined by algorithm name: every algorithm has one.</p>'
    return (
        f'<p class="note">{e(axis_label)} joined by algorithm name, exactly: {joined} algorithms '
        "on both sides; left out of the frontier or unused: "
        + "; ".join(parts)
        + " (~: spelled alike there but for case or the kind of dash, not joined).</p>"
    )


#: How many algorithms a note of the join names for each reason.
_JOIN_NAMED = 8


# ------------------------------------------------------------------ calibration


def calibration_section(folder: Path) -> str | None:
    """The calibrated cells (:mod:`audit.analysis.calibration`); None when there is none."""
    paths = sorted((folder / "tables").glob("calibration*.csv"))
    frames = [(p, _read(p)) for p in paths]
    frames = [(p, f) for p, f in frames if len(f)]
    if not frames:
        return None
    sentences = list(dict.fromkeys(str(s) for _, f in frames for s in f["sentence"]))
    items = [e(s[:1].upper() + s[1:]) + "." for s in sentences]
    return (
        '<p class="answer">A cell of this table is a <strong>calibration, not a '
        "measurement</strong>: each algorithm's threshold was set so that it holds one value. "
        "It is kept out of what it would distort.</p>"
        + _list(items)
        + _source([p for p, _ in frames], folder)
    )


# ------------------------------------------------------------------ group orderings

#: How many of the most frequent orderings the page shows, and how many of their algorithms.
ORDERINGS_SHOWN = 5
ORDERING_ALGORITHMS_NAMED = 6


def orderings_data(folder: Path) -> dict | None:
    """What the group-orderings section shows, from ``group_extremes.csv`` and
    ``group_orderings.csv`` (:mod:`audit.analysis.orderings`); None when the report has
    neither.

    Returns ``{"rates": [...], "sources": [paths]}``, one entry per rate: ``rate``
    (``"FMR"``), ``algorithms``, ``distinct`` (orderings), ``groups`` (records of
    ``group``, ``worst``, ``worst_tied``, ``best``, ``best_tied``) and ``top`` (the
    :data:`ORDERINGS_SHOWN` most frequent orderings: ``ordering``, ``count``, ``share``,
    ``algorithms`` as a list).
    """
    tables = folder / "tables"
    extremes_path, counts_path = tables / "group_extremes.csv", tables / "group_orderings.csv"
    if not extremes_path.is_file() or not counts_path.is_file():
        return None
    extremes, counts = _read(extremes_path), _read(counts_path)
    rates = []
    for rate in dict.fromkeys(extremes["rate"].astype(str)):
        groups = extremes[extremes["rate"].astype(str) == rate]
        mine = counts[counts["rate"].astype(str) == rate].sort_values("rank")
        top = [
            {
                "ordering": str(r.ordering),
                "count": int(r.count),
                "share": float(r.share),
                "algorithms": [a for a in str(r.algorithms).split(", ") if a],
            }
            for r in mine.head(ORDERINGS_SHOWN).itertuples()
        ]
        rates.append(
            {
                "rate": rate.upper(),
                "algorithms": int(groups["algorithms"].iloc[0]) if len(groups) else 0,
                "distinct": len(mine),
                "groups": groups[["group", "worst", "worst_tied", "best", "best_tied"]]
                .astype({"group": str})
                .to_dict("records"),
                "top": top,
            }
        )
    return {"rates": rates, "sources": [extremes_path, counts_path]}


def orderings_section(folder: Path) -> str | None:
    """Which group fares worst and best, and in which order (:func:`orderings_data`)."""
    data = orderings_data(folder)
    if data is None:
        return None
    blocks = []
    for rate in data["rates"]:
        n = rate["algorithms"]
        worst = max(rate["groups"], key=lambda g: g["worst"])
        best = max(rate["groups"], key=lambda g: g["best"])
        blocks.append(
            f"<h3>{e(rate['rate'])}</h3><p>"
            f"<strong>{e(worst['group'])}</strong> has the highest {e(rate['rate'])} alone for "
            f"{worst['worst']} of {n} algorithms, <strong>{e(best['group'])}</strong> the lowest "
            f"alone for {best['best']}. {_count(rate['distinct'], 'distinct ordering')} of the "
            f"groups among {_count(n, 'algorithm')}"
            + (
                f" (the {ORDERINGS_SHOWN} most frequent are shown"
                + ("; nearly one per algorithm" if rate["distinct"] >= 0.9 * n else "")
                + ")"
                if rate["distinct"] > ORDERINGS_SHOWN
                else ""
            )
            + ".</p>"
        )
        rows = "".join(
            f'<tr><th>{e(g["group"])}</th><td class="num">{g["worst"]}</td>'
            f'<td class="num">{g["worst_tied"]}</td><td class="num">{g["best"]}</td>'
            f'<td class="num">{g["best_tied"]}</td></tr>'
            for g in rate["groups"]
        )
        blocks.append(
            '<div class="scroll"><table><thead><tr><th>Group</th><th class="num">Worst</th>'
            '<th class="num">Worst, tied</th><th class="num">Best</th>'
            f'<th class="num">Best, tied</th></tr></thead><tbody>{rows}</tbody></table></div>'
        )
        items = []
        for top in rate["top"]:
            named = top["algorithms"][:ORDERING_ALGORITHMS_NAMED]
            more = len(top["algorithms"]) - len(named)
            items.append(
                f"<code>{e(top['ordering'])}</code>: {_count(top['count'], 'algorithm')} "
                f'<span class="note">({e(", ".join(named))}'
                + (f" and {more} more" if more else "")
                + ")</span>"
            )
        blocks.append(f"<p>The most frequent orderings, worst first:</p>{_list(items)}")
    return (
        "".join(blocks)
        + '<p class="note">For each algorithm the groups are sorted from the highest rate (the '
        "worst-served) to the lowest; <code>=</code> joins groups whose rates are equal as read "
        "(a rounded or floored transcription ties many). Worst and best count the algorithms "
        "where the group is alone at that end; tied, where it shares it.</p>"
        + _source(data["sources"], folder)
    )


def _column(values) -> list[str]:
    """Numbers of one column to 4 significant digits, all in scientific notation when the
    smallest non-zero one is below 1e-3 (so the column reads at a glance)."""
    x = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype="float64")
    small = x[(x != 0) & ~pd.isna(x)]
    plain = (0.0, 0.0) if len(small) and (abs(small) < 1e-3).any() else None
    return [number(v, 4, undefined="", plain=plain) for v in x]


def _probability(value) -> str:
    p = _float(value)
    if p is None:
        return "<td>not computed</td>"
    return (
        f'<td class="num"><span class="bar"><span style="width:{100 * p:.1f}%"></span></span>'
        f"{p:.3f}</td>"
    )


# ------------------------------------------------------------------ sentences, flags, warnings


def robustness_section(folder: Path) -> str:
    paths = sorted((folder / "tables").glob("robustness_*.csv"))
    if not paths:
        return "<p>This report has no uncertainty analysis.</p>"
    blocks = []
    for path in paths:
        frame = _read(path)
        for topic, part in frame.groupby("topic", sort=False):
            sentences = [str(s) for s in part["sentence"] if isinstance(s, str)]
            body = ""
            if sentences and sentences[0].endswith(":"):
                body, sentences = f"<p>{e(sentences[0])}</p>", sentences[1:]
            blocks.append(f"<h3>{e(topic)}</h3>{body}{_list([e(s) for s in sentences])}")
        blocks.append(_source([path], folder))
    return "".join(blocks)


def quality_section(folder: Path) -> str:
    paths = sorted((folder / "tables").glob("data_quality*.csv"))
    if not paths:
        return "<p>This report has no data-quality audit (it is made for rates tables).</p>"
    blocks = []
    for path in paths:
        frame = _read(path)
        flagged = frame[[bool(_truth(v)) for v in frame["flagged"]]]
        items = []
        for r in flagged.itertuples():
            detail = str(r.detail)
            text = (
                f"<strong>{e(str(r.rate).upper())}</strong>: {e(detail[:1].upper() + detail[1:])}."
            )
            if isinstance(r.affects, str) and r.affects:
                text += f" Affects: {e(r.affects)}."
            items.append(text)
        if items:
            blocks.append(_list(items))
        else:
            blocks.append(
                "<p>No flag: the rates are not quantised on a decade grid or to a fixed number "
                "of decimals, have no floor, and none is exactly 0 or 1.</p>"
            )
        blocks.append(_source([path], folder))
    return "".join(blocks)


def warnings_section(folder: Path) -> str:
    paths = sorted((folder / "tables").glob("warnings_*.csv"))
    if not paths:
        return "<p>This report keeps no record of warnings.</p>"
    items = []
    for path in paths:
        frame = _read(path)
        for r in frame.itertuples():
            kind = f" ({e(r.kind)})" if isinstance(r.kind, str) and r.kind else ""
            count = int(r.count) if _float(r.count) is not None else 1
            times = f' <span class="note">({count} times)</span>' if count > 1 else ""
            items.append(f"<strong>{e(r.notebook)}</strong>{kind}: {e(r.sentence)}{times}")
    if not items:
        return "<p>No warning was raised while the notebooks ran.</p>" + _source(paths, folder)
    return _list(items) + _source(paths, folder)


def measures_section(folder: Path) -> str | None:
    """Every measure's value per system (reports from scores); None when there is none."""
    path = folder / "tables" / "measures.csv"
    if not path.is_file():
        return None
    frame = _read(path)
    frame["algorithm"] = frame["algorithm"].astype(str)
    columns = ["grouping", "algorithm"] if "grouping" in frame else ["algorithm"]
    keys = list(dict.fromkeys(zip(*(frame[c].astype(str) for c in columns), strict=True)))
    measures = list(dict.fromkeys(frame["measure"].astype(str)))
    value = {
        (str(m), *map(str, k)): (_float(v), _truth(u) if "undefined" in frame else None)
        for m, k, v, u in zip(
            frame["measure"],
            zip(*(frame[c] for c in columns), strict=True),
            frame["value"],
            frame["undefined"] if "undefined" in frame else [None] * len(frame),
            strict=True,
        )
    }
    head = "".join(f'<th class="num">{"<br>".join(e(x) for x in k)}</th>' for k in keys)
    rows = []
    for m in measures:
        tds = ""
        for k in keys:
            v, undefined = value.get((m, *k), (None, None))
            text = "" if v is None else number(v)
            if undefined:
                text += " (undefined)"
            tds += f'<td class="num">{e(text)}</td>'
        rows.append(f"<tr><th><code>{e(m)}</code></th>{tds}</tr>")
    return (
        '<p class="answer">Every measure on each system, at the operating point (rate measures) '
        "or on the score distributions (score measures).</p>"
        f'<div class="scroll"><table><thead><tr><th>Measure</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>" + _source([path], folder)
    )


# ------------------------------------------------------------------ links, figures, run


def _run_rows(header: dict) -> str:
    rows = []
    for key, value in header.items():
        if key == "parameters":
            continue
        shown = value if isinstance(value, str) else json.dumps(value, default=str)
        rows.append(f"<tr><th>{e(key)}</th><td>{e(shown)}</td></tr>")
    return "".join(rows)


def _meta(header: dict) -> str:
    parts = []
    if header.get("input_file"):
        parts.append(f"Input <code>{e(Path(str(header['input_file'])).name)}</code>")
    if header.get("input_sha256"):
        parts.append(f"sha256 <code>{e(str(header['input_sha256'])[:12])}…</code>")
    if header.get("audit_version"):
        parts.append(f"audit {e(header['audit_version'])}")
    if header.get("date"):
        parts.append(e(header["date"]))
    meta = f'<p class="meta">{" · ".join(parts)}</p>' if parts else ""
    return meta + _input_notes(header)


def _input_notes(header: dict) -> str:
    """A note for each input the report does not carry a copy of: why, and where it is from."""
    notes = []
    inputs = [(header.get("input_copy"), header.get("input_source"), header.get("input_sha256"))]
    accuracy = header.get("accuracy_input")
    if isinstance(accuracy, dict):
        inputs.append((accuracy.get("copy"), accuracy.get("source"), accuracy.get("sha256")))
    for copy, source, sha256 in inputs:
        if not isinstance(copy, str) or not copy.startswith("not copied"):
            continue
        text = f"{copy[:1].upper()}{copy[1:]}."
        if isinstance(source, dict):
            commit = f" at commit {source.get('commit')}" if source.get("commit") else ""
            text += (
                f" Source: {source.get('title')}, {source.get('repository')}{commit}, "
                f"{source.get('path')} (sha256 {sha256}); 'audit fetch {source.get('dataset')}' "
                "fetches the same bytes."
            )
        notes.append(f'<p class="note input">{e(text)}</p>')
    return "".join(notes)


def _guarded(build: Callable[[Path], str | None], folder: Path) -> str | None:
    """A section, or a sentence saying why it could not be built (the rest of the page stands)."""
    try:
        return build(folder)
    except (KeyError, ValueError, TypeError, AttributeError, OSError) as error:
        reason = f"{type(error).__name__}: {error}"
        return f"<p>{e(UNREADABLE.format(table='the report tables', reason=reason))}</p>"


def front_page(
    folder: str | Path,
    *,
    title: str,
    header: dict | None = None,
    notebooks: Sequence[tuple[str, str]] = (),
    sections: Sequence[tuple[str, str, str | None]] | None = None,
    lead: str = "",
) -> str:
    """The HTML of ``folder/index.html``: findings from ``folder/tables``, then links, figures,
    tables and the run.

    ``header`` is the run header (default: ``folder/manifest.json`` if there is one);
    ``notebooks`` are ``(stem, title)`` pairs, linked as ``<stem>.html`` and ``<stem>.ipynb``.
    ``sections`` (``(id, title, html)``, None for one left out) replace the findings of a
    single-table report (the cross-dataset page: :mod:`audit.report.comparepage`), and
    ``lead`` (HTML) stands under the title, before everything else.
    """
    folder = Path(folder)
    if header is None:
        manifest = folder / "manifest.json"
        header = json.loads(manifest.read_text()) if manifest.is_file() else {}
    if sections is None:
        sections = [
            ("verdicts", "FFMC verdicts", _guarded(verdicts_section, folder)),
            ("calibration", "Calibration", _guarded(calibration_section, folder)),
            ("orderings", "Group orderings", _guarded(orderings_section, folder)),
            ("frontier", "Pareto frontier", _guarded(frontier_section, folder)),
            ("robustness", "How sure", _guarded(robustness_section, folder)),
            ("measures", "Measures", _guarded(measures_section, folder)),
            ("quality", "Data quality", _guarded(quality_section, folder)),
            ("warnings", "Warnings", _guarded(warnings_section, folder)),
        ]
    findings = [(k, t, body) for k, t, body in sections if body is not None]
    figures = sorted((folder / "figures").glob("*.png")) if (folder / "figures").is_dir() else []
    tables = sorted((folder / "tables").glob("*.csv")) if (folder / "tables").is_dir() else []
    links = "".join(
        f'<li><a href="{e(quote(stem))}.html">{e(name)}</a> '
        f'(<a href="{e(quote(stem))}.ipynb">notebook</a>)</li>'
        for stem, name in notebooks
    )
    figure_html = "".join(
        f'<figure><a href="{_href(p, folder)}"><img src="{_href(p, folder)}" alt="{e(p.stem)}" '
        f'loading="lazy"></a><figcaption>{e(p.stem)} '
        f'(<a href="{_href(p.with_suffix(".svg"), folder)}">SVG</a>)</figcaption></figure>'
        for p in figures
    )
    table_html = "".join(f'<li><a href="{_href(p, folder)}">{e(p.name)}</a></li>' for p in tables)
    params = "".join(
        f"<tr><th>{e(k)}</th><td>{e(repr(v))}</td></tr>"
        for k, v in (header.get("parameters") or {}).items()
    )
    rest = [
        (
            "notebooks",
            "Notebooks",
            f"<ul>{links}</ul>"
            if links
            else "<p>No notebook: this report was written without notebooks.</p>",
        ),
        ("figures", "Figures", figure_html or "<p>No figures.</p>"),
        ("tables", "Tables", f"<ul>{table_html}</ul>" if table_html else "<p>No tables.</p>"),
        (
            "run",
            "Run",
            f'<div class="scroll"><table class="run">{_run_rows(header)}</table></div>'
            + (
                f'<h3>Parameters</h3><div class="scroll"><table class="run">{params}</table></div>'
                if params
                else ""
            ),
        ),
    ]
    nav = " ".join(f'<a href="#{k}">{e(t)}</a>' for k, t, _ in findings + rest)
    body = "".join(
        f'<section id="{k}"><h2>{e(t)}</h2>{html}</section>' for k, t, html in findings + rest
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{e(title)}</title>
<style>{STYLE}</style></head><body>
<h1>{e(title)}</h1>
{_meta(header)}
{lead}
<nav>{nav}</nav>
{body}
</body></html>
"""


__all__ = [
    "calibration_section",
    "front_page",
    "frontier_section",
    "measures_section",
    "orderings_data",
    "orderings_section",
    "quality_section",
    "robustness_section",
    "verdicts_section",
    "warnings_section",
]
