"""Replicates as counts over scores sorted once (audit.scores.weighted) against the oracle:
the statistics of the resampled rows themselves, built the ordinary way.

Every question of the statistics protocol, every operating point, rate table and score
measure must be the same, bit for bit, for the same draws: ties, distances, cross-group
pairs, a subject alone in its group, groups left without mated or non-mated scores by a
replicate, the subject and the comparison unit.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import synthetic
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.exceptions import AuditError, ParameterError, ScoresError
from audit.measures.registry import evaluate_scores
from audit.measures.scores import eer_table, sed_table
from audit.scores import (
    det_points,
    rates_at_fmr,
    read_scores,
    score_stats,
    sweep,
    thresholds_at_fmr,
)
from audit.scores import weighted as W
from audit.uncertainty import checks as UC
from audit.uncertainty import score_bootstrap
from audit.uncertainty.replicates import _aligned, _row_sampler, _score_results, _unit_sampler
from audit.validation import REFUSED

SAMPLER = {"subject": "subject_1", "group": "group_1", "mated": "mated", "algorithm": "algorithm"}


def table_from(rows, *, higher_is_match=True, algorithms=("a",)):
    """A validated score table from (algorithm, subject, group, other subject, other
    group, mated, score) rows; a mated row compares a subject with itself."""
    frame = pd.DataFrame(
        rows,
        columns=["algorithm", "subject_1", "group_1", "subject_2", "group_2", "mated", "score"],
    )
    frame["algorithm"] = [algorithms[a] for a in frame["algorithm"]]
    return read_scores(frame, higher_is_match=higher_is_match)


def same_answer(oracle, counted):
    """Call both; the same value (frames, arrays, tuples) or the same refusal, and the same
    warnings."""
    out = []
    for call in (oracle, counted):
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            try:
                value = call()
            except (AuditError, ValueError) as error:  # the same refusal either way
                value = (type(error), str(error))
        out.append((value, [(w.category, str(w.message)) for w in said]))
    (a, warned_a), (b, warned_b) = out
    assert warned_a == warned_b
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
        assert a.attrs == b.attrs
    elif isinstance(a, tuple) and isinstance(a[0], type):
        assert a == b
    else:
        np.testing.assert_array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object))


def assert_same_statistics(oracle, counted, probes):
    """Every question of the protocol, asked of both, at internal thresholds ``probes``."""
    assert list(oracle.algorithms) == list(counted.algorithms)
    assert list(oracle.groups) == list(counted.groups)
    assert oracle.higher_is_match == counted.higher_is_match
    assert oracle.attributes == counted.attributes
    assert oracle.rates_held() == counted.rates_held()
    for a in range(len(oracle.algorithms)):
        np.testing.assert_array_equal(oracle.n_mated(a), counted.n_mated(a))
        np.testing.assert_array_equal(oracle.n_nonmated(a), counted.n_nonmated(a))
        assert oracle.n_pooled_nonmated(a) == counted.n_pooled_nonmated(a)
        for mine, theirs in zip(oracle.counts(a, probes), counted.counts(a, probes), strict=True):
            np.testing.assert_array_equal(mine, theirs)
            assert mine.dtype == theirs.dtype
        if any(len(s) for s in oracle.segments(a)):
            assert oracle.score_range(a) == counted.score_range(a)
            np.testing.assert_array_equal(
                oracle.smallest_at_or_above(a, probes), counted.smallest_at_or_above(a, probes)
            )
        n = oracle.n_pooled_nonmated(a)
        if n:
            kk = np.arange(n)
            np.testing.assert_array_equal(oracle.cut_points(a, kk), counted.cut_points(a, kk))
        n_mated, n_nonmated = oracle.n_mated(a), oracle.n_nonmated(a)
        for g in range(len(oracle.groups)):
            if n_mated[g] and n_nonmated[g]:
                assert oracle.equal_error(a, g) == counted.equal_error(a, g)
            k = np.arange(n_mated[g] + n_nonmated[g] + 2)
            np.testing.assert_array_equal(
                oracle.order_statistics(a, g, k), counted.order_statistics(a, g, k)
            )


def assert_same_results(oracle, counted):
    """Operating points, rates, EERs, SED_G terms, DET points and every score measure."""
    for function in (
        lambda s: thresholds_at_fmr(s, [0.01, 0.2, 0.5, 1.0]),
        lambda s: sweep(s, [0.05, 0.25, 0.5, 1.0]),
        lambda s: rates_at_fmr(s, 0.2),
        eer_table,
        sed_table,
        lambda s: det_points(s, n_points=7),
        evaluate_scores,
    ):
        same_answer(lambda f=function: f(oracle), lambda f=function: f(counted))


def probes_of(table):
    """Internal thresholds at, just below and just above every score, and the infinities."""
    values = table["score"].to_numpy(dtype="float64")
    values = values if table.attrs["higher_is_match"] else -values
    values = np.unique(values)
    return np.concatenate(
        [values, np.nextafter(values, np.inf), np.nextafter(values, -np.inf), [-np.inf, np.inf]]
    )


def replicates_agree(table, unit, seed, n=3, results=True):
    """``n`` replicates drawn both ways from one seed: the same statistics."""
    units, n_units, counts = _unit_sampler(table, unit=unit, **SAMPLER)
    base = W.sorted_scores(table, units, n_units)
    rows = _row_sampler(table, unit=unit, **SAMPLER)
    by_counts, by_rows = np.random.default_rng(seed), np.random.default_rng(seed)
    probes = probes_of(table)
    for _ in range(n):
        counted = base.replicate(counts(by_counts))
        oracle = score_stats(table.iloc[rows(by_rows)].reset_index(drop=True))
        assert_same_statistics(oracle, counted, probes)
        if results:
            assert_same_results(oracle, counted)


# ------------------------------------------------------------------ small cases by hand

#: (algorithm, subject, group, other subject, other group, mated, score)
TIES_AND_CROSS = [
    (0, "f1", "F", "f1", "F", True, 0.9),
    (0, "f1", "F", "f1", "F", True, 0.5),
    (0, "f1", "F", "f2", "F", False, 0.5),
    (0, "f1", "F", "m1", "M", False, 0.5),  # a cross-group pair, tied
    (0, "f2", "F", "f2", "F", True, 0.5),
    (0, "f2", "F", "f1", "F", False, 0.2),
    (0, "f2", "F", "f3", "F", False, 0.5),
    (0, "f3", "F", "f3", "F", True, 0.7),
    (0, "f3", "F", "f1", "F", False, 0.1),
    (0, "m1", "M", "m1", "M", True, 0.8),  # the only subject of group M
    (0, "m1", "M", "m1", "M", True, 0.5),
    (0, "m1", "M", "f2", "F", False, 0.9),  # cross-group, above every within-group one
    (0, "m1", "M", "m1", "M", False, 0.5),
    (0, "m1", "M", "m1", "M", False, 0.3),
    (1, "f1", "F", "f1", "F", True, 0.6),
    (1, "f1", "F", "f2", "F", False, 0.6),
    (1, "f2", "F", "f2", "F", True, 0.4),
    (1, "f3", "F", "f1", "F", False, 0.4),
    (1, "m1", "M", "m1", "M", True, 0.4),
    (1, "m1", "M", "m1", "M", False, 0.4),
    (1, "m1", "M", "f3", "F", False, 0.6),
]


@pytest.mark.parametrize("higher_is_match", [True, False], ids=["similarity", "distance"])
@pytest.mark.parametrize("unit", ["subject", "comparison"])
def test_ties_cross_pairs_and_a_lone_subject(unit, higher_is_match):
    rows = TIES_AND_CROSS
    if not higher_is_match:  # the same comparisons as distances
        rows = [(*row[:6], 1.0 - row[6]) for row in rows]
    table = table_from(rows, higher_is_match=higher_is_match, algorithms=("a", "b"))
    for seed in range(8):
        replicates_agree(table, unit, seed, n=4)


def test_every_subject_in_one_group():
    table = table_from(
        [row for row in TIES_AND_CROSS if row[2] == row[4] == "F"], algorithms=("a", "b")
    )
    assert list(table["group_1"].cat.categories) == ["F"]
    for unit in ("subject", "comparison"):
        for seed in range(5):
            replicates_agree(table, unit, seed)


def test_counts_of_ones_are_the_table():
    """Every unit drawn once: the table's own statistics (the point estimate)."""
    table = read_scores(synthetic(300, round_to=1, subjects=True))
    units, n_units, _ = _unit_sampler(table, unit="subject", **SAMPLER)
    counted = W.sorted_scores(table, units, n_units).replicate(np.ones(n_units, dtype=np.int64))
    assert_same_statistics(score_stats(table), counted, probes_of(table))
    assert_same_results(score_stats(table), counted)


