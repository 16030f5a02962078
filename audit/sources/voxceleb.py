"""Real speaker-verification scores: VoxCeleb1-H trials shipped by bt4vt 1.0.1.

The PyPI package ``bt4vt`` 1.0.1 (Hutiri et al., GPL-3.0-or-later) ships the
scores of two speaker-verification systems, ResNetSE34L and ResNetSE34V2, on
the 550,894 trials of the VoxCeleb1-H list, with a speaker metadata file
(gender and nationality per speaker).  Because of its licence the project
never vendors them: :func:`fetch_bt4vt` downloads the pinned wheel from its
PyPI files address (:data:`BT4VT_URL`) into the user's cache folder
(``audit.config.cache_dir() / "bt4vt"``), verified by its sha256
(:func:`audit.sources.download.fetch`), and unzips it; a copy of the wheel in
``AUDIT_DATA_DIR`` (directly or in ``bt4vt/``) is used instead when there
(it is the built-in dataset ``voxceleb`` of :mod:`audit.sources.datasets`);
:func:`load_voxceleb` turns the files into a validated score table
(:func:`audit.scores.read_scores`).

Files: ``bt4vt/data/resnetse34l_H-eval_scores.csv`` and
``resnetse34v2_H-eval_scores.csv`` (columns ``ref_file``, ``com_file``, ``sc``,
``lab``; ``lab`` 1 for a mated trial) and ``vox1_meta.csv`` (tab-separated,
``VoxCeleb1 ID``, ``Gender``, ``Nationality``).  The speaker id is the first
path component of ``ref_file``/``com_file``.  Scores are similarities
(negated distances; higher means a match).  In VoxCeleb1-H both sides of every
trial share gender and nationality, so there are no cross-group pairs; the
loader still takes each side's labels from its own speaker and lets
:func:`~audit.scores.read_scores` check it.

bt4vt's own EER (``bt4vt.metrics.compute_eer`` on ``sklearn.metrics.det_curve``)
takes the threshold minimising ``|FNR - FPR|`` among scikit-learn's DET points
and reports ``max(FPR, FNR)``; :func:`audit.measures.scores.eer_table` reports
the mean of the two at the observed threshold minimising the gap, so the two
differ by at most half the gap between FMR and FNMR at that point (one step of
the coarser rate).  bt4vt groups trials by the *reference* speaker only; here
the group of both sides is checked to be the same.
"""

from __future__ import annotations

import importlib.util
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from audit import config
from audit.exceptions import DownloadError, UnknownNameError, VoxCelebError
from audit.scores import read_scores
from audit.sources import datasets
from audit.sources.download import fetch, sha256sum, short_reason

BT4VT_VERSION = "1.0.1"
#: The wheel's name, sha256 and address on PyPI's file host (as listed by
#: https://pypi.org/simple/bt4vt/): the built-in dataset ``voxceleb``.
BT4VT_WHEEL = datasets.DATASETS["voxceleb"].filename
BT4VT_SHA256 = datasets.DATASETS["voxceleb"].sha256
BT4VT_URL = datasets.DATASETS["voxceleb"].url
#: System name -> score file inside the wheel's ``bt4vt/data`` folder.
SYSTEMS = {
    "ResNetSE34L": "resnetse34l_H-eval_scores.csv",
    "ResNetSE34V2": "resnetse34v2_H-eval_scores.csv",
}
METADATA = "vox1_meta.csv"
N_TRIALS = 550_894
ATTRIBUTES = {"gender": "Gender", "nationality": "Nationality"}

DOWNLOAD_FAILED = (
    "could not download bt4vt=={version} from {url} ({reason}); the VoxCeleb scores are "
    "fetched from PyPI at run time, never stored in the repository: to run offline, put "
    "a copy of {wheel} in AUDIT_DATA_DIR (directly or in bt4vt/)"
)
CHECKSUM_MISMATCH = "{path}: sha256 {found} does not match the pinned {expected}"
UNKNOWN_SYSTEM = "unknown system {name!r}; bt4vt ships {names}"
UNKNOWN_ATTRIBUTE = "unknown attribute {name!r}; the VoxCeleb metadata gives {names}"
UNKNOWN_SPEAKER = "{file}: speaker {speaker!r} (line {line}) is not in {metadata}"


def bt4vt_dir() -> Path:
    """Cache folder of the bt4vt wheel and its unzipped contents."""
    return config.cache_dir() / "bt4vt"


def fetch_bt4vt(*, force: bool = False) -> Path:
    """Download (once), verify and unzip the pinned bt4vt wheel; return its unzipped root.

    The returned folder holds ``bt4vt/data/`` (score and metadata files) and
    ``bt4vt/metrics.py`` (used by the tests to cross-check the EERs).  Raises
    :class:`DownloadError` when the wheel cannot be downloaded and
    :class:`VoxCelebError` when its sha256 is not the pinned one (a cached wheel
    with another sha256 is refused, not replaced). ``force`` downloads and
    unzips again.
    """
    folder = bt4vt_dir()
    wheel = folder / BT4VT_WHEEL
    root = folder / "unzipped"
    if force:
        wheel.unlink(missing_ok=True)
    local, _ = datasets.local_copy(datasets.DATASETS["voxceleb"])
    if local is not None:
        found = sha256sum(local)
        if found != BT4VT_SHA256:
            raise VoxCelebError(
                CHECKSUM_MISMATCH.format(path=local, found=found, expected=BT4VT_SHA256)
            )
        wheel = local

    def failed(error: Exception) -> DownloadError:
        return DownloadError(
            DOWNLOAD_FAILED.format(
                version=BT4VT_VERSION, url=BT4VT_URL, reason=short_reason(error), wheel=BT4VT_WHEEL
            )
        )

    def mismatch(path: str, found: str) -> VoxCelebError:
        return VoxCelebError(
            CHECKSUM_MISMATCH.format(path=path, found=found, expected=BT4VT_SHA256)
        )

    if local is None:
        fetch(
            BT4VT_URL,
            folder=folder,
            filename=BT4VT_WHEEL,
            sha256=BT4VT_SHA256,
            failed=failed,
            mismatch=mismatch,
        )
    marker = root / "bt4vt" / "data" / METADATA
    if force or not marker.exists():
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(root)
    return root


