"""Where a notebook puts what it makes: figures as PNG and SVG, tables as CSV, and the
header (input checksum, parameters, version, date) that every report carries."""

from __future__ import annotations

import datetime as _dt
import os
import platform
from pathlib import Path

import pandas as pd

from audit import __version__
from audit.report.plots import theme
from audit.report.text import escape_markdown, markdown_code
from audit.sources.annex15 import sha256sum

#: Salt of the SVG element ids: fixed, so that identical figures give identical files.
SVG_HASHSALT = "audit"


def _slug(name: str) -> str:
    keep = [c if c.isalnum() or c in "-_." else "_" for c in name]
    return "".join(keep).strip("_") or "output"


def save_figure(fig, name: str, output_dir: str | os.PathLike, *, dpi: int = 150) -> list[Path]:
    """Write ``fig`` as ``figures/<name>.png`` and ``.svg`` under ``output_dir``.

    The same figure gives the same bytes every time: no date in either file and
    a fixed ``svg.hashsalt`` for the SVG's element ids.  It is drawn under the
    report's :func:`~audit.report.plots.theme`.  Texts are drawn as matplotlib
    reads them: a user's name must have entered the figure through
    :func:`audit.report.text.escape_mathtext` (the package's figure functions
    do so), while matplotlib's own tick labels stay mathtext.

    The figure is laid out once, by one engine: a figure with a layout
    engine (the package's plots use constrained layout) is laid out by the
    PNG's drawing and that layout is kept for the SVG, with no second pass
    (``bbox_inches="tight"``); a figure without an engine is cropped by
    ``bbox_inches="tight"`` alone.  Show the saved PNG with
    :func:`saved_image` rather than drawing the figure again.
    """
    import matplotlib

    folder = Path(output_dir) / "figures"
    folder.mkdir(parents=True, exist_ok=True)
    engine = fig.get_layout_engine()
    bbox = "tight" if engine is None else None
    paths = []
    try:
        with matplotlib.rc_context({**theme(), "svg.hashsalt": SVG_HASHSALT}):
            for suffix in ("png", "svg"):
                path = folder / f"{_slug(name)}.{suffix}"
                metadata = {"Date": None} if suffix == "svg" else {"Software": None}
                fig.savefig(path, dpi=dpi, bbox_inches=bbox, metadata=metadata)
                paths.append(path)
                if engine is not None:
                    # laid out by the first drawing: keep it, without an engine (whose
                    # mere presence makes savefig draw twice)
                    fig.set_layout_engine(None)
    finally:
        if engine is not None:
            fig.set_layout_engine(engine)
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
    frame: pd.DataFrame, name: str, output_dir: str | os.PathLike, *, index: bool | None = None
) -> Path:
    """Write ``frame`` as ``tables/<name>.csv`` under ``output_dir`` (full precision)."""
    folder = Path(output_dir) / "tables"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{_slug(name)}.csv"
    if index is None:
        index = not isinstance(frame.index, pd.RangeIndex)
    frame.to_csv(path, index=index, float_format="%.10g")
    return path


def run_header(data_path: str | os.PathLike, parameters: dict) -> dict:
    """What a report records about its run: input file and checksum, parameters,
    package and library versions, date."""
    import matplotlib
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
        "matplotlib": matplotlib.__version__,
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


def save_sentences(sentences, name: str, output_dir: str | os.PathLike, *, topic: str) -> Path:
    """Write what a notebook says in words as ``tables/<name>.csv``: one row per sentence,
    columns ``topic`` and ``sentence``, so the report's front page can repeat it."""
    frame = pd.DataFrame(
        {"topic": [str(topic)] * len(sentences), "sentence": [str(s) for s in sentences]}
    )
    return save_table(frame, name, output_dir, index=False)
