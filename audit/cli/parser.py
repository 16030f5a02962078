"""The ``audit`` command line's grammar: the parser of every command, its options and
their help, and which option sets which notebook parameter.

:func:`build_parser` is the one place an option is declared; its help text is the
parameter's declared sentence (:data:`audit.validation.PARAMETERS`), and
:data:`_OPTION_PARAMETERS` maps the options onto the notebooks' parameters.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from audit.exceptions import EXIT_STATUSES, EXIT_USAGE
from audit.report.text import one_line
from audit.validation import OPERATING_POINTS

#: Commands that run a part of the full report; from a data file their default report
#: name is the file's stem followed by ``-<command>``, apart from the full report's.
PART_REPORTS = ("ffmc", "pareto")

DESCRIPTION = """\
Audit the fairness measures used to judge biometric recognition systems.

Reads a table of per-group false match rates (FMR) and false non-match rates
(FNMR), by default the NIST FRVT Part 3 Annex 15 table (126 face recognition
algorithms x 8 gender-race groups, fetched and verified on first use), computes
the fairness measures (FDR, Inequity Rate, GARBE and the others registered),
audits each against the Functional Fairness Measure Criteria FFMC.1-3 of
Howard et al. (2022), and down-selects algorithms on the accuracy/fairness
Pareto frontier. Results go to reports/<name>/ as HTML, PNG/SVG figures and
CSV tables, with the input's sha256 and the parameters recorded.
"""

EPILOG = """\
examples:
  audit report                          full report on Annex 15 -> reports/annex15/
  audit report my_rates.csv --name vendor-x
  audit ffmc --measures fdr,ir,garbe --measure-module my_pkg.my_measures
  audit pareto --measure garbe --alpha 0.5 --max-accuracy 0.01
  audit scores                          audit from scores: VoxCeleb1-H -> reports/voxceleb/
  audit scores my_scores.csv --target-fmr 0.001
  audit scores my_scores.csv --operating-point nist   NIST's operating point (FMR 3e-5)
  audit measures                        list the registered measures
  audit check my_rates.csv              validate a rates table and summarise it
  audit report cross.csv                a cross-group impostor table (group_1, group_2)
  audit datasets                        list the built-in datasets (annex15, frvt11, ...)
  audit report frvt11                   a built-in dataset by name, wherever a table is taken
  audit pareto frvt11 --accuracy-from frvt11-accuracy --accuracy-column 'Mugshot, 1e-5'
  audit compare annex15 frvt11          every measure on both datasets: verdicts, rankings
  audit compare annex15 frvt11 --accuracy-from frvt11=frvt11-accuracy:'Mugshot, 1e-5'

offline: the built-in datasets are fetched from their pinned sources on first use; set
AUDIT_DATA_DIR to a folder holding them (or their folders), or give DATA.

exit statuses:
{statuses}
"""


def _statuses() -> str:
    return "\n".join(f"  {code:>3}  {text}" for code, text in EXIT_STATUSES.items())


#: Where the parsed arguments keep the option each value was given with, by destination.
_GIVEN = "_given_as"


class _Once(argparse._StoreAction):
    """An option that takes one value, given at most once: given twice, which value was
    meant only the user knows (argparse would keep the last without a word).  The option
    it was given with is kept (:func:`given_as`)."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = namespace.__dict__.setdefault(_GIVEN, {})
        if self.dest in given:
            parser.error(f"{option_string} is given twice; give it once")
        given[self.dest] = option_string
        super().__call__(parser, namespace, values, option_string)


def given_as(args: argparse.Namespace, dest: str) -> str | None:
    """The option (``--ignore-columns``, say) that gave ``args.<dest>``, or None."""
    return getattr(args, _GIVEN, {}).get(dest)


