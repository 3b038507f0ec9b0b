"""The whole graph's CSRs held for whole traversals and pulls (a mixin of the engine's
:class:`~.stream.ChunkStream`, which sets ``_csr`` and the budgets): on the device where they fit
its CSR budget, in page-locked host memory read in place where they do not (zero-copy, GPU), and
on the CPU without their weights where the caller does not read them."""

from __future__ import annotations

import logging

import numpy as np

from ooc_graph import config
from ooc_graph._memory import human

log = logging.getLogger("ooc_graph.engine")


class Csrs:
    """The CSRs of :class:`~.stream.ChunkStream`: ``_csr`` maps a side to ``(indptr, indices,
    weights, bytes)``, or None where it did not fit."""

    def _csr_nbytes(self, weights: bool = True) -> int:
        """Device bytes of one side of the whole graph's CSR (offsets, ids, float64 weights unless
        ``weights`` is false)."""
        g = self.graph
        return 8 * (g.num_vertices + 1) + g.num_arcs * (g.id_dtype.itemsize + (8 if g.weighted and weights else 0))

    def csr(self, side: str, weights: bool = True):
        """The ``side`` CSR ``(indptr, indices, weights, bytes)`` on the backend's device, or in
        page-locked host memory that the device reads in place where it does not fit the device
        budget (:meth:`_mapped_csr`); ``None`` where neither is possible. ``weights=False`` (on the
        CPU; a GPU always takes them): the caller does not read the weights, which are then not
        read from the store nor counted against the budget (``weights`` may be None on a weighted
        graph); they are added when a later call asks for them and they fit."""
        cpu = self.backend.xp is np
        weights = (weights or not cpu) and self.graph.weighted  # whether weights are needed (and exist)
        held = self._csr.get(side)
        if held is not None and (held[2] is not None or not weights):
            return held
        if held is None and side in self._csr:  # did not fit, weights and all
            return None if weights or not cpu else self._csr_without_weights(side)
        g = self.graph
        others = sum(c[3] for k, c in self._csr.items() if c and k != side)
        if held is not None:  # held without its weights: add them where they fit
            if self._csr_nbytes() > self._csr_budget - others:
                return None
            w = g.csr(side, parts=("weights",))[2]
            self.stats.bytes_read += w.nbytes
            self._csr[side] = held = (held[0], held[1], self._astype(w, np.float64), self._csr_nbytes())
            return held
        if not weights and cpu and g.weighted:
            return self._csr_without_weights(side)
        if self._csr_nbytes() > self._csr_budget - others:
            self._csr[side] = self._mapped_csr(side)
        else:
            indptr, indices, w = g.csr(side)
            self.stats.bytes_read += indptr.nbytes + indices.nbytes + (0 if w is None else w.nbytes)
            if cpu and indptr.size and indptr[-1] <= np.iinfo(np.int32).max:
                # 32-bit offsets where the arcs allow: half the bytes a CPU traversal reads
                indptr = self._astype(indptr, np.int32)
            up = self.backend.to_device
            self._csr[side] = (up(indptr), up(indices), None if w is None else self._astype(up(w), np.float64),
                               self._csr_nbytes())
        return self._csr[side]

    def _csr_without_weights(self, side: str):
        """The ``side`` CSR's offsets and ids in host memory (CPU), its weights left in the store;
        None where they do not fit the CSR budget either."""
        others = sum(c[3] for k, c in self._csr.items() if c and k != side)
        if self._csr_nbytes(weights=False) > self._csr_budget - others:
            return None
        indptr, indices, _ = self.graph.csr(side, parts=("indptr", "indices"))
        self.stats.bytes_read += indptr.nbytes + indices.nbytes
        if indptr.size and indptr[-1] <= np.iinfo(np.int32).max:
            indptr = self._astype(indptr, np.int32)
        self._csr[side] = held = (indptr, indices, None, self._csr_nbytes(weights=False))
        return held

    def _astype(self, a, dtype):
        """``a`` as ``dtype`` where it lives (a no-op if it is): on the CPU, converted on the
        kernels' threads (``kernels.cpu.astype``)."""
        convert = getattr(self.backend.kernels, "astype", None) if self.backend.xp is np else None
        return convert(a, dtype) if convert is not None else a.astype(dtype, copy=False)

    def _mapped_csr(self, side: str):
        """The ``side`` CSR for zero-copy reads (config ``gpu.zero_copy``; EMOGI): ids and weights
        (as stored) in page-locked host memory, counted against half of ``memory`` and taken from
        the host chunk cache; the offsets on the device, their room taken from the device chunk
        cache (chunks cached there are dropped for it). ``(indptr, indices, weights, 0)``, or None
        where the backend cannot read host memory or the budgets do not allow it."""
        g = self.graph
        offsets = 8 * (g.num_vertices + 1)
        held = sum(1 for c in self._csr.values() if c is not None and not c[3])
        if not self._offset_room or (held + 1) * offsets > self._offset_room:
            return None
        wbytes = np.dtype(g.attrs["weight_dtype"]).itemsize if g.weighted else 0
        host = g.num_arcs * (g.id_dtype.itemsize + wbytes)
        if host + self._mapped_bytes > self.memory // 2:
            return None
        if self.host_cache is not None and not self.host_cache.make_room(host):
            return None
        indptr, indices, w = g.csr(side)
        self.stats.bytes_read += indptr.nbytes + indices.nbytes + (0 if w is None else w.nbytes)
        self._mapped_bytes += host
        log.info("%s: the %s-CSR (%s) is read in place from page-locked host memory", g.path, side, human(host))
        mapped = self.backend.kernels.mapped
        return self.backend.to_device(indptr), mapped(indices), None if w is None else mapped(w), 0

    def _zero_copy(self) -> bool:
        """Whether CSRs too large for the device may be read in place from host memory."""
        return (hasattr(self.backend.kernels, "mapped") and config.get().gpu.zero_copy
                and self.graph.num_vertices < 2**31 and self.graph.num_arcs > 0)
