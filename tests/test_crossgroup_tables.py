"""Cross-group impostor tables: FMR per (enrolment group, probe group) pair, long and wide."""

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import CROSS_ALGORITHMS as ALGORITHMS
from conftest import CROSS_GROUPS as GROUPS
from conftest import cross_long as long_frame
from conftest import cross_matrices as matrices
from conftest import cross_wide as wide_frame

from audit.tables import crossgroup, layouts, rates
from audit.tables.crossgroup import CrossGroupRates, cross_group
from audit.tables.rates import RatesError, read_rates
from audit.validation import REFUSED


def write(tmp_path, frame, name="cross.csv"):
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def test_long_and_wide_read_the_same_pairs_and_within_group_table():
    long = read_rates(long_frame())
    wide = read_rates(wide_frame(), pair_separator="|")
    for table in (long, wide):
        assert list(table.columns) == ["algorithm", "group", "fmr"]
        assert table["group"].tolist() == GROUPS * 3
        np.testing.assert_array_equal(
            table["fmr"].to_numpy(), np.diagonal(matrices(), axis1=1, axis2=2).ravel()
        )
        cross = cross_group(table)
        assert isinstance(cross, CrossGroupRates)
        assert list(cross.groups) == GROUPS
        assert list(cross.algorithms) == ALGORITHMS
        np.testing.assert_array_equal(cross.fmr, matrices())
        assert layouts.available_rates(table) == ("fmr",)
    pd.testing.assert_frame_equal(long, wide)
    assert cross_group(long).matrix("c").loc["A", "D"] == 0.0
    assert cross_group(long).matrix("a").loc["B", "A"] == 3e-5  # enrolled in B, probed from A
    pd.testing.assert_frame_equal(
        cross_group(long).frame(),
        long_frame().astype({c: "string" for c in ("algorithm", "group_1", "group_2")}),
    )


def test_the_pair_matrix_follows_a_filtered_table():
    table = read_rates(long_frame())
    part = table[table["algorithm"].isin(["c", "a"])]
    cross = cross_group(part)
    assert list(cross.algorithms) == ["a", "c"]
    np.testing.assert_array_equal(cross.fmr, matrices()[[0, 2]])
    assert cross_group(read_rates(wide_frame(), pair_separator="|").iloc[:0]).fmr.shape == (0, 4, 4)
    with pytest.raises(ValueError):
        cross.fmr[0, 0, 0] = 1.0  # read-only: shared by every copy of the table


def test_files_in_both_layouts_with_percent_units(tmp_path):
    long = write(tmp_path, long_frame().assign(fmr=lambda f: f["fmr"] * 100), "long.csv")
    wide_percent = wide_frame()
    wide_percent.iloc[:, 1:] *= 100
    wide = write(tmp_path, wide_percent, "wide.csv")
    for table in (
        read_rates(long, units="percent"),
        read_rates(wide, units="percent", pair_separator="|"),
    ):
        np.testing.assert_allclose(cross_group(table).fmr, matrices(), rtol=1e-12)
        assert table.attrs["units"] == "percent"


def test_separator_mapping_and_column_mapping(tmp_path):
    under = read_rates(wide_frame(prefix="FMR_"), separator="_", pair_separator="|")
    np.testing.assert_array_equal(cross_group(under).fmr, matrices())
    # the pair separator may be the FMR separator too: FMR_A_B
    same = read_rates(wide_frame(separator="_", prefix="FMR_"), separator="_", pair_separator="_")
    np.testing.assert_array_equal(cross_group(same).fmr, matrices())
    renamed = long_frame().rename(
        columns={"algorithm": "system", "group_1": "enrolled", "group_2": "probe"}
    )
    table = read_rates(renamed, columns="algorithm=system,group_1=enrolled,group_2=probe")
    np.testing.assert_array_equal(cross_group(table).fmr, matrices())


def test_attribute_parts_of_the_groups():
    fmr = matrices()[:, :2, :2]
    frame = pd.DataFrame({"Algorithm": ALGORITHMS})
    labels = ["F.Black", "M.White"]
    for i, g1 in enumerate(labels):
        for j, g2 in enumerate(labels):
            frame[f"FMR.{g1}|{g2}"] = fmr[:, i, j]
    table = read_rates(frame, pair_separator="|")
    assert list(table.columns) == ["algorithm", "gender", "race", "group", "fmr"]
    assert table["race"].tolist()[:2] == ["Black", "White"]
    with pytest.raises(RatesError) as error:
        read_rates(frame, pair_separator="|", attributes=["gender", "race", "age"])
    assert str(error.value) == rates.WRONG_ATTRIBUTE_COUNT.format(
        source="<DataFrame>",
        column="FMR.F.Black|F.Black",
        found=2,
        expected=3,
        attributes=["gender", "race", "age"],
    )


