"""A notebook's parameters read from its ``parameters`` cell with :mod:`ast`, without
importing papermill: the same names, defaults and help as papermill's own reading
(the oracle), annotated or not, with trailing comments."""

from __future__ import annotations

import ast
import json

import papermill
import pytest
from hypothesis import given
from hypothesis import strategies as st
from processes import imported_by

from audit.exceptions import UsageError
from audit.report import runner
from audit.report.parameters import (
    _LINES,
    _segment,
    code_cells,
    notebook_parameters,
    parse_parameters,
)


@pytest.mark.parametrize("notebook", sorted(runner.NOTEBOOKS))
def test_every_notebook_reads_as_papermill_reads_it(notebook):
    path = runner.notebook_path(notebook)
    ours = notebook_parameters(path)
    theirs = papermill.inspect_notebook(str(path))
    assert list(ours) == list(theirs)
    for name, parameter in ours.items():
        assert parameter.source == theirs[name]["default"]
        assert parameter.help == theirs[name]["help"]
    assert runner.declared_parameters(notebook) == list(theirs)


CELL = """\
# Parameters (papermill overrides these)
alpha: float = 0.5  # weight of the FMR term
measures: list[str] | None = None  # list of measure names; None: every registered measure
groupings = [["gender"], ["nationality"]]  # VoxCeleb groupings
n_random: int = 2000
label = "a # not a comment"  # the comment
spread = (1,
          2)  # over two lines
path = str(None)  # not a literal
x = y = 3
a.b = 4
"""


def test_annotations_comments_and_layouts():
    found = parse_parameters(CELL)
    assert list(found) == ["alpha", "measures", "groupings", "n_random", "label", "spread", "path"]
    assert [(p.default, p.annotation, p.help) for p in found.values()] == [
        (0.5, "float", "weight of the FMR term"),
        (None, "list[str] | None", "list of measure names; None: every registered measure"),
        ([["gender"], ["nationality"]], None, "VoxCeleb groupings"),
        (2000, "int", ""),
        ("a # not a comment", None, "the comment"),
        ((1, 2), None, "over two lines"),
        (None, None, "not a literal"),
    ]
    assert found["path"].source == "str(None)" and not found["path"].literal
    assert found["measures"].literal


#: Sources whose lines ast numbers apart from str.splitlines: CR and CRLF ends, a form
#: feed, a Unicode line break and wide characters inside strings, values over lines.
ODD = [
    CELL.replace("\n", "\r\n"),
    CELL.replace("\n", "\r"),
    'a = "\x0c"  # form feed before\nb: "Optional[str]" = "\u2028é"  # after a break\nc = 1',
    'name = "naïve ✓"  # wide\r\nlong = [1,\r\n  2,\n  3]  # three lines\nz: int = 0',
]


@pytest.mark.parametrize("source", [CELL, *ODD])
def test_each_segment_is_the_one_ast_gives(source):
    """:func:`_segment` is :func:`ast.get_source_segment` (the oracle), from lines split
    once for the whole cell; the help is the comment on the value's last line."""
    lines = _LINES.findall(source)
    for node in ast.walk(ast.parse(source)):
        if hasattr(node, "end_col_offset") and node.end_col_offset is not None:
            assert _segment(lines, node) == ast.get_source_segment(source, node)
    found = parse_parameters(source)
    if source.startswith("a = "):
        assert [(p.source, p.help) for p in found.values()] == [
            ('"\x0c"', "form feed before"),
            ('"\u2028é"', "after a break"),
            ("1", ""),
        ]
    if source.startswith("name"):
        assert found["long"].default == [1, 2, 3] and found["long"].help == "three lines"
        assert found["name"].help == "wide"


@given(st.text(alphabet='ab=1#\r\n\x0c\u2028é "', max_size=40))
def test_lines_are_split_as_ast_splits_them(text):
    assert _LINES.findall(text) == ast._splitlines_no_ff(text)


def test_an_undeclared_parameter_is_refused_before_any_work(tmp_path):
    """The runner refuses a key no notebook declares from the ast reading alone."""
    with pytest.raises(UsageError) as error:
        runner.run_report(
            "x",
            notebooks=("pareto",),
            parameters={"alpah": 0.3},
            reports_root=tmp_path / "r",
            progress=False,
        )
    known = sorted(runner.declared_parameters("pareto"))
    assert str(error.value) == runner.UNKNOWN_PARAMETER.format(
        key="alpah", notebooks=["pareto"], known=known
    )
    assert not (tmp_path / "r").exists()


def test_no_parameters_cell_declares_nothing(tmp_path):
    path = tmp_path / "n.ipynb"
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "source": "x=1"}]}))
    assert notebook_parameters(path) == {}


def test_code_cells_count_what_a_kernel_runs():
    notebook = {
        "cells": [
            {"cell_type": "markdown", "source": "# a"},
            {"cell_type": "code", "source": ["x = 1\n", "y = 2"]},
            {"cell_type": "code", "source": "  \n"},
            {"cell_type": "code", "source": "print(x)"},
        ]
    }
    assert code_cells(notebook) == 2


def test_reading_parameters_imports_no_papermill():
    code = (
        "from audit.report.runner import declared_parameters\n"
        "declared_parameters('ffmc'); declared_parameters('pareto')\n"
    )
    assert imported_by(code, ["papermill", "nbformat", "nbclient"]) == []
