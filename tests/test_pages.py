"""A notebook's page is the page nbconvert's ``HTMLExporter`` writes: its marks for readers
(alt texts, tabindex) added to the tags as written (:mod:`audit.report.pages`) give, read
by BeautifulSoup, the page nbconvert writes after reading it with BeautifulSoup."""

from __future__ import annotations

import base64
import json
import re

import nbformat
import pytest
from bs4 import BeautifulSoup
from hypothesis import given, settings
from hypothesis import strategies as st
from nbconvert import HTMLExporter

from audit.report import runner
from audit.report.pages import NO_DESCRIPTION, PageExporter, mark_for_readers

pytestmark = pytest.mark.usefixtures("shared_server")  # the built reports it reads

OPTIONS = dict(
    template_name="lab",
    raw_template=runner.OFFLINE_TEMPLATE,
    exclude_input=True,
    exclude_input_prompt=True,
    exclude_output_prompt=True,
)


def nbconvert_marks(page: str) -> str:
    """nbconvert's own pass (``HTMLExporter.from_notebook_node``, after the template)."""
    soup = BeautifulSoup(page, features="html.parser")
    for elem in soup.select("img:not([alt])"):
        elem.attrs["alt"] = NO_DESCRIPTION
    for elem in soup.select(".jp-Notebook div.jp-Cell-inputWrapper"):
        elem.attrs["tabindex"] = "0"
    for elem in soup.select(".jp-Notebook div.jp-OutputArea-output"):
        elem.attrs["tabindex"] = "0"
    return str(soup)


def as_read(page: str) -> str:
    return str(BeautifulSoup(page, features="html.parser"))


#: The shared reports (tests/conftest.py), one of each kind a command writes.
BUILT = ["annex15_built", "fmr_only_built", "compare_built", "crossgroup_built", "scores_built"]


def assert_pages_alike(notebook) -> str:
    theirs, _ = HTMLExporter(**OPTIONS).from_notebook_node(notebook)
    ours, _ = PageExporter(**OPTIONS).from_notebook_node(notebook)
    assert as_read(ours) == theirs
    return ours


@pytest.mark.parametrize("built", BUILT)
def test_every_report_page_is_nbconverts(built, request):
    report = request.getfixturevalue(built).report
    notebooks = sorted(report.glob("*.ipynb"))
    assert notebooks
    for path in notebooks:
        page = assert_pages_alike(nbformat.read(path, as_version=4))
        assert (report / f"{path.stem}.html").read_text(encoding="utf-8") == page
        assert page.count(f'alt="{NO_DESCRIPTION}"') == page.count("<img ")
        assert 'tabindex="0"' in page


#: An object's default repr (``<package.Class object at 0x7f...>``): what a cell shows
#: when its last line returns a value the reader has no use for (a drawing's job, say).
OBJECT_REPR = re.compile(r"<[\w.]+(?: object)? at 0x[0-9a-fA-F]+>")


@pytest.mark.parametrize("built", BUILT)
def test_no_page_shows_an_objects_repr(built, request):
    report = request.getfixturevalue(built).report
    for path in sorted(report.glob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                # what the page shows: text/plain only where there is nothing richer (a
                # styled table's text/plain is its repr, shown by no page)
                text = output.get("text", "") + (
                    "" if set(data) - {"text/plain"} else json.dumps(data)
                )
                shown = OBJECT_REPR.search(text)
                assert shown is None, f"{path.name}: {shown.group()} under {cell.source[:60]!r}"


#: A table cell pandas cut to its default 50 characters: 47 of them, then "...".
CUT_CELL = re.compile(r"<td>([^<]{44,}\.\.\.)</td>")


@pytest.mark.parametrize("built", BUILT)
def test_no_table_cell_of_a_page_is_cut_short(built, request):
    """Unless told otherwise, pandas shows 50 characters of a cell: the compare page's
    file paths ('/work/shared/data/nist-frvt-annex15/nist-frvt3...') and the FFMC page's
    n/a reasons ('FMR-only table: computed on the FMR term alone...') were cut."""
    report = request.getfixturevalue(built).report
    for page in sorted(report.glob("*.html")):
        cut = CUT_CELL.findall(page.read_text(encoding="utf-8"))
        assert cut == [], f"{page.name}: {cut[:3]}"
    assert CUT_CELL.findall("<td>" + "x" * 47 + "...</td><td>short...</td>") == ["x" * 47 + "..."]


#: Markup a notebook's HTML output may hold, hostile to a reading of tags by pattern.
HOSTILE = [
    '<img src="a.png">',
    "<IMG SRC='b.png'>",
    '<img src="c.png" alt="said">',
    "<img alt src=d.png>",
    '<img src="e.png"/>',
    '<img\nsrc="f.png"\n>',
    '<img src="a>b.png" title=\'x>"y\'>',
    "<imgx src=g.png>",
    '<div class="jp-OutputArea-output">x</div>',
    "<div class=jp-Cell-inputWrapper tabindex=5>y</div>",
    '<DIV CLASS="a jp-OutputArea-output b" TabIndex="-1">z</DIV>',
    '<div class="jp-OutputArea-outputs">w</div>',
    '<div title="<img src=h.png>" class="jp-Cell-inputWrapper">v</div>',
    "<!-- <img src=i.png> <div class='jp-OutputArea-output'> -->",
    "<style>/* <img src=j.png> */ p{color:red}</style>",
    "<script>var s = '<div class=\"jp-OutputArea-output\">';</script>",
    "<p>a &lt;img src=k.png&gt; b</p>",
    "<span class='jp-OutputArea-output'>s</span>",
    '<span title="<img src=q.png>">t</span>',
    "<a title='<div class=\"jp-OutputArea-output\">'>u</a>",
    '<p>a</p title="<img src=r.png>">',
    '<span title="<!-- x">v</span>',
    "<script>if (a < b) {}</script><img src=s.png>",
]


def test_a_notebook_of_hostile_markup_is_paged_as_nbconvert_pages_it():
    notebook = nbformat.v4.new_notebook()
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(64)).decode()
    notebook.cells = [
        nbformat.v4.new_markdown_cell("# A title\n\n<img src='m.png'> and `<div>`"),
        nbformat.v4.new_code_cell(
            "x",
            outputs=[
                nbformat.v4.new_output("display_data", {"text/html": "\n".join(HOSTILE)}),
                nbformat.v4.new_output("display_data", {"image/png": png}),
                nbformat.v4.new_output("stream", name="stdout", text="<img src=n.png>\n"),
            ],
        ),
    ]
    page = assert_pages_alike(notebook)
    assert "<IMG SRC='b.png' alt=" in page and 'alt="said"' in page


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(HOSTILE), max_size=8), st.sampled_from(["", "<div>", "<p>"]))
def test_any_hostile_markup_is_marked_as_nbconvert_marks_it(fragments, before):
    """Outside the notebook's element (a head, a div before it) no div is made focusable;
    images are given their alt text everywhere."""
    page = (
        f"<html><head><style>img{{}}</style></head>{before}{''.join(fragments)}"
        f'<body class="jp-Notebook">{"".join(fragments)}</body></html>'
    )
    assert as_read(mark_for_readers(page)) == nbconvert_marks(page)


def test_a_page_without_a_notebook_element_gets_alt_texts_only():
    page = '<div class="jp-OutputArea-output"><img src="a.png"></div>'
    assert mark_for_readers(page) == (
        f'<div class="jp-OutputArea-output"><img src="a.png" alt="{NO_DESCRIPTION}"></div>'
    )
    assert as_read(mark_for_readers(page)) == nbconvert_marks(page)
