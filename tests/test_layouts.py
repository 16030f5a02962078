"""The field's table shapes: one-sided tables, percent units, foreign column names."""

import numpy as np
import pandas as pd
import pytest

from audit import validation
from audit.analysis import ffmc, pareto
from audit.analysis.quality import data_quality
from audit.cli import main
from audit.exceptions import ParameterError
from audit.measures import onesided
from audit.measures.kernels import gini
from audit.measures.registry import applicable_measures, evaluate, evaluate_many
from audit.tables import layouts, rates
from audit.tables.rates import RatesError, read_rates

GROUPS = ["A", "B", "C", "D"]
FMR = np.array([[1e-5, 2e-5, 4e-5, 8e-5], [3e-5, 3e-5, 3e-5, 6e-5], [1e-4, 1e-5, 1e-5, 1e-5]])
FNMR = np.array([[0.01, 0.02, 0.02, 0.04], [0.03, 0.01, 0.01, 0.01], [0.02, 0.02, 0.02, 0.02]])


def wide(rate_kinds=("FMR",), separator="."):
    frame = pd.DataFrame({"Algorithm": ["a", "b", "c"]})
    for kind in rate_kinds:
        values = FMR if kind == "FMR" else FNMR
        for j, g in enumerate(GROUPS):
            frame[f"{kind}{separator}{g}"] = values[:, j]
    return frame


