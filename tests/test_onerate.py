"""Uncertainty on a table of one error rate: an FMR-only table (FRVT 1:1, Annex 15 without
its FNMRs) and a cross-group table with per-pair counts; the redraws, the measures on them,
the frontier on the axis in use and the stability of the FFMC verdicts that apply."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import CROSS_ALGORITHMS, CROSS_GROUPS, cross_long, cross_matrices

from audit import uncertainty as U
from audit.analysis.accuracy import weighted_total
from audit.analysis.ffmc import ffmc_table, ffmc_verdicts
from audit.analysis.ffmc.zeros import _pair_ffmc3
from audit.analysis.pareto import accuracy_weights, frontier_frame
from audit.exceptions import InputError
from audit.measures.registry import (
    applicable_measures,
    bound_measures,
    evaluate_many,
    get_measure,
)
from audit.tables.crossgroup import CrossGroupRates, cross_group
from audit.tables.layouts import available_rates
from audit.tables.rates import rate_matrices, read_rates
from audit.uncertainty import onerate

# ------------------------------------------------------------------ helpers


def _applicable(table) -> list[str]:
    listed = applicable_measures(table)
    return listed.loc[listed["status"] != "not applicable", "measure"].tolist()


def _fmr_only(annex15_file):
    wide = pd.read_csv(annex15_file)
    return read_rates(wide[[c for c in wide.columns if not c.startswith("FNMR.")]])


@pytest.fixture(scope="module")
def cross_counts():
    """The cross-group fixture with 200,000 impostor comparisons behind every pair."""
    frame = cross_long()
    frame["n_nonmated"] = 200_000
    return read_rates(frame)


@pytest.fixture(scope="module")
def frvt11_result(frvt11):
    return U.analyse(frvt11, _applicable(frvt11), n_replicates=300, seed=3)


# ------------------------------------------------------------------ the redraws


def test_rounding_redraws_stay_within_half_a_unit_of_the_last_decimal():
    values = np.array([[0.0044, 0.0, np.nan], [0.001, 0.9999, 0.5]])
    fixed = np.zeros_like(values, dtype=bool)
    fixed[1, 0] = True
    reps = onerate.rounding_redraws(values, decimals=4, n_replicates=2000, seed=1, fixed=fixed)
    assert reps.shape == (2000, 2, 3)
    assert np.isnan(reps[:, 0, 2]).all()  # a pair not measured stays so
    assert (reps[:, 1, 0] == 0.001).all()  # a calibrated cell is kept as written
    measured = ~np.isnan(values) & ~fixed
    low = np.clip(values - 5e-5, 0, 1)[measured]
    high = np.clip(values + 5e-5, 0, 1)[measured]
    drawn = reps[:, measured]
    assert ((drawn >= low - 1e-15) & (drawn <= high + 1e-15)).all()
    assert (drawn.max(axis=0) - drawn.min(axis=0) > 0.9 * (high - low)).all()  # the whole bin
    again = onerate.rounding_redraws(values, decimals=4, n_replicates=2000, seed=1, fixed=fixed)
    np.testing.assert_array_equal(reps, again)


def test_rounding_redraws_on_a_decade_grid_are_the_transcription_bins():
    values = np.array([[1e-5, 10**-4.9, 1e-4]])
    reps = onerate.rounding_redraws(values, step=0.1, floor=1e-5, n_replicates=3000, seed=2)
    low, high, _, _ = U.transcription_bins(values, np.zeros_like(values), floor=1e-5)
    log = np.log10(reps)
    assert ((log >= low - 1e-12) & (log <= high + 1e-12)).all()
    assert log[:, 0, 0].min() < -5.9  # floored: down to floor_lower, 1e-6


def test_binomial_redraws_are_counts_over_comparisons_with_the_observed_mean():
    values = np.array([[2e-4, 1e-3], [5e-4, np.nan]])
    counts = np.array([[100_000, 50_000], [20_000, 0]])
    reps = onerate.binomial_redraws(values, counts, n_replicates=4000, seed=0)
    assert np.isnan(reps[:, 1, 1]).all()
    k = reps[:, ~np.isnan(values)] * counts[~np.isnan(values)]
    np.testing.assert_allclose(k, np.round(k))
    # the mean of Binomial(n, p) / n is p: within 4 standard errors over 4,000 draws
    se = np.sqrt(values * (1 - values) / counts / 4000)
    mean = reps.mean(axis=0)
    measured = ~np.isnan(values)
    assert (np.abs(mean - values)[measured] < 4 * se[measured]).all()
    with pytest.raises(InputError, match="no mated or no non-mated comparison"):
        onerate.binomial_redraws(values, np.zeros((2, 2)), n_replicates=2)


def test_a_rate_printed_neither_on_a_grid_nor_with_fixed_decimals_gets_a_reason():
    table = read_rates(
        pd.DataFrame({"algorithm": ["a", "a"], "group": ["F", "M"], "fmr": [1 / 3, 1 / 7]})
    )
    result, how = U.analyse(table, ["garbe"], n_replicates=5)
    assert result is None
    assert how == onerate.NO_ONE_RATE.format(
        column="n_nonmated",
        reason=onerate.NOT_PRINTED.format(rate="FMR", decimals=8),
    )
    with pytest.raises(InputError, match="neither on a decade grid"):
        U.analyse(table, ["garbe"], method="transcription", n_replicates=5)
    with pytest.raises(InputError, match="'n_nonmated' column"):
        U.analyse(table, ["garbe"], method="counts", n_replicates=5)


# ------------------------------------------------------------------ FRVT 1:1: FMR only, cross-group


def test_frvt11_redraws_each_pair_within_its_last_decimal_keeping_the_calibrated_cell(
    frvt11, frvt11_result
):
    result, how = frvt11_result
    assert how.startswith("transcription redraw: each measured pair's FMR redrawn uniformly")
    assert "(4 decimals: \N{PLUS-MINUS SIGN}0.00005), the calibrated cell M.White kept" in how
    assert result.params["rates"] == ["fmr"] and result.params["accuracy"] == "total_fmr"
    cross = cross_group(frvt11)
    assert result.pairs.shape == (300, *cross.fmr.shape)
    white = cross.groups.get_loc("M.White")
    assert (result.pairs[:, :, white, white] == 0.001).all()
    measured = cross.measured
    assert np.isnan(result.pairs[:, :, ~measured]).all()
    # the rate measures read the diagonal of the same redraw
    algorithms, groups, _, _ = rate_matrices(frvt11)
    at = cross.groups.get_indexer(groups)
    np.testing.assert_array_equal(result.fmr, np.diagonal(result.pairs, axis1=2, axis2=3)[..., at])
    assert np.isnan(result.fnmr).all()


def test_frvt11_point_values_are_the_tables(frvt11, frvt11_result):
    """Every measure's point value in the intervals is the value the table gives, rate and
    pair measures alike; the FNMR term of a one-term measure is absent."""
    result, _ = frvt11_result
    names = _applicable(frvt11)
    expected = evaluate_many(frvt11, names, zero_division="flag")
    got = result.intervals.merge(expected, on=["measure", "algorithm"], suffixes=("", "_table"))
    assert len(got) == len(expected) == len(names) * 240
    np.testing.assert_allclose(got["value"], got["value_table"], equal_nan=True)
    assert result.intervals.loc[result.intervals["measure"] == "garbe", "fnmr_term"].isna().all()
    assert {"within_cross_ratio", "fmr_asymmetry", "cell_gini"} <= set(result.intervals["measure"])
    inside = got[got["undefined"] == False]  # noqa: E712  (a nullable column)
    assert ((inside["low"] <= inside["high"]) | inside["low"].isna()).all()


def test_frvt11_frontier_is_on_total_fmr_without_the_calibrated_cell(frvt11, frvt11_result):
    result, _ = frvt11_result
    frame = frontier_frame(frvt11, "garbe", accuracy="total_fmr")
    frontier = result.frontier.set_index("algorithm").loc[frame.index]
    np.testing.assert_allclose(frontier["total_fmr"], frame["accuracy"], rtol=1e-12)
    assert frontier["on_frontier"].tolist() == frame["on_frontier"].tolist()
    assert sorted(frontier.index[frontier["frontier_probability"] >= U.ROBUST]) == [
        "bresee-000",
        "intellifusion-002",
    ]
    # the replicate totals leave M.White out, as the point total does
    _, groups, _, _ = rate_matrices(frvt11)
    w = accuracy_weights(frvt11, "total_fmr")
    assert (w[:, groups.get_loc("M.White")] == 0).all()
    np.testing.assert_allclose(weighted_total(result.fmr[0], w), weighted_total(result.fmr, w)[0])


def test_frvt11_verdict_stability_judges_the_criteria_that_apply(frvt11, frvt11_result):
    result, _ = frvt11_result
    names = _applicable(frvt11)
    verdicts = U.verdict_stability(frvt11, result, names, n_replicates=20)
    point = ffmc_table(frvt11, names)
    pd.testing.assert_series_equal(
        verdicts["passed"], point["passed"], check_names=False, check_dtype=False
    )
    judged = verdicts[verdicts["passed"].notna()]
    assert set(judged["criterion"]) == {"FFMC.2", "FFMC.3"}  # FFMC.1 does not apply
    assert {"within_cross_ratio", "fmr_asymmetry", "cell_gini"} <= set(judged["measure"])
    assert judged["agreement"].between(0, 1).all()
    assert verdicts.loc[verdicts["passed"].isna(), "agreement"].isna().all()


def test_verdicts_at_once_are_those_of_each_table(frvt11, cross_counts):
    """ffmc_verdicts on the point arrays of a one-sided table and of a cross-group table gives
    ffmc_table's verdicts; and FFMC.3 of a pairs measure on replicates, at once, is that of
    each replicate's matrices one by one."""
    for table in (frvt11, cross_counts):
        names = _applicable(table)
        measures = bound_measures(table, names)
        _, _, fmr, fnmr = rate_matrices(table)
        at_once = ffmc_verdicts(
            fmr[None],
            fnmr[None],
            measures,
            n_random=200,
            rates=available_rates(table),
            pairs=cross_group(table).fmr[None],
        )[0]
        point = ffmc_table(table, names, n_random=200).set_index(["measure", "criterion"])
        np.testing.assert_array_equal(
            at_once.to_numpy(), point["passed"].astype("float64").to_numpy()
        )
    result, _ = U.analyse(cross_counts, _applicable(cross_counts), n_replicates=6, seed=1)
    cross = cross_group(cross_counts)
    for name in ("within_cross_ratio", "fmr_asymmetry", "cell_gini"):
        at_once = ffmc_verdicts(
            result.fmr, result.fnmr, [name], rates=("fmr",), pairs=result.pairs, n_random=50
        ).loc[(name, "FFMC.3")]
        one_by_one = [
            _pair_ffmc3(
                get_measure(name), CrossGroupRates(cross.algorithms, cross.groups, pairs, None)
            ).passed
            for pairs in result.pairs
        ]
        assert at_once.tolist() == [float(p) for p in one_by_one]


