"""Group orderings: which group fares worst and which best, algorithm by algorithm.

A fairness measure folds each algorithm's per-group rates into one number; the
order of the groups is what it folds away.  For each rate a table holds (FMR,
FNMR) and each algorithm, the groups are sorted from the highest rate (the
worst-served group) to the lowest (the best-served):

* :func:`group_orderings`: each algorithm's ordering, written worst first,
  ``F.Black > F.White = M.Black > M.White`` (``>``: a higher rate; ``=``: the
  same rate exactly, a tie);
* :func:`group_extremes`: how often each group is the worst and the best,
  alone or tied with others;
* :func:`ordering_counts`: how often each ordering occurs, with the
  algorithms of each, most frequent first.  With many groups nearly every
  algorithm has an ordering of its own (8 groups allow 40,320 strict
  orderings; NIST's 50 cells, about 3e64), so ``attrs["distinct"]`` says how
  many distinct orderings there are beside the most frequent ones.

Ties are exact equality of the rates as read: a transcription that rounds (the
Annex 15 FMRs on a 0.1-decade grid with a floor at 1e-5) ties many groups, and
a floored group tied for the lowest FMR is "best, tied", not "best".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from audit.tables.layouts import available_rates
from audit.tables.rates import rate_matrices

#: Between two groups of an ordering: a higher rate, and the same rate.
ABOVE = " > "
TIED = " = "


def _orders(groups: pd.Index, rates: np.ndarray) -> list[tuple]:
    """Each algorithm's groups as tiers, worst (highest rate) first: a tuple of tuples."""
    out = []
    for row in rates:
        order = np.argsort(-row, kind="stable")  # ties keep the table's order of groups
        tiers: list[list[str]] = []
        previous = None
        for position in order:
            value = row[position]
            if previous is not None and value == previous:
                tiers[-1].append(str(groups[position]))
            else:
                tiers.append([str(groups[position])])
            previous = value
        out.append(tuple(tuple(t) for t in tiers))
    return out


def _written(tiers: tuple) -> str:
    return ABOVE.join(TIED.join(tier) for tier in tiers)


def group_orderings(table: pd.DataFrame) -> pd.DataFrame:
    """Each algorithm's ordering of the groups, for each rate the table holds.

    Returns
    -------
    pandas.DataFrame
        One row per (rate, algorithm), in the table's order: ``rate``
        (``"fmr"``, ``"fnmr"``), ``algorithm``, ``ordering`` (worst first,
        :data:`ABOVE` between tiers, :data:`TIED` within one), ``worst`` and
        ``best`` (the groups of the first and the last tier, joined by
        :data:`TIED`), ``tiers`` (the number of distinct rates) and ``strict``
        (no tie: as many tiers as groups).

    Examples
    --------
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"Algorithm": ["a", "b"], "FMR.F": [3e-4, 1e-4],
    ...     "FMR.M": [1e-4, 1e-4], "FMR.X": [2e-4, 2e-4]}))
    >>> group_orderings(t)[["algorithm", "ordering", "worst", "best"]]
      algorithm   ordering worst   best
    0         a  F > X > M     F      M
    1         b  X > F = M     X  F = M
    """
    algorithms, groups, fmr, fnmr = rate_matrices(table)
    frames = []
    for rate in available_rates(table):
        tiers = _orders(groups, fmr if rate == "fmr" else fnmr)
        frames.append(
            pd.DataFrame(
                {
                    "rate": rate,
                    "algorithm": [str(a) for a in algorithms],
                    "ordering": [_written(t) for t in tiers],
                    "worst": [TIED.join(t[0]) for t in tiers],
                    "best": [TIED.join(t[-1]) for t in tiers],
                    "tiers": [len(t) for t in tiers],
                    "strict": [len(t) == len(groups) for t in tiers],
                }
            )
        )
    out = pd.concat(frames, ignore_index=True)
    out.attrs["groups"] = [str(g) for g in groups]
    return out


