"""Pareto frontiers (Howard et al. sec. 3.6, 4.5) and the down-select table."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from audit.analysis import pareto
from audit.analysis.pareto import downselect, efficient, frontier_frame, summary
from audit.measures.registry import get_measure, measure_names
from audit.tables.rates import read_rates
from audit.validation import REFUSED

LOW = [False, False]  # both criteria lower-is-better


def _literal_efficient(points, higher_is_better, weak=False):
    """Slow transcription of the standard definitions, one pair at a time."""
    p = np.asarray(points, dtype=float)
    sign = np.where(higher_is_better, -1.0, 1.0)
    p = p * sign
    out = []
    for i in range(len(p)):
        beaten = False
        for j in range(len(p)):
            if weak:
                beaten |= all(p[j] < p[i])
            else:
                beaten |= all(p[j] <= p[i]) and any(p[j] < p[i])
        out.append(not beaten)
    return np.array(out, dtype=bool)


def _paper_eq10(points):
    """Eq. 10 of Howard et al. as printed: strictly below every other point on both axes."""
    p = np.asarray(points, dtype=float)
    return np.array([all((p[n] < np.delete(p, n, axis=0)).all(axis=0)) for n in range(len(p))])


# --- efficient: hand-built cases -------------------------------------------------------


@pytest.mark.parametrize(
    ("points", "strong", "weak"),
    [
        # a single point dominating all others
        ([[0.1, 0.1], [0.2, 0.3], [0.3, 0.2], [0.5, 0.5]], [1, 0, 0, 0], [1, 0, 0, 0]),
        # every point on the frontier (a strict trade-off)
        ([[0.1, 0.9], [0.2, 0.5], [0.4, 0.3], [0.8, 0.1]], [1, 1, 1, 1], [1, 1, 1, 1]),
        # a tie on the first axis: the fairer one dominates, the other is weakly efficient
        ([[0.1, 0.5], [0.1, 0.3], [0.3, 0.1]], [0, 1, 1], [1, 1, 1]),
        # a tie on the second axis
        ([[0.1, 0.5], [0.2, 0.5], [0.3, 0.1]], [1, 0, 1], [1, 1, 1]),
        # duplicated frontier point: both efficient
        ([[0.1, 0.5], [0.1, 0.5], [0.3, 0.1], [0.4, 0.6]], [1, 1, 1, 0], [1, 1, 1, 0]),
        # duplicated dominated point: neither efficient
        ([[0.1, 0.1], [0.2, 0.2], [0.2, 0.2]], [1, 0, 0], [1, 0, 0]),
        # all points identical: all efficient
        ([[0.2, 0.2]] * 3, [1, 1, 1], [1, 1, 1]),
        # one point
        ([[0.3, 0.4]], [1], [1]),
    ],
)
def test_hand_built_frontiers(points, strong, weak):
    np.testing.assert_array_equal(efficient(points, higher_is_better=LOW), np.array(strong, bool))
    np.testing.assert_array_equal(
        efficient(points, higher_is_better=LOW, weak=True), np.array(weak, bool)
    )


def test_no_points():
    assert efficient(np.empty((0, 2)), higher_is_better=LOW).shape == (0,)
    assert efficient(np.empty((3, 0, 2)), higher_is_better=LOW).shape == (3, 0)


@pytest.mark.parametrize("flip", list(itertools.product([False, True], repeat=2)))
def test_directions(flip):
    """Negating a criterion and flipping its direction gives the same frontier."""
    rng = np.random.default_rng(0)
    points = rng.integers(0, 5, size=(40, 2)).astype(float)
    expected = efficient(points, higher_is_better=LOW)
    signed = points * np.where(flip, -1.0, 1.0)
    np.testing.assert_array_equal(efficient(signed, higher_is_better=list(flip)), expected)


def test_fdr_direction_is_higher_is_fairer():
    # accuracy error (lower better), FDR (higher fairer): (0.1, 0.90) vs (0.2, 0.95) trade off,
    # (0.3, 0.92) is dominated by (0.2, 0.95).
    pts = [[0.1, 0.90], [0.2, 0.95], [0.3, 0.92]]
    np.testing.assert_array_equal(efficient(pts, higher_is_better=[False, True]), [1, 1, 0])
    # read with the wrong direction, the answer differs
    np.testing.assert_array_equal(efficient(pts, higher_is_better=[False, False]), [1, 0, 0])


def test_three_criteria():
    pts = [[1, 1, 3], [1, 3, 1], [3, 1, 1], [2, 2, 2], [3, 3, 3]]
    np.testing.assert_array_equal(efficient(pts, higher_is_better=[False] * 3), [1, 1, 1, 1, 0])


def test_batch_is_the_same_as_one_at_a_time():
    rng = np.random.default_rng(1)
    points = rng.integers(0, 6, size=(50, 30, 2)).astype(float)
    batched = efficient(points, higher_is_better=LOW)
    assert batched.shape == (50, 30)
    for b in range(50):
        np.testing.assert_array_equal(batched[b], efficient(points[b], higher_is_better=LOW))
    nested = efficient(points.reshape(5, 10, 30, 2), higher_is_better=LOW)
    np.testing.assert_array_equal(nested.reshape(50, 30), batched)


def test_tolerance_turns_float_noise_into_ties():
    pts = [[0.1 + 0.2, 0.5], [0.3, 0.4]]  # 0.30000000000000004 vs 0.3
    np.testing.assert_array_equal(efficient(pts, higher_is_better=LOW), [False, True])
    np.testing.assert_array_equal(efficient(pts, higher_is_better=LOW, weak=True), [False, True])
    np.testing.assert_array_equal(
        efficient(pts, higher_is_better=LOW, rtol=1e-9, weak=True), [True, True]
    )


def test_infinities_are_ordered():
    pts = [[np.inf, 0.1], [0.2, np.inf], [0.3, 0.3], [np.inf, np.inf]]
    np.testing.assert_array_equal(efficient(pts, higher_is_better=LOW), [1, 1, 1, 0])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            dict(points=[[0.1, np.nan], [0.2, 0.3]], higher_is_better=LOW),
            pareto.NAN_POINTS.format(count=1),
        ),
        (dict(points=[0.1, 0.2], higher_is_better=LOW), pareto.BAD_POINTS_SHAPE.format(shape=(2,))),
        (
            dict(points=np.empty((3, 0)), higher_is_better=[]),
            REFUSED.format(
                name="higher_is_better", expected="a non-empty sequence of true or false", value=[]
            ),
        ),
        (
            dict(points=[[0.1, 0.2]], higher_is_better=[False]),
            pareto.BAD_DIRECTIONS.format(k=2, directions=[False]),
        ),
        (
            dict(points=[[0.1, 0.2]], higher_is_better=[0, 1]),
            REFUSED.format(
                name="higher_is_better",
                expected="a non-empty sequence of true or false",
                value=[0, 1],
            ),
        ),
        (
            dict(points=[[0.1, 0.2]], higher_is_better=LOW, rtol=-1),
            REFUSED.format(name="rtol", expected="a number of at least 0", value=-1),
        ),
    ],
)
def test_efficient_errors(kwargs, message):
    points = kwargs.pop("points")
    with pytest.raises(ValueError) as error:
        efficient(points, **kwargs)
    assert str(error.value) == message


@settings(max_examples=200, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=12),
        elements=st.integers(0, 4).map(float),
    ),
    st.data(),
)
def test_against_the_literal_definition(points, data):
    k = points.shape[1]
    directions = data.draw(st.lists(st.booleans(), min_size=k, max_size=k))
    strong = efficient(points, higher_is_better=directions)
    weak = efficient(points, higher_is_better=directions, weak=True)
    np.testing.assert_array_equal(strong, _literal_efficient(points, directions))
    np.testing.assert_array_equal(weak, _literal_efficient(points, directions, weak=True))
    assert (weak | ~strong).all()  # strongly efficient => weakly efficient
    assert strong.any()  # a finite set always has an efficient point


def test_paper_eq10_as_printed_is_not_a_frontier():
    """Eq. 10 read literally picks a point beating all others on both axes: none on a trade-off."""
    trade_off = [[0.1, 0.9], [0.2, 0.5], [0.4, 0.3], [0.8, 0.1]]
    assert not _paper_eq10(trade_off).any()
    assert efficient(trade_off, higher_is_better=LOW).all()
    dominating = [[0.1, 0.1], [0.2, 0.3], [0.3, 0.2]]
    np.testing.assert_array_equal(
        _paper_eq10(dominating), efficient(dominating, higher_is_better=LOW)
    )


# --- frontier_frame and downselect on hand-built tables -------------------------------


def _table(fnmr_pairs, fmr=1e-4):
    names = [f"alg{i}" for i in range(len(fnmr_pairs))]
    return read_rates(
        pd.DataFrame(
            {
                "Algorithm": names,
                "FMR.F": [fmr] * len(names),
                "FMR.M": [fmr] * len(names),
                "FNMR.F": [p[0] for p in fnmr_pairs],
                "FNMR.M": [p[1] for p in fnmr_pairs],
            }
        )
    )


@pytest.fixture
def small():
    # total FNMR (equal weights) and GARBE (alpha 0.5 -> half the FNMR Gini; FMR equal):
    # alg0 0.02 / 0.25, alg1 0.03 / 0.0, alg2 0.04 / 0.125, alg3 0.02 / 0.25 (duplicate of alg0),
    # alg4 0.05 / 0.0 (ties alg1 on fairness, less accurate)
    return _table([(0.01, 0.03), (0.03, 0.03), (0.03, 0.05), (0.01, 0.03), (0.05, 0.05)])


def test_frontier_frame(small):
    f = frontier_frame(small, "garbe")
    assert list(f.columns) == ["accuracy", "fairness", "on_frontier", "weakly_efficient"]
    np.testing.assert_allclose(f["accuracy"], [0.02, 0.03, 0.04, 0.02, 0.05])
    np.testing.assert_allclose(f["fairness"], [0.25, 0.0, 0.125, 0.25, 0.0], atol=1e-12)
    assert f["on_frontier"].tolist() == [True, True, False, True, False]
    assert f["weakly_efficient"].tolist() == [True, True, False, True, True]
    assert f.attrs["measure"] == "garbe" and f.attrs["higher_is_fairer"] is False
    assert f.attrs["n_candidates"] == 5 and f.attrs["n_frontier"] == 3
    assert f.attrs["weights"].startswith("total_fnmr and total_fmr: equal group weights")


def test_downselect_table(small):
    d = downselect(small, "garbe")
    assert list(d.index) == ["alg0", "alg3", "alg1"]  # ties on accuracy: then by name
    assert list(d.columns) == [
        "accuracy",
        "fairness",
        "accuracy_cost",
        "fairness_gain",
        "cost_per_gain",
        "accuracy_cost_from_best",
        "fairness_gain_from_best",
    ]
    np.testing.assert_allclose(d["accuracy_cost"], [0.0, 0.01, np.nan], atol=1e-12)
    np.testing.assert_allclose(d["fairness_gain"], [0.0, 0.25, np.nan], atol=1e-12)
    np.testing.assert_allclose(d["cost_per_gain"], [np.nan, 0.04, np.nan])
    np.testing.assert_allclose(d["accuracy_cost_from_best"], [0.0, 0.0, 0.01], atol=1e-12)
    np.testing.assert_allclose(d["fairness_gain_from_best"], [0.0, 0.0, 0.25], atol=1e-12)
    assert d.attrs["n_candidates"] == 5 and d.attrs["n_frontier"] == 3 and d.attrs["n_shown"] == 3
    assert d.attrs["share_removed"] == pytest.approx(0.4)


def test_max_accuracy_cuts_the_frontier(small):
    d = downselect(small, "garbe", max_accuracy=0.025)
    assert list(d.index) == ["alg0", "alg3"]
    assert np.isnan(d["accuracy_cost"].iloc[-1])
    assert d.attrs["n_frontier"] == 3 and d.attrs["n_shown"] == 2
    assert d.attrs["share_removed_with_cutoff"] == pytest.approx(0.6)
    assert downselect(small, "garbe", max_accuracy=0.001).empty


def test_higher_is_fairer_measure_gives_positive_gains():
    t = _table([(0.01, 0.05), (0.03, 0.04), (0.045, 0.045)])
    d = downselect(t, "fdr")
    assert get_measure("fdr").higher_is_fairer
    assert list(d.index) == ["alg0", "alg1", "alg2"]
    assert (d["fairness"].diff().dropna() > 0).all()  # fairer (higher FDR) as accuracy drops
    assert (d["fairness_gain"].dropna() > 0).all() and (d["accuracy_cost"].dropna() > 0).all()


def test_weights_change_the_accuracy_axis():
    t = _table([(0.01, 0.05), (0.04, 0.03)])
    equal = frontier_frame(t)
    weighted = frontier_frame(t, weights={"n_mated": {"F": 9, "M": 1}})
    np.testing.assert_allclose(equal["accuracy"], [0.03, 0.035])
    np.testing.assert_allclose(weighted["accuracy"], [0.014, 0.039])
    assert "user-supplied mated weights" in weighted.attrs["weights"]


def test_user_supplied_accuracy():
    t = _table([(0.01, 0.03), (0.03, 0.03), (0.03, 0.05)])
    tmr = pd.Series({"alg2": 0.999, "alg0": 0.99, "alg1": 0.98}, name="TMR at FMR 1e-6")
    f = frontier_frame(t, accuracy=tmr, accuracy_higher_is_better=True)
    np.testing.assert_allclose(f["accuracy"], [0.99, 0.98, 0.999])
    assert f.attrs["accuracy_label"] == "TMR at FMR 1e-6"
    assert f.attrs["weights"] == "user-supplied accuracy 'TMR at FMR 1e-6'; no group weights used"
    # GARBE: alg0 0.25, alg1 0.0, alg2 0.125; alg2 (most accurate, fairer) dominates alg0
    d = downselect(t, accuracy=tmr, accuracy_higher_is_better=True)
    assert list(d.index) == ["alg2", "alg1"]  # most accurate first
    np.testing.assert_allclose(d["accuracy_cost"], [0.019, np.nan])
    np.testing.assert_allclose(d["fairness_gain"], [0.125, np.nan])
    cut = downselect(t, accuracy=tmr, accuracy_higher_is_better=True, max_accuracy=0.985)
    assert list(cut.index) == ["alg2"]  # alg1 (0.98) is below the cut-off


def test_accuracy_errors(small):
    with pytest.raises(ValueError) as error:
        frontier_frame(small, accuracy="tar")
    assert str(error.value) == REFUSED.format(
        name="accuracy",
        expected="one of 'total_fnmr', 'total_fmr' or a pandas Series of values indexed by "
        "algorithm",
        value="tar",
    )
    partial = pd.Series({"alg0": 0.1, "zzz": 0.2})
    with pytest.raises(ValueError) as error:
        frontier_frame(small, accuracy=partial)
    assert str(error.value) == pareto.ACCURACY_ALGORITHMS.format(
        missing=["alg1", "alg2", "alg3", "alg4"], extra=["zzz"]
    )
    holes = pd.Series({f"alg{i}": (np.nan if i == 2 else 0.1) for i in range(5)}, name="x")
    with pytest.raises(ValueError) as error:
        frontier_frame(small, accuracy=holes)
    assert str(error.value) == pareto.UNDEFINED_ACCURACY.format(name="x", algorithms=["alg2"])
    with pytest.raises(ValueError) as error:
        frontier_frame(small, undefined="drop")
    assert str(error.value) == REFUSED.format(
        name="undefined", expected="one of 'raise', 'exclude', 'keep'", value="drop"
    )


def test_undefined_measure_is_refused_then_excluded_on_request():
    # alg1 has a zero FNMR: IR divides by it (NaN)
    t = _table([(0.01, 0.03), (0.0, 0.02), (0.03, 0.05)])
    with pytest.raises(ValueError) as error:
        frontier_frame(t, "ir")
    assert str(error.value) == pareto.UNDEFINED_FAIRNESS.format(
        measure="IR",
        alpha=0.5,
        count=1,
        total=3,
        algorithms=["alg1"],
        keep="",  # 'keep' is not offered: IR's convention is NaN, which 'keep' refuses
    )
    with pytest.raises(ValueError) as error:
        frontier_frame(t, "ir", undefined="keep")  # NaN cannot be kept
    assert str(error.value) == pareto.UNDEFINED_FAIRNESS.format(
        measure="IR", alpha=0.5, count=1, total=3, algorithms=["alg1"], keep=""
    )
    f = frontier_frame(t, "ir", undefined="exclude")
    assert list(f.index) == ["alg0", "alg2"] and f.attrs["excluded"] == ["alg1"]
    d = downselect(t, "ir", undefined="exclude")
    assert d.attrs["excluded"] == ["alg1"] and d.attrs["n_candidates"] == 2
    assert "Excluded as undefined (1): alg1." in summary(d)


def test_convention_values_need_consent():
    # every group's FMR is 0: GARBE's FMR Gini is undefined, set to 0 by convention
    t = _table([(0.01, 0.03), (0.03, 0.03)], fmr=0.0)
    with pytest.raises(ValueError):
        frontier_frame(t, "garbe")
    kept = frontier_frame(t, "garbe", undefined="keep")
    np.testing.assert_allclose(kept["fairness"], [0.25, 0.0])
    assert kept.attrs["excluded"] == []
    with pytest.raises(ValueError) as error:
        frontier_frame(t, "garbe", undefined="exclude")
    assert str(error.value) == pareto.NO_CANDIDATES.format(
        total=2, reasons=pareto.UNDEFINED_HERE.format(count=2, measure="GARBE")
    )
    with pytest.raises(ValueError) as error:
        frontier_frame(_table([(0.01, 0.03)], fmr=0.0), "garbe", undefined="exclude")
    assert str(error.value) == (
        "no algorithm is left to compare: of the 1, 1 have an undefined GARBE (excluded as "
        "undefined)"
    )


def test_an_accuracy_joining_no_algorithm_is_said_to_be_why_none_is_left(tmp_path):
    """An accuracy table naming none of the algorithms was said to leave every one
    "excluded as undefined", also with undefined='keep'."""
    from audit.tables.accuracy import read_accuracy

    t = _table([(0.01, 0.03), (0.03, 0.03)])
    path = tmp_path / "acc.csv"
    path.write_text("algorithm,acc\nzzz,0.1\nyyy,0.2\n")
    accuracy = read_accuracy(path, "acc")
    for undefined in ("exclude", "keep"):
        with pytest.raises(ValueError) as error, pytest.warns(UserWarning, match="0 of the 2"):
            frontier_frame(t, "garbe", accuracy=accuracy, undefined=undefined, unmatched="exclude")
        assert str(error.value) == pareto.NO_CANDIDATES.format(
            total=2,
            reasons=pareto.NO_ACCURACY.format(count=2, name="acc", source=f" (2 not in {path})"),
        )
    # in the table, with empty cells: not "none in" it
    path.write_text("algorithm,acc\nalg0,\nalg1,nan\nzzz,0.1\n")
    with pytest.raises(ValueError) as error, pytest.warns(UserWarning, match="0 of the 2"):
        frontier_frame(t, "garbe", accuracy=read_accuracy(path, "acc"), unmatched="exclude")
    assert str(error.value).endswith(
        pareto.NO_ACCURACY.format(count=2, name="acc", source=" (2 with an empty cell there)")
    )


def test_summary(small):
    text = summary(downselect(small, "garbe", max_accuracy=0.025))
    assert text == (
        "3 of 5 algorithms lie on the Total FNMR / GARBE (alpha=0.5) Pareto frontier: the "
        "frontier removes 40.0% of the candidates. With Total FNMR <= 0.025, 2 remain (60.0% "
        "removed). Weights: total_fnmr and total_fmr: equal group weights (each of the 2 groups "
        "counts 1/2); not weighted by comparison counts."
    )


# --- Annex 15 ----------------------------------------------------------------------------

EQUAL_WEIGHT_FRONTIER = [
    "didiglobalface-001",
    "alphaface-001",
    "intellifusion-001",
    "shaman-001",
    "microfocus-002",
    "nodeflux-001",
]


def test_annex15_garbe_frontier_equal_weights(annex15):
    d = downselect(annex15, "garbe", alpha=0.5)
    assert list(d.index) == EQUAL_WEIGHT_FRONTIER
    # Howard et al. sec. 4.5: GARBE ~0.54 and ~0.37 for the two ends of the inset frontier.
    assert d.loc["didiglobalface-001", "fairness"] == pytest.approx(0.54, abs=0.005)
    assert d.loc["intellifusion-001", "fairness"] == pytest.approx(0.37, abs=0.005)
    # "0.17 less GARBE" (GARBE does not depend on the weights) ...
    assert d.loc["intellifusion-001", "fairness_gain_from_best"] == pytest.approx(0.17, abs=0.005)
    # ... for 0.00275 more total FNMR with equal weights (the paper's 0.0016 used mated counts).
    assert d.loc["intellifusion-001", "accuracy_cost_from_best"] == pytest.approx(0.00275)
    assert d.attrs["n_candidates"] == 126 and d.attrs["n_frontier"] == 6
    assert d.attrs["share_removed"] == pytest.approx(120 / 126)
    assert "equal group weights (each of the 8 groups counts 1/8)" in d.attrs["weights"]
    inset = downselect(annex15, "garbe", max_accuracy=0.01)
    assert list(inset.index) == EQUAL_WEIGHT_FRONTIER[:3]


def test_annex15_ties_are_real(annex15):
    f = frontier_frame(annex15)
    # intellifusion-001 and tevian-005 have the same total FNMR (0.0058125) with equal weights.
    assert f.loc["tevian-005", "accuracy"] == f.loc["intellifusion-001", "accuracy"]
    assert f.loc["tevian-005", "weakly_efficient"] and not f.loc["tevian-005", "on_frontier"]
    assert list(f.index[f["weakly_efficient"] & ~f["on_frontier"]]) == ["tevian-005"]


@pytest.mark.parametrize("alpha", [0.0, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("name", measure_names(inputs="rates"))
def test_annex15_every_registered_measure(annex15, name, alpha):
    d = downselect(annex15, name, alpha=alpha, undefined="exclude")
    f = frontier_frame(annex15, name, alpha=alpha, undefined="exclude")
    assert 1 <= len(d) == d.attrs["n_frontier"] == int(f["on_frontier"].sum())
    assert d.attrs["n_candidates"] + len(d.attrs["excluded"]) == 126
    assert (d["accuracy"].diff().dropna() >= 0).all()
    assert (d["fairness_gain"].dropna() >= 0).all()
    # the frontier is the brute-force set of non-dominated points (floating-point noise in the
    # totals rounded away, as the tie tolerance does)
    sign = -1.0 if get_measure(name).higher_is_fairer else 1.0
    acc = np.round(f["accuracy"].to_numpy(), 12)
    fair = np.round(sign * f["fairness"].to_numpy(), 12)
    n = len(acc)
    oracle = [
        not any(
            acc[j] <= acc[i] and fair[j] <= fair[i] and (acc[j] < acc[i] or fair[j] < fair[i])
            for j in range(n)
        )
        for i in range(n)
    ]
    np.testing.assert_array_equal(oracle, f["on_frontier"].to_numpy())


def test_annex15_counts_file(annex15, tmp_path):
    """A counts file is honoured; the numbers here are illustrative, not NIST's."""
    groups = pd.unique(annex15["group"])
    path = tmp_path / "counts.csv"
    path.write_text(
        "group,n_mated\n" + "".join(f"{g},{100 if 'White' in g else 1}\n" for g in groups)
    )
    d = downselect(annex15, "garbe", weights=path)
    assert d.attrs["weights"].startswith(
        f"total_fnmr: groups weighted by their number of mated comparisons (n_mated column of {path}"
    )
    assert d.attrs["n_candidates"] == 126 and d.attrs["n_frontier"] >= 1


