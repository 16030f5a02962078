"""The Functional Fairness Measure Criteria (Howard et al. sec. 3.4) as computations.

Howard et al. judged FDR, IR and GARBE against FFMC.1-3 by eye from their
Figs. 1-3 and summarised the verdicts in Table 2. Here each criterion is a
reproducible computation that runs on any registered rates measure and
returns its evidence numbers:

FFMC.1 -- intuitive net contributions of the FMR and FNMR terms.
    For every algorithm and every alpha of a grid (0 to 1, step 0.01) the
    relative contribution of the alpha-weighted FMR term to the measure
    (:meth:`audit.measures.registry.Measure.alpha_share`: ``aA/(aA + (1-a)B)`` for
    linear forms, the log analogue for products of powers). Evidence: the
    alpha at which the median contribution first surpasses 50% (and the same
    for the mean), whether the median contribution rises monotonically with
    alpha, and the ratio of the median A and median B magnitudes.
    **Pass rule**: the median crossing alpha lies within
    :data:`CROSSING_WINDOW` = [0.2, 0.8] and the median contribution never
    decreases as alpha grows. A measure of one error type only (NRB of the
    FMRs, the STD of the FNMRs, SER, ...) has no second term for alpha to
    weigh: FFMC.1 is not applicable to it, with that reason, on every table
    (as on a one-sided table, where no measure has two terms).

FFMC.2 -- recognisable points of reference.
    The declared bounds are checked against an adversarial search (all
    errors in one group or in k groups, all groups equal, one group at zero,
    all zero, extreme scales from 1e-6 to 1, uniform and log-uniform random
    draws; seeded) and against the real data, at alpha in
    {0, 0.25, 0.5, 0.75, 1}. Evidence: the observed range, the real-data
    range, whether each declared bound is attained, the reference values
    (perfectly fair: the declared ideal; maximally unfair: the bound away
    from it). **Pass rule**: both bounds declared finite, every finite value
    observed lies within them, and both reference values are attained. An
    unbounded measure fails.

FFMC.3 -- calculable when a group shows no errors.
    For each real algorithm, one group's FNMR is set to 0 (each group in
    turn), then one group's FMR; and, as edge cases, every group's FNMR,
    every group's FMR, and both. Evidence: for each case the fraction of
    values that are finite, and the fraction computed by the formula itself
    (finite and not flagged undefined, i.e. not by a convention).
    **Pass rule**: every one-group case is computed by the formula. The
    all-groups cases are reported, not judged: the paper's criterion asks
    about a group with no errors, and with every group at 0 a dispersion
    measure (GARBE's Gini) is 0/0 -- it stays finite only by the convention
    recorded in the registry.

Cross-group measures (:class:`~audit.measures.contract.PairMeasure`, on a
table read from a cross-group table) read impostor FMRs only: FFMC.1 is not
applicable (no FNMR term to weigh); FFMC.2 runs the same search over the cells
of the enrolment x probe matrix (its n^2 cells vary as a rate measure's groups
do) and the real matrices; FFMC.3 sets one within-group pair's FMR to 0 (each
in turn), then one cross-group pair's, and, reported but not judged, every
within-group pair, every cross-group pair and every pair.  **Pass rule**:
every one-pair case is computed by the formula.

:func:`ffmc_table` gathers the three into one tidy table (measure x
criterion) and sets it beside the verdicts of Howard et al.'s Table 2;
:func:`ffmc_report` adds the detailed frames of every criterion and the
data-quality audit of the input (:mod:`audit.analysis.quality`), which every FFMC
report carries.

Modules: :mod:`~audit.analysis.ffmc.common` (grids, tolerances, Table 2, the
result type), :mod:`~audit.analysis.ffmc.intuitive` (FFMC.1),
:mod:`~audit.analysis.ffmc.bounds` (FFMC.2 and its search),
:mod:`~audit.analysis.ffmc.zeros` (FFMC.3), :mod:`~audit.analysis.ffmc.cells` (a
cross-group matrix as the cells of a rate measure) and
:mod:`~audit.analysis.ffmc.table` (every criterion on every measure, the report).
"""

from audit.analysis.ffmc.bounds import _search_space, ffmc2
from audit.analysis.ffmc.common import (
    ALPHA_GRID,
    BOUNDS_ALPHAS,
    CRITERIA,
    CROSSING_WINDOW,
    FFMC1_ONE_TERM,
    FFMC1_PAIRS,
    FFMC3_ALPHA,
    FINE_ALPHA_GRID,
    NO_MEASURES,
    NOT_CROSS,
    NOT_RATES,
    PAPER_TABLE2,
    CriterionResult,
    first_crossing,
    one_term,
)
from audit.analysis.ffmc.intuitive import ffmc1
from audit.analysis.ffmc.table import FFMCReport, ffmc_report, ffmc_table, ffmc_verdicts
from audit.analysis.ffmc.zeros import FFMC3_CASES, PAIR_CASES, ffmc3

__all__ = [
    "ALPHA_GRID",
    "BOUNDS_ALPHAS",
    "CRITERIA",
    "CROSSING_WINDOW",
    "FFMC1_ONE_TERM",
    "FFMC1_PAIRS",
    "FFMC3_ALPHA",
    "FFMC3_CASES",
    "FINE_ALPHA_GRID",
    "NOT_CROSS",
    "NOT_RATES",
    "NO_MEASURES",
    "PAIR_CASES",
    "PAPER_TABLE2",
    "CriterionResult",
    "FFMCReport",
    "_search_space",
    "ffmc1",
    "ffmc2",
    "ffmc3",
    "ffmc_report",
    "ffmc_table",
    "ffmc_verdicts",
    "first_crossing",
    "one_term",
]
