"""The field's measures: NIST's summaries (NISTIR 8429), the ratios to a reference
demographic, MERG/MERA (Linghu et al., IJCB 2024) and the zero-error-adjusted ratio
measures.

Oracle tests against literal transcriptions of the definitions on hand-computed
tables (the numbers written out), the refusals with their exact messages, the
registry's metadata (ISO/IEC 19795-10 terms, which measures take alpha), and each
measure's FFMC verdicts on Annex 15 as golden values with the evidence behind them.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from audit.analysis.ffmc import ffmc_table
from audit.exceptions import InputError, ParameterError, UndefinedMeasureError, UsageError
from audit.measures import contract
from audit.measures.contract import (
    BAD_ISO_TERM,
    BOUND_GROUPS,
    ISO_AGGREGATE,
    ISO_FALSE_NEGATIVE,
    ISO_FALSE_POSITIVE,
    ISO_SCORE_DIFFERENTIAL,
    ISO_TERMS,
    MISSING_COUNTS,
    NEEDS_BINDING,
    NEEDS_COUNTS,
    UNKNOWN_OPTION,
    RateMeasure,
    TableMeasure,
)
from audit.measures.kernels import gini
from audit.measures.merg import mera, merg
from audit.measures.nist import (
    SUMMARY_UNDEFINED,
    nist_gini_fmr,
    nist_gini_fnmr,
    nist_log10_spread_fmr,
    nist_log10_spread_fnmr,
    nist_max_geomean_fmr,
    nist_max_geomean_fnmr,
    nist_max_mean_fmr,
    nist_max_mean_fnmr,
    nist_max_min_fmr,
    nist_max_min_fnmr,
    nist_max_minus_min_fnmr,
)
from audit.measures.reference import (
    AMBIGUOUS_REFERENCE,
    BAD_ATTRIBUTE,
    BAD_NUMERATOR,
    BAD_REFERENCE,
    NO_DEFAULT_REFERENCE,
    NO_DEFAULT_WHY,
    resolve_ratio,
)
from audit.measures.registry import (
    MEASURE_TABLE_COLUMNS,
    NO_OPTIONS,
    OPTIONS_OF_OTHER,
    applicable_measures,
    evaluate,
    evaluate_many,
    for_table,
    get_measure,
    measure_names,
    measure_table,
)
from audit.measures.zeroerrors import CLOPPER_PEARSON_LEVEL, adjust_zero_rates, zero_error_bound
from audit.tables.rates import rate_matrices, read_rates

# --- literal transcriptions of the definitions (slow oracles) --------------------------


def oracle_max_min(x):
    return max(x) / min(x)


def oracle_max_minus_min(x):
    return max(x) - min(x)


def oracle_max_mean(x):
    return max(x) / (sum(x) / len(x))


def oracle_geomean(x):
    return math.prod(x) ** (1 / len(x))


def oracle_max_geomean(x):
    return max(x) / oracle_geomean(x)


def oracle_log10_spread(x):
    """NISTIR 8429's "Vary GeoMean": mean over the cells of |log10(rate / geometric mean)|."""
    gm = oracle_geomean(x)
    return sum(abs(math.log10(v / gm)) for v in x) / len(x)


def oracle_gini(x, *, corrected):
    """Howard et al. eq. 7, the double sum over every ordered pair as printed; NIST's variant
    without the factor n / (n - 1)."""
    n = len(x)
    double_sum = sum(abs(xi - xj) for xi in x for xj in x)
    plain = double_sum / (2 * n**2 * (sum(x) / n))
    return n / (n - 1) * plain if corrected else plain


def oracle_product(a, b, alpha):
    return a**alpha * b ** (1 - alpha)


# The hand-computed table: one algorithm, 4 cells.
FMR = [1e-5, 2e-5, 4e-5, 8e-5]
FNMR = [0.01, 0.02, 0.02, 0.05]

# (function, rate, value worked by hand)
HAND = [
    # max / min: 8e-5 / 1e-5 and 0.05 / 0.01
    (nist_max_min_fmr, "fmr", 8.0),
    (nist_max_min_fnmr, "fnmr", 5.0),
    # 0.05 - 0.01
    (nist_max_minus_min_fnmr, "fnmr", 0.04),
    # mean FMR 15e-5 / 4 = 3.75e-5: 8 / 3.75; mean FNMR 0.1 / 4 = 0.025: 0.05 / 0.025
    (nist_max_mean_fmr, "fmr", 8 / 3.75),
    (nist_max_mean_fnmr, "fnmr", 2.0),
    # geomean FMR (1 * 2 * 4 * 8)^(1/4) e-5 = 2^1.5 e-5: 8 / 2^1.5 = 2^1.5 = 2.8284271;
    # geomean FNMR (2e-7)^(1/4) = 0.0211474: 0.05 / 0.0211474 = 2.3643540
    (nist_max_geomean_fmr, "fmr", 2.0**1.5),
    (nist_max_geomean_fnmr, "fnmr", 0.05 / 2e-7**0.25),
    # |log10| of 1, 2, 4, 8 over 2^1.5: 1.5, 0.5, 0.5, 1.5 times log10 2; mean log10 2
    (nist_log10_spread_fmr, "fmr", math.log10(2)),
    # |log10(0.01 / 0.0211474)| = 0.3252683, |log10(0.02 / ...)| = 0.0242417 (twice),
    # |log10(0.05 / ...)| = 0.3737280: mean 0.1868563
    (nist_log10_spread_fnmr, "fnmr", 0.18685625271),
    # |differences| of 1, 2, 4, 8 over the 6 pairs: 1 + 3 + 7 + 2 + 6 + 4 = 23, twice over
    # the ordered pairs: 46; 2 n^2 mean = 2 * 16 * 3.75 = 120: 46 / 120
    (nist_gini_fmr, "fmr", 46 / 120),
    # 1, 2, 2, 5: 1 + 1 + 4 + 0 + 3 + 3 = 12, 24 over the ordered pairs; 2 * 16 * 2.5 = 80
    (nist_gini_fnmr, "fnmr", 24 / 80),
]

