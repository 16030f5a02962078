"""Sources: fetch the data the audit runs on, and verify it by its pinned checksum.

:mod:`~audit.sources.annex15` fetches the NIST FRVT Part 3 Annex 15 CSV (or
finds a local copy through ``AUDIT_DATA_DIR``); :mod:`~audit.sources.voxceleb`
fetches the bt4vt wheel whose VoxCeleb1-H scores the scores report audits.
Nothing here parses a table: that is :mod:`audit.tables`.
"""

from audit.sources.annex15 import annex15_path, fetch_annex15
from audit.sources.datasets import dataset_names, dataset_path, get_dataset, resolve

__all__ = [
    "annex15_path",
    "dataset_names",
    "dataset_path",
    "fetch_annex15",
    "get_dataset",
    "resolve",
]
