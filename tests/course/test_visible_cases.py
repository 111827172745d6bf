"""Every clause of a graded function's docstring is tried where the student sees it (issue 30).

The visible tests of each graded function and class run in this process with a recording
stand-in (``tests/support/visible.py``), and the calls they make must together try:

* **every parameter with a default** at a value other than its default (a class's
  ``__init__`` and ``forward`` parameters alike);
* **every documented input shape**: each shape of an argument in the docstring's ``Args``
  (the first one written, and those joined to it by "or") with its own number of
  dimensions, and one with leading batch dimensions ``(..., n, d)`` both without them
  (2-D here) and with them;
* **every documented dtype**: a dtype an argument is documented with (``bool tensor``), and
  float32 *and* float64 inputs where the docstring promises the input's dtype back;
* **every case declared in course.toml** (``visible_cases`` of the exercise, a limit the
  text warns about): some call for which its ``when`` expression is true. An exercise
  without ``visible_cases`` fails: a new exercise declares its limits, or ``[]``.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import numpy as np
import pytest
import torch

from instructor import registry
from tests.support.visible import Call, graded, run_cell, solution, visible_tests

FUNCTIONS = [
    pytest.param(assignment, name, id=f"{assignment}-{name}")
    for assignment in registry.load().ids
    for name in graded(assignment)
]

DTYPES = {
    "bool": (torch.bool, np.dtype(bool)),
    "float16": (torch.float16, np.dtype("float16")),
    "bfloat16": (torch.bfloat16, None),
    "float32": (torch.float32, np.dtype("float32")),
    "float64": (torch.float64, np.dtype("float64")),
    "int32": (torch.int32, np.dtype("int32")),
    "int64": (torch.int64, np.dtype("int64")),
    "long": (torch.int64, np.dtype("int64")),
}
"""The dtype names a docstring's ``Args`` may use, and what each is in torch and numpy."""
KEEPS_DTYPE = re.compile(
    r"dtype of (the )?(inputs?|x|X|V|scores|img)\b|'s dtype|dtype \(kept\)|in the dtype"
)
"""How a docstring promises a result in the input's dtype."""
DIM = r"(?:\.\.\.|\w+(?: ?[*+/-] ?\w+)*)"
SHAPE = re.compile(rf"(?<![\w\]])\((?:{DIM}(?:, ?{DIM})+,?|{DIM},|\.\.\.)\)")
"""A shape as docstrings write it: ``(n, d)``, ``(L,)``, ``(..., n_q, d)``, ``(...)``; not a
call's arguments (``attention(Z, mask)``: a name right before the parenthesis)."""


def methods(reference: Any) -> dict[str, Any]:
    """What is called, by :class:`Call.method`: a function itself (``""``), a class's
    ``__init__`` and ``forward``."""
    if isinstance(reference, type):
        return {"__init__": reference.__init__, "forward": reference.forward}
    return {"": reference}


def args_section(doc: str) -> dict[str, str]:
    """The entries of a Google-style docstring's ``Args:`` section, by parameter name."""
    lines = inspect.cleandoc(doc or "").splitlines()
    entries: dict[str, str] = {}
    inside, current = False, ""
    for line in lines:
        if line.strip() == "Args:":
            inside = True
            continue
        if inside and line and not line.startswith(" "):
            break  # the next section
        match = re.match(r" {4}(\w+)( \([^)]*\))?: ?(.*)", line)
        if inside and match:
            current = match.group(1)
            entries[current] = match.group(3)
        elif inside and current and line.strip():
            entries[current] += " " + line.strip()
    return entries


def documented_shapes(text: str) -> list[tuple[str, ...]]:
    """The shapes of one ``Args`` entry: the first written and those joined to it by "or"."""
    first = SHAPE.search(text)
    if first is None:
        return []
    shapes = [first.group(0)]
    rest = text[first.end() :]
    while (more := re.match(r" or (" + SHAPE.pattern + ")", rest)) is not None:
        shapes.append(more.group(1))
        rest = rest[more.end() :]
    return [tuple(d.strip() for d in s[1:-1].split(",") if d.strip()) for s in shapes]


def _same(value: Any, default: Any) -> bool:
    if isinstance(value, torch.Tensor | np.ndarray) or isinstance(default, torch.Tensor):
        return value is default
    try:
        return type(value) is type(default) and bool(value == default)
    except Exception:  # noqa: BLE001 - values that cannot be compared differ
        return False


def _arrays(value: Any) -> list[Any]:
    if isinstance(value, torch.Tensor | np.ndarray):
        return [value]
    if isinstance(value, list | tuple):
        return [a for v in value for a in _arrays(v)]
    return []


def _floating(array: Any) -> bool:
    if isinstance(array, torch.Tensor):
        return array.dtype.is_floating_point
    return np.issubdtype(array.dtype, np.floating)


def _with_defaults(function: Any, call: Call) -> dict[str, Any]:
    """The call's arguments by name, the defaults of those it did not pass filled in."""
    arguments = dict(call.arguments)
    for parameter in inspect.signature(function).parameters.values():
        if parameter.default is not inspect.Parameter.empty:
            arguments.setdefault(parameter.name, parameter.default)
    return arguments


