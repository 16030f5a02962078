"""The ``audit`` command line: run the FFMC audit, the Pareto down-select or the whole
report through the parameterised notebooks, list the measures, check a table."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

from audit.tables.layouts import parse_list

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
  audit report --data my_rates.csv --name vendor-x
  audit ffmc --measure-module my_pkg.my_measures
  audit pareto --measure garbe --alpha 0.5 --max-accuracy 0.01
  audit scores                          audit from scores: VoxCeleb1-H -> reports/voxceleb/
  audit scores --scores my_scores.csv --target-fmr 0.001
  audit scores --scores my_scores.csv --operating-point nist   (pooled FMR 3e-5)
  audit measures                        list the registered measures
  audit check my_rates.csv              validate a rates table and summarise it
  audit report --data cross.csv         a cross-group impostor table (group_1, group_2)

data: set AUDIT_DATA_DIR to a folder holding the Annex 15 CSV to work offline.
"""


NEEDS_RATES_MEASURE = (
    "measure {name!r} needs comparison scores; the rates reports take rate measures "
    "(see 'audit measures'); use 'audit scores' for score measures"
)
BAD_TARGET = "target FMR must lie in (0, 1], got {value!r}"
BAD_NUMBER = "expected a finite number or 'none', got {text!r}"
NO_MEASURES = "--measures {text!r} names no measure; give comma-separated names or leave it out"
BAD_PARAMETER = "parameter {key}: expected {expected}, got {text!r}"
BAD_PARAMETER_VALUE = "parameter {key}: {rule}, got {value!r}"

#: The words a boolean -p value may be (any case).
#: Commands that run a part of the full report; from a data file their default report
#: name is the file's stem followed by ``-<command>``, apart from the full report's.
PART_REPORTS = ("ffmc", "pareto")
BOOLEANS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}

#: Value rules of notebook parameters, checked before any kernel starts.
_RULES = {
    "n_replicates": ("must be a positive whole number", lambda v: v >= 1),
    "verdict_replicates": ("must be a positive whole number", lambda v: v >= 1),
    "n_random": ("must be a positive whole number", lambda v: v >= 1),
    "sweep_points": ("must be a whole number of at least 2", lambda v: v >= 2),
    "bootstrap_replicates": ("must be a whole number of at least 0", lambda v: v >= 0),
    "seed": ("must be a whole number of at least 0", lambda v: v >= 0),
    "alpha_step": ("must lie in (0, 1]", lambda v: 0 < v <= 1),
    "sweep_min": ("must lie in (0, 1]", lambda v: 0 < v <= 1),
    "sweep_max": ("must lie in (0, 1]", lambda v: 0 < v <= 1),
    "floor_lower": ("must be positive or none", lambda v: v is None or v > 0),
    "max_accuracy": ("must be positive or none", lambda v: v is None or v > 0),
    "uncertainty_method": (
        "must be one of 'auto', 'counts', 'transcription', 'none'",
        lambda v: v in ("auto", "counts", "transcription", "none"),
    ),
}


def _no_constant(name: str):
    raise ValueError(name)


def _value(text: str):
    """A -p value as JSON when it parses (numbers, lists, true/false/null), else a string.

    NaN and infinities are not JSON and stay strings (refused where a number is due).
    """
    try:
        return json.loads(text, parse_constant=_no_constant)
    except ValueError:
        return text


def _typed(key: str, text: str, default):
    """A -p value typed by the notebook's declared default; ValueError naming the key."""
    kind = type(default)
    word = text.strip().lower()
    if kind is bool:
        if word not in BOOLEANS:
            expected = "true or false (or yes/no, 1/0)"
            raise ValueError(BAD_PARAMETER.format(key=key, expected=expected, text=text))
        return BOOLEANS[word]
    value = _value(text)
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(BAD_PARAMETER.format(key=key, expected="a whole number", text=text))
    elif kind is float:
        if word in ("none", "null") and key in ("floor_lower", "max_accuracy"):
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(BAD_PARAMETER.format(key=key, expected="a number", text=text))
        value = float(value)
    elif kind is list:
        if not isinstance(value, list):
            raise ValueError(BAD_PARAMETER.format(key=key, expected="a JSON list", text=text))
    elif kind is str:
        value = text
    return value


