"""Heat maps of cross-group impostor FMRs: enrolment group down, probe group across.

NISTIR 8280 draws its cross-demographic FMRs this way, on a log colour scale;
here seaborn's ``heatmap`` (drawn without seaborn by :mod:`audit.report.plots.heatmap`)
with a :class:`~matplotlib.colors.LogNorm`.  A log scale has no place for an FMR of 0:
such a cell is hatched grey and labelled 0, never left blank; a pair not measured is
white and labelled ``n/a``.

The cells are sized for the page from 2 groups to 50 (NIST's demographic
summaries use 5 regions x 5 age groups x 2 sexes): each cell's FMR is written
in it in a font that fits the cell, and not written at all when that font
would be smaller than :data:`SMALLEST_FONT` (the figure's title says so).
Labels (algorithms, groups) are drawn as written
(:func:`audit.report.text.escape_mathtext`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from audit.exceptions import UnknownNameError, UsageError
from audit.report.plots import PAGE_WIDTH, fit_text, shorten_names, themed, wrap
from audit.report.text import escape_mathtext

NO_ALGORITHM = "algorithm {name!r} is not in the pairs table; it holds {names}"
NO_ALGORITHMS = "no algorithm to draw: give at least one"
MISSING_COLUMNS = "the pairs table needs the columns {needed}, got {columns}"

ZERO_COLOUR = "0.82"
#: Cells are this wide (inches) at most, and at least this wide: a matrix of many groups
#: fills :data:`MATRIX_WIDTH` with smaller cells.
LARGEST_CELL = 0.55
SMALLEST_CELL = 0.12
MATRIX_WIDTH = 6.4
#: Matrices go side by side while their cells can be at least this wide (inches).
SIDE_BY_SIDE = 0.3
#: Values are written in the cells in a font of at most this size (points) that fits the
#: cell; below :data:`SMALLEST_FONT` they are not written.
LARGEST_FONT = 8.0
SMALLEST_FONT = 5.0
NOT_WRITTEN = "FMRs not written in the cells: too small for {n} groups (see the pairs table)"
#: The longest group name a matrix's axes write whole: a longer one is shortened in its
#: middle (its start and end kept, an ellipsis between), where it took the room of the
#: matrices (a name of 90 characters left cells of a hundredth of the figure's width).
LONGEST_LABEL = 32
SHORTENED = "group names of more than {n} characters shortened (the pairs table holds them whole)"


def group_labels(groups: Sequence[str], limit: int = LONGEST_LABEL) -> list[str]:
    """The groups' names as the matrices' axes write them (:func:`shorten_names`).

    >>> group_labels(["F", "G" * 40 + "1", "G" * 40 + "2"])
    ['F', 'GGGGGGGGGGGGGGGGGGGGGG…GGGGGGGG1', 'GGGGGGGGGGGGGGGGGGGGGG…GGGGGGGG2']
    """
    return shorten_names(groups, limit)


def _groups(pairs: pd.DataFrame, groups: Sequence[str] | None) -> list[str]:
    if groups is not None:
        return [str(g) for g in groups]
    sides = np.column_stack(
        [pairs["group_1"].astype(str).to_numpy(), pairs["group_2"].astype(str).to_numpy()]
    )
    return list(dict.fromkeys(sides.ravel()))


def pair_matrix(
    pairs: pd.DataFrame, algorithm: str, groups: Sequence[str] | None = None
) -> pd.DataFrame:
    """One algorithm's FMRs from a tidy pairs frame (``algorithm``, ``group_1``,
    ``group_2``, ``fmr``): index the enrolment group, columns the probe group, NaN for
    a pair the frame does not hold."""
    needed = ["algorithm", "group_1", "group_2", "fmr"]
    if any(c not in pairs.columns for c in needed):
        raise UsageError(MISSING_COLUMNS.format(needed=needed, columns=list(pairs.columns)))
    names = pairs["algorithm"].astype(str)
    if str(algorithm) not in set(names):
        raise UnknownNameError(
            NO_ALGORITHM.format(name=algorithm, names=list(dict.fromkeys(names)))
        )
    order = _groups(pairs, groups)
    mine = pairs[names == str(algorithm)]
    matrix = (
        mine.assign(group_1=mine["group_1"].astype(str), group_2=mine["group_2"].astype(str))
        .pivot(index="group_1", columns="group_2", values="fmr")
        .reindex(index=order, columns=order)
        .astype("float64")
    )
    matrix.index.name, matrix.columns.name = "enrolment group", "probe group"
    return matrix


def _norm(values: np.ndarray):
    from matplotlib.colors import LogNorm

    positive = values[np.isfinite(values) & (values > 0)]
    if positive.size == 0:
        return LogNorm(1e-6, 1e-5)
    low, high = float(positive.min()), float(positive.max())
    if low == high:
        low, high = low / 10**0.5, high * 10**0.5
    return LogNorm(low, high)


def _cell_text(value: float) -> str:
    if np.isnan(value):
        return "n/a"
    if value == 0:
        return "0"
    if value >= 0.01:
        return f"{value:.2g}"
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


def cell_size(n_groups: int) -> float:
    """The side of a cell in inches for a matrix of ``n_groups``: the matrix fills
    :data:`MATRIX_WIDTH`, cells kept between :data:`SMALLEST_CELL` and :data:`LARGEST_CELL`.

    >>> cell_size(2), cell_size(10), cell_size(50)
    (0.55, 0.55, 0.128)
    """
    return float(np.clip(MATRIX_WIDTH / max(n_groups, 1), SMALLEST_CELL, LARGEST_CELL))


def cell_font(cell: float, texts) -> float | None:
    """The font size (points) in which the widest of ``texts`` fits a cell of ``cell``
    inches (a character of the theme's sans-serif font is at most about 0.62 em wide,
    a line 1.2 em high), at most :data:`LARGEST_FONT`; None below :data:`SMALLEST_FONT`.

    >>> cell_font(0.55, ["2.5e-5"]), cell_font(0.12, ["2.5e-5"])
    (8.0, None)
    """
    points = 72.0 * cell * 0.88
    widest = max((len(t) for t in texts), default=1)
    size = min(LARGEST_FONT, points / (0.62 * max(widest, 1)), points / 1.2)
    return size if size >= SMALLEST_FONT else None


def _tick_font(cell: float) -> float:
    """Group labels: a font that fits the cell's height, at most 9 points."""
    return float(min(9.0, 72.0 * cell * 0.8))


