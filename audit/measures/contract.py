"""The measure contract: two kinds of measure, one call signature each, checked on every call.

A :class:`RateMeasure` is a function of per-group error rates::

    function(fmr, fnmr, *, alpha=0.5, zero_division="warn") -> MeasureResult

over arrays of shape (n_algorithms, n_groups).  ``alpha`` is a scalar or a
1-D array: with an array the result holds one row per alpha (arrays of shape
(n_alphas, n_algorithms)), so a sweep over alpha is one call.  ``zero_division``
is the policy for undefined values, as in scikit-learn: ``"warn"`` applies
the measure's documented convention and warns, ``"flag"`` applies it and
only flags it in ``MeasureResult.undefined`` (for callers that report the
mask themselves), ``"raise"`` raises, a number replaces the undefined value.

A :class:`ScoreMeasure` needs the comparison scores themselves::

    function(stats, **options) -> MeasureResult

with ``stats`` the :class:`audit.scores.ScoreStats` of a score table.

A :class:`TableMeasure` reads, beside the per-group rates, what only the
table knows: the groups' attribute values (to compare one demographic with a
reference) and/or the comparison counts ``n_mated`` and ``n_nonmated`` (to
replace a zero rate by a confidence bound)::

    function(fmr, fnmr, *, alpha=0.5, zero_division="warn", <options>, <counts>)

It is not called on bare arrays: :meth:`TableMeasure.bind` reads the table
and returns a :class:`RateMeasure` of the same name and metadata, which every
rate-measure tool (the FFMC audit, the uncertainty analysis, the frontier)
then uses as it uses any other.

A :class:`PairMeasure` reads the cross-group impostor FMRs of a cross-group
table (:mod:`audit.tables.crossgroup`)::

    function(fmr_pairs, *, zero_division="warn") -> MeasureResult

over an array of shape (n_algorithms, n_groups, n_groups), enrolment group by
probe group; it has no alpha (one error type).

The kinds share their metadata (:class:`MeasureSpec`): direction, declared
bounds, ideal, the FMR and FNMR terms, the share rule used by FFMC.1, the
citation, the undefined policy and the term of ISO/IEC 19795-10 the measure
corresponds to (:data:`ISO_TERMS`).  Every call is checked
(:func:`check_result`): a result of the wrong type or shape, a non-finite
value that is not flagged undefined, or a value outside the declared bounds
is reported with the measure's name, so a faulty user measure is caught at
the call, not deep inside a table or a plot.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields

import numpy as np
import pandas as pd

from audit.exceptions import (
    InputError,
    MeasureBoundsWarning,
    MeasureContractError,
    ParameterError,
    UsageError,
    warn,
)
from audit.measures.crossgroup import PAIRS, as_pairs
from audit.measures.kernels import (
    MeasureResult,
    UndefinedMeasureError,
    UndefinedMeasureWarning,
    as_rates,
)
from audit.tables.rates import group_matrix, group_table
from audit.validation import check, refuse

BAD_SHARE = "share must be 'linear', 'log', 'fmr', 'fnmr' or a function, got {share!r}"
UNKNOWN_PROPERTY = "unknown property {name!r}; the properties are: {names}"
NOT_A_RESULT = "measure {name!r} returned {kind}, not an audit.measures.MeasureResult"
BAD_FIELD = "measure {name!r}: {field} could not be read as {dtype} ({reason})"
BAD_RESULT_SHAPE = (
    "measure {name!r}: {field} has shape {shape}, expected {expected} "
    "(one value per algorithm{per_alpha})"
)
UNFLAGGED_NONFINITE = (
    "measure {name!r} returned {count} non-finite value(s) not flagged in 'undefined' "
    "(first: algorithm {algorithm}, value {value!r}); flag undefined values or return finite ones"
)
OUT_OF_BOUNDS = (
    "measure {name!r} returned {count} value(s) outside its declared bounds {bounds} "
    "(first: algorithm {algorithm}, value {value!r}); they are flagged undefined"
)
PAIR_SHARE = (
    "a cross-group (pairs) measure reads impostor FMRs only, so its share is 'fmr', got {share!r}"
)
ALPHA_SHAPE = "a number in [0, 1] or a 1-D array of them"
USER_UNDEFINED = "measure {name!r} is undefined for {count} of {total} algorithm(s)"
BAD_NEEDS = "needs must name the inputs a measure reads, {allowed}, got {needs!r}"
BAD_ISO_TERM = "iso_term must be one of {terms} or '' (no clear correspondence), got {term!r}"
BAD_COUNTS = "counts must name count columns among {allowed}, got {counts!r}"
MISSING_COUNTS = (
    "measure {name!r} needs the comparison counts column {column!r} (the number of {kind} "
    "comparisons of each algorithm and group), which {source} does not have: a zero {rate} "
    "is replaced by the Clopper-Pearson upper bound of 0 errors in that many comparisons"
)
NEEDS_COUNTS = (
    "needs the comparison counts column {column!r} (the {kind} comparisons of each algorithm "
    "and group), which the table does not have"
)
NO_DEFAULT = "has no default {what} on this table ({reason})"
#: :data:`NO_DEFAULT`, where the refusal says why in words (its ``unmet``).
NO_DEFAULT_BECAUSE = "has no default options on this table: {reason}"
UNKNOWN_OPTION = "parameter {option}: expected none (measure {name!r} takes {known}), got {value!r}"
BOUND_GROUPS = (
    "measure {name!r} is bound to the {n} groups of {source}; it was given rates of {got} groups"
)
NEEDS_BINDING = (
    "measure {name!r} reads the table's groups or comparison counts, not bare rate arrays: "
    "evaluate it with audit.measures.registry.evaluate(table, {name!r}) or bind it first "
    "(audit.measures.registry.get_measure({name!r}).bind(table))"
)

#: The terms of ISO/IEC 19795-10:2024 (Biometric performance testing and reporting, Part 10:
#: quantifying biometric system performance variation across demographic groups) a
#: measure may correspond to, as the standard's abstract names them.  A measure records one
#: (:attr:`MeasureSpec.iso_term`) where the correspondence is clear, and none otherwise;
#: the correspondence is ours, not a claim of conformance (the standard's formulas are
#: not public).
ISO_FALSE_POSITIVE = "false-positive differential performance"
ISO_FALSE_NEGATIVE = "false-negative differential performance"
ISO_SCORE_DIFFERENTIAL = "comparison-score differential"
ISO_AGGREGATE = "aggregate equitability measure"
ISO_TERMS = (ISO_FALSE_POSITIVE, ISO_FALSE_NEGATIVE, ISO_SCORE_DIFFERENTIAL, ISO_AGGREGATE)

#: The count columns a table measure may read, with the rate each counts and its kind.
COUNT_OF = {"n_mated": ("FNMR", "mated"), "n_nonmated": ("FMR", "non-mated")}

#: Relative tolerance for the declared bounds (rounding of a bounded formula).
BOUNDS_RTOL = 1e-9

#: The properties every registered measure, of every kind, declares in
#: :attr:`MeasureSpec.properties` (``{name: True or False}``, all five).  The
#: descriptions here say what a property is about; what it means, precisely, for
#: a measure of each kind is :data:`PROPERTY_MEANINGS`.  ``tests/test_properties.py``
#: checks every declaration either way, with one generic test per property: for a
#: property declared True, Hypothesis looks for a counterexample; for one declared
#: False, a seeded search must find one.
PROPERTIES: dict[str, str] = {
    "bounded": "every value lies within the declared finite bounds, whatever the number "
    "of groups; if declared False, the value grows without limit as some error rates "
    "approach 0, or as the number of groups grows",
    "permutation_invariant": "relabelling the groups leaves the value unchanged",
    "scale_invariant": "a change of scale that keeps every group's standing (the error "
    "rates' level, the score scale) leaves the value unchanged",
    "defined_at_zero": "the value is a finite number, computed without a convention, "
    "when one group makes no error (FFMC.3)",
    "ideal_when_equal": "when every group is alike the value equals the declared ideal",
}

#: What each property of :data:`PROPERTIES` means for a measure of each kind
#: (``PROPERTY_MEANINGS[kind][property]``, the kinds named by
#: :attr:`MeasureSpec.inputs`), stated as the transformation the generic test applies
#: and the inputs it draws, so that a declaration can be checked either way.
#:
#: ``"rates"`` (:class:`RateMeasure`): per-group FMR and FNMR in [0, 1], at any alpha
#: in [0, 1].
#:
#: ``"table"`` (:class:`TableMeasure`): as ``"rates"``, the measure bound to a table of
#: the rates' groups (women and men, races cycling) with the same comparison counts in
#: every group, so that a property holds or fails by the formula, not by unequal counts.
#:
#: ``"pairs"`` (:class:`PairMeasure`): the enrolment x probe matrix of cross-group
#: impostor FMRs, cells in [0, 1]; a transformation acts on the matrix.
#:
#: ``"scores"`` (:class:`ScoreMeasure`): per group, its mated and its within-group
#: non-mated scores (every group has both, as the score measures require); the
#: cross-group non-mated scores belong to no group.  Scale invariance is invariance
#: under a strictly increasing map of the scores, not only an affine one: a measure
#: that reads nothing but the decisions at thresholds taken among the observed
#: scores (an EER) has it, as a rate measure of the rates at those thresholds
#: would; a measure that averages thresholds in score units (SED_G's mean EER
#: threshold) or bins the scores in equal widths (DFI, CEI) does not, though it
#: follows an affine change of the units.  "No error" is a group whose scores are
#: perfectly separated, so it makes no error at its EER threshold.
PROPERTY_MEANINGS: dict[str, dict[str, str]] = {
    "rates": {
        "bounded": "every value lies within the declared finite bounds; if declared "
        "False, the value grows without limit as one group's FMR or FNMR approaches 0 "
        "(or every other group's does), or as the number of groups grows",
        "permutation_invariant": "reordering the groups (the same way for FMR and FNMR) "
        "leaves the value unchanged",
        "scale_invariant": "multiplying every group's FMR by one positive factor, and "
        "every group's FNMR by another, leaves the value unchanged",
        "defined_at_zero": "the value is a finite number, not flagged undefined and with "
        "no warning, when one group's FMR or FNMR is 0 and every other rate is positive",
        "ideal_when_equal": "when all groups have the same positive FMR and the same "
        "positive FNMR the value equals the declared ideal",
    },
    "table": {},  # as "rates", filled in below
    "pairs": {
        "bounded": "every value lies within the declared finite bounds; if declared "
        "False, the value grows without limit as some cells approach 0 (one cell, the "
        "diagonal or the cells off it)",
        "permutation_invariant": "relabelling the groups, one permutation applied to the "
        "rows (enrolment) and the columns (probe) alike, leaves the value unchanged",
        "scale_invariant": "multiplying every cell by one positive factor leaves the "
        "value unchanged",
        "defined_at_zero": "the value is a finite number, not flagged undefined and with "
        "no warning, when one cell is 0 and every other cell is positive",
        "ideal_when_equal": "when every cell holds the same positive FMR the value "
        "equals the declared ideal",
    },
    "scores": {
        "bounded": "every value lies within the declared finite bounds; if declared "
        "False, the value grows without limit as cross-group non-mated comparisons "
        "scoring below every other pile up (the pooled FMR approaches 0 while the "
        "groups' FMRs stay)",
        "permutation_invariant": "relabelling the groups (each keeps its mated and "
        "non-mated scores) leaves the value unchanged",
        "scale_invariant": "one strictly increasing map applied to every score of an "
        "algorithm (mated, non-mated and cross-group alike) leaves the value unchanged",
        "defined_at_zero": "the value is a finite number, not flagged undefined and with "
        "no warning, when one group's scores are perfectly separated (every mated score "
        "above every non-mated one of the group: no error at its EER threshold)",
        "ideal_when_equal": "when every group has the same mated and the same non-mated "
        "scores (cross-group non-mated scores none, or copies of those), and the groups "
        "make both kinds of error at their EER threshold, the value equals the declared "
        "ideal",
    },
}


PROPERTY_MEANINGS["table"] = {
    name: meaning + " (the measure bound to a table of those groups)"
    for name, meaning in PROPERTY_MEANINGS["rates"].items()
}


def _linear_share(fmr_term, fnmr_term, alpha):
    """Share of ``alpha * A`` in ``alpha * A + (1 - alpha) * B``."""
    a = np.multiply(alpha, np.asarray(fmr_term, dtype="float64"))
    b = np.multiply(1.0 - np.asarray(alpha), np.asarray(fnmr_term, dtype="float64"))
    with np.errstate(invalid="ignore", divide="ignore"):
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape:
            b += a  # a + b in place: the same values, one array fewer
            return np.divide(a, b, out=a)
        return a / (a + b)


def _log_share(fmr_term, fnmr_term, alpha):
    """Share of ``alpha * log A`` in ``log(A**alpha * B**(1-alpha))`` (for products of ratios)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        a = np.multiply(alpha, np.log(np.asarray(fmr_term, dtype="float64")))
        b = np.multiply(1.0 - np.asarray(alpha), np.log(np.asarray(fnmr_term, dtype="float64")))
        if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape:
            b += a  # a + b in place: the same values, one array fewer
            return np.divide(a, b, out=a)
        return a / (a + b)


