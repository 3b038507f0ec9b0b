"""The command line: every command, non-zero exits with clear messages, no partial outputs."""

import subprocess
import sys

import numpy as np
import pytest

from ooc_graph.cli import main


def test_generate_info_run(tmp_path, capsys):
    store = tmp_path / "g.h5"
    assert main(["generate", "rmat", str(store), "--scale", "8", "--edge-factor", "4", "--weighted", "--quiet"]) == 0
    assert main(["info", str(store)]) == 0
    assert "256 vertices" in capsys.readouterr().out
    for algo, extra in (("pagerank", []), ("bfs", ["--source", "0"]), ("sssp", ["--source", "0"]), ("wcc", [])):
        assert main(["run", algo, str(store), "--device", "cpu", "--memory", "1MB"] + extra) == 0
        assert f"{algo}:" in capsys.readouterr().out
    out = tmp_path / "pr.npz"
    assert main(["run", "pagerank", str(store), "--mode", "graphalytics", "--max-iter", "5",
                 "--result-name", "pr5", "--out", str(out)]) == 0
    assert np.load(out)["values"].shape == (256,)
    png = tmp_path / "profile.png"
    assert main(["run", "sssp", str(store), "--source", "3", "--device", "cpu", "--memory", "64KiB",
                 "--profile", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["info", str(store), "--json"]) == 0
    assert '"pr5"' in capsys.readouterr().out
    assert main(["generate", "grid", str(tmp_path / "m.h5"), "--rows", "4", "--cols", "4", "--quiet"]) == 0
    mesh = tmp_path / "a.h5"
    assert main(["generate", "grid", str(mesh), "--rows", "30", "--cols", "9", "--interval-size", "16",
                 "--augment", "--threads", "2", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["info", str(mesh), "--json"]) == 0
    assert '"augmented": true' in capsys.readouterr().out
    assert main(["run", "bfs", str(mesh), "--source", "0", "--execution", "async", "--memory", "40KiB"]) == 0


def test_convert_and_errors(tmp_path, capsys):
    edges = tmp_path / "e.txt"
    edges.write_text("# c\n0 1\n1 2\n")
    out = tmp_path / "g.h5"
    assert main(["convert", str(edges), str(out), "--undirected", "--quiet"]) == 0
    converted = capsys.readouterr().out
    assert "edges/s" in converted
    assert main(["info", str(out)]) == 0  # info reports the rate convert printed
    assert converted.split("converted ")[1].strip() in capsys.readouterr().out
    bad = tmp_path / "bad.txt"
    bad.write_text("0 1\n1 zz\n")
    assert main(["convert", str(bad), str(tmp_path / "b.h5"), "--quiet"]) == 2
    assert "bad.txt, line 2: not a valid integer vertex id (got 'zz')" in capsys.readouterr().err
    assert not (tmp_path / "b.h5").exists()
    assert main(["run", "bfs", str(tmp_path / "missing.h5"), "--source", "0"]) == 2
    assert "no such graph store" in capsys.readouterr().err
    assert main(["run", "bfs", str(out), "--source", "99"]) == 2
    assert "vertex 99 is not in the graph" in capsys.readouterr().err
    assert main(["run", "pagerank", str(out), "--memory", "lots"]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt", "e.txt", "g.h5"]


def test_overwrite_replaces_only_a_store(tmp_path, capsys):
    """``convert`` and ``generate`` refuse to replace an existing store without ``--overwrite``,
    replace it with it, and never replace the input or a file that is not a store."""
    edges = tmp_path / "e.txt"
    edges.write_text("0 1\n1 2\n")
    out = tmp_path / "g.h5"
    assert main(["convert", str(edges), str(out), "--quiet"]) == 0
    before = out.read_bytes()
    assert main(["convert", str(edges), str(out), "--quiet"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert out.read_bytes() == before
    edges.write_text("0 1\n1 2\n2 3\n")
    assert main(["convert", str(edges), str(out), "--quiet", "--overwrite"]) == 0
    assert main(["info", str(out)]) == 0
    assert "4 vertices" in capsys.readouterr().out
    assert main(["generate", "grid", str(out), "--rows", "2", "--cols", "3", "--quiet"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert main(["generate", "grid", str(out), "--rows", "2", "--cols", "3", "--quiet", "--overwrite"]) == 0
    assert main(["generate", "rmat", str(out), "--scale", "4", "--quiet", "--overwrite"]) == 0
    assert main(["info", str(out)]) == 0
    assert "16 vertices" in capsys.readouterr().out
    assert main(["convert", str(edges), str(edges), "--quiet", "--overwrite"]) == 2  # never the input
    assert "e.txt" in capsys.readouterr().err and edges.read_text() == "0 1\n1 2\n2 3\n"
    notes = tmp_path / "notes.h5"
    notes.write_text("my notes\n")
    assert main(["convert", str(edges), str(notes), "--quiet", "--overwrite"]) == 2
    assert "not an ooc_graph store" in capsys.readouterr().err and notes.read_text() == "my notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.txt", "g.h5", "notes.h5"]


def test_convert_device_and_stages(tmp_path, capsys):
    edges = tmp_path / "e.txt"
    edges.write_text("0 1\n1 2\n")
    assert main(["convert", str(edges), str(tmp_path / "g.h5"), "--quiet", "--device", "cpu"]) == 0
    assert main(["info", str(tmp_path / "g.h5"), "--json"]) == 0
    assert '"stages"' in capsys.readouterr().out
    assert main(["generate", "rmat", str(tmp_path / "r.h5"), "--scale", "5", "--quiet", "--device", "cpu"]) == 0


def test_console_script_and_demo():
    r = subprocess.run([sys.executable, "-m", "ooc_graph.cli", "demo", "--scale", "8", "--device", "cpu"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    for algo in ("pagerank", "bfs", "sssp", "wcc"):
        assert f"{algo}:" in r.stdout
    r = subprocess.run([sys.executable, "-m", "ooc_graph.cli", "run", "nope", "x.h5"], capture_output=True, text=True)
    assert r.returncode == 2 and "invalid choice" in r.stderr


_PROGRAM = """
import atexit, sys
from ooc_graph import cli
real = cli.main
def main():  # an exit handler registered while the command runs, as logging's and tempfile's are
    atexit.register(lambda: print("handler ran", flush=True))
    print("unflushed", end="")
    return real(sys.argv[1:])
cli.main = main
cli.program()
"""


@pytest.mark.parametrize("argv, status", [(["info", "{store}"], 0), (["info", "{missing}"], 2),
                                          (["run", "pagerank", "{store}", "--device", "nope"], 2)])
def test_the_program_ends_after_its_exit_handlers(tmp_path, argv, status):
    """The program ends the process once threads are joined and the exit handlers registered while
    it ran have run: output flushed, the command's status, not the interpreter's teardown."""
    store = tmp_path / "g.h5"
    assert main(["generate", "grid", str(store), "--rows", "3", "--cols", "3", "--quiet"]) == 0
    argv = [a.format(store=store, missing=tmp_path / "missing.h5") for a in argv]
    r = subprocess.run([sys.executable, "-c", _PROGRAM, *argv], capture_output=True, text=True, timeout=60)
    assert r.returncode == status, r.stderr
    assert r.stdout.startswith("unflushed") and r.stdout.endswith("handler ran\n"), r.stdout
    assert ("9 vertices" in r.stdout) == (status == 0)


def test_profile_draws_a_steady_pass():
    from types import SimpleNamespace

    from ooc_graph.profile import _traced_pass
    passes = [{"bytes_read": 10, "bytes_to_device": 90, "seconds": 2.0},   # cold: read from the store
              {"bytes_read": 0, "bytes_to_device": 50, "seconds": 0.1},
              {"bytes_read": 0, "bytes_to_device": 50, "seconds": 0.2}]
    timeline = [{"pass": i, "spans": [["compute", 0, 0.0, 0.1]]} for i in range(3)]
    r = SimpleNamespace(passes=passes, timeline=timeline)
    assert _traced_pass(r)["pass"] == 2
    r.timeline = timeline[:1]
    assert _traced_pass(r)["pass"] == 0
    r.timeline = []
    assert _traced_pass(r) is None


def test_one_set_of_conventions(tmp_path, capsys):
    store = tmp_path / "g.h5"
    assert main(["generate", "rmat", str(store), "--scale", "7", "--edge-factor", "4", "--directed", "--quiet"]) == 0
    assert "directed" in capsys.readouterr().out
    assert main(["-v", "info", str(store)]) == 0 and main(["info", str(store), "-v"]) == 0  # -v anywhere
    capsys.readouterr()
    for argv, words in ((["run", "bfs", str(store)], "--source"),                              # required
                        (["run", "bfs", str(store), "--source", "0", "--alpha", "0.5"], "--alpha"),  # not bfs's
                        (["run", "bfs", str(store), "--source", "1.5"], "vertex '1.5' is not in the graph"),
                        (["run", "bfs", str(store), "--source", "abc"], "vertex 'abc' is not in the graph"),
                        (["run", "wcc", str(store), "--workers", "0"], "workers must be a positive integer"),
                        (["run", "pagerank", str(store), "--memory", "1KB"], "is below what this graph needs"),
                        (["run", "wcc", str(store), "--scheduler", "foo"], "not a dask scheduler address"),
                        (["run", "wcc", str(store), "--out", str(tmp_path / "x.txt")], "unknown format"),
                        (["run", "wcc", str(store), "--out", str(tmp_path / "no" / "x.npz")], "does not exist"),
                        (["run", "wcc", str(store), "--profile", str(tmp_path / "no" / "x.png")],
                         "--profile " + str(tmp_path / "no" / "x.png") + ": folder")):
        try:
            status = main(argv)
        except SystemExit as exit:  # argparse's own refusals
            status = exit.code
        assert status == 2, argv
        out, err = capsys.readouterr()
        assert words in err and out == "", argv  # refused before computing
    assert not list(tmp_path.glob("**/*.partial"))
    for suffix in (".npz", ".csv"):
        out = tmp_path / f"bfs{suffix}"
        assert main(["run", "bfs", str(store), "--source", "1", "--out", str(out), "--no-store", "--quiet"]) == 0
        assert out.exists()
    lines = (tmp_path / "bfs.csv").read_text().splitlines()
    assert lines[0] == "vertex,depth,parent" and len(lines) == 129
    assert main(["algorithms"]) == 0 and "pagerank" in capsys.readouterr().out


def test_outputs_honour_the_umask(tmp_path):
    import os
    store = tmp_path / "g.h5"
    old = os.umask(0o027)
    try:
        assert main(["generate", "grid", str(store), "--rows", "3", "--cols", "3", "--quiet"]) == 0
        outs = [tmp_path / "r.npz", tmp_path / "r.csv"]
        for out in outs:
            assert main(["run", "sssp", str(store), "--source", "0", "--device", "cpu", "--out", str(out),
                         "--profile", str(tmp_path / "p.png"), "--quiet"]) == 0
    finally:
        os.umask(old)
    for path in [store, tmp_path / "p.png"] + outs:
        assert path.stat().st_mode & 0o777 == 0o640, path


def test_iterations_show_progress_on_a_terminal(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from ooc_graph.cli import progress
    bars = []

    class Bar:
        def __init__(self, *, total=None, unit="it", desc="", disable=False, bar_format=None):
            self.total, self.desc, self.disable, self.n, self.postfix = total, desc, disable, 0, ""
            self.bar_format = bar_format
            bars.append(self)

        def update(self, k):
            self.n += k

        def set_postfix_str(self, text):
            self.postfix = text

        def close(self):
            pass
    monkeypatch.setattr(progress, "progress_bar", Bar)
    monkeypatch.setattr(progress, "sys", SimpleNamespace(stderr=SimpleNamespace(isatty=lambda: True)))
    store = tmp_path / "g.h5"
    assert main(["generate", "grid", str(store), "--rows", "20", "--cols", "20", "--quiet"]) == 0
    assert main(["run", "pagerank", str(store), "--device", "cpu", "--no-store"]) == 0
    pr = bars[-1]  # the iteration and the residual; no total (PageRank's max_iter made "1.00/100 it" and an ETA)
    assert (pr.desc, pr.total, pr.disable) == ("pagerank", None, False) and pr.n > 1, vars(pr)
    assert pr.postfix.startswith("residual "), pr.postfix
    from tqdm import tqdm
    line = tqdm.format_meter(7, None, 4.2, prefix=pr.desc, bar_format=pr.bar_format, postfix="residual 0.0013")
    assert line == "pagerank: iteration 7, residual 0.0013 [00:04]"
    assert main(["run", "bfs", str(store), "--source", "0", "--device", "cpu", "--no-store"]) == 0
    assert bars[-1].desc == "bfs" and bars[-1].n > 1 and bars[-1].postfix.startswith("changed "), vars(bars[-1])
    seen = len(bars)
    assert main(["run", "wcc", str(store), "--device", "cpu", "--no-store", "--quiet"]) == 0
    assert all(b.disable for b in bars[seen:])


def test_every_option_and_positional_has_help():
    import argparse

    from ooc_graph.cli.parser import build_parser
    missing = []

    def walk(parser, path):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                missing.extend(path + [c.dest] for c in action._choices_actions if not c.help)
                for name, sub in action.choices.items():
                    walk(sub, path + [name])
            elif not action.help or action.help == argparse.SUPPRESS:
                missing.append(path + [action.dest])
    walk(build_parser(), [])
    assert missing == []


@pytest.mark.parametrize("flag,name", [("--out", "r.csv"), ("--out", "r.npz"), ("--profile", "p.png")])
def test_a_full_disk_names_the_output(tmp_path, capsys, monkeypatch, flag, name):
    import errno
    import os
    store = tmp_path / "g.h5"
    assert main(["generate", "grid", str(store), "--rows", "3", "--cols", "3", "--quiet"]) == 0

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "replace", full)  # the last step of writing either output
    capsys.readouterr()
    assert main(["run", "sssp", str(store), "--source", "0", "--device", "cpu", "--no-store", "--quiet", flag,
                 str(tmp_path / name)]) == 2
    assert capsys.readouterr().err == f"ooc-graph: error: {flag} {tmp_path / name}: cannot write it: No space left on device\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.h5"]


def test_broken_pipe_ends_quietly(tmp_path):
    store = tmp_path / "g.h5"
    assert main(["generate", "grid", str(store), "--rows", "3", "--cols", "3", "--quiet"]) == 0
    p = subprocess.run(f"{sys.executable} -m ooc_graph.cli info {store} | head -c 1", shell=True, capture_output=True,
                       text=True, timeout=60)
    assert "Traceback" not in p.stderr and "BrokenPipe" not in p.stderr


def test_demo_out_and_distributed_run(tmp_path, capsys):
    out = tmp_path / "demo.npz"
    assert main(["demo", "--scale", "7", "--device", "cpu", "--out", str(out), "--quiet"]) == 0
    assert {"vertex", "pagerank_values", "bfs_depth", "wcc_labels"} <= set(np.load(out).files)
    store = tmp_path / "g.h5"
    assert main(["generate", "rmat", str(store), "--scale", "8", "--edge-factor", "4", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["run", "pagerank", str(store), "--workers", "2", "--result-name", "pr2", "--quiet"]) == 0
    assert "pagerank:" in capsys.readouterr().out
    assert main(["results", "list", str(store)]) == 0 and "pr2" in capsys.readouterr().out


_TERM_DEMO = """
import sys, time
import ooc_graph
from ooc_graph.cli import main
def slow(*a, **k):
    print("running", flush=True)
    time.sleep(60)
ooc_graph.pagerank = slow
sys.exit(main(["demo", "--scale", "6", "--device", "cpu", "--quiet"]))
"""


def test_sigterm_removes_the_demo_store(tmp_path):
    import os
    import signal
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    p = subprocess.Popen([sys.executable, "-c", _TERM_DEMO], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "TMPDIR": str(scratch)})
    assert p.stdout.readline().startswith("generated ")
    assert p.stdout.readline() == "running\n"
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=60)
    assert p.returncode == -signal.SIGTERM and "Traceback" not in err, err
    assert list(scratch.iterdir()) == []


def test_operator_algorithms_on_the_command_line(tmp_path, capsys):
    import ooc_graph
    from ooc_graph import registry
    store = tmp_path / "g.h5"
    assert main(["generate", "rmat", str(store), "--scale", "7", "--edge-factor", "4", "--directed", "--weighted",
                 "--quiet"]) == 0
    capsys.readouterr()
    assert main(["algorithms"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listed] == sorted(registry.algorithms())
    assert all("``" not in line for line in listed)
    runs = {"hits": (["--max-iter", "500", "--no-normalized"], "hubs,authorities"),
            "katz_centrality": (["--alpha", "0.01", "--beta", "2", "--weight", "weight"], "values"),
            "eigenvector_centrality": (["--max-iter", "1000", "--tol", "1e-6"], "values"),
            "cdlp": (["--max-iter", "3"], "labels"),
            "core_number": ([], "core"),
            "scc": ([], "labels"),
            "betweenness_centrality": (["--k", "10", "--seed", "3", "--endpoints", "--weight", "weight"], "values"),
            "pagerank": (["--weight", "weight"], "values")}
    for algo, (extra, columns) in runs.items():
        out = tmp_path / f"{algo}.csv"
        assert main(["run", algo, str(store), "--device", "cpu", "--memory", "64KiB", "--out", str(out),
                     "--quiet"] + extra) == 0, algo
        assert f"{algo}:" in capsys.readouterr().out
        assert out.read_text().splitlines()[0] == f"vertex,{columns}"
    kwargs = {"hits": dict(max_iter=500, normalized=False), "katz_centrality": dict(alpha=0.01, beta=2.0,
              weight="weight"), "eigenvector_centrality": dict(max_iter=1000), "cdlp": dict(max_iter=3),
              "betweenness_centrality": dict(k=10, seed=3, endpoints=True, weight="weight"),
              "pagerank": dict(weight="weight")}
    G = ooc_graph.open(store)
    for algo in runs:  # the options reached the function: the stored result is the Python call's
        saved = G.load_result(algo)
        for name, values in getattr(ooc_graph, algo)(G, device="cpu", **kwargs.get(algo, {})).arrays().items():
            np.testing.assert_allclose(saved[name], values, rtol=1e-12, err_msg=algo)
    G.close()
    assert main(["run", "scc", str(store), "--workers", "2", "--result-name", "scc2", "--quiet"]) == 0
    assert "scc:" in capsys.readouterr().out
    try:
        status = main(["run", "core_number", str(store), "--max-iter", "3"])  # not core_number's
    except SystemExit as exit:
        status = exit.code
    assert status == 2 and "--max-iter" in capsys.readouterr().err


def test_in_memory_algorithms(tmp_path, capsys):
    store = tmp_path / "g.h5"
    assert main(["generate", "rmat", str(store), "--scale", "7", "--edge-factor", "4", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["algorithms"]) == 0
    listed = capsys.readouterr().out
    for name in ("triangle_count", "lcc", "louvain"):
        assert f"\n{name} " in listed
    assert "[--resolution --threshold --max-level --seed --weight]" in listed
    assert main(["run", "triangle_count", str(store), "--device", "cpu"]) == 0
    assert " triangles" in capsys.readouterr().out
    assert main(["run", "lcc", str(store), "--device", "cpu", "--out", str(tmp_path / "lcc.csv")]) == 0
    assert (tmp_path / "lcc.csv").read_text().splitlines()[0] == "vertex,values"
    assert main(["run", "louvain", str(store), "--device", "cpu", "--seed", "3", "--resolution", "1.5",
                 "--no-weight", "--result-name", "lv"]) == 0
    assert "communities, modularity" in capsys.readouterr().out
    assert main(["run", "louvain", str(store), "--memory", "1KiB"]) != 0
    assert "louvain holds the graph in memory" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # in memory, in one process: no passes to trace, no cluster
        main(["run", "louvain", str(store), "--profile", "x.png"])
    assert "unrecognized arguments: --profile" in capsys.readouterr().err


def test_out_in_original_ids(tmp_path):
    """--out writes what to_pandas()/to_arrow() give: original ids (strings too), parents as ids,
    no parent as an empty CSV field, a parquet null, an npz mask."""
    import networkx as nx
    import pyarrow.parquet as pq

    import ooc_graph
    store = tmp_path / "s.h5"
    ooc_graph.convert(nx.DiGraph([("alice", "bob"), ("bob", "carol, jr")]), store, progress=False).close()
    paths = {s: tmp_path / f"bfs{s}" for s in (".csv", ".parquet", ".npz")}
    for out in paths.values():
        assert main(["run", "bfs", str(store), "--source", "alice", "--out", str(out), "--no-store", "--quiet"]) == 0
    assert paths[".csv"].read_text() == 'vertex,depth,parent\nalice,0,\nbob,1,alice\n"carol, jr",2,bob\n'
    with ooc_graph.open(store) as G:
        want = ooc_graph.bfs(G, "alice", device="cpu").to_arrow()
    assert pq.read_table(paths[".parquet"]).equals(want)
    npz = np.load(paths[".npz"])
    assert npz["vertex"].tolist() == ["alice", "bob", "carol, jr"] and npz["parent_missing"].tolist() == [1, 0, 0]


def test_distributed_runs_are_quiet_unless_verbose(tmp_path):
    """dask's logging stays off the terminal: starting and stopping a local cluster logged 29
    ``distributed.*`` lines, and a mistake caught on a worker (a source not in the graph) printed
    each worker's "Compute Failed" traceback besides the one-line error. ``-v`` shows them."""
    store = tmp_path / "g.h5"
    assert main(["generate", "rmat", str(store), "--scale", "6", "--edge-factor", "4", "--quiet"]) == 0
    cli = [sys.executable, "-m", "ooc_graph.cli", "run", "bfs", str(store), "--source", "999", "--no-store", "--quiet"]
    # Both at once (each starts a cluster: ~5 s of CPU); one worker is enough to show dask's lines.
    quiet, verbose = (subprocess.Popen(cli + extra, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                      for extra in (["--workers", "2"], ["--workers", "1", "-v"]))
    try:
        (_, err), (_, err_v) = quiet.communicate(timeout=180), verbose.communicate(timeout=180)
    finally:
        for p in (quiet, verbose):
            if p.poll() is None:
                p.kill()
                p.communicate()
    assert quiet.returncode == 2
    lines = err.splitlines()
    assert len(lines) == 2 and lines[0].startswith("submitted job bfs-"), err
    assert lines[1] == "ooc-graph: error: vertex 999 is not in the graph (ids are 0..63)"
    assert verbose.returncode == 2 and "distributed.scheduler" in err_v and "Compute Failed" in err_v, err_v


@pytest.mark.parametrize("flag,name,module", [("--out", "r.parquet", "pyarrow"), ("--profile", "p.png", "matplotlib")])
def test_an_output_without_its_library_fails_before_the_run(tmp_path, capsys, monkeypatch, flag, name, module):
    """``--out x.parquet`` without pyarrow and ``--profile`` without matplotlib ran the whole
    algorithm (and stored its result) before failing: now one line before any work."""
    store = tmp_path / "g.h5"
    assert main(["generate", "grid", str(store), "--rows", "3", "--cols", "3", "--quiet"]) == 0
    monkeypatch.setitem(sys.modules, module, None)  # as where it is not installed
    capsys.readouterr()
    assert main(["run", "sssp", str(store), "--source", "0", "--device", "cpu", "--quiet", flag,
                 str(tmp_path / name)]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.startswith(f"ooc-graph: error: {flag}") and f"needs {module}: " in out.err
    assert main(["results", "list", str(store)]) == 0 and capsys.readouterr().out == ""  # nothing was computed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.h5"]


def test_memory_says_what_it_bounds(capsys):
    """``run --memory 200MB`` peaked at 456 MB resident: it bounds the engine's data for the graph,
    not the process, and the help says so (conversion's does bound the process)."""
    for argv in (["run", "pagerank", "--help"], ["demo", "--help"], ["convert", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        text = " ".join(capsys.readouterr().out.split())
        if argv[0] == "convert":
            assert "--memory MEMORY host memory budget of the whole process" in text
        else:
            assert "the vertex state and the chunks of arcs cached and in flight" in text
            assert "Not a cap on the process: the program (~190 MB) and the result come on top" in text


def test_threads_and_workers_are_not_one_word(tmp_path, capsys):
    """``--workers`` counted threads in ``convert``/``generate`` and processes in ``run``: the
    threads are ``--threads`` now; the old spelling still works, with a note saying so."""
    store = tmp_path / "g.h5"
    assert main(["generate", "grid", str(store), "--rows", "4", "--cols", "4", "--threads", "2", "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    assert main(["generate", "grid", str(store), "--rows", "4", "--cols", "4", "--workers", "2", "--quiet",
                 "--overwrite"]) == 0
    assert capsys.readouterr().err == ("ooc-graph: generate --workers is deprecated: it counts threads, and is now "
                                       "--threads (in run, --workers counts worker processes)\n")
    assert main(["convert", str(tmp_path / "e.txt"), str(store), "--workers", "2", "--threads", "2"]) == 2
    assert "give --threads only" in capsys.readouterr().err
    from ooc_graph.cli.parser import build_parser
    text = build_parser()._subparsers._group_actions[0].choices["convert"].format_help()
    assert "--threads THREADS" in text and "deprecated spelling of --threads" in text


def test_ctrl_c_while_exiting_is_130_and_quiet(tmp_path):
    """A Ctrl-C (SIGINT to the terminal's process group) while ``run --workers 2`` exits, closing
    its cluster: a traceback from the exit handlers (and from each worker) and status 0 before,
    or a hang; now status 130 and nothing more on stderr."""
    import os
    import signal
    import time
    store = tmp_path / "g.h5"
    assert main(["generate", "rmat", str(store), "--scale", "6", "--edge-factor", "4", "--quiet"]) == 0
    p = subprocess.Popen([sys.executable, "-m", "ooc_graph.cli", "run", "wcc", str(store), "--workers", "2",
                          "--no-store", "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        assert p.stdout.readline().startswith("wcc: ")  # the command is done: the program exits
        time.sleep(0.2)
        os.killpg(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=90)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
    assert p.returncode == 130, err
    assert err.splitlines() == [err.splitlines()[0]] and err.startswith("submitted job wcc-"), err
