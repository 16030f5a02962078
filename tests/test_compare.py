"""The cross-dataset audit (audit.analysis.compare, audit compare): matching by name with
near misses named, what two tables are compared on, rank agreement across datasets by hand,
the verdict summary and what holds on hand-made verdicts, the refusals of the command line;
the notebook on small files and `audit compare annex15 frvt11` offline (slow)."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from test_frontpage import CHROMIUM, NO_CHROMIUM, _rows, _section, _text, _widths

from audit import cli
from audit.analysis import compare
from audit.analysis.compare import (
    FEW_GROUPS,
    IN_BOTH,
    PAIRS_ACROSS,
    SAME_LABEL,
    UNMATCHED,
    PairComparison,
    comparable_tables,
    compare_pair,
    dataset_labels,
    holding,
    holding_sentence,
    match_algorithms,
    measure_values,
    read_datasets,
    verdict_summary,
)
from audit.exceptions import ParameterError, UnmatchedAlgorithmsWarning, UsageError
from audit.measures.onesided import NOT_APPLICABLE
from audit.measures.registry import evaluate
from audit.report import runner
from audit.report.comparepage import compare_page, verdict_lines
from audit.tables.rates import read_rates

pytestmark = pytest.mark.usefixtures("shared_server")  # one server for its reports

# ------------------------------------------------------------------ matching by name


def test_names_match_exactly_and_near_misses_are_named_not_matched():
    got = match_algorithms(
        ["a-1", "B-1", "c\u22121", " d-1", "\uff45-1", "f-1"],
        ["a-1", "b-1", "c-1", "d-1", "e-1", "g-1"],
        ("one", "two"),
    )
    rows = got.values.tolist()
    assert rows == [
        ["a-1", IN_BOTH, "", ""],
        ["B-1", "only in one", "b-1", "case"],
        ["c\u22121", "only in one", "c-1", "the kind of dash"],
        [" d-1", "only in one", "d-1", "surrounding spaces"],
        ["\uff45-1", "only in one", "e-1", "Unicode normalisation"],
        ["f-1", "only in one", "", ""],
        ["b-1", "only in two", "B-1", "case"],
        ["c-1", "only in two", "c\u22121", "the kind of dash"],
        ["d-1", "only in two", " d-1", "surrounding spaces"],
        ["e-1", "only in two", "\uff45-1", "Unicode normalisation"],
        ["g-1", "only in two", "", ""],
    ]


def test_annex15_and_frvt11_share_83_algorithms_by_exact_name(annex15, frvt11):
    got = match_algorithms(
        pd.unique(annex15["algorithm"]), pd.unique(frvt11["algorithm"]), ("annex15", "frvt11")
    )
    assert got["status"].value_counts().to_dict() == {
        "only in frvt11": 157,
        IN_BOTH: 83,
        "only in annex15": 43,
    }
    assert (got["near"] == "").all()  # FRVT 1:1's minus-sign names have no Annex 15 twin


# ------------------------------------------------------------------ small tables


def _two_sided(ratios, names=("a", "b", "c", "z")):
    """Groups F, M, X; FMR of F over M given by ``ratios``, FNMR alike."""
    n = len(ratios)
    return read_rates(
        pd.DataFrame(
            {
                "Algorithm": list(names[:n]),
                "FMR.F": [1e-4 * r for r in ratios],
                "FMR.M": [1e-4] * n,
                "FMR.X": [3e-4] * n,
                "FNMR.F": [0.01 * (1 + i) for i in range(n)],
                "FNMR.M": [0.02] * n,
                "FNMR.X": [0.03] * n,
            }
        )
    )


def _fmr_only(ratios, names=("a", "b", "c", "y")):
    n = len(ratios)
    return read_rates(
        pd.DataFrame(
            {
                "Algorithm": list(names[:n]),
                "FMR.F": [1e-3 * r for r in ratios],
                "FMR.M": [1e-3] * n,
            }
        )
    )


def test_two_tables_are_compared_on_their_shared_rates_and_groups():
    first, second, what = comparable_tables(_two_sided([2, 3, 4]), _fmr_only([1, 2]))
    assert what == "FMR of F, M"
    assert list(first.columns) == ["algorithm", "group", "fmr"]
    assert list(pd.unique(first["group"])) == ["F", "M"] == list(pd.unique(second["group"]))
    first, second, what = comparable_tables(
        _two_sided([2, 3, 4]), _fmr_only([1, 2]), shared_groups=False
    )
    assert what == "FMR of each one's groups"
    assert list(pd.unique(first["group"])) == ["F", "M", "X"]


def test_tables_sharing_one_group_are_not_compared():
    other = read_rates(pd.DataFrame({"Algorithm": ["a"], "FMR.F": [1e-4], "FMR.Q": [2e-4]}))
    base = _fmr_only([1, 2])
    with pytest.raises(ParameterError) as error:
        comparable_tables(base, other)
    assert str(error.value) == FEW_GROUPS.format(
        first="<DataFrame>", second="<DataFrame>", count=1, groups="F"
    )


def test_a_measures_ranks_across_two_datasets_by_hand():
    """Max/min FMR over F and M is the F/M ratio here: 2, 3, 4 on the first table and 4, 3,
    2 on the second for a, b, c: the reverse order, tau-b = rho = -1."""
    first, second = _two_sided([2, 3, 4]), _fmr_only([4, 3, 2, 5])
    with pytest.warns(UnmatchedAlgorithmsWarning) as caught:
        pair = compare_pair(
            ("one", first), ("two", second), ["nist_max_min_fmr", "std_fnmr"], n_replicates=50
        )
    assert str(caught[0].message) == UNMATCHED.format(
        first="one", second="two", both=3, only_first=0, only_second=1, near=""
    )
    # said as a sentence (the terminal's and the front page's), the labels as written:
    # "One and two share ..." made the label one a One
    from audit.report.notices import sentence

    assert sentence(caught[0].message).startswith("Datasets one and two share 3 algorithms")
    assert pair.shared == ["a", "b", "c"]
    row = pair.agreement.set_index("measure").loc["nist_max_min_fmr"]
    assert row["kendall"] == pytest.approx(-1.0) and row["spearman"] == pytest.approx(-1.0)
    assert row["n"] == 3
    ranks = pair.ranks[pair.ranks["measure"] == "nist_max_min_fmr"]
    assert ranks[["algorithm", "rank_first", "rank_second"]].values.tolist() == [
        ["a", 1.0, 3.0],
        ["b", 2.0, 2.0],
        ["c", 3.0, 1.0],
    ]
    assert list(pair.not_compared) == ["std_fnmr"]
    assert "needs FNMR, which the table does not have" in pair.not_compared["std_fnmr"]


def test_cross_group_measures_are_not_compared_across_datasets(frvt11):
    pair = compare_pair(("a", frvt11), ("b", frvt11), ["cell_gini"], n_replicates=0)
    assert pair.not_compared == {"cell_gini": PAIRS_ACROSS}


def test_measure_values_are_oriented_so_that_higher_is_less_fair():
    table = _two_sided([2, 3, 4])
    values = measure_values(table, ["fdr", "garbe"], alpha=0.5)
    assert values.attrs["negated"] == ["fdr"]
    fdr = evaluate(table, "fdr", alpha=0.5)["value"]
    assert values["fdr"].tolist() == pytest.approx((-fdr).tolist())


def test_undefined_values_enter_no_ranking():
    table = read_rates(
        pd.DataFrame(
            {"Algorithm": ["a", "b", "c"], "FMR.F": [1e-4, 0.0, 2e-4], "FMR.M": [1e-4] * 3}
        )
    )
    values = measure_values(table, ["nist_max_min_fmr"])
    assert np.isnan(values.loc["b", "nist_max_min_fmr"])
    assert values.attrs["undefined"] == {"nist_max_min_fmr": 1}


def test_labels_and_their_refusals(tmp_path):
    assert dataset_labels(["annex15", str(tmp_path / "x.csv")]) == ["annex15", "x"]
    with pytest.raises(ParameterError) as error:
        dataset_labels([str(tmp_path / "a" / "t.csv"), str(tmp_path / "b" / "t.csv")])
    assert str(error.value) == SAME_LABEL.format(
        label="t", first=str(tmp_path / "a" / "t.csv"), second=str(tmp_path / "b" / "t.csv")
    )
    with pytest.raises(ParameterError) as error:
        dataset_labels(["a", "b"], ["one"])
    assert str(error.value) == (
        "parameter data_labels: expected one label per dataset (2), each different, got ['one']"
    )
    with pytest.raises(ParameterError) as error:
        read_datasets(["annex15"])
    assert str(error.value) == (
        "parameter data_paths: expected a list of at least 2 names, got ['annex15']"
    )


def test_reading_options_apply_to_files_not_to_built_in_datasets(tmp_path, frvt11):
    path = tmp_path / "percent.csv"
    pd.DataFrame({"Algorithm": ["a"], "FMR.F": [1.0], "FMR.M": [2.0]}).to_csv(path, index=False)
    tables = read_datasets(["frvt11", str(path)], units="percent")
    assert tables["percent"]["fmr"].tolist() == [0.01, 0.02]
    assert tables["frvt11"]["fmr"].tolist() == frvt11["fmr"].tolist()  # as published


def test_accuracy_keys_must_be_labels():
    with pytest.raises(ParameterError) as error:
        compare.check_accuracy_keys(["a", "b"], {"c": "x.csv"}, {"c": "col"})
    assert str(error.value) == (
        "parameter accuracy_sources: expected keys among the dataset labels ['a', 'b'], "
        "got {'c': 'x.csv'}"
    )


# ------------------------------------------------------------------ verdicts and what holds


def _matrix():
    rows = []

    def add(dataset, measure, verdicts, agreement=1.0, status="computed"):
        for criterion, passed in zip(("FFMC.1", "FFMC.2", "FFMC.3"), verdicts, strict=True):
            rows.append(
                {
                    "dataset": dataset,
                    "measure": measure,
                    "label": measure.upper(),
                    "criterion": criterion,
                    "status": status,
                    "note": "",
                    "passed": passed,
                    "evidence": "",
                    "agreement": agreement if passed is not None else np.nan,
                }
            )

    add("d1", "m1", [True, True, False])
    add("d2", "m1", [None, True, False], agreement=np.nan)
    add("d1", "m2", [True, True, True])
    add("d2", "m2", [None, False, True], agreement=np.nan)
    add("d1", "m3", [None, True, True], agreement=0.8)
    add("d2", "m3", [None, True, True], agreement=np.nan)
    add("d1", "m4", [None, True, True])
    add("d2", "m4", [None, None, None], status="not applicable")
    add("d1", "m5", [None, True, True])
    add("d2", "m5", [None, True, True], agreement=np.nan)
    frame = pd.DataFrame(rows)
    frame["passed"] = frame["passed"].astype("boolean")
    return frame


def test_verdict_summary_by_hand():
    summary = verdict_summary(_matrix()).set_index("measure")
    assert summary["verdicts_hold"].to_dict() == {
        "m1": True,
        "m2": False,
        "m3": False,
        "m4": False,
        "m5": True,
    }
    assert summary.loc["m1", "compared"] == "FFMC.2, FFMC.3"
    assert summary.loc["m2", "differs"] == "FFMC.2: pass on d1, FAIL on d2"
    assert summary.loc["m3", "shaky"] == "d1 FFMC.2 (80%), d1 FFMC.3 (80%)"
    assert summary.loc["m4", "applies"] == "d1" and not summary.loc["m4", "everywhere"]


def _pair(rows):
    agreement = pd.DataFrame(
        rows, columns=["measure", "label", "n", "kendall", "kendall_low", "kendall_high"]
    )
    for column in ("spearman", "spearman_low", "spearman_high"):
        agreement[column] = np.nan
    agreement.attrs["level"] = 0.95
    matched = pd.DataFrame(
        {"algorithm": list("abcde"), "status": IN_BOTH, "near": "", "differs": ""}
    )
    return PairComparison("d1", "d2", "FMR of F, M", matched, agreement, pd.DataFrame())


def test_what_holds_and_the_sentence_by_hand():
    pair = _pair(
        [
            ("m1", "M1", 5, 0.6, 0.2, 0.9),
            ("m2", "M2", 5, 0.6, 0.2, 0.9),
            ("m3", "M3", 5, 0.6, 0.2, 0.9),
            ("m4", "M4", 5, 0.6, 0.2, 0.9),
            ("m5", "M5", 5, 0.3, -0.1, 0.6),
            ("accuracy", "accuracy (error rate)", 5, 0.9, 0.8, 1.0),
        ]
    )
    held = holding(verdict_summary(_matrix()), [pair])
    assert held.set_index("measure")["holds"].to_dict() == {
        "m1": True,
        "m2": False,
        "m3": False,
        "m4": False,
        "m5": False,
    }
    reasons = held.set_index("measure")["reason"]
    assert reasons["m2"] == "its verdicts differ (FFMC.2: pass on d1, FAIL on d2)"
    assert reasons["m4"] == "it does not apply to every dataset"
    assert reasons["m5"] == (
        "its rankings on d1 and d2 do not agree (Kendall's tau-b 0.30, interval from -0.10)"
    )
    assert held.set_index("measure").loc["m1", "rankings"] == "d1~d2: tau 0.60 [0.20, 0.90]"
    assert holding_sentence(held, ["d1", "d2"], [pair]) == (
        "1 of the 4 measures that apply to both d1 and d2 holds on both, with the same FFMC "
        "verdicts wherever a criterion is judged on more than one dataset (FFMC.2 and FFMC.3) "
        "and rankings of the 5 shared algorithms that agree beyond chance (the 95% interval of "
        "Kendall's tau-b above 0): M1. Across the datasets, Kendall's tau-b of a measure's "
        "rankings runs from 0.30 (M5) to 0.60 (M1), against 0.90 for the algorithms' accuracy."
    )
    stricter = holding(verdict_summary(_matrix()), [pair], min_tau=0.5)
    assert not stricter["holds"].any()
    assert holding_sentence(stricter, ["d1", "d2"], [pair]).startswith(
        "No measure holds on d1 and d2: of the 4 that apply to both, none keeps"
    )
    assert holding_sentence(stricter, ["d1", "d2", "d3"], [pair]).startswith(
        "No measure holds on d1, d2 and d3: of the 4 that apply to all of them, none keeps"
    )
    one = held[held["measure"] == "m1"]
    assert holding_sentence(one, ["d1", "d2"], [pair]).startswith(
        "The one measure that applies to both d1 and d2 holds on both, with the same FFMC"
    )
    # one measure has a value, not a range ("runs from 0.60 (M1) to 0.60 (M1)")
    assert holding_sentence(one, ["d1", "d2"], [pair]).endswith(
        "M1. Across the datasets, Kendall's tau-b of M1's rankings is 0.60, against 0.90 "
        "for the algorithms' accuracy."
    )
    import dataclasses

    third = dataclasses.replace(pair, second="d3", agreement=pair.agreement.copy())
    third.agreement.loc[third.agreement["measure"] == "accuracy", "kendall"] = -0.08
    assert holding_sentence(held, ["d1", "d2", "d3"], [pair, third]).endswith(
        "against 0.90 (d1 and d2), -0.08 (d1 and d3) for the algorithms' accuracy."
    )  # each pair's accuracy named by its pair
    assert holding_sentence(one, ["d1", "d2", "d3"], [pair]).startswith(
        "The one measure that applies to all of d1, d2 and d3 holds on all of them, with"
    )
    two = pd.concat([one, one.assign(measure="m6", label="M6")], ignore_index=True)
    two.attrs = held.attrs
    assert holding_sentence(two, ["d1", "d2"], [pair]).startswith(
        "Both measures that apply to both d1 and d2 hold on both, with the same FFMC"
    )
    three = pd.concat([two, one.assign(measure="m7", label="M7")], ignore_index=True)
    three.attrs = held.attrs
    assert holding_sentence(three, ["d1", "d2"], [pair]).startswith(
        "All 3 measures that apply to both d1 and d2 hold on both, with the same FFMC"
    )


def test_without_replicates_no_ranking_is_judged_and_the_sentence_says_why():
    """``--replicates 0`` draws no interval: the answer said that no measure's rankings
    agree beyond chance (the reason: "interval from nan"), where none was judged."""
    pair = _pair(
        [
            ("m1", "M1", 5, 0.6, np.nan, np.nan),
            ("m5", "M5", 5, 0.3, np.nan, np.nan),
            ("accuracy", "accuracy (error rate)", 5, 0.9, np.nan, np.nan),
        ]
    )
    held = holding(verdict_summary(_matrix()), [pair]).set_index("measure")
    assert not held.loc[["m1", "m5"], "holds"].any()
    assert held.loc["m1", "reason"] == (
        "its rankings on d1 and d2 are not judged: Kendall's tau-b 0.60 has no interval "
        "(no bootstrap replicates)"
    )
    sentence = holding_sentence(held.reset_index(), ["d1", "d2"], [pair])
    assert sentence.startswith(
        "No measure is judged to hold on d1 and d2: the rankings' agreement has no "
        "interval (no bootstrap replicates), and a measure holds only with the same FFMC"
    )
    assert "nan" not in sentence


def test_datasets_sharing_no_algorithm_are_said_to_share_none():
    """Two evaluations of disjoint algorithms: the answer spoke of "the 0 shared
    algorithms"; it says they share none, and that no ranking is compared."""
    pair = _pair([])
    pair.matched["status"] = ["only in d1"] * 3 + ["only in d2"] * 2
    assert pair.shared == []
    held = holding(verdict_summary(_matrix()), [pair])
    sentence = holding_sentence(held, ["d1", "d2"], [pair])
    assert "0 shared" not in sentence
    assert "rankings of the shared algorithms (the datasets share none: no ranking is " in (
        sentence
    )
    assert set(held["rankings"]) == {"d1~d2: not compared"}


