"""Ctrl-C and SIGTERM during a report: stop the kernels, keep the earlier report, say so.

The command line wraps its work in :func:`handle_signals`: SIGINT and SIGTERM
then raise :class:`Interrupted` in the main thread, wherever it is. The runner
meets it while it waits for the notebooks (which run in worker threads), stops
every kernel it started (:func:`stop_kernels`: SIGTERM to the kernel's process
group, SIGKILL if it outlives :data:`GRACE` seconds), waits for the workers to
notice, keeps the unfinished folder hidden as ``.NAME.failed`` and lets the
interruption through; the command line prints :attr:`Interrupted.sentence` and
ends with status 130 (SIGINT) or 143 (SIGTERM). The step that puts a finished
report in place runs under :func:`deferred`, so a signal cannot cut it in two:
it lands once the new report is in place, and the sentence says so; so do the
steps that start a thread or a process and record it, so that each is stopped.
A signal another thread took is sent on to the main thread (:class:`_Forward`),
and one raised where C code drops it is raised again (:meth:`Interrupted.__del__`).

Kernels run under :func:`kernel_manager_class`, a jupyter_client kernel manager
that records each kernel process here and talks to it over IPC sockets in a
private temporary folder (no TCP port, so the kernel has no reason to warn that
its traffic is unencrypted). It asks a kernel to end as a notebook would
(:data:`EXIT`, on the shell channel), not with a ``shutdown_request`` on the
control channel: ipykernel answers that in its control thread while its main
thread already closes IOPub, and on a loaded machine the two meet, and the kernel
prints a ``ZMQError`` traceback into the report's terminal as it ends.
"""

from __future__ import annotations

import contextlib
import errno
import os
import select
import shutil
import signal
import sys
import tempfile
import threading
import time
from functools import cache
from pathlib import Path

from audit.exceptions import EXIT_INTERRUPTED, EXIT_TERMINATED

#: Seconds a kernel is given to end after SIGTERM before it is killed.
GRACE = 3.0
#: The code that ends a kernel asked to shut down: IPython's ``exit``, which stops
#: the kernel's main loop once the request is answered.
EXIT = "get_ipython().ask_exit()"

INTERRUPTED = (
    "interrupted by {signal}: the report was not published, any earlier report "
    "of the name is unchanged, and no kernel is left running"
)
INTERRUPTED_KEPT = (
    "interrupted by {signal}: the report was not published (what it had written is kept "
    "in {kept}), any earlier report of the name is unchanged, and no kernel is left running"
)
INTERRUPTED_BEFORE = "interrupted by {signal} before a report was begun; nothing was written"
INTERRUPTED_PUBLISHED = (
    "interrupted by {signal} while the report was being put in place: it was finished "
    "first and is at {path}"
)
INTERRUPTED_AFTER = (
    "interrupted by {signal} once the report was in place: it is finished, at {path}"
)
SIGNAL_NAMES = {signal.SIGINT: "Ctrl-C (SIGINT)", signal.SIGTERM: "SIGTERM"}


class Interrupted(KeyboardInterrupt):
    """The run was stopped by SIGINT or SIGTERM (``signum``); ``began`` says whether a
    report run had begun, ``published`` is the report put in place as the signal
    came (``after``: before it came), if any; ``kept``, where the unfinished run's
    folder is kept (``.NAME.failed``), once the run has moved it there."""

    def __init__(
        self,
        signum: int,
        published: Path | None = None,
        *,
        began: bool = True,
        after: bool = False,
    ):
        super().__init__(signum)
        self.signum, self.published, self.began = signum, published, began
        self.after = after
        self.kept: Path | None = None
        #: The :func:`handle_signals` block whose handler raised it into whatever code
        #: ran (:func:`_handler`), until the code that says it takes it (:meth:`taken`).
        self._block: object | None = None

    def taken(self) -> None:
        """Say that the code that reports the interruption has it: it is not lost when
        freed (:meth:`__del__`)."""
        self._block = None

    def __del__(self) -> None:
        # freed before anything took it: dropped by C code that clears the error of the
        # Python code it called (a Cython module's import registers its generator type
        # with collections.abc so, and a Ctrl-C in its first second was lost, the
        # command reading on, deaf to the next signals); sent again, to be raised elsewhere
        if self._block is not None:
            with contextlib.suppress(Exception):  # (at the interpreter's exit)
                _dropped(self.signum, self._block)

    @property
    def exit_status(self) -> int:
        return EXIT_TERMINATED if self.signum == signal.SIGTERM else EXIT_INTERRUPTED

    @property
    def sentence(self) -> str:
        name = SIGNAL_NAMES.get(self.signum, f"signal {self.signum}")
        if self.published is not None:
            said = INTERRUPTED_AFTER if self.after else INTERRUPTED_PUBLISHED
            return said.format(signal=name, path=self.published)
        if self.kept is not None:
            return INTERRUPTED_KEPT.format(signal=name, kept=self.kept)
        return (INTERRUPTED if self.began else INTERRUPTED_BEFORE).format(signal=name)

    def __str__(self) -> str:
        return self.sentence


