"""Streaming engine: the same thresholds, counts, rates, EERs, DET points and score
measures as in memory, bit for bit, whatever the sample, the order of the rows and
the memory budget."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from audit.exceptions import ParameterError
from audit.measures.registry import evaluate_scores
from audit.measures.scores import eer_table
from audit.scores import (
    ScoresError,
    counting,
    det_points,
    rates_at_fmr,
    rates_at_thresholds,
    read_scores,
    score_stats,
    sweep,
    thresholds_at_fmr,
)
from audit.scores import streaming as ST
from audit.scores import zones as Z
from audit.scores.stats import SufficientStatistics
from audit.scores.streaming import StreamingScores
from audit.tables import chunks as CH
from audit.tables.scores import EMPTY_LABEL, MISSING_VALUE

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
    return pd.concat(frames, ignore_index=True).sample(frac=1, random_state=seed)


def chunks(frame, size):
    frame = frame.reset_index(drop=True)
    return [frame.iloc[i : i + size] for i in range(0, len(frame), size)]


CASES = {
    "continuous": {},
    "ties": {"round_to": 1},
    "one group per side": {"two_sided": False, "round_to": 2},
    "subjects": {"subjects": True},
    "float32": {"dtype": "float32", "round_to": 3},
}


@pytest.fixture(params=["compiled", "numpy"])
def kernel(request):
    """Count with the compiled loops, then with the NumPy path."""
    if request.param == "compiled" and not counting.compiled_available():
        pytest.skip("audit's compiled loops were not built (no C compiler at install)")
    before = counting.use(request.param)
    yield request.param
    counting.use(before)


@pytest.fixture(autouse=True)
def small_sample(monkeypatch):
    """A sample of 300 rows: smaller than the data, so the passes are real."""
    monkeypatch.setattr(ST, "_SAMPLE_ROWS", 300)


def assert_same(streamed: StreamingScores, table: pd.DataFrame, frame: pd.DataFrame) -> None:
    """Every result of the streaming engine equals the in-memory one, every bit."""
    stats = score_stats(table)

    def same(got, expected):
        pd.testing.assert_frame_equal(got, expected, check_exact=True)

    same(streamed.sweep(TARGETS), sweep(stats, TARGETS))
    same(streamed.thresholds_at_fmr(TARGETS), thresholds_at_fmr(stats, TARGETS))
    expected, got = rates_at_fmr(stats, 1e-3), streamed.rates_at_fmr(1e-3)
    same(got, expected)
    assert got.attrs == expected.attrs
    sign = 1 if table.attrs["higher_is_match"] else -1
    grid = {name: np.quantile(frame["score"], [0.1, 0.5, 0.9]) for name in stats.algorithms}
    grid[stats.algorithms[0]] = sign * np.array([-1.0, 0.0, 0.5, 2.0])
    same(streamed.rates_at_thresholds(grid), rates_at_thresholds(stats, grid))
    same(streamed.apply(eer_table), eer_table(stats))
    same(streamed.det_points(n_points=50), det_points(stats, n_points=50))
    same(streamed.apply(evaluate_scores), evaluate_scores(stats))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("higher_is_match", [True, False])
@pytest.mark.parametrize("order", ["shuffled", "by score"])
# the synthetic subjects are drawn across groups: the comparison is of engines, not of data
@pytest.mark.filterwarnings(
    "ignore:.*appear in more than one group:audit.tables.scores.ScoresWarning"
)
def test_streaming_equals_in_memory(case, higher_is_match, order, kernel):
    frame = synthetic(**CASES[case])
    if not higher_is_match:
        frame["score"] = -frame["score"]
    if order == "by score":  # the sample misleads: every chunk holds a narrow band
        frame = frame.sort_values("score", kind="stable")
    frame = frame.reset_index(drop=True)
    table = read_scores(frame, higher_is_match=higher_is_match)
    streamed = StreamingScores(chunks(frame, 1700), higher_is_match=higher_is_match)
    assert_same(streamed, table, frame)


@pytest.mark.parametrize("case", ["continuous", "ties", "one group per side"])
def test_order_statistics_searched_in_sorted_windows_equal_in_memory(case, monkeypatch):
    """A window of many scores answers an order statistic by a search in its sorted
    segments (here every window, from its first score): the results are those of the
    scores read whole."""
    from audit.scores import runs

    monkeypatch.setattr(runs, "_SEARCHED_FROM", 0)
    frame = synthetic(**CASES[case]).reset_index(drop=True)
    assert_same(StreamingScores(chunks(frame, 1700)), read_scores(frame), frame)


def test_a_sweep_of_shuffled_rows_takes_one_pass():
    """The first pass, planned on the sample, holds every threshold of the sweep."""
    frame = synthetic(20000)
    streamed = StreamingScores(chunks(frame, 4000))
    pd.testing.assert_frame_equal(
        streamed.sweep(TARGETS), sweep(read_scores(frame), TARGETS), check_exact=True
    )
    assert streamed.passes == 1


@pytest.mark.parametrize(("memory", "fits"), [("8MB", [True]), ("4MB", [False, True])])
def test_a_larger_sample_only_where_the_windows_of_the_smaller_do_not_fit(
    monkeypatch, memory, fits
):
    """The sample that plans the first pass is the smaller of two sizes, here 2 sqrt(N)
    and 30 sqrt(N) rows of N = 100,000; the larger, whose windows are narrower, is drawn
    only when the windows planned on the smaller do not fit the memory budget. Either
    way the sweep takes one pass and its values are the in-memory ones."""
    monkeypatch.setattr(ST, "_SAMPLE_ROWS", 1 << 23)
    monkeypatch.setattr(ST, "_SAMPLE_MIN", 16)
    monkeypatch.setattr(ST, "_SAMPLE_FACTORS", (2, 30))
    planned = []
    plan_from_sample = StreamingScores._plan_from_sample

    def spying(self, function):
        plan, fit = plan_from_sample(self, function)
        planned.append((self._sample_rows, fit))
        return plan, fit

    monkeypatch.setattr(StreamingScores, "_plan_from_sample", spying)
    frame = synthetic(50000)
    streamed = StreamingScores(chunks(frame, 5000), memory=memory)
    pd.testing.assert_frame_equal(
        streamed.sweep(TARGETS), sweep(read_scores(frame), TARGETS), check_exact=True
    )
    assert streamed.passes == 1
    assert [fit for _, fit in planned] == fits
    # every 64th row of the 8 chunks read (5,000 rows each), 79 a chunk (2 sqrt(N) is
    # 632.5); then every 5th (30 sqrt(N) is 9,487, and at most 4 MB / 64 B / 4 = 15,625)
    assert [rows for rows, _ in planned] == [632, 8000][: len(fits)]


@pytest.mark.parametrize("round_to", [None, 1])
def test_a_tiny_memory_budget_takes_more_passes_and_the_same_values(round_to, kernel):
    """Intervals too full for the budget are counted in sub-intervals first (10,000 rows
    in 20 kB: a dozen passes or more, several of them splitting intervals)."""
    frame = synthetic(5000, round_to=round_to)
    plans = []
    engine = ST.LocalEngine()
    original = engine.map_reduce

    def spying(function, merge, items, options, plan, *args, **kwargs):
        plans.append(plan)
        return original(function, merge, items, options, plan, *args, **kwargs)

    engine.map_reduce = spying
    streamed = StreamingScores(chunks(frame, 1250), memory="20kB", engine=engine)
    assert_same(streamed, read_scores(frame), frame)
    assert any((np.concatenate(p.actions) == Z.SPLIT).any() for p in plans if p.actions)
    assert streamed.passes > 2


def test_the_least_budget_takes_as_many_passes_as_its_answer_needs():
    """At a budget too small to count a split interval in more than 4 sub-intervals, an
    EER is found in two searches one after the other, each of up to 32 passes among
    the 2**64 keys of float64 scores: 2,000 integer scores full of ties took 64 passes,
    where 64 were once all that :meth:`StreamingScores.apply` allowed."""
    from audit.measures.scores import eer_table

    rng = np.random.default_rng(22)
    frame = pd.DataFrame({"algorithm": rng.choice(["a", "b"], 2000),
                          "group": rng.choice(["F", "M", "X"], 2000),
                          "mated": rng.random(2000) < 0.25})  # fmt: skip
    frame["score"] = np.round(10 * rng.normal(size=2000) + 7.5 * frame["mated"]).astype(int)
    streamed = StreamingScores(frame, memory="1kB")
    expected = eer_table(read_scores(frame))
    pd.testing.assert_frame_equal(streamed.apply(eer_table), expected, check_exact=True)


def test_many_groups_at_a_small_budget_keep_their_counts_near_it():
    """An interval too full for the budget is counted in sub-intervals, 2G + 1 counts
    each: with 300 groups their number follows the budget, not a fixed 2**16 (which
    held 3.3 GB for 20,000 scores in 64 kB); the values are those read whole."""
    import tracemalloc

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"algorithm": "a", "group": rng.choice([f"g{i}" for i in range(300)],
                          20_000), "mated": rng.random(20_000) < 0.3})  # fmt: skip
    frame["score"] = rng.normal(size=20_000).round(3) + 2 * frame["mated"]
    streamed = StreamingScores(chunks(frame, 2000), memory="64kB")
    tracemalloc.start()
    try:
        got = streamed.sweep(TARGETS)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert streamed.passes > 1 and peak < 64 * 2**20
    with pytest.warns(UserWarning):  # rates resting on few comparisons
        expected = sweep(read_scores(frame), TARGETS)
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_empty_chunks_add_nothing(tmp_path, kernel):
    """A row group, a file or a DataFrame of no rows among the others adds nothing, as
    read_scores reads them; a source of nothing but empty chunks is refused as empty."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from audit.tables.scores import EMPTY, ScoresError

    frame = synthetic(3000, round_to=2).reset_index(drop=True)
    parts = chunks(frame, 1500)
    expected = read_scores(frame)
    assert_same(StreamingScores([parts[0], frame.iloc[:0], *parts[1:]]), expected, frame)
    folder = tmp_path / "run"
    folder.mkdir()
    arrow = [pa.Table.from_pandas(part, preserve_index=False) for part in parts]
    with pq.ParquetWriter(folder / "a.parquet", arrow[0].schema) as writer:
        for table in (arrow[0], arrow[0].slice(0, 0), arrow[1]):
            writer.write_table(table)
    frame.iloc[:0].to_parquet(folder / "b.parquet", index=False)
    pd.concat(parts[2:]).to_parquet(folder / "c.parquet", index=False)
    row_groups = pq.ParquetFile(folder / "a.parquet").metadata
    assert [row_groups.row_group(g).num_rows for g in range(3)] == [1500, 0, 1500]
    assert_same(StreamingScores(folder, memory="64kB"), expected, frame)
    with pytest.raises(ScoresError) as empty:
        StreamingScores([frame.iloc[:0], frame.iloc[:0]]).sweep(TARGETS)
    assert str(empty.value) == EMPTY.format(source="<DataFrame>")
    (folder / "a.parquet").unlink()
    (folder / "c.parquet").unlink()
    with pytest.raises(ScoresError) as empty:
        StreamingScores(folder).sweep(TARGETS)
    assert str(empty.value) == EMPTY.format(source=str(folder))