def test_counts_of_the_pairs(tmp_path):
    frame = long_frame()
    frame["n_nonmated"] = 1_000_000
    table = read_rates(frame)
    assert list(table.columns) == ["algorithm", "group", "fmr", "n_nonmated"]
    assert (table["n_nonmated"] == 1_000_000).all()
    assert (cross_group(table).n_nonmated == 1_000_000).all()
    frame.loc[5, "n_nonmated"] = 3
    path = write(tmp_path, frame)
    with pytest.raises(RatesError) as error:
        read_rates(path)
    assert str(error.value).startswith(f"{path}, line 7, column 'fmr': '0.002' with n_nonmated 3")


def test_a_missing_pair_is_named(tmp_path):
    path = write(tmp_path, long_frame().drop(index=[18, 19]))
    with pytest.raises(RatesError) as error:
        read_rates(path)
    assert str(error.value) == crossgroup.MISSING_PAIRS.format(
        source=str(path),
        algorithm="b",
        where=f"{path}, line 18",
        pairs="('A', 'C'), ('A', 'D')",
        rule=crossgroup.FULL_SQUARE.format(count=4, groups=GROUPS),
    )


def test_a_missing_within_group_pair_comes_first():
    frame = long_frame().drop(index=[0, 1])  # algorithm a lacks (A, A) and (A, B)
    with pytest.raises(RatesError) as error:
        read_rates(frame)
    assert "pair(s) ('A', 'A'), ('A', 'B') (enrolment group, probe group)" in str(error.value)
    wide = wide_frame().drop(columns=["FMR.C|C"])
    with pytest.raises(RatesError) as error:
        read_rates(wide, pair_separator="|")
    assert "has no FMR for the pair(s) ('C', 'C')" in str(error.value)


def test_a_pair_twice_is_refused(tmp_path):
    frame = pd.concat([long_frame(), long_frame().iloc[[20]]], ignore_index=True)
    path = write(tmp_path, frame)
    with pytest.raises(RatesError) as error:
        read_rates(path)
    assert str(error.value) == crossgroup.DUPLICATE_PAIR.format(
        where=f"{path}, line 50", algorithm="b", enrol="B", probe="A", first=f"{path}, line 22"
    )
    wide = pd.concat([wide_frame(), wide_frame().iloc[[0]]], ignore_index=True)
    with pytest.raises(RatesError) as error:
        read_rates(wide, pair_separator="|")
    assert str(error.value) == crossgroup.DUPLICATE_PAIR.format(
        where="<DataFrame>, row 3", algorithm="a", enrol="A", probe="A", first="<DataFrame>, row 0"
    )


def test_declared_pairs():
    declared = [(g, g) for g in GROUPS] + [("A", "B"), ("B", "A"), ("C", "D")]
    keep = long_frame().apply(lambda r: (r["group_1"], r["group_2"]) in declared, axis=1)
    table = read_rates(long_frame()[keep], pairs=declared)
    cross = cross_group(table)
    measured = np.eye(4, dtype=bool)
    measured[0, 1] = measured[1, 0] = measured[2, 3] = True
    np.testing.assert_array_equal(cross.measured, measured)
    assert np.isnan(cross.fmr[:, ~measured]).all()
    np.testing.assert_array_equal(cross.fmr[:, measured], matrices()[:, measured])
    assert len(cross.frame()) == 3 * 7
    # as text, split at the pair separator
    text = ",".join(f"{a}|{b}" for a, b in declared)
    table = read_rates(long_frame()[keep], pairs=text, pair_separator="|")
    np.testing.assert_array_equal(cross_group(table).measured, measured)


