"""Figures drawn and saved by a second process while a notebook computes on.

Drawing a report's figures (building them, laying them out, rendering the PNG
and the SVG) can cost as much as computing what they show. A :class:`Drawing`
hands each figure to a worker process (:class:`audit.report.background.Background`):
the notebook's kernel goes on to its next cell meanwhile, and another core draws::

    drawing = Drawing(output_dir, start=("audit.report.plots.ffmc",))
    ...
    drawing.show(ffmc_panels, detail, by_alpha, name="ffmc_panels_fdr", label="FDR")
    ...
    drawing.wait()  # every figure written; each shown where it was asked for

The figure is ``function(*args, **kwargs)``, a package function called in the
worker with the arguments as they were when the figure was asked for; its files
are :func:`audit.report.outputs.render_figure`'s bytes, the bytes
:func:`audit.report.outputs.save_figure` writes in the kernel.

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
- **Where the worker writes.** Into the folders the kernel created and no other
  (it creates none), and only while the kernel that started it is its parent:
  a worker whose kernel has died writes nothing (its report folder may have been
  tidied away), and ends with its kernel.
- **Both cores to the end.** :meth:`Drawing.wait` does not idle while the worker
  draws: the kernel draws the figures no worker has started yet, in the order
  asked for, to the same bytes.
- **Only where it pays.** A worker costs the start and the imports of a second
  interpreter, which pay only where a core would otherwise idle: by default a
  :class:`Drawing` starts one only when the machine has a core that no other
  process needs (:func:`spare_cores`), and otherwise draws each figure in the
  kernel, when it is asked for, to the same bytes.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from audit.report.background import Background, Job

#: Worker processes of a :class:`Drawing` at most, by default (fewer when fewer cores
#: are spare: :func:`spare_cores`).
WORKERS = 1

#: Readings of the machine's running threads that :func:`spare_cores` takes, and the
#: seconds between them.
READINGS = 5
READING_GAP = 0.005

#: What a figure shows until it is drawn (replaced by the figure in the saved notebook).
PLACEHOLDER = "*(figure {name}: being drawn)*"
KERNEL_GONE = "the kernel that asked for figure {path} has ended: it is not written"


def _draw(function, args, kwargs, title, paths, dpi, kernel: int | None) -> list[Path]:
    """Build the figure, render it, close it, and write it to ``paths`` if the process
    ``kernel`` is this one or still its parent (None: this is the kernel); return
    ``paths``."""
    import matplotlib.pyplot as plt

    from audit.report import outputs  # looked up now: a test may have wrapped render_figure

    made = function(*args, **kwargs)
    fig = getattr(made, "figure", made)
    try:
        if title is not None:
            fig.suptitle(title)
        rendered = outputs.render_figure(fig, dpi=dpi)
    finally:
        plt.close(fig)
    if kernel is not None and kernel not in (os.getpid(), os.getppid()):
        raise ProcessLookupError(KERNEL_GONE.format(path=paths[0]))
    for path, data in zip(paths, rendered, strict=True):
        with open(path, "wb") as file:  # the folder is the kernel's: never created here
            file.write(data)
    return paths


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
    (its warnings and errors raised there and then). ``start``: modules the figures
    need (e.g. ``"audit.report.plots.ffmc"``), given to start the workers now, so that
    they import them while the notebook computes; without it they start with the first
    figure.
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
        self._background = Background(self.workers)
        self._pending: list[tuple[Job, list[Path], object]] = []
        if start is not None:
            self._background.start(["matplotlib.pyplot", "audit.report.outputs", *start])

    def _submit(self, function, args, kwargs, name, role, title, dpi) -> tuple[Job, list[Path]]:
        from audit.report import outputs

        if not self.workers:  # drawn here, now
            made = function(*args, **kwargs)
            fig = getattr(made, "figure", made)
            try:
                if title is not None:
                    fig.suptitle(title)
                paths = outputs.save_figure(fig, name, self.output_dir, dpi=dpi, role=role)
            finally:
                import matplotlib.pyplot as plt

                plt.close(fig)
            return self._background.submit(lambda: paths), paths  # no worker: a done job
        # declared here, in the order asked for, as save_figure in the kernel would
        paths = outputs.declare_figure(name, self.output_dir, role=role)
        job = self._background.submit_named(
            f"figure {name!r}", _draw, function, args, kwargs, title, paths, dpi, os.getpid()
        )
        return job, paths

    def save(
        self,
        function: Callable,
        *args,
        name: str,
        role: str | None = None,
        title: str | None = None,
        dpi: int = 150,
        **kwargs,
    ) -> Job:
        """Draw ``function(*args, **kwargs)`` (a Figure, or an Axes of one), titled
        ``title`` if given, and save it as ``figures/<name>.png`` and ``.svg`` at ``dpi``,
        recorded as ``role`` (:func:`audit.report.outputs.save_figure`); shown nowhere.
        The job's result: the paths written (PNG, SVG)."""
        job, paths = self._submit(function, args, kwargs, name, role, title, dpi)
        self._pending.append((job, paths, None))
        return job

    def show(
        self,
        function: Callable,
        *args,
        name: str,
        role: str | None = None,
        title: str | None = None,
        dpi: int = 150,
        **kwargs,
    ) -> Job:
        """As :meth:`save`, and show the saved PNG here, in the current cell's output."""
        from IPython.display import Markdown, display

        from audit.report.outputs import saved_image

        job, paths = self._submit(function, args, kwargs, name, role, title, dpi)
        if not self.workers:
            display(saved_image(paths))
            return job
        handle = display(Markdown(PLACEHOLDER.format(name=name)), display_id=True)
        self._pending.append((job, paths, handle))
        return job

    def wait(self) -> None:
        """Wait for every figure asked for and end the workers; show each figure where it
        was asked for, raise the warnings raised while drawing, then the error of the
        first figure that failed."""
        from audit.report.outputs import saved_image

        pending, self._pending = self._pending, []
        failed = None
        try:
            self._background.run_queued()  # the figures no worker has started: drawn here
            for job, paths, handle in pending:
                try:
                    job.result()
                except Exception as error:
                    failed = failed or error
                    continue
                if handle is not None:
                    handle.update(saved_image(paths))
        finally:
            self._background.close()
        if failed is not None:
            raise failed
