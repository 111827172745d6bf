"""Mutation operators for the habits students bring from other code: an axis not added
before broadcasting, ``reshape`` or ``view`` where a transpose belongs, dimensions counted
from the front as in a tutorial's 4-D tensor, the additive ``-inf`` mask of
``nn.Transformer`` for a bool mask, the diagonal of ``triu`` one off, a buffer made with
``np.zeros`` (float64), a dot product written as a sum of products over another axis,
positions made as floats, a clip one off, a signed offset taken as a distance, a statement
indented into the loop above it, an input scaled in place through a slice.

See :mod:`instructor.mutation.operators` for how an operator works. Each operator here comes
from a mistake of issue 45's list (axis, keepdim, transpose, scale, off-by-one, mask
polarity and value, dtype, in place, heads split in the wrong order) written the way a
student who learnt tensors elsewhere writes it; the engine runs them last, so that the keys
of the mutants made before them stay as they were.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from instructor.mutation.mistakes import Mistake
from instructor.mutation.operators import (
    DIM_FIRST,
    DIM_SECOND,
    REDUCTIONS,
    Change,
    Operator,
    _int,
    _method,
    _module_call,
    _params,
    _plus,
)
from instructor.mutation.source import Edit, Solution

__all__ = ["HABITS"]

TRANSPOSING = {"transpose", "permute", "t"}
"""Methods after which a tensor is not contiguous (``.view`` then fails)."""
VECTOR_NAMES = ("q", "x", "k", "v")
"""Parameters the course names in lower case hold one vector (``q: shape (d,)``)."""


def _returns(solution: Solution) -> list[ast.Return]:
    return [
        node
        for node in solution.student_nodes()
        if isinstance(node, ast.Return) and node.value is not None
        and not isinstance(node.value, ast.Tuple)
    ]  # fmt: skip


def axes_not_added(solution: Solution) -> Iterator[Change]:
    """An axis not added before broadcasting: ``x.unsqueeze(-1)`` or ``x[:, None]`` written
    as ``x`` (a (n,) broadcast as a (1, n) row, not a (n, 1) column)."""
    for node in solution.student_nodes():
        if _method(node) == "unsqueeze" and _module_call(node) is None:
            yield Mistake.KEEPDIM, solution.replace(node, solution.operand(node.func.value))
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
            parts = node.slice.elts
            nones = [p for p in parts if isinstance(p, ast.Constant) and p.value is None]
            plain = all(
                (isinstance(p, ast.Slice) and p.lower is p.upper is p.step is None)
                or (isinstance(p, ast.Constant) and p.value in (None, Ellipsis))
                for p in parts
            )
            leading = isinstance(parts[0], ast.Constant) and parts[0].value is None
            if nones and plain and not leading:  # x[None, :] is what broadcasting does anyway
                yield Mistake.KEEPDIM, solution.replace(node, solution.operand(node.value))


def reduced_then_unsqueezed(solution: Solution) -> Iterator[Change]:
    """``keepdim=True`` dropped and the axis added back at the end (``.sum(dim)[..., None]``):
    right only when the reduced axis is the last one."""
    for node in solution.student_nodes():
        if not (isinstance(node, ast.Call) and _method(node) in REDUCTIONS):
            continue
        kept = [k for k in node.keywords if k.arg in {"keepdim", "keepdims"}]
        dims = [k.value for k in node.keywords if k.arg in {"dim", "axis"}] + node.args[:1]
        if not kept or not dims or _int(dims[0]) == -1:
            continue
        text = solution.segment(node)
        piece = solution.segment(kept[0])
        for joined in (f", {piece}", f",{piece}"):
            if joined in text:
                added = "[..., None]" if solution.uses_numpy else ".unsqueeze(-1)"
                yield Mistake.KEEPDIM, solution.replace(node, text.replace(joined, "", 1) + added)
                break


def front_dims(solution: Solution) -> Iterator[Change]:
    """A dimension counted from the front, as for the tutorials' (batch, heads, n, d) or
    (batch, n, d) tensors: ``transpose(1, 2)`` for ``transpose(-3, -2)``."""
    for node in solution.student_nodes():
        if not isinstance(node, ast.Call):
            continue
        method, function = _method(node), _module_call(node)
        targets = [k.value for k in node.keywords if k.arg in {"dim", "axis"}]
        if function in DIM_SECOND and len(node.args) > 1:
            targets.append(node.args[1])
        elif function is None and method in DIM_FIRST and node.args:
            targets.append(node.args[0])
        elif function is None and method == "transpose" and len(node.args) == 2:
            pair = [_int(a) for a in node.args]
            if all(v is not None and v < 0 for v in pair):
                for rank in (3, 4):
                    if all(v + rank >= 0 for v in pair):  # type: ignore[operator]
                        new = ", ".join(str(v + rank) for v in pair)  # type: ignore[operator]
                        start, _ = solution.span(node.args[0])
                        _, end = solution.span(node.args[1])
                        yield Mistake.AXIS, Edit(start, end, new)
            continue
        for target in targets:
            value = _int(target)
            if value is not None and value < 0:
                for rank in (3, 4):
                    if value + rank >= 0:
                        yield Mistake.AXIS, solution.replace(target, str(value + rank))


def transposed_by_reshape(solution: Solution) -> Iterator[Change]:
    """A transpose written as a reshape to the transposed shape (the sizes right, the
    entries in the wrong places), and ``.view`` after a transpose (which torch refuses)."""
    for node in solution.student_nodes():
        if isinstance(node, ast.Attribute) and node.attr in {"T", "mT"}:
            receiver = solution.operand(node.value)
            yield (
                Mistake.RESHAPE_ORDER,
                solution.replace(node, f"{receiver}.reshape({receiver}.{node.attr}.shape)"),
            )
        if _method(node) in {"transpose", "t"} and _module_call(node) is None:
            receiver = solution.operand(node.func.value)
            new = f"{receiver}.reshape({solution.segment(node)}.shape)"
            yield Mistake.RESHAPE_ORDER, solution.replace(node, new)
        if (
            _method(node) == "reshape"
            and not solution.uses_numpy
            and isinstance(node.func.value, ast.Call)
            and _method(node.func.value) in TRANSPOSING
        ):
            yield (
                Mistake.RESHAPE_ORDER,
                solution.replace(node.func, f"{solution.segment(node.func.value)}.view"),
            )


def additive_masks(solution: Solution) -> Iterator[Change]:
    """A bool mask returned as ``nn.Transformer``'s additive float mask (0 where allowed,
    ``-inf`` or -1e9 where blocked), as the NumPy array it was built as, or with a leading
    batch axis (the tutorials' (1, n, n))."""
    if not solution.name.endswith("mask") or solution.uses_numpy:
        return
    for node in _returns(solution):
        value = solution.operand(node.value)
        additive = f'torch.zeros({value}.shape).masked_fill(~{value}, float("-inf"))'
        yield Mistake.DTYPE, solution.replace(node.value, additive)
        yield Mistake.DTYPE, solution.replace(node.value, additive.replace('float("-inf")', "-1e9"))
        yield Mistake.DTYPE, solution.replace(node.value, f"{value}.numpy()")
        yield Mistake.KEEPDIM, solution.replace(node.value, f"{value}.unsqueeze(0)")


def triangle_offsets(solution: Solution) -> Iterator[Change]:
    """The other triangle with its diagonal one off: ``triu(1)`` (the blocked future, True
    where a query may not look) or ``triu(-1)`` for ``tril()``."""
    for node in solution.student_nodes():
        name = _method(node)
        if name in {"tril", "triu"} and not node.args and not node.keywords:
            other = "triu" if name == "tril" else "tril"
            receiver = solution.segment(node.func.value)
            for offset in (1, -1):
                yield Mistake.MASK_POLARITY, solution.replace(node, f"{receiver}.{other}({offset})")


def float_positions(solution: Solution) -> Iterator[Change]:
    """Positions made as floats (``torch.arange(n, dtype=torch.float32)``), as for an
    encoding, where the result is an index table (a long tensor); in a mask the floats
    compare as the integers do."""
    function = solution.functions()[-1]
    returns = (ast.get_docstring(function) or "").split("Returns:")[-1].split("Raises:")[0]
    if "long" not in returns:
        return
    for node in solution.student_nodes():
        if (
            _module_call(node) == "arange"
            and not solution.uses_numpy
            and not any(k.arg == "dtype" for k in node.keywords)
        ):
            text = solution.segment(node)
            yield Mistake.DTYPE, solution.replace(node, text[:-1] + ", dtype=torch.float32)")


def clip_bounds(solution: Solution) -> Iterator[Change]:
    """A bound of ``clamp`` or ``clip`` one off (a table of 2r - 1 or 2r + 3 entries)."""
    for node in solution.student_nodes():
        if not isinstance(node, ast.Call):
            continue
        if _module_call(node) in {"clamp", "clip"}:
            bounds = node.args[1:]
        elif _method(node) in {"clamp", "clip"}:
            bounds = node.args
        else:
            continue
        for bound in bounds:
            for delta in (-1, 1):
                yield Mistake.OFF_BY_ONE, solution.replace(bound, _plus(solution, bound, delta))


def distances(solution: Solution) -> Iterator[Change]:
    """A signed offset ``j - i`` (a table's difference of positions) taken as the distance
    ``|j - i|``: the keys before and after a query get the same entry."""
    absolute = {id(node.func.value) for node in solution.student_nodes() if _method(node) == "abs"}
    for node in solution.student_nodes():
        if (
            isinstance(node, ast.BinOp)
            and isinstance(node.op, ast.Sub)
            and id(node) not in absolute
            and all("None" in solution.segment(side) for side in (node.left, node.right))
        ):
            yield Mistake.FORMULA, solution.replace(node, f"({solution.segment(node)}).abs()")


def columns_looped(solution: Solution) -> Iterator[Change]:
    """A loop over a matrix's columns for its rows (``for key in K.T``)."""
    params = _params(solution)
    for node in solution.student_nodes():
        if not isinstance(node, ast.For):
            continue
        loop = node.iter
        if isinstance(loop, ast.Call) and isinstance(loop.func, ast.Name) and loop.args:
            loop = loop.args[0]  # enumerate(K)
        if isinstance(loop, ast.Name) and loop.id in params:
            yield Mistake.TRANSPOSE, solution.replace(loop, f"{loop.id}.T")


def dot_as_sums(solution: Solution) -> Iterator[Change]:
    """``M @ v`` (a matrix and a vector: the course writes vectors in lower case) written as
    a sum of products over another axis, a mean, with the axis kept, or with the vector
    made a column (``v[:, None]``)."""
    params = _params(solution)
    word = "axis" if solution.uses_numpy else "dim"
    kept = "keepdims" if solution.uses_numpy else "keepdim"
    for node in solution.student_nodes():
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult)):
            continue
        left, right = node.left, node.right
        if not (isinstance(left, ast.Name) and isinstance(right, ast.Name)):
            continue
        if not (left.id in params and right.id in VECTOR_NAMES and left.id.isupper()):
            continue
        product = f"({left.id} * {right.id})"
        for mistake, tail in (
            (Mistake.AXIS, f".sum({word}=0)"),
            (Mistake.AXIS, ".sum()"),
            (Mistake.SCALE, f".mean({word}=-1)"),
            (Mistake.KEEPDIM, f".sum({word}=-1, {kept}=True)"),
        ):
            yield mistake, solution.replace(node, product + tail)
        yield Mistake.KEEPDIM, solution.replace(right, f"{right.id}[:, None]")
        column = f"({left.id} * {right.id}[:, None]).sum({word}=0)"  # (d,) broadcast as (d, 1)
        yield Mistake.KEEPDIM, solution.replace(node, column)


