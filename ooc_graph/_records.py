"""Records: dataclasses whose methods are written once, here, instead of generated for each class.

``@dataclass`` writes the source of ``__init__``, ``__repr__``, ``__eq__`` (and, frozen,
``__hash__``, ``__setattr__``, ``__delattr__``) for every class it decorates and compiles it:
0.6 to 3 ms a class on the 2-core development machine, and what a PageRank call imported before
it ran defined 35 of them (~40 ms, about half of what the package added to importing NumPy and
h5py; issue 31). ``@record`` makes the same dataclass — ``dataclasses.fields``, ``replace``,
``asdict`` and ``is_dataclass`` see it as before, its fields keep their defaults, factories,
``repr=False``, ``compare=False`` and metadata — whose methods are the functions below, reading
the class's fields: ~0.1 ms a class. They behave as the generated ones (positional or keyword
arguments, defaults and factories, ``__post_init__``; the repr of the fields with ``repr``; equal
when of the same class with equal compared fields; frozen: hashable, and assigning a field raises
:class:`dataclasses.FrozenInstanceError`). Only ``frozen``, ``repr`` and ``eq`` are taken: the
package uses no other option of ``@dataclass``.
"""

from __future__ import annotations

import dataclasses
import reprlib

__all__ = ["record"]

_MISSING = dataclasses.MISSING


class _Spec:
    """What the shared methods need to know of one record class."""

    __slots__ = ("cls", "frozen", "init", "positional", "accepted", "required", "names", "compared", "hashed",
                 "shown", "post_init")

    def __init__(self, cls, frozen: bool):
        fields = dataclasses.fields(cls)
        self.cls, self.frozen = cls, frozen
        # (name, default, factory, taken by __init__) of every field, in order
        self.init = tuple((f.name, f.default, f.default_factory, f.init) for f in fields)
        self.positional = tuple(f.name for f in fields if f.init)
        self.accepted = frozenset(self.positional)
        self.required = tuple(f.name for f in fields
                              if f.init and f.default is _MISSING and f.default_factory is _MISSING)
        self.names = frozenset(f.name for f in fields)
        self.compared = tuple(f.name for f in fields if f.compare)
        self.hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
        self.shown = tuple(f.name for f in fields if f.repr)
        self.post_init = hasattr(cls, "__post_init__")


def record(cls=None, /, *, frozen: bool = False, repr: bool = True, eq: bool = True):  # noqa: A002
    """``@record``, ``@record(frozen=True)``, ``@record(repr=False)``: as ``@dataclass`` with the
    same arguments (see the module's docstring)."""
    def wrap(cls):
        own = cls.__dict__
        undocumented = not own.get("__doc__")
        if undocumented:
            cls.__doc__ = cls.__name__  # else dataclass writes one, from a signature it computes
        explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
        dataclasses.dataclass(cls, init=False, repr=False, eq=False)
        cls._record = _Spec(cls, frozen)
        if undocumented:  # what @dataclass writes: the class and its __init__'s signature
            cls.__doc__ = f"{cls.__name__}({', '.join(map(_parameter, dataclasses.fields(cls)))})"
        methods = {"__init__": _init}
        if repr:
            methods["__repr__"] = _repr
        if eq:
            methods["__eq__"] = _eq
        for name, method in methods.items():
            if name not in own:
                setattr(cls, name, method)
        if eq and not explicit_hash:
            cls.__hash__ = _hash if frozen else None
        if frozen:
            for name, method in (("__setattr__", _setattr), ("__delattr__", _delattr)):
                if name in own:
                    raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
                setattr(cls, name, method)
        return cls
    return wrap if cls is None else wrap(cls)


def _parameter(f) -> str:
    """A field as ``inspect.signature`` shows the parameter of a generated ``__init__``."""
    import inspect  # only for a class without a docstring (NumPy imports it anyway)
    text = f"{f.name}: {inspect.formatannotation(f.type)}"
    if f.default is not _MISSING:
        return f"{text} = {f.default!r}"
    return text + ("" if f.default_factory is _MISSING else " = <factory>")


def _init(self, *args, **kwargs):
    spec = type(self)._record
    given = kwargs
    if args:
        if len(args) > len(spec.positional):
            raise TypeError(f"{spec.cls.__qualname__}.__init__() takes {_counted(spec)} but {len(args) + 1} "
                            f"{'was' if not args else 'were'} given")
        given = dict(zip(spec.positional, args))
        for name in kwargs:
            if name in given:
                raise TypeError(f"{spec.cls.__qualname__}.__init__() got multiple values for argument {name!r}")
        given.update(kwargs)
    if not spec.accepted.issuperset(kwargs):
        name = next(name for name in kwargs if name not in spec.accepted)
        raise TypeError(f"{spec.cls.__qualname__}.__init__() got an unexpected keyword argument {name!r}")
    missing = [name for name in spec.required if name not in given]
    if missing:
        names = [repr(name) for name in missing]
        listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])}{',' if len(names) > 2 else ''} and {names[-1]}"
        raise TypeError(f"{spec.cls.__qualname__}.__init__() missing {len(missing)} required positional argument"
                        f"{'s' if len(missing) > 1 else ''}: {listed}")
    put = object.__setattr__ if spec.frozen else setattr
    for name, default, factory, init in spec.init:
        if init and name in given:
            put(self, name, given[name])
        elif factory is not _MISSING:
            put(self, name, factory())
        elif default is not _MISSING:
            put(self, name, default)
    if spec.post_init:
        self.__post_init__()


def _counted(spec) -> str:
    """How many positional arguments __init__ takes, self included, as Python says it."""
    most, least = len(spec.positional) + 1, len(spec.required) + 1
    if least < most:
        return f"from {least} to {most} positional arguments"
    return f"{most} positional argument{'s' if most > 1 else ''}"


@reprlib.recursive_repr()
def _repr(self) -> str:
    shown = type(self)._record.shown
    return f"{type(self).__qualname__}({', '.join(f'{name}={getattr(self, name)!r}' for name in shown)})"


def _eq(self, other):
    if other.__class__ is self.__class__:
        compared = type(self)._record.compared
        return tuple(getattr(self, n) for n in compared) == tuple(getattr(other, n) for n in compared)
    return NotImplemented


def _hash(self) -> int:
    return hash(tuple(getattr(self, n) for n in type(self)._record.hashed))


def _setattr(self, name, value):
    spec = type(self)._record
    if type(self) is spec.cls or name in spec.names:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
    super(spec.cls, self).__setattr__(name, value)


def _delattr(self, name):
    spec = type(self)._record
    if type(self) is spec.cls or name in spec.names:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
    super(spec.cls, self).__delattr__(name)
