"""``python -m audit``: the command line."""

from audit.console import run

raise SystemExit(run())
