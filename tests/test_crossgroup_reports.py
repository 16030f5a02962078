"""Cross-group tables from the command line (check, report, pareto), the heat map, and the
choice of the matrices a report draws."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from conftest import cross_long, cross_matrices, cross_wide
from figcheck import faults, named, record

from audit.analysis import crossgroup as cross_report
from audit.cli import main
from audit.measures import crossgroup, onesided
from audit.measures.registry import evaluate
from audit.report.plots import crossgroup as cross_plots
from audit.report.plots.crossgroup import pair_heatmap, pair_heatmaps, pair_matrix
from audit.tables import crossgroup as tables
from audit.tables.crossgroup import cross_group
from audit.tables.rates import read_rates

pytestmark = pytest.mark.usefixtures("shared_server")  # one server for its reports


@pytest.fixture
def cross_csv(tmp_path):
    path = tmp_path / "cross.csv"
    cross_long().to_csv(path, index=False)
    return path


# --- audit check ------------------------------------------------------------------------


def test_check_a_cross_group_table(cross_csv, capsys):
    assert main(["check", str(cross_csv)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == (
        "cross-group table: 3 algorithms x 16 pairs (full square of 4 groups, enrolment group "
        "x probe group) = 48 rows"
    )
    assert "fmr (within-group): min 0.0002, median 0.0005, max 0.002, zeros 0" in out
    assert "fmr (cross-group): min 0, median 1.5e-05, max 0.0001, zeros 1" in out
    assert (
        "FMR(a, b) != FMR(b, a) in 5 of 18 algorithm x pairs of groups (28%); largest ratio 10"
        in out
    )
    assert "measure cell_gini: computed" in out
    assert (
        "measure std_fnmr: not applicable: "
        + onesided.NEEDS_MISSING.format(missing="FNMR", rate="FMR")
        in out
    )


def test_check_lists_the_cross_group_measures_not_applicable_on_a_plain_table(tmp_path, capsys):
    path = tmp_path / "plain.csv"
    path.write_text("algorithm,group,fmr,fnmr\na,F,1e-4,0.01\na,M,2e-4,0.02\n")
    assert main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"measure within_cross_ratio: not applicable: {crossgroup.NEEDS_PAIRS}" in out


def test_check_a_wide_table_with_and_without_the_pair_separator(tmp_path, capsys):
    path = tmp_path / "wide.csv"
    cross_wide().to_csv(path, index=False)
    assert main(["check", "--pair-separator", "|", str(path)]) == 0
    assert "cross-group table: 3 algorithms x 16 pairs" in capsys.readouterr().out
    assert main(["check", str(path)]) == 0
    captured = capsys.readouterr()
    assert "3 algorithms x 16 groups = 48 rows" in captured.out
    assert captured.err.startswith(f"audit: warning: {path}: the group labels look like pairs")
    assert "--pair-separator '|'" in captured.err


def test_check_declared_pairs_and_their_errors(tmp_path, capsys):
    declared = [(g, g) for g in "ABCD"] + [("A", "B"), ("B", "A")]
    frame = cross_long()
    frame = frame[
        [(a, b) in declared for a, b in zip(frame["group_1"], frame["group_2"], strict=True)]
    ]
    path = tmp_path / "declared.csv"
    frame.to_csv(path, index=False)
    text = ",".join(f"{a}/{b}" for a, b in declared)
    assert main(["check", "--pairs", text, "--pair-separator", "/", str(path)]) == 0
    assert "3 algorithms x 6 pairs (declared pairs of 4 groups" in capsys.readouterr().out
    assert main(["check", str(path)]) == 3
    err = capsys.readouterr().err
    assert err.startswith(
        f"audit: error: {path}: algorithm 'a' (first at {path}, line 2) has no FMR"
    )
    assert main(["check", "--pairs", text, str(path)]) == 2
    err = capsys.readouterr().err
    assert err.endswith(f"audit check: error: {tables.DECLARED_TEXT.format(text=text)}\n")


def test_pareto_refuses_a_cross_group_measure_on_a_plain_table_before_running(
    tmp_path, capsys, small_table
):
    code = main(
        [
            "pareto",
            str(small_table),
            "--measure",
            "cell_gini",
            "--reports-dir",
            str(tmp_path),
        ]
    )
    assert code == 2
    expected = onesided.NOT_APPLICABLE_HERE.format(
        name="cell_gini", source=str(small_table), reason=crossgroup.NEEDS_PAIRS
    )
    assert capsys.readouterr().err.endswith(f"audit pareto: error: {expected}\n")
    assert not any(tmp_path.iterdir())


# --- the heat map -------------------------------------------------------------------------


def _mesh(ax):
    """The heat map's cells (seaborn draws them as one QuadMesh)."""
    meshes = [c for c in ax.collections if type(c).__name__ == "QuadMesh"]
    assert len(meshes) == 1
    return meshes[0]


