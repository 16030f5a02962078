"""The ``audit`` command line: one grammar for every command (the parser is
:mod:`audit.cli.parser`; this module runs the commands and says how they ended).

Every command that reads a table takes it the same way, as its first argument
``DATA`` (a file, or the name of a built-in dataset; the Annex 15 table when
left out); ``scores`` takes its ``SCORES`` the same way.  One spelling per
meaning: ``--measures`` for a list, ``--measure`` for the one measure of a
frontier, ``--alpha`` wherever alpha matters.  Every option's value is checked
by the declaration of its parameter (:mod:`audit.validation`) before any
notebook starts, and the notebooks check their parameters again on their first
cell with the same words.

Exit statuses (:mod:`audit.exceptions`): 0 success; 1 a notebook failed; 2 a
usage error (an option or parameter refused; the command's usage is shown); 3
the input refused; 4 an output not written; 5 a data source not fetched or
verified; 70 an internal error (a bug in audit: its traceback is kept in a
file); 130 interrupted; 141 the reader of the output went away; 143 terminated.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import errno
import itertools
import os
import platform
import sys
import traceback
from pathlib import Path

from audit import console
from audit.cli.parser import (
    _OPTION_PARAMETERS,
    PART_REPORTS,
    _subparser,
    build_parser,
    given_as,
)
from audit.exceptions import (
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OUTPUT,
    EXIT_PIPE,
    EXIT_USAGE,
    AuditError,
    InputError,
    ReportFailed,
    UsageError,
)
from audit.report.text import escape_terminal, one_line
from audit.validation import OPERATING_POINTS

NEEDS_RATES_MEASURE = (
    "measure {name!r} needs comparison scores; the rates reports take rate measures "
    "(see 'audit measures'); use 'audit scores' for score measures"
)
SWEEP_ENDS = (
    "sweep_min ({low!r}) must be below sweep_max ({high!r}): the sweep of target FMRs runs "
    "from the one up to the other"
)
GROUPINGS_BUILT_IN = (
    "groupings regroups the built-in VoxCeleb scores by their speakers' attributes; the "
    "groups of a score file are its own columns: name them with --attributes (e.g. "
    "--attributes gender,nationality)"
)
ENCODING_BUILT_IN = (
    "option encoding={encoding!r} does not apply to the built-in VoxCeleb scores: they are "
    "read by a reader of their own (the bt4vt files and their metadata)"
)
FLOOR_LOWER_ABOVE = (
    "floor_lower ({value:.6g}) must be at most the floor of the {rate}s of {source} "
    "({floor:.6g}): the transcription redraw draws a floored {rate} between the two"
)
NO_ANALYSIS_REPLICATES = (
    "{n} replicates asked for, and uncertainty_method 'none', which draws none: give one"
)
#: Every measure of ``--measures`` inapplicable to the table: nothing to audit.
NONE_APPLICABLE = "no measure given applies to {source}: {reasons}"
DEPRECATED_OPTION = "note: {old} is deprecated; give the {what} as the first argument: {example}"
SET_BY_ARGUMENTS = "-p {key} is set by the command's own arguments: {how}"
GIVEN_TWICE = "-p {key} {value} sets what {option} sets already; give one of them"
#: The notebook parameters the command's own arguments set, and how they are given (a
#: command refuses as such only those its notebooks declare: any other -p is refused as
#: a parameter they do not take).
_ARGUMENT_PARAMETERS = {
    "data_path": "give the rates table as the first argument (audit {command} FILE)",
    "scores_path": "give the score table as the first argument (audit {command} FILE)",
    "data_paths": "give the tables as the arguments (audit {command} FILE FILE ...)",
    "data_labels": "each table is labelled by its dataset's name or its file's stem",
    "accuracy_sources": "give each table's accuracy with --accuracy-from LABEL=FILE:COLUMN",
    "accuracy_columns": "give each table's accuracy with --accuracy-from LABEL=FILE:COLUMN",
    "output_dir": "give the reports' folder with --reports-dir and the report's name with --name",
    "measure_modules": "give user measure modules with --measure-module MODULE, importable "
    "from the current folder",
}
DATASET_NOT_FILE = (
    "note: {name!r} is read as the built-in dataset of that name, not as the file of that "
    "name here; give ./{name} to read the file"
)
NO_WORKING_FOLDER = (
    "the working folder no longer exists (deleted, or moved away): run audit from a "
    "folder that exists"
)
TWO_INPUTS = "{what} given twice: {first!r} and {second!r} (as the first argument and as {option})"
REPORT_WRITTEN = "report written to {folder}\nopen {index}"
LINK_LOOP = "a loop of symbolic links (following them leads back to where they start)"
INTERNAL_ERROR = (
    "internal error: {kind} raised inside audit. This is a bug in audit, not a problem "
    "with your input or options.\nThe traceback is kept in {path}; please report the bug "
    "to the audit maintainers with that file and the command you ran{verbose}."
)
VERBOSE_HINT = " (--verbose prints it here)"
TRACEBACK_NOT_KEPT = "(the traceback could not be written to a file: {reason}; it follows)"
INTERRUPTED = "interrupted; nothing was published, and an earlier report of that name is intact"

#: The notebooks each report command runs.
NOTEBOOKS = {
    "report": ("ffmc", "pareto"),
    "ffmc": ("ffmc",),
    "pareto": ("pareto",),
    "scores": ("scores",),
    "compare": ("compare",),
}
#: Commands whose notebooks' kernels start before the table is read and checked (a
#: scores report may be streamed, with no notebook; the others' kernels are forked from a
#: server started then, :func:`_report`). ``compare`` starts its kernel likewise, while
#: it reads its tables (:func:`_compare`).
AHEAD = ("report", "ffmc", "pareto")
#: The table options passed to :func:`audit.tables.rates.read_rates` (and the notebooks).
READ_OPTIONS = (
    "units",
    "columns",
    "attributes",
    "separator",
    "pair_separator",
    "pairs",
    "rate_position",
    "ignore",
)
#: Where :func:`_parameters` records, in the command's arguments, the option that set
#: each parameter (:func:`_as_typed`).
SET_BY = "_set_by_option"
NO_ACCURACY_COLUMN = (
    "--accuracy-from {source!r} needs --accuracy-column, one of its columns: {columns}"
)
COLUMN_WITHOUT_TABLE = (
    "--accuracy-column {column!r} names a column of the table given with --accuracy-from, "
    "which is missing"
)
BOTH_ACCURACIES = (
    "--accuracy {accuracy} and --accuracy-from both choose the accuracy axis; give one"
)
ACCURACY_FROM_FORM = (
    "--accuracy-from {value!r}: expected DATA=SOURCE:COLUMN, e.g. "
    "frvt11=frvt11-accuracy:'Mugshot, 1e-5', DATA one of {labels}"
)
ACCURACY_FROM_DATA = (
    "--accuracy-from {value!r}: {data!r} is none of the datasets compared, {labels}"
)
ACCURACY_FROM_TWICE = "--accuracy-from gives dataset {data!r} two accuracy tables"
ACCURACY_FROM_SOURCE = (
    "--accuracy-from {value!r}: {rest!r} does not start with a built-in dataset or a file "
    "followed by ':'; write DATA=SOURCE:COLUMN, e.g. frvt11=frvt11-accuracy:'Mugshot, 1e-5'"
)
ACCURACY_FROM_COLUMN = (
    "--accuracy-from {value!r} names no column; write {data}={source}:COLUMN, COLUMN one of "
    "{columns}"
)
CROSS_GROUP_ONLY = (
    "parameter {key!r} is for the cross-group notebook (the FMR of each pair of groups), "
    "which audit report adds for a cross-group table; {source} has one group per row (a "
    "cross-group table has columns group_1 and group_2, or FMR.<enrolment><separator>"
    "<probe> columns read with --pair-separator)"
)
ACCURACY_FROM_WHICH = (
    "--accuracy-from {value!r} gives an accuracy table to {readings}; rename the file or "
    "the dataset so that one of them is meant"
)
ACCURACY_FROM_AMBIGUOUS = (
    "--accuracy-from {value!r}: {rest!r} splits into a table and a column in more than one "
    "way ({splits}); give the file a name without ':'"
)


def _input(args: argparse.Namespace, notify) -> str | None:
    """The input given: the first argument, or the deprecated option that named it."""
    option = "--scores" if args.command == "scores" else "--data"
    what = "score table" if args.command == "scores" else "rates table"
    old = getattr(args, "scores_option" if args.command == "scores" else "data_option", None)
    if old is not None:
        if args.data is not None:
            raise UsageError(
                TWO_INPUTS.format(what=what, first=args.data, second=old, option=option)
            )
        notify(
            DEPRECATED_OPTION.format(old=option, what=what, example=f"audit {args.command} {old}")
        )
        return old
    return args.data


def _parameters(args: argparse.Namespace, given: str | None) -> dict:
    """The notebook parameters the options stand for, each checked by its declaration."""
    from audit.report.runner import check_parameters
    from audit.validation import check, parse

    parameters = {}
    options = {}  # each parameter an option sets: the option, as given (-p may not set it too)
    set_by = _set_by(args)  # ... and the option alone, for refusals
    if getattr(args, "memory", None) is not None:  # (read where a score set is streamed)
        set_by["memory"] = given_as(args, "memory") or "--memory"
    if given is not None:
        key = "scores_path" if args.command == "scores" else "data_path"
        parameters[key] = given
    if getattr(args, "distance", False):
        parameters["higher_is_match"], options["higher_is_match"] = False, "--distance"
    for flag in ("merge_labels", "fmr_above_fnmr"):
        if getattr(args, flag, False):
            parameters[flag], options[flag] = True, "--" + flag.replace("_", "-")
    if getattr(args, "measure_module", None):
        parameters["measure_modules"] = check("measure_modules", list(args.measure_module))
    for option, name in _OPTION_PARAMETERS.items():
        text = getattr(args, option, None)
        if text is not None:
            set_by[name] = given_as(args, option)
            parameters[name] = parse(name, text)
            options[name] = f"{given_as(args, option)} {text}"
    replicates = getattr(args, "replicates", None)
    if replicates is not None:
        name = {"scores": "bootstrap_replicates", "compare": "rank_replicates"}.get(
            args.command, "n_replicates"
        )
        set_by[name] = given_as(args, "replicates")
        parameters[name] = parse(name, replicates)
        options[name] = f"{given_as(args, 'replicates')} {replicates}"
    if getattr(args, "operating_point", None) is not None:
        parameters["target_fmr"] = OPERATING_POINTS[args.operating_point]
        options["target_fmr"] = f"{given_as(args, 'operating_point')} {args.operating_point}"
    pairs = getattr(args, "parameter", [])  # -p KEY VALUE
    declared, also = _declarations(args.command) if pairs else ({}, ())
    for key, text in pairs:
        # refused by its name, before its value or any use of it, as the runner refuses it,
        # whether or not the report runs a notebook (a streamed scores report runs none)
        check_parameters({key: None}, declared, also=also)
        if key in _ARGUMENT_PARAMETERS:
            raise UsageError(
                SET_BY_ARGUMENTS.format(
                    key=key, how=_ARGUMENT_PARAMETERS[key].format(command=args.command)
                )
            )
        if key in options:  # which of the two was meant, only the user knows
            raise UsageError(GIVEN_TWICE.format(key=key, value=text, option=options[key]))
        parameters[key] = _notebook_parameter(key, text)
        options[key] = f"-p {key} {text}"
    if isinstance(parameters.get("weights"), str) and parameters["weights"] not in (
        "equal",
        "counts",
    ):  # a file, --weights or -p weights: absolute, as the kernels run elsewhere
        parameters["weights"] = str(Path(parameters["weights"]).expanduser().resolve())
    if parameters.get("accuracy_from") is not None:
        _accuracy_from(parameters)
    elif parameters.get("accuracy_column") is not None:
        raise UsageError(COLUMN_WITHOUT_TABLE.format(column=parameters["accuracy_column"]))
    return parameters


def _set_by(args: argparse.Namespace) -> dict[str, str | None]:
    """The option that set each parameter, as the user wrote it, recorded in the
    command's arguments for :func:`_as_typed`."""
    return vars(args).setdefault(SET_BY, {})


