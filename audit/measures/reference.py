"""Ratios of one demographic to a reference, each side a geometric mean over its cells.

NISTIR 8429 (:data:`audit.measures.nist.NISTIR_8429`) reports FMR ratios of
one demographic to a reference: E. Africa / E. Europe (the geometric means over
the 10 age x sex cells of each region), Female / Male (over the 25 region x age
cells of each sex), 65+ / 20-35.  Here, on any table whose groups carry
attribute values (:func:`audit.tables.rates.group_table`):

* :func:`marginal_ratio` is the kernel, on boolean masks of the numerator and
  reference cells; :func:`fold` turns a ratio into its distance from parity;
* ``ratio_fmr`` and ``ratio_fnmr`` (:func:`ratio_fmr`, :func:`ratio_fnmr`) are
  the registered measures, table measures
  (:class:`~audit.measures.contract.TableMeasure`) whose options
  :func:`resolve_ratio` checks against the table: ``attribute``,
  ``numerator`` and ``reference`` name the two sides (a value of an attribute,
  every group with that value; or a group label), e.g.
  ``evaluate(table, "ratio_fmr", reference="White", numerator="Black")``, each
  race over a reference race marginal over the genders; by default Female over
  Male.

Their value folds the ratio at 1, ``max(r, 1/r)``, so that it ranks (1 is
parity, either direction away from it a differential); the ratio as NIST
publishes it is the measure's term.  They read one error rate: no alpha.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from audit.exceptions import ParameterError
from audit.measures.kernels import MeasureResult, report_undefined
from audit.measures.nist import SUMMARY_UNDEFINED, fill_value, geometric_mean, rate_of
from audit.validation import validate_params

RATIO_ZERO = "a cell's {rate} is 0 on the numerator or the reference side, so a geometric mean is 0"
#: Attribute names read as gender for the default Female/Male ratio (any case).
GENDER_ATTRIBUTES = ("gender", "sex")
#: Values read as female and as male (any case).
FEMALE = ("f", "female", "woman", "women")
MALE = ("m", "male", "man", "men")

BAD_ATTRIBUTE = "parameter attribute: expected one of {legal}, got {value!r}"
BAD_REFERENCE = "parameter reference: expected one of {legal}, got {value!r}"
#: Why a ratio has no default reference on a table.
_NO_GENDER = (
    "the default, Female over Male, needs a gender attribute with a female and a male "
    "value, which the table does not have"
)
NO_DEFAULT_REFERENCE = f"parameter reference: expected one of {{legal}} ({_NO_GENDER}), got None"
#: Why a ratio has no default on a table, in words: the reason the table of the measures
#: that apply gives (:meth:`audit.measures.contract.TableMeasure.unmet`).
NO_DEFAULT_WHY = f"{_NO_GENDER}; name the reference (and the numerator) among {{legal}}"
AMBIGUOUS_REFERENCE = (
    "parameter reference: expected a value of one attribute (or the attribute named with "
    "attribute=, one of {attributes}), got {value!r}, a value of {found}"
)
BAD_NUMERATOR = (
    "parameter numerator: expected one of {legal} (the {attribute} values other than the "
    "reference {reference!r}), got {value!r}"
)


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


def _ratio_measure(fmr, fnmr, alpha, zero_division, numerator, reference, rate: str):
    x = rate_of(fmr, fnmr, rate)
    ratio, undefined = marginal_ratio(x, numerator, reference)
    fill = fill_value(zero_division, np.nan)
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


@validate_params("alpha", "zero_division")
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


@validate_params("alpha", "zero_division")
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
            legal = _legal(groups, attributes)
            error = ParameterError(NO_DEFAULT_REFERENCE.format(legal=legal))
            error.unmet = NO_DEFAULT_WHY.format(legal=legal)  # in words, for the table
            raise error
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