def test_the_heat_map_marks_zero_and_unmeasured_cells():
    table = read_rates(cross_long())
    pairs = cross_group(table).frame()
    ax = pair_heatmap(pairs, "c")
    assert ax.get_xlabel() == "probe group" and ax.get_ylabel() == "enrolment group"
    mesh = _mesh(ax)
    assert type(mesh.norm).__name__ == "LogNorm"
    assert np.ma.getmaskarray(mesh.get_array()).reshape(4, 4)[0, 3]  # FMR(A, D) = 0 ...
    hatched = [p for p in ax.patches if p.get_hatch()]
    assert [(p.get_x(), p.get_y()) for p in hatched] == [(3, 0)]  # ... hatched, cell (A, D)
    texts = {(t.get_position(), t.get_text()) for t in ax.texts}
    assert ((3.5, 0.5), "0") in texts and ((0.5, 0.5), "5e-4") in texts
    assert len(ax.texts) == 16  # every cell written
    matrix = pair_matrix(pairs.iloc[1:], "a")  # (a, A, A) left out: not measured
    assert np.isnan(matrix.loc["A", "A"])
    ax = pair_heatmap(pairs.iloc[1:], "a", groups=list("ABCD"))
    assert ((0.5, 0.5), "n/a") in {(t.get_position(), t.get_text()) for t in ax.texts}


def test_the_heat_maps_share_one_scale_and_draw_labels_as_written():
    fmr = cross_matrices()
    frame = cross_long(fmr)
    names = {"A": "$\\frac$", "B": "<b>B</b>", "C": "C_1", "D": "50%"}
    frame["group_1"] = frame["group_1"].map(names)
    frame["group_2"] = frame["group_2"].map(names)
    frame["algorithm"] = frame["algorithm"].map({"a": "a_b^c", "b": "x{y}", "c": "vendor-$x$"})
    fig = pair_heatmaps(frame, ["a_b^c", "x{y}", "vendor-$x$"])
    data = record(fig)  # mathtext would fail on '$\frac$'
    seen = {t["seen"] for t in data["texts"]}
    assert set(names.values()) | {"a_b^c", "x{y}", "vendor-$x$"} <= seen
    assert set(names.values()) | {"vendor-$x$"} <= set(data["svg"])
    axes = [ax for ax in fig.axes if ax.get_ylabel() == "enrolment group"]
    assert len(axes) == 3
    assert len({(_mesh(ax).norm.vmin, _mesh(ax).norm.vmax) for ax in axes}) == 1
    assert _mesh(axes[0]).norm.vmin == pytest.approx(1e-5)
    assert fig.legends and fig.legends[0].texts[0].get_text() == "FMR = 0"
    plt.close(fig)
    with pytest.raises(ValueError, match="not in the pairs table"):
        pair_heatmaps(frame, ["nope"])


def _pairs(n: int, algorithms=("alg-a", "alg-b")) -> pd.DataFrame:
    """Pairs of ``n`` groups named as NIST's summaries name them (region.age.sex), FMRs
    spread over two decades, the within-group pairs ten times higher, a few at 0."""
    rng = np.random.default_rng(n)
    regions = ["Africa", "Asia", "Europe", "Americas", "Oceania"]
    ages = ["<20", "20-35", "35-50", "50-65", "65+"]
    groups = [f"{r}.{a}.{s}" for r in regions for a in ages for s in "FM"][:n]
    rows = []
    for algorithm in algorithms:
        for i, g1 in enumerate(groups):
            for j, g2 in enumerate(groups):
                fmr = 10 ** rng.uniform(-6, -4) * (10 if i == j else 1)
                rows.append((algorithm, g1, g2, 0.0 if rng.random() < 0.03 else fmr))
    return pd.DataFrame(rows, columns=["algorithm", "group_1", "group_2", "fmr"])


