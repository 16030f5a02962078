"""Does the score orientation look right? Mated scores that sit mostly on the
non-match side of the non-mated ones suggest distances read as similarities (the
``--distance`` flag forgotten) or the reverse: every FNMR is then near 1."""

from __future__ import annotations

import pandas as pd

#: The warning, naming the algorithms, the medians and the fix.
LOOKS_REVERSED = (
    "scores look like {looks} read as {read}: for {algorithms}, the median mated score is "
    "{side} the median non-mated score ({medians}); {fix}"
)
FIX_DISTANCE = "if lower scores mean a match, pass --distance (higher_is_match=False)"
FIX_SIMILARITY = "if higher scores mean a match, leave out --distance (higher_is_match=True)"


def orientation_warning(scores) -> str | None:
    """The :data:`LOOKS_REVERSED` message when, for some algorithm, the median
    mated score lies on the non-match side of the median non-mated score; else None.

    ``scores`` is a validated score table (:func:`audit.scores.read_scores`), whose
    ``attrs["higher_is_match"]`` says how it is read, or its statistics
    (:class:`~audit.scores.stats.SufficientStatistics`: in memory, or streamed in
    passes, which learn the medians as any other order statistic). Equal medians say
    nothing.

    Examples
    --------
    >>> from audit.scores import read_scores, score_stats
    >>> t = pd.DataFrame({"algorithm": "a", "group": "F", "score": [0.1, 0.2, 0.8, 0.9],
    ...                   "mated": [True, True, False, False]})
    >>> t.attrs["higher_is_match"] = True
    >>> print(orientation_warning(t))  # doctest: +NORMALIZE_WHITESPACE
    scores look like distances read as similarities: for 'a', the median mated score is
    below the median non-mated score (0.15 < 0.85); if lower scores mean a match, pass
    --distance (higher_is_match=False)
    >>> orientation_warning(score_stats(read_scores(t))) == orientation_warning(t)
    True
    >>> t.attrs["higher_is_match"] = False
    >>> orientation_warning(t) is None
    True
    """
    if isinstance(scores, pd.DataFrame):
        higher = bool(scores.attrs.get("higher_is_match", True))
        medians = scores.groupby(["algorithm", "mated"], sort=False)["score"].median().unstack()
        if True not in medians.columns or False not in medians.columns:
            return None
        return _message(medians[True], medians[False], higher)
    stats = scores
    higher = bool(stats.higher_is_match)
    pairs = [stats.medians(a) for a in range(len(stats.algorithms))]
    # back in the caller's units: a distance's internal score is its negation
    sign = 1.0 if higher else -1.0
    mated = pd.Series([sign * m for m, _ in pairs], index=stats.algorithms, dtype=float)
    nonmated = pd.Series([sign * n for _, n in pairs], index=stats.algorithms, dtype=float)
    return _message(mated, nonmated, higher)


def _message(mated: pd.Series, nonmated: pd.Series, higher: bool) -> str | None:
    """The message for the algorithms whose median mated score (``mated``, by
    algorithm) lies on the non-match side of their median non-mated score."""
    wrong = (mated < nonmated) if higher else (mated > nonmated)  # NaN: never wrong
    if not wrong.any():
        return None
    sign = "<" if higher else ">"
    return LOOKS_REVERSED.format(
        looks="distances" if higher else "similarities",
        read="similarities" if higher else "distances",
        algorithms=", ".join(repr(str(a)) for a in wrong[wrong].index),
        side="below" if higher else "above",
        medians="; ".join(f"{mated[a]:.4g} {sign} {nonmated[a]:.4g}" for a in wrong[wrong].index),
        fix=FIX_DISTANCE if higher else FIX_SIMILARITY,
    )


__all__ = ["FIX_DISTANCE", "FIX_SIMILARITY", "LOOKS_REVERSED", "orientation_warning"]
