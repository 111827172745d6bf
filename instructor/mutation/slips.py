"""Mutation operators for the slips of a hand that knows the formula: ``*`` for ``@``, ``|``
for ``&``, ``/`` for ``//``, an ``abs`` forgotten, positions counted from 1, a scale the text
rules out added, an input changed in place by a method's in-place twin.

See :mod:`instructor.mutation.operators` for how an operator works. These are the mistakes
of the course's grading cases and of issue 45's list that the structural operators do not
make: each of them turns up in students' answers to the course's small functions (the masks,
the reshapes, the scores).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from instructor.mutation.mistakes import Mistake
from instructor.mutation.operators import Change, Operator, _method, _module_call, _params
from instructor.mutation.source import Edit, Solution

__all__ = ["SLIPS"]

IN_PLACE_TWIN = {"transpose", "unsqueeze", "squeeze", "t", "sqrt", "pow", "index_add",
                 "scatter_reduce", "exp", "relu", "tanh", "sigmoid", "abs", "clamp"}  # fmt: skip
"""Methods of an input whose in-place twin (``X.transpose_``) a student writes to save a copy."""
FUNCTION_TWIN = {"exp", "relu", "tanh", "sigmoid", "sqrt", "abs"}
"""``torch.name(x)`` with an in-place twin ``torch.name_(x)``."""
INPLACE_KEYWORD = {"elu", "relu", "gelu", "leaky_relu"}
"""``F.name(x)`` with ``inplace=True``."""


def products(solution: Solution) -> Iterator[Change]:
    """The elementwise product for the matrix product, and the reverse."""
    for node in solution.student_nodes():
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult | ast.Mult):
            start, _ = solution.span(node.left)
            _, end = solution.span(node.right)
            gap = solution.text[solution.span(node.left)[1] : solution.span(node.right)[0]]
            old, new = ("@", "*") if isinstance(node.op, ast.MatMult) else ("*", "@")
            left, right = solution.segment(node.left), solution.segment(node.right)
            if isinstance(node.op, ast.Mult) and any(
                isinstance(side, ast.Constant) for side in (node.left, node.right)
            ):
                continue  # 2 * x: no matrix in sight
            yield Mistake.ELEMENTWISE, Edit(start, end, left + gap.replace(old, new, 1) + right)


def logic(solution: Solution) -> Iterator[Change]:
    """``|`` and ``&`` swapped (a union of masks for an intersection); ``or`` and ``and``
    swapped in an error's condition (the error raised for fewer inputs)."""
    swap = {ast.BitOr: ("|", "&"), ast.BitAnd: ("&", "|")}
    raising = {
        id(node.test) for node in solution.student_nodes()
        if isinstance(node, ast.If) and any(isinstance(s, ast.Raise) for s in node.body)
    }  # fmt: skip
    for node in solution.student_nodes():
        if isinstance(node, ast.BinOp) and type(node.op) in swap:
            old, new = swap[type(node.op)]
            start, _ = solution.span(node.left)
            _, end = solution.span(node.right)
            gap = solution.text[solution.span(node.left)[1] : solution.span(node.right)[0]]
            text = solution.segment(node.left) + gap.replace(old, new, 1)
            mistake = Mistake.ERROR_DROPPED if _inside(node, raising, solution) else Mistake.LOGIC
            yield mistake, Edit(start, end, text + solution.segment(node.right))
        if isinstance(node, ast.BoolOp) and id(node) in raising and len(node.values) == 2:
            word = " and " if isinstance(node.op, ast.Or) else " or "
            joined = word.join(solution.segment(v) for v in node.values)
            yield Mistake.ERROR_DROPPED, solution.replace(node, joined)


def _inside(node: ast.AST, tests: set[int], solution: Solution) -> bool:
    """Whether ``node`` lies in the condition of an ``if`` that raises, or computes what one
    tests (``wrong = lengths[(lengths < 1) | (lengths > n)]``)."""
    for statement in solution.student_nodes():
        if isinstance(statement, ast.If) and id(statement.test) in tests:
            if any(inner is node for inner in ast.walk(statement.test)):
                return True
        if isinstance(statement, ast.Assign) and any(
            inner is node for inner in ast.walk(statement)
        ):
            name = statement.targets[0]
            if isinstance(name, ast.Name):
                return any(
                    isinstance(inner, ast.Name) and inner.id == name.id
                    for test in solution.student_nodes()
                    if isinstance(test, ast.If) and id(test.test) in tests
                    for inner in ast.walk(test.test)
                )
    return False


def counting(solution: Solution) -> Iterator[Change]:
    """``/`` for ``//`` (a float where an index or a size belongs), ``abs`` forgotten (a window
    on one side only), positions counted from 1 (``arange(1, n + 1)``)."""
    for node in solution.student_nodes():
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.FloorDiv):
            gap = solution.text[solution.span(node.left)[1] : solution.span(node.right)[0]]
            start, _ = solution.span(node.left)
            _, end = solution.span(node.right)
            text = solution.segment(node.left) + gap.replace("//", "/", 1)
            yield Mistake.INT_DIVISION, Edit(start, end, text + solution.segment(node.right))
        if _method(node) == "abs" and not node.args and _module_call(node) is None:
            yield Mistake.FORMULA, solution.replace(node, solution.operand(node.func.value))
        if _module_call(node) == "arange" and len(node.args) == 1 and not node.keywords:
            n = solution.segment(node.args[0])
            yield Mistake.OFF_BY_ONE, solution.replace(node.args[0], f"1, {n} + 1")


