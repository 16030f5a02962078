"""The HTML page of an executed notebook, as nbconvert's ``HTMLExporter`` writes it.

nbconvert renders the page from its template, then parses the whole page with
BeautifulSoup to mark it for readers: an ``alt`` text on each image without one,
``tabindex="0"`` on each cell's input and output, so a keyboard reaches them.  On a
report's FFMC page (1.7 MB, its figures inline) that parse and the page written
back take 0.15-0.3 s, and compiling its CSS selectors 0.15 s more, in the command,
while the notebooks need both cores.
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

# What Python's HTML parser (BeautifulSoup's "html.parser") reads, token after token: a
# comment, or a tag (a quoted value may hold a ">", or what looks like a tag or a
# comment); the text of a script or a style, up to its end tag, holds no markup.
_TOKEN = re.compile(
    r"""<!--.*?(?:-->|\Z)|<(/?)([a-zA-Z][^\s/>]*)((?:[^>"']|"[^"]*"|'[^']*')*?)(/?)>""", re.S
)
_RAW_TEXT = {name: re.compile(rf"</{name}(?=[\s/>])[^>]*>", re.I) for name in ("script", "style")}
_ATTRIBUTE = re.compile(r"""([^\s"'>/=]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s>]+))?""")


def mark_for_readers(page: str) -> str:
    """``page`` with the marks nbconvert's ``HTMLExporter`` gives a page for readers:
    ``alt="No description has been provided for this image"`` on each ``<img>`` without
    an ``alt``, and ``tabindex="0"`` on each ``<div>`` of class ``jp-Cell-inputWrapper``
    or ``jp-OutputArea-output`` after the start of the first element of class
    ``jp-Notebook`` (the page's body), replacing a tabindex it has.  A new attribute is
    written last in its tag, where BeautifulSoup puts it; nothing else of the page
    changes.

    >>> mark_for_readers('<body class="jp-Notebook"><div class="a jp-OutputArea-output">'
    ...                  '<img src="x.png"></div><!-- <img> --></body>')
    '<body class="jp-Notebook"><div class="a jp-OutputArea-output" tabindex="0"><img src="x.png" alt="No description has been provided for this image"></div><!-- <img> --></body>'
    """
    pieces, done, inside = [], 0, False  # inside: after the jp-Notebook element's start
    for tag in _start_tags(page):
        name, attributes, closing = tag.group(2).lower(), tag.group(3), tag.group(4)
        names = _attributes(attributes)
        classes = _classes(names)
        if name == "img" and "alt" not in names:
            marked = f'{attributes.rstrip()} alt="{NO_DESCRIPTION}"'
        elif name == "div" and inside and FOCUSABLE.intersection(classes):
            given = names.get("tabindex")
            marked = (
                f'{attributes.rstrip()} tabindex="0"'
                if given is None
                else f'{attributes[: given.start()]}tabindex="0"{attributes[given.end() :]}'
            )
        else:
            marked = None
        inside = inside or "jp-Notebook" in classes
        if marked is not None:
            pieces += [page[done : tag.start(3)], marked + (" " if closing else "")]
            done = tag.end(3)
    return "".join(pieces) + page[done:]


def _start_tags(page: str):
    """The start tags of ``page``, in order, read token after token (:data:`_TOKEN`)."""
    at = 0
    while (token := _TOKEN.search(page, at)) is not None:
        at = token.end()
        if token.group(2) is None or token.group(1):  # a comment, an end tag
            continue
        yield token
        raw = _RAW_TEXT.get(token.group(2).lower())
        if raw is not None:  # a script's or a style's text, to its end tag
            end = raw.search(page, at)
            at = len(page) if end is None else end.end()


def _attributes(text: str) -> dict[str, re.Match]:
    """The attributes of a start tag's ``text``, by lower-case name."""
    return {m.group(1).lower(): m for m in _ATTRIBUTE.finditer(text)}


def _classes(attributes: dict[str, re.Match]) -> list[str]:
    """The class names of a tag of ``attributes``."""
    value = attributes.get("class")
    return [] if value is None or value.group(2) is None else value.group(2).strip("\"'").split()


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
