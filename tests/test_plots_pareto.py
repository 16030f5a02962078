"""The Pareto figure (Howard et al. Fig. 4)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from figcheck import faults, named, record
from matplotlib.figure import Figure
from matplotlib.patches import ConnectionPatch, Rectangle

from audit.analysis.pareto import frontier_frame
from audit.report.plots import pareto as plots
from audit.report.plots.pareto import pareto_figure
from audit.tables.rates import read_rates


@pytest.fixture
def small():
    return frontier_frame(
        read_rates(
            pd.DataFrame(
                {
                    "Algorithm": ["a", "b", "c", "d"],
                    "FMR.F": [1e-4] * 4,
                    "FMR.M": [1e-4] * 4,
                    "FNMR.F": [0.010, 0.030, 0.030, 0.2],
                    "FNMR.M": [0.030, 0.030, 0.050, 0.4],
                }
            )
        )
    )


def _frontier_line(ax):
    lines = [line for line in ax.get_lines() if line.get_label() == "Pareto frontier"]
    assert len(lines) == 1
    return lines[0]


def _zoom(fig):
    """The zoomed axes: an inset (a child of the main axes) or a panel beside it."""
    main = fig.axes[0]
    zooms = list(main.child_axes) + fig.axes[1:]
    assert len(zooms) == 1
    return main, zooms[0]


def _texts(ax):
    return {t.get_text() for t in ax.texts if t.get_text()}


def _centre(target, place, distance, half):
    """The oracle of a label's centre at one place (the rule :data:`plots._PLACES` states)."""
    a, b, c = place
    return target + np.array([a * (distance + half[0]) + c * half[0], b * (distance + half[1])])


def _overlaps(box, boxes):
    """The oracle of which ``boxes`` overlap ``box``, one box at a time."""
    return np.array([b[0] < box[2] and box[0] < b[2] and b[1] < box[3] and box[1] < b[3]
                     for b in boxes], dtype=bool)  # fmt: skip


@pytest.mark.parametrize("seed", range(5))
def test_a_ring_of_places_costs_what_each_place_costs_alone(seed):
    """The places at one distance are costed at once; each place's centre, box, whether
    it fits the axes, and its cost are those computed for it alone, bit for bit."""
    from matplotlib.transforms import Bbox

    rng = np.random.default_rng(seed)

    def boxes(n):
        low = rng.uniform(0, 400, (n, 2))
        return np.column_stack([low, low + rng.uniform(1, 40, (n, 2))])

    area = Bbox([[20.0, 10.0], [380.0, 300.0]])
    placed, obstacles, lines = boxes(int(rng.integers(0, 6))), boxes(80), boxes(300)
    target, half = rng.uniform(50, 350, 2), rng.uniform(5, 40, 2)
    for distance in (6.0, 31.25, 120.0):
        centres, got, inside, cost = plots._ring(
            target, distance, half, area, placed, obstacles, lines
        )
        assert len(centres) == len(plots._PLACES)
        fits = []
        for k, place in enumerate(plots._PLACES):
            centre = _centre(target, place, distance, half)
            box = np.array([*(centre - half), *(centre + half)])
            assert np.array_equal(centres[k], centre) and np.array_equal(got[k], box)
            fits.append(area.x0 <= box[0] and area.y0 <= box[1] and box[2] <= area.x1
                        and box[3] <= area.y1)  # fmt: skip
            expected = (1000 * _overlaps(box, placed).sum() + 50 * _overlaps(box, obstacles).sum()
                        + _overlaps(box, lines).sum())  # fmt: skip
            assert cost[k] == expected
        assert inside == [k for k, fit in enumerate(fits) if fit]
    # the points along several leaders, looked at at once, as each leader's alone
    leaders = [(k, rng.uniform(0, 400, (int(rng.integers(2, 30)), 2))) for k in (0, 3, 7)]
    on_placed, on_obstacles, on_lines = plots._points_inside(leaders, placed, obstacles, lines)
    for k, points in leaders:
        assert on_placed[k] == bool(plots._inside(points, placed).any())
        assert on_obstacles[k] == plots._inside(points, obstacles).sum()
        assert on_lines[k] == plots._inside(points, lines).sum()
    assert plots._points_inside([], placed, obstacles, lines) == ({}, {}, {})


