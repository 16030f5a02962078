"""A frontier's accuracy from another table: reading one column of an accuracy table, the
join by algorithm (nothing dropped without a name), the frontier on FRVT 1:1 with NIST's
Mugshot FNMR, and a total-rate axis that leaves a calibrated cell out."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from audit.analysis import accuracy as accuracies
from audit.analysis import pareto
from audit.analysis.accuracy import join_accuracy, overall_rates
from audit.cli import main
from audit.exceptions import ParameterError, RatesError, UnmatchedAlgorithmsWarning, UsageError
from audit.tables.accuracy import read_accuracy
from audit.tables.rates import read_rates

MUGSHOT = "Mugshot, 1e-5"


# --- reading an accuracy column -------------------------------------------------------------


def test_overview_mugshot_column(frvt11_accuracy_file):
    acc = read_accuracy("frvt11-accuracy", MUGSHOT)
    assert len(acc) == 246 and acc.isna().sum() == 5
    # the file's first rows: 3divi-004 0.0097, 3divi-005 0.0078, acer-000 0.9981
    assert acc[["3divi-004", "3divi-005", "acer-000"]].tolist() == [0.0097, 0.0078, 0.9981]
    assert acc.name == MUGSHOT
    assert acc.attrs["dataset"] == "frvt11-accuracy"
    assert acc.attrs["label"] == "FNMR at FMR 1e-5, Mugshot (frvt11-accuracy)"
    by_path = read_accuracy(str(frvt11_accuracy_file), MUGSHOT)
    pd.testing.assert_series_equal(by_path, acc)
    # an empty cell is missing, not 0: 3divi-005 was not run on ChildExp
    assert np.isnan(read_accuracy("frvt11-accuracy", "ChildExp, 1e-2")["3divi-005"])


def test_accuracy_table_refusals(tmp_path):
    path = tmp_path / "acc.csv"
    path.write_text("Name,Mugshot\na,0.01\nb,0.02\na,0.03\n")
    with pytest.raises(RatesError) as error:
        read_accuracy(path, "Mugshot")
    assert str(error.value) == f"{path}, line 4: algorithm 'a' repeats (first at {path}, line 2)"
    path.write_text("Name,Mugshot\na,0.01\nb,fast\n")
    with pytest.raises(RatesError) as error:
        read_accuracy(path, "Mugshot")
    assert str(error.value) == f"{path}, line 3, column 'Mugshot': 'fast' is not a finite number"
    path.write_text("Name,Mugshot\na,0.01\nb,inf\n")
    with pytest.raises(RatesError) as error:
        read_accuracy(path, "Mugshot")
    assert str(error.value) == f"{path}, line 3, column 'Mugshot': 'inf' is not a finite number"
    with pytest.raises(ParameterError) as error:
        read_accuracy(path, "Visa")
    assert str(error.value) == (
        f"parameter accuracy_column: expected a column of {path} other than its algorithm "
        "column, one of ['Mugshot'], got 'Visa'"
    )
    path.write_text("system,Mugshot\na,0.01\n")
    with pytest.raises(RatesError) as error:
        read_accuracy(path, "Mugshot")
    assert str(error.value) == (
        f"{path}: no algorithm column; an accuracy table names its algorithms in a column "
        "called 'algorithm' or 'Algorithm' or 'Name', or in an unnamed first column (its "
        "columns are ['system', 'Mugshot'])"
    )
    with pytest.raises(UsageError):
        read_accuracy("frvt11", MUGSHOT)  # a rates table, not an accuracy table


# --- the join -------------------------------------------------------------------------------


def test_join_names_every_algorithm_of_one_table_only():
    acc = pd.Series([0.01, np.nan, 0.03, 0.04], index=["a", "b", "z", "C"], name="x")
    join = join_accuracy(["a", "b", "c"], acc)
    assert join.to_dict("list") == {
        "algorithm": ["a", "b", "c", "z", "C"],
        "accuracy": [
            0.01,
            pytest.approx(np.nan, nan_ok=True),
            pytest.approx(np.nan, nan_ok=True),
            0.03,
            0.04,
        ],
        "status": [
            "joined",
            "empty accuracy cell",
            "not in the accuracy table",
            "not in the rates table",
            "not in the rates table",
        ],
        "near": ["", "", "C", "", "c"],
    }


def test_join_on_frvt11_and_the_overview(frvt11):
    join = join_accuracy(pd.unique(frvt11["algorithm"]), read_accuracy("frvt11-accuracy", MUGSHOT))
    counts = join["status"].value_counts().to_dict()
    assert counts == {
        "joined": 236,
        "not in the accuracy table": 4,
        "not in the rates table": 10,
    }
    missing = join[join["status"] == accuracies.NOT_IN_ACCURACY]
    assert missing[["algorithm", "near"]].to_dict("list") == {
        "algorithm": [
            "x\u2212laboratory-000",
            "x\u2212laboratory-001",
            "everai-paravision-003",
            "fiberhome\u2212nanjing-002",
        ],
        "near": ["x-laboratory-000", "x-laboratory-001", "", "fiberhome-nanjing-002"],
    }


# --- the frontier ---------------------------------------------------------------------------


def test_frontier_with_accuracy_from_the_overview(frvt11):
    acc = read_accuracy("frvt11-accuracy", MUGSHOT)
    with pytest.warns(UnmatchedAlgorithmsWarning) as caught:
        frame = pareto.frontier_frame(frvt11, "garbe", accuracy=acc, unmatched="exclude")
    assert len(caught) == 1
    assert str(caught[0].message) == (
        f"accuracy 'Mugshot, 1e-5' from {acc.attrs['source']} joined by algorithm name: 236 of "
        "the 240 algorithms of the rates table have it; left out of the frontier: 4 not in the "
        "accuracy table ('x\u2212laboratory-000' ~ 'x-laboratory-000', 'x\u2212laboratory-001' "
        "~ 'x-laboratory-001', 'everai-paravision-003', 'fiberhome\u2212nanjing-002' ~ "
        "'fiberhome-nanjing-002')" + accuracies.NEAR_LEGEND + " and 0 with an empty accuracy "
        "cell; 10 algorithm(s) of the accuracy table are not in the rates table "
        "('ctbcbank-001', 'paravision-003', 'fiberhome-nanjing-002', 'smilart-002', "
        "'tuputech-000' and 5 more)"
    )
    assert frame.attrs["n_candidates"] == 236 and len(frame) == 236
    assert frame.attrs["accuracy_label"] == "FNMR at FMR 1e-5, Mugshot (frvt11-accuracy)"
    assert [r["algorithm"] for r in frame.attrs["unmatched"]][:4] == [
        "x\u2212laboratory-000",
        "x\u2212laboratory-001",
        "everai-paravision-003",
        "fiberhome\u2212nanjing-002",
    ]
    assert len(frame.attrs["unmatched"]) == 14
    members = frame[frame["on_frontier"]].sort_values("accuracy")
    assert members.index.tolist() == [
        "visionlabs-009",
        "sensetime-003",
        "paravision-004",
        "intellifusion-002",
    ]
    np.testing.assert_array_equal(members["accuracy"], [0.0026, 0.0027, 0.0030, 0.0040])
    # an oracle of the frontier: no joined algorithm is at least as good on both and better on one
    points = frame[["accuracy", "fairness"]].to_numpy()
    for name, (a, f) in zip(frame.index, points, strict=True):
        dominated = (
            (points[:, 0] <= a) & (points[:, 1] <= f) & ((points[:, 0] < a) | (points[:, 1] < f))
        ).any()
        assert frame.loc[name, "on_frontier"] == (not dominated)


def test_raise_stays_the_default_for_a_series():
    t = read_rates(
        pd.DataFrame({"Algorithm": ["a", "b"], "FMR.F": [1e-4, 2e-4], "FMR.M": [1e-4, 3e-4]})
    )
    with pytest.raises(ValueError) as error:
        pareto.frontier_frame(t, "garbe", accuracy=pd.Series([0.1], index=["a"], name="x"))
    assert str(error.value) == pareto.ACCURACY_ALGORITHMS.format(missing=["b"], extra=[])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnmatchedAlgorithmsWarning)
        frame = pareto.frontier_frame(
            t, "garbe", accuracy=pd.Series([0.1], index=["a"], name="x"), unmatched="exclude"
        )
    assert frame.index.tolist() == ["a"]
    with pytest.raises(ParameterError) as error:
        pareto.frontier_frame(t, "garbe", accuracy="total_fmr", unmatched="drop")
    assert str(error.value) == "parameter unmatched: expected one of 'raise', 'exclude', got 'drop'"


# --- a calibrated cell left out of total FMR ------------------------------------------------


def test_total_fmr_of_frvt11_leaves_the_calibrated_cell_out(frvt11):
    frame = pareto.frontier_frame(frvt11, "garbe", accuracy="total_fmr")
    wide = frvt11.pivot(index="algorithm", columns="group", values="fmr")
    expected = wide[["M.Black", "F.White", "F.Black"]].mean(axis=1)
    np.testing.assert_allclose(frame["accuracy"], expected.loc[frame.index], rtol=1e-12)
    assert frame.attrs["calibration"] == (
        "Total FMR leaves out M.White: a calibrated cell (FMR 0.001 for 240 of 240 of the "
        "algorithms), not a measurement"
    )
    assert (
        "total_fmr: equal weights over 3 of the 4 groups (each counts 1/3); M.White left out"
        in (frame.attrs["weights"])
    )
    assert frame[frame["on_frontier"]].index.tolist() == ["bresee-000", "intellifusion-002"]
    kept = pareto.frontier_frame(frvt11, "garbe", accuracy="total_fmr", calibration="keep")
    np.testing.assert_allclose(kept["accuracy"], wide.mean(axis=1).loc[kept.index], rtol=1e-12)
    assert kept.attrs["calibration"] == ""
    summary = pareto.summary(pareto.downselect(frvt11, "garbe", accuracy="total_fmr"))
    assert "Total FMR leaves out M.White: a calibrated cell" in summary


def test_annex15_frontier_is_unchanged_by_the_calibration_rule(annex15):
    """No calibrated cell on Annex 15: the GARBE frontier is the README's 6 members."""
    frame = pareto.frontier_frame(annex15, "garbe")
    assert frame.attrs["calibration"] == ""
    assert frame.attrs["n_frontier"] == 6