ORACLES = {
    nist_max_min_fmr: oracle_max_min,
    nist_max_min_fnmr: oracle_max_min,
    nist_max_minus_min_fnmr: oracle_max_minus_min,
    nist_max_mean_fmr: oracle_max_mean,
    nist_max_mean_fnmr: oracle_max_mean,
    nist_max_geomean_fmr: oracle_max_geomean,
    nist_max_geomean_fnmr: oracle_max_geomean,
    nist_log10_spread_fmr: oracle_log10_spread,
    nist_log10_spread_fnmr: oracle_log10_spread,
    nist_gini_fmr: lambda x: oracle_gini(x, corrected=False),
    nist_gini_fnmr: lambda x: oracle_gini(x, corrected=False),
}


@pytest.mark.parametrize(
    ("function", "rate", "expected"), HAND, ids=lambda x: getattr(x, "__name__", x)
)
def test_nist_summaries_by_hand(function, rate, expected):
    result = function([FMR], [FNMR])
    assert result.value[0] == pytest.approx(expected, rel=1e-9)
    own, other = (
        (result.fmr_term, result.fnmr_term)
        if rate == "fmr"
        else (
            result.fnmr_term,
            result.fmr_term,
        )
    )
    assert own[0] == result.value[0] and np.isnan(other[0])  # one error rate: no other term
    assert ORACLES[function](FMR if rate == "fmr" else FNMR) == pytest.approx(expected, rel=1e-9)


SETTINGS = settings(max_examples=40, deadline=None)
POSITIVE = st.floats(1e-6, 1.0, allow_nan=False)
#: A rate k/n: 0, or at least 1e-12 (no test holds 10^12 comparisons), never a subnormal
#: float whose sums and means round away the differences the Gini measures.
RATES = st.one_of(st.just(0.0), st.floats(1e-12, 1.0))


@pytest.mark.parametrize("function", list(ORACLES), ids=lambda f: f.__name__)
@SETTINGS
@given(
    fmr=arrays("float64", (3, 5), elements=POSITIVE),
    fnmr=arrays("float64", (3, 5), elements=POSITIVE),
)
def test_nist_summaries_match_their_oracles(function, fmr, fnmr):
    rate = fmr if function.__name__.endswith("_fmr") else fnmr
    got = function(fmr, fnmr).value
    expected = [ORACLES[function](list(row)) for row in rate]
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


@SETTINGS
@given(x=arrays("float64", (4, 6), elements=RATES))
def test_both_gini_variants_match_the_double_sum(x):
    """GARBE's Gini (n/(n-1)-corrected) and NIST's (plain) against the literal double sum of
    Howard et al. eq. 7; where every value is 0 both take the convention 0."""
    positive = x.sum(axis=1) > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        corrected, _ = gini(x)
        plain, _ = gini(x, corrected=False)
    for row, c, p, ok in zip(x, corrected, plain, positive, strict=True):
        if ok:
            assert c == pytest.approx(oracle_gini(list(row), corrected=True), rel=1e-9, abs=1e-12)
            assert p == pytest.approx(oracle_gini(list(row), corrected=False), rel=1e-9, abs=1e-12)
        else:
            assert c == p == 0.0


def test_the_two_ginis_differ_by_n_over_n_minus_1():
    """Howard et al. sec. 3.5's x = {5, 5, 10}: GARBE's G = 0.25, NIST's 0.25 * 2/3."""
    x = [[5.0, 5.0, 10.0]]
    assert gini(x)[0][0] == pytest.approx(0.25)
    assert gini(x, corrected=False)[0][0] == pytest.approx(0.25 * 2 / 3)
    # the worst case, every error in one of n = 8 cells: GARBE's 1, NIST's 1 - 1/8
    worst = [[1.0] + [0.0] * 7]
    assert gini(worst)[0][0] == pytest.approx(1.0)
    assert gini(worst, corrected=False)[0][0] == pytest.approx(0.875)


