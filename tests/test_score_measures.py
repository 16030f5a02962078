"""Score-based measures against literal transcriptions of the papers' equations."""

from __future__ import annotations

from itertools import permutations

import numpy as np
import pandas as pd
import pytest
from conftest import synthetic

from audit import scores as S
from audit.measures import scores as M
from audit.measures.kernels import UndefinedMeasureWarning
from audit.measures.registry import evaluate_scores, get_measure, measure_names
from audit.scores import read_scores, score_stats
from audit.scores.runs import Run, equal_error

SCORE_MEASURES = ["std_eer", "sed_mean", "sed_std", "dfi", "cei"]


@pytest.fixture(scope="module")
def table():
    return read_scores(synthetic(3000, round_to=2))


def brute_eer(mated, nonmated):
    """EER by scanning every candidate threshold literally (eq. 19)."""
    best = None
    for t in sorted(set(mated) | set(nonmated) | {np.inf}):
        fmr = np.mean(np.asarray(nonmated) >= t)
        fnmr = np.mean(np.asarray(mated) < t)
        if best is None or abs(fmr - fnmr) < best[0]:
            best = (abs(fmr - fnmr), (fmr + fnmr) / 2, t)
    return best[1], best[2]


def test_eer_against_brute_force():
    frame = synthetic(600, round_to=1)
    eers = M.eer_table(read_scores(frame))
    for _, row in eers.iterrows():
        a = frame[frame["algorithm"] == row["algorithm"]]
        m = a.loc[a["mated"] & (a["group_1"] == row["group"]), "score"]
        nm = a.loc[
            ~a["mated"] & (a["group_1"] == row["group"]) & (a["group_2"] == row["group"]), "score"
        ]
        eer, threshold = brute_eer(m.to_numpy(), nm.to_numpy())
        assert row["eer"] == pytest.approx(eer, abs=1e-15)
        assert row["threshold"] == threshold


def test_eer_distance_scores_flip_threshold():
    frame = synthetic(600, round_to=1, algorithms=("a",))
    near = M.eer_table(read_scores(frame))
    far = M.eer_table(read_scores(frame.assign(score=-frame["score"]), higher_is_match=False))
    np.testing.assert_allclose(near["eer"], far["eer"])


def test_std_eer_is_eq_21(table):
    eers = M.eer_table(table)
    result = M.std_eer(table)
    for i, algorithm in enumerate(["a", "b"]):
        values = eers.loc[eers["algorithm"] == algorithm, "eer"].to_numpy()
        mu = values.sum() / len(values)
        assert result.value[i] == pytest.approx(np.sqrt(((values - mu) ** 2).sum() / len(values)))


def literal_sed(frame, algorithm):
    """Elobaid et al. eq. 8-11 transcribed with loops over groups."""
    a = frame[frame["algorithm"] == algorithm]
    groups = list(pd.unique(a["group_1"]))
    thresholds = []
    for g in groups:
        m = a.loc[a["mated"] & (a["group_1"] == g), "score"].to_numpy()
        nm = a.loc[~a["mated"] & (a["group_1"] == g) & (a["group_2"] == g), "score"].to_numpy()
        thresholds.append(brute_eer(m, nm)[1])
    t = sum(thresholds) / len(thresholds)
    global_fmr = np.mean(a.loc[~a["mated"], "score"] >= t)
    global_fnmr = np.mean(a.loc[a["mated"], "score"] < t)
    seds = []
    for g in groups:
        fmr = np.mean(a.loc[~a["mated"] & (a["group_1"] == g) & (a["group_2"] == g), "score"] >= t)
        fnmr = np.mean(a.loc[a["mated"] & (a["group_1"] == g), "score"] < t)
        seds.append(abs(1 - fmr / global_fmr) + abs(1 - fnmr / global_fnmr))
    return np.mean(seds), np.std(seds)


def test_sed_against_literal_transcription():
    frame = synthetic(1500, round_to=2)
    table = read_scores(frame)
    mean, std = M.sed_mean(table), M.sed_std(table)
    for i, algorithm in enumerate(["a", "b"]):
        want_mean, want_std = literal_sed(frame, algorithm)
        assert mean.value[i] == pytest.approx(want_mean)
        assert std.value[i] == pytest.approx(want_std)
    np.testing.assert_allclose(mean.value, mean.fmr_term + mean.fnmr_term)