def test_overall_rates_leave_out_with_counts():
    t = read_rates(
        pd.DataFrame(
            {
                "algorithm": ["a"] * 3,
                "group": ["F", "M", "X"],
                "fmr": [1e-4, 2e-4, 4e-4],
                "fnmr": [0.01, 0.02, 0.04],
                "n_mated": [100, 300, 600],
                "n_nonmated": [10_000, 30_000, 60_000],
            }
        )
    )
    out = overall_rates(t, weights="counts", leave_out={"fmr": ["X"]})
    assert out["total_fmr"].iloc[0] == pytest.approx((1 + 6) / 40_000)
    assert out["total_fnmr"].iloc[0] == pytest.approx((1 + 6 + 24) / 1000)
    assert out.attrs["fmr_weights"].endswith(
        "; total_fmr leaves out X (each other group's weight renormalised)"
    )
    for bad in ({"fmr": ["F", "M", "X"]}, {"fmr": ["Y"]}, {"eer": ["F"]}):
        with pytest.raises(ParameterError) as error:
            overall_rates(t, leave_out=bad)
        assert str(error.value) == (
            "parameter leave_out: expected {rate: [group, ...]} with rate 'fmr' or 'fnmr' and "
            f"groups of the table (['F', 'M', 'X']), keeping at least one group, got {bad!r}"
        )
    with pytest.raises(ParameterError) as error:  # not a mapping: the declaration refuses it
        overall_rates(t, leave_out=["F"])
    assert str(error.value) == "parameter leave_out: expected a mapping or none, got ['F']"