def test_weight_sensitivity_small():
    # alg0 and alg1 mirror each other (same GARBE): whichever group weighs more decides which
    # is more accurate, and that one dominates the other. alg2 is worse than alg1 in both
    # groups and less fair, so it is dominated whatever the weights.
    t = _table([(0.01, 0.05), (0.05, 0.01), (0.06, 0.01)])
    out = pareto.weight_sensitivity(t, n_draws=500, seed=3)
    assert out.loc["alg2", "share_on_frontier"] == 0.0
    shares = out.loc[["alg0", "alg1"], "share_on_frontier"]
    assert (shares > 0.3).all() and (shares < 0.7).all()
    assert shares.sum() == pytest.approx(1.0)
    assert out.attrs["weights"] == (
        "500 random group weightings of total_fnmr (symmetric Dirichlet, concentration 1, seed 3)"
    )
    assert (out["min_accuracy"] >= 0.01 - 1e-12).all() and (
        out["max_accuracy"] <= 0.06 + 1e-12
    ).all()
    with pytest.raises(ValueError) as error:
        pareto.weight_sensitivity(t, accuracy="tar")
    assert str(error.value) == REFUSED.format(
        name="accuracy", expected="one of 'total_fnmr', 'total_fmr'", value="tar"
    )


def test_weight_sensitivity_annex15(annex15):
    out = pareto.weight_sensitivity(annex15, n_draws=2000)
    always = out.index[out["share_on_frontier"] == 1.0]
    assert set(always) == set(EQUAL_WEIGHT_FRONTIER)
    sometimes = out.index[(out["share_on_frontier"] > 0) & (out["share_on_frontier"] < 1)]
    assert {"tevian-005", "visionlabs-006"} <= set(sometimes)
    assert out.attrs["frontier_sizes"][0] == 6