def scales_added(solution: Solution) -> Iterator[Change]:
    """Scores the text leaves unscaled divided by d, by the square root of the number of
    keys, or normalised to the cosine (:func:`slips.scale_added` adds 1/sqrt(d))."""
    if solution.name != "dot_scores" and "no 1/sqrt(d) scaling" not in solution.text:
        return
    norm = "np.linalg.norm" if solution.uses_numpy else "torch.linalg.norm"
    word = "axis" if solution.uses_numpy else "dim"
    for node in solution.student_nodes():
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            left, right = solution.operand(node.left), solution.operand(node.right)
            text = solution.segment(node)
            yield Mistake.SCALE, solution.replace(node, f"({text} / {left}.shape[-1])")
            yield Mistake.SCALE, solution.replace(node, f"({text} / {left}.shape[0] ** 0.5)")
            cosine = f"({text} / ({norm}({left}, {word}=-1) * {norm}({right})))"
            yield Mistake.SCALE, solution.replace(node, cosine)


def zeros_buffers(solution: Solution) -> Iterator[Change]:
    """The result copied into a buffer made by ``np.zeros`` without a dtype (float64)."""
    if not solution.uses_numpy:
        return
    for node in _returns(solution):
        indent = " " * node.col_offset
        value = solution.segment(node.value)
        new = f"out = np.zeros(np.shape({value}))\n{indent}out[...] = {value}\n{indent}return out"
        yield Mistake.DTYPE, solution.replace(node, new)


