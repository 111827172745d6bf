"""Mutation operators: the mistakes students make with tensors, as rewrites of a solution.

Each operator walks the solution's syntax tree (the student's lines only) and yields
``(Mistake, Edit)`` pairs: a change of the text that stands for one mistake. Operators are
deterministic (the tree is walked in the order of the text) and may yield a change that
leaves the program as it was; :mod:`instructor.mutation.engine` drops those and duplicates.
The operators come from the mistakes the grading cases (``tests/grading_cases/``) and the
checks' messages (``helpers/checks.py``) name, listed in issue 45.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from instructor.mutation.mistakes import Mistake
from instructor.mutation.source import Edit, Solution

__all__ = ["STRUCTURE", "Change"]

Change = tuple[Mistake, Edit]
Operator = Callable[[Solution], Iterator[Change]]

REDUCTIONS = {"sum", "mean", "max", "amax", "min", "amin", "any", "all", "cumsum", "std", "var"}
DIM_FIRST = REDUCTIONS | {"softmax", "unsqueeze", "squeeze", "flatten", "unfold", "unflatten",
                          "index_add", "scatter_reduce", "log_softmax", "roll"}  # fmt: skip
"""Methods whose first positional argument is a dimension (``x.sum(0)``)."""
DIM_SECOND = {"softmax", "cumsum", "stack", "cat", "log_softmax", "concatenate"}
"""Functions (``torch.softmax(x, 0)``) whose second positional argument is a dimension."""
IN_PLACE = {"masked_fill", "add", "sub", "mul", "div", "clamp", "exp", "relu", "tanh", "abs",
            "neg", "sigmoid", "fill_diagonal"}  # fmt: skip
SHAPED = {"reshape", "view", "permute", "expand", "new_zeros", "new_empty", "new_ones"}
MADE = {"zeros", "ones", "empty", "full", "eye", "arange", "tensor", "linspace", "randn"}
NOT_FLOAT = ("index", "length", "mask", "position", "token")
"""Parameters with these in their names hold integers or booleans: never cast to a float."""
SWAPPED_FUNCTIONS = {"sin": "cos", "cos": "sin", "tanh": "sigmoid", "relu": "gelu",
                     "elu": "relu", "exp": "expm1"}  # fmt: skip
NUMPY_HAS_NOT = {"sigmoid", "gelu", "relu", "elu"}
BIN_SWAP = {ast.Add: "-", ast.Sub: "+", ast.Mult: "/", ast.Div: "*"}
OP_TEXT = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
IN_PLACE_OP = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div"}
NP_OP = {ast.Add: "np.add", ast.Sub: "np.subtract", ast.Mult: "np.multiply", ast.Div: "np.divide"}


def _int(node: ast.AST) -> int | None:
    """The value of an integer literal (``-1`` included), else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int(node.operand)
        return None if inner is None else -inner
    return None


def _method(node: ast.AST) -> str | None:
    """``x.name(...)``'s name, or None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _module_call(node: ast.AST) -> str | None:
    """``torch.name(...)``, ``F.name(...)``, ``np.name(...)``, ``math.name(...)``: the name."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in {"torch", "F", "np", "math"}
    ):
        return node.func.attr
    return None


def _params(solution: Solution, optional: bool = True) -> dict[str, ast.arg]:
    """The array or tensor parameters of the function (or of ``forward``); those that may
    be None (``mask=None``) only where ``optional``."""
    found: dict[str, ast.arg] = {}
    for function in solution.functions():
        for arg in function.args.args:
            annotation = ast.unparse(arg.annotation) if arg.annotation else ""
            if "Tensor" in annotation or "ndarray" in annotation:
                if optional or "None" not in annotation:
                    found[arg.arg] = arg
    return found


def _float_params(solution: Solution) -> list[str]:
    return [p for p in _params(solution) if not any(word in p.lower() for word in NOT_FLOAT)]


def _plus(solution: Solution, node: ast.AST, delta: int) -> str:
    value = _int(node)
    if value is not None:
        return str(value + delta)
    sign = "+" if delta > 0 else "-"
    return f"{solution.operand(node)} {sign} {abs(delta)}"