def _clashes(fig, frame: pd.DataFrame, *, radius: float = 4.0) -> list:
    """Labels over another label of the same axes, or over a point (a marker of ``radius``
    points) shown in the axes."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    found = []
    for ax in fig.axes:
        texts = [t for t in ax.texts if t.get_text()]
        boxes = [t.get_window_extent(renderer) for t in texts]
        points = ax.transData.transform(frame[["accuracy", "fairness"]].to_numpy())
        area = ax.get_window_extent(renderer)
        shown = (
            (points[:, 0] >= area.x0)
            & (points[:, 0] <= area.x1)
            & (points[:, 1] >= area.y0)
            & (points[:, 1] <= area.y1)
        )
        r = radius * fig.dpi / 72
        for i, box in enumerate(boxes):
            found += [
                (texts[i].get_text(), "label") for other in boxes[i + 1 :] if box.overlaps(other)
            ]
            covered = (
                (points[:, 0] + r > box.x0)
                & (points[:, 0] - r < box.x1)
                & (points[:, 1] + r > box.y0)
                & (points[:, 1] - r < box.y1)
            )
            if (covered & shown).any():
                found.append((texts[i].get_text(), "point"))
        # the lines joining labels set apart to their points cross no label and each other not
        leaders = [
            ax.transData.transform(np.column_stack(line.get_data()))
            for line in ax.get_lines()
            if line.get_color() == "#888888"
        ]
        for i, leader in enumerate(leaders):
            inner = leader[0] + np.linspace(0.02, 0.98, 50)[:, None] * (leader[1] - leader[0])
            for box in boxes:
                inside = (inner[:, 0] > box.x0) & (inner[:, 0] < box.x1)
                inside &= (inner[:, 1] > box.y0) & (inner[:, 1] < box.y1)
                found += [("line", "label")] if inside.any() else []
            found += [("line", "line") for other in leaders[i + 1 :] if plots._cross(leader, other)]
    return found


def test_small_figure(small):
    fig = pareto_figure(small, inset_max=None)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert len(fig.axes) == 1 and not ax.child_axes
    # total FNMR 0.02 to 0.3: more than a decade, a log axis
    assert ax.get_xscale() == "log"
    assert ax.get_xlabel() == "Total FNMR (lower is better, log scale)"
    assert ax.get_ylabel() == "GARBE (alpha=0.5), lower is fairer"
    assert "2 of 4 algorithms on the Pareto frontier" in ax.get_title(loc="left")
    assert "equal group weights" in ax.get_title(loc="left")
    line = _frontier_line(ax)
    np.testing.assert_allclose(line.get_xdata(), [0.02, 0.03])
    assert _texts(ax) == {"a", "b", "c", "d"}  # few algorithms: every one named
    assert _clashes(fig, small) == []


def test_a_linear_axis_within_a_decade_and_names_as_written():
    names = ["vendor-$\\frac$", "a_b^c", "50%", "x{y}", "$x$"]
    table = read_rates(
        pd.DataFrame(
            {
                "Algorithm": names,
                "FMR.F": [1e-4] * 5,
                "FMR.M": [1e-4] * 5,
                "FNMR.F": [0.010, 0.012, 0.030, 0.02, 0.05],
                "FNMR.M": [0.030, 0.012, 0.050, 0.03, 0.06],
            }
        )
    )
    frame = frontier_frame(table)
    fig = pareto_figure(frame, inset_max=None)
    assert fig.axes[0].get_xscale() == "linear"
    data = record(fig)  # mathtext would refuse '$\\frac$'
    assert named(data, names) == set(names)
    assert set(names) <= set(data["svg"])
    assert faults(data, names=names)["raw markup"] == []
    assert _clashes(fig, frame) == []


def test_annex15_log_axis_names_the_frontier(annex15):
    frame = frontier_frame(annex15)
    fig = pareto_figure(frame)
    assert len(fig.axes) == 1  # the log axis spreads the accurate algorithms: no zoom
    main = fig.axes[0]
    assert main.get_xscale() == "log"
    assert main.get_xlabel() == "Total FNMR (lower is better, log scale)"
    assert _texts(main) == {
        "didiglobalface-001",
        "alphaface-001",
        "tevian-005",
        "intellifusion-001",
        "shaman-001",
        "microfocus-002",
        "nodeflux-001",
    }
    np.testing.assert_allclose(
        _frontier_line(main).get_xdata(), np.sort(frame.loc[frame["on_frontier"], "accuracy"])
    )
    assert _clashes(fig, frame) == []
    assert all(found == [] for found in faults(record(fig)).values())


def test_annex15_linear_axis_zooms_beside_the_plot(annex15):
    frame = frontier_frame(annex15)
    fig = pareto_figure(frame, log_x=False)
    main, zoom = _zoom(fig)
    assert zoom not in main.child_axes and main.get_xscale() == "linear"
    assert zoom.get_xlim()[1] == pytest.approx(0.01, rel=0.05)
    assert _texts(zoom) == {
        "didiglobalface-001",
        "alphaface-001",
        "intellifusion-001",
        "tevian-005",
    }
    assert _texts(main) == {"shaman-001", "microfocus-002", "nodeflux-001"}
    # the zoomed region is outlined on the main plot; no connector lines cross the data
    outline = [p for p in main.patches if isinstance(p, Rectangle)]
    assert len(outline) == 1 and outline[0].get_x() < 0.003
    assert not [c for c in fig.findobj(ConnectionPatch)]
    assert _clashes(fig, frame) == []


def test_no_zoom_when_it_would_hold_every_algorithm(annex15):
    fmr_only = annex15.drop(columns="fnmr")
    frame = frontier_frame(fmr_only, accuracy="total_fmr")  # total FMR is below 1e-3
    fig = pareto_figure(frame)
    assert len(fig.axes) == 1 and fig.axes[0].get_xscale() == "linear"
    assert _clashes(fig, frame) == []


@pytest.mark.parametrize("seed", range(8))
def test_labels_keep_off_points_and_each_other(seed):
    """Up to twelve algorithms with long names in clusters: every one named, no label over
    a point or another label."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 13))
    centre = rng.uniform(0.01, 0.05, 2)
    fnmr = np.clip(centre[0] * rng.lognormal(0, 0.4, (n, 2)), 1e-3, 0.9)
    table = read_rates(
        pd.DataFrame(
            {
                "Algorithm": [f"vendor-{i:02d}-model.v{seed}" for i in range(n)],
                "FMR.F": 1e-4 * rng.lognormal(0, 0.2, n),
                "FMR.M": 1e-4 * rng.lognormal(0, 0.2, n),
                "FNMR.F": fnmr[:, 0],
                "FNMR.M": fnmr[:, 1],
            }
        )
    )
    frame = frontier_frame(table)
    fig = pareto_figure(frame, inset_max=None)
    assert _texts(fig.axes[0]) == set(frame.index)
    assert _clashes(fig, frame) == []
    plt.close(fig)


