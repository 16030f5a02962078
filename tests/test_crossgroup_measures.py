"""Cross-group measures: hand-computed values, literal oracles, the within-group FMRs as an
FMR-only table, applicability, the FFMC audit and the frontier (their properties are checked
with every other kind's, by tests/test_properties.py)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import CROSS_GROUPS, cross_long, cross_matrices

from audit.analysis import ffmc, pareto
from audit.measures import crossgroup, onesided
from audit.measures.contract import MeasureContractError, PairMeasure
from audit.measures.kernels import MeasureResult, UndefinedMeasureError, UndefinedMeasureWarning
from audit.measures.registry import (
    applicable_measures,
    evaluate,
    evaluate_many,
    get_measure,
    measure_names,
    register_measure,
    unregister,
)
from audit.tables.rates import read_rates

PAIRS = measure_names(inputs="pairs")


@pytest.fixture(scope="module")
def table():
    return read_rates(cross_long())


def flagged(name, fmr_pairs):
    """(value, undefined) with the measure's warnings recorded, not raised."""
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        result = get_measure(name)(np.asarray(fmr_pairs, dtype="float64"))
    return result.value, result.undefined


# --- hand-computed values -------------------------------------------------------------


def test_the_values_by_hand(table):
    # algorithm a: W = (1e-3 + 2e-3 + 4e-4 + 1e-3) / 4 = 1.1e-3; the 12 cross cells sum to
    # 2.4e-4, C = 2e-5; the largest asymmetry is FMR(B, A) / FMR(A, B) = 3e-5 / 1e-5.
    # algorithm b: W = 2e-4, C = 2e-5, symmetric; 4 cells of 2e-4 and 12 of 2e-5 give
    # sum |x_i - x_j| = 2 * 4 * 12 * 1.8e-4 and a mean of 6.5e-5: G = 16/15 * 0.51923 = 36/65.
    # algorithm c: W = 6.25e-4, C = 2e-4 / 12; FMR(A, D) = 0, so the asymmetry is undefined.
    values = evaluate_many(table, PAIRS, zero_division="flag").set_index(["measure", "algorithm"])
    np.testing.assert_allclose(values.loc["within_cross_ratio", "value"], [55.0, 10.0, 37.5])
    np.testing.assert_allclose(values.loc["fmr_asymmetry", "value"][:2], [3.0, 1.0])
    assert np.isnan(values.loc[("fmr_asymmetry", "c"), "value"])
    assert values.loc["fmr_asymmetry", "undefined"].tolist() == [False, False, True]
    np.testing.assert_allclose(values.loc[("cell_gini", "b"), "value"], 36 / 65)
    assert values["fnmr_term"].isna().all()
    assert (values["rule"] == "").all()
    np.testing.assert_array_equal(values["fmr_term"], values["value"])


def test_per_group_and_overall_ratios_by_hand(table):
    ratios = crossgroup.within_cross_table(table)
    a = ratios[ratios["algorithm"] == "a"].set_index("scope")
    first = a[a["group"] == "A"].iloc[0]
    # group A of algorithm a: enrolled in A, probed from B, C, D: (1e-5 + 2e-5 + 1e-5) / 3;
    # probed from A, enrolled in B, C, D: (3e-5 + 1e-5 + 1e-5) / 3; both: 9e-5 / 6
    np.testing.assert_allclose(
        first[["within", "cross_enrolled", "cross_probed", "cross", "ratio"]].to_numpy(float),
        [1e-3, 4e-5 / 3, 5e-5 / 3, 1.5e-5, 1e-3 / 1.5e-5],
    )
    overall = a.loc["overall"]
    np.testing.assert_allclose(
        overall[["within", "cross", "ratio"]].to_numpy(float), [1.1e-3, 2e-5, 55.0]
    )
    assert pd.isna(overall["group"])
    assert list(ratios["scope"][:5]) == ["group"] * 4 + ["overall"]
    assert not ratios["undefined"].any()


def test_asymmetry_table_by_hand(table):
    pairs = crossgroup.asymmetry_table(table)
    assert len(pairs) == 3 * 6
    a = pairs[pairs["algorithm"] == "a"].set_index(["group_a", "group_b"])
    assert a.loc[("A", "B"), ["fmr_ab", "fmr_ba"]].tolist() == [1e-5, 3e-5]
    np.testing.assert_allclose(a["fold"], [3.0, 2.0, 1.0, 1.0, 2.0, 1.0])
    assert a["differ"].tolist() == [True, True, False, False, True, False]
    c = pairs[pairs["algorithm"] == "c"].set_index(["group_a", "group_b"])
    assert bool(c.loc[("A", "D"), "undefined"]) and np.isnan(c.loc[("A", "D"), "ratio"])