def dims(solution: Solution) -> Iterator[Change]:
    """Another dimension; a reduction over all elements; dimensions counted from the front."""
    for node in solution.student_nodes():
        if not isinstance(node, ast.Call):
            continue
        targets = [k.value for k in node.keywords if k.arg in {"dim", "axis", "start_dim"}]
        method, function = _method(node), _module_call(node)
        if function in DIM_SECOND and len(node.args) > 1:
            targets.append(node.args[1])
        elif function is None and method in DIM_FIRST and node.args:
            targets.append(node.args[0])
        elif method == "transpose" and len(node.args) == 2:
            targets += node.args
        for target in targets:
            value = _int(target)
            if value is None:
                continue
            others = [value - 1, value + 1 if value + 1 < 0 or value >= 0 else 0]
            if value < 0 and value + 2 >= 0:
                others.append(value + 2)  # the 2-D position: right only without batch dims
            for other in dict.fromkeys(o for o in others if o != value):
                yield Mistake.AXIS, solution.replace(target, str(other))
        if method in REDUCTIONS and function is None and (node.keywords or node.args):
            receiver = solution.segment(node.func)
            yield Mistake.AXIS, solution.replace(node, f"{receiver}()")
    for node in solution.student_nodes():  # X.shape[-1] -> X.shape[1]: 2-D inputs only
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "shape"
            and (value := _int(node.slice)) is not None
            and value < 0
            and value + 2 >= 0
        ):
            yield Mistake.AXIS, solution.replace(node.slice, str(value + 2))


def keepdim(solution: Solution) -> Iterator[Change]:
    for node in solution.student_nodes():
        if isinstance(node, ast.Call):
            kept = [k for k in node.keywords if k.arg in {"keepdim", "keepdims"}]
            if kept:
                text = solution.segment(node)
                piece = solution.segment(kept[0])
                for joined in (f", {piece}", f",{piece}", piece):
                    if joined in text:
                        new = text.replace(joined, "", 1)
                        yield Mistake.KEEPDIM, solution.replace(node, new)
                        break


def transposes(solution: Solution) -> Iterator[Change]:
    t = ".T" if solution.uses_numpy else ".mT"
    for node in solution.student_nodes():
        if isinstance(node, ast.Attribute) and node.attr in {"T", "mT"}:
            yield Mistake.TRANSPOSE, solution.replace(node, solution.segment(node.value))
        if _method(node) in {"transpose", "t"}:
            receiver = solution.segment(node.func.value)
            yield Mistake.TRANSPOSE, solution.replace(node, receiver)
            if node.args and [_int(a) for a in node.args] == [-2, -1]:
                yield Mistake.TRANSPOSE, solution.replace(node, f"{receiver}.T")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            for side in (node.left, node.right):
                if not (isinstance(side, ast.Attribute) and side.attr in {"T", "mT"}):
                    yield Mistake.TRANSPOSE, solution.replace(side, solution.operand(side) + t)
        if isinstance(node, ast.Return) and node.value is not None:
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            for value in values:
                yield Mistake.TRANSPOSE, solution.replace(value, solution.operand(value) + t)
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
            elts = node.slice.elts
            for i in range(len(elts) - 1):  # x[:, None] <-> x[None, :], mask[target, source]
                a, b = solution.segment(elts[i]), solution.segment(elts[i + 1])
                kinds = {type(elts[i]), type(elts[i + 1])}
                if (
                    a != b
                    and ast.Starred not in kinds
                    and (ast.Slice not in kinds or "None" in (a, b))
                ):
                    start, _ = solution.span(elts[i])
                    _, end = solution.span(elts[i + 1])
                    gap = solution.text[solution.span(elts[i])[1] : solution.span(elts[i + 1])[0]]
                    yield Mistake.TRANSPOSE, Edit(start, end, b + gap + a)


def scale(solution: Solution) -> Iterator[Change]:
    params = list(_params(solution, optional=False))
    for node in solution.student_nodes():
        if _module_call(node) == "sqrt" and len(node.args) == 1:
            (arg,) = node.args
            inner = solution.segment(arg)
            yield Mistake.SCALE, solution.replace(node, "1")
            yield Mistake.SCALE, solution.replace(node, solution.operand(arg))
            yield Mistake.SCALE, solution.replace(node, f"(1 / {solution.segment(node)})")
            if isinstance(arg, ast.Subscript) and isinstance(arg.value, ast.Attribute):
                owner = solution.segment(arg.value.value)
                for other in params:
                    if other != owner and owner in params:
                        yield (
                            Mistake.SCALE,
                            solution.replace(
                                node,
                                solution.segment(node).replace(inner, inner.replace(owner, other)),
                            ),
                        )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            if "sqrt" in solution.segment(node.right):  # removed, or applied twice
                yield Mistake.SCALE, solution.replace(node, solution.segment(node.left))
                twice = f"{solution.segment(node)} / {solution.operand(node.right)}"
                yield Mistake.SCALE, solution.replace(node, twice)


