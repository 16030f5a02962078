"""Figure functions: each takes tidy frames (and an optional ``ax``), returns the
matplotlib Figure or Axes, imports matplotlib lazily and never shows; the caller saves.

Every text they draw is plain: algorithm, group and measure names come from the
user's file, and a name such as ``vendor-$x$`` or ``$\\frac$`` must show as
written rather than be read (or refused) as mathtext.  :func:`plain_text` turns
mathtext off while a figure function builds its artists (for a caller who saves
with ``savefig``); :func:`audit.report.outputs.save_figure` draws every text of
any figure, the notebooks' own included, as written.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)

#: matplotlib settings under which the figures are built and drawn.
PLAIN_TEXT = {"text.parse_math": False}


def plain_text(function: F) -> F:
    """Run a figure function with mathtext off, so the texts it creates keep ``$`` as is."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        import matplotlib

        with matplotlib.rc_context(PLAIN_TEXT):
            return function(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
