"""The streaming passes on a Dask cluster: each pass a map over row groups (or
partitions) and a tree of associative merges.

Dask does the scheduling, data locality, retries and spilling; this module only
says what to compute.  Use it through
``StreamingScores(source, engine="dask", client=client)`` or
``audit scores --scheduler ADDRESS``; the results equal the in-memory ones bit
for bit (the partial results are integer counts, minima and kept scores, so
the order of merging does not matter).
"""

from __future__ import annotations

from collections.abc import Callable

#: Partial results merged per task of the reduction tree.
_FAN_IN = 8


class DaskEngine:
    """Runs each pass as Dask tasks on ``client`` (a ``distributed.Client``; None: the
    default client, or Dask's default scheduler when there is none)."""

    def __init__(self, client=None):
        import dask  # noqa: F401  (fail early with ImportError when Dask is missing)

        self.client = client

    def map_reduce(self, function: Callable, merge: Callable, items: list, *args, label=""):
        import dask

        shared = [dask.delayed(arg, traverse=False) for arg in args]
        parts = [
            dask.delayed(function, pure=True)(item, *shared) for item in items
        ]
        while len(parts) > 1:
            parts = [
                dask.delayed(_merge_all, pure=True)(merge, parts[i : i + _FAN_IN])
                for i in range(0, len(parts), _FAN_IN)
            ]
        if self.client is not None:
            return self.client.compute(parts[0]).result()
        return parts[0].compute()


def _merge_all(merge: Callable, parts: list):
    result = parts[0]
    for part in parts[1:]:
        result = merge(result, part)
    return result