# --- MERG and MERA ---------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [0.0, 0.25, 0.5, 1.0])
def test_merg_and_mera_by_hand(alpha):
    """MERG's terms are the Max/GeoMean of each rate (2^1.5 and 2.3643540), MERA's the
    Max/Mean (2.1333 and 2); the value weighs the FMR term by alpha, as IR does."""
    a_geo, b_geo = 2.0**1.5, 0.05 / 2e-7**0.25
    a_mean, b_mean = 8 / 3.75, 2.0
    r = merg([FMR], [FNMR], alpha=alpha)
    assert (r.fmr_term[0], r.fnmr_term[0]) == pytest.approx((a_geo, b_geo), rel=1e-9)
    assert r.value[0] == pytest.approx(oracle_product(a_geo, b_geo, alpha), rel=1e-9)
    r = mera([FMR], [FNMR], alpha=alpha)
    assert (r.fmr_term[0], r.fnmr_term[0]) == pytest.approx((a_mean, b_mean), rel=1e-9)
    assert r.value[0] == pytest.approx(oracle_product(a_mean, b_mean, alpha), rel=1e-9)


def test_merg_at_half_alpha_is_the_written_number():
    """sqrt(2.8284271 * 2.3643540) = 2.5860014 (alpha = 0.5)."""
    assert merg([FMR], [FNMR]).value[0] == pytest.approx(2.5860013631, rel=1e-9)


def test_alpha_weights_the_fmr_term():
    """alpha = 1 leaves the FMR term alone (the reference code's alpha weights the FNMR term:
    its first argument is the FNMR vector)."""
    r = merg([FMR], [FNMR], alpha=1.0)
    assert r.value[0] == pytest.approx(2.0**1.5)
    assert get_measure("merg").share == "log" and "FMR term" in get_measure("merg").citation


def test_merg_is_undefined_at_a_zero_rate_and_adds_no_epsilon():
    fmr = [[0.0, 1e-5, 2e-5, 4e-5]]
    with pytest.warns(UserWarning) as caught:
        r = merg(fmr, [FNMR])
    assert np.isnan(r.value[0]) and r.undefined[0] and np.isnan(r.fmr_term[0])
    assert str(caught[0].message) == SUMMARY_UNDEFINED.format(
        summary="MERG FMR term",
        count=1,
        total=1,
        reason="a cell's FMR is 0, so the geometric mean is 0",
        value=np.nan,
    )
    with pytest.raises(UndefinedMeasureError):
        merg(fmr, [FNMR], zero_division="raise")
    assert merg(fmr, [FNMR], zero_division=7.0).value[0] == 7.0
    # MERA's arithmetic mean stays positive: defined by the formula
    r = mera(fmr, [FNMR])
    assert r.fmr_term[0] == pytest.approx(4e-5 / (7e-5 / 4)) and not r.undefined[0]


def test_the_reference_epsilon_moves_merg_on_annex15(annex15_matrices):
    """The numbers merg's docstring gives: the reference code's epsilon of 1e-5 inside the
    geometric mean lowers MERG's FMR term on Annex 15 by a median factor of 0.70 (0.62 at
    most); the ranking barely moves (Spearman 0.998)."""
    from scipy.stats import spearmanr

    _, _, fmr, fnmr = annex15_matrices
    a = merg(fmr, fnmr, alpha=1.0).fmr_term
    with_epsilon = fmr.max(axis=1) / np.exp(np.log(fmr + 1e-5).mean(axis=1))
    factor = with_epsilon / a
    assert round(float(np.median(factor)), 2) == 0.70 and round(float(factor.min()), 2) == 0.62
    assert round(float(spearmanr(a, with_epsilon).statistic), 3) == 0.998


# --- ratios to a reference demographic -------------------------------------------------


def _four(fmr, fnmr=(0.01, 0.01, 0.01, 0.01), **counts) -> pd.DataFrame:
    """One algorithm, groups F.A, F.B, M.A, M.B."""
    return read_rates(
        pd.DataFrame(
            {
                "algorithm": "a",
                "gender": ["F", "F", "M", "M"],
                "race": ["A", "B", "A", "B"],
                "fmr": fmr,
                "fnmr": fnmr,
                **counts,
            }
        ),
        count_tolerance=math.inf,
    )


def test_female_over_male_by_hand():
    """F: geomean(4e-5, 1e-5) = 2e-5; M: geomean(1e-5, 1e-5) = 1e-5; F/M = 2."""
    t = _four([4e-5, 1e-5, 1e-5, 1e-5])
    out = evaluate(t, "ratio_fmr")
    assert out["fmr_term"].iloc[0] == pytest.approx(2.0) and out["value"].iloc[0] == pytest.approx(
        2.0
    )
    assert np.isnan(out["fnmr_term"].iloc[0])
    assert for_table(t, "ratio_fmr").label == "FMR ratio (F/M)"


def test_a_race_over_a_reference_race_marginal_over_gender():
    """A: geomean(4e-5, 1e-5) = 2e-5 over B: geomean(1e-5, 1e-5) = 1e-5; B over A folds to 2 too."""
    t = _four([4e-5, 1e-5, 1e-5, 1e-5])
    a_over_b = evaluate(t, "ratio_fmr", reference="B")
    assert a_over_b["fmr_term"].iloc[0] == pytest.approx(2.0)
    b_over_a = evaluate(t, "ratio_fmr", reference="A", numerator="B")
    assert b_over_a["fmr_term"].iloc[0] == pytest.approx(0.5)
    assert b_over_a["value"].iloc[0] == pytest.approx(2.0)  # folded at 1: max(r, 1/r)
    # a whole group as the reference: one cell over one cell
    one = evaluate(t, "ratio_fmr", attribute="group", reference="M.B", numerator="F.A")
    assert one["fmr_term"].iloc[0] == pytest.approx(4.0)


