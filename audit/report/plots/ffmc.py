"""The four FFMC panels of Howard et al. Figs. 1-3, for any measure.

Each function takes the tidy frames of :func:`audit.analysis.ffmc.ffmc1` --
``detail`` (one row per algorithm and alpha: ``value``, ``fmr_term``,
``fnmr_term``, ``share``) and ``by_alpha`` (one row per alpha) -- and an
optional ``ax``; it returns the Axes (or, for :func:`ffmc_panels`, the
Figure), imports matplotlib lazily and never shows.

(A) :func:`plot_distribution` -- distribution of the measure at alpha 0.5;
(B) :func:`plot_terms` -- magnitudes of the A and B terms (log axis when the
    bulk of them spans more than two decades);
(C) :func:`plot_alpha_range` -- range and quartiles of the measure vs alpha;
(D) :func:`plot_alpha_share` -- relative contribution of the alpha term vs alpha.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from audit.report.plots import (
    BLUE,
    GREY,
    PAGE_WIDTH,
    SKY,
    VERMILION,
    colour,
    fit_text,
    shorten_names,
    themed,
)
from audit.report.text import escape_mathtext

#: Panel B uses a log axis when the bulk of the terms (5th to 95th percentile of
#: both together) spans more decades than this.
LOG_DECADES = 2.0


def _axes(ax):
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots()
    return ax


def _at_alpha(detail: pd.DataFrame, alpha: float) -> pd.DataFrame:
    alphas = detail["alpha"].to_numpy()
    nearest = alphas[np.argmin(np.abs(alphas - alpha))]
    return detail[detail["alpha"] == nearest]


def _histogram_bins(values: np.ndarray, bins: int) -> dict:
    """``bins`` and ``range`` for :meth:`~matplotlib.axes.Axes.hist` that work for any values.

    Values equal to within a few ulps (a few algorithms, a measure that barely
    varies) cannot be cut into ``bins`` finite bins; they get one bar of a visible
    width around their centre instead of numpy's "Too many bins for data range".
    """
    if len(values) == 0:
        return {"bins": bins}
    try:
        np.histogram_bin_edges(values, bins=bins)
    except ValueError:
        centre = float(np.mean([values.min(), values.max()]))
        half = max(abs(centre) * 1e-6, float(values.max() - values.min()), 1e-12)
        return {"bins": 1, "range": (centre - half, centre + half)}
    return {"bins": bins}


@themed
def plot_distribution(
    detail: pd.DataFrame, *, alpha: float = 0.5, label: str = "value", bins: int = 20, ax=None
):
    """Panel A: histogram of the measure over algorithms at ``alpha``."""
    ax = _axes(ax)
    values = _at_alpha(detail, alpha)["value"].to_numpy(dtype="float64")
    finite = values[np.isfinite(values)]
    ax.hist(finite, color=colour(BLUE), edgecolor="white", **_histogram_bins(finite, bins))
    ax.set_xlabel(f"{escape_mathtext(label)} at alpha = {alpha:g}")
    ax.set_ylabel("algorithms")
    missing = len(values) - len(finite)
    title = "A. Distribution" + (f" ({missing} undefined, not drawn)" if missing else "")
    ax.set_title(title)
    return ax


@themed
def plot_terms(detail: pd.DataFrame, *, alpha: float = 0.5, ax=None):
    """Panel B: the A (FMR) and B (FNMR) terms over algorithms, log axis if they span decades.

    A box per term (whiskers at 1.5 IQR) over the algorithms as points, spread
    sideways by a fixed jitter (the same figure every time).  On the log axis,
    terms of 0 cannot be drawn; their number is said under the axis.
    """
    ax = _axes(ax)
    rows = _at_alpha(detail, alpha)
    series = [
        ("A (FMR term)", rows["fmr_term"].to_numpy(dtype="float64")),
        ("B (FNMR term)", rows["fnmr_term"].to_numpy(dtype="float64")),
    ]
    series = [(name, v[np.isfinite(v)]) for name, v in series if np.isfinite(v).any()]
    positive = np.concatenate([v[v > 0] for _, v in series]) if series else np.array([])
    log = False
    if len(positive) > 0:
        low, high = np.percentile(positive, [5, 95])
        log = bool(np.log10(high / low) > LOG_DECADES)
    shown = [(name, v[v > 0] if log else v) for name, v in series]
    hidden = sum(len(v) for _, v in series) - sum(len(v) for _, v in shown)
    colours = [colour(BLUE), colour(VERMILION)]
    rng = np.random.default_rng(0)  # fixed jitter: the same figure every time
    for i, (_, values) in enumerate(shown):
        if not len(values):
            continue
        ax.boxplot(
            [values],
            positions=[i],
            widths=0.5,
            showfliers=False,
            patch_artist=True,
            boxprops={"facecolor": colours[i], "alpha": 0.3},
            medianprops={"color": "black"},
        )
        ax.scatter(
            i + rng.uniform(-0.17, 0.17, len(values)),
            values,
            s=7,
            alpha=0.6,
            color=colours[i],
            linewidths=0,
            zorder=3,
        )
    ax.set_xticks(range(len(shown)), [name for name, _ in shown])
    ax.set_xlim(-0.6, len(shown) - 0.4)
    if log:
        ax.set_yscale("log")
    ax.set_xlabel(f"{hidden} terms of 0 not drawn on the log axis" if hidden else "")
    ax.set_ylabel("term value" + (" (log scale)" if log else ""))
    ax.set_title("B. Size of the two terms")
    return ax


@themed
def plot_alpha_range(by_alpha: pd.DataFrame, *, label: str = "value", ax=None):
    """Panel C: min-max range, quartiles and median of the measure against alpha."""
    ax = _axes(ax)
    alpha = by_alpha["alpha"].to_numpy()
    ax.fill_between(
        alpha,
        by_alpha["value_min"],
        by_alpha["value_max"],
        color=colour(SKY),
        alpha=0.3,
        linewidth=0,
        label="min-max",
    )
    ax.fill_between(
        alpha,
        by_alpha["value_q25"],
        by_alpha["value_q75"],
        color=colour(BLUE),
        alpha=0.45,
        linewidth=0,
        label="quartiles",
    )
    ax.plot(alpha, by_alpha["value_median"], color="black", label="median")
    ax.set_xlabel("alpha")
    ax.set_ylabel(escape_mathtext(label))
    ax.set_title("C. Range over alpha")
    ax.legend(loc="best")
    return ax


@themed
def plot_alpha_share(by_alpha: pd.DataFrame, *, crossing: float | None = None, ax=None):
    """Panel D: relative contribution of the alpha (FMR) term against alpha.

    ``crossing`` (e.g. ``ffmc1(...).summary["crossing_alpha"]``) is marked, its value
    written beside the line on the side with room, inside the axes.
    """
    ax = _axes(ax)
    alpha = by_alpha["alpha"].to_numpy()
    ax.fill_between(
        alpha,
        by_alpha["share_q25"],
        by_alpha["share_q75"],
        color=colour(BLUE),
        alpha=0.35,
        linewidth=0,
        label="quartiles",
    )
    ax.plot(alpha, by_alpha["share_median"], color="black", label="median")
    ax.plot(alpha, by_alpha["share_mean"], color="black", linestyle="--", label="mean")
    ax.axhline(0.5, color=colour(GREY), linewidth=0.8)
    if crossing is not None and np.isfinite(crossing):
        ax.axvline(crossing, color=colour(VERMILION), linestyle=":", linewidth=1.0)
        right = crossing <= 0.5 * (alpha.min() + alpha.max())
        ax.annotate(
            f"median passes 1/2\nat alpha = {crossing:.2f}",
            (crossing, 0.5),
            xytext=(6 if right else -6, -10),
            textcoords="offset points",
            ha="left" if right else "right",
            va="top",
            color=colour(VERMILION),
            fontsize="small",
        )
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("alpha")
    ax.set_ylabel("share of the FMR (alpha) term")
    ax.set_title("D. Contribution of the FMR term")
    ax.legend(loc="upper left")
    return ax


#: The longest measure label the panels' axes write whole (:func:`shorten_names`): the
#: longest built-in one (27 characters) fits panel C's height.
LONGEST_AXIS_LABEL = 28


@themed
def ffmc_panels(
    detail: pd.DataFrame,
    by_alpha: pd.DataFrame,
    *,
    label: str = "value",
    crossing: float | None = None,
    alpha: float = 0.5,
):
    """The four panels A-D of Howard et al. Figs. 1-3 for one measure, as one Figure."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(PAGE_WIDTH, 6.4), layout="constrained")
    # on an axis a long label is shortened (:data:`LONGEST_AXIS_LABEL`), over the panels
    # it takes two lines at most: a user's measure labelled with 90 characters ran its
    # axis labels into the next panels and its title off the figure
    short = shorten_names([label], LONGEST_AXIS_LABEL)[0]
    plot_distribution(detail, alpha=alpha, label=short, ax=axes[0, 0])
    plot_terms(detail, alpha=alpha, ax=axes[0, 1])
    plot_alpha_range(by_alpha, label=short, ax=axes[1, 0])
    plot_alpha_share(by_alpha, crossing=crossing, ax=axes[1, 1])
    title = fig.suptitle(escape_mathtext(label))
    fitted = fit_text(str(label), PAGE_WIDTH - 0.4, title.get_fontproperties(), lines=2)
    title.set_text(escape_mathtext(fitted))
    return fig
