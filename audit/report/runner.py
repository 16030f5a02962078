"""Run the parameterised notebooks with papermill and assemble a report folder.

A report is written into a hidden staging folder next to its destination and
put in place only when every notebook has run and been rendered, so a failed
run never leaves a half report that looks complete. ``reports/<name>`` is a
symbolic link to the hidden folder holding the current report; a new report
replaces the old in one step (:func:`os.replace` of the link), so a kill at any
moment leaves either the old report or the new one under the name, never
neither. One lock file per name (``reports/.<name>.lock``) keeps two runs from
writing the same report; hidden folders left by killed runs are recovered or
removed by the next run, which names them. Only what audit can prove it made
is removed or replaced (:mod:`audit.report.ownership`: exact names, a marker
inside each folder it makes, never through a link); anything else at the
report's place is refused before any notebook runs::

    reports/<name>/
        index.html            the front page: findings (verdicts, frontier, robustness,
                              data quality, warnings), then links, figures, tables, run
        manifest.json         input sha256, parameters, versions, date, and what each
                              notebook wrote (``outputs``: :mod:`audit.report.outputs`)
        <notebook>.ipynb      executed notebooks
        <notebook>.html       their HTML rendering, code hidden, nothing fetched
        figures/*.png|svg     every figure
        tables/*.csv          every table
        input/<file>          the bytes audited (the notebooks read this copy)
        logs/frontpage.txt    only when a section of the front page failed: its traceback
        .audit-report         the marker: this folder was made by audit

The notebooks' kernels talk to this process over IPC sockets and stop with it:
Ctrl-C or SIGTERM shuts them down and keeps the earlier report
(:mod:`audit.report.interrupt`). Progress is one bar over every cell of the
report, or with ``progress=False`` one line per stage.

A report carries a copy of its input (``input_copy="auto"``), except a
built-in dataset whose licence forbids redistribution (Annex 15; FRVT 1:1,
whose repository states no licence; :mod:`audit.sources.datasets`): then the
notebooks read the verified file where it is, and ``manifest.json`` records
its source, commit and sha256 instead (``input_copy``, ``input_source``), as
the front page says.  ``"always"`` and ``"never"`` decide otherwise.  A file
byte-identical to such a dataset counts as it.  A second input, the table an
accuracy axis comes from (``accuracy_from``), is treated alike, under
``input/accuracy/``.

A comparison of several datasets (the ``compare`` notebook, run alone) reads
every table of ``data_paths`` and each accuracy table of ``accuracy_sources``:
each is copied, or not, by the same rule, under ``input/<n>/`` (and
``input/accuracy/<n>/``), ``n`` its place in ``data_paths``, and the manifest
lists them all under ``inputs``; its front page is
:func:`audit.report.comparepage.compare_page`.
"""

from __future__ import annotations

import errno
import fcntl
import functools
import json
import logging
import math
import os
import re
import secrets
import shutil
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path
from typing import TYPE_CHECKING

from audit import config
from audit.exceptions import (
    InputError,
    NotebookFailed,
    ReportError,
    UnknownNameError,
    UsageError,
)
from audit.report import interrupt, kernels, ownership
from audit.report.kernels import KERNEL_ARGUMENTS
from audit.report.parameters import code_cells, notebook_parameters, read_notebook
from audit.report.text import one_line, show_controls
from audit.validation import check

if TYPE_CHECKING:
    from audit.sources.datasets import Dataset

# audit.report.outputs (pandas) and audit.sources (requests, pooch) are imported where
# used: a command checks its name, folder and parameters with this module before it
# starts the server its kernels are forked from, and that server's start waits on them

#: The notebooks a report can run, by short name.
NOTEBOOKS = {
    "ffmc": "ffmc_audit.ipynb",
    "pareto": "pareto_downselect.ipynb",
    "scores": "scores_audit.ipynb",
    "crossgroup": "crossgroup_audit.ipynb",
    "compare": "compare_audit.ipynb",
}
TITLES = {
    "ffmc": "FFMC audit of the fairness measures",
    "pareto": "Accuracy / fairness Pareto down-select",
    "scores": "Fairness audit from comparison scores",
    "crossgroup": "Cross-group impostor FMR",
    "compare": "The measures across datasets",
}

UNKNOWN_NOTEBOOK = "unknown notebook {name!r}; available: {names}"
MIXED_INPUTS = (
    "notebooks {notebooks} read different inputs (a rates table and scores); run them apart"
)
COMPARE_ALONE = (
    "notebook compare reads several tables (data_paths), the others {notebooks} one; run them apart"
)
UNKNOWN_PARAMETER = (
    "parameter {key!r} is not declared by notebook(s) {notebooks}; they take: {known}"
)
NOTEBOOK_FAILED = (
    "notebook {notebook} failed in cell {cell} with {ename}: {evalue}\n"
    "The executed notebook, up to the failing cell, is kept at {kept}"
)
KERNEL_DIED = (
    "notebook {notebook} failed in cell {cell}: its kernel process ended while it ran "
    "(killed, out of memory, or an exit called by the code it ran)\n"
    "The executed notebook, up to the failing cell, is kept at {kept}"
)
KERNEL_DIED_AT_START = (
    "notebook {notebook} failed before its first cell: its kernel process ended as it "
    "started (killed, or out of memory)"
)
#: Said after :data:`KERNEL_DIED_AT_START` where the notebook was saved before its kernel
#: died (it may not have been).
KEPT_NOT_RUN = "\nThe notebook, not run, is kept at {kept}"


