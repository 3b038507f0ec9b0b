"""What crosses the runtime's own connections: introductions, lengths and plain data.

Every connection to a :class:`~.hub.Hub` begins alike. The hub sends a fresh random nonce as soon
as it accepts; the connecting side answers with an introduction — what it is (:data:`MESH`,
:data:`START`, :data:`REPLY` or :data:`CANCEL`), the job's id, its rank — and an HMAC-SHA256 of
the nonce and that introduction, keyed by a secret the hub knows: a job's own secret for its mesh
and its reply (made by the client, ``secrets.token_bytes(32)``, and delivered to the workers only
in the job's spec, through dask or the direct start), the hub's start token for a start or a
cancel (given to the client through dask). The hub compares with :func:`hmac.compare_digest` and
closes the connection on a mismatch. No secret is ever sent on a connection it authenticates, and
a recorded introduction is worth nothing on another connection (another nonce). This costs one
round trip: the connecting side waits for the nonce.

Nothing that comes over these connections is unpickled. Small structures are msgpack with a few
extension types — tuples, numpy arrays (a dtype and shape header, then the raw bytes; numeric
dtypes only), result objects of the package's result classes, shared-memory arrays and saved
results — and the collectives' arrays are raw bytes whose dtype and length both sides know.
Every length read from a peer is checked against its bound in :mod:`.limits` before anything is
allocated for it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import os
import socket
import struct

import msgpack
import numpy as np

from .limits import MAX_NAME

MESH, START, REPLY, CANCEL = 1, 2, 3, 4
KINDS = {MESH: "mesh", START: "start", REPLY: "reply", CANCEL: "cancel"}
NONCE_BYTES = 16
MAC_BYTES = 32
LENGTH = struct.Struct("<q")
# An introduction: magic and version, kind, length of the job id, rank; then the id and the MAC.
HELLO = struct.Struct("<4sBHI")
MAGIC = b"oog1"


class ProtocolError(ValueError):
    """A peer sent something that is not this protocol (one line, naming the value)."""


# -- introductions ------------------------------------------------------------------------------
def nonce() -> bytes:
    return os.urandom(NONCE_BYTES)


def _mac(key: bytes, nonce_: bytes, header: bytes, name: bytes) -> bytes:
    return hmac.new(key, nonce_ + header + name, hashlib.sha256).digest()


def hello(kind: int, name: str, rank: int, key: bytes, nonce_: bytes) -> bytes:
    """The introduction of a connection that received ``nonce_``, proving knowledge of ``key``."""
    tag = name.encode()
    if not 0 < len(tag) <= MAX_NAME:
        raise ProtocolError(f"a job id of {len(tag)} bytes (at most {MAX_NAME})")
    header = HELLO.pack(MAGIC, kind, len(tag), rank)
    return header + tag + _mac(key, nonce_, header, tag)


def parse_hello(header: bytes) -> tuple:
    """``(kind, name length, rank)`` of an introduction's fixed part; raises :class:`ProtocolError`."""
    magic, kind, length, rank = HELLO.unpack(header)
    if magic != MAGIC or kind not in KINDS:
        raise ProtocolError(f"not an introduction (magic {magic!r}, kind {kind})")
    if not 0 < length <= MAX_NAME:
        raise ProtocolError(f"a job id of {length} bytes (at most {MAX_NAME})")
    return kind, length, rank


def proven(key, nonce_: bytes, header: bytes, name: bytes, mac: bytes) -> bool:
    """Whether ``mac`` proves knowledge of ``key`` for this introduction (False without a key)."""
    if not key:
        return False
    return hmac.compare_digest(_mac(key, nonce_, header, name), mac)


def length(data: bytes, most: int, what: str) -> int:
    """A length read from a peer, within ``0..most``."""
    (n,) = LENGTH.unpack(data)
    if not 0 <= n <= most:
        raise ProtocolError(f"{what} of {n} bytes (valid: 0 to {most})")
    return n


def frame(payload) -> list:
    """``payload`` with its length in front, as parts to send."""
    view = memoryview(payload).cast("B")
    return [LENGTH.pack(view.nbytes), view]


