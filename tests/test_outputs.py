"""Figures are written once as PNG and SVG, and the notebooks show the saved PNG."""

from __future__ import annotations

import matplotlib.pyplot as plt

from audit.report.outputs import save_figure, saved_image


def test_save_figure_writes_png_and_svg_and_keeps_the_layout_engine(tmp_path):
    fig, ax = plt.subplots(layout="constrained")
    ax.plot([0, 1], [0, 1])
    fig.colorbar(ax.scatter([0, 1], [0, 1], c=[0, 1]), ax=ax)
    engine = fig.get_layout_engine()
    paths = save_figure(fig, "a b", tmp_path)
    assert [p.name for p in paths] == ["a_b.png", "a_b.svg"]
    assert all(p.stat().st_size > 0 for p in paths)
    assert fig.get_layout_engine() is engine
    image = saved_image(paths)
    assert image.format == "png" and image.data == paths[0].read_bytes()


def test_save_figure_without_an_engine(tmp_path):
    fig, ax = plt.subplots()
    fig.colorbar(ax.scatter([0, 1], [0, 1], c=[0, 1]), ax=ax)
    paths = save_figure(fig, "plain", tmp_path)
    assert all(p.is_file() for p in paths)
    assert fig.get_layout_engine() is None


def test_save_figure_draws_names_as_written(tmp_path):
    """A figure made anywhere (a notebook's own title, a legend, tick labels) with a name
    that mathtext would refuse is saved, the name drawn as written."""
    name = r"vendor-$\frac$"
    fig, ax = plt.subplots(layout="constrained")
    ax.plot([0, 1], [0, 1], label=name)
    ax.legend()
    ax.set_xticks([0, 1], [name, "b"])
    fig.suptitle(f"Groups by {name}")
    paths = save_figure(fig, "math", tmp_path)
    assert [p.suffix for p in paths] == [".png", ".svg"]
    from matplotlib.text import Text

    # every text, tick labels made by the drawing included, is drawn as written
    texts = fig.findobj(Text)
    assert name in {t.get_text() for t in texts}
    assert not any(t.get_parse_math() for t in texts)
    plt.close(fig)