BAD_NAME = (
    "report name {name!r} must be a plain folder name: no '/' or backslash, "
    "no leading '.' (so not '.' or '..'), no leading or trailing space, no control "
    "character (such as a line break, an escape or a direction override)"
)
EMPTY_NAME = "report name is empty"
#: The longest name a folder of the file systems audit writes on takes, in bytes, less
#: what the longest of a report's working folders adds (``.NAME.partial-HEX``: 18).
LONGEST_NAME = 255 - len(".") - len(".partial-") - 8
LONG_NAME = (
    "report name {name!r} is too long: {length} bytes, at most {longest} (audit's working "
    "folders beside the report add up to 18 to it)"
)
REPORT_BUSY = (
    "report {name!r} is being written by another audit run (lock {lock}); "
    "wait for it to finish or choose another --name"
)
CANNOT_WRITE = "cannot write {path}: {reason}"
INSIDE_A_REPORT = (
    "cannot write reports in {root}: it lies inside the report folder {report}, which the "
    "next run of that report replaces with all it holds; choose a reports folder outside it"
)
CANNOT_READ = "cannot read {path}: {reason}"
NOT_JSON = "parameter {key!r} = {value!r} cannot be written to manifest.json (NaN or infinite?)"
NOT_COPIED_LICENCE = (
    "not copied into the report: built-in dataset {name!r}, whose licence does not allow "
    "redistribution "
    "({licence}); the notebooks read the verified file where it is, and input_source "
    "records where it comes from"
)
NOT_COPIED_ASKED = (
    "not copied into the report (input_copy='never'); the notebooks read the file where it is"
)
RECOVERED = "recovered report {name!r} from {folder}, left by an interrupted run"
REMOVED = "removed {folder}, left by an interrupted or failed run"
KEPT = (
    "left {path} in place: it has the name of a leftover of report {name!r} but holds no "
    "mark of audit; remove it yourself if it is not needed"
)
KEPT_LINKED = (
    "left {path} in place: a version of report {name!r}, it is the report {links} leads to "
    "(renamed or copied as its link); remove both yourself once it is not needed"
)
NOT_REMOVED = (
    "could not remove {path}, left by an earlier run of the report ({reason}); the next "
    "run tries again"
)
KEPT_OTHERS = (
    "left {path} in place: a leftover of report {name!r}, it holds files audit did not "
    "write, or that changed since ({entries}); remove it yourself once they are safe"
)
# the one line per stage of a run without a progress bar
RUNNING = "running {notebook}"
RENDERING = "rendering {notebook} as HTML"
FRONT_PAGE = "writing the front page"
PROGRESS = "report {name}"

#: The messages of :mod:`audit.report.ownership`, here beside the runner's own.
LINK_NOT_OURS = ownership.LINK_NOT_OURS
FOLDER_NOT_OURS = ownership.FOLDER_NOT_OURS
FILE_NOT_OURS = ownership.FILE_NOT_OURS
VERSION_NOT_OURS = ownership.VERSION_NOT_OURS
CHANGED = ownership.CHANGED

#: Reasons in plain words for the errors a report folder meets most (no "[Errno n]").
_REASONS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exhausted",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EROFS: "the file system is read-only",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.ENOENT: "no such file or folder",
    errno.EISDIR: "it is a folder",
    errno.ELOOP: "it is a link",
}


#: Why a folder cannot be made where a link on its path points to nothing.
DANGLING = "{link} is a link to {target}, which does not exist"


def plain_reason(error: OSError) -> str:
    """The reason of an OS error in plain words, without the ``[Errno n]`` prefix."""
    return _REASONS.get(error.errno, error.strerror or str(error)).rstrip(".")


def check_report_name(name: str) -> str:
    """``name`` if it can name a folder directly under the reports folder; else
    :class:`~audit.exceptions.UsageError`.

    >>> check_report_name("vendor-x")
    'vendor-x'
    >>> check_report_name("../x")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    audit.exceptions.UsageError: report name '../x' must be a plain folder name: no '/' or backslash, ...
    """
    if not isinstance(name, str) or name == "":
        raise UsageError(EMPTY_NAME)
    from audit.report.text import has_control

    if (
        any(c in name for c in "/\\")
        or has_control(name)
        or name.startswith(".")
        or name != name.strip()
    ):
        raise UsageError(BAD_NAME.format(name=name))
    length = len(os.fsencode(name))
    if length > LONGEST_NAME:
        raise UsageError(LONG_NAME.format(name=name, length=length, longest=LONGEST_NAME))
    return name


def notebook_path(name: str) -> Path:
    """Source path of the notebook called ``name`` (a key of :data:`NOTEBOOKS`)."""
    if name not in NOTEBOOKS:
        raise UnknownNameError(UNKNOWN_NOTEBOOK.format(name=name, names=sorted(NOTEBOOKS)))
    return config.notebooks_dir() / NOTEBOOKS[name]


def declared_parameters(name: str) -> list[str]:
    """Names of the parameters the notebook ``name`` declares in its ``parameters`` cell
    (read with :mod:`audit.report.parameters`, without papermill)."""
    return list(notebook_parameters(notebook_path(name)))


def with_defaults(name: str, parameters: Mapping) -> dict:
    """``parameters`` with the defaults of the notebook ``name`` for those not given, read
    from its ``parameters`` cell: the one place they are declared, for what runs beside
    the notebook (the command's checks, the streamed scores report)."""
    declared = notebook_parameters(notebook_path(name))
    return {key: parameter.default for key, parameter in declared.items()} | dict(parameters)


def check_parameters(
    parameters: Mapping, declared: Mapping[str, Sequence[str]], *, also: Sequence[str] = ()
) -> None:
    """Refuse a key of ``parameters`` that no notebook of ``declared`` (the parameters of
    each, :func:`declared_parameters`) declares, nor is in ``also`` (those of a notebook
    the run may add), with :data:`UNKNOWN_PARAMETER` naming the notebooks and what they
    take.

    >>> check_parameters({"alpha": 0.5}, {"ffmc": declared_parameters("ffmc")})
    >>> check_parameters({"alpah": 0.5}, {"pareto": declared_parameters("pareto")})
    Traceback (most recent call last):
    ...
    audit.exceptions.UsageError: parameter 'alpah' is not declared by notebook(s) ['pareto']; ...
    """
    known = sorted(set().union(*declared.values()))
    for key in parameters:
        if key not in known and key not in also:
            raise UsageError(
                UNKNOWN_PARAMETER.format(key=key, notebooks=list(declared), known=known)
            )


