"""The measure registry: metadata as data, errors, user measures."""

from __future__ import annotations

import numpy as np
import pytest

import audit
from audit.measures import contract
from audit.measures.contract import BAD_SHARE, UNKNOWN_PROPERTY, ScoreMeasure
from audit.measures.registry import (
    ALREADY_REGISTERED,
    BAD_MODULE,
    UNKNOWN_MEASURE,
    Measure,
    evaluate,
    get_measure,
    load_measure_module,
    measure_names,
    register,
    register_measure,
    unregister,
)

BUILT_INS = ["fdr", "ir", "garbe", "nrb", "nrb_fmr", "nrb_fnmr", "std_fmr", "std_fnmr", "ser"]


def _dummy(**changes):
    fields = dict(
        name="dummy",
        label="Dummy",
        function=audit.measures.fdr,
        higher_is_fairer=True,
        bounds=(0.0, 1.0),
        ideal=1.0,
        fmr_term="A",
        fnmr_term="B",
    )
    kind = ScoreMeasure if changes.pop("inputs", "rates") == "scores" else Measure
    fields.update(changes)
    return kind(**fields)


def test_built_ins_register_on_import():
    assert set(BUILT_INS) <= set(measure_names())
    assert set(BUILT_INS) <= set(measure_names(inputs="rates"))


def test_every_built_in_has_its_metadata():
    for name in BUILT_INS:
        m = get_measure(name)
        assert m.citation and m.undefined and m.fmr_term and m.fnmr_term
        assert m.module.startswith("audit.")


def test_unknown_measure_lists_the_valid_names():
    with pytest.raises(KeyError) as error:
        get_measure("nope")
    assert error.value.args[0] == UNKNOWN_MEASURE.format(name="nope", names=sorted(measure_names()))


def test_registering_twice_is_refused():
    with pytest.raises(ValueError) as error:
        register(_dummy(name="fdr"))
    assert str(error.value) == ALREADY_REGISTERED.format(
        name="fdr", citation=get_measure("fdr").citation
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (dict(share="cubic"), BAD_SHARE.format(share="cubic")),
        (
            dict(properties={"monotone": True}),
            UNKNOWN_PROPERTY.format(name="monotone", names=list(contract.PROPERTIES)),
        ),
    ],
)
def test_bad_metadata_is_refused(changes, message):
    with pytest.raises(ValueError) as error:
        _dummy(**changes)
    assert str(error.value) == message


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError) as error:
        register_measure(name="x", higher_is_fairer=True, bounds=(0, 1), ideal=1, inputs="images")
    assert str(error.value) == (
        "parameter inputs: expected one of 'rates', 'table', 'scores', 'pairs', got 'images'"
    )


def test_register_and_unregister():
    m = register(_dummy())
    try:
        assert get_measure("dummy") is m
        assert "dummy" in measure_names(inputs="rates")
    finally:
        assert unregister("dummy") is m
    assert "dummy" not in measure_names()


def test_scores_measures_are_kept_apart():
    register(_dummy(inputs="scores"))
    try:
        assert "dummy" in measure_names(inputs="scores")
        assert "dummy" not in measure_names(inputs="rates")
    finally:
        unregister("dummy")


@pytest.mark.parametrize(
    ("name", "worst"),
    [("fdr", 0.0), ("garbe", 1.0), ("ir", np.inf), ("std_fnmr", 0.5), ("nrb", np.inf)],
)
def test_worst_is_the_bound_away_from_the_ideal(name, worst):
    assert get_measure(name).worst == worst


def test_alpha_share_rules():
    a, b = np.array([2.0]), np.array([4.0])
    assert get_measure("garbe").alpha_share(a, b, 0.5)[0] == pytest.approx(1 / 3)
    assert get_measure("ir").alpha_share(np.array([np.e**2]), np.array([np.e]), 0.5)[
        0
    ] == pytest.approx(2 / 3)
    assert get_measure("ser").alpha_share(a, np.array([np.nan]), 0.0)[0] == 1.0
    assert get_measure("std_fnmr").alpha_share(np.array([np.nan]), b, 1.0)[0] == 0.0


def test_a_user_module_registers_by_dotted_name(annex15, own_measures):
    load_measure_module("tests.user_measures.my_measure")
    m = get_measure("user_ncv")
    assert m.module == "tests.user_measures.my_measure"
    result = evaluate(annex15, "user_ncv")
    assert len(result) == 126 and result["value"].between(0, 1).all()
    assert load_measure_module("tests.user_measures.my_measure") == []  # idempotent


def test_a_missing_module_is_reported():
    with pytest.raises(ImportError) as error:
        load_measure_module("tests.user_measures.no_such_module")
    assert str(error.value).startswith(
        BAD_MODULE.format(name="tests.user_measures.no_such_module", reason="")
    )


def test_evaluate_refuses_a_scores_measure(annex15):
    from audit.measures.registry import NEEDS_SCORES, evaluate

    with pytest.raises(ValueError) as error:
        evaluate(annex15, "dfi")
    assert str(error.value) == NEEDS_SCORES.format(name="dfi")
