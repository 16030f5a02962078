"""NIST FRVT 1:1 gender x race read as a cross-group impostor table, and calibrated cells:
the rule on small tables at its edges, and what it finds on the real FRVT 1:1 and Annex 15
tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from audit.analysis import calibration
from audit.analysis.calibration import calibrated_cells, relative_label
from audit.cli import main
from audit.exceptions import RatesError, UsageError
from audit.measures.registry import applicable_measures, evaluate
from audit.tables import datasets as readers
from audit.tables.crossgroup import cross_group
from audit.tables.datasets import read_data, read_frvt11
from audit.tables.rates import read_rates

GROUPS = ["M.White", "M.Black", "F.White", "F.Black"]


# --- reading FRVT 1:1 -----------------------------------------------------------------------


def test_frvt11_is_240_algorithms_of_4_groups(frvt11):
    assert frvt11["algorithm"].nunique() == 240
    assert list(pd.unique(frvt11["group"])) == GROUPS
    assert list(frvt11.columns) == ["algorithm", "gender", "race", "group", "fmr"]
    first = frvt11[frvt11["algorithm"] == "acisw-003"]
    # the file's first row: acisw-003,0.0001,0.001,0.0005,0.0001,0.0002,0.0044,0.0014,0.0003
    assert first["fmr"].tolist() == [0.001, 0.0005, 0.0044, 0.0014]
    assert first["gender"].tolist() == ["M", "M", "F", "F"]
    assert first["race"].tolist() == ["White", "Black", "White", "Black"]


def test_frvt11_pairs_are_the_8_published_cells(frvt11):
    cross = cross_group(frvt11)
    assert list(cross.groups) == GROUPS
    measured = {
        (a, b) for i, a in enumerate(GROUPS) for j, b in enumerate(GROUPS) if cross.measured[i, j]
    }
    assert measured == {
        ("M.White", "M.Black"),
        ("M.White", "M.White"),
        ("M.Black", "M.Black"),
        ("M.Black", "M.White"),
        ("F.White", "F.Black"),
        ("F.White", "F.White"),
        ("F.Black", "F.Black"),
        ("F.Black", "F.White"),
    }
    k = list(cross.algorithms).index("acisw-003")
    # MW_MB 0.0001, MB_MW 0.0001, FW_FB 0.0002, FB_FW 0.0003
    assert cross.fmr[k, 0, 1] == 0.0001 and cross.fmr[k, 1, 0] == 0.0001
    assert cross.fmr[k, 2, 3] == 0.0002 and cross.fmr[k, 3, 2] == 0.0003
    assert np.isnan(cross.fmr[k, 0, 2])  # no cross pair between the sexes


def test_frvt11_says_the_enrolment_side_is_unknown(frvt11):
    assert frvt11.attrs["sides"] == (
        "the transcription does not say which group of a cross pair is the enrolment side: "
        "the first group written (MW of MW_MB) is taken as group_1"
    )


def test_frvt11_takes_the_fmr_only_measures(frvt11):
    status = applicable_measures(frvt11).set_index("measure")["status"]
    assert status["std_fmr"] == "computed" and status["cell_gini"] == "computed"
    assert status["garbe"] == "one term"
    assert status["std_fnmr"] == "not applicable"
    std = evaluate(frvt11, "std_fmr")["value"]
    assert std["acisw-003"] == pytest.approx(np.std([0.001, 0.0005, 0.0044, 0.0014]), rel=1e-12)


def test_read_data_by_name_by_path_and_by_a_renamed_copy(frvt11, frvt11_file, tmp_path):
    by_name = read_data("frvt11")
    pd.testing.assert_frame_equal(by_name, frvt11)
    assert by_name.attrs["dataset"] == "frvt11"
    renamed = tmp_path / "nist.csv"
    renamed.write_bytes(frvt11_file.read_bytes())
    assert read_data(str(renamed)).attrs["dataset"] == "frvt11"


def test_read_data_refuses_layout_options_for_a_dataset_read_its_own_way():
    with pytest.raises(UsageError) as error:
        read_data("frvt11", separator="_")
    assert str(error.value) == (
        "option separator='_' does not apply to built-in dataset 'frvt11': it is read by a "
        "reader of its own (an unnamed algorithm column, then one FMR column per pair)"
    )
    assert read_data("frvt11", separator=".", units=None)["algorithm"].nunique() == 240


def test_frvt11_layout_refusals(frvt11_file, tmp_path):
    text = frvt11_file.read_text()
    bad = tmp_path / "bad.csv"
    bad.write_text(text.replace("MB_MW", "MB_MX", 1))
    with pytest.raises(RatesError) as error:
        read_frvt11(bad)
    assert str(error.value) == (
        f"{bad}: column 'MB_MX' is not a pair of FRVT 1:1 groups; the table has an unnamed "
        "first column of algorithms, then columns <sex><race>_<sex><race> (sex F or M, race B "
        "or W), e.g. 'MW_MB'"
    )
    named = tmp_path / "named.csv"
    named.write_text("name" + text)
    with pytest.raises(RatesError) as error:
        read_frvt11(named)
    assert str(error.value) == (
        f"{named}: the first column is named 'name'; the FRVT 1:1 transcription's first "
        "column, of algorithms, has no name"
    )
    blank = tmp_path / "blank.csv"
    lines = text.splitlines(keepends=True)
    lines[3] = lines[3].replace("0.0015", "", 1)  # intellifusion-002's MB_MB, line 4
    blank.write_text("".join(lines))
    with pytest.raises(RatesError) as error:
        read_frvt11(blank)
    assert str(error.value) == f"{blank}, line 4, column 'FMR.M.Black|M.Black': value is missing"


# --- calibrated cells: the rule -------------------------------------------------------------


def _table(f, m, *, n=None):
    n = len(f) if n is None else n
    return read_rates(
        pd.DataFrame({"Algorithm": [f"a{k}" for k in range(n)], "FMR.F": f, "FMR.M": m})
    )


def test_calibration_oracle_on_a_small_table():
    f = [2e-3 + k * 1e-4 for k in range(20)]
    cells = calibrated_cells(_table(f, [1e-3] * 20))
    assert cells[["rate", "kind", "cell", "value", "algorithms", "total_algorithms"]].to_dict(
        "records"
    ) == [
        {
            "rate": "fmr",
            "kind": "group",
            "cell": "M",
            "value": 1e-3,
            "algorithms": 20,
            "total_algorithms": 20,
        }
    ]
    assert cells["lowest_for"].tolist() == [20]
    assert cells.attrs["sentence"] == (
        "FMR of M is 0.001 for 20 of 20 algorithms: a calibration (the thresholds were set so), "
        "not a measurement; kept out of total FMR (a frontier's accuracy axis); it is the "
        "lowest FMR of 20 of 20 algorithms, whose max/min FMR ratios (the Inequity Rate's FMR "
        "term, SER) are relative to the calibrated cell"
    )


@pytest.mark.parametrize(
    ("same", "total", "found"),
    [(19, 20, True), (18, 20, False), (10, 10, True), (9, 9, False)],
)
def test_calibration_share_and_count_edges(same, total, found):
    """At least 95% of the algorithms (19 of 20, not 18), and at least 10 of them."""
    f = [2e-3 + k * 1e-4 for k in range(total)]
    m = [1e-3] * same + [1.5e-3 + k * 1e-5 for k in range(total - same)]
    assert len(calibrated_cells(_table(f, m))) == int(found)


def test_a_value_other_cells_share_is_a_floor_not_a_calibration():
    """M at 1e-5 for every algorithm, and F at 1e-5 for 1 of 20 (5% of the other cells): a
    floor; for none of F's: a calibration."""
    m = [1e-5] * 20
    f = [2e-3 + k * 1e-4 for k in range(20)]
    assert len(calibrated_cells(_table(f, m))) == 1
    f[0] = 1e-5
    assert len(calibrated_cells(_table(f, m))) == 0