def recv_exact(sock, n: int) -> bytes:
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = sock.recv_into(view[got:])
        if k == 0:
            raise EOFError("connection closed")
        got += k
    return bytes(buf)


def introduce(sock, kind: int, name: str, rank: int, key: bytes, payload=None) -> None:
    """The connecting side: wait for the hub's nonce (within the socket's timeout), then send the
    introduction and, for a start or a reply, ``payload`` with its length."""
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    head = hello(kind, name, rank, key, recv_exact(sock, NONCE_BYTES))
    if payload is None:
        sock.sendall(head)
        return
    view = memoryview(payload).cast("B")
    small = view.nbytes < 1 << 16  # one send; a large one after its header
    sock.sendall(head + LENGTH.pack(view.nbytes) + (bytes(view) if small else b""))
    if not small:
        sock.sendall(view)


# -- NCCL's bootstrap (runtime/nccl.py) ----------------------------------------------------------
UNIQUE_ID_BYTES = 128  # NCCL_UNIQUE_ID_BYTES


def pack_generation(generation: int) -> bytes:
    return LENGTH.pack(generation)


def unpack_generation(data: bytes) -> int:
    if len(data) != LENGTH.size:
        raise ProtocolError(f"a communicator generation of {len(data)} bytes (valid: {LENGTH.size})")
    return LENGTH.unpack(data)[0]


def pack_unique_id(uid) -> bytes:
    """An NCCL unique id as CuPy's ``get_unique_id`` gives it (a tuple of 128 C chars, signed or
    not as the platform's are), as plain data: the other ranks get the same values back."""
    values = [int(v) for v in uid]
    if len(values) != UNIQUE_ID_BYTES or not all(-128 <= v <= 255 for v in values):
        raise ProtocolError(f"an NCCL unique id of {len(values)} values (valid: {UNIQUE_ID_BYTES} bytes)")
    return dumps(values)


def unpack_unique_id(data: bytes) -> tuple:
    """The id as :func:`pack_unique_id` packed it, as the tuple CuPy 13's ``NcclCommunicator`` takes
    (:func:`unique_id_bytes` for CuPy 14's)."""
    values = loads(data)
    if not isinstance(values, list) or len(values) != UNIQUE_ID_BYTES or \
            not all(isinstance(v, int) and -128 <= v <= 255 for v in values):
        raise ProtocolError(f"not an NCCL unique id ({type(values).__name__})")
    return tuple(values)


def unique_id_bytes(uid: tuple) -> bytes:
    """The unique id as the bytes CuPy 14's ``NcclCommunicator`` takes (``get_unique_id`` gives
    bytes there; CuPy 13 gives and takes a tuple of C chars, signed or not)."""
    return bytes(v & 0xFF for v in uid)


# -- plain data ---------------------------------------------------------------------------------
_TUPLE, _ARRAY, _RESULT, _SHARED, _SAVED = 1, 2, 3, 4, 5
_NUMERIC = "biufc"  # dtype kinds an array may have: bool, integers, floats, complex


def dumps(obj) -> bytes:
    """``obj`` as plain data; raises ``TypeError`` for anything else (a caller falls back on dask)."""
    return msgpack.packb(obj, default=_encode, use_bin_type=True, strict_types=True)


def loads(data):
    """What :func:`dumps` made; raises :class:`ProtocolError` for anything else."""
    try:
        return msgpack.unpackb(data, ext_hook=_decode, raw=False, strict_map_key=False, use_list=True)
    except ProtocolError:
        raise
    except Exception as err:  # msgpack's own errors, or a field of the wrong type
        raise ProtocolError(f"not plain data: {type(err).__name__}: {err}") from err