# --- literal oracles -------------------------------------------------------------------


def literal(fmr_pairs: np.ndarray) -> dict[str, list[float]]:
    """The three measures transcribed loop by loop (NaN where undefined)."""
    out = {name: [] for name in PAIRS}
    for matrix in fmr_pairs:
        n = len(matrix)
        within = [matrix[g][g] for g in range(n)]
        cross = [matrix[a][b] for a in range(n) for b in range(n) if a != b]
        w, c = sum(within) / n, sum(cross) / len(cross)
        out["within_cross_ratio"].append(max(w / c, c / w) if w > 0 and c > 0 else np.nan)
        ratios = [
            matrix[a][b] / matrix[b][a] if matrix[b][a] > 0 else np.inf
            for a in range(n)
            for b in range(n)
            if a != b
        ]
        zero = any(matrix[a][b] == 0 for a in range(n) for b in range(n) if a != b)
        out["fmr_asymmetry"].append(np.nan if zero else max(ratios))
        cells = [x for row in matrix for x in row]
        m, mean = len(cells), sum(cells) / len(cells)
        pair_sum = sum(abs(x - y) for x in cells for y in cells)
        out["cell_gini"].append(0.0 if mean == 0 else m / (m - 1) * pair_sum / (2 * m * m * mean))
    return out


def test_the_kernels_equal_their_literal_transcription():
    rng = np.random.default_rng(11)
    for n in (2, 3, 5):
        fmr = 10.0 ** rng.uniform(-6, -2, (40, n, n))
        fmr[rng.random(fmr.shape) < 0.05] = 0.0
        fmr[-1] = 0.0
        expected = literal(fmr)
        for name in PAIRS:
            value, undefined = flagged(name, fmr)
            np.testing.assert_allclose(value, expected[name], rtol=1e-12, err_msg=name)
            assert (undefined == np.isnan(expected[name])).all() or name == "cell_gini"


def test_cross_tables_agree_with_the_measures():
    rng = np.random.default_rng(5)
    fmr = 10.0 ** rng.uniform(-6, -3, (20, 4, 4))
    table = read_rates(_long(fmr))
    ratios = crossgroup.within_cross_table(table).query("scope == 'overall'")["ratio"].to_numpy()
    folds = crossgroup.asymmetry_table(table).groupby("algorithm", sort=False)["fold"].max()
    np.testing.assert_allclose(
        np.maximum(ratios, 1 / ratios), flagged("within_cross_ratio", fmr)[0]
    )
    np.testing.assert_allclose(folds.to_numpy(), flagged("fmr_asymmetry", fmr)[0])


def _long(fmr: np.ndarray) -> pd.DataFrame:
    groups = CROSS_GROUPS[: fmr.shape[1]]
    rows = [
        (f"alg-{k}", g1, g2, fmr[k, i, j])
        for k in range(len(fmr))
        for i, g1 in enumerate(groups)
        for j, g2 in enumerate(groups)
    ]
    return pd.DataFrame(rows, columns=["algorithm", "group_1", "group_2", "fmr"])


# --- the within-group FMRs are an FMR-only table ---------------------------------------


def test_every_fmr_measure_reads_the_within_group_fmrs(table):
    diagonal = np.diagonal(cross_matrices(), axis1=1, axis2=2)
    frame = pd.DataFrame({"Algorithm": ["a", "b", "c"]})
    for j, group in enumerate(CROSS_GROUPS):
        frame[f"FMR.{group}"] = diagonal[:, j]
    fmr_only = read_rates(frame)
    rate_measures = measure_names(inputs="rates")
    listed = applicable_measures(table, rate_measures).drop(columns="label")
    pd.testing.assert_frame_equal(
        listed, applicable_measures(fmr_only, rate_measures).drop(columns="label")
    )
    applied = listed.loc[listed["status"] != onesided.NOT_APPLICABLE, "measure"].tolist()
    assert {"garbe", "ir", "fdr", "std_fmr", "ser", "nrb_fmr"} <= set(applied)
    alphas = [0.0, 0.5, 1.0]
    pd.testing.assert_frame_equal(
        evaluate_many(table, applied, alpha=alphas, zero_division="flag"),
        evaluate_many(fmr_only, applied, alpha=alphas, zero_division="flag"),
    )


