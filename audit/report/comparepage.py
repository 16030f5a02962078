"""The front page of a cross-dataset report (``audit compare``), and its verdict matrix as
the command line prints it.

Built after the compare notebook has run, from the tables it wrote
(:mod:`audit.analysis.compare`), with the page frame of
:func:`audit.report.frontpage.front_page` (style, notebooks, figures, tables,
run).  Each section has a function that builds its data from the tables
(``*_data``: plain dicts and lists) and a short one that writes its HTML, so
that a template can take the data as they are:

* at the top, **what holds** (``compare_answer.csv``): the measures whose
  verdicts and rankings hold on every dataset, in a sentence;
* **Verdicts across datasets** (``compare_verdicts.csv``, ``compare_holding.csv``):
  the FFMC verdict of every measure on every dataset, with the share of
  replicates in which it holds, where each measure applies and whether it holds;
* **Rank agreement between measures** (``compare_rank_agreement.csv``): per
  dataset, the heat map and the pairs that stand out;
* **Across datasets** (``compare_algorithms.csv``, ``compare_cross_agreement.csv``,
  ``compare_not_compared.csv``): per pair of datasets, the matching of
  algorithms (near misses named), each measure's rank agreement and the
  measures not compared, with why;
* **Datasets** (``compare_datasets.csv`` and the manifest's ``inputs``): what was
  read, from where, and whether the report carries a copy;
* **Warnings** (:func:`audit.report.frontpage.warnings_section`).

Every string from a table, a file name or the manifest is escaped.
"""

from __future__ import annotations

import json
import math
import textwrap
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from audit.analysis.text import count as _count
from audit.report.frontpage import (
    _WORDS,
    ROBUST,
    Declared,
    _float,
    _read,
    _truth,
    front_page,
    guarded_html,
    section_html,
)
from audit.report.frontpage import _href as _quoted
from audit.report.text import escape_html as e

#: How many algorithms of one dataset only the page names, per pair.
ONLY_NAMED = 12
#: How many pairs of measures that stand out the page names, per kind and dataset.
PAIRS_NAMED = 3
#: The columns of the verdict matrix the command line prints.
CRITERIA = ("FFMC.1", "FFMC.2", "FFMC.3")


def _table(folder: Path, name: str) -> pd.DataFrame | None:
    path = folder / "tables" / f"{name}.csv"
    return _read(path) if path.is_file() else None


def _declared(folder: Path, declared: Declared | None) -> Declared:
    """What the compare notebook declared (:class:`audit.report.frontpage.Declared`):
    ``declared`` as given, else read from the report's manifest."""
    if declared is not None:
        return declared
    manifest = folder / "manifest.json"
    try:
        header = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        header = {}
    return Declared(folder, header if isinstance(header, dict) else {})


# ------------------------------------------------------------------ HTML fragments


def _badge(passed: bool | None) -> str:
    word, css = _WORDS[passed]
    return f'<span class="badge {css}">{word}</span>'


def _href(path: Path, folder: Path) -> str:
    return e(_quoted(path, folder))


def _list(items: Sequence[str]) -> str:
    return "<ul>" + "".join(f"<li>{item}</li>" for item in items) + "</ul>"


