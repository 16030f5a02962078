"""One declaration of each public parameter's constraint, shared by the Python API, the
command line and the notebooks' first cell.

A parameter's constraint -- its type, interval or choices -- is declared once,
in :data:`PARAMETERS`, with the sentence of help the command line and
``papermill --help-notebook`` show.  Three places read it:

* public functions, through :func:`validate_params` (the model is
  scikit-learn's ``validate_params`` with ``Interval`` and ``StrOptions``);
* the command line, which parses an option's text with :meth:`Constraint.parse`
  and checks it with :func:`check` before any work starts;
* each notebook's first cell after its parameters, :func:`check_notebook_parameters`,
  so that ``papermill -p alpha abc`` stops at once, naming ``alpha``.

Every refusal is a :class:`~audit.exceptions.ParameterError` with one message
format, :data:`REFUSED`::

    parameter alpha: expected a number in [0, 1], got 1.5

followed, where a constraint can say more than what it expects (:meth:`Constraint.fault`),
by what is wrong with the value (:data:`FAULT`): ``..., got ['garbe', 'fdr', 'garbe']:
'garbe' is named twice``.

The data a public function reads is declared the same way: a rates table
(:data:`RATES_TABLE`), a score table (:data:`SCORES`), a reader's source
(:data:`SOURCE`).  A DataFrame no reader gave -- a published file read by
``pandas.read_csv`` -- is refused by name, saying which reader reads it.

A function checked here trusts its arguments: the kernels below it do not
check them again.
"""

from __future__ import annotations

import functools
import inspect
import json
import math
import numbers
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from audit.exceptions import ParameterError

#: Whether a report copies its input (:func:`audit.report.runner.run_report`): unless the
#: input is a built-in dataset whose licence forbids redistribution, always, never.
INPUT_COPIES = ("auto", "always", "never")
#: The one message of a refused parameter value.
REFUSED = "parameter {name}: expected {expected}, got {value!r}"
#: What is wrong with the value, after :data:`REFUSED`, where the constraint says it.
FAULT = "{refused}: {fault}"
#: Why a number written as text, or a whole number, is refused where a floating-point
#: number cannot hold it: ``1e400`` read as inf, ``1e-400`` as 0, ``10**400`` not at all.
TOO_LARGE_FOR_FLOAT = "a floating-point number holds at most 1.8e+308"
TOO_SMALL_FOR_FLOAT = (
    "a floating-point number holds no number but 0 nearer to 0 than 4.9e-324, and would "
    "read it as 0"
)
#: A notebook parameter that no declaration covers (a test keeps this from happening).
UNDECLARED = "parameter {name} is not declared in audit.validation.PARAMETERS"


def _numpy():
    """NumPy if something has imported it (a NumPy value cannot exist otherwise): the
    command line checks its options without paying for the import."""
    return sys.modules.get("numpy")


def _is_bool(value) -> bool:
    np = _numpy()
    return isinstance(value, bool) or (np is not None and isinstance(value, np.bool_))


def _float_array(value, *, at_least_1d: bool = False):
    """``value`` as a float64 array, or None when it is not numbers (a string, a
    mapping, None, a bool, or what numpy cannot read as floats)."""
    if isinstance(value, (str, bytes, Mapping)) or value is None or _is_bool(value):
        return None
    import numpy as np

    try:
        a = np.asarray(value, dtype="float64")
    except (TypeError, ValueError):
        return None
    return np.atleast_1d(a) if at_least_1d else a


def _items(value) -> list | None:
    """The items of a sequence, or None when ``value`` is a string, a mapping or not
    iterable."""
    if isinstance(value, (str, bytes, Mapping)):
        return None
    try:
        return list(value)
    except TypeError:
        return None


def _names_fault(names: list, known: Callable[[str], bool], unique: bool = True) -> str | None:
    """What is wrong with a list of names (:meth:`Constraint.fault`): those not
    ``known``, else (where names must be ``unique``) those given more than once; None
    where neither.

    >>> _names_fault(["garbe", "gabre", "FDR"], {"garbe", "fdr"}.__contains__)
    "'gabre' and 'FDR' are not among them"
    >>> _names_fault(["fdr", "ir", "fdr", "ir", "ir"], {"ir", "fdr"}.__contains__)
    "'fdr' is named twice and 'ir' three times"
    >>> _names_fault(["my rate", "my rate"], lambda name: True)
    "'my rate' is named twice"
    >>> _names_fault(["my rate", "my rate"], lambda name: True, unique=False) is None
    True
    """
    if not all(isinstance(n, str) for n in names):
        return None
    unknown = list(dict.fromkeys(n for n in names if not known(n)))
    if unknown:  # each written as a refused value is (escaped, a long one cut)
        listed = " and ".join(repr(_shown(n)) for n in unknown)
        return f"{listed} {'is' if len(unknown) == 1 else 'are'} not among them"
    repeated = [(n, k) for n, k in Counter(names).items() if k > 1] if unique else []
    if not repeated:
        return None
    times = {2: "twice", 3: "three times"}
    said = [
        f"{_shown(n)!r}{' is named' * (i == 0)} {times.get(k, f'{k} times')}"
        for i, (n, k) in enumerate(repeated)
    ]
    return " and ".join(said)


#: The longest a value is written in a refusal (a table given whole would print whole).
SHOWN_AT_MOST = 200


def _shown(value):
    """A value as the message shows it: a NumPy number as the Python number it holds
    (in a list too), a DataFrame by its columns, a Series or an array by its size, and
    anything longer than :data:`SHOWN_AT_MOST` characters cut there."""
    np = _numpy()
    if np is not None and isinstance(value, np.generic):
        return value.item()
    if isinstance(value, list) and np is not None:
        value = [v.item() if isinstance(v, np.generic) else v for v in value]
    pandas = sys.modules.get("pandas")
    if pandas is not None and isinstance(value, pandas.DataFrame):
        return _FrameShown(list(value.columns))
    if pandas is not None and isinstance(value, pandas.Series):
        return _Said(f"a pandas Series of {len(value)} values ({value.dtype})")
    if np is not None and isinstance(value, np.ndarray):
        if value.size > 8:
            return _Said(f"a NumPy array of shape {value.shape} ({value.dtype})")
        return value.tolist()
    text = repr(value)
    if len(text) > SHOWN_AT_MOST:
        return _Said(f"{text[: SHOWN_AT_MOST - 50]}... ({len(text)} characters)")
    return value


