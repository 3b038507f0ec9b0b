"""Progress bars (tqdm) that stay quiet when output is not a terminal unless asked."""

from __future__ import annotations

import sys

from tqdm.auto import tqdm


def progress_bar(*, total=None, unit="it", desc="", disable=False, bar_format=None):
    """A tqdm bar with SI-scaled rates (arcs/s); hidden where stderr is not a terminal.
    ``bar_format`` as tqdm's (e.g. a count without a rate)."""
    return tqdm(total=total, unit=unit, unit_scale=True, desc=desc, leave=False, dynamic_ncols=True,
                disable=disable or not sys.stderr.isatty(), bar_format=bar_format)