def off_by_one(solution: Solution) -> Iterator[Change]:
    for node in solution.student_nodes():
        bounds: list[ast.AST] = []
        name = _module_call(node) or (node.func.id if isinstance(node, ast.Call)
                                      and isinstance(node.func, ast.Name) else None)  # fmt: skip
        if isinstance(node, ast.Call) and name in {"range", "arange"} | MADE - {"tensor"}:
            bounds += [a for a in node.args if not isinstance(a, ast.Starred)]
        if _method(node) in {"tril", "triu"}:
            yield Mistake.OFF_BY_ONE, solution.replace(node, solution.segment(node)[:-1] + "1)")
            yield Mistake.OFF_BY_ONE, solution.replace(node, solution.segment(node)[:-1] + "-1)")
        if isinstance(node, ast.Slice):
            bounds += [b for b in (node.lower, node.upper) if b is not None]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
            bounds += [s for s in (node.left, node.right) if _int(s) is not None]
        for bound in bounds:
            for delta in (-1, 1):
                yield Mistake.OFF_BY_ONE, solution.replace(bound, _plus(solution, bound, delta))


def comparisons(solution: Solution) -> Iterator[Change]:
    swap = {ast.Lt: "<=", ast.LtE: "<", ast.Gt: ">=", ast.GtE: ">"}
    for node in solution.student_nodes():
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                if type(op) in swap:
                    _, start = solution.span(parts[i])
                    end, _ = solution.span(parts[i + 1])
                    yield Mistake.COMPARISON, Edit(start, end, f" {swap[type(op)]} ")


def mask_polarity(solution: Solution) -> Iterator[Change]:
    for node in solution.student_nodes():
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
            yield Mistake.MASK_POLARITY, solution.replace(node, solution.segment(node.operand))
        name = _method(node)
        if name in {"masked_fill", "masked_fill_", "where"} and node.args:
            condition = node.args[0]
            if not (isinstance(condition, ast.UnaryOp) and isinstance(condition.op, ast.Invert)):
                yield (
                    Mistake.MASK_POLARITY,
                    solution.replace(condition, "~" + solution.operand(condition)),
                )
        if name in {"tril", "triu"}:
            other = "triu" if name == "tril" else "tril"
            yield (
                Mistake.MASK_POLARITY,
                solution.replace(node.func, f"{solution.segment(node.func.value)}.{other}"),
            )
        if (
            isinstance(node, ast.Return)
            and node.value is not None
            and solution.name.endswith("mask")
        ):
            yield (
                Mistake.MASK_POLARITY,
                solution.replace(node.value, f"~{solution.operand(node.value)}"),
            )


def _is_minus_inf(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "float":
        return bool(node.args) and ast.literal_eval(node.args[0]) == "-inf"
    return ast.unparse(node) in {"-math.inf", "-torch.inf", "-np.inf"}


def mask_value(solution: Solution) -> Iterator[Change]:
    for node in solution.student_nodes():
        if _is_minus_inf(node):
            yield Mistake.MASK_VALUE, solution.replace(node, "-1e9")
            yield Mistake.MASK_VALUE, solution.replace(node, "0.0")


def _softmax(solution: Solution, node: ast.AST) -> tuple[str, str] | None:
    """A softmax call's scores and dimension (texts), or None."""
    dim = next((k.value for k in getattr(node, "keywords", []) if k.arg == "dim"), None)
    if _module_call(node) == "softmax" and node.args:
        dim = dim or (node.args[1] if len(node.args) > 1 else None)
        scores = node.args[0]
    elif _method(node) == "softmax" and _module_call(node) is None:
        dim = dim or (node.args[0] if node.args else None)
        scores = node.func.value
    else:
        return None
    return (solution.operand(scores), solution.segment(dim)) if dim is not None else None


def stability(solution: Solution) -> Iterator[Change]:
    """The maximum not subtracted before exp, or clamped at 0 (it must be the maximum)."""
    for node in solution.student_nodes():
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Sub):
            right = solution.segment(node.right)
            if any(word in right for word in ("max(", "amax(", "best[")):
                yield (
                    Mistake.MAX_NOT_SUBTRACTED,
                    solution.replace(node, solution.operand(node.left)),
                )
                clamped = (
                    f"np.maximum({right}, 0)"
                    if solution.uses_numpy
                    else f"{solution.operand(node.right)}.clamp(min=0)"
                )
                yield Mistake.MAX_CLAMPED, solution.replace(node.right, clamped)
        found = _softmax(solution, node)
        if found:
            scores, dim = found
            e = f"torch.exp({scores})"
            yield (
                Mistake.MAX_NOT_SUBTRACTED,
                solution.replace(node, f"({e} / {e}.sum(dim={dim}, keepdim=True))"),
            )
            top = f"{scores}.amax(dim={dim}, keepdim=True).clamp(min=0)"
            e = f"torch.exp({scores} - {top})"
            yield (
                Mistake.MAX_CLAMPED,
                solution.replace(node, f"({e} / {e}.sum(dim={dim}, keepdim=True))"),
            )


