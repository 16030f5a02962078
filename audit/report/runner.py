"""Run the parameterised notebooks with papermill and assemble a report folder.

A report is written into a hidden staging folder next to its destination and
put in place only when every notebook has run and been rendered, so a failed
run never leaves a half report that looks complete. ``reports/<name>`` is a
symbolic link to the hidden folder holding the current report; a new report
replaces the old in one step (:func:`os.replace` of the link), so a kill at any
moment leaves either the old report or the new one under the name, never
neither. One lock file per name (``reports/.<name>.lock``) keeps two runs from
writing the same report; hidden folders left by killed runs are recovered or
removed by the next run, which names them::

    reports/<name>/
        index.html            the front page: findings (verdicts, frontier, robustness,
                              data quality, warnings), then links, figures, tables, run
        manifest.json         input sha256, parameters, versions, date
        <notebook>.ipynb      executed notebooks
        <notebook>.html       their HTML rendering, code hidden
        figures/*.png|svg     every figure
        tables/*.csv          every table
        input/<file>          the bytes audited (the notebooks read this copy)
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import json
import os
import secrets
import shutil
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from audit import config
from audit.exceptions import NotebookFailed, ReportError, UnknownNameError, UsageError
from audit.report.frontpage import front_page
from audit.report.outputs import run_header
from audit.sources import voxceleb
from audit.sources.annex15 import annex15_path

#: The notebooks a report can run, by short name.
NOTEBOOKS = {
    "ffmc": "ffmc_audit.ipynb",
    "pareto": "pareto_downselect.ipynb",
    "scores": "scores_audit.ipynb",
    "crossgroup": "crossgroup_audit.ipynb",
}
TITLES = {
    "ffmc": "FFMC audit of the fairness measures",
    "pareto": "Accuracy / fairness Pareto down-select",
    "scores": "Fairness audit from comparison scores",
    "crossgroup": "Cross-group impostor FMR",
}

UNKNOWN_NOTEBOOK = "unknown notebook {name!r}; available: {names}"
MIXED_INPUTS = (
    "notebooks {notebooks} read different inputs (a rates table and scores); run them apart"
)
UNKNOWN_PARAMETER = (
    "parameter {key!r} is not declared by notebook(s) {notebooks}; they take: {known}"
)
NOTEBOOK_FAILED = (
    "notebook {notebook} failed in cell {cell} with {ename}: {evalue}\n"
    "The executed notebook, up to the failing cell, is kept at {kept}"
)


BAD_NAME = (
    "report name {name!r} must be a plain folder name: no '/' or backslash, "
    "no leading '.' (so not '.' or '..'), no leading or trailing space"
)
EMPTY_NAME = "report name is empty"
REPORT_BUSY = (
    "report {name!r} is being written by another audit run (lock {lock}); "
    "wait for it to finish or choose another --name"
)
CANNOT_WRITE = "cannot write {path}: {reason}"
CANNOT_READ = "cannot read {path}: {reason}"
NOT_A_REPORT = (
    "{path} exists and is not a report written by audit; move it or choose another --name"
)
NOT_JSON = "parameter {key!r} = {value!r} cannot be written to manifest.json (NaN or infinite?)"
RECOVERED = "recovered report {name!r} from {folder}, left by an interrupted run"
REMOVED = "removed {folder}, left by an interrupted or failed run"

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
}


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
    if any(c in name for c in "/\\\0") or name.startswith(".") or name != name.strip():
        raise UsageError(BAD_NAME.format(name=name))
    return name


def notebook_path(name: str) -> Path:
    """Source path of the notebook called ``name`` (a key of :data:`NOTEBOOKS`)."""
    if name not in NOTEBOOKS:
        raise UnknownNameError(UNKNOWN_NOTEBOOK.format(name=name, names=sorted(NOTEBOOKS)))
    return config.notebooks_dir() / NOTEBOOKS[name]


def declared_parameters(name: str) -> list[str]:
    """Names of the parameters the notebook ``name`` declares in its ``parameters`` cell."""
    import papermill

    return list(papermill.inspect_notebook(str(notebook_path(name))))


def export_html(notebook: Path, destination: Path) -> Path:
    """Render an executed notebook to standalone HTML with the code cells hidden."""
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(
        exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True
    )
    body, _ = exporter.from_notebook_node(nbformat.read(notebook, as_version=4))
    destination.write_text(body, encoding="utf-8")
    return destination


def _kernel_path() -> None:
    """The kernel imports the same audit package as this process, wherever it lives."""
    package_root = str(Path(__file__).resolve().parent.parent)
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if package_root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in [package_root, *paths] if p)


def execute(name: str, output: Path, parameters: Mapping, *, progress: bool = True) -> Path:
    """Execute one notebook with papermill into ``output``; raise :class:`NotebookFailed`."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    _kernel_path()
    try:
        papermill.execute_notebook(
            str(notebook_path(name)),
            str(output),
            parameters=dict(parameters),
            progress_bar=progress,
            kernel_name="python3",
            # the kernel starts in the report folder; papermill's cwd= would chdir the
            # whole process, which the notebooks running side by side in threads share
            resources={"metadata": {"path": str(output.parent)}},
        )
    except PapermillExecutionError as error:
        raise NotebookFailed(
            NOTEBOOK_FAILED.format(
                notebook=NOTEBOOKS[name],
                cell=error.exec_count,
                ename=error.ename,
                evalue=error.evalue,
                kept=output,
            )
        ) from None
    return output


