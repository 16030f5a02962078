"""The Pareto figure (Howard et al. Fig. 4)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

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


def _assert_hides_nothing(fig, main, zoom, frame):
    """An inset drawn over the main plot must not cover any algorithm's point."""
    if zoom not in main.child_axes:
        return
    fig.canvas.draw()
    box = zoom.get_window_extent(fig.canvas.get_renderer())
    xy = main.transData.transform(frame[["accuracy", "fairness"]].to_numpy())
    covered = (
        (xy[:, 0] >= box.x0) & (xy[:, 0] <= box.x1) & (xy[:, 1] >= box.y0) & (xy[:, 1] <= box.y1)
    )
    assert not covered.any(), list(frame.index[covered])


def _texts(ax):
    return {t.get_text() for t in ax.texts}


def test_small_figure(small):
    fig = pareto_figure(small, inset_max=None)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert len(fig.axes) == 1 and not ax.child_axes
    assert ax.get_xlabel() == "Total FNMR (lower is better)"
    assert ax.get_ylabel() == "GARBE (alpha=0.5), lower is fairer"
    assert "2 of 4 algorithms on the Pareto frontier" in ax.get_title(loc="left")
    assert "equal group weights" in ax.get_title(loc="left")
    line = _frontier_line(ax)
    np.testing.assert_allclose(line.get_xdata(), [0.02, 0.03])
    assert _texts(ax) == {"a", "b"}


def test_annex15_figure_has_inset_with_names(annex15):
    frame = frontier_frame(annex15)
    fig = pareto_figure(frame)
    main, inset = _zoom(fig)
    _assert_hides_nothing(fig, main, inset, frame)
    assert inset.get_xlim()[1] == pytest.approx(0.01, rel=0.05)
    assert _texts(inset) == {
        "didiglobalface-001",
        "alphaface-001",
        "intellifusion-001",
        "tevian-005",
    }
    assert _texts(main) == {"shaman-001", "microfocus-002", "nodeflux-001"}
    np.testing.assert_allclose(
        _frontier_line(main).get_xdata(), np.sort(frame.loc[frame["on_frontier"], "accuracy"])
    )
    assert main.get_xscale() == "linear"
    # no label overlaps another on the same axes
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in (main, inset):
        boxes = [t.get_window_extent(renderer) for t in ax.texts]
        for i, box in enumerate(boxes):
            assert not any(box.overlaps(other) for other in boxes[i + 1 :])


def test_annex15_log_axis(annex15):
    frame = frontier_frame(annex15)
    fig = pareto_figure(frame, log_x=True)
    main, zoom = _zoom(fig)
    assert main.get_xscale() == "log"
    assert main.get_xlabel() == "Total FNMR (lower is better, log scale)"
    assert zoom.get_xscale() == "linear"
    _assert_hides_nothing(fig, main, zoom, frame)


def test_side_panel_when_an_inset_would_hide_points(annex15):
    # the log axis spreads the 126 algorithms over the whole plot: no inset slot is empty
    fig = pareto_figure(frontier_frame(annex15), log_x=True)
    main, zoom = _zoom(fig)
    assert zoom not in main.child_axes
    assert zoom.get_xlabel() == "Total FNMR (lower is better)"


def test_draws_into_a_given_ax(annex15):
    fig, (left, right) = plt.subplots(1, 2, figsize=(14, 5))
    out = pareto_figure(frontier_frame(annex15, "fdr"), ax=right, inset_max=None)
    assert out is fig
    assert right.get_ylabel() == "FDR (alpha=0.5), higher is fairer"
    assert not left.has_data()


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