def test_sed_undefined_when_global_rate_is_zero():
    frame = pd.DataFrame(
        {
            "algorithm": "a",
            "group": ["F"] * 4 + ["M"] * 4,
            "score": [0.9, 0.8, 0.3, 0.1] * 2,
            "mated": [True, True, False, False] * 2,
        }
    )
    scores = read_scores(frame)
    with pytest.warns(UndefinedMeasureWarning) as caught:
        result = M.sed_mean(scores)
    assert str(caught[0].message) == M.SED_UNDEFINED.format(count=1, total=1, rate="FMR", eq="8")
    assert np.isnan(result.value[0]) and result.undefined[0]


def test_identical_groups_are_perfectly_fair():
    rng = np.random.default_rng(1)
    score = np.round(rng.normal(size=400) + 2 * (np.arange(400) % 3 == 0), 3)
    mated = np.arange(400) % 3 == 0
    frame = pd.DataFrame(
        {
            "algorithm": "a",
            "score": np.tile(score, 3),
            "mated": np.tile(mated, 3),
            "group": np.repeat(["F", "M", "X"], 400),
        }
    )
    table = read_scores(frame)
    assert M.std_eer(table).value[0] == 0.0
    assert M.sed_std(table).value[0] == pytest.approx(0.0, abs=1e-12)
    assert M.sed_mean(table).value[0] == pytest.approx(0.0, abs=1e-12)
    assert M.dfi(table).value[0] == pytest.approx(1.0)
    assert M.cei(table).value[0] == pytest.approx(1.0)


def _groups_in_order(order, mated, nonmated) -> pd.DataFrame:
    """A score table of one algorithm whose groups appear in ``order`` (their order in the
    statistics), scores given per group."""
    return pd.concat(
        [
            pd.DataFrame(
                {
                    "algorithm": "a",
                    "group": group,
                    "score": list(mated[group]) + list(nonmated[group]),
                    "mated": [True] * len(mated[group]) + [False] * len(nonmated[group]),
                }
            )
            for group in order
        ],
        ignore_index=True,
    )


def test_sed_threshold_is_the_mean_whatever_the_order_of_the_groups():
    # EER thresholds 0.1, 0.2 and 0.3 (each group's mated score): summed as floats in the
    # order A, B, C they give 0.6000000000000001 and a mean above 0.2, which left C's
    # non-mated 0.2 below the threshold and the global FMR at 0 (SED undefined), while other
    # orders gave 8/3.  At T = 0.2: global FMR = FNMR = 1/3; SED_A = 1 + |1 - 1 / (1/3)| = 3,
    # SED_B = 1 + 1 = 2, SED_C = |1 - 1 / (1/3)| + 1 = 3.
    mated = {"A": [0.1], "B": [0.2], "C": [0.3]}
    nonmated = {"A": [0.0], "B": [0.1], "C": [0.2]}
    for order in permutations("ABC"):
        table = read_scores(_groups_in_order(order, mated, nonmated))
        assert (M.sed_table(table)["threshold"] == 0.2).all()
        assert M.sed_mean(table).value[0] == pytest.approx(8 / 3, rel=1e-15)


def test_cei_does_not_depend_on_the_order_of_the_groups():
    # scores in tenths, found by a seeded search: the CDF of the mean non-mated distribution
    # reaches the percentile exactly, and summing the groups' distributions in the order
    # g0, g1, g3, g2 instead of g0, g1, g2, g3 rounded it across P (CEI 0.767 against 0.722)
    mated = {
        "g0": [7],
        "g1": [16, 18, 10, 24, 27, 8],
        "g2": [3, 12],
        "g3": [7, 0, 1, 20, 15, 25, 16, 7],
    }
    nonmated = {
        "g0": [14, 11, 14, 13],
        "g1": [0, 9, 11, 12, 2],
        "g2": [6, 2, 19, 19, 12],
        "g3": [15, 12],
    }
    mated = {g: np.array(s) / 10 for g, s in mated.items()}
    nonmated = {g: np.array(s) / 10 for g, s in nonmated.items()}
    values = [
        M.cei(read_scores(_groups_in_order(order, mated, nonmated))).value[0]
        for order in permutations(mated)
    ]
    assert np.ptp(values) < 1e-12