def into_the_loop(solution: Solution) -> Iterator[Change]:
    """The statement after a loop indented into it: the function returns (or raises) in
    the loop's first step."""
    for node in [*solution.functions(), *solution.student_nodes()]:
        for body in (getattr(node, "body", None), getattr(node, "orelse", None)):
            if not isinstance(body, list):
                continue
            for loop, after in zip(body, body[1:], strict=False):
                if isinstance(loop, ast.For) and isinstance(after, ast.Return | ast.Raise):
                    last = loop.body[-1]
                    indent = " " * last.col_offset
                    start, _ = solution.span(last)
                    _, end = solution.span(after)
                    moved = solution.segment(after)
                    text = solution.text[start : solution.span(last)[1]]
                    yield Mistake.FORMULA, Edit(start, end, f"{text}\n{indent}{moved}")


def slices_in_place(solution: Solution) -> Iterator[Change]:
    """A slice of an input combined in place (``Q[..., a:b, :].div_(s)`` for
    ``Q[..., a:b, :] / s``): the input changes through its view."""
    params = _params(solution)
    ops = {ast.Add: "add_", ast.Sub: "sub_", ast.Mult: "mul_", ast.Div: "div_"}
    for node in solution.student_nodes():
        if isinstance(node, ast.BinOp) and type(node.op) in ops and not solution.uses_numpy:
            left = node.left
            if (
                isinstance(left, ast.Subscript)
                and isinstance(left.value, ast.Name)
                and left.value.id in params
                and isinstance(left.slice, ast.Tuple)
                and any(isinstance(p, ast.Slice) for p in left.slice.elts)
            ):
                new = (
                    f"{solution.segment(left)}.{ops[type(node.op)]}({solution.segment(node.right)})"
                )
                yield Mistake.IN_PLACE, solution.replace(node, new)


