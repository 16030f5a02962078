"""Figures of uncertainty: interval (forest) plots, frontier membership probability,
replicate statistics.

Each function takes the tidy frames of :class:`audit.uncertainty.UncertaintyResult`
(and an optional ``ax`` or ``fig``), imports matplotlib lazily, returns the
Axes or Figure, and never shows; the caller saves.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from audit.analysis.pareto import ACCURACY_LABELS
from audit.exceptions import UsageError
from audit.measures.registry import get_measure
from audit.report.plots import (
    BLUE,
    PAGE_WIDTH,
    VERMILION,
    colour,
    root_figure,
    shorten_names,
    text_width,
    themed,
    width_inches,
    wrap,
)
from audit.report.plots.colormaps import colormap
from audit.report.plots.pareto import LABEL_ALL_UP_TO, frontier_colour, log_accuracy, place_labels
from audit.report.text import escape_mathtext
from audit.uncertainty.claims import fairness_words
from audit.validation import Integer, optional, validate_params

NO_ROWS = "no intervals for measure {measure!r}; measures present: {present}"
NO_STATISTICS = "none of the statistics {names} is in the replicate table"


#: An interval plot names every algorithm up to this many; above, the :data:`ENDS` fairest
#: and the :data:`ENDS` least fair.
FOREST_ALL_UP_TO = 30
ENDS = 15


def _label(measure: str) -> str:
    """A measure's label as a figure draws it (a user's measure: as written)."""
    try:
        return escape_mathtext(get_measure(measure).label)
    except KeyError:
        return escape_mathtext(measure)


#: The longest algorithm name a forest plot writes whole (:func:`shorten_names`): one
#: of 100 characters pushed the plot off its figure.  The intervals' table holds it.
LONGEST_NAME = 40


@themed
@validate_params(top=optional(Integer(1)))
def plot_intervals(
    intervals: pd.DataFrame,
    *,
    measure: str,
    ax=None,
    top: int | None = None,
    few: int = FOREST_ALL_UP_TO,
    ends: int = ENDS,
):
    """A forest plot of one measure: point value and replicate interval per algorithm,
    sorted from the fairest (top) to the least fair, every row named.

    Up to ``few`` algorithms, every one is drawn; above, the ``ends`` fairest and
    the ``ends`` least fair, the rows between left out and the title saying so
    (``top``: the ``top`` fairest only).  Algorithms whose value is undefined
    are not ranked and are counted in the title.  The interval is a bar from
    ``low`` to ``high`` and the point value a dot: with censored data (the
    Annex 15 floor) the dot may lie outside its bar, which is the finding, not
    a drawing error.

    Parameters
    ----------
    intervals
        :attr:`UncertaintyResult.intervals` (columns ``measure``, ``algorithm``,
        ``value``, ``low``, ``high``).
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
    defined = rows[np.isfinite(rows["value"].to_numpy(dtype="float64"))]
    undefined = len(rows) - len(defined)
    ranked = defined.sort_values(
        ["value", "algorithm"], ascending=[not fairer_high, True], kind="stable"
    )
    n = len(ranked)
    gap = False
    if top is not None:
        shown = ranked.head(top)
        which = f"the {len(shown)} fairest of {n} algorithms"
    elif n <= few:
        shown = ranked
        which = f"{n} algorithms"
    else:
        shown = pd.concat([ranked.head(ends), ranked.tail(ends)])
        gap = True
        which = f"the {ends} fairest and the {ends} least fair of {n} algorithms"
    if undefined:
        which += f" ({undefined} undefined, not ranked)"
    created = ax is None
    if created:
        height = 1.4 + 0.2 * (len(shown) + (1.5 if gap else 0))
        _, ax = plt.subplots(figsize=(PAGE_WIDTH * 0.85, max(3.0, height)), layout="constrained")
    # rows from the top; the left-out middle is a blank row and a dotted line
    position = np.arange(len(shown), dtype="float64")
    if gap:
        position[ends:] += 1.5
    y = -position
    level = int(round(100 * intervals.attrs.get("level", rows.attrs.get("level", 0.95))))
    ax.hlines(
        y,
        shown["low"],
        shown["high"],
        color=colour(BLUE),
        linewidth=2.5,
        alpha=0.7,
        label=f"{level}% interval",
    )
    ax.plot(shown["value"], y, "o", color="black", markersize=3.5, label="point value")
    names = shorten_names(shown["algorithm"], LONGEST_NAME)
    ax.set_yticks(y, [escape_mathtext(a) for a in names], fontsize="small")
    ax.set_ylim(y.min() - 0.8 if len(y) else -1.0, 0.8)
    if not n:  # every value undefined: said in the panel, no axis of no values
        ax.text(0.5, 0.5, f"undefined for every algorithm ({undefined})", transform=ax.transAxes,
                ha="center", va="center", fontsize="small", color="0.35")  # fmt: skip
        ax.set_xticks([])
    if gap:
        middle = -(ends + 0.25)
        ax.axhline(middle, color="0.6", linestyle=":", linewidth=1.0)
        ax.annotate(
            f"{n - 2 * ends} algorithms not shown",
            (0.5, middle),
            xycoords=("axes fraction", "data"),
            ha="center",
            va="center",
            fontsize="small",
            color="0.35",
            bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "edgecolor": "none"},
        )
    ax.grid(axis="y", visible=False)
    fairer = "higher" if fairer_high else "lower"
    ax.set_xlabel(f"{_label(measure)} ({fairer} is fairer)")
    if len(shown):
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncols=2, fontsize="small")
    kind = rows.attrs.get("kind") or intervals.attrs.get("kind")
    title = f"{_label(measure)}, fairest on top: {which}"
    if kind:
        title += f"; {kind} uncertainty"
    if names != [str(a) for a in shown["algorithm"]]:
        title += f"; names of more than {LONGEST_NAME} characters shortened"
    width = width_inches(ax.figure) * ax.get_position().width
    if len(shown):  # no wider than the axes will be once laid out beside their names
        font = ax.get_yticklabels()[0].get_fontproperties()
        names_width = max(text_width(name, font) for name in names)
        width = min(width, width_inches(ax.figure) - names_width - 0.25)
    ax.set_title(wrap(title, width, 11.0), fontsize="medium", pad=24)
    return ax


