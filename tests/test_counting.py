"""The counting of a pass: the compiled loops and the NumPy path give the counts, kept
rows and sub-zone counts of a literal row-by-row transcription, bit for bit; the
NumPy path counts where the compiled loops were not built."""

from __future__ import annotations

import ctypes
import dataclasses
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit.exceptions import ParameterError
from audit.scores import counting
from audit.scores import zones as Z
from audit.tables import chunks as CH
from audit.validation import REFUSED

KERNELS = ["compiled", "numpy"]
#: The tests of the compiled loops, where the install built them (it does where a C
#: compiler is found: tests/test_install.py checks that it did).
needs_compiled = pytest.mark.skipif(
    not counting.compiled_available(),
    reason="audit's compiled loops were not built (no C compiler when audit was installed)",
)


@pytest.fixture
def kernel(request):
    if request.param == "compiled" and not counting.compiled_available():
        pytest.skip("audit's compiled loops were not built (no C compiler at install)")
    before = counting.use(request.param)
    yield request.param
    counting.use(before)


def frame_of(seed, n=3000, groups=("M", "F", "X"), algorithms=("b", "a"), dtype="float64"):
    """Rows with ties, both zeros, tiny and huge scores, cross-group impostors."""
    rng = np.random.default_rng(seed)
    score = rng.normal(size=n)
    ties = rng.random(n) < 0.3
    score[ties] = np.round(score[ties], 1)
    special = [0.0, -0.0, 1e-320, -1e-320, -1e-50, 1e-50, 3e38, -3e38, 1e-45]
    special += [1e300, -1e300, 3.5e38] if dtype == "float64" else []
    at = rng.choice(n, 40, replace=False)
    score[at] = rng.choice(special, 40)
    g1 = rng.choice(list(groups), n)
    mated = rng.random(n) < 0.3
    g2 = np.where(mated | (rng.random(n) < 0.6), g1, rng.choice(list(groups), n))
    score = score.astype(dtype)
    return pd.DataFrame(
        {
            "algorithm": rng.choice(list(algorithms), n),
            "score": score,
            "mated": mated,
            "group_1": g1,
            "group_2": g2,
        }
    )


def chunk_of(frame):
    return CH.read_chunk(CH.Piece(offset=0, rows=len(frame), frame=frame), CH.Options())


def plan_of(frame, seed, algorithms=("a", "b"), groups=("F", "M"), bits=4, keep_new=False):
    """A plan with bounds at scores of the data (and at nearby floats), random actions."""
    rng = np.random.default_rng(seed)
    bounds, actions = [], []
    values = frame["score"].to_numpy(np.float64)
    for _ in algorithms:
        picked = rng.choice(values, 12)
        picked = np.concatenate([picked, np.nextafter(picked[:3], np.inf), [-1e-50, 0.0]])
        b = np.unique(picked + 0.0)
        bounds.append(b)
        actions.append(rng.choice([Z.COUNT, Z.KEEP, Z.SPLIT], len(b) + 1).astype(np.int8))
    return Z.Plan(tuple(algorithms), tuple(groups), tuple(bounds), tuple(actions), bits, keep_new)


def literal(chunk, plan):
    """The partial row by row: the zone by a search of the float64 score among the
    bounds, the segment by its definition."""
    part = Z.partial(chunk, plan)  # its labels only
    algorithms, groups = part.algorithms, part.groups
    n_plan, n = len(plan.algorithms), len(groups)
    width = 2 * n + 1
    counts = np.zeros_like(part.counts)
    split = np.zeros_like(part.split)
    kept = []
    for i in range(len(chunk)):
        a = algorithms.index(chunk.algorithms[chunk.algorithm[i]])
        g1 = groups.index(chunk.groups[chunk.group_1[i]])
        g2 = groups.index(chunk.groups[chunk.group_2[i]])
        segment = g1 if chunk.mated[i] else n + g1 if g1 == g2 else 2 * n
        x = float(chunk.score[i])
        if a >= n_plan:
            zone, action = plan.zones + a - n_plan, Z.KEEP if plan.keep_new else Z.COUNT
        else:
            z = int(np.searchsorted(plan.bounds[a], x, "right"))
            zone, action = int(plan.offsets[a]) + z, plan.actions[a][z]
        counts[zone, segment] += 1
        if action == Z.KEEP:
            kept.append((zone, x, segment))
        elif action == Z.SPLIT:
            low, shift = plan._split_key(a, z)
            step = (int(Z.key64(np.array([x]))[0]) - low) >> shift
            split[plan.split_slot(zone), step, segment] += 1
    assert width == counts.shape[1]
    return counts, kept, split


