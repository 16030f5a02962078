"""The registry of fairness measures: each measure's metadata is data.

A :class:`Measure` records what the audit needs to know about a measure
besides its function: its direction, declared bounds, ideal value, how its
FMR and FNMR terms combine under alpha, its citation and what it does when
undefined.  The built-ins are registered below; a user registers their own
with :func:`register_measure` (usable as a decorator) from any module, and the
audit treats it exactly like the built-ins::

    from audit.measures.registry import register_measure

    @register_measure(name="max_fnmr_gap", higher_is_fairer=False, bounds=(0, 1),
                      ideal=0.0, citation="my paper, eq. 1", share="linear")
    def max_fnmr_gap(fmr, fnmr, *, alpha=0.5):
        ...  # return an audit.measures.MeasureResult
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from audit.measures import kernels as measures
from audit.measures.kernels import MeasureResult
from audit.tables.rates import rate_matrices

NEEDS_SCORES = (
    "measure {name!r} needs comparison scores, not a rates table: evaluate it with "
    "audit.score_measures.evaluate_scores(scores)"
)
UNKNOWN_MEASURE = "unknown measure {name!r}; registered measures: {names}"
ALREADY_REGISTERED = "a measure named {name!r} is already registered ({citation})"
BAD_SHARE = "share must be 'linear', 'log', 'fmr', 'fnmr' or a function, got {share!r}"
BAD_MODULE = "cannot import measure module {name!r}: {reason}"
UNKNOWN_PROPERTY = "unknown property {name!r}; the properties are: {names}"
BAD_INPUTS = "inputs must be 'rates' or 'scores', got {inputs!r}"

#: The properties the test suite checks for every registered rates measure
#: (``tests/test_properties.py``): each measure declares, in
#: :attr:`Measure.properties`, whether it has each one, and a generic test
#: verifies the declaration either way.
PROPERTIES: dict[str, str] = {
    "bounded": "every value lies within the declared finite bounds; if declared "
    "False, the value grows without limit as one group's rates approach 0 "
    "(or the others' approach 0)",
    "permutation_invariant": "reordering the groups (the same way for FMR and FNMR) "
    "leaves the value unchanged",
    "scale_invariant": "multiplying every group's FMR by one positive factor, and every "
    "group's FNMR by another, leaves the value unchanged",
    "defined_at_zero": "the value is a finite number, computed without a convention, "
    "when one group's FMR or FNMR is 0 (FFMC.3)",
    "ideal_when_equal": "when all groups have the same FMR and the same FNMR the value "
    "equals the declared ideal",
}


def _linear_share(fmr_term, fnmr_term, alpha):
    """Share of ``alpha * A`` in ``alpha * A + (1 - alpha) * B``."""
    a = alpha * np.asarray(fmr_term, dtype="float64")
    b = (1.0 - alpha) * np.asarray(fnmr_term, dtype="float64")
    with np.errstate(invalid="ignore", divide="ignore"):
        return a / (a + b)


def _log_share(fmr_term, fnmr_term, alpha):
    """Share of ``alpha * log A`` in ``log(A**alpha * B**(1-alpha))`` (for products of ratios)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        a = alpha * np.log(np.asarray(fmr_term, dtype="float64"))
        b = (1.0 - alpha) * np.log(np.asarray(fnmr_term, dtype="float64"))
        return a / (a + b)


def _fmr_only_share(fmr_term, fnmr_term, alpha):
    """Measures of the FMRs alone: the FMR term is the whole measure at every alpha."""
    a = np.asarray(fmr_term, dtype="float64")
    return np.where(np.isnan(a), np.nan, 1.0)


def _fnmr_only_share(fmr_term, fnmr_term, alpha):
    """Measures of the FNMRs alone: the FMR term contributes nothing at any alpha."""
    b = np.asarray(fnmr_term, dtype="float64")
    return np.where(np.isnan(b), np.nan, 0.0)


