"""Score tables: validation, thresholds at a target FMR, per-group rates, sweeps."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from conftest import synthetic
from hypothesis import given, settings
from hypothesis import strategies as st

from audit import scores as S
from audit.analysis.sweeps import sweep_measures
from audit.measures.registry import evaluate
from audit.scores import (
    ScoresError,
    det_points,
    rates_at_fmr,
    rates_at_thresholds,
    read_scores,
    score_stats,
    score_stats_from_arrays,
    sweep,
    thresholds_at_fmr,
)
from audit.scores import runs as runs_module
from audit.scores import stats as stats_module
from audit.tables import scores as SR
from audit.validation import REFUSED


def literal_rates(frame, threshold, higher_is_match=True):
    """Slow literal count at a threshold: the oracle."""
    rows = []
    for (algorithm, group), _ in frame.groupby(["algorithm", "group_1"], sort=False):
        a = frame[frame["algorithm"] == algorithm]
        accept = a["score"] >= threshold if higher_is_match else a["score"] <= threshold
        nm = (~a["mated"]) & (a["group_1"] == group) & (a["group_2"] == group)
        m = a["mated"] & (a["group_1"] == group)
        rows.append((algorithm, group, accept[nm].sum() / nm.sum(), (~accept[m]).sum() / m.sum()))
    return pd.DataFrame(rows, columns=["algorithm", "group", "fmr", "fnmr"])


# ------------------------------------------------------------------------ validation


def base():
    return pd.DataFrame(
        {
            "algorithm": ["a", "a", "a"],
            "score": [0.9, 0.1, 0.4],
            "mated": [True, False, False],
            "group": ["F", "F", "M"],
        }
    )


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda f: f.drop(columns="score"),
            SR.MISSING_COLUMN.format(source="<DataFrame>", column="score", hint=""),
        ),
        (
            lambda f: f.drop(columns="algorithm"),
            SR.MISSING_COLUMN.format(
                source="<DataFrame>",
                column="algorithm",
                hint=" (the system that produced each score)",
            ),
        ),
        (
            lambda f: f.assign(extra=1),
            SR.UNKNOWN_COLUMNS.format(source="<DataFrame>", columns=["extra"]),
        ),
        (
            lambda f: f.assign(score=["0.9", "high", "0.4"]),
            SR.NOT_NUMERIC.format(
                where="<DataFrame>, row 1", column="score", value="high", more=""
            ),
        ),
        (
            lambda f: f.assign(score=[0.9, np.nan, np.nan]),
            SR.MISSING_VALUE.format(
                where="<DataFrame>, row 1", column="score", more=" (and 1 more such cell(s))"
            ),
        ),
        (
            lambda f: f.assign(score=[0.9, np.inf, 0.4]),
            SR.NOT_FINITE.format(where="<DataFrame>, row 1", column="score", value=np.inf, more=""),
        ),
        (
            lambda f: f.assign(score=np.array([2**60, 2**60 + 1, 5], dtype=np.int64)),
            SR.INEXACT_INTEGER.format(
                where="<DataFrame>, row 1",
                column="score",
                value=2**60 + 1,
                read=float(2**60),
                more="",
            ),
        ),
        (
            lambda f: f.assign(score=pd.period_range("2024-01", periods=3, freq="M")),
            SR.NOT_A_QUANTITY.format(
                where="<DataFrame>, row 0",
                column="score",
                value="2024-01",
                kind="period",
                more=" (and 2 more such cell(s))",
            ),
        ),
        (
            lambda f: f.assign(
                group=pd.Series([["F"], ["F"], ["M"]], dtype=pd.ArrowDtype(pa.list_(pa.string())))
            ),
            SR.NOT_A_LABEL.format(
                where="<DataFrame>, row 0",
                column="group",
                value="['F']",
                kind="list",
                more=" (and 2 more such cell(s))",
            ),
        ),
        (
            lambda f: f.assign(score=pd.to_timedelta([1.5, 2, 3], "s")),
            SR.NOT_A_QUANTITY.format(
                where="<DataFrame>, row 0",
                column="score",
                value="0 days 00:00:01.500000",
                kind="duration",
                more=" (and 2 more such cell(s))",
            ),
        ),
        (
            lambda f: f.assign(mated=["yes", "maybe", "no"]),
            SR.BAD_MATED.format(where="<DataFrame>, row 1", value="maybe", more=""),
        ),
        (
            lambda f: f.assign(group=["F", " ", "M"]),
            SR.EMPTY_LABEL.format(where="<DataFrame>, row 1", column="group", more=""),
        ),
        (
            lambda f: f.assign(group=["F", {"sex": "F"}, ["M"]]),
            SR.NOT_A_LABEL.format(
                where="<DataFrame>, row 1",
                column="group",
                value="{'sex': 'F'}",
                kind="dict",
                more=" (and 1 more such cell(s))",
            ),
        ),
        (
            lambda f: f.drop(columns="group").assign(
                group_1=["F", "F", "M"], group_2=["M", "F", "M"]
            ),
            SR.MATED_CROSS_GROUP.format(where="<DataFrame>, row 0", first="F", second="M", more=""),
        ),
        (
            lambda f: f.assign(group_1=f["group"]),
            SR.MIXED_GROUP_COLUMNS.format(
                source="<DataFrame>", single="group", sides=["group_1", "group_2"]
            ),
        ),
        (
            lambda f: f.drop(columns="group").assign(group_1=["F", "F", "M"]),
            SR.MISSING_COLUMN.format(
                source="<DataFrame>",
                column="group_2",
                hint=" (a group given per side needs both sides)",
            ),
        ),
        (lambda f: f.iloc[:0], SR.EMPTY.format(source="<DataFrame>")),
    ],
)
def test_validation_messages(change, message):
    with pytest.raises(ScoresError) as caught:
        read_scores(change(base()))
    assert str(caught.value) == message


def test_csv_integers_a_float_cannot_hold_are_refused(tmp_path):
    """A written integer beyond 2**53 that a 64-bit float does not hold (read as its
    neighbour, tied with it) is refused, with or without a point; one it holds (2**60),
    and a number written with an exponent (a float, as written), are read."""
    path = tmp_path / "scores.csv"
    path.write_text(
        "algorithm,score,mated,group\na,1e300,1,F\na,1152921504606846976,0,F\n"
        "a,1152921504606846977,0,M\na,0.2,1,M\n"
    )
    with pytest.raises(ScoresError) as caught:
        read_scores(path)
    assert str(caught.value) == SR.INEXACT_INTEGER.format(
        where=f"{path}, line 4",
        column="score",
        value="1152921504606846977",
        read=float(2**60),
        more="",
    )
    path.write_text(path.read_text().replace("846977", "846978"))  # 2**60 + 2: not held
    with pytest.raises(ScoresError, match="line 4, column 'score': 1152921504606846978 is an"):
        read_scores(path)
    path.write_text(path.read_text().replace("846978", "846977.0"))  # an integer still
    with pytest.raises(ScoresError, match="line 4, column 'score': 1152921504606846977.0 is an"):
        read_scores(path)
    path.write_text(path.read_text().replace("1152921504606846977.0", "1.152921504606846977e18"))
    assert read_scores(path)["score"].iloc[2] == 2.0**60  # written as a float: read as one
    path.write_text(path.read_text().replace("1.152921504606846977e18", "9007199254740992"))
    assert read_scores(path)["score"].tolist() == [1e300, 2.0**60, 2.0**53, 0.2]


def test_csv_errors_name_file_and_line(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("algorithm,score,mated,group\na,0.5,1,F\na,oops,0,F\n")
    with pytest.raises(ScoresError) as caught:
        read_scores(path)
    assert str(caught.value) == SR.NOT_NUMERIC.format(
        where=f"{path}, line 3", column="score", value="oops", more=""
    )
    path.write_text("algorithm,score,mated,group,group\na,0.5,1,F,F\n")
    with pytest.raises(ScoresError) as caught:
        read_scores(path)
    assert str(caught.value) == SR.DUPLICATE_COLUMN.format(source=str(path), column="group")


def test_csv_and_parquet_read_the_same(tmp_path):
    frame = synthetic(200)
    frame.to_csv(tmp_path / "s.csv", index=False)
    frame.to_parquet(tmp_path / "s.parquet")
    a = read_scores(tmp_path / "s.csv")
    b = read_scores(tmp_path / "s.parquet")
    pd.testing.assert_series_equal(a["score"], b["score"])
    assert (a["mated"] == b["mated"]).all()
    assert list(a["group_1"].astype(str)) == list(b["group_1"].astype(str))


@pytest.mark.parametrize("batch", [1 << 17, 256])
@pytest.mark.parametrize("subjects", [False, True])
@pytest.mark.filterwarnings(
    "ignore:.*appear in more than one group:audit.tables.scores.ScoresWarning"
)
def test_a_folder_of_parquet_files_reads_as_one_table(tmp_path, subjects, batch, monkeypatch):
    """Batch by batch into arrays of the final size: the table read_scores gives for the
    rows as one frame, categories in order of first appearance across files (here a
    group seen first on side 2 of a later file, and a late algorithm); rows named by
    their place in the file when batches cut the row groups."""
    from audit.tables import chunks

    monkeypatch.setattr(chunks, "_BATCH", batch)
    frame = synthetic(3000, subjects=subjects).astype({"score": "float32"})
    late = synthetic(300, seed=3, subjects=subjects).astype({"score": "float32"})
    late["algorithm"] = "c"
    cross = ~late["mated"]
    late.loc[cross, "group_2"] = "W"
    frame = pd.concat([frame, late], ignore_index=True)
    frame["extra"] = 1
    (tmp_path / "run").mkdir()
    for i, start in enumerate(range(0, len(frame), 2500)):
        part = frame.iloc[start : start + 2500]
        part.to_parquet(tmp_path / "run" / f"part-{i}.parquet", row_group_size=700)
    expected = read_scores(frame, ignore=["extra"])
    for source in (tmp_path / "run", str(tmp_path / "run" / "*.parquet")):
        table = read_scores(source, ignore=["extra"])
        assert table.attrs.pop("source") == str(source)
        expected.attrs.pop("source", None)
        pd.testing.assert_frame_equal(table, expected, check_exact=True)
    assert table["score"].dtype == np.float32
    assert list(table["group_1"].cat.categories)[-1] == "W"
    frame.loc[2600, "group_1"] = "  "
    frame.iloc[2500:].to_parquet(tmp_path / "run" / "part-1.parquet", row_group_size=700)
    with pytest.raises(ScoresError) as error:
        read_scores(tmp_path / "run", ignore=["extra"])
    # counted in the rows read with it only (a row group, or a batch of one): the message
    # says so, and that the other rows were not counted
    last = min(batch, 700) - 1
    assert str(error.value) == SR.EMPTY_LABEL.format(
        where=f"{tmp_path / 'run' / 'part-1.parquet'}, row 100",
        column="group_1",
        more=f" (no other such cell in rows 0 to {last}, read together; the other rows were not counted)",
    )


def test_one_group_per_row_is_held_once(tmp_path, monkeypatch):
    """A group given once per row: group_2 is group_1, one array of codes for both."""
    from audit.tables import chunks

    monkeypatch.setattr(chunks, "_BATCH", 128)
    frame = synthetic(1000).drop(columns="group_2").rename(columns={"group_1": "group"})
    frame.to_parquet(tmp_path / "s.parquet", row_group_size=300)
    table = read_scores(tmp_path / "s.parquet")
    expected = read_scores(frame)
    expected.attrs["source"] = table.attrs["source"]
    pd.testing.assert_frame_equal(table, expected, check_exact=True)
    codes = [table[c].array.codes for c in ("group_1", "group_2")]
    assert np.shares_memory(*codes)


def test_ignore_and_attributes():
    frame = pd.DataFrame(
        {
            "algorithm": "a",
            "score": [1.0, 0.0],
            "mated": [1, 0],
            "gender": ["f", "f"],
            "race": ["B", "B"],
            "file": ["x", "y"],
        }
    )
    table = read_scores(frame, attributes=["gender", "race"], ignore=["file"])
    assert list(table["group_1"].astype(str)) == ["f.B", "f.B"]
    assert table.attrs["attributes"] == ("gender", "race")


def dotted(**labels):
    """Two groups, each with mated and non-mated scores, labelled per row by ``labels``."""
    return pd.DataFrame(
        {
            "algorithm": "a",
            "score": [0.9, 0.1, 0.8, 0.2],
            "mated": [True, False, True, False],
            **labels,
        }
    )


def test_several_attributes_refuse_a_value_with_a_dot():
    # joined as "a.b.c" both, these two distinct groups would merge into one
    frame = dotted(x=["a.b", "a.b", "a", "a"], y=["c", "c", "b.c", "b.c"])
    with pytest.raises(ScoresError) as caught:
        read_scores(frame, attributes=["x", "y"])
    assert str(caught.value) == SR.DOTTED_ATTRIBUTE.format(
        where="<DataFrame>, row 0",
        column="x",
        value="a.b",
        attributes=["x", "y"],
        more=" (and 1 more such cell(s))",
    )
    frame = dotted(
        gender=["f"] * 4,
        nationality_1=["UK", "UK", "U.S.A", "U.S.A"],
        nationality_2=["UK", "UK", "U.S.A", "U.S.A"],
    )
    with pytest.raises(ScoresError) as caught:
        read_scores(frame, attributes=["gender", "nationality"])
    assert str(caught.value) == SR.DOTTED_ATTRIBUTE.format(
        where="<DataFrame>, row 2",
        column="nationality_1",
        value="U.S.A",
        attributes=["gender", "nationality"],
        more=" (and 1 more such cell(s))",
    )


def test_csv_dotted_attribute_names_file_and_line(tmp_path):
    path = tmp_path / "scores.csv"
    path.write_text("algorithm,score,mated,gender,nationality\na,0.9,1,f,UK\na,0.1,0,f,U.S.A\n")
    with pytest.raises(ScoresError) as caught:
        read_scores(path, attributes=["gender", "nationality"])
    assert str(caught.value) == SR.DOTTED_ATTRIBUTE.format(
        where=f"{path}, line 3",
        column="nationality",
        value="U.S.A",
        attributes=["gender", "nationality"],
        more="",
    )


def test_one_attribute_or_group_column_keeps_its_dots():
    table = read_scores(
        dotted(nationality=["UK", "UK", "U.S.A", "U.S.A"]), attributes=["nationality"]
    )
    rates = rates_at_fmr(table, 0.5)
    assert list(rates["nationality"]) == ["UK", "U.S.A"]
    assert list(rates["group"]) == ["UK", "U.S.A"]
    rates = rates_at_fmr(read_scores(dotted(group=["a.b", "a.b", "a.b.c", "a.b.c"])), 0.5)
    assert list(rates.columns) == ["algorithm", "group", "fmr", "fnmr", "n_mated", "n_nonmated"]
    assert list(rates["group"]) == ["a.b", "a.b.c"]


def test_several_attributes_come_back_as_columns():
    frame = dotted(gender=["f", "f", "m", "m"], nationality=["UK", "UK", "USA", "USA"])
    rates = rates_at_fmr(read_scores(frame, attributes=["gender", "nationality"]), 0.5)
    assert list(rates["gender"]) == ["f", "m"]
    assert list(rates["nationality"]) == ["UK", "USA"]
    assert list(rates["group"]) == ["f.UK", "m.USA"]


def test_nothing_dropped():
    frame = synthetic(500)
    table = read_scores(frame)
    assert len(table) == len(frame)
    stats = score_stats(table)
    total = sum(len(s) for a in range(2) for s in stats.segments(a))
    assert total == len(frame)


# ------------------------------------------------------------- thresholds and rates


@pytest.mark.parametrize("round_to", [None, 1])
@pytest.mark.parametrize("higher_is_match", [True, False])
def test_threshold_never_exceeds_target_and_is_most_permissive(round_to, higher_is_match):
    frame = synthetic(3000, round_to=round_to)
    if not higher_is_match:
        frame["score"] = -frame["score"]
    table = read_scores(frame, higher_is_match=higher_is_match)
    targets = [1e-3, 1e-2, 0.05, 0.1, 0.5, 1.0]
    points = thresholds_at_fmr(table, targets)
    for _, row in points.iterrows():
        a = frame[frame["algorithm"] == row["algorithm"]]
        s = a["score"] if higher_is_match else -a["score"]
        t = row["threshold"] if higher_is_match else -row["threshold"]
        nonmated = s[~a["mated"]]
        fmr = (nonmated >= t).mean()
        assert fmr == row["attained_fmr"]
        assert fmr <= row["target_fmr"]
        assert t in set(s) or t > s.max()
        lower = s[s < t]
        if len(lower):  # the next more permissive threshold would exceed the target
            assert (nonmated >= lower.max()).mean() > row["target_fmr"]


def test_rates_match_literal_count():
    frame = synthetic(5000, round_to=2)
    table = read_scores(frame)
    rates = rates_at_fmr(table, 0.01)
    for algorithm, threshold in rates.attrs["threshold"].items():
        oracle = literal_rates(frame[frame["algorithm"] == algorithm], threshold)
        mine = rates[rates["algorithm"] == algorithm]
        merged = mine.merge(oracle, on=["algorithm", "group"], suffixes=("", "_oracle"))
        assert len(merged) == 3
        np.testing.assert_array_equal(merged["fmr"], merged["fmr_oracle"])
        np.testing.assert_array_equal(merged["fnmr"], merged["fnmr_oracle"])


def test_distance_scores_match_literal_count():
    frame = synthetic(3000, round_to=1)
    frame["score"] = 5 - frame["score"]
    table = read_scores(frame, higher_is_match=False)
    rates = rates_at_fmr(table, 0.02)
    for algorithm, threshold in rates.attrs["threshold"].items():
        oracle = literal_rates(frame[frame["algorithm"] == algorithm], threshold, False)
        mine = rates[rates["algorithm"] == algorithm]
        merged = mine.merge(oracle, on=["algorithm", "group"], suffixes=("", "_oracle"))
        assert len(merged) == 3
        np.testing.assert_array_equal(merged["fmr"], merged["fmr_oracle"])
        np.testing.assert_array_equal(merged["fnmr"], merged["fnmr_oracle"])


def test_rates_table_has_read_rates_columns_and_feeds_measures():
    table = read_scores(synthetic(3000))
    rates = rates_at_fmr(table, 0.01)
    assert list(rates.columns) == ["algorithm", "group", "fmr", "fnmr", "n_mated", "n_nonmated"]
    assert rates["fmr"].dtype == "float64" and rates["n_mated"].dtype == "int64"
    from audit.tables.rates import read_rates

    reread = read_rates(rates)
    pd.testing.assert_frame_equal(reread[rates.columns], rates, check_dtype=False)
    result = evaluate(rates, "garbe")
    assert list(result.index) == ["a", "b"]
    assert set(rates.attrs) >= {"target_fmr", "threshold", "attained_fmr"}


def test_ties_are_not_split():
    # four non-mated scores tied at 0.5: a target of 1/8 cannot be reached by accepting some
    frame = pd.DataFrame(
        {
            "algorithm": "a",
            "group": ["F"] * 10,
            "score": [0.9, 0.8, 0.5, 0.5, 0.5, 0.5, 0.1, 0.1, 0.1, 0.1],
            "mated": [True, True] + [False] * 8,
        }
    )
    points = thresholds_at_fmr(read_scores(frame), [0.125, 0.5, 0.49])
    assert list(points["attained_fmr"]) == [0.0, 0.5, 0.0]
    assert list(points["threshold"]) == [0.8, 0.5, 0.8]


def test_target_below_resolution_gives_zero_fmr():
    table = read_scores(synthetic(400))
    points = thresholds_at_fmr(table, [1e-6])
    assert (points["attained_fmr"] == 0).all()


def test_bad_target():
    with pytest.raises(ValueError) as caught:
        thresholds_at_fmr(read_scores(base()), [0.0])
    assert str(caught.value) == REFUSED.format(
        name="targets", expected="numbers in (0, 1]", value=[0.0]
    )


def test_group_without_mated_is_refused():
    with pytest.raises(ScoresError) as caught:
        rates_at_fmr(read_scores(base()), 0.5)
    assert str(caught.value) == SR.NO_COMPARISONS.format(
        algorithm="a", group="M", kind="mated", rate="FNMR"
    )


def test_cross_group_pairs_count_only_in_pooled_fmr():
    frame = pd.DataFrame(
        {
            "algorithm": "a",
            "score": [0.9, 0.9, 0.2, 0.2, 0.8],
            "mated": [True, True, False, False, False],
            "group_1": ["F", "M", "F", "M", "F"],
            "group_2": ["F", "M", "F", "M", "M"],
        }
    )
    rates = rates_at_fmr(read_scores(frame), 1 / 3)
    # the cross pair (0.8) is the one false match allowed: threshold 0.8, groups' FMR 0
    assert rates.attrs["threshold"] == {"a": 0.8}
    assert list(rates["fmr"]) == [0.0, 0.0]
    assert list(rates["n_nonmated"]) == [1, 1]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(-5, 5), st.booleans(), st.sampled_from("FM")), min_size=8, max_size=60
    ),
    st.floats(0.01, 1.0),
)
def test_property_thresholds(rows, target):
    frame = pd.DataFrame(rows, columns=["score", "mated", "group"]).assign(algorithm="a")
    frame["score"] = frame["score"].astype(float)
    if frame["mated"].all():
        return
    stats = score_stats(read_scores(frame))
    point = thresholds_at_fmr(stats, [target]).iloc[0]
    nonmated = frame.loc[~frame["mated"], "score"]
    fmr = (nonmated >= point["threshold"]).mean()
    assert fmr <= target and fmr == point["attained_fmr"]
    lower = frame.loc[frame["score"] < point["threshold"], "score"]
    if len(lower):
        assert (nonmated >= lower.max()).mean() > target


def test_arrays_entry_point_matches_table():
    frame = synthetic(2000, algorithms=("a",))
    table = read_scores(frame)
    stats = score_stats(table)
    codes = table["group_1"].cat.codes.to_numpy()
    other = score_stats_from_arrays(
        frame["score"], frame["mated"], codes, table["group_2"].cat.codes.to_numpy()
    )
    for g in range(3):
        np.testing.assert_array_equal(stats.mated[0][g], other.mated[0][g])
        np.testing.assert_array_equal(stats.nonmated[0][g], other.nonmated[0][g])


# --------------------------------------------------------------------------- sweeps


@pytest.mark.parametrize("higher_is_match", [True, False])
def test_sweep_matches_literal_count_at_each_target(higher_is_match):
    frame = synthetic(3000, round_to=2)
    if not higher_is_match:
        frame["score"] = -frame["score"]
    targets = [1e-3, 1e-2, 0.05, 1e-1]
    swept = sweep(read_scores(frame, higher_is_match=higher_is_match), targets)
    assert len(swept) == 2 * len(targets) * 3
    assert (swept["attained_fmr"] <= swept["target_fmr"]).all()
    for (algorithm, _target), part in swept.groupby(["algorithm", "target_fmr"], sort=False):
        threshold = part["threshold"].iloc[0]
        assert (part["threshold"] == threshold).all()
        rows = frame[frame["algorithm"] == algorithm]
        oracle = literal_rates(rows, threshold, higher_is_match)
        merged = part.merge(oracle, on=["algorithm", "group"], suffixes=("", "_oracle"))
        assert len(merged) == 3
        np.testing.assert_array_equal(merged["fmr"], merged["fmr_oracle"])
        np.testing.assert_array_equal(merged["fnmr"], merged["fnmr_oracle"])
        accept = rows["score"] >= threshold if higher_is_match else rows["score"] <= threshold
        assert part["attained_fmr"].iloc[0] == accept[~rows["mated"]].mean()


def test_default_sweep_grid():
    assert SR.DEFAULT_TARGETS[0] == pytest.approx(1e-3)
    assert SR.DEFAULT_TARGETS[-1] == pytest.approx(1e-1)
    assert len(SR.DEFAULT_TARGETS) == 21


def test_rates_at_thresholds_literal():
    frame = synthetic(1000, round_to=1, algorithms=("a",))
    out = rates_at_thresholds(read_scores(frame), [0.5])
    oracle = literal_rates(frame, 0.5)
    np.testing.assert_array_equal(out["fmr"], oracle["fmr"])
    np.testing.assert_array_equal(out["fnmr"], oracle["fnmr"])


def test_sweep_measures_covers_rate_measures():
    table = read_scores(synthetic(3000))
    out = sweep_measures(table, targets=[1e-2, 1e-1])
    from audit.measures.registry import measure_names

    # every rate measure, and the table measures the rates from scores feed: the
    # zero-error-adjusted ones (the counts are known), not the ratios to a reference
    # (the groups F, M, X carry no gender attribute for the default Female/Male)
    table_measures = {m for m in measure_names(inputs="table") if m.endswith("_cp")}
    table_measures -= {"ratio_fmr_cp", "ratio_fnmr_cp"}
    rate_measures = set(measure_names(inputs="rates")) | table_measures
    assert set(out["measure"]) == rate_measures
    assert len(out) == 2 * 2 * len(rate_measures)
    garbe = out[(out["measure"] == "garbe") & (out["target_fmr"] == 1e-2)]
    direct = evaluate(rates_at_fmr(table, 1e-2), "garbe")
    np.testing.assert_allclose(garbe["value"].to_numpy(), direct["value"].to_numpy())


def test_a_target_given_twice_is_one_point_of_the_sweep():
    """A sweep from 1% to 1% (sweep_min equal to sweep_max) asks for one point many
    times: one point, where two rows for one algorithm and group stopped the measures
    (the streamed report ended as an internal error); the order of the targets is kept."""
    table = read_scores(synthetic(3000))
    once = sweep_measures(table, targets=[1e-1, 1e-2])
    pd.testing.assert_frame_equal(sweep_measures(table, targets=[1e-1, 1e-2, 1e-1, 1e-2]), once)
    assert once["target_fmr"].unique().tolist() == [1e-1, 1e-2]
    flat = sweep_measures(table, targets=np.geomspace(1e-2, 1e-2, 21))
    pd.testing.assert_frame_equal(flat, sweep_measures(table, targets=[1e-2]))


def _sweep_point_by_point(table, targets):
    """The oracle of :func:`sweep_measures`: the measures on each point's rates table alone."""
    from audit.measures.registry import evaluate_many
    from audit.scores.thresholds import sweep

    frames = []
    for target, block in sweep(table, targets).groupby("target_fmr", sort=False):
        points = block.drop_duplicates("algorithm").set_index("algorithm")
        result = evaluate_many(block, alpha=0.3, zero_division="flag").drop(columns="alpha")
        algorithms = result["algorithm"].astype(str)
        result.insert(1, "target_fmr", target)
        result.insert(2, "attained_fmr", points.loc[algorithms, "attained_fmr"].to_numpy())
        result.insert(3, "threshold", points.loc[algorithms, "threshold"].to_numpy())
        frames.append(result)
    return pd.concat(frames, ignore_index=True).astype({"algorithm": "string"})


