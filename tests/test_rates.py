"""read_rates: both layouts give one tidy table, and every malformed input is refused
with a message naming the file, the row and the column."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit.tables import common as tables
from audit.tables import rates
from audit.tables.rates import RatesError, rate_matrices, read_rates

WIDE_HEADER = "Algorithm,FNMR.F.Black,FMR.F.Black,FNMR.M.White,FMR.M.White"


def write(tmp_path, text, name="rates.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def refused(source, **kwargs) -> str:
    with pytest.raises(RatesError) as error:
        read_rates(source, **kwargs)
    return str(error.value)


def test_annex15_tidy_table(annex15, annex15_file):
    assert list(annex15.columns) == ["algorithm", "gender", "race", "group", "fmr", "fnmr"]
    assert len(annex15) == 1008
    assert annex15["fmr"].dtype == "float64" and annex15["algorithm"].dtype == "string"
    raw = pd.read_csv(annex15_file)
    # order of algorithms and groups is the file's, and the numbers are untouched
    assert list(pd.unique(annex15["algorithm"])) == list(raw["Algorithm"])
    assert list(pd.unique(annex15["group"]))[:2] == ["F.AmIndian", "F.Asian"]
    first = annex15[annex15["algorithm"] == "didiglobalface-001"].set_index("group")
    assert first.loc["F.AmIndian", "fmr"] == 0.000501187233627273
    assert first.loc["M.White", "fnmr"] == 0.0036
    assert annex15.attrs["source"] == str(annex15_file)


def test_wide_and_long_give_identical_tables(annex15, tmp_path):
    long_path = tmp_path / "long.csv"
    annex15.to_csv(long_path, index=False, float_format="%.17g")
    again = read_rates(long_path)
    pd.testing.assert_frame_equal(again.drop(columns=[]), annex15, check_like=False)
    # and from a DataFrame
    frame = pd.read_csv(long_path)
    pd.testing.assert_frame_equal(read_rates(frame), annex15)


def test_long_layout_with_counts_and_any_groups(tmp_path):
    path = write(
        tmp_path,
        (
            "algorithm,group,fmr,fnmr,n_mated,n_nonmated\n"
            "sys1,India,0.001,0.05,100,20000\n"
            "sys1,USA,0.002,0.04,300,50000\n"
            "sys1,UK,0.0005,0.06,200,40000\n"
            "sys2,India,0.003,0.02,100,20000\n"
            "sys2,USA,0.001,0.03,300,50000\n"
            "sys2,UK,0.002,0.01,200,40000\n"
        ),
    )
    table = read_rates(path)
    assert list(table.columns) == ["algorithm", "group", "fmr", "fnmr", "n_mated", "n_nonmated"]
    assert table["n_mated"].dtype == "int64"
    algorithms, groups, fmr, fnmr = rate_matrices(table)
    assert list(algorithms) == ["sys1", "sys2"] and list(groups) == ["India", "USA", "UK"]
    assert fnmr[1].tolist() == [0.02, 0.03, 0.01]


def _pivoted(table, column, algorithms, groups):
    """group_matrix's oracle: pandas' pivot, reindexed to the given orders."""
    pivot = table.pivot(index="algorithm", columns="group", values=column)
    return pivot.reindex(index=algorithms, columns=groups).to_numpy(dtype="float64")


def test_group_matrix_is_the_pivot_in_any_order_of_rows_and_labels(annex15):
    rng = np.random.default_rng(7)
    shuffled = annex15.iloc[rng.permutation(len(annex15))].copy()
    shuffled["n_mated"] = rng.integers(1, 10_000, len(shuffled))
    algorithms = pd.Index(rng.permutation(pd.unique(annex15["algorithm"])))
    groups = pd.Index(rng.permutation(pd.unique(annex15["group"])))
    for column in ("fmr", "fnmr", "n_mated"):
        got = rates.group_matrix(shuffled, column, algorithms, groups)
        assert got.dtype == np.float64 and got.shape == (126, 8)
        assert np.array_equal(got, _pivoted(shuffled, column, algorithms, groups))
    # cells the table lacks stay NaN, rows of labels not asked for are left out
    part = shuffled.iloc[:700]
    got = rates.group_matrix(part, "fmr", algorithms[:100], groups)
    assert np.isnan(got).sum() == 100 * 8 - part["algorithm"].isin(algorithms[:100]).sum()
    assert np.array_equal(got, _pivoted(part, "fmr", algorithms[:100], groups), equal_nan=True)
    assert np.isnan(rates.group_matrix(part, "n_nonmated", algorithms, groups)).all()


def test_group_matrix_refuses_two_values_for_one_cell(annex15):
    twice = pd.concat([annex15, annex15.iloc[[5]]])
    algorithms, groups = (
        pd.Index(pd.unique(twice["algorithm"])),
        pd.Index(pd.unique(twice["group"])),
    )
    with pytest.raises(ValueError, match="two rows of the table give fnmr"):
        rates.group_matrix(twice, "fnmr", algorithms, groups)


def test_long_layout_attributes_make_the_group(tmp_path):
    path = write(
        tmp_path,
        (
            "algorithm,gender,age,fmr,fnmr\n"
            "a,F,young,0.001,0.05\na,F,old,0.002,0.04\na,M,young,0.001,0.03\na,M,old,0.001,0.02\n"
        ),
    )
    table = read_rates(path, attributes=["gender", "age"])
    assert table["group"].tolist() == ["F.young", "F.old", "M.young", "M.old"]


def test_wide_layout_any_number_of_groups(tmp_path):
    path = write(
        tmp_path,
        "Algorithm,FMR.a,FNMR.a,FMR.b,FNMR.b,FMR.c,FNMR.c\nx,0.001,0.2,0.001,0.3,0.002,0.2\n",
    )
    table = read_rates(path)
    assert list(table.columns) == ["algorithm", "group", "fmr", "fnmr"]
    assert table["group"].tolist() == ["a", "b", "c"]


# --- every refusal, with its exact message ------------------------------------------


def test_missing_algorithm_column(tmp_path):
    path = write(tmp_path, "FMR.F,FNMR.F,FMR.M,FNMR.M\n0.1,0.1,0.1,0.1\n")
    assert refused(path) == rates.MISSING_COLUMN.format(
        source=str(path), column="Algorithm", hint=" (the wide layout names each algorithm in it)"
    )


def test_wide_missing_partner_column(tmp_path):
    path = write(tmp_path, "Algorithm,FMR.F,FNMR.F,FMR.M\nx,0.1,0.1,0.1\n")
    assert refused(path) == rates.MISSING_COLUMN.format(
        source=str(path), column="FNMR.M", hint=" (group 'M' has an FMR column)"
    )


def test_wide_unknown_column(tmp_path):
    path = write(tmp_path, "Algorithm,FMR.F,FNMR.F,FMR.M,FNMR.M,Notes\nx,0.1,0.1,0.1,0.1,hi\n")
    assert refused(path) == rates.UNKNOWN_COLUMNS.format(
        source=str(path),
        columns=["Notes"],
        expected="Algorithm, FMR.<group>, FNMR.<group>",
        hint="",
    )


def test_long_missing_and_unknown_columns(tmp_path):
    path = write(tmp_path, "algorithm,group\na,F\n")  # one rate is enough (one-sided), none is not
    assert refused(path) == rates.MISSING_COLUMN.format(
        source=str(path), column="fmr", hint=" (and 'fnmr': give one or both)"
    )
    path = write(tmp_path, "algorithm,group,fmr,fnmr,site\na,F,0.1,0.1,x\n")
    assert refused(path) == rates.UNKNOWN_COLUMNS.format(
        source=str(path),
        columns=["site"],
        expected="algorithm, group and/or attribute columns, fmr, fnmr, n_mated, n_nonmated",
        hint="; attribute columns other than gender and race are named with "
        "attributes=[...] (command line --attributes)",
    )


def test_unknown_layout(tmp_path):
    path = write(tmp_path, "name,score\na,1\n")
    assert refused(path) == rates.UNKNOWN_LAYOUT.format(source=str(path), columns=["name", "score"])


def test_non_numeric_value_names_line_and_column(annex15_file, tmp_path):
    lines = annex15_file.read_text().splitlines()
    cells = lines[5].split(",")
    cells[3] = "0.0O52"  # a letter O typed for a zero, line 6 of the file
    lines[5] = ",".join(cells)
    path = write(tmp_path, "\n".join(lines) + "\n")
    column = lines[0].split(",")[3]
    assert refused(path) == rates.NOT_NUMERIC.format(
        where=f"{path}, line 6", column=column, value="0.0O52", more=""
    )


def test_rate_out_of_range(tmp_path):
    path = write(tmp_path, WIDE_HEADER + "\na,0.1,0.001,0.2,0.002\nb,1.5,0.001,0.2,-0.002\n")
    assert refused(path) == rates.OUT_OF_RANGE.format(
        where=f"{path}, line 3", column="FNMR.F.Black", value="1.5", more=""
    )


@pytest.mark.parametrize("cell", ["", "NaN", "nan", "NA"])
def test_missing_values(tmp_path, cell):
    path = write(tmp_path, WIDE_HEADER + f"\na,0.1,0.001,0.2,0.002\nb,0.1,{cell},0.2,0.002\n")
    assert refused(path) == rates.MISSING_VALUE.format(
        where=f"{path}, line 3", column="FMR.F.Black", more=""
    )


def test_a_blank_and_a_spelled_nan_are_counted_together_as_missing(tmp_path):
    """A blank cell and a cell spelling NaN are both missing: one message counting both,
    not the blank alone ("value is missing" with no more, where a "nan" followed)."""
    rows = "\na,0.1,,0.2,0.002\nb,0.1,nan,0.2,0.002\nc,0.1,NA,0.2,0.002\n"
    path = write(tmp_path, WIDE_HEADER + rows)
    assert refused(path) == rates.MISSING_VALUE.format(
        where=f"{path}, line 2", column="FMR.F.Black", more=" (and 2 more such cell(s))"
    )


def test_infinite_rate(tmp_path):
    path = write(tmp_path, WIDE_HEADER + "\na,0.1,inf,0.2,0.002\n")
    assert refused(path) == rates.OUT_OF_RANGE.format(
        where=f"{path}, line 2", column="FMR.F.Black", value="inf", more=""
    )


def test_more_than_one_bad_cell_is_counted(tmp_path):
    path = write(
        tmp_path, WIDE_HEADER + "\na,x,0.001,0.2,0.002\nb,y,0.001,0.2,0.002\nc,z,0.1,0.1,0.1\n"
    )
    assert refused(path) == rates.NOT_NUMERIC.format(
        where=f"{path}, line 2", column="FNMR.F.Black", value="x", more=" (and 2 more such cell(s))"
    )


def test_duplicate_algorithm_wide(tmp_path):
    path = write(
        tmp_path,
        WIDE_HEADER + "\na,0.1,0.001,0.2,0.002\nb,0.1,0.001,0.2,0.002\na,0.1,0.001,0.2,0.002\n",
    )
    assert refused(path) == rates.DUPLICATE_ROW.format(
        where=f"{path}, line 4", algorithm="a", group="F.Black", first=f"(first at {path}, line 2)"
    )


def test_duplicate_column(tmp_path):
    path = write(tmp_path, WIDE_HEADER + ",FMR.M.White\na,0.1,0.001,0.2,0.002,0.003\n")
    assert refused(path) == rates.DUPLICATE_COLUMN.format(source=str(path), column="FMR.M.White")


def test_duplicate_algorithm_group_long(tmp_path):
    path = write(tmp_path, "algorithm,group,fmr,fnmr\na,F,0.1,0.1\na,M,0.1,0.1\na,F,0.2,0.2\n")
    assert refused(path) == rates.DUPLICATE_ROW.format(
        where=f"{path}, line 4", algorithm="a", group="F", first=f"(first at {path}, line 2)"
    )


def test_algorithm_missing_a_group(tmp_path):
    path = write(tmp_path, "algorithm,group,fmr,fnmr\na,F,0.1,0.1\na,M,0.1,0.1\nb,F,0.2,0.2\n")
    assert refused(path) == rates.MISSING_GROUPS.format(
        source=str(path), algorithm="b", groups=["M"], where=f"{path}, line 4"
    )


def test_empty_algorithm_name(tmp_path):
    path = write(tmp_path, WIDE_HEADER + "\n,0.1,0.001,0.2,0.002\n")
    assert refused(path) == rates.EMPTY_LABEL.format(
        where=f"{path}, line 2", column="Algorithm", more=""
    )


def test_bad_count(tmp_path):
    path = write(tmp_path, "algorithm,group,fmr,fnmr,n_mated\na,F,0.1,0.1,10\na,M,0.1,0.1,2.5\n")
    assert refused(path) == rates.BAD_COUNT.format(
        where=f"{path}, line 3", column="n_mated", value="2.5", more=""
    )


def test_empty_table(tmp_path):
    path = write(tmp_path, WIDE_HEADER + "\n")
    assert refused(path) == rates.EMPTY.format(source=str(path))


def test_wrong_number_of_attributes(tmp_path):
    path = write(tmp_path, "Algorithm,FMR.F.Black,FNMR.F.Black,FMR.M,FNMR.M\na,0.1,0.1,0.1,0.1\n")
    assert refused(path) == rates.WRONG_ATTRIBUTE_COUNT.format(
        source=str(path), column="FMR.M", found=1, expected=2, attributes=["gender", "race"]
    )


def test_an_attribute_named_twice_is_refused(tmp_path, annex15_file):
    """``attributes=["gender", "gender"]`` was read: the second part of each group's name
    overwrote the first, and the gender column held the races. Refused, as a measure
    named twice is, by every reader of attributes and by the command line."""
    from audit.cli import main
    from audit.exceptions import ParameterError
    from audit.scores import read_scores
    from audit.scores.streaming import StreamingScores

    said = "parameter attributes: expected a list of distinct names or none"
    with pytest.raises(ParameterError, match=f"{said}.*'gender' is named twice"):
        read_rates(annex15_file, attributes=["gender", "gender"])
    assert read_rates(annex15_file, attributes=["gender", "race"])["gender"].unique().tolist() == [
        "F",
        "M",
    ]
    scores = pd.DataFrame(
        {"algorithm": "a", "score": [0.9, 0.1], "mated": [True, False], "group": ["F", "F"]}
    )
    for reader in (read_scores, StreamingScores):
        with pytest.raises(ParameterError, match=f"{said}.*'group' is named twice"):
            reader(scores, attributes="group,group")
    assert main(["check", str(annex15_file), "--attributes", "gender,gender"]) == 2


@pytest.mark.parametrize("names", [["fmr", "fnmr"], ["gender", "group"], ["n_mated", "race"]])
def test_an_attribute_named_as_a_column_of_the_table_is_refused(annex15_file, names):
    """``attributes=["fmr", "fnmr"]`` was read, both attributes lost under the rates of the
    same names; ``["gender", "group"]`` overwrote the group; ``["n_mated", "race"]`` made
    the count measures computable, then failed in a notebook."""
    from audit.exceptions import ParameterError

    taken = next(n for n in names if n in rates.TABLE_COLUMNS)
    with pytest.raises(ParameterError) as error:
        read_rates(annex15_file, attributes=names)
    assert str(error.value) == rates.ATTRIBUTE_TAKEN.format(
        name=taken, columns=list(rates.TABLE_COLUMNS)
    )


def test_unreadable_file(tmp_path):
    path = tmp_path / "absent.csv"
    message = refused(path)
    assert message.startswith(f"{path}: cannot be read as CSV: ")


def test_dataframe_errors_name_the_index_label():
    frame = pd.DataFrame(
        {"algorithm": ["a", "a"], "group": ["F", "M"], "fmr": [0.1, np.nan], "fnmr": [0.1, 0.2]},
        index=[10, 11],
    )
    assert refused(frame) == rates.MISSING_VALUE.format(
        where="<DataFrame>, row 11", column="fmr", more=""
    )


def test_input_frame_is_not_altered():
    frame = pd.DataFrame(
        {"algorithm": ["a", "a"], "group": ["F", "M"], "fmr": [0.1, 0.2], "fnmr": [0.1, 0.2]}
    )
    before = frame.copy()
    read_rates(frame)
    pd.testing.assert_frame_equal(frame, before)


def test_empty_file(tmp_path):
    path = write(tmp_path, "")
    assert refused(path) == tables.NO_HEADER.format(source=str(path))


def test_blank_lines_keep_the_line_numbers(tmp_path):
    path = write(tmp_path, WIDE_HEADER + "\na,0.1,0.001,0.2,0.002\n\nb,0.1,x,0.2,0.002\n\n")
    assert refused(path) == rates.NOT_NUMERIC.format(
        where=f"{path}, line 4", column="FMR.F.Black", value="x", more=""
    )
    path = write(tmp_path, WIDE_HEADER + "\na,0.1,0.001,0.2,0.002\n\nb,0.1,0.001,0.2,0.002\n\n")
    assert read_rates(path)["algorithm"].unique().tolist() == ["a", "b"]


def test_no_group_columns(tmp_path):
    path = write(tmp_path, "Algorithm\na\n")
    assert refused(path) == rates.MISSING_COLUMN.format(
        source=str(path),
        column="FMR.<group>",
        hint=" (the wide layout has an FMR and an FNMR column per group)",
    )


@pytest.mark.parametrize(
    "text",
    [
        "Algorithm,FMR.F,FNMR.F\na,0.1,0.1\n",
        "algorithm,group,fmr,fnmr\na,F,0.1,0.1\nb,F,0.2,0.2\n",
    ],
)
def test_one_group_is_refused(tmp_path, text):
    path = write(tmp_path, text)
    assert refused(path) == rates.TOO_FEW_GROUPS.format(source=str(path), count=1, groups=["F"])
