"""Property tests over the measure registry, in the manner of sklearn's tests/test_common.py.

Every registered rates measure declares, in ``Measure.properties``, whether it
has each property of ``audit.registry.PROPERTIES``. One generic test per
property verifies the declaration either way: for a measure declared to have
it, Hypothesis looks for a counterexample; for a measure declared to lack it,
a seeded search must find one. A completeness test makes sure no measure is
left unclassified -- including the user measure of tests/user_measures,
loaded here exactly as a user would load theirs.

A table measure (one that reads the groups' attributes or the comparison
counts) is tested bound to a made-up table of the rates' shape: the first half
of the groups women, the rest men, races cycling, and the same counts for every
group (1,000 mated, 100,000 non-mated comparisons), so a property holds or fails
by the measure's formula, not by unequal counts.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from audit.measures.contract import PROPERTIES, TableMeasure
from audit.measures.registry import (
    get_measure,
    load_measure_module,
    measure_names,
)

USER_MODULE = "tests.user_measures.my_measure"
load_measure_module(USER_MODULE)
load_measure_module("tests.user_measures.order_dependent")  # lacks several properties

SCALAR = measure_names(inputs="rates") + measure_names(inputs="table")
SETTINGS = settings(max_examples=60, deadline=None)
RTOL = 1e-9


def having(prop: str, value: bool) -> list[str]:
    return [n for n in SCALAR if get_measure(n).properties.get(prop) is value]


def labelled(n_groups: int) -> pd.DataFrame:
    """A one-algorithm table of ``n_groups`` gender x race groups with equal counts (its
    rates are placeholders: a bound measure reads only its groups and counts)."""
    gender = ["F" if g < (n_groups + 1) // 2 else "M" for g in range(n_groups)]
    race = [f"r{g % ((n_groups + 1) // 2)}" for g in range(n_groups)]
    return pd.DataFrame(
        {
            "algorithm": "a",
            "gender": gender,
            "race": race,
            "group": [f"{x}.{y}" for x, y in zip(gender, race, strict=True)],
            "fmr": 1e-4,
            "fnmr": 0.01,
            "n_mated": 1000,
            "n_nonmated": 100_000,
        }
    )


def measure(name: str, n_groups: int):
    """The registered measure, a table measure bound to :func:`labelled` groups."""
    spec = get_measure(name)
    return spec.bind(labelled(n_groups)) if isinstance(spec, TableMeasure) else spec


def evaluate(name: str, fmr, fnmr, alpha: float = 0.5):
    """(value, undefined, n_warnings) with the measure's warnings recorded, not raised."""
    fmr, fnmr = np.asarray(fmr, dtype="float64"), np.asarray(fnmr, dtype="float64")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = measure(name, fmr.shape[-1])(fmr, fnmr, alpha=alpha)
    return (
        np.asarray(result.value, dtype="float64"),
        np.asarray(result.undefined, dtype=bool),
        len(caught),
    )


@st.composite
def rate_pairs(draw, *, low: float = 0.0):
    n_alg = draw(st.integers(1, 4))
    n_groups = draw(st.integers(2, 8))
    elements = st.floats(low, 1.0, allow_nan=False, allow_infinity=False)
    shape = (n_alg, n_groups)
    return draw(arrays("float64", shape, elements=elements)), draw(
        arrays("float64", shape, elements=elements)
    )


alphas = st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0])


# --- completeness -------------------------------------------------------------------


def test_the_user_measure_is_registered():
    assert "user_ncv" in SCALAR
    assert get_measure("user_ncv").module == USER_MODULE


@pytest.mark.parametrize("name", SCALAR)
def test_every_measure_declares_every_property(name):
    declared = get_measure(name).properties
    assert set(declared) == set(PROPERTIES), (
        f"{name} leaves {set(PROPERTIES) - set(declared)} undeclared"
    )
    assert all(isinstance(v, bool) for v in declared.values())


@pytest.mark.parametrize("name", SCALAR)
def test_bounded_property_agrees_with_declared_bounds(name):
    m = get_measure(name)
    assert m.properties["bounded"] == m.bounded


# --- bounded --------------------------------------------------------------------------


@pytest.mark.parametrize("name", having("bounded", True))
@SETTINGS
@given(rates=rate_pairs(), alpha=alphas)
def test_bounded_measures_stay_within_their_bounds(name, rates, alpha):
    lo, hi = get_measure(name).bounds
    value, _, _ = evaluate(name, *rates, alpha)
    assert not np.isinf(value).any()
    finite = value[np.isfinite(value)]
    assert (finite >= lo - 1e-12).all() and (finite <= hi + 1e-12).all()


@pytest.mark.parametrize("name", having("bounded", False))
def test_unbounded_measures_grow_without_limit(name):
    def worst(eps, n=8):
        base = np.full((1, n), 0.5)
        one_low = base.copy()
        one_low[0, 0] = eps
        others_low = np.full((1, n), eps)
        others_low[0, 0] = 0.5
        values = [
            evaluate(name, f, g)[0][0]
            for f, g in (
                (one_low, one_low),
                (others_low, others_low),
                (one_low, base),
                (base, one_low),
            )
        ]
        return np.nanmax(values)

    # as one group's rates (or the others') approach 0, or as the number of groups grows
    # (NIST's Max/Mean is at most the number of groups: bounded for each table, not for all)
    assert max(worst(1e-300), worst(1e-300, n=1000)) > 10 * worst(1e-3)


