"""Run the parameterised notebooks with papermill and assemble a report folder.

A report is written into a hidden staging folder next to its destination and
renamed into place only when every notebook has run and been rendered, so a
failed run never leaves a half report that looks complete::

    reports/<name>/
        index.html            the front page: run header, links, figures
        manifest.json         input sha256, parameters, versions, date
        <notebook>.ipynb      executed notebooks
        <notebook>.html       their HTML rendering, code hidden
        figures/*.png|svg     every figure
        tables/*.csv          every table
"""

from __future__ import annotations

import html
import json
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from audit import config
from audit.report.outputs import run_header
from audit.sources.annex15 import annex15_path

#: The notebooks a report can run, by short name.
NOTEBOOKS = {
    "ffmc": "ffmc_audit.ipynb",
    "pareto": "pareto_downselect.ipynb",
    "scores": "scores_audit.ipynb",
}
TITLES = {
    "ffmc": "FFMC audit of the fairness measures",
    "pareto": "Accuracy / fairness Pareto down-select",
    "scores": "Fairness audit from comparison scores",
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


class NotebookFailed(RuntimeError):
    """A notebook raised; the message names the notebook, the cell and the error."""


def notebook_path(name: str) -> Path:
    """Source path of the notebook called ``name`` (a key of :data:`NOTEBOOKS`)."""
    if name not in NOTEBOOKS:
        raise KeyError(UNKNOWN_NOTEBOOK.format(name=name, names=sorted(NOTEBOOKS)))
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


def execute(name: str, output: Path, parameters: Mapping, *, progress: bool = True) -> Path:
    """Execute one notebook with papermill into ``output``; raise :class:`NotebookFailed`."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    # the kernel imports the same audit package as this process, wherever it lives
    package_root = str(Path(__file__).resolve().parent.parent)
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if package_root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in [package_root, *paths] if p)
    try:
        papermill.execute_notebook(
            str(notebook_path(name)),
            str(output),
            parameters=dict(parameters),
            progress_bar=progress,
            kernel_name="python3",
            cwd=str(output.parent),
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


def _index_html(title: str, header: dict, notebooks: Sequence[str], folder: Path) -> str:
    rows = "".join(
        f"<tr><th>{html.escape(k)}</th><td><code>{html.escape(str(v))}</code></td></tr>"
        for k, v in header.items()
        if k != "parameters"
    )
    params = "".join(
        f"<tr><th>{html.escape(k)}</th><td><code>{html.escape(repr(v))}</code></td></tr>"
        for k, v in header["parameters"].items()
    )
    links = "".join(
        f'<li><a href="{n}.html">{html.escape(TITLES[n])}</a> '
        f'(<a href="{n}.ipynb">notebook</a>)</li>'
        for n in notebooks
    )
    figures = sorted((folder / "figures").glob("*.png")) if (folder / "figures").exists() else []
    tables = sorted((folder / "tables").glob("*.csv")) if (folder / "tables").exists() else []
    figure_html = "".join(
        f'<figure><a href="figures/{p.name}"><img src="figures/{p.name}" alt="{p.stem}"></a>'
        f'<figcaption>{p.stem} (<a href="figures/{p.stem}.svg">SVG</a>)</figcaption></figure>'
        for p in figures
    )
    table_html = "".join(f'<li><a href="tables/{p.name}">{p.name}</a></li>' for p in tables)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; }}
table {{ border-collapse: collapse; }} th, td {{ text-align: left; padding: 2px 10px; border-bottom: 1px solid #ddd; }}
figure {{ display: inline-block; width: 48%; margin: 0.5%; vertical-align: top; }}
figure img {{ width: 100%; border: 1px solid #eee; }}
</style></head><body>
<h1>{html.escape(title)}</h1>
<h2>Reports</h2><ul>{links}</ul>
<h2>Run</h2><table>{rows}</table>
<h3>Parameters</h3><table>{params}</table>
<h2>Tables</h2><ul>{table_html}</ul>
<h2>Figures</h2>{figure_html}
</body></html>
"""


def run_report(
    name: str = "annex15",
    *,
    notebooks: Sequence[str] = ("ffmc", "pareto"),
    parameters: Mapping | None = None,
    reports_root: str | os.PathLike | None = None,
    progress: bool = True,
) -> Path:
    """Run ``notebooks`` into ``reports/<name>/`` and return that folder.

    ``parameters`` go through papermill to the notebooks that declare them
    (one no notebook declares is refused); ``data_path`` defaults to the
    verified Annex 15 CSV, and the scores notebook's ``scores_path`` to the
    bt4vt VoxCeleb1-H scores. The folder appears only once everything succeeded; an
    earlier report of the same name is replaced then, not before.
    """
    declared = {notebook: declared_parameters(notebook) for notebook in notebooks}
    parameters = dict(parameters or {})
    known = sorted(set().union(*declared.values()))
    for key in parameters:
        if key not in known:
            raise ValueError(
                UNKNOWN_PARAMETER.format(key=key, notebooks=list(notebooks), known=known)
            )
    if "scores" in notebooks:
        if len(notebooks) > 1:
            raise ValueError(MIXED_INPUTS.format(notebooks=list(notebooks)))
        if parameters.get("scores_path"):
            parameters["scores_path"] = str(Path(parameters["scores_path"]).resolve())
            input_file = parameters["scores_path"]
        else:
            from audit.sources import voxceleb

            voxceleb.fetch_bt4vt()
            input_file = str(voxceleb.bt4vt_dir() / voxceleb.BT4VT_WHEEL)
    else:
        if not parameters.get("data_path"):
            parameters["data_path"] = str(annex15_path())
        parameters["data_path"] = str(Path(parameters["data_path"]).resolve())
        input_file = parameters["data_path"]
    root = Path(reports_root) if reports_root is not None else config.reports_dir()
    root.mkdir(parents=True, exist_ok=True)
    final = root / name
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.partial-", dir=root))
    try:
        header = run_header(input_file, parameters)
        header["notebooks"] = list(notebooks)
        (staging / "manifest.json").write_text(json.dumps(header, indent=2) + "\n")
        for notebook in notebooks:
            own = {k: v for k, v in parameters.items() if k in declared[notebook]}
            executed = execute(
                notebook,
                staging / f"{notebook}.ipynb",
                {**own, "output_dir": str(staging)},
                progress=progress,
            )
            export_html(executed, staging / f"{notebook}.html")
        (staging / "index.html").write_text(
            _index_html(f"audit report: {name}", header, notebooks, staging), encoding="utf-8"
        )
    except BaseException as error:
        failed = root / f".{name}.failed"
        shutil.rmtree(failed, ignore_errors=True)
        os.replace(staging, failed)  # kept for inspection, hidden, never looks complete
        if isinstance(error, NotebookFailed):
            raise NotebookFailed(str(error).replace(str(staging), str(failed))) from None
        raise
    if final.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{name}.old-", dir=root))
        os.replace(final, old / name)
        os.replace(staging, final)
        shutil.rmtree(old, ignore_errors=True)
    else:
        os.replace(staging, final)
    return final
