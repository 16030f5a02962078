"""Figures of score-level results: measures across operating points, per-group DET curves.

Compute and draw apart: the data come from :func:`audit.analysis.sweeps.sweep_measures`
and :func:`audit.scores.det_points`; these functions only draw.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from audit.measures.registry import get_measure
from audit.report.plots import plain_text


@plain_text
def measure_vs_operating_point(swept: pd.DataFrame, measure: str = "garbe", *, ax=None):
    """A measure against the attained pooled FMR, one line per algorithm (Chouchane et al., Fig. 6).

    ``swept``: the output of :func:`audit.analysis.sweeps.sweep_measures`.  Returns the Axes.
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    from matplotlib.ticker import FuncFormatter, NullFormatter

    part = swept[swept["measure"] == measure]
    for algorithm, rows in part.groupby("algorithm", sort=False):
        rows = rows.sort_values("target_fmr")
        # undefined points (e.g. IR with a group at FMR 0) are gaps, not values
        value = rows["value"].where(~rows["undefined"].astype(bool))
        ax.plot(rows["target_fmr"] * 100, value, marker=".", label=str(algorithm))
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("target FMR (%) setting the threshold")
    ax.set_ylabel(get_measure(measure).label)
    ax.legend(title="algorithm")
    return ax


@plain_text
def det_curves(points: pd.DataFrame, *, algorithm=None, ax=None):
    """Per-group DET curves on normal-deviate axes (Chouchane et al., Fig. 7).

    ``points``: the output of :func:`audit.scores.det_points`; ``algorithm`` selects one
    (default: the first).  Rates of exactly 0 or 1 cannot be drawn on
    probit axes and are left out.  Returns the Axes.
    """
    import matplotlib.pyplot as plt
    from scipy.stats import norm

    if ax is None:
        _, ax = plt.subplots(figsize=(5, 5))
    if algorithm is None:
        algorithm = points["algorithm"].iloc[0]
    part = points[points["algorithm"] == algorithm]
    styles = ["-", "--", ":", "-."]
    for i, (group, rows) in enumerate(part.groupby("group", sort=False)):
        keep = (rows["fmr"] > 0) & (rows["fmr"] < 1) & (rows["fnmr"] > 0) & (rows["fnmr"] < 1)
        # ten colours, then the same colours dashed: no two groups look alike
        ax.plot(
            norm.ppf(rows.loc[keep, "fmr"]),
            norm.ppf(rows.loc[keep, "fnmr"]),
            label=str(group),
            color=f"C{i % 10}",
            linestyle=styles[(i // 10) % len(styles)],
        )
    ticks = np.array([1e-4, 1e-3, 1e-2, 0.05, 0.2, 0.5, 0.8, 0.95])
    ax.set_xticks(norm.ppf(ticks), [f"{100 * t:g}" for t in ticks])
    ax.set_yticks(norm.ppf(ticks), [f"{100 * t:g}" for t in ticks])
    ax.set_xlabel("FMR (%)")
    ax.set_ylabel("FNMR (%)")
    ax.set_title(str(algorithm))
    ax.grid(alpha=0.3)
    ax.legend(title="group", fontsize="small")
    return ax
