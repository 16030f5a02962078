"""Measures: the fairness measure kernels and the registry that describes them.

:mod:`~audit.measures.kernels` holds FDR, IR and GARBE (Howard et al. eq. 1-9)
and the helpers every kernel shares; :mod:`~audit.measures.bias` NRB, STD and
SER; :mod:`~audit.measures.nist` NIST's summaries (NISTIR 8429);
:mod:`~audit.measures.reference` the ratios of a demographic to a reference;
:mod:`~audit.measures.merg` MERG and MERA (Linghu et al.);
:mod:`~audit.measures.zeroerrors` the zero-error-adjusted ratio measures;
:mod:`~audit.measures.crossgroup` the measures of a cross-group impostor
table's pair matrices; :mod:`~audit.measures.scores` the measures that need comparison scores
(STD of EERs, SED_G, DFI, CEI); :mod:`~audit.measures.registry` the metadata
of every measure, :func:`evaluate` and :func:`evaluate_many`.
"""

from audit.measures.kernels import (
    MeasureResult,
    UndefinedMeasureError,
    UndefinedMeasureWarning,
    as_rates,
    check_alpha,
    check_zero_division,
    fdr,
    garbe,
    gini,
    inequity_rate,
    report_undefined,
)

__all__ = [
    "MeasureResult",
    "UndefinedMeasureError",
    "UndefinedMeasureWarning",
    "as_rates",
    "check_alpha",
    "check_zero_division",
    "fdr",
    "garbe",
    "gini",
    "inequity_rate",
    "report_undefined",
]
