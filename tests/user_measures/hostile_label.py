"""A user's measure whose label holds mathtext markup (``$\\frac$``) and a TeX special
(``_``): the reports must draw it as written, in figures and pages alike."""

from audit.measures.registry import register_measure
from tests.user_measures.my_measure import user_ncv


@register_measure(
    name="user_dollar",
    label=r"NCV $\frac$ a_b^c",
    higher_is_fairer=False,
    bounds=(0.0, 1.0),
    ideal=0.0,
    fmr_term="A: normalised coefficient of variation of the group FMRs",
    fnmr_term="B: normalised coefficient of variation of the group FNMRs",
    share="linear",
    citation="a user's module (tests/user_measures/hostile_label.py)",
    undefined="a term is 0/0 when every group's rate is 0: set to 0 and flagged",
    properties=dict(
        bounded=True,
        permutation_invariant=True,
        scale_invariant=True,
        defined_at_zero=True,
        ideal_when_equal=True,
    ),
)
def user_dollar(fmr, fnmr, *, alpha=0.5):
    """The normalised coefficient of variation of :mod:`tests.user_measures.my_measure`,
    under a label a figure must escape."""
    return user_ncv(fmr, fnmr, alpha=alpha)
