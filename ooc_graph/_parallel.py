"""Thread parallelism for bulk NumPy work (sorting, random draws), which releases the GIL."""

from __future__ import annotations

import itertools
import os
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable, Iterator, TypeVar

from . import config
from .errors import ParameterError

T = TypeVar("T")
R = TypeVar("R")



def workers(value=None) -> int:
    """Threads to use: ``value`` if given (a positive int), else the cores, at most config
    ``ingest.max_workers`` (16)."""
    if value is None:
        return max(1, min(os.cpu_count() or 1, config.get().ingest.max_workers))
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ParameterError(f"workers must be a positive integer (got {value!r})")
    return value


def ordered_map(fn: Callable[[T], R], items: Iterable[T], num_workers: int, *,
                ahead: int | None = None) -> Iterator[R]:
    """``map(fn, items)`` on ``num_workers`` threads, in order, with at most ``ahead`` (default:
    ``num_workers``) results computed ahead of the consumer (so memory stays bounded). One worker
    runs in the consumer's thread unless ``ahead`` is given: then beside it, for work that uses
    the cores itself (a compiled parallel kernel, the GPU).

    >>> list(ordered_map(lambda x: x * x, range(5), 3))
    [0, 1, 4, 9, 16]
    """
    items = iter(items)
    head = list(itertools.islice(items, 2))
    if (num_workers <= 1 and ahead is None) or len(head) < 2:  # no pool (starting its threads costs more)
        yield from map(fn, itertools.chain(head, items))
        return
    ahead = max(1, num_workers if ahead is None else ahead)
    items = itertools.chain(head, items)
    pool = ThreadPoolExecutor(max(1, num_workers), thread_name_prefix="ooc-graph-worker")
    fn = config.carried(fn)
    pending: deque = deque()
    try:
        for item in items:
            pending.append(pool.submit(fn, item))
            if len(pending) > ahead:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True)