def test_half_precision_scores_are_counted_as_read(kernel):
    """float16 scores (widened exactly where the compiled loop reads them) give what
    read_scores gives, kept rows included."""
    frame = synthetic(3000, round_to=2, dtype="float16")
    assert_same(StreamingScores(chunks(frame, 1500), memory="64kB"), read_scores(frame), frame)


def test_a_column_of_lists_is_refused_as_labels_naming_file_and_row(tmp_path):
    """A Parquet group column of lists (one label a cell, written as a list) is refused
    where it first holds one -- its file and row -- read whole or streamed: no
    "unhashable type" from inside pandas."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from audit.tables.scores import NOT_A_LABEL, ScoresError

    frame = synthetic(200, round_to=2).reset_index(drop=True)
    frame.iloc[:300].to_parquet(tmp_path / "a.parquet", index=False)
    table = pa.Table.from_pandas(frame.iloc[300:], preserve_index=False)
    listed = pa.array([[g] for g in frame["group_1"].iloc[300:]], pa.list_(pa.string()))
    pq.write_table(table.set_column(table.schema.get_field_index("group_1"), "group_1", listed),
                   tmp_path / "b.parquet")  # fmt: skip
    message = NOT_A_LABEL.format(
        where=f"{tmp_path / 'b.parquet'}, row 0",
        column="group_1",
        value=repr([frame["group_1"].iloc[300]]),
        kind="list",
        more=f" (and {len(frame) - 301} more such cell(s) in rows 0 to {len(frame) - 301}, "
        "read together; the other rows were not counted)",  # b.parquet's: one row group
    )
    for read in (
        lambda: read_scores(tmp_path),
        lambda: StreamingScores(tmp_path).sweep(TARGETS),
        lambda: StreamingScores(tmp_path, memory="2kB").labels,
    ):
        with pytest.raises(ScoresError) as refused:
            read()
        assert str(refused.value) == message


def test_a_spelling_only_on_the_second_side_is_named_where_it_is(tmp_path):
    """A group spelled another way only in ``group_2`` (a non-mated row) is named at its
    row and column, read whole as streamed, not at the first row of the file; the
    message names that column, not a ``group`` column the file does not have."""
    from audit.tables.scores import ScoresError

    frame = synthetic(100, round_to=2).reset_index(drop=True)
    row = int(np.flatnonzero(~frame["mated"].to_numpy())[60])
    frame.loc[row, "group_2"] = frame.loc[row, "group_2"].lower()
    frame.to_parquet(tmp_path / "s.parquet", index=False)
    said = []
    for read in (
        lambda: read_scores(tmp_path / "s.parquet"),
        lambda: StreamingScores(tmp_path).labels,
    ):
        with pytest.raises(ScoresError) as refused:
            read()
        assert ", column 'group_2': the labels " in str(refused.value)
        said.append(re.search(r"and '\w' \((.*?)\) differ", str(refused.value)).group(1))
    assert said == [f"{tmp_path / 's.parquet'}, row {row}, column 'group_2'"] * 2


def test_two_spellings_of_a_label_are_refused_naming_file_and_row(tmp_path):
    """A group or an algorithm spelled two ways (case, spaces) is refused as read_scores
    refuses it, each spelling named by the file (or ``<DataFrame>``) and row where it
    first appears; nothing is counted as two groups."""
    from audit.scores.streaming import STREAMED_SPELLINGS
    from audit.tables.scores import ScoresError

    frame = synthetic(1000, round_to=2).reset_index(drop=True)
    frame.loc[1500:, "group_1"] = frame.loc[1500:, "group_1"].str.lower()
    frame.loc[1500:, "group_2"] = frame.loc[1500:, "group_2"].str.lower()
    frame.iloc[:1000].to_parquet(tmp_path / "a.parquet", index=False)
    frame.iloc[1000:].to_parquet(tmp_path / "b.parquet", index=False)
    # the pair and where read_scores names them: each in its file, at its row there
    with pytest.raises(ScoresError) as whole:
        read_scores(tmp_path)
    found = re.search(r"labels '(\w)' \((.*?)\) and '(\w)' \((.*?)\)", str(whole.value))
    first, first_where, second, second_where = found.groups()
    assert first_where.startswith(f"{tmp_path / 'a.parquet'}, row ")
    assert second_where.startswith(f"{tmp_path / 'b.parquet'}, row ")
    # the first lower-case row of the second file: rows 1500 on of the table (500 on of b)
    lowered = frame.index[frame["group_1"] == second][0] - 1000
    assert second == first.lower() and lowered >= 500
    # each named with its column: a group's label may be on either side
    assert second_where.endswith(f", row {lowered}, column 'group_1'")
    words = dict(source=str(tmp_path), column="group_1", kinds="groups", first=first)
    words |= dict(second=second, how="case", first_where=first_where, second_where=second_where)
    for streamed in (
        lambda: StreamingScores(tmp_path).sweep(TARGETS),
        lambda: StreamingScores(tmp_path, memory="2kB").labels,
    ):
        with pytest.raises(ScoresError) as refused:
            streamed()
        assert str(refused.value) == STREAMED_SPELLINGS.format(**words)
    spaced = frame.iloc[:1000].assign(algorithm=lambda f: f["algorithm"].replace("a", "a "))
    with pytest.raises(ScoresError) as refused:
        _ = StreamingScores([frame.iloc[:1000], spaced]).labels
    first_a = 1000 + int((frame["algorithm"].iloc[:1000] == "a").to_numpy().argmax())
    assert "column 'algorithm': the labels 'a' (<DataFrame>, row " in str(refused.value)
    assert f"and 'a ' (<DataFrame>, row {first_a}) differ only by" in str(refused.value)
    assert "so they would be read as two algorithms;" in str(refused.value)


def test_labels_seen_only_after_the_sample():
    """An algorithm and a group that only the last chunk holds."""
    frame = synthetic(3000)
    late = synthetic(600, seed=1)
    renamed = late.replace({"group_1": {"X": "Z"}, "group_2": {"X": "Z"}})
    new = pd.concat([late, renamed]).assign(algorithm="c")
    frame = pd.concat([frame, renamed, new], ignore_index=True)
    table = read_scores(frame)
    streamed = StreamingScores(chunks(frame, 1000))
    assert streamed.labels == (
        list(table["algorithm"].cat.categories),
        list(table["group_1"].cat.categories),
    )
    assert streamed.labels[0][-1] == "c" and streamed.labels[1][-1] == "Z"
    assert_same(streamed, table, frame)


@pytest.mark.parametrize(
    "columns",
    [
        {"algorithm": [0, 1], "group_1": [3, 5], "group_2": [5, 3]},  # integer labels
        {"algorithm": ["p", "q"], "group_1": ["F", "M"], "group_2": ["M", "F"]},  # text
        {"mated": "int"},  # mated flags 1/0
        {"score": "int"},  # integer scores
        {"categorical": True},  # labels as categoricals
    ],
)
def test_label_and_number_types_read_as_read_scores_reads_them(tmp_path, columns):
    rng = np.random.default_rng(5)
    n = 6000
    g = rng.integers(0, 2, n)
    mated = rng.random(n) < 0.3
    cross = ~mated & (rng.random(n) < 0.3)
    frame = pd.DataFrame(
        {
            "algorithm": np.array(columns.get("algorithm", ["x", "y"]))[rng.integers(0, 2, n)],
            "score": np.round(rng.normal(size=n) + 2 * mated, 2),
            "mated": mated,
            "group_1": np.array(columns.get("group_1", ["F", "M"]))[g],
            "group_2": np.array(columns.get("group_2", ["M", "F"]))[np.where(cross, g, 1 - g)],
        }
    )
    frame.loc[~cross, "group_2"] = frame.loc[~cross, "group_1"]
    if columns.get("mated") == "int":
        frame["mated"] = frame["mated"].astype("int8")
    if columns.get("score") == "int":
        frame["score"] = (100 * frame["score"]).astype("int64")
    if columns.get("categorical"):
        for name in ("algorithm", "group_1", "group_2"):
            frame[name] = frame[name].astype("category")
    table = read_scores(frame)
    assert_same(StreamingScores(chunks(frame, 2500)), table, frame)
    for i, part in enumerate(chunks(frame, 2500)):
        part.to_parquet(tmp_path / f"part-{i}.parquet", row_group_size=1000)
    assert_same(StreamingScores(tmp_path), table, frame)


def test_one_kind_of_comparison_gives_the_in_memory_tables():
    """Non-mated scores alone: an FMR-only sweep; mated alone: FNMRs at given thresholds
    and the in-memory refusal at a target FMR."""
    frame = synthetic(4000)
    impostors = frame[~frame["mated"]].reset_index(drop=True)
    stats = score_stats(read_scores(impostors))
    streamed = StreamingScores(chunks(impostors, 900))
    pd.testing.assert_frame_equal(streamed.sweep(TARGETS), sweep(stats, TARGETS), check_exact=True)
    assert streamed.apply(lambda s: s.rates_held()) == ("fmr",)
    genuine = frame[frame["mated"]].reset_index(drop=True)
    stats = score_stats(read_scores(genuine))
    streamed = StreamingScores(chunks(genuine, 900))
    grid = [0.5, 1.5, 2.5]
    pd.testing.assert_frame_equal(
        streamed.rates_at_thresholds(grid), rates_at_thresholds(stats, grid), check_exact=True
    )
    with pytest.raises(ScoresError) as expected:
        sweep(stats, TARGETS)
    with pytest.raises(ScoresError) as got:
        streamed.sweep(TARGETS)
    assert str(got.value) == str(expected.value)


def test_parquet_folder_and_glob_read_row_group_by_row_group(tmp_path):
    frame = synthetic(5000, round_to=2, dtype="float32").reset_index(drop=True)
    (tmp_path / "scores").mkdir()
    for i, part in enumerate(chunks(frame, 4000)):
        part.to_parquet(tmp_path / "scores" / f"part-{i}.parquet", row_group_size=1500)
    expected = sweep(read_scores(frame), TARGETS)
    files = [tmp_path / "scores" / f"part-{i}.parquet" for i in range(3)]
    sources = (tmp_path / "scores", str(tmp_path / "scores" / "*.parquet"))
    # a list of files (or of folders and globs) is read in the order given
    sources += (files, tuple(map(str, files)), [files[0], str(tmp_path / "scores" / "part-[12]*")])
    for source in sources:
        streamed = StreamingScores(source)
        assert len(streamed.pieces) == 3 + 3 + 2  # row groups of 1500 in parts of 4000
        assert [p.path for p in streamed.pieces][::3] == [str(f) for f in files]
        pd.testing.assert_frame_equal(streamed.sweep(TARGETS), expected, check_exact=True)
    assert ST.data_bytes(tmp_path / "scores") == ST.data_bytes(files) > 0
    # a file listed twice, itself or through a folder or glob, would be counted twice
    (tmp_path / "link.parquet").symlink_to(files[1])
    for twice, first, again in [
        ([files[0], files[0]], files[0], files[0]),
        ([files[1], tmp_path / "scores"], files[1], files[1]),
        ([tmp_path / "link.parquet", files[1]], tmp_path / "link.parquet", files[1]),
    ]:
        with pytest.raises(ParameterError) as error:
            StreamingScores(twice)
        assert str(error.value) == CH.TWICE.format(first=first, again=again)


@pytest.mark.parametrize(
    "source, kind",
    [
        (None, "NoneType"),
        (3, "int"),
        (b"scores.parquet", "bytes"),
        ({"scores.parquet": 1}, "dict"),
        ({"scores.parquet"}, "set"),
        (["scores.parquet", pd.DataFrame()], "list of DataFrame, str"),
        ((1, 2), "tuple of int"),
        ((n for n in (1, 2)), "generator of int"),
        (np.array("scores.parquet"), "ndarray"),
    ],
)
def test_a_source_of_neither_files_nor_frames_is_refused_by_its_type(source, kind):
    with pytest.raises(ParameterError) as error:
        StreamingScores(source)
    assert str(error.value) == CH.BAD_SOURCE.format(kind=kind)


@pytest.mark.parametrize(
    "source, kind",
    [
        ([], "list"),
        ((), "tuple"),
        (np.array([]), "ndarray"),
        (pd.Series([], dtype=object), "Series"),
        (iter(()), "tuple_iterator"),
        ((path for path in ()), "generator"),
    ],
)
def test_an_empty_sequence_is_refused_not_read_as_a_table_of_no_rows(source, kind):
    with pytest.raises(ParameterError) as error:
        StreamingScores(source)
    assert str(error.value) == CH.NOTHING.format(kind=kind)


@pytest.mark.parametrize("kind", [list, tuple, np.array, pd.Series, iter])
def test_a_sequence_of_paths_is_read_in_order_and_named_by_its_first(kind, tmp_path):
    """Paths as a list, a tuple, an array, a Series or an iterator (read once, then
    kept): the same values, and messages name the first path and how many follow."""
    frame = synthetic(2000).reset_index(drop=True)
    paths = [tmp_path / f"{name}.parquet" for name in ("b", "a")]  # not in sorted order
    frame.iloc[:1500].to_parquet(paths[0], index=False)
    frame.iloc[1500:].to_parquet(paths[1], index=False)
    streamed = StreamingScores(kind([str(path) for path in paths]))
    pd.testing.assert_frame_equal(
        streamed.sweep(TARGETS), sweep(read_scores(frame), TARGETS), check_exact=True
    )
    assert streamed._name() == f"{paths[0]} (and 1 more)"


def test_a_path_like_object_is_read_as_the_path_it_stands_for(tmp_path):
    """What ``os.fspath`` gives, not what ``str`` gives (here, not a path at all)."""

    class Where:
        def __init__(self, path):
            self.path = path

        def __fspath__(self):
            return self.path

        def __str__(self):
            return "somewhere"

    frame = synthetic(1000).reset_index(drop=True)
    frame.to_parquet(tmp_path / "a.parquet", index=False)
    expected = sweep(read_scores(frame), TARGETS)
    for source in (Where(str(tmp_path / "a.parquet")), [Where(str(tmp_path / "a.parquet"))]):
        streamed = StreamingScores(source)
        pd.testing.assert_frame_equal(streamed.sweep(TARGETS), expected, check_exact=True)
        assert streamed._name() == str(tmp_path / "a.parquet")


@pytest.mark.filterwarnings(
    "ignore:.*appear in more than one group:audit.tables.scores.ScoresWarning"
)
def test_chunks_whose_columns_differ_are_refused_naming_both(tmp_path):
    """Each chunk alone could pass (subjects are optional), but read_scores refuses the
    table they make: so is a chunk, or a file, whose columns are not the first's."""
    frame = synthetic(3000, subjects=True).reset_index(drop=True)
    bare = frame.drop(columns=["subject_1", "subject_2"])
    expected = CH.COLUMNS_DIFFER.format(
        source="<DataFrame>, row 1000", columns=sorted(bare.columns), first="<DataFrame>, row 0",
        expected=sorted(frame.columns))  # fmt: skip
    with pytest.raises(CH.ScoresError) as error:
        StreamingScores([frame.iloc[:1000], bare.iloc[1000:2000], frame.iloc[2000:]])
    assert str(error.value) == expected
    frame.iloc[:1000].to_parquet(tmp_path / "a.parquet", index=False)
    bare.iloc[1000:].to_parquet(tmp_path / "b.parquet", index=False)
    with pytest.raises(CH.ScoresError) as error:
        StreamingScores(tmp_path)
    assert str(error.value).startswith(f"{tmp_path / 'b.parquet'}: columns ")
    # the same columns in another order, and a chunk of no rows, are one table
    parts = [frame.iloc[:1000], frame.iloc[:0][["score"]], frame.iloc[1000:][frame.columns[::-1]]]
    pd.testing.assert_frame_equal(
        StreamingScores(parts).sweep(TARGETS), sweep(read_scores(frame), TARGETS), check_exact=True
    )


