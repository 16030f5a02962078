"""Fetching and verifying the Annex 15 CSV: pinned checksum, atomic cache, offline copies."""

from __future__ import annotations

import hashlib
import os
import shutil

import pytest

from audit import config
from audit.sources import annex15 as data
from audit.sources.annex15 import DataError, annex15_path, fetch_annex15, sha256sum


def test_pinned_copy_checksum(annex15_file):
    assert sha256sum(annex15_file) == config.ANNEX15_SHA256
    assert annex15_file.stat().st_size == config.ANNEX15_SIZE


def test_fetch_verifies_and_caches(annex15_file, http_folder, tmp_path):
    served, base = http_folder
    shutil.copy(annex15_file, served / "annex15.csv")
    cache = tmp_path / "cache"
    path = fetch_annex15(url=f"{base}/annex15.csv", cache=cache)
    assert path == cache / config.ANNEX15_FILENAME
    assert sha256sum(path) == config.ANNEX15_SHA256
    assert os.listdir(cache) == [config.ANNEX15_FILENAME]
    # a second call uses the verified cache, without the source
    assert fetch_annex15(url=f"{base}/gone.csv", cache=cache) == path


def test_checksum_mismatch_is_refused_and_not_cached(annex15_file, http_folder, tmp_path):
    served, base = http_folder
    tampered = annex15_file.read_bytes().replace(b"0.0033", b"0.0034", 1)
    (served / "tampered.csv").write_bytes(tampered)
    cache = tmp_path / "cache"
    url = f"{base}/tampered.csv"
    with pytest.raises(DataError) as error:
        fetch_annex15(url=url, cache=cache)
    assert str(error.value) == data.CHECKSUM_MISMATCH.format(
        path=url,
        actual=hashlib.sha256(tampered).hexdigest(),
        expected=config.ANNEX15_SHA256,
        title="NIST FRVT Part 3 Annex 15 transcription",
        commit=config.ANNEX15_COMMIT,
    )
    assert os.listdir(cache) == []  # no half-written or wrong file left behind


def test_failed_download_leaves_nothing(http_folder, tmp_path):
    _, base = http_folder
    cache = tmp_path / "cache"
    url = f"{base}/missing.csv"
    with pytest.raises(DataError) as error:
        fetch_annex15(url=url, cache=cache)
    assert str(error.value) == (
        f"could not download the NIST FRVT Part 3 Annex 15 transcription from {url} "
        "(HTTP 404 File not found); to run offline, set AUDIT_DATA_DIR to a folder holding "
        "nist-frvt3-annex15-data-flat.csv (directly or in nist-frvt-annex15/), or give the "
        "path of a copy as DATA (audit report PATH)"
    )
    assert os.listdir(cache) == []


def test_corrupted_cache_is_refused_not_replaced(annex15_file, http_folder, tmp_path):
    served, base = http_folder
    shutil.copy(annex15_file, served / "annex15.csv")
    cache = tmp_path / "cache"
    cache.mkdir()
    cached = cache / config.ANNEX15_FILENAME
    cached.write_text("Algorithm\n")
    with pytest.raises(DataError) as error:
        fetch_annex15(url=f"{base}/annex15.csv", cache=cache)
    assert str(error.value) == data.CHECKSUM_MISMATCH.format(
        path=cached,
        actual=hashlib.sha256(b"Algorithm\n").hexdigest(),
        expected=config.ANNEX15_SHA256,
        title="NIST FRVT Part 3 Annex 15 transcription",
        commit=config.ANNEX15_COMMIT,
    )
    assert cached.read_text() == "Algorithm\n"


def test_default_cache_is_the_user_cache_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(config.CACHE_DIR_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert config.cache_dir() == tmp_path / "xdg" / "audit"
    monkeypatch.setenv(config.CACHE_DIR_ENV, str(tmp_path / "mine"))
    assert config.cache_dir() == tmp_path / "mine"


def test_default_reports_folder_is_under_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert config.reports_dir() == tmp_path / "reports"


def test_notebooks_are_package_data():
    folder = config.notebooks_dir()
    assert sorted(p.name for p in folder.glob("*.ipynb")) == [
        "compare_audit.ipynb",
        "crossgroup_audit.ipynb",
        "ffmc_audit.ipynb",
        "pareto_downselect.ipynb",
        "scores_audit.ipynb",
    ]


@pytest.mark.parametrize("layout", ["folder", "parent", "file"])
def test_data_dir_variable(annex15_file, tmp_path, monkeypatch, layout):
    target = tmp_path / "nist-frvt-annex15" / config.ANNEX15_FILENAME
    target.parent.mkdir()
    shutil.copy(annex15_file, target)
    value = {"folder": target.parent, "parent": tmp_path, "file": target}[layout]
    monkeypatch.setenv(config.DATA_DIR_ENV, str(value))
    assert annex15_path() == target


def test_data_dir_without_the_file(tmp_path, monkeypatch):
    """AUDIT_DATA_DIR set: nothing is downloaded; the refusal says where it looked."""
    monkeypatch.setenv(config.DATA_DIR_ENV, str(tmp_path))
    monkeypatch.setenv(config.CACHE_DIR_ENV, str(tmp_path / "cache"))
    with pytest.raises(DataError) as error:
        annex15_path()
    assert str(error.value) == (
        f"AUDIT_DATA_DIR={str(tmp_path)!r} holds no nist-frvt3-annex15-data-flat.csv (looked "
        f"in {tmp_path}/nist-frvt3-annex15-data-flat.csv, {tmp_path}/nist-frvt-annex15/"
        "nist-frvt3-annex15-data-flat.csv), and nothing is downloaded while it is set; put a "
        "copy there (directly or in nist-frvt-annex15/), or unset AUDIT_DATA_DIR to download "
        f"the NIST FRVT Part 3 Annex 15 transcription from {config.ANNEX15_URL}"
    )
    assert not (tmp_path / "cache").exists()


@pytest.mark.network
@pytest.mark.skipif(
    os.environ.get("AUDIT_NETWORK_TESTS") != "1",
    reason="downloads from the source; set AUDIT_NETWORK_TESTS=1",
)
def test_fetch_from_source(tmp_path):
    path = fetch_annex15(cache=tmp_path)
    assert sha256sum(path) == config.ANNEX15_SHA256