def _as_typed(error: UsageError, args: argparse.Namespace) -> UsageError:
    """The refusal of a parameter that an option set, naming the option as the user wrote
    it (``--replicates``), not the parameter (``n_replicates``) a ``-p`` would name.

    >>> from audit.exceptions import ParameterError
    >>> args = argparse.Namespace(**{SET_BY: {"n_replicates": "--replicates"}})
    >>> print(_as_typed(ParameterError("parameter n_replicates: expected ..., got 0"), args))
    --replicates: expected ..., got 0
    """
    said = str(error)
    for name, option in _set_by(args).items():
        prefix = f"parameter {name}"
        if option and said.startswith((prefix + ":", prefix + " ")):
            return type(error)(option + said[len(prefix) :])
    return error


def _accuracy_from(parameters: dict) -> None:
    """The table an accuracy axis comes from: a file (absolute: the kernels run elsewhere)
    or a built-in dataset's name, and its column, named before any kernel starts."""
    from audit.sources.datasets import DATASETS
    from audit.tables.accuracy import accuracy_columns

    given = parameters["accuracy_from"]
    if parameters.get("accuracy") not in (None, "auto"):
        raise UsageError(BOTH_ACCURACIES.format(accuracy=parameters["accuracy"]))
    source = given if given in DATASETS else str(Path(given).expanduser().resolve())
    if parameters.get("accuracy_column") is None:
        raise UsageError(NO_ACCURACY_COLUMN.format(source=given, columns=accuracy_columns(source)))
    parameters["accuracy_from"] = source