def _optional_float(text: str) -> float | None:
    """A finite number, or ``none`` for no value."""
    if text.strip().lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(BAD_NUMBER.format(text=text))
    return value


def _finite_float(text: str) -> float:
    """A finite number."""
    value = _optional_float(text)
    if value is None:
        raise argparse.ArgumentTypeError(BAD_NUMBER.format(text=text))
    return value


def _table_options(parser: argparse.ArgumentParser) -> None:
    """How to read a rates table: units, column names, attributes, wide separator."""
    parser.add_argument(
        "--units",
        choices=("fraction", "percent"),
        default=None,
        help="units of the rates: 'percent' divides them by 100 (recorded in the manifest); "
        "'fraction' also silences the implausibly-high-rates warning (default: fraction)",
    )
    parser.add_argument(
        "--columns",
        metavar="MAP",
        default=None,
        help="the table's names for ours, e.g. algorithm=system,group=nationality",
    )
    parser.add_argument(
        "--attributes",
        metavar="NAMES",
        default=None,
        help="comma-separated attribute names making up a group, e.g. gender,race",
    )
    parser.add_argument(
        "--separator",
        default=".",
        help="separator between FMR/FNMR and the group in wide column names "
        "(default: '.'; '_' reads FMR_African)",
    )
    parser.add_argument(
        "--pair-separator",
        metavar="SEP",
        default=None,
        help="read a wide cross-group impostor table: FMR.<enrolment><SEP><probe> columns, "
        "one per pair of groups (e.g. '|' reads FMR.F.Black|M.White; a separator starting "
        "with '-' is given as --pair-separator=-); a long one needs no option (columns "
        "group_1, group_2)",
    )
    parser.add_argument(
        "--pairs",
        metavar="LIST",
        default=None,
        help="the pairs a cross-group table measures when not the full square, written "
        "<enrolment><SEP><probe> and comma-separated, SEP the --pair-separator "
        "(e.g. 'A|A,B|B,A|B')",
    )


