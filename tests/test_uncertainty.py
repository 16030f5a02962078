"""Uncertainty: binomial intervals, bootstraps, Annex 15 transcription sensitivity, frontier."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from audit import scores as scores_module
from audit import uncertainty as U
from audit.analysis import accuracy, pareto
from audit.exceptions import InputError
from audit.measures.kernels import UndefinedMeasureWarning
from audit.measures.registry import evaluate, evaluate_scores
from audit.tables.rates import rate_matrices, read_rates
from audit.uncertainty import checks as UC
from audit.uncertainty import claims as UCL
from audit.uncertainty import results
from audit.uncertainty import summary as US

# ------------------------------------------------------------------ helpers


def _counts_table(fmr, fnmr, n_mated, n_nonmated, algorithms=None):
    """Long rates table with counts; fmr/fnmr (n_alg, n_grp).

    The rates are made up apart from the counts, so they are not checked
    against them (``count_tolerance=inf``)."""
    fmr, fnmr = np.atleast_2d(fmr), np.atleast_2d(fnmr)
    n_alg, n_grp = fmr.shape
    algorithms = algorithms or [f"alg{i:03d}" for i in range(n_alg)]
    return read_rates(
        pd.DataFrame(
            {
                "algorithm": np.repeat(algorithms, n_grp),
                "group": np.tile([f"g{j}" for j in range(n_grp)], n_alg),
                "fmr": fmr.ravel(),
                "fnmr": fnmr.ravel(),
                "n_mated": np.broadcast_to(n_mated, fmr.shape).ravel(),
                "n_nonmated": np.broadcast_to(n_nonmated, fmr.shape).ravel(),
            }
        ),
        count_tolerance=np.inf,
    )


def _crossing_criteria(table, measures, *, alpha_grid=None, seed=0):
    """A small criteria function for verdict_stability's ``criteria=`` hook.

    Judges FDR's FFMC.1 from the alpha at which its FMR term would weigh as much as
    its FNMR term (median FNMR spread / FMR spread, as a share), and passes two fixed
    FFMC.2 verdicts, so that the verdict agreement is known in advance."""
    _, _, fmr, fnmr = rate_matrices(table)
    a = fmr.max(axis=1) - fmr.min(axis=1)
    b = fnmr.max(axis=1) - fnmr.min(axis=1)
    ratio = float(np.median(b / a))
    crossing = ratio / (1.0 + ratio)
    return pd.DataFrame(
        {
            "measure": ["fdr", "fdr", "garbe"],
            "criterion": ["FFMC.1", "FFMC.2", "FFMC.2"],
            "passed": [crossing < 0.9, True, True],
            "evidence": [f"crossing {crossing:.3f}", "bounded", "bounded"],
        }
    )


# ---------------------------------------------------------- binomial intervals

CASES = [(0, 10), (1, 10), (5, 10), (10, 10), (0, 100_000), (3, 100_000), (81, 263), (999, 1000)]


@pytest.mark.parametrize(("k", "n"), CASES)
@pytest.mark.parametrize(
    ("method", "scipy_method"), [("wilson", "wilson"), ("clopper-pearson", "exact")]
)
def test_binomial_interval_matches_scipy(k, n, method, scipy_method):
    low, high = U.binomial_interval(k, n, level=0.9, method=method)
    expected = stats.binomtest(k, n).proportion_ci(confidence_level=0.9, method=scipy_method)
    assert float(low) == pytest.approx(expected.low, abs=1e-10)
    assert float(high) == pytest.approx(expected.high, abs=1e-10)


def test_binomial_interval_is_vectorised():
    k = np.array([[0, 1], [2, 3]])
    low, high = U.binomial_interval(k, 10)
    assert low.shape == high.shape == (2, 2)
    assert np.all(low <= k / 10) and np.all(k / 10 <= high)


@pytest.mark.parametrize("p", [0.001, 0.01, 0.05, 0.3])
@pytest.mark.parametrize("n", [500, 5000])
@pytest.mark.parametrize("method", ["wilson", "clopper-pearson"])
def test_binomial_interval_coverage_on_simulated_data(p, n, method):
    """Seeded simulation with known rates.  The simulated coverage must match the exact
    coverage sum_k P(K = k) [p in CI(k)] within 3 standard errors of 4,000 draws;
    Clopper-Pearson's exact coverage is at least the level, Wilson's close to it
    (it dips to about 0.91 when n*p is below 1, a known property)."""
    low, high = U.binomial_interval(np.arange(n + 1), n, level=0.95, method=method)
    exact = stats.binom.pmf(np.arange(n + 1), n, p)[(low <= p) & (p <= high)].sum()
    rng = np.random.default_rng(12345)
    k = rng.binomial(n, p, size=4000)
    low, high = U.binomial_interval(k, n, level=0.95, method=method)
    simulated = np.mean((low <= p) & (p <= high))
    assert simulated == pytest.approx(exact, abs=3 * np.sqrt(exact * (1 - exact) / 4000) + 1e-3)
    if method == "clopper-pearson":
        assert exact >= 0.95
    else:
        assert exact >= (0.90 if n * p < 1 else 0.925)


def test_wilson_average_coverage_is_close_to_level():
    rng = np.random.default_rng(7)
    coverages = []
    for p in np.linspace(0.01, 0.5, 25):
        k = rng.binomial(1000, p, size=2000)
        low, high = U.binomial_interval(k, 1000)
        coverages.append(np.mean((low <= p) & (p <= high)))
    assert np.mean(coverages) == pytest.approx(0.95, abs=0.01)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 1, "n": 10, "level": 1.0}, "parameter level: expected a number in (0, 1), got 1.0"),
        (
            {"k": 1, "n": 10, "method": "wald"},
            "parameter method: expected one of 'wilson', 'clopper-pearson', got 'wald'",
        ),
        ({"k": 11, "n": 10}, UC.BAD_COUNTS.format(problem="got k < 0, k > n or n <= 0")),
        ({"k": 0, "n": 0}, UC.BAD_COUNTS.format(problem="got k < 0, k > n or n <= 0")),
        ({"k": 1.5, "n": 10}, UC.BAD_COUNTS.format(problem="got a fractional count")),
        ({"k": np.nan, "n": 10}, UC.BAD_COUNTS.format(problem="got a non-finite count")),
    ],
)
def test_binomial_interval_errors(kwargs, message):
    k, n = kwargs.pop("k"), kwargs.pop("n")
    with pytest.raises(ValueError) as error:
        U.binomial_interval(k, n, **kwargs)
    assert str(error.value) == message


def test_method_messages_name_their_own_choices(annex15):
    with pytest.raises(ValueError) as error:
        U.binomial_interval(1, 10, method="foo")
    assert str(error.value) == (
        "parameter method: expected one of 'wilson', 'clopper-pearson', got 'foo'"
    )
    with pytest.raises(ValueError) as error:
        U.analyse(annex15, ["fdr"], method="foo")
    assert str(error.value) == (
        "parameter method: expected one of 'auto', 'counts', 'transcription', 'none', got 'foo'"
    )


# --------------------------------------------------------------- counts and rates


def test_rate_intervals_from_columns_and_from_counts_file(tmp_path):
    table = _counts_table([[1e-4, 0.0]], [[0.02, 0.05]], 2000, 100_000)
    by_column = U.rate_intervals(table, method="clopper-pearson")
    path = tmp_path / "counts.csv"
    pd.DataFrame(
        {"group": ["g0", "g1"], "n_mated": [2000, 2000], "n_nonmated": [100_000, 100_000]}
    ).to_csv(path, index=False)
    by_file = U.rate_intervals(
        table.drop(columns=["n_mated", "n_nonmated"]), counts=path, method="clopper-pearson"
    )
    columns = ["fmr_low", "fmr_high", "fnmr_low", "fnmr_high"]
    pd.testing.assert_frame_equal(by_column[columns], by_file[columns])
    assert by_column.attrs["interval"]["method"] == "clopper-pearson"
    assert by_column.loc[1, "fmr_low"] == 0.0 and by_column.loc[1, "fmr_high"] > 0.0
    assert (by_column["fnmr_low"] <= by_column["fnmr"]).all()
    assert (by_column["fnmr"] <= by_column["fnmr_high"]).all()


def test_rate_intervals_need_counts(annex15):
    with pytest.raises(ValueError) as error:
        U.rate_intervals(annex15)
    assert str(error.value) == UC.NO_COUNTS.format(column="n_mated", kind="mated")


@pytest.mark.parametrize(("rate", "count"), [("fmr", "n_nonmated"), ("fnmr", "n_mated")])
@pytest.mark.parametrize("method", ["wilson", "clopper-pearson"])
def test_a_one_sided_table_gets_the_intervals_of_its_rate_from_its_count(rate, count, method):
    """FMRs with their non-mated counts alone (or FNMRs with their mated counts): the
    intervals of that rate, as the same rates and counts give them in a two-sided
    table; none for the rate it lacks, whose count it need not hold."""
    both = _counts_table([[0.0, 1e-4, 3e-5]], [[0.02, 0.0, 0.013]], 1000, 100_000)
    kept = ["algorithm", "group", rate, count]
    one = read_rates(both[kept].copy(), count_tolerance=np.inf)
    got = U.rate_intervals(one, method=method)
    want = U.rate_intervals(both, method=method)
    assert list(got.columns) == [*kept, f"{rate}_low", f"{rate}_high"]
    columns = [f"{rate}_low", f"{rate}_high", count]
    pd.testing.assert_frame_equal(got[columns], want[columns], check_exact=True)
    assert got[f"{rate}_low"].iloc[0 if rate == "fmr" else 1] == 0.0  # no error: 0 below
    lacking = one.drop(columns=[count])
    with pytest.raises(ValueError) as error:
        U.rate_intervals(lacking)
    kind = "mated" if count == "n_mated" else "non-mated"
    assert str(error.value) == UC.NO_COUNTS.format(column=count, kind=kind)


def test_counts_missing_group():
    table = _counts_table([[1e-4, 2e-4]], [[0.02, 0.05]], 10, 10).drop(
        columns=["n_mated", "n_nonmated"]
    )
    counts = pd.DataFrame({"group": ["g0"], "n_mated": [5], "n_nonmated": [5]})
    with pytest.raises(ValueError) as error:
        U.count_matrices(table, counts)
    assert str(error.value) == accuracy.COUNTS_MISSING_GROUPS.format(
        source="<DataFrame>", groups=["g1"], algorithm=""
    )


@pytest.mark.parametrize("bad", ["100.7", "abc", "-3"])
def test_counts_file_must_hold_whole_numbers(tmp_path, bad):
    table = _counts_table([[1e-4, 2e-4]], [[0.02, 0.05]], 10, 10).drop(
        columns=["n_mated", "n_nonmated"]
    )
    path = tmp_path / "counts.csv"
    path.write_text(f"group,n_mated,n_nonmated\ng0,100,5000\ng1,{bad},5000\n")
    with pytest.raises(accuracy.WeightsError) as error:
        U.count_matrices(table, path)
    assert str(error.value) == accuracy.COUNTS_BAD_COUNT.format(
        where=f"{path}, line 3", column="n_mated", value=bad
    )


def test_counts_frame_must_hold_whole_numbers_and_both_columns():
    table = _counts_table([[1e-4, 2e-4]], [[0.02, 0.05]], 10, 10).drop(
        columns=["n_mated", "n_nonmated"]
    )
    counts = pd.DataFrame(
        {"group": ["g0", "g1"], "n_mated": [100, 100.7], "n_nonmated": [5000, 5000]}
    )
    with pytest.raises(accuracy.WeightsError) as error:
        U.rate_intervals(table, counts=counts)
    assert str(error.value) == accuracy.COUNTS_BAD_COUNT.format(
        where="<DataFrame>, row 1", column="n_mated", value=100.7
    )
    with pytest.raises(ValueError) as error:
        U.count_matrices(table, counts.assign(n_mated=[100, 101]).drop(columns="n_nonmated"))
    assert str(error.value) == UC.COUNTS_COLUMNS.format(source="<DataFrame>", missing="n_nonmated")


# ------------------------------------------------------------ parametric bootstrap


def test_parametric_bootstrap_is_reproducible_and_seeded():
    table = _counts_table([[1e-4, 3e-4, 2e-4]] * 3, [[0.02, 0.05, 0.03]] * 3, 2000, 100_000)
    first = U.parametric_bootstrap(table, n_replicates=200, seed=3)
    again = U.parametric_bootstrap(table, n_replicates=200, seed=3)
    other = U.parametric_bootstrap(table, n_replicates=200, seed=4)
    pd.testing.assert_frame_equal(first.intervals, again.intervals)
    assert not first.intervals["low"].equals(other.intervals["low"])
    assert first.params["seed"] == 3 and first.intervals.attrs["n_replicates"] == 200
    assert first.params["resampled"].startswith("binomial")


def test_parametric_replicates_have_binomial_spread():
    fnmr = np.array([[0.02, 0.1]])
    table = _counts_table([[1e-3, 1e-3]], fnmr, 5000, 100_000)
    _, fnmr_reps = U.parametric_replicates(table, n_replicates=4000, seed=0)
    expected = np.sqrt(fnmr * (1 - fnmr) / 5000)
    np.testing.assert_allclose(fnmr_reps.std(axis=0), expected, rtol=0.05)
    np.testing.assert_allclose(fnmr_reps.mean(axis=0), fnmr, rtol=0.01)


def test_parametric_bootstrap_interval_covers_true_fdr():
    """Known case: 300 simulated data sets (one per 'algorithm') drawn from the same true
    group rates; the 95% percentile interval of FDR should cover the true FDR in about
    95% of them (tolerance 4 points: simulation error and percentile-interval bias)."""
    rng = np.random.default_rng(11)
    true_fmr = np.array([1e-4, 2e-4, 1.5e-4, 3e-4])
    true_fnmr = np.array([0.02, 0.05, 0.03, 0.04])
    n_mated, n_nonmated = 4000, 1_000_000
    n_sets = 300
    fmr = rng.binomial(n_nonmated, true_fmr, size=(n_sets, 4)) / n_nonmated
    fnmr = rng.binomial(n_mated, true_fnmr, size=(n_sets, 4)) / n_mated
    table = _counts_table(fmr, fnmr, n_mated, n_nonmated)
    result = U.parametric_bootstrap(
        table, ["fdr"], n_replicates=400, seed=1, fairness="fdr", alpha_grid=[0.5]
    )
    truth = 1 - (
        0.5 * (true_fmr.max() - true_fmr.min()) + 0.5 * (true_fnmr.max() - true_fnmr.min())
    )
    rows = result.intervals.query("measure == 'fdr'")
    coverage = np.mean((rows["low"] <= truth) & (truth <= rows["high"]))
    assert coverage == pytest.approx(0.95, abs=0.04)


def test_replicates_must_be_positive():
    table = _counts_table([[1e-4, 2e-4]], [[0.02, 0.05]], 10, 10)
    with pytest.raises(ValueError) as error:
        U.parametric_replicates(table, n_replicates=0)
    assert (
        str(error.value) == "parameter n_replicates: expected a whole number in [1, 100000], got 0"
    )


def test_parametric_replicates_need_comparisons():
    table = _counts_table([[1e-4, 2e-4]], [[0.02, 0.05]], 10, 10)
    table["n_mated"] = [10, 0]  # read_rates refuses a zero count; a table built by hand may not
    with pytest.raises(ValueError) as error:
        U.parametric_replicates(table)
    assert str(error.value) == UC.BAD_COUNTS.format(problem=UC.NO_COMPARISONS)


def test_replicate_measures_match_the_measures_row_by_row():
    rng = np.random.default_rng(0)
    fmr = rng.uniform(1e-5, 1e-3, size=(5, 7, 8))
    fnmr = rng.uniform(0.0, 0.1, size=(5, 7, 8))
    results = U.replicate_measures(fmr, fnmr, ["fdr", "ir", "garbe"], alpha=0.3)
    from audit.measures.registry import get_measure

    for name, result in results.items():
        for i in range(5):
            expected = get_measure(name)(fmr[i], fnmr[i], alpha=0.3)
            np.testing.assert_allclose(result.value[i], expected.value)


# ------------------------------------------------------------ transcription redraws


def test_redraws_stay_inside_their_bins(annex15_matrices):
    _, _, fmr, fnmr = annex15_matrices
    fmr_reps, fnmr_reps = U.transcription_redraws(fmr, fnmr, n_replicates=300, seed=5)
    log = np.log10(fmr_reps)
    centre = np.log10(fmr)
    floored = np.isclose(fmr, 1e-5)
    assert floored.sum() == 334
    inside = np.abs(log - centre) <= 0.05 + 1e-12
    assert inside[:, ~floored].all()
    assert (log[:, floored] >= -6.0 - 1e-12).all() and (log[:, floored] <= -4.95 + 1e-12).all()
    assert (np.abs(fnmr_reps - fnmr) <= 5e-5 + 1e-12).all()
    assert (fnmr_reps >= 0).all() and (fnmr_reps <= 1).all()
    # uniform in log10 within the bin: position in the bin has mean 1/2 and variance 1/12
    position = (log[:, ~floored] - centre[~floored] + 0.05) / 0.1
    assert position.mean() == pytest.approx(0.5, abs=0.005)
    assert position.var() == pytest.approx(1 / 12, rel=0.02)


def test_redraws_floor_bin_only_and_reproducible():
    fmr, fnmr = np.array([[1e-5, 10**-4.2]]), np.array([[0.0, 1.0]])
    a = U.transcription_redraws(fmr, fnmr, n_replicates=100, seed=1, floor_lower=None)
    b = U.transcription_redraws(fmr, fnmr, n_replicates=100, seed=1, floor_lower=None)
    np.testing.assert_array_equal(a[0], b[0])
    assert (np.abs(np.log10(a[0][..., 0]) + 5) <= 0.05 + 1e-12).all()
    assert (a[1][..., 0] >= 0).all() and (a[1][..., 1] <= 1).all()


@pytest.mark.parametrize(
    ("fmr", "kwargs", "message"),
    [
        (
            [[1.5e-4, 1e-4]],
            {},
            UC.NOT_ON_GRID.format(count=1, step=0.1, row=0, column=0, value=1.5e-4),
        ),
        ([[1e-6, 1e-4]], {}, UC.BELOW_FLOOR.format(count=1, floor=1e-5, value=1e-6)),
        ([[1e-5, 1e-4]], {"floor_lower": 2e-5}, UC.BAD_FLOOR_LOWER.format(floor=1e-5, value=2e-5)),
    ],
)
def test_redraw_errors(fmr, kwargs, message):
    with pytest.raises(ValueError) as error:
        U.transcription_redraws(fmr, [[0.01, 0.02]], **kwargs)
    assert str(error.value) == message


# ---------------------------------------------------------------------- frontier


def test_frontier_membership_known_case_and_batch():
    fairness = np.array([[0.5, 0.3, 0.4, 0.3], [0.1, 0.3, 0.4, 0.2]])
    accuracy = np.array([[0.01, 0.02, 0.03, 0.02], [0.01, 0.02, 0.03, 0.005]])
    mask = U.frontier_membership(fairness, accuracy)
    # replicate 0: the two (0.02, 0.3) points tie: neither dominates the other
    np.testing.assert_array_equal(mask, [[True, True, False, True], [True, False, False, True]])
    weak = U.frontier_membership(fairness[:1], accuracy[:1], weak=True)
    assert weak.sum() >= mask[:1].sum()
    higher = U.frontier_membership(-fairness, accuracy, higher_is_fairer=True)
    np.testing.assert_array_equal(higher, mask)


def test_frontier_membership_undefined_is_off_and_dominates_nothing():
    fairness = np.array([0.5, np.nan, 0.4])
    accuracy = np.array([0.01, 0.001, 0.03])
    np.testing.assert_array_equal(U.frontier_membership(fairness, accuracy), [True, False, True])


def test_frontier_membership_is_the_pareto_modules_efficiency():
    rng = np.random.default_rng(3)
    points = rng.random((10, 30, 2))
    np.testing.assert_array_equal(
        U.frontier_membership(points[..., 1], points[..., 0]),
        np.asarray(pareto.efficient(points, higher_is_better=[False, False])),
    )


def test_crossing_statistics_read_the_crossing_as_ffmc_does():
    """Both modules take the first alpha whose share surpasses one half (ffmc.first_crossing);
    here the FDR share is exactly 1/2 at alpha 0.5, so the crossing is the next grid alpha."""
    from audit.analysis import ffmc

    table = read_rates(
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
    result = U.parametric_bootstrap(table, ["fdr"], n_replicates=5, weights="equal")
    point = result.statistics.set_index("statistic")["value"]
    assert (
        point["fdr.crossing.median"] == ffmc.ffmc1(table, "fdr").summary["crossing_alpha"] == 0.51
    )


_HALF_NEIGHBOURS = [0.5, np.nextafter(0.5, 0.0), np.nextafter(0.5, 1.0), 0.0, 1.0, 0.25, 0.75]


@settings(max_examples=300, deadline=None)
@given(
    rows=st.lists(
        st.lists(
            st.one_of(
                st.sampled_from(_HALF_NEIGHBOURS),
                st.floats(0.0, 1.0),
                st.sampled_from([np.nan, np.inf, -np.inf]),
            ),
            min_size=9,
            max_size=9,
        ),
        min_size=1,
        max_size=6,
    ),
    columns=st.integers(1, 9),
)
def test_the_median_above_one_half_is_the_sorted_medians(rows, columns):
    """Decided by counting, whether the median of each row exceeds 1/2 is what the median
    itself says: ``nanmedian`` (NaN left out, an all-NaN row never above) and, where no
    value is NaN, ``np.median``; odd and even rows, values at 1/2 and either side of it,
    and infinities."""
    from audit.analysis.quantiles import nanmedian

    values = np.array(rows, dtype=np.float64)[:, :columns]
    expected = nanmedian(values, axis=-1) > 0.5
    np.testing.assert_array_equal(results._median_above_half(values), expected)
    whole = ~np.isnan(values).any(axis=-1)
    if whole.any():
        with np.errstate(invalid="ignore"):
            median = np.median(values[whole], axis=-1)
        np.testing.assert_array_equal(results._median_above_half(values[whole]), median > 0.5)


def test_frontier_tie_tolerance_is_the_pareto_modules():
    assert results.TIE_RTOL is pareto.TIE_RTOL  # the same constant, not a copy that could drift


@pytest.mark.parametrize("weights", ["equal", "counts"])
def test_analyse_weights_the_frontier_as_the_caller_asks(weights):
    """With counts in the table, the frontier's total FNMR still uses the given weights,
    as the down-select table built with the same weights does."""
    table = _counts_table(
        [[1e-4, 2e-4], [3e-4, 1e-4]], [[0.02, 0.05], [0.04, 0.01]], np.array([[100, 900]]), 100_000
    )
    result, how = U.analyse(table, ["garbe"], n_replicates=20, seed=0, weights=weights)
    assert how.startswith("binomial (parametric) bootstrap")
    expected = accuracy.overall_rates(table, weights=weights)["total_fnmr"].to_numpy()
    np.testing.assert_allclose(result.frontier["total_fnmr"].to_numpy(), expected, rtol=1e-12)


def _grid_table(fmr):
    """A rates table without counts whose FMRs (one algorithm per row) are given on a grid."""
    fmr = np.asarray(fmr, dtype="float64")
    fnmr = np.linspace(0.01, 0.05, fmr.size).reshape(fmr.shape).round(4)
    return _counts_table(fmr, fnmr, 1, 1).drop(columns=["n_mated", "n_nonmated"])


FLOORED = [[1e-5, 10**-4.9, 1e-4], [1e-5, 10**-4.5, 10**-3.9]]


def test_analyse_auto_redraws_a_floored_grid(annex15):
    result, how = U.analyse(_grid_table(FLOORED), ["fdr"], n_replicates=5)
    assert result.kind == "transcription" and "FMRs on the 1e-05 floor down to 1e-06" in how
    result, how = U.analyse(annex15, ["fdr"], n_replicates=5)
    assert result.kind == "transcription" and "0.1-decade bin, FMRs on the 1e-05 floor" in how


@pytest.mark.parametrize(
    ("fmr", "floor_lower", "reason"),
    [
        (
            [[0.0, 1e-5, 1e-4], [1e-5, 10**-4.5, 10**-3.9]],
            UC.FLOOR_LOWER,
            US.ZERO_FMR.format(count=1),
        ),
        (
            [[1e-5, 10**-4.9, 1e-4], [10**-4.9, 10**-4.5, 10**-3.9]],
            UC.FLOOR_LOWER,
            US.NO_FLOOR.format(fraction=0.05),
        ),
        (FLOORED, 2e-5, US.FLOOR_BELOW_LOWER.format(floor=1e-5, value=2e-5)),
    ],
)
def test_analyse_auto_skips_a_grid_without_a_usable_floor(fmr, floor_lower, reason):
    result, how = U.analyse(_grid_table(fmr), ["fdr"], n_replicates=5, floor_lower=floor_lower)
    assert result is None
    assert how == US.NO_TRANSCRIPTION.format(step=0.1, reason=reason)
    assert how.startswith("no uncertainty analysis: the table has no comparison counts")


def test_analyse_forced_transcription_still_refuses_what_it_cannot_redraw():
    with pytest.raises(ValueError) as error:
        U.analyse(
            _grid_table([[0.0, 1e-5, 1e-4], [1e-5, 10**-4.5, 10**-3.9]]),
            ["fdr"],
            method="transcription",
            n_replicates=5,
        )
    assert str(error.value) == UC.BELOW_FLOOR.format(count=1, floor=1e-5, value=0.0)
    with pytest.raises(ValueError) as error:
        U.analyse(
            _grid_table(FLOORED), ["fdr"], method="transcription", n_replicates=5, floor_lower=2e-5
        )
    assert str(error.value) == UC.BAD_FLOOR_LOWER.format(floor=1e-5, value=2e-5)


def test_fnmr_weights():
    table = _counts_table([[1e-4, 2e-4]], [[0.02, 0.05]], np.array([[100, 300]]), 10)
    normalised = lambda w: w / w.sum(axis=-1, keepdims=True)  # noqa: E731
    np.testing.assert_allclose(normalised(U.fnmr_weights(table)), [[0.5, 0.5]])
    np.testing.assert_allclose(normalised(U.fnmr_weights(table, "counts")), [[0.25, 0.75]])
    np.testing.assert_allclose(
        normalised(U.fnmr_weights(table, {"g0": 1, "g1": 3})), [[0.25, 0.75]]
    )


def test_totals_match_the_accuracy_module(annex15, annex15_sensitivity):
    overall = accuracy.overall_rates(annex15, weights="equal")
    frontier = annex15_sensitivity.frontier.set_index("algorithm")
    np.testing.assert_allclose(
        frontier["total_fnmr"].to_numpy(),
        overall.loc[frontier.index, "total_fnmr"].to_numpy(),
        rtol=1e-12,
    )


def test_point_frontier_matches_the_pareto_module(annex15, annex15_sensitivity):
    frame = pareto.frontier_frame(annex15, "garbe")
    ours = annex15_sensitivity.frontier.set_index("algorithm")["on_frontier"]
    assert sorted(frame.index[frame["on_frontier"]]) == sorted(ours.index[ours])


# ---------------------------------------------------------------- Annex 15 results


def _package_measures():
    """The rate measures the package registers (not those other tests register on the fly)."""
    from audit.measures.registry import get_measure, measure_names

    return [
        name
        for name in measure_names()
        if get_measure(name).inputs == "rates" and get_measure(name).module.startswith("audit.")
    ]


@pytest.fixture(scope="module")
def annex15_sensitivity(annex15):
    return U.transcription_sensitivity(annex15, _package_measures(), n_replicates=400, seed=0)


def test_annex15_pure_rounding_intervals_contain_the_point_values(annex15):
    """Without censoring (the floor treated as its own bin), every point value of every
    measure lies inside its 95% sensitivity interval."""
    result = U.transcription_sensitivity(
        annex15, _package_measures(), n_replicates=400, seed=0, floor_lower=None
    )
    rows = result.intervals
    assert len(rows) == len(result.params["measures"]) * 126
    assert ((rows["low"] <= rows["value"]) & (rows["value"] <= rows["high"])).all()
    assert result.params["floor_lower"] is None


def test_annex15_floor_censoring_makes_ir_a_lower_bound(annex15_sensitivity):
    rows = annex15_sensitivity.intervals
    ir = rows[rows["measure"] == "ir"]
    # never above the interval: the floored FMRs can only lower the minimum
    assert (ir["value"] <= ir["high"]).all()
    # and for most algorithms below it: a floored min FMR makes IR a lower bound
    assert (ir["value"] < ir["low"]).sum() > 90
    fdr = rows[rows["measure"] == "fdr"]
    assert ((fdr["low"] <= fdr["value"]) & (fdr["value"] <= fdr["high"])).all()


def test_annex15_point_statistics_reproduce_the_paper(annex15_sensitivity):
    checked = U.check_claims(annex15_sensitivity).set_index("statistic")
    for name in (
        "garbe.min",
        "garbe.max",
        "ir.min",
        "ir.max",
        "ir.fmr_term.max",
        "garbe.fmr_term.median",
        "garbe.fnmr_term.median",
        "fdr.crossing.median",
    ):
        assert checked.loc[name, "reproduced"], name
    # FDR's crossing near 0.99 survives the rounding; IR's practical maximum does not
    assert checked.loc["fdr.crossing.median", "robust"]
    assert not checked.loc["ir.fmr_term.max", "robust"]


def test_annex15_frontier_probabilities(annex15_sensitivity):
    frontier = annex15_sensitivity.frontier.set_index("algorithm")
    assert frontier["frontier_probability"].between(0, 1).all()
    on = frontier[frontier["on_frontier"]]
    assert len(on) == 6
    assert (on["frontier_probability"] >= 0.9).all()
    assert frontier.loc["didiglobalface-001", "frontier_probability"] == 1.0
    # the size of the frontier in every replicate agrees with the membership shares
    sizes = annex15_sensitivity.replicate_statistics["frontier.size"]
    assert sizes.mean() == pytest.approx(frontier["frontier_probability"].sum())


def test_join_frontier_probability_to_the_downselect_table(annex15, annex15_sensitivity):
    plain = pd.DataFrame({"algorithm": ["nodeflux-001", "tevian-005"], "x": [1, 2]})
    joined = U.join_frontier_probability(plain, annex15_sensitivity)
    assert joined["frontier_probability"].iloc[0] == 1.0
    assert 0.0 < joined["frontier_probability"].iloc[1] < 1.0
    assert joined.attrs["uncertainty"]["kind"] == "transcription"


def test_join_frontier_probability_to_the_pareto_downselect(annex15, annex15_sensitivity):
    table = U.join_frontier_probability(pareto.downselect(annex15, "garbe"), annex15_sensitivity)
    assert (table["frontier_probability"] > 0.9).all()


def test_annex15_ranking_stability(annex15_sensitivity):
    summary = annex15_sensitivity.ranking_summary.set_index("measure")
    assert summary.loc["fdr", "spearman_low"] > 0.999
    assert summary.loc["garbe", "spearman_low"] > 0.95
    assert summary.loc["ir", "spearman_median"] < 0.9
    ranking = annex15_sensitivity.ranking
    assert ((ranking["rank_low"] >= 1) & (ranking["rank_high"] <= 126)).all()
    assert ranking["p_within"].between(0, 1).all()


def test_robustness_summary_text(annex15_sensitivity):
    """The paper's numbers in words, each with its interval; measures by their labels; the
    rankings against their rule; the frontier's size as whole numbers."""
    said = U.robustness_sentences(annex15_sensitivity, claims=U.HOWARD_2022_CLAIMS)
    text = U.robustness_summary(annex15_sensitivity, claims=U.HOWARD_2022_CLAIMS)
    assert said[0].startswith("Every number here was recomputed on 400 redraws of the table")
    robust = said[said.index(UCL.CLAIM_GROUPS[True, True].format(level=95, reps="redraws")) + 1]
    fragile = said[said.index(UCL.CLAIM_GROUPS[True, False].format(level=95, reps="redraws")) + 1]
    missed = said[said.index(UCL.CLAIM_GROUPS[False, None].format(level=95, reps="redraws")) + 1]
    # FDR's crossing near 0.99 holds in every replicate; IR's practical maximum 63.1 does not
    assert (
        "The FMR term of FDR takes over the measure (its median share over the algorithms "
        "passes one half) at alpha 0.988 (paper, sec. 4.1: 0.99; 0.987 to 0.988 in 95% of the "
        "redraws)."
    ) in robust
    assert (
        "GARBE's FNMR term has a median of 0.333 (paper, sec. 4.3: 0.33; 0.332 to 0.334 in 95% of the redraws)."
        in robust
    )
    assert any(
        s.startswith("IR's FMR term reaches 63.1 (paper, sec. 4.2 / 4.4: 63.1;") for s in fragile
    )
    assert not any("IR's FMR term" in s for s in robust)
    # a count as a whole number, and its range in whole numbers
    assert (
        "The Pareto frontier of GARBE and total FNMR holds 6 algorithms (paper, sec. 4.5: 9; "
        "5 to 9 in 95% of the redraws)."
    ) in missed
    assert "Not stable (" in text and "IR (0%, median 0.80)" in text
    assert (
        "The Pareto frontier of GARBE and total FNMR holds 6 algorithms with the published rates"
        in text
    )
    assert "didiglobalface-001" in text
    # identifiers stay in the tables
    for identifier in ("garbe.", "fdr.", "frontier.size", "algorithm(s)", "_fmr", "_fnmr"):
        assert identifier not in text