def assert_literal(chunk, plan, expected=None):
    """The partial of ``chunk`` is the literal transcription's (``expected``, when
    computed already)."""
    part = Z.partial(chunk, plan)
    counts, kept, split = literal(chunk, plan) if expected is None else expected
    np.testing.assert_array_equal(part.counts, counts)
    np.testing.assert_array_equal(part.split, split)
    got = [] if not part.kept else list(zip(*(k.tolist() for k in part.kept[0]), strict=True))
    assert got == kept
    if part.kept:
        assert [k.dtype for k in part.kept[0]] == [np.int32, chunk.score.dtype, np.int32]


@pytest.mark.parametrize("kernel", KERNELS, indirect=True)
@pytest.mark.parametrize("n", [50, 2047, 2048, 2049, 4096, 6001])
def test_counts_equal_the_literal_transcription_across_blocks(kernel, n):
    """The compiled loops find the cells of 2048 rows, then count them: chunks of every
    length around and across those blocks (and the general loop's, with an algorithm
    and a group new to the plan) count as the transcription does."""
    for algorithms in (("b", "a"), ("b", "a", "c")):
        frame = frame_of(n, n=n, algorithms=algorithms, dtype="float32")
        assert_literal(chunk_of(frame), plan_of(frame, n, bits=3, keep_new=n % 2 == 1))


@pytest.mark.parametrize("kernel", KERNELS, indirect=True)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("seed", range(4))
def test_counts_equal_the_literal_transcription(kernel, dtype, seed, monkeypatch):
    if seed % 2:  # a plan without finer tables: every row of an entry with bounds searched
        monkeypatch.setattr(Z, "_FINE_BYTES", 0)
    frame = frame_of(seed, dtype=dtype, algorithms=("b", "a", "c"), groups=("M", "F", "X"))
    # "c" and "X" are not in the plan: new labels after the plan's
    assert_literal(chunk_of(frame), plan_of(frame, seed, keep_new=seed % 2 == 1))


