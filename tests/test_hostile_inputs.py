"""Hostile and careless inputs: every one is read exactly as written or refused with its message.

Issue 11's cases (a shifted, merged or invented column; counts, rates and
floats that cannot be what they say; endless or mislabelled files) and
hypothesis round-trips: any valid table reads back identical from CSV and
Parquet, and a single corrupted cell is refused, never silently changed.
"""

from __future__ import annotations

import string

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audit.analysis import accuracy
from audit.analysis.accuracy import WeightsError, read_counts
from audit.analysis.ffmc import _search_space
from audit.analysis.pareto import MAX_PAIRS, TOO_MANY_PAIRS, efficient
from audit.tables import common as tables
from audit.tables import rates
from audit.tables import scores as SR
from audit.tables.labels import label_key
from audit.tables.rates import RatesError, read_rates
from audit.tables.scores import ScoresError, read_scores
from audit.validation import REFUSED

# these tables are about parsing, not plausibility: their rates of 0.1-0.5 are deliberate
pytestmark = pytest.mark.filterwarnings("ignore::audit.tables.layouts.ImplausibleRatesWarning")

WIDE = "Algorithm,FMR.F,FNMR.F,FMR.M,FNMR.M\n"
LONG = "algorithm,group,fmr,fnmr,n_mated,n_nonmated\n"


def write(tmp_path, text: str, name: str = "rates.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="")
    return path


def refused(source, error=RatesError, read=read_rates, **options) -> str:
    with pytest.raises(error) as caught:
        read(source, **options)
    return str(caught.value)


# --------------------------------------------------------------------- shape of the CSV


#: Cells of every kind a label or rate column may hold: missing ones, whitespace of
#: several kinds (the ideographic space too), text around whitespace, numbers.
CELLS = [None, np.nan, pd.NA, pd.NaT, "", " ", "\t\n", "\u3000", "a", " a ", "0", 0, 1.5,
         np.float32("nan"), np.str_(" "), np.str_("b"), -0.0, b"", True]  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(range(len(CELLS))), max_size=tables._FEW_CELLS))
def test_blank_looks_at_a_few_cells_as_at_many(picks):
    # a few cells are looked at one by one, many through pandas' string methods: the
    # answer for each cell is the same either way
    cells = [CELLS[i] for i in picks]
    many = pd.Series(cells * (tables._FEW_CELLS + 1) + [None], dtype=object)
    assert len(many) > tables._FEW_CELLS or not cells
    expected = tables.blank(many)[: len(cells)] if cells else np.zeros(0, bool)
    got = tables.blank(pd.Series(cells, dtype=object))
    assert got.dtype == bool and got.tolist() == expected.tolist()
    if all(isinstance(c, str) or c is None or c is pd.NA for c in cells):
        text = pd.Series(cells, dtype="string")
        assert tables.blank(text).tolist() == expected.tolist()


def test_extra_field_on_every_row_is_refused_not_shifted_into_the_index(tmp_path):
    path = write(tmp_path, WIDE + "a,0.1,0.2,0.3,0.4,0.5\nb,0.1,0.2,0.3,0.4,0.5\n")
    assert refused(path) == tables.RAGGED_ROW.format(
        source=str(path), line=2, found=6, header_line=1, expected=5
    )


def test_extra_field_blames_its_own_line_not_the_next(tmp_path):
    path = write(tmp_path, WIDE + "a,0.1,0.2,0.3,0.4\nb,0.1,0.2,0.3,0.4,9\nc,0.1,0.2,0.3,0.4\n")
    assert refused(path) == tables.RAGGED_ROW.format(
        source=str(path), line=3, found=6, header_line=1, expected=5
    )


def test_missing_field_is_refused_not_padded(tmp_path):
    path = write(tmp_path, WIDE + "a,0.1,0.2,0.3,0.4\nb,0.1,0.2,0.3\n")
    assert refused(path) == tables.RAGGED_ROW.format(
        source=str(path), line=3, found=4, header_line=1, expected=5
    )


