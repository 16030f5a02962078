"""Zero-error-adjusted ratio measures: a zero rate replaced by its Clopper-Pearson upper bound.

A group with no errors in n comparisons has a rate of 0, and a ratio whose
denominator it enters (Max/Min, a geometric mean, a reference group) is then
undefined: the question FFMC.3 asks.  Linghu et al. (IJCB 2024; their code,
``score_norm_fairness/metrics_only.py`` ``upper_bound_error_rate`` and
``zero_error_rate``) replace such a rate by the upper bound of a one-sided
Clopper-Pearson interval at level a = 0.05, the inverse regularised incomplete
beta function at 1 - a of (x + 1, n - x) with x = 0 errors:

.. math:: \\hat r_0 = B^{-1}(1 - a;\\ 1, n) = 1 - a^{1/n}

(:func:`zero_error_bound`; with n = 100,000 non-mated comparisons,
2.9957e-5).  The count n of a cell is its ``n_nonmated`` for an FMR and its
``n_mated`` for an FNMR, so these measures need the comparison counts: a table
without them is refused (:data:`audit.measures.contract.MISSING_COUNTS`) and the
FFMC audit lists them as not applicable.

Where the bound replaces a zero.  Every zero rate is replaced wherever it
enters the measure, i.e. the measure is computed on the adjusted rates
(:func:`adjust_zero_rates`).  Linghu et al.'s adjusted MERG
(``compute_merg_adjusted``) replaces the zeros in the geometric mean only and
takes the maximum from the raw rates.  The two agree whenever every zero
cell's bound is at most the largest rate of its kind (the usual case: many
comparisons); otherwise theirs falls below 1, the value of a perfectly fair
system, where ours stays at 1 or above.

Registered (each the measure of the same name without ``_cp``, on the
adjusted rates): ``nist_max_min_fmr_cp``, ``nist_max_min_fnmr_cp``,
``nist_max_geomean_fmr_cp``, ``nist_max_geomean_fnmr_cp``, ``ratio_fmr_cp``,
``ratio_fnmr_cp``, ``merg_cp`` and ``ir_cp``.  They are never undefined: every
count is at least 1 (the readers refuse a zero count), so every adjusted rate
is positive.
"""

from __future__ import annotations

import numpy as np

from audit.measures.kernels import MeasureResult, inequity_rate
from audit.measures.merg import merg
from audit.measures.nist import (
    nist_max_geomean_fmr,
    nist_max_geomean_fnmr,
    nist_max_min_fmr,
    nist_max_min_fnmr,
)
from audit.measures.reference import ratio_fmr, ratio_fnmr
from audit.validation import validate_params

#: Level a of the one-sided Clopper-Pearson interval (Linghu et al.: 0.05, a 95% bound).
CLOPPER_PEARSON_LEVEL = 0.05


def zero_error_bound(n, *, level: float = CLOPPER_PEARSON_LEVEL) -> np.ndarray:
    """Upper bound of the one-sided Clopper-Pearson interval of a rate with 0 errors in
    ``n`` comparisons: ``scipy.stats.beta.ppf(1 - level, 1, n)``, i.e. ``1 - level**(1/n)``.

    >>> zero_error_bound(100_000).round(10)
    np.float64(2.99569e-05)
    >>> float(zero_error_bound(1))  # one comparison: the bound is 1 - a
    0.95
    """
    from scipy import special  # imported here: scipy costs more to import than the registry

    # the beta distribution's quantile (scipy.stats.beta.ppf) is betaincinv
    return special.betaincinv(1.0, np.asarray(n, dtype="float64"), 1.0 - level)


def adjust_zero_rates(rates, counts, *, level: float = CLOPPER_PEARSON_LEVEL) -> np.ndarray:
    """``rates`` with every 0 replaced by :func:`zero_error_bound` of its cell's count.

    >>> adjust_zero_rates([[0.0, 1e-4]], [[100_000, 100_000]]).round(10)
    array([[2.99569e-05, 1.00000e-04]])
    """
    rates = np.atleast_2d(np.asarray(rates, dtype="float64"))
    counts = np.broadcast_to(np.asarray(counts, dtype="float64"), rates.shape)
    zero = rates == 0.0
    if not zero.any():
        return rates
    out = rates.copy()
    out[zero] = zero_error_bound(counts[zero], level=level)
    return out


def _adjusted(fmr, fnmr, n_mated=None, n_nonmated=None):
    """The rates with their zeros replaced, each by the counts it has."""
    if n_nonmated is not None:
        fmr = adjust_zero_rates(fmr, n_nonmated)
    if n_mated is not None:
        fnmr = adjust_zero_rates(fnmr, n_mated)
    return fmr, fnmr