def _declarations(command: str) -> tuple[dict, list]:
    """The parameters each notebook of ``command`` declares, and those of a report's
    cross-group notebook (taken here; refused once a plain table is read, as
    :data:`CROSS_GROUP_ONLY` says), each notebook read once."""
    from audit.report.runner import declared_parameters

    also = declared_parameters("crossgroup") if command == "report" else []
    return {n: declared_parameters(n) for n in NOTEBOOKS.get(command, ())}, also


def _notebook_parameter(key: str, text: str):
    """A ``-p KEY VALUE`` value read and checked by the declaration of ``KEY``."""
    from audit.validation import PARAMETERS, parse

    if key not in PARAMETERS:  # refused by the runner, which knows what its notebooks take
        return text
    return parse(key, text)


def _resolve(given: str | None, command: str) -> str | None:
    """The input as a local file's absolute path (the kernels run in the report folder):
    a built-in dataset's name is fetched and verified
    (:func:`audit.sources.datasets.resolve`); the score dataset's name stands for the
    default scores (``None``)."""
    if given is None:
        return None
    from audit.sources.datasets import DATASETS, resolve

    if command == "scores":
        if given in DATASETS:
            resolve(given, kind="scores")  # another kind is refused, saying where it goes
            return None
        return str(Path(given).expanduser().resolve())
    if command == "check" and given in DATASETS:
        return str(resolve(given).path)  # check summarises an accuracy table too
    return str(resolve(given, kind="rates").path.resolve())


# ------------------------------------------------------------------ commands
def _list_measures(args: argparse.Namespace) -> int:
    from audit.measures.modules import import_measure_modules
    from audit.measures.registry import get_measure, measure_names

    _importable_here(args.measure_module)
    import_measure_modules(args.measure_module)
    specs = [get_measure(name) for name in measure_names()]
    name_width = max(len(m.name) for m in specs)
    label_width = max(len(m.label) for m in specs)
    for m in specs:
        lo, hi = (
            "-inf" if m.bounds[0] is None else m.bounds[0],
            "inf" if m.bounds[1] is None else m.bounds[1],
        )
        direction = "higher is fairer" if m.higher_is_fairer else "lower is fairer"
        iso = f"; ISO/IEC 19795-10: {m.iso_term}" if m.iso_term else ""
        print(
            one_line(
                f"{m.name:{name_width}s}  {m.label:{label_width}s}  [{lo}, {hi}] ideal "
                f"{m.ideal}; {direction}; {m.inputs}{iso}; {m.citation}"
            )
        )
    return 0


def _read_table(parameters: dict):
    from audit.sources.datasets import resolve
    from audit.tables.datasets import read_source

    options = {k: parameters[k] for k in READ_OPTIONS if k in parameters}
    for key in ("count_tolerance", "merge_labels", "fmr_above_fnmr", "encoding"):
        if key in parameters:
            options[key] = parameters[key]
    source = resolve(parameters.get("data_path"), kind="rates", default="annex15")
    return source.path, read_source(source, **options)


def _check(parameters: dict, quiet: bool) -> int:
    from audit.report.check import accuracy_lines, check_lines
    from audit.sources.datasets import identify, sha256sum

    dataset = identify(parameters["data_path"]) if parameters.get("data_path") else None
    if dataset is not None and dataset.kind == "accuracy":
        path = parameters["data_path"]
        lines = accuracy_lines(path, sha256sum(path), dataset)
        if not quiet:
            print("\n".join(lines))
        return 0
    path, table = _read_table(parameters)
    lines = check_lines(path, table, sha256sum(path))
    if not quiet:
        print("\n".join(lines))
    return 0


def _fetch(names: list[str], quiet: bool) -> int:
    from audit.sources.datasets import DATASETS, dataset_path, get_dataset, sha256sum
    from audit.sources.voxceleb import fetch_bt4vt

    for name in names:  # each name known before any is fetched ('all' among them)
        if name != "all":
            get_dataset(name)
    chosen = list(DATASETS) if "all" in names else list(dict.fromkeys(names)) or ["annex15"]
    for name in chosen:
        dataset = get_dataset(name)
        if dataset.kind == "scores":
            fetch_bt4vt()
        path = dataset_path(name)
        if not quiet:
            print(f"{one_line(name)}: {one_line(path)}\nsha256 {sha256sum(path)} (verified)")
    return 0


def _list_datasets(quiet: bool) -> int:
    from audit.sources.datasets import DATASETS, cached_status

    for d in DATASETS.values() if not quiet else ():
        commit = f" at commit {d.commit}" if d.commit else ""
        copies = (
            "redistributable: a report carries a copy"
            if d.redistributable
            else "not redistributable: never copied into a report"
        )
        lines = [
            f"{d.name}: {d.title}",
            f"  holds    {d.holds}",
            f"  file     {d.filename}, {d.size:,} bytes, sha256 {d.sha256}",
            f"  source   {d.repository}{commit}, {d.path}",
            f"  licence  {d.licence}",
            f"  copies   {copies}",
            f"  cite     {d.cite}",
            f"  here     {cached_status(d)}",
        ]
        print("\n".join(one_line(line) for line in lines))
    return 0


