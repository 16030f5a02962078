"""The scores report of a score set read in streaming passes: its tables, figures and
front page, without the notebook.

A folder or a glob of Parquet files, or one Parquet file larger than the memory
budget, is read by :class:`audit.scores.streaming.StreamingScores` in passes
over its row groups (on a Dask cluster when a scheduler is named).  The tables
are those the scores notebook writes in memory -- rates at the target FMR, the
sweep and the measures along it, the rate and score measures, the EER of each
group, the DET points, the FFMC audit of the rates -- with the same values, bit for
bit, and the notebook's figures of them; the front page is built from them as for
any report.
"""

from __future__ import annotations

import json
import os
import threading
import warnings
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from audit.exceptions import warn

#: The name its outputs are declared under in the manifest (:mod:`audit.report.outputs`).
NOTEBOOK = "streamed"
TOPIC = "Bootstrap"
NO_BOOTSTRAP = (
    "No bootstrap: scores read in streaming passes are not resampled (the scores notebook "
    "resamples subjects when the scores fit in memory)."
)


#: ``--merge-labels`` asked of a streamed score set.
STREAMED_MERGE = (
    "{scores}: --merge-labels reads labels spelled two ways as one, which a score set "
    "streamed in chunks (on a cluster, from a folder or a glob of Parquet files, or from "
    "one Parquet file larger than --memory) cannot do; write the labels alike, or give "
    "one Parquet file within --memory, which is read whole"
)

#: A bootstrap (``--replicates N``, or ``-p bootstrap_replicates N``) asked of a streamed
#: score set.
STREAMED_BOOTSTRAP = (
    "{scores}: a bootstrap of {replicates} replicates (--replicates or -p "
    "bootstrap_replicates) is asked for, which a score set streamed in chunks (on a "
    "cluster, from a folder or a glob of Parquet files, or from one Parquet file larger "
    "than --memory) cannot have: its scores are never all in memory to be resampled; "
    "leave it out (or give 0), or give one Parquet file within --memory, which is read "
    "whole and resampled by subject"
)


#: ``--input-copy always`` asked of a streamed score set.
STREAMED_COPY = (
    "{scores}: --input-copy always asks for a copy of the scores in the report, which a "
    "score set streamed in chunks does not get (its files may be of any size): its record "
    "names each file with its size and sha256; give --input-copy never or auto, or copy "
    "the files yourself"
)

#: ``--scheduler`` where Dask's distributed is not installed, or no scheduler answers.
NO_DISTRIBUTED = (
    "--scheduler {scheduler}: running the passes on a Dask cluster needs Dask's "
    "distributed, which is not installed ({reason}); pip install 'audit[dask]', or leave "
    "--scheduler out to stream the scores in this process"
)
NO_SCHEDULER = (
    "--scheduler {scheduler}: no Dask scheduler could be reached there ({reason}); check "
    "the address (tcp://HOST:PORT) and that the scheduler runs, or leave --scheduler out "
    "to stream the scores in this process"
)


SCHEDULER_BUILT_IN = (
    "--scheduler {scheduler}: a Dask cluster runs the passes over Parquet scores (a file, "
    "a folder or a glob); the built-in scores are a table read whole in this process: "
    "give the Parquet scores, or leave --scheduler out"
)


def connect(scheduler: str):
    """A Dask client of the scheduler at ``scheduler``; refused, saying why, where Dask's
    distributed is missing or no scheduler answers there."""
    from audit.exceptions import UsageError

    try:
        import dask
        from dask.utils import parse_timedelta
        from distributed import Client
    except ImportError as error:
        raise UsageError(NO_DISTRIBUTED.format(scheduler=scheduler, reason=error)) from error
    # Dask's connection timeout does not cover a listener that never answers its
    # handshake (a web server, say): the client is made in a thread, waited for as long
    # as half as long again as that timeout (which fails first, where it applies)
    wait = 1.5 * parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), "s") + 1
    made: dict = {}

    def make() -> None:
        try:
            made["client"] = Client(scheduler)
        except BaseException as error:  # noqa: BLE001 - handed to the waiting thread
            made["error"] = error

    thread = threading.Thread(target=make, name="audit-dask-connect", daemon=True)
    thread.start()
    thread.join(wait)
    if thread.is_alive():
        reason = f"no answer within {wait:g} s: is a Dask scheduler listening there?"
        raise UsageError(NO_SCHEDULER.format(scheduler=scheduler, reason=reason))
    error = made.get("error")
    if isinstance(error, OSError | TimeoutError | ValueError | TypeError):  # TypeError: tls://
        reason = f"{type(error).__name__}: {error}"
        raise UsageError(NO_SCHEDULER.format(scheduler=scheduler, reason=reason)) from error
    if error is not None:
        raise error
    return made["client"]