def data_dir() -> Path:
    """``bt4vt/data`` inside the fetched wheel (fetching it if needed)."""
    return fetch_bt4vt() / "bt4vt" / "data"


def read_metadata(folder: Path | None = None) -> pd.DataFrame:
    """Speaker metadata: index ``speaker``, columns ``gender``, ``nationality``."""
    folder = data_dir() if folder is None else Path(folder)
    meta = pd.read_csv(folder / METADATA, sep="\t", dtype=str)
    meta = meta.rename(
        columns={"VoxCeleb1 ID": "speaker", "Gender": "gender", "Nationality": "nationality"}
    )
    for column in ("speaker", "gender", "nationality"):
        meta[column] = meta[column].str.strip()
    return meta.set_index("speaker")[["gender", "nationality"]]


#: The CSV reader of the score files: pyarrow's when installed (a third of the time of
#: pandas' own, the same values bit for bit for the pinned files), else pandas' own.
CSV_ENGINE = "pyarrow" if importlib.util.find_spec("pyarrow") is not None else "c"


def raw_scores(
    system: str, folder: Path | None = None, *, engine: str = CSV_ENGINE
) -> pd.DataFrame:
    """One system's score file as shipped (``ref_file``, ``com_file``, ``sc``, ``lab``)."""
    if system not in SYSTEMS:
        raise UnknownNameError(UNKNOWN_SYSTEM.format(name=system, names=list(SYSTEMS)))
    folder = data_dir() if folder is None else Path(folder)
    return pd.read_csv(
        folder / SYSTEMS[system],
        dtype={"ref_file": str, "com_file": str, "sc": "float64", "lab": "int64"},
        engine=engine,
    )


def load_voxceleb(
    attributes: Sequence[str] = ("gender", "nationality"),
    *,
    systems: Sequence[str] = tuple(SYSTEMS),
    folder: Path | None = None,
) -> pd.DataFrame:
    """The VoxCeleb1-H scores of bt4vt's systems as a validated score table.

    Parameters
    ----------
    attributes
        Which speaker attributes make up a group: ``("gender",)``,
        ``("nationality",)`` or both (the intersection, labels such as
        ``"f.USA"``).
    systems
        Which of :data:`SYSTEMS` to load (default both; the ``algorithm``
        column holds their names).
    folder
        A ``bt4vt/data`` folder; default: fetched into the cache.

    Returns
    -------
    pandas.DataFrame
        As :func:`audit.scores.read_scores` (similarity scores), with
        ``550,894`` rows per system; ``subject_1``/``subject_2`` are the
        speakers of the two sides (enrolment, test).
    """
    attributes = tuple(attributes)
    for name in attributes:
        if name not in ATTRIBUTES:
            raise UnknownNameError(UNKNOWN_ATTRIBUTE.format(name=name, names=list(ATTRIBUTES)))
    folder = data_dir() if folder is None else Path(folder)
    meta = read_metadata(folder)
    raws = [raw_scores(system, folder) for system in systems]
    sizes = [len(raw) for raw in raws]
    # lab stays 1/0 here: read_scores validates it as the mated flag
    frame = pd.DataFrame(
        {
            "algorithm": pd.Categorical.from_codes(
                np.repeat(np.arange(len(systems)), sizes), categories=list(systems)
            ),
            "score": np.concatenate([raw["sc"].to_numpy() for raw in raws]),
            "mated": np.concatenate([raw["lab"].to_numpy() for raw in raws]),
        }
    )
    for side, column in (("1", "ref_file"), ("2", "com_file")):
        # a file recurs in many trials: split each distinct name once, and label the rows
        # by codes (categoricals), never one string per row
        codes, files = pd.factorize(
            pd.concat([raw[column] for raw in raws], ignore_index=True), use_na_sentinel=False
        )
        of_file = [str(name).split("/", 1)[0] for name in files.tolist()]
        speaker_of_file, speakers = pd.factorize(np.array(of_file, dtype=object))
        speaker = speaker_of_file[codes]
        row_of_speaker = meta.index.get_indexer(speakers)
        unknown = np.flatnonzero(row_of_speaker[speaker] < 0)
        if len(unknown):
            at = int(unknown[0])
            s = int(np.searchsorted(np.cumsum(sizes), at, "right"))
            raise VoxCelebError(
                UNKNOWN_SPEAKER.format(
                    file=SYSTEMS[systems[s]],
                    speaker=speakers[speaker[at]],
                    line=at - sum(sizes[:s]) + 2,
                    metadata=METADATA,
                )
            )
        for name in attributes:
            values, labels = pd.factorize(meta[name].to_numpy(dtype=object))
            frame[f"{name}_{side}"] = pd.Categorical.from_codes(
                values[row_of_speaker][speaker], categories=labels
            )
        frame[f"subject_{side}"] = pd.Categorical.from_codes(speaker, categories=speakers)
    table = read_scores(frame, attributes=attributes, higher_is_match=True)
    table.attrs["source"] = f"bt4vt {BT4VT_VERSION}: " + ", ".join(SYSTEMS[s] for s in systems)
    return table
