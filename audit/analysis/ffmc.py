"""The Functional Fairness Measure Criteria (Howard et al. sec. 3.4) as computations.

Howard et al. judged FDR, IR and GARBE against FFMC.1-3 by eye from their
Figs. 1-3 and summarised the verdicts in Table 2. Here each criterion is a
reproducible computation that runs on any registered rates measure and
returns its evidence numbers:

FFMC.1 -- intuitive net contributions of the FMR and FNMR terms.
    For every algorithm and every alpha of a grid (0 to 1, step 0.01) the
    relative contribution of the alpha-weighted FMR term to the measure
    (:meth:`audit.registry.Measure.alpha_share`: ``aA/(aA + (1-a)B)`` for
    linear forms, the log analogue for products of powers). Evidence: the
    alpha at which the median contribution first surpasses 50% (and the same
    for the mean), whether the median contribution rises monotonically with
    alpha, and the ratio of the median A and median B magnitudes.
    **Pass rule**: the median crossing alpha lies within
    :data:`CROSSING_WINDOW` = [0.2, 0.8] and the median contribution never
    decreases as alpha grows. A measure of one error type only never lets
    alpha move the balance (its share is 1 or 0 at every alpha) and fails.

FFMC.2 -- recognisable points of reference.
    The declared bounds are checked against an adversarial search (all
    errors in one group or in k groups, all groups equal, one group at zero,
    all zero, extreme scales from 1e-6 to 1, uniform and log-uniform random
    draws; seeded) and against the real data, at alpha in
    {0, 0.25, 0.5, 0.75, 1}. Evidence: the observed range, the real-data
    range, whether each declared bound is attained, the reference values
    (perfectly fair: the declared ideal; maximally unfair: the bound away
    from it). **Pass rule**: both bounds declared finite, every finite value
    observed lies within them, and both reference values are attained. An
    unbounded measure fails.

FFMC.3 -- calculable when a group shows no errors.
    For each real algorithm, one group's FNMR is set to 0 (each group in
    turn), then one group's FMR; and, as edge cases, every group's FNMR,
    every group's FMR, and both. Evidence: for each case the fraction of
    values that are finite, and the fraction computed by the formula itself
    (finite and not flagged undefined, i.e. not by a convention).
    **Pass rule**: every one-group case is computed by the formula. The
    all-groups cases are reported, not judged: the paper's criterion asks
    about a group with no errors, and with every group at 0 a dispersion
    measure (GARBE's Gini) is 0/0 -- it stays finite only by the convention
    recorded in the registry.

Cross-group measures (:class:`~audit.measures.contract.PairMeasure`, on a
table read from a cross-group table) read impostor FMRs only: FFMC.1 is not
applicable (no FNMR term to weigh); FFMC.2 runs the same search over the cells
of the enrolment x probe matrix (its n^2 cells vary as a rate measure's groups
do) and the real matrices; FFMC.3 sets one within-group pair's FMR to 0 (each
in turn), then one cross-group pair's, and, reported but not judged, every
within-group pair, every cross-group pair and every pair.  **Pass rule**:
every one-pair case is computed by the formula.

:func:`ffmc_table` gathers the three into one tidy table (measure x
criterion) and sets it beside the verdicts of Howard et al.'s Table 2;
:func:`ffmc_report` adds the detailed frames of every criterion and the
data-quality audit of the input (:mod:`audit.quality`), which every FFMC
report carries.
"""

from __future__ import annotations

import functools
import math
import warnings
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from audit.analysis.quality import data_quality, floor_sensitivity
from audit.analysis.quantiles import nanmedian, nanquantile
from audit.analysis.text import number
from audit.measures import onesided
from audit.measures.contract import (
    MeasureBoundsWarning,
    MeasureSpec,
    PairMeasure,
    RateMeasure,
    TableMeasure,
)
from audit.measures.crossgroup import NEEDS_PAIRS
from audit.measures.kernels import MeasureResult, UndefinedMeasureWarning
from audit.measures.registry import Measure, bound_measures, get_measure, measure_names
from audit.tables.crossgroup import CrossGroupRates, cross_group
from audit.tables.layouts import RATES as RATE_COLUMNS
from audit.tables.layouts import available_rates
from audit.tables.rates import rate_matrices

#: The FFMC.1 alpha grid of Howard et al. Figs. 1D-3D: 0 to 1, step 0.01.
ALPHA_GRID = np.round(np.linspace(0.0, 1.0, 101), 2)

#: A finer grid for the crossing statistics over replicates: 0.01 steps, then
#: 0.001 steps above 0.9 (where the FDR crossing lies).
FINE_ALPHA_GRID = np.unique(
    np.round(np.concatenate([np.linspace(0.0, 0.9, 91), np.linspace(0.9, 1.0, 101)]), 6)
)
#: FFMC.1 passes when the median crossing alpha lies within this window.
CROSSING_WINDOW = (0.2, 0.8)
#: Alphas at which FFMC.2 searches for extreme values.
BOUNDS_ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0)
#: Rate scales of the FFMC.2 adversarial search.
SCALES = (0.0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)
#: Most "k of n groups" patterns in the FFMC.2 search (all of them up to this many groups).
MAX_SPLITS = 16
#: Largest number of rate values (cases x groups) evaluated at once in the FFMC.2 search.
CHUNK_VALUES = 2**20
#: Tolerance for "within the bounds" and "bound attained".
TOLERANCE = 1e-9
CRITERIA = ("FFMC.1", "FFMC.2", "FFMC.3")

#: Howard et al. Table 2: True = the measure meets the criterion.
PAPER_TABLE2: dict[tuple[str, str], bool] = {
    ("fdr", "FFMC.1"): False,
    ("fdr", "FFMC.2"): True,
    ("fdr", "FFMC.3"): True,
    ("ir", "FFMC.1"): True,
    ("ir", "FFMC.2"): False,
    ("ir", "FFMC.3"): False,
    ("garbe", "FFMC.1"): True,
    ("garbe", "FFMC.2"): True,
    ("garbe", "FFMC.3"): True,
}