def _certain(frame: pd.DataFrame) -> pd.DataFrame:
    """The frontier-membership table (:attr:`UncertaintyResult.frontier`) of a frontier
    ``frame`` whose membership is certain: probability 1 on the frontier, 0 off it."""
    return pd.DataFrame(
        {
            "algorithm": frame.index,
            "total_fnmr": frame["accuracy"].to_numpy(),
            "value": frame["fairness"].to_numpy(),
            "on_frontier": frame["on_frontier"].to_numpy(),
            "frontier_probability": frame["on_frontier"].astype(float).to_numpy(),
        }
    )


def test_both_pareto_figures_follow_one_log_rule(annex15):
    from audit.report.plots.uncertainty import plot_frontier_probability

    for frame, log in ((frontier_frame(annex15), True), (_frame(0.02, 0.05), False)):
        probability = _certain(frame)
        assert plots.log_accuracy(frame["accuracy"]) is log
        assert (pareto_figure(frame).axes[0].get_xscale() == "log") is log
        assert (plot_frontier_probability(probability).get_xscale() == "log") is log
        plt.close("all")


def _frame(low: float, high: float) -> pd.DataFrame:
    return frontier_frame(
        read_rates(
            pd.DataFrame(
                {
                    "Algorithm": ["a", "b", "c"],
                    "FMR.F": [1e-4, 2e-4, 1e-4],
                    "FMR.M": [1e-4, 1e-4, 3e-4],
                    "FNMR.F": [low, high, (low + high) / 2],
                    "FNMR.M": [low, high, low],
                }
            )
        )
    )


def test_draws_into_a_given_ax(annex15):
    fig, (left, right) = plt.subplots(1, 2, figsize=(14, 5))
    out = pareto_figure(frontier_frame(annex15, "fdr"), ax=right, inset_max=None)
    assert out is fig
    assert right.get_ylabel() == "FDR (alpha=0.5), higher is fairer"
    assert not left.has_data()