@pytest.mark.parametrize(
    ("cells", "said"),
    [
        (["0.1", "x", "", "0.3"], "line 3: 'x' is not a number"),
        (["0.1", "", "x", "0.3"], "line 3: value is missing"),
        (["nan", "x", "0.2", "y"], "line 2: value is missing"),
        (["0.1", "x", "nan", "y"], "line 3: 'x' is not a number (and 1 more such cell(s))"),
    ],
    ids=["text, then blank", "blank, then text", "nan, then text", "text, then nan"],
)
def test_a_columns_first_fault_is_said_whichever_its_kind(tmp_path, cells, said):
    """Of a column's cells that are missing (blank, or spelling "nan") or no number, the
    first in the file is named, in a rates table and in a score table alike: a blank
    was named before an earlier cell of text."""
    line, reason = said.split(": ", 1)
    rows = "".join(
        f"{name},{cell},0.02,0.001,0.02\n" for name, cell in zip("abcd", cells, strict=True)
    )
    rates = write(tmp_path, WIDE + rows)
    assert refused(rates) == f"{rates}, {line}, column 'FMR.F': {reason}"
    rows = "".join(
        f"a,{cell},{m},F\n" for cell, m in zip(cells, ("True", "False") * 2, strict=True)
    )
    scores = write(tmp_path, "algorithm,score,mated,group\n" + rows, "scores.csv")
    said = refused(scores, ScoresError, read_scores)
    assert said == f"{scores}, {line}, column 'score': {reason}"


def test_quoted_duplicate_header_is_refused_with_its_name(tmp_path):
    path = write(tmp_path, '"FMR.F",Algorithm,FNMR.F,FMR.F,FMR.M,FNMR.M\n')
    assert refused(path) == tables.DUPLICATE_COLUMN.format(source=str(path), column="FMR.F")


def test_quoted_header_with_a_comma_is_read(tmp_path):
    path = write(
        tmp_path,
        'Algorithm,"FMR.F,x","FNMR.F,x",FMR.M,FNMR.M\na,0.1,0.2,0.3,0.4\nb,0.1,0.2,0.3,0.4\n',
    )
    table = read_rates(path, attributes=())
    assert table["group"].unique().tolist() == ["F,x", "M"]
    assert table["fnmr"].tolist() == [0.2, 0.4, 0.2, 0.4]


def test_line_numbers_survive_a_quoted_newline(tmp_path):
    path = write(tmp_path, WIDE + '"a\nb",0.1,0.2,0.3,0.4\n"c",0.1,x,0.3,0.4\n')
    assert refused(path) == rates.NOT_NUMERIC.format(
        where=f"{path}, line 4", column="FNMR.F", value="x", more=""
    )
    path = write(tmp_path, WIDE + '"a\nb",0.1,0.2,0.3,0.4\nc,0.1,0.2,0.3\n')
    assert refused(path) == tables.RAGGED_ROW.format(
        source=str(path), line=4, found=4, header_line=1, expected=5
    )


def test_a_name_with_a_quoted_newline_is_kept(tmp_path):
    path = write(tmp_path, WIDE + '"a\nb",0.1,0.2,0.3,0.4\nc,0.1,0.2,0.3,0.4\n')
    assert read_rates(path)["algorithm"].unique().tolist() == ["a\nb", "c"]


def test_unterminated_quote_names_the_line(tmp_path):
    path = write(tmp_path, WIDE + 'a,0.1,0.2,0.3,0.4\n"b,0.1,0.2,0.3,0.4\n')
    message = refused(path)
    assert message.startswith(f"{path}, line 3: cannot be read as CSV: ")


def test_dev_zero_stops_at_the_first_chunk():
    assert refused("/dev/zero") == tables.NUL_BYTE.format(source="/dev/zero", offset=0)


def test_size_limit_and_its_option(tmp_path):
    text = WIDE + "a,0.1,0.2,0.3,0.4\nb,0.1,0.2,0.3,0.4\n"
    path = write(tmp_path, text)
    assert refused(path, max_bytes=20) == tables.TOO_LARGE.format(source=str(path), limit=20)
    assert len(read_rates(path, max_bytes=len(text))) == 4
    with pytest.raises(ValueError) as caught:
        read_rates(path, max_bytes=0)
    assert str(caught.value) == REFUSED.format(
        name="max_bytes", expected="a whole number of at least 1", value=0
    )


def test_parquet_that_is_not_parquet(tmp_path):
    path = write(tmp_path, WIDE + "a,0.1,0.2,0.3,0.4\n", name="rates.parquet")
    assert refused(path) == tables.NOT_PARQUET.format(source=str(path))
    path = write(tmp_path, "PAR1 but not really", name="scores.parquet")
    message = refused(path, ScoresError, read_scores)
    assert message.startswith(f"{path}: cannot be read as Parquet: ")


# --------------------------------------------------------------------- values


@pytest.mark.parametrize(
    ("cell", "message", "extra"),
    [
        ("1e-400", tables.UNDERFLOW, {"read": 0.0}),
        ("-1e-320", tables.UNDERFLOW, {"read": -1e-320}),
        ("1e400", tables.OVERFLOW, {}),
    ],
)
def test_underflow_and_overflow_are_refused(tmp_path, cell, message, extra):
    path = write(tmp_path, WIDE + f"a,{cell},0.2,0.3,0.4\nb,0.1,0.2,0.3,0.4\n")
    assert refused(path) == message.format(
        where=f"{path}, line 2", column="FMR.F", value=cell, more="", **extra
    )


