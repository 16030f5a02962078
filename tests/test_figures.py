"""The figures of every kind of report, checked for what a reader sees: no raw markup in
their text, tick labels of one axis apart, every text on the canvas, and the algorithms
a figure shows named in it (:mod:`figcheck` says how each is read)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from figcheck import faults, kernel_hook, named, read_records, record
from hypothesis import given
from hypothesis import strategies as st

from audit.analysis import crossgroup as cross_report
from audit.cli import main
from audit.report.text import escape_mathtext
from audit.tables.rates import read_rates

pytestmark = pytest.mark.usefixtures("shared_server")  # one server for its reports

# --- the check itself: each fault is found, and only where it is -----------------------


def test_the_check_reads_mathtext_as_drawn_and_raw_markup_as_raw():
    fig, ax = plt.subplots(layout="constrained")
    ax.plot([1, 10, 100], [1, 2, 3])
    ax.set_xscale("log")
    ax.set_title("plain title")
    clean = record(fig)
    assert faults(clean)["raw markup"] == []
    seen = {t["seen"] for t in clean["texts"]}
    assert "10\N{MINUS SIGN}1" not in seen and "102" in seen and "plain title" in seen
    for text in fig.findobj(plt.Text):
        text.set_parse_math(False)
    raw = faults(record(fig))["raw markup"]
    assert len(raw) >= 3 and all("mathdefault" in r for r in raw)


def test_the_check_lets_a_name_hold_a_dollar_but_nothing_else():
    fig, ax = plt.subplots(layout="constrained")
    ax.set_title(r"vendor-\$\frac\$ and more", parse_math=True)
    data = record(fig)
    assert r"vendor-$\frac$ and more" in {t["seen"] for t in data["texts"]}
    assert faults(data)["raw markup"] == [repr(r"vendor-$\frac$ and more")]
    assert faults(data, names=[r"vendor-$\frac$"])["raw markup"] == []


def test_the_check_finds_overlapping_tick_labels_and_only_those():
    fig, ax = plt.subplots(figsize=(2, 2), layout="constrained")
    ax.set_xticks(range(6), [f"a long label {i}" for i in range(6)])
    found = faults(record(fig))["tick overlap"]
    assert len(found) >= 5 and all(f.startswith("axis 0.x1") for f in found)
    ax.set_xticks(range(6), [f"a long label {i}" for i in range(6)], rotation=90)
    assert faults(record(fig))["tick overlap"] == []


def test_slanted_tick_labels_are_compared_in_their_own_frame():
    fig, ax = plt.subplots(figsize=(4, 3), layout="constrained")
    labels = [f"group number {i}" for i in range(5)]
    ax.set_xticks(range(5), labels, rotation=45, ha="right", rotation_mode="anchor")
    data = record(fig)
    boxes = [t["box"] for t in data["texts"] if t["axis"] == "0.x1"]
    assert len(boxes) == 5
    # their upright boxes overlap, the slanted labels do not
    assert boxes[0][2] > boxes[1][0]
    assert faults(data)["tick overlap"] == []
    ax.set_xticks(np.arange(5) * 0.05, labels, rotation=45, ha="right", rotation_mode="anchor")
    ax.set_xlim(-0.5, 4.5)
    assert len(faults(record(fig))["tick overlap"]) >= 4


def test_the_check_finds_text_past_the_edge():
    fig, ax = plt.subplots(figsize=(3, 2), layout="constrained")
    ax.plot([0, 1], [0, 1])
    assert faults(record(fig))["outside canvas"] == []
    fig.text(0.98, 0.5, "0.99")  # figure texts are not laid out
    assert [f.split(" by ")[0] for f in faults(record(fig))["outside canvas"]] == ["'0.99'"]
    # a text of several lines too (matplotlib draws it line by line)
    ax.set_title("a title far too long for so small a figure, as it goes on and on\nin two lines")
    found = faults(record(fig))["outside canvas"]
    assert sorted(f.split(" by ")[0] for f in found) == [
        "'0.99'",
        repr("a title far too long for so small a figure, as it goes on and on\nin two lines"),
    ]


def test_names_are_read_whole():
    fig, ax = plt.subplots(layout="constrained")
    ax.set_yticks([0, 1], ["alg-1", "alg-10"])
    ax.annotate("alg-2 (0.97)", (0.5, 0.5))
    ax.set_title("alg-3 and alg-4")
    data = record(fig)
    assert named(data, ["alg-1", "alg-10", "alg-2", "alg-3", "alg"]) == {"alg-1", "alg-10", "alg-2"}


# --- every figure of every kind of report ---------------------------------------------

#: Figures that draw distributions, not algorithms one by one: none to name (the
#: cross-dataset figures draw measures; their rank scatter, the shared algorithms as
#: unnamed points).
NAMES_NONE = ("ffmc_panels_", "claims_over_replicates", "compare_")

#: Up to this many algorithms, a figure of algorithms names every one.
FEW = 12
#: An interval (forest) plot shows every algorithm up to this many, else the most and
#: least fair, half each.
FOREST = 30


def _expected_names(figure: str, folder, input_table) -> tuple[set[str], int] | None:
    """The algorithms figure ``figure`` of the report in ``folder`` must name, and how many
    of them at least; None when it draws none one by one."""
    tables = folder / "tables"
    if figure.startswith(NAMES_NONE):
        return None
    if figure.startswith("pareto_"):
        frame = pd.read_csv(tables / f"pareto_all_{figure.removeprefix('pareto_')}.csv")
        names = frame.iloc[:, 0].astype(str)
        if len(frame) > FEW:
            names = names[frame["on_frontier"] | frame["weakly_efficient"]]
        return set(names), len(set(names))
    if figure.startswith("frontier_probability_"):
        frame = pd.read_csv(tables / f"{figure}.csv")
        names = frame["algorithm"].astype(str)
        if len(frame) > FEW:
            names = names[frame["frontier_probability"] >= 0.5]
        return set(names), len(set(names))
    if figure.startswith("intervals_"):
        frame = pd.read_csv(tables / "measure_intervals.csv")
        names = set(frame.loc[frame["measure"] == figure.removeprefix("intervals_"), "algorithm"])
        return {str(n) for n in names}, min(len(names), FOREST)
    if figure.startswith(("sweep_", "det_")):
        names = set(pd.read_csv(tables / "measures.csv")["algorithm"].astype(str))
        return names, len(names)
    if figure == "crossgroup_heatmaps":
        chosen = cross_report.heatmap_algorithms(input_table)["algorithm"].astype(str)
        return set(chosen), len(set(chosen))
    raise AssertionError(f"figure {figure!r} is not classified: which algorithms does it show?")


def _check_report(records: dict, folder, input_table, *, names=()) -> dict[str, list[str]]:
    """Every fault of every figure of a report, by kind, and the unnamed algorithms."""
    found: dict[str, list[str]] = {"raw markup": [], "tick overlap": [], "outside canvas": []}
    found["unnamed"] = []
    assert records, "no figure recorded"
    for figure, data in records.items():
        for kind, items in faults(data, names=names).items():
            found[kind] += [f"{figure}: {item}" for item in items]
        expected = _expected_names(figure, folder, input_table)
        if expected is not None:
            candidates, at_least = expected
            shown = named(data, candidates)
            if len(shown) < at_least:
                missing = sorted(candidates - shown)[:5]
                found["unnamed"].append(
                    f"{figure}: names {len(shown)} of the {at_least} algorithms it should "
                    f"(not {missing}{' ...' if len(candidates - shown) > 5 else ''})"
                )
    return found


def _report(tmp_path_factory, argv, name):
    root = tmp_path_factory.mktemp(f"figures-{name}")
    with pytest.MonkeyPatch.context() as monkeypatch:
        folder = kernel_hook(root, monkeypatch)
        code = main(
            [*argv, "--reports-dir", str(root / "reports"), "--name", name, "--no-progress"]
        )
    assert code == 0
    return root / "reports" / name, read_records(folder)


def _built(built):
    """The folder and figure records of a report built once in the run (conftest)."""
    assert built.status == 0, built.printed
    return built.report, read_records(built.records)


@pytest.fixture(scope="module")
def annex15_report(annex15_built, annex15_file):
    return (*_built(annex15_built), read_rates(annex15_file))


@pytest.fixture(scope="module")
def fmr_only_report(fmr_only_built, fmr_only_file):
    """The Annex 15 FMRs alone (126 algorithms): the most common published shape."""
    return (*_built(fmr_only_built), read_rates(fmr_only_file))


@pytest.fixture(scope="module")
def scores_report(scores_built):
    return (*_built(scores_built), None)


@pytest.fixture(scope="module")
def crossgroup_report(crossgroup_built, cross_file):
    return (*_built(crossgroup_built), read_rates(cross_file))


@pytest.fixture(scope="module")
def compare_report(compare_built):
    """Annex 15 beside FRVT 1:1 with its accuracy table: two heat maps of 28 and 20
    measures, the rank scatter and the agreement across the datasets."""
    return (*_built(compare_built), None)


#: In the order other files read them (conftest.LONGEST_FIRST): each is built here, this
#: file starting first, before another worker asks for it and waits.
REPORTS = ["compare_report", "crossgroup_report", "annex15_report", "fmr_only_report",
           "scores_report"]  # fmt: skip
KINDS = ["raw markup", "tick overlap", "outside canvas", "unnamed"]


@pytest.fixture(scope="module", params=REPORTS)
def report_faults(request):
    folder, records, table = request.getfixturevalue(request.param)
    return request.param, sorted(records), _check_report(records, folder, table)


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_report_figures(report_faults, kind):
    report, figures, found = report_faults
    assert found[kind] == [], (
        f"{report}: {len(found[kind])} x {kind} in {len(figures)} figures: "
        + "; ".join(found[kind][:8])
    )


@pytest.mark.slow
def test_every_report_draws_its_figures(annex15_report, fmr_only_report, scores_report,
                                        crossgroup_report, compare_report):  # fmt: skip
    assert "pareto_garbe" in annex15_report[1] and "intervals_ir" in annex15_report[1]
    assert "ffmc_panels_fdr" in annex15_report[1] and "claims_over_replicates" in annex15_report[1]
    # the claims figure, saved while the verdicts were recomputed, is shown in the notebook
    # (its placeholder replaced), as every panel figure is
    folder = annex15_report[0]
    outputs = [o for c in json.loads((folder / "ffmc.ipynb").read_text())["cells"]
               for o in c.get("outputs", [])]  # fmt: skip
    shown = [base64.b64decode(o["data"]["image/png"]) for o in outputs
             if "image/png" in o.get("data", {})]  # fmt: skip
    for name in ("claims_over_replicates", "ffmc_panels_fdr", "ffmc_panels_garbe"):
        assert (folder / "figures" / f"{name}.png").read_bytes() in shown, name
    assert "being drawn" not in json.dumps(outputs)
    assert "pareto_garbe" in fmr_only_report[1]
    assert {"sweep_group", "det_group"} <= set(scores_report[1])
    assert "crossgroup_heatmaps" in crossgroup_report[1]
    assert set(compare_report[1]) == {
        "compare_rank_agreement_annex15",
        "compare_rank_agreement_frvt11",
        "compare_ranks_annex15_frvt11",
        "compare_cross_agreement_annex15_frvt11",
    }


# --- user strings drawn as written ----------------------------------------------------

#: Names a user's file may hold: mathtext markup, TeX specials, an escaped dollar.
HOSTILE = [r"vendor-$\frac$", "a_b^c", "50%", "x{y}", "$x$", r"a\$b", "$$"]


@pytest.mark.parametrize("name", [*HOSTILE, "plain", "", "\\", "a$b"])
def test_an_escaped_string_is_drawn_as_written(name):
    """matplotlib reads an escaped string as plain text and draws the string itself: the
    same pixels as the raw string with mathtext switched off."""
    from matplotlib.text import Text

    escaped = escape_mathtext(name)
    assert Text(text=escaped)._preprocess_math(escaped) == (name, False)
    images = []
    for text, parse_math in ((escaped, True), (name, False)):
        fig = plt.figure(figsize=(3, 0.6))
        fig.text(0.05, 0.3, text, parse_math=parse_math)
        fig.canvas.draw()
        images.append(np.asarray(fig.canvas.buffer_rgba()).copy())
        plt.close(fig)
    np.testing.assert_array_equal(images[0], images[1])


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=30))
def test_no_string_is_read_as_mathtext_once_escaped(name):
    from matplotlib.text import Text

    escaped = escape_mathtext(name)
    assert Text(text=escaped)._preprocess_math(escaped) == (name, False)


@pytest.mark.slow
def test_a_report_draws_hostile_names_as_written(tmp_path_factory, monkeypatch, own_measures):
    """Algorithm, group and measure names with mathtext markup and TeX specials: the
    report runs, and every figure draws them as written (in the PNG's texts and the
    SVG's), with no other markup, overlap or text off the canvas."""
    rng = np.random.default_rng(5)
    groups = ["F$", "M_1^2", "{x}"]
    frame = pd.DataFrame({"Algorithm": HOSTILE})
    for group in groups:
        frame[f"FNMR.{group}"] = np.round(rng.uniform(0.002, 0.2, len(HOSTILE)), 4)
        frame[f"FMR.{group}"] = 10.0 ** (rng.integers(-50, -33, len(HOSTILE)) / 10)
    path = tmp_path_factory.mktemp("hostile") / "hostile.csv"
    frame.to_csv(path, index=False)
    monkeypatch.chdir(Path(__file__).resolve().parent.parent)  # tests.user_measures
    monkeypatch.setenv("PYTHONPATH", "")
    folder, records = _report(
        tmp_path_factory,
        ["report", "--data", str(path), "--measure-module", "tests.user_measures.hostile_label",
         "-p", "measures", '["fdr", "ir", "garbe", "user_dollar"]', "-p", "n_random", "100",
         "-p", "n_replicates", "30", "-p", "verdict_replicates", "3", "-p", "alpha_step", "0.05"],
        "hostile",
    )  # fmt: skip
    label = r"NCV $\frac$ a_b^c"
    strings = [*HOSTILE, *groups, label]
    for figure, data in records.items():
        assert all(found == [] for found in faults(data, names=strings).values()), figure
    for figure in ("pareto_garbe", "frontier_probability_garbe", "intervals_garbe"):
        assert named(records[figure], HOSTILE) == set(HOSTILE), figure
        svg = " ".join(records[figure]["svg"])
        assert all(name in svg for name in HOSTILE), figure
    assert label in {t["seen"] for t in records["ffmc_panels_user_dollar"]["texts"]}
    assert label in records["ffmc_panels_user_dollar"]["svg"]


@pytest.mark.parametrize("least", [1e-7, 1e-5, 3e-3])
def test_det_axes_reach_every_rate_drawn_and_their_labels_never_meet(least):
    """The DET axes' ticks follow the rates drawn (a billion comparisons reach FMRs of
    1e-6 and below, which fixed ticks from 0.01% left unlabelled), thinned so that
    neighbouring labels do not run into each other (0.01 and 0.1 did), three systems
    side by side."""
    from scipy.special import ndtri

    from audit.report.plots.scores import det_figure

    fmr = np.geomspace(least, 0.9, 60)
    fnmr = np.clip(0.5 * (least / fmr) ** 0.3, 1e-4, 0.99)
    points = pd.concat(
        [pd.DataFrame({"algorithm": a, "group": g, "fmr": fmr, "fnmr": fnmr})
         for a in ("sys-a", "sys-b", "sys-c") for g in ("F", "M")]
    )  # fmt: skip
    narrow = points["algorithm"] == "sys-c"  # one system's rates over less of the axes
    points.loc[narrow, "fmr"] = np.clip(points.loc[narrow, "fmr"] * 100, None, 0.5)
    fig = det_figure(points, grouping="group")
    data = record(fig)
    assert all(found == [] for found in faults(data).values()), faults(data)
    panels = fig.axes[:3]  # alike, over the rates of them all
    assert len({(ax.get_xlim(), ax.get_ylim()) for ax in panels}) == 1
    assert len({tuple(t.get_text() for t in ax.get_xticklabels()) for ax in panels}) == 1
    for ax in panels:
        left, right = ax.get_xlim()
        bottom, top = ax.get_ylim()
        assert left < ndtri(fmr.min()) and right > ndtri(fmr.max())
        assert bottom < ndtri(fnmr.min()) and top > ndtri(fnmr.max())
        labels = [t.get_text() for t in ax.get_xticklabels()]
        assert len(labels) >= 4 and ("95" in labels or "80" in labels)
    plt.close(fig)


def test_the_sweep_figure_names_the_measures_it_cannot_draw():
    """Measures asked for that the sweep does not hold (a score measure, a cross-group
    one) are named in the title, not dropped without a word; with none left, the
    figure says so instead of being blank under its title."""
    from conftest import synthetic

    from audit.analysis.sweeps import sweep_measures
    from audit.report.plots.scores import sweep_figure
    from audit.scores import read_scores, score_stats

    stats = score_stats(read_scores(synthetic(2000)))
    swept = sweep_measures(stats, targets=[1e-2, 1e-1])
    many = ["std_eer", "sed_mean", "sed_std", "dfi", "cei", "cell_gini"]
    for asked, drawn, said in (
        (["fdr", "std_eer", "fdr", "cell_gini"], 1, "std_eer, cell_gini"),
        (["cell_gini"], 0, "cell_gini"),
        (["fdr", *many], 1, "std_eer, sed_mean, sed_std and 3 more"),
    ):
        fig = sweep_figure(swept, asked, n_groups=3)
        data = record(fig)
        assert all(found == [] for found in faults(data).values()), faults(data)
        title = " ".join(fig.get_suptitle().split())
        assert title.endswith("; not in the sweep of these scores: " + said)
        visible = [ax for ax in fig.axes if ax.get_visible()]
        titles = [ax.get_title("left") + ax.get_title() for ax in visible]
        assert titles == (["FDR (higher is fairer)"] if drawn else [""])
        if not drawn:
            assert [t.get_text() for t in visible[0].texts] == ["no measure to draw"]
        plt.close(fig)
    fig = sweep_figure(swept, ["fdr", "ir"], n_groups=3)
    assert "not drawn" not in fig.get_suptitle()
    plt.close(fig)


@pytest.mark.filterwarnings("ignore::audit.tables.scores.ScoresWarning")
def test_a_measure_undefined_at_every_target_says_so_over_the_targets_swept():
    """A panel with nothing to draw (IR and GARBE of a group without a false match at
    any threshold: undefined) says so over the targets swept, with no y values, where
    it was blank over an axis of 1% to 10% of its own making."""
    from conftest import synthetic

    from audit.analysis.sweeps import sweep_measures
    from audit.report.plots.scores import sweep_figure
    from audit.scores import read_scores, score_stats

    stats = score_stats(read_scores(synthetic(400, algorithms=("a",))))
    swept = sweep_measures(stats, targets=[1e-4, 1e-3])
    undefined = swept.groupby("measure")["undefined"].all()
    assert undefined["ir"] and undefined["garbe"] and not undefined["fdr"]
    fig = sweep_figure(swept, ["fdr", "ir", "garbe"], n_groups=3)
    data = record(fig)
    assert all(found == [] for found in faults(data).values()), faults(data)
    for ax, empty in zip(fig.axes, (False, True, True), strict=True):
        notes = [" ".join(t.get_text().split()) for t in ax.texts]
        assert notes == (["undefined at every target FMR"] if empty else [])
        left, right = ax.get_xlim()
        assert left < 0.01 and 0.1 < right < 1  # the targets, in percent
        assert (len(ax.get_yticks()) == 0) == empty
    plt.close(fig)


def test_twelve_systems_across_the_sweep_each_look_their_own():
    """Beyond the palette's ten colours a system's line is dashed, in its panels and in the
    legend, so that no two of twelve systems are drawn alike (the eleventh and twelfth
    were the first and second again)."""
    from conftest import synthetic

    from audit.analysis.sweeps import sweep_measures
    from audit.report.plots import palette
    from audit.report.plots.scores import sweep_figure
    from audit.scores import read_scores, score_stats

    systems = [f"sys-{i:02d}" for i in range(12)]
    stats = score_stats(read_scores(synthetic(300, algorithms=tuple(systems))))
    fig = sweep_figure(sweep_measures(stats, targets=[1e-2, 1e-1]), ["fdr", "garbe"], n_groups=3)
    looks = [
        [(line.get_label(), line.get_color(), line.get_linestyle()) for line in ax.get_lines()]
        for ax in fig.axes
        if ax.get_visible()
    ]
    assert len(looks) == 2 and looks[0] == looks[1]
    assert [label for label, _, _ in looks[0]] == systems
    assert len({(colour, style) for _, colour, style in looks[0]}) == 12
    assert [colour for _, colour, _ in looks[0]] == [*palette(), *palette()[:2]]
    legend = fig.legends[0]
    assert [(t.get_text(), h.get_color(), h.get_linestyle())
            for t, h in zip(legend.get_texts(), legend.legend_handles, strict=True)] == looks[0]  # fmt: skip
    plt.close(fig)


def test_long_system_names_are_wrapped_within_the_score_figures():
    """System names of a sentence's length are wrapped, whole, in the sweep figure's legend
    (which ran 300 px off both sides) and over the DET panels (whose titles ran into
    each other, squeezing the panels); a dollar in one stays a dollar."""
    from conftest import synthetic

    from audit.analysis.sweeps import sweep_measures
    from audit.report.plots.scores import det_figure, sweep_figure
    from audit.scores import det_points, read_scores, score_stats

    systems = (
        "ResNetSE34V2 trained on VoxCeleb2 with AAM-softmax, cosine scoring, $5 budget",
        "ECAPA-TDNN (SpeechBrain) v1.0",
        "x-vector PLDA baseline from Kaldi recipe v2 with adaptive score normalisation",
    )
    stats = score_stats(read_scores(synthetic(3000, algorithms=systems)))
    for fig, wrapped in (
        # the legend in one column, where each name fits on its line
        (sweep_figure(sweep_measures(stats, targets=[1e-2, 1e-1]), ["fdr", "ir", "garbe"]), 0),
        (det_figure(det_points(stats, n_points=50), grouping="group"), 3),
    ):
        data = record(fig)
        found = faults(data, names=systems)
        # a line of a wrapped name holding its dollar is the name's, drawn as written
        found["raw markup"] = [
            f for f in found["raw markup"] if not any(f.strip("'") in n for n in systems)
        ]
        assert all(items == [] for items in found.values()), found
        whole = {"".join(name.split()) for name in systems}
        names = [t["seen"] for t in data["texts"] if "".join(t["seen"].split()) in whole]
        assert {"".join(seen.split()) for seen in names} == whole
        assert sum("\n" in seen for seen in names) == wrapped
        assert any("$5 budget" in " ".join(t["seen"].split()) for t in data["texts"])
        if not wrapped:
            assert fig.legends[0]._ncols == 1
        plt.close(fig)


def test_eleven_names_of_a_paragraph_keep_the_legend_below_the_panels():
    """Eleven system names of 100 to 150 characters, with and without spaces: the sweep
    figure grows to hold its legend below the panels (it was drawn over them), and each
    DET panel's title takes at most four lines, cut with an ellipsis (nine lines
    squeezed the panel to a strip)."""
    from conftest import synthetic

    from audit.analysis.sweeps import sweep_measures
    from audit.report.outputs import render_figure
    from audit.report.plots.scores import det_figure, sweep_figure
    from audit.scores import det_points, read_scores, score_stats

    systems = tuple(
        f"sys{i:02d}" + (" vendor" * 20 if i % 2 else "-VeryLongVendorAlgorithmName" * 5)
        for i in range(11)
    )
    stats = score_stats(read_scores(synthetic(2000, algorithms=systems)))
    fig = sweep_figure(sweep_measures(stats, targets=[1e-2, 1e-1]), ["fdr", "garbe"])
    data = record(fig)
    assert all(found == [] for found in faults(data, names=systems).values()), faults(data)
    render_figure(fig)  # laid out as the report's PNG is, at its 150 dpi: measured there
    fig.set_dpi(150)
    renderer = fig.canvas.get_renderer()
    legend = fig.legends[0].get_window_extent(renderer)
    panels = [ax.get_tightbbox(renderer) for ax in fig.axes if ax.get_visible()]
    assert legend.y1 < min(box.y0 for box in panels)  # below every panel and its labels
    assert fig.get_figheight() > 4
    plt.close(fig)
    fig = det_figure(det_points(stats, n_points=30), grouping="group")
    data = record(fig)
    assert all(found == [] for found in faults(data, names=systems).values()), faults(data)
    titles = [ax.get_title("left") for ax in fig.axes if ax.get_visible()]  # the theme's
    assert len(titles) == 11 and all(t.count("\n") <= 3 for t in titles)
    assert all(t.endswith("\N{HORIZONTAL ELLIPSIS}") for t in titles)
    for ax, system in zip(fig.axes, systems, strict=False):  # each the start of its name
        shown = "".join(ax.get_title("left").removesuffix("\N{HORIZONTAL ELLIPSIS}").split())
        assert "".join(system.split()).startswith(shown)
    plt.close(fig)


@pytest.mark.filterwarnings("ignore::audit.tables.labels.LabelWarning")  # said as read
def test_a_name_with_control_characters_is_drawn_escaped_and_its_svg_is_xml():
    """A system named with an escape sequence and a direction override: drawn as the
    escapes (no font has a glyph for them), and the SVG stays XML (it held a raw escape,
    which XML refuses)."""
    import xml.etree.ElementTree as ET

    from conftest import synthetic

    from audit.analysis.sweeps import sweep_measures
    from audit.report.outputs import render_figure
    from audit.report.plots.scores import sweep_figure
    from audit.scores import read_scores, score_stats

    systems = ("evil\x1b[2J", "\u202eright-to-left")
    stats = score_stats(read_scores(synthetic(2000, algorithms=systems)))
    fig = sweep_figure(sweep_measures(stats, targets=[1e-2, 1e-1]), ["fdr"])
    data = record(fig)
    shown = {t["seen"] for t in data["texts"]}
    assert {"evil\\x1b[2J", "\\u202eright-to-left"} <= shown
    png, svg = render_figure(fig)
    ET.fromstring(svg)  # well-formed
    plt.close(fig)


def test_the_score_figures_draw_hostile_names_as_written():
    """Systems and groups named with markup in the sweep and DET figures (built in the
    package, as the scores notebook draws them)."""
    from conftest import synthetic

    from audit.analysis.sweeps import sweep_measures
    from audit.report.plots.scores import det_figure, sweep_figure
    from audit.scores import det_points, read_scores, score_stats

    systems, groups = [r"vendor-$\frac$", "a_b^c"], ["F$", "50%", "x{y}"]
    frame = synthetic(3000, groups=tuple(groups), algorithms=tuple(systems))
    stats = score_stats(read_scores(frame))
    swept = sweep_measures(stats, targets=[1e-2, 3e-2, 1e-1])
    strings = [*systems, *groups, "$by$"]
    for fig in (
        sweep_figure(swept, ["fdr", "ir", "garbe", "nrb"], grouping="$by$", n_groups=3),
        det_figure(det_points(stats, n_points=50), grouping="$by$"),
    ):
        data = record(fig)
        assert all(found == [] for found in faults(data, names=strings).values()), faults(data)
        assert named(data, systems) == set(systems)
        assert any("$by$" in t["seen"] for t in data["texts"])
        plt.close(fig)
    assert named(data, groups) == set(groups)  # the DET legend names every group


def test_a_forest_plot_of_a_100_character_name_stays_on_its_figure():
    """An algorithm named with 100 letters pushed the intervals' forest plot off its
    figure (the layout collapsed, the name and the title cut): the name is written
    shortened, the title says so, and nothing leaves the canvas."""
    from audit.report.outputs import render_figure
    from audit.report.plots.uncertainty import LONGEST_NAME, plot_intervals

    names = ["alg-1", "V" * 100, "<b>vendor</b>", "alg-2"]
    values = np.array([0.99, 0.98, 0.97, 0.96])
    intervals = pd.DataFrame(
        {"measure": "fdr", "algorithm": names, "value": values, "low": values - 0.01,
         "high": values + 0.01}
    )  # fmt: skip
    fig = plot_intervals(intervals, measure="fdr").figure
    render_figure(fig)  # laid out, as a report saves it (a collapsed layout warns: an error)
    data = record(fig)
    assert all(found == [] for found in faults(data).values()), faults(data)
    shown = {t["seen"] for t in data["texts"]}
    assert "V" * 100 not in shown and any(
        s.startswith("V" * 20) and "\N{HORIZONTAL ELLIPSIS}" in s for s in shown
    )
    assert "<b>vendor</b>" in shown
    title = fig.axes[0].get_title("left").replace("\n", " ")
    assert f"names of more than {LONGEST_NAME} characters shortened" in title
    plt.close(fig)


def test_the_ffmc_panels_of_a_measure_with_a_long_label_stay_on_their_figure(annex15):
    """A user's measure labelled with 97 characters ran its axis labels into the next
    panels and its title off the figure: the axes write it shortened, the title on two
    lines at most, and nothing leaves the canvas or runs over another text."""
    from audit.analysis import ffmc
    from audit.report.outputs import render_figure
    from audit.report.plots.ffmc import LONGEST_AXIS_LABEL, ffmc_panels

    report = ffmc.ffmc_report(annex15, ["garbe"], alpha_grid=np.linspace(0, 1, 21), n_random=50)
    result = report.results[("garbe", "FFMC.1")]
    label = "<b>gap</b> $\\alpha_1$ **x** " + "L" * 70
    fig = ffmc_panels(result.detail, result.by_alpha, label=label)
    render_figure(fig)
    data = record(fig)
    drawn = [label, "<b>gap</b> $\\alpha_1$ **x**", "<b>gap</b> $\\alpha_"]  # whole, and cut
    assert all(found == [] for found in faults(data, names=drawn).values()), faults(data)
    title = fig.get_suptitle()
    assert title.count("\n") <= 1 and "".join(title.split()).replace("\\$", "$").startswith(
        "".join(label.split())[:40]
    )
    ylabel = fig.axes[2].get_ylabel().replace("\\$", "$")
    assert len(ylabel) == LONGEST_AXIS_LABEL and ylabel.startswith("<b>gap</b>")
    plt.close(fig)