def test_too_few_replicates_judge_no_ranking_and_the_sentence_says_how_many_are_needed(
    annex15, frvt11
):
    """``--replicates 10``: a 95% percentile interval read off 10 replicates (its ends
    between the two lowest and the two highest) judged every ranking; with 1 replicate
    the "interval" was one value, which need not hold tau-b itself.  Below 40 there is
    no interval, and the answer says why, on the real tables."""
    from audit.analysis.compare import compare_pair

    measures = ["garbe", "nist_max_min_fmr"]
    with pytest.warns(UnmatchedAlgorithmsWarning, match="share 83 algorithms"):
        few = compare_pair(("a", annex15), ("f", frvt11), measures, n_replicates=10)
    with pytest.warns(UnmatchedAlgorithmsWarning, match="share 83 algorithms"):
        enough = compare_pair(("a", annex15), ("f", frvt11), measures, n_replicates=40)
    assert few.agreement["kendall"].notna().all()
    assert few.agreement[["kendall_low", "kendall_high"]].isna().all().all()
    assert enough.agreement[["kendall_low", "kendall_high"]].notna().all().all()
    pd.testing.assert_series_equal(few.agreement["kendall"], enough.agreement["kendall"])
    held = holding(verdict_summary(_matrix()).assign(measure="garbe"), [few])
    assert held["rankings"].iloc[0] == (
        f"a~f: tau {few.agreement['kendall'].iloc[0]:.2f} (no interval)"
    )
    assert (
        held["reason"]
        .iloc[0]
        .endswith(
            "has no interval (10 bootstrap replicates, where a 95% interval needs at least 40)"
        )
    )
    assert "needs at least 40), and a measure holds only with" in holding_sentence(
        held, ["a", "f"], [few]
    )
    few.agreement.attrs["n_replicates"] = 1
    assert (
        holding(verdict_summary(_matrix()).assign(measure="garbe"), [few])["reason"]
        .iloc[0]
        .endswith("(1 bootstrap replicate, where a 95% interval needs at least 40)")
    )


