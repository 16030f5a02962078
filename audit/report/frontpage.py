"""The report's front page, ``index.html``: the findings first, then the notebooks,
figures, tables and the run.

The page is built after the notebooks have run, from the tables they wrote, so it
shows what the report holds whatever the input (a two-sided table like Annex 15,
FMR or FNMR only, a cross-group table, comparison scores, streamed tables) and
whichever notebooks ran, and it says plainly when a finding does not apply.

**Where the sections come from.**  Each notebook declares what it wrote, each
output with a role (:mod:`audit.report.outputs`; the manifest's ``outputs``), and
each section reads the tables of its roles, whatever their file names:

* **FFMC verdicts**: role ``ffmc_table`` (``measure``, ``label``, ``criterion``,
  ``passed``, ``paper``, ``evidence``, and ``grouping`` in a scores report), with
  the same notebook's ``ffmc_verdict_stability`` (``agreement`` over
  replicates), ``measure_applicability`` (a one-sided table) and
  ``measure_registry`` (each measure's ISO/IEC 19795-10 term:
  :func:`audit.measures.registry.measure_table`);
* **Calibration**: role ``calibration`` (:func:`audit.analysis.calibration.calibrated_cells`),
  the cells whose rate is fixed by how the thresholds were set; shown only when
  there is one;
* **Group orderings**: roles ``group_extremes`` and ``group_orderings``
  (:mod:`audit.analysis.orderings`): per rate, how often each group is the worst
  and the best, and the most frequent orderings of the groups with how many
  distinct ones there are (:func:`orderings_data`);
* **Pareto frontier**: role ``pareto_all`` (``accuracy``, ``fairness``,
  ``on_frontier``, and ``accuracy_label``, ``calibration`` when written) with the
  same notebook's ``frontier_probability`` and, for an accuracy joined from
  another table, ``accuracy_join`` (what was not joined, why);
* **How sure**: every notebook's ``sentences`` (``topic``, ``sentence``, ``item``:
  :func:`audit.report.outputs.save_sentences`);
* **Measures** (reports from scores): role ``measures``;
* **Data quality**: the ``flagged`` rows of role ``data_quality``;
* **Warnings**: role ``warnings`` (:mod:`audit.report.notices`).

A role a section expects from a notebook that ran (:data:`EXPECTED`) and that the
notebook did not declare, or a declared file that is not in the report, is a
notice in that section (:data:`NOT_DECLARED`, :data:`MISSING`), never a section
silently gone.

**When a section fails.**  A data condition -- a refusal of audit
(:class:`~audit.exceptions.AuditError`), such as a table that cannot be read --
is a sentence in its section (:data:`UNREADABLE`). Any other exception is a bug
in audit: the section says so (:data:`INTERNAL`) and its traceback is appended
to ``logs/frontpage.txt`` in the report folder (:data:`LOG`); the rest of the
page stands.

Under the title, the input: when a report does not carry a copy of it (a
built-in dataset whose licence forbids redistribution), a note says so and
where the same bytes come from (the manifest's ``input_copy`` and
``input_source``; ``accuracy_input`` for a second table).

The page is drawn by a jinja2 template (``templates/frontpage.html.j2``, shipped
with the package) with autoescaping on: every string taken from a table, a file
name or the manifest is escaped; the page is self-contained (its style inline,
no script, nothing fetched).
"""

from __future__ import annotations

import functools
import json
import math
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from audit.analysis.accuracy import NEAR_LEGEND
from audit.analysis.pareto import ACCURACY_LABELS
from audit.analysis.text import count, names, number
from audit.exceptions import AuditError, ReportError
from audit.report.outputs import LOGS
from audit.uncertainty.checks import ROBUST
from audit.uncertainty.claims import label

#: Shown when a section's table could not be read (a data condition).
UNREADABLE = "This section could not be built from {table}: {reason}."
#: Shown instead of a section whose building raised anything but a data condition.
INTERNAL = (
    "This section could not be built because of a bug in audit; the traceback is in "
    "{log}. Please report it with that file."
)
#: The same, when the traceback could not be written either.
INTERNAL_UNKEPT = (
    "This section could not be built because of a bug in audit ({error}); its traceback "
    "could not be kept in {log}: {reason}."
)
#: The report's log of the front page's internal errors, under the report folder.
LOG = f"{LOGS}/frontpage.txt"
#: A role a section expects that a notebook which ran did not declare.
NOT_DECLARED = (
    "The {notebook} notebook ran but declared no {what} (role '{role}'), so this section "
    "does not show it."
)
#: A declared output that is not in the report.
MISSING = (
    "{path}, declared by the {notebook} notebook as its {what} (role '{role}'), is not in "
    "the report, so this section does not show it."
)