def test_the_fnmr_ratio_by_hand():
    """F: geomean(0.02, 0.08) = 0.04; M: geomean(0.01, 0.04) = 0.02: F/M = 2."""
    t = _four([1e-5] * 4, [0.02, 0.08, 0.01, 0.04])
    assert evaluate(t, "ratio_fnmr")["fnmr_term"].iloc[0] == pytest.approx(2.0)


def test_ratio_oracle_on_annex15(annex15, annex15_matrices):
    """Female/Male and Black/White FMRs on Annex 15 against the literal geometric means;
    the ratio exceeds 1 for 122 (F/M, median 3.35) and 123 (Black/White, median 2.82) of the
    126 algorithms (the README's numbers)."""
    algorithms, groups, fmr, _ = annex15_matrices
    female = [g.startswith("F.") for g in groups]
    black = [g.endswith(".Black") for g in groups]
    white = [g.endswith(".White") for g in groups]
    for options, top, bottom, above, median in (
        ({}, female, [not f for f in female], 122, 3.35),
        ({"reference": "White", "numerator": "Black"}, black, white, 123, 2.82),
    ):
        out = evaluate(annex15, "ratio_fmr", **options)
        expected = [
            oracle_geomean(list(row[top])) / oracle_geomean(list(row[bottom])) for row in fmr
        ]
        np.testing.assert_allclose(out["fmr_term"], expected, rtol=1e-9)
        assert int((out["fmr_term"] > 1).sum()) == above
        assert round(float(out["fmr_term"].median()), 2) == median


def _groups(**columns) -> pd.DataFrame:
    labels = [".".join(parts) for parts in zip(*columns.values(), strict=True)]
    return pd.DataFrame(columns, index=pd.Index(labels, name="group"))


ANNEX_LIKE = _groups(gender=["F", "F", "M", "M"], race=["Black", "White", "Black", "White"])
NO_GENDER = pd.DataFrame(index=pd.Index(["A", "B", "C"], name="group"))
LEGAL = (
    "gender: 'F', 'M'; race: 'Black', 'White'; group: 'F.Black', 'F.White', 'M.Black', 'M.White'"
)


@pytest.mark.parametrize(
    ("groups", "options", "message"),
    [
        (
            NO_GENDER,
            {},
            NO_DEFAULT_REFERENCE.format(legal="group: 'A', 'B', 'C'"),
        ),
        (ANNEX_LIKE, {"reference": "Asian"}, BAD_REFERENCE.format(legal=LEGAL, value="Asian")),
        (
            ANNEX_LIKE,
            {"attribute": "age"},
            BAD_ATTRIBUTE.format(legal="'gender', 'race', 'group'", value="age"),
        ),
        (
            ANNEX_LIKE,
            {"attribute": "race", "reference": "F"},
            BAD_REFERENCE.format(legal="race: 'Black', 'White'", value="F"),
        ),
        (
            ANNEX_LIKE,
            {"reference": "White", "numerator": "White"},
            BAD_NUMERATOR.format(
                legal="'Black'", attribute="race", reference="White", value="White"
            ),
        ),
        (
            _groups(race=["A", "B", "C"]),
            {"reference": "A"},
            BAD_NUMERATOR.format(legal="'B', 'C'", attribute="race", reference="A", value=None),
        ),
        (
            _groups(gender=["A", "B"], race=["A", "B"]),
            {"reference": "A"},
            AMBIGUOUS_REFERENCE.format(
                attributes="'gender', 'race', 'group'", value="A", found="gender and race"
            ),
        ),
        (
            _groups(gender=["X", "Y"]),
            {},
            NO_DEFAULT_REFERENCE.format(legal="gender: 'X', 'Y'; group: 'X', 'Y'"),
        ),
    ],
)
def test_ratio_options_are_refused_naming_the_legal_values(groups, options, message):
    with pytest.raises(ParameterError) as error:
        resolve_ratio(groups, **options)
    assert str(error.value) == message
    assert str(error.value).startswith("parameter ")


def test_the_default_reads_female_and_male_in_any_spelling():
    groups = _groups(sex=["male", "Female"])
    keywords, note = resolve_ratio(groups)
    assert note == "Female/male" and keywords["numerator"].tolist() == [False, True]


def test_a_table_without_gender_refuses_the_default_and_ffmc_says_why():
    t = read_rates(
        pd.DataFrame(
            {"algorithm": "a", "group": ["A", "B"], "fmr": [1e-4, 2e-4], "fnmr": [0.01, 0.02]}
        )
    )
    with pytest.raises(ParameterError) as error:
        evaluate(t, "ratio_fmr")
    assert str(error.value) == NO_DEFAULT_REFERENCE.format(legal="group: 'A', 'B'")
    assert evaluate(t, "ratio_fmr", reference="A")["fmr_term"].iloc[0] == pytest.approx(2.0)
    verdicts = ffmc_table(t, ["ratio_fmr"], n_random=20)
    assert verdicts["passed"].isna().all()
    # said in words (it ended "..., which the table does not have), got None)")
    why = NO_DEFAULT_WHY.format(legal="group: 'A', 'B'")
    assert verdicts["evidence"].iloc[0] == (
        "not applicable: the measure " + contract.NO_DEFAULT_BECAUSE.format(reason=why)
    )
    assert "got None" not in verdicts["evidence"].iloc[0]
    note = applicable_measures(t, ["ratio_fmr"])["note"].iloc[0]
    assert note == contract.NO_DEFAULT_BECAUSE.format(reason=why)


