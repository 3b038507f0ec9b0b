"""The compiled kernels' on-disk cache is keyed by every kernel source (kernels/_jit.py): numba
alone keys a function by its own file, so a changed callee in another file left a cached caller
running the old code."""

import importlib
import shutil

import pytest

numba = pytest.importorskip("numba")

from ooc_graph.kernels import _jit  # noqa: E402

MODULES = [f"ooc_graph.kernels.{p.stem}" for p in sorted(_jit.FOLDER.glob("cpu*.py"))]
NX = [f"ooc_graph.nx_backend.{name}" for name in ("_kernels", "_kernels_structure", "_kernels_brandes")]


def _dispatchers(module):
    from numba.core.registry import CPUDispatcher
    return [v for v in vars(module).values() if isinstance(v, CPUDispatcher) and v.__module__ == module.__name__]


def test_every_cached_kernel_is_stamped_with_all_sources():
    """Each kernel numba caches finds its cache through the locators that stamp it with the hash
    of the whole folder (none through numba's own, keyed by its file alone)."""
    cached = {}
    for name in MODULES + NX:
        module = importlib.import_module(name)
        folder = _jit.Path(module.__file__).resolve().parent
        stamp = _jit.sources_stamp() if folder == _jit.FOLDER else _jit.sources_stamp(folder, [n.split(".")[-1] for n in NX])
        for disp in _dispatchers(module):
            cache = getattr(disp, "_cache", None)
            impl = getattr(cache, "_impl", None)
            if impl is None:  # not cached (cache=False)
                continue
            assert getattr(impl.locator, "ooc_graph_kernels", False), f"{name}.{disp.__name__}"
            assert impl.locator.get_source_stamp() == stamp
            cached[folder] = cached.get(folder, 0) + 1
    assert len(cached) == 2 and min(cached.values()) > 20


def test_kernel_modules_take_njit_from_jit():
    """No kernel module decorates with numba's njit directly (its cache would be keyed by its file)."""
    nx_backend = _jit.Path(importlib.import_module("ooc_graph.nx_backend").__file__).parent
    assert (nx_backend / "_kernels.py").exists()
    for path in [*_jit.FOLDER.glob("*.py"), *nx_backend.glob("*.py")]:
        if path.name == "_jit.py":
            continue
        text = path.read_text()
        assert "from numba import njit" not in text and "numba.njit" not in text, path.name
        for line in text.splitlines():
            if line.startswith("from numba import"):
                assert "njit" not in line and "prange" not in line, path.name


def test_stamp_follows_every_compiled_file(tmp_path):
    """A change to any compiled kernel file (a callee's, or constants a kernel imports) changes the
    stamp of all; the Python side's files are not in it."""
    for path in _jit.FOLDER.glob("*.py"):
        shutil.copy(path, tmp_path / path.name)
    sources = _jit.compiled_sources(tmp_path)
    assert {"cpu_sssp_relax", "cpu_sssp_parallel", "cpu_atomic", "cpu_generate", "cpu_compiled"} <= set(sources)
    assert not {"cpu", "cpu_whole", "gpu", "gpu_whole"} & set(sources)
    before = _jit.sources_stamp(tmp_path)
    assert before == _jit.sources_stamp(_jit.FOLDER)
    for name, counts in (("cpu_sssp_relax", True), ("cpu_generate", True), ("cpu", False), ("cpu_whole", False)):
        path = tmp_path / f"{name}.py"
        text = path.read_text()
        path.write_text(text + "\n# changed\n")
        assert (_jit.sources_stamp(tmp_path) != before) == counts, name
        path.write_text(text)
    assert _jit.sources_stamp(tmp_path) == before


def test_files_elsewhere_keep_numbas_locators(tmp_path):
    """A function defined outside the kernels folder is cached as numba alone would."""
    module = tmp_path / "elsewhere_kernel.py"
    module.write_text("from numba import njit\n\n@njit(cache=True)\ndef f(x):\n    return x + 1\n")
    import sys
    sys.path.insert(0, str(tmp_path))
    try:
        mod = importlib.import_module("elsewhere_kernel")
        assert mod.f(1) == 2
        assert not getattr(mod.f._cache._impl.locator, "ooc_graph_kernels", False)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("elsewhere_kernel", None)