SHARES: dict[str, Callable] = {
    "linear": _linear_share,
    "log": _log_share,
    "fmr": _fmr_only_share,
    "fnmr": _fnmr_only_share,
}


@dataclass(frozen=True)
class Measure:
    """A fairness measure and its metadata.

    Attributes
    ----------
    name
        Registry key, e.g. ``"garbe"``.
    label
        Display name, e.g. ``"GARBE"``.
    function
        ``function(fmr, fnmr, *, alpha) -> MeasureResult`` over arrays of
        shape (n_algorithms, n_groups).
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
    inputs
        ``"rates"`` for measures of per-group FMR/FNMR (the function signature
        above); ``"scores"`` for measures that need the comparison scores
        themselves (see :mod:`audit.scores`), which a rates table cannot feed.
    properties
        Which of the :data:`PROPERTIES` the measure has (``{name: bool}``);
        the property tests verify each declaration, and a rates measure must
        declare all of them.
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
    inputs: str = "rates"
    module: str = field(default="", compare=False)
    properties: Mapping[str, bool] = field(default_factory=dict, compare=False)

    def __post_init__(self):
        if not callable(self.share) and self.share not in SHARES:
            raise ValueError(BAD_SHARE.format(share=self.share))
        if self.inputs not in ("rates", "scores"):
            raise ValueError(BAD_INPUTS.format(inputs=self.inputs))
        for name in self.properties:
            if name not in PROPERTIES:
                raise ValueError(UNKNOWN_PROPERTY.format(name=name, names=list(PROPERTIES)))
        object.__setattr__(self, "properties", dict(self.properties))

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

    def __call__(self, fmr, fnmr, *, alpha: float = 0.5, **options) -> MeasureResult:
        return self.function(fmr, fnmr, alpha=alpha, **options)

    def alpha_share(self, fmr_term, fnmr_term, alpha: float) -> np.ndarray:
        """Relative contribution of the alpha-weighted FMR term to the measure."""
        rule = self.share if callable(self.share) else SHARES[self.share]
        return rule(fmr_term, fnmr_term, alpha)


_REGISTRY: dict[str, Measure] = {}


def register(measure: Measure, *, replace: bool = False) -> Measure:
    """Add a :class:`Measure` to the registry and return it."""
    if measure.name in _REGISTRY and not replace:
        raise ValueError(
            ALREADY_REGISTERED.format(name=measure.name, citation=_REGISTRY[measure.name].citation)
        )
    _REGISTRY[measure.name] = measure
    return measure


def unregister(name: str) -> Measure:
    """Remove a measure from the registry and return it (the error lists the valid names)."""
    measure = get_measure(name)
    del _REGISTRY[name]
    return measure


def register_measure(
    *,
    name: str,
    higher_is_fairer: bool,
    bounds: tuple[float | None, float | None],
    ideal: float,
    label: str | None = None,
    fmr_term: str = "FMR term",
    fnmr_term: str = "FNMR term",
    share: str | Callable = "linear",
    citation: str = "",
    undefined: str = "never undefined",
    inputs: str = "rates",
    properties: Mapping[str, bool] | None = None,
    replace: bool = False,
) -> Callable:
    """Decorator registering ``function(fmr, fnmr, *, alpha) -> MeasureResult``.

    The keywords are the :class:`Measure` fields; the function is returned
    unchanged, so it stays importable and testable under its own name.
    """

    def decorate(function: Callable) -> Callable:
        register(
            Measure(
                name=name,
                label=label or name,
                function=function,
                higher_is_fairer=higher_is_fairer,
                bounds=bounds,
                ideal=ideal,
                fmr_term=fmr_term,
                fnmr_term=fnmr_term,
                share=share,
                citation=citation,
                undefined=undefined,
                inputs=inputs,
                module=function.__module__,
                properties=properties or {},
            ),
            replace=replace,
        )
        return function

    return decorate


def get_measure(name: str) -> Measure:
    """The registered measure called ``name``; the error lists the valid names."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(UNKNOWN_MEASURE.format(name=name, names=sorted(_REGISTRY))) from None


