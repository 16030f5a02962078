"""Notebook kernels started ahead of their notebooks, while the command line still
checks the input.

A kernel takes about a second to start (a Python interpreter importing ipykernel),
time in which the command line reads and checks the table on one core. The command
line therefore starts the kernels its notebooks will need first
(:func:`started_kernels`), each in a thread of its own, and
:func:`audit.report.runner.run_report` runs each notebook in one of those threads,
on its kernel (:func:`take`), or as before on a kernel of its own when none was
started. A kernel starts in an empty private folder and moves into the report's
folder just before its notebook runs (:meth:`Kernel.enter`), so the notebook sees
the same working folder either way. A kernel no notebook took is shut down when the
command ends, however it ends; one that failed to start is dropped, and its
notebook starts its own (failing, if it does, as it always did).

Kernels are started by :func:`audit.report.interrupt.kernel_manager_class`, so Ctrl-C
or SIGTERM stops them like every other kernel of the run; within
:func:`started_kernels`, that manager forks them from the report's server
(:mod:`audit.report.forkserver`), which has imported ipykernel and :data:`PRELOAD`
once for all of them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import shutil
import tempfile
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from audit.exceptions import ReportError

#: Kernel command-line options: the kernel's own log, which only repeats what a
#: failed cell reports, is kept to critical messages.
KERNEL_ARGUMENTS = ("--IPKernelApp.log_level=CRITICAL",)
#: What nbclient adds to a kernel it starts itself: no history file written.
HISTORY_IN_MEMORY = "--HistoryManager.hist_file=:memory:"
#: Modules every report notebook imports first, imported by a kernel started ahead
#: while it waits for its notebook (a module in ``sys.modules`` imports at no cost).
PRELOAD = (
    "numpy",
    "pandas",
    "matplotlib.pyplot",
    "IPython.display",
    "audit",
    "audit.measures.modules",
    "audit.measures.registry",
    "audit.report.notices",
    "audit.report.outputs",
    "audit.report.text",
    "audit.tables.crossgroup",
    "audit.tables.datasets",
    "audit.tables.layouts",
    "audit.validation",
)
#: Seconds a kernel has to answer before its notebook is given up.
START_TIMEOUT = 60.0

#: Seconds after which a kernel_info request is sent again while the kernel's IOPub has
#: not said it handled any (the client's subscription was not in place yet).
IOPUB_WAIT = 0.05

#: Seconds between two looks at a kernel that has not answered yet.
POLL = 0.05

KERNEL_DIED = "the notebook kernel died before it answered"
NO_ANSWER = "the notebook kernel did not answer within {seconds:g} seconds"
CANNOT_ENTER = "the notebook kernel could not move into {folder}: {reason}"


def search_path(pythonpath: str) -> str:
    """``pythonpath`` (a ``PYTHONPATH``) led by the folder that holds this audit package,
    so that a kernel imports the same audit as this process, wherever it lives (not the
    package's own folder, whose modules would then import as top-level names:
    ``config``, ...); unchanged if the folder is on it already."""
    package_root = str(Path(__file__).resolve().parents[2])
    paths = pythonpath.split(os.pathsep)
    if package_root in paths:
        return pythonpath
    return os.pathsep.join(p for p in [package_root, *paths] if p)


class _Discarded(Exception):
    """The kernel was discarded while it started."""


_lock = threading.Lock()
_waiting: list[Kernel] = []
_local = threading.local()


class Kernel:
    """One kernel, started at once in a thread of its own: the thread whose event loop
    its manager and, later, its notebook's client use (:meth:`run`)."""

    def __init__(self):
        self.folder = tempfile.mkdtemp(prefix="audit-kernel-start-")
        self.manager = None
        self._client = None  # talks to the kernel until its notebook's client takes over
        self._discarded = False
        self._released = False
        self._preloading = None
        #: Whether the kernel imported :data:`PRELOAD` (``None``: not known yet).
        self.preloaded: bool | None = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="audit-kernel")
        self._started = self._thread.submit(self._start)

    def _start(self) -> None:
        from jupyter_core.utils import run_sync

        from audit.report import interrupt

        if self._discarded or interrupt.stopping():
            return
        manager = interrupt.kernel_manager_class()(kernel_name="python3")
        run_sync(manager.start_kernel)(
            extra_arguments=[*KERNEL_ARGUMENTS, HISTORY_IN_MEMORY], cwd=self.folder
        )
        self.manager = manager
        try:
            run_sync(self._preload)()
        except BaseException:  # it did not answer, or was discarded: stopped at once
            self.stop(now=True)
            raise

    async def _preload(self) -> None:
        """Once the kernel answers, have it import :data:`PRELOAD` while it waits for its
        notebook (without waiting for that: :meth:`enter` collects the reply)."""
        self._client = self.manager.client()
        self._client.start_channels()
        await self._reply(None)
        await self._subscribed()
        self._preloading = self._silent(f"import {', '.join(PRELOAD)}")

    async def _subscribed(self) -> None:
        """Return once this client's IOPub subscription is in place: a kernel_info
        request, sent again every :data:`IOPUB_WAIT` seconds until the kernel's IOPub
        says it handled one (an idle status with one of them as parent). A kernel forked
        ready by :mod:`audit.report.forkserver` answers on the shell channel within
        milliseconds of its start, before the subscription reaches it, and what it
        publishes meanwhile is lost: without this proof, the idle status of the next
        request could be lost too, and its notebook wait for ever. (jupyter_client's
        ``wait_for_ready`` asks the same proof, then waits for 0.2 s of IOPub silence.)"""
        deadline = time.monotonic() + START_TIMEOUT
        asked = set()
        while True:
            sent = self._client.kernel_info()
            asked.add(sent)
            await self._reply(sent)
            until = time.monotonic() + IOPUB_WAIT
            while (left := until - time.monotonic()) > 0:
                try:
                    message = await self._client.get_iopub_msg(timeout=left)
                except queue.Empty:
                    break
                state = message["content"].get("execution_state")
                if state == "idle" and message["parent_header"].get("msg_id") in asked:
                    return
            if self._discarded:
                raise _Discarded
            if time.monotonic() > deadline:
                raise ReportError(NO_ANSWER.format(seconds=START_TIMEOUT))

    def _silent(self, code: str) -> str:
        return self._client.execute(code, silent=True, store_history=False)

    async def _reply(self, sent: str | None, channel: str = "shell") -> dict:
        """The kernel's reply to the request ``sent`` (``None``: to a kernel_info request,
        asked every second until the kernel answers); with ``channel="iopub"``, the
        IOPub message saying the kernel is idle after ``sent``. Looks every :data:`POLL`
        seconds whether the kernel died or was discarded meanwhile."""
        deadline = time.monotonic() + START_TIMEOUT
        asked = -1.0
        receive = getattr(self._client, f"get_{channel}_msg")
        while True:
            if sent is None and time.monotonic() - asked >= 1:
                asked, wanted = time.monotonic(), self._client.kernel_info()
            try:
                reply = await receive(timeout=POLL)
            except queue.Empty:
                if self._discarded:
                    raise _Discarded from None
                if not await self.manager.is_alive():
                    raise ReportError(KERNEL_DIED) from None
                if time.monotonic() > deadline:
                    raise ReportError(NO_ANSWER.format(seconds=START_TIMEOUT)) from None
                continue
            answered = reply["parent_header"].get("msg_id")
            if channel == "iopub":
                if answered == sent and reply["content"].get("execution_state") == "idle":
                    return reply
                continue
            if answered == self._preloading:  # (a failed import fails again in the notebook)
                self.preloaded = reply["content"]["status"] == "ok"
            if answered == (wanted if sent is None else sent):
                return reply

    def run(self, task: Callable[[], object]) -> Future:
        """``task()`` in this kernel's thread, where :func:`take` gives it this kernel
        (or ``None`` if it failed to start); the thread ends afterwards."""

        def in_thread():
            with contextlib.suppress(Exception):
                self._started.result()  # its failure: the notebook starts its own
            _local.kernel = self if self.manager is not None else None
            try:
                return task()
            finally:
                _local.kernel = None
                self.stop()
                close_loop()

        future = self._thread.submit(in_thread)
        self._thread.shutdown(wait=False)
        return future

    def enter(self, folder: Path) -> None:
        """Make ``folder`` the kernel's working folder, once it has answered, and hand
        the client that asked to the notebook's (it knows the kernel answers); remove the
        folder the kernel started in. In this kernel's thread (:meth:`run`)."""
        from jupyter_core.utils import run_sync

        run_sync(self._enter)(str(folder))
        shutil.rmtree(self.folder, ignore_errors=True)

    async def _enter(self, folder: str) -> None:
        try:
            sent = self._silent(f"__import__('os').chdir({folder!r})")
            reply = await self._reply(sent)
            # IOPub, too, has carried everything up to the reply: the client is connected
            # on every channel, and the notebook's client is this one, already answered
            await self._reply(sent, "iopub")
        except BaseException:
            self._close_client()
            raise
        content = reply["content"]
        if content["status"] != "ok":
            self._close_client()
            reason = f"{content.get('ename')}: {content.get('evalue')}"
            raise ReportError(CANNOT_ENTER.format(folder=folder, reason=reason))
        self.manager.hand_over(self._client)

    def _close_client(self) -> None:
        client, self._client = self._client, None
        if client is not None and client.channels_running:
            client.stop_channels()

    def release(self) -> None:
        """Ask the kernel to shut down, without waiting: it ends while this thread goes
        on (rendering its notebook); :meth:`stop` then waits for it. In this kernel's
        thread."""
        from jupyter_core.utils import run_sync

        if self.manager is not None and not self._released:
            run_sync(self.manager.request_shutdown)()
            self._released = True

    def stop(self, now: bool = False) -> None:
        """Shut the kernel down (``now``: at once, else asked first) and close what
        talked to it. In this kernel's thread."""
        from jupyter_core.utils import run_sync

        self._close_client()
        manager, self.manager = self.manager, None
        if manager is not None:
            process = getattr(manager.provisioner, "process", None)
            if now and process is not None:
                from audit.report.interrupt import kill

                kill(process)  # at once: its manager would look every 0.1 s till it ends
            run_sync(_shutdown)(manager, now, self._released)
        shutil.rmtree(self.folder, ignore_errors=True)

    def discard(self) -> Future:
        """Shut down a kernel no notebook took, without waiting for it to answer; the
        future is done once it is."""
        self._discarded = True  # its thread sees it within POLL seconds

        def in_thread():
            try:
                self.stop(now=True)
            finally:
                close_loop()

        done = self._thread.submit(in_thread)
        self._thread.shutdown(wait=False)
        return done