def test_first_kernel_call_spares_scipy_linalg():
    """numba asks at its first compile or cache load whether BLAS is there by importing SciPy's
    linalg (0.25-0.4 s of a process's first call); the kernels answer that from SciPy's files, and
    numba's own check still runs where BLAS is used."""
    pytest.importorskip("scipy")
    code = (
        "import sys, numpy as np, numba\n"
        "from ooc_graph.kernels.cpu import compiled\n"
        "levels = np.array([0.0, 2.0, np.inf])\n"
        "compiled().int_levels(levels, np.int64(-1))\n"
        "assert levels.view(np.int64).tolist() == [0, 2, -1], levels.view(np.int64)\n"
        "assert 'scipy.linalg' not in sys.modules, 'scipy.linalg imported by the first kernel call'\n"
        "from numba.np import arraymath\n"
        "assert arraymath._HAVE_BLAS\n"
        "dot = numba.njit(lambda a, b: np.dot(a, b))\n"
        "assert dot(np.arange(4.0), np.arange(4.0)) == 14.0\n"
        "assert 'scipy.linalg.cython_blas' in sys.modules\n"
    )
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


CACHED_LOAD = """
import sys, numpy as np, numba
from numba.core import cpu
refreshed = []
original = cpu.CPUContext.load_additional_registries
cpu.CPUContext.load_additional_registries = lambda self: (refreshed.append(1), original(self))[1]
from ooc_graph.kernels.cpu import compiled
fast = compiled()
levels = np.array([0.0, 3.0, np.inf])
fast.int_levels(levels, np.int64(-1))
out = np.empty(100_000)
fast.parallel().fill(out, 2.5)
loaded = list(fast.int_levels.stats.cache_hits.values()), list(fast.parallel().fill.stats.cache_hits.values())
print("loaded", loaded, "refreshed", len(refreshed))
assert levels.view(np.int64).tolist() == [0, 3, -1] and (out == 2.5).all()
if sys.argv[1] == "second":
    assert loaded == ([1], [1]), loaded
    assert not refreshed, "numba's target was refreshed to load cached kernels"
    twice = numba.njit(lambda a: np.sort(a)[::-1] * 2)
    assert twice(np.array([2.0, 1.0, 3.0])).tolist() == [6.0, 4.0, 2.0]
    assert refreshed, "compiling refreshes numba's target"
"""


def test_cached_kernels_load_without_numbas_compiler_set_up():
    """A kernel found in the cache loads without numba's target refresh (its typing and lowering
    registries, ~0.3-0.45 s of a process's first call); compiling afterwards still gets them."""
    import subprocess
    import sys
    env = dict(__import__("os").environ, NUMBA_NUM_THREADS="2")
    for run in ("first", "second"):  # the first fills the cache where this checkout has none yet
        done = subprocess.run([sys.executable, "-c", CACHED_LOAD, run], capture_output=True, text=True, timeout=600,
                              env=env)
        assert done.returncode == 0, done.stderr[-2000:]


KERNEL = '''from ooc_graph.kernels._jit import njit, serve
serve(__file__, ("k",))


@njit(cache=True)
def f(x):
    return x + ONE


ONE = {one}
'''


def test_a_process_that_compiles_prunes_what_no_load_can_use(tmp_path):
    """Indexes stamped with other sources and data files no current index names are deleted at
    a process's first save; another Python's files, and data files too young to be sure of (an
    index being written), are left."""
    import os
    import pickle
    import subprocess
    import sys
    package = tmp_path / "pk"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "k.py").write_text(KERNEL.format(one=1))
    run = [sys.executable, "-c", "import sys; sys.path.insert(0, '.'); import pk.k as k; print(k.f(1))"]
    first = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert first.stdout.split() == ["2"], first.stderr[-2000:]
    cache = package / "__pycache__"
    tag = f"py{sys.version_info.major}{sys.version_info.minor}"
    [index] = cache.glob(f"*.{tag}.nbi")
    base = index.name[:-len(".nbi")]
    old = 0.0  # planted files' mtime: long ago
    moved = cache / f"f-99.{tag}.nbi"  # a kernel that was on another line, sources since edited
    with open(moved, "wb") as out:
        pickle.dump(numba.__version__, out)
        out.write(pickle.dumps(("another stamp", {"key": f"f-99.{tag}.1.nbc"})))
    planted = {"stale index": moved, "its data": cache / f"f-99.{tag}.1.nbc", "unnamed data": cache / f"{base}.7.nbc",
               "young": cache / f"g-5.{tag}.1.nbc", "other python": cache / "f-4.py399.1.nbc",
               "other python index": cache / "f-4.py399.nbi"}
    for name, path in planted.items():
        if not path.exists():
            path.write_bytes(b"x")
        if name != "young":
            os.utime(path, (old, old))
    (package / "k.py").write_text(KERNEL.format(one=2))  # new sources: the kernel compiles and is saved
    second = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert second.stdout.split() == ["3"], second.stderr[-2000:]
    left = {name for name, path in planted.items() if path.exists()}
    assert left == {"young", "other python", "other python index"}
    assert index.exists() and (cache / f"{base}.1.nbc").exists()  # the current kernel, saved again
    again = subprocess.run(run, cwd=tmp_path, capture_output=True, text=True, timeout=300)  # loads it
    assert again.stdout.split() == ["3"], again.stderr[-2000:]