def test_zero_written_many_ways_is_zero(tmp_path):
    path = write(tmp_path, WIDE + "a,0e-400,0.000,-0,0.4\nb,0.1,0.2,0.3,0.4\n")
    assert read_rates(path)["fmr"].tolist()[:2] == [0.0, 0.0]


def test_booleans_from_a_dataframe_are_refused():
    frame = pd.DataFrame(
        {"Algorithm": ["a", "b"], "FMR.F": [True, False], "FNMR.F": [0.1, 0.1]}
        | {"FMR.M": [0.1, 0.1], "FNMR.M": [0.1, 0.1]}
    )
    assert refused(frame) == tables.BOOLEAN.format(
        where="<DataFrame>, row 0", column="FMR.F", value=True, more=" (and 1 more such cell(s))"
    )
    mixed = frame.assign(**{"FMR.F": pd.Series([0.1, True], dtype=object)})
    assert refused(mixed) == tables.BOOLEAN.format(
        where="<DataFrame>, row 1", column="FMR.F", value=True, more=""
    )


def test_booleans_from_parquet_are_refused(tmp_path):
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame(
        {"algorithm": ["a", "a"], "group": ["F", "M"], "fmr": [True, False], "fnmr": [0.1, 0.2]}
    )
    path = tmp_path / "rates.parquet"
    frame.to_parquet(path)
    assert refused(path) == tables.BOOLEAN.format(
        where=f"{path}, row 0", column="fmr", value=True, more=" (and 1 more such cell(s))"
    )


def test_a_named_index_of_a_parquet_file_is_read_as_the_column_it_is(tmp_path):
    """pandas writes a named index as a column of the Parquet file, and read it back as
    the index, which audit then dropped: a table whose algorithm column was the index was
    refused as lacking one, and a column of notes was left out without a word."""
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame(
        {"algorithm": ["a", "a", "b", "b"], "group": ["F", "M"] * 2}
        | {"fmr": [1e-3, 2e-3, 3e-3, 4e-3], "fnmr": [0.01, 0.02, 0.03, 0.04]}
    )
    path = tmp_path / "rates.parquet"
    frame.set_index("algorithm").to_parquet(path)
    pd.testing.assert_frame_equal(
        read_rates(path)[frame.columns], read_rates(frame)[frame.columns], check_dtype=False
    )
    frame.set_index(pd.Index(["n1", "n2", "n3", "n4"], name="notes")).to_parquet(path)
    assert refused(path).startswith(f"{path}: unknown column(s) ['notes']; expected algorithm")
    # an unnamed index is pandas' row numbers, not a column of the table
    frame.set_index(pd.Index([10, 11, 12, 13])).to_parquet(path)
    pd.testing.assert_frame_equal(read_rates(path), read_rates(frame), check_dtype=False)


def test_complex_numbers_are_refused():
    frame = pd.DataFrame(
        {"algorithm": ["a", "a"], "group": ["F", "M"], "fmr": [0.1 + 0.5j, 0.1], "fnmr": [0.1, 0.2]}
    )
    assert refused(frame) == tables.COMPLEX.format(
        where="<DataFrame>, row 0",
        column="fmr",
        value=0.1 + 0.5j,
        more=" (and 1 more such cell(s))",
    )


def test_score_booleans_and_underflow_are_refused(tmp_path):
    frame = pd.DataFrame(
        {"algorithm": ["a", "a"], "score": [True, False], "mated": [True, False], "group": "F"}
    )
    assert refused(frame, ScoresError, read_scores) == SR.BOOLEAN.format(
        where="<DataFrame>, row 0", column="score", value=True, more=" (and 1 more such cell(s))"
    )
    path = write(tmp_path, "algorithm,score,mated,group\na,1e-400,1,F\na,0.5,0,F\n", "s.csv")
    assert refused(path, ScoresError, read_scores) == SR.UNDERFLOW.format(
        where=f"{path}, line 2", column="score", value="1e-400", read=0.0, more=""
    )


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ("1e30", tables.COUNT_TOO_LARGE),
        ("9223372036854775808", tables.COUNT_TOO_LARGE),
        ("99999999999999999999999", tables.COUNT_TOO_LARGE),
        ("2.5", rates.BAD_COUNT),
        ("-3", rates.BAD_COUNT),
        ("1e-400", rates.BAD_COUNT),
        ("1_0", rates.BAD_COUNT),
        ("nan", rates.BAD_COUNT),
        ("True", rates.BAD_COUNT),
    ],
)
def test_counts_must_be_exact_int64(tmp_path, cell, message):
    path = write(tmp_path, LONG + f"a,F,0,0,{cell},10\na,M,0,0,10,10\n")
    assert refused(path) == message.format(
        where=f"{path}, line 2", column="n_mated", value=cell, more=""
    )


