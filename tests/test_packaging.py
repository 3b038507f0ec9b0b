"""A wheel built from the repository installs ``kernels``/``partitioning`` under ``ooc_graph``."""

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_wheel_install(tmp_path):
    # An isolated build, as a user's `pip install .` does (pip fetches the build-system requirements).
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                            "-w", str(tmp_path / "dist"), str(ROOT)], capture_output=True, text=True)
    if build.returncode and any(s in build.stderr for s in ("Could not find a version", "NewConnectionError")):
        pytest.skip(f"no package index to fetch the build requirements from: {build.stderr.strip()[-200:]}")
    assert build.returncode == 0, build.stderr
    wheel = next((tmp_path / "dist").glob("ooc_graph-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "ooc_graph/kernels/cpu.py" in names and "ooc_graph/partitioning/FORMAT.md" in names
    assert "ooc_graph/py.typed" in names  # PEP 561: type checkers read the package's annotations
    assert not any(n.startswith(("kernels/", "partitioning/")) for n in names)  # no top-level collisions
    assert "_ooc_graph_nx.py" in names and "ooc_graph/nx_backend/interface.py" in names  # the networkx backend
    entry = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "[networkx.backends]" in entry and "_ooc_graph_nx:get_info" in entry
    import ooc_graph
    metadata = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert f"\nVersion: {ooc_graph.__version__}\n" in metadata  # read from __init__.py
    target = tmp_path / "site"
    inst = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
                           str(wheel)], capture_output=True, text=True)
    assert inst.returncode == 0, inst.stderr
    code = ("import ooc_graph, ooc_graph.kernels.cpu, ooc_graph.partitioning.cel, numpy as np;"
            "assert ooc_graph.__file__.startswith(%r), ooc_graph.__file__;"
            "G = ooc_graph.convert(np.array([[0, 1]]), 'g.h5', progress=False);"  # in cwd: tmp_path
            "print(ooc_graph.bfs(G, 0, device='cpu').depth.tolist())") % str(target)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                         env={"PYTHONPATH": str(target), "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[0, 1]"


def test_every_cuda_kernel_is_compiled_and_launched_by_its_name():
    """Each ``__global__`` kernel of kernels/*.cu is in its module's name lists (gpu_module's, or
    gpu_whole's cooperative ones; so NVRTC keeps it), and every name the Python side launches
    exists: checked here, without a GPU."""
    import ast
    import re
    kernels = ROOT / "kernels"
    defined = set()
    for cu in kernels.glob("*.cu"):
        defined |= set(re.findall(r"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s+)?ooc_graph_(\w+)",
                                  cu.read_text()))
    compiled = {"decode"}
    for name in ("gpu_module.py", "gpu_whole.py"):
        module = ast.parse((kernels / name).read_text())
        lists = ("_TEMPLATES", "_PLAIN", "_BY_DEGREE")
        compiled |= {k for node in module.body if isinstance(node, ast.Assign) for t in node.targets
                     if isinstance(t, ast.Name) and t.id in lists for k in ast.literal_eval(node.value)}
    assert defined == compiled
    launched = set()
    for py in kernels.glob("gpu*.py"):
        launched |= set(re.findall(r"_(?:kernel|launch)\(f?\"ooc_graph_(\w+)", py.read_text()))
    assert launched and launched <= compiled


def test_install_instructions_name_what_exists():
    """No distribution ``ooc-graph`` is published: the README, the docs, the examples and the
    package's messages say how to install from a checkout (or the packages by name), never
    ``pip install ooc-graph`` or ``pip install 'ooc-graph[extra]'``."""
    import re
    wrong = re.compile(r"pip install ['\"]?ooc-graph")
    files = [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "examples").glob("*.py"),
             *(ROOT / "kernels").glob("*.py"), *(ROOT / "ooc_graph").rglob("*.py")]
    found = [f"{f.relative_to(ROOT)}:{i}" for f in files for i, line in enumerate(f.read_text().splitlines(), 1)
             if wrong.search(line)]
    assert found == []


def test_the_data_folder_is_documented(tmp_path):
    """The LDBC tests' data folder comes from ``OOC_GRAPH_DATA``: the README's test section says
    so, and a test skipped for want of it names the folder and the variable."""
    import os
    readme = (ROOT / "README.md").read_text()
    tests_section = readme.split("## The two commands")[1].split("\n## ")[0]
    assert "OOC_GRAPH_DATA" in tests_section
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider",
                        str(ROOT / "tests" / "test_ldbc.py"), "-k", "example-directed-bfs and cpu"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120,
                       env={**os.environ, "OOC_GRAPH_DATA": str(tmp_path / "none")})
    assert f"{tmp_path / 'none'} is absent (OOC_GRAPH_DATA names another)" in r.stdout, r.stdout[-2000:]


