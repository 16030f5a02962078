"""Figures drawn and saved by a second process while a notebook computes on.

Drawing a report's figures (building them, laying them out, rendering the PNG
and the SVG) can cost as much as computing what they show. A :class:`Drawing`
hands each figure to a worker process: the notebook's kernel goes on to its next
cell meanwhile, and the machine's other core draws::

    drawing = Drawing(output_dir, start=("audit.report.plots.ffmc",))
    ...
    drawing.show(ffmc_panels, detail, by_alpha, name="ffmc_panels_fdr", label="FDR")
    ...
    drawing.wait()  # every figure written; each shown where it was asked for

The figure is ``function(*args, **kwargs)``, a package function called in the
worker with the arguments as they were when the figure was asked for (pickled
then); its files are :func:`audit.report.outputs.render_figure`'s bytes, the
bytes :func:`audit.report.outputs.save_figure` writes in the kernel.

- **Where it shows.** :meth:`Drawing.show` leaves a placeholder in the cell's
  output, which :meth:`Drawing.wait` replaces with the saved PNG (an IPython
  display update, which the executed notebook keeps in that cell), so a figure
  appears where it was asked for.
- **What the report lists.** The kernel declares each figure in the notebook's
  outputs list (:func:`audit.report.outputs.declare_figure`) when it asks for it,
  in that order, and creates ``figures/``; the worker writes no list.
- **Warnings and errors.** A warning raised while a figure is drawn is raised
  again in the kernel by :meth:`Drawing.wait`, where the notebook's warning
  record (:mod:`audit.report.notices`) and its filters see it; a figure that
  fails raises its error there, with the worker's traceback as its cause, once
  every other figure is written.
- **Only where it pays.** A worker costs the start and the imports of a second
  interpreter, which pay only where a core would otherwise idle: by
  default a :class:`Drawing` starts one only when the machine has a core that no
  other process needs (:func:`spare_cores`), and otherwise draws each figure in
  the kernel, when it is asked for, to the same bytes.
- **The worker.** A fresh interpreter with the kernel's module search path,
  started (never forked: a kernel runs threads, and a forked copy of a threaded
  process may hold locks no thread will release) by :meth:`Drawing.start` or by
  the first figure, so that its imports overlap the kernel's work; it takes its
  figures over a pipe, and draws with matplotlib's Agg backend whatever the
  kernel's environment says. It is a plain child process, not one of
  :mod:`multiprocessing`'s, whose start also starts a resource tracker that
  ignores SIGTERM and holds up a kernel's shutdown by seconds. It writes into the folders the
  kernel created and no other, and only while the kernel that started it is its
  parent: a worker whose kernel has died writes nothing (its report folder may
  have been tidied away) and ends. It is in the kernel's process group, so what
  stops the kernel (:func:`audit.report.interrupt.stop_kernels`) stops it, and
  it ends with the kernel.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import pickle
import queue
import subprocess
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures import wait as wait_all

from audit.exceptions import ReportFailed

#: Worker processes of a :class:`Drawing` at most, by default (fewer when fewer cores
#: are spare: :func:`spare_cores`).
WORKERS = 1

#: Readings of the machine's running threads that :func:`spare_cores` takes, and the
#: seconds between them.
READINGS = 5
READING_GAP = 0.005

#: What a figure shows until it is drawn (replaced by the figure in the saved notebook).
PLACEHOLDER = "*(figure {name}: being drawn)*"
WORKER_ENDED = (
    "the process drawing the figures ended (exit status {status}) before figure {name!r} "
    "was written"
)


class WorkerTraceback(Exception):
    """The traceback of an error raised in a drawing worker, as text (the cause of the
    error :meth:`Drawing.wait` raises)."""

    def __str__(self) -> str:
        return f'\n"""\n{self.args[0]}"""'


#: How the kernel starts a worker: a fresh interpreter with the kernel's module search
#: path (the first argument), running :func:`_main` with the rest.
WORKER_COMMAND = (
    "import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
    "from audit.report.drawing import _main; _main(*sys.argv[2:])"
)


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


class _KernelGone(Exception):
    """The kernel that started this worker is no longer its parent."""


def _main(jobs: str, replies: str, kernel: str, *modules: str) -> None:
    """A worker's life: draw each figure sent over the pipe ``jobs`` and answer over
    ``replies``, until told to stop or until the kernel (process ``kernel``) is gone."""
    import matplotlib

    matplotlib.use("agg")  # before pyplot: the kernel's MPLBACKEND names its inline backend
    for module in ("matplotlib.pyplot", "audit.report.outputs", *modules):
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
            reply = ("done", _draw(*pickle.loads(job), kernel=int(kernel)))
        except _KernelGone:
            return
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


def _draw(function, args, kwargs, title, paths, dpi, *, kernel):
    """Build the figure, render it, and write it to ``paths`` if the kernel is still this
    process's parent; return the warnings raised meanwhile as (category, message)."""
    import matplotlib.pyplot as plt

    from audit.report import outputs

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # the kernel's filters decide, when raised again
        made = function(*args, **kwargs)
        fig = getattr(made, "figure", made)
        try:
            if title is not None:
                fig.suptitle(title)
            rendered = outputs.render_figure(fig, dpi=dpi)
        finally:
            plt.close(fig)
    if os.getppid() != kernel:
        raise _KernelGone
    for path, data in zip(paths, rendered, strict=True):
        with open(path, "wb") as file:  # the folder is the kernel's: never created here
            file.write(data)
    return [(w.category, str(w.message)) for w in caught]