class _State:
    def __init__(self):
        self.lock = threading.Lock()
        self.kernels: dict[int, object] = {}  # pid -> subprocess.Popen
        self.stopping = False
        self.began = False  # a report run began in this process
        self.deferring = 0
        self.pending: int | None = None
        self.published: Path | None = None  # the report this run put in place
        self.forward: _Forward | None = None
        self.block: object | None = None  # the handle_signals block the main thread is in


_state = _State()


#: The files of Python's import machinery.  An exception a signal raises in their code
#: can leave the interpreter's import lock held: a callback of importlib's, which takes
#: the lock before its ``try``, swallows it there, and every import after it, in any
#: thread, then waits forever.  A signal that comes while the main thread runs their code
#: is raised again :data:`RETRY` seconds later, until it comes outside it (in a module's
#: own code, run by an import, it is raised at once: importlib lets it through whole).
IMPORT_MACHINERY = ("<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>")
#: Seconds after which a signal held back (:data:`IMPORT_MACHINERY`, a lost exception) is
#: sent again.
RETRY = 0.02


def _in_import_machinery(frame) -> bool:
    """Whether ``frame`` (the code a signal came in) is :data:`IMPORT_MACHINERY`'s."""
    return frame is not None and frame.f_code.co_filename in IMPORT_MACHINERY


def _send_again(signum: int) -> None:
    """``signum`` sent to the main thread again in :data:`RETRY` seconds, from a thread,
    if the :func:`handle_signals` block it came in still handles it then."""
    block = _state.block

    def send() -> None:
        with _state.lock:  # (the block ends under it: nothing is sent once it has)
            if block is not None and _state.block is block:
                signal.pthread_kill(threading.main_thread().ident, signum)

    timer = threading.Timer(RETRY, send)
    timer.daemon = True
    timer.start()


#: Seconds a signal may wait for the main thread to run its handler before it is sent
#: to the main thread itself (:class:`_Forward`).
FORWARD_AFTER = 0.05


class _Forward:
    """Send the main thread a signal another thread took while the main thread waited in
    a system call.

    The kernel gives a signal sent to the process to any thread that does not block
    it; the main thread blocks every signal for an instant each time it starts a thread
    (glibc) or a process (Python's ``vfork``). A thread that takes it only marks it for
    the main thread, which runs the handler at its next step of Python code; if the
    main thread then waits in a system call (opening a named pipe no one writes, reading
    a socket), it waits on, deaf to it: ``audit compare`` stopped as its kernel started
    read on into its table, in 3 of 100 runs on a loaded machine.  Python writes each
    signal's number to a pipe (:func:`signal.set_wakeup_fd`), which the handler
    empties; a thread of this class, which blocks the signals itself, watches the pipe,
    and sends the main thread each signal left in it :data:`FORWARD_AFTER` seconds
    later, which ends its wait (``EINTR``) and runs the handler."""

    def __init__(self):
        self.main = threading.main_thread().ident
        self.read, self.write = os.pipe()
        self.quit_read, self.quit_write = os.pipe()
        for fd in (self.read, self.write):
            os.set_blocking(fd, False)
        self.lock = threading.Lock()
        self.active = True
        signal.set_wakeup_fd(self.write, warn_on_full_buffer=False)  # (none was set)
        self.thread = threading.Thread(target=self._watch, name="audit-signals", daemon=True)
        self.thread.start()

    def _watch(self) -> None:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        poller = select.poll()
        poller.register(self.read, select.POLLIN)
        poller.register(self.quit_read, select.POLLIN)
        while True:
            if any(fd == self.quit_read for fd, _ in poller.poll()):
                return
            time.sleep(FORWARD_AFTER)  # the handler empties the pipe when it runs
            try:
                taken = os.read(self.read, 512)
            except BlockingIOError:  # it ran
                continue
            with self.lock:
                if not self.active:
                    return
                for signum in {signal.SIGINT, signal.SIGTERM} & set(taken):
                    signal.pthread_kill(self.main, signum)

    def empty(self) -> None:
        """Empty the pipe: the signals in it reached the handler."""
        with contextlib.suppress(OSError):
            while os.read(self.read, 512):
                pass

    def close(self) -> None:
        with self.lock:
            self.active = False
        os.write(self.quit_write, b"q")
        self.thread.join()
        signal.set_wakeup_fd(-1)
        for fd in (self.read, self.write, self.quit_read, self.quit_write):
            os.close(fd)