def test_applicability_both_ways(table, annex15):
    on_cross = applicable_measures(table).set_index("measure")
    for name in PAIRS:
        assert on_cross.loc[name, "status"] == onesided.COMPUTED
        assert on_cross.loc[name, "needs"] == crossgroup.PAIRS
    assert on_cross.loc["std_fnmr", "status"] == onesided.NOT_APPLICABLE
    on_plain = applicable_measures(annex15).set_index("measure")
    for name in PAIRS:
        assert on_plain.loc[name, "status"] == onesided.NOT_APPLICABLE
        assert on_plain.loc[name, "note"] == crossgroup.NEEDS_PAIRS
    assert not set(PAIRS) & set(evaluate_many(annex15.head(16))["measure"])
    assert set(PAIRS) <= set(evaluate_many(table, zero_division="flag")["measure"])
    with pytest.raises(ValueError) as error:
        evaluate(annex15, "cell_gini")
    assert str(error.value) == onesided.NOT_APPLICABLE_HERE.format(
        name="cell_gini", source=annex15.attrs["source"], reason=crossgroup.NEEDS_PAIRS
    )


def test_a_pairs_measure_over_alphas_repeats_its_value(table):
    one = evaluate(table, "cell_gini")
    many = evaluate(table, "cell_gini", alpha=[0.0, 0.5])
    assert many.index.names == ["alpha", "algorithm"]
    pd.testing.assert_frame_equal(many.loc[0.0], one)
    pd.testing.assert_frame_equal(many.loc[0.5], one)


# --- undefined values -------------------------------------------------------------------


def test_zero_division_policies(table):
    with pytest.warns(UndefinedMeasureWarning) as record:
        evaluate(table, "fmr_asymmetry")
    assert str(record[0].message) == crossgroup.ASYMMETRY_UNDEFINED.format(count=1, total=3)
    with pytest.raises(UndefinedMeasureError):
        evaluate(table, "fmr_asymmetry", zero_division="raise")
    filled = evaluate(table, "fmr_asymmetry", zero_division=99.0)
    assert filled.loc["c", "value"] == 99.0 and bool(filled.loc["c", "undefined"])
    zero = np.zeros((1, 3, 3))
    with pytest.warns(UndefinedMeasureWarning) as record:
        result = get_measure("cell_gini")(zero)
    assert str(record[0].message) == crossgroup.GINI_UNDEFINED.format(count=1, total=1, value=0.0)
    assert result.value[0] == 0.0 and result.undefined[0]
    with pytest.warns(UndefinedMeasureWarning) as record:
        result = get_measure("within_cross_ratio")(np.eye(3)[None] * 1e-4)  # C = 0
    assert str(record[0].message) == crossgroup.RATIO_UNDEFINED.format(count=1, total=1)
    assert np.isnan(result.value[0])


@pytest.mark.parametrize(
    ("fmr_pairs", "message"),
    [
        (np.zeros((2, 3)), crossgroup.BAD_SHAPE.format(shape=(2, 3))),
        (np.zeros((1, 2, 3)), crossgroup.BAD_SHAPE.format(shape=(1, 2, 3))),
        (np.zeros((1, 1, 1)), "a fairness measure needs at least 2 groups, got 1"),
        (np.full((1, 2, 2), 2.0), crossgroup.OUT_OF_RANGE.format(value=2.0)),
        (
            np.array([[[1e-4, np.nan], [1e-5, 1e-4]], [[1e-4, 1e-5], [1e-5, 1e-4]]]),
            crossgroup.UNEVEN.format(algorithm=1),
        ),
    ],
)
def test_malformed_pair_arrays(fmr_pairs, message):
    with pytest.raises(ValueError) as error:
        get_measure("cell_gini")(fmr_pairs)
    assert str(error.value) == message


# --- properties: declared with the other measures' and checked by tests/test_properties.py --


@pytest.mark.parametrize("name", PAIRS)
def test_every_pairs_measure_cites_its_source(name):
    assert get_measure(name).citation


# --- registry and contract ----------------------------------------------------------------


def test_a_users_pairs_measure_is_registered_and_checked():
    @register_measure(
        name="max_cross",
        inputs="pairs",
        higher_is_fairer=False,
        bounds=(0.0, 1.0),
        ideal=0.0,
        citation="test",
    )
    def max_cross(fmr_pairs):
        n = fmr_pairs.shape[1]
        value = np.nanmax(np.where(np.eye(n, dtype=bool), np.nan, fmr_pairs), axis=(1, 2))
        return MeasureResult(value, value, np.full(len(value), np.nan), np.zeros(len(value), bool))

    try:
        spec = get_measure("max_cross")
        assert (
            isinstance(spec, PairMeasure)
            and spec.share == "fmr"
            and spec.needs == (crossgroup.PAIRS,)
        )
        values = evaluate(read_rates(cross_long()), "max_cross")
        np.testing.assert_allclose(values["value"], [5e-5, 2e-5, 1e-4])
    finally:
        unregister("max_cross")
    with pytest.raises(ValueError, match="so its share is 'fmr'"):
        PairMeasure(
            name="x", label="x", function=max_cross, higher_is_fairer=False, bounds=(0, 1),
            ideal=0.0, fmr_term="", fnmr_term="", share="linear",
        )  # fmt: skip

    def broken(fmr_pairs):
        value = np.full(len(fmr_pairs), np.inf)
        return MeasureResult(value, value, value, np.zeros(len(value), bool))

    with pytest.raises(MeasureContractError):
        register_measure(
            name="broken", inputs="pairs", higher_is_fairer=False, bounds=(0, None), ideal=0.0
        )(broken)
    assert "broken" not in measure_names()


