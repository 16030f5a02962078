"""The registry of fairness measures: every measure, built-in or the user's, by name.

The built-ins (:data:`audit.measures.builtins.BUILTINS`) are registered when
this module is imported.  A user registers their own with
:func:`register_measure` (usable as a decorator) from any module, and the
audit treats it exactly like the built-ins::

    from audit.measures.registry import register_measure

    @register_measure(name="max_fnmr_gap", higher_is_fairer=False, bounds=(0, 1),
                      ideal=0.0, citation="my paper, eq. 1", share="linear")
    def max_fnmr_gap(fmr, fnmr, *, alpha=0.5):
        ...  # return an audit.measures.MeasureResult

A rate measure is checked when it is registered (one call on a small probe
table) and on every call (:func:`audit.measures.contract.check_result`).
:func:`evaluate` computes one measure on a rates table, :func:`evaluate_many`
several at once into one tidy frame, and :func:`evaluate_scores` the score
measures on a score table.  A table measure (one that reads the groups'
attributes or the comparison counts, :class:`~audit.measures.contract.TableMeasure`)
is bound to the table first (:func:`for_table`), with its options:
``evaluate(table, "ratio_fmr", reference="White", numerator="Black")``.
:func:`measure_table` lists every measure's metadata as one frame (the
``audit measures`` listing and the reports' ``measure_registry.csv``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from audit.exceptions import (
    MeasureContractError,
    MeasureModuleError,
    ParameterError,
    UnknownNameError,
    UsageError,
)
from audit.measures import crossgroup, onesided
from audit.measures.builtins import BUILTINS
from audit.measures.contract import (
    MeasureSpec,
    PairMeasure,
    RateMeasure,
    ScoreMeasure,
    TableMeasure,
    alphas,
)
from audit.measures.kernels import MeasureResult
from audit.scores import score_stats
from audit.tables.crossgroup import cross_group
from audit.tables.layouts import RATES as RATE_COLUMNS
from audit.tables.layouts import available_rates
from audit.tables.rates import rate_matrices
from audit.validation import (
    RATES_TABLE,
    SCORES,
    AnyOf,
    Boolean,
    Bounds,
    Flags,
    Function,
    MeasureRef,
    MeasureRefs,
    Names,
    Options,
    Real,
    Text,
    optional,
    validate_params,
)

NEEDS_SCORES = (
    "measure {name!r} needs comparison scores, not a rates table: evaluate it with "
    "audit.measures.registry.evaluate_scores(scores)"
)
NEEDS_RATES = "measure {name!r} is a rate measure: evaluate it on a rates table with evaluate()"
UNKNOWN_MEASURE = "unknown measure {name!r}; registered measures: {names}"
ALREADY_REGISTERED = "a measure named {name!r} is already registered ({citation})"
BAD_MODULE = "cannot import measure module {name!r}: {reason}"
BAD_PROBE = "measure {name!r} fails on a probe table of 2 algorithms x 3 groups: {reason}"
NOT_A_MEASURE = (
    "register() takes a RateMeasure, a TableMeasure, a PairMeasure or a ScoreMeasure, got {kind}"
)
BAD_INPUTS = "inputs must be 'rates', 'table', 'scores' or 'pairs', got {inputs!r}"
NO_OPTIONS = "parameter {option}: expected none (measure {name!r} takes no option), got {value!r}"
OPTIONS_OF_OTHER = (
    "parameter {name}: expected the options of one of the measures evaluated ({names}), "
    "got {value!r}"
)

#: Backwards-compatible name of the rate kind.
Measure = RateMeasure

_KINDS = {
    "rates": RateMeasure,
    "table": TableMeasure,
    "scores": ScoreMeasure,
    "pairs": PairMeasure,
}

#: A small table every registered rate measure must accept: 2 algorithms x 3
#: groups, positive distinct rates (no measure may be undefined on it).
_PROBE_FMR = np.array([[1e-4, 2e-4, 4e-4], [1e-3, 1e-3, 3e-3]])
_PROBE_FNMR = np.array([[0.01, 0.02, 0.05], [0.03, 0.02, 0.02]])
#: The same for a cross-group (pairs) measure: 2 algorithms x 3 x 3 pairs, asymmetric.
_PROBE_PAIRS = np.array(
    [
        [[4e-4, 1e-5, 2e-5], [3e-5, 2e-4, 1e-5], [1e-5, 2e-5, 1e-4]],
        [[1e-3, 1e-4, 1e-4], [1e-4, 1e-3, 2e-4], [1e-4, 1e-4, 3e-3]],
    ]
)

#: The same for a table measure: the probe rates of 2 algorithms x 4 gender-race groups,
#: with comparison counts.
_PROBE_TABLE = pd.DataFrame(
    {
        "algorithm": np.repeat(["a", "b"], 4),
        "gender": np.tile(["F", "F", "M", "M"], 2),
        "race": np.tile(["X", "Y", "X", "Y"], 2),
        "group": np.tile(["F.X", "F.Y", "M.X", "M.Y"], 2),
        "fmr": [1e-4, 2e-4, 4e-4, 3e-4, 1e-3, 1e-3, 3e-3, 2e-3],
        "fnmr": [0.01, 0.02, 0.05, 0.04, 0.03, 0.02, 0.02, 0.01],
        "n_mated": 1000,
        "n_nonmated": 100_000,
    }
)

_REGISTRY: dict[str, MeasureSpec] = {}
#: The user modules :func:`load_measure_module` imported, in order.
_MODULES: list[str] = []


def _probe(measure: RateMeasure | PairMeasure | TableMeasure) -> None:
    """Call a new rate measure once, scalar and vector alpha (a pairs measure once; a
    table measure bound to a probe table with its default options), so a broken one
    fails now."""
    try:
        if isinstance(measure, TableMeasure):
            bound = measure.bind(_PROBE_TABLE)
            fmr, fnmr = (_PROBE_TABLE[r].to_numpy().reshape(2, 4) for r in RATE_COLUMNS)
            bound(fmr, fnmr, alpha=0.5, zero_division="flag")
            bound(fmr, fnmr, alpha=np.array([0.0, 1.0]), zero_division="flag")
            return
        if isinstance(measure, PairMeasure):
            measure(_PROBE_PAIRS, zero_division="flag")
            return
        measure(_PROBE_FMR, _PROBE_FNMR, alpha=0.5, zero_division="flag")
        measure(_PROBE_FMR, _PROBE_FNMR, alpha=np.array([0.0, 1.0]), zero_division="flag")
    except MeasureContractError:
        raise
    except Exception as error:  # a user's kernel may fail in any way: name it
        raise MeasureContractError(
            BAD_PROBE.format(name=measure.name, reason=f"{type(error).__name__}: {error}")
        ) from error


def register(measure: MeasureSpec, *, replace: bool = False, check: bool = True) -> MeasureSpec:
    """Add a :class:`RateMeasure`, :class:`TableMeasure`, :class:`PairMeasure` or
    :class:`ScoreMeasure` to the registry and return it.

    A rate, table or pairs measure is called once on a probe table first
    (``check=False`` skips that, for measures whose kernel cannot run on
    arbitrary rates, or a table measure without a default on the probe's
    gender x race groups).
    """
    if not isinstance(measure, (RateMeasure, TableMeasure, PairMeasure, ScoreMeasure)):
        raise MeasureContractError(NOT_A_MEASURE.format(kind=type(measure).__name__))
    if measure.name in _REGISTRY and not replace:
        raise UsageError(
            ALREADY_REGISTERED.format(name=measure.name, citation=_REGISTRY[measure.name].citation)
        )
    if check and isinstance(measure, (RateMeasure, TableMeasure, PairMeasure)):
        _probe(measure)
    _REGISTRY[measure.name] = measure
    return measure


def unregister(name: str) -> MeasureSpec:
    """Remove a measure from the registry and return it (the error lists the valid names)."""
    measure = get_measure(name)
    del _REGISTRY[name]
    return measure


@validate_params(
    name=Text(),
    higher_is_fairer=Boolean(),
    bounds=Bounds(),
    ideal=Real(finite=False),
    label=optional(Text()),
    fmr_term=Text(),
    fnmr_term=Text(),
    share=AnyOf((Options(("linear", "log", "fmr", "fnmr")), Function())),
    citation=Text(empty=True),
    undefined=Text(),
    inputs=Options(tuple(_KINDS)),
    properties=optional(Flags()),
    needs=optional(Names()),
    vectorised_alpha=Boolean(),
    iso_term=Text(empty=True),
    counts=Names(empty=True),
    resolve=optional(Function()),
    replace=Boolean(),
)
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
    needs: tuple[str, ...] | None = None,
    vectorised_alpha: bool = False,
    iso_term: str = "",
    counts: tuple[str, ...] = (),
    resolve: Callable | None = None,
    replace: bool = False,
) -> Callable:
    """Decorator registering a measure function; ``inputs`` chooses the kind.

    ``inputs="rates"``: ``function(fmr, fnmr, *, alpha[, zero_division]) ->
    MeasureResult``; ``inputs="table"``: the same with the keywords ``resolve``
    gives and the ``counts`` arrays (:class:`~audit.measures.contract.TableMeasure`);
    ``inputs="pairs"``: ``function(fmr_pairs[, *, zero_division]) ->
    MeasureResult`` (share ``"fmr"``); ``inputs="scores"``: ``function(stats,
    **options) -> MeasureResult``.  The other keywords are the
    :class:`~audit.measures.contract.MeasureSpec` fields; the function is
    returned unchanged, so it stays importable and testable under its own name.
    """
    if inputs not in _KINDS:
        raise ParameterError(BAD_INPUTS.format(inputs=inputs))

    def decorate(function: Callable) -> Callable:
        options = dict(
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
            module=function.__module__,
            properties=properties or {},
            needs=needs,
            iso_term=iso_term,
        )
        if inputs in ("rates", "table"):
            options["vectorised_alpha"] = vectorised_alpha
        if inputs == "table":
            options.update(counts=counts, resolve=resolve)
        if inputs == "pairs" and share == "linear":  # the default: a pairs measure has one term
            options["share"] = "fmr"
        register(_KINDS[inputs](**options), replace=replace)
        return function

    return decorate


@validate_params(name=Text())
def get_measure(name: str) -> MeasureSpec:
    """The registered measure called ``name``; the error lists the valid names."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownNameError(UNKNOWN_MEASURE.format(name=name, names=sorted(_REGISTRY))) from None