def _common(parser: argparse.ArgumentParser, default_name: str, *, data: bool = True) -> None:
    # a part of the report is named apart from the whole, so it never replaces it
    suffix = f" followed by -{default_name}" if default_name in PART_REPORTS else ""
    if data:
        parser.add_argument(
            "--data",
            metavar="PATH",
            help="rates table (CSV or Parquet, wide or long layout; FMR and FNMR, or one "
            "of them); default: the verified Annex 15 CSV",
        )
        _table_options(parser)
    parser.add_argument(
        "--name",
        default=None,
        help=f"report name: output goes to <reports-dir>/<name>/ "
        f"(default: {default_name}, or the data file's stem{suffix})",
    )
    parser.add_argument(
        "--reports-dir",
        metavar="DIR",
        type=Path,
        default=None,
        help="parent folder of reports (default: reports/ in the current folder)",
    )
    parser.add_argument(
        "--measure-module",
        metavar="MODULE",
        action="append",
        default=[],
        help="dotted name of a module that registers extra measures "
        "(importable from the current folder); repeatable",
    )
    parser.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("KEY", "VALUE"),
        help="pass a parameter to the notebooks (VALUE parsed as JSON when possible); repeatable",
    )
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="audit",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from audit import __version__

    parser.add_argument("--version", action="version", version=f"audit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    report = sub.add_parser(
        "report",
        help="the whole report: FFMC audit and Pareto down-select",
        description="Run the FFMC audit and the Pareto down-select notebooks "
        "into one report folder.",
    )
    _common(report, "annex15")
    _pareto_options(report)

    ffmc = sub.add_parser(
        "ffmc",
        help="FFMC audit of every registered measure",
        description="Audit every registered fairness measure against "
        "FFMC.1-3 and the input's data quality.",
    )
    _common(ffmc, "ffmc")
    ffmc.add_argument(
        "--measures",
        metavar="NAMES",
        help="comma-separated measure names (default: all registered)",
    )

    pareto = sub.add_parser(
        "pareto",
        help="accuracy/fairness Pareto down-select",
        description="Find the algorithms on the accuracy/fairness Pareto "
        "frontier and tabulate the trade-offs between them.",
    )
    _common(pareto, "pareto")
    _pareto_options(pareto)

    scores = sub.add_parser(
        "scores",
        help="audit from raw comparison scores (default: VoxCeleb1-H)",
        description="From comparison scores: per-group rates at a target FMR, every "
        "rate and score measure, sweeps over operating points, DET curves "
        "and the FFMC audit. Without --scores, the bt4vt VoxCeleb1-H "
        "scores are fetched from PyPI and verified.",
    )
    _common(scores, "voxceleb", data=False)
    scores.add_argument(
        "--scores",
        metavar="PATH",
        help="score table (CSV or Parquet): algorithm, score, mated, group (or "
        "group_1/group_2); default: the bt4vt VoxCeleb1-H scores",
    )
    scores.add_argument(
        "--distance",
        action="store_true",
        help="scores are distances (lower means a match); default: similarities",
    )
    from audit.scores.thresholds import OPERATING_POINTS

    point = scores.add_mutually_exclusive_group()
    point.add_argument(
        "--target-fmr",
        type=_finite_float,
        default=None,
        metavar="FMR",
        help="operating point: pooled FMR target (default: 0.001)",
    )
    point.add_argument(
        "--operating-point",
        choices=sorted(OPERATING_POINTS),
        default=None,
        help="a named operating point: nist = pooled FMR 3e-5, NIST's for its demographic "
        "summaries (NISTIR 8429)",
    )
    scores.add_argument(
        "--memory",
        default="4GB",
        metavar="SIZE",
        help="memory budget (default: 4GB); Parquet score data larger than this, a folder "
        "or a glob of Parquet files is read in streaming passes, row group by row group, "
        "into the report's tables (no notebook)",
    )
    scores.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run the streaming passes on the Dask cluster at ADDRESS (e.g. tcp://10.0.0.5:8786)",
    )
    scores.add_argument(
        "--alpha",
        type=_finite_float,
        default=None,
        help="weight of the FMR term in the rate measures (default: 0.5)",
    )

    sub.add_parser(
        "measures",
        help="list the registered fairness measures",
        description="List the registered measures with direction, bounds and citation.",
    )
    check = sub.add_parser(
        "check",
        help="validate a rates table and summarise it",
        description="Read and validate a rates table; print what was read.",
    )
    check.add_argument("path", type=Path)
    _table_options(check)
    sub.add_parser(
        "fetch",
        help="download and verify the Annex 15 CSV",
        description="Download the Annex 15 CSV from its pinned source, verify its "
        "sha256 and cache it (or verify the AUDIT_DATA_DIR copy).",
    )
    return parser


def _pareto_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--measure", default="garbe", help="fairness measure (default: garbe)")
    parser.add_argument(
        "--alpha",
        type=_finite_float,
        default=0.5,
        help="weight of the FMR term, in [0, 1] (default: 0.5)",
    )
    parser.add_argument(
        "--weights",
        default="equal",
        help="group weights for total FNMR/FMR: 'equal', 'counts' (the table's "
        "n_mated/n_nonmated columns) or a counts CSV (default: equal)",
    )
    parser.add_argument(
        "--accuracy",
        choices=("auto", "total_fnmr", "total_fmr"),
        default=None,
        help="accuracy axis of the frontier (default: auto, total FNMR when the table "
        "has FNMRs, else total FMR)",
    )
    parser.add_argument(
        "--undefined",
        choices=("raise", "exclude"),
        default=None,
        help="algorithms whose measure is undefined: 'raise' stops with their names "
        "(default), 'exclude' leaves them out and lists them",
    )
    parser.add_argument(
        "--max-accuracy",
        type=_optional_float,
        default=0.01,
        metavar="FNMR",
        help="accuracy cut-off for the zoomed inset and the short list "
        "(default: 0.01, total FNMR at most 1%%; 'none' for no cut-off)",
    )