# --- zero-error adjustment ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "bound"),
    [
        (1, 0.95),  # 1 - 0.05
        (20, 0.13910834067),  # 1 - 0.05^(1/20) = 1 - 0.8608917
        (1000, 0.0029912495451),
        (100_000, 2.995687402e-05),
    ],
)
def test_the_clopper_pearson_bound_of_zero_errors(n, bound):
    """scipy.stats.beta.ppf(1 - a, x + 1, n - x) at x = 0 is 1 - a^(1/n)."""
    assert CLOPPER_PEARSON_LEVEL == 0.05
    assert float(zero_error_bound(n)) == pytest.approx(bound, rel=1e-9)
    assert float(zero_error_bound(n)) == pytest.approx(1 - 0.05 ** (1 / n), rel=1e-12)


def test_only_zero_rates_are_replaced():
    out = adjust_zero_rates([[0.0, 1e-4, 0.0]], [[100_000, 100_000, 1000]])
    assert out[0, 1] == 1e-4
    assert out[0, [0, 2]] == pytest.approx([2.995687402e-05, 0.0029912495451])


def _counted(fmr, fnmr) -> pd.DataFrame:
    return _four(fmr, fnmr, n_mated=1000, n_nonmated=100_000)


def test_ir_cp_by_hand():
    """FMR (0, 3e-4, 3e-4, 3e-4), 100,000 non-mated comparisons each: A = 3e-4 / 2.9956874e-5
    = 10.014396; FNMR (0.01, 0.02, 0.02, 0.02): B = 2; IR at alpha 0.5: sqrt(20.028792) = 4.4753538."""
    t = _counted([0.0, 3e-4, 3e-4, 3e-4], [0.01, 0.02, 0.02, 0.02])
    out = evaluate(t, "ir_cp")
    assert out["fmr_term"].iloc[0] == pytest.approx(10.014396022, rel=1e-9)
    assert out["fnmr_term"].iloc[0] == pytest.approx(2.0)
    assert out["value"].iloc[0] == pytest.approx(4.4753538456, rel=1e-9)
    assert not out["undefined"].iloc[0]
    with pytest.warns(UserWarning):  # the Inequity Rate itself is undefined there
        assert evaluate(t, "ir")["undefined"].iloc[0]


@pytest.mark.parametrize(
    ("name", "plain"),
    [
        ("nist_max_min_fmr_cp", "nist_max_min_fmr"),
        ("nist_max_min_fnmr_cp", "nist_max_min_fnmr"),
        ("nist_max_geomean_fmr_cp", "nist_max_geomean_fmr"),
        ("nist_max_geomean_fnmr_cp", "nist_max_geomean_fnmr"),
        ("ratio_fmr_cp", "ratio_fmr"),
        ("ratio_fnmr_cp", "ratio_fnmr"),
        ("merg_cp", "merg"),
        ("ir_cp", "ir"),
    ],
)
def test_each_adjusted_measure_is_its_measure_on_the_adjusted_rates(name, plain):
    """With no zero it equals its measure; with zeros, its measure on the rates a zero of
    which is replaced by 1 - 0.05^(1/n) (n = 100,000 non-mated, 1,000 mated)."""
    positive = _counted([1e-4, 2e-4, 3e-4, 5e-4], [0.01, 0.02, 0.03, 0.04])
    np.testing.assert_allclose(
        evaluate(positive, name)["value"], evaluate(positive, plain)["value"], rtol=1e-12
    )
    zeros = _counted([0.0, 2e-4, 3e-4, 5e-4], [0.01, 0.0, 0.03, 0.04])
    replaced = _counted(
        [1 - 0.05 ** (1 / 100_000), 2e-4, 3e-4, 5e-4], [0.01, 1 - 0.05 ** (1 / 1000), 0.03, 0.04]
    )
    got = evaluate(zeros, name)
    assert not got["undefined"].any()
    np.testing.assert_allclose(got["value"], evaluate(replaced, plain)["value"], rtol=1e-9)


def test_adjusted_merg_stays_at_one_or_above_where_the_reference_code_falls_below():
    """FMR (0, 0, 1e-5, 1e-5) out of 1,000 non-mated comparisons each: the bound 0.0029912
    exceeds every observed FMR.  The reference code's adjusted MERG (compute_merg_adjusted:
    raw maximum over the geometric mean of the adjusted rates) gives 1e-5 / geomean(0.0029912,
    0.0029912, 1e-5, 1e-5) = 1e-5 / 1.7295e-4 = 0.0578, below the fair value 1; here the
    maximum is the adjusted rates' too, 0.0029912 / 1.7295e-4 = 17.295."""
    t = _four([0.0, 0.0, 1e-5, 1e-5], [0.01] * 4, n_mated=1000, n_nonmated=1000)
    bound = 1 - 0.05 ** (1 / 1000)
    geomean = oracle_geomean([bound, bound, 1e-5, 1e-5])
    reference_code = 1e-5 / geomean
    assert reference_code == pytest.approx(0.0578, rel=1e-3)
    got = evaluate(t, "merg_cp", alpha=1.0)
    assert got["fmr_term"].iloc[0] == pytest.approx(bound / geomean, rel=1e-9)
    assert got["value"].iloc[0] == pytest.approx(17.295, rel=1e-3)