def test_the_command_line_names_its_own_option_for_a_rate_its_count_cannot_give(tmp_path, capsys):
    """The refusal of a rate no whole number of errors gives names --count-tolerance
    (the option that allows more), and that option lets the same file through."""
    from audit.cli import main

    path = write(tmp_path, LONG + "a,F,0.1,0.333,10,10\na,M,0.1,0.3,10,10\n")
    assert main(["check", str(path)]) == 3
    err = capsys.readouterr().err
    assert "or allow more with --count-tolerance <comparisons> (from Python, read_rates(" in err
    assert main(["check", str(path), "--count-tolerance", "0.5"]) == 0
    assert "count_tolerance" not in capsys.readouterr().err


def test_largest_int64_count_is_kept_exactly(tmp_path):
    path = write(tmp_path, LONG + "a,F,0,0,9223372036854775807,10\na,M,0,0,10,1.2e1\n")
    table = read_rates(path)
    assert table["n_mated"].tolist() == [9223372036854775807, 10]
    assert table["n_nonmated"].tolist() == [10, 12]


def test_zero_comparisons_refused_at_read_time(tmp_path):
    path = write(tmp_path, LONG + "a,F,0.1,0.1,10,10\na,M,0.1,0,0,10\n")
    assert refused(path) == rates.ZERO_COUNT.format(
        where=f"{path}, line 3", column="n_mated", kind="mated", rate="FNMR", more=""
    )


def test_rate_impossible_given_its_count(tmp_path):
    path = write(tmp_path, LONG + "a,F,0.1,0.333,10,10\na,M,0.1,0.3,10,10\n")
    assert refused(path) == rates.IMPOSSIBLE_RATE.format(
        where=f"{path}, line 2",
        column="fnmr",
        value="0.333",
        count_column="n_mated",
        count=10,
        product=3.33,
        kind="mated",
        rule=rates.AS_WRITTEN.format(tolerance=10 * 0.0005 * (1 + 1e-9) + 1e-9 * 3.33),
        more="",
    )
    # rounded as written: 1/3 of 10 printed to 4 decimals, 0.3333 * 10 = 3.333 +- 0.0005 * 10
    path = write(tmp_path, LONG + "a,F,0.1,0.3333,3,10\na,M,0.1,0.3,10,10\n")
    assert read_rates(path)["fnmr"].tolist() == [0.3333, 0.3]
    path = write(tmp_path, LONG + "a,F,0.1,0.333,10,10\na,M,0.1,0.3,10,10\n")
    assert read_rates(path, count_tolerance=0.5)["fnmr"].tolist() == [0.333, 0.3]
    assert refused(path, count_tolerance=0.1) == rates.IMPOSSIBLE_RATE.format(
        where=f"{path}, line 2",
        column="fnmr",
        value="0.333",
        count_column="n_mated",
        count=10,
        product=3.33,
        kind="mated",
        rule=rates.GIVEN_TOLERANCE.format(tolerance=0.1),
        more="",
    )
    with pytest.raises(ValueError) as caught:
        read_rates(path, count_tolerance=float("nan"))
    assert str(caught.value) == REFUSED.format(
        name="count_tolerance", expected="a number of at least 0 or inf or none", value=float("nan")
    )


def test_attribute_column_contradicting_the_group(tmp_path):
    path = write(
        tmp_path,
        "algorithm,group,gender,fmr,fnmr\na,F,F,0.1,0.1\na,M,M,0.1,0.1\n"
        "b,F,F,0.1,0.1\nb,M,F,0.1,0.1\n",
    )
    assert refused(path) == rates.ATTRIBUTE_CONTRADICTS_GROUP.format(
        where=f"{path}, line 5",
        column="gender",
        value="F",
        group="M",
        expected="M",
        first=f"{path}, line 3",
    )
    path = write(tmp_path, "algorithm,group,gender,fmr,fnmr\na,F,F,0.1,0.1\na,W,F,0.1,0.1\n")
    assert refused(path) == rates.GROUPS_SHARE_ATTRIBUTES.format(
        where=f"{path}, line 3",
        group="W",
        values={"gender": "F"},
        other="F",
        first=f"{path}, line 2",
    )


# --------------------------------------------------------------------- counts files