def group_extremes(table: pd.DataFrame) -> pd.DataFrame:
    """How often each group is the worst-served and the best-served, for each rate.

    Returns
    -------
    pandas.DataFrame
        One row per (rate, group), groups in the table's order: ``worst``
        (algorithms whose highest rate is this group's alone), ``worst_tied``
        (whose highest rate this group shares with others), ``best`` and
        ``best_tied`` likewise for the lowest rate, ``algorithms`` (the
        number of algorithms) and ``share_worst``, ``share_best`` (``worst``
        and ``best`` over ``algorithms``).  An algorithm whose groups all have
        the same rate counts as tied for both.

    Examples
    --------
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"Algorithm": ["a", "b"], "FMR.F": [3e-4, 1e-4],
    ...     "FMR.M": [1e-4, 1e-4], "FMR.X": [2e-4, 2e-4]}))
    >>> group_extremes(t)[["group", "worst", "worst_tied", "best", "best_tied"]]
      group  worst  worst_tied  best  best_tied
    0     F      1           0     0          1
    1     M      0           0     1          1
    2     X      1           0     0          0
    """
    algorithms, groups, fmr, fnmr = rate_matrices(table)
    rows = []
    for rate in available_rates(table):
        x = fmr if rate == "fmr" else fnmr
        high = x == x.max(axis=1, keepdims=True)
        low = x == x.min(axis=1, keepdims=True)
        high_alone = high & (high.sum(axis=1, keepdims=True) == 1)
        low_alone = low & (low.sum(axis=1, keepdims=True) == 1)
        n = len(algorithms)
        for j, group in enumerate(groups):
            worst, best = int(high_alone[:, j].sum()), int(low_alone[:, j].sum())
            rows.append(
                {
                    "rate": rate,
                    "group": str(group),
                    "worst": worst,
                    "worst_tied": int(high[:, j].sum()) - worst,
                    "best": best,
                    "best_tied": int(low[:, j].sum()) - best,
                    "algorithms": n,
                    "share_worst": worst / n,
                    "share_best": best / n,
                }
            )
    return pd.DataFrame(rows)


def ordering_counts(orderings: pd.DataFrame) -> pd.DataFrame:
    """How often each ordering of the groups occurs, with its algorithms, for each rate.

    Parameters
    ----------
    orderings
        :func:`group_orderings` of a table.

    Returns
    -------
    pandas.DataFrame
        One row per (rate, distinct ordering), most frequent first (ties in
        count by first appearance in the table): ``rate``, ``rank`` (1 for the
        most frequent), ``ordering``, ``count``, ``share`` (of the rate's
        algorithms), ``strict`` (no tie in the ordering) and ``algorithms``
        (comma-separated, in the table's order).  ``attrs["distinct"]`` maps
        each rate to its number of distinct orderings, ``attrs["algorithms"]``
        to its number of algorithms.

    Examples
    --------
    >>> o = pd.DataFrame({"rate": "fmr", "algorithm": ["a", "b", "c"],
    ...                   "ordering": ["F > M", "M > F", "F > M"], "strict": True})
    >>> ordering_counts(o)[["rank", "ordering", "count", "algorithms"]]
       rank ordering  count algorithms
    0     1    F > M      2       a, c
    1     2    M > F      1          b
    """
    rows, distinct, totals = [], {}, {}
    for rate, part in orderings.groupby("rate", sort=False):
        counted: dict[str, list[str]] = {}
        strict: dict[str, bool] = {}
        for algorithm, ordering, no_tie in zip(
            part["algorithm"], part["ordering"], part["strict"], strict=True
        ):
            counted.setdefault(ordering, []).append(str(algorithm))
            strict[ordering] = bool(no_tie)
        ranked = sorted(counted.items(), key=lambda item: -len(item[1]))  # stable: first seen
        for rank, (ordering, names) in enumerate(ranked, start=1):
            rows.append(
                {
                    "rate": rate,
                    "rank": rank,
                    "ordering": ordering,
                    "count": len(names),
                    "share": len(names) / len(part),
                    "strict": strict[ordering],
                    "algorithms": ", ".join(names),
                }
            )
        distinct[str(rate)] = len(counted)
        totals[str(rate)] = len(part)
    out = pd.DataFrame(
        rows, columns=["rate", "rank", "ordering", "count", "share", "strict", "algorithms"]
    )
    out.attrs.update({"distinct": distinct, "algorithms": totals})
    return out


__all__ = ["ABOVE", "TIED", "group_extremes", "group_orderings", "ordering_counts"]