class _Parser(argparse.ArgumentParser):
    """argparse with audit's exit status for usage errors, and the command's own usage;
    an option of one value given twice is refused (:class:`_Once`), and an option is
    named whole: argparse would take a prefix of one for it (``audit scores --measure``
    read as ``--measure-module``, a command's option whose start is another's)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.register("action", None, _Once)  # the default action, argparse's "store"
        self.register("action", "store", _Once)

    def error(self, message: str):  # noqa: D102 - argparse's contract
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {one_line(message)}\n")


def _user_path(text: str) -> Path:
    """A path as given, ``~`` standing for the home folder (as the shell expands it only
    at the start of a word: ``--reports-dir=~/x`` reaches us as written); an empty one
    is refused (it would be read as the working folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("expected a folder, got an empty path")
    _utf8(text)
    return Path(text).expanduser()


def _data(text: str) -> str:
    """A table given: a file's path or a dataset's name, as written; an empty one is
    refused (it was read as the working folder, or named an internal parameter)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "expected a file or a built-in dataset's name, got an empty argument"
        )
    _utf8(text)
    return text


def _utf8(text: str) -> None:
    r"""Refuse a path whose bytes are not UTF-8 (the system hands them over as lone
    surrogates): a report writes its inputs' names into its notebooks and pages, UTF-8
    text, and failed there with a traceback.

    >>> _utf8("sc\udcffore.csv")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: sc\xffore.csv: the name is not UTF-8 text (byte 0xff); rename it
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        shown = os.fsencode(text).decode("utf-8", "backslashreplace")
        byte = os.fsencode(text[error.start])[0]
        raise argparse.ArgumentTypeError(
            f"{shown}: the name is not UTF-8 text (byte {byte:#04x}); rename it"
        ) from None


def _help(name: str, default=None) -> str:
    """An option's help: its parameter's declared sentence, with the default."""
    from audit.validation import PARAMETERS

    text = PARAMETERS[name].help
    return text if default is None else f"{text} (default: {default})"


def _output_options(parser: argparse.ArgumentParser) -> None:
    """How much the command says: every command takes these."""
    group = parser.add_argument_group("output")
    talk = group.add_mutually_exclusive_group()
    talk.add_argument("-q", "--quiet", action="store_true", help="print errors and warnings only")
    talk.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="say more: each stage of a report, and the traceback of an internal error",
    )


def _data_argument(parser: argparse.ArgumentParser, *, what: str = "rates table") -> None:
    parser.add_argument(
        "data",
        nargs="?",
        type=_data,
        metavar="DATA",
        help=f"the {what}: a CSV or Parquet file, or a built-in dataset's name "
        "(annex15, frvt11: 'audit datasets'; default: the verified Annex 15 table)"
        if what == "rates table"
        else f"the {what}: a CSV or Parquet file, a folder or a glob of Parquet files "
        "(default: the bt4vt VoxCeleb1-H scores)",
    )
    parser.add_argument(
        "--data", dest="data_option", type=_data, metavar="PATH", help=argparse.SUPPRESS
    )


def _table_options(parser: argparse.ArgumentParser) -> None:
    """How to read a rates table: units, column names, attributes, separators, counts."""
    group = parser.add_argument_group("reading the table")
    group.add_argument("--units", metavar="UNITS", help=_help("units", "fraction"))
    group.add_argument("--encoding", metavar="NAME", help=_help("encoding"))
    group.add_argument("--columns", metavar="MAP", help=_help("columns"))
    group.add_argument("--attributes", metavar="NAMES", help=_help("attributes"))
    group.add_argument(
        "--separator",
        metavar="SEP",
        help=_help("separator", "'.'; '_' reads FMR_African"),
    )
    group.add_argument(
        "--pair-separator",
        metavar="SEP",
        help=_help("pair_separator") + "; one starting with '-' is given as --pair-separator=-",
    )
    group.add_argument(
        "--pairs",
        metavar="LIST",
        help=_help("pairs") + ", written <enrolment><SEP><probe>, SEP the --pair-separator",
    )
    group.add_argument(
        "--count-tolerance",
        metavar="N",
        help=_help("count_tolerance", "none"),
    )
    group.add_argument(
        "--rate-position",
        metavar="WHERE",
        help=_help("rate_position", "prefix")
        + "; '--rate-position suffix --separator _' reads African_FMR",
    )
    group.add_argument(
        "--ignore-columns",
        metavar="NAMES",
        dest="ignore",
        help=_help("ignore") + "; each must be a column, and 'audit check' lists them",
    )
    group.add_argument("--merge-labels", action="store_true", help=_help("merge_labels"))
    group.add_argument("--fmr-above-fnmr", action="store_true", help=_help("fmr_above_fnmr"))


def _report_options(parser: argparse.ArgumentParser, default_name: str) -> None:
    """Where a report goes, what runs in it, and how it shows its progress."""
    # a part of the report is named apart from the whole, so it never replaces it
    suffix = f" followed by -{default_name}" if default_name in PART_REPORTS else ""
    group = parser.add_argument_group("the report")
    group.add_argument(
        "--name",
        help=f"report name: output goes to <reports-dir>/<name>/ "
        f"(default: {default_name}, or the data file's stem{suffix})",
    )
    group.add_argument(
        "--reports-dir",
        metavar="DIR",
        type=_user_path,
        help="parent folder of reports (default: reports/ in the current folder)",
    )
    group.add_argument(
        "--measure-module",
        metavar="MODULE",
        action="append",
        default=[],
        help="dotted name of a module that registers extra measures "
        "(importable from the current folder); repeatable",
    )
    group.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("KEY", "VALUE"),
        help="set a notebook parameter (VALUE read as the parameter's type; lists as "
        "JSON or comma-separated); repeatable",
    )
    group.add_argument(
        "--input-copy",
        metavar="WHEN",
        help=_help("input_copy", "auto").replace("%", "%%"),
    )
    group.add_argument("--no-progress", action="store_true", help="no progress bars")
    group.add_argument(
        "--open", action="store_true", help="open the front page in a browser when done"
    )


