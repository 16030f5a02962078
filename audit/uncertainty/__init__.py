"""Uncertainty of the fairness measures, of the FFMC verdicts and of the Pareto frontier.

Error rates are estimates from finite numbers of comparisons, and the NIST FRVT
Part 3 Annex 15 transcription (Howard et al. 2022, sec. 3.3) moreover rounds
every FMR to a 0.1-decade grid ``10**(k/10)`` with a floor at ``1e-5``.  This
module says which conclusions survive that uncertainty.  Three sources of
replicates feed one analysis:

* :func:`transcription_sensitivity` (Annex 15): each FMR is redrawn uniformly
  in log10 within its 0.1-decade bin, and a floored FMR uniformly in log10
  between a documented lower limit and the top of the floor's bin; each FNMR
  uniformly within its last printed decimal.  This is a sensitivity analysis of
  the rounding, not a sampling distribution.
* :func:`parametric_bootstrap` (rates with counts of mated and non-mated
  comparisons): each group's error count is redrawn from a binomial with the
  observed rate, i.e. comparisons are treated as independent.
* :func:`score_bootstrap` (raw scores with subject identities): subjects are
  resampled with replacement within their demographic group, every comparison
  of a drawn subject coming along (a stratified cluster bootstrap), and the
  rates are recomputed by a caller-supplied function, threshold included.
  ``unit="comparison"`` resamples single comparisons instead, for contrast.
  With ``replicate_as="statistics"`` the same resamples are not made as rows
  but counted over the scores sorted once (:mod:`audit.scores.weighted`): the
  same numbers, each replicate at about the cost of one build of the
  statistics.

A table of one error rate (FMR or FNMR only, or a cross-group table's pair
matrix) redraws that rate alone, from its counts or by how it was printed
(:mod:`~audit.uncertainty.onerate`: a decade grid, or a fixed number of
decimals), a calibrated cell kept as written.

Each gives arrays of replicate rates of shape ``(n_replicates, n_algorithms,
n_groups)``; every registered rate measure is evaluated on all replicates at
once (stacked as ``(n_replicates * n_algorithms, n_groups)``), then summarised
into an :class:`UncertaintyResult`: percentile intervals of each measure and of
its terms, the stability of the ranking, of dataset-level statistics quoted in
the paper (ranges, the alpha at which the FMR term's contribution crosses one
half) and the probability of each algorithm being on the accuracy/fairness
Pareto frontier.  :func:`verdict_stability` reruns the FFMC audit on a subset
of replicates, and :func:`robustness_summary` writes the plain-language
paragraph (:func:`robustness_sentences`: the same, sentence by sentence).
Group rates get binomial intervals from :func:`binomial_interval` (Wilson
score or Clopper-Pearson) via :func:`rate_intervals`.

All randomness comes from ``numpy.random.default_rng(seed)``; results record
their parameters in ``attrs`` (frames) or ``params`` (results).

Modules: :mod:`~audit.uncertainty.checks` (messages, defaults, the robustness
rule, argument checks), :mod:`~audit.uncertainty.intervals` (binomial intervals),
:mod:`~audit.uncertainty.replicates` (making replicate rates),
:mod:`~audit.uncertainty.onerate` (the replicates of a table of one rate),
:mod:`~audit.uncertainty.results` (measures, rankings, statistics and frontier
over replicates), :mod:`~audit.uncertainty.claims` (the paper's claims and how sure the
findings are, in words), :mod:`~audit.uncertainty.summary` (verdict
stability and :func:`analyse`, the entry point of the reports).
"""

from audit.uncertainty.checks import (
    CROSSING_GRID,
    FLOOR_LOWER,
    HOWARD_2022_CLAIMS,
    ROBUST,
    STABLE_SPEARMAN,
)
from audit.uncertainty.claims import (
    NO_FRONTIER,
    check_claims,
    frontier_sentences,
    robustness_sentences,
    robustness_summary,
)
from audit.uncertainty.intervals import binomial_interval, count_matrices, rate_intervals
from audit.uncertainty.replicates import (
    parametric_replicates,
    replicate_measures,
    resample_scores,
    transcription_bins,
    transcription_redraws,
)
from audit.uncertainty.results import (
    UncertaintyResult,
    fnmr_weights,
    frontier_membership,
    join_frontier_probability,
    parametric_bootstrap,
    score_bootstrap,
    transcription_sensitivity,
)
from audit.uncertainty.summary import analyse, replicate_table, verdict_stability

__all__ = [
    "CROSSING_GRID",
    "FLOOR_LOWER",
    "HOWARD_2022_CLAIMS",
    "NO_FRONTIER",
    "ROBUST",
    "STABLE_SPEARMAN",
    "UncertaintyResult",
    "analyse",
    "binomial_interval",
    "check_claims",
    "count_matrices",
    "fnmr_weights",
    "frontier_membership",
    "frontier_sentences",
    "join_frontier_probability",
    "parametric_bootstrap",
    "parametric_replicates",
    "rate_intervals",
    "replicate_measures",
    "replicate_table",
    "resample_scores",
    "robustness_sentences",
    "robustness_summary",
    "score_bootstrap",
    "transcription_bins",
    "transcription_redraws",
    "transcription_sensitivity",
    "verdict_stability",
]
