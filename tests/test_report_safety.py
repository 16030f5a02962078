"""Reports that are safe to open and never lost: escaping, small tables, score
orientation, measure modules that fail, names and parameters refused before any
work, the lock, the one-step replacement and what killed runs leave behind."""

from __future__ import annotations

import errno
import json
import math
import os
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit.cli import main
from audit.measures.registry import measure_names
from audit.report import outputs, runner
from audit.report.text import escape_markdown, markdown_code
from audit.sources.annex15 import sha256sum
from audit.validation import parse

HOSTILE = ["<script>alert(1)</script>", "<img src=x onerror=alert(2)>", "[x](javascript:alert(3))"]


@pytest.fixture
def rates_csv(tmp_path):
    """3 algorithms x 2 groups, distinct values, a valid wide table."""
    path = tmp_path / "rates.csv"
    path.write_text(
        "Algorithm,FMR.F,FNMR.F,FMR.M,FNMR.M\n"
        "a,0.0001,0.011,0.00015,0.013\nb,0.0002,0.023,0.00025,0.029\n"
        "c,0.0003,0.037,0.00035,0.041\n"
    )
    return path


# --- escaping ---------------------------------------------------------------------------------


def test_escape_markdown_leaves_no_tag_link_or_code():
    assert escape_markdown(HOSTILE[0]) == r"&lt;script&gt;alert\(1\)&lt;/script&gt;"
    assert escape_markdown(HOSTILE[2]) == r"\[x\]\(javascript\:alert\(3\)\)"
    assert escape_markdown("a\nb") == "a b"
    assert markdown_code("x`<b>") == r"<code>x\`&lt;b&gt;</code>"


def test_header_markdown_escapes_file_name_and_parameters(rates_csv, tmp_path):
    from audit.report.outputs import header_markdown, run_header

    hostile = tmp_path / "<svg onload=alert(1)>.csv"
    hostile.write_bytes(rates_csv.read_bytes())
    text = header_markdown(run_header(hostile, {"measure": HOSTILE[0]}))
    assert "<svg" not in text and "<script" not in text
    assert "&lt;svg onload=alert\\(1\\)&gt;\\.csv" in text


def test_index_page_escapes_the_name():
    from audit.report.frontpage import front_page

    header = {"input_file": "<svg onload=alert(1)>.csv", "parameters": {"m": HOSTILE[1]}}
    page = front_page(Path("/nonexistent"), title=f"audit report: {HOSTILE[0]}", header=header)
    assert "<script>alert" not in page and "<img src=x" not in page and "<svg onload" not in page


# --- small tables -----------------------------------------------------------------------------


def test_histogram_of_values_equal_to_within_an_ulp():
    from audit.report.plots.ffmc import _histogram_bins, plot_distribution

    third = 1 / 3
    values = np.array([third, np.nextafter(third, 1), third])
    with pytest.raises(ValueError, match="Too many bins"):
        np.histogram_bin_edges(values, bins=20)  # what the panel met before
    bins = _histogram_bins(values, 20)
    assert bins["bins"] == 1
    assert bins["range"] == pytest.approx((third * (1 - 1e-6), third * (1 + 1e-6)), rel=1e-15)
    detail = pd.DataFrame({"alpha": 0.5, "value": values})
    ax = plot_distribution(detail, alpha=0.5)
    assert len(ax.patches) == 1 and ax.patches[0].get_height() == 3
    assert _histogram_bins(np.array([0.0, 1.0]), 20) == {"bins": 20}


# --- scores -----------------------------------------------------------------------------------