# --- the FFMC audit --------------------------------------------------------------------


def test_ffmc_of_the_cross_group_measures(table):
    audit = ffmc.ffmc_table(table, PAIRS, n_random=100).set_index(["measure", "criterion"])
    verdicts = audit["passed"].unstack("criterion")
    assert verdicts["FFMC.1"].isna().all()
    assert (audit.xs("FFMC.1", level="criterion")["evidence"] == ffmc.FFMC1_PAIRS).all()
    assert verdicts["FFMC.2"].to_dict() == {
        "within_cross_ratio": False,  # unbounded above
        "fmr_asymmetry": False,
        "cell_gini": True,  # [0, 1], both attained
    }
    assert verdicts["FFMC.3"].to_dict() == {
        "within_cross_ratio": True,  # one pair at 0 leaves both means positive
        "fmr_asymmetry": False,  # a cross pair at 0 divides by 0
        "cell_gini": True,
    }
    gini = audit.loc[("cell_gini", "FFMC.3")]
    assert gini["computed_one_cross_zero"] == 1.0 and gini["computed_one_within_zero"] == 1.0
    assert "every pair at 0: finite only by convention" in gini["evidence"]
    asym = audit.loc[("fmr_asymmetry", "FFMC.3")]
    # algorithm c's zero cross cell leaves it undefined whichever other pair is zeroed
    assert asym["computed_one_cross_zero"] == 0.0 and asym["computed_one_within_zero"] == 2 / 3


def test_ffmc_lists_the_cross_group_measures_where_they_apply(table, annex15):
    default = ffmc.ffmc_table(table, n_random=50)
    assert set(PAIRS) <= set(default["measure"])
    plain = ffmc.ffmc_table(annex15.head(80), ["garbe", "cell_gini"], n_random=50)
    rows = plain[plain["measure"] == "cell_gini"]
    assert rows["passed"].isna().all()
    assert (rows["evidence"] == ffmc.NOT_CROSS.format(reason=crossgroup.NEEDS_PAIRS)).all()
    assert not set(PAIRS) & set(ffmc.ffmc_table(annex15.head(80), n_random=50)["measure"])
    report = ffmc.ffmc_report(table, ["cell_gini", "garbe"], n_random=50)
    assert ("cell_gini", "FFMC.2") in report.results
    assert ffmc.ffmc2(table, "cell_gini", n_random=50).passed
    assert not ffmc.ffmc3(table, "fmr_asymmetry").passed


def test_an_audit_of_cross_group_measures_alone(table):
    """``audit ffmc cross.csv --measures within_cross_ratio`` failed in the notebook: with
    no per-group measure, the data-quality audit was given an empty list of measures and
    refused it. The table's facts are audited, affecting no measure audited."""
    report = ffmc.ffmc_report(table, ["within_cross_ratio", "cell_gini"], n_random=50)
    assert ("cell_gini", "FFMC.2") in report.results
    assert set(report.table["measure"]) == {"within_cross_ratio", "cell_gini"}
    assert len(report.quality) and (report.quality["affects"] == "").all()
    assert report.floor.empty


# --- the frontier ----------------------------------------------------------------------


def test_the_frontier_of_a_cross_group_table(table):
    frame = pareto.frontier_frame(table, "garbe", accuracy="total_fmr")
    np.testing.assert_allclose(
        frame["accuracy"], np.diagonal(cross_matrices(), axis1=1, axis2=2).mean(axis=1)
    )
    gini = pareto.frontier_frame(table, "cell_gini", accuracy="total_fmr")
    assert gini.attrs["measure"] == "cell_gini" and gini.attrs["rule"] == ""
    assert gini.attrs["fairness_label"] == get_measure("cell_gini").label  # no alpha to show
    with pytest.raises(ValueError, match="--undefined exclude"):
        pareto.frontier_frame(table, "fmr_asymmetry", accuracy="total_fmr")
    kept = pareto.frontier_frame(table, "fmr_asymmetry", accuracy="total_fmr", undefined="exclude")
    assert kept.attrs["excluded"] == ["c"]
