"""The ``audit`` command as a shell starts it (``[project.scripts]``, ``python -m audit``).

The command line (:mod:`audit.cli`) takes SIGINT and SIGTERM once it runs
(:func:`audit.report.interrupt.handle_signals`), after importing itself and what it
runs on. This module imports nothing else, and holds the two signals from the
command's first line (:func:`hold`): one that comes while the command line imports
is kept, and the command line, once its handlers are in place, says it and ends as
it would have (:func:`resend`: status 130 or 143), before doing anything. Python's
own handler printed a ``KeyboardInterrupt`` traceback there, and SIGTERM ended the
process with status -15. (Only the interpreter's own start, before this module runs,
is left to Python.)
"""

from __future__ import annotations

import signal

#: The signals this process holds until the command line takes them.
SIGNALS = (signal.SIGINT, signal.SIGTERM)

#: The signals that came while held, first first.
_held: list[int] = []


def _hold(signum, frame) -> None:
    """The handler of a held signal: kept, for :func:`resend`."""
    _held.append(signum)


def hold() -> list[int]:
    """Hold SIGINT and SIGTERM (each one the process was not started ignoring: a shell
    starts a script's background jobs with SIGINT ignored) until :func:`resend`, and
    return them."""
    handled = [s for s in SIGNALS if signal.getsignal(s) is not signal.SIG_IGN]
    for signum in handled:
        signal.signal(signum, _hold)
    return handled


def resend() -> None:
    """Send again, to this process, the first signal held since :func:`hold` (if any),
    and forget the others: called once the command line's handlers are in place, it
    is handled there, as if it had come then."""
    if _held:
        signum = _held[0]
        _held.clear()
        signal.raise_signal(signum)


def run() -> int:
    """The ``audit`` command: :func:`audit.cli.run`, with the signals held while it is
    imported."""
    hold()
    from audit.cli import run as command

    return command()
