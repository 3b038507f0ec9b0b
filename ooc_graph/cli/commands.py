"""What each command does. Every command returns an exit status; errors are raised as the
package's exceptions and turned into one line by :func:`ooc_graph.cli.main`."""

from __future__ import annotations

import importlib.util
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from ooc_graph.errors import OocGraphError, ParameterError, ResultNotStoredWarning, install, shown

from .parser import algorithm_kwargs, in_this_process

OUT_FORMATS = (".npz", ".csv", ".parquet")


def _build_opts(a) -> dict:
    if a.old_workers is not None:
        if a.workers is not None:
            raise ParameterError("give --threads only (--workers is its deprecated spelling)")
        print(f"ooc-graph: {a.command} --workers is deprecated: it counts threads, and is now --threads "
              "(in run, --workers counts worker processes)", file=sys.stderr)
        a.workers = a.old_workers
    return dict(memory=a.memory, interval_size=a.interval_size, chunk_arcs=a.chunk_arcs, weight_dtype=a.weight_dtype,
                workers=a.workers, augment=a.augment, progress=False if a.quiet else None, overwrite=a.overwrite,
                device=a.device)


def _rate(G) -> str:
    """Input edges, seconds and edges/s of the build, as the store records them (so ``convert``
    and ``info`` say the same)."""
    b = G.built_by
    try:
        return (f"{int(b.get('input_edges', 0)):,} input edges in {float(b.get('seconds', 0)):.2f} s "
                f"({int(b.get('input_edges_per_second', 0)):,} edges/s)")
    except (TypeError, ValueError, OverflowError):  # a build record this library did not write
        return "no build counts recorded"


def info(a) -> int:
    from ooc_graph import open as open_graph
    with open_graph(a.store) as G:
        if a.json:
            import json
            print(json.dumps(G.attrs | {"built_by": G.built_by, "results": G.results()}, indent=2, default=str))
            return 0
        print(repr(G))
        at = G.attrs
        print(f"  edges {G.num_edges:,}  self-loops {at['self_loops']:,}  ids {at['id_dtype']}  "
              f"local ids {at['local_id_dtype']}  labels {'stored' if G.labels is not None else 'identity'}")
        print(f"  intervals {at['num_intervals']:,} x {at['interval_size']:,} vertices  blocks {at['num_blocks']:,}  "
              f"chunks {G.num_chunks:,} x {G.chunk_arcs:,} arcs  {G.cel_nbytes_per_arc()} bytes/arc")
        if G.weighted:
            print(f"  weights {at['weight_dtype']} in [{at['min_weight']:g}, {at['max_weight']:g}]")
        print(f"  built by {shown(G.built_by.get('tool'))} from {shown(G.built_by.get('source'))}: {_rate(G)}")
        for name in G.results():  # names and attributes as the file has them: escaped (errors.shown)
            r = G.load_result(name)["attrs"]
            print(f"  result {shown(name)}: {shown(r.get('algorithm'))} {shown(r.get('iterations'))} iterations, "
                  f"{_seconds(r.get('seconds'))} s, {shown(r.get('timestamp'))}")
    return 0


def _seconds(value) -> str:
    try:
        return f"{float(value or 0):.3f}"
    except (TypeError, ValueError):
        return shown(value)


def convert(a) -> int:
    from ooc_graph import convert as convert_graph
    G = convert_graph(a.input, a.output, format=a.format, directed=a.directed, weighted=a.weighted,
                      drop_self_loops=a.drop_self_loops, dedupe=not a.keep_duplicates, relabel=a.relabel,
                      num_vertices=a.num_vertices, delimiter=a.delimiter, **_build_opts(a))
    print(f"{G!r}\nconverted {_rate(G)}")
    G.close()
    return 0


def generate(a) -> int:
    from ooc_graph.generate import GENERATORS
    fn = GENERATORS[a.kind]
    if a.kind == "grid":
        G = fn(a.output, a.rows, a.cols, seed=a.seed, weighted=a.weighted, **_build_opts(a))
    else:
        G = fn(a.output, a.scale, a.edge_factor, seed=a.seed, directed=a.directed, weighted=a.weighted,
               **_build_opts(a))
    print(f"{G!r}\ngenerated {_rate(G)}")
    G.close()
    return 0


def _check_out(path):
    if path is not None and Path(path).suffix.lower() not in OUT_FORMATS:
        raise ParameterError(f"--out {path}: unknown format {Path(path).suffix or '(no suffix)'!r} "
                             f"(valid: {', '.join(OUT_FORMATS)})")
    _check_folder("--out", path)
    if path is not None and Path(path).suffix.lower() == ".parquet":
        _check_installed("--out .parquet", "pyarrow", "dataframe")