NOT_RATES = (
    "not applicable: {name!r} needs comparison scores (inputs={inputs!r}), not a rates table"
)
NO_MEASURES = "no measures to audit: give at least one measure name"
FFMC1_PAIRS = (
    "not applicable: the measure reads impostor FMRs only (one error type), so there is no "
    "balance of an FMR and an FNMR term to weigh as alpha varies"
)
NOT_CROSS = "not applicable: the measure {reason}"
BAD_GRID = "alpha_grid must be increasing values within [0, 1], got {grid!r}"


@dataclass(frozen=True)
class CriterionResult:
    """One criterion on one measure: verdict, evidence and the frames behind them.

    Attributes
    ----------
    measure, criterion
        E.g. ``"garbe"``, ``"FFMC.1"``.
    passed
        The verdict under the documented pass rule.
    evidence
        A short sentence with the numbers.
    summary
        The evidence numbers, by name.
    detail
        The tidy frame behind them (FFMC.1: one row per algorithm and alpha;
        FFMC.2: one row per search family and alpha; FFMC.3: one row per case).
    by_alpha
        FFMC.1 only: one row per alpha (median, mean and quartiles of the
        share and of the value), for Figs. 1C-D-style panels.
    """

    measure: str
    criterion: str
    passed: bool
    evidence: str
    summary: dict[str, float]
    detail: pd.DataFrame
    by_alpha: pd.DataFrame | None = field(default=None)


def _measure(measure: str | Measure) -> Measure:
    return get_measure(measure) if isinstance(measure, str) else measure


