"""Compare the CSV tables of two ``audit report`` runs: every number must be the same.

Either give two report folders already made (``--before`` and ``--after``), or a
baseline checkout (``--baseline``, a git worktree with its own ``.venv``) to run
``audit report`` there and in this checkout, with the same (default) seed, on the
Annex 15 table located as the tests locate it (``AUDIT_DATA_DIR``)::

    AUDIT_DATA_DIR=/path/to/nist-frvt-annex15 .venv/bin/python benchmarks/compare_report_tables.py \\
        --baseline /path/to/worktree-at-47b2b12

Each ``tables/*.csv`` of the baseline must exist in the new report with the same
bytes; a table that differs is reported with its first differing cells.  Exits
with status 1 when any table differs or is missing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd


def run_report(root: Path, reports_dir: Path) -> Path:
    """``audit report`` of the checkout at ``root`` into ``reports_dir/compare``."""
    subprocess.run(
        [str(root / ".venv" / "bin" / "audit"), "report", "--reports-dir", str(reports_dir)]
        + ["--name", "compare", "--no-progress"],
        cwd=reports_dir,
        check=True,
        capture_output=True,
    )
    return reports_dir / "compare"


def compare(before: Path, after: Path) -> list[str]:
    """The differences between the CSV tables of two report folders (empty: identical)."""
    problems = []
    tables = sorted((before / "tables").glob("*.csv"))
    if not tables:
        problems.append(f"{before}: no tables")
    for old in tables:
        new = after / "tables" / old.name
        if not new.is_file():
            problems.append(f"{old.name}: missing in {after}")
            continue
        if old.read_bytes() == new.read_bytes():
            continue
        a, b = pd.read_csv(old), pd.read_csv(new)
        added = [c for c in b.columns if c not in a.columns]
        if added:  # a column the baseline did not have is said, and the shared ones compared
            print(f"{old.name}: column(s) {added} added")
            b = b.drop(columns=added)
        if a.shape != b.shape or list(a.columns) != list(b.columns):
            problems.append(f"{old.name}: shape or columns differ ({a.shape} vs {b.shape})")
            continue
        differ = ~((a == b) | (a.isna() & b.isna()))
        cells = [(r, c) for c in differ.columns for r in differ.index[differ[c]]][:5]
        if added and not cells:  # the shared columns hold the same values
            continue
        shown = "; ".join(f"row {r}, {c}: {a.at[r, c]!r} vs {b.at[r, c]!r}" for r, c in cells)
        problems.append(f"{old.name}: differs ({shown or 'formatting only'})")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, help="checkout of the baseline (with .venv)")
    parser.add_argument("--before", type=Path, help="report folder made by the baseline")
    parser.add_argument("--after", type=Path, help="report folder made by this checkout")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        before, after = args.before, args.after
        if before is None or after is None:
            if args.baseline is None:
                parser.error("give --baseline, or both --before and --after")
            base_dir, new_dir = Path(folder) / "before", Path(folder) / "after"
            base_dir.mkdir()
            new_dir.mkdir()
            before = run_report(args.baseline.resolve(), base_dir)
            after = run_report(Path.cwd().resolve(), new_dir)
        problems = compare(before, after)
        count = len(list((before / "tables").glob("*.csv")))
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print(f"all {count} tables identical")


if __name__ == "__main__":
    main()