def test_verdict_stability_with_custom_criteria(annex15, annex15_sensitivity):
    verdicts = U.verdict_stability(
        annex15, annex15_sensitivity, n_replicates=20, criteria=_crossing_criteria
    )
    assert list(verdicts.columns) == ["measure", "criterion", "passed", "share_passed", "agreement"]
    fdr1 = verdicts.set_index(["measure", "criterion"]).loc[("fdr", "FFMC.1")]
    assert not fdr1["passed"] and fdr1["agreement"] == 1.0
    assert verdicts.attrs["verdict_replicates"] == 20
    text = U.robustness_summary(annex15_sensitivity, verdicts=verdicts)
    assert (
        "Each of the 3 FFMC verdicts is the same in every one of the 20 redraws on which "
        "the whole FFMC audit was rerun."
    ) in text


@pytest.mark.parametrize(
    ("agreement", "said"),
    [
        (
            [1.0, 1.0, None],
            "Each of the 2 FFMC verdicts is the same in every one of the 10 redraws on which "
            "the whole FFMC audit was rerun.",
        ),
        (
            [1.0, 0.97, None],
            "Each of the 2 FFMC verdicts is the same in at least 95% of the 10 redraws on which "
            "the whole FFMC audit was rerun.",
        ),
        (
            [0.8, None, None],
            "No FFMC verdict is the same in at least 95% of the 10 redraws on which the whole "
            "FFMC audit was rerun: GARBE on FFMC.2 (the same in 80%).",
        ),
        (
            [1.0, 0.5, 0.999],
            "2 of the 3 FFMC verdicts are the same in at least 95% of the 10 redraws on which "
            "the whole FFMC audit was rerun; the other is not: IR on FFMC.3 (the same in 50%).",
        ),
        (
            [0.9, 0.5, 1.0],
            "1 of the 3 FFMC verdicts is the same in at least 95% of the 10 redraws on which "
            "the whole FFMC audit was rerun; the other 2 are not: GARBE on FFMC.2 (the same in "
            "90%) and IR on FFMC.3 (the same in 50%).",
        ),
    ],
)
def test_verdict_stability_in_words(agreement, said):
    """The verdicts in one sentence: every one, at least the rule's share, or which are not;
    a criterion that does not apply (no agreement) is not counted."""
    from audit.uncertainty.claims import _verdicts

    verdicts = pd.DataFrame(
        {
            "measure": ["garbe", "ir", "fdr"],
            "criterion": ["FFMC.2", "FFMC.3", "FFMC.1"],
            "agreement": pd.array(agreement, dtype="Float64"),
        }
    )
    verdicts.attrs["verdict_replicates"] = 10
    assert _verdicts(verdicts, U.ROBUST, "redraws", None) == [said]


