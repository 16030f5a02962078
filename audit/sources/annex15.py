"""Fetch, verify and locate the NIST FRVT Part 3 Annex 15 table.

The CSV's source repository carries a licence that forbids redistribution, so
the project never ships it: :func:`fetch_annex15` downloads it from the pinned
commit into the user's cache folder (:func:`audit.config.cache_dir`), verified by
its sha256 (:func:`audit.sources.download.fetch`).  For offline use set
``AUDIT_DATA_DIR`` to a folder holding a copy (or to the file itself); the copy is
verified the same way.
"""

from __future__ import annotations

import os
from pathlib import Path

from audit import config
from audit.exceptions import DataError
from audit.sources.download import fetch, sha256sum

CHECKSUM_MISMATCH = (
    "{path}: sha256 is {actual}, expected {expected}. The file is not the pinned "
    "Annex 15 transcription (commit {commit}); delete it and fetch again, or point "
    "AUDIT_DATA_DIR at a verified copy."
)
NOT_FOUND_IN_DATA_DIR = (
    "AUDIT_DATA_DIR={value!r} holds no {filename}: point it at the folder holding "
    "the Annex 15 CSV, or at the file itself, or unset it to download the file."
)
DOWNLOAD_FAILED = "could not download the Annex 15 CSV from {url}: {reason}"


def verify(path: str | os.PathLike, expected: str = config.ANNEX15_SHA256) -> Path:
    """Return ``path`` if its sha256 is ``expected``, else raise :class:`DataError`."""
    path = Path(path)
    actual = sha256sum(path)
    if actual != expected:
        raise DataError(
            CHECKSUM_MISMATCH.format(
                path=path, actual=actual, expected=expected, commit=config.ANNEX15_COMMIT
            )
        )
    return path


def _local_copy() -> Path | None:
    value = os.environ.get(config.DATA_DIR_ENV)
    if not value:
        return None
    root = Path(value).expanduser()
    candidates = (
        [root]
        if root.is_file()
        else [
            root / config.ANNEX15_FILENAME,
            root / "nist-frvt-annex15" / config.ANNEX15_FILENAME,
        ]
    )
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise DataError(NOT_FOUND_IN_DATA_DIR.format(value=value, filename=config.ANNEX15_FILENAME))


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
    folder = Path(cache) if cache is not None else config.cache_dir()

    def mismatch(path: str, actual: str) -> DataError:
        return DataError(
            CHECKSUM_MISMATCH.format(
                path=path, actual=actual, expected=expected_sha256, commit=config.ANNEX15_COMMIT
            )
        )

    return fetch(
        url,
        folder=folder,
        filename=config.ANNEX15_FILENAME,
        sha256=expected_sha256,
        failed=lambda error: DataError(DOWNLOAD_FAILED.format(url=url, reason=error)),
        mismatch=mismatch,
    )


def annex15_path() -> Path:
    """Path of a verified Annex 15 CSV: the local copy named by ``AUDIT_DATA_DIR``
    if set, else the cached download (fetched on first use)."""
    local = _local_copy()
    if local is not None:
        return verify(local)
    return fetch_annex15()
