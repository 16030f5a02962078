"""Every public function and every command-line option refuses a wrong value with the one
message of audit.validation, naming the parameter, the value and what is expected (the
model is scikit-learn's sklearn/tests/test_public_functions.py).

The public functions are those of the ``__all__`` of ``audit`` and of its subpackages.
Each keyword a function takes is either data (a table, rates, scores: checked by the
readers and the measure contract, listed in DATA) or a parameter declared through
:func:`audit.validation.validate_params`; the declaration is checked before the function
runs, so a wrong value is refused whatever the other arguments are.
"""

from __future__ import annotations

import importlib
import inspect

import pandas as pd
import pytest

from audit import validation
from audit.cli import _OPTION_PARAMETERS, build_parser, main
from audit.exceptions import ParameterError

PACKAGES = [
    "audit",
    "audit.analysis",
    "audit.measures",
    "audit.scores",
    "audit.sources",
    "audit.tables",
    "audit.uncertainty",
]

#: Arguments that carry data rather than a choice: validated by the readers, the measure
#: contract or the statistics they are, not by a declared constraint.
DATA = {
    "fmr", "fnmr", "x", "k", "n", "result", "frame", "stats",
    "points", "rates", "counts", "measure_result", "fmr_reps", "fnmr_reps", "claims",
    "verdicts", "downselected", "average", "fmr_pairs", "rng", "mask", "message", "score",
    "mated", "group_1", "group_2", "groups", "algorithms", "spec", "function",
    "values", "share", "algorithm", "pairs",
}  # fmt: skip
#: Public functions that are themselves checks, or that take no parameter to declare.
EXEMPT = {
    "audit.measures.check_alpha",  # the check itself, for measure authors
    "audit.measures.check_zero_division",
    "audit.measures.report_undefined",
}


def public_functions() -> dict[str, object]:
    found = {}
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if inspect.isfunction(obj) and f"{package}.{name}" not in EXEMPT:
                found.setdefault(obj, f"{package}.{name}")
    return {name: obj for obj, name in found.items()}


FUNCTIONS = public_functions()


def declared(function) -> dict[str, validation.Constraint]:
    return getattr(function, "__audit_parameters__", {})


def test_there_are_public_functions_to_check():
    assert len(FUNCTIONS) > 30
    assert any(declared(f) for f in FUNCTIONS.values())


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_parameter_of_a_public_function_is_declared(name):
    function = FUNCTIONS[name]
    signature = inspect.signature(inspect.unwrap(function))
    undeclared = [
        p.name
        for p in signature.parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        and not p.name.startswith("_")
        and p.name not in DATA
        and p.name not in declared(function)
    ]
    assert undeclared == [], f"{name} takes {undeclared} without a declared constraint"


#: Values tried, in turn, for a required argument other than the one under test: the
#: first its declaration accepts is given (any object for data, which is read only
#: after every declared parameter is checked).
def _legal_tables() -> tuple:
    from audit import read_rates, read_scores

    rates = read_rates(
        pd.DataFrame({"Algorithm": ["a", "b"], "FMR.F": [1e-4, 2e-4], "FMR.M": [2e-4, 1e-4]})
    )
    scores = read_scores(
        pd.DataFrame(
            {"score": [0.9, 0.1, 0.8, 0.2], "mated": [True, False, True, False]}
            | {"group": ["F", "F", "M", "M"], "algorithm": ["a"] * 4}
        )
    )
    return rates, scores


LEGAL = (0.5, 1, True, [True], "garbe", ["garbe"], (0.0, 1.0), "x", ["x"], len, *_legal_tables())


def legal_value(function, name: str):
    constraint = declared(function).get(name)
    if constraint is None:
        return object()
    return next(v for v in LEGAL if constraint.accepts(v))


def refusal(parameter: str, constraint, value) -> str:
    """The message refusing ``value`` of ``parameter``: :data:`audit.validation.REFUSED`,
    and what is wrong with it where the constraint says (:data:`audit.validation.FAULT`)."""
    refused = validation.REFUSED.format(
        name=parameter, expected=constraint.expected, value=validation._shown(value)
    )
    fault = constraint.fault(value)
    return refused if fault is None else validation.FAULT.format(refused=refused, fault=fault)