@validate_params(inputs=optional(Options(tuple(_KINDS))))
def measure_names(*, inputs: str | None = None) -> list[str]:
    """Names of the registered measures, in registration order.

    ``inputs="rates"`` (or ``"table"``, ``"scores"``, ``"pairs"``) keeps only the measures of
    that kind.
    """
    kind = _KINDS.get(inputs, MeasureSpec)
    return [name for name, m in _REGISTRY.items() if isinstance(m, kind)]


def rate_measure(measure: str | MeasureSpec) -> RateMeasure:
    """The rate measure named (or given) ``measure``; a score measure is refused."""
    spec = get_measure(measure) if isinstance(measure, str) else measure
    if not isinstance(spec, RateMeasure):
        raise UsageError(NEEDS_SCORES.format(name=spec.name))
    return spec


def table_measure(measure: str | MeasureSpec) -> RateMeasure | TableMeasure | PairMeasure:
    """The measure named (or given) ``measure`` if a rates table can feed it: a rate
    measure, a table measure, or a cross-group (pairs) measure; a score measure is
    refused."""
    spec = get_measure(measure) if isinstance(measure, str) else measure
    if not isinstance(spec, (RateMeasure, TableMeasure, PairMeasure)):
        raise UsageError(NEEDS_SCORES.format(name=spec.name))
    return spec


