"""Figures drawn by a worker process (audit.report.drawing) are the figures the notebook
would have drawn: the same bytes, declared in order, their warnings and errors brought
back to the kernel; shown in the notebook where they were asked for; and a worker whose
kernel has died writes nothing."""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from processes import running

from audit.exceptions import ReportFailed, UsageError
from audit.report import drawing
from audit.report.background import WORKER_ENDED, WorkerTraceback
from audit.report.drawing import Drawing
from audit.report.notices import WarningRecord
from audit.report.outputs import merge_outputs, recording, save_figure
from audit.report.plots.ffmc import ffmc_panels, plot_alpha_share

BY_ALPHA = pd.DataFrame(
    {
        "alpha": [0.0, 0.5, 1.0],
        "share_q25": [0.0, 0.4, 1.0],
        "share_q75": [0.0, 0.6, 1.0],
        "share_median": [0.0, 0.5, 1.0],
        "share_mean": [0.0, 0.55, 1.0],
    }
)
# the workers forked from a server, as in a report run from the command line (a worker
# started afresh: tests/test_background.py, and the dying kernel's below)
pytestmark = pytest.mark.usefixtures("shared_server")

WARNED = "the figure function warned"
FAILED = "the figure function failed"


def _detail() -> tuple[pd.DataFrame, pd.DataFrame]:
    """FFMC.1's frames for three algorithms on a three-point alpha grid."""
    rows = []
    for k, algorithm in enumerate(["a", "b", "c"]):
        for alpha in (0.0, 0.5, 1.0):
            fmr_term, fnmr_term = 0.1 * (k + 1), 0.05 * (3 - k)
            rows.append(
                {
                    "algorithm": algorithm,
                    "alpha": alpha,
                    "fmr_term": fmr_term,
                    "fnmr_term": fnmr_term,
                    "value": alpha * fmr_term + (1 - alpha) * fnmr_term,
                    "share": alpha,
                }
            )
    detail = pd.DataFrame(rows)
    by_alpha = detail.groupby("alpha", as_index=False)["value"].agg(
        value_min="min", value_q25=lambda v: v.quantile(0.25), value_median="median"
    )
    by_alpha = by_alpha.assign(
        value_q75=detail.groupby("alpha")["value"].quantile(0.75).to_numpy(),
        value_max=detail.groupby("alpha")["value"].max().to_numpy(),
        share_q25=by_alpha["alpha"],
        share_median=by_alpha["alpha"],
        share_mean=by_alpha["alpha"],
        share_q75=by_alpha["alpha"],
    )
    return detail, by_alpha


def _warning_figure():
    warnings.warn(WARNED, UserWarning, stacklevel=1)
    return plot_alpha_share(BY_ALPHA)


def _failing_figure():
    raise RuntimeError(FAILED)


def _dying_figure():
    os._exit(3)


def _figure_once(release: str):
    """A figure built once the file ``release`` exists."""
    while not os.path.exists(release):
        time.sleep(0.01)
    return plot_alpha_share(BY_ALPHA)


def _figure_after(paths: list[str]):
    """A figure built once the files ``paths`` exist (within a minute)."""
    deadline = time.monotonic() + 60
    while not all(os.path.exists(p) for p in paths):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{paths} never written")
        time.sleep(0.01)
    return plot_alpha_share(BY_ALPHA)


def _here(folder: Path, function, *args, title=None, **kwargs) -> list[bytes]:
    """The bytes of the figure drawn and saved in this process."""
    made = function(*args, **kwargs)
    fig = getattr(made, "figure", made)
    if title is not None:
        fig.suptitle(title)
    paths = save_figure(fig, "here", folder)
    plt.close(fig)
    return [p.read_bytes() for p in paths]


