"""Ctrl-C and SIGTERM during a real report run, in real processes: the command ends
with one sentence and status 130 or 143, no traceback, no kernel left running, and
the earlier report of the name as it was."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import time

import pytest
from processes import descendants, finished, imported_by, kernels_below, running, workers

from audit.exceptions import EXIT_INTERRUPTED, EXIT_TERMINATED
from audit.report import interrupt, runner

pytestmark = pytest.mark.slow


@pytest.fixture
def ctrl_c_handled():
    """SIGINT handled by Python, as in a command run in the foreground.  A test run
    started in the background by a shell script (``make test &``) inherits SIGINT
    ignored, which audit keeps, as a background job should
    (:func:`test_a_background_job_keeps_ignoring_ctrl_c`): a test sending itself Ctrl-C
    would find it ignored."""
    started = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, started)


@pytest.fixture
def sigterm_restored():
    """SIGTERM's handler given back as the test found it, whatever the command left
    (:func:`audit.cli.run` ends with it ignored)."""
    started = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, started)


def _signal_as_signals_are_forwarded(monkeypatch, signum: int) -> None:
    """``signum`` sent to this process as :func:`~audit.report.interrupt.handle_signals`
    starts the thread that forwards signals (when glibc blocks them for an instant),
    and handled meanwhile."""

    class Forward(interrupt._Forward):
        def __init__(self):
            os.kill(os.getpid(), signum)
            time.sleep(0.2)  # (the handler runs meanwhile)
            super().__init__()

    monkeypatch.setattr(interrupt, "_Forward", Forward)


def _signals_now() -> str:
    """What decides whether a signal sent now is raised, for a failure's message: the
    SIGINT handler, the signals the main thread blocks, the handler's state and the
    other threads running (one of which may take a process-directed signal)."""
    import threading

    state = interrupt._state
    threads = sorted(t.name for t in threading.enumerate() if t is not threading.main_thread())
    return (
        f"SIGINT handler {signal.getsignal(signal.SIGINT)!r}, blocked "
        f"{sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, []))}, stopping "
        f"{state.stopping}, deferring {state.deferring}, pending {state.pending}, "
        f"threads {threads}"
    )


@pytest.fixture
def earlier_report(small_table, tmp_path, monkeypatch):
    """A finished report ``x`` (notebooks replaced by a fast stand-in) and its files."""
    monkeypatch.setattr(
        runner, "execute", lambda name, output, parameters, **k: output.write_text("old") or output
    )
    monkeypatch.setattr(runner, "export_html", lambda nb, dest: dest.write_text("old"))
    folder = runner.run_report(
        "x",
        notebooks=("pareto",),
        parameters={"data_path": str(small_table)},
        reports_root=tmp_path / "r",
        progress=False,
        notify=[].append,
    )
    version = folder.resolve()
    files = {p.relative_to(version): p.read_bytes() for p in version.rglob("*") if p.is_file()}
    return version, files


@pytest.mark.parametrize(
    ("signum", "status"),
    [(signal.SIGINT, EXIT_INTERRUPTED), (signal.SIGTERM, EXIT_TERMINATED)],
    ids=["SIGINT", "SIGTERM"],
)
def test_a_signal_during_the_notebooks(small_table, tmp_path, earlier_report, signum, status):
    version, files = earlier_report
    root = tmp_path / "r"
    command = [sys.executable, "-m", "audit", "report", str(small_table)]
    command += ["--name", "x", "--reports-dir", str(root), "--no-progress"]
    # the most replicates: a run long enough to be stopped
    command += ["-p", "n_replicates", "100000", "-p", "verdict_replicates", "500"]
    # started as from a terminal, with Ctrl-C's default action, whatever started the tests
    # (a script's background job starts with SIGINT ignored, and audit keeps it ignored)
    process = subprocess.Popen(
        command,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    kernels: dict[int, str] = {}
    side_by_side = min(2, os.cpu_count() or 1)  # ffmc and pareto, each with its kernel
    deadline = time.monotonic() + 120
    # the kernels have started, and the FFMC kernel's drawing process
    while (
        len(kernels) < side_by_side
        or not list(root.glob(".x.partial-*/*.ipynb"))
        or not workers(process.pid)
    ):
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline, "the kernels did not start"
        kernels = kernels_below(process.pid)
        time.sleep(0.1)
    time.sleep(1.0)  # the notebooks are running cells
    below = descendants(process.pid)
    process.send_signal(signum)
    _, err = finished(process, timeout=60)
    assert process.returncode == status
    started = ["ffmc_audit.ipynb", "pareto_downselect.ipynb"][:side_by_side]
    *stages, last = err.splitlines()  # the notebooks start in either order
    assert sorted(stages) == [f"audit: {runner.RUNNING.format(notebook=n)}" for n in started]
    stopped = interrupt.Interrupted(signum)
    stopped.kept = root / ".x.failed"
    assert last == f"audit: {stopped.sentence}"  # where the unfinished run is kept
    assert last == "audit: " + interrupt.INTERRUPTED_KEPT.format(
        signal=interrupt.SIGNAL_NAMES[signum], kept=root / ".x.failed"
    )
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert [pid for pid in kernels if running(pid)] == []
    while any(running(pid) for pid in below):  # the drawing process ends with its kernel
        assert time.monotonic() < deadline, [below[pid] for pid in below if running(pid)]
        time.sleep(0.05)
    assert (root / "x").resolve() == version
    assert {p.relative_to(version): p.read_bytes() for p in version.rglob("*") if p.is_file()} == (
        files
    )
    assert not list(root.glob(".x.partial-*"))
    assert (root / ".x.failed" / "manifest.json").is_file()  # the unfinished run, hidden


def test_the_sentence_says_when_the_report_was_put_in_place_first(tmp_path):
    """A signal that comes while the new report is put in place waits for it, then ends
    the run naming it."""
    done = tmp_path / "x"
    with interrupt.handle_signals(), pytest.raises(interrupt.Interrupted) as stop:
        with interrupt.deferred(done):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.1)
            done.write_text("published")  # the block went on to its end
    assert done.read_text() == "published"
    assert stop.value.exit_status == EXIT_TERMINATED
    assert stop.value.sentence == interrupt.INTERRUPTED_PUBLISHED.format(
        signal="SIGTERM", path=done
    )
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handlers restored


def test_a_signal_in_the_import_machinery_is_raised_once_out_of_it():
    """A signal that comes while the main thread runs importlib's own code is raised
    again once it has left it: raised there it could leave the interpreter's import lock
    held, and the command waiting forever (a SIGTERM in the first second of a report hung
    it, in 2 runs of 24). In a module's own code, run by an import, it is raised at once."""
    from types import SimpleNamespace

    def frame(filename):
        return SimpleNamespace(f_code=SimpleNamespace(co_filename=filename), f_back=None)

    with interrupt.handle_signals(), pytest.raises(interrupt.Interrupted) as stop:
        interrupt._handler(signal.SIGTERM, frame("<frozen importlib._bootstrap>"))
        held = True  # not raised in importlib's code
        time.sleep(5)
        pytest.fail("the signal was not raised again")
    assert held and stop.value.signum == signal.SIGTERM
    with interrupt.handle_signals(), pytest.raises(interrupt.Interrupted) as stop:
        interrupt._handler(signal.SIGINT, frame("/site-packages/a_users_module.py"))
    assert stop.value.signum == signal.SIGINT  # (kept: one freed in its block is sent again)


