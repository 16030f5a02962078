"""Computation handed to a second process while a notebook goes on with its next cells.

A report's notebook runs in one kernel, on one core: a long computation whose
inputs are known early (the bootstrap of a score table, say) waits its turn
while the other core idles.  :class:`Background` starts a worker process, sends
it a function and its arguments, and returns a :class:`Job` at once; the
notebook computes on, and later takes the result with :meth:`Job.result`::

    background = Background()
    job = background.submit(score_bootstrap, table, rates, n_replicates=200, seed=0)
    ...                                       # other cells, meanwhile
    result = job.result()                     # the same value, computed apart

The function and its arguments are pickled when submitted, so the function must
be importable (defined in a module, not in the notebook) and later changes to
the arguments do not reach it; the worker imports the user modules of measures
the kernel had imported by then (:func:`audit.measures.registry.measure_modules`),
so that it knows the same measures; the result is the value the function returns,
computed by the same code on the same data -- seeded work gives the same
numbers as in the kernel.  The warnings the function raises are raised again
in the kernel by :meth:`Job.result`, at the place they were raised in the
worker, where the notebook's warning record (:mod:`audit.report.notices`) sees
them; an error is raised there too, with the worker's traceback as its cause.
With one core, or ``workers=0``, the function runs in the kernel when the
result is asked for.

**Nobody idles.** A kernel with nothing left to do but wait can run the jobs
no worker has taken itself, while its workers are busy with others
(:meth:`Background.run_queued`): work handed over early then goes to whichever
process is free.  The value, the warnings and the errors are the same wherever
a job ran.

**The worker** is a fresh interpreter with the kernel's module search path and
matplotlib's Agg backend (a kernel's environment names its inline backend),
started when the first function is submitted or by :meth:`Background.start`,
which can have it import the modules its functions need while the kernel
computes.  During ``audit report`` it is forked, so set up, from the report's
server (:mod:`audit.report.forkserver`), which imported those modules already;
elsewhere it is started afresh.  It is never a fork of the kernel, whose threads
a fork would copy mid-step, nor one of :mod:`multiprocessing`'s processes: their
start also starts a resource tracker, which ignores SIGTERM, and ipykernel's
shutdown waits seconds for every child of the kernel to end.  It writes no file
of its own (a function it is given may: :mod:`audit.report.drawing`'s, only while
the kernel runs, :func:`kernel_alive`), and ends when the kernel ends: its jobs
come over a pipe that the kernel's end closes.  Started afresh it is in the
kernel's process group, so what stops the kernel
(:func:`audit.report.interrupt.stop_kernels`) stops it too; forked, it is in a
session of its own, and the server stops it when the report's command ends.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import pickle
import queue
import select
import subprocess
import sys
import threading
import traceback
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import Future

from audit.exceptions import ReportFailed
from audit.report import forkserver

WORKER_ENDED = "the worker process ended (exit status {status}) before it finished {job}"

#: Seconds :meth:`Background.run_queued` waits at most, at a time, for a free worker to
#: take the next job.
TAKE_WAIT = 0.05

#: How the kernel starts a worker: a fresh interpreter with the kernel's module search
#: path (the first argument), running :func:`_serve` with the rest.
WORKER_COMMAND = (
    "import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
    "from audit.report.background import _serve; _serve(*sys.argv[2:])"
)


class WorkerTraceback(Exception):
    """The traceback of an error raised in a worker, as text: the cause of the error
    :meth:`Job.result` raises."""

    def __str__(self) -> str:
        return f'\n"""\n{self.args[0]}"""'


def _call(function: Callable, args: tuple, kwargs: dict):
    """``function(*args, **kwargs)`` and the warnings it raised, each as
    ``(message, category, filename, lineno)``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # every one: the kernel's filters decide
        value = function(*args, **kwargs)
    return value, [(str(w.message), w.category, w.filename, w.lineno) for w in caught]


def _unpack_and_call(job: bytes):
    """Import the measure modules the job names (those the kernel had imported when it
    submitted the job, so that its measures are known here too), then :func:`_call`
    its function."""
    modules, call = pickle.loads(job)
    if modules:
        from audit.measures.modules import import_measure_modules

        import_measure_modules(modules)
    return _call(*pickle.loads(call))