#: The notebook page's template: nbconvert's ``lab`` page without the scripts it
#: would fetch from a CDN (require.js, MathJax, mermaid, the widget renderer). The
#: notebooks write no math, diagrams or widgets; the page loads nothing from outside.
OFFLINE_TEMPLATE = """\
{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""


def export_html(notebook: Path, destination: Path) -> Path:
    """Render an executed notebook to standalone HTML with the code cells hidden; the
    page fetches nothing (:data:`OFFLINE_TEMPLATE`)."""
    import nbformat

    node = nbformat.read(notebook, as_version=4)
    with _EXPORTING:
        body, _ = _exporter().from_notebook_node(node)
    destination.write_text(show_controls(body), encoding="utf-8")
    return destination


#: One notebook at a time through the one exporter (each sets its own filters on it).
_EXPORTING = threading.Lock()


@functools.cache
def _exporter():
    """The HTML exporter of every report page (:class:`audit.report.pages.PageExporter`),
    made once in a process: its templates compile on first use (a tenth of a second),
    not for each notebook."""
    from audit.report.pages import PageExporter

    return PageExporter(
        template_name="lab",
        raw_template=OFFLINE_TEMPLATE,
        exclude_input=True,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
    )


def _warm_exporter() -> None:
    """Import nbconvert and compile the exporter's templates (an empty notebook
    rendered), as the kernels start: not later, on cores the notebooks need."""
    import nbformat

    with _EXPORTING:
        _exporter().from_notebook_node(nbformat.v4.new_notebook())


def _kernel_path() -> None:
    """The kernel imports the same audit package as this process, wherever it lives
    (:func:`audit.report.kernels.search_path`)."""
    os.environ["PYTHONPATH"] = kernels.search_path(os.environ.get("PYTHONPATH", ""))


class _QuietWhileStopping(logging.Filter):
    """Drop the papermill log's records (e.g. "Kernel died") while a run is stopped."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not interrupt.stopping()


_QUIET = _QuietWhileStopping()


#: In the thread running a notebook (:func:`execute`), ``cell``: the number of the code
#: cell it runs, as the kernel counts it (the parameters' cell included): the cell a
#: kernel that dies was running.
_RUNNING = threading.local()


@functools.cache
def _engine() -> str:
    """The name of papermill's engine for the report's notebooks, registered once.

    It is papermill's own (nbclient), saving the executed notebook when it starts,
    when each code cell starts (every cell before it done, its outputs in) and at its
    end however it ends (an error in a cell, a kernel stopped), so that a failed or
    interrupted run keeps it as far as it ran.  Papermill's also saves it when each
    cell ends and when a markdown cell starts, each time just before the next save,
    with nothing new between them: the FFMC notebook, its figures included, was
    serialised and validated 46 times (22 cells), now 17 (15 code cells).
    """
    from papermill.engines import NBClientEngine, NotebookExecutionManager, papermill_engines

    class Manager(NotebookExecutionManager):
        skip = False

        def save(self, **kwargs):
            if not self.skip:
                super().save(**kwargs)

        def cell_start(self, cell, cell_index=None, **kwargs):
            self.skip = cell.get("cell_type") != "code"
            if not self.skip and str(cell.get("source", "")).strip():  # the kernel counts it
                _RUNNING.cell = getattr(_RUNNING, "cell", 0) + 1
            try:
                super().cell_start(cell, cell_index, **kwargs)
            finally:
                self.skip = False

        def cell_complete(self, cell, cell_index=None, **kwargs):
            self.skip = True  # saved by the next cell's start, or the notebook's end
            try:
                super().cell_complete(cell, cell_index, **kwargs)
            finally:
                self.skip = False

    class Engine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, **kwargs):
            nb_man.__class__ = Manager  # papermill's manager, saving as said above
            return super().execute_managed_notebook(nb_man, kernel_name, **kwargs)

    papermill_engines.register("audit", Engine)
    return "audit"


def execute(
    name: str, output: Path, parameters: Mapping, *, progress: bool | Callable[[], None] = True
) -> Path:
    """Execute one notebook with papermill into ``output``; raise :class:`NotebookFailed`.

    ``progress``: ``True`` shows papermill's bar for this notebook, ``False`` nothing;
    a function is called after each executed cell instead (one display for a report).
    """
    import papermill
    from nbclient.exceptions import DeadKernelError
    from papermill.exceptions import PapermillExecutionError

    _kernel_path()
    engine = _engine()
    logger = logging.getLogger("papermill")
    if _QUIET not in logger.filters:
        logger.addFilter(_QUIET)
    hooks = {"on_cell_executed": lambda **_: progress()} if callable(progress) else {}
    kernel = kernels.take()  # started ahead for this thread, if any
    if kernel is not None:
        hooks["km"] = kernel.manager
    _RUNNING.cell = 0
    try:
        if kernel is not None:
            kernel.enter(output.parent)
        papermill.execute_notebook(
            str(notebook_path(name)),
            str(output),
            parameters=dict(parameters),
            progress_bar=progress is True,
            kernel_name="python3",
            engine_name=engine,
            # the kernel starts in the report folder; papermill's cwd= would chdir the
            # whole process, which the notebooks running side by side in threads share
            resources={"metadata": {"path": str(output.parent)}},
            kernel_manager_class=interrupt.kernel_manager_class(),
            extra_arguments=list(KERNEL_ARGUMENTS),
            **hooks,
        )
    except PapermillExecutionError as error:
        failed = NotebookFailed(
            NOTEBOOK_FAILED.format(
                notebook=NOTEBOOKS[name],
                cell=error.exec_count,
                ename=error.ename,
                evalue=one_line(error.evalue),
                kept=one_line(output),
            )
        )
        failed.ename, failed.evalue = error.ename, error.evalue  # what the kernel raised
        raise failed from None
    except DeadKernelError:
        raise _kernel_died(name, _RUNNING.cell, output) from None
    finally:
        if kernel is not None:
            kernel.release()  # it ends while the notebook is rendered
    return output


