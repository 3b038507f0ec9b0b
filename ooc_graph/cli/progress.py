"""Progress of a run on the terminal: ``pagerank: iteration 7, residual 0.0013 [00:04]`` — the
iteration, the convergence measure (residual, or vertices changed) and the time elapsed. No time
left: a run ends on its residual's trend, far before its iteration limit (PageRank's 100 showed as
"1.00/100 it" with an ETA of a hundred iterations). Silent unless stderr is a terminal."""

from __future__ import annotations

import sys
import time

from ooc_graph._progress import LINE, progress_bar
from ooc_graph.engine.monitor import watching

POLL_SECONDS = 0.5


class Progress:
    """A bar for one run: ``with progress:`` around a local call, or ``follow(job)``."""

    def __init__(self, name: str, enabled: bool = True):
        self.name = name
        self.enabled = enabled and sys.stderr.isatty()
        self.bar = None
        self._watch = None

    def report(self, iteration, measure):
        if not self.enabled:  # nothing to draw: no bar, and no tqdm.auto (with asyncio, ~0.15 s) to import
            return
        if self.bar is None:
            self.bar = progress_bar(desc=self.name, bar_format=LINE)
        self.bar.update(max(0, int(iteration) - self.bar.n))
        if measure is not None:
            what = "residual" if isinstance(measure, float) else "changed"
            self.bar.set_postfix_str(f"{what} {measure:.3g}" if what == "residual" else f"{what} {measure:,}")

    def close(self):
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self):
        self._watch = watching(self.report)
        self._watch.__enter__()
        return self

    def __exit__(self, *exc):
        self._watch.__exit__(*exc)
        self.close()

    def follow(self, job):
        """Wait for ``job``, showing rank 0's progress; returns its result."""
        try:
            while job.status() in ("pending", "running", "unresponsive"):
                record = job.progress()
                if record and record.get("iteration"):
                    self.report(record["iteration"], record.get("measure"))
                time.sleep(POLL_SECONDS)
            return job.result()
        except KeyboardInterrupt:
            job.cancel()
            raise
        finally:
            self.close()
