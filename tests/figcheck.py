"""What a figure shows its reader, and the faults a reader would see in it.

:func:`record` draws a figure and notes every text the drawing puts on the
canvas: the string as the reader sees it (mathtext rendered to its
characters, an escaped ``\\$`` shown as ``$``), its box in pixels, its rotation
and unrotated size, and the axis whose tick label it is; and the text of the
figure's SVG written with ``svg.fonttype = "none"`` (characters, not the glyph
paths the report's SVG holds), which is what a reader of the SVG reads.

:func:`faults` lists what is wrong in a record, by kind:

``raw markup``
    a ``$`` or a TeX command (``\\mathdefault``, ``\\frac``) in the SVG's text,
    other than inside a name the figure is given to draw as written;
``tick overlap``
    two tick labels of one axis whose boxes overlap (boxes of rotated labels
    are compared in their own frame, not as the axis-aligned boxes around them);
``outside canvas``
    a text reaching past the edge of the saved image.

:func:`named` says which of some names a figure draws as a text of its own (a
tick label, a point label such as ``name (0.97)``, a legend entry, a title).

A report's notebooks run in kernels that papermill starts, so the figures are
checked there: :func:`kernel_hook` writes an IPython startup file that calls
:func:`install`, which makes :func:`audit.report.outputs.save_figure` (and a
drawing worker's :func:`audit.report.outputs.render_figure`, for the figures a
notebook hands to :class:`audit.report.drawing.Drawing`) write each figure's
record as JSON beside the report; the test reads them back.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

#: The kinds of fault :func:`faults` reports.
KINDS = ("raw markup", "tick overlap", "outside canvas")

#: Pixels (at the figure's dpi) by which two boxes must overlap, or a text pass the edge,
#: to count: anti-aliasing and rounding leave a fraction of a pixel either way.
TOLERANCE = 0.5

#: A dollar sign, or a backslash command as mathtext and TeX write them.
MARKUP = re.compile(r"\$|\\[A-Za-z]+")

ENVIRONMENT = "AUDIT_FIGURE_CHECK"

_STARTUP = """\
import os
import sys

if os.environ.get({env!r}):
    sys.path.insert(0, {tests!r})
    import figcheck

    figcheck.install(os.environ[{env!r}])