def test_adjusted_measures_are_refused_without_their_counts():
    t = _four([1e-4, 2e-4, 3e-4, 5e-4], n_mated=1000)
    with pytest.raises(InputError) as error:
        evaluate(t, "nist_max_min_fmr_cp")
    assert str(error.value) == MISSING_COUNTS.format(
        name="nist_max_min_fmr_cp",
        column="n_nonmated",
        kind="non-mated",
        rate="FMR",
        source="<DataFrame>",
    )
    # the FNMR one has what it reads
    assert not evaluate(t, "nist_max_min_fnmr_cp")["undefined"].any()
    assert get_measure("merg_cp").unmet(t) == NEEDS_COUNTS.format(
        column="n_nonmated", kind="non-mated"
    )


def test_annex15_has_no_counts_so_the_adjusted_measures_say_so(annex15):
    with pytest.raises(InputError) as error:
        evaluate(annex15, "ir_cp")
    assert "'n_mated'" in str(error.value) and annex15.attrs["source"] in str(error.value)


def test_adjusted_measures_pass_ffmc3_with_counts():
    """On a table with counts the zero-error adjustment makes FFMC.3 pass: a zero rate is
    replaced before any ratio is taken (IR itself fails: a zero minimum)."""
    rng = np.random.default_rng(1)
    fmr = np.round(rng.uniform(1e-4, 1e-3, 20), 5)
    fnmr = np.round(rng.uniform(0.01, 0.05, 20), 3)
    frames = [
        _counted(fmr[4 * k : 4 * k + 4], fnmr[4 * k : 4 * k + 4]).assign(algorithm=f"a{k}")
        for k in range(5)
    ]
    t = pd.concat(frames, ignore_index=True)
    t.attrs = frames[0].attrs
    verdicts = ffmc_table(t, ["ir", "ir_cp", "merg_cp", "ratio_fmr_cp"], n_random=50).set_index(
        ["measure", "criterion"]
    )["passed"]
    assert not verdicts[("ir", "FFMC.3")]
    assert verdicts[("ir_cp", "FFMC.3")] and verdicts[("merg_cp", "FFMC.3")]
    assert verdicts[("ratio_fmr_cp", "FFMC.3")]
    assert not verdicts[("ir_cp", "FFMC.2")]  # still unbounded


# --- the table-measure contract ----------------------------------------------------------


def test_a_table_measure_is_not_called_on_bare_arrays():
    with pytest.raises(UsageError) as error:
        get_measure("ratio_fmr")([FMR], [FNMR])
    assert str(error.value) == NEEDS_BINDING.format(name="ratio_fmr")


def test_options_are_checked_by_name():
    t = _four([4e-5, 1e-5, 1e-5, 1e-5])
    with pytest.raises(ParameterError) as error:
        evaluate(t, "ratio_fmr", referense="A")
    assert str(error.value) == UNKNOWN_OPTION.format(
        option="referense",
        name="ratio_fmr",
        known="the options attribute, numerator, reference",
        value="A",
    )
    with pytest.raises(ParameterError) as error:
        evaluate(_counted([1e-4] * 4, [0.01] * 4), "ir_cp", reference="A")
    assert str(error.value) == UNKNOWN_OPTION.format(
        option="reference", name="ir_cp", known="no option", value="A"
    )
    with pytest.raises(ParameterError) as error:
        evaluate(t, "garbe", reference="A")
    assert str(error.value) == NO_OPTIONS.format(option="reference", name="garbe", value="A")
    with pytest.raises(ParameterError) as error:
        evaluate_many(t, ["garbe"], ratio_fmr={"reference": "A"})
    assert str(error.value) == OPTIONS_OF_OTHER.format(
        name="ratio_fmr", names=["garbe"], value={"reference": "A"}
    )


def test_evaluate_many_passes_options_by_measure():
    t = _four([4e-5, 1e-5, 1e-5, 1e-5])
    out = evaluate_many(t, ["ratio_fmr", "garbe"], ratio_fmr={"reference": "B"})
    assert out.loc[out["measure"] == "ratio_fmr", "fmr_term"].iloc[0] == pytest.approx(2.0)


def test_a_bound_measure_refuses_other_groups():
    bound = for_table(_four([4e-5, 1e-5, 1e-5, 1e-5]), "ratio_fmr")
    assert isinstance(bound, RateMeasure) and bound.name == "ratio_fmr"
    with pytest.raises(UsageError) as error:
        bound([[1e-4, 2e-4]], [[0.01, 0.02]])
    assert str(error.value) == BOUND_GROUPS.format(
        name="ratio_fmr", n=4, source="<DataFrame>", got=2
    )