def _kernel_died(name: str, cell: int, output: Path) -> NotebookFailed:
    """The failure of notebook ``name`` whose kernel died in its ``cell``-th code cell
    (0: before the first one ran)."""
    if cell:
        kept = one_line(output)
        return NotebookFailed(KERNEL_DIED.format(notebook=NOTEBOOKS[name], cell=cell, kept=kept))
    kept = KEPT_NOT_RUN.format(kept=one_line(output)) if output.is_file() else ""
    return NotebookFailed(KERNEL_DIED_AT_START.format(notebook=NOTEBOOKS[name]) + kept)


def as_given(text: str, given: Mapping[str, str]) -> str:
    """``text`` naming each input as the user gave it (``given``: the report's copy to
    it) wherever it names the copy a notebook read: first, as a message names its file,
    and again, "(input/x.csv, line 5)", "(none in input/accuracy/acc.csv)"; never as a
    part of a longer path.

    >>> as_given("input/x.csv, line 3 (input/x.csv, line 5); input/x.csv.gz",
    ...          {"input/x.csv": "/home/u/x.csv"})
    '/home/u/x.csv, line 3 (/home/u/x.csv, line 5); input/x.csv.gz'
    """
    for copy, path in given.items():
        text = re.sub(rf"(?<![\w/.-]){re.escape(copy)}(?![\w/.-])", lambda _, p=path: p, text)
    return text


def given_inputs(header: Mapping) -> dict[str, str]:
    """The report's copy of each input to the file the user gave, from its manifest
    (``header``): the table's, the accuracy table's, each dataset's compared."""
    pairs = [(header.get("input_copy"), header.get("input_file"))]
    for entry in [header.get("accuracy_input"), *(header.get("inputs") or [])]:
        if isinstance(entry, Mapping):
            pairs.append((entry.get("copy"), entry.get("file")))
    return {
        copy: str(path)
        for copy, path in pairs
        if isinstance(copy, str) and path is not None and copy.startswith("input/")
    }


def _refused_input(failed: NotebookFailed, given: dict[str, str]):
    """The input error a notebook raised reading its input (a missing score in a row of
    the scores, say) as the command line's refusal of bad input: of its kind, naming
    the file as the user gave it (``given``: the report's copy to it) rather than the
    copy; None for any other failure, which stays the notebook's."""
    from audit import exceptions

    kind = getattr(exceptions, getattr(failed, "ename", ""), None)
    if not (isinstance(kind, type) and issubclass(kind, exceptions.InputError)):
        return None
    said = as_given(str(failed.evalue), given)
    kept = str(failed).rsplit("\n", 1)[-1]  # where the executed notebook is kept
    refused = kind(f"{one_line(said)}\n{kept}")
    refused.own_lines = True  # (the file's name, and the rest of the message, on one line)
    return refused


def _mkdir(path: Path) -> Path:
    """Create ``path`` (and parents) with the mode the umask allows; plain error on failure."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        reason = plain_reason(error)
        if error.errno == errno.EEXIST:  # "File exists": a link to nothing on the way
            dangling = [p for p in (*reversed(path.parents), path) if p.is_symlink()]
            dangling = [p for p in dangling if not p.exists()]
            if dangling:
                reason = DANGLING.format(link=dangling[0], target=os.readlink(dangling[0]))
        raise ReportError(CANNOT_WRITE.format(path=path, reason=reason)) from None
    if not path.is_dir():
        raise ReportError(CANNOT_WRITE.format(path=path, reason=_REASONS[errno.ENOTDIR]))
    return path


def _outside_reports(root: Path) -> None:
    """Refuse a reports folder inside a report audit made (a folder holding its marker,
    reached through the link of the report's name or not): the next run of that report
    would delete what was written there."""
    for folder in (root.resolve(), *root.resolve().parents):
        try:
            marked = (folder / ownership.MARKER).is_file()
        except OSError:  # a folder that cannot be entered: writing there is refused, named
            continue
        if marked:
            raise ReportError(INSIDE_A_REPORT.format(root=root, report=folder))


def check_reports_root(root: str | os.PathLike | None) -> Path:
    """The reports folder, created if needed and writable, as an absolute path (the
    kernels work in other folders: a relative one would name another place there);
    else :class:`ReportError`."""
    root = Path(root).absolute() if root is not None else config.reports_dir()
    _outside_reports(root)
    root = _mkdir(root)
    if not os.access(root, os.W_OK | os.X_OK):
        raise ReportError(CANNOT_WRITE.format(path=root, reason=_REASONS[errno.EACCES]))
    return root


def check_report_path(root: str | os.PathLike | None, name: str) -> Path:
    """``root/name`` if a report may be published there: nothing stands there, or a
    report audit wrote; else :class:`ReportError` naming what stands there and what to
    do (:func:`audit.report.ownership.check_place`). Creates nothing: call it before any
    long work (the run checks again, under its lock)."""
    root = Path(root) if root is not None else config.reports_dir()
    _outside_reports(root)
    if root.is_dir():
        ownership.check_place(root, check_report_name(name), NOTEBOOKS)
    return root / name


class _Lock:
    """An exclusive ``fcntl`` lock on ``reports/.<name>.lock``, refused when held elsewhere.

    The kernel releases it when its process ends, however it ends. The lock file is
    opened without following a link, so a link there cannot make audit create a file
    elsewhere.
    """

    def __init__(self, root: Path, name: str):
        self.name, self.path = name, root / f".{name}.lock"

    def __enter__(self):
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        try:
            self.fd = os.open(self.path, flags, 0o666)
        except OSError as error:
            raise ReportError(
                CANNOT_WRITE.format(path=self.path, reason=plain_reason(error))
            ) from None
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self.fd)
            raise ReportError(REPORT_BUSY.format(name=self.name, lock=self.path)) from None
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def _new_staging(root: Path, name: str) -> tuple[Path, str]:
    """A new hidden staging folder ``.<name>.partial-<hex>``, marked as audit's (its
    mode follows the umask); return it and its marker's token."""
    while True:
        path = root / f".{name}.partial-{secrets.token_hex(4)}"
        try:
            path.mkdir()
            break
        except FileExistsError:
            continue
        except OSError as error:
            raise ReportError(CANNOT_WRITE.format(path=path, reason=plain_reason(error))) from None
    try:
        return path, ownership.write_marker(path, name)
    except OSError as error:
        os.rmdir(path)
        raise ReportError(CANNOT_WRITE.format(path=path, reason=plain_reason(error))) from None


