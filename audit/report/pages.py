"""The HTML page of an executed notebook, as nbconvert's ``HTMLExporter`` writes it.

nbconvert renders the page from its template, then parses the whole page with
BeautifulSoup to mark it for readers: an ``alt`` text on each image without one,
``tabindex="0"`` on each cell's input and output, so a keyboard reaches them.  On a
report's FFMC page (1.7 MB, its figures inline) that parse and the page written
back take 0.15-0.3 s, and importing BeautifulSoup and compiling its selectors
0.25 s more, in the command, while the notebooks need both cores.
:class:`PageExporter` renders the same template and adds the same marks to the
tags the page has, as written (:func:`mark_for_readers`): the page is the one
nbconvert writes, up to how BeautifulSoup writes markup back (``<br/>`` for
``<br>``, quotes, entities), which a reader's browser reads alike.
"""

from __future__ import annotations

import re

from nbconvert import HTMLExporter
from nbconvert.exporters.templateexporter import TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter

#: nbconvert's ``alt`` text for an image without one (``HTMLExporter``).
NO_DESCRIPTION = "No description has been provided for this image"

#: The classes of the elements nbconvert makes reachable by keyboard
#: (``.jp-Notebook div.jp-Cell-inputWrapper``, ``.jp-Notebook div.jp-OutputArea-output``).
FOCUSABLE = frozenset({"jp-Cell-inputWrapper", "jp-OutputArea-output"})

# What Python's HTML parser (BeautifulSoup's "html.parser") reads as markup: not a
# comment, nor the text of a script or a style; there, the start tags of images and
# divs (a quoted value may hold a ">"), each attribute of a tag, and the page's
# jp-Notebook element, within which nbconvert's selectors find the cells.
_NOT_MARKUP = re.compile(
    r"<!--.*?(?:-->|\Z)|<(script|style)(?=[\s/>]).*?(?:</\1\s*>|\Z)", re.S | re.I
)
_START_TAG = re.compile(r"""<(img|div)(?=[\s/>])((?:[^>"']|"[^"]*"|'[^']*')*?)(/?)>""", re.I)
_ANY_START_TAG = re.compile(r"""<[a-zA-Z][^\s/>]*((?:[^>"']|"[^"]*"|'[^']*')*)>""")
_ATTRIBUTE = re.compile(r"""([^\s"'>/=]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s>]+))?""")


def mark_for_readers(page: str) -> str:
    """``page`` with the marks nbconvert's ``HTMLExporter`` gives a page for readers:
    ``alt="No description has been provided for this image"`` on each ``<img>`` without
    an ``alt``, and ``tabindex="0"`` on each ``<div>`` of class ``jp-Cell-inputWrapper``
    or ``jp-OutputArea-output`` within the ``jp-Notebook`` element (the page's body),
    replacing a tabindex it has.  A new attribute is written last in its tag, where
    BeautifulSoup puts it; nothing else of the page changes.

    >>> mark_for_readers('<body class="jp-Notebook"><div class="a jp-OutputArea-output">'
    ...                  '<img src="x.png"></div><!-- <img> --></body>')
    '<body class="jp-Notebook"><div class="a jp-OutputArea-output" tabindex="0"><img src="x.png" alt="No description has been provided for this image"></div><!-- <img> --></body>'
    """
    kept = [match.span() for match in _NOT_MARKUP.finditer(page)]
    notebook = _notebook_start(page, kept)
    pieces, done = [], 0
    for match in _START_TAG.finditer(page):
        start = match.start()
        if _inside(start, kept):
            continue
        tag, attributes, closing = match.group(1).lower(), match.group(2), match.group(3)
        names = _attributes(attributes)
        if tag == "img" and "alt" not in names:
            attributes = f'{attributes.rstrip()} alt="{NO_DESCRIPTION}"'
        elif (
            tag == "div"
            and notebook is not None
            and start > notebook
            and FOCUSABLE.intersection(_classes(names))
        ):
            if "tabindex" in names:
                given = names["tabindex"]
                attributes = f'{attributes[: given.start()]}tabindex="0"{attributes[given.end() :]}'
            else:
                attributes = f'{attributes.rstrip()} tabindex="0"'
        else:
            continue
        pieces += [page[done : match.start(2)], attributes + (" " if closing else "")]
        done = match.end(2)
    return "".join(pieces) + page[done:]


def _attributes(text: str) -> dict[str, re.Match]:
    """The attributes of a start tag's ``text``, by lower-case name."""
    return {m.group(1).lower(): m for m in _ATTRIBUTE.finditer(text)}


def _classes(attributes: dict[str, re.Match]) -> list[str]:
    """The class names of a tag of ``attributes``."""
    value = attributes.get("class")
    return [] if value is None or value.group(2) is None else value.group(2).strip("\"'").split()


def _notebook_start(page: str, kept: list[tuple[int, int]]) -> int | None:
    """Where the first tag of class ``jp-Notebook`` starts in ``page``, outside ``kept``."""
    for match in _ANY_START_TAG.finditer(page):
        if not _inside(match.start(), kept) and "jp-Notebook" in _classes(
            _attributes(match.group(1))
        ):
            return match.start()
    return None


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= position < end for start, end in spans)


class PageExporter(HTMLExporter):
    """nbconvert's ``HTMLExporter``, its marks for readers added to the tags as written
    (:func:`mark_for_readers`) rather than by parsing the page with BeautifulSoup."""

    def from_notebook_node(self, nb, resources=None, **kw):
        # HTMLExporter.from_notebook_node up to its BeautifulSoup pass
        language = nb.metadata.get("language_info", {})
        lexer = language.get("pygments_lexer", language.get("name", None))
        highlight = self.filters.get(
            "highlight_code", Highlight2HTML(pygments_lexer=lexer, parent=self)
        )
        resources = self._init_resources(resources)
        data_types = WidgetsDataTypeFilter(
            notebook_metadata=self._nb_metadata, parent=self, resources=resources
        )
        self.register_filter("highlight_code", highlight)
        self.register_filter("filter_data_type", data_types)
        page, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        return mark_for_readers(page), resources
