"""Every rate measure as a function of the operating point (Howard et al. Fig. 6 style sweeps)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from audit.measures.registry import evaluate_many
from audit.scores.stats import ScoreStats
from audit.scores.thresholds import sweep
from audit.validation import SCORES, TARGETS, MeasureRefs, optional, validate_params


@validate_params("alpha", measures=MeasureRefs(), targets=optional(TARGETS), scores=SCORES)
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

    Returns one row per (target, measure, algorithm), in that order: ``measure``,
    ``target_fmr``, ``attained_fmr``, ``threshold``, ``algorithm``, ``value``,
    ``fmr_term``, ``fnmr_term``, ``undefined`` and ``rule`` (the one-term rule
    on non-mated scores only; see :func:`~audit.measures.registry.evaluate_many`).
    The measures run once over every point, each point's values as on its own
    rates table.  Undefined values follow each
    measure's documented convention and are flagged in ``undefined``; the
    per-point :class:`~audit.measures.UndefinedMeasureWarning` is not repeated
    for every point (the column says where).  A target given twice is one point (a
    sweep from 1% to 1%, say), in the order the targets come.
    """
    if targets is not None:
        targets = pd.unique(np.atleast_1d(np.asarray(targets, dtype=np.float64)))
    table = sweep(scores, targets)
    # Every point at once: each (point, algorithm) is one row of the rate matrices, under a
    # key of its own, so the measures run once on the whole sweep (a measure reads one
    # algorithm's groups at a time), and the rows are then put in the order of the points.
    point, points = pd.factorize(table["target_fmr"], sort=False)
    algorithm, algorithms = pd.factorize(table["algorithm"], sort=False)
    n = len(algorithms)
    keys = point * n + algorithm
    keyed = table.assign(algorithm=pd.array(keys.astype(str), dtype="string"))
    result = evaluate_many(keyed, measures, alpha=alpha, zero_division="flag")
    key = result["algorithm"].astype("int64").to_numpy()
    measure = pd.factorize(result["measure"], sort=False)[0]
    order = np.lexsort((key % n, measure, key // n))  # by point, then measure, then algorithm
    key = key[order]
    at_key = {column: np.empty(len(points) * n) for column in ("attained_fmr", "threshold")}
    for column, values in at_key.items():
        values[keys] = table[column].to_numpy()  # one value per key
    out = result.drop(columns=["alpha", "algorithm"]).iloc[order].reset_index(drop=True)
    out.insert(1, "target_fmr", points.to_numpy(dtype="float64")[key // n])
    out.insert(2, "attained_fmr", at_key["attained_fmr"][key])
    out.insert(3, "threshold", at_key["threshold"][key])
    out.insert(4, "algorithm", pd.array(algorithms.astype(str)[key % n], dtype="string"))
    return out
