"""Fresh processes timed as an installed package runs them: with the bytecode ``pip install``
writes. The lent GPU machines set ``PYTHONDONTWRITEBYTECODE`` and ship NumPy, h5py, numba and CuPy
without bytecode, so every process there compiled them from source (``import numpy`` 0.44-0.49 s
on a 1xH100 host against 0.12-0.21 s with bytecode), which no user's first call pays."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

# Runs the code in argv[1] (its arguments after it), then prints the folders (or single-file
# modules) of the third-party packages the process imported.
_CHILD = r"""
import json, site, sys
code = sys.argv.pop(1)
exec(code)
where = tuple(site.getsitepackages() + [site.getusersitepackages()])
roots = set()
for name in list(sys.modules):
    top = sys.modules.get(name.split(".")[0])
    paths = list(getattr(top, "__path__", [])) or [getattr(top, "__file__", None) or ""]
    roots.update(p for p in paths if p.startswith(where) and not p.endswith((".so", ".pyd")))
print(json.dumps(sorted(roots)))
"""


def write_bytecode(code: str, *args, extra=()) -> dict:
    """Run ``code`` (Python; ``sys.argv[1:]`` are ``args``) in a fresh process, then write the
    bytecode (``python -m compileall``) of ooc_graph, of the folders ``extra`` (a baseline
    checkout) and of every third-party package that process imported. Folders that cannot be
    written are left as found. Returns what was compiled, for the benchmark's record."""
    ours = [p for name in ("ooc_graph", "ooc_graph.kernels", "ooc_graph.partitioning")
            for p in importlib.util.find_spec(name).submodule_search_locations] + [str(e) for e in extra]
    proc = subprocess.run([sys.executable, "-c", _CHILD, code, *map(str, args)], capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"the run that lists the imported packages failed:\n{proc.stderr[-3000:]}")
    theirs = [p for p in json.loads(proc.stdout.strip().splitlines()[-1])
              if not any(Path(p).is_relative_to(o) for o in ours)]
    writable = [p for p in theirs if os.access(p, os.W_OK)]
    subprocess.run([sys.executable, "-m", "compileall", "-q", "-j", "0", *ours, *writable], capture_output=True)
    return {"how": "compiled before timing (python -m compileall), as pip install does",
            "third_party": writable, "not_writable": sorted(set(theirs) - set(writable))}