def _tidy(root: Path, name: str, notify: Callable[[str], None]) -> None:
    """Recover or remove what killed or failed runs of report ``name`` left (lock held).

    Only the hidden names of ``name`` itself are looked at (never those of a report
    whose name merely starts the same), and only what audit made is touched
    (:mod:`audit.report.ownership`). ``reports/<name>`` missing, or a link of audit's
    to a missing version, while a finished version exists: the newest finished version
    is linked back. Every other folder of the name (staging, failed, unlinked versions)
    and every temporary link is removed; one without audit's mark is left and named.
    """
    final = root / name
    current = ownership.link_target(final, name) if final.is_symlink() else None
    lost = not os.path.lexists(final) or (current is not None and not final.exists())
    leftovers = [
        p
        for p in ownership.entries_of(root, name)
        if ownership.owner_of(p.name)[1] != "lock" and p.name != current
    ]
    if lost:
        finished = [
            p
            for p in leftovers
            if ownership.owner_of(p.name)[1].startswith("report-")
            and ownership.find_version(p, name, NOTEBOOKS) is not None
            and (p / "index.html").is_file()
            and not ownership.links_to(p, name)  # the user's, under another name
        ]
        if finished:
            newest = max(finished, key=lambda p: (p / "index.html").stat().st_mtime_ns)
            _link(newest, final)
            notify(RECOVERED.format(name=name, folder=newest))
            leftovers.remove(newest)
    for path in leftovers:
        if ownership.owner_of(path.name)[1].startswith("link-"):
            removed = ownership.remove_link(path, name)
            notify((REMOVED if removed else KEPT).format(folder=path, path=path, name=name))
            continue
        kept = ownership.remove_folder(path, name, None, NOTEBOOKS)
        if kept is None:
            notify(REMOVED.format(folder=path))
        elif kept.links:
            shown = ", ".join(str(link) for link in kept.links)
            notify(KEPT_LINKED.format(path=path, name=name, links=shown))
        elif kept.others:
            entries = ownership.listed(list(kept.others))
            notify(KEPT_OTHERS.format(path=path, name=name, entries=entries))
        elif kept.error:
            notify(NOT_REMOVED.format(path=path, reason=kept.error))
        else:
            notify(KEPT.format(path=path, name=name))


def _link(version: Path, final: Path) -> None:
    """Point ``final`` at ``version`` in one step: a new link renamed over the old one."""
    link = version.parent / f".{final.name}.link-{secrets.token_hex(4)}"
    os.symlink(version.name, link)  # relative: the reports folder can be moved whole
    os.replace(link, final)


def _publish(staging: Path, token: str, final: Path, previous: ownership.Version | None) -> Path:
    """Make the finished ``staging`` folder the report under ``final``; return its version.

    ``previous`` is what :func:`audit.report.ownership.check_place` found at ``final``
    before the run; it is looked at again here, and a change refuses the publication.
    The old report stays under the name until the single :func:`os.replace` of the
    link; its folder is removed afterwards (or by the next run if killed), and only
    while it still holds the marker it held before the run.
    """
    name = final.name
    try:
        now = ownership.check_place(final.parent, name, NOTEBOOKS)
    except ReportError as refused:
        if previous is None or ownership.marker_token(previous.path, name) != previous.token:
            raise ReportError(CHANGED.format(path=final, kept=staging)) from None
        # the same report, holding files the user put in it during the run
        raise ReportError(f"{refused}; the new report is kept in {staging}") from None
    if now != previous:
        raise ReportError(CHANGED.format(path=final, kept=staging))
    if ownership.marker_token(staging, name) != token:
        raise ReportError(CHANGED.format(path=staging, kept=staging))
    ownership.write_inventory(staging, token)
    version = staging.with_name(f".{name}.report-{staging.name.rpartition('-')[2]}")
    if os.path.lexists(version):  # os.replace would take an empty folder's place
        raise ReportError(CHANGED.format(path=version, kept=staging))
    os.replace(staging, version)
    _link(version, final)
    if previous is not None and previous.path != version:
        # (one the system will not let go of is tried again, and said, by the next run)
        ownership.remove_folder(previous.path, name, previous.token, NOTEBOOKS)
    return version


def _copy_input(source: str, staging: Path, folder: str = "input") -> Path:
    """Copy the input into ``staging/<folder>/``: the notebooks read and the manifest hashes it."""
    folder = _mkdir(staging / folder)
    copy = folder / Path(source).name
    try:
        shutil.copyfile(source, copy)
    except OSError as error:
        bad = Path(error.filename) if error.filename else Path(source)
        template = CANNOT_WRITE if bad == copy else CANNOT_READ
        raise ReportError(template.format(path=bad, reason=plain_reason(error))) from None
    return copy


def _copies(path: str, input_copy: str) -> tuple[bool, Dataset | None, str]:
    """Whether a report copies the input ``path``, the built-in dataset it is, and what the
    manifest says of the copy (``input_copy``)."""
    from audit.sources import datasets

    dataset = datasets.identify(path)
    if input_copy == "never":
        return False, dataset, NOT_COPIED_ASKED
    if input_copy == "auto" and dataset is not None and not dataset.redistributable:
        return False, dataset, NOT_COPIED_LICENCE.format(name=dataset.name, licence=dataset.licence)
    return True, dataset, ""


