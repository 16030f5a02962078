"""Figure functions: each takes tidy frames (and an optional ``ax``), returns the
matplotlib Figure or Axes, imports matplotlib lazily and never shows; the caller
saves (:func:`audit.report.outputs.save_figure`).

This module owns what every figure of a report shares:

* **one look**, set once: seaborn's ``whitegrid`` style in its ``paper``
  context with the colour-blind-safe ``colorblind`` palette (:func:`theme`),
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
from collections.abc import Callable
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


@functools.cache
def _theme() -> tuple:
    import seaborn as sns
    from cycler import cycler

    rc = dict(sns.axes_style(STYLE))
    rc.update(sns.plotting_context(CONTEXT, font_scale=FONT_SCALE))
    rc["axes.prop_cycle"] = cycler(color=sns.color_palette(PALETTE).as_hex())
    rc.update(_EXTRA)
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


def themed(function: F) -> F:
    """Run a figure function under :func:`theme`, so that what it builds has the one look."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        import matplotlib

        with matplotlib.rc_context(theme()):
            return function(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
