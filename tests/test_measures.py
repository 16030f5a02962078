"""FDR, Inequity Rate and GARBE: golden values from Howard et al. (2022) sec. 4 on the
real Annex 15 table, oracle tests against literal transcriptions of eq. 1-9, and the
documented undefined cases."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from audit.exceptions import ParameterError
from audit.measures.kernels import (
    GINI_UNDEFINED,
    IR_UNDEFINED,
    TOO_FEW_GROUPS,
    UndefinedMeasureError,
    UndefinedMeasureWarning,
    fdr,
    garbe,
    gini,
    inequity_rate,
)

HOWARD = "Howard et al. 2022"


# --- literal transcriptions of the paper's equations (slow oracles) --------------------


def oracle_fdr(fmr, fnmr, alpha):
    """Eq. 1-3: max over all group pairs of the absolute differences."""
    a = max(abs(x - y) for x, y in itertools.product(fmr, fmr))
    b = max(abs(x - y) for x, y in itertools.product(fnmr, fnmr))
    return 1 - (alpha * a + (1 - alpha) * b), a, b


def oracle_ir(fmr, fnmr, alpha):
    """Eq. 4-6."""
    a = max(fmr) / min(fmr)
    b = max(fnmr) / min(fnmr)
    return a**alpha * b ** (1 - alpha), a, b


def oracle_gini(x):
    """Eq. 7, the double sum as printed."""
    n = len(x)
    mean = sum(x) / n
    double_sum = sum(abs(xi - xj) for xi in x for xj in x)
    return (n / (n - 1)) * double_sum / (2 * n**2 * mean)


def oracle_garbe(fmr, fnmr, alpha):
    """Eq. 8-9."""
    a, b = oracle_gini(fmr), oracle_gini(fnmr)
    return alpha * a + (1 - alpha) * b, a, b


ORACLES = {
    "fdr": (fdr, oracle_fdr),
    "ir": (inequity_rate, oracle_ir),
    "garbe": (garbe, oracle_garbe),
}


# --- golden values: Howard et al. sec. 4 on the Annex 15 data ---------------------------


def test_annex15_shape(annex15_matrices):
    """Sec. 3.3: 'eight demographic groups, across 126 face recognition algorithms'."""
    algorithms, groups, fmr, fnmr = annex15_matrices
    assert fmr.shape == fnmr.shape == (126, 8)
    assert len(set(algorithms)) == 126


def test_fdr_practical_range(annex15_matrices):
    """Sec. 4.1: 'the practical range of the FDR measure, with the alpha and beta set to
    0.5, is closer to 0.9 to 1, with over 95% of FDR values falling in that range'."""
    _, _, fmr, fnmr = annex15_matrices
    value = fdr(fmr, fnmr, alpha=0.5).value
    inside = (value >= 0.9) & (value <= 1.0)
    assert inside.sum() == 120
    assert inside.mean() > 0.95


def test_fdr_alpha_share_crosses_half_only_at_099(annex15_matrices):
    """Sec. 4.1 / Fig. 1D: 'the median relative contribution of the FMR difference to the
    FDR only surpasses 50% when alpha is 0.99 and higher'."""
    _, _, fmr, fnmr = annex15_matrices
    grid = np.round(np.arange(0, 1.0001, 0.01), 2)
    medians = []
    for alpha in grid:
        r = fdr(fmr, fnmr, alpha=alpha)
        a, b = alpha * r.fmr_term, (1 - alpha) * r.fnmr_term
        medians.append(np.median(a / (a + b)))
    medians = np.array(medians)
    first = grid[np.argmax(medians > 0.5)]
    assert first == 0.99
    assert medians[grid == 0.98][0] == pytest.approx(0.392, abs=1e-3)
    assert medians[grid == 0.99][0] == pytest.approx(0.566, abs=1e-3)


def test_ir_range_at_half(annex15_matrices):
    """Sec. 4.2: 'The distribution of IR values at the default alpha of 0.5 spans a range
    from 2.4 to 26.38'."""
    _, _, fmr, fnmr = annex15_matrices
    value = inequity_rate(fmr, fnmr, alpha=0.5).value
    assert value.min() == pytest.approx(2.40, abs=0.005)
    assert value.max() == pytest.approx(26.38, abs=0.005)


