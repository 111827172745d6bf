"""Expected values from the test's own objects only: a static check of the test cells.

What a graded function or class returns is the student's. In the class grader it is a
stand-in whose attributes, children and parameters the kernel chose: a decoy sublayer, a
layer that names itself one of torch's. An expected value computed from such an attribute
(``block.attention(Z)``, ``ffn.linear1.weight``) agrees with whatever the student chose, so a
test must build its references from objects it made itself: write known weights into the
student's module, and compute the answer from its own copies of them.

:func:`cell_findings` follows the values of one test cell through its statements and
reports every expected value that depends on an attribute of an object under test. Four
kinds of value, ordered ``OWN < OUTPUT < OBJECT < FROM_ATTRIBUTE`` (a name bound several
times takes the highest; the analysis is flow-insensitive, so a name is one kind in the whole
cell):

* **object under test**: a graded name itself, an instance of a graded class
  (``PositionwiseFeedForward(4, 8)``), what its methods that return the module itself give
  (``.double()``, ``.eval()``, ...), an item of one (``pair[0]``, a loop over it), and the
  value of a call that is given a graded class (``encoder_blocks(EncoderBlock, ...)`` builds
  the student's block);
* **output**: the value of calling a graded function (``layer_norm(x, g, b)``) or an object
  under test (its ``forward``), and whatever the grader computes from it (``out.T``,
  ``out[0].expand(3)``): data, which the kernel chose but whose methods are torch's;
* **from an attribute**: reading any other attribute of an object under test
  (``block.norm1``, ``getattr(ffn, "linear1")``), and anything computed from
  such a value: operators, containers, calls given it, calls of it, and an object mutated
  with it (``own.load_state_dict(ffn.state_dict())``, ``W.copy_(ffn.linear1.weight)``,
  ``x[i] = ...``, ``x.attr = ...``; the methods that mutate are torch's in-place ones, whose
  names end with ``_``, and those of :data:`MUTATING`). A call of a function the cell
  defines is followed into its body with the kinds of its arguments (a function that only
  writes into the student's module returns the test's own layers); any other call that is
  given an object under test gives a value from an attribute, since what it reads of the
  object is not known;
* **own**: everything else.

An expected value is an argument of :mod:`helpers.checks` or of ``torch.testing`` /
``numpy.testing`` that holds the right answer (:data:`EXPECTED`): ``check_close``'s
``expected``, ``check_shape``'s and ``check_dtype``'s, ``check_unchanged``'s ``before``, a
``correct=`` answer, ``assert_close``'s second argument. It must not be *from an attribute*.
It may be an *output*: comparing the student's output with its own output at another input
(``check_close(out2[:, 1:], out[:, 1:])``, position-wise; ``check_close(mask, mask.T)``) is a
property check, not a reference.

Not checked: comparisons written as ``if ...: raise AssertionError`` (structural checks of
the student's object by convention; the course writes comparisons of values with
``helpers.checks``), tolerances, ``known_mistakes`` (they only choose a message after a
comparison failed), and the objects a test passes to a graded call: under the class grader
they stay the test's own (the probe never copies a change back).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from instructor import anatomy

__all__ = ["EXPECTED", "Finding", "Kind", "cell_findings", "graded_names", "notebook_findings"]


class Kind(IntEnum):
    """What a value may depend on, from the safest to the forbidden in a reference."""

    OWN = 0
    OUTPUT = 1
    OBJECT = 2
    FROM_ATTRIBUTE = 3


EXPECTED: dict[str, tuple[int | None, str | None]] = {
    "check_close": (1, "expected"),
    "check_shape": (1, "expected"),
    "check_dtype": (1, "expected"),
    "check_type": (1, "expected"),
    "check_unchanged": (0, "before"),
    "check_choice": (None, "correct"),
    "check_number": (None, "correct"),
    "assert_close": (1, "expected"),
    "assert_allclose": (1, "desired"),
    "assert_array_equal": (1, "desired"),
    "assert_equal": (1, "desired"),
}
"""Callee name -> (position, keyword) of the argument that holds the right answer."""

SELF_RETURNING = frozenset(
    {"double", "float", "half", "bfloat16", "eval", "train", "to", "cpu", "requires_grad_"}
)
"""``nn.Module`` methods that return the module itself: still the object under test."""

MUTATING = frozenset(
    {"load_state_dict", "append", "extend", "insert", "update", "setdefault", "add_module"}
    | {"register_buffer", "register_parameter"}
)
"""Methods that put what they are given into their receiver (besides torch's in-place
methods, whose names end with ``_``)."""

CALLS_THROUGH = frozenset({"checked_call", "run_block"})
"""Helpers that call their first argument with the rest, read as that call:
``helpers.checks.checked_call(f, *args)`` is ``f(*args)`` with a message on failure,
``helpers.reference_layers.run_block(block, X, mask, where)`` is ``block(X, mask)``."""

_MAX_DEPTH = 8
"""Calls of the cell's own functions followed inside one another at most."""


