"""The FFMC audit: Howard et al. Table 2 and the numbers behind Figs. 1-3, on Annex 15."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit.analysis import ffmc
from audit.exceptions import UsageError
from audit.measures.contract import ScoreMeasure
from audit.measures.registry import (
    Measure,
    get_measure,
    load_measure_module,
    measure_names,
    register,
    unregister,
)
from audit.validation import REFUSED


@pytest.fixture(scope="module")
def table(annex15):
    return ffmc.ffmc_table(annex15, seed=0)


@pytest.fixture(scope="module")
def fdr1(annex15):
    return ffmc.ffmc1(annex15, "fdr")


@pytest.fixture(scope="module")
def garbe1(annex15):
    return ffmc.ffmc1(annex15, "garbe")


def _row(table, measure, criterion):
    return table[(table["measure"] == measure) & (table["criterion"] == criterion)].iloc[0]


# Howard et al. Table 2 (True = meets the criterion)
TABLE2 = [(m, c, v) for (m, c), v in ffmc.PAPER_TABLE2.items()]


@pytest.mark.parametrize(("measure", "criterion", "expected"), TABLE2)
def test_reproduces_table2(table, measure, criterion, expected):
    row = _row(table, measure, criterion)
    assert bool(row["passed"]) is expected
    assert bool(row["agrees_with_paper"])


def test_table_covers_every_registered_rates_measure(table):
    names = measure_names(inputs="rates") + measure_names(inputs="table")
    assert sorted(table["measure"].unique()) == sorted(names)
    assert len(table) == 3 * len(names)
    # a verdict everywhere but FFMC.1 of the measures of one error rate (no alpha to weigh)
    # and the zero-error-adjusted measures (Annex 15 has no comparison counts)
    counted = table["measure"].str.endswith("_cp")
    assert table.loc[counted, "passed"].isna().all()
    na = table[table["passed"].isna() & ~counted]
    assert set(na["criterion"]) == {"FFMC.1"}
    one_rate = {n for n in names if ffmc.one_term(get_measure(n)) and not n.endswith("_cp")}
    assert set(na["measure"]) == one_rate
    assert {"nrb_fmr", "nrb_fnmr", "std_fmr", "std_fnmr", "ser", "nist_gini_fmr"} <= one_rate
    assert table["evidence"].str.len().min() > 20
    assert table.attrs["seed"] == 0 and len(table.attrs["alpha_grid"]) == 101


def test_same_seed_same_table(annex15):
    a = ffmc.ffmc_table(annex15, ["garbe", "ir"], seed=3, n_random=200)
    b = ffmc.ffmc_table(annex15, ["garbe", "ir"], seed=3, n_random=200)
    pd.testing.assert_frame_equal(a, b)


# --- FFMC.1: Figs. 1D-3D --------------------------------------------------------------


def test_fdr_share_golden_numbers(fdr1):
    # Howard et al. sec. 4.1 / Fig. 1D: the median contribution passes 50% only at alpha 0.99
    by_alpha = fdr1.by_alpha.set_index("alpha")
    assert by_alpha.loc[0.98, "share_median"] == pytest.approx(0.392, abs=5e-4)
    assert by_alpha.loc[0.99, "share_median"] == pytest.approx(0.566, abs=5e-4)
    assert fdr1.summary["crossing_alpha"] == 0.99
    assert not fdr1.passed


def _equal_terms_table():
    """FMR and FNMR spreads equal, so a linear share is exactly alpha: 1/2 at alpha 0.5."""
    from audit.tables.rates import read_rates

    return read_rates(
        pd.DataFrame(
            {
                "algorithm": ["a", "a", "b", "b"],
                "group": ["F", "M"] * 2,
                "fmr": [0.01, 0.03] * 2,
                "fnmr": [0.01, 0.03] * 2,
                "n_mated": [10**6] * 4,
                "n_nonmated": [10**6] * 4,
            }
        )
    )


def test_crossing_means_surpassing_one_half():
    # "does not surpass 50% until alpha is set to 0.99" (sec. 4.1): a share of exactly
    # one half has not crossed yet
    assert ffmc.first_crossing([0.4, 0.5, 0.6], [0.4, 0.5, 0.6]) == 0.6
    assert np.isnan(ffmc.first_crossing([0.4, 0.5], [0.2, 0.5]))
    np.testing.assert_array_equal(
        ffmc.first_crossing([0.4, 0.5, 0.6], [[0.1, 0.6], [0.5, 0.7], [0.9, 0.8]]), [0.6, 0.4]
    )
    result = ffmc.ffmc1(_equal_terms_table(), "fdr")
    assert result.by_alpha.set_index("alpha").loc[0.5, "share_median"] == 0.5
    assert result.summary["crossing_alpha"] == 0.51


def test_garbe_terms_golden_numbers(garbe1):
    # sec. 4.3: median A 0.74, median B 0.33
    assert garbe1.summary["median_fmr_term"] == pytest.approx(0.744, abs=5e-4)
    assert garbe1.summary["median_fnmr_term"] == pytest.approx(0.333, abs=5e-4)
    assert ffmc.CROSSING_WINDOW[0] <= garbe1.summary["crossing_alpha"] <= ffmc.CROSSING_WINDOW[1]
    assert garbe1.summary["monotone"] and garbe1.summary["fraction_monotone"] == 1.0


def test_ffmc1_detail_is_tidy(garbe1):
    assert len(garbe1.detail) == 126 * 101
    assert list(garbe1.detail.columns) == [
        "algorithm",
        "alpha",
        "value",
        "fmr_term",
        "fnmr_term",
        "share",
        "undefined",
    ]
    at_half = garbe1.detail[garbe1.detail["alpha"] == 0.5]
    assert at_half["value"].min() == pytest.approx(0.1645, abs=5e-5)  # sec. 4.3: 0.165-0.618
    assert at_half["value"].max() == pytest.approx(0.6183, abs=5e-5)


@pytest.mark.parametrize(
    ("name", "rate"), [("ser", "FMR"), ("std_fnmr", "FNMR"), ("nrb_fmr", "FMR")]
)
def test_ffmc1_does_not_apply_to_a_measure_of_one_error_rate(annex15, name, rate):
    """One verdict rule: n/a with the reason, on a two-sided table as on a one-sided one."""
    reason = ffmc.FFMC1_ONE_TERM.format(rate=rate)
    with pytest.raises(UsageError) as error:
        ffmc.ffmc1(annex15, name)
    assert str(error.value) == f"FFMC.1 of {name!r}: {reason}"
    row = ffmc.ffmc_table(annex15, [name], n_random=50).set_index("criterion").loc["FFMC.1"]
    assert pd.isna(row["passed"]) and row["evidence"] == reason


def test_bad_alpha_grid(annex15):
    with pytest.raises(ValueError) as error:
        ffmc.ffmc1(annex15, "fdr", alpha_grid=[0.5, 0.2])
    assert str(error.value) == REFUSED.format(
        name="alpha_grid", expected="increasing numbers in [0, 1] or none", value=[0.5, 0.2]
    )


# --- FFMC.2 ---------------------------------------------------------------------------


def test_fdr_practical_range(annex15):
    # sec. 4.1: over 95% of FDR values at alpha 0.5 lie in [0.9, 1]
    result = ffmc.ffmc1(annex15, "fdr", alpha_grid=[0.5])
    values = result.detail["value"]
    assert int(values.between(0.9, 1.0).sum()) == 120


def test_ffmc2_evidence(table):
    fdr = _row(table, "fdr", "FFMC.2")
    assert (fdr["observed_min"], fdr["observed_max"]) == (0.0, 1.0)
    assert fdr["lower_attained"] and fdr["upper_attained"] and fdr["within_bounds"]
    ir = _row(table, "ir", "FFMC.2")
    assert ir["real_min_half"] == pytest.approx(2.40, abs=5e-3)  # sec. 4.2: 2.4 to 26.38
    assert ir["real_max_half"] == pytest.approx(26.38, abs=5e-3)
    assert ir["real_max"] == pytest.approx(63.1, abs=5e-2)  # practical upper limit 63.1 (alpha 1)
    assert ir["observed_max"] > 1e5 and np.isinf(ir["worst"])
    garbe = _row(table, "garbe", "FFMC.2")
    assert (garbe["observed_min"], garbe["observed_max"]) == (0.0, 1.0)
    assert garbe["ideal_at_equal"] == 0.0


def test_a_measure_leaving_its_declared_bounds_fails(annex15):
    m = Measure(
        name="liar",
        label="liar",
        function=get_measure("ir").function,
        higher_is_fairer=False,
        bounds=(1.0, 100.0),
        ideal=1.0,
        fmr_term="A",
        fnmr_term="B",
        share="log",
    )
    result = ffmc.ffmc2(annex15, m, n_random=200)
    assert not result.passed and not result.summary["within_bounds"]
    assert "leave the declared bounds" in result.evidence


# --- FFMC.3 ---------------------------------------------------------------------------


def test_ffmc3_fractions(table):
    ir = _row(table, "ir", "FFMC.3")
    assert ir["finite_one_fnmr_zero"] == 0.0 and ir["finite_one_fmr_zero"] == 0.0
    fdr = _row(table, "fdr", "FFMC.3")
    assert fdr["computed_one_fnmr_zero"] == 1.0 and fdr["computed_all_zero"] == 1.0
    garbe = _row(table, "garbe", "FFMC.3")
    assert garbe["computed_one_fnmr_zero"] == 1.0 and garbe["computed_one_fmr_zero"] == 1.0
    # every group at 0: GARBE is finite only by the convention G = 0, and says so
    assert garbe["finite_all_zero"] == 1.0 and garbe["computed_all_zero"] == 0.0
    assert "only by convention" in garbe["evidence"]


def test_ffmc3_detail(annex15):
    result = ffmc.ffmc3(annex15, "garbe")
    assert list(result.detail["case"]) == list(ffmc.FFMC3_CASES)
    assert result.detail.set_index("case").loc["one_fnmr_zero", "n"] == 126 * 8


# --- any measure ----------------------------------------------------------------------


def test_a_user_measure_goes_through_the_full_audit(annex15, own_measures):
    load_measure_module("tests.user_measures.my_measure")
    out = ffmc.ffmc_table(annex15, ["user_ncv"], n_random=300)
    assert list(out["criterion"]) == list(ffmc.CRITERIA)
    assert out["passed"].notna().all()
    assert out["paper"].isna().all()
    assert bool(_row(out, "user_ncv", "FFMC.2")["passed"])  # declared [0, 1], both ends attained


def test_scores_measures_are_not_applicable(annex15):
    register(
        ScoreMeasure(
            name="scores_only",
            label="S",
            function=get_measure("fdr").function,
            higher_is_fairer=True,
            bounds=(0.0, 1.0),
            ideal=1.0,
            fmr_term="A",
            fnmr_term="B",
        )
    )
    try:
        out = ffmc.ffmc_table(annex15, ["scores_only", "fdr"], n_random=100)
        assert "scores_only" not in set(ffmc.ffmc_table(annex15, n_random=50)["measure"])
    finally:
        unregister("scores_only")
    scores = out[out["measure"] == "scores_only"]
    assert len(scores) == 3 and scores["passed"].isna().all()
    assert scores["evidence"].iloc[0] == ffmc.NOT_RATES.format(name="scores_only", inputs="scores")


# --- panels ---------------------------------------------------------------------------


def test_panels(fdr1, garbe1):
    from audit.report.plots.ffmc import ffmc_panels

    fig = ffmc_panels(
        fdr1.detail, fdr1.by_alpha, label="FDR", crossing=fdr1.summary["crossing_alpha"]
    )
    assert len(fig.axes) == 4
    assert fig.axes[1].get_yscale() == "log"  # FDR's A and B span decades (Fig. 1B)
    fig = ffmc_panels(garbe1.detail, garbe1.by_alpha, label="GARBE")
    assert fig.axes[1].get_yscale() == "linear"  # GARBE's terms share a scale (Fig. 3B)


def test_panel_functions_draw_on_a_given_axes(garbe1):
    import matplotlib.pyplot as plt

    from audit.report.plots import ffmc as panels

    _, ax = plt.subplots()
    assert panels.plot_alpha_share(garbe1.by_alpha, crossing=0.31, ax=ax) is ax
    assert panels.plot_distribution(garbe1.detail, ax=ax) is ax


def test_garbe_crossing_differs_from_the_papers_reading_of_fig3d(garbe1):
    # Howard et al. sec. 4.3 read the mean A contribution passing B "when alpha = 0.4" off
    # Fig. 3D; computed on the same data, the mean share passes 50% at 0.28 and the
    # median at 0.31 (at alpha 0.4 the mean share is already 0.63).
    assert garbe1.summary["crossing_alpha_mean"] == 0.28
    assert garbe1.summary["crossing_alpha"] == 0.31
    assert garbe1.by_alpha.set_index("alpha").loc[0.4, "share_mean"] == pytest.approx(
        0.626, abs=1e-3
    )


def test_report_carries_the_data_quality_audit(annex15):
    report = ffmc.ffmc_report(annex15, ["fdr", "ir", "garbe"], n_random=200)
    assert len(report.table) == 9 and len(report.results) == 9
    assert report.results[("garbe", "FFMC.1")].by_alpha is not None
    floor = report.quality.set_index(["rate", "check"]).loc[("fmr", "floor")]
    assert floor["cells"] == 334 and floor["affects"] == "ir, garbe"
    assert set(report.floor["measure"]) == {"fdr", "ir", "garbe"}


def test_no_measures(annex15):
    with pytest.raises(ValueError) as error:
        ffmc.ffmc_table(annex15, [])
    assert str(error.value).startswith("parameter measures: expected none, a measure, or a non")
    assert str(error.value).endswith(", got []")


@pytest.mark.parametrize(
    ("measures", "fault"),
    [
        (["garbe", "fdr", "garbe"], "'garbe' is named twice"),
        (["fdr", "ir", "fdr", "ir", "ir"], "'fdr' is named twice and 'ir' three times"),
        (["garbe", "gabre", "FDR"], "'gabre' and 'FDR' are not among them"),
    ],
)
def test_a_measure_named_twice_or_by_no_name_is_said_so(annex15, measures, fault):
    """After the 40 names a measure may go by, the refusal says which of those given is
    repeated or unknown; from Python and from the command line alike."""
    with pytest.raises(ValueError) as error:
        ffmc.ffmc_table(annex15, measures)
    assert str(error.value).startswith("parameter measures: expected none, a measure, or a non")
    assert str(error.value).endswith(f", got {measures!r}: {fault}")


def test_the_command_line_says_which_measure_is_named_twice(annex15_file, tmp_path, capsys):
    from audit.cli import main

    argv = ["ffmc", str(annex15_file), "--reports-dir", str(tmp_path / "r")]
    assert main([*argv, "-p", "measures", '["garbe", "fdr", "garbe"]']) == 2
    err = capsys.readouterr().err
    assert err.endswith("or none, got ['garbe', 'fdr', 'garbe']: 'garbe' is named twice\n")
    assert main([*argv, "-p", "measures", "garbe,gabre"]) == 2
    assert capsys.readouterr().err.endswith(
        "or none, got 'garbe,gabre': 'gabre' is not among them\n"
    )
    assert not (tmp_path / "r").exists()


def test_a_single_name_is_accepted(annex15):
    assert len(ffmc.ffmc_table(annex15, "garbe", n_random=100)) == 3


def test_batched_verdicts_are_those_of_each_table(annex15, annex15_matrices):
    """ffmc_verdicts on stacked tables gives what ffmc_table gives each table alone."""
    from audit.uncertainty.summary import replicate_table

    _, _, fmr, fnmr = annex15_matrices
    rng = np.random.default_rng(3)
    fmrs = np.stack([fmr, fmr * rng.uniform(0.5, 2.0, fmr.shape), fmr])
    fnmrs = np.stack([fnmr, fnmr, np.clip(fnmr * rng.uniform(0.0, 3.0, fnmr.shape), 0, 1)])
    fmrs[2][:, 0] = 0.0
    names = ["fdr", "ir", "garbe", "nrb"]
    batched = ffmc.ffmc_verdicts(fmrs, fnmrs, names, n_random=200)
    for i in range(3):
        alone = ffmc.ffmc_table(replicate_table(annex15, fmrs[i], fnmrs[i]), names, n_random=200)
        expected = alone.set_index(["measure", "criterion"])["passed"].astype("float64")
        assert batched[i].tolist() == expected.tolist()