class _Said(str):
    """A value as a refusal writes it, in words (``repr`` is the text itself)."""

    def __repr__(self) -> str:
        return str(self)


class _FrameShown(_Said):
    """A DataFrame as a refusal names it: by its columns (the first eight), not its rows.

    >>> _FrameShown(["Algorithm", "FMR.F"])
    a DataFrame with columns ['Algorithm', 'FMR.F']
    """

    SHOWN = 8

    def __new__(cls, columns: list):
        more = len(columns) - cls.SHOWN
        text = repr([str(c) for c in columns[: cls.SHOWN]])
        if more > 0:
            text = text[:-1] + f", ... ({more} more)]"
        return super().__new__(cls, f"a DataFrame with columns {text}")


def refuse(name: str, value, expected: str, fault: str | None = None) -> ParameterError:
    """The :class:`ParameterError` for ``value`` of parameter ``name``; ``fault``: what is
    wrong with it, where more can be said than what is expected.

    >>> str(refuse("alpha", 1.5, "a number in [0, 1]"))
    'parameter alpha: expected a number in [0, 1], got 1.5'
    """
    refused = REFUSED.format(name=name, expected=expected, value=_shown(value))
    fault = _unheld(value) if fault is None else fault
    return ParameterError(refused if fault is None else FAULT.format(refused=refused, fault=fault))


class Constraint:
    """What a parameter's value must be.

    ``accepts(value)`` says whether a value is legal, ``convert(value)`` gives
    its normal form (a float for a number, a list for names), ``parse(text)``
    reads it from a command line or a papermill ``-p`` string, ``expected`` says
    in words what is legal and ``invalid()`` gives values that are not (for the
    generic test).
    """

    expected = "a value"

    def accepts(self, value) -> bool:  # pragma: no cover - every kind overrides it
        raise NotImplementedError

    def convert(self, value):
        return value

    def parse(self, text: str):
        """The value a command-line text stands for (not yet checked)."""
        return text

    def fault(self, value) -> str | None:
        """What is wrong with a value it refuses, where that says more than
        :attr:`expected` (a long list of legal names, say); None otherwise."""
        return None

    def invalid(self) -> list:
        return []


def _is_number(value) -> bool:
    """A real number a float holds (a whole number past 1.8e308 is not one: ``10**400``
    as a float raises OverflowError)."""
    if isinstance(value, numbers.Integral) and not _is_bool(value):
        return abs(value) <= sys.float_info.max
    return isinstance(value, numbers.Real) and not _is_bool(value)


#: A number as JSON writes it: its digits before the exponent, and the exponent.
_JSON_NUMBER = re.compile(r"(-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?)(?:[eE][+-]?[0-9]+)?")


def _unheld(value) -> str | None:
    """Why a float cannot hold the number ``value`` writes (as text, or a whole number);
    None where it can, or ``value`` is no number.

    >>> _unheld("1e400") == TOO_LARGE_FOR_FLOAT, _unheld("-1e-400") == TOO_SMALL_FOR_FLOAT
    (True, True)
    >>> _unheld("0e-400"), _unheld("1e-300"), _unheld(10**308), _unheld("garbe")
    (None, None, None, None)
    """
    if isinstance(value, numbers.Integral) and not _is_bool(value):
        return None if _is_number(value) else TOO_LARGE_FOR_FLOAT
    written = _JSON_NUMBER.fullmatch(value.strip()) if isinstance(value, str) else None
    if written is None:
        return None
    number = float(written.group(0))
    if math.isinf(number):
        return TOO_LARGE_FOR_FLOAT
    if number == 0 and written.group(1).strip("-0.") != "":
        return TOO_SMALL_FOR_FLOAT
    return None


def _json(text: str):
    """``text`` read as JSON when it parses (numbers, lists, true/false/null), else as is.

    NaN and the infinities are not JSON and stay text, and so does a number no float
    holds (``1e400``, ``1e-400``: not read as inf and 0 without a word).
    """

    def no_constant(name):
        raise ValueError(name)

    def held(literal: str) -> float:
        if _unheld(literal) is not None:
            raise ValueError(literal)
        return float(literal)

    try:
        return json.loads(text, parse_constant=no_constant, parse_float=held)
    except ValueError:
        return text


def _interval(low, high, closed: str) -> str:
    left = "[" if closed in ("both", "left") else "("
    right = "]" if closed in ("both", "right") else ")"
    low_text = "-inf" if low is None else f"{low:g}"
    high_text = "inf" if high is None else f"{high:g}"
    return f"{left}{low_text}, {high_text}{right}"


#: How Python writes the values that are not finite (``float()`` reads each).
_NON_FINITE = ("inf", "infinity", "nan")


@dataclass(frozen=True)
class Real(Constraint):
    """A real number in an interval; ``closed`` says which ends belong to it.  With
    ``finite=False`` the infinities and NaN are legal too (where they mean something,
    such as "no check" or the value to fill in)."""

    low: float | None = None
    high: float | None = None
    closed: str = "both"
    finite: bool = True

    @property
    def expected(self) -> str:
        if not self.finite:
            return "a number" if self.low is None else f"a number of at least {self.low:g} or inf"
        if self.high is None and self.low == 0:
            return (
                "a positive number"
                if self.closed in ("right", "neither")
                else ("a number of at least 0")
            )
        if self.low is None and self.high is None:
            return "a finite number"
        return f"a number in {_interval(self.low, self.high, self.closed)}"

    def accepts(self, value) -> bool:
        if not _is_number(value):
            return False
        if math.isnan(value):  # a fill value may be NaN; a bound cannot compare with it
            return not self.finite and self.low is None and self.high is None
        if math.isinf(value):
            return not self.finite and not (self.low is not None and value < self.low)
        if self.low is not None:
            if value < self.low or (value == self.low and self.closed in ("right", "neither")):
                return False
        if self.high is not None:
            if value > self.high or (value == self.high and self.closed in ("left", "neither")):
                return False
        return True

    def convert(self, value):
        return float(value) + 0.0  # -0 is 0, and is shown so (not "-0")

    def parse(self, text: str):
        """The number ``text`` writes; where the infinities and NaN are legal, also as
        Python writes them (``inf``, ``-inf``, ``infinity``, ``nan``, any case), which JSON
        cannot.

        >>> Real(0, finite=False).parse("Inf"), Real(0, finite=False).parse("-infinity")
        (inf, -inf)
        >>> Real(0).parse("inf")
        'inf'
        """
        value = _json(text.strip())
        if not self.finite and not _is_number(value):
            spelled = text.strip().lower().lstrip("+")
            if spelled in _NON_FINITE or (spelled[:1] == "-" and spelled[1:] in _NON_FINITE):
                return float(spelled)
        return value if _is_number(value) else text

    def invalid(self) -> list:
        bad = ["0.5"] + ([math.nan] if self.finite else [])
        if self.low is not None:
            bad.append(self.low - 1)
        if self.high is not None:
            bad.append(self.high + 1)
        return bad


