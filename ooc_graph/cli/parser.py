"""The command line's grammar: one set of conventions for every command.

argparse (the standard library) rather than a CLI framework: it has what the conventions need —
``--x/--no-x`` pairs (``BooleanOptionalAction``), per-algorithm sub-commands that refuse options
that do not apply, help on every option — and the package keeps no dependency for it.
Boolean options come in pairs (``--directed/--undirected``, ``--weighted/--no-weighted``);
``-v``/``--debug`` are accepted before or after the command.
"""

from __future__ import annotations

import argparse

from ooc_graph import __version__


def _verbosity(p, top: bool):
    default = False if top else argparse.SUPPRESS
    p.add_argument("-v", "--verbose", action="store_true", default=default, help="log what the run does")
    p.add_argument("--debug", action="store_true", default=default,
                   help="print the traceback of an error (implies -v)")


def _pair(p, name, help, default=None, negative=None):
    """``--name`` / ``--negative`` (default ``--no-name``) setting one boolean, ``None`` if neither."""
    g = p.add_mutually_exclusive_group()
    dest = name.replace("-", "_")
    g.add_argument(f"--{name}", dest=dest, action="store_true", default=default, help=help)
    g.add_argument(f"--{negative or 'no-' + name}", dest=dest, action="store_false", help=f"the opposite of --{name}")


