"""Two things never share a name (issue 49): a module-level name of the product code
(``instructor/`` and ``helpers/``) is defined in one module only, unless it is in
:data:`SAME_MEANING`, where each definition means the same thing."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from instructor.paths import COURSE_ROOT

PACKAGES = ("instructor", "helpers")

SAME_MEANING = {
    "main": "each command-line module's entry point (python -m ...)",
    "log": "each module's own logger",
    "WIDGET_VIEW": "ipywidgets' MIME type of a widget's view: the student package's copy "
    "(helpers never imports the instructor's) and the nbgrader plugins' (instructor.feedback)",
}


def module_level_names(path: Path) -> set[str]:
    """The names a module defines at its top level (functions, classes, assignments)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if not name.startswith("__")}


def shared_names(root: Path = COURSE_ROOT) -> dict[str, list[str]]:
    """Each name defined in more than one module, with those modules' paths."""
    where: dict[str, list[str]] = defaultdict(list)
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            for name in module_level_names(path):
                where[name].append(str(path.relative_to(root)))
    return {name: paths for name, paths in where.items() if len(paths) > 1}


def test_no_two_modules_define_the_same_name() -> None:
    shared = {n: p for n, p in shared_names().items() if n not in SAME_MEANING}
    assert not shared, "names defined in more than one module (rename one, or list it in "
    f"SAME_MEANING with why it means the same thing): {shared}"


def test_a_name_defined_twice_is_found(tmp_path: Path) -> None:
    (tmp_path / "helpers").mkdir()
    (tmp_path / "instructor").mkdir()
    (tmp_path / "helpers" / "a.py").write_text("MAX_DEPTH = 16\n")
    (tmp_path / "instructor" / "b.py").write_text("def MAX_DEPTH():\n    pass\n")
    assert shared_names(tmp_path) == {"MAX_DEPTH": ["instructor/b.py", "helpers/a.py"]}