def wrong_values():
    for name, function in sorted(FUNCTIONS.items()):
        for parameter, constraint in declared(function).items():
            for bad in constraint.invalid():
                shown = validation._shown(bad)
                yield pytest.param(name, parameter, bad, id=f"{name}-{parameter}-{shown!r}")


@pytest.mark.parametrize(("name", "parameter", "bad"), list(wrong_values()))
def test_every_public_function_refuses_a_wrong_value(name, parameter, bad):
    function = FUNCTIONS[name]
    constraint = declared(function)[parameter]
    if constraint.accepts(bad):
        pytest.skip(f"{bad!r} is legal for {parameter} here")
    signature = inspect.signature(inspect.unwrap(function))
    positional, keywords = [], {}
    for p in signature.parameters.values():
        if p.default is not p.empty or p.name == parameter:
            continue
        if p.kind == p.POSITIONAL_ONLY:
            positional.append(legal_value(function, p.name))
        elif p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            keywords[p.name] = legal_value(function, p.name)
    with pytest.raises(ParameterError) as error:
        function(*positional, **keywords, **{parameter: bad})
    assert str(error.value) == refusal(parameter, constraint, bad)


def test_a_published_file_read_by_pandas_is_refused_saying_which_reader_reads_it(
    annex15_file,
):
    """The commonest slip: the Annex 15 CSV read by ``pandas.read_csv`` and handed to a
    measure, an analysis or the uncertainty analysis, where the validated table is meant
    (a table, a score table, a reader's source and a file's path are declared like any
    parameter: none is undeclared data, above).  Each refuses it by name, saying which
    reader to use, before any work: never ``KeyError: 'algorithm'`` from inside pandas."""
    import audit
    from audit import uncertainty
    from audit.analysis import ffmc_report, frontier_frame

    assert not {"table", "scores", "source", "path"} & DATA
    raw = pd.read_csv(annex15_file)
    for call in (
        lambda: audit.evaluate(raw, "garbe"),
        lambda: ffmc_report(raw),
        lambda: frontier_frame(raw, "garbe"),
        lambda: uncertainty.analyse(raw, ["garbe"]),
    ):
        with pytest.raises(ParameterError) as error:
            call()
        message = str(error.value)
        assert message.startswith("parameter table: expected a rates table as audit.read_rates")
        assert message.endswith(
            "got a DataFrame with columns ['Algorithm', 'FNMR.F.AmIndian', 'FMR.F.AmIndian', "
            "'FNMR.F.Asian', 'FMR.F.Asian', 'FNMR.F.Black', 'FMR.F.Black', 'FNMR.F.White', "
            "... (9 more)]"
        )
    with pytest.raises(ParameterError, match="^parameter scores: expected a score table"):
        audit.sweep(raw)
    with pytest.raises(ParameterError, match="^parameter source: expected a path or a pandas"):
        audit.read_rates({"Algorithm": ["a"]})
    assert audit.evaluate(audit.read_rates(raw), "garbe")["value"].notna().all()


# ------------------------------------------------------------------ the command line
def option_cases():
    parser = build_parser()
    for command in ("report", "ffmc", "pareto", "scores", "check", "compare"):
        sub = parser._subparsers._group_actions[0].choices[command]
        actions = {a.dest: a for a in sub._actions}
        for option, parameter in sorted(_OPTION_PARAMETERS.items()):
            if option not in actions:
                continue
            # the option as written (--ignore-columns, whose value is ignore: no prefix)
            flag = next(s for s in actions[option].option_strings if s.startswith("--"))
            constraint = validation.constraint_of(parameter)
            for bad in constraint.invalid():
                text = str(bad)
                value = constraint.parse(text)
                if constraint.accepts(value) or text.startswith("-"):
                    continue  # legal once read from text; a leading '-' is an option to argparse
                yield pytest.param(command, flag, parameter, text, id=f"{command}{flag}={text}")


