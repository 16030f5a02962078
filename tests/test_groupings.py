"""A score table read once with every attribute, regrouped: equal to reading it again
with fewer attributes (audit.tables.groupings.regroup)."""

from __future__ import annotations

import itertools
import warnings

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.exceptions import ParameterError
from audit.scores import read_scores
from audit.tables.groupings import BAD_GROUPING, regroup
from audit.tables.scores import ScoresWarning

ATTRIBUTES = ("gender", "race", "age")


def assert_read_again(frame, attributes, wanted):
    """``regroup`` of the table read with ``attributes`` is the table read with ``wanted``."""
    every = read_scores(frame, attributes=list(attributes))
    unused = [
        f"{name}{side}" for name in attributes if name not in wanted for side in "_1 _2".split()
    ]
    again = read_scores(frame, attributes=list(wanted), ignore=unused)
    mine = regroup(every, wanted)
    pd.testing.assert_frame_equal(mine, again, check_exact=True)
    assert mine.attrs == again.attrs
    for column in ("group_1", "group_2"):
        assert mine[column].cat.codes.dtype == again[column].cat.codes.dtype
    assert mine.attrs["source"] == every.attrs["source"]


def two_sided():
    """Cross-group pairs that become within-group pairs for a coarser grouping, and a
    first side that does not show every label (the second side brings 'x')."""
    return pd.DataFrame(
        {
            "algorithm": ["a", "a", "a", "b", "b", "a"],
            "score": [0.9, 0.2, 0.4, 0.8, 0.1, 0.3],
            "mated": [True, False, False, True, False, False],
            "gender_1": ["m", "f", "m", "f", "f", "m"],
            "gender_2": ["m", "m", "f", "f", "x", "m"],
            "race_1": ["B", "W", "W", "B", "A", "A"],
            "race_2": ["B", "W", "A", "B", "W", "W"],
            "age_1": ["o", "y", "y", "o", "o", "y"],
            "age_2": ["o", "o", "y", "o", "y", "y"],
        }
    )


@pytest.mark.parametrize(
    "wanted",
    [w for n in (1, 2, 3) for w in itertools.permutations(ATTRIBUTES, n)],
    ids="-".join,
)
def test_regroup_is_reading_again(wanted):
    assert_read_again(two_sided(), ATTRIBUTES, wanted)


def said(call):
    """The warnings ``call()`` gives, as (category, message)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [(w.category, str(w.message)) for w in caught]


@pytest.mark.filterwarnings("ignore::audit.tables.scores.ScoresWarning")
def test_regroup_warns_as_reading_again():
    """Thin groups and subjects in two groups are warned of for the grouping read."""
    frame = two_sided().assign(
        subject_1=["s1", "s2", "s1", "s3", "s2", "s4"],
        subject_2=["s1", "s4", "s3", "s3", "s5", "s4"],
    )
    every = read_scores(frame, attributes=list(ATTRIBUTES))
    # s1 is (m, B) in one comparison and (m, W) in another: in two groups by both
    # attributes, in one by gender; every group is thin
    for wanted, count in ((("gender",), 1), (("race",), 2), (("gender", "race"), 2)):
        unused = [f"{a}{s}" for a in ATTRIBUTES if a not in wanted for s in ("_1", "_2")]
        again = said(lambda w=wanted, u=unused: read_scores(frame, attributes=list(w), ignore=u))
        assert said(lambda w=wanted: regroup(every, w)) == again
        assert [category for category, _ in again] == [ScoresWarning] * count


def test_regroup_to_its_own_attributes_is_the_table():
    table = read_scores(two_sided(), attributes=["gender", "race"], ignore=["age_1", "age_2"])
    assert regroup(table, ["gender", "race"]) is table


@pytest.mark.parametrize("wanted", [[], ["age"], ["gender", "gender"], "gender"])
def test_regroup_refuses_what_the_table_does_not_hold(wanted):
    table = read_scores(two_sided(), attributes=["gender", "race"], ignore=["age_1", "age_2"])
    with pytest.raises(ParameterError) as error:
        regroup(table, wanted)
    assert str(error.value) == BAD_GROUPING.format(have=["gender", "race"], value=wanted)


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from("fm"),
            st.sampled_from("fm"),
            st.sampled_from("ABC"),
            st.sampled_from("ABC"),
            st.booleans(),
        ),
        min_size=1,
        max_size=30,
    ),
    st.sampled_from([("gender",), ("race",), ("race", "gender")]),
)
def test_property_regroup_is_reading_again(rows, wanted):
    frame = pd.DataFrame(rows, columns=["gender_1", "gender_2", "race_1", "race_2", "mated"])
    mated = frame["mated"]
    frame.loc[mated, "gender_2"] = frame.loc[mated, "gender_1"]  # a mated pair: one person
    frame.loc[mated, "race_2"] = frame.loc[mated, "race_1"]
    frame = frame.assign(algorithm="a", score=range(len(frame)))
    assert_read_again(frame, ("gender", "race"), wanted)
