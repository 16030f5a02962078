"""Figures of score-level results: measures across operating points, per-group DET curves.

Compute and draw apart: the data come from :func:`audit.analysis.sweeps.sweep_measures`
and :func:`audit.scores.det_points`; these functions only draw.
:func:`sweep_figure` and :func:`det_figure` are the report's figures (one panel
per measure, one per system); :func:`measure_vs_operating_point` and
:func:`det_curves` draw one panel.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from audit.measures.registry import get_measure
from audit.report.plots import (
    PAGE_WIDTH,
    fit_text,
    palette,
    renderer_of,
    text_width,
    themed,
    wrap,
)
from audit.report.text import escape_mathtext

#: Panels per row of the report's score figures.
COLUMNS = 3
#: Line styles that tell apart groups (or systems) beyond the palette's ten colours.
_STYLES = ["-", "--", ":", "-."]


def _grouping(grouping: str | None, n_groups: int | None) -> str:
    """``3 groups by gender``; a score file's own group column reads ``3 groups``."""
    count = f"{n_groups} groups" if n_groups is not None else "groups"
    if grouping in (None, "", "group"):
        return count
    return f"{count} by {escape_mathtext(grouping)}"


@themed
def measure_vs_operating_point(swept: pd.DataFrame, measure: str = "garbe", *, ax=None):
    """A measure against the attained pooled FMR, one line per algorithm (Chouchane et al., Fig. 6).

    ``swept``: the output of :func:`audit.analysis.sweeps.sweep_measures`.  Returns the Axes.
    """
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, NullFormatter

    if ax is None:
        _, ax = plt.subplots(figsize=(PAGE_WIDTH * 0.6, 3.6), layout="constrained")
    part = swept[swept["measure"] == measure]
    colours = palette()
    for i, (algorithm, rows) in enumerate(part.groupby("algorithm", sort=False)):
        rows = rows.sort_values("target_fmr")
        # undefined points (e.g. IR with a group at FMR 0) are gaps, not values
        value = rows["value"].where(~rows["undefined"].astype(bool))
        ax.plot(
            rows["target_fmr"] * 100,
            value,
            marker=".",
            label=escape_mathtext(algorithm),
            # ten colours, then the same colours dashed: no two systems look alike
            color=colours[i % len(colours)],
            linestyle=_STYLES[(i // len(colours)) % len(_STYLES)],
        )
    ax.set_xscale("log")
    shown = part["value"].where(~part["undefined"].astype(bool)).to_numpy(dtype=float)
    if len(part) and not np.isfinite(shown).any():
        # nothing to draw (e.g. IR with a group at FMR 0 at every threshold): said, over
        # the targets swept, where the panel was blank over an axis of its own making
        low, high = part["target_fmr"].min() * 100, part["target_fmr"].max() * 100
        ax.set_xlim(low / 1.25, high * 1.25)
        ax.set_yticks([])
        ax.text(0.5, 0.5, "undefined at every\ntarget FMR", transform=ax.transAxes,
                ha="center", va="center", color="0.4")  # fmt: skip
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("target FMR (%)")
    label = escape_mathtext(get_measure(measure).label)
    fairer = "higher" if get_measure(measure).higher_is_fairer else "lower"
    ax.set_ylabel(f"{label} ({fairer} is fairer)")
    ax.legend(title="system")
    return ax


#: Measures not in the sweep named in the sweep figure's title (the rest counted).
_NAMED = 3


@themed
def sweep_figure(
    swept: pd.DataFrame,
    measures,
    *,
    grouping: str | None = None,
    n_groups: int | None = None,
):
    """The report's figure of measures across operating points: one panel per measure
    (:func:`measure_vs_operating_point`), :data:`COLUMNS` to a row, one legend of the
    systems below.  ``grouping`` and ``n_groups`` name the groups in the title, which
    also names the measures asked for and not in ``swept`` (a score measure, or one the
    rates do not allow: an FNMR measure of non-mated scores), so that none is left out
    without a word.  Returns the Figure."""
    import matplotlib.pyplot as plt

    present = set(swept["measure"])
    measures = list(dict.fromkeys(measures))  # each measure once
    missing = [m for m in measures if m not in present]
    measures = [m for m in measures if m in present]
    ncols = max(1, min(COLUMNS, len(measures)))
    nrows = max(1, -(-len(measures) // ncols))
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(PAGE_WIDTH * ncols / COLUMNS + 0.4, 0.9 + 2.5 * nrows),
        layout="constrained",
        squeeze=False,
    )
    for ax, measure in zip(axes.ravel(), measures, strict=False):
        measure_vs_operating_point(swept, measure, ax=ax)
        ax.set_ylabel("")
        spec = get_measure(measure)
        fairer = "higher" if spec.higher_is_fairer else "lower"
        ax.set_title(f"{escape_mathtext(spec.label)} ({fairer} is fairer)", fontsize="medium")
        ax.get_legend().remove()
    for ax in axes.ravel()[len(measures) :]:
        ax.set_visible(False)
    title = (
        "Fairness measures as the threshold moves, "
        f"{_grouping(grouping, n_groups)}; threshold set at each target FMR (pooled)"
    )
    if missing:  # a few named, so that the title leaves the panels their room
        named = ", ".join(escape_mathtext(m) for m in missing[:_NAMED])
        more = f" and {len(missing) - _NAMED} more" if len(missing) > _NAMED else ""
        title += f"; not in the sweep of these scores: {named}{more}"
    if not measures:
        ax = axes.ravel()[0]
        ax.set_visible(True)
        ax.set_axis_off()
        ax.text(0.5, 0.5, "no measure to draw", ha="center", va="center", color="0.4")
    fig.suptitle(wrap(title, fig.get_figwidth() - 0.3, 11.0), fontsize="medium")
    if measures:
        _legend(fig, *axes.ravel()[0].get_legend_handles_labels(), title="system")
    return fig


def _legend(fig, handles: list, labels: list[str], *, title: str) -> None:
    """One legend below the panels: in as many columns (at most 4) as the widest label
    leaves room for across the figure, each label fitted to the width it has
    (:func:`~audit.report.plots.fit_text`: a long system name ran off both sides of the
    figure), the figure made taller by what a legend of many lines needs (it was drawn
    over the panels)."""
    from matplotlib import rcParams
    from matplotlib.font_manager import FontProperties

    font = FontProperties(size=rcParams["legend.fontsize"])
    em = font.get_size_in_points() / 72  # inches
    # a column: its label, the handle, the pad between them and the space to the next
    frame = rcParams["legend.handlelength"] + rcParams["legend.handletextpad"]
    frame += rcParams["legend.columnspacing"]
    room = fig.get_figwidth() - 0.3
    raw = [label.replace(r"\$", "$") for label in labels]  # as escape_mathtext gave them
    widest = max((text_width(line, font) for label in raw for line in label.split("\n")), default=0)
    ncols = max(1, min(4, len(labels), int(room // (widest + frame * em))))
    fitted = [fit_text(label, room / ncols - frame * em, font) for label in raw]
    labels = [escape_mathtext(label) for label in fitted]
    legend = fig.legend(handles, labels, title=title, loc="outside lower center", ncols=ncols)
    tall = legend.get_window_extent(renderer_of(fig)).height / fig.dpi  # inches
    if tall > _LEGEND_ROOM:  # what the panels give up for a legend of a few lines
        fig.set_figheight(fig.get_figheight() + tall - _LEGEND_ROOM)


#: Inches of legend the panels give up without the figure growing (two rows of names).
_LEGEND_ROOM = 0.9


def _on_probit_axes(points: pd.DataFrame) -> pd.Series:
    """The DET points that can be drawn on normal-deviate axes: both rates in (0, 1)."""
    fmr, fnmr = points["fmr"], points["fnmr"]
    return (fmr > 0) & (fmr < 1) & (fnmr > 0) & (fnmr < 1)


#: Rates a DET axis may mark (from 0.0001% to 95%).
_DET_TICKS = np.array([1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.05, 0.2, 0.5, 0.8, 0.95])


def _det_ticks(values: np.ndarray, share: float) -> tuple[np.ndarray, float, float]:
    """Ticks of a DET axis showing the rates ``values`` (in (0, 1)), and the axis's ends:
    from the tick at or below the least rate to the one at or above the greatest (the
    rates themselves past the first and last ticks), the ticks thinned from the top down
    so that neighbours are at least ``share`` of the axis apart on the normal-deviate
    scale."""
    from scipy.special import ndtri

    candidates = _DET_TICKS
    if not len(values):
        values = candidates[[2, -1]]  # nothing drawn: the usual 0.01% to 95%
    least, greatest = float(values.min()), float(values.max())
    first = candidates[candidates <= least].max(initial=candidates[0])
    last = candidates[candidates >= greatest].min(initial=candidates[-1])
    low, high = min(first, least), max(last, greatest)
    ticks = candidates[(candidates >= first) & (candidates <= last)]
    gap = share * (ndtri(high) - ndtri(low))
    kept = [ticks[-1]]
    for tick in ticks[-2::-1]:
        if ndtri(kept[-1]) - ndtri(tick) >= gap:
            kept.append(tick)
    return np.array(kept[::-1]), low, high


@themed
def det_curves(points: pd.DataFrame, *, algorithm=None, ax=None, legend: bool = True, axes_of=None):
    """Per-group DET curves on normal-deviate axes (Chouchane et al., Fig. 7).

    ``points``: the output of :func:`audit.scores.det_points`; ``algorithm`` selects one
    (default: the first).  Rates of exactly 0 or 1 cannot be drawn on
    probit axes and are left out.  The axes' ticks and ends follow the rates drawn,
    or those of ``axes_of`` (points of several systems, whose panels then share them).
    Returns the Axes.
    """
    import matplotlib.pyplot as plt
    from scipy.special import ndtri  # the normal quantile (scipy.stats.norm.ppf), lighter to import

    if ax is None:
        _, ax = plt.subplots(figsize=(PAGE_WIDTH * 0.55, PAGE_WIDTH * 0.55), layout="constrained")
    if algorithm is None:
        algorithm = points["algorithm"].iloc[0]
    part = points[points["algorithm"] == algorithm]
    colours = palette()
    for i, (group, rows) in enumerate(part.groupby("group", sort=False)):
        keep = _on_probit_axes(rows)
        # ten colours, then the same colours dashed: no two groups look alike
        ax.plot(
            ndtri(rows.loc[keep, "fmr"].to_numpy()),
            ndtri(rows.loc[keep, "fnmr"].to_numpy()),
            label=escape_mathtext(group),
            color=colours[i % len(colours)],
            linestyle=_STYLES[(i // len(colours)) % len(_STYLES)],
        )
    # ticks over the rates drawn (one at or past each end), the axis reaching them; on
    # the FMR axis, neighbours a tenth of the axis apart, so that their labels never meet
    scope = part if axes_of is None else axes_of  # this panel's rates, or every panel's
    shown = scope[_on_probit_axes(scope)]
    for rate, share, ticks_of, limits in (
        ("fmr", 0.11, ax.set_xticks, ax.set_xlim),
        ("fnmr", 0.05, ax.set_yticks, ax.set_ylim),
    ):
        ticks, low, high = _det_ticks(shown[rate].to_numpy(), share)
        ticks_of(ndtri(ticks), [f"{100 * t:g}" for t in ticks])
        limits(ndtri(low) - 0.15, ndtri(high) + 0.15)
    ax.set_xlabel("FMR (%)")
    ax.set_ylabel("FNMR (%)")
    ax.set_title(escape_mathtext(algorithm), fontsize="medium")
    if legend:
        ax.legend(title="group", fontsize="small")
    return ax


@themed
def det_figure(points: pd.DataFrame, *, grouping: str | None = None):
    """The report's DET figure: one panel per system (:func:`det_curves`), :data:`COLUMNS`
    to a row, one legend of the groups below (the groups are the same in every panel),
    the panels' axes alike (over the rates of them all).  Returns the Figure."""
    import matplotlib.pyplot as plt

    systems = list(dict.fromkeys(points["algorithm"]))
    n_groups = points["group"].nunique()
    ncols = max(1, min(COLUMNS, len(systems)))
    nrows = max(1, -(-len(systems) // ncols))
    side = min(PAGE_WIDTH / ncols, 3.6)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(side * ncols + 0.3, side * nrows + 1.0 + 0.2 * (n_groups // 4)),
        layout="constrained",
        squeeze=False,
    )
    for ax, system in zip(axes.ravel(), systems, strict=False):
        det_curves(points, algorithm=system, ax=ax, legend=False, axes_of=points)
        # a long system name on as many lines as its panel needs (at most 4): on one, it
        # ran over its neighbours' and squeezed the panels
        title = fit_text(str(system), side - 0.4, ax.title.get_fontproperties(), lines=4)
        ax.set_title(escape_mathtext(title), fontsize="medium")
    for ax in axes.ravel()[len(systems) :]:
        ax.set_visible(False)
    title = f"DET curves per group, {_grouping(grouping, n_groups)}"
    fig.suptitle(wrap(title, fig.get_figwidth() - 0.3, 11.0), fontsize="medium")
    _legend(fig, *axes.ravel()[0].get_legend_handles_labels(), title="group")
    return fig