async def _shutdown(manager, now: bool, asked: bool) -> None:
    try:
        if await manager.is_alive():
            if asked and not now:  # asked already (Kernel.release): it is ending
                await manager.finish_shutdown()
            else:
                await manager.shutdown_kernel(now=now)
    finally:
        await manager.cleanup_resources()


def close_loop() -> None:
    """Close the event loop the kernel's manager and client made for this thread."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:  # the thread made none
            loop = None
    if loop is not None and not loop.is_running():
        loop.close()
    asyncio.set_event_loop(None)


def start(count: int) -> None:
    """Start ``count`` kernels (at most one per core) for notebooks to come; Ctrl-C
    waits until each is recorded, to be shut down (:func:`discard`)."""
    from audit.report import interrupt

    count = min(count, os.cpu_count() or 1)
    with _lock, interrupt.deferred():
        _waiting.extend(Kernel() for _ in range(count))


def started(count: int) -> list[Kernel]:
    """Up to ``count`` kernels started ahead (:func:`start`), now taken for notebooks."""
    with _lock:
        taken, _waiting[:] = _waiting[:count], _waiting[count:]
    return taken


def take() -> Kernel | None:
    """The started kernel this thread's notebook runs on, once (``None`` if there is
    none: the notebook starts its own)."""
    kernel = getattr(_local, "kernel", None)
    _local.kernel = None
    return kernel


def discard() -> None:
    """Shut down every kernel started ahead that no notebook took."""
    with _lock:
        left, _waiting[:] = list(_waiting), []
    for done in [kernel.discard() for kernel in left]:  # side by side
        with contextlib.suppress(BaseException):
            done.result()


@contextlib.contextmanager
def started_kernels(count: int) -> Iterator[None]:
    """Within the block, ``count`` kernels start for the notebooks of a report run in
    it, forked (like the notebooks' own and their drawing processes) from a server
    that ends with the block; any it did not use are shut down when it ends. When the
    block fails (the input refused, say), the server is stopped first: the kernels still
    starting give up instead of waiting for its imports."""
    from audit.report import forkserver

    with forkserver.started():
        try:
            start(count)
            yield
        except BaseException:
            forkserver.stop()  # the kernels still starting give up at once
            raise
        finally:
            discard()
