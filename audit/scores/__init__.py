"""From comparison scores to per-group error rates at an operating point.

Vendors and test labs hold comparison scores, not finished rate tables.  This
module reads a long table of scores, validates it as strictly as
:mod:`audit.tables.rates` validates rates, reduces it to per-group **sufficient
statistics** and turns those into the tidy rates table that every rate-based
measure, the FFMC audit and the Pareto frontier consume.

Score table
-----------
One row per comparison, columns:

* ``algorithm`` -- the system that produced the score;
* ``score`` -- a finite number; ``higher_is_match=True`` (similarity, default)
  or ``False`` (distance: lower means a match);
* ``mated`` -- True for a mated (genuine, same person) comparison, False for a
  non-mated (impostor) one; ``True``/``False``/``1``/``0`` are accepted;
* the demographic group, either one label for both sides (``group``, or one
  column per attribute named with ``attributes=[...]``) or one label per side
  (``group_1`` and ``group_2``, or ``<attribute>_1`` and ``<attribute>_2``), so
  that cross-group non-mated pairs can be represented.  A mated pair must have
  the same group on both sides;
* optionally the subjects compared, ``subject_1`` and ``subject_2`` (e.g.
  enrolment and probe speaker), kept as they are for a bootstrap that resamples
  subjects (:func:`audit.uncertainty.score_bootstrap`).  A mated pair must have
  the same subject on both sides.

Conventions
-----------
Decision rule
    With similarity scores a comparison is declared a match when
    ``score >= threshold``; with distances when ``score <= threshold``
    (ISO/IEC 19795-1).  ``FMR(t)`` is the fraction of non-mated comparisons
    declared a match, ``FNMR(t)`` the fraction of mated ones declared a
    non-match.
Operating point at a target FMR
    The threshold is set on the **pooled** non-mated scores of an algorithm
    (within-group and cross-group pairs alike).  Among all thresholds whose
    pooled FMR does not exceed the target, the most permissive one is taken
    (the lowest similarity threshold), so that the FNMR is as small as the
    constraint allows.  Because FMR is a step function, the attained FMR is the
    largest attainable value ``k / N <= target`` (``k`` false matches among
    ``N`` non-mated comparisons): **it never exceeds the target**, and is
    recorded next to it (``attained_fmr``) because it may fall below it --
    for instance to 0 when ``target * N < 1``.  Ties are never split: all
    comparisons with the same score get the same decision, so a block of tied
    non-mated scores that would overshoot the target is rejected entirely.
    The reported threshold is the smallest observed score (of any comparison of
    that algorithm) that is accepted, so it reads as a real score value; when
    every observed score must be rejected it is the next float above the
    largest score.
Per-group rates
    A group's FNMR is computed on its mated comparisons; its FMR on its
    **within-group** non-mated comparisons (both sides in the group), as in the
    NIST FRVT Part 3 tables.  Cross-group non-mated comparisons enter the pooled
    FMR that sets the threshold (and the global rates of SED_G), not a group's
    FMR.  A group without mated or without within-group non-mated comparisons
    has an undefined rate and is refused with a :class:`ScoresError`.
One kind of comparison only
    Scores of non-mated comparisons only give an FMR-only rates table (no
    ``fnmr`` or ``n_mated`` column; the FMR measures apply, see
    :func:`audit.measures.registry.applicable_measures`).  Scores of mated
    comparisons only give no threshold at a target FMR; at thresholds given to
    :func:`rates_at_thresholds` they give an FNMR-only table
    (:meth:`ScoreStats.rates_held` says which).

Sufficient statistics and the streaming seam
--------------------------------------------
Everything downstream of :func:`score_stats` reads only a :class:`ScoreStats`:
per (algorithm, group) the sorted mated scores and the sorted within-group
non-mated scores, and per algorithm the sorted cross-group non-mated scores.
Rates at any threshold are then two binary searches per group
(:meth:`ScoreStats.counts`), and the threshold at a target FMR is an order
statistic of the pooled non-mated scores, found by binary searches and
position slices on the same sorted arrays (:func:`_operating_points`).
Building the statistics in memory (:func:`score_stats_from_arrays`) costs
about one ``numpy.sort`` of the scores and one extra copy of them; the 100
operating points of a sweep then cost a few milliseconds, whatever the size
(``benchmarks/bench_scores.py`` measures both).

**The seam is the protocol** :class:`~audit.scores.stats.SufficientStatistics`:
counts at thresholds, group sizes, the score range, cut points at a count of
pooled non-mated scores, the smallest score at or above a threshold, the EER
of a group and order statistics of a group's scores.  Operating points and
score measures read nothing else.  :class:`ScoreStats` answers it from sorted
arrays in memory -- built here, or from elsewhere: any sorted one-dimensional
float64 arrays in match orientation (distances negated), for instance
``numpy.memmap`` files written by an external merge sort, passed to
``ScoreStats(algorithms=..., groups=..., mated=..., nonmated=..., cross=...,
higher_is_match=...)``, which reads them only through ``len``,
``searchsorted``, element and slice access and strided samples
(``tests/test_scores.py`` checks this with memory maps).
:class:`audit.scores.streaming.StreamedStats` answers it from passes over
data too large for memory (:class:`audit.scores.streaming.StreamingScores`),
with the same values, bit for bit.  :class:`audit.scores.weighted.CountedStats`
answers it for a bootstrap replicate given as a count per subject (or
comparison) over the segments sorted once (:func:`audit.scores.weighted.sorted_scores`):
the values of the statistics of the resampled rows, at O(n) a replicate.
"""

from audit.scores.stats import ScoreStats, score_stats, score_stats_from_arrays
from audit.scores.thresholds import (
    DEFAULT_TARGETS,
    det_points,
    rates_at_fmr,
    rates_at_thresholds,
    sweep,
    thresholds_at_fmr,
)
from audit.tables.scores import ScoresError, read_scores

__all__ = [
    "DEFAULT_TARGETS",
    "ScoreStats",
    "ScoresError",
    "det_points",
    "rates_at_fmr",
    "rates_at_thresholds",
    "read_scores",
    "score_stats",
    "score_stats_from_arrays",
    "sweep",
    "thresholds_at_fmr",
]