@dataclass(frozen=True)
class Integer(Constraint):
    """A whole number (not a bool, not a float) of at least ``low`` (and at most ``high``)."""

    low: int | None = None
    high: int | None = None

    @property
    def expected(self) -> str:
        if self.high is None:
            return (
                "a whole number" if self.low is None else f"a whole number of at least {self.low}"
            )
        return f"a whole number in [{self.low}, {self.high}]"

    def accepts(self, value) -> bool:
        if not isinstance(value, numbers.Integral) or _is_bool(value):
            return False
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)

    def convert(self, value):
        return int(value)

    def parse(self, text: str):
        value = _json(text.strip())
        return value if isinstance(value, int) and not isinstance(value, bool) else text

    def invalid(self) -> list:
        bad = [1.5, "3", True]
        if self.low is not None:
            bad.append(self.low - 1)
        if self.high is not None:
            bad.append(self.high + 1)
        return bad


#: The words a boolean command-line value may be (any case).
BOOLEANS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


@dataclass(frozen=True)
class Boolean(Constraint):
    """True or False."""

    expected = "true or false"

    def accepts(self, value) -> bool:
        return _is_bool(value)

    def convert(self, value):
        return bool(value)

    def parse(self, text: str):
        return BOOLEANS.get(text.strip().lower(), text)

    def invalid(self) -> list:
        return ["yes", 1, None]


@dataclass(frozen=True)
class Options(Constraint):
    """One of a few strings; ``choices`` may be a callable (e.g. the registered measures)."""

    choices: tuple | Callable[[], Sequence[str]]

    def names(self) -> tuple:
        return tuple(self.choices() if callable(self.choices) else self.choices)

    @property
    def expected(self) -> str:
        return "one of " + ", ".join(repr(c) for c in self.names())

    def accepts(self, value) -> bool:
        return isinstance(value, str) and value in self.names()

    def invalid(self) -> list:
        return ["no-such-choice", 1]


@dataclass(frozen=True)
class Text(Constraint):
    """A string (not empty unless ``empty``)."""

    empty: bool = False

    @property
    def expected(self) -> str:
        return "a string" if self.empty else "a non-empty string"

    def accepts(self, value) -> bool:
        return isinstance(value, str) and (self.empty or value != "")

    def invalid(self) -> list:
        return [1] if self.empty else ["", 1]


@dataclass(frozen=True)
class PathLike(Constraint):
    """A path: a string or an :class:`os.PathLike`, not empty."""

    expected = "a path"

    def accepts(self, value) -> bool:
        return isinstance(value, (str, os.PathLike)) and str(value) != ""

    def invalid(self) -> list:
        return ["", 5]


@dataclass(frozen=True)
class Names(Constraint):
    """A list of names, each one of ``of``'s choices when given.  A single string is the
    names it lists, split at commas: ``measures="garbe"`` is ``["garbe"]`` (not five
    letters), ``attributes="gender,race"`` is ``["gender", "race"]``."""

    of: Options | None = None
    empty: bool = False
    at_least: int = 1
    #: whether a name may be given twice (``unique``: refused, as ``"garbe,garbe"``)
    unique: bool = False

    @property
    def expected(self) -> str:
        what = "a list of names" if self.of is None else f"a list of names, each {self.of.expected}"
        if self.unique:
            what = what.replace("a list of names", "a list of distinct names")
        if self.at_least > 1:
            return what.replace("a list of ", f"a list of at least {self.at_least} ")
        return what if self.empty else what.replace("a list", "a non-empty list")

    @staticmethod
    def _split(text: str) -> list[str]:
        """The names of ``text``; an empty one between commas is kept, to be refused
        (``"fdr,,ir"`` is not read as two names without a word)."""
        return [part.strip() for part in text.split(",")] if text.strip() else []

    def accepts(self, value) -> bool:
        if isinstance(value, str):
            value = self._split(value)
        if not isinstance(value, (list, tuple)) or (not value and not self.empty):
            return False
        if self.at_least > 1 and len(value) < self.at_least:
            return False
        if not all(isinstance(v, str) and v != "" for v in value):
            return False
        if self.unique and len(set(value)) < len(value):
            return False
        return self.of is None or all(self.of.accepts(v) for v in value)

    def convert(self, value):
        return self._split(value) if isinstance(value, str) else list(value)

    def fault(self, value) -> str | None:
        """An empty name, else those not among the choices, else (for ``unique`` names)
        those given more than once: not two of three names required, where a name may
        repeat.

        >>> Names(of=Options(("a", "b")), unique=True).fault(["a", "a"])
        "'a' is named twice"
        >>> Names(of=Options(("a", "b")), at_least=3).fault(["a", "a"]) is None
        True
        """
        if isinstance(value, str):
            value = self._split(value)
        if not isinstance(value, (list, tuple)) or not value:
            return None
        if "" in value:
            return "a name is empty"
        known = self.of.accepts if self.of is not None else (lambda name: True)
        return _names_fault(list(value), known, unique=self.unique)

    def parse(self, text: str):
        value = _json(text.strip())
        if isinstance(value, list):
            return value
        return self._split(text)

    def invalid(self) -> list:
        bad = [5, [1, 2]] + ([["no-such-name"]] if self.of is not None else [])
        bad += [["garbe", "garbe"]] if self.unique else []
        return bad + ([["only-one"]] if self.at_least > 1 else [])


