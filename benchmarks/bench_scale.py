"""Benchmark: a sweep of per-group rates on score sets of 10^7 to 10^9 comparisons,
each figure printed as a ratio to its floors, measured in the same run.

Not a test.  Run from the repository root (``pip install -e '.[bench,dask,parquet]'``)::

    .venv/bin/python benchmarks/bench_scale.py                      # 1e7 and 1e8 rows
    .venv/bin/python benchmarks/bench_scale.py --rows 1e8 --engines scan read streaming --repeat 3
    .venv/bin/python benchmarks/bench_scale.py --billion --repeat 3 # adds 1e9 (5.3 GB of disk)
    .venv/bin/python benchmarks/bench_scale.py --rows 5e6 1e8 --engines read_scores
    .venv/bin/python benchmarks/bench_scale.py --rows 1e8 --engines read streaming report

For each size a synthetic dataset is written (seeded) under ``--dir``
(default ``/tmp/bench-scale``) as Parquet files of 10^7 rows in row groups of
2^20 rows: 8 groups, two algorithms, 10% mated, half the non-mated pairs
cross-group, float32 similarity scores (normal, the mated shifted up, each
group slightly apart), int8 labels (8 bytes a row in memory).  It is deleted
afterwards unless ``--keep``.

Each engine runs in its own process, one after the other, on the same files;
with ``--repeat`` the rounds are interleaved (every engine once, then again),
so that a machine shared with other work loads them alike, each round starting one
engine further along the list (an engine run straight after another was measured
up to 15% slower than the same one run later, so no engine keeps one place):

``scan``
    The I/O floor: a pyarrow scan, row group by row group, that only sums the
    score column.
``read``
    The floor of a pass: the same scan reading the five columns a pass needs
    (algorithm, score, mated, group_1, group_2), computing nothing.
``memory``
    :func:`~audit.scores.read_scores` of the folder, :func:`~audit.scores.score_stats`
    and :func:`~audit.scores.sweep`; skipped above ``--memory-max`` rows.
``read_scores``
    :func:`~audit.scores.read_scores` alone.  Its ``x input`` divides the memory
    it took by the bytes of the arrays it returns for the score, the mated flag
    and the groups (7 a row here); goal: at most 2.5, from 5e6 rows.
``streaming``
    :class:`audit.scores.streaming.StreamingScores` with ``--memory``, counting
    with the compiled loops (:mod:`audit.scores.counting`) where the install
    built them; goals: at most 1.5x ``read`` and 4x ``scan``, from 1e8 rows.
``streaming-numpy``
    The same, counting with the NumPy path.
``report``
    The streamed scores report, as ``audit scores FOLDER --memory`` makes it
    (:func:`audit.report.streamed.streamed_report`, default parameters): the rates at
    FMR 0.1%, the sweep and its measures, every rate and score measure, the EERs, the
    DET points, the FFMC table, their figures and the front page; no goal of its own.
``dask``
    The same on a ``distributed.LocalCluster`` of 2 worker processes (1
    thread each), started (and its libraries imported) before the clock; its
    peak RSS adds the workers'.
``before:streaming``, ``before:read_scores``, ``before:report``
    With ``--before PATH`` (a checkout of another version, e.g. ``git worktree
    add /tmp/before main``): those engines with that version's package, in the
    same rounds, run by the checkout's own ``.venv/bin/python`` where it has one
    (so that it counts with what its install built or installed).

Columns: wall-clock seconds (dataset already on disk, page cache warm from
the previous engine; the median of the rounds), CPU seconds of the process tree
in that time (user and system: the work done, less sensitive to other work on
the machine than the wall clock), peak RSS of the process tree
in MB (the largest of the rounds: the kernel's own peak of an engine's process, where
the engine starts no other and Linux lets it be reset; else sampled every 20 ms,
``dask`` and ``report``), ``x input`` (the peak
less the RSS before the engine started -- the interpreter and its libraries,
about 150 MB -- over the input bytes: 8 a row, or as said for ``read_scores``),
``x scan`` and ``x read`` (time over the floor's, per round, then the median),
``load`` (the machine's 1-minute load average as each run ended, the median of
the rounds: 2 cores here, so above 2 means other work was waiting too),
``same`` (the sweep equals the first engine's, every value) and ``passes``
(full passes over the data, the sample aside).  Targets: 21 FMRs, 0.1% to 10%.
Below the table, a line for each goal measured at a size it is set for: its ratio,
and whether it was met.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROWS_PER_FILE = 10**7
ROW_GROUP = 1 << 20
TARGETS = np.logspace(-3, -1, 21)


def generate(folder: Path, rows: int, seed: int = 0) -> None:
    """``rows`` synthetic comparisons as Parquet files under ``folder``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    shift = np.linspace(-0.05, 0.05, 8)
    for f, start in enumerate(range(0, rows, ROWS_PER_FILE)):
        n_file = min(ROWS_PER_FILE, rows - start)
        with pq.ParquetWriter(folder / f"part-{f:04d}.parquet", _schema(pa)) as writer:
            for lo in range(0, n_file, ROW_GROUP):
                n = min(ROW_GROUP, n_file - lo)
                g1 = rng.integers(0, 8, n, dtype=np.int8)
                mated = rng.random(n) < 0.1
                cross = ~mated & (rng.random(n) < 0.5)
                g2 = np.where(cross, rng.integers(0, 8, n, dtype=np.int8), g1).astype(np.int8)
                score = np.where(mated, rng.normal(0.6, 0.12, n), rng.normal(0.1, 0.1, n))
                score += shift[g1]
                algorithm = rng.integers(0, 2, n, dtype=np.int8)
                score += 0.02 * algorithm
                table = pa.table(
                    {
                        "algorithm": algorithm,
                        "score": score.astype(np.float32),
                        "mated": mated,
                        "group_1": g1,
                        "group_2": g2,
                    },
                    schema=_schema(pa),
                )
                writer.write_table(table, row_group_size=ROW_GROUP)


