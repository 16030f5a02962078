"""Import user measure modules so that any failure is one clear line naming the module.

:func:`audit.measures.registry.load_measure_module` turns an ImportError into a
message; a module can also raise anything else while it registers its measures,
or call ``sys.exit``. Both the command line (before any notebook kernel starts)
and the notebooks' import cell go through :func:`import_measure_modules`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from audit.exceptions import MeasureModuleError
from audit.measures.registry import load_measure_module

MODULE_RAISED = "measure module {name!r} raised {kind} on import: {reason}"
MODULE_EXITED = "measure module {name!r} called sys.exit({code!r}) on import"
MODULE_AS_FILE = (
    "measure module {name!r} is named as a file: give its dotted name, importable from "
    "the current folder ({dotted!r})"
)
MODULE_FILE_ELSEWHERE = (
    "measure module {name!r} is named as a file: give its dotted name, importable from "
    "the current folder (run audit from the folder that holds the module, or its package, "
    "or add that folder to PYTHONPATH)"
)


def _as_file(name: str) -> str | None:
    """The dotted name a module given as a file's path stands for: ``""`` where it has
    none importable from the current folder (a file elsewhere, a folder's name that is
    not an identifier); None for a dotted name (``"./my_measures.py"`` stands for
    ``"my_measures"``; ``"pkg.py"`` is the module ``py`` of ``pkg`` unless a file of that
    name is here)."""
    import os

    if not ("/" in name or "\\" in name or (name.endswith(".py") and Path(name).is_file())):
        return None
    try:
        here = os.getcwd()
    except FileNotFoundError:
        return ""
    path = os.path.join(here, os.path.expanduser(name.replace("\\", "/")))
    # the folders as they are, whatever links they were named through (the working folder
    # is known by its own path; the file is named by the link it may be)
    path = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    inside = os.path.relpath(path, os.path.realpath(here))
    parts = inside.removesuffix(".py").split(os.sep)
    if inside.startswith(os.pardir) or not all(p.isidentifier() for p in parts):
        return ""
    return ".".join(parts)


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text or "(no message)"


def import_measure_modules(names: Iterable[str]) -> list[str]:
    """Import each dotted module name in ``names``; return the measures they registered.

    Raises
    ------
    MeasureModuleError
        A module could not be found, raised any exception, or called ``sys.exit``.

    Examples
    --------
    >>> import_measure_modules(["no.such.module"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    audit.exceptions.MeasureModuleError: cannot import measure module 'no.such.module': ...
    """
    added: list[str] = []
    for name in names:
        dotted = _as_file(name)
        if dotted is not None:
            message = MODULE_AS_FILE if dotted else MODULE_FILE_ELSEWHERE
            raise MeasureModuleError(message.format(name=name, dotted=dotted))
        try:
            added += load_measure_module(name)
        except ImportError as error:
            raise MeasureModuleError(_one_line(error)) from None
        except SystemExit as error:
            raise MeasureModuleError(MODULE_EXITED.format(name=name, code=error.code)) from None
        except Exception as error:  # noqa: BLE001 - any failure of user code, named
            raise MeasureModuleError(
                MODULE_RAISED.format(name=name, kind=type(error).__name__, reason=_one_line(error))
            ) from None
    return added


__all__ = [
    "MODULE_AS_FILE",
    "MODULE_EXITED",
    "MODULE_FILE_ELSEWHERE",
    "MODULE_RAISED",
    "MeasureModuleError",
    "import_measure_modules",
]