@dataclass(frozen=True)
class Alphas(Constraint):
    """A weight of the FMR term in [0, 1]: a number, or a 1-D array of them."""

    expected = "a number in [0, 1] (or a 1-D array of them)"

    def accepts(self, value) -> bool:
        if _is_number(value):
            return 0.0 <= value <= 1.0
        if isinstance(value, (str, bytes, Mapping)) or value is None:
            return False
        try:
            import numpy as np

            a = np.asarray(value, dtype="float64")
        except (TypeError, ValueError):
            return False
        return a.ndim <= 2 and a.size > 0 and bool(((a >= 0.0) & (a <= 1.0)).all())

    def convert(self, value):
        import numpy as np

        a = np.asarray(value, dtype="float64") + 0.0  # -0 is 0, and is shown so
        return float(a) if a.ndim == 0 else a

    def parse(self, text: str):
        return Real(0, 1).parse(text)

    def invalid(self) -> list:
        return [1.5, -0.1, math.nan, "0.5", [[[0.5]]]]


@dataclass(frozen=True)
class AnyOf(Constraint):
    """A value legal under any of ``constraints`` (``None`` stands for the value None)."""

    constraints: tuple

    @property
    def expected(self) -> str:
        words = ["none" if c is None else c.expected for c in self.constraints]
        return " or ".join(words)

    def _first(self, value):
        for c in self.constraints:
            if (c is None and value is None) or (c is not None and c.accepts(value)):
                return c
        return False

    def accepts(self, value) -> bool:
        return self._first(value) is not False

    def convert(self, value):
        c = self._first(value)
        return None if c is None else c.convert(value)

    def fault(self, value) -> str | None:
        faults = (c.fault(value) for c in self.constraints if c is not None)
        return next((f for f in faults if f is not None), None)

    def parse(self, text: str):
        """The value of the first constraint that reads ``text`` as one it accepts; else,
        where ``text`` is a JSON list or object, what it holds (``"[]"``: an empty list,
        to be refused as one, not taken as a name ``"[]"``); else ``text``."""
        if None in self.constraints and text.strip().lower() in ("none", "null"):
            return None
        for c in self.constraints:
            if c is not None:
                value = c.parse(text)
                if c.accepts(value):
                    return value
        value = _json(text.strip())
        return value if isinstance(value, (list, dict)) else text

    def invalid(self) -> list:
        seen = []
        for c in self.constraints:
            for v in [] if c is None else c.invalid():
                if not self.accepts(v) and v not in seen:
                    seen.append(v)
        return seen


def optional(constraint: Constraint) -> AnyOf:
    """``constraint`` or None."""
    return AnyOf((constraint, None))


def _measure_names() -> tuple:
    from audit.measures.registry import measure_names

    return tuple(measure_names())


@dataclass(frozen=True)
class Mapping_(Constraint):
    """A mapping of strings to strings (our column name to the table's)."""

    expected = "a mapping of names to names"

    def accepts(self, value) -> bool:
        return isinstance(value, Mapping) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        )

    def convert(self, value):
        return dict(value)

    def invalid(self) -> list:
        return [{"a": 1}]


@dataclass(frozen=True)
class Mapping_Any(Constraint):
    """A mapping (of names to counts, say)."""

    expected = "a mapping"

    def accepts(self, value) -> bool:
        return isinstance(value, Mapping)

    def invalid(self) -> list:
        return [5]


@dataclass(frozen=True)
class Groupings(Constraint):
    """A non-empty list of groupings, each a non-empty list of attribute names."""

    expected = "a non-empty list of lists of attribute names"

    def accepts(self, value) -> bool:
        return (
            isinstance(value, (list, tuple))
            and len(value) > 0
            and all(isinstance(g, (list, tuple)) and Names(unique=True).accepts(g) for g in value)
            and len({tuple(g) for g in value}) == len(value)
        )

    def fault(self, value) -> str | None:
        """An attribute named twice in a grouping, else a grouping given twice.

        >>> Groupings().fault([["gender", "gender"]])
        "'gender' is named twice"
        >>> Groupings().fault([["gender"], ["nationality"], ["gender"]])
        "the grouping ['gender'] is given twice"
        """
        if not isinstance(value, (list, tuple)):
            return None
        groupings = [list(g) for g in value if isinstance(g, (list, tuple))]
        for grouping in groupings:
            if (fault := Names(unique=True).fault(grouping)) is not None:
                return fault
        twice = next((g for i, g in enumerate(groupings) if g in groupings[:i]), None)
        return None if twice is None else f"the grouping {twice} is given twice"

    def convert(self, value):
        return [list(g) for g in value]

    def parse(self, text: str):
        return _json(text.strip())

    def invalid(self) -> list:
        return ["gender", [], [["gender"], "nationality"], [["gender", "gender"]], [["a"], ["a"]]]


@dataclass(frozen=True)
class Encoding(Constraint):
    """The name of a text encoding Python knows (``utf-8``, ``utf-16``, ``cp1252``, ...)."""

    expected = "the name of a text encoding, such as 'utf-8', 'utf-16', 'latin-1' or 'cp1252'"

    def accepts(self, value) -> bool:
        import codecs

        if not isinstance(value, str) or not value:
            return False
        try:
            return codecs.lookup(value)._is_text_encoding
        except LookupError:
            return False

    def invalid(self) -> list:
        return ["klingon-8", "base64", 8]


@dataclass(frozen=True)
class PairList(Constraint):
    """Pairs of group labels, ``[("A", "B"), ...]`` (enrolment, probe)."""

    expected = "a list of (enrolment, probe) pairs of labels"

    def accepts(self, value) -> bool:
        items = _items(value)
        return bool(items) and all(
            isinstance(p, (tuple, list)) and len(p) == 2 and all(isinstance(x, str) for x in p)
            for p in items
        )

    def convert(self, value):
        return [tuple(p) for p in value]

    def invalid(self) -> list:
        return [[("A",)], 5]


