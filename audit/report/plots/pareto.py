"""The accuracy/fairness Pareto figure (Howard et al. Fig. 4).

Draws a :func:`audit.analysis.pareto.frontier_frame`: every algorithm as a point, the
frontier members joined by a line in order of accuracy and labelled by name,
weakly-but-not-strongly efficient algorithms marked apart, and an inset
zoomed on the most accurate region (the paper's inset: total FNMR below 1%).
The title states the measure, alpha, the size of the frontier and the group
weights behind the accuracy axis.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd

from audit.exceptions import InputError, UsageError
from audit.report.plots import plain_text

NOT_A_FRONTIER_FRAME = (
    "pareto_figure needs a frame from audit.analysis.pareto.frontier_frame (columns {needed} and its "
    "attrs); missing: {missing}"
)
LOG_NEEDS_POSITIVE = (
    "log_x needs positive accuracy values; {count} algorithm(s) have accuracy <= 0: {algorithms}"
)

_NEEDED_COLUMNS = ("accuracy", "fairness", "on_frontier", "weakly_efficient")
_NEEDED_ATTRS = (
    "measure_label",
    "fairness_label",
    "higher_is_fairer",
    "accuracy_label",
    "accuracy_higher_is_better",
    "weights",
    "n_candidates",
    "n_frontier",
)

FRONTIER_COLOR = "#c0392b"
POINT_COLOR = "#7f8c8d"


def _check(frame: pd.DataFrame) -> None:
    missing = [c for c in _NEEDED_COLUMNS if c not in frame.columns]
    missing += [f"attrs[{a!r}]" for a in _NEEDED_ATTRS if a not in frame.attrs]
    if missing:
        raise UsageError(NOT_A_FRONTIER_FRAME.format(needed=list(_NEEDED_COLUMNS), missing=missing))


def _draw(ax, frame: pd.DataFrame, *, size: float) -> None:
    """Points, weakly efficient markers and the frontier line on one Axes."""
    others = frame[~frame["on_frontier"]]
    ax.scatter(
        others["accuracy"],
        others["fairness"],
        s=size,
        color=POINT_COLOR,
        alpha=0.6,
        linewidths=0,
        label="algorithm",
        zorder=2,
    )
    weak = frame[frame["weakly_efficient"] & ~frame["on_frontier"]]
    if len(weak):
        ax.scatter(
            weak["accuracy"],
            weak["fairness"],
            s=size * 1.8,
            facecolors="none",
            edgecolors=FRONTIER_COLOR,
            linewidths=1.0,
            label="weakly efficient only (ties a frontier point)",
            zorder=3,
        )
    front = _ordered_frontier(frame)
    ax.plot(
        front["accuracy"],
        front["fairness"],
        "-o",
        color=FRONTIER_COLOR,
        lw=1.3,
        ms=np.sqrt(size) * 1.1,
        label="Pareto frontier",
        zorder=4,
    )


def _ordered_frontier(frame: pd.DataFrame) -> pd.DataFrame:
    front = frame[frame["on_frontier"]]
    acc_sign = -1.0 if frame.attrs["accuracy_higher_is_better"] else 1.0
    fair_sign = -1.0 if frame.attrs["higher_is_fairer"] else 1.0
    order = np.lexsort(
        (fair_sign * front["fairness"].to_numpy(), acc_sign * front["accuracy"].to_numpy())
    )
    return front.iloc[order]


#: Candidate inset rectangles (axes fraction: x0, y0, width, height), tried in this order;
#: margins leave room for the inset's own tick labels and title.
_LARGE_SLOTS = tuple((x, y, 0.44, 0.42) for y in (0.52, 0.09) for x in (0.54, 0.30, 0.08))
#: Smaller ones are a fallback when drawing into a given ax (no room for a side panel).
_SMALL_SLOTS = tuple((x, y, 0.34, 0.34) for y in (0.60, 0.09) for x in (0.64, 0.36, 0.08))
#: Candidate legend corners (matplotlib loc, and the axes-fraction box it roughly takes).
_LEGEND_SLOTS = (
    ("lower left", (0.0, 0.0, 0.35, 0.14)),
    ("lower right", (0.65, 0.0, 0.35, 0.14)),
    ("upper left", (0.0, 0.86, 0.35, 0.14)),
    ("upper right", (0.65, 0.86, 0.35, 0.14)),
)


#: An inset hiding more than this (weighted) number of points moves beside the plot
#: (an opaque inset over data would hide algorithms from the reader).
_MAX_HIDDEN = 0.0


def _fraction(values: np.ndarray, *, log: bool) -> np.ndarray:
    """Positions as a fraction of an axis autoscaled with matplotlib's default 5% margins."""
    v = np.log10(values) if log else np.asarray(values, dtype="float64")
    lo, hi = v.min(), v.max()
    span = hi - lo or 1.0
    return (v - (lo - 0.05 * span)) / (1.1 * span)


