"""audit: audit the fairness measures used to judge biometric recognition systems.

Data flows one way, and the subpackages follow it, read top-down::

    sources -> tables -> scores -> measures -> analysis -> uncertainty -> report

:mod:`audit.sources` fetches and verifies the data; :mod:`audit.tables` reads
a user's table (rates or comparison scores) into one validated tidy table;
:mod:`audit.scores` turns scores into per-group rates at operating points;
:mod:`audit.measures` holds the fairness measures and their registry;
:mod:`audit.analysis` the FFMC audit, the accuracy/fairness frontier and the
data-quality checks; :mod:`audit.uncertainty` how sure each conclusion is;
:mod:`audit.report` the figures, tables and notebook runner behind
``audit report``.  Nothing upstream imports anything downstream.
"""

from audit.measures.contract import PairMeasure, RateMeasure, ScoreMeasure
from audit.measures.kernels import (
    MeasureResult,
    UndefinedMeasureWarning,
    fdr,
    garbe,
    gini,
    inequity_rate,
)
from audit.measures.registry import (
    Measure,
    evaluate,
    evaluate_many,
    evaluate_scores,
    get_measure,
    measure_names,
    register_measure,
)
from audit.scores import ScoresError, rates_at_fmr, read_scores, sweep
from audit.sources.annex15 import annex15_path, fetch_annex15, sha256sum
from audit.tables.rates import RatesError, rate_matrices, read_rates

__version__ = "0.1.0"

__all__ = [
    "Measure",
    "MeasureResult",
    "PairMeasure",
    "RateMeasure",
    "RatesError",
    "ScoreMeasure",
    "ScoresError",
    "UndefinedMeasureWarning",
    "__version__",
    "annex15_path",
    "evaluate",
    "evaluate_many",
    "evaluate_scores",
    "fdr",
    "fetch_annex15",
    "garbe",
    "get_measure",
    "gini",
    "inequity_rate",
    "measure_names",
    "rate_matrices",
    "rates_at_fmr",
    "read_rates",
    "read_scores",
    "register_measure",
    "sha256sum",
    "sweep",
]
