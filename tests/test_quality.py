"""Data-quality audit of a rates table."""

from __future__ import annotations

import pandas as pd
import pytest

from audit.analysis import quality
from audit.tables.rates import read_rates
from audit.validation import REFUSED


@pytest.fixture(scope="module")
def report(annex15):
    return quality.data_quality(annex15).set_index(["rate", "check"])


def test_annex15_fmr_floor(report):
    # data README: 334 of 1,008 FMR cells at 1e-5; 118 of 126 algorithms with a floored group
    floor = report.loc[("fmr", "floor")]
    assert floor["value"] == 1e-5
    assert (floor["cells"], floor["total_cells"]) == (334, 1008)
    assert (floor["algorithms"], floor["total_algorithms"]) == (118, 126)
    affected = floor["affects"].split(", ")
    assert {"ir", "ser", "nrb", "nrb_fmr", "garbe"} <= set(affected)
    assert "fdr" not in affected and "nrb_fnmr" not in affected


def test_annex15_quantisation(report):
    assert report.loc[("fmr", "decade_grid"), "value"] == 0.1
    assert report.loc[("fmr", "distinct_values"), "value"] == 19
    assert pd.isna(report.loc[("fnmr", "decade_grid"), "value"])
    # FNMR has 4 decimals, except one cell (amplifiedgroup-001, M.Black: 0.02553)
    decimals = report.loc[("fnmr", "decimals")]
    assert (decimals["value"], decimals["cells"]) == (4, 1)


def test_annex15_zeros_and_ones(report):
    assert report.loc[("fmr", "zero"), "cells"] == 0
    assert report.loc[("fnmr", "zero"), "cells"] == 0
    assert report.loc[("fnmr", "one"), "cells"] == 1  # e.g. chtface-001
    assert pd.isna(report.loc[("fnmr", "floor"), "value"])


def test_annex15_flags(report):
    # what a reader must know: the FMR grid and floor, FNMR's 4 decimals, the FNMR of 1
    flagged = report.index[report["flagged"]].tolist()
    assert flagged == [
        ("fmr", "decade_grid"),
        ("fmr", "floor"),
        ("fnmr", "decimals"),
        ("fnmr", "one"),
    ]


def test_zeros_name_the_measures_undefined_at_zero():
    t = read_rates(
        pd.DataFrame(
            {
                "algorithm": ["a"] * 3,
                "group": ["F", "M", "X"],
                "fmr": [1e-4, 2e-4, 3e-4],
                "fnmr": [0.0, 0.01, 0.02],
            }
        )
    )
    zero = quality.data_quality(t, ["fdr", "ir", "garbe", "nrb"]).set_index(["rate", "check"])
    assert zero.loc[("fnmr", "zero"), "affects"] == "ir, nrb"


def test_floor_sensitivity_on_annex15(annex15):
    s = quality.floor_sensitivity(annex15, ["fdr", "ir", "garbe"]).set_index("measure")
    assert not s.loc["fdr", "affected"]
    assert s.loc["ir", "fraction_changed"] == pytest.approx(118 / 126)
    assert s.loc["ir", "max_change"] == pytest.approx(
        10**0.5 - 1
    )  # alpha 0.5: A x 10 -> IR x sqrt(10)


def test_bad_factor(annex15):
    with pytest.raises(ValueError) as error:
        quality.floor_sensitivity(annex15, factor=0.5)
    assert str(error.value) == REFUSED.format(
        name="factor", expected="a number in (1, inf)", value=0.5
    )
