"""Group orderings (audit.analysis.orderings): a hand-computed table with ties, a literal
oracle on random tables, the calibrated cell of FRVT 1:1, and the front page's section
(its data, its text, escaped)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_frontpage import _section, _text

from audit.analysis.orderings import (
    ABOVE,
    TIED,
    group_extremes,
    group_orderings,
    ordering_counts,
)
from audit.report.frontpage import front_page, orderings_data
from audit.report.outputs import merge_outputs, recording, save_table
from audit.tables.rates import read_rates

#: Three algorithms x three groups. FMR: a strict F > X > M; b ties F and M at the bottom;
#: c like a. FNMR: a ties all three; b M > F = X; c M > F = X.
HAND = pd.DataFrame(
    {
        "Algorithm": ["a", "b", "c"],
        "FMR.F": [3e-4, 1e-4, 5e-4],
        "FMR.M": [1e-4, 1e-4, 2e-4],
        "FMR.X": [2e-4, 2e-4, 3e-4],
        "FNMR.F": [0.02, 0.01, 0.01],
        "FNMR.M": [0.02, 0.03, 0.05],
        "FNMR.X": [0.02, 0.01, 0.01],
    }
)


@pytest.fixture(scope="module")
def hand():
    return read_rates(HAND)


def test_each_algorithms_ordering_by_hand(hand):
    got = group_orderings(hand)
    assert got[
        ["rate", "algorithm", "ordering", "worst", "best", "tiers", "strict"]
    ].values.tolist() == [
        ["fmr", "a", "F > X > M", "F", "M", 3, True],
        ["fmr", "b", "X > F = M", "X", "F = M", 2, False],
        ["fmr", "c", "F > X > M", "F", "M", 3, True],
        ["fnmr", "a", "F = M = X", "F = M = X", "F = M = X", 1, False],
        ["fnmr", "b", "M > F = X", "M", "F = X", 2, False],
        ["fnmr", "c", "M > F = X", "M", "F = X", 2, False],
    ]


def test_worst_and_best_by_hand(hand):
    got = group_extremes(hand).set_index(["rate", "group"])
    columns = ["worst", "worst_tied", "best", "best_tied", "algorithms"]
    assert got[columns].to_dict("index") == {
        ("fmr", "F"): dict(zip(columns, [2, 0, 0, 1, 3], strict=True)),
        ("fmr", "M"): dict(zip(columns, [0, 0, 2, 1, 3], strict=True)),
        ("fmr", "X"): dict(zip(columns, [1, 0, 0, 0, 3], strict=True)),
        # a: all three tied at both ends; b and c: M worst alone, F and X tied best
        ("fnmr", "F"): dict(zip(columns, [0, 1, 0, 3, 3], strict=True)),
        ("fnmr", "M"): dict(zip(columns, [2, 1, 0, 1, 3], strict=True)),
        ("fnmr", "X"): dict(zip(columns, [0, 1, 0, 3, 3], strict=True)),
    }
    assert got.loc[("fmr", "F"), "share_worst"] == pytest.approx(2 / 3)


def test_ordering_counts_by_hand(hand):
    counts = ordering_counts(group_orderings(hand))
    assert counts[
        ["rate", "rank", "ordering", "count", "strict", "algorithms"]
    ].values.tolist() == [
        ["fmr", 1, "F > X > M", 2, True, "a, c"],
        ["fmr", 2, "X > F = M", 1, False, "b"],
        ["fnmr", 1, "M > F = X", 2, False, "b, c"],
        ["fnmr", 2, "F = M = X", 1, False, "a"],
    ]
    assert counts.attrs["distinct"] == {"fmr": 2, "fnmr": 2}
    assert counts.attrs["algorithms"] == {"fmr": 3, "fnmr": 3}


def _oracle(rates: dict[str, float]) -> str:
    """The ordering written out literally: every pair of groups compared, tiers by the number
    of groups with a strictly higher rate."""
    above = {g: sum(rates[h] > rates[g] for h in rates) for g in rates}
    tiers = sorted(set(above.values()))
    return ABOVE.join(TIED.join(g for g in rates if above[g] == t) for t in tiers)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 5).flatmap(
        lambda n: st.lists(
            st.lists(st.sampled_from([1e-5, 2e-5, 5e-5, 1e-4]), min_size=n, max_size=n),
            min_size=1,
            max_size=6,
        )
    )
)
def test_orderings_match_a_literal_oracle(rows):
    groups = [f"G{j}" for j in range(len(rows[0]))]
    frame = pd.DataFrame(rows, columns=[f"FMR.{g}" for g in groups])
    frame.insert(0, "Algorithm", [f"a{i}" for i in range(len(rows))])
    table = read_rates(frame)
    got = group_orderings(table)
    expected = [_oracle(dict(zip(groups, r, strict=True))) for r in rows]
    assert got["ordering"].tolist() == expected
    extremes = group_extremes(table)
    unique_max = sum(list(r).count(max(r)) == 1 for r in rows)
    assert extremes["worst"].sum() == unique_max
    assert (extremes["worst"] + extremes["worst_tied"]).sum() == sum(
        list(r).count(max(r)) for r in rows
    )
    counts = ordering_counts(got)
    assert counts["count"].sum() == len(rows)
    assert counts.attrs["distinct"]["fmr"] == len(set(expected))
    assert counts["count"].is_monotonic_decreasing


def test_frvt11_calibrated_cell_is_never_the_worst(frvt11):
    extremes = group_extremes(frvt11).set_index("group")
    assert extremes.loc["M.White", "worst"] == 0
    assert extremes.loc["M.White", "worst_tied"] == 0
    counts = ordering_counts(group_orderings(frvt11))
    assert counts.attrs["algorithms"] == {"fmr": 240}
    # 4 groups allow 24 strict orderings (75 with ties): far fewer than 240 algorithms
    assert counts.attrs["distinct"]["fmr"] <= 75


def _folder(tmp_path, table):
    """The two tables, declared as a notebook declares them (in the manifest's outputs)."""
    orderings = group_orderings(table)
    (tmp_path / "manifest.json").write_text("{}")
    with recording("test", tmp_path):
        save_table(group_extremes(table), "group_extremes", tmp_path)
        save_table(ordering_counts(orderings), "group_orderings", tmp_path)
    merge_outputs(tmp_path, ["test"])
    return tmp_path


def test_front_page_section_from_the_tables(tmp_path, hand):
    folder = _folder(tmp_path, hand)
    data = orderings_data(folder)
    assert [r["rate"] for r in data["rates"]] == ["FMR", "FNMR"]
    assert data["rates"][0]["distinct"] == 2 and data["rates"][0]["algorithms"] == 3
    assert data["rates"][0]["top"][0] == {
        "ordering": "F > X > M",
        "count": 2,
        "share": pytest.approx(2 / 3),
        "algorithms": ["a", "c"],
    }
    text = _text(_section(front_page(folder, title="t"), "orderings"))
    assert text.startswith(
        "FMR F has the highest FMR alone for 2 of 3 algorithms, M the lowest alone for 2. "
        "The 3 algorithms order the groups in 2 distinct ways."
    )
    assert "F > X > M : 2 algorithms (a, c)" in text


def test_front_page_section_escapes_group_and_algorithm_names(tmp_path):
    hostile = "<script>x</script>"
    table = read_rates(
        pd.DataFrame({"algorithm": [hostile] * 2, "group": [hostile, "B"], "fmr": [2e-4, 1e-4]})
    )
    page = front_page(_folder(tmp_path, table), title="t")
    assert "<script>" not in page
    assert "&lt;script&gt;x&lt;/script&gt; &gt; B" in page


def test_many_groups_give_nearly_one_ordering_each(tmp_path):
    """50 cells, as NIST's: every algorithm its own ordering; the page says so."""
    rng = np.random.default_rng(0)
    groups = [f"c{j:02d}" for j in range(50)]
    frame = pd.DataFrame(rng.uniform(1e-5, 1e-3, (30, 50)), columns=[f"FMR.{g}" for g in groups])
    frame.insert(0, "Algorithm", [f"a{i}" for i in range(30)])
    folder = _folder(tmp_path, read_rates(frame))
    data = orderings_data(folder)
    assert data["rates"][0]["distinct"] == 30
    assert len(data["rates"][0]["top"]) == 5
    text = _text(_section(front_page(folder, title="t"), "orderings"))
    assert (
        "The 30 algorithms order the groups in 30 distinct ways (the 5 most frequent are "
        "shown; nearly one per algorithm)." in text
    )


def test_orderings_do_not_depend_on_the_order_of_the_rows():
    rows = HAND.iloc[[2, 0, 1]].reset_index(drop=True)
    first = group_orderings(read_rates(HAND)).set_index(["rate", "algorithm"])["ordering"]
    second = group_orderings(read_rates(rows)).set_index(["rate", "algorithm"])["ordering"]
    assert first.sort_index().equals(second.sort_index())
    assert list(itertools.islice(second.index, 3)) == [("fmr", "c"), ("fmr", "a"), ("fmr", "b")]
