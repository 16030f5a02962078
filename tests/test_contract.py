"""The measure contract: one call signature per kind, alpha arrays, zero_division, checked outputs."""

import numpy as np
import pandas as pd
import pytest

from audit.exceptions import ParameterError
from audit.measures.contract import (
    ALPHA_SHAPE,
    BAD_FIELD,
    BAD_RESULT_SHAPE,
    NOT_A_RESULT,
    OUT_OF_BOUNDS,
    UNFLAGGED_NONFINITE,
    MeasureBoundsWarning,
    MeasureContractError,
    RateMeasure,
)
from audit.measures.kernels import (
    MeasureResult,
    UndefinedMeasureError,
    UndefinedMeasureWarning,
)
from audit.measures.registry import (
    BAD_PROBE,
    evaluate,
    evaluate_many,
    get_measure,
    measure_names,
    register,
    unregister,
)
from audit.tables.rates import read_rates

GRID = np.linspace(0.0, 1.0, 101)


@pytest.fixture(scope="module")
def zeros_table():
    """Three algorithms, one with a group FMR of 0 and one with a group FNMR of 0."""
    return read_rates(
        pd.DataFrame(
            {
                "Algorithm": ["a", "b", "c"],
                "FMR.F": [1e-5, 0.0, 2e-4],
                "FMR.M": [4e-5, 3e-5, 1e-4],
                "FMR.X": [2e-5, 1e-5, 1e-4],
                "FNMR.F": [0.01, 0.02, 0.0],
                "FNMR.M": [0.04, 0.03, 0.01],
                "FNMR.X": [0.02, 0.02, 0.03],
            }
        )
    )


@pytest.mark.parametrize("name", measure_names(inputs="rates"))
def test_alpha_array_equals_the_loop_over_alpha(annex15, name):
    together = evaluate(annex15, name, alpha=GRID, zero_division="flag")
    assert together.index.names[0] == "alpha" and len(together) == len(GRID) * 126
    for alpha in GRID[::10]:
        alone = evaluate(annex15, name, alpha=float(alpha), zero_division="flag")
        block = together.xs(alpha, level="alpha")
        pd.testing.assert_frame_equal(block, alone, check_exact=False, rtol=1e-12)


@pytest.mark.parametrize("name", measure_names(inputs="rates"))
def test_every_rate_measure_takes_zero_division(zeros_table, name):
    measure = get_measure(name)
    number = evaluate(zeros_table, measure, zero_division=-7.0)
    flagged = evaluate(zeros_table, measure, zero_division="flag")
    assert (number["undefined"] == flagged["undefined"]).all()
    if flagged["undefined"].any():
        assert (number.loc[number["undefined"], "value"] == -7.0).all()
        with pytest.raises(UndefinedMeasureError):
            evaluate(zeros_table, measure, zero_division="raise")
        with pytest.warns(UndefinedMeasureWarning):
            evaluate(zeros_table, measure, zero_division="warn")
    else:  # never undefined here: the policy changes nothing
        pd.testing.assert_frame_equal(number, flagged)


def test_evaluate_many_is_one_tidy_frame_of_evaluate(annex15):
    many = evaluate_many(annex15, ["fdr", "ir", "garbe"], alpha=[0.25, 0.5], zero_division="flag")
    assert list(many.columns) == [
        "measure",
        "alpha",
        "algorithm",
        "value",
        "fmr_term",
        "fnmr_term",
        "undefined",
        "rule",
    ]
    assert len(many) == 3 * 2 * 126
    assert (many["rule"] == "").all()  # both rates: no one-term rule
    garbe = many[(many["measure"] == "garbe") & (many["alpha"] == 0.5)].set_index("algorithm")
    alone = evaluate(annex15, "garbe", alpha=0.5)
    np.testing.assert_array_equal(garbe["value"].to_numpy(), alone["value"].to_numpy())
    # golden: Howard et al. sec. 4.3, GARBE at alpha 0.5 spans 0.1645-0.6183
    assert round(garbe["value"].min(), 4) == 0.1645 and round(garbe["value"].max(), 4) == 0.6183