def _scores(score, n=400, seed=0):
    rng = np.random.default_rng(seed)
    frames = []
    for algorithm in ("a", "b"):
        mated = rng.random(n) < 0.3
        frames.append(
            pd.DataFrame(
                {
                    "algorithm": algorithm,
                    "score": score(mated, rng),
                    "mated": mated,
                    "group": rng.choice(["F", "M"], n),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def test_all_equal_scores_flag_the_measure_undefined():
    from audit.measures import UndefinedMeasureWarning
    from audit.measures.registry import evaluate_scores
    from audit.scores import rates_at_fmr, read_scores
    from audit.uncertainty import score_bootstrap

    table = read_scores(_scores(lambda mated, rng: np.full(len(mated), 0.5)))
    with pytest.warns(UndefinedMeasureWarning, match="SED_G undefined for 2 of 2"):
        boot = score_bootstrap(
            table,
            lambda s: rates_at_fmr(s, 0.001),
            score_measures=evaluate_scores,
            unit="comparison",
            group="group_1",
            n_replicates=5,
            seed=0,
        )
    sed = boot.intervals[boot.intervals["measure"] == "sed_mean"]
    assert list(sed["algorithm"]) == ["a", "b"]
    assert sed["value"].isna().all() and sed["undefined"].all()


def test_orientation_warning_names_distance():
    from audit.scores import read_scores
    from audit.scores.orientation import FIX_DISTANCE, FIX_SIMILARITY, orientation_warning

    distances = _scores(
        lambda mated, rng: np.where(mated, 0.2, 0.8) + rng.normal(0, 0.01, len(mated))
    )
    as_similarity = read_scores(distances)
    message = orientation_warning(as_similarity)
    assert message.startswith(
        "scores look like distances read as similarities: for 'a', 'b', the median mated score "
        "is below the median non-mated score ("
    )
    assert message.endswith(FIX_DISTANCE)
    assert orientation_warning(read_scores(distances, higher_is_match=False)) is None
    similarities = distances.assign(score=-distances["score"])
    reverse = orientation_warning(read_scores(similarities, higher_is_match=False))
    assert reverse.startswith("scores look like similarities read as distances: for 'a', 'b'")
    assert reverse.endswith(FIX_SIMILARITY)


def test_forgotten_distance_is_warned_in_the_report_not_by_a_second_read(tmp_path, monkeypatch):
    """The CLI reads only the header; the notebook, which reads the rows once, warns."""
    path = tmp_path / "d.csv"
    _scores(lambda mated, rng: np.where(mated, 0.2, 0.8) + rng.normal(0, 0.01, len(mated))).to_csv(
        path, index=False
    )
    from audit.tables import scores as score_tables

    def no_rows(*args, **kwargs):
        raise AssertionError("the CLI read the score rows")

    monkeypatch.setattr(score_tables, "read_scores", no_rows)
    monkeypatch.setattr(runner, "run_report", lambda *a, **k: tmp_path)
    assert main(["scores", str(path), "--reports-dir", str(tmp_path / "r")]) == 0


def test_forgotten_distance_is_listed_on_the_front_page_read_whole_or_streamed(tmp_path, capsys):
    """Distances given without --distance put every FNMR near 1: the scores notebook (the
    scores read whole) and the streamed report (a folder of Parquet files) give the same
    warning, listed in the front page's warnings and said once on the terminal (by the
    streamed report as it computes, after the notebook's run for the notebook's); so are
    the rates resting on few comparisons (2 x 400 comparisons here), and nothing else."""
    from markupsafe import escape

    from audit.report.notices import sentence
    from audit.scores import read_scores
    from audit.scores.orientation import orientation_warning

    frame = _scores(lambda mated, rng: np.where(mated, 0.2, 0.8) + rng.normal(0, 0.01, len(mated)))
    frame.to_csv(tmp_path / "whole.csv", index=False)
    folder = tmp_path / "streamed"
    folder.mkdir()
    for i, start in enumerate(range(0, len(frame), 300)):
        frame.iloc[start : start + 300].to_parquet(folder / f"part-{i}.parquet")
    message = orientation_warning(read_scores(frame))
    assert message is not None
    common = ["--reports-dir", str(tmp_path / "r"), "--no-progress", "--target-fmr", "0.01"]
    common += ["-p", "bootstrap_replicates", "0"]
    listed = []
    for source, notebook in (("whole.csv", "scores"), ("streamed", "streamed")):
        capsys.readouterr()
        assert main(["scores", str(tmp_path / source), *common]) == 0
        report = tmp_path / "r" / Path(source).stem
        recorded = pd.read_csv(report / "tables" / f"warnings_{notebook}.csv")
        row = recorded[recorded["category"] == "OrientationWarning"]
        assert list(row["sentence"]) == [sentence(message)] and list(row["kind"]) == ["orientation"]
        page = (report / "index.html").read_text(encoding="utf-8")
        assert str(escape(sentence(message))) in page
        # and above the findings, which it makes meaningless, before the page's contents
        first = re.search(r'<div class="misread" id="read-first">(.*?)</div>', page, re.DOTALL)
        assert first is not None and page.index("read-first") < page.index("<nav>")
        items = re.findall(r"<li>(.*?)</li>", first.group(1))
        assert items == [str(escape(sentence(message)))]  # not the few comparisons
        said = message if notebook == "streamed" else sentence(message)
        err = capsys.readouterr().err
        assert err.count(f"audit: warning: {said}\n") == 1
        assert err.count("audit: warning: ") == len(recorded) == 2
        listed.append(sorted(zip(recorded["category"], recorded["sentence"], strict=True)))
    assert listed[0] == listed[1]
    # the same sweep, of the notebook's defaults: the streamed report reads them from it
    whole, streamed = (pd.read_csv(tmp_path / "r" / n / "tables" / "sweep_measures.csv")
                       for n in ("whole", "streamed"))  # fmt: skip
    # (the streamed report runs in this process, which may hold measures that other test
    # files registered: tests/test_properties.py loads the user measures as it is collected)
    assert set(whole["measure"]) <= set(streamed["measure"]) and len(whole) > 0
    streamed = streamed[streamed["measure"].isin(set(whole["measure"]))]
    np.testing.assert_allclose(np.unique(streamed["target_fmr"]), np.geomspace(1e-3, 0.1, 21))
    on = ["algorithm", "measure", "target_fmr"]
    both = whole.merge(streamed, on=on, suffixes=("_whole", "_streamed"), validate="1:1")
    assert len(both) == len(whole)
    np.testing.assert_allclose(both["value_whole"], both["value_streamed"], rtol=1e-9)
    assert [category for category, _ in listed[0]] == ["OrientationWarning", "ScoresWarning"]


def test_a_bad_row_the_notebook_reads_is_refused_as_bad_input_naming_the_users_file(
    tmp_path, capsys
):
    """A score file's rows are read once, by the notebook (the command checks the header):
    a missing score is refused as bad input (exit 3, as streamed), naming the file as the
    user gave it, with its line and column, not the report's copy of it (and so are the
    lines a message names inside it); where the executed notebook is kept is said too,
    on a line of its own (a line break in the file's name is written ``\\n``), and no
    report is published."""
    from audit.exceptions import EXIT_INPUT
    from audit.report.text import one_line

    frame = _scores(lambda mated, rng: np.where(mated, 0.8, 0.2) + rng.normal(0, 0.01, len(mated)))
    path = tmp_path / "new\nline.csv"
    frame.to_csv(path, index=False)
    lines = path.read_text().splitlines()
    cells = lines[38].split(",")
    lines[38] = ",".join([cells[0], "", *cells[2:]])  # line 39: no score
    path.write_text("\n".join(lines) + "\n")
    argv = ["scores", str(path), "--reports-dir", str(tmp_path / "r"), "--no-progress"]
    argv += ["--name", "scores"]
    assert main([*argv, "-p", "bootstrap_replicates", "0"]) == EXIT_INPUT
    said = capsys.readouterr().err.splitlines()
    assert said[-2] == f"audit: error: {one_line(path)}, line 39, column 'score': value is missing"
    kept = tmp_path / "r" / ".scores.failed" / "scores.ipynb"
    assert said[-1] == f"The executed notebook, up to the failing cell, is kept at {kept}"
    assert kept.is_file() and not (tmp_path / "r" / "scores").exists()
    # a message naming places in the file names them in the user's file too
    lines[38] = ",".join(cells)
    spelt = lines[40].split(",")
    lines[40] = ",".join([*spelt[:3], spelt[3].lower()])  # "f" for "F" (or "m" for "M")
    path.write_text("\n".join(lines) + "\n")
    assert main([*argv, "-p", "bootstrap_replicates", "0"]) == EXIT_INPUT
    said = capsys.readouterr().err.splitlines()
    assert f"({one_line(path)}, line 41)" in said[-2] and "input/" not in said[-2], said[-2]


# --- measure modules --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "raise RuntimeError('no\\nlicence')",
            "measure module 'audit_test_raises' raised RuntimeError on import: no licence",
        ),
        (
            "import sys\nsys.exit(3)",
            "measure module 'audit_test_exits' called sys.exit(3) on import",
        ),
        ("1 +", None),
    ],
    ids=["raises", "exits", "syntax"],
)
def test_measure_module_failures_are_one_line(tmp_path, monkeypatch, capsys, body, expected):
    name = {"raise": "audit_test_raises", "impor": "audit_test_exits"}.get(
        body[:5], "audit_test_syntax"
    )
    (tmp_path / f"{name}.py").write_text(body + "\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.setenv("PYTHONPATH", "")
    code = main(["ffmc", "--measure-module", name, "--reports-dir", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 2
    usage, message = err.split("audit ffmc: error: ")
    assert usage.startswith("usage: audit ffmc ") and message.count("\n") == 1
    if expected is None:
        assert message.startswith(
            "measure module 'audit_test_syntax' raised SyntaxError on import: "
        )
    else:
        assert message == f"{expected}\n"
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("given", "dotted"),
    [
        ("./my_measures.py", "my_measures"),
        ("lab/my_measures.py", "lab.my_measures"),
        ("my_measures.py", "my_measures"),
        ("./lab/../lab/my_measures.py", "lab.my_measures"),
        # no dotted name imports these from the current folder: said so, none suggested
        ("/opt/lib/my_measures.py", None),
        ("../lib/my_measures.py", None),
        ("my-lab/my_measures.py", None),
    ],
)
def test_a_measure_module_named_as_a_file_is_refused_with_its_dotted_name(
    tmp_path, monkeypatch, capsys, given, dotted
):
    """A module named as a file is refused with the dotted name it stands for, where one
    imports it from the current folder (a file elsewhere was given '...lib.my_measures',
    a relative import, or 'opt.lib.my_measures', neither importable from here)."""
    from audit.measures.modules import MODULE_AS_FILE, MODULE_FILE_ELSEWHERE

    monkeypatch.chdir(tmp_path)
    (tmp_path / "my_measures.py").write_text("x = 1\n")
    code = main(["ffmc", "--measure-module", given, "--reports-dir", str(tmp_path / "r")])
    assert code == 2
    message = MODULE_AS_FILE if dotted else MODULE_FILE_ELSEWHERE
    expected = message.format(name=given, dotted=dotted)
    assert capsys.readouterr().err.endswith(f"audit ffmc: error: {expected}\n")
    assert not (tmp_path / "r").exists()


def test_a_measure_module_named_through_a_link_to_the_working_folder(tmp_path, monkeypatch, capsys):
    """The working folder reached through a link (macOS's /tmp is one) holds the module
    however it is named: $PWD/m.py and ../link/m.py stand for 'my_measures' too."""
    from audit.measures.modules import MODULE_AS_FILE

    real = tmp_path / "real"
    real.mkdir()
    (real / "my_measures.py").write_text("x = 1\n")
    (tmp_path / "link").symlink_to(real)
    monkeypatch.chdir(tmp_path / "link")
    for given in (str(tmp_path / "link" / "my_measures.py"), "../link/my_measures.py"):
        code = main(["ffmc", "--measure-module", given, "--reports-dir", str(tmp_path / "r")])
        assert code == 2
        expected = MODULE_AS_FILE.format(name=given, dotted="my_measures")
        assert capsys.readouterr().err.endswith(f"audit ffmc: error: {expected}\n")
    assert not (tmp_path / "r").exists()


# --- names and parameters, refused before any work -------------------------------------------


def test_a_name_too_long_for_the_working_folders_is_refused_before_any_work(
    tmp_path, rates_csv, capsys
):
    """A name of 238 bytes is a folder name of its own, but not with the 18 its working
    folders add: refused before anything is made (it used to fail once the lock was
    taken, leaving the lock's file); 237 bytes pass the check (and are built:
    tests/test_report_ownership.py)."""
    assert runner.LONGEST_NAME == 237
    name = "é" * 119  # 238 bytes in UTF-8
    argv = ["pareto", str(rates_csv), "--reports-dir", str(tmp_path / "r"), "--name", name]
    assert main(argv) == 2
    expected = runner.LONG_NAME.format(name=name, length=238, longest=237)
    assert capsys.readouterr().err.endswith(f"audit pareto: error: {expected}\n")
    assert not (tmp_path / "r").exists()
    assert runner.check_report_name("x" * 237) == "x" * 237


def test_a_name_taken_from_the_input_says_so_when_refused(tmp_path, rates_csv, capsys):
    data = tmp_path / ".hidden.csv"
    data.write_bytes(rates_csv.read_bytes())
    assert main(["report", str(data), "--reports-dir", str(tmp_path / "r")]) == 2
    expected = runner.BAD_NAME.format(name=".hidden")
    expected += "; it comes from the input's name: give one with --name"
    assert capsys.readouterr().err.endswith(f"audit report: error: {expected}\n")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    "name",
    ["نتایج\u200cها", "\U0001f468\u200d\U0001f469", "soft\u00adhyphen", "\U0001fae8", "x\ue000"],
)
def test_names_that_writing_needs_are_taken(name):
    """Joiners (Persian spelling, emoji sequences), the soft hyphen, a character newer
    than this Python's Unicode tables and one for private use name a report: only what
    acts where it is shown (controls, separators of lines, direction overrides) is
    refused."""
    assert runner.check_report_name(name) == name


@pytest.mark.parametrize(
    "name",
    ["../x", "/tmp/x", "a/b", ".", "..", "", " x", "a\\b", "a\nb", "x\x1b[31m", "x\x7f"]
    # a line break, a terminal's escape and a direction override beyond ASCII
    + ["a\x85b", "a\x9b2Jb", "a\u2028b", "a\u202eb"],
)
def test_bad_names_are_refused_before_any_work(tmp_path, rates_csv, capsys, servers, name):
    code = main(["pareto", str(rates_csv), "--name", name, "--reports-dir", str(tmp_path / "r")])
    assert servers == []  # nor a kernel started ahead
    message = runner.EMPTY_NAME if name == "" else runner.BAD_NAME.format(name=name)
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: audit pareto ") and err.endswith(
        f"audit pareto: error: {message}\n"
    )
    assert not (tmp_path / "r").exists()