# --- permutation invariance ----------------------------------------------------------


@pytest.mark.parametrize("name", having("permutation_invariant", True))
@SETTINGS
@given(rates=rate_pairs(), alpha=alphas, data=st.data())
def test_permutation_invariant_measures(name, rates, alpha, data):
    fmr, fnmr = rates
    order = data.draw(st.permutations(range(fmr.shape[1])))
    before, _, _ = evaluate(name, fmr, fnmr, alpha)
    after, _, _ = evaluate(name, fmr[:, order], fnmr[:, order], alpha)
    np.testing.assert_allclose(after, before, rtol=RTOL, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name", having("permutation_invariant", False))
def test_order_dependent_measures_have_a_counterexample(name):
    rng = np.random.default_rng(0)
    fmr, fnmr = rng.uniform(1e-4, 1, (200, 8)), rng.uniform(1e-4, 1, (200, 8))
    order = np.roll(np.arange(8), 1)  # every group moves
    assert not np.allclose(
        evaluate(name, fmr, fnmr)[0],
        evaluate(name, fmr[:, order], fnmr[:, order])[0],
        equal_nan=True,
    )


# --- scale invariance ----------------------------------------------------------------


@pytest.mark.parametrize("name", having("scale_invariant", True))
@SETTINGS
@given(
    rates=rate_pairs(low=1e-6),
    alpha=alphas,
    c_fmr=st.floats(1e-3, 1.0),
    c_fnmr=st.floats(1e-3, 1.0),
)
def test_scale_invariant_measures(name, rates, alpha, c_fmr, c_fnmr):
    fmr, fnmr = rates
    before, _, _ = evaluate(name, fmr, fnmr, alpha)
    after, _, _ = evaluate(name, c_fmr * fmr, c_fnmr * fnmr, alpha)
    np.testing.assert_allclose(after, before, rtol=1e-7, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name", having("scale_invariant", False))
def test_scale_dependent_measures_have_a_counterexample(name):
    rng = np.random.default_rng(0)
    fmr, fnmr = rng.uniform(1e-4, 1, (200, 8)), rng.uniform(1e-4, 1, (200, 8))
    # a zero rate in some rows: a value that replaces it (a confidence bound) does not scale
    fmr[::4, 0] = 0.0
    fnmr[1::4, 0] = 0.0
    assert not np.allclose(
        evaluate(name, fmr, fnmr)[0], evaluate(name, fmr / 2, fnmr / 2)[0], equal_nan=True
    )


# --- defined at zero (FFMC.3) --------------------------------------------------------


@pytest.mark.parametrize("name", having("defined_at_zero", True))
@SETTINGS
@given(rates=rate_pairs(low=1e-6), alpha=alphas, data=st.data())
def test_measures_defined_at_zero(name, rates, alpha, data):
    fmr, fnmr = rates[0].copy(), rates[1].copy()
    group = data.draw(st.integers(0, fmr.shape[1] - 1))
    target = fmr if data.draw(st.booleans()) else fnmr
    target[:, group] = 0.0
    value, undefined, n_warnings = evaluate(name, fmr, fnmr, alpha)
    assert np.isfinite(value).all() and not undefined.any() and n_warnings == 0


@pytest.mark.parametrize("name", having("defined_at_zero", False))
def test_measures_undefined_at_zero_have_a_counterexample(name):
    fmr, fnmr = np.full((1, 8), 1e-4), np.full((1, 8), 0.02)
    cases = []
    for zeroed in ("fmr", "fnmr"):
        f, g = fmr.copy(), fnmr.copy()
        (f if zeroed == "fmr" else g)[0, 0] = 0.0
        value, undefined, _ = evaluate(name, f, g)
        cases.append(not np.isfinite(value).all() or undefined.any())
    assert any(cases)


# --- ideal value when all groups are equal ------------------------------------------


@pytest.mark.parametrize("name", having("ideal_when_equal", True))
@SETTINGS
@given(f=st.floats(1e-6, 1.0), g=st.floats(1e-6, 1.0), n_groups=st.integers(2, 8), alpha=alphas)
def test_ideal_value_when_all_groups_are_equal(name, f, g, n_groups, alpha):
    value, undefined, _ = evaluate(
        name, np.full((1, n_groups), f), np.full((1, n_groups), g), alpha
    )
    assert not undefined.any()
    np.testing.assert_allclose(value, get_measure(name).ideal, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", having("ideal_when_equal", False))
def test_measures_off_ideal_when_equal_have_a_counterexample(name):
    values = [
        evaluate(name, np.full((1, 8), f), np.full((1, 8), g))[0][0]
        for f in (1e-5, 1e-3, 0.1)
        for g in (1e-3, 0.1, 0.9)
    ]
    assert not np.allclose(values, get_measure(name).ideal)
