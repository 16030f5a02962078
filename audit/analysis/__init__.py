"""Analysis: what the measures say about a table of algorithms.

:mod:`~audit.analysis.accuracy` (total FMR and FNMR over the groups),
:mod:`~audit.analysis.pareto` (the one accuracy/fairness frontier and the
down-select), :mod:`~audit.analysis.quality` (what the data's resolution does
to each measure), :mod:`~audit.analysis.ffmc` (the Functional Fairness Measure
Criteria) and :mod:`~audit.analysis.sweeps` (measures along the operating
points of a score table).
"""

from audit.analysis.accuracy import group_weights, overall_rates
from audit.analysis.calibration import calibrated_cells
from audit.analysis.crossgroup import heatmap_algorithms
from audit.analysis.ffmc import ffmc1, ffmc2, ffmc3, ffmc_report, ffmc_table, ffmc_verdicts
from audit.analysis.pareto import downselect, efficient, frontier_frame, weight_sensitivity
from audit.analysis.quality import data_quality, floor_sensitivity
from audit.analysis.sweeps import sweep_measures

__all__ = [
    "calibrated_cells",
    "data_quality",
    "downselect",
    "efficient",
    "ffmc1",
    "ffmc2",
    "ffmc3",
    "ffmc_report",
    "ffmc_table",
    "ffmc_verdicts",
    "floor_sensitivity",
    "frontier_frame",
    "group_weights",
    "heatmap_algorithms",
    "overall_rates",
    "sweep_measures",
    "weight_sensitivity",
]
