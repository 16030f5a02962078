"""The report's front page: the findings read from the report's own tables, on the real
Annex 15 report, on an FMR-only table and on hostile names; warnings as sentences; the page
in a real browser at laptop width."""

from __future__ import annotations

import html
import json
import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from markupsafe import escape

from audit.report import frontpage
from audit.report.frontpage import (
    INTERNAL,
    INTERNAL_UNKEPT,
    LOG,
    MISSING,
    NOT_DECLARED,
    UNREADABLE,
    front_page,
)
from audit.report.runner import run_report
from audit.report.text import escape_mathtext

pytestmark = pytest.mark.usefixtures("shared_server")  # one server for its reports

CHROMIUM = shutil.which("chromium")
NO_CHROMIUM = (
    "headless Chromium is not installed (Debian: apt-get install chromium), so the front page "
    "is not rendered in a browser here"
)
#: A code location as Python prints it in a warning: ``.../x.py:17``.
CODE_PATH = re.compile(r"\.py:\d")
#: A laptop screen.
LAPTOP = (1366, 900)


class _Cells(HTMLParser):
    """The text of every row of the tables of one class: a list of rows of cell texts."""

    def __init__(self, css_class: str):
        super().__init__()
        self.css_class, self.rows, self._depth, self._row, self._cell = css_class, [], 0, None, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            if self._depth or self.css_class in (attrs.get("class") or "").split():
                self._depth += 1
        elif self._depth and tag == "tr":
            self._row = []
        elif self._depth and tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "table" and self._depth:
            self._depth -= 1
        elif self._depth and tag in ("td", "th") and self._cell is not None:
            self._row.append(" ".join(" ".join(self._cell).split()))
            self._cell = None
        elif self._depth and tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _rows(page: str, css_class: str) -> list[list[str]]:
    parser = _Cells(css_class)
    parser.feed(page)
    return parser.rows


def _section(page: str, name: str) -> str:
    found = re.search(rf'<section id="{name}"><h2>.*?</h2>(.*?)</section>', page, re.DOTALL)
    assert found is not None, f"no section {name!r}"
    return found.group(1)


def _text(fragment: str) -> str:
    """What a reader sees of an HTML fragment: tags dropped, entities decoded, one line."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


# --- the real Annex 15 report -------------------------------------------------------------


@pytest.fixture(scope="module")
def annex15_report(annex15_built):
    """The report's folder (built once in the run: read it, never change it)."""
    assert annex15_built.status == 0, annex15_built.printed
    return annex15_built.report