def measure_names(*, inputs: str | None = None) -> list[str]:
    """Names of the registered measures, in registration order.

    ``inputs="rates"`` (or ``"scores"``) keeps only the measures of that kind.
    """
    return [name for name, m in _REGISTRY.items() if inputs is None or m.inputs == inputs]


def load_measure_module(dotted: str) -> list[str]:
    """Import a user module (by dotted name) that registers measures; return the new names."""
    before = set(_REGISTRY)
    try:
        importlib.import_module(dotted)
    except ImportError as error:
        raise ImportError(BAD_MODULE.format(name=dotted, reason=error)) from error
    return [name for name in _REGISTRY if name not in before]


def evaluate(
    table: pd.DataFrame, measure: str | Measure, *, alpha: float = 0.5, **options
) -> pd.DataFrame:
    """A measure on a validated rates table: one row per algorithm.

    Columns: ``value``, ``fmr_term`` (A), ``fnmr_term`` (B) and ``undefined``.
    """
    if isinstance(measure, str):
        measure = get_measure(measure)
    if measure.inputs != "rates":
        raise ValueError(NEEDS_SCORES.format(name=measure.name))
    algorithms, _, fmr, fnmr = rate_matrices(table)
    result = measure(fmr, fnmr, alpha=alpha, **options)
    return pd.DataFrame(
        {
            "value": result.value,
            "fmr_term": result.fmr_term,
            "fnmr_term": result.fnmr_term,
            "undefined": result.undefined,
        },
        index=algorithms,
    )


HOWARD = "Howard, Laird et al., ICPR 2022 FairBio workshop"

register(
    Measure(
        name="fdr",
        label="FDR",
        function=measures.fdr,
        higher_is_fairer=True,
        bounds=(0.0, 1.0),
        ideal=1.0,
        fmr_term="A: largest difference between two groups' FMR",
        fnmr_term="B: largest difference between two groups' FNMR",
        share="linear",
        citation=f"{HOWARD}, eq. 1-3 (de Freitas Pereira & Marcel 2021)",
        undefined="never undefined",
        module=measures.__name__,
        properties=dict(
            bounded=True,
            permutation_invariant=True,
            scale_invariant=False,
            defined_at_zero=True,
            ideal_when_equal=True,
        ),
    )
)
register(
    Measure(
        name="ir",
        label="IR",
        function=measures.inequity_rate,
        higher_is_fairer=False,
        bounds=(1.0, None),
        ideal=1.0,
        fmr_term="A: max group FMR / min group FMR",
        fnmr_term="B: max group FNMR / min group FNMR",
        share="log",
        citation=f"{HOWARD}, eq. 4-6 (Grother, NIST 2021)",
        undefined="undefined when the minimum group FMR or FNMR is 0: NaN, flagged, warned",
        module=measures.__name__,
        properties=dict(
            bounded=False,
            permutation_invariant=True,
            scale_invariant=True,
            defined_at_zero=False,
            ideal_when_equal=True,
        ),
    )
)
register(
    Measure(
        name="garbe",
        label="GARBE",
        function=measures.garbe,
        higher_is_fairer=False,
        bounds=(0.0, 1.0),
        ideal=0.0,
        fmr_term="A: Gini coefficient of the group FMRs (eq. 7)",
        fnmr_term="B: Gini coefficient of the group FNMRs (eq. 7)",
        share="linear",
        citation=f"{HOWARD}, eq. 7-9",
        undefined="a term is undefined when every group's rate is 0 (zero mean): set to 0, flagged, warned",
        module=measures.__name__,
        properties=dict(
            bounded=True,
            permutation_invariant=True,
            scale_invariant=True,
            defined_at_zero=True,
            ideal_when_equal=True,
        ),
    )
)