#: What each role is to a reader, for the notices.
ROLES = {
    "ffmc_table": "FFMC verdict table",
    "ffmc_verdict_stability": "verdict stability table",
    "measure_applicability": "table of the measures that apply",
    "measure_registry": "table of the measures' ISO/IEC 19795-10 terms",
    "calibration": "table of calibrated cells",
    "group_extremes": "table of the groups served worst and best",
    "group_orderings": "table of the orderings of the groups",
    "pareto_all": "Pareto frontier table",
    "frontier_probability": "frontier membership probabilities",
    "accuracy_join": "table of the accuracy join",
    "measures": "table of measures",
    "data_quality": "data-quality table",
    "warnings": "table of warnings",
    "robustness": "sentences on how sure the findings are",
}
#: The roles each notebook is expected to declare, by section: ``(kind, role)``, a role
#: of None standing for any output of that kind.
EXPECTED: dict[str, dict[str, tuple[tuple[str, str | None], ...]]] = {
    "ffmc": {
        "verdicts": (("tables", "ffmc_table"),),
        "calibration": (("tables", "calibration"),),
        "orderings": (("tables", "group_extremes"), ("tables", "group_orderings")),
        "robustness": (("sentences", None),),
        "quality": (("tables", "data_quality"),),
        "warnings": (("tables", "warnings"),),
    },
    "pareto": {
        "frontier": (("tables", "pareto_all"),),
        "robustness": (("sentences", None),),
        "warnings": (("tables", "warnings"),),
    },
    "scores": {
        "verdicts": (("tables", "ffmc_table"),),
        "robustness": (("sentences", None),),
        "measures": (("tables", "measures"),),
        "warnings": (("tables", "warnings"),),
    },
    "crossgroup": {"warnings": (("tables", "warnings"),)},
    "streamed": {
        "verdicts": (("tables", "ffmc_table"),),
        "measures": (("tables", "measures"),),
        "robustness": (("sentences", None),),
        "warnings": (("tables", "warnings"),),
    },
}