def _alpha_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--alpha", metavar="ALPHA", help=_help("alpha", 0.5))


def _measures_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--measures",
        metavar="NAMES",
        help="comma-separated measures to audit (default: every measure that applies)",
    )


def _pareto_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("the frontier")
    group.add_argument("--measure", metavar="NAME", help=_help("measure", "garbe"))
    group.add_argument("--weights", metavar="WEIGHTS", help=_help("weights", "equal"))
    group.add_argument("--accuracy", metavar="AXIS", help=_help("accuracy", "auto"))
    group.add_argument(
        "--accuracy-from",
        metavar="DATA",
        help=_help("accuracy_from") + "; algorithms of one table only are named and left out",
    )
    group.add_argument("--accuracy-column", metavar="COLUMN", help=_help("accuracy_column"))
    group.add_argument("--undefined", metavar="POLICY", help=_help("undefined", "raise"))
    group.add_argument(
        "--max-accuracy",
        metavar="VALUE",
        help=_help("max_accuracy", "0.01, total FNMR at most 1%%; 'none' for no cut-off"),
    )


def _uncertainty_options(parser: argparse.ArgumentParser, *, replicates: str) -> None:
    group = parser.add_argument_group("uncertainty")
    group.add_argument("--replicates", metavar="N", help=_help(replicates).replace("%", "%%"))
    group.add_argument("--seed", metavar="N", help=_help("seed", 0))