@pytest.mark.parametrize("kernel", KERNELS, indirect=True)
@pytest.mark.parametrize("per_entry", [1, 2, 3, 7, 40])
@pytest.mark.parametrize("finer", [counting.FINE_BITS, 5, 4, 3, 0])
def test_bounds_packed_in_one_entry_of_the_table(kernel, per_entry, finer, monkeypatch):
    """Bounds closer together than an entry of the lookup table (as a DET curve's windows
    pack them): a row of such an entry is placed among its entry's bounds alone (after
    its finer table, where the plan has them), as the search among all the bounds places
    it, on a bound, beside one and between two; with finer tables of fewer bits, where a
    plan's full ones would not fit the bytes allowed, and with none, where fewer than
    the least bits would."""
    rng = np.random.default_rng(per_entry)
    frame = frame_of(per_entry, n=4000)
    dense = np.unique(1.2345 + np.arange(per_entry) * 3e-6)  # within one entry
    near = np.concatenate([dense, np.nextafter(dense, np.inf), np.nextafter(dense, -np.inf)])
    frame.loc[: len(frame) // 2, "score"] = rng.choice(near, len(frame) // 2 + 1)
    spread = np.unique(rng.normal(size=30))
    bounds = tuple(np.unique(np.concatenate([dense, spread])) for _ in range(2))
    actions = tuple(
        rng.choice([Z.COUNT, Z.KEEP, Z.SPLIT], len(b) + 1).astype(np.int8) for b in bounds
    )
    held = len(Z.Plan(("a", "b"), ("F", "M"), bounds, actions, 4).entry_start) - 1
    # the bytes of finer tables of ``finer`` bits, one byte short of one bit more
    monkeypatch.setattr(Z, "_FINE_BYTES", (held << (finer + 3)) - 1)
    plan = Z.Plan(("a", "b"), ("F", "M"), bounds, actions, 4)
    assert np.diff(plan.entry_start).max() == per_entry  # (one entry holds them all)
    finer = finer if finer >= Z._FINE_LEAST else 0
    assert plan.fine_bits == finer
    assert len(plan.fine) == (held << finer if finer else 0)
    assert_literal(chunk_of(frame), plan)


@pytest.mark.parametrize("kernel", KERNELS, indirect=True)
def test_many_groups_and_one_algorithm(kernel):
    """Past 64 groups the segments come from arithmetic, not a table."""
    groups = tuple(f"g{i}" for i in range(70))
    frame = frame_of(7, n=4000, groups=groups, algorithms=("a",))
    assert_literal(chunk_of(frame), plan_of(frame, 7, algorithms=("a",), groups=groups[:5]))


@pytest.mark.parametrize("kernel", KERNELS, indirect=True)
def test_a_plan_without_algorithms_counts_every_row_in_one_zone(kernel):
    frame = frame_of(3)
    plan = Z.Plan(keep_new=True, stride=3)
    part = Z.partial(chunk_of(frame), plan)
    assert part.counts.sum() == len(range(0, len(frame), 3)) == part.rows
    every = chunk_of(frame.iloc[::3].reset_index(drop=True))
    assert_literal(every, Z.Plan(keep_new=True))


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    dtype=st.sampled_from(["float64", "float32"]),
    bits=st.integers(1, 8),
)
@needs_compiled
def test_both_kernels_give_the_same_partial(seed, dtype, bits):
    frame = frame_of(seed, n=600, dtype=dtype)
    chunk, plan = chunk_of(frame), plan_of(frame, seed, bits=bits)
    parts = {}
    for name in KERNELS:
        before = counting.use(name)
        try:
            parts[name] = Z.partial(chunk, plan)
        finally:
            counting.use(before)
    compiled, numpy_path = parts["compiled"], parts["numpy"]
    np.testing.assert_array_equal(compiled.counts, numpy_path.counts)
    np.testing.assert_array_equal(compiled.split, numpy_path.split)
    assert len(compiled.kept) == len(numpy_path.kept)
    for mine, theirs in zip(compiled.kept, numpy_path.kept, strict=True):
        for x, y in zip(mine, theirs, strict=True):
            np.testing.assert_array_equal(x, y)
            assert x.dtype == y.dtype


@needs_compiled
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("seed", range(4))
def test_the_usual_chunk_is_counted_by_the_lean_loop(monkeypatch, dtype, seed):
    """A chunk whose algorithms are all in the plan (its groups need not be) is counted
    by the loop made for it, with the counts, kept rows and sub-zone counts of the
    literal transcription; the general loop is not called."""
    from audit.scores import _compiled

    def general(*args):
        raise AssertionError("the general loop counted a usual chunk")

    monkeypatch.setattr(_compiled, "zones", general)
    frame = frame_of(seed, dtype=dtype, algorithms=("b", "a"), groups=("M", "F", "X"))
    before = counting.use("compiled")
    try:
        for keep_new in (False, True):
            assert_literal(chunk_of(frame), plan_of(frame, seed, bits=3, keep_new=keep_new))
    finally:
        counting.use(before)


LABEL_CODES = ("algorithm", "group_1", "group_2")