def _schema(pa):
    return pa.schema(
        [
            ("algorithm", pa.int8()),
            ("score", pa.float32()),
            ("mated", pa.bool_()),
            ("group_1", pa.int8()),
            ("group_2", pa.int8()),
        ]
    )


# ------------------------------------------------------------------ one engine


class _Peak:
    """Peak RSS of this process and its children.

    Of this process alone (``alone``: an engine that starts no process), the kernel's
    own high-water mark, reset as the clock starts (Linux: ``VmHWM``, reset through
    ``/proc/self/clear_refs``): exact, and nothing runs beside the engine.  Else, or
    where that mark cannot be reset, sampled every 20 ms in a thread, which misses a
    peak shorter than that and takes the interpreter from the engine while it samples
    (side by side at 1e8 rows: the read took 0.77 s without it, 0.82 s with it)."""

    def __init__(self, alone: bool = False):
        import psutil

        self.process = psutil.Process()
        self.peak = self.base = sum(
            p.memory_info().rss for p in [self.process, *self.process.children(recursive=True)]
        )
        self.thread = None
        if alone and _reset_high_water_mark():
            return
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        import psutil

        while self.running:
            total = 0
            for p in [self.process, *self.process.children(recursive=True)]:
                try:
                    total += p.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            time.sleep(0.02)

    def cpu(self) -> float:
        """CPU seconds (user and system) of this process and its children so far."""
        import psutil

        total = 0.0
        for p in [self.process, *self.process.children(recursive=True)]:
            try:
                times = p.cpu_times()
            except psutil.Error:
                continue
            total += times.user + times.system
        return total

    def stop(self) -> int:
        if self.thread is None:
            return _status_bytes("VmHWM")
        self.running = False
        self.thread.join()
        return self.peak


