"""Benchmark: the Annex 15 report against its floor, side by side in one run.

The floor is one fresh Python process that imports ``audit`` and computes everything
the Annex 15 report shows, with the report's default parameters, without drawing:
what the two notebooks (``notebooks/ffmc_audit.ipynb``,
``notebooks/pareto_downselect.ipynb``) compute, call for call:

- FFMC notebook: the table read and checked, its calibrated cells, the applicable
  measures, the group orderings, the FFMC report (FFMC.1-3 of every registered rate
  measure, its table and verdicts, the data quality and floor sensitivity), the
  measure registry table, every audited measure at ``alpha``, the uncertainty
  analysis (1000 replicates), the verdict stability (50 replicates), the claims
  check and its sentences;
- Pareto notebook: the frontier frame of GARBE, the down-select with and without
  the accuracy cut-off, the frontier membership probability (1000 replicates) and
  the summary.

The report is ``audit report annex15 --reports-dir <tmp> --no-progress`` in a fresh
process (both notebooks, their HTML, the front page).  The two alternate, best of
``--repeat``, so the load of a shared machine hits both alike; the machine's load
(:func:`os.getloadavg`) is printed with each timing.

With ``--baseline`` (a checkout, e.g. a git worktree of main, run by its own ``.venv``
or else by this interpreter with it first on ``PYTHONPATH``), that checkout's report
alternates with these two, so a change is measured against
the same floor in the same run.

Run from the repository root, with the offline data the tests use::

    AUDIT_DATA_DIR=/path/to/data .venv/bin/python benchmarks/bench_report_floor.py \\
        [--repeat 3] [--baseline /path/to/worktree]
"""

from __future__ import annotations

import os

from floors import alternate, arguments, audit_commands, time_audit, time_floor

#: Everything the Annex 15 report computes, as its notebooks call it, without drawing.
FLOOR = """
import time
start = time.perf_counter()
import warnings
warnings.simplefilter("ignore")
import numpy as np
import audit
from audit import uncertainty
from audit.analysis import ffmc, pareto
from audit.analysis.calibration import calibrated_cells, label_ratios
from audit.analysis.orderings import group_extremes, group_orderings, ordering_counts
from audit.config import ANNEX15_SHA256
from audit.measures.registry import applicable_measures, evaluate_many, measure_table
from audit.report.outputs import run_header
from audit.tables.datasets import read_data
from audit.tables.layouts import default_accuracy

# the FFMC notebook
data_file = str(audit.annex15_path())
table = read_data(data_file)
header = run_header(data_file, {})
calibration = calibrated_cells(table)
applicability = applicable_measures(table, None)
by_algorithm = group_orderings(table)
extremes, ordering_table = group_extremes(table), ordering_counts(by_algorithm)
alpha_grid = np.round(np.arange(0.0, 1.0 + 0.01 / 2, 0.01), 10)
report = ffmc.ffmc_report(table, None, alpha_grid=alpha_grid, seed=0, n_random=2000)
audited = [n for n in dict.fromkeys(report.table["measure"]) if (n, "FFMC.2") in report.results]
registry = measure_table(dict.fromkeys(report.table["measure"]))
verdicts = report.table.pivot(index="criterion", columns="measure", values="passed")[audited]
values = evaluate_many(table, audited, alpha=0.5, zero_division="flag").drop(columns="alpha")
values = label_ratios(values, table, calibration)
result, how = uncertainty.analyse(table, audited, method="auto", n_replicates=1000, seed=0,
                                  alpha=0.5, floor_lower=1e-6)
claims = uncertainty.HOWARD_2022_CLAIMS if header["input_sha256"] == ANNEX15_SHA256 else None
stability = uncertainty.verdict_stability(table, result, audited, n_replicates=50, seed=0)
said = result.sentences(claims=claims, verdicts=stability, parts=("claims", "rankings", "verdicts"))
if claims is not None:
    uncertainty.check_claims(result, claims)

# the Pareto notebook
axis = default_accuracy(table)
options = dict(alpha=0.5, weights="equal", undefined="raise", accuracy=axis, unmatched="exclude")
frame = pareto.frontier_frame(table, "garbe", **options)
short = pareto.downselect(table, "garbe", **options)
inset = pareto.downselect(table, "garbe", max_accuracy=0.01, **options)
result, how = uncertainty.analyse(table, ["garbe"], method="auto", n_replicates=1000, seed=0,
                                  alpha=0.5, fairness="garbe", weights="equal", floor_lower=1e-6,
                                  accuracy=axis)
short = uncertainty.join_frontier_probability(short, result)
said = [pareto.summary(short)]
print(time.perf_counter() - start)
"""


def main() -> None:
    parser = arguments(__doc__.split("\n")[0])
    args = parser.parse_args()
    if not os.environ.get("AUDIT_DATA_DIR"):
        print("warning: AUDIT_DATA_DIR is not set; the Annex 15 table may be downloaded")
    commands = audit_commands(args.baseline)

    def timed(side: str) -> float:
        if side == "floor":
            return time_floor(FLOOR)
        return time_audit(commands[side], ["report", "annex15"])

    best = alternate(["floor", *commands], timed, args.repeat, args.quiet)
    ratio = best["report"] / best["floor"]
    print(f"- the report at most 2x its floor: {ratio:.2f}x ({'met' if ratio <= 2 else 'NOT met'})")


if __name__ == "__main__":
    main()
