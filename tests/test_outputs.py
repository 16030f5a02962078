"""Figures are written once as PNG and SVG, and the notebooks show the saved PNG."""

from __future__ import annotations

import io
import subprocess
import sys

import matplotlib
import matplotlib.pyplot as plt
import pandas as pd
import pytest
from figcheck import faults, record
from matplotlib.text import Text

from audit.report.outputs import (
    FIGURE_FORMATS,
    SVG_HASHSALT,
    figure_title,
    render_figure,
    save_figure,
    saved_image,
)
from audit.report.plots import theme
from audit.report.text import escape_mathtext


def test_save_figure_writes_png_and_svg_and_keeps_the_layout_engine(tmp_path):
    fig, ax = plt.subplots(layout="constrained")
    ax.plot([0, 1], [0, 1])
    fig.colorbar(ax.scatter([0, 1], [0, 1], c=[0, 1]), ax=ax)
    engine = fig.get_layout_engine()
    paths = save_figure(fig, "a_b", tmp_path)
    assert [p.name for p in paths] == ["a_b.png", "a_b.svg"]
    assert all(p.stat().st_size > 0 for p in paths)
    # a name written otherwise as a file name is told apart by its hash: "a b" and "a_b"
    # (two datasets' labels in audit compare) wrote one file, the second over the first
    other = save_figure(fig, "a b", tmp_path)
    assert [p.name for p in other] == ["a_b-c8687a08.png", "a_b-c8687a08.svg"]
    assert len(list(tmp_path.glob("figures/*"))) == 4
    assert fig.get_layout_engine() is engine
    image = saved_image(paths)
    assert image.format == "png" and image.data == paths[0].read_bytes()


def _savefig_twice(fig, dpi=150):
    """The oracle: matplotlib's savefig of the PNG with the figure's layout engine (which
    lays it out, then draws it), then of the SVG with the engine off (that layout kept);
    each file titled as render_figure titles it (tested on its own below)."""
    engine, files = fig.get_layout_engine(), []
    title = figure_title(fig)
    with matplotlib.rc_context({**theme(), "svg.hashsalt": SVG_HASHSALT}):
        for suffix in FIGURE_FORMATS:
            buffer = io.BytesIO()
            metadata = {"Date": None} if suffix == "svg" else {"Software": None}
            metadata |= {"Title": title} if title else {}
            fig.savefig(buffer, format=suffix, dpi=dpi, metadata=metadata)
            files.append(buffer.getvalue())
            fig.set_layout_engine(None)
    fig.set_layout_engine(engine)
    return files


def _panels(label):
    from audit.report.plots.ffmc import ffmc_panels

    alpha = [0.0, 0.25, 0.5, 0.75, 1.0]
    detail = pd.DataFrame(  # terms over decades: a log axis, its tick labels mathtext
        {
            "alpha": 0.5,
            "algorithm": ["a", "b", "c", "d"],
            "value": [0.2, 0.5, 0.9, 0.4],
            "fmr_term": [1e-5, 2e-3, 0.5, 0.01],
            "fnmr_term": [1e-4, 0.3, 0.04, 2e-6],
        }
    )
    by_alpha = pd.DataFrame({"alpha": alpha})
    for column in ("value", "share"):
        for i, stat in enumerate(("min", "q25", "median", "mean", "q75", "max")):
            by_alpha[f"{column}_{stat}"] = [min(1.0, a * 0.5 + 0.1 * i) for a in alpha]
    return ffmc_panels(detail, by_alpha, label=label, crossing=0.4, alpha=0.5)


def test_a_laid_out_figure_has_the_bytes_savefig_gives_it_and_keeps_its_canvas():
    """Laid out once and drawn once per file, a constrained-layout figure (with a
    suptitle, legends and a long label) gives the very bytes of the oracle; the figure
    keeps its canvas, dpi and engine, and renders the same PNG again (a second SVG of
    one figure numbers its elements on, by savefig as by the oracle)."""
    oracle = _savefig_twice(_panels("a long measure label, to move the layout"))
    fig = _panels("a long measure label, to move the layout")
    canvas, dpi, engine = fig.canvas, fig.dpi, fig.get_layout_engine()
    rendered = render_figure(fig)
    assert rendered == oracle
    assert (fig.canvas, fig.dpi, fig.get_layout_engine()) == (canvas, dpi, engine)
    assert render_figure(fig)[0] == oracle[0]
    assert render_figure(fig, dpi=80)[0] != oracle[0]  # the layout is made at the dpi asked
    plt.close("all")