def test_a_replicate_counts_each_drawn_row():
    table = read_scores(
        pd.DataFrame(
            {
                "algorithm": "a",
                "group": ["F", "F", "M", "M"],
                "score": [0.9, 0.1, 0.8, 0.3],
                "mated": [True, False, True, False],
            }
        )
    )
    counted = W.sorted_scores(table).replicate(np.array([3, 0, 1, 2]))
    assert counted.n_mated(0).tolist() == [3, 1]
    assert counted.n_nonmated(0).tolist() == [0, 2]
    fm, fnm, cross = counted.counts(0, [0.5])
    assert fm.tolist() == [[0], [0]] and fnm.tolist() == [[0], [0]] and cross.tolist() == [0]
    assert counted.score_range(0) == (0.3, 0.9)  # 0.1 was not drawn


# ---------------------------------------------------------------------- property test


@st.composite
def score_tables(draw):
    """Small score tables: ties (scores on a grid of halves), 1 or 2 algorithms, 1 to 3
    groups of 1 to 3 subjects, cross-group non-mated pairs, similarities or distances."""
    n_groups = draw(st.integers(1, 3))
    subjects = [
        (f"{group}{i}", group) for group in "FMX"[:n_groups] for i in range(draw(st.integers(1, 3)))
    ]
    n_algorithms = draw(st.integers(1, 2))
    row = st.tuples(
        st.integers(0, n_algorithms - 1),
        st.sampled_from(subjects),
        st.sampled_from(subjects),
        st.booleans(),
        st.integers(-4, 4),
    )
    rows = []
    for algorithm, (s1, g1), (s2, g2), mated, score in draw(st.lists(row, min_size=4, max_size=40)):
        if mated:
            s2, g2 = s1, g1
        rows.append((algorithm, s1, g1, s2, g2, mated, score / 2))
    return table_from(rows, higher_is_match=draw(st.booleans()), algorithms=("a", "b"))