def test_a_signal_in_a_modules_code_ends_its_import(tmp_path, monkeypatch, ctrl_c_handled):
    """Ctrl-C while a module runs its own code on import (a slow measure module) ends the
    import at once, and the import lock is free after it: another thread imports."""
    import importlib
    import threading

    (tmp_path / "signalled_on_import.py").write_text(
        "import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(5)\n"
    )
    (tmp_path / "imported_after.py").write_text("DONE = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("signalled_on_import", "imported_after"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    started = time.monotonic()
    with interrupt.handle_signals(), pytest.raises(interrupt.Interrupted) as stop:
        importlib.import_module("signalled_on_import")
        pytest.fail(f"the import ended, not interrupted: {_signals_now()}")
    assert stop.value.signum == signal.SIGINT
    assert time.monotonic() - started < 4 and "signalled_on_import" not in sys.modules
    found = []
    thread = threading.Thread(
        target=lambda: found.append(importlib.import_module("imported_after"))
    )
    thread.start()
    thread.join(timeout=30)
    assert [m.DONE for m in found] == [True]
    sys.modules.pop("imported_after", None)


def test_an_interruption_raised_where_python_ignores_it_is_raised_again(capsys, ctrl_c_handled):
    """Raised in a ``__del__`` or a weakref callback, where Python prints an exception
    and goes on, the interruption is not lost (the run then went on, deaf to the next
    signals): it is raised again, and nothing is printed."""

    class Dropped:
        def __del__(self):
            interrupt._state.stopping = True  # as the handler does when it raises
            raise interrupt.Interrupted(signal.SIGINT)

    hook = sys.unraisablehook
    with interrupt.handle_signals(), pytest.raises(interrupt.Interrupted) as stop:
        Dropped()  # collected at once: its __del__ raises, Python ignores it
        time.sleep(5)
        pytest.fail(f"the interruption was lost: {_signals_now()}")
    assert stop.value.signum == signal.SIGINT
    assert capsys.readouterr().err == ""
    assert sys.unraisablehook is hook  # given back with the handlers


class _SignalledOnLookup:
    """An object whose attribute ``x``, looked up, sends this process Ctrl-C and waits
    for it."""

    @property
    def x(self):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
        pytest.fail(f"the signal was not raised in the attribute's code: {_signals_now()}")


def test_an_interruption_dropped_by_c_code_is_raised_again(capsys, ctrl_c_handled):
    """Raised in Python code that C code called and whose error it then clears (a
    Cython module's import, registering its generator type with ``collections.abc``, is
    such code; ``PyObject_HasAttr`` stands for it here), the interruption is not lost:
    the command read on into its table, deaf to the next signals, in 1 of about 100
    Ctrl-Cs in its first second. It is raised again."""
    import ctypes

    has_attribute = ctypes.pythonapi.PyObject_HasAttr
    has_attribute.argtypes = [ctypes.py_object, ctypes.py_object]
    has_attribute.restype = ctypes.c_int
    gc.disable()  # freed as it is dropped, not by a collection that may never come
    try:
        with interrupt.handle_signals(), pytest.raises(interrupt.Interrupted) as stop:
            assert has_attribute(_SignalledOnLookup(), "x") == 0  # raised, then cleared
            dropped = True
            time.sleep(5)
            pytest.fail(f"the interruption was lost: {_signals_now()}")
    finally:
        gc.enable()
    assert dropped and stop.value.signum == signal.SIGINT
    assert capsys.readouterr().err == ""


def test_an_interruption_taken_is_not_raised_again(ctrl_c_handled):
    """An interruption the code that says it has taken (the command line's own handling)
    is not raised again when freed, though the signal handler is still in place."""
    with interrupt.handle_signals():
        try:
            interrupt._handler(signal.SIGINT, None)
        except interrupt.Interrupted as stop:
            stop.taken()
        time.sleep(10 * interrupt.RETRY)  # raised here, were it sent again
        assert interrupt.stopping()  # the handler's state: the run is being stopped


def test_an_interruption_freed_after_its_block_is_not_raised_in_the_next(ctrl_c_handled):
    """An interruption nothing took, freed once its :func:`handle_signals` block has
    ended (a test's, kept by what it caught), is not raised in a later block: a SIGTERM
    of one test stopped another, which had sent itself Ctrl-C."""
    kept = []
    with interrupt.handle_signals():
        try:
            interrupt._handler(signal.SIGTERM, None)
        except interrupt.Interrupted as stop:
            kept.append(stop)
    with interrupt.handle_signals():
        kept.clear()  # freed here, not taken
        gc.collect()
        time.sleep(10 * interrupt.RETRY)  # raised here, were it sent again


def test_a_signal_another_thread_took_reaches_the_main_thread_waiting_in_a_call(
    ctrl_c_handled,
):
    """A signal the kernel gives another thread (the main thread blocks every signal for
    an instant as it starts a thread) only marks it for the main thread: one then
    waiting in a system call waited on, deaf to it (``audit compare`` stopped as its
    kernel started, reading a named pipe no one wrote). It is sent to the main thread,
    which stops waiting and raises it."""
    import threading

    read, write = os.pipe()
    woken = []

    def wake() -> None:  # the wait's end, at worst
        woken.append(True)
        os.write(write, b"x")

    def take() -> None:  # this thread takes the signal: its handler runs in the main thread
        time.sleep(0.2)
        signal.pthread_kill(threading.get_ident(), signal.SIGINT)

    taker, unstuck = threading.Thread(target=take), threading.Timer(5, wake)
    try:
        with interrupt.handle_signals(), pytest.raises(interrupt.Interrupted) as stop:
            taker.start()
            unstuck.start()
            os.read(read, 1)
            pytest.fail(f"the signal was lost: {_signals_now()}")
        assert stop.value.signum == signal.SIGINT
        assert woken == [], "the signal waited for the main thread's call to end"
    finally:
        unstuck.cancel()
        taker.join()
        os.close(read)
        os.close(write)
    assert signal.set_wakeup_fd(-1) == -1  # the wakeup pipe given back with the handlers


def test_ctrl_c_as_a_kernel_starts_leaves_no_thread_waiting(monkeypatch, ctrl_c_handled):
    """Ctrl-C just as a kernel's thread started, before it was recorded: no one shut it
    down, and the interpreter's exit waited for it for ever (``audit compare`` said it
    was interrupted, then hung). The signal waits until the thread is recorded; the
    thread is then shut down with the others."""
    import contextlib
    import threading

    from audit.report import forkserver, kernels

    monkeypatch.setattr(forkserver, "started", contextlib.nullcontext)
    monkeypatch.setattr(forkserver, "stop", lambda: None)
    monkeypatch.setattr(kernels.Kernel, "_start", lambda self: None)  # no kernel here
    start = threading.Thread.start

    def signalled(self) -> None:  # Ctrl-C as soon as a kernel's thread runs
        start(self)
        if self.name.startswith("audit-kernel"):
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    monkeypatch.setattr(threading.Thread, "start", signalled)
    with interrupt.handle_signals(), pytest.raises(interrupt.Interrupted) as stop:
        with kernels.started_kernels(1):
            time.sleep(5)
            pytest.fail(f"the signal was lost: {_signals_now()}")
    assert stop.value.signum == signal.SIGINT
    started = [t for t in threading.enumerate() if t.name.startswith("audit-kernel")]
    for thread in started:
        thread.join(timeout=5)
    assert [t.name for t in started if t.is_alive()] == []


def test_a_run_stopped_outside_the_command_line_leaves_the_next_one_its_signals(ctrl_c_handled):
    """A report run from Python that raised stops its kernels (and says the run is
    stopping) outside any :func:`~audit.report.interrupt.handle_signals` block; the
    next command run in that process still stops at its first Ctrl-C, where it was
    deaf to it until its own report began."""
    interrupt.stop_kernels()  # as run_report does when a notebook fails (no kernels here)
    assert interrupt.stopping()
    with interrupt.handle_signals(), pytest.raises(interrupt.Interrupted) as stop:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
        pytest.fail(f"the signal was swallowed: {_signals_now()}")
    assert stop.value.signum == signal.SIGINT and not interrupt.stopping()


def test_ctrl_c_before_any_report_says_nothing_was_written(monkeypatch, capsys):
    """The command line's own handling, in process: Ctrl-C while a command that writes
    no report runs."""
    from audit import cli

    def interrupted(*args):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
        pytest.fail("the signal did not interrupt")

    monkeypatch.setattr(cli, "_list_measures", interrupted)
    # as an interactive shell starts a command, whatever started the tests
    started = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert cli.main(["measures"]) == EXIT_INTERRUPTED
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
    finally:
        signal.signal(signal.SIGINT, started)
    sentence = interrupt.INTERRUPTED_BEFORE.format(signal="Ctrl-C (SIGINT)")
    assert capsys.readouterr().err == f"audit: {sentence}\n"


def test_a_signal_once_the_report_is_in_place_says_it_is_finished(tmp_path, ctrl_c_handled):
    """A signal that comes once the report is in place, as the command says its last
    lines, says the report is finished and where: it said the report was not
    published, and the earlier one unchanged."""
    done = tmp_path / "x"
    with interrupt.handle_signals(), pytest.raises(interrupt.Interrupted) as stop:
        with interrupt.deferred(done):
            done.write_text("published")
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
        pytest.fail(f"the signal did not interrupt: {_signals_now()}")
    assert stop.value.exit_status == EXIT_INTERRUPTED
    assert stop.value.sentence == interrupt.INTERRUPTED_AFTER.format(
        signal="Ctrl-C (SIGINT)", path=done
    )


def test_ctrl_c_as_the_command_says_its_report_names_it(small_table, tmp_path, monkeypatch, capsys):
    """The command line's own handling, in process: Ctrl-C as ``audit report`` says the
    warnings of the report it has put in place."""
    from audit import cli

    def interrupted(folder):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(5)
        pytest.fail("the signal did not interrupt")

    monkeypatch.setattr(cli, "_say_warnings", interrupted)
    root = tmp_path / "r"
    argv = ["report", str(small_table), "--name", "x", "--reports-dir", str(root), "--quiet"]
    argv += ["-p", "n_replicates", "20", "-p", "verdict_replicates", "5", "-p", "n_random", "20"]
    argv += ["-p", "measures", '["garbe"]']  # the command's handling is under test: one measure
    started = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert cli.main(argv) == EXIT_INTERRUPTED
    finally:
        signal.signal(signal.SIGINT, started)
    sentence = interrupt.INTERRUPTED_AFTER.format(signal="Ctrl-C (SIGINT)", path=root / "x")
    assert capsys.readouterr().err == f"audit: {sentence}\n"
    assert (root / "x" / "index.html").is_file()


def test_a_signal_as_the_command_ends_is_ignored(
    monkeypatch, capsys, ctrl_c_handled, sigterm_restored
):
    """A second Ctrl-C just after the first was said, once :func:`~audit.cli.main` has
    given the handlers back, finds the process ending with its status: it ended it with
    a ``KeyboardInterrupt`` traceback and status -2."""
    import gc

    from audit import cli

    def freeze() -> None:  # what run() does once main() has returned
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.1)

    monkeypatch.setattr(gc, "freeze", freeze)
    monkeypatch.setattr(sys, "argv", ["audit"])  # no command: the usage, status 2
    assert cli.run() == 2
    # ignored by the system, through the interpreter's exit, which gives a handler of
    # Python's back to the default (the process then ended by the signal, silently)
    ignored = [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)]
    assert ignored == [signal.SIG_IGN, signal.SIG_IGN]
    assert "usage: audit" in capsys.readouterr().out


