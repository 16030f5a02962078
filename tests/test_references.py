"""Every dotted ``audit.`` name the project mentions -- in a docstring, a comment, the
README or a notebook -- imports, and so does every name it imports from ``audit``: a
module moved or renamed, or a name never exported, cannot leave a reader at a dead
end."""

from __future__ import annotations

import ast
import importlib
import json
import re
from pathlib import Path

import pandas as pd
import pytest

REPOSITORY = Path(__file__).resolve().parent.parent
#: A dotted name starting at the package, not inside a path, a file name or another name.
NAME = re.compile(r"(?<![\w./-])audit(?:\.[A-Za-z_]\w*)+")
#: File names that look like dotted names (``audit.measures.py`` is never one of ours).
SUFFIXES = (".py", ".ipynb", ".csv", ".html", ".json", ".md", ".svg", ".png", ".toml", ".txt")


def resolves(dotted: str) -> bool:
    """Whether ``dotted`` is a module, or an attribute reached from the longest module
    prefix of it."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for part in parts[i:]:
                obj = getattr(obj, part)
        except AttributeError:
            return False
        return True
    return False


#: ``from audit... import a, b as c`` (or a parenthesised list), in code or a docstring.
FROM_IMPORT = re.compile(r"from\s+(audit(?:\.\w+)*)\s+import\s+(\([^)]*\)|[^\n#;]+)")


def scanned() -> list[Path]:
    """The files whose references are checked: the package's sources, the README and
    the notebooks."""
    return [
        *sorted((REPOSITORY / "audit").rglob("*.py")),
        REPOSITORY / "README.md",
        *sorted((REPOSITORY / "notebooks").glob("*.ipynb")),
    ]


def _texts() -> dict[str, str]:
    """The :func:`scanned` files' text by file, a notebook's its code cells'."""
    texts = {}
    for path in scanned():
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".ipynb":
            cells = json.loads(text)["cells"]
            text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        texts[str(path.relative_to(REPOSITORY))] = text
    return texts


def imported_names(text: str) -> set[str]:
    """The dotted names that ``from audit... import`` statements in ``text`` import.

    >>> sorted(imported_names("from audit.measures import (MeasureResult,  # the result\\n"
    ...                       "    as_rates as rates)\\nfrom audit import uncertainty"))
    ['audit.measures.MeasureResult', 'audit.measures.as_rates', 'audit.uncertainty']
    """
    names = set()
    for match in FROM_IMPORT.finditer(text):
        listed = re.sub(r"#[^\n]*", "", match.group(2)).strip("()\\ \n")
        for item in listed.replace("\\", " ").split(","):
            name = item.split(" as ")[0].strip()
            if name.isidentifier():
                names.add(f"{match.group(1)}.{name}")
    return names


def mentioned() -> dict[str, set[str]]:
    """Every dotted ``audit.`` name in the package's sources, the README and the notebooks,
    with the files that mention it."""
    names: dict[str, set[str]] = {}
    for path in scanned():
        for match in NAME.finditer(path.read_text(encoding="utf-8")):
            name = match.group(0)
            if not name.endswith(SUFFIXES):
                names.setdefault(name, set()).add(str(path.relative_to(REPOSITORY)))
    return names


def test_the_checker_tells_a_stale_name_from_a_live_one():
    assert resolves("audit.analysis.ffmc.ffmc_table")
    assert resolves("audit.measures.contract.RateMeasure.alpha_share")
    assert not resolves("audit.ffmc.ffmc_table")  # the module moved to audit.analysis
    assert not resolves("audit.measures.registry.no_such_function")
    found = NAME.findall("see :func:`~audit.tables.rates.read_rates`, reports/audit.x and audit.py")
    assert found == ["audit.tables.rates.read_rates", "audit.py"]  # a file name is set aside later
    assert "audit.py".endswith(SUFFIXES)


def test_every_name_imported_from_audit_exists():
    """``from audit.measures import as_rates`` in the README's measure module example
    failed: the name lives in audit.measures.kernels and was not exported."""
    found: dict[str, set[str]] = {}
    for path, text in _texts().items():
        for name in imported_names(text):
            found.setdefault(name, set()).add(path)
    assert "audit.measures.as_rates" in found and len(found) > 200  # the scan finds them
    stale = {name: sorted(files) for name, files in found.items() if not resolves(name)}
    assert stale == {}, "names imported and not there:\n" + "\n".join(
        f"{k}: {v}" for k, v in stale.items()
    )


def test_every_audit_name_mentioned_imports():
    names = mentioned()
    assert len(names) > 100  # the scan finds the names (a broken pattern would find none)
    stale = {name: sorted(files) for name, files in names.items() if not resolves(name)}
    assert stale == {}, "stale references:\n" + "\n".join(f"{k}: {v}" for k, v in stale.items())


@pytest.mark.parametrize("module", ["audit.scores.thresholds", "audit.scores"])
def test_the_threshold_conventions_are_stated_where_they_are_used(module):
    """The decision and tie rules are written in the module whose functions apply them
    (as bob.measure.farfrr states its tie rule), not only elsewhere."""
    doc = importlib.import_module(module).__doc__
    assert "score >= threshold" in doc and "score <= threshold" in doc
    assert "never exceeds" in doc or "never exceed" in doc
    assert "Ties" in doc or "Ties are never split" in doc