@pytest.fixture(scope="module")
def annex15_page(annex15_report):
    return (annex15_report / "index.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_annex15_verdicts_are_the_papers(annex15_page):
    """Howard et al. sec. 4, Table 2: FDR fails FFMC.1, IR fails FFMC.2 and FFMC.3, GARBE
    passes all three; the audit computes the same verdicts and shows the paper's beside them."""
    rows = {row[0]: row[1:] for row in _rows(annex15_page, "verdicts")}
    assert rows["Measure"] == ["FFMC.1", "FFMC.2", "FFMC.3", "ISO/IEC 19795-10 term"]
    aggregate = "aggregate equitability measure"
    assert rows["FDR"] == ["FAIL paper: fail", "pass paper: pass", "pass paper: pass", aggregate]
    assert rows["IR"] == ["pass paper: pass", "FAIL paper: fail", "FAIL paper: fail", aggregate]
    assert rows["GARBE"] == ["pass paper: pass", "pass paper: pass", "pass paper: pass", aggregate]
    # measures the paper does not judge carry no paper verdict
    assert rows["NRB"] == ["pass", "FAIL", "FAIL", aggregate]
    labelled = {name.split(" ( ")[0]: cells for name, cells in rows.items()}  # "Label ( name )"
    assert labelled["MERG (WERM)"] == ["pass", "FAIL", "FAIL", aggregate]
    # a measure of one error rate has no alpha to weigh: FFMC.1 n/a, as on a one-sided table
    assert labelled["Gini FMR (NIST)"] == [
        "n/a",
        "FAIL",
        "pass",
        "false-positive differential performance",
    ]
    assert labelled["SER"][0].startswith("n/a") and labelled["STD(FMR)"][0].startswith("n/a")
    # Annex 15 has no comparison counts: the zero-error-adjusted measures are n/a
    assert labelled["IR (CP)"][:3] == ["n/a", "n/a", "n/a"]
    answer = _text(_section(annex15_page, "verdicts"))
    assert answer.startswith("GARBE, ")  # with the spreads of one rate that pass FFMC.2-3
    assert "pass every criterion that applies; the other 20 measures fail at least one." in answer
    assert "it is not a claim of conformance with the standard" in answer
    assert "Howard et al. (Table 2) judge FDR, IR and GARBE: the audit agrees with all 9" in answer


@pytest.mark.slow
def test_annex15_verdicts_match_the_table(annex15_report, annex15_page):
    table = pd.read_csv(annex15_report / "tables" / "ffmc_table.csv")
    rows = {row[0].rsplit(" (", 1)[0]: row[1:] for row in _rows(annex15_page, "verdicts")[1:]}
    assert len(rows) == table["measure"].nunique() == 32
    for r in table.itertuples():
        shown = rows[r.label][["FFMC.1", "FFMC.2", "FFMC.3"].index(r.criterion)]
        word = "n/a" if pd.isna(r.passed) else "pass" if r.passed else "FAIL"
        assert shown.split()[0] == word, (r.measure, r.criterion)


@pytest.mark.slow
def test_annex15_frontier_members_and_probabilities(annex15_report, annex15_page):
    tables = annex15_report / "tables"
    everyone = pd.read_csv(tables / "pareto_all_garbe.csv")
    probability = pd.read_csv(tables / "frontier_probability_garbe.csv").set_index("algorithm")
    rows = _rows(annex15_page, "frontier")
    assert rows[0] == ["Algorithm", "Total FNMR", "GARBE (alpha=0.5)", "Membership probability"]
    shown = {row[0]: float(row[3]) for row in rows[1:]}
    members = everyone.loc[everyone["on_frontier"], "algorithm"]
    assert set(shown) == set(members)
    # README: with equal weights the GARBE frontier has 6 of 126 algorithms
    assert len(shown) == 6
    assert {"didiglobalface-001", "intellifusion-001", "nodeflux-001"} <= set(shown)
    for algorithm, p in shown.items():
        assert 0.0 <= p <= 1.0
        assert p == pytest.approx(probability.loc[algorithm, "frontier_probability"], abs=5e-4)
    # ordered by accuracy, as the down-select table is
    accuracy = everyone.set_index("algorithm").loc[list(shown), "accuracy"]
    assert accuracy.is_monotonic_increasing
    text = _text(_section(annex15_page, "frontier"))
    assert "6 of 126 algorithms are on the Pareto frontier of Total FNMR and GARBE" in text


@pytest.mark.slow
def test_annex15_robustness_sentences_and_quality_flags(annex15_report, annex15_page):
    said = pd.read_csv(annex15_report / "tables" / "robustness_ffmc.csv")
    section = _section(annex15_page, "robustness")
    robustness = _text(section)
    assert said["sentence"].iloc[0].startswith("Every number here was recomputed on 200 redraws")
    for sentence in said["sentence"]:
        assert " ".join(sentence.split()) in robustness
    # a list's items under the sentence that introduces them
    items = said.loc[said["item"], "sentence"]
    # escaped as the template escapes (markupsafe: an apostrophe is &#39;)
    assert len(items) and all(f"<li>{escape(s)}</li>" in section for s in items)
    assert "Numbers of the paper that hold in 95% of the redraws" in robustness
    assert "The Pareto frontier of GARBE and total FNMR holds 6 algorithms with the published" in (
        robustness
    )
    # the sentences, without the links to their tables, name no code identifier
    sentences = _text(re.sub(r'<p class="source">.*?</p>', "", section, flags=re.DOTALL))
    for identifier in ("garbe.", "frontier.size", "algorithm(s)", "Spearman down to"):
        assert identifier not in sentences
    quality = _text(_section(annex15_page, "quality"))
    # data README: 334 of 1,008 FMR cells on the 1e-5 floor; FMR on a 0.1-decade grid
    assert "334 of 1008 FMR cells sit on the floor 1e-05" in quality
    assert "0.1-decade grid" in quality
    assert "1 FNMR cell is exactly 1" in quality
    # the measures a flag affects by their labels, not their registry names
    assert "Affects: IR, GARBE, NRB, NRB(FMR), STD(FMR), SER, Max/Min FMR (NIST)," in quality
    assert "nrb_fmr" not in quality and "cell(s)" not in quality
    assert "distinct" not in quality  # a count, not a flag


@pytest.mark.slow
def test_annex15_report_has_no_code_paths_and_no_broken_section(annex15_report, annex15_page):
    pages = sorted(annex15_report.glob("*.html"))
    assert {p.name for p in pages} == {"index.html", "ffmc.html", "pareto.html"}
    for page in pages:
        assert CODE_PATH.search(page.read_text(encoding="utf-8")) is None, page.name
    assert UNREADABLE.split("{")[0] not in annex15_page
    warned = _text(_section(annex15_page, "warnings"))
    assert warned.startswith("No warning was raised while the report was computed")
    assert 'id="read-first"' not in annex15_page  # nothing that says it was misread
    for name in ("warnings_ffmc.csv", "warnings_pareto.csv"):
        assert len(pd.read_csv(annex15_report / "tables" / name)) == 0


@pytest.mark.slow
def test_annex15_figures_are_captioned_by_their_titles(annex15_report, annex15_page):
    """Each figure is captioned, and described to a screen reader, by the title drawn on
    it (written into its PNG and SVG), not by its file name: the golden frontier of the
    paper's Fig. 5 (6 of 126 on GARBE's) reads in the caption."""
    from xml.sax.saxutils import escape as xml_escape

    from PIL import Image

    figures = re.findall(
        r'<img src="figures/([^"]+)\.png" alt="([^"]*)"[^>]*></a><figcaption>(.*?)</figcaption>',
        _section(annex15_page, "figures"),
    )
    assert len(figures) == len(list((annex15_report / "figures").glob("*.png"))) >= 10
    for stem, alt, caption in figures:
        with Image.open(annex15_report / "figures" / f"{stem}.png") as image:
            title = image.info["Title"]
        assert html.unescape(alt) == title and title != stem
        assert re.sub(r"\s+\)", ")", _text(caption)) == f"{title} ({stem}, SVG)"
        svg = (annex15_report / "figures" / f"{stem}.svg").read_text(encoding="utf-8")
        assert f"<dc:title>{xml_escape(title)}</dc:title>" in svg
    titles = {stem: html.unescape(alt) for stem, alt, _ in figures}
    assert titles["pareto_garbe"].startswith(
        "Total FNMR vs GARBE: 6 of 126 algorithms on the Pareto frontier. Weights: "
    )
    assert titles["ffmc_panels_garbe"] == "GARBE"


@pytest.mark.slow
def test_annex15_page_is_self_contained(annex15_page):
    assert "<script" not in annex15_page
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", annex15_page)
    assert "@import" not in annex15_page


# --- an FMR-only table -----------------------------------------------------------------------


@pytest.mark.slow
def test_fmr_only_report_says_ffmc1_does_not_apply(fmr_only_built):
    assert fmr_only_built.status == 0, fmr_only_built.printed
    folder = fmr_only_built.report
    page = (folder / "index.html").read_text(encoding="utf-8")
    rows = {row[0].split(" ( ")[0]: row[1:4] for row in _rows(page, "verdicts")[1:]}
    assert all(cells[0].startswith("n/a") for cells in rows.values())
    assert rows["GARBE"][1:] == ["pass paper: pass", "pass paper: pass"]
    assert rows["STD(FNMR)"] == ["n/a", "n/a", "n/a"]
    assert rows["Gini FMR (NIST)"] == ["n/a", "FAIL", "pass"]
    assert rows["FMR ratio (F/M)"] == ["n/a", "FAIL", "FAIL"]
    assert rows["Max/Min FMR (NIST, CP)"] == ["n/a", "n/a", "n/a"]
    verdicts = _text(_section(page, "verdicts"))
    assert (
        "n/a (not applicable): FFMC.1 of FDR, IR, GARBE, NRB, NRB(FMR), STD(FMR), SER, "
        "Max/Min FMR (NIST), Max/Mean FMR (NIST), Max/GeoMean FMR (NIST), Vary GeoMean FMR "
        "(NIST), Gini FMR (NIST), MERG (WERM), MERA and FMR ratio (F/M): the table has FMR only, "
        "so there is no balance of an FMR and an FNMR term" in verdicts
    )
    assert "every criterion of NRB(FNMR), STD(FNMR), Max/Min FNMR (NIST)," in verdicts
    assert "FNMR ratio (F/M): the measure needs FNMR" in verdicts
    assert "No criterion applies to NRB(FNMR), STD(FNMR), Max/Min FNMR (NIST)," in verdicts
    # each reason beside the measures it is for
    assert (
        "Not applicable: NRB(FNMR), STD(FNMR), Max/Min FNMR (NIST), Max-Min FNMR (NIST), "
        "Max/Mean FNMR (NIST), Max/GeoMean FNMR (NIST), Vary GeoMean FNMR (NIST), Gini FNMR "
        "(NIST) and FNMR ratio \N{EM DASH} needs FNMR, which the table does not have (FMR-only "
        "table). Not applicable: Max/Min FMR (NIST, CP), Max/GeoMean FMR (NIST, CP) and FMR "
        "ratio (CP) \N{EM DASH} needs the comparison counts column 'n_nonmated'" in verdicts
    )
    assert (
        "Not applicable: Within/cross FMR ratio, FMR asymmetry and Gini of pair FMRs "
        "\N{EM DASH} needs the cross-group FMR matrix" in verdicts
    )
    frontier = _rows(page, "frontier")
    assert frontier[0] == [
        "Algorithm",
        "Total FMR",
        "GARBE (FMR term alone)",
        "Membership probability",
    ]
    # an FMR-only table has its uncertainty: the FMRs redrawn, the frontier on total FMR
    robustness = _text(_section(page, "robustness"))
    assert robustness.startswith(
        "FFMC audit and measures Every number here was recomputed on 200 redraws of the "
        "table: each FMR redrawn uniformly in log10 within its 0.1-decade bin"
    )
    assert "The Pareto frontier of GARBE (FMR term alone) and total FMR holds" in robustness
    assert re.search(
        r"FFMC verdicts (is|are) the same in (every one|at least 95%) of the", robustness
    )
    assert "FMR" in _text(_section(page, "quality"))
    assert "FNMR:" not in _text(_section(page, "quality"))


# --- warnings as sentences -----------------------------------------------------------------


@pytest.mark.slow
def test_notebook_warnings_become_sentences_on_every_page(tmp_path):
    """A table with implausibly high rates: read_rates warns in the notebook; the notebook
    shows the warning as a sentence, the front page lists it, and no page shows a code path."""
    frame = pd.DataFrame(
        {
            "Algorithm": [f"alg-{i}" for i in range(5)],
            "FMR.F": [0.40, 0.45, 0.50, 0.45, 0.42],
            "FNMR.F": [0.011, 0.023, 0.017, 0.031, 0.044],
            "FMR.M": [0.46, 0.45, 0.52, 0.41, 0.48],
            "FNMR.M": [0.013, 0.029, 0.019, 0.027, 0.041],
        }
    )  # median FMR 0.45, median FNMR 0.025
    path = tmp_path / "high.csv"
    frame.to_csv(path, index=False)
    folder = run_report(
        "high",
        notebooks=("pareto",),
        reports_root=tmp_path / "reports",
        progress=False,
        parameters={"data_path": str(path), "n_replicates": 20},
    )
    for page in folder.glob("*.html"):
        assert CODE_PATH.search(page.read_text(encoding="utf-8")) is None, page.name
    notebook = _text((folder / "pareto.html").read_text(encoding="utf-8"))
    assert notebook.count("Warning (implausible rates): The median FMR is 0.45") == 1
    table = pd.read_csv(folder / "tables" / "warnings_pareto.csv")
    # in percent? and, the FMRs all above the FNMRs, swapped columns?
    assert table["category"].tolist() == ["ImplausibleRatesWarning"] * 2
    assert table["sentence"].iloc[0].startswith("The median FMR is 0.45. FMRs above 0.05")
    assert table["sentence"].iloc[1].startswith("The FMR exceeds the FNMR in 10 of 10 cells")
    warned = _text(_section((folder / "index.html").read_text(encoding="utf-8"), "warnings"))
    assert warned.startswith("pareto (implausible rates): The median FMR is 0.45.")


# --- hostile names --------------------------------------------------------------------------

SCRIPT, IMG = "<script>alert(1)</script>", "<img src=x onerror=alert(2)>"
RAW = re.compile(r"<script|<img src=x", re.IGNORECASE)


def _write(
    folder: Path,
    name: str,
    frame: pd.DataFrame,
    role: str | None = None,
    *,
    notebook: str = "test",
    kind: str = "tables",
) -> None:
    """Write ``tables/<name>`` and declare it in ``manifest.json`` as ``role`` (default: the
    file's stem) of ``notebook``'s ``kind``, as a notebook's outputs list does; a notebook
    of no name the page knows, so that it expects nothing else of it."""
    (folder / "tables").mkdir(parents=True, exist_ok=True)
    frame.to_csv(folder / "tables" / name, index=False)
    manifest = folder / "manifest.json"
    header = json.loads(manifest.read_text()) if manifest.is_file() else {"parameters": {}}
    outputs = header.setdefault("outputs", {}).setdefault(notebook, {})
    outputs.setdefault(kind, {})[role or Path(name).stem] = f"tables/{name}"
    manifest.write_text(json.dumps(header))


def _outputs(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())["outputs"]


@pytest.mark.filterwarnings("ignore:Glyph 27:UserWarning")  # the escape, drawn as a box
def test_a_figure_is_captioned_by_its_escaped_title_else_by_its_name(tmp_path):
    """A title with markup is shown as text, and one with control characters shows them
    escaped (an override reversed the rest of the caption); a panel's title is its
    figure's beside an untitled inset; a figure without a title, and a PNG PIL cannot
    open (or refuses as a decompression bomb), are captioned by their file names."""
    import matplotlib.pyplot as plt

    from audit.report.outputs import save_figure

    folder = tmp_path / "r"
    _write(folder, "t.csv", pd.DataFrame({"x": [1]}))
    header = json.loads((folder / "manifest.json").read_text())
    declared = header["outputs"]["test"].setdefault("figures", {})
    for name, title in (("titled", f"{SCRIPT} {IMG} \N{GREEK SMALL LETTER ALPHA}"), ("plain", "")):
        fig, ax = plt.subplots()
        ax.plot([0, 1])
        ax.set_title(escape_mathtext(title))
        save_figure(fig, name, folder)
        plt.close(fig)
        declared[name] = f"figures/{name}.png"
    # a panel and its untitled inset (the Pareto zoom); a name with an escape and an override
    fig, ax = plt.subplots()
    ax.inset_axes([0.6, 0.6, 0.3, 0.3]).plot([0, 1])
    ax.set_title("front\x1b[2J \u202eevil")
    save_figure(fig, "inset", folder)
    plt.close(fig)
    declared["inset"] = "figures/inset.png"
    (folder / "figures" / "broken.png").write_bytes(b"\x89PNG not an image")
    # a header claiming 200,000 x 200,000 pixels: PIL refuses to open it as a bomb
    bomb = b"\x89PNG\r\n\x1a\n"
    for kind, data in (
        (b"IHDR", struct.pack(">IIBBBBB", 200_000, 200_000, 8, 2, 0, 0, 0)),
        (b"IDAT", zlib.compress(b"")),
        (b"IEND", b""),
    ):
        bomb += struct.pack(">I", len(data)) + kind + data
        bomb += struct.pack(">I", zlib.crc32(kind + data))
    (folder / "figures" / "bomb.png").write_bytes(bomb)
    for name in ("broken", "bomb"):
        (folder / "figures" / f"{name}.svg").write_text("")
        declared[name] = f"figures/{name}.png"
    (folder / "manifest.json").write_text(json.dumps(header))
    page = front_page(folder, title="t")
    assert RAW.search(page) is None
    captions = [
        re.sub(r"\(\s+", "(", re.sub(r"\s+\)", ")", _text(c)))
        for c in re.findall(r"<figcaption>(.*?)</figcaption>", _section(page, "figures"))
    ]
    assert captions == [
        "bomb (SVG)",
        "broken (SVG)",
        "front\\x1b[2J \\u202eevil (inset, SVG)",
        "plain (SVG)",
        f"{SCRIPT} {IMG} \N{GREEK SMALL LETTER ALPHA} (titled, SVG)",
    ]


def test_a_warning_that_the_data_may_be_misread_stands_above_the_findings(tmp_path):
    """An orientation, implausible-rates or pair-like-groups warning is shown at the top,
    escaped, each once; other warnings (few comparisons) only in their section."""
    folder = tmp_path / "r"
    rows = [
        ("OrientationWarning", f"Scores look like {SCRIPT}."),
        ("ImplausibleRatesWarning", f"The median FMR is 0.4 {IMG}."),
        ("OrientationWarning", f"Scores look like {SCRIPT}."),  # a second notebook's
        ("ScoresWarning", "3 rates rest on fewer than 100 comparisons."),
    ]
    frame = pd.DataFrame(rows, columns=["category", "sentence"]).assign(
        notebook="test", cell=1, kind="", count=1
    )
    _write(folder, "warnings_test.csv", frame, role="warnings")
    page = front_page(folder, title="t")
    assert RAW.search(page) is None
    first = re.search(r'<div class="misread" id="read-first">(.*?)</div>', page, re.DOTALL)
    assert first is not None and page.index("read-first") < page.index("<nav>")
    assert [_text(li) for li in re.findall(r"<li>(.*?)</li>", first.group(1))] == [
        f"Scores look like {SCRIPT}.",
        f"The median FMR is 0.4 {IMG}.",
    ]
    assert "fewer than 100" in _text(_section(page, "warnings"))


def test_front_page_escapes_every_name_it_reads(tmp_path):
    """Every table the page reads, with script and markup in each string column."""
    folder = tmp_path / "r"
    _write(
        folder,
        "ffmc_table.csv",
        pd.DataFrame(
            {
                "measure": [SCRIPT] * 3,
                "label": [IMG] * 3,
                "criterion": ["FFMC.1", "FFMC.2", f"FFMC.{SCRIPT}"],
                "passed": [True, False, None],
                "evidence": ["x", IMG, f"not applicable: {SCRIPT}"],
                "paper": [None, None, None],
            }
        ),
    )
    _write(
        folder,
        "pareto_all_x.csv",
        pd.DataFrame(
            {
                "algorithm": [SCRIPT, IMG],
                "accuracy": [0.01, 0.02],
                "fairness": [0.3, 0.2],
                "on_frontier": [True, True],
                "measure_label": IMG,
                "alpha": 0.5,
                "accuracy_axis": SCRIPT,
            }
        ),
        "pareto_all",
    )
    _write(
        folder,
        "frontier_probability_x.csv",
        pd.DataFrame({"algorithm": [SCRIPT, IMG], "frontier_probability": [1.0, 0.5]}),
        "frontier_probability",
    )
    _write(
        folder,
        "robustness_x.csv",
        pd.DataFrame({"topic": [IMG], "sentence": [SCRIPT]}),
        "robustness",
        kind="sentences",
    )
    _write(
        folder,
        "data_quality.csv",
        pd.DataFrame(
            {
                "rate": [SCRIPT],
                "check": ["floor"],
                "detail": [IMG],
                "affects": [SCRIPT],
                "flagged": [True],
            }
        ),
    )
    _write(
        folder,
        "warnings_x.csv",
        pd.DataFrame(
            {
                "notebook": [SCRIPT],
                "cell": [1],
                "kind": [IMG],
                "category": ["W"],
                "sentence": [SCRIPT],
                "count": [2],
            }
        ),
        "warnings",
    )
    _write(
        folder,
        "measures.csv",
        pd.DataFrame({"grouping": [IMG], "algorithm": [SCRIPT], "measure": [IMG], "value": [0.5]}),
    )
    _write(folder, f"{IMG}.csv", pd.DataFrame({"a": [1]}), IMG)
    header = {"input_file": f"{SCRIPT}.csv", "date": IMG, "parameters": {SCRIPT: IMG}}
    header["outputs"] = _outputs(folder)
    page = front_page(
        folder, title=f"audit report: {SCRIPT}", header=header, notebooks=[(SCRIPT, IMG)]
    )
    assert RAW.findall(page) == []
    assert UNREADABLE.split("{")[0] not in page
    escaped = html.escape(SCRIPT)
    for section in ("verdicts", "frontier", "robustness", "quality", "warnings", "measures", "run"):
        assert escaped in _section(page, section) or html.escape(IMG) in _section(page, section), (
            section
        )
    assert f'href="{html.escape("%3Cscript%3Ealert%281%29%3C/script%3E")}.html"' in page


def test_front_page_without_tables_says_what_it_lacks(tmp_path):
    page = front_page(tmp_path, title="audit report: empty")
    assert _text(_section(page, "verdicts")) == "This report has no FFMC audit."
    assert _text(_section(page, "frontier")) == "This report has no Pareto down-select."
    assert _text(_section(page, "warnings")) == "This report keeps no record of warnings."
    assert 'id="measures"' not in page


def _ffmc_header(**tables: str) -> dict:
    """A run header in which the FFMC notebook ran and declared ``tables`` (role: path)."""
    return {"notebooks": ["ffmc"], "outputs": {"ffmc": {"tables": tables}}}


def test_a_declared_table_that_is_missing_is_a_notice(tmp_path):
    page = front_page(
        tmp_path,
        title="t",
        header=_ffmc_header(ffmc_table="tables/ffmc_table.csv", data_quality="tables/dq.csv"),
    )
    verdicts = _section(page, "verdicts")
    missing = MISSING.format(
        path="tables/ffmc_table.csv",
        notebook="ffmc",
        what="FFMC verdict table",
        role="ffmc_table",
    )
    assert f'<p class="notice">{escape(missing)}</p>' in verdicts
    assert _text(verdicts) == "This report has no FFMC audit. " + missing
    quality = _text(_section(page, "quality"))
    assert (
        MISSING.format(
            path="tables/dq.csv", notebook="ffmc", what="data-quality table", role="data_quality"
        )
        in quality
    )
    # a role the notebook ran without declaring: a notice of its own, in its section
    not_declared = NOT_DECLARED.format(notebook="ffmc", what="table of warnings", role="warnings")
    assert f'<p class="notice">{escape(not_declared)}</p>' in _section(page, "warnings")
    assert NOT_DECLARED.format(
        notebook="ffmc", what="sentences on how sure the findings are", role="robustness"
    ) in _text(_section(page, "robustness"))
    assert not (tmp_path / LOG).exists()


def test_a_table_that_cannot_be_read_is_a_sentence_not_a_bug(tmp_path):
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "dq.csv").write_bytes(b"")
    page = front_page(tmp_path, title="t", header=_ffmc_header(data_quality="tables/dq.csv"))
    quality = _section(page, "quality")
    said = UNREADABLE.format(table="dq.csv", reason="No columns to parse from file")
    assert quality == f"<p>{escape(said)}</p>"
    assert "bug" not in quality and not (tmp_path / LOG).exists()


