"""Property tests over the measure registry, in the manner of sklearn's tests/test_common.py.

Every registered measure, of every kind, declares in ``MeasureSpec.properties`` whether it
has each property of ``audit.measures.contract.PROPERTIES``; what a property means for a
measure of each kind is ``audit.measures.contract.PROPERTY_MEANINGS``.  One adapter per kind
(:class:`Rates`, :class:`Pairs`, :class:`Scores`) knows how to draw that kind's inputs, how to
evaluate a measure on them and how each property's transformation acts on them; one generic
test per property runs over every measure of every kind through its adapter.  For a measure
declared to have the property, Hypothesis looks for a counterexample; for a measure declared
to lack it, a seeded search must find one.

A completeness test makes sure no measure is left unclassified, including the user measures
of tests/user_measures, loaded here exactly as a user would load theirs, and that every kind
has an adapter: a measure registered later is checked by these tests without a line here.
Deliberately poor measures of the pair and score kinds (:data:`POOR`, not registered: other
tests count the registered measures of those kinds) give each adapter's declared-False side a
measure to check, as ``tests/user_measures/order_dependent.py`` does for the rate kind.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from audit.measures.contract import (
    PROPERTIES,
    PROPERTY_MEANINGS,
    MeasureSpec,
    PairMeasure,
    RateMeasure,
    ScoreMeasure,
    TableMeasure,
)
from audit.measures.kernels import MeasureResult
from audit.measures.registry import get_measure, load_measure_module, measure_names
from audit.scores import ScoreStats, score_stats
from audit.scores.runs import Run, equal_error

USER_MODULE = "tests.user_measures.my_measure"
load_measure_module(USER_MODULE)
load_measure_module("tests.user_measures.order_dependent")  # lacks several properties

UNCLASSIFIED = "measure {name!r} ({kind}) leaves undeclared: {missing}"
NOT_A_FLAG = "measure {name!r} ({kind}) declares {declared!r}: each property must be True or False"
NO_ADAPTER = (
    "measure {name!r} is of kind {kind!r}, which no adapter of this module draws inputs for"
)


class Outcome(NamedTuple):
    """A measure's values, its undefined mask and how many warnings it gave."""

    value: np.ndarray
    undefined: np.ndarray
    warnings: int