def test_rates_of_0_or_1_are_no_calibration():
    f = [2e-3 + k * 1e-4 for k in range(20)]
    assert len(calibrated_cells(_table(f, [0.0] * 20))) == 0
    assert len(calibrated_cells(_table(f, [1.0] * 20))) == 0


def test_too_few_algorithms_say_so():
    cells = calibrated_cells(_table([2e-3, 3e-3], [1e-3, 1e-3]))
    assert cells.empty and cells.attrs["sentence"] == (
        "fewer than 10 algorithms: calibration is not looked for"
    )


def test_relative_label():
    assert relative_label("FMR ratio to M.White") == (
        "FMR ratio to M.White (relative to the calibrated cell)"
    )
    assert calibration.RELATIVE == "relative to the calibrated cell"


# --- calibrated cells: the real tables ------------------------------------------------------


def test_frvt11_has_one_calibrated_cell_white_men(frvt11):
    cells = calibrated_cells(frvt11)
    assert cells[["rate", "kind", "cell", "value", "algorithms", "total_algorithms"]].to_dict(
        "records"
    ) == [
        {
            "rate": "fmr",
            "kind": "group",
            "cell": "M.White",
            "value": 0.001,
            "algorithms": 240,
            "total_algorithms": 240,
        }
    ]
    # an oracle of lowest_for: the algorithms whose lowest within-group FMR is M.White's
    wide = frvt11.pivot(index="algorithm", columns="group", values="fmr")
    assert cells["lowest_for"].tolist() == [int((wide["M.White"] == wide.min(axis=1)).sum())]
    assert cells["lowest_for"].tolist() == [230]


