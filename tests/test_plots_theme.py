"""The report's look: seaborn's style, context and palette, written out in
:mod:`audit.report.plots` so that drawing imports no seaborn."""

import subprocess
import sys

import seaborn as sns

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
        if key not in plots._EXTRA:
            assert theme[key] == value, key
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
        "print(sorted(m for m in ('seaborn', 'scipy.stats') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    assert (tmp_path / "figures" / "x.png").stat().st_size > 1000
