"""A user's own fairness measure, registered from outside the ``audit`` package.

The normalised coefficient of variation of the group rates, combined by
alpha. Loading this module
(``audit.registry.load_measure_module("tests.user_measures.my_measure")``)
registers it; the FFMC audit and the property tests then treat it exactly
like the built-in measures.
"""

import numpy as np

from audit.measures.kernels import MeasureResult, as_rates
from audit.measures.registry import register_measure


def _ncv(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """std / (mean * sqrt(n - 1)): 0 when all groups are equal, 1 when one group has every error."""
    n = x.shape[-1]
    mean = x.mean(axis=-1)
    undefined = mean == 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        ncv = x.std(axis=-1) / (mean * np.sqrt(n - 1.0))
    return np.where(undefined, 0.0, ncv), undefined


@register_measure(
    name="user_ncv",
    label="NCV (user)",
    higher_is_fairer=False,
    bounds=(0.0, 1.0),
    ideal=0.0,
    fmr_term="A: normalised coefficient of variation of the group FMRs",
    fnmr_term="B: normalised coefficient of variation of the group FNMRs",
    share="linear",
    citation="a user's module (tests/user_measures/my_measure.py)",
    undefined="a term is 0/0 when every group's rate is 0: set to 0 and flagged",
    properties=dict(
        bounded=True,
        permutation_invariant=True,
        scale_invariant=True,
        defined_at_zero=True,
        ideal_when_equal=True,
    ),
)
def user_ncv(fmr, fnmr, *, alpha=0.5):
    """alpha * NCV(FMR) + (1 - alpha) * NCV(FNMR)."""
    fmr, fnmr = as_rates(fmr, fnmr)
    a, a_undefined = _ncv(fmr)
    b, b_undefined = _ncv(fnmr)
    return MeasureResult(alpha * a + (1 - alpha) * b, a, b, a_undefined | b_undefined)
