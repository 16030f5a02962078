"""Fetch, verify and locate the NIST FRVT Part 3 Annex 15 table (the default input).

The CSV's source repository carries a licence that forbids redistribution, so
the project never ships it.  It is one of the built-in datasets
(:data:`audit.sources.datasets.DATASETS`, name ``annex15``), and these are
the shorthands the package has always offered: :func:`fetch_annex15`
downloads it from the pinned commit into the user's cache folder
(:func:`audit.config.cache_dir`), verified by its sha256; :func:`annex15_path`
finds a local copy through ``AUDIT_DATA_DIR`` first
(:func:`audit.sources.datasets.dataset_path`).
"""

from __future__ import annotations

import os
from pathlib import Path

from audit import config
from audit.exceptions import DataError
from audit.sources import datasets
from audit.sources.download import sha256sum
from audit.validation import PathLike, Sha256, Text, optional, validate_params

CHECKSUM_MISMATCH = datasets.CHECKSUM_MISMATCH
NOT_FOUND_IN_DATA_DIR = datasets.NOT_FOUND_IN_DATA_DIR
DOWNLOAD_FAILED = datasets.DOWNLOAD_FAILED
ANNEX15 = datasets.DATASETS["annex15"]


def verify(path: str | os.PathLike, expected: str = config.ANNEX15_SHA256) -> Path:
    """Return ``path`` if its sha256 is ``expected``, else raise :class:`DataError`."""
    return datasets.verify(ANNEX15, path, sha256=expected)


@validate_params(url=Text(), cache=optional(PathLike()), expected_sha256=Sha256())
def fetch_annex15(
    *,
    url: str = config.ANNEX15_URL,
    cache: str | os.PathLike | None = None,
    expected_sha256: str = config.ANNEX15_SHA256,
) -> Path:
    """Download the Annex 15 CSV into the cache and verify it.

    The download goes to a temporary file in the cache folder and is moved into
    place only once its checksum matches, so an interrupted or corrupted
    download never becomes the cached file.  Returns the cached path (without
    downloading again when a verified copy is already there); a cached file
    with another checksum is refused, not replaced.
    """
    return datasets.download(ANNEX15, url=url, cache=cache, sha256=expected_sha256)


def annex15_path() -> Path:
    """Path of a verified Annex 15 CSV: the local copy named by ``AUDIT_DATA_DIR``
    if set, else the cached download (fetched on first use)."""
    return datasets.dataset_path("annex15")


__all__ = ["DataError", "annex15_path", "fetch_annex15", "sha256sum", "verify"]