def outcome(spec: MeasureSpec, call) -> Outcome:
    """``call()`` with the measure's warnings recorded, not raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return Outcome(
        np.asarray(result.value, dtype="float64"),
        np.asarray(result.undefined, dtype=bool),
        len(caught),
    )


# --- the adapters -----------------------------------------------------------------------------
#
# An adapter holds a kind's inputs ``x`` (whatever its measures are called on) and:
#   evaluate(spec, x)       the measure's Outcome on x
#   anything(draw)          Hypothesis: inputs of the kind (for ``bounded``)
#   relabelled(draw)        Hypothesis: (x, x with its groups relabelled)
#   rescaled(draw)          Hypothesis: (x, x rescaled as the kind's scale invariance says)
#   one_at_zero(draw)       Hypothesis: x with one group (or cell) making no error
#   all_equal(draw)         Hypothesis: x with every group alike
#   relabelled_search(), rescaled_search(), at_zero_search(), equal_search(), towards_zero(eps)
#                           the seeded searches for a counterexample of a declared-False property
#   examples, tolerance     Hypothesis examples per test; the tolerances of the comparisons
#   tiny, moderate          the ``eps`` of towards_zero near the limit, and away from it
# Each meaning is PROPERTY_MEANINGS[kind]; a transformation here is that sentence in code.

# --- the rate kind --------------------------------------------------------------------------

ALPHAS = st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0])


class Rates:
    """Per-group rates: ``(fmr, fnmr, alpha)``, rates of shape (n_algorithms, n_groups)."""

    kind = "rates"
    examples = 60
    tolerance = {
        "permutation_invariant": dict(rtol=1e-9, atol=1e-12),
        "scale_invariant": dict(rtol=1e-7, atol=1e-12),
        "ideal_when_equal": dict(rtol=1e-9, atol=1e-12),
    }
    #: Rates of the unbounded search: near 0, and not.
    tiny, moderate = 1e-300, 1e-3

    def evaluate(self, spec, x) -> Outcome:
        fmr, fnmr, alpha = x
        return outcome(spec, lambda: spec(fmr, fnmr, alpha=alpha))

    # Hypothesis: inputs and transformed inputs
    def anything(self, draw, low: float = 0.0):
        shape = (draw(st.integers(1, 4)), draw(st.integers(2, 8)))
        elements = st.floats(low, 1.0, allow_nan=False, allow_infinity=False)
        fmr = draw(arrays("float64", shape, elements=elements))
        fnmr = draw(arrays("float64", shape, elements=elements))
        return fmr, fnmr, draw(ALPHAS)

    def relabelled(self, draw):
        fmr, fnmr, alpha = x = self.anything(draw)
        order = draw(st.permutations(range(fmr.shape[1])))
        return x, (fmr[:, order], fnmr[:, order], alpha)

    def rescaled(self, draw):
        fmr, fnmr, alpha = x = self.anything(draw, low=1e-6)
        c_fmr, c_fnmr = draw(st.floats(1e-3, 1.0)), draw(st.floats(1e-3, 1.0))
        return x, (c_fmr * fmr, c_fnmr * fnmr, alpha)

    def one_at_zero(self, draw):
        fmr, fnmr, alpha = self.anything(draw, low=1e-6)
        group = draw(st.integers(0, fmr.shape[1] - 1))
        (fmr if draw(st.booleans()) else fnmr)[:, group] = 0.0
        return fmr, fnmr, alpha

    def all_equal(self, draw):
        n, alpha = draw(st.integers(2, 8)), draw(ALPHAS)
        f, g = draw(st.floats(1e-6, 1.0)), draw(st.floats(1e-6, 1.0))
        return np.full((1, n), f), np.full((1, n), g), alpha

    # seeded searches
    def _random(self):
        rng = np.random.default_rng(0)
        return rng.uniform(1e-4, 1, (200, 8)), rng.uniform(1e-4, 1, (200, 8))

    def relabelled_search(self):
        fmr, fnmr = self._random()
        order = np.roll(np.arange(8), 1)  # every group moves
        return [((fmr, fnmr, 0.5), (fmr[:, order], fnmr[:, order], 0.5))]

    def rescaled_search(self):
        fmr, fnmr = self._random()
        # and with a zero rate in some rows: a value that replaces it (a confidence
        # bound from the counts) does not follow the scale
        zeroed = fmr.copy(), fnmr.copy()
        zeroed[0][::4, 0] = 0.0
        zeroed[1][1::4, 0] = 0.0
        return [
            ((fmr, fnmr, 0.5), (fmr / 2, fnmr / 2, 0.5)),
            ((*zeroed, 0.5), (zeroed[0] / 2, zeroed[1] / 2, 0.5)),
        ]

    def at_zero_search(self):
        before, cases = (np.full((1, 8), 1e-4), np.full((1, 8), 0.02), 0.5), []
        for zeroed in (0, 1):
            rates = [before[0].copy(), before[1].copy()]
            rates[zeroed][0, 0] = 0.0
            cases.append((before, (*rates, 0.5)))
        return cases

    def equal_search(self):
        return [
            (np.full((1, 8), f), np.full((1, 8), g), 0.5)
            for f in (1e-5, 1e-3, 0.1)
            for g in (1e-3, 0.1, 0.9)
        ]

    def towards_zero(self, eps: float):
        """One group's rates at ``eps``, or every other group's, on either rate or both;
        near the limit also over 1,000 groups (a maximum over a mean is at most the number
        of groups: bounded for each table, not for all)."""
        base = np.full((1, 8), 0.5)
        one_low = base.copy()
        one_low[0, 0] = eps
        others_low = np.full((1, 8), eps)
        others_low[0, 0] = 0.5
        many = np.full((1, 8 if eps >= self.moderate else 1000), eps)
        many[0, 0] = 0.5
        return [
            (one_low, one_low, 0.5),
            (others_low, others_low, 0.5),
            (one_low, base, 0.5),
            (base, one_low, 0.5),
            (many, many, 0.5),
        ]


def labelled(n_groups: int) -> pd.DataFrame:
    """A one-algorithm table of ``n_groups`` gender x race groups with equal counts (its
    rates are placeholders: a bound measure reads only its groups and counts)."""
    gender = ["F" if g < (n_groups + 1) // 2 else "M" for g in range(n_groups)]
    race = [f"r{g % ((n_groups + 1) // 2)}" for g in range(n_groups)]
    return pd.DataFrame(
        {
            "algorithm": "a",
            "gender": gender,
            "race": race,
            "group": [f"{x}.{y}" for x, y in zip(gender, race, strict=True)],
            "fmr": 1e-4,
            "fnmr": 0.01,
            "n_mated": 1000,
            "n_nonmated": 100_000,
        }
    )


class Tables(Rates):
    """Per-group rates, as :class:`Rates`, for a measure that reads its table too (the
    groups' attributes, the comparison counts): bound to :func:`labelled` groups."""

    kind = "table"

    def __init__(self):
        #: (id of the spec, groups) -> (the spec, bound to labelled(groups)): a measure
        #: is bound once per table and called on many rates, as the package calls it
        self.bound: dict[tuple[int, int], tuple] = {}

    def evaluate(self, spec, x) -> Outcome:
        fmr, fnmr, alpha = x
        key = (id(spec), fmr.shape[-1])
        if key not in self.bound:  # the spec is kept beside its binding: its id stays its own
            self.bound[key] = (spec, spec.bind(labelled(fmr.shape[-1])))
        bound = self.bound[key][1]
        return outcome(bound, lambda: bound(fmr, fnmr, alpha=alpha))


# --- the pair kind --------------------------------------------------------------------------


class Pairs:
    """Enrolment x probe matrices of cross-group FMRs: shape (n_algorithms, n, n)."""

    kind = "pairs"
    examples = 60
    tolerance = {
        "permutation_invariant": dict(rtol=1e-9, atol=0.0),
        "scale_invariant": dict(rtol=1e-9, atol=1e-12),
        "ideal_when_equal": dict(rtol=0.0, atol=1e-12),
    }
    tiny, moderate = 1e-300, 1e-4

    def evaluate(self, spec, x) -> Outcome:
        return outcome(spec, lambda: spec(x))

    def anything(self, draw, low: float = 0.0):
        n = draw(st.integers(2, 5))
        elements = st.floats(low, 0.1, allow_nan=False, allow_infinity=False)
        return draw(arrays("float64", (draw(st.integers(1, 3)), n, n), elements=elements))

    def relabelled(self, draw):
        x = self.anything(draw, low=1e-6)
        order = draw(st.permutations(range(x.shape[1])))
        return x, x[:, order][:, :, order]  # groups renamed on both axes alike

    def rescaled(self, draw):
        x = self.anything(draw, low=1e-6)
        return x, x * draw(st.floats(0.01, 10.0))

    def one_at_zero(self, draw):
        x = self.anything(draw, low=1e-6)
        n = x.shape[1]
        x[:, draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))] = 0.0
        return x

    def all_equal(self, draw):
        n = draw(st.integers(2, 6))
        return np.full((1, n, n), draw(st.floats(1e-6, 1.0)))

    def _random(self):
        return 10.0 ** np.random.default_rng(0).uniform(-6, -2, (200, 4, 4))

    def relabelled_search(self):
        x = self._random()
        order = np.roll(np.arange(4), 1)
        return [(x, x[:, order][:, :, order])]

    def rescaled_search(self):
        x = self._random()
        return [(x, x / 2)]

    def at_zero_search(self):
        """Each cell at 0 in turn, in a constant matrix and in random ones."""
        cases = []
        for x in (np.full((1, 3, 3), 1e-4), self._random()[:20]):
            for i in range(x.shape[1]):
                for j in range(x.shape[1]):
                    zeroed = x.copy()
                    zeroed[:, i, j] = 0.0
                    cases.append((x, zeroed))
        return cases

    def equal_search(self):
        return [np.full((1, n, n), level) for level in (1e-5, 1e-3, 0.1) for n in (2, 3, 4)]

    def towards_zero(self, eps: float):
        """One cell (on or off the diagonal), the diagonal, or every cell off it at ``eps``."""
        diagonal = np.eye(3, dtype=bool)
        one_on, one_off = np.zeros((3, 3), bool), np.zeros((3, 3), bool)
        one_on[0, 0] = one_off[0, 1] = True
        cases = []
        for cells in (one_on, one_off, diagonal, ~diagonal):
            x = np.full((1, 3, 3), 1e-3)
            x[0][cells] = eps
            cases.append(x)
        return cases


