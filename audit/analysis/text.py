"""Numbers as they appear in evidence sentences: one formatter for every layer above tables."""

from __future__ import annotations

import numpy as np


def number(x, digits: int = 4, *, undefined: str | None = None, plain=None) -> str:
    """``x`` to ``digits`` significant digits.

    A missing or non-finite ``x`` is written as ``undefined`` (default: as
    Python writes it).  With ``plain=(low, high)``, a non-zero ``x`` whose
    magnitude lies outside ``[low, high)`` is written in scientific notation.

    >>> number(0.987654), number(float("nan")), number(None)
    ('0.9877', 'nan', 'None')
    >>> number(63.1, 3, undefined="undefined", plain=(1e-3, 1e4)), number(1e-5, 3, plain=(1e-3, 1e4))
    ('63.1', '1.00e-05')
    """
    if x is None or not np.isfinite(x):
        return str(x) if undefined is None else undefined
    if plain is not None and x != 0 and not plain[0] <= abs(x) < plain[1]:
        return f"{x:.{digits - 1}e}"
    return f"{x:.{digits}g}"
