"""Figures are written once as PNG and SVG, and the notebooks show the saved PNG."""

from __future__ import annotations

import subprocess
import sys

import matplotlib.pyplot as plt
import pandas as pd
from figcheck import faults, record
from matplotlib.text import Text

from audit.report.outputs import save_figure, saved_image
from audit.report.text import escape_mathtext


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