def _mkdir(path: Path) -> Path:
    """Create ``path`` (and parents) with the mode the umask allows; plain error on failure."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ReportError(CANNOT_WRITE.format(path=path, reason=plain_reason(error))) from None
    if not path.is_dir():
        raise ReportError(CANNOT_WRITE.format(path=path, reason=_REASONS[errno.ENOTDIR]))
    return path


def check_reports_root(root: str | os.PathLike | None) -> Path:
    """The reports folder, created if needed and writable; else :class:`ReportError`."""
    root = _mkdir(Path(root) if root is not None else config.reports_dir())
    if not os.access(root, os.W_OK | os.X_OK):
        raise ReportError(CANNOT_WRITE.format(path=root, reason=_REASONS[errno.EACCES]))
    return root


class _Lock:
    """An exclusive ``fcntl`` lock on ``reports/.<name>.lock``, refused when held elsewhere.

    The kernel releases it when its process ends, however it ends.
    """

    def __init__(self, root: Path, name: str):
        self.name, self.path = name, root / f".{name}.lock"

    def __enter__(self):
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
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


def _new_folder(root: Path, prefix: str) -> Path:
    """A new empty hidden folder ``root/<prefix><random>``; its mode follows the umask."""
    while True:
        path = root / f"{prefix}{secrets.token_hex(4)}"
        try:
            path.mkdir()
            return path
        except FileExistsError:
            continue
        except OSError as error:
            raise ReportError(CANNOT_WRITE.format(path=path, reason=plain_reason(error))) from None


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    else:
        shutil.rmtree(path)


def _tidy(root: Path, name: str, notify: Callable[[str], None]) -> None:
    """Recover or remove what killed or failed runs of report ``name`` left (lock held).

    ``reports/<name>`` missing or dangling while a finished version exists: the
    newest finished version is linked back. Every other hidden folder of the
    name (staging, failed, unlinked versions, temporary links) is removed.
    """
    final = root / name
    current = final.resolve() if final.is_symlink() and final.exists() else None
    prefix = f".{name}."
    leftovers = sorted(
        p
        for p in root.iterdir()
        if p.name.startswith(prefix) and p.name != f"{prefix}lock" and p != current
    )
    if current is None and (final.is_symlink() or not final.exists()):
        finished = [
            p
            for p in leftovers
            if p.name.startswith(f"{prefix}report-") and (p / "index.html").is_file()
        ]
        if finished:
            newest = max(finished, key=lambda p: (p / "index.html").stat().st_mtime_ns)
            _link(newest, final)
            notify(RECOVERED.format(name=name, folder=newest))
            leftovers.remove(newest)
    for path in leftovers:
        _remove(path)
        notify(REMOVED.format(folder=path))


def _link(version: Path, final: Path) -> None:
    """Point ``final`` at ``version`` in one step: a new link renamed over the old one."""
    link = version.parent / f".{final.name}.link-{secrets.token_hex(4)}"
    os.symlink(version.name, link)  # relative: the reports folder can be moved whole
    os.replace(link, final)


def _publish(staging: Path, final: Path) -> Path:
    """Make the finished ``staging`` folder the report under ``final``; return its version.

    The old report stays under the name until the single :func:`os.replace` of
    the link; its folder is removed afterwards (or by the next run if killed).
    """
    version = staging.with_name(staging.name.replace(".partial-", ".report-"))
    os.replace(staging, version)
    previous = None
    if final.is_symlink():
        previous = final.resolve()
    elif final.exists():
        if not (final / "manifest.json").is_file():
            raise ReportError(NOT_A_REPORT.format(path=final))
        # a report from before links: moved aside, recovered by the next run if killed here
        previous = _new_folder(final.parent, f".{final.name}.report-")
        os.rmdir(previous)
        os.replace(final, previous)
    _link(version, final)
    if previous is not None and previous != version and previous.exists():
        shutil.rmtree(previous, ignore_errors=True)
    return version


def _copy_input(source: str, staging: Path) -> Path:
    """Copy the input into ``staging/input/``: the notebooks read and the manifest hashes it."""
    folder = _mkdir(staging / "input")
    copy = folder / Path(source).name
    try:
        shutil.copyfile(source, copy)
    except OSError as error:
        bad = Path(error.filename) if error.filename else Path(source)
        template = CANNOT_WRITE if bad == copy else CANNOT_READ
        raise ReportError(template.format(path=bad, reason=plain_reason(error))) from None
    return copy


def _manifest(header: dict) -> str:
    for key, value in header["parameters"].items():
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError):
            raise UsageError(NOT_JSON.format(key=key, value=value)) from None
    return json.dumps(header, indent=2, allow_nan=False) + "\n"


def _stderr(message: str) -> None:
    print(f"audit: {message}", file=sys.stderr)


def _run_all(run: Callable[[str], None], notebooks: Sequence[str]) -> None:
    """``run`` each notebook, side by side when there are several and cores to spare.

    Each notebook has its own kernel and writes its own files; the first
    failure (in notebook order) is raised once every notebook has stopped.
    """
    workers = min(len(notebooks), os.cpu_count() or 1)
    if workers <= 1:
        for notebook in notebooks:
            run(notebook)
        return
    _kernel_path()  # set once, before the threads read it
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(_in_thread, run, notebook) for notebook in notebooks]
    for future in futures:
        future.result()


def _in_thread(run: Callable[[str], None], notebook: str) -> None:
    """``run(notebook)``, then close the event loop the kernel client made for this thread."""
    try:
        run(notebook)
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            try:
                loop = asyncio.get_event_loop()
            except RuntimeError:  # the thread made none
                loop = None
        if loop is not None and not loop.is_running():
            loop.close()
        asyncio.set_event_loop(None)


def write_report(
    name: str,
    write: Callable[[Path], None],
    *,
    reports_root: str | os.PathLike | None = None,
    notify: Callable[[str], None] = _stderr,
) -> Path:
    """Publish a report that ``write(folder)`` fills without notebooks (e.g. streamed tables).

    The same guarantees as :func:`run_report` (:func:`_build`).
    """
    check_report_name(name)

    def fill(folder: Path) -> None:
        write(folder)
        _write_index(folder, name)

    return _build(check_reports_root(reports_root), name, notify, fill)


def _write_index(
    folder: Path, name: str, header: dict | None = None, notebooks: Sequence[str] = ()
) -> Path:
    """The report's front page, from the tables in ``folder`` (:mod:`audit.report.frontpage`)."""
    page = front_page(
        folder,
        title=f"audit report: {name}",
        header=header,
        notebooks=[(n, TITLES.get(n, n)) for n in notebooks],
    )
    path = folder / "index.html"
    path.write_text(page, encoding="utf-8")
    return path