@pytest.mark.parametrize(("command", "flag", "parameter", "text"), list(option_cases()))
def test_every_option_refuses_a_wrong_value(tmp_path, capsys, command, flag, parameter, text):
    constraint = validation.constraint_of(parameter)
    value = constraint.parse(text)
    argv = [command, *(["annex15", "frvt11"] if command == "compare" else []), f"{flag}={text}"]
    if command != "check":
        argv += ["--reports-dir", str(tmp_path / "r")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    # named as the user typed it: the option, not the parameter it sets
    expected = flag + refusal(parameter, constraint, value).removeprefix(f"parameter {parameter}")
    assert err.startswith(f"usage: audit {command} ")
    assert err.endswith(f"audit {command}: error: {expected}\n")
    assert not (tmp_path / "r").exists()


def notebook_cases():
    from audit.cli import _ARGUMENT_PARAMETERS
    from audit.report.runner import NOTEBOOKS, declared_parameters

    for notebook in sorted(NOTEBOOKS):
        for parameter in declared_parameters(notebook):
            if parameter in _ARGUMENT_PARAMETERS:
                continue  # the command's own arguments give it: any -p of it is refused
            constraint = validation.constraint_of(parameter)
            for bad in constraint.invalid():
                text = str(bad)
                if not constraint.accepts(constraint.parse(text)):
                    yield pytest.param(
                        notebook, parameter, text, id=f"{notebook}-{parameter}={text}"
                    )
                    break  # one wrong value a parameter: each costs a command line


#: The notebook parameters each command's own arguments give: its input(s), the report's
#: folder, the user measure modules and, for compare, the tables' labels and accuracies.
GIVEN_BY_ARGUMENTS = {
    "report": {"data_path", "output_dir", "measure_modules"},
    "ffmc": {"data_path", "output_dir", "measure_modules"},
    "pareto": {"data_path", "output_dir", "measure_modules"},
    "scores": {"scores_path", "output_dir", "measure_modules"},
    "compare": {"data_paths", "data_labels", "accuracy_sources", "accuracy_columns"}
    | {"output_dir", "measure_modules"},
}


@pytest.mark.parametrize("command", ["report", "ffmc", "pareto", "scores", "compare"])
def test_parameters_the_arguments_give_are_refused_as_p(tmp_path, capsys, command):
    """Every notebook parameter the command's own arguments give (the inputs, the report's
    folder, the user measure modules) is refused as ``-p``, saying how to give it."""
    from audit.cli import _ARGUMENT_PARAMETERS, SET_BY_ARGUMENTS
    from audit.report.runner import NOTEBOOKS, declared_parameters

    notebooks = {"report": ["ffmc", "pareto"], "compare": ["compare"]}.get(command, [command])
    given = {p for n in notebooks for p in declared_parameters(n) if p in _ARGUMENT_PARAMETERS}
    assert given == GIVEN_BY_ARGUMENTS[command] and set(notebooks) <= set(NOTEBOOKS)
    data = ["annex15", "frvt11"] if command == "compare" else []
    for parameter in sorted(given):
        argv = [command, *data, "-p", parameter, "x", "--reports-dir", str(tmp_path / "r")]
        assert main(argv) == 2
        how = _ARGUMENT_PARAMETERS[parameter].format(command=command)
        expected = SET_BY_ARGUMENTS.format(key=parameter, how=how)
        assert capsys.readouterr().err.endswith(f"audit {command}: error: {expected}\n")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    "command, parameter",
    [("scores", "data_path"), ("report", "scores_path"), ("report", "data_paths")]
    + [("pareto", "accuracy_sources"), ("ffmc", "data_labels"), ("scores", "data_paths")],
)
def test_what_another_commands_arguments_give_is_refused_as_not_taken(
    tmp_path, capsys, command, parameter
):
    """A ``-p`` of what another command's arguments give is refused as a parameter this
    command's notebooks do not take, by its name: not told how to give it here (audit
    scores has no rates table), nor its value checked first."""
    from audit.report.runner import UNKNOWN_PARAMETER, declared_parameters

    notebooks = {"report": ["ffmc", "pareto"]}.get(command, [command])
    declared = {n: declared_parameters(n) for n in notebooks}
    assert not any(parameter in d for d in declared.values())
    argv = [command, "-p", parameter, "x", "--reports-dir", str(tmp_path / "r")]
    assert main(argv) == 2
    known = sorted(set().union(*declared.values()))
    expected = UNKNOWN_PARAMETER.format(key=parameter, notebooks=notebooks, known=known)
    assert capsys.readouterr().err.endswith(f"audit {command}: error: {expected}\n")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("parameter", "value"),
    [("data_path", "x"), ("n_replicates", "abc"), ("accuracy_column", "y"), ("alpah", "1")],
)
def test_a_streamed_scores_report_refuses_what_its_notebook_does_not_take(
    tmp_path, capsys, parameter, value
):
    """A streamed scores report runs no notebook, yet refuses a -p its notebook does not
    declare as one that runs it does, by its name, before its value is read or used
    (n_replicates abc and data_path x were taken without a word)."""
    from conftest import synthetic

    from audit.report.runner import UNKNOWN_PARAMETER, declared_parameters

    folder = tmp_path / "run"
    folder.mkdir()
    for i in range(2):
        synthetic(500, seed=i).to_parquet(folder / f"part-{i}.parquet")
    argv = ["scores", str(folder), "-p", parameter, value, "--reports-dir", str(tmp_path / "r")]
    assert main(argv) == 2
    known = sorted(declared_parameters("scores"))
    expected = UNKNOWN_PARAMETER.format(key=parameter, notebooks=["scores"], known=known)
    assert capsys.readouterr().err.endswith(f"audit scores: error: {expected}\n")
    assert not (tmp_path / "r").exists()