def test_a_bug_in_a_section_is_an_internal_error_with_its_traceback_in_the_log(
    tmp_path, monkeypatch
):
    def broken(folder, declared):
        raise TypeError("boom_internal")

    monkeypatch.setitem(frontpage._BUILDERS, "quality", broken)
    (tmp_path / "tables").mkdir()
    (tmp_path / "tables" / "w.csv").write_text("notebook,kind,message\n")
    page = front_page(tmp_path, title="t", header=_ffmc_header(warnings="tables/w.csv"))
    quality = _section(page, "quality")
    assert quality.startswith(f'<p class="internal">{escape(INTERNAL.format(log=LOG))}</p>')
    assert "boom_internal" not in page  # the page says where, the log says what
    log = (tmp_path / LOG).read_text(encoding="utf-8")
    assert log.startswith("front page, section 'quality':\nTraceback (most recent call last):")
    assert "in broken" in log and log.rstrip().endswith("TypeError: boom_internal")
    # the rest of the page stands
    assert _text(_section(page, "warnings")) == (
        "No warning was raised while the report was computed. From w.csv ."
    )
    # a second failure is appended, not written over
    front_page(tmp_path, title="t", header=_ffmc_header(warnings="tables/w.csv"))
    assert (tmp_path / LOG).read_text(encoding="utf-8").count("TypeError: boom_internal") == 2