@pytest.mark.parametrize("source", ["", " ", [""], ["scores.parquet", ""]])
def test_an_empty_path_is_refused_not_read_as_the_working_folder(source, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    synthetic(100).to_parquet(tmp_path / "scores.parquet", index=False)
    with pytest.raises(ParameterError) as error:
        StreamingScores(source)
    assert str(error.value) == CH.NO_PATH


def test_streamed_statistics_follow_the_protocol():
    frame = synthetic(2000)
    streamed = StreamingScores(chunks(frame, 900))
    stats = streamed.apply(lambda stats: stats)
    assert isinstance(stats, SufficientStatistics)
    assert score_stats(stats) is stats


def _broken(kind: str) -> pd.DataFrame:
    frame = synthetic(1000).reset_index(drop=True)
    if kind == "empty group":
        frame.loc[1350, "group_1"] = ""
    elif kind == "missing group":
        frame.loc[1350, "group_2"] = None
    elif kind == "NaN score":
        frame.loc[1350, "score"] = np.nan
    elif kind == "infinite score":
        frame.loc[1350, "score"] = np.inf
    elif kind == "integer score beyond 2**53":  # 2**60 + 1 would be read as 2**60
        frame["score"] = (frame["score"] * 1e6).round().astype("int64")
        frame.loc[1350, "score"] = 2**60 + 1
    elif kind == "object integer score beyond 2**53":  # Python integers, in objects
        frame["score"] = (frame["score"] * 1e6).round().astype("int64").astype(object)
        frame.loc[1350, "score"] = 2**60 + 1
    elif kind == "date score":  # pandas reads a date as a count of its unit since 1970
        frame["score"] = pd.Timestamp("2026-01-01") + pd.to_timedelta(frame["score"], "s")
    elif kind == "bad mated flag":
        frame["mated"] = frame["mated"].astype(object)
        frame.loc[1350, "mated"] = "maybe"
    elif kind == "mated across groups":
        row = frame.index[frame["mated"] & (frame.index > 1300)][0]
        frame.loc[row, "group_2"] = "F" if frame.loc[row, "group_1"] != "F" else "M"
    elif kind == "mated across subjects":
        frame["subject_1"] = "s"
        frame["subject_2"] = "s"
        row = frame.index[frame["mated"] & (frame.index > 1300)][0]
        frame.loc[row, "subject_2"] = "t"
    elif kind == "integer mated flag 2":
        frame["mated"] = frame["mated"].astype("int64")
        frame.loc[1350, "mated"] = 2
    return frame


@pytest.mark.parametrize(
    "kind",
    [
        "empty group",
        "missing group",
        "NaN score",
        "infinite score",
        "date score",
        "integer score beyond 2**53",
        "object integer score beyond 2**53",
        "bad mated flag",
        "mated across groups",
        "mated across subjects",
        "integer mated flag 2",
    ],
)
def test_a_bad_chunk_is_refused_with_the_message_of_read_scores(kind):
    """The first bad cell named as read_scores names it; the further ones are counted
    in its chunk only, and the message says so (where every cell is bad, a column of
    dates: 699 more in the first chunk read, of 1,999 in all)."""
    frame = _broken(kind)
    with pytest.raises(ScoresError) as expected:
        read_scores(frame)
    with pytest.raises(ScoresError) as got:
        StreamingScores(chunks(frame, 700)).sweep([0.01])
    message = str(expected.value)
    row = int(re.search(r"<DataFrame>, row (\d+)", message).group(1))
    first = row // 700 * 700
    if kind == "date score":
        assert row == 0 and message.endswith(f" (and {len(frame) - 1} more such cell(s))")
        message = message.removesuffix(f" (and {len(frame) - 1} more such cell(s))")
        counted = "and 699 more such cell(s)"
    else:
        assert "more such" not in message  # one bad cell in all
        counted = "no other such cell"
    part = f"rows {first} to {first + 699}, read together; the other rows were not counted"
    assert str(got.value) == f"{message} ({counted} in {part})"


def test_further_bad_cells_are_counted_where_they_were_and_only_there(tmp_path):
    """A file read a row group at a time counts the further bad cells of the row group
    where the first is, and says that the other rows were not counted: "(and 2 more
    such cell(s))" of a file holding five more was a misreading.  One row group, read
    whole: every further cell counted, as of a table read at once.  A row group of one
    row says so."""
    frame = synthetic(1500).reset_index(drop=True)  # 3,000 rows
    frame.loc[[1500, 1600, 1700, 2500, 2600, 2900], "score"] = np.nan
    frame.to_parquet(tmp_path / "groups.parquet", index=False, row_group_size=1000)
    frame.to_parquet(tmp_path / "whole.parquet", index=False)
    frame.iloc[1498:1503].to_parquet(tmp_path / "rows.parquet", index=False, row_group_size=1)
    part = "in rows 1000 to 1999, read together; the other rows were not counted"
    alone = "a row read on its own; the other rows were not counted"
    for name, more, first in (("groups", f" (and 2 more such cell(s) {part})", 1500),
                              ("whole", " (and 5 more such cell(s))", 1500),
                              ("rows", f" ({alone})", 2)):  # fmt: skip
        path = tmp_path / f"{name}.parquet"
        message = MISSING_VALUE.format(where=f"{path}, row {first}", column="score", more=more)
        for read in (read_scores, lambda p: StreamingScores(p).sweep(TARGETS)):
            with pytest.raises(ScoresError) as refused:
                read(path)
            assert str(refused.value) == message


def test_the_first_bad_cell_is_named_though_the_sample_reads_a_later_one_first(tmp_path):
    """The sample reads chunks spread over the data, the last among them: a bad cell
    there was named though an earlier chunk had one.  The first is named, as read_scores
    names it."""
    frame = synthetic(500).reset_index(drop=True)  # 1,000 rows: 100 row groups of 10
    frame.loc[[35, 995], "score"] = np.nan
    frame.to_parquet(tmp_path / "s.parquet", index=False, row_group_size=10)
    message = MISSING_VALUE.format(
        where=f"{tmp_path / 's.parquet'}, row 35",
        column="score",
        more=" (no other such cell in rows 30 to 39, read together; the other rows were not counted)",
    )
    for read in (read_scores, lambda p: StreamingScores(p).sweep(TARGETS)):
        with pytest.raises(ScoresError) as refused:
            read(tmp_path / "s.parquet")
        assert str(refused.value) == message


def test_blank_and_spelled_nan_scores_are_counted_together_as_missing(tmp_path):
    """Scores as text: a blank cell and a cell spelling NaN are both missing, counted in
    one message (the blanks alone were, and "no other" then said what was not so)."""
    frame = synthetic(100).reset_index(drop=True)
    frame["score"] = frame["score"].astype(str)
    frame.loc[[5, 9], "score"] = ["", "nan"]
    frame.loc[[3, 150], "score"] = ["NaN", " "]
    frame.to_parquet(tmp_path / "s.parquet", index=False, row_group_size=100)
    frame.to_csv(tmp_path / "s.csv", index=False)
    part = (
        " (and 2 more such cell(s) in rows 0 to 99, read together; the other rows were not counted)"
    )
    for path, where, more in ((tmp_path / "s.parquet", "row 3", part),
                              (tmp_path / "s.csv", "line 5", " (and 3 more such cell(s))")):  # fmt: skip
        with pytest.raises(ScoresError) as refused:
            read_scores(path)
        assert str(refused.value) == MISSING_VALUE.format(
            where=f"{path}, {where}", column="score", more=more
        )


def test_integers_of_objects_a_float_holds_are_read_alike_streamed():
    """Scores as Python integers (a column of objects), 2**70 among them (a float holds
    it): read as read_scores reads them, where Arrow could not convert the chunk."""
    frame = synthetic(1000).reset_index(drop=True)
    frame["score"] = (frame["score"] * 1e6).round().astype("int64").astype(object)
    frame.loc[10, "score"] = 2**70
    assert (
        StreamingScores(chunks(frame, 700))
        .sweep(TARGETS)
        .equals(sweep(read_scores(frame), TARGETS))
    )


def test_chunk_errors_name_the_file_and_its_row(tmp_path):
    frame = synthetic(400).reset_index(drop=True)
    frame.loc[350, "group_1"] = ""
    frame.iloc[:300].to_parquet(tmp_path / "a.parquet")
    frame.iloc[300:].reset_index(drop=True).to_parquet(tmp_path / "b.parquet")
    with pytest.raises(ScoresError) as error:
        StreamingScores(tmp_path).sweep([0.01])
    assert str(error.value) == EMPTY_LABEL.format(
        where=f"{tmp_path / 'b.parquet'}, row 50",
        column="group_1",
        more=f" (no other such cell in rows 0 to {len(frame) - 301}, read together; the other rows "
        "were not counted)",  # b.parquet's rows: one row group
    )
    with pytest.raises(ScoresError) as error:
        StreamingScores(str(tmp_path / "none-*.parquet"))
    assert str(error.value) == ST.NO_PARQUET.format(source=str(tmp_path / "none-*.parquet"))


def test_fast_reading_of_a_chunk_equals_validation():
    """The Arrow path gives the codes and labels that validate() gives."""
    frame = synthetic(3000, subjects=True).reset_index(drop=True)
    piece = CH.Piece(offset=0, rows=len(frame), frame=frame)
    fast = CH.read_chunk(piece, CH.Options())
    full = CH._validated(piece, frame, "<DataFrame>", list(frame.columns), None, CH.Options())
    for chunk in (fast, full):
        for name in ("algorithm", "group_1", "group_2"):
            labels = chunk.algorithms if name == "algorithm" else chunk.groups
            expected = frame[name].to_numpy()
            assert (np.array(labels, dtype=object)[getattr(chunk, name)] == expected).all()
        assert chunk.first == tuple(
            list(pd.unique(frame[name])) for name in ("algorithm", "group_1", "group_2")
        )
        np.testing.assert_array_equal(chunk.score, frame["score"].to_numpy())


@pytest.mark.parametrize("offset", [0, 1, 3, 8, 13])
@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 1000])
def test_mated_flags_unpacked_as_arrow_converts_them(n, offset):
    """The fast path unpacks a boolean column's bits itself: Arrow's own conversion,
    whatever the slice's offset into its bitmap."""
    import pyarrow as pa

    values = np.random.default_rng(n + offset).random(n + offset + 5) < 0.3
    array = pa.array(values).slice(offset, n)
    got = CH._flags(array)
    assert got.dtype == bool
    np.testing.assert_array_equal(got, array.to_numpy(zero_copy_only=False))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_chunk_with_a_score_not_finite_leaves_the_fast_path(dtype):
    import pyarrow as pa

    for bad in (np.nan, np.inf, -np.inf):
        for at in (0, 5, 9):
            values = np.linspace(-1, 1, 10).astype(dtype)
            values[at] = bad
            assert CH._scores(pa.array(values), True) is None
    values = np.linspace(-1, 1, 10).astype(dtype)
    np.testing.assert_array_equal(CH._scores(pa.array(values), False), -values)