def test_verdict_stability_with_the_ffmc_module(annex15, annex15_sensitivity):
    verdicts = U.verdict_stability(annex15, annex15_sensitivity, n_replicates=5)
    # every verdict the point audit gives has its agreement; a criterion not applicable
    # (the zero-error-adjusted measures: Annex 15 has no counts; FFMC.1 of a measure of one
    # error rate) has none
    judged = verdicts["passed"].notna()
    assert verdicts.loc[judged, "agreement"].between(0, 1).all()
    unjudged = verdicts[~judged]
    one_rate = unjudged["criterion"].eq("FFMC.1") & ~unjudged["measure"].str.endswith("_cp")
    assert (unjudged["measure"].str.endswith("_cp") | one_rate).all()
    assert verdicts.loc[~judged, "agreement"].isna().all()
    assert {"ratio_fmr", "merg", "nist_gini_fmr"} <= set(verdicts.loc[judged, "measure"])


def test_verdict_stability_judges_the_point_audit_given_with_its_settings(
    annex15, annex15_sensitivity, monkeypatch
):
    """A report's FFMC table given as ``point`` (of more measures than judged, in another
    order) gives the verdicts computed otherwise, in the order of the measures judged,
    without the point audit run again; the replicates are audited on its grid and with
    its search."""
    from audit.analysis.ffmc import ffmc_report

    names, grid = ["garbe", "fdr", "nrb", "ir"], np.linspace(0.0, 1.0, 5)
    options = dict(n_replicates=4, alpha_grid=grid, seed=3, n_random=300)
    computed = U.verdict_stability(annex15, annex15_sensitivity, names, **options)
    audited = ["fdr", "ir", "merg", "garbe", "nrb"]
    table = ffmc_report(annex15, audited, alpha_grid=grid, seed=3, n_random=300).table
    searched = []
    verdicts = US.ffmc_verdicts

    def spying(*args, **kwargs):
        searched.append((kwargs["n_random"], kwargs["seed"], list(kwargs["alpha_grid"])))
        return verdicts(*args, **kwargs)

    monkeypatch.setattr(US, "ffmc_verdicts", spying)
    monkeypatch.setattr(US, "ffmc_table", lambda *a, **k: pytest.fail("the point audit again"))
    read = U.verdict_stability(annex15, annex15_sensitivity, names, **options, point=table)
    pd.testing.assert_frame_equal(read, computed)
    assert searched == [(300, 3, list(grid))]
    assert list(dict.fromkeys(read["measure"])) == names


