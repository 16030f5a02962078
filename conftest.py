"""pytest's collection at the top of the checkout: the doctests of the package
(``--doctest-modules`` over ``audit/``) leave out the module binding the compiled
counting loops where the install built none, since importing it then raises ImportError
by design (:mod:`audit.scores.counting` counts with NumPy instead); the suite runs
either way (tests/conftest.py has the fixtures)."""

from audit.scores import counting

collect_ignore = [] if counting.compiled_available() else ["audit/scores/_compiled.py"]
