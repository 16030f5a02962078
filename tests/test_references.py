"""Every dotted ``audit.`` name the project mentions -- in a docstring, a comment, the
README or a notebook -- imports: a module moved or renamed cannot leave a reader at a
dead end."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

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


def mentioned() -> dict[str, set[str]]:
    """Every dotted ``audit.`` name in the package's sources, the README and the notebooks,
    with the files that mention it."""
    files = [
        *sorted((REPOSITORY / "audit").rglob("*.py")),
        REPOSITORY / "README.md",
        *sorted((REPOSITORY / "notebooks").glob("*.ipynb")),
    ]
    names: dict[str, set[str]] = {}
    for path in files:
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
