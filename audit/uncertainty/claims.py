"""The paper's claims over replicates, and how sure the findings are, in words.

:func:`robustness_sentences` says what survives the replicates of an
:class:`~audit.uncertainty.UncertaintyResult` in sentences a reader of a
procurement report can follow: each claim with its interval in words, measures
by their names (the code identifiers stay in the tables), counts as whole
numbers, a case with nothing to compare (two systems, no variation) said once,
and each rule said with the numbers it compares.  The rules are the package's
(:data:`~audit.uncertainty.checks.ROBUST`,
:data:`~audit.uncertainty.checks.STABLE_SPEARMAN`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from audit.analysis.pareto import ACCURACY_LABELS
from audit.analysis.text import beside, count, names, number
from audit.exceptions import UnknownNameError
from audit.measures import onesided
from audit.measures.registry import get_measure
from audit.uncertainty.checks import HOWARD_2022_CLAIMS, ROBUST, ROBUSTNESS, STABLE_SPEARMAN
from audit.validation import Names, Options, validate_params

if TYPE_CHECKING:
    from audit.uncertainty.results import UncertaintyResult

#: What a replicate is called, by the kind of replicates.
REPLICATE = {"transcription": "redraw", "parametric": "redraw", "subject": "resample"}
REPLICATE["comparison"] = "resample"
#: What was redrawn or resampled, by the kind of replicates (one-rate redraws say it in
#: ``params["resampled"]``).
HOW = {
    "transcription": "each Annex 15 rate redrawn within its rounding bin ({floor})",
    "parametric": "each error count redrawn from a binomial with the observed rate "
    "(comparisons taken as independent)",
    "subject": "the subjects of each group drawn again with replacement, all their "
    "comparisons kept",
    "comparison": "the comparisons of each group drawn again with replacement, as if independent",
}
#: The words of a dataset-level statistic of :attr:`UncertaintyResult.statistics`, by the
#: part after the measure's name: (subject, unit) -- ``{m}`` the measure's label.
STATISTICS = {
    "min": ("the lowest {m} of an algorithm is", ""),
    "q05": ("the 5th percentile of {m} over the algorithms is", ""),
    "median": ("the median {m} over the algorithms is", ""),
    "q95": ("the 95th percentile of {m} over the algorithms is", ""),
    "max": ("the highest {m} of an algorithm is", ""),
    "fmr_term.median": ("{m}'s FMR term has a median of", ""),
    "fmr_term.max": ("{m}'s FMR term reaches", ""),
    "fnmr_term.median": ("{m}'s FNMR term has a median of", ""),
    "fnmr_term.max": ("{m}'s FNMR term reaches", ""),
    "undefined": ("{m} is undefined for", "algorithm"),
    "crossing.median": (
        "the FMR term of {m} takes over the measure (its median share over the algorithms "
        "passes one half) at alpha",
        "",
    ),
    "crossing.mean": (
        "the FMR term of {m} takes over the measure (its mean share over the algorithms "
        "passes one half) at alpha",
        "",
    ),
}
#: The three groups of claims, by (reproduced, robust).
CLAIM_GROUPS = {
    (True, True): "Numbers of the paper that hold in {level}% of the {reps} at the precision "
    "the paper gives them:",
    (True, False): "Numbers of the paper that the published table reproduces, but that the "
    "{reps} move beyond the precision the paper gives them:",
    (False, None): "Numbers of the paper that the published table does not reproduce (so not "
    "an effect of the rounding):",
}
#: Why a down-select has no frontier membership probability, by reason.
NO_FRONTIER = {
    "joined": "No frontier membership probability: the accuracy axis comes from another "
    "table, whose values the redraws cannot redraw",
    "excluded": "No frontier membership probability: the algorithms whose measure is "
    "undefined were left out of the frontier, and a redraw could leave out others",
}
#: The findings :func:`robustness_sentences` states, in order.
PARTS = ("claims", "rankings", "frontier", "verdicts")
NO_VARIATION = (
    "The {reps} leave every rate as it is: each finding of the table holds in every one of "
    "them, and there is no uncertainty to report."
)


def _fmt(value: float) -> str:
    return number(value, 3, undefined="undefined", plain=(1e-3, 1e4))


def _precision(value: float) -> float:
    """Half a unit of the last quoted digit of ``value`` (0.99 -> 0.005, 63.1 -> 0.05, 9 -> 0.5)."""
    text = repr(float(value))
    decimals = 0 if text.endswith(".0") else len(text.split(".")[1])
    return 0.5 * 10.0**-decimals


def check_claims(
    result: UncertaintyResult, claims: Mapping[str, tuple[float, str]] = HOWARD_2022_CLAIMS
) -> pd.DataFrame:
    """Check quoted values against the point data and the replicates.

    A claim is *reproduced* when the point value rounds to it (within half a
    unit of its last quoted digit) and *robust* when, moreover, the whole
    replicate interval does.

    Returns
    -------
    pandas.DataFrame
        One row per claim found among the statistics: ``statistic``,
        ``claimed``, ``source``, ``value``, ``low``, ``high``, ``reproduced``,
        ``robust``.
    """
    table = result.statistics.set_index("statistic")
    rows = []
    for name, (claimed, source) in claims.items():
        if name not in table.index:
            continue
        row = table.loc[name]
        tolerance = _precision(claimed)
        reproduced = bool(abs(row["value"] - claimed) <= tolerance + 1e-12)
        robust = bool(
            reproduced
            and claimed - tolerance - 1e-12 <= row["low"]
            and row["high"] <= claimed + tolerance + 1e-12
        )
        rows.append(
            {
                "statistic": name,
                "claimed": claimed,
                "source": source,
                "value": row["value"],
                "low": row["low"],
                "high": row["high"],
                "reproduced": reproduced,
                "robust": robust,
            }
        )
    out = pd.DataFrame(
        rows,
        columns=["statistic", "claimed", "source", "value", "low", "high", "reproduced", "robust"],
    )
    out.attrs.update(result.params)
    return out


@validate_params(**ROBUSTNESS)
def robustness_summary(
    result: UncertaintyResult,
    *,
    verdicts: pd.DataFrame | None = None,
    claims: Mapping[str, tuple[float, str]] | None = None,
    threshold: float = ROBUST,
) -> str:
    """A short plain-language paragraph: the sentences of :func:`robustness_sentences`,
    a list's items after the sentence that introduces them."""
    flat = []
    for part in robustness_sentences(result, verdicts=verdicts, claims=claims, threshold=threshold):
        flat.extend([part] if isinstance(part, str) else part)
    return " ".join(flat)


