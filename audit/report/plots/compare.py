"""Figures of the cross-dataset audit (:mod:`audit.analysis.compare`).

* :func:`agreement_heatmap`: Kendall's tau-b between every pair of measures
  on one dataset (seaborn's ``heatmap``, a diverging scale from -1 to 1);
* :func:`rank_scatter`: for the algorithms of two datasets, each measure's
  rank on one against its rank on the other, one panel per measure;
* :func:`cross_agreement`: per measure, Kendall's tau-b and Spearman's rho
  between the two datasets' rankings, with their bootstrap intervals.

Names (measures, datasets, algorithms) come from the user's files and
modules: every text they enter is drawn as written, never as mathtext.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from audit.analysis.ranks import square
from audit.report.plots import plain_text

#: Matrices up to this many variables get their tau written in the cells.
ANNOTATE_UP_TO = 32


def _plain(*texts) -> None:
    """Draw these texts (or the texts of these Axes' tick labels) as written."""
    for text in texts:
        text.set_parse_math(False)


def _ticks(ax) -> None:
    _plain(*ax.get_xticklabels(), *ax.get_yticklabels())


@plain_text
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
        contains 0 is marked with a dot).
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

    variables = [str(v) for v in variables]
    labels = {v: str((labels or {}).get(v, v)) for v in variables}
    matrix = square(pairs, variables)
    n = len(variables)
    if ax is None:
        side = 1.6 + 0.42 * n
        _, ax = plt.subplots(figsize=(side + 1.8, side), layout="constrained")
    mask = np.triu(np.ones((n, n), dtype=bool), k=1)
    annotate = n <= ANNOTATE_UP_TO
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
        cbar_kws={"label": "Kendall's tau-b", "shrink": 0.7},
        xticklabels=[labels[v] for v in variables],
        yticklabels=[labels[v] for v in variables],
        ax=ax,
    )
    if {"low", "high"} <= set(pairs.columns):
        low, high = square(pairs, variables, "low"), square(pairs, variables, "high")
        unsure = (low.to_numpy() <= 0) & (high.to_numpy() >= 0) & ~mask
        for i, j in zip(*np.nonzero(unsure), strict=True):
            ax.plot(j + 0.85, i + 0.18, marker="o", markersize=2.5, color="0.25")
    ax.tick_params(axis="x", labelrotation=90)
    ax.tick_params(axis="y", labelrotation=0)
    _ticks(ax)
    for text in ax.texts:
        text.set_parse_math(False)
    if title:
        _plain(ax.set_title(title, fontsize=10, loc="left"))
    return ax


@plain_text
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
        ``rank_second`` (1 = fairest, or most accurate).
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

    measures = [str(m) for m in agreement["measure"]]
    by = agreement.set_index("measure")
    ncols = max(1, min(ncols, len(measures)))
    nrows = max(1, -(-len(measures) // ncols))
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(2.6 * ncols + 0.4, 2.5 * nrows + 0.8),
        layout="constrained",
        squeeze=False,
    )
    for ax, measure in zip(axes.ravel(), measures, strict=False):
        part = ranks[ranks["measure"] == measure]
        n = max(len(part), 1)
        ax.plot([1, n], [1, n], color="0.6", lw=0.8, zorder=1)
        ax.scatter(part["rank_first"], part["rank_second"], s=9, alpha=0.7, zorder=2, lw=0)
        row = by.loc[measure]
        _plain(
            ax.set_title(
                f"{row['label']}\ntau {row['kendall']:.2f}, rho {row['spearman']:.2f} (n={row['n']})",
                fontsize=8,
                loc="left",
            )
        )
        ax.set_xlim(0, n + 1)
        ax.set_ylim(0, n + 1)
        ax.set_aspect("equal")
        ax.tick_params(labelsize=7)
    for ax in axes.ravel()[len(measures) :]:
        ax.set_visible(False)
    _plain(
        fig.supxlabel(f"rank on {first} (1 = fairest)", fontsize=9),
        fig.supylabel(f"rank on {second} (1 = fairest)", fontsize=9),
    )
    return fig


@plain_text
def cross_agreement(
    agreement: pd.DataFrame, first: str, second: str, *, min_tau: float = 0.0, ax=None
):
    """Kendall's tau-b and Spearman's rho of each measure's rankings on two datasets,
    with their bootstrap intervals; measures down, the coefficient across.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    rows = agreement.reset_index(drop=True)
    n = len(rows)
    if ax is None:
        _, ax = plt.subplots(figsize=(7.0, 1.2 + 0.32 * max(n, 1)), layout="constrained")
    y = np.arange(n)
    for offset, method, marker, name in (
        (-0.15, "kendall", "o", "Kendall's tau-b"),
        (0.15, "spearman", "s", "Spearman's rho"),
    ):
        value = rows[method].to_numpy(dtype="float64")
        low = rows[f"{method}_low"].to_numpy(dtype="float64")
        high = rows[f"{method}_high"].to_numpy(dtype="float64")
        errors = np.vstack([value - low, high - value])
        errors = np.where(np.isfinite(errors), errors, 0.0)
        ax.errorbar(value, y + offset, xerr=errors, fmt=marker, ms=4, capsize=2, lw=1, label=name)
    ax.axvline(0, color="0.4", lw=0.8)
    if min_tau != 0:
        ax.axvline(min_tau, color="0.4", lw=0.8, ls="--")
    ax.set_yticks(y, [str(v) for v in rows["label"]])
    ax.invert_yaxis()
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("rank agreement across the two datasets (1: same order)")
    _ticks(ax)
    _plain(ax.set_title(f"{first} against {second}", fontsize=10, loc="left"))
    ax.legend(loc="lower left", fontsize=8, frameon=False)
    return ax


__all__ = ["agreement_heatmap", "cross_agreement", "rank_scatter"]
