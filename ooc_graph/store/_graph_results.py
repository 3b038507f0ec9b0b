"""The result methods of :class:`~ooc_graph.store.graph.Graph`: listing, loading, saving,
dropping and importing results, and compaction (the work is done in :mod:`.results` and
:mod:`.compact`, imported by the methods that use them: a graph opened for a computation loads
neither, nor their writers)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import h5py

from ooc_graph.errors import ParameterError, StoreError, shown

from . import _format as F
from . import locking

if TYPE_CHECKING:
    from .results import SavedResult


class GraphResults:
    """Mixed into :class:`~ooc_graph.store.graph.Graph` (which provides ``_file``, ``path``,
    ``_check_open`` and ``_timeout``)."""

    def results(self) -> list[str]:
        """Names of the results stored in the file (see :meth:`fallback_results` for those that
        had to be written beside it)."""
        with self._file() as h5:
            try:
                grp = h5.get(F.RESULTS)
                return sorted(k for k in grp.keys() if not k.startswith(".")) if grp is not None else []
            except (KeyError, OSError, RuntimeError) as err:
                raise StoreError(f"{self.path}: the results group is damaged ({err})") from err

    def load_result(self, name: str) -> dict:
        """``results/<name>``: its arrays by name, and ``attrs`` (``algorithm``, ``parameters`` and
        ``stats`` as dicts, ``iterations``, ``converged``, ``seconds``, ``device``, ``timestamp``)."""
        with self._file() as h5:
            results = h5.get(F.RESULTS)
            grp = None
            if isinstance(name, str) and name and not name.startswith(".") and results is not None and name in results:
                try:
                    grp = results[name]
                except (KeyError, OSError, RuntimeError, ValueError) as err:
                    raise StoreError(f"{self.path}: result {name!r} is damaged ({err}); compact the store to "
                                     "remove it, or compute it again") from err
            if not isinstance(grp, h5py.Group):
                stored = ", ".join(map(shown, self.results())) or "none"
                raise ParameterError(f"no result {name!r} in {self.path} (stored: {stored})")
            from .results import read_group
            return read_group(grp, str(self.path))

    def save_result(self, name: str, arrays: dict, attrs: dict, *, lock_timeout=None) -> SavedResult:
        """Store ``arrays`` and ``attrs`` under ``results/<name>``, replacing an older one, and say
        where they went (:class:`~ooc_graph.store.results.SavedResult`).

        Written under a temporary group name and moved into place, so a failure leaves the old
        result (or none) and never a half-written one. Waits up to ``lock_timeout`` seconds for
        other processes that have the store open; when the store stays locked, is read-only, or
        the file was replaced by another graph, the result goes to ``<store>.<name>.result.h5``
        beside it (with a :class:`~ooc_graph.errors.ResultNotStoredWarning`) instead.
        """
        from .results import save
        self._check_open()
        return save(self, name, arrays, attrs, timeout=self._lock_timeout(lock_timeout))

    def drop_result(self, name: str, *, lock_timeout=None) -> None:
        """Delete ``results/<name>`` from the store (its space is reclaimed by :meth:`compact`,
        which runs by itself once unused space passes a quarter of the file)."""
        from .results import drop
        self._check_open()
        drop(self, name, timeout=self._lock_timeout(lock_timeout))

    def compact(self, *, lock_timeout=None) -> tuple[int, int]:
        """Rewrite the store without the space of replaced and dropped results, atomically and
        keeping its ``store_id``: ``(bytes before, bytes after)``. Waits up to ``lock_timeout``
        seconds for other processes to close the store, then refuses (StoreBusyError)."""
        from .compact import compact
        self._check_open()
        return compact(self, timeout=self._lock_timeout(lock_timeout))

    def unused_bytes(self) -> int:
        """Bytes of the file held by replaced or dropped results, until the store is compacted."""
        with self._file() as h5:
            grp = h5.get(F.RESULTS)
            return int(grp.attrs.get(F.UNUSED_BYTES, 0)) if grp is not None else 0

    def fallback_results(self) -> list[Path]:
        """Result files of this graph written beside the store (or in the current folder) because
        the store could not take them; :meth:`import_result` moves one in."""
        from .results import fallback_results
        self._check_open()
        return fallback_results(self)

    def import_result(self, path, *, lock_timeout=None) -> str:
        """Move a result file written beside the store into it (the file is then deleted); its name."""
        from .results import import_result
        self._check_open()
        return import_result(self, path, timeout=self._lock_timeout(lock_timeout))

    def _lock_timeout(self, value):
        return self._timeout if value is None else locking.lock_timeout(value)
