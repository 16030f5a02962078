"""NRB, per-group bias measures, STD and SER: golden values from the papers, oracles, undefined cases."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pandas as pd
import pytest

from audit.measures import bias
from audit.measures.kernels import (
    UndefinedMeasureError,
    UndefinedMeasureWarning,
    inequity_rate,
)
from audit.tables.rates import read_rates

# Hutiri et al. Table 2 (VoxCeleb1-I EER, %), groups in the order of their Table 3:
# gender 'All' (male, female) and gender + nationality (IN, US, AUS, DE; NO male/female
# are in Table 2 but not Table 3).
EER_ALL = [3.581, 3.757]
EER_NAT = {"M": [3.218, 2.999, 4.362, 3.013], "F": [7.028, 3.250, 2.788, 10.641]}
EER_NO = {"M": 8.210, "F": 4.588}
OVERALL_EER = 3.657  # "average EER ... 3.657 ... for VoxCeleb1-I" (sec. 4)
MINCDET_NAT = {"M": [0.018, 0.010, 0.012, 0.009], "F": [0.023, 0.011, 0.011, 0.019]}
MINCDET_NO = {"M": 0.025, "F": 0.014}


def _nat(values, no):
    """The ten gender + nationality groups of Table 2: M(IN, US, AUS, DE, NO), F(...)."""
    return np.array(values["M"] + [no["M"]] + values["F"] + [no["F"]])


# (paper, table, row, base metric, measure, group values) -- Table 3 of Hutiri et al.
TABLE3 = [
    ("Hutiri et al.", "Table 3", "All", "EER", "g2min_difference", [0.000, 0.176]),
    ("Hutiri et al.", "Table 3", "All", "EER", "g2avg_ratio", [0.979, 1.027]),
    ("Hutiri et al.", "Table 3", "All", "EER", "g2avg_log_ratio", [0.021, -0.027]),
    (
        "Hutiri et al.",
        "Table 3",
        "IN/US/AUS/DE",
        "EER",
        "g2min_difference",
        [0.429, 0.211, 1.573, 0.224, 4.240, 0.462, 0.000, 7.853],
    ),
    (
        "Hutiri et al.",
        "Table 3",
        "IN/US/AUS/DE",
        "EER",
        "g2avg_ratio",
        [0.880, 0.820, 1.193, 0.824, 1.922, 0.889, 0.762, 2.909],
    ),
    (
        "Hutiri et al.",
        "Table 3",
        "IN/US/AUS/DE",
        "EER",
        "g2avg_log_ratio",
        [0.128, 0.198, -0.176, 0.194, -0.653, 0.118, 0.271, -1.068],
    ),
    (
        "Hutiri et al.",
        "Table 3",
        "IN/US/AUS/DE",
        "minCDet",
        "g2min_difference",
        [0.010, 0.001, 0.003, 0.000, 0.015, 0.002, 0.002, 0.011],
    ),
]
SHOWN = [0, 1, 2, 3, 5, 6, 7, 8]  # drop NO from the ten groups of Table 2


@pytest.mark.parametrize(("paper", "table", "row", "base", "measure", "expected"), TABLE3)
def test_table3_follows_from_table2(paper, table, row, base, measure, expected):
    if row == "All":
        x = np.array([EER_ALL])
    elif base == "EER":
        x = _nat(EER_NAT, EER_NO)[None, :]
    else:
        x = _nat(MINCDET_NAT, MINCDET_NO)[None, :]
    function = getattr(bias, measure)
    values = function(x) if measure == "g2min_difference" else function(x, average=OVERALL_EER)
    if row != "All":
        values = values[:, SHOWN]
    # Table 2 prints 3 decimals, so recomputed values agree with Table 3 to about 1e-3
    np.testing.assert_allclose(values[0], expected, atol=1.5e-3)


def test_nrb_of_the_gender_groups_from_table3():
    # eq. 2 on Table 3 'All' EER log ratios: (|0.021| + |-0.027|) / 2 = 0.024
    value, undefined = bias.normalised_reliability_bias([EER_ALL], average=OVERALL_EER)
    assert not undefined[0]
    assert value[0] == pytest.approx(0.024, abs=6e-4)


def test_table4_prints_the_log_ratio_with_the_opposite_sign():
    # Table 4: Indian male FPR 0.005 at design FPR 0.001 has "G2avg log ratio" +1.659;
    # Table 1's definition (-ln of the ratio) gives -ln 5 = -1.609 (rounded inputs).
    value = bias.g2avg_log_ratio([[0.005, 0.001]], average=0.001)[0, 0]
    assert value == pytest.approx(-math.log(5.0))
    assert abs(value) == pytest.approx(1.659, abs=0.06)


def _nrb_literal(x, average):
    """eq. 2 of Hutiri et al. transcribed literally."""
    return sum(abs(-math.log(x_g / average)) for x_g in x) / len(x)


def test_nrb_against_a_literal_transcription():
    rng = np.random.default_rng(1)
    x = rng.uniform(1e-6, 1.0, (50, 8))
    values, _ = bias.normalised_reliability_bias(x)
    expected = [_nrb_literal(row, statistics.fmean(row)) for row in x]
    np.testing.assert_allclose(values, expected, rtol=1e-12)


def test_std_against_population_standard_deviation():
    rng = np.random.default_rng(2)
    fmr, fnmr = rng.uniform(0, 1e-3, (20, 8)), rng.uniform(0, 0.1, (20, 8))
    np.testing.assert_allclose(bias.std_fmr(fmr, fnmr).value, [statistics.pstdev(r) for r in fmr])
    np.testing.assert_allclose(bias.std_fnmr(fmr, fnmr).value, [statistics.pstdev(r) for r in fnmr])


def test_std_bound_is_attained_by_a_half_split():
    assert bias.std_fmr([[0, 0, 1, 1]], [[0, 0, 0, 0]]).value[0] == pytest.approx(0.5)


def test_ser_is_the_fmr_term_of_the_inequity_rate(annex15_matrices):
    _, _, fmr, fnmr = annex15_matrices
    np.testing.assert_allclose(bias.ser(fmr, fnmr).value, inequity_rate(fmr, fnmr).fmr_term)
    assert bias.ser(fmr, fnmr).value.max() == pytest.approx(10**1.8)  # 63.1, Howard et al. sec. 4.2


def test_combined_nrb_on_annex15(annex15_matrices):
    _, _, fmr, fnmr = annex15_matrices
    combined = bias.nrb(fmr, fnmr, alpha=0.5)
    expected = 0.5 * bias.nrb_fmr(fmr, fnmr).value + 0.5 * bias.nrb_fnmr(fmr, fnmr).value
    np.testing.assert_allclose(combined.value, expected)
    assert np.isfinite(combined.value).all() and not combined.undefined.any()


def test_single_error_measures_ignore_the_other_rate():
    fmr, fnmr = np.array([[1e-5, 4e-5]]), np.array([[0.01, 0.03]])
    r = bias.nrb_fmr(fmr, fnmr, alpha=0.2)
    assert np.isnan(r.fnmr_term).all()
    assert r.value[0] == bias.nrb_fmr(fmr, fnmr * 0.5, alpha=0.9).value[0]


def test_nrb_undefined_when_a_group_is_zero():
    with pytest.warns(UndefinedMeasureWarning) as record:
        r = bias.nrb([[0.0, 1e-4]], [[0.01, 0.02]])
    assert str(record[0].message) == bias.NRB_UNDEFINED.format(
        count=1, total=1, rate="FMR", value=np.nan
    )
    assert np.isnan(r.value[0]) and r.undefined[0]
    with pytest.raises(UndefinedMeasureError):
        bias.nrb([[0.0, 1e-4]], [[0.01, 0.02]], zero_division="raise")
    assert bias.nrb([[0.0, 1e-4]], [[0.01, 0.02]], zero_division=-1.0).value[0] == -1.0


def test_ser_undefined_when_the_minimum_fmr_is_zero():
    with pytest.warns(UndefinedMeasureWarning) as record:
        r = bias.ser([[0.0, 1e-4]], [[0.01, 0.02]])
    assert str(record[0].message) == bias.SER_UNDEFINED.format(count=1, total=1, value=np.nan)
    assert np.isnan(r.value[0]) and r.undefined[0]


def test_log_ratio_of_a_zero_group_is_nan_and_warned():
    with pytest.warns(UndefinedMeasureWarning) as record:
        values = bias.g2avg_log_ratio([[0.0, 1.0]])
    assert str(record[0].message) == bias.RATIO_UNDEFINED.format(
        kind="log Ratio",
        count=1,
        total=1,
        reason="a group's value is 0 and its logarithm is infinite",
    )
    assert np.isnan(values[0, 0]) and values[0, 1] == pytest.approx(-math.log(2.0))


def test_bad_average_shape():
    with pytest.raises(ValueError) as error:
        bias.g2avg_ratio([[1.0, 2.0], [1.0, 3.0]], average=[1.0, 2.0, 3.0])
    assert str(error.value) == bias.BAD_AVERAGE.format(n=2, shape=(3,))


def test_group_bias_is_tidy_on_annex15(annex15):
    frame = bias.group_bias(annex15)
    assert list(frame.columns) == ["algorithm", "group", "rate", "measure", "value"]
    assert len(frame) == 126 * 8 * 2 * 3
    assert frame["value"].notna().all()
    ratio = frame.query("measure == 'g2avg_ratio'").groupby(["algorithm", "rate"])["value"].mean()
    np.testing.assert_allclose(ratio, 1.0)  # ratios to the group mean average to 1


def test_group_bias_with_given_overall_rates():
    t = read_rates(
        pd.DataFrame(
            {
                "algorithm": ["a", "a"],
                "group": ["M", "F"],
                "fmr": [1e-4, 3e-4],
                "fnmr": [0.02, 0.02],
            }
        )
    )
    frame = bias.group_bias(t, rates=["fmr"], average={"fmr": [1e-4]})
    assert frame.query("measure == 'g2avg_ratio'")["value"].tolist() == pytest.approx([1.0, 3.0])


def test_group_bias_refuses_an_unknown_rate(annex15):
    with pytest.raises(ValueError) as error:
        bias.group_bias(annex15, rates=["eer"])
    assert str(error.value) == bias.BAD_RATE.format(rate="eer")


def test_numeric_zero_division_fills_the_undefined_ratios():
    from audit.measures.bias import g2avg_log_ratio, g2avg_ratio

    x = [[0.0, 0.0], [0.0, 2.0]]
    ratio = g2avg_ratio(x, zero_division=-1.0)
    assert ratio.tolist() == [[-1.0, -1.0], [0.0, 2.0]]
    log_ratio = g2avg_log_ratio(x, zero_division=-1.0)
    assert log_ratio[0].tolist() == [-1.0, -1.0]
    assert log_ratio[1, 0] == -1.0 and log_ratio[1, 1] == pytest.approx(-np.log(2.0))
