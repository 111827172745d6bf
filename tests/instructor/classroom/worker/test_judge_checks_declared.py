"""The class grader measures through the hook ``helpers.checks`` declares
(``Measurements``, ``measured_by``), and replaces nothing of the student package: no module
of ``instructor`` assigns, deletes or reads a private attribute of ``helpers.checks``, and a
graded test cell leaves every attribute of the module as it was."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from helpers import checks
from instructor.classroom.worker.judge import run_test

INSTRUCTOR = Path(__file__).resolve().parents[4] / "instructor"


def _names_of_checks(tree: ast.AST) -> set[str]:
    """The names a module binds to ``helpers.checks`` (``helpers`` for ``import
    helpers.checks``, whose attribute ``checks`` is the module then)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "helpers":
            names.update(a.asname or a.name for a in node.names if a.name == "checks")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "helpers.checks":
                    names.add(alias.asname or "helpers")
    return names


def _is_checks(node: ast.AST, names: set[str]) -> bool:
    if isinstance(node, ast.Name):
        return node.id in names and node.id != "helpers"
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "checks"
        and isinstance(node.value, ast.Name)
        and node.value.id == "helpers"
        and "helpers" in names
    )


def _reaches_checks(node: ast.AST, names: set[str]) -> bool:
    """Whether ``node`` is the module or an attribute or item reached from it
    (``checks.x``, ``checks.x.__code__``, ``checks.__dict__["x"]``)."""
    while True:
        if _is_checks(node, names):
            return True
        if not isinstance(node, ast.Attribute | ast.Subscript):
            return False
        node = node.value


def replacements(source: str) -> list[str]:
    """Where ``source`` changes ``helpers.checks`` or reads a private name of it, one line
    each (``"line 3: ..."``); empty when it only uses what the module declares."""
    tree = ast.parse(source)
    names = _names_of_checks(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "helpers.checks":
            private = [a.name for a in node.names if a.name.startswith("_")]
            if private:
                found.append(f"line {node.lineno}: imports private {', '.join(private)}")
        if not names:
            continue
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign | ast.Delete):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if _reaches_checks(target, names) and not _is_checks(target, names):
                found.append(f"line {node.lineno}: assigns {ast.unparse(target)}")
        if isinstance(node, ast.Call) and node.args:
            callee = ast.unparse(node.func)
            if callee.rpartition(".")[2] in {"setattr", "delattr", "vars"} and _reaches_checks(
                node.args[0], names
            ):
                found.append(f"line {node.lineno}: {ast.unparse(node)}")
        if isinstance(node, ast.Attribute) and _is_checks(node.value, names):
            if node.attr == "__dict__" or (
                node.attr.startswith("_") and not node.attr.endswith("__")
            ):
                found.append(f"line {node.lineno}: reads {ast.unparse(node)}")
    return found


@pytest.mark.parametrize(
    "source",
    [
        # What verdict.py did before the hook was declared.
        "from helpers import checks\nchecks._largest_tensor_while = lambda f, a: None\n",
        "from helpers import checks\nchecks.check_unchanged = print\n",
        "from helpers import checks as c\nc._call_within.__code__ = (lambda: 0).__code__\n",
        "import helpers.checks\nhelpers.checks.check_close = print\n",
        "import helpers.checks as hc\ndel hc.check_close\n",
        "from helpers import checks\nsetattr(checks, 'check_close', print)\n",
        "from helpers import checks\nvars(checks)['check_close'] = print\n",
        "from helpers import checks\nchecks.__dict__['check_close'] = print\n",
        "def f(patch):\n    from helpers import checks\n    patch.setattr(checks, 'x', 1)\n",
        "from helpers import checks\nraise checks._modified_in_place('x')\n",
        "from helpers.checks import _OverTimeLimit\n",
    ],
)
def test_a_replacement_or_a_private_read_is_found(source: str) -> None:
    assert replacements(source)


def test_using_the_declared_hook_is_not_a_replacement() -> None:
    source = (
        "from helpers import checks\nimport helpers.checks\n"
        "m = checks.Measurements(call_within=checks.IN_PROCESS.call_within)\n"
        "with checks.measured_by(m):\n    checks.check_close(1, 1, 'x')\n"
        "checks = None\nhelpers.checks.__name__\n"
    )
    assert replacements(source) == []


def test_no_instructor_module_replaces_or_reads_a_private_name_of_helpers_checks() -> None:
    modules = sorted(INSTRUCTOR.rglob("*.py"))
    assert INSTRUCTOR / "classroom" / "worker" / "judge.py" in modules
    found = {
        str(path.relative_to(INSTRUCTOR)): hits
        for path in modules
        if (hits := replacements(path.read_text(encoding="utf-8")))
    }
    assert found == {}


CELL = """\
import torch
from helpers.checks import (
    check_close, check_largest_tensor, check_no_loop_over_positions,
    check_unchanged, check_without_loop_over_positions,
)

x = torch.arange(3.0)
check_largest_tensor(double, (x,), max_numel=100, name="double")
check_no_loop_over_positions(double, lambda n: (torch.ones(n),), name="double")
out = check_without_loop_over_positions(double, (x,), 3, "double", seconds=30)
check_unchanged(torch.arange(3.0), x, "x")
check_close(out, x * 2, "double(x)")
"""


def test_a_graded_cell_measures_in_the_kernel_and_leaves_helpers_checks_as_it_was(
    kernel, channel, monkeypatch
) -> None:
    kernel["double"] = lambda x: 2 * x
    limits: list[float | None] = []
    answer = channel.run

    def run(code: str, seconds: float | None = None) -> None:
        limits.append(seconds)
        answer(code, seconds)

    monkeypatch.setattr(channel, "run", run)
    before = dict(vars(checks))
    verdict = run_test(CELL, "test_double", channel)
    assert verdict.passed, verdict.outputs
    # Measured in the kernel: each measurement was asked for there (the count for both
    # lengths), and the time limit of check_without_loop_over_positions was the probe's own.
    assert sorted(channel.measured) == ["largest_tensor", "torch_calls", "torch_calls"]
    assert verdict.best_effort == ["largest_tensor"]  # the loop rule is decided outside
    assert limits.count(30) == 1
    after = dict(vars(checks))
    assert after.keys() == before.keys()
    assert [name for name in before if after[name] is not before[name]] == []
