"""``@record`` (ooc_graph._records) makes the dataclass ``@dataclass`` makes, with methods written
once instead of compiled for each class: the same constructor, repr, equality, hash, frozenness,
introspection and pickling."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import re
from dataclasses import dataclass, field

import pytest

from ooc_graph import config
from ooc_graph._records import record


def _pair(decorate, **options):
    @decorate(**options)
    class Base:
        x: int
        y: tuple = field(default_factory=tuple)
        z: str = field(default="z", repr=False, compare=False)
        w: float = 1.5

        def __post_init__(self):
            object.__setattr__(self, "post", getattr(self, "post", 0) + 1)

    @decorate(**options)
    class Derived(Base):
        v: object = None

    return Base, Derived


def _behaviour(Base, Derived, frozen: bool) -> list:
    a, b = Base(1), Derived(2, (3,), "q", v=4)
    seen = [repr(a).rsplit(".", 1)[-1], repr(b).rsplit(".", 1)[-1], a == Base(1), a == Base(2), a == Derived(1),
            a == Base(1, z="other"), a != Base(1), b.post, a.y == (), Base.w,
            [f.name for f in dataclasses.fields(Derived)], dataclasses.asdict(b), dataclasses.astuple(b),
            Derived.__doc__.replace("_pair.<locals>.", ""), Base.__match_args__, Derived.__match_args__,
            repr(dataclasses.replace(b, x=9)).rsplit(".", 1)[-1], dataclasses.is_dataclass(Derived),
            Base.__hash__ is None]
    if frozen:
        seen += [hash(a) == hash(Base(1)), hash(a) == hash(Base(1, z="other"))]
        for act in (lambda: setattr(a, "x", 3), lambda: delattr(a, "x"), lambda: setattr(a, "new", 1)):
            with pytest.raises(dataclasses.FrozenInstanceError) as err:
                act()
            seen.append(str(err.value))
    else:
        a.x = 5
        seen.append(a.x)
    for wrong in (lambda: Base(), lambda: Base(1, (), "z", 2.0, 5), lambda: Base(1, x=2), lambda: Base(1, q=2),
                  lambda: Derived()):
        with pytest.raises(TypeError) as err:
            wrong()
        seen.append(str(err.value).split("__init__() ")[1])
    return [re.sub(r" at 0x[0-9a-f]+", "", x) if isinstance(x, str) else x for x in seen]  # object reprs


@pytest.mark.parametrize("options", [{}, {"frozen": True}, {"repr": False}, {"eq": False}])
def test_a_record_behaves_as_the_dataclass(options):
    expected = _behaviour(*_pair(dataclass, **options), frozen=options.get("frozen", False))
    got = _behaviour(*_pair(record, **options), frozen=options.get("frozen", False))
    assert got == expected


def test_the_configuration_pickles_copies_and_compares():
    cfg = config.Config().replace({"traversal.bottom_up": False}, cpu={"bfs_alpha": 9})
    assert pickle.loads(pickle.dumps(cfg)) == cfg and copy.deepcopy(cfg) == cfg and cfg != config.Config()
    assert cfg.made == {"traversal.bottom_up", "cpu.bfs_alpha"} and hash(cfg.traversal) != hash(config.Traversal())
    assert repr(config.Algorithms()).startswith("Algorithms(pagerank_result_stripes=8, ")
    assert "made" not in repr(cfg)  # repr=False


def test_the_docstring_of_a_record_without_one_is_the_dataclass_s():
    namespace: dict = {}
    exec("from dataclasses import dataclass, field\nfrom ooc_graph._records import record\nimport numpy as np\n"
         "@dataclass\nclass A:\n    x: int\n    y: np.ndarray = None\n    z: list = field(default_factory=list)\n"
         "@record\nclass B:\n    x: int\n    y: np.ndarray = None\n    z: list = field(default_factory=list)\n",
         namespace)  # real annotations (no from __future__ import annotations)
    assert namespace["B"].__doc__ == namespace["A"].__doc__.replace("A(", "B(", 1)