def eight_rows_available() -> bool:
    if not counting.compiled_available():
        return False
    from audit.scores import _compiled

    before = _compiled.eight_rows()
    try:
        return _compiled.eight_rows(True)
    finally:
        _compiled.eight_rows(before)


@pytest.mark.skipif(
    not eight_rows_available(),
    reason="the eight-row loop needs the compiled loops and a processor with AVX2",
)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(
    "n_algorithms, n_groups",
    # codes looked up in registers (up to 8, up to 16), and gathered from tables (more)
    [(2, 3), (8, 8), (10, 12), (16, 16), (3, 17), (17, 3), (30, 40)],
)
def test_eight_rows_at_a_time_count_as_one_at_a_time(monkeypatch, dtype, n_algorithms, n_groups):
    """The usual chunk counted eight rows at a time (AVX2) gives the counts, kept rows
    and sub-zone counts of the literal transcription, as one row at a time does: with
    few codes and many, rows in entries holding bounds (finer tables or none), and a
    chunk's last rows after its last eight; codes of int8, int16 and int32 (text
    labels read from Parquet are int32)."""
    from audit.scores import _compiled

    algorithms = tuple(f"a{i}" for i in range(n_algorithms))
    groups = tuple(f"g{i}" for i in range(n_groups))
    before = counting.use("compiled"), _compiled.eight_rows()
    try:
        for seed, n in ((n_groups, 2048 + 8 * 3 + 5), (n_algorithms, 203)):
            frame = frame_of(seed, n=n, groups=groups, algorithms=algorithms, dtype=dtype)
            plan = plan_of(frame, seed, algorithms=algorithms, groups=groups[:2], bits=3)
            # a bound's own score and its neighbours: rows in entries holding bounds
            bound = plan.bounds[0][len(plan.bounds[0]) // 2]
            rows = np.arange(0, n // 4, 2)
            near = np.where(rows % 4, bound, np.nextafter(bound, -np.inf))
            frame.loc[rows, "score"] = near.astype(dtype)
            read = chunk_of(frame)
            for fine in (Z._FINE_BYTES, 0):
                monkeypatch.setattr(Z, "_FINE_BYTES", fine)
                plan = plan_of(frame, seed, algorithms=algorithms, groups=groups[:2], bits=3)
                expected = literal(read, plan)
                for codes in (np.int8, np.int16, np.int32):
                    chunk = dataclasses.replace(
                        read, **{c: getattr(read, c).astype(codes) for c in LABEL_CODES}
                    )
                    for on in (True, False):
                        assert _compiled.eight_rows(on) == on
                        assert_literal(chunk, plan, expected)
    finally:
        counting.use(before[0])
        _compiled.eight_rows(before[1])


def test_a_tiny_negative_score_on_a_bound_lies_above_it():
    """-1e-50 rounds to -0.0 in float32: its key is the bound's key, not below it (the
    rounding comes first, then the zeros share a key)."""
    frame = pd.DataFrame(
        {"algorithm": "a", "score": [-1e-50, -2e-50, 0.0], "mated": False, "group": "F"}
    )
    plan = Z.Plan(("a",), ("F",), (np.array([-1e-50]),), (np.array([Z.COUNT, Z.KEEP]),))
    for name in KERNELS if counting.compiled_available() else ["numpy"]:
        before = counting.use(name)
        try:
            part = Z.partial(chunk_of(frame), plan)
        finally:
            counting.use(before)
        assert part.counts[:, 1].tolist() == [1, 2]  # -2e-50 below; -1e-50 and 0 above


@pytest.fixture
def found_afresh(monkeypatch):
    """Whether the compiled loops load (and why not) is found afresh in the test, after
    what it patches, then again once those patches are undone."""
    counting._compiled_state.cache_clear()
    yield monkeypatch
    monkeypatch.undo()
    counting._compiled_state.cache_clear()
    assert counting.compiled_now() == counting.compiled_available()


def assert_refused_and_numpy_counts(expected: str, groups: int) -> None:
    """The compiled loops are not used: "compiled" is refused for ``expected``, and a
    chunk of ``groups`` groups is counted (with NumPy) as the literal counts say."""
    assert not counting.compiled_now()
    with pytest.raises(ParameterError) as error:
        counting.use("compiled")
    assert str(error.value) == REFUSED.format(name="kernel", expected=expected, value="compiled")
    frame = frame_of(groups, n=500)
    assert_literal(chunk_of(frame), plan_of(frame, groups, bits=2))


def test_without_the_compiled_loops_numpy_counts(found_afresh):
    """Where the compiled loops were not built, "auto" counts with NumPy and "compiled"
    is refused, saying why."""
    found_afresh.setitem(sys.modules, "audit.scores._compiled", None)  # its import fails
    assert counting.KERNEL == "auto"
    assert_refused_and_numpy_counts(counting.WITHOUT_KERNEL, 4)


def test_the_doctests_leave_out_the_binding_which_holds_none():
    """The doctests of audit/ are collected by importing each module: the binding of the
    compiled loops is left out (its import raises where the install built none, which
    stopped the whole run at collection), and it holds no doctest that would be lost."""
    import tomllib

    top = Path(__file__).resolve().parent.parent
    options = tomllib.loads((top / "pyproject.toml").read_text())["tool"]["pytest"]
    assert "--ignore=audit/scores/_compiled.py" in options["ini_options"]["addopts"].split()
    assert ">>>" not in (top / "audit" / "scores" / "_compiled.py").read_text()


def test_a_library_of_other_source_is_said_once_and_numpy_counts(found_afresh):
    """A library built from other source (an editable install not installed again) is
    said once, as an InstallWarning with what to do; "auto" counts with NumPy, the same
    counts, and "compiled" is refused with that reason, not for a missing compiler."""
    from audit.exceptions import InstallWarning

    reason = "audit's compiled kernel (k.so) was built from other source than this audit's"

    def stale():
        raise counting.StaleLibrary(reason)

    found_afresh.setattr(counting, "_load", stale)
    with pytest.warns(InstallWarning) as caught:
        assert not counting.compiled_available()
    assert [str(w.message) for w in caught] == [counting.STALE_WARNING.format(reason=reason)]
    assert not counting.compiled_available()  # said once: a second warning would fail
    assert_refused_and_numpy_counts(counting.STALE_KERNEL.format(reason=reason), 5)


def test_an_install_without_the_built_library_imports_and_counts():
    """An install where the extension was not built (no compiler): the module binding it
    raises ImportError, and a streamed sweep counts with NumPy, the same values."""
    script = textwrap.dedent(
        """
        import importlib.util, sys
        find = importlib.util.find_spec
        importlib.util.find_spec = lambda name, *a: None if name == "audit.scores._kernel" else find(name, *a)
        try:
            import audit.scores._compiled
        except ImportError as error:
            print("not built:", error)
        import numpy as np, pandas as pd
        from audit.scores import counting, read_scores, sweep
        from audit.scores.streaming import StreamingScores
        assert not counting.compiled_now()
        rng = np.random.default_rng(0)
        frame = pd.DataFrame({"algorithm": "a", "score": rng.normal(size=900),
                              "mated": rng.random(900) < 0.3, "group": rng.choice(["F", "M"], 900)})
        chunks = [frame.iloc[i : i + 200] for i in range(0, 900, 200)]
        streamed = StreamingScores(chunks).sweep([0.01, 0.1])
        print(streamed.equals(sweep(read_scores(frame), [0.01, 0.1])))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (
        "not built: audit's compiled kernel (audit.scores._kernel) is not built\nTrue\n"
    )


@needs_compiled
def test_auto_counts_with_the_compiled_loops_from_the_first_chunk(monkeypatch):
    """Nothing to start: "auto" counts every chunk, small or large, with the compiled
    loops."""
    used = []
    for name in ("_count_compiled", "_count_numpy"):
        original = getattr(counting, name)

        def spying(*args, original=original, name=name):
            used.append(name)
            return original(*args)

        monkeypatch.setattr(counting, name, spying)
    frame = frame_of(2, n=3000)
    before = counting.use("auto")
    try:
        assert_literal(chunk_of(frame.iloc[:5].reset_index(drop=True)), plan_of(frame, 2))
        assert_literal(chunk_of(frame), plan_of(frame, 2))
    finally:
        counting.use(before)
    assert used == ["_count_compiled"] * 4  # assert_literal counts each chunk twice


@needs_compiled
@pytest.mark.parametrize("codes", [(np.int16,) * 3, (np.int32,) * 3, (np.int8, np.int32, np.int16)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_wider_codes_are_counted_alike(monkeypatch, codes, dtype):
    """Label codes of int16 and int32 (more labels than int8 holds), and of mixed types,
    give the counts of the literal transcription, in both loops: the usual chunk's (its
    algorithms all in the plan) and the general one's (an algorithm new to the plan)."""
    from audit.scores import _compiled

    called = []
    for loop in ("zones", "zones_known"):
        original = getattr(_compiled, loop)

        def spying(*args, original=original, loop=loop):
            called.append((loop, args[1].dtype))
            return original(*args)

        monkeypatch.setattr(_compiled, loop, spying)
    before = counting.use("compiled")
    try:
        for algorithms, loop in ((("b", "a"), "zones_known"), (("b", "a", "c"), "zones")):
            frame = frame_of(9, dtype=dtype, algorithms=algorithms, groups=("M", "F", "X"))
            chunk = chunk_of(frame)
            wide = dataclasses.replace(
                chunk,
                algorithm=chunk.algorithm.astype(codes[0]),
                group_1=chunk.group_1.astype(codes[1]),
                group_2=chunk.group_2.astype(codes[2]),
            )
            called.clear()
            for keep_new in (False, True):
                assert_literal(wide, plan_of(frame, 9, keep_new=keep_new))
            assert {c[0] for c in called} == {loop} and {c[1] for c in called} == {
                np.dtype(codes[0])
            }
    finally:
        counting.use(before)


@needs_compiled
def test_the_loops_refuse_an_output_of_another_type():
    """An array the C would write as another type is refused, never written."""
    from audit.scores import _compiled

    at = np.zeros(3, np.int32)  # int64 expected
    out = np.zeros(4)
    with pytest.raises(TypeError, match="contiguous int64, not int32"):
        _compiled.scatter(np.array([0, 1, 2, 0]), np.ones(4), at, out)
    assert (out == 0).all() and (at == 0).all()
    frozen = np.zeros(3, np.int64)
    frozen.setflags(write=False)
    with pytest.raises(TypeError, match="contiguous int64, not a read-only array"):
        _compiled.scatter(np.array([0, 1, 2, 0]), np.ones(4), frozen, out)
    with pytest.raises(TypeError, match="contiguous int64, not an array with gaps"):
        _compiled.scatter(np.array([0, 1, 2, 0]), np.ones(4), np.zeros(6, np.int64)[::2], out)
    assert (out == 0).all()
    # the loops hold a row's cell in 32 bits: counts of 2**32 cells are refused (a view
    # of that size, which takes no memory)
    with pytest.raises(ValueError, match="fewer than 2\\*\\*32 cells"):
        _compiled._cells(np.broadcast_to(np.int64(0), (1 << 32,)))
    assert _compiled._cells(np.zeros(4, np.int64))


@needs_compiled
def test_a_library_of_another_interface_is_refused_before_any_call():
    """A library built from other source (an editable install not installed again) is
    refused by the version of its interface, or for telling none: ImportError, so that
    NumPy counts, rather than a loop reading its arguments wrong."""
    from audit.scores import _compiled

    size = ctypes.sizeof(_compiled._Zones)

    class Library:
        def __init__(self, version=None, zones=size):
            if version is not None:
                self.audit_kernel_abi = lambda: version
                self.audit_zones_size = lambda: zones

    assert _compiled._checked(Library(_compiled.ABI), "lib.so").audit_kernel_abi() == _compiled.ABI
    for library, reason in [
        (
            Library(_compiled.ABI + 1),
            f"version {_compiled.ABI + 1}, where {_compiled.ABI} is bound",
        ),
        (Library(), "it tells no version"),
        (Library(_compiled.ABI, size + 8), f"a plan of {size + 8} bytes, where {size} are bound"),
    ]:
        with pytest.raises(ImportError) as error:
            _compiled._checked(library, "lib.so")
        assert str(error.value) == _compiled.STALE.format(path="lib.so", reason=reason)
    # the library built here is of this version
    assert _compiled._LIB.audit_kernel_abi() == _compiled.ABI
    assert _compiled._LIB.audit_zones_size() == size


@needs_compiled
@pytest.mark.parametrize("values", [[], [0.5, -1.0], [3.0, 1.0, 2.0, 1.0], [-0.0, 0.0, 5.0]])
def test_least_at_or_above(values):
    from audit.scores import _compiled

    values = np.array(values, dtype=np.float64)
    for t in (-2.0, 0.0, 1.0, 2.5, 10.0):
        above = values[values >= t]
        assert _compiled.least_at_or_above(values, t) == (
            (True, above.min()) if len(above) else (False, np.inf)
        )


def test_an_unknown_kernel_is_refused():
    with pytest.raises(ParameterError) as error:
        counting.use("fortran")
    assert str(error.value) == REFUSED.format(
        name="kernel", expected="one of 'auto', 'compiled', 'numpy'", value="fortran"
    )


@pytest.mark.parametrize("kernel", KERNELS, indirect=True)
@pytest.mark.parametrize("remap", [False, True])
@pytest.mark.parametrize("split", [1 << 20, 1, 2600])
def test_kept_rows_are_grouped_by_cell_in_the_order_of_the_rows(monkeypatch, kernel, remap, split):
    """The kept rows of a pass, chunk after chunk, grouped by (zone, segment): a stable
    sort of all the rows by cell (ties, both zeros, empty chunks and empty cells,
    float32 and float64 chunks included), as float64, whichever kernel places them,
    in one thread or two (from ``split`` rows); the list is emptied."""
    monkeypatch.setattr(counting, "_GROUP_SPLIT", split)
    rng = np.random.default_rng(5)
    width, zones = 7, 6
    kept = []
    for n in (0, 500, 1, 0, 2000, 37):
        zone = rng.integers(1, zones, n).astype(np.int32)  # zone 0 keeps nothing
        score = rng.choice([-0.0, 0.0, 1.5, -2.25, np.nextafter(1.5, 2)], n)
        score[: n // 2] = rng.normal(size=n // 2)
        segment = rng.integers(0, width, n).astype(np.int32)
        # chunks keep their scores' type: float32 widens exactly
        kept.append((zone, score.astype(np.float32) if n % 2 else score, segment))
    columns = rng.permutation(width) if remap else None
    segment = np.concatenate([k[2] for k in kept])
    cell = np.concatenate([k[0] for k in kept]).astype(np.int64) * width
    cell += segment if columns is None else columns[segment]
    score = np.concatenate([k[1].astype(np.float64) for k in kept])
    order = np.argsort(cell, kind="stable")
    expected = score[order]
    starts, got = counting.group(kept, columns, width, zones * width)
    assert kept == []
    np.testing.assert_array_equal(got.view(np.uint64), expected.view(np.uint64))  # zeros' signs
    np.testing.assert_array_equal(
        starts, np.concatenate([[0], np.cumsum(np.bincount(cell, minlength=zones * width))])
    )
