"""Benchmark: reading the report notebooks' parameters, papermill against :mod:`ast`.

Before a report starts its kernels, the command line reads the parameters the
notebooks declare (to refuse an unknown ``-p`` key and type each value). Each
side runs in a fresh process, from the interpreter's start to the parameters of
the ffmc and pareto notebooks read:

* ``papermill``: ``papermill.inspect_notebook`` (imports papermill, nbformat,
  jsonschema, ...), as the runner did;
* ``ast``: :func:`audit.report.parameters.notebook_parameters` (json and ast).

Also timed the same way: the import of :mod:`audit.report.runner`, and the
command lines ``audit --help`` and ``audit check <table>`` when a table is given.
The sides run alternately, ``--repeat`` times each, so that the load of a shared
machine hits both alike; the medians and their ratio are printed.

Run from the repository root::

    .venv/bin/python benchmarks/bench_parameters.py [--repeat 7] [--table path.csv]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

SNIPPETS = {
    "papermill": (
        "import papermill\n"
        "from audit.report.runner import notebook_path\n"
        "for n in ('ffmc', 'pareto'): papermill.inspect_notebook(str(notebook_path(n)))\n"
    ),
    "ast": (
        "from audit.report.parameters import notebook_parameters\n"
        "from audit.report.runner import notebook_path\n"
        "for n in ('ffmc', 'pareto'): notebook_parameters(notebook_path(n))\n"
    ),
    "import runner": "import audit.report.runner\n",
}


def _seconds(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--table", help="a rates table for 'audit check'")
    args = parser.parse_args()
    commands = {name: [sys.executable, "-c", code] for name, code in SNIPPETS.items()}
    commands["audit --help"] = [sys.executable, "-m", "audit", "--help"]
    if args.table:
        commands["audit check"] = [sys.executable, "-m", "audit", "check", args.table]
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, command in commands.items():
            times[name].append(_seconds(command))
    median = {name: statistics.median(values) for name, values in times.items()}
    print(f"median wall time of a fresh process, {args.repeat} runs each, interleaved")
    for name, seconds in median.items():
        print(f"  {name:14s} {seconds:6.3f} s")
    print(f"ratio papermill / ast: {median['papermill'] / median['ast']:.2f}")
    print(f"cost of papermill over ast: {median['papermill'] - median['ast']:.3f} s")


if __name__ == "__main__":
    main()
