"""``python -m audit``: the command line."""

from audit.cli import main

raise SystemExit(main())