def _call(measure: Measure, fmr, fnmr, alpha):
    """The measure with its warnings recorded instead of raised: (result, n_warnings).

    ``alpha`` may be an array: a kernel that broadcasts over alpha warns once
    for the whole grid (its undefined cases do not depend on alpha), which
    counts as one warning per alpha, as calling it alpha by alpha would.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedMeasureWarning)
        # FFMC.2 probes the bounds on purpose and reports what it finds
        warnings.simplefilter("ignore", MeasureBoundsWarning)
        result = measure(fmr, fnmr, alpha=alpha)
    count = sum(issubclass(w.category, UndefinedMeasureWarning) for w in caught)
    if np.ndim(alpha) and measure.vectorised_alpha:
        count *= len(alpha)
    return result, count


def _grid(alpha_grid) -> np.ndarray:
    grid = ALPHA_GRID if alpha_grid is None else np.asarray(alpha_grid, dtype="float64")
    if (
        grid.ndim != 1
        or len(grid) == 0
        or (np.diff(grid) <= 0).any()
        or grid[0] < 0
        or grid[-1] > 1
    ):
        raise ValueError(BAD_GRID.format(grid=alpha_grid))
    return grid


def first_crossing(alphas, share):
    """The first alpha at which the alpha term's share surpasses one half.

    Howard et al. (2022, sec. 4.1, Fig. 1D) read FFMC.1 from the alpha at which
    the median relative contribution of the FMR term "surpasses 50%" (0.99 for
    FDR, 0.4 for the mean GARBE share, sec. 4.3): the first alpha of the grid
    with ``share > 0.5``, strictly; a share of exactly one half has not
    surpassed it.  NaN when no alpha of the grid gets there.

    Parameters
    ----------
    alphas
        Increasing alphas, shape (n_alphas,).
    share
        The share at each alpha, shape (n_alphas, ...): further axes (e.g.
        replicates) each get their own crossing.

    Returns
    -------
    float or numpy.ndarray
        A float for a 1-d ``share``, else an array of shape ``share.shape[1:]``.

    Examples
    --------
    >>> first_crossing([0.4, 0.5, 0.6], [0.4, 0.5, 0.6])
    0.6
    >>> first_crossing([0.4, 0.5], [[0.1, 0.7], [0.2, 0.9]])
    array([nan, 0.4])
    """
    alphas = np.asarray(alphas, dtype="float64")
    share = np.asarray(share, dtype="float64")
    above = share > 0.5
    first = np.argmax(above, axis=0)
    crossing = np.where(above.any(axis=0), alphas[first], np.nan)
    return float(crossing) if crossing.ndim == 0 else crossing


def _fmt(x: float) -> str:
    return number(x, 4)


def ffmc1(table: pd.DataFrame, measure: str | Measure, *, alpha_grid=None) -> CriterionResult:
    """FFMC.1: relative contribution of the FMR term as alpha goes from 0 to 1.

    Parameters
    ----------
    table
        A validated rates table (:func:`audit.rates.read_rates`).
    measure
        A registered measure or its name.
    alpha_grid
        Increasing alphas in [0, 1]; default :data:`ALPHA_GRID` (step 0.01).

    Returns
    -------
    CriterionResult
        ``detail``: one row per (algorithm, alpha) with ``value``,
        ``fmr_term``, ``fnmr_term``, ``share`` (the alpha term's relative
        contribution) and ``undefined``; ``by_alpha``: per alpha, the median,
        mean and quartiles of ``share`` and the min, quartiles, median and max
        of ``value``; ``summary``: ``crossing_alpha`` (median share first
        > 0.5, :func:`first_crossing`), ``crossing_alpha_mean``, ``monotone``,
        ``fraction_monotone`` (algorithms whose own share never decreases), ``median_fmr_term``,
        ``median_fnmr_term``, ``term_ratio`` (their ratio), ``share_at_half``.
    """
    m = _measure(measure)
    if isinstance(m, PairMeasure):
        raise ValueError(f"FFMC.1 of {m.name!r}: {FFMC1_PAIRS}")
    grid = _grid(alpha_grid)
    algorithms, _, fmr, fnmr = rate_matrices(table)
    return _ffmc1(m, algorithms, fmr, fnmr, grid)


def _ffmc1_arrays(m: Measure, fmr: np.ndarray, fnmr: np.ndarray, grid: np.ndarray):
    """The measure over the whole grid for rates of shape (..., n_algorithms, n_groups).

    One call of the measure for every alpha and every leading batch (e.g.
    replicate): returns ``(result, share, n_warnings)`` with arrays of shape
    (n_alphas, ..., n_algorithms).
    """
    shape = fmr.shape[:-1]
    n_groups = fmr.shape[-1]
    result, n_warnings = _call(m, fmr.reshape(-1, n_groups), fnmr.reshape(-1, n_groups), grid)
    share = m.alpha_share(result.fmr_term, result.fnmr_term, grid[:, None])
    share = np.broadcast_to(share, result.value.shape)
    full = (len(grid), *shape)
    parts = [
        np.broadcast_to(getattr(result, f), result.value.shape).reshape(full)
        for f in ("value", "fmr_term", "fnmr_term", "undefined")
    ]
    return MeasureResult(*parts), share.reshape(full), n_warnings


def _ffmc1_verdict(grid: np.ndarray, share: np.ndarray) -> dict[str, np.ndarray]:
    """FFMC.1's median share, crossing, monotonicity and verdict from shares of shape
    (n_alphas, ..., n_algorithms), per leading batch."""
    median = nanmedian(share, axis=-1)
    steps = np.diff(median, axis=0)
    if len(steps) == 0:
        rising = np.ones(median.shape[1:], dtype=bool)
    else:
        lowest = np.min(np.where(np.isnan(steps), np.inf, steps), axis=0)
        rising = ~np.isnan(steps).all(axis=0) & (lowest >= -TOLERANCE)
    monotone = rising & ~np.isnan(median[1:]).all(axis=0)
    crossing = np.asarray(first_crossing(grid, median))
    lo, hi = CROSSING_WINDOW
    with np.errstate(invalid="ignore"):
        passed = np.isfinite(crossing) & (lo <= crossing) & (crossing <= hi) & monotone
    return {"median": median, "monotone": monotone, "crossing": crossing, "passed": passed}


def _ffmc1(
    m: Measure,
    algorithms: pd.Index,
    fmr: np.ndarray,
    fnmr: np.ndarray,
    grid: np.ndarray,
    *,
    keep_detail: bool = True,
) -> CriterionResult:
    """:func:`ffmc1` on the rate matrices of a table.

    ``keep_detail=False`` leaves ``detail`` empty: the per-(algorithm, alpha)
    frame is what a figure needs, and for 100,000 algorithms it alone would
    hold hundreds of MB per measure, where the verdict needs only the summaries.
    """
    n = len(algorithms)
    result, share, n_warnings = _ffmc1_arrays(m, fmr, fnmr, grid)
    columns = {
        "value": result.value,
        "fmr_term": result.fmr_term,
        "fnmr_term": result.fnmr_term,
        "share": share,
    }
    undefined = result.undefined
    if keep_detail:
        detail = pd.DataFrame(
            {
                "algorithm": np.tile(algorithms.to_numpy(), len(grid)),
                "alpha": np.repeat(grid, n),
                **{k: v.ravel() for k, v in columns.items()},
                "undefined": undefined.ravel(),
            }
        )
        detail["algorithm"] = detail["algorithm"].astype("string")
    else:
        detail = pd.DataFrame()
    value = columns["value"]
    verdict = _ffmc1_verdict(grid, share)
    share_q25, share_q75 = nanquantile(share, [0.25, 0.75], axis=1)
    value_q25, value_q75 = nanquantile(value, [0.25, 0.75], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns give NaN, as wanted
        by_alpha = pd.DataFrame(
            {
                "alpha": grid,
                "share_median": verdict["median"],
                "share_mean": np.nanmean(share, axis=1),
                "share_q25": share_q25,
                "share_q75": share_q75,
                "value_min": np.nanmin(value, axis=1),
                "value_q25": value_q25,
                "value_median": nanmedian(value, axis=1),
                "value_q75": value_q75,
                "value_max": np.nanmax(value, axis=1),
                "n_undefined": undefined.sum(axis=1),
            }
        )
    half = int(np.argmin(np.abs(grid - 0.5)))
    median_a = float(nanmedian(columns["fmr_term"][half]))
    median_b = float(nanmedian(columns["fnmr_term"][half]))
    median = by_alpha["share_median"].to_numpy()
    monotone = bool(verdict["monotone"])
    with np.errstate(invalid="ignore"):
        own_steps = np.diff(share, axis=0)
    fraction_monotone = float(
        np.mean((np.nan_to_num(own_steps, nan=0.0) >= -TOLERANCE).all(axis=0))
    )
    crossing = float(verdict["crossing"])
    crossing_mean = first_crossing(grid, by_alpha["share_mean"].to_numpy())
    lo, hi = CROSSING_WINDOW
    passed = bool(verdict["passed"])
    ratio = median_a / median_b if np.isfinite(median_b) and median_b != 0.0 else np.nan
    summary = {
        "crossing_alpha": crossing,
        "crossing_alpha_mean": crossing_mean,
        "monotone": monotone,
        "fraction_monotone": fraction_monotone,
        "median_fmr_term": median_a,
        "median_fnmr_term": median_b,
        "term_ratio": ratio,
        "share_at_half": float(median[half]),
        "n_undefined_at_half": int(undefined[half].sum()),
        "n_warnings": n_warnings,
    }
    if m.share in ("fmr", "fnmr"):
        constant = 1 if m.share == "fmr" else 0
        why = f"one error type only ({m.share.upper()}): its FMR share is {constant} at every alpha"
    elif not np.isfinite(crossing):
        why = "median share of the alpha term never surpasses 50%"
    else:
        why = (
            f"median share of the alpha term surpasses 50% at alpha {crossing:.2f} "
            f"(mean: {_fmt(crossing_mean)}), {'inside' if lo <= crossing <= hi else 'outside'} "
            f"[{lo}, {hi}]"
        )
    if m.share in ("fmr", "fnmr"):
        trend = "alpha has no effect"
    else:
        trend = f"share {'rises monotonically' if monotone else 'does not rise monotonically'}"
    evidence = (
        f"{why}; {trend}; median A {_fmt(median_a)}, median B {_fmt(median_b)} (A/B {_fmt(ratio)})"
    )
    return CriterionResult(m.name, "FFMC.1", passed, evidence, summary, detail, by_alpha)


def _splits(n_groups: int) -> list[int]:
    """How many groups carry the errors in the "k of n" patterns: every k from 1 to
    n - 1 up to :data:`MAX_SPLITS` groups, beyond that 1, 2, n - 2, n - 1 and k
    spaced geometrically between (at most :data:`MAX_SPLITS` values), so that the
    search stays linear in the number of groups."""
    if n_groups <= MAX_SPLITS:
        return list(range(1, n_groups))
    inner = np.geomspace(3, n_groups - 3, MAX_SPLITS - 4).round().astype(int)
    return sorted({1, 2, *inner.tolist(), n_groups - 2, n_groups - 1})


def _patterns(n_groups: int) -> list[tuple[str, np.ndarray]]:
    """Unit-scale rate vectors of the structured search: (name, vector in [0, 1])."""
    out = [("equal", np.ones(n_groups))]
    for k in _splits(n_groups):
        split = np.zeros(n_groups)
        split[:k] = 1.0
        out.append((f"{k}_of_{n_groups}_groups", split))
    one_zero = np.ones(n_groups)
    one_zero[0] = 0.0
    out.append(("one_group_zero", one_zero))
    ramp = np.geomspace(1e-3, 1.0, n_groups)
    out.append(("three_decade_ramp", ramp))
    return out


class _Pairs:
    """One side of every (fmr, fnmr) pair of pool vectors, made row block by row block
    (``pairs[start:stop]``): the pool squared is never held at once."""

    def __init__(self, pool: np.ndarray, *, first: bool):
        self.pool, self.first = pool, first
        self.shape = (len(pool) ** 2, pool.shape[1])

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows: slice) -> np.ndarray:
        index = np.arange(len(self))[rows]
        return self.pool[index // len(self.pool) if self.first else index % len(self.pool)]


def _blocks(fmr, fnmr) -> Iterable[tuple[np.ndarray, np.ndarray]]:
    """The search cases in blocks of at most :data:`CHUNK_VALUES` values."""
    step = max(1, CHUNK_VALUES // max(1, fmr.shape[1]))
    for start in range(0, len(fmr), step):
        yield np.asarray(fmr[start : start + step]), np.asarray(fnmr[start : start + step])


def _search_space(
    fmr_real: np.ndarray, fnmr_real: np.ndarray, *, seed: int, n_random: int
) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """The FFMC.2 search families: (family, fmr, fnmr), each (n_cases, n_groups)."""
    n_groups = fmr_real.shape[1]
    rng = np.random.default_rng(seed)
    vectors = [s * v for _, v in _patterns(n_groups) for s in SCALES]
    pool = np.unique(np.array(vectors), axis=0)
    families = [("structured", _Pairs(pool, first=True), _Pairs(pool, first=False))]
    families.append(
        (
            "uniform",
            rng.uniform(0.0, 1.0, (n_random, n_groups)),
            rng.uniform(0.0, 1.0, (n_random, n_groups)),
        )
    )
    families.append(
        (
            "log_uniform_1e-6_to_1",
            10.0 ** rng.uniform(-6.0, 0.0, (n_random, n_groups)),
            10.0 ** rng.uniform(-6.0, 0.0, (n_random, n_groups)),
        )
    )
    families.append(
        (
            "operational",
            10.0 ** rng.uniform(-6.0, -3.0, (n_random, n_groups)),
            10.0 ** rng.uniform(-3.0, 0.0, (n_random, n_groups)),
        )
    )
    families.append(("real", fmr_real, fnmr_real))
    return families


def ffmc2(
    table: pd.DataFrame,
    measure: str | Measure,
    *,
    seed: int = 0,
    n_random: int = 2000,
    alphas: Sequence[float] = BOUNDS_ALPHAS,
) -> CriterionResult:
    """FFMC.2: declared bounds against an adversarial search and the real data.

    Parameters
    ----------
    table
        A validated rates table; its number of groups sets the search's.
    measure
        A registered measure or its name.
    seed
        Seed of the random draws (``numpy.random.default_rng``).
    n_random
        Draws per random family.
    alphas
        Alphas at which every case is evaluated.

    Returns
    -------
    CriterionResult
        ``detail``: one row per (family, alpha) with ``n``, ``n_finite``,
        ``n_undefined``, ``min``, ``max``; ``summary``: ``declared_lower``,
        ``declared_upper``, ``observed_min``, ``observed_max`` (finite values
        over the search and the real data), ``n_infinite``, ``within_bounds``,
        ``lower_attained``, ``upper_attained``, ``ideal``, ``worst``,
        ``ideal_at_equal`` (value with all groups equal), ``real_min_half``,
        ``real_max_half`` (real data, alpha 0.5), ``real_min``, ``real_max``
        (real data, all alphas).
    """
    m = _measure(measure)
    if isinstance(m, PairMeasure):
        return _pair_ffmc2(m, _pairs_of(table, m), seed=seed, n_random=n_random, alphas=alphas)
    _, _, fmr_real, fnmr_real = rate_matrices(table)
    synthetic = _synthetic_search(m, fmr_real.shape[-1], alphas, seed=seed, n_random=n_random)
    return _ffmc2(m, synthetic, fmr_real, fnmr_real, alphas, seed=seed)


def _values(m: Measure, fmr: np.ndarray, fnmr: np.ndarray, alphas) -> tuple[np.ndarray, np.ndarray]:
    """Values and undefined flags of ``m`` at every alpha: shape (n_alphas, n_cases).

    The cases go in blocks (:func:`_blocks`), one call per alpha with a scalar
    alpha, as the criterion is defined (a power with a scalar exponent may
    round differently from one with an array of exponents).
    """
    values, undefined = [], []
    for alpha in alphas:
        parts = [_call(m, f, g, alpha)[0] for f, g in _blocks(fmr, fnmr)]
        values.append(np.concatenate([np.asarray(r.value, dtype="float64") for r in parts]))
        undefined.append(np.concatenate([np.asarray(r.undefined, dtype=bool) for r in parts]))
    shape = (len(values), len(fmr))
    return np.reshape(values, shape), np.reshape(undefined, shape)


def _family_rows(family: str, alphas, value: np.ndarray, undefined: np.ndarray) -> list[dict]:
    rows = []
    for i, alpha in enumerate(alphas):
        v = value[i]
        finite = np.isfinite(v)
        rows.append(
            {
                "family": family,
                "alpha": float(alpha),
                "n": len(v),
                "n_finite": int(finite.sum()),
                "n_undefined": int(undefined[i].sum()),
                "min": float(v[finite].min()) if finite.any() else np.nan,
                "max": float(v[finite].max()) if finite.any() else np.nan,
            }
        )
    return rows


def _finite_range(value: np.ndarray, axis) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Smallest and largest finite value (+inf / -inf when none) and the count of infinite ones."""
    finite = np.isfinite(value)
    return (
        np.min(np.where(finite, value, np.inf), axis=axis, initial=np.inf),
        np.max(np.where(finite, value, -np.inf), axis=axis, initial=-np.inf),
        np.isinf(value).sum(axis=axis),
    )