def test_replicate_table_round_trips(annex15, annex15_matrices):
    _, _, fmr, fnmr = annex15_matrices
    again = U.replicate_table(annex15, fmr, fnmr)
    pd.testing.assert_frame_equal(again, annex15)


# ------------------------------------------------------------------ score bootstrap


def _clustered_scores(seed=0, n_subjects=40, mated_per=10, nonmated_per=30, spread=1.0):
    """Synthetic verification scores with a strong per-subject effect: comparisons of one
    subject are correlated, so the subject is the unit of independence."""
    rng = np.random.default_rng(seed)
    columns = {"algorithm": [], "subject": [], "group": [], "mated": [], "score": []}
    for algorithm, shift in (("sysA", 0.0), ("sysB", 0.3)):
        for g, group in enumerate(["F", "M", "X"]):
            for s in range(n_subjects):
                effect = rng.normal(0.0, spread)
                subject = f"{group}{s:03d}"
                mated = 3.0 + shift + 0.3 * g + effect + rng.normal(0, 0.5, mated_per)
                impostor = -1.0 + 0.5 * effect + rng.normal(0, 0.7, nonmated_per)
                for score, flag in ((mated, True), (impostor, False)):
                    n = len(score)
                    columns["algorithm"] += [algorithm] * n
                    columns["subject"] += [subject] * n
                    columns["group"] += [group] * n
                    columns["mated"] += [flag] * n
                    columns["score"].append(score)
    columns["score"] = np.concatenate(columns["score"])
    return pd.DataFrame(columns)


