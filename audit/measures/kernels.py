"""Fairness measures computed from per-group FMR and FNMR.

Every measure here is a pure function of two arrays of shape
``(n_algorithms, n_groups)`` (or ``(n_groups,)`` for one algorithm), vectorised
over algorithms, and returns a :class:`MeasureResult` holding the measure and
its FMR term ``A`` and FNMR term ``B`` (Howard et al. 2022, eq. 1-9).

Undefined cases are explicit, in the manner of scikit-learn's
``zero_division``: the Inequity Rate when a group's rate is 0 (eq. 4-5 divide
by it) and the Gini coefficient when every group's rate is 0 (eq. 7 divides by
the mean).  The default ``zero_division="warn"`` applies the documented
convention and emits an :class:`UndefinedMeasureWarning`; ``"raise"`` raises
:class:`UndefinedMeasureError`; the result's ``undefined`` mask always says
which algorithms were affected, so nothing undefined reaches a ranking unseen.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from audit.exceptions import InputError, UndefinedMeasureError, UndefinedMeasureWarning, warn
from audit.validation import Boolean, check, validate_params

TOO_FEW_GROUPS = "a fairness measure needs at least 2 groups, got {n}"
SHAPE_MISMATCH = "fmr and fnmr must have the same shape, got {fmr} and {fnmr}"
IR_UNDEFINED = (
    "Inequity Rate undefined for {count} of {total} algorithm(s): the minimum group "
    "{rate} is 0 (or so small that the ratio overflows), so eq. {eq} of Howard et al. "
    "divides by zero; the value is NaN"
)
GINI_UNDEFINED = (
    "Gini coefficient undefined for {count} of {total} algorithm(s): every group's "
    "{rate} is 0, so eq. 7 of Howard et al. divides by a zero mean; set to {value} "
    "(all groups equal)"
)


@dataclass(frozen=True)
class MeasureResult:
    """A measure's values and terms, one entry per algorithm.

    Attributes
    ----------
    value
        The measure.
    fmr_term, fnmr_term
        The terms ``A`` (from the group FMRs) and ``B`` (from the group FNMRs).
    undefined
        True where the paper's formula is undefined for that algorithm and the
        value comes from the ``zero_division`` convention (or is NaN).
    """

    value: np.ndarray
    fmr_term: np.ndarray
    fnmr_term: np.ndarray
    undefined: np.ndarray


def combine(a, b, alpha) -> np.ndarray:
    """``alpha * a + (1 - alpha) * b`` as a new array, computed with one temporary.

    ``alpha`` may be a column of alphas (shape (n_alphas, 1)) broadcast against
    the terms (shape (n,)); the values are those of the plain expression.

    >>> combine(np.array([1.0, 0.0]), np.array([0.0, 1.0]), 0.25)
    array([0.25, 0.75])
    """
    value = np.multiply(alpha, a)
    other = np.multiply(1.0 - np.asarray(alpha), b)
    if isinstance(value, np.ndarray) and value.shape == np.broadcast_shapes(
        value.shape, np.shape(other)
    ):
        value += other
        return value
    return value + other


def row_mean(x: np.ndarray) -> np.ndarray:
    """The arithmetic mean of each row, exactly the value itself for a row of equal values
    (a float mean of three 0.1s is 0.10000000000000002), so that equal groups give exactly
    the ideal value of the measures built on it.

    >>> row_mean(np.array([[0.1, 0.1, 0.1], [1.0, 2.0, 6.0]])).tolist()
    [0.1, 3.0]
    """
    equal = (x == x[:, :1]).all(axis=-1)
    return np.where(equal, x[:, 0], x.mean(axis=-1))


def one_rate(term: np.ndarray, undefined: np.ndarray, *, fmr: bool) -> MeasureResult:
    """The result of a measure of one error rate: its term is the value, the other term NaN
    (not part of the measure).

    >>> one_rate(np.array([2.0]), np.array([False]), fmr=False).fmr_term
    array([nan])
    """
    ignored = np.full(len(term), np.nan)
    if fmr:
        return MeasureResult(term, term, ignored, undefined)
    return MeasureResult(term, ignored, term, undefined)


def check_alpha(alpha):
    """``alpha`` checked as every measure's ``alpha`` is (:data:`audit.validation.PARAMETERS`),
    for measure authors: a number comes back as a float, an array of alphas (the
    registry passes a column of shape (n_alphas, 1) to kernels that broadcast
    over alpha) as a float64 array of the same shape.

    >>> check_alpha(1)
    1.0
    """
    return check("alpha", alpha)


def as_rates(fmr, fnmr) -> tuple[np.ndarray, np.ndarray]:
    """Both rate arrays as float64 of shape (n_algorithms, n_groups): what a measure's
    function (a user's too, see the README) begins with.

    >>> fmr, fnmr = as_rates([1e-4, 2e-4], [[0.01, 0.02]])
    >>> fmr.shape, fnmr.dtype
    ((1, 2), dtype('float64'))
    """
    fmr = np.atleast_2d(np.asarray(fmr, dtype="float64"))
    fnmr = np.atleast_2d(np.asarray(fnmr, dtype="float64"))
    if fmr.shape != fnmr.shape:
        raise InputError(SHAPE_MISMATCH.format(fmr=fmr.shape, fnmr=fnmr.shape))
    if fmr.shape[-1] < 2:
        raise InputError(TOO_FEW_GROUPS.format(n=fmr.shape[-1]))
    return fmr, fnmr


def check_zero_division(zero_division) -> None:
    """Refuse a ``zero_division`` policy other than ``"warn"``, ``"flag"``, ``"raise"`` or a
    number (the declaration of :data:`audit.validation.PARAMETERS`), for measure authors.

    ``"flag"`` applies the documented convention like ``"warn"`` but only
    flags it in ``MeasureResult.undefined``, for callers that report the mask.
    """
    check("zero_division", zero_division)


def report_undefined(message: str, mask: np.ndarray, zero_division) -> None:
    """Apply the ``zero_division`` policy where ``mask`` flags undefined values:
    raise :class:`UndefinedMeasureError`, warn :class:`UndefinedMeasureWarning`,
    or (``"flag"``, or a number was given) stay silent."""
    if not mask.any():
        return
    if zero_division == "raise":
        raise UndefinedMeasureError(message)
    if zero_division == "warn":
        warn(message, UndefinedMeasureWarning)


@validate_params("zero_division", corrected=Boolean())
def gini(
    x, *, zero_division="warn", corrected: bool = True, _rate: str = "rate"
) -> tuple[np.ndarray, np.ndarray]:
    r"""Small-sample corrected Gini coefficient of each row of ``x`` (Howard et al. eq. 7).

    .. math:: G_x = \frac{n}{n-1}\,\frac{\sum_i\sum_j |x_i - x_j|}{2 n^2 \bar x}

    computed in :math:`O(n \log n)` per row from the sorted values
    (:math:`\sum_{i,j}|x_i-x_j| = 2\sum_k (2k-n-1)\,x_{(k)}`). For non-negative
    data it lies in [0, 1]: 0 when all values are equal, 1 when one value holds
    the whole sum.

    ``corrected=False`` drops the factor :math:`n/(n-1)`: the plain Gini
    coefficient (half the relative mean absolute difference), which NIST's
    "Vary Gini" uses (:func:`audit.measures.nist.nist_gini_fmr`); it lies in
    [0, 1 - 1/n], its largest value depending on the number of groups.

    When every value of a row is 0 the mean is 0 and eq. 7 is undefined. The
    convention here is ``G = 0`` (all groups equal: no dispersion), flagged in
    the returned mask, with ``zero_division`` as for the measures: ``"warn"``
    (the default) applies it with an :class:`UndefinedMeasureWarning`,
    ``"raise"`` raises, and a number is used as the value instead.

    Returns
    -------
    (G, undefined)
        The coefficients and the mask of rows whose mean was 0.

    Examples
    --------
    >>> gini([5.0, 5.0, 10.0])[0]  # Howard et al. sec. 3.5: G = 0.25
    array([0.25])
    >>> gini([5.0, 5.0, 10.0], corrected=False)[0]  # the same double sum without n/(n-1)
    array([0.16666667])
    """
    x = np.atleast_2d(np.asarray(x, dtype="float64"))
    n = x.shape[-1]
    if n < 2:
        raise InputError(TOO_FEW_GROUPS.format(n=n))
    ordered = np.sort(x, axis=-1)
    ranks = 2.0 * np.arange(1, n + 1) - n - 1.0
    pair_sum = 2.0 * (ordered * ranks).sum(axis=-1)
    total = x.sum(axis=-1)
    undefined = total == 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = n / (n - 1.0) if corrected else 1.0
        g = factor * pair_sum / (2.0 * n * total)
    fill = 0.0 if isinstance(zero_division, str) else float(zero_division)
    g = np.where(undefined, fill, g)
    report_undefined(
        GINI_UNDEFINED.format(count=int(undefined.sum()), total=len(g), rate=_rate, value=fill),
        undefined,
        zero_division,
    )
    return g, undefined


@validate_params("alpha", "zero_division")
def fdr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""Fairness Discrepancy Rate (de Freitas Pereira & Marcel; Howard et al. eq. 1-3).

    .. math::
        A = \max_{i,j} |FMR_i - FMR_j|,\quad B = \max_{i,j} |FNMR_i - FNMR_j|,\quad
        FDR = 1 - (\alpha A + (1-\alpha) B)

    Bounded in [0, 1]; 1 is perfectly fair. Always defined (``zero_division``
    is checked and has no effect).

    Examples
    --------
    >>> r = fdr([[1e-4, 3e-4]], [[0.02, 0.05]], alpha=0.5)
    >>> round(float(r.value[0]), 6), round(float(r.fnmr_term[0]), 6)
    (0.9849, 0.03)
    """
    fmr, fnmr = as_rates(fmr, fnmr)
    a = fmr.max(axis=-1) - fmr.min(axis=-1)
    b = fnmr.max(axis=-1) - fnmr.min(axis=-1)
    value = combine(a, b, alpha)
    np.subtract(1.0, value, out=value)
    return MeasureResult(value, a, b, np.zeros(len(a), dtype=bool))


def max_min_ratio(rates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Largest over smallest group rate of each row (Howard et al. eq. 4-5), NaN and
    flagged where the smallest is 0.

    >>> max_min_ratio(np.array([[1e-5, 4e-5], [0.0, 1e-5]]))
    (array([ 4., nan]), array([False,  True]))
    """
    high, low = rates.max(axis=-1), rates.min(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = high / np.where(low == 0.0, 1.0, low)
    # a minimum so small (subnormal) that the ratio overflows is as undefined as 0
    undefined = (low == 0.0) | ~np.isfinite(ratio)
    return np.where(undefined, np.nan, ratio), undefined


@validate_params("alpha", "zero_division")
def inequity_rate(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""Inequity Rate (Grother, NIST; Howard et al. eq. 4-6).

    .. math::
        A = \frac{\max_i FMR_i}{\min_j FMR_j},\quad
        B = \frac{\max_i FNMR_i}{\min_j FNMR_j},\quad IR = A^{\alpha} B^{1-\alpha}

    At least 1 (perfectly fair), unbounded above. Undefined when the minimum
    group FMR or FNMR is 0: that term and the value are NaN, whatever alpha,
    and ``undefined`` is set; ``zero_division="warn"`` (default) also warns,
    ``"raise"`` raises :class:`UndefinedMeasureError`. A number given as
    ``zero_division`` replaces the undefined values.

    Examples
    --------
    >>> r = inequity_rate([[1e-5, 4e-5]], [[0.01, 0.04]], alpha=0.5)
    >>> float(r.value[0])
    4.0
    """
    fmr, fnmr = as_rates(fmr, fnmr)
    a, a_undefined = max_min_ratio(fmr)
    b, b_undefined = max_min_ratio(fnmr)
    undefined = a_undefined | b_undefined
    with np.errstate(invalid="ignore"):
        value = a**alpha
        value *= b ** (1.0 - alpha)  # in place: the same values, one array fewer
    value[..., undefined] = np.nan
    total = len(value)
    report_undefined(
        IR_UNDEFINED.format(count=int(a_undefined.sum()), total=total, rate="FMR", eq=4),
        a_undefined,
        zero_division,
    )
    report_undefined(
        IR_UNDEFINED.format(count=int(b_undefined.sum()), total=total, rate="FNMR", eq=5),
        b_undefined,
        zero_division,
    )
    if not isinstance(zero_division, str):
        fill = float(zero_division)
        a, b = np.where(a_undefined, fill, a), np.where(b_undefined, fill, b)
        value = np.where(undefined, fill, value)
    return MeasureResult(value, a, b, undefined)


@validate_params("alpha", "zero_division")
def garbe(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""Gini Aggregation Rate for Biometric Equitability (Howard et al. eq. 7-9).

    .. math:: A = G_{FMR},\quad B = G_{FNMR},\quad GARBE = \alpha A + (1-\alpha) B

    with :math:`G` the n/(n-1)-corrected Gini coefficient of eq. 7 over the
    groups (see :func:`gini`). Bounded in [0, 1]; 0 is perfectly fair.

    The paper counts GARBE as always computable (FFMC.3). It is, except when
    every group's FMR (or every group's FNMR) is 0: eq. 7 then divides by a
    zero mean. That term is set to 0 (all groups are equal) and flagged in
    ``undefined``; ``zero_division`` chooses warn (default), raise, or another
    value for the term.

    Examples
    --------
    >>> r = garbe([[1e-5, 1e-5, 1e-5, 4e-5]], [[0.01, 0.01, 0.02, 0.02]], alpha=0.5)
    >>> round(float(r.fmr_term[0]), 4), round(float(r.fnmr_term[0]), 4)
    (0.4286, 0.2222)
    """
    fmr, fnmr = as_rates(fmr, fnmr)
    a, a_undefined = gini.__wrapped__(fmr, zero_division=zero_division, _rate="FMR")
    b, b_undefined = gini.__wrapped__(fnmr, zero_division=zero_division, _rate="FNMR")
    value = combine(a, b, alpha)
    return MeasureResult(value, a, b, a_undefined | b_undefined)
