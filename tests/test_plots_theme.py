"""The report's look: seaborn's style, context and palette, written out in
:mod:`audit.report.plots` so that drawing imports no seaborn."""

import subprocess
import sys

import numpy as np
import pytest
import seaborn as sns
from processes import imported_by

from audit.report import plots


def test_the_written_out_style_is_seaborns():
    """Every value seaborn sets for the style and context, and no other, the same to the
    last bit (a seaborn that changes them fails here: write out the new ones)."""
    expected = dict(sns.axes_style(plots.STYLE))
    expected.update(sns.plotting_context(plots.CONTEXT, font_scale=plots.FONT_SCALE))
    assert plots.SEABORN_RC == expected
    assert list(plots.SEABORN_PALETTE) == sns.color_palette(plots.PALETTE).as_hex()


def test_the_theme_is_seaborns_with_the_reports_settings_on_top():
    theme = plots.theme()
    for key, value in plots.SEABORN_RC.items():
        if key not in plots._EXTRA and key != "font.family":
            assert theme[key] == value, key
    # the first of seaborn's sans-serif fonts installed (matplotlib's own DejaVu Sans,
    # where Arial is not), DejaVu Sans after it if it is another, then the first
    # fallback installed, if any
    from matplotlib import font_manager

    installed = {font.name for font in font_manager.fontManager.ttflist}
    sans = [f for f in plots.SEABORN_RC["font.sans-serif"] if f in installed]
    fallbacks = [f for f in plots.FALLBACK_FONTS if f in installed]
    assert "DejaVu Sans" in sans
    broad = ["DejaVu Sans"] if sans[0] != "DejaVu Sans" else []
    assert theme["font.family"] == sans[:1] + broad + fallbacks[:1]
    for key, value in plots._EXTRA.items():
        assert theme[key] == value, key
    assert theme["image.cmap"] == "viridis"  # ours, over seaborn's "rocket"
    assert theme["axes.prop_cycle"].by_key()["color"] == list(plots.SEABORN_PALETTE)
    assert plots.colour(plots.VERMILION) == "#d55e00"


def test_drawing_and_saving_a_figure_imports_no_seaborn(tmp_path):
    code = (
        "import sys, matplotlib\n"
        "matplotlib.use('Agg')\n"
        "import matplotlib.pyplot as plt\n"
        "from audit.report.plots import themed\n"
        "from audit.report.outputs import save_figure\n"
        "fig = themed(lambda: plt.subplots(layout='constrained')[0])()\n"
        "fig.axes[0].plot([1, 2], [3, 4])\n"
        f"save_figure(fig, 'x', {str(tmp_path)!r})\n"
    )
    assert imported_by(code, ["seaborn", "scipy.stats"]) == []
    assert (tmp_path / "figures" / "x.png").stat().st_size > 1000


def _bars(ax) -> list[tuple]:
    return [
        (p.get_x(), p.get_width(), p.get_height(), p.get_facecolor(), p.get_edgecolor())
        + (p.get_linewidth(), tuple(p.sticky_edges.y))
        for p in ax.patches
    ]


@pytest.mark.parametrize(
    "data, options",
    [
        (np.random.default_rng(0).normal(0.6, 0.01, 200), dict(bins=15, binrange=(0.57, 0.64))),
        (np.random.default_rng(1).normal(50, 9, 200), dict(bins="auto")),
        (np.random.default_rng(2).integers(3, 11, 200).astype(float), dict(discrete=True)),
        (np.full(40, 0.25), dict(bins=1, binrange=(0.2475, 0.2525))),
    ],
    ids=["bins over a range", "numpy's automatic bins", "whole numbers", "one value"],
)
def test_a_histogram_has_the_bars_seaborn_draws(data, options):
    """:func:`audit.report.plots.uncertainty.histogram` draws, without seaborn, the bars
    seaborn's ``histplot`` draws: the same edges (to the last bit or two), counts,
    colours, line and stickiness, and the y axis's label."""
    import matplotlib.pyplot as plt

    from audit.report.plots.uncertainty import histogram

    discrete = options.pop("discrete", False)
    # a colour given, and none: the axes' next colour, the second time the next but one
    for style, times in ((dict(color=plots.colour(plots.BLUE)), 1), ({}, 2)):
        fig, (ours, theirs) = plt.subplots(1, 2)
        for _ in range(times):
            histogram(ours, data, discrete=discrete, **options, **style)
            sns.histplot(
                x=data, discrete=discrete, **options, **style, edgecolor="white", linewidth=0.3,
                ax=theirs,
            )  # fmt: skip
        mine, seaborns = _bars(ours), _bars(theirs)
        assert len(mine) == len(seaborns) > 0
        for a, b in zip(mine, seaborns, strict=True):
            np.testing.assert_allclose(a[:2], b[:2], rtol=1e-14)
            assert a[2:] == b[2:]
        assert ours.get_ylabel() == theirs.get_ylabel() == "Count"
        assert ours.get_xlim() == pytest.approx(theirs.get_xlim(), rel=1e-12)
        assert ours.get_ylim() == theirs.get_ylim()
        plt.close(fig)