def test_annex15_has_no_calibrated_cell(annex15):
    """Its most repeated cell, M.White's FMR at the 1e-5 floor for 114 of 126 algorithms, is
    a floor: a quarter of the other FMR cells sit there too."""
    wide = annex15.pivot(index="algorithm", columns="group", values="fmr")
    assert int((wide["M.White"] == 1e-5).sum()) == 114
    cells = calibrated_cells(annex15)
    assert cells.empty
    assert cells.attrs["sentence"] == (
        "no cell holds one value of its own for 95% of the algorithms: no calibration found"
    )


def test_audit_check_prints_the_calibration(capsys):
    assert main(["check", "frvt11"]) == 0
    out = capsys.readouterr().out
    assert (
        "calibration: FMR of M.White is 0.001 for 240 of 240 algorithms: a calibration (the "
        "thresholds were set so), not a measurement; kept out of total FMR (a frontier's "
        "accuracy axis); it is the lowest FMR of 230 of 240 algorithms, whose max/min FMR "
        "ratios (the Inequity Rate's FMR term, SER) are relative to the calibrated cell\n"
    ) in out
    assert "built-in dataset frvt11: NIST FRVT 1:1 gender x race FMR table\n" in out
    assert readers.SIDES_UNKNOWN + "\n" in out
    assert "cross-group table: 240 algorithms x 8 pairs (declared pairs of 4 groups" in out


def test_audit_check_of_the_accuracy_table(capsys):
    assert main(["check", "frvt11-accuracy"]) == 0
    out = capsys.readouterr().out
    assert "column 'Mugshot, 1e-5': 241 of 246 algorithms, 5 empty; min 0.0026, max 1\n" in out


def test_max_min_ratios_dividing_by_the_calibrated_cell_are_labelled(frvt11, annex15):
    from audit.analysis.calibration import label_ratios
    from audit.measures.registry import evaluate_many

    values = label_ratios(
        evaluate_many(frvt11, ["ir", "ser", "garbe"], zero_division="flag"), frvt11
    )
    wide = frvt11.pivot(index="algorithm", columns="group", values="fmr")
    at_minimum = set(wide.index[wide["M.White"] == wide.min(axis=1)])
    for row in values.itertuples():
        expected = (
            "FMR term relative to the calibrated cell M.White"
            if row.measure in ("ir", "ser") and row.algorithm in at_minimum
            else ""
        )
        assert row.calibration == expected
    assert (values["calibration"] != "").sum() == 2 * 230
    plain = evaluate_many(annex15, ["ir"], zero_division="flag")
    assert "calibration" not in label_ratios(plain, annex15).columns