def _named_inputs(args: argparse.Namespace) -> list[str]:
    """What the command reads, as given: its inputs (or the deprecated --data or
    --scores), and the table of an accuracy axis (--accuracy-from FILE, or compare's
    DATA=SOURCE:COLUMN, whose SOURCE is a dataset's name where one is)."""
    from audit.sources.datasets import DATASETS

    named = list(args.data) if isinstance(args.data, list) else [args.data]
    named += [getattr(args, option, None) for option in ("data_option", "scores_option")]
    named.append(getattr(args, "accuracy_from", None))
    for value in getattr(args, "accuracy_each", None) or []:
        named += [src for src, _ in _source_splits(value.partition("=")[2]) if src in DATASETS]
    return list(dict.fromkeys(n for n in named if n is not None))  # each noted once


def _reads_without_working_folder(args: argparse.Namespace) -> bool:
    """Whether the command reads nothing relative to the working folder: audit check of a
    built-in dataset or of a file named in full (a report always writes from it)."""
    from audit.sources.datasets import DATASETS

    if args.command != "check" or getattr(args, "measure_module", None):
        return False
    given = getattr(args, "data_option", None) or args.data
    return given is None or given in DATASETS or os.path.isabs(os.path.expanduser(given))


def _importable_here(modules) -> None:
    """User measure modules import from the current folder, here and in the kernels."""
    if not modules:
        return
    try:
        here = os.getcwd()
    except FileNotFoundError:
        raise UsageError(NO_WORKING_FOLDER) from None
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (here, os.environ.get("PYTHONPATH", "")) if p
    )
    if here not in sys.path:
        sys.path.insert(0, here)


def _rate_measures_only(parameters: dict) -> None:
    """Refuse a score measure where a rates table is read (``measure``, ``measures``)."""
    names = [parameters.get("measure"), *(parameters.get("measures") or [])]
    if all(name is None for name in names):
        return  # the registry (every measure's module) is imported by those who name one
    from audit.measures.contract import PairMeasure, RateMeasure, TableMeasure
    from audit.measures.registry import get_measure

    for name in names:
        if name is not None and not isinstance(
            get_measure(name), (RateMeasure, TableMeasure, PairMeasure)
        ):
            raise UsageError(NEEDS_RATES_MEASURE.format(name=name))


def _scores_options(parameters: dict, streamed: bool) -> None:
    """Refuse the options of ``audit scores`` that would be dropped without a word: a
    sweep whose ends are in the wrong order or the same (it was the default sweep, or one
    target); groupings given for a score file (they regroup the built-in VoxCeleb scores
    only), or naming an attribute those scores do not have (said by the notebook's load,
    after a kernel started); an encoding for scores that are not a CSV."""
    from audit.report.runner import with_defaults

    given = with_defaults("scores", parameters)
    low, high = given["sweep_min"], given["sweep_max"]
    if not low < high:
        raise UsageError(SWEEP_ENDS.format(low=low, high=high))
    path, encoding = parameters.get("scores_path"), parameters.get("encoding")
    if path:  # a score file of the user's
        if "groupings" in parameters:
            raise UsageError(GROUPINGS_BUILT_IN)
        if streamed and encoding is not None:
            from audit.tables.common import ENCODING_NOT_TEXT
            from audit.tables.scores import ScoresError

            raise ScoresError(ENCODING_NOT_TEXT.format(source=path, encoding=encoding))
        return
    if encoding is not None:  # the built-in VoxCeleb scores
        raise UsageError(ENCODING_BUILT_IN.format(encoding=encoding))
    if "groupings" in parameters:
        from audit.sources.voxceleb import ATTRIBUTES, UNKNOWN_ATTRIBUTE

        for name in (a for g in parameters["groupings"] for a in g):
            if name not in ATTRIBUTES:
                raise UsageError(UNKNOWN_ATTRIBUTE.format(name=name, names=list(ATTRIBUTES)))


def _uncertainty_options(parameters: dict, table, replicates: str = "n_replicates") -> None:
    """Refuse replicates asked for with no uncertainty analysis (``replicates``: the
    parameter that counts them), and a floor_lower above the floor of the table's rates:
    either turned the analysis off, or left the replicates undrawn, with a sentence in a
    table of the report and nothing on the terminal."""
    if parameters.get("uncertainty_method") == "none" and replicates in parameters:
        raise UsageError(NO_ANALYSIS_REPLICATES.format(n=parameters[replicates]))
    lower = parameters.get("floor_lower")
    if lower is None or parameters.get("uncertainty_method") in ("none", "counts"):
        return
    import math

    from audit.analysis.quality import floor_of
    from audit.tables.layouts import available_rates
    from audit.tables.rates import RATE_COUNTS

    rate = "fmr" if "fmr" in available_rates(table) else "fnmr"
    if (
        RATE_COUNTS[rate][0] in table.columns
        and parameters.get("uncertainty_method", "auto") == "auto"
    ):
        return  # drawn from the counts (uncertainty_method 'auto'): no floor is redrawn
    floor = float(floor_of(table[rate].to_numpy(dtype="float64")))
    if math.isfinite(floor) and not lower <= floor:
        where = table.attrs.get("source", "the table")
        raise UsageError(
            FLOOR_LOWER_ABOVE.format(value=lower, floor=floor, rate=rate.upper(), source=where)
        )


def _inapplicable(tables: list, named: list[str]) -> list[tuple[str, str]]:
    """Each measure of ``named`` with why it does not apply (to the first table), where
    none applies to any of ``tables``; empty where one does."""
    from audit.measures.onesided import NOT_APPLICABLE
    from audit.measures.registry import applicable_measures

    rows = [applicable_measures(table, named) for table in tables]
    if not all((r["status"] == NOT_APPLICABLE).all() for r in rows):
        return []
    return list(zip(rows[0]["measure"], rows[0]["note"], strict=True))


def _reasons(notes: list[tuple[str, str]]) -> str:
    """The reasons of :func:`_inapplicable`, as :data:`NONE_APPLICABLE` says them."""
    return "; ".join(f"{name!r}: it {note}" for name, note in notes)


