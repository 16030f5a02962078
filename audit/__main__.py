"""``python -m audit``: the command line."""

from audit.cli import run

raise SystemExit(run())