@pytest.mark.parametrize("mated", [True, False], ids=["both rates", "non-mated only"])
def test_sweep_measures_equal_the_measures_point_by_point(mated):
    """All points in one evaluation give each point's values, rows and order exactly (the
    zero-error-adjusted measures read each point's counts; three algorithms keep the keys of
    point and algorithm apart)."""
    frame = synthetic(4000, algorithms=("a", "b", "c"))
    if not mated:
        frame = frame[~frame["mated"]]
    table = read_scores(frame)
    targets = [3e-3, 1e-2, 3e-2, 1e-1]
    got = sweep_measures(table, targets=targets, alpha=0.3)
    pd.testing.assert_frame_equal(got, _sweep_point_by_point(table, targets), check_exact=True)


# -------------------------------------------------------------------------- figures


def test_figures():
    import matplotlib.axes

    from audit.report.plots.scores import det_curves, measure_vs_operating_point
    from audit.scores import det_points

    table = read_scores(synthetic(3000))
    ax = measure_vs_operating_point(sweep_measures(table, targets=[1e-2, 1e-1]), "garbe")
    assert isinstance(ax, matplotlib.axes.Axes) and len(ax.lines) == 2
    points = det_points(table, n_points=50)
    assert set(points.columns) == {"algorithm", "group", "fmr", "fnmr"}
    for _, curve in points.groupby(["algorithm", "group"]):
        # thresholds rise along a curve: FMR falls from 1, FNMR rises to 1
        assert (np.diff(curve["fmr"]) <= 0).all() and (np.diff(curve["fnmr"]) >= 0).all()
        assert (
            curve["fmr"].iloc[0] == 1.0 and curve["fnmr"].iloc[0] == 0.0
        )  # lowest score accepts all
    ax = det_curves(points, algorithm="b")
    assert len(ax.lines) == 3