def test_declared_pairs_are_enforced(tmp_path):
    declared = [(g, g) for g in GROUPS] + [("A", "B")]
    path = write(tmp_path, long_frame())
    with pytest.raises(RatesError) as error:
        read_rates(path, pairs=declared)
    assert str(error.value) == crossgroup.UNDECLARED_PAIR.format(
        where=f"{path}, line 4",
        algorithm="a",
        enrol="A",
        probe="C",
        more=" (and 32 more such cell(s))",
    )
    keep = long_frame().apply(lambda r: (r["group_1"], r["group_2"]) in declared, axis=1)
    short = long_frame()[keep].drop(index=[17])  # algorithm b lacks (A, B)
    with pytest.raises(RatesError) as error:
        read_rates(short, pairs=declared)
    assert str(error.value) == crossgroup.MISSING_PAIRS.format(
        source="<DataFrame>",
        algorithm="b",
        where="<DataFrame>, row 16",
        pairs="('A', 'B')",
        rule=crossgroup.DECLARED_RULE,
    )
    with pytest.raises(RatesError) as error:
        read_rates(long_frame()[keep], pairs=[("A", "A"), ("B", "B"), ("A", "B")])
    assert str(error.value).startswith("<DataFrame>, row 10: algorithm 'a', pair ('C', 'C') is not")
    with pytest.raises(RatesError) as error:
        read_rates(long_frame()[keep], pairs=[("A", "A"), ("A", "B")])
    assert str(error.value) == crossgroup.NO_WITHIN.format(
        source="<DataFrame>", groups=["B"], declared=" (the declared pairs lack them)"
    )


PAIRS_REFUSED = (
    "parameter pairs: expected a non-empty string or a list of (enrolment, probe) pairs of "
    "labels or none, got {value!r}"
)


@pytest.mark.parametrize(
    ("pairs", "separator", "message"),
    [
        ("A|B", None, crossgroup.DECLARED_TEXT.format(text="A|B")),
        ("A|B,A", "|", crossgroup.BAD_DECLARED_TEXT.format(text="A|B,A", item="A", separator="|")),
        (
            "A|B|C",
            "|",
            crossgroup.BAD_DECLARED_TEXT.format(text="A|B|C", item="A|B|C", separator="|"),
        ),
        ([("A", "B"), ("A", "B")], None, crossgroup.DECLARED_TWICE.format(enrol="A", probe="B")),
        ([("A", "")], None, crossgroup.BAD_DECLARED.format(value=("A", ""))),
        # not pairs at all: refused by the declaration of pairs
        (["AB"], None, PAIRS_REFUSED.format(value=["AB"])),
        ([], None, PAIRS_REFUSED.format(value=[])),
    ],
)
def test_malformed_declared_pairs(pairs, separator, message):
    with pytest.raises(ValueError) as error:
        read_rates(long_frame(), pairs=pairs, pair_separator=separator)
    assert str(error.value) == message


@pytest.mark.parametrize(("column", "count"), [("FMR.AB", 0), ("FMR.A|B|C", 2)])
def test_a_wide_column_must_name_one_pair(column, count):
    frame = wide_frame()
    frame[column] = 1e-5
    with pytest.raises(RatesError) as error:
        read_rates(frame, pair_separator="|")
    assert str(error.value) == crossgroup.BAD_PAIR_LABEL.format(
        source="<DataFrame>", column=column, separator="|", count=count, label=column[4:]
    )


def test_a_separator_inside_group_names_is_refused():
    frame = pd.DataFrame({"Algorithm": ["a"], "FMR.F.Black.F.Black": [1e-4]})
    with pytest.raises(RatesError) as error:
        read_rates(frame, pair_separator=".")
    assert "the pair separator '.' occurs 3 time(s) in 'F.Black.F.Black'" in str(error.value)
    empty = pd.DataFrame({"Algorithm": ["a"], "FMR.|A": [1e-4]})
    with pytest.raises(RatesError) as error:
        read_rates(empty, pair_separator="|")
    assert str(error.value) == crossgroup.EMPTY_SIDE.format(
        source="<DataFrame>", column="FMR.|A", side="enrolment", label="|A"
    )


def test_fnmr_has_no_place_in_a_cross_group_table():
    with pytest.raises(RatesError) as error:
        read_rates(wide_frame().assign(**{"FNMR.A": 0.01}), pair_separator="|")
    assert str(error.value) == crossgroup.FNMR_IN_PAIRS.format(
        source="<DataFrame>", column="FNMR.A"
    )
    with pytest.raises(RatesError) as error:
        read_rates(long_frame().assign(fnmr=0.01))
    assert str(error.value) == crossgroup.FNMR_IN_PAIRS.format(source="<DataFrame>", column="fnmr")


