"""The report's fork server (:mod:`audit.report.forkserver`): a process forked from it is
what a process started afresh would be (its session, streams, descriptors, folder,
environment, matplotlib backend, exit status), only with the server's modules imported
already; the server ignores Ctrl-C and, when it ends, leaves no process behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from processes import name, running

from audit.report import forkserver, interrupt

#: Run by a forked process: what it is, as JSON on the descriptor given as argv[1].
REPORT = """
import json, os, sys
seen = {
    "pid": os.getpid(), "ppid": os.getppid(), "sid": os.getsid(0), "pgid": os.getpgrp(),
    "cwd": os.getcwd(), "argv": sys.argv, "variable": os.environ.get("AUDIT_TEST_VARIABLE"),
    "home": os.environ.get("HOME"), "preloaded": "pandas" in sys.modules,
    "frozen": __import__("gc").get_freeze_count(),
    "backend": __import__("matplotlib").get_backend().lower(),
    "stdin": sys.stdin.read(),
}
os.write(int(sys.argv[1]), json.dumps(seen).encode())
sys.exit(int(sys.argv[2]))
"""


@pytest.fixture
def server():
    with forkserver.started():
        yield forkserver._server


def _spawn(code: str, *args: str, **options) -> forkserver.Forked:
    return forkserver.spawn([sys.executable, "-c", code, *args], **options)


def test_without_a_server_nothing_is_forked():
    with pytest.raises(forkserver.Unavailable):
        _spawn("pass")


@pytest.mark.parametrize(
    "cmd",
    [["/bin/sh", "-c", "true"], [sys.executable, "script.py"], [sys.executable, "-m"]],
    ids=["another program", "a script", "no module"],
)
def test_only_this_interpreter_with_a_module_or_code_is_forked(server, cmd):
    with pytest.raises(forkserver.Unavailable):
        forkserver.spawn(cmd)


def test_a_forked_process_is_as_one_started_afresh(server, tmp_path):
    read, write = os.pipe()
    folder = tmp_path / "here"
    folder.mkdir()
    environment = {"AUDIT_TEST_VARIABLE": "ä b", "MPLBACKEND": "agg", "PATH": os.environ["PATH"]}
    with open(tmp_path / "in", "w") as given:
        given.write("from the caller")
    with open(tmp_path / "in") as stdin:
        process = _spawn(
            REPORT,
            str(write),
            "3",
            env=environment,
            cwd=folder,
            streams=(stdin, None, None),
            pass_fds=(write,),
            name="audit-test",
        )
    os.close(write)
    assert process.wait(timeout=60) == 3 and process.poll() == 3
    with os.fdopen(read, "rb") as pipe:
        seen = json.loads(pipe.read())
    assert seen["pid"] == process.pid
    assert seen["ppid"] == server.process.pid  # the server's child, reaped by it
    assert seen["sid"] == seen["pgid"] == process.pid  # a session of its own
    assert seen["cwd"] == str(folder)
    assert seen["argv"] == ["-c", str(write), "3"]
    assert seen["variable"] == "ä b" and seen["home"] is None  # the environment given only
    assert seen["preloaded"] is True  # imported by the server, before the fork
    assert seen["frozen"] > 10_000  # what that made (130,000 objects), out of collections
    assert seen["backend"] == "agg"  # as MPLBACKEND says, whatever the server's was
    assert seen["stdin"] == "from the caller"


#: Run by a forked process: the threads of its BLAS, on the descriptor given as argv[1].
BLAS_THREADS = """
import json, os, sys
from threadpoolctl import threadpool_info
threads = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
os.write(int(sys.argv[1]), json.dumps(threads).encode())
"""


@pytest.mark.parametrize(
    "given", [None, "", "2"], ids=["by default", "set empty", "as the command asks"]
)
def test_a_forked_process_runs_blas_on_one_thread_unless_asked_otherwise(given, monkeypatch):
    """numpy's BLAS on one thread in what the server forks (a report's processes run side
    by side, one a core), unless the command's environment gives a number."""
    if given is None:
        monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    else:
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", given)
    with forkserver.started():
        server = forkserver._server
        read, write = os.pipe()
        process = _spawn(BLAS_THREADS, str(write), pass_fds=(write,))
        os.close(write)
        assert process.wait(timeout=60) == 0
        with os.fdopen(read) as pipe:
            threads = json.loads(pipe.read())
        # read once the server has served a request: read as it started, the file was
        # found empty in 3 suites of 8 run side by side with others (cause not known)
        environ = Path(f"/proc/{server.process.pid}/environ").read_bytes().split(b"\0")
        assert f"OPENBLAS_NUM_THREADS={given or 1}".encode() in environ
    assert threads and threads == [min(int(given or 1), os.cpu_count())] * len(threads)


def test_a_forked_process_goes_by_its_name_and_can_be_signalled(server):
    process = _spawn("import time; time.sleep(60)", name=forkserver.WORKER_NAME)
    deadline = time.monotonic() + 30
    while name(process.pid) != forkserver.WORKER_NAME:
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.02)
    assert process.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(timeout=0.1)
    process.terminate()
    assert process.wait(timeout=30) == -signal.SIGTERM
    process.kill()  # ended: nothing is signalled (its number may be another's by now)


