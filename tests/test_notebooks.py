"""The notebooks, executed by papermill on a small synthetic table into a temporary folder.

Replicate counts are small (``n_replicates``, ``verdict_replicates``,
``bootstrap_replicates``): these tests check that the notebooks run and write what
they should; the replicate statistics are tested in test_uncertainty.py.
"""

from __future__ import annotations

import base64
import json
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from audit.analysis.ffmc import ffmc_table
from audit.cli import main
from audit.measures.registry import evaluate
from audit.report.runner import NotebookFailed, run_report
from audit.sources.annex15 import sha256sum
from audit.tables.rates import rate_matrices, read_rates

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("shared_server")]


@pytest.fixture(scope="module")
def pareto_report(small_table, tmp_path_factory):
    root = tmp_path_factory.mktemp("reports")
    folder = run_report(
        "small",
        notebooks=("pareto",),
        reports_root=root,
        progress=False,
        parameters={"data_path": str(small_table), "max_accuracy": 0.03, "n_replicates": 50},
    )
    return folder


def test_pareto_report_files(pareto_report, small_table):
    for name in (
        "index.html",
        "manifest.json",
        "pareto.ipynb",
        "pareto.html",
        "figures/pareto_garbe.png",
        "figures/pareto_garbe.svg",
        "tables/downselect_garbe.csv",
        "tables/pareto_all_garbe.csv",
        "tables/frontier_probability_garbe.csv",
        "figures/frontier_probability_garbe.png",
    ):
        assert (pareto_report / name).is_file(), name
    short = pd.read_csv(pareto_report / "tables" / "downselect_garbe.csv")
    assert short["frontier_probability"].between(0, 1).all()
    manifest = json.loads((pareto_report / "manifest.json").read_text())
    assert manifest["input_sha256"] == sha256sum(small_table)
    assert manifest["parameters"]["max_accuracy"] == 0.03
    html = (pareto_report / "pareto.html").read_text()
    assert "import audit" not in html  # code hidden
    assert sha256sum(small_table) in html


def test_pareto_report_values_read_back(pareto_report, small_table):
    table = read_rates(small_table)
    expected = evaluate(table, "garbe", alpha=0.5)["value"]
    produced = pd.read_csv(pareto_report / "tables" / "pareto_all_garbe.csv", index_col=0)
    fairness_column = [c for c in produced.columns if c in ("fairness", "garbe", "value")][0]
    np.testing.assert_allclose(produced.loc[expected.index, fairness_column], expected, rtol=1e-8)
    _, _, _, fnmr = rate_matrices(table)
    accuracy_column = [c for c in produced.columns if c in ("accuracy", "total_fnmr")][0]
    np.testing.assert_allclose(
        produced.loc[expected.index, accuracy_column], fnmr.mean(axis=1), rtol=1e-8
    )


def test_failed_notebook_leaves_no_report(small_table, tmp_path):
    with pytest.raises(NotebookFailed) as error:
        run_report(
            "broken",
            notebooks=("pareto",),
            reports_root=tmp_path,
            progress=False,
            parameters={"data_path": str(small_table), "n_replicates": 0},
        )
    assert "notebook pareto_downselect.ipynb failed in cell" in str(error.value)
    # the notebook's first cell checks its parameters, with the command line's words
    expected = (
        "ParameterError: parameter n_replicates: expected a whole number in [1, 100000], got 0"
    )
    assert expected in str(error.value)
    assert not (tmp_path / "broken").exists()
    assert (tmp_path / ".broken.failed" / "pareto.ipynb").is_file()


def test_run_report_raises_notebook_failed(small_table, tmp_path):
    with pytest.raises(NotebookFailed, match="ParameterError: parameter alpha"):
        run_report(
            "x",
            notebooks=("pareto",),
            reports_root=tmp_path,
            progress=False,
            parameters={"data_path": str(small_table), "alpha": -1},
        )


