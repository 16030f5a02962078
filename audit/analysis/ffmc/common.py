"""The shared parts of the FFMC audit: grids, tolerances, the paper's Table 2,
messages, :class:`CriterionResult` and the helpers every criterion calls."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from audit.analysis.text import number
from audit.exceptions import UsageError
from audit.measures.contract import MeasureBoundsWarning, MeasureSpec
from audit.measures.kernels import UndefinedMeasureWarning
from audit.measures.registry import Measure, bound_measures, get_measure, measure_names
from audit.tables.crossgroup import cross_group

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
#: The alpha at which FFMC.3 computes a measure with a group's errors at 0.
FFMC3_ALPHA = 0.5
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
FFMC1_ONE_TERM = (
    "not applicable: the measure reads the {rate} only (one term, on which alpha has no "
    "effect), so there is no balance of an FMR and an FNMR term to weigh as alpha varies"
)
NOT_CROSS = "not applicable: the measure {reason}"


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
    """The FFMC.1 grid: :data:`ALPHA_GRID` by default; a grid given was checked by the
    public function's declaration (``alpha_grid`` in :data:`audit.validation.PARAMETERS`)."""
    return ALPHA_GRID if alpha_grid is None else np.asarray(alpha_grid, dtype="float64")


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


def one_term(m: Measure) -> str | None:
    """``"FMR"`` or ``"FNMR"`` when ``m`` reads one error rate only (one term, no alpha to
    weigh it against another), else None: FFMC.1 does not apply to such a measure."""
    needs = tuple(getattr(m, "needs", None) or ())
    share = m.share if isinstance(m.share, str) else None
    if len(needs) == 1:
        return needs[0].upper()
    if share in ("fmr", "fnmr"):
        return share.upper()
    return None


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
        raise UsageError(NO_MEASURES)
    # a table measure runs bound to the table's groups and counts (left unbound, and not
    # audited, where the table lacks what it reads)
    return chosen if table is None else bound_measures(table, chosen)