def _compared_inputs(parameters: dict, input_copy: str) -> list[dict]:
    """The tables a comparison reads (``data_paths``, and ``accuracy_sources`` by label),
    each resolved to a local file; ``parameters`` get their absolute paths and the
    datasets' labels (:func:`audit.analysis.compare.dataset_labels`)."""
    from audit.analysis.compare import check_accuracy_keys, dataset_labels
    from audit.sources import datasets

    given = parameters.get("data_paths")
    if given is None:
        given = notebook_parameters(notebook_path("compare"))["data_paths"].default
    given = check("data_paths", given)
    labels = dataset_labels(given, parameters.get("data_labels"))
    sources = dict(parameters.get("accuracy_sources") or {})
    check_accuracy_keys(labels, sources, parameters.get("accuracy_columns"))
    inputs = []
    paths = []
    for index, (label, text) in enumerate(zip(labels, given, strict=True), start=1):
        path = str(datasets.resolve(text, kind="rates").path.resolve())
        paths.append(path)
        inputs.append({"label": label, "role": "rates", "index": index, "path": path})
        if label in sources:
            source = str(datasets.resolve(sources[label], kind="accuracy").path.resolve())
            sources[label] = source
            inputs.append({"label": label, "role": "accuracy", "index": index, "path": source})
    parameters["data_paths"], parameters["data_labels"] = paths, labels
    if sources:
        parameters["accuracy_sources"] = sources
    for item in inputs:
        item["copy"], item["dataset"], item["said"] = _copies(item["path"], input_copy)
    return inputs


def _compared_header(
    inputs: list[dict], staging: Path, parameters: dict, run_parameters: dict
) -> dict:
    """The run header of a comparison: every input (file, sha256, bytes, copy, source),
    each copied under ``input/<n>/`` (``input/accuracy/<n>/``) unless its licence or
    ``input_copy`` forbids; ``run_parameters`` then name the copies."""
    from audit.report import outputs

    header = outputs.run_header(inputs[0]["path"], parameters)
    for key in ("input_file", "input_sha256", "input_bytes"):
        header.pop(key)
    header["inputs"] = []
    paths = list(run_parameters["data_paths"])
    sources = dict(run_parameters.get("accuracy_sources") or {})
    for item in inputs:
        folder = (
            f"input/{item['index']}"
            if item["role"] == "rates"
            else (f"input/accuracy/{item['index']}")
        )
        kept = _copy_input(item["path"], staging, folder) if item["copy"] else None
        read = outputs.run_header(kept if kept is not None else item["path"], {})
        if kept is not None:
            relative = str(kept.relative_to(staging))
            if item["role"] == "rates":
                paths[item["index"] - 1] = relative
            else:
                sources[item["label"]] = relative
        header["inputs"].append(
            {
                "label": item["label"],
                "role": item["role"],
                "file": item["path"],
                "sha256": read["input_sha256"],
                "bytes": read["input_bytes"],
                "copy": str(kept.relative_to(staging)) if kept is not None else item["said"],
                "source": item["dataset"].source() if item["dataset"] is not None else None,
            }
        )
    run_parameters["data_paths"] = paths
    if sources:
        run_parameters["accuracy_sources"] = sources
    return header


def _manifest(header: dict) -> str:
    """The manifest's text; an infinite parameter (``count_tolerance=inf``: no check
    against counts) written as ``"inf"`` (JSON has no infinity; ``-p NAME inf`` gives it
    again), any other value JSON cannot hold refused."""
    header = {**header, "parameters": dict(header["parameters"])}
    for key, value in header["parameters"].items():
        if isinstance(value, float) and math.isinf(value):
            header["parameters"][key] = value = str(value)
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            raise UsageError(NOT_JSON.format(key=key, value=value)) from None
    return json.dumps(header, indent=2, allow_nan=False) + "\n"


def _stderr(message: str) -> None:
    print(f"audit: {message}", file=sys.stderr)


class _Progress:
    """One display for a whole report: a bar over every cell of its notebooks, which
    says what each notebook is doing, or, without a bar, one line per stage through
    ``notify``."""

    def __init__(self, name: str, total: int, bar: bool, notify: Callable[[str], None]):
        self.notify, self.lock, self.bar, self.doing = notify, threading.Lock(), None, {}
        if bar:
            from audit.config import progress_bar

            self.bar = progress_bar(total=total, unit="cell", desc=PROGRESS.format(name=name))

    def stage(self, text: str, notebook: str | None = None) -> None:
        """``text`` is what the run (or ``notebook``, a short name) does now."""
        if self.bar is None:
            with self.lock:  # one line at a time: print writes a line and its end apart
                self.notify(text)
            return
        with self.lock:
            if notebook is None:
                self.doing = {}
                self.bar.set_postfix_str(text)
            else:
                self.doing[notebook] = text.split(" ", 1)[0]  # the verb: running, rendering
                self._show_doing()

    def done(self, notebook: str) -> None:
        """``notebook`` is finished: the bar no longer names it (no line is written)."""
        if self.bar is None:
            return
        with self.lock:
            self.doing.pop(notebook, None)
            self._show_doing()

    def _show_doing(self) -> None:  # under the lock
        self.bar.set_postfix_str(", ".join(f"{n} {v}" for n, v in self.doing.items()))

    def cell(self) -> None:
        with self.lock:
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _run_all(
    run: Callable[[str], None],
    notebooks: Sequence[str],
    meanwhile: Callable[[], object] | None = None,
) -> None:
    """``run`` each notebook in worker threads, side by side when there are several and
    cores to spare; the main thread calls ``meanwhile()`` (if given) while the kernels
    start, then only waits, so Ctrl-C or SIGTERM reach it at once.

    Each notebook has its own kernel (the first ones, a kernel the command line
    started ahead, if any: :mod:`audit.report.kernels`) and writes its own files; a
    thread that ends a notebook takes the next one left; the first failure
    (in notebook order) is raised once every notebook has stopped. An interruption
    stops every kernel (:func:`audit.report.interrupt.stop_kernels`), waits for the
    workers to end and goes on up.
    """
    workers = min(len(notebooks), os.cpu_count() or 1)
    _kernel_path()  # set once, before the threads read it
    if workers <= 1:
        tasks = [lambda: [run(notebook) for notebook in notebooks]]
    else:
        tasks = [lambda notebook=notebook: run(notebook) for notebook in notebooks]
    pending, failures, lock = list(enumerate(tasks)), {}, threading.Lock()

    def lane() -> None:  # the next notebook, until none is left
        while True:
            with lock:
                if not pending:
                    return
                index, task = pending.pop(0)
            try:
                task()
            except BaseException as error:
                failures[index] = error

    # kernels started ahead (by the command line, while it read the table) run the
    # first notebooks, each in its own thread; the next notebooks start their own
    pool, futures = None, []
    try:
        with interrupt.deferred():  # every thread started is recorded, to be waited for
            ahead = kernels.started(workers)
            pool = ThreadPoolExecutor(max_workers=max(workers - len(ahead), 1))
            futures += [kernel.run(lane) for kernel in ahead]
            futures += [pool.submit(_in_thread, lane) for _ in range(workers - len(ahead))]
        if meanwhile is not None:
            meanwhile()
        wait(futures)
    except BaseException:
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        interrupt.stop_kernels()
        wait(futures)
        raise
    pool.shutdown()
    for index in sorted(failures):
        raise failures[index]


