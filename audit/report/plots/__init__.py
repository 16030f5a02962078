"""Figure functions: each takes tidy frames (and an optional ``ax``), returns the
matplotlib Figure or Axes, imports matplotlib lazily and never shows; the caller
saves (:func:`audit.report.outputs.save_figure`).

This module owns what every figure of a report shares:

* **one look**, set once: seaborn's ``whitegrid`` style in its ``paper``
  context with the colour-blind-safe ``colorblind`` palette (:func:`theme`;
  seaborn's values written out, :data:`SEABORN_RC`, so that drawing imports
  no seaborn),
  applied by :func:`themed` around every figure function and by
  :func:`~audit.report.outputs.save_figure` while it draws, never per figure;
  figures are sized for the report's page (:data:`PAGE_WIDTH`);
* **text as written**: a user's string (an algorithm, group or measure name
  from the user's file or module) enters a figure through
  :func:`audit.report.text.escape_mathtext` where it is placed -- title, axis
  label, tick label, legend, annotation -- so that ``vendor-$\\frac$`` shows
  as written while matplotlib's own texts (``10^-2`` on a log axis) stay
  mathtext.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TypeVar

F = TypeVar("F", bound=Callable)

#: The seaborn style, context and palette of every figure.
STYLE = "whitegrid"
CONTEXT = "paper"
FONT_SCALE = 1.1
PALETTE = "colorblind"

#: Width in inches of a figure that fills the report's page column (saved at 150 dpi:
#: 1,200 px, shown at about that size in a notebook page 1,366 px wide).
PAGE_WIDTH = 8.0

#: matplotlib settings added to seaborn's: figures made at 100 dpi whatever the backend
#: (a notebook's inline backend sets its own), so they are laid out alike everywhere;
#: numbers below 1e-3 or from 1e4 on get an
#: offset (``1e-4``) rather than long tick labels such as ``0.000125``; no frame around
#: legends (they sit where they cover no data).
_EXTRA = {
    "figure.dpi": 100,
    "axes.formatter.limits": (-3, 4),
    "legend.frameon": False,
    "axes.titlelocation": "left",
    "axes.titleweight": "bold",
    "figure.titleweight": "bold",
    "image.cmap": "viridis",
}


#: seaborn's ``whitegrid`` style in its ``paper`` context scaled by :data:`FONT_SCALE`, as
#: seaborn 0.13 sets them (``sns.axes_style(STYLE)``, then ``sns.plotting_context(CONTEXT,
#: font_scale=FONT_SCALE)``), written out: drawing a figure then imports no seaborn (nor
#: scipy.stats, which seaborn imports: about half a second in each process that draws), and
#: the look is the same whatever seaborn is installed.  ``tests/test_plots_theme.py`` checks
#: them against seaborn's own.
SEABORN_RC = {
    "figure.facecolor": "white",
    "axes.labelcolor": ".15",
    "xtick.direction": "out",
    "ytick.direction": "out",
    "xtick.color": ".15",
    "ytick.color": ".15",
    "axes.axisbelow": True,
    "grid.linestyle": "-",
    "text.color": ".15",
    "font.family": ["sans-serif"],
    "font.sans-serif": [
        "Arial",
        "DejaVu Sans",
        "Liberation Sans",
        "Bitstream Vera Sans",
        "sans-serif",
    ],
    "lines.solid_capstyle": "round",
    "patch.edgecolor": "w",
    "patch.force_edgecolor": True,
    "image.cmap": "rocket",
    "xtick.top": False,
    "ytick.right": False,
    "axes.grid": True,
    "axes.facecolor": "white",
    "axes.edgecolor": ".8",
    "grid.color": ".8",
    "axes.spines.left": True,
    "axes.spines.bottom": True,
    "axes.spines.right": True,
    "axes.spines.top": True,
    "xtick.bottom": False,
    "ytick.left": False,
    "axes.linewidth": 1.0,
    "grid.linewidth": 0.8,
    "lines.linewidth": 1.2000000000000002,
    "lines.markersize": 4.800000000000001,
    "patch.linewidth": 0.8,
    "xtick.major.width": 1.0,
    "ytick.major.width": 1.0,
    "xtick.minor.width": 0.8,
    "ytick.minor.width": 0.8,
    "xtick.major.size": 4.800000000000001,
    "ytick.major.size": 4.800000000000001,
    "xtick.minor.size": 3.2,
    "ytick.minor.size": 3.2,
    "font.size": 10.560000000000002,
    "axes.labelsize": 10.560000000000002,
    "axes.titlesize": 10.560000000000002,
    "xtick.labelsize": 9.680000000000001,
    "ytick.labelsize": 9.680000000000001,
    "legend.fontsize": 9.680000000000001,
    "legend.title_fontsize": 10.560000000000002,
}

#: seaborn's ``colorblind`` palette (:data:`PALETTE`), as seaborn 0.13 gives it.
SEABORN_PALETTE = (
    "#0173b2",
    "#de8f05",
    "#029e73",
    "#d55e00",
    "#cc78bc",
    "#ca9161",
    "#fbafe4",
    "#949494",
    "#ece133",
    "#56b4e9",
)


#: Fonts of the scripts the theme's sans-serif fonts lack (Chinese, Japanese, Korean),
#: drawn with where installed (Debian: ``fonts-noto-cjk``): a name in them was drawn as
#: boxes, each with a warning.
FALLBACK_FONTS = (
    "Noto Sans CJK JP",
    "Noto Sans CJK SC",
    "Noto Sans CJK TC",
    "Noto Sans CJK KR",
    "Source Han Sans",
    "WenQuanYi Zen Hei",
    "Droid Sans Fallback",
)


#: The font of many scripts that matplotlib installs with itself, drawn with where the
#: first of the theme's fonts lacks a glyph.
BROAD_FONT = "DejaVu Sans"


def _families(sans: list[str]) -> list[str]:
    """The first of the theme's sans-serif fonts that is installed (the font the generic
    ``sans-serif`` draws with), matplotlib's own DejaVu Sans after it where it is another
    (Arial has no Armenian, Georgian or phonetic letters, which DejaVu Sans has), then
    the first installed font of :data:`FALLBACK_FONTS`, as ``font.family``: matplotlib
    draws a glyph one font lacks with the next font of that list (not of the generic
    ``sans-serif`` list).  No more, because matplotlib looks every family of the list up
    again for each text it measures or draws (seven fonts named cost 20% more CPU to draw
    a figure of nine panels than one did), and one CJK font holds the glyphs of Chinese,
    Japanese and Korean.  Only installed fonts are named: a family named and not
    installed is logged as a warning in every process that draws.  A text the first font
    holds is drawn as with ``["sans-serif"]``, byte for byte.  (matplotlib finds a font
    installed after its font cache was written once that cache is removed:
    ``~/.cache/matplotlib/fontlist-*.json``.)"""
    from matplotlib import font_manager

    installed = {font.name for font in font_manager.fontManager.ttflist}
    first = next((family for family in sans if family in installed), "sans-serif")
    wide = [BROAD_FONT] if BROAD_FONT in installed and first != BROAD_FONT else []
    fallback = [family for family in FALLBACK_FONTS if family in installed][:1]
    return [first, *wide, *fallback]


@functools.cache
def _theme() -> tuple:
    from cycler import cycler

    rc = dict(SEABORN_RC)
    rc["axes.prop_cycle"] = cycler(color=list(SEABORN_PALETTE))
    rc.update(_EXTRA)
    rc["font.family"] = _families(rc["font.sans-serif"])
    return tuple(rc.items())


def theme() -> dict:
    """The matplotlib settings of every report figure: seaborn's :data:`STYLE`,
    :data:`CONTEXT` (scaled by :data:`FONT_SCALE`) and :data:`PALETTE`."""
    return dict(_theme())


def palette() -> list[str]:
    """The colours of the theme, in order (seaborn's ``colorblind``: blue, orange, green,
    vermilion, purple, brown, pink, grey, yellow, sky blue)."""
    return list(theme()["axes.prop_cycle"].by_key()["color"])


#: Roles of the palette's colours, by index into :func:`palette`.
BLUE, ORANGE, GREEN, VERMILION, PURPLE, BROWN, PINK, GREY, YELLOW, SKY = range(10)


def colour(index: int) -> str:
    """One colour of :func:`palette`, e.g. ``colour(VERMILION)``."""
    return palette()[index]


def wrap(text: str, width_inches: float, fontsize: float = 10.0) -> str:
    """``text`` broken into lines that fit ``width_inches`` at ``fontsize`` points (an
    average character of the theme's sans-serif font is about 0.6 em wide); existing line
    breaks are kept.

    >>> print(wrap("a b c d e f g h i j k l", 1.0, 10.0))
    a b c d e f
    g h i j k l
    """
    import textwrap

    chars = max(10, int(width_inches * 72.0 / (0.6 * fontsize)))
    return "\n".join(textwrap.fill(line, chars) for line in str(text).split("\n"))


def text_width(text: str, font) -> float:
    """The width, in inches, of one line of plain ``text`` in ``font``."""
    from matplotlib.textpath import TextToPath

    return TextToPath().get_text_width_height_descent(text, font, ismath=False)[0] / 72


def shorten_names(names: Sequence[str], limit: int) -> list[str]:
    """``names`` as a figure's axis writes them: whole up to ``limit`` characters, else
    their first and last characters around an ellipsis (a name of 90 characters took
    the room of what it names); whole, all of them, where two shortened names would be
    one.  A table beside the figure holds them whole.

    >>> shorten_names(["alg-1", "V" * 50], 12)
    ['alg-1', 'VVVVVVVV…VVV']
    >>> shorten_names(["a" * 20 + "x" + "b" * 9, "a" * 20 + "y" + "b" * 9], 12)[0] == "a" * 20 + "x" + "b" * 9
    True
    """
    head, tail = limit - limit // 3, limit // 3 - 1
    names = [str(name) for name in names]
    short = [
        name if len(name) <= limit else f"{name[:head]}\N{HORIZONTAL ELLIPSIS}{name[-tail:]}"
        for name in names
    ]
    return short if len(set(short)) == len(set(names)) else names


def fit_text(text: str, width: float, font, *, lines: int | None = None) -> str:
    """``text`` broken into lines of at most ``width`` inches in ``font``, measured (a
    character count overflowed with wide letters, a bold title or a word longer than a
    line); at most ``lines`` lines, the last ending in an ellipsis where more were
    needed."""
    import textwrap

    width = max(width, 0.5)  # a figure too narrow for a name still gives it a line
    if text_width(text, font) <= width:
        return text
    chars = max(1, int(width / (0.5 * font.get_size_in_points() / 72)))
    while True:
        fitted = textwrap.wrap(text, chars) or [""]
        if chars == 1 or all(text_width(line, font) <= width for line in fitted):
            break
        chars -= max(1, chars // 10)
    if lines is not None and len(fitted) > lines:
        fitted = fitted[:lines]
        last = fitted[-1]
        while last and text_width(last + "\N{HORIZONTAL ELLIPSIS}", font) > width:
            last = last[:-1]
        fitted[-1] = last.rstrip() + "\N{HORIZONTAL ELLIPSIS}"
    return "\n".join(fitted)


def root_figure(fig):
    """The figure that holds ``fig``: ``fig`` itself, or the figure a subfigure is part of
    (an ``ax`` given to a figure function may be one of a subfigure's)."""
    try:
        return fig.get_figure(root=True)
    except TypeError:  # matplotlib before 3.10: a subfigure's .figure is its root
        return fig.figure


def renderer_of(fig):
    """The renderer that measures ``fig``'s texts where a figure function places them by
    their size: its canvas's own (Agg's, pyplot's usual), else one matplotlib lends for
    the call, as its layout engines do (a bare ``Figure()``, a PDF or SVG canvas, whose
    canvases have none)."""
    return root_figure(fig)._get_renderer()


def width_inches(fig) -> float:
    """The width of ``fig`` (a figure, or a subfigure: its part of its figure), inches."""
    if hasattr(fig, "get_figwidth"):
        return fig.get_figwidth()
    return fig.bbox.width / fig.dpi


def themed(function: F) -> F:
    """Run a figure function under :func:`theme`, so that what it builds has the one look."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        import matplotlib

        with matplotlib.rc_context(theme()):
            return function(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