def test_the_version_is_written_once():
    """The version was written in pyproject.toml and in ``ooc_graph/__init__.py``: now only in the
    latter, which pyproject reads (a dynamic version; the wheel's is checked above)."""
    import re
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    import ooc_graph
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "ooc_graph.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", ooc_graph.__version__)
    assert ooc_graph.__version__ not in (ROOT / "pyproject.toml").read_text()


def test_import_leaves_the_heavy_dependencies_for_first_use():
    """``import ooc_graph`` imports none of CuPy, numba, dask, distributed, pandas, pyarrow,
    networkx, matplotlib or tqdm.auto (its asyncio and IPython look-up): each comes with the
    first call that uses it (issue 31: a start-up that imports only what the call uses)."""
    heavy = ["cupy", "numba", "llvmlite", "dask", "distributed", "pandas", "pyarrow", "networkx", "matplotlib",
             "tqdm.auto", "asyncio"]
    code = f"import sys, ooc_graph; print([m for m in {heavy!r} if m in sys.modules])"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() == "[]"


def _modules_after(code: str, cwd=None) -> dict:
    """The modules a fresh interpreter holds after ``code``: ours, and which of the heavy ones."""
    probe = ("import sys\n" + code + "\nimport json; print(json.dumps(sorted(sys.modules)))")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, cwd=cwd)
    assert r.returncode == 0, r.stderr[-2000:]
    return set(json.loads(r.stdout.strip().splitlines()[-1]))


def _named_by_us(code: str) -> set:
    """The modules that our own modules' import statements name while a fresh interpreter runs
    ``code`` (``from a import b`` names ``a.b`` too), whether or not something had loaded them
    before: some environments' .pth files load importlib.resources, tempfile or typing at
    start-up, where a look at sys.modules could not see our code import them."""
    probe = ("import builtins, sys\nnamed = set()\nreal = builtins.__import__\n"
             "def recording(name, globals=None, locals=None, fromlist=(), level=0):\n"
             "    if level == 0 and str((globals or {}).get('__name__', '')).split('.')[0] == 'ooc_graph':\n"
             "        named.add(name)\n"
             "        named.update(f'{name}.{item}' for item in fromlist or ())\n"
             "    return real(name, globals, locals, fromlist, level)\n"
             "builtins.__import__ = recording\n" + code + "\nbuiltins.__import__ = real\n"
             "import json; print(json.dumps(sorted(named)))")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return set(json.loads(r.stdout.strip().splitlines()[-1]))


HEAVY = {"numpy", "h5py", "scipy", "msgpack", "numba", "socket", "secrets"}
# What cold_call.py times as a PageRank call's import (issue 31), and what it must not import
# before the call runs: the modules our code imports where it uses them (writing a store, parsing
# JSON, drawing a bar, the other algorithms), and two that only a sandbox's .pth file loaded.
CALL = "import ooc_graph; ooc_graph.open, ooc_graph.pagerank"
DEFERRED_BY_A_CALL = {"certifi", "importlib.resources", "tempfile", "shutil", "json", "csv", "ctypes.util",
                      "tqdm", "tqdm.auto", "asyncio", "logging.handlers"}
OTHER_ALGORITHMS = ("ooc_graph.algorithms." + m for m in (
    "bfs", "sssp", "wcc", "hits", "katz", "eigenvector", "cdlp", "core_number", "scc", "betweenness",
    "triangle_count", "lcc", "louvain", "_wedges", "_inmemory"))
UNUSED_TO_OPEN = ("ooc_graph.store.results", "ooc_graph.store.compact", "ooc_graph.store.writer",
                  "ooc_graph.store.temporary", "ooc_graph.store.memory", *OTHER_ALGORITHMS)
UNUSED_BY_A_CALL = ("ooc_graph.ingest", "ooc_graph.generate", "ooc_graph.runtime", "ooc_graph.nx_backend",
                    "ooc_graph.cli", "msgpack")


def test_import_loads_only_the_errors():
    """``import ooc_graph`` loads the package and its exceptions, nothing else of ours and no
    third-party module: every other name is imported where it is first used (PEP 562). Not even
    typing (with re and enum, ~20 ms of a bare interpreter: ``ooc-graph --version``'s)."""
    loaded = _modules_after("import ooc_graph")
    assert {m for m in loaded if m.split(".")[0] == "ooc_graph"} == {"ooc_graph", "ooc_graph.errors"}
    assert not loaded & HEAVY
    assert _named_by_us("import ooc_graph") <= {"sys", "__future__", "__future__.annotations"}