#: FFMC.2's data-free searches already made, by measure and search parameters (at most
#: :data:`_SYNTHETIC_SIZE`); they depend on neither the table nor the replicate.
_SYNTHETIC: OrderedDict[tuple, dict] = OrderedDict()
_SYNTHETIC_SIZE = 64


def _synthetic_search(m: Measure, n_groups: int, alphas, *, seed: int, n_random: int) -> dict:
    """FFMC.2 over the search families that do not depend on the data (all but "real").

    Remembered per (measure function, share rule, bounds, groups, alphas, seed,
    draws): a rerun of the audit on another table or replicate reuses it.
    """
    key = (
        m.name,
        m.function,
        m.share,
        m.bounds,
        getattr(m, "vectorised_alpha", False),
        n_groups,
        tuple(float(a) for a in alphas),
        seed,
        n_random,
    )
    if key in _SYNTHETIC:
        _SYNTHETIC.move_to_end(key)
        return _SYNTHETIC[key]
    found = _search(m, n_groups, alphas, seed=seed, n_random=n_random)
    _SYNTHETIC[key] = found
    if len(_SYNTHETIC) > _SYNTHETIC_SIZE:
        _SYNTHETIC.popitem(last=False)
    return found


def _search(m: Measure, n_groups: int, alphas, *, seed: int, n_random: int) -> dict:
    empty = np.zeros((0, n_groups))
    rows, lows, highs, n_infinite = [], [], [], 0
    for family, fmr, fnmr in _search_space(empty, empty, seed=seed, n_random=n_random):
        if family == "real":
            continue
        value, undefined = _values(m, fmr, fnmr, alphas)
        rows += _family_rows(family, alphas, value, undefined)
        low, high, n_inf = _finite_range(value, None)
        lows.append(low)
        highs.append(high)
        n_infinite += int(n_inf)
    return {"rows": tuple(rows), "low": min(lows), "high": max(highs), "n_infinite": n_infinite}


