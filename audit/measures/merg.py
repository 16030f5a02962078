"""MERG and MERA: alpha-weighted products of max-to-mean ratios (Linghu et al., IJCB 2024).

Linghu et al. ("score normalization for demographic fairness", IJCB 2024;
public code in the repository adachannn/score-norm-fairness) summarise the
group FMRs and FNMRs as IR does (Howard et al. eq. 4-6), with a mean in place
of the best group:

* **MERG** (:func:`merg`), published as **WERM**: the largest group rate over
  the geometric mean of the group rates, per rate, combined as a weighted
  product;
* **MERA** (:func:`mera`): the same over the arithmetic mean.

Which term alpha weights.  In the reference code
(``score_norm_fairness/metrics_only.py`` ``compute_merg``/``compute_mera``;
``evaluation/WERM/utils.py`` ``compute_werm_geo``) the first argument is
weighted by ``alpha`` and the second by ``beta``, and the report script passes
the FNMRs first: there alpha weights the FNMR term.  Here, as for IR, alpha
weights the FMR term and the FNMR term gets 1 - alpha; with the defaults of
0.5 the two readings agree.  (The repository's ``beta`` is free; a product of
powers summing to 1 keeps the value a ratio and makes FFMC.1's share
meaningful.)

A zero rate.  The reference code adds an epsilon (1e-6 in ``metrics_only.py``,
1e-5 in ``compute_werm_geo``) to every rate inside the geometric mean, never
to the maximum.  We do not: at the FMRs of face recognition such an epsilon is
of the size of the rates themselves (Annex 15's floor is 1e-5), so the value
depends on an arbitrary constant: on Annex 15, epsilon = 1e-5 lowers MERG's FMR
term by a median factor of 0.70 (by 0.62 at most), though the ranking of the
algorithms barely moves (Spearman 0.998).  A zero rate makes MERG undefined
(its documented policy: NaN, flagged, warned); the zero-error-adjusted
``merg_cp`` (:mod:`audit.measures.zeroerrors`) replaces it by its
Clopper-Pearson upper bound, as Linghu et al. do, when the table has the
comparison counts.  MERA is defined when a rate is 0 (the arithmetic mean
stays positive) and undefined only when every group's rate is 0.
"""

from __future__ import annotations

import numpy as np

from audit.measures.kernels import MeasureResult, as_rates
from audit.measures.nist import (
    GEOMEAN_ZERO,
    MEAN_ZERO,
    max_geomean_ratio,
    max_mean_ratio,
    settle,
)
from audit.validation import validate_params

LINGHU = (
    "Linghu et al., IJCB 2024, score normalization for demographic fairness "
    "(code: adachannn/score-norm-fairness, score_norm_fairness/metrics_only.py)"
)


def power_product(a, b, alpha) -> np.ndarray:
    """``a**alpha * b**(1 - alpha)``, NaN wherever ``a`` or ``b`` is NaN (numpy's
    ``nan**0`` is 1); ``alpha`` may be a column of alphas broadcast against the terms.

    >>> power_product(np.array([4.0, np.nan]), np.array([1.0, 2.0]), 0.0)
    array([ 1., nan])
    """
    with np.errstate(invalid="ignore"):
        value = np.power(a, alpha) * np.power(b, 1.0 - np.asarray(alpha))
    missing = np.isnan(a) | np.isnan(b)
    return np.where(missing, np.nan, value)


def _terms(fmr, fnmr, alpha, zero_division, kernel, reason: str, convention: float, summary: str):
    fmr, fnmr = as_rates(fmr, fnmr)
    terms = []
    for rate, x in (("FMR", fmr), ("FNMR", fnmr)):
        value, undefined = kernel(x)
        terms.append(
            settle(
                value,
                undefined,
                summary=f"{summary} {rate} term",
                reason=reason.format(rate=rate),
                convention=convention,
                zero_division=zero_division,
            )
        )
    (a, a_undefined), (b, b_undefined) = terms
    undefined = a_undefined | b_undefined
    value = power_product(a, b, alpha)
    if not isinstance(zero_division, str):
        value = np.where(undefined, float(zero_division), value)
    return MeasureResult(value, a, b, undefined)


@validate_params("alpha", "zero_division")
def merg(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""MERG (published as WERM): max-to-geometric-mean ratios of FMR and FNMR, weighted by alpha.

    .. math::
        A = \frac{\max_g FMR_g}{\left(\prod_g FMR_g\right)^{1/n}},\quad
        B = \frac{\max_g FNMR_g}{\left(\prod_g FNMR_g\right)^{1/n}},\quad
        MERG = A^{\alpha} B^{1-\alpha}

    (Linghu et al., IJCB 2024; ``compute_merg`` of their code.)  alpha
    weights the FMR term, as in IR (the reference code weights the FNMR term
    with its alpha; see the module docstring).  At least 1 (fair), unbounded.
    A zero rate makes its geometric mean 0: that term and the value are NaN,
    flagged, warned (``zero_division`` as for IR); no epsilon is added.

    Examples
    --------
    >>> r = merg([[1e-5, 1e-3]], [[0.01, 0.04]], alpha=0.5)
    >>> round(float(r.fmr_term[0]), 9), round(float(r.fnmr_term[0]), 9), round(float(r.value[0]), 9)
    (10.0, 2.0, 4.472135955)
    """
    return _terms(fmr, fnmr, alpha, zero_division, max_geomean_ratio, GEOMEAN_ZERO, np.nan, "MERG")


@validate_params("alpha", "zero_division")
def mera(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""MERA: max-to-arithmetic-mean ratios of FMR and FNMR, weighted by alpha.

    .. math::
        A = \frac{\max_g FMR_g}{\overline{FMR}},\quad
        B = \frac{\max_g FNMR_g}{\overline{FNMR}},\quad MERA = A^{\alpha} B^{1-\alpha}

    (Linghu et al., IJCB 2024; ``compute_mera`` of their code.)  alpha weights
    the FMR term, as in IR.  At least 1 (fair); each term is at most n, the
    number of groups, so MERA has no bound that holds whatever n (declared
    unbounded).  Defined when a group's rate is 0; when every group's FMR (or
    FNMR) is 0 the mean is 0 and that term is set to 1 (all groups equal),
    flagged, warned.

    Examples
    --------
    >>> r = mera([[1e-5, 3e-5]], [[0.01, 0.01]], alpha=1.0)
    >>> float(r.fmr_term[0]), float(r.fnmr_term[0]), float(r.value[0])
    (1.5, 1.0, 1.5)
    """
    return _terms(fmr, fnmr, alpha, zero_division, max_mean_ratio, MEAN_ZERO, 1.0, "MERA")