def close_enough(solution: Solution) -> Iterator[Change]:
    """``np.allclose(a, b)`` as ``np.isclose(a, b).any()`` (one entry close is enough) or
    as ``np.isclose(a, b)`` in an ``if`` (an array's truth value, which NumPy refuses)."""
    for node in solution.student_nodes():
        if _module_call(node) == "allclose" and len(node.args) == 2:
            close = f"np.isclose({', '.join(solution.segment(a) for a in node.args)})"
            yield Mistake.FORMULA, solution.replace(node, f"{close}.any()")
            yield Mistake.FORMULA, solution.replace(node, close)


def column_major(solution: Solution) -> Iterator[Change]:
    """The last two dimensions flattened in column-major order (``x.mT.flatten(-2)``):
    pixels numbered down the columns, sines and cosines concatenated, not interleaved."""
    for node in solution.student_nodes():
        if (
            _method(node) == "flatten"
            and _module_call(node) is None
            and len(node.args) == 1
            and _int(node.args[0]) == -2
        ):
            receiver = solution.operand(node.func.value)
            yield Mistake.RESHAPE_ORDER, solution.replace(node.func, f"{receiver}.mT.flatten")


def _is_layer(solution: Solution, node: ast.Call) -> bool:
    """``self.name(...)``: a call of a layer of the module."""
    return isinstance(node.func, ast.Attribute) and solution.segment(node.func.value) == "self"