def _label_places(annex15, make) -> list:
    """The labels (text, place) :func:`pareto_figure` and ``plot_frontier_probability``
    give the Annex 15 frontier on an axes of the figure ``make()`` returns."""
    from audit.report.plots.uncertainty import plot_frontier_probability

    frame = frontier_frame(annex15)
    probability = _certain(frame)
    places = []
    for draw in (
        lambda ax: pareto_figure(frame, ax=ax),
        lambda ax: plot_frontier_probability(probability, ax=ax),
    ):
        ax = make().add_subplot()
        draw(ax)
        places.append([(t.get_text(), t.get_position()) for t in ax.texts])
    plt.close("all")
    return places


@pytest.fixture(scope="module")
def agg_places(annex15):
    """The labels on pyplot's own (Agg) figure."""
    return _label_places(annex15, lambda: plt.figure(figsize=(8, 5.6)))


@pytest.mark.parametrize("canvas", ["none", "pdf", "subfigure"])
def test_labels_are_placed_on_a_figure_without_agg_s_canvas(annex15, agg_places, canvas):
    """A figure made without pyplot (``Figure()``, as on a web server) or on a PDF canvas
    has no renderer of its own to measure the labels with: matplotlib lends one, and
    every label is placed; a bare figure's are where pyplot's Agg figure has them, and so
    are those of an axes in a subfigure filling a pyplot figure."""
    from matplotlib.backends.backend_pdf import FigureCanvasPdf

    def made():
        if canvas == "subfigure":
            return plt.figure(figsize=(8, 5.6)).subfigures(1, 1)
        fig = Figure(figsize=(8, 5.6))
        if canvas == "pdf":
            FigureCanvasPdf(fig)
        return fig

    got = _label_places(annex15, made)
    frame = frontier_frame(annex15)
    named = set(plots._named(frame).index)  # the frontier, and points tied with it
    assert {name for name, _ in got[0]} == named >= set(frame.index[frame["on_frontier"]])
    assert [name for name, _ in got[1]] == [name for name, _ in agg_places[1]] != []
    if canvas != "pdf":
        assert got == agg_places


@pytest.mark.parametrize("layout", [None, "constrained"])
def test_the_legend_goes_under_the_plot_only_where_the_layout_makes_room(small, layout):
    """Alone on its figure, the plot has its legend under it where constrained layout makes
    room there (the figure's own, or a given ax on such a figure); on a figure without it
    the legend stays in the plot, off the x axis's label, and so does one in a subfigure."""
    fig, ax = plt.subplots(figsize=(8, 5.6), layout=layout)
    pareto_figure(small, ax=ax)
    sub = plt.figure(figsize=(12, 5), layout=layout).subfigures(1, 2)[0]
    inner = sub.add_subplot()
    pareto_figure(small, ax=inner)
    fig.draw_without_rendering()
    if layout == "constrained":
        assert len(fig.legends) == 1 and ax.get_legend() is None
        below = fig.legends[0].get_window_extent()
        assert below.y1 <= ax.xaxis.label.get_window_extent().y0
    else:
        assert not fig.legends and ax.get_legend() is not None
        assert ax.get_window_extent().contains(*ax.get_legend().get_window_extent().min)
    assert not sub.legends and inner.get_legend() is not None
    plt.close("all")


def test_bad_frame_and_log_errors(small):
    bare = pd.DataFrame({"accuracy": [0.1], "fairness": [0.2]})
    with pytest.raises(ValueError) as error:
        pareto_figure(bare)
    missing = ["on_frontier", "weakly_efficient"] + [f"attrs[{a!r}]" for a in plots._NEEDED_ATTRS]
    assert str(error.value) == plots.NOT_A_FRONTIER_FRAME.format(
        needed=list(plots._NEEDED_COLUMNS), missing=missing
    )
    zero = small.copy()
    zero.loc["a", "accuracy"] = 0.0
    with pytest.raises(ValueError) as error:
        pareto_figure(zero, log_x=True)
    assert str(error.value) == plots.LOG_NEEDS_POSITIVE.format(count=1, algorithms=["a"])
    # an accuracy of 0 cannot be on a log axis: the automatic rule keeps it linear
    assert pareto_figure(zero).axes[0].get_xscale() == "linear"