@pytest.mark.parametrize("n", [2, 5, 10, 20, 50])
def test_heat_maps_are_readable_from_2_to_50_groups(n):
    """Every group named, no tick labels over each other, nothing off the canvas, each
    written FMR inside its own cell; values not written (and the title saying so) only
    when their cells are too small."""
    fig = pair_heatmaps(_pairs(n), ["alg-a", "alg-b"])
    data = record(fig)
    assert all(found == [] for found in faults(data).values()), faults(data)
    pairs = _pairs(n)
    assert named(data, set(pairs["group_1"])) == set(pairs["group_1"])
    assert named(data, ["alg-a", "alg-b"]) == {"alg-a", "alg-b"}
    renderer = fig.canvas.get_renderer()
    written = 0
    for ax in [ax for ax in fig.axes if ax.get_ylabel() == "enrolment group"]:
        for text in ax.texts:
            x, y = text.get_position()
            corners = ax.transData.transform([[x - 0.5, y - 0.5], [x + 0.5, y + 0.5]])
            box = text.get_window_extent(renderer)
            assert corners[:, 0].min() <= box.x0 and box.x1 <= corners[:, 0].max()
            assert corners[:, 1].min() <= box.y0 and box.y1 <= corners[:, 1].max()
            written += 1
    title = fig.get_suptitle()
    if n <= 20:
        assert written == 2 * n * n and "not written" not in title
    else:
        assert written == 0
        assert cross_plots.NOT_WRITTEN.format(n=n) in title.replace("\n", " ")


def test_a_group_name_of_90_characters_leaves_the_matrices_their_room():
    """One group named with 90 letters took the room of the matrices (cells of 0.12 in,
    values unwritten, layout collapsed): axes write it shortened, the title says so,
    and every FMR of 12 groups is written in its cell, as with short names."""
    pairs = _pairs(12)
    long, named_so = "G" * 90, pairs["group_1"].iloc[0]
    pairs = pairs.replace({"group_1": {named_so: long}, "group_2": {named_so: long}})
    assert (pairs["group_1"] == long).any()  # the name replaced one of the groups
    fig = pair_heatmaps(pairs, ["alg-a", "alg-b"])
    data = record(fig)
    assert all(found == [] for found in faults(data).values()), faults(data)
    shown = cross_plots.group_labels([long])[0]
    assert len(shown) == cross_plots.LONGEST_LABEL and shown.startswith("G" * 20)
    assert shown in {t["seen"] for t in data["texts"]}
    title = fig.get_suptitle().replace("\n", " ")
    assert cross_plots.SHORTENED.format(n=cross_plots.LONGEST_LABEL) in title
    assert "not written" not in title
    written = sum(len(ax.texts) for ax in fig.axes if ax.get_ylabel() == "enrolment group")
    assert written == 2 * 12 * 12
    plt.close(fig)


#: Two groups named by a letter, three algorithms, FMRs over three decades.
TWO_GROUPS = pd.DataFrame(
    [(a, g1, g2, fmr) for a, values in {
        "A": [5.6e-4, 1.9e-6, 2.0e-5, 2.7e-4],
        "B": [3.0e-5, 1.6e-4, 2.2e-6, 1.5e-4],
        "C": [3.5e-4, 2.0e-5, 5.8e-5, 1.6e-3],
    }.items() for (g1, g2), fmr in zip([("F", "F"), ("F", "M"), ("M", "F"), ("M", "M")], values,
                                       strict=True)],
    columns=["algorithm", "group_1", "group_2", "fmr"],
)  # fmt: skip


@pytest.mark.parametrize("algorithms", [["B", "C"], ["A", "B"], ["A", "B", "C"]])
def test_two_groups_keep_their_axis_labels_on_the_canvas(algorithms):
    """Square matrices of two groups laid out by constrained layout in one pass took the
    room of the "probe group" label below them, which was cut at the foot of the figure
    (by 4 px at 150 dpi): the heat maps are laid out once before they are returned.  No
    grid line is drawn across a cell (it crossed a pair not measured, left white)."""
    fig = pair_heatmaps(TWO_GROUPS, algorithms)
    for ax in fig.axes:
        assert not any(line.get_visible() for line in ax.get_xgridlines() + ax.get_ygridlines())
    data = record(fig)
    assert all(found == [] for found in faults(data).values()), faults(data)
    labels = [t for t in data["texts"] if t["seen"] == "probe group"]
    assert len(labels) == len(algorithms)


