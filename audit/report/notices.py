"""Warnings raised while a notebook runs: shown as sentences, kept as a table.

A kernel writes a warning to stderr as Python formats it, and papermill keeps
that stream in the notebook, so the report showed lines such as
``/tmp/ipykernel_1234/5678.py:17: ImplausibleRatesWarning: input/x.csv: the
median FMR is 0.417 ...`` followed by the line of code that raised it: a code
path, a line number and a class name that mean nothing to the reader.

:func:`record_warnings`, called once at the top of a notebook, catches every
warning the notebook raises from then on (the filters in force decide which,
as they would for stderr). After each cell the new ones are displayed under
the cell as plain sentences, each once, and every warning is written to
``tables/warnings_<notebook>.csv`` (cell, kind, sentence, count), so none is
dropped and the report's front page can list them.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

import pandas as pd

from audit.report.outputs import save_table
from audit.report.text import escape_markdown

#: The table of a notebook's warnings, under ``tables/``, and its role in the notebook's
#: outputs (:func:`audit.report.outputs.record_outputs`).
TABLE = "warnings_{notebook}"
ROLE = "warnings"
COLUMNS = ["notebook", "cell", "kind", "category", "sentence", "count"]

#: A code location as Python prints it: ``some/file.py:17`` (with an optional colon).
_CODE_LOCATION = re.compile(r"\S+\.py:\d+(?::\d+)?:?\s*")
#: A leading file name (with a folder or an extension) that a message names its source by.
_SOURCE_PREFIX = re.compile(r"^(?:\S*[/\\]\S*|\S+\.\w{1,8}):\s+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def sentence(message: object) -> str:
    """A warning's message as one plain sentence: on one line, without code locations or
    the leading name of the file it is about (a report has one input), starting with a
    capital when it starts with a word, ending with a full stop.

    >>> sentence("divide by zero encountered in log10")
    'Divide by zero encountered in log10.'
    >>> sentence("/tmp/ipykernel_1/2.py:17: input/x.csv: the median\\nFMR is 0.4")
    'The median FMR is 0.4.'
    """
    text = " ".join(_CODE_LOCATION.sub("", str(message)).split())
    text = _SOURCE_PREFIX.sub("", text)
    first = text.split(" ", 1)[0]
    if first.isalpha() and first[0].islower():
        text = text[0].upper() + text[1:]
    if text and text[-1] not in ".!?":
        text += "."
    return text


def kind(category: type[Warning]) -> str:
    """A warning class in words: ``ImplausibleRatesWarning`` -> ``'implausible rates'``;
    empty for the generic ``UserWarning`` and ``Warning``.

    >>> kind(RuntimeWarning), kind(UserWarning)
    ('runtime', '')
    """
    name = category.__name__
    if name in ("UserWarning", "Warning"):
        return ""
    name = name.removesuffix("Warning") or name
    return " ".join(part.lower() for part in _CAMEL.split(name))


class WarningRecord:
    """Every warning raised from its creation on, kept by (kind, sentence).

    Not thread-safe (nor is :mod:`warnings`): one per kernel. :meth:`collect`
    returns the warnings not seen before and rewrites the table; :meth:`close`
    restores the warning machinery as it was.
    """

    def __init__(self, notebook: str, output_dir: str | os.PathLike = "."):
        self.notebook, self.output_dir = str(notebook), Path(output_dir)
        self.rows: dict[tuple[str, str], dict] = {}
        self._catcher = warnings.catch_warnings(record=True)
        self._caught = self._catcher.__enter__()
        self._open = True
        self.save()

    def collect(self, cell: int | None = None) -> list[tuple[str, str]]:
        """The ``(kind, sentence)`` of each warning caught since the last call and never
        seen before, in order; every one is counted in the table."""
        caught, self._caught[:] = list(self._caught), []
        new = tally(self.rows, caught, self.notebook, cell)
        if caught:
            self.save()
        return new

    def table(self) -> pd.DataFrame:
        """One row per distinct warning: ``notebook``, ``cell`` (execution count where it
        first appeared), ``kind``, ``category``, ``sentence``, ``count``."""
        return _frame(self.rows)

    def save(self) -> Path:
        return save_table(
            self.table(),
            TABLE.format(notebook=self.notebook),
            self.output_dir,
            index=False,
            role=ROLE,
        )

    def close(self) -> None:
        if self._open:
            self._catcher.__exit__(None, None, None)
            self._open = False

    def after_cell(self, result=None) -> None:
        """IPython's ``post_run_cell`` hook: display the cell's new warnings as sentences."""
        from IPython.display import Markdown, display

        cell = getattr(result, "execution_count", None)
        new = self.collect(cell)
        if new:
            display(Markdown(markdown(new)))


def tally(
    rows: dict, caught: list, notebook: str, cell: int | None = None
) -> list[tuple[str, str]]:
    """Count the warnings ``caught`` (as :func:`warnings.catch_warnings` records them)
    in ``rows``, one row per (kind, sentence); return the keys of those new to it."""
    new = []
    for message in caught:
        key = (kind(message.category), sentence(message.message))
        row = rows.get(key)
        if row is None:
            rows[key] = {
                "notebook": notebook,
                "cell": cell,
                "kind": key[0],
                "category": message.category.__name__,
                "sentence": key[1],
                "count": 1,
            }
            new.append(key)
        else:
            row["count"] += 1
    return new


def _frame(rows: dict) -> pd.DataFrame:
    frame = pd.DataFrame(list(rows.values()), columns=COLUMNS)
    return frame.astype({"cell": "Int64", "count": "int64"})


def save_warnings(caught: list, notebook: str, output_dir: str | os.PathLike) -> Path:
    """The table of the warnings ``caught`` while a report without a notebook was
    computed (:mod:`audit.report.streamed`), as :class:`WarningRecord` writes a
    notebook's: under ``tables/warnings_<notebook>.csv``, declared as warnings, so that
    the front page lists them (an empty table says none was raised)."""
    rows: dict = {}
    tally(rows, caught, notebook)
    return save_table(
        _frame(rows), TABLE.format(notebook=notebook), output_dir, index=False, role=ROLE
    )


def markdown(warned: list[tuple[str, str]]) -> str:
    """``(kind, sentence)`` pairs as escaped Markdown: one line, or a list when several.

    >>> markdown([("implausible rates", "The median FMR is 0.4.")])
    '**Warning** (implausible rates): The median FMR is 0\\\\.4\\\\.'
    """
    lines = [
        f"**Warning**{f' ({escape_markdown(k)})' if k else ''}: {escape_markdown(s)}"
        for k, s in warned
    ]
    if len(lines) == 1:
        return lines[0]
    return "\n".join(f"* {line}" for line in lines)


def record_warnings(notebook: str, output_dir: str | os.PathLike = ".") -> WarningRecord:
    """Catch the warnings of the running notebook and show each, after its cell, as a sentence.

    Call it once, at the top of the notebook, before the code that may warn;
    ``notebook`` names the table (``tables/warnings_<notebook>.csv``). Outside
    IPython the warnings are only recorded (call :meth:`WarningRecord.collect`).
    """
    record = WarningRecord(notebook, output_dir)
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with jupyter
        return record
    shell = get_ipython()
    if shell is not None:
        shell.events.register("post_run_cell", record.after_cell)
    return record


__all__ = [
    "WarningRecord",
    "kind",
    "markdown",
    "record_warnings",
    "save_warnings",
    "sentence",
    "tally",
]