@pytest.mark.parametrize(
    ("keep", "why"),
    [
        (lambda f: f["mated"], ": the scores hold mated comparisons only"),
        (lambda f: ~f["mated"], ": the scores hold non-mated comparisons only"),
        # mated pairs in F alone, non-mated ones in M alone: each group holds one kind
        (
            lambda f: (f["mated"] & (f["group_1"] == "F")) | (~f["mated"] & (f["group_1"] == "M")),
            "",
        ),
    ],
    ids=["mated only", "non-mated only", "one kind a group"],
)
def test_det_points_without_a_group_holding_both_kinds_say_so(keep, why):
    """No DET curve can be drawn: a ScoresError in words, where pandas said 'No objects to
    concatenate'; a group with both kinds beside one without gives that group's curve."""
    frame = synthetic(600)
    with pytest.raises(S.ScoresError) as error:
        S.det_points(read_scores(frame[keep(frame)].reset_index(drop=True)))
    assert str(error.value) == SR.NO_DET_CURVE.format(why=why)
    assert str(error.value).startswith("a DET curve needs mated and within-group non-mated")
    partly = frame[frame["mated"] | (frame["group_1"] != "X")].reset_index(drop=True)
    points = S.det_points(read_scores(partly), n_points=20)
    assert set(points["group"]) == {"F", "M"}


