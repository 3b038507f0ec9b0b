"""Every bound the runtime's listeners and its client-side calls enforce, in one place.

A worker's :class:`~.hub.Hub` (and a client's, for rank 0's reply) accepts connections from
anything that can reach its port; these numbers say how much such a connection may cost it
before it is closed. docs/security.md lists them with what they protect.
"""

# A connection must have introduced itself (and sent a start's or a reply's payload) this many
# seconds after it was accepted; a silent or slow peer is closed then. A genuine one takes
# microseconds on loopback and a few round trips on a LAN; 64 MiB at 1 Gb/s takes ~0.5 s.
HANDSHAKE_SECONDS = 5.0
# Connections accepted and not yet introduced, per hub: past this, the oldest is closed. A job's
# ranks connect to a hub one each, within milliseconds, so 64 only ever fill up with strays.
MAX_PENDING = 64
# Introduced mesh connections waiting for a job this worker has not heard of yet (its rank has
# not started here): past this, the oldest is closed; each waits at most the mesh's 60 s
# (mesh.CONNECT_TIMEOUT). Genuine ones are one per higher rank of a job that starts late here.
MAX_PARKED = 256
# Bytes of a job id in an introduction (job ids are ~30 characters).
MAX_NAME = 256
# Bytes of a direct start (a job's spec) or of rank 0's direct reply (the ranks' summaries; the
# result's arrays travel in shared memory): a larger reply goes back through dask instead.
MAX_PAYLOAD = 64 << 20
# Bytes of one message between two authenticated ranks of a job (a collective's part: vertex
# state, 8 bytes a vertex, so 2**40 allows graphs of ~137 billion vertices).
MAX_MESSAGE = 1 << 40
# Seconds the client waits for the workers to answer a progress, status or cancel call (dask's
# Client.run) before it reports them unresponsive: a round trip takes ~11 ms, a busy worker's
# event loop answers within a second; a frozen (stopped) one never does.
RUN_SECONDS = 5.0
