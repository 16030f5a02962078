"""Benchmark: the test suite's wall time against its goal (3 minutes on 2 cores), and why.

Runs the README's test command (``python -m pytest``, on every core by the project's
pytest settings) from the repository root, in a fresh process, and prints:

- its wall time, and the ratio to the goal (180 s);
- the cores the machine kept busy meanwhile, the suite's and any other work's;
- the CPU time of the run: the pytest processes and every process they started and
  waited for (kernels, drawing workers, fork servers, commands: ``getrusage`` of the
  children), and the cores that this kept busy on average (CPU / wall);
- the floor that CPU time sets on this machine: CPU / cores, the wall time of the same
  work spread perfectly over every core.  A wall time near it says the suite is as
  parallel as it can be, and only less work makes it faster;
- the test files that took longest (``--durations=0`` summed by file: setup, call and
  teardown of each test, wall time on its worker), the ten first.

The machine's load is printed before and after.  Extra arguments go to pytest, after
``--`` (``-- -m "not slow"``, ``-- -n 0``).  Run from the repository root::

    AUDIT_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_suite.py [--quiet 20] [-- ARGS]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from floors import _cpu_idle, add_quiet, load, wait_quiet

#: The suite's goal on a 2-core machine, in seconds of wall time.
GOAL = 180.0
#: A line of ``--durations=0``: seconds, phase, test id.
DURATION = re.compile(r"^\s*([0-9.]+)s\s+(setup|call|teardown)\s+(\S+?)(?:::|$)")
#: pytest's last line: "3600 passed, 1 skipped in 327.85s (0:05:27)".
SUMMARY = re.compile(r"^=*\s*(\d+ (?:passed|failed).*?) in [0-9.]+s")


def by_file(printed: str) -> dict[str, float]:
    """Seconds of every test's setup, call and teardown summed by its file.

    >>> by_file("1.50s call     tests/a.py::test_x[1]\\n0.25s setup    tests/a.py::test_x[1]\\n"
    ...         "3.00s call     tests/b.py::test_y\\n")
    {'tests/b.py': 3.0, 'tests/a.py': 1.75}
    """
    seconds: dict[str, float] = defaultdict(float)
    for line in printed.splitlines():
        match = DURATION.match(line)
        if match:
            seconds[match.group(3)] += float(match.group(1))
    return dict(sorted(seconds.items(), key=lambda item: -item[1]))


def run(pytest_args: list[str]) -> tuple[int, float, float, float | None, str]:
    """The suite run once: its exit status, wall seconds, CPU seconds (the run's
    processes waited for), the cores the whole machine kept busy meanwhile (the run and
    whatever else ran; None where ``/proc/stat`` cannot tell) and what it printed."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--durations=0"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    ticks = _cpu_idle()
    start = time.perf_counter()
    done = subprocess.run(
        [*command, *pytest_args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    machine = None
    if ticks is not None and (now := _cpu_idle()) is not None:
        idle, total = now[0] - ticks[0], now[1] - ticks[1]
        machine = (os.cpu_count() or 1) * (total - idle) / max(total, 1)
    return done.returncode, wall, cpu, machine, done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_quiet(parser, "the run")
    parser.add_argument("pytest_args", nargs="*", help="arguments for pytest, after --")
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parent.parent
    os.chdir(root)
    cores = os.cpu_count() or 1
    waited = wait_quiet(args.quiet)
    quiet = "never quiet" if waited is None else f"quiet after {waited:.0f} s"
    print(f"the suite, {cores} cores; load before: {load()} ({quiet})", flush=True)
    status, wall, cpu, machine, printed = run(args.pytest_args)
    print(f"load after: {load()}")
    kept = Path(tempfile.gettempdir()) / "bench_suite.out"
    kept.write_text(printed, encoding="utf-8")
    print(f"pytest's output: {kept}")
    summary = next((m.group(1) for line in printed.splitlines() if (m := SUMMARY.match(line))), "?")
    if status != 0:  # what failed, without the durations
        failures = printed.find("= FAILURES =")
        durations = printed.find("slowest durations", max(failures, 0))
        print(printed[max(failures, 0) : durations if durations > failures else None][-20000:])
        print(f"pytest exited with status {status}: {summary}")
        return 1
    print(f"\n{summary}\n")
    floor = cpu / cores
    rows = [
        ("wall", f"{wall:.1f} s", f"{wall / GOAL:.2f}x the goal ({GOAL:.0f} s)"),
        ("CPU", f"{cpu:.0f} CPU-s", f"{cpu / wall:.2f} of {cores} cores kept busy"),
        ("CPU / cores", f"{floor:.1f} s", f"the wall time at perfect parallelism: {floor / GOAL:.2f}x"),
    ]  # fmt: skip
    if machine is not None:
        busy = "busy on average during the run, its own work and any other"
        rows.append(("machine", f"{machine:.2f} cores", busy))
    print(f"| {'':<11} | {'value':>12} | {'against':<60} |")
    print(f"|{'-' * 13}|{'-' * 14}|{'-' * 62}|")
    for name, value, against in rows:
        print(f"| {name:<11} | {value:>12} | {against:<60} |")
    verdict = "met" if wall <= GOAL else "NOT met"
    print(f"- the suite under {GOAL:.0f} s: {wall:.1f} s ({verdict})")
    print("\nthe longest test files (seconds of their tests, on their worker):")
    for path, seconds in list(by_file(printed).items())[:10]:
        print(f"  {seconds:7.1f}  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