# ------------------------------------------------------------------ words for the parts


def label(name: str, result: UncertaintyResult | None = None) -> str:
    """A measure's label: as the analysis computed it (``params["labels"]``: a table
    measure bound to the table), else from the registry, else its name."""
    labels = {} if result is None else result.params.get("labels", {})
    if name in labels:
        return str(labels[name])
    try:
        return get_measure(name).label
    except UnknownNameError:
        return name


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _replicates(result: UncertaintyResult) -> tuple[str, str]:
    """What one replicate is called and its plural: ``("redraw", "redraws")``."""
    noun = REPLICATE.get(result.kind, "replicate")
    return noun, noun + "s"


def _unit(result: UncertaintyResult) -> str:
    """What the rows are: systems in a report from scores, algorithms otherwise."""
    return "system" if result.kind in ("subject", "comparison") else "algorithm"


def _lead(result: UncertaintyResult) -> str:
    """How the replicates were made, and what a range means."""
    p = result.params
    _, reps = _replicates(result)
    level = int(round(100 * p["level"]))
    if "redraw" in p:  # a table of one rate (audit.uncertainty.onerate) says it itself
        how = str(p["resampled"])
    elif result.kind == "transcription":
        floor_lower = p.get("floor_lower")
        floor = (
            "those on the floor within the floor's own bin"
            if floor_lower is None
            else f"those on the floor down to {floor_lower:g}"
        )
        how = HOW["transcription"].format(floor=floor)
    else:
        how = HOW.get(result.kind, str(p.get("resampled", result.kind)))
    return (
        f"Every number here was recomputed on {p['n_replicates']} {reps} of the table: {how}; "
        f"seed {p.get('seed')}. A range is where {level}% of the {reps} put it (the middle "
        f"{level}% of the recomputed values)."
    )


def _statistic_words(name: str, result: UncertaintyResult) -> tuple[str, str]:
    """The subject of a sentence stating the statistic ``name``, and the unit of a count
    ("" for a number)."""
    if name == "frontier.size":
        return f"the Pareto frontier of {_frontier_names(result)} holds", _unit(result)
    measure, _, part = name.partition(".")
    subject, unit = STATISTICS.get(part, (f"{{m}} {part} is", ""))
    return subject.format(m=label(measure, result)), unit


