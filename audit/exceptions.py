"""Every error and warning class of audit, under one base each.

A caller writes one ``except AuditError`` for "audit refused what I gave it",
and tells the kinds apart when it needs to (the model is
:mod:`sklearn.exceptions`)::

    AuditError
    ├── InputError (ValueError)          the data given was refused
    │   ├── RatesError                   a rates table
    │   ├── ScoresError                  a comparison-score table
    │   ├── WeightsError                 group weights or comparison counts
    │   └── UndefinedMeasureError        a measure undefined, zero_division="raise"
    ├── UsageError (ValueError)          a parameter, option or name was refused
    │   ├── ParameterError               a value outside its declared constraint
    │   ├── UnknownNameError (KeyError)  a measure, algorithm, notebook or dataset not known
    │   ├── MeasureContractError         a measure breaking the measure contract
    │   └── MeasureModuleError (ImportError)  a user's measure module failed to import
    ├── OutputError (OSError)            a report or file could not be written
    │   └── ReportError                  a report folder could not be made or published
    ├── ReportFailed (RuntimeError)      a notebook of a report raised
    │   └── NotebookFailed
    └── SourceError (RuntimeError)       a built-in dataset could not be fetched or verified
        ├── DataError                    a built-in data file (Annex 15, FRVT 1:1)
        └── VoxCelebError                the bt4vt VoxCeleb1-H scores
            └── DownloadError

    AuditWarning (UserWarning)
    ├── DataWarning                      the data look implausible (may be misread)
    │   ├── ImplausibleRatesWarning
    │   ├── PairLikeGroupsWarning
    │   ├── OrientationWarning           distances read as similarities, or the reverse
    │   └── ScoresWarning                (audit.tables.scores) rates resting on little
    ├── UndefinedMeasureWarning          a measure undefined, a convention applied
    ├── UnmatchedAlgorithmsWarning       two tables joined by algorithm do not match
    ├── MeasureBoundsWarning             a measure returned values outside its bounds
    └── InstallWarning                   the install is not as its source

Each kind carries the exit status the command line ends with
(:attr:`AuditError.exit_status`; the statuses are listed in :data:`EXIT_STATUSES`).
Any other exception raised inside audit is a bug: the command line says so in
one sentence, keeps the traceback in a file and ends with :data:`EXIT_INTERNAL`.
The older built-in bases (``ValueError``, ``OSError``, ...) stay, so code that
caught those keeps working.
"""

from __future__ import annotations

#: Exit statuses of the ``audit`` command, by what ended the run.
EXIT_OK = 0
EXIT_REPORT_FAILED = 1
EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_OUTPUT = 4
EXIT_SOURCE = 5
EXIT_INTERNAL = 70  # EX_SOFTWARE of sysexits.h
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports it
EXIT_PIPE = 141  # 128 + SIGPIPE
EXIT_TERMINATED = 143  # 128 + SIGTERM

EXIT_STATUSES = {
    EXIT_OK: "success",
    EXIT_REPORT_FAILED: "a notebook of the report failed (the executed notebook is kept)",
    EXIT_USAGE: "usage: an unknown option, or an option or parameter value refused",
    EXIT_INPUT: "input refused: the data file or table given",
    EXIT_OUTPUT: "output: a report or file could not be written",
    EXIT_SOURCE: "data source: a built-in dataset could not be fetched or verified",
    EXIT_INTERNAL: "internal error: a bug in audit (the traceback is kept in a file)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
    EXIT_PIPE: "the reader of the output went away (e.g. '| head')",
    EXIT_TERMINATED: "terminated (SIGTERM)",
}


class AuditError(Exception):
    """Base of every refusal audit makes: the input, a parameter, an output or a source.

    A message is one sentence, on one line, unless :attr:`own_lines` says its line
    breaks are its own: a line break in it is then part of a value it names (a file's
    name), which the command line writes as ``\\n``, as it does any control character,
    so that one name cannot pass for the start of another line."""

    exit_status = EXIT_INPUT
    #: Whether the message's line breaks are its own (a second line saying where a
    #: failed notebook is kept), each value it names on one line: printed as lines.
    own_lines = False

    def __str__(self) -> str:
        # a KeyError subclass would print its argument quoted; audit's messages never are
        return str(self.args[0]) if len(self.args) == 1 else super().__str__()


class InputError(AuditError, ValueError):
    """The data given (a table, scores, counts) was refused; the message names the
    file, the line and the column where it can."""

    exit_status = EXIT_INPUT


class UsageError(AuditError, ValueError):
    """A parameter, option, measure name or report name was refused."""

    exit_status = EXIT_USAGE


class ParameterError(UsageError):
    """A parameter's value lies outside its declared constraint
    (:mod:`audit.validation`); the message names the parameter, the value given
    and what is expected."""