def table_measure_names() -> list[str]:
    """The measures a rates table can feed: the rate measures, the table measures, then
    the pairs measures."""
    return (
        measure_names(inputs="rates")
        + measure_names(inputs="table")
        + measure_names(inputs="pairs")
    )


def for_table(table: pd.DataFrame, measure: str | MeasureSpec, **options) -> MeasureSpec:
    """The measure as it runs on ``table``: a table measure bound to it with ``options``
    (:meth:`~audit.measures.contract.TableMeasure.bind`); any other measure as it is,
    refusing options (:class:`~audit.exceptions.ParameterError`).

    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"Algorithm": ["a"], "FMR.F.X": [4e-5], "FNMR.F.X": [0.01],
    ...                              "FMR.M.X": [1e-5], "FNMR.M.X": [0.02]}))
    >>> for_table(t, "ratio_fmr").label
    'FMR ratio (F/M)'
    """
    spec = get_measure(measure) if isinstance(measure, str) else measure
    if isinstance(spec, TableMeasure):
        return spec.bind(table, **options)
    for option, value in options.items():
        raise ParameterError(NO_OPTIONS.format(option=option, name=spec.name, value=value))
    return spec


def bound_measures(table: pd.DataFrame, measures: Iterable[str | MeasureSpec]) -> list[MeasureSpec]:
    """``measures`` as they run on ``table``, with their default options: each table
    measure bound to the table where it can be (:func:`for_table`), left as it is where it
    cannot (its :func:`applicability` says why); the others as they are."""
    out = []
    for measure in measures:
        spec = get_measure(measure) if isinstance(measure, str) else measure
        if isinstance(spec, TableMeasure) and not spec.unmet(table):
            spec = spec.bind(table)
        out.append(spec)
    return out


