"""A picture of a run: per-pass time and traffic, and convergence (``ooc-graph run --profile``)."""

from __future__ import annotations

import os
import tempfile

from .engine.trace import LANES
from .errors import ParameterError, install
from .store.writer import umask


_LANE_COLORS = {"read": "tab:gray", "copy": "tab:green", "compute": "tab:blue"}


def _traced_pass(result):
    """The timeline entry worth drawing: a steady pass (nothing read from the store) that moved
    the most bytes to the device, the longest on a tie; else the heaviest pass; None if untraced."""
    passes = result.passes
    entries = [t for t in result.timeline if t["spans"]]
    if not entries:
        return None
    return max(entries, key=lambda t: (passes[t["pass"]]["bytes_read"] == 0, passes[t["pass"]]["bytes_to_device"],
                                       passes[t["pass"]]["seconds"]))


def _plot_timeline(ax, entry, record):
    lanes = [lane for lane in LANES if any(s[0] == lane for s in entry["spans"])]
    for row, lane in enumerate(lanes):
        bars = [(a, max(b - a, 1e-9)) for name, _, a, b in entry["spans"] if name == lane]
        ax.broken_barh(bars, (row - 0.35, 0.7), color=_LANE_COLORS[lane], edgecolor="black", linewidth=0.3)
    ax.set_yticks(range(len(lanes)), [{"read": "read (store→host)", "copy": "copy (host→device)",
                                       "compute": "compute"}[lane] for lane in lanes])
    ax.set_xlabel("seconds from the start of the pass")
    ratios = [f"{name} {record[key]:.0%}" for name, key in (("copy/compute", "overlap_copy_compute"),
                                                             ("read/compute", "overlap_read_compute"))
              if record.get(key) is not None]
    ax.set_title(f"pass {entry['pass'] + 1}: one bar per chunk; overlap "
                 + (", ".join(ratios) if ratios else "none") + f"; compute idle {record['seconds_idle']:.4f} s")


def plot_profile(result, path) -> str:
    """Write a PNG of ``result.passes`` (seconds per pass, split into reading the store and the
    rest; host→device GB/s), of one pass's timeline per lane (read / copy stream / compute
    stream, when the run was profiled) and of ``result.stats["convergence"]`` to ``path``;
    returns the path."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise ParameterError(f"--profile needs matplotlib: {install('plot', 'matplotlib')}") from err
    passes = result.passes
    entry = _traced_pass(result)
    if entry is None:
        fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9, 7), constrained_layout=True)
    else:
        fig, (ax1, axt, ax2) = plt.subplots(3, 1, figsize=(9, 10), constrained_layout=True,
                                            height_ratios=(3, 2, 3))
        _plot_timeline(axt, entry, passes[entry["pass"]])
    idx = list(range(1, len(passes) + 1))
    reading = [p["seconds_reading"] for p in passes]
    other = [max(p["seconds"] - p["seconds_reading"], 0.0) for p in passes]
    colors = ["tab:orange" if p["kind"] == "advance" else "tab:blue" for p in passes]
    ax1.bar(idx, reading, color="tab:gray", label="reading the store and preparing chunks")
    ax1.bar(idx, other, bottom=reading, color=colors, label="kernels and copies (orange: CSR advance)")
    ax1.set_xlabel("pass")
    ax1.set_ylabel("seconds")
    totals = [p["seconds"] for p in passes if p["seconds"] > 0]
    if totals and max(totals) > 30 * min(totals):  # a cold first pass would flatten the rest
        ax1.set_yscale("log")
    ax1.set_title(f"{result.algorithm} on {result.device}: {len(passes)} passes, {result.seconds:.3f} s")
    ax1.legend(loc="upper left", fontsize=8)
    if any(p["bytes_to_device"] for p in passes):
        twin = ax1.twinx()
        twin.plot(idx, [p["GBps_to_device"] for p in passes], "k.-", label="host→device GB/s")
        twin.set_ylabel("GB/s host→device")
    conv = result.stats.get("convergence", [])
    if conv:
        xs, ys = zip(*conv)
        ax2.plot(xs, [max(y, 1e-300) for y in ys], "o-")
        ax2.set_yscale("log")
    ax2.set_xlabel("iteration")
    ax2.set_ylabel({"pagerank": "L1 change", "wcc": "trees merged (1/0)"}.get(result.algorithm,
                                                                               "vertices changed"))
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, suffix=".png.partial")
    os.close(fd)
    try:
        fig.savefig(tmp, format="png", dpi=110)
        os.chmod(tmp, 0o666 & ~umask())  # mkstemp made it 0600
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    finally:
        plt.close(fig)
    return str(path)