def test_a_file_left_open_is_not_a_warning_of_the_command(monkeypatch, capsys):
    """A file a library left open (a read a signal cut short) is not said as the
    command's warning, as Python has it: it followed the interruption's sentence."""
    import warnings

    from audit import cli

    def listing(*args):
        warnings.warn(
            "unclosed file <_io.BufferedReader name='t.csv'>", ResourceWarning, stacklevel=1
        )
        warnings.warn("a warning of the command's", UserWarning, stacklevel=1)
        return 0

    monkeypatch.setattr(cli, "_list_measures", listing)
    assert cli.main(["measures"]) == 0
    assert capsys.readouterr().err == "audit: warning: a warning of the command's\n"


def test_ctrl_c_as_the_fork_server_starts_leaves_no_server(monkeypatch, ctrl_c_handled):
    """Ctrl-C just as the report's server started, before it was recorded: no one
    stopped it. The signal waits until it is recorded; the server is then stopped."""
    import threading

    from audit.report import forkserver

    made = []
    start = forkserver._Server.__init__

    def signalled(self) -> None:
        start(self)
        made.append(self)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    monkeypatch.setattr(forkserver._Server, "__init__", signalled)
    with interrupt.handle_signals(), pytest.raises(interrupt.Interrupted) as stop:
        with forkserver.started():
            time.sleep(5)
            pytest.fail(f"the signal was lost: {_signals_now()}")
    assert stop.value.signum == signal.SIGINT and len(made) == 1
    try:
        assert made[0].process.wait(timeout=15) is not None
    finally:
        made[0].process.kill()