def test_a_pagerank_call_imports_no_more_before_it_runs():
    """What cold_call.py times as a PageRank call's import loads PageRank alone of the algorithms
    and, of the store, what opening it needs; our code imports none of :data:`DEFERRED_BY_A_CALL`
    there (each comes where it is used: a store's writes, JSON, a bar, ``--out``)."""
    loaded = _modules_after(CALL)
    assert [m for m in loaded if m.startswith(UNUSED_TO_OPEN + UNUSED_BY_A_CALL)] == []
    assert "ooc_graph.algorithms.pagerank" in loaded and "ooc_graph.engine" in loaded
    assert _named_by_us(CALL) & DEFERRED_BY_A_CALL == set()


def test_a_call_imports_what_it_uses(tmp_path):
    """A process that opens a store and runs PageRank on the CPU loads neither ingestion nor the
    generators nor the distributed runtime (nor its msgpack), through the package or through the
    command line; ``ooc-graph info`` not even the engine, ``ooc-graph --version`` nothing heavy."""
    store = tmp_path / "g.h5"
    _modules_after(f"import numpy as np, ooc_graph; ooc_graph.convert(np.array([[0, 1], [1, 2], [2, 0]]), "
                   f"{str(store)!r}, progress=False).close()")
    loaded = _modules_after(f"import ooc_graph\nwith ooc_graph.open({str(store)!r}) as G:\n"
                            "    assert ooc_graph.pagerank(G, device='cpu').converged")
    assert "ooc_graph.algorithms.pagerank" in loaded and "ooc_graph.engine" in loaded
    assert [m for m in loaded if m.startswith(UNUSED_BY_A_CALL)] == []
    cli = _modules_after(f"from ooc_graph.cli import main\nassert main(['run', 'pagerank', {str(store)!r}, "
                         "'--device', 'cpu', '--no-store', '--quiet']) == 0")
    assert [m for m in cli if m.startswith(UNUSED_BY_A_CALL) and not m.startswith("ooc_graph.cli")] == []
    assert [m for m in cli | loaded if m.startswith(UNUSED_TO_OPEN) or m in ("tqdm.auto", "asyncio")] == []
    info = _modules_after(f"from ooc_graph.cli import main\nassert main(['info', {str(store)!r}]) == 0")
    assert not any(m.startswith(("ooc_graph.engine", "ooc_graph.algorithms") + UNUSED_BY_A_CALL[:3])
                   for m in info)
    version = "from ooc_graph.cli import main\ntry:\n    main(['--version'])\nexcept SystemExit:\n    pass"
    assert not _modules_after(version) & HEAVY
    assert _named_by_us(version) & {"typing", "logging", "signal", "threading", "json", "csv", "tempfile"} == set()


def test_every_public_name_and_submodule_resolves():
    """The lazy names are the eager ones were: ``__all__`` resolves (``from ooc_graph import *``
    too), ``dir()`` lists it, the submodules are attributes, and a wrong name is an AttributeError."""
    import importlib
    import pkgutil

    import ooc_graph
    for name in ooc_graph.__all__:
        assert getattr(ooc_graph, name) is not None, name
    assert set(ooc_graph.__all__) <= set(dir(ooc_graph))
    namespace: dict = {}
    exec("from ooc_graph import *", namespace)
    assert set(ooc_graph.__all__) <= set(namespace)
    assert ooc_graph.pagerank is importlib.import_module("ooc_graph.algorithms").pagerank
    assert ooc_graph.open is importlib.import_module("ooc_graph.store").open_graph
    assert ooc_graph.Job is importlib.import_module("ooc_graph.runtime.jobs").Job
    assert ooc_graph.generate is importlib.import_module("ooc_graph.generate")
    assert {m.name for m in pkgutil.iter_modules(ooc_graph.__path__)} <= ooc_graph._SUBMODULES
    for package in (ooc_graph.algorithms, ooc_graph.store):  # their lazy submodules too
        listed = package._SUBMODULES | set(getattr(package, "ALGORITHMS", {}).values())
        assert {m.name for m in pkgutil.iter_modules(package.__path__)} == listed, package.__name__
        for name in sorted(package._SUBMODULES):
            assert getattr(package, name) is importlib.import_module(f"{package.__name__}.{name}"), name
    for name, module in ooc_graph.algorithms.ALGORITHMS.items():  # the function, whatever came first
        assert importlib.import_module(f"ooc_graph.algorithms.{module}").__name__.endswith(module)
        assert getattr(ooc_graph.algorithms, name) is getattr(ooc_graph, name) and callable(getattr(ooc_graph, name))
    assert sorted(ooc_graph.registry.names()) == sorted(ooc_graph.registry.algorithms())
    for name in sorted(ooc_graph._SUBMODULES):
        assert getattr(ooc_graph, name) is importlib.import_module(f"ooc_graph.{name}"), name
    assert callable(ooc_graph.runtime.release) and ooc_graph.config.get() is not None
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        ooc_graph.nonexistent  # noqa: B018
    assert not hasattr(ooc_graph, "__wrapped__")
