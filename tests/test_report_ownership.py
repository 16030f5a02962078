"""audit deletes or replaces only what it can prove it made: a marker inside each folder
it makes, exact names (never a prefix), never through a link; anything else at a
report's place is refused before any notebook runs. Each route by which a report
could once remove a user's files has its test, asserting the message and the files
still present; reports whose names share prefixes live side by side, also while
their runs overlap in real processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from audit.cli import main
from audit.exceptions import EXIT_OUTPUT
from audit.report import ownership, runner


@pytest.fixture
def rates_csv(tmp_path):
    path = tmp_path / "rates.csv"
    path.write_text("Algorithm,FMR.F,FNMR.F,FMR.M,FNMR.M\na,0.0001,0.011,0.00015,0.013\n")
    return path


@pytest.fixture
def ran(monkeypatch):
    """Notebooks replaced by a fast stand-in that writes the run's 8 hex digits (those
    of its staging folder, then of its version); the list of (staging folder, notebook)
    each run executed."""
    calls = []

    def execute(name, output, parameters, *, progress=True):
        calls.append((output.parent.name, name))
        output.write_text(output.parent.name[-8:])
        return output

    monkeypatch.setattr(runner, "execute", execute)
    monkeypatch.setattr(runner, "export_html", lambda nb, dest: dest.write_text(nb.read_text()))
    monkeypatch.setattr(runner, "declared_parameters", lambda name: ["data_path", "output_dir"])
    return calls


def _report(name, rates_csv, root, notes=None):
    return runner.run_report(
        name,
        notebooks=("pareto",),
        parameters={"data_path": str(rates_csv)},
        reports_root=root,
        progress=False,
        notify=(notes if notes is not None else []).append,
    )


def _tree(path: Path) -> dict[str, str]:
    """Every file under ``path`` (not following links) with its text."""
    return {
        str(p.relative_to(path)): p.read_text()
        for p in sorted(path.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _user_folder(path: Path) -> dict[str, str]:
    """A folder of the user's, with a manifest.json of its own and a sub-folder."""
    (path / "sub").mkdir(parents=True)
    (path / "manifest.json").write_text('{"mine": true}')
    (path / "thesis.tex").write_text("chapter one")
    (path / "sub" / "data.csv").write_text("a,b\n1,2\n")
    return _tree(path)


# --- names ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "owner"),
    [
        (".x.lock", ("x", "lock")),
        (".x.failed", ("x", "failed")),
        (".x.partial-0123abcd", ("x", "partial-0123abcd")),
        (".x.y.report-0123abcd", ("x.y", "report-0123abcd")),
        (".x.partial-1234abcd.report-0123abcd", ("x.partial-1234abcd", "report-0123abcd")),
        (".x.partial-1234abcd.lock", ("x.partial-1234abcd", "lock")),
        (".x-ffmc.link-0123abcd", ("x-ffmc", "link-0123abcd")),
        (".x.report-0123ABCD", None),
        (".x.report-0123abc", None),
        (".x.report-0123abcde", None),
        (".x.lockfile", None),
        ("x.lock", None),
        ("..lock", None),
        (".x.", None),
    ],
)
def test_every_hidden_name_has_one_owner(entry, owner):
    assert ownership.owner_of(entry) == owner


def test_a_marker_proves_a_real_folder_of_that_name_only(tmp_path):
    folder = tmp_path / ".x.partial-0123abcd"
    folder.mkdir()
    token = ownership.write_marker(folder, "x")
    assert ownership.marker_token(folder, "x") == token
    assert ownership.marker_token(folder, "x.y") is None  # another report's name
    link = tmp_path / "link"
    link.symlink_to(folder)
    assert ownership.marker_token(link, "x") is None  # never through a link
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / ownership.MARKER).symlink_to(folder / ownership.MARKER)
    assert ownership.marker_token(fake, "x") is None  # a marker that is a link
    other = tmp_path / "other"
    other.mkdir()
    (other / ownership.MARKER).write_text(json.dumps({"report": "x", "token": token}))
    assert ownership.marker_token(other, "x") is None  # not written by audit
    (other / ownership.MARKER).write_text("not json")
    assert ownership.marker_token(other, "x") is None


# --- route 1: a name that is a prefix of another ----------------------------------------------