def test_counts_follow_the_rows():
    """Rows of the table's algorithms get their counts; a stack of replicates repeats them;
    other rows (the FFMC search's made-up cases) take each group's smallest count."""
    counts = np.array([[10.0, 20.0], [30.0, 40.0]])
    assert contract._count_rows(counts, 2) is counts
    np.testing.assert_array_equal(contract._count_rows(counts, 4), np.vstack([counts, counts]))
    np.testing.assert_array_equal(contract._count_rows(counts, 3), [[10, 20]] * 3)
    same = np.array([[10.0, 20.0], [10.0, 20.0]])
    np.testing.assert_array_equal(contract._count_rows(same, 5), [[10, 20]] * 5)


# --- the registry's metadata -------------------------------------------------------------

NEW = [
    name
    for name in measure_names(inputs="rates") + measure_names(inputs="table")
    if name.startswith(("nist_", "ratio_", "merg", "mera", "ir_cp"))
]


def test_the_new_measures_are_registered():
    assert len(NEW) == 23  # 11 NIST summaries, 2 ratios, MERG, MERA, 8 adjusted
    assert set(measure_names(inputs="table")) == {
        "ratio_fmr",
        "ratio_fnmr",
        *(n for n in NEW if n.endswith("_cp")),
    }


@pytest.mark.parametrize("name", NEW)
def test_every_new_measure_has_its_metadata(name):
    m = get_measure(name)
    assert m.citation and m.undefined and m.fmr_term and m.fnmr_term and m.iso_term
    assert m.module.startswith("audit.measures.")
    assert not m.higher_is_fairer
    two_terms = m.share in ("linear", "log")
    # a measure takes alpha if and only if it combines an FMR and an FNMR term
    assert two_terms == (name in ("merg", "mera", "merg_cp", "ir_cp"))
    assert m.iso_term == (ISO_AGGREGATE if two_terms else ISO_OF_SHARE[m.share])
    assert m.needs == (("fmr", "fnmr") if two_terms else (m.share,))
    if name.endswith("_cp"):
        assert isinstance(m, TableMeasure) and m.counts
        assert "Clopper-Pearson" in m.citation and m.undefined.startswith("never undefined")
    if "nist" in name or name.startswith("ratio"):
        assert "NISTIR 8429" in m.citation


ISO_OF_SHARE = {"fmr": ISO_FALSE_POSITIVE, "fnmr": ISO_FALSE_NEGATIVE}


@pytest.mark.parametrize(
    ("name", "term"),
    [
        ("fdr", ISO_AGGREGATE),
        ("ir", ISO_AGGREGATE),
        ("garbe", ISO_AGGREGATE),
        ("nrb", ISO_AGGREGATE),
        ("nrb_fmr", ISO_FALSE_POSITIVE),
        ("std_fnmr", ISO_FALSE_NEGATIVE),
        ("ser", ISO_FALSE_POSITIVE),
        ("dfi", ISO_SCORE_DIFFERENTIAL),
        ("cei", ISO_SCORE_DIFFERENTIAL),
        ("sed_mean", ISO_AGGREGATE),
        ("std_eer", ""),  # the EER merges the two error types: no clear correspondence
        ("sed_std", ""),
        ("cell_gini", ISO_FALSE_POSITIVE),
    ],
)
def test_existing_measures_carry_their_iso_term(name, term):
    assert get_measure(name).iso_term == term


def test_an_unknown_iso_term_is_refused():
    with pytest.raises(ValueError) as error:
        RateMeasure(
            name="x",
            label="x",
            function=nist_max_min_fmr,
            higher_is_fairer=False,
            bounds=(1.0, None),
            ideal=1.0,
            fmr_term="A",
            fnmr_term="B",
            iso_term="equity index",
        )
    assert str(error.value) == BAD_ISO_TERM.format(terms=list(ISO_TERMS), term="equity index")


def test_measure_table_lists_every_measure_with_its_iso_term():
    table = measure_table()
    assert list(table.columns) == list(MEASURE_TABLE_COLUMNS)
    assert table["measure"].tolist() == measure_names()
    ratio = table.set_index("measure").loc["ratio_fmr"]
    assert ratio["kind"] == "table" and ratio["options"] == "attribute, numerator, reference"
    assert table.set_index("measure").loc["ir_cp", "counts"] == "n_mated, n_nonmated"
    assert set(table["iso_term"]) <= {*ISO_TERMS, ""}
    assert np.isnan(table.set_index("measure").loc["ir", "upper_bound"])


def test_nist_max_min_fmr_is_ser_and_max_minus_min_fnmr_is_fdrs_b(annex15_matrices):
    _, _, fmr, fnmr = annex15_matrices
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(
            get_measure("nist_max_min_fmr")(fmr, fnmr).value, get_measure("ser")(fmr, fnmr).value
        )
    np.testing.assert_allclose(
        get_measure("nist_max_minus_min_fnmr")(fmr, fnmr).value,
        get_measure("fdr")(fmr, fnmr).fnmr_term,
    )


# --- the FFMC verdicts on Annex 15 (golden) ----------------------------------------------