def test_a_background_job_keeps_ignoring_ctrl_c(monkeypatch, capsys):
    """Started with SIGINT ignored (``audit ... &`` in a shell script), audit does not
    take it back: a Ctrl-C for the foreground does not stop it."""
    from audit import cli

    seen = []

    def listing(*args):
        seen.append(signal.getsignal(signal.SIGINT))
        return 0

    monkeypatch.setattr(cli, "_list_measures", listing)
    started = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert cli.main(["measures"]) == 0
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, started)
    assert seen == [signal.SIG_IGN]


@pytest.mark.parametrize(
    ("signum", "status"),
    [(signal.SIGINT, EXIT_INTERRUPTED), (signal.SIGTERM, EXIT_TERMINATED)],
    ids=["SIGINT", "SIGTERM"],
)
def test_a_signal_as_the_command_line_is_imported_ends_it_with_its_sentence(
    annex15_file, signum, status
):
    """A signal while the command line is still imported (its first tenths of a second,
    before its handlers are in place) is said once they are, and the command ends with
    its status, having done nothing: Python's handler printed a ``KeyboardInterrupt``
    traceback (SIGTERM ended the process with status -15)."""
    code = (
        "import importlib.abc, os, signal, sys\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)  # a foreground command\n"
        "class Signal(importlib.abc.MetaPathFinder):  # sent as audit.cli is imported\n"
        "    def find_spec(self, name, path, target=None):\n"
        f"        if name == 'audit.cli': os.kill(os.getpid(), {int(signum)})\n"
        "sys.meta_path.insert(0, Signal())\n"
        "from audit.console import run\n"
        "sys.exit(run())\n"
    )
    command = subprocess.Popen(
        [sys.executable, "-c", code, "check", str(annex15_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = finished(command, timeout=60)
    sentence = interrupt.INTERRUPTED_BEFORE.format(signal=interrupt.SIGNAL_NAMES[signum])
    assert (command.returncode, out, err) == (status, "", f"audit: {sentence}\n")
    # the module the shell starts holds the signals before it imports anything more
    assert imported_by("import audit.console", ["audit.cli", "numpy", "pandas"]) == []


def test_a_signal_just_before_the_handlers_are_in_place_is_said(
    monkeypatch, capsys, ctrl_c_handled, sigterm_restored
):
    """A signal between the command's start (:func:`audit.cli.run`) and its handlers
    (:func:`~audit.report.interrupt.handle_signals`, in :func:`~audit.cli.main`) ends
    the command before it does anything: it was dropped, and the command ran on."""
    import contextlib

    from audit import cli

    handle_signals, ran = interrupt.handle_signals, []

    @contextlib.contextmanager
    def late():
        os.kill(os.getpid(), signal.SIGTERM)
        with handle_signals():
            yield

    monkeypatch.setattr(interrupt, "handle_signals", late)
    monkeypatch.setattr(cli, "_list_measures", lambda *args: ran.append(args) or 0)
    monkeypatch.setattr(sys, "argv", ["audit", "measures"])
    monkeypatch.setattr(gc, "freeze", lambda: None)  # what run() does last, not to the tests
    assert cli.run() == EXIT_TERMINATED
    assert ran == []
    sentence = interrupt.INTERRUPTED_BEFORE.format(signal="SIGTERM")
    assert capsys.readouterr().err == f"audit: {sentence}\n"


def test_a_signal_as_the_signals_are_taken_is_held_until_they_are(monkeypatch, ctrl_c_handled):
    """A signal that comes while :func:`~audit.report.interrupt.handle_signals` sets up
    (as it starts the thread that forwards signals, when glibc blocks them for an
    instant) is raised as the block begins, and the block gives everything back: it was
    raised halfway through the set-up, which left the handler in place and the block
    open, and the ending process waited forever for a thread to resend it."""
    import threading

    _signal_as_signals_are_forwarded(monkeypatch, signal.SIGINT)
    with pytest.raises(interrupt.Interrupted) as stop, interrupt.handle_signals():
        pytest.fail(f"the block ran: {_signals_now()}")
    stop.value.taken()
    assert stop.value.signum == signal.SIGINT
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert interrupt._state.block is None and interrupt._state.pending is None
    assert "audit-signals" not in [t.name for t in threading.enumerate()]


@pytest.mark.parametrize("where", ["setting up its signals", "setting up its warnings"])
def test_a_signal_as_the_command_sets_up_is_said(
    where, monkeypatch, capsys, ctrl_c_handled, sigterm_restored
):
    """The command line says a signal that comes as it sets itself up, before its own
    work, and ends with its status: it printed a traceback of ``Interrupted`` and
    ended with status 1 (and waited forever as it ended, where the signal came as the
    signals were taken)."""
    import warnings

    from audit import cli

    ran = []
    monkeypatch.setattr(cli, "_list_measures", lambda *args: ran.append(args) or 0)
    if where == "setting up its signals":
        _signal_as_signals_are_forwarded(monkeypatch, signal.SIGTERM)
    else:
        simplefilter = warnings.simplefilter

        def filtering(action, *args, **kwargs):
            simplefilter(action, *args, **kwargs)
            if action == "always":
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.2)

        monkeypatch.setattr(warnings, "simplefilter", filtering)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # (not ignored, whatever started the tests)
    assert cli.main(["measures"]) == EXIT_TERMINATED
    assert ran == []
    sentence = interrupt.INTERRUPTED_BEFORE.format(signal="SIGTERM")
    assert capsys.readouterr().err == f"audit: {sentence}\n"


def test_a_signal_python_wraps_in_another_error_is_said_as_itself(
    monkeypatch, capsys, ctrl_c_handled
):
    """A signal that comes in a hook whose errors Python wraps (a class's
    ``__set_name__``, as a module defines its classes: a ``RuntimeError`` in Python
    3.11) is said as the interruption it is: it was said as a bug of audit's
    (status 70)."""
    from audit import cli

    class Field:
        def __set_name__(self, owner, name):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
            pytest.fail("the signal did not interrupt")

    def defining(*args):
        class Measure:
            resolve = Field()

    monkeypatch.setattr(cli, "_list_measures", defining)
    assert cli.main(["measures"]) == EXIT_INTERRUPTED
    sentence = interrupt.INTERRUPTED_BEFORE.format(signal="Ctrl-C (SIGINT)")
    assert capsys.readouterr().err == f"audit: {sentence}\n"


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["check", "--no-such-option"]])
def test_the_command_ends_by_argparse_with_the_signals_ignored(
    argv, monkeypatch, capsys, ctrl_c_handled, sigterm_restored
):
    """Ended by argparse (help, version, a usage error), the command ignores the
    signals through the interpreter's exit, as when :func:`~audit.cli.main` returns: a
    Ctrl-C then ended it with status -2, its help sometimes never written to a pipe."""
    from audit import cli

    monkeypatch.setattr(sys, "argv", ["audit", *argv])
    monkeypatch.setattr(gc, "freeze", lambda: None)
    with pytest.raises(SystemExit):
        cli.run()
    assert [signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)] == [
        signal.SIG_IGN,
        signal.SIG_IGN,
    ]