def _crowding(box, xy: np.ndarray, weight: np.ndarray) -> float:
    """Weighted number of points (axes fraction) inside ``box`` = (x0, y0, w, h)."""
    x0, y0, w, h = box
    inside = (xy[:, 0] >= x0) & (xy[:, 0] <= x0 + w) & (xy[:, 1] >= y0) & (xy[:, 1] <= y0 + h)
    return float(weight[inside].sum())


def _overlap(a, b) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


@plain_text
def label_points(ax, names, xs, ys, *, fontsize: float = 7.0) -> None:
    """Name each point, nudging labels apart so that none overlap (greedy, in display space)."""
    if not len(names):
        return
    fig = ax.figure
    texts = []
    for name, x, y in zip(names, xs, ys, strict=False):
        texts.append(
            ax.annotate(
                str(name),
                (x, y),
                xytext=(6, 4),
                textcoords="offset points",
                fontsize=fontsize,
                color="#222222",
                zorder=5,
                bbox=dict(
                    boxstyle="round,pad=0.1", facecolor="white", edgecolor="none", alpha=0.75
                ),
                arrowprops=dict(arrowstyle="-", color="#999999", lw=0.5, shrinkA=0, shrinkB=2),
            )
        )
    renderer = fig.canvas.get_renderer()
    axes_box = ax.get_window_extent(renderer)
    placed = []
    # Place from the top of the plot down, pushing each label below the ones already placed.
    for text in sorted(texts, key=lambda t: -ax.transData.transform(t.xy)[1]):
        box = text.get_window_extent(renderer)
        # Keep the label inside the axes horizontally: flip it to the left of its point if needed.
        if box.x1 > axes_box.x1:
            text.set_horizontalalignment("right")
            text.set_position((-6, 4))
            box = text.get_window_extent(renderer)
        dy_points = 4.0
        for _ in range(60):
            if not any(box.overlaps(other) for other in placed):
                break
            dy_points -= 3.0
            text.set_position((text.get_position()[0], dy_points))
            box = text.get_window_extent(renderer)
        placed.append(box)


def _label(ax, points: pd.DataFrame, *, fontsize: float) -> None:
    label_points(ax, list(points.index), points["accuracy"], points["fairness"], fontsize=fontsize)