# ------------------------------------------------------ fast paths and the streaming seam


@pytest.mark.parametrize("sketch", [5, 200])
@pytest.mark.parametrize("round_to", [None, 1, 0])
@pytest.mark.parametrize("higher_is_match", [True, False])
def test_tiny_blocks_samples_and_windows_keep_the_rule(
    monkeypatch, round_to, higher_is_match, sketch
):
    """Blocked gathering and the sampled, windowed threshold search are exact at any size."""
    monkeypatch.setattr(stats_module, "_BLOCK", 7)
    monkeypatch.setattr(runs_module, "_SKETCH", sketch)
    monkeypatch.setattr(runs_module, "_WINDOW", 3)
    frame = synthetic(3000, round_to=round_to)
    if not higher_is_match:
        frame["score"] = -frame["score"]
    table = read_scores(frame, higher_is_match=higher_is_match)
    stats = score_stats(table)
    sign = 1 if higher_is_match else -1
    for a, algorithm in enumerate(stats.algorithms):
        rows = frame[frame["algorithm"] == algorithm]
        for g, group in enumerate(stats.groups):
            inside = (rows["group_1"] == group) & (rows["group_2"] == group)
            expected = np.sort(sign * rows.loc[rows["mated"] & inside, "score"].to_numpy())
            np.testing.assert_array_equal(stats.mated[a][g], expected)
            expected = np.sort(sign * rows.loc[~rows["mated"] & inside, "score"].to_numpy())
            np.testing.assert_array_equal(stats.nonmated[a][g], expected)
    for _, row in thresholds_at_fmr(stats, np.logspace(-3, 0, 25)).iterrows():
        a = frame[frame["algorithm"] == row["algorithm"]]
        s = sign * a["score"]
        t = sign * row["threshold"]
        nonmated = s[~a["mated"]]
        fmr = (nonmated >= t).mean()
        assert fmr == row["attained_fmr"] <= row["target_fmr"]
        assert t in set(s) or t > s.max()
        lower = s[s < t]
        if len(lower):
            assert (nonmated >= lower.max()).mean() > row["target_fmr"]


