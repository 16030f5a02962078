"""What a report says of a cross-group impostor table: which matrices to draw, and the
share of pairs of groups whose FMR depends on which side is enrolled."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from audit.analysis.accuracy import overall_rates
from audit.exceptions import InputError, UnknownNameError, UsageError
from audit.measures.crossgroup import NOT_CROSS, asymmetry_table
from audit.tables.crossgroup import cross_group
from audit.validation import RATES_TABLE, Names, optional, validate_params

UNKNOWN_ALGORITHMS = "heatmap algorithm(s) {names} are not in the table; it holds {known}"
NO_NAMES = "heatmap algorithms: give at least one name, or None for the default choice"

#: How many algorithm names an error message lists.
_LISTED = 10


@validate_params("weights", names=optional(Names()), table=RATES_TABLE)
def heatmap_algorithms(
    table: pd.DataFrame, names: Sequence[str] | None = None, *, weights="equal"
) -> pd.DataFrame:
    """The algorithms whose pair matrices a report draws, and why.

    ``names`` given: those, in that order (an unknown name is refused with the
    names the table holds).  Otherwise the most and the least accurate by
    total FMR over the within-group pairs (:func:`audit.analysis.accuracy.overall_rates`
    with ``weights``, the accuracy axis of the down-select on this table).

    Returns
    -------
    pandas.DataFrame
        Columns ``algorithm``, ``why`` and ``total_fmr``.
    """
    if cross_group(table) is None:
        raise InputError(NOT_CROSS.format(source=table.attrs.get("source", "the table")))
    totals = overall_rates(table, weights=weights)["total_fmr"]
    if names is not None:
        names = [str(n) for n in ([names] if isinstance(names, str) else names)]
        if not names:
            raise UsageError(NO_NAMES)
        unknown = [n for n in names if n not in totals.index]
        if unknown:
            known = list(totals.index[:_LISTED]) + (["..."] if len(totals) > _LISTED else [])
            raise UnknownNameError(UNKNOWN_ALGORITHMS.format(names=unknown, known=known))
        chosen = [(n, "named") for n in dict.fromkeys(names)]
    else:
        order = np.argsort(totals.to_numpy(), kind="stable")
        chosen = [(totals.index[order[0]], "lowest total FMR (most accurate)")]
        if len(order) > 1:
            chosen.append((totals.index[order[-1]], "highest total FMR (least accurate)"))
    out = pd.DataFrame(
        {
            "algorithm": [a for a, _ in chosen],
            "why": [w for _, w in chosen],
            "total_fmr": [float(totals[a]) for a, _ in chosen],
        }
    )
    return out.astype({"algorithm": "string", "why": "string"})


def asymmetry_summary(table: pd.DataFrame) -> dict[str, float]:
    """How often FMR(a, b) and FMR(b, a) differ as written: ``pairs`` (algorithm x
    pairs of groups measured both ways), ``differ``, ``share`` and the largest
    ``fold`` (max(ratio, 1/ratio)) where defined."""
    pairs = asymmetry_table(table)
    differ = int(pairs["differ"].sum())
    total = len(pairs)
    folds = pairs["fold"].to_numpy(dtype="float64")
    return {
        "pairs": total,
        "differ": differ,
        "share": differ / total if total else float("nan"),
        "largest_fold": float(np.nanmax(folds)) if np.isfinite(folds).any() else float("nan"),
    }