# --- the score kind -------------------------------------------------------------------------


#: Scores are whole numbers of ticks of 1/10 (0.0 to 3.0), as quantised scores are (many
#: score files carry one to four decimals): sums and means of them are rounded, as with real
#: scores, and the grid gives the ties the conventions must settle.
TICKS, HIGHEST = 10, 30


def stats_of(mated, nonmated, cross) -> ScoreStats:
    """ScoreStats from per-(algorithm, group) mated and non-mated scores and per-algorithm
    cross-group non-mated scores, each a sequence of ticks (sorted here, as the statistics
    keep them)."""

    def run(ticks):
        return np.sort(np.asarray(ticks, dtype="float64") / TICKS)

    return ScoreStats(
        algorithms=pd.Index([f"alg-{a}" for a in range(len(mated))], name="algorithm"),
        groups=pd.Index([f"g{g}" for g in range(len(mated[0]))], name="group"),
        mated=[[run(m) for m in per_group] for per_group in mated],
        nonmated=[[run(m) for m in per_group] for per_group in nonmated],
        cross=[run(c) for c in cross],
    )


def ticks_of(stats: ScoreStats):
    """The mated, non-mated and cross-group scores of ``stats`` in ticks (as given to stats_of)."""

    def ticks(scores):
        return np.rint(scores * TICKS).astype(int)

    return (
        [[ticks(m) for m in per] for per in stats.mated],
        [[ticks(n) for n in per] for per in stats.nonmated],
        [ticks(c) for c in stats.cross],
    )