def test_a_file_rewritten_is_read_with_its_new_footer(tmp_path):
    """The footer of a Parquet file is parsed once for its row groups, and again once
    the file has changed."""
    path = tmp_path / "scores.parquet"
    frame = synthetic(200).reset_index(drop=True)
    frame.to_parquet(path, row_group_size=100)
    first = StreamingScores(path).sweep([0.1])
    pd.testing.assert_frame_equal(first, sweep(read_scores(frame), [0.1]), check_exact=True)
    other = synthetic(300, seed=1).reset_index(drop=True)
    other.to_parquet(path, row_group_size=250)
    second = StreamingScores(path).sweep([0.1])
    pd.testing.assert_frame_equal(second, sweep(read_scores(other), [0.1]), check_exact=True)


@pytest.mark.parametrize("change", ["rewritten", "deleted", "its folder a file"])
def test_a_file_changed_between_passes_is_refused(tmp_path, change):
    """A file rewritten after a pass has read it would be counted partly as it was and
    partly as it is (neither table's values): the next read of it is refused, naming it;
    so is a file gone since (not one that cannot be read as Parquet)."""
    import shutil

    (tmp_path / "run").mkdir()
    path = tmp_path / "run" / "scores.parquet"
    frame = synthetic(3000).reset_index(drop=True)
    frame.to_parquet(path, row_group_size=1000)
    engine = ST.LocalEngine()
    original = engine.map_reduce
    passes = []

    def rewriting(*args, **kwargs):
        result = original(*args, **kwargs)
        passes.append(kwargs.get("label"))
        if len(passes) == 2 and change == "deleted":  # the sample and the first pass read it
            path.unlink()
        elif len(passes) == 2 and change == "its folder a file":
            shutil.rmtree(tmp_path / "run")
            (tmp_path / "run").write_text("not a folder")
        elif len(passes) == 2:
            synthetic(3000, seed=1).to_parquet(path, row_group_size=1000, index=False)
        return result

    engine.map_reduce = rewriting
    streamed = StreamingScores(path, memory="20kB", engine=engine)
    with pytest.raises(CH.ScoresError) as error:
        streamed.sweep(TARGETS)
    assert len(passes) == 2 and str(error.value) == CH.CHANGED.format(source=path)
    if change != "rewritten":
        return
    # read afresh, the file as it is now
    expected = sweep(read_scores(synthetic(3000, seed=1)), TARGETS)
    pd.testing.assert_frame_equal(StreamingScores(path).sweep(TARGETS), expected, check_exact=True)