def _parameters(args: argparse.Namespace) -> dict:
    parameters = {}
    if getattr(args, "data", None):
        parameters["data_path"] = str(Path(args.data).resolve())
    if getattr(args, "scores", None):
        parameters["scores_path"] = str(Path(args.scores).resolve())
    if getattr(args, "distance", False):
        parameters["higher_is_match"] = False
    if getattr(args, "target_fmr", None) is not None:
        parameters["target_fmr"] = args.target_fmr
    if getattr(args, "operating_point", None) is not None:
        from audit.scores.thresholds import OPERATING_POINTS

        parameters["target_fmr"] = OPERATING_POINTS[args.operating_point]
    if args.measure_module:
        parameters["measure_modules"] = list(args.measure_module)
    for key in ("measure", "alpha", "weights", "units", "accuracy", "undefined"):
        if getattr(args, key, None) is not None:
            parameters[key] = getattr(args, key)
    if getattr(args, "columns", None):
        parameters["columns"] = args.columns
    if getattr(args, "attributes", None):
        parameters["attributes"] = list(parse_list(args.attributes))
    if getattr(args, "separator", ".") != ".":
        parameters["separator"] = args.separator
    for key in ("pair_separator", "pairs"):
        if getattr(args, key, None) is not None:
            parameters[key] = getattr(args, key)
    if hasattr(args, "max_accuracy"):
        parameters["max_accuracy"] = args.max_accuracy
    if parameters.get("weights") not in (None, "equal", "counts"):
        parameters["weights"] = str(Path(parameters["weights"]).resolve())  # kernels run elsewhere
    if getattr(args, "measures", None) is not None:
        parameters["measures"] = [m.strip() for m in args.measures.split(",") if m.strip()]
        if not parameters["measures"]:
            raise ValueError(NO_MEASURES.format(text=args.measures))
    for key, value in args.parameter:
        parameters[key] = _value(value)
    return parameters


def _check_parameters(notebooks, given: list, parameters: dict) -> None:
    """Type the -p values by the notebooks' declared defaults and check their rules."""
    import ast

    import papermill

    from audit.report.runner import notebook_path

    defaults = {}
    for notebook in notebooks:
        for key, spec in papermill.inspect_notebook(str(notebook_path(notebook))).items():
            try:
                defaults.setdefault(key, ast.literal_eval(spec["default"]))
            except (ValueError, SyntaxError):
                defaults.setdefault(key, None)
    for key, text in given:
        if key in defaults and defaults[key] is not None:
            parameters[key] = _typed(key, text, defaults[key])
    for key, (rule, ok) in _RULES.items():
        if key in parameters and not ok(parameters[key]):
            raise ValueError(BAD_PARAMETER_VALUE.format(key=key, rule=rule, value=parameters[key]))


def _list_measures() -> int:
    from audit.measures.registry import get_measure, measure_names

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
            f"{m.name:{name_width}s}  {m.label:{label_width}s}  [{lo}, {hi}] ideal {m.ideal}; "
            f"{direction}; {m.inputs}{iso}; {m.citation}"
        )
    return 0


def _read_options(parameters: dict) -> dict:
    """The read_rates keywords among the parameters."""
    keys = ("units", "columns", "attributes", "separator", "pair_separator", "pairs")
    return {k: parameters[k] for k in keys if k in parameters}


def _stats(name: str, values) -> str:
    return (
        f"{name}: min {values.min():.3g}, median {values.median():.3g}, "
        f"max {values.max():.3g}, zeros {(values == 0).sum()}"
    )