# ------------------------------------------------------------------ a cross-group table with counts


def test_cross_group_counts_redraw_each_pair_binomially(cross_counts):
    result, how = U.analyse(cross_counts, _applicable(cross_counts), n_replicates=400, seed=2)
    assert how.startswith("binomial (parametric) bootstrap: each measured pair's FMR")
    assert result.kind == "parametric"
    pairs = result.pairs
    assert pairs.shape == (400, len(CROSS_ALGORITHMS), len(CROSS_GROUPS), len(CROSS_GROUPS))
    k = pairs * 200_000
    np.testing.assert_allclose(k, np.round(k))
    truth = cross_matrices()
    se = np.sqrt(truth * (1 - truth) / 200_000 / 400)
    assert (np.abs(pairs.mean(axis=0) - truth) <= 4 * se + 1e-12).all()
    # the pair measures have intervals, rankings and a place in the sentences
    cell_gini = result.intervals[result.intervals["measure"] == "cell_gini"]
    assert len(cell_gini) == 3 and (cell_gini["low"] < cell_gini["high"]).all()
    assert "cell_gini" in set(result.ranking_summary["measure"])
    text = U.robustness_summary(result)
    assert "Gini of pair FMRs" in text and "cell_gini" not in text
    # one algorithm on the frontier: the singular
    assert "holds 1 algorithm with the published rates" in text


