"""The built-in datasets: the registry, where a file is found (AUDIT_DATA_DIR in each of its
forms, the cache), the offline first run's one sentence, the name-or-path resolver, and the
commands that list and fetch them; on the real shared copies."""

from __future__ import annotations

import dataclasses
import shutil
import socket

import pytest
import requests

from audit import config
from audit.cli import main
from audit.exceptions import DataError, UsageError
from audit.sources import datasets
from audit.sources.datasets import DATASETS, dataset_path, identify, resolve
from audit.sources.download import REASONS, sha256sum, short_reason

FRVT11 = "frvt_11_gender_race.csv"
OVERVIEW = "frvt_11_overview.csv"
ANNEX15 = config.ANNEX15_FILENAME


# --- the registry ---------------------------------------------------------------------------


def test_the_registry_holds_the_four_datasets():
    assert list(DATASETS) == ["annex15", "frvt11", "frvt11-accuracy", "voxceleb"]
    assert [d.kind for d in DATASETS.values()] == ["rates", "rates", "accuracy", "scores"]
    assert [d.redistributable for d in DATASETS.values()] == [False, False, False, True]
    for d in DATASETS.values():
        for field in ("title", "holds", "licence", "cite", "repository", "path", "url"):
            assert getattr(d, field), (d.name, field)
        assert len(d.sha256) == 64 and d.size > 0
        assert d.url.endswith(d.filename)


def test_pinned_sources_are_the_data_readme_s():
    """The pins of ../shared/data/README.md: commit, path, sha256 and size of each file."""
    frvt11, overview = DATASETS["frvt11"], DATASETS["frvt11-accuracy"]
    commit = "388962501fa519fbc68618813b8242985d1c57f3"
    assert frvt11.url == (
        f"https://raw.githubusercontent.com/martinsbruveris/nist-frvt-analysis/{commit}"
        "/data/frvt_11_gender_race.csv"
    )
    assert (frvt11.sha256, frvt11.size) == (
        "de6cc1f24cc27d9f6807e665e03e59bc5bf4f0e0f969a096e6625c0cae6cc693",
        16_117,
    )
    assert overview.url == frvt11.url.replace(FRVT11, OVERVIEW)
    assert (overview.sha256, overview.size) == (
        "1b7bb140387cedacb83c664cc919c529a37f6c7d0f78b19ab108b7d1698d2c71",
        25_042,
    )
    assert DATASETS["annex15"].sha256 == config.ANNEX15_SHA256


def test_shared_copies_are_the_pinned_bytes(annex15_file, frvt11_file, frvt11_accuracy_file):
    for name, path in (
        ("annex15", annex15_file),
        ("frvt11", frvt11_file),
        ("frvt11-accuracy", frvt11_accuracy_file),
    ):
        assert sha256sum(path) == DATASETS[name].sha256
        assert path.stat().st_size == DATASETS[name].size


# --- where a file is found ------------------------------------------------------------------