def _range(low: float, high: float, every: bool, unit: str, reps: str, level: int) -> str:
    """A replicate interval in words: ``0.332 to 0.334 in 95% of the redraws``; counts as
    whole numbers; the same bound twice said once."""
    if unit:  # a percentile between two counts: the counts around it, so the range holds it
        lo, hi = f"{math.floor(low + 1e-9)}", f"{math.ceil(high - 1e-9)}"
    else:
        lo, hi = _fmt(low), _fmt(high)
    where = f"in every one of the {reps}" if every else f"in {level}% of the {reps}"
    return f"{lo} {where}" if lo == hi else f"{lo} to {hi} {where}"


def _claim_sentence(row, statistics: pd.DataFrame, result: UncertaintyResult) -> str:
    subject, unit = _statistic_words(row.statistic, result)
    _, reps = _replicates(result)
    level = int(round(100 * result.params["level"]))
    stat = statistics.loc[row.statistic]
    every = bool(np.isfinite(stat["min"]) and stat["min"] == stat["max"])
    if unit:
        value = count(round(row.value), unit)
        claimed = f"{round(row.claimed)}"
    else:
        value, claimed = _fmt(row.value), _fmt(row.claimed)
    where = str(row.source).split(":", 1)[0] if ":" in str(row.source) else ""
    paper = f"paper, {where}" if where else "paper"
    interval = _range(row.low, row.high, every, unit, reps, level)
    return _capital(f"{subject} {value} ({paper}: {claimed}; {interval}).")


def _claims(result: UncertaintyResult, claims) -> list:
    checked = check_claims(result, claims)
    statistics = result.statistics.set_index("statistic")
    _, reps = _replicates(result)
    level = int(round(100 * result.params["level"]))
    out = []
    groups = {
        (True, True): checked[checked["reproduced"] & checked["robust"]],
        (True, False): checked[checked["reproduced"] & ~checked["robust"]],
        (False, None): checked[~checked["reproduced"]],
    }
    for key, rows in groups.items():
        if len(rows):
            out.append(CLAIM_GROUPS[key].format(level=level, reps=reps))
            out.append([_claim_sentence(r, statistics, result) for r in rows.itertuples()])
    return out


def _fairness(result: UncertaintyResult) -> str:
    """The frontier's fairness measure as computed: on one term of a one-sided table."""
    return fairness_words(result.params)


def fairness_words(params: Mapping) -> str:
    """The fairness measure of an analysis as computed, from its ``params`` (a result's
    ``params`` or the ``attrs`` of its frames): its label, with ``(FMR term alone)`` when
    a one-sided table gives it one term."""
    name = params["fairness"]
    rates = tuple(params.get("rates", ("fmr", "fnmr")))
    labels = params.get("labels", {})
    text = str(labels[name]) if name in labels else label(name)
    try:
        spec = get_measure(name)
    except UnknownNameError:
        return text
    if len(rates) == 1 and onesided.applicability(spec, rates)[0] == onesided.ONE_TERM:
        text += f" ({rates[0].upper()} term alone)"
    return text


def _frontier_names(result: UncertaintyResult) -> str:
    axis = ACCURACY_LABELS.get(result.params.get("accuracy", "total_fnmr"), "accuracy")
    return f"{_fairness(result)} and {axis[:1].lower()}{axis[1:]}"


@validate_params(**ROBUSTNESS)
def frontier_sentences(result: UncertaintyResult, *, threshold: float = ROBUST) -> list[str]:
    """The Pareto frontier over the replicates: its size with the published rates and
    its range, the algorithms on it in at least ``threshold`` of the replicates, and those
    on it in some only."""
    _, reps = _replicates(result)
    unit = _unit(result)
    level = int(round(100 * result.params["level"]))
    frontier = result.frontier
    n_on = int(frontier["on_frontier"].sum())
    size = result.statistics.set_index("statistic").loc["frontier.size"]
    every = bool(size["min"] == size["max"])
    spread = _range(size["low"], size["high"], every, unit, reps, level)
    out = [
        f"The Pareto frontier of {_frontier_names(result)} holds {count(n_on, unit)} with the "
        f"published rates, and {spread}."
    ]
    solid = frontier[frontier["frontier_probability"] >= threshold]["algorithm"].tolist()
    shaky = frontier[
        (frontier["frontier_probability"] > 1 - threshold)
        & (frontier["frontier_probability"] < threshold)
    ].sort_values("frontier_probability", ascending=False)
    share = f"{100 * threshold:.0f}%"
    if solid:
        out.append(
            f"On it in at least {share} of the {reps} ({count(len(solid), unit)}): {names(solid)}."
        )
    else:
        out.append(f"No {unit} is on it in {share} of the {reps}.")
    if len(shaky):
        out.append(
            f"On it in some {reps} only: "
            + names(
                f"{r.algorithm} ({_percent(r.frontier_probability)})" for r in shaky.itertuples()
            )
            + "."
        )
    else:
        out.append(
            f"No other {unit} is on it in more than {100 * (1 - threshold):.0f}% of the {reps}."
        )
    return out


