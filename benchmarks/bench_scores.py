"""Benchmark: per-group rates at 100 operating points from raw scores.

Not a test.  Run from the repository root::

    python benchmarks/bench_scores.py                 # 1e6 and 1e7 synthetic, VoxCeleb
    python benchmarks/bench_scores.py --sizes 1e6 1e7 1e8 --no-voxceleb

For each case it prints the time and the peak extra memory (numpy allocations
traced by ``tracemalloc``) of ``audit``'s path -- sufficient statistics
(:func:`audit.scores.score_stats_from_arrays`) then thresholds and per-group
rates at 100 target FMRs (:func:`audit.scores.sweep`) -- next to the time of
one ``numpy.sort`` of the same scores (the yardstick) and, if scikit-learn is
installed, of the per-group ``roc_curve`` approach (one ``roc_curve`` on the
pooled scores to set the thresholds, one per group to read the rates).
Synthetic data: 8 groups, 10% mated, normal scores.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from audit.scores import score_stats_from_arrays, sweep  # noqa: E402

TARGETS = np.logspace(-3, -1, 100)


def synthetic(n: int, groups: int = 8, seed: int = 0):
    rng = np.random.default_rng(seed)
    group = rng.integers(0, groups, n, dtype=np.int8)
    mated = rng.random(n, dtype=np.float32) < 0.1
    score = rng.standard_normal(n)
    score += 2.5 * mated
    score += 0.05 * group
    return score, mated, group


def measure(function):
    """(seconds, peak extra bytes) of one call."""
    gc.collect()
    tracemalloc.start()
    start = time.perf_counter()
    result = function()
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del result
    return seconds, peak


def audit_path(score, mated, group, group_2=None, algorithm=None, groups=None):
    stats = score_stats_from_arrays(score, mated, group, group_2, algorithm, groups=groups)
    return sweep(stats, TARGETS)


def roc_path(score, mated, group, groups):
    from sklearn.metrics import roc_curve

    fpr, _, thresholds = roc_curve(mated, score)
    # most permissive threshold with pooled FPR <= target
    at = np.searchsorted(fpr, TARGETS, side="right") - 1
    chosen = thresholds[at]
    out = []
    for g in range(groups):
        rows = group == g
        gfpr, gtpr, gthr = roc_curve(mated[rows], score[rows])
        # roc thresholds decrease; rates at a threshold t: the last point with threshold >= t
        idx = np.searchsorted(-gthr, -chosen, side="right") - 1
        out.append((gfpr[idx], 1 - gtpr[idx]))
    return out


def voxceleb_arrays():
    from audit import voxceleb

    table = voxceleb.load_voxceleb(("gender", "nationality"))
    return (table["score"].to_numpy(), table["mated"].to_numpy(),
            table["group_1"].cat.codes.to_numpy(), table["group_2"].cat.codes.to_numpy(),
            table["algorithm"].cat.codes.to_numpy(), list(table["group_1"].cat.categories))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", nargs="*", type=float, default=[1e6, 1e7])
    parser.add_argument("--no-voxceleb", action="store_true")
    parser.add_argument("--no-roc", action="store_true", help="skip the scikit-learn comparison")
    parser.add_argument("--roc-max", type=float, default=1e7,
                        help="largest size for the scikit-learn comparison")
    args = parser.parse_args()
    try:
        import sklearn  # noqa: F401
        have_sklearn = not args.no_roc
    except ImportError:
        have_sklearn = False
        print("scikit-learn not installed: skipping the roc_curve comparison")

    header = (f"{'case':>22} {'n':>12} {'input MB':>9} {'audit s':>8} {'peak MB':>8} "
              f"{'peak/input':>10} {'sort s':>7} {'audit/sort':>10} {'roc s':>7} {'roc/audit':>9}")
    print(header)
    print("-" * len(header))

    def report(case, score, mated, group, group_2=None, algorithm=None, groups=8, labels=None):
        n = len(score)
        input_bytes = score.nbytes + mated.nbytes + group.nbytes + (
            0 if group_2 is None else group_2.nbytes) + (0 if algorithm is None else algorithm.nbytes)
        seconds, peak = measure(lambda: audit_path(score, mated, group, group_2, algorithm,
                                                   labels))
        sort_s, _ = measure(lambda: np.sort(score))
        roc = "-"
        ratio = "-"
        if have_sklearn and n <= args.roc_max and algorithm is None:
            roc_s, _ = measure(lambda: roc_path(score, mated, group, groups))
            roc, ratio = f"{roc_s:7.2f}", f"{roc_s / seconds:9.1f}"
        total = input_bytes + peak
        print(f"{case:>22} {n:>12,} {input_bytes / 1e6:>9.0f} {seconds:>8.2f} {total / 1e6:>8.0f} "
              f"{total / input_bytes:>10.2f} {sort_s:>7.2f} {seconds / sort_s:>10.2f} "
              f"{roc:>7} {ratio:>9}", flush=True)

    for size in args.sizes:
        n = int(size)
        score, mated, group = synthetic(n)
        report(f"synthetic 8 groups", score, mated, group)
        del score, mated, group
        gc.collect()
    if not args.no_voxceleb:
        score, mated, g1, g2, algorithm, labels = voxceleb_arrays()
        report("VoxCeleb 2 systems", score, mated, g1, g2, algorithm, len(labels), labels)
        for a in (0, 1):
            rows = algorithm == a
            report(f"VoxCeleb system {a}", score[rows], mated[rows], g1[rows], None, None,
                   len(labels), labels)
    print("peak MB = input + peak extra numpy allocations during the audit path (tracemalloc)")


if __name__ == "__main__":
    main()
