"""Benchmark: the two reports that draw heat maps, against a baseline checkout, side by
side in one run.

- ``audit report`` on a cross-group table of 9 algorithms x 8 groups (generated,
  seeded: within-group FMRs near 1e-4, cross-group near 1e-6), whose report draws the
  pair matrices of its fairest and least fair algorithms;
- ``audit compare annex15 frvt11`` with FRVT 1:1's accuracy table, whose report draws
  a rank-agreement heat map for each dataset.

Each is run by this checkout and by ``--baseline`` (a checkout, e.g. ``git worktree add
/tmp/before <commit>``: its own ``.venv`` if it has one, else this interpreter with the
checkout first on ``PYTHONPATH``), alternating, best of ``--repeat``, each timing begun
once the machine is quiet (if it becomes so within ``--quiet`` seconds).  Prints the
timings, the best of each and its ratio to the baseline's.

Run from the repository root, with the offline data the tests use::

    AUDIT_DATA_DIR=/path/to/data .venv/bin/python benchmarks/bench_heatmap_reports.py \\
        --baseline /tmp/before [--repeat 3]
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from floors import alternate, arguments, audit_commands, time_audit

GROUPS = [
    "African F",
    "African M",
    "Asian F",
    "Asian M",
    "Black F",
    "Black M",
    "White F",
    "White M",
]


def cross_group_table(path: Path, algorithms: int = 9, seed: int = 0) -> None:
    """A long cross-group table: ``algorithms`` x 8 x 8 pairs of FMRs."""
    rng = np.random.default_rng(seed)
    rows = [
        (f"vendor-{a:03d}", g1, g2, (1e-4 if g1 == g2 else 1e-6) * 10 ** rng.uniform(-0.7, 0.7))
        for a in range(algorithms)
        for g1 in GROUPS
        for g2 in GROUPS
    ]
    frame = pd.DataFrame(rows, columns=["algorithm", "group_1", "group_2", "fmr"])
    frame.to_csv(path, index=False)


def main() -> None:
    parser = arguments(__doc__.split("\n")[0])
    args = parser.parse_args()
    if not os.environ.get("AUDIT_DATA_DIR"):
        print(
            "warning: AUDIT_DATA_DIR is not set; the Annex 15 and FRVT 1:1 tables may be downloaded"
        )
    commands = audit_commands(args.baseline)
    order = [side for side in ("baseline", "report") if side in commands]
    with tempfile.TemporaryDirectory() as folder:
        table = Path(folder) / "cross9x8.csv"
        cross_group_table(table)
        reports = {
            "cross-group report, 9 x 8 x 8": ["report", str(table)],
            "audit compare annex15 frvt11": [
                "compare", "annex15", "frvt11",
                "--accuracy-from", "frvt11=frvt11-accuracy:Mugshot, 1e-5",
            ],
        }  # fmt: skip
        for title, argv in reports.items():
            print(f"\n## {title}\n", flush=True)
            best = alternate(
                order,
                lambda side, argv=argv: time_audit(commands[side], argv),
                args.repeat,
                args.quiet,
            )
            if "baseline" in best:
                print(f"- this checkout / baseline: {best['report'] / best['baseline']:.2f}")


if __name__ == "__main__":
    main()
