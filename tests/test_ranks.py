"""Rank agreement (audit.analysis.ranks): Kendall's tau-b and Spearman's rho counted by hand
with ties, the vectorised bootstrap against scipy on every resample, seeded intervals, and
undefined values left out of a pair only."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from processes import imported_by
from scipy.stats import kendalltau, rankdata

from audit.analysis.ranks import (
    _counts,
    agreement,
    agreement_matrix,
    average_ranks,
    min_replicates,
    spearman_rho,
    square,
    tau_b,
    tau_b_replicates,
)
from audit.exceptions import ParameterError


def test_tau_b_with_ties_counted_by_hand():
    """x = 1, 2, 2, 3 and y = 1, 3, 2, 3: of the 6 pairs 4 are concordant, none discordant,
    one tied in x only (2, 3), one in y only (2, 4): tau-b = 4 / sqrt(5 * 5) = 0.8."""
    got = agreement([1, 2, 2, 3], [1, 3, 2, 3], n_replicates=0)
    assert got["value"] == pytest.approx(0.8)
    assert got["n"] == 4 and np.isnan(got["low"]) and got["replicates"] == 0


def test_spearman_counted_by_hand():
    """x = 1..5, y = 2, 1, 3, 5, 4: sum d^2 = 4, rho = 1 - 6 * 4 / (5 * 24) = 0.8."""
    got = agreement([1, 2, 3, 4, 5], [2, 1, 3, 5, 4], method="spearman", n_replicates=0)
    assert got["value"] == pytest.approx(0.8)


def test_reversed_order_is_minus_one_and_constant_is_undefined():
    assert agreement([1, 2, 3], [3, 2, 1], n_replicates=0)["value"] == pytest.approx(-1.0)
    assert np.isnan(agreement([1, 1, 1], [3, 2, 1], n_replicates=0)["value"])
    assert np.isnan(agreement([1, 2], [1, 2], n_replicates=0)["value"])  # two algorithms


def test_undefined_values_leave_their_algorithm_out_of_the_pair_only():
    got = agreement([1, 2, np.nan, 3, 4], [1, 2, 5, np.inf, 4], n_replicates=0)
    assert got["n"] == 3  # the third (x NaN) and the fourth (y infinite) are left out
    assert got["value"] == pytest.approx(1.0)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(3, 25).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, 4), min_size=n, max_size=n),
            st.lists(st.integers(0, 4), min_size=n, max_size=n),
            st.integers(0, 2**31 - 1),
        )
    )
)
def test_vectorised_replicates_equal_scipy_on_each_resample(case):
    """The bootstrap's tau-b of a resample (counts of each algorithm) is scipy's tau-b of the
    resampled values, ties and repeated algorithms included."""
    x, y, seed = (np.asarray(case[0], float), np.asarray(case[1], float), case[2])
    counts = _counts(len(x), 5, np.random.default_rng(seed))
    fast = tau_b_replicates(x, y, counts)
    for b in range(5):
        drawn = np.repeat(np.arange(len(x)), counts[b])
        slow = kendalltau(x[drawn], y[drawn], variant="b").statistic
        if np.isnan(slow):
            assert np.isnan(fast[b])
        else:
            assert fast[b] == pytest.approx(slow, abs=1e-12)


#: Values of a measure: small integers (ties), any floats, infinities, the largest.
VALUES = (
    st.integers(0, 6)
    | st.floats(-1e6, 1e6)
    | st.sampled_from([np.inf, -np.inf, 1.7e308, -1.7e308, 0.0, -0.0])
)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(3, 60).flatmap(
        lambda n: st.tuples(
            st.lists(VALUES, min_size=n, max_size=n),
            st.lists(VALUES, min_size=n, max_size=n),
        )
    )
)
def test_point_coefficients_are_scipys_bit_for_bit(case):
    """Kendall's tau-b and Spearman's rho of a pair, computed without scipy, are the
    numbers scipy gives, to the last bit (ties, integers, any floats, infinities and the
    largest floats, whose differences overflow)."""
    from scipy.stats import spearmanr

    x, y = (np.asarray(values, float) for values in case)
    if np.all(x == x[0]) or np.all(y == y[0]):  # undefined: see the test below
        return
    assert tau_b(x, y) == kendalltau(x, y, variant="b").statistic
    if np.isfinite(x).all() and np.isfinite(y).all():  # (agreement leaves infinities out)
        assert spearman_rho(x, y) == spearmanr(x, y).statistic
        assert agreement(x, y, n_replicates=0)["value"] == tau_b(x, y)
        assert agreement(x, y, method="spearman", n_replicates=0)["value"] == spearman_rho(x, y)


@pytest.mark.parametrize(
    "x, y",
    [([1, 1, 1], [1, 2, 3]), ([1, 2, 3], [4, 4, 4]), ([1, np.nan, 3], [1, 2, 3]), ([1], [2]),
     ([], [])],
    ids=["x all tied", "y all tied", "a NaN", "one value", "none"],
)  # fmt: skip
def test_point_coefficients_are_nan_where_scipys_are(x, y):
    """Where the coefficient is undefined, NaN, as scipy gives it (not -1: 0 / 0 once met
    a clip to [-1, 1])."""
    import warnings

    from scipy.stats import spearmanr

    assert np.isnan(tau_b(x, y)) and np.isnan(spearman_rho(x, y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns of a constant input
        assert np.isnan(kendalltau(x, y, variant="b").statistic)
        assert len(x) < 2 or np.isnan(spearmanr(x, y).statistic)


def test_point_coefficients_refuse_unequal_lengths_and_tau_b_flattens_as_scipy():
    from audit.exceptions import ParameterError

    with pytest.raises(ParameterError, match="give 3 and 1 values: one value for each"):
        tau_b([1, 2, 3], [5])
    with pytest.raises(ParameterError, match="give 2 and 3 values"):
        spearman_rho([1, 2], [1, 2, 3])
    x, y = [[1.0, 2.0], [3.0, 4.0]], [[1.0, 3.0], [2.0, 4.0]]
    assert tau_b(x, y) == kendalltau(x, y, variant="b").statistic == pytest.approx(2 / 3)
    with pytest.raises(ParameterError, match="two one-dimensional variables, not arrays of 2"):
        spearman_rho(x, y)  # scipy would read each column as a variable


def test_many_algorithms_are_counted_by_scipy(monkeypatch):
    """Above a few thousand algorithms the pairs are many: tau-b is scipy's, whose count
    grows as n log n (the value is the same either side of the threshold)."""
    from audit.analysis import ranks

    rng = np.random.default_rng(4)
    x, y = rng.integers(0, 50, 300).astype(float), rng.normal(size=300)
    ours = tau_b(x, y)
    monkeypatch.setattr(ranks, "_SCIPY_ABOVE", 100)
    assert tau_b(x, y) == ours == kendalltau(x, y, variant="b").statistic


def test_tau_b_counted_in_blocks_of_rows_is_the_same(monkeypatch):
    """The pairs counted a few rows at a time (as for thousands of algorithms, so that
    memory stays bounded) give the same coefficient, to the last bit."""
    from audit.analysis import ranks

    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 20, 500).astype(float), rng.normal(size=500)
    whole = tau_b(x, y)
    monkeypatch.setattr(ranks, "_PAIRS_AT_ONCE", 7 * 500)  # blocks of 7 rows, the last of 3
    assert tau_b(x, y) == whole == kendalltau(x, y, variant="b").statistic


def test_agreement_imports_no_scipy():
    """Importing scipy.stats costs more than a report's coefficients: the cross-dataset
    audit computes them, and the ranks of its scatter, without it."""
    code = (
        "import numpy as np, pandas as pd\n"
        "from audit.analysis.ranks import agreement, agreement_matrix\n"
        "from audit.analysis.compare import _ranks\n"
        "x, y = np.arange(10.0), np.array([1, 0, 2, 3, 5, 4, 6, 7, 9, 8.0])\n"
        "agreement(x, y, n_replicates=20); agreement(x, y, method='spearman', n_replicates=20)\n"
        "agreement_matrix(pd.DataFrame({'a': x, 'b': y}), n_replicates=20)\n"
        "_ranks(pd.Series(y))\n"
    )
    assert imported_by(code, ["scipy.stats"]) == []


@settings(max_examples=60, deadline=None)
@given(
    hnp.arrays(
        "float64",
        hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=6),
        elements=st.sampled_from([-np.inf, -1.5, 0.0, 0.0, 2.0, 3.25, np.inf]),
    ),
    st.integers(0, 2),
)
def test_average_ranks_are_scipys_mid_ranks(values, axis):
    """Ties (runs of any length, infinities included) averaged as scipy's rankdata does,
    along any axis."""
    axis = axis % values.ndim
    expected = rankdata(values, axis=axis, method="average")
    np.testing.assert_array_equal(average_ranks(values, axis=axis), expected)


@pytest.mark.parametrize("n", [2, 126, 700])
def test_replicates_in_single_precision_are_the_double_precision_values(n):
    """Each replicate's sums are whole numbers below 2**24 (up to 4,096 algorithms): the
    single-precision products give exactly the values of the double-precision formula,
    ties, algorithms drawn many times and resamples tied in one variable included;
    counts that are not whole are taken in double precision."""
    rng = np.random.default_rng(n)
    x = rng.integers(0, 5, n).astype(float)  # many ties
    y = np.round(x + rng.random(n), 1)
    counts = _counts(n, 300, rng)
    counts[0] = 0
    counts[0, 0] = n  # one algorithm drawn n times: every pair tied (NaN)
    sx, sy = np.sign(x[:, None] - x[None, :]), np.sign(y[:, None] - y[None, :])

    def double(counts):
        c = np.asarray(counts, dtype=np.float64)
        joint = ((c @ (sx * sy)) * c).sum(axis=1)
        untied = ((c @ np.abs(sx)) * c).sum(axis=1) * ((c @ np.abs(sy)) * c).sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return joint / np.sqrt(untied)

    got = tau_b_replicates(x, y, counts)
    assert np.isnan(got[0])
    np.testing.assert_array_equal(got, double(counts))
    weights = counts + 0.1  # not whole numbers: computed in double precision
    np.testing.assert_array_equal(tau_b_replicates(x, y, weights), double(weights))


def test_average_ranks_by_hand():
    got = average_ranks(np.array([[2.0, 2.0, 2.0, 1.0], [np.inf, 0.0, np.inf, 5.0]]))
    np.testing.assert_array_equal(got, [[3.0, 3.0, 3.0, 1.0], [3.5, 1.0, 3.5, 2.0]])


def test_counts_are_resamples_of_the_full_size():
    counts = _counts(7, 100, np.random.default_rng(0))
    assert counts.shape == (100, 7) and (counts.sum(axis=1) == 7).all()


def test_interval_is_seeded_by_the_seed_and_the_names():
    rng = np.random.default_rng(1)
    x = rng.normal(size=40)
    y = x + rng.normal(size=40)
    one = agreement(x, y, n_replicates=300, seed=3, names=("a", "b"))
    again = agreement(x, y, n_replicates=300, seed=3, names=("a", "b"))
    other = agreement(x, y, n_replicates=300, seed=3, names=("a", "c"))
    assert (one["low"], one["high"]) == (again["low"], again["high"])
    assert (one["low"], one["high"]) != (other["low"], other["high"])
    assert one["low"] < one["value"] < one["high"]
    assert one["replicates"] == 300
    spearman = agreement(x, y, method="spearman", n_replicates=300, seed=3)
    assert spearman["low"] < spearman["value"] < spearman["high"]


def test_a_pair_does_not_change_when_a_variable_is_added():
    rng = np.random.default_rng(2)
    values = pd.DataFrame(rng.normal(size=(30, 2)), columns=["a", "b"])
    first = agreement_matrix(values, n_replicates=200, seed=0)
    values["c"] = rng.normal(size=30)
    second = agreement_matrix(values, n_replicates=200, seed=0)
    assert first.iloc[0].to_dict() == second.iloc[0].to_dict()
    assert len(second) == 3


def test_square_is_symmetric_with_ones_on_the_diagonal():
    pairs = pd.DataFrame(
        {"first": ["a", "a", "b"], "second": ["b", "c", "c"], "tau": [0.5, -0.2, 0.1]}
    )
    matrix = square(pairs, ["a", "b", "c"])
    assert np.allclose(matrix.to_numpy(), matrix.to_numpy().T)
    assert np.diag(matrix.to_numpy()).tolist() == [1.0, 1.0, 1.0]
    assert matrix.loc["c", "a"] == -0.2


@pytest.mark.parametrize(
    ("keyword", "value", "expected"),
    [
        ("method", "pearson", "one of 'kendall', 'spearman'"),
        ("n_replicates", -1, "a whole number of at least 0"),
        ("level", 1.0, "a number in (0, 1)"),
    ],
)
def test_options_are_checked_by_their_declaration(keyword, value, expected):
    with pytest.raises(ParameterError) as error:
        agreement([1, 2, 3], [1, 2, 3], **{keyword: value})
    assert str(error.value) == f"parameter {keyword}: expected {expected}, got {value!r}"


@pytest.mark.parametrize(("level", "needed"), [(0.95, 40), (0.9, 20), (0.8, 10)])
def test_an_interval_needs_a_replicate_beyond_each_end(level, needed):
    """A percentile interval read off fewer replicates than ``2 / (1 - level)`` has no
    replicate in a tail: none is given, and from that many on it is the percentiles of
    the replicates drawn (the same draws: the generator is seeded by the names)."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=30)
    y = x + rng.normal(size=30)
    short = agreement(x, y, n_replicates=needed - 1, level=level)
    assert np.isnan(short["low"]) and np.isnan(short["high"])
    assert short["replicates"] == needed - 1 and np.isfinite(short["value"])
    full = agreement(x, y, n_replicates=needed, level=level)
    assert -1 <= full["low"] <= full["high"] <= 1
    assert min_replicates(level) == needed
