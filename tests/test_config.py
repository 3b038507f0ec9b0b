"""ooc_graph.config: typed settings, set for a block or the process, carried to threads and jobs."""

import subprocess
import sys
import threading

import numpy as np
import pytest

import ooc_graph
from ooc_graph import config
from ooc_graph.errors import ParameterError


def test_a_block_changes_settings_and_restores_them():
    before = config.get()
    with config.set({"traversal.bottom_up": False}, stream={"prefetch": 2}) as cfg:
        assert config.get() is cfg
        assert cfg.traversal.bottom_up is False and cfg.stream.prefetch == 2
        with config.set(traversal={"bottom_up": True}):
            assert config.get().traversal.bottom_up is True and config.get().stream.prefetch == 2
        assert config.get().traversal.bottom_up is False
    assert config.get() is before and before.traversal.bottom_up is True


def test_a_block_is_this_threads_only_unless_carried():
    seen = {}

    def look(key):
        seen[key] = config.get().traversal.advance_fraction

    with config.set(traversal={"advance_fraction": 0.5}):
        plain = threading.Thread(target=look, args=("plain",))
        carried = threading.Thread(target=config.carried(look), args=("carried",))
        for t in (plain, carried):
            t.start()
            t.join()
    assert seen == {"plain": config.Config().traversal.advance_fraction, "carried": 0.5}


def test_process_settings_and_blocks_over_them():
    try:
        config.update({"stream.prefetch": 3})
        assert config.get().stream.prefetch == 3
        seen = []
        t = threading.Thread(target=lambda: seen.append(config.get().stream.prefetch))
        t.start()
        t.join()
        assert seen == [3]  # every thread sees the process's settings
        with config.set(stream={"prefetch": 1}):
            assert config.get().stream.prefetch == 1
        assert config.get().changes() == {"stream.prefetch": 3}
        with config.set(traversal={"bottom_up": True}):  # made, though the default
            assert config.get().changes() == {"stream.prefetch": 3, "traversal.bottom_up": True}
    finally:
        config.reset()
    assert config.get() == config.Config() and config.get().changes() == {}


@pytest.mark.parametrize("changes, message", [
    ({"traversal.nope": 1}, "config traversal has no setting 'nope' (valid: advance_fraction"),
    ({"nope.x": 1}, "unknown config section 'nope' (valid: traversal, stream"),
    ({"bottom_up": 1}, "must be 'section.name'"),
    ({"traversal.bottom_up": 1}, "config traversal.bottom_up must be True or False (got 1)"),
    ({"traversal.bottom_up": "no"}, "must be True or False (got 'no')"),
    ({"stream.prefetch": 0}, "config stream.prefetch must be an integer of at least 1 (got 0)"),
    ({"stream.prefetch": 2.0}, "must be an integer"),
    ({"stream.prefetch": True}, "must be an integer"),
    ({"traversal.advance_fraction": float("nan")}, "must be a number of at least 0 (got nan)"),
    ({"traversal.advance_fraction": -1}, "must be a number of at least 0"),
    ({"traversal.advance_fraction": "0.5"}, "must be a number"),
])
def test_bad_settings_are_one_line_errors_naming_them(changes, message):
    with pytest.raises(ParameterError) as err:
        with config.set(changes):
            pass
    assert message in str(err.value) and "\n" not in str(err.value)
    assert config.get() == config.Config()


def test_a_section_must_be_a_dict():
    with pytest.raises(ParameterError, match="config traversal= must be a dict"):
        config.update(traversal=False)


def test_inf_is_a_setting():
    with config.set(traversal={"advance_fraction": float("inf")}) as cfg:
        assert cfg.traversal.advance_fraction == float("inf")


def test_the_environment_sets_the_kernels_default():
    code = "from ooc_graph import config; print(config.get().cpu.compiled, config.Config().changes())"
    for value, want in (("numpy", "False {}"), ("compiled", "True {}")):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env={"OOC_GRAPH_CPU_KERNELS": value, "PATH": ""}, check=True).stdout
        assert out.strip() == want


def test_settings_change_how_not_what(tmp_path):
    """The same answers under settings that take other paths through the engine."""
    G = ooc_graph.generate.grid(tmp_path / "g.h5", 30, 20, weighted=True, seed=1, interval_size=64,
                                progress=False)
    ref = ooc_graph.sssp(G, 5, device="cpu")
    for changes in ({"traversal.whole_traversal": False},
                    {"traversal.whole_traversal": False, "traversal.near_far": False},
                    {"traversal.whole_traversal": False, "traversal.advance_fraction": 0.0}):
        with config.set(changes):
            r = ooc_graph.sssp(G, 5, device="cpu")
        np.testing.assert_array_equal(r.distance, ref.distance)
        np.testing.assert_array_equal(r.parent, ref.parent)
        assert r.stats["traversals"] == 0 < ref.stats["traversals"]
