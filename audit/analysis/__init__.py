"""Analysis: what the measures say about a table of algorithms.

:mod:`~audit.analysis.accuracy` (total FMR and FNMR over the groups),
:mod:`~audit.analysis.pareto` (the one accuracy/fairness frontier and the
down-select), :mod:`~audit.analysis.quality` (what the data's resolution does
to each measure), :mod:`~audit.analysis.ffmc` (the Functional Fairness Measure
Criteria) and :mod:`~audit.analysis.sweeps` (measures along the operating
points of a score table).
"""
