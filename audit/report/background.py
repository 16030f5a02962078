"""Computation handed to a second process while a notebook goes on with its next cells.

A report's notebook runs in one kernel, on one core: a long computation whose
inputs are known early (the bootstrap of a score table, say) waits its turn
while the other core idles.  :class:`Background` starts a worker process (the
``spawn`` start method: a fresh interpreter, never a fork of the kernel, whose
threads a fork would copy mid-step), sends it a function and its arguments, and
returns a :class:`Job` at once; the notebook computes on, and later takes the
result with :meth:`Job.result`::

    background = Background()
    job = background.submit(score_bootstrap, table, rates, n_replicates=200, seed=0)
    ...                                       # other cells, meanwhile
    result = job.result()                     # the same value, computed apart

The function and its arguments are pickled, so the function must be importable
(defined in a module, not in the notebook); the result is the value the
function returns, computed by the same code on the same data -- seeded work
gives the same numbers as in the kernel.  The warnings the function raises are
raised again in the kernel by :meth:`Job.result`, at the place they were raised
in the worker, where the notebook's warning record
(:mod:`audit.report.notices`) sees them; an error is raised there too.

The worker writes no file.  It is in the kernel's process group, so what stops
the kernel (:func:`audit.report.interrupt.stop_kernels`) stops it too, and it
ends when the kernel ends.  With one core, or ``workers=0``, the function runs
in the kernel when the result is asked for.
"""

from __future__ import annotations

import multiprocessing
import os
import warnings
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor


def _call(function: Callable, args: tuple, kwargs: dict):
    """``function(*args, **kwargs)`` and the warnings it raised, each as
    ``(message, category, filename, lineno)``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # every one: the kernel's filters decide
        value = function(*args, **kwargs)
    return value, [(str(w.message), w.category, w.filename, w.lineno) for w in caught]


class Job:
    """A function's result, computed in the worker (or, without one, when asked for)."""

    def __init__(self, future: Future | None, call: Callable[[], tuple] | None, registry: dict):
        self._future, self._call, self._registry = future, call, registry
        self._done: tuple | None = None

    def result(self):
        """The function's value; its warnings raised here, as they were raised there
        (once per place and message, as Python's default filter shows them); its error
        raised here."""
        if self._done is None:
            self._done = self._future.result() if self._future is not None else self._call()
            value, caught = self._done
            for message, category, filename, lineno in caught:
                warnings.warn_explicit(message, category, filename, lineno, registry=self._registry)
        return self._done[0]


class Background:
    """One worker process (``workers``, default 1 where the machine has a second core,
    else none), started when the first function is submitted."""

    def __init__(self, workers: int | None = None):
        cores = os.cpu_count() or 1
        self.workers = (1 if cores > 1 else 0) if workers is None else max(0, int(workers))
        self._pool: ProcessPoolExecutor | None = None
        self._registry: dict = {}

    def submit(self, function: Callable, /, *args, **kwargs) -> Job:
        """Start ``function(*args, **kwargs)`` in the worker; return its :class:`Job`."""
        if self.workers == 0:
            return Job(None, lambda: _call(function, args, kwargs), self._registry)
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self.workers, mp_context=multiprocessing.get_context("spawn")
            )
        return Job(self._pool.submit(_call, function, args, kwargs), None, self._registry)

    def close(self) -> None:
        """Stop the worker once its jobs are done."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None


__all__ = ["Background", "Job"]
