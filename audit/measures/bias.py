"""More fairness measures from per-group FMR and FNMR, from two papers.

From Hutiri et al. (the ``bt4vt`` package; Table 1 and eq. 2):

* the **per-group bias measures** of Table 1 -- Group-to-min Difference,
  Group-to-average Ratio, Group-to-average log Ratio -- one value per
  (algorithm, group), returned by :func:`group_bias` as a tidy frame; they are
  not one number per algorithm, so they are not scalar registered measures;
* the **Normalised Reliability Bias** (NRB, eq. 2), the mean absolute
  Group-to-average log Ratio, registered on FMR (``nrb_fmr``), on FNMR
  (``nrb_fnmr``) and alpha-combined (``nrb``).

From the measures Elobaid et al. discuss (Table I, eq. 21):

* the **standard deviation** of the group FMRs (``std_fmr``) and of the group
  FNMRs (``std_fnmr``), population form as in eq. 21;
* the **Skewed Error Rate** (``ser``), max over min group FMR (their ref. [20],
  Villalobos et al.).

All are vectorised over algorithms: arrays of shape (n_algorithms, n_groups).
Undefined cases follow :mod:`audit.measures`: NaN, flagged in
``MeasureResult.undefined``, :class:`~audit.measures.UndefinedMeasureWarning`
by default, ``zero_division="raise"`` or a number as in scikit-learn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from audit.exceptions import InputError, ParameterError
from audit.measures.kernels import (
    MeasureResult,
    as_rates,
    combine,
    max_min_ratio,
    one_rate,
    report_undefined,
    row_mean,
)
from audit.tables.rates import rate_matrices
from audit.validation import validate_params

HUTIRI = "Hutiri et al., bias measures for speaker verification (bt4vt)"

NRB_UNDEFINED = (
    "Normalised Reliability Bias undefined for {count} of {total} algorithm(s): a group's "
    "{rate} is 0, so its log ratio to the average (eq. 2 of Hutiri et al.) is infinite; "
    "the value is {value}"
)
RATIO_UNDEFINED = (
    "Group-to-average {kind} undefined for {count} of {total} algorithm(s): {reason}; "
    "the value is NaN"
)
SER_UNDEFINED = (
    "Skewed Error Rate undefined for {count} of {total} algorithm(s): the minimum group FMR "
    "is 0 (or so small that the ratio overflows), so max/min divides by zero; the value is {value}"
)
BAD_RATE = "rate must be 'fmr' or 'fnmr', got {rate!r}"
BAD_AVERAGE = "average must hold one value per algorithm ({n}), got shape {shape}"


def _average(x: np.ndarray, average) -> np.ndarray:
    """The reference value of each row: the group mean, or the given overall values.

    The mean of a row of equal values is that value exactly (a float mean of
    three 0.1s is 0.10000000000000002), so that equal groups give exactly the
    ideal value of the measures built on it.
    """
    if average is None:
        return row_mean(x)
    average = np.asarray(average, dtype="float64")
    if average.ndim == 0:
        average = np.full(x.shape[0], float(average))
    if average.shape != (x.shape[0],):
        raise InputError(BAD_AVERAGE.format(n=x.shape[0], shape=average.shape))
    return average


def _std(x: np.ndarray) -> np.ndarray:
    """Population standard deviation of each row about :func:`_average`'s mean (0 exactly
    for equal values; otherwise :func:`numpy.std`'s arithmetic)."""
    deviation = x - _average(x, None)[:, None]
    return np.sqrt((deviation * deviation).mean(axis=-1))


def _rows(x) -> np.ndarray:
    return np.atleast_2d(np.asarray(x, dtype="float64"))


def g2min_difference(x) -> np.ndarray:
    r"""Group-to-min Difference of each group (Hutiri et al., Table 1).

    .. math:: \mathrm{G2min\ diff}(b)_g = b_g - \min_m b_m

    0 for the best group. Always defined.

    Examples
    --------
    >>> g2min_difference([[3.581, 3.757]]).round(3)  # Hutiri et al. Table 3, 'All', EER
    array([[0.   , 0.176]])
    """
    x = _rows(x)
    return x - x.min(axis=-1, keepdims=True)