def _preflight(command: str, parameters: dict, args: argparse.Namespace, streamed: bool):
    """Refuse bad input and options here, before a notebook kernel starts; return the
    rates table read (``None`` for ``audit scores``, ``streamed`` or not)."""
    _rate_measures_only(parameters)
    if command == "scores":
        _scores_options(parameters, streamed)
        scores_path = parameters.get("scores_path")
        if scores_path and not streamed:
            from audit.tables.scores import check_columns

            # the header only: the notebook reads (and validates) the rows, once, and
            # shows the orientation warning (distances read as similarities, or the reverse)
            check_columns(
                scores_path,
                attributes=parameters.get("attributes"),
                ignore=parameters.get("ignore") or (),
                encoding=parameters.get("encoding"),
            )
        return None
    _, table = _read_table(parameters)
    # the one measure of a down-select, or the list of an audit of which none applies
    # (one that does not is said in the report, beside those that do)
    named = [parameters["measure"]] if parameters.get("measure") is not None else None
    if named is None and command in ("report", "ffmc") and parameters.get("measures"):
        named = list(parameters["measures"])
    if named and (notes := _inapplicable([table], named)):
        from audit.measures.onesided import NOT_APPLICABLE_HERE

        source = table.attrs["source"]
        if len(notes) == 1:
            (name, reason), *_ = notes
            raise UsageError(NOT_APPLICABLE_HERE.format(name=name, source=source, reason=reason))
        raise UsageError(NONE_APPLICABLE.format(source=source, reasons=_reasons(notes)))
    if parameters.get("accuracy") not in (None, "auto"):
        from audit.tables.layouts import check_accuracy

        check_accuracy(table, parameters["accuracy"])
    if parameters.get("accuracy_from") is not None:
        from audit.tables.accuracy import read_accuracy

        read_accuracy(parameters["accuracy_from"], parameters["accuracy_column"])
    if parameters.get("weights") not in (None, "equal"):
        from audit.analysis.accuracy import overall_rates

        overall_rates(table, weights=parameters["weights"])
    _uncertainty_options(parameters, table)
    if parameters.get("uncertainty_method") == "counts":  # the counts it draws from
        from audit.tables.layouts import available_rates
        from audit.tables.rates import RATE_COUNTS
        from audit.uncertainty.checks import NO_COUNTS

        for rate, (column, kind) in RATE_COUNTS.items():
            if rate in available_rates(table) and column not in table.columns:
                where = table.attrs.get("source", "the table")
                raise InputError(f"{where}: " + NO_COUNTS.format(column=column, kind=kind))
    if parameters.get("heatmap_algorithms") is not None:
        from audit.analysis.crossgroup import heatmap_algorithms
        from audit.tables.crossgroup import cross_group

        if cross_group(table) is not None:  # the algorithms named are the table's
            heatmap_algorithms(table, parameters["heatmap_algorithms"])
    return table


def _report_name(args: argparse.Namespace, given: str | None) -> str:
    if args.name is not None:
        return args.name
    if given:
        from audit.tables.common import is_glob

        name = Path(given).parent.name if is_glob(given) else Path(given).stem
        return f"{name}-{args.command}" if args.command in PART_REPORTS else name
    return {"report": "annex15", "scores": "voxceleb"}.get(args.command, args.command)


def _checked_name(args: argparse.Namespace, name: str) -> str:
    """The report's name, checked; one made from the input's name says so when refused,
    and how to give another."""
    from audit.report.runner import check_report_name

    try:
        return check_report_name(name)
    except UsageError as error:
        if args.name is not None:
            raise
        raise UsageError(f"{error}; it comes from the input's name: give one with --name") from None


def _report(args: argparse.Namespace, parameters: dict, given: str | None, notify) -> Path:
    from audit.report.runner import check_parameters, check_report_path

    # what needs no reading first: its refusal then comes before any process starts
    name = _checked_name(args, _report_name(args, given))
    check_report_path(args.reports_dir, name)  # what stands there: before any work
    streamed = _streamed(args, parameters)
    cross_only = []  # what only the cross-group notebook takes: refused for a plain table
    if streamed is False:
        # a report on a cross-group table adds the crossgroup notebook
        declared, also = _declarations(args.command)
        check_parameters(parameters, declared, also=also)
        taken = set().union(*declared.values())
        cross_only = [key for key in parameters if key in also and key not in taken]
    if args.command in AHEAD:
        from audit.report.kernels import started_kernels

        # the notebooks' kernels start while the table is read and checked
        with started_kernels(len(NOTEBOOKS[args.command])):
            return _report_on(args, parameters, name, notify, streamed, cross_only)
    if streamed is not False:  # no notebook, or a refusal to come: no kernel to start
        return _report_on(args, parameters, name, notify, streamed)
    from audit.report import forkserver

    # the server imports the notebook's modules while the input is checked; its kernel
    # and drawing processes are then forked ready
    with forkserver.started():
        return _report_on(args, parameters, name, notify, streamed, cross_only)


def _streamed(args: argparse.Namespace, parameters: dict) -> bool | None:
    """Whether a scores report will be streamed, with no notebook; ``None`` for an input
    that cannot say, refused by :func:`_report_on` in the user's words."""
    if args.command != "scores":
        return False
    from audit.report.streamed import streams

    try:
        return streams(parameters.get("scores_path"), args.memory, args.scheduler)
    except Exception:  # noqa: BLE001 - refused, in the user's words, by _report_on
        return None


def _report_on(
    args: argparse.Namespace,
    parameters: dict,
    name: str,
    notify,
    streamed: bool | None,
    cross_only: list[str] | None = None,
) -> Path:
    from audit.report.runner import check_reports_root, run_report

    if streamed is None:  # the input could not say (:func:`_streamed`): its refusal
        from audit.report.streamed import streams

        streamed = streams(parameters.get("scores_path"), args.memory, args.scheduler)
    progress = not (args.no_progress or args.quiet or args.verbose)  # -v: a line per stage
    table = _preflight(args.command, parameters, args, streamed)
    chosen = NOTEBOOKS[args.command]
    if args.command == "report" and table.attrs.get("cross_group") is not None:
        chosen = (*chosen, "crossgroup")  # the pair matrices: heat maps, cross-group measures
    elif cross_only:  # a -p only the cross-group notebook takes, on a plain table: said so
        source = table.attrs.get("source") or parameters.get("data_path", "the table")
        raise UsageError(CROSS_GROUP_ONLY.format(key=cross_only[0], source=source))
    check_reports_root(args.reports_dir)
    if streamed:
        from audit.report.streamed import streamed_report

        return streamed_report(
            parameters["scores_path"],
            name,
            parameters,
            memory=args.memory,
            scheduler=args.scheduler,
            reports_root=args.reports_dir,
            progress=progress,
            input_copy=_input_copy(args),
        )
    folder = run_report(
        name,
        notebooks=chosen,
        parameters=parameters,
        reports_root=args.reports_dir,
        progress=progress,
        input_copy=_input_copy(args),
        notify=notify,  # quiet with --quiet; one line per stage with --no-progress
    )
    _say_warnings(folder)
    return folder


