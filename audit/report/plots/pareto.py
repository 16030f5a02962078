"""The accuracy/fairness Pareto figure (Howard et al. Fig. 4), and the labels of points.

Draws a :func:`audit.analysis.pareto.frontier_frame`: every algorithm as a
point, the frontier members joined by a line in order of accuracy and labelled
by name (every algorithm when there are at most :data:`LABEL_ALL_UP_TO`),
weakly-but-not-strongly efficient algorithms marked apart.  The accuracy axis
is logarithmic when it spans more than a decade (:func:`log_accuracy`, the
rule the frontier-probability figure follows too); on a linear axis a panel
beside the plot zooms on the most accurate algorithms (the paper's inset:
total FNMR below 1%).  The title states the measure, alpha, the size of the
frontier and the group weights behind the accuracy axis.

:func:`place_labels` names points without covering them, the lines or each
other (a deterministic placement: the same figure every time).
"""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd

from audit.exceptions import InputError, UsageError
from audit.report.plots import (
    GREY,
    PAGE_WIDTH,
    VERMILION,
    colour,
    renderer_of,
    root_figure,
    themed,
    width_inches,
)
from audit.report.text import escape_mathtext

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

#: The accuracy axis is logarithmic when its largest value is more than this many times
#: its smallest (it spans more than a decade) and every value is positive.
LOG_SPAN = 10.0
#: Up to this many algorithms, every point is named; above, the frontier members and the
#: algorithms tied with them.
LABEL_ALL_UP_TO = 12


def frontier_colour() -> str:
    """The colour of the frontier in every Pareto figure."""
    return colour(VERMILION)


