"""Operating points: thresholds at target FMRs, per-group rates at thresholds, sweeps, DET points."""

from __future__ import annotations

import numpy as np
import pandas as pd

from audit.scores.stats import ScoreStats, score_stats
from audit.tables.scores import (
    BAD_TARGET,
    DEFAULT_TARGETS,
    MATED_ONLY,
    NO_COMPARISONS,
    NO_NONMATED,
    ScoresError,
)

#: The count behind each rate: FMR over non-mated comparisons, FNMR over mated ones.
COUNTS = {"fmr": "n_nonmated", "fnmr": "n_mated"}

_SIGN = np.int64(0x7FFFFFFFFFFFFFFF)


def _ordered(x: np.ndarray) -> np.ndarray:
    """Map float64 to int64 so that integer order is float order."""
    i = np.asarray(x, dtype="float64").view(np.int64)
    return np.where(i < 0, ~(i & _SIGN), i)


def _unordered(o: np.ndarray) -> np.ndarray:
    o = np.asarray(o, dtype=np.int64)
    i = np.where(o < 0, (~o) | ~_SIGN, o)
    return i.view(np.float64)


def _allowed_false_matches(targets: np.ndarray, n: int) -> np.ndarray:
    """Largest k with k / n <= target (as float64), per target."""
    k = np.floor(targets * n).astype("int64")
    k = np.clip(k, 0, n)
    up = (k + 1 <= n) & ((k + 1) / n <= targets)
    k = np.where(up, k + 1, k)
    down = (k > 0) & (k / n > targets)
    return np.where(down, k - 1, k)


#: Largest window of candidate scores that the threshold search sorts outright
#: instead of bisecting further.
_WINDOW = 1024


def _pooled_false_matches(runs: list[np.ndarray], t: np.ndarray) -> np.ndarray:
    """Pooled count of non-mated scores ``>= t`` over sorted runs, per threshold."""
    count = np.zeros(len(t), dtype=np.int64)
    for run in runs:
        count += len(run) - np.searchsorted(run, t, "left")
    return count


