r"""Accuracy/fairness Pareto frontiers and the down-select table (Howard et al. sec. 3.6, 4.5).

A procurement team choosing among many algorithms can discard every
algorithm that another one beats on both accuracy and fairness: what remains
is the Pareto frontier.  Howard et al. reduce the 126 algorithms of NIST FRVT
Part 3 Annex 15 to 9 this way (sec. 4.5, Fig. 4), with total FNMR as the
accuracy and GARBE as the fairness.

Definitions used here (the standard ones).  With every criterion oriented so
that lower is better, algorithm :math:`j` **dominates** :math:`i` when

.. math:: p_{j,c} \le p_{i,c}\ \forall c \quad\text{and}\quad p_{j,c} < p_{i,c}\ \text{for some } c;

:math:`i` is **(strongly) efficient** when no algorithm dominates it, and
**weakly efficient** when no algorithm is strictly better on every criterion
(:math:`p_{j,c} < p_{i,c}\ \forall c`).  Every strongly efficient point is
weakly efficient; a weakly-but-not-strongly efficient point ties a frontier
point on one criterion and is worse on another.

**Departure from the paper.**  Eq. 10 of Howard et al., as printed, calls a
pair :math:`(p_{1,n}, p_{2,n})` Pareto efficient when
:math:`p_{1,n} < p_{1,x}` *and* :math:`p_{2,n} < p_{2,x}` for every other
:math:`x`: that describes a single point strictly better than all others on
both axes at once (which exists only when there is no trade-off at all), not
a frontier; and "weakly efficient" as "one condition but not the other" would
be the best point on a single axis.  Fig. 4 plainly shows the standard
frontier (9 points), so this module implements the standard definitions
above.

**Ties and duplicates.**  Equal values are ties, not wins: an algorithm
identical to another on every criterion neither dominates nor is dominated
by it, so two duplicated points are both efficient unless a third point
dominates them.  Ties are real on Annex 15 (its FMRs are quantised, and with
equal weights intellifusion-001 and tevian-005 have the same total FNMR,
0.0058125).  Averages of quantised rates that are equal in exact arithmetic
can differ in the last floating-point bit, so :func:`frontier_frame` and
:func:`downselect` treat values within a relative ``tie_rtol`` (default
1e-9, far below the data's 4-decimal resolution) as equal;
:func:`efficient` itself compares exactly unless given ``rtol``/``atol``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from audit.analysis import accuracy as accuracies
from audit.analysis.accuracy import overall_rates
from audit.analysis.calibration import calibrated_cells
from audit.exceptions import (
    InputError,
    ParameterError,
    UnmatchedAlgorithmsWarning,
    UsageError,
    warn,
)
from audit.measures.contract import PairMeasure, RateMeasure, TableMeasure
from audit.measures.registry import Measure, evaluate, get_measure
from audit.tables.layouts import check_accuracy
from audit.tables.rates import rate_matrices
from audit.validation import (
    RATES_TABLE,
    SERIES,
    AnyOf,
    Boolean,
    Booleans,
    Integer,
    MeasureRef,
    Options,
    Real,
    optional,
    validate_params,
)

# Error messages: constants, so that tests can check them exactly.
BAD_POINTS_SHAPE = "points must have shape (..., n, k) with k >= 1 criteria, got shape {shape}"
BAD_DIRECTIONS = (
    "higher_is_better must give one direction per criterion: {k} criteria, got {directions!r}"
)
NAN_POINTS = (
    "points hold {count} NaN value(s); an undefined value cannot be ranked: drop or "
    "fill those points first"
)
TOO_MANY_PAIRS = (
    "points of shape {shape} with {k} criteria need {pairs} pairwise comparisons, above "
    "the limit of {limit}; only 1 or 2 criteria (with finite values when rtol or atol is "
    "set, and rtol < 1; got rtol={rtol!r}) take the O(n log n) frontier"
)
#: Largest number of pairwise comparisons the frontier of 3 or more criteria makes.
MAX_PAIRS = 20_000_000
UNDEFINED_FAIRNESS = (
    "{measure} (alpha={alpha}) is undefined for {count} of {total} algorithm(s): {algorithms}. "
    "An undefined value must not enter the frontier: pass undefined='exclude' (command "
    "line: --undefined exclude) to leave them out (they are then listed in the output){keep}"
)
KEEP_HINT = ", or undefined='keep' to use the measure's documented convention ({convention})"
UNDEFINED_ACCURACY = "the accuracy {name!r} is missing or NaN for algorithm(s) {algorithms}"
UNKNOWN_ACCURACY = (
    "accuracy must be 'total_fnmr', 'total_fmr' or a pandas Series of values indexed by "
    "algorithm, got {accuracy!r}"
)
ACCURACY_ALGORITHMS = (
    "the accuracy Series does not match the rates table: missing algorithm(s) {missing}, "
    "unknown algorithm(s) {extra}"
)
CALIBRATION_LEFT_OUT = (
    "{accuracy} leaves out {groups}: a calibrated cell ({rate} {values} for {share} of the "
    "algorithms), not a measurement"
)
NOT_RATES_MEASURE = (
    "measure {name!r} needs comparison scores (inputs={inputs!r}); a rates table cannot feed it"
)
NO_CANDIDATES = "no algorithm is left to compare: of the {total}, {reasons}"
#: Why an algorithm has no place on the frontier, in :data:`NO_CANDIDATES`.
NO_ACCURACY = "{count} have no accuracy {name!r}{source}"
UNDEFINED_HERE = "{count} have an undefined {measure} (excluded as undefined)"

#: Display labels of the built-in accuracy axes.
ACCURACY_LABELS = {"total_fnmr": "Total FNMR", "total_fmr": "Total FMR"}

#: Default relative tolerance under which two values count as tied (floating-point noise).
TIE_RTOL = 1e-9


@validate_params(higher_is_better=Booleans(), weak=Boolean(), rtol=Real(0), atol=Real(0))
def efficient(
    points,
    *,
    higher_is_better: Sequence[bool],
    weak: bool = False,
    rtol: float = 0.0,
    atol: float = 0.0,
) -> np.ndarray:
    r"""Mask of the Pareto-efficient points, vectorised over leading batch dimensions.

    With every criterion turned to lower-is-better, :math:`j` dominates
    :math:`i` when :math:`p_j \le p_i` on every criterion and
    :math:`p_j < p_i` on at least one.  The strongly efficient set (default)
    holds the points no other point dominates; the weakly efficient set
    (``weak=True``) holds the points no other point beats strictly on every
    criterion.  This is the standard definition, not eq. 10 of Howard et al.
    as printed (which describes a single point beating all others on both
    axes; see the module docstring).

    Duplicated points tie: neither dominates the other, so both are efficient
    unless a third point dominates them.

    Parameters
    ----------
    points
        Array of shape ``(..., n, k)``: ``n`` candidates, ``k`` criteria, and
        any leading batch dimensions (e.g. bootstrap replicates), each batch
        handled independently.  NaN is refused; ``inf`` is ordered as usual.
    higher_is_better
        One bool per criterion: True if a larger value is better (FDR as
        fairness, a true-match rate as accuracy), False if smaller is better
        (error rates, GARBE, IR).
    weak
        Return the weakly efficient set instead of the strongly efficient one.
    rtol, atol
        Two values of a criterion count as equal when
        ``|a - b| <= atol + rtol * max(|a|, |b|)`` (default: exact comparison).

    Returns
    -------
    numpy.ndarray
        Boolean mask of shape ``(..., n)``.

    Examples
    --------
    Accuracy (error, lower is better) and FDR (higher is fairer); the third
    point duplicates the first, the fourth ties the second on error but is
    less fair:

    >>> pts = [[0.01, 0.90], [0.02, 0.95], [0.01, 0.90], [0.02, 0.93], [0.03, 0.94]]
    >>> efficient(pts, higher_is_better=[False, True])
    array([ True,  True,  True, False, False])
    >>> efficient(pts, higher_is_better=[False, True], weak=True)
    array([ True,  True,  True,  True, False])

    One or two criteria take an O(n log n) sweep (sort by the first
    criterion, keep the running best of the second); three or more compare
    every pair, up to :data:`MAX_PAIRS` pairs.
    """
    p = np.asarray(points, dtype="float64")
    if p.ndim < 2 or p.shape[-1] < 1:
        raise InputError(BAD_POINTS_SHAPE.format(shape=p.shape))
    k = p.shape[-1]
    directions = np.asarray(higher_is_better)
    if directions.shape != (k,) or directions.dtype != bool:
        raise UsageError(BAD_DIRECTIONS.format(k=k, directions=higher_is_better))
    nan = np.isnan(p)
    if nan.any():
        raise InputError(NAN_POINTS.format(count=int(nan.sum())))
    rtol, atol = float(rtol), float(atol)
    p = np.where(directions, -p, p)  # now lower is better on every criterion
    if k <= 2 and rtol < 1 and not ((rtol or atol) and np.isinf(p).any()):
        return _efficient_sweep(p, weak=weak, rtol=rtol, atol=atol)
    n = p.shape[-2]
    batch = p.shape[:-2]
    pairs = int(np.prod(batch, dtype=np.int64)) * n * n
    if pairs > MAX_PAIRS:
        raise InputError(
            TOO_MANY_PAIRS.format(shape=p.shape, pairs=pairs, limit=MAX_PAIRS, k=k, rtol=rtol)
        )
    # Pairwise relations, [..., i, j] = relation of candidate j to candidate i,
    # accumulated one criterion at a time to keep memory at (..., n, n).
    at_least = np.ones((*batch, n, n), dtype=bool)  # j at least as good as i everywhere
    better_somewhere = np.zeros((*batch, n, n), dtype=bool)
    better_everywhere = np.ones((*batch, n, n), dtype=bool)
    for c in range(k):
        col = p[..., c]
        tied, better = _relations(col[..., :, None], col[..., None, :], rtol, atol)
        at_least &= better | tied
        better_somewhere |= better
        better_everywhere &= better
    if weak:
        dominated = better_everywhere
    else:
        dominated = at_least & better_somewhere
    return ~dominated.any(axis=-1)


def _relations(mine, theirs, rtol: float, atol: float) -> tuple[np.ndarray, np.ndarray]:
    """(``theirs`` tied with ``mine``, ``theirs`` strictly better): the one definition of
    a tie and a win that both frontier algorithms use, elementwise."""
    with np.errstate(invalid="ignore"):  # inf - inf when both are infinite
        tied = mine == theirs
        if rtol or atol:
            scale = np.maximum(np.abs(mine), np.abs(theirs))
            tied = tied | (np.abs(mine - theirs) <= atol + rtol * scale)
    return tied, (theirs < mine) & ~tied


def _prefix_length(ordered: np.ndarray, mine: np.ndarray, test) -> np.ndarray:
    """For each of ``mine`` (..., n), how many of the sorted values ``ordered`` (..., n)
    pass ``test(mine, value)``; the passing values are a prefix (a value that passes
    passes for every smaller value), found by a binary search per point."""
    n = ordered.shape[-1]
    lo = np.zeros(mine.shape, dtype=np.intp)
    hi = np.full(mine.shape, n, dtype=np.intp)
    while (open_ := lo < hi).any():
        mid = (lo + hi) // 2
        value = np.take_along_axis(ordered, np.minimum(mid, n - 1), axis=-1)
        ok = test(mine, value)
        lo = np.where(open_ & ok, mid + 1, lo)
        hi = np.where(open_ & ~ok, mid, hi)
    return lo


def _efficient_sweep(p: np.ndarray, *, weak: bool, rtol: float, atol: float) -> np.ndarray:
    """:func:`efficient` for 1 or 2 lower-is-better criteria in O(n log n) per batch.

    Sort by the first criterion.  The points at least as good as ``i`` on it,
    and those strictly better, are prefixes of that order (one binary search
    each); ``i`` is dominated when the best second criterion within the right
    prefix beats it (or, for a strict win on the first, ties it): a running
    minimum.  Ties and wins are :func:`_relations`'s, exactly those of the
    pairwise comparison.
    """

    def tied_or_better(mine, theirs):
        tied, better = _relations(mine, theirs, rtol, atol)
        return tied | better

    def better(mine, theirs):
        return _relations(mine, theirs, rtol, atol)[1]

    first = p[..., 0]
    order = np.argsort(first, axis=-1, kind="stable")
    ordered = np.take_along_axis(first, order, axis=-1)
    strictly = _prefix_length(ordered, first, better)  # strictly better on criterion 0
    if p.shape[-1] == 1:
        return strictly == 0
    second = np.take_along_axis(p[..., 1], order, axis=-1)
    running = np.minimum.accumulate(second, axis=-1)
    pad = np.full((*running.shape[:-1], 1), np.inf)
    best = np.concatenate([pad, running], axis=-1)  # best[m]: min over the first m points
    mine = p[..., 1]
    best_strict = np.take_along_axis(best, strictly, axis=-1)
    if weak:
        return ~((strictly > 0) & better(mine, best_strict))
    at_least = _prefix_length(ordered, first, tied_or_better)  # at least as good on 0
    best_tied = np.take_along_axis(best, at_least, axis=-1)
    dominated = ((strictly > 0) & tied_or_better(mine, best_strict)) | (
        (at_least > 0) & better(mine, best_tied)
    )
    return ~dominated


def _accuracy(
    overall: pd.DataFrame, accuracy, algorithms: pd.Index, unmatched: str
) -> tuple[pd.Series, str, str, pd.DataFrame | None]:
    """The accuracy values aligned to ``algorithms`` (NaN where an algorithm has none),
    its name, its display label and, for a Series, the join
    (:func:`audit.analysis.accuracy.join_accuracy`)."""
    if isinstance(accuracy, str) and accuracy in ACCURACY_LABELS:
        return overall[accuracy], accuracy, ACCURACY_LABELS[accuracy], None
    if isinstance(accuracy, pd.Series):
        name = str(accuracy.name) if accuracy.name is not None else "accuracy"
        join = accuracies.join_accuracy(algorithms, accuracy)
        status = join["status"].to_numpy(dtype=object)
        names = join["algorithm"].to_numpy(dtype=object)
        missing = [str(a) for a in names[status == accuracies.NOT_IN_ACCURACY]]
        extra = [str(a) for a in names[status == accuracies.NOT_IN_RATES]]
        if unmatched == "raise" and (missing or extra):
            raise InputError(ACCURACY_ALGORITHMS.format(missing=missing, extra=extra))
        said = accuracies.unjoined(
            join, name, accuracy.attrs.get("source"), table="the rates table", used="the frontier"
        )
        if unmatched == "exclude" and said is not None:
            warn(said, UnmatchedAlgorithmsWarning)
        values = pd.Series(join["accuracy"].to_numpy()[: len(algorithms)], index=algorithms)
        return values, name, str(accuracy.attrs.get("label", name)), join
    raise ParameterError(UNKNOWN_ACCURACY.format(accuracy=accuracy))


def fairness_label(spec: Measure, alpha: float, rule: str = "") -> str:
    """The fairness axis as computed: ``GARBE (alpha=0.5)``, ``GARBE (FMR term alone)`` on
    an FMR-only table (``rule`` from :func:`audit.measures.registry.evaluate`), or the
    bare label of a measure that takes no alpha.

    >>> fairness_label(get_measure("garbe"), 0.5)
    'GARBE (alpha=0.5)'
    """
    if isinstance(spec, PairMeasure):
        return spec.label
    if rule:
        return f"{spec.label} ({rule.split('-only', 1)[0]} term alone)"
    return f"{spec.label} (alpha={alpha:g})"


@validate_params(
    "alpha",
    "weights",
    "undefined",
    measure=MeasureRef(),
    accuracy=AnyOf((Options(("total_fnmr", "total_fmr")), SERIES)),
    accuracy_higher_is_better=Boolean(),
    tie_rtol=Real(0, finite=True),
    unmatched=Options(("raise", "exclude")),
    calibration=Options(("exclude", "keep")),
    table=RATES_TABLE,
)
def frontier_frame(
    table: pd.DataFrame,
    measure: str | Measure = "garbe",
    *,
    alpha: float = 0.5,
    accuracy="total_fnmr",
    weights="equal",
    undefined: str = "raise",
    accuracy_higher_is_better: bool = False,
    tie_rtol: float = TIE_RTOL,
    unmatched: str = "raise",
    calibration: str = "exclude",
) -> pd.DataFrame:
    """Every algorithm's accuracy and fairness, and whether it lies on the frontier.

    The tidy input of :func:`audit.report.plots.pareto.pareto_figure` and the basis
    of :func:`downselect`.  Fairness is any registered measure
    (:func:`audit.measures.registry.evaluate`) at the given ``alpha``, with its
    direction from the registry; accuracy is a total error rate from
    :func:`audit.analysis.accuracy.overall_rates` or a user-supplied Series.

    Parameters
    ----------
    table
        A validated rates table (:func:`audit.tables.rates.read_rates`).
    measure
        A registered measure name (``"garbe"``, ``"fdr"``, ``"ir"``, ...) or
        a :class:`~audit.measures.registry.Measure`.
    alpha
        The measure's FMR weight.
    accuracy
        ``"total_fnmr"`` (default, as in Howard et al. sec. 4.5),
        ``"total_fmr"``, or a Series indexed by algorithm (named; its name,
        or its ``attrs["label"]``, labels the axis) holding another accuracy
        criterion, e.g. one column
        of another table (:func:`audit.tables.accuracy.read_accuracy`),
        joined by algorithm name (:func:`audit.analysis.accuracy.join_accuracy`).
    weights
        Group weights of the totals, as in
        :func:`audit.analysis.accuracy.overall_rates` (default ``"equal"``).
    undefined
        What to do with algorithms whose measure is undefined (NaN, or a
        value set by the measure's zero-division convention):
        ``"raise"`` (default) raises a ``ValueError`` listing them,
        ``"exclude"`` leaves them out and lists them in
        ``attrs["excluded"]``, ``"keep"`` keeps finite convention values
        (e.g. GARBE's 0 for a rate that is 0 in every group) and still
        raises on NaN.
    accuracy_higher_is_better
        Direction of a user-supplied accuracy (error rates: False).
    tie_rtol
        Relative tolerance under which two values count as tied.
    unmatched
        With a Series accuracy, what to do with the algorithms of one table
        only: ``"raise"`` (default) refuses them, naming them;
        ``"exclude"`` leaves the rates table's algorithms without an
        accuracy (absent, or an empty cell) out of the frontier, warns
        (:class:`~audit.exceptions.UnmatchedAlgorithmsWarning`, naming
        them) and lists the whole join in ``attrs["unmatched"]``.
    calibration
        ``"exclude"`` (default): a total-rate accuracy leaves out the groups
        whose rate is a calibration (:mod:`audit.analysis.calibration`), and
        ``attrs["calibration"]`` says so; ``"keep"`` averages every group.

    Returns
    -------
    pandas.DataFrame
        Indexed by algorithm (table order, excluded ones dropped): columns
        ``accuracy``, ``fairness``, ``on_frontier`` (strongly efficient) and
        ``weakly_efficient``.  ``attrs`` holds ``measure``, ``measure_label``,
        ``higher_is_fairer``, ``alpha``, ``fairness_label`` (the measure as it
        was computed: with its alpha, on one term of a one-sided table, or
        alone for a measure without alpha), ``accuracy``, ``accuracy_label``,
        ``accuracy_higher_is_better``, ``weights`` (plain-language
        description), ``excluded`` (list), ``n_candidates``,
        ``n_frontier``, ``calibration`` (a sentence, "" when no group is
        left out) and ``unmatched`` (the rows of the join that are not
        joined, as records; empty for a total-rate accuracy).

    Examples
    --------
    >>> import pandas as pd
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({
    ...     "Algorithm": ["a", "b", "c"],
    ...     "FMR.F": [1e-4, 1e-4, 1e-4], "FMR.M": [1e-4, 1e-4, 1e-4],
    ...     "FNMR.F": [0.010, 0.030, 0.030], "FNMR.M": [0.030, 0.030, 0.050]}))
    >>> frontier_frame(t, "garbe")[["accuracy", "on_frontier"]]  # doctest: +NORMALIZE_WHITESPACE
               accuracy  on_frontier
    algorithm
    a              0.02         True
    b              0.03         True
    c              0.04        False
    """
    spec = get_measure(measure) if isinstance(measure, str) else measure
    if isinstance(spec, TableMeasure):  # with its default options (bind it for others)
        spec = spec.bind(table)
    if not isinstance(spec, (RateMeasure, PairMeasure)):
        raise UsageError(NOT_RATES_MEASURE.format(name=spec.name, inputs=spec.inputs))
    if isinstance(accuracy, str):
        check_accuracy(table, accuracy)
    calibrated, said = _calibrated(table, accuracy, calibration)
    overall = overall_rates(table, weights=weights, leave_out=calibrated)
    # Undefined values are handled below, by the `undefined` policy, not by a warning.
    values = evaluate(table, spec, alpha=alpha, zero_division="flag")
    algorithms = values.index
    acc, acc_name, acc_label, join = _accuracy(overall, accuracy, algorithms, unmatched)
    missing_acc = acc.isna().to_numpy()
    if missing_acc.any() and unmatched == "raise":
        raise InputError(
            UNDEFINED_ACCURACY.format(name=acc_name, algorithms=list(algorithms[missing_acc]))
        )
    fairness = values["value"].to_numpy(dtype="float64")
    flagged = values["undefined"].to_numpy(dtype=bool) | np.isnan(fairness)
    if undefined == "keep":
        flagged = np.isnan(fairness)
    excluded: list[str] = []
    if flagged.any():
        if undefined == "exclude":
            excluded = [str(a) for a in algorithms[flagged]]
        else:
            # 'keep' is offered only when the convention gives every flagged value a number
            keep = (
                ""
                if undefined == "keep" or np.isnan(fairness[flagged]).any()
                else KEEP_HINT.format(convention=spec.undefined)
            )
            raise InputError(
                UNDEFINED_FAIRNESS.format(
                    measure=spec.label,
                    alpha=alpha,
                    count=int(flagged.sum()),
                    total=len(flagged),
                    algorithms=[str(a) for a in algorithms[flagged]],
                    keep=keep,
                )
            )
    kept = ~flagged & ~missing_acc
    if not kept.any():  # each reason said: an accuracy table joining none was "undefined"
        why = ""
        if join is not None:  # not in the accuracy table, or there with an empty cell
            status = join["status"].to_numpy(dtype=object)
            absent = int((status == accuracies.NOT_IN_ACCURACY).sum())
            empty = int((status == accuracies.EMPTY_CELL).sum())
            source = accuracy.attrs.get("source") or "the accuracy table"
            said = [f"{absent} not in {source}" if absent else "",
                    f"{empty} with an empty cell there" if empty else ""]  # fmt: skip
            why = f" ({' and '.join(w for w in said if w)})"
        reasons = [
            NO_ACCURACY.format(count=int(missing_acc.sum()), name=acc_name, source=why)
            if missing_acc.any()
            else "",
            UNDEFINED_HERE.format(count=int((flagged & ~missing_acc).sum()), measure=spec.label)
            if (flagged & ~missing_acc).any()
            else "",
        ]
        raise InputError(
            NO_CANDIDATES.format(total=len(kept), reasons=" and ".join(r for r in reasons if r))
        )
    frame = pd.DataFrame(
        {"accuracy": acc.to_numpy(dtype="float64")[kept], "fairness": fairness[kept]},
        index=algorithms[kept],
    )
    points = frame[["accuracy", "fairness"]].to_numpy()
    directions = [accuracy_higher_is_better, spec.higher_is_fairer]
    frame["on_frontier"] = efficient(points, higher_is_better=directions, rtol=tie_rtol)
    frame["weakly_efficient"] = efficient(
        points, higher_is_better=directions, weak=True, rtol=tie_rtol
    )
    frame.attrs.update(
        {
            "measure": spec.name,
            "measure_label": spec.label,
            "higher_is_fairer": bool(spec.higher_is_fairer),
            "alpha": float(alpha),
            "fairness_label": fairness_label(spec, alpha, values.attrs.get("rule", "")),
            "accuracy": acc_name,
            "accuracy_label": acc_label,
            "accuracy_higher_is_better": bool(accuracy_higher_is_better),
            "weights": (
                overall.attrs["weights"]
                if acc_name in ACCURACY_LABELS
                else f"user-supplied accuracy {acc_name!r}; no group weights used"
            ),
            "excluded": excluded,
            "rule": values.attrs.get("rule", ""),
            "n_candidates": int(kept.sum()),
            "n_frontier": int(frame["on_frontier"].sum()),
            "calibration": said,
            "unmatched": (
                [] if join is None else join[join["status"] != accuracies.JOINED].to_dict("records")
            ),
        }
    )
    return frame


def _calibrated(table: pd.DataFrame, accuracy, calibration: str) -> tuple[dict, str]:
    """The calibrated groups a total-rate accuracy leaves out, and the sentence saying so."""
    rate = (
        {"total_fmr": "fmr", "total_fnmr": "fnmr"}.get(accuracy)
        if isinstance(accuracy, str)
        else None
    )
    if rate is None or calibration == "keep":
        return {}, ""
    cells = calibrated_cells(table)
    cells = cells[(cells["rate"] == rate) & (cells["kind"] == "group")]
    if not len(cells):
        return {}, ""
    said = CALIBRATION_LEFT_OUT.format(
        accuracy=ACCURACY_LABELS[accuracy],
        groups=", ".join(str(c) for c in cells["cell"]),
        rate=rate.upper(),
        values=", ".join(f"{v:g}" for v in cells["value"]),
        share=", ".join(
            f"{a} of {t}"
            for a, t in zip(cells["algorithms"], cells["total_algorithms"], strict=True)
        ),
    )
    return {rate: [str(c) for c in cells["cell"]]}, said


@validate_params(
    "weights",
    accuracy=Options(tuple(ACCURACY_LABELS)),
    calibration=Options(("exclude", "keep")),
)
def accuracy_weights(
    table: pd.DataFrame,
    accuracy: str = "total_fnmr",
    *,
    weights="equal",
    calibration: str = "exclude",
) -> np.ndarray:
    """The group weights of the total-rate accuracy axis ``accuracy`` (``"total_fnmr"`` or
    ``"total_fmr"``) as :func:`frontier_frame` computes it -- ``weights`` as in
    :func:`audit.analysis.accuracy.overall_rates`, a calibrated group left out unless
    ``calibration="keep"`` -- as an (algorithm x group) array:
    :func:`audit.analysis.accuracy.weighted_total` of rates of any leading shape (e.g.
    replicates) and these is the axis.

    >>> import pandas as pd
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"Algorithm": ["a"], "FMR.F": [1e-4], "FNMR.F": [0.01],
    ...                              "FMR.M": [3e-4], "FNMR.M": [0.03]}))
    >>> accuracy_weights(t, "total_fmr", weights={"F": 1, "M": 3})
    array([[1., 3.]])
    """
    check_accuracy(table, accuracy)
    rate = {"total_fmr": "fmr", "total_fnmr": "fnmr"}[accuracy]
    calibrated, _ = _calibrated(table, accuracy, calibration)
    return accuracies.total_weights(table, rate, weights=weights, leave_out=calibrated)


@validate_params(
    "alpha",
    "weights",
    "undefined",
    measure=MeasureRef(),
    accuracy=AnyOf((Options(("total_fnmr", "total_fmr")), SERIES)),
    accuracy_higher_is_better=Boolean(),
    tie_rtol=Real(0, finite=True),
    unmatched=Options(("raise", "exclude")),
    calibration=Options(("exclude", "keep")),
    max_accuracy=optional(Real(0, closed="neither")),
    table=RATES_TABLE,
)
def downselect(
    table: pd.DataFrame,
    measure: str | Measure = "garbe",
    *,
    alpha: float = 0.5,
    accuracy="total_fnmr",
    weights="equal",
    max_accuracy: float | None = None,
    undefined: str = "raise",
    accuracy_higher_is_better: bool = False,
    tie_rtol: float = TIE_RTOL,
    unmatched: str = "raise",
    calibration: str = "exclude",
) -> pd.DataFrame:
    """The down-select table: the frontier members ordered by accuracy, and the trade-offs.

    Howard et al. sec. 4.5: of the 126 Annex 15 algorithms only the 9 on the
    total-FNMR/GARBE frontier need be considered ("a savings of over 90%"),
    6 of them with total FNMR below 1%; moving from didiglobalface-001 to
    intellifusion-001 costs "0.0016 increase in total" FNMR for a GARBE 0.17
    lower.  Those numbers used mated-count weights; see
    :mod:`audit.analysis.accuracy` for why the default here is equal weights.

    Parameters
    ----------
    table, measure, alpha, accuracy, weights, undefined, accuracy_higher_is_better, tie_rtol
    unmatched, calibration
        As in :func:`frontier_frame`.
    max_accuracy
        Optional accuracy cut-off: keep only frontier members at least this
        accurate (``accuracy <= max_accuracy`` for an error rate; ``>=`` for
        a higher-is-better accuracy).  The paper's inset keeps total FNMR
        below 1% (``max_accuracy=0.01``).  Cutting the frontier is the same
        as taking the frontier of the algorithms that pass the cut.

    Returns
    -------
    pandas.DataFrame
        One row per strongly efficient algorithm (most accurate first; ties
        broken by fairness, then name), indexed by algorithm, with columns:

        ``accuracy``, ``fairness``
            The two criteria.
        ``accuracy_cost``, ``fairness_gain``
            Moving from this member to the next one: how much accuracy is
            given up and how much fairness is won, both as positive
            amounts (NaN on the last row).
        ``cost_per_gain``
            ``accuracy_cost / fairness_gain`` (NaN where the gain is 0).
        ``accuracy_cost_from_best``, ``fairness_gain_from_best``
            The same, from the most accurate member to this one (the
            paper's 0.0016 and 0.17 are of this kind).

        ``attrs`` holds everything :func:`frontier_frame` gives, plus
        ``max_accuracy``, ``n_shown`` (members after the cut-off),
        ``share_removed`` (``1 - n_frontier / n_candidates``) and
        ``share_removed_with_cutoff`` (``1 - n_shown / n_candidates``).

    Examples
    --------
    >>> import pandas as pd
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({
    ...     "Algorithm": ["a", "b", "c"],
    ...     "FMR.F": [1e-4, 1e-4, 1e-4], "FMR.M": [1e-4, 1e-4, 1e-4],
    ...     "FNMR.F": [0.010, 0.030, 0.030], "FNMR.M": [0.030, 0.030, 0.050]}))
    >>> d = downselect(t, "garbe")
    >>> d[["accuracy", "fairness", "accuracy_cost", "fairness_gain"]].round(4)  # doctest: +NORMALIZE_WHITESPACE
               accuracy  fairness  accuracy_cost  fairness_gain
    algorithm
    a              0.02      0.25           0.01           0.25
    b              0.03      0.00            NaN            NaN
    >>> d.attrs["n_candidates"], d.attrs["n_frontier"], round(d.attrs["share_removed"], 3)
    (3, 2, 0.333)
    """
    frame = frontier_frame(
        table,
        measure,
        alpha=alpha,
        accuracy=accuracy,
        weights=weights,
        undefined=undefined,
        accuracy_higher_is_better=accuracy_higher_is_better,
        tie_rtol=tie_rtol,
        unmatched=unmatched,
        calibration=calibration,
    )
    acc_sign = -1.0 if accuracy_higher_is_better else 1.0  # +1: lower accuracy value is better
    fair_sign = -1.0 if frame.attrs["higher_is_fairer"] else 1.0
    members = frame[frame["on_frontier"]]
    order = np.lexsort(
        (
            members.index.astype(str).to_numpy(),
            fair_sign * members["fairness"].to_numpy(),
            acc_sign * members["accuracy"].to_numpy(),
        )
    )
    members = members.iloc[order][["accuracy", "fairness"]].copy()
    if max_accuracy is not None:
        limit = float(max_accuracy)
        kept = (members["accuracy"] <= limit) if acc_sign > 0 else (members["accuracy"] >= limit)
        members = members[kept.to_numpy()]
    acc = members["accuracy"].to_numpy()
    fair = members["fairness"].to_numpy()
    cost = np.full(len(members), np.nan)
    gain = np.full(len(members), np.nan)
    if len(members) > 1:
        cost[:-1] = acc_sign * (acc[1:] - acc[:-1]) + 0.0
        gain[:-1] = fair_sign * (fair[:-1] - fair[1:]) + 0.0
    members["accuracy_cost"] = cost
    members["fairness_gain"] = gain
    with np.errstate(divide="ignore", invalid="ignore"):
        members["cost_per_gain"] = np.where(gain > 0, cost / np.where(gain > 0, gain, 1.0), np.nan)
    if len(members):
        # "+ 0.0" turns the -0.0 of a negated zero into 0.0
        members["accuracy_cost_from_best"] = acc_sign * (acc - acc[0]) + 0.0
        members["fairness_gain_from_best"] = fair_sign * (fair[0] - fair) + 0.0
    else:
        members["accuracy_cost_from_best"] = np.array([], dtype="float64")
        members["fairness_gain_from_best"] = np.array([], dtype="float64")
    n_candidates = frame.attrs["n_candidates"]
    members.attrs.update(frame.attrs)
    members.attrs.update(
        {
            "max_accuracy": None if max_accuracy is None else float(max_accuracy),
            "n_shown": len(members),
            "share_removed": 1.0 - frame.attrs["n_frontier"] / n_candidates,
            "share_removed_with_cutoff": 1.0 - len(members) / n_candidates,
        }
    )
    return members


@validate_params(
    "alpha",
    "seed",
    "undefined",
    measure=MeasureRef(),
    accuracy=Options(("total_fnmr", "total_fmr")),
    n_draws=Integer(1),
    concentration=Real(0, closed="neither"),
    tie_rtol=Real(0),
    table=RATES_TABLE,
)
def weight_sensitivity(
    table: pd.DataFrame,
    measure: str | Measure = "garbe",
    *,
    alpha: float = 0.5,
    accuracy: str = "total_fnmr",
    n_draws: int = 2000,
    concentration: float = 1.0,
    seed: int = 0,
    undefined: str = "raise",
    tie_rtol: float = TIE_RTOL,
) -> pd.DataFrame:
    """How often each algorithm is on the frontier when the group weights are unknown.

    When the comparison counts are not known (as for the Annex 15 CSV), the
    accuracy axis depends on weights nobody can state.  This draws
    ``n_draws`` group-weight vectors from a symmetric Dirichlet distribution
    (``concentration=1``: uniform over all weightings; smaller values favour
    weightings dominated by a few groups), computes the frontier for each at
    once (:func:`efficient` over a batch), and reports each algorithm's share
    of draws on the frontier.  A share of 1 means "on the frontier whatever
    the weights" (among those drawn); 0 means "never seen on it".  The
    fairness measure does not depend on the weights.

    Returns
    -------
    pandas.DataFrame
        Indexed by algorithm: ``fairness``, ``share_on_frontier``,
        ``min_accuracy`` and ``max_accuracy`` over the draws; sorted by share
        (descending), then name.  ``attrs`` holds the settings and
        ``frontier_sizes`` (min, median, max over the draws).

    Examples
    --------
    >>> import pandas as pd
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({
    ...     "Algorithm": ["a", "b", "c"],
    ...     "FMR.F": [1e-4, 1e-4, 1e-4], "FMR.M": [1e-4, 1e-4, 1e-4],
    ...     "FNMR.F": [0.010, 0.030, 0.030], "FNMR.M": [0.030, 0.030, 0.050]}))
    >>> weight_sensitivity(t, n_draws=200)["share_on_frontier"].to_dict()
    {'a': 1.0, 'b': 1.0, 'c': 0.0}
    """
    frame = frontier_frame(table, measure, alpha=alpha, undefined=undefined, tie_rtol=tie_rtol)
    algorithms, _, fmr, fnmr = rate_matrices(table)
    kept = algorithms.isin(frame.index)
    rates = (fnmr if accuracy == "total_fnmr" else fmr)[kept]
    rng = np.random.default_rng(seed)
    draws = rng.dirichlet(np.full(rates.shape[1], float(concentration)), size=int(n_draws))
    acc = draws @ rates.T  # (n_draws, n_algorithms)
    fairness = frame["fairness"].to_numpy()
    points = np.stack([acc, np.broadcast_to(fairness, acc.shape)], axis=-1)
    mask = efficient(
        points, higher_is_better=[False, frame.attrs["higher_is_fairer"]], rtol=tie_rtol
    )
    out = pd.DataFrame(
        {
            "fairness": fairness,
            "share_on_frontier": mask.mean(axis=0),
            "min_accuracy": acc.min(axis=0),
            "max_accuracy": acc.max(axis=0),
        },
        index=frame.index,
    )
    out = out.iloc[
        np.lexsort((out.index.astype(str).to_numpy(), -out["share_on_frontier"].to_numpy()))
    ]
    sizes = mask.sum(axis=1)
    out.attrs.update(
        {
            key: frame.attrs[key]
            for key in ("measure", "measure_label", "higher_is_fairer", "alpha", "excluded")
        }
    )
    out.attrs.update(
        {
            "accuracy": accuracy,
            "n_draws": int(n_draws),
            "concentration": float(concentration),
            "seed": seed,
            "weights": (
                f"{n_draws} random group weightings of {accuracy} (symmetric Dirichlet, "
                f"concentration {concentration:g}, seed {seed})"
            ),
            "frontier_sizes": (int(sizes.min()), float(np.median(sizes)), int(sizes.max())),
        }
    )
    return out


def summary(downselected: pd.DataFrame) -> str:
    """A plain-language paragraph on a :func:`downselect` table: what was compared, with which weights.

    Examples
    --------
    >>> import pandas as pd
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({
    ...     "Algorithm": ["a", "b", "c"],
    ...     "FMR.F": [1e-4, 1e-4, 1e-4], "FMR.M": [1e-4, 1e-4, 1e-4],
    ...     "FNMR.F": [0.010, 0.030, 0.030], "FNMR.M": [0.030, 0.030, 0.050]}))
    >>> print(summary(downselect(t, "garbe")))  # doctest: +NORMALIZE_WHITESPACE
    2 of 3 algorithms lie on the Total FNMR / GARBE (alpha=0.5) Pareto frontier: the
    frontier removes 33.3% of the candidates. Weights: total_fnmr and total_fmr: equal
    group weights (each of the 2 groups counts 1/2); not weighted by comparison counts.
    """
    a = downselected.attrs
    text = (
        f"{a['n_frontier']} of {a['n_candidates']} algorithms lie on the "
        f"{a['accuracy_label']} / {a['fairness_label']} Pareto "
        f"frontier: the frontier removes {100 * a['share_removed']:.1f}% of the candidates."
    )
    if a["max_accuracy"] is not None:
        bound = "<=" if not a["accuracy_higher_is_better"] else ">="
        text += (
            f" With {a['accuracy_label']} {bound} {a['max_accuracy']:g}, {a['n_shown']} "
            f"remain ({100 * a['share_removed_with_cutoff']:.1f}% removed)."
        )
    if a["excluded"]:
        text += f" Excluded as undefined ({len(a['excluded'])}): {', '.join(a['excluded'])}."
    if a.get("unmatched"):
        left = [r["algorithm"] for r in a["unmatched"] if r["status"] != accuracies.NOT_IN_RATES]
        if left:
            text += f" Without {a['accuracy_label']}, left out ({len(left)}): {', '.join(left)}."
    if a.get("calibration"):
        text += f" {a['calibration'][:1].upper()}{a['calibration'][1:]}."
    text += f" Weights: {a['weights']}."
    return text


__all__ = ["efficient", "frontier_frame", "downselect", "summary", "weight_sensitivity"]
