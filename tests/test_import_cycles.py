"""No import cycle in the course's packages, imports inside functions included (issue 49):
an import made inside a function to dodge a cycle still ties the two modules together."""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

from instructor.paths import COURSE_ROOT

PACKAGES = ("instructor", "helpers")


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = COURSE_ROOT) -> dict[str, set[str]]:
    """Module -> the modules of :data:`PACKAGES` it imports, anywhere in its file."""
    files = {
        module_name(p, root): p for package in PACKAGES for p in (root / package).rglob("*.py")
    }
    graph: dict[str, set[str]] = {module: set() for module in files}
    for module, path in files.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*up, base] if base else up)
                targets = [f"{base}.{a.name}" for a in node.names]
                targets = [t if t in files else base for t in targets]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                continue
            graph[module] |= {t for t in targets if t in files and t != module}
    return graph


def cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``graph`` (its first module named again at its end), or []."""
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as error:
        return list(error.args[1])
    return []


def test_no_module_imports_itself_through_others() -> None:
    found = cycle(import_graph())
    assert not found, "an import cycle: " + " -> ".join(found)


def test_the_graph_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    """The check itself: two modules that import each other, one inside a function."""
    package = tmp_path / "helpers"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from helpers.b import g\n")
    (package / "b.py").write_text("def g():\n    from helpers.a import x\n")
    (tmp_path / "instructor").mkdir()
    assert set(cycle(import_graph(tmp_path))) == {"helpers.a", "helpers.b"}