def test_a_run_never_tidies_the_files_of_a_name_it_prefixes(ran, rates_csv, tmp_path):
    """``x`` once removed everything starting ``.x.``: ``x.y``'s finished version (its link
    left dangling) and the staging folder of a run of ``x.y`` in progress."""
    xy = _report("x.y", rates_csv, tmp_path)
    version = xy.resolve()
    staging = tmp_path / ".x.y.partial-0123abcd"  # as a run of x.y in progress has it
    staging.mkdir()
    ownership.write_marker(staging, "x.y")
    (staging / "pareto.ipynb").write_text("in progress")
    notes = []
    _report("x", rates_csv, tmp_path, notes)
    assert notes == [  # x's own stages, nothing of x.y's
        runner.RUNNING.format(notebook="pareto_downselect.ipynb"),
        runner.RENDERING.format(notebook="pareto_downselect.ipynb"),
        runner.FRONT_PAGE,
    ]
    assert xy.resolve() == version and (xy / "pareto.html").read_text() == version.name[-8:]
    assert (staging / "pareto.ipynb").read_text() == "in progress"
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".x.y.")) == sorted(
        [".x.y.lock", staging.name, version.name]
    )


def test_names_sharing_prefixes_dots_and_suffixes_coexist(ran, rates_csv, tmp_path):
    names = ["x", "x.y", "x.partial-1234abcd", "x-ffmc", "x.lock", "x.failed"]
    for _ in range(2):  # the second round replaces each report and tidies after itself
        for name in names:
            _report(name, rates_csv, tmp_path)
    for name in names:
        report = tmp_path / name
        assert (
            report.is_symlink()
            and (report / "pareto.html").read_text() == report.resolve().name[-8:]
        )
        assert ownership.owner_of(report.resolve().name) == (
            name,
            "report-" + report.resolve().name[-8:],
        )
    hidden = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("."))
    assert len(hidden) == 2 * len(names)  # one lock and one version each, nothing else


@pytest.mark.parametrize("through", ["link", "version"])
def test_a_reports_folder_inside_a_report_is_refused(ran, rates_csv, tmp_path, capsys, through):
    """Reports written inside a report audit made would go with it at that report's next
    run: such a reports folder is refused, through the report's link or its version
    folder, before any work; one beside it is taken."""
    outer = _report("x", rates_csv, tmp_path)
    before = _tree(outer.resolve())
    inside = (outer if through == "link" else outer.resolve()) / "inner"
    ran.clear()
    with pytest.raises(runner.ReportError) as error:
        _report("y", rates_csv, inside)
    assert str(error.value) == runner.INSIDE_A_REPORT.format(root=inside, report=outer.resolve())
    argv = ["pareto", str(rates_csv), "--reports-dir", str(inside / "deeper")]
    assert main(argv) == EXIT_OUTPUT
    assert capsys.readouterr().err.startswith("audit: error: cannot write reports in ")
    assert ran == [] and _tree(outer.resolve()) == before
    assert _report("y", rates_csv, tmp_path / "beside").is_dir()


def test_the_longest_name_is_built_and_replaced(ran, rates_csv, tmp_path):
    """A name of runner.LONGEST_NAME bytes (237: what the working folders add, 18 at most,
    keeps each within a folder name's 255) is built, and replaced by its next run."""
    name = "é" * 118 + "x"
    assert len(name.encode()) == runner.LONGEST_NAME == 237
    first = _report(name, rates_csv, tmp_path).resolve()
    second = _report(name, rates_csv, tmp_path).resolve()
    assert first != second and not first.exists() and second.parent == tmp_path
    assert (tmp_path / name).resolve() == second and len(ran) == 2


def test_a_reports_folder_that_cannot_be_entered_is_named_not_audits_marker(
    rates_csv, tmp_path, monkeypatch, capsys
):
    """A reports folder below one that cannot be entered is refused naming the folder the
    user gave (the search for a report's marker above it named that marker's file:
    '.../r/.audit-report: permission denied')."""
    from pathlib import Path

    locked = tmp_path / "locked"
    is_file = Path.is_file

    def denied(path):
        if locked in path.parents:
            raise PermissionError(13, "Permission denied", str(path))
        return is_file(path)

    monkeypatch.setattr(Path, "is_file", denied)
    monkeypatch.setattr(Path, "mkdir", lambda self, *a, **k: denied(self / "x"))
    argv = ["pareto", str(rates_csv), "--reports-dir", str(locked / "r")]
    assert main(argv) == EXIT_OUTPUT
    err = capsys.readouterr().err
    assert (
        err
        == "audit: error: "
        + runner.CANNOT_WRITE.format(path=locked / "r", reason=runner._REASONS[13])
        + "\n"
    )