@dataclass(frozen=True)
class Grid(Constraint):
    """Numbers, each within an interval (``(0, 1]`` for target FMRs, ``[0, 1]`` for
    alphas): a 1-D array, a list, or one number; strictly increasing when
    ``increasing`` (a grid), in any order otherwise (targets asked for)."""

    low: float = 0.0
    high: float = 1.0
    closed: str = "both"
    increasing: bool = True

    @property
    def expected(self) -> str:
        what = "increasing numbers" if self.increasing else "numbers"
        return f"{what} in {_interval(self.low, self.high, self.closed)}"

    def accepts(self, value) -> bool:
        import numpy as np

        a = _float_array(value, at_least_1d=True)
        if a is None or a.ndim != 1 or a.size == 0 or not np.isfinite(a).all():
            return False
        if self.increasing and (np.diff(a) <= 0).any():
            return False
        inside = Real(self.low, self.high, self.closed)
        return all(inside.accepts(float(v)) for v in (a.min(), a.max()))

    def convert(self, value):
        import numpy as np

        return np.atleast_1d(np.asarray(value, dtype="float64"))

    def invalid(self) -> list:
        return ([[0.5, 0.2]] if self.increasing else []) + [[], [self.high + 1], "0.5"]


@dataclass(frozen=True)
class Numbers(Constraint):
    """An array of numbers (NaN allowed: an undefined value), of at least one element."""

    expected = "an array of numbers"

    def accepts(self, value) -> bool:
        a = _float_array(value)
        return a is not None and a.ndim >= 1 and a.size > 0

    def invalid(self) -> list:
        return ["0.5", [], [["a"]]]


#: Target FMRs of a sweep or of thresholds asked for: each in (0, 1], in any order.
TARGETS = Grid(0.0, 1.0, "right", increasing=False)


@dataclass(frozen=True)
class Thresholds(Constraint):
    """Decision thresholds in the scores' own units: a finite number, a 1-D sequence
    of them, or a mapping of algorithm names to either."""

    expected = "a finite number, a 1-D sequence of them, or a mapping of algorithms to them"

    @staticmethod
    def _numbers(value) -> bool:
        import numpy as np

        a = _float_array(value, at_least_1d=True)
        return a is not None and a.ndim == 1 and a.size > 0 and bool(np.isfinite(a).all())

    def accepts(self, value) -> bool:
        if isinstance(value, Mapping):
            return bool(value) and all(
                isinstance(k, str) and self._numbers(v) for k, v in value.items()
            )
        return self._numbers(value)

    def invalid(self) -> list:
        return ["0.5", [], [float("nan")], {"a": "x"}]


@dataclass(frozen=True)
class Booleans(Constraint):
    """A non-empty sequence of True or False."""

    expected = "a non-empty sequence of true or false"

    def accepts(self, value) -> bool:
        items = _items(value)
        return bool(items) and all(_is_bool(v) for v in items)

    def invalid(self) -> list:
        return [[], ["yes"], True]


@dataclass(frozen=True)
class Instance(Constraint):
    """An object of a class, named by its module path (imported only when checked)."""

    path: str
    words: str

    @property
    def expected(self) -> str:
        return self.words

    def accepts(self, value) -> bool:
        import importlib

        module, _, name = self.path.rpartition(".")
        return isinstance(value, getattr(importlib.import_module(module), name))

    def invalid(self) -> list:
        return [5]


@dataclass(frozen=True)
class Sha256(Constraint):
    """A sha256 checksum: 64 hexadecimal digits."""

    expected = "a sha256 checksum (64 hexadecimal digits)"

    def accepts(self, value) -> bool:
        return isinstance(value, str) and re.fullmatch(r"[0-9a-fA-F]{64}", value) is not None

    def invalid(self) -> list:
        return ["abc", 5]


SERIES = Instance("pandas.Series", "a pandas Series of values indexed by algorithm")
FRAME = Instance("pandas.DataFrame", "a pandas DataFrame")
#: What a reader reads: a file's path (or a built-in dataset's name) or a DataFrame.
SOURCE = AnyOf((PathLike(), FRAME))


def _wide_rates_frame():
    """A DataFrame as a published rates file is laid out (``pandas.read_csv`` of one):
    not yet read into the validated table."""
    import pandas as pd

    return pd.DataFrame({"Algorithm": ["a"], "FMR.F": [1e-4], "FMR.M": [2e-4]})


@dataclass(frozen=True)
class RatesTable(Constraint):
    """The validated rates table every measure and analysis reads (``audit.read_rates``
    or ``audit.tables.read_data`` gives it): a DataFrame with columns ``algorithm``,
    ``group`` and ``fmr`` or ``fnmr``.  A published file read by ``pandas.read_csv``
    (``Algorithm``, ``FMR.F``, ...) is refused, saying which reader reads it."""

    expected = (
        "a rates table as audit.read_rates or audit.tables.read_data gives it "
        "(a DataFrame with columns algorithm, group, and fmr and/or fnmr)"
    )

    def accepts(self, value) -> bool:
        if not FRAME.accepts(value):
            return False
        columns = value.columns
        return (
            "algorithm" in columns
            and "group" in columns
            and ("fmr" in columns or "fnmr" in columns)
        )

    def invalid(self) -> list:
        return [5, {"algorithm": ["a"], "group": ["F"], "fmr": [1e-4]}, _wide_rates_frame()]


#: The columns of a score table as ``audit.read_scores`` gives it; the first three
#: categorical.
SCORE_TABLE_COLUMNS = ("algorithm", "group_1", "group_2", "score", "mated")