def _status_bytes(field: str) -> int:
    """A size of this process's ``/proc/self/status`` (``VmRSS``, ``VmHWM``), in bytes."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(field)


def _reset_high_water_mark() -> bool:
    """Reset this process's peak RSS to its RSS now; False where Linux's mark is not
    there to reset (another system, or a kernel before 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        return _status_bytes("VmHWM") <= _status_bytes("VmRSS") + (1 << 20)
    except (OSError, KeyError):
        return False


def _warm() -> None:
    """Imports and first calls that cost a process a second once, outside the clock."""
    import pyarrow as pa

    import audit.scores.streaming  # noqa: F401

    pa.chunked_array([pa.array([0.0], pa.float32())]).to_numpy()  # the first takes 0.3 s


#: The columns a pass reads (all the dataset has).
PASS_COLUMNS = ["algorithm", "score", "mated", "group_1", "group_2"]
#: What ``--engines`` runs (the module docstring says what each is).
ENGINES = (
    "scan",
    "read",
    "memory",
    "read_scores",
    "streaming",
    "streaming-numpy",
    "dask",
    "report",
)


def run_engine(engine: str, folder: str, memory: str, out: str) -> None:
    """Run one engine in this process; write its figures (and sweep) to ``out``."""
    import pyarrow.parquet as pq

    files = sorted(str(p) for p in Path(folder).glob("*.parquet"))
    sweep = None
    passes = None
    input_bytes = None
    if engine in ("memory", "read_scores"):
        from audit.scores import read_scores, score_stats
        from audit.scores import sweep as in_memory_sweep
    elif engine in ("streaming", "streaming-numpy", "dask"):
        from audit.scores.streaming import StreamingScores

        if engine == "streaming-numpy":
            from audit.scores import counting

            counting.use("numpy")
    elif engine == "report":
        import tempfile
        import warnings

        from audit.report.streamed import streamed_report

        warnings.simplefilter("ignore")  # (what it warns of is on its front page)
        reports = tempfile.mkdtemp(prefix="bench-report-")
    if engine == "dask":  # the cluster starts before the clock and the memory baseline
        from distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
        client.run(_warm)  # a running cluster has imported its libraries
    _warm()
    peak = _Peak(alone=engine not in ("dask", "report"))
    cpu = peak.cpu()
    start = time.perf_counter()
    if engine == "scan":
        total = 0.0
        for path in files:
            file = pq.ParquetFile(path)
            for g in range(file.num_row_groups):
                column = file.read_row_group(g, columns=["score"]).column(0)
                total += float(np.sum(column.to_numpy(), dtype=np.float64))
    elif engine == "read":
        rows = 0
        for path in files:
            file = pq.ParquetFile(path)
            for g in range(file.num_row_groups):
                rows += file.read_row_group(g, columns=PASS_COLUMNS).num_rows
    elif engine == "memory":
        stats = score_stats(read_scores(folder))
        sweep = in_memory_sweep(stats, TARGETS)
    elif engine == "read_scores":
        table = read_scores(folder)
        arrays = {id(a): a for a in _returned(table)}
        input_bytes = sum(a.nbytes for a in arrays.values())
    elif engine == "report":
        streamed_report(folder, "bench", {}, memory=memory, reports_root=reports, progress=False)
    else:
        kwargs = {"engine": "dask", "client": client} if engine == "dask" else {}
        streamed = StreamingScores(folder, memory=memory, **kwargs)
        sweep = streamed.sweep(TARGETS)
        passes = streamed.passes
    seconds = time.perf_counter() - start
    cpu = peak.cpu() - cpu
    rss = peak.stop()
    if engine == "report":
        shutil.rmtree(reports)
    if engine == "dask":
        client.close()
        cluster.close()
    if sweep is not None:
        sweep.to_pickle(out + ".sweep")
    figures = {"seconds": seconds, "peak_mb": rss / 2**20, "base_mb": peak.base / 2**20}
    figures |= {"cpu": cpu, "passes": passes, "input_bytes": input_bytes}
    Path(out).write_text(json.dumps(figures))


def _returned(table) -> list:
    """The arrays of a score table holding the score, the mated flag and the groups
    (one array when both sides share their codes)."""
    import numpy as np

    arrays = [np.asarray(table["score"]), np.asarray(table["mated"])]
    codes = [table[c].array.codes for c in ("group_1", "group_2")]
    if np.shares_memory(*codes):
        codes = codes[:1]
    return arrays + [c.base if c.base is not None else c for c in codes]


# -------------------------------------------------------------------- the table


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", nargs="+", type=float, default=[1e7, 1e8])
    parser.add_argument("--billion", action="store_true", help="add 1e9 rows")
    parser.add_argument(
        "--engines",
        nargs="+",
        choices=ENGINES,
        default=["scan", "read", "memory", "streaming", "dask"],
        metavar="ENGINE",
        help="what to run: the floors scan and read, and the engines (this file's docstring "
        "says what each is); --before adds its 'before:' engines",
    )
    parser.add_argument("--repeat", type=int, default=1, help="rounds of the engines, interleaved")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/bench-scale"))
    parser.add_argument("--memory", default="2GB", help="budget of the streaming engines")
    parser.add_argument("--memory-max", type=float, default=1e8, help="largest in-memory case")
    parser.add_argument("--keep", action="store_true", help="keep the generated datasets")
    parser.add_argument(
        "--before",
        type=Path,
        help="a checkout of another version of audit: its streaming, read_scores and report "
        "engines run too (as 'before:ENGINE'), interleaved with these",
    )
    parser.add_argument("--engine", help=argparse.SUPPRESS)  # internal: run one engine
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.engine:
        run_engine(args.engine, args.data, args.memory, args.out)
        return 0
    import pandas as pd

    sizes = [int(r) for r in args.rows] + ([10**9] if args.billion else [])
    goals: list[str] = []
    table = [
        f"{'rows':>6} {'engine':>20} {'s':>8} {'cpu s':>7} {'peak MB':>8} {'x input':>7} "
        f"{'x scan':>7} {'x read':>7} {'load':>5} {'same':>5} {'passes':>6}"
    ]
    print(f"# {os.cpu_count()} cores; load {os.getloadavg()[0]:.1f} at the start", flush=True)
    for rows in sizes:
        folder = args.dir / f"scores-{rows:.0e}"
        if not folder.exists():
            started = time.perf_counter()
            generate(folder, rows)
            size = sum(p.stat().st_size for p in folder.glob("*.parquet")) / 2**20
            print(
                f"# {rows:.0e} rows: {size:.0f} MB on disk in {time.perf_counter() - started:.0f} s"
            )
        engines = [
            e for e in args.engines if e not in ("memory", "read_scores") or rows <= args.memory_max
        ]
        if args.before is not None:
            before = ("streaming", "read_scores", "report")
            engines += [f"before:{e}" for e in engines if e in before]
        runs: dict[str, list] = {engine: [] for engine in engines}
        reference = None
        for round_ in range(args.repeat):
            turn = round_ % len(engines)
            for engine in engines[turn:] + engines[:turn]:
                out = str(args.dir / f"result-{engine.replace(':', '-')}.json")
                env = dict(os.environ)
                python = sys.executable
                if engine.startswith("before:"):  # the other version's package first
                    env["PYTHONPATH"] = str(args.before.resolve())
                    # and its own environment, where it has one (what it counted with)
                    if (args.before / ".venv" / "bin" / "python").exists():
                        python = str(args.before / ".venv" / "bin" / "python")
                subprocess.run(
                    [python, __file__, "--engine", engine.removeprefix("before:"),
                     "--data", str(folder), "--out", out, "--memory", args.memory],
                    check=True,
                    env=env,
                )  # fmt: skip
                figures = json.loads(Path(out).read_text())
                figures["load"] = os.getloadavg()[0]
                os.remove(out)
                figures["same"] = ""
                if os.path.exists(out + ".sweep"):
                    sweep = pd.read_pickle(out + ".sweep")
                    os.remove(out + ".sweep")
                    if reference is None:
                        reference = sweep
                    figures["same"] = str(sweep.equals(reference))
                runs[engine].append(figures)
                print(
                    f"# round {round_ + 1}: {rows:.0e} {engine:>20} {figures['seconds']:8.2f} s "
                    f"{figures['peak_mb']:8.0f} MB, load {figures['load']:.1f}",
                    flush=True,
                )
        for engine in engines:
            table.append(_row(rows, engine, runs))
        goals += _goals(rows, runs)
        if not args.keep:
            shutil.rmtree(folder)
    print("\n".join(table))
    if goals:
        print("\n".join(goals))
    return 0


#: The goals: (engine, floor, at most, from how many rows), a floor being an engine's
#: time or "input" (memory). Below those sizes a pass is its fixed costs, not its rows.
GOALS = (
    ("streaming", "read", 1.5, 10**8),
    ("streaming", "scan", 4.0, 10**8),
    ("read_scores", "input", 2.5, 5 * 10**6),
)


def _goals(rows: int, runs: dict) -> list[str]:
    """A line for each goal whose engines ran at this size: its ratio, met or not."""
    lines = []
    for engine, floor, most, smallest in GOALS:
        if rows < smallest or engine not in runs or (floor != "input" and floor not in runs):
            continue
        if floor == "input":
            ratio, what = _used(rows, runs[engine]), "peak memory at most {most:g}x its input"
        else:
            ratio, what = _ratio(runs[engine], runs[floor]), "at most {most:g}x the " + floor
        verdict = "met" if ratio <= most else "NOT met"
        lines.append(
            f"- {engine} at {rows:.0e}, {what.format(most=most)}: {ratio:.2f}x ({verdict})"
        )
    return lines


def _ratio(mine: list, floor: list) -> float:
    """The time of ``mine`` over the floor's, round by round, then the median."""
    return float(np.median([f["seconds"] / g["seconds"] for f, g in zip(mine, floor, strict=True)]))


def _used(rows: int, mine: list) -> float:
    """The memory an engine took (its peak over its RSS before it started, the largest
    of the rounds) over its input's bytes."""
    used = max(f["peak_mb"] - f["base_mb"] for f in mine) * 2**20
    return used / (mine[0]["input_bytes"] or 8 * rows)


def _row(rows: int, engine: str, runs: dict) -> str:
    """One line of the table: medians over the rounds, ratios taken round by round."""
    mine = runs[engine]
    seconds = float(np.median([f["seconds"] for f in mine]))
    cpu = float(np.median([f["cpu"] for f in mine]))
    peak = max(f["peak_mb"] for f in mine)
    used = _used(rows, mine)  # memory it took: the peak over the RSS before it started
    ratios = [
        f"{_ratio(mine, runs[floor]):.2f}" if floor in runs else "" for floor in ("scan", "read")
    ]
    load = float(np.median([f["load"] for f in mine]))
    same = "" if not mine[0]["same"] else str(all(f["same"] == "True" for f in mine))
    passes = "" if mine[0]["passes"] is None else mine[0]["passes"]
    return (
        f"{rows:>6.0e} {engine:>20} {seconds:>8.2f} {cpu:>7.2f} {peak:>8.0f} {used:>7.2f} "
        f"{ratios[0]:>7} {ratios[1]:>7} {load:>5.1f} {same:>5} {passes:>6}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
