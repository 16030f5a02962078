"""Where a notebook puts what it makes: figures as PNG and SVG, tables as CSV, and the
header (input checksum, parameters, version, date) that every report carries.

**What each notebook wrote.**  After :func:`record_outputs` (the first cell of every
notebook calls it; the streamed scores report, which has no notebook, uses
:func:`recording`), :func:`save_table`, :func:`save_figure` and
:func:`save_sentences` record each output they write with a *role* (what it is
to a reader of the report: ``"ffmc_table"``, ``"pareto_all"``, ...; the file's
name by default) in the notebook's outputs list, ``logs/outputs_<notebook>.json``.
When the notebooks have run, :func:`merge_outputs` gathers the lists into
``manifest.json``::

    "outputs": {"ffmc": {"tables": {"ffmc_table": "tables/ffmc_table.csv", ...},
                         "figures": {"ffmc_panels_fdr": "figures/ffmc_panels_fdr.png", ...},
                         "sentences": {"robustness": "tables/robustness_ffmc.csv"}}, ...}

and the front page (:mod:`audit.report.frontpage`) finds its sections there, by
role, never by a file name: a table renamed in a notebook keeps its section, and
a role a section expects that a notebook did not declare, or a declared file
that is missing, shows on the page as a notice.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import hashlib
import json
import os
import platform
import re
import sys
from pathlib import Path

import pandas as pd

from audit import __version__
from audit.exceptions import UsageError
from audit.report.plots import theme
from audit.report.text import escape_markdown, markdown_code
from audit.sources.annex15 import sha256sum

#: Salt of the SVG element ids: fixed, so that identical figures give identical files.
SVG_HASHSALT = "audit"
#: The folder of a report's logs, and a notebook's outputs list in it while the report runs.
LOGS = "logs"
OUTPUTS_LIST = "outputs_{notebook}.json"
#: The kinds of output a notebook declares, as the manifest's ``outputs`` names them.
KINDS = ("tables", "figures", "sentences")
#: The files of each figure, in the order they are drawn (the PNG lays the figure out).
FIGURE_FORMATS = ("png", "svg")
#: Settings under which a laid-out figure is drawn with its engine off: these would put a
#: default engine in its place.
ENGINE_OFF = {"figure.constrained_layout.use": False, "figure.autolayout": False}
ROLE_TAKEN = (
    "notebook {notebook!r} declared role {role!r} of its {kind} twice: {first} and {second}; "
    "give each output its own role"
)

#: The notebook recording its outputs into each report folder (resolved path -> name).
_RECORDING: dict[str, str] = {}


def record_outputs(notebook: str, output_dir: str | os.PathLike) -> Path:
    """Record, from now on, every output saved into ``output_dir`` in ``notebook``'s
    outputs list (``logs/outputs_<notebook>.json``); return the list's path.

    A notebook calls it once, in its first cell, beside
    :func:`audit.report.notices.record_warnings`; it records for the rest of the
    kernel's life.
    """
    path = _outputs_list(output_dir, notebook)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({kind: {} for kind in KINDS}, indent=2) + "\n")
    _RECORDING[str(Path(output_dir).resolve())] = notebook
    return path


@contextlib.contextmanager
def recording(notebook: str, output_dir: str | os.PathLike):
    """:func:`record_outputs` for the length of a ``with`` block (a report written without
    notebooks, in this process)."""
    key = str(Path(output_dir).resolve())
    before = _RECORDING.get(key)
    record_outputs(notebook, output_dir)
    try:
        yield
    finally:
        if before is None:
            _RECORDING.pop(key, None)
        else:
            _RECORDING[key] = before


def _outputs_list(output_dir: str | os.PathLike, notebook: str) -> Path:
    return Path(output_dir) / LOGS / OUTPUTS_LIST.format(notebook=_slug(notebook))


def _record(output_dir: str | os.PathLike, kind: str, role: str, path: Path) -> None:
    """Add ``path`` (under ``output_dir``) to the outputs list of the notebook recording
    there, as the ``role`` of its ``kind``; nothing when none records."""
    notebook = _RECORDING.get(str(Path(output_dir).resolve()))
    if notebook is None:
        return
    listed = _outputs_list(output_dir, notebook)
    declared = json.loads(listed.read_text())
    relative = Path(path).relative_to(Path(output_dir)).as_posix()
    first = declared[kind].setdefault(role, relative)
    if first != relative:
        raise UsageError(
            ROLE_TAKEN.format(notebook=notebook, role=role, kind=kind, first=first, second=relative)
        )
    listed.write_text(json.dumps(declared, indent=2) + "\n")


def merge_outputs(folder: str | os.PathLike, notebooks=()) -> dict:
    """The outputs lists of a report's notebooks, as the manifest's ``outputs``: each list
    file read (``notebooks`` first, in their order, then any other) and removed, and
    ``manifest.json`` rewritten with them when it exists. The ``logs`` folder goes too
    when nothing else is in it."""
    folder = Path(folder)
    logs = folder / LOGS
    found = sorted(logs.glob(OUTPUTS_LIST.format(notebook="*"))) if logs.is_dir() else []
    by_name = {p.name: p for p in found}
    order = [OUTPUTS_LIST.format(notebook=_slug(n)) for n in notebooks]
    outputs = {}
    for name in [*[n for n in order if n in by_name], *sorted(set(by_name) - set(order))]:
        notebook = name.removeprefix("outputs_").removesuffix(".json")
        outputs[notebook] = json.loads(by_name[name].read_text())
        by_name[name].unlink()
    if logs.is_dir() and not any(logs.iterdir()):
        logs.rmdir()
    manifest = folder / "manifest.json"
    if manifest.is_file():
        header = json.loads(manifest.read_text())
        header["outputs"] = outputs
        manifest.write_text(json.dumps(header, indent=2, allow_nan=False) + "\n")
    return outputs


#: The most bytes of a file name's stem (a system allows 255 in a name, its suffix too).
STEM_BYTES = 150


def _slug(name: str) -> str:
    """``name`` as a file name: each run of characters other than a letter, a digit, ``-``,
    ``_`` or ``.`` written ``_``; a name so changed, holding an upper-case letter or
    longer than :data:`STEM_BYTES` (cut there) ends in 8 hexadecimal digits of its hash,
    so that two names never share a file, on a disk that tells case apart or one that
    does not (``x y`` and ``x_y``, labels of two datasets compared, wrote one file, the
    second dataset's heat map over the first's; ``A`` and ``a`` would on macOS), and a
    long label does not make a name the system refuses.

    >>> _slug("ffmc_panels_garbe"), _slug("x y"), _slug("x_y"), _slug("x+y"), _slug("X_y")
    ('ffmc_panels_garbe', 'x_y-887fcea6', 'x_y', 'x_y-cb4c3af7', 'X_y-f735b5b6')
    """
    kept = _kept(name)
    if kept == name and name.casefold() == name and _bytes(name) <= STEM_BYTES:
        return kept
    # (room for "-" and the digest; the cut on a character's edge)
    kept = kept.encode("utf-8", "surrogatepass")[: STEM_BYTES - 9].decode("utf-8", "ignore")
    return f"{kept}-{_digest(name)}"


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _kept(name: str) -> str:
    return re.sub(r"[^\w.-]+", "_", name).strip("_") or "output"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]


def pair_name(prefix: str, first: str, second: str) -> str:
    """The name of a figure of the datasets labelled ``first`` and ``second``:
    ``<prefix>_<first>_<second>`` where that can name no other pair (labels of letters,
    digits, ``-`` and ``.``); else one holding the pair written out, which
    :func:`_slug` names by its hash (the pairs ``x``, ``y_z`` and ``x_y``, ``z`` joined
    alike, and shared one figure).

    >>> pair_name("compare_ranks", "annex15", "frvt11")
    'compare_ranks_annex15_frvt11'
    >>> _slug(pair_name("compare_ranks", "x", "y_z")), _slug(pair_name("compare_ranks", "x_y", "z"))
    ('compare_ranks_x_y_z-624c6f71', 'compare_ranks_x_y_z-113a60fa')
    """
    if all(_kept(label) == label and "_" not in label for label in (first, second)):
        return f"{prefix}_{first}_{second}"
    return prefix + json.dumps([first, second], ensure_ascii=False)


def figure_paths(name: str, output_dir: str | os.PathLike) -> list[Path]:
    """Where :func:`save_figure` writes the figure ``name``: ``figures/<name>.png`` and
    ``.svg`` under ``output_dir``."""
    folder = Path(output_dir) / "figures"
    return [folder / f"{_slug(name)}.{suffix}" for suffix in FIGURE_FORMATS]


def render_figure(fig, *, dpi: int = 150) -> list[bytes]:
    """The bytes of ``fig`` as PNG and as SVG (in :data:`FIGURE_FORMATS` order), as
    :func:`save_figure` writes them.

    The same figure gives the same bytes every time: no date in either file and
    a fixed ``svg.hashsalt`` for the SVG's element ids.  It is drawn under the
    report's :func:`~audit.report.plots.theme`.  Texts are drawn as matplotlib
    reads them: a user's name must have entered the figure through
    :func:`audit.report.text.escape_mathtext` (the package's figure functions
    do so), while matplotlib's own tick labels stay mathtext.

    The figure is laid out once, by one engine: a figure with a layout engine
    (the package's plots use constrained layout) is laid out at ``dpi`` by
    :func:`_lay_out`, and drawn for each file with that layout, with no second
    pass (``bbox_inches="tight"``); a figure without an engine is cropped by
    ``bbox_inches="tight"`` alone.  The bytes are those of matplotlib's own
    ``savefig`` of the PNG with the engine, then of the SVG without it: each
    figure is drawn once per file, where that ``savefig`` draws the PNG twice.
    """
    import io

    import matplotlib

    engine = fig.get_layout_engine()
    bbox = "tight" if engine is None else None
    title = figure_title(fig)
    rendered = []
    try:
        with matplotlib.rc_context({**theme(), "svg.hashsalt": SVG_HASHSALT, **ENGINE_OFF}):
            if engine is not None:
                _lay_out(fig, engine, dpi)
                # laid out: drawn without an engine, whose mere presence makes savefig
                # draw the figure once more, rendering nothing, to lay it out again
                fig.set_layout_engine(None)
            for suffix in FIGURE_FORMATS:
                buffer = io.BytesIO()
                metadata = {"Date": None} if suffix == "svg" else {"Software": None}
                if title:  # what the front page captions the figure with
                    metadata["Title"] = title
                fig.savefig(buffer, format=suffix, dpi=dpi, bbox_inches=bbox, metadata=metadata)
                rendered.append(buffer.getvalue())
    finally:
        if engine is not None:
            fig.set_layout_engine(engine)
    return rendered


def figure_title(fig) -> str | None:
    r"""The title a reader knows ``fig`` by, on one line and as drawn (an escaped ``\$`` is
    a ``$``, a control character its escape): its suptitle, else the title of its only
    titled axes (an inset, a colour bar aside); None when it has neither.
    :func:`render_figure` writes it into both files (PNG text, SVG metadata), and the
    front page captions the figure with it.

    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> figure_title(fig) is None
    True
    >>> _ = ax.set_title("FDR of vendor-\\$1")
    >>> figure_title(fig)
    'FDR of vendor-$1'
    >>> _ = fig.suptitle("DET curves,\n3 groups")
    >>> figure_title(fig)
    'DET curves, 3 groups'
    >>> plt.close(fig)
    """
    from audit.report.text import escape_controls

    text = fig.get_suptitle() if hasattr(fig, "get_suptitle") else ""
    if not text.strip():
        axes = [ax for ax in fig.axes if ax.get_visible() and ax.get_label() != "<colorbar>"]
        titles = [
            next(t for loc in ("center", "left", "right") if (t := ax.get_title(loc)).strip())
            for ax in axes
            if any(ax.get_title(loc).strip() for loc in ("center", "left", "right"))
        ]
        if len(titles) != 1:  # untitled, or several panels each of its own
            return None
        text = titles[0]
    # a control character in a name (an escape, a bidirectional override) shown, not acting
    return escape_controls(" ".join(text.replace(r"\$", "$").split()))


def _lay_out(fig, engine, dpi: int) -> None:
    """Lay ``fig`` out by its layout ``engine`` as ``savefig(format="png", dpi=dpi)`` lays it
    out: at ``dpi``, measured by an Agg renderer.  A figure whose canvas is Agg's own (no
    window: a notebook kernel's, a drawing worker's) is laid out on that canvas, whose
    renderer the PNG is then drawn with, its texts already measured and their mathtext
    parsed (the same bytes, a figure of the report's FFMC panels drawn in 0.76 s against
    0.82 s); a figure with any other canvas is laid out on a canvas lent for the call (so
    that no window it may have is resized), and its own canvas is given back.  As
    matplotlib's drawing does, a figure without axes is not laid out, and a layout the
    engine refuses (a ``ValueError``: compressed layout of axes from several grids, say)
    leaves the figure as it is."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not fig.axes:
        return
    canvas, before = fig.canvas, fig.dpi
    lent = type(canvas) is not FigureCanvasAgg
    if lent:
        FigureCanvasAgg(fig)  # the figure's canvas while it is laid out
    try:
        fig.dpi = dpi
        try:
            engine.execute(fig)
        except ValueError:
            pass
    finally:
        fig.dpi = before
        if lent:
            fig.set_canvas(canvas)