@dataclass(frozen=True)
class ScoreTable(Constraint):
    """A validated score table (``audit.read_scores`` gives it) or its sufficient
    statistics (``audit.scores.score_stats``, sorted once and shared)."""

    expected = (
        "a score table as audit.read_scores gives it (a DataFrame with columns score, "
        "a number in every row, mated, True or False, and algorithm, group_1 and group_2 "
        "categorical) or its statistics (audit.scores.score_stats)"
    )

    def accepts(self, value) -> bool:
        from audit.scores.stats import SufficientStatistics

        if isinstance(value, SufficientStatistics):
            return True
        if not FRAME.accepts(value) or not value.columns.is_unique:
            return False
        if not all(c in value.columns for c in SCORE_TABLE_COLUMNS):
            return False
        import numpy as np
        import pandas as pd

        if not all(
            isinstance(value[c].dtype, pd.CategoricalDtype) for c in SCORE_TABLE_COLUMNS[:3]
        ):
            return False
        # a text or missing value read as a boolean, a missing score counted as an error
        score = value["score"]
        return (
            pd.api.types.is_bool_dtype(value["mated"].dtype)
            and pd.api.types.is_float_dtype(score.dtype)
            and not np.isnan(score.to_numpy()).any()
        )

    def invalid(self) -> list:
        import pandas as pd

        hand_made = pd.DataFrame(
            {
                "algorithm": ["a"],
                "group_1": ["F"],
                "group_2": ["F"],
                "score": [0.9],
                "mated": [True],
            }
        )
        labels = hand_made.astype({c: "category" for c in SCORE_TABLE_COLUMNS[:3]})
        said = labels.assign(mated=["no"])  # text, where 'no' would read as True
        missing = labels.assign(score=[float("nan")])
        return [5, hand_made, _wide_rates_frame(), said, missing]


RATES_TABLE = RatesTable()
SCORES = ScoreTable()


@dataclass(frozen=True)
class Parameter:
    """A parameter's constraint and the sentence of help shown for it."""

    constraint: Constraint
    help: str
    type: str = field(default="")

    @property
    def type_name(self) -> str:
        """The type a notebook's parameters cell annotates it with, as ``papermill
        --help-notebook`` shows it (``float``, ``Optional[list]``, ...)."""
        if self.type:
            return self.type
        return _type_name(self.constraint)


def _type_name(constraint: Constraint) -> str:
    kinds = {
        Real: "float",
        Integer: "int",
        Boolean: "bool",
        Alphas: "float",
        Names: "list",
        Groupings: "list",
        Mapping_: "dict",
    }
    for cls, name in kinds.items():
        if isinstance(constraint, cls):
            return name
    if isinstance(constraint, AnyOf):
        parts = {_type_name(c) for c in constraint.constraints if c is not None}
        inner = parts.pop() if len(parts) == 1 else "object"
        return f"Optional[{inner}]" if None in constraint.constraints else inner
    return "str"


MEASURE = Options(_measure_names)


@dataclass(frozen=True)
class MeasureRef(Constraint):
    """A registered measure's name, or a measure object (a user's, unregistered)."""

    @property
    def expected(self) -> str:
        return "a registered measure's name or a measure object (" + MEASURE.expected + ")"

    def accepts(self, value) -> bool:
        from audit.measures.contract import MeasureSpec

        return isinstance(value, MeasureSpec) or MEASURE.accepts(value)

    def invalid(self) -> list:
        return ["no-such-measure", 5]


@dataclass(frozen=True)
class MeasureRefs(Constraint):
    """None (every measure that applies), one measure, or a non-empty list of distinct
    measures (a measure named twice would be computed, and reported, twice); one name
    given as a string means that one measure.  With ``empty``, an empty list too: no
    measure (the facts of a table's quality, which then affect none)."""

    empty: bool = False

    @property
    def expected(self) -> str:
        some = "a list" if self.empty else "a non-empty list"
        return f"none, a measure, or {some} of distinct measures (" + MEASURE.expected + ")"

    def accepts(self, value) -> bool:
        if value is None or MeasureRef().accepts(value):
            return True
        items = _items(value)
        if not items and self.empty and isinstance(value, (list, tuple)):
            return True
        if not items or not all(MeasureRef().accepts(v) for v in items):
            return False
        names = [getattr(v, "name", v) for v in items]
        return len(set(names)) == len(names)

    def convert(self, value):
        if value is None or MeasureRef().accepts(value):
            return value if value is None else [value]
        return list(value)

    def fault(self, value) -> str | None:
        """The names no measure goes by, else the measures named more than once.

        >>> MeasureRefs().fault(["garbe", "fdr", "garbe"])
        "'garbe' is named twice"
        """
        items = _items(value)
        if value is None or not items:
            return None
        names = [getattr(v, "name", v) for v in items]
        objects = {v.name for v in items if not isinstance(v, str) and hasattr(v, "name")}
        return _names_fault(names, lambda name: name in objects or MeasureRef().accepts(name))

    def invalid(self) -> list:
        return [
            5,
            *([] if self.empty else [[]]),
            ["garbe", "no-such-measure"],
            ["garbe", "fdr", "garbe"],
        ]


@dataclass(frozen=True)
class Function(Constraint):
    """A callable."""

    expected = "a function"

    def accepts(self, value) -> bool:
        return callable(value)

    def invalid(self) -> list:
        return [5, "f"]


@dataclass(frozen=True)
class Bounds(Constraint):
    """A measure's declared bounds: ``(low, high)``, each a number or None (unbounded)."""

    expected = "(low, high), each a number or None, low below high"

    def accepts(self, value) -> bool:
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            return False
        low, high = value
        if any(v is not None and not _is_number(v) for v in (low, high)):
            return False
        return low is None or high is None or low < high

    def convert(self, value):
        return tuple(value)

    def invalid(self) -> list:
        return [(1.0, 0.0), 5, ("a", 1)]


@dataclass(frozen=True)
class Flags(Constraint):
    """A mapping of names to True or False (a measure's declared properties)."""

    expected = "a mapping of property names to true or false"

    def accepts(self, value) -> bool:
        return isinstance(value, Mapping) and all(
            isinstance(k, str) and _is_bool(v) for k, v in value.items()
        )

    def convert(self, value):
        return dict(value)

    def invalid(self) -> list:
        return [{"bounded": "yes"}, ["bounded"]]


#: Every public parameter audit takes, declared once.
#: The named operating points of ``audit scores --operating-point NAME``: the pooled FMR
#: target each stands for.  ``nist``: one threshold per algorithm giving an overall FMR of
#: 3e-5, NIST's for its demographic summaries (NISTIR 8429;
#: :data:`audit.scores.thresholds.NIST_OPERATING_FMR`).
OPERATING_POINTS: dict[str, float] = {"nist": 3e-5}

