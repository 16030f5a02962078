"""The three criteria on every measure: the verdict table beside Howard et al.'s
Table 2, and the report with every criterion's frames and the data-quality audit."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from audit.analysis.ffmc.bounds import (
    _ffmc2,
    _ffmc2_bounds,
    _pair_ffmc2,
    _synthetic_search,
    ffmc2,
)
from audit.analysis.ffmc.cells import _cells_view
from audit.analysis.ffmc.common import (
    BOUNDS_ALPHAS,
    CRITERIA,
    CROSSING_WINDOW,
    FFMC1_ONE_TERM,
    FFMC1_PAIRS,
    FFMC3_ALPHA,
    NOT_CROSS,
    NOT_RATES,
    PAPER_TABLE2,
    CriterionResult,
    _grid,
    _rates_measures,
    one_term,
)
from audit.analysis.ffmc.intuitive import _ffmc1, _ffmc1_arrays, _ffmc1_verdict
from audit.analysis.ffmc.zeros import _ffmc3, _ffmc3_counts, _pair_ffmc3, _pair_ffmc3_counts, ffmc3
from audit.analysis.quality import data_quality, floor_sensitivity
from audit.measures import onesided
from audit.measures.contract import PairMeasure, RateMeasure, TableMeasure
from audit.measures.crossgroup import NEEDS_PAIRS
from audit.measures.registry import Measure
from audit.tables.crossgroup import cross_group
from audit.tables.layouts import RATES as RATE_COLUMNS
from audit.tables.layouts import available_rates
from audit.tables.rates import rate_matrices
from audit.validation import RATES_TABLE, MeasureRefs, validate_params


@validate_params("alpha_grid", "seed", "n_random", measures=MeasureRefs(), table=RATES_TABLE)
def ffmc_table(
    table: pd.DataFrame, measures=None, *, alpha_grid=None, seed: int = 0, n_random: int = 2000
) -> pd.DataFrame:
    """The FFMC audit of several measures: one tidy row per (measure, criterion).

    Parameters
    ----------
    table
        A validated rates table (:func:`audit.tables.rates.read_rates`).
    measures
        Names or :class:`~audit.measures.registry.Measure` objects; ``None`` means
        every registered measure with ``inputs == "rates"``. A scores
        measure given explicitly is listed as not applicable (``passed`` NA).
    alpha_grid
        The FFMC.1 grid; default 0 to 1 in steps of 0.01.
    seed, n_random
        For the FFMC.2 random search.

    Returns
    -------
    pandas.DataFrame
        Columns ``measure``, ``label``, ``criterion``, ``passed`` (nullable
        boolean), ``evidence``, ``paper`` (the verdict of Howard et al.
        Table 2 where it gives one), ``agrees_with_paper``, then the numeric
        evidence columns of the three criteria (NaN where they do not apply).
        ``attrs`` records the seed, the grid and the pass rules.

    Examples
    --------
    >>> import pandas as pd
    >>> from audit.tables.rates import read_rates
    >>> t = read_rates(pd.DataFrame({"algorithm": ["a", "a", "b", "b"], "group": ["F", "M"] * 2,
    ...                              "fmr": [1e-4, 2e-4, 1e-4, 3e-4], "fnmr": [0.02, 0.03, 0.02, 0.04]}))
    >>> ffmc_table(t, ["garbe"], n_random=50)[["criterion", "passed"]].to_string(index=False)
    'criterion  passed\\n   FFMC.1    True\\n   FFMC.2    True\\n   FFMC.3    True'
    """
    chosen = _rates_measures(measures, table)
    results = _criteria(
        table, chosen, alpha_grid=alpha_grid, seed=seed, n_random=n_random, keep_detail=False
    )
    return _assemble(chosen, results, table, alpha_grid=alpha_grid, seed=seed, n_random=n_random)


def _criteria(
    table: pd.DataFrame,
    chosen: list[Measure],
    *,
    alpha_grid,
    seed: int,
    n_random: int,
    keep_detail: bool = True,
) -> dict[tuple[str, str], CriterionResult]:
    """FFMC.1-3 of every rates measure in ``chosen``, keyed by (measure, criterion).

    The rate matrices are built once and shared by every criterion and measure.
    """
    grid = _grid(alpha_grid)
    algorithms, _, fmr, fnmr = rate_matrices(table)
    results: dict[tuple[str, str], CriterionResult] = {}
    available = available_rates(table)
    cross = cross_group(table)
    for m in chosen:
        if isinstance(m, PairMeasure):
            if cross is None:  # not applicable: _assemble says why
                continue
            criteria = (
                _pair_ffmc2(m, cross, seed=seed, n_random=n_random),
                _pair_ffmc3(m, cross),
            )
        elif not isinstance(m, RateMeasure):
            continue
        elif available != RATE_COLUMNS:  # one-sided: FFMC.2-3 only, of the measures that apply
            if onesided.applicability(m, available)[0] == onesided.NOT_APPLICABLE:
                continue
            completed = onesided.completed_table(table)
            criteria = (
                ffmc2(completed, m, seed=seed, n_random=n_random),
                ffmc3(completed, m),
            )
        else:
            synthetic = _synthetic_search(
                m, fmr.shape[-1], BOUNDS_ALPHAS, seed=seed, n_random=n_random
            )
            criteria = (
                # FFMC.1 weighs two terms by alpha: not applicable to a one-term measure
                *(
                    ()
                    if one_term(m)
                    else (_ffmc1(m, algorithms, fmr, fnmr, grid, keep_detail=keep_detail),)
                ),
                _ffmc2(m, synthetic, fmr, fnmr, BOUNDS_ALPHAS, seed=seed),
                _ffmc3(m, fmr, fnmr, FFMC3_ALPHA),
            )
        for result in criteria:
            results[(m.name, result.criterion)] = result
    return results


@validate_params("alpha_grid", "seed", "n_random", measures=MeasureRefs())
def ffmc_verdicts(
    fmr,
    fnmr,
    measures=None,
    *,
    alpha_grid=None,
    seed: int = 0,
    n_random: int = 2000,
    rates=RATE_COLUMNS,
    pairs=None,
) -> pd.DataFrame:
    """The FFMC verdicts of many rate tables at once (e.g. replicates), without the evidence.

    The verdicts are those :func:`ffmc_table` gives each table (same pass
    rules, same code), computed for all tables together: each measure is
    called once per criterion (and per FFMC.3 case) on the stacked rates, and
    FFMC.2's data-free search is done once.

    Parameters
    ----------
    fmr, fnmr
        Rates of shape (n_tables, n_algorithms, n_groups), e.g. the replicates
        of :class:`audit.uncertainty.UncertaintyResult`.
    measures, alpha_grid, seed, n_random
        As for :func:`ffmc_table`.
    rates
        The rates the tables hold: of one-sided tables (``("fmr",)``), FFMC.2-3 of the
        measures that apply, on the rate present with the absent one equal in every
        group (:func:`audit.measures.onesided.completed_table`), FFMC.1 not applicable.
    pairs
        The cross-group FMR matrices of the tables, (n_tables, n_algorithms, n, n), for
        the pairs measures' FFMC.2-3 (without them, a pairs measure is not applicable).

    Returns
    -------
    pandas.DataFrame
        Indexed by (``measure``, ``criterion``), one float column per table:
        1.0 passed, 0.0 failed, NaN not applicable.

    Examples
    --------
    >>> fmr = np.array([[[1e-4, 2e-4], [1e-4, 3e-4]]]); fnmr = np.array([[[0.02, 0.03], [0.02, 0.04]]])
    >>> ffmc_verdicts(fmr, fnmr, ["garbe"], n_random=50).to_numpy().ravel().tolist()
    [1.0, 1.0, 1.0]
    """
    chosen = _rates_measures(measures)
    grid = _grid(alpha_grid)
    fmr = np.asarray(fmr, dtype="float64")
    fnmr = np.asarray(fnmr, dtype="float64")
    n_tables = fmr.shape[0]
    rates = tuple(rates)
    if rates != RATE_COLUMNS:
        fmr, fnmr, _ = onesided.one_term_inputs(fmr, fnmr, rates)
    none = np.full(n_tables, np.nan)
    rows, index = [], []
    for m in chosen:
        if isinstance(m, PairMeasure) and pairs is not None:
            pairs = np.asarray(pairs, dtype="float64")
            view = _cells_view(m)
            cells = pairs.reshape(*pairs.shape[:2], -1)
            placeholder = np.full_like(cells, 0.5)
            synthetic = _synthetic_search(
                view, cells.shape[-1], BOUNDS_ALPHAS, seed=seed, n_random=n_random
            )
            rows += [
                none,
                _ffmc2_bounds(view, synthetic, cells, placeholder, BOUNDS_ALPHAS)["passed"],
                _pair_ffmc3_counts(m, pairs)["passed"],
            ]
        elif not isinstance(m, RateMeasure) or (
            rates != RATE_COLUMNS and onesided.applicability(m, rates)[0] == onesided.NOT_APPLICABLE
        ):
            rows += [none] * len(CRITERIA)
        elif rates != RATE_COLUMNS:  # one-sided: FFMC.2-3, as ffmc_table runs them
            synthetic = _synthetic_search(
                m, fmr.shape[-1], BOUNDS_ALPHAS, seed=seed, n_random=n_random
            )
            rows += [
                none,
                _ffmc2_bounds(m, synthetic, fmr, fnmr, BOUNDS_ALPHAS)["passed"],
                _ffmc3_counts(m, fmr, fnmr, FFMC3_ALPHA)["passed"],
            ]
        else:
            _, share, _ = _ffmc1_arrays(m, fmr, fnmr, grid)
            synthetic = _synthetic_search(
                m, fmr.shape[-1], BOUNDS_ALPHAS, seed=seed, n_random=n_random
            )
            rows += [
                np.full(n_tables, np.nan) if one_term(m) else _ffmc1_verdict(grid, share)["passed"],
                _ffmc2_bounds(m, synthetic, fmr, fnmr, BOUNDS_ALPHAS)["passed"],
                _ffmc3_counts(m, fmr, fnmr, FFMC3_ALPHA)["passed"],
            ]
        index += [(m.name, criterion) for criterion in CRITERIA]
    return pd.DataFrame(
        np.asarray(rows, dtype="float64"),
        index=pd.MultiIndex.from_tuples(index, names=["measure", "criterion"]),
    )


def _assemble(
    chosen: list[Measure],
    results: dict[tuple[str, str], CriterionResult],
    table: pd.DataFrame,
    *,
    alpha_grid,
    seed: int,
    n_random: int,
) -> pd.DataFrame:
    """One tidy row per (measure, criterion) from the criterion results."""
    rows = []
    for m in chosen:
        if not isinstance(m, (RateMeasure, PairMeasure)):
            reason = (
                NOT_CROSS.format(reason=m.unmet(table))
                if isinstance(m, TableMeasure)
                else NOT_RATES.format(name=m.name, inputs=m.inputs)
            )
            for criterion in CRITERIA:
                rows.append(
                    {
                        "measure": m.name,
                        "label": m.label,
                        "criterion": criterion,
                        "passed": pd.NA,
                        "evidence": reason,
                    }
                )
            continue
        for criterion in CRITERIA:
            if (m.name, criterion) not in results:  # one-sided table, or a pairs measure
                if isinstance(m, PairMeasure):
                    reason = (
                        FFMC1_PAIRS
                        if criterion == "FFMC.1" and cross_group(table) is not None
                        else NOT_CROSS.format(reason=NEEDS_PAIRS)
                    )
                elif (
                    criterion == "FFMC.1" and one_term(m) and available_rates(table) == RATE_COLUMNS
                ):
                    reason = FFMC1_ONE_TERM.format(rate=one_term(m))
                else:
                    reason = onesided.not_audited(m, available_rates(table), criterion)
                rows.append(
                    {
                        "measure": m.name,
                        "label": m.label,
                        "criterion": criterion,
                        "passed": pd.NA,
                        "evidence": reason,
                    }
                )
                continue
            result = results[(m.name, criterion)]
            numbers = {k: v for k, v in result.summary.items() if k not in ("seed", "alpha")}
            rows.append(
                {
                    "measure": m.name,
                    "label": m.label,
                    "criterion": result.criterion,
                    "passed": result.passed,
                    "evidence": result.evidence,
                    **numbers,
                }
            )
    out = pd.DataFrame(rows)
    for column in ("measure", "label", "criterion", "evidence"):
        out[column] = out[column].astype("string")
    out["passed"] = out["passed"].astype("boolean")
    paper = [
        PAPER_TABLE2.get((name, criterion), pd.NA)
        for name, criterion in zip(out["measure"], out["criterion"], strict=True)
    ]
    out.insert(5, "paper", pd.array(paper, dtype="boolean"))
    out.insert(6, "agrees_with_paper", (out["passed"] == out["paper"]).astype("boolean"))
    for column in out.columns[7:]:
        if out[column].dtype == object:
            out[column] = out[column].astype("boolean")
    for column in ("n_undefined_at_half", "n_warnings", "n_infinite"):
        if column in out:
            out[column] = out[column].astype("Int64")
    out.attrs.update(
        {
            "seed": seed,
            "n_random": n_random,
            "alpha_grid": [float(a) for a in _grid(alpha_grid)],
            "bounds_alphas": list(BOUNDS_ALPHAS),
            "crossing_window": list(CROSSING_WINDOW),
            "ffmc3_alpha": FFMC3_ALPHA,
            "source": table.attrs.get("source", ""),
        }
    )
    return out


@dataclass(frozen=True)
class FFMCReport:
    """A full FFMC audit: the verdict table, the frames behind it, and the input's quality.

    Attributes
    ----------
    table
        :func:`ffmc_table`'s tidy frame.
    results
        Every :class:`CriterionResult`, keyed by ``(measure, criterion)``
        (FFMC.1 results carry the ``detail`` and ``by_alpha`` frames the
        panels of :mod:`audit.report.plots.ffmc` draw).
    quality
        :func:`audit.analysis.quality.data_quality` of the input.
    floor
        :func:`audit.analysis.quality.floor_sensitivity` of the audited measures.
    """

    table: pd.DataFrame
    results: dict[tuple[str, str], CriterionResult]
    quality: pd.DataFrame
    floor: pd.DataFrame


@validate_params("alpha_grid", "seed", "n_random", measures=MeasureRefs(), table=RATES_TABLE)
def ffmc_report(
    table: pd.DataFrame, measures=None, *, alpha_grid=None, seed: int = 0, n_random: int = 2000
) -> FFMCReport:
    """The FFMC audit of ``measures`` with its evidence frames and the data-quality audit.

    Parameters are those of :func:`ffmc_table`. Scores measures given
    explicitly appear in ``table`` as not applicable and have no results.
    """
    chosen = _rates_measures(measures, table)
    audited = [m for m in chosen if isinstance(m, (RateMeasure, PairMeasure))]
    rates = [m for m in chosen if isinstance(m, RateMeasure)]
    results = _criteria(table, audited, alpha_grid=alpha_grid, seed=seed, n_random=n_random)
    return FFMCReport(
        table=_assemble(
            chosen, results, table, alpha_grid=alpha_grid, seed=seed, n_random=n_random
        ),
        results=results,
        quality=data_quality(table, rates),
        floor=floor_sensitivity(table, rates),
    )