#: (measure, FFMC.1, FFMC.2, FFMC.3) on Annex 15, seed 0: True pass, False FAIL, None n/a.
#: Why: FFMC.1 fails every measure of one error rate (alpha cannot move it); MERG and MERA
#: cross 50% at alpha 0.24 and 0.30.  FFMC.2 passes only Max-Min FNMR (bounded [0, 1], both
#: ends reached); NIST's Gini is bounded but never reaches 1 (0.875 at most for 8 cells); the
#: others are unbounded, Max/Mean and MERA by the number of cells.  FFMC.3 passes the
#: measures without a zero in a denominator: Max-Min, Max/Mean, the Gini, MERA.  The
#: zero-error-adjusted measures need counts, which Annex 15 does not have.
ANNEX15_VERDICTS = [
    ("nist_max_min_fmr", None, False, False),
    ("nist_max_min_fnmr", None, False, False),
    ("nist_max_minus_min_fnmr", None, True, True),
    ("nist_max_mean_fmr", None, False, True),
    ("nist_max_mean_fnmr", None, False, True),
    ("nist_max_geomean_fmr", None, False, False),
    ("nist_max_geomean_fnmr", None, False, False),
    ("nist_log10_spread_fmr", None, False, False),
    ("nist_log10_spread_fnmr", None, False, False),
    ("nist_gini_fmr", None, False, True),
    ("nist_gini_fnmr", None, False, True),
    ("ratio_fmr", None, False, False),
    ("ratio_fnmr", None, False, False),
    ("merg", True, False, False),
    ("mera", True, False, True),
    *((name, None, None, None) for name in NEW if name.endswith("_cp")),
]


@pytest.fixture(scope="module")
def annex15_ffmc(annex15):
    return ffmc_table(annex15, [row[0] for row in ANNEX15_VERDICTS]).set_index(
        ["measure", "criterion"]
    )


@pytest.mark.parametrize(("name", "ffmc1", "ffmc2", "ffmc3"), ANNEX15_VERDICTS, ids=lambda x: x)
def test_ffmc_verdicts_on_annex15(annex15_ffmc, name, ffmc1, ffmc2, ffmc3):
    for criterion, expected in zip(
        ("FFMC.1", "FFMC.2", "FFMC.3"), (ffmc1, ffmc2, ffmc3), strict=True
    ):
        passed = annex15_ffmc.loc[(name, criterion), "passed"]
        assert (None if pd.isna(passed) else bool(passed)) is expected, (name, criterion)


@pytest.mark.parametrize(
    ("name", "criterion", "evidence"),
    [
        # one error rate: FFMC.1 does not apply (the one verdict rule), with the reason
        ("nist_max_min_fmr", "FFMC.1", "not applicable: the measure reads the FMR only"),
        ("nist_max_mean_fmr", "FFMC.2", "unbounded (declared [1, inf]); search range 1 to 8;"),
        (
            "nist_gini_fmr",
            "FFMC.2",
            "declared [0, 1], lower attained, upper not attained; search range 0 to 0.875",
        ),
        ("nist_max_minus_min_fnmr", "FFMC.2", "declared [0, 1], lower attained, upper attained"),
        ("merg", "FFMC.1", "median share of the alpha term surpasses 50% at alpha 0.24"),
        ("mera", "FFMC.1", "median share of the alpha term surpasses 50% at alpha 0.30"),
        ("merg", "FFMC.3", "one group's FMR at 0: 0.0%"),
        ("ratio_fmr", "FFMC.1", "not applicable: the measure reads the FMR only"),
        ("ratio_fmr", "FFMC.3", "one group's FMR at 0: 0.0%"),
        ("nist_gini_fmr", "FFMC.3", "one group's FMR at 0: 100.0%"),
        ("ir_cp", "FFMC.1", "needs the comparison counts column 'n_mated'"),
    ],
)
def test_the_evidence_behind_the_annex15_verdicts(annex15_ffmc, name, criterion, evidence):
    assert evidence in annex15_ffmc.loc[(name, criterion), "evidence"]


def test_the_seed_papers_verdicts_are_unchanged(annex15):
    """Adding measures leaves Howard et al.'s Table 2 as the audit reproduced it."""
    table = ffmc_table(annex15, ["fdr", "ir", "garbe"]).set_index(["measure", "criterion"])
    assert table["agrees_with_paper"].all()


def test_annex15_values_have_no_surprises(annex15):
    """Every new measure that applies computes on the real table, by its formula: Annex 15
    has no rate of 0 (its FMR floor is 1e-5), so no ratio divides by zero."""
    _, _, fmr, fnmr = rate_matrices(annex15)
    assert (fmr > 0).all() and (fnmr > 0).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = evaluate_many(annex15, [n for n in NEW if not n.endswith("_cp")])
    assert not out["undefined"].any() and np.isfinite(out["value"]).all()


@pytest.mark.parametrize("name", measure_names(inputs="table"))
@pytest.mark.parametrize(("fmr", "fnmr"), [(0.1, 0.3), (1 / 3, 0.7), (1e-5, 0.0123)])
def test_table_measures_give_exactly_the_ideal_on_equal_groups(name, fmr, fnmr):
    """As tests/test_exact_ideal.py asks of the rate measures: equal groups (with their
    counts) give exactly the ideal, not a rounding residue of a geometric mean."""
    t = _counted([fmr] * 4, [fnmr] * 4)
    out = evaluate(t, name, alpha=0.3)
    assert out["value"].tolist() == [get_measure(name).ideal]
    assert not out["undefined"].any()
