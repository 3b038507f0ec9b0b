"""Original vertex ids as a store keeps them (``vertex/labels``, or ``vertex/label_bytes`` and
``vertex/label_offsets`` for string ids), and the checks made as they are read: ids strictly
increasing (a binary search maps an id to its internal one, so a store whose ids are not would
give wrong answers), string ids valid UTF-8 between offsets that stay inside the bytes."""

from __future__ import annotations

import numpy as np

from ooc_graph.errors import StoreError, shown

from . import _format as F


def encode_labels(labels) -> tuple[np.ndarray, np.ndarray]:
    """String ids as stored: their UTF-8 bytes one after another (uint8) and n + 1 offsets."""
    encoded = [str(v).encode("utf-8") for v in labels]
    offsets = np.zeros(len(encoded) + 1, np.int64)
    np.cumsum([len(b) for b in encoded], out=offsets[1:])
    return np.frombuffer(b"".join(encoded), np.uint8), offsets


def _damaged(path, name, at, value, why) -> StoreError:
    return StoreError(f"{path}: dataset {name} holds {value} at position {at}, {why}; the store is damaged "
                      "(convert the graph again)")


def decode_labels(data: np.ndarray, offsets: np.ndarray, path="<store>") -> np.ndarray:
    """The inverse of :func:`encode_labels`: an object array of Python strings, checked."""
    steps = np.diff(offsets)
    if offsets.size and (offsets[0] != 0 or offsets[-1] != data.size or (steps < 0).any()):
        at = 0 if offsets[0] != 0 else int(np.argmax(steps < 0)) + 1 if (steps < 0).any() else offsets.size - 1
        raise _damaged(path, F.LABEL_OFFSETS, at, int(offsets[at]),
                       f"not an offset into the {data.size} bytes of {F.LABEL_BYTES} in order")
    raw = data.tobytes()
    bounds = offsets.tolist()
    out = np.empty(len(bounds) - 1, dtype=object)
    try:
        out[:] = [raw[a:b].decode("utf-8") for a, b in zip(bounds, bounds[1:])]
    except UnicodeDecodeError as err:
        vertex = next(i for i, (a, b) in enumerate(zip(bounds, bounds[1:])) if not _utf8(raw[a:b]))
        raise _damaged(path, F.LABEL_BYTES, bounds[vertex], repr(raw[bounds[vertex]:bounds[vertex + 1]][:20]),
                       f"the id of vertex {vertex}, which is not UTF-8 text") from err
    check_increasing(out, F.LABEL_BYTES, path)
    return out


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def check_increasing(labels: np.ndarray, name: str, path) -> np.ndarray:
    """``labels`` (int64 or strings), refused unless strictly increasing."""
    if labels.size > 1:
        up = labels[1:] > labels[:-1]
        if not up.all():
            at = int(np.argmax(~up)) + 1
            raise _damaged(path, name, at, shown(repr(labels[at])[:60]),
                           f"not above the id before it ({shown(repr(labels[at - 1])[:60])}): ids must be strictly "
                           "increasing")
    return labels
