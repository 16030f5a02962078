"""Kernels started ahead of their notebooks (:mod:`audit.report.kernels`): the command
line starts them while it reads and checks the table; the notebooks run on them, in the
report's folder, as they would on kernels of their own; none is left behind, whether
the table is refused, a kernel fails to start, or Ctrl-C comes while the table is read."""

from __future__ import annotations

import ast
import os
import queue
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from jupyter_client.manager import KernelManager
from processes import descendants, finished, kernels_below

from audit.analysis import compare
from audit.cli import main
from audit.exceptions import EXIT_INTERRUPTED, EXIT_USAGE
from audit.report import forkserver, interrupt, kernels, runner
from audit.report.parameters import read_notebook

pytestmark = pytest.mark.slow

SMALL = ["-p", "n_replicates", "20", "-p", "verdict_replicates", "5", "-p", "n_random", "20"]
SMALL += ["-p", "measures", '["garbe"]']  # the kernels are under test, not the measures


@pytest.fixture(autouse=True)
def own_temporary_folder(tmp_path, monkeypatch):
    """The kernels' start folders in a temporary folder of this test's own: any other
    report running meanwhile (another test worker's, another user's) starts its kernels'
    folders in the system's, which the checks below would otherwise count."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))


def _start_folders() -> set[str]:
    return {n for n in os.listdir(tempfile.gettempdir()) if n.startswith("audit-kernel-start-")}


def _kernels_here() -> dict[int, str]:
    """The kernel processes this process started and still has."""
    return kernels_below(os.getpid())


@pytest.fixture
def entered(monkeypatch):
    """Each kernel started ahead that a notebook ran on: (kernel, folder it moved into,
    folder it started in)."""
    seen = []
    enter = kernels.Kernel.enter

    def spy(self, folder):
        seen.append((self, Path(folder), Path(self.folder)))
        return enter(self, folder)

    monkeypatch.setattr(kernels.Kernel, "enter", spy)
    return seen


@pytest.fixture
def forked(monkeypatch):
    """Each process the report's server forked through :func:`forkserver.launch` (a launch
    that raised, as :class:`~audit.report.forkserver.Unavailable` does before a process
    is started afresh, is not listed)."""
    seen = []
    launch = forkserver.launch

    def spy(*args, **kwargs):
        seen.append(launch(*args, **kwargs))
        return seen[-1]

    monkeypatch.setattr(forkserver, "launch", spy)
    return seen


@pytest.mark.parametrize("notebook", ["ffmc", "pareto"])
def test_every_module_preloaded_is_one_the_notebook_imports_first(notebook):
    cells = read_notebook(runner.notebook_path(notebook))["cells"]
    first = next("".join(c["source"]) for c in cells if "import " in "".join(c["source"]))
    imports = [
        ast.unparse(node)
        for node in ast.parse(first).body
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]
    check = "\n".join(
        [*imports, "import sys", f"print([m for m in {kernels.PRELOAD!r} if m not in sys.modules])"]
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # the FFMC notebook's kernel imports pyplot once it draws beside its drawing process
    # (audit.report.drawing), not in its first cell
    missing = {"ffmc": "['matplotlib.pyplot']\n", "pareto": "[]\n"}
    assert done.stdout == missing[notebook]
    assert len(imports) > 10


def test_the_notebooks_run_on_the_kernels_started_ahead(small_table, tmp_path, entered, forked):
    before = _start_folders()
    root = tmp_path / "r"
    argv = ["report", str(small_table), "--name", "x", "--reports-dir", str(root)]
    assert main([*argv, "--quiet", *SMALL]) == 0
    report = (root / "x").resolve()
    side_by_side = min(2, os.cpu_count() or 1)
    assert len(entered) == side_by_side
    # each forked from the report's server, which had imported ipykernel and the modules
    assert len(forked) == side_by_side and all(isinstance(p, forkserver.Forked) for p in forked)
    assert [p.returncode for p in forked] == [0] * side_by_side  # each ended of itself
    for kernel, folder, started_in in entered:
        # it moved into the folder that became the report, after importing what the
        # notebooks import first; the folder it started in is gone
        assert folder.name.startswith(".x.partial-")
        assert report.name == folder.name.replace(".partial-", ".report-")  # published
        assert kernel.preloaded is True
        assert not started_in.exists()
    # the notebooks wrote into their working folder: the report
    assert (report / "ffmc.ipynb").is_file() and (report / "pareto.ipynb").is_file()
    assert any(report.glob("figures/*.png")) and any(report.glob("tables/*.csv"))
    assert _kernels_here() == {} and _start_folders() == before
    assert kernels.started(2) == []


def test_a_refused_table_leaves_no_kernel(tmp_path, capsys, entered, servers, monkeypatch):
    """The refusal stops the server at once: the kernels asked of it while it imported
    give up (:class:`~audit.report.forkserver.Stopped`) rather than wait for it, and none
    starts afresh instead."""
    asked = []
    launch = forkserver.launch

    def spy(*args, **kwargs):
        try:
            asked.append(launch(*args, **kwargs))
        except BaseException as error:
            asked.append(error)
            raise
        return asked[-1]

    monkeypatch.setattr(forkserver, "launch", spy)
    afresh = []

    async def started_afresh(self, *args, **kwargs):
        afresh.append(args)

    monkeypatch.setattr(KernelManager, "_async_launch_kernel", started_afresh)
    bad = tmp_path / "bad.csv"
    bad.write_text("vm\n1\n")
    before = _start_folders()
    made = set(os.listdir(tempfile.gettempdir()))
    status = main(["report", str(bad), "--reports-dir", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert status != 0 and err.startswith(f"audit: error: {bad}: cannot tell the layout")
    assert err.count("\n") == 1
    assert entered == [] and _kernels_here() == {} and _start_folders() == before
    assert kernels.started(2) == []
    # the server was importing still (a second's work, against a table of two lines)
    assert [type(a) for a in asked] == [forkserver.Stopped] * min(2, os.cpu_count() or 1)
    assert afresh == []
    assert set(os.listdir(tempfile.gettempdir())) == made  # nor the folders of their sockets
    # (ended by SIGTERM itself where it came before the server set its handler)
    assert len(servers) == 1 and servers[0].process.returncode in (0, -signal.SIGTERM)


def _two_labs(small_table: Path, tmp_path: Path) -> list[str]:
    """The small table as two datasets, ``lab-one`` and ``lab-two``, for ``audit compare``."""
    paths = [tmp_path / "lab-one.csv", tmp_path / "lab-two.csv"]
    for path in paths:
        path.write_bytes(small_table.read_bytes())
    return [str(p) for p in paths]


def test_compare_runs_its_notebook_on_the_kernel_started_ahead(
    small_table, tmp_path, entered, forked
):
    before = _start_folders()
    root = tmp_path / "r"
    argv = ["compare", *_two_labs(small_table, tmp_path), "--name", "x", "--replicates", "20"]
    argv += ["--reports-dir", str(root), "--quiet", "--measures", "garbe"]
    argv += ["-p", "verdict_replicates", "5", "-p", "n_random", "20"]
    assert main(argv) == 0
    report = (root / "x").resolve()
    # forked from the command's server, started while the two tables were read
    assert len(forked) == 1 and isinstance(forked[0], forkserver.Forked)
    assert forked[0].returncode == 0
    [(kernel, folder, started_in)] = entered
    assert kernel.preloaded is True and not started_in.exists()
    assert report.name == folder.name.replace(".partial-", ".report-")
    assert (report / "compare.ipynb").is_file() and any(report.glob("figures/*.png"))
    assert _kernels_here() == {} and _start_folders() == before
    assert kernels.started(1) == []


def test_a_refused_dataset_of_compare_leaves_no_kernel(
    small_table, tmp_path, capsys, entered, servers
):
    bad = tmp_path / "bad.csv"
    bad.write_text("vm\n1\n")
    before = _start_folders()
    status = main(["compare", str(small_table), str(bad), "--reports-dir", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert status != 0 and err.startswith(f"audit: error: {bad}: cannot tell the layout")
    assert err.count("\n") == 1
    assert entered == [] and _kernels_here() == {} and _start_folders() == before
    assert kernels.started(1) == []
    assert len(servers) == 1 and servers[0].process.returncode in (0, -signal.SIGTERM)
    assert not (tmp_path / "r").exists()


def test_a_kernel_that_fails_to_start_gives_way_to_one_of_the_notebooks_own(
    small_table, tmp_path, monkeypatch, entered
):
    def fails(self):
        raise RuntimeError("no kernel here")

    monkeypatch.setattr(kernels.Kernel, "_start", fails)
    root = tmp_path / "r"
    argv = ["report", str(small_table), "--name", "x", "--reports-dir", str(root)]
    assert main([*argv, "--quiet", *SMALL]) == 0
    assert entered == []  # each notebook started its own kernel
    assert (root / "x" / "ffmc.ipynb").is_file() and (root / "x" / "pareto.ipynb").is_file()
    assert _kernels_here() == {}


@pytest.mark.parametrize("command", ["report", "compare"])
def test_ctrl_c_while_the_table_is_read_stops_the_kernels_started_ahead(
    command, small_table, tmp_path
):
    fifo = tmp_path / "table.csv"
    os.mkfifo(fifo)  # the table is read only once something writes it: never, here
    tables = [str(fifo)] if command == "report" else [str(small_table), str(fifo)]
    command_line = [sys.executable, "-m", "audit", command, *tables]
    command_line += ["--reports-dir", str(tmp_path / "r"), "--no-progress"]
    process = subprocess.Popen(
        command_line,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    side_by_side = min(2, os.cpu_count() or 1) if command == "report" else 1
    deadline = time.monotonic() + 60
    while len(kernels_below(process.pid)) < side_by_side:
        assert process.poll() is None, process.communicate()[1]
        assert time.monotonic() < deadline, "the kernels did not start"
        time.sleep(0.05)
    below = descendants(process.pid)
    process.send_signal(signal.SIGINT)
    _, err = finished(process, timeout=60)
    assert process.returncode == EXIT_INTERRUPTED
    sentence = interrupt.Interrupted(signal.SIGINT, began=False).sentence
    assert err == f"audit: {sentence}\n"
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").iterdir())
    left = [pid for pid in below if Path("/proc", str(pid)).exists()]
    assert left == [], below


#: Run in a kernel: every control-channel shutdown request it answers is written, by
#: type, to the file named ``{path}``.
RECORD_CONTROL = """
kernel = get_ipython().kernel
answer = kernel.control_handlers["shutdown_request"]
async def recorded(stream, ident, parent, answer=answer):
    with open({path!r}, "a") as record:
        record.write(parent["header"]["msg_type"] + "\\n")
    return await answer(stream, ident, parent)
