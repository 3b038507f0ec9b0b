"""Command line: ``ooc-graph info | convert | generate | run <algorithm> | results | algorithms | demo``.

Every failure is one line on stderr naming the file, line, value or budget, with exit status 2
(1 for an internal error); ``-v``/``--debug`` add logging and the traceback. Output cut short by
its reader (``ooc-graph info x.h5 | head -1``) ends quietly. SIGTERM unwinds the command, so that
what it made for itself (the demo's temporary store, partial outputs, the local cluster of
``--workers``/``--gpus`` and its result segments in /dev/shm) is removed, then ends the process as
SIGTERM does.
"""

from __future__ import annotations

import logging
import os
import sys

from ooc_graph.errors import OocGraphError
from ooc_graph.ingest.scratch import Terminated, TermGuard

from . import commands
from .parser import build_parser

COMMANDS = {"info": commands.info, "convert": commands.convert, "generate": commands.generate, "run": commands.run,
            "results": commands.results, "algorithms": commands.algorithms, "demo": commands.demo}


def main(argv=None) -> int:
    a = build_parser().parse_args(argv)
    verbose = a.verbose or a.debug
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(name)s: %(message)s")
    guard = TermGuard()
    try:
        return COMMANDS[a.command](a)
    except Terminated as err:  # temporary files are gone: now SIGTERM's usual course
        _stop_runtime()  # SIGTERM's course skips exit handlers: the local clusters and results go first
        guard.release(err)
        return 128 + 15
    except OocGraphError as err:
        return _fail(a, err, f"error: {err}", 2)
    except OSError as err:  # a file the command was told to write or read: still one line
        if isinstance(err, BrokenPipeError):
            return _quiet_pipe()
        return _fail(a, err, f"error: {err}", 2)
    except KeyboardInterrupt:
        print("ooc-graph: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # a bug: say so in one line unless --debug
        return _fail(a, err, f"internal error: {type(err).__name__}: {err} (rerun with --debug for the traceback)", 1)
    finally:
        guard.release()


def _stop_runtime() -> None:
    """Close the local clusters this command started and remove its result segments, if it
    started any (as exit does)."""
    cluster = sys.modules.get("ooc_graph.runtime.cluster")
    if cluster is not None:
        cluster.shutdown()


def _fail(a, err, line: str, status: int) -> int:
    if a.debug:
        import traceback
        traceback.print_exception(err, file=sys.stderr)
    print(f"ooc-graph: {line.splitlines()[0] if line else ''}", file=sys.stderr)
    return status


def _quiet_pipe() -> int:
    """The reader of our output went away: stop writing, without a traceback."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0
