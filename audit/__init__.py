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

import importlib

#: Where each name of the public API lives; imported on first use, so that
#: ``import audit`` (and ``audit --help``) does not pay for pandas and the rest.
_PUBLIC = {
    "PairMeasure": "audit.measures.contract",
    "RateMeasure": "audit.measures.contract",
    "ScoreMeasure": "audit.measures.contract",
    "MeasureResult": "audit.measures.kernels",
    "UndefinedMeasureWarning": "audit.exceptions",
    "fdr": "audit.measures.kernels",
    "garbe": "audit.measures.kernels",
    "gini": "audit.measures.kernels",
    "inequity_rate": "audit.measures.kernels",
    "Measure": "audit.measures.registry",
    "evaluate": "audit.measures.registry",
    "evaluate_many": "audit.measures.registry",
    "evaluate_scores": "audit.measures.registry",
    "get_measure": "audit.measures.registry",
    "measure_names": "audit.measures.registry",
    "register_measure": "audit.measures.registry",
    "ScoresError": "audit.exceptions",
    "rates_at_fmr": "audit.scores",
    "read_scores": "audit.scores",
    "sweep": "audit.scores",
    "annex15_path": "audit.sources.annex15",
    "fetch_annex15": "audit.sources.annex15",
    "sha256sum": "audit.sources.annex15",
    "RatesError": "audit.exceptions",
    "rate_matrices": "audit.tables.rates",
    "read_rates": "audit.tables.rates",
    "AuditError": "audit.exceptions",
    "AuditWarning": "audit.exceptions",
}


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'audit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next look-up is a plain one
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])


__version__ = "0.1.0"

__all__ = [
    "AuditError",
    "AuditWarning",
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