@validate_params("zero_division")
def g2avg_ratio(x, *, average=None, zero_division="warn") -> np.ndarray:
    r"""Group-to-average Ratio of each group (Hutiri et al., Table 1).

    .. math:: \mathrm{G2avg\ ratio}(b)_g = b_g / b_{average}

    ``average`` is the reference value of each algorithm. Hutiri et al. use
    the system's overall metric (e.g. the overall EER 3.657 of their Table 2);
    by default (``None``) it is the unweighted mean of the group values,
    which equals the overall rate when the groups are of equal size. Where
    the average is 0 the ratio is NaN with ``zero_division="warn"`` (warned)
    or ``"raise"`` (raised), or the number given as ``zero_division``.

    Examples
    --------
    >>> g2avg_ratio([[3.581, 3.757]], average=3.657).round(3)  # Table 3, 'All', EER
    array([[0.979, 1.027]])
    """
    x = _rows(x)
    avg = _average(x, average)
    undefined = avg == 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = x / avg[:, None]
    ratio[undefined] = np.nan if isinstance(zero_division, str) else float(zero_division)
    report_undefined(
        RATIO_UNDEFINED.format(
            kind="Ratio", count=int(undefined.sum()), total=len(avg), reason="the average is 0"
        ),
        undefined,
        zero_division,
    )
    return ratio