@settings(max_examples=60, deadline=None)
@given(score_tables(), st.sampled_from(["subject", "comparison"]), st.integers(0, 2**32 - 1))
def test_property_counted_replicates_are_the_resampled_rows(table, unit, seed):
    replicates_agree(table, unit, seed, n=2)


# ------------------------------------------------------------------- the bootstrap


@pytest.mark.parametrize("unit", ["subject", "comparison"])
def test_score_bootstrap_gives_the_same_result_either_way(unit):
    table = read_scores(synthetic(400, round_to=1, subjects=True))
    results = {
        how: score_bootstrap(
            table,
            lambda s: rates_at_fmr(s, 0.05),
            score_measures=evaluate_scores,
            unit=unit,
            replicate_as=how,
            subject="subject_1",
            group="group_1",
            n_replicates=30,
            seed=7,
        )
        for how in ("table", "statistics")
    }
    by_rows, by_counts = results["table"], results["statistics"]
    for name in ("intervals", "ranking", "ranking_summary", "statistics", "frontier"):
        pd.testing.assert_frame_equal(getattr(by_rows, name), getattr(by_counts, name))
    pd.testing.assert_frame_equal(by_rows.replicate_statistics, by_counts.replicate_statistics)
    np.testing.assert_array_equal(by_rows.fmr, by_counts.fmr)
    np.testing.assert_array_equal(by_rows.fnmr, by_counts.fnmr)
    assert by_rows.params == by_counts.params