def declare_figure(
    name: str, output_dir: str | os.PathLike, *, role: str | None = None
) -> list[Path]:
    """Record the figure ``name`` as ``role`` (default: ``name``) in the outputs list
    (:func:`record_outputs`), as :func:`save_figure` does, for a figure that another
    process writes (:mod:`audit.report.drawing`); create ``figures/`` under ``output_dir``
    and return the figure's paths (:func:`figure_paths`)."""
    paths = figure_paths(name, output_dir)
    paths[0].parent.mkdir(parents=True, exist_ok=True)
    _record(output_dir, "figures", role or name, paths[0])
    return paths


def save_figure(
    fig, name: str, output_dir: str | os.PathLike, *, dpi: int = 150, role: str | None = None
) -> list[Path]:
    """Write ``fig`` as ``figures/<name>.png`` and ``.svg`` under ``output_dir``, recorded
    as ``role`` (default: ``name``) in the outputs list (:func:`record_outputs`).

    The bytes are :func:`render_figure`'s: the same figure gives the same files
    every time, laid out once.  Show the saved PNG with :func:`saved_image`
    rather than drawing the figure again.
    """
    rendered = render_figure(fig, dpi=dpi)
    paths = declare_figure(name, output_dir, role=role)
    for path, data in zip(paths, rendered, strict=True):
        path.write_bytes(data)
    return paths