def test_ffmc_report_with_a_user_measure(small_table, tmp_path, monkeypatch, own_measures):
    """A measure module outside the package, passed by dotted name, goes through the audit.
    On the coarsest alpha grid (0 and 1), where IR's and GARBE's FFMC.1 verdicts are not the
    default grid's, the verdict stability table judges the verdicts of the FFMC table."""
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)  # tests.user_measures importable
    monkeypatch.setenv("PYTHONPATH", "")
    argv = ["ffmc", str(small_table), "--reports-dir", str(tmp_path), "--name", "user"]
    argv += ["--measure-module", "tests.user_measures.my_measure", "--no-progress"]
    argv += ["-p", "n_random", "200", "-p", "alpha_step", "1", "-p", "n_replicates", "50"]
    argv += [
        "-p",
        "verdict_replicates",
        "3",
        "-p",
        "measures",
        '["fdr", "ir", "garbe", "user_ncv"]',
    ]
    code = main(argv)
    assert code == 0
    folder = tmp_path / "user"
    for name in (
        "ffmc.html",
        "tables/ffmc_table.csv",
        "tables/data_quality.csv",
        "figures/ffmc_panels_garbe.png",
        "figures/ffmc_panels_user_ncv.svg",
        "tables/measure_intervals.csv",
        "tables/ffmc_verdict_stability.csv",
    ):
        assert (folder / name).is_file(), name
    verdicts = pd.read_csv(folder / "tables" / "ffmc_table.csv")
    assert {"fdr", "ir", "garbe", "user_ncv"} <= set(verdicts["measure"])
    keys = ["measure", "criterion"]
    shown = verdicts.set_index(keys)["passed"].astype("boolean")
    judged = pd.read_csv(folder / "tables" / "ffmc_verdict_stability.csv").set_index(keys)
    assert set(judged.index) == set(shown.index)
    pd.testing.assert_series_equal(
        judged["passed"].astype("boolean"), shown.loc[judged.index], check_names=False
    )
    default = ffmc_table(read_rates(small_table), ["fdr", "ir", "garbe"]).set_index(keys)
    assert (default["passed"] != shown.loc[default.index]).any()
    values = pd.read_csv(folder / "tables" / "measure_values_alpha_0.5.csv")
    garbe = values[values["measure"] == "garbe"].set_index("algorithm")["value"]
    expected = evaluate(read_rates(small_table), "garbe", alpha=0.5)["value"]
    np.testing.assert_allclose(garbe.loc[expected.index], expected, rtol=1e-8)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["parameters"]["measure_modules"] == ["tests.user_measures.my_measure"]
    intervals = pd.read_csv(folder / "tables" / "measure_intervals.csv")
    assert "user_ncv" in set(intervals["measure"])
    # the figures, drawn by a second process, are declared in the order asked for, and each
    # panel figure is shown where it was asked for: right after its measure's heading
    declared = list(manifest["outputs"]["ffmc"]["figures"].values())
    panels = [p for p in declared if p.startswith("figures/ffmc_panels_")]
    assert declared == panels + [f"figures/intervals_{m}.png" for m in ("fdr", "ir", "garbe")]
    assert {"figures/ffmc_panels_garbe.png", "figures/ffmc_panels_user_ncv.png"} <= set(panels)
    executed = json.loads((folder / "ffmc.ipynb").read_text())
    shown = [
        o["data"] for c in executed["cells"] for o in c.get("outputs", []) if "data" in o
    ]  # display data and results, in order
    after_heading = [
        base64.b64decode(data["image/png"])
        for before, data in zip(shown, shown[1:], strict=False)
        if "".join(before.get("text/markdown", "")).startswith("### ") and "image/png" in data
    ]
    assert after_heading == [(folder / p).read_bytes() for p in panels]
    assert not any("being drawn" in json.dumps(data) for data in shown)


def test_scores_report_on_synthetic_distances(small_scores, scores_built):
    """The scores notebook on a small table of distance scores with cross-group impostor
    pairs (the report built once in the run, conftest)."""
    from audit.scores import rates_at_fmr, read_scores

    path = small_scores
    assert scores_built.status == 0, scores_built.printed
    folder = scores_built.report
    for name in (
        "scores.html",
        "manifest.json",
        "tables/measures.csv",
        "tables/eer_by_group.csv",
        "tables/sweep_measures.csv",
        "tables/ffmc_table.csv",
        "figures/sweep_group.png",
        "tables/bootstrap_intervals.csv",
        "tables/bootstrap_ranking.csv",
        "figures/det_group.svg",
    ):
        assert (folder / name).is_file(), name
    assert json.loads((folder / "manifest.json").read_text())["input_sha256"] == sha256sum(path)
    expected = evaluate(rates_at_fmr(read_scores(path, higher_is_match=False), 0.01), "garbe")[
        "value"
    ]
    measures = pd.read_csv(folder / "tables" / "measures.csv")
    garbe = measures[measures["measure"] == "garbe"].set_index("algorithm")["value"]
    np.testing.assert_allclose(garbe.loc[expected.index], expected, rtol=1e-8)
    assert set(measures["measure"]) >= {"fdr", "ir", "garbe", "std_eer", "sed_mean", "dfi", "cei"}
    intervals = pd.read_csv(folder / "tables" / "bootstrap_intervals.csv")
    assert set(intervals["measure"]) == set(measures["measure"])  # every measure has an interval
    # computed in a second process while the notebook went on: the bootstrap of this process
    from audit.measures.registry import (
        evaluate_scores,
        get_measure,
        measure_names,
        register,
        unregister,
    )
    from audit.uncertainty import score_bootstrap

    # with the kernel's measures: the built-in ones (tests/test_properties.py registers the
    # tests' own measures in every process that collects it)
    own = [n for n in measure_names() if not get_measure(n).module.startswith("audit.")]
    own = [unregister(name) for name in own]
    try:
        here = score_bootstrap(
            read_scores(path, higher_is_match=False),
            partial(rates_at_fmr, target_fmr=0.01),
            score_measures=evaluate_scores,
            unit="subject",
            replicate_as="statistics",
            subject="subject_1",
            group="group_1",
            n_replicates=20,
            seed=0,
        ).intervals
    finally:
        for spec in own:
            register(spec, check=False)
    assert list(intervals["measure"]) == list(here["measure"])
    for column in ("value", "low", "high"):
        np.testing.assert_allclose(
            intervals[column], here[column], rtol=1e-9, equal_nan=True
        )  # 10 digits
    html = (folder / "scores.html").read_text()
    assert (
        "subjects (&#x27;subject_1&#x27;) with replacement" in html
        or "subjects ('subject_1')" in html
    )


