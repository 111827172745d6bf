"""Mutation operators on the values and the inputs: dtypes, inputs changed in place or
returned as views, another input or layer used, a term of the formula changed.

See :mod:`instructor.mutation.operators` for how an operator works.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from instructor.mutation.mistakes import Mistake
from instructor.mutation.operators import (
    BIN_SWAP,
    IN_PLACE,
    IN_PLACE_OP,
    NP_OP,
    NUMPY_HAS_NOT,
    OP_TEXT,
    SWAPPED_FUNCTIONS,
    Change,
    Operator,
    _float_params,
    _method,
    _module_call,
    _params,
)
from instructor.mutation.source import Edit, Solution

__all__ = ["VALUES"]


def in_place(solution: Solution) -> Iterator[Change]:
    params = _params(solution)
    for node in solution.student_nodes():
        name = _method(node)
        if name in IN_PLACE and isinstance(node.func.value, ast.Name):
            if node.func.value.id in params:
                yield Mistake.IN_PLACE, solution.replace(node.func, f"{node.func.value.id}.{name}_")
        if isinstance(node, ast.BinOp) and type(node.op) in IN_PLACE_OP:
            sides = [(node.left, node.right)]
            if isinstance(node.op, ast.Add | ast.Mult):
                sides.append((node.right, node.left))
            for target, other in sides:
                if isinstance(target, ast.Name) and target.id in params:
                    if solution.uses_numpy:
                        new = f"{NP_OP[type(node.op)]}({target.id}, {solution.segment(other)}, "
                        new += f"out={target.id})"
                    else:
                        new = (
                            f"{target.id}.{IN_PLACE_OP[type(node.op)]}_({solution.segment(other)})"
                        )
                    yield Mistake.IN_PLACE, solution.replace(node, new)


def views(solution: Solution) -> Iterator[Change]:
    for node in solution.student_nodes():
        if _method(node) in {"copy", "clone", "contiguous"} and not node.args:
            yield Mistake.VIEW, solution.replace(node, solution.segment(node.func.value))


def other_inputs(solution: Solution) -> Iterator[Change]:
    """Another input used in an input's place (K for V), another layer (``self.norm2`` for
    ``self.norm1``), a layer skipped, ``np.allclose`` taken as exact equality."""
    params = _params(solution, optional=False)  # a mask that is None is no one's mistake
    for node in solution.student_nodes():
        if isinstance(node, ast.Name) and node.id in params and isinstance(node.ctx, ast.Load):
            for other in params:
                if other != node.id:
                    yield Mistake.ARGS_SWAPPED, solution.replace(node, other)
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and isinstance(node.ctx, ast.Load)
        ):
            family = node.attr.rstrip("0123456789") if node.attr[-1].isdigit() else None
            siblings = {
                n.attr for n in ast.walk(solution.tree)
                if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                and n.value.id == "self" and n.attr != node.attr
                and (n.attr.rstrip("0123456789") == family if family else
                     n.attr[:2] == node.attr[:2] == "W_")
            }  # fmt: skip
            for sibling in sorted(siblings):
                yield Mistake.ARGS_SWAPPED, solution.replace(node, f"self.{sibling}")
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "self"
            and len(node.args) == 1
        ):
            yield Mistake.FORMULA, solution.replace(node, solution.segment(node.args[0]))
        if _module_call(node) == "allclose":
            yield Mistake.COMPARISON, solution.replace(node.func, "np.array_equal")
        if isinstance(node, ast.Call):  # axis=axis -> the last or the first axis, whatever
            for keyword in node.keywords:
                if keyword.arg in {"dim", "axis"} and isinstance(keyword.value, ast.Name):
                    for fixed in ("-1", "0"):
                        yield Mistake.AXIS, solution.replace(keyword.value, fixed)


def dtypes(solution: Solution) -> Iterator[Change]:
    functions = solution.functions()
    floats = _float_params(solution)
    if functions and floats:
        function = functions[-1]  # the function, or the class's forward
        first = next(s for s in function.body if solution.is_student(s))
        for kind in ("float64", "float32"):
            casts = []
            for p in floats:
                if p not in {a.arg for a in function.args.args}:
                    continue
                cast = f"{p}.astype(np.{kind})" if solution.uses_numpy else (
                    f"{p}.{'double' if kind == 'float64' else 'float'}()")  # fmt: skip
                optional = function.args.args and "None" in ast.unparse(
                    next(a for a in function.args.args if a.arg == p).annotation or ast.Constant(0)
                )
                casts.append(f"{cast} if {p} is not None else None" if optional else cast)
            if casts:
                names = [p for p in floats if p in {a.arg for a in function.args.args}]
                statement = f"{', '.join(names)} = {', '.join(casts)}"
                yield Mistake.DTYPE, solution.insert_before(first, statement)
    for node in solution.student_nodes():
        if not isinstance(node, ast.Call):
            continue
        name = _method(node) or _module_call(node)
        for keyword in node.keywords:
            if keyword.arg == "dtype" and name != "to":
                text = solution.segment(node)
                piece = solution.segment(keyword)
                for joined in (f", {piece}", piece):
                    if joined in text:
                        yield Mistake.DTYPE, solution.replace(node, text.replace(joined, "", 1))
                        break
                value = solution.segment(keyword.value)
                if value.endswith(".dtype"):
                    lib = "np" if solution.uses_numpy else "torch"
                    yield Mistake.DTYPE, solution.replace(keyword.value, f"{lib}.float32")
        if name in {"new_zeros", "new_empty", "new_ones", "new_full"}:
            args = ", ".join(solution.segment(a) for a in node.args)
            yield Mistake.DTYPE, solution.replace(node, f"torch.{name[4:]}({args})")
        if name in {"zeros_like", "ones_like", "empty_like"} and node.args:
            base = name.removesuffix("_like")
            lib = "np" if solution.uses_numpy else "torch"
            yield (
                Mistake.DTYPE,
                solution.replace(node, f"{lib}.{base}({solution.operand(node.args[0])}.shape)"),
            )
        if name == "to" and _module_call(node) is None:
            yield Mistake.DTYPE, solution.replace(node, solution.segment(node.func.value))
    for node in solution.student_nodes():
        if isinstance(node, ast.Attribute) and node.attr in {"float32", "float64"}:
            other = "float64" if node.attr == "float32" else "float32"
            yield Mistake.DTYPE, solution.replace(node, f"{solution.segment(node.value)}.{other}")


def formula(solution: Solution) -> Iterator[Change]:
    """A term dropped, an operator or a function swapped, a constant changed."""
    for node in solution.student_nodes():
        if isinstance(node, ast.BinOp) and type(node.op) in BIN_SWAP:
            start, _ = solution.span(node.left)
            _, end = solution.span(node.right)
            gap = solution.text[solution.span(node.left)[1] : solution.span(node.right)[0]]
            yield Mistake.FORMULA, Edit(
                start, end,
                solution.segment(node.left) + gap.replace(OP_TEXT[type(node.op)],
                                                          BIN_SWAP[type(node.op)], 1)
                + solution.segment(node.right),
            )  # fmt: skip
            if isinstance(node.op, ast.Add):  # a term dropped: the residual, a bias, eps
                for kept, dropped in ((node.left, node.right), (node.right, node.left)):
                    # Dropping the 1 of "1 + (L - W) // H" is an off-by-one.
                    counted = isinstance(dropped, ast.Constant) and dropped.value == 1
                    mistake = Mistake.OFF_BY_ONE if counted else Mistake.FORMULA
                    yield mistake, solution.replace(node, solution.operand(kept))
        name = _module_call(node) or _method(node)
        if name in SWAPPED_FUNCTIONS and not (
            solution.uses_numpy and SWAPPED_FUNCTIONS[name] in NUMPY_HAS_NOT
        ):
            func = solution.segment(node.func)
            new = func[: -len(name)] + SWAPPED_FUNCTIONS[name]
            yield Mistake.FORMULA, solution.replace(node.func, new)
        if isinstance(node, ast.Constant) and type(node.value) in {int, float}:
            if abs(node.value) >= 100:  # 10000 -> 1000: a constant copied wrong
                yield (
                    Mistake.FORMULA,
                    solution.replace(node, repr(type(node.value)(node.value / 10))),
                )


VALUES: tuple[Operator, ...] = (dtypes, in_place, views, other_inputs, formula)
"""The operators on values and inputs."""