@themed
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
    (``on_frontier``) is joined by a line; algorithms with a probability of at
    least ``annotate`` are named, every one when there are at most
    :data:`audit.report.plots.pareto.LABEL_ALL_UP_TO` (labels placed by
    :func:`audit.report.plots.pareto.place_labels`: call this last).  Returns ``ax``.
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
        color=frontier_colour(),
        linewidth=1.2,
        zorder=2,
        label="frontier (point rates)",
    )
    points = ax.scatter(
        xs,
        ys,
        c=probability,
        s=12.0 + 80.0 * probability,
        cmap=colormap(cmap),
        vmin=0.0,
        vmax=1.0,
        edgecolors="black",
        linewidths=0.3,
        zorder=3,
    )
    if colorbar:
        bar = ax.figure.colorbar(points, ax=ax, shrink=0.7, aspect=25, pad=0.02)
        bar.set_label("frontier membership probability")
    if annotate is not None:
        few = len(frontier) <= LABEL_ALL_UP_TO
        named = frontier if few else frontier[frontier["frontier_probability"] >= annotate]
        root_figure(ax.figure).draw_without_rendering()  # laid out: labels go in display space
        place_labels(
            ax,
            [f"{r.algorithm} ({r.frontier_probability:.2f})" for r in named.itertuples()],
            named[x],
            named[y],
            avoid=np.column_stack([xs, ys]),
            radius=6.0,
        )
    return ax


