"""Figures of the cross-dataset audit (:mod:`audit.analysis.compare`).

* :func:`agreement_heatmap`: Kendall's tau-b between every pair of measures
  on one dataset (seaborn's ``heatmap``, a diverging scale from -1 to 1);
* :func:`rank_scatter`: for the algorithms of two datasets, each measure's
  rank on one against its rank on the other, one panel per measure;
* :func:`cross_agreement`: per measure, Kendall's tau-b and Spearman's rho
  between the two datasets' rankings, with their bootstrap intervals.

Names (measures, datasets) come from the user's files and modules: each
enters a figure through :func:`audit.report.text.escape_mathtext` where it is
placed, so that it is drawn as written; every figure has the report's look
(:func:`audit.report.plots.themed`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from audit.analysis.compare import ACCURACY
from audit.analysis.ranks import square
from audit.report.plots import GREY, colour, themed, wrap
from audit.report.text import escape_mathtext

#: Matrices up to this many variables get their tau written in the cells.
ANNOTATE_UP_TO = 32


@themed
def agreement_heatmap(
    pairs: pd.DataFrame,
    variables: Sequence[str],
    *,
    labels: Mapping[str, str] | None = None,
    title: str = "",
    ax=None,
):
    """Kendall's tau-b between every pair of ``variables`` as a lower-triangle heat map.

    Parameters
    ----------
    pairs
        :func:`audit.analysis.ranks.agreement_matrix` (``first``, ``second``,
        ``tau``; ``low`` and ``high`` when computed: a cell whose interval
        contains 0 is marked with a dot, which the legend explains).
    variables
        The order of the rows and columns.
    labels
        Display names (default: the variables).
    title
        The figure's title, drawn as written.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt
    import seaborn as sns
    from matplotlib.lines import Line2D

    variables = [str(v) for v in variables]
    labels = {v: str((labels or {}).get(v, v)) for v in variables}
    matrix = square(pairs, variables)
    n = len(variables)
    created = ax is None
    if created:
        side = 1.6 + 0.42 * n
        _, ax = plt.subplots(figsize=(side + 1.2, side), layout="constrained")
    mask = np.triu(np.ones((n, n), dtype=bool), k=1)
    annotate = n <= ANNOTATE_UP_TO
    names = [escape_mathtext(labels[v]) for v in variables]
    sns.heatmap(
        matrix.to_numpy(),
        mask=mask,
        vmin=-1,
        vmax=1,
        cmap="vlag",
        annot=annotate,
        fmt=".2f",
        annot_kws={"fontsize": 6.5},
        square=True,
        linewidths=0.5,
        linecolor="white",
        cbar_kws={"label": "Kendall's tau-b", "shrink": 0.6, "pad": 0.01}
        | ({"fraction": COLOUR_BAR_WIDTH / (CELL * n)} if created else {}),
        xticklabels=names,
        yticklabels=names,
        ax=ax,
    )
    ax.grid(False)
    if {"low", "high"} <= set(pairs.columns):
        low, high = square(pairs, variables, "low"), square(pairs, variables, "high")
        unsure = (low.to_numpy() <= 0) & (high.to_numpy() >= 0) & ~mask
        for i, j in zip(*np.nonzero(unsure), strict=True):
            ax.plot(j + 0.85, i + 0.18, marker="o", markersize=2.5, color="0.25")
        if unsure.any():
            level = pairs.attrs.get("level")
            interval = f"{level:.0%} interval" if level else "interval"
            dot = Line2D([], [], ls="", marker="o", markersize=4, color="0.25")
            ax.legend(
                [dot],
                [f"the {interval} of tau-b contains 0"],
                loc="upper right",
                fontsize="small",
            )
    ax.tick_params(axis="x", labelrotation=90)
    ax.tick_params(axis="y", labelrotation=0)
    if created:
        _fit(ax, n, title)
    elif title:
        ax.set_title(escape_mathtext(title), fontsize="medium")
    return ax