def _build_options(p):
    p.add_argument("--memory", help="host memory budget of the whole process, e.g. 2GB "
                   "(default: a quarter of RAM or of the container's limit)")
    p.add_argument("--interval-size", type=int, help="vertices per interval (default 65536)")
    p.add_argument("--chunk-arcs", type=int, help="arcs per transfer chunk (default 4194304)")
    p.add_argument("--weight-dtype", choices=("float32", "float64"), default="float32",
                   help="type of stored weights (float64 keeps weights float32 cannot hold)")
    p.add_argument("--threads", dest="workers", type=int, metavar="THREADS",
                   help="threads sorting (and generating) at once, in this process (default: cores, max 16)")
    p.add_argument("--workers", dest="old_workers", type=int, metavar="THREADS",
                   help="deprecated spelling of --threads (in run, --workers means worker processes)")
    p.add_argument("--augment", action="store_true",
                   help="also store the CEL augmentation for asynchronous execution (more disk)")
    p.add_argument("--overwrite", action="store_true", help="replace the output if it is an existing store")
    p.add_argument("--device", choices=("auto", "cpu", "gpu"), default="auto",
                   help="where buckets are sorted (default: the GPU if any; the store is the same)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def in_this_process(a) -> bool:
    """``run``'s or ``demo``'s arguments ask for no cluster (``--gpus``, ``--workers``,
    ``--scheduler``): the algorithm runs in this process."""
    return all(getattr(a, name, None) is None for name in ("gpus", "workers", "scheduler"))


def run_options(p, *, demo: bool = False, distributed: bool = True):
    from ooc_graph.registry import DEVICES
    p.add_argument("--device", choices=DEVICES, default="auto", help="where to compute (default: the GPU if any)")
    p.add_argument("--memory", help="host memory for the graph's data (per worker), e.g. 2GB: the vertex state and "
                   "the chunks of arcs cached and in flight (default: a quarter of RAM or of the container's "
                   "limit). Not a cap on the process: the program (~190 MB) and the result come on top")
    p.add_argument("--device-memory", help="GPU memory budget (per GPU), e.g. 20GB (default: 80%% of free memory)")
    if distributed:
        where = p.add_mutually_exclusive_group()
        where.add_argument("--gpus", help="run on several local GPUs: 0,1 or all (starts a dask-cuda cluster)")
        where.add_argument("--scheduler", metavar="ADDRESS", help="run as a job on this dask cluster, tcp://host:port")
        where.add_argument("--workers", type=int,
                           help="run on this many local CPU worker processes (a dask LocalCluster)")
    else:  # the algorithm runs in one process
        p.set_defaults(gpus=None, scheduler=None, workers=None)
    p.add_argument("--out", help="also write the result arrays here: .npz" + ("" if demo else ", .csv or .parquet"))
    p.add_argument("--quiet", action="store_true", help="no progress display")


def build_parser(command: str | None = None, algorithm: str | None = None) -> argparse.ArgumentParser:
    """The whole grammar; with ``command`` (and for ``run``, ``algorithm``), the arguments of that
    command (algorithm) only, the others keeping their names and help as ``--help`` lists them:
    the program parses its command line so, importing no more than the command uses (``run`` the
    algorithms, ``convert`` the input formats, ``generate`` the generators; ``info`` none of
    them) and building the options of one algorithm, not of all 14 (~20 ms here)."""
    ap = argparse.ArgumentParser(prog="ooc-graph", description="Out-of-core, multi-GPU graph processing.")
    ap.add_argument("--version", action="version", version=f"ooc-graph {__version__}")
    _verbosity(ap, top=True)
    sub = ap.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (summary, arguments) in _COMMANDS.items():
        p = sub.add_parser(name, help=summary)
        if name == "run" and command in (None, "run"):
            arguments(p, algorithm)
        elif command in (None, name):
            arguments(p)
    return ap


def named(argv) -> tuple[str, str]:
    """The command ``argv`` names and, for ``run``, the algorithm (``""`` where none): its first
    words that are not options, since neither the program's options (``--version``, ``-v``,
    ``--debug``, ``-h``) nor run's own (``-h``) take a value."""
    words = [word for word in argv if not word.startswith("-")]
    command = words[0] if words else ""
    return command, words[1] if command == "run" and len(words) > 1 else ""


def _info(p):
    p.add_argument("store", help="the graph store (.h5)")
    p.add_argument("--json", action="store_true", help="print the attributes as JSON")
    _verbosity(p, top=False)


def _convert(p):
    from ooc_graph.ingest.formats import READERS
    p.add_argument("input", help="edge file (format from the suffix; .gz/.xz/.bz2 are read compressed)")
    p.add_argument("output", help="the graph store to write (.h5)")
    p.add_argument("--format", choices=sorted(READERS), help="input format (default: from the suffix)")
    _pair(p, "directed", "keep arcs as given (default: what the file says, as a SNAP header's '# Undirected "
          "graph' or .mtx symmetry, else directed)", negative="undirected")
    _pair(p, "weighted", "keep the weight column (default: if the input has one)")
    _pair(p, "relabel", "map ids to 0..n-1, keeping the originals (default: when they are not already)")
    p.add_argument("--drop-self-loops", action="store_true", help="remove arcs (v, v)")
    p.add_argument("--keep-duplicates", action="store_true", help="do not merge repeated arcs")
    p.add_argument("--num-vertices", type=int, help="vertex count when ids are 0..n-1 and some have no edge")
    p.add_argument("--delimiter", help="column separator for csv (default ',') or text")
    _build_options(p)
    _verbosity(p, top=False)


def _generate(p):
    from ooc_graph.generate import GENERATORS
    p.add_argument("kind", choices=sorted(GENERATORS), help="R-MAT (Graph500), uniform random or a 2-D mesh")
    p.add_argument("output", help="the graph store to write (.h5)")
    p.add_argument("--scale", type=int, default=16, help="rmat/urand: 2**scale vertices")
    p.add_argument("--edge-factor", type=int, default=16, help="rmat/urand: edges per vertex")
    p.add_argument("--rows", type=int, default=256, help="grid rows")
    p.add_argument("--cols", type=int, default=256, help="grid columns")
    _pair(p, "directed", "rmat/urand: keep edges directed (default: undirected)", default=False,
          negative="undirected")
    _pair(p, "weighted", "random weights in (0, 1]", default=False)
    p.add_argument("--seed", type=int, default=0, help="random seed: the same seed gives the same graph")
    _build_options(p)
    _verbosity(p, top=False)


def _run(p, only: str | None = None):
    from ooc_graph import registry
    algos = p.add_subparsers(dest="algorithm", required=True, metavar="ALGORITHM")
    names = registry.names()
    if only in names:  # the one that runs: its module alone is imported, the others are names
        listed = {name: registry.get(name) if name == only else None for name in names}
    else:  # the whole grammar, or run's help: each with its one-line summary
        listed = registry.algorithms()
    for name, algo in listed.items():
        if algo is None:
            algos.add_parser(name)
            continue
        a = algos.add_parser(name, help=algo.summary)
        if only is not None and name != only:
            continue
        a.add_argument("store", help="the graph store (.h5)")
        for o in algo.options:
            if o.type is bool:
                a.add_argument(o.flag, action=argparse.BooleanOptionalAction, default=o.default,
                               help=f"{o.help} (default: {o.flag if o.default else '--no-' + o.flag[2:]})")
                continue
            a.add_argument(o.flag, type=o.type, default=o.default, choices=o.choices, required=o.required,
                           help=o.help + ("" if o.default is None else " (default: %(default)s)"))
        takes = algo.parameters
        run_options(a, distributed=algo.distributes)
        a.add_argument("--result-name", help="name under results/ in the store (default: the algorithm's)")
        a.add_argument("--no-store", action="store_true", help="do not keep the result in the store")
        if "profile" in takes:
            a.add_argument("--profile", metavar="PNG", help="trace every pass and draw the timeline to this PNG")
        else:  # in memory: no passes to trace
            a.set_defaults(profile=None)
        _verbosity(a, top=False)


def _results(p):
    p.add_argument("action", choices=("list", "drop", "compact"),
                   help="list them; drop one; compact: rewrite the store without the space dropped ones held")
    p.add_argument("store", help="the graph store (.h5)")
    p.add_argument("name", nargs="?", help="drop: the result to drop")
    _verbosity(p, top=False)


def _algorithms(p):
    _verbosity(p, top=False)


def _demo(p):
    p.add_argument("--scale", type=int, default=16, help="R-MAT scale: 2**scale vertices")
    p.add_argument("--edge-factor", type=int, default=16, help="edges per vertex")
    run_options(p, demo=True)
    _verbosity(p, top=False)


# Each command: its help line and what adds its arguments.
_COMMANDS = {
    "info": ("describe a graph store", _info),
    "convert": ("convert an edge file into a graph store", _convert),
    "generate": ("write a synthetic graph into a store", _generate),
    "run": ("run an algorithm on a store", _run),
    "results": ("list, drop or compact the results kept in a store", _results),
    "algorithms": ("list the algorithms, one line each", _algorithms),
    "demo": ("generate a graph into a temporary store and run every algorithm", _demo),
}


def algorithm_kwargs(a) -> dict:
    """The algorithm's own keyword arguments from parsed options (flag names are keyword names)."""
    from ooc_graph import registry
    return {o.keyword: getattr(a, o.keyword) for o in registry.get(a.algorithm).options}
