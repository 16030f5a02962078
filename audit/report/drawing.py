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
- **Where there is a second core.** By default a :class:`Drawing` starts one
  worker where the machine has more than one core, and otherwise draws each
  figure in the kernel, when it is asked for, to the same bytes.  On a machine
  busy with other work the worker costs its start (about 0.7 CPU-seconds) and
  no more: whatever it has not started by :meth:`Drawing.wait`, the kernel
  draws.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from audit.exceptions import UsageError
from audit.report import background
from audit.report.background import Background, Job

#: Worker processes of a :class:`Drawing`, by default (none on a machine of one core).
WORKERS = 1

#: What a figure shows until it is drawn (replaced by the figure in the saved notebook).
PLACEHOLDER = "*(figure {name}: being drawn)*"
NOT_PENDING = "Drawing.display: that job is not a figure of this Drawing still to be shown"
KERNEL_GONE = "the kernel that asked for figure {path} has ended: it is not written"


def _rendered(function, args, kwargs, title, dpi) -> list[bytes]:
    """Build the figure ``function(*args, **kwargs)`` (a Figure, or an Axes of one),
    title it, render it (:func:`audit.report.outputs.render_figure`) and close it."""
    import matplotlib.pyplot as plt

    from audit.report import outputs  # looked up now: a test may have wrapped render_figure

    made = function(*args, **kwargs)
    fig = getattr(made, "figure", made)
    try:
        if title is not None:
            fig.suptitle(title)
        return outputs.render_figure(fig, dpi=dpi)
    finally:
        plt.close(fig)


def _write(paths: list[Path], rendered: list[bytes]) -> list[Path]:
    for path, data in zip(paths, rendered, strict=True):
        with open(path, "wb") as file:  # the folder is the kernel's: never created here
            file.write(data)
    return paths


def _draw(function, args, kwargs, title, paths, dpi, kernel: int) -> list[Path]:
    """Build, render and close the figure (:func:`_rendered`), and write it to ``paths``
    if the process ``kernel`` is this one, or still its parent, or the worker's kernel
    still running (:func:`audit.report.background.kernel_alive`: a worker forked by
    :mod:`audit.report.forkserver` is not its kernel's child); return ``paths``."""
    rendered = _rendered(function, args, kwargs, title, dpi)
    if kernel not in (os.getpid(), os.getppid()) and not background.kernel_alive():
        raise ProcessLookupError(KERNEL_GONE.format(path=paths[0]))
    return _write(paths, rendered)


class Drawing:
    """The figures of one notebook, drawn and saved by worker processes.

    ``output_dir`` is where ``figures/`` goes (:func:`audit.report.outputs.save_figure`);
    ``workers``: how many worker processes draw (at most the machine's cores; default:
    :data:`WORKERS` where the machine has more than one core, else none).
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
        cores = os.cpu_count() or 1
        wanted = min(WORKERS, cores - 1) if workers is None else workers
        self.workers = max(0, min(wanted, cores))
        self._background = Background(self.workers)
        self._pending: list[list] = []  # [job, paths, display handle or None]
        if start is not None:
            self._background.start(["matplotlib.pyplot", "audit.report.outputs", *start])

    def _submit(self, function, args, kwargs, name, role, title, dpi) -> tuple[Job, list[Path]]:
        from audit.report import outputs

        if not self.workers:  # drawn here, now; declared once drawn, as save_figure does
            rendered = _rendered(function, args, kwargs, title, dpi)
            paths = _write(outputs.declare_figure(name, self.output_dir, role=role), rendered)
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
        self._pending.append([job, paths, None])
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
        """As :meth:`save`, and show the saved PNG here, in the current cell's output
        (:meth:`display`)."""
        job = self.save(function, *args, name=name, role=role, title=title, dpi=dpi, **kwargs)
        self.display(job)
        return job

    def display(self, job: Job) -> None:
        """Show here, in the current cell's output, the figure of ``job`` (from
        :meth:`save`, asked for in an earlier cell so that it is drawn while the notebook
        computes on): its PNG once :meth:`wait` has it, as :meth:`show` would."""
        from IPython.display import Markdown, display

        from audit.report.outputs import saved_image

        for entry in self._pending:
            if entry[0] is job:
                if not self.workers:  # drawn already, here
                    display(saved_image(entry[1]))
                    return
                name = entry[1][0].stem
                entry[2] = display(Markdown(PLACEHOLDER.format(name=name)), display_id=True)
                return
        raise UsageError(NOT_PENDING)

    def submit(self, function: Callable, /, *args, **kwargs) -> Job:
        """Hand ``function(*args, **kwargs)``, a computation (not a figure), to the worker
        that draws, ahead of the figures asked for later; its :class:`Job` gives the
        value, warnings and error as :class:`audit.report.background.Background` does.
        Without a worker, it runs when its result is asked for."""
        return self._background.submit(function, *args, **kwargs)

    def run_queued(self, until: Job | None = None) -> int:
        """Draw (or compute) here the jobs the busy worker has not started, while it works
        on its own (:meth:`audit.report.background.Background.run_queued`); return how many
        ran here.  Call it before waiting for a computation handed over with
        :meth:`submit`, so that this process draws meanwhile, and give that computation
        as ``until``: once it is done, this process starts no further figure, and what
        follows from its result can be asked for while the worker draws the rest."""
        return self._background.run_queued(until)

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
