"""The command line: help a newcomer can read, exit codes, clear errors on bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from audit.cli import main
from audit.exceptions import EXIT_INPUT
from audit.tables import rates

pytestmark = pytest.mark.usefixtures("shared_server")  # one server for its reports


def test_help_names_the_subcommands(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    for command in ("report", "ffmc", "pareto", "measures", "check", "fetch"):
        assert command in out
    assert "AUDIT_DATA_DIR" in out


@pytest.mark.parametrize("command", ["report", "ffmc", "pareto"])
def test_subcommand_help(capsys, command):
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert f"usage: audit {command} " in out and "[DATA]" in out
    for option in ("--measure-module", "--parameter", "--alpha", "--quiet", "--verbose", "--open"):
        assert option in out


def test_no_command_prints_help_and_fails(capsys):
    assert main([]) == 2
    assert "usage: audit" in capsys.readouterr().out


def test_measures_lists_the_builtins(capsys):
    assert main(["measures"]) == 0
    out = capsys.readouterr().out
    for name in ("fdr", "ir", "garbe"):
        assert any(line.startswith(name + " ") for line in out.splitlines())
    assert "Howard" in out
    lines = out.splitlines()
    # the columns line up: every bounds column starts at the same place
    assert len({line.index(" [") for line in lines}) == 1, lines


def test_check_valid_table(annex15_file, capsys):
    assert main(["check", str(annex15_file)]) == 0
    out = capsys.readouterr().out
    assert "126 algorithms x 8 groups = 1008 rows" in out
    assert "aa04815a53692f313d847f273b51290fba2649322d5b7b28e424d1e24afce94b" in out


def test_check_bad_table_exits_3_with_the_message(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("Algorithm,FMR.F,FNMR.F,FMR.M,FNMR.M\na,0.1,0.1,0.1,170\n")
    assert main(["check", str(path)]) == EXIT_INPUT == 3
    err = capsys.readouterr().err
    expected = rates.OUT_OF_RANGE.format(
        where=f"{path}, line 2", column="FNMR.M", value="170", more=""
    )
    assert err == f"audit: error: {expected}\n"


def test_report_refuses_bad_data_before_running(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("algorithm,group,fmr,fnmr\na,F,0.1,0.1\na,M,0.1,0.1\nb,F,0.1,0.1\n")
    assert main(["report", str(path), "--reports-dir", str(tmp_path / "r")]) == 3
    expected = rates.MISSING_GROUPS.format(
        source=str(path), algorithm="b", groups=["M"], where=f"{path}, line 4"
    )
    assert capsys.readouterr().err == f"audit: error: {expected}\n"
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_unknown_measure_module_exits_2(capsys, tmp_path):
    assert (
        main(["ffmc", "--measure-module", "no_such_module_xyz", "--reports-dir", str(tmp_path)])
        == 2
    )
    assert "cannot import measure module 'no_such_module_xyz'" in capsys.readouterr().err


def test_python_dash_m_entry_point():
    result = subprocess.run(
        [sys.executable, "-m", "audit", "--version"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    assert result.stdout.startswith("audit ")


def test_the_shell_command_is_main_then_a_frozen_heap(annex15_file):
    """``audit`` in a shell (the console script and ``python -m audit`` both call
    :func:`audit.console.run`, which imports the command line with the signals held, and
    runs :func:`audit.cli.run`) ends with :func:`main`'s status, everything it made
    frozen out of the interpreter's last collection."""
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert project["project"]["scripts"] == {"audit": "audit.console:run"}
    code = "import gc, sys; from audit.console import run; status = run(); "
    code += "print(status, gc.get_freeze_count() > 1000); sys.exit(status)"
    for argv, status in ((["check", str(annex15_file)], 0), (["check", "no-such.csv"], 3)):
        done = subprocess.run(
            [sys.executable, "-c", code, *argv], capture_output=True, text=True, check=False
        )
        assert done.returncode == status, done.stderr
        assert done.stdout.splitlines()[-1] == f"{status} True"