def test_an_internal_error_whose_traceback_cannot_be_kept_says_so(tmp_path, monkeypatch):
    def broken(folder, declared):
        raise AttributeError("boom_internal")

    monkeypatch.setitem(frontpage._BUILDERS, "quality", broken)
    (tmp_path / LOG).parent.write_text("a file where the logs folder goes")
    page = front_page(tmp_path, title="t", header=_ffmc_header())
    assert _text(_section(page, "quality")).startswith(
        INTERNAL_UNKEPT.format(error="AttributeError", log=LOG, reason="File exists")
    )


# --- in a real browser --------------------------------------------------------------------


def _chromium(*options: str, url: str, profile: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            f"--user-data-dir={profile}",
            f"--window-size={LAPTOP[0]},{LAPTOP[1]}",
            *options,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


#: What :func:`_widths` measures unless told: how wide the page is, and the window.
PAGE_AND_WINDOW = "document.documentElement.scrollWidth, innerWidth"


def _widths(page: str, folder: Path, tmp_path: Path, measured: str = PAGE_AND_WINDOW):
    """Two widths, in px, of ``page`` (the HTML of a page of ``folder``, which its links
    are read against) as headless Chromium lays it out at laptop size: ``measured``, a
    JavaScript expression of two numbers, evaluated once the page has loaded."""
    script = (
        '<script>addEventListener("load", () => { const [a, b] = ['
        + measured
        + ']; document.title = "W=" + a + "," + b; });</script>'
    )
    base = f'<base href="{folder.resolve().as_uri()}/">'
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace("<head>", f"<head>{base}{script}", 1), encoding="utf-8")
    done = _chromium(
        "--dump-dom",
        "--virtual-time-budget=5000",
        url=probe.as_uri(),
        profile=tmp_path / "probe-profile",
    )
    found = re.search(r"<title>W=(\d+),(\d+)</title>", done.stdout)
    assert found is not None, done.stderr[-2000:]
    return tuple(map(int, found.groups()))


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_front_page_in_headless_chromium_at_laptop_width(annex15_report, tmp_path):
    """A screenshot at 1366 x 900 px: a PNG of that size with the page drawn on it (text,
    coloured badges); and at that width nothing sticks out sideways."""
    import matplotlib.image

    png = tmp_path / "frontpage.png"
    url = (annex15_report / "index.html").resolve().as_uri()
    done = _chromium(f"--screenshot={png}", url=url, profile=tmp_path / "profile")
    assert png.is_file(), done.stderr[-2000:]
    with png.open("rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", head[16:24]) == LAPTOP
    pixels = matplotlib.image.imread(png)[..., :3]
    ink = (pixels < 0.5).all(axis=-1).mean()  # dark text
    assert 0.005 < ink < 0.3
    green = (pixels[..., 1] > pixels[..., 0] + 0.1).mean()  # the pass badges
    red = (pixels[..., 0] > pixels[..., 1] + 0.1).mean()  # the FAIL badges
    assert green > 1e-4 and red > 1e-4

    page = (annex15_report / "index.html").read_text(encoding="utf-8")
    scroll, inner = _widths(page, annex15_report, tmp_path)
    assert inner == LAPTOP[0]
    assert scroll <= inner


