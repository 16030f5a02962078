"""Heat maps of cross-group impostor FMRs: enrolment group down, probe group across.

NISTIR 8280 draws its cross-demographic FMRs this way, on a log colour scale.
A log scale has no place for an FMR of 0: such a cell is hatched grey and
labelled 0, never left blank; a pair not measured is white and labelled
``n/a``.  Labels (algorithms, groups) are drawn as plain text, never as
mathtext.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from audit.exceptions import UnknownNameError, UsageError
from audit.report.plots import plain_text

NO_ALGORITHM = "algorithm {name!r} is not in the pairs table; it holds {names}"
NO_ALGORITHMS = "no algorithm to draw: give at least one"
MISSING_COLUMNS = "the pairs table needs the columns {needed}, got {columns}"

#: Matrices up to this many groups get their values written in the cells.
ANNOTATE_UP_TO = 10
ZERO_COLOUR = "0.82"


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


@plain_text
def pair_heatmap(
    pairs: pd.DataFrame,
    algorithm: str,
    *,
    groups: Sequence[str] | None = None,
    ax=None,
    norm=None,
    cmap: str = "viridis",
    annotate: bool | None = None,
):
    """One algorithm's pair matrix on a log colour scale; returns the Axes.

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
        Axes to draw on (default: a new figure's).
    norm
        A shared colour scale (:class:`matplotlib.colors.LogNorm`); default the
        range of this matrix's positive FMRs.
    annotate
        Write each FMR in its cell; default for up to :data:`ANNOTATE_UP_TO` groups.
    """
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    matrix = pair_matrix(pairs, algorithm, groups)
    values = matrix.to_numpy()
    n = len(matrix)
    if ax is None:
        _, ax = plt.subplots(figsize=(1.0 + 0.55 * n, 0.8 + 0.55 * n), layout="constrained")
    norm = norm if norm is not None else _norm(values)
    shown = np.ma.masked_where(~np.isfinite(values) | (values <= 0), values)
    colours = plt.get_cmap(cmap).with_extremes(bad="white")
    image = ax.imshow(shown, norm=norm, cmap=colours, interpolation="nearest")
    for i, j in zip(*np.nonzero(values == 0), strict=True):
        ax.add_patch(
            Rectangle(
                (j - 0.5, i - 0.5), 1, 1, facecolor=ZERO_COLOUR, edgecolor="0.45", hatch="///", lw=0
            )
        )
    annotate = n <= ANNOTATE_UP_TO if annotate is None else annotate
    if annotate:
        for i in range(n):
            for j in range(n):
                value = values[i, j]
                dark = np.isfinite(value) and value > 0 and norm(value) < 0.55
                ax.text(
                    j,
                    i,
                    _cell_text(value),
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if dark else "black",
                    parse_math=False,
                )
    labels = [str(g) for g in matrix.index]
    long = max(map(len, labels)) > 3
    ax.set_xticks(range(n), labels, rotation=45 if long else 0, ha="right" if long else "center")
    ax.set_yticks(range(n), labels)
    for label in (*ax.get_xticklabels(), *ax.get_yticklabels()):
        label.set_parse_math(False)
    ax.set_xlabel("probe group")
    ax.set_ylabel("enrolment group")
    ax.set_title(str(algorithm), fontsize=9, parse_math=False)
    if len(ax.figure.axes) == 1:  # a figure of its own: its colour bar
        ax.figure.colorbar(image, ax=ax, shrink=0.8).set_label("FMR (log scale)")
    return ax


@plain_text
def pair_heatmaps(
    pairs: pd.DataFrame,
    algorithms: Sequence[str],
    *,
    groups: Sequence[str] | None = None,
    ncols: int | None = None,
    cmap: str = "viridis",
):
    """The pair matrices of ``algorithms`` side by side, on one log colour scale with one
    colour bar; returns the Figure.  Zero cells hatched grey, pairs not measured white."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    algorithms = [str(a) for a in algorithms]
    if not algorithms:
        raise UsageError(NO_ALGORITHMS)
    order = _groups(pairs, groups)
    matrices = [pair_matrix(pairs, a, order) for a in algorithms]
    norm = _norm(np.concatenate([m.to_numpy().ravel() for m in matrices]))
    n = len(order)
    ncols = ncols or min(len(algorithms), 3)
    nrows = -(-len(algorithms) // ncols)
    side = 0.9 + 0.5 * n
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(side * ncols + 1.2, side * nrows + 0.9),
        layout="constrained",
        squeeze=False,
    )
    for ax, algorithm in zip(axes.ravel(), algorithms, strict=False):
        pair_heatmap(pairs, algorithm, groups=order, ax=ax, norm=norm, cmap=cmap)
    for ax in axes.ravel()[len(algorithms) :]:
        ax.set_visible(False)
    bar = fig.colorbar(axes.ravel()[0].images[0], ax=axes.ravel().tolist(), shrink=0.8)
    bar.set_label("FMR (log scale)")
    handles = [
        Patch(facecolor=ZERO_COLOUR, edgecolor="0.45", hatch="///", label="FMR = 0"),
        Patch(facecolor="white", edgecolor="0.45", label="pair not measured"),
    ]
    values = np.concatenate([m.to_numpy().ravel() for m in matrices])
    shown = [
        h
        for h, present in zip(handles, [(values == 0).any(), np.isnan(values).any()], strict=True)
        if present
    ]
    if shown:
        fig.legend(
            handles=shown, loc="outside lower center", ncols=len(shown), fontsize=8, frameon=False
        )
    return fig
