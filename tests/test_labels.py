"""Two spellings of one label are refused (or merged on request), never read as two
groups: case, white space, invisible characters and Unicode normalisation, in rates
(long and wide) and in scores (CSV and Parquet), from Python and the command line."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from audit import evaluate, read_rates, read_scores
from audit.cli import main
from audit.exceptions import RatesError, ScoresError
from audit.tables.labels import EDGE_SPACE, MERGED, SPELLINGS, LabelWarning, difference, label_key

#: (second spelling of "Black", how it differs) -- each a way a file can misspell a label.
SPELLING_CASES = [
    ("black", "case"),
    ("BLACK", "case"),
    ("Black ", "white space"),
    (" Black", "white space"),
    ("Bl ack", None),  # an inner space that is not a doubled one makes another label
    ("Black\u200b", "an invisible character"),
    ("\ufeffBlack", "an invisible character"),
    (" black", "white space and case"),
    # full-width letters (East Asian text): one character written two ways
    ("\uff22\uff4c\uff41\uff43\uff4b", "Unicode normalisation (one character written two ways)"),
    ("\uff42lack", "Unicode normalisation (one character written two ways) and case"),
]
CAFE = ("Caf\u00e9", "Cafe\u0301")  # é composed, and e + combining acute accent


def long_rates(groups_by_algorithm: dict[str, list[str]]) -> pd.DataFrame:
    """Two groups per algorithm, the second group's rates twice the first's."""
    rows = []
    for algorithm, groups in groups_by_algorithm.items():
        for i, group in enumerate(groups):
            rows.append((algorithm, group, 1e-4 * (i + 1), 0.01 * (i + 1)))
    return pd.DataFrame(rows, columns=["algorithm", "group", "fmr", "fnmr"])


@pytest.mark.parametrize(("second", "how"), SPELLING_CASES)
def test_two_spellings_in_a_long_rates_table_are_refused(second, how):
    frame = long_rates({"a": ["Black", "White"], "b": [second, "White"]})
    if how is None:  # another label: read as two groups, so algorithm b lacks "Black"
        with pytest.raises(RatesError, match="has no row for group"):
            read_rates(frame)
        return
    with pytest.raises(RatesError) as error:
        read_rates(frame)
    assert str(error.value) == SPELLINGS.format(
        source="<DataFrame>",
        column="group",
        kinds="groups",
        first="Black",
        first_where="<DataFrame>, row 0",
        second=second,
        second_where="<DataFrame>, row 2",
        how=how,
    )


def test_unicode_normalisation_is_one_label_in_a_csv(tmp_path):
    path = tmp_path / "cafe.csv"
    path.write_text(
        f"algorithm,group,fmr,fnmr\na,{CAFE[0]},0.0001,0.01\na,M,0.0002,0.02\n"
        f"b,{CAFE[1]},0.0001,0.01\nb,M,0.0002,0.02\n",
        encoding="utf-8",
    )
    with pytest.raises(RatesError) as error:
        read_rates(path)
    assert str(error.value) == SPELLINGS.format(
        source=str(path),
        column="group",
        kinds="groups",
        first=CAFE[0],
        first_where=f"{path}, line 2",
        second=CAFE[1],
        second_where=f"{path}, line 4",
        how="Unicode normalisation (one character written two ways)",
    )


def test_merged_on_request_the_numbers_are_those_of_one_spelling():
    """The example that moved GARBE from 1/3 to 0.3009: merged, the value is 1/3 again."""
    alike = long_rates({"a": ["Black", "White"], "b": ["Black", "White"]})
    spelt = long_rates({"a": ["Black", "White"], "b": ["black ", "White"]})
    with pytest.warns(LabelWarning) as caught:
        merged = read_rates(spelt, merge_labels=True)
    assert str(caught[0].message) == MERGED.format(
        source="<DataFrame>",
        column="group",
        kinds="groups",
        first="Black",
        first_where="<DataFrame>, row 0",
        second="black ",
        second_where="<DataFrame>, row 2",
        how="white space and case",
    )
    assert list(merged["group"]) == ["Black", "White", "Black", "White"]
    np.testing.assert_array_equal(
        evaluate(merged, "garbe")["value"], evaluate(read_rates(alike), "garbe")["value"]
    )
    assert evaluate(merged, "garbe")["value"].round(4).tolist() == [0.3333, 0.3333]


def test_a_lone_label_with_an_edge_space_is_read_as_written_with_a_warning():
    frame = long_rates({"a": ["F ", "M"], "b": ["F ", "M"]})
    with pytest.warns(LabelWarning) as caught:
        table = read_rates(frame)
    assert list(pd.unique(table["group"])) == ["F ", "M"]
    assert [str(w.message) for w in caught] == [
        EDGE_SPACE.format(
            source="<DataFrame>", column="group", label="F ", where="<DataFrame>, row 0"
        )
    ]


@pytest.mark.parametrize("label", ["red\x1b[31mX", "ding\x07", "a\x85b", "a\u2028b"])
def test_a_label_holding_a_control_character_is_read_as_written_with_a_warning(label):
    """A label with ESC, BEL, NEL or a line separator was read without a word, where one
    with a zero-width space was warned of (a tab or a line break within, which a quoted
    CSV cell holds, is white space)."""
    frame = long_rates({"a": [label, "M"], "b": [label, "M"]})
    with pytest.warns(LabelWarning) as caught:
        table = read_rates(frame)
    assert list(pd.unique(table["group"])) == [label, "M"]
    assert [str(w.message) for w in caught] == [
        EDGE_SPACE.format(
            source="<DataFrame>", column="group", label=label, where="<DataFrame>, row 0"
        )
    ]


def test_two_spellings_in_a_wide_header_are_refused():
    frame = pd.DataFrame(
        {"Algorithm": ["a"], "FMR.F": [1e-4], "FNMR.F": [0.01], "FMR.f": [2e-4], "FNMR.f": [0.02]}
    )
    with pytest.raises(RatesError) as error:
        read_rates(frame)
    assert str(error.value) == SPELLINGS.format(
        source="<DataFrame>",
        column="group",
        kinds="groups",
        first="F",
        first_where="header, column 'FMR.F'",
        second="f",
        second_where="header, column 'FMR.f'",
        how="case",
    )


def test_algorithm_names_are_labels_too():
    frame = long_rates({"vendor-1": ["F", "M"], "Vendor-1": ["F", "M"]})
    with pytest.raises(RatesError) as error:
        read_rates(frame)
    assert str(error.value) == SPELLINGS.format(
        source="<DataFrame>",
        column="algorithm",
        kinds="algorithms",
        first="vendor-1",
        first_where="<DataFrame>, row 0",
        second="Vendor-1",
        second_where="<DataFrame>, row 2",
        how="case",
    )


def scores_frame(second: str) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 400
    group = np.where(np.arange(n) % 2 == 0, "White", "Black").astype(object)
    group[np.arange(n) % 4 == 3] = second  # every other Black row spelt the other way
    mated = np.arange(n) % 5 == 0
    return pd.DataFrame(
        {
            "algorithm": "a",
            "score": rng.normal(size=n) + 2 * mated,
            "mated": mated,
            "group": group,
        }
    )


@pytest.mark.parametrize(("second", "how"), [c for c in SPELLING_CASES if c[1] is not None])
def test_two_spellings_in_scores_are_refused(second, how):
    with pytest.raises(ScoresError) as error:
        read_scores(scores_frame(second))
    assert str(error.value) == SPELLINGS.format(
        source="<DataFrame>",
        column="group",
        kinds="groups",
        first="Black",
        first_where="<DataFrame>, row 1",
        second=second,
        second_where="<DataFrame>, row 3",
        how=how,
    )


def test_scores_merged_on_request_equal_those_written_alike(tmp_path):
    from audit.scores import rates_at_fmr

    alike = rates_at_fmr(read_scores(scores_frame("Black")), 0.05)
    with pytest.warns(LabelWarning):
        merged = rates_at_fmr(read_scores(scores_frame("black"), merge_labels=True), 0.05)
    pd.testing.assert_frame_equal(merged.reset_index(drop=True), alike.reset_index(drop=True))
    path = tmp_path / "scores.parquet"
    scores_frame("black").to_parquet(path)
    with pytest.raises(
        ScoresError, match="the labels 'Black' .* and 'black' .* differ only by case"
    ):
        read_scores(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LabelWarning)
        from_parquet = rates_at_fmr(read_scores(path, merge_labels=True), 0.05)
    pd.testing.assert_frame_equal(from_parquet.reset_index(drop=True), alike.reset_index(drop=True))


def test_the_command_line_refuses_and_merges(tmp_path, capsys):
    path = tmp_path / "spelt.csv"
    long_rates({"a": ["Black", "White"], "b": ["black", "White"]}).to_csv(path, index=False)
    assert main(["check", str(path)]) == 3
    err = capsys.readouterr().err
    assert err.startswith(
        f"audit: error: {path}, column 'group': the labels 'Black' ({path}, line 2)"
    )
    assert "--merge-labels" in err
    assert main(["check", "--merge-labels", str(path)]) == 0
    captured = capsys.readouterr()
    assert "groups: Black, White" in captured.out
    assert "audit: warning: " in captured.err and "is read as 'Black'" in captured.err


def test_the_key_and_the_words():
    assert label_key("\u200bF. Black ") == label_key("f. black")
    assert label_key("F.Black") != label_key("F. Black")
    assert difference(*CAFE) == "Unicode normalisation (one character written two ways)"
    assert difference("a\u200b", "A") == "an invisible character and case"


@pytest.mark.parametrize(
    ("first", "second", "how"),
    [
        ("a  b", "A  B", "case"),  # the same run of spaces in both: was "white space and case"
        ("a\u3000b", "A\u3000B", "case"),
        ("a  b", "a b", "white space"),
        ("Black", " black", "white space and case"),
        ("Caf\u00e9", "cafe\u0301", "Unicode normalisation (one character written two ways) and case"),
        ("K1", "\u212a1", "Unicode normalisation (one character written two ways)"),  # Kelvin
        ("office", "o\ufb03ce", "Unicode normalisation (one character written two ways)"),
    ],
)  # fmt: skip
def test_what_tells_two_spellings_apart_is_only_what_differs(first, second, how):
    assert label_key(first) == label_key(second)
    assert difference(first, second) == difference(second, first) == how