# --- the command line -----------------------------------------------------------------------


def test_cli_accuracy_from_refusals(tmp_path, capsys):
    argv = ["pareto", "frvt11", "--reports-dir", str(tmp_path)]

    def error() -> str:
        """The last line of stderr: the command's usage comes first."""
        return capsys.readouterr().err.splitlines()[-1]

    assert main([*argv, "--accuracy-from", "frvt11-accuracy"]) == 2
    assert error().startswith(
        "audit pareto: error: --accuracy-from 'frvt11-accuracy' needs --accuracy-column, one "
        "of its columns: ['VisaMC, 1e-4', 'VisaMC, rank', 'Visa, 1e-6',"
    )
    assert main([*argv, "--accuracy-column", MUGSHOT]) == 2
    assert error() == (
        "audit pareto: error: --accuracy-column 'Mugshot, 1e-5' names a column of the table "
        "given with --accuracy-from, which is missing"
    )
    both = [*argv, "--accuracy", "total_fmr", "--accuracy-from", "frvt11-accuracy"]
    assert main([*both, "--accuracy-column", MUGSHOT]) == 2
    assert error() == (
        "audit pareto: error: --accuracy total_fmr and --accuracy-from both choose the accuracy "
        "axis; give one"
    )
    assert main([*argv, "--accuracy-from", "frvt11-accuracy", "--accuracy-column", "Mugshot"]) == 2
    assert error().startswith("audit pareto: error: --accuracy-column: expected a column of ")
    assert main(["pareto", "frvt11-accuracy", "--reports-dir", str(tmp_path)]) == 2
    assert "give it to --accuracy-from" in error()
    assert not any(tmp_path.iterdir())


