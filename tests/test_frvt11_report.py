"""The reports on FRVT 1:1 from the command line, notebooks and all: `audit report --data
frvt11` (calibration on the front page, total FMR without the calibrated cell, the input
recorded, not copied), a frontier whose accuracy is NIST's Mugshot FNMR from the overview
table, and a table with the rate after the group and extra columns; the front page in
headless Chromium."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from test_frontpage import CHROMIUM, NO_CHROMIUM, _rows, _section, _text, _widths

from audit.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("shared_server")]


@pytest.fixture(scope="module")
def frvt11_report(frvt11_file, tmp_path_factory):
    root = tmp_path_factory.mktemp("reports")
    argv = ["report", "frvt11", "--reports-dir", str(root), "--no-progress"]
    argv += ["-p", "n_random", "200"]
    argv += ["-p", "n_replicates", "200", "-p", "verdict_replicates", "10"]
    assert main(argv) == 0
    return root / "frvt11"


@pytest.fixture(scope="module")
def mugshot_report(frvt11_file, frvt11_accuracy_file, tmp_path_factory):
    root = tmp_path_factory.mktemp("reports")
    argv = ["pareto", "frvt11", "--reports-dir", str(root), "--no-progress", "--replicates", "100"]
    argv += ["--accuracy-from", "frvt11-accuracy", "--accuracy-column", "Mugshot, 1e-5"]
    assert main([*argv, "--name", "mugshot"]) == 0
    return root / "mugshot"


def _page(folder):
    return (folder / "index.html").read_text(encoding="utf-8")


def test_frvt11_front_page_says_which_cell_is_a_calibration(frvt11_report):
    section = _text(_section(_page(frvt11_report), "calibration"))
    assert section == (
        "A cell of this table is a calibration, not a measurement : each algorithm's threshold "
        "was set so that it holds one value. It is kept out of what it would distort. FMR of "
        "M.White is 0.001 for 240 of 240 algorithms: a calibration (the thresholds were set "
        "so), not a measurement; kept out of total FMR (a frontier's accuracy axis); it is the "
        "lowest FMR of 230 of 240 algorithms, whose max/min FMR ratios (the Inequity Rate's FMR "
        "term, SER) are relative to the calibrated cell. From calibration.csv ."
    )
    table = pd.read_csv(frvt11_report / "tables" / "calibration.csv")
    assert table[["rate", "cell", "value", "algorithms"]].values.tolist() == [
        ["fmr", "M.White", 0.001, 240]
    ]


def test_frvt11_frontier_on_total_fmr_without_the_calibrated_cell(frvt11_report):
    page = _page(frvt11_report)
    # FMR only, and still a membership probability: the FMRs redrawn within their decimals
    assert _rows(page, "frontier") == [
        ["Algorithm", "Total FMR", "GARBE (FMR term alone)", "Membership probability"],
        ["bresee-000", "0.001467", "0.2099", "1.000"],
        ["intellifusion-002", "0.0017", "0.1694", "1.000"],
    ]
    frontier = _text(_section(page, "frontier"))
    assert "No other algorithm is on it in more than 5% of the replicates." in frontier
    assert (
        "Total FMR leaves out M.White: a calibrated cell (FMR 0.001 for 240 of 240 of the "
        "algorithms), not a measurement." in frontier
    )


def test_frvt11_report_records_the_source_instead_of_a_copy(frvt11_report, frvt11_file):
    assert not (frvt11_report / "input").exists()
    manifest = json.loads((frvt11_report / "manifest.json").read_text())
    assert manifest["input_file"] == str(frvt11_file)
    assert manifest["input_source"]["commit"] == "388962501fa519fbc68618813b8242985d1c57f3"
    assert manifest["notebooks"] == ["ffmc", "pareto", "crossgroup"]
    page = _page(frvt11_report)
    assert "Not copied into the report: built-in dataset &#39;frvt11&#39;" in page
    ffmc = (frvt11_report / "ffmc.html").read_text(encoding="utf-8")
    assert "FMR of M.White is 0.001 for 240 of 240 algorithms" in ffmc
    crossgroup = (frvt11_report / "crossgroup.html").read_text(encoding="utf-8")
    assert "which group of a cross pair is the enrolment side" in crossgroup


def test_mugshot_frontier_from_the_overview_table(mugshot_report):
    page = _page(mugshot_report)
    assert _rows(page, "frontier") == [
        ["Algorithm", "FNMR at FMR 1e-5, Mugshot (frvt11-accuracy)", "GARBE (FMR term alone)"],
        ["visionlabs-009", "0.0026", "0.53"],
        ["sensetime-003", "0.0027", "0.3773"],
        ["paravision-004", "0.003", "0.2602"],
        ["intellifusion-002", "0.004", "0.1694"],
    ]
    frontier = _text(_section(page, "frontier"))
    assert frontier.startswith(
        "4 of 236 algorithms are on the Pareto frontier of FNMR at FMR 1e-5, Mugshot "
        "(frvt11-accuracy) and GARBE (FMR term alone)"
    )
    assert (
        "FNMR at FMR 1e-5, Mugshot (frvt11-accuracy) joined by algorithm name, exactly: 236 "
        "algorithms on both sides; left out of the frontier or unused: 4 algorithms not in the "
        "accuracy table: x\u2212laboratory-000 (~ x-laboratory-000), x\u2212laboratory-001 (~ "
        "x-laboratory-001), everai-paravision-003, fiberhome\u2212nanjing-002 (~ "
        "fiberhome-nanjing-002); 10 algorithms not in the rates table:" in frontier
    )
    warnings = _text(_section(page, "warnings"))
    assert "pareto (unmatched algorithms): Accuracy 'Mugshot, 1e-5' from " in warnings
    join = pd.read_csv(mugshot_report / "tables" / "accuracy_join_garbe.csv")
    assert join["status"].value_counts().to_dict() == {
        "joined": 236,
        "not in the rates table": 10,
        "not in the accuracy table": 4,
    }
    manifest = json.loads((mugshot_report / "manifest.json").read_text())
    assert manifest["parameters"]["accuracy_column"] == "Mugshot, 1e-5"
    assert manifest["accuracy_input"]["source"]["dataset"] == "frvt11-accuracy"
    assert (mugshot_report / "figures" / "pareto_garbe.png").is_file()


def test_a_table_with_the_rate_after_the_group(tmp_path):
    path = tmp_path / "rfw.csv"
    rows = [
        f"m{k},RFW,{1e-3 * (k + 1):.4f},{2e-3:.4f},{5e-4 * (k + 1):.4f},0.0012,0" for k in range(6)
    ]
    path.write_text(
        "Method,Dataset,African_FMR,Asian_FMR,Caucasian_FMR,Indian_FMR,Mean\n" + "\n".join(rows)
    )
    argv = ["pareto", str(path), "--reports-dir", str(tmp_path), "--no-progress"]
    argv += ["--columns", "algorithm=Method", "--rate-position", "suffix", "--separator", "_"]
    argv += ["--replicates", "100"]  # (the reading is under test)
    assert main([*argv, "--ignore-columns", "Dataset,Mean"]) == 0
    folder = tmp_path / "rfw-pareto"
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["parameters"]["ignore"] == ["Dataset", "Mean"]
    assert manifest["parameters"]["rate_position"] == "suffix"
    notebook = (folder / "pareto.html").read_text(encoding="utf-8")
    assert re.search(r"Columns left out, as asked</strong>: Dataset, Mean", notebook)


@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_frvt11_front_page_fits_a_laptop_screen(frvt11_report, tmp_path):
    scroll, inner = _widths(_page(frvt11_report), frvt11_report, tmp_path)
    assert scroll <= inner
