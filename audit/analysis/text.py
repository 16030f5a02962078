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


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun``, in the plural unless ``n`` is 1 (``plural`` for an irregular one).

    >>> count(1, "algorithm"), count(2, "algorithm"), count(0, "replicate"), count(3, "is", "are")
    ('1 algorithm', '2 algorithms', '0 replicates', '3 are')
    """
    n = int(n)
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def names(items) -> str:
    """``a``, ``a and b``, ``a, b and c``: the items as a list in a sentence.

    >>> names(["FDR"]), names(["FDR", "IR"]), names(["FDR", "IR", "GARBE"])
    ('FDR', 'FDR and IR', 'FDR, IR and GARBE')
    """
    items = [str(i) for i in items]
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def beside(x: float, threshold: float, digits: int = 2) -> str:
    """``x`` with at least ``digits`` decimals and as many more as it takes to show on
    which side of ``threshold`` it lies (never a value below a rule printed as the rule).

    >>> beside(0.8966, 0.9), beside(0.9, 0.9), beside(0.74, 0.9), beside(0.89999, 0.9)
    ('0.897', '0.90', '0.74', '0.89999')
    """
    x = float(x)
    if not np.isfinite(x):
        return "undefined"
    for d in range(digits, 12):
        shown = round(x, d)
        if (shown < threshold) == (x < threshold) and (shown > threshold) == (x > threshold):
            return f"{x:.{d}f}"
    return repr(x)
