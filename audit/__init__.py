"""audit: audit the fairness measures used to judge biometric recognition systems.

Data flows one way::

    source file -> validated tidy table -> measures -> criteria / frontier -> figures and reports

``audit.rates`` reads and validates a table of per-group error rates,
``audit.measures`` computes the fairness measures on it, and the modules
downstream (FFMC audit, Pareto frontier, reports) consume those.
"""

from audit.measures import bias  # noqa: F401  (registers NRB, STD and SER)
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
    get_measure,
    measure_names,
    register_measure,
)
from audit.measures.scores import evaluate_scores  # registers the score-based measures
from audit.scores import ScoresError, rates_at_fmr, read_scores, sweep
from audit.sources.annex15 import annex15_path, fetch_annex15, sha256sum
from audit.tables.rates import RatesError, rate_matrices, read_rates

__version__ = "0.1.0"

__all__ = [
    "Measure",
    "MeasureResult",
    "RatesError",
    "ScoresError",
    "UndefinedMeasureWarning",
    "__version__",
    "annex15_path",
    "evaluate",
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
