"""Measures on one-sided tables: which apply, and the rule for a two-term measure on one term.

A rates table may hold FMR only or FNMR only (:func:`audit.tables.layouts.available_rates`).
Every measure declares the rates it reads (:attr:`~audit.measures.contract.MeasureSpec.needs`):

* a measure whose needs are present is computed as usual;
* a measure of both rates whose terms combine as ``alpha*A + (1-alpha)*B``
  (share ``"linear"``: FDR, GARBE, NRB) or ``A**alpha * B**(1-alpha)``
  (share ``"log"``: IR) is computed on its available term alone: at alpha = 1
  on an FMR-only table (GARBE's A, the Gini of the group FMRs; IR's A, the FMR
  ratio; FDR as 1 - A), at alpha = 0 on an FNMR-only table.  The missing
  rate is set equal in every group, so its term is at the measure's ideal and,
  at that alpha, carries no weight; the missing term is reported as NaN.  Every
  output flags such a value with :data:`ONE_TERM_RULE`;
* any other measure (one that needs the missing rate only, or combines its
  terms in a way we cannot split) is not applicable, with the reason.
"""

from __future__ import annotations

import numpy as np

from audit.measures.contract import MeasureSpec
from audit.tables.layouts import RATES, available_rates

COMPUTED = "computed"
ONE_TERM = "one term"
NOT_APPLICABLE = "not applicable"

#: The rule stated in every output that carries a one-term value.
ONE_TERM_RULE = (
    "{rate}-only table: computed on the {rate} term alone (alpha = {alpha:g}); the {other} "
    "term is absent"
)
NEEDS_MISSING = "needs {missing}, which the table does not have ({rate}-only table)"
NO_SPLIT = (
    "reads both rates and its terms do not combine linearly or as a product, so it has no "
    "one-term form ({rate}-only table)"
)
NOT_APPLICABLE_HERE = "measure {name!r} is not applicable to {source}: it {reason}"

#: The value given to the absent rate in every group (equal, so its term is ideal).
_PLACEHOLDER = 0.5


def applicability(spec: MeasureSpec, available: tuple[str, ...]) -> tuple[str, str]:
    """``(status, note)``: :data:`COMPUTED`, :data:`ONE_TERM` or :data:`NOT_APPLICABLE`.

    >>> from audit.measures.registry import get_measure
    >>> applicability(get_measure("garbe"), ("fmr",))
    ('one term', 'FMR-only table: computed on the FMR term alone (alpha = 1); the FNMR term is absent')
    >>> applicability(get_measure("std_fnmr"), ("fmr",))[0]
    'not applicable'
    """
    if all(n in available for n in spec.needs):
        return COMPUTED, ""
    rate = available[0].upper()
    missing = [n.upper() for n in spec.needs if n not in available]
    if len(spec.needs) == 1:
        return NOT_APPLICABLE, NEEDS_MISSING.format(missing=" and ".join(missing), rate=rate)
    if isinstance(spec.share, str) and spec.share in ("linear", "log"):
        other = "FNMR" if rate == "FMR" else "FMR"
        return ONE_TERM, ONE_TERM_RULE.format(rate=rate, other=other, alpha=one_term_alpha(rate))
    return NOT_APPLICABLE, NO_SPLIT.format(rate=rate)


def one_term_alpha(rate: str) -> float:
    """The alpha that leaves only the ``rate`` term: 1 for FMR, 0 for FNMR."""
    return 1.0 if rate.lower() == "fmr" else 0.0


def one_term_inputs(
    fmr: np.ndarray, fnmr: np.ndarray, available: tuple[str, ...]
) -> tuple[np.ndarray, np.ndarray, float]:
    """The rate matrices with the absent rate equal in every group, and the alpha to use."""
    if "fmr" in available:
        return fmr, np.full_like(fmr, _PLACEHOLDER), one_term_alpha("fmr")
    return np.full_like(fnmr, _PLACEHOLDER), fnmr, one_term_alpha("fnmr")


FFMC1_ONE_SIDED = (
    "not applicable: the table has {rate} only, so there is no balance of an FMR and an FNMR "
    "term to weigh as alpha varies"
)
NOT_AUDITED = "not applicable: the measure {note}"


def completed_table(table):
    """A one-sided table with the absent rate set equal in every group, for FFMC.2-3.

    FFMC.2 (bounds) and FFMC.3 (zero errors) judge a measure's formula near
    the table's rates; the absent rate, equal in every group, keeps its term
    at the ideal.  Never shown or saved: only the criteria read it.
    """

    available = available_rates(table)
    out = table.copy()
    for rate in RATES:
        if rate not in available:
            out[rate] = _PLACEHOLDER
    return out


def not_audited(spec: MeasureSpec, available: tuple[str, ...], criterion: str) -> str:
    """Why ``criterion`` was not run on ``spec`` for a one-sided table."""
    status, note = applicability(spec, available)
    if status == NOT_APPLICABLE:
        return NOT_AUDITED.format(note=note)
    return FFMC1_ONE_SIDED.format(rate=available[0].upper())