class _Channel:
    """Messages (byte strings) in over one pipe and out over another: each its length in
    8 bytes, then its bytes."""

    def __init__(self, read_fd: int, write_fd: int):
        self._in = os.fdopen(read_fd, "rb")
        self._out = os.fdopen(write_fd, "wb")

    def send(self, message: bytes) -> None:
        self._out.write(len(message).to_bytes(8, "big") + message)
        self._out.flush()

    def receive(self) -> bytes:
        """The next message; EOFError when the other side has closed its end."""
        head = self._in.read(8)
        size = int.from_bytes(head, "big") if len(head) == 8 else -1
        message = self._in.read(size) if size >= 0 else b""
        if size < 0 or len(message) < size:
            raise EOFError
        return message

    def close(self) -> None:
        for stream in (self._in, self._out):
            with contextlib.suppress(OSError):
                stream.close()


# --- in the worker -------------------------------------------------------------------------


_jobs_pipe: int | None = None  # in a worker: the end of the pipe its jobs come over


def kernel_alive() -> bool:
    """In a worker: whether the kernel that started it still holds the other end of the
    pipe its jobs come over (it alone does, until it ends); elsewhere ``False``."""
    if _jobs_pipe is None:
        return False
    watch = select.poll()
    watch.register(_jobs_pipe, 0)  # (hang-up and errors are always reported)
    return not watch.poll(0)


def _serve(jobs: str, replies: str, *modules: str) -> None:
    """A worker's life: import ``modules``, then run each job sent over the pipe ``jobs``
    and answer over ``replies``, until told to stop or until the kernel closes its end."""
    global _jobs_pipe
    _jobs_pipe = int(jobs)
    for module in modules:
        importlib.import_module(module)
    channel = _Channel(int(jobs), int(replies))
    while True:
        try:
            job = channel.receive()
        except (EOFError, OSError):
            return  # the kernel closed its end, or ended
        if not job:
            return
        try:
            reply = ("done", _unpack_and_call(job))
        except Exception as error:
            reply = ("error", _portable(error))
        try:
            channel.send(pickle.dumps(reply, pickle.HIGHEST_PROTOCOL))
        except OSError:
            return


def _portable(error: Exception) -> tuple[Exception, str]:
    """``error`` and its traceback's text, the error replaced by a :class:`ReportFailed`
    of its words when it cannot be pickled."""
    text = "".join(traceback.format_exception(error))
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        error = ReportFailed(f"{type(error).__name__}: {error}")
    return error, text


# --- in the kernel -------------------------------------------------------------------------


class _Worker:
    """One worker process, and the kernel's thread that hands it jobs from ``jobs`` one
    at a time."""

    def __init__(self, jobs: queue.Queue, modules: Sequence[str], taken: threading.Condition):
        self.busy = False  # with a job it took from ``jobs``
        self._taken = taken  # notified when it takes one
        jobs_in, jobs_out = os.pipe()
        replies_in, replies_out = os.pipe()
        command = [sys.executable, "-c", WORKER_COMMAND, json.dumps(sys.path)]
        command += [str(jobs_in), str(replies_out), *modules]
        environment = {**os.environ, "MPLBACKEND": "agg"}
        try:
            try:  # forked from the report's server, which imported its modules already
                self.process = forkserver.spawn(
                    command,
                    env=environment,
                    pass_fds=(jobs_in, replies_out),
                    name=forkserver.WORKER_NAME,
                )
            except forkserver.Unavailable:
                self.process = subprocess.Popen(
                    command,
                    pass_fds=(jobs_in, replies_out),
                    stdin=subprocess.DEVNULL,
                    env=environment,
                )
        finally:
            os.close(jobs_in)
            os.close(replies_out)
        self.channel = _Channel(replies_in, jobs_out)
        self.jobs = jobs
        self.thread = threading.Thread(target=self._feed, name="audit-background", daemon=True)
        self.thread.start()

    def _feed(self) -> None:
        while True:
            item = self.jobs.get()
            if item is None:
                with contextlib.suppress(OSError):
                    self.channel.send(b"")
                return
            with self._taken:
                self.busy = True
                self._taken.notify_all()
            future, job, name = item
            try:
                self.channel.send(job)
                outcome, value = pickle.loads(self.channel.receive())
            except (EOFError, OSError):
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(1.0)
                ended = WORKER_ENDED.format(status=self.process.returncode, job=name)
                self.busy = False
                future.set_exception(ReportFailed(ended))
                continue
            self.busy = False
            if outcome == "done":
                future.set_result(value)
            else:
                error, text = value
                error.__cause__ = WorkerTraceback(text)
                future.set_exception(error)

    def stop(self) -> None:
        """Wait for the worker to finish its jobs and end."""
        self.thread.join()
        self.process.wait()
        self.channel.close()