def _encode(obj):
    if isinstance(obj, tuple) and not hasattr(obj, "_fields"):
        return msgpack.ExtType(_TUPLE, dumps(list(obj)))
    if isinstance(obj, np.ndarray):
        return msgpack.ExtType(_ARRAY, _array_bytes(obj))
    if isinstance(obj, (np.bool_, bool)):
        return bool(obj)
    if isinstance(obj, (np.integer, int)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        return float(obj)
    if isinstance(obj, str):
        return str(obj)
    if isinstance(obj, dict):
        return dict(obj)
    if isinstance(obj, list):
        return list(obj)
    if isinstance(obj, (bytearray, memoryview)):
        return bytes(obj)
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    from ooc_graph.store.results import SavedResult

    from .segments import SharedArray
    if isinstance(obj, SharedArray):
        return msgpack.ExtType(_SHARED, dumps([obj.path, obj.dtype, list(obj.shape)]))
    if isinstance(obj, SavedResult):
        return msgpack.ExtType(_SAVED, dumps([obj.name, str(obj.path), obj.in_store, obj.reason]))
    if _result_class(_name(type(obj))) is type(obj):
        return msgpack.ExtType(_RESULT, dumps([_name(type(obj)), dict(vars(obj))]))
    raise TypeError(f"{type(obj).__name__} is not plain data")


def _decode(code: int, data: bytes):
    if code == _TUPLE:
        return tuple(loads(data))
    if code == _ARRAY:
        return _array_from(data)
    if code == _SHARED:
        from .segments import SharedArray, owned_path
        path, dtype, shape = loads(data)
        return SharedArray(owned_path(path), _dtype(dtype).str, _shape(shape))
    if code == _SAVED:
        from pathlib import Path

        from ooc_graph.store.results import SavedResult
        name, path, in_store, reason = loads(data)
        return SavedResult(str(name), Path(path), bool(in_store), str(reason))
    if code == _RESULT:
        name, fields = loads(data)
        cls = _result_class(name)
        if cls is None or not isinstance(fields, dict) or not all(isinstance(k, str) for k in fields):
            raise ProtocolError(f"not a result class of this package: {name!r}")
        result = object.__new__(cls)  # its fields as sent, as unpickling would set them
        result.__dict__.update(fields)
        return result
    raise ProtocolError(f"unknown extension type {code}")


def _name(cls) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _result_class(name: str):
    """The result class (a dataclass) of a registered algorithm so named, or None: the registry
    lists them, so the runtime knows no algorithm module."""
    from ooc_graph import registry
    cls = {_name(entry.result): entry.result for entry in registry.algorithms().values()}.get(name)
    return cls if cls is not None and dataclasses.is_dataclass(cls) else None


def _dtype(text) -> np.dtype:
    if not isinstance(text, str) or len(text) > 8:
        raise ProtocolError(f"not a dtype: {text!r}")
    dtype = np.dtype(text)
    if dtype.kind not in _NUMERIC or dtype.fields is not None or dtype.subdtype is not None:
        raise ProtocolError(f"dtype {text!r} is not numeric")
    return dtype


def _shape(shape) -> tuple:
    if not isinstance(shape, list) or len(shape) > 32 or not all(isinstance(s, int) and s >= 0 for s in shape):
        raise ProtocolError(f"not an array shape: {shape!r}")
    return tuple(shape)


def _array_bytes(a: np.ndarray) -> bytes:
    if a.dtype.kind not in _NUMERIC or a.dtype.fields is not None or a.dtype.subdtype is not None:
        raise TypeError(f"an array of dtype {a.dtype} is not plain data (numeric dtypes only)")
    header = msgpack.packb([a.dtype.str, list(a.shape)])
    return LENGTH.pack(len(header)) + header + np.ascontiguousarray(a).tobytes()


def _array_from(data: bytes) -> np.ndarray:
    n = length(data[:LENGTH.size], 1024, "an array header")
    dtype_text, shape = msgpack.unpackb(data[LENGTH.size:LENGTH.size + n], raw=False)
    dtype, shape = _dtype(dtype_text), _shape(shape)
    body = memoryview(data)[LENGTH.size + n:]
    if body.nbytes != int(np.prod(shape, dtype=np.int64)) * dtype.itemsize:
        raise ProtocolError(f"an array of shape {shape} and dtype {dtype.str} in {body.nbytes} bytes")
    array = np.empty(shape, dtype)
    memoryview(array.reshape(-1)).cast("B")[:] = body
    return array