# ------------------------------------------------------------------ the command line


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("frvt11", cli.ACCURACY_FROM_FORM.format(value="frvt11", labels=["annex15", "frvt11"])),
        (
            "x=frvt11-accuracy:Wild, 1e-4",
            cli.ACCURACY_FROM_DATA.format(
                value="x=frvt11-accuracy:Wild, 1e-4", data="x", labels=["annex15", "frvt11"]
            ),
        ),
        (
            "frvt11=nowhere.csv:Wild, 1e-4",
            cli.ACCURACY_FROM_SOURCE.format(
                value="frvt11=nowhere.csv:Wild, 1e-4", rest="nowhere.csv:Wild, 1e-4"
            ),
        ),
    ],
)
def test_accuracy_from_is_refused_before_any_work(option, message, capsys, tmp_path):
    argv = ["compare", "annex15", "frvt11", "--accuracy-from", option]
    assert cli.main([*argv, "--reports-dir", str(tmp_path / "r")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"audit compare: error: {message}"
    assert not (tmp_path / "r").exists()


def test_accuracy_from_without_a_column_lists_the_columns(capsys, tmp_path, frvt11_accuracy_file):
    argv = ["compare", "annex15", "frvt11", "--accuracy-from", "frvt11=frvt11-accuracy"]
    assert cli.main([*argv, "--reports-dir", str(tmp_path / "r")]) == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith(
        "audit compare: error: --accuracy-from 'frvt11=frvt11-accuracy' names no column; "
        "write frvt11=frvt11-accuracy:COLUMN, COLUMN one of ['VisaMC, 1e-4', "
    )


def test_one_dataset_is_not_a_comparison(capsys, tmp_path):
    assert cli.main(["compare", "annex15", "--reports-dir", str(tmp_path / "r")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "audit compare: error: parameter data_paths: expected a list of at least 2 names, "
        "got ['annex15']"
    )


@pytest.mark.parametrize("dataset", ["annex15", "frvt11"])
def test_a_datasets_audit_is_its_verdicts_and_their_stability_computed_apart(
    dataset, annex15, frvt11
):
    """dataset_audit audits the table once for both the verdicts and their stability:
    the frame of each computed on its own (the stability's own point audit, of the
    measures that apply), on a table with the FNMRs (Annex 15) and one without."""
    from audit import uncertainty
    from audit.measures.onesided import NOT_APPLICABLE
    from audit.measures.registry import applicable_measures

    table = {"annex15": annex15, "frvt11": frvt11}[dataset]
    measures = compare.candidate_measures({"a": annex15, "f": frvt11})
    grid = np.round(np.arange(0.0, 1.0 + 0.05 / 2, 0.05), 10)
    settings = dict(alpha_grid=grid, seed=3, n_random=50)
    found = applicable_measures(table, measures)
    applicable = [str(m) for m in found.loc[found["status"] != NOT_APPLICABLE, "measure"]]
    assert 0 < len(applicable) < len(measures)  # some measures do not apply
    result, how = uncertainty.analyse(table, applicable, n_replicates=8, seed=3, alpha=0.5)
    stability = uncertainty.verdict_stability(table, result, applicable, n_replicates=8, **settings)
    expected = compare.dataset_verdicts(
        table, measures, stability=stability, stability_note=how, **settings
    )
    got = compare.dataset_audit(table, measures, n_replicates=8, alpha=0.5, **settings)
    pd.testing.assert_frame_equal(got, expected)
    assert got.attrs["stability"] == how
    assert got["agreement"].notna().any() and got["agreement"].isna().any()


def test_a_dataset_where_no_measure_applies_is_audited_without_replicates(frvt11):
    got = compare.dataset_audit(frvt11, ["std_fnmr", "ratio_fnmr"], n_random=20)  # no FNMRs
    assert got.attrs["stability"] == "no measure applies"
    assert got["agreement"].isna().all() and got["passed"].isna().all()
    assert set(got["status"]) == {NOT_APPLICABLE}


def test_compare_runs_alone():
    with pytest.raises(UsageError) as error:
        runner.run_report("x", notebooks=("compare", "ffmc"), progress=False)
    assert str(error.value) == runner.COMPARE_ALONE.format(notebooks=["ffmc"])


# ------------------------------------------------------------------ the notebook and the command


def _small_files(tmp_path):
    first = tmp_path / "lab-one.csv"
    second = tmp_path / "lab-two.csv"
    rng = np.random.default_rng(0)
    names = [f"alg-{i}" for i in range(8)]
    frame = pd.DataFrame({"Algorithm": names})
    for group in ("F", "M", "X"):
        frame[f"FMR.{group}"] = rng.uniform(1e-5, 1e-3, len(names)).round(7)
        frame[f"FNMR.{group}"] = rng.uniform(0.001, 0.05, len(names)).round(4)
    frame.to_csv(first, index=False)
    other = pd.DataFrame({"Algorithm": [*names[2:], "ALG-0", "extra-1"]})
    for group in ("F", "M"):
        other[f"FMR.{group}"] = rng.uniform(1e-5, 1e-3, len(other)).round(7)
    other.to_csv(second, index=False)
    return first, second


@pytest.mark.slow
def test_notebook_on_small_files(tmp_path):
    first, second = _small_files(tmp_path)
    folder = runner.run_report(
        "small",
        notebooks=("compare",),
        reports_root=tmp_path / "reports",
        progress=False,
        parameters={
            "data_paths": [str(first), str(second)],
            # the matching, the tables and the pages are under test, not the measures:
            # three (all the measures that apply would take 3 s more)
            "measures": ["garbe", "fdr", "ir"],
            "n_random": 50,
            "verdict_replicates": 5,
            "rank_replicates": 50,
        },
    )
    tables = folder / "tables"
    matched = pd.read_csv(tables / "compare_algorithms.csv", keep_default_na=False)
    assert matched["status"].value_counts().to_dict() == {
        IN_BOTH: 6,
        "only in lab-one": 2,
        "only in lab-two": 2,
    }
    near = matched[matched["near"] != ""]
    assert near[["algorithm", "near", "differs"]].values.tolist() == [
        ["alg-0", "ALG-0", "case"],
        ["ALG-0", "alg-0", "case"],
    ]
    verdicts = pd.read_csv(tables / "compare_verdicts.csv")
    assert set(verdicts["dataset"]) == {"lab-one", "lab-two"}
    cross = pd.read_csv(tables / "compare_cross_agreement.csv")
    assert (cross["n"] == 6).all()
    assert cross["compared_on"].unique().tolist() == ["FMR of F, M"]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert [i["label"] for i in manifest["inputs"]] == ["lab-one", "lab-two"]
    assert [i["copy"] for i in manifest["inputs"]] == ["input/1/lab-one.csv", "input/2/lab-two.csv"]
    page = (folder / "index.html").read_text(encoding="utf-8")
    assert "What holds." in page
    assert "<strong>lab-one</strong>: Read: 8 algorithms" in page  # a file: nothing said it holds
    assert sorted(p.name for p in (folder / "figures").glob("*.png")) == [
        "compare_cross_agreement_lab-one_lab-two.png",
        "compare_rank_agreement_lab-one.png",
        "compare_rank_agreement_lab-two.png",
        "compare_ranks_lab-one_lab-two.png",
    ]


@pytest.fixture(scope="module")
def compared(compare_built):
    """`audit compare annex15 frvt11` from the command line, offline, with FRVT 1:1's
    accuracy table (built once in the run: read it, never change it): its exit status,
    what it printed and the report folder."""
    return compare_built.status, compare_built.printed, compare_built.report


@pytest.mark.slow
def test_compare_annex15_and_frvt11_from_the_command_line(compared):
    status, printed, folder = compared
    assert status == 0
    lines = printed.splitlines()
    assert lines[0].startswith("FFMC verdicts")
    assert re.fullmatch(r"\s+annex15\s+frvt11", lines[1])
    assert lines[2].split() == ["measure", *["FFMC.1", "FFMC.2", "FFMC.3", "stable"] * 2]
    rows = {line[:26].strip(): line[26:].split() for line in lines[3:30]}
    # FRVT 1:1 is FMR only, and its verdicts have their stability too (its FMRs redrawn
    # within their last printed decimal)
    assert rows["GARBE"] == ["pass", "pass", "pass", "100%", "n/a", "pass", "pass", "100%"]
    assert rows["FDR"] == ["FAIL", "pass", "pass", "100%", "n/a", "pass", "pass", "100%"]
    assert rows["Gini of pair FMRs"] == ["n/a", "n/a", "n/a", "-", "n/a", "pass", "pass", "100%"]
    assert rows["STD(FNMR)"] == ["n/a", "pass", "pass", "100%", "n/a", "n/a", "n/a", "-"]
    assert f"report written to {folder}" in printed
    assert printed.startswith("\n".join(verdict_lines(folder)) + "\n")


@pytest.mark.slow
def test_compare_report_records_its_inputs_and_copies_none(compared, annex15_file, frvt11_file):
    _, _, folder = compared
    manifest = json.loads((folder / "manifest.json").read_text())
    inputs = {(i["label"], i["role"]): i for i in manifest["inputs"]}
    assert set(inputs) == {("annex15", "rates"), ("frvt11", "rates"), ("frvt11", "accuracy")}
    assert all(i["copy"].startswith("not copied") for i in inputs.values())
    assert inputs[("frvt11", "rates")]["source"]["dataset"] == "frvt11"
    assert not (folder / "input").exists()


@pytest.mark.slow
def test_the_notebook_page_says_why_each_measure_is_not_compared(compared):
    """The compare notebook listed the measures it did not compare by name alone
    ("Not compared: std_fnmr."); each reason is there now, its measures grouped by it, as
    the table of them and the front page give it."""
    _, _, folder = compared
    lost = pd.read_csv(folder / "tables" / "compare_not_compared.csv")
    assert len(lost) > 1
    page = _text((folder / "compare.html").read_text(encoding="utf-8"))
    said = " ".join(page[page.index("Not compared: ") :].split())
    said = re.sub(r" ([,:])", r"\1", said)  # the names are code: tags, then spaces
    grouped = lost.groupby("reason", sort=False)["measure"].apply(list)
    expected = "; ".join(f"{', '.join(names)}: {reason}" for reason, names in grouped.items())
    assert said.startswith(f"Not compared: {expected}.")


@pytest.mark.slow
def test_compare_front_page(compared):
    _, _, folder = compared
    page = (folder / "index.html").read_text(encoding="utf-8")
    lead = _text(re.search(r'<p class="answer lead">(.*?)</p>', page, re.DOTALL).group(1))
    assert lead.startswith("What holds. ")
    assert "83 shared algorithms" in lead
    rows = _rows(page, "verdicts")
    assert rows[0][:3] == ["Measure", "annex15", "frvt11"]
    garbe = next(r for r in rows if r[0] == "GARBE")
    assert garbe[1:] == ["pass", "pass", "pass", "n/a", "pass", "pass", "holds"]
    agreement = " ".join(_text(_section(page, "agreement")).split())
    assert (
        "with the accuracy (an error rate), the strongest relation is FDR and accuracy "
        "(Total FNMR), 0.80 ["
    ) in agreement
    assert "the less accurate algorithms are the less fair by it." in agreement
    across = _text(_section(page, "across"))
    assert "83 algorithms are in both, matched by name exactly" in across
    assert "43 algorithms only in annex15" in across
    assert "157 algorithms only in frvt11" in across
    datasets = _text(_section(page, "datasets"))
    assert "not copied into the report" in datasets.lower()
    assert (
        "annex15 : FMR and FNMR of 126 face recognition algorithms x 8 sex x race groups on the "
        "Mugshot set, thresholds at an overall FMR of 1e-4 (a rates table). Read: 126 algorithms"
    ) in datasets
    assert page == compare_page(
        folder,
        title="audit report: annex15-vs-frvt11",
        notebooks=[("compare", runner.TITLES["compare"])],
    )


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_compare_front_page_fits_a_laptop_screen(compared, tmp_path):
    _, _, folder = compared
    page = (folder / "index.html").read_text(encoding="utf-8")
    scroll, inner = _widths(page, folder, tmp_path)
    assert scroll <= inner


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason=NO_CHROMIUM)
def test_the_verdicts_of_three_datasets_fit_a_laptop_screen(compared, tmp_path):
    """Three datasets' verdicts (eleven columns) ran past a 1366 px screen: the third
    dataset's FFMC.3 and the Holds column were off it.  A third dataset is made here of
    the second's rows under another name; the table is no wider than its place."""
    import shutil

    _, _, built = compared
    folder = tmp_path / "three"
    shutil.copytree(built, folder)
    for name in ("compare_verdicts", "compare_datasets"):
        path = folder / "tables" / f"{name}.csv"
        frame = pd.read_csv(path)
        again = frame[frame["dataset"] == "frvt11"].assign(dataset="frvt11 again")
        pd.concat([frame, again], ignore_index=True).to_csv(path, index=False)
    page = compare_page(folder, title="three")
    assert page.count("frvt11 again") >= 1
    table = 'document.querySelector("table.verdicts")'
    table, room = _widths(
        page, folder, tmp_path, f"{table}.scrollWidth, {table}.parentElement.clientWidth"
    )
    assert table <= room


# ------------------------------------------------------------------ the figures


HOSTILE = r"vendor-$\frac$ <b>"


def _drawn_as_written(fig, names):
    """What a reader sees of ``fig`` (:mod:`figcheck`): no fault, and every name drawn
    as written in the PNG and in the SVG."""
    from figcheck import faults, record

    data = record(fig)
    assert all(found == [] for found in faults(data, names=names).values()), faults(
        data, names=names
    )
    seen = " ".join(t["seen"] for t in data["texts"])
    assert all(name in seen and name in " ".join(data["svg"]) for name in names)


def test_figures_draw_names_as_written():
    import matplotlib.pyplot as plt

    from audit.analysis.ranks import agreement_matrix
    from audit.report.plots.compare import agreement_heatmap, cross_agreement, rank_scatter

    rng = np.random.default_rng(0)
    values = pd.DataFrame(rng.normal(size=(12, 3)), columns=["a", "b_1^2", "c"])
    pairs = agreement_matrix(values, n_replicates=20)
    ax = agreement_heatmap(pairs, list(values.columns), labels={"a": HOSTILE}, title="t: 50%")
    _drawn_as_written(ax.figure, [HOSTILE, "b_1^2", "t: 50%"])
    plt.close(ax.figure)
    agreement = pd.DataFrame(
        {
            "measure": ["m", "accuracy"],
            "label": [HOSTILE, "accuracy (error rate)"],
            "n": [12, 12],
            **{
                f"{m}{s}": [0.5, 0.8]
                for m in ("kendall", "spearman")
                for s in ("", "_low", "_high")
            },
        }
    )
    ranks = pd.DataFrame(
        {
            "measure": ["m"] * 3 + ["accuracy"] * 3,
            "algorithm": list("abcabc"),
            "rank_first": [1, 2, 3, 1, 2, 3],
            "rank_second": [2, 1, 3, 1, 3, 2],
        }
    )
    fig = rank_scatter(ranks, agreement, "$one$", "two_2")
    _drawn_as_written(fig, [HOSTILE, "$one$", "two_2"])
    # the pair is named in its title, which captions it among the figures of other pairs
    from audit.report.outputs import figure_title

    assert figure_title(fig).startswith("$one$ against two_2: each measure's ranks of the")
    plt.close(fig)
    ax = cross_agreement(agreement, "$one$", "two_2")
    _drawn_as_written(ax.figure, [HOSTILE, "$one$", "two_2"])
    plt.close(ax.figure)


def test_an_interval_beside_its_point_is_drawn_where_it_lies():
    """A bootstrap percentile interval need not hold the point value (small tables): the
    figure draws the interval from its bounds, beside the point, and draws every point."""
    import matplotlib.pyplot as plt

    from audit.report.plots.compare import cross_agreement

    agreement = pd.DataFrame(
        {
            "measure": ["m", "n", "accuracy"],
            "label": ["M", "N", "accuracy (error rate)"],
            "n": [6, 6, 6],
            "kendall": [0.2, 0.5, 0.9],
            "kendall_low": [0.3, np.nan, 0.6],  # above its point; unknown; around it
            "kendall_high": [0.7, np.nan, 1.0],
            "spearman": [0.1, 0.4, 0.95],
            "spearman_low": [-0.5, 0.1, 0.7],
            "spearman_high": [0.05, 0.6, 1.0],  # below its point
        }
    )
    ax = cross_agreement(agreement, "one", "two")
    spans = sorted(
        (round(float(x0), 6), round(float(x1), 6))
        for collection in ax.collections
        for (x0, _), (x1, _) in collection.get_segments()
    )
    assert spans == [(-0.5, 0.05), (0.1, 0.6), (0.3, 0.7), (0.6, 1.0), (0.7, 1.0)]
    points = [line for line in ax.lines if line.get_marker() in ("o", "s")]
    assert [list(p.get_xdata()) for p in points] == [[0.2, 0.5, 0.9], [0.1, 0.4, 0.95]]
    plt.close(ax.figure)


def test_the_heat_map_says_what_its_dots_mark():
    import matplotlib.pyplot as plt

    from audit.analysis.ranks import agreement_matrix
    from audit.report.plots.compare import agreement_heatmap

    x = np.arange(12.0)
    c = [5, 0, 9, 3, 11, 7, 1, 10, 2, 6, 8, 4]  # tau-b 0.06 with x
    values = pd.DataFrame({"a": x, "b": x**2, "c": c})
    pairs = agreement_matrix(values, n_replicates=200)
    unsure = pairs[(pairs["low"] <= 0) & (pairs["high"] >= 0)]
    assert sorted(unsure["second"]) == ["c", "c"]  # a and b rank alike, c unrelated to both
    ax = agreement_heatmap(pairs, ["a", "b", "c"])
    dots = [line for line in ax.lines if line.get_marker() == "o"]
    assert len(dots) == len(unsure)
    # three cells a side leave no room for it in the empty triangle: below the figure
    assert ax.get_legend() is None and len(ax.figure.legends) == 1
    legend = ax.figure.legends[0]
    assert [t.get_text() for t in legend.get_texts()] == ["the 95% interval of tau-b contains 0"]
    plt.close(ax.figure)
    sure = agreement_heatmap(pairs[pairs["first"] == "a"].query("second == 'b'"), ["a", "b"])
    assert sure.get_legend() is None and sure.figure.legends == []
    plt.close(sure.figure)


@pytest.mark.parametrize(
    ("n", "length"), [(2, 24), (3, 65), (5, 24), (8, 35), (12, 24)], ids=lambda v: str(v)
)
def test_the_heat_map_is_laid_out_for_its_names_and_its_number_of_measures(n, length):
    """Few measures or more, short names or long, a title wider than the cells: every text
    on the figure, no two overlapping; square cells of at least 0.42 in (a few measures'
    larger), the legend over no cell and no text, in the empty triangle only where it
    fits in the top row."""
    import itertools

    import matplotlib.pyplot as plt
    from figcheck import faults, record

    from audit.report.outputs import render_figure
    from audit.report.plots.compare import agreement_heatmap

    rng = np.random.default_rng(n)
    variables = [f"m{i}" for i in range(n)]
    long = "demographic parity difference of the false non-match rate across the groups"
    names = {v: f"{i:02d} {long[: length - 3 - (5 * i) % 9]}" for i, v in enumerate(variables)}
    pairs = pd.DataFrame(itertools.combinations(variables, 2), columns=["first", "second"])
    pairs["tau"] = rng.uniform(-1, 1, len(pairs))
    pairs.loc[0, "tau"] = 0.1  # an interval holding 0: a dot, and the legend saying so
    pairs["low"], pairs["high"] = pairs["tau"] - 0.3, pairs["tau"] + 0.3
    pairs.attrs["level"] = 0.95
    title = "annex15: Kendall's tau-b between the measures (126 algorithms)"
    ax = agreement_heatmap(pairs, variables, labels=names, title=title)
    fig = ax.figure
    render_figure(fig)
    data = record(fig, laid_out=True)  # boxes in pixels at 150 dpi, from the bottom left
    assert faults(data, names=list(names.values())) == {k: [] for k in faults(data)}
    assert " ".join(" ".join(t["seen"] for t in data["texts"]).split()).count(title) == 1
    width, height = fig.get_size_inches()
    x, y, w, h = ax.get_position().bounds
    cell = w * width / n
    assert cell >= 0.42 - 1e-9 and h * height == pytest.approx(w * width)
    cells = [  # the drawn (lower-triangle) cells, in pixels
        [150 * v for v in (x * width + j * cell, (y + h) * height - (i + 1) * cell)]
        for i in range(n)
        for j in range(i + 1)
    ]
    cells = [(x0, y0, x0 + 150 * cell, y0 + 150 * cell) for x0, y0 in cells]
    (legend,) = [t for t in data["texts"] if t["seen"].startswith("the 95% interval")]
    others = [t["box"] for t in data["texts"] if t is not legend]

    def overlap(a, b):
        return min(a[2], b[2]) - max(a[0], b[0]) > 0.5 and min(a[3], b[3]) - max(a[1], b[1]) > 0.5

    assert [c for c in cells if overlap(legend["box"], c)] == []
    assert [b for b in others if overlap(legend["box"], b)] == []
    inside = ax.get_legend() is not None
    assert inside == (n >= 8) and len(fig.legends) == (not inside)
    plt.close(fig)


@pytest.mark.slow
def test_readme_shows_the_verdict_matrix_as_the_command_prints_it(compared):
    from pathlib import Path

    _, printed, _ = compared
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Comparing datasets: `audit compare`", 1)[1]
    block = section.split("```\nFFMC verdicts", 1)[1].split("```", 1)[0]
    shown = ("FFMC verdicts" + block).rstrip("\n").splitlines()
    assert shown == printed.splitlines()[: len(shown)]
    answer = " ".join(printed.split("\n\n", 1)[1].split("report written")[0].split())
    assert f"> {answer}" in section


def test_the_page_finds_each_figure_by_its_role_whatever_the_datasets_label(compared, tmp_path):
    """A dataset labelled by a file name with a space or markup (``vendor x v2.csv``) had
    its figures saved under a file name made safe (``vendor_x_v2``) and looked for under
    its label: its sections showed none. The page finds them by the role the notebook
    declared, in the manifest."""
    import shutil

    from audit.report import comparepage
    from audit.report.outputs import figure_paths

    folder = tmp_path / "report"
    shutil.copytree(compared[2].resolve(), folder)
    label = "frvt 11 <i>"
    for table in (folder / "tables").glob("*.csv"):
        table.write_text(table.read_text(encoding="utf-8").replace("frvt11", label))
    manifest = json.loads((folder / "manifest.json").read_text())
    figures = manifest["outputs"]["compare"]["figures"]
    for role in [r for r in figures if "frvt11" in r]:
        relabelled = role.replace("frvt11", label)
        moved = figure_paths(relabelled, folder)[0]
        assert moved.name != f"{relabelled}.png"  # its file is not named by the label
        (folder / figures.pop(role)).rename(moved)
        figures[relabelled] = str(moved.relative_to(folder))
    (folder / "manifest.json").write_text(json.dumps(manifest))
    agreement = {d["dataset"]: d["figure"] for d in comparepage.agreement_data(folder)}
    assert agreement[label] == folder / figures[f"compare_rank_agreement_{label}"]
    assert agreement["annex15"] == folder / figures["compare_rank_agreement_annex15"]
    (pair,) = comparepage.cross_data(folder)
    assert pair["figures"] == [
        folder / figures[f"compare_{kind}_annex15_{label}"] for kind in ("cross_agreement", "ranks")
    ]
    page = comparepage.compare_page(folder, title="t", header=manifest)
    for path in (*agreement.values(), *pair["figures"]):
        assert f'<img src="figures/{path.name}"' in page


def test_pairs_of_measures_without_intervals_are_not_said_to_agree_beyond_chance(tmp_path):
    """With fewer replicates than an interval needs (or none), the front page said that
    every pair of measures ranks the algorithms alike beyond chance, over taus down to
    -0.6 and no interval at all."""
    from audit.report import comparepage

    tables = tmp_path / "tables"
    tables.mkdir()
    columns = ["first", "second", "tau", "low", "high", "n", "n_replicates", "dataset"]
    rows = [
        ["fdr", "nrb_fmr", -0.6, np.nan, np.nan, 10, 10, "a10"],
        ["fdr", "garbe", 0.8, np.nan, np.nan, 10, 10, "a10"],
        ["garbe", "nrb_fmr", 0.1, np.nan, np.nan, 10, 10, "a10"],
    ]
    pd.DataFrame(rows, columns=columns).to_csv(tables / "compare_rank_agreement.csv", index=False)
    (tmp_path / "manifest.json").write_text(json.dumps({"outputs": {}}))
    (d,) = comparepage.agreement_data(tmp_path)
    assert [r["tau"] for r in d["untested"]] == [-0.6, 0.1, 0.8] and not d["unrelated"]
    page = comparepage.agreement_html(tmp_path)
    assert "beyond chance is not judged; their tau runs from -0.60 to 0.80" in page
    assert "ranks the algorithms alike beyond chance" not in page
    # algorithms the measures tie on: no tau at all, "of 0 pairs, every pair ... alike"
    untied = pd.DataFrame(rows, columns=columns).assign(tau=np.nan)
    untied.to_csv(tables / "compare_rank_agreement.csv", index=False)
    page = comparepage.agreement_html(tmp_path)
    assert "no pair of measures has a Kendall's tau-b" in page
    assert "alike beyond chance" not in page


def test_accuracy_from_addresses_a_label_or_path_holding_an_equals_sign(tmp_path, monkeypatch):
    """DATA=SOURCE:COLUMN split at the first '=': a dataset labelled ``x=y`` (a file
    ``x=y.csv``) could not be given an accuracy table ("'x' is none of the datasets
    compared"). DATA is the longest label or given path the value starts with."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "acc.csv").write_text("algorithm,acc\na,0.1\n")
    args = cli.build_parser().parse_args(
        ["compare", "x=y.csv", "x.csv", "--accuracy-from", "x=y=acc.csv:acc"]
    )
    assert cli._accuracy_each(args, ["x=y", "x"]) == ({"x=y": str(tmp_path / "acc.csv")},
                                                      {"x=y": "acc"})  # fmt: skip
    (tmp_path / "y=acc.csv").write_text("algorithm,acc\na,0.2\n")
    args.accuracy_each = ["x.csv=y=acc.csv:acc"]  # the dataset named by its path as given
    assert cli._accuracy_each(args, ["x=y", "x"]) == ({"x": str(tmp_path / "y=acc.csv")},
                                                      {"x": "acc"})  # fmt: skip
    # a DATA that is none of them is still refused, named as far as the first '='
    args.accuracy_each = ["z=acc.csv:acc"]
    with pytest.raises(cli.UsageError) as refused:
        cli._accuracy_each(args, ["x=y", "x"])
    assert str(refused.value) == cli.ACCURACY_FROM_DATA.format(
        value="z=acc.csv:acc", data="z", labels=["x=y", "x"]
    )


def test_accuracy_from_meaning_two_datasets_is_refused(tmp_path, monkeypatch):
    """``p=q=acc.csv:plain`` with datasets ``p`` and ``p=q`` beside files ``acc.csv`` and
    ``q=acc.csv``: either dataset is meant, each with a table that exists; the longest
    label was taken without a word. With one of them only, it is read as that one."""
    monkeypatch.chdir(tmp_path)
    for name in ("acc.csv", "q=acc.csv"):
        (tmp_path / name).write_text("algorithm,plain\na,0.1\n")
    value = "p=q=acc.csv:plain"
    args = cli.build_parser().parse_args(["compare", "p.csv", "p=q.csv", "--accuracy-from", value])
    with pytest.raises(cli.UsageError) as refused:
        cli._accuracy_each(args, ["p", "p=q"])
    assert str(refused.value) == cli.ACCURACY_FROM_WHICH.format(
        value=value,
        readings="dataset 'p=q' (from 'acc.csv') or dataset 'p' (from 'q=acc.csv')",
    )
    args = cli.build_parser().parse_args(["compare", "p.csv", "c.csv", "--accuracy-from", value])
    assert cli._accuracy_each(args, ["p", "c"])[0] == {"p": str(tmp_path / "q=acc.csv")}
    (tmp_path / "q=acc.csv").unlink()  # one reading left: no doubt
    args = cli.build_parser().parse_args(["compare", "p.csv", "p=q.csv", "--accuracy-from", value])
    assert cli._accuracy_each(args, ["p", "p=q"])[0] == {"p=q": str(tmp_path / "acc.csv")}


def test_accuracy_from_with_a_column_the_table_lacks_names_the_option(tmp_path, capsys):
    """compare has no --accuracy-column: the column of an accuracy table is given within
    --accuracy-from, which its refusal names (it said "parameter accuracy_column")."""
    (tmp_path / "acc.csv").write_text("algorithm,plain\na,0.1\n")
    argv = ["compare", "annex15", "frvt11", "--accuracy-from", f"frvt11={tmp_path}/acc.csv:nope"]
    assert cli.main([*argv, "--reports-dir", str(tmp_path / "r")]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"audit compare: error: --accuracy-from: expected a column of {tmp_path}/acc.csv other "
        "than its algorithm column, one of ['plain'], got 'nope'"
    )
    assert not (tmp_path / "r").exists()