def test_counts_file_refuses_huge_and_boolean_counts(tmp_path):
    algorithms, groups = pd.Index(["a"]), pd.Index(["F", "M"])
    path = write(tmp_path, "group,n_mated\nF,10\nM,9223372036854775808\n", "counts.csv")
    with pytest.raises(WeightsError) as caught:
        read_counts(path, algorithms, groups)
    assert str(caught.value) == accuracy.COUNTS_TOO_LARGE.format(
        where=f"{path}, line 3", column="n_mated", value="9223372036854775808", more=""
    )
    frame = pd.DataFrame({"group": ["F", "M"], "n_mated": [True, 3]})
    with pytest.raises(WeightsError) as caught:
        read_counts(frame, algorithms, groups)
    assert str(caught.value) == accuracy.COUNTS_BOOLEAN.format(
        where="<DataFrame>, row 0", column="n_mated", value=True, more=""
    )
    path = write(tmp_path, "group,n_mated\nF,10\nM,10,11\n", "ragged.csv")
    with pytest.raises(WeightsError) as caught:
        read_counts(path, algorithms, groups)
    assert str(caught.value) == tables.RAGGED_ROW.format(
        source=str(path), line=3, found=3, header_line=1, expected=2
    )


# --------------------------------------------------------------------- scale guards


def test_ffmc_search_grows_linearly_with_the_groups():
    rng = np.random.default_rng(0)
    sizes = {}
    for n_groups in (16, 100, 1000):
        real = rng.uniform(0, 1, (3, n_groups))
        families = _search_space(real, real, seed=0, n_random=10)
        structured = families[0][1]
        sizes[n_groups] = len(structured)
    assert sizes[100] == sizes[1000]  # cases do not grow with the groups, only their width
    assert sizes[16] == 127**2  # every k of 16, as before the bound: 127 distinct vectors
    assert sizes[1000] == 134**2  # 16 patterns of k, whatever the number of groups


def test_frontier_of_many_points_does_not_build_a_matrix():
    rng = np.random.default_rng(0)
    points = rng.uniform(0, 1, (200_000, 2))
    mask = efficient(points, higher_is_better=[False, False])
    order = np.argsort(points[:, 0])
    best = np.minimum.accumulate(points[order, 1])
    expected = np.zeros(len(points), bool)
    expected[order] = points[order, 1] <= best  # distinct values: strictly the running best
    np.testing.assert_array_equal(mask, expected)


def test_frontier_of_three_criteria_is_bounded():
    points = np.zeros((5000, 3))
    with pytest.raises(ValueError) as caught:
        efficient(points, higher_is_better=[False] * 3)
    assert str(caught.value) == TOO_MANY_PAIRS.format(
        shape=(5000, 3), pairs=25_000_000, limit=MAX_PAIRS, k=3, rtol=0.0
    )


def _pairwise(points, directions, weak, rtol, atol):
    """The frontier by its definition: every pair compared (a literal oracle)."""
    p = np.where(directions, -np.asarray(points, float), np.asarray(points, float))
    n = len(p)
    keep = np.ones(n, bool)
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            tied = [
                p[j, c] == p[i, c]
                or (
                    (rtol or atol)
                    and abs(p[j, c] - p[i, c]) <= atol + rtol * max(abs(p[j, c]), abs(p[i, c]))
                )
                for c in range(p.shape[1])
            ]
            better = [p[j, c] < p[i, c] and not tied[c] for c in range(p.shape[1])]
            if weak and all(better):
                keep[i] = False
            if not weak and all(b or t for b, t in zip(better, tied, strict=True)) and any(better):
                keep[i] = False
    return keep


@settings(max_examples=300, deadline=None)
@given(
    points=st.lists(
        st.tuples(
            st.sampled_from([0.0, 1e-4, 1e-4 * (1 + 1e-12), 2e-4, 0.5, 1.0, -1.0]),
            st.sampled_from([0.0, 1e-4, 1e-4 * (1 + 5e-10), 3e-4, 0.5, 1.0, 2.0]),
        ),
        min_size=1,
        max_size=12,
    ),
    directions=st.tuples(st.booleans(), st.booleans()),
    weak=st.booleans(),
    tolerance=st.sampled_from([(0.0, 0.0), (1e-9, 0.0), (0.0, 1e-4), (0.3, 0.0)]),
)
def test_sweep_frontier_equals_the_pairwise_definition(points, directions, weak, tolerance):
    rtol, atol = tolerance
    got = efficient(points, higher_is_better=list(directions), weak=weak, rtol=rtol, atol=atol)
    np.testing.assert_array_equal(got, _pairwise(points, directions, weak, rtol, atol))


# --------------------------------------------------------------------- round trips

# a blank label is refused by design, and so are two spellings of one label (case, white
# space: audit.tables.labels); a label with white space at an edge is read with a warning
# (each tested apart): the round trip draws labels that are none of these
labels = st.text(
    alphabet=string.ascii_letters + string.digits + ' ,"\n-_<>&', min_size=1, max_size=8
).filter(lambda text: text.strip() == text and text != "")
rate = st.one_of(
    st.sampled_from([0.0, 1.0, 1e-300, 0.1, 1 / 3]),
    st.floats(min_value=0.0, max_value=1.0, allow_subnormal=False),
)


