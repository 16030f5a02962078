"""Benchmark: 1,000 replicates of every registered rate measure over the Annex 15 algorithms.

Times, on the real Annex 15 table (126 algorithms x 8 groups):

1. the transcription redraws (1,000 replicates of every rate);
2. every registered rate measure on all replicates (stacked, one call per measure);
3. the Pareto frontier (total FNMR vs GARBE) of every replicate;
4. the full :func:`audit.uncertainty.transcription_sensitivity` (intervals, ranking
   stability, dataset-level statistics incl. the alpha crossings, frontier probability);
5. a parametric (binomial) bootstrap with synthetic counts, for comparison.

Run from the repository root::

    AUDIT_DATA_DIR=/path/to/nist-frvt-annex15 .venv/bin/python benchmarks/bench_uncertainty.py [--replicates 1000]

The data is located like the tests do (``AUDIT_DATA_DIR`` or the download cache).
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from audit import uncertainty as U
from audit.measures.registry import measure_names
from audit.sources.annex15 import annex15_path
from audit.tables.rates import rate_matrices, read_rates


def _best(function, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    table = read_rates(annex15_path())
    algorithms, groups, fmr, fnmr = rate_matrices(table)
    n = args.replicates
    print(
        f"Annex 15: {len(algorithms)} algorithms x {len(groups)} groups; {n} replicates; "
        f"rate measures {measure_names(inputs='rates')}"
    )
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, "
        f"{os.cpu_count()} CPU(s), best of {args.repeat}"
    )

    t_draw, (fmr_reps, fnmr_reps) = _best(
        lambda: U.transcription_redraws(fmr, fnmr, n_replicates=n, seed=args.seed), args.repeat
    )
    t_measures, results = _best(lambda: U.replicate_measures(fmr_reps, fnmr_reps), args.repeat)
    total = fnmr_reps.mean(axis=-1)
    t_frontier, membership = _best(
        lambda: U.frontier_membership(results["garbe"].value, total), args.repeat
    )
    core = t_draw + t_measures + t_frontier
    print(f"  redraws                     {t_draw:7.3f} s")
    print(f"  {len(results)} measures x {n} replicates   {t_measures:7.3f} s")
    print(
        f"  frontier x {n} replicates    {t_frontier:7.3f} s "
        f"(mean size {membership.sum(axis=-1).mean():.2f})"
    )
    print(f"  core total                  {core:7.3f} s")

    t_full, result = _best(
        lambda: U.transcription_sensitivity(table, n_replicates=n, seed=args.seed), args.repeat
    )
    print(f"  transcription_sensitivity   {t_full:7.3f} s (all summaries incl. alpha crossings)")

    counted = table.assign(n_mated=20_000, n_nonmated=10_000_000)
    t_param, _ = _best(
        lambda: U.parametric_bootstrap(counted, n_replicates=n, seed=args.seed), args.repeat
    )
    print(f"  parametric_bootstrap        {t_param:7.3f} s (synthetic counts)")
    frontier = result.frontier.sort_values("frontier_probability", ascending=False)
    print("frontier membership probability (top 8):")
    for row in frontier.head(8).itertuples():
        print(
            f"  {row.algorithm:24s} {row.frontier_probability:.3f}"
            f"{'  (on the point frontier)' if row.on_frontier else ''}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