def _check(args: argparse.Namespace) -> int:
    from audit.analysis.crossgroup import asymmetry_summary
    from audit.measures.registry import applicable_measures
    from audit.sources.annex15 import sha256sum
    from audit.tables.crossgroup import cross_group
    from audit.tables.layouts import available_rates
    from audit.tables.rates import read_rates

    path = args.path
    options = {
        "units": args.units,
        "columns": args.columns,
        "attributes": parse_list(args.attributes),
        "separator": args.separator,
        "pair_separator": args.pair_separator,
        "pairs": args.pairs,
    }
    table = read_rates(path, **options)
    algorithms = table["algorithm"].nunique()
    groups = list(dict.fromkeys(table["group"]))
    cross = cross_group(table)
    print(f"{path}: valid; sha256 {sha256sum(path)}")
    if cross is None:
        print(f"{algorithms} algorithms x {len(groups)} groups = {len(table)} rows")
    else:
        n_pairs = int(cross.measured.sum())
        square = "full square" if n_pairs == len(groups) ** 2 else "declared pairs"
        print(
            f"cross-group table: {algorithms} algorithms x {n_pairs} pairs ({square} of "
            f"{len(groups)} groups, enrolment group x probe group) = {algorithms * n_pairs} rows"
        )
    print("groups: " + ", ".join(groups))
    if cross is not None:
        print(
            f"the FMR measures read the {len(groups)} within-group FMRs, FMR(g, g), of each "
            "algorithm: an FMR-only table"
        )
    print("columns: " + ", ".join(table.columns))
    print(f"units: {table.attrs['units']}")
    for column in available_rates(table):
        name = f"{column} (within-group)" if cross is not None else column
        print(_stats(name, table[column]))
    if cross is not None:
        pairs = cross.frame()
        print(_stats("fmr (cross-group)", pairs.loc[pairs["group_1"] != pairs["group_2"], "fmr"]))
        summary = asymmetry_summary(table)
        print(
            f"FMR(a, b) != FMR(b, a) in {summary['differ']} of {summary['pairs']} algorithm x "
            f"pairs of groups ({summary['share']:.0%}); largest ratio {summary['largest_fold']:.3g}"
        )
    for column in ("fmr", "fnmr"):
        if column not in table.columns:
            print(f"{column}: absent ({available_rates(table)[0].upper()}-only table)")
    for row in applicable_measures(table).itertuples():
        note = f": {row.note}" if row.note else ""
        print(f"measure {row.measure}: {row.status}{note}")
    return 0


def _streams(args: argparse.Namespace) -> bool:
    """Whether ``audit scores`` reads its scores in streaming passes."""
    if args.command != "scores" or not getattr(args, "scores", None):
        return False
    from audit.scores.streaming import data_bytes, parse_memory

    budget = parse_memory(args.memory)
    text = str(args.scores)
    if args.scheduler or any(ch in text for ch in "*?[") or Path(text).is_dir():
        return True
    return text.lower().endswith(".parquet") and data_bytes(text) > budget