def _constant_share(term, alpha, constant: float) -> np.ndarray:
    """``constant`` (NaN where the term is NaN) at every alpha: computed once, broadcast
    over the alphas (a read-only view)."""
    term = np.asarray(term, dtype="float64")
    share = np.where(np.isnan(term), np.nan, constant)
    return np.broadcast_to(share, np.broadcast_shapes(term.shape, np.shape(alpha)))


def _fmr_only_share(fmr_term, fnmr_term, alpha):
    """Measures of the FMRs alone: the FMR term is the whole measure at every alpha."""
    return _constant_share(fmr_term, alpha, 1.0)


def _fnmr_only_share(fmr_term, fnmr_term, alpha):
    """Measures of the FNMRs alone: the FMR term contributes nothing at any alpha."""
    return _constant_share(fnmr_term, alpha, 0.0)


SHARES: dict[str, Callable] = {
    "linear": _linear_share,
    "log": _log_share,
    "fmr": _fmr_only_share,
    "fnmr": _fnmr_only_share,
}

#: The rates a measure reads, by share rule; a share given as a function reads both.
_NEEDS = {"fmr": ("fmr",), "fnmr": ("fnmr",)}


def alphas(alpha) -> tuple[np.ndarray, bool]:
    """``alpha`` as a float64 1-D array, and whether it was given as a scalar.

    Every alpha must lie in [0, 1] (:data:`audit.validation.PARAMETERS`).

    >>> alphas(0.5)
    (array([0.5]), True)
    >>> alphas([0.0, 1.0])
    (array([0., 1.]), False)
    """
    a = np.asarray(check("alpha", alpha), dtype="float64")
    if a.ndim > 1:
        raise refuse("alpha", alpha, ALPHA_SHAPE)
    return np.atleast_1d(a), a.ndim == 0


