"""The papermill-parameterised notebooks behind the reports, shipped as package data.

This folder is the package ``audit.notebooks`` (mapped in ``pyproject.toml``):
``audit.config.notebooks_dir()`` locates it through :mod:`importlib.resources`.
"""