"""


def _seen(text: str, ismath) -> str:
    """What the reader sees of a string drawn with ``ismath``: mathtext as its glyphs."""
    if ismath is True:
        from matplotlib.font_manager import FontProperties
        from matplotlib.mathtext import MathTextParser

        parsed = MathTextParser("path").parse(text, 72, FontProperties())
        return "".join(chr(glyph[2]) for glyph in parsed.glyphs)
    return text


def _tick_labels(fig) -> dict[int, str]:
    """id of each tick label Text -> "<axes number>.<x|y><1|2>" (side 1 or 2 of the axis)."""
    owners = {}
    axes = list(fig.axes)
    for ax in list(axes):
        axes.extend(a for a in ax.child_axes if a not in axes)
    for number, ax in enumerate(axes):
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]:
                owners[id(tick.label1)] = f"{number}.{name}1"
                owners[id(tick.label2)] = f"{number}.{name}2"
    return owners


def svg_texts(fig, *, tight: bool | None = None) -> list[str]:
    """The texts of ``fig``'s SVG written with text as characters; ``tight``: cropped to
    its texts (by default where it has no layout engine, as the report saves it)."""
    import matplotlib

    buffer = io.BytesIO()
    if tight is None:
        tight = fig.get_layout_engine() is None
    draw = fig.draw

    def texts_only(renderer):  # the SVG's texts are all that is read: no path is written
        with _replaced(renderer, dict.fromkeys(PAINTING, _paint_nothing)):
            return draw(renderer)

    fig.draw = texts_only
    try:
        with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "check"}):
            fig.savefig(buffer, format="svg", bbox_inches="tight" if tight else None)
    finally:
        del fig.draw
    root = ElementTree.fromstring(buffer.getvalue())
    return [
        "".join(element.itertext())
        for element in root.iter("{http://www.w3.org/2000/svg}text")
        if "".join(element.itertext()).strip()
    ]


def record(fig, *, dpi: float = 150.0, laid_out: bool = False) -> dict:
    """Draw ``fig`` at ``dpi`` (that of the report's PNG; laid out and its texts placed,
    no pixel painted) and return what it shows: its canvas, texts and SVG texts
    (JSON-ready; boxes in pixels at ``dpi``).

    A figure with a layout engine is laid out once, at ``dpi``, as
    :func:`audit.report.outputs.render_figure` lays it out, and both drawings read that
    layout; ``laid_out``: the figure was just rendered at ``dpi`` and keeps the layout
    its files were drawn with, which is read as it is."""
    import matplotlib

    from audit.report.outputs import ENGINE_OFF, _lay_out

    engine = fig.get_layout_engine()
    original = fig.dpi
    try:
        with matplotlib.rc_context(ENGINE_OFF):
            if engine is not None:
                if not laid_out:
                    _lay_out(fig, engine, dpi)
                fig.set_layout_engine(None)  # laid out: drawn as it is
            fig.set_dpi(dpi)
            return _record(fig, tight=engine is None)
    finally:
        fig.set_dpi(original)
        if engine is not None:
            fig.set_layout_engine(engine)


#: The renderer's methods that paint pixels, other than text: a record needs none.
PAINTING = ("draw_path", "draw_markers", "draw_path_collection", "draw_quad_mesh",
            "draw_gouraud_triangles", "draw_image")  # fmt: skip


def _paint_nothing(*args, **kwargs) -> None:
    pass


@contextlib.contextmanager
def _replaced(renderer, methods: dict):
    """``renderer`` with ``methods`` in place of its own, then as it was: Agg's renderer
    holds some of its methods as attributes of its own (its C renderer's), which a
    figure drawn again later on the same canvas needs back."""
    own = {name: vars(renderer)[name] for name in methods if name in vars(renderer)}
    for name, method in methods.items():
        setattr(renderer, name, method)
    try:
        yield
    finally:
        for name in methods:
            if name in own:
                setattr(renderer, name, own[name])
            else:
                delattr(renderer, name)


def _record(fig, tight: bool) -> dict:
    from matplotlib.text import Text

    renderer = fig.canvas.get_renderer()
    drawn = []
    # a text of several lines is drawn line by line without naming its artist: the
    # artist being drawn is noted on the way in
    drawing: list = []
    draw = Text.draw

    def noting_artist(self, renderer):
        drawing.append(self)
        try:
            return draw(self, renderer)
        finally:
            drawing.pop()

    def noting(gc, x, y, s, prop, angle, ismath=False, mtext=None):
        drawn.append((s, ismath, mtext if mtext is not None else drawing[-1]))

    # the figure is laid out and its texts placed as for the PNG; nothing is painted
    # (what a reader sees of the texts is read from their strings, their boxes from
    # the renderer's metrics)
    Text.draw = noting_artist
    try:
        with _replaced(renderer, {"draw_text": noting, **dict.fromkeys(PAINTING, _paint_nothing)}):
            fig.draw(renderer)
    finally:
        Text.draw = draw
    owners = _tick_labels(fig)
    width, height = fig.bbox.width, fig.bbox.height
    if tight:  # saved with bbox_inches="tight": the tight box
        tight = fig.get_tightbbox(renderer)
        canvas = [v * fig.dpi for v in (tight.x0, tight.y0, tight.x1, tight.y1)]
    else:
        canvas = [0.0, 0.0, width, height]
    # a text of several lines is drawn line by line: one entry per artist
    artists: dict[int, tuple] = {}
    for s, ismath, artist in drawn:
        if artist is not None and s.strip():
            lines = artists.setdefault(id(artist), (artist, []))[1]
            lines.append(_seen(s, ismath))
    texts = []
    for artist, lines in artists.values():
        box = artist.get_window_extent(renderer)
        rotation = artist.get_rotation() % 180
        size = [box.width, box.height]
        if rotation % 90:
            artist.set_rotation(0)
            flat = artist.get_window_extent(renderer)
            artist.set_rotation(rotation)
            size = [flat.width, flat.height]
        elif rotation == 90:
            size = [box.height, box.width]
        texts.append(
            {
                "seen": "\n".join(lines),
                "raw": artist.get_text(),
                "box": [box.x0, box.y0, box.x1, box.y1],
                "rotation": rotation,
                "size": size,
                "axis": owners.get(id(artist)),
            }
        )
    return {
        "size": [width, height],
        "canvas": canvas,
        "texts": texts,
        "svg": svg_texts(fig, tight=tight),
    }


def _overlap(a: dict, b: dict) -> bool:
    """Whether two texts' boxes overlap by more than :data:`TOLERANCE` in both directions."""
    if a["rotation"] == b["rotation"] and a["rotation"] % 90:
        # same slant: compare the rotated rectangles in their own frame
        theta = math.radians(a["rotation"])
        ca = ((a["box"][0] + a["box"][2]) / 2, (a["box"][1] + a["box"][3]) / 2)
        cb = ((b["box"][0] + b["box"][2]) / 2, (b["box"][1] + b["box"][3]) / 2)
        dx, dy = cb[0] - ca[0], cb[1] - ca[1]
        along = abs(dx * math.cos(theta) + dy * math.sin(theta))
        across = abs(-dx * math.sin(theta) + dy * math.cos(theta))
        return (
            along < (a["size"][0] + b["size"][0]) / 2 - TOLERANCE
            and across < (a["size"][1] + b["size"][1]) / 2 - TOLERANCE
        )
    x0, y0, x1, y1 = a["box"]
    u0, v0, u1, v1 = b["box"]
    return min(x1, u1) - max(x0, u0) > TOLERANCE and min(y1, v1) - max(y0, v0) > TOLERANCE


def faults(data: dict, *, names=()) -> dict[str, list[str]]:
    """The faults of a :func:`record`, by kind (every kind of :data:`KINDS` present).

    ``names``: strings the figure draws as written (user names that may hold ``$``
    or a backslash); they are not markup.
    """
    found: dict[str, list[str]] = {kind: [] for kind in KINDS}
    for text in data["svg"]:
        rest = text
        for name in sorted(names, key=len, reverse=True):
            rest = rest.replace(name, "")
        if MARKUP.search(rest):
            found["raw markup"].append(repr(text))
    by_axis: dict[str, list[dict]] = {}
    for text in data["texts"]:
        if text["axis"]:
            by_axis.setdefault(text["axis"], []).append(text)
    for axis, labels in by_axis.items():
        for i, a in enumerate(labels):
            for b in labels[i + 1 :]:
                if _overlap(a, b):
                    found["tick overlap"].append(f"axis {axis}: {a['seen']!r} and {b['seen']!r}")
    x0, y0, x1, y1 = data["canvas"]
    for text in data["texts"]:
        u0, v0, u1, v1 = text["box"]
        past = max(x0 - u0, y0 - v0, u1 - x1, v1 - y1)
        if past > TOLERANCE:
            found["outside canvas"].append(f"{text['seen']!r} by {past:.0f} px")
    return found


def named(data: dict, names) -> set[str]:
    """The ``names`` that a text of the figure shows whole: as a line of its own, or
    followed by a parenthesis (``name (0.97)``)."""
    lines = {line.strip() for text in data["texts"] for line in text["seen"].split("\n")}
    return {
        str(name)
        for name in names
        if str(name) in lines or any(line.startswith(f"{name} (") for line in lines)
    }


# ------------------------------------------------------------------ in the notebook kernel


def install(folder: str | os.PathLike) -> None:
    """Make :func:`audit.report.outputs.save_figure` write each figure's :func:`record`
    as ``<folder>/<figure name>.json`` once it has saved the figure, and the figures a
    :class:`audit.report.drawing.Drawing` hands to its worker process likewise, there."""
    from audit.report import drawing, outputs

    original = outputs.save_figure

    def save_figure(fig, name, output_dir, **options):
        paths = original(fig, name, output_dir, **options)
        data = record(fig, dpi=options.get("dpi", 150), laid_out=True)
        stem = Path(paths[0]).stem
        Path(folder, f"{stem}.json").write_text(json.dumps(data))
        return paths

    outputs.save_figure = save_figure
    submit = drawing.Drawing._submit

    def _submit(self, function, args, kwargs, name, *rest):
        if self.workers:  # else drawn here, by save_figure
            function = Recorded(function, str(folder), name)
        return submit(self, function, args, kwargs, name, *rest)

    drawing.Drawing._submit = _submit


class Recorded:
    """A figure function as a drawing worker calls it: it first makes the worker's
    :func:`audit.report.outputs.render_figure` write the figure's :func:`record` as
    ``<folder>/<figure name>.json`` once it has rendered it."""

    def __init__(self, function, folder: str, name: str):
        self.function, self.folder, self.name = function, folder, name

    def __call__(self, *args, **kwargs):
        from audit.report import outputs

        original = getattr(outputs.render_figure, "original", outputs.render_figure)
        stem = outputs.figure_paths(self.name, ".")[0].stem

        def render_figure(fig, **options):
            rendered = original(fig, **options)
            data = record(fig, dpi=options.get("dpi", 150), laid_out=True)
            Path(self.folder, f"{stem}.json").write_text(json.dumps(data))
            return rendered

        render_figure.original = original
        outputs.render_figure = render_figure
        return self.function(*args, **kwargs)


def kernel_hook(root: Path, monkeypatch) -> Path:
    """Have every notebook kernel started from now on (in this test) record its figures
    under the returned folder: an IPython profile whose startup file calls :func:`install`."""
    startup = root / "ipython" / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    tests = str(Path(__file__).resolve().parent)
    (startup / "00-figure-check.py").write_text(_STARTUP.format(env=ENVIRONMENT, tests=tests))
    folder = root / "figure-records"
    folder.mkdir(exist_ok=True)
    monkeypatch.setenv("IPYTHONDIR", str(root / "ipython"))
    monkeypatch.setenv(ENVIRONMENT, str(folder))
    return folder


def read_records(folder: Path) -> dict[str, dict]:
    """The records :func:`install` wrote, by figure name."""
    return {path.stem: json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))}
