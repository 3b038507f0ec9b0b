"""numba's ``njit`` and ``prange`` for the CPU kernels, with their on-disk cache keyed by every
kernel source at once.

numba keys a cached function by the content of the file that defines it, not by the files of the
functions it calls and compiles into itself: a change to :mod:`.cpu_sssp_relax` alone left
:mod:`.cpu_sssp_parallel`'s cached delta-stepping running the old relaxation, silently (in a
checkout after a pull, or an install upgraded over its caches). Every kernel module imports
``njit`` from here, which puts locators first in numba's list that serve only this folder's
files and stamp each of them with one hash of every compiled module and what they import
(:func:`compiled_sources`): any of them changed, every kernel compiles again once. The networkx
backend's kernels, which call into one another across three files, are keyed so too
(:func:`serve`). Files elsewhere fall through to numba's own locators. Where numba's internals
differ from what this expects, nothing is registered (numba's own keying stays).

It also spares a process's first kernel call most of numba's start: a kernel found in the cache
loads without numba's compiler set-up (:class:`_CachedLoad`), and nothing imports SciPy's linear
algebra (:func:`_blas_located`). A process that compiles deletes the cache files no load can use
any more (:func:`prune`).
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import logging
import pickle
import re
import sys
import time
from pathlib import Path

import numba
from numba import prange  # noqa: F401  (re-exported for the kernel modules)
from numba.core import caching
from numba.core.runtime import nrt

log = logging.getLogger("ooc_graph.kernels")

FOLDER = Path(__file__).resolve().parent
_served = {FOLDER: None}  # folder -> the modules stamped together there (None: compiled_sources')
_stamps = {}  # folder -> its stamp, once a process


_JITTED = re.compile(r"^(?:from \._jit import|from numba|import numba)", re.M)  # top-level lines only
_IMPORTS = re.compile(r"^from \.(\w+) import|^from \. import (\w+)", re.M)


def compiled_sources(folder: Path = FOLDER) -> list[str]:
    """The modules of ``folder`` whose code numba compiles, and those they import at module level
    (their functions and constants are compiled into the callers), transitively: what a cached
    kernel may hold. The Python side (``cpu.py``, ``cpu_whole.py``, the GPU's) is not among them:
    editing it compiles nothing again."""
    texts = {path.stem: path.read_text() for path in folder.glob("*.py")}
    todo = [name for name, text in texts.items() if _JITTED.search(text)]
    found = set()
    while todo:
        name = todo.pop()
        if name in found or name not in texts:
            continue
        found.add(name)
        todo.extend(a or b for a, b in _IMPORTS.findall(texts[name]))
    return sorted(found)


def sources_stamp(folder: Path = FOLDER, names=None) -> str:
    """One hash of the files ``names`` of ``folder`` (default :func:`compiled_sources`'), names and
    contents."""
    digest = hashlib.sha256()
    for name in sorted(names) if names is not None else compiled_sources(folder):
        digest.update(name.encode() + b"\0" + (folder / f"{name}.py").read_bytes() + b"\0")
    return digest.hexdigest()


def serve(module_file, names) -> None:
    """Key the cached kernels of the folder holding ``module_file`` (another package's: the
    networkx backend's) by one hash of its modules ``names``, which call into one another; call it
    before they define their kernels."""
    _served.setdefault(Path(module_file).resolve().parent, tuple(names))


def _kernels_locator(base):
    """``base`` (one of numba's source-file locators) for the files of the folders served only
    (this one, and those :func:`serve` names), stamped with their folder's :func:`sources_stamp`."""

    class Locator(base):
        ooc_graph_kernels = True

        def get_source_stamp(self):
            py_file = getattr(self, "_py_file", None)  # numba's locators keep their file there
            if py_file is None:
                return super().get_source_stamp()
            folder = Path(py_file).resolve().parent
            if folder not in _stamps:
                _stamps[folder] = sources_stamp(folder, _served[folder])
            return _stamps[folder]

        @classmethod
        def from_function(cls, py_func, py_file):
            if Path(py_file).resolve().parent not in _served:
                return None
            return super().from_function(py_func, py_file)

    Locator.__name__ = Locator.__qualname__ = "Kernels" + base.__name__.lstrip("_")
    return Locator


def _register() -> None:
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    classes = getattr(impl, "_locator_classes", None)
    bases = [getattr(caching, name, None) or getattr(caching, "_" + name, None)
             for name in ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")]
    if not isinstance(classes, list) or None in bases:
        log.debug("numba's cache locators are not where expected: kernels keyed by their own files")
        return
    if any(getattr(cls, "ooc_graph_kernels", False) for cls in classes):
        return
    classes[:0] = [_kernels_locator(base) for base in bases]


def njit(*args, **options):
    """numba's ``njit``; a kernel it caches (``cache=True``) loads through :class:`_CachedLoad`."""
    decorate = numba.njit(**options)

    def wrap(fn):
        dispatcher = decorate(fn)
        cache = getattr(dispatcher, "_cache", None)
        if options.get("cache") and isinstance(cache, caching.Cache) and _LOADABLE:
            cache.__class__ = _CachedLoad.of(type(cache))
        return dispatcher
    return wrap(args[0]) if args else wrap


_LOADABLE = all(hasattr(caching.Cache, name) for name in ("_load_overload", "_guard_against_spurious_io_errors")) \
    and hasattr(nrt, "rtsys")


class _CachedLoad:
    """A kernel's cache that loads a compiled kernel without refreshing numba's target first.

    numba's cache refreshes its target before every load: the first time in a process, that
    installs the typing templates and lowering implementations of all of Python and NumPy that
    numba supports, and imports their modules, which only compiling needs (~0.3-0.45 s of a
    process's first call). A cached kernel is object code, its wrapper and its environment, none
    of which reads them; the runtime its allocations use is started here. Compiling (a kernel not
    in the cache, anything else numba compiles later) refreshes the target as before."""

    _made: dict = {}

    @classmethod
    def of(cls, base):
        made = cls._made.get(base)
        if made is None:
            made = cls._made[base] = type("Kernel" + base.__name__, (cls, base), {})
        return made

    def load_overload(self, sig, target_context):
        nrt.rtsys.initialize(target_context)
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)

    def save_overload(self, sig, data):
        super().save_overload(sig, data)
        files = getattr(self, "_cache_file", None)
        folder, stamp = getattr(files, "_cache_path", None), getattr(files, "_source_stamp", None)
        if folder is not None and stamp is not None and folder not in _pruned:
            _pruned.add(folder)
            prune(Path(folder), stamp)


_pruned: set = set()  # cache folders pruned by this process (once each, at its first save)
_ORPHAN_AGE = 60.0  # seconds: a data file younger than this may belong to an index being written


def prune(folder: Path, stamp: str) -> list:
    """Delete this Python's cached kernels in ``folder`` that no load can use: indexes stamped
    with other sources (numba ignores them), and data files no current index names (numba never
    deletes any: a kernel that moved to another line, or sources edited, left them; hundreds
    gathered in a checkout). Another numba's or Python's files are left alone. Returns the
    names deleted."""
    tag = f".py{sys.version_info.major}{sys.version_info.minor}."
    live, dead = set(), []
    for index in folder.glob(f"*{tag[:-1]}.nbi"):
        try:
            with open(index, "rb") as f:
                if pickle.load(f) != numba.__version__:
                    continue
                found, overloads = pickle.loads(f.read())
        except Exception:  # being written, or not numba's: left as found
            continue
        if found == stamp:
            live.update(overloads.values())
        else:
            dead.append(index)
    now = time.time()
    for data in folder.glob(f"*{tag}*.nbc"):
        try:
            if data.name not in live and now - data.stat().st_mtime > _ORPHAN_AGE:
                dead.append(data)
        except OSError:
            continue
    for path in dead:
        try:
            path.unlink()
        except OSError:
            pass
    if dead:
        log.debug("pruned %d stale cache files of %s", len(dead), folder)
    return [path.name for path in dead]


def _scipy_blas_installed() -> bool:
    """Whether SciPy's ``linalg.cython_blas`` extension is installed, found without importing it."""
    spec = importlib.util.find_spec("scipy")
    folders = (spec.submodule_search_locations or []) if spec is not None else []
    return any((Path(folder) / "linalg" / f"cython_blas{suffix}").is_file()
               for folder in folders for suffix in importlib.machinery.EXTENSION_SUFFIXES)


def _blas_located() -> None:
    """numba's array implementations ask, as they are imported (the first kernel call of a
    process), whether BLAS is there by importing ``scipy.linalg.cython_blas``: SciPy's linalg then
    imports its array-API layer, which walks numpy's lazy submodules (``f2py``, ``testing``, ...):
    0.25-0.4 s of a first call, for a flag only ``np.dot``/``np.vdot`` of 1-d arrays read. That
    question is answered from where SciPy's files lie instead; every other use of BLAS (compiling
    ``np.dot``, ``np.linalg``) runs numba's own check, import and ABI test, as before."""
    from numba.np import linalg
    real = getattr(linalg, "ensure_blas", None)
    if real is None or getattr(real, "ooc_graph_kernels", False) or "numba.np.arraymath" in sys.modules:
        return

    def ensure_blas():
        if sys._getframe(1).f_globals.get("__name__") != "numba.np.arraymath":
            return real()
        if not _scipy_blas_installed():
            raise ImportError("scipy 0.16+ is required for linear algebra")

    ensure_blas.ooc_graph_kernels = True
    ensure_blas.__wrapped__ = real
    linalg.ensure_blas = ensure_blas


_register()
_blas_located()
