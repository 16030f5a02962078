"""Measures a user writes outside the package, to show they are audited like the built-ins."""
