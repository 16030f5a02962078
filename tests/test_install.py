"""The package works installed: the wheel carries the notebooks and every module, and an
installed copy (not the checkout) writes its reports under the working folder.

The wheel is built once per module from a copy of the sources, so the checkout gets no
``build/`` or ``*.egg-info`` folder.  The installed copy goes into a fresh venv with
``--no-deps``; the dependencies come from the test interpreter's site-packages, added
by a ``.pth`` file (a path line only: that folder's own ``.pth`` files, among them the
editable install's finder, are not run, so ``audit`` comes from the wheel alone).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import venv
import zipfile
from pathlib import Path

import pytest

import audit

pytestmark = pytest.mark.slow

REPOSITORY = Path(__file__).resolve().parent.parent
#: Whether this machine has the C compiler Python builds extensions with: the install
#: then builds audit's compiled counting loops (setup.py), and these tests expect them.
COMPILER = shutil.which((sysconfig.get_config_var("CC") or "cc").split()[0]) is not None
NOTEBOOKS = [
    "compare_audit.ipynb",
    "crossgroup_audit.ipynb",
    "ffmc_audit.ipynb",
    "pareto_downselect.ipynb",
    "scores_audit.ipynb",
]


def _run(command, **kwargs):
    # without PYTHONPATH, which the report runner sets in this process for its kernels: on
    # it pip would find the checkout's audit "already installed", and Python import it
    kwargs.setdefault("env", {k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    done = subprocess.run(command, capture_output=True, text=True, check=False, **kwargs)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def private_tmp():
    """A temporary folder of this module's own: pytest's numbered base folder is pruned by
    other pytest sessions of the same user, which must not remove the venv under our feet."""
    folder = Path(tempfile.mkdtemp(prefix="audit-install-test-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def wheel(private_tmp):
    source = private_tmp / "source"
    source.mkdir()
    ignore = shutil.ignore_patterns(
        "__pycache__", "*.egg-info", ".ipynb_checkpoints", "*.so", "*.pyd"
    )  # the editable install's built library too: the wheel builds its own
    for name in ("audit", "notebooks"):
        shutil.copytree(REPOSITORY / name, source / name, ignore=ignore)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy(REPOSITORY / name, source / name)
    out = private_tmp / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)])
    (path,) = out.glob("*.whl")
    return path


def test_wheel_holds_the_notebooks_and_every_module(wheel):
    assert wheel.name.startswith(f"audit-{audit.__version__}-")  # the one version
    names = set(zipfile.ZipFile(wheel).namelist())
    built = [
        n for n in names if n.startswith("audit/scores/_kernel.") and n.endswith((".so", ".pyd"))
    ]
    if COMPILER:  # the compiled loops, for this platform
        assert len(built) == 1 and not wheel.name.endswith("-none-any.whl"), (wheel.name, built)
    for notebook in NOTEBOOKS:
        assert f"audit/notebooks/{notebook}" in names
    modules = {
        path.relative_to(REPOSITORY).as_posix()
        for path in (REPOSITORY / "audit").rglob("*.py")
        if "__pycache__" not in path.parts
    }
    assert modules - names == set()  # a subpackage missing from pyproject's list shows here
    assert "audit/report/templates/frontpage.html.j2" in names  # the front page's template
    metadata = zipfile.ZipFile(wheel).read(f"audit-{audit.__version__}.dist-info/METADATA").decode()
    assert f"\nVersion: {audit.__version__}\n" in metadata
    # a lean runtime: what a report runs on, the full Jupyter only as an extra
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist: ")]
    core = {line.split()[1].split(">")[0] for line in requires if "extra ==" not in line}
    assert {"papermill", "nbclient", "nbconvert", "ipykernel", "seaborn"} <= core
    assert "jupyter" not in core and "notebook" not in core and "jupyterlab" not in core
    assert 'Requires-Dist: jupyter>=1.0; extra == "jupyter"' in metadata


@pytest.fixture(scope="module")
def installed(wheel, private_tmp):
    """``(python, audit)`` executables of a fresh venv holding the wheel."""
    env = private_tmp / "venv"
    venv.create(env, with_pip=False)
    python = env / "bin" / "python"
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-deps",
            str(wheel),
        ]
    )
    purelib = Path(
        _run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
        ).stdout.strip()
    )
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (purelib / "_audit_test_dependencies.pth").write_text("\n".join(sorted(ours)) + "\n")
    return python, env / "bin" / "audit"


def _environment(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "AUDIT_CACHE_DIR")}
    env["AUDIT_CACHE_DIR"] = str(tmp_path / "cache")
    # nbconvert's templates are data files of the dependencies' environment, not a package
    env["JUPYTER_PATH"] = str(Path(sys.prefix) / "share" / "jupyter")
    return env


def test_installed_package_runs_outside_the_checkout(installed, tmp_path):
    python, _ = installed
    work = tmp_path / "empty"
    work.mkdir()
    done = _run(
        [
            str(python),
            "-c",
            "import audit, audit.config as c; print(audit.__file__); print(c.notebooks_dir()); "
            "print(c.reports_dir()); print(c.cache_dir()); "
            "from audit.scores import counting; print(counting.compiled_available())",
        ],
        cwd=work,
        env=_environment(tmp_path),
    )
    package, notebooks, reports, cache, compiled = done.stdout.splitlines()
    assert compiled == str(COMPILER)  # the wheel's own compiled loops count
    site = Path(python).parent.parent
    assert Path(package).is_relative_to(site) and not Path(package).is_relative_to(REPOSITORY)
    assert sorted(p.name for p in Path(notebooks).glob("*.ipynb")) == NOTEBOOKS
    assert Path(notebooks).is_relative_to(site)
    assert Path(reports) == work / "reports"
    assert Path(cache) == tmp_path / "cache"


@pytest.mark.skipif(not COMPILER, reason="no C compiler here: the install builds no compiled loops")
def test_the_compiled_loops_are_built_where_a_compiler_is_found():
    """The install this suite runs on (make's editable one) built the compiled counting
    loops: the tests of tests/test_counting.py run them."""
    from audit.scores import counting

    assert counting.compiled_available()


def test_installed_report_from_an_empty_folder(installed, annex15_file, small_scores, tmp_path):
    _, command = installed
    work = tmp_path / "empty"
    work.mkdir()
    env = _environment(tmp_path)
    env["AUDIT_DATA_DIR"] = str(annex15_file)
    _run(
        [
            str(command),
            "report",
            "--name",
            "x",
            "--no-progress",
            # the installation is under test, not the statistics: one measure, no replicates
            "-p",
            "measures",
            '["garbe"]',
            "-p",
            "uncertainty_method",
            "none",
            "-p",
            "verdict_replicates",
            "1",  # unused: uncertainty_method none runs no replicates
            "-p",
            "n_random",
            "100",
            "-p",
            "alpha_step",
            "0.05",
        ],
        cwd=work,
        env=env,
    )
    page = (work / "reports" / "x" / "index.html").read_text(encoding="utf-8")
    assert '<table class="verdicts">' in page  # drawn by the template the wheel carries
    manifest = json.loads((work / "reports" / "x" / "manifest.json").read_text())
    assert manifest["outputs"]["ffmc"]["tables"]["ffmc_table"] == "tables/ffmc_table.csv"
    assert manifest["input_sha256"] == audit.sha256sum(annex15_file)
    assert sorted(os.listdir(work)) == ["reports"]  # nothing else written to the working folder

    shutil.copy(small_scores, work / "small.csv")
    _run(
        [
            str(command),
            "scores",
            "small.csv",
            "--distance",
            "--no-progress",
            "-p",
            "sweep_points",
            "3",
            "-p",
            "bootstrap_replicates",
            "0",
        ],
        cwd=work,
        env=env,
    )
    assert (work / "reports" / "small" / "index.html").is_file()
    assert (work / "reports" / "small" / "tables" / "measures.csv").is_file()