def _build(
    root: Path, name: str, notify: Callable[[str], None], fill: Callable[[Path], None]
) -> Path:
    """``fill`` a hidden staging folder and publish it as ``root/name`` in one step.

    One run per name at a time; leftovers of killed runs tidied first; on any
    failure the staging folder is kept as the hidden ``.NAME.failed`` (never
    looks complete) and an earlier report of the name stays whole.
    """
    final = root / name
    with _Lock(root, name):
        _tidy(root, name, notify)
        staging = _new_folder(root, f".{name}.partial-")
        try:
            fill(staging)
            _publish(staging, final)
            return final
        except BaseException as error:
            if not staging.exists():  # published: only the old report's removal can fail here
                raise
            failed = root / f".{name}.failed"
            shutil.rmtree(failed, ignore_errors=True)
            os.replace(staging, failed)  # kept for inspection, hidden, never looks complete
            if isinstance(error, NotebookFailed):
                raise NotebookFailed(str(error).replace(str(staging), str(failed))) from None
            if isinstance(error, OSError) and not isinstance(error, ReportError):
                path = error.filename or staging
                raise ReportError(
                    CANNOT_WRITE.format(path=path, reason=plain_reason(error))
                ) from None
            raise


def run_report(
    name: str = "annex15",
    *,
    notebooks: Sequence[str] = ("ffmc", "pareto"),
    parameters: Mapping | None = None,
    reports_root: str | os.PathLike | None = None,
    progress: bool = True,
    notify: Callable[[str], None] = _stderr,
) -> Path:
    """Run ``notebooks`` into ``reports/<name>/`` and return that folder.

    ``parameters`` go through papermill to the notebooks that declare them
    (one no notebook declares is refused); ``data_path`` defaults to the
    verified Annex 15 CSV, and the scores notebook's ``scores_path`` to the
    bt4vt VoxCeleb1-H scores. The input file is copied into the report first;
    the notebooks read that copy and the manifest records its sha256, so a file
    changed during the run cannot make them disagree. The folder appears only
    once everything succeeded; an earlier report of the same name is replaced
    then, in one step, not before. A second run of the same name while one is
    running is refused (:data:`REPORT_BUSY`); ``notify`` receives a line for
    each folder a killed or failed earlier run left and this run recovered or
    removed.
    """
    check_report_name(name)
    declared = {notebook: declared_parameters(notebook) for notebook in notebooks}
    parameters = dict(parameters or {})
    known = sorted(set().union(*declared.values()))
    for key in parameters:
        if key not in known:
            raise UsageError(
                UNKNOWN_PARAMETER.format(key=key, notebooks=list(notebooks), known=known)
            )
    key = None
    if "scores" in notebooks:
        if len(notebooks) > 1:
            raise UsageError(MIXED_INPUTS.format(notebooks=list(notebooks)))
        if parameters.get("scores_path"):
            key = "scores_path"
        else:
            voxceleb.fetch_bt4vt()  # pinned and verified by sha256: read in place
            input_file = str(voxceleb.bt4vt_dir() / voxceleb.BT4VT_WHEEL)
    else:
        key = "data_path"
        if not parameters.get("data_path"):
            parameters["data_path"] = str(annex15_path())
    if key is not None:
        parameters[key] = input_file = str(Path(parameters[key]).resolve())
    _manifest({"parameters": parameters})  # refuse NaN before any work
    root = check_reports_root(reports_root)

    def fill(staging: Path) -> None:
        run_parameters = dict(parameters)
        if key is not None:
            copy = _copy_input(input_file, staging)
            run_parameters[key] = str(copy.relative_to(staging))  # notebooks run in staging
        header = run_header(copy if key is not None else input_file, parameters)
        header["input_file"] = input_file
        header["notebooks"] = list(notebooks)
        (staging / "manifest.json").write_text(_manifest(header))

        def run(notebook: str) -> None:
            own = {k: v for k, v in run_parameters.items() if k in declared[notebook]}
            executed = execute(
                notebook,
                staging / f"{notebook}.ipynb",
                {**own, "output_dir": "."},
                progress=progress,
            )
            export_html(executed, staging / f"{notebook}.html")

        _run_all(run, notebooks)
        _write_index(staging, name, header, notebooks)

    return _build(root, name, notify, fill)
