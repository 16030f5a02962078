"""Report: figures, tables, narrative and the runner that executes the notebooks.

:mod:`~audit.report.outputs` saves figures and tables and writes the run
header; :mod:`~audit.report.plots` draws (one module per notebook);
:mod:`~audit.report.runner` runs the papermill notebooks into a report folder.
"""
