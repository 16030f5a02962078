"""The processes below a test's process or command, read from Linux ``/proc``: the
report tests check with them that no kernel or drawing process is left running. And
what a fresh interpreter imports to run some code (:func:`imported_by`)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path


def imported_by(code: str, modules: Iterable[str]) -> list[str]:
    """Those of ``modules`` a fresh interpreter of this Python has imported once it has
    run ``code`` (which prints nothing), sorted."""
    probe = (
        f"{code}\nimport json, sys\n"
        f"print(json.dumps(sorted(m for m in {sorted(modules)!r} if m in sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def children(pid: int) -> dict[int, str]:
    """The processes whose parent is ``pid``, with their command lines (Linux /proc)."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path("/proc", entry, "stat").read_text()
            command = Path("/proc", entry, "cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found[int(entry)] = command.decode(errors="replace")
    return found


def descendants(pid: int) -> dict[int, str]:
    """Every process below ``pid`` (children, theirs, ...), with its command line."""
    found, parents = {}, [pid]
    while parents:
        below = children(parents.pop())
        found.update(below)
        parents.extend(below)
    return found


def finished(process: subprocess.Popen, timeout: float) -> tuple[str, str]:
    """``process.communicate()`` within ``timeout`` seconds; past it, the process and
    every process below it are killed (a hung command leaves nothing behind for the
    next tests to find) and the test fails with what the command wrote."""
    try:
        return process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        below = descendants(process.pid)
        for pid in [process.pid, *below]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        out, err = process.communicate()
        raise AssertionError(
            f"{process.args} did not end within {timeout:g} s; below it {below}; it wrote "
            f"{out!r} and {err!r}"
        ) from None


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie is not)."""
    try:
        stat = Path("/proc", str(pid), "stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def name(pid: int) -> str:
    """The process's name (``/proc/PID/comm``; "" once it is gone)."""
    try:
        return Path("/proc", str(pid), "comm").read_text().strip()
    except OSError:
        return ""


def kernels_below(pid: int) -> dict[int, str]:
    """The notebook kernels below ``pid``: started as ``python -m ipykernel_launcher``,
    or forked by the report's server (:mod:`audit.report.forkserver`), which names them."""
    from audit.report.forkserver import KERNEL_NAME

    return {p: c for p, c in descendants(pid).items() if "ipykernel" in c or name(p) == KERNEL_NAME}


def workers(pid: int) -> dict[int, str]:
    """The drawing processes (:mod:`audit.report.background`) below ``pid``, started
    afresh or forked by the report's server."""
    from audit.report.forkserver import WORKER_NAME

    found = descendants(pid).items()
    return {p: c for p, c in found if "audit.report.background" in c or name(p) == WORKER_NAME}
