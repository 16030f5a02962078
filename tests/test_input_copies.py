"""A report's copy of its input, by licence: a user's file is copied; a built-in dataset whose
licence forbids redistribution (Annex 15, FRVT 1:1 and its accuracy table) is recorded by
source, commit and sha256 instead, in the manifest and on the front page; --input-copy
chooses otherwise.  The notebooks are replaced by a fast stand-in that records what it read."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from audit.cli import main
from audit.exceptions import ParameterError
from audit.report import runner
from audit.sources.datasets import DATASETS
from audit.sources.download import sha256sum

pytestmark = pytest.mark.usefixtures("shared_server")  # one server for its reports

NOT_COPIED = (
    "not copied into the report: built-in dataset {name!r}, whose licence does not allow "
    "redistribution ({licence}); the notebooks read the verified file where it is, and "
    "input_source records where it comes from"
)


@pytest.fixture
def fast_notebooks(monkeypatch):
    """Notebooks that record the parameters they were given and the bytes of their input."""

    def execute(name, output, parameters, *, progress=True):
        data = Path(output.parent, parameters["data_path"])
        read = {"params": parameters, "sha256": sha256sum(data)}
        if parameters.get("accuracy_from"):
            read["accuracy_sha256"] = sha256sum(Path(output.parent, parameters["accuracy_from"]))
        output.write_text(json.dumps(read))
        return output

    monkeypatch.setattr(runner, "execute", execute)
    monkeypatch.setattr(runner, "export_html", lambda nb, dest: dest.write_text("<html></html>"))
    monkeypatch.setattr(
        runner,
        "declared_parameters",
        lambda name: ["data_path", "accuracy_from", "accuracy_column", "output_dir"],
    )


def _run(tmp_path, parameters, **kwargs):
    folder = runner.run_report(
        "x",
        notebooks=("pareto",),
        parameters=parameters,
        reports_root=tmp_path / "reports",
        progress=False,
        notify=lambda _: None,
        **kwargs,
    )
    manifest = json.loads((folder / "manifest.json").read_text())
    read = json.loads((folder / "pareto.ipynb").read_text())
    page = (folder / "index.html").read_text(encoding="utf-8")
    return folder, manifest, read, page


def _notes(page: str) -> list[str]:
    return [
        " ".join(html.unescape(n).split())
        for n in re.findall(r'<p class="note input">(.*?)</p>', page, re.DOTALL)
    ]


def test_a_dataset_that_may_not_be_redistributed_is_not_copied(
    fast_notebooks, frvt11_file, tmp_path
):
    folder, manifest, read, page = _run(tmp_path, {"data_path": str(frvt11_file)})
    assert not (folder / "input").exists()
    frvt11 = DATASETS["frvt11"]
    assert manifest["input_copy"] == NOT_COPIED.format(name="frvt11", licence=frvt11.licence)
    assert manifest["input_source"] == {
        "dataset": "frvt11",
        "title": "NIST FRVT 1:1 gender x race FMR table",
        "repository": "github.com/martinsbruveris/nist-frvt-analysis",
        "commit": "388962501fa519fbc68618813b8242985d1c57f3",
        "path": "data/frvt_11_gender_race.csv",
        "url": frvt11.url,
        "sha256": frvt11.sha256,
        "bytes": 16_117,
        "licence": frvt11.licence,
        "redistributable": False,
        "cite": frvt11.cite,
    }
    assert manifest["input_sha256"] == frvt11.sha256
    # the notebooks read the verified file where it is
    assert read["params"]["data_path"] == str(frvt11_file)
    assert read["sha256"] == frvt11.sha256
    assert _notes(page) == [
        "Not copied into the report: built-in dataset 'frvt11', whose licence does not allow "
        f"redistribution ({frvt11.licence}); the notebooks read the verified file where it is, "
        "and input_source records where it comes from. Source: NIST FRVT 1:1 gender x race FMR "
        "table, github.com/martinsbruveris/nist-frvt-analysis at commit "
        "388962501fa519fbc68618813b8242985d1c57f3, data/frvt_11_gender_race.csv (sha256 "
        f"{frvt11.sha256}); 'audit fetch frvt11' fetches the same bytes."
    ]


def test_the_default_annex15_input_is_not_copied(fast_notebooks, annex15_file, tmp_path):
    folder, manifest, read, _ = _run(tmp_path, {})
    assert not (folder / "input").exists()
    assert manifest["input_source"]["dataset"] == "annex15"
    assert manifest["input_copy"].startswith(
        "not copied into the report: built-in dataset 'annex15'"
    )
    assert read["sha256"] == DATASETS["annex15"].sha256


def test_a_users_file_is_copied(fast_notebooks, tmp_path):
    mine = tmp_path / "mine.csv"
    mine.write_text("Algorithm,FMR.A,FMR.B\na,0.0001,0.0002\n")
    folder, manifest, read, page = _run(tmp_path, {"data_path": str(mine)})
    assert manifest["input_copy"] == "input/mine.csv"
    assert "input_source" not in manifest
    assert read["params"]["data_path"] == "input/mine.csv"
    assert (folder / "input" / "mine.csv").read_bytes() == mine.read_bytes()
    assert _notes(page) == []


@pytest.mark.parametrize("choice", ["always", "never"])
def test_input_copy_chooses(fast_notebooks, frvt11_file, tmp_path, choice):
    mine = tmp_path / "mine.csv"
    mine.write_text("Algorithm,FMR.A,FMR.B\na,0.0001,0.0002\n")
    for path in (frvt11_file, mine):
        folder, manifest, read, _ = _run(tmp_path, {"data_path": str(path)}, input_copy=choice)
        copied = (folder / "input" / path.name).is_file()
        assert copied == (choice == "always")
        if choice == "never":
            assert manifest["input_copy"] == (
                "not copied into the report (input_copy='never'); the notebooks read the file "
                "where it is"
            )
            assert read["params"]["data_path"] == str(path)
        else:
            assert manifest["input_copy"] == f"input/{path.name}"
    with pytest.raises(ParameterError) as error:
        _run(tmp_path, {"data_path": str(mine)}, input_copy="sometimes")
    assert str(error.value) == (
        "parameter input_copy: expected one of 'auto', 'always', 'never', got 'sometimes'"
    )


def test_the_accuracy_table_is_a_second_input_treated_alike(
    fast_notebooks, frvt11_file, frvt11_accuracy_file, tmp_path
):
    parameters = {
        "data_path": str(frvt11_file),
        "accuracy_from": "frvt11-accuracy",
        "accuracy_column": "Mugshot, 1e-5",
    }
    folder, manifest, read, page = _run(tmp_path, parameters)
    overview = DATASETS["frvt11-accuracy"]
    assert manifest["accuracy_input"] == {
        "file": str(frvt11_accuracy_file),
        "sha256": overview.sha256,
        "bytes": overview.size,
        "copy": NOT_COPIED.format(name="frvt11-accuracy", licence=overview.licence),
        "source": overview.source(),
    }
    assert read["params"]["accuracy_from"] == str(frvt11_accuracy_file)
    assert read["accuracy_sha256"] == overview.sha256
    assert len(_notes(page)) == 2 and "'audit fetch frvt11-accuracy'" in _notes(page)[1]
    mine = tmp_path / "acc.csv"
    mine.write_text('Name,"Mugshot, 1e-5"\nacisw-003,0.01\n')
    parameters["accuracy_from"] = str(mine)
    folder, manifest, read, _ = _run(tmp_path, parameters)
    assert manifest["accuracy_input"]["copy"] == "input/accuracy/acc.csv"
    assert read["params"]["accuracy_from"] == "input/accuracy/acc.csv"
    assert (folder / "input" / "accuracy" / "acc.csv").read_bytes() == mine.read_bytes()


def test_cli_input_copy_option(fast_notebooks, frvt11_file, tmp_path, monkeypatch, capsys):
    """--data frvt11 --input-copy always: the name resolves to the verified file, and the
    report carries a copy because it was asked to."""
    monkeypatch.setattr(
        runner,
        "declared_parameters",
        lambda name: ["data_path", "measure", "alpha", "weights", "max_accuracy", "output_dir"],
    )
    argv = ["pareto", "frvt11", "--reports-dir", str(tmp_path), "--no-progress"]
    assert main([*argv, "--input-copy", "always"]) == 0
    folder = tmp_path / "frvt11-pareto"
    assert (folder / "input" / "frvt_11_gender_race.csv").read_bytes() == frvt11_file.read_bytes()
    assert main([*argv, "--name", "auto"]) == 0
    assert not (tmp_path / "auto" / "input").exists()
    capsys.readouterr()
