"""Benchmark: per-group rates at 100 operating points from raw scores.

Not a test.  Run from the repository root::

    .venv/bin/python benchmarks/bench_scores.py                        # 1e6 and 1e7 synthetic, VoxCeleb
    .venv/bin/python benchmarks/bench_scores.py --sizes 1e6 1e7 1e8    # 1e8 needs about 4 GB of RAM
    .venv/bin/python benchmarks/bench_scores.py --no-voxceleb --repeat 5

What is measured, per case (one row of the table):

``audit s``
    Best of ``--repeat`` wall-clock times of ``audit``'s whole path: the
    sufficient statistics (:func:`audit.scores.score_stats_from_arrays`), then
    the thresholds at 100 target FMRs (log-spaced, 0.1% to 10%) and the tidy
    per-group rates table (:func:`audit.scores.sweep`).
``peak MB``, ``peak/input``
    The input arrays plus the peak of the numpy allocations made during one
    more run of the same path, traced by ``tracemalloc`` (that run is not
    timed); ``peak/input`` divides it by the size of the input arrays.
``sort s``, ``audit/sort``
    Best of ``--repeat`` times of one ``numpy.sort`` of the same scores: the
    yardstick.
``roc s``, ``roc/audit``
    One run of the per-group ``sklearn.metrics.roc_curve`` approach (one
    ``roc_curve`` on each algorithm's pooled non-mated and mated scores to set
    the same thresholds, then one per group on its mated and within-group
    non-mated scores to read the rates; ``drop_intermediate=False`` so that
    every threshold is available), if scikit-learn is installed and the case
    is not larger than ``--roc-max``.  ``max diff`` is the largest absolute
    difference between its per-group FMR/FNMR and ``audit``'s (round-off
    only: scikit-learn's FNMR is ``1 - TPR``).

Cases: synthetic scores (seeded: ``numpy.random.default_rng(0)``), 8 groups,
10% mated, normal scores, one algorithm, no cross-group pairs; and the VoxCeleb1-H
scores of the two bt4vt systems (:mod:`audit.sources.voxceleb`, fetched on first use),
both together and each alone.

The subject bootstrap and the scores report (``--bootstrap``)
-------------------------------------------------------------
On the VoxCeleb1-H scores, for each grouping of the scores report (gender,
nationality, both), every figure a ratio to the *floor*, one build of the
statistics of the whole table (:func:`audit.scores.score_stats`, best of
``--repeat``), measured in the same run::

    .venv/bin/python benchmarks/bench_scores.py --bootstrap [--baseline ../main-checkout]

``by rows``
    A replicate as today's definition makes it: the resampled rows, their
    statistics, the threshold at FMR 0.1%, the rates and every score measure
    (``score_bootstrap(..., replicate_as="table")``, ``--row-replicates`` of
    them, default 10; per replicate).
``by counts``
    The same replicates drawn with the same seed, counted over the segments
    sorted once (``replicate_as="statistics"``, 200 replicates, the report's
    number, set-up included; per replicate), and whether the two give the same
    intervals and rankings (the first ``--row-replicates``).
``making one``
    Of ``by counts``, making the counted statistics alone
    (:meth:`audit.scores.weighted.SortedScores.replicate`).
``report``
    With ``--baseline`` (a checkout with its own ``.venv``, e.g. of main before
    the counted bootstrap): one ``audit scores`` there and one here, in fresh
    processes and folders, wall-clock seconds and as floors, and whether every
    table of the two reports is the same (``compare_report_tables.py``).  Without
    it, the report here only.

The machine's load (``os.getloadavg``) is printed beside every timing: on a
shared machine read the ratios of timings taken at similar loads.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from audit.scores import score_stats_from_arrays, sweep

TARGETS = np.logspace(-3, -1, 100)
SEED = 0


def synthetic(n: int, groups: int = 8, seed: int = SEED):
    """``n`` synthetic scores: (score float64, mated bool, group int8)."""
    rng = np.random.default_rng(seed)
    group = rng.integers(0, groups, n, dtype=np.int8)
    mated = rng.random(n, dtype=np.float32) < 0.1
    score = rng.standard_normal(n)
    score += 2.5 * mated
    score += 0.05 * group
    return score, mated, group


def best_time(function, repeat: int) -> float:
    best = np.inf
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
        del result
    return best


def peak_bytes(function) -> int:
    """Peak extra bytes allocated (numpy reports its buffers to tracemalloc) during one call."""
    gc.collect()
    tracemalloc.start()
    result = function()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del result
    return peak


def audit_path(score, mated, group, group_2=None, algorithm=None, groups=None):
    stats = score_stats_from_arrays(score, mated, group, group_2, algorithm, groups=groups)
    return sweep(stats, TARGETS)


def roc_path(score, mated, group, group_2=None, algorithm=None, n_groups=8):
    """Per-group FMR and FNMR (arrays (n_alg * n_targets, n_groups)) with ``roc_curve``."""
    from sklearn.metrics import roc_curve

    fmr_rows, fnmr_rows = [], []
    algorithms = [None] if algorithm is None else range(int(algorithm.max()) + 1)
    for a in algorithms:
        rows = slice(None) if a is None else algorithm == a
        s, m, g1 = score[rows], mated[rows], group[rows]
        same = np.ones(len(s), bool) if group_2 is None else group_2[rows] == g1
        fpr, _, thresholds = roc_curve(m, s, drop_intermediate=False)
        # most permissive threshold with pooled FPR <= target
        chosen = thresholds[np.searchsorted(fpr, TARGETS, side="right") - 1]
        fmr = np.empty((len(TARGETS), n_groups))
        fnmr = np.empty((len(TARGETS), n_groups))
        for g in range(n_groups):
            keep = (g1 == g) & (m | same)
            gfpr, gtpr, gthr = roc_curve(m[keep], s[keep], drop_intermediate=False)
            # thresholds decrease; rates at t: the last point whose threshold is >= t
            idx = np.searchsorted(-gthr, -chosen, side="right") - 1
            fmr[:, g] = np.where(idx >= 0, gfpr[np.maximum(idx, 0)], 0.0)
            fnmr[:, g] = np.where(idx >= 0, 1 - gtpr[np.maximum(idx, 0)], 1.0)
        fmr_rows.append(fmr)
        fnmr_rows.append(fnmr)
    return np.concatenate(fmr_rows), np.concatenate(fnmr_rows)


def voxceleb_arrays():
    from audit.sources import voxceleb

    table = voxceleb.load_voxceleb(("gender", "nationality"))
    return (
        table["score"].to_numpy(),
        table["mated"].to_numpy(),
        table["group_1"].cat.codes.to_numpy(),
        table["group_2"].cat.codes.to_numpy(),
        table["algorithm"].cat.codes.to_numpy(),
        list(table["group_1"].cat.categories),
    )


def _load() -> str:
    return "load " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def _report_seconds(root: Path, folder: Path) -> float:
    """Wall-clock seconds of one ``audit scores`` of the checkout at ``root`` into ``folder``."""
    start = time.perf_counter()
    subprocess.run(
        [str(root / ".venv" / "bin" / "audit"), "scores", "--reports-dir", str(folder)]
        + ["--name", "bench", "--no-progress"],
        cwd=folder,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - start


def bootstrap_benchmark(args) -> None:
    """The subject bootstrap and the scores report, as ratios to one statistics build."""
    from audit.measures.registry import evaluate_scores
    from audit.scores import rates_at_fmr, score_stats
    from audit.scores.weighted import sorted_scores
    from audit.sources import voxceleb
    from audit.tables.groupings import regroup
    from audit.uncertainty import score_bootstrap
    from audit.uncertainty.replicates import _unit_sampler

    loaded = voxceleb.load_voxceleb(("gender", "nationality"))
    floor = best_time(lambda: score_stats(loaded), args.repeat)
    n_rows, n_counts = args.row_replicates, 200
    print(
        f"VoxCeleb1-H, {len(loaded):,} comparisons; floor = one statistics build "
        f"(score_stats, best of {args.repeat}): {floor * 1e3:.1f} ms ({_load()})"
    )
    print("a replicate: the threshold at FMR 0.1%, the rates and every score measure")
    header = (
        f"{'grouping':>18} {'by rows ms':>10} {'/floor':>7} {'by counts ms':>12} {'/floor':>7} "
        f"{'making one ms':>13} {'/floor':>7} {'rows/counts':>11} {'same':>5}  load"
    )
    print(header)
    print("-" * len(header))
    options = {"unit": "subject", "subject": "subject_1", "group": "group_1", "seed": 0}

    def run(table, how, n):
        return score_bootstrap(
            table,
            lambda s: rates_at_fmr(s, 1e-3),
            score_measures=evaluate_scores,
            replicate_as=how,
            n_replicates=n,
            **options,
        )

    for attributes in (("gender",), ("nationality",), ("gender", "nationality")):
        table = regroup(loaded, attributes)
        start = time.perf_counter()
        by_rows = run(table, "table", n_rows)
        rows_s = (time.perf_counter() - start) / n_rows
        start = time.perf_counter()
        run(table, "statistics", n_counts)
        counts_s = (time.perf_counter() - start) / n_counts
        same = run(table, "statistics", n_rows)
        equal = all(
            getattr(by_rows, name).equals(getattr(same, name))
            for name in ("intervals", "ranking", "ranking_summary", "statistics", "frontier")
        )
        units, n_units, counts = _unit_sampler(
            table,
            unit="subject",
            subject="subject_1",
            group="group_1",
            mated="mated",
            algorithm="algorithm",
        )
        base = sorted_scores(table, units, n_units)
        rng = np.random.default_rng(0)
        drawn = [counts(rng) for _ in range(20)]
        making = best_time(
            lambda base=base, drawn=drawn: [base.replicate(c) for c in drawn], args.repeat
        ) / len(drawn)
        print(
            f"{'.'.join(attributes):>18} {rows_s * 1e3:>10.1f} {rows_s / floor:>7.1f} "
            f"{counts_s * 1e3:>12.1f} {counts_s / floor:>7.2f} {making * 1e3:>13.1f} "
            f"{making / floor:>7.2f} {rows_s / counts_s:>11.1f} {'yes' if equal else 'NO':>5}  "
            f"{_load()}",
            flush=True,
        )
    here = Path(__file__).resolve().parent.parent
    sides = ([("before", args.baseline.resolve())] if args.baseline else []) + [("after", here)]
    with tempfile.TemporaryDirectory() as folder:
        seconds = {}
        for name, root in sides:
            (Path(folder) / name).mkdir()
            print(f"report {name} ({root}): {_load()}", flush=True)
            seconds[name] = _report_seconds(root, Path(folder) / name)
            print(
                f"  audit scores {name}: {seconds[name]:.1f} s = {seconds[name] / floor:,.0f} "
                f"floors ({_load()})",
                flush=True,
            )
        if args.baseline:
            print(f"  after/before: {seconds['after'] / seconds['before']:.2f}")
            sys.path.insert(0, str(here / "benchmarks"))
            from compare_report_tables import compare

            problems = compare(Path(folder) / "before" / "bench", Path(folder) / "after" / "bench")
            count = len(list((Path(folder) / "before" / "bench" / "tables").glob("*.csv")))
            print("  tables: " + ("; ".join(problems) if problems else f"all {count} identical"))
        met = "met" if seconds["after"] <= 20 else "NOT met"
        print(f"goal: audit scores on VoxCeleb at most 20 s: {seconds['after']:.1f} s ({met})")
    print(f"{platform.python_version()}, numpy {np.__version__}, {os.cpu_count()} CPUs")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(
        description="Time and peak memory of audit's per-group rates at 100 operating points, "
        "against one numpy.sort and per-group sklearn roc_curve.",
        epilog="Run from the repository root, with the package installed (make install): "
        ".venv/bin/python benchmarks/bench_scores.py --sizes 1e6 1e7 1e8. "
        "See the module docstring for what each column means.",
    )
    parser.add_argument(
        "--sizes",
        nargs="*",
        type=float,
        default=[1e6, 1e7],
        help="numbers of synthetic scores (default: 1e6 1e7)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=3,
        help="timed runs per case; the best is reported (default: 3)",
    )
    parser.add_argument("--no-voxceleb", action="store_true", help="skip the VoxCeleb rows")
    parser.add_argument(
        "--bootstrap",
        action="store_true",
        help="time the subject bootstrap and the scores report on VoxCeleb instead",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="with --bootstrap: a checkout (with .venv) whose audit scores is timed as 'before'",
    )
    parser.add_argument(
        "--row-replicates",
        type=int,
        default=10,
        help="with --bootstrap: replicates made from resampled rows (default: 10)",
    )
    parser.add_argument("--no-roc", action="store_true", help="skip the scikit-learn comparison")
    parser.add_argument(
        "--roc-max",
        type=float,
        default=1e7,
        help="largest size for the scikit-learn comparison (default: 1e7)",
    )
    args = parser.parse_args(argv)
    if args.bootstrap:
        bootstrap_benchmark(args)
        return
    have_sklearn = not args.no_roc
    if have_sklearn:
        try:
            import sklearn  # noqa: F401
        except ImportError:
            have_sklearn = False
            print("scikit-learn not installed: skipping the roc_curve comparison")

    print(
        f"numpy {np.__version__}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, {len(TARGETS)} target FMRs, seed {SEED}, "
        f"best of {args.repeat}"
    )
    header = (
        f"{'case':>20} {'n':>12} {'input MB':>9} {'audit s':>8} {'peak MB':>8} "
        f"{'peak/input':>10} {'sort s':>7} {'audit/sort':>10} {'roc s':>7} "
        f"{'roc/audit':>9} {'max diff':>8}"
    )
    print(header)
    print("-" * len(header))

    def report(case, score, mated, group, group_2=None, algorithm=None, labels=None):
        n = len(score)
        n_groups = len(labels) if labels is not None else int(group.max()) + 1
        input_bytes = sum(
            x.nbytes for x in (score, mated, group, group_2, algorithm) if x is not None
        )

        def ours():
            return audit_path(score, mated, group, group_2, algorithm, labels)

        seconds = best_time(ours, args.repeat)
        total = input_bytes + peak_bytes(ours)
        sort_s = best_time(lambda: np.sort(score), args.repeat)
        roc = ratio = agree = "-"
        if have_sklearn and n <= args.roc_max:
            start = time.perf_counter()
            fmr, fnmr = roc_path(score, mated, group, group_2, algorithm, n_groups)
            roc_s = time.perf_counter() - start
            table = ours()
            diff = max(
                np.abs(fmr.ravel() - table["fmr"].to_numpy()).max(),
                np.abs(fnmr.ravel() - table["fnmr"].to_numpy()).max(),
            )
            roc, ratio, agree = f"{roc_s:7.2f}", f"{roc_s / seconds:9.1f}", f"{diff:.0e}"
        print(
            f"{case:>20} {n:>12,} {input_bytes / 1e6:>9.0f} {seconds:>8.3f} "
            f"{total / 1e6:>8.0f} {total / input_bytes:>10.2f} {sort_s:>7.3f} "
            f"{seconds / sort_s:>10.2f} {roc:>7} {ratio:>9} {agree:>8}",
            flush=True,
        )

    for size in args.sizes:
        score, mated, group = synthetic(int(size))
        report("synthetic 8 groups", score, mated, group)
        del score, mated, group
        gc.collect()
    if not args.no_voxceleb:
        score, mated, g1, g2, algorithm, labels = voxceleb_arrays()
        report("VoxCeleb 2 systems", score, mated, g1, g2, algorithm, labels)
        for a in (0, 1):
            rows = algorithm == a
            report(
                f"VoxCeleb system {a}", score[rows], mated[rows], g1[rows], g2[rows], None, labels
            )
    print(
        "peak MB = input arrays + peak numpy allocations during the audit path (tracemalloc); "
        "max diff = largest |audit - roc_curve| over per-group FMR and FNMR"
    )


if __name__ == "__main__":
    main()