def test_the_two_sides_and_one_group_column_do_not_mix():
    with pytest.raises(RatesError) as error:
        read_rates(long_frame().assign(group="A"))
    assert str(error.value) == crossgroup.MIXED_SIDES.format(source="<DataFrame>")
    with pytest.raises(RatesError) as error:
        read_rates(long_frame().drop(columns="group_2"))
    assert str(error.value) == crossgroup.ONE_SIDE.format(source="<DataFrame>", missing="group_2")
    one = pd.DataFrame({"algorithm": ["a", "a"], "group": ["A|A", "A|B"], "fmr": [1e-4, 1e-5]})
    with pytest.raises(RatesError) as error:
        read_rates(one, pair_separator="|")
    assert str(error.value) == crossgroup.SEPARATOR_ON_LONG.format(
        source="<DataFrame>", columns=["algorithm", "group", "fmr"]
    )
    plain = pd.DataFrame({"algorithm": ["a", "a"], "group": ["A", "B"], "fmr": [1e-4, 1e-5]})
    with pytest.raises(RatesError) as error:
        read_rates(plain, pairs=[("A", "A")])
    assert str(error.value) == crossgroup.PAIRS_NOT_CROSS.format(source="<DataFrame>")
    with pytest.raises(ValueError) as error:
        read_rates(plain, pair_separator="")
    assert str(error.value) == REFUSED.format(
        name="pair_separator", expected="a non-empty string or none", value=""
    )


def test_rates_are_checked_cell_by_cell(tmp_path):
    frame = long_frame().astype({"fmr": object})
    frame.loc[6, "fmr"] = "150"
    path = write(tmp_path, frame)
    with pytest.raises(RatesError) as error:
        read_rates(path)
    assert str(error.value) == rates.OUT_OF_RANGE.format(
        where=f"{path}, line 8", column="fmr", value="150", more=""
    )
    wide = wide_frame().astype(object)
    wide.loc[1, "FMR.B|C"] = "n/a"
    path = write(tmp_path, wide, "wide.csv")
    with pytest.raises(RatesError) as error:
        read_rates(path, pair_separator="|")
    assert str(error.value) == rates.MISSING_VALUE.format(
        where=f"{path}, line 3", column="FMR.B|C", more=""
    )


def test_pair_like_group_names_get_a_warning_pointing_to_the_cross_group_layout():
    with pytest.warns(crossgroup.PairLikeGroupsWarning) as record:
        table = read_rates(wide_frame())
    assert table["group"].nunique() == 16  # read as asked
    assert str(record[0].message) == crossgroup.PAIR_LIKE.format(
        source="<DataFrame>",
        examples="'A|A', 'A|B', 'A|C', 'A|D', ...",
        separator="|",
        count=4,
        hint=crossgroup.PAIR_LIKE_WIDE.format(separator="|"),
    )
    one = long_frame().assign(group=lambda f: f["group_1"] + " vs " + f["group_2"])
    with pytest.warns(crossgroup.PairLikeGroupsWarning) as record:
        read_rates(one.drop(columns=["group_1", "group_2"]))
    assert str(record[0].message).endswith(crossgroup.PAIR_LIKE_LONG)
    assert "split at ' vs '" in str(record[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_rates(wide_frame(), pair_separator="|")


@pytest.mark.parametrize(
    ("groups", "separator"),
    [
        (["A|A", "A|B", "B|A", "B|B"], "|"),
        (["F.Black_F.Black", "F.Black_M.White", "M.White_M.White"], "_"),
        (["x-x", "y-y", "x-y"], "-"),
        (["F.Black", "F.White", "M.Black", "M.White"], None),  # Annex 15: sides never repeat
        (["A|A", "B|B"], None),  # no pair of two groups
        (["A|B", "B|A", "C|A"], None),  # no within-group pair
        (["A", "B", "C"], None),
    ],
)
def test_pair_separator_of(groups, separator):
    assert crossgroup.pair_separator_of(groups) == separator


def test_the_annex15_table_is_not_pair_like(annex15):
    assert crossgroup.pair_separator_of(list(pd.unique(annex15["group"]))) is None
    assert cross_group(annex15) is None
