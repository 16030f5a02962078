"""Warnings raised in a notebook, as the report shows them: plain sentences without code
locations, each once, every one counted in a table."""

from __future__ import annotations

import warnings

import pandas as pd

from audit.measures.kernels import UndefinedMeasureWarning
from audit.report import notices
from audit.tables.layouts import ImplausibleRatesWarning


def test_warning_sentences_have_no_code_location_or_source_file():
    assert notices.sentence(
        "/tmp/ipykernel_9/123.py:17: input/x.csv: the median FMR is 0.417. Error rates above "
        "0.2 are unusual"
    ) == ("The median FMR is 0.417. Error rates above 0.2 are unusual.")
    assert notices.sentence("raised at audit/registry.py:177: the rule\n  is") == (
        "Raised at the rule is."
    )
    assert notices.kind(ImplausibleRatesWarning) == "implausible rates"
    assert notices.kind(UndefinedMeasureWarning) == "undefined measure"


def test_warning_record_counts_repeats_and_keeps_a_table(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        record = notices.WarningRecord("nb", tmp_path)
        try:
            for _ in range(3):
                warnings.warn("a.csv: the rates look high", UserWarning, stacklevel=1)
            warnings.warn("divide by zero", RuntimeWarning, stacklevel=1)
            first = record.collect(cell=4)
            warnings.warn("a.csv: the rates look high", UserWarning, stacklevel=1)
            second = record.collect(cell=5)
        finally:
            record.close()
        with warnings.catch_warnings(record=True) as after:
            warnings.warn("after the record", UserWarning, stacklevel=1)
    assert [str(w.message) for w in after] == ["after the record"]
    assert record.collect() == []
    assert first == [("", "The rates look high."), ("runtime", "Divide by zero.")]
    assert second == []
    table = pd.read_csv(tmp_path / "tables" / "warnings_nb.csv")
    assert table[["cell", "kind", "sentence", "count"]].fillna("").values.tolist() == [
        [4, "", "The rates look high.", 4],
        [4, "runtime", "Divide by zero.", 1],
    ]
    assert notices.markdown(first) == (
        "* **Warning**: The rates look high\\.\n* **Warning** (runtime): Divide by zero\\."
    )