def errors_dropped(solution: Solution) -> Iterator[Change]:
    inside_if = {
        id(statement) for node in ast.walk(solution.tree) if isinstance(node, ast.If)
        for statement in node.body
    }  # fmt: skip
    for node in solution.student_nodes():
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            kind = solution.segment(node.exc.func)
            other = "ValueError" if kind != "ValueError" else "TypeError"
            yield Mistake.ERROR_DROPPED, solution.replace(node.exc.func, other)
            if id(node) not in inside_if:
                yield Mistake.ERROR_DROPPED, solution.replace(node, "return None")
        if isinstance(node, ast.If) and any(isinstance(s, ast.Raise) for s in node.body):
            yield Mistake.ERROR_DROPPED, solution.replace(node, "pass")
            if isinstance(node.test, ast.BoolOp):
                for kept in node.test.values:
                    if len(node.test.values) > 1:
                        rest = [v for v in node.test.values if v is not kept]
                        word = " or " if isinstance(node.test.op, ast.Or) else " and "
                        yield (
                            Mistake.ERROR_DROPPED,
                            solution.replace(
                                node.test, word.join(solution.segment(v) for v in rest)
                            ),
                        )


def swaps(solution: Solution) -> Iterator[Change]:
    """Arguments, operands of @ and unpacked names swapped; sizes of a reshape swapped."""
    for node in solution.student_nodes():
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult | ast.Sub):
            left, right = solution.segment(node.left), solution.segment(node.right)
            mistake = Mistake.ARGS_SWAPPED if isinstance(node.op, ast.MatMult) else Mistake.FORMULA
            if "None" in left and "None" in right:
                mistake = Mistake.TRANSPOSE  # x[None, :] - x[:, None]: the transposed table
            op = "@" if isinstance(node.op, ast.MatMult) else "-"
            yield (
                mistake,
                solution.replace(
                    node, f"{solution.operand(node.right)} {op} {solution.operand(node.left)}"
                ),
            )
        pieces: list[ast.AST] = []
        mistake = Mistake.ARGS_SWAPPED
        name = _method(node) or _module_call(node)
        if isinstance(node, ast.Call) and name not in {"transpose", "range", "arange"}:
            pieces = [a for a in node.args if not isinstance(a, ast.Starred)]
            if name in SHAPED | MADE | {"unflatten"}:
                mistake = Mistake.RESHAPE_ORDER
            if name in {"stack", "cat", "unflatten"} and node.args:
                seq = node.args[-1] if name == "unflatten" else node.args[0]
                if isinstance(seq, ast.Tuple | ast.List):
                    pieces, mistake = seq.elts, Mistake.RESHAPE_ORDER
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple):
            pieces = node.targets[0].elts
        for a, b in zip(pieces, pieces[1:], strict=False):
            if solution.segment(a) != solution.segment(b):
                start, end = solution.span(a)[0], solution.span(b)[1]
                gap = solution.text[solution.span(a)[1] : solution.span(b)[0]]
                yield mistake, Edit(start, end, solution.segment(b) + gap + solution.segment(a))


STRUCTURE: tuple[Operator, ...] = (
    dims, keepdim, transposes, scale, off_by_one, comparisons, mask_polarity, mask_value,
    stability, errors_dropped, swaps,
)  # fmt: skip
"""The operators on the structure of the computation (dimensions, shapes, masks, bounds)."""