def _kernel(function: Callable) -> Callable:
    """The function a measure runs once the contract has checked its arguments: a kernel
    of audit's own without its argument checks (:func:`audit.validation.validate_params`),
    any other function as it is."""
    if hasattr(function, "__audit_parameters__"):
        return function.__wrapped__
    return function


@dataclass(frozen=True)
class MeasureSpec:
    """What the audit needs to know about a measure besides its function.

    Attributes
    ----------
    name
        Registry key, e.g. ``"garbe"``.
    label
        Display name, e.g. ``"GARBE"``.
    function
        The kernel; its signature depends on the kind (:class:`RateMeasure`,
        :class:`ScoreMeasure`).
    higher_is_fairer
        Direction: True if a higher value means a fairer system.
    bounds
        Declared theoretical (lower, upper) bounds; ``None`` for an
        unbounded side.
    ideal
        Value for a perfectly fair system (all groups equal).
    fmr_term, fnmr_term
        What the terms A and B are, in words.
    share
        How to compute the relative contribution of the alpha (FMR) term:
        ``"linear"`` for ``alpha*A + (1-alpha)*B`` forms, ``"log"`` for
        ``A**alpha * B**(1-alpha)``, ``"fmr"`` / ``"fnmr"`` for measures of one
        error type only (share 1 / 0 at every alpha), or a function
        ``(A, B, alpha) -> share``.
    citation
        Paper and equation numbers.
    undefined
        When the measure is undefined and what the function then does.
    module
        The module that defines the function.
    properties
        Which of the :data:`PROPERTIES` the measure has (``{name: bool}``).
    needs
        The rates the measure reads: ``("fmr", "fnmr")`` by default,
        ``("fmr",)`` or ``("fnmr",)`` for measures of one error type (derived
        from ``share`` when not given).
    iso_term
        The term of ISO/IEC 19795-10 the measure corresponds to, one of
        :data:`ISO_TERMS`, or ``""`` where the correspondence is not clear.
    """

    name: str
    label: str
    function: Callable[..., MeasureResult]
    higher_is_fairer: bool
    bounds: tuple[float | None, float | None]
    ideal: float
    fmr_term: str
    fnmr_term: str
    share: str | Callable = "linear"
    citation: str = ""
    undefined: str = "never undefined"
    module: str = field(default="", compare=False)
    properties: Mapping[str, bool] = field(default_factory=dict, compare=False)
    needs: tuple[str, ...] | None = None
    iso_term: str = ""

    #: ``"rates"``, ``"scores"``, ``"pairs"`` or ``"table"``: which input the kind reads.
    inputs = ""
    #: What ``needs`` may name for this kind.
    allowed_needs = ("fmr", "fnmr")

    def __post_init__(self):
        if not callable(self.share) and self.share not in SHARES:
            raise MeasureContractError(BAD_SHARE.format(share=self.share))
        for name in self.properties:
            if name not in PROPERTIES:
                raise MeasureContractError(
                    UNKNOWN_PROPERTY.format(name=name, names=list(PROPERTIES))
                )
        object.__setattr__(self, "properties", dict(self.properties))
        needs = self.needs
        if needs is None:
            needs = (
                _NEEDS.get(self.share, self.allowed_needs)
                if isinstance(self.share, str)
                else self.allowed_needs
            )
        needs = tuple(needs)
        if (
            not needs
            or any(n not in self.allowed_needs for n in needs)
            or len(set(needs)) < len(needs)
        ):
            allowed = " and/or ".join(repr(n) for n in self.allowed_needs)
            raise MeasureContractError(BAD_NEEDS.format(allowed=allowed, needs=self.needs))
        object.__setattr__(self, "needs", needs)
        if self.iso_term and self.iso_term not in ISO_TERMS:
            raise MeasureContractError(
                BAD_ISO_TERM.format(terms=list(ISO_TERMS), term=self.iso_term)
            )
        if not self.module:
            object.__setattr__(self, "module", getattr(self.function, "__module__", "") or "")

    @property
    def worst(self) -> float:
        """Value for a maximally unfair system: the bound away from the ideal (inf if unbounded)."""
        if self.higher_is_fairer:
            return -np.inf if self.bounds[0] is None else float(self.bounds[0])
        return np.inf if self.bounds[1] is None else float(self.bounds[1])

    @property
    def bounded(self) -> bool:
        """True if both bounds are declared finite."""
        return self.bounds[0] is not None and self.bounds[1] is not None

    def alpha_share(self, fmr_term, fnmr_term, alpha) -> np.ndarray:
        """Relative contribution of the alpha-weighted FMR term to the measure."""
        rule = self.share if callable(self.share) else SHARES[self.share]
        return rule(fmr_term, fnmr_term, alpha)