def _say_warnings(folder: Path) -> None:
    """Say on stderr, as the command's own warnings are said, each warning the report's
    notebooks raised (as the front page's warnings section reads them), once, with how
    often: a warning is not for whoever opens the report alone.  (A streamed report,
    computed here, said its own as they were raised.)"""
    import json

    from audit.report.frontpage import Declared, warnings_section
    from audit.report.runner import as_given, given_inputs

    try:
        header = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        if not isinstance(header, dict):
            return
        listed = warnings_section(folder, Declared(folder, header))
    except (OSError, ValueError):  # a table it cannot read: said on the front page
        return
    # naming the files as the user gave them (the front page names the report's copies),
    # and not again where the command said it as it read them
    given = given_inputs(header)
    said = set(_SAID)  # a warning two notebooks raised (of the same table, say) is said once
    for entry in listed.get("entries", []):
        sentence = as_given(entry["sentence"], given)
        key = one_line(sentence).rstrip(".")  # as said: a control character written out
        if key in said:
            continue
        said.add(key)
        times = f" ({entry['count']} times)" if entry["count"] > 1 else ""
        _warning_sentence(f"{sentence}{times}", None, None, None)


def _input_copy(args: argparse.Namespace) -> str:
    from audit.validation import parse

    if args.input_copy is None:
        return "auto"
    _set_by(args)["input_copy"] = given_as(args, "input_copy")
    return parse("input_copy", args.input_copy)


def _run(args: argparse.Namespace, notify) -> int:
    if args.command == "measures":
        return _list_measures(args)
    if args.command == "fetch":
        return _fetch(args.names, args.quiet)
    if args.command == "datasets":
        return _list_datasets(args.quiet)
    try:  # a report's relative paths, default folder and kernels start from it
        os.getcwd()
    except FileNotFoundError:
        if not _reads_without_working_folder(args):
            raise UsageError(NO_WORKING_FOLDER) from None
    from audit.sources.datasets import DATASETS

    for given in _named_inputs(args):
        if given in DATASETS and os.path.lexists(given):
            notify(DATASET_NOT_FILE.format(name=given))
    if args.command == "compare":
        return _compare(args, notify)
    raw = _input(args, notify)
    given = _resolve(raw, args.command)
    if getattr(args, "measure_module", None):  # their measures are names the options may use
        from audit.measures.modules import import_measure_modules

        _importable_here(args.measure_module)
        import_measure_modules(args.measure_module)
    parameters = _parameters(args, given)
    if args.command == "check":
        return _check(parameters, args.quiet)
    from audit.sources.datasets import DATASETS

    # a built-in dataset's report is named after the dataset, not its file; a file's after
    # the name it was given by (a link's own, not its target's)
    named = raw if raw is None or raw in DATASETS else os.path.abspath(os.path.expanduser(raw))
    folder = _report(args, parameters, named, notify)
    index = folder / "index.html"
    if not args.quiet:
        print(REPORT_WRITTEN.format(folder=one_line(folder), index=one_line(index)))
    if args.open:
        import webbrowser

        webbrowser.open(index.resolve().as_uri())
    return 0


# ------------------------------------------------------------------ audit compare
def _source_splits(rest: str) -> list[tuple[str, str]]:
    """The ways ``SOURCE:COLUMN`` splits at a ':' after a built-in dataset's name or an
    existing file."""
    from audit.sources.datasets import DATASETS

    return [
        (rest[:i], rest[i + 1 :])
        for i, ch in enumerate(rest)
        if ch == ":" and (rest[:i] in DATASETS or Path(rest[:i]).expanduser().is_file())
    ]


def _accuracy_data(value: str, names: list[str], by_given: dict) -> str | None:
    """The DATA of ``--accuracy-from`` ``value``: the longest of ``names`` (the labels,
    and the paths as given) that it starts with, followed by '='. Where a shorter one
    names another dataset and leaves an existing table and column too (``p=q=acc.csv:c``,
    of datasets ``p`` and ``p=q`` beside a file ``q=acc.csv``), both are meant: refused."""
    matching = [n for n in names if n and value.startswith(f"{n}=")]
    if not matching:
        return None
    readings = {}  # each dataset meant, by the first (longest) name that means it: its table
    for name in matching:
        label, rest = by_given.get(name, name), value[len(name) + 1 :]
        splits = _source_splits(rest)
        if label not in readings and (name == matching[0] or splits):
            readings[label] = splits[0][0] if splits else rest
    if len(readings) > 1:
        said = " or ".join(
            f"dataset {label!r} (from {table!r})" for label, table in readings.items()
        )
        raise UsageError(ACCURACY_FROM_WHICH.format(value=value, readings=said))
    return matching[0]


def _accuracy_each(args: argparse.Namespace, labels: list[str]) -> tuple[dict, dict]:
    """``--accuracy-from DATA=SOURCE:COLUMN`` options as (label to source, label to column).

    DATA is a dataset's label or what was given for it (the longest that the value
    starts with, followed by '=', as either may hold one); SOURCE a built-in dataset's
    name or a file, ended by the first ':' after which the rest is the column (when
    several ':' could end it, the one after an existing table; more than one: refused).
    """
    from audit.sources.datasets import DATASETS
    from audit.tables.accuracy import accuracy_columns

    by_given = dict(zip(args.data, labels, strict=True))
    # a label or path may hold '=': DATA is the longest of them that the value starts with
    names = sorted({*labels, *by_given}, key=len, reverse=True)
    sources, columns = {}, {}
    for value in args.accuracy_each:
        data = _accuracy_data(value, names, by_given)
        if data is not None:
            equals, rest = "=", value[len(data) + 1 :]
        else:
            data, equals, rest = value.partition("=")
        if not equals or not data or not rest:
            raise UsageError(ACCURACY_FROM_FORM.format(value=value, labels=labels))
        label = data if data in labels else by_given.get(data)
        if label is None:
            raise UsageError(ACCURACY_FROM_DATA.format(value=value, data=data, labels=labels))
        if label in sources:
            raise UsageError(ACCURACY_FROM_TWICE.format(data=label))
        if rest in DATASETS or Path(rest).expanduser().is_file():
            raise UsageError(
                ACCURACY_FROM_COLUMN.format(
                    value=value, data=data, source=rest, columns=accuracy_columns(rest)
                )
            )
        splits = _source_splits(rest)
        if not splits:
            raise UsageError(ACCURACY_FROM_SOURCE.format(value=value, rest=rest))
        if len(splits) > 1:
            raise UsageError(
                ACCURACY_FROM_AMBIGUOUS.format(
                    value=value, rest=rest, splits=", ".join(f"{a!r}:{b!r}" for a, b in splits)
                )
            )
        source, column = splits[0]
        sources[label] = source if source in DATASETS else str(Path(source).expanduser().resolve())
        columns[label] = column
    return sources, columns


