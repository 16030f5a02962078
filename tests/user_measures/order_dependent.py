"""A deliberately poor user measure: the error rates of whichever group comes first.

It is order-dependent, scale-dependent and not at its ideal when all groups
are equal, so the property suite's tests for *lacking* a property have a
measure to check.
"""

from audit.measures.kernels import MeasureResult, as_rates
from audit.measures.registry import register_measure


@register_measure(
    name="user_first_group",
    label="first group (user)",
    higher_is_fairer=False,
    bounds=(0.0, 1.0),
    ideal=0.0,
    fmr_term="A: the first group's FMR",
    fnmr_term="B: the first group's FNMR",
    share="linear",
    citation="a user's module (tests/user_measures/order_dependent.py)",
    properties=dict(
        bounded=True,
        permutation_invariant=False,
        scale_invariant=False,
        defined_at_zero=True,
        ideal_when_equal=False,
    ),
)
def user_first_group(fmr, fnmr, *, alpha=0.5):
    """alpha * FMR of group 0 + (1 - alpha) * FNMR of group 0."""
    fmr, fnmr = as_rates(fmr, fnmr)
    a, b = fmr[:, 0], fnmr[:, 0]
    return MeasureResult(alpha * a + (1 - alpha) * b, a, b, a != a)
