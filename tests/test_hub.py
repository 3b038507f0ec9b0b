"""The runtime's listeners (runtime/hub.py, mesh.py, reply.py): a connection joins a job only by
proving the job's secret, and nothing a stray connection does stops a hub or holds it up. Live
hubs, attacked from threads."""

import pickle
import secrets
import socket
import struct
import threading
import time
from pathlib import Path

import pytest

from ooc_graph.runtime import launch, limits, mesh, reply, wire

from conftest import closed_by_peer, stray_connections
from test_wire import Marker

pytestmark = pytest.mark.timeout(120)


def _ranks(hubs, job, secret, payloads, timeout=10.0) -> dict:
    """Ranks 0 and 1 of ``job`` on threads of this process, each with its own hub: what each
    rank's allgather of ``payloads[rank]`` gave (a rank that failed gives nothing)."""
    addresses = [h.address for h in hubs]
    got = {}

    def rank(r):
        m = mesh.Mesh(job, r, addresses, hubs[r], secret, timeout=timeout)
        try:
            got[r] = m.allgather(payloads[r])
        finally:
            m.close()
    threads = [threading.Thread(target=rank, args=(r,), daemon=True) for r in range(len(hubs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout + 5)
    return got


def _answer_as_a_rank(sock, payload: bytes) -> None:
    """A forged rank: wait for a message from the job's rank 0 and answer it with ``payload``."""
    try:
        sock.settimeout(10)
        if sock.recv(1 << 16):
            sock.sendall(struct.pack("<q", len(payload)) + payload)
    except OSError:
        pass


def test_a_job_id_alone_does_not_join_a_job():
    """Someone who learned a job's id (dask task keys carry it) connects to rank 0's hub first,
    as rank 1: with the bare id (all that joining took before) and with a guessed secret. The
    job's ranks still form their mesh with each other, and the forgeries are closed."""
    hubs = [mesh.Hub("127.0.0.1"), mesh.Hub("127.0.0.1")]
    job, secret = "pagerank-7-0123abcd", secrets.token_bytes(32)
    bare = socket.create_connection(hubs[0].address, timeout=5)
    bare.sendall(struct.pack("<q", len(job)) + job.encode() + struct.pack("<q", 1))
    guessed = socket.create_connection(hubs[0].address, timeout=5)
    threading.Thread(target=_answer_as_a_rank, args=(bare, b"evil"), daemon=True).start()
    try:
        wire.introduce(guessed, wire.MESH, job, 1, secrets.token_bytes(32))
    except OSError:
        pass  # (a hub that sends no nonce)
    threading.Thread(target=_answer_as_a_rank, args=(guessed, b"evil"), daemon=True).start()
    time.sleep(0.2)  # the forgeries come first
    got = _ranks(hubs, job, secret, [b"zero", b"one"])
    assert got == {0: [b"zero", b"one"], 1: [b"zero", b"one"]}
    deadline = time.monotonic() + 5
    while not (closed_by_peer(bare) and closed_by_peer(guessed)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert closed_by_peer(bare) and closed_by_peer(guessed)
    for h in hubs:
        h.close()


def test_a_reply_must_prove_the_job_secret_and_is_never_unpickled(tmp_path):
    job, secret = "bfs-3-89abcdef", secrets.token_bytes(32)
    address = reply.new_route(job, secret)
    marker = Marker()
    marker.path = str(tmp_path / "ran")
    # a forged reply (another secret), then a pickle from a peer that knows the secret: neither counts
    arrived = threading.Event()
    listener = reply.Listener(job, secret, arrived, lambda: False)
    with socket.create_connection(address, timeout=5) as s:
        wire.introduce(s, wire.REPLY, job, 0, secrets.token_bytes(32), wire.dumps([{"summary": "forged"}]))
    with socket.create_connection(address, timeout=5) as s:
        wire.introduce(s, wire.REPLY, job, 0, secret, pickle.dumps([marker]))
    assert arrived.wait(5) and listener.parts is None and not Path(marker.path).exists()
    # the genuine reply, as rank 0 sends it
    job = "bfs-4-89abcdef"
    address = reply.new_route(job, secret)
    arrived.clear()
    listener = reply.Listener(job, secret, arrived, lambda: False)
    reply.send(address, job, secret, [{"summary": {"rank": 0, "vertices": (0, 5)}}, {"summary": {"rank": 1}}])
    assert arrived.wait(5)
    assert listener.parts == [{"summary": {"rank": 0, "vertices": (0, 5)}}, {"summary": {"rank": 1}}]


def test_a_hub_outlives_strays_and_still_serves_jobs_promptly():
    """A negative length (which stopped the old hub's thread for good), garbage, a huge length,
    a silent connection and 200 idle ones: a job's mesh still forms at once, a start still
    arrives, the idle connections beyond MAX_PENDING are closed at once and the rest within
    HANDSHAKE_SECONDS."""
    hubs = [mesh.Hub("127.0.0.1"), mesh.Hub("127.0.0.1")]
    strays = stray_connections(hubs[0].address)
    others = stray_connections(hubs[1].address, idle=5)
    time.sleep(0.5)
    t = time.monotonic()
    got = _ranks(hubs, "wcc-1-strays", secrets.token_bytes(32), [b"a", b"b"])
    assert got == {0: [b"a", b"b"], 1: [b"a", b"b"]} and time.monotonic() - t < 2
    started = threading.Event()
    hubs[0].on_start = lambda hub, rank, payload: started.set()
    assert launch.push("wcc-2-strays", [hubs[0].address], [launch.hub_token(hubs[0])], wire.dumps("go")) == []
    assert started.wait(2)
    assert sum(not closed_by_peer(s) for s in strays) <= limits.MAX_PENDING
    time.sleep(limits.HANDSHAKE_SECONDS + 1.5)
    assert all(closed_by_peer(s) for s in strays + others)
    for s in strays + others:
        s.close()
    for h in hubs:
        h.close()


def test_introductions_for_unknown_jobs_are_bounded():
    """Well-formed introductions for jobs that never start here wait at most MAX_PARKED at once
    (the oldest go first), and a real job still forms its mesh past them."""
    hubs = [mesh.Hub("127.0.0.1"), mesh.Hub("127.0.0.1")]
    parked = []
    for i in range(limits.MAX_PARKED + 40):
        s = socket.create_connection(hubs[0].address, timeout=5)
        wire.introduce(s, wire.MESH, f"nojob-{i}", 1, secrets.token_bytes(32))
        parked.append(s)
    time.sleep(0.5)
    assert sum(not closed_by_peer(s) for s in parked) <= limits.MAX_PARKED
    assert all(closed_by_peer(s) for s in parked[:40])  # the oldest
    got = _ranks(hubs, "wcc-3-parked", secrets.token_bytes(32), [b"a", b"b"])
    assert got == {0: [b"a", b"b"], 1: [b"a", b"b"]}
    for s in parked:
        s.close()
    for h in hubs:
        h.close()


def test_a_mesh_message_of_a_bad_length_fails_the_job_naming_the_rank():
    """An authenticated peer gone wrong: a negative length is refused with one line naming it."""
    from ooc_graph.errors import JobError
    hubs = [mesh.Hub("127.0.0.1")]
    job, secret = "wcc-4-badlength", secrets.token_bytes(32)
    errors = []

    def rank0():
        m = mesh.Mesh(job, 0, [hubs[0].address, ("127.0.0.1", 1)], hubs[0], secret, names=["w0", "w1"], timeout=5)
        try:
            m.allgather(b"x")
        except JobError as err:
            errors.append(str(err))
        finally:
            m.close()
    t = threading.Thread(target=rank0, daemon=True)
    t.start()
    peer = socket.create_connection(hubs[0].address, timeout=5)
    wire.introduce(peer, wire.MESH, job, 1, secret)
    peer.sendall(struct.pack("<q", -1))
    t.join(10)
    assert errors and "rank 1 (worker w1)" in errors[0] and "-1" in errors[0] and "\n" not in errors[0]
    peer.close()
    hubs[0].close()