@themed
def plot_frontier_probability(
    frontier: pd.DataFrame, *, ax=None, logx: bool | None = None, **options
):
    """Accuracy/fairness scatter coloured by frontier membership probability.

    ``frontier`` is :attr:`UncertaintyResult.frontier`; ``options`` go to
    :func:`add_frontier_probability`.  ``logx``: log scale for the accuracy
    axis; ``None`` (the default) follows the Pareto figure's rule
    (:func:`audit.report.plots.pareto.log_accuracy`: more than a decade).
    Returns the Axes.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(PAGE_WIDTH, 5.6), layout="constrained")
    x = options.get("x", "total_fnmr")
    log = log_accuracy(frontier[x]) if logx is None else bool(logx)
    if log:
        ax.set_xscale("log")
    measure = str(frontier["measure"].iloc[0]) if "measure" in frontier.columns else "fairness"
    weights = escape_mathtext(frontier.attrs.get("weights", "equal"))
    axis = escape_mathtext(ACCURACY_LABELS.get(x, x))
    ax.set_xlabel(f"{axis} ({weights} weights; lower is better{', log scale' if log else ''})")
    # the measure as computed: its FMR term alone on an FMR-only table
    shown = (
        escape_mathtext(fairness_words(frontier.attrs))
        if frontier.attrs.get("fairness") == measure
        else _label(measure)
    )
    try:
        fairer = "higher" if get_measure(measure).higher_is_fairer else "lower"
        ax.set_ylabel(f"{shown}, {fairer} is fairer")
    except KeyError:
        ax.set_ylabel(shown)
    kind = frontier.attrs.get("kind")
    n = frontier.attrs.get("n_replicates")
    level = int(round(100 * frontier.attrs.get("level", 0.95)))
    title = "Pareto frontier membership"
    if kind:
        title += f" over {n} {kind} replicates"
    ax.set_title(
        f"{title}.\nLine: the frontier of the point rates; grey bars: {level}% intervals",
        fontsize="medium",
        fontweight="normal",
    )
    add_frontier_probability(ax, frontier, **options)
    return ax


#: Dataset-level statistics of :attr:`UncertaintyResult.statistics` in words, by the part
#: of the name after the measure (``garbe.fmr_term.median``: ``fmr_term.median``).
STATISTIC_WORDS = {
    "min": "lowest {m}",
    "q05": "5th percentile of {m}",
    "median": "median {m}",
    "q95": "95th percentile of {m}",
    "max": "highest {m}",
    "fmr_term.median": "median FMR term of {m}",
    "fmr_term.max": "highest FMR term of {m}",
    "fnmr_term.median": "median FNMR term of {m}",
    "fnmr_term.max": "highest FNMR term of {m}",
    "undefined": "algorithms with {m} undefined",
    "crossing.median": "alpha where the median share of {m}'s FMR term passes 1/2",
    "crossing.mean": "alpha where the mean share of {m}'s FMR term passes 1/2",
}
FRONTIER_SIZE = "algorithms on the Pareto frontier"


def statistic_words(name: str) -> str:
    """A dataset-level statistic in words, for a figure's title (the measure's label as
    written).

    >>> statistic_words("garbe.fmr_term.median"), statistic_words("frontier.size")
    ('median FMR term of GARBE', 'algorithms on the Pareto frontier')
    """
    if name == "frontier.size":
        return FRONTIER_SIZE
    for suffix in sorted(STATISTIC_WORDS, key=len, reverse=True):
        if name.endswith(f".{suffix}"):
            measure = name[: -len(suffix) - 1]
            return STATISTIC_WORDS[suffix].format(m=_label(measure))
    return escape_mathtext(name)


#: The opacity of a histogram's bars: seaborn's ``histplot`` default for filled bars.
BAR_ALPHA = 0.75


def histogram(ax, data, *, discrete: bool, bins="auto", binrange=None, color=None):
    """Draw a histogram of ``data`` into ``ax`` as seaborn's ``histplot(x=data,
    discrete=..., bins=..., binrange=..., color=..., edgecolor="white",
    linewidth=0.3)`` draws it: the same bins (one per whole number when ``discrete``,
    else numpy's edges for ``bins`` over ``binrange``), bars of the colour at
    :data:`BAR_ALPHA` standing on the axis (without ``color``, the axes' next colour,
    as seaborn takes it), and "Count" on the y axis -- without importing seaborn, whose
    import of scipy.stats costs about half a second in each process that draws.
    ``tests/test_plots_theme.py`` checks the bars against seaborn's own. Returns the
    bars."""
    from matplotlib.colors import to_rgba

    data = np.asarray(data, dtype="float64")
    if len(data) == 0:
        return []
    if color is None:  # the colour a bar drawn now would have: the cycle moves on
        scout = ax.bar([np.nan], [np.nan])
        color = scout.patches[0].get_facecolor()
        scout.remove()
    start, stop = (data.min(), data.max()) if binrange is None else binrange
    if discrete:
        edges = np.arange(start - 0.5, stop + 1.5)
    else:
        edges = np.histogram_bin_edges(data, bins, binrange)
    counts, edges = np.histogram(data, bins=len(edges) - 1, range=(edges.min(), edges.max()))
    bars = ax.bar(
        edges[:-1],
        counts,
        np.diff(edges),
        align="edge",
        facecolor=to_rgba(color, BAR_ALPHA),
        edgecolor="white",
        linewidth=0.3,
    )
    for bar in bars:
        bar.sticky_edges.y[:] = (0, np.inf)
    ax.set_ylabel("Count")
    return bars


@themed
def plot_statistics(
    replicates: pd.DataFrame,
    *,
    statistics: Sequence[str],
    point: pd.DataFrame | None = None,
    claims: Mapping[str, tuple[float, str]] | None = None,
    fig=None,
    columns: int = 3,
):
    """Histograms (:func:`histogram`, as seaborn's ``histplot`` draws them) of
    dataset-level statistics over the replicates, one panel each, titled in words
    (:func:`statistic_words`).

    ``replicates`` is :attr:`UncertaintyResult.replicate_statistics`; the point
    value (from ``point``, :attr:`UncertaintyResult.statistics`) is drawn as a
    black line and a quoted value (from ``claims``, e.g.
    :data:`audit.uncertainty.HOWARD_2022_CLAIMS`) as a dashed line.  A
    statistic taking whole numbers only (the frontier size) gets one bar per
    number.  Returns the Figure.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    names = [s for s in statistics if s in replicates.columns]
    if not names:
        raise UsageError(NO_STATISTICS.format(names=list(statistics)))
    rows = int(np.ceil(len(names) / columns))
    width = min(columns, len(names))
    if fig is None:
        fig = plt.figure(figsize=(PAGE_WIDTH * width / 3, 0.4 + 2.3 * rows), layout="constrained")
    axes = fig.subplots(rows, width, squeeze=False).ravel()
    values = point.set_index("statistic")["value"] if point is not None else {}
    for ax, name in zip(axes, names, strict=False):
        data = replicates[name].to_numpy(dtype="float64")
        data = data[np.isfinite(data)]
        whole = len(data) > 0 and bool(np.all(data == np.round(data)))
        # bars wide enough to see beside the point and quoted values (a statistic that
        # barely varies is one bar, not a hairline)
        marks = [float(values[name])] if name in values else []
        marks += [float(claims[name][0])] if claims and name in claims else []
        span = np.ptp(np.concatenate([data, marks])) if len(data) else 0.0
        bins, binrange = "auto", None
        if not whole and len(data):
            step = max(np.ptp(data) / 15, span / 40) or max(abs(data[0]) * 0.01, 1e-9)
            bins = max(1, int(np.ceil(np.ptp(data) / step)))
            low = data.min() - (step / 2 if np.ptp(data) == 0 else 0.0)
            binrange = (low, low + bins * step)
        histogram(ax, data, discrete=whole, bins=bins, binrange=binrange, color=colour(BLUE))
        ax.yaxis.set_major_locator(MaxNLocator(4, integer=True))
        if name in values:
            ax.axvline(values[name], color="black", linewidth=1.3, label="point value")
        if claims and name in claims:
            ax.axvline(
                claims[name][0],
                color=colour(VERMILION),
                linestyle="--",
                linewidth=1.3,
                label="the paper's value",
            )
        ax.set_title(
            textwrap.fill(statistic_words(name), 30), fontsize="small", fontweight="normal"
        )
        ax.set_ylabel("replicates" if ax in axes[::width] else "")
        ax.xaxis.set_major_locator(MaxNLocator(4, integer=whole))
        ax.tick_params(labelsize="small")
    for ax in axes[len(names) :]:
        ax.set_visible(False)
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1 : len(names)]:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    if handles:
        fig.legend(handles, labels, loc="outside lower center", ncols=len(handles))
    return fig