def _around_oracle(values, at, lo, hi, error=None):
    """The window around one position, as written one position at a time."""
    import math

    m = len(values)
    if error is None:
        p = min(max(at / m, 0.0), 1.0)
        error = math.sqrt(m * p * (1 - p))
    margin = ST._Z * error + 2 * ST._Z
    first, last = math.floor(at - margin), math.ceil(at + margin)
    start = float(values[first]) if first > 0 else lo
    stop = float(np.nextafter(values[last], np.inf)) if last < m - 1 else hi
    steps = np.unique(np.round(at + max(1.0, error) * np.arange(-ST._Z, ST._Z + 1, 2)))
    steps = steps[(steps > 0) & (steps < m)].astype(np.intp)
    return start, stop, tuple(float(v) for v in np.unique(values[steps]))


def test_windows_around_many_ranks_at_once_are_those_around_each():
    """The windows a sample plans around hundreds of order statistics at once equal
    those planned one at a time: float32 and float64 scores, ties, bounds of either
    kind, positions whole or not, binomial errors or given ones."""
    rng = np.random.default_rng(1)
    for _ in range(300):
        m = int(rng.integers(1, 3000))
        dtype = rng.choice([np.float32, np.float64])
        values = np.sort(rng.normal(size=m).round(int(rng.integers(0, 4))).astype(dtype))
        lo, hi = (-np.inf, np.inf) if rng.random() < 0.5 else (float(values[0]) - 1.1, 9.1)
        at = rng.integers(0, m + 1, size=int(rng.integers(1, 20))).astype(float)
        at += rng.random(len(at)) * (rng.random() < 0.3)
        error = None if rng.random() < 0.7 else rng.random(len(at)) * rng.integers(1, 100)
        got = ST._arounds(values, at, lo, hi, error)
        for i, a in enumerate(at.tolist()):
            one = None if error is None else float(error[i])
            assert (
                got[i]
                == _around_oracle(values, a, lo, hi, one)
                == ST._around(values, a, lo, hi, one)
            )
            assert all(type(v) is float for v in (*got[i][:2], *got[i][2]))