@dataclass(frozen=True)
class Finding:
    """An expected value that depends on an attribute of an object under test."""

    grade_id: str
    line: int
    """Line in the test cell (1-based)."""
    check: str
    """The check whose expected value it is (``check_close``)."""
    expression: str
    """The expected value's source."""
    hidden: bool
    """In the cell's hidden part."""

    def __str__(self) -> str:
        part = "hidden" if self.hidden else "visible"
        return (
            f"{self.grade_id}, line {self.line} ({part}): the expected value of {self.check}, "
            f"{self.expression[:100]!r}, depends on an attribute of an object under test"
        )


def _bound_names(target: ast.expr) -> list[str]:
    return [node.id for node in ast.walk(target) if isinstance(node, ast.Name)]


def _base_name(node: ast.expr) -> str | None:
    """The name an expression's object hangs from: ``x`` of ``x.a[0].b`` and of
    ``getattr(x, "a").b``."""
    while True:
        if isinstance(node, ast.Attribute | ast.Subscript | ast.Starred):
            node = node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and node.args
        ):
            node = node.args[0]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value  # ffn.linear1.weight.copy_(...).add_(...): ffn
        else:
            return node.id if isinstance(node, ast.Name) else None


@dataclass
class _Scope:
    """The kinds of one scope's names (the cell, or a call of one of its functions)."""

    graded: frozenset[str]
    classes: frozenset[str]
    """The graded names that are classes (their instances are objects under test)."""
    kinds: dict[str, Kind] = field(default_factory=dict)
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    depth: int = 0
    changed: bool = False

    def bind(self, name: str, kind: Kind) -> None:
        if kind > self.kinds.get(name, Kind.OWN):
            self.kinds[name] = kind
            self.changed = True

    def name(self, name: str) -> Kind:
        if name in self.graded and name not in self.kinds:
            return Kind.OBJECT
        return self.kinds.get(name, Kind.OWN)

    # ------------------------------------------------------------------ expressions
    def kind(self, node: ast.AST | None) -> Kind:
        if node is None:
            return Kind.OWN
        if isinstance(node, ast.Name):
            return self.name(node.id)
        if isinstance(node, ast.Attribute):
            base = self.kind(node.value)
            return Kind.FROM_ATTRIBUTE if base >= Kind.OBJECT else base
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Subscript):
            return max(self.kind(node.value), self.kind(node.slice))
        if isinstance(node, ast.Lambda):
            return self._lambda(node)
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            for generator in node.generators:
                self._bind_target(generator.target, self.kind(generator.iter))
            parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            conditions = [c for g in node.generators for c in g.ifs]
            iters = [g.iter for g in node.generators]
            return max(self.kind(n) for n in [*parts, *conditions, *iters])
        children = [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)]
        return max((self.kind(c) for c in children), default=Kind.OWN)

    def _lambda(self, node: ast.Lambda) -> Kind:
        params = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        saved = {p: self.kinds.pop(p) for p in params if p in self.kinds}
        try:
            return self.kind(node.body)
        finally:
            self.kinds.update(saved)

    def _call(self, node: ast.Call) -> Kind:
        name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
        if name in CALLS_THROUGH and node.args and not isinstance(node.args[0], ast.Starred):
            through = ast.Call(node.args[0], node.args[1:], node.keywords)
            return self._call(ast.copy_location(through, node))
        args = [*node.args, *(k.value for k in node.keywords)]
        arg_kinds = [self.kind(a) for a in args]
        given = max(arg_kinds, default=Kind.OWN)
        tainted = Kind.FROM_ATTRIBUTE if given == Kind.FROM_ATTRIBUTE else Kind.OWN
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in SELF_RETURNING:
            if self.kind(func.value) == Kind.OBJECT:
                return max(Kind.OBJECT, tainted)
        if isinstance(func, ast.Name) and func.id in self.functions and func.id not in self.kinds:
            return max(self._follow(self.functions[func.id], node), given)
        if isinstance(func, ast.Name) and func.id in self.graded and func.id not in self.kinds:
            made = Kind.OBJECT if func.id in self.classes else Kind.OUTPUT
            return max(made, tainted)
        callee = self.kind(func)
        if callee == Kind.FROM_ATTRIBUTE:
            return callee  # code the student chose: a sublayer, a method
        if callee == Kind.OBJECT:
            return max(Kind.OUTPUT, tainted)  # the object's forward: its output
        graded = [a.id for a in args if isinstance(a, ast.Name) and a.id in self.graded]
        if any(name in self.classes for name in graded):
            return max(Kind.OBJECT, tainted)  # a helper that builds the student's objects
        if graded:
            return max(Kind.OUTPUT, tainted)  # a helper that calls a graded function
        if given == Kind.OBJECT:
            return Kind.FROM_ATTRIBUTE  # may read any part of the object
        return max(callee, given)  # data computed from data

    def _follow(self, function: ast.FunctionDef, call: ast.Call) -> Kind:
        """The kind of what ``function`` returns when ``call`` calls it."""
        if self.depth >= _MAX_DEPTH:
            return Kind.FROM_ATTRIBUTE
        inner = self.enter(function, call)
        returns = [
            n.value
            for n in ast.walk(function)
            if isinstance(n, ast.Return | ast.Yield | ast.YieldFrom) and n.value is not None
        ]
        return max((inner.kind(r) for r in returns), default=Kind.OWN)

    def enter(self, function: ast.FunctionDef, call: ast.Call) -> _Scope:
        """The scope of ``function``'s body when ``call`` calls it: the cell's names (its
        closure), its parameters bound to the kinds of the arguments, its body run."""
        inner = _Scope(
            self.graded, self.classes, dict(self.kinds), dict(self.functions), self.depth + 1
        )
        params = function.args
        positional = [*params.posonlyargs, *params.args]
        for param, arg in zip(positional, call.args, strict=False):
            inner.kinds[param.arg] = self.kind(arg)
        for keyword in call.keywords:
            if keyword.arg is not None:
                inner.kinds[keyword.arg] = self.kind(keyword.value)
        every = [*positional, *params.kwonlyargs, params.vararg, params.kwarg]
        for param in every:
            if param is not None and param.arg not in inner.kinds:
                inner.kinds[param.arg] = Kind.OWN
        if params.vararg is not None or params.kwarg is not None:
            extra = [self.kind(a) for a in call.args[len(positional) :]]
            extra += [self.kind(k.value) for k in call.keywords if k.arg is None]
            for param in (params.vararg, params.kwarg):
                if param is not None:
                    inner.kinds[param.arg] = max(extra, default=Kind.OWN)
        inner.run(function.body)
        return inner

    # ------------------------------------------------------------------- statements
    def _bind_target(self, target: ast.expr, kind: Kind) -> None:
        if isinstance(target, ast.Name | ast.Tuple | ast.List | ast.Starred):
            for name in _bound_names(target):
                self.bind(name, kind)
        else:  # x[i] = value, x.attr = value: x now holds the value
            base = _base_name(target)
            if base is not None and kind == Kind.FROM_ATTRIBUTE:
                self.bind(base, kind)

    def _statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            self.functions[node.name] = node  # type: ignore[assignment]
            return
        if isinstance(node, ast.ClassDef):
            return  # a class the test defines: its own code
        if isinstance(node, ast.Assign):
            kind = self.kind(node.value)
            for target in node.targets:
                self._bind_target(target, kind)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign) and node.value is not None:
            self._bind_target(node.target, self.kind(node.value))
        elif isinstance(node, ast.For | ast.AsyncFor):
            self._bind_target(node.target, self.kind(node.iter))
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                if item.optional_vars is not None:
                    self._bind_target(item.optional_vars, self.kind(item.context_expr))
        elif isinstance(node, ast.ExceptHandler) and node.name:
            self.bind(node.name, Kind.OUTPUT)  # an exception the student's code raised
        for child in ast.walk(node):
            if isinstance(child, ast.NamedExpr):
                self._bind_target(child.target, self.kind(child.value))
            if (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Attribute)
                and (child.func.attr in MUTATING or child.func.attr.endswith("_"))
            ):
                # own.load_state_dict(ffn.state_dict()), W.copy_(ffn.linear1.weight): the
                # receiver now holds what it was given.
                given = [*child.args, *(k.value for k in child.keywords)]
                if any(self.kind(a) == Kind.FROM_ATTRIBUTE for a in given):
                    base = _base_name(child.func.value)
                    if base is not None:
                        self.bind(base, Kind.FROM_ATTRIBUTE)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt | ast.ExceptHandler):
                self._statement(child)  # type: ignore[arg-type]

    def run(self, body: list[ast.stmt]) -> None:
        """Bind every name of ``body`` until nothing changes (the kinds only grow)."""
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self.functions[node.name] = node  # type: ignore[assignment]
        while True:
            self.changed = False
            for node in body:
                self._statement(node)
            if not self.changed:
                return