@st.composite
def long_tables(draw):
    algorithms = draw(st.lists(labels, min_size=1, max_size=4, unique_by=label_key))
    groups = draw(st.lists(labels, min_size=2, max_size=4, unique_by=label_key))
    n = len(algorithms) * len(groups)
    return pd.DataFrame(
        {
            "algorithm": np.repeat(algorithms, len(groups)).astype(object),
            "group": np.tile(groups, len(algorithms)).astype(object),
            "fmr": draw(st.lists(rate, min_size=n, max_size=n)),
            "fnmr": draw(st.lists(rate, min_size=n, max_size=n)),
        }
    )


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(frame=long_tables())
def test_any_valid_table_reads_back_identical_from_csv_and_parquet(tmp_path, frame):
    expected = read_rates(frame)
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    pd.testing.assert_frame_equal(read_rates(path), expected, check_like=False, check_exact=True)
    pytest.importorskip("pyarrow")
    parquet = tmp_path / "t.parquet"
    frame.to_parquet(parquet)
    pd.testing.assert_frame_equal(read_rates(parquet), expected, check_exact=True)
    assert expected["fmr"].tolist() == frame["fmr"].tolist()
    assert expected["algorithm"].tolist() == frame["algorithm"].tolist()


CORRUPTIONS = ["", "x", "1e-400", "1e400", "-0.5", "nan", "1.5", '"', "0.1,0.2", "True"]


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    frame=long_tables(),
    row=st.integers(min_value=0),
    column=st.sampled_from(["fmr", "fnmr"]),
    corruption=st.sampled_from(CORRUPTIONS),
)
def test_a_single_corrupted_cell_is_refused_never_changed(tmp_path, frame, row, column, corruption):
    row %= len(frame)
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    lines = path.read_text().split("\n")
    corrupted = frame.astype({column: object})
    corrupted.loc[row, column] = "@@CELL@@"
    corrupted.to_csv(path, index=False)
    text = path.read_text().replace("@@CELL@@", corruption)
    path.write_text(text)
    del lines
    with pytest.raises(RatesError):
        read_rates(path)


def _frame_scores(score):
    return pd.DataFrame(
        {"score": [0.9, score], "mated": [True, False], "group": ["F", "F"], "algorithm": "a"}
    )


@pytest.mark.parametrize(
    ("read", "said"),
    [
        (
            lambda: read_rates(pd.DataFrame({"Algorithm": ["a"], "FMR.F": [5e-4], "FMR.M": [1.5]})),
            "<DataFrame>, row 0, column 'FMR.M': 1.5 lies outside [0, 1]",
        ),
        (
            lambda: read_rates(
                pd.DataFrame({"Algorithm": ["a"], "FMR.F": [500.0], "FMR.M": [3.0]}),
                units="percent",
            ),
            "<DataFrame>, row 0, column 'FMR.F': 500.0 lies outside [0, 100]",
        ),
        (lambda: read_scores(_frame_scores(np.inf)), "inf"),
        (
            lambda: accuracy.read_counts(
                pd.DataFrame({"group": ["F", "M"], "n_mated": [10.0, -2.0]}),
                pd.Index(["a"]),
                pd.Index(["F", "M"]),
            ),
            "-2.0",
        ),
    ],
    ids=["rate", "percent", "score", "count"],
)
def test_a_cell_of_a_dataframe_is_quoted_as_its_number(read, said):
    """A cell of a DataFrame (not a file's text) was quoted as NumPy writes it since
    NumPy 2: "column 'FMR.F': np.float64(5.0) lies outside [0, 1]"."""
    with pytest.raises((RatesError, ScoresError, WeightsError)) as refused:
        read()
    assert said in str(refused.value) and "np." not in str(refused.value)


