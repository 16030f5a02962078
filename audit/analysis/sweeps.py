"""Every rate measure as a function of the operating point (Howard et al. Fig. 6 style sweeps)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from audit.measures.registry import evaluate_many
from audit.scores.stats import ScoreStats
from audit.scores.thresholds import sweep
from audit.validation import TARGETS, MeasureRefs, optional, validate_params


@validate_params("alpha", measures=MeasureRefs(), targets=optional(TARGETS))
def sweep_measures(
    scores: pd.DataFrame | ScoreStats,
    *,
    measures: Sequence[str] | None = None,
    targets=None,
    alpha: float = 0.5,
) -> pd.DataFrame:
    """Every rate-based registered measure as a function of the operating point.

    ``measures=None`` takes every registered rate measure the scores' rates
    allow (on non-mated comparisons only, the FMR measures; see
    :func:`audit.measures.registry.applicable_measures`).

    Returns one row per (algorithm, target, measure): ``algorithm``,
    ``target_fmr``, ``attained_fmr``, ``threshold``, ``measure``, ``value``,
    ``fmr_term``, ``fnmr_term``, ``undefined``.  Undefined values follow each
    measure's documented convention and are flagged in ``undefined``; the
    per-point :class:`~audit.measures.UndefinedMeasureWarning` is not repeated
    for every point (the column says where).
    """
    table = sweep(scores, targets)
    frames = []
    for target, block in table.groupby("target_fmr", sort=False):
        points = block.drop_duplicates("algorithm").set_index("algorithm")
        # measures=None: every registered rate measure the table's rates allow
        result = evaluate_many(block, measures, alpha=alpha, zero_division="flag")
        result = result.drop(columns="alpha")
        algorithms = result["algorithm"].astype(str)
        result.insert(1, "target_fmr", target)
        result.insert(2, "attained_fmr", points.loc[algorithms, "attained_fmr"].to_numpy())
        result.insert(3, "threshold", points.loc[algorithms, "threshold"].to_numpy())
        frames.append(result)
    out = pd.concat(frames, ignore_index=True)
    out["algorithm"] = out["algorithm"].astype("string")
    out["measure"] = out["measure"].astype("string")
    return out
