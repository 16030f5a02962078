"""Figures of uncertainty: interval plots, frontier membership probability, replicate statistics.

Each function takes the tidy frames of :class:`audit.uncertainty.UncertaintyResult`
(and an optional ``ax`` or ``fig``), imports matplotlib lazily, returns the
Axes or Figure, and never shows; the caller saves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from audit.exceptions import UsageError
from audit.measures.registry import get_measure
from audit.report.plots import plain_text
from audit.report.plots.pareto import label_points

NO_ROWS = "no intervals for measure {measure!r}; measures present: {present}"
NO_STATISTICS = "none of the statistics {names} is in the replicate table"


def _label(measure: str) -> str:
    try:
        return get_measure(measure).label
    except KeyError:
        return measure


@plain_text
def plot_intervals(
    intervals: pd.DataFrame,
    *,
    measure: str,
    ax=None,
    top: int | None = None,
    names: bool | None = None,
):
    """Point value and replicate interval of one measure for every algorithm.

    Algorithms are sorted from fairest to least fair; ``top`` keeps the
    fairest ones.  The interval is drawn as a bar from ``low`` to ``high`` and
    the point value as a dot: with censored data (the Annex 15 floor) the dot
    may lie outside its bar, which is the finding, not a drawing error.

    Parameters
    ----------
    intervals
        :attr:`UncertaintyResult.intervals` (columns ``measure``, ``algorithm``,
        ``value``, ``low``, ``high``).
    names
        Label the algorithms on the y axis (default: when at most 40 are shown).
    """
    import matplotlib.pyplot as plt

    rows = intervals[intervals["measure"] == measure]
    if rows.empty:
        raise UsageError(
            NO_ROWS.format(measure=measure, present=sorted(intervals["measure"].unique()))
        )
    try:
        fairer_high = get_measure(measure).higher_is_fairer
    except KeyError:
        fairer_high = False
    rows = rows.sort_values("value", ascending=not fairer_high, na_position="last")
    if top is not None:
        rows = rows.head(top)
    created = ax is None
    if created:
        _, ax = plt.subplots(figsize=(6.5, max(3.0, 0.16 * len(rows) + 1.0)), layout="constrained")
    y = np.arange(len(rows))[::-1]
    ax.hlines(
        y,
        rows["low"],
        rows["high"],
        color="tab:blue",
        linewidth=2.0,
        alpha=0.6,
        label=f"{int(round(100 * rows.attrs.get('level', 0.95)))}% interval",
    )
    ax.plot(rows["value"], y, "o", color="black", markersize=3.0, label="point value")
    if names if names is not None else len(rows) <= 40:
        ax.set_yticks(y, rows["algorithm"].astype(str).tolist(), fontsize=7)
    else:
        ax.set_yticks([])
        ax.set_ylabel(f"{len(rows)} algorithms, fairest on top")
    ax.set_xlabel(_label(measure))
    ax.legend(loc="best", fontsize=8)
    kind = rows.attrs.get("kind")
    if kind:
        ax.set_title(f"{_label(measure)}: {kind} uncertainty", fontsize=10)
    return ax


@plain_text
def add_frontier_probability(
    ax,
    frontier: pd.DataFrame,
    *,
    x: str = "total_fnmr",
    y: str = "value",
    error_bars: bool = True,
    annotate: float | None = 0.5,
    cmap: str = "viridis",
    colorbar: bool = True,
):
    """Draw frontier membership probability on an existing accuracy/fairness Axes.

    Each algorithm is a dot coloured (and sized) by ``frontier_probability``;
    with ``error_bars`` its ``<x>_low``/``<x>_high`` and ``low``/``high``
    intervals are drawn as thin lines; the point-data frontier
    (``on_frontier``) is joined by a red line; algorithms with a probability
    of at least ``annotate`` are named.  Returns ``ax``.
    """
    probability = frontier["frontier_probability"].to_numpy(dtype="float64")
    xs = frontier[x].to_numpy(dtype="float64")
    ys = frontier[y].to_numpy(dtype="float64")
    if error_bars:
        if f"{x}_low" in frontier.columns:
            ax.hlines(
                ys,
                frontier[f"{x}_low"],
                frontier[f"{x}_high"],
                color="grey",
                linewidth=0.6,
                alpha=0.6,
                zorder=1,
            )
        if "low" in frontier.columns:
            ax.vlines(
                xs,
                frontier["low"],
                frontier["high"],
                color="grey",
                linewidth=0.6,
                alpha=0.6,
                zorder=1,
            )
    on = frontier["on_frontier"].to_numpy(dtype=bool)
    order = np.argsort(xs[on])
    ax.plot(
        xs[on][order],
        ys[on][order],
        color="red",
        linewidth=1.0,
        zorder=2,
        label="frontier (point rates)",
    )
    points = ax.scatter(
        xs,
        ys,
        c=probability,
        s=12.0 + 80.0 * probability,
        cmap=cmap,
        vmin=0.0,
        vmax=1.0,
        edgecolors="black",
        linewidths=0.3,
        zorder=3,
    )
    if colorbar:
        ax.figure.colorbar(points, ax=ax, label="frontier membership probability")
    if annotate is not None:
        named = frontier[frontier["frontier_probability"] >= annotate]
        label_points(
            ax,
            [f"{r.algorithm} ({r.frontier_probability:.2f})" for r in named.itertuples()],
            named[x],
            named[y],
            fontsize=7,
        )
    return ax


@plain_text
def plot_frontier_probability(frontier: pd.DataFrame, *, ax=None, logx: bool = True, **options):
    """Accuracy/fairness scatter coloured by frontier membership probability.

    ``frontier`` is :attr:`UncertaintyResult.frontier`; ``options`` go to
    :func:`add_frontier_probability`.  Returns the Axes.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7.0, 5.0), layout="constrained")
    add_frontier_probability(ax, frontier, **options)
    if logx:
        ax.set_xscale("log")
    measure = str(frontier["measure"].iloc[0]) if "measure" in frontier.columns else "fairness"
    ax.set_xlabel(f"total FNMR ({frontier.attrs.get('weights', 'equal')} weights)")
    ax.set_ylabel(_label(measure))
    kind = frontier.attrs.get("kind")
    n = frontier.attrs.get("n_replicates")
    if kind:
        ax.set_title(f"Pareto frontier membership over {n} {kind} replicates", fontsize=10)
    ax.legend(loc="upper right", fontsize=8)
    return ax


