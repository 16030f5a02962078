"""Benchmark: the bootstrap of Kendall's tau-b, all replicates at once against scipy per replicate.

The cross-dataset audit (``audit compare``) gives every pair of measures on a
dataset a bootstrap interval of Kendall's tau-b over algorithms: with the
Annex 15 table's 126 algorithms and 26 variables, 325 pairs of 1,000
replicates each.  Two ways to compute one pair's replicates:

* ``scipy``: ``scipy.stats.kendalltau(x[drawn], y[drawn], variant="b")`` on
  each resample, one call per replicate;
* ``vectorised``: :func:`audit.analysis.ranks.tau_b_replicates`, every
  replicate from the sign matrices of the pairs and the resample's counts of
  each algorithm (three matrix products).

Both get the same resamples, and the script checks they give the same values.
The two run alternately, ``--repeat`` times each, so that the load of a shared
machine hits both alike; the medians and their ratio are printed.

Run from the repository root::

    .venv/bin/python benchmarks/bench_rank_agreement.py [--algorithms 126] [--replicates 1000]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from scipy.stats import kendalltau

from audit.analysis.ranks import _counts, tau_b_replicates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithms", type=int, default=126)
    parser.add_argument("--replicates", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    x = np.round(rng.lognormal(size=args.algorithms), 1)  # ties, as a rounded table has
    y = np.round(x * rng.lognormal(0, 0.5, size=args.algorithms), 1)
    counts = _counts(args.algorithms, args.replicates, rng)
    drawn = [np.repeat(np.arange(args.algorithms), c) for c in counts]

    def slow():
        return np.array([kendalltau(x[d], y[d], variant="b").statistic for d in drawn])

    def fast():
        return tau_b_replicates(x, y, counts)

    assert np.allclose(slow(), fast(), equal_nan=True)
    times = {"scipy": [], "vectorised": []}
    for _ in range(args.repeat):
        for name, run in (("scipy", slow), ("vectorised", fast)):
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(t) for name, t in times.items()}
    print(f"{args.algorithms} algorithms, {args.replicates} replicates, one pair of variables")
    for name, median in medians.items():
        print(f"  {name:<11} {1000 * median:9.1f} ms (median of {args.repeat})")
    print(f"  scipy / vectorised: {medians['scipy'] / medians['vectorised']:.1f}x")


if __name__ == "__main__":
    main()