def saved_image(paths):
    """The PNG written by :func:`save_figure`, for a notebook to display.

    ``display(saved_image(save_figure(fig, ...)))`` shows the saved file
    instead of rendering the figure a third time.
    """
    from IPython.display import Image

    png = next(Path(p) for p in paths if Path(p).suffix == ".png")
    return Image(filename=str(png))


def save_table(
    frame: pd.DataFrame,
    name: str,
    output_dir: str | os.PathLike,
    *,
    index: bool | None = None,
    role: str | None = None,
    kind: str = "tables",
) -> Path:
    """Write ``frame`` as ``tables/<name>.csv`` under ``output_dir`` (full precision),
    recorded as ``role`` (default: ``name``) of the outputs ``kind`` in the outputs list
    (:func:`record_outputs`)."""
    folder = Path(output_dir) / "tables"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{_slug(name)}.csv"
    if index is None:
        index = not isinstance(frame.index, pd.RangeIndex)
    frame.to_csv(path, index=index, float_format="%.10g")
    _record(output_dir, kind, role or name, path)
    return path


def _version(package: str) -> str:
    """``package.__version__`` if it is imported, else its installed version (a report
    run's command line records it without importing it)."""
    module = sys.modules.get(package)
    if module is not None:
        return module.__version__
    return _installed_version(package)