def _check_installed(what, module, extra):
    """Before computing, not after: an output that needs a library this Python does not have."""
    if importlib.util.find_spec(module) is None:
        raise ParameterError(f"{what} needs {module}: {install(extra, module)}")


def _check_folder(flag, path):
    """Before computing, not after: an output whose folder is not there."""
    if path is not None and not Path(path).parent.is_dir():
        raise ParameterError(f"{flag} {path}: folder {Path(path).parent} does not exist")


def _client(a):
    if in_this_process(a):
        return None, a.device  # one process: the distributed runtime is not imported
    from ooc_graph.runtime import cluster
    if a.gpus is not None:  # given, even empty or 0: checked there, never ignored
        return cluster.local_gpu_client(a.gpus), "gpu"
    if a.workers is not None:
        return cluster.local_cpu_client(a.workers), "cpu"
    return cluster.as_client(a.scheduler), a.device


def run(a) -> int:
    from ooc_graph import open as open_graph
    from ooc_graph import registry

    from .progress import Progress  # the engine's watcher: not for info, convert or results
    _check_out(a.out)
    _check_folder("--profile", a.profile)
    if a.profile is not None:
        _check_installed("--profile", "matplotlib", "plot")
    kwargs = algorithm_kwargs(a)
    common = dict(memory=a.memory, device_memory=a.device_memory)
    if a.profile is not None:  # only the streamed algorithms take it
        common["profile"] = True
    progress = Progress(a.algorithm, enabled=not a.quiet)
    client, device = _client(a)
    if client is not None:  # a job on a cluster: rank 0 saves into the store; progress polled
        from ooc_graph.runtime import submit
        store = False if a.no_store else (a.result_name or True)
        job = submit(client, a.algorithm, a.store, device=device, store=store, **common, **kwargs)
        print(f"submitted job {job.id} to {len(job.spec.workers)} workers ({job.spec.device})", file=sys.stderr)
        _report(a, progress.follow(job))
        return 0
    with open_graph(a.store) as G:
        if not a.no_store and a.result_name:
            from ooc_graph.store.results import check_result_name
            check_result_name(a.result_name)  # before computing, not after
        with progress:
            r = registry.get(a.algorithm).function(G, device=device, **common, **kwargs)
        if not a.no_store:
            with warnings.catch_warnings():  # said below in one line
                warnings.simplefilter("ignore", ResultNotStoredWarning)
                r.save(a.result_name)
        _report(a, r)
    return 0


def _report(a, r) -> None:
    """The run's summary, where its result went when not into the store, and the outputs."""
    print(r.summary())
    saved = getattr(r, "saved", None)
    if saved is not None and not getattr(saved, "in_store", True):
        print(f"ooc-graph: result not stored in {a.store} ({saved.reason}); written to {saved.path}",
              file=sys.stderr)
    if a.out:
        write_columns(a.out, r.columns())
    if a.profile:
        from ooc_graph.profile import plot_profile
        try:
            plot_profile(r, a.profile)
        except OSError as err:
            raise _cannot_write("--profile", a.profile, err) from err


def _cannot_write(flag, path, err: OSError) -> OocGraphError:
    """One line naming the output the user gave (not its temporary name) and why (disk full...)."""
    return OocGraphError(f"{flag} {path}: cannot write it: {err.strerror or err}")


def results(a) -> int:
    from ooc_graph import open as open_graph
    with open_graph(a.store) as G:
        if a.action == "list":
            for name in G.results():  # escaped where the file holds control characters (errors.shown)
                r = G.load_result(name)["attrs"]
                print(f"{shown(name)}\t{shown(r.get('algorithm'))}\t{shown(r.get('iterations'))} iterations\t"
                      f"{shown(r.get('timestamp'))}")
        elif a.action == "drop":
            if not a.name:
                raise ParameterError("results drop: name the result to drop "
                                     f"(stored: {', '.join(map(shown, G.results())) or 'none'})")
            G.drop_result(a.name)
            print(f"dropped {shown(a.name)} from {G.path}")
        else:
            before = os.path.getsize(G.path)
            G.compact()
            print(f"compacted {G.path}: {before:,} -> {os.path.getsize(G.path):,} bytes")
    return 0


def algorithms(a) -> int:
    from ooc_graph import registry
    known = registry.algorithms()
    width = max(map(len, known))
    for name, algo in sorted(known.items()):
        flags = " ".join(o.flag for o in algo.options)
        print(f"{name:<{width}}  {algo.summary}" + (f"  [{flags}]" if flags else ""))
    return 0