def _forked() -> None:
    """In a process forked from this one: no thread watches the wakeup pipe it shares
    with its parent, whose main thread its signals are not for."""
    if _state.forward is not None:
        _state.forward = None
        with contextlib.suppress(ValueError):  # (forked from another thread than the main)
            signal.set_wakeup_fd(-1)


os.register_at_fork(after_in_child=_forked)


def _handler(signum, frame) -> None:
    if _state.forward is not None:
        _state.forward.empty()
    if _state.block is None:  # the block is ending: its command has its status
        return
    if _state.deferring:
        _state.pending = signum
        return
    if _state.stopping:  # a second signal while the first is handled
        return
    if _in_import_machinery(frame):
        _send_again(signum)
        return
    _state.stopping = True
    published = _state.published  # the command ends its last lines: the report is whole
    raise _of_this_block(
        Interrupted(signum, published, began=_state.began, after=published is not None)
    )


def _of_this_block(stop: Interrupted) -> Interrupted:
    """``stop``, raised by :func:`_handler` in the current :func:`handle_signals` block.
    (Not a variable of the handler's: its frame, in the traceback, would keep it alive
    in a cycle, freed only by a collection, and a dropped one sent again only then.)"""
    stop._block = _state.block
    return stop


def _dropped(signum: int, block: object) -> None:
    """An interruption raised in the :func:`handle_signals` ``block`` was dropped where
    nothing could see it (C code cleared it, or Python could only print it):
    ``signum`` is sent again, to be raised elsewhere, while the block lasts (and
    nothing defers it)."""
    if _state.block is block and _state.pending is None:
        _state.stopping = False
        _send_again(signum)


def _unraisable(unraisable) -> None:
    """An :class:`Interrupted` raised where Python can only print it and go on (a
    ``__del__``, a weakref callback): not lost but sent again, to be raised elsewhere,
    and nothing printed; anything else goes to the hook it replaced."""
    stop = unraisable.exc_value
    if isinstance(stop, Interrupted) and _state.pending is None:
        stop.taken()
        _dropped(stop.signum, _state.block)
        return
    _previous_unraisable(unraisable)


_previous_unraisable = sys.unraisablehook


