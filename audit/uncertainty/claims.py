"""The paper's claims over replicates and the plain-language robustness paragraph."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import pandas as pd

from audit.analysis.text import number
from audit.uncertainty.checks import HOWARD_2022_CLAIMS, ROBUSTNESS
from audit.validation import validate_params

if TYPE_CHECKING:
    from audit.uncertainty.results import UncertaintyResult


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
    threshold: float = 0.95,
) -> str:
    """A short plain-language paragraph: the sentences of :func:`robustness_sentences`."""
    return " ".join(
        robustness_sentences(result, verdicts=verdicts, claims=claims, threshold=threshold)
    )


@validate_params(**ROBUSTNESS)
def robustness_sentences(
    result: UncertaintyResult,
    *,
    verdicts: pd.DataFrame | None = None,
    claims: Mapping[str, tuple[float, str]] | None = None,
    threshold: float = 0.95,
) -> list[str]:
    """What is and is not robust, in plain sentences: the first says how the replicates
    were made and ends with a colon, each of the others states one finding.

    A conclusion counts as robust when it holds in at least ``threshold`` of
    the replicates: a claimed value (from ``claims``, e.g.
    :data:`HOWARD_2022_CLAIMS`; see :func:`check_claims`) holds over the replicate
    interval at the precision it was quoted with, a ranking
    keeps a Spearman correlation of at least 0.9, an algorithm's frontier
    membership is at least ``threshold`` (or at most ``1 - threshold``), an
    FFMC verdict agrees in at least ``threshold`` of the replicates.
    """
    p = result.params
    floor_lower = p.get("floor_lower")
    what = {
        "transcription": "redrawing every Annex 15 rate within its rounding bin, "
        + (
            "floored FMRs within the floor's bin"
            if floor_lower is None
            else f"floored FMRs down to {floor_lower:.3g}"
        ),
        "parametric": "a binomial bootstrap of the error counts",
        "subject": "resampling subjects",
        "comparison": "resampling single comparisons",
    }.get(result.kind, result.kind)
    level = int(round(100 * p["level"]))
    lines = [
        f"Over {p['n_replicates']} replicates ({what}; seed {p.get('seed')}), with "
        f"{level}% percentile intervals:"
    ]
    if claims:
        checked = check_claims(result, claims)
        groups = {
            "Robust to the rounding": checked[checked["reproduced"] & checked["robust"]],
            "Reproduced on the point data but not robust (the replicates move it beyond "
            "the quoted precision)": checked[checked["reproduced"] & ~checked["robust"]],
            "Not reproduced on the point data (not a rounding effect)": checked[
                ~checked["reproduced"]
            ],
        }
        for title, rows in groups.items():
            if len(rows):
                lines.append(
                    title
                    + ": "
                    + "; ".join(
                        f"{r.statistic} = {_fmt(r.value)} (paper {_fmt(r.claimed)}; replicates "
                        f"{_fmt(r.low)} - {_fmt(r.high)})"
                        for r in rows.itertuples()
                    )
                    + "."
                )
    summary = result.ranking_summary
    stable = summary[summary["spearman_low"] >= 0.9]["measure"].tolist()
    unstable = summary[summary["spearman_low"] < 0.9]
    if stable:
        lines.append(
            "The rankings by " + ", ".join(stable) + " are stable (Spearman with the "
            "point ranking >= 0.9 in the lower tail)."
        )
    for row in unstable.itertuples():
        lines.append(
            f"The ranking by {row.measure} is not stable: Spearman down to "
            f"{row.spearman_low:.2f} (median {row.spearman_median:.2f})."
        )
    lines.append(
        "The fairest algorithm stays fairest in "
        + ", ".join(
            f"{100 * row.p_fairest_kept:.0f}% of replicates by {row.measure} ({row.fairest})"
            for row in summary.itertuples()
        )
        + "."
    )
    frontier = result.frontier
    solid = frontier[frontier["frontier_probability"] >= threshold]["algorithm"].tolist()
    shaky = frontier[
        (frontier["frontier_probability"] > 1 - threshold)
        & (frontier["frontier_probability"] < threshold)
    ]
    lines.append(
        f"Frontier ({p['fairness']} vs total FNMR): {int(frontier['on_frontier'].sum())} "
        f"algorithm(s) on it with the point rates; {len(solid)} in at least "
        f"{100 * threshold:.0f}% of replicates ({', '.join(solid) or 'none'})"
        + (
            "; uncertain: "
            + ", ".join(
                f"{r.algorithm} {r.frontier_probability:.2f}"
                for r in shaky.sort_values("frontier_probability", ascending=False).itertuples()
            )
            if len(shaky)
            else ""
        )
        + "."
    )
    if verdicts is not None:  # a criterion that does not apply has no verdict to hold
        verdicts = verdicts[verdicts["agreement"].notna()]
    if verdicts is not None and len(verdicts):
        firm = verdicts[verdicts["agreement"] >= threshold]
        soft = verdicts[verdicts["agreement"] < threshold]
        lines.append(
            f"FFMC: {len(firm)} of {len(verdicts)} verdicts hold in at least "
            f"{100 * threshold:.0f}% of {verdicts.attrs.get('verdict_replicates', '?')} "
            "replicates"
            + (
                "; not robust: "
                + ", ".join(
                    f"{r.measure} {r.criterion} ({100 * r.agreement:.0f}%)"
                    for r in soft.itertuples()
                )
                if len(soft)
                else ""
            )
            + "."
        )
    return lines