def _percent(share: float) -> str:
    """A share as a whole percentage, never rounded onto 0% or 100% when it is not."""
    value = 100 * float(share)
    text = f"{value:.0f}%"
    if text == "100%" and value < 100:
        return "over 99%"
    if text == "0%" and value > 0:
        return "under 1%"
    return text


def _rankings(result: UncertaintyResult, threshold: float) -> list:
    """Rankings and the fairest algorithm; with two systems, which of the two is fairer."""
    summary = result.ranking_summary
    _, reps = _replicates(result)
    unit = _unit(result)
    n = result.frontier["algorithm"].nunique()
    share = f"{100 * threshold:.0f}%"
    if n < 2:
        return [f"With one {unit} there is nothing to rank."]
    if n == 2:  # a ranking is which of the two is fairer: said once per system
        by: dict[tuple[str, bool], list[str]] = {}
        for r in summary.itertuples():
            by.setdefault((str(r.fairest), r.p_fairest_kept >= threshold), []).append(
                label(r.measure, result)
                + ("" if r.p_fairest_kept >= threshold else f" ({_percent(r.p_fairest_kept)})")
            )
        items = []
        for (fairest, firm), measures in by.items():
            if firm:
                items.append(
                    f"{fairest} is the fairer in at least {share} of the {reps} by "
                    f"{names(measures)}."
                )
            else:
                items.append(
                    f"{fairest} is the fairer with the published rates but not in {share} of "
                    f"the {reps} by {names(measures)} (the share of the {reps} in which it is)."
                )
        return [f"With two {unit}s, a ranking is which of the two is the fairer:", items]
    rule = (
        f"Rankings of the {unit}s by each measure, set beside the ranking of the published "
        f"table: a ranking is stable when the two correlate at {STABLE_SPEARMAN:g} or more "
        f"(Spearman) in at least {share} of the {reps}:"
    )
    stable = summary[summary["spearman_share"] >= threshold]
    unstable = summary[summary["spearman_share"] < threshold]
    items = []
    if len(stable):
        items.append(
            f"Stable ({count(len(stable), 'measure')}): "
            + names(label(m, result) for m in stable["measure"])
            + "."
        )
    if len(unstable):
        items.append(
            f"Not stable ({count(len(unstable), 'measure')}; in brackets, the share of the "
            f"{reps} in which the correlation is {STABLE_SPEARMAN:g} or more, and its median): "
            + names(
                f"{label(r.measure, result)} ({_percent(r.spearman_share)}, median "
                f"{beside(r.spearman_median, STABLE_SPEARMAN)})"
                for r in unstable.itertuples()
            )
            + "."
        )
    out = [rule, items]
    firm: dict[str, list[str]] = {}
    loose = []
    for r in summary.itertuples():
        if r.p_fairest_kept >= threshold:
            firm.setdefault(str(r.fairest), []).append(label(r.measure, result))
        else:
            loose.append(
                f"{label(r.measure, result)}: {r.fairest}, the fairest in "
                f"{_percent(r.p_fairest_kept)} of the {reps}"
            )
    items = [f"{fairest} by {names(measures)}." for fairest, measures in firm.items()]
    if firm:
        kept = sum(map(len, firm.values()))
        lead = (
            f"The fairest {unit} with the published rates stays the fairest in at least "
            f"{share} of the {reps} by "
            + (
                f"each of the {len(summary)} measures:"
                if kept == len(summary)
                else f"{kept} of the {len(summary)} measures:"
            )
        )
        out += [lead, items]
    if loose:
        out += [
            f"By {count(len(loose), 'measure')} the fairest {unit} does not stay the fairest "
            f"in {share} of the {reps}:",
            [f"{_capital(text)}." for text in loose],
        ]
    return out