@functools.cache
def _installed_version(package: str) -> str:
    """The installed version of ``package``, read from its metadata (2.5 ms) once in a
    process, however many reports it runs."""
    from importlib.metadata import version

    return version(package)


def run_header(data_path: str | os.PathLike, parameters: dict) -> dict:
    """What a report records about its run: input file and checksum, parameters,
    package and library versions, date."""
    import numpy

    data_path = Path(data_path)
    return {
        "input_file": str(data_path),
        "input_sha256": sha256sum(data_path),
        "input_bytes": data_path.stat().st_size,
        "parameters": dict(parameters),
        "audit_version": __version__,
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "pandas": pd.__version__,
        "matplotlib": _version("matplotlib"),
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }


def header_markdown(header: dict) -> str:
    """The run header as a Markdown block for the top of a report (every value escaped)."""
    params = (
        ", ".join(markdown_code(f"{k}={v!r}") for k, v in header["parameters"].items()) or "none"
    )
    return (
        f"**Input**: {markdown_code(header['input_file'])} ({header['input_bytes']:,} bytes)  \n"
        f"**sha256**: {markdown_code(header['input_sha256'])}  \n"
        f"**Parameters**: {params}  \n"
        f"**audit** {escape_markdown(header['audit_version'])} · Python "
        f"{escape_markdown(header['python'])} · numpy {escape_markdown(header['numpy'])} · "
        f"pandas {escape_markdown(header['pandas'])} · matplotlib "
        f"{escape_markdown(header['matplotlib'])}  \n"
        f"**Run at**: {escape_markdown(header['date'])}"
    )


