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

Modules: :mod:`~audit.uncertainty.checks` (messages, defaults, argument checks),
:mod:`~audit.uncertainty.intervals` (binomial intervals),
:mod:`~audit.uncertainty.replicates` (making replicate rates),
:mod:`~audit.uncertainty.results` (measures, rankings, statistics and frontier
over replicates), :mod:`~audit.uncertainty.claims` (the paper's claims and the
plain-language paragraph), :mod:`~audit.uncertainty.summary` (verdict
stability and :func:`analyse`, the entry point of the reports).
"""

from audit.uncertainty.checks import CROSSING_GRID, FLOOR_LOWER, HOWARD_2022_CLAIMS
from audit.uncertainty.claims import check_claims, robustness_sentences, robustness_summary
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
    "UncertaintyResult",
    "analyse",
    "binomial_interval",
    "check_claims",
    "count_matrices",
    "fnmr_weights",
    "frontier_membership",
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