def test_statistics_from_memory_maps_give_the_same_sweep(tmp_path):
    """The seam: sorted per-segment arrays from elsewhere (here .npy memory maps) suffice."""
    stats = score_stats(read_scores(synthetic(2000)))

    def mapped(array, name):
        out = np.lib.format.open_memmap(
            tmp_path / f"{name}.npy", mode="w+", dtype="float64", shape=array.shape
        )
        out[:] = array
        return out

    n_alg, n_grp = len(stats.algorithms), len(stats.groups)
    other = S.ScoreStats(
        algorithms=stats.algorithms,
        groups=stats.groups,
        mated=[
            [mapped(stats.mated[a][g], f"m{a}_{g}") for g in range(n_grp)] for a in range(n_alg)
        ],
        nonmated=[
            [mapped(stats.nonmated[a][g], f"n{a}_{g}") for g in range(n_grp)] for a in range(n_alg)
        ],
        cross=[mapped(stats.cross[a], f"c{a}") for a in range(n_alg)],
        higher_is_match=stats.higher_is_match,
    )
    targets = np.logspace(-3, -1, 15)
    pd.testing.assert_frame_equal(sweep(other, targets), sweep(stats, targets))


def test_subject_columns_are_kept_and_checked():
    from audit.tables.scores import MATED_TWO_SUBJECTS, MISSING_COLUMN

    frame = pd.DataFrame(
        {
            "algorithm": ["a"] * 3,
            "score": [0.9, 0.2, 0.4],
            "mated": [True, False, False],
            "group": ["F", "F", "M"],
            "subject_1": ["s1", "s1", "s3"],
            "subject_2": ["s1", "s2", "s4"],
        }
    )
    table = read_scores(frame)
    assert table["subject_1"].astype(str).tolist() == ["s1", "s1", "s3"]
    assert table["subject_2"].astype(str).tolist() == ["s1", "s2", "s4"]
    bad = frame.assign(subject_2=["s9", "s2", "s4"])
    with pytest.raises(ScoresError) as error:
        read_scores(bad)
    assert str(error.value) == MATED_TWO_SUBJECTS.format(
        where="<DataFrame>, row 0", first="s1", second="s9", more=""
    )
    with pytest.raises(ScoresError) as error:
        read_scores(frame.drop(columns="subject_2"))
    assert str(error.value) == MISSING_COLUMN.format(
        source="<DataFrame>", column="subject_2", hint=" (subjects are given for both sides)"
    )


def test_reader_keeps_float32_and_codes_labels_without_strings(tmp_path):
    """float32 scores stay float32; integer, categorical and text labels give the same
    categories in order of first appearance; Parquet and DataFrame agree."""
    frame = synthetic(500).assign(score=lambda f: f["score"].astype("float32"))
    table = read_scores(frame)
    assert table["score"].dtype == np.float32
    np.testing.assert_array_equal(table["score"].to_numpy(), frame["score"].to_numpy())
    as_codes = frame.assign(
        group_1=frame["group_1"].map({"F": 7, "M": -3, "X": 120}).astype("int8"),
        group_2=frame["group_2"].map({"F": 7, "M": -3, "X": 120}).astype("int8"),
        algorithm=pd.Categorical(frame["algorithm"], categories=["z", "b", "a"]),
    )
    coded = read_scores(as_codes)
    names = {"F": "7", "M": "-3", "X": "120"}
    assert list(coded["group_1"].cat.categories) == [
        names[g] for g in table["group_1"].cat.categories
    ]
    np.testing.assert_array_equal(coded["group_2"].cat.codes, table["group_2"].cat.codes)
    assert list(coded["algorithm"].cat.categories) == ["a", "b"]
    as_codes.to_parquet(tmp_path / "s.parquet")
    read = read_scores(tmp_path / "s.parquet")
    pd.testing.assert_frame_equal(read, coded, check_categorical=True)


def test_reader_merges_labels_with_one_text_and_names_a_missing_categorical_cell():
    frame = pd.DataFrame(
        {
            "algorithm": "a",
            "score": [0.9, 0.1, 0.8, 0.2],
            "mated": [True, False, True, False],
            "group": pd.array([1, "1", "2", 2], dtype=object),
        }
    )
    table = read_scores(frame)
    assert list(table["group_1"].cat.categories) == ["1", "2"]
    np.testing.assert_array_equal(table["group_1"].cat.codes, [0, 0, 1, 1])
    frame["group"] = pd.Categorical(["x", None, "y", "x"], categories=["y", "x", "w"])
    with pytest.raises(ScoresError) as error:
        read_scores(frame)
    assert str(error.value) == SR.EMPTY_LABEL.format(
        where="<DataFrame>, row 1", column="group", more=""
    )


@pytest.mark.parametrize("seed", range(30))
def test_det_quantiles_from_two_sorted_arrays_equal_numpy_quantile(seed):
    rng = np.random.default_rng(seed)
    x = np.sort(np.round(rng.normal(size=rng.integers(1, 300)), seed % 3))
    y = np.sort(np.round(rng.normal(1, 1, size=rng.integers(1, 300)), seed % 3))
    q = np.linspace(0, 1, 200)
    expected = np.quantile(np.concatenate([x, y]), q)
    got = runs_module.merged_quantiles(
        len(x) + len(y), q, lambda k: runs_module.kth_of_sorted([x, y], k)
    )
    # equal as floats (a zero's sign may differ: it takes the same decisions)
    np.testing.assert_array_equal(got, expected)