def test_manifest_is_the_default_header(tmp_path):
    (tmp_path / "manifest.json").write_text(
        json.dumps({"input_sha256": "ab" * 32, "parameters": {}})
    )
    page = front_page(tmp_path, title="t")
    assert "sha256 <code>abababababab…</code>" in page


def test_verdicts_name_a_disagreement_with_the_paper_and_a_shaky_verdict(tmp_path):
    criteria = ["FFMC.1", "FFMC.2", "FFMC.3"]
    _write(
        tmp_path,
        "ffmc_table.csv",
        pd.DataFrame(
            {
                "measure": ["fdr"] * 3,
                "label": ["FDR"] * 3,
                "criterion": criteria,
                "passed": [True, True, False],
                "evidence": ["a", "b", "c"],
                "paper": [False, True, True],
            }
        ),
    )
    _write(
        tmp_path,
        "ffmc_verdict_stability.csv",
        pd.DataFrame({"measure": ["fdr"] * 3, "criterion": criteria, "agreement": [0.6, 1, 1]}),
    )
    page = front_page(tmp_path, title="t")
    assert _rows(page, "verdicts")[1] == [
        "FDR",
        "pass paper: fail (differs) holds in 60% of replicates",
        "pass paper: pass",
        "FAIL paper: pass (differs)",
    ]
    text = _text(_section(page, "verdicts"))
    assert text.startswith("FDR fails at least one criterion. Howard et al. (Table 2) judge FDR:")
    assert (
        "the audit agrees with 1 of their 3 verdicts; it differs on FDR FFMC.1 (paper: fail, "
        "audit: pass), FDR FFMC.3 (paper: pass, audit: fail)." in text
    )
    assert "1 verdict holds in fewer than 95% of the replicates (marked in the table)." in text