# --- in the kernel -------------------------------------------------------------------------


def _drawn_here(function, args, kwargs, name, role, title, dpi, output_dir) -> Future:
    """A figure drawn and saved in this process (:func:`audit.report.outputs.save_figure`),
    as a finished future."""
    import matplotlib.pyplot as plt

    from audit.report import outputs

    made = function(*args, **kwargs)
    fig = getattr(made, "figure", made)
    try:
        if title is not None:
            fig.suptitle(title)
        paths = outputs.save_figure(fig, name, output_dir, dpi=dpi, role=role)
    finally:
        plt.close(fig)
    future: Future = Future()
    future.set_result((paths, []))
    return future


class _Worker:
    """One worker process and the kernel's thread that feeds it jobs from ``jobs``."""

    def __init__(self, jobs: queue.Queue, modules: Sequence[str]):
        jobs_in, jobs_out = os.pipe()
        replies_in, replies_out = os.pipe()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", WORKER_COMMAND, json.dumps(sys.path)]
                + [str(jobs_in), str(replies_out), str(os.getpid()), *modules],
                pass_fds=(jobs_in, replies_out),
                stdin=subprocess.DEVNULL,
            )
        finally:
            os.close(jobs_in)
            os.close(replies_out)
        self.channel = _Channel(replies_in, jobs_out)
        self.jobs = jobs
        self.thread = threading.Thread(target=self._feed, name="audit-drawing", daemon=True)
        self.thread.start()

    def _feed(self) -> None:
        while True:
            item = self.jobs.get()
            if item is None:
                with contextlib.suppress(OSError):
                    self.channel.send(b"")
                return
            future, job, name, paths = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                self.channel.send(job)
                outcome, value = pickle.loads(self.channel.receive())
            except (EOFError, OSError):
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.process.wait(1.0)
                ended = WORKER_ENDED.format(status=self.process.returncode, name=name)
                future.set_exception(ReportFailed(ended))
                continue
            if outcome == "done":
                future.set_result((paths, value))
            else:
                error, text = value
                error.__cause__ = WorkerTraceback(text)
                future.set_exception(error)

    def stop(self) -> None:
        """Wait for the worker to finish its jobs and end."""
        self.thread.join()
        self.process.wait()
        self.channel.close()


def _running_threads() -> int:
    """How many threads of the whole machine are running or ready to run now, this one
    included (Linux: ``/proc/loadavg``); OSError elsewhere."""
    with open("/proc/loadavg") as file:
        return int(file.read().split()[3].split("/")[0])


def spare_cores() -> int:
    """The cores no other thread needs now: the machine's cores less the threads running
    or ready to run besides this one, the fewest of :data:`READINGS` readings
    :data:`READING_GAP` seconds apart (so that a passing process does not count); where
    that is not known, the cores less the 1-minute load average. Rounded down; 0 where
    neither is known."""
    try:
        readings = []
        for reading in range(READINGS):
            if reading:
                time.sleep(READING_GAP)
            readings.append(_running_threads())
        busy = min(readings) - 1.0
    except (OSError, ValueError, IndexError):
        try:
            busy = os.getloadavg()[0]
        except (AttributeError, OSError):
            return 0
    return max(0, int((os.cpu_count() or 1) - busy))