def test_ctrl_c_does_not_stop_the_server(server):
    assert _spawn("pass").wait(timeout=60) == 0  # it is serving
    assert os.getpgid(server.process.pid) != os.getpgrp()  # out of the terminal's group
    os.kill(server.process.pid, signal.SIGINT)
    time.sleep(0.2)
    process = _spawn("pass")
    assert process.wait(timeout=60) == 0 and server.process.poll() is None


def test_the_server_ends_with_its_block_and_takes_what_it_forked(tmp_path):
    with forkserver.started():
        server = forkserver._server
        folder = server.folder
        assert os.environ[forkserver.ADDRESS] == server.path
        sleeper = _spawn("import time; time.sleep(600)")
    assert server.process.returncode == 0
    assert sleeper.wait(timeout=30) == -signal.SIGTERM and not running(sleeper.pid)
    assert not os.path.exists(folder) and forkserver.ADDRESS not in os.environ
    with pytest.raises(forkserver.Unavailable):
        _spawn("pass")


def test_a_server_never_asked_for_a_process_is_stopped_not_waited_for():
    """A block that forked nothing ends its server at once (SIGTERM, even while it
    imports); one that forked a process ends it as usual, its standard input closed."""
    with forkserver.started():
        unused = forkserver._server
    # (SIGTERM before Python set the server's handler: ended by the signal itself)
    assert unused.stopped and unused.process.returncode in (0, -signal.SIGTERM)
    assert not os.path.exists(unused.folder)
    with forkserver.started():
        used = forkserver._server
        with forkserver.started():  # a block within it asks the same server
            assert _spawn("pass").wait(timeout=60) == 0
    assert not used.stopped and used.process.returncode == 0


def test_a_block_that_fails_stops_the_server_and_what_it_forked():
    with pytest.raises(RuntimeError, match="refused"):
        with forkserver.started():
            server = forkserver._server
            sleeper = _spawn("import time; time.sleep(600)")
            raise RuntimeError("refused")
    assert server.stopped and server.process.returncode == 0
    assert sleeper.wait(timeout=30) == -signal.SIGTERM and not running(sleeper.pid)
    assert not os.path.exists(server.folder)


@pytest.mark.parametrize("wait", [False, True], ids=["while it imports", "once it serves"])
def test_a_stopped_server_starts_nothing_more(wait):
    with forkserver.started():
        if wait:
            assert _spawn("pass").wait(timeout=60) == 0
        forkserver.stop()
        with pytest.raises(forkserver.Stopped):
            _spawn("pass")
        # (ended by the signal itself where it came before the server set its handler)
        assert forkserver._server.process.wait(timeout=30) in (0, -signal.SIGTERM)


def test_a_block_within_another_shares_its_server_and_leaves_it_running():
    with forkserver.started():
        outer = forkserver._server
        with forkserver.started():
            assert forkserver._server is outer
            forkserver.stop()  # (a refusal in the inner block): the outer's server runs on
            assert _spawn("pass").wait(timeout=60) == 0
        with pytest.raises(RuntimeError, match="refused"):
            with forkserver.started():
                raise RuntimeError("refused")
        assert forkserver._server is outer and not outer.stopped
        assert outer.process.poll() is None and _spawn("pass").wait(timeout=60) == 0
    assert outer.process.returncode == 0 and forkserver._server is None
    with forkserver.started():  # a block after it starts its own
        assert forkserver._server not in (None, outer)


def test_a_server_bound_and_not_yet_listening_is_waited_for(tmp_path, monkeypatch):
    """A server's socket exists from its bind, and refuses until it listens: a request
    made between the two waits for it while it is starting (it was taken as a server that
    had ended, and the kernels started afresh; the suite saw it once in 3,300 tests), and
    is refused where no server starts."""
    import socket
    import threading

    path = str(tmp_path / "s")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)  # bound, not listening: a connect is refused
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with pytest.raises(ConnectionRefusedError):
        probe.connect(path)
    probe.close()
    monkeypatch.setattr(forkserver, "_starting", lambda address: address == path)

    def serve():
        time.sleep(0.3)
        listener.listen(1)
        listener.settimeout(10)  # (a request that gave up comes no more)
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            return
        socket.recv_fds(connection, 1 << 16, 4)
        connection.sendall(b"pid 4242\n")
        served.append(connection)

    served = []
    thread = threading.Thread(target=serve)
    thread.start()
    try:
        forked = forkserver._ask(path, {"argv": ["x"]}, [])
        assert forked.pid == 4242
        forked._reader.close()
        forked._connection.close()
    finally:
        thread.join()
        for connection in served:
            connection.close()
        listener.close()
    monkeypatch.setattr(forkserver, "_starting", lambda address: False)  # it ended
    with pytest.raises(forkserver.Unavailable, match="not listening"):
        forkserver._ask(path, {"argv": ["x"]}, [])


def test_a_folder_too_long_for_a_socket_gives_way_to_one_in_tmp(tmp_path, monkeypatch):
    deep = tmp_path / ("x" * 100)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    folder = interrupt.socket_folder("audit-test-", "s")
    try:
        assert os.path.dirname(folder) == "/tmp" and oct(os.stat(folder).st_mode)[-3:] == "700"
    finally:
        os.rmdir(folder)
    with forkserver.started():
        assert _spawn("pass").wait(timeout=60) == 0