@validate_params("zero_division")
def g2avg_log_ratio(x, *, average=None, zero_division="warn") -> np.ndarray:
    r"""Group-to-average log Ratio of each group (Hutiri et al., Table 1).

    .. math:: \mathrm{G2avg\ log\ ratio}(b)_g = -\ln\left(b_g / b_{average}\right)

    Positive for a group better than average. Where the group's value or the
    average is 0 (the logarithm is infinite or undefined) it is NaN, or the
    number given as ``zero_division``.

    Hutiri et al.'s Table 4 prints this quantity with the opposite sign
    (+ln): there the Indian male FPR of 0.005, five times the design FPR of
    0.001, has log ratio +1.659. Table 1 and Table 3 use -ln, as here; the
    NRB (eq. 2) takes absolute values, so it does not depend on the sign.

    Examples
    --------
    >>> g2avg_log_ratio([[3.581, 3.757]], average=3.657).round(3)  # Table 3, 'All', EER
    array([[ 0.021, -0.027]])
    """
    x = _rows(x)
    ratio = g2avg_ratio.__wrapped__(x, average=average, zero_division=zero_division)
    undefined = (_average(x, average) == 0.0)[:, None] | (x == 0.0)
    zero = x == 0.0
    if zero.any():
        report_undefined(
            RATIO_UNDEFINED.format(
                kind="log Ratio",
                count=int(zero.any(axis=-1).sum()),
                total=len(ratio),
                reason="a group's value is 0 and its logarithm is infinite",
            ),
            zero.any(axis=-1),
            zero_division,
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = -np.log(ratio)
    log_ratio[undefined] = np.nan if isinstance(zero_division, str) else float(zero_division)
    return log_ratio


@validate_params("zero_division")
def normalised_reliability_bias(
    x, *, average=None, zero_division="warn", _rate: str = "rate"
) -> tuple[np.ndarray, np.ndarray]:
    r"""Normalised Reliability Bias of each row of ``x`` (Hutiri et al., eq. 2).

    .. math:: NRB(b) = \frac{1}{G}\sum_{g=1}^{G} \left|\mathrm{G2avg\ log\ ratio}(b)_g\right|

    0 when all groups are equal; no upper bound. Undefined (NaN, flagged)
    when a group's value is 0 or every value is 0: the log ratio is then
    infinite. ``zero_division``: ``"warn"`` (default), ``"raise"`` or a
    number to use as the value.

    Returns
    -------
    (nrb, undefined)

    Examples
    --------
    >>> nrb, _ = normalised_reliability_bias([[3.581, 3.757]], average=3.657)
    >>> nrb.round(3)  # mean of |0.021| and |-0.027|, Table 3 'All' EER
    array([0.024])
    """
    x = _rows(x)
    avg = _average(x, average)
    undefined = (x == 0.0).any(axis=-1) | (avg == 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.abs(np.log(x / avg[:, None])).mean(axis=-1)
    fill = np.nan if isinstance(zero_division, str) else float(zero_division)
    value = np.where(undefined, fill, value)
    report_undefined(
        NRB_UNDEFINED.format(count=int(undefined.sum()), total=len(value), rate=_rate, value=fill),
        undefined,
        zero_division,
    )
    return value, undefined


@validate_params("alpha", "zero_division")
def nrb(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""Normalised Reliability Bias of FMR and FNMR combined by alpha (Hutiri et al. eq. 2).

    .. math:: A = NRB(FMR),\quad B = NRB(FNMR),\quad NRB_\alpha = \alpha A + (1-\alpha) B

    Hutiri et al. compute NRB for one base metric at a time; the
    alpha-weighted sum is the combination FDR and GARBE use (Howard et al.
    eq. 3, 9), added here so that NRB can be compared with them. The
    reference "average" of each rate is the unweighted mean of the group
    rates (Hutiri et al. use the system's overall rate; without comparison
    counts the two agree for groups of equal size). At least 0 (perfectly
    fair), unbounded. Undefined when a group's FMR or FNMR is 0: NaN, whatever
    alpha.

    Examples
    --------
    >>> r = nrb([[1e-4, 1e-4]], [[0.01, 0.03]], alpha=0.5)
    >>> round(float(r.fmr_term[0]), 4), round(float(r.fnmr_term[0]), 4)
    (0.0, 0.5493)
    """
    fmr, fnmr = as_rates(fmr, fnmr)
    a, a_undefined = normalised_reliability_bias.__wrapped__(
        fmr, zero_division=zero_division, _rate="FMR"
    )
    b, b_undefined = normalised_reliability_bias.__wrapped__(
        fnmr, zero_division=zero_division, _rate="FNMR"
    )
    undefined = a_undefined | b_undefined
    value = combine(a, b, alpha)
    if isinstance(zero_division, str):
        value = np.where(undefined, np.nan, value)
    else:
        value = np.where(undefined, float(zero_division), value)
    return MeasureResult(value, a, b, undefined)


@validate_params("alpha", "zero_division")
def nrb_fmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""Normalised Reliability Bias of the group FMRs (Hutiri et al. eq. 2, base metric FMR).

    ``alpha`` is accepted for the common signature of registered measures
    and checked, but it has no effect: the measure sees the FMRs only (its
    FNMR term is NaN, "not part of the measure").

    Examples
    --------
    >>> float(nrb_fmr([[1e-5, 4e-5]], [[0.01, 0.01]]).value[0].round(4))  # ln 2
    0.6931
    """
    fmr, _ = as_rates(fmr, fnmr)
    value, undefined = normalised_reliability_bias.__wrapped__(
        fmr, zero_division=zero_division, _rate="FMR"
    )
    return one_rate(value, undefined, fmr=True)


@validate_params("alpha", "zero_division")
def nrb_fnmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""Normalised Reliability Bias of the group FNMRs (Hutiri et al. eq. 2, base metric FNMR).

    ``alpha`` is checked but has no effect: the measure sees the FNMRs only.

    Examples
    --------
    >>> float(nrb_fnmr([[1e-5, 4e-5]], [[0.01, 0.03]]).value[0].round(4))
    0.5493
    """
    _, fnmr = as_rates(fmr, fnmr)
    value, undefined = normalised_reliability_bias.__wrapped__(
        fnmr, zero_division=zero_division, _rate="FNMR"
    )
    return one_rate(value, undefined, fmr=False)


@validate_params("alpha", "zero_division")
def std_fmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""Standard deviation of the group FMRs (Elobaid et al. Table I; population form, eq. 21).

    .. math:: \sigma_{FMR} = \sqrt{\tfrac{1}{G}\sum_g (FMR_g - \overline{FMR})^2}

    0 when all groups are equal; for rates in [0, 1] at most 0.5 (half the
    groups at 0, half at 1). Always defined. ``alpha`` is checked but has no
    effect: the measure sees the FMRs only.

    Examples
    --------
    >>> float(std_fmr([[1e-4, 3e-4]], [[0.01, 0.01]]).value[0].round(8))
    0.0001
    """
    fmr, _ = as_rates(fmr, fnmr)
    return one_rate(_std(fmr), np.zeros(len(fmr), dtype=bool), fmr=True)


@validate_params("alpha", "zero_division")
def std_fnmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""Standard deviation of the group FNMRs (Elobaid et al. Table I; population form, eq. 21).

    ``alpha`` is checked but has no effect: the measure sees the FNMRs only.

    Examples
    --------
    >>> float(std_fnmr([[1e-4, 3e-4]], [[0.01, 0.03]]).value[0].round(8))
    0.01
    """
    _, fnmr = as_rates(fmr, fnmr)
    return one_rate(_std(fnmr), np.zeros(len(fnmr), dtype=bool), fmr=False)


@validate_params("alpha", "zero_division")
def ser(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""Skewed Error Rate: max over min group FMR (Elobaid et al. Table I, their ref. [20]).

    .. math:: SER = \max_g FMR_g / \min_g FMR_g

    At least 1 (perfectly fair), unbounded. Undefined when the minimum group
    FMR is 0: NaN, flagged, warned (``zero_division`` as in
    :func:`audit.measures.inequity_rate`). It is the FMR term ``A`` of the
    Inequity Rate (Howard et al. eq. 4). ``alpha`` is checked but has no
    effect: the measure sees the FMRs only.

    Examples
    --------
    >>> float(ser([[1e-5, 4e-5]], [[0.01, 0.03]]).value[0])
    4.0
    """
    fmr, _ = as_rates(fmr, fnmr)
    value, undefined = max_min_ratio(fmr)
    fill = np.nan if isinstance(zero_division, str) else float(zero_division)
    value = np.where(undefined, fill, value)
    report_undefined(
        SER_UNDEFINED.format(count=int(undefined.sum()), total=len(value), value=fill),
        undefined,
        zero_division,
    )
    return one_rate(value, undefined, fmr=True)


# --- per-group measures -------------------------------------------------------------


@dataclass(frozen=True)
class GroupMeasure:
    """A per-group bias measure: one value per (algorithm, group)."""

    name: str
    label: str
    function: Callable[..., np.ndarray]
    uses_average: bool
    citation: str


GROUP_MEASURES: tuple[GroupMeasure, ...] = (
    GroupMeasure(
        "g2min_difference", "G2min difference", g2min_difference, False, f"{HUTIRI}, Table 1"
    ),
    GroupMeasure("g2avg_ratio", "G2avg ratio", g2avg_ratio, True, f"{HUTIRI}, Table 1"),
    GroupMeasure("g2avg_log_ratio", "G2avg log ratio", g2avg_log_ratio, True, f"{HUTIRI}, Table 1"),
)


@validate_params("zero_division")
def group_bias(
    table: pd.DataFrame,
    *,
    rates: Sequence[str] = ("fmr", "fnmr"),
    average: Mapping[str, object] | None = None,
    zero_division="warn",
) -> pd.DataFrame:
    """The per-group bias measures of Hutiri et al. Table 1 on a validated rates table.

    Parameters
    ----------
    table
        A table from :func:`audit.tables.rates.read_rates`.
    rates
        Which base metrics: ``"fmr"`` and/or ``"fnmr"``.
    average
        Optional ``{rate: values}`` giving each algorithm's overall rate (one
        value per algorithm, in table order) as the reference of the G2avg
        measures; by default the unweighted mean of the group rates.
    zero_division
        As in :mod:`audit.measures`, for an average of 0 or a log of 0.

    Returns
    -------
    pandas.DataFrame
        Tidy: one row per (algorithm, group, rate, measure), columns
        ``algorithm``, ``group``, ``rate``, ``measure``, ``value``.

    Examples
    --------
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"algorithm": ["a", "a"], "group": ["M", "F"],
    ...                              "fmr": [1e-4, 3e-4], "fnmr": [0.02, 0.02]}))
    >>> group_bias(t, rates=["fmr"]).query("measure == 'g2avg_ratio'")["value"].round(3).tolist()
    [0.5, 1.5]
    """
    algorithms, groups, fmr, fnmr = rate_matrices(table)
    matrices = {"fmr": fmr, "fnmr": fnmr}
    frames = []
    for rate in rates:
        if rate not in matrices:
            raise ParameterError(BAD_RATE.format(rate=rate))
        reference = None if average is None else average.get(rate)
        for spec in GROUP_MEASURES:
            if spec.uses_average:
                values = spec.function(
                    matrices[rate], average=reference, zero_division=zero_division
                )
            else:
                values = spec.function(matrices[rate])
            frames.append(
                pd.DataFrame(
                    {
                        "algorithm": np.repeat(algorithms.to_numpy(), len(groups)),
                        "group": np.tile(groups.to_numpy(), len(algorithms)),
                        "rate": rate,
                        "measure": spec.name,
                        "value": values.ravel(),
                    }
                )
            )
    out = pd.concat(frames, ignore_index=True)
    for column in ("algorithm", "group", "rate", "measure"):
        out[column] = out[column].astype("string")
    return out


# --- registration -------------------------------------------------------------------