def test_pandas_row_numbers_in_a_parquet_score_file_are_not_a_column(tmp_path):
    """pandas stores a frame's row numbers as ``__index_level_0__`` where they are not
    0, 1, 2... (a filtered frame, ``to_parquet(index=True)``): the score readers, whole,
    checked and streamed, refused that column as unknown, where ``pd.read_parquet`` (and
    the rates reader) make it the index again. A named index is a column of the file."""
    from audit.scores import rates_at_fmr
    from audit.scores.streaming import StreamingScores

    rng = np.random.default_rng(5)
    frame = pd.DataFrame(
        {"algorithm": rng.choice(["a", "b"], 600), "score": rng.normal(size=600)}
        | {"mated": rng.random(600) < 0.3, "group": rng.choice(["F", "M"], 600)}
    )
    kept = frame[frame["score"] > -1.5]  # row numbers with gaps
    (tmp_path / "run").mkdir()
    kept.iloc[:200].to_parquet(tmp_path / "run" / "a.parquet", index=True)
    kept.iloc[200:].to_parquet(tmp_path / "run" / "b.parquet")  # the other without them
    path = tmp_path / "run" / "a.parquet"
    import pyarrow.parquet as pq

    assert "__index_level_0__" in pq.read_schema(path).names
    assert SR.check_columns(path) == ["algorithm", "score", "mated", "group"]
    whole = read_scores(tmp_path / "run")
    expected = read_scores(kept.reset_index(drop=True))
    pd.testing.assert_frame_equal(whole, expected)
    streamed = StreamingScores(str(tmp_path / "run")).rates_at_fmr(0.05)
    pd.testing.assert_frame_equal(streamed, rates_at_fmr(expected, 0.05), check_dtype=False)
    # a named index is the column it is in the file: here, an unknown one
    kept.rename_axis("row").to_parquet(path)  # (its gaps keep it a column, not a range)
    with pytest.raises(ScoresError) as refused_:
        read_scores(path)
    assert str(refused_.value) == SR.UNKNOWN_COLUMNS.format(source=str(path), columns=["row"])
    # pandas' metadata not as pandas writes it: no column is taken for its row numbers
    import pyarrow as pa

    table = pa.Table.from_pandas(kept, preserve_index=True)
    for metadata in (b"not JSON", b"[1]", b'{"index_columns": 5, "columns": [1]}'):
        pq.write_table(table.replace_schema_metadata({b"pandas": metadata}), path)
        with pytest.raises(ScoresError) as refused_:
            read_scores(path)
        assert str(refused_.value) == SR.UNKNOWN_COLUMNS.format(
            source=str(path), columns=["__index_level_0__"]
        )


@pytest.mark.parametrize(
    ("kind", "ignore", "column", "hint"),
    [
        ("wide", ["Algorithm"], "Algorithm", " (the wide layout names each algorithm in it)"),
        ("wide", ["FMR.F"], "FMR.F", " (group 'F' has an FNMR column)"),
        ("long", ["algorithm"], "algorithm", ""),
        ("scores", ["score"], "score", ""),
        ("scores", ["subject_2"], "subject_2", " (subjects are given for both sides)"),
    ],
)
def test_a_column_ignore_leaves_out_and_the_table_needs_is_refused_as_the_option(
    kind, ignore, column, hint
):
    """``--ignore-columns Algorithm`` was refused as the file's fault ("column 'Algorithm'
    is missing", status 3); the scores reader read a column ``ignore`` named anyway. The
    option is at fault, and is named (a ParameterError: status 2 on the command line)."""
    from audit.exceptions import ParameterError

    frames = {
        "wide": pd.DataFrame(
            {"Algorithm": ["a"], "FMR.F": [1e-3], "FNMR.F": [0.01], "FMR.M": [2e-3]}
            | {"FNMR.M": [0.02]}
        ),
        "long": pd.DataFrame({"algorithm": ["a"], "group": ["F"], "fmr": [1e-3]}),
        "scores": pd.DataFrame(
            {"algorithm": ["a", "a"], "score": [0.9, 0.1], "mated": [True, False]}
            | {"group": ["F", "F"], "subject_1": ["s", "s"], "subject_2": ["s", "t"]}
        ),
    }
    read = read_scores if kind == "scores" else read_rates
    with pytest.raises(ParameterError) as refused_:
        read(frames[kind], ignore=ignore)
    assert str(refused_.value) == tables.IGNORED_NEEDED.format(
        source="<DataFrame>", column=column, hint=hint
    )
    if kind == "scores":  # both sides of the subjects left out: a table without them
        table = read(frames[kind], ignore=["subject_1", "subject_2"])
        assert "subject_1" not in table.columns and len(table) == 2


def test_a_rate_written_minus_zero_is_zero(tmp_path):
    """``-0`` is a legal rate, 0; it was kept as -0.0 and shown as "-0" (``audit check``:
    "fmr: min -0")."""
    path = tmp_path / "v.csv"
    path.write_text("algorithm,group,fmr,fnmr\na,X,0.001,-0\na,Y,-0.0e0,0.02\n")
    table = read_rates(path)
    assert list(table["fmr"]) == [0.001, 0.0] and list(table["fnmr"]) == [0.0, 0.02]
    assert not np.signbit(table[["fmr", "fnmr"]].to_numpy()).any()
    assert f"{table['fmr'].min():.3g}" == "0"
    # and so is an accuracy, and a weight alpha, written so ("GARBE (alpha=-0)")
    from audit.tables.accuracy import read_accuracy
    from audit.validation import check, parse

    accuracy = pd.DataFrame({"algorithm": ["a", "b", "c"], "acc": ["-0", "-0.0e0", "0.1"]})
    zeros = [*read_accuracy(accuracy, "acc")[:2], parse("alpha", "-0.0"), check("alpha", -0.0)]
    zeros += list(check("alpha", np.array([-0.0, 0.5])))[:1] + [check("count_tolerance", -0.0)]
    assert zeros == [0.0] * 6 and not np.signbit(zeros).any()