def test_unknown_parameter_is_refused_before_any_work(rates_csv, tmp_path, capsys, servers):
    argv = ["pareto", str(rates_csv), "--reports-dir", str(tmp_path / "r")]
    assert main([*argv, "-p", "alpah", "0.3"]) == 2
    assert "parameter 'alpah' is not declared by notebook(s) ['pareto']" in capsys.readouterr().err
    assert servers == [] and not (tmp_path / "r").exists()  # nor a kernel started ahead


def test_a_crossgroup_parameter_waits_for_the_table(rates_csv, tmp_path, capsys, servers):
    """``audit report`` adds the crossgroup notebook for a cross-group table only: its
    parameters pass the first check, and one given for a plain table is refused once the
    table is read, as the cross-group notebook's."""
    argv = ["report", str(rates_csv), "--reports-dir", str(tmp_path / "r")]
    assert main([*argv, "-p", "heatmap_algorithms", '["a"]']) == 2
    err = capsys.readouterr().err
    assert "parameter 'heatmap_algorithms' is for the cross-group notebook" in err
    assert len(servers) == 1


MEASURES = "a non-empty list of distinct names, each one of " + ", ".join(
    repr(n) for n in measure_names()
)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["ffmc", "--measures", ","],
            f"--measures: expected {MEASURES} or none, got ',': a name is empty",
        ),
        (
            ["pareto", "-p", "log_x", "maybe"],
            "parameter log_x: expected true or false, got 'maybe'",
        ),
        (
            ["pareto", "-p", "n_replicates", "0"],
            "parameter n_replicates: expected a whole number in [1, 100000], got 0",
        ),
        (
            ["pareto", "-p", "n_replicates", "2.5"],
            "parameter n_replicates: expected a whole number in [1, 100000], got '2.5'",
        ),
        (
            ["pareto", "-p", "alpha", "NaN"],
            "parameter alpha: expected a number in [0, 1] (or a 1-D array of them), got 'NaN'",
        ),
        (
            ["pareto", "-p", "seed", "true"],
            "parameter seed: expected a whole number of at least 0, got 'true'",
        ),
        (
            ["ffmc", "-p", "uncertainty_method", "bogus"],
            "parameter uncertainty_method: expected one of 'auto', 'counts', 'transcription', "
            "'none', got 'bogus'",
        ),
        (
            ["pareto", "--max-accuracy", "nan"],
            "--max-accuracy: expected a positive number or none, got 'nan'",
        ),
    ],
    ids=[
        "measures-comma",
        "log_x-maybe",
        "replicates-0",
        "replicates-float",
        "alpha-nan",
        "seed-bool",
        "method",
        "max-accuracy-nan",
    ],
)
def test_bad_parameters_are_refused_before_any_kernel(tmp_path, rates_csv, capsys, argv, message):
    root = tmp_path / "r"
    assert main([*argv, str(rates_csv), "--reports-dir", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: audit {argv[0]} ")
    assert err.endswith(f"audit {argv[0]}: error: {message}\n")
    assert not root.exists()


def test_boolean_words_are_read_as_booleans():
    assert [parse("log_x", w) for w in ("true", "Yes", "1", "false", "NO", "0")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]


def test_reports_dir_that_is_a_file_is_refused_in_plain_words(tmp_path, rates_csv, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert main(["pareto", str(rates_csv), "--reports-dir", str(blocker / "r")]) == 4
    expected = runner.CANNOT_WRITE.format(
        path=blocker / "r", reason="a part of the path is a file, not a folder"
    )
    assert capsys.readouterr().err == f"audit: error: {expected}\n"


# --- the runner, with notebooks replaced by a fast stand-in -----------------------------------


@pytest.fixture
def fast_notebooks(monkeypatch):
    """Notebooks that copy the input they were given into the report, so tests can compare."""

    def execute(name, output, parameters, *, progress=True):
        data = Path(output.parent, parameters["data_path"])
        output.write_text(json.dumps({"read": data.read_text(), "params": parameters}))
        return output

    monkeypatch.setattr(runner, "execute", execute)
    monkeypatch.setattr(runner, "export_html", lambda nb, dest: dest.write_text("<html></html>"))
    monkeypatch.setattr(runner, "declared_parameters", lambda name: ["data_path", "output_dir"])


STAGES = [
    runner.RUNNING.format(notebook="pareto_downselect.ipynb"),
    runner.RENDERING.format(notebook="pareto_downselect.ipynb"),
    runner.FRONT_PAGE,
]


def _run(rates_csv, root, **kwargs):
    notes = []
    folder = runner.run_report(
        "x",
        notebooks=("pareto",),
        parameters={"data_path": str(rates_csv)},
        reports_root=root,
        progress=False,
        notify=notes.append,
        **kwargs,
    )
    return folder, notes


def test_input_is_copied_hashed_and_read_once(fast_notebooks, rates_csv, tmp_path):
    folder, notes = _run(rates_csv, tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["input_file"] == str(rates_csv)
    assert (
        manifest["input_sha256"]
        == sha256sum(folder / "input" / "rates.csv")
        == sha256sum(rates_csv)
    )
    read = json.loads((folder / "pareto.ipynb").read_text())
    assert read["read"] == rates_csv.read_text()
    assert read["params"] == {"data_path": "input/rates.csv", "output_dir": "."}
    assert notes == STAGES  # without a progress bar, one line per stage and nothing else


def test_input_changed_during_the_run_cannot_split_manifest_and_results(
    fast_notebooks, rates_csv, tmp_path, monkeypatch
):
    real_header = outputs.run_header

    def header_then_change(path, parameters):
        header = real_header(path, parameters)
        rates_csv.write_text(rates_csv.read_text().replace("0.011", "0.099"))
        return header

    monkeypatch.setattr(outputs, "run_header", header_then_change)
    before = sha256sum(rates_csv)
    folder, _ = _run(rates_csv, tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["input_sha256"] == before
    assert "0.011" in json.loads((folder / "pareto.ipynb").read_text())["read"]


def test_second_report_replaces_the_first_by_a_link(fast_notebooks, rates_csv, tmp_path):
    first, _ = _run(rates_csv, tmp_path)
    old_version = first.resolve()
    second, notes = _run(rates_csv, tmp_path)
    assert second.is_symlink() and second.resolve() != old_version
    assert not old_version.exists()
    assert notes == STAGES
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "rates.csv") == [
        ".x.lock",
        second.resolve().name,
        "x",
    ]


def test_folders_follow_the_umask(fast_notebooks, rates_csv, tmp_path):
    old = os.umask(0o022)
    try:
        folder, _ = _run(rates_csv, tmp_path)
    finally:
        os.umask(old)
    assert folder.resolve().stat().st_mode & 0o777 == 0o755


def test_a_held_lock_refuses_a_second_run(fast_notebooks, rates_csv, tmp_path):
    with runner._Lock(tmp_path, "x"), pytest.raises(runner.ReportError) as error:
        _run(rates_csv, tmp_path)
    assert str(error.value) == runner.REPORT_BUSY.format(name="x", lock=tmp_path / ".x.lock")
    assert not (tmp_path / "x").exists()


def test_nan_parameter_is_refused_before_any_work(fast_notebooks, rates_csv, tmp_path):
    with pytest.raises(ValueError) as error:
        runner.run_report(
            "x",
            notebooks=("pareto",),
            parameters={"data_path": str(rates_csv), "output_dir": float("nan")},
            reports_root=tmp_path / "r",
        )
    assert str(error.value) == runner.NOT_JSON.format(key="output_dir", value=float("nan"))
    assert not (tmp_path / "r").exists()


def test_an_infinite_parameter_is_recorded_as_it_is_given_again(
    fast_notebooks, rates_csv, tmp_path, monkeypatch
):
    """``--count-tolerance inf`` (rates not checked against counts), which the help
    offers, was refused: its spellings were not numbers, and an infinity could not be
    written to the manifest. The manifest records it as ``"inf"``, which ``-p`` reads
    back as the value the notebook was given."""
    from audit.validation import constraint_of

    monkeypatch.setattr(
        runner, "declared_parameters", lambda name: ["data_path", "output_dir", "count_tolerance"]
    )
    folder = runner.run_report(
        "x",
        notebooks=("pareto",),
        parameters={"data_path": str(rates_csv), "count_tolerance": math.inf},
        reports_root=tmp_path,
        progress=False,
    )
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["parameters"]["count_tolerance"] == "inf"
    given = json.loads(next(folder.glob("*.ipynb")).read_text())["params"]["count_tolerance"]
    assert given == math.inf  # the notebook's value, as it was given
    constraint = constraint_of("count_tolerance")
    assert constraint.parse(manifest["parameters"]["count_tolerance"]) == math.inf
    assert [constraint.parse(t) for t in ("Inf", "+infinity")] == [math.inf] * 2
    assert not constraint.accepts(constraint.parse("1e309"))  # past what a float holds


def test_check_reads_the_spelled_infinity_the_help_offers(rates_csv, capsys):
    from audit.cli import main

    assert main(["check", str(rates_csv), "-q", "--count-tolerance", "inf"]) == 0
    assert main(["check", str(rates_csv), "-q", "--count-tolerance=-inf"]) == 2
    assert "got '-inf'" in capsys.readouterr().err


def test_disk_full_names_the_path(fast_notebooks, rates_csv, tmp_path, monkeypatch):
    def full(source, destination):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(destination))

    monkeypatch.setattr(runner.shutil, "copyfile", full)
    with pytest.raises(runner.ReportError) as error:
        _run(rates_csv, tmp_path)
    staged = next(tmp_path.glob(".x.failed"))
    message = str(error.value)
    assert message.startswith("cannot write ") and message.endswith("rates.csv: the disk is full")
    assert "Errno" not in message and staged.is_dir()
    assert not (tmp_path / "x").exists()


def test_svg_and_png_are_byte_identical(tmp_path):
    import matplotlib.pyplot as plt

    from audit.report.outputs import save_figure

    def draw(folder):
        fig, ax = plt.subplots()
        ax.plot([0, 1], [1, 0], label="a")
        ax.fill_between([0, 1], [0, 0], [1, 1], alpha=0.2)
        ax.legend()
        paths = save_figure(fig, "f", folder)
        plt.close(fig)
        return [p.read_bytes() for p in paths]

    assert draw(tmp_path / "one") == draw(tmp_path / "two")


# --- killed runs and concurrent runs: the one killed or holding its lock in a process of its own

KILLER = textwrap.dedent(
    """
    import json, os, signal, sys, time
    from pathlib import Path
    from audit.report import runner

    point, tag, hold = sys.argv[1], sys.argv[2], sys.argv[3]
    real_replace = os.replace
    calls = {"replace": 0}

    def replace(src, dst):
        calls["replace"] += 1
        if point == f"before-replace-{calls['replace']}":
            os.kill(os.getpid(), signal.SIGKILL)
        real_replace(src, dst)
        if point == f"after-replace-{calls['replace']}":
            os.kill(os.getpid(), signal.SIGKILL)

    def execute(name, output, parameters, *, progress=True):
        output.write_text(tag)
        if hold != "-":
            Path(hold, "started").write_text(tag)
            while not Path(hold, "release").exists():
                time.sleep(0.01)
        if point == "in-notebook":
            os.kill(os.getpid(), signal.SIGKILL)
        return output

    runner.os.replace = replace
    runner.execute = execute
    runner.export_html = lambda nb, dest: dest.write_text(tag)
    runner.declared_parameters = lambda name: ["data_path", "output_dir"]
    try:
        runner.run_report("x", notebooks=("pareto",), parameters={"data_path": sys.argv[4]},
                          reports_root=sys.argv[5], progress=False)
    except runner.ReportError as error:
        print(error, file=sys.stderr)
        sys.exit(2)
    """
)


def _finish(process):
    _, err = process.communicate()
    return process.returncode, err


def _tagged(monkeypatch, rates_csv, tmp_path, tag) -> list[str]:
    """The run :data:`KILLER` makes when nothing kills it, in this process (only a run
    that is killed, or must hold its lock beside another, needs a process of its own):
    its notes."""

    def execute(name, output, parameters, *, progress=True):
        output.write_text(tag)
        return output

    with monkeypatch.context() as patch:
        patch.setattr(runner, "execute", execute)
        patch.setattr(runner, "export_html", lambda nb, dest: dest.write_text(tag))
        patch.setattr(runner, "declared_parameters", lambda name: ["data_path", "output_dir"])
        return _run(rates_csv, tmp_path / "r")[1]


def _spawn(tmp_path, rates_csv, point, tag, hold="-"):
    script = tmp_path / "killer.py"
    script.write_text(KILLER)
    return subprocess.Popen(
        [sys.executable, str(script), point, tag, hold, str(rates_csv), str(tmp_path / "r")],
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize(
    "point",
    [
        "in-notebook",
        "before-replace-1",
        "after-replace-1",
        "before-replace-2",
        "after-replace-2",
    ],
)
def test_kill_at_any_point_keeps_a_report_and_the_next_run_tidies(
    tmp_path, rates_csv, monkeypatch, point
):
    """replace 1: staging -> finished version; replace 2: the link swap."""
    _tagged(monkeypatch, rates_csv, tmp_path, "old")
    report = tmp_path / "r" / "x"
    killed = _spawn(tmp_path, rates_csv, point, "new")
    assert _finish(killed)[0] == -signal.SIGKILL
    shown = (report / "index.html").read_text()
    assert "audit report: x" in shown  # a whole report is under the name, old or new
    assert (report / "pareto.html").read_text() == ("new" if point == "after-replace-2" else "old")
    leftovers = sorted(p.name for p in (tmp_path / "r").iterdir() if p.name.startswith(".x."))
    assert len(leftovers) >= 2  # the lock and what the kill left
    current = report.resolve().name
    stale = [n for n in leftovers if n not in (".x.lock", current)]
    assert stale  # the kill left something behind
    notes = _tagged(monkeypatch, rates_csv, tmp_path, "third")
    for name in stale:
        assert runner.REMOVED.format(folder=tmp_path / "r" / name) in notes
    assert (report / "pareto.html").read_text() == "third"
    remaining = sorted(p.name for p in (tmp_path / "r").iterdir())
    assert remaining == sorted([".x.lock", "x", report.resolve().name])


def test_lost_link_is_recovered_from_the_finished_version(tmp_path, rates_csv, monkeypatch):
    _tagged(monkeypatch, rates_csv, tmp_path, "old")
    report = tmp_path / "r" / "x"
    version = report.resolve()
    report.unlink()  # as if killed while an old-layout folder was moved aside
    notes = []
    runner._tidy(tmp_path / "r", "x", notes.append)
    assert report.resolve() == version
    assert notes == [runner.RECOVERED.format(name="x", folder=version)]


def test_two_concurrent_runs_one_refused(tmp_path, rates_csv, monkeypatch):
    hold = tmp_path / "hold"
    hold.mkdir()
    first = _spawn(tmp_path, rates_csv, "none", "first", str(hold))
    while not (hold / "started").exists():
        assert first.poll() is None
    try:
        with pytest.raises(runner.ReportError) as refused:  # (flock's lock: per file opened)
            _tagged(monkeypatch, rates_csv, tmp_path, "second")
    finally:
        (hold / "release").write_text("")  # the first goes on, whatever happened here
    assert _finish(first)[0] == 0
    lock = tmp_path / "r" / ".x.lock"
    assert str(refused.value) == runner.REPORT_BUSY.format(name="x", lock=lock)
    assert (tmp_path / "r" / "x" / "pareto.html").read_text() == "first"


@pytest.mark.slow
def test_notebooks_side_by_side_never_change_the_process_folder(small_table, tmp_path, monkeypatch):
    """The notebooks of a report run in threads of one process: a kernel must start in
    the report folder without moving the process there (os.chdir moves every thread, and
    a notebook starting while another moved back would miss its input/ copy)."""
    import os
    import threading

    moves, chdir, here = [], os.chdir, os.getcwd()

    def watch(path):
        # papermill's file reads chdir to the folder they find current: harmless while
        # that stays the process's own; a move anywhere else, from a thread, is the bug
        if threading.current_thread() is not threading.main_thread() and path != here:
            moves.append(path)
        chdir(path)

    monkeypatch.setattr(os, "chdir", watch)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # side by side, on any machine
    folder = runner.run_report(
        "side",
        notebooks=("ffmc", "pareto"),
        # the runner is under test, not the audit: one measure (all 32 draw their panels
        # for 3 s more, the kernels starting side by side all the same)
        parameters={"data_path": str(small_table), "n_random": 50, "n_replicates": 10,
                    "verdict_replicates": 2, "measures": ["garbe"]},
        reports_root=tmp_path,
        progress=False,
    )  # fmt: skip
    assert (folder / "ffmc.html").is_file() and (folder / "pareto.html").is_file()
    assert moves == []


def test_a_refusal_in_a_notebook_names_each_input_as_the_user_gave_it():
    """The copy a notebook read is named as the user's file wherever the message names it,
    never inside a longer path: a pareto run whose accuracy table named none of the
    algorithms said "(none in input/accuracy/acc.csv)", a place inside the report."""
    from audit.exceptions import NotebookFailed

    failed = NotebookFailed("pareto_downselect.ipynb failed\nkept at /r/.x.failed/pareto.ipynb")
    failed.ename = "InputError"
    failed.evalue = (
        "input/x.csv, line 3: bad; no accuracy (none in input/accuracy/acc.csv); "
        "(input/x.csv, line 5); input/x.csv.gz and input/accuracy/acc.csv2 are others"
    )
    given = {"input/x.csv": "/home/u/x.csv", "input/accuracy/acc.csv": "/home/u/acc.csv"}
    refused = runner._refused_input(failed, given)
    assert str(refused) == (
        "/home/u/x.csv, line 3: bad; no accuracy (none in /home/u/acc.csv); "
        "(/home/u/x.csv, line 5); input/x.csv.gz and input/accuracy/acc.csv2 are others\n"
        "kept at /r/.x.failed/pareto.ipynb"
    )
