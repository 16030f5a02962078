"""A notebook's declared parameters, read from its ``parameters`` cell without papermill.

papermill injects a run's values after the cell tagged ``parameters``; what that
cell assigns is what a notebook declares. Reading it needs only the notebook's
JSON and :mod:`ast`, so checking a run's parameters costs no import of papermill
(which executes the notebooks later). Each top-level assignment of one name is
a parameter, annotated or not, with its trailing comment as its help::

    alpha: float = 0.5  # weight of the FMR term
    measures = None     # list of measure names; None: every registered measure
"""

from __future__ import annotations

import ast
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Parameter:
    """One parameter of a notebook's ``parameters`` cell.

    ``default`` is the value as a Python literal, ``None`` when the text is not a
    literal (``literal`` says which); ``source`` is the text as written.
    """

    name: str
    default: object
    source: str
    literal: bool
    annotation: str | None
    help: str


def read_notebook(path: str | os.PathLike) -> dict:
    """The notebook at ``path`` as its JSON (no validation)."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def parameters_cell(notebook: dict) -> str | None:
    """The source of the first cell tagged ``parameters`` (as papermill finds it)."""
    for cell in notebook.get("cells", []):
        if "parameters" in cell.get("metadata", {}).get("tags", []):
            source = cell.get("source", "")
            return "".join(source) if isinstance(source, list) else source
    return None


#: A source's lines as :mod:`ast` numbers them, each with its end: split at ``\r\n``, ``\r``
#: and ``\n`` only (:meth:`str.splitlines` also splits at form feeds and Unicode breaks).
_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _segment(lines: list[str], node: ast.AST) -> str:
    """The source text of ``node`` from the source's :data:`_LINES`: what
    :func:`ast.get_source_segment` returns, without splitting the whole source again
    for each node (ast counts columns in bytes of UTF-8)."""
    first, last = node.lineno - 1, node.end_lineno - 1
    if first == last:
        return lines[first].encode("utf-8")[node.col_offset : node.end_col_offset].decode("utf-8")
    return "".join(
        [
            lines[first].encode("utf-8")[node.col_offset :].decode("utf-8"),
            *lines[first + 1 : last],
            lines[last].encode("utf-8")[: node.end_col_offset].decode("utf-8"),
        ]
    )


def parse_parameters(source: str) -> dict[str, Parameter]:
    """The parameters a ``parameters`` cell's source assigns, in order.

    >>> cell = 'alpha: float = 0.5  # weight of the FMR term\\nname = "x"'
    >>> [(p.name, p.default, p.annotation, p.help) for p in parse_parameters(cell).values()]
    [('alpha', 0.5, 'float', 'weight of the FMR term'), ('name', 'x', None, '')]
    """
    lines = _LINES.findall(source)
    found: dict[str, Parameter] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, annotation = node.targets[0], None
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, annotation = node.target, _segment(lines, node.annotation)
        else:
            continue
        if not isinstance(target, ast.Name):
            continue
        text = _segment(lines, node.value)
        try:
            default, literal = ast.literal_eval(node.value), True
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            default, literal = None, False
        # ast counts columns in bytes of UTF-8
        line = lines[node.end_lineno - 1].rstrip("\r\n").encode("utf-8")
        rest = line[node.end_col_offset :].decode("utf-8").strip()
        comment = rest[1:].strip() if rest.startswith("#") else ""
        found[target.id] = Parameter(target.id, default, text, literal, annotation, comment)
    return found


def notebook_parameters(path: str | os.PathLike) -> dict[str, Parameter]:
    """The parameters the notebook at ``path`` declares (empty without a ``parameters`` cell)."""
    source = parameters_cell(read_notebook(path))
    return {} if source is None else parse_parameters(source)


def code_cells(notebook: dict) -> int:
    """How many cells of ``notebook`` a kernel executes (code cells with any source)."""
    count = 0
    for cell in notebook.get("cells", []):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        count += cell.get("cell_type") == "code" and bool(source.strip())
    return count
