"""The cross-group matrix as the cells of a rate measure: FFMC.2 and FFMC.3 vary the n^2
(enrolment, probe) cells of a pairs measure as they vary the groups of a rate measure."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from audit.analysis.ffmc.common import NOT_CROSS
from audit.exceptions import UsageError
from audit.measures.contract import PairMeasure, RateMeasure
from audit.measures.crossgroup import NEEDS_PAIRS
from audit.tables.crossgroup import CrossGroupRates, cross_group


def _pairs_of(table: pd.DataFrame, m: PairMeasure) -> CrossGroupRates:
    cross = cross_group(table)
    if cross is None:
        raise UsageError(f"{m.name!r}: {NOT_CROSS.format(reason=NEEDS_PAIRS)}")
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