def _in_thread(task: Callable[[], object]) -> None:
    """``task()``, then close the event loop the kernel client made for this thread."""
    try:
        task()
    finally:
        kernels.close_loop()


def write_report(
    name: str,
    write: Callable[[Path], None],
    *,
    reports_root: str | os.PathLike | None = None,
    notify: Callable[[str], None] = _stderr,
) -> Path:
    """Publish a report that ``write(folder)`` fills without notebooks (e.g. streamed tables).

    The same guarantees as :func:`run_report` (:func:`_build`). A caller with long work
    before this call checks the report's place first (:func:`check_report_path`).
    """
    from audit.report import outputs

    check_report_name(name)

    def fill(folder: Path) -> None:
        write(folder)
        outputs.merge_outputs(folder)
        _write_index(folder, name)

    return _build(check_reports_root(reports_root), name, notify, fill)


def _page_maker(notebooks: Sequence[str]) -> None:
    """Import the module that writes the front page of ``notebooks`` (:func:`_write_index`)
    and make the exporter of their pages (:func:`_warm_exporter`)."""
    if "compare" in notebooks:
        import audit.report.comparepage  # noqa: F401
    else:
        import audit.report.frontpage  # noqa: F401
    _warm_exporter()


def _write_index(
    folder: Path, name: str, header: dict | None = None, notebooks: Sequence[str] = ()
) -> Path:
    """The report's front page, from the tables in ``folder`` (:mod:`audit.report.frontpage`;
    a comparison's, :mod:`audit.report.comparepage`)."""
    if "compare" in notebooks:
        from audit.report.comparepage import compare_page as make
    else:
        from audit.report.frontpage import front_page as make
    page = make(
        folder,
        title=f"audit report: {name}",
        header=header,
        notebooks=[(n, TITLES.get(n, n)) for n in notebooks],
    )
    path = folder / "index.html"
    path.write_text(show_controls(page), encoding="utf-8")
    return path


def _build(
    root: Path, name: str, notify: Callable[[str], None], fill: Callable[[Path], None]
) -> Path:
    """``fill`` a hidden staging folder and publish it as ``root/name`` in one step.

    One run per name at a time; what stands at ``root/name`` is checked before any
    work (:func:`audit.report.ownership.check_place`); leftovers of killed runs
    tidied first; on any failure the staging folder is kept as the hidden
    ``.NAME.failed`` (never looks complete) and an earlier report of the name stays
    whole.
    """
    final = root / name
    with _Lock(root, name):
        ownership.check_place(root, name, NOTEBOOKS)
        _tidy(root, name, notify)
        previous = ownership.check_place(root, name, NOTEBOOKS)
        staging, token = _new_staging(root, name)
        interrupt.begin_run()
        try:
            fill(staging)
            with interrupt.deferred(final):
                _publish(staging, token, final, previous)
            return final
        except BaseException as error:
            if not staging.exists():  # published: only the old report's removal can fail here
                raise
            kept = _keep_failed(staging, token, name)
            if isinstance(error, interrupt.Interrupted):
                error.kept = kept
            if isinstance(error, NotebookFailed | ReportError | InputError):
                said = str(error).replace(str(staging), str(kept))
                if one_line(staging) != str(staging):  # named on one line of the message
                    said = said.replace(one_line(staging), one_line(kept))
                if said != str(error):
                    renamed = type(error)(said)
                    renamed.own_lines = error.own_lines
                    raise renamed from None
            if isinstance(error, OSError) and not isinstance(error, ReportError):
                path = error.filename or staging
                raise ReportError(
                    CANNOT_WRITE.format(path=path, reason=plain_reason(error))
                ) from None
            raise


def _keep_failed(staging: Path, token: str, name: str) -> Path:
    """Keep the staging folder of a failed run as the hidden ``.NAME.failed`` (the last
    one only, for inspection); left under its own name when ``.NAME.failed`` is taken by
    something audit did not make, or the staging folder is no longer this run's."""
    failed = staging.with_name(f".{name}.failed")
    if ownership.marker_token(staging, name) != token:
        return staging
    if os.path.lexists(failed):  # what the run's tidying left there is not audit's
        return staging
    os.replace(staging, failed)
    try:  # what it holds as the run left it: a later run keeps what the user changes there
        ownership.write_inventory(failed, token)
    except OSError:
        pass  # (then judged by its top level, as a staging folder is)
    return failed


