"""Score sets that are read but thin: a group's rate resting on fewer than 100
comparisons of a kind, a subject found in two groups -- each warned with the numbers."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from audit import read_scores
from audit.tables import scores as S

pytestmark = pytest.mark.usefixtures("shared_server")  # one server for its reports


def frame(n_mated: dict[str, int], n_nonmated: dict[str, int]) -> pd.DataFrame:
    rows = []
    for group, n in n_mated.items():
        rows += [("a", group, 0.9, True, f"{group}{i}", f"{group}{i}") for i in range(n)]
    for group, n in n_nonmated.items():
        rows += [("a", group, 0.1, False, f"{group}{i}", f"{group}{i + 1}") for i in range(n)]
    return pd.DataFrame(
        rows, columns=["algorithm", "group", "score", "mated", "subject_1", "subject_2"]
    )


def thin(table: pd.DataFrame) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read_scores(table)
    return [str(w.message) for w in caught if issubclass(w.category, S.ScoresWarning)]


@pytest.mark.parametrize(
    ("mated", "nonmated", "cases"),
    [
        ({"F": 30, "M": 200}, {"F": 500, "M": 500}, ["'a', 'F': 30 mated"]),
        ({"F": 200, "M": 200}, {"F": 99, "M": 500}, ["'a', 'F': 99 within-group non-mated"]),
        ({"F": 1, "M": 5}, {"F": 500, "M": 500}, ["'a', 'F': 1 mated", "'a', 'M': 5 mated"]),
    ],
)
def test_few_comparisons_are_warned_with_the_numbers(mated, nonmated, cases):
    assert thin(frame(mated, nonmated)) == [
        S.FEW_COMPARISONS.format(
            source="<DataFrame>", count=len(cases), few=100, cases="; ".join(cases)
        )
    ]


def test_a_hundred_of_each_kind_is_enough():
    assert thin(frame({"F": 100, "M": 100}, {"F": 100, "M": 100})) == []


def test_a_subject_in_two_groups_is_warned():
    table = frame({"F": 150, "M": 150}, {"F": 150, "M": 150})
    table.loc[table["group"] == "M", ["subject_1", "subject_2"]] = table.loc[
        table["group"] == "M", ["subject_1", "subject_2"]
    ].replace({"M0": "F0", "M7": "F7"})
    assert thin(table) == [
        S.SUBJECT_IN_TWO_GROUPS.format(
            source="<DataFrame>", count=2, cases="'F0' in ['F', 'M']; 'F7' in ['F', 'M']"
        )
    ]


@pytest.mark.parametrize("block", [1, 7, 128])
def test_the_counts_are_those_of_the_whole_table_whatever_the_block(monkeypatch, block):
    """The table is counted a block of rows at a time (the memory of a block, not several
    times the table's): blocks of any size, rows of a group and a subject's two groups
    across their edges, give the warnings of the whole table at once."""
    table = frame({"F": 30, "M": 200, "X": 99}, {"F": 500, "M": 99, "X": 40})
    table = table.sample(frac=1, random_state=0).reset_index(drop=True)
    at = table.index[table["group"] == "X"][-1]
    table.loc[at, ["subject_1", "subject_2"]] = "F0"
    whole = thin(table)
    cases = whole[0].split("more than 1%: ")[1].split("; ")
    assert sorted(cases) == sorted(
        ["'a', 'F': 30 mated", "'a', 'X': 99 mated", "'a', 'M': 99 within-group non-mated"]
        + ["'a', 'X': 40 within-group non-mated"]
    )
    assert whole[1] == S.SUBJECT_IN_TWO_GROUPS.format(
        source="<DataFrame>", count=1, cases="'F0' in ['X', 'F']"
    )
    monkeypatch.setattr(S, "_THIN_BLOCK", block)
    assert thin(table) == whole
    # no row (a regrouping may leave none): nothing to warn of
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        empty = read_scores(table).iloc[:0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        S.warn_thin(empty)


@pytest.mark.slow
def test_the_warnings_reach_the_report_front_page(tmp_path):
    from audit.cli import main

    path = tmp_path / "thin.csv"
    frame({"F": 30, "M": 200}, {"F": 500, "M": 500}).to_csv(path, index=False)
    argv = ["scores", str(path), "--reports-dir", str(tmp_path / "r"), "--no-progress"]
    assert main([*argv, "-p", "bootstrap_replicates", "0", "--target-fmr", "0.01"]) == 0
    # the notebook shows the warning as a sentence, without the path of its input copy
    expected = S.FEW_COMPARISONS.format(source="", count=1, few=100, cases="'a', 'F': 30 mated")
    recorded = pd.read_csv(tmp_path / "r" / "thin" / "tables" / "warnings_scores.csv")
    assert expected.removeprefix(": ") + "." in set(recorded["sentence"])
    page = (tmp_path / "r" / "thin" / "index.html").read_text(encoding="utf-8")
    assert "rest on fewer than 100 comparisons" in page and "30 mated" in page