@plain_text
def plot_statistics(
    replicates: pd.DataFrame,
    *,
    statistics: Sequence[str],
    point: pd.DataFrame | None = None,
    claims: Mapping[str, tuple[float, str]] | None = None,
    fig=None,
    columns: int = 3,
):
    """Histograms of dataset-level statistics over the replicates.

    ``replicates`` is :attr:`UncertaintyResult.replicate_statistics`; the
    point value (from ``point``, :attr:`UncertaintyResult.statistics`) is drawn
    as a black line and a quoted value (from ``claims``, e.g.
    :data:`audit.uncertainty.HOWARD_2022_CLAIMS`) as a red dashed line.
    Returns the Figure.
    """
    import matplotlib.pyplot as plt

    names = [s for s in statistics if s in replicates.columns]
    if not names:
        raise UsageError(NO_STATISTICS.format(names=list(statistics)))
    rows = int(np.ceil(len(names) / columns))
    width = min(columns, len(names))
    if fig is None:
        fig = plt.figure(figsize=(3.2 * width, 2.5 * rows), layout="constrained")
    axes = fig.subplots(rows, width, squeeze=False).ravel()
    values = point.set_index("statistic")["value"] if point is not None else {}
    for ax, name in zip(axes, names, strict=False):
        data = replicates[name].to_numpy(dtype="float64")
        data = data[np.isfinite(data)]
        ax.hist(data, bins=30, color="tab:blue", alpha=0.7)
        if name in values:
            ax.axvline(values[name], color="black", linewidth=1.2, label="point")
        if claims and name in claims:
            ax.axvline(claims[name][0], color="red", linestyle="--", linewidth=1.2, label="paper")
        ax.set_title(name, fontsize=9)
        ax.tick_params(labelsize=7)
    for ax in axes[len(names) :]:
        ax.set_visible(False)
    axes[0].legend(fontsize=7)
    return fig