def test_calibration_section_only_when_a_cell_is_calibrated_and_escaped(tmp_path):
    tables = tmp_path / "tables"
    _write(tmp_path, "calibration.csv", pd.DataFrame())
    columns = "rate,kind,cell,group_1,group_2,value,algorithms,total_algorithms,share,lowest_for,sentence\n"
    (tables / "calibration.csv").write_text(columns)
    page = front_page(tmp_path, title="t")
    assert 'id="calibration"' not in page
    (tables / "calibration.csv").write_text(
        columns
        + 'fmr,group,<b>M</b>,<b>M</b>,<b>M</b>,0.001,20,20,1.0,20,"FMR of <b>M</b> is 0.001"\n'
    )
    page = front_page(tmp_path, title="t")
    section = _section(page, "calibration")
    assert "<b>" not in section
    assert "<li>FMR of &lt;b&gt;M&lt;/b&gt; is 0.001.</li>" in section


def test_input_note_is_escaped_and_absent_for_a_copy(tmp_path):
    header = {
        "input_file": "/x/frvt.csv",
        "input_sha256": "ab" * 32,
        "input_copy": "not copied into the report: <licence>",
        "input_source": {
            "title": "<T>",
            "repository": "r",
            "commit": "c",
            "path": "p",
            "dataset": "d",
        },
    }
    page = front_page(tmp_path, title="t", header=header)
    assert (
        '<p class="note input">Not copied into the report: &lt;licence&gt;. Source: &lt;T&gt;, '
        f"r at commit c, p (sha256 {'ab' * 32}); &#39;audit fetch d&#39; fetches the same "
        "bytes.</p>"
    ) in page
    header["input_copy"] = "input/frvt.csv"
    assert 'class="note input"' not in front_page(tmp_path, title="t", header=header)