def _verdicts(
    verdicts: pd.DataFrame, threshold: float, reps: str, result: UncertaintyResult
) -> list[str]:
    verdicts = verdicts[verdicts["agreement"].notna()]  # a criterion that does not apply
    if not len(verdicts):
        return []
    n = verdicts.attrs.get("verdict_replicates")
    firm = verdicts[verdicts["agreement"] >= threshold]
    soft = verdicts[verdicts["agreement"] < threshold]
    share = f"{100 * threshold:.0f}%"
    where = f"of the {'' if n is None else f'{n} '}{reps} on which the whole FFMC audit was rerun"
    if not len(soft):
        total = len(verdicts)
        every = "The" if total == 1 else f"Each of the {total}"
        held = (
            f"in every one {where}"
            if (verdicts["agreement"] == 1).all()
            else f"in at least {share} {where}"
        )
        return [f"{every} FFMC {'verdict' if total == 1 else 'verdicts'} is the same {held}."]
    shaky = names(
        f"{label(r.measure, result)} on {r.criterion} (the same in {_percent(r.agreement)})"
        for r in soft.itertuples()
    )
    if not len(firm):
        return [f"No FFMC verdict is the same in at least {share} {where}: {shaky}."]
    others = "the other is" if len(soft) == 1 else f"the other {len(soft)} are"
    return [
        f"{len(firm)} of the {count(len(verdicts), 'FFMC verdict')} "
        f"{'is' if len(firm) == 1 else 'are'} the same in at least {share} {where}; "
        f"{others} not: {shaky}."
    ]


@validate_params(parts=Names(Options(PARTS)), **ROBUSTNESS)
def robustness_sentences(
    result: UncertaintyResult,
    *,
    verdicts: pd.DataFrame | None = None,
    claims: Mapping[str, tuple[float, str]] | None = None,
    threshold: float = ROBUST,
    parts=PARTS,
) -> list:
    """What is and is not robust, in plain sentences.

    Returns a list of sentences, each a string, or a list of strings: the items of a
    list that the sentence before it introduces (:func:`audit.report.outputs.save_sentences`
    keeps the structure). The first says how the replicates were made.

    A conclusion counts as robust when it holds in at least ``threshold``
    (:data:`~audit.uncertainty.checks.ROBUST`) of the replicates: a claimed value
    (from ``claims``, e.g. :data:`HOWARD_2022_CLAIMS`; see :func:`check_claims`)
    holds over the replicate interval at the precision it was quoted with; a
    ranking correlates with the point ranking at
    :data:`~audit.uncertainty.checks.STABLE_SPEARMAN` or more (Spearman); the
    fairest algorithm stays the fairest; an algorithm is on the frontier (off it:
    on it in at most ``1 - threshold``); an FFMC verdict agrees.  Measures are
    named by their labels; a report of two systems says once which is the fairer
    by each measure; replicates that change nothing are said once.  ``parts`` are the
    findings stated, of :data:`PARTS` (e.g. ``("frontier",)`` for a down-select).
    """
    _, reps = _replicates(result)
    out: list = [_lead(result)]
    if _unchanged(result):
        return [*out, NO_VARIATION.format(reps=reps)]
    if claims and "claims" in parts:
        out += _claims(result, claims)
    if "rankings" in parts:
        out += _rankings(result, threshold)
    if "frontier" in parts:
        out += frontier_sentences(result, threshold=threshold)
    if verdicts is not None and "verdicts" in parts:
        out += _verdicts(verdicts, threshold, reps, result)
    return out


def _unchanged(result: UncertaintyResult) -> bool:
    """Whether no replicate moves any rate: two replicates or more, all equal (and so equal
    to the table they redraw: a table of calibrated cells, rates of 0 or 1 from counts)."""
    if result.params.get("n_replicates", 0) < 2:
        return False
    with np.errstate(invalid="ignore"):
        for reps in (result.fmr, result.fnmr, result.pairs):
            if reps is None:
                continue
            reps = np.asarray(reps)
            same = (reps == reps[:1]) | (np.isnan(reps) & np.isnan(reps[:1]))
            if not same.all():
                return False
    return True


__all__ = [
    "NO_FRONTIER",
    "PARTS",
    "check_claims",
    "frontier_sentences",
    "label",
    "robustness_sentences",
    "robustness_summary",
]
