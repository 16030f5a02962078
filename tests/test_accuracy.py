"""Overall accuracy: total FMR/FNMR as weighted averages of the group rates."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.analysis import accuracy
from audit.analysis.accuracy import WeightsError, group_weights, overall_rates
from audit.exceptions import ParameterError
from audit.tables.rates import read_rates
from audit.validation import REFUSED

EQUAL_2 = (
    "total_fnmr and total_fmr: equal group weights (each of the 2 groups counts 1/2); "
    "not weighted by comparison counts"
)


def _wide(**rows):
    """Wide table, groups F and M: name -> (fmr_F, fmr_M, fnmr_F, fnmr_M)."""
    return read_rates(
        pd.DataFrame(
            {
                "Algorithm": list(rows),
                "FMR.F": [r[0] for r in rows.values()],
                "FMR.M": [r[1] for r in rows.values()],
                "FNMR.F": [r[2] for r in rows.values()],
                "FNMR.M": [r[3] for r in rows.values()],
            }
        )
    )


@pytest.fixture
def table():
    return _wide(a=(1e-4, 3e-4, 0.01, 0.03), b=(2e-4, 2e-4, 0.02, 0.06))


@pytest.fixture
def long_table():
    return read_rates(
        pd.DataFrame(
            {
                "algorithm": ["a", "a", "b", "b"],
                "group": ["F", "M", "F", "M"],
                "fmr": [1e-4, 3e-4, 2e-4, 2e-4],
                "fnmr": [0.01, 0.03, 0.02, 0.06],
                "n_mated": [300, 100, 100, 100],
                "n_nonmated": [10_000, 30_000, 5000, 5000],
            }
        )
    )


def _write(tmp_path, text, name="counts.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_equal_weights_are_the_plain_mean(table):
    out = overall_rates(table)
    assert list(out.columns) == ["total_fmr", "total_fnmr"]
    assert list(out.index) == ["a", "b"]
    np.testing.assert_allclose(out["total_fnmr"], [0.02, 0.04])
    np.testing.assert_allclose(out["total_fmr"], [2e-4, 2e-4])
    assert out.attrs["weights"] == EQUAL_2


def test_counts_columns_give_the_pooled_rate(long_table):
    out = overall_rates(long_table, weights="counts")
    # pooled FNMR = false non-matches / mated comparisons
    np.testing.assert_allclose(out.loc["a", "total_fnmr"], (0.01 * 300 + 0.03 * 100) / 400)
    np.testing.assert_allclose(out.loc["b", "total_fnmr"], 0.04)
    np.testing.assert_allclose(out.loc["a", "total_fmr"], (1e-4 * 1000 + 3e-4 * 3000) / 4000)
    assert out.attrs["fnmr_weights"] == (
        "groups weighted by their number of mated comparisons (n_mated column of the rates table)"
    )
    assert out.attrs["fmr_weights"] == (
        "groups weighted by their number of non-mated comparisons (n_nonmated column of the "
        "rates table)"
    )
    assert out.attrs["weights"].startswith("total_fnmr: groups weighted by their number of mated")


def test_counts_with_only_mated_column_averages_fmr_equally(long_table):
    out = overall_rates(long_table.drop(columns="n_nonmated"), weights="counts")
    np.testing.assert_allclose(out.loc["a", "total_fmr"], 2e-4)
    assert out.attrs["fmr_weights"] == (
        "equal group weights (each of the 2 groups counts 1/2); the rates table gives no n_nonmated"
    )


def test_counts_without_count_columns_is_refused(table):
    with pytest.raises(WeightsError) as error:
        overall_rates(table, weights="counts")
    source = table.attrs.get("source")
    assert str(error.value) == accuracy.NO_COUNT_COLUMNS.format(
        source=f" ({source})" if source else ""
    )
    assert "--weights counts" in str(error.value)


def test_counts_file_per_group(table, tmp_path):
    path = _write(tmp_path, "group,n_mated,n_nonmated\nM,100,10\nF,300,30\n")
    out = overall_rates(table, weights=path)
    np.testing.assert_allclose(out["total_fnmr"], [(0.01 * 3 + 0.03) / 4, (0.02 * 3 + 0.06) / 4])
    np.testing.assert_allclose(out["total_fmr"], [(1e-4 * 3 + 3e-4) / 4, 2e-4])
    assert out.attrs["fnmr_weights"] == (
        f"groups weighted by their number of mated comparisons (n_mated column of {path}, "
        "the same for every algorithm)"
    )


def test_counts_file_per_algorithm(table, tmp_path):
    path = _write(tmp_path, "algorithm,group,n_mated\na,F,1\na,M,3\nb,F,1\nb,M,1\n")
    out = overall_rates(table, weights=path)
    np.testing.assert_allclose(out["total_fnmr"], [(0.01 + 0.09) / 4, 0.04])
    assert "per algorithm" in out.attrs["fnmr_weights"]
    assert out.attrs["fmr_weights"] == (
        f"equal group weights (each of the 2 groups counts 1/2); {path} gives no n_nonmated"
    )


def test_counts_dataframe_and_mappings_agree(table):
    frame = pd.DataFrame({"group": ["F", "M"], "n_mated": [300, 100], "n_nonmated": [30, 10]})
    from_frame = overall_rates(table, weights=frame)
    pairs = overall_rates(table, weights={"F": (300, 30), "M": (100, 10)})
    nested = overall_rates(
        table, weights={"n_mated": {"F": 3, "M": 1}, "n_nonmated": {"F": 3, "M": 1}}
    )
    single = overall_rates(table, weights={"F": 0.75, "M": 0.25})
    for out in (pairs, nested, single):
        pd.testing.assert_frame_equal(out, from_frame)
    assert (
        single.attrs["fnmr_weights"]
        == "groups weighted by their user-supplied mated weights (<mapping>)"
    )


def test_group_weights_are_normalised(table):
    w = group_weights(table, weights={"n_mated": {"F": 3, "M": 1}})
    np.testing.assert_allclose(w["w_fnmr"], [0.75, 0.25, 0.75, 0.25])
    np.testing.assert_allclose(w["w_fmr"], [0.5, 0.5, 0.5, 0.5])
    assert w.attrs["weights"].startswith("total_fnmr: groups weighted by their user-supplied")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("n_mated\n1\n", lambda p: accuracy.COUNTS_MISSING_COLUMN.format(source=p, column="group")),
        ("group\nF\nM\n", lambda p: accuracy.COUNTS_NO_COUNT_COLUMN.format(source=p)),
        (
            "group,n_mated,extra\nF,1,x\nM,1,y\n",
            lambda p: accuracy.COUNTS_UNKNOWN_COLUMNS.format(source=p, columns=["extra"]),
        ),
        (
            "group,n_mated\nF,1\nM,-2\n",
            lambda p: accuracy.COUNTS_BAD_COUNT.format(
                where=f"{p}, line 3", column="n_mated", value="-2"
            ),
        ),
        (
            "group,n_mated\nF,1.5\nM,2\n",
            lambda p: accuracy.COUNTS_BAD_COUNT.format(
                where=f"{p}, line 2", column="n_mated", value="1.5"
            ),
        ),
        (
            "group,n_mated\nF,1\nM,\n",
            lambda p: accuracy.COUNTS_BAD_COUNT.format(
                where=f"{p}, line 3", column="n_mated", value=""
            ),
        ),
        (
            "group,n_mated\nF,1\n,2\n",
            lambda p: accuracy.COUNTS_EMPTY_LABEL.format(where=f"{p}, line 3", column="group"),
        ),
        (
            "group,n_mated\nF,1\nM,2\nF,3\n",
            lambda p: accuracy.COUNTS_DUPLICATE.format(
                where=f"{p}, line 4", key="group 'F'", first=f"{p}, line 2"
            ),
        ),
        (
            "group,n_mated\nF,1\nM,2\nX,3\n",
            lambda p: accuracy.COUNTS_UNKNOWN_GROUPS.format(
                source=p, groups=["X"], known=["F", "M"]
            ),
        ),
        (
            "group,n_mated\nF,1\n",
            lambda p: accuracy.COUNTS_MISSING_GROUPS.format(source=p, groups=["M"], algorithm=""),
        ),
        (
            "algorithm,group,n_mated\na,F,1\na,M,1\nb,F,1\n",
            lambda p: accuracy.COUNTS_MISSING_GROUPS.format(
                source=p, groups=["M"], algorithm=" of algorithm 'b'"
            ),
        ),
        (
            "algorithm,group,n_mated\na,F,1\na,M,1\n",
            lambda p: accuracy.COUNTS_MISSING_ALGORITHMS.format(source=p, algorithms=["b"]),
        ),
        (
            "algorithm,group,n_mated\na,F,1\na,M,1\nb,F,1\nb,M,1\nz,F,1\n",
            lambda p: accuracy.COUNTS_UNKNOWN_ALGORITHMS.format(source=p, algorithms=["z"]),
        ),
        (
            "group,n_mated\nF,0\nM,0\n",
            lambda p: accuracy.ZERO_WEIGHTS.format(
                source=p, column="n_mated", algorithms=["a", "b"], rate="FNMR"
            ),
        ),
    ],
)
def test_counts_file_errors_name_file_line_and_column(table, tmp_path, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(WeightsError) as error:
        overall_rates(table, weights=path)
    assert str(error.value) == message(str(path))


def test_unreadable_counts_file(table, tmp_path):
    path = tmp_path / "absent.csv"
    with pytest.raises(WeightsError) as error:
        overall_rates(table, weights=path)
    assert str(error.value).startswith(
        accuracy.COUNTS_CANNOT_READ.format(source=path, reason="")[:-1]
    )


def test_mapping_errors(table):
    with pytest.raises(WeightsError) as error:
        overall_rates(table, weights={"F": "many", "M": 1})
    assert str(error.value) == accuracy.BAD_MAPPING.format(value="many", key="F")
    with pytest.raises(WeightsError) as error:
        overall_rates(table, weights={"F": -1.0, "M": 1.0})
    assert str(error.value) == accuracy.COUNTS_BAD_WEIGHT.format(
        where="<mapping>, group 'F'", column="n_mated", value=-1.0
    )


def test_unknown_weights_are_refused(table, tmp_path):
    """A name that is no file and no choice; 'Counts' was read as a missing file and
    refused in words that did not say so."""
    for weights, hint in [("mated", ""), ("Counts", " (did you mean 'counts'?)"),
                        (str(tmp_path / "EQUAL"), " (did you mean 'equal'?)")]:  # fmt: skip
        with pytest.raises(WeightsError) as error:
            overall_rates(table, weights=weights)
        assert str(error.value) == accuracy.NO_COUNTS_FILE.format(weights=weights, hint=hint)


@pytest.mark.parametrize("weights", [3, None, ["F", "M"]])
def test_weights_of_the_wrong_kind_are_refused(table, weights):
    with pytest.raises(ParameterError) as error:
        overall_rates(table, weights=weights)
    assert str(error.value) == REFUSED.format(
        name="weights",
        expected="one of 'equal', 'counts' or a path or a pandas DataFrame or a mapping",
        value=weights,
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.floats(0, 1), min_size=3, max_size=3),
    st.lists(st.floats(0.01, 100), min_size=3, max_size=3),
    st.floats(0.1, 1000),
)
def test_total_lies_between_group_rates_and_ignores_weight_scale(rates, weights, scale):
    t = read_rates(
        pd.DataFrame(
            {"algorithm": ["a"] * 3, "group": ["x", "y", "z"], "fmr": rates, "fnmr": rates}
        )
    )
    w = dict(zip("xyz", weights, strict=False))
    out = overall_rates(t, weights=w)
    scaled = overall_rates(t, weights={g: v * scale for g, v in w.items()})
    total = float(out["total_fnmr"].iloc[0])
    assert min(rates) - 1e-12 <= total <= max(rates) + 1e-12
    np.testing.assert_allclose(scaled["total_fnmr"], out["total_fnmr"], rtol=1e-12, atol=1e-15)


def test_annex15_equal_weights(annex15, annex15_matrices):
    algorithms, groups, fmr, fnmr = annex15_matrices
    out = overall_rates(annex15)
    assert len(out) == 126
    np.testing.assert_allclose(out["total_fnmr"], fnmr.mean(axis=1))
    np.testing.assert_allclose(out["total_fmr"], fmr.mean(axis=1))
    # Equal weights, not the paper's mated counts: 0.0031 where the paper has ~0.0022.
    assert out.loc["didiglobalface-001", "total_fnmr"] == pytest.approx(0.0030625)
    assert out.loc["intellifusion-001", "total_fnmr"] == pytest.approx(0.0058125)
    assert out.attrs["weights"] == (
        "total_fnmr and total_fmr: equal group weights (each of the 8 groups counts 1/8); "
        "not weighted by comparison counts"
    )