def test_the_statistics_figure_imports_no_seaborn():
    code = (
        "import sys, matplotlib\n"
        "matplotlib.use('Agg')\n"
        "import numpy as np, pandas as pd\n"
        "from audit.report.outputs import render_figure\n"
        "from audit.report.plots.uncertainty import plot_statistics\n"
        "rng = np.random.default_rng(0)\n"
        "replicates = pd.DataFrame({'garbe.max': rng.normal(0.6, 0.01, 50),\n"
        "                           'frontier.size': rng.integers(3, 9, 50)})\n"
        "render_figure(plot_statistics(replicates, statistics=list(replicates)))\n"
    )
    assert imported_by(code, ["seaborn", "scipy.stats"]) == []


def test_vlag_is_seaborns():
    """The rank-agreement scale, written out, is seaborn's ``vlag`` to the last bit, its
    colours for missing and out-of-range values included."""
    import matplotlib as mpl

    from audit.report.plots.colormaps import vlag

    seaborns, ours = mpl.colormaps["vlag"], vlag()  # registered by seaborn's import
    at = np.concatenate([np.linspace(-0.5, 1.5, 2001), [np.nan, -np.inf, np.inf]])
    assert ours.N == seaborns.N == 256 and ours.name == seaborns.name
    np.testing.assert_array_equal(ours(at), seaborns(at))
    assert ours(np.ma.masked_invalid([np.nan]))[0].tolist() == [0.0, 0.0, 0.0, 0.0]