def test_ir_practical_maximum(annex15_matrices):
    """Sec. 4.2: 'the practical upper limit in this study was 63.1' (reached at alpha = 1,
    where IR is the FMR ratio A alone)."""
    _, _, fmr, fnmr = annex15_matrices
    maxima = {
        alpha: inequity_rate(fmr, fnmr, alpha=alpha).value.max() for alpha in np.linspace(0, 1, 101)
    }
    assert max(maxima.values()) == pytest.approx(63.1, abs=0.05)
    assert max(maxima, key=maxima.get) == 1.0


def test_ir_terms_typical_ranges(annex15_matrices):
    """Sec. 4.2: 'A(tau) typically having a value in the 40 - 50 range and the B(tau) term
    typically ranging from 4 to 9' (read here as the interquartile ranges)."""
    _, _, fmr, fnmr = annex15_matrices
    r = inequity_rate(fmr, fnmr, alpha=0.5)
    a_q1, a_q3 = np.percentile(r.fmr_term, [25, 75])
    b_q1, b_q3 = np.percentile(r.fnmr_term, [25, 75])
    assert 39.8 <= a_q1 and a_q3 <= 50.2
    assert np.median(r.fmr_term) == pytest.approx(50.1, abs=0.05)
    assert 3.9 <= b_q1 and b_q3 <= 9.0


def test_garbe_range_and_medians(annex15_matrices):
    """Sec. 4.3: 'GARBE metrics ... span about half of the theoretically usable range
    (0.165 - 0.618, Figure 3A)' and 'the median A(tau) value found at 0.74 and the median
    B(tau) at 0.33'."""
    _, _, fmr, fnmr = annex15_matrices
    r = garbe(fmr, fnmr, alpha=0.5)
    assert r.value.min() == pytest.approx(0.165, abs=0.001)
    assert r.value.max() == pytest.approx(0.618, abs=0.001)
    assert np.median(r.fmr_term) == pytest.approx(0.74, abs=0.005)
    assert np.median(r.fnmr_term) == pytest.approx(0.33, abs=0.005)


@pytest.mark.parametrize(
    "algorithm, expected",
    [
        ("didiglobalface-001", 0.54),  # sec. 4.5: 'the highest GARBE measure of ~0.54'
        ("intellifusion-001", 0.37),  # sec. 4.5: 'improved GARBE fairness measure at ~0.37'
    ],
)
def test_garbe_named_algorithms(annex15_matrices, algorithm, expected):
    algorithms, _, fmr, fnmr = annex15_matrices
    value = garbe(fmr, fnmr, alpha=0.5).value[algorithms.get_loc(algorithm)]
    assert value == pytest.approx(expected, abs=0.005)


def test_gini_grouping_example():
    """Sec. 3.5: 'For the data x = {5, 5, 10}, the corresponding G_x = 0.25 ... x = {10, 10}
    ... G_x would be 0'."""
    assert gini([5.0, 5.0, 10.0])[0][0] == pytest.approx(0.25)
    assert gini([10.0, 10.0])[0][0] == 0.0


# --- oracle tests -------------------------------------------------------------------


def test_oracles_on_annex15(annex15_matrices):
    _, _, fmr, fnmr = annex15_matrices
    for name, (fast, slow) in ORACLES.items():
        for alpha in (0.0, 0.3, 0.5, 0.99, 1.0):
            r = fast(fmr, fnmr, alpha=alpha)
            for i in range(len(fmr)):
                value, a, b = slow(list(fmr[i]), list(fnmr[i]), alpha)
                assert r.value[i] == pytest.approx(value, rel=1e-12), (name, alpha, i)
                assert r.fmr_term[i] == pytest.approx(a, rel=1e-12)
                assert r.fnmr_term[i] == pytest.approx(b, rel=1e-12)


positive_rates = arrays(
    np.float64, st.tuples(st.integers(1, 6), st.integers(2, 9)), elements=st.floats(1e-6, 1.0)
)


