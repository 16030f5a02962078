"""Report: figures, tables, narrative and the runner that executes the notebooks.

:mod:`~audit.report.outputs` saves figures, tables and sentences and writes
the run header; :mod:`~audit.report.notices` shows a notebook's warnings as
sentences and keeps them as a table; :mod:`~audit.report.plots` draws (one
module per notebook); :mod:`~audit.report.frontpage` builds ``index.html``
from the tables a report holds; :mod:`~audit.report.runner` runs the
papermill notebooks into a report folder, helped by
:mod:`~audit.report.parameters` (a notebook's declared parameters, read without
papermill), :mod:`~audit.report.ownership` (what audit made in a reports folder:
the only things it removes or replaces) and :mod:`~audit.report.interrupt`
(Ctrl-C and SIGTERM: kernels stopped, the earlier report kept);
:mod:`~audit.report.background` computes a notebook's long work in a second
process while the notebook goes on.
"""
