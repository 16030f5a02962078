"""The code passes the project's ruff lint and format settings (pyproject.toml)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parent.parent
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed (it comes with the 'test' extra)")
@pytest.mark.parametrize("command", [["check"], ["format", "--check"]])
def test_ruff(command):
    """Without ruff's cache, which keeps a file's verdict while others change it (a new
    module at the top changes how every file's imports are sorted)."""
    done = subprocess.run(
        [RUFF, *command, "--no-cache", "audit", "tests", "benchmarks"],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
