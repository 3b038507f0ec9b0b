"""Names and version of the on-disk layout; partitioning/FORMAT.md is the byte-level specification."""

FORMAT_NAME = "ooc_graph"
FORMAT_VERSION = 1
SUPPORTED_VERSIONS = (1,)

# Datasets (see FORMAT.md for dtypes and shapes).
OUT_DEGREE = "vertex/out_degree"
IN_DEGREE = "vertex/in_degree"
LABELS = "vertex/labels"
# String ids (optional, instead of LABELS): UTF-8 bytes of every label, one after another, and
# where each starts (n + 1 offsets).
LABEL_BYTES = "vertex/label_bytes"
LABEL_OFFSETS = "vertex/label_offsets"
CSR = "csr/{side}/{part}"          # side: out | in; part: indptr | indices | weights
CEL_INTERVALS = "cel/intervals"
CEL_SUBGRAPH_BLOCKS = "cel/subgraph_blocks"
CEL_BLOCK_SRC = "cel/block_src_interval"
CEL_BLOCK_DST = "cel/block_dst_interval"
CEL_BLOCK_OFFSETS = "cel/block_offsets"
CEL_SRC = "cel/src"
CEL_DST = "cel/dst"
CEL_WEIGHT = "cel/weight"
# Optional CEL augmentation (source-major), present when the root attribute "augmented" is true.
AUG_BLOCK_SRC = "cel_aug/block_src_interval"
AUG_BLOCK_DST = "cel_aug/block_dst_interval"
AUG_BLOCK_OFFSETS = "cel_aug/block_offsets"
AUG_SRC = "cel_aug/src"
AUG_DST = "cel_aug/dst"
AUG_WEIGHT = "cel_aug/weight"
RESULTS = "results"

DEFAULT_CHUNK_ARCS = 1 << 22       # 4 Mi arcs: 16 MiB per transfer chunk at 2 x uint16
HDF5_CHUNK_ELEMENTS = 1 << 20      # chunk of the non-CEL datasets

# Identity: the root attribute "store_id" (uuid4 hex, written at build time). Stores built before
# it existed are identified by a digest of what their build recorded.
STORE_ID = "store_id"
# Attribute of the "results" group: bytes freed by replaced or dropped results that HDF5 will not
# reuse (it tracks free space only while a file is open); compaction gives them back.
UNUSED_BYTES = "unused_bytes"
PARTIAL_PREFIX = ".partial-"


def new_store_id() -> str:
    import uuid
    return uuid.uuid4().hex


def store_identity(attrs) -> str:
    """The store's ``store_id``, or for an older store a digest of ``built_by`` and its counts."""
    sid = attrs.get(STORE_ID)
    if sid:
        return str(sid)
    import hashlib
    import json
    basis = [str(attrs.get(k)) for k in ("built_by", "num_vertices", "num_arcs", "num_blocks", "chunk_arcs",
                                          "directed", "weighted")]
    return "derived-" + hashlib.sha256(json.dumps(basis).encode()).hexdigest()[:32]
