"""Streaming engine: the same thresholds, counts and rates as in memory, bit for bit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit.scores import (
    ScoresError,
    rates_at_fmr,
    rates_at_thresholds,
    read_scores,
    sweep,
    thresholds_at_fmr,
)
from audit.scores import streaming as ST
from audit.scores.streaming import StreamingScores

TARGETS = [1e-4, 1e-3, 0.01, 0.05, 0.1, 0.3, 1.0]


def synthetic(n=6000, seed=0, round_to=None, two_sided=True, subjects=False, dtype="float64"):
    """Two algorithms, three groups, cross-group impostors; rounding makes heavy ties."""
    rng = np.random.default_rng(seed)
    frames = []
    for algorithm in ("b", "a"):
        g1 = rng.choice(["M", "F", "X"], n)
        mated = rng.random(n) < 0.3
        g2 = np.where(mated | (rng.random(n) < 0.7), g1, rng.choice(["F", "M", "X"], n))
        score = rng.normal(size=n) + 2.5 * mated + 0.3 * (g1 == "M")
        if round_to is not None:
            score = np.round(score, round_to)
        frame = pd.DataFrame({"algorithm": algorithm, "score": score.astype(dtype), "mated": mated})
        if two_sided:
            frame["group_1"], frame["group_2"] = g1, g2
        else:
            frame["group"] = g1
        if subjects:
            person = rng.integers(0, 50, n)
            frame["subject_1"] = [f"{g}{p}" for g, p in zip(g1, person, strict=True)]
            other = np.where(mated, person, rng.integers(0, 50, n))
            frame["subject_2"] = [f"{g}{p}" for g, p in zip(g1, other, strict=True)]
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def chunks(frame, size):
    return [frame.iloc[i : i + size] for i in range(0, len(frame), size)]


CASES = {
    "continuous": {},
    "ties": {"round_to": 1},
    "one group per side": {"two_sided": False, "round_to": 2},
    "subjects": {"subjects": True},
    "float32": {"dtype": "float32", "round_to": 3},
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("higher_is_match", [True, False])
def test_streaming_equals_in_memory(case, higher_is_match):
    frame = synthetic(**CASES[case])
    if not higher_is_match:
        frame["score"] = -frame["score"]
    table = read_scores(frame, higher_is_match=higher_is_match)
    streamed = StreamingScores(chunks(frame, 1700), higher_is_match=higher_is_match)
    pd.testing.assert_frame_equal(streamed.sweep(TARGETS), sweep(table, TARGETS), check_exact=True)
    pd.testing.assert_frame_equal(
        streamed.thresholds_at_fmr(TARGETS), thresholds_at_fmr(table, TARGETS), check_exact=True
    )
    expected = rates_at_fmr(table, 1e-3)
    got = streamed.rates_at_fmr(1e-3)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    assert got.attrs == expected.attrs
    grid = {"a": [-1.0, 0.0, 0.5, 2.0], "b": np.quantile(frame["score"], [0.1, 0.5, 0.9])}
    pd.testing.assert_frame_equal(
        streamed.rates_at_thresholds(grid), rates_at_thresholds(table, grid), check_exact=True
    )


def test_a_tiny_memory_budget_forces_the_refining_passes():
    """Brackets too full for the budget are histogrammed again, down to single keys."""
    frame = synthetic(20000, round_to=1)
    table = read_scores(frame)
    calls = []
    engine = ST.LocalEngine()
    original = engine.map_reduce

    def counting(function, *args, **kwargs):
        calls.append(function.__name__)
        return original(function, *args, **kwargs)

    engine.map_reduce = counting
    streamed = StreamingScores(chunks(frame, 5000), memory=64, engine=engine)
    pd.testing.assert_frame_equal(streamed.sweep(TARGETS), sweep(table, TARGETS), check_exact=True)
    assert "_pass_refine" in calls


def test_parquet_folder_and_glob_read_row_group_by_row_group(tmp_path):
    frame = synthetic(5000, round_to=2, dtype="float32")
    (tmp_path / "scores").mkdir()
    for i, part in enumerate(chunks(frame, 4000)):
        part.to_parquet(tmp_path / "scores" / f"part-{i}.parquet", row_group_size=1500)
    expected = sweep(read_scores(frame), TARGETS)
    for source in (tmp_path / "scores", str(tmp_path / "scores" / "*.parquet")):
        streamed = StreamingScores(source)
        assert len(streamed.pieces) == 3 + 3 + 2  # row groups of 1500 in parts of 4000
        pd.testing.assert_frame_equal(streamed.sweep(TARGETS), expected, check_exact=True)
    assert ST.data_bytes(tmp_path / "scores") > 0


def test_chunk_errors_name_the_file_and_its_row(tmp_path):
    frame = synthetic(400)
    frame.loc[350, "group_1"] = ""
    frame.iloc[:300].to_parquet(tmp_path / "a.parquet")
    frame.iloc[300:].reset_index(drop=True).to_parquet(tmp_path / "b.parquet")
    with pytest.raises(ScoresError) as error:
        StreamingScores(tmp_path).sweep([0.01])
    assert str(error.value) == ST.validate.__globals__["EMPTY_LABEL"].format(
        where=f"{tmp_path / 'b.parquet'}, row 50", column="group_1", more=""
    )
    with pytest.raises(ScoresError) as error:
        StreamingScores(str(tmp_path / "none-*.parquet"))
    assert str(error.value) == ST.NO_PARQUET.format(source=str(tmp_path / "none-*.parquet"))


def test_memory_sizes():
    assert ST.parse_memory("4GB") == 4 * 10**9
    assert ST.parse_memory("512MiB") == 512 * 2**20
    for bad in ("", "-1GB", "4XB", 0, True):
        with pytest.raises(ValueError) as error:
            ST.parse_memory(bad)
        assert str(error.value) == ST.BAD_MEMORY.format(value=bad)


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.mark.slow
@pytest.mark.parametrize("case", ["ties", "one group per side", "subjects"])
def test_dask_on_a_local_cluster_equals_in_memory(dask_client, tmp_path, case):
    frame = synthetic(**CASES[case])
    frame["score"] = -frame["score"]  # distances
    table = read_scores(frame, higher_is_match=False)
    for i, part in enumerate(chunks(frame, 5000)):
        part.to_parquet(tmp_path / f"part-{i}.parquet", row_group_size=2000)
    streamed = StreamingScores(tmp_path, engine="dask", client=dask_client, higher_is_match=False)
    pd.testing.assert_frame_equal(streamed.sweep(TARGETS), sweep(table, TARGETS), check_exact=True)
    grid = [-2.0, -0.5, 0.0, 1.0]
    pd.testing.assert_frame_equal(
        streamed.rates_at_thresholds(grid), rates_at_thresholds(table, grid), check_exact=True
    )
    tiny = StreamingScores(
        chunks(frame, 3000), engine="dask", client=dask_client, higher_is_match=False, memory=64
    )
    pd.testing.assert_frame_equal(
        tiny.thresholds_at_fmr(TARGETS), thresholds_at_fmr(table, TARGETS), check_exact=True
    )


def test_dask_without_a_cluster_uses_the_default_scheduler():
    pytest.importorskip("dask")
    frame = synthetic(3000, round_to=2)
    streamed = StreamingScores(chunks(frame, 700), engine="dask", memory=256)
    pd.testing.assert_frame_equal(
        streamed.sweep(TARGETS), sweep(read_scores(frame), TARGETS), check_exact=True
    )
    with pytest.raises(ValueError) as error:
        StreamingScores(chunks(frame, 700), engine="spark")
    assert str(error.value) == ST.UNKNOWN_ENGINE.format(name="spark")