def streams(scores: str | os.PathLike | None, memory: str, scheduler: str | None) -> bool:
    """Whether the scores at ``scores`` are read in streaming passes: on a cluster, from a
    folder or a glob of Parquet files, or from one Parquet file larger than ``memory``."""
    from audit.exceptions import UsageError
    from audit.scores.streaming import data_bytes, parse_memory
    from audit.tables.common import is_glob, is_parquet_name

    budget = parse_memory(memory)  # refused as given, whatever the scores
    if not scores:
        if scheduler is not None:  # a cluster given for what is read whole
            raise UsageError(SCHEDULER_BUILT_IN.format(scheduler=scheduler))
        return False
    text = str(scores)
    if scheduler is not None or is_glob(text) or Path(text).is_dir():
        return True
    return is_parquet_name(text) and data_bytes(text) > budget


def streamed_report(
    scores: str,
    name: str,
    parameters: Mapping,
    *,
    memory: str,
    scheduler: str | None = None,
    reports_root: str | os.PathLike | None = None,
    progress: bool = True,
    input_copy: str = "auto",
) -> Path:
    """The tables of the scores report of ``scores``, by the streaming engine, published
    as the report ``name``; return its folder.

    ``parameters`` are the scores notebook's (``target_fmr``, ``alpha``,
    ``sweep_min``, ``sweep_max``, ``sweep_points``, ``higher_is_match``,
    ``attributes``, ``ignore``), with its defaults where absent; ``input_copy="always"``,
    ``merge_labels`` and a bootstrap (``bootstrap_replicates`` above 0), which a
    streamed score set cannot honour, are refused.
    """
    import numpy as np
    import pandas as pd

    from audit.exceptions import UsageError
    from audit.scores.streaming import parquet_files

    files = parquet_files(scores)  # a glob or a folder of no file says so first: the likeliest slip
    if input_copy == "always":  # asked for, and not to be had
        raise UsageError(STREAMED_COPY.format(scores=scores))
    if parameters.get("merge_labels"):
        raise UsageError(STREAMED_MERGE.format(scores=scores))
    if parameters.get("bootstrap_replicates"):  # asked for (its default is not given here)
        replicates = parameters["bootstrap_replicates"]
        raise UsageError(STREAMED_BOOTSTRAP.format(scores=scores, replicates=replicates))

    from audit.analysis import ffmc
    from audit.analysis.sweeps import sweep_measures
    from audit.exceptions import OrientationWarning
    from audit.measures.registry import evaluate_many, evaluate_scores, measure_table
    from audit.measures.scores import eer_table
    from audit.report.notices import save_warnings
    from audit.report.outputs import recording, save_sentences, save_table
    from audit.report.runner import with_defaults, write_report
    from audit.scores import det_points, sweep
    from audit.scores.orientation import orientation_warning
    from audit.scores.streaming import StreamingScores, _say  # _say: as apply gives its own
    from audit.sources.download import sha256sum
    from audit.tables.scores import ScoresWarning, few_comparisons

    given = with_defaults("scores", parameters)
    target, alpha = given["target_fmr"], given["alpha"]
    targets = np.geomspace(given["sweep_min"], given["sweep_max"], given["sweep_points"])

    def report(stats) -> dict:
        """Every table, from one set of statistics (one sample plans the first pass); as
        in the notebook, no EER, score measure or DET without both kinds of comparison;
        the orientation, and rates resting on few comparisons, warned of as in memory."""
        if (warning := orientation_warning(stats)) is not None:
            warn(warning, OrientationWarning)
        counted = {  # the comparisons each group's rates rest on, as read_scores counts them
            "mated": np.concatenate([stats.n_mated(a) for a in range(len(stats.algorithms))]),
            "within-group non-mated": np.concatenate(
                [stats.n_nonmated(a) for a in range(len(stats.algorithms))]
            ),
        }
        few = few_comparisons(str(scores), list(stats.algorithms), list(stats.groups), counted)
        if few is not None:
            warn(few, ScoresWarning)
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

    client = connect(scheduler) if scheduler is not None else None
    # each file's sha256, for the report's record, read in a thread of its own beside the
    # passes (hashlib lets go of the interpreter)
    hashing = ThreadPoolExecutor(1)
    try:
        engine = StreamingScores(
            scores,
            memory=memory,
            higher_is_match=given["higher_is_match"],
            attributes=given["attributes"],
            ignore=given["ignore"] or (),
            engine="dask" if client is not None else "streaming",
            client=client,
            progress=progress,
        )
        digests = {f: hashing.submit(sha256sum, f) for f in files}
        # the warnings of the passes, of the answer and of the measures, recorded for the
        # front page (the filters in force decide which, as for a notebook's), then given
        # again as raised
        with warnings.catch_warnings(record=True) as said:
            tables = engine.apply(report)
            swept = tables["sweep"]
            rates = swept[swept["target_fmr"] == target].drop(
                columns=["target_fmr", "threshold", "attained_fmr"]
            )
            rates = rates.reset_index(drop=True)
            rated = evaluate_many(rates, alpha=alpha, zero_division="flag").drop(columns="alpha")
            # the FFMC audit of the rates at the operating point, as the notebook has it
            verdicts = ffmc.ffmc_table(rates)
            verdicts.insert(0, "grouping", "group")
        n_groups = engine.apply(lambda stats: len(stats.groups))  # known: no pass
        sums = {f: digest.result() for f, digest in digests.items()}
    finally:
        hashing.shutdown(cancel_futures=True)
        if client is not None:
            client.close()
    said = _once(said)
    _say(said)
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
        "engine": "dask" if scheduler is not None else "streaming",
        "scores": str(scores),
        "files": [
            {"path": f, "bytes": Path(f).stat().st_size, "sha256": sha256}
            for f, sha256 in sums.items()
        ],
        "passes": engine.passes,
        "parameters": {k: v for k, v in parameters.items() if k != "scores_path"},
    }

    def write(folder: Path) -> None:
        with recording(NOTEBOOK, folder):  # declared, by role, as a notebook declares them
            # named as the notebook names it, for its one grouping
            save_table(rates, f"rates_at_fmr_{target:g}_group", folder)
            save_table(measures, "measures", folder)
            save_table(verdicts, "ffmc_table", folder)
            save_table(
                measure_table(dict.fromkeys(verdicts["measure"])), "measure_registry", folder
            )
            for table_name, table in tables.items():
                save_table(table, table_name, folder)
            with warnings.catch_warnings(record=True) as drawn:  # a glyph missing, say
                _figures(tables, given, n_groups, folder)
            drawn = _once(drawn)
            save_warnings([*said, *drawn], NOTEBOOK, folder)
            save_sentences(
                [NO_BOOTSTRAP], "robustness_streamed", folder, topic=TOPIC, role="robustness"
            )
        (folder / "manifest.json").write_text(json.dumps(manifest, indent=2, allow_nan=False))
        _say(drawn)

    return write_report(name, write, reports_root=reports_root)


def _once(caught: list) -> list:
    """The warnings recorded, each raised at one place with one message once, as the
    default filter shows them (and a notebook records them): a measure warning of
    each of its values said it as often."""
    seen, out = set(), []
    for w in caught:
        key = (w.category, str(w.message), w.filename, w.lineno)
        if key not in seen:
            seen.add(key)
            out.append(w)
    return out


def _figures(tables: dict, parameters: Mapping, n_groups: int, folder: Path) -> None:
    """The figures the scores notebook draws of a file's groups, from the same tables:
    the measures across the sweep, and the DET curves (for at most 12 groups, with
    both kinds of comparison); ``parameters`` with the notebook's defaults."""
    import matplotlib.pyplot as plt

    from audit.report.outputs import save_figure
    from audit.report.plots.scores import det_figure, sweep_figure

    measures = parameters["sweep_plot_measures"]

    def save(fig, name: str) -> None:
        try:
            save_figure(fig, name, folder)
        finally:
            plt.close(fig)

    swept = tables["sweep_measures"]
    save(sweep_figure(swept, measures, grouping="group", n_groups=n_groups), "sweep_group")
    if "det_points" in tables:
        save(det_figure(tables["det_points"], grouping="group"), "det_group")