def flat_sentences(said) -> list[tuple[str, bool]]:
    """``said`` -- sentences, each a string, or a list of strings: the items of a list that
    the sentence before it introduces -- as ``(sentence, item)`` pairs, ``item`` True for a
    list's items.

    >>> flat_sentences(["Over 10 redraws:", ["a.", "b."], "c."])
    [('Over 10 redraws:', False), ('a.', True), ('b.', True), ('c.', False)]
    """
    out = []
    for part in said:
        if isinstance(part, str):
            out.append((part, False))
        else:
            out.extend((str(item), True) for item in part)
    return out


def said_markdown(said) -> str:
    """``said`` (as :func:`flat_sentences` reads it) as escaped Markdown: sentences as
    paragraphs, a list's items as a bulleted list.

    >>> print(said_markdown(["Stable:", ["FDR (1*2).", "IR."], "Done."]))
    Stable\\:
    <BLANKLINE>
    - FDR \\(1\\*2\\)\\.
    - IR\\.
    <BLANKLINE>
    Done\\.
    """
    blocks: list[list[str]] = []
    for sentence, item in flat_sentences(said):
        text = escape_markdown(sentence)
        if item and blocks and blocks[-1][0].startswith("- "):
            blocks[-1].append(f"- {text}")
        else:
            blocks.append([f"- {text}" if item else text])
    return "\n\n".join("\n".join(block) for block in blocks)


def save_sentences(
    said, name: str, output_dir: str | os.PathLike, *, topic: str, role: str | None = None
) -> Path:
    """Write what a notebook says in words as ``tables/<name>.csv``, so the report's
    front page can repeat it: one row per sentence, columns ``topic``, ``sentence`` and
    ``item`` (True for the items of a list: ``said`` as :func:`flat_sentences` reads it);
    recorded as ``role`` (default: ``name``) of the notebook's ``sentences``."""
    rows = flat_sentences(said)
    frame = pd.DataFrame(
        {
            "topic": [str(topic)] * len(rows),
            "sentence": [sentence for sentence, _ in rows],
            "item": [item for _, item in rows],
        }
    )
    return save_table(frame, name, output_dir, index=False, role=role, kind="sentences")
