"""Command line: ``ooc-graph info | convert | generate | run <algorithm> | results | algorithms | demo``.

Every failure is one line on stderr naming the file, line, value or budget, with exit status 2
(1 for an internal error); ``-v``/``--debug`` add logging and the traceback. Output cut short by
its reader (``ooc-graph info x.h5 | head -1``) ends quietly. SIGTERM unwinds the command, so that
what it made for itself (the demo's temporary store, partial outputs, the local cluster of
``--workers``/``--gpus`` and its result segments in /dev/shm) is removed, then ends the process as
SIGTERM does. Ctrl-C ends a command with status 130 and one line; one while the program exits
(closing its local cluster) lets that finish and ends it with 130 too, quietly (a second one at
once): it printed a traceback from the exit handlers and left the status 0.
"""

from __future__ import annotations

import os
import sys

from ooc_graph.errors import OocGraphError

from .parser import build_parser, in_this_process, named


def program() -> None:
    """The program (the console script, ``python -m ooc_graph.cli``): :func:`main`, then its exit.

    The interpreter's own teardown after a command (clearing modules, numba's and LLVM's, CuPy's
    and CUDA's destructors) took 0.26-0.41 s of a CLI run that computes for 1 s. So the process
    ends as soon as what must run at exit has run: threads are joined and the exit handlers
    registered after this point (logging's flush, temporary files' finalizers, multiprocessing's)
    run as usual; then the last of them, registered here first, flushes the output and ends the
    process with the command's status. Not under a coverage tool (its data is written by an exit
    handler registered before this one)."""
    import atexit
    ended = []
    if "coverage" not in sys.modules:
        atexit.register(_end_now, ended)
    ended.append(main())
    sys.exit(ended[0])


def _end_now(ended: list) -> None:
    if not ended:  # main() raised: the interpreter reports it and exits as usual
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(ended[0])


def main(argv=None) -> int:
    """Run the command ``argv`` (default ``sys.argv``) and return its exit status. Without
    ``argv`` main is the program itself (the console script, ``python -m ooc_graph.cli``): it then
    closes the local clusters it started before returning, where a Ctrl-C is handled (:func:`_exit`)."""
    status = _main(argv)
    return status if argv is not None else _exit(status)


def _main(argv) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    a = build_parser(*named(argv)).parse_args(argv)
    # imported once the command line parsed: --version and --help end before (and import no more)
    import logging

    from ooc_graph._signals import Terminated, TermGuard
    verbose = a.verbose or a.debug
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, format="%(name)s: %(message)s")
    guard = TermGuard()
    if _one_process_gpu_call(a):  # CUDA starts on a thread while the command imports and opens the store
        from ooc_graph._cuda_start import start_cuda
        start_cuda()
    try:
        from . import commands  # what each command imports, it imports when it runs
        return getattr(commands, a.command)(a)
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


def _one_process_gpu_call(a) -> bool:
    """The command computes in this process, where a GPU may be used."""
    return a.command in ("run", "demo") and getattr(a, "device", None) in ("auto", "gpu") and in_this_process(a)


def _exit(status: int) -> int:
    """The program's exit: close the local clusters and result segments now (exit handlers did, where
    a Ctrl-C printed a traceback and the status stayed 0) with SIGINT deferred: a Ctrl-C meanwhile
    makes the status 130 once they are closed, a second one ends the process at once. From then
    on, through the interpreter's own exit (threads joined, exit handlers), a Ctrl-C ends it at
    once with 130, without a traceback."""
    import signal
    import threading
    if threading.current_thread() is not threading.main_thread():
        _stop_runtime()
        return status
    interrupted = []

    def later(signum, frame):
        if interrupted:
            _now()
        interrupted.append(signum)
    try:
        signal.signal(signal.SIGINT, later)
        _stop_runtime()
    finally:
        signal.signal(signal.SIGINT, lambda signum, frame: _now())
    return 130 if interrupted else status


def _now() -> None:
    """End the process at once with status 130 (Ctrl-C while it exits), output flushed."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(130)


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