@contextlib.contextmanager
def handle_signals():
    """SIGINT and SIGTERM raise :class:`Interrupted` inside the block (main thread only);
    one caught there and freed before the block ends, unless taken
    (:meth:`Interrupted.taken`), is raised again.

    A signal the process was started ignoring stays ignored: a shell script starts
    its background jobs (``audit report &`` in a script) with SIGINT ignored, so that
    a Ctrl-C meant for the foreground does not stop them.

    A signal that comes as the block is set up is held until it is (as
    :func:`deferred` holds one), then raised as the block begins, with everything
    given back as it ends: raised halfway through, starting the thread of
    :class:`_Forward`, it left the handlers in place and the block open, and the
    process, as it ended, waiting forever for a thread it could no longer start.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    global _previous_unraisable
    # a run stopped before, outside this block (run_report called from Python raised,
    # its kernels stopped), leaves no "stopping" behind that would swallow this signal;
    # what comes until the block is set up is held (deferring)
    _state.stopping, _state.began, _state.deferring, _state.pending = False, False, 1, None
    _state.published = None
    _state.block = object()  # this block: what an earlier one sends again is not for it
    previous = {
        s: signal.signal(s, _handler)
        for s in (signal.SIGINT, signal.SIGTERM)
        if signal.getsignal(s) is not signal.SIG_IGN
    }
    _previous_unraisable, sys.unraisablehook = sys.unraisablehook, _unraisable
    forward = None
    if previous:
        other = signal.set_wakeup_fd(-1)
        if other == -1:
            forward = _state.forward = _Forward()
        else:  # another's (an event loop's): left as it was
            signal.set_wakeup_fd(other)
    try:
        _state.deferring = 0
        _raise_held()  # one that came as the block was set up
        yield
    finally:
        with _state.lock:
            _state.block = None  # nothing is sent again from here
        if forward is not None:
            _state.forward = None
            forward.close()  # (what it sent is handled as the handlers are given back)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        sys.unraisablehook = _previous_unraisable
        _state.stopping, _state.began, _state.deferring, _state.pending = False, False, 0, None
        _state.published = None


@contextlib.contextmanager
def deferred(published: Path | None = None):
    """Hold SIGINT and SIGTERM while the block runs (in the main thread): it puts
    ``published`` in place, or starts threads and records them, each of which an
    interruption between the two would leave waiting, and the interpreter's exit
    with it. One that came meanwhile is raised after the block, as
    :class:`Interrupted` (naming ``published``); one that comes later names it too.
    (Signals are handled in the main thread: another thread's block holds none.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _state.deferring += 1
    try:
        yield
    finally:
        _state.deferring -= 1
    if published is not None:
        _state.published = published
    _raise_held(published)


def _raise_held(published: Path | None = None) -> None:
    """Raise the signal that came while signals were held (:func:`deferred`, a
    :func:`handle_signals` block being set up), as :class:`Interrupted` naming
    ``published``, once nothing holds them any more."""
    if not _state.deferring and _state.pending is not None:
        signum, _state.pending = _state.pending, None
        _state.stopping = True
        raise Interrupted(signum, published, began=_state.began)


def stopping() -> bool:
    """Whether the run is being stopped: no new notebook or kernel may start."""
    return _state.stopping


def begin_run() -> None:
    """A report run starts: kernels may start."""
    _state.stopping, _state.began = False, True


def stop_kernels() -> None:
    """Stop every kernel started here: SIGTERM to its process group, then SIGKILL after
    :data:`GRACE` seconds; reap each. No kernel may start afterwards in this run."""
    with _state.lock:
        _state.stopping = True
        processes = dict(_state.kernels)
    for pid in processes:
        signal_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + GRACE
    for pid, process in processes.items():
        while process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if process.poll() is None:
            signal_group(pid, signal.SIGKILL)
            process.wait()


def kill(process) -> None:
    """SIGKILL to the kernel ``process``'s group at once; reap it."""
    signal_group(process.pid, signal.SIGKILL)
    process.wait()


def signal_group(pid: int, signum: int) -> None:
    """Send ``signum`` to the process group of ``pid`` where it leads one (a kernel, in its
    own session: what it started, too), else to ``pid`` alone."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.getpgid(pid) == pid:
            os.killpg(pid, signum)
        else:
            os.kill(pid, signum)


def _register(process) -> None:
    with _state.lock:
        _state.kernels[process.pid] = process
        late = _state.stopping
    if late:  # the run was stopped while this kernel started
        signal_group(process.pid, signal.SIGKILL)
        process.wait()


def _unregister(pid: int | None) -> None:
    with _state.lock:
        _state.kernels.pop(pid, None)


#: The longest path a kernel's socket is given (a Unix socket's path holds 107 bytes).
LONGEST_SOCKET_PATH = 100


def socket_folder(prefix: str, name: str) -> str:
    """A new folder only this user can enter, short enough that ``folder/name`` is a Unix
    socket's path: in the temporary folder (``TMPDIR``), else, where that path is too
    long, in ``/tmp``; :class:`OSError` if neither will do."""
    for parent in (None, "/tmp"):
        folder = tempfile.mkdtemp(prefix=prefix, dir=parent)
        if len(os.fsencode(os.path.join(folder, name))) <= LONGEST_SOCKET_PATH:
            return folder
        shutil.rmtree(folder, ignore_errors=True)
    raise OSError(errno.ENAMETOOLONG, "no temporary folder is short enough for a socket")


@cache
def kernel_manager_class() -> type:
    """The kernel manager of the report's notebooks (imported on first use): IPC
    sockets in a private temporary folder, and each kernel process recorded so that
    :func:`stop_kernels` can end it."""
    from jupyter_client.manager import AsyncKernelManager
    from traitlets import CaselessStrEnum

    class ReportKernelManager(AsyncKernelManager):
        transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

        async def _async_start_kernel(self, **kwargs):
            # the sockets' paths are absolute and short (a Unix socket path is at most
            # about 100 bytes), in a folder only this user can enter
            self._socket_dir = socket_folder("audit-kernel-", "k-10")
            self.ip = str(Path(self._socket_dir) / "k")
            try:
                await super()._async_start_kernel(**kwargs)
            except BaseException:  # no kernel (its server stopped, say): nothing made for it
                with contextlib.suppress(Exception):  # its connection file, its sockets' folder
                    await self._async_cleanup_resources()
                shutil.rmtree(self._socket_dir, ignore_errors=True)
                raise
            process = getattr(self.provisioner, "process", None)
            if process is not None:
                self._audit_pid = process.pid
                _register(process)

        async def _async_launch_kernel(self, kernel_cmd, **kw):
            from audit.report import forkserver

            try:
                process = forkserver.launch(kernel_cmd, **kw)
            except forkserver.Unavailable:
                return await super()._async_launch_kernel(kernel_cmd, **kw)
            provisioner = self.provisioner
            provisioner.process, provisioner.pid = process, process.pid
            try:
                provisioner.pgid = os.getpgid(process.pid)
            except OSError:
                provisioner.pgid = None
            self._reconcile_connection_info(provisioner.connection_info)

        def client(self, **kwargs):
            # remembered, so that shutting the kernel down closes every client's
            # channels, also one a notebook client made on a kernel it did not start
            handed = self.__dict__.pop("_audit_handed", None)
            if handed is not None:
                return handed
            made = super().client(**kwargs)
            self.__dict__.setdefault("_audit_clients", []).append(made)
            return made

        def hand_over(self, client) -> None:
            """The next :meth:`client` is ``client``, its channels started and the kernel
            answering on each: starting them again would fail, and waiting for the
            kernel to be ready (a kernel_info round trip, then 0.2 s of IOPub silence)
            would only wait."""

            async def ready(timeout=None) -> None:
                return None

            client.start_channels = lambda *args, **kwargs: None
            client.wait_for_ready = ready
            self._audit_handed = client

        async def _async_request_shutdown(self, restart: bool = False) -> None:
            if restart:  # (never asked by the report: the kernel must come back)
                return await super()._async_request_shutdown(restart=True)
            socket = self.__dict__.get("_audit_shell")
            if socket is None:
                socket = self._audit_shell = self._create_connected_socket("shell")
                socket.linger = 100
            content = {"code": EXIT, "silent": True, "store_history": False}
            content |= {"user_expressions": {}, "allow_stdin": False}
            self.session.send(socket, self.session.msg("execute_request", content))
            await self.provisioner.shutdown_requested(restart=False)

        async def _async_cleanup_resources(self, restart: bool = False) -> None:
            await super()._async_cleanup_resources(restart=restart)
            socket = self.__dict__.pop("_audit_shell", None)
            if socket is not None:
                socket.close()
            if not restart:
                for made in self.__dict__.pop("_audit_clients", []):
                    if made.channels_running:
                        made.stop_channels()
                _unregister(getattr(self, "_audit_pid", None))
                shutil.rmtree(getattr(self, "_socket_dir", ""), ignore_errors=True)

        # jupyter_client binds the public names to the private methods by value
        start_kernel = _async_start_kernel
        request_shutdown = _async_request_shutdown
        cleanup_resources = _async_cleanup_resources

    return ReportKernelManager