@themed
def pair_heatmap(
    pairs: pd.DataFrame,
    algorithm: str,
    *,
    groups: Sequence[str] | None = None,
    ax=None,
    norm=None,
    cmap: str = "viridis",
    annotate: bool | None = None,
    colorbar: bool | None = None,
    cell: float | None = None,
):
    """One algorithm's pair matrix on a log colour scale (seaborn's ``heatmap``); returns
    the Axes.

    Parameters
    ----------
    pairs
        Tidy pairs: ``algorithm``, ``group_1`` (enrolment), ``group_2`` (probe),
        ``fmr`` (:meth:`audit.tables.crossgroup.CrossGroupRates.frame`).
    algorithm
        The algorithm to draw.
    groups
        The order of the groups (default: as they first appear).
    ax
        Axes to draw on (default: a new figure's, sized by :func:`cell_size`).
    norm
        A shared colour scale (:class:`matplotlib.colors.LogNorm`); default the
        range of this matrix's positive FMRs.
    annotate
        Write each FMR in its cell (default: when a font of at least
        :data:`SMALLEST_FONT` fits the cell, :func:`cell_font`).
    colorbar
        Draw a colour bar beside the matrix (default: on a figure made here).
    cell
        The side of a cell in inches, which the fonts are chosen for (default
        :func:`cell_size`).
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    from audit.report.plots.heatmap import heatmap

    matrix = pair_matrix(pairs, algorithm, groups)
    values = matrix.to_numpy()
    n = len(matrix)
    cell = cell_size(n) if cell is None else cell
    created = ax is None
    if created:
        side = cell * n
        _, ax = plt.subplots(figsize=(side + 2.6, side + 1.9), layout="constrained")
    norm = norm if norm is not None else _norm(values)
    texts = np.vectorize(_cell_text, otypes=[object])(values) if values.size else values
    font = cell_font(cell, texts.ravel()) if values.size else None
    annotate = font is not None if annotate is None else annotate
    font = font or SMALLEST_FONT
    hidden = ~np.isfinite(values) | (values <= 0)
    labels = [escape_mathtext(g) for g in group_labels(matrix.index)]
    heatmap(
        ax,
        matrix.where(~hidden),
        norm=norm,
        cmap=cmap,
        mask=hidden,
        annot=texts if annotate else False,
        fmt="",
        annot_kws={"fontsize": font},
        square=True,
        linewidths=0.5 if cell >= 0.2 else 0.0,
        linecolor="white",
        cbar=bool(colorbar if colorbar is not None else created),
        cbar_kws={"label": "FMR (log scale)", "shrink": 0.7, "aspect": 25},
        xticklabels=labels,
        yticklabels=labels,
    )
    # masked cells: the heat map leaves them blank and unlabelled
    for i, j in zip(*np.nonzero(hidden), strict=True):
        zero = values[i, j] == 0
        if zero:
            ax.add_patch(
                Rectangle((j, i), 1, 1, facecolor=ZERO_COLOUR, edgecolor="0.45", hatch="///", lw=0)
            )
        if annotate:
            ax.text(j + 0.5, i + 0.5, "0" if zero else "n/a", ha="center", va="center",
                    fontsize=font, color="black")  # fmt: skip
    ax.set_facecolor("white")
    ax.grid(False)  # no grid line across a cell left blank
    tick = _tick_font(cell)
    long = max(map(len, labels), default=0) > 3
    ax.tick_params(axis="x", labelsize=tick, labelrotation=90 if long else 0)
    ax.tick_params(axis="y", labelsize=tick, labelrotation=0)
    ax.set_xlabel("probe group")
    ax.set_ylabel("enrolment group")
    # a long name on as many lines as its matrix is wide (at most 3, then an ellipsis),
    # measured in the title's font: on one, it ran into the next matrix's and off the figure
    ax.title.set_fontsize("medium")
    fitted = fit_text(str(algorithm), max(cell * n, 1.0), ax.title.get_fontproperties(), lines=3)
    ax.set_title(escape_mathtext(fitted), fontsize="medium")
    return ax


@themed
def pair_heatmaps(
    pairs: pd.DataFrame,
    algorithms: Sequence[str],
    *,
    groups: Sequence[str] | None = None,
    ncols: int | None = None,
    cmap: str = "viridis",
):
    """The pair matrices of ``algorithms`` side by side (as many per row as the page
    holds), on one log colour scale with one colour bar; returns the Figure.  Zero cells
    hatched grey, pairs not measured white; the title says when the cells are too small
    to hold their values."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    algorithms = [str(a) for a in algorithms]
    if not algorithms:
        raise UsageError(NO_ALGORITHMS)
    order = _groups(pairs, groups)
    matrices = [pair_matrix(pairs, a, order) for a in algorithms]
    values = np.concatenate([m.to_numpy().ravel() for m in matrices])
    norm = _norm(values)
    n = len(order)
    shown = group_labels(order)
    longest = max((len(g) for g in shown), default=1)
    labels = 0.45 + 0.62 * 9.0 * longest / 72.0  # inches of group labels, at most
    # as many matrices side by side as fit the page with cells of a readable size
    ncols = ncols or min(len(algorithms), 3)
    while ncols > 1 and (PAGE_WIDTH + 0.1 - ncols * labels) / (ncols * n) < SIDE_BY_SIDE:
        ncols -= 1
    cell = (PAGE_WIDTH + 0.1 - ncols * labels) / (ncols * n)
    cell = float(np.clip(cell, SMALLEST_CELL, LARGEST_CELL))
    panel = cell * n + labels
    nrows = -(-len(algorithms) // ncols)
    # a row: the matrix, its title, the probe-group labels (upright, or turned when long)
    # and the axis label; then the figure's title and legend
    tick = _tick_font(cell) / 72.0
    below = 0.62 * tick * longest if longest > 3 else 1.4 * tick
    legend = bool((values == 0).any() or np.isnan(values).any())
    height = (cell * n + 0.35 + below + 0.45) * nrows + 0.55 + 0.35 * legend
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(max(panel * ncols + 1.2, 5.0), height),
        layout="constrained",
        squeeze=False,
    )
    for ax, algorithm in zip(axes.ravel(), algorithms, strict=False):
        pair_heatmap(
            pairs, algorithm, groups=order, ax=ax, norm=norm, cmap=cmap, colorbar=False, cell=cell
        )
    for ax in axes.ravel()[len(algorithms) :]:
        ax.set_visible(False)
    shown_axes = axes.ravel()[: len(algorithms)].tolist()
    bar = fig.colorbar(
        shown_axes[0].collections[0], ax=shown_axes, shrink=min(0.8, 3.0 / nrows + 0.2),
        aspect=25, pad=0.02,
    )  # fmt: skip
    bar.set_label("FMR (log scale)")
    title = "Impostor FMR by enrolment group (rows) and probe group (columns)"
    texts = np.vectorize(_cell_text, otypes=[object])(values) if values.size else []
    if cell_font(cell, texts) is None:
        title += "\n" + NOT_WRITTEN.format(n=n)
    if shown != order:
        title += "\n" + SHORTENED.format(n=LONGEST_LABEL)
    fig.suptitle(wrap(title, fig.get_figwidth() - 0.3, 11.0), fontsize="medium")
    handles = [
        Patch(facecolor=ZERO_COLOUR, edgecolor="0.45", hatch="///", label="FMR = 0"),
        Patch(facecolor="white", edgecolor="0.45", label="pair not measured"),
    ]
    shown = [
        h
        for h, present in zip(handles, [(values == 0).any(), np.isnan(values).any()], strict=True)
        if present
    ]
    if shown:
        fig.legend(handles=shown, loc="outside lower center", ncols=len(shown))
    # laid out once here: constrained layout, run once from a fresh figure of square
    # matrices, gave two groups' matrices the room of the axis label below them (cut at
    # the foot of the figure); from a layout it settles (render_figure's, at its dpi)
    fig.get_layout_engine().execute(fig)
    return fig