def relabel(stats: ScoreStats, order) -> ScoreStats:
    mated, nonmated, cross = ticks_of(stats)
    return stats_of(
        [[m[g] for g in order] for m in mated], [[n[g] for g in order] for n in nonmated], cross
    )


def remap(stats: ScoreStats, table: np.ndarray) -> ScoreStats:
    """Every score of ``t`` ticks (0 to ``len(table) - 1``) moved to ``table[t]`` ticks."""
    mated, nonmated, cross = ticks_of(stats)
    return stats_of(
        [[table[m] for m in per] for per in mated],
        [[table[n] for n in per] for per in nonmated],
        [table[c] for c in cross],
    )


def separate(stats: ScoreStats, group: int, gaps) -> ScoreStats:
    """``group``'s mated scores moved above all of its non-mated ones (``1 + gaps[a]`` ticks
    apart), in every algorithm."""
    mated, nonmated, cross = ticks_of(stats)
    for a, per in enumerate(mated):
        m, top = per[group], nonmated[a][group].max()
        per[group] = m - m.min() + top + 1 + gaps[a]
    return stats_of(mated, nonmated, cross)


def errs_both_ways(mated, nonmated) -> bool:
    """Whether a group (scores in ticks) makes false matches and false non-matches at its EER
    threshold."""
    _, _, fmr, fnmr = equal_error(Run(np.sort(mated) / TICKS), Run(np.sort(nonmated) / TICKS))
    return fmr > 0 and fnmr > 0