#: The side of a cell of :func:`agreement_heatmap` (inches), and the room its figure keeps
#: beyond the cells and the labels: the colour bar and its label, and the pads.
CELL, COLOUR_BAR, PADS = 0.42, 1.3, 0.35
#: The narrowest figure of :func:`agreement_heatmap` (inches): room for its title in two
#: lines, and for the cells of two measures beside their names.
NARROWEST = 5.0
#: The width of its colour bar (inches).
COLOUR_BAR_WIDTH = 0.25


def _fit(ax, n: int, title: str) -> None:
    """Size the figure of ``ax`` to the heat map's ``n`` cells a side and its labels as
    drawn (measured by the figure's renderer), the title wrapped to the figure's width:
    the square axes then fills what the layout gives it, and no label reaches past the
    figure's edge, however long the names or few the measures.  The legend stays in the
    empty upper triangle where it fits in the top row, and goes below the figure where
    it does not."""
    from matplotlib.font_manager import FontProperties

    fig = ax.figure
    renderer = fig.canvas.get_renderer()

    def extent(texts, side: str) -> float:
        sizes = [getattr(t.get_window_extent(renderer), side) for t in texts]
        return max(sizes, default=0.0) / fig.dpi

    width = CELL * n + extent(ax.get_yticklabels(), "width") + COLOUR_BAR + PADS
    width = max(width, NARROWEST)
    height = CELL * n + extent(ax.get_xticklabels(), "height") + PADS
    legend = ax.get_legend()
    if legend is not None and extent([legend], "width") > CELL * (n - 1) - 0.1:
        handles, texts = legend.legend_handles, [t.get_text() for t in legend.get_texts()]
        legend.remove()
        legend = fig.legend(handles, texts, loc="outside lower center", fontsize="small")
        height += extent([legend], "height") + 0.1
        width = max(width, extent([legend], "width") + PADS)
    points = FontProperties(size="medium").get_size_in_points()

    def titled(width: float) -> float:  # centred on the figure: wrapped to its width
        text = fig.suptitle(escape_mathtext(wrap(title, width - PADS, points)), fontsize="medium")
        return extent([text], "height") + 0.1

    above = titled(width) if title else 0.0
    height += above
    fig.set_size_inches(width, height)
    # laid out once: the room the square axes leaves unused, on one side, is taken off
    # (a title wrapped anew to a narrower figure taking the lines it needs)
    fig.get_layout_engine().execute(fig)
    box, square = ax.get_position(original=True), ax.get_position()
    width = max(width - (box.width - square.width) * width, NARROWEST)
    height -= (box.height - square.height) * height
    if title:
        height += titled(width) - above
    fig.set_size_inches(width, height)
    # and laid out again: a text the new layout puts past an edge widens the figure
    fig.get_layout_engine().execute(fig)
    tight = fig.get_tightbbox(renderer)
    past = [max(0.0, -tight.x0) + max(0.0, tight.x1 - width)]
    past.append(max(0.0, -tight.y0) + max(0.0, tight.y1 - height))
    if any(past):
        fig.set_size_inches(width + past[0] + 0.05, height + past[1] + 0.05)


