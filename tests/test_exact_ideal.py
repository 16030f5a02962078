"""A table whose groups are all equal gets exactly each measure's ideal value, not a
rounding residue such as 5.6e-17 (the float mean of equal values is not always the
value)."""

from __future__ import annotations

import numpy as np
import pytest

from audit.measures.registry import get_measure, measure_names

#: Rates whose float mean over 3 or 8 groups is not the rate itself (0.1 * 3 / 3 != 0.1).
AWKWARD = [(0.1, 0.3), (1 / 3, 0.7), (1e-5, 0.0123), (0.07, 0.11)]


@pytest.mark.parametrize(
    "name",
    [n for n in measure_names(inputs="rates") if get_measure(n).properties.get("ideal_when_equal")],
)
@pytest.mark.parametrize(("fmr", "fnmr"), AWKWARD)
@pytest.mark.parametrize("n_groups", [3, 8])
def test_equal_groups_give_exactly_the_ideal(name, fmr, fnmr, n_groups):
    m = get_measure(name)
    result = m(np.full((2, n_groups), fmr), np.full((2, n_groups), fnmr), alpha=0.3)
    assert result.value.tolist() == [m.ideal, m.ideal]
    assert not result.undefined.any()


def test_the_awkward_rates_are_awkward():
    """Without care, the mean of three 0.1s is not 0.1: the test above can fail."""
    assert np.full(3, 0.1).mean() != 0.1