def test_det_quantiles_of_scores_at_both_ends_of_the_floats(recwarn):
    """Scores near -1.7e308 and 1.7e308, whose differences overflow: the quantiles of
    the same scores halved, doubled (halving is exact), with no warning of NumPy's; and
    the streamed DET curve, which found none of them within 128 passes, is the one of
    the scores read whole."""
    from audit.scores.streaming import StreamingScores

    rng = np.random.default_rng(4)
    x = np.sort(rng.uniform(-1, 1, 300) * 1.7e308)
    q = np.linspace(0, 1, 200)
    got = runs_module.merged_quantiles(len(x), q, lambda k: runs_module.kth_of_sorted([x], k))
    np.testing.assert_array_equal(got, np.quantile(x / 2, q) * 2)
    frame = pd.DataFrame(
        {"algorithm": "a", "score": [1e308, -1e308, 1.7e308, -1.7e308], "group": "F"}
    ).assign(mated=[False, True, True, False])
    for higher in (True, False):
        expected = det_points(read_scores(frame, higher_is_match=higher), n_points=20)
        streamed = StreamingScores(frame, higher_is_match=higher).det_points(n_points=20)
        pd.testing.assert_frame_equal(streamed, expected)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("searched", [True, False])
@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 40), min_size=1, max_size=6),
    decimals=st.integers(0, 2),
    extreme=st.sampled_from([None, -np.inf, np.inf, -0.0]),
    seed=st.integers(0, 2**32 - 1),
)
def test_kth_of_sorted_arrays_is_the_kth_of_them_sorted_together(
    searched, sizes, decimals, extreme, seed
):
    """Searched in the sorted arrays (as every array of millions is) or selected in a
    copy of them, the k-th smallest is that of the arrays merged and sorted, ties,
    zeros of both signs and infinities included; a k beyond the last is +inf."""
    rng = np.random.default_rng(seed)
    arrays = [rng.normal(size=n).round(decimals) for n in sizes]
    if extreme is not None and sizes[0]:
        arrays[0][0] = extreme
    arrays = [np.sort(a) for a in arrays]
    merged = np.sort(np.concatenate(arrays))
    k = np.arange(len(merged) + 2)
    expected = np.concatenate([merged, [np.inf, np.inf]])
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(runs_module, "_SEARCHED_FROM", 0 if searched else 10**9)
        got = runs_module.kth_of_sorted(arrays, k)
    np.testing.assert_array_equal(got, expected)  # (a zero's sign may differ)


@pytest.mark.parametrize("sample", [1, 64, 1 << 14])
@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 300), min_size=1, max_size=5),
    decimals=st.integers(0, 2),
    ranks=st.lists(st.floats(0, 1, exclude_max=True), min_size=1, max_size=3),
    seed=st.integers(0, 2**32 - 1),
)
def test_one_or_two_ranks_narrowed_by_a_sample_are_those_of_a_selection(
    sample, sizes, decimals, ranks, seed
):
    """Among many scores in no order, one or two ranks are selected among the scores a
    sample brackets them with: the values of the sorted union, ties included, whether
    the sample brackets them (the larger samples) or misleads (a sample of one)."""
    rng = np.random.default_rng(seed)
    arrays = [rng.normal(size=n).round(decimals) for n in sizes]
    merged = np.sort(np.concatenate(arrays))
    if not len(merged):
        return
    k = (np.array(ranks) * len(merged)).astype(np.int64)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(runs_module, "_NARROWED_FROM", 0)
        monkeypatch.setattr(runs_module, "_NARROWING_SAMPLE", sample)
        got = runs_module.kth_of_many(arrays, k)
    np.testing.assert_array_equal(got, merged[k])


def test_kth_of_sorted_searches_only_arrays_of_many_scores(monkeypatch):
    """Millions of scores in a few sorted arrays are searched, not copied: the selection
    (which copies them all) is not called; a few scores in many arrays are selected."""
    calls = []
    monkeypatch.setattr(
        runs_module, "kth_of_many", lambda arrays, k: calls.append(len(arrays)) or [0.0]
    )
    rng = np.random.default_rng(0)
    large = [np.sort(rng.normal(size=400_000)) for _ in range(3)]
    merged_median = np.sort(np.concatenate(large))[600_000]
    assert runs_module.kth_of_sorted(large, [600_000])[0] == merged_median
    assert calls == []
    small = [np.sort(rng.normal(size=100)) for _ in range(30)]
    runs_module.kth_of_sorted(small, [7])
    assert calls == [30]


def _by_group(table):
    """Rows in (algorithm, threshold, group) order: groups are labelled in order of first
    appearance, which dropping rows may change."""
    keys = [k for k in ("algorithm", "threshold", "group") if k in table.columns]
    return table.sort_values(keys).reset_index(drop=True)


def test_non_mated_scores_alone_give_the_fmr_columns_of_the_full_set():
    """Dropping the mated rows leaves the pooled non-mated scores, hence the thresholds,
    unchanged: the FMR-only table equals the full table's FMR columns, bit for bit."""
    frame = synthetic(4000, seed=5, algorithms=("a", "b"))
    full = rates_at_fmr(read_scores(frame), 0.01)
    alone = read_scores(frame[~frame["mated"]].reset_index(drop=True))
    assert score_stats(alone).rates_held() == ("fmr",)
    table = rates_at_fmr(alone, 0.01)
    assert list(table.columns) == ["algorithm", "group", "fmr", "n_nonmated"]
    expected = full[["algorithm", "group", "fmr", "n_nonmated"]]
    pd.testing.assert_frame_equal(_by_group(table), _by_group(expected), check_exact=True)
    assert table.attrs["attained_fmr"] == full.attrs["attained_fmr"]
    # the reported threshold is the smallest accepted score of any comparison: without
    # the mated scores it may be a larger (non-mated) one, with the same decisions
    for algorithm, threshold in table.attrs["threshold"].items():
        assert threshold >= full.attrs["threshold"][algorithm]
    swept = sweep_measures(alone, targets=[0.001, 0.01])
    # the built-in rate measures the FMRs allow (measures registered by other tests aside)
    builtin = set(swept["measure"]) - {m for m in swept["measure"] if m.startswith("user_")}
    assert builtin == {"fdr", "ir", "garbe", "nrb", "nrb_fmr", "std_fmr", "ser", "merg", "mera"} | {
        f"nist_{summary}_fmr" for summary in ("max_min", "max_mean", "max_geomean", "gini")
    } | {"nist_log10_spread_fmr", "nist_max_min_fmr_cp", "nist_max_geomean_fmr_cp"}
    garbe = swept.query("measure == 'garbe' and target_fmr == 0.01").set_index("algorithm")
    assert (garbe["fnmr_term"].isna()).all() and (garbe["rule"] != "").all()
    np.testing.assert_array_equal(
        garbe["value"], evaluate(full.drop(columns=["fnmr", "n_mated"]), "garbe")["value"]
    )


def test_mated_scores_alone_give_fnmrs_at_given_thresholds_only():
    frame = synthetic(4000, seed=5, algorithms=("a", "b"))
    alone = read_scores(frame[frame["mated"]].reset_index(drop=True))
    assert score_stats(alone).rates_held() == ("fnmr",)
    with pytest.raises(ScoresError) as error:
        rates_at_fmr(alone, 0.01)
    assert str(error.value) == SR.MATED_ONLY
    at = rates_at_thresholds(alone, [0.5, 1.0])
    assert list(at.columns) == ["algorithm", "group", "fnmr", "n_mated", "threshold"]
    full = rates_at_thresholds(read_scores(frame), [0.5, 1.0])
    pd.testing.assert_frame_equal(_by_group(at), _by_group(full[at.columns]), check_exact=True)
    oracle = _by_group(literal_rates(frame, 1.0))
    got = _by_group(at[at["threshold"] == 1.0])
    np.testing.assert_array_equal(got["fnmr"], oracle["fnmr"])


def test_a_one_sided_score_set_still_needs_its_kind_in_every_group():
    frame = synthetic(4000, seed=5, algorithms=("a",))
    nonmated = frame[~frame["mated"]]
    first = nonmated["group_1"].iloc[0]
    within = (nonmated["group_1"] == first) & (nonmated["group_2"] == first)
    with pytest.raises(ScoresError) as error:
        rates_at_fmr(read_scores(nonmated[~within].reset_index(drop=True)), 0.01)
    assert str(error.value) == SR.NO_COMPARISONS.format(
        algorithm="a", group=first, kind="within-group non-mated", rate="FMR"
    )