# --- route 2: a link the user made at the report's place --------------------------------------


def test_a_link_to_the_users_folder_is_refused_before_any_notebook(ran, rates_csv, tmp_path):
    mine = tmp_path / "mine"
    before = _user_folder(mine)
    root = tmp_path / "reports"
    root.mkdir()
    (root / "x").symlink_to(mine)
    with pytest.raises(runner.ReportError) as error:
        _report("x", rates_csv, root)
    assert str(error.value) == runner.LINK_NOT_OURS.format(path=root / "x", target=mine)
    assert ran == []
    assert _tree(mine) == before
    assert os.readlink(root / "x") == str(mine)


def test_a_relative_link_to_a_folder_of_another_name_is_refused(ran, rates_csv, tmp_path):
    """A link to another report's version (here x.y's) is not x's to replace."""
    xy = _report("x.y", rates_csv, tmp_path)
    before = _tree(xy.resolve())
    (tmp_path / "x").symlink_to(xy.resolve().name)
    ran.clear()
    with pytest.raises(runner.ReportError) as error:
        _report("x", rates_csv, tmp_path)
    assert str(error.value) == runner.LINK_NOT_OURS.format(
        path=tmp_path / "x", target=xy.resolve().name
    )
    assert ran == [] and _tree(xy.resolve()) == before


def test_a_link_to_an_unmarked_version_folder_is_refused(ran, rates_csv, tmp_path):
    """A folder under audit's name, but neither marked nor laid out as a report."""
    version = tmp_path / ".x.report-0123abcd"
    before = _user_folder(version)
    (tmp_path / "x").symlink_to(version.name)
    with pytest.raises(runner.ReportError) as error:
        _report("x", rates_csv, tmp_path)
    assert str(error.value) == runner.VERSION_NOT_OURS.format(path=tmp_path / "x", version=version)
    assert ran == [] and _tree(version) == before


# --- routes 3 and 4: a folder of the user's at the report's place -----------------------------


def test_a_users_folder_holding_a_manifest_is_refused_before_any_notebook(ran, rates_csv, tmp_path):
    before = _user_folder(tmp_path / "x")
    with pytest.raises(runner.ReportError) as error:
        _report("x", rates_csv, tmp_path)
    assert str(error.value) == runner.FOLDER_NOT_OURS.format(path=tmp_path / "x")
    assert ran == [] and _tree(tmp_path / "x") == before
    assert not list(tmp_path.glob(".x.*[!k]"))  # no staging folder was made: only the lock


def test_a_folder_that_is_no_report_is_refused_before_any_notebook(ran, rates_csv, tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "notes.txt").write_text("mine")
    with pytest.raises(runner.ReportError) as error:
        _report("x", rates_csv, tmp_path)
    assert str(error.value) == runner.FOLDER_NOT_OURS.format(path=tmp_path / "x")
    assert ran == [] and _tree(tmp_path / "x") == {"notes.txt": "mine"}


def test_a_file_at_the_reports_place_is_refused(ran, rates_csv, tmp_path):
    (tmp_path / "x").write_text("mine")
    with pytest.raises(runner.ReportError) as error:
        _report("x", rates_csv, tmp_path)
    assert str(error.value) == runner.FILE_NOT_OURS.format(path=tmp_path / "x")
    assert ran == [] and (tmp_path / "x").read_text() == "mine"


def test_the_command_line_refuses_it_before_reading_the_data(
    tmp_path, capsys, monkeypatch, servers
):
    """The refusal comes before the table is read and before any kernel (or the server
    that forks them): here the data file does not even exist."""
    before = _user_folder(tmp_path / "r" / "x")
    monkeypatch.setattr(runner, "run_report", lambda *a, **k: pytest.fail("a report ran"))
    code = main(
        ["pareto", str(tmp_path / "missing.csv"), "--name", "x"]
        + ["--reports-dir", str(tmp_path / "r")]
    )
    assert code == EXIT_OUTPUT
    message = runner.FOLDER_NOT_OURS.format(path=tmp_path / "r" / "x")
    assert capsys.readouterr().err == f"audit: error: {message}\n"
    assert _tree(tmp_path / "r" / "x") == before
    assert servers == []