def _ffmc2_bounds(m: Measure, synthetic: dict, fmr: np.ndarray, fnmr: np.ndarray, alphas) -> dict:
    """FFMC.2's evidence and verdict for real rates of shape (..., n_algorithms, n_groups),
    per leading batch (e.g. replicate), given the data-free part of the search."""
    batch, n_groups = fmr.shape[:-2], fmr.shape[-1]
    value, undefined = _values(m, fmr.reshape(-1, n_groups), fnmr.reshape(-1, n_groups), alphas)
    full = (len(value), *fmr.shape[:-1])
    value, undefined = value.reshape(full), undefined.reshape(full)
    axes = (0, value.ndim - 1)
    real_low, real_high, real_inf = _finite_range(value, axes)
    at_half = [i for i, alpha in enumerate(alphas) if alpha == 0.5]
    if at_half:
        half = value[at_half[-1]]
    else:
        half, _ = _values(m, fmr.reshape(-1, n_groups), fnmr.reshape(-1, n_groups), [0.5])
        half = half[0].reshape(fmr.shape[:-1])
    half_low, half_high, _ = _finite_range(half, -1)
    observed_min = np.minimum(synthetic["low"], real_low)
    observed_max = np.maximum(synthetic["high"], real_high)
    n_infinite = synthetic["n_infinite"] + real_inf
    lo, hi = m.bounds
    within = np.ones(batch, dtype=bool)
    if lo is not None:
        within &= observed_min >= lo - TOLERANCE
    if hi is not None:
        within &= observed_max <= hi + TOLERANCE
    if m.bounded:
        within &= n_infinite == 0
    lower = np.zeros(batch, dtype=bool) if lo is None else np.abs(observed_min - lo) <= TOLERANCE
    upper = np.zeros(batch, dtype=bool) if hi is None else np.abs(observed_max - hi) <= TOLERANCE
    return {
        "value": value,
        "undefined": undefined,
        "observed_min": observed_min,
        "observed_max": observed_max,
        "n_infinite": n_infinite,
        "within": within,
        "lower_attained": lower,
        "upper_attained": upper,
        "passed": within & lower & upper & m.bounded,
        "real_min_half": np.where(np.isfinite(half_low), half_low, np.nan),
        "real_max_half": np.where(np.isfinite(half_high), half_high, np.nan),
        "real_min": np.where(np.isfinite(real_low), real_low, np.nan),
        "real_max": np.where(np.isfinite(real_high), real_high, np.nan),
    }