class Scores:
    """Per-(algorithm, group) mated and within-group non-mated scores, and per-algorithm
    cross-group non-mated scores, as the :class:`audit.scores.ScoreStats` a score
    measure reads."""

    kind = "scores"
    examples = 30  # a score measure costs milliseconds a call (SED_G's tables)
    tolerance = {
        "permutation_invariant": dict(rtol=1e-9, atol=1e-12),
        "scale_invariant": dict(rtol=1e-9, atol=1e-12),
        "ideal_when_equal": dict(rtol=1e-9, atol=1e-12),
    }
    #: Share of the pooled non-mated comparisons left to the groups in the unbounded search.
    tiny, moderate = 1e-5, 1e-2

    def evaluate(self, spec, x) -> Outcome:
        return outcome(spec, lambda: spec(x))

    def anything(self, draw):
        n_alg, n_groups = draw(st.integers(1, 2)), draw(st.integers(2, 4))

        def scores(high, least=1, most=8):
            return draw(st.lists(st.integers(0, high), min_size=least, max_size=most))

        return stats_of(
            [[scores(HIGHEST) for _ in range(n_groups)] for _ in range(n_alg)],
            [[scores(20) for _ in range(n_groups)] for _ in range(n_alg)],
            [scores(20, least=0, most=6) for _ in range(n_alg)],
        )

    def relabelled(self, draw):
        x = self.anything(draw)
        return x, relabel(x, draw(st.permutations(range(len(x.groups)))))

    def rescaled(self, draw):
        """A strictly increasing map of the ticks 0..HIGHEST: positive steps."""
        x = self.anything(draw)
        steps = draw(st.lists(st.integers(1, 40), min_size=HIGHEST + 1, max_size=HIGHEST + 1))
        return x, remap(x, np.cumsum(steps))

    def one_at_zero(self, draw):
        x = self.anything(draw)
        group = draw(st.integers(0, len(x.groups) - 1))
        gaps = [draw(st.integers(0, 20)) for _ in x.algorithms]
        return separate(x, group, gaps)

    def all_equal(self, draw):
        n_groups, mated, nonmated, cross = draw(st.integers(2, 4)), [], [], []
        for _ in range(draw(st.integers(1, 2))):
            m = draw(st.lists(st.integers(0, 12), min_size=1, max_size=8))
            n = draw(st.lists(st.integers(0, 10), min_size=1, max_size=8))
            assume(errs_both_ways(m, n))
            mated.append([m] * n_groups)
            nonmated.append([n] * n_groups)
            cross.append(n * draw(st.integers(0, 2)))
        return stats_of(mated, nonmated, cross)

    # seeded searches: 100 algorithms of random scores at once
    def _random(self, rng, n_alg: int = 100, n_groups: int = 3) -> ScoreStats:
        def scores(high):
            return rng.integers(0, high + 1, rng.integers(1, 9))

        return stats_of(
            [[scores(HIGHEST) for _ in range(n_groups)] for _ in range(n_alg)],
            [[scores(20) for _ in range(n_groups)] for _ in range(n_alg)],
            [scores(20)[: rng.integers(0, 7)] for _ in range(n_alg)],
        )

    def relabelled_search(self):
        x = self._random(np.random.default_rng(0))
        return [(x, relabel(x, [1, 2, 0]))]

    def rescaled_search(self):
        rng = np.random.default_rng(0)
        x, ticks = self._random(rng), np.arange(HIGHEST + 1)
        maps = [ticks**2, 2**ticks, np.cumsum(rng.integers(1, 100, HIGHEST + 1))]
        return [(x, remap(x, m)) for m in maps]

    def at_zero_search(self):
        rng = np.random.default_rng(0)
        x = self._random(rng)
        return [(x, separate(x, 0, rng.integers(0, 200, len(x.algorithms))))]

    def equal_search(self):
        rng = np.random.default_rng(0)
        mated, nonmated = [], []
        while len(mated) < 50:
            m, n = rng.integers(0, 13, rng.integers(2, 9)), rng.integers(0, 11, rng.integers(2, 9))
            if errs_both_ways(m, n):
                mated.append([m] * 3)
                nonmated.append([n] * 3)
        return [stats_of(mated, nonmated, [[] for _ in mated])]

    def towards_zero(self, eps: float):
        """Groups whose FMRs differ at the threshold, with round(1 / eps) cross-group
        non-mated comparisons scoring below every other."""
        mated = [[[6, 7, 8, 9], [5, 7, 8, 10], [6, 6, 9, 9]]]
        nonmated = [[[1, 3, 6, 7], [2, 4, 5, 8], [0, 2, 3, 6]]]
        return [stats_of(mated, nonmated, [np.full(round(1 / eps), -1.0)])]


KINDS = {adapter.kind: adapter for adapter in (Rates(), Tables(), Pairs(), Scores())}


# --- deliberately poor measures of the pair and score kinds ---------------------------------


def _first_cell(fmr_pairs):
    """The first group's within-group FMR."""
    value = fmr_pairs[:, 0, 0].copy()
    return MeasureResult(value, value, np.full(len(value), np.nan), np.zeros(len(value), bool))


def _first_group_eer(scores):
    """The first group's EER."""
    stats = score_stats(scores)
    value = np.array([stats.equal_error(a, 0)[0] for a in range(len(stats.algorithms))])
    nan = np.full(len(value), np.nan)
    return MeasureResult(value, nan, nan.copy(), np.zeros(len(value), bool))


_POOR = dict(
    higher_is_fairer=False,
    bounds=(0.0, 1.0),
    ideal=0.0,
    fnmr_term="none",
    citation="a deliberately poor measure (tests/test_properties.py)",
)

