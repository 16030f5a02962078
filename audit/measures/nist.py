"""NIST's summaries of demographic differentials (NISTIR 8429) as measures.

NISTIR 8429 ("FRTE Part 8: Summarizing Demographic Differentials", Grother,
2022; the summary table of FRTE 1:1 "demographic effects") summarises the
rates of an algorithm's demographic cells, at one threshold per algorithm
giving an overall FMR of 3e-5 (:data:`audit.scores.thresholds.NIST_OPERATING_FMR`),
for FMR and separately for FNMR:

* **Max/Min** (:func:`max_min_ratio`), and for FNMR **Max-Min**
  (:func:`max_minus_min`);
* **Max/Mean**, the worst cell over the arithmetic mean (:func:`max_mean_ratio`);
* **Max/GeoMean**, the worst cell over the geometric mean (:func:`max_geomean_ratio`);
* **Vary GeoMean**, the mean over the cells of :math:`|\\log_{10}(r / \\mathrm{geomean})|`
  (:func:`log10_spread`);
* **Vary Gini**, the Gini coefficient of the cells (:func:`audit.measures.kernels.gini`
  with ``corrected=False``: NIST's does not carry the n/(n-1) factor of GARBE's);
* **ratios of one demographic to a reference** (E. Africa / E. Europe, Female /
  Male, 65+ / 20-35), each side the geometric mean over the cells it covers
  (:func:`marginal_ratio`, options resolved by :func:`resolve_ratio`).

Each summary is registered once per rate (``nist_max_min_fmr``,
``nist_max_min_fnmr``, ...): a measure of one error rate, which takes no alpha
(``alpha`` is checked and has no effect; its other term is NaN).  The best and
the worst cell are accuracy, not dispersion: they are not registered (they are
``fmr.min(axis=1)`` and ``fmr.max(axis=1)``).  The ratios read the groups'
attribute values, so they are table measures
(:class:`~audit.measures.contract.TableMeasure`): ``ratio_fmr`` and
``ratio_fnmr``, e.g. ``evaluate(table, "ratio_fmr", reference="White",
numerator="Black")``; their value folds the ratio at 1 so that it ranks, and
their term is the ratio as NIST publishes it.

Undefined cases follow :mod:`audit.measures`: a documented convention or NaN,
flagged in ``MeasureResult.undefined``, an
:class:`~audit.measures.UndefinedMeasureWarning` by default,
``zero_division="raise"`` or a number as in scikit-learn.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from audit.exceptions import ParameterError
from audit.measures.kernels import (
    MeasureResult,
    as_rates,
    check_alpha,
    check_zero_division,
    gini,
    max_min_ratio,
    one_rate,
    report_undefined,
)

NISTIR_8429 = 'Grother, NISTIR 8429 "FRTE Part 8: Summarizing Demographic Differentials" (2022)'

SUMMARY_UNDEFINED = (
    "{summary} undefined for {count} of {total} algorithm(s): {reason}; the value is {value}"
)
MIN_ZERO = "the smallest cell {rate} is 0 (or so small that the ratio overflows)"
MEAN_ZERO = "every cell's {rate} is 0, so the mean is 0"
GEOMEAN_ZERO = "a cell's {rate} is 0, so the geometric mean is 0"
LOG_ZERO = "a cell's {rate} is 0, so its log10 ratio to the geometric mean is infinite"
RATIO_ZERO = "a cell's {rate} is 0 on the numerator or the reference side, so a geometric mean is 0"

#: Attribute names read as gender for the default Female/Male ratio (any case).
GENDER_ATTRIBUTES = ("gender", "sex")
#: Values read as female and as male (any case).
FEMALE = ("f", "female", "woman", "women")
MALE = ("m", "male", "man", "men")

BAD_ATTRIBUTE = "parameter attribute: expected one of {legal}, got {value!r}"
BAD_REFERENCE = "parameter reference: expected one of {legal}, got {value!r}"
NO_DEFAULT_REFERENCE = (
    "parameter reference: expected one of {legal} (the default, Female over Male, needs a "
    "gender attribute with a female and a male value, which the table does not have), got None"
)
AMBIGUOUS_REFERENCE = (
    "parameter reference: expected a value of one attribute (or the attribute named with "
    "attribute=, one of {attributes}), got {value!r}, a value of {found}"
)
BAD_NUMERATOR = (
    "parameter numerator: expected one of {legal} (the {attribute} values other than the "
    "reference {reference!r}), got {value!r}"
)


def _fill(zero_division, convention: float) -> float:
    """The value of an undefined summary: the convention, or the number given."""
    return convention if isinstance(zero_division, str) else float(zero_division)


def settle(
    value: np.ndarray,
    undefined: np.ndarray,
    *,
    summary: str,
    reason: str,
    convention: float,
    zero_division,
) -> tuple[np.ndarray, np.ndarray]:
    """Apply ``zero_division`` where ``undefined``: the convention (or the number given),
    warned, raised or only flagged."""
    fill = _fill(zero_division, convention)
    value = np.where(undefined, fill, value)
    report_undefined(
        SUMMARY_UNDEFINED.format(
            summary=summary,
            count=int(undefined.sum()),
            total=len(value),
            reason=reason,
            value=fill,
        ),
        undefined,
        zero_division,
    )
    return value, undefined


def geometric_mean(x) -> np.ndarray:
    r"""Geometric mean of each row, :math:`\exp(\frac{1}{n}\sum_i \ln x_i)`; 0 where a value is 0.

    >>> geometric_mean([[1e-5, 1e-3], [0.0, 1.0]]).round(12).tolist()
    [0.0001, 0.0]
    """
    x = np.atleast_2d(np.asarray(x, dtype="float64"))
    with np.errstate(divide="ignore"):
        return np.exp(np.log(x).mean(axis=-1))


def _ratio(high: np.ndarray, low: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``high / low`` held at 1 or above (both are rates with high >= low; the guard
    absorbs rounding), undefined where ``low`` is 0 or the ratio overflows."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = high / np.where(low == 0.0, 1.0, low)
    undefined = (low == 0.0) | ~np.isfinite(ratio)
    return np.where(undefined, np.nan, np.maximum(ratio, 1.0)), undefined


def max_minus_min(x) -> np.ndarray:
    """Largest minus smallest cell of each row (NISTIR 8429 "Max-Min", given for FNMR).

    >>> max_minus_min([[0.01, 0.03, 0.02]]).round(6)
    array([0.02])
    """
    x = np.atleast_2d(np.asarray(x, dtype="float64"))
    return x.max(axis=-1) - x.min(axis=-1)


def max_mean_ratio(x) -> tuple[np.ndarray, np.ndarray]:
    """Largest cell over the arithmetic mean of the cells, per row (NISTIR 8429 "Max/Mean").

    At least 1; at most n, the number of cells (all errors in one cell).
    Undefined (NaN, flagged) where every cell is 0.

    >>> max_mean_ratio([[1.0, 1.0, 4.0], [0.0, 0.0, 0.0]])
    (array([ 2., nan]), array([False,  True]))
    """
    x = np.atleast_2d(np.asarray(x, dtype="float64"))
    return _ratio(x.max(axis=-1), x.mean(axis=-1))


def max_geomean_ratio(x) -> tuple[np.ndarray, np.ndarray]:
    """Largest cell over the geometric mean of the cells, per row (NISTIR 8429 "Max/GeoMean").

    At least 1, unbounded.  Undefined (NaN, flagged) where a cell is 0: the
    geometric mean is then 0.

    >>> max_geomean_ratio([[1e-5, 1e-3], [0.0, 1e-3]])
    (array([10., nan]), array([False,  True]))
    """
    x = np.atleast_2d(np.asarray(x, dtype="float64"))
    return _ratio(x.max(axis=-1), geometric_mean(x))


def log10_spread(x) -> tuple[np.ndarray, np.ndarray]:
    r"""Mean absolute log10 deviation from the geometric mean, per row (NISTIR 8429 "Vary GeoMean").

    .. math:: \frac{1}{n}\sum_i \left|\log_{10}\frac{x_i}{\mathrm{geomean}(x)}\right|

    0 when the cells are equal, unbounded.  Undefined (NaN, flagged) where a
    cell is 0 (its logarithm is infinite).

    >>> log10_spread([[1e-5, 1e-3], [0.0, 1e-3]])
    (array([ 1., nan]), array([False,  True]))
    """
    x = np.atleast_2d(np.asarray(x, dtype="float64"))
    undefined = (x == 0.0).any(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log10(x)
        spread = np.abs(logs - logs.mean(axis=-1, keepdims=True)).mean(axis=-1)
    return np.where(undefined, np.nan, spread), undefined


def marginal_ratio(x, numerator, reference) -> tuple[np.ndarray, np.ndarray]:
    r"""Geometric mean of the numerator cells over that of the reference cells, per row.

    .. math:: r = \frac{\mathrm{geomean}_{g \in N}\, x_g}{\mathrm{geomean}_{g \in R}\, x_g}

    (NISTIR 8429's ratios of one demographic to a reference: Female/Male is
    the geometric mean over the cells of women over that over the cells of
    men.)  ``numerator`` and ``reference`` are boolean masks over the
    columns.  Undefined (NaN, flagged) where a side's geometric mean is 0 (a
    cell of that side is 0) or the ratio overflows.

    >>> marginal_ratio([[4e-5, 1e-5, 1e-5, 1e-5]], [True, True, False, False],
    ...                [False, False, True, True])
    (array([2.]), array([False]))
    """
    x = np.atleast_2d(np.asarray(x, dtype="float64"))
    top = geometric_mean(x[:, np.asarray(numerator, dtype=bool)])
    bottom = geometric_mean(x[:, np.asarray(reference, dtype=bool)])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = top / np.where(bottom == 0.0, 1.0, bottom)
    undefined = (top == 0.0) | (bottom == 0.0) | ~np.isfinite(ratio)
    return np.where(undefined, np.nan, ratio), undefined


def fold(ratio: np.ndarray) -> np.ndarray:
    """``max(r, 1/r)``: a ratio's distance from parity, the same either way round (NaN stays).

    >>> fold(np.array([0.5, 2.0, 1.0]))
    array([2., 2., 1.])
    """
    with np.errstate(divide="ignore"):
        return np.maximum(ratio, 1.0 / ratio)


# ------------------------------------------------------------------------ per-rate measures


def _rate(fmr, fnmr, alpha, zero_division, rate: str) -> np.ndarray:
    check_alpha(alpha)
    check_zero_division(zero_division)
    fmr, fnmr = as_rates(fmr, fnmr)
    return fmr if rate == "fmr" else fnmr


def _max_min(fmr, fnmr, alpha, zero_division, rate: str) -> MeasureResult:
    x = _rate(fmr, fnmr, alpha, zero_division, rate)
    value, undefined = max_min_ratio(x)
    value, undefined = settle(
        value,
        undefined,
        summary=f"Max/Min {rate.upper()}",
        reason=MIN_ZERO.format(rate=rate.upper()),
        convention=np.nan,
        zero_division=zero_division,
    )
    return one_rate(value, undefined, fmr=rate == "fmr")


def nist_max_min_fmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""Max/Min FMR over the cells (NISTIR 8429).

    .. math:: \max_g FMR_g / \min_g FMR_g

    At least 1 (fair), unbounded; undefined (NaN, flagged, warned) where the
    smallest FMR is 0.  The same formula as the Skewed Error Rate
    (:func:`audit.measures.bias.ser`) and the Inequity Rate's term A (Howard et
    al. eq. 4), registered under NIST's name.  ``alpha`` is checked and has no
    effect.

    >>> float(nist_max_min_fmr([[1e-5, 4e-5]], [[0.01, 0.03]]).value[0])
    4.0
    """
    return _max_min(fmr, fnmr, alpha, zero_division, "fmr")