def _on_two_sides(rows: int = 400) -> pd.DataFrame:
    """Non-mated comparisons of F and M, where "M" is only ever in group_1 and "m",
    its other spelling, only in group_2 (row 301); subject "s0" in subject_1, "S0" in
    subject_2 (row 7)."""
    frame = pd.DataFrame(
        {
            "algorithm": "a",
            "score": np.linspace(0, 1, rows),
            "mated": False,
            "group_1": "F",
            "group_2": "F",
            "subject_1": [f"s{i % 20}" for i in range(rows)],
            "subject_2": [f"t{i % 20}" for i in range(rows)],
        }
    )
    frame.loc[10, "group_1"] = "M"
    frame.loc[301, "group_2"] = "m"
    return frame


def test_two_spellings_of_a_group_one_on_each_side_are_refused_or_merged(tmp_path):
    """Each side's column was checked for spellings of one label, not the two together:
    "M" only in group_1 and "m" only in group_2 were read as two groups from a
    DataFrame or a CSV (refused from Parquet).  Refused alike now, read whole as
    streamed, each spelling named at its row and column; merged with merge_labels."""
    from audit.scores.streaming import STREAMED_SPELLINGS, StreamingScores
    from audit.tables.labels import MERGED, SPELLINGS

    frame = _on_two_sides().drop(columns=["subject_1", "subject_2"])
    frame.to_csv(tmp_path / "s.csv", index=False)
    frame.to_parquet(tmp_path / "s.parquet", index=False, row_group_size=100)
    sources = {
        "<DataFrame>": (frame, "<DataFrame>, row {}"),
        str(tmp_path / "s.csv"): (tmp_path / "s.csv", f"{tmp_path / 's.csv'}, line {{}}"),
        str(tmp_path / "s.parquet"): (
            tmp_path / "s.parquet",
            f"{tmp_path / 's.parquet'}, row {{}}",
        ),
    }
    for name, (source, at) in sources.items():
        lines = 2 if name.endswith(".csv") else 0  # a CSV's rows are named by their line
        words = dict(
            source=name,
            column="group_2",
            kinds="groups",
            first="M",
            first_where=f"{at.format(10 + lines)}, column 'group_1'",
            second="m",
            second_where=f"{at.format(301 + lines)}, column 'group_2'",
            how="case",
        )
        with pytest.raises(ScoresError) as refused:
            read_scores(source)
        assert str(refused.value) == SPELLINGS.format(**words)
        if name.endswith(".parquet"):
            with pytest.raises(ScoresError) as refused:
                StreamingScores(source).sweep([0.01])
            assert str(refused.value) == STREAMED_SPELLINGS.format(**words)
        with pytest.warns(UserWarning) as said:
            table = read_scores(source, merge_labels=True)
        assert [str(w.message) for w in said] == [MERGED.format(**words)]
        assert list(table["group_1"].cat.categories) == ["F", "M"]
        assert table["group_2"].iloc[301] == "M" and table["group_1"].iloc[10] == "M"
        assert (table["group_1"] == "M").sum() == 1 and (table["group_2"] == "M").sum() == 1


def test_two_spellings_of_a_subject_are_refused_from_parquet_as_from_a_dataframe(tmp_path):
    """Subjects spelled two ways ("s0", "S0") were refused from a DataFrame or a CSV
    and read as two subjects from Parquet, whose subject labels went unchecked: a
    subject bootstrap would draw them apart.  Refused alike, within a side or across
    the two."""
    from audit.tables.labels import SPELLINGS

    frame = _on_two_sides().drop(columns=["group_2"]).rename(columns={"group_1": "group"})
    frame.loc[301, "group"] = "M"
    frame.loc[7, "subject_2"] = "S0"  # "s0" first at row 0, in subject_1
    frame.to_parquet(tmp_path / "s.parquet", index=False, row_group_size=100)
    for source, at in ((frame, "<DataFrame>, row {}"), (tmp_path / "s.parquet", f"{tmp_path / 's.parquet'}, row {{}}")):  # fmt: skip
        with pytest.raises(ScoresError) as refused:
            read_scores(source)
        assert str(refused.value) == SPELLINGS.format(
            source=str(source) if not isinstance(source, pd.DataFrame) else "<DataFrame>",
            column="subject_2",
            kinds="subjects",
            first="s0",
            first_where=f"{at.format(0)}, column 'subject_1'",
            second="S0",
            second_where=f"{at.format(7)}, column 'subject_2'",
            how="case",
        )


