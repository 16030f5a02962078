"""Labels that would be read as two groups but are one: spellings that differ only by case,
spaces, an invisible character or Unicode normalisation.

``"Black"`` and ``"black"``, ``"F"`` and ``"F "``, ``"White"`` and ``"White\\u200b"``
(a zero-width space), ``"é"`` composed and ``"é"`` decomposed, ``"F"`` and its
full-width form ``"\\uff26"`` (East Asian text): read as written they
become separate groups, and every measure moves without a word.  A reader passes
the distinct labels of a column, in order of first appearance, to
:func:`check_spellings`, which refuses two spellings of one label, naming both and
where each first appears -- or, when asked (``merge_labels=True``; command line
``--merge-labels``), reads them as the first spelling and says so.  A label that
begins or ends with a space and has no other spelling is read as written, with a
warning (:class:`LabelWarning`): never silently kept or silently trimmed.

Two labels are one when their :func:`label_key` agree: Unicode NFKC normalisation
(one character written two ways: composed or not, full-width or not, a ligature),
invisible (format) characters removed, runs of white space collapsed to one space,
leading and trailing white space removed, and case folded.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence

from audit.exceptions import DataWarning, InputError, warn

SPELLINGS = (
    "{source}, column {column!r}: the labels {first!r} ({first_where}) and {second!r} "
    "({second_where}) differ only by {how}, so they would be read as two {kinds}; write "
    "them alike, or pass merge_labels=True (command line: --merge-labels) to read both "
    "as {first!r}"
)
#: :data:`SPELLINGS` of a score set streamed in chunks, which cannot merge them
#: (:func:`audit.scores.read_scores` can).
STREAMED_SPELLINGS = (
    "{source}, column {column!r}: the labels {first!r} ({first_where}) and {second!r} "
    "({second_where}) differ only by {how}, so they would be read as two {kinds}; write "
    "them alike: a score set streamed in chunks cannot read both as {first!r}, one read "
    "whole can (read_scores(..., merge_labels=True); command line: one Parquet file "
    "within --memory, with --merge-labels)"
)
MERGED = (
    "{source}, column {column!r}: {second!r} ({second_where}) is read as {first!r} "
    "({first_where}): they differ only by {how} (merge_labels, command line --merge-labels)"
)
EDGE_SPACE = (
    "{source}, column {column!r}: the label {label!r} ({where}) begins or ends with white "
    "space or holds an invisible or control character; it is read as written, a label of "
    "its own"
)

_SPACES = re.compile(r"\s+")


class LabelWarning(DataWarning):
    """A label read as written that a reader may not expect: white space at its edges, or
    two spellings merged on request."""


def _visible(text: str) -> str:
    """``text`` without format characters (zero-width spaces and joiners, bidirectional
    marks, the byte-order mark): they change the bytes, not what a reader sees."""
    return "".join(ch for ch in text if unicodedata.category(ch) != "Cf")


def _acting(text: str) -> bool:
    """Whether ``text`` holds a control character (white space a quoted CSV cell may hold
    aside: tab, line feed, carriage return), or a line or paragraph separator."""
    return any(unicodedata.category(ch) in ("Cc", "Zl", "Zp") and ch not in "\t\n\r" for ch in text)


def label_key(label: str) -> str:
    """What a label says, whatever its spelling: two labels with one key are one group.

    >>> label_key("  Black\\u200b ") == label_key("black") == label_key("BLACK")
    True
    >>> label_key("Cafe\\u0301") == label_key("Caf\\u00e9")
    True
    >>> label_key("\\uff26") == label_key("F")  # full-width
    True
    >>> label_key("F.Black") == label_key("F. Black")
    False
    """
    text = _visible(unicodedata.normalize("NFKC", label))
    return _SPACES.sub(" ", text).strip().casefold()


_STEPS = (
    (
        "Unicode normalisation (one character written two ways)",
        lambda s: unicodedata.normalize("NFKC", s),
    ),
    ("an invisible character", _visible),
    ("white space", lambda s: _SPACES.sub(" ", s).strip()),
    ("case", str.casefold),
)


def difference(first: str, second: str) -> str:
    """In words, what tells two spellings of one label apart: the steps of
    :func:`label_key` that change either of them before they agree.

    >>> difference("Black", "black"), difference("F", "F "), difference("a", "a\\u200b")
    ('case', 'white space', 'an invisible character')
    >>> difference("Black", " black")
    'white space and case'
    >>> difference("a  b", "A  B")  # the same white space in both: not a difference
    'case'

    A step tells them apart where, with every other step taken and not that one, they
    still differ: one that changes both alike (``a  b`` and ``A  B``, each space run
    made one) is no part of what tells them apart.
    """

    def without(skipped: int, text: str) -> str:
        for i, (_, step) in enumerate(_STEPS):
            text = text if i == skipped else step(text)
        return text

    kinds = [
        words for i, (words, _) in enumerate(_STEPS) if without(i, first) != without(i, second)
    ]
    if not kinds:  # no one step needed, each of several enough: the first of them
        kinds = [next(w for w, step in _STEPS if (step(first), step(second)) != (first, second))]
    return " and ".join(kinds)


def label_kinds(column: str) -> str:
    """What the labels of ``column`` name, in the plural: the algorithms of
    ``algorithm``, the subjects of a subject column, the groups of any other.

    >>> label_kinds("algorithm"), label_kinds("subject_2"), label_kinds("race_1")
    ('algorithms', 'subjects', 'groups')
    """
    if column == "algorithm":
        return "algorithms"
    return "subjects" if column.startswith("subject") else "groups"


def check_spellings(
    labels: Sequence[str],
    where: Callable[[int], str],
    *,
    source: str,
    column: str,
    error: type[InputError],
    merge: bool = False,
    message: str = SPELLINGS,
    column_of: Callable[[int], str] | None = None,
) -> dict[str, str]:
    """Refuse (or, with ``merge``, map) spellings of one label among ``labels``.

    ``labels`` are a column's distinct labels in order of first appearance;
    ``where(i)`` names where ``labels[i]`` first appears.  Returns the mapping
    of every merged spelling to the label it is read as (empty unless
    ``merge``); raises ``error`` with :data:`SPELLINGS` otherwise.  A label
    with white space at an edge and no other spelling gets a
    :class:`LabelWarning` (:data:`EDGE_SPACE`).  ``message`` is the refusal's text
    (:data:`SPELLINGS`'s fields), for a reader that cannot merge.  ``column_of(i)``,
    for labels of several columns (a group's two sides), names the column where
    ``labels[i]`` first appears: a message names the second spelling's, not ``column``.
    """
    first_of: dict[str, int] = {}
    merged: dict[str, str] = {}
    for i, label in enumerate(labels):
        j = first_of.setdefault(label_key(label), i)
        if j == i:
            continue
        named = column if column_of is None else column_of(i)
        words = dict(
            source=source,
            column=named,
            kinds=label_kinds(named),
            first=labels[j],
            first_where=where(j),
            second=label,
            second_where=where(i),
            how=difference(labels[j], label),
        )
        if not merge:
            raise error(message.format(**words))
        merged[label] = labels[j]
        warn(MERGED.format(**words), LabelWarning)
    for i, label in enumerate(labels):
        # (a control character, ESC or BEL, acts where the label is shown: a terminal's
        # colours, a bell; the pages and the terminal show it escaped)
        unusual = label != label.strip() or _visible(label) != label or _acting(label)
        if unusual and label not in merged and first_of[label_key(label)] == i:
            named = column if column_of is None else column_of(i)
            warn(
                EDGE_SPACE.format(source=source, column=named, label=label, where=where(i)),
                LabelWarning,
            )
    return merged
