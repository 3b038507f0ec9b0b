"""A picture of a run: per-pass time and traffic, and convergence (``ooc-graph run --profile``)."""

from __future__ import annotations

import os
import tempfile

from .errors import ParameterError


def plot_profile(result, path) -> str:
    """Write a PNG of ``result.passes`` (seconds per pass, split into reading the store and the
    rest; host→device GB/s) and ``result.stats["convergence"]`` to ``path``; returns the path."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise ParameterError("--profile needs matplotlib: pip install 'ooc-graph[plot]'") from err
    passes = result.passes
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(9, 7), constrained_layout=True)
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
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    finally:
        plt.close(fig)
    return str(path)