@validate_params("alpha", "zero_division")
def nist_max_min_fmr_cp(
    fmr, fnmr, *, alpha: float = 0.5, zero_division="warn", n_nonmated
) -> MeasureResult:
    """Max/Min FMR (:func:`audit.measures.nist.nist_max_min_fmr`) on the FMRs with every
    zero replaced by its Clopper-Pearson upper bound (``n_nonmated`` comparisons).

    >>> round(float(nist_max_min_fmr_cp([[0.0, 3e-4]], [[0.1, 0.1]],
    ...                                  n_nonmated=[[100_000, 100_000]]).value[0]), 4)
    10.0144
    """
    fmr, fnmr = _adjusted(fmr, fnmr, n_nonmated=n_nonmated)
    return nist_max_min_fmr.__wrapped__(fmr, fnmr, alpha=alpha, zero_division=zero_division)


@validate_params("alpha", "zero_division")
def nist_max_min_fnmr_cp(
    fmr, fnmr, *, alpha: float = 0.5, zero_division="warn", n_mated
) -> MeasureResult:
    """Max/Min FNMR on the FNMRs with every zero replaced by its Clopper-Pearson upper bound
    (``n_mated`` comparisons).

    >>> round(float(nist_max_min_fnmr_cp([[1e-4, 1e-4]], [[0.0, 0.03]],
    ...                                   n_mated=[[1000, 1000]]).value[0]), 4)
    10.0293
    """
    fmr, fnmr = _adjusted(fmr, fnmr, n_mated=n_mated)
    return nist_max_min_fnmr.__wrapped__(fmr, fnmr, alpha=alpha, zero_division=zero_division)


@validate_params("alpha", "zero_division")
def nist_max_geomean_fmr_cp(
    fmr, fnmr, *, alpha: float = 0.5, zero_division="warn", n_nonmated
) -> MeasureResult:
    """Max/GeoMean FMR (:func:`audit.measures.nist.nist_max_geomean_fmr`) on the FMRs with
    every zero replaced by its Clopper-Pearson upper bound."""
    fmr, fnmr = _adjusted(fmr, fnmr, n_nonmated=n_nonmated)
    return nist_max_geomean_fmr.__wrapped__(fmr, fnmr, alpha=alpha, zero_division=zero_division)


@validate_params("alpha", "zero_division")
def nist_max_geomean_fnmr_cp(
    fmr, fnmr, *, alpha: float = 0.5, zero_division="warn", n_mated
) -> MeasureResult:
    """Max/GeoMean FNMR on the FNMRs with every zero replaced by its Clopper-Pearson upper
    bound."""
    fmr, fnmr = _adjusted(fmr, fnmr, n_mated=n_mated)
    return nist_max_geomean_fnmr.__wrapped__(fmr, fnmr, alpha=alpha, zero_division=zero_division)


@validate_params("alpha", "zero_division")
def ratio_fmr_cp(
    fmr, fnmr, *, alpha: float = 0.5, zero_division="warn", numerator, reference, n_nonmated
) -> MeasureResult:
    """FMR ratio to a reference demographic (:func:`audit.measures.reference.ratio_fmr`) on the
    FMRs with every zero replaced by its Clopper-Pearson upper bound (both sides: the folded
    ratio divides by each)."""
    fmr, fnmr = _adjusted(fmr, fnmr, n_nonmated=n_nonmated)
    return ratio_fmr.__wrapped__(
        fmr,
        fnmr,
        alpha=alpha,
        zero_division=zero_division,
        numerator=numerator,
        reference=reference,
    )


@validate_params("alpha", "zero_division")
def ratio_fnmr_cp(
    fmr, fnmr, *, alpha: float = 0.5, zero_division="warn", numerator, reference, n_mated
) -> MeasureResult:
    """FNMR ratio to a reference demographic on the FNMRs with every zero replaced by its
    Clopper-Pearson upper bound."""
    fmr, fnmr = _adjusted(fmr, fnmr, n_mated=n_mated)
    return ratio_fnmr.__wrapped__(
        fmr,
        fnmr,
        alpha=alpha,
        zero_division=zero_division,
        numerator=numerator,
        reference=reference,
    )


@validate_params("alpha", "zero_division")
def merg_cp(
    fmr, fnmr, *, alpha: float = 0.5, zero_division="warn", n_mated, n_nonmated
) -> MeasureResult:
    """MERG (:func:`audit.measures.merg.merg`) on the rates with every zero replaced by its
    Clopper-Pearson upper bound: Linghu et al.'s adjusted MERG, its maximum taken from the
    adjusted rates too (see the module docstring)."""
    fmr, fnmr = _adjusted(fmr, fnmr, n_mated=n_mated, n_nonmated=n_nonmated)
    return merg.__wrapped__(fmr, fnmr, alpha=alpha, zero_division=zero_division)


@validate_params("alpha", "zero_division")
def ir_cp(
    fmr, fnmr, *, alpha: float = 0.5, zero_division="warn", n_mated, n_nonmated
) -> MeasureResult:
    """The Inequity Rate (:func:`audit.measures.kernels.inequity_rate`, Howard et al.
    eq. 4-6) on the rates with every zero replaced by its Clopper-Pearson upper bound."""
    fmr, fnmr = _adjusted(fmr, fnmr, n_mated=n_mated, n_nonmated=n_nonmated)
    return inequity_rate.__wrapped__(fmr, fnmr, alpha=alpha, zero_division=zero_division)