def test_on_aggs_own_canvas_one_renderer_lays_out_and_draws_the_png(monkeypatch):
    """A figure on Agg's own canvas (a kernel's, a drawing worker's) is laid out by the
    renderer that then draws its PNG (its texts measured once); a figure on another
    canvas (a window's, here a subclass) is laid out on a lent one and keeps its own.
    Both give the oracle's bytes."""
    from matplotlib.backends import backend_agg

    class Windowed(backend_agg.FigureCanvasAgg):
        pass

    made = []
    original = backend_agg.RendererAgg.__init__

    def counted(self, *args, **kwargs):
        made.append(args)
        original(self, *args, **kwargs)

    monkeypatch.setattr(backend_agg.RendererAgg, "__init__", counted)
    oracle = _savefig_twice(_panels("label"))
    for canvas_class, renderers in ((backend_agg.FigureCanvasAgg, 1), (Windowed, 2)):
        fig = _panels("label")
        canvas = canvas_class(fig)
        made.clear()
        assert render_figure(fig) == oracle
        assert len(made) == renderers and fig.canvas is canvas
    plt.close("all")


def _titled(kind: str):
    """A themed figure laid out by constrained layout, its title on the left (the
    theme's): ``plain``; ``offset``, a y axis of millionths, which matplotlib labels with
    an offset text where the title goes; ``top``, x tick labels on top; ``twin``, a second
    y axis; ``aligned``, beside an axes with tick labels on top, titles aligned; ``colour
    bar``, with a titled colour bar extended at both ends; ``inside``, the title inside
    the axes, no x axis shown."""
    from audit.report.plots import themed

    @themed
    def make():
        fig, ax = plt.subplots(figsize=(4, 3), layout="constrained")
        ax.plot([0, 1, 2], [1e-6, 3e-6, 2e-6] if kind == "offset" else [1, 3, 2])
        ax.set_title("a title where an offset text goes")
        if kind == "top":
            ax.xaxis.tick_top()
        if kind == "twin":
            ax.twinx().plot([0, 1, 2], [3, 1, 2])
        if kind == "aligned":  # beside an axes whose title is moved, level with it
            other = fig.add_subplot(122)
            ax.set_subplotspec(fig.add_gridspec(1, 2)[0])
            other.xaxis.tick_top()
            other.set_title("moved over the tick labels")
            fig.align_titles()
        if kind == "inside":  # matplotlib moves a title reaching down into its axes
            ax.xaxis.set_visible(False)
            ax.set_title("a title where an offset text goes", pad=-14)
        if kind == "colour bar":  # its outline reaches past its axes, to the triangles
            bar = fig.colorbar(ax.scatter([0, 1, 2], [1, 3, 2], c=[0, 1, 2]), extend="both")
            bar.ax.set_title("a title over a colour bar")
        return fig

    return make()


def _title(fig) -> Text:
    ax = fig.axes[0]
    [title] = [
        c for c in ax.get_children() if isinstance(c, Text) and c.get_text()[:7] == "a title"
    ]
    return title


KINDS = ["plain", "offset", "top", "twin", "colour bar", "aligned", "inside"]


@pytest.mark.parametrize("kind", KINDS)
def test_titles_are_where_matplotlib_places_them(kind):
    """Laid out once and drawn once per file, a titled figure gives the oracle's bytes,
    where matplotlib leaves a title at the top of its axes and where it moves one clear
    of what reaches above the axes (an offset text, tick labels on top, an aligned
    title, the title's own reach into its axes)."""
    oracle_figure = _titled(kind)
    oracle = _savefig_twice(oracle_figure)
    moved = _title(oracle_figure).get_position()[1] != 1.0
    assert moved == (kind in ("offset", "top", "aligned", "inside"))  # the oracle's
    assert render_figure(_titled(kind)) == oracle
    plt.close("all")


def test_what_matplotlib_does_not_lay_out_is_drawn_as_savefig_draws_it():
    """A figure without axes (no layout, no warning) and a compressed layout of axes
    from two grids (which the engine refuses, as matplotlib's drawing lets it) give
    the oracle's bytes."""
    import warnings

    def empty():
        fig = plt.figure(layout="constrained")
        fig.suptitle("only a title")
        return fig

    def two_grids():
        fig = plt.figure(layout="compressed")
        fig.add_subplot(121).plot([0, 1])
        fig.add_subplot(133).plot([1, 0])
        return fig

    for make in (empty, two_grids):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert render_figure(make()) == _savefig_twice(make())
    plt.close("all")


def test_a_users_default_layout_does_not_lay_the_figure_out_again():
    """Under ``figure.constrained_layout.use`` or ``figure.autolayout``, taking the engine
    off would put a default one in its place, laying the figure out again without its
    own settings: the files are those made without these settings."""

    def padded():
        fig, axes = plt.subplots(1, 2, layout="constrained")
        fig.get_layout_engine().set(w_pad=0.5)
        axes[0].set_title("t")
        axes[1].set_ylabel("y")
        return fig

    expected = render_figure(padded())
    for rc in ({"figure.constrained_layout.use": True}, {"figure.autolayout": True}):
        with matplotlib.rc_context(rc):
            assert render_figure(padded()) == expected
    plt.close("all")