def run_report(
    name: str = "annex15",
    *,
    notebooks: Sequence[str] = ("ffmc", "pareto"),
    parameters: Mapping | None = None,
    reports_root: str | os.PathLike | None = None,
    progress: bool = True,
    notify: Callable[[str], None] = _stderr,
    input_copy: str = "auto",
) -> Path:
    """Run ``notebooks`` into ``reports/<name>/`` and return that folder.

    ``parameters`` go through papermill to the notebooks that declare them
    (one no notebook declares is refused); ``data_path`` defaults to the
    verified Annex 15 CSV, and the scores notebook's ``scores_path`` to the
    bt4vt VoxCeleb1-H scores. The input file is copied into the report first;
    the notebooks read that copy and the manifest records its sha256, so a file
    changed during the run cannot make them disagree. The folder appears only
    once everything succeeded; an earlier report of the same name is replaced
    then, in one step, not before. A path at ``reports/<name>`` that audit did
    not make is refused before any notebook runs; a second run of the same name
    while one is running is refused (:data:`REPORT_BUSY`). ``notify`` receives a
    line for each folder a killed or failed earlier run left and this run
    recovered or removed, and, with ``progress=False``, one line per stage (the
    notebooks run, rendered, the front page); with ``progress=True`` one bar
    counts every cell of the report.  ``input_copy`` (``"auto"``, ``"always"``,
    ``"never"``) says whether the input is copied: by default unless it is a
    built-in dataset whose licence forbids redistribution (see the module
    docstring).
    """
    from audit.report import outputs
    from audit.sources import datasets, voxceleb
    from audit.sources.annex15 import annex15_path

    check_report_name(name)
    input_copy = check("input_copy", input_copy)
    parameters = dict(parameters or {})
    declared = {notebook: declared_parameters(notebook) for notebook in notebooks}
    check_parameters(parameters, declared)
    key = None
    many = None
    if "compare" in notebooks:
        if len(notebooks) > 1:
            raise UsageError(
                COMPARE_ALONE.format(notebooks=[n for n in notebooks if n != "compare"])
            )
        many = _compared_inputs(parameters, input_copy)
    elif "scores" in notebooks:
        if len(notebooks) > 1:
            raise UsageError(MIXED_INPUTS.format(notebooks=list(notebooks)))
        if parameters.get("scores_path"):
            key = "scores_path"
        else:
            voxceleb.fetch_bt4vt()  # pinned and verified by sha256: read in place
            input_file = str(voxceleb.bt4vt_dir() / voxceleb.BT4VT_WHEEL)
    elif many is None:
        key = "data_path"
        if not parameters.get("data_path"):
            parameters["data_path"] = str(annex15_path())
    copied, dataset, said = False, None, ""
    if key is not None:
        parameters[key] = input_file = str(Path(parameters[key]).resolve())
        copied, dataset, said = _copies(input_file, input_copy)
    accuracy = None
    if parameters.get("accuracy_from"):
        given = datasets.resolve(parameters["accuracy_from"], kind="accuracy")
        parameters["accuracy_from"] = str(given.path.resolve())
        accuracy = (parameters["accuracy_from"], *_copies(parameters["accuracy_from"], input_copy))
    _manifest({"parameters": parameters})  # refuse NaN before any work
    root = check_reports_root(reports_root)
    # the cells a kernel runs: the notebook's code cells and the one papermill injects
    total = sum(code_cells(read_notebook(notebook_path(n))) + 1 for n in notebooks)

    def fill(staging: Path) -> None:
        run_parameters = dict(parameters)
        copy = None
        if key is not None and copied:
            copy = _copy_input(input_file, staging)
            run_parameters[key] = str(copy.relative_to(staging))  # notebooks run in staging
        if many is not None:
            header = _compared_header(many, staging, parameters, run_parameters)
        else:
            header = outputs.run_header(copy if copy is not None else input_file, parameters)
            header["input_file"] = input_file
        if key is not None:
            header["input_copy"] = str(copy.relative_to(staging)) if copy is not None else said
        if dataset is not None:
            header["input_source"] = dataset.source()
        if accuracy is not None:
            path, copy_it, source, note = accuracy
            kept = _copy_input(path, staging, "input/accuracy") if copy_it else None
            if kept is not None:
                run_parameters["accuracy_from"] = str(kept.relative_to(staging))
            read = outputs.run_header(kept if kept is not None else path, {})
            header["accuracy_input"] = {
                "file": path,
                "sha256": read["input_sha256"],
                "bytes": read["input_bytes"],
                "copy": str(kept.relative_to(staging)) if kept is not None else note,
                "source": source.source() if source is not None else None,
            }
        header["notebooks"] = list(notebooks)
        (staging / "manifest.json").write_text(_manifest(header))
        shown = _Progress(name, total, progress, notify)

        # the input as the notebooks read it (its copy in the report) and as the user gave it
        given = given_inputs(header)

        def run(notebook: str) -> None:
            if interrupt.stopping():
                return
            own = {k: v for k, v in run_parameters.items() if k in declared[notebook]}
            shown.stage(RUNNING.format(notebook=NOTEBOOKS[notebook]), notebook)
            try:
                executed = execute(
                    notebook,
                    staging / f"{notebook}.ipynb",
                    {**own, "output_dir": "."},
                    progress=shown.cell if progress else False,
                )
            except NotebookFailed as failed:
                raise _refused_input(failed, given) or failed from None
            shown.stage(RENDERING.format(notebook=NOTEBOOKS[notebook]), notebook)
            export_html(executed, staging / f"{notebook}.html")
            shown.done(notebook)

        try:
            # the front page's modules are imported while the kernels start, not after
            _run_all(run, notebooks, meanwhile=lambda: _page_maker(notebooks))
            shown.stage(FRONT_PAGE)
            header["outputs"] = outputs.merge_outputs(staging, notebooks)
            _write_index(staging, name, header, notebooks)
        finally:
            shown.close()

    return _build(root, name, notify, fill)