@pytest.fixture
def data_root(annex15_file, frvt11_file, frvt11_accuracy_file, tmp_path):
    """A folder holding the dataset folders, as ../shared/data does."""
    root = tmp_path / "data"
    for source, folder in (
        (annex15_file, "nist-frvt-annex15"),
        (frvt11_file, "nist-frvt11-demographics"),
        (frvt11_accuracy_file, "nist-frvt11-demographics"),
    ):
        (root / folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(source, root / folder / source.name)
    return root


@pytest.mark.parametrize("form", ["root", "annex15 folder", "dataset folder", "flat", "pathsep"])
def test_data_dir_forms_find_every_dataset(data_root, tmp_path, monkeypatch, form):
    """A folder of dataset folders; the older form naming the Annex 15 folder (which finds
    the folders beside it); the dataset's own folder; the files side by side; a list."""
    flat = tmp_path / "flat"
    flat.mkdir()
    for path in data_root.glob("*/*.csv"):
        shutil.copy(path, flat / path.name)
    value = {
        "root": data_root,
        "annex15 folder": data_root / "nist-frvt-annex15",
        "dataset folder": data_root / "nist-frvt11-demographics",
        "flat": flat,
        "pathsep": f"{tmp_path / 'nowhere-else'}:{data_root / 'nist-frvt-annex15'}",
    }[form]
    if form == "pathsep":
        (tmp_path / "nowhere-else").mkdir()
    monkeypatch.setenv(config.DATA_DIR_ENV, str(value))
    monkeypatch.setenv(config.CACHE_DIR_ENV, str(tmp_path / "cache"))
    for name, filename in (("annex15", ANNEX15), ("frvt11", FRVT11), ("frvt11-accuracy", OVERVIEW)):
        found = dataset_path(name)
        assert found.name == filename
        assert sha256sum(found) == DATASETS[name].sha256
    assert not (tmp_path / "cache").exists()  # nothing downloaded, nothing cached


def test_data_dir_naming_a_file(data_root, monkeypatch):
    target = data_root / "nist-frvt11-demographics" / FRVT11
    monkeypatch.setenv(config.DATA_DIR_ENV, str(target))
    assert dataset_path("frvt11") == target


def test_a_tampered_local_copy_is_refused(data_root, monkeypatch):
    target = data_root / "nist-frvt11-demographics" / FRVT11
    target.write_bytes(target.read_bytes().replace(b"0.0044", b"0.0045", 1))
    monkeypatch.setenv(config.DATA_DIR_ENV, str(data_root))
    with pytest.raises(DataError) as error:
        dataset_path("frvt11")
    assert str(error.value) == (
        f"{target}: sha256 is {sha256sum(target)}, expected "
        "de6cc1f24cc27d9f6807e665e03e59bc5bf4f0e0f969a096e6625c0cae6cc693. The file is not the "
        "pinned NIST FRVT 1:1 gender x race FMR table (commit "
        "388962501fa519fbc68618813b8242985d1c57f3); delete it and fetch again, or point "
        "AUDIT_DATA_DIR at a verified copy."
    )


def test_data_dir_that_does_not_exist_is_refused(tmp_path, monkeypatch):
    missing = tmp_path / "no-such-folder"
    monkeypatch.setenv(config.DATA_DIR_ENV, str(missing))
    with pytest.raises(DataError) as error:
        dataset_path("frvt11")
    assert str(error.value) == (
        f"AUDIT_DATA_DIR={str(missing)!r}: {missing} is neither a file nor a folder; point it "
        "at a folder holding the data (or their folders), or unset it"
    )


def test_data_dir_without_the_dataset_takes_a_verified_cached_copy(
    frvt11_file, tmp_path, monkeypatch
):
    """Set but lacking the file: the cache (no network) is still a verified local copy."""
    empty = tmp_path / "empty"
    empty.mkdir()
    cache = tmp_path / "cache"
    cache.mkdir()
    shutil.copy(frvt11_file, cache / FRVT11)
    monkeypatch.setenv(config.DATA_DIR_ENV, str(empty))
    monkeypatch.setenv(config.CACHE_DIR_ENV, str(cache))
    assert dataset_path("frvt11") == cache / FRVT11


# --- the offline first run: one sentence ----------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as closed:  # a port nothing listens on: the connection is refused
        closed.bind(("127.0.0.1", 0))
        return closed.getsockname()[1]


def _unreachable(monkeypatch, tmp_path, name: str, url: str) -> None:
    monkeypatch.delenv(config.DATA_DIR_ENV, raising=False)
    monkeypatch.setenv(config.CACHE_DIR_ENV, str(tmp_path / "cache"))
    monkeypatch.setitem(DATASETS, name, dataclasses.replace(DATASETS[name], url=url))


def test_first_run_without_network_says_what_to_do_in_one_sentence(tmp_path, monkeypatch):
    url = f"http://127.0.0.1:{_closed_port()}/data/{FRVT11}"
    _unreachable(monkeypatch, tmp_path, "frvt11", url)
    with pytest.raises(DataError) as error:
        dataset_path("frvt11")
    message = str(error.value)
    assert message == (
        f"could not download the NIST FRVT 1:1 gender x race FMR table from {url} (the "
        "connection was refused); to run offline, set AUDIT_DATA_DIR to a folder holding "
        "frvt_11_gender_race.csv (directly or in nist-frvt11-demographics/), or give the path "
        "of a copy as DATA (audit report PATH)"
    )
    assert "\n" not in message and "Error" not in message and "urllib3" not in message
    assert list((tmp_path / "cache").iterdir()) == []  # no half file left behind


def test_an_unresolvable_host_is_named_as_such(tmp_path, monkeypatch):
    """``.invalid`` never resolves (RFC 2606): the urllib3 NameResolutionError chain becomes
    a few words."""
    url = f"http://audit-test.invalid/{OVERVIEW}"
    _unreachable(monkeypatch, tmp_path, "frvt11-accuracy", url)
    with pytest.raises(DataError) as error:
        dataset_path("frvt11-accuracy")
    assert str(error.value) == (
        f"could not download the NIST FRVT 1:1 accuracy table from {url} (the host name could "
        "not be resolved: no network, or no DNS); to run offline, set AUDIT_DATA_DIR to a "
        "folder holding frvt_11_overview.csv (directly or in nist-frvt11-demographics/), or "
        "give the path of a copy to --accuracy-from"
    )


def test_the_command_line_ends_with_that_sentence(tmp_path, monkeypatch, capsys):
    url = f"http://127.0.0.1:{_closed_port()}/{ANNEX15}"
    _unreachable(monkeypatch, tmp_path, "annex15", url)
    monkeypatch.chdir(tmp_path)
    assert main(["report", "--no-progress"]) == 5  # a data source not fetched
    err = capsys.readouterr().err
    assert err == (
        f"audit: error: could not download the NIST FRVT Part 3 Annex 15 transcription from "
        f"{url} (the connection was refused); to run offline, set AUDIT_DATA_DIR to a folder "
        "holding nist-frvt3-annex15-data-flat.csv (directly or in nist-frvt-annex15/), or give "
        "the path of a copy as DATA (audit report PATH)\n"
    )
    assert not (tmp_path / "reports").exists()


def test_short_reasons():
    response = requests.Response()
    response.status_code, response.reason = 403, "Forbidden"
    assert short_reason(requests.HTTPError(response=response)) == "HTTP 403 Forbidden"
    assert short_reason(requests.ConnectTimeout()) == REASONS["timeout"]
    assert short_reason(requests.exceptions.SSLError()) == REASONS["tls"]
    wrapped = requests.ConnectionError(OSError(101, "Network is unreachable"))
    assert short_reason(wrapped) == REASONS["unreachable"]
    assert short_reason(RuntimeError("boom")) == "RuntimeError"


def test_only_a_download_imports_requests():
    """requests (and urllib3, charset_normalizer) is imported where a file is downloaded,
    not by the command nor by what a report's kernels import before their notebooks,
    which the server they are forked from waits on (0.15-0.2 CPU-s of its start)."""
    import subprocess
    import sys

    from audit.report import forkserver, kernels

    modules = ["audit.cli", "audit.report.runner", *forkserver.KERNEL_MODULES, *kernels.PRELOAD]
    code = "import sys\n" + "".join(f"import {m}\n" for m in modules)
    code += "print(sorted({'requests', 'urllib3', 'charset_normalizer'} & set(sys.modules)))\n"
    code += "import audit.sources.download as d; d.short_reason(TimeoutError())\n"
    code += "print(sorted({'requests'} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split("\n")[:2] == ["[]", "['requests']"]


def test_a_download_from_a_mirror_is_verified_and_cached(frvt11_file, http_folder, tmp_path):
    served, base = http_folder
    shutil.copy(frvt11_file, served / FRVT11)
    path = datasets.download(DATASETS["frvt11"], url=f"{base}/{FRVT11}", cache=tmp_path)
    assert path == tmp_path / FRVT11
    assert sha256sum(path) == DATASETS["frvt11"].sha256


# --- the resolver ---------------------------------------------------------------------------


def test_a_name_resolves_to_the_verified_file(frvt11_file):
    source = resolve("frvt11", kind="rates")
    assert source.dataset is DATASETS["frvt11"]
    assert source.path == frvt11_file
    assert not source.redistributable


def test_a_path_stays_as_written_and_a_copy_of_a_dataset_is_that_dataset(frvt11_file, tmp_path):
    mine = tmp_path / "mine.csv"
    mine.write_text("Algorithm,FMR.A,FMR.B\na,0.1,0.2\n")
    assert resolve(str(mine)).dataset is None
    assert resolve(str(mine)).redistributable
    copy = tmp_path / "renamed.csv"
    shutil.copy(frvt11_file, copy)
    assert identify(copy) is DATASETS["frvt11"]
    assert resolve(str(copy)).dataset is DATASETS["frvt11"]
    assert str(resolve("relative/rates.csv").path) == "relative/rates.csv"


def test_a_file_of_the_same_size_but_other_bytes_is_no_dataset(frvt11_file, tmp_path):
    other = tmp_path / "other.csv"
    other.write_bytes(frvt11_file.read_bytes().replace(b"0.0044", b"0.0045", 1))
    assert other.stat().st_size == DATASETS["frvt11"].size
    assert identify(other) is None


def test_resolver_refusals():
    with pytest.raises(UsageError) as error:
        resolve("frvt11-accuracy", kind="rates")
    assert str(error.value) == (
        "built-in dataset 'frvt11-accuracy' (NIST FRVT 1:1 accuracy table) is read as an "
        "accuracy table, not as a rates table; give it to --accuracy-from, as a Pareto "
        "frontier's accuracy axis"
    )
    with pytest.raises(UsageError) as error:
        datasets.get_dataset("frvt")
    assert str(error.value) == (
        "unknown dataset 'frvt'; the built-in datasets are ['annex15', 'frvt11', "
        "'frvt11-accuracy', 'voxceleb'] ('audit datasets' lists them); a file is given by its "
        "path"
    )


# --- the commands ---------------------------------------------------------------------------


def test_audit_datasets_lists_every_dataset(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    for d in DATASETS.values():
        assert f"{d.name}: {d.title}\n  holds    {d.holds}\n" in out
        assert f"  file     {d.filename}, {d.size:,} bytes, sha256 {d.sha256}\n" in out
        assert f"  licence  {d.licence}\n" in out
        assert f"  cite     {d.cite}\n" in out
    assert (
        "  source   github.com/martinsbruveris/nist-frvt-analysis at commit "
        "388962501fa519fbc68618813b8242985d1c57f3, data/frvt_11_gender_race.csv\n"
    ) in out
    assert out.count("  copies   not redistributable: never copied into a report\n") == 3


def test_audit_fetch_names(frvt11_file, frvt11_accuracy_file, capsys):
    assert main(["fetch", "frvt11", "frvt11-accuracy"]) == 0
    assert capsys.readouterr().out == (
        f"frvt11: {frvt11_file}\nsha256 {DATASETS['frvt11'].sha256} (verified)\n"
        f"frvt11-accuracy: {frvt11_accuracy_file}\n"
        f"sha256 {DATASETS['frvt11-accuracy'].sha256} (verified)\n"
    )
    assert main(["fetch", "nope"]) == 2
    assert "audit fetch: error: unknown dataset 'nope'" in capsys.readouterr().err
    # a name given twice is fetched once; one unknown is refused before any is fetched
    assert main(["fetch", "frvt11", "frvt11"]) == 0
    assert capsys.readouterr().out.count("(verified)") == 1
    assert main(["fetch", "frvt11", "nope"]) == 2
    assert capsys.readouterr().out == ""


def test_audit_fetch_all_among_names_fetches_every_one(monkeypatch, capsys):
    """The help says 'all' for every dataset: ``fetch all annex15`` said "unknown dataset
    'all'"."""
    import audit.sources.datasets as datasets
    import audit.sources.voxceleb as voxceleb

    fetched = []
    monkeypatch.setattr(datasets, "dataset_path", lambda name: fetched.append(name) or name)
    monkeypatch.setattr(datasets, "sha256sum", lambda path: "0")
    monkeypatch.setattr(voxceleb, "fetch_bt4vt", lambda: None)
    assert main(["fetch", "all", "annex15"]) == 0
    assert fetched == list(DATASETS)


def test_scores_take_the_score_dataset_by_name_and_refuse_another(tmp_path, capsys):
    assert main(["scores", "frvt11", "--reports-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.endswith(
        "audit scores: error: built-in dataset 'frvt11' (NIST FRVT 1:1 gender x race FMR "
        "table) is read as a rates table, not as a score table; give it as the first "
        "argument of 'audit report', 'ffmc', 'pareto' or 'check'\n"
    )
    # as it says (--data, which the message named, is a deprecated name of that argument)
    assert main(["check", "frvt11", "-q"]) == 0
    assert not any(tmp_path.iterdir())