def _run_here(item: tuple) -> None:
    """Run a queued job in this process and settle its future as its worker would."""
    future, job, _ = item
    if not future.set_running_or_notify_cancel():
        return
    try:
        future.set_result(_unpack_and_call(job))
    except Exception as error:
        future.set_exception(error)


class Job:
    """A function's result, computed in the worker (or, without one, when asked for)."""

    def __init__(self, future: Future | None, call: Callable[[], tuple] | None, registry: dict):
        self._future, self._call, self._registry = future, call, registry
        self._done: tuple | None = None

    def done(self) -> bool:
        """Whether the function has finished (its result is then at hand); a job of no
        worker is done once its result has been asked for."""
        return self._done is not None or (self._future is not None and self._future.done())

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
    """Worker processes (``workers``, default 1 where the machine has a second core,
    else none), started by :meth:`start` or when the first function is submitted; the
    jobs go to them in the order submitted, each to the first worker free."""

    def __init__(self, workers: int | None = None):
        cores = os.cpu_count() or 1
        self.workers = (1 if cores > 1 else 0) if workers is None else max(0, int(workers))
        self._jobs: queue.Queue = queue.Queue()
        self._taken = threading.Condition()  # a worker took a job
        self._running: list[_Worker] = []
        self._registry: dict = {}

    def start(self, modules: Sequence[str] = ()) -> None:
        """Start the workers now (those not yet running), each importing ``modules``
        before its first job."""
        while len(self._running) < self.workers:
            self._running.append(_Worker(self._jobs, modules, self._taken))

    def submit(self, function: Callable, /, *args, **kwargs) -> Job:
        """Start ``function(*args, **kwargs)`` in a worker; return its :class:`Job`."""
        name = getattr(function, "__qualname__", repr(function))
        return self.submit_named(name, function, *args, **kwargs)

    def submit_named(self, name: str, function: Callable, /, *args, **kwargs) -> Job:
        """As :meth:`submit`; ``name`` says what the job is where an error names it (a
        worker that ended before it finished the job)."""
        if self.workers == 0:
            return Job(None, lambda: _call(function, args, kwargs), self._registry)
        from audit.measures.registry import measure_modules

        call = pickle.dumps((function, args, kwargs), pickle.HIGHEST_PROTOCOL)
        job = pickle.dumps((measure_modules(), call), pickle.HIGHEST_PROTOCOL)
        self.start()
        future: Future = Future()
        self._jobs.put((future, job, name))
        return Job(future, None, self._registry)

    def run_queued(self, until: Job | None = None) -> int:
        """Run here, one after the other in the order submitted, the jobs no worker has
        taken, while every worker is busy with another; return how many ran here.  A
        worker that is free takes the next job itself (this process waits for it to do
        so), so a job is never taken from a worker about to run it.  Each job's
        :meth:`Job.result` is then what a worker would have given: its value, its
        warnings, its error (without a worker's traceback as its cause).

        ``until``: a job whose result this process waits for; once it is done, no
        further job is started here (the one running ends first), so that what follows
        from its result is asked for while the rest is left to the workers."""
        ran = 0
        while self._running and (until is None or not until.done()):
            with self._taken:
                self._taken.wait_for(
                    lambda: self._jobs.empty() or all(w.busy for w in self._running),
                    timeout=TAKE_WAIT,
                )
                if self._jobs.empty():
                    return ran
                if not all(w.busy for w in self._running):
                    continue  # a free worker is taking it
                try:
                    item = self._jobs.get_nowait()
                except queue.Empty:
                    return ran
            if item is None:  # the workers are told to stop: theirs to see
                self._jobs.put(None)
                return ran
            _run_here(item)
            ran += 1
        return ran

    def close(self) -> None:
        """Stop the workers once their jobs are done."""
        running, self._running = self._running, []
        for _ in running:
            self._jobs.put(None)
        for worker in running:
            worker.stop()


__all__ = ["Background", "Job", "WorkerTraceback"]