def integer_masks(solution: Solution) -> Iterator[Change]:
    """A mask made as 0/1 integers (``torch.long``), as ``torch.tril(torch.ones(n, n)).long()``
    gives, not ``bool``."""
    for node in solution.student_nodes():
        if isinstance(node, ast.Attribute) and node.attr == "bool" and not solution.uses_numpy:
            if isinstance(node.value, ast.Name) and node.value.id == "torch":
                yield Mistake.DTYPE, solution.replace(node, "torch.long")


def modules(solution: Solution) -> Iterator[Change]:
    """The slips of a module: ``super().__init__()`` left out, dropout given the keep
    probability (Keras 1, TensorFlow 1), ``F.dropout`` without ``training=self.training``
    (active in evaluation mode), the activation applied to the output too, a layer applied
    to the transposed input (the columns of notebook 03)."""
    params = _params(solution)
    for node in solution.student_nodes():
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and solution.segment(node.value) == "super().__init__()"
        ):
            yield Mistake.FORMULA, solution.replace(node, "pass")
        if _method(node) == "Dropout" and len(node.args) == 1:
            arg = node.args[0]
            yield Mistake.FORMULA, solution.replace(arg, f"1 - {solution.operand(arg)}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and solution.segment(node.func.value) == "self"
        ):
            layer = node.func.attr
            if "dropout" in layer and len(node.args) == 1:
                new = f"F.dropout({solution.segment(node.args[0])}, self.{layer}.p)"
                yield Mistake.FORMULA, solution.replace(node, new)
            if "linear" in layer and len(node.args) == 1:
                arg = node.args[0]
                if isinstance(arg, ast.Name) and arg.id in params:
                    yield Mistake.TRANSPOSE, solution.replace(arg, f"{arg.id}.mT")
        if (
            isinstance(node, ast.Call)
            and _is_layer(solution, node)
            and len(node.args) == 1
            and isinstance(node.args[0], ast.Call)
            and _is_layer(solution, node.args[0])
        ):  # self.a(self.b(x)) -> self.b(self.a(x)): dropout after the layer, not before
            outer, inner = solution.segment(node.func), solution.segment(node.args[0].func)
            x = solution.segment(node.args[0].args[0]) if node.args[0].args else ""
            yield Mistake.FORMULA, solution.replace(node, f"{inner}({outer}({x}))")
    for node in _returns(solution):
        if isinstance(node.value, ast.Call) and "linear" in solution.segment(node.value.func):
            yield (
                Mistake.FORMULA,
                solution.replace(node.value, f"torch.relu({solution.segment(node.value)})"),
            )


HABITS: tuple[Operator, ...] = (
    axes_not_added, reduced_then_unsqueezed, front_dims, transposed_by_reshape,
    additive_masks, triangle_offsets, float_positions, clip_bounds, distances,
    columns_looped, dot_as_sums, scales_added, zeros_buffers, into_the_loop, slices_in_place,
    close_enough, column_major, modules, integer_masks,
)  # fmt: skip
"""The operators of habits, run after every other."""
