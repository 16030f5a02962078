"""A process that imports what a report's kernels and drawing processes need once, and
forks each of them from itself, ready.

A kernel is a Python interpreter that imports ipykernel and then, for its notebook,
numpy, pandas, matplotlib and ``audit``: about a second of one core, paid again by
every kernel of a report and by the drawing process beside it
(:mod:`audit.report.background`). While a report runs, :func:`started` keeps one
server (``python -m audit.report.forkserver SOCKET``) that imports those modules
(:data:`KERNEL_MODULES` and :data:`audit.report.kernels.PRELOAD`) and then forks
itself for each process asked for: a kernel (:func:`launch`, through the kernel
manager of :mod:`audit.report.interrupt`) or a drawing process (:func:`spawn`,
which a kernel reaches through the :data:`ADDRESS` its environment names). The
child sets up what the same command started afresh would have -- a session of its
own, the standard streams, descriptors, working folder and environment it was
given, matplotlib on the backend that environment names -- and runs the command's
module or code in place; its name (``ps -o comm``, ``top``) says what it is
(:data:`KERNEL_NAME`, :data:`WORKER_NAME`), its command line is the server's. A
command that is not this interpreter's ``-m`` or ``-c`` is started as before, and
so is everything when the server cannot be (:class:`Unavailable`).

The server imports before it forks anything and runs no thread of its own (nor a BLAS
pool, unless the command's environment asks for one: :data:`ONE_THREAD`; OpenBLAS's
pool stops and restarts around a fork), so a fork copies no lock held mid-step. It is
out of the terminal's process group and ignores Ctrl-C (the command line handles it,
and stops the kernels); it reaps each process it forked and tells the process that
asked how it ended (:class:`Forked`, which stands in for a ``subprocess.Popen``); and
when the command line closes its standard input, or dies, it kills whatever it forked
that still runs, and ends. When the command fails or refuses its input, the server is
stopped at once (:func:`stop`, SIGTERM), even while it imports, so that the message is
not held back by it; what was asked of it then raises :class:`Stopped` and starts
nowhere. Its socket is in a folder only this user can enter.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Iterator, Sequence

from audit.report.interrupt import deferred, signal_group, socket_folder

#: Modules the server imports before it forks: ipykernel and what the report's
#: notebooks import first (:data:`audit.report.kernels.PRELOAD`).
KERNEL_MODULES = ("ipykernel.kernelapp", "ipykernel.ipkernel", "ipykernel_launcher")
#: The backend a kernel's matplotlib starts with, as ipykernel sets it where the
#: environment names none: set in the server before matplotlib is imported.
INLINE = "module://matplotlib_inline.backend_inline"
#: The names kernels and workers forked by the server go by (``ps -o comm``, ``top``).
KERNEL_NAME = "audit-kernel"
WORKER_NAME = "audit-worker"
#: The environment variable that gives a kernel the server's socket, so that the
#: drawing processes it starts (:mod:`audit.report.background`) are forked too.
ADDRESS = "AUDIT_FORKSERVER"
#: The server's environment where the command's gives these no value: numpy's BLAS
#: (OpenBLAS, or MKL) on one thread in every process forked from it.  A report runs
#: its kernels and drawing processes side by side, one for each core; a BLAS pool of
#: threads in each of them spins for a core another process holds: the compare
#: report's rank agreements (1,500 products of 200 x 126 by 126 x 126 matrices, 0.1 ms
#: each alone) took 2.6 s in its kernel, and the report 11.6-18.6 s against 10.3-13.0 s
#: with one thread (four runs of each, alternating, on two cores).
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
#: Seconds a launch waits for the server to answer (it may still be importing).
CONNECT_TIMEOUT = 60.0

#: Seconds what the server forked has to end after SIGTERM, when the server ends.
GRACE = 1.0
_HEADER = struct.Struct("!I")
_lock = threading.Lock()
_server: _Server | None = None
_nested = 0  # blocks of started() within the one that started the server


class Unavailable(Exception):
    """The server cannot start this process: start it as before."""


class Stopped(Exception):
    """The server was stopped (:func:`stop`: the command failed or was refused) while a
    process was asked of it: nothing is to start, neither forked nor afresh."""


# -- the command line's side ------------------------------------------------------


class _Server:
    def __init__(self):
        self.folder = socket_folder("audit-forkserver-", "s")
        self.path = os.path.join(self.folder, "s")
        from audit.report.kernels import search_path  # (asyncio: not for a worker)

        # the same audit package as this process's, wherever it lives
        pythonpath = search_path(os.environ.get("PYTHONPATH", ""))
        environment = {**os.environ, "PYTHONPATH": pythonpath}
        environment.update({k: v for k, v in ONE_THREAD.items() if not environment.get(k)})
        self.process = subprocess.Popen(
            [sys.executable, "-m", "audit.report.forkserver", self.path],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,  # (what it forks writes to the asker's streams)
            env=environment,
            cwd=self.folder,  # (its module search path starts there: nothing to shadow)
            start_new_session=True,  # out of the terminal's Ctrl-C: the command line's
        )
        self.stopped = False
        self.asked = False  # whether a process was asked of it

    def stop(self) -> None:
        """SIGTERM to the server: it ends at once, even while it imports, and what it
        forked ends with it (SIGTERM, then SIGKILL after :data:`GRACE` seconds); a
        process asked of it meanwhile raises :class:`Stopped`."""
        self.stopped = True
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                self.process.send_signal(signal.SIGTERM)

    def close(self) -> None:
        """End the server (it kills any kernel still running) and remove its folder; one
        never asked for a process ends at once (:meth:`stop`), not after its imports."""
        if not self.asked:
            self.stop()
        with contextlib.suppress(OSError):
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


@contextlib.contextmanager
def started() -> Iterator[None]:
    """Within the block, kernels (:func:`launch`) and the drawing processes they start
    (:func:`spawn`) are forked from a server that imported their modules; the server
    ends with the block, and with it whatever it forked that still runs. Where the
    server cannot start, the block runs without it: each process starts afresh.

    A block within another shares the outer block's server, which it neither starts
    nor stops: several reports run from one script, each command or
    :func:`~audit.report.runner.run_report` in one ``started()`` block, pay for the
    server's imports once::

        with forkserver.started():
            for path in tables:
                run_report(path.stem, parameters={"data_path": str(path)})
    """
    global _server, _nested
    with _lock:
        outer = _server is not None and _server.process.poll() is None and not _server.stopped
        if outer:
            _nested += 1
    if outer:
        try:
            yield
        finally:
            with _lock:
                _nested -= 1
        return
    server, before = None, os.environ.get(ADDRESS)
    try:
        with deferred():  # Ctrl-C waits until the server started is recorded, to be closed
            with contextlib.suppress(OSError):  # no server: every kernel starts as before
                server = _Server()
                with _lock:
                    _server = server
                os.environ[ADDRESS] = server.path  # in the kernels' environment: their workers
        yield
    except BaseException:
        if server is not None:
            server.stop()  # a refusal or a failure is said now, not after its imports
        raise
    finally:
        if server is not None:
            with _lock:
                _server = None
            if before is None:
                os.environ.pop(ADDRESS, None)
            else:
                os.environ[ADDRESS] = before
            server.close()


def stop() -> None:
    """Stop this process's server now (:meth:`_Server.stop`), if one runs and the
    innermost block (:func:`started`) started it: that block is ending with an error,
    and the kernels started ahead that wait for it are to give up at once
    (:class:`Stopped`). A server an outer block shares is left running."""
    with _lock:
        server = _server if _nested == 0 else None
    if server is not None:
        server.stop()


def _stopped() -> bool:
    """Whether this process's server was stopped (:func:`stop`): what is asked of it then
    starts nowhere (while it runs, every request of this process goes to it)."""
    with _lock:
        return _server is not None and _server.stopped


def _address() -> str | None:
    with _lock:
        server = _server
    if server is not None:
        return server.path if server.process.poll() is None else None
    return os.environ.get(ADDRESS) or None


def _starting(address: str) -> bool:
    """Whether ``address`` is this process's server, still running (and perhaps not yet
    listening)."""
    with _lock:
        server = _server
    return server is not None and server.path == address and server.process.poll() is None


def launch(cmd: Sequence[str], env: dict | None = None, cwd: str | None = None, **kwargs):
    """The kernel ``cmd`` (``python -m ipykernel_launcher ...``, as jupyter_client
    builds it) forked from the server, as a :class:`Forked`; raises
    :class:`Unavailable` where it cannot be (no server, another interpreter or kernel,
    an option or stream the server does not know)."""
    cmd = list(cmd)
    if len(cmd) < 3 or cmd[1] != "-m" or cmd[2] != "ipykernel_launcher":
        raise Unavailable("not an ipykernel")
    known = {"stdin", "stdout", "stderr", "extra_arguments", "kernel_id", "independent"}
    if set(kwargs) - known:
        raise Unavailable(f"options {sorted(set(kwargs) - known)}")
    with _lock:
        server = _server
    env = dict(env if env is not None else os.environ)
    if server is not None and not kwargs.get("independent"):
        # as jupyter_client's launcher sets it: the kernel ends if its parent does
        env["JPY_PARENT_PID"] = str(server.process.pid)
    streams = [kwargs.get(name) for name in ("stdin", "stdout", "stderr")]
    return spawn(cmd, env=env, cwd=cwd, streams=streams, name=KERNEL_NAME)


def spawn(
    cmd: Sequence[str],
    *,
    env: dict | None = None,
    cwd: str | os.PathLike | None = None,
    streams: Sequence = (None, None, None),
    pass_fds: Sequence[int] = (),
    name: str = "",
) -> Forked:
    """``cmd`` (``[sys.executable, "-m", module, ...]`` or ``[sys.executable, "-c",
    code, ...]``) forked from the server, in a session of its own: its standard
    streams ``streams`` (``None``: the null device for input, this process's for
    output), and the descriptors ``pass_fds`` under the same numbers; ``name``, if
    given, is the process's name in ``ps -o comm`` and ``top`` (its command line is the
    server's). Raises :class:`Unavailable` where the server cannot start it."""
    if _stopped():
        raise Stopped
    address = _address()
    if address is None:
        raise Unavailable("no server")
    cmd = [os.fspath(part) for part in cmd]
    if len(cmd) < 3 or cmd[1] not in ("-m", "-c"):
        raise Unavailable("neither -m nor -c")
    if os.path.abspath(cmd[0]) != os.path.abspath(sys.executable):
        # (not resolved: a link to the same interpreter may be another environment's)
        raise Unavailable("another interpreter")
    fds, opened = [], []
    try:
        for number, given in enumerate(streams):
            if given is None:
                if number == 0:  # a kernel reads nothing from its standard input
                    given = os.open(os.devnull, os.O_RDONLY)
                    opened.append(given)
                else:
                    given = number
            elif given == subprocess.DEVNULL:
                given = os.open(os.devnull, os.O_RDWR)
                opened.append(given)
            elif not isinstance(given, int):
                try:
                    given = given.fileno()
                except (AttributeError, OSError) as error:
                    raise Unavailable(f"stream {number}") from error
            fds.append(given)
        fds += list(pass_fds)
        with _lock:
            if _server is not None and _server.path == address:
                _server.asked = True
        request = {
            "argv": cmd[1:],
            "cwd": os.fspath(cwd) if cwd is not None else os.getcwd(),
            "env": dict(env if env is not None else os.environ),
            "fds": [0, 1, 2, *pass_fds],
            "name": name,
        }
        return _ask(address, request, fds)
    finally:
        for fd in opened:
            os.close(fd)