def demo(a) -> int:
    import tempfile

    from ooc_graph import bfs, generate, pagerank, sssp, wcc
    from ooc_graph.engine import get_backend
    _check_out(a.out)
    client, device = _client(a)
    where = {"client": client} if client is not None else {}
    name = get_backend(device).name if client is None else f"{device} on {len(client.scheduler_info()['workers'])} workers"
    with tempfile.TemporaryDirectory(prefix="ooc-graph-demo-") as d:
        t = time.perf_counter()
        G = generate.rmat(os.path.join(d, "rmat.h5"), a.scale, a.edge_factor, seed=1, weighted=True,
                          memory=a.memory, progress=False if a.quiet else None)
        print(f"generated {G!r} in {time.perf_counter() - t:.2f} s; device: {name}")
        src = int(np.argmax(G.out_degree))
        kw = dict(memory=a.memory, device=device, device_memory=a.device_memory, **where)
        runs = [pagerank(G, **kw), bfs(G, src, **kw), sssp(G, src, **kw), wcc(G, **kw)]
        for r in runs:
            print(r.summary())
        pr = runs[0]
        top = np.argsort(pr.values)[::-1][:5]
        print("top PageRank vertices:", ", ".join(f"{v} ({pr.values[v]:.2e})" for v in top))
        if a.out:
            write_columns(a.out, {"vertex": (G.vertices, None)} | {
                f"{r.algorithm}_{k}": v for r in runs for k, v in r.columns().items() if k != "vertex"})
        G.close()
    return 0


def write_columns(path, columns: dict) -> None:
    """``{name: (values, missing)}`` (as ``Result.columns()``: original vertex ids, ``missing``
    marking where an array of vertices has none) to ``path``, written under a temporary name and
    renamed, so a failure leaves no partial file. .parquet is ``Result.to_arrow()``'s table (nulls);
    .csv leaves missing fields empty; .npz stores each column and, where some are missing, a
    boolean ``<name>_missing`` (string ids as a Unicode array, readable without pickle)."""
    import tempfile

    from ooc_graph.algorithms._result import arrow_table
    path = Path(path)
    suffix = path.suffix.lower()
    if not path.parent.is_dir():
        raise ParameterError(f"--out {path}: folder {path.parent} does not exist")
    table = arrow_table(columns, "--out .parquet") if suffix == ".parquet" else None  # before any file
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    except OSError as err:
        raise _cannot_write("--out", path, err) from err
    os.close(fd)
    try:
        if suffix == ".npz":
            arrays = {}
            for name, (values, missing) in columns.items():
                arrays[name] = values.astype(str) if values.dtype.kind == "O" else values
                if missing is not None and missing.any():
                    arrays[f"{name}_missing"] = missing
            with open(tmp, "wb") as f:
                np.savez(f, **arrays)
        elif suffix == ".parquet":
            import pyarrow.parquet as pq
            pq.write_table(table, tmp)
        else:
            _write_csv(tmp, columns)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
    except BaseException as err:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(err, OSError):
            raise _cannot_write("--out", path, err) from err
        raise


def _write_csv(path, columns: dict, rows: int = 1 << 20) -> None:
    """Numbers by ``np.savetxt`` in blocks; columns of strings or with missing values through the
    csv module (quoted where needed, missing as an empty field)."""
    import csv
    names = list(columns)
    arrays = [np.asarray(columns[k][0]) for k in names]
    missing = [columns[k][1] for k in names]
    plain = all(m is None or not m.any() for m in missing) and all(a.dtype.kind in "biuf" for a in arrays)
    formats = ["%.17g" if a.dtype.kind == "f" else "%d" for a in arrays]
    with open(path, "w", newline="") as f:
        f.write(",".join(names) + "\n")
        writer = None if plain else csv.writer(f, lineterminator="\n")
        for start in range(0, len(arrays[0]) if arrays else 0, rows):
            if plain:
                block = np.column_stack([a[start:start + rows].astype(object) for a in arrays])
                np.savetxt(f, block, fmt=formats, delimiter=",")
                continue
            cols = []
            for a, m in zip(arrays, missing):
                part = a[start:start + rows]
                text = [repr(v) if isinstance(v, float) else str(v) for v in part.tolist()]
                if m is not None:
                    text = ["" if gone else t for t, gone in zip(text, m[start:start + rows].tolist())]
                cols.append(text)
            writer.writerows(zip(*cols))