def applicability(
    table: pd.DataFrame, spec: RateMeasure | TableMeasure | PairMeasure
) -> tuple[str, str]:
    """``(status, note)`` of ``spec`` on ``table`` (see :func:`applicable_measures`)."""
    if isinstance(spec, PairMeasure):
        if cross_group(table) is None:
            return onesided.NOT_APPLICABLE, crossgroup.NEEDS_PAIRS
        return onesided.COMPUTED, ""
    if isinstance(spec, TableMeasure):
        unmet = spec.unmet(table)
        if unmet:
            return onesided.NOT_APPLICABLE, unmet
    available = available_rates(table)
    if available == RATE_COLUMNS:
        return onesided.COMPUTED, ""
    return onesided.applicability(spec, available)


def load_measure_module(dotted: str) -> list[str]:
    """Import a user module (by dotted name) that registers measures; return the new names.

    An :class:`ImportError` names the module; any other failure of the
    module's own code is left to :func:`audit.measures.modules.import_measure_modules`,
    which the command line and the notebooks use.
    """
    before = set(_REGISTRY)
    try:
        importlib.import_module(dotted)
    except ImportError as error:
        raise MeasureModuleError(BAD_MODULE.format(name=dotted, reason=error)) from error
    if dotted not in _MODULES:
        _MODULES.append(dotted)
    return [name for name in _REGISTRY if name not in before]


def measure_modules() -> list[str]:
    """The user modules of measures this process has imported
    (:func:`load_measure_module`), in order: what another process must import to know
    the same measures."""
    return list(_MODULES)


def _frame(result, algorithms: pd.Index, grid: np.ndarray, scalar: bool) -> pd.DataFrame:
    if scalar:
        return pd.DataFrame(
            {
                "value": result.value,
                "fmr_term": result.fmr_term,
                "fnmr_term": result.fnmr_term,
                "undefined": result.undefined,
            },
            index=algorithms,
        )
    index = pd.MultiIndex.from_product([grid, algorithms], names=["alpha", algorithms.name])
    return pd.DataFrame(
        {
            "value": result.value.ravel(),
            "fmr_term": result.fmr_term.ravel(),
            "fnmr_term": result.fnmr_term.ravel(),
            "undefined": result.undefined.ravel(),
        },
        index=index,
    )