def _compare(args: argparse.Namespace, notify) -> int:
    """``audit compare``: check every input and option, run the compare notebook, print
    the verdict matrix."""
    from audit.analysis.compare import check_comparable, dataset_labels, read_datasets
    from audit.report.comparepage import verdict_lines
    from audit.report.kernels import started_kernels
    from audit.report.runner import (
        check_report_path,
        check_reports_root,
        run_report,
    )
    from audit.sources.datasets import DATASETS
    from audit.tables.accuracy import read_accuracy
    from audit.validation import check

    if args.measure_module:
        from audit.measures.modules import import_measure_modules

        _importable_here(args.measure_module)
        import_measure_modules(args.measure_module)
    given = [d if d in DATASETS else str(Path(d).expanduser().resolve()) for d in args.data]
    given = check("data_paths", given)
    labels = dataset_labels(given)
    parameters = _parameters(args, None)
    parameters.update({"data_paths": given, "data_labels": labels})
    sources, columns = _accuracy_each(args, labels)
    if columns:  # the column of each accuracy table, given within --accuracy-from
        _set_by(args)["accuracy_column"] = "--accuracy-from"
    if sources:
        parameters.update({"accuracy_sources": sources, "accuracy_columns": columns})
    name = _checked_name(args, args.name if args.name is not None else "-vs-".join(labels))
    check_report_path(args.reports_dir, name)  # what stands there: before any work
    _rate_measures_only(parameters)
    # the notebook's kernel starts while the inputs are read and checked (a refusal stops
    # it), forked, as its drawing process then is, from a server that ends with the block
    with started_kernels(len(NOTEBOOKS["compare"])):
        keys = (*READ_OPTIONS, "count_tolerance", "merge_labels", "fmr_above_fnmr", "encoding")
        tables = read_datasets(given, labels, **{k: parameters[k] for k in keys if k in parameters})
        for first, second in itertools.combinations(labels, 2):  # the notebook's pairs
            check_comparable(
                tables[first],
                tables[second],
                shared_groups=parameters.get("shared_groups", True),
                names=(first, second),
            )
        for label, source in sources.items():
            read_accuracy(source, columns[label])
        for table in tables.values():  # as for one table (_preflight)
            _uncertainty_options(parameters, table, replicates="verdict_replicates")
        if parameters.get("measures") and (
            notes := _inapplicable(list(tables.values()), parameters["measures"])
        ):
            source = ", ".join(labels)
            raise UsageError(NONE_APPLICABLE.format(source=source, reasons=_reasons(notes)))
        check_reports_root(args.reports_dir)
        progress = not (args.no_progress or args.quiet or args.verbose)
        folder = run_report(
            name,
            notebooks=NOTEBOOKS["compare"],
            parameters=parameters,
            reports_root=args.reports_dir,
            progress=progress,
            input_copy=_input_copy(args),
            notify=notify,
        )
    _say_warnings(folder)
    index = folder / "index.html"
    if not args.quiet:
        print("\n".join(one_line(line) for line in verdict_lines(folder)))
        print()
        print(REPORT_WRITTEN.format(folder=one_line(folder), index=one_line(index)))
    if args.open:
        import webbrowser

        webbrowser.open(index.resolve().as_uri())
    return 0


# ------------------------------------------------------------------ errors
def _users_path(error: OSError, args: argparse.Namespace) -> int | None:
    """The exit status of an OS error on a path the user gave (the input, or a folder on
    the way to it; the reports folder), or on a full disk; None for any other OS error
    (a bug of audit's)."""
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return EXIT_OUTPUT
    if error.filename is None:
        return None
    path = Path(os.fsdecode(error.filename)).absolute()
    reports = Path(args.reports_dir) if getattr(args, "reports_dir", None) else Path("reports")
    if path == reports.absolute() or reports.absolute() in path.parents:
        return EXIT_OUTPUT
    inputs = [getattr(args, k, None) for k in ("data", "data_option", "scores_option")]
    given = [Path(p).expanduser().absolute() for p in inputs if p is not None]
    if any(path == p or path in p.parents for p in given):
        return EXIT_INPUT
    return None


def _traceback_file(error: BaseException, argv: list[str]) -> Path:
    """Write ``error``'s traceback, the command and the versions to a new file in the user's
    cache folder; return its path."""
    from audit import __version__, config

    folder = config.cache_dir() / "errors"
    folder.mkdir(parents=True, exist_ok=True)
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    path = folder / f"internal-error-{stamp}-{os.getpid()}.txt"
    text = (
        f"command: audit {' '.join(argv)}\n"
        f"audit {__version__}; Python {platform.python_version()}; {platform.platform()}\n"
        f"folder: {_working_folder()}\n\n" + "".join(traceback.format_exception(error))
    )
    path.write_text(text, encoding="utf-8", errors="backslashreplace")
    return path


def _working_folder() -> str:
    try:
        return os.getcwd()
    except FileNotFoundError:
        return "(deleted)"


def _internal_error(error: BaseException, argv: list[str], verbose: bool) -> int:
    """One sentence saying a bug happened, where its traceback is kept, and how to report it."""
    kind = type(error).__name__
    try:
        path = _traceback_file(error, argv)
    except OSError as failure:
        print(f"audit: {INTERNAL_ERROR.format(kind=kind, path='-', verbose='')}", file=sys.stderr)
        print(TRACEBACK_NOT_KEPT.format(reason=failure), file=sys.stderr)
        traceback.print_exception(error, file=sys.stderr)
        return EXIT_INTERNAL
    hint = "" if verbose else VERBOSE_HINT
    said = INTERNAL_ERROR.format(kind=one_line(kind), path=one_line(path), verbose=hint)
    print(f"audit: {said}", file=sys.stderr)
    if verbose:
        traceback.print_exception(error, file=sys.stderr)
    return EXIT_INTERNAL