#: Order-dependent and off the ideal when the groups are alike; the pair one also
#: scale-dependent (an EER reads only the order of the scores, so the score one is not).
POOR = (
    PairMeasure(
        name="first_cell",
        label="first cell",
        function=_first_cell,
        fmr_term="A: the first group's within-group FMR",
        properties=dict(
            bounded=True,
            permutation_invariant=False,
            scale_invariant=False,
            defined_at_zero=True,
            ideal_when_equal=False,
        ),
        **_POOR,
    ),
    ScoreMeasure(
        name="first_group_eer",
        label="first group's EER",
        function=_first_group_eer,
        fmr_term="none: the EER merges FMR and FNMR",
        properties=dict(
            bounded=True,
            permutation_invariant=False,
            scale_invariant=True,
            defined_at_zero=True,
            ideal_when_equal=False,
        ),
        **_POOR,
    ),
)

#: Every measure the generic tests check: the registered ones, of every kind, and the poor.
SPECS: dict[str, MeasureSpec] = {name: get_measure(name) for name in measure_names()}
SPECS.update({spec.name: spec for spec in POOR})


def having(prop: str, value: bool) -> list[str]:
    return [n for n, spec in SPECS.items() if spec.properties.get(prop) is value]


def adapter(name: str):
    return KINDS[SPECS[name].inputs]


def check(name: str, body) -> None:
    """``body(adapter, draw)`` for many Hypothesis draws, as many as ``name``'s kind affords."""
    kind = adapter(name)

    @settings(max_examples=kind.examples, deadline=None)
    @given(data=st.data())
    def run(data):
        body(kind, data.draw)

    run()


def value(name: str, x) -> np.ndarray:
    return adapter(name).evaluate(SPECS[name], x).value


# --- completeness -----------------------------------------------------------------------------


def unclassified(spec: MeasureSpec) -> str:
    """Why ``spec`` is not fully classified ('' if it is): its kind has no adapter here, it
    leaves properties undeclared (named in the order of PROPERTIES), or declares one as
    something other than True or False."""
    if spec.inputs not in KINDS:
        return NO_ADAPTER.format(name=spec.name, kind=spec.inputs)
    missing = [p for p in PROPERTIES if p not in spec.properties]
    if missing:
        return UNCLASSIFIED.format(name=spec.name, kind=spec.inputs, missing=", ".join(missing))
    for declared in spec.properties.items():
        if not isinstance(declared[1], bool):
            return NOT_A_FLAG.format(name=spec.name, kind=spec.inputs, declared=declared)
    return ""


def test_the_user_measures_are_registered():
    assert get_measure("user_ncv").module == USER_MODULE
    assert get_measure("user_first_group").module == "tests.user_measures.order_dependent"
    assert {"user_ncv", "user_first_group"} <= set(SPECS)


def test_every_kind_is_checked():
    """Every kind of measure has its properties' meanings stated and an adapter here."""
    kinds = {cls.inputs for cls in (RateMeasure, TableMeasure, PairMeasure, ScoreMeasure)}
    assert set(PROPERTY_MEANINGS) == kinds == set(KINDS)
    for meanings in PROPERTY_MEANINGS.values():
        assert list(meanings) == list(PROPERTIES)
    assert {spec.inputs for spec in SPECS.values()} == kinds


@pytest.mark.parametrize("name", list(SPECS))
def test_every_measure_declares_every_property(name):
    problem = unclassified(SPECS[name])
    assert not problem, problem


def test_the_completeness_check_names_what_is_left_undeclared():
    spec = SPECS["std_eer"]

    def declaring(properties, kind=ScoreMeasure):
        return kind(
            name="partial",
            label="partial",
            function=spec.function,
            higher_is_fairer=False,
            bounds=spec.bounds,
            ideal=spec.ideal,
            fmr_term="",
            fnmr_term="",
            properties=properties,
        )

    assert unclassified(spec) == ""
    assert unclassified(declaring(dict(bounded=True, scale_invariant=True))) == (
        "measure 'partial' (scores) leaves undeclared: "
        "permutation_invariant, defined_at_zero, ideal_when_equal"
    )
    assert unclassified(declaring({**spec.properties, "bounded": 1})) == (
        "measure 'partial' (scores) declares ('bounded', 1): each property must be True or False"
    )
    assert unclassified(declaring(spec.properties, kind=MeasureSpec)) == (
        "measure 'partial' is of kind '', which no adapter of this module draws inputs for"
    )


@pytest.mark.parametrize("prop", list(PROPERTIES))
# the table kind's transformations and searches are the rate kind's (Tables only binds the
# measure before evaluating it, which every table measure's tests run)
@pytest.mark.parametrize("kind", [k for k in KINDS if k != "table"])
@pytest.mark.parametrize("declared", [True, False])
def test_every_side_of_every_adapter_has_a_measure(prop, kind, declared):
    """Each kind's transformation, and each kind's search for a counterexample, is run on
    at least one measure, so neither side of an adapter is code no test runs."""
    assert any(SPECS[n].inputs == kind for n in having(prop, declared))


