"""Messages, defaults and argument checks shared by the uncertainty analyses."""

from __future__ import annotations

from audit.analysis.ffmc import FINE_ALPHA_GRID
from audit.exceptions import UsageError
from audit.measures.contract import RateMeasure
from audit.measures.registry import bound_measures, get_measure, measure_names
from audit.validation import (
    RATES_TABLE,
    Boolean,
    Function,
    Integer,
    MeasureRef,
    MeasureRefs,
    Options,
    Real,
    Text,
    constraint_of,
    optional,
    validate_params,
)

# Error messages: constants, so that tests can check them exactly.
BAD_COUNTS = "binomial counts need whole numbers 0 <= k <= n with n > 0; {problem}"
NO_COUNTS = (
    "the table has no {column!r} column and no counts were given: a binomial interval "
    "or a parametric bootstrap needs the number of {kind} comparisons per group (add the "
    "columns n_mated and n_nonmated to the table, or, from Python, give "
    "counts=<frame or CSV with group, n_mated, n_nonmated>)"
)
NO_COMPARISONS = "some (algorithm, group) has no mated or no non-mated comparison"
COUNTS_COLUMNS = (
    "{source}: no column {missing}; a binomial interval or bootstrap needs both n_mated and "
    "n_nonmated"
)
NOT_ON_GRID = (
    "{count} FMR value(s) are not on the {step}-decade grid 10**(k*{step}) (first: "
    "row {row}, column {column}, FMR {value!r}); the transcription redraw applies only "
    "to grid-rounded rates"
)
BELOW_FLOOR = "{count} FMR value(s) lie below the floor {floor!r} (first: {value!r})"
BAD_FLOOR_LOWER = (
    "floor_lower must be positive and at most the floor {floor!r} (or None for the "
    "floor's own bin), got {value!r}"
)
MISSING_SCORE_COLUMN = "the score table has no column {column!r}; its columns are {columns}"
NOT_READ_SCORES = (
    "replicate_as='statistics' needs a score table as audit.scores.read_scores returns it "
    "(categorical algorithm, group_1 and group_2, score, mated); column {column!r} is {problem}"
)
SCORE_MEASURE = "measure {name!r} needs scores, not rates; uncertainty covers rate measures"
RATES_MISSING = "replicate {replicate}: the rates function returned no rate for {what}"
RATES_TWICE = "replicate {replicate}: the rates function returned two rates for {what}"

#: The robustness rule: a conclusion -- an FFMC verdict, an algorithm on (or off) the
#: Pareto frontier, a ranking's stability, the fairest algorithm -- counts as robust when it
#: holds in at least this share of the replicates (and as robustly not, for frontier
#: membership, when it holds in at most ``1 - ROBUST`` of them).
ROBUST = 0.95
#: A replicate ranking agrees with the point ranking when their Spearman correlation is at
#: least this; a ranking is stable when that holds in at least :data:`ROBUST` of the replicates.
STABLE_SPEARMAN = 0.9

#: Default lower limit (log10) for an FMR transcribed at the 1e-5 floor: one decade
#: below the floor.  See :func:`transcription_redraws` for the reasoning.
FLOOR_LOWER = 1e-6

#: Values quoted by Howard et al. (2022) on Annex 15 at alpha = 0.5, keyed by the
#: statistic names of :attr:`UncertaintyResult.statistics`.
HOWARD_2022_CLAIMS: dict[str, tuple[float, str]] = {
    "garbe.min": (0.165, "sec. 4.3: GARBE spans 0.165 - 0.618"),
    "garbe.max": (0.618, "sec. 4.3: GARBE spans 0.165 - 0.618"),
    "garbe.fmr_term.median": (0.74, "sec. 4.3: median A = 0.74"),
    "garbe.fnmr_term.median": (0.33, "sec. 4.3: median B = 0.33"),
    "garbe.crossing.mean": (0.4, "sec. 4.3: mean share of A passes 1/2 at alpha = 0.4"),
    "ir.min": (2.4, "sec. 4.2: IR spans 2.4 - 26.38"),
    "ir.max": (26.38, "sec. 4.2: IR spans 2.4 - 26.38"),
    "ir.fmr_term.max": (63.1, "sec. 4.2 / 4.4: practical maximum 63.1 (alpha = 1)"),
    "fdr.q05": (0.9, "sec. 4.1: over 95% of FDR values lie in 0.9 - 1"),
    "fdr.crossing.median": (0.99, "sec. 4.1: median share of A passes 1/2 at alpha = 0.99"),
    "frontier.size": (
        9,
        "sec. 4.5: 9 algorithms on the frontier (total FNMR weighted by the "
        "mated counts, which the CSV lacks)",
    ),
}

#: Default grid of alpha values for the crossing statistics (defined with the FFMC.1 grid).
CROSSING_GRID = FINE_ALPHA_GRID


# --------------------------------------------------------------------------- declarations
#: The parameters the uncertainty functions share, declared once
#: (:func:`audit.validation.validate_params`); the others are in
#: :data:`audit.validation.PARAMETERS`.
INTERVAL_METHOD = Options(("wilson", "clopper-pearson"))
UNIT = Options(("subject", "comparison"))
COLUMN = Text()
TRANSCRIPTION = {
    "step": Real(0, 1, closed="right"),
    "floor": Real(0, 1, closed="right"),
    "fnmr_half_width": Real(0, 1),
}
SUMMARY = {
    "measures": MeasureRefs(),
    "fairness": MeasureRef(),
    "within": Integer(1),
    "top": Integer(1),
}
SCORE_COLUMNS = {
    "unit": UNIT,
    "subject": COLUMN,
    "group": COLUMN,
    "mated": COLUMN,
    "algorithm": optional(COLUMN),
}
FRONTIER = {"higher_is_fairer": Boolean(), "weak": Boolean(), "tie_rtol": Real(0)}
ROBUSTNESS = {"threshold": Real(0, 1, closed="neither")}
OPTIONAL_FUNCTION = optional(Function())
#: The total-rate accuracy axis of a frontier (:data:`audit.analysis.pareto.ACCURACY_LABELS`).
ACCURACY_AXIS = Options(("total_fnmr", "total_fmr"))
#: The parameters of an uncertainty analysis of a table (:func:`audit.uncertainty.analyse`
#: and the one-rate analysis it hands a table of one rate to), declared once.
ANALYSIS = validate_params(
    "n_replicates", "seed", "alpha", "weights", "floor_lower",
    method=constraint_of("uncertainty_method"), measures=MeasureRefs(), fairness=MeasureRef(),
    accuracy=optional(ACCURACY_AXIS), table=RATES_TABLE,
)  # fmt: skip


def _rate_measures(measures, table=None) -> list[RateMeasure]:
    """The rate measures named (default: every one); with ``table``, a table measure
    bound to it (:func:`audit.measures.registry.bound_measures`)."""
    names = measure_names() if measures is None else list(measures)
    if table is not None:
        names = bound_measures(table, names)
    chosen = []
    for name in names:
        measure = get_measure(name) if isinstance(name, str) else name
        if not isinstance(measure, RateMeasure):
            if measures is None:
                continue
            raise UsageError(SCORE_MEASURE.format(name=measure.name))
        chosen.append(measure)
    return chosen
