"""Figures of the cross-dataset audit (:mod:`audit.analysis.compare`).

* :func:`agreement_heatmap`: Kendall's tau-b between every pair of measures
  on one dataset (seaborn's ``heatmap``, drawn by :mod:`audit.report.plots.heatmap`, on
  seaborn's diverging ``vlag`` scale from -1 to 1);
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
from audit.report.plots import GREY, colour, renderer_of, themed, wrap
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
    ax
        Axes to draw on (default: a figure of its own, sized to the matrix, its names
        and its title; it has no layout engine and is saved cropped to what it draws).

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from audit.report.plots.colormaps import vlag
    from audit.report.plots.heatmap import heatmap

    variables = [str(v) for v in variables]
    labels = {v: str((labels or {}).get(v, v)) for v in variables}
    matrix = square(pairs, variables)
    n = len(variables)
    created = ax is None
    if created:  # sized and laid out by _place, once its texts are measured
        fig = plt.figure()
        ax, colour_bar = fig.add_axes((0.0, 0.0, 1.0, 1.0)), fig.add_axes((0.0, 0.0, 1.0, 1.0))
    mask = np.triu(np.ones((n, n), dtype=bool), k=1)
    annotate = n <= ANNOTATE_UP_TO
    names = [escape_mathtext(labels[v]) for v in variables]
    heatmap(
        ax,
        matrix.to_numpy(),
        mask=mask,
        vmin=-1,
        vmax=1,
        cmap=vlag(),
        annot=annotate,
        fmt=".2f",
        annot_kws={"fontsize": 6.5},
        square=True,
        linewidths=0.5,
        linecolor="white",
        cbar_ax=colour_bar if created else None,
        cbar_kws={"label": "Kendall's tau-b"} | ({} if created else {"shrink": 0.6, "pad": 0.01}),
        xticklabels=names,
        yticklabels=names,
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
        _place(ax, colour_bar, n, title)
    elif title:
        ax.set_title(escape_mathtext(title), fontsize="medium")
    return ax


#: The smallest side of a cell of :func:`agreement_heatmap` (inches), and the smallest
#: side of its matrix (a few measures get larger cells).
CELL, SMALLEST_MATRIX = 0.42, 2.5
#: Its colour bar: width, gap to the matrix, and room for its numbers (inches).
COLOUR_BAR_WIDTH, COLOUR_BAR_GAP, COLOUR_BAR_NUMBERS = 0.2, 0.15, 0.6
#: The gap between the matrix and the texts around it (inches).
GAP = 0.12


def _place(ax, colour_bar, n: int, title: str) -> None:
    """Size and place the heat map of :func:`agreement_heatmap` on its own figure, from
    its texts as drawn (measured by the figure's renderer): each cell at least
    :data:`CELL` a side and as tall as a name's lines, the names beside and below, the
    colour bar to the right, the title above, wrapped to the width of all that and
    centred on it, and the legend in the empty upper triangle where it fits in the top
    row, below the names where it does not.  The figure has no layout engine: it is
    saved cropped to what it draws (``bbox_inches="tight"``), and no text is cut
    whatever its length."""
    from matplotlib.font_manager import FontProperties

    fig = ax.figure
    renderer = renderer_of(fig)

    def size(text) -> tuple[float, float]:  # (width, height) in inches, as drawn
        box = text.get_window_extent(renderer)
        return box.width / fig.dpi, box.height / fig.dpi

    rows = [size(t) for t in ax.get_yticklabels() if t.get_text()]
    columns = [size(t) for t in ax.get_xticklabels() if t.get_text()]  # turned upright
    # a cell as tall as a name's lines (a column's name, turned, as wide)
    cell = max(CELL, SMALLEST_MATRIX / max(n, 1), max((h for _, h in rows), default=0) + 0.05)
    side = cell * max(n, 1)
    offset = 0.0  # a name's offset from the matrix
    if n:
        tick = ax.xaxis.get_major_ticks()[0]
        offset = (tick.get_tick_padding() + tick.get_pad()) / 72
    names = max((w for w, _ in rows), default=0.0) + offset + GAP  # left of the matrix
    bar = min(side, max(0.6 * side, SMALLEST_MATRIX))
    width = names + side + COLOUR_BAR_GAP + COLOUR_BAR_WIDTH + COLOUR_BAR_NUMBERS
    width += size(colour_bar.yaxis.label)[0]
    bottom = max((h for _, h in columns), default=0.0) + offset + GAP  # the matrix's edge
    legend, below = ax.get_legend(), None  # in the top row, or below the column names
    if legend is not None:
        wide, high = size(legend)
        if wide > cell * (n - 1) - 0.1 or high > cell - 0.05:
            texts = [t.get_text() for t in legend.get_texts()]
            below = fig.legend(legend.legend_handles, texts, loc="lower center", fontsize="small")
            legend.remove()
            bottom += high + 2 * GAP  # (and the legend's own pad)
    height = bottom + side
    heading = None
    if title:
        points = FontProperties(size="medium").get_size_in_points()
        text = escape_mathtext(wrap(title, width, points))
        heading = fig.suptitle(text, ha="center", va="bottom", fontsize="medium")
        height += GAP + size(heading)[1]
    fig.set_size_inches(width, height)
    ax.set_position((names / width, bottom / height, side / width, side / height))
    colour_bar.set_position(
        (
            (names + side + COLOUR_BAR_GAP) / width,
            (bottom + (side - bar) / 2) / height,
            COLOUR_BAR_WIDTH / width,
            bar / height,
        )
    )
    if heading is not None:
        heading.set_position((0.5, (bottom + side + GAP) / height))
    if below is not None:  # centred under the matrix
        below.set_bbox_to_anchor(((names + side / 2) / width, 0.0), fig.transFigure)


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
    title = (  # the pair named: the figures of several pairs are told apart by it
        f"{escape_mathtext(first)} against {escape_mathtext(second)}: each measure's ranks "
        "of the shared algorithms (tied algorithms share their mid-rank)"
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