@settings(max_examples=60, deadline=None)
@given(fmr=positive_rates, data=st.data(), alpha=st.floats(0, 1))
def test_oracles_on_random_tables(fmr, data, alpha):
    fnmr = data.draw(arrays(np.float64, fmr.shape, elements=st.floats(1e-6, 1.0)))
    for name, (fast, slow) in ORACLES.items():
        r = fast(fmr, fnmr, alpha=alpha)
        for i in range(fmr.shape[0]):
            value, a, b = slow(list(fmr[i]), list(fnmr[i]), alpha)
            assert math.isclose(r.value[i], value, rel_tol=1e-9, abs_tol=1e-12), name
            assert math.isclose(r.fmr_term[i], a, rel_tol=1e-9, abs_tol=1e-12), name
            assert math.isclose(r.fnmr_term[i], b, rel_tol=1e-9, abs_tol=1e-12), name


def test_one_algorithm_as_vector():
    r = garbe([1e-5, 2e-5], [0.01, 0.03], alpha=0.25)
    assert r.value.shape == (1,)
    assert r.value[0] == pytest.approx(
        0.25 * oracle_gini([1e-5, 2e-5]) + 0.75 * oracle_gini([0.01, 0.03])
    )


# --- undefined cases and argument checks ---------------------------------------------


def test_ir_zero_minimum_warns_and_is_nan():
    fmr = [[1e-5, 2e-5], [0.0, 1e-5]]
    fnmr = [[0.01, 0.02], [0.01, 0.02]]
    message = IR_UNDEFINED.format(count=1, total=2, rate="FMR", eq=4)
    with pytest.warns(UndefinedMeasureWarning) as caught:
        r = inequity_rate(fmr, fnmr)
    assert [str(w.message) for w in caught] == [message]
    assert r.value[0] == pytest.approx(math.sqrt(2 * 2))
    assert np.isnan(r.value[1]) and np.isnan(r.fmr_term[1])
    assert r.undefined.tolist() == [False, True]


def test_ir_zero_fnmr_raise_and_fill():
    fmr, fnmr = [[1e-5, 2e-5]], [[0.0, 0.02]]
    with pytest.raises(UndefinedMeasureError, match="minimum group FNMR is 0"):
        inequity_rate(fmr, fnmr, zero_division="raise")
    r = inequity_rate(fmr, fnmr, zero_division=np.inf)
    assert r.value[0] == np.inf and r.undefined[0]


def test_ir_undefined_whatever_alpha():
    """With alpha = 1 the FNMR term has weight 0, but eq. 5 still divides by zero."""
    with pytest.warns(UndefinedMeasureWarning):
        r = inequity_rate([[1e-5, 2e-5]], [[0.0, 0.02]], alpha=1.0)
    assert np.isnan(r.value[0])


def test_garbe_all_zero_rates_convention():
    fmr = [[0.0, 0.0, 0.0], [1e-5, 1e-5, 2e-5]]
    fnmr = [[0.01, 0.02, 0.03], [0.01, 0.01, 0.01]]
    message = GINI_UNDEFINED.format(count=1, total=2, rate="FMR", value=0.0)
    with pytest.warns(UndefinedMeasureWarning) as caught:
        r = garbe(fmr, fnmr, alpha=0.5)
    assert [str(w.message) for w in caught] == [message]
    assert r.fmr_term[0] == 0.0 and r.undefined.tolist() == [True, False]
    assert r.value[0] == pytest.approx(0.5 * oracle_gini([0.01, 0.02, 0.03]))
    with pytest.raises(UndefinedMeasureError):
        garbe(fmr, fnmr, zero_division="raise")
    assert np.isnan(garbe(fmr, fnmr, zero_division=np.nan).value[0])


def test_garbe_one_group_zero_is_defined():
    """FFMC.3: a single group with no errors leaves the mean positive."""
    r = garbe([[0.0, 1e-5]], [[0.0, 0.02]])
    assert not r.undefined[0]
    assert r.fmr_term[0] == pytest.approx(1.0) and r.fnmr_term[0] == pytest.approx(1.0)


@pytest.mark.parametrize("alpha", [-0.1, 1.01, float("nan")])
def test_alpha_out_of_range(alpha):
    with pytest.raises(ParameterError) as error:
        fdr([[0.1, 0.2]], [[0.1, 0.2]], alpha=alpha)
    expected = "a number in [0, 1] (or a 1-D array of them)"
    assert str(error.value) == f"parameter alpha: expected {expected}, got {alpha!r}"


def test_one_group_is_refused():
    with pytest.raises(ValueError) as error:
        garbe([[0.1]], [[0.1]])
    assert str(error.value) == TOO_FEW_GROUPS.format(n=1)