def _ffmc2(
    m: Measure, synthetic: dict, fmr_real: np.ndarray, fnmr_real: np.ndarray, alphas, *, seed: int
) -> CriterionResult:
    """:func:`ffmc2` on the rate matrices of a table and the data-free part of the search."""
    bounds = _ffmc2_bounds(m, synthetic, fmr_real, fnmr_real, alphas)
    rows = [*synthetic["rows"], *_family_rows("real", alphas, bounds["value"], bounds["undefined"])]
    detail = pd.DataFrame([dict(row) for row in rows])
    detail["family"] = detail["family"].astype("string")
    lo, hi = m.bounds
    observed_min, observed_max = float(bounds["observed_min"]), float(bounds["observed_max"])
    n_infinite = int(bounds["n_infinite"])
    within = bool(bounds["within"])
    lower_attained = bool(bounds["lower_attained"])
    upper_attained = bool(bounds["upper_attained"])
    n_groups = fmr_real.shape[1]
    at_equal, _ = _call(m, np.full((1, n_groups), 1e-4), np.full((1, n_groups), 1e-2), 0.5)
    ideal_at_equal = float(at_equal.value[0])
    passed = bool(bounds["passed"])
    summary = {
        "declared_lower": np.nan if lo is None else float(lo),
        "declared_upper": np.nan if hi is None else float(hi),
        "observed_min": observed_min,
        "observed_max": observed_max,
        "n_infinite": n_infinite,
        "within_bounds": within,
        "lower_attained": bool(lower_attained),
        "upper_attained": bool(upper_attained),
        "ideal": float(m.ideal),
        "worst": float(m.worst),
        "ideal_at_equal": ideal_at_equal,
        "real_min_half": float(bounds["real_min_half"]),
        "real_max_half": float(bounds["real_max_half"]),
        "real_min": float(bounds["real_min"]),
        "real_max": float(bounds["real_max"]),
        "seed": seed,
    }
    declared = (
        f"[{_fmt(lo) if lo is not None else '-inf'}, {_fmt(hi) if hi is not None else 'inf'}]"
    )
    if not m.bounded:
        verdict = f"unbounded (declared {declared})"
    elif not within:
        verdict = f"values leave the declared bounds {declared}"
    else:
        verdict = (
            f"declared {declared}, lower {'attained' if lower_attained else 'not attained'}, "
            f"upper {'attained' if upper_attained else 'not attained'}"
        )
    evidence = (
        f"{verdict}; search range {_fmt(observed_min)} to {_fmt(observed_max)}"
        f"{f' and {n_infinite} infinite value(s)' if n_infinite else ''}; real data at alpha 0.5: "
        f"{_fmt(summary['real_min_half'])} to {_fmt(summary['real_max_half'])}, all alphas: "
        f"{_fmt(summary['real_min'])} to {_fmt(summary['real_max'])}; fair = {_fmt(m.ideal)}, "
        f"maximally unfair = {_fmt(m.worst)}"
    )
    return CriterionResult(m.name, "FFMC.2", passed, evidence, summary, detail)


FFMC3_CASES = ("one_fnmr_zero", "one_fmr_zero", "all_fnmr_zero", "all_fmr_zero", "all_zero")


def _zero_cases(fmr: np.ndarray, fnmr: np.ndarray) -> Iterable[tuple[str, np.ndarray, np.ndarray]]:
    n_groups = fmr.shape[-1]
    for g in range(n_groups):
        f = fnmr.copy()
        f[..., g] = 0.0
        yield "one_fnmr_zero", fmr, f
    for g in range(n_groups):
        f = fmr.copy()
        f[..., g] = 0.0
        yield "one_fmr_zero", f, fnmr
    yield "all_fnmr_zero", fmr, np.zeros_like(fnmr)
    yield "all_fmr_zero", np.zeros_like(fmr), fnmr
    yield "all_zero", np.zeros_like(fmr), np.zeros_like(fnmr)


def ffmc3(table: pd.DataFrame, measure: str | Measure, *, alpha: float = 0.5) -> CriterionResult:
    """FFMC.3: is the measure still a number when a group (or every group) has no errors?

    Returns
    -------
    CriterionResult
        ``detail``: one row per case of :data:`FFMC3_CASES` with ``n`` (real
        algorithms x groups zeroed), ``n_finite``, ``n_flagged`` (values the
        measure flagged undefined), ``n_computed`` (finite and not flagged),
        ``n_warnings``, ``fraction_finite``, ``fraction_computed``;
        ``summary``: ``finite_<case>`` and ``computed_<case>`` per case.
    """
    m = _measure(measure)
    if isinstance(m, PairMeasure):
        return _pair_ffmc3(m, _pairs_of(table, m))
    _, _, fmr, fnmr = rate_matrices(table)
    return _ffmc3(m, fmr, fnmr, alpha)


def _ffmc3_counts(m: Measure, fmr: np.ndarray, fnmr: np.ndarray, alpha: float) -> dict:
    """FFMC.3's counts per case for rates of shape (..., n_algorithms, n_groups), per
    leading batch (e.g. replicate)."""
    batch, n_groups = fmr.shape[:-2], fmr.shape[-1]
    counts = {
        case: dict(n=0, n_finite=0, n_flagged=0, n_computed=0, n_warnings=0) for case in FFMC3_CASES
    }
    flat = (-1, n_groups)
    for case, f, g in _zero_cases(fmr.reshape(flat), fnmr.reshape(flat)):
        result, n_warn = _call(m, f, g, alpha)
        value = np.asarray(result.value, dtype="float64").reshape(fmr.shape[:-1])
        flagged = np.asarray(result.undefined, dtype=bool).reshape(fmr.shape[:-1])
        finite = np.isfinite(value)
        c = counts[case]
        c["n"] += value.shape[-1]
        c["n_finite"] += finite.sum(axis=-1)
        c["n_flagged"] += flagged.sum(axis=-1)
        c["n_computed"] += (finite & ~flagged).sum(axis=-1)
        c["n_warnings"] += n_warn
    one = [counts[case] for case in ("one_fnmr_zero", "one_fmr_zero")]
    counts["passed"] = np.logical_and.reduce(
        [np.broadcast_to(c["n_computed"] == c["n"], batch) for c in one]
    )
    return counts