def _ask(address: str, request: dict, fds: list[int]) -> Forked:
    body = json.dumps(request).encode()
    deadline = time.monotonic() + CONNECT_TIMEOUT
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    reader = None
    try:
        while True:
            try:
                connection.connect(address)
                break
            except (FileNotFoundError, ConnectionRefusedError) as error:
                # not listening yet, if it is starting: no socket yet, or one bound and
                # not yet listening (which refuses); refused by a server that ended
                if _stopped():
                    raise Stopped from error
                if not _starting(address) or time.monotonic() > deadline:
                    raise Unavailable("the server is not listening") from error
                connection.close()  # (a socket a connect failed on is not used again)
                connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                time.sleep(0.02)
            except OSError as error:  # (it ended)
                if _stopped():
                    raise Stopped from error
                raise Unavailable(str(error)) from error
        connection.settimeout(max(1.0, deadline - time.monotonic()))  # it may be importing
        try:
            socket.send_fds(connection, [_HEADER.pack(len(body)) + body], fds)
            # unbuffered: a line read never takes the next (the exit) from the socket,
            # where the select of :meth:`Forked.poll` looks for it
            reader = connection.makefile("rb", buffering=0)
            line = reader.readline()
        except OSError as error:
            if _stopped():
                raise Stopped from error
            raise Unavailable(str(error)) from error
        connection.settimeout(None)
        if not line.startswith(b"pid "):
            if _stopped():  # (it ended before it forked this one)
                raise Stopped
            raise Unavailable("the server could not fork")
        return Forked(int(line.split()[1]), connection, reader)
    except BaseException:
        if reader is not None:  # (the socket stays open while its reader does)
            reader.close()
        connection.close()
        raise