class Drawing:
    """The figures of one notebook, drawn and saved by worker processes.

    ``output_dir`` is where ``figures/`` goes (:func:`audit.report.outputs.save_figure`);
    ``workers``: how many worker processes draw (at most the machine's cores; default:
    :data:`WORKERS`, at most the cores the machine has spare, :func:`spare_cores`).
    With none, each figure is drawn in this process, in order, when it is asked for
    (its warnings and errors raised there and then): a worker costs the imports of
    a second interpreter, which pay only where a core would otherwise idle.
    ``start``: modules the figures need (e.g. ``"audit.report.plots.ffmc"``), given to
    start the workers now, so that they import them while the notebook computes;
    without it they start with the first figure.
    """

    def __init__(
        self,
        output_dir: str | os.PathLike = ".",
        *,
        workers: int | None = None,
        start: Sequence[str] | None = None,
    ):
        self.output_dir = str(output_dir)
        wanted = min(WORKERS, spare_cores()) if workers is None else workers
        self.workers = max(0, min(wanted, os.cpu_count() or 1))
        self._jobs: queue.Queue = queue.Queue()
        self._running: list[_Worker] = []
        self._pending: list[tuple[Future, object]] = []
        if start is not None:
            self.start(start)

    def start(self, modules: Sequence[str] = ()) -> None:
        """Start the workers now (if not yet), each importing ``modules``."""
        while len(self._running) < self.workers:
            self._running.append(_Worker(self._jobs, modules))

    def _submit(self, function, args, kwargs, name, role, title, dpi) -> Future:
        from audit.report.outputs import declare_figure

        if not self.workers:
            return _drawn_here(function, args, kwargs, name, role, title, dpi, self.output_dir)
        # declared here, in the order asked for, as save_figure in the kernel would
        paths = declare_figure(name, self.output_dir, role=role)
        job = pickle.dumps((function, args, kwargs, title, paths, dpi), pickle.HIGHEST_PROTOCOL)
        self.start()
        future: Future = Future()
        self._jobs.put((future, job, name, paths))
        return future

    def save(
        self,
        function: Callable,
        *args,
        name: str,
        role: str | None = None,
        title: str | None = None,
        dpi: int = 150,
        **kwargs,
    ) -> Future:
        """Draw ``function(*args, **kwargs)`` (a Figure, or an Axes of one), titled
        ``title`` if given, and save it as ``figures/<name>.png`` and ``.svg`` at ``dpi``,
        recorded as ``role`` (:func:`audit.report.outputs.save_figure`); shown nowhere.
        The future's result: the paths written (PNG, SVG) and the warnings raised while
        drawing, as (category, message) pairs."""
        future = self._submit(function, args, kwargs, name, role, title, dpi)
        self._pending.append((future, None))
        return future

    def show(
        self,
        function: Callable,
        *args,
        name: str,
        role: str | None = None,
        title: str | None = None,
        dpi: int = 150,
        **kwargs,
    ) -> Future:
        """As :meth:`save`, and show the saved PNG here, in the current cell's output."""
        from IPython.display import Markdown, display

        from audit.report.outputs import saved_image

        future = self._submit(function, args, kwargs, name, role, title, dpi)
        if not self.workers:  # drawn here, now
            display(saved_image(future.result()[0]))
            return future
        handle = display(Markdown(PLACEHOLDER.format(name=name)), display_id=True)
        self._pending.append((future, handle))
        return future

    def wait(self) -> None:
        """Wait for every figure asked for and end the workers; show each figure where it
        was asked for, raise the warnings raised while drawing, then the error of the
        first figure that failed."""
        from audit.report.outputs import saved_image

        pending, self._pending = self._pending, []
        running, self._running = self._running, []
        for _ in running:
            self._jobs.put(None)
        wait_all([future for future, _ in pending])
        for worker in running:
            worker.stop()
        failed = None
        for future, handle in pending:
            error = future.exception()
            if error is not None:
                failed = failed or error
                continue
            paths, caught = future.result()
            for category, message in caught:
                warnings.warn(message, category, stacklevel=2)
            if handle is not None:
                handle.update(saved_image(paths))
        if failed is not None:
            raise failed
