"""The streaming passes on a Dask cluster: each pass a map over row groups (or
partitions) and a tree of associative merges.

Dask does the scheduling, data locality, retries and spilling; this module only
says what to compute.  Use it through
``StreamingScores(source, engine="dask", client=client)`` or
``audit scores --scheduler ADDRESS``; the results equal the in-memory ones bit
for bit (the partial results are integer counts and kept scores, which are
sorted after merging, so the order of merging does not matter).
"""

from __future__ import annotations

from collections.abc import Callable

#: Partial results merged per task of the reduction tree.
_FAN_IN = 8
#: Tasks of a map per worker thread: fewer, larger tasks (several row groups each)
#: cost less to schedule, transfer and merge; a few per thread keep the load even.
_TASKS_PER_THREAD = 4


class DaskEngine:
    """Runs each pass as Dask tasks on ``client`` (a ``distributed.Client``; None: the
    default client, or Dask's default scheduler when there is none)."""

    def __init__(self, client=None):
        import dask  # noqa: F401  (fail early with ImportError when Dask is missing)

        self.client = client

    def map_reduce(self, function: Callable, merge: Callable, items: list, *args, label=""):
        if self.client is None:
            from distributed import default_client

            try:
                self.client = default_client()
            except ValueError:
                return self._delayed(function, merge, items, *args)
        client = self.client
        shared = [client.scatter(arg, broadcast=True) if _large(arg) else arg for arg in args]
        threads = sum(client.nthreads().values()) or 1
        size = max(1, -(-len(items) // (_TASKS_PER_THREAD * threads)))
        batches = [items[i : i + size] for i in range(0, len(items), size)]
        n = len(batches)
        parts = client.map(
            _map_merge,
            [function] * n,
            [merge] * n,
            batches,
            *[[arg] * n for arg in shared],
            pure=False,
        )
        while len(parts) > 1:
            parts = [
                client.submit(_merge_all, merge, parts[i : i + _FAN_IN], pure=False)
                for i in range(0, len(parts), _FAN_IN)
            ]
        return parts[0].result()

    @staticmethod
    def _delayed(function: Callable, merge: Callable, items: list, *args):
        """Without a distributed client: Dask's default scheduler."""
        import dask

        parts = [dask.delayed(function, pure=False)(item, *args) for item in items]
        while len(parts) > 1:
            parts = [
                dask.delayed(_merge_all, pure=False)(merge, parts[i : i + _FAN_IN])
                for i in range(0, len(parts), _FAN_IN)
            ]
        return parts[0].compute()


def _large(arg) -> bool:
    """Worth scattering once rather than sending with every task (a plan holds its
    lookup tables)."""
    from audit.scores.zones import Plan

    return isinstance(arg, Plan) or (isinstance(arg, list | tuple) and len(arg) > 1000)


def _map_merge(function: Callable, merge: Callable, items: list, *args):
    """One task: ``function`` of each of a few items, merged in order."""
    return _merge_all(merge, [function(item, *args) for item in items])


def _merge_all(merge: Callable, parts: list):
    result = parts[0]
    for part in parts[1:]:
        result = merge(result, part)
    return result