def _ffmc3(m: Measure, fmr: np.ndarray, fnmr: np.ndarray, alpha: float) -> CriterionResult:
    """:func:`ffmc3` on the rate matrices of a table."""
    counts = _ffmc3_counts(m, fmr, fnmr, alpha)
    passed = bool(counts.pop("passed"))
    counts = {case: {k: int(v) for k, v in c.items()} for case, c in counts.items()}
    detail = pd.DataFrame([{"case": case, **c} for case, c in counts.items()])
    detail["case"] = detail["case"].astype("string")
    detail["fraction_finite"] = detail["n_finite"] / detail["n"]
    detail["fraction_computed"] = detail["n_computed"] / detail["n"]
    by_case = detail.set_index("case")
    summary: dict[str, float] = {"alpha": float(alpha)}
    for case in FFMC3_CASES:
        summary[f"finite_{case}"] = float(by_case.loc[case, "fraction_finite"])
        summary[f"computed_{case}"] = float(by_case.loc[case, "fraction_computed"])
    all_zero = by_case.loc["all_zero"]
    if all_zero["n_finite"] == all_zero["n"] and all_zero["n_flagged"] > 0:
        edge = (
            f"all groups at 0: finite only by convention ({int(all_zero['n_flagged'])} of "
            f"{int(all_zero['n'])} flagged undefined: {m.undefined})"
        )
    else:
        edge = (
            f"all groups at 0: {summary['finite_all_zero']:.0%} finite, "
            f"{summary['computed_all_zero']:.0%} computed by the formula"
        )
    evidence = (
        f"finite with one group's FNMR at 0: {summary['finite_one_fnmr_zero']:.1%}, "
        f"one group's FMR at 0: {summary['finite_one_fmr_zero']:.1%}; {edge}"
    )
    return CriterionResult(m.name, "FFMC.3", passed, evidence, summary, detail)


def _rates_measures(measures, table: pd.DataFrame | None = None) -> list[Measure]:
    """The measures to audit: those given, else every rate measure, and the cross-group
    (pairs) measures when ``table`` was read from a cross-group table."""
    if measures is None:
        names = measure_names(inputs="rates") + measure_names(inputs="table")
        if table is not None and cross_group(table) is not None:
            names += measure_names(inputs="pairs")
        chosen = [get_measure(name) for name in names]
    else:
        chosen = [
            _measure(x)
            for x in ([measures] if isinstance(measures, (str, MeasureSpec)) else measures)
        ]
    if not chosen:
        raise ValueError(NO_MEASURES)
    # a table measure runs bound to the table's groups and counts (left unbound, and not
    # audited, where the table lacks what it reads)
    return chosen if table is None else bound_measures(table, chosen)


def ffmc_table(
    table: pd.DataFrame, measures=None, *, alpha_grid=None, seed: int = 0, n_random: int = 2000
) -> pd.DataFrame:
    """The FFMC audit of several measures: one tidy row per (measure, criterion).

    Parameters
    ----------
    table
        A validated rates table (:func:`audit.rates.read_rates`).
    measures
        Names or :class:`~audit.registry.Measure` objects; ``None`` means
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
                _ffmc1(m, algorithms, fmr, fnmr, grid, keep_detail=keep_detail),
                _ffmc2(m, synthetic, fmr, fnmr, BOUNDS_ALPHAS, seed=seed),
                _ffmc3(m, fmr, fnmr, 0.5),
            )
        for result in criteria:
            results[(m.name, result.criterion)] = result
    return results


def ffmc_verdicts(
    fmr, fnmr, measures=None, *, alpha_grid=None, seed: int = 0, n_random: int = 2000
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

    Returns
    -------
    pandas.DataFrame
        Indexed by (``measure``, ``criterion``), one float column per table:
        1.0 passed, 0.0 failed, NaN not applicable (a scores measure).

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
    rows, index = [], []
    for m in chosen:
        if not isinstance(m, RateMeasure):
            rows += [np.full(n_tables, np.nan)] * len(CRITERIA)
        else:
            _, share, _ = _ffmc1_arrays(m, fmr, fnmr, grid)
            synthetic = _synthetic_search(
                m, fmr.shape[-1], BOUNDS_ALPHAS, seed=seed, n_random=n_random
            )
            rows += [
                _ffmc1_verdict(grid, share)["passed"],
                _ffmc2_bounds(m, synthetic, fmr, fnmr, BOUNDS_ALPHAS)["passed"],
                _ffmc3_counts(m, fmr, fnmr, 0.5)["passed"],
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
            "ffmc3_alpha": 0.5,
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
        panels of :mod:`audit.plots.ffmc` draw).
    quality
        :func:`audit.quality.data_quality` of the input.
    floor
        :func:`audit.quality.floor_sensitivity` of the audited measures.
    """

    table: pd.DataFrame
    results: dict[tuple[str, str], CriterionResult]
    quality: pd.DataFrame
    floor: pd.DataFrame


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


# --------------------------------------------------------------------------- cross-group measures

PAIR_CASES = ("one_within_zero", "one_cross_zero", "all_within_zero", "all_cross_zero", "all_zero")


def _pairs_of(table: pd.DataFrame, m: PairMeasure) -> CrossGroupRates:
    cross = cross_group(table)
    if cross is None:
        raise ValueError(f"{m.name!r}: {NOT_CROSS.format(reason=NEEDS_PAIRS)}")
    return cross


