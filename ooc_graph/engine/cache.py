"""Chunk caches with a resident region and a streaming region.

Passes scan the chunks in the same order every time, so LRU would evict each chunk just before it
is needed again. Instead, chunks are admitted until the budget is full and then kept (the resident
region, reused every pass); the rest stream through and are dropped (the streaming region).
"""

from __future__ import annotations


class ResidentCache:
    def __init__(self, budget_bytes: int):
        self.budget = max(0, int(budget_bytes))
        self.used = 0
        self._items: dict = {}
        self.hits = 0
        self.misses = 0
        self.refused = 0  # loads that did not fit: the sign that chunks are being streamed

    def get(self, key, load, admit=None):
        """The cached item for ``key``, or ``load()`` (kept if it fits, after ``admit(item)``, which
        may return a reworked item for the resident region). Returns (item, was_hit)."""
        item = self._items.get(key)
        if item is not None:
            self.hits += 1
            return item, True
        self.misses += 1
        item = load()
        size = item.nbytes
        if self.used + size <= self.budget:
            if admit is not None:
                item = admit(item)
            self._items[key] = item
            self.used += size
        else:
            self.refused += 1
        return item, False

    def peek(self, key):
        """The cached item for ``key`` or None, without counting a hit or loading."""
        return self._items.get(key)

    def reserve(self, nbytes: int) -> bool:
        """Count ``nbytes`` held outside the items against the budget, if they fit."""
        if self.used + nbytes > self.budget:
            return False
        self.used += nbytes
        return True

    def make_room(self, nbytes: int) -> bool:
        """:meth:`reserve` ``nbytes``, dropping cached items (the last admitted first) until they fit;
        False where the budget itself is too small (then nothing is dropped)."""
        if nbytes > self.budget - (self.used - sum(item.nbytes for item in self._items.values())):
            return False
        while self.used + nbytes > self.budget and self._items:
            key = next(reversed(self._items))
            self.used -= self._items.pop(key).nbytes
        return self.reserve(nbytes)

    def __len__(self):
        return len(self._items)

    def __contains__(self, key):
        return key in self._items

    def clear(self):
        self._items.clear()
        self.used = 0