def test_every_notebook_parameter_is_declared():
    from audit.report.runner import NOTEBOOKS, declared_parameters

    for notebook in NOTEBOOKS:
        missing = [p for p in declared_parameters(notebook) if p not in validation.PARAMETERS]
        assert missing == [], f"{notebook} takes {missing} without a declaration"


@pytest.mark.parametrize(("notebook", "parameter", "text"), list(notebook_cases()))
def test_every_notebook_parameter_is_refused_by_the_command_line(
    tmp_path, capsys, notebook, parameter, text
):
    command = {
        "ffmc": "ffmc", "pareto": "pareto", "scores": "scores", "crossgroup": "report",
        "compare": "compare",
    }[notebook]  # fmt: skip
    constraint = validation.constraint_of(parameter)
    data = ["annex15", "frvt11"] if command == "compare" else []
    argv = [command, *data, "-p", parameter, text, "--reports-dir", str(tmp_path / "r")]
    assert main(argv) == 2
    expected = refusal(parameter, constraint, constraint.parse(text))
    assert capsys.readouterr().err.endswith(f"audit {command}: error: {expected}\n")


def test_an_iterator_given_is_read_once_and_used_whole(annex15):
    """Measures given as a generator were used up by their check: evaluate_many then
    computed none and failed inside pandas ("No objects to concatenate")."""
    import audit

    names = ["garbe", "fdr"]
    given = audit.evaluate_many(annex15, (name for name in names))
    pd.testing.assert_frame_equal(given, audit.evaluate_many(annex15, names))
    assert validation.check("measures", iter(names)) == names
    with pytest.raises(ParameterError, match="distinct measures"):
        audit.evaluate_many(annex15, iter(["garbe", "garbe"]))


def test_a_refused_value_is_written_short_whatever_its_size(annex15_file):
    """A table given as a dict or an array was written whole into the refusal: 177,000
    characters for a score file's columns.  A value is written in at most 200 characters;
    a Series and a large array by their size; NumPy numbers as numbers."""
    import numpy as np

    import audit

    raw = pd.read_csv(annex15_file)
    for given, said in [
        (raw.to_dict("list"), "... (26602 characters)"),
        (raw.to_numpy(), "a NumPy array of shape (126, 17) (object)"),
        (raw["Algorithm"], "a pandas Series of 126 values"),
    ]:
        with pytest.raises(ParameterError) as refused:
            audit.sweep(given)
        assert said in str(refused.value) and len(str(refused.value)) < 600
    assert validation._shown([np.float64(2.0)]) == [2.0]