def test_verdicts_carry_each_measures_iso_term_from_the_registry_table(tmp_path):
    """With measure_registry.csv beside the verdicts, each measure's ISO/IEC 19795-10 term
    is a column (empty where none is clear), with the note that it claims no conformance;
    without it, no such column."""
    criteria = ["FFMC.1", "FFMC.2", "FFMC.3"]
    _write(
        tmp_path,
        "ffmc_table.csv",
        pd.DataFrame(
            {
                "measure": ["garbe"] * 3 + ["mine"] * 3,
                "label": ["GARBE"] * 3 + ["Mine"] * 3,
                "criterion": criteria * 2,
                "passed": [True] * 6,
                "evidence": ["e"] * 6,
            }
        ),
    )
    page = front_page(tmp_path, title="t")
    assert _rows(page, "verdicts")[0] == ["Measure", *criteria]
    from audit.measures.registry import measure_table

    registry = measure_table(["garbe"])
    mine = registry.assign(measure="mine", iso_term=pd.NA)
    _write(tmp_path, "measure_registry.csv", pd.concat([registry, mine]))
    page = front_page(tmp_path, title="t")
    rows = _rows(page, "verdicts")
    assert rows[0] == ["Measure", *criteria, "ISO/IEC 19795-10 term"]
    assert rows[1] == ["GARBE", "pass", "pass", "pass", "aggregate equitability measure"]
    assert rows[2] == ["Mine", "pass", "pass", "pass", ""]
    assert "not a claim of conformance" in _text(_section(page, "verdicts"))
    assert "measure_registry.csv" in _section(page, "verdicts")


def test_the_near_miss_legend_follows_the_join_only_where_a_name_is_spelled_alike(tmp_path):
    """The front page said what '~' marks after every join, where none marked a name."""
    from audit.analysis.accuracy import NEAR_LEGEND
    from audit.report.frontpage import _join_note

    path = tmp_path / "join.csv"
    rows = {"algorithm": ["a", "b", "z"], "accuracy": [0.1, None, 0.3],
            "status": ["joined", "not in the accuracy table", "not in the rates table"]}  # fmt: skip
    pd.DataFrame(rows | {"near": ["", "", ""]}).to_csv(path, index=False)
    note = _join_note(path, "acc")
    assert note.endswith("1 algorithm not in the rates table: z.") and "~" not in note
    pd.DataFrame(rows | {"near": ["", "B", ""]}).to_csv(path, index=False)
    note = _join_note(path, "acc")
    assert "b (~ B)" in note and note.endswith(NEAR_LEGEND + ".")