def untried(assignment: str, name: str) -> list[str]:
    """What the docstring and course.toml promise of ``name`` that no visible call tries."""
    exercise = registry.load().notebook(assignment).exercise(name)
    reference = solution(assignment, name)
    calls: list[Call] = []
    for test_id in visible_tests(assignment, name):
        run = run_cell(assignment, name, test_id)
        assert run.error is None, f"{test_id} fails with the solution: {run.error!r}"
        calls += run.calls
    missing = []
    for method, function in methods(reference).items():
        label = f"{name}.{method}" if method else name
        own = [c for c in calls if c.method == method]
        doc = function.__doc__ or ""
        for parameter in inspect.signature(function).parameters.values():
            if parameter.name == "self" or parameter.default is inspect.Parameter.empty:
                continue
            if not any(
                parameter.name in c.arguments
                and not _same(c.arguments[parameter.name], parameter.default)
                for c in own
            ):
                missing.append(
                    f"{label}: parameter {parameter.name} is never passed a value other than "
                    f"its default {parameter.default!r}"
                )
        for argument, text in args_section(doc).items():
            passed = [c.arguments[argument] for c in own if argument in c.arguments]
            arrays = [a for value in passed for a in _arrays(value) if hasattr(a, "ndim")]
            if arrays:
                for shape in documented_shapes(text):
                    named = len([d for d in shape if d != "..."])
                    comma = "," if len(shape) == 1 and shape != ("...",) else ""
                    written = "(" + ", ".join(shape) + comma + ")"
                    if "..." in shape and not any(a.ndim > named for a in arrays):
                        missing.append(
                            f"{label}: argument {argument} of shape {written} is never passed "
                            "with leading dimensions in place of the ..."
                        )
                    if not any(a.ndim == named for a in arrays):
                        missing.append(
                            f"{label}: argument {argument} of shape {written} is never passed "
                            f"with {named} dimension(s)"
                            + (", without the leading ones" if "..." in shape else "")
                        )
            for word in sorted(set(re.findall(r"\b(" + "|".join(DTYPES) + r")\b", text))):
                if not any(a.dtype in DTYPES[word] for a in arrays):
                    missing.append(
                        f"{label}: argument {argument} is documented as {word} but never "
                        "passed as one"
                    )
        if KEEPS_DTYPE.search(doc):
            for dtype in ("float32", "float64"):
                if not any(
                    a.dtype in DTYPES[dtype]
                    for c in own
                    for value in c.arguments.values()
                    for a in _arrays(value)
                    if _floating(a)
                ):
                    missing.append(
                        f"{label}: its docstring promises the input's dtype back, but no "
                        f"visible call passes {dtype} inputs"
                    )
    if exercise.visible_cases is None:
        missing.append(
            f"{name}: course.toml declares no visible_cases for it (list the sizes and limits "
            "its text warns about, each with a `when` over its parameters, or write [])"
        )
    for case in exercise.visible_cases or ():
        tried = False
        for call in calls:
            scope = {"torch": torch, "np": np}
            scope.update(_with_defaults(methods(reference)[call.method], call))
            try:
                tried = bool(eval(case.when, scope))  # course.toml's expression
            except Exception:  # noqa: BLE001 - a call the expression does not apply to
                tried = False
            if tried:
                break
        if not tried:
            missing.append(f"{name}: no visible call tries {case.case!r} ({case.when})")
    return missing


@pytest.mark.parametrize(("assignment", "name"), FUNCTIONS)
def test_the_visible_tests_try_every_documented_parameter_shape_dtype_and_limit(
    assignment: str, name: str
) -> None:
    missing = untried(assignment, name)
    assert not missing, (
        f"{assignment}: the visible tests of {name} leave untried what its docstring or "
        "course.toml promises (add a visible call, through checked_call):\n  "
        + "\n  ".join(missing)
    )


def _one_cell(monkeypatch: pytest.MonkeyPatch, test_id: str, source: str) -> None:
    """Make the visible tests of the function under test one cell holding ``source``."""
    import tests.support.visible as visible

    def one_cell(assignment: str, name: str) -> dict[str, str]:
        return {test_id: "from helpers.checks import checked_call\n" + source}

    monkeypatch.setattr(visible, "visible_tests", one_cell)  # what run_cell reads
    monkeypatch.setitem(globals(), "visible_tests", one_cell)  # what untried reads


def test_what_the_visible_tests_leave_untried_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test above can fail: one batched float32 call of 03's attention, without a mask,
    leaves the mask, the unbatched shapes and the batched mask untried; one float32 call of
    01's frame_signal leaves float64 untried (its docstring keeps the input's dtype)."""
    _one_cell(
        monkeypatch,
        "test_attention",
        "x = torch.ones(2, 3, 4)\nchecked_call(attention, x, x, x)\n",
    )
    missing = untried("03_matrix_form", "attention")
    assert missing[0] == (
        "attention: parameter mask is never passed a value other than its default None"
    )
    assert (
        "attention: argument Q of shape (..., n_q, d) is never passed with 2 dimension(s), "
        "without the leading ones" in missing
    )
    assert any(m.startswith("attention: no visible call tries 'a mask shared") for m in missing)
    _one_cell(monkeypatch, "test_frame_signal", "checked_call(frame_signal, torch.ones(8), 4, 2)\n")
    missing = untried("01_vector_sets", "frame_signal")
    assert (
        "frame_signal: its docstring promises the input's dtype back, but no visible call passes "
        "float64 inputs" in missing
    )
    assert (
        "frame_signal: no visible call tries 'a signal of exactly one frame' "
        "(signal.shape[0] == frame_length)" in missing
    )