def test_alpha_is_checked_whatever_its_shape():
    fdr = get_measure("fdr")
    expected = "a number in [0, 1] (or a 1-D array of them)"
    with pytest.raises(ParameterError) as error:
        fdr([[0.1, 0.2]], [[0.1, 0.2]], alpha=[0.5, 1.5])
    assert str(error.value) == f"parameter alpha: expected {expected}, got [0.5, 1.5]"
    with pytest.raises(ParameterError) as error:
        fdr([[0.1, 0.2]], [[0.1, 0.2]], alpha=[[0.5]])
    assert str(error.value) == f"parameter alpha: expected {ALPHA_SHAPE}, got [[0.5]]"


def _user(name, function, **changes):
    fields = dict(
        name=name,
        label=name,
        function=function,
        higher_is_fairer=False,
        bounds=(0.0, 1.0),
        ideal=0.0,
        fmr_term="A",
        fnmr_term="B",
    )
    fields.update(changes)
    return RateMeasure(**fields)


def _gap(fmr, fnmr, *, alpha=0.5):
    """A plain user measure: no zero_division keyword, scalar alpha only."""
    assert np.ndim(alpha) == 0
    a = fmr.max(axis=1) - fmr.min(axis=1)
    b = fnmr.max(axis=1) - fnmr.min(axis=1)
    return MeasureResult(alpha * a + (1 - alpha) * b, a, b, np.zeros(len(a), dtype=bool))


def test_a_scalar_only_user_measure_is_looped_over_alpha(annex15):
    register(_user("gap", _gap))
    try:
        together = evaluate(annex15, "gap", alpha=GRID)
        for alpha in (0.0, 0.37, 1.0):
            alone = evaluate(annex15, "gap", alpha=alpha)
            np.testing.assert_array_equal(
                together.xs(alpha, level="alpha")["value"].to_numpy(), alone["value"].to_numpy()
            )
    finally:
        unregister("gap")


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        (
            lambda a: (a, a, a, np.zeros(len(a), bool)),
            NOT_A_RESULT.format(name="bad", kind="tuple"),
        ),
        (
            lambda a: MeasureResult(a[:1], a, a, np.zeros(len(a), bool)),
            BAD_RESULT_SHAPE.format(
                name="bad", field="value", shape=(1,), expected=(2,), per_alpha=""
            ),
        ),
        (
            lambda a: MeasureResult(np.full(len(a), np.inf), a, a, np.zeros(len(a), bool)),
            UNFLAGGED_NONFINITE.format(name="bad", count=2, algorithm=0, value=np.inf),
        ),
        (
            lambda a: MeasureResult(a, a, a, None),
            BAD_FIELD.format(name="bad", field="undefined", dtype="bool", reason="it is None"),
        ),
    ],
)
def test_a_broken_user_measure_is_named_at_registration(returned, message):
    def bad(fmr, fnmr, *, alpha=0.5):
        return returned(fmr.max(axis=1))

    with pytest.raises(MeasureContractError) as error:
        register(_user("bad", bad))
    assert str(error.value) == message
    assert "bad" not in measure_names()


def test_a_user_measure_that_raises_is_named():
    def crash(fmr, fnmr, *, alpha=0.5):
        raise ZeroDivisionError("oops")

    with pytest.raises(MeasureContractError) as error:
        register(_user("crash", crash))
    assert str(error.value) == BAD_PROBE.format(name="crash", reason="ZeroDivisionError: oops")


def test_values_outside_the_declared_bounds_are_flagged_and_named():
    def big(fmr, fnmr, *, alpha=0.5):
        value = np.where(fmr[:, 0] > 5e-4, 2.0, 0.5)  # probe rows: 0.5 then 2.0
        return MeasureResult(value, value, value, np.zeros(len(value), bool))

    measure = _user("big", big)
    with pytest.warns(MeasureBoundsWarning) as caught:
        result = measure(
            [[1e-4, 2e-4], [1e-3, 2e-3]], [[0.1, 0.2], [0.1, 0.2]], zero_division="flag"
        )
    assert str(caught[0].message) == OUT_OF_BOUNDS.format(
        name="big", count=1, bounds=[0.0, 1.0], algorithm=1, value=2.0
    )
    assert result.undefined.tolist() == [False, True]