def _inputs(table: pd.DataFrame, spec: RateMeasure, fmr, fnmr, grid: np.ndarray):
    """Rates and alphas for ``spec`` on ``table``, and the one-term rule ('' if none).

    Refuses a measure that is not applicable to a one-sided table
    (:mod:`audit.measures.onesided`).
    """
    available = available_rates(table)
    if available == RATE_COLUMNS:
        return fmr, fnmr, grid, ""
    status, note = onesided.applicability(spec, available)
    if status == onesided.NOT_APPLICABLE:
        raise UsageError(
            onesided.NOT_APPLICABLE_HERE.format(
                name=spec.name, source=table.attrs.get("source", "the table"), reason=note
            )
        )
    fmr, fnmr, alpha = onesided.one_term_inputs(fmr, fnmr, available)
    if status == onesided.ONE_TERM:
        grid = np.full_like(grid, alpha)
    return fmr, fnmr, grid, note


def _absent(result, table: pd.DataFrame):
    """The term of a rate the table does not have, as NaN."""
    available = available_rates(table)
    fmr_term = result.fmr_term if "fmr" in available else np.full_like(result.fmr_term, np.nan)
    fnmr_term = result.fnmr_term if "fnmr" in available else np.full_like(result.fnmr_term, np.nan)
    return type(result)(result.value, fmr_term, fnmr_term, result.undefined)


def applicable_measures(
    table: pd.DataFrame, measures: Iterable[str | MeasureSpec] | None = None
) -> pd.DataFrame:
    """Which rate and pairs measures apply to ``table``, and how: one row per measure.

    Columns ``measure``, ``label``, ``needs`` (e.g. ``"fmr, fnmr"``),
    ``status`` (``"computed"``, ``"one term"`` or ``"not applicable"``) and
    ``note`` (the one-term rule or the reason; empty when computed as
    defined).  ``measures`` defaults to every registered rate measure and
    every cross-group (pairs) measure, which applies to a table read from a
    cross-group table only.
    """
    specs = [table_measure(m) for m in (table_measure_names() if measures is None else measures)]
    rows = []
    for spec in specs:
        status, note = applicability(table, spec)
        rows.append(
            {
                "measure": spec.name,
                "label": spec.label,
                "needs": ", ".join(spec.needs),
                "status": status,
                "note": note,
            }
        )
    out = pd.DataFrame(rows, columns=["measure", "label", "needs", "status", "note"])
    return out.astype("string")


@validate_params("alpha", "zero_division", measure=MeasureRef(), table=RATES_TABLE)
def evaluate(
    table: pd.DataFrame,
    measure: str | MeasureSpec,
    *,
    alpha=0.5,
    zero_division="warn",
    **options,
) -> pd.DataFrame:
    """A rate measure on a validated rates table: one row per algorithm.

    Columns: ``value``, ``fmr_term`` (A), ``fnmr_term`` (B) and ``undefined``.
    With an array of alphas the index is (``alpha``, algorithm), one block
    per alpha, equal to the scalar call at each alpha.  On a one-sided table
    a two-term measure is computed on its available term
    (:mod:`audit.measures.onesided`), and ``attrs["rule"]`` states the rule
    (empty otherwise); a measure that does not apply is refused.  ``options``
    go to a table measure (:func:`for_table`), e.g. ``reference="White"``.

    Examples
    --------
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"Algorithm": ["a"], "FMR.F": [1e-5], "FNMR.F": [0.01],
    ...                              "FMR.M": [4e-5], "FNMR.M": [0.04]}))
    >>> evaluate(t, "ir", alpha=[0.0, 1.0])["value"].tolist()
    [4.0, 4.0]
    """
    spec = for_table(table, table_measure(measure), **options)
    grid, scalar = alphas(alpha)
    if isinstance(spec, PairMeasure):
        algorithms, result = _pairs(table, spec, grid, zero_division)
        out = _frame(result if not scalar else _first_alpha(result), algorithms, grid, scalar)
        out.attrs["rule"] = ""
        return out
    algorithms, _, fmr, fnmr = rate_matrices(table)
    fmr, fnmr, used, rule = _inputs(table, spec, fmr, fnmr, grid)
    result = spec(fmr, fnmr, alpha=used[0] if scalar else used, zero_division=zero_division)
    out = _frame(_absent(result, table), algorithms, grid, scalar)
    out.attrs["rule"] = rule
    return out