def _as(name: str, field_name: str, value, dtype: str) -> np.ndarray:
    if value is None:
        raise MeasureContractError(
            BAD_FIELD.format(name=name, field=field_name, dtype=dtype, reason="it is None")
        )
    try:
        return np.asarray(value, dtype=dtype)
    except (TypeError, ValueError) as error:
        raise MeasureContractError(
            BAD_FIELD.format(name=name, field=field_name, dtype=dtype, reason=error)
        ) from None


def check_result(spec: MeasureSpec, result, n: int, n_alpha: int | None = None) -> MeasureResult:
    """``result`` checked against the contract and normalised to float64 / bool arrays.

    Shapes are ``(n,)``, or ``(n_alpha, n)`` when ``n_alpha`` is given (a
    term that does not depend on alpha may be returned as ``(n,)`` and is
    broadcast).  Non-finite values must be flagged undefined
    (:class:`MeasureContractError` otherwise); finite values outside the
    declared bounds are flagged undefined with a :class:`MeasureBoundsWarning`.
    """
    if not isinstance(result, MeasureResult):
        raise MeasureContractError(NOT_A_RESULT.format(name=spec.name, kind=type(result).__name__))
    shape = (n,) if n_alpha is None else (n_alpha, n)
    fields = {}
    for name, dtype in (
        ("value", "float64"),
        ("fmr_term", "float64"),
        ("fnmr_term", "float64"),
        ("undefined", "bool"),
    ):
        array = _as(spec.name, name, getattr(result, name), dtype)
        if array.shape != shape and not (n_alpha is not None and array.shape == (n,)):
            raise MeasureContractError(
                BAD_RESULT_SHAPE.format(
                    name=spec.name,
                    field=name,
                    shape=array.shape,
                    expected=shape,
                    per_alpha="" if n_alpha is None else ", per alpha",
                )
            )
        # a term that does not depend on alpha is broadcast (a read-only view, not a copy)
        fields[name] = array if array.shape == shape else np.broadcast_to(array, shape)
    value, undefined = fields["value"], fields["undefined"]
    finite = np.isfinite(value)
    loose = ~finite & ~undefined if not finite.all() else None
    if loose is not None and loose.any():
        first = np.argwhere(loose)[0]
        raise MeasureContractError(
            UNFLAGGED_NONFINITE.format(
                name=spec.name,
                count=int(loose.sum()),
                algorithm=int(first[-1]),
                value=float(value[tuple(first)]),
            )
        )
    low, high = spec.bounds
    flat = value.ravel()  # NaN (flagged) left out of the extremes, without a warning
    lowest, highest = (np.fmin.reduce(flat), np.fmax.reduce(flat)) if flat.size else (0.0, 0.0)
    below = low is not None and lowest < low - BOUNDS_RTOL * max(1.0, abs(low))
    above = high is not None and highest > high + BOUNDS_RTOL * max(1.0, abs(high))
    if not (below or above):  # every value within the bounds: nothing to flag
        return MeasureResult(value, fields["fmr_term"], fields["fnmr_term"], undefined)
    outside = np.zeros(shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        if low is not None:
            outside |= value < low - BOUNDS_RTOL * max(1.0, abs(low))
        if high is not None:
            outside |= value > high + BOUNDS_RTOL * max(1.0, abs(high))
    outside &= ~undefined
    if outside.any():
        first = np.argwhere(outside)[0]
        warn(
            OUT_OF_BOUNDS.format(
                name=spec.name,
                count=int(outside.sum()),
                bounds=list(spec.bounds),
                algorithm=int(first[-1]),
                value=float(value[tuple(first)]),
            ),
            MeasureBoundsWarning,
        )
        undefined = undefined | outside
    return MeasureResult(value, fields["fmr_term"], fields["fnmr_term"], undefined)


def _accepts(function: Callable, keyword: str) -> bool:
    """Whether ``function`` takes ``keyword`` (remembered per function: signatures are slow)."""
    try:
        return _accepts_cached(function, keyword)
    except TypeError:  # an unhashable callable
        return _signature_accepts(function, keyword)


@functools.lru_cache(maxsize=256)
def _accepts_cached(function: Callable, keyword: str) -> bool:
    return _signature_accepts(function, keyword)


def _signature_accepts(function: Callable, keyword: str) -> bool:
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return keyword in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )


@dataclass(frozen=True)
class RateMeasure(MeasureSpec):
    """A measure of per-group FMR and FNMR: ``measure(fmr, fnmr, *, alpha, zero_division)``.

    ``vectorised_alpha`` declares that the function itself broadcasts a
    column of alphas (shape (n_alphas, 1)) against its terms; otherwise an
    array of alphas is evaluated one alpha at a time, with the same result.
    A function without a ``zero_division`` keyword gets the policy applied to
    the ``undefined`` mask it returns.
    """

    vectorised_alpha: bool = False
    inputs = "rates"

    def __call__(self, fmr, fnmr, *, alpha=0.5, zero_division="warn") -> MeasureResult:
        grid, scalar = alphas(alpha)
        check("zero_division", zero_division)
        fmr, fnmr = as_rates(fmr, fnmr)
        n = fmr.shape[0]
        function = _kernel(self.function)
        native = _accepts(function, "zero_division")
        options = {"zero_division": zero_division} if native else {}
        if scalar:
            result = function(fmr, fnmr, alpha=float(grid[0]), **options)
            result = check_result(self, result, n)
        elif self.vectorised_alpha:
            result = function(fmr, fnmr, alpha=grid[:, None], **options)
            result = check_result(self, result, n, len(grid))
        else:
            parts = [
                check_result(self, function(fmr, fnmr, alpha=float(a), **options), n) for a in grid
            ]
            result = MeasureResult(
                *(
                    np.stack([getattr(p, f) for p in parts])
                    for f in MeasureResult.__dataclass_fields__
                )
            )
        if not native:
            result = _apply_policy(self, result, zero_division)
        return result