def write(tmp_path, text, name="t.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_fmr_only_wide_and_long_read_the_same():
    w = read_rates(wide())
    assert list(w.columns) == ["algorithm", "group", "fmr"]
    np.testing.assert_array_equal(w["fmr"].to_numpy(), FMR.ravel())
    long = pd.DataFrame(
        {"algorithm": np.repeat(["a", "b", "c"], 4), "group": GROUPS * 3, "fmr": FMR.ravel()}
    )
    pd.testing.assert_frame_equal(read_rates(long), w, check_like=True)
    assert layouts.available_rates(w) == ("fmr",)


def test_fnmr_only_long():
    t = read_rates(
        pd.DataFrame(
            {"algorithm": np.repeat(["a", "b", "c"], 4), "group": GROUPS * 3, "fnmr": FNMR.ravel()}
        )
    )
    assert layouts.available_rates(t) == ("fnmr",)
    assert layouts.default_accuracy(t) == "total_fnmr"


def test_two_sided_wide_still_needs_both_rates_per_group(tmp_path):
    path = write(tmp_path, "Algorithm,FMR.F,FNMR.F,FMR.M\nx,0.1,0.1,0.1\n")
    with pytest.raises(RatesError) as error:
        read_rates(path)
    assert str(error.value) == rates.MISSING_COLUMN.format(
        source=str(path), column="FNMR.M", hint=" (group 'M' has an FMR column)"
    )


def test_measures_on_an_fmr_only_table_follow_their_needs():
    t = read_rates(wide())
    listed = applicable_measures(t).set_index("measure")
    assert listed.loc["std_fmr", "status"] == onesided.COMPUTED
    assert listed.loc["garbe", "status"] == onesided.ONE_TERM
    assert listed.loc["std_fnmr", "status"] == onesided.NOT_APPLICABLE
    assert listed.loc["std_fnmr", "note"] == onesided.NEEDS_MISSING.format(
        missing="FNMR", rate="FMR"
    )
    # GARBE on one term is the Gini of the group FMRs (Howard et al. eq. 7), at every alpha
    values = evaluate_many(t, ["garbe", "ir"], alpha=[0.0, 0.5])
    garbe = values[values["measure"] == "garbe"]
    np.testing.assert_allclose(garbe["value"].to_numpy(), np.tile(gini(FMR)[0], 2))
    assert garbe["fnmr_term"].isna().all()
    ir = values[values["measure"] == "ir"]["value"].to_numpy()[:3]
    np.testing.assert_allclose(ir, [8.0, 2.0, 10.0])  # max FMR / min FMR
    assert (
        values["rule"] == onesided.ONE_TERM_RULE.format(rate="FMR", other="FNMR", alpha=1)
    ).all()
    assert "std_fnmr" not in set(evaluate_many(t)["measure"])
    with pytest.raises(ValueError) as error:
        evaluate(t, "std_fnmr")
    assert str(error.value) == onesided.NOT_APPLICABLE_HERE.format(
        name="std_fnmr",
        source="<DataFrame>",
        reason=onesided.NEEDS_MISSING.format(missing="FNMR", rate="FMR"),
    )


def test_one_term_equals_the_two_sided_measure_at_alpha_one():
    both = read_rates(wide(("FMR", "FNMR")))
    one = read_rates(wide())
    for name in ("fdr", "ir", "garbe", "nrb"):
        np.testing.assert_allclose(
            evaluate(one, name)["value"].to_numpy(),
            evaluate(both, name, alpha=1.0)["value"].to_numpy(),
        )


def test_ffmc_on_a_one_sided_table_lists_ffmc1_not_applicable():
    t = read_rates(wide())
    table = ffmc.ffmc_table(t, ["garbe", "std_fnmr"], n_random=20).set_index(
        ["measure", "criterion"]
    )
    assert table.loc[("garbe", "FFMC.1"), "evidence"] == onesided.FFMC1_ONE_SIDED.format(rate="FMR")
    assert pd.isna(table.loc[("garbe", "FFMC.1"), "passed"])
    assert bool(table.loc[("garbe", "FFMC.2"), "passed"])  # bounded in [0, 1]
    assert pd.isna(table.loc[("std_fnmr", "FFMC.3"), "passed"])
    assert table.loc[("std_fnmr", "FFMC.3"), "evidence"].startswith("not applicable: the measure")


def test_data_quality_zero_affects_only_measures_reading_that_rate():
    t = read_rates(
        pd.DataFrame(
            {
                "algorithm": ["a", "a"],
                "group": ["F", "M"],
                "fmr": [1e-5, 2e-5],
                "fnmr": [0.0, 0.5],
            }
        )
    )
    zeros = data_quality(t, ["ir", "ser", "nrb", "nrb_fmr", "nrb_fnmr"]).query("check == 'zero'")
    assert zeros.set_index("rate")["affects"].to_dict() == {
        "fmr": "",
        "fnmr": "ir, nrb, nrb_fnmr",
    }
    one = data_quality(read_rates(wide()), ["garbe"])
    assert set(one["rate"]) == {"fmr"}


def test_pareto_on_fmr_only_takes_total_fmr():
    t = read_rates(wide())
    frame = pareto.frontier_frame(t, "garbe", accuracy=layouts.default_accuracy(t))
    np.testing.assert_allclose(frame["accuracy"].to_numpy(), FMR.mean(axis=1))
    assert frame.attrs["rule"].startswith("FMR-only table")
    # GARBE ran on its FMR term (alpha = 1), whatever alpha was asked: the axis says so
    assert frame.attrs["fairness_label"] == "GARBE (FMR term alone)"
    assert "/ GARBE (FMR term alone) Pareto frontier" in pareto.summary(pareto.downselect(
        t, "garbe", accuracy="total_fmr"))  # fmt: skip
    with pytest.raises(ValueError) as error:
        pareto.frontier_frame(t, "garbe")
    assert str(error.value) == layouts.ACCURACY_ABSENT.format(
        rate="FNMR", accuracy="total_fnmr", other="total_fmr"
    )


def test_keep_is_not_offered_when_the_convention_is_nan():
    t = read_rates(wide(("FMR", "FNMR")).assign(**{"FNMR.A": [0.0, 0.01, 0.02]}))
    with pytest.raises(ValueError) as error:
        pareto.frontier_frame(t, "ir")
    assert "undefined='keep'" not in str(error.value)
    assert "--undefined exclude" in str(error.value)


def test_percent_units_divide_by_100_and_are_recorded(tmp_path):
    path = write(tmp_path, "algorithm,group,fmr,fnmr\na,F,0.5,4.5\na,M,0.25,3\n")
    t = read_rates(path, units="percent")
    np.testing.assert_allclose(t["fmr"].to_numpy(), [0.005, 0.0025])
    np.testing.assert_allclose(t["fnmr"].to_numpy(), [0.045, 0.03])
    assert t.attrs["units"] == "percent"


def test_a_percent_table_read_as_fraction_gets_the_hint(tmp_path):
    path = write(tmp_path, "algorithm,group,fmr,fnmr\na,F,0.5,4.5\na,M,0.25,3\n")
    with pytest.raises(RatesError) as error:
        read_rates(path)
    assert str(error.value) == layouts.LOOKS_PERCENT.format(
        where=f"{path}, line 2", column="fnmr", value="4.5", more=" (and 1 more such cell(s))"
    )


def test_a_value_above_100_in_percent_is_refused(tmp_path):
    path = write(tmp_path, "algorithm,group,fmr,fnmr\na,F,0.5,140\na,M,0.25,3\n")
    with pytest.raises(RatesError) as error:
        read_rates(path, units="percent")
    assert str(error.value) == layouts.OUT_OF_PERCENT.format(
        where=f"{path}, line 2", column="fnmr", value="140", more=""
    )


def test_percent_values_at_most_one_warn_unless_units_are_given(tmp_path):
    # Chouchane et al. (seed 004) Table 1: two systems in percent, every value at most 1
    path = write(tmp_path, "algorithm,group,fmr,fnmr\na,F,0.68,0.9\na,M,0.72,0.7\n")
    with pytest.warns(layouts.ImplausibleRatesWarning) as record:
        read_rates(path)
    assert str(record[0].message) == layouts.IMPLAUSIBLE.format(
        source=str(path), rate="FMR", median=0.7, limit=0.05
    )
    assert read_rates(path, units="fraction")["fmr"].tolist() == [0.68, 0.72]
    np.testing.assert_allclose(read_rates(path, units="percent")["fmr"], [0.0068, 0.0072])


def test_a_leading_unnamed_index_column_is_refused(tmp_path):
    path = write(tmp_path, ",algorithm,group,fmr,fnmr\n0,a,F,0.1,0.1\n1,a,M,0.1,0.2\n")
    with pytest.raises(RatesError) as error:
        read_rates(path)
    assert str(error.value) == layouts.INDEX_COLUMN.format(source=str(path), column="")


def test_column_mapping_and_separator(tmp_path):
    path = write(
        tmp_path,
        "system,nationality,false_match,fnmr\ns1,NG,1e-4,0.01\ns1,DE,2e-4,0.02\n",
    )
    t = read_rates(path, columns="algorithm=system,group=nationality,fmr=false_match")
    assert t["algorithm"].tolist() == ["s1", "s1"]
    assert t["group"].tolist() == ["NG", "DE"]
    assert t["fmr"].tolist() == [1e-4, 2e-4]
    with pytest.raises(RatesError) as error:
        read_rates(path, columns={"algorithm": "vendor"})
    assert str(error.value) == layouts.MAPPED_MISSING.format(
        source=str(path),
        theirs="vendor",
        ours="algorithm",
        columns=["system", "nationality", "false_match", "fnmr"],
    )
    under = read_rates(wide(("FMR", "FNMR"), separator="_"), separator="_")
    pd.testing.assert_frame_equal(under, read_rates(wide(("FMR", "FNMR"))))
    with pytest.raises(ValueError, match="expected comma-separated"):
        layouts.parse_mapping("algorithm")
    # in that form, with one of ours given twice: it was told to use the form it used
    with pytest.raises(ValueError) as error:
        layouts.parse_mapping("algorithm=Algorithm, algorithm=System")
    assert str(error.value) == layouts.OURS_TWICE.format(
        text="algorithm=Algorithm, algorithm=System", ours="algorithm"
    )


def test_a_mapping_to_a_name_audit_does_not_read_is_refused_before_the_file(tmp_path, capsys):
    """``--columns foo=Algorithm`` renamed the algorithm column away and blamed the file
    ("column 'Algorithm' is missing"); a mapping written the wrong way round, theirs
    first, was told its column was missing."""
    path = tmp_path / "wide.csv"
    wide(("FMR", "FNMR")).to_csv(path, index=False)
    for mapping, ours, theirs in [
        ("foo=Algorithm", "foo", "Algorithm"),
        ({"Algorithm": "Algorithm", "FMR": "FMR.F"}, "FMR", "FMR.F"),
        ("System=algorithm", "System", "algorithm"),
    ]:
        with pytest.raises(ParameterError) as error:
            read_rates(path, columns=mapping)
        assert str(error.value) == layouts.UNREAD_NAME.format(
            ours=ours,
            theirs=theirs,
            names="algorithm, group, group_1, group_2, fmr, fnmr, n_mated, n_nonmated, Algorithm",
            attributes="gender, race",
            wide="FMR.<group>, FNMR.<group>",
        )
    assert main(["check", str(path), "--columns", "foo=Algorithm"]) == 2
    err = capsys.readouterr().err
    assert "'foo' (given for the table's column 'Algorithm') is not a name audit reads" in err
    assert str(path) not in err  # the option is at fault, not the file
    with pytest.raises(ParameterError, match=r"an attribute \(region\) or a wide rate column "
                       r"\(<group>_FMR, <group>_FNMR\)"):  # fmt: skip
        read_rates(path, columns="gender=Gender", attributes=["region"], rate_position="suffix",
                   separator="_")  # fmt: skip


def test_every_name_audit_reads_may_be_mapped(tmp_path):
    """Ours may be a column of the rates table, an attribute (given, or gender and race),
    the wide layout's Algorithm, or a wide rate column as the separator writes it."""
    long = "system,Region,false_match,N,fnmr\ns1,NG,1e-4,20000,0.01\ns1,DE,2e-4,20000,0.02\n"
    path = write(tmp_path, long)
    t = read_rates(path, columns="algorithm=system,region=Region,fmr=false_match,"
                   "n_nonmated=N", attributes=["region"])  # fmt: skip
    assert t["region"].tolist() == ["NG", "DE"] and t["n_nonmated"].tolist() == [20000, 20000]
    frame = wide(("FMR", "FNMR"), separator="_").rename(columns={"FMR_A": "fmr of A"})
    got = read_rates(frame, separator="_", columns={"FMR_A": "fmr of A", "Algorithm": "Algorithm"})
    pd.testing.assert_frame_equal(got, read_rates(wide(("FMR", "FNMR"))))
    suffix = frame.rename(columns=lambda c: "_".join(reversed(c.split("_"))) if "_" in c else c)
    got = read_rates(suffix, separator="_", rate_position="suffix", columns={"A_FMR": "fmr of A"})
    pd.testing.assert_frame_equal(got, read_rates(wide(("FMR", "FNMR"))))


@pytest.mark.parametrize("separator", [",", "_", " "])
def test_a_separator_no_column_is_written_with_is_refused(separator):
    """``--separator ,`` on a table of FMR.<group> columns was read as if not given, the
    option doing nothing without a word (the suffix layout refused the same already)."""
    frame = wide(("FMR", "FNMR"))
    with pytest.raises(RatesError) as error:
        read_rates(frame, separator=separator)
    assert str(error.value) == layouts.NO_PREFIX_COLUMNS.format(
        source="<DataFrame>", separator=separator, columns=[str(c) for c in frame.columns]
    )
    long = pd.DataFrame({"algorithm": "a", "group": ["F", "M"], "fmr": [1e-4, 2e-4]})
    with pytest.raises(RatesError, match="none of the columns"):
        read_rates(long, separator=separator)


def test_cli_check_lists_measures_not_applicable(tmp_path, capsys):
    path = tmp_path / "fmr_only.csv"
    wide().to_csv(path, index=False)
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "fnmr: absent (FMR-only table)" in out
    note = onesided.NEEDS_MISSING.format(missing="FNMR", rate="FMR")
    assert f"measure std_fnmr: not applicable: {note}" in out
    assert "measure std_fmr: computed" in out


def test_cli_warnings_are_sentences_without_paths(tmp_path, capsys):
    path = write(tmp_path, "algorithm,group,fmr,fnmr\na,F,0.68,0.9\na,M,0.72,0.7\n")
    assert main(["check", str(path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "audit: warning: " + layouts.IMPLAUSIBLE.format(
        source=str(path), rate="FMR", median=0.7, limit=0.05
    )
    assert not any(".py:" in line for line in err)
    assert main(["check", "--units", "percent", str(path)]) == 0
    assert capsys.readouterr().err == ""


# --- the rate after the group, and columns left out -----------------------------------------

RFW = (
    "Method,Dataset,African_FMR,Asian_FMR,Caucasian_FMR,Indian_FMR,Mean\n"
    "ArcFace,RFW,0.01,0.02,0.005,0.012,0.01175\n"
    "CosFace,RFW,0.012,0.022,0.006,0.011,0.01275\n"
)


def test_rate_after_the_group_is_refused_naming_the_options(tmp_path):
    path = write(tmp_path, RFW)
    for columns in (None, "algorithm=Method"):
        with pytest.raises(RatesError) as error:
            read_rates(path, columns=columns)
        assert str(error.value) == (
            f"{path}: the rate comes after the group in 'African_FMR', 'Asian_FMR', "
            "'Caucasian_FMR', ...; read such a table with rate_position='suffix', "
            "separator='_' (command line: --rate-position suffix --separator _), name its "
            "algorithm column with columns= (command line: --columns algorithm=<name>) and "
            "leave out its other columns ("
            + ("'Method', " if columns is None else "")
            + "'Dataset', 'Mean') with ignore= (command line: --ignore-columns <names>); "
            "nothing is dropped unless named"
        )


def test_rate_after_the_group_read_as_asked(tmp_path):
    path = write(tmp_path, RFW)
    t = read_rates(
        path,
        rate_position="suffix",
        separator="_",
        columns="algorithm=Method",
        ignore="Dataset,Mean",
    )
    assert list(t.columns) == ["algorithm", "group", "fmr"]
    assert list(pd.unique(t["group"])) == ["African", "Asian", "Caucasian", "Indian"]
    assert t["fmr"].tolist() == [0.01, 0.02, 0.005, 0.012, 0.012, 0.022, 0.006, 0.011]
    assert t.attrs["ignored_columns"] == ["Dataset", "Mean"]
    # the same table written with the rate first and without the extra columns
    prefixed = pd.DataFrame(
        {"Algorithm": ["ArcFace", "CosFace"]}
        | {f"FMR.{g}": t.loc[t["group"] == g, "fmr"].to_numpy() for g in pd.unique(t["group"])}
    )
    pd.testing.assert_frame_equal(
        t.reset_index(drop=True), read_rates(prefixed), check_dtype=True, check_like=False
    )
    assert read_rates(prefixed).attrs["ignored_columns"] == []


def test_both_rates_after_the_group(tmp_path):
    path = write(tmp_path, "Algorithm,F_FMR,F_FNMR,M_FMR,M_FNMR\na,1e-4,0.01,2e-4,0.02\n")
    t = read_rates(path, rate_position="suffix", separator="_")
    assert t[["group", "fmr", "fnmr"]].to_dict("list") == {
        "group": ["F", "M"],
        "fmr": [1e-4, 2e-4],
        "fnmr": [0.01, 0.02],
    }


def test_suffix_refusals(tmp_path):
    path = write(tmp_path, RFW)
    with pytest.raises(RatesError) as error:
        read_rates(path, rate_position="suffix", columns="algorithm=Method", ignore="Dataset,Mean")
    assert str(error.value) == (
        f"{path}: rate_position='suffix' reads columns <group>.FMR and <group>.FNMR, and none "
        "of the columns ['algorithm', 'African_FMR', 'Asian_FMR', 'Caucasian_FMR', "
        "'Indian_FMR'] is one (the separator is '.': separator=, command line --separator)"
    )
    with pytest.raises(RatesError) as error:
        read_rates(path, ignore=["Datset"])
    assert str(error.value) == (
        f"{path}: column 'Datset' (named in ignore, command line --ignore-columns) is not in "
        "the table; its columns are ['Method', 'Dataset', 'African_FMR', 'Asian_FMR', "
        "'Caucasian_FMR', 'Indian_FMR', 'Mean']"
    )
    with pytest.raises(layouts.ParameterError) as error:
        read_rates(path, rate_position="after")
    assert (
        str(error.value)
        == "parameter rate_position: expected one of 'prefix', 'suffix', got 'after'"
    )
    with pytest.raises(layouts.ParameterError) as error:
        read_rates(path, ignore=3)
    assert str(error.value) == validation.REFUSED.format(
        name="ignore", expected=validation.constraint_of("ignore").expected, value=3
    )


def test_an_unknown_extra_column_names_the_ignore_option(tmp_path):
    path = write(tmp_path, "Algorithm,FMR.A,FMR.B,Mean\na,1e-4,2e-4,1.5e-4\n")
    with pytest.raises(RatesError) as error:
        read_rates(path)
    assert str(error.value) == (
        f"{path}: unknown column(s) ['Mean']; expected Algorithm, FMR.<group>, FNMR.<group>. "
        "Rename them, or leave them out with ignore= (command line: --ignore-columns); nothing "
        "is dropped silently"
    )
    assert read_rates(path, ignore=["Mean"])["group"].tolist() == ["A", "B"]


def test_cli_check_lists_the_ignored_columns(tmp_path, capsys):
    path = write(tmp_path, RFW)
    argv = ["check", str(path), "--columns", "algorithm=Method", "--rate-position", "suffix"]
    assert main([*argv, "--separator", "_", "--ignore-columns", "Dataset,Mean"]) == 0
    out = capsys.readouterr().out
    assert "ignored columns (as asked, not read): Dataset, Mean\n" in out
    assert "2 algorithms x 4 groups = 8 rows\n" in out
    assert main(["check", str(path)]) == 3  # the input refused
    assert "--rate-position suffix --separator _" in capsys.readouterr().err
    # a name holding a comma, listed so: quoted (Mean, a,b could be two names or three)
    other = tmp_path / "other.csv"
    other.write_text('Algorithm,FMR.A,FMR.B,Mean,"a,b"\nx,1e-4,2e-4,1.5e-4,n\n')
    assert main(["check", str(other), "--ignore-columns", '["Mean", "a,b"]']) == 0
    out = capsys.readouterr().out
    assert "ignored columns (as asked, not read): Mean, 'a,b'\n" in out


@pytest.mark.parametrize(
    ("header", "column", "attribute", "group"),
    [
        ("FMR..X,FNMR..X,FMR..Y,FNMR..Y", "FMR..X", "gender", ".X"),
        ("FMR.F.,FNMR.F.,FMR.M.,FNMR.M.", "FMR.F.", "race", "F."),
    ],
)
def test_an_empty_part_of_a_wide_group_is_refused(tmp_path, header, column, attribute, group):
    """``FMR..X`` (a separator doubled) gave the groups an empty gender, accepted, where a
    long table's empty gender is refused."""
    path = write(tmp_path, f"Algorithm,{header}\na,0.001,0.01,0.002,0.02\n")
    with pytest.raises(RatesError) as error:
        read_rates(path)
    assert str(error.value) == rates.EMPTY_ATTRIBUTE.format(
        source=str(path), column=column, attribute=attribute, group=group,
        attributes=["gender", "race"],
    )  # fmt: skip


def test_a_group_split_unlike_most_is_refused_not_read_whole(tmp_path):
    """A first header of ``FMR.F..AmIndian`` (a separator doubled) among two-part groups
    read every group whole: gender and race dropped, the F/M measures not applicable,
    without a word."""
    header = "FMR.F..X,FNMR.F..X,FMR.F.Y,FNMR.F.Y,FMR.M.X,FNMR.M.X,FMR.M.Y,FNMR.M.Y"
    path = write(tmp_path, f"Algorithm,{header}\na,{','.join(['0.01'] * 8)}\n")
    with pytest.raises(RatesError) as error:
        read_rates(path)
    assert str(error.value) == rates.WRONG_ATTRIBUTE_COUNT.format(
        source=str(path), column="FMR.F..X", found=3, expected=2, attributes=["gender", "race"]
    )
    # groups whole where most are (U.S., U.K. and Canada: no attribute split)
    whole = write(tmp_path, "Algorithm,FMR.U.S.,FNMR.U.S.,FMR.Canada,FNMR.Canada\na,1e-4,0.01,1e-4,0.01\n",
                  name="whole.csv")  # fmt: skip
    assert list(read_rates(whole).columns[:2]) == ["algorithm", "group"]
