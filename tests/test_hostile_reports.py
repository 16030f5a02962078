"""Script and markup in every label, algorithm name and file name reach no produced HTML raw."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from audit.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("shared_server")]

SCRIPT, IMG, LINK = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(2)>",
    "[x](javascript:alert(3))",
)
#: Mathtext a figure would try to parse (and fail on): drawn as written.
MATH = r"vendor-$\frac$"
FILE = "<svg onload=alert(1)>"
RAW = re.compile(r"<script>alert|<img src=x|<svg onload|href=\"javascript:", re.IGNORECASE)


def _raw_tags(folder):
    found = {}
    for page in folder.glob("*.html"):
        hits = RAW.findall(page.read_text(encoding="utf-8"))
        if hits:
            found[page.name] = hits
    return found


#: A terminal's escape and a bidirectional override, which reached the pages raw (the
#: override reversed the rest of each sentence naming the algorithm).
ACTING = "\x1b[2J\u202e"


def _acting(folder):
    return {page.name for page in folder.glob("*.html")
            if any(ch in page.read_text(encoding="utf-8") for ch in "\x1b\u202e")}  # fmt: skip


def test_rates_reports_escape_labels_names_and_file_name(tmp_path):
    """4 algorithms x 2 groups (the small table that once broke the FFMC histogram)."""
    groups = [f"F.{SCRIPT}", f"M.{MATH}"]
    frame = {"Algorithm": [SCRIPT, IMG, LINK + ACTING, MATH]}
    frame[f"FNMR.{groups[0]}"] = [0.011, 0.023, 0.037, 0.012]
    frame[f"FMR.{groups[0]}"] = [1e-4, 2e-4, 3e-4, 4e-4]
    frame[f"FNMR.{groups[1]}"] = [0.013, 0.029, 0.041, 0.014]
    frame[f"FMR.{groups[1]}"] = [1.5e-4, 2.5e-4, 3.5e-4, 4e-4]
    path = tmp_path / f"{FILE}.csv"
    pd.DataFrame(frame).to_csv(path, index=False)
    options = ["-p", "n_replicates", "20", "--no-progress", "--reports-dir", str(tmp_path / "r")]
    ffmc = ["-p", "verdict_replicates", "3", "-p", "n_random", "50", "-p", "alpha_step", "0.1"]
    assert main(["report", str(path), *options, *ffmc]) == 0
    folder = tmp_path / "r" / FILE
    assert {p.name for p in folder.glob("*.html")} == {"index.html", "ffmc.html", "pareto.html"}
    assert _raw_tags(folder) == {}
    assert _acting(folder) == set()
    assert "javascript:alert(3))\\x1b[2J\\u202e" in (folder / "ffmc.html").read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in (folder / "ffmc.html").read_text()
    # the most accurate algorithm is on the frontier: its name reaches the front page, escaped
    assert "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>" in (folder / "index.html").read_text()


def test_scores_report_escapes_labels_names_and_file_name(tmp_path):
    rng = np.random.default_rng(5)
    frames = []
    for algorithm in (SCRIPT, LINK, MATH):
        n = 3000
        group = rng.choice([IMG, SCRIPT, MATH], n)
        mated = rng.random(n) < 0.3
        score = rng.normal(size=n) + 2.5 * mated
        frames.append(
            pd.DataFrame({"algorithm": algorithm, "score": score, "mated": mated, "group": group})
        )
    path = tmp_path / f"{FILE}.csv"
    pd.concat(frames).to_csv(path, index=False)
    code = main(
        [
            "scores",
            str(path),
            "--target-fmr",
            "0.01",
            "--no-progress",
            "--reports-dir",
            str(tmp_path / "r"),
            "-p",
            "sweep_points",
            "3",
            "-p",
            "bootstrap_replicates",
            "5",
        ]
    )
    assert code == 0
    folder = tmp_path / "r" / FILE
    assert {p.name for p in folder.glob("*.html")} == {"index.html", "scores.html"}
    assert _raw_tags(folder) == {}