def test_a_column_a_hive_partition_gives_is_refused_as_such(tmp_path):
    """A folder written partitioned (``group=F/``, ``group=M/``) has no group column in
    its files: it was refused as lacking one, which the user sees in its folder names.
    It is refused as a partition audit does not read; a folder named so for a column
    audit does not need (``run=3``) is only a name."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(2)
    frame = pd.DataFrame(
        {"algorithm": rng.choice(["a", "b"], 400), "score": rng.normal(size=400)}
        | {"mated": rng.random(400) < 0.3, "group": rng.choice(["F", "M"], 400)}
    )
    folder = tmp_path / "parts"
    pq.write_to_dataset(pa.Table.from_pandas(frame), folder, partition_cols=["group"])
    first = sorted(str(p) for p in folder.rglob("*.parquet"))[0]
    said = SR.PARTITIONED.format(source=first, column="group", folder="group=F")
    for source, read in ((folder, read_scores), (first, SR.check_columns)):
        with pytest.raises(ScoresError) as refused_:
            read(source)
        assert str(refused_.value) == said
    (tmp_path / "run=3").mkdir()
    frame.to_parquet(tmp_path / "run=3" / "s.parquet")
    pd.testing.assert_frame_equal(read_scores(tmp_path / "run=3"), read_scores(frame))


def test_scores_read_with_no_attributes_are_refused_as_that_option():
    """``audit scores --attributes ''`` read the scores with no group column at all and
    refused the file's ``group`` column as unknown (status 3): an empty list of attribute
    columns is refused as the parameter's fault, whole or streamed."""
    from audit.exceptions import ParameterError
    from audit.scores.streaming import StreamingScores

    frame = pd.DataFrame(
        {"algorithm": ["a"] * 4, "score": [0.9, 0.8, 0.1, 0.2], "mated": [True, True, False, False]}
        | {"group": ["F", "M", "F", "M"]}
    )
    said = (
        "parameter attributes: expected a non-empty list of the attribute columns or none, got []"
    )
    for read in (read_scores, lambda f, **k: StreamingScores(f, **k).rates_at_fmr(0.5)):
        with pytest.raises(ParameterError) as refused_:
            read(frame, attributes=[])
        assert str(refused_.value) == said


def test_files_of_a_folder_differing_by_an_ignored_column_only_are_read(tmp_path):
    """A folder whose files differ only by a column ``ignore`` leaves out (one file holds
    notes) was refused as chunks of different columns, whatever ``ignore`` said; each
    ignored column is then in one file at least."""
    from audit.scores import rates_at_fmr
    from audit.scores.streaming import StreamingScores
    from audit.tables.chunks import COLUMNS_DIFFER

    rng = np.random.default_rng(6)
    frame = pd.DataFrame(
        {"algorithm": rng.choice(["a", "b"], 400), "score": rng.normal(size=400)}
        | {"mated": rng.random(400) < 0.3, "group": rng.choice(["F", "M"], 400)}
    )
    folder = tmp_path / "run"
    folder.mkdir()
    frame.iloc[:150].assign(notes="n").to_parquet(folder / "p1.parquet")
    frame.iloc[150:].reset_index(drop=True).to_parquet(folder / "p2.parquet")
    expected = read_scores(frame)
    pd.testing.assert_frame_equal(read_scores(folder, ignore=["notes"]), expected)
    streamed = StreamingScores(str(folder), ignore=["notes"]).rates_at_fmr(0.05)
    pd.testing.assert_frame_equal(streamed, rates_at_fmr(expected, 0.05), check_dtype=False)
    with pytest.raises(ScoresError) as refused_:
        read_scores(folder, ignore=["notes", "nope"])
    assert str(refused_.value) == SR.IGNORED_MISSING.format(
        source=str(folder), column="nope", columns=[*frame.columns, "notes"]
    )
    with pytest.raises(ScoresError) as refused_:
        read_scores(folder)
    assert str(refused_.value) == COLUMNS_DIFFER.format(
        source=folder / "p2.parquet",
        columns=sorted(frame.columns),
        first=folder / "p1.parquet",
        expected=sorted([*frame.columns, "notes"]),
    )