def test_a_streamed_report_is_refused_before_it_writes(tmp_path):
    before = _user_folder(tmp_path / "x")

    def write(folder):
        pytest.fail("the report was written")

    with pytest.raises(runner.ReportError) as error:
        runner.write_report("x", write, reports_root=tmp_path, notify=[].append)
    assert str(error.value) == runner.FOLDER_NOT_OURS.format(path=tmp_path / "x")
    with pytest.raises(runner.ReportError):
        runner.check_report_path(tmp_path, "x")  # what the CLI asks before streaming
    assert _tree(tmp_path / "x") == before


# --- route 5: never through a link ------------------------------------------------------------


def test_a_leftover_name_that_is_a_link_is_never_followed(ran, rates_csv, tmp_path):
    """A link under a leftover's exact name, to a folder holding a copy of a real marker:
    the link is left (and named), the folder it points to untouched."""
    first = _report("x", rates_csv, tmp_path)
    mine = tmp_path / "mine"
    before = _user_folder(mine)
    (mine / ownership.MARKER).write_text((first.resolve() / ownership.MARKER).read_text())
    before = _tree(mine)
    trap = tmp_path / ".x.partial-0123abcd"
    trap.symlink_to(mine)
    notes = []
    _report("x", rates_csv, tmp_path, notes)
    assert notes[0] == runner.KEPT.format(path=trap, name="x")
    assert trap.is_symlink() and _tree(mine) == before


def test_a_leftover_without_a_mark_is_left_and_named(ran, rates_csv, tmp_path):
    _report("x", rates_csv, tmp_path)
    stray = tmp_path / ".x.partial-0123abcd"
    before = _user_folder(stray)
    link = tmp_path / ".x.link-0123abcd"
    link.symlink_to("mine")  # a link of the name, but not to a version of x
    notes = []
    _report("x", rates_csv, tmp_path, notes)
    assert notes[:2] == [
        runner.KEPT.format(path=link, name="x"),
        runner.KEPT.format(path=stray, name="x"),
    ]
    assert _tree(stray) == before and link.is_symlink()


def test_a_lock_that_is_a_link_is_not_followed(ran, rates_csv, tmp_path):
    target = tmp_path / "elsewhere"
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / ".x.lock").symlink_to(target)
    with pytest.raises(runner.ReportError) as error:
        _report("x", rates_csv, tmp_path / "r")
    assert str(error.value) == runner.CANNOT_WRITE.format(
        path=tmp_path / "r" / ".x.lock", reason="it is a link"
    )
    assert not target.exists() and ran == []


def test_a_version_changed_during_the_run_is_not_removed(ran, rates_csv, tmp_path, monkeypatch):
    """The old version is removed after the swap only while its marker holds the token it
    held when the run began; here its marker is rewritten during the run."""
    first = _report("x", rates_csv, tmp_path)
    old = first.resolve()
    fast = runner.execute

    def execute(name, output, parameters, *, progress=True):
        (old / ownership.MARKER).unlink()
        ownership.write_marker(old, "x")  # another token
        return fast(name, output, parameters, progress=progress)

    monkeypatch.setattr(runner, "execute", execute)
    with pytest.raises(runner.ReportError) as error:
        _report("x", rates_csv, tmp_path)
    failed = tmp_path / ".x.failed"
    assert str(error.value) == runner.CHANGED.format(path=tmp_path / "x", kept=failed)
    assert first.resolve() == old and (old / "pareto.html").read_text() == old.name[-8:]


# --- reports of an earlier audit --------------------------------------------------------------


def _earlier_report(root: Path, name: str, extra: str | None = None) -> Path:
    """A report as the audit before markers wrote it: a link to ``.NAME.report-HEX``."""
    version = root / f".{name}.report-0123abcd"
    (version / "figures").mkdir(parents=True)
    (version / "tables").mkdir()
    (version / "input").mkdir()
    header = {"input_file": "a.csv", "input_sha256": "0" * 64, "input_bytes": 1}
    header |= {"parameters": {}, "audit_version": "0.1.0", "notebooks": ["pareto"]}
    (version / "manifest.json").write_text(json.dumps(header))
    for entry in ("index.html", "pareto.html", "pareto.ipynb", "tables/t.csv", "input/a.csv"):
        (version / entry).write_text("earlier")
    if extra:
        (version / extra).write_text("mine")
    (root / name).symlink_to(version.name)
    return version


