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
  Male, 65+ / 20-35), each side the geometric mean over the cells it covers:
  :mod:`audit.measures.reference`.

Each summary is registered once per rate (``nist_max_min_fmr``,
``nist_max_min_fnmr``, ...): a measure of one error rate, which takes no alpha
(``alpha`` is checked and has no effect; its other term is NaN).  The best and
the worst cell are accuracy, not dispersion: they are not registered (they are
``fmr.min(axis=1)`` and ``fmr.max(axis=1)``).

Undefined cases follow :mod:`audit.measures`: a documented convention or NaN,
flagged in ``MeasureResult.undefined``, an
:class:`~audit.measures.UndefinedMeasureWarning` by default,
``zero_division="raise"`` or a number as in scikit-learn.
"""

from __future__ import annotations

import numpy as np

from audit.measures.kernels import (
    MeasureResult,
    as_rates,
    gini,
    max_min_ratio,
    one_rate,
    report_undefined,
    row_mean,
)
from audit.validation import validate_params

NISTIR_8429 = 'Grother, NISTIR 8429 "FRTE Part 8: Summarizing Demographic Differentials" (2022)'

SUMMARY_UNDEFINED = (
    "{summary} undefined for {count} of {total} algorithm(s): {reason}; the value is {value}"
)
MIN_ZERO = "the smallest cell {rate} is 0 (or so small that the ratio overflows)"
MEAN_ZERO = "every cell's {rate} is 0, so the mean is 0"
GEOMEAN_ZERO = "a cell's {rate} is 0, so the geometric mean is 0"
LOG_ZERO = "a cell's {rate} is 0, so its log10 ratio to the geometric mean is infinite"


def fill_value(zero_division, convention: float) -> float:
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
    fill = fill_value(zero_division, convention)
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
    equal = (x == x[:, :1]).all(axis=-1)
    with np.errstate(divide="ignore"):
        # a row of equal values has that value as its geometric mean, exactly
        return np.where(equal, x[:, 0], np.exp(np.log(x).mean(axis=-1)))


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
    return _ratio(x.max(axis=-1), row_mean(x))


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
        spread = np.abs(logs - row_mean(logs)[:, None]).mean(axis=-1)
    return np.where(undefined, np.nan, spread), undefined


# ------------------------------------------------------------------------ per-rate measures


def rate_of(fmr, fnmr, rate: str) -> np.ndarray:
    """The rates of one error type (``alpha`` and ``zero_division`` were checked by the
    measure's :func:`audit.validation.validate_params`)."""
    fmr, fnmr = as_rates(fmr, fnmr)
    return fmr if rate == "fmr" else fnmr


#: Each summary whose formula can be undefined: its kernel, why it is undefined, and the
#: value it then takes (NaN, or the value of equal cells).
_SUMMARIES = {
    "Max/Min": (max_min_ratio, MIN_ZERO, np.nan),
    "Max/Mean": (max_mean_ratio, MEAN_ZERO, 1.0),
    "Max/GeoMean": (max_geomean_ratio, GEOMEAN_ZERO, np.nan),
    "Vary GeoMean": (log10_spread, LOG_ZERO, np.nan),
}


def _summary(summary: str, fmr, fnmr, alpha, zero_division, rate: str) -> MeasureResult:
    """One of :data:`_SUMMARIES` of one rate, as a measure, its undefined cases settled."""
    kernel, reason, convention = _SUMMARIES[summary]
    value, undefined = kernel(rate_of(fmr, fnmr, rate))
    value, undefined = settle(
        value,
        undefined,
        summary=f"{summary} {rate.upper()}",
        reason=reason.format(rate=rate.upper()),
        convention=convention,
        zero_division=zero_division,
    )
    return one_rate(value, undefined, fmr=rate == "fmr")


@validate_params("alpha", "zero_division")
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
    return _summary("Max/Min", fmr, fnmr, alpha, zero_division, "fmr")


@validate_params("alpha", "zero_division")
def nist_max_min_fnmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""Max/Min FNMR over the cells (NISTIR 8429): :math:`\max_g FNMR_g / \min_g FNMR_g`.

    As :func:`nist_max_min_fmr` for FNMR (the Inequity Rate's term B, Howard et
    al. eq. 5).

    >>> float(nist_max_min_fnmr([[1e-5, 4e-5]], [[0.01, 0.03]]).value[0])
    3.0
    """
    return _summary("Max/Min", fmr, fnmr, alpha, zero_division, "fnmr")


@validate_params("alpha", "zero_division")
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
    x = rate_of(fmr, fnmr, "fnmr")
    return one_rate(max_minus_min(x), np.zeros(len(x), dtype=bool), fmr=False)


@validate_params("alpha", "zero_division")
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
    return _summary("Max/Mean", fmr, fnmr, alpha, zero_division, "fmr")


@validate_params("alpha", "zero_division")
def nist_max_mean_fnmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""Max/Mean FNMR over the cells (NISTIR 8429): :math:`\max_g FNMR_g / \overline{FNMR}`.

    As :func:`nist_max_mean_fmr` for FNMR.

    >>> float(nist_max_mean_fnmr([[1e-5, 3e-5]], [[0.01, 0.03]]).value[0])
    1.5
    """
    return _summary("Max/Mean", fmr, fnmr, alpha, zero_division, "fnmr")


@validate_params("alpha", "zero_division")
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
    return _summary("Max/GeoMean", fmr, fnmr, alpha, zero_division, "fmr")


@validate_params("alpha", "zero_division")
def nist_max_geomean_fnmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""Max/GeoMean FNMR over the cells (NISTIR 8429).

    As :func:`nist_max_geomean_fmr` for FNMR.

    >>> round(float(nist_max_geomean_fnmr([[1e-5, 1e-3]], [[0.01, 0.04]]).value[0]), 9)
    2.0
    """
    return _summary("Max/GeoMean", fmr, fnmr, alpha, zero_division, "fnmr")


@validate_params("alpha", "zero_division")
def nist_log10_spread_fmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""NIST's "Vary GeoMean" of the FMRs (NISTIR 8429).

    .. math:: \frac{1}{n}\sum_g \left|\log_{10}\frac{FMR_g}{\mathrm{geomean}(FMR)}\right|

    in decades: 0 when fair, unbounded.  Undefined (NaN, flagged, warned)
    where a cell's FMR is 0.  ``alpha`` is checked and has no effect.

    >>> float(nist_log10_spread_fmr([[1e-5, 1e-3]], [[0.01, 0.03]]).value[0])
    1.0
    """
    return _summary("Vary GeoMean", fmr, fnmr, alpha, zero_division, "fmr")


@validate_params("alpha", "zero_division")
def nist_log10_spread_fnmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""NIST's "Vary GeoMean" of the FNMRs (NISTIR 8429); as :func:`nist_log10_spread_fmr`.

    >>> round(float(nist_log10_spread_fnmr([[1e-5, 1e-3]], [[0.01, 1.0]]).value[0]), 9)
    1.0
    """
    return _summary("Vary GeoMean", fmr, fnmr, alpha, zero_division, "fnmr")


def _gini(fmr, fnmr, alpha, zero_division, rate: str) -> MeasureResult:
    x = rate_of(fmr, fnmr, rate)
    value, undefined = gini.__wrapped__(
        x, zero_division=zero_division, corrected=False, _rate=rate.upper()
    )
    return one_rate(value, undefined, fmr=rate == "fmr")


@validate_params("alpha", "zero_division")
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


@validate_params("alpha", "zero_division")
def nist_gini_fnmr(fmr, fnmr, *, alpha: float = 0.5, zero_division="warn") -> MeasureResult:
    r"""NIST's "Vary Gini" of the FNMRs (NISTIR 8429); as :func:`nist_gini_fmr`.

    >>> float(nist_gini_fnmr([[1, 1]], [[0.0, 0.5]]).value[0])
    0.5
    """
    return _gini(fmr, fnmr, alpha, zero_division, "fnmr")