def test_the_readmes_measure_module_registers_and_is_evaluated(tmp_path, monkeypatch, own_measures):
    """The README's ``my_measures.py``, as written there: imported by name, its measure
    is registered and gives the largest gap between groups' rates, alpha-weighted."""
    import sys

    import numpy as np

    from audit.measures.modules import import_measure_modules
    from audit.measures.registry import evaluate
    from audit.tables.rates import read_rates

    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(# my_measures\.py\n.*?)```", readme, re.DOTALL).group(1)
    (tmp_path / "my_measures.py").write_text(block, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "my_measures", raising=False)
    try:
        assert import_measure_modules(["my_measures"]) == ["max_gap"]
        table = read_rates(
            pd.DataFrame(
                {
                    "algorithm": ["a", "a", "a"],
                    "group": ["F", "M", "X"],
                    "fmr": [1e-4, 3e-4, 2e-4],
                    "fnmr": [0.02, 0.01, 0.05],
                }
            )
        )
        value = evaluate(table, "max_gap", alpha=0.25)["value"].to_numpy()
        np.testing.assert_allclose(value, [0.25 * 2e-4 + 0.75 * 0.04])
    finally:
        sys.modules.pop("my_measures", None)


#: A reference by role in a docstring or comment: ``:func:`whole_numbers```,
#: ``:meth:`~Window.sort```, ``:mod:`audit.tables```.
ROLE = re.compile(r":(?:func|class|meth|mod|data|attr|exc|obj):`~?([A-Za-z_][\w.]*)`")
#: The short names the sources give the libraries they import.
ALIASES = {"np": "numpy", "pd": "pandas", "plt": "matplotlib.pyplot", "mpl": "matplotlib"}


def _package_names() -> dict[str, list]:
    """Every name of audit's modules and of the classes they define, with what it names,
    and every function and class its sources define (a class defined in a function
    among them): where a short reference (read in context, as Sphinx reads it) can
    point."""
    import builtins
    import pkgutil

    import audit

    names: dict[str, list] = {}
    for info in pkgutil.walk_packages(audit.__path__, "audit."):
        if info.name.endswith("__main__"):  # runs the command line
            continue
        module = importlib.import_module(info.name)
        names.setdefault(info.name.rsplit(".", 1)[1], []).append(module)
        for name, value in vars(module).items():
            names.setdefault(name, []).append(value)
            if isinstance(value, type) and value.__module__ == module.__name__:
                for member in dir(value):
                    names.setdefault(member, []).append(getattr(value, member, None))
    for path in sorted((REPOSITORY / "audit").rglob("*.py")):  # classes defined in a function
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.setdefault(node.name, []).append(None)  # its members unread
    for name in dir(builtins):
        names.setdefault(name, []).append(getattr(builtins, name))
    return names


def short_resolves(target: str, names: dict[str, list]) -> bool:
    """Whether ``target`` (a role's short or dotted name, not starting at ``audit``) names
    something: its first part a name of audit's (:func:`_package_names`) or an importable
    module (a library's alias read as the library), the rest attributes of it.

    >>> names = {"Window": [type("Window", (), {"sort": None, "__annotations__": {"lo": float}})]}
    >>> [short_resolves(t, names) for t in ("Window.sort", "Window.lo", "Window.nope",
    ...                                     "numpy.quantile", "np.quantile", "number_problems")]
    [True, True, False, True, True, False]
    """
    first, *rest = target.split(".")
    candidates = list(names.get(first, []))
    if not candidates:
        resolved = ".".join([ALIASES.get(first, first), *rest])
        return resolves(resolved)
    for obj in candidates:
        for part in rest:
            if hasattr(obj, part):
                obj = getattr(obj, part)
            elif any(
                part in getattr(k, "__annotations__", {}) for k in getattr(obj, "__mro__", ())
            ):
                obj = None  # a field of a dataclass or a named tuple: a value of each instance
            else:
                break
        else:
            return True
    return False


def test_every_reference_by_role_names_something_there():
    """The module docstring of audit.tables.common named its shared number check
    ``:func:`number_problems```, a function that never existed: a short reference, which
    :func:`test_every_audit_name_mentioned_imports` does not read, must name a module,
    class, function or value of audit's, of Python's or of a library audit uses."""
    names = _package_names()
    found: dict[str, set[str]] = {}
    for path in sorted((REPOSITORY / "audit").rglob("*.py")):
        for match in ROLE.finditer(path.read_text(encoding="utf-8")):
            target = match.group(1)
            if not target.startswith("audit."):  # read by the test above
                found.setdefault(target, set()).add(str(path.relative_to(REPOSITORY)))
    assert "whole_numbers" in found and len(found) > 200  # the scan finds them
    stale = {t: sorted(files) for t, files in found.items() if not short_resolves(t, names)}
    assert stale == {}, "references to nothing:\n" + "\n".join(
        f"{k}: {v}" for k, v in stale.items()
    )