@plain_text
def pareto_figure(
    frame: pd.DataFrame, *, inset_max: float | None = 0.01, log_x: bool = False, ax=None
):
    """Fig. 4 of Howard et al.: accuracy against fairness, the Pareto frontier joined and named.

    Parameters
    ----------
    frame
        The output of :func:`audit.analysis.pareto.frontier_frame` (one row per
        algorithm: ``accuracy``, ``fairness``, ``on_frontier``,
        ``weakly_efficient``, and its ``attrs``).
    inset_max
        Draw an inset zoomed on the algorithms at least this accurate
        (accuracy ``<= inset_max`` for an error rate); the paper's inset
        keeps total FNMR below 1% (the default, 0.01).  ``None``: no inset.
        The inset is skipped when fewer than two algorithms fall in it.
        Frontier members inside the inset are named there, the others on the
        main plot.  The inset goes where it covers no algorithm; when no such
        place exists (e.g. on the log axis) and the figure is made here, the
        zoom becomes a panel beside the plot instead.  Drawing into a given
        ``ax`` leaves no room for a panel: the inset then covers as few
        points as it can (pass ``inset_max=None`` to avoid it).
    log_x
        Log scale for the accuracy axis of the main plot (the inset stays
        linear).  The paper's axis is linear; total FNMR on Annex 15 spans
        0.003 to 1, so the log scale separates the accurate algorithms.
    ax
        Axes to draw into; a new figure is made when None.

    Returns
    -------
    matplotlib.figure.Figure
        The figure (never shown; the caller saves or displays it).

    Examples
    --------
    >>> import pandas as pd
    >>> from audit.tables.rates import read_rates
    >>> from audit.analysis.pareto import frontier_frame
    >>> t = read_rates(pd.DataFrame({
    ...     "Algorithm": ["a", "b", "c"],
    ...     "FMR.F": [1e-4, 1e-4, 1e-4], "FMR.M": [1e-4, 1e-4, 1e-4],
    ...     "FNMR.F": [0.010, 0.030, 0.030], "FNMR.M": [0.030, 0.030, 0.050]}))
    >>> fig = pareto_figure(frontier_frame(t), inset_max=None)
    >>> fig.axes[0].get_ylabel()
    'GARBE (alpha=0.5), lower is fairer'
    """
    import matplotlib.pyplot as plt

    _check(frame)
    a = frame.attrs
    if log_x and (frame["accuracy"] <= 0).any():
        bad = frame.index[(frame["accuracy"] <= 0).to_numpy()]
        raise InputError(
            LOG_NEEDS_POSITIVE.format(count=len(bad), algorithms=[str(b) for b in bad])
        )
    in_inset = pd.Series(False, index=frame.index)
    if inset_max is not None:
        if a["accuracy_higher_is_better"]:
            in_inset = frame["accuracy"] >= inset_max
        else:
            in_inset = frame["accuracy"] <= inset_max
        if in_inset.sum() < 2:
            in_inset[:] = False
    zoom_mask = in_inset.to_numpy()

    # Where the points will sit, in axes fraction, to keep the inset and the legend off
    # the data (frontier points count ten times: they must stay visible).
    xy = np.column_stack(
        [
            _fraction(frame["accuracy"].to_numpy(), log=log_x),
            _fraction(frame["fairness"].to_numpy(), log=False),
        ]
    )
    weight = np.where(frame["on_frontier"].to_numpy(), 10.0, 1.0)
    inset_slot, hidden = None, 0.0
    if zoom_mask.any():
        # The zoomed region itself must stay in view.
        zoomed = xy[zoom_mask]
        region = (
            zoomed[:, 0].min(),
            zoomed[:, 1].min(),
            np.ptp(zoomed[:, 0]) + 1e-3,
            np.ptp(zoomed[:, 1]) + 1e-3,
        )
        slots = _LARGE_SLOTS if ax is None else _LARGE_SLOTS + _SMALL_SLOTS
        free = [b for b in slots if not _overlap(b, region)] or list(slots)
        inset_slot = min(free, key=lambda b: (_crowding(b, xy, weight), -b[2] * b[3]))
        hidden = _crowding(inset_slot, xy, weight)

    # An inset that would hide data becomes a panel beside the plot (when the figure is ours).
    side_panel = ax is None and hidden > _MAX_HIDDEN
    if ax is None and side_panel:
        fig, (ax, inset) = plt.subplots(
            1, 2, figsize=(15, 7), width_ratios=[1.5, 1], layout="constrained"
        )
        inset_slot = None
    elif ax is None:
        fig, ax = plt.subplots(figsize=(10, 7), layout="constrained")
    else:
        fig = ax.figure
    _draw(ax, frame, size=18)
    if log_x:
        ax.set_xscale("log")
    better = "higher" if a["accuracy_higher_is_better"] else "lower"
    fairer = "higher" if a["higher_is_fairer"] else "lower"
    x_label = f"{a['accuracy_label']} ({better} is better"
    y_label = f"{a['fairness_label']}, {fairer} is fairer"
    ax.set_xlabel(f"{x_label}{', log scale' if log_x else ''})")
    ax.set_ylabel(y_label)
    ax.grid(True, which="major", lw=0.4, alpha=0.5)
    title = (
        f"{a['accuracy_label']} vs {a['measure_label']}: {a['n_frontier']} of "
        f"{a['n_candidates']} algorithms on the Pareto frontier"
    )
    width_inches = fig.get_figwidth() * ax.get_position().width
    weights = textwrap.fill(f"Weights: {a['weights']}", width=max(40, int(width_inches * 12)))
    ax.set_title(f"{title}\n{weights}", fontsize=10, loc="left")

    if zoom_mask.any():
        if not side_panel:
            inset = ax.inset_axes(list(inset_slot))
        _draw(inset, frame, size=22 if side_panel else 14)
        zoom = frame[zoom_mask]
        x_lo, x_hi = zoom["accuracy"].min(), float(inset_max)
        if a["accuracy_higher_is_better"]:
            x_lo, x_hi = float(inset_max), zoom["accuracy"].max()
        y_lo, y_hi = zoom["fairness"].min(), zoom["fairness"].max()
        x_pad, y_pad = 0.04 * (x_hi - x_lo), 0.06 * (y_hi - y_lo or 1.0)
        inset.set_xlim(x_lo - x_pad, x_hi + x_pad)
        inset.set_ylim(y_lo - y_pad, y_hi + y_pad)
        inset.grid(True, lw=0.4, alpha=0.5)
        bound = ">=" if a["accuracy_higher_is_better"] else "<="
        zoom_title = f"Zoom: {a['accuracy_label']} {bound} {inset_max:g}"
        if side_panel:
            inset.set_title(f"{zoom_title}\n(linear scale)", fontsize=10, loc="left")
            inset.set_xlabel(f"{x_label})")
            inset.set_ylabel(y_label)
        else:
            inset.set_title(zoom_title, fontsize=8)
            inset.tick_params(labelsize=7)
        ax.indicate_inset_zoom(inset, edgecolor="#555555")
    slots = [
        (loc, box)
        for loc, box in _LEGEND_SLOTS
        if inset_slot is None or not _overlap(box, inset_slot)
    ]
    legend_loc = min(slots, key=lambda slot: _crowding(slot[1], xy, weight))[0]
    ax.legend(loc=legend_loc, fontsize=8, framealpha=0.9)
    fig.canvas.draw()
    # Name the frontier members and the weakly efficient ones (which tie a member).
    front = pd.concat(
        [_ordered_frontier(frame), frame[frame["weakly_efficient"] & ~frame["on_frontier"]]]
    )
    inside = in_inset.loc[front.index].to_numpy()
    _label(ax, front[~inside], fontsize=8)
    if zoom_mask.any():
        _label(inset, front[inside], fontsize=8 if side_panel else 7)
    return fig
