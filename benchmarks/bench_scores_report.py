"""Benchmark: ``audit scores`` on VoxCeleb against its floor, side by side in one run.

The floor is one fresh Python process that imports ``audit`` and computes everything
the VoxCeleb scores report shows, with the report's default parameters, without
drawing: what ``notebooks/scores_audit.ipynb`` computes, call for call -- VoxCeleb
loaded once with every attribute, the three groupings (gender, nationality, both),
their statistics, the rates at FMR 0.1%, every rate and score measure, the per-group
EERs, the sweep of every measure over 21 operating points, the DET points, the FFMC
table and the subject bootstrap (200 replicates a grouping), in sequence, on one core.

The report is ``audit scores --reports-dir <tmp> --no-progress`` in a fresh process
(the notebook, its HTML, the front page).  With ``--baseline`` (a checkout, e.g. a git
worktree of an earlier commit, run by its own ``.venv`` or else by this interpreter with
it first on ``PYTHONPATH``), that checkout's report runs
in the same alternation, and the two reports' tables are compared byte for byte.
The sides alternate, best of ``--repeat``, so that the load of a shared machine hits
them alike; the machine's load (:func:`os.getloadavg`) is printed with each timing.

The VoxCeleb scores are fetched and verified on first use (``audit.sources.voxceleb``).
Run from the repository root::

    .venv/bin/python benchmarks/bench_scores_report.py [--repeat 3] [--baseline ../main-before]
"""

from __future__ import annotations

import filecmp
import tempfile
from pathlib import Path

from floors import alternate, arguments, audit_commands, time_audit, time_floor

#: Everything the VoxCeleb scores report computes, as its notebook calls it, without drawing.
FLOOR = """
import time
start = time.perf_counter()
import warnings
warnings.simplefilter("ignore")
import numpy as np
from audit.analysis import ffmc
from audit.analysis.sweeps import sweep_measures
from audit.measures.registry import evaluate_many, evaluate_scores, measure_table
from audit.measures.scores import eer_table
from audit.scores import det_points, rates_at_fmr, score_stats
from audit.sources import voxceleb
from audit.tables.groupings import regroup
from audit.uncertainty import score_bootstrap

groupings = [["gender"], ["nationality"], ["gender", "nationality"]]
voxceleb.fetch_bt4vt()
loaded = voxceleb.load_voxceleb(["gender", "nationality"])
tables = {".".join(g): regroup(loaded, g) for g in groupings}
stats = {name: score_stats(table) for name, table in tables.items()}
rates = {name: rates_at_fmr(s, 0.001) for name, s in stats.items()}
for name, table in rates.items():
    evaluate_many(table, alpha=0.5, zero_division="flag")
    evaluate_scores(stats[name])
eers = {name: eer_table(s) for name, s in stats.items()}
targets = np.geomspace(0.001, 0.1, 21)
swept = {name: sweep_measures(s, targets=targets, alpha=0.5) for name, s in stats.items()}
dets = {name: det_points(s) for name, s in stats.items() if len(s.groups) <= 12}
verdicts = {name: ffmc.ffmc_table(table) for name, table in rates.items()}
measure_table()
boot = {
    name: score_bootstrap(table, lambda s: rates_at_fmr(s, 0.001), score_measures=evaluate_scores,
                          unit="subject", replicate_as="statistics", subject="subject_1",
                          group="group_1", alpha=0.5, n_replicates=200, seed=0)
    for name, table in tables.items()
}
for b in boot.values():
    b.sentences()
print(time.perf_counter() - start)
"""

#: The goal of the scores report on VoxCeleb, in seconds on 2 cores.
GOAL = 20.0


def same_tables(one: Path, other: Path) -> tuple[int, list[str]]:
    """How many tables ``one`` holds, and those whose bytes differ in ``other`` (or lack)."""
    names = sorted(p.name for p in one.glob("*.csv"))
    _, mismatch, errors = filecmp.cmpfiles(one, other, names, shallow=False)
    return len(names), mismatch + errors


def main() -> None:
    parser = arguments(__doc__.split("\n")[0])
    args = parser.parse_args()
    commands = audit_commands(args.baseline)
    with tempfile.TemporaryDirectory() as kept:
        tables = {side: Path(kept) / side for side in commands}

        def timed(side: str) -> float:
            if side == "floor":
                return time_floor(FLOOR)
            return time_audit(commands[side], ["scores"], keep=("voxceleb/tables", tables[side]))

        best = alternate(["floor", *commands], timed, args.repeat, args.quiet)
        if "baseline" in commands:
            n, differ = same_tables(tables["baseline"], tables["report"])
            said = "all byte-identical" if not differ else "differing: " + ", ".join(differ)
            print(f"- the report's {n} tables against the baseline's: {said}")
    seconds = best["report"]
    print(
        f"- the report in at most {GOAL:g} s: {seconds:.2f} s ({'met' if seconds <= GOAL else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