def scale_added(solution: Solution) -> Iterator[Change]:
    """A 1/sqrt(d) the text rules out, added to the scores of a function without one
    (``dot_scores``, linear attention: "no scaling here")."""
    scaled = any(
        isinstance(node, ast.Attribute) and node.attr == "sqrt" for node in solution.student_nodes()
    )
    if scaled or not any(word in solution.name for word in ("scores", "attention")):
        return
    for node in solution.student_nodes():
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            d = f"{solution.operand(node.left)}.shape[-1]"
            yield Mistake.SCALE, solution.replace(node, f"({solution.segment(node)} / {d} ** 0.5)")


def in_place_twins(solution: Solution) -> Iterator[Change]:
    """An input changed by a method's or a function's in-place twin: ``X.transpose_(...)``,
    ``torch.exp_(x)``, ``F.elu(Q, inplace=True)``, ``X.resize_(...)`` for ``X.reshape(...)``."""
    params = _params(solution)
    for node in solution.student_nodes():
        name = _method(node)
        if name is None or not isinstance(node, ast.Call):
            continue
        receiver = node.func.value
        if isinstance(receiver, ast.Name) and receiver.id in params:
            if name in IN_PLACE_TWIN:
                yield Mistake.IN_PLACE, solution.replace(node.func, f"{receiver.id}.{name}_")
            if name in {"reshape", "view"} and node.args and "-1" not in solution.segment(node):
                yield Mistake.IN_PLACE, solution.replace(node.func, f"{receiver.id}.resize_")
        first = node.args[0] if node.args else None
        if not (isinstance(first, ast.Name) and first.id in params and not solution.uses_numpy):
            continue
        function = _module_call(node)
        if function in FUNCTION_TWIN:
            yield Mistake.IN_PLACE, solution.replace(node.func, f"torch.{function}_")
        if function in INPLACE_KEYWORD and not node.keywords:
            yield (
                Mistake.IN_PLACE,
                solution.replace(node, f"{solution.segment(node)[:-1]}, inplace=True)"),
            )


def mask_dtypes(solution: Solution) -> Iterator[Change]:
    """A mask made as ``uint8`` (PyTorch's masks before 1.2) or as 0/1 floats, not ``bool``."""
    for node in solution.student_nodes():
        if isinstance(node, ast.Attribute) and node.attr == "bool" and not solution.uses_numpy:
            if isinstance(node.value, ast.Name) and node.value.id == "torch":
                for other in ("uint8", "float32"):
                    yield Mistake.DTYPE, solution.replace(node, f"torch.{other}")


def other_lists(solution: Solution) -> Iterator[Change]:
    """One list argument used for another (``len(tokens)`` for ``len(vocab)``)."""
    lists = [
        arg.arg
        for function in solution.functions()
        for arg in function.args.args
        if arg.annotation is not None and ast.unparse(arg.annotation).startswith("list[")
    ]
    for node in solution.student_nodes():
        if isinstance(node, ast.Name) and node.id in lists and isinstance(node.ctx, ast.Load):
            for other in lists:
                if other != node.id:
                    yield Mistake.ARGS_SWAPPED, solution.replace(node, other)


def in_place_views(solution: Solution) -> Iterator[Change]:
    """A named slice of an input (``x_even = x[..., 0::2]``) combined in place,
    ``x_even.mul_(cos)`` for ``x_even * cos``: the input changes through its view."""
    params = _params(solution)
    views = {
        target.id
        for node in solution.student_nodes() if isinstance(node, ast.Assign)
        for target, value in _pairs(node)
        if isinstance(target, ast.Name) and _slices(value, params)
    }  # fmt: skip
    ops = {ast.Add: "add_", ast.Sub: "sub_", ast.Mult: "mul_", ast.Div: "div_"}
    for node in solution.student_nodes():
        if isinstance(node, ast.BinOp) and type(node.op) in ops and not solution.uses_numpy:
            left = node.left
            if isinstance(left, ast.Name) and left.id in views:
                new = (
                    f"{solution.operand(left)}.{ops[type(node.op)]}({solution.segment(node.right)})"
                )
                yield Mistake.IN_PLACE, solution.replace(node, new)


def _pairs(node: ast.Assign) -> list[tuple[ast.AST, ast.AST]]:
    target, value = node.targets[0], node.value
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
        return list(zip(target.elts, value.elts, strict=False))
    return [(target, value)]


def _slices(node: ast.AST, params: dict[str, ast.arg]) -> bool:
    """``P[...]`` with only slices, ``...`` and integers: a view of the input ``P``."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)):
        return False
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    return node.value.id in params and all(
        isinstance(p, ast.Slice) or (isinstance(p, ast.Constant) and p.value in (Ellipsis,))
        for p in parts
    )


def returned_dtype(solution: Solution) -> Iterator[Change]:
    """A result the docstring calls a bool (or long) tensor returned as 0/1 floats (or int32)."""
    function = solution.functions()[-1]
    doc = (ast.get_docstring(function) or "").split("Returns:")[-1].split("Raises:")[0]
    casts = [c for word, c in (("bool", ".float()"), ("long", ".int()")) if word in doc]
    for node in solution.student_nodes():
        if isinstance(node, ast.Return) and node.value is not None and not solution.uses_numpy:
            for cast in casts:
                yield (
                    Mistake.DTYPE,
                    solution.replace(node.value, solution.operand(node.value) + cast),
                )


SLIPS: tuple[Operator, ...] = (
    products, logic, counting, scale_added, in_place_twins, mask_dtypes, other_lists,
    in_place_views, returned_dtype,
)  # fmt: skip
"""The operators of slips."""