kernel.control_handlers["shutdown_request"] = recorded
"""


def test_a_kernel_asked_to_shut_down_exits_without_a_control_request(tmp_path):
    """ipykernel answers a control channel's shutdown_request in its control thread while
    its main thread closes IOPub: on a loaded machine the kernel then prints a ZMQError
    traceback as it ends. The report's kernels are asked on the shell channel, and end
    by themselves, with status 0."""
    import asyncio

    record = tmp_path / "control"
    stderr_path = tmp_path / "stderr"
    manager = interrupt.kernel_manager_class()(kernel_name="python3")
    arguments = list(kernels.KERNEL_ARGUMENTS)

    async def life() -> int | None:
        with stderr_path.open("w") as stderr:
            await manager.start_kernel(extra_arguments=arguments, stderr=stderr)
        process = manager.provisioner.process
        client = manager.client()
        client.start_channels()
        try:
            await client.wait_for_ready(timeout=60)
            code = RECORD_CONTROL.format(path=str(record))
            reply = await client.execute_interactive(code, timeout=60)
            assert reply["content"]["status"] == "ok", reply["content"]
            await manager.request_shutdown()
            await manager.finish_shutdown(waittime=30)  # else killed: status -9
            return process.wait()
        finally:
            client.stop_channels()
            await manager.cleanup_resources()

    assert asyncio.run(life()) == 0
    assert not record.exists(), record.read_text()
    assert "Traceback" not in stderr_path.read_text()


def test_a_temporary_folder_too_long_for_a_socket_gives_way_to_tmp(tmp_path):
    """A kernel's sockets are files in a private folder; where TMPDIR's path is too long
    for one (a Unix socket's path holds 107 bytes), the folder is made in /tmp, and the
    report runs (it failed with an internal error from inside zmq)."""
    deep = tmp_path / ("t" * 90)
    deep.mkdir()
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(tempfile, "tempdir", str(deep))
        folder = interrupt.socket_folder("audit-test-", "k-10")
    try:
        assert Path(folder).parent == Path("/tmp") and oct(os.stat(folder).st_mode)[-3:] == "700"
    finally:
        os.rmdir(folder)
    # a whole report in such a folder: tests/test_report_pages.py runs its report there


class _LateSubscriber:
    """A kernel client whose IOPub subscription reaches the kernel only after the
    ``lost``-th kernel_info request: what the kernel published about the earlier ones is
    lost, as happens to a kernel forked ready in a few milliseconds."""

    def __init__(self, lost: int):
        self.lost, self.asked = lost, []
        self.shell, self.iopub = [], []

    def kernel_info(self) -> str:
        sent = f"kernel_info-{len(self.asked)}"
        self.asked.append(sent)
        self.shell.append({"parent_header": {"msg_id": sent}, "content": {"status": "ok"}})
        if len(self.asked) > self.lost:
            for state in ("busy", "idle"):
                message = {"parent_header": {"msg_id": sent}, "content": {}}
                message["content"]["execution_state"] = state
                self.iopub.append(message)
        return sent

    async def get_shell_msg(self, timeout):
        return self.shell.pop(0)

    async def get_iopub_msg(self, timeout):
        if not self.iopub:
            time.sleep(timeout)
            raise queue.Empty
        return self.iopub.pop(0)


def _asking(client) -> kernels.Kernel:
    kernel = kernels.Kernel.__new__(kernels.Kernel)  # no process: only its client is asked
    kernel._client, kernel._discarded, kernel._preloading = client, False, None
    return kernel


@pytest.mark.parametrize("lost", [0, 1, 3])
def test_a_kernel_is_asked_again_until_its_iopub_is_heard(lost):
    """The kernel is taken as ready once its IOPub said it handled a kernel_info request:
    at once when the subscription is in place, after one more request per lost one."""
    from jupyter_core.utils import run_sync

    client = _LateSubscriber(lost)
    start = time.monotonic()
    run_sync(_asking(client)._subscribed)()
    assert len(client.asked) == lost + 1
    assert time.monotonic() - start < (lost + 1) * kernels.IOPUB_WAIT + 1.0


def test_a_kernel_whose_iopub_is_never_heard_is_given_up(monkeypatch):
    from jupyter_core.utils import run_sync

    from audit.exceptions import ReportError

    monkeypatch.setattr(kernels, "START_TIMEOUT", 0.3)
    client = _LateSubscriber(lost=10**6)
    with pytest.raises(ReportError, match="did not answer within 0.3 seconds"):
        run_sync(_asking(client)._subscribed)()
    assert len(client.asked) >= 3


def test_a_scores_report_forks_its_kernel_and_a_streamed_one_starts_no_server(
    small_scores, tmp_path, servers, forked
):
    """``audit scores`` starts no kernel ahead, but its notebook's kernel is forked from a
    server that imported its modules while the scores were checked; a streamed scores
    report, which runs no notebook, starts no server."""
    import pandas as pd

    argv = ["--reports-dir", str(tmp_path / "r"), "--no-progress", "--target-fmr", "0.01"]
    argv += ["-p", "sweep_points", "3"]
    bootstrap = ["-p", "bootstrap_replicates", "5"]  # none for a streamed set: refused there
    assert main(["scores", str(small_scores), "--distance", *argv, *bootstrap]) == 0
    assert len(servers) == 1
    assert [type(p) for p in forked] == [forkserver.Forked]
    assert kernels_below(os.getpid()) == {}
    folder = tmp_path / "parts"
    folder.mkdir()
    pd.read_csv(small_scores).to_parquet(folder / "a.parquet")
    assert main(["scores", str(folder), "--distance", *argv]) == 0
    assert len(servers) == 1 and len(forked) == 1  # streamed: no server, no kernel


def _saves(tmp_path, monkeypatch, sources):
    """Run a notebook of ``sources`` (markdown where they start with ``#``) through
    :func:`runner.execute`, recording each save of the executed notebook: the cells'
    statuses, in order."""
    import nbformat
    from papermill import engines

    notebook = tmp_path / "t.ipynb"
    cells = [
        nbformat.v4.new_markdown_cell(source)
        if source.startswith("#")
        else nbformat.v4.new_code_cell(source)
        for source in sources
    ]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), notebook)
    monkeypatch.setattr(runner, "notebook_path", lambda name: notebook)
    monkeypatch.setitem(runner.NOTEBOOKS, "t", "t.ipynb")
    saves, write = [], engines.write_ipynb

    def recorded(nb, path):
        saves.append([cell.metadata.papermill["status"] for cell in nb.cells])
        write(nb, path)

    monkeypatch.setattr(engines, "write_ipynb", recorded)
    return saves, tmp_path / "out" / "t.ipynb"


def test_a_notebook_is_saved_at_its_start_its_end_and_as_each_code_cell_starts(
    tmp_path, monkeypatch
):
    """Papermill saves the whole notebook at each cell's start and end; the report's
    engine saves it at its start, its end and each code cell's start only (30 cells,
    10 of them markdown: 22 saves, not 62), each save holding every cell before done.
    While a long silent cell runs, the file holds every cell before it done, their
    outputs in, and the long one running."""
    import threading

    started = tmp_path / "slow cell started"
    sources = [f"print({i})" if i % 3 else f"# part {i}" for i in range(29)]
    sources.append(f"import pathlib, time; pathlib.Path({str(started)!r}).touch(); time.sleep(2)")
    saves, output = _saves(tmp_path, monkeypatch, sources)
    output.parent.mkdir()
    seen = []

    def watch():  # the file as it is while the slow cell runs
        deadline = time.monotonic() + 120
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        seen.append(read_notebook(output))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    runner.execute("t", output, {}, progress=False)
    watcher.join()
    assert len(saves) == 1 + 20 + 1
    assert saves[0] == ["pending"] * 30  # its start
    assert saves[-1] == ["completed"] * 30  # its end
    code = [i for i, source in enumerate(sources) if not source.startswith("#")]
    assert saves[1:-1] == [["completed"] * i + ["running"] + ["pending"] * (29 - i) for i in code]
    (during,) = seen
    assert [c["metadata"]["papermill"]["status"] for c in during["cells"]] == saves[-2]
    # a print may reach the notebook as several stream outputs (the kernel flushes its
    # stream on a timer, which a busy machine can fire between the text and its newline)
    printed = [
        "".join("".join(o["text"]) for o in c["outputs"] if o["output_type"] == "stream")
        for c in during["cells"][:-1]
        if c.get("outputs")
    ]
    assert printed == [f"{i}\n" for i in code[:-1]]


def test_a_failed_notebook_is_kept_as_far_as_it_ran(tmp_path, monkeypatch):
    """The notebook is saved at its end however it ends: one a failed cell stops is kept
    with the cells before it completed, the failed one and its error."""
    saves, output = _saves(tmp_path, monkeypatch, ["a = 1", "1 / 0", "b = 2"])
    output.parent.mkdir()
    with pytest.raises(runner.NotebookFailed):
        runner.execute("t", output, {}, progress=False)
    code = [c for c in read_notebook(output)["cells"] if c["cell_type"] == "code"]
    assert [c["metadata"]["papermill"]["status"] for c in code] == [
        "completed",
        "failed",
        "pending",
    ]
    assert code[1]["outputs"][-1]["ename"] == "ZeroDivisionError"


def test_a_kernel_that_dies_fails_its_notebook_naming_the_cell(tmp_path, monkeypatch):
    """A kernel process that ends in a cell (killed, out of memory, a user's measure
    calling os._exit) fails its notebook, naming the cell, as a failing cell does; it
    reached the user as an internal error of audit (nbclient's DeadKernelError)."""
    _, output = _saves(
        tmp_path, monkeypatch, ["# a title", "a = 1", "import os\nos._exit(7)", "b = 2"]
    )
    output.parent.mkdir()
    with pytest.raises(runner.NotebookFailed) as failed:
        runner.execute("t", output, {}, progress=False)
    assert str(failed.value) == runner.KERNEL_DIED.format(notebook="t.ipynb", cell=2, kept=output)
    code = [c for c in read_notebook(output)["cells"] if c["cell_type"] == "code"]
    # kept as far as it ran (the dying cell's own count is there if the kernel said it)
    assert code[0]["execution_count"] == 1 and code[2]["execution_count"] is None


def test_a_kernel_that_dies_before_the_first_cell_says_so(tmp_path, monkeypatch):
    """A kernel that ends as it starts (killed, out of memory) was said to have failed
    "in cell 0", a cell no notebook has."""
    import papermill
    from nbclient.exceptions import DeadKernelError

    def dies_at_once(*args, **kwargs):
        raise DeadKernelError("Kernel died")

    monkeypatch.setattr(papermill, "execute_notebook", dies_at_once)
    output = tmp_path / "r" / "t.ipynb"
    with pytest.raises(runner.NotebookFailed) as failed:
        runner.execute("ffmc", output, {}, progress=False)
    # (the notebook was not saved before its kernel died: no path said)
    assert str(failed.value) == runner.KERNEL_DIED_AT_START.format(notebook="ffmc_audit.ipynb")
    assert "cell 0" not in str(failed.value) and not output.exists()


def test_datasets_sharing_no_group_are_refused_before_compare_runs(
    small_table, tmp_path, capsys, entered
):
    """Two tables with no group in common failed the compare notebook in its seventh cell,
    naming the copies of their files; they are refused before it runs, by their labels,
    and ``-p shared_groups false`` is the way to compare them."""
    other = tmp_path / "lab-two.csv"
    text = small_table.read_text()
    other.write_text(text.replace("Asian", "East").replace("White", "West"))
    status = main(["compare", str(small_table), str(other), "--reports-dir", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert status == EXIT_USAGE
    assert err.splitlines()[-1] == (
        "audit compare: error: "
        + compare.FEW_GROUPS.format(first="small", second="lab-two", count=0, groups="")
    )
    assert entered == [] and _kernels_here() == {}
    assert not (tmp_path / "r").exists()