def test_memory_sizes():
    assert ST.parse_memory("4GB") == 4 * 10**9
    assert ST.parse_memory("512MiB") == 512 * 2**20
    assert ST.parse_memory("0.5kB") == 500 and ST.parse_memory("1B") == 1
    # a number as text or as a float, in scientific notation too, is bytes
    for same in ("2e9", "2E9", " 2e+9 B", "2.e9", ".002e12", 2e9, np.float32(2e9), "2000MB"):
        assert ST.parse_memory(same) == 2 * 10**9
    # "0.5B" is under a byte: refused, where rounding down would run with no memory at all
    for bad in ("", "-1GB", "4XB", 0, True, "0.5B", "0.4", 0.5, "1e-3", "2E", "1eB", "4 e9",
                float("nan"), float("inf"), "-1e3"):  # fmt: skip
        with pytest.raises(ValueError) as error:
            ST.parse_memory(bad)
        assert str(error.value) == ST.BAD_MEMORY.format(value=bad)
    # positive, past what a float holds: were said to be "not positive"
    for bad in ("1e400", "2e308", "1e308TB", "1" * 400):
        with pytest.raises(ValueError) as error:
            ST.parse_memory(bad)
        assert str(error.value) == ST.MEMORY_PAST_FLOAT.format(value=bad)
    assert ST.parse_memory("1e30") == int(1e30)  # more than any machine has: one pass