def test_an_earlier_audits_report_is_replaced(ran, rates_csv, tmp_path):
    version = _earlier_report(tmp_path, "x")
    notes = []
    report = _report("x", rates_csv, tmp_path, notes)
    assert not version.exists()
    assert (report / "pareto.html").read_text() == report.resolve().name[-8:]
    assert notes == [
        runner.RUNNING.format(notebook="pareto_downselect.ipynb"),
        runner.RENDERING.format(notebook="pareto_downselect.ipynb"),
        runner.FRONT_PAGE,
    ]


def test_an_earlier_report_holding_a_file_of_the_users_is_refused(ran, rates_csv, tmp_path):
    version = _earlier_report(tmp_path, "x", extra="my-notes.txt")
    before = _tree(version)
    with pytest.raises(runner.ReportError) as error:
        _report("x", rates_csv, tmp_path)
    assert str(error.value) == runner.VERSION_NOT_OURS.format(path=tmp_path / "x", version=version)
    assert ran == [] and _tree(version) == before


def test_an_earlier_audits_leftovers_are_removed_and_a_lost_link_recovered(
    ran, rates_csv, tmp_path
):
    version = _earlier_report(tmp_path, "x")
    (tmp_path / "x").unlink()  # killed between the rename and the link, by the earlier audit
    notes = []
    runner._tidy(tmp_path, "x", notes.append)
    assert notes == [runner.RECOVERED.format(name="x", folder=version)]
    assert (tmp_path / "x").resolve() == version


# --- runs of different names at the same time, one in a process of its own ------------------