def build_parser() -> argparse.ArgumentParser:
    """The parser of the ``audit`` command and its subcommands."""
    from audit import __version__

    parser = _Parser(
        prog="audit",
        description=DESCRIPTION,
        epilog=EPILOG.format(statuses=_statuses()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"audit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def command(name: str, help: str, description: str) -> argparse.ArgumentParser:
        made = sub.add_parser(name, help=help, description=description)
        _output_options(made)
        return made

    report = command(
        "report",
        "the whole report: FFMC audit and Pareto down-select",
        "Run the FFMC audit and the Pareto down-select notebooks (and, for a "
        "cross-group table, the cross-group notebook) into one report folder.",
    )
    ffmc = command(
        "ffmc",
        "FFMC audit of every measure that applies",
        "Audit the fairness measures against FFMC.1-3, with the input's data quality.",
    )
    pareto = command(
        "pareto",
        "accuracy/fairness Pareto down-select",
        "Find the algorithms on the accuracy/fairness Pareto frontier and tabulate the "
        "trade-offs between them.",
    )
    for made, name in ((report, "annex15"), (ffmc, "ffmc"), (pareto, "pareto")):
        _data_argument(made)
        _table_options(made)
        _alpha_option(made)
        if made is not pareto:
            _measures_option(made)
        if made is not ffmc:
            _pareto_options(made)
        _uncertainty_options(made, replicates="n_replicates")
        _report_options(made, name)

    scores = command(
        "scores",
        "audit from raw comparison scores (default: VoxCeleb1-H)",
        "From comparison scores: per-group rates at a target FMR, every rate and score "
        "measure, sweeps over operating points, DET curves and the FFMC audit. Without "
        "DATA, the bt4vt VoxCeleb1-H scores are fetched from PyPI and verified. The table "
        "has a row per comparison: algorithm, score, mated (True/False or 1/0) and the "
        "group, as one column 'group' or two, 'group_1' and 'group_2' (one per side, for "
        "cross-group pairs), or as the attribute columns --attributes names (each one "
        "column, or two with _1 and _2); optionally "
        "subject_1 and subject_2 (for the subject-level bootstrap).",
    )
    _data_argument(scores, what="score table")
    scores.add_argument(
        "--scores", dest="scores_option", type=_data, metavar="PATH", help=argparse.SUPPRESS
    )
    scores.add_argument(
        "--distance",
        action="store_true",
        help="scores are distances (lower means a match); default: similarities",
    )
    scores.add_argument("--attributes", metavar="NAMES", help=_help("attributes"))
    scores.add_argument(
        "--ignore-columns",
        metavar="NAMES",
        dest="ignore",
        help=_help("ignore") + "; each must be a column of the score table",
    )
    scores.add_argument(
        "--merge-labels",
        action="store_true",
        help=_help("merge_labels") + "; only for scores read whole, not streamed (see --memory)",
    )
    scores.add_argument("--encoding", metavar="NAME", help=_help("encoding"))
    point = scores.add_mutually_exclusive_group()
    point.add_argument("--target-fmr", metavar="FMR", help=_help("target_fmr", 0.001))
    point.add_argument(
        "--operating-point",
        choices=sorted(OPERATING_POINTS),
        help="a named operating point instead of --target-fmr: nist = pooled FMR 3e-5, "
        "NIST's for its demographic summaries (NISTIR 8429)",
    )
    _alpha_option(scores)
    scores.add_argument(
        "--memory",
        default="4GB",
        metavar="SIZE",
        help="memory budget (default: 4GB); Parquet score data larger than this, a folder "
        "or a glob of Parquet files is read in streaming passes, row group by row group, "
        "into the report's tables and figures (no notebook)",
    )
    scores.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run the streaming passes on the Dask cluster at ADDRESS (e.g. tcp://10.0.0.5:8786)",
    )
    _uncertainty_options(scores, replicates="bootstrap_replicates")
    _report_options(scores, "voxceleb")

    compare = command(
        "compare",
        "every measure on several datasets: verdicts, rankings, what holds",
        "Audit every measure on two or more rates tables side by side: the FFMC verdicts "
        "on each, with their stability; how alike the measures rank the algorithms on "
        "each (Kendall's tau-b with a bootstrap interval); each measure's ranks of the "
        "algorithms present in two datasets (matched by name exactly); and the measures "
        "whose verdicts and rankings hold on every dataset. Prints the verdict matrix.",
    )
    compare.add_argument(
        "data",
        nargs="+",
        type=_data,
        metavar="DATA",
        help="two or more rates tables: CSV or Parquet files, or built-in datasets' names "
        "(annex15, frvt11: 'audit datasets'); each is labelled by its name or file stem",
    )
    compare.add_argument(
        "--accuracy-from",
        metavar="DATA=SOURCE:COLUMN",
        action="append",
        default=[],
        dest="accuracy_each",
        help="DATA's accuracy from a column of another table (a file or a built-in dataset), "
        "joined by algorithm name, e.g. frvt11=frvt11-accuracy:'Mugshot, 1e-5'; repeatable "
        "(default: each dataset's total FNMR, or total FMR on an FMR-only table)",
    )
    _table_options(compare)
    compare._action_groups[
        -1
    ].description = "these apply to the files compared, not to the built-in datasets"
    _alpha_option(compare)
    _measures_option(compare)
    compare.add_argument(
        "--min-tau",
        metavar="TAU",
        help=_help("min_tau", 0),
    )
    _uncertainty_options(compare, replicates="rank_replicates")
    _report_options(compare, "compare")

    command(
        "measures",
        "list the registered fairness measures",
        "List the registered measures with direction, bounds and citation.",
    ).add_argument(
        "--measure-module",
        metavar="MODULE",
        action="append",
        default=[],
        help="dotted name of a module that registers extra measures; repeatable",
    )
    check = command(
        "check",
        "validate a rates table and summarise it",
        "Read and validate a rates table; print what was read and which measures apply.",
    )
    _data_argument(check)
    _table_options(check)
    command(
        "fetch",
        "download and verify built-in datasets (default: Annex 15)",
        "Download built-in datasets from their pinned sources, verify their sha256 and "
        "cache them (or verify the AUDIT_DATA_DIR copies).",
    ).add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="built-in datasets to fetch (default: annex15; 'all' for every one)",
    )
    command(
        "datasets",
        "list the built-in datasets",
        "List the built-in datasets: what each holds, its size, pinned source and sha256, "
        "licence and how to cite it, and where it would be read from now.",
    )
    return parser


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    action = next(a for a in parser._subparsers._group_actions if a.dest == "command")
    return action.choices[name]


# ------------------------------------------------------------------ options to parameters
#: Options whose value is a notebook parameter of the same meaning: option dest -> parameter.
_OPTION_PARAMETERS = {
    "alpha": "alpha",
    "measure": "measure",
    "measures": "measures",
    "weights": "weights",
    "accuracy": "accuracy",
    "undefined": "undefined",
    "max_accuracy": "max_accuracy",
    "units": "units",
    "columns": "columns",
    "attributes": "attributes",
    "separator": "separator",
    "pair_separator": "pair_separator",
    "pairs": "pairs",
    "count_tolerance": "count_tolerance",
    "rate_position": "rate_position",
    "ignore": "ignore",
    "accuracy_from": "accuracy_from",
    "accuracy_column": "accuracy_column",
    "encoding": "encoding",
    "target_fmr": "target_fmr",
    "seed": "seed",
    "min_tau": "min_tau",
}