@themed
def rank_scatter(
    ranks: pd.DataFrame,
    agreement: pd.DataFrame,
    first: str,
    second: str,
    *,
    ncols: int = 4,
):
    """Each measure's rank of the shared algorithms on ``first`` against ``second``.

    Parameters
    ----------
    ranks
        ``PairComparison.ranks``: ``measure``, ``algorithm``, ``rank_first``,
        ``rank_second`` (1 = fairest, or most accurate; tied algorithms share
        their mid-rank, so a tie on one dataset draws a column or a row).
    agreement
        ``PairComparison.agreement``: ``measure``, ``label``, ``n``,
        ``kendall``, ``spearman`` (written in each panel's title).
    first, second
        The datasets' labels (the axes).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib.pyplot as plt
    from matplotlib.font_manager import FontProperties

    measures = [str(m) for m in agreement["measure"]]
    by = agreement.set_index("measure")
    ncols = max(1, min(ncols, len(measures)))
    nrows = max(1, -(-len(measures) // ncols))
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(2.6 * ncols + 0.4, 2.5 * nrows + 0.9),
        layout="constrained",
        squeeze=False,
    )
    for ax, measure in zip(axes.ravel(), measures, strict=False):
        part = ranks[ranks["measure"] == measure]
        n = max(len(part), 1)
        ax.plot([1, n], [1, n], color="0.6", lw=0.8, zorder=1)
        accuracy = measure == ACCURACY
        ax.scatter(
            part["rank_first"],
            part["rank_second"],
            s=9,
            alpha=0.7,
            zorder=2,
            lw=0,
            color=colour(GREY) if accuracy else None,
        )
        row = by.loc[measure]
        ax.set_title(
            f"{escape_mathtext(row['label'])}\n"
            f"tau {row['kendall']:.2f}, rho {row['spearman']:.2f} (n={row['n']})",
            fontsize="small",
            fontweight="normal",
        )
        pad = max(1.0, 0.03 * n)
        ax.set_xlim(1 - pad, n + pad)
        ax.set_ylim(1 - pad, n + pad)
        ax.set_aspect("equal")
        ax.tick_params(labelsize="small")
    for ax in axes.ravel()[len(measures) :]:
        ax.set_visible(False)
    fig.supxlabel(f"rank on {escape_mathtext(first)} (1 = the fairest, or the most accurate)")
    fig.supylabel(f"rank on {escape_mathtext(second)}")
    title = (
        "Each measure's ranks of the shared algorithms on the two datasets "
        "(tied algorithms share their mid-rank)"
    )
    size = FontProperties(size="medium").get_size_in_points()
    fig.suptitle(
        wrap(title, fig.get_figwidth() - 0.3, size),
        fontsize=size,
        fontweight="normal",
        x=0.01,
        ha="left",
    )
    return fig


@themed
def cross_agreement(
    agreement: pd.DataFrame, first: str, second: str, *, min_tau: float = 0.0, ax=None
):
    """Kendall's tau-b and Spearman's rho of each measure's rankings on two datasets,
    with their bootstrap intervals; measures down, the coefficient across; the accuracy
    (a measure named :data:`audit.analysis.compare.ACCURACY`), when there, last and set
    apart by a line, as the yardstick the measures are read against.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    rows = agreement.reset_index(drop=True)
    accuracy = rows["measure"].astype(str) == ACCURACY
    rows = pd.concat([rows[~accuracy], rows[accuracy]], ignore_index=True)
    n = len(rows)
    if ax is None:
        _, ax = plt.subplots(figsize=(7.0, 1.3 + 0.32 * max(n, 1)), layout="constrained")
    y = np.arange(n)
    for offset, method, marker, name in (
        (-0.15, "kendall", "o", "Kendall's tau-b"),
        (0.15, "spearman", "s", "Spearman's rho"),
    ):
        value = rows[method].to_numpy(dtype="float64")
        low = rows[f"{method}_low"].to_numpy(dtype="float64")
        high = rows[f"{method}_high"].to_numpy(dtype="float64")
        (point,) = ax.plot(value, y + offset, marker, ms=4, ls="none", label=name)
        # each interval as drawn from its bounds: a bootstrap percentile interval need not
        # hold the point value (on a few algorithms it may lie wholly to one side)
        known = np.isfinite(low) & np.isfinite(high)
        at = y[known] + offset
        ax.hlines(at, low[known], high[known], color=point.get_color(), lw=1)
        for end in (low[known], high[known]):
            ax.plot(end, at, "|", color=point.get_color(), ms=4, mew=1)
    ax.axvline(0, color="0.4", lw=0.8)
    if min_tau != 0:
        ax.axvline(min_tau, color="0.4", lw=0.8, ls="--")
    if accuracy.any() and n > 1:
        ax.axhline(n - int(accuracy.sum()) - 0.5, color="0.6", lw=0.8, ls=":")
    ax.set_yticks(y, [escape_mathtext(v) for v in rows["label"]])
    ax.invert_yaxis()
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("rank agreement across the two datasets (1: same order)")
    ax.set_title(f"{escape_mathtext(first)} against {escape_mathtext(second)}", fontsize="medium")
    ax.legend(loc="upper left", fontsize="small")
    return ax


__all__ = ["agreement_heatmap", "cross_agreement", "rank_scatter"]