def _said(error: AuditError) -> str:
    """An error's message as the command line prints it: its own lines
    (:attr:`~audit.exceptions.AuditError.own_lines`), a line break in a value it names
    written as ``\\n``, as any control character is."""
    return escape_terminal(error, newlines=error.own_lines)


#: The warnings this command said (the notebooks' are not said again where one is).
_SAID: set[str] = set()


def _warning_sentence(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning as one sentence on stderr, without the file and line it was raised at."""
    said = one_line(message)
    _SAID.add(said.rstrip("."))
    print(f"audit: warning: {said}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run the ``audit`` command with ``argv`` (default: the process's); return its status."""
    import warnings

    from audit.report.interrupt import Interrupted, handle_signals

    try:
        with warnings.catch_warnings(), handle_signals():
            try:
                warnings.simplefilter("always")  # every warning shown, each as a sentence
                # but a file a library left open, as Python has it (a signal can cut a
                # read short)
                warnings.simplefilter("ignore", ResourceWarning)
                warnings.showwarning = _warning_sentence
                console.resend()  # one that came as the command started: said now, it ends
                _SAID.clear()  # (each command its own: main() is called again in a process)
                return _main(list(sys.argv[1:] if argv is None else argv))
            except Interrupted as stop:  # Ctrl-C or SIGTERM outside the command's own work
                return _stopped(stop)
            except BrokenPipeError:  # as a refusal was said, to a reader gone
                return _reader_gone()
    except Interrupted as stop:  # as the signals were taken (held until then)
        return _stopped(stop)


def _reader_gone() -> int:
    """The status of a command whose reader went away (``audit check t.csv | head``, a
    refusal said to ``2>&1 | head -1``): not an error of the input, nor a failed notebook
    (status 1, after a traceback, where the refusal was being said).  What is left to
    write goes to /dev/null, so that flushing it at exit stays quiet."""
    null = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.stdout, sys.stderr):
        try:
            os.dup2(null, stream.fileno())
        except (AttributeError, OSError, ValueError):  # a stream with no file of its own
            pass
    os.close(null)
    return EXIT_PIPE


def _stopped(stop: KeyboardInterrupt) -> int:
    """Say the interruption ``stop`` (an :class:`~audit.report.interrupt.Interrupted`
    says which signal, and what was kept), taken here: the command's status."""
    getattr(stop, "taken", lambda: None)()  # said here: not lost
    print(f"audit: {one_line(getattr(stop, 'sentence', INTERRUPTED))}", file=sys.stderr)
    return getattr(stop, "exit_status", EXIT_INTERRUPTED)


def _interruption(error: BaseException) -> KeyboardInterrupt | None:
    """The interruption behind ``error``, if any: Python wraps an exception raised in
    some of its hooks (a class's ``__set_name__``, in a ``RuntimeError``), and code may
    fail as it handles one."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, KeyboardInterrupt):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None


def run() -> int:
    """The ``audit`` command of a shell (:func:`audit.console.run`): :func:`main`, whose
    status the process then exits with. Everything the command made is first moved out
    of the reach of the interpreter's last garbage collection (:func:`gc.freeze`): that
    collection would only free memory the ending process hands back anyway, and kept
    the shell waiting 0.15 s after a report's last line (threads are joined and exit
    handlers run as ever).

    SIGINT and SIGTERM are held (:func:`audit.console.hold`) until :func:`main` takes
    them: one that came before is said there, and ends the command. One that comes once
    :func:`main` has given them back (a second Ctrl-C just after the first was said),
    or once argparse has ended the command (``--help``, a usage error), finds the
    process ending with its status, and is ignored, through the interpreter's exit too
    (which gives a handler of Python's back to the system's default): it ended the
    process with a ``KeyboardInterrupt`` traceback, or status -2 or -15 for 0, 130 or
    143, a help piped on never written. (A signal the process was started ignoring stays
    ignored, within :func:`main` too.)"""
    import gc
    import signal

    handled = console.hold()  # (main() takes them, and gives the holding back)
    try:
        return main()
    finally:  # (also where argparse ends it: --help, --version, a usage error)
        for signum in handled:
            signal.signal(signum, signal.SIG_IGN)
        gc.freeze()


def _main(argv: list[str]) -> int:
    parser = build_parser()
    args, extras = parser.parse_known_args(argv)
    if args.command is None:
        if extras:
            parser.error("unrecognized arguments: " + " ".join(extras))
        parser.print_help()
        return EXIT_USAGE
    sub = _subparser(parser, args.command)
    if extras:  # the command's own usage, not the top level's
        sub.error("unrecognized arguments: " + " ".join(extras))

    def notify(message: str) -> None:
        if not args.quiet:
            print(f"audit: {one_line(message)}", file=sys.stderr)

    try:
        return _run(args, notify)
    except BrokenPipeError:
        return _reader_gone()
    except KeyboardInterrupt as stop:
        return _stopped(stop)
    except UsageError as error:
        sub.print_usage(sys.stderr)
        print(f"{sub.prog}: error: {_said(_as_typed(error, args))}", file=sys.stderr)
        return error.exit_status
    except ReportFailed as error:
        print(f"audit: {_said(error)}", file=sys.stderr)
        return error.exit_status
    except AuditError as error:
        print(f"audit: error: {_said(error)}", file=sys.stderr)
        return error.exit_status
    except OSError as error:
        return _os_error(error, args, argv)
    except Exception as error:  # anything else is a bug of audit's, and says so
        stop = _interruption(error)  # unless a signal raised it
        if stop is not None:
            return _stopped(stop)
        looped = error.__context__ if isinstance(error, RuntimeError) else None
        if isinstance(looped, OSError) and looped.errno == errno.ELOOP:
            return _os_error(looped, args, argv, reason=LINK_LOOP)  # (pathlib, Python < 3.13)
        return _internal_error(error, argv, args.verbose)


def _os_error(
    error: OSError, args: argparse.Namespace, argv: list[str], *, reason: str | None = None
) -> int:
    """Say an OS error on a path the user gave (:func:`_users_path`) in one sentence, for
    ``reason`` (default: as the system words it); any other is a bug of audit's."""
    status = _users_path(error, args)
    if status is None:
        return _internal_error(error, argv, args.verbose)
    from audit.report.runner import plain_reason

    where = os.fsdecode(error.filename or "input/output")
    said = f"{where}: {reason or plain_reason(error)}"
    print(f"audit: error: {one_line(said)}", file=sys.stderr)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
