"""environment.yml mirrors pyproject.toml: the conda environment holds the package's
dependencies and the extras a developer uses, with the same lower bounds, and the C
compiler the install builds the compiled counting loops with."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parent.parent
#: The extras the conda environment carries besides the core dependencies.
EXTRAS = ("jupyter", "test", "parquet", "dask")


def requirement(text: str) -> tuple[str, str]:
    """``(name, bound)`` of a requirement such as ``dask[dataframe]>=2024.1``."""
    match = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*(.*)", text.strip())
    return match.group(1).lower(), match.group(2).replace(" ", "")


def expected() -> dict[str, str]:
    project = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["project"]
    wanted = {"python": f">={project['requires-python'].removeprefix('>=')}"}
    for text in project["dependencies"]:
        name, bound = requirement(text)
        wanted[name] = bound
    for extra in EXTRAS:
        for text in project["optional-dependencies"][extra]:
            name, bound = requirement(text)
            wanted.setdefault(name, bound)
    wanted["c-compiler"] = ""  # what the install builds the compiled counting loops with
    return wanted


def listed() -> dict[str, str]:
    """The conda packages environment.yml lists (pip's own lines left aside)."""
    found = {}
    in_dependencies = in_pip = False
    for line in (REPOSITORY / "environment.yml").read_text().splitlines():
        if re.match(r"\S", line):
            in_dependencies = line.startswith("dependencies:")
            continue
        if not in_dependencies:
            continue
        if re.match(r"\s*-\s*pip:\s*$", line):
            in_pip = True
            continue
        match = re.match(r"\s{2}-\s+([^\s#]+)\s*$", line)
        if match and not in_pip and match.group(1) != "pip":
            name, bound = requirement(match.group(1))
            found[name] = bound
    return found


def test_the_conda_environment_mirrors_pyproject():
    want, have = expected(), listed()
    lines = "\n".join(f"  - {name}{bound}" for name, bound in want.items())
    assert have == want, f"environment.yml should list (under dependencies):\n{lines}"


def test_the_reader_is_not_fooled_by_an_empty_file():
    assert len(listed()) > 10 and "pandas" in listed() and "papermill" in listed()