def test_a_pairs_measure_as_the_frontiers_fairness(cross_counts):
    result, _ = U.analyse(cross_counts, ["cell_gini"], fairness="cell_gini", n_replicates=50)
    frame = frontier_frame(cross_counts, "cell_gini", accuracy="total_fmr")
    frontier = result.frontier.set_index("algorithm").loc[frame.index]
    np.testing.assert_allclose(frontier["value"], frame["fairness"])
    assert frontier["on_frontier"].tolist() == frame["on_frontier"].tolist()


# ------------------------------------------------------------------ Annex 15 without its FNMRs


def test_annex15_fmr_only_redraws_the_fmr_grid_with_its_floor(annex15_file):
    table = _fmr_only(annex15_file)
    names = _applicable(table)
    result, how = U.analyse(table, names, n_replicates=100, seed=0)
    assert how.startswith(
        "transcription redraw: each FMR redrawn uniformly in log10 within its 0.1-decade bin, "
        "those on the 1e-05 floor down to 1e-06"
    )
    assert result.params["accuracy"] == "total_fmr" and "crossing" not in " ".join(
        result.statistics["statistic"]
    )
    assert "garbe.fnmr_term.median" not in set(result.statistics["statistic"])
    verdicts = U.verdict_stability(table, result, names, n_replicates=10)
    assert verdicts.loc[verdicts["passed"].notna(), "agreement"].between(0, 1).all()
    said = U.robustness_sentences(result, verdicts=verdicts)
    assert "The Pareto frontier of GARBE (FMR term alone) and total FMR holds 5 algorithms" in (
        " ".join(s for s in said if isinstance(s, str))
    )


def test_frontier_probability_figure_names_the_axis_and_the_measure_as_computed(frvt11_result):
    """On an FMR-only table the figure's axes are total FMR and the FMR term alone, as the
    Pareto figure and the sentences name them."""
    import matplotlib.pyplot as plt

    from audit.report.plots.uncertainty import plot_frontier_probability

    result, _ = frvt11_result
    assert result.params["fairness"] == "garbe"
    ax = plot_frontier_probability(result.frontier, x="total_fmr")
    try:
        assert ax.get_xlabel().startswith("Total FMR (equal weights; lower is better")
        assert ax.get_ylabel() == "GARBE (FMR term alone), lower is fairer"
    finally:
        plt.close(ax.figure)
