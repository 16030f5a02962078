"""What the report benchmarks share: a report against its floor, side by side in one run.

``bench_report_floor.py`` (the Annex 15 report) and ``bench_scores_report.py``
(``audit scores`` on VoxCeleb) each time a floor -- one fresh Python process that
computes everything the report shows, without drawing -- beside the report, and
beside a baseline checkout's report if asked, alternating so that the load of a
shared machine hits every side alike, each timing begun once the machine is quiet
(if it becomes so within a minute).  Not a benchmark itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path


def load() -> str:
    """The machine's load averages (1, 5 and 15 minutes), as printed beside a timing."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _cpu_idle() -> tuple[int, int] | None:
    """(idle, total) CPU time of the machine so far (Linux ``/proc/stat``), else ``None``."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(x) for x in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return fields[3] + fields[4], sum(fields)


def wait_quiet(limit: float, idle: float = 0.9, seconds: int = 2) -> float | None:
    """Wait until the machine's cores were at least ``idle`` idle for ``seconds``
    seconds in a row, at most ``limit`` seconds; return the seconds waited, or ``None``
    if it stayed busy (or cannot be told).  A machine shared with other work then
    times each side as alike as it can."""
    start, calm = time.monotonic(), 0
    last = _cpu_idle()
    if last is None or limit <= 0:
        return None
    while time.monotonic() - start < limit:
        time.sleep(1)
        now = _cpu_idle()
        calm = calm + 1 if (now[0] - last[0]) >= idle * max(now[1] - last[1], 1) else 0
        last = now
        if calm >= seconds:
            return time.monotonic() - start
    return None


#: An ``audit`` command: its words, and the environment it runs in (None: this one's).
Command = tuple[list[str], dict | None]


def arguments(description: str):
    """The options every report benchmark takes: ``--repeat``, ``--baseline`` and
    ``--quiet``; a parser to add a benchmark's own to."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--repeat", type=int, default=3, help="timings of each (best of N)")
    parser.add_argument("--baseline", type=Path, help="a checkout to time too")
    add_quiet(parser, "each timing")
    return parser


def add_quiet(parser, before: str) -> None:
    """``--quiet``: the seconds to wait (:func:`wait_quiet`) before ``before``."""
    parser.add_argument(
        "--quiet",
        type=float,
        default=60.0,
        help=f"seconds to wait, before {before}, for the machine to be quiet (0: never)",
    )


def audit_commands(baseline: Path | None) -> dict[str, Command]:
    """The ``audit`` command of this checkout (``report``) and of ``baseline``, if given:
    its own ``.venv``'s, else this interpreter's with the checkout first on
    ``PYTHONPATH`` and its notebooks as ``audit.notebooks`` (:data:`BASELINE`)."""
    commands = {"report": ([str(Path(sys.executable).parent / "audit")], None)}
    if baseline is not None:
        root = baseline.resolve()
        own = root / ".venv" / "bin" / "audit"
        if own.exists():
            commands["baseline"] = ([str(own)], None)
        else:
            env = dict(os.environ, PYTHONPATH=str(root))
            commands["baseline"] = ([sys.executable, "-c", BASELINE, str(root)], env)
    return commands


#: ``python -c BASELINE ROOT ARGS...``: ``audit ARGS`` of the checkout ``ROOT`` (first on
#: ``PYTHONPATH``), its ``notebooks/`` found as ``audit.notebooks``.  The editable
#: install of this checkout maps ``audit.notebooks`` to this checkout's ``notebooks/``,
#: which a checkout's ``audit/`` does not hold: without this, the baseline's package ran
#: this checkout's notebooks.
BASELINE = (
    "import runpy, sys; import audit; root = sys.argv.pop(1); audit.__path__.append(root); "
    "sys.argv[0] = 'audit'; runpy.run_module('audit', run_name='__main__', alter_sys=True)"
)


def time_floor(code: str) -> float:
    """Seconds of ``code`` in a fresh process of this interpreter, from its start to its
    end."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return time.perf_counter() - start


def time_audit(
    command: Command, argv: Sequence[str], keep: tuple[str, Path] | None = None
) -> float:
    """Seconds of ``command argv --reports-dir <tmp> --no-progress`` in a fresh process
    (:data:`Command`: its words and environment), run in that folder; with ``keep`` (a
    folder of the reports, a destination), that folder is copied there the first time."""
    words, env = command
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        subprocess.run(
            [*words, *argv, "--reports-dir", folder, "--no-progress"],
            cwd=folder,
            check=True,
            capture_output=True,
            env=env,
        )
        seconds = time.perf_counter() - start
        if keep is not None and not keep[1].exists():
            shutil.copytree(Path(folder) / keep[0], keep[1])
        return seconds


def alternate(
    sides: Sequence[str], timed: Callable[[str], float], repeat: int, quiet: float = 60.0
) -> dict[str, float]:
    """Time each side ``repeat`` times, every side once a round, the order reversed every
    other round, each once the machine is quiet (:func:`wait_quiet`, at most ``quiet``
    seconds); print each timing with the load and whether it was quiet before; print
    and return the best of each, with its ratio to the first side's (the floor)."""
    best = dict.fromkeys(sides, float("inf"))
    loads = []
    for round_ in range(repeat):
        for side in sides if round_ % 2 == 0 else sides[::-1]:
            waited = wait_quiet(quiet)
            calm = "busy before" if waited is None else f"quiet after {waited:.0f} s"
            seconds = timed(side)
            best[side] = min(best[side], seconds)
            loads.append(os.getloadavg()[0])
            print(
                f"  [{round_ + 1}/{repeat}] {side:8s} {seconds:7.2f} s   load {load()}   {calm}",
                flush=True,
            )
    floor = best[sides[0]]
    print(f"\nbest of {repeat}, alternating; {os.cpu_count()} cores\n")
    print(f"| {'':8s} | {'seconds':>8s} | {'/ floor':>8s} |")
    print(f"|{'-' * 10}|{'-' * 10}|{'-' * 10}|")
    for side in sides:
        print(f"| {side:8s} | {best[side]:8.2f} | {best[side] / floor:8.2f} |")
    print(f"\nload (1 min) during the run: {min(loads):.2f} - {max(loads):.2f}")
    return best