def test_unknown_measure_is_refused_before_any_kernel(tmp_path, capsys):
    assert main(["pareto", "--measure", "nope", "--reports-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: audit pareto ")
    assert "audit pareto: error: --measure: expected one of 'fdr', 'ir', " in err
    assert not any(tmp_path.iterdir())


def test_score_measure_is_refused_by_the_rates_reports(tmp_path, capsys):
    from audit.cli import NEEDS_RATES_MEASURE

    assert main(["pareto", "--measure", "dfi", "--reports-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.endswith(f"audit pareto: error: {NEEDS_RATES_MEASURE.format(name='dfi')}\n")


def test_bad_alpha_and_target_are_refused(tmp_path, capsys):
    assert main(["pareto", "--alpha", "1.5", "--reports-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    expected = "--alpha: expected a number in [0, 1] (or a 1-D array of them), got 1.5"
    assert err.startswith("usage: audit pareto ")
    assert err.endswith(f"audit pareto: error: {expected}\n")
    assert main(["scores", "--target-fmr", "0", "--reports-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.endswith("audit scores: error: --target-fmr: expected a number in (0, 1], got 0\n")


def test_weights_file_is_checked_and_made_absolute(tmp_path, monkeypatch, capsys):
    from audit.cli import _parameters, build_parser

    monkeypatch.chdir(tmp_path)
    (tmp_path / "counts.csv").write_text("group,n_mated\nF.Black,10\n")
    args = build_parser().parse_args(["pareto", "--weights", "counts.csv"])
    assert _parameters(args, None)["weights"] == str(tmp_path / "counts.csv")
    assert main(["pareto", "--weights", "counts.csv", "--reports-dir", str(tmp_path / "r")]) == 3
    err = capsys.readouterr().err
    assert err.startswith("audit: error: ") and "counts.csv" in err


def test_paths_given_as_parameters_or_with_a_tilde_are_made_absolute(tmp_path, monkeypatch):
    """``-p weights FILE`` is made absolute like ``--weights FILE`` (the kernels work in
    other folders), and ``~`` stands for the home folder in every path option, also
    where the shell leaves it as written (``--reports-dir=~/r``)."""
    from audit.cli import _parameters, build_parser

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    parse = build_parser().parse_args
    assert _parameters(parse(["pareto", "-p", "weights", "counts.csv"]), None)["weights"] == str(
        tmp_path / "counts.csv"
    )
    home = tmp_path / "home"
    assert _parameters(parse(["pareto", "--weights", "~/w.csv"]), None)["weights"] == str(
        home / "w.csv"
    )
    assert parse(["report", "--reports-dir=~/r"]).reports_dir == home / "r"
    args = parse(["report", "--accuracy-from", "~/acc.csv", "--accuracy-column", "acc"])
    assert _parameters(args, None)["accuracy_from"] == str(home / "acc.csv")
    # compare's --accuracy-from DATA=FILE:COLUMN: the file is found (it must exist)
    from audit.cli import _accuracy_each

    home.mkdir()
    (home / "acc.csv").write_text("algorithm,acc\na,0.1\n")
    args = parse(["compare", "annex15", "frvt11", "--accuracy-from", "frvt11=~/acc.csv:acc"])
    sources, columns = _accuracy_each(args, ["annex15", "frvt11"])
    assert sources == {"frvt11": str(home / "acc.csv")} and columns == {"frvt11": "acc"}


@pytest.mark.parametrize(
    ("argv", "how"),
    [
        (["report", "-p", "data_path", "other.csv"], "give the rates table as the first "
         "argument (audit report FILE)"),
        (["scores", "-p", "scores_path", "s.csv"], "give the score table as the first "
         "argument (audit scores FILE)"),
        (["ffmc", "-p", "output_dir", "elsewhere"], "give the reports' folder with "
         "--reports-dir and the report's name with --name"),
    ],
)  # fmt: skip
def test_parameters_the_arguments_set_are_refused(argv, how, tmp_path, capsys):
    """A ``-p`` of what the command's own arguments give (the input, the report's folder)
    would name the report after one input and read another, or be overridden without a
    word: refused, saying how to give it, before anything is written."""
    assert main([*argv, "--reports-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert (
        err == f"audit {argv[0]}: error: -p {argv[2]} is set by the command's own arguments: {how}"
    )
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["scores", "--replicates", "0", "-p", "bootstrap_replicates", "5"],
         "-p bootstrap_replicates 5 sets what --replicates 0 sets already"),
        (["report", "--replicates", "20", "-p", "n_replicates", "0"],
         "-p n_replicates 0 sets what --replicates 20 sets already"),
        (["compare", "annex15", "frvt11", "--replicates", "20", "-p", "rank_replicates", "0"],
         "-p rank_replicates 0 sets what --replicates 20 sets already"),
        (["scores", "--distance", "-p", "higher_is_match", "True"],
         "-p higher_is_match True sets what --distance sets already"),
        (["scores", "--operating-point", "nist", "-p", "target_fmr", "0.01"],
         "-p target_fmr 0.01 sets what --operating-point nist sets already"),
        (["report", "--alpha", "0.3", "-p", "alpha", "0.4"],
         "-p alpha 0.4 sets what --alpha 0.3 sets already"),
        (["report", "--ignore-columns", "x", "-p", "ignore", "['y']"],
         "-p ignore ['y'] sets what --ignore-columns x sets already"),
        (["report", "--merge-labels", "-p", "merge_labels", "False"],
         "-p merge_labels False sets what --merge-labels sets already"),
        (["report", "-p", "alpha", "0.3", "-p", "alpha", "0.4"],
         "-p alpha 0.4 sets what -p alpha 0.3 sets already"),
    ],
)  # fmt: skip
def test_a_parameter_given_twice_is_refused_not_overridden(argv, message, tmp_path, capsys):
    """An option and a ``-p`` (or two ``-p``) setting one parameter: one of them would be
    dropped without a word, and which one was meant only the user knows."""
    assert main([*argv, "--reports-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err == f"audit {argv[0]}: error: {message}; give one of them"
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["scores", "--alpha", "0.3", "--alpha", "0.4"], "--alpha"),
        (["scores", "--seed", "1", "--seed=2"], "--seed"),
        (["report", "--name", "a", "--name", "b"], "--name"),
        (["scores", "--memory", "1GB", "--memory", "2GB"], "--memory"),
    ],
)
def test_an_option_of_one_value_given_twice_is_refused(argv, option, tmp_path, capsys):
    """argparse keeps the last of two values without a word; which was meant only the
    user knows (options that gather values, -p and --measure-module, may repeat)."""
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--reports-dir", str(tmp_path / "r")])
    assert stop.value.code == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err == f"audit {argv[0]}: error: {option} is given twice; give it once"
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("argv", [["--measures", "fdr,,ir"], ["-p", "measures", "fdr, ir,"]])
def test_an_empty_name_in_a_list_is_refused_not_dropped(argv, tmp_path, capsys):
    from audit.validation import constraint_of

    assert main(["ffmc", *argv, "--reports-dir", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    expected = constraint_of("measures").expected
    named = argv[0] if argv[0] != "-p" else "parameter measures"  # as the user typed it
    assert err.startswith(f"audit ffmc: error: {named}: expected {expected}, got ")
    assert not (tmp_path / "r").exists()


def test_max_accuracy_default_and_none():
    """Left out, the notebook's default (0.01) holds; 'none' means no cut-off."""
    from audit.cli import _parameters, build_parser

    parser = build_parser()
    assert "max_accuracy" not in _parameters(parser.parse_args(["pareto"]), None)
    args = parser.parse_args(["pareto", "--max-accuracy", "none"])
    assert _parameters(args, None)["max_accuracy"] is None


def test_scores_takes_no_rates_table(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["scores", "--units", "percent"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: audit scores ")
    assert err.endswith("audit scores: error: unrecognized arguments: --units\n")


@pytest.mark.parametrize(
    ("argv", "argument"),
    [
        (["check", ""], "DATA"),  # was "parameter given": a name of audit's own
        (["check", " "], "DATA"),
        (["compare", "", "annex15"], "DATA"),  # was read as the working folder
        (["report", "--data", ""], "--data"),
        (["scores", ""], "DATA"),
    ],
)
def test_an_empty_table_argument_is_refused_as_the_argument(argv, argument, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert capsys.readouterr().err.endswith(
        f"error: argument {argument}: expected a file or a built-in dataset's name, got an "
        "empty argument\n"
    )


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["scores", "--measure", "garbe"], "--measure"),  # not --measure-module
        (["check", "--attr", "gender,race"], "--attr"),  # not --attributes
        (["report", "--replicate", "3"], "--replicate"),  # not --replicates
        (["report", "--alp", "0.3", "--alpha", "0.4"], "--alp"),  # not a second --alpha
    ],
)
def test_an_option_is_named_whole(argv, said, capsys):
    """argparse took a prefix of an option for it: ``audit scores --measure garbe``, the
    pareto option given to the wrong command, was read as ``--measure-module garbe``
    ("cannot import measure module 'garbe'"). A prefix is an unknown option (its value
    read as the data, where the command takes them)."""
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert capsys.readouterr().err.endswith(f"error: unrecognized arguments: {said}\n")


def test_scores_file_is_read_once_the_cli_checks_only_its_columns(tmp_path, monkeypatch, capsys):
    """The rows are read by the report, not before it: the CLI checks the header."""
    import audit.scores
    import audit.tables.scores as SR
    from audit.cli import _parameters, _preflight, build_parser

    def refuse(*args, **kwargs):
        raise AssertionError("the CLI read the rows")

    monkeypatch.setattr(SR, "read_scores", refuse)
    monkeypatch.setattr(audit.scores, "read_scores", refuse)
    path = tmp_path / "s.csv"
    path.write_text("algorithm,score,mated,group\na,0.5,1,F\n")
    args = build_parser().parse_args(["scores", str(path)])
    _preflight("scores", _parameters(args, str(path)), args, streamed=False)  # (a CSV file)
    path.write_text("algorithm,score,group\na,0.5,F\n")
    assert main(["scores", str(path), "--reports-dir", str(tmp_path)]) == 3
    expected = SR.MISSING_COLUMN.format(source=str(path), column="mated", hint="")
    assert capsys.readouterr().err == f"audit: error: {expected}\n"


def test_a_streamed_score_set_refuses_two_spellings_and_merging_them(tmp_path, capsys):
    """Streamed, labels spelled two ways are refused (exit 3), naming the files and rows,
    and --merge-labels, which only a score set read whole can honour, is refused up front
    (exit 2); no report is written either way."""
    import numpy as np
    import pandas as pd

    from audit.report.streamed import STREAMED_BOOTSTRAP, STREAMED_COPY, STREAMED_MERGE

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(
        {
            "algorithm": "a",
            "score": rng.normal(size=400).round(1),
            "mated": rng.random(400) < 0.3,
            "group": rng.choice(["F", "M"], 400),
        }
    )
    frame.loc[300:, "group"] = frame.loc[300:, "group"].str.lower()
    (tmp_path / "run").mkdir()
    frame.iloc[:200].to_parquet(tmp_path / "run" / "a.parquet")
    frame.iloc[200:].to_parquet(tmp_path / "run" / "b.parquet")
    argv = ["scores", str(tmp_path / "run"), "--reports-dir", str(tmp_path / "r"), "--no-progress"]
    assert main(argv) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "differ only by case, so they would be read as two groups" in err
    assert f"{tmp_path / 'run' / 'b.parquet'}, row 100" in err
    assert main([*argv, "--merge-labels"]) == 2
    message = STREAMED_MERGE.format(scores=tmp_path / "run")
    assert capsys.readouterr().err.splitlines()[-1] == f"audit scores: error: {message}"
    # a bootstrap asked for is refused as well, by --replicates or -p; 0 asks for none
    for asked in (["--replicates", "50"], ["-p", "bootstrap_replicates", "50"]):
        assert main([*argv, *asked]) == 2
        message = STREAMED_BOOTSTRAP.format(scores=tmp_path / "run", replicates=50)
        assert capsys.readouterr().err.splitlines()[-1] == f"audit scores: error: {message}"
    # so is a copy of the input in the report, which a streamed set does not get
    assert main([*argv, "--input-copy", "always"]) == 2
    message = STREAMED_COPY.format(scores=tmp_path / "run")
    assert capsys.readouterr().err.splitlines()[-1] == f"audit scores: error: {message}"
    assert not list((tmp_path / "r").glob("run*"))
    # a glob or a folder of no Parquet file says so first, whatever else is asked
    from audit.tables.chunks import NO_PARQUET

    (tmp_path / "none").mkdir()
    for empty in (str(tmp_path / "run" / "*.parq"), str(tmp_path / "none")):
        for asked in (["--replicates", "50"], ["--merge-labels"], ["--input-copy", "always"]):
            rest = ["--reports-dir", str(tmp_path / "r"), "--no-progress"]
            assert main(["scores", empty, *asked, *rest]) == EXIT_INPUT
            said = capsys.readouterr().err.splitlines()[-1]
            assert said == f"audit: error: {NO_PARQUET.format(source=empty)}"
    frame["group"] = frame["group"].str.upper()
    frame.iloc[200:].to_parquet(tmp_path / "run" / "b.parquet")
    assert main([*argv, "--replicates", "0"]) == 0
    manifest = json.loads((tmp_path / "r" / "run" / "manifest.json").read_text())
    assert manifest["parameters"]["bootstrap_replicates"] == 0


def test_scores_folder_is_streamed_into_rate_tables(tmp_path, capsys, monkeypatch):
    """A glob of Parquet files (or data over --memory) takes the streaming engine; its
    rates equal the in-memory ones. Whether it does is decided once (a file's footer
    read once)."""
    import numpy as np
    import pandas as pd

    from audit.scores import rates_at_fmr, read_scores

    rng = np.random.default_rng(3)
    n = 4000
    frame = pd.DataFrame(
        {
            "algorithm": rng.choice(["a", "b"], n),
            "score": rng.normal(size=n).astype("float32"),
            "mated": rng.random(n) < 0.3,
            "group": rng.choice(["F", "M"], n),
        }
    )
    frame.loc[frame["mated"], "score"] += 2
    (tmp_path / "run").mkdir()
    frame.iloc[:2500].to_parquet(tmp_path / "run" / "a.parquet")
    frame.iloc[2500:].to_parquet(tmp_path / "run" / "b.parquet")
    glob = str(tmp_path / "run" / "*.parquet")
    argv = ["scores", glob, "--reports-dir", str(tmp_path / "r"), "--no-progress"]
    assert main([*argv, "--target-fmr", "0.01"]) == 0
    tables = tmp_path / "r" / "run" / "tables"
    folder = tables.parent
    assert capsys.readouterr().out == f"report written to {folder}\nopen {folder / 'index.html'}\n"
    rates = pd.read_csv(tables / "rates_at_fmr_0.01_group.csv")  # named as the notebook names it
    expected = rates_at_fmr(read_scores(frame), 0.01)
    # the CSV holds 10 significant digits; tests/test_streaming.py checks every bit
    np.testing.assert_allclose(rates["fnmr"], expected["fnmr"], rtol=1e-9)
    np.testing.assert_allclose(rates["fmr"], expected["fmr"], rtol=1e-9)
    assert list(rates["group"]) == list(expected["group"])
    measures = pd.read_csv(tables / "measures.csv")
    assert {"garbe", "fdr", "std_eer", "dfi", "cei"} <= set(measures["measure"])
    assert set(measures["kind"]) == {"rates", "scores"}
    from audit.measures.registry import evaluate_scores
    from audit.measures.scores import eer_table
    from audit.scores import det_points

    table = read_scores(frame)
    eers = pd.read_csv(tables / "eer_by_group.csv")
    np.testing.assert_allclose(eers["eer"], eer_table(table)["eer"], rtol=1e-9)
    scored = measures[measures["kind"] == "scores"].reset_index(drop=True)
    np.testing.assert_allclose(scored["value"], evaluate_scores(table)["value"], rtol=1e-9)
    points = pd.read_csv(tables / "det_points.csv")
    np.testing.assert_allclose(points["fnmr"], det_points(table)["fnmr"], rtol=1e-9)
    assert (tables / "sweep_measures.csv").exists()
    # the front page lists every measure per system, from measures.csv
    page = (tables.parent / "index.html").read_text(encoding="utf-8")
    garbe = measures.set_index(["measure", "algorithm"]).loc[("garbe", "b"), "value"]
    assert f'<td class="num">{garbe:.4g}</td>' in page
    # the FFMC audit of the rates at the operating point, the notebook's on the same rates
    from audit.analysis.ffmc import ffmc_table

    verdicts = pd.read_csv(tables / "ffmc_table.csv")
    expected_verdicts = ffmc_table(expected).assign(grouping="group")
    assert list(verdicts["grouping"]) == list(expected_verdicts["grouping"])
    columns = ["measure", "criterion", "passed"]
    pd.testing.assert_frame_equal(
        verdicts[columns].astype(str), expected_verdicts[columns].astype(str)
    )
    assert "This report has no FFMC audit." not in page and "FFMC.2" in page
    # the notebook's figures, from the same tables: byte for byte those drawn in memory
    import matplotlib.pyplot as plt

    from audit.analysis.sweeps import sweep_measures
    from audit.report.outputs import render_figure
    from audit.report.plots.scores import det_figure, sweep_figure

    swept = sweep_measures(table, targets=np.geomspace(1e-3, 0.1, 21), alpha=0.5)
    for name, fig in (
        ("sweep_group", sweep_figure(swept, ["fdr", "ir", "garbe", "nrb", "std_fnmr"],
                                     grouping="group", n_groups=2)),
        ("det_group", det_figure(det_points(table), grouping="group")),
    ):  # fmt: skip
        png, svg = render_figure(fig)
        plt.close(fig)
        assert (folder / "figures" / f"{name}.png").read_bytes() == png
        assert (folder / "figures" / f"{name}.svg").read_bytes() == svg
        assert f'<img src="figures/{name}.png"' in page
    one = tmp_path / "one.parquet"
    frame.to_parquet(one)
    # a budget just under the data's 24 kB: the engine takes several passes (seven), each
    # evaluating the report's tables again, so a sweep of 3 points rather than 21
    argv += ["-p", "sweep_points", "3"]
    from audit.report import streamed

    asked = []
    streams = streamed.streams
    monkeypatch.setattr(streamed, "streams", lambda *a: asked.append(a) or streams(*a))
    assert main(["scores", str(one), "--memory", "23kB", *argv[2:], "--target-fmr", "0.05"]) == 0
    assert asked == [(str(one), "23kB", None)]
    assert (tmp_path / "r" / "one" / "tables" / "sweep.csv").exists()
    manifest = json.loads((tmp_path / "r" / "one" / "manifest.json").read_text())
    assert manifest["passes"] > 1
    # each file read is recorded with its size and its checksum, as any report's input is
    import hashlib

    sha256 = hashlib.sha256(one.read_bytes()).hexdigest()
    assert manifest["files"] == [{"path": str(one), "bytes": one.stat().st_size, "sha256": sha256}]
    assert sha256 in (tmp_path / "r" / "one" / "index.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("data", [[], ["scores.csv"]])
def test_a_bad_memory_budget_is_refused_whatever_the_scores(data, tmp_path, capsys, monkeypatch):
    """--memory is read before anything else, for the built-in scores (read whole, where
    it was never looked at) as for a file."""
    from audit.scores.streaming import BAD_MEMORY

    monkeypatch.chdir(tmp_path)
    (tmp_path / "scores.csv").write_text("algorithm,score,mated,group\na,0.5,True,F\n")
    argv = ["scores", *data, "--memory", "1e3 apples", "--reports-dir", str(tmp_path / "r")]
    assert main(argv) == 2
    message = BAD_MEMORY.format(value="1e3 apples").replace("parameter memory", "--memory")
    assert capsys.readouterr().err.splitlines()[-1] == f"audit scores: error: {message}"


def test_scores_on_a_dask_scheduler_and_a_scheduler_not_there(
    tmp_path, capsys, monkeypatch, http_folder
):
    """--scheduler ADDRESS runs the passes on that cluster (here one of threads in this
    process, reached over TCP): the tables are those streamed here, and the manifest
    names the engine. An address no scheduler answers at, or a machine without Dask's
    distributed, is refused (exit 2) saying so, where it ended as an internal error."""
    import sys

    import numpy as np
    import pandas as pd

    distributed = pytest.importorskip("distributed")
    from audit.report import streamed

    rng = np.random.default_rng(4)
    frame = pd.DataFrame({"algorithm": "a", "score": rng.normal(size=3000),
                          "mated": rng.random(3000) < 0.3, "group": rng.choice(["F", "M"], 3000)})  # fmt: skip
    frame.loc[frame["mated"], "score"] += 2
    (tmp_path / "run").mkdir()
    frame.iloc[:1000].to_parquet(tmp_path / "run" / "a.parquet")
    frame.iloc[1000:].to_parquet(tmp_path / "run" / "b.parquet")
    argv = ["scores", str(tmp_path / "run"), "--no-progress", "-p", "sweep_points", "3"]
    assert main([*argv, "--reports-dir", str(tmp_path / "here")]) == 0
    with distributed.LocalCluster(
        n_workers=1, processes=False, dashboard_address=None, scheduler_kwargs={"dashboard_address": ":0"}
    ) as cluster:  # fmt: skip
        address = cluster.scheduler_address
        assert main([*argv, "--reports-dir", str(tmp_path / "there"), "--scheduler", address]) == 0
    capsys.readouterr()
    for name in ("rates_at_fmr_0.001_group", "sweep", "eer_by_group", "measures"):
        pd.testing.assert_frame_equal(
            pd.read_csv(tmp_path / "there" / "run" / "tables" / f"{name}.csv"),
            pd.read_csv(tmp_path / "here" / "run" / "tables" / f"{name}.csv"),
        )
    manifest = json.loads((tmp_path / "there" / "run" / "manifest.json").read_text())
    assert manifest["engine"] == "dask"
    bad = ["--reports-dir", str(tmp_path / "bad")]
    assert main([*argv, *bad, "--scheduler", "foo://x:1"]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith(
        "audit scores: error: --scheduler foo://x:1: no Dask scheduler could be reached "
        "there (ValueError: unknown address scheme 'foo'"
    )
    assert err.endswith("or leave --scheduler out to stream the scores in this process")
    for address, reason in (("", "ValueError: "), ("tls://127.0.0.1:1", "TypeError: ")):
        assert main([*argv, *bad, "--scheduler", address]) == 2
        err = capsys.readouterr().err.splitlines()[-1]
        assert err.startswith(f"audit scores: error: --scheduler {address}: no Dask scheduler "
                              f"could be reached there ({reason}")  # fmt: skip
    # a listener that is no scheduler (a web server) never answers Dask's handshake,
    # which Dask's own timeout does not cover: refused once that timeout has passed
    import dask

    address = http_folder[1].replace("http://", "tcp://")
    with dask.config.set({"distributed.comm.timeouts.connect": "0.2s"}):
        assert main([*argv, *bad, "--scheduler", address]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith(f"audit scores: error: --scheduler {address}: no Dask scheduler "
                          "could be reached there (no answer within 1.3 s")  # fmt: skip
    # the built-in scores are read whole: a cluster given for them is refused, not ignored
    assert main(["scores", "--no-progress", *bad, "--scheduler", "tcp://127.0.0.1:1"]) == 2
    message = streamed.SCHEDULER_BUILT_IN.format(scheduler="tcp://127.0.0.1:1")
    assert capsys.readouterr().err.splitlines()[-1] == f"audit scores: error: {message}"

    def timed_out(address):
        raise OSError(f"Timed out trying to connect to {address} after 30 s")

    monkeypatch.setattr(distributed, "Client", timed_out)
    assert main([*argv, *bad, "--scheduler", "tcp://127.0.0.1:1"]) == 2
    reason = "OSError: Timed out trying to connect to tcp://127.0.0.1:1 after 30 s"
    message = streamed.NO_SCHEDULER.format(scheduler="tcp://127.0.0.1:1", reason=reason)
    assert capsys.readouterr().err.splitlines()[-1] == f"audit scores: error: {message}"
    monkeypatch.setitem(sys.modules, "distributed", None)  # not installed
    assert main([*argv, *bad, "--scheduler", "tcp://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith("audit scores: error: --scheduler tcp://127.0.0.1:1: running the passes")
    assert "pip install 'audit[dask]'" in err
    assert not list((tmp_path / "bad").iterdir())  # no report


@pytest.mark.parametrize(
    ("command", "expected"),
    [("report", "mine"), ("ffmc", "mine-ffmc"), ("pareto", "mine-pareto")],
)
def test_a_part_of_the_report_never_replaces_the_whole(
    command, expected, annex15_file, tmp_path, monkeypatch
):
    """From one data file, `audit report` writes reports/<stem>/ and `audit ffmc` or
    `audit pareto` write beside it, so running one after the other keeps both."""
    import shutil

    from audit.report import runner

    data = tmp_path / "mine.csv"
    shutil.copy(annex15_file, data)
    names = []
    monkeypatch.setattr(
        runner, "run_report", lambda name, **options: names.append(name) or tmp_path / name
    )
    assert main([command, str(data), "--reports-dir", str(tmp_path / "r")]) == 0
    assert names == [expected]


def test_a_reports_folder_named_relative_to_the_working_folder(small_table, tmp_path, monkeypatch):
    """``--reports-dir r`` is ``r`` under the folder the command runs in, for the kernels
    too (they work in other folders): the report is written there, nothing else is."""
    monkeypatch.chdir(tmp_path)
    argv = ["report", str(small_table), "--name", "small", "--reports-dir", "r", "--no-progress"]
    argv += ["-p", "measures", '["fdr"]', "-p", "uncertainty_method", "none"]
    argv += ["-p", "n_random", "20", "-p", "alpha_step", "0.25"]
    assert main(argv) == 0
    assert sorted(os.listdir(tmp_path)) == ["r"]
    written = sorted(os.listdir(tmp_path / "r"))  # the link small, to the version it holds
    assert written[:2] == [".small.lock", os.readlink(tmp_path / "r" / "small")] and written[
        2:
    ] == ["small"]
    assert (tmp_path / "r" / "small" / "index.html").is_file()


@pytest.mark.parametrize("command", ["report", "pareto", "scores"])
def test_a_working_folder_deleted_under_the_command(
    command, small_table, tmp_path, monkeypatch, capsys
):
    """Run from a folder since deleted, a report's command says so before any work,
    whatever paths it was given (it used to fail late, naming a file it could not write,
    or as a bug); audit check reads the file named in full all the same."""
    from audit.cli import NO_WORKING_FOLDER

    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    argv = [command, str(small_table), "--reports-dir", str(tmp_path / "r")]
    assert main(argv) == 2
    assert capsys.readouterr().err.endswith(f"audit {command}: error: {NO_WORKING_FOLDER}\n")
    assert sorted(os.listdir(tmp_path)) == []
    assert main(["check", str(small_table)]) == 0
    assert "6 algorithms x 4 groups" in capsys.readouterr().out


def test_what_needs_a_deleted_working_folder_says_so(small_table, tmp_path, monkeypatch, capsys):
    """From a folder since deleted, audit check of a file named relative to it, and a
    measure module (imported from the working folder), say that the folder is gone: both
    failed as bugs of audit's (status 70); a built-in dataset is checked all the same, and
    so is a file named in full (test_a_working_folder_deleted_under_the_command)."""
    from audit.cli import NO_WORKING_FOLDER

    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    monkeypatch.setattr(sys, "path", list(sys.path))  # as a module's import would change it
    monkeypatch.setenv("PYTHONPATH", os.environ.get("PYTHONPATH", ""))
    for argv in (
        ["check", "small.csv"],
        ["measures", "--measure-module", "my_measures"],
        ["report", str(small_table), "--measure-module", "my_measures"],
    ):
        assert main(argv) == 2
        assert capsys.readouterr().err.endswith(f"audit {argv[0]}: error: {NO_WORKING_FOLDER}\n")
    assert main(["check", "annex15"]) == 0
    assert "126 algorithms x 8 groups" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("given", "expected"),
    [("latest.csv", "latest"), ("./sub/../latest.csv", "latest"), (".", "work")],
)
def test_a_report_is_named_after_the_input_as_given(
    given, expected, tmp_path, monkeypatch, small_table
):
    """A link is named for itself, not for the file it points to (``latest.csv`` ->
    ``run-42.csv`` gives the report ``latest``); ``.`` and ``..`` are read as folders."""
    from audit.report import runner

    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    (work / "latest.csv").symlink_to(small_table)
    monkeypatch.chdir(work)
    names = []
    monkeypatch.setattr(runner, "run_report", lambda name, **options: names.append(name) or work)
    command = "scores" if given == "." else "pareto"
    if command == "scores":
        monkeypatch.setattr("audit.cli._preflight", lambda *args, **kwargs: None)
        monkeypatch.setattr("audit.cli._streamed", lambda *args, **kwargs: False)
    main([command, given, "--reports-dir", str(tmp_path / "r")])
    assert names == [f"{expected}-pareto" if command == "pareto" else expected]


def test_an_empty_reports_folder_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(["pareto", "annex15", "--reports-dir", ""])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert (
        err == "audit pareto: error: argument --reports-dir: expected a folder, got an empty path"
    )
    assert os.listdir(tmp_path) == []


def test_a_file_named_as_a_dataset_is_noted_as_not_read(tmp_path, monkeypatch, capsys):
    from audit.cli import DATASET_NOT_FILE

    monkeypatch.chdir(tmp_path)
    (tmp_path / "annex15").write_text("not, a, table\n")
    assert main(["check", "annex15"]) == 0  # the dataset
    captured = capsys.readouterr()
    assert captured.err == f"audit: {DATASET_NOT_FILE.format(name='annex15')}\n"
    assert "126 algorithms x 8 groups" in captured.out
    assert main(["check", "./annex15"]) == 3  # the file, refused as it is no table
    assert "note:" not in capsys.readouterr().err
    # as the deprecated --data, and as the table of an accuracy axis
    (tmp_path / "frvt11-accuracy").write_text("not, a, table\n")
    assert main(["check", "--data", "annex15"]) == 0
    notes = capsys.readouterr().err.splitlines()
    assert f"audit: {DATASET_NOT_FILE.format(name='annex15')}" in notes
    args = ["--accuracy-column", "Mugshot, 1e-5", "--reports-dir", "r", "--name", "/"]
    assert main(["pareto", "frvt11", "--accuracy-from", "frvt11-accuracy", *args]) == 2
    assert f"audit: {DATASET_NOT_FILE.format(name='frvt11-accuracy')}\n" in capsys.readouterr().err
    each = ["--accuracy-from", "frvt11=frvt11-accuracy:Mugshot, 1e-5", "--name", "/"]
    assert main(["compare", "annex15", "frvt11", *each, "--reports-dir", "r"]) == 2
    assert f"audit: {DATASET_NOT_FILE.format(name='frvt11-accuracy')}\n" in capsys.readouterr().err
    # a name given twice (an input, and its accuracy's table) is noted once
    assert main(["compare", "annex15", "annex15", "--accuracy-from", "annex15=annex15:x"]) == 2
    assert capsys.readouterr().err.count(DATASET_NOT_FILE.format(name="annex15")) == 1
    assert not (tmp_path / "r").exists()


def test_output_cut_short_by_its_reader_is_not_an_error(annex15_file):
    """`audit check t.csv | head -1`: no error message, the SIGPIPE exit status.  The
    reader is gone before the first line is written, so every write meets the closed pipe."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "audit", "check", str(annex15_file)],
            stdout=write,
            stderr=subprocess.PIPE,
            timeout=120,
        )
    finally:
        os.close(write)
    assert done.returncode == 141
    assert done.stderr == b""
    # a refusal said to a reader gone (`audit check --units x t.csv 2>&1 | head -1`):
    # status 1, a failed notebook's, after a BrokenPipeError traceback
    read, write = os.pipe()
    os.close(read)
    try:
        refused = subprocess.run(
            [sys.executable, "-m", "audit", "check", "--units", "x", str(annex15_file)],
            stdout=write,
            stderr=write,
            timeout=120,
        )
    finally:
        os.close(write)
    assert refused.returncode == 141


@pytest.mark.filterwarnings("ignore::UserWarning")  # said again on the terminal, as raised
def test_a_streamed_report_records_each_warning_once_and_those_of_its_figures(tmp_path):
    """A measure undefined for a system (SED_G of scores all alike: no FNMR at the mean
    EER threshold), warned of once a value, is recorded once, as a notebook records it;
    a glyph its figures cannot draw is recorded too, where it was said on the terminal
    only."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(1)
    parts = []
    # a name no font draws: a character of Unicode's private use area
    for name, spread in (("a", 1.0), ("x\ue000", 0.0)):
        mated = rng.random(2000) < 0.3
        score = rng.normal(size=2000) * spread + 2.0 * mated * spread + 0.5
        group = rng.choice(["F", "M"], 2000)
        parts.append(
            pd.DataFrame({"algorithm": name, "score": score, "mated": mated, "group": group})
        )
    frame = pd.concat(parts, ignore_index=True)
    (tmp_path / "run").mkdir()
    for i in range(4):
        frame.iloc[i * 1000 : (i + 1) * 1000].to_parquet(tmp_path / "run" / f"{i}.parquet")
    argv = ["scores", str(tmp_path / "run"), "--reports-dir", str(tmp_path / "r"), "--no-progress"]
    assert main(argv) == 0
    recorded = pd.read_csv(tmp_path / "r" / "run" / "tables" / "warnings_streamed.csv")
    undefined = recorded[recorded["category"] == "UndefinedMeasureWarning"]
    assert list(undefined["count"]) == [1] and "SED_G undefined" in undefined["sentence"].iloc[0]
    glyphs = recorded[recorded["sentence"].str.startswith("Glyph 57344")]
    assert len(glyphs) >= 1 and (glyphs["category"] == "UserWarning").all()


def test_streamed_non_mated_scores_give_the_fmr_measures(tmp_path):
    """Non-mated scores alone, streamed: the FMR-only rates and the rate measures the
    in-memory path gives; no EER, DET points or score measure (they need mated scores)."""
    import numpy as np
    import pandas as pd

    from audit.measures.registry import evaluate_many
    from audit.scores import rates_at_fmr, read_scores

    rng = np.random.default_rng(4)
    n = 6000
    frame = pd.DataFrame(
        {
            "algorithm": rng.choice(["a", "b"], n),
            "score": rng.normal(size=n),
            "mated": False,
            "group": rng.choice(["F", "M"], n),
        }
    )
    path = tmp_path / "impostors.parquet"
    frame.to_parquet(path)
    argv = ["scores", str(path), "--memory", "1kB", "--target-fmr", "0.01"]
    assert main([*argv, "--reports-dir", str(tmp_path / "r"), "--no-progress"]) == 0
    tables = tmp_path / "r" / "impostors" / "tables"
    assert {p.name for p in tables.iterdir()} == {
        "rates_at_fmr_0.01_group.csv", "sweep.csv", "sweep_measures.csv", "measures.csv",
        "robustness_streamed.csv",  # the sentence the front page's how sure shows
        "warnings_streamed.csv",  # and the warnings it lists (none here)
        "ffmc_table.csv", "measure_registry.csv",  # the FFMC audit of the FMRs
    }  # fmt: skip
    assert pd.read_csv(tables / "warnings_streamed.csv").empty
    expected = rates_at_fmr(read_scores(frame), 0.01)
    rates = pd.read_csv(tables / "rates_at_fmr_0.01_group.csv")
    assert list(rates.columns) == ["algorithm", "group", "fmr", "n_nonmated"]
    np.testing.assert_allclose(rates["fmr"], expected["fmr"], rtol=1e-9)
    measures = pd.read_csv(tables / "measures.csv")
    assert set(measures["kind"]) == {"rates"}
    values = evaluate_many(expected, alpha=0.5, zero_division="flag")
    np.testing.assert_allclose(measures["value"], values["value"], rtol=1e-9)


def test_the_nist_operating_point_is_one_option_away(capsys):
    """--operating-point nist sets the pooled FMR target to NIST's 3e-5 (NISTIR 8429); it
    and --target-fmr exclude each other."""
    from audit.cli import _parameters, build_parser
    from audit.scores.thresholds import NIST_OPERATING_FMR

    parser = build_parser()
    args = parser.parse_args(["scores", "--operating-point", "nist"])
    assert _parameters(args, None)["target_fmr"] == NIST_OPERATING_FMR == 3e-5
    assert "target_fmr" not in _parameters(parser.parse_args(["scores"]), None)
    with pytest.raises(SystemExit) as stop:
        parser.parse_args(["scores", "--operating-point", "nist", "--target-fmr", "0.01"])
    assert stop.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        parser.parse_args(["scores", "--operating-point", "iso"])
    assert stop.value.code == 2
    assert "invalid choice: 'iso'" in capsys.readouterr().err


def test_measures_lists_the_iso_term(capsys):
    assert main(["measures"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("garbe "))
    assert "; ISO/IEC 19795-10: aggregate equitability measure;" in line
    assert "ISO/IEC" not in next(x for x in out.splitlines() if x.startswith("std_eer "))


@pytest.mark.parametrize("command", [["report", "annex15"], ["compare", "annex15", "frvt11"]])
def test_a_measure_named_twice_is_refused_before_any_work(command, tmp_path, capsys):
    """``--measures garbe,fdr,garbe`` failed deep in the notebooks (pandas: "Index contains
    duplicate entries"); it is refused as a usage error, as is the notebooks' parameter."""
    from audit.exceptions import EXIT_USAGE, ParameterError
    from audit.validation import check

    argv = [*command, "--measures", "garbe,fdr,garbe", "--reports-dir", str(tmp_path / "r")]
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "expected a non-empty list of distinct names" in err and "got 'garbe,fdr,garbe'" in err
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())
    assert check("measures", ["garbe", "fdr"]) == ["garbe", "fdr"]
    with pytest.raises(ParameterError, match="distinct names"):
        check("measures", ["garbe", "garbe"])


@pytest.mark.parametrize("command", ["report", "ffmc"])
def test_measures_of_which_none_applies_are_refused_before_any_work(
    command, annex15_file, tmp_path, capsys
):
    """``--measures within_cross_ratio`` on a table of one group per row failed in the FFMC
    notebook (status 1), saying the user gave ``[]``: refused before any work, with the
    reason of each measure, as ``pareto --measure`` refuses its one."""
    from audit.cli import NONE_APPLICABLE
    from audit.exceptions import EXIT_USAGE
    from audit.measures.onesided import NOT_APPLICABLE_HERE
    from audit.measures.registry import applicable_measures
    from audit.tables.rates import read_rates

    notes = applicable_measures(read_rates(annex15_file), ["within_cross_ratio", "fmr_asymmetry"])
    reasons = dict(zip(notes["measure"], notes["note"], strict=True))
    base = [command, str(annex15_file), "--reports-dir", str(tmp_path / "r"), "--measures"]
    assert main([*base, "within_cross_ratio"]) == EXIT_USAGE
    one = NOT_APPLICABLE_HERE.format(
        name="within_cross_ratio", source=annex15_file, reason=reasons["within_cross_ratio"]
    )
    assert capsys.readouterr().err.rstrip().endswith(f"error: {one}")
    assert main([*base, "within_cross_ratio,fmr_asymmetry"]) == EXIT_USAGE
    both = NONE_APPLICABLE.format(
        source=annex15_file,
        reasons="; ".join(f"{m!r}: it {n}" for m, n in reasons.items()),
    )
    assert capsys.readouterr().err.rstrip().endswith(f"error: {both}")
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


@pytest.mark.parametrize(
    ("argv", "name", "most"),
    [
        (["ffmc", "annex15", "--replicates", str(10**30)], "n_replicates", "[1, 100000]"),
        (["ffmc", "annex15", "-p", "n_random", str(10**21)], "n_random", "[1, 1000000]"),
        (
            ["report", "annex15", "-p", "verdict_replicates", "10001"],
            "verdict_replicates",
            "[1, 10000]",
        ),
        (["scores", "--replicates", str(10**14)], "bootstrap_replicates", "[0, 100000]"),
        (["scores", "-p", "sweep_points", str(10**6)], "sweep_points", "[2, 10000]"),
        (
            ["compare", "annex15", "frvt11", "--replicates", str(10**14)],
            "rank_replicates",
            "[0, 100000]",
        ),
    ],
)
def test_a_count_past_what_a_report_can_hold_is_refused_before_any_work(
    argv, name, most, tmp_path, capsys
):
    """``--replicates 1e30`` passed the checks and failed in a notebook ("Maximum allowed
    dimension exceeded", status 1); 10**6 sweep points ran for minutes. Each count has a
    most, said where it is refused."""
    from audit.exceptions import EXIT_USAGE

    assert main([*argv, "--reports-dir", str(tmp_path / "r")]) == EXIT_USAGE
    err = capsys.readouterr().err
    named = f"parameter {name}" if "-p" in argv else argv[-2]  # as the user typed it
    assert f"error: {named}: expected a whole number in {most}, got " in err
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


@pytest.mark.parametrize(
    ("given", "low", "high"),
    [
        (["-p", "sweep_min", "0.1", "-p", "sweep_max", "0.001"], 0.1, 0.001),  # the default
        (["-p", "sweep_min", "0.01", "-p", "sweep_max", "0.01"], 0.01, 0.01),  # one target
        (["-p", "sweep_min", "0.5"], 0.5, 0.1),  # past the default end
    ],
)
def test_a_sweep_whose_ends_are_not_in_order_is_refused_before_any_work(
    given, low, high, small_scores, tmp_path, capsys
):
    """``-p sweep_min 0.1 -p sweep_max 0.001`` gave the default sweep, and equal ends a
    sweep of one target, without a word (the manifest recorded the ends given)."""
    from audit.cli import SWEEP_ENDS
    from audit.exceptions import EXIT_USAGE

    argv = ["scores", str(small_scores), *given, "--reports-dir", str(tmp_path / "r")]
    assert main(argv) == EXIT_USAGE
    assert capsys.readouterr().err.endswith(f"error: {SWEEP_ENDS.format(low=low, high=high)}\n")
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ('[["age"]]', "unknown attribute 'age'; the VoxCeleb metadata gives"),
        ('[["gender", "gender"]]', "'gender' is named twice"),
        ('[["gender"], ["gender"]]', "the grouping ['gender'] is given twice"),
    ],
)
def test_groupings_of_the_built_in_scores_are_checked_before_any_work(
    given, said, tmp_path, capsys
):
    """An unknown attribute and one named twice failed in the notebook (status 1); a
    grouping given twice was audited twice."""
    from audit.exceptions import EXIT_USAGE

    argv = ["scores", "-p", "groupings", given, "--reports-dir", str(tmp_path / "r")]
    assert main(argv) == EXIT_USAGE
    assert said in capsys.readouterr().err
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_an_uncertainty_analysis_turned_off_by_its_options_is_refused(
    annex15_file, tmp_path, capsys
):
    """``-p floor_lower 0.5`` (above the table's floor) turned the uncertainty analysis off,
    and ``--replicates 3 -p uncertainty_method none`` drew none, each said only by one
    sentence in a table of the report: both are refused before any work."""
    from audit.analysis.quality import floor_of
    from audit.cli import FLOOR_LOWER_ABOVE, NO_ANALYSIS_REPLICATES
    from audit.exceptions import EXIT_USAGE, UsageError
    from audit.tables.rates import read_rates

    floor = float(floor_of(read_rates(annex15_file)["fmr"].to_numpy()))
    base = ["ffmc", str(annex15_file), "--reports-dir", str(tmp_path / "r")]
    assert main([*base, "-p", "floor_lower", "0.5"]) == EXIT_USAGE
    said = FLOOR_LOWER_ABOVE.format(value=0.5, floor=floor, rate="FMR", source=annex15_file)
    assert capsys.readouterr().err.endswith(f"error: {said}\n")
    assert main([*base, "--replicates", "3", "-p", "uncertainty_method", "none"]) == EXIT_USAGE
    assert capsys.readouterr().err.endswith(f"error: {NO_ANALYSIS_REPLICATES.format(n=3)}\n")
    # where the rates are redrawn from their counts, no floor is: floor_lower has no part
    from audit.cli import _uncertainty_options

    counted = read_rates(annex15_file).assign(n_mated=10_000, n_nonmated=1_000_000)
    assert _uncertainty_options({"floor_lower": 0.5}, counted) is None
    with pytest.raises(UsageError, match="floor_lower"):
        _uncertainty_options({"floor_lower": 0.5, "uncertainty_method": "transcription"}, counted)
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


@pytest.mark.parametrize(
    ("given", "said"),
    [
        (["--measures", "within_cross_ratio"], "no measure given applies to annex15, fmr_only"),
        (["-p", "floor_lower", "0.5"], "floor_lower (0.5) must be at most the floor"),
        (
            ["-p", "verdict_replicates", "10", "-p", "uncertainty_method", "none"],
            "10 replicates asked for, and uncertainty_method 'none'",
        ),
    ],
)
def test_compare_refuses_what_report_refuses_before_any_work(
    given, said, fmr_only_file, tmp_path, capsys
):
    """As for one table: measures of which none applies to any table gave an empty verdict
    matrix (status 0; within_cross_ratio reads a cross-group table, and neither is one),
    and floor_lower above the floor, or replicates with no analysis, turned it off."""
    from audit.exceptions import EXIT_USAGE

    argv = ["compare", "annex15", str(fmr_only_file), *given]
    argv += ["--reports-dir", str(tmp_path / "r")]
    assert main(argv) == EXIT_USAGE
    assert said in capsys.readouterr().err
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_groupings_given_for_a_score_file_are_refused(small_scores, tmp_path, capsys):
    """``-p groupings`` regroups the built-in VoxCeleb scores; given with a file of one's
    own it was dropped without a word, and recorded in the manifest as if used."""
    from audit.cli import GROUPINGS_BUILT_IN
    from audit.exceptions import EXIT_USAGE

    argv = ["scores", str(small_scores), "-p", "groupings", '[["gender"]]']
    assert main([*argv, "--reports-dir", str(tmp_path / "r")]) == EXIT_USAGE
    assert capsys.readouterr().err.endswith(f"error: {GROUPINGS_BUILT_IN}\n")


@pytest.mark.parametrize(("given", "said"), [("[]", "[]"), ('["F", 5]', "['F', 5]")])
def test_a_json_list_no_choice_accepts_is_refused_as_the_list(
    given, said, cross_file, tmp_path, capsys
):
    """``-p heatmap_algorithms '[]'`` was taken as the one algorithm named ``[]`` (the text,
    once no reading of it was accepted, read again as comma-separated names) and failed in
    the notebook: refused before any work, as the list it is."""
    from audit.exceptions import EXIT_USAGE
    from audit.validation import PARAMETERS

    argv = ["report", str(cross_file), "-p", "heatmap_algorithms", given]
    assert main([*argv, "--reports-dir", str(tmp_path / "r")]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert (
        f"parameter heatmap_algorithms: expected a non-empty list of names or none, got {said}\n"
        in err
    )
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())
    assert PARAMETERS["heatmap_algorithms"].constraint.parse(given) == json.loads(given)
    assert PARAMETERS["heatmap_algorithms"].constraint.parse("a,b") == ["a", "b"]


def test_counts_asked_of_a_table_without_them_are_refused_before_any_work(
    annex15_file, tmp_path, capsys
):
    """``-p uncertainty_method counts`` on Annex 15 (no comparison counts) ran the FFMC
    notebook to its uncertainty cell, then advised ``counts=``, an argument of the Python
    function only; it is refused before any notebook, saying what to add to the table."""
    from audit.exceptions import EXIT_INPUT
    from audit.uncertainty.checks import NO_COUNTS

    argv = ["report", str(annex15_file), "-p", "uncertainty_method", "counts"]
    assert main([*argv, "--reports-dir", str(tmp_path / "r")]) == EXIT_INPUT
    said = NO_COUNTS.format(column="n_mated", kind="mated")
    assert capsys.readouterr().err == f"audit: error: {annex15_file}: {said}\n"
    assert "(add the columns n_mated and n_nonmated to the table, or, from Python," in said
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_an_algorithm_the_cross_group_table_lacks_is_refused_before_any_work(
    cross_file, tmp_path, capsys
):
    """``-p heatmap_algorithms nope`` failed in the cross-group notebook (exit 1, after the
    FFMC and Pareto notebooks had run); it is refused with the names the table holds."""
    from audit.analysis.crossgroup import UNKNOWN_ALGORITHMS
    from audit.exceptions import EXIT_USAGE

    argv = ["report", str(cross_file), "-p", "heatmap_algorithms", "a,nope"]
    assert main([*argv, "--reports-dir", str(tmp_path / "r")]) == EXIT_USAGE
    said = UNKNOWN_ALGORITHMS.format(names=["nope"], known=["a", "b", "c"])
    assert capsys.readouterr().err.endswith(f"audit report: error: {said}\n")
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_a_cross_group_parameter_on_a_table_of_one_group_per_row_says_where_it_belongs(
    small_table, tmp_path, capsys
):
    """``-p heatmap_algorithms`` on a table of one group per row was refused as a
    parameter the FFMC and Pareto notebooks do not take, after a list of their 32: it is
    refused as the cross-group notebook's, which this table does not run, before any
    work."""
    from audit.cli import CROSS_GROUP_ONLY
    from audit.exceptions import EXIT_USAGE

    argv = ["report", str(small_table), "-p", "heatmap_algorithms", "alg-0"]
    assert main([*argv, "--reports-dir", str(tmp_path / "r")]) == EXIT_USAGE
    said = CROSS_GROUP_ONLY.format(key="heatmap_algorithms", source=small_table)
    assert capsys.readouterr().err.endswith(f"audit report: error: {said}\n")
    assert "one group per row" in said and "group_1 and group_2" in said
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())


def test_a_line_break_in_a_file_name_stays_on_its_line(small_table, tmp_path, monkeypatch, capsys):
    """A file or folder name holding a line break (a name may hold any character but
    ``/``) is written ``\\n`` where the command line names it, as any control character
    is: it split the message, the rest of the name passing for a line of its own."""
    from audit.report import runner
    from audit.report.text import one_line

    folder = tmp_path / "new\nline"
    folder.mkdir()
    bad = folder / "rates.csv"
    bad.write_text("Algorithm,FNMR.F,FMR.F\na,0.1,x\n")
    assert main(["check", str(bad)]) == EXIT_INPUT
    said = f"audit: error: {one_line(bad)}, line 2, column 'FMR.F': 'x' is not a number\n"
    assert capsys.readouterr().err == said
    assert main(["check", str(folder / "missing.csv")]) == EXIT_INPUT
    err = capsys.readouterr().err
    assert err.startswith(f"audit: error: {one_line(folder / 'missing.csv')}: cannot be read")
    assert err.count("\n") == 1
    # the report's two lines, its folder on each (the notebooks stood in for)
    monkeypatch.setattr(
        runner, "execute", lambda name, output, parameters, **k: output.write_text("{}") or output
    )
    monkeypatch.setattr(runner, "export_html", lambda notebook, page: page.write_text("page"))
    argv = [
        "pareto",
        str(small_table),
        "--name",
        "x",
        "--reports-dir",
        str(folder),
        "--no-progress",
    ]
    assert main(argv) == 0
    report = one_line(folder / "x")
    assert capsys.readouterr().out == f"report written to {report}\nopen {report}/index.html\n"


def test_a_loop_of_links_on_the_way_to_the_input_is_refused_as_input(tmp_path, capsys):
    """A file, or a folder on the way to it, that is a link leading back to itself is
    the input's fault (status 3), said as such: it was said as a bug of audit's (status
    70, pathlib's ``RuntimeError``)."""
    from audit.cli import LINK_LOOP

    loop = tmp_path / "loop.csv"
    loop.symlink_to(loop)
    folder = tmp_path / "folder"
    folder.symlink_to(folder)
    pareto = ["pareto", str(loop), "--reports-dir", str(tmp_path / "r")]
    for argv in (["check", str(loop)], pareto, ["check", str(folder / "x.csv")]):
        assert main(argv) == EXIT_INPUT
        err = capsys.readouterr().err
        assert err.endswith(f": {LINK_LOOP}\n") and err.count("\n") == 1, err
        assert err.startswith(f"audit: error: {tmp_path}/")


def test_a_file_whose_name_holds_glob_characters_is_read_as_named(small_scores, tmp_path):
    """A file named ``run[1].csv`` is that file, not a glob matching ``run1.csv``: its
    scores are read whole, as a CSV, and the report is named after it. It was read as a
    glob of Parquet files (``no Parquet file matches``), its report named after its
    folder; a glob that names no file stays one."""
    import argparse

    import pandas as pd

    from audit.cli import _report_name
    from audit.report.streamed import streams
    from audit.scores import read_scores
    from audit.scores.streaming import parquet_files

    named = tmp_path / "run[1].csv"
    named.write_bytes(small_scores.read_bytes())
    assert streams(str(named), "4GB", None) is False
    expected = read_scores(small_scores, higher_is_match=False)
    pd.testing.assert_frame_equal(read_scores(named, higher_is_match=False), expected)
    args = argparse.Namespace(name=None, command="pareto")
    assert _report_name(args, str(named)) == "run[1]-pareto"
    parquet = tmp_path / "part[1].parquet"
    pd.read_csv(small_scores).to_parquet(parquet)
    assert parquet_files(str(parquet)) == [str(parquet)]
    assert streams(str(tmp_path / "part[0-9].parquet"), "4GB", None) is True
    assert _report_name(args, str(tmp_path / "part[0-9].parquet")) == f"{tmp_path.name}-pareto"


def test_scores_leave_out_the_columns_ignore_columns_names(tmp_path, capsys):
    """A score file with a column audit does not read (a comparison id) is refused, naming
    the option that leaves it out, which the API's ``ignore`` had and the command line
    lacked; left out, it changes nothing, read whole (in the notebook) or streamed, and is
    recorded. A name that is not a column is refused, as --ignore-columns is for rates."""
    import numpy as np
    import pandas as pd

    from audit.scores import rates_at_fmr, read_scores
    from audit.tables import scores as SR

    rng = np.random.default_rng(4)
    frame = pd.DataFrame(
        {"algorithm": rng.choice(["a", "b"], 1200), "score": rng.normal(size=1200)}
        | {"mated": rng.random(1200) < 0.3, "group": rng.choice(["F", "M"], 1200)}
    )
    frame.loc[frame["mated"], "score"] += 2
    expected = rates_at_fmr(read_scores(frame), 0.01)
    given = frame.assign(comparison_id=[f"c{i}" for i in range(len(frame))])
    path, folder = tmp_path / "ids.csv", tmp_path / "run"
    given.to_csv(path, index=False)
    folder.mkdir()
    given.to_parquet(folder / "ids.parquet")
    common = ["--reports-dir", str(tmp_path / "r"), "--no-progress", "--target-fmr", "0.01"]
    assert main(["scores", str(path), *common]) == EXIT_INPUT
    said = SR.UNKNOWN_COLUMNS.format(source=path, columns=["comparison_id"])
    assert capsys.readouterr().err == f"audit: error: {said}\n" and "--ignore-columns" in said
    whole = ["-p", "bootstrap_replicates", "0", "-p", "sweep_points", "3"]
    for source in (path, folder):
        argv = ["scores", str(source), *common, "--ignore-columns", "comparison_id"]
        assert main(argv + (whole if source == path else [])) == 0
        report = tmp_path / "r" / source.stem
        rates_read = pd.read_csv(report / "tables" / "rates_at_fmr_0.01_group.csv")
        np.testing.assert_allclose(rates_read["fnmr"], expected["fnmr"], rtol=1e-9)
        np.testing.assert_allclose(rates_read["fmr"], expected["fmr"], rtol=1e-9)
        manifest = json.loads((report / "manifest.json").read_text())
        assert manifest["parameters"]["ignore"] == ["comparison_id"]
    for source, named in ((path, path), (folder, folder)):
        capsys.readouterr()
        argv = ["scores", str(source), *common, "--ignore-columns", "comparison,notes"]
        assert main([*argv, "--name", "typo"]) == EXIT_INPUT
        columns = [*frame.columns, "comparison_id"]
        said = SR.IGNORED_MISSING.format(source=named, column="comparison", columns=columns)
        assert capsys.readouterr().err == f"audit: error: {said}\n"


@pytest.mark.parametrize(
    ("command", "option", "parameter", "fault"),
    [
        (["pareto"], ["--replicates", "0"], "n_replicates", "expected a whole number"),
        (["scores", "--distance"], ["--alpha", "2"], "alpha", "expected a number in [0, 1]"),
        (["check"], ["--columns", "foo=Algorithm"], "columns", "'foo' (given for the table's"),
        (["report"], ["--input-copy", "sometimes"], "input_copy", "expected one of 'auto'"),
        (["scores"], ["--memory=0"], "memory", "expected a positive size such as 4GB"),
    ],
)
def test_a_refused_option_is_named_as_the_user_typed_it(
    small_table, small_scores, capsys, command, option, parameter, fault
):
    """An option refused by the check of the parameter it sets is named as given, not as
    the parameter (``--replicates``, not ``n_replicates``); ``-p`` names the parameter."""
    data = small_scores if command[0] == "scores" else small_table
    argv = [command[0], str(data), *command[1:]]
    assert main([*argv, *option]) == 2
    said = capsys.readouterr().err.splitlines()[-1]
    typed = option[0].partition("=")[0]
    assert said.startswith(f"audit {command[0]}: error: {typed}: {fault}"), said
    if parameter not in ("columns", "input_copy", "memory"):  # (options a -p does not set)
        assert main([*argv, "-p", parameter, option[1]]) == 2
        said = capsys.readouterr().err.splitlines()[-1]
        assert said.startswith(f"audit {command[0]}: error: parameter {parameter}: {fault}"), said


def test_a_name_that_is_not_utf8_is_refused_before_any_work(tmp_path, small_table, capsys):
    """A file or folder whose name's bytes are not UTF-8 reached the notebook, which
    failed writing it (UnicodeEncodeError, two tracebacks, status 1)."""
    import os
    import shutil

    name = os.fsdecode(b"r\xffa.csv")
    try:
        shutil.copy(small_table, tmp_path / name)
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system takes no name that is not UTF-8")
    reports = ["--reports-dir", str(tmp_path / "r"), "--no-progress"]
    with pytest.raises(SystemExit) as stop:  # (argparse's refusal of an argument)
        main(["ffmc", str(tmp_path / name), *reports])
    assert stop.value.code == 2
    said = f"{tmp_path}/r\\xffa.csv: the name is not UTF-8 text (byte 0xff); rename it"
    assert capsys.readouterr().err.splitlines()[-1] == f"audit ffmc: error: argument DATA: {said}"
    folder = os.fsdecode(os.fsencode(str(tmp_path)) + b"/r\xfe")
    with pytest.raises(SystemExit) as stop:
        main(["ffmc", str(small_table), "--reports-dir", folder, "--no-progress"])
    assert stop.value.code == 2 and "argument --reports-dir: " in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == [name]
