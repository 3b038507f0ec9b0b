"""A pytest plugin for runs of networkx's own test suite with this backend: which functions the
backend served, in which tests, and whether those tests passed.

    NETWORKX_TEST_BACKEND=ooc_graph python -m pytest -p ooc_graph.nx_backend._testing --pyargs networkx ...

Each function of :class:`~.interface.BackendInterface` is wrapped to note its calls; at the end
the counts go to ``$OOC_GRAPH_NX_CALLS`` (JSON, default ``nx-backend-calls.json`` in the working
folder): ``calls`` (every call served), ``passed`` (calls made by tests that passed),
``tests_passed_calling`` (tests that passed and called the backend at least once) and
``unexercised`` (registered functions that no passing test called)."""

from __future__ import annotations

import collections
import functools
import json
import os

from .functions import FUNCTIONS
from .interface import BackendInterface

_calls: collections.Counter = collections.Counter()
_passed: collections.Counter = collections.Counter()
_this_test: collections.Counter = collections.Counter()
_tests_calling = 0


def _counted(name, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        _this_test[name] += 1
        return fn(*args, **kwargs)
    return staticmethod(wrapper)


def pytest_configure(config):
    """Wrap the backend's functions (only when loaded as a plugin, not when merely imported)."""
    for name, fn in FUNCTIONS.items():
        setattr(BackendInterface, name, _counted(name, fn))


def pytest_runtest_logstart(nodeid, location):
    _this_test.clear()


def pytest_runtest_logreport(report):
    global _tests_calling
    if report.when != "call":
        return
    _calls.update(_this_test)
    if report.passed and not hasattr(report, "wasxfail"):
        _passed.update(_this_test)
        _tests_calling += bool(_this_test)


def pytest_sessionfinish(session, exitstatus):
    out = os.environ.get("OOC_GRAPH_NX_CALLS", "nx-backend-calls.json")
    with open(out, "w") as f:
        json.dump({"calls": dict(_calls.most_common()), "passed": dict(_passed.most_common()),
                   "tests_passed_calling": _tests_calling,
                   "unexercised": sorted(set(FUNCTIONS) - set(_passed))}, f, indent=1)