def test_keys_keep_the_order_of_the_floats():
    values = np.array([-np.inf, -1e300, -2.5, -1e-320, -0.0, 0.0, 1e-320, 3.0, 1e39, np.inf])
    for key in (Z.key64, Z.key32):
        keys = key(values)
        assert (np.diff(keys.astype(np.float64)) >= 0).all()
        assert keys[4] == keys[5]  # the zeros share a key
    np.testing.assert_array_equal(Z.unkey64(Z.key64(values)), values + 0.0)


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    # the scheduler's HTTP server on a free port: on its default (8787), held by any other
    # cluster on the machine, distributed warns that it moved, and a warning is an error here
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": ":0"},
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


@pytest.mark.slow
@pytest.mark.parametrize("case", ["ties", "one group per side", "subjects"])
@pytest.mark.filterwarnings(
    "ignore:.*appear in more than one group:audit.tables.scores.ScoresWarning"
)
def test_dask_on_a_local_cluster_equals_in_memory(dask_client, tmp_path, case):
    frame = synthetic(**CASES[case]).reset_index(drop=True)
    frame["score"] = -frame["score"]  # distances
    table = read_scores(frame, higher_is_match=False)
    for i, part in enumerate(chunks(frame, 5000)):
        part.to_parquet(tmp_path / f"part-{i}.parquet", row_group_size=2000)
    streamed = StreamingScores(tmp_path, engine="dask", client=dask_client, higher_is_match=False)
    assert_same(streamed, table, frame)
    # a budget of 16 kB for 12,000 scores: 10 to 13 passes, most of their plans splitting
    # intervals, sent to the workers (at 4 kB, ties heavier than the 64 scores it keeps
    # are split down to one float: 81 passes, where the other cases take 15 and 17)
    tiny = StreamingScores(
        chunks(frame, 3000), engine="dask", client=dask_client, higher_is_match=False, memory=16384
    )
    stats = score_stats(table)
    pd.testing.assert_frame_equal(
        tiny.thresholds_at_fmr(TARGETS), thresholds_at_fmr(stats, TARGETS), check_exact=True
    )
    pd.testing.assert_frame_equal(tiny.apply(eer_table), eer_table(stats), check_exact=True)


def test_the_warnings_of_a_function_are_those_of_its_last_attempt_once():
    """A function applied over several passes warns once, of the answer: not once an
    attempt, nor of the sample that planned the first pass (which is not the data)."""
    import warnings

    frame = synthetic(5000, round_to=2)
    expected = sweep(read_scores(frame), TARGETS)
    for memory, passes in (("4GB", 0), ("20kB", 3)):
        streamed = StreamingScores(chunks(frame, 1250), memory=memory)
        attempts = []

        def warning(stats, streamed=streamed, attempts=attempts):
            attempts.append(stats is streamed._sample)
            warnings.warn(f"attempt {len(attempts)}", UserWarning, stacklevel=1)
            return sweep(stats, TARGETS)

        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            pd.testing.assert_frame_equal(streamed.apply(warning), expected, check_exact=True)
        assert streamed.passes >= passes and len(attempts) > 1 + (passes > 0)
        assert [str(w.message) for w in said] == [f"attempt {len(attempts)}"]
    with pytest.raises(UserWarning, match="^attempt"), warnings.catch_warnings():
        warnings.simplefilter("error")  # the filters in force judge it, as given
        StreamingScores(chunks(frame, 1250), memory="20kB").apply(
            lambda stats: warnings.warn("attempt", UserWarning, stacklevel=1)
        )


def test_dask_without_a_cluster_uses_the_default_scheduler():
    """Dask's own scheduler, where no client is given: a budget of 2 kB takes a dozen
    passes, some splitting intervals (256 bytes took 56, on the same paths)."""
    pytest.importorskip("dask")
    frame = synthetic(3000, round_to=2)
    streamed = StreamingScores(chunks(frame, 700), engine="dask", memory=2048)
    pd.testing.assert_frame_equal(
        streamed.sweep(TARGETS), sweep(read_scores(frame), TARGETS), check_exact=True
    )
    assert streamed.passes > 5
    with pytest.raises(ValueError) as error:
        StreamingScores(chunks(frame, 700), engine="spark")
    assert str(error.value) == ST.UNKNOWN_ENGINE.format(name="spark")


def test_a_window_in_no_order_answers_as_a_sorted_one(kernel):
    """Scans and selections while few questions come, a sort after that; the scans
    give the same answers whichever kernel counts."""
    from audit.scores.streamed import _SCANS, Window

    rng = np.random.default_rng(2)
    segments = [rng.normal(size=n).round(2) for n in (300, 0, 500)]
    window = Window(-np.inf, np.inf, [s.copy() for s in segments], ordered=False)
    everything = np.sort(np.concatenate(segments))
    thresholds = (-0.5, 0.0, -0.0, 0.013, 0.01, 9.0, -9.0, float(everything[0]))
    for t in thresholds:
        fresh = Window(-np.inf, np.inf, [s.copy() for s in segments], ordered=False)
        assert fresh.below(np.array([t])).tolist() == [[int((s < t).sum()) for s in segments]]
        above = everything[everything >= t]
        expected = float(above[0]) if len(above) else None
        assert fresh.smallest_at_or_above((0, 1, 2), t) == expected
        assert fresh.smallest_at_or_above((1,), t) is None  # an empty segment
    ranks = np.array([0, 17, 17, 799])
    np.testing.assert_array_equal(window.select((0, 1, 2), ranks), everything[ranks])
    for ends in ([0], [799], [799, 0, 799]):  # the least and the greatest: by a scan
        ends = np.array(ends)
        np.testing.assert_array_equal(window.select((0, 1, 2), ends), everything[ends])
    assert not window.ordered
    np.testing.assert_array_equal(window.population((0, 2)), everything)
    for _ in range(_SCANS):
        window.scan()
    assert window.ordered  # questions kept coming: sorted once
    # many thresholds at once: scanned until the window sorts, the rest searched
    many = np.array([*thresholds, *rng.normal(size=_SCANS)])
    fresh = Window(-np.inf, np.inf, [s.copy() for s in segments], ordered=False)
    expected = [[int((s < t).sum()) for s in segments] for t in many]
    assert fresh.below(many).tolist() == expected and fresh.ordered
    for mine, theirs in zip(window.by_segment, segments, strict=True):
        np.testing.assert_array_equal(mine, np.sort(theirs))
    # sorted: ranks and least scores found in the segments, as in their sorted union
    all_ranks = np.arange(len(everything))
    np.testing.assert_array_equal(window.kth((0, 1, 2), all_ranks), everything)
    second = np.sort(segments[2])
    np.testing.assert_array_equal(window.kth((2,), np.arange(500)), second)
    for t in thresholds:
        above = everything[everything >= t]
        expected = float(above[0]) if len(above) else None
        assert window.least_at_or_above((0, 1, 2), t) == expected
        assert window.least_at_or_above((1,), t) is None