def test_dfi_is_zero_for_disjoint_groups():
    frame = pd.DataFrame(
        {
            "algorithm": "a",
            "group": ["F"] * 4 + ["M"] * 4,
            "score": [0.0, 0.1, 0.05, 0.02, 10.0, 9.9, 9.8, 9.95],
            "mated": [True, True, False, False] * 2,
        }
    )
    assert M.dfi(read_scores(frame), bins=10).value[0] == pytest.approx(0.0)


def literal_dfi(frame, algorithm, bins):
    a = frame[frame["algorithm"] == algorithm]
    edges = np.linspace(a["score"].min(), a["score"].max(), bins + 1)
    groups = list(pd.unique(a["group_1"]))
    hists = []
    for g in groups:
        s = a.loc[(a["group_1"] == g) & (a["mated"] | (a["group_2"] == g)), "score"]
        h, _ = np.histogram(s, edges)
        hists.append(h / h.sum())
    mean = np.mean(hists, axis=0)
    k = len(groups)
    total = sum(
        sum(p * np.log2(p / q) for p, q in zip(h, mean, strict=False) if p > 0) for h in hists
    )
    return 1 - total / (k * np.log2(k))


def test_dfi_against_numpy_histogram():
    frame = synthetic(2000)
    result = M.dfi(read_scores(frame), bins=30)
    for i, algorithm in enumerate(["a", "b"]):
        assert result.value[i] == pytest.approx(literal_dfi(frame, algorithm, 30))


def test_distribution_measures_of_scores_spanning_every_float(recwarn):
    """Scores from -1.7e308 to 1.7e308, whose range overflows a float: DFI and CEI bin
    them as they bin the same scores scaled down by a power of two, exactly -- scores
    on the edges of the bins included -- (and as a histogram of NumPy's does), with no
    warning of NumPy's on the way."""
    frame = synthetic(2000)
    frame["score"] /= frame["score"].abs().max()  # in [-1, 1]
    on_edges = np.linspace(-1, 1, 101)  # the edges of 100 bins of [-1, 1]
    frame.loc[: len(on_edges) - 1, "score"] = on_edges
    spread = frame["score"].clip(-1, 1)
    huge = read_scores(frame.assign(score=spread * 1.7e308))
    small = read_scores(frame.assign(score=spread * (1.7e308 / 4)))
    for name in ("dfi", "cei"):
        wide, narrow = getattr(M, name)(huge), getattr(M, name)(small)
        np.testing.assert_array_equal(wide.value, narrow.value)
        assert np.isfinite(wide.value).all()
    assert M.dfi(huge, bins=30).value[0] == pytest.approx(
        literal_dfi(frame.assign(score=spread * (1.7e308 / 4)), "a", 30)
    )
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_cei_sees_a_heavier_impostor_tail_dfi_misses():
    rng = np.random.default_rng(3)
    n = 20000
    frames = []
    for group, tail in (("F", 0.0), ("M", 0.01)):
        nm = rng.normal(0, 1, n)
        heavy = rng.random(n) < tail
        nm[heavy] = rng.normal(3, 0.3, heavy.sum())
        frames.append(pd.DataFrame({"algorithm": "a", "group": group, "mated": False, "score": nm}))
        frames.append(
            pd.DataFrame(
                {"algorithm": "a", "group": group, "mated": True, "score": rng.normal(5, 1, n)}
            )
        )
    table = read_scores(pd.concat(frames, ignore_index=True))
    c = M.cei(table, percentile=0.95)
    d = M.dfi(table)
    assert 1 - c.fmr_term[0] > 1 - d.value[0]
    assert c.fnmr_term[0] > c.fmr_term[0]


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda t: M.cei(t, percentile=1.0), M.BAD_PERCENTILE.format(value=1.0)),
        (
            lambda t: M.cei(t, w_tail=0.5, w_center=0.6),
            M.BAD_WEIGHTS.format(w_tail=0.5, w_center=0.6),
        ),
        (lambda t: M.dfi(t, bins=1), M.BAD_BINS.format(value=1)),
    ],
)
def test_option_errors(table, call, message):
    with pytest.raises(ValueError) as caught:
        call(table)
    assert str(caught.value) == message