#: The findings, in the order of the page: (key, title).
SECTIONS = (
    ("verdicts", "FFMC verdicts"),
    ("calibration", "Calibration"),
    ("orderings", "Group orderings"),
    ("frontier", "Pareto frontier"),
    ("robustness", "How sure"),
    ("measures", "Measures"),
    ("quality", "Data quality"),
    ("warnings", "Warnings"),
)

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
.misread { margin: 0 0 1em; padding: 0.5em 0.9em; background: #fff8c5; border-left: 4px solid #bf8700; border-radius: 4px; }
.misread ul { margin: 0.3em 0 0.2em; padding-left: 1.2em; }
.source { margin: 0.2em 0 0.8em; }
.notice { padding: 0.4em 0.8em; background: #fff8c5; border-left: 4px solid #d4a72c; }
.internal { padding: 0.4em 0.8em; background: #ffebe9; border-left: 4px solid #cf222e; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 0.4em 0; }
th, td { text-align: left; vertical-align: top; padding: 4px 10px; border-bottom: 1px solid #d8dee4; }
thead th { border-bottom: 2px solid #afb8c1; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.verdicts td.cell { text-align: center; min-width: 4.6em; padding: 4px 5px; }
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


# ------------------------------------------------------------------ what the notebooks declared


class Declared:
    """The outputs the report's notebooks declared (the manifest's ``outputs``), found by
    role; every role a section asks for that is not there becomes a notice of that section.
    """

    def __init__(self, folder: Path, header: dict):
        self.folder = folder
        outputs = header.get("outputs")
        self.outputs: dict[str, dict] = outputs if isinstance(outputs, dict) else {}
        ran = header.get("notebooks")
        self.ran = [str(n) for n in ran] if isinstance(ran, list) else list(self.outputs)
        for notebook in self.outputs:
            if notebook not in self.ran:
                self.ran.append(notebook)
        self.notices: dict[str, list[str]] = {}

    def _notice(self, section: str, text: str) -> None:
        self.notices.setdefault(section, []).append(text)

    def _path(self, section: str, notebook: str, kind: str, role: str) -> Path | None:
        """The declared file of ``role``, or None (with a notice when it is missing)."""
        relative = self.outputs.get(notebook, {}).get(kind, {}).get(role)
        if not isinstance(relative, str):
            return None
        path = self.folder / relative
        if not path.is_file():
            what = ROLES.get(role, "output")
            self._notice(
                section, MISSING.format(path=relative, notebook=notebook, what=what, role=role)
            )
            return None
        return path

    def tables(self, section: str, role: str) -> list[tuple[str, Path]]:
        """``(notebook, path)`` of every declared table of ``role`` that is in the report."""
        found = []
        for notebook in self.outputs:
            path = self._path(section, notebook, "tables", role)
            if path is not None:
                found.append((notebook, path))
        return found

    def beside(self, section: str, notebook: str, role: str) -> Path | None:
        """``notebook``'s table of ``role`` (e.g. the stability beside its verdicts), or None."""
        return self._path(section, notebook, "tables", role)

    def figure(self, section: str, notebook: str, role: str) -> Path | None:
        """``notebook``'s figure of ``role`` (its PNG), or None: found by its role, never
        by a file name made from a label (one with a space or markup is not its file's)."""
        return self._path(section, notebook, "figures", role)

    def sentences(self, section: str) -> list[Path]:
        """Every declared file of sentences in the report, notebook by notebook."""
        found = []
        for notebook, declared in self.outputs.items():
            for role in declared.get("sentences", {}):
                path = self._path(section, notebook, "sentences", role)
                if path is not None:
                    found.append(path)
        return found

    def expect(self) -> None:
        """A notice for every role a section expects from a notebook that ran and that the
        notebook did not declare (:data:`EXPECTED`)."""
        for notebook in self.ran:
            declared = self.outputs.get(notebook, {})
            for section, wanted in EXPECTED.get(notebook, {}).items():
                for kind, role in wanted:
                    of_kind = declared.get(kind, {})
                    if (role is None and not of_kind) or (role is not None and role not in of_kind):
                        named = role or ("robustness" if kind == "sentences" else kind)
                        self._notice(
                            section,
                            NOT_DECLARED.format(
                                notebook=notebook, what=ROLES.get(named, kind), role=named
                            ),
                        )

    def listed(self, kind: str) -> list[Path]:
        """Every declared file of ``kind`` (for figures, the PNG) in the report, once, by name."""
        paths = {
            self.folder / relative
            for declared in self.outputs.values()
            for relative in declared.get(kind, {}).values()
            if isinstance(relative, str)
        }
        return sorted((p for p in paths if p.is_file()), key=lambda p: p.name)


# ------------------------------------------------------------------ reading the tables


def _read(path: Path) -> pd.DataFrame:
    """A table as the notebooks wrote it: an empty cell is missing, any other text kept
    (an algorithm called ``NA`` stays ``'NA'``); a file that cannot be read is a
    :class:`~audit.exceptions.ReportError` (a data condition, said in its section)."""
    try:
        return pd.read_csv(path, keep_default_na=False, na_values=[""])
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error) or type(error).__name__
        raise ReportError(UNREADABLE.format(table=path.name, reason=reason)) from None


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
    return quote(path.relative_to(folder).as_posix())


def _links(paths: Sequence[Path], folder: Path) -> list[dict]:
    return [{"href": _href(p, folder), "name": p.name} for p in paths]


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


# ------------------------------------------------------------------ FFMC verdicts

_WORDS = {True: ("pass", "pass"), False: ("FAIL", "fail"), None: ("n/a", "na")}


def _verdict_cell(passed, paper, agreement, evidence) -> dict:
    word, css = _WORDS[passed]
    differs = paper is not None and passed is not None and passed != paper
    shaky = agreement is not None and not math.isnan(agreement) and agreement < ROBUST
    return {
        "word": word,
        "css": css,
        "title": evidence if isinstance(evidence, str) and evidence else "",
        "paper": ("pass" if paper else "fail") if paper is not None else "",
        "differs": differs,
        "share": f"holds in {100 * agreement:.0f}% of replicates" if shaky else "",
    }


def _verdict_answer(cells: pd.DataFrame, labels: dict[str, str]) -> dict:
    """The verdict table in sentences: who passes every criterion, who fails which, and how
    the audit compares with the paper's Table 2 (``bold``: the names the first sentence
    opens with)."""
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
    first, rest = {"bold": "", "text": ""}, []
    if passing:
        text = ("passes" if len(passing) == 1 else "pass") + " every criterion that applies"
        if failing:
            verb = "fails" if len(failing) == 1 else "fail"
            text += f"; the other {count(len(failing), 'measure')} {verb} at least one"
        first = {"bold": names(passing), "text": text + "."}
    elif failing and n_measures == 1:
        first = {"bold": names(failing), "text": "fails at least one criterion."}
    elif failing:
        first["text"] = f"None of the {n_measures} measures passes every criterion that applies."
    if unjudged:
        rest.append(f"No criterion applies to {names(unjudged)} on this table.")
    paper = cells[cells["paper"].notna()]
    if len(paper):
        judged = paper[paper["passed"].notna()]
        agree = judged[judged["passed"] == judged["paper"]]
        differ = judged[judged["passed"] != judged["paper"]]
        measures = [labels[m] for m in dict.fromkeys(paper["measure"])]
        text = (
            f"Howard et al. (Table 2) judge {names(measures)}: the audit agrees with "
            + (
                f"all {len(judged)} of their verdicts"
                if len(agree) == len(judged) and len(judged)
                else f"{len(agree)} of their {len(judged)} verdicts"
            )
            + (" that apply here" if len(judged) < len(paper) else "")
        )
        if len(differ):
            text += "; it differs on " + ", ".join(
                f"{labels[r.measure]} {r.criterion} (paper: "
                f"{'pass' if r.paper else 'fail'}, audit: {'pass' if r.passed else 'fail'})"
                for r in differ.itertuples()
            )
        if len(judged) < len(paper):
            text += (
                f" ({len(paper) - len(judged)} concern a criterion not applicable to this table)"
            )
        rest.append(text + ".")
    if cells["agreement"].notna().any():
        shaky = cells[cells["agreement"] < ROBUST]
        if len(shaky):
            rest.append(
                f"{count(len(shaky), 'verdict')} "
                + ("holds" if len(shaky) == 1 else "hold")
                + f" in fewer than {100 * ROBUST:.0f}% of the replicates (marked in the table)."
            )
        else:
            rest.append(
                f"Every verdict holds in at least {100 * ROBUST:.0f}% of the replicates of the "
                "uncertainty analysis."
            )
    if not first["text"]:  # every measure unjudged: the first sentence is that
        first, rest = {"bold": "", "text": rest[0]}, rest[1:]
    return {**first, "rest": rest}


def _not_applicable(cells: pd.DataFrame, labels: dict[str, str], criteria: list[str]) -> list:
    """One line per reason a verdict is n/a, naming the cells it covers."""
    missing = cells[cells["passed"].isna()]
    lines = []
    for reason, part in missing.groupby("evidence", sort=False, dropna=False):
        reason = str(reason).removeprefix("not applicable: ") if isinstance(reason, str) else ""
        by_criteria: dict[tuple[str, ...], list[str]] = {}
        for measure, rows in part.groupby("measure", sort=False):
            by_criteria.setdefault(tuple(rows["criterion"]), []).append(labels[measure])
        where = "; ".join(
            ("every criterion" if list(c) == criteria else ", ".join(c)) + " of " + names(m)
            for c, m in by_criteria.items()
        )
        lines.append(f"{where}: {reason or 'no reason given'}")
    return lines


def _verdict_block(cells: pd.DataFrame, terms: dict[str, str] | None = None) -> dict:
    """The verdicts, one row per measure, with each measure's ISO/IEC 19795-10 term when
    ``terms`` (measure to term) is given."""
    if not len(cells):
        return {"empty": "The FFMC table is empty: no measure was audited."}
    criteria = list(dict.fromkeys(cells["criterion"]))
    labels = dict(zip(cells["measure"], cells["label"], strict=False))
    rows = []
    for measure, part in cells.groupby("measure", sort=False):
        by = part.set_index("criterion")
        name = labels[measure]
        rows.append(
            {
                "label": name,
                "code": measure if name.lower() != str(measure).lower() else "",
                "cells": [
                    _verdict_cell(
                        by.loc[c, "passed"],
                        by.loc[c, "paper"],
                        by.loc[c, "agreement"],
                        by.loc[c, "evidence"],
                    )
                    if c in by.index
                    else None
                    for c in criteria
                ],
                "term": (terms or {}).get(str(measure), ""),
            }
        )
    return {
        "answer": _verdict_answer(cells, labels),
        "criteria": criteria,
        "terms": terms is not None,
        "rows": rows,
        "not_applicable": _not_applicable(cells, labels, criteria),
    }


def _iso_terms(path: Path | None) -> dict[str, str] | None:
    """Measure to ISO/IEC 19795-10 term, from a registry table (None without one)."""
    if path is None:
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


def verdicts_section(folder: Path, declared: Declared) -> dict:
    section = "verdicts"
    found = declared.tables(section, "ffmc_table")
    if not found:
        return {"none": "This report has no FFMC audit."}
    blocks, any_terms = [], False
    for notebook, path in found:
        frame = _read(path)
        stab_path = declared.beside(section, notebook, "ffmc_verdict_stability")
        stability = _read(stab_path) if stab_path is not None else None
        registry = declared.beside(section, notebook, "measure_registry")
        terms = _iso_terms(registry)
        any_terms |= terms is not None
        sources = [path, *([stab_path] if stability is not None else [])]
        sources += [registry] if terms is not None else []
        if "grouping" in frame:
            groupings = frame.groupby("grouping", sort=False)
            for grouping, part in groupings:
                block = _verdict_block(_cells(part, None), terms)
                block["title"] = f"Groups by {grouping}" if groupings.ngroups > 1 else ""
                blocks.append(block)
        else:
            blocks.append(_verdict_block(_cells(frame, stability), terms))
        blocks[-1]["sources"] = _links(list(dict.fromkeys(sources)), folder)
    applicability = []
    for _, path in declared.tables(section, "measure_applicability"):
        text = _applicability(_read(path))
        if text:
            applicability.append({"text": text, "sources": _links([path], folder)})
    return {"blocks": blocks, "applicability": applicability, "terms": any_terms}


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
            f"{_capital(status)}: {names(rows['label'].astype(str).tolist())}"
            + (f" \N{EM DASH} {note}" if note else "")
        )
    return ". ".join(parts) + "." if parts else ""


_STATUS = {"one term": "computed on one term"}


# ------------------------------------------------------------------ the frontier


def frontier_section(folder: Path, declared: Declared) -> dict:
    section = "frontier"
    found = declared.tables(section, "pareto_all")
    if not found:
        return {"none": "This report has no Pareto down-select."}
    return {
        "frontiers": [
            _frontier(path, folder, declared, section, notebook) for notebook, path in found
        ]
    }


def _text(row, key: str) -> str:
    """A text cell of a table's first row, "" when absent or empty."""
    value = row.get(key, "") if len(row) else ""
    return value if isinstance(value, str) else ""


def _frontier(path: Path, folder: Path, declared: Declared, section: str, notebook: str) -> dict:
    frame = _read(path)
    frame["algorithm"] = frame["algorithm"].astype(str)
    first = frame.iloc[0] if len(frame) else {}
    name = _text(first, "measure") or path.stem
    label = _text(first, "measure_label") or name
    alpha = _float(first.get("alpha")) if len(frame) else None
    axis = _text(first, "accuracy_axis")
    axis_label = _text(first, "accuracy_label") or ACCURACY_LABELS.get(axis, axis or "accuracy")
    fairness_label = _text(first, "fairness_label")
    if not fairness_label:  # a table written before the column
        fairness_label = label + (f" (alpha {alpha:g})" if alpha is not None else "")
    on = frame[[bool(_truth(v)) for v in frame["on_frontier"]]].sort_values("accuracy")
    prob_path = declared.beside(section, notebook, "frontier_probability")
    probability = None
    if prob_path is not None:
        p = _read(prob_path)
        probability = dict(zip(p["algorithm"].astype(str), p["frontier_probability"], strict=True))
    accuracy, fairness = _column(on["accuracy"]), _column(on["fairness"])
    rows = []
    for r, acc, fair in zip(on.itertuples(), accuracy, fairness, strict=True):
        row = {"algorithm": r.algorithm, "accuracy": acc, "fairness": fair}
        if probability is not None:
            p = _float(probability.get(r.algorithm))
            row["probability"] = None if p is None else f"{p:.3f}"
            row["width"] = "" if p is None else f"{100 * p:.1f}"
        rows.append(row)
    notes = []
    calibration = _text(first, "calibration")
    if calibration:
        notes.append(_capital(calibration) + ".")
    join_path = declared.beside(section, notebook, "accuracy_join")
    if join_path is not None:
        notes.append(_join_note(join_path, axis_label))
    if probability is None:
        notes.append(
            "No membership probability: the uncertainty analysis did not run for this "
            "down-select (How sure, below, says why)."
        )
    else:
        members = set(on["algorithm"])
        near = sorted(
            (
                (p, a)
                for a, p in probability.items()
                if a not in members and (_float(p) or 0.0) > 1 - ROBUST  # robustly off: at most
            ),
            reverse=True,
        )
        notes.append(
            "Membership probability: the share of replicates of the uncertainty analysis in "
            "which the algorithm is on the frontier. "
            + (
                "Off the frontier with the point rates but on it in some replicates: "
                + ", ".join(f"{a} ({float(p):.3f})" for p, a in near)
                + "."
                if near
                else "No other algorithm is on it in more than "
                f"{100 * (1 - ROBUST):.0f}% of the replicates."
            )
        )
    extra = [p for p in (prob_path, join_path) if p is not None]
    return {
        "on": len(on),
        "total": len(frame),
        "axis": axis_label,
        "fairness": fairness_label,
        "probability": probability is not None,
        "rows": rows,
        "notes": notes,
        "sources": _links([path, *extra], folder),
    }


def _join_note(path: Path, axis_label: str) -> str:
    """What the join of an accuracy from another table left out, by reason."""
    join = _read(path)
    status = join["status"].astype(str)
    algorithms = join["algorithm"].astype(str)
    near = join["near"] if "near" in join else pd.Series([""] * len(join))
    joined = int((status == "joined").sum())
    parts = []
    for reason in dict.fromkeys(status[status != "joined"]):
        chosen = [
            n + (f" (~ {m})" if isinstance(m, str) and m else "")
            for n, m in zip(algorithms[status == reason], near[status == reason], strict=True)
        ]
        shown = ", ".join(chosen[:_JOIN_NAMED])
        if len(chosen) > _JOIN_NAMED:
            shown += f" and {len(chosen) - _JOIN_NAMED} more"
        parts.append(f"{count(len(chosen), 'algorithm')} {reason}: {shown}")
    if not parts:
        return f"{axis_label} joined by algorithm name: every algorithm has one."
    spelled = any(isinstance(m, str) and m for m in near)
    return (
        f"{axis_label} joined by algorithm name, exactly: {joined} algorithms on both sides; "
        "left out of the frontier or unused: "
        + "; ".join(parts)
        + (NEAR_LEGEND + "." if spelled else ".")
    )


#: How many algorithms a note of the join names for each reason.
_JOIN_NAMED = 8


def _column(values) -> list[str]:
    """Numbers of one column to 4 significant digits, all in scientific notation when the
    smallest non-zero one is below 1e-3 (so the column reads at a glance)."""
    x = pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype="float64")
    small = x[(x != 0) & ~pd.isna(x)]
    plain = (0.0, 0.0) if len(small) and (abs(small) < 1e-3).any() else None
    return [number(v, 4, undefined="", plain=plain) for v in x]


# ------------------------------------------------------------------ calibration


def calibration_section(folder: Path, declared: Declared) -> dict | None:
    """The calibrated cells (:mod:`audit.analysis.calibration`); None when there is none."""
    frames = [(p, _read(p)) for _, p in declared.tables("calibration", "calibration")]
    frames = [(p, f) for p, f in frames if len(f)]
    if not frames:
        return None
    sentences = list(dict.fromkeys(str(s) for _, f in frames for s in f["sentence"]))
    return {
        "sentences": [_capital(s) + "." for s in sentences],
        "sources": _links([p for p, _ in frames], folder),
    }


# ------------------------------------------------------------------ group orderings

#: How many of the most frequent orderings the page shows, and how many of their algorithms.
ORDERINGS_SHOWN = 5
ORDERING_ALGORITHMS_NAMED = 6


def orderings_data(folder: str | Path, declared: Declared | None = None) -> dict | None:
    """What the group-orderings section shows, from the tables declared as
    ``group_extremes`` and ``group_orderings`` (:mod:`audit.analysis.orderings`); None
    when the report has neither. ``declared`` defaults to the report's manifest.

    Returns ``{"rates": [...], "sources": [links]}``, one entry per rate: ``rate``
    (``"FMR"``), ``algorithms``, ``distinct`` (orderings), ``groups`` (records of
    ``group``, ``worst``, ``worst_tied``, ``best``, ``best_tied``) and ``top`` (the
    :data:`ORDERINGS_SHOWN` most frequent orderings: ``ordering``, ``count``, ``share``,
    ``algorithms`` as a list).
    """
    folder = Path(folder)
    if declared is None:
        manifest = folder / "manifest.json"
        declared = Declared(folder, json.loads(manifest.read_text()) if manifest.is_file() else {})
    extremes_found = declared.tables("orderings", "group_extremes")
    counts_found = declared.tables("orderings", "group_orderings")
    if not extremes_found or not counts_found:
        return None
    extremes_path, counts_path = extremes_found[0][1], counts_found[0][1]
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
    return {"rates": rates, "sources": _links([extremes_path, counts_path], folder)}


def orderings_section(folder: Path, declared: Declared) -> dict | None:
    """Which group fares worst and best, and in which order (:func:`orderings_data`)."""
    data = orderings_data(folder, declared)
    if data is None:
        return None
    rates = []
    for rate in data["rates"]:
        n = rate["algorithms"]
        worst = max(rate["groups"], key=lambda g: g["worst"])
        best = max(rate["groups"], key=lambda g: g["best"])
        shown = ""
        if rate["distinct"] > ORDERINGS_SHOWN:
            nearly = "; nearly one per algorithm" if rate["distinct"] >= 0.9 * n else ""
            shown = f" (the {ORDERINGS_SHOWN} most frequent are shown{nearly})"
        top = []
        for t in rate["top"]:
            named = t["algorithms"][:ORDERING_ALGORITHMS_NAMED]
            more = len(t["algorithms"]) - len(named)
            top.append(
                {
                    "ordering": t["ordering"],
                    "count": count(t["count"], "algorithm"),
                    "named": ", ".join(named) + (f" and {more} more" if more else ""),
                }
            )
        rates.append(
            {
                "rate": rate["rate"],
                "worst": worst["group"],
                "worst_text": f"has the highest {rate['rate']} alone for {worst['worst']} of {n} "
                "algorithms,",
                "best": best["group"],
                "best_text": f"the lowest alone for {best['best']}. The "
                f"{count(n, 'algorithm')} {'orders' if n == 1 else 'order'} the groups in "
                f"{count(rate['distinct'], 'distinct way')}{shown}.",
                "groups": rate["groups"],
                "top": top,
            }
        )
    return {"rates": rates, "sources": data["sources"]}


# ------------------------------------------------------------------ sentences, flags, warnings


def _parts(frame: pd.DataFrame) -> list[dict]:
    """A topic's sentences as paragraphs and lists: the rows marked ``item`` are a list's
    items, the others paragraphs (a table without the column: a first sentence ending in
    a colon introduces the others, as a list)."""
    sentences = [str(s) for s in frame["sentence"] if isinstance(s, str)]
    if "item" in frame:
        flags = [
            bool(_truth(v))
            for v, s in zip(frame["item"], frame["sentence"], strict=True)
            if isinstance(s, str)
        ]
    else:
        lead = bool(sentences) and sentences[0].endswith(":")
        flags = [not (lead and i == 0) for i in range(len(sentences))]
    parts: list[dict] = []
    for sentence, item in zip(sentences, flags, strict=True):
        if not item:
            parts.append({"text": sentence})
        elif parts and "list" in parts[-1]:
            parts[-1]["list"].append(sentence)
        else:
            parts.append({"list": [sentence]})
    return parts


def robustness_section(folder: Path, declared: Declared) -> dict:
    paths = declared.sentences("robustness")
    if not paths:
        return {"none": "This report has no uncertainty analysis."}
    files = []
    for path in paths:
        frame = _read(path)
        topics = [
            {"title": str(topic), "parts": _parts(part)}
            for topic, part in frame.groupby("topic", sort=False)
        ]
        files.append({"topics": topics, "sources": _links([path], folder)})
    return {"files": files}


def _measure_labels(listed: str) -> str:
    """A table's comma-separated measure names as a reader reads them: their labels, as a
    list in a sentence (a name the registry does not know, as written)."""
    listed = [name.strip() for name in listed.split(",") if name.strip()]
    return names(label(name) for name in listed)


def quality_section(folder: Path, declared: Declared) -> dict:
    found = declared.tables("quality", "data_quality")
    if not found:
        return {"none": "This report has no data-quality audit (it is made for rates tables)."}
    files = []
    for _, path in found:
        frame = _read(path)
        flagged = frame[[bool(_truth(v)) for v in frame["flagged"]]]
        flags = [
            {
                "rate": str(r.rate).upper(),
                "detail": _capital(str(r.detail)),
                "affects": _measure_labels(r.affects) if isinstance(r.affects, str) else "",
            }
            for r in flagged.itertuples()
        ]
        files.append({"flags": flags, "sources": _links([path], folder)})
    return {"files": files}


#: The warnings that say the data may have been read other than as meant: shown at the top
#: of the page too, above findings they may make meaningless (a forgotten --distance puts
#: every FNMR near 1).
MISREAD = ("OrientationWarning", "ImplausibleRatesWarning", "PairLikeGroupsWarning")


def warnings_section(folder: Path, declared: Declared) -> dict:
    found = [path for _, path in declared.tables("warnings", "warnings")]
    if not found:
        return {"none": "This report keeps no record of warnings."}
    items = []
    for path in found:
        for r in _read(path).itertuples():
            items.append(
                {
                    "notebook": str(r.notebook),
                    "kind": r.kind if isinstance(r.kind, str) else "",
                    "category": str(getattr(r, "category", "")),
                    "sentence": str(r.sentence),
                    "count": int(r.count) if _float(r.count) is not None else 1,
                }
            )
    none = "" if items else "No warning was raised while the report was computed."
    return {"none": none, "entries": items, "sources": _links(found, folder)}


def measures_section(folder: Path, declared: Declared) -> dict | None:
    """Every measure's value per system (reports from scores); None when there is none."""
    found = declared.tables("measures", "measures")
    if not found:
        return None
    _, path = found[0]
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
    rows = []
    for m in measures:
        values = []
        for k in keys:
            v, undefined = value.get((m, *k), (None, None))
            values.append(("" if v is None else number(v)) + (" (undefined)" if undefined else ""))
        rows.append({"measure": m, "cells": values})
    return {"columns": keys, "rows": rows, "sources": _links([path], folder)}


#: The builder of each section of :data:`SECTIONS`.
_BUILDERS: dict[str, Callable[[Path, Declared], dict | None]] = {
    "verdicts": verdicts_section,
    "calibration": calibration_section,
    "orderings": orderings_section,
    "frontier": frontier_section,
    "robustness": robustness_section,
    "measures": measures_section,
    "quality": quality_section,
    "warnings": warnings_section,
}


# ------------------------------------------------------------------ links, figures, run


def figure_caption(path: Path) -> str:
    """The title a PNG figure carries (:func:`audit.report.outputs.figure_title`, written
    as its ``Title`` text); empty for a figure without one, or a file PIL cannot open.
    Only the chunks before the image are read."""
    import warnings

    from PIL import Image, UnidentifiedImageError

    from audit.report.text import escape_controls

    try:
        with warnings.catch_warnings():  # a header claiming a huge image: its title alone
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(path) as image:
                title = image.info.get("Title")
    except (OSError, UnidentifiedImageError, ValueError, SyntaxError, Image.DecompressionBombError):
        return ""
    return escape_controls(" ".join(str(title).split())) if title else ""


def _meta(header: dict) -> list[dict]:
    parts = []
    if header.get("input_file"):
        parts.append({"text": "Input", "code": Path(str(header["input_file"])).name})
    if header.get("input_sha256"):
        parts.append({"text": "sha256", "code": str(header["input_sha256"])[:12] + "…"})
    if header.get("audit_version"):
        parts.append({"text": f"audit {header['audit_version']}"})
    if header.get("date"):
        parts.append({"text": str(header["date"])})
    return parts


def _input_notes(header: dict) -> list[str]:
    """A note for each input the report does not carry a copy of: why, and where it is from."""
    notes = []
    inputs = [(header.get("input_copy"), header.get("input_source"), header.get("input_sha256"))]
    accuracy = header.get("accuracy_input")
    if isinstance(accuracy, dict):
        inputs.append((accuracy.get("copy"), accuracy.get("source"), accuracy.get("sha256")))
    for copy, source, sha256 in inputs:
        if not isinstance(copy, str) or not copy.startswith("not copied"):
            continue
        text = f"{_capital(copy)}."
        if isinstance(source, dict):
            commit = f" at commit {source.get('commit')}" if source.get("commit") else ""
            text += (
                f" Source: {source.get('title')}, {source.get('repository')}{commit}, "
                f"{source.get('path')} (sha256 {sha256}); 'audit fetch {source.get('dataset')}' "
                "fetches the same bytes."
            )
        notes.append(text)
    return notes


def _guarded(
    key: str, build: Callable[[Path, Declared], dict | None], folder: Path, declared: Declared
) -> dict | None:
    """A section's context, or why it could not be built (the rest of the page stands): a
    data condition (an :class:`~audit.exceptions.AuditError`) as its sentence, anything
    else as an internal error whose traceback goes to :data:`LOG`."""
    try:
        body = build(folder, declared)
    except AuditError as error:
        return {"condition": str(error)}
    except Exception as error:  # a bug in audit: said as such, its traceback kept
        return {"internal": _log_internal(key, error, folder)}
    return None if body is None else {"body": body}


def guarded_html(key: str, build: Callable[[Path], str | None], folder: Path) -> str | None:
    """A section's HTML built by ``build(folder)`` (a page assembled from fragments, as the
    cross-dataset page is), or why it could not be built: a data condition as its
    sentence, anything else as an internal error whose traceback goes to :data:`LOG`."""
    from markupsafe import escape

    try:
        return build(folder)
    except AuditError as error:
        return f"<p>{escape(str(error))}</p>"
    except Exception as error:  # a bug in audit: said as such, its traceback kept
        return f'<p class="internal">{escape(_log_internal(key, error, folder))}</p>'


def section_html(key: str, folder: str | Path, header: dict | None = None) -> str | None:
    """One section of the front page (a key of :data:`SECTIONS`) as HTML, with its notices,
    for a page that takes its other sections from elsewhere; None when it has nothing."""
    folder = Path(folder)
    declared = Declared(folder, header or {})
    built = _guarded(key, _BUILDERS[key], folder, declared)
    notices = list(dict.fromkeys(declared.notices.get(key, [])))
    if built is None and not notices:
        return None
    template = _environment().get_template("frontpage.html.j2")
    return str(template.module.section({"key": key, "notices": notices, **(built or {})}))


def _log_internal(key: str, error: Exception, folder: Path) -> str:
    """Append ``error``'s traceback to the report's :data:`LOG`; the sentence to show."""
    text = "".join(traceback.format_exception(error))
    log = folder / LOG
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a", encoding="utf-8") as f:
            f.write(f"front page, section {key!r}:\n{text}\n")
    except OSError as failure:
        return INTERNAL_UNKEPT.format(
            error=type(error).__name__, log=LOG, reason=failure.strerror or failure
        )
    return INTERNAL.format(log=LOG)


@functools.cache
def _environment():
    """The template environment, made once in a process: it compiles the page's template
    on first use (0.04 s) and keeps it for every page and section written after."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("audit.report", "templates"),
        autoescape=True,
    )


def front_page(
    folder: str | Path,
    *,
    title: str,
    header: dict | None = None,
    notebooks: Sequence[tuple[str, str]] = (),
    sections: Sequence[tuple[str, str, str | None]] | None = None,
    lead: str = "",
) -> str:
    """The HTML of ``folder/index.html``: the findings from the tables the notebooks
    declared (the manifest's ``outputs``), then links, figures, tables and the run.

    ``header`` is the run header (default: ``folder/manifest.json`` if there is one);
    ``notebooks`` are ``(stem, title)`` pairs, linked as ``<stem>.html`` and ``<stem>.ipynb``.
    ``sections`` (``(id, title, html)``, None for one left out: HTML built and escaped by
    the caller, e.g. with :func:`guarded_html` and :func:`section_html`) replace the
    findings of a single-table report (the cross-dataset page:
    :mod:`audit.report.comparepage`), and ``lead`` (HTML) stands under the title.
    """
    from markupsafe import Markup

    folder = Path(folder)
    if header is None:
        manifest = folder / "manifest.json"
        header = json.loads(manifest.read_text()) if manifest.is_file() else {}
    declared = Declared(folder, header)
    findings = []
    if sections is not None:
        findings = [
            {"key": key, "title": name, "notices": [], "html": Markup(html)}
            for key, name, html in sections
            if html is not None
        ]
    else:
        built = {key: _guarded(key, _BUILDERS[key], folder, declared) for key, _ in SECTIONS}
        declared.expect()
        for key, name in SECTIONS:
            notices = list(dict.fromkeys(declared.notices.get(key, [])))
            section = built[key]
            if section is None and not notices:
                continue
            findings.append({"key": key, "title": name, "notices": notices, **(section or {})})
    # above the findings, on a page that lists the warnings (a report of one table)
    listed = ((built["warnings"] or {}).get("body") or {}) if sections is None else {}
    misread = list(
        dict.fromkeys(
            entry["sentence"] for entry in listed.get("entries", []) if entry["category"] in MISREAD
        )
    )
    figures = [
        {
            "href": _href(p, folder),
            "name": p.stem,
            "title": figure_caption(p),
            "svg": _href(p.with_suffix(".svg"), folder),
        }
        for p in declared.listed("figures")
    ]
    tables = sorted(declared.listed("tables") + declared.listed("sentences"), key=lambda p: p.name)
    run = [
        (key, value if isinstance(value, str) else json.dumps(value, default=str))
        for key, value in header.items()
        if key not in ("parameters", "outputs")
    ]
    return (
        _environment()
        .get_template("frontpage.html.j2")
        .render(
            title=title,
            lead=Markup(lead),
            misread=misread,
            style=STYLE,
            meta=_meta(header),
            input_notes=_input_notes(header),
            findings=findings,
            notebooks=[{"href": quote(stem), "title": name} for stem, name in notebooks],
            figures=figures,
            tables=_links(tables, folder),
            run=run,
            parameters=[(k, repr(v)) for k, v in (header.get("parameters") or {}).items()],
        )
    )


__all__ = [
    "Declared",
    "calibration_section",
    "figure_caption",
    "front_page",
    "frontier_section",
    "guarded_html",
    "measures_section",
    "orderings_data",
    "orderings_section",
    "quality_section",
    "robustness_section",
    "section_html",
    "verdicts_section",
    "warnings_section",
]
