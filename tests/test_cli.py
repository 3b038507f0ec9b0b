"""The command line: every command, non-zero exits with clear messages, no partial outputs."""

import subprocess
import sys

import numpy as np

from ooc_graph.cli import main


def test_generate_info_run(tmp_path, capsys):
    store = tmp_path / "g.h5"
    assert main(["generate", "rmat", str(store), "--scale", "8", "--edge-factor", "4", "--weighted", "--quiet"]) == 0
    assert main(["info", str(store)]) == 0
    assert "256 vertices" in capsys.readouterr().out
    for algo in ("pagerank", "bfs", "sssp", "wcc"):
        assert main(["run", algo, str(store), "--device", "cpu", "--memory", "1MB"]) == 0
        assert f"{algo}:" in capsys.readouterr().out
    out = tmp_path / "pr.npz"
    assert main(["run", "pagerank", str(store), "--mode", "graphalytics", "--max-iter", "5",
                 "--result-name", "pr5", "--out", str(out)]) == 0
    assert np.load(out)["values"].shape == (256,)
    png = tmp_path / "profile.png"
    assert main(["run", "sssp", str(store), "--device", "cpu", "--memory", "64KiB", "--profile", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["info", str(store), "--json"]) == 0
    assert '"pr5"' in capsys.readouterr().out
    assert main(["generate", "grid", str(tmp_path / "m.h5"), "--rows", "4", "--cols", "4", "--quiet"]) == 0
    mesh = tmp_path / "a.h5"
    assert main(["generate", "grid", str(mesh), "--rows", "30", "--cols", "9", "--interval-size", "16",
                 "--augment", "--workers", "2", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["info", str(mesh), "--json"]) == 0
    assert '"augmented": true' in capsys.readouterr().out
    assert main(["run", "bfs", str(mesh), "--source", "0", "--execution", "async", "--memory", "40KiB"]) == 0


def test_convert_and_errors(tmp_path, capsys):
    edges = tmp_path / "e.txt"
    edges.write_text("# c\n0 1\n1 2\n")
    out = tmp_path / "g.h5"
    assert main(["convert", str(edges), str(out), "--directed", "false", "--quiet"]) == 0
    assert "edges/s" in capsys.readouterr().out
    bad = tmp_path / "bad.txt"
    bad.write_text("0 1\n1 zz\n")
    assert main(["convert", str(bad), str(tmp_path / "b.h5"), "--quiet"]) == 2
    assert "bad.txt, line 2: not a valid integer vertex id (got 'zz')" in capsys.readouterr().err
    assert not (tmp_path / "b.h5").exists()
    assert main(["run", "bfs", str(tmp_path / "missing.h5")]) == 2
    assert "no such graph store" in capsys.readouterr().err
    assert main(["run", "bfs", str(out), "--source", "99"]) == 2
    assert "vertex 99 is not in the graph" in capsys.readouterr().err
    assert main(["run", "pagerank", str(out), "--memory", "lots"]) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt", "e.txt", "g.h5"]


def test_console_script_and_demo():
    r = subprocess.run([sys.executable, "-m", "ooc_graph.cli", "demo", "--scale", "8", "--device", "cpu"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    for algo in ("pagerank", "bfs", "sssp", "wcc"):
        assert f"{algo}:" in r.stdout
    r = subprocess.run([sys.executable, "-m", "ooc_graph.cli", "run", "nope", "x.h5"], capture_output=True, text=True)
    assert r.returncode == 2 and "invalid choice" in r.stderr


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