def log_accuracy(values) -> bool:
    """Whether an accuracy axis with these values is drawn on a log scale: every value
    positive and the largest more than :data:`LOG_SPAN` times the smallest.

    >>> log_accuracy([0.003, 0.01, 0.9]), log_accuracy([0.02, 0.05]), log_accuracy([0, 0.5])
    (True, False, False)
    """
    values = np.asarray(values, dtype="float64")
    values = values[np.isfinite(values)]
    if len(values) == 0 or (values <= 0).any():
        return False
    return bool(values.max() > LOG_SPAN * values.min())


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
        color=colour(GREY),
        alpha=0.7,
        linewidths=0,
        label="algorithm",
        zorder=2,
    )
    weak = frame[frame["weakly_efficient"] & ~frame["on_frontier"]]
    if len(weak):
        ax.scatter(
            weak["accuracy"],
            weak["fairness"],
            s=size * 2.2,
            facecolors="none",
            edgecolors=frontier_colour(),
            linewidths=1.2,
            label="weakly efficient only (ties a frontier point)",
            zorder=3,
        )
    front = _ordered_frontier(frame)
    ax.plot(
        front["accuracy"],
        front["fairness"],
        "-o",
        color=frontier_colour(),
        lw=1.4,
        ms=np.sqrt(size) * 1.2,
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


#: Places tried around a point at each distance d, in order of preference, as (a, b, c):
#: the label's box is centred at the point + (a (d + w) + c w, b (d + h)), w and h half
#: its width and height.  To the right; above and below with the label starting at the
#: point (c = 1); to the left; above and below, centred, or ending at the point; then
#: the diagonals and the directions between.
_PLACES = [(1, 0, 0), (0, 1, 1), (0, -1, 1), (-1, 0, 0), (0, 1, 0), (0, -1, 0)]
_PLACES += [(0, 1, -1), (0, -1, -1)]
_PLACES += [(np.cos(t), np.sin(t), 0) for t in np.deg2rad([45, 135, 225, 315, *range(15, 360, 30)])]


def place_labels(
    ax,
    names,
    xs,
    ys,
    *,
    avoid=None,
    radius: float = 5.0,
    fontsize: float = 7.5,
    reach: float = 90.0,
) -> list:
    """Name the points (``xs``, ``ys``) of ``ax``: each label near its point, over no other
    label and no point of ``avoid`` (an (n, 2) array of data coordinates: every point of
    the plot; default the named points), inside the axes; a thin line joins a label set
    apart to its point.

    Each label in turn (in the order given) takes the first free place among
    boxes around its point at growing distance (from ``radius`` points, the size
    of a marker, out to ``reach`` points), trying right, above, left and below
    first (:data:`_PLACES`), then the diagonals.  Lines already drawn (the
    frontier, error bars) and the lines of labels placed before are avoided too.
    A point so crowded that no place within reach
    is free gets the place that covers the fewest labels, then points.  The
    rule is deterministic: the same figure every time.  (adjustText, tried
    first, left 7 to 9 labels over points in the Annex 15 Pareto figures,
    whatever its forces, expansion and steps.)

    The names are user strings: drawn as written (:func:`audit.report.text.escape_mathtext`).
    Call it last, once the figure's layout is set (title, legend, colour bar):
    places are found in display space.  Returns the label Texts.
    """
    from matplotlib.collections import LineCollection

    xs = np.asarray(xs, dtype="float64")
    ys = np.asarray(ys, dtype="float64")
    if not len(xs):
        return []
    fig = ax.figure
    renderer = renderer_of(fig)
    pixels = fig.dpi / 72.0
    points = np.column_stack([xs, ys]) if avoid is None else np.asarray(avoid, dtype="float64")
    centres = ax.transData.transform(points)
    centres = centres[np.isfinite(centres).all(axis=1)]
    marker = radius * pixels
    obstacles = np.column_stack(
        [centres[:, 0] - marker, centres[:, 1] - marker, centres[:, 0] + marker,
         centres[:, 1] + marker]
    )  # fmt: skip
    # the lines already drawn (the frontier, error bars) are obstacles too: small boxes
    # along them
    paths = [np.column_stack(line.get_data()).astype("float64") for line in ax.get_lines()]
    for collection in ax.collections:
        if isinstance(collection, LineCollection):
            paths += [np.asarray(segment, dtype="float64") for segment in collection.get_segments()]
    along = [np.empty((0, 2))]
    for path in paths:
        xy = ax.transData.transform(path) if len(path) else path
        xy = xy[np.isfinite(xy).all(axis=1)] if len(xy) else xy
        for start, end in zip(xy[:-1], xy[1:], strict=True):
            along.append(_along(np.vstack([start, end]), 2 * pixels))
    along = np.vstack(along)
    width = 1.5 * pixels
    lines = np.column_stack([along - width, along + width])
    area = ax.get_window_extent(renderer)
    gap = 1.5 * pixels  # white space kept around a label
    placed = np.empty((0, 4))
    leaders: list[np.ndarray] = []
    targets = ax.transData.transform(np.column_stack([xs, ys]))
    inverse = ax.transData.inverted()
    texts = []
    for name, target in zip(names, targets, strict=True):
        text = ax.text(
            0, 0, escape_mathtext(name), fontsize=fontsize, color="#222222", ha="center",
            va="center", zorder=6,
        )  # fmt: skip
        extent = text.get_window_extent(renderer)
        half = np.array([extent.width / 2 + gap, extent.height / 2 + gap])
        best, best_cost = None, None
        for distance in np.arange(marker + gap, (reach + radius) * pixels, 2.5 * pixels):
            # every place at this distance at once (:func:`_ring`), then taken in order
            centres_here, boxes, inside, box_cost = _ring(
                target, distance, half, area, placed, obstacles, lines
            )
            found = [
                (k, _leader(target, centres_here[k], half, marker + 3 * pixels)) for k in inside
            ]
            leader_points = [
                (k, _along(leader, 2 * pixels)) for k, leader in found if leader is not None
            ]
            over_label, over_points, over_lines = _points_inside(
                leader_points, placed, obstacles, lines
            )
            for k, leader in found:
                box = boxes[k]
                # a label over a label: never if it can be helped; over a point: worse than
                # over a stretch of line
                cost = box_cost[k]
                if leader is None and _nearer_other(box, target, centres, pixels):
                    cost += 30  # a label without a line must sit nearest its own point
                if leader is not None:  # its line must cross no label and no other line
                    crossing = over_label[k] or any(_cross(leader, other) for other in leaders)
                    cost += 1000 * crossing + 5 * over_points[k] + 2 * over_lines[k]
                if best_cost is None or cost < best_cost:
                    best, best_cost = centres_here[k], cost
                if cost == 0:
                    break
            if best_cost == 0:
                break
        if best is None:  # no place inside the axes: beside the point, to the right
            best = target + np.array([marker + half[0], 0.0])
        text.set_position(inverse.transform(best))
        placed = np.vstack([placed, [*(best - half), *(best + half)]])
        # a label set apart is joined to its point by a thin line, edge to edge
        leader = _leader(target, best, half, marker + 3 * pixels)
        if leader is not None:
            leader = np.vstack([target + (leader[1] - target) / np.hypot(*(leader[1] - target))
                                * marker, leader[1]])  # fmt: skip
            ends = inverse.transform(leader)
            ax.plot(ends[:, 0], ends[:, 1], color="#888888", lw=0.6, zorder=5, scalex=False,
                    scaley=False)  # fmt: skip
            leaders.append(leader)
            on_line = _along(leader, 2 * pixels)
            lines = np.vstack([lines, np.column_stack([on_line - width, on_line + width])])
        texts.append(text)
    return texts


#: The places of :data:`_PLACES` as arrays (a, b, c).
_A, _B, _C = (np.array([place[i] for place in _PLACES], dtype="float64") for i in range(3))


def _ring(target, distance, half, area, placed, obstacles, lines) -> tuple:
    """The label boxes of every place of :data:`_PLACES` at ``distance`` from the point
    ``target`` (display space; ``half``: the label's half width and height): their
    centres, their boxes, the places whose box lies inside the axes' ``area`` (in
    order), and each box's cost of covering labels (1000 each), points (50) and
    stretches of line (1)."""
    centres = target + np.column_stack(
        [_A * (distance + half[0]) + _C * half[0], _B * (distance + half[1])]
    )
    boxes = np.column_stack([centres - half, centres + half])
    outside = (
        (boxes[:, 0] < area.x0)
        | (boxes[:, 1] < area.y0)
        | (boxes[:, 2] > area.x1)
        | (boxes[:, 3] > area.y1)
    )
    cost = (
        1000 * _overlap_counts(boxes, placed)
        + 50 * _overlap_counts(boxes, obstacles)
        + _overlap_counts(boxes, lines)
    )
    return centres, boxes, np.flatnonzero(~outside).tolist(), cost.tolist()


def _overlap_counts(boxes: np.ndarray, others: np.ndarray) -> np.ndarray:
    """For each of ``boxes`` (n, 4: x0, y0, x1, y1), how many of ``others`` overlap it."""
    if not len(others):
        return np.zeros(len(boxes), dtype=np.int64)
    return (
        (others[None, :, 0] < boxes[:, None, 2])
        & (boxes[:, None, 0] < others[None, :, 2])
        & (others[None, :, 1] < boxes[:, None, 3])
        & (boxes[:, None, 1] < others[None, :, 3])
    ).sum(axis=1)


def _points_inside(leader_points: list, placed, obstacles, lines) -> tuple[dict, dict, dict]:
    """For the points along each leader of ``leader_points`` ((place, points) pairs),
    looked at all at once: whether one falls inside a placed label, and how many fall
    inside a point's box and inside a stretch of line (:func:`_inside`), by place."""
    if not leader_points:
        return {}, {}, {}
    points = np.vstack([points for _, points in leader_points])
    owner = np.repeat(np.arange(len(leader_points)), [len(p) for _, p in leader_points])
    counts = [
        np.bincount(owner[_inside(points, boxes)], minlength=len(leader_points))
        for boxes in (placed, obstacles, lines)
    ]
    places = [k for k, _ in leader_points]
    return (
        dict(zip(places, (counts[0] > 0).tolist(), strict=True)),
        dict(zip(places, counts[1].tolist(), strict=True)),
        dict(zip(places, counts[2].tolist(), strict=True)),
    )


def _leader(target: np.ndarray, centre: np.ndarray, half: np.ndarray, near: float):
    """The line from a point to its label's box (display space), or None when the box is
    within ``near`` of the point (the label then sits beside its point, no line)."""
    away = centre - target
    length = float(np.hypot(*away))
    if length == 0:
        return None
    unit = away / length
    inside = float(np.min(half / np.maximum(np.abs(unit), 1e-9)))
    if length - inside <= near:
        return None
    return np.vstack([target, centre - unit * inside])


def _nearer_other(box: np.ndarray, target: np.ndarray, points: np.ndarray, slack: float) -> bool:
    """Whether a point other than ``target`` is about as near the ``box`` as ``target``
    is, or nearer (within twice its distance plus ``slack`` pixels): a reader could
    give the label to that point."""

    def distance(xy):
        dx = np.maximum(np.maximum(box[0] - xy[..., 0], xy[..., 0] - box[2]), 0)
        dy = np.maximum(np.maximum(box[1] - xy[..., 1], xy[..., 1] - box[3]), 0)
        return np.hypot(dx, dy)

    others = points[np.hypot(*(points - target).T) > 0.5]
    return bool(len(others)) and bool(distance(others).min() < 2.0 * distance(target) + slack)


def _along(segment: np.ndarray, step: float) -> np.ndarray:
    """Points every ``step`` along a segment (its ends included)."""
    count = max(2, int(np.hypot(*(segment[1] - segment[0])) / step) + 1)
    return segment[0] + np.linspace(0, 1, count)[:, None] * (segment[1] - segment[0])


def _inside(points: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Which of ``points`` fall strictly inside any of ``boxes`` (n, 4)."""
    if len(boxes) and len(points):  # only the boxes that reach the points' span can hold one
        low, high = points.min(axis=0), points.max(axis=0)
        boxes = boxes[
            (boxes[:, 0] < high[0])
            & (low[0] < boxes[:, 2])
            & (boxes[:, 1] < high[1])
            & (low[1] < boxes[:, 3])
        ]
    if not len(boxes):
        return np.zeros(len(points), dtype=bool)
    x, y = points[:, :1], points[:, 1:]
    return ((boxes[:, 0] < x) & (x < boxes[:, 2]) & (boxes[:, 1] < y) & (y < boxes[:, 3])).any(
        axis=1
    )


def _cross(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether segments ``a`` and ``b`` (2 x 2 each) cross."""

    def side(p, q, r):
        return np.sign((q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]))

    return bool(
        side(a[0], a[1], b[0]) * side(a[0], a[1], b[1]) < 0
        and side(b[0], b[1], a[0]) * side(b[0], b[1], a[1]) < 0
    )


def _named(frame: pd.DataFrame) -> pd.DataFrame:
    """The algorithms named: all when few, else the frontier and those tied with it."""
    if len(frame) <= LABEL_ALL_UP_TO:
        return frame
    return pd.concat(
        [_ordered_frontier(frame), frame[frame["weakly_efficient"] & ~frame["on_frontier"]]]
    )


@themed
def pareto_figure(
    frame: pd.DataFrame,
    *,
    inset_max: float | None = 0.01,
    log_x: bool | None = None,
    ax=None,
):
    """Fig. 4 of Howard et al.: accuracy against fairness, the Pareto frontier joined and named.

    Parameters
    ----------
    frame
        The output of :func:`audit.analysis.pareto.frontier_frame` (one row per
        algorithm: ``accuracy``, ``fairness``, ``on_frontier``,
        ``weakly_efficient``, and its ``attrs``).
    inset_max
        On a linear accuracy axis, a panel beside the plot zooms on the
        algorithms at least this accurate (accuracy ``<= inset_max`` for an
        error rate); the paper's inset keeps total FNMR below 1% (the default,
        0.01), and the zoomed region is outlined on the main plot.  ``None``:
        no zoom.  There is none either when fewer than two algorithms, or all
        of them, fall in it; on a log axis (which spreads the accurate
        algorithms already); or when drawing into a given ``ax``.  Algorithms
        in the zoom are named there, the others on the main plot.
    log_x
        Log scale for the accuracy axis.  ``None`` (the default): when the
        values span more than a decade (:func:`log_accuracy`: total FNMR on
        Annex 15 spans 0.003 to 1).  The paper's axis is linear.
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
    from matplotlib.layout_engine import ConstrainedLayoutEngine
    from matplotlib.patches import Rectangle

    _check(frame)
    a = frame.attrs
    if log_x and (frame["accuracy"] <= 0).any():
        bad = frame.index[(frame["accuracy"] <= 0).to_numpy()]
        raise InputError(
            LOG_NEEDS_POSITIVE.format(count=len(bad), algorithms=[str(b) for b in bad])
        )
    log = log_accuracy(frame["accuracy"]) if log_x is None else bool(log_x)
    in_zoom = pd.Series(False, index=frame.index)
    if inset_max is not None and not log and ax is None:
        if a["accuracy_higher_is_better"]:
            in_zoom = frame["accuracy"] >= inset_max
        else:
            in_zoom = frame["accuracy"] <= inset_max
        if in_zoom.sum() < 2 or in_zoom.all():
            in_zoom[:] = False
    zoom_mask = in_zoom.to_numpy()

    zoom = None
    if ax is not None:
        fig = ax.figure
    elif zoom_mask.any():
        fig, (ax, zoom) = plt.subplots(
            1, 2, figsize=(PAGE_WIDTH * 1.25, 5.6), width_ratios=[1.4, 1], layout="constrained"
        )
    else:
        fig, ax = plt.subplots(figsize=(PAGE_WIDTH, 5.6), layout="constrained")
    _draw(ax, frame, size=20)
    if log:
        ax.set_xscale("log")
    better = "higher" if a["accuracy_higher_is_better"] else "lower"
    fairer = "higher" if a["higher_is_fairer"] else "lower"
    accuracy_label = escape_mathtext(a["accuracy_label"])
    x_label = f"{accuracy_label} ({better} is better"
    y_label = f"{escape_mathtext(a['fairness_label'])}, {fairer} is fairer"
    ax.set_xlabel(f"{x_label}{', log scale' if log else ''})")
    ax.set_ylabel(y_label)
    title = (
        f"{accuracy_label} vs {escape_mathtext(a['measure_label'])}: {a['n_frontier']} of "
        f"{a['n_candidates']} algorithms on the Pareto frontier"
    )
    wide = width_inches(fig) * (0.55 if zoom is not None else 0.9)
    weights = textwrap.fill(f"Weights: {a['weights']}", width=max(40, int(wide * 13)))
    ax.set_title(f"{title}.\n{escape_mathtext(weights)}", fontsize="medium", fontweight="normal")

    if zoom is not None:
        _draw(zoom, frame, size=26)
        zoomed = frame[zoom_mask]
        x_lo, x_hi = zoomed["accuracy"].min(), float(inset_max)
        if a["accuracy_higher_is_better"]:
            x_lo, x_hi = float(inset_max), zoomed["accuracy"].max()
        y_lo, y_hi = zoomed["fairness"].min(), zoomed["fairness"].max()
        x_pad, y_pad = 0.05 * (x_hi - x_lo or 1.0), 0.08 * (y_hi - y_lo or 1.0)
        zoom.set_xlim(x_lo - x_pad, x_hi + x_pad)
        zoom.set_ylim(y_lo - y_pad, y_hi + y_pad)
        bound = ">=" if a["accuracy_higher_is_better"] else "<="
        zoom.set_title(
            f"Zoom: {accuracy_label} {bound} {inset_max:g}\n(the grey box on the left)",
            fontsize="medium",
            fontweight="normal",
        )
        zoom.set_xlabel(f"{x_label})")
        zoom.set_ylabel(y_label)
        ax.add_patch(
            Rectangle(
                (x_lo - x_pad, y_lo - y_pad),
                x_hi - x_lo + 2 * x_pad,
                y_hi - y_lo + 2 * y_pad,
                facecolor=colour(GREY),
                alpha=0.15,
                edgecolor=colour(GREY),
                zorder=1,
            )
        )
    handles, labels = ax.get_legend_handles_labels()
    # under the plot, outside it, where constrained layout makes room for it (the figure's
    # own, or a given ax alone on such a figure, not in a subfigure); else in the plot
    constrained = isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine)
    alone = fig.axes[0] is ax and (zoom is not None or len(fig.axes) == 1)
    if constrained and alone and fig is root_figure(fig):
        fig.legend(handles, labels, loc="outside lower center", ncols=len(handles))
    else:
        ax.legend(handles, labels, loc="upper right")
    named = _named(frame)
    inside = in_zoom.loc[named.index].to_numpy()
    everything = frame[["accuracy", "fairness"]].to_numpy()
    root_figure(fig).draw_without_rendering()  # laid out: labels go in display space
    main = named[~inside]
    place_labels(ax, main.index, main["accuracy"], main["fairness"], avoid=everything)
    if zoom is not None:
        zoomed = named[inside]
        place_labels(zoom, zoomed.index, zoomed["accuracy"], zoomed["fairness"], avoid=everything)
    return fig