class Forked:
    """A process the server forked, as much of a ``subprocess.Popen`` as a kernel's
    manager uses: its ``pid``; :meth:`poll`, :meth:`wait`, :meth:`send_signal`,
    :meth:`terminate`, :meth:`kill`; no pipes. Its exit status comes from the server,
    which is its parent."""

    stdin = stdout = stderr = None

    def __init__(self, pid: int, connection: socket.socket, reader):
        self.pid = pid
        self.args = None
        self.returncode: int | None = None
        self._connection = connection
        self._reader = reader
        self._lock = threading.Lock()

    def _collect(self, timeout: float | None) -> None:
        with self._lock:
            if self.returncode is not None:
                return
            ready, _, _ = select.select([self._connection], [], [], timeout)
            if not ready:
                return
            line = self._reader.readline()
            if line.startswith(b"exit "):
                self.returncode = int(line.split()[1])
            elif not os.path.exists(f"/proc/{self.pid}") or _zombie(self.pid):
                self.returncode = -signal.SIGKILL  # the server ended first, and killed it
            else:  # the server ended first (killed): the process is gone once /proc says so
                time.sleep(0.05 if timeout is None else min(timeout, 0.05))
                return
            self._reader.close()
            self._connection.close()

    def poll(self) -> int | None:
        self._collect(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            self._collect(0.1 if left is None else min(left, 0.1))
            if self.returncode is None and deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(str(self.pid), timeout)
        return self.returncode

    def send_signal(self, signum: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, signum)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except OSError:
        return True


# -- the server's side ------------------------------------------------------------


def serve(path: str) -> None:
    """Listen at ``path``, import the modules, then fork a process for each request until
    standard input closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _terminated)  # (at once, even while importing)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(path)
        listener.listen(16)
    except OSError:  # no server: the kernels start as before
        sys.exit(1)
    os.environ.setdefault("MPLBACKEND", INLINE)
    from audit.report.kernels import PRELOAD

    for module in (*KERNEL_MODULES, *PRELOAD):
        with contextlib.suppress(Exception):  # (the kernel then imports it itself)
            __import__(module)
    # what the imports made lives as long as every process forked: frozen (:func:`gc.freeze`,
    # as its documentation advises before a fork), it is no longer gone through by each
    # full collection in those processes (a drawing process drawing six FFMC figures
    # spent 0.07 s collecting, against 0.27 s)
    gc.freeze()
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    os.set_blocking(wake_read, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    asked: dict[int, socket.socket] = {}
    try:
        while True:
            ready, _, _ = select.select([listener, 0, wake_read], [], [])
            if wake_read in ready:
                with contextlib.suppress(BlockingIOError):
                    os.read(wake_read, 512)
            _reap(asked)
            if 0 in ready and not os.read(0, 512):
                break
            if listener in ready:
                connection, _ = listener.accept()
                # SIGTERM held until the child has its default action back (the server's
                # handler must not run in it, nor a SIGTERM be lost in between) and the
                # server has it in ``asked``, whose processes its ``finally`` ends
                signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
                try:
                    child = _fork(connection, [listener, wake_read, wake_write, *asked.values()])
                    if child is not None:
                        asked[child] = connection
                finally:
                    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    finally:  # what still runs: SIGTERM to its session, SIGKILL after GRACE seconds
        for pid in asked:
            signal_group(pid, signal.SIGTERM)
        deadline = time.monotonic() + GRACE
        while asked and time.monotonic() < deadline:
            _reap(asked)
            time.sleep(0.01)
        for pid in asked:
            signal_group(pid, signal.SIGKILL)
        _reap(asked, block=True)


def _terminated(signum, frame) -> None:
    """SIGTERM in the server: its loop's ``finally`` ends what it forked (none before the
    loop), then it ends."""
    raise SystemExit(0)


def _reap(asked: dict[int, socket.socket], block: bool = False) -> None:
    """Reap the processes forked that have ended (``block``: all of them, waiting), and
    tell each one's asker how it ended."""
    while asked:
        try:
            pid, status = os.waitpid(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        connection = asked.pop(pid, None)
        if connection is not None:
            _tell(connection, f"exit {os.waitstatus_to_exitcode(status)}\n")


def _tell(connection: socket.socket, line: str) -> None:
    with contextlib.suppress(OSError):
        connection.sendall(line.encode())
    connection.close()


def _fork(connection: socket.socket, inherited: list) -> int | None:
    """Read one request from ``connection`` and fork its process; ``None`` if the
    request could not be read (the asker then starts the kernel as before)."""
    connection.settimeout(10)  # (the asker sends its request at once)
    fds: list[int] = []
    try:
        data, fds, _, _ = socket.recv_fds(connection, 1 << 16, 64)
        if len(data) < _HEADER.size:
            raise ValueError("a short request")
        (size,) = _HEADER.unpack_from(data)
        body = data[_HEADER.size :]
        while len(body) < size:
            more = connection.recv(size - len(body))
            if not more:
                raise ValueError("a short request")
            body += more
        request = json.loads(body)
        if len(request["fds"]) != len(fds):
            raise ValueError("descriptors missing")
    except (OSError, ValueError, KeyError):
        for fd in fds:
            os.close(fd)
        connection.close()
        return None
    with warnings.catch_warnings():
        # Python 3.12 warns of a fork in a process with threads: the server's only other
        # is OpenBLAS's, whose pool stops and restarts around a fork (pthread_atfork)
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover (the child: measured by the kernels it runs)
        _become(request, fds, [connection, *inherited])
    for fd in fds:
        os.close(fd)
    with contextlib.suppress(OSError):  # (an asker gone: its process is reaped, unused)
        connection.sendall(f"pid {pid}\n".encode())
    return pid


def _name(name: str) -> None:
    """The process's name (``/proc/PID/comm``, at most 15 bytes)."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(15, name.encode()[:15], 0, 0, 0)  # PR_SET_NAME


def _backend(name: str | None) -> None:
    """matplotlib (imported by the server) on the backend the process's environment
    names, as it would be in a process started afresh."""
    matplotlib = sys.modules.get("matplotlib")
    if matplotlib is None or not name or name.lower() == matplotlib.get_backend().lower():
        return
    matplotlib.use(name)


def _become(request: dict, fds: list[int], inherited: list) -> None:
    """In the forked child: the kernel process ``request`` describes; never returns."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        for signum in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # (held by serve)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for item in inherited:
            with contextlib.suppress(OSError):
                item.close() if hasattr(item, "close") else os.close(item)
        os.setsid()
        if request.get("name"):
            _name(request["name"])
        # each descriptor to its number, by way of numbers none of them has
        import fcntl

        high = max([*fds, *request["fds"], 2]) + 1
        moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, high) for fd in fds]
        for fd in fds:
            os.close(fd)
        for fd, target in zip(moved, request["fds"], strict=True):
            os.dup2(fd, target)  # (inheritable)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        _backend(os.environ.get("MPLBACKEND"))
        option, what, *rest = request["argv"]
        # the module search path's first entry as the command would have it
        sys.path[0] = os.getcwd() if option == "-m" else ""
        if option == "-m":
            import runpy

            sys.argv = [what, *rest]
            runpy.run_module(what, run_name="__main__", alter_sys=True)
        else:
            import builtins

            sys.argv = ["-c", *rest]
            exec(
                compile(what, "<string>", "exec"),
                {"__name__": "__main__", "__builtins__": builtins},
            )
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        # the exit a process started afresh would have: atexit handlers (ipykernel's
        # close) and flushed streams, never a return into the server's loop
        with contextlib.suppress(BaseException):
            import atexit

            atexit._run_exitfuncs()
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":
    with contextlib.suppress(SystemExit):
        serve(sys.argv[1])
    # what it forked is reaped; the server itself has nothing to flush or close: it ends
    # at once, without the interpreter's teardown of every module it imported
    os._exit(0)