def _pairs(table: pd.DataFrame, spec: PairMeasure, grid: np.ndarray, zero_division):
    """A pairs measure on the table's pair matrices, one row per alpha of ``grid`` (the
    measure has no alpha: every row is the same); refused on a table without them."""
    cross = cross_group(table)
    if cross is None:
        raise UsageError(
            onesided.NOT_APPLICABLE_HERE.format(
                name=spec.name,
                source=table.attrs.get("source", "the table"),
                reason=crossgroup.NEEDS_PAIRS,
            )
        )
    result = spec(cross.fmr, zero_division=zero_division)
    shape = (len(grid), len(cross.algorithms))
    return cross.algorithms, MeasureResult(
        *(np.broadcast_to(getattr(result, f), shape) for f in MeasureResult.__dataclass_fields__)
    )


def _first_alpha(result: MeasureResult) -> MeasureResult:
    return MeasureResult(*(getattr(result, f)[0] for f in MeasureResult.__dataclass_fields__))


@validate_params("alpha", "zero_division", measures=MeasureRefs(), table=RATES_TABLE)
def evaluate_many(
    table: pd.DataFrame,
    measures: Iterable[str | MeasureSpec] | None = None,
    *,
    alpha=0.5,
    zero_division="warn",
    **options,
) -> pd.DataFrame:
    """Several rate measures on one rates table, as one tidy frame.

    The rate matrices are built once.  ``measures`` defaults to every
    registered rate and pairs measure that applies to the table
    (:func:`applicable_measures`; one named explicitly that does not apply
    is refused).  A pairs measure has no alpha: its value repeats at every
    alpha.  Returns one row per (measure, alpha, algorithm):
    ``measure``, ``alpha``, ``algorithm``, ``value``, ``fmr_term``,
    ``fnmr_term``, ``undefined`` and ``rule`` (on a one-sided table, the
    one-term rule a value was computed by; empty otherwise).  ``options``,
    ``{measure_name: {option: value}}``, go to the table measures
    (:func:`for_table`), e.g. ``ratio_fmr={"reference": "White"}``.

    Examples
    --------
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"Algorithm": ["a"], "FMR.F": [1e-5], "FNMR.F": [0.01],
    ...                              "FMR.M": [4e-5], "FNMR.M": [0.04]}))
    >>> evaluate_many(t, ["fdr", "ir"], alpha=[0.0, 1.0])[["measure", "alpha", "value"]]
      measure  alpha    value
    0     fdr    0.0  0.97000
    1     fdr    1.0  0.99997
    2      ir    0.0  4.00000
    3      ir    1.0  4.00000
    """
    if measures is None:
        listed = applicable_measures(table)
        measures = listed.loc[listed["status"] != onesided.NOT_APPLICABLE, "measure"].tolist()
    specs = [table_measure(m) for m in measures]
    names = [spec.name for spec in specs]
    for name, value in options.items():
        if name not in names:
            raise ParameterError(OPTIONS_OF_OTHER.format(name=name, names=names, value=value))
    specs = [for_table(table, spec, **options.get(spec.name, {})) for spec in specs]
    grid, _ = alphas(alpha)
    algorithms, _, fmr_table, fnmr_table = rate_matrices(table)
    n = len(algorithms)
    frames = []
    for spec in specs:
        if isinstance(spec, PairMeasure):
            _, result = _pairs(table, spec, grid, zero_division)
            rule = ""
        else:
            fmr, fnmr, used, rule = _inputs(table, spec, fmr_table, fnmr_table, grid)
            result = _absent(spec(fmr, fnmr, alpha=used, zero_division=zero_division), table)
        frames.append(
            pd.DataFrame(
                {
                    "measure": spec.name,
                    "alpha": np.repeat(grid, n),
                    "algorithm": np.tile(algorithms.to_numpy(dtype=object), len(grid)),
                    "value": result.value.ravel(),
                    "fmr_term": result.fmr_term.ravel(),
                    "fnmr_term": result.fnmr_term.ravel(),
                    "undefined": result.undefined.ravel(),
                    "rule": rule,
                }
            )
        )
    out = pd.concat(frames, ignore_index=True)
    for column in ("measure", "algorithm", "rule"):
        out[column] = out[column].astype("string")
    return out