@pytest.mark.parametrize(
    "names",
    [["alg0_vendor_vendor_vendor_vend", "alg1_vendor_vendor_vendor_vend", "alg2_x"],
     ["vendor-11-very-long-algorithm-name", "vendor-2"],
     ["a name with spaces that is rather long indeed for a title, longer than three lines "
      "of its matrix could hold", "b"]],
    ids=["30 characters", "34 characters", "words"],
)  # fmt: skip
def test_a_long_algorithm_name_stays_over_its_own_matrix(names):
    """A long name is broken over its matrix's width (at most three lines, then an
    ellipsis): on one line it ran into the next matrix's title and off the figure."""
    rows = [
        (a, g1, g2, 1e-5 * (1 + i)) for i, a in enumerate(names) for g1 in "FMX" for g2 in "FMX"
    ]
    fig = pair_heatmaps(
        pd.DataFrame(rows, columns=["algorithm", "group_1", "group_2", "fmr"]), names
    )
    data = record(fig)
    assert all(found == [] for found in faults(data).values()), faults(data)
    renderer = fig.canvas.get_renderer()
    for ax, name in zip(fig.axes, names, strict=False):
        drawn = next(t for t in (ax.title, ax._left_title, ax._right_title) if t.get_text())
        box, lines = ax.get_window_extent(renderer), drawn.get_text().split("\n")
        assert box.x0 - 1 <= drawn.get_window_extent(renderer).x0, name
        assert drawn.get_window_extent(renderer).x1 <= box.x1 + 1, name
        if len(name) > 100:  # cut at three lines
            assert len(lines) == 3 and lines[-1].endswith("\N{HORIZONTAL ELLIPSIS}")
        else:  # whole, broken at spaces or after hyphens and underscores
            assert "".join(lines) == name or " ".join(lines) == name


def test_the_algorithms_a_report_draws():
    table = read_rates(cross_long())
    chosen = cross_report.heatmap_algorithms(table)
    # total FMR over the within-group pairs: a 1.1e-3, b 2e-4, c 6.25e-4
    assert chosen["algorithm"].tolist() == ["b", "a"]
    assert chosen["why"].str.startswith(("lowest", "highest")).all()
    assert cross_report.heatmap_algorithms(table, ["c"])["why"].tolist() == ["named"]
    with pytest.raises(ValueError) as error:
        cross_report.heatmap_algorithms(table, ["c", "zz"])
    assert str(error.value) == cross_report.UNKNOWN_ALGORITHMS.format(
        names=["zz"], known=["a", "b", "c"]
    )
    summary = cross_report.asymmetry_summary(table)
    assert (summary["pairs"], summary["differ"], summary["largest_fold"]) == (18, 5, 10.0)


# --- audit report and audit pareto ------------------------------------------------------


@pytest.mark.slow
def test_report_on_a_4x4_cross_group_table(crossgroup_built, cross_file):
    """``audit report cross.csv -p n_random 200`` (built once in the run, conftest)."""
    assert crossgroup_built.status == 0, crossgroup_built.printed
    folder = crossgroup_built.report
    for name in (
        "index.html",
        "ffmc.html",
        "pareto.html",
        "crossgroup.html",
        "crossgroup.ipynb",
        "figures/crossgroup_heatmaps.png",
        "figures/crossgroup_heatmaps.svg",
        "tables/crossgroup_measures.csv",
        "tables/crossgroup_within_cross.csv",
        "tables/crossgroup_asymmetry.csv",
        "tables/crossgroup_ffmc.csv",
        "tables/crossgroup_pairs.csv",
        "tables/measure_applicability.csv",
        "tables/warnings_crossgroup.csv",
    ):
        assert (folder / name).is_file(), name
    front = (folder / "index.html").read_text()
    assert 'href="crossgroup.html"' in front
    assert 'Gini of pair FMRs <span class="note">(<code>cell_gini</code>' in front  # a verdict row
    for page in ("index.html", "ffmc.html", "pareto.html", "crossgroup.html"):
        assert ".py:" not in (folder / page).read_text(), page
    table = read_rates(cross_file)
    measures = pd.read_csv(folder / "tables" / "crossgroup_measures.csv")
    for name in ("within_cross_ratio", "cell_gini"):
        expected = evaluate(table, name)["value"]
        got = measures[measures["measure"] == name].set_index("algorithm")["value"]
        np.testing.assert_allclose(got.loc[expected.index], expected, rtol=1e-8)
    verdicts = pd.read_csv(folder / "tables" / "ffmc_table.csv").set_index(["measure", "criterion"])
    assert pd.isna(verdicts.loc[("cell_gini", "FFMC.1"), "passed"])
    assert bool(verdicts.loc[("cell_gini", "FFMC.2"), "passed"])
    assert not bool(verdicts.loc[("fmr_asymmetry", "FFMC.3"), "passed"])
    applicability = pd.read_csv(folder / "tables" / "measure_applicability.csv").set_index(
        "measure"
    )
    assert applicability.loc["std_fnmr", "status"] == onesided.NOT_APPLICABLE
    assert applicability.loc["within_cross_ratio", "status"] == onesided.COMPUTED
    values = pd.read_csv(folder / "tables" / "measure_values_alpha_0.5.csv")
    assert {"garbe", "cell_gini", "fmr_asymmetry"} <= set(values["measure"])
    assert "std_fnmr" not in set(values["measure"])
    html = (folder / "crossgroup.html").read_text()
    assert "import audit" not in html
    assert "FMR(a, b) differs from FMR(b, a), as written, in 5 of 18" in html