RUNNER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from audit.report import runner

    name, data, root, hold = sys.argv[1:5]

    def execute(notebook, output, parameters, *, progress=True):
        output.write_text(name)
        if hold != "-":
            Path(hold, "started").write_text(name)
            while not Path(hold, "release").exists():
                time.sleep(0.01)
        return output

    runner.execute = execute
    runner.export_html = lambda nb, dest: dest.write_text(nb.read_text())
    runner.declared_parameters = lambda notebook: ["data_path", "output_dir"]
    runner.run_report(name, notebooks=("pareto",), parameters={"data_path": data},
                      reports_root=root, progress=False)
    """
)


@pytest.mark.parametrize(("held", "other"), [("x.y", "x"), ("x", "x.y"), ("x", "x-ffmc")])
def test_a_run_beside_another_whose_name_it_prefixes(tmp_path, rates_csv, monkeypatch, held, other):
    """``held`` is stopped inside its notebook, in a process of its own, while ``other``
    runs from start to end (in this process: :data:`RUNNER`'s run); then ``held`` goes
    on. Both finish, each with its own report and nothing of the other's removed."""
    script = tmp_path / "run.py"
    script.write_text(RUNNER)
    root, hold = tmp_path / "r", tmp_path / "hold"
    hold.mkdir()

    def spawn(name, wait):
        return subprocess.Popen(
            [sys.executable, str(script), name, str(rates_csv), str(root), wait],
            stderr=subprocess.PIPE,
            text=True,
        )

    first = spawn(held, str(hold))
    while not (hold / "started").exists():
        assert first.poll() is None, first.communicate()[1]
    staging = next(root.glob(f".{held}.partial-*"))

    def execute(notebook, output, parameters, *, progress=True):
        output.write_text(other)
        return output

    try:
        with monkeypatch.context() as patch:
            patch.setattr(runner, "execute", execute)
            patch.setattr(runner, "export_html", lambda nb, dest: dest.write_text(nb.read_text()))
            patch.setattr(runner, "declared_parameters", lambda name: ["data_path", "output_dir"])
            _report(other, rates_csv, root)
        assert staging.is_dir()  # the other run left it alone
    finally:
        (hold / "release").write_text("")  # the held run goes on, whatever happened here
    _, err = first.communicate()
    assert first.returncode == 0, err
    for name in (held, other):
        assert (root / name / "pareto.ipynb").read_text() == name
    hidden = sorted(p.name for p in root.iterdir() if p.name.startswith("."))
    assert hidden == sorted(
        [f".{held}.lock", f".{other}.lock", (root / held).resolve().name]
        + [(root / other).resolve().name]
    )


# --- what the user put in a report of audit's --------------------------------------------------


def test_a_report_holding_the_users_files_is_refused_before_any_notebook(ran, rates_csv, tmp_path):
    """A report run again under its name removed the notes and tables the user had put in
    it, without a word: its folder is replaced only while it holds what audit wrote."""
    report = _report("x", rates_csv, tmp_path)
    version = report.resolve()
    (report / "notes.md").write_text("what we decided")
    (report / "input" / "mine.csv").write_text("a,b\n")  # in a folder audit made
    (report / "drafts" / "deep").mkdir(parents=True)
    (report / "drafts" / "deep" / "fig.svg").write_text("<svg/>")
    before, ran[:] = _tree(version), []
    with pytest.raises(runner.ReportError) as error:
        _report("x", rates_csv, tmp_path)
    assert str(error.value) == ownership.NOT_MADE.format(
        path=tmp_path / "x", entries="'drafts', 'input/mine.csv', 'notes.md'", version=version
    )
    assert ran == [] and _tree(version) == before and report.resolve() == version
    shutil.move(report / "drafts", tmp_path / "drafts")  # moved out, as it says
    (report / "notes.md").unlink()
    (report / "input" / "mine.csv").unlink()
    again = _report("x", rates_csv, tmp_path)
    assert again.resolve() != version and not version.exists()


def test_a_file_of_the_report_the_user_changed_is_not_replaced(ran, rates_csv, tmp_path):
    report = _report("x", rates_csv, tmp_path)
    version = report.resolve()
    with open(report / "pareto.html", "a") as page:
        page.write("<!-- my annotation -->")
    with pytest.raises(runner.ReportError) as error:
        _report("x", rates_csv, tmp_path)
    assert str(error.value) == ownership.NOT_MADE.format(
        path=tmp_path / "x", entries="'pareto.html'", version=version
    )
    assert (version / "pareto.html").read_text().endswith("<!-- my annotation -->")


def test_jupyters_checkpoint_of_a_notebook_as_audit_wrote_it_is_audits(ran, rates_csv, tmp_path):
    """A report's notebook opened in Jupyter gets ``.ipynb_checkpoints/`` beside it, and
    the next run of the report's name was refused. A checkpoint holding the notebook's
    very bytes is a copy of what audit wrote: replaced with the report. One that differs
    (the notebook edited, saved, and then put back) is the user's, and is kept."""
    report = _report("x", rates_csv, tmp_path)
    version = report.resolve()
    (report / ".ipynb_checkpoints").mkdir()
    saved = report / ".ipynb_checkpoints" / "pareto-checkpoint.ipynb"
    shutil.copy(report / "pareto.ipynb", saved)
    again = _report("x", rates_csv, tmp_path)
    assert again.resolve() != version and not version.exists()
    version = again.resolve()
    (again / ".ipynb_checkpoints").mkdir()
    saved = again / ".ipynb_checkpoints" / "pareto-checkpoint.ipynb"
    saved.write_text((again / "pareto.ipynb").read_text() + " ")  # edited
    with pytest.raises(runner.ReportError) as error:
        _report("x", rates_csv, tmp_path)
    assert str(error.value) == ownership.NOT_MADE.format(
        path=tmp_path / "x", entries="'.ipynb_checkpoints'", version=version
    )
    saved.write_text((again / "pareto.ipynb").read_text())
    (again / ".ipynb_checkpoints" / "other-checkpoint.ipynb").write_text("{}")  # of no notebook
    with pytest.raises(runner.ReportError):
        _report("x", rates_csv, tmp_path)
    assert saved.exists()


def test_a_failed_runs_folder_the_user_changed_is_kept(ran, rates_csv, tmp_path, monkeypatch):
    """A failed run keeps its folder as ``.NAME.failed`` and tells the user to inspect its
    notebook there: the next run removed it, with the user's edits and notes. It is kept
    and named where it changed since the run left it; removed where it did not."""
    from audit.exceptions import NotebookFailed

    fast = runner.execute

    def fails(name, output, parameters, *, progress=True):
        fast(name, output, parameters, progress=progress)
        raise NotebookFailed("failed")

    for edit in (False, True):
        monkeypatch.setattr(runner, "execute", fails)
        with pytest.raises(NotebookFailed):
            _report("x", rates_csv, tmp_path)
        failed = tmp_path / ".x.failed"
        assert (failed / "pareto.ipynb").is_file()
        if edit:
            with open(failed / "pareto.ipynb", "a") as notebook:
                notebook.write(" my debugging notes")
            (failed / "debug.csv").write_text("a,b\n")
        monkeypatch.setattr(runner, "execute", fast)
        notes = []
        _report("x", rates_csv, tmp_path, notes)
        if not edit:
            assert not failed.exists() and notes[0] == runner.REMOVED.format(folder=failed)
    assert (failed / "pareto.ipynb").read_text().endswith(" my debugging notes")
    assert (failed / "debug.csv").is_file()
    assert notes[0] == runner.KEPT_OTHERS.format(
        path=failed, name="x", entries="'debug.csv', 'pareto.ipynb'"
    )


def test_an_old_version_the_system_will_not_let_go_of_is_said_not_an_internal_error(
    ran, rates_csv, tmp_path, monkeypatch
):
    """The old version's folder removed after a new report was published: where the
    system refused (a checkpoint folder Jupyter made as another user), the run ended
    with an internal error (status 70), the old version half removed and unmarked. It
    keeps its marker, the run ends well, and the next run tries again, saying so."""
    old = _report("x", rates_csv, tmp_path).resolve()

    def refuse(path, *args, **kwargs):
        raise PermissionError(1, "Operation not permitted", str(path))

    real = shutil.rmtree
    assert (old / "input").is_dir()  # a folder of audit's in it
    monkeypatch.setattr(ownership.shutil, "rmtree", refuse)
    new = _report("x", rates_csv, tmp_path).resolve()
    assert new != old and (tmp_path / "x").resolve() == new
    assert ownership.marker_token(old, "x") is not None  # still audit's, to be removed
    notes = []
    _report("x", rates_csv, tmp_path, notes)
    assert notes[0] == runner.NOT_REMOVED.format(
        path=old, reason=f"Operation not permitted: {old / 'input'}"
    )
    monkeypatch.setattr(ownership.shutil, "rmtree", real)
    notes = []
    _report("x", rates_csv, tmp_path, notes)
    assert not old.exists() and runner.REMOVED.format(folder=old) in notes


def test_a_fifo_where_audit_reads_its_files_is_never_waited_on(ran, rates_csv, tmp_path):
    """A FIFO named as a checkpoint, or as a leftover's marker, was opened to be read, and
    the run waited for a writer for ever, saying nothing."""
    report = _report("x", rates_csv, tmp_path)
    (report / ".ipynb_checkpoints").mkdir()
    os.mkfifo(report / ".ipynb_checkpoints" / "pareto-checkpoint.ipynb")
    (tmp_path / ".x.partial-0000abcd").mkdir()
    os.mkfifo(tmp_path / ".x.partial-0000abcd" / ".audit-report")
    with pytest.raises(runner.ReportError) as error:
        _report("x", rates_csv, tmp_path)
    assert str(error.value) == ownership.NOT_MADE.format(
        path=tmp_path / "x", entries="'.ipynb_checkpoints'", version=report.resolve()
    )
    assert (tmp_path / ".x.partial-0000abcd" / ".audit-report").exists()


def test_a_file_put_in_the_report_during_the_run_keeps_both_reports(
    ran, rates_csv, tmp_path, monkeypatch
):
    first = _report("x", rates_csv, tmp_path)
    old = first.resolve()
    fast = runner.execute

    def execute(name, output, parameters, *, progress=True):
        (old / "notes.md").write_text("written while audit ran")
        return fast(name, output, parameters, progress=progress)

    monkeypatch.setattr(runner, "execute", execute)
    with pytest.raises(runner.ReportError) as error:
        _report("x", rates_csv, tmp_path)
    failed = tmp_path / ".x.failed"
    refused = ownership.NOT_MADE.format(path=tmp_path / "x", entries="'notes.md'", version=old)
    assert str(error.value) == f"{refused}; the new report is kept in {failed}"
    assert first.resolve() == old and (old / "notes.md").read_text() == "written while audit ran"
    assert (failed / "pareto.html").is_file()


def test_a_leftover_version_holding_the_users_files_is_left_and_named(
    ran, rates_csv, tmp_path, monkeypatch
):
    """An earlier version a killed run left unlinked, holding a file of the user's, is
    kept and named, not tidied away."""
    first = _report("x", rates_csv, tmp_path).resolve()
    with monkeypatch.context() as patched:  # killed before it removed the version it replaced
        patched.setattr(ownership, "remove_folder", lambda *args: ownership.Kept())
        second = _report("x", rates_csv, tmp_path).resolve()
    assert first.is_dir() and second != first
    (first / "notes.md").write_text("mine")
    notes = []
    third = _report("x", rates_csv, tmp_path, notes).resolve()
    assert runner.KEPT_OTHERS.format(path=first, name="x", entries="'notes.md'") in notes
    assert (first / "notes.md").read_text() == "mine" and not second.exists() and third.is_dir()


def test_a_reports_folder_through_a_link_to_nothing_is_named_so(tmp_path):
    """``--reports-dir`` a link to a folder that does not exist was refused as "File
    exists"."""
    link = tmp_path / "reports"
    link.symlink_to(tmp_path / "gone")
    for root in (link, link / "sub"):
        with pytest.raises(runner.ReportError) as error:
            runner.check_reports_root(root)
        reason = runner.DANGLING.format(link=link, target=tmp_path / "gone")
        assert str(error.value) == runner.CANNOT_WRITE.format(path=root, reason=reason)
    assert not (tmp_path / "gone").exists()


@pytest.mark.parametrize("how", ["renamed", "copied"])
def test_a_report_kept_under_another_name_is_never_removed(ran, rates_csv, tmp_path, how):
    """``mv reports/x reports/x-old`` (or a copy of the link) to keep a report, then a run
    of ``x``: the run took the version back as "recovered from an interrupted run",
    published over it and removed it; ``x-old`` led nowhere."""
    first = _report("x", rates_csv, tmp_path)
    version = first.resolve()
    kept = tmp_path / "x-old"
    if how == "renamed":
        first.rename(kept)
    else:
        kept.symlink_to(os.readlink(first))
    before = _tree(version)
    notes = []
    again = _report("x", rates_csv, tmp_path, notes)
    assert again.resolve() != version and kept.resolve() == version
    assert _tree(kept) == before
    if how == "renamed":  # a leftover of the name: left, and said why
        assert runner.KEPT_LINKED.format(path=version, name="x", links=kept) in notes
    _report("x", rates_csv, tmp_path)  # and again: the one it replaces goes, not the kept
    assert _tree(kept) == before


def test_a_report_without_an_inventory_is_judged_by_what_its_manifest_lists(tmp_path):
    """A report written before audit kept an inventory lost a file the user put in its
    ``tables/``: it was judged by its top level alone.  Its manifest names each table,
    figure and copy of an input it wrote."""
    version = tmp_path / ".x.report-0123abcd"
    for folder in ("tables", "figures", "input/accuracy"):
        (version / folder).mkdir(parents=True)
    ownership.write_marker(version, "x")
    manifest = {"input_file": "/u/a.csv", "input_sha256": "0" * 64, "parameters": {},
                "audit_version": "0.1.0", "input_copy": "input/a.csv",
                "accuracy_input": {"file": "/u/acc.csv", "copy": "input/accuracy/acc.csv"},
                "outputs": {"ffmc": {"tables": {"t": "tables/t.csv"},
                                     "figures": {"f": "figures/f.png"}}}}  # fmt: skip
    (version / "manifest.json").write_text(json.dumps(manifest))
    for made in ("index.html", "tables/t.csv", "figures/f.png", "figures/f.svg", "input/a.csv",
                 "input/accuracy/acc.csv"):  # fmt: skip
        (version / made).write_text("audit's")
    (tmp_path / "x").symlink_to(version.name)
    found = ownership.check_place(tmp_path, "x", ["ffmc"])
    assert found is not None and ownership.not_made(found, ["ffmc"]) == []
    (version / "tables" / "mine.csv").write_text("the user's")
    (version / "input" / "notes").mkdir()
    (version / "input" / "notes" / "n.txt").write_text("the user's")
    with pytest.raises(runner.ReportError) as error:
        ownership.check_place(tmp_path, "x", ["ffmc"])
    assert str(error.value) == ownership.NOT_MADE.format(
        path=tmp_path / "x", entries="'input/notes', 'tables/mine.csv'", version=version
    )
