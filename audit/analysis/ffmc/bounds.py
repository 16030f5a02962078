"""FFMC.2: recognisable points of reference -- the declared bounds against a seeded
adversarial search and the real data."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from audit.analysis.ffmc.cells import _cells, _cells_view, _pairs_of
from audit.analysis.ffmc.common import (
    BOUNDS_ALPHAS,
    CHUNK_VALUES,
    MAX_SPLITS,
    SCALES,
    TOLERANCE,
    CriterionResult,
    _call,
    _fmt,
    _measure,
)
from audit.measures.contract import PairMeasure
from audit.measures.registry import Measure
from audit.tables.crossgroup import CrossGroupRates
from audit.tables.rates import rate_matrices
from audit.validation import RATES_TABLE, Grid, MeasureRef, validate_params


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


@validate_params("seed", "n_random", measure=MeasureRef(), alphas=Grid(0.0, 1.0), table=RATES_TABLE)
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
