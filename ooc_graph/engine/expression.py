"""The per-arc functions of the general edge operator (:meth:`Engine.edge_map`).

A function is a small expression over ``src`` (the source's value), ``dst`` (the destination's
value), ``w`` (the arc's weight, 1 on an unweighted graph) and, where the operator is given a
second per-vertex array ``y``, ``y_src`` and ``y_dst`` (its values at the two ends), such as
``"src * w"``, ``"min(src, dst)"`` or ``"where(y_src + w == y_dst, src, 0)"``, or a name from
:data:`LIBRARY`. It is parsed once with Python's :mod:`ast`
into a small tree of tuples — the only form the kernels see — that allows arithmetic
(``+ - * / **``, unary minus), comparisons, ``and``/``or``/``not``, numbers, ``inf``, and the
calls ``min``, ``max``, ``abs`` and ``where(condition, a, b)``. Anything else (attributes,
subscripts, other names or calls) is refused with a :class:`~ooc_graph.errors.ParameterError`:
nothing of the text is ever executed. The CPU evaluates the tree with NumPy
(:func:`ooc_graph.kernels.cpu.evaluate`); the GPU compiles it into a kernel
(:mod:`ooc_graph.kernels.edge_codegen`), once per expression and dtypes on each device.

Tree nodes: ``("var", name)``, ``("const", float)``, ``("neg", a)``, ``("not", a)``,
``("bin", op, a, b)`` with op in ``+ - * / **``, ``("cmp", op, a, b)`` with op in
``< <= > >= == !=``, ``("and", a, b)``, ``("or", a, b)``, ``("call", name, a, ...)``.
"""

from __future__ import annotations

import ast
from functools import lru_cache

from ooc_graph._records import record
from ooc_graph.errors import ParameterError

VARIABLES = ("src", "dst", "w", "y_src", "y_dst")
CALLS = {"min": 2, "max": 2, "abs": 1, "where": 3}
MONOIDS = ("sum", "min", "max", "or", "most_frequent")

# Named functions: what they stand for.
LIBRARY = {
    "copy_src": "src",        # the source's value (label propagation, reachability)
    "copy_dst": "dst",
    "mul_w": "src * w",       # weighted sums (weighted PageRank, Katz)
    "plus_w": "src + w",      # path lengths (SSSP relaxations)
    "plus_one": "src + 1",    # hop counts (BFS)
    "one": "1",               # counting arcs (degrees)
    "weight": "w",
    "min_src_dst": "min(src, dst)",
}

_BIN = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: "**"}
_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_MAX_NODES = 200


@record(frozen=True)
class Expression:
    """A parsed per-arc function: ``text`` as given, ``tree`` (nested tuples) and the
    variables it reads."""

    text: str
    tree: tuple

    @property
    def uses(self) -> frozenset:
        return variables(self.tree)

    @property
    def key(self) -> str:
        """A canonical form: equal for expressions that differ only in spacing."""
        return repr(self.tree)


def variables(tree) -> frozenset:
    """The variables an expression tree reads."""
    if tree[0] == "var":
        return frozenset([tree[1]])
    if tree[0] == "const":
        return frozenset()
    return frozenset().union(*(variables(t) for t in tree[1:] if isinstance(t, tuple)))


def compile_function(f) -> Expression:
    """An :class:`Expression` from an expression string, a :data:`LIBRARY` name, or an
    Expression (returned as it is)."""
    if isinstance(f, Expression):
        return f
    if not isinstance(f, str):
        raise ParameterError(f"an edge function must be an expression string or one of "
                             f"{', '.join(LIBRARY)} (got {type(f).__name__})")
    return _parse(LIBRARY.get(f.strip(), f))


@lru_cache(maxsize=256)
def _parse(text: str) -> Expression:
    try:
        body = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as err:
        raise ParameterError(f"edge function {text!r} is not an expression ({err.msg}); write one over "
                             f"src, dst and w, or name one of {', '.join(LIBRARY)}") from None
    count = [0]
    return Expression(text, _convert(body, text, count))


def _refuse(text: str, what: str) -> ParameterError:
    return ParameterError(f"edge function {text!r}: {what} is not allowed (valid: numbers, inf, "
                          f"{', '.join(VARIABLES)}, + - * / **, comparisons, and/or/not, "
                          f"{', '.join(f'{c}()' for c in CALLS)})")


def _convert(node, text, count) -> tuple:
    count[0] += 1
    if count[0] > _MAX_NODES:
        raise ParameterError(f"edge function {text!r} is too long (at most {_MAX_NODES} terms)")
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise _refuse(text, f"the constant {node.value!r}")
        return ("const", float(node.value))
    if isinstance(node, ast.Name):
        if node.id in VARIABLES:
            return ("var", node.id)
        if node.id == "inf":
            return ("const", float("inf"))
        raise _refuse(text, f"the name {node.id!r}")
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.USub):
            return ("neg", _convert(node.operand, text, count))
        if isinstance(node.op, ast.UAdd):
            return _convert(node.operand, text, count)
        if isinstance(node.op, ast.Not):
            return ("not", _convert(node.operand, text, count))
        raise _refuse(text, f"the operator {type(node.op).__name__}")
    if isinstance(node, ast.BinOp):
        op = _BIN.get(type(node.op))
        if op is None:
            raise _refuse(text, f"the operator {type(node.op).__name__}")
        return ("bin", op, _convert(node.left, text, count), _convert(node.right, text, count))
    if isinstance(node, ast.BoolOp):
        kind = "and" if isinstance(node.op, ast.And) else "or"
        values = [_convert(v, text, count) for v in node.values]
        tree = values[0]
        for v in values[1:]:
            tree = (kind, tree, v)
        return tree
    if isinstance(node, ast.Compare):
        parts, left = [], _convert(node.left, text, count)
        for op, right in zip(node.ops, node.comparators):
            name = _CMP.get(type(op))
            if name is None:
                raise _refuse(text, f"the comparison {type(op).__name__}")
            right = _convert(right, text, count)
            parts.append(("cmp", name, left, right))
            left = right
        tree = parts[0]
        for p in parts[1:]:  # a < b < c means (a < b) and (b < c)
            tree = ("and", tree, p)
        return tree
    if isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in CALLS or node.keywords:
            raise _refuse(text, f"the call {ast.unparse(node.func)}()")
        if len(node.args) != CALLS[name]:
            raise ParameterError(f"edge function {text!r}: {name}() takes {CALLS[name]} arguments "
                                 f"(got {len(node.args)})")
        return ("call", name) + tuple(_convert(a, text, count) for a in node.args)
    raise _refuse(text, type(node).__name__)