def _streamed_scores(args: argparse.Namespace, parameters: dict, name: str) -> Path:
    """The tables of the scores report -- rates at the target FMR, the sweep and the
    measures along it, the rate and score measures, the EER of each group, the DET
    points -- by the streaming engine, as CSV tables in ``<reports>/<name>/tables``
    (the values the notebook gives in memory)."""
    import numpy as np
    import pandas as pd

    from audit.analysis.sweeps import sweep_measures
    from audit.measures.registry import evaluate_many, evaluate_scores
    from audit.measures.scores import eer_table
    from audit.report.outputs import save_table
    from audit.report.runner import write_report
    from audit.scores import det_points, sweep
    from audit.scores.streaming import StreamingScores, parquet_files

    target = parameters.get("target_fmr", 1e-3)
    alpha = parameters.get("alpha", 0.5)
    targets = np.geomspace(
        parameters.get("sweep_min", 1e-3),
        parameters.get("sweep_max", 0.1),
        parameters.get("sweep_points", 21),
    )

    def report(stats) -> dict:
        """Every table, from one set of statistics (one sample plans the first pass); as
        in the notebook, no EER, score measure or DET without both kinds of comparison."""
        tables = {
            "sweep": sweep(stats, np.unique(np.append(targets, target))),
            "sweep_measures": sweep_measures(stats, targets=targets, alpha=alpha),
        }
        if len(stats.rates_held()) == 2:
            tables["eer_by_group"] = eer_table(stats)
            tables["scored"] = evaluate_scores(stats)
            if len(stats.groups) <= 12:  # as the notebook draws them
                tables["det_points"] = det_points(stats)
        return tables

    client = None
    if args.scheduler:
        from distributed import Client

        client = Client(args.scheduler)
    try:
        engine = StreamingScores(
            args.scores,
            memory=args.memory,
            higher_is_match=not args.distance,
            attributes=parameters.get("attributes"),
            engine="dask" if client is not None else "streaming",
            client=client,
            progress=not args.no_progress,
        )
        tables = engine.apply(report)
    finally:
        if client is not None:
            client.close()
    swept = tables["sweep"]
    rates = swept[swept["target_fmr"] == target].drop(
        columns=["target_fmr", "threshold", "attained_fmr"]
    )
    rates = rates.reset_index(drop=True)
    rated = evaluate_many(rates, alpha=alpha, zero_division="flag").drop(columns="alpha")
    columns = ["grouping", "algorithm", "measure", "kind", "value", "fmr_term", "fnmr_term"]
    scored = tables.pop("scored", rated.iloc[:0])
    measures = pd.concat(
        [
            rated.assign(grouping="group", kind="rates"),
            scored.assign(grouping="group", kind="scores"),
        ],
        ignore_index=True,
    )[[*columns, "undefined"]]
    manifest = {
        "engine": "dask" if args.scheduler else "streaming",
        "scores": str(args.scores),
        "files": [{"path": f, "bytes": Path(f).stat().st_size} for f in parquet_files(args.scores)],
        "passes": engine.passes,
        "parameters": {k: v for k, v in parameters.items() if k != "scores_path"},
    }

    def write(folder: Path) -> None:
        save_table(rates, "rates_at_fmr", folder)
        save_table(measures, "measures", folder)
        for table_name, table in tables.items():
            save_table(table, table_name, folder)
        (folder / "manifest.json").write_text(json.dumps(manifest, indent=2, allow_nan=False))

    return write_report(name, write, reports_root=args.reports_dir)


def _preflight(args: argparse.Namespace, parameters: dict):
    """Refuse bad input and options here, before a notebook kernel starts; return the
    rates table read (``None`` for ``audit scores``)."""
    import os

    from audit.measures.contract import PairMeasure, RateMeasure, TableMeasure
    from audit.measures.kernels import check_alpha
    from audit.measures.modules import import_measure_modules
    from audit.measures.registry import get_measure

    if parameters.get("measure_modules"):
        # user modules import from the current folder, here and in the notebook kernels
        here = str(Path.cwd())
        os.environ["PYTHONPATH"] = os.pathsep.join(
            p for p in (here, os.environ.get("PYTHONPATH", "")) if p
        )
        sys.path.insert(0, here)
        import_measure_modules(parameters["measure_modules"])
    if "alpha" in parameters:
        check_alpha(parameters["alpha"])
    for name in [parameters.get("measure"), *parameters.get("measures", [])]:
        if name is not None and not isinstance(
            get_measure(name), (RateMeasure, TableMeasure, PairMeasure)
        ):
            raise ValueError(NEEDS_RATES_MEASURE.format(name=name))
    if parameters.get("target_fmr") is not None and not 0.0 < parameters["target_fmr"] <= 1.0:
        raise ValueError(BAD_TARGET.format(value=parameters["target_fmr"]))
    if args.command == "scores":
        if parameters.get("scores_path") and not _streams(args):
            from audit.tables.scores import check_columns

            # the header only: the notebook reads (and validates) the rows, once, and
            # shows the orientation warning (distances read as similarities, or the reverse)
            check_columns(parameters["scores_path"], attributes=parameters.get("attributes"))
        return None
    from audit.sources.annex15 import annex15_path
    from audit.tables.rates import read_rates

    table = read_rates(parameters.get("data_path") or annex15_path(), **_read_options(parameters))
    if parameters.get("measure") is not None:
        from audit.measures.onesided import NOT_APPLICABLE, NOT_APPLICABLE_HERE
        from audit.measures.registry import applicable_measures

        row = applicable_measures(table, [parameters["measure"]]).iloc[0]
        if row["status"] == NOT_APPLICABLE:
            raise ValueError(
                NOT_APPLICABLE_HERE.format(
                    name=row["measure"], source=table.attrs["source"], reason=row["note"]
                )
            )
    if parameters.get("accuracy") not in (None, "auto"):
        from audit.tables.layouts import check_accuracy

        check_accuracy(table, parameters["accuracy"])
    if parameters.get("weights") not in (None, "equal"):
        from audit.analysis.accuracy import overall_rates

        overall_rates(table, weights=parameters["weights"])
    return table


