"""Worker plugins of the local clusters this project starts (dask's ``WorkerPlugin``: side effects
in ``setup(worker)``, as dask-cuda's). Imported only where distributed is installed."""

from __future__ import annotations

import signal
import threading

import distributed


class ClientHandlesInterrupts(distributed.WorkerPlugin):
    """The worker ignores SIGINT. A Ctrl-C at the terminal reaches every process of its group:
    each worker of a local cluster printed a KeyboardInterrupt traceback (and its nanny, in the
    client, an error), while the client, which got it too, cancels its job and closes the cluster
    itself."""

    name = "ooc-graph-client-handles-interrupts"

    def setup(self, worker):
        if threading.current_thread() is threading.main_thread():  # the worker process's loop
            signal.signal(signal.SIGINT, signal.SIG_IGN)