def test_a_figure_drawn_apart_has_the_bytes_drawn_here(tmp_path):
    detail, by_alpha = _detail()
    figures = Drawing(tmp_path / "apart", workers=2)
    panels = figures.save(ffmc_panels, detail, by_alpha, name="panels", label="M", alpha=0.5)
    share = figures.save(plot_alpha_share, BY_ALPHA, name="share", title="T", crossing=0.5)
    figures.wait()
    for job, name, expected in [
        (panels, "panels", _here(tmp_path, ffmc_panels, detail, by_alpha, label="M", alpha=0.5)),
        (share, "share", _here(tmp_path, plot_alpha_share, BY_ALPHA, title="T", crossing=0.5)),
    ]:
        paths = job.result()
        assert [p.name for p in paths] == [f"{name}.png", f"{name}.svg"]
        assert [p.read_bytes() for p in paths] == expected
    assert sorted(p.name for p in (tmp_path / "apart" / "figures").iterdir()) == [
        "panels.png",
        "panels.svg",
        "share.png",
        "share.svg",
    ]
    assert not plt.get_fignums()


def test_wait_draws_here_the_figures_a_busy_worker_has_not_started(tmp_path):
    """The worker holds its figure until the kernel has drawn the next one, in ``wait``:
    the kernel draws beside it, to the bytes the worker would have written."""
    figures = Drawing(tmp_path / "report", workers=1)
    later = tmp_path / "report" / "figures" / "share.svg"
    held = figures.save(_figure_after, [str(later)], name="held")
    share = figures.save(plot_alpha_share, BY_ALPHA, name="share", title="T", crossing=0.5)
    figures.wait()
    assert [p.read_bytes() for p in share.result()] == _here(
        tmp_path, plot_alpha_share, BY_ALPHA, title="T", crossing=0.5
    )
    assert [p.name for p in held.result()] == ["held.png", "held.svg"]
    assert all(p.stat().st_size > 1000 for p in held.result())
    assert not plt.get_fignums()


@pytest.mark.parametrize("workers", [1, 0])
def test_a_figure_saved_earlier_is_shown_where_display_is_called(tmp_path, workers, capsys):
    figures = Drawing(tmp_path, workers=workers)
    job = figures.save(plot_alpha_share, BY_ALPHA, name="share")
    capsys.readouterr()
    figures.display(job)
    shown = capsys.readouterr().out  # outside a notebook, IPython prints what it shows
    # drawn here already: the image; else a placeholder (a Markdown), replaced in wait
    expected = "IPython.core.display.Image" if not workers else "IPython.core.display.Markdown"
    assert expected in shown
    other = Drawing(tmp_path / "other", workers=0).save(plot_alpha_share, BY_ALPHA, name="x")
    with pytest.raises(UsageError) as raised:
        figures.display(other)
    assert str(raised.value) == drawing.NOT_PENDING
    figures.wait()
    assert (tmp_path / "figures" / "share.png").is_file()