def test_a_heat_map_takes_matplotlibs_and_seaborns_colour_map_names(tmp_path):
    """The cross-group heat maps take any of matplotlib's colour maps by name, and
    seaborn's, as when seaborn drew them (vlag from the written-out colours, the others
    from seaborn, imported for them, in a fresh process; None is seaborn's default,
    rocket; a list of colours is a map of them); an unknown name is refused with the
    names to give, and the closest."""
    code = (
        "import sys, matplotlib\n"
        "matplotlib.use('Agg')\n"
        "import numpy as np, pandas as pd\n"
        "from audit.report.plots.crossgroup import pair_heatmaps\n"
        "pairs = pd.DataFrame({'algorithm': ['a'] * 4, 'group_1': list('xxyy'),\n"
        "                      'group_2': list('xyxy'), 'fmr': [1e-3, 1e-5, 2e-5, 1e-4]})\n"
        "def colours(cmap):\n"
        "    return pair_heatmaps(pairs, ['a'], cmap=cmap).axes[0].collections[0].cmap\n"
        "print(colours('magma').name, colours('vlag_r').name, 'seaborn' in sys.modules)\n"
        "print(colours('rocket').name, 'seaborn' in sys.modules, colours(None).name)\n"
        "import seaborn\n"
        "at = np.linspace(0, 1, 101)\n"
        "print(all(np.array_equal(colours(n)(at), matplotlib.colormaps[n](at))\n"
        "          for n in ('vlag', 'vlag_r', 'mako_r')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["magma vlag_r False", "rocket True rocket", "True"]
    import pandas as pd

    from audit.exceptions import UsageError
    from audit.report.plots.colormaps import UNKNOWN_MAP
    from audit.report.plots.crossgroup import pair_heatmaps

    pairs = pd.DataFrame({"algorithm": ["a"], "group_1": ["x"], "group_2": ["x"], "fmr": [1e-4]})
    seaborns = "rocket, mako, icefire, vlag, flare, crest"
    with pytest.raises(UsageError) as refused:
        pair_heatmaps(pairs, ["a"], cmap="virdis")
    assert str(refused.value) == UNKNOWN_MAP.format(
        name="virdis", hint=" (did you mean 'viridis'?)", seaborn=seaborns
    )
    with pytest.raises(UsageError) as refused:
        pair_heatmaps(pairs, ["a"], cmap=3)
    assert str(refused.value) == UNKNOWN_MAP.format(name=3, hint="", seaborn=seaborns)
    # a list of colours, as seaborn reads one
    listed = pair_heatmaps(pairs, ["a"], cmap=["red", "blue"]).axes[0].collections[0].cmap
    assert listed.N == 2 and listed(1.0)[:3] == (0.0, 0.0, 1.0)


def _heat_map_options(kind: str):
    """The data and options of the cross-group report's heat map (a log scale, two
    cells left blank, one of them NaN, texts written in the cells, a colour bar beside)
    and of the rank-agreement one (the upper triangle masked, values written with a
    format, a diverging scale of fixed range), as those figures pass them."""
    import pandas as pd
    from matplotlib.colors import LogNorm

    from audit.report.plots.colormaps import vlag

    rng = np.random.default_rng(1)
    if kind == "cross-group":
        values = 10 ** rng.uniform(-6, -2, (5, 5))
        values[1, 2], values[3, 3] = 0.0, np.nan
        hidden = ~np.isfinite(values) | (values <= 0)
        names = ["A", "B", "name with $", "D", "E"]
        data = pd.DataFrame(values, index=names, columns=names).where(~hidden)
        texts = np.array([[f"{x:.1e}" for x in row] for row in values], dtype=object)
        options = dict(
            norm=LogNorm(1e-6, 1e-2), cmap="viridis", mask=hidden, annot=texts, fmt="",
            annot_kws={"fontsize": 7}, square=True, linewidths=0.5, linecolor="white",
            cbar=True, cbar_kws={"label": "FMR (log scale)", "shrink": 0.7, "aspect": 25},
            xticklabels=names, yticklabels=names,
        )  # fmt: skip
        return data, options, options
    values = rng.uniform(-1, 1, (6, 6))
    values = (values + values.T) / 2
    np.fill_diagonal(values, 1.0)
    names = [f"measure {i}" for i in range(6)]
    options = dict(
        mask=np.triu(np.ones((6, 6), dtype=bool), k=1), vmin=-1, vmax=1, annot=True,
        fmt=".2f", annot_kws={"fontsize": 6.5}, square=True, linewidths=0.5,
        linecolor="white", cbar_kws={"label": "Kendall's tau-b"}, xticklabels=names,
        yticklabels=names,
    )  # fmt: skip
    return values, options | {"cmap": vlag()}, options | {"cmap": "vlag"}


@pytest.mark.parametrize("layout", [None, "constrained"])
@pytest.mark.parametrize("kind", ["cross-group", "rank agreement"])
def test_a_heat_map_has_the_bytes_seaborn_draws(kind, layout, monkeypatch):
    """:func:`audit.report.plots.heatmap.heatmap` draws, without seaborn, the PNG that
    ``seaborn.heatmap`` draws with the same options, byte for byte.  On a figure laid
    out by matplotlib's constrained layout this holds once seaborn's own draw of the
    whole figure, which ours leaves out, is left out of seaborn's too: that draw lays
    the figure out early, and the layout found again on saving then differs by a pixel
    or two."""
    import io

    import matplotlib.pyplot as plt

    from audit.report.plots.heatmap import heatmap

    if layout:
        import seaborn.matrix

        monkeypatch.setattr(seaborn.matrix, "_draw_figure", lambda figure: None)
    data, ours, seaborns = _heat_map_options(kind)
    drawn = []
    for draw in (
        lambda ax: heatmap(ax, data, **ours),
        lambda ax: sns.heatmap(data, ax=ax, **seaborns),
    ):
        with plt.rc_context(plots.theme()):
            fig, ax = plt.subplots(figsize=(5, 4), layout=layout)
            draw(ax)
            ax.tick_params(axis="x", labelrotation=90)  # as the figures set them after
            ax.tick_params(axis="y", labelrotation=0)
            png = io.BytesIO()
            fig.savefig(png, format="png")
            plt.close(fig)
        drawn.append(png.getvalue())
    assert len(drawn[0]) > 10_000
    assert drawn[0] == drawn[1]


def test_the_heat_maps_import_no_seaborn(tmp_path):
    """The cross-group heat maps and the rank-agreement heat map are drawn and saved
    without importing seaborn or scipy.stats."""
    code = (
        "import sys, matplotlib\n"
        "matplotlib.use('Agg')\n"
        "import pandas as pd\n"
        "from audit.report.outputs import save_figure\n"
        "from audit.report.plots.crossgroup import pair_heatmaps\n"
        "from audit.report.plots.compare import agreement_heatmap\n"
        "pairs = pd.DataFrame({'algorithm': ['a'] * 4, 'group_1': list('xxyy'),\n"
        "                      'group_2': list('xyxy'), 'fmr': [1e-3, 1e-5, 0.0, 1e-4]})\n"
        f"save_figure(pair_heatmaps(pairs, ['a']), 'pairs', {str(tmp_path)!r})\n"
        "agreement = pd.DataFrame({'first': ['m', 'm', 'n'], 'second': ['n', 'o', 'o'],\n"
        "                          'tau': [0.5, -0.2, 0.9]})\n"
        "ax = agreement_heatmap(agreement, ['m', 'n', 'o'], title='t')\n"
        f"save_figure(ax.figure, 'agreement', {str(tmp_path)!r})\n"
    )
    assert imported_by(code, ["seaborn", "scipy.stats"]) == []
    for name in ("pairs", "agreement"):
        assert (tmp_path / "figures" / f"{name}.png").stat().st_size > 1000


def test_where_arial_is_installed_dejavu_sans_draws_what_arial_lacks(tmp_path):
    """On a machine with Arial (the first of seaborn's fonts; macOS, Windows), the theme
    names matplotlib's DejaVu Sans after it: Armenian, Georgian and phonetic letters,
    which Arial lacks, are drawn, with no missing-glyph warning.  (Arial here is
    matplotlib's own Computer Modern sans renamed, which lacks them too.)"""
    from pathlib import Path

    import matplotlib
    from fontTools.ttLib import TTFont

    font = TTFont(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "cmss10.ttf")
    for record in font["name"].names:
        if record.nameID in (1, 4, 16):
            record.string = "Arial"
    font.save(tmp_path / "arial.ttf")
    code = (
        "import io, sys, warnings, matplotlib\n"
        "matplotlib.use('Agg')\n"
        "import matplotlib.pyplot as plt\n"
        "from matplotlib import font_manager\n"
        f"font_manager.fontManager.addfont({str(tmp_path / 'arial.ttf')!r})\n"
        "from audit.report import plots\n"
        "print(plots.theme()['font.family'][:2])\n"
        "with matplotlib.rc_context(plots.theme()), warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    fig, ax = plt.subplots()\n"
        "    ax.set_title('vendor-1 Հայերեն ქართული ʃɪp')\n"
        "    fig.savefig(io.BytesIO(), format='png')\n"
        "print(sorted({str(x.message) for x in w}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["['Arial', 'DejaVu Sans']", "[]"]


def test_a_name_in_chinese_or_japanese_is_drawn_where_a_font_for_it_is_installed():
    """With a CJK font installed (Debian: fonts-noto-cjk), a system named in Japanese is
    drawn in it, with no missing-glyph warning (it was boxes and a warning a glyph); a
    Latin name is drawn byte for byte as with seaborn's generic sans-serif list."""
    import io
    import warnings

    import matplotlib
    import matplotlib.pyplot as plt
    from matplotlib import font_manager

    def draw(text: str, **rc) -> tuple[bytes, list]:
        with (
            matplotlib.rc_context({**plots.theme(), **rc}),
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("always")
            fig, ax = plt.subplots(figsize=(3, 1))
            ax.set_title(text)
            ax.plot([0, 1], label=text)
            ax.legend()
            buffer = io.BytesIO()
            fig.savefig(buffer, format="png")
            plt.close(fig)
        return buffer.getvalue(), [str(w.message) for w in caught]

    latin, said = draw("vendor-1 é α")
    assert said == [] and latin == draw("vendor-1 é α", **{"font.family": ["sans-serif"]})[0]
    installed = {font.name for font in font_manager.fontManager.ttflist}
    if not installed & set(plots.FALLBACK_FONTS):
        pytest.skip(
            "no CJK font is installed (Debian: apt-get install fonts-noto-cjk, then remove "
            "~/.cache/matplotlib/fontlist-*.json), so the fallback is not drawn here"
        )
    _, said = draw("顔認識システム vendor-1")
    assert said == []
    _, said = draw("顔認識システム vendor-1", **{"font.family": ["sans-serif"]})
    assert any(s.startswith("Glyph") for s in said)  # the oracle: boxes without it