def _union_of_ranges(start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """Sorted indices covered by the half-open ranges ``[start[i], stop[i])``, each once."""
    order = np.argsort(start, kind="stable")
    start, stop = start[order], np.maximum.accumulate(stop[order])
    # a range opens a new block unless it starts inside the blocks before it
    new = np.ones(len(start), dtype=bool)
    new[1:] = start[1:] > stop[:-1]
    first = np.flatnonzero(new)
    begin = start[first]
    end = np.append(stop[first[1:] - 1], stop[-1]) if len(first) else stop[:0]
    length = end - begin
    keep = length > 0
    begin, length = begin[keep], length[keep]
    if not len(begin):
        return np.zeros(0, dtype=np.int64)
    shift = np.repeat(begin - np.concatenate(([0], np.cumsum(length)[:-1])), length)
    return shift + np.arange(length.sum())


#: Size of the sample of the pooled non-mated scores that brackets each threshold.
_SKETCH = 1 << 14


def _sketch_brackets(
    runs: list[np.ndarray], n: int, q: np.ndarray, low: float, high: float
) -> tuple[np.ndarray, np.ndarray]:
    """Likely bounds ``lo <= v < hi`` of the ``q``-th smallest pooled score, from a sample.

    Every ``step``-th score of each sorted run is kept; if ``c`` sample scores
    are ``<= x``, the pooled count ``<= x`` lies within ``step * (len(runs) + 1)``
    of ``step * c``, so bounds that far from ``q / step`` in the sorted sample
    hold unless ties get in the way (the caller checks them).
    """
    step = max(1, n // _SKETCH)
    sample = np.sort(np.concatenate([r[step - 1 :: step] for r in runs]))
    if not len(sample):
        return np.full(len(q), low), np.full(len(q), high)
    margin = len(runs) + 2
    at_lo = q // step - margin
    at_hi = q // step + margin
    lo = np.where(at_lo >= 0, sample[np.clip(at_lo, 0, len(sample) - 1)], low)
    hi = np.where(at_hi < len(sample), sample[np.clip(at_hi, 0, len(sample) - 1)], high)
    return lo, hi


def _operating_points(
    stats: ScoreStats, a: int, targets: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """Internal thresholds, pooled false-match counts there and the pooled count N.

    The threshold for ``k`` allowed false matches is the smallest ``t`` (in
    float order) with ``count(pooled non-mated >= t) <= k``: ``low`` (the
    smallest score) when ``k >= N``, otherwise the float just above ``v``, the
    ``(k+1)``-th largest pooled non-mated score.  ``v`` is found exactly, for
    all targets at once: bounds from a sorted sample of about :data:`_SKETCH`
    pooled scores (checked by exact counts; a target whose bounds fail, which
    only heavy ties can cause, starts from the whole range), then a bisection
    on the bit patterns of the floats (so ties and signed zeros follow float
    comparison) until fewer than :data:`_WINDOW` scores remain between the
    bounds of each target, then one sort of the union of those windows, from
    which each ``v`` is read by its rank.  Cost: a few hundred binary searches
    and sorts of a few thousand scores, independent of the number of scores
    but for the depth of the searches.  The reported threshold is the
    smallest observed score at or above ``t``, which takes the same decisions.
    """
    runs = [s for s in (*stats.nonmated[a], stats.cross[a]) if len(s)]
    n = sum(len(s) for s in runs)
    if n == 0:
        if stats.rates_held() == ("fnmr",):
            raise ScoresError(MATED_ONLY)
        raise ScoresError(NO_NONMATED.format(algorithm=stats.algorithms[a]))
    k = _allowed_false_matches(targets, n)
    segments = [s for s in stats.segments(a) if len(s)]
    low = min(s[0] for s in segments)
    nm_low = min(s[0] for s in runs)
    nm_max = max(s[-1] for s in runs)
    t_star = np.full(len(targets), low)
    todo = np.flatnonzero(k < n)
    if len(todo):
        kk = k[todo]
        # invariant: count(>= lo) > k >= count(>= hi); below[r] = count(run r < bound)
        lo_f, hi_f = _sketch_brackets(runs, n, n - 1 - kk, nm_low, np.nextafter(nm_max, np.inf))
        below_lo = np.array([np.searchsorted(r, lo_f, "left") for r in runs], dtype=np.int64)
        below_hi = np.array([np.searchsorted(r, hi_f, "left") for r in runs], dtype=np.int64)
        wrong = (n - below_lo.sum(axis=0) <= kk) | (n - below_hi.sum(axis=0) > kk)
        if wrong.any():  # ties can defeat the sketch: start those from the whole range
            lo_f[wrong], hi_f[wrong] = nm_low, np.nextafter(nm_max, np.inf)
            below_lo[:, wrong] = 0
            below_hi[:, wrong] = np.array([len(r) for r in runs])[:, None]
        lo, hi = _ordered(lo_f), _ordered(hi_f)
        active = np.arange(len(todo))
        while True:
            window = below_hi[:, active].sum(axis=0) - below_lo[:, active].sum(axis=0)
            keep = (window > _WINDOW) & (hi[active] > lo[active] + 1)
            active = active[keep]
            if not len(active):
                break
            l, h = lo[active], hi[active]
            mid = l // 2 + h // 2 + ((l % 2) + (h % 2)) // 2
            t = _unordered(mid)
            below = np.array([np.searchsorted(r, t, "left") for r in runs], dtype=np.int64)
            ok = n - below.sum(axis=0) <= kk[active]
            hi[active] = np.where(ok, mid, h)
            lo[active] = np.where(ok, l, mid)
            below_hi[:, active] = np.where(ok, below, below_hi[:, active])
            below_lo[:, active] = np.where(ok, below_lo[:, active], below)
        result = _unordered(hi)
        open_ = np.flatnonzero(hi > lo + 1)
        if len(open_):
            # the (k+1)-th largest lies among the scores in [lo, hi): gather the union of
            # these windows once, sort it, and read each answer off by its rank
            # runs side by side in one index space, so that one union serves them all
            base = np.concatenate(([0], np.cumsum([len(r) for r in runs])))
            covered = _union_of_ranges(
                (below_lo[:, open_] + base[:-1, None]).ravel(),
                (below_hi[:, open_] + base[:-1, None]).ravel(),
            )
            cut = np.searchsorted(covered, base).tolist()
            union = np.sort(
                np.concatenate(
                    [run.take(covered[cut[r] : cut[r + 1]] - base[r]) for r, run in enumerate(runs)]
                )
            )
            top = np.searchsorted(union, result[open_], "left")  # union scores below hi
            above = n - below_hi[:, open_].sum(axis=0)  # pooled scores at or above hi
            result[open_] = np.nextafter(union[top - (kk[open_] + 1 - above)], np.inf)
        t_star[todo] = result
    # report the smallest observed score that is accepted (same decisions as t_star)
    observed = np.full(len(targets), np.inf)
    for s in segments:
        at = np.searchsorted(s, t_star, "left")
        np.minimum(observed, s[np.minimum(at, len(s) - 1)], out=observed, where=at < len(s))
    internal = np.where(np.isfinite(observed), observed, t_star)
    return internal, _pooled_false_matches(runs, internal), n


def thresholds_at_fmr(stats: ScoreStats | pd.DataFrame, targets, algorithm=None) -> pd.DataFrame:
    """Thresholds setting the pooled FMR of each algorithm at or below each target.

    Returns one row per (algorithm, target): ``algorithm``, ``target_fmr``,
    ``threshold`` (in the caller's units), ``attained_fmr`` (pooled, never
    above the target), ``n_pooled_nonmated``.  See the module docstring for
    the conventions.
    """
    stats = score_stats(stats)
    targets = _targets(targets)
    indices = (
        range(len(stats.algorithms)) if algorithm is None else [stats.algorithm_index(algorithm)]
    )
    columns = {
        "algorithm": [],
        "target_fmr": [],
        "threshold": [],
        "_internal": [],
        "attained_fmr": [],
        "n_pooled_nonmated": [],
    }
    for a in indices:
        internal, attained, n = _operating_points(stats, a, targets)
        columns["algorithm"] += [stats.algorithms[a]] * len(targets)
        columns["target_fmr"].append(targets)
        columns["threshold"].append(stats.to_external(internal))
        columns["_internal"].append(internal)
        columns["attained_fmr"].append(attained / n)
        columns["n_pooled_nonmated"].append(np.full(len(targets), n, dtype=np.int64))
    out = {
        name: values if name == "algorithm" else np.concatenate(values)
        for name, values in columns.items()
    }
    return pd.DataFrame(out)


def _targets(targets) -> np.ndarray:
    targets = np.atleast_1d(np.asarray(targets, dtype="float64"))
    bad = ~((targets > 0) & (targets <= 1))
    if bad.any():
        raise ValueError(BAD_TARGET.format(value=float(targets[bad][0])))
    return targets


def _rates_frame(stats: ScoreStats, a: int, internal: np.ndarray) -> dict[str, np.ndarray]:
    """Per-group rates (n_groups, n_thresholds) at internal thresholds, refusing empty groups.

    Only the rates the scores hold (:meth:`ScoreStats.rates_held`): a set of
    non-mated comparisons only gives FMRs, of mated ones only FNMRs.
    """
    held = stats.rates_held()
    counts = {"fmr": stats.n_nonmated(a), "fnmr": stats.n_mated(a)}
    kinds = {"fmr": "within-group non-mated", "fnmr": "mated"}
    for g in range(len(stats.groups)):
        for rate in (r for r in ("fnmr", "fmr") if r in held and counts[r][g] == 0):
            raise ScoresError(
                NO_COMPARISONS.format(
                    algorithm=stats.algorithms[a],
                    group=stats.groups[g],
                    kind=kinds[rate],
                    rate=rate.upper(),
                )
            )
    fm, fnm, _ = stats.counts(a, internal)
    errors = {"fmr": fm, "fnmr": fnm}
    out = {rate: errors[rate] / counts[rate][:, None] for rate in held}
    out |= {COUNTS[rate]: counts[rate] for rate in ("fnmr", "fmr") if rate in held}
    return out


def _strings(labels, index: np.ndarray):
    """A pandas ``string`` array of ``str(labels[i])`` for ``i`` in ``index``."""
    return pd.array([str(label) for label in labels], dtype="string").take(index)


def _tidy(stats: ScoreStats, blocks: list[tuple[int, dict, dict]]) -> pd.DataFrame:
    """Assemble rates blocks into the tidy long table, one row per (algorithm, [point,] group)."""
    n_grp = len(stats.groups)
    rate = stats.rates_held()[0]
    sizes = [rates[rate].shape[1] * n_grp for _, rates, _ in blocks]
    group = np.tile(np.arange(n_grp), sum(sizes) // n_grp if n_grp else 0)
    table = {"algorithm": _strings(stats.algorithms, np.repeat([a for a, _, _ in blocks], sizes))}
    if stats.attributes:
        # attribute values hold no "." when there are several (read_scores refuses it);
        # a single attribute's value is the whole label, dots and all
        split = [str(g).split(".", len(stats.attributes) - 1) for g in stats.groups]
        for i, name in enumerate(stats.attributes):
            table[name] = _strings([s[i] for s in split], group)
    table["group"] = _strings(stats.groups, group)
    held = stats.rates_held()
    for rate in held:
        table[rate] = np.concatenate([rates[rate].T.ravel() for _, rates, _ in blocks])
    for rate in ("fnmr", "fmr"):
        if rate in held:
            table[COUNTS[rate]] = np.concatenate(
                [np.tile(rates[COUNTS[rate]], rates[rate].shape[1]) for _, rates, _ in blocks]
            ).astype("int64")
    for name in blocks[0][2]:
        table[name] = np.concatenate(
            [np.repeat(np.asarray(extra[name]), n_grp) for _, _, extra in blocks]
        )
    return pd.DataFrame(table)


def rates_at_thresholds(scores: pd.DataFrame | ScoreStats, thresholds) -> pd.DataFrame:
    """Per-group FMR and FNMR at given thresholds (caller's units), one row per
    (algorithm, threshold, group), with a ``threshold`` column.

    ``thresholds``: a scalar or 1-D array applied to every algorithm, or a
    mapping ``{algorithm: threshold(s)}``.
    """
    stats = score_stats(scores)
    blocks = []
    for a, name in enumerate(stats.algorithms):
        t = thresholds[name] if isinstance(thresholds, dict) else thresholds
        t = np.atleast_1d(np.asarray(t, dtype="float64"))
        internal = stats.to_internal(t)
        blocks.append((a, _rates_frame(stats, a, internal), {"threshold": t}))
    return _tidy(stats, blocks)


def sweep(scores: pd.DataFrame | ScoreStats, targets=None) -> pd.DataFrame:
    """Per-group rates at a grid of target FMRs.

    Parameters
    ----------
    scores
        A validated score table (:func:`read_scores`) or its :class:`ScoreStats`.
    targets
        Target pooled FMRs in (0, 1]; default :data:`DEFAULT_TARGETS`
        (0.1% to 10%, log-spaced, 21 points).

    Returns
    -------
    pandas.DataFrame
        One row per (algorithm, target, group): the columns of
        :func:`audit.rates.read_rates` (``algorithm``, attributes, ``group``,
        ``fmr``, ``fnmr``), ``n_mated``, ``n_nonmated``, then ``target_fmr``,
        ``threshold`` (caller's units) and ``attained_fmr`` (pooled FMR at the
        threshold, never above the target).
    """
    stats = score_stats(scores)
    targets = DEFAULT_TARGETS if targets is None else targets
    targets = _targets(targets)
    points = [_operating_points(stats, a, targets) for a in range(len(stats.algorithms))]
    blocks = []
    for a, (internal, attained, n) in enumerate(points):
        blocks.append(
            (
                a,
                _rates_frame(stats, a, internal),
                {
                    "target_fmr": targets,
                    "threshold": stats.to_external(internal),
                    "attained_fmr": attained / n,
                },
            )
        )
    return _tidy(stats, blocks)


def rates_at_fmr(scores: pd.DataFrame | ScoreStats, target_fmr: float = 1e-3) -> pd.DataFrame:
    """Per-group FMR and FNMR at the threshold giving a pooled FMR of ``target_fmr``.

    The result is the tidy rates table of :func:`audit.rates.read_rates`
    (``algorithm``, attribute columns, ``group``, ``fmr``, ``fnmr``,
    ``n_mated``, ``n_nonmated``), so every rate-based measure, the FFMC audit
    and the Pareto frontier work on it unchanged.  The operating point is
    recorded in ``attrs``: ``target_fmr`` (float), and per algorithm
    ``threshold`` and ``attained_fmr`` (dicts keyed by algorithm name); see the
    module docstring for the threshold and tie conventions (the attained FMR
    never exceeds the target).

    Examples
    --------
    >>> import pandas as pd
    >>> from audit.tables.scores import read_scores
    >>> scores = read_scores(pd.DataFrame({
    ...     "algorithm": "a", "group": ["F"] * 4 + ["M"] * 4,
    ...     "score": [0.9, 0.8, 0.3, 0.1, 0.7, 0.6, 0.5, 0.2],
    ...     "mated": [True, True, False, False] * 2}))
    >>> table = rates_at_fmr(scores, 0.25)
    >>> table[["group", "fmr", "fnmr", "n_mated", "n_nonmated"]]
      group  fmr  fnmr  n_mated  n_nonmated
    0     F  0.0   0.0        2           2
    1     M  0.5   0.0        2           2
    >>> table.attrs["threshold"], table.attrs["attained_fmr"]
    ({'a': 0.5}, {'a': 0.25})
    """
    return at_target(sweep(scores, [target_fmr]), target_fmr)


def at_target(swept: pd.DataFrame, target_fmr: float) -> pd.DataFrame:
    """A one-target sweep as the rates table of :func:`rates_at_fmr`: the operating
    point's threshold and attained FMR per algorithm move into ``attrs``."""
    thresholds = dict(zip(swept["algorithm"], swept["threshold"], strict=False))
    attained = dict(zip(swept["algorithm"], swept["attained_fmr"], strict=False))
    table = swept.drop(columns=["target_fmr", "threshold", "attained_fmr"])
    table.attrs["target_fmr"] = float(target_fmr)
    table.attrs["threshold"] = {str(k): float(v) for k, v in thresholds.items()}
    table.attrs["attained_fmr"] = {str(k): float(v) for k, v in attained.items()}
    return table


def _kth_of_two(x: np.ndarray, y: np.ndarray, k: np.ndarray) -> np.ndarray:
    """The ``k``-th smallest values (0-based, an array) of the union of sorted ``x`` and ``y``:
    the smallest value with more than ``k`` values at or below it, by bisection in each."""

    def first(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        lo, hi = np.zeros(len(k), np.intp), np.full(len(k), len(a), np.intp)
        while (lo < hi).any():
            mid = (lo + hi) // 2
            live = lo < hi
            value = a[np.minimum(mid, len(a) - 1)]
            enough = np.searchsorted(a, value, "right") + np.searchsorted(b, value, "right") > k
            hi = np.where(live & enough, mid, hi)
            lo = np.where(live & ~enough, mid + 1, lo)
        return np.where(lo < len(a), a[np.minimum(lo, len(a) - 1)] if len(a) else np.inf, np.inf)

    return np.minimum(first(x, y), first(y, x))


def _merged_quantiles(x: np.ndarray, y: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``numpy.quantile(numpy.concatenate([x, y]), q)`` (method "linear") of sorted ``x``
    and ``y``, from the order statistics it interpolates, with its formulas."""
    n = len(x) + len(y)
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    following = previous + 1
    above = virtual >= n - 1
    previous[above] = n - 1
    following[above] = n - 1
    previous, following = previous.astype(np.intp), following.astype(np.intp)
    gamma = virtual - np.where(above, -1, previous)
    a, b = _kth_of_two(x, y, previous), _kth_of_two(x, y, following)
    diff = b - a
    result = a + diff * gamma
    np.subtract(b, diff * (1 - gamma), out=result, where=gamma >= 0.5)
    return result


def det_points(scores, *, n_points: int = 200) -> pd.DataFrame:
    """Per-group DET curve points: ``algorithm``, ``group``, ``fmr``, ``fnmr``.

    Thresholds at ``n_points`` quantiles of each group's pooled (mated and
    within-group non-mated) scores (``numpy.quantile``'s, read off the two
    sorted arrays by :func:`_merged_quantiles`, without joining them); the rates come from
    :meth:`ScoreStats.counts`, as everywhere else.  The input of
    :func:`audit.plots.scores.det_curves`.
    """
    stats = score_stats(scores)
    rows = []
    for a, algorithm in enumerate(stats.algorithms):
        n_mated, n_nonmated = stats.n_mated(a), stats.n_nonmated(a)
        for g, group in enumerate(stats.groups):
            if n_mated[g] == 0 or n_nonmated[g] == 0:
                continue
            t = np.unique(
                _merged_quantiles(
                    stats.mated[a][g], stats.nonmated[a][g], np.linspace(0, 1, n_points)
                )
            )
            false_matches, false_non_matches, _ = stats.counts(a, t)
            rows.append(
                pd.DataFrame(
                    {
                        "algorithm": str(algorithm),
                        "group": str(group),
                        "fmr": false_matches[g] / n_nonmated[g],
                        "fnmr": false_non_matches[g] / n_mated[g],
                    }
                )
            )
    return pd.concat(rows, ignore_index=True)