def test_a_warning_raised_while_drawing_reaches_the_warning_record(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        record = WarningRecord("nb", tmp_path)
        try:
            figures = Drawing(tmp_path, workers=1)
            figures.save(_warning_figure, name="warned")
            figures.wait()
            assert record.collect(cell=3) == [("", "The figure function warned.")]
        finally:
            record.close()
    assert (tmp_path / "figures" / "warned.png").is_file()


def test_a_failing_figure_raises_its_error_in_wait_once_the_others_are_written(tmp_path):
    figures = Drawing(tmp_path, workers=1)
    figures.save(_failing_figure, name="failed")
    figures.save(plot_alpha_share, BY_ALPHA, name="share")
    with pytest.raises(RuntimeError, match=FAILED) as raised:
        figures.wait()
    assert isinstance(raised.value.__cause__, WorkerTraceback)
    assert "_failing_figure" in str(raised.value.__cause__)
    assert (tmp_path / "figures" / "share.svg").is_file()
    assert not (tmp_path / "figures" / "failed.png").exists()
    assert figures._background._running == []


def test_a_worker_that_dies_fails_its_figure_in_plain_words(tmp_path):
    figures = Drawing(tmp_path, workers=1)
    figures.save(_dying_figure, name="dying")
    with pytest.raises(ReportFailed) as raised:
        figures.wait()
    assert str(raised.value) == WORKER_ENDED.format(status=3, job="figure 'dying'")
    assert list((tmp_path / "figures").iterdir()) == []


def test_the_worker_creates_no_folder(tmp_path):
    """The folders are the kernel's: a figure whose folder is gone is not written."""
    figures = Drawing(tmp_path / "report", workers=1)
    release = tmp_path / "release"
    figures.save(_figure_once, str(release), name="late")
    (tmp_path / "report" / "figures").rmdir()
    (tmp_path / "report").rmdir()
    release.write_text("")
    with pytest.raises(FileNotFoundError):
        figures.wait()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release"]


def test_the_workers_are_at_most_the_cores_and_by_default_one_beside_the_kernel(monkeypatch):
    monkeypatch.setattr(drawing.os, "cpu_count", lambda: 1)
    assert Drawing(workers=2).workers == 1
    assert Drawing().workers == 0  # one core: drawn in the kernel
    monkeypatch.setattr(drawing.os, "cpu_count", lambda: None)
    assert Drawing().workers == 0
    monkeypatch.setattr(drawing.os, "cpu_count", lambda: 8)
    assert Drawing(workers=3).workers == 3 and Drawing(workers=0).workers == 0
    assert Drawing().workers == drawing.WORKERS == 1
    monkeypatch.setattr(drawing.os, "cpu_count", lambda: 2)
    assert Drawing().workers == 1


def test_without_workers_each_figure_is_drawn_here_when_asked(tmp_path):
    figures = Drawing(tmp_path, workers=0, start=["audit.report.plots.ffmc"])
    figures.save(plot_alpha_share, BY_ALPHA, name="share", title="T", crossing=0.5)
    assert figures._background._running == []  # no process started
    paths = [tmp_path / "figures" / "share.png", tmp_path / "figures" / "share.svg"]
    assert [p.read_bytes() for p in paths] == _here(
        tmp_path / "here", plot_alpha_share, BY_ALPHA, title="T", crossing=0.5
    )
    with pytest.raises(RuntimeError, match=FAILED):
        figures.save(_failing_figure, name="failed")
    figures.wait()
    assert not (tmp_path / "figures" / "failed.png").exists() and not plt.get_fignums()


@pytest.mark.parametrize("workers", [2, 0])
def test_the_kernel_declares_each_figure_in_the_order_asked_and_the_workers_none(tmp_path, workers):
    with recording("nb", tmp_path):
        figures = Drawing(tmp_path, workers=workers)
        for name in ("c", "a", "b"):
            figures.save(plot_alpha_share, BY_ALPHA, name=name, role=f"role_{name}")
        figures.save(plot_alpha_share, BY_ALPHA, name="d")
        figures.wait()
    declared = merge_outputs(tmp_path)["nb"]["figures"]
    assert list(declared.items()) == [
        ("role_c", "figures/c.png"),
        ("role_a", "figures/a.png"),
        ("role_b", "figures/b.png"),
        ("d", "figures/d.png"),
    ]
    assert all((tmp_path / path).is_file() for path in declared.values())


KERNEL = textwrap.dedent(
    """
    import os, signal, sys
    sys.path[:0] = sys.argv[3].split(os.pathsep)
    from audit.report.drawing import Drawing
    from test_drawing import _figure_once

    figures = Drawing(sys.argv[1], workers=1)
    figures.save(_figure_once, sys.argv[2], name="orphan")
    print(figures._background._running[0].process.pid, flush=True)
    sys.stdin.readline()
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_worker_whose_kernel_died_writes_nothing_and_ends(tmp_path):
    release = tmp_path / "release"
    path = os.pathsep.join([str(Path(__file__).parent), *sys.path])
    command = [sys.executable, "-c", KERNEL, str(tmp_path / "report"), str(release), path]
    from audit.report import forkserver

    # its worker started afresh, as a kernel without a server starts it (the module's
    # server would fork it, and outlive the kernel)
    alone = {k: v for k, v in os.environ.items() if k != forkserver.ADDRESS}
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=alone
    ) as kernel:
        worker = int(kernel.stdout.readline())
        kernel.stdin.write("\n")
        kernel.stdin.flush()
        assert kernel.wait(timeout=60) == -signal.SIGKILL
    release.write_text("")  # the figure is built only now, its kernel dead
    deadline = time.monotonic() + 60
    while running(worker):
        assert time.monotonic() < deadline, "the worker outlived its kernel"
        time.sleep(0.05)
    assert list((tmp_path / "report" / "figures").iterdir()) == []


FIGURES = textwrap.dedent(
    f"""
    import warnings
    from audit.report.plots.ffmc import plot_alpha_share
    import pandas as pd

    BY_ALPHA = pd.DataFrame({BY_ALPHA.to_dict("list")!r})

    def warned():
        warnings.warn({WARNED!r}, UserWarning, stacklevel=1)
        return plot_alpha_share(BY_ALPHA)

    def failing():
        raise RuntimeError({FAILED!r})
    """
)


def _notebook(folder: Path, cells: list[str]) -> Path:
    import nbformat

    (folder / "figures_for_test.py").write_text(FIGURES)
    setup = (
        f"import sys; sys.path.insert(0, {str(folder)!r})\n"
        "from IPython.display import Markdown, display\n"
        "from audit.report.drawing import Drawing\n"
        "from audit.report.notices import record_warnings\n"
        "from audit.report.outputs import record_outputs\n"
        "import figures_for_test as f\n"
        f"record_outputs('t', {str(folder)!r})\n"
        f"record_warnings('t', {str(folder)!r})\n"
        f"drawing = Drawing({str(folder)!r}, workers=1, start=['audit.report.plots.ffmc'])"
    )
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source) for source in [setup, *cells]]
    )
    path = folder / "t.ipynb"
    nbformat.write(notebook, path)
    return path


def _execute(path: Path):
    import papermill

    return papermill.execute_notebook(
        str(path), str(path), kernel_name="python3", progress_bar=False, cwd=str(path.parent)
    )


@pytest.mark.slow
def test_in_a_notebook_each_figure_shows_where_asked_and_its_warning_is_recorded(tmp_path):
    path = _notebook(
        tmp_path,
        [
            "display(Markdown('before'))\n"
            "drawing.show(f.plot_alpha_share, f.BY_ALPHA, name='first')\n"
            "display(Markdown('after'))",
            "drawing.show(f.warned, name='second')",
            "drawing.wait()",
        ],
    )
    _execute(path)
    executed = json.loads(path.read_text())
    shown = [
        [next(iter(o["data"])) for o in cell["outputs"] if o["output_type"] == "display_data"]
        for cell in executed["cells"][1:]
    ]
    assert shown[0] == ["text/markdown", "image/png", "text/markdown"]
    assert shown[1][0] == "image/png"
    outputs = [o for cell in executed["cells"] for o in cell["outputs"]]
    assert not any("being drawn" in json.dumps(o) for o in outputs)
    pngs = [o["data"]["image/png"] for o in outputs if "image/png" in o.get("data", {})]
    assert [base64.b64decode(p) for p in pngs] == [
        (tmp_path / "figures" / f"{name}.png").read_bytes() for name in ("first", "second")
    ]
    record = pd.read_csv(tmp_path / "tables" / "warnings_t.csv")
    assert record["sentence"].tolist() == ["The figure function warned."]
    assert json.loads((tmp_path / "logs" / "outputs_t.json").read_text())["figures"] == {
        "first": "figures/first.png",
        "second": "figures/second.png",
    }


@pytest.mark.slow
def test_in_a_notebook_a_failing_figure_fails_the_notebook_with_its_error(tmp_path):
    from papermill.exceptions import PapermillExecutionError

    path = _notebook(tmp_path, ["drawing.show(f.failing, name='failed')", "drawing.wait()"])
    with pytest.raises(PapermillExecutionError) as failed:
        _execute(path)
    assert (failed.value.exec_count, failed.value.ename, failed.value.evalue) == (
        3,
        "RuntimeError",
        FAILED,
    )