class OutputError(AuditError, OSError):
    """A report or file could not be written; the message says why in plain words."""

    exit_status = EXIT_OUTPUT

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class ReportFailed(AuditError, RuntimeError):
    """A step of a report raised; the message names the step and where its output is kept."""

    exit_status = EXIT_REPORT_FAILED


class SourceError(AuditError, RuntimeError):
    """A built-in dataset could not be fetched or verified; the message says what was
    tried and how to use a local copy instead."""

    exit_status = EXIT_SOURCE


class AuditWarning(UserWarning):
    """Base of every warning audit emits."""


class DataWarning(AuditWarning):
    """The data were read, but look implausible: they may have been read other than
    as meant (units, swapped columns, labels); the message says how to check."""


# ------------------------------------------------------------------ the classes by kind
class RatesError(InputError):
    """The rates table is malformed; the message names file, row and column."""


class ScoresError(InputError):
    """The score table is malformed; the message names file, row and column."""


class WeightsError(InputError):
    """The weights or counts are malformed; the message names the source, row and column."""


class UndefinedMeasureError(InputError):
    """A measure was undefined and ``zero_division="raise"`` was asked for."""


class UnknownNameError(UsageError, KeyError):
    """A name given -- a measure, an algorithm, a notebook, a dataset -- is not known; the
    message lists the known ones.  (A ``KeyError`` too, as a failed look-up.)"""


class MeasureContractError(UsageError):
    """A measure broke its contract (wrong result type or shape, unflagged NaN or inf)."""


class MeasureModuleError(UsageError, ImportError):
    """A user measure module could not be imported; the message names it."""


class ReportError(OutputError):
    """A report could not be written, locked or named; the message says why in plain words."""


class NotebookFailed(ReportFailed):
    """A notebook raised; the message names the notebook, the cell and the error, and on
    a second line where the executed notebook is kept."""

    own_lines = True


class DataError(SourceError):
    """The data could not be found, fetched or verified."""


class VoxCelebError(SourceError):
    """The bt4vt data could not be fetched, verified or matched."""


class DownloadError(VoxCelebError):
    """The pinned bt4vt wheel could not be downloaded (no network, PyPI unavailable, a timeout).

    Only this failure may be taken as "data not available"; a wheel that is
    downloaded but fails its checksum raises the plain :class:`VoxCelebError`.
    """


class ImplausibleRatesWarning(DataWarning):
    """A rates table whose rates look misread: percent read as fractions, FMR and FNMR
    swapped."""


class PairLikeGroupsWarning(DataWarning):
    """A one-group-per-row table whose group labels look like (enrolment, probe) pairs."""


class OrientationWarning(DataWarning):
    """Scores whose median mated score lies on the non-match side of the median
    non-mated one: distances read as similarities (``--distance`` forgotten), or the
    reverse, which puts every FNMR near 1 (:mod:`audit.scores.orientation`)."""


class UndefinedMeasureWarning(AuditWarning):
    """A measure was undefined for some algorithms and a convention was applied."""


class UnmatchedAlgorithmsWarning(AuditWarning):
    """Two tables joined by algorithm (a rates table and an accuracy table) do not hold
    the same algorithms, or a joined cell is empty; the message names them."""


class MeasureBoundsWarning(AuditWarning):
    """A measure returned values outside its declared bounds (flagged undefined)."""


class InstallWarning(AuditWarning):
    """audit's install is not as its source: e.g. its compiled counting loops were built
    from other source (NumPy counts meanwhile, the same counts); install it again."""


def exit_status(error: BaseException) -> int:
    """The command line's exit status for ``error``: its kind's, else :data:`EXIT_INTERNAL`.

    >>> exit_status(ParameterError("parameter alpha: expected a number in [0, 1], got 2"))
    2
    >>> exit_status(KeyError("boom"))
    70
    """
    if isinstance(error, AuditError):
        return error.exit_status
    return EXIT_INTERNAL


def warn(message, category: type[Warning] = AuditWarning) -> None:
    """Warn ``message`` as raised where the user's code called into audit: at the first
    frame outside the package (a script's line, a notebook's cell), not inside it (where
    a fixed stack level pointed, the argument checks every public function runs through,
    in ``audit/validation.py``, took the blame whatever the call).  A warning raised on a
    thread of audit's own has no such frame: it names the thread's start, where the
    stack ends.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn("a rate rests on 18 comparisons", DataWarning)
    >>> caught[0].category.__name__, caught[0].filename.startswith("<doctest")
    ('DataWarning', True)
    """
    import os
    import sys
    import warnings

    inside = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 2  # stacklevel 2: the caller of this function
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(inside):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
