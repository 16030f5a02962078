"""A column mapping or separator that would give two columns one name is refused with the
real reason, never read as a one-sided table or ended in a pandas traceback."""

from __future__ import annotations

import pandas as pd
import pytest

from audit import read_rates
from audit.cli import main
from audit.exceptions import RatesError, UsageError
from audit.tables import layouts

LONG = pd.DataFrame({"system": ["a", "a"], "nat": ["F", "M"], "x": [1e-4, 2e-4], "y": [0.01, 0.02]})


@pytest.mark.parametrize(
    ("mapping", "theirs", "first", "second"),
    [
        ("algorithm=system,group=nat,fmr=x,fnmr=x", "x", "fmr", "fnmr"),
        ({"algorithm": "system", "group": "system", "fmr": "x"}, "system", "algorithm", "group"),
        ("algorithm=system,group=nat,fmr=y,fnmr=y", "y", "fmr", "fnmr"),
    ],
)
def test_one_column_for_two_of_ours_is_refused(mapping, theirs, first, second):
    with pytest.raises(UsageError) as error:
        read_rates(LONG, columns=mapping)
    assert str(error.value) == layouts.MAPPED_TWICE.format(
        source="<DataFrame>", theirs=theirs, first=first, second=second
    )


@pytest.mark.parametrize(
    ("columns", "separator", "first", "second", "name", "how"),
    [
        (
            ["Algorithm", "FMR_A", "FMR.A", "FNMR_A"],
            "_",
            "FMR_A",
            "FMR.A",
            "FMR.A",
            "the separator '_' reads 'FMR_A' as 'FMR.A'",
        ),
        (
            ["Algorithm", "FMR.A", "FNMR.A", "FMR-A"],
            "-",
            "FMR.A",
            "FMR-A",
            "FMR.A",
            "the separator '-' reads 'FMR-A' as 'FMR.A'",
        ),
        (
            ["Algorithm", "FNMR|B", "FMR|B", "FNMR.B"],
            "|",
            "FNMR|B",
            "FNMR.B",
            "FNMR.B",
            "the separator '|' reads 'FNMR|B' as 'FNMR.B'",
        ),
    ],
)
def test_a_separator_giving_two_columns_one_name_is_refused(
    columns, separator, first, second, name, how
):
    frame = pd.DataFrame([["a", *[1e-4] * (len(columns) - 1)]], columns=columns)
    with pytest.raises(RatesError) as error:
        read_rates(frame, separator=separator)
    assert str(error.value) == layouts.SAME_NAME.format(
        source="<DataFrame>", first=first, second=second, name=name, how=how
    )


def test_a_mapping_onto_a_name_the_separator_makes_is_refused():
    frame = pd.DataFrame([["a", 1e-4, 1e-4, 0.01]], columns=["Algorithm", "FMR_A", "fa", "FNMR_A"])
    with pytest.raises(RatesError) as error:
        read_rates(frame, separator="_", columns={"FMR.A": "fa"})
    assert str(error.value) == layouts.SAME_NAME.format(
        source="<DataFrame>",
        first="FMR_A",
        second="fa",
        name="FMR.A",
        how="the separator '_' reads 'FMR_A' as 'FMR.A'; the mapping names 'fa' 'FMR.A'",
    )


def test_the_command_line_gives_the_reason(tmp_path, capsys):
    path = tmp_path / "long.csv"
    LONG.to_csv(path, index=False)
    assert main(["check", "--columns", "algorithm=system,group=nat,fmr=x,fnmr=x", str(path)]) == 2
    err = capsys.readouterr().err
    expected = layouts.MAPPED_TWICE.format(source=str(path), theirs="x", first="fmr", second="fnmr")
    assert err.startswith("usage: audit check ") and err.endswith(
        f"audit check: error: {expected}\n"
    )
    wide = tmp_path / "wide.csv"
    wide.write_text("Algorithm,FMR_A,FMR.A,FNMR_A,FNMR.A\na,0.0001,0.0002,0.01,0.02\n")
    assert main(["check", "--separator", "_", str(wide)]) == 3
    err = capsys.readouterr().err
    assert err.startswith(f"audit: error: {wide}: the columns 'FMR_A' and 'FMR.A' would both")
    assert "Traceback" not in err
