"""Benchmark: the FFMC audit, its uncertainty and the full report, against a baseline commit.

Times, on the real Annex 15 table (126 algorithms x 8 groups), each call in this
checkout and the same call in a baseline checkout (default: a git worktree of
commit 47b2b12, whose modules are the old flat ones):

1. ``ffmc_table`` (every registered rate measure, FFMC.1-3);
2. ``verdict_stability`` over 50 replicates (the replicates made beforehand, untimed);
3. ``analyse`` with 1000 transcription replicates;
4. the FFMC.1 alpha cube: every registered rate measure at 101 alphas on
   126 algorithms x 1000 replicates through the public measure API (values,
   terms and the alpha term's share);
5. the full ``audit report`` (both notebooks, HTML included), in a fresh process.

The two sides run alternately, ``--repeat`` times each (best of N), each timing in
its own process, so that the load of a shared machine hits both alike.  Prints the
best times and their ratios (new / baseline) and the goals of issue 14.

Run from the repository root::

    AUDIT_DATA_DIR=/path/to/nist-frvt-annex15 .venv/bin/python benchmarks/bench_report.py \\
        --baseline /path/to/worktree-at-47b2b12 [--repeat 3] [--skip-report]

The baseline worktree needs its own environment (``<baseline>/.venv``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# One snippet per benchmark and side; each prints the seconds of one timed call
# (after an untimed warm-up call where it is cheap enough).
_SETUP = {
    "new": """
import time, warnings
import numpy as np
from audit.analysis.ffmc import ffmc_table
from audit.measures.registry import get_measure, measure_names
from audit.sources.annex15 import annex15_path
from audit.tables.rates import rate_matrices, read_rates
from audit import uncertainty as U
table = read_rates(annex15_path())
""",
    "base": """
import time, warnings
import numpy as np
from audit.ffmc import ffmc_table
from audit.registry import get_measure, measure_names
from audit.data import annex15_path
from audit.rates import rate_matrices, read_rates
from audit import uncertainty as U
table = read_rates(annex15_path())
""",
}

_CALLS = {
    "ffmc_table": """
ffmc_table(table)
start = time.perf_counter(); ffmc_table(table); print(time.perf_counter() - start)
""",
    "verdict_stability_50": """
result, _ = U.analyse(table, n_replicates=50, floor_lower=1e-6)
start = time.perf_counter(); U.verdict_stability(table, result, n_replicates=50)
print(time.perf_counter() - start)
""",
    "analyse_1000": """
start = time.perf_counter(); U.analyse(table, n_replicates=1000, floor_lower=1e-6)
print(time.perf_counter() - start)
""",
    "alpha_cube": """
_, _, fmr, fnmr = rate_matrices(table)
rng = np.random.default_rng(0)
fmr = np.clip(fmr[None] * 10 ** rng.uniform(-0.05, 0.05, (1000, *fmr.shape)), 0, 1)
fnmr = np.clip(fnmr[None] + rng.uniform(-5e-5, 5e-5, (1000, *fnmr.shape)), 0, 1)
fmr, fnmr = fmr.reshape(-1, fmr.shape[-1]), fnmr.reshape(-1, fnmr.shape[-1])
grid = np.round(np.linspace(0.0, 1.0, 101), 2)
measures = [get_measure(name) for name in measure_names(inputs="rates")]
start = time.perf_counter()
CUBE
print(time.perf_counter() - start)
""",
}

# The cube: the only public way at the baseline is one call per alpha.
_CUBE = {
    "new": """
for m in measures:
    r = m(fmr, fnmr, alpha=grid, zero_division="flag")
    share = m.alpha_share(r.fmr_term, r.fnmr_term, grid[:, None])
""",
    "base": """
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for m in measures:
        for a in grid:
            r = m(fmr, fnmr, alpha=float(a))
            share = m.alpha_share(r.fmr_term, r.fnmr_term, float(a))
""",
}


def _python(root: Path) -> str:
    return str(root / ".venv" / "bin" / "python")


def _time_call(side: str, root: Path, name: str) -> float:
    code = _SETUP[side] + _CALLS[name].replace("CUBE", _CUBE[side].strip("\n"))
    out = subprocess.run(
        [_python(root), "-c", code],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    return float(out.stdout.strip().splitlines()[-1])


def _time_report(root: Path) -> float:
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        subprocess.run(
            [str(root / ".venv" / "bin" / "audit"), "report", "--reports-dir", folder]
            + ["--name", "bench", "--no-progress"],
            cwd=folder,
            check=True,
            capture_output=True,
        )
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="worktree of the baseline")
    parser.add_argument("--repeat", type=int, default=3, help="timings per side (best of N)")
    parser.add_argument("--skip-report", action="store_true", help="leave out the full report")
    parser.add_argument("--only", nargs="*", default=None, help="benchmarks to run")
    args = parser.parse_args()
    roots = {"base": args.baseline.resolve(), "new": Path.cwd().resolve()}
    names = list(_CALLS) + ([] if args.skip_report else ["report"])
    if args.only:
        names = [n for n in names if n in args.only]
    best: dict[str, dict[str, float]] = {
        n: {"base": float("inf"), "new": float("inf")} for n in names
    }
    for repeat in range(args.repeat):
        for name in names:
            order = ("base", "new") if repeat % 2 == 0 else ("new", "base")
            for side in order:
                if name == "report":
                    seconds = _time_report(roots[side])
                else:
                    seconds = _time_call(side, roots[side], name)
                best[name][side] = min(best[name][side], seconds)
                print(
                    f"  [{repeat + 1}/{args.repeat}] {name:22s} {side:4s} {seconds:8.3f} s",
                    flush=True,
                )
    print(f"\nbaseline: {roots['base']}\nnew:      {roots['new']}")
    print(f"best of {args.repeat}, interleaved\n")
    print(
        f"| {'benchmark':22s} | {'baseline s':>10s} | {'new s':>8s} | {'new/base':>8s} | {'speed-up':>8s} |"
    )
    print(f"|{'-' * 24}|{'-' * 12}|{'-' * 10}|{'-' * 10}|{'-' * 10}|")
    for name in names:
        base, new = best[name]["base"], best[name]["new"]
        print(
            f"| {name:22s} | {base:10.3f} | {new:8.3f} | {new / base:8.3f} | {base / new:7.1f}x |"
        )
    goals = []
    if "ffmc_table" in best:
        speedup = best["ffmc_table"]["base"] / best["ffmc_table"]["new"]
        goals.append(("ffmc_table at least 5x faster", f"{speedup:.1f}x", speedup >= 5))
    if "ffmc_table" in best and "verdict_stability_50" in best:
        ratio = best["verdict_stability_50"]["new"] / best["ffmc_table"]["new"]
        goals.append(("verdict stability (50) <= 10x one ffmc_table", f"{ratio:.1f}x", ratio <= 10))
    if "alpha_cube" in best:
        cube = best["alpha_cube"]["new"]
        goals.append(("alpha cube (9 x 101 x 126 x 1000) <= 2 s", f"{cube:.2f} s", cube <= 2))
    if "report" in best:
        ratio = best["report"]["new"] / best["report"]["base"]
        goals.append(("full report <= 0.35x the baseline", f"{ratio:.2f}x", ratio <= 0.35))
    print()
    for goal, value, met in goals:
        print(f"- {goal}: {value} ({'met' if met else 'NOT met'})")
    print(f"\n{sys.platform}, {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