@pytest.mark.parametrize("name", list(SPECS))
def test_bounded_property_agrees_with_declared_bounds(name):
    spec = SPECS[name]
    assert spec.properties["bounded"] == spec.bounded


# --- bounded ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", having("bounded", True))
def test_bounded_measures_stay_within_their_bounds(name):
    low, high = SPECS[name].bounds

    def body(kind, draw):
        value, undefined, _ = kind.evaluate(SPECS[name], kind.anything(draw))
        assert not np.isinf(value).any()
        assert not (np.isnan(value) & ~undefined).any()
        finite = value[np.isfinite(value)]
        assert (finite >= low - 1e-12).all() and (finite <= high + 1e-12).all()

    check(name, body)


@pytest.mark.parametrize("name", having("bounded", False))
def test_unbounded_measures_grow_without_limit(name):
    kind = adapter(name)

    def worst(eps):
        return np.nanmax(np.concatenate([value(name, x) for x in kind.towards_zero(eps)]))

    assert worst(kind.tiny) > 10 * worst(kind.moderate)


# --- permutation invariance -------------------------------------------------------------------


@pytest.mark.parametrize("name", having("permutation_invariant", True))
def test_permutation_invariant_measures(name):
    def body(kind, draw):
        before, after = kind.relabelled(draw)
        np.testing.assert_allclose(
            value(name, after),
            value(name, before),
            equal_nan=True,
            **kind.tolerance["permutation_invariant"],
        )

    check(name, body)


@pytest.mark.parametrize("name", having("permutation_invariant", False))
def test_order_dependent_measures_have_a_counterexample(name):
    assert any(
        not np.allclose(value(name, before), value(name, after), equal_nan=True)
        for before, after in adapter(name).relabelled_search()
    )


# --- scale invariance -------------------------------------------------------------------------


@pytest.mark.parametrize("name", having("scale_invariant", True))
def test_scale_invariant_measures(name):
    def body(kind, draw):
        before, after = kind.rescaled(draw)
        np.testing.assert_allclose(
            value(name, after),
            value(name, before),
            equal_nan=True,
            **kind.tolerance["scale_invariant"],
        )

    check(name, body)


@pytest.mark.parametrize("name", having("scale_invariant", False))
def test_scale_dependent_measures_have_a_counterexample(name):
    assert any(
        not np.allclose(value(name, before), value(name, after), equal_nan=True)
        for before, after in adapter(name).rescaled_search()
    )


# --- defined at zero (FFMC.3) -----------------------------------------------------------------


@pytest.mark.parametrize("name", having("defined_at_zero", True))
def test_measures_defined_at_zero(name):
    def body(kind, draw):
        value, undefined, n_warnings = kind.evaluate(SPECS[name], kind.one_at_zero(draw))
        assert np.isfinite(value).all() and not undefined.any() and n_warnings == 0

    check(name, body)


@pytest.mark.parametrize("name", having("defined_at_zero", False))
def test_measures_undefined_at_zero_have_a_counterexample(name):
    """Some input is undefined with a group at zero errors, and defined without it."""
    kind = adapter(name)

    def broken(x):
        value, undefined, _ = kind.evaluate(SPECS[name], x)
        return ~np.isfinite(value) | undefined

    assert any((broken(after) & ~broken(before)).any() for before, after in kind.at_zero_search())


# --- ideal value when all groups are alike ----------------------------------------------------


@pytest.mark.parametrize("name", having("ideal_when_equal", True))
def test_ideal_value_when_all_groups_are_equal(name):
    ideal = SPECS[name].ideal

    def body(kind, draw):
        value, undefined, _ = kind.evaluate(SPECS[name], kind.all_equal(draw))
        assert not undefined.any()
        np.testing.assert_allclose(value, ideal, **kind.tolerance["ideal_when_equal"])

    check(name, body)


@pytest.mark.parametrize("name", having("ideal_when_equal", False))
def test_measures_off_ideal_when_equal_have_a_counterexample(name):
    values = [value(name, x) for x in adapter(name).equal_search()]
    assert not np.allclose(np.concatenate(values), SPECS[name].ideal)