def nist_max_min_fnmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""Max/Min FNMR over the cells (NISTIR 8429): :math:`\max_g FNMR_g / \min_g FNMR_g`.

    As :func:`nist_max_min_fmr` for FNMR (the Inequity Rate's term B, Howard et
    al. eq. 5).

    >>> float(nist_max_min_fnmr([[1e-5, 4e-5]], [[0.01, 0.03]]).value[0])
    3.0
    """
    return _max_min(fmr, fnmr, alpha, zero_division, "fnmr")


def nist_max_minus_min_fnmr(
    fmr, fnmr, *, alpha: float = 0.5, zero_division="warn"
) -> MeasureResult:
    r"""Max-Min FNMR over the cells (NISTIR 8429): :math:`\max_g FNMR_g - \min_g FNMR_g`.

    In [0, 1], 0 when fair; always defined.  It is FDR's term B (Howard et
    al. eq. 2).  NIST gives it for FNMR only (FMRs span decades, so their
    difference is the worst cell's FMR).  ``alpha`` is checked and has no
    effect.

    >>> round(float(nist_max_minus_min_fnmr([[1e-5, 4e-5]], [[0.01, 0.03]]).value[0]), 6)
    0.02
    """
    x = _rate(fmr, fnmr, alpha, zero_division, "fnmr")
    return one_rate(max_minus_min(x), np.zeros(len(x), dtype=bool), fmr=False)


def _max_mean(fmr, fnmr, alpha, zero_division, rate: str) -> MeasureResult:
    x = _rate(fmr, fnmr, alpha, zero_division, rate)
    value, undefined = max_mean_ratio(x)
    value, undefined = settle(
        value,
        undefined,
        summary=f"Max/Mean {rate.upper()}",
        reason=MEAN_ZERO.format(rate=rate.upper()),
        convention=1.0,
        zero_division=zero_division,
    )
    return one_rate(value, undefined, fmr=rate == "fmr")


def nist_max_mean_fmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""Max/Mean FMR over the cells (NISTIR 8429): :math:`\max_g FMR_g / \overline{FMR}`.

    At least 1 (fair); at most n, the number of cells (every false match in
    one cell), so no bound holds whatever the number of cells: it is declared
    unbounded, and its worst value on a table is n.  Defined when a cell is
    0.  When every cell is 0 the mean is 0: the value is then 1 (every cell
    equal), flagged, with ``zero_division`` (warn by default).  ``alpha`` is
    checked and has no effect.

    >>> float(nist_max_mean_fmr([[1e-5, 3e-5]], [[0.01, 0.03]]).value[0])
    1.5
    """
    return _max_mean(fmr, fnmr, alpha, zero_division, "fmr")


def nist_max_mean_fnmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""Max/Mean FNMR over the cells (NISTIR 8429): :math:`\max_g FNMR_g / \overline{FNMR}`.

    As :func:`nist_max_mean_fmr` for FNMR.

    >>> float(nist_max_mean_fnmr([[1e-5, 3e-5]], [[0.01, 0.03]]).value[0])
    1.5
    """
    return _max_mean(fmr, fnmr, alpha, zero_division, "fnmr")


def _max_geomean(fmr, fnmr, alpha, zero_division, rate: str) -> MeasureResult:
    x = _rate(fmr, fnmr, alpha, zero_division, rate)
    value, undefined = max_geomean_ratio(x)
    value, undefined = settle(
        value,
        undefined,
        summary=f"Max/GeoMean {rate.upper()}",
        reason=GEOMEAN_ZERO.format(rate=rate.upper()),
        convention=np.nan,
        zero_division=zero_division,
    )
    return one_rate(value, undefined, fmr=rate == "fmr")


def nist_max_geomean_fmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""Max/GeoMean FMR over the cells (NISTIR 8429).

    .. math:: \max_g FMR_g \big/ \left(\prod_g FMR_g\right)^{1/n}

    At least 1 (fair), unbounded.  Undefined (NaN, flagged, warned) where a
    cell's FMR is 0: the geometric mean is then 0 (the zero-error-adjusted
    ``nist_max_geomean_fmr_cp`` replaces such a rate by a confidence bound).
    ``alpha`` is checked and has no effect.

    >>> round(float(nist_max_geomean_fmr([[1e-5, 1e-3]], [[0.01, 0.03]]).value[0]), 9)
    10.0
    """
    return _max_geomean(fmr, fnmr, alpha, zero_division, "fmr")


def nist_max_geomean_fnmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""Max/GeoMean FNMR over the cells (NISTIR 8429).

    As :func:`nist_max_geomean_fmr` for FNMR.

    >>> round(float(nist_max_geomean_fnmr([[1e-5, 1e-3]], [[0.01, 0.04]]).value[0]), 9)
    2.0
    """
    return _max_geomean(fmr, fnmr, alpha, zero_division, "fnmr")


def _spread(fmr, fnmr, alpha, zero_division, rate: str) -> MeasureResult:
    x = _rate(fmr, fnmr, alpha, zero_division, rate)
    value, undefined = log10_spread(x)
    value, undefined = settle(
        value,
        undefined,
        summary=f"Vary GeoMean {rate.upper()}",
        reason=LOG_ZERO.format(rate=rate.upper()),
        convention=np.nan,
        zero_division=zero_division,
    )
    return one_rate(value, undefined, fmr=rate == "fmr")


def nist_log10_spread_fmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""NIST's "Vary GeoMean" of the FMRs (NISTIR 8429).

    .. math:: \frac{1}{n}\sum_g \left|\log_{10}\frac{FMR_g}{\mathrm{geomean}(FMR)}\right|

    in decades: 0 when fair, unbounded.  Undefined (NaN, flagged, warned)
    where a cell's FMR is 0.  ``alpha`` is checked and has no effect.

    >>> float(nist_log10_spread_fmr([[1e-5, 1e-3]], [[0.01, 0.03]]).value[0])
    1.0
    """
    return _spread(fmr, fnmr, alpha, zero_division, "fmr")


def nist_log10_spread_fnmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""NIST's "Vary GeoMean" of the FNMRs (NISTIR 8429); as :func:`nist_log10_spread_fmr`.

    >>> round(float(nist_log10_spread_fnmr([[1e-5, 1e-3]], [[0.01, 1.0]]).value[0]), 9)
    1.0
    """
    return _spread(fmr, fnmr, alpha, zero_division, "fnmr")


def _gini(fmr, fnmr, alpha, zero_division, rate: str) -> MeasureResult:
    x = _rate(fmr, fnmr, alpha, zero_division, rate)
    value, undefined = gini(x, zero_division=zero_division, corrected=False, _rate=rate.upper())
    return one_rate(value, undefined, fmr=rate == "fmr")


def nist_gini_fmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""NIST's "Vary Gini" of the FMRs (NISTIR 8429): the plain Gini coefficient.

    .. math:: G = \frac{\sum_i\sum_j |FMR_i - FMR_j|}{2 n^2\, \overline{FMR}}

    NISTIR 8429 describes it as the mean absolute difference between cells
    over the mean; read as the Gini coefficient it names, that is half the
    relative mean absolute difference (the double sum runs over ordered pairs
    and so counts each difference twice).  It is Howard et al.'s eq. 7
    without the factor n/(n-1) that GARBE's Gini carries
    (:func:`audit.measures.kernels.gini`, ``corrected=False``): in
    [0, 1 - 1/n], so its worst value depends on the number of cells (0.875
    for 8) and the declared bound 1 is never attained.  When every FMR is 0
    the value is 0 (all equal), flagged, warned.  ``alpha`` is checked and
    has no effect.

    >>> round(float(nist_gini_fmr([[5.0, 5.0, 10.0]], [[1, 1, 1]]).value[0]), 6)
    0.166667
    """
    return _gini(fmr, fnmr, alpha, zero_division, "fmr")


def nist_gini_fnmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""NIST's "Vary Gini" of the FNMRs (NISTIR 8429); as :func:`nist_gini_fmr`.

    >>> float(nist_gini_fnmr([[1, 1]], [[0.0, 0.5]]).value[0])
    0.5
    """
    return _gini(fmr, fnmr, alpha, zero_division, "fnmr")


# ------------------------------------------------------------ ratios to a reference demographic


def _ratio_measure(fmr, fnmr, alpha, zero_division, numerator, reference, rate: str):
    x = _rate(fmr, fnmr, alpha, zero_division, rate)
    ratio, undefined = marginal_ratio(x, numerator, reference)
    fill = _fill(zero_division, np.nan)
    value = np.where(undefined, fill, fold(ratio))
    report_undefined(
        SUMMARY_UNDEFINED.format(
            summary=f"{rate.upper()} ratio to the reference",
            count=int(undefined.sum()),
            total=len(value),
            reason=RATIO_ZERO.format(rate=rate.upper()),
            value=fill,
        ),
        undefined,
        zero_division,
    )
    ignored = np.full(len(value), np.nan)
    if rate == "fmr":
        return MeasureResult(value, ratio, ignored, undefined)
    return MeasureResult(value, ignored, ratio, undefined)


def ratio_fmr(
    fmr, fnmr, *, alpha: float = 0.5, zero_division="warn", numerator, reference
) -> MeasureResult:
    r"""FMR of one demographic relative to a reference, each side a geometric mean over its
    cells (NISTIR 8429's FMR ratios: Female/Male, E. Africa/E. Europe, 65+/20-35).

    .. math::
        r = \frac{\mathrm{geomean}_{g \in N} FMR_g}{\mathrm{geomean}_{g \in R} FMR_g},
        \quad \text{value} = \max(r, 1/r)

    ``numerator`` and ``reference`` are boolean masks over the groups; on a
    table they come from the options ``attribute``, ``numerator`` and
    ``reference`` (:func:`resolve_ratio`; by default Female over Male).  The
    FMR term is :math:`r` as NIST publishes it; the value folds it at 1, so
    that it ranks (1 is parity, either direction away from it a
    differential).  At least 1, unbounded; undefined (NaN, flagged, warned)
    where a cell of either side has FMR 0.  ``alpha`` is checked and has no
    effect.

    >>> r = ratio_fmr([[1e-5, 1e-5, 4e-5, 4e-5]], [[0.01] * 4],
    ...               numerator=[True, True, False, False], reference=[False, False, True, True])
    >>> round(float(r.fmr_term[0]), 9), round(float(r.value[0]), 9)
    (0.25, 4.0)
    """
    return _ratio_measure(fmr, fnmr, alpha, zero_division, numerator, reference, "fmr")


def ratio_fnmr(
    fmr, fnmr, *, alpha: float = 0.5, zero_division="warn", numerator, reference
) -> MeasureResult:
    r"""FNMR of one demographic relative to a reference, as :func:`ratio_fmr` for FNMR.

    >>> r = ratio_fnmr([[1e-5] * 4], [[0.02, 0.02, 0.01, 0.01]],
    ...                numerator=[True, True, False, False], reference=[False, False, True, True])
    >>> round(float(r.fnmr_term[0]), 9), round(float(r.value[0]), 9)
    (2.0, 2.0)
    """
    return _ratio_measure(fmr, fnmr, alpha, zero_division, numerator, reference, "fnmr")


def _values(groups: pd.DataFrame, attribute: str) -> list[str]:
    column = groups.index if attribute == "group" else groups[attribute]
    return [str(v) for v in dict.fromkeys(column)]


def _legal(groups: pd.DataFrame, attributes: list[str]) -> str:
    return "; ".join(f"{a}: " + ", ".join(repr(v) for v in _values(groups, a)) for a in attributes)


def _default_gender(groups: pd.DataFrame) -> tuple[str, str, str] | None:
    """(attribute, female, male) of the table's gender attribute, if it has one."""
    for attribute in groups.columns:
        if str(attribute).casefold() not in GENDER_ATTRIBUTES:
            continue
        values = _values(groups, attribute)
        female = [v for v in values if v.casefold() in FEMALE]
        male = [v for v in values if v.casefold() in MALE]
        if len(female) == 1 and len(male) == 1:
            return attribute, female[0], male[0]
    return None


def resolve_ratio(
    groups: pd.DataFrame, *, attribute=None, numerator=None, reference=None
) -> tuple[dict, str]:
    """The options of ``ratio_fmr``/``ratio_fnmr`` checked against a table's groups.

    Parameters
    ----------
    groups
        :func:`audit.tables.rates.group_table` of the table.
    attribute
        The attribute whose values ``numerator`` and ``reference`` are (e.g.
        ``"race"``), or ``"group"`` for whole group labels; by default the one
        attribute holding ``reference``.
    numerator, reference
        Values of that attribute (e.g. ``"Black"`` over ``"White"``), or group
        labels; each side is every group with that value.  ``numerator``
        defaults to the other value of a two-valued attribute.  With neither
        given: Female over Male on a table with a gender (or sex) attribute
        whose values read as female and male (``F``/``M``, ``female``/``male``).

    Returns
    -------
    (keywords, note)
        The kernel's ``numerator`` and ``reference`` masks, and ``"F/M"``-style
        text for the label.

    Raises
    ------
    ParameterError
        Naming the legal values: no default on a table without such a gender
        attribute, an unknown value, a value of several attributes, a
        numerator equal to the reference or missing where the attribute has
        more than two values.

    Examples
    --------
    >>> g = pd.DataFrame({"gender": ["F", "F", "M", "M"], "race": ["B", "W", "B", "W"]},
    ...                  index=pd.Index(["F.B", "F.W", "M.B", "M.W"], name="group"))
    >>> resolve_ratio(g)[1], resolve_ratio(g, reference="W")[1]
    ('F/M', 'B/W')
    >>> resolve_ratio(g, reference="W")[0]["numerator"].tolist()
    [True, False, True, False]
    """
    attributes = [*map(str, groups.columns), "group"]
    if attribute is not None and attribute not in attributes:
        raise ParameterError(
            BAD_ATTRIBUTE.format(legal=", ".join(repr(a) for a in attributes), value=attribute)
        )
    if reference is None and numerator is None and attribute is None:
        default = _default_gender(groups)
        if default is None:
            raise ParameterError(NO_DEFAULT_REFERENCE.format(legal=_legal(groups, attributes)))
        attribute, numerator, reference = default
    elif reference is None:
        scope = [attribute] if attribute is not None else attributes
        raise ParameterError(BAD_REFERENCE.format(legal=_legal(groups, scope), value=reference))
    if attribute is None:
        found = [a for a in attributes if str(reference) in _values(groups, a)]
        if not found:
            raise ParameterError(
                BAD_REFERENCE.format(legal=_legal(groups, attributes), value=reference)
            )
        named = [a for a in found if a != "group"]
        if len(named) > 1:
            raise ParameterError(
                AMBIGUOUS_REFERENCE.format(
                    attributes=", ".join(repr(a) for a in attributes),
                    value=reference,
                    found=" and ".join(named),
                )
            )
        attribute = found[0]
    values = _values(groups, attribute)
    if str(reference) not in values:
        raise ParameterError(
            BAD_REFERENCE.format(legal=_legal(groups, [attribute]), value=reference)
        )
    others = [v for v in values if v != str(reference)]
    if numerator is None and len(others) == 1:
        numerator = others[0]
    if numerator is None or str(numerator) not in others:
        raise ParameterError(
            BAD_NUMERATOR.format(
                legal=", ".join(repr(v) for v in others),
                attribute=attribute,
                reference=str(reference),
                value=numerator,
            )
        )
    column = groups.index if attribute == "group" else groups[attribute]
    labels = np.asarray(column.astype(str))
    keywords = {"numerator": labels == str(numerator), "reference": labels == str(reference)}
    return keywords, f"{numerator}/{reference}"