@pytest.mark.slow
def test_pareto_on_a_4x4_cross_group_table(crossgroup_built, cross_csv, tmp_path):
    """GARBE, the Pareto notebook's default measure, as the whole report ran it (built once
    in the run, conftest); the pair measure cell_gini by ``audit pareto`` alone."""
    assert crossgroup_built.status == 0, crossgroup_built.printed
    reports = tmp_path / "reports"
    code = main(
        ["pareto", str(cross_csv), "--measure", "cell_gini", "--name", "cell_gini",
         "--reports-dir", str(reports), "--no-progress", "--replicates", "100"]
    )  # fmt: skip
    assert code == 0
    folders = {"garbe": crossgroup_built.report, "cell_gini": reports / "cell_gini"}
    for measure, folder in folders.items():
        frame = pd.read_csv(folder / "tables" / f"pareto_all_{measure}.csv", index_col=0)
        np.testing.assert_allclose(
            frame["accuracy"], np.diagonal(cross_matrices(), axis1=1, axis2=2).mean(axis=1)
        )
        expected = evaluate(read_rates(cross_csv), measure)["value"]
        np.testing.assert_allclose(frame["fairness"], expected, rtol=1e-8)
    html = (crossgroup_built.report / "pareto.html").read_text()
    assert "Total FMR" in html and "Cross-group table" in html


@pytest.mark.slow
def test_a_hostile_wide_cross_group_table_in_percent(tmp_path):
    """Group names with HTML, mathtext and quotes, a pair separator of two characters, rates
    in percent: the report escapes every name and draws it as written."""
    groups = ["<i>F</i>", "$\\frac$", "M&M", "O'Neil"]
    fmr = cross_matrices() * 100
    frame = pd.DataFrame({"Algorithm": ["<script>x</script>", "b", "c"]})
    for i, g1 in enumerate(groups):
        for j, g2 in enumerate(groups):
            frame[f"FMR.{g1}->{g2}"] = fmr[:, i, j]
    path = tmp_path / "hostile.csv"
    frame.to_csv(path, index=False)
    reports = tmp_path / "reports"
    code = main(
        ["report", str(path), "--pair-separator=->", "--units", "percent",
         "--reports-dir", str(reports), "--no-progress", "-p", "n_random", "100",
         "-p", "heatmap_algorithms", '["<script>x</script>", "c"]']
    )  # fmt: skip
    assert code == 0
    folder = reports / "hostile"
    for page in ("crossgroup.html", "ffmc.html", "pareto.html", "index.html"):
        html = (folder / page).read_text()
        assert "<script>x</script>" not in html, page
        assert "<i>F</i>" not in html, page
    assert "&lt;script&gt;x&lt;/script&gt;" in (folder / "crossgroup.html").read_text()
    pairs = pd.read_csv(folder / "tables" / "crossgroup_pairs.csv")
    np.testing.assert_allclose(pairs["fmr"], cross_matrices().ravel(), rtol=1e-8)
    assert set(pairs["group_1"]) == set(groups)