#: The most replicates a report draws, and random draws per family in FFMC.2's search:
#: each replicate holds the rates of the whole table (a million of Annex 15's, 16 GB), and
#: a count past what memory can hold (``--replicates 1e12``) failed in a notebook.
_MOST_REPLICATES = 100_000
_MOST_DRAWS = 1_000_000

PARAMETERS: dict[str, Parameter] = {
    # the measures
    "alpha": Parameter(Alphas(), "weight of the FMR term, in [0, 1]", type="float"),
    "zero_division": Parameter(
        AnyOf((Options(("warn", "flag", "raise")), Real(finite=False))),
        "what an undefined measure gives: 'warn', 'flag', 'raise' or a number",
        type="object",
    ),
    "measure": Parameter(MEASURE, "a registered measure ('audit measures' lists them)"),
    "measures": Parameter(
        optional(Names(MEASURE, unique=True)),
        "measure names; None: every measure that applies",
    ),
    "measure_modules": Parameter(
        Names(empty=True), "dotted names of modules registering extra measures"
    ),
    # reading a rates table
    "data_path": Parameter(
        optional(PathLike()), "rates table or built-in dataset; None: the Annex 15 table"
    ),
    "units": Parameter(
        optional(Options(("fraction", "percent"))),
        "units of the rates: 'percent' divides them by 100; 'fraction' silences the "
        "implausible-rates warning",
    ),
    "columns": Parameter(
        optional(AnyOf((Text(), Mapping_()))),
        "the table's names for ours, e.g. algorithm=system,group=nationality",
        type="Optional[str]",
    ),
    "attributes": Parameter(
        optional(Names(empty=True, unique=True)),
        "attribute names making up a group, e.g. gender,race",
    ),
    "separator": Parameter(Text(), "separator between FMR/FNMR and the group in wide column names"),
    "pair_separator": Parameter(
        optional(Text()), "separator of the pair in a wide cross-group table, e.g. '|'"
    ),
    "pairs": Parameter(
        optional(AnyOf((Text(), PairList()))),
        "the pairs a cross-group table measures, e.g. 'A|A,B|B,A|B'",
        type="Optional[str]",
    ),
    "merge_labels": Parameter(
        Boolean(),
        "read labels that differ only by case, white space, an invisible character or "
        "Unicode normalisation as one (the first spelling), with a warning; default: refuse them",
    ),
    "fmr_above_fnmr": Parameter(
        Boolean(),
        "the FMRs are meant to exceed the FNMRs in most cells: no swapped-columns warning",
    ),
    "encoding": Parameter(optional(Encoding()), "text encoding of a CSV; None: UTF-8"),
    "count_tolerance": Parameter(
        optional(Real(0, finite=False)),
        "comparisons by which a rate times its count may miss a whole number of errors "
        "(None: within the rounding of the rate as written; inf: rates not checked "
        "against counts)",
    ),
    "rate_position": Parameter(
        Options(("prefix", "suffix")),
        "where wide column names put the rate: 'prefix' (FMR.<group>) or 'suffix' "
        "(<group><separator>FMR)",
    ),
    "ignore": Parameter(optional(Names()), "columns of the table to leave out, e.g. Dataset,Mean"),
    # several datasets compared (audit compare)
    "data_paths": Parameter(
        Names(at_least=2),
        "rates tables or built-in datasets to compare, e.g. annex15,frvt11",
    ),
    "data_labels": Parameter(
        optional(Names()),
        "a label for each dataset compared; None: a built-in dataset's name or the file's stem",
    ),
    "accuracy_sources": Parameter(
        optional(Mapping_()),
        "each dataset's accuracy from another table, by label: a file or a built-in dataset "
        "(frvt11-accuracy); None: its total FNMR (total FMR on an FMR-only table)",
    ),
    "accuracy_columns": Parameter(
        optional(Mapping_()),
        "the column of each of those tables, by label, e.g. {'frvt11': 'Mugshot, 1e-5'}",
    ),
    "rank_replicates": Parameter(
        Integer(0, _MOST_REPLICATES),
        "bootstrap replicates over algorithms of the rank agreements (0: none; an interval "
        "needs at least 40 at 95%; at most 100,000)",
    ),
    "shared_groups": Parameter(
        Boolean(),
        "compare a measure across two datasets on the groups both hold (true) or on each "
        "one's own groups (false)",
    ),
    "min_tau": Parameter(
        Real(-1, 1, closed="left"),
        "a ranking holds across two datasets when the lower end of Kendall's tau-b interval "
        "exceeds this",
    ),
    # the FFMC audit
    "alpha_grid": Parameter(
        optional(Grid(0.0, 1.0)), "increasing alphas in [0, 1]; None: 0 to 1 in steps of 0.01"
    ),
    "alpha_step": Parameter(
        Real(1e-4, 1), "step of the FFMC.1 alpha grid (at most 10,001 weights of the FMR term)"
    ),
    "seed": Parameter(Integer(0), "seed of the random draws"),
    "n_random": Parameter(
        Integer(1, _MOST_DRAWS), "random draws per family in FFMC.2's search (at most 1,000,000)"
    ),
    # uncertainty
    "uncertainty_method": Parameter(
        Options(("auto", "counts", "transcription", "none")),
        "how rates are redrawn: 'auto', 'counts' (binomial), 'transcription' (rounding) or 'none'",
    ),
    "n_replicates": Parameter(
        Integer(1, _MOST_REPLICATES), "replicates of the uncertainty analysis (at most 100,000)"
    ),
    "verdict_replicates": Parameter(
        Integer(1, _MOST_REPLICATES // 10),
        "replicates on which the whole FFMC audit is rerun (at most 10,000)",
    ),
    "floor_lower": Parameter(
        optional(Real(0, None, closed="neither")),
        "lowest value a floored FMR may take in the transcription redraw (None: its bin)",
    ),
    "level": Parameter(Real(0, 1, closed="neither"), "confidence level of the intervals"),
    "bootstrap_replicates": Parameter(
        Integer(0, _MOST_REPLICATES),
        "bootstrap replicates of the scores report (0: none; at most 100,000); only for scores "
        "read whole, not streamed (see --memory)",
    ),
    # the frontier
    "weights": Parameter(
        AnyOf((Options(("equal", "counts")), PathLike(), FRAME, Mapping_Any())),
        "group weights of total FMR/FNMR: 'equal', 'counts' or a counts CSV",
        type="str",
    ),
    "accuracy": Parameter(
        Options(("auto", "total_fnmr", "total_fmr")),
        "accuracy axis of the frontier: 'auto', 'total_fnmr' or 'total_fmr'",
    ),
    "undefined": Parameter(
        Options(("raise", "exclude", "keep")),
        "algorithms whose measure is undefined: 'raise', 'exclude' or 'keep' (the "
        "measure's documented convention)",
    ),
    "max_accuracy": Parameter(
        optional(Real(0, None, closed="neither")),
        "accuracy cut-off of the short list; None: no cut-off",
    ),
    "log_x": Parameter(
        Boolean(),
        "True: always a log accuracy axis; False: log when the accuracy spans more than a decade",
    ),
    "accuracy_from": Parameter(
        optional(PathLike()),
        "take the frontier's accuracy from another table, joined by algorithm name: a file "
        "or a built-in dataset (frvt11-accuracy)",
    ),
    "accuracy_column": Parameter(
        optional(Text()), "the column of that table, e.g. 'Mugshot, 1e-5' (lower is better)"
    ),
    # the report
    "input_copy": Parameter(
        Options(INPUT_COPIES),
        "copy the input into the report: 'auto' (unless a built-in dataset whose licence "
        "forbids redistribution: its source, commit and sha256 are recorded instead), "
        "'always' or 'never'",
    ),
    # scores
    "scores_path": Parameter(
        optional(PathLike()), "score table (CSV or Parquet); None: the VoxCeleb1-H scores"
    ),
    "higher_is_match": Parameter(Boolean(), "False for distance scores"),
    "target_fmr": Parameter(Real(0, 1, closed="right"), "operating point: the pooled FMR target"),
    "sweep_min": Parameter(Real(0, 1, closed="right"), "lowest target FMR of the sweep"),
    "sweep_max": Parameter(Real(0, 1, closed="right"), "highest target FMR of the sweep"),
    "sweep_points": Parameter(Integer(2, 10_000), "target FMRs in the sweep (at most 10,000)"),
    "sweep_plot_measures": Parameter(Names(MEASURE), "measures drawn along the sweep"),
    "groupings": Parameter(
        Groupings(),
        "attribute groupings of the VoxCeleb scores, e.g. [['gender'], ['nationality']]",
    ),
    # cross-group
    "heatmap_algorithms": Parameter(
        optional(Names()), "algorithms whose pair matrices are drawn; None: a choice"
    ),
    # every notebook
    "output_dir": Parameter(PathLike(), "where figures/ and tables/ go"),
}


def constraint_of(name: str) -> Constraint:
    """The declared constraint of parameter ``name``."""
    return PARAMETERS[name].constraint


def check(name: str, value, constraint: Constraint | None = None):
    """``value`` in its normal form if it meets ``constraint`` (by default the declared
    one of ``name``); else :class:`~audit.exceptions.ParameterError`.

    >>> check("alpha", 1)
    1.0
    >>> check("measures", "garbe")
    ['garbe']
    >>> check("n_replicates", -1)
    Traceback (most recent call last):
    ...
    audit.exceptions.ParameterError: parameter n_replicates: expected a whole number in [1, 100000], got -1
    """
    constraint = constraint_of(name) if constraint is None else constraint
    if isinstance(value, Iterator):  # read once, here: checking it would use it up
        value = list(value)
    if not constraint.accepts(value):
        raise refuse(name, value, constraint.expected, constraint.fault(value))
    return constraint.convert(value)


def parse(name: str, text: str, constraint: Constraint | None = None):
    """The value of parameter ``name`` written as ``text`` (a command-line option, a
    papermill ``-p`` value), checked: ``parse("alpha", "0.3")`` is 0.3."""
    constraint = constraint_of(name) if constraint is None else constraint
    return check(name, constraint.parse(text), constraint)


def validate_params(*names: str, **constraints: Constraint) -> Callable:
    """Check the arguments of a public function against their declared constraints.

    ``names`` are parameters declared in :data:`PARAMETERS`; ``constraints``
    declare a function's own.  Each argument given is checked (and put in its
    normal form) before the function runs; defaults are trusted.  The
    constraints are kept as ``function.__audit_parameters__`` for the generic
    test that feeds every public function a wrong value.
    """
    declared = {name: constraint_of(name) for name in names} | constraints

    def decorate(function: Callable) -> Callable:
        signature = inspect.signature(function)
        missing = sorted(set(declared) - set(signature.parameters))
        if missing:
            raise TypeError(f"{function.__qualname__} has no parameter(s) {missing}")

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            for name, constraint in declared.items():
                if name in bound.arguments:
                    bound.arguments[name] = check(name, bound.arguments[name], constraint)
            return function(*bound.args, **bound.kwargs)

        wrapper.__audit_parameters__ = declared  # type: ignore[attr-defined]
        return wrapper

    return decorate


def check_parameters(values: Mapping[str, Any]) -> dict:
    """Every value of ``values`` checked against its declaration; the normal forms.

    Names with no declaration are refused (:data:`UNDECLARED`): a parameter
    nobody declared would go unchecked.
    """
    checked = {}
    for name, value in values.items():
        if name not in PARAMETERS:
            raise TypeError(UNDECLARED.format(name=name))
        checked[name] = check(name, value)
    return checked


def check_notebook_parameters(namespace: Mapping[str, Any]) -> dict:
    """The notebook parameters found in ``namespace``, checked: their normal forms.

    A notebook's first cell after its parameters runs
    ``globals().update(check_notebook_parameters(globals()))``: every name of
    :data:`PARAMETERS` bound there (the parameters cell's, as papermill set
    them) is checked, so that a wrong ``papermill -p`` value stops at once,
    naming the parameter, and a single measure name given as a string becomes
    a one-name list.  (A test checks that every notebook parameter is declared.)  The
    user's measure modules are imported first, so that the measures they register are
    names the other parameters may use.
    """
    given = {name: namespace[name] for name in PARAMETERS if name in namespace}
    if "measure_modules" in given:
        from audit.measures.modules import import_measure_modules

        import_measure_modules(check("measure_modules", given["measure_modules"]))
    return check_parameters(given)