def _callee(node: ast.Call) -> str | None:
    if isinstance(node.func, ast.Name):
        return node.func.id
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def cell_findings(
    source: str,
    functions: set[str] | frozenset[str],
    classes: set[str] | frozenset[str] = frozenset(),
    grade_id: str = "",
) -> list[Finding]:
    """Every expected value of the test cell ``source`` that depends on an attribute of an
    object under test: of an instance of one of the graded ``classes``, or of one of the
    graded names themselves (``functions`` and ``classes``)."""
    tree = ast.parse(source)
    hidden_from = next(
        (n for n, line in enumerate(source.splitlines(), 1) if anatomy.HIDDEN_TESTS_MARKER in line),
        None,
    )
    scope = _Scope(frozenset(functions) | frozenset(classes), frozenset(classes))
    scope.run(tree.body)
    findings = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or _callee(node) not in EXPECTED:
            continue
        check = _callee(node)
        position, keyword = EXPECTED[check]  # type: ignore[index]
        expected = [k.value for k in node.keywords if k.arg == keyword]
        if position is not None and len(node.args) > position:
            expected.append(node.args[position])
        for value in expected:
            if _kind_where(scope, tree, value) == Kind.FROM_ATTRIBUTE:
                findings.append(
                    Finding(
                        grade_id,
                        value.lineno,
                        str(check),
                        ast.unparse(value),
                        hidden_from is not None and value.lineno > hidden_from,
                    )
                )
    return findings


