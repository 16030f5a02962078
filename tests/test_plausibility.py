"""Rates that look misread are read as given, with a warning that says why and how to
silence it: FMR and FNMR columns swapped, a percent table whose values are all at most
1, on the command line, from Python and on the report's front page."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from audit import read_rates
from audit.cli import main
from audit.exceptions import ImplausibleRatesWarning
from audit.tables import layouts


def table(fmr: list[float], fnmr: list[float]) -> pd.DataFrame:
    groups = [f"g{i}" for i in range(len(fmr))]
    return pd.DataFrame({"algorithm": "a", "group": groups, "fmr": fmr, "fnmr": fnmr})


SWAPPED = table([1e-2, 2e-2, 1.5e-2, 3e-2], [1e-4, 2e-4, 1e-4, 5e-5])


def test_swapped_columns_warn_with_the_numbers():
    with pytest.warns(ImplausibleRatesWarning) as caught:
        read_rates(SWAPPED)
    assert [str(w.message) for w in caught] == [
        layouts.SWAPPED.format(source="<DataFrame>", count=4, cells=4, fmr=0.0175, fnmr=1e-4)
    ]


@pytest.mark.parametrize(
    ("fmr", "fnmr", "warns"),
    [
        ([1e-2, 2e-2, 1e-4], [1e-4, 2e-4, 1e-2], True),  # 2 of 3 cells
        ([1e-2, 1e-4, 1e-4, 1e-2], [1e-4, 1e-2, 1e-2, 1e-4], False),  # half: not most
        ([1e-4, 1e-5], [1e-2, 1e-2], False),  # as NIST's tables
        ([0.01, 0.01], [0.01, 0.01], False),  # equal is not above
    ],
)
def test_the_swap_rule_is_most_cells(fmr, fnmr, warns):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read_rates(table(fmr, fnmr))
    assert any("may be swapped" in str(w.message) for w in caught) is warns


def test_the_swap_warning_is_silenced_by_saying_so():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_rates(SWAPPED, fmr_above_fnmr=True)


def test_a_percent_fmr_below_one_warns(tmp_path):
    """0.12% read as 12%: the FNMRs (0.15% and 0.1%) alone would pass as fractions."""
    path = tmp_path / "percent.csv"
    path.write_text("algorithm,group,fmr,fnmr\na,F,0.12,0.15\na,M,0.15,0.1\n")
    with pytest.warns(ImplausibleRatesWarning) as caught:
        read_rates(path)
    assert [str(w.message) for w in caught] == [
        layouts.IMPLAUSIBLE.format(source=str(path), rate="FMR", median=0.135, limit=0.05)
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read = read_rates(path, units="percent")
    assert read["fmr"].tolist() == [0.0012, 0.0015]


def test_annex15_raises_no_plausibility_warning(annex15_file):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_rates(annex15_file)


def test_the_command_line_warns_and_silences(tmp_path, capsys):
    path = tmp_path / "swapped.csv"
    SWAPPED.to_csv(path, index=False)
    assert main(["check", str(path)]) == 0
    err = capsys.readouterr().err
    expected = layouts.SWAPPED.format(source=str(path), count=4, cells=4, fmr=0.0175, fnmr=1e-4)
    assert err == f"audit: warning: {expected}\n"
    assert main(["check", "--fmr-above-fnmr", str(path)]) == 0
    assert capsys.readouterr().err == ""
