"""SIGTERM as an exception: a build (:class:`~ooc_graph.ingest.builder.GraphBuilder`) and the
command line (:func:`ooc_graph.cli.main`) unwind on it, removing what they made, and then let it
take its usual course. Apart from the builder's scratch (where it was) so that the command line
has it without importing ingestion."""

from __future__ import annotations

import os
import signal
import threading


class Terminated(KeyboardInterrupt):
    """Raised in the main thread by SIGTERM while a build (or a command) runs, so that ``finally``
    blocks and context managers remove the scratch; :meth:`TermGuard.release` then lets SIGTERM take its
    usual course."""


class TermGuard:
    """For the duration of a build, SIGTERM raises :class:`Terminated` in the main thread instead
    of ending the process at once. Installed only in the main thread and only where SIGTERM has
    its default action or a Python handler; an ignored SIGTERM stays ignored."""

    def __init__(self):
        self.previous = None
        self.installed = False
        if threading.current_thread() is not threading.main_thread():
            return
        try:
            previous = signal.getsignal(signal.SIGTERM)
            if previous is signal.SIG_IGN or previous is None:  # None: installed outside Python
                return
            signal.signal(signal.SIGTERM, self._handler)
        except (ValueError, OSError):  # pragma: no cover - no signals here (embedded interpreter)
            return
        self.previous, self.installed = previous, True

    @staticmethod
    def _handler(signum, frame):
        raise Terminated(f"terminated by signal {signum}")

    def release(self, exc: BaseException | None = None) -> None:
        """Restore the previous handler. Call once the scratch is gone; when ``exc`` is the
        :class:`Terminated` this guard raised, SIGTERM is then delivered as it would have been:
        the default action ends the process, a Python handler is called."""
        if not self.installed:
            return
        self.installed = False
        signal.signal(signal.SIGTERM, self.previous)
        if isinstance(exc, Terminated):
            if self.previous is signal.SIG_DFL:
                os.kill(os.getpid(), signal.SIGTERM)
            elif callable(self.previous):
                self.previous(signal.SIGTERM, None)