def _rates_at(threshold_mated=2.0, threshold_nonmated=0.5):
    def rates(scores):
        mated = scores["mated"].to_numpy(dtype=bool)
        score = scores["score"].to_numpy()
        errors = np.where(mated, score < threshold_mated, score >= threshold_nonmated)
        # the (algorithm, group) cells in sorted order, each counted mated and not
        algorithm, algorithms = pd.factorize(scores["algorithm"], sort=True)
        group, groups = pd.factorize(scores["group"], sort=True)
        cell = algorithm * len(groups) + group
        n = len(algorithms) * len(groups)
        size = np.bincount(cell * 2 + mated, minlength=2 * n).reshape(n, 2)
        wrong = np.bincount(cell * 2 + mated, weights=errors, minlength=2 * n).reshape(n, 2)
        present = np.flatnonzero(size.sum(axis=1) > 0)
        size, wrong = size[present], wrong[present].astype(np.int64)
        out = pd.DataFrame(
            {
                "algorithm": np.asarray(algorithms)[present // len(groups)],
                "group": np.asarray(groups)[present % len(groups)],
                "fmr": wrong[:, 0] / size[:, 0],
                "fnmr": wrong[:, 1] / size[:, 1],
                "n_mated": size[:, 1],
                "n_nonmated": size[:, 0],
            }
        )
        return out  # a plain tidy frame: enough for rate_matrices, skips validation for speed

    return rates


def test_resample_scores_keeps_subjects_whole_and_group_sizes():
    scores = _clustered_scores(n_subjects=10)
    sample = U.resample_scores(scores, np.random.default_rng(0))
    per_subject = scores.groupby("subject").size()
    drawn = sample.groupby("subject").size()
    # every drawn subject comes with all its rows, a whole number of times
    assert ((drawn % per_subject.loc[drawn.index]) == 0).all()
    # each group keeps its number of subject draws
    draws = (drawn / per_subject.loc[drawn.index]).groupby(drawn.index.str[0]).sum()
    assert (draws == 10).all()
    comparison = U.resample_scores(scores, np.random.default_rng(0), unit="comparison")
    assert (
        comparison.groupby(["algorithm", "group", "mated"]).size()
        == scores.groupby(["algorithm", "group", "mated"]).size()
    ).all()


def test_subject_bootstrap_is_wider_than_comparison_bootstrap():
    scores = _clustered_scores()
    rates = _rates_at()
    builtin = ["fdr", "ir", "garbe"]
    subject = U.score_bootstrap(scores, rates, builtin, n_replicates=120, seed=1)
    comparison = U.score_bootstrap(
        scores, rates, builtin, n_replicates=120, seed=1, unit="comparison"
    )
    assert subject.kind == "subject" and comparison.kind == "comparison"
    assert "subjects" in subject.params["resampled"]
    width = {}
    for name, result in (("subject", subject), ("comparison", comparison)):
        rows = result.intervals
        width[name] = (
            (rows["fnmr_term_high"] - rows["fnmr_term_low"]).groupby(rows["measure"]).mean()
        )
    # with subject-correlated comparisons the subject bootstrap is clearly wider
    assert (width["subject"] > 1.3 * width["comparison"]).all(), width
    again = U.score_bootstrap(scores, rates, builtin, n_replicates=120, seed=1)
    pd.testing.assert_frame_equal(subject.intervals, again.intervals)


def test_subject_bootstrap_without_clustering_matches_comparison_bootstrap():
    scores = _clustered_scores(spread=0.0)
    rates = _rates_at()
    subject = U.score_bootstrap(scores, rates, ["fdr"], n_replicates=120, seed=2)
    comparison = U.score_bootstrap(
        scores, rates, ["fdr"], n_replicates=120, seed=2, unit="comparison"
    )
    ratio = (subject.intervals["se"] / comparison.intervals["se"]).mean()
    assert 0.75 < ratio < 1.33


def _spread_of_mated_means(scores):
    """A small score measure for the test: spread of the groups' mean mated score, per algorithm."""
    means = scores[scores["mated"]].groupby(["algorithm", "group"])["score"].mean()
    spread = means.groupby(level="algorithm").agg(lambda x: x.max() - x.min())
    return pd.DataFrame(
        {"algorithm": spread.index, "measure": "mated_mean_spread", "value": spread.to_numpy()}
    )


def test_score_bootstrap_covers_score_measures():
    scores = _clustered_scores(n_subjects=15)
    result = U.score_bootstrap(
        scores,
        _rates_at(),
        ["garbe"],
        n_replicates=60,
        seed=0,
        score_measures=_spread_of_mated_means,
    )
    rows = result.intervals[result.intervals["measure"] == "mated_mean_spread"]
    assert len(rows) == 2 and (rows["low"] < rows["high"]).all()
    assert rows["fmr_term"].isna().all()
    assert "mated_mean_spread" in result.params["measures"]
    assert "mated_mean_spread" in set(result.ranking_summary["measure"])


def test_score_bootstrap_errors():
    scores = _clustered_scores(n_subjects=3)
    with pytest.raises(InputError) as error:
        U.score_bootstrap(scores, _rates_at(), subject="speaker")
    assert str(error.value) == UC.MISSING_SCORE_COLUMN.format(
        column="speaker", columns=list(scores.columns)
    )
    with pytest.raises(ValueError) as error:
        U.resample_scores(scores, np.random.default_rng(0), unit="trial")
    assert str(error.value) == (
        "parameter unit: expected one of 'subject', 'comparison', got 'trial'"
    )


# ------------------------------------------------------------------------ figures


def test_figures(annex15_sensitivity):
    import matplotlib.pyplot as plt
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from audit.report.plots import uncertainty as P

    ax = P.plot_intervals(annex15_sensitivity.intervals, measure="garbe", top=20)
    assert isinstance(ax, Axes) and len(ax.get_yticklabels()) == 20
    ax = P.plot_frontier_probability(annex15_sensitivity.frontier)
    assert isinstance(ax, Axes)
    # seaborn's colour maps by name, as the heat maps take them
    _, other = plt.subplots()
    P.add_frontier_probability(other, annex15_sensitivity.frontier, cmap="vlag", annotate=None)
    assert other.collections[-1].cmap.name == "vlag"
    plt.close(other.figure)
    texts = [t.get_text() for t in ax.texts]
    assert any(t.startswith("didiglobalface-001") for t in texts)
    fig = P.plot_statistics(
        annex15_sensitivity.replicate_statistics,
        statistics=["garbe.max", "ir.max", "frontier.size"],
        point=annex15_sensitivity.statistics,
        claims=U.HOWARD_2022_CLAIMS,
    )
    assert isinstance(fig, Figure) and len(fig.axes) == 3
    with pytest.raises(ValueError) as error:
        P.plot_intervals(annex15_sensitivity.intervals, measure="nope")
    present = sorted(annex15_sensitivity.intervals["measure"].unique())
    assert str(error.value) == P.NO_ROWS.format(measure="nope", present=present)


def test_intervals_of_a_measure_undefined_for_every_algorithm_say_so():
    """Every algorithm's value undefined (a table whose FMRs are all 0): the forest plot
    says so in its panel and its title, where the notebook ended in NumPy's "zero-size
    array to reduction operation minimum"."""
    import matplotlib.pyplot as plt

    from audit.report.plots import uncertainty as P

    intervals = pd.DataFrame({"measure": "fdr", "algorithm": ["A", "B", "C"], "value": np.nan,
                              "low": np.nan, "high": np.nan})  # fmt: skip
    ax = P.plot_intervals(intervals, measure="fdr")
    assert [t.get_text() for t in ax.texts] == ["undefined for every algorithm (3)"]
    assert "0 algorithms (3 undefined, not ranked)" in ax.get_title("left").replace("\n", " ")
    assert len(ax.get_yticklabels()) == len(ax.get_xticklabels()) == 0
    assert ax.get_legend() is None
    plt.close(ax.figure)
    # none shown of two defined: the panel says nothing false, and fewer than one is refused
    intervals.loc[1:, ["value", "low", "high"]] = [[0.5, 0.4, 0.6], [0.7, 0.6, 0.8]]
    with pytest.raises(ValueError, match="parameter top: expected a whole number of at least 1"):
        P.plot_intervals(intervals, measure="fdr", top=0)
    ax = P.plot_intervals(intervals, measure="fdr", top=1)
    assert len(ax.texts) == 0 and len(ax.get_yticklabels()) == 1
    plt.close(ax.figure)


# ------------------------------------------------------------ real score data


@pytest.fixture(scope="module")
def voxceleb_scores():
    """VoxCeleb1-H scores of bt4vt (fetched by audit.voxceleb); subject_1 is the
    enrolment speaker of every trial (both sides share gender in VoxCeleb1-H)."""
    from audit.sources import voxceleb

    try:
        folder = voxceleb.fetch_bt4vt() / "bt4vt" / "data"
    except voxceleb.DownloadError as error:  # no network: say so, do not pass silently
        pytest.skip(f"bt4vt wheel not available: {error}")
    return voxceleb.load_voxceleb(("gender",), folder=folder)


@pytest.mark.slow
def test_voxceleb_every_measure_has_a_subject_level_interval(voxceleb_scores):
    from audit.measures.registry import measure_names

    rates = lambda s: scores_module.rates_at_fmr(s, 0.01)  # noqa: E731
    subject = U.score_bootstrap(
        voxceleb_scores,
        rates,
        subject="subject_1",
        group="group_1",
        n_replicates=25,
        seed=0,
        score_measures=evaluate_scores,
    )
    comparison = U.score_bootstrap(
        voxceleb_scores,
        rates,
        ["fdr", "ir", "garbe"],
        group="group_1",
        n_replicates=25,
        seed=0,
        unit="comparison",
    )
    rows = subject.intervals
    # rate and score measures alike, and the table measures the rates feed (from scores
    # the counts are known; the gender grouping gives the default Female/Male ratios);
    # the cross-group measures need a pair matrix
    from audit.measures.registry import applicable_measures

    listed = applicable_measures(rates(voxceleb_scores), measure_names(inputs="table"))
    table_measures = listed.loc[listed["status"] != "not applicable", "measure"].tolist()
    assert "ir_cp" in table_measures
    assert set(rows["measure"]) == set(
        measure_names(inputs="rates") + table_measures + measure_names(inputs="scores")
    )
    assert rows["low"].notna().all() and rows["high"].notna().all()
    assert (rows["low"] <= rows["high"]).all()
    assert subject.params["resampled"].startswith("subjects ('subject_1')")
    # speakers, not trials, are the unit: the intervals of the built-ins are wider
    keys = ["measure", "algorithm"]
    both = rows.merge(comparison.intervals, on=keys, suffixes=("", "_cmp"))
    assert ((both["high"] - both["low"]) > (both["high_cmp"] - both["low_cmp"])).mean() >= 0.8


def test_undefined_values_are_never_the_fairest():
    """IR is undefined when a group has FMR 0: no algorithm can then be 'the fairest' by IR."""
    table = read_rates(
        pd.DataFrame(
            {
                "algorithm": ["a", "a", "b", "b"],
                "group": ["F", "M", "F", "M"],
                "fmr": [0.0, 1e-3, 0.0, 2e-3],
                "fnmr": [0.01, 0.02, 0.02, 0.02],
                "n_mated": [1000] * 4,
                "n_nonmated": [10000] * 4,
            }
        )
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMeasureWarning)
        result = U.parametric_bootstrap(table, ["ir", "garbe"], n_replicates=20)
    ranking = result.ranking.set_index(["measure", "algorithm"])
    assert ranking.loc["ir", "p_fairest"].tolist() == [0.0, 0.0]
    assert ranking.loc["garbe", "p_fairest"].sum() >= 1.0


@pytest.mark.parametrize("kept", ["fmr", "fnmr"])
@pytest.mark.parametrize(
    ("method", "kind"),
    [("auto", "parametric"), ("counts", "parametric"), ("transcription", "transcription")],
)
def test_analyse_redraws_the_rate_of_a_one_sided_table(kept, method, kind):
    """A table of one error rate (counts or not) redraws that rate: its measures are those
    of the table (one term), the absent term is NaN, the frontier is on the total of the
    rate present."""
    table = _counts_table([[1e-4, 2e-4], [3e-4, 1e-4]], [[0.02, 0.05], [0.03, 0.03]], 100, 100_000)
    table = table.drop(columns=["fnmr" if kept == "fmr" else "fmr"])
    result, how = U.analyse(table, ["garbe"], method=method, n_replicates=50)
    assert result.kind == kind and result.params["rates"] == [kept]
    assert result.params["accuracy"] == f"total_{kept}"
    point = evaluate(table, "garbe")
    rows = result.intervals.set_index("algorithm")
    np.testing.assert_allclose(rows["value"], point["value"])
    assert rows[f"{'fnmr' if kept == 'fmr' else 'fmr'}_term"].isna().all()
    assert f"total_{kept}" in result.frontier.columns
    absent = result.fnmr if kept == "fmr" else result.fmr
    assert np.isnan(absent).all()