def test_compare_warns_of_the_algorithms_its_accuracy_join_leaves_out(annex15, tmp_path):
    """``audit compare --accuracy-from`` left out the algorithms the accuracy table lacks,
    even all of them, without a word; the frontier's join warned of the same."""
    from audit.analysis import compare

    path = tmp_path / "acc.csv"
    algorithms = list(pd.unique(annex15["algorithm"]))
    pd.DataFrame({"algorithm": algorithms[:3] + ["zzz"], "acc": [0.1, 0.2, 0.3, 0.4]}).to_csv(
        path, index=False
    )
    with pytest.warns(UnmatchedAlgorithmsWarning) as caught:
        values, _, join = compare.dataset_accuracy(annex15, path, "acc", dataset="annex15")
    assert [str(w.message) for w in caught] == [
        accuracies.UNJOINED.format(
            name="acc",
            source=f" from {path}",
            joined=3,
            total=126,
            table="dataset annex15",
            used="its relations with the measures",
            missing=123,
            missing_names=" (" + ", ".join(repr(a) for a in algorithms[3:8]) + " and 118 more)",
            legend="",  # no name of one table is spelled alike in the other
            empty=0,
            empty_names="",
            extra=1,
            extra_names=" ('zzz')",
        )
    ]
    assert values.notna().sum() == 3 and (join["status"] == "joined").sum() == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every algorithm of both joined: nothing to say
        whole = pd.DataFrame({"algorithm": algorithms, "acc": np.linspace(0.1, 0.2, 126)})
        whole.to_csv(path, index=False)
        compare.dataset_accuracy(annex15, path, "acc", dataset="annex15")


@pytest.mark.usefixtures("shared_server")
def test_a_reports_warnings_name_the_users_files_once(tmp_path, capsys):
    """A warning the command said as it read the accuracy table was said again by the
    notebook that read the report's copy, naming the copy (``input/accuracy/acc.csv``,
    a place inside the report); the join's warning named the copy too. A file name
    holding a control character (written out as said) had its warning said twice."""
    from audit.report.text import one_line

    rates = tmp_path / "rates.csv"
    rates.write_text(
        "Algorithm,FMR.F,FNMR.F,FMR.M,FNMR.M\n"
        "a,1e-4,0.011,1.5e-4,0.013\nb,2e-4,0.021,2.5e-4,0.023\nc,3e-4,0.031,3.5e-4,0.033\n"
    )
    accuracy = tmp_path / "acc\x1b.csv"  # a control character, written out as said
    accuracy.write_text("algorithm,acc\na ,0.1\nb,0.2\nc,0.3\n")
    shown = one_line(str(accuracy))
    argv = ["pareto", str(rates), "--accuracy-from", str(accuracy), "--accuracy-column", "acc"]
    argv += ["--reports-dir", str(tmp_path / "r"), "--no-progress", "-q"]
    assert main([*argv, "-p", "n_replicates", "20"]) == 0
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 2 and all(line.startswith("audit: warning: ") for line in said)
    assert said[0].startswith(f"audit: warning: {shown}, column 'algorithm': the label 'a '")
    assert said[1].startswith(f"audit: warning: Accuracy 'acc' from {shown} joined by")
    assert "input/" not in "\n".join(said)
    # the same command again, in the same process: said again
    assert main([*argv, "-p", "n_replicates", "20", "--name", "again"]) == 0
    assert capsys.readouterr().err.splitlines() == said