def test_scores_report_on_non_mated_scores_only(small_scores, tmp_path):
    """Non-mated scores alone: FMR measures at the operating point, the rest said not to
    apply, no EER, DET or bootstrap; the FMRs equal those of the full score set."""
    from audit.scores import rates_at_fmr, read_scores

    frame = pd.read_csv(small_scores)
    path = tmp_path / "impostors.csv"
    frame[~frame["mated"]].to_csv(path, index=False)
    argv = ["scores", str(path), "--distance", "--target-fmr", "0.01"]
    argv += ["--reports-dir", str(tmp_path / "reports"), "--no-progress"]
    assert main([*argv, "-p", "sweep_points", "3"]) == 0
    folder = tmp_path / "reports" / "impostors"
    tables = {p.name for p in (folder / "tables").iterdir()}
    assert tables == {"rates_at_fmr_0.01_group.csv", "measures.csv", "sweep_measures.csv",
                      "ffmc_table.csv", "measure_registry.csv", "warnings_scores.csv",
                      "robustness_scores.csv"}  # fmt: skip
    rates = pd.read_csv(folder / "tables" / "rates_at_fmr_0.01_group.csv")
    full = rates_at_fmr(read_scores(small_scores, higher_is_match=False), 0.01)
    assert list(rates.columns) == ["algorithm", "group", "fmr", "n_nonmated"]
    merged = rates.merge(full, on=["algorithm", "group"], suffixes=("", "_full"))
    assert len(merged) == len(full)
    np.testing.assert_allclose(merged["fmr"], merged["fmr_full"], rtol=1e-9)
    measures = pd.read_csv(folder / "tables" / "measures.csv")
    # the measures the FMRs feed, and the zero-error-adjusted ones the non-mated counts feed
    assert set(measures["measure"]) == {
        "fdr", "ir", "garbe", "nrb", "nrb_fmr", "std_fmr", "ser", "merg", "mera",
        "nist_max_min_fmr", "nist_max_mean_fmr", "nist_max_geomean_fmr", "nist_log10_spread_fmr",
        "nist_gini_fmr", "nist_max_min_fmr_cp", "nist_max_geomean_fmr_cp",
    }  # fmt: skip
    verdicts = pd.read_csv(folder / "tables" / "ffmc_table.csv")
    assert verdicts.loc[verdicts["criterion"] == "FFMC.1", "passed"].isna().all()
    robustness = pd.read_csv(folder / "tables" / "robustness_scores.csv")
    assert list(robustness["sentence"]) == ["No bootstrap (the scores hold no mated comparisons)."]
    html = (folder / "scores.html").read_text()
    assert "hold non-mated comparisons only" in html
    assert "an equal error rate needs mated and non-mated scores" in html


def test_the_kernels_search_path_leads_to_this_audit_package(monkeypatch):
    """The folder that holds this audit package leads the kernels' PYTHONPATH, so that a
    kernel imports the same audit; the package's own folder is not on it (its modules,
    ``config``, ``exceptions``, ``report``, ... would import as top-level names)."""
    import os
    import subprocess
    import sys

    import audit
    from audit.report import runner

    monkeypatch.setenv("PYTHONPATH", "")
    runner._kernel_path()
    entries = os.environ["PYTHONPATH"].split(os.pathsep)
    package = Path(audit.__file__).resolve().parent
    assert entries == [str(package.parent)]
    code = "import audit, importlib.util; print(audit.__file__, importlib.util.find_spec('config'))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/"
    )
    assert done.stdout.split() == [audit.__file__, "None"]
    runner._kernel_path()  # once is enough
    assert os.environ["PYTHONPATH"].split(os.pathsep) == entries