def test_a_score_table_with_a_missing_score_or_a_text_mated_column_is_refused():
    """A score table with a missing score (counted as a false match: FMR 0.074 for a
    target of 0.01), or with mated written as text ('no' read as True, every comparison
    then mated), gave wrong rates without a word."""
    import numpy as np

    import audit

    scores = audit.read_scores(
        pd.DataFrame(
            {"score": np.linspace(0, 1, 8), "mated": [True, True, False, False] * 2}
            | {"group": ["F", "M"] * 4, "algorithm": "a"}
        )
    )
    assert len(audit.sweep(scores, targets=[0.5]))
    for bad in (
        scores.assign(score=scores["score"].where(scores.index != 3)),
        scores.assign(mated=scores["mated"].map({True: "yes", False: "no"})),
    ):
        with pytest.raises(ParameterError, match="^parameter scores: expected a score table"):
            audit.sweep(bad, targets=[0.5])


def test_a_warning_names_the_line_that_called_audit():
    """A warning of a public function is shown at the caller's line (a script's, a
    notebook cell's), whatever depth inside audit raised it: each of these was shown at
    ``audit/validation.py:1292``, the argument checks every public function runs
    through."""
    import sys
    import warnings

    from conftest import synthetic

    from audit.exceptions import UndefinedMeasureWarning
    from audit.measures.registry import evaluate
    from audit.scores import read_scores, sweep
    from audit.tables.rates import read_rates
    from audit.tables.scores import ScoresWarning

    zeros = pd.DataFrame({"algorithm": ["a", "a"], "group": ["F", "M"], "fmr": [0.0, 0.0]})
    here = sys._getframe().f_lineno
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scores = read_scores(synthetic(200))  # here + 3: rates on few comparisons
        sweep(scores, [0.01])  # here + 4: no warning of its own
        evaluate(read_rates(zeros), "ir")  # here + 5: IR undefined where the minimum FMR is 0
    seen = {(w.category, w.filename, w.lineno) for w in caught}
    assert seen == {
        (ScoresWarning, __file__, here + 3),
        (UndefinedMeasureWarning, __file__, here + 5),
    }


@pytest.mark.parametrize(
    ("argv", "parameter", "text", "fault"),
    [
        (["pareto", "--alpha"], "alpha", "1e-400", validation.TOO_SMALL_FOR_FLOAT),
        (["scores", "--target-fmr"], "target_fmr", "0.0001e-330", validation.TOO_SMALL_FOR_FLOAT),
        (["ffmc", "-p", "alpha_step"], "alpha_step", "1E-999", validation.TOO_SMALL_FOR_FLOAT),
        (["check", "--count-tolerance"], "count_tolerance", "1e309", validation.TOO_LARGE_FOR_FLOAT),
        (["check", "--count-tolerance"], "count_tolerance", "9" * 400, validation.TOO_LARGE_FOR_FLOAT),
        (["pareto", "--max-accuracy"], "max_accuracy", "1" + "0" * 400, validation.TOO_LARGE_FOR_FLOAT),
    ],
)  # fmt: skip
def test_a_number_no_float_holds_is_refused_saying_so(
    tmp_path, capsys, argv, parameter, text, fault
):
    """``--alpha 1e-400`` ran the report at alpha 0 (read as 0.0 without a word), and a
    whole number of 400 digits for a number was an internal error (OverflowError)."""
    table = tmp_path / "rates.csv"
    table.write_text("algorithm,group,fmr,fnmr\na,F,0.001,0.01\na,M,0.002,0.02\n")
    data = [] if argv[0] == "scores" else [str(table)]
    status = main([argv[0], *data, *argv[1:], text, "--reports-dir", str(tmp_path / "r")]
                  if argv[0] != "check" else [argv[0], *data, *argv[1:], text])  # fmt: skip
    err = capsys.readouterr().err
    assert status == 2, err
    named = argv[1] if argv[1] != "-p" else f"parameter {parameter}"  # as the user typed it
    assert f"error: {named}: expected " in err and err.rstrip().endswith(f": {fault}")
    assert not (tmp_path / "r").exists()
    with pytest.raises(ParameterError) as refused:
        validation.parse(parameter, text)
    assert str(refused.value).endswith(f": {fault}")
    # a number a float holds, in the same notation, is read as it is
    for held in ("1e-300", "0e-400", "0.0"):
        assert validation._json(held) == float(held)