@pytest.mark.filterwarnings(
    "ignore:.*appear in more than one group:audit.tables.scores.ScoresWarning"
)
def test_passes_after_the_first_leave_the_subjects_unread(monkeypatch):
    """The first pass checks the subjects of every row; later ones read only the
    columns they count, and find the same values."""
    frame = synthetic(6000, subjects=True, round_to=2).reset_index(drop=True)
    read = []
    original = CH.read_chunk

    def spying(piece, options):
        chunk = original(piece, options)
        read.append((options.subjects, chunk.subjects is not None))
        return chunk

    monkeypatch.setattr(ST, "read_chunk", spying)
    monkeypatch.setattr(Z, "read_chunk", spying)
    streamed = StreamingScores(chunks(frame, 1500), memory="2kB")
    stats = score_stats(read_scores(frame))
    pd.testing.assert_frame_equal(streamed.apply(eer_table), eer_table(stats), check_exact=True)
    assert streamed.passes > 1
    first = [r for r in read if r[0]]
    assert len(first) >= 4 and all(has for _, has in first)  # every chunk once, with subjects
    later = [r for r in read if not r[0]]
    assert later and not any(has for _, has in later)


@pytest.mark.parametrize("case", ["continuous", "ties"])
@pytest.mark.parametrize("higher_is_match", [True, False])
def test_the_medians_and_the_orientation_warning_streamed_are_those_in_memory(
    case, higher_is_match
):
    """Each algorithm's median mated and median non-mated score (numpy's, the mean of the
    two middle scores of an even count) learnt in passes as any order statistic, at any
    budget; so the warning of scores read the wrong way round is the one in memory."""
    from audit.scores.orientation import FIX_DISTANCE, orientation_warning

    frame = synthetic(3001, **CASES[case])  # similarities: an odd and an even count
    frame["score"] = -frame["score"]  # as distances
    table = read_scores(frame, higher_is_match=higher_is_match)
    stats = score_stats(table)
    expected = []
    for name in stats.algorithms:
        rows = frame[frame["algorithm"] == name]
        internal = rows["score"] if higher_is_match else -rows["score"]
        expected.append((np.median(internal[rows["mated"]]), np.median(internal[~rows["mated"]])))
    assert len({len(internal[rows["mated"]]) % 2, len(internal[~rows["mated"]]) % 2}) == 2
    message = orientation_warning(table)
    # distances read as similarities are warned of, read as distances they are not
    assert (message is not None and message.endswith(FIX_DISTANCE)) == higher_is_match
    assert [stats.medians(a) for a in range(2)] == expected
    assert orientation_warning(stats) == message
    for memory, passes in (("4GB", 1), ("20kB", 4)):  # a small budget: passes find them
        streamed = StreamingScores(
            chunks(frame, 1000), memory=memory, higher_is_match=higher_is_match
        )
        assert streamed.apply(lambda s: [s.medians(a) for a in range(2)]) == expected
        assert streamed.passes >= passes
        assert streamed.apply(orientation_warning) == message


def test_a_folder_is_read_whole_whatever_the_case_of_its_parquet_names(tmp_path):
    """``audit scores FOLDER`` read only the files ending in ``.parquet``: half the scores,
    in ``p2.PARQUET`` or ``p2.csv``, were left out without a word.  A folder's Parquet
    files are read whatever the case and spelling of their suffix; any other file is
    refused; the names Arrow, Dask and Spark leave out (``_SUCCESS``, ``.crc``) are not
    read."""
    frame = synthetic(600)
    halves = [frame.iloc[:300], frame.iloc[300:]]
    run = tmp_path / "run"
    (run / "day=2" / "_temporary").mkdir(parents=True)
    (run / "day=1").mkdir()
    halves[0].to_parquet(run / "day=1" / "p1.parquet", index=False)
    halves[1].to_parquet(run / "day=2" / "p2.PARQUET", index=False)
    halves[1].to_parquet(run / "day=2" / "_temporary" / "p2.parquet")  # a writer's, unfinished
    (run / "_SUCCESS").write_text("")
    (run / "day=1" / ".p1.parquet.crc").write_text("crc")
    assert CH.parquet_files(run) == [
        str(run / "day=1" / "p1.parquet"),
        str(run / "day=2" / "p2.PARQUET"),
    ]
    streamed = StreamingScores(run)
    pd.testing.assert_frame_equal(
        streamed.sweep(TARGETS), sweep(read_scores(frame), TARGETS), check_exact=False
    )
    halves[1].to_csv(run / "p3.csv", index=False)
    with pytest.raises(ScoresError) as error:
        CH.parquet_files(run)
    assert str(error.value) == CH.NOT_PARQUET_IN_FOLDER.format(
        folder=str(run), file="p3.csv", suffixes=".parquet, .parq, .pq"
    )
    one = tmp_path / "scores.pq"  # a Parquet file named as such is read as one, not as text
    frame.to_parquet(one, index=False)
    pd.testing.assert_frame_equal(read_scores(one), read_scores(frame), check_like=True)


def test_a_linked_folder_is_read_and_a_file_reached_twice_is_refused(tmp_path):
    """A folder linked inside the folder of scores was left out without a word (half the
    comparisons); a file reached twice through a link, in a folder or a glob, was counted
    twice (a link back to the folder: 41 times)."""
    frame = synthetic(400)  # 800 comparisons: 400 of each of two algorithms
    target = tmp_path / "target"
    target.mkdir()
    for i, start in enumerate(range(0, 800, 200)):
        frame.iloc[start : start + 200].to_parquet(target / f"{'abcd'[i]}.parquet", index=False)
    run = tmp_path / "run"
    run.mkdir()
    (run / "sub").symlink_to(target)
    assert CH.parquet_files(run) == [str(run / "sub" / f"{n}.parquet") for n in "abcd"]
    pd.testing.assert_frame_equal(
        StreamingScores(run).sweep(TARGETS), sweep(read_scores(frame), TARGETS), check_exact=False
    )
    (target / "again.parquet").symlink_to("a.parquet")
    with pytest.raises(ScoresError) as error:
        CH.parquet_files(run)
    assert str(error.value) == CH.SAME_FILE.format(
        again=run / "sub" / "again.parquet", first=run / "sub" / "a.parquet"
    )
    (target / "again.parquet").unlink()
    (target / "self").symlink_to(".")
    for source in (run, f"{target}/**/*.parquet"):
        with pytest.raises(ScoresError, match="again \\(through a link\\)"):
            CH.parquet_files(source)