@functools.lru_cache(maxsize=64)
def _cells_view(m: PairMeasure) -> RateMeasure:
    """A pairs measure as an FMR-only rate measure of the n x n cells of its matrix, row
    by row, for FFMC.2-3: the search varies the cells as it varies the groups of a rate
    measure (one view per measure, so the data-free search is remembered)."""

    def on_cells(fmr, fnmr, *, alpha=0.5, zero_division="warn"):
        n = math.isqrt(fmr.shape[-1])
        return m(fmr.reshape(fmr.shape[0], n, n), zero_division=zero_division)

    return RateMeasure(
        name=m.name,
        label=m.label,
        function=on_cells,
        higher_is_fairer=m.higher_is_fairer,
        bounds=m.bounds,
        ideal=m.ideal,
        fmr_term=m.fmr_term,
        fnmr_term=m.fnmr_term,
        share="fmr",
        citation=m.citation,
        undefined=m.undefined,
        module=m.module,
        vectorised_alpha=True,
    )


def _cells(cross: CrossGroupRates) -> tuple[np.ndarray, np.ndarray]:
    """The matrices as (n_algorithms, n^2) cells, and an FNMR placeholder the view never reads."""
    cells = cross.fmr.reshape(len(cross.algorithms), -1)
    return cells, np.full_like(cells, 0.5)


def _pair_ffmc2(
    m: PairMeasure,
    cross: CrossGroupRates,
    *,
    seed: int,
    n_random: int,
    alphas: Sequence[float] = BOUNDS_ALPHAS,
) -> CriterionResult:
    """FFMC.2 of a pairs measure: the search over the n^2 cells and the real matrices."""
    view = _cells_view(m)
    cells, placeholder = _cells(cross)
    synthetic = _synthetic_search(view, cells.shape[-1], alphas, seed=seed, n_random=n_random)
    return _ffmc2(view, synthetic, cells, placeholder, alphas, seed=seed)


def _pair_zero_cases(pairs: np.ndarray) -> Iterable[tuple[str, np.ndarray]]:
    """FFMC.3's cases for matrices of shape (n_algorithms, n, n): a case that zeroes each
    of several cells in turn comes as stacks of matrices, at most :data:`CHUNK_VALUES`
    values at a time."""
    n = pairs.shape[-1]
    measured = ~np.isnan(pairs[0]) if len(pairs) else np.ones((n, n), dtype=bool)
    eye = np.eye(n, dtype=bool)
    step = max(1, CHUNK_VALUES // max(1, pairs.size))
    for case, cells in (("one_within_zero", eye), ("one_cross_zero", ~eye)):
        i, j = np.nonzero(cells & measured)
        if len(i) == 0:
            yield case, pairs[:0]
        for start in range(0, len(i), step):
            rows, columns = i[start : start + step], j[start : start + step]
            stacked = np.repeat(pairs[None], len(rows), axis=0)
            stacked[np.arange(len(rows)), :, rows, columns] = 0.0
            yield case, stacked.reshape(-1, n, n)
    for case, cells in (("all_within_zero", eye), ("all_cross_zero", ~eye), ("all_zero", None)):
        zeroed = pairs.copy()
        zeroed[:, measured if cells is None else cells & measured] = 0.0
        yield case, zeroed


def _pair_ffmc3(m: PairMeasure, cross: CrossGroupRates) -> CriterionResult:
    """FFMC.3 of a pairs measure: is it still a number when a pair (or every pair of a
    kind) shows no false match?"""
    view = _cells_view(m)
    counts = {
        case: dict(n=0, n_finite=0, n_flagged=0, n_computed=0, n_warnings=0) for case in PAIR_CASES
    }
    for case, pairs in _pair_zero_cases(cross.fmr):
        if not len(pairs):  # no cell of this kind is measured
            continue
        cells = pairs.reshape(len(pairs), -1)
        result, n_warnings = _call(view, cells, np.full_like(cells, 0.5), 0.5)
        value = np.asarray(result.value, dtype="float64")
        flagged = np.asarray(result.undefined, dtype=bool)
        finite = np.isfinite(value)
        c = counts[case]
        c["n"] += len(value)
        c["n_finite"] += int(finite.sum())
        c["n_flagged"] += int(flagged.sum())
        c["n_computed"] += int((finite & ~flagged).sum())
        c["n_warnings"] += int(n_warnings)
    rows = [{"case": case, **c} for case, c in counts.items()]
    detail = pd.DataFrame(rows)
    detail["case"] = detail["case"].astype("string")
    with np.errstate(invalid="ignore", divide="ignore"):
        detail["fraction_finite"] = detail["n_finite"] / detail["n"]
        detail["fraction_computed"] = detail["n_computed"] / detail["n"]
    by_case = detail.set_index("case")
    summary: dict[str, float] = {}
    for case in PAIR_CASES:
        summary[f"finite_{case}"] = float(by_case.loc[case, "fraction_finite"])
        summary[f"computed_{case}"] = float(by_case.loc[case, "fraction_computed"])
    one = by_case.loc[["one_within_zero", "one_cross_zero"]]
    passed = bool((one["n_computed"] == one["n"]).all())

    def edge(case: str, words: str) -> str:
        row = by_case.loc[case]
        if row["n"] and row["n_finite"] == row["n"] and row["n_flagged"] > 0:
            return f"{words}: finite only by convention ({m.undefined})"
        return f"{words}: {summary[f'finite_{case}']:.0%} finite"

    evidence = (
        f"computed by the formula with one within-group pair's FMR at 0: "
        f"{summary['computed_one_within_zero']:.1%}, one cross-group pair's: "
        f"{summary['computed_one_cross_zero']:.1%}; "
        + "; ".join(
            edge(case, words)
            for case, words in (
                ("all_within_zero", "every within-group pair at 0"),
                ("all_cross_zero", "every cross-group pair at 0"),
                ("all_zero", "every pair at 0"),
            )
        )
    )
    return CriterionResult(m.name, "FFMC.3", passed, evidence, summary, detail)
