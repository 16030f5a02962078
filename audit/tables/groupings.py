"""Groupings of a validated score table: the same comparisons grouped by some of its
attributes, without reading the source again.

A score source read once with every attribute (:func:`audit.scores.read_scores`
with ``attributes=["gender", "nationality"]``: groups such as ``"m.USA"``) holds
every coarser grouping too: :func:`regroup` gives the table grouped by gender
alone, or by nationality, equal to reading the source again with those
attributes (same group labels, same order of categories, same ``attrs``), at the
cost of relabelling the groups' codes.  A report that audits several groupings
of one source reads it once (the scores notebook does).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from audit.exceptions import ParameterError
from audit.tables.scores import warn_thin

BAD_GROUPING = (
    "parameter attributes: expected a non-empty list of the table's attributes {have}, "
    "each once, got {value!r}"
)


def regroup(scores: pd.DataFrame, attributes: Sequence[str]) -> pd.DataFrame:
    """The score table grouped by ``attributes``, some of those it was read with.

    Equal to :func:`audit.scores.read_scores` of the same source with
    ``attributes=attributes``: a group label is the values of ``attributes``
    joined by ``"."``, in that order; the categories of ``group_1`` and
    ``group_2`` keep the order of first appearance (first side, then second),
    which is the order of first appearance of the coarser labels among the
    table's own categories; a non-mated pair across two groups that share the
    values of ``attributes`` becomes a within-group pair; the same warnings of
    thin groups and of subjects in two groups
    (:func:`audit.tables.scores.warn_thin`).  The other columns are shared
    with ``scores``, not copied.

    Examples
    --------
    >>> from audit.scores import read_scores
    >>> table = read_scores(pd.DataFrame({"algorithm": "a", "score": [0.9, 0.2, 0.4],
    ...     "mated": [True, False, False], "gender": ["m", "f", "m"],
    ...     "nationality": ["UK", "UK", "USA"]}), attributes=["gender", "nationality"])
    >>> table["group_1"].tolist()
    ['m.UK', 'f.UK', 'm.USA']
    >>> regroup(table, ["gender"])["group_1"].tolist()
    ['m', 'f', 'm']
    >>> regroup(table, ["nationality"])["group_1"].cat.categories.tolist()
    ['UK', 'USA']
    """
    have = tuple(scores.attrs.get("attributes", ()))
    wanted = tuple(attributes) if not isinstance(attributes, str) else None
    if not wanted or len(set(wanted)) != len(wanted) or any(name not in have for name in wanted):
        raise ParameterError(BAD_GROUPING.format(have=list(have), value=attributes))
    if wanted == have:
        return scores
    at = [have.index(name) for name in wanted]
    categories = scores["group_1"].cat.categories
    # with several attributes no value holds a "." (read_scores refuses it)
    coarse = [".".join(label.split(".")[i] for i in at) for label in map(str, categories)]
    labels = list(dict.fromkeys(coarse))
    index = {label: i for i, label in enumerate(labels)}
    remap = np.array([index[label] for label in coarse], dtype=np.int64)
    dtype = pd.CategoricalDtype(pd.Index(labels, dtype="string"), ordered=False)
    out = scores.copy(deep=False)
    for column in ("group_1", "group_2"):
        codes = remap[scores[column].cat.codes.to_numpy()]
        out[column] = pd.Categorical.from_codes(codes, dtype=dtype, validate=False)
    out.attrs = {**scores.attrs, "attributes": wanted}
    warn_thin(out)  # as read_scores warns of the groups it reads
    return out
