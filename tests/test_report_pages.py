"""A whole report from the command line, as a user sees it: the terminal says one line
per stage (no kernel's warning), and no page of the report loads a script, a style
sheet or a font from outside it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest

from audit.report import runner

pytestmark = pytest.mark.slow

#: Elements whose address the browser fetches by itself (an ``<a>`` only when clicked).
FETCHED = {
    "script": ("src",),
    "link": ("href",),
    "img": ("src", "srcset"),
    "iframe": ("src",),
    "frame": ("src",),
    "embed": ("src",),
    "object": ("data",),
    "source": ("src", "srcset"),
    "audio": ("src",),
    "video": ("src", "poster"),
    "track": ("src",),
    "image": ("href", "xlink:href"),
    "use": ("href", "xlink:href"),
    "input": ("src",),
    "base": ("href",),
}
#: In a style sheet: @import, url(...) (fonts included); in a script: import and fetch.
CSS_ADDRESS = re.compile(r"""@import\s+(?:url\()?\s*['"]?([^'")\s;]+)|url\(\s*['"]?([^'")]+)""")
SCRIPT_ADDRESS = re.compile(r"""(?:\bimport\b[^'"]*|\bfetch\(\s*)['"]([^'"]+)['"]""")


def _outside(address: str) -> bool:
    """Whether ``address`` leaves the report: a scheme other than data:, or ``//host``."""
    address = address.strip()
    parts = urlsplit(address)
    return address.startswith("//") or (parts.scheme not in ("", "data") and bool(parts.scheme))


class _Fetches(HTMLParser):
    """Every address a page would load from outside the report."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.inside: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in FETCHED.get(tag, ()):
            value = attrs.get(name) or ""
            # a srcset lists "address width, address width"; other attributes one address
            for address in re.split(r",\s+", value) if name == "srcset" else [value]:
                if address.strip() and _outside(address.split()[0]):
                    self.found.append(f"<{tag} {name}={address}>")
        if attrs.get("style"):
            self._css(attrs["style"], f"<{tag} style>")
        self.inside = tag if tag in ("style", "script") else None

    def handle_endtag(self, tag):
        self.inside = None

    def handle_data(self, data):
        if self.inside == "style":
            self._css(_without_comments(data), "<style>")
        elif self.inside == "script":
            for address in SCRIPT_ADDRESS.findall(data):
                if _outside(address):
                    self.found.append(f"<script> loads {address}")

    def _css(self, text, where):
        for groups in CSS_ADDRESS.findall(text):
            address = next(g for g in groups if g)
            if _outside(address):
                self.found.append(f"{where} {address}")


def _without_comments(css: str) -> str:
    return re.sub(r"/\*.*?\*/", "", css, flags=re.S)


def external_fetches(page: str) -> list[str]:
    parser = _Fetches()
    parser.feed(page)
    return parser.found


def test_the_checker_finds_what_a_page_would_fetch():
    page = """<html><head>
    <script src="https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/latest.js"></script>
    <link rel="stylesheet" href="//fonts.example.org/css">
    <style>/* https://example.org in a comment */ @import url("http://x.org/a.css");
    @font-face { font-family: f; src: url(https://x.org/f.woff2) format("woff2"); }
    .ok { background: url(data:image/png;base64,AAAA); }</style>
    <script type="module">import mermaid from "https://cdn.example.org/m.mjs";</script>
    </head><body><a href="https://doi.org/10.1109/x">a paper</a>
    <img src="data:image/png;base64,AAAA"><img src="figures/a.png">
    <div style="background: url('https://x.org/b.png')"></div></body></html>"""
    assert external_fetches(page) == [
        "<script src=https://cdnjs.cloudflare.com/ajax/libs/mathjax/2.7.7/latest.js>",
        "<link href=//fonts.example.org/css>",
        "<style> http://x.org/a.css",
        "<style> https://x.org/f.woff2",
        "<script> loads https://cdn.example.org/m.mjs",
        "<div style> https://x.org/b.png",
    ]


#: A temporary folder whose path is too long for a socket's in it (a Unix socket's path
#: holds 107 bytes): the kernels' sockets are then made in /tmp (see
#: tests/test_report_kernels.py), and the report runs as anywhere else.
DEEP = "t" * 90


@pytest.fixture(scope="module")
def report(small_table, tmp_path_factory):
    """``audit report`` on the small table, in its own process, without a progress bar,
    with TMPDIR a folder too deep for a socket (:data:`DEEP`)."""
    root = tmp_path_factory.mktemp("reports")
    deep = tmp_path_factory.mktemp("tmp") / DEEP
    deep.mkdir()
    command = [sys.executable, "-m", "audit", "report", str(small_table)]
    command += ["--name", "small", "--reports-dir", str(root), "--no-progress"]
    command += ["-p", "n_replicates", "20", "-p", "verdict_replicates", "2"]
    command += ["-p", "n_random", "50", "-p", "alpha_step", "0.1"]
    command += ["-p", "measures", '["garbe"]']  # the pages are under test: one measure's figures
    environment = {**os.environ, "TMPDIR": str(deep)}
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=environment)
    assert done.returncode == 0, done.stderr
    assert len(str(deep)) > 107  # (every socket path in it too long)
    return root / "small", done


def test_one_line_per_stage_and_no_kernel_warning(report):
    folder, done = report
    lines = done.stderr.splitlines()
    assert "IPKernelApp" not in done.stderr and "WARNING" not in done.stderr
    notebooks = ["ffmc_audit.ipynb", "pareto_downselect.ipynb"]
    expected = [runner.RUNNING.format(notebook=n) for n in notebooks]
    expected += [runner.RENDERING.format(notebook=n) for n in notebooks]
    assert sorted(lines[:-1]) == sorted(f"audit: {line}" for line in expected)
    assert lines[-1] == f"audit: {runner.FRONT_PAGE}"
    assert done.stdout == f"report written to {folder}\nopen {folder / 'index.html'}\n"


def test_no_page_loads_anything_from_outside_the_report(report):
    folder, _ = report
    pages = sorted(folder.rglob("*.html"))
    assert [p.name for p in pages] == ["ffmc.html", "index.html", "pareto.html"]
    for page in pages:
        assert external_fetches(page.read_text(encoding="utf-8")) == [], page.name
    notebook_page = (folder / "pareto.html").read_text(encoding="utf-8")
    assert "<script" not in notebook_page and "mathjax" not in notebook_page.lower()


def test_each_notebook_page_is_what_an_exporter_of_its_own_renders(report):
    """The report's one exporter, made while the kernels started and used for both
    notebooks (side by side), renders each page as an exporter made for it alone would."""
    import nbformat

    folder, _ = report
    for notebook in ("ffmc", "pareto"):
        alone = runner._exporter.__wrapped__()  # made afresh, as the cached one was
        node = nbformat.read(folder / f"{notebook}.ipynb", as_version=4)
        page = (folder / f"{notebook}.html").read_text(encoding="utf-8")
        assert page == alone.from_notebook_node(node)[0], notebook
        assert "Fairness" in page or "Pareto" in page


def test_the_stage_lines_of_notebooks_running_side_by_side_come_whole():
    """Two notebooks' threads say their stages at once: each line is written whole (a
    ``print`` writes a line and its end apart, so two could run into one line)."""
    import threading
    import time

    written: list[str] = []

    def notify(message: str) -> None:  # as print does: the text, then the end
        written.append(message)
        time.sleep(0.005)
        written.append("\n")

    shown = runner._Progress("x", 0, False, notify)
    threads = [
        threading.Thread(target=lambda n=n: [shown.stage(f"running {n}", n) for _ in range(20)])
        for n in ("ffmc", "pareto")
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = "".join(written).splitlines()
    assert sorted(set(lines)) == ["running ffmc", "running pareto"] and len(lines) == 40


def test_the_bar_names_only_the_notebooks_still_running_or_rendering(capsys):
    shown = runner._Progress("x", 4, True, print)
    shown.stage(runner.RUNNING.format(notebook="ffmc_audit.ipynb"), "ffmc")
    shown.stage(runner.RENDERING.format(notebook="pareto_downselect.ipynb"), "pareto")
    assert shown.bar.postfix == "ffmc running, pareto rendering"
    shown.done("pareto")  # finished: no longer said to be rendering
    assert shown.bar.postfix == "ffmc running"
    shown.done("ffmc")
    assert shown.bar.postfix == ""
    shown.close()
    assert "pareto rendering" in capsys.readouterr().err  # the bar was drawn