def _names(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c`` (escaped)."""
    items = [e(i) for i in items]
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _source(paths: Sequence[Path], folder: Path) -> str:
    links = ", ".join(f'<a href="{_href(p, folder)}">{e(p.name)}</a>' for p in paths)
    return f'<p class="source">From {links}.</p>'


# ------------------------------------------------------------------ what holds


def answer_data(folder: Path) -> str | None:
    """The answer of the comparison (plain text), from ``compare_answer.csv``."""
    frame = _table(folder, "compare_answer")
    if frame is None or not len(frame):
        return None
    return " ".join(str(s) for s in frame["sentence"] if isinstance(s, str))


def answer_html(folder: Path) -> str:
    text = answer_data(folder)
    if text is None:
        return ""
    return f'<p class="answer lead"><strong>What holds.</strong> {e(text)}</p>'


# ------------------------------------------------------------------ verdicts


def verdicts_data(folder: Path) -> dict | None:
    """The verdict matrix: ``datasets``, ``criteria``, ``stability`` (dataset to the note
    of its uncertainty analysis), ``rows`` (one per measure: ``measure``, ``label``,
    ``holds``, ``reason``, ``cells``: (dataset, criterion) to ``passed``, ``agreement``,
    ``evidence``), and ``sources``."""
    matrix = _table(folder, "compare_verdicts")
    if matrix is None:
        return None
    held = _table(folder, "compare_holding")
    datasets_frame = _table(folder, "compare_datasets")
    datasets = list(dict.fromkeys(matrix["dataset"].astype(str)))
    criteria = list(dict.fromkeys(matrix["criterion"].astype(str)))
    holding = {}
    if held is not None:
        for r in held.itertuples():
            holding[str(r.measure)] = (
                _truth(r.holds),
                r.reason if isinstance(r.reason, str) else "",
            )
    rows = []
    for measure, part in matrix.groupby("measure", sort=False):
        cells = {
            (str(r.dataset), str(r.criterion)): {
                "passed": _truth(r.passed),
                "agreement": _float(r.agreement),
                "evidence": r.evidence if isinstance(r.evidence, str) else "",
            }
            for r in part.itertuples()
        }
        holds, reason = holding.get(str(measure), (None, ""))
        rows.append(
            {
                "measure": str(measure),
                "label": str(part["label"].iloc[0]),
                "holds": holds,
                "reason": reason,
                "cells": cells,
            }
        )
    stability = {}
    if datasets_frame is not None and "stability" in datasets_frame:
        stability = dict(
            zip(
                datasets_frame["dataset"].astype(str),
                datasets_frame["stability"].astype(str),
                strict=True,
            )
        )
    sources = [folder / "tables" / "compare_verdicts.csv"]
    if held is not None:
        sources.append(folder / "tables" / "compare_holding.csv")
    return {
        "datasets": datasets,
        "criteria": criteria,
        "stability": stability,
        "rows": rows,
        "sources": sources,
    }


def _cell(cell: dict | None) -> str:
    if cell is None:
        return '<td class="cell"></td>'
    title = f' title="{e(cell["evidence"])}"' if cell["evidence"] else ""
    html = _badge(cell["passed"])
    agreement = cell["agreement"]
    if cell["passed"] is not None and agreement is not None and agreement < ROBUST:
        html += f'<span class="share differs">holds in {100 * agreement:.0f}% of replicates</span>'
    return f'<td class="cell"{title}>{html}</td>'


def verdicts_html(folder: Path) -> str | None:
    data = verdicts_data(folder)
    if data is None:
        return None
    datasets, criteria = data["datasets"], data["criteria"]
    top = "".join(f'<th colspan="{len(criteria)}">{e(d)}</th>' for d in datasets)
    second = "".join(f"<th>{e(c)}</th>" for _ in datasets for c in criteria)
    body = []
    for row in data["rows"]:
        cells = "".join(_cell(row["cells"].get((d, c))) for d in datasets for c in criteria)
        holds = row["holds"]
        mark = (
            '<td class="cell"><span class="badge pass">holds</span></td>'
            if holds
            else f'<td class="cell note" title="{e(row["reason"])}">no</td>'
        )
        body.append(f"<tr><th>{e(row['label'])}</th>{cells}{mark}</tr>")
    table = (
        '<div class="scroll"><table class="verdicts"><thead>'
        f'<tr><th rowspan="2">Measure</th>{top}<th rowspan="2">Holds</th></tr>'
        f"<tr>{second}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )
    legend = (
        '<p class="note">Each dataset audited on its own (FFMC.1-3, Howard et al. sec. 3.4); a '
        f"verdict holding in fewer than {100 * ROBUST:.0f}% of the replicates of the dataset's "
        "uncertainty analysis says so under it. n/a: the criterion or the measure does not apply "
        "to that dataset. <em>Holds</em>: applies to every dataset, same verdicts wherever a "
        "criterion is judged on more than one, and rankings that agree on every pair of datasets "
        "(hover over <em>no</em> for why not).</p>"
    )
    stability = [f"<strong>{e(d)}</strong>: {e(note)}." for d, note in data["stability"].items()]
    return (
        _stability_answer(data)
        + table
        + legend
        + (f'<p class="note">Stability of the verdicts:</p>{_list(stability)}' if stability else "")
        + _source(data["sources"], folder)
    )


def _stability_answer(data: dict) -> str:
    """How stable the verdicts are, dataset by dataset, in one sentence."""
    parts = []
    for d in data["datasets"]:
        shares = [
            row["cells"][(d, c)]["agreement"]
            for row in data["rows"]
            for c in data["criteria"]
            if (d, c) in row["cells"]
            and row["cells"][(d, c)]["passed"] is not None
            and row["cells"][(d, c)]["agreement"] is not None
        ]
        if not shares:
            parts.append(f"on {e(d)} their stability is not measured")
        elif min(shares) >= ROBUST:
            parts.append(
                f"on {e(d)} every verdict holds in at least {100 * ROBUST:.0f}% of the replicates"
            )
        else:
            shaky = sum(s < ROBUST for s in shares)
            verb = "holds" if shaky == 1 else "hold"
            parts.append(
                f"on {e(d)} {_count(shaky, 'verdict')} {verb} in fewer than "
                f"{100 * ROBUST:.0f}% of the replicates (marked)"
            )
    return f'<p class="answer">How sure the verdicts are: {"; ".join(parts)}.</p>'


# ------------------------------------------------------------------ rank agreement (b)


def _labels(folder: Path) -> dict[str, str]:
    """Measure to label (the verdicts' labels), and each dataset's accuracy label."""
    labels: dict[str, str] = {}
    matrix = _table(folder, "compare_verdicts")
    if matrix is not None:
        labels.update(zip(matrix["measure"].astype(str), matrix["label"].astype(str), strict=True))
    return labels


def agreement_data(folder: Path, declared: Declared | None = None) -> list[dict] | None:
    """Per dataset: ``dataset``, ``figure`` (its heat map, if drawn), ``pairs`` (measure
    pairs), ``opposed`` (pairs ranking in opposite orders: interval below 0), ``unrelated``
    (interval containing 0), ``untested`` (no interval, tau lowest first), ``accuracy``
    (each measure's tau with the accuracy, strongest first), as records ``first``,
    ``second`` (labels), ``tau``, ``low``, ``high``, ``n``."""
    frame = _table(folder, "compare_rank_agreement")
    if frame is None:
        return None
    declared = _declared(folder, declared)
    labels = _labels(folder)
    datasets = _table(folder, "compare_datasets")
    accuracy_of = (
        dict(zip(datasets["dataset"].astype(str), datasets["accuracy"].astype(str), strict=True))
        if datasets is not None and "accuracy" in datasets
        else {}
    )
    out = []
    for dataset, part in frame.groupby("dataset", sort=False):
        part = part[part["tau"].notna()]
        named = {**labels, "accuracy": f"accuracy ({accuracy_of.get(str(dataset), 'error rate')})"}
        records = [
            {
                "first": named.get(str(r.first), str(r.first)),
                "second": named.get(str(r.second), str(r.second)),
                "with_accuracy": str(r.second).startswith("accuracy")
                and str(r.second) not in labels,
                "tau": float(r.tau),
                "low": _float(r.low),
                "high": _float(r.high),
                "n": int(r.n),
            }
            for r in part.itertuples()
        ]
        measures = [r for r in records if not r["with_accuracy"]]
        opposed = sorted(
            (r for r in measures if r["high"] is not None and r["high"] < 0), key=lambda r: r["tau"]
        )
        unrelated = sorted(
            (
                r
                for r in measures
                if r["low"] is not None and r["high"] is not None and r["low"] <= 0 <= r["high"]
            ),
            key=lambda r: abs(r["tau"]),
        )
        accuracy = sorted((r for r in records if r["with_accuracy"]), key=lambda r: -abs(r["tau"]))
        untested = sorted((r for r in measures if r["low"] is None), key=lambda r: r["tau"])
        out.append(
            {
                "dataset": str(dataset),
                "figure": declared.figure(
                    "agreement", "compare", f"compare_rank_agreement_{dataset}"
                ),
                "pairs": len(measures),
                "opposed": opposed,
                "unrelated": unrelated,
                "untested": untested,
                "accuracy": accuracy,
            }
        )
    return out


def _pair_text(r: dict) -> str:
    interval = f" [{r['low']:.2f}, {r['high']:.2f}]" if r["low"] is not None else ""
    return f"{e(r['first'])} and {e(r['second'])}, {r['tau']:.2f}{interval}"


def _figure(path: Path, folder: Path, caption: str, width: int = 98) -> str:
    href = _href(path, folder)
    return (
        f'<figure style="width:{width}%"><a href="{href}"><img src="{href}" alt="{e(path.stem)}" '
        f'loading="lazy"></a><figcaption>{e(caption)}</figcaption></figure>'
    )


def agreement_html(folder: Path, declared: Declared | None = None) -> str | None:
    data = agreement_data(folder, declared)
    if data is None:
        return None
    blocks = []
    for d in data:
        items = []
        if d["opposed"]:
            items.append(
                f"{_count(len(d['opposed']), 'pair')} of measures rank the algorithms in opposite "
                "orders (interval below 0), most: "
                + "; ".join(_pair_text(r) for r in d["opposed"][:PAIRS_NAMED])
            )
        if d["unrelated"]:
            items.append(
                f"{_count(len(d['unrelated']), 'pair')} of measures rank them unrelatedly "
                "(interval containing 0), e.g. "
                + "; ".join(_pair_text(r) for r in d["unrelated"][:PAIRS_NAMED])
            )
        if d["accuracy"]:
            strongest = d["accuracy"][0]
            items.append(
                "with the accuracy (an error rate), the strongest relation is "
                + _pair_text(strongest)
                + (
                    ": the less accurate algorithms are the less fair by it"
                    if strongest["tau"] > 0
                    else ": the less accurate algorithms are the fairer by it"
                )
            )
        if d["untested"]:  # no interval (too few replicates): agreement not judged
            low, high = d["untested"][0]["tau"], d["untested"][-1]["tau"]
            items.append(
                f"{_count(len(d['untested']), 'pair')} of measures have no interval (too few "
                f"bootstrap replicates), so whether they agree beyond chance is not judged; "
                f"their tau runs from {low:.2f} to {high:.2f}"
            )
        if not items and d["pairs"] == 0:  # every tau undefined: the measures tie
            items.append(
                "no pair of measures has a Kendall's tau-b: the measures tie on every "
                "algorithm, so their rankings are not compared"
            )
        if not items:
            items.append("every pair of measures ranks the algorithms alike beyond chance")
        blocks.append(
            f"<h3>{e(d['dataset'])}</h3><p>Of {_count(d['pairs'], 'pair')} of measures:</p>"
            + _list([i + "." for i in items])
            + (
                _figure(
                    d["figure"], folder, f"{d['dataset']}: Kendall's tau-b between the measures"
                )
                if d["figure"] is not None
                else ""
            )
        )
    return (
        "".join(blocks)
        + '<p class="note">Kendall\'s tau-b between two measures over the algorithms of one '
        "dataset, every measure oriented so that a higher value is less fair; bootstrap intervals "
        "over algorithms (a dot in the heat map: the interval contains 0).</p>"
        + _source([folder / "tables" / "compare_rank_agreement.csv"], folder)
    )


# ------------------------------------------------------------------ across datasets (c)


def cross_data(folder: Path, declared: Declared | None = None) -> list[dict] | None:
    """Per pair of datasets: ``first``, ``second``, ``what`` (compared on), ``counts``
    (status to algorithms), ``only`` (status to names), ``near`` (records ``algorithm``,
    ``near``, ``differs``), ``rows`` (each measure's ``label``, ``n``, ``kendall``,
    ``kendall_low``, ``kendall_high``, ``spearman``, ``spearman_low``,
    ``spearman_high``), ``not_compared`` (records ``measure``, ``reason``), ``figures``."""
    matched = _table(folder, "compare_algorithms")
    agreement = _table(folder, "compare_cross_agreement")
    if matched is None or agreement is None:
        return None
    declared = _declared(folder, declared)
    missing = _table(folder, "compare_not_compared")
    labels = _labels(folder)
    out = []
    pairs = list(
        dict.fromkeys(zip(matched["first"].astype(str), matched["second"].astype(str), strict=True))
    )
    for first, second in pairs:
        mine = matched[
            (matched["first"].astype(str) == first) & (matched["second"].astype(str) == second)
        ]
        status = mine["status"].astype(str)
        near = mine[mine["near"].notna() & (mine["near"].astype(str) != "")]
        rows = agreement[
            (agreement["first"].astype(str) == first) & (agreement["second"].astype(str) == second)
        ]
        lost = (
            missing[
                (missing["first"].astype(str) == first) & (missing["second"].astype(str) == second)
            ]
            if missing is not None and len(missing)
            else None
        )
        figures = [
            declared.figure("across", "compare", f"compare_{kind}_{first}_{second}")
            for kind in ("cross_agreement", "ranks")
        ]
        out.append(
            {
                "first": first,
                "second": second,
                "what": str(rows["compared_on"].iloc[0]) if len(rows) else "",
                "counts": status.value_counts(sort=False).to_dict(),
                "only": {
                    s: list(mine.loc[status == s, "algorithm"].astype(str))
                    for s in dict.fromkeys(status)
                    if s != "in both"
                },
                "near": near[["algorithm", "near", "differs"]].astype(str).to_dict("records"),
                "rows": [
                    {**r, "label": labels.get(str(r["measure"]), str(r["label"]))}
                    for r in rows.to_dict("records")
                ],
                "not_compared": []
                if lost is None
                else lost[["measure", "reason"]].astype(str).to_dict("records"),
                "figures": [f for f in figures if f is not None],
            }
        )
    return out


def _interval(row: dict, method: str) -> str:
    value, low, high = (_float(row.get(f"{method}{s}")) for s in ("", "_low", "_high"))
    if value is None:
        return "<td></td>"
    text = f"{value:.2f}" + (
        f" [{low:.2f}, {high:.2f}]" if low is not None and high is not None else ""
    )
    return f'<td class="num">{e(text)}</td>'


def cross_html(folder: Path, declared: Declared | None = None) -> str | None:
    data = cross_data(folder, declared)
    if data is None:
        return None
    labels = _labels(folder)
    blocks = []
    for d in data:
        both = d["counts"].get("in both", 0)
        only = "; ".join(
            f"{_count(len(names), 'algorithm')} {e(status)}: {e(', '.join(names[:ONLY_NAMED]))}"
            + (f" and {len(names) - ONLY_NAMED} more" if len(names) > ONLY_NAMED else "")
            for status, names in d["only"].items()
        )
        near = (
            "Near misses, not matched: "
            + "; ".join(
                f"{e(r['algorithm'])} ~ {e(r['near'])} ({e(r['differs'])})" for r in d["near"]
            )
            + "."
            if d["near"]
            else "No near miss (a name differing only by case, the kind of dash, spaces or "
            "Unicode normalisation)."
        )
        rows = "".join(
            f'<tr><th>{e(r["label"])}</th><td class="num">{int(r["n"])}</td>'
            + _interval(r, "kendall")
            + _interval(r, "spearman")
            + "</tr>"
            for r in d["rows"]
        )
        lost = {}
        for r in d["not_compared"]:
            lost.setdefault(r["reason"], []).append(labels.get(r["measure"], r["measure"]))
        lost_html = (
            '<p class="note"><strong>Not compared</strong>: '
            + "; ".join(f"{_names(m)}: {e(reason)}" for reason, m in lost.items())
            + ".</p>"
            if lost
            else ""
        )
        shown = {
            "cross_agreement": ("each measure's rank agreement", 60),
            "ranks": ("each measure's ranks of the shared algorithms", 98),
        }
        figures = ""
        for f in d["figures"]:
            what, width = next(v for k, v in shown.items() if f.stem.startswith(f"compare_{k}_"))
            figures += _figure(f, folder, f"{d['first']} against {d['second']}: {what}", width)
        blocks.append(
            f"<h3>{e(d['first'])} and {e(d['second'])}</h3>"
            f'<p class="answer"><strong>{both}</strong> algorithms are in both, matched by name '
            f"exactly; each measure is compared on the {e(d['what'])}.</p>"
            f'<p class="note">{only}. {near}</p>'
            '<div class="scroll"><table><thead><tr><th>Measure</th><th class="num">Algorithms</th>'
            '<th class="num">Kendall\'s tau-b [interval]</th>'
            '<th class="num">Spearman\'s rho [interval]</th></tr></thead>'
            f"<tbody>{rows}</tbody></table></div>{lost_html}{figures}"
        )
    names = ["compare_algorithms.csv", "compare_cross_agreement.csv", "compare_not_compared.csv"]
    sources = [folder / "tables" / n for n in names if (folder / "tables" / n).is_file()]
    return (
        "".join(blocks)
        + '<p class="note">Ranks among the shared algorithms, 1 for the fairest (or the most '
        "accurate); the accuracy row compares each dataset's own accuracy, a check that a name "
        "means the same algorithm in both.</p>" + _source(sources, folder)
    )


# ------------------------------------------------------------------ datasets


def datasets_data(folder: Path, header: dict) -> list[dict] | None:
    """Each dataset read: ``dataset``, ``holds`` (what a built-in dataset holds, "" for a
    file), ``file``, ``algorithms``, ``rates``, ``groups``, ``accuracy``, ``calibration``,
    and its inputs from the manifest (``inputs``: records
    ``role``, ``file``, ``sha256``, ``copy``, ``source``)."""
    frame = _table(folder, "compare_datasets")
    if frame is None:
        return None
    inputs = header.get("inputs") if isinstance(header.get("inputs"), list) else []
    out = []
    for r in frame.to_dict("records"):
        mine = [i for i in inputs if isinstance(i, dict) and i.get("label") == str(r["dataset"])]
        out.append(
            {
                **{
                    k: ("" if v is None or (isinstance(v, float) and math.isnan(v)) else v)
                    for k, v in r.items()
                },
                "inputs": mine,
            }
        )
    return out


def _copy_note(item: dict) -> str:
    copy = str(item.get("copy") or "")
    if not copy.startswith("not copied"):
        return f"copy in the report: <code>{e(copy)}</code>" if copy else ""
    text = copy[:1].upper() + copy[1:] + "."
    source = item.get("source")
    if isinstance(source, dict):
        commit = f" at commit {source.get('commit')}" if source.get("commit") else ""
        text += (
            f" Source: {source.get('title')}, {source.get('repository')}{commit}, "
            f"{source.get('path')}; 'audit fetch {source.get('dataset')}' fetches the same bytes."
        )
    return e(text)


def datasets_html(folder: Path, header: dict) -> str | None:
    data = datasets_data(folder, header)
    if data is None:
        return None
    items = []
    for d in data:
        holds = (
            f" {e(str(d['holds'])[:1].upper() + str(d['holds'])[1:])}." if d.get("holds") else ""
        )
        text = (
            f"<strong>{e(d['dataset'])}</strong>:{holds} Read: {e(d['algorithms'])} algorithms, "
            f"{e(d['rates'])}, groups {e(d['groups'])}. Accuracy: {e(d.get('accuracy', ''))}. "
            f"Calibration: {e(d.get('calibration', ''))}."
        )
        for item in d["inputs"]:
            role = "rates" if item.get("role") == "rates" else "accuracy"
            text += (
                f'<br><span class="note">{role}: <code>{e(Path(str(item.get("file", ""))).name)}'
                f"</code>, sha256 <code>{e(str(item.get('sha256', ''))[:12])}…</code>; "
                f"{_copy_note(item)}</span>"
            )
        items.append(text)
    return _list(items) + _source([folder / "tables" / "compare_datasets.csv"], folder)


# ------------------------------------------------------------------ the page


def compare_sections(folder: Path, header: dict) -> list[tuple[str, str, str | None]]:
    """The findings of a cross-dataset report, as :func:`audit.report.frontpage.front_page`
    takes them."""
    declared = Declared(folder, header)
    return [
        ("verdicts", "Verdicts across datasets", guarded_html("verdicts", verdicts_html, folder)),
        (
            "agreement",
            "Rank agreement between measures",
            guarded_html("agreement", lambda f: agreement_html(f, declared), folder),
        ),
        (
            "across",
            "Across datasets",
            guarded_html("across", lambda f: cross_html(f, declared), folder),
        ),
        (
            "datasets",
            "Datasets",
            guarded_html("datasets", lambda f: datasets_html(f, header), folder),
        ),
        ("warnings", "Warnings", section_html("warnings", folder, header)),
    ]


def compare_page(
    folder: str | Path,
    *,
    title: str,
    header: dict | None = None,
    notebooks: Sequence[tuple[str, str]] = (),
) -> str:
    """The HTML of a cross-dataset report's ``index.html``."""
    folder = Path(folder)
    if header is None:
        manifest = folder / "manifest.json"
        header = json.loads(manifest.read_text()) if manifest.is_file() else {}
    return front_page(
        folder,
        title=title,
        header=header,
        notebooks=notebooks,
        sections=compare_sections(folder, header),
        lead=guarded_html("answer", answer_html, folder) or "",
    )


# ------------------------------------------------------------------ the terminal


def verdict_lines(folder: str | Path, *, width: int = 100) -> list[str]:
    """The verdict matrix as the command line prints it: one row per measure, for each
    dataset its FFMC.1-3 verdicts and the lowest share of replicates in which one of them
    holds (``-`` where not measured), then the answer (plain text, not escaped)."""
    folder = Path(folder)
    data = verdicts_data(folder)
    if data is None:
        return []
    datasets = data["datasets"]
    name_width = max([len("measure")] + [len(r["label"]) for r in data["rows"]])
    column = max(len(c) for c in CRITERIA) + 1
    block = column * len(CRITERIA) + len("stable") + 2
    lines = [
        "FFMC verdicts (stable: the lowest share of replicates holding a verdict; - not measured)",
        " " * (name_width + 2) + "".join(f"{d[: block - 1]:<{block}}" for d in datasets).rstrip(),
        f"{'measure':<{name_width}}  "
        + "".join(
            "".join(f"{c:<{column}}" for c in CRITERIA) + f"{'stable':<{len('stable') + 2}}"
            for _ in datasets
        ).rstrip(),
    ]
    for row in data["rows"]:
        parts = []
        for d in datasets:
            cells = [row["cells"].get((d, c)) for c in CRITERIA]
            words = "".join(
                f"{('n/a' if c is None or c['passed'] is None else 'pass' if c['passed'] else 'FAIL'):<{column}}"
                for c in cells
            )
            shares = [
                c["agreement"]
                for c in cells
                if c and c["passed"] is not None and c["agreement"] is not None
            ]
            stable = f"{100 * min(shares):.0f}%" if shares else "-"
            parts.append(words + f"{stable:<{len('stable') + 2}}")
        lines.append(f"{row['label']:<{name_width}}  " + "".join(parts).rstrip())
    answer = answer_data(folder)
    if answer:
        lines.append("")
        lines += textwrap.wrap(answer, width=width)
    return lines


__all__ = [
    "agreement_data",
    "answer_data",
    "compare_page",
    "compare_sections",
    "cross_data",
    "datasets_data",
    "verdict_lines",
    "verdicts_data",
]