def _kind_where(scope: _Scope, tree: ast.Module, value: ast.expr) -> Kind:
    """The kind of ``value`` in the scope it is written in: the cell's, or (inside a
    function of the cell) the function's with its parameters as the cell calls it."""
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef) and any(n is value for n in ast.walk(function)):
            calls = [
                n
                for n in ast.walk(tree)
                if isinstance(n, ast.Call)
                and isinstance(n.func, ast.Name)
                and n.func.id == function.name
            ]
            calls = calls or [ast.Call(ast.Name(function.name), [], [])]  # never called
            return max(scope.enter(function, call).kind(value) for call in calls)
    return scope.kind(value)


def graded_names(notebook: Any) -> tuple[set[str], set[str]]:
    """The graded functions and the graded classes of a solution notebook: the names its
    function cells define."""
    functions, classes = set(), set()
    for cell in anatomy.function_cells(notebook):
        name = str(anatomy.grade_id(cell))
        defined = ast.parse(anatomy.strip_solution_markers(cell.source)).body
        is_class = any(isinstance(n, ast.ClassDef) and n.name == name for n in defined)
        (classes if is_class else functions).add(name)
    return functions, classes


def notebook_findings(notebook_id: str) -> list[Finding]:
    """:func:`cell_findings` for every test cell of a solution notebook, its graded
    functions and classes being the names of its function cells."""
    notebook = anatomy.read_solution(notebook_id)
    functions, classes = graded_names(notebook)
    return [
        finding
        for cell in anatomy.test_cells(notebook)
        for finding in cell_findings(cell.source, functions, classes, str(anatomy.grade_id(cell)))
    ]