def _apply_policy(spec: MeasureSpec, result: MeasureResult, zero_division) -> MeasureResult:
    undefined = result.undefined
    if not undefined.any():
        return result
    message = USER_UNDEFINED.format(
        name=spec.name, count=int(undefined.any(axis=0).sum()), total=undefined.shape[-1]
    )
    if zero_division == "raise":
        raise UndefinedMeasureError(message)
    if zero_division == "warn":
        warn(message, UndefinedMeasureWarning)
    if not isinstance(zero_division, str):
        value = np.where(undefined, float(zero_division), result.value)
        return MeasureResult(value, result.fmr_term, result.fnmr_term, undefined)
    return result


def _count_rows(counts: np.ndarray, rows: int) -> np.ndarray:
    """A table's (algorithm x group) counts for rates of ``rows`` rows: as they are for
    the table's algorithms; repeated for a stack of its replicates (a multiple of them);
    the same for every row when every algorithm has the same counts; otherwise, for rows
    of no algorithm (the FFMC search's made-up cases), each group's smallest count."""
    if counts.shape[0] == rows:
        return counts
    if (counts == counts[:1]).all():
        return np.broadcast_to(counts[:1], (rows, counts.shape[1]))
    if rows % counts.shape[0] == 0:
        return np.tile(counts, (rows // counts.shape[0], 1))
    return np.broadcast_to(counts.min(axis=0), (rows, counts.shape[1]))


@dataclass(frozen=True)
class TableMeasure(MeasureSpec):
    """A rate measure that also reads its table: the groups' attributes and/or the
    comparison counts.

    ``function(fmr, fnmr, *, alpha, zero_division, **bound) -> MeasureResult``, where
    ``bound`` is what :meth:`bind` read from the table: the keywords ``resolve``
    returns (e.g. the masks of a numerator and a reference demographic) and, for each
    column of ``counts``, an (algorithm x group) array of the counts.  It is evaluated
    through :meth:`bind` (the registry's :func:`~audit.measures.registry.evaluate` binds
    it), never on bare arrays.

    Attributes beside :class:`MeasureSpec`'s: ``vectorised_alpha`` as for
    :class:`RateMeasure`; ``counts``, the count columns read (``"n_mated"``,
    ``"n_nonmated"``), a table without one being refused (:data:`MISSING_COUNTS`);
    ``resolve``, ``resolve(groups, **options) -> (keywords, note)``, which checks the
    measure's options against the table's groups (:func:`audit.tables.rates.group_table`),
    raising :class:`~audit.exceptions.ParameterError`, and gives the kernel's keywords and
    a note for the bound measure's label (e.g. ``"F/M"``); ``None`` when the measure takes
    no option.
    """

    vectorised_alpha: bool = False
    counts: tuple[str, ...] = ()
    resolve: Callable | None = field(default=None, compare=False)
    inputs = "table"

    def __post_init__(self):
        super().__post_init__()
        counts = tuple(self.counts)
        if any(c not in COUNT_OF for c in counts) or len(set(counts)) < len(counts):
            raise MeasureContractError(
                BAD_COUNTS.format(allowed=list(COUNT_OF), counts=self.counts)
            )
        object.__setattr__(self, "counts", counts)

    def __call__(self, *args, **kwargs):
        raise UsageError(NEEDS_BINDING.format(name=self.name))

    def options(self) -> tuple[str, ...]:
        """The names of the options :meth:`bind` takes."""
        if self.resolve is None:
            return ()
        parameters = list(inspect.signature(self.resolve).parameters.values())[1:]
        return tuple(p.name for p in parameters)

    def unmet(self, table: pd.DataFrame) -> str:
        """Why the measure cannot be bound to ``table`` with its default options; ``""``
        when it can."""
        for column in self.counts:
            if column not in table.columns:
                return NEEDS_COUNTS.format(column=column, kind=COUNT_OF[column][1])
        if self.resolve is not None:
            try:
                self.resolve(group_table(table))
            except ParameterError as error:
                why = getattr(error, "unmet", None)  # the refusal's reason, in words
                if why is not None:
                    return NO_DEFAULT_BECAUSE.format(reason=why)
                return NO_DEFAULT.format(what="options", reason=error)
        return ""

    def bind(self, table: pd.DataFrame, **options) -> RateMeasure:
        """This measure on ``table``: a :class:`RateMeasure` of the same name and metadata
        (its label noting the options), calling the kernel with the table's groups and
        counts.

        The bound measure takes rates of the table's groups, in its order; rows of the
        table's algorithms get their counts, and other rows as :func:`_count_rows` says.

        Raises
        ------
        InputError
            The table lacks a count column the measure reads (:data:`MISSING_COUNTS`).
        ParameterError
            An option is unknown, or refused by ``resolve`` (the message names the
            legal values).
        """
        source = table.attrs.get("source", "the table")
        for column in self.counts:
            if column not in table.columns:
                rate, kind = COUNT_OF[column]
                raise InputError(
                    MISSING_COUNTS.format(
                        name=self.name, column=column, kind=kind, rate=rate, source=source
                    )
                )
        known = self.options()
        for option, value in options.items():
            if option not in known:
                words = "the options " + ", ".join(known) if known else "no option"
                raise ParameterError(
                    UNKNOWN_OPTION.format(option=option, name=self.name, known=words, value=value)
                )
        groups = group_table(table)
        keywords, note = self.resolve(groups, **options) if self.resolve else ({}, "")
        algorithms = pd.Index(pd.unique(table["algorithm"]))
        counts = {c: group_matrix(table, c, algorithms, groups.index) for c in self.counts}
        n_groups, kernel, name = len(groups), _kernel(self.function), self.name

        def on_table(fmr, fnmr, *, alpha=0.5, zero_division="warn"):
            rows = np.atleast_2d(np.asarray(fmr)).shape[0]
            got = np.shape(fmr)[-1]
            if got != n_groups:
                raise UsageError(BOUND_GROUPS.format(name=name, n=n_groups, source=source, got=got))
            given = {c: _count_rows(m, rows) for c, m in counts.items()}
            return kernel(fmr, fnmr, alpha=alpha, zero_division=zero_division, **keywords, **given)

        spec = {f.name: getattr(self, f.name) for f in fields(MeasureSpec)}
        spec.update(function=on_table, label=f"{self.label} ({note})" if note else self.label)
        return RateMeasure(**spec, vectorised_alpha=self.vectorised_alpha)


@dataclass(frozen=True)
class PairMeasure(MeasureSpec):
    """A measure of the cross-group FMRs: ``measure(fmr_pairs, *, zero_division)``.

    ``fmr_pairs`` has shape (n_algorithms, n_groups, n_groups): ``[k, i, j]``
    is algorithm k's FMR over impostor comparisons enrolled in group i and
    probed from group j, NaN where the pair was not measured (the same pairs
    for every algorithm; :func:`audit.measures.crossgroup.as_pairs`).  It
    reads impostor FMRs only, so it takes no alpha and its share is ``"fmr"``.
    A function without a ``zero_division`` keyword gets the policy applied to
    the ``undefined`` mask it returns.
    """

    share: str | Callable = "fmr"
    inputs = "pairs"
    allowed_needs = (PAIRS,)

    def __post_init__(self):
        if self.share != "fmr":
            raise MeasureContractError(PAIR_SHARE.format(share=self.share))
        if self.needs is None:
            object.__setattr__(self, "needs", (PAIRS,))
        super().__post_init__()

    def __call__(self, fmr_pairs, *, zero_division="warn") -> MeasureResult:
        check("zero_division", zero_division)
        pairs = as_pairs(fmr_pairs)
        function = _kernel(self.function)
        native = _accepts(function, "zero_division")
        options = {"zero_division": zero_division} if native else {}
        result = check_result(self, function(pairs, **options), pairs.shape[0])
        if not native:
            result = _apply_policy(self, result, zero_division)
        return result


@dataclass(frozen=True)
class ScoreMeasure(MeasureSpec):
    """A measure that needs comparison scores: ``measure(stats, **options)``.

    ``stats`` is the :class:`audit.scores.ScoreStats` of a score table (built
    once and shared by every measure).
    """

    inputs = "scores"

    def __call__(self, stats, **options) -> MeasureResult:
        result = self.function(stats, **options)
        return check_result(self, result, len(stats.algorithms))
