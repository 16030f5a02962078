"""Fairness measures that need the comparison scores themselves.

Each function takes a validated score table (:func:`audit.scores.read_scores`)
or its :class:`audit.scores.ScoreStats`, and returns an
:class:`audit.measures.MeasureResult` with one entry per algorithm, in the
order of ``ScoreStats.algorithms``.  Signature of every registered score
measure::

    function(scores, **options) -> MeasureResult

They are registered with ``inputs="scores"``: a rates table cannot feed them,
and the FFMC audit of a rates table lists them as not applicable.
:func:`evaluate_scores` evaluates them all on a score table, per algorithm.

Measures
--------
* ``std_eer`` -- standard deviation of the group EERs (Elobaid et al., eq. 19-21).
* ``sed_mean`` and ``sed_std`` -- mean and standard deviation of SED_G
  (Elobaid et al., eq. 8-11).
* ``dfi`` -- Distribution Fairness Index DFI_N (Kotwal & Marcel, as given by
  Solano et al., eq. 1-2).
* ``cei`` -- Comprehensive Equity Index (Solano et al., eq. 8 and sec. 2.3).

Every measure refuses (:data:`NO_SCORES`, a :class:`~audit.scores.ScoresError`)
a group without mated or without within-group non-mated comparisons -- for
instance a group seen only in cross-group non-mated pairs -- whose EER, rates
and histograms would be 0/0, as :func:`audit.scores.rates_at_fmr` does.

Binning (DFI, CEI): per algorithm, ``bins`` equal-width bins spanning the
smallest to the largest score of that algorithm (all groups, mated and
non-mated), shared by all groups.  No smoothing is needed or applied: every
divergence is taken against the mean of the groups' distributions, which is
positive wherever a group's distribution is, so each KL divergence is finite
and at most ``log2 K`` (K groups).  Logarithms are base 2, matching the
``K log2 K`` normalisation.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd

from audit.exceptions import InputError, ParameterError, warn
from audit.measures.kernels import MeasureResult, UndefinedMeasureWarning
from audit.scores import ScoresError, score_stats
from audit.scores.stats import SufficientStatistics

SED_UNDEFINED = (
    "SED_G undefined for {count} of {total} algorithm(s): the global {rate} at the mean "
    "EER threshold is 0, so eq. {eq} of Elobaid et al. divides by zero; the value is NaN"
)
BAD_PERCENTILE = "percentile must lie in (0, 1), got {value!r}"
BAD_WEIGHTS = (
    "w_tail and w_center must be non-negative and sum to 1, got {w_tail!r} and {w_center!r}"
)
BAD_BINS = "bins must be an integer of at least 2, got {value!r}"
TOO_FEW_GROUPS = "a distribution measure needs at least 2 groups, got {n}"
NO_SCORES = (
    "{measure}: algorithm {algorithm!r}, group {group!r} has no {kind} comparisons; the "
    "measure needs mated and within-group non-mated comparisons in every group "
    "(cross-group non-mated pairs belong to no group)"
)


def _require_comparisons(stats: SufficientStatistics, measure: str) -> None:
    """Refuse a group without mated or within-group non-mated comparisons.

    Its EER, its rates at a threshold and its histograms would be 0/0; the
    same groups are refused by :func:`audit.scores.rates_at_fmr`.
    """
    for a, algorithm in enumerate(stats.algorithms):
        for kind, counts in (
            ("mated", stats.n_mated(a)),
            ("within-group non-mated", stats.n_nonmated(a)),
        ):
            empty = np.flatnonzero(counts == 0)
            if len(empty):
                raise ScoresError(
                    NO_SCORES.format(
                        measure=measure,
                        algorithm=algorithm,
                        group=stats.groups[empty[0]],
                        kind=kind,
                    )
                )


# ------------------------------------------------------------------------------ EER


def eer_table(scores) -> pd.DataFrame:
    """Per-group equal error rate and its threshold.

    One row per (algorithm, group): ``eer``, ``threshold`` (caller's units),
    ``fmr`` and ``fnmr`` at it, ``n_mated``, ``n_nonmated`` (within-group
    non-mated pairs only, as in Elobaid et al. sec. IV-B).  A group without
    mated or within-group non-mated comparisons gets NaN (the measures refuse
    it).

    The EER of eq. 19 is the rate where FMR = FNMR.  Empirical FMR and FNMR
    are step functions that rarely meet exactly, so we take the observed
    threshold minimising ``|FMR - FNMR|`` and report the mean of the two
    there; the gap between them is at most one step (``1/n``) of the coarser
    rate.  bt4vt reports the larger of the two instead (see
    :mod:`audit.sources.voxceleb`).

    Examples
    --------
    >>> import pandas as pd
    >>> from audit.scores import read_scores
    >>> scores = read_scores(pd.DataFrame({
    ...     "algorithm": "a", "group": "F", "score": [0.9, 0.4, 0.6, 0.1],
    ...     "mated": [True, True, False, False]}))
    >>> eer_table(scores)[["group", "eer", "threshold"]]
      group  eer  threshold
    0     F  0.5        0.6
    """
    stats = score_stats(scores)
    table = _table(stats, _equal_errors(stats))
    algorithms = range(len(stats.algorithms))
    table["n_mated"] = np.concatenate([stats.n_mated(a) for a in algorithms]).astype("int64")
    table["n_nonmated"] = np.concatenate([stats.n_nonmated(a) for a in algorithms]).astype("int64")
    return table


def _equal_errors(stats: SufficientStatistics) -> dict[str, np.ndarray]:
    """``eer``, ``threshold`` (caller's units), ``fmr`` and ``fnmr`` at the equal-error
    crossing of each group (:meth:`audit.scores.ScoreStats.equal_error`): arrays
    (algorithms, groups), NaN for a group without mated or within-group non-mated
    comparisons."""
    shape = (len(stats.algorithms), len(stats.groups))
    out = {name: np.full(shape, np.nan) for name in ("eer", "threshold", "fmr", "fnmr")}
    for a in range(shape[0]):
        present = (stats.n_mated(a) > 0) & (stats.n_nonmated(a) > 0)
        for g in np.flatnonzero(present).tolist():
            for name, value in zip(out, stats.equal_error(a, g), strict=True):
                out[name][a, g] = value
    out["threshold"] = stats.to_external(out["threshold"])
    return out


def _table(stats: SufficientStatistics, columns: dict[str, np.ndarray]) -> pd.DataFrame:
    """One row per (algorithm, group), in the order of ``stats``: ``algorithm``,
    ``group``, then each array (algorithms, groups) of ``columns`` as a column."""
    n_groups = len(stats.groups)
    algorithms = [str(a) for a in stats.algorithms for _ in range(n_groups)]
    table = {
        "algorithm": pd.array(algorithms, dtype="string"),
        "group": pd.array([str(g) for g in stats.groups] * len(stats.algorithms), dtype="string"),
    }
    table |= {name: np.asarray(values, dtype="float64").ravel() for name, values in columns.items()}
    return pd.DataFrame(table)


def std_eer(scores) -> MeasureResult:
    """Standard deviation of the group EERs (Elobaid et al., eq. 19-21).

    .. math:: \\sigma_{EER_G} = \\sqrt{\\tfrac{1}{|G|}\\sum_g (EER_g - \\mu_{EER_G})^2}

    Population standard deviation (divisor ``|G|``, as eq. 21), of EERs as
    fractions (the paper's source, Sarridis et al., prints percentages).  EER
    mixes both error types, so the result has no FMR or FNMR term (NaN).

    Examples
    --------
    >>> import pandas as pd
    >>> from audit.scores import read_scores
    >>> scores = read_scores(pd.DataFrame({
    ...     "algorithm": "a", "group": ["F"] * 4 + ["M"] * 4,
    ...     "score": [0.9, 0.8, 0.3, 0.1, 0.9, 0.2, 0.5, 0.1],
    ...     "mated": [True, True, False, False] * 2}))
    >>> float(std_eer(scores).value[0])
    0.25
    """
    stats = score_stats(scores)
    _require_comparisons(stats, "std_eer")
    value = _equal_errors(stats)["eer"].std(axis=1, ddof=0)
    nan = np.full(len(value), np.nan)
    return MeasureResult(value=value, fmr_term=nan, fnmr_term=nan.copy(), undefined=np.isnan(value))


# ---------------------------------------------------------------------------- SED_G


def _mean_threshold(thresholds) -> float:
    """The mean of the groups' EER thresholds (``T_EER`` of Elobaid et al., sec. III-B),
    correctly rounded: the exact sum of the floats divided by their number, rounded once.

    A float sum depends on the order of its terms, and the mean is compared with observed
    scores, so a mean one unit in the last place off would move the scores equal to the
    true mean across the threshold: with scores in tenths, thresholds 0.1, 0.2 and 0.3
    summed in that order give 0.20000000000000004, in the reverse order
    0.19999999999999998.  Rounded once, the mean is the same whatever the order of the
    groups, and is the groups' threshold itself when they share one.  An infinite or NaN
    threshold gives the plain mean.

    >>> _mean_threshold([0.1, 0.2, 0.3]) == _mean_threshold([0.3, 0.2, 0.1]) == 0.2
    True
    >>> _mean_threshold([0.1] * 3)
    0.1
    """
    values = np.asarray(thresholds, dtype="float64")
    if not np.isfinite(values).all():
        return float(values.mean())
    return float(sum(map(Fraction, values.tolist()), Fraction(0)) / len(values))


def sed_table(scores) -> pd.DataFrame:
    """Per-group terms of SED_G (Elobaid et al., eq. 8-10).

    The threshold is the mean of the groups' EER thresholds (``T_EER``,
    sec. III-B); group rates use the group's mated and within-group non-mated
    comparisons, global rates all comparisons of the algorithm (within- and
    cross-group non-mated pairs, eq. 8-9 "using the full dataset").

    Columns: ``algorithm``, ``group``, ``threshold``, ``fmr``, ``fnmr``,
    ``global_fmr``, ``global_fnmr``, ``delta_fmr`` (eq. 8), ``delta_fnmr``
    (eq. 9), ``sed`` (eq. 10).  A zero global rate makes eq. 8 or 9 undefined:
    the affected terms are NaN (as are the rates of a group without mated or
    within-group non-mated comparisons, which the measures refuse).
    """
    stats = score_stats(scores)
    return _table(stats, _sed_terms(stats))


def _sed_terms(stats: SufficientStatistics) -> dict[str, np.ndarray]:
    """The columns of :func:`sed_table` but ``algorithm`` and ``group``, as arrays
    (algorithms, groups)."""
    thresholds = _equal_errors(stats)["threshold"]
    names = ["threshold", "fmr", "fnmr", "global_fmr", "global_fnmr"]
    names += ["delta_fmr", "delta_fnmr", "sed"]
    out = {name: np.empty(thresholds.shape) for name in names}
    for a in range(len(stats.algorithms)):
        threshold = _mean_threshold(thresholds[a])
        t = stats.to_internal([threshold])
        fm, fnm, cross = stats.counts(a, t)
        n_m, n_nm = stats.n_mated(a), stats.n_nonmated(a)
        global_fmr = (fm[:, 0].sum() + cross[0]) / stats.n_pooled_nonmated(a)
        global_fnmr = fnm[:, 0].sum() / n_m.sum()
        with np.errstate(divide="ignore", invalid="ignore"):
            fmr = fm[:, 0] / n_nm
            fnmr = fnm[:, 0] / n_m
            d_fmr = np.abs(1.0 - fmr / global_fmr) if global_fmr > 0 else np.full(len(fmr), np.nan)
            d_fnmr = (
                np.abs(1.0 - fnmr / global_fnmr) if global_fnmr > 0 else np.full(len(fnmr), np.nan)
            )
        row = [threshold, fmr, fnmr, global_fmr, global_fnmr, d_fmr, d_fnmr, d_fmr + d_fnmr]
        for name, value in zip(names, row, strict=True):
            out[name][a] = value
    return out


def _sed(scores, statistic, measure: str) -> MeasureResult:
    stats = score_stats(scores)
    _require_comparisons(stats, measure)
    terms = _sed_terms(stats)
    sed, d_fmr, d_fnmr = terms["sed"], terms["delta_fmr"], terms["delta_fnmr"]
    undefined = np.isnan(sed).any(axis=1)
    if undefined.any():
        which = "FMR (eq. 8)" if np.isnan(d_fmr).any() else "FNMR (eq. 9)"
        rate, eq = which.split(" (eq. ")
        warn(
            SED_UNDEFINED.format(
                count=int(undefined.sum()), total=len(undefined), rate=rate, eq=eq.rstrip(")")
            ),
            UndefinedMeasureWarning,
        )
    return MeasureResult(
        value=statistic(sed),
        fmr_term=statistic(d_fmr),
        fnmr_term=statistic(d_fnmr),
        undefined=undefined,
    )


def sed_mean(scores) -> MeasureResult:
    """Mean of SED_G (Elobaid et al., eq. 8-11).

    .. math::
        \\delta FMR_g = |1 - FMR_g(\\bar T_{EER}) / FMR_{global}(\\bar T_{EER})|,\\quad
        SED_g = \\delta FMR_g + \\delta FNMR_g,\\quad
        \\overline{SED}_G = \\tfrac{1}{|G|}\\sum_g SED_g

    ``fmr_term`` and ``fnmr_term`` are the means of ``delta_fmr`` and
    ``delta_fnmr`` (the value is their sum).  0 only if every group matches the
    global rates; unbounded above.  NaN, flagged and warned when a global rate
    is 0.  See :func:`sed_table` for the per-group terms.

    Examples
    --------
    >>> import pandas as pd
    >>> from audit.scores import read_scores
    >>> scores = read_scores(pd.DataFrame({
    ...     "algorithm": "a", "group": ["F"] * 4 + ["M"] * 4,
    ...     "score": [0.9, 0.4, 0.6, 0.1] * 2, "mated": [True, True, False, False] * 2}))
    >>> float(sed_mean(scores).value[0])
    0.0
    """
    with np.errstate(invalid="ignore"):
        return _sed(scores, lambda x: x.mean(axis=1), "sed_mean")


def sed_std(scores) -> MeasureResult:
    """Standard deviation of SED_G (Elobaid et al., eq. 11 and sec. IV-B).

    Population standard deviation (divisor ``|G|``, as eq. 21 for the EERs).
    ``fmr_term`` and ``fnmr_term`` are the standard deviations of
    ``delta_fmr`` and ``delta_fnmr``; the value is *not* a combination of them.
    """
    with np.errstate(invalid="ignore"):
        return _sed(scores, lambda x: x.std(axis=1, ddof=0), "sed_std")


# ------------------------------------------------------------------- distributions


def _check_bins(bins) -> int:
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 2:
        raise ParameterError(BAD_BINS.format(value=bins))
    return int(bins)


def _edges(stats: SufficientStatistics, a: int, bins: int) -> np.ndarray:
    low, high = stats.score_range(a)
    if high == low:
        high = low + 1.0
    with np.errstate(over="ignore"):
        span = high - low
    if np.isfinite(span):
        return np.linspace(low, high, bins + 1)
    # scores from near the least float to near the largest (-1.7e308 to 1.7e308): their
    # difference overflows, so the edges are those of the halves, doubled back (halving
    # and doubling are exact: the edges of the same scores halved, doubled)
    return np.linspace(low / 2, high / 2, bins + 1) * 2


def _histograms(stats: SufficientStatistics, a: int, edges: np.ndarray):
    """Counts per bin (last bin closed) of each group's mated and within-group non-mated
    scores, (groups, bins) each, from the counts below the inner edges."""
    fm, fnm, _ = stats.counts(a, edges[1:-1])
    n_m, n_nm = stats.n_mated(a)[:, None], stats.n_nonmated(a)[:, None]
    zero = np.zeros_like(n_m)

    def per_bin(below: np.ndarray, n: np.ndarray) -> np.ndarray:
        return np.diff(np.concatenate([zero, below, n], axis=1), axis=1).astype("float64")

    return per_bin(fnm, n_m), per_bin(n_nm - fm, n_nm)


def _kl_to_mean(p: np.ndarray) -> np.ndarray:
    """KL divergence (base 2) of each row of ``p`` to the mean row; rows sum to 1."""
    mean = p.mean(axis=0, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log2(p / mean), 0.0)
    return terms.sum(axis=1)


def _normalise(counts: np.ndarray) -> np.ndarray:
    total = counts.sum(axis=1, keepdims=True)
    return counts / total


def dfi(scores, *, bins: int = 100) -> MeasureResult:
    """Distribution Fairness Index DFI_N (Kotwal & Marcel; Solano et al., eq. 1-2).

    .. math::
        Z_{D_{mean}} = \\tfrac1K \\sum_i Z_{D_i},\\quad
        DFI_N = 1 - \\tfrac{1}{K\\log_2 K}\\sum_i KL(Z_{D_i} \\| Z_{D_{mean}})

    ``Z_{D_i}``: the histogram of all of group i's scores (mated and
    within-group non-mated together, "combined genuine + impostor"),
    normalised to sum 1.  In [0, 1], 1 for identical group distributions.
    The combined histogram depends on each group's mix of mated and non-mated
    comparisons, as in the paper.  No separate FMR/FNMR terms (NaN).

    Examples
    --------
    >>> import pandas as pd
    >>> from audit.scores import read_scores
    >>> scores = read_scores(pd.DataFrame({
    ...     "algorithm": "a", "group": ["F"] * 4 + ["M"] * 4,
    ...     "score": [0.9, 0.8, 0.3, 0.1] * 2, "mated": [True, True, False, False] * 2}))
    >>> float(dfi(scores, bins=10).value[0])
    1.0
    """
    bins = _check_bins(bins)
    stats = score_stats(scores)
    k = len(stats.groups)
    if k < 2:
        raise InputError(TOO_FEW_GROUPS.format(n=k))
    _require_comparisons(stats, "dfi")
    values = []
    for a in range(len(stats.algorithms)):
        mated, nonmated = _histograms(stats, a, _edges(stats, a, bins))
        counts = mated + nonmated
        values.append(1.0 - _kl_to_mean(_normalise(counts)).sum() / (k * np.log2(k)))
    value = np.asarray(values)
    nan = np.full(len(value), np.nan)
    return MeasureResult(value=value, fmr_term=nan, fnmr_term=nan.copy(), undefined=np.isnan(value))


def _mean_distribution(p: np.ndarray) -> np.ndarray:
    """The mean of the groups' distributions (rows of ``p``), each bin summed over the groups
    in ascending order: the same floats whatever the order of the groups.  CEI compares its
    cumulative sum with the percentile, and a sum that reaches the percentile exactly (four
    groups, three with all their mass below a bin and one with 3/5 of it, at P = 0.9) must
    not reach it in one order of the groups and miss it by a rounding in another."""
    return np.sort(p, axis=0).sum(axis=0) / len(p)


def _cei_part(p: np.ndarray, tail: np.ndarray, w_tail: float, w_center: float) -> np.ndarray:
    """Weighted tail/centre divergence S' of each group (rows of ``p``, summing to 1)."""

    def lumped(keep):
        # the bins in ``keep`` plus one bin holding the mass of all the others
        return np.column_stack([p[:, keep], p[:, ~keep].sum(axis=1)])

    return w_tail * _kl_to_mean(lumped(tail)) + w_center * _kl_to_mean(lumped(~tail))


def cei(
    scores, *, percentile: float = 0.9, w_tail: float = 0.8, w_center: float = 0.2, bins: int = 100
) -> MeasureResult:
    """Comprehensive Equity Index (Solano et al., sec. 2.3, eq. 8).

    For each class (mated = genuine, non-mated = impostor) separately, each
    group's histogram ``Z_{D_i}`` is split at the score ``s`` where the mean
    distribution reaches the ``percentile`` P towards its error side: the
    *tail* is the non-mated scores above the P-quantile of the mean non-mated
    distribution (where false matches occur) and the mated scores below its
    (1 - P)-quantile (where false non-matches occur); the rest is the
    *centre*.  Then (eq. 8)

    .. math::
        S'_i = w_t\\,KL(Z^t_{D_i} \\| Z^t_{D_{mean}}) + w_c\\,KL(Z^c_{D_i} \\| Z^c_{D_{mean}}),
        \\quad CEI_c = 1 - \\tfrac{1}{K\\log_2 K}\\sum_i S'_i

    and ``CEI = (CEI_impostor + CEI_genuine) / 2``.  In [0, 1], 1 for identical
    distributions.  ``fmr_term`` is ``CEI_impostor``, ``fnmr_term``
    ``CEI_genuine``.

    Our reading, where the available text of the paper is incomplete (its
    eq. 9 is missing from our copy): ``Z^t`` is the group's distribution over
    the tail bins plus one bin holding its whole centre mass, and ``Z^c`` the
    converse, so both are probability distributions and the tail divergence
    sees the group's tail *probability* as well as the tail's shape (the
    paper's aim: "balances both their general shapes and tails'
    probabilities"); ``Z^t_{D_mean}`` is the mean of the groups' ``Z^t``, so
    each KL is at most ``log2 K`` and ``w_t + w_c = 1`` keeps CEI in [0, 1],
    normalised like DFI_N (eq. 2).  The split point is rounded to a bin edge.
    Defaults: P = 0.9 and (w_t, w_c) = (0.8, 0.2), among the settings of
    sec. 4.2.

    Examples
    --------
    >>> import pandas as pd
    >>> from audit.scores import read_scores
    >>> scores = read_scores(pd.DataFrame({
    ...     "algorithm": "a", "group": ["F"] * 4 + ["M"] * 4,
    ...     "score": [0.9, 0.8, 0.3, 0.1] * 2, "mated": [True, True, False, False] * 2}))
    >>> float(cei(scores, bins=10).value[0])
    1.0
    """
    bins = _check_bins(bins)
    if not 0.0 < percentile < 1.0:
        raise ParameterError(BAD_PERCENTILE.format(value=percentile))
    if w_tail < 0 or w_center < 0 or not np.isclose(w_tail + w_center, 1.0):
        raise ParameterError(BAD_WEIGHTS.format(w_tail=w_tail, w_center=w_center))
    stats = score_stats(scores)
    k = len(stats.groups)
    if k < 2:
        raise InputError(TOO_FEW_GROUPS.format(n=k))
    _require_comparisons(stats, "cei")
    impostor, genuine = [], []
    for a in range(len(stats.algorithms)):
        mated, nonmated = _histograms(stats, a, _edges(stats, a, bins))
        for kind, out in (("nonmated", impostor), ("mated", genuine)):
            p = _normalise(nonmated if kind == "nonmated" else mated)
            cdf = np.cumsum(_mean_distribution(p))
            if kind == "nonmated":
                # tail: bins entirely above the P-quantile of the mean distribution
                split = int(np.searchsorted(cdf, percentile, "left")) + 1
                tail = np.arange(bins) >= split
            else:
                split = int(np.searchsorted(cdf, 1.0 - percentile, "left"))
                tail = np.arange(bins) <= split
            s = _cei_part(p, tail, w_tail, w_center)
            out.append(1.0 - s.sum() / (k * np.log2(k)))
    impostor, genuine = np.asarray(impostor), np.asarray(genuine)
    value = (impostor + genuine) / 2.0
    return MeasureResult(
        value=value, fmr_term=impostor, fnmr_term=genuine, undefined=np.isnan(value)
    )