def test_replicate_as_refusals():
    table = read_scores(synthetic(100, subjects=True))
    rates = lambda s: rates_at_fmr(s, 0.1)  # noqa: E731
    with pytest.raises(ParameterError) as error:
        score_bootstrap(table, rates, replicate_as="rows", subject="subject_1", group="group_1")
    assert str(error.value) == REFUSED.format(
        name="replicate_as", expected="one of 'table', 'statistics'", value="rows"
    )
    plain = pd.DataFrame(table).assign(group_1=table["group_1"].astype(str))
    with pytest.raises(ScoresError) as error:
        score_bootstrap(
            plain, rates, replicate_as="statistics", subject="subject_1", group="group_1"
        )
    assert str(error.value) == UC.NOT_READ_SCORES.format(
        column="group_1", problem=f"of dtype {plain['group_1'].dtype}, not categorical"
    )
    with pytest.raises(ScoresError) as error:
        score_bootstrap(
            table.drop(columns="group_2"),
            rates,
            replicate_as="statistics",
            subject="subject_1",
            group="group_1",
        )
    assert str(error.value) == UC.NOT_READ_SCORES.format(column="group_2", problem="missing")


def test_counts_and_units_refusals():
    table = read_scores(synthetic(50, algorithms=("a",)))
    base = W.sorted_scores(table)
    with pytest.raises(ScoresError) as error:
        base.replicate(np.ones(3, dtype=np.int64))
    assert str(error.value) == W.BAD_COUNTS.format(
        units=len(table), problem="an array of shape (3,) and dtype int64"
    )
    counts = np.ones(len(table), dtype=np.int64)
    counts[4] = -1
    with pytest.raises(ScoresError) as error:
        base.replicate(counts)
    assert str(error.value) == W.BAD_COUNTS.format(units=len(table), problem="the count -1")
    with pytest.raises(ScoresError) as error:
        W.sorted_scores(table, np.zeros(len(table)))
    assert str(error.value) == W.BAD_UNITS.format(
        rows=len(table), problem=f"an array of shape ({len(table)},) and dtype float64"
    )
    with pytest.raises(ScoresError) as error:
        W.sorted_scores(table, np.arange(len(table)), 10)
    assert str(error.value) == W.BAD_UNITS.format(
        rows=len(table), problem=f"units from 0 to {len(table) - 1} for 10 units"
    )


def test_rates_and_score_rows_are_aligned_or_refused():
    algorithms, groups = pd.Index(["a", "b"]), pd.Index(["F", "M"])
    rates = pd.DataFrame(
        {
            "algorithm": ["b", "a", "b", "a", "c"],
            "group": ["M", "F", "F", "M", "F"],
            "fmr": [0.4, 0.1, 0.3, 0.2, 0.9],
            "fnmr": [0.04, 0.01, 0.03, 0.02, 0.09],
        }
    )
    fmr, fnmr = _aligned(rates, algorithms, groups, 3)
    assert fmr.tolist() == [[0.1, 0.2], [0.3, 0.4]]  # the row of algorithm c is left out
    assert fnmr.tolist() == [[0.01, 0.02], [0.03, 0.04]]
    with pytest.raises(ValueError) as error:
        _aligned(rates.iloc[1:], algorithms, groups, 3)
    assert str(error.value) == UC.RATES_MISSING.format(replicate=3, what="('b', 'M')")
    with pytest.raises(ValueError) as error:
        _aligned(pd.concat([rates, rates.iloc[[2]]]), algorithms, groups, 3)
    assert str(error.value) == UC.RATES_TWICE.format(replicate=3, what="('b', 'F')")
    rows = pd.DataFrame(
        {
            "algorithm": ["b", "a", "a", "b"],
            "measure": ["x", "x", "y", "y"],
            "value": [2.0, 1.0, np.nan, 4.0],
        }
    )
    found = _score_results(rows, algorithms, 0)
    assert list(found) == ["x", "y"]
    assert found["x"]["value"].tolist() == [1.0, 2.0]
    assert found["y"]["undefined"].tolist() == [True, False]
    assert np.isnan(found["x"]["fmr_term"]).all()
    with pytest.raises(ValueError) as error:
        _score_results(rows.iloc[:3], algorithms, 0)
    assert str(error.value) == UC.RATES_MISSING.format(replicate=0, what="measure 'y'")
    with pytest.raises(ValueError) as error:
        _score_results(pd.concat([rows, rows.iloc[[0]]]), algorithms, 0)
    assert str(error.value) == UC.RATES_TWICE.format(replicate=0, what="measure 'x'")