def _merged_alike(frame: pd.DataFrame, tmp_path, **kwargs) -> list[str]:
    """The table and the warnings of ``read_scores(..., merge_labels=True)`` of
    ``frame``, from the DataFrame and from Parquet: asserted alike (the source's name
    aside); the warnings returned."""
    frame.to_parquet(tmp_path / "s.parquet", index=False, row_group_size=100)
    tables, said = [], []
    for source in (frame, tmp_path / "s.parquet"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            tables.append(read_scores(source, merge_labels=True, **kwargs))
        said.append([str(w.message).replace(str(source), "<DataFrame>") for w in caught])
    for table in tables:
        table.attrs.pop("source")
    pd.testing.assert_frame_equal(tables[0], tables[1])
    assert said[0] == said[1]
    return said[0]


def test_a_mated_pair_across_two_spellings_is_merged_from_parquet_as_from_a_dataframe(tmp_path):
    """A mated pair with "M" on one side and "m" on the other, and subjects "x" and
    "X": merged from Parquet as from a DataFrame (a chunk refused the pair as two
    groups before the spellings of the whole file were merged); refused streamed,
    with the streamed message (the subjects', which a streamed chunk checks)."""
    from audit.scores.streaming import STREAMED_SPELLINGS, StreamingScores

    frame = _on_two_sides(400)
    frame.loc[[8, 9], "mated"] = True
    frame.loc[8, ["group_1", "group_2", "subject_2"]] = ["M", "m", "s8"]
    frame.loc[9, ["subject_1", "subject_2"]] = ["x", "X"]
    said = _merged_alike(frame, tmp_path)
    assert said[:2] == [
        "<DataFrame>, column 'group_2': 'm' (<DataFrame>, row 8, column 'group_2') is read "
        "as 'M' (<DataFrame>, row 8, column 'group_1'): they differ only by case (merge_labels, "
        "command line --merge-labels)",
        "<DataFrame>, column 'subject_2': 'X' (<DataFrame>, row 9, column 'subject_2') is "
        "read as 'x' (<DataFrame>, row 9, column 'subject_1'): they differ only by case "
        "(merge_labels, command line --merge-labels)",
    ]
    # then the rates on few comparisons and the subjects in two groups, as of any table
    assert len(said) == 4 and "'a', 'M': 1 mated" in said[2]
    path = tmp_path / "s.parquet"

    def refused_streamed(kinds: str, row: int, first: str, second: str, column: str) -> None:
        """Streamed, the read is refused: ``first`` in ``column``_1 and ``second`` in
        ``column``_2 of ``row``, two spellings of one of ``kinds``."""
        with pytest.raises(ScoresError) as refused:
            StreamingScores(path).sweep([0.01])
        assert str(refused.value) == STREAMED_SPELLINGS.format(
            source=str(path),
            column=f"{column}_2",
            kinds=kinds,
            first=first,
            first_where=f"{path}, row {row}, column '{column}_1'",
            second=second,
            second_where=f"{path}, row {row}, column '{column}_2'",
            how="case",
        )

    refused_streamed("subjects", 9, "x", "X", column="subject")
    frame.loc[9, "subject_2"] = "x"  # the groups' then, over the whole file
    frame.to_parquet(path, index=False, row_group_size=100)
    refused_streamed("groups", 8, "M", "m", column="group")


def test_three_spellings_across_the_sides_give_one_warning_each_the_same_everywhere(tmp_path):
    """ "m" in group_1 (row 50), "M" and "m" in group_2 (rows 1, 2): each side's spellings
    were merged first, then the sides': the DataFrame warned that "m" was read as
    "M" and then "M" as "m".  One check of both sides: one warning, the table and the
    warnings of the DataFrame those of Parquet."""
    from audit.tables.labels import MERGED

    frame = _on_two_sides(400).drop(columns=["subject_1", "subject_2"])
    frame.loc[10, "group_1"] = "F"
    frame.loc[301, "group_2"] = "F"
    frame.loc[50, "group_1"] = "m"
    frame.loc[[1, 2], "group_2"] = ["M", "m"]
    said = _merged_alike(frame, tmp_path)
    assert said == [
        MERGED.format(
            source="<DataFrame>",
            column="group_2",
            second="M",
            second_where="<DataFrame>, row 1, column 'group_2'",
            first="m",
            first_where="<DataFrame>, row 2, column 'group_2'",
            how="case",
        )
    ]


def test_spellings_of_several_attributes_are_told_apart_attribute_by_attribute(tmp_path):
    """Race given per side and sex once a row: "Black " in race_1 and "Black" in
    race_2 are one race, named by the race columns, read whole or in chunks (whose
    groups join the attributes, "Black .F": compared as a whole, the white space inside
    was not seen, and the message named a 'group' column); and "f" and "F" one sex,
    merged into one spelling of the sex, not group by group ("White.F" read as
    "White.f" and "Black.f" as "Black.F" left three sexes)."""
    from audit.scores.streaming import StreamingScores
    from audit.tables.labels import SPELLINGS, STREAMED_SPELLINGS

    frame = pd.DataFrame(
        {"algorithm": "a", "score": np.linspace(0, 1, 400), "mated": False,
         "race_1": "White", "race_2": "White", "sex": "F"}
    )  # fmt: skip
    frame.loc[3, "race_1"] = "Black "
    frame.loc[7, "race_2"] = "Black"
    frame.to_parquet(tmp_path / "s.parquet", index=False)
    words = dict(column="race_2", kinds="groups", first="Black ", second="Black")
    words |= dict(how="white space")
    for source, name in ((frame, "<DataFrame>"), (tmp_path / "s.parquet", str(tmp_path / "s.parquet"))):  # fmt: skip
        at = dict(
            source=name,
            first_where=f"{name}, row 3, column 'race_1'",
            second_where=f"{name}, row 7, column 'race_2'",
        )
        with pytest.raises(ScoresError) as refused:
            read_scores(source, attributes=["race", "sex"])
        assert str(refused.value) == SPELLINGS.format(**words, **at)
        with pytest.raises(ScoresError) as refused:
            _ = StreamingScores(
                [source] if name == "<DataFrame>" else source, attributes=["race", "sex"]
            ).labels
        assert str(refused.value) == STREAMED_SPELLINGS.format(**words, **at)
    sexes = frame.assign(race_1="White", race_2="White")
    sexes.loc[:9, ["race_1", "race_2"]] = "Black"
    sexes.loc[:4, "sex"] = "F"
    sexes.loc[5:9, "sex"] = "f"
    sexes.loc[10:14, "sex"] = "f"
    sexes.loc[15:, "sex"] = "F"
    said = _merged_alike(sexes, tmp_path, attributes=["race", "sex"])
    table = read_scores(sexes.replace({"sex": {"f": "F"}}), attributes=["race", "sex"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (the merge's, asserted above)
        merged = read_scores(tmp_path / "s.parquet", attributes=["race", "sex"], merge_labels=True)
    assert list(merged["group_1"].cat.categories) == list(table["group_1"].cat.categories)
    # one merge, of the sex (and the rates on few comparisons of any such table)
    assert [w.split(":")[0] for w in said if "column" in w.split(":")[0]] == [
        "<DataFrame>, column 'sex'"
    ]


@given(st.lists(st.lists(st.integers(-1, 5), min_size=1, max_size=30), min_size=1, max_size=3))
@settings(max_examples=200, deadline=None)
def test_property_first_rows_are_those_of_a_search(columns):
    """Where each label first appears among some columns of codes (``-1``: none), and in
    which column (the first, where several do at that row): as a search of each finds
    it."""
    n = min(len(c) for c in columns)
    held = [np.array(c[:n], dtype=np.int8) for c in columns]
    firsts = SR._FirstRows(held)
    for code in {int(x) for c in held for x in c if x >= 0}:
        rows = [
            (int(np.flatnonzero(c == code)[0]), k) for k, c in enumerate(held) if (c == code).any()
        ]
        assert firsts(code) == min(rows)


def test_a_mated_pair_across_groups_that_only_a_full_width_dot_makes_alike_is_refused(tmp_path):
    """Groups joining two attributes: ("A．B", "C") and ("A", "B．C"), the dot full-width
    (U+FF0E, "." once its form is normalised).  Two groups, not two spellings of one:
    a mated pair across them is refused read in chunks as read whole, not let through
    a chunk as a spelling to be checked later."""
    frame = pd.DataFrame(
        {"algorithm": "a", "score": np.linspace(0, 1, 20), "mated": False,
         "x_1": "P", "x_2": "P", "y_1": "Q", "y_2": "Q"}
    )  # fmt: skip
    frame.loc[5, ["mated", "x_1", "y_1", "x_2", "y_2"]] = [True, "A．B", "C", "A", "B．C"]
    frame.to_parquet(tmp_path / "s.parquet", index=False)
    for source, name in ((frame, "<DataFrame>"), (tmp_path / "s.parquet", str(tmp_path / "s.parquet"))):  # fmt: skip
        with pytest.raises(ScoresError) as refused:
            read_scores(source, attributes=["x", "y"])
        assert str(refused.value) == SR.MATED_CROSS_GROUP.format(
            where=f"{name}, row 5", first="A．B.C", second="A.B．C", more=""
        )


def test_attributes_are_checked_in_the_order_given_whatever_the_reader(tmp_path):
    """Race per side and sex once a row, each spelled two ways: the race, named first,
    is the spelling refused, read whole as in chunks (read whole, the sex's column was
    checked first: another refusal, and merge warnings in another order)."""
    from audit.tables.labels import SPELLINGS

    frame = pd.DataFrame(
        {"algorithm": "a", "score": np.linspace(0, 1, 200), "mated": False,
         "race_1": "White", "race_2": "White", "sex": "M"}
    )  # fmt: skip
    frame.loc[0, "race_1"] = "black"
    frame.loc[1, "race_2"] = "Black"
    frame.loc[[2, 3], "sex"] = ["F", "f"]
    frame.to_parquet(tmp_path / "s.parquet", index=False, row_group_size=50)
    for source, name in ((frame, "<DataFrame>"), (tmp_path / "s.parquet", str(tmp_path / "s.parquet"))):  # fmt: skip
        with pytest.raises(ScoresError) as refused:
            read_scores(source, attributes=["race", "sex"])
        assert str(refused.value) == SPELLINGS.format(
            source=name,
            column="race_2",
            kinds="groups",
            first="black",
            first_where=f"{name}, row 0, column 'race_1'",
            second="Black",
            second_where=f"{name}, row 1, column 'race_2'",
            how="case",
        )
    said = _merged_alike(frame, tmp_path, attributes=["race", "sex"])
    assert [w.split(":")[0] for w in said if "column" in w.split(":")[0]] == [
        "<DataFrame>, column 'race_2'",
        "<DataFrame>, column 'sex'",
    ]