def test_bounds_hold(table):
    for name in SCORE_MEASURES:
        measure = get_measure(name)
        value = measure.function(score_stats(table)).value
        low, high = measure.bounds
        assert (low is None or (value >= low).all()) and (high is None or (value <= high).all())


def test_registered_as_score_measures():
    for name in SCORE_MEASURES:
        measure = get_measure(name)
        assert name in measure_names()
        assert measure.inputs == "scores"
        assert measure.module == "audit.measures.scores"
        assert "eq." in measure.citation


def test_evaluate_scores_frame(table):
    out = evaluate_scores(table, cei={"percentile": 0.95})
    assert list(out.columns) == [
        "algorithm",
        "measure",
        "value",
        "fmr_term",
        "fnmr_term",
        "undefined",
    ]
    assert len(out) == 2 * len(SCORE_MEASURES)
    cei = out[out["measure"] == "cei"]["value"].to_numpy()
    np.testing.assert_allclose(cei, M.cei(table, percentile=0.95).value)


def cross_only_group():
    """F and M complete; X appears only in cross-group non-mated pairs (its own scores: none)."""
    return read_scores(
        pd.DataFrame(
            {
                "algorithm": "a",
                "score": [0.9, 0.8, 0.3, 0.1, 0.7, 0.6, 0.5, 0.2, 0.4, 0.35],
                "mated": [True, True, False, False] * 2 + [False, False],
                "group_1": ["F"] * 4 + ["M"] * 4 + ["X", "F"],
                "group_2": ["F"] * 4 + ["M"] * 4 + ["M", "X"],
            }
        )
    )


@pytest.mark.parametrize("name", SCORE_MEASURES)
def test_group_seen_only_in_cross_pairs_is_refused(name):
    with pytest.raises(S.ScoresError) as caught:
        get_measure(name).function(cross_only_group())
    assert str(caught.value) == M.NO_SCORES.format(
        measure=name, algorithm="a", group="X", kind="mated"
    )
    assert "refused" in get_measure(name).undefined
    with pytest.raises(S.ScoresError) as caught:  # as when the rates are read at an FMR
        S.rates_at_fmr(cross_only_group(), 0.5)
    assert "group 'X' has no mated comparisons" in str(caught.value)


@pytest.mark.parametrize("name", SCORE_MEASURES)
def test_group_without_within_group_nonmated_is_refused(name):
    frame = pd.DataFrame(
        {
            "algorithm": "a",
            "score": [0.9, 0.8, 0.3, 0.1, 0.7, 0.6, 0.5],
            "mated": [True, True, False, False, True, True, False],
            "group_1": ["F"] * 4 + ["M"] * 3,
            "group_2": ["F"] * 4 + ["M", "M", "F"],
        }
    )
    with pytest.raises(S.ScoresError) as caught:
        get_measure(name).function(read_scores(frame))
    assert str(caught.value) == M.NO_SCORES.format(
        measure=name, algorithm="a", group="M", kind="within-group non-mated"
    )


def _eer_by_sorting(mated, nonmated):
    """The EER over every candidate threshold, literally: the oracle of the bisection."""
    candidates = np.sort(np.concatenate([mated, nonmated, [np.inf]]))
    fmr = (len(nonmated) - np.searchsorted(nonmated, candidates, "left")) / len(nonmated)
    fnmr = np.searchsorted(mated, candidates, "left") / len(mated)
    at = int(np.argmin(np.abs(fmr - fnmr)))
    return (fmr[at] + fnmr[at]) / 2.0, float(candidates[at]), float(fmr[at]), float(fnmr[at])


@pytest.mark.parametrize("seed", range(40))
def test_eer_bisection_equals_the_argmin_over_all_candidates(seed):
    rng = np.random.default_rng(seed)
    n_m, n_nm = rng.integers(1, 60, 2)
    spread = [0, 1, 2, 6][seed % 4]  # rounding to few values makes ties and plateaus
    mated = np.sort(np.round(rng.normal(1.0, 1.0, n_m), spread))
    nonmated = np.sort(np.round(rng.normal(0.0, 1.0, n_nm), spread))
    if seed % 5 == 0:
        nonmated = np.sort(nonmated + 10)  # all impostors above: the crossing at the end
    assert equal_error(Run(mated), Run(nonmated)) == _eer_by_sorting(mated, nonmated)