#: The columns of :func:`measure_table`.
MEASURE_TABLE_COLUMNS = (
    "measure",
    "label",
    "kind",
    "needs",
    "counts",
    "options",
    "higher_is_fairer",
    "lower_bound",
    "upper_bound",
    "ideal",
    "fmr_term",
    "fnmr_term",
    "iso_term",
    "citation",
    "undefined",
)


def measure_table(measures: Iterable[str | MeasureSpec] | None = None) -> pd.DataFrame:
    """Every measure's metadata, one row each (default: every registered measure).

    Columns :data:`MEASURE_TABLE_COLUMNS`: ``kind`` is the input the measure
    reads (``rates``, ``table``, ``scores``, ``pairs``), ``needs`` the rates,
    ``counts`` the count columns and ``options`` the options of a table
    measure, the bounds NaN where unbounded, and ``iso_term`` the term of
    ISO/IEC 19795-10 it corresponds to (empty where the correspondence is not
    clear; not a claim of conformance).

    >>> measure_table(["garbe"])[["measure", "iso_term"]].to_dict("records")
    [{'measure': 'garbe', 'iso_term': 'aggregate equitability measure'}]
    """
    specs = [
        get_measure(m) if isinstance(m, str) else m
        for m in (measure_names() if measures is None else measures)
    ]
    rows = [
        {
            "measure": m.name,
            "label": m.label,
            "kind": m.inputs,
            "needs": ", ".join(m.needs),
            "counts": ", ".join(getattr(m, "counts", ())),
            "options": ", ".join(m.options()) if isinstance(m, TableMeasure) else "",
            "higher_is_fairer": m.higher_is_fairer,
            "lower_bound": np.nan if m.bounds[0] is None else float(m.bounds[0]),
            "upper_bound": np.nan if m.bounds[1] is None else float(m.bounds[1]),
            "ideal": float(m.ideal),
            "fmr_term": m.fmr_term,
            "fnmr_term": m.fnmr_term,
            "iso_term": m.iso_term,
            "citation": m.citation,
            "undefined": m.undefined,
        }
        for m in specs
    ]
    out = pd.DataFrame(rows, columns=list(MEASURE_TABLE_COLUMNS))
    strings = [c for c in MEASURE_TABLE_COLUMNS if out[c].dtype == object]
    return out.astype({c: "string" for c in strings})


@validate_params(measures=MeasureRefs(), scores=SCORES)
def evaluate_scores(scores, measures=None, **options) -> pd.DataFrame:
    """Evaluate score measures on a score table, per algorithm.

    Parameters
    ----------
    scores
        A validated score table or its :class:`~audit.scores.ScoreStats`
        (sorted once, shared by all measures).
    measures
        Names of registered score measures; default all.
    **options
        ``{measure_name: {option: value}}`` passed to that measure, e.g.
        ``cei={"percentile": 0.95}``.

    Returns
    -------
    pandas.DataFrame
        One row per (algorithm, measure): ``algorithm``, ``measure``,
        ``value``, ``fmr_term``, ``fnmr_term``, ``undefined``.
    """
    stats = score_stats(scores)
    names = list(measures) if measures is not None else measure_names(inputs="scores")
    algorithms = [str(a) for a in stats.algorithms]
    parts = {part: [] for part in ("value", "fmr_term", "fnmr_term", "undefined")}
    for name in names:
        measure = get_measure(name)
        if not isinstance(measure, ScoreMeasure):
            raise UsageError(NEEDS_RATES.format(name=measure.name))
        result = measure(stats, **options.get(name, {}))
        for part, values in parts.items():
            values.append(getattr(result, part))
    # one frame built once (the measures run once per bootstrap replicate)
    return pd.DataFrame(
        {
            "algorithm": pd.array(algorithms * len(parts["value"]), dtype="string"),
            "measure": pd.array([n for n in names for _ in algorithms], dtype="string"),
            **{part: np.concatenate(values) for part, values in parts.items()},
        }
    )


for _measure in BUILTINS:
    register(_measure)