def test_save_figure_without_an_engine(tmp_path):
    fig, ax = plt.subplots()
    fig.colorbar(ax.scatter([0, 1], [0, 1], c=[0, 1]), ax=ax)
    paths = save_figure(fig, "plain", tmp_path)
    assert all(p.is_file() for p in paths)
    assert fig.get_layout_engine() is None


def test_save_figure_draws_escaped_names_as_written_and_mathtext_as_mathtext(tmp_path):
    """A figure made anywhere (a notebook's own title, a legend, tick labels) with names
    that mathtext would refuse is saved, the names drawn as written where they were
    escaped, and the log axis's tick labels (mathtext) drawn as numbers."""
    name = r"vendor-$\frac$"
    fig, ax = plt.subplots(layout="constrained")
    ax.plot([1, 10, 100], [0, 1, 2], label=escape_mathtext(name))
    ax.set_xscale("log")
    ax.legend()
    ax.set_yticks([0, 2], [escape_mathtext(name), "b"])
    fig.suptitle(f"Groups by {escape_mathtext(name)}")
    paths = save_figure(fig, "math", tmp_path)
    assert [p.suffix for p in paths] == [".png", ".svg"]
    data = record(fig)
    seen = {t["seen"] for t in data["texts"]}
    assert {name, f"Groups by {name}", "10\N{SUPERSCRIPT ONE}"} - seen == {"10\N{SUPERSCRIPT ONE}"}
    assert {"100", "101", "102"} <= seen  # 10^0, 10^1, 10^2 drawn from mathtext
    assert faults(data, names=[name])["raw markup"] == []
    assert any(t.get_parse_math() for t in fig.findobj(Text))
    plt.close(fig)


def test_a_themed_figure_saves_to_the_same_bytes_every_time(tmp_path):
    from audit.report.plots.ffmc import plot_alpha_share

    by_alpha = pd.DataFrame(
        {
            "alpha": [0.0, 0.5, 1.0],
            "share_q25": [0.0, 0.4, 1.0],
            "share_q75": [0.0, 0.6, 1.0],
            "share_median": [0.0, 0.5, 1.0],
            "share_mean": [0.0, 0.55, 1.0],
        }
    )
    saved = []
    for folder in ("one", "two"):
        ax = plot_alpha_share(by_alpha, crossing=0.5)
        saved.append([p.read_bytes() for p in save_figure(ax.figure, "d", tmp_path / folder)])
        plt.close(ax.figure)
    assert saved[0] == saved[1]
    assert b"<dc:date>" not in saved[0][1]


def test_the_run_header_records_matplotlibs_version_without_importing_it(annex15_file):
    # the command line writes the manifest's header before any figure: matplotlib's
    # installed version, the one a kernel imports, without the import
    code = (
        "import sys\n"
        "from audit.report.outputs import run_header\n"
        f"header = run_header({str(annex15_file)!r}, {{}})\n"
        "assert 'matplotlib' not in sys.modules\n"
        "import matplotlib, numpy, pandas\n"
        "print(header['matplotlib'] == matplotlib.__version__, header['numpy'] == "
        "numpy.__version__, header['pandas'] == pandas.__version__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True True True\n"


def test_two_pairs_of_datasets_never_share_a_figure_name():
    """A figure of two datasets was named ``<prefix>_<first>_<second>``: the pairs
    ``x``, ``y_z`` and ``x_y``, ``z`` wrote one file, the second pair's figure over the
    first's, shown under both captions. Every pair of labels made of characters a file
    name keeps or changes (``_``, a space, ``+``) is named apart, also on a disk that
    does not tell case apart (``A`` and ``a``), and a long label makes a name the system
    takes (130 letters failed the notebook: "File name too long")."""
    import itertools

    from audit.report.outputs import STEM_BYTES, _slug, pair_name

    labels = ["".join(p) for n in (1, 2) for p in itertools.product("xX_ +", repeat=n)]
    labels += ["y", "z", "x_y", "y_z", "L" * 130, "M" + "L" * 130, "é" * 200, "é" * 201]
    names = {}
    for first, second in itertools.permutations(labels, 2):
        name = _slug(pair_name("compare_ranks", first, second))
        assert names.setdefault(name.casefold(), (first, second)) == (first, second), name
        assert len(name.encode()) <= STEM_BYTES
    singles = {_slug(f"compare_rank_agreement_{label}").casefold() for label in labels}
    assert len(singles) == len(labels)
    # labels a file name keeps, in lower case and without '_', keep their plain name
    assert pair_name("compare_ranks", "annex15", "frvt-11.v2") == "compare_ranks_annex15_frvt-11.v2"
    assert _slug("compare_ranks_annex15_frvt-11.v2") == "compare_ranks_annex15_frvt-11.v2"