def _warning_sentence(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning as one sentence on stderr, without the file and line it was raised at."""
    print(f"audit: warning: {message}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("always")  # every warning shown, each as a sentence
        warnings.showwarning = _warning_sentence
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2

    from audit.analysis.accuracy import WeightsError
    from audit.report.runner import (
        NotebookFailed,
        check_report_name,
        check_reports_root,
        plain_reason,
        run_report,
    )
    from audit.sources.annex15 import DataError
    from audit.sources.voxceleb import VoxCelebError
    from audit.tables.rates import RatesError

    try:
        if args.command == "measures":
            return _list_measures()
        if args.command == "check":
            return _check(args)
        if args.command == "fetch":
            from audit.sources.annex15 import annex15_path, sha256sum

            path = annex15_path()
            print(f"{path}\nsha256 {sha256sum(path)} (verified)")
            return 0
        notebooks = {
            "report": ("ffmc", "pareto"),
            "ffmc": ("ffmc",),
            "pareto": ("pareto",),
            "scores": ("scores",),
        }
        given = getattr(args, "scores", None) or getattr(args, "data", None)
        if args.name is not None:
            name = args.name
        elif given:
            glob = any(ch in str(given) for ch in "*?[")
            name = Path(given).parent.name if glob else Path(given).stem
            if args.command in PART_REPORTS:
                name = f"{name}-{args.command}"
        else:
            name = {"report": "annex15", "scores": "voxceleb"}.get(args.command, args.command)
        check_report_name(name)
        parameters = _parameters(args)
        _check_parameters(notebooks[args.command], args.parameter, parameters)
        table = _preflight(args, parameters)
        chosen = notebooks[args.command]
        if args.command == "report" and table.attrs.get("cross_group") is not None:
            chosen = (*chosen, "crossgroup")  # the pair matrices: heat maps, cross-group measures
        check_reports_root(args.reports_dir)
        if _streams(args):
            folder = _streamed_scores(args, parameters, name)
        else:
            folder = run_report(
                name,
                notebooks=chosen,
                parameters=parameters,
                reports_root=args.reports_dir,
                progress=not args.no_progress,
            )
    except BrokenPipeError:
        # the reader of our output went away (`audit check t.csv | head`): not an error of
        # the input; stdout goes to /dev/null so that flushing it at exit stays quiet
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # as a shell reports a process ended by SIGPIPE
    except NotebookFailed as error:
        print(f"audit: notebook failed\n{error}", file=sys.stderr)
        return 1
    except (
        RatesError,
        WeightsError,
        DataError,
        VoxCelebError,
        KeyError,
        ImportError,
        ValueError,
        OSError,
    ) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        if isinstance(error, OSError) and error.errno is not None:
            where = error.filename if error.filename is not None else "input/output"
            message = f"{where}: {plain_reason(error)}"
        print(f"audit: error: {message}", file=sys.stderr)
        return 2
    print(f"report written to {folder}\nopen {folder / 'index.html'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
