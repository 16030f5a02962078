"""Every path and pinned source the package uses, in one place.

No path is derived from where the package is installed: the notebooks are
package data (``audit.notebooks``, kept at the repository's top-level
``notebooks/`` folder), fetched data goes to the user's cache folder, and
reports to ``reports/`` under the working folder.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import os
import warnings
from pathlib import Path

#: Sub-folder of the user's cache folder (e.g. ``~/.cache/audit`` on Linux).
CACHE_NAME = "audit"

#: Environment variable naming a folder (or a file) that holds a local copy of the data.
DATA_DIR_ENV = "AUDIT_DATA_DIR"

#: Environment variable overriding the download cache folder.
CACHE_DIR_ENV = "AUDIT_CACHE_DIR"

ANNEX15_FILENAME = "nist-frvt3-annex15-data-flat.csv"
ANNEX15_REPO = "TheMdTF/mdtf-public"
#: The commit of TheMdTF/mdtf-public that last changed the CSV.
ANNEX15_COMMIT = "095d4a6c15d805ad8e1f9313bc2fe6de4dfb3eed"
ANNEX15_URL = (
    f"https://raw.githubusercontent.com/{ANNEX15_REPO}/{ANNEX15_COMMIT}"
    f"/datasets/nist-frvt-annex15/{ANNEX15_FILENAME}"
)
ANNEX15_SHA256 = "aa04815a53692f313d847f273b51290fba2649322d5b7b28e424d1e24afce94b"
ANNEX15_SIZE = 24_068


@contextlib.contextmanager
def _without_widget_warning():
    """Silence tqdm's "IProgress not found" warning: ``tqdm.auto`` raises it when it is
    imported inside a Jupyter kernel that has no ``ipywidgets`` (a report's kernel), and
    falls back to its text bar; the warning would print a path into tqdm on the page."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found")
        yield


def import_pooch():
    """:mod:`pooch`, which imports ``tqdm.auto`` when it is loaded, imported without
    tqdm's widget warning."""
    with _without_widget_warning():
        import pooch
    return pooch


def progress_bar(*args, **kwargs):
    """A ``tqdm.auto`` progress bar (a widget in a notebook that has ``ipywidgets``, text
    elsewhere), made without tqdm's widget warning where the widget cannot be drawn."""
    with _without_widget_warning():
        from tqdm.auto import tqdm

        return tqdm(*args, **kwargs)


def cache_dir() -> Path:
    """Folder where fetched data is cached: ``AUDIT_CACHE_DIR`` if set, else the
    user's cache folder (``pooch.os_cache("audit")``: ``$XDG_CACHE_HOME/audit``,
    by default ``~/.cache/audit``, on Linux)."""
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return Path(env).expanduser()
    return Path(import_pooch().os_cache(CACHE_NAME))


def reports_dir() -> Path:
    """Default parent folder of generated reports: ``reports/`` under the working folder."""
    return Path.cwd() / "reports"


def notebooks_dir() -> Path:
    """Folder of the parameterised notebooks shipped with the package (``audit.notebooks``).

    In the repository they live at the top-level ``notebooks/`` folder, which the
    build maps onto the ``audit.notebooks`` package, so an editable install and an
    installed wheel find them the same way.
    """
    return Path(str(importlib.resources.files("audit.notebooks")))
