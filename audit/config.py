"""Every path and pinned source the package uses, in one place."""

from __future__ import annotations

import os
from pathlib import Path

#: The repository root when running from a checkout (``audit/`` sits beneath it).
PROJECT_ROOT = Path(__file__).resolve().parent.parent

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


def cache_dir() -> Path:
    """Folder where fetched data is cached (git-ignored ``data/cache`` by default)."""
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return Path(env).expanduser()
    return PROJECT_ROOT / "data" / "cache"


def reports_dir() -> Path:
    """Default parent folder of generated reports."""
    return PROJECT_ROOT / "reports"


def notebooks_dir() -> Path:
    """Folder of the parameterised notebooks shipped with the package."""
    return PROJECT_ROOT / "notebooks"
