"""Every instructor notebook follows the course's anatomy (CONTRIBUTING.md) and its entry
in the registry (``course.toml``): the graded functions with their parameters and points,
which students, graders and later notebooks rely on."""

from __future__ import annotations

import ast
import re
from collections import defaultdict

import nbformat
import pytest

from instructor import anatomy, registry
from instructor.colab import badge_markdown, colab_setup_source, colab_url
from instructor.paths import COURSE_ROOT, SOLUTIONS

NBGRADER_KEYS = {
    "grade", "solution", "locked", "task", "grade_id", "points", "checksum", "cell_type",
    "schema_version",
}  # fmt: skip

COURSE = registry.load()
ASSIGNMENTS = COURSE.ids


def load(assignment: str) -> nbformat.NotebookNode:
    return anatomy.read_solution(assignment)


def nbgrader(cell: nbformat.NotebookNode) -> dict:
    return cell.metadata.get("nbgrader", {})


def defined_names(source: str) -> list[tuple[str, list[str]]]:
    """(name, parameters) of each top-level def/class in a cell: a function's parameter
    names; a class's public methods as ``name(parameters)``."""
    tree = ast.parse(source)
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found.append((node.name, [a.arg for a in node.args.args]))
        elif isinstance(node, ast.ClassDef):
            methods = [
                f"{m.name}({', '.join(a.arg for a in m.args.args)})"
                for m in node.body
                if isinstance(m, ast.FunctionDef) and (m.name == "__init__" or m.name[0] != "_")
            ]
            found.append((node.name, methods))
    return found


def test_registry_and_solutions_hold_the_same_notebooks() -> None:
    on_disk = sorted(
        p.parent.name for p in SOLUTIONS.glob("[0-9][0-9]_*/*.ipynb") if p.stem == p.parent.name
    )
    missing = sorted(set(ASSIGNMENTS) - set(on_disk))
    unregistered = sorted(set(on_disk) - set(ASSIGNMENTS))
    assert not missing, f"course.toml lists {missing}, which have no solutions/<id>/<id>.ipynb"
    assert not unregistered, (
        f"solutions/ holds {unregistered}, which course.toml does not list: add a [[notebook]] "
        "entry (`make new NB=...` writes one)"
    )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_opening_cells(assignment: str) -> None:
    entry = COURSE.notebook(assignment)
    cells = load(assignment).cells
    assert cells[0].cell_type == "markdown" and cells[0].source.startswith(
        badge_markdown(assignment)
    ), "the first cell must start with instructor.colab.badge_markdown(id)"
    assert anatomy.has_tag(cells[0], anatomy.BADGE_TAG), "tag the badge cell 'badge'"
    title = cells[0].source.splitlines()[1:3]
    assert entry.heading in title, (
        f"the badge cell's title must be {entry.heading!r} (course.toml's title), not {title}"
    )
    intro = cells[0].source.lower()
    assert "goal" in intro, "the first cell states the learning goals"
    assert f"about {entry.minutes} minutes" in intro, (
        f"the first cell states the time as course.toml does: 'about {entry.minutes} minutes'"
    )
    assert cells[1].cell_type == "code" and cells[1].source == colab_setup_source(
        entry.colab_packages
    ), "the second cell must be instructor.colab.colab_setup_source(course.toml's packages)"
    assert anatomy.has_tag(cells[1], anatomy.SETUP_TAG), "tag the set-up cell 'colab-setup'"
    imports = anatomy.imports_cell(load(assignment))
    assert imports.cell_type == "code" and "start_notebook()" in imports.source, (
        "the cell tagged 'imports' calls helpers.setup.start_notebook() to seed everything"
    )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_closing_sections(assignment: str) -> None:
    headings = [
        line.lstrip("#").strip().lower()
        for cell in load(assignment).cells
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if line.startswith("#")
    ]
    assert "summary" in headings, "a '## Summary' section is missing"
    assert "further reading" in headings, "a '## Further reading' section is missing"


# The skeleton every notebook follows (CONTRIBUTING.md, "Anatomy of a notebook"):
#
#   # NN · Title                                   the badge cell's only heading
#   ## 1 · Section title                           sections, numbered 1, 2, ... in order
#   ### Any subsection title                       unnumbered
#   ### Exercise 1 · `function_name` (3 points)    numbered through the notebook, the last
#                                                  heading before the function's solution cell
#   ## Summary                                     the last cell but one, a cell of its own
#   ## Further reading                             the last cell, a cell of its own
HEADING = re.compile(r"(#{1,6})\s+(.*?)\s*#*\s*")
SECTION = re.compile(r"(?P<number>\d+) · (?P<title>\S.*)")
EXERCISE = re.compile(r"Exercise (?P<number>\d+) · `(?P<name>[^`]+)` \((?P<points>\d+) points?\)")
CLOSING = ("Summary", "Further reading")


def headings(cell: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """(level, text) of every markdown heading of a cell, fenced code blocks excepted."""
    if cell.cell_type != "markdown":
        return []
    found, fenced = [], False
    for line in cell.source.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        match = None if fenced else HEADING.fullmatch(line)
        if match:
            found.append((len(match.group(1)), match.group(2)))
    return found


def points_text(points: int) -> str:
    return f"{points} point{'s' if points != 1 else ''}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_heading_levels(assignment: str) -> None:
    """One title (in the badge cell), ``##`` sections, ``###`` subsections and exercises."""
    cells = load(assignment).cells
    title = [text for _, text in headings(cells[0])]
    assert headings(cells[0]) == [(1, COURSE.notebook(assignment).heading[2:])], (
        f"the badge cell's only heading is the title {COURSE.notebook(assignment).heading!r}; "
        f"it has {title}: move any other heading into a cell of its own"
    )
    for cell in cells[1:]:
        for level, text in headings(cell):
            assert level in (2, 3), (
                f"cell {cell.id}: {'#' * level} {text!r} is a level-{level} heading: below the "
                "title use '## N · Section' for sections and '### ...' for subsections and "
                "exercises (no '#' and no '####')"
            )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_sections_are_numbered(assignment: str) -> None:
    cells = load(assignment).cells
    sections = [
        (cell.id, text)
        for cell in cells[1:]
        for level, text in headings(cell)
        if level == 2 and text not in CLOSING
    ]
    assert sections, "the notebook has no '## 1 · Section title' section"
    for expected, (cell_id, text) in enumerate(sections, start=1):
        match = SECTION.fullmatch(text)
        assert match, (
            f"cell {cell_id}: section heading '## {text}' must read '## {expected} · Title' "
            "(number, a space, a middle dot '·', a space, the title; only Summary and "
            "Further reading are unnumbered)"
        )
        assert int(match.group("number")) == expected, (
            f"cell {cell_id}: section '## {text}' is section {expected}: number the sections "
            "1, 2, 3, ... in order"
        )
        assert not match.group("title").startswith("Exercise"), (
            f"cell {cell_id}: '## {text}': an exercise is a '### Exercise N · `name` (P points)' "
            "heading inside a section; give the section a title of its own"
        )
    first = next(level for cell in cells[1:] for level, _ in headings(cell))
    assert first == 2, "the first heading after the title is a section: '## 1 · Title'"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_exercise_headings(assignment: str) -> None:
    """``### Exercise N · `name` (P points)``: the last heading before each solution cell,
    numbered through the notebook, naming the function and its points (course.toml's)."""
    entry = COURSE.notebook(assignment)
    count = 0
    pending: str | None = None  # the last exercise heading, until its solution cell
    last: str | None = None  # the last heading seen
    for cell in load(assignment).cells[1:]:
        for level, text in headings(cell):
            if level == 3 and text.lower().startswith("exercise"):
                assert pending is None, (
                    f"'### {pending}' has no solution cell before the next exercise heading: "
                    "an exercise heading stands right before its own solution cell"
                )
                count += 1
                pending = text
                assert EXERCISE.fullmatch(text), (
                    f"cell {cell.id}: '### {text}' must read "
                    f"'### Exercise {count} · `function_name` (P points)'"
                )
            elif level == 3:
                assert not re.match(r"\d", text), (
                    f"cell {cell.id}: subsection '### {text}' is numbered: only sections and "
                    "exercises carry numbers; write '### Title'"
                )
            last = text
        if not anatomy.is_solution_cell(cell):
            continue
        name = anatomy.grade_id(cell)
        number = count if pending is not None else count + 1
        want = f"Exercise {number} · `{name}` ({points_text(entry.exercise(name).points)})"
        assert pending is not None and last == pending, (
            f"the solution cell of {name} needs the heading '### {want}' in a markdown cell "
            f"above it, as the last heading before it (the last one now is {last!r})"
        )
        match = EXERCISE.fullmatch(pending)
        assert (int(match["number"]), match["name"], int(match["points"])) == (
            number,
            name,
            entry.exercise(name).points,
        ), (
            f"'### {pending}' must read '### {want}': exercises are numbered 1, 2, 3, ... "
            "through the notebook, name the function of the solution cell below, and give its "
            "points as course.toml does"
        )
        pending = None
    assert pending is None, f"'### {pending}' is not followed by a solution cell"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_summary_and_further_reading_close_the_notebook(assignment: str) -> None:
    cells = load(assignment).cells
    for cell, title in zip(cells[-2:], CLOSING, strict=True):
        assert cell.cell_type == "markdown" and headings(cell) == [(2, title)], (
            f"the last two cells are two markdown cells, '## Summary' then '## Further "
            f"reading', each with no other heading; cell {cell.id} is a {cell.cell_type} cell "
            f"with the headings {[text for _, text in headings(cell)]}: split or move them"
        )
        assert cell.source.startswith(f"## {title}"), (
            f"cell {cell.id} starts with its heading '## {title}'"
        )
    others = [c.id for c in cells[:-2] for _, text in headings(c) if text in CLOSING]
    assert not others, f"cells {others} hold a second Summary or Further reading heading"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_graded_cells_follow_the_contract(assignment: str) -> None:
    cells = load(assignment).cells
    ids = [nbgrader(c)["grade_id"] for c in cells if nbgrader(c)]
    assert len(ids) == len(set(ids)), f"duplicate grade_ids: {ids}"
    for cell in cells:
        if nbgrader(cell):
            assert set(nbgrader(cell)) <= NBGRADER_KEYS, f"unknown nbgrader keys in {cell.id}"

    solutions = {}
    for cell in cells:
        if nbgrader(cell).get("solution"):
            definitions = defined_names(cell.source)
            assert len(definitions) == 1, (
                f"solution cell {nbgrader(cell)['grade_id']} must hold exactly one def/class"
            )
            name, parameters = definitions[0]
            assert nbgrader(cell)["grade_id"] == name, "a solution cell's grade_id is its name"
            assert "### BEGIN SOLUTION" in cell.source
            solutions[name] = parameters
    entry = COURSE.notebook(assignment)
    expected = {exercise.name: list(exercise.contract) for exercise in entry.exercises}
    assert solutions == expected, (
        "the graded functions or their parameters differ from course.toml: "
        f"the notebook has {solutions}, course.toml {expected}"
    )

    points: dict[str, float] = defaultdict(float)
    hidden: dict[str, bool] = defaultdict(bool)
    for cell in cells:
        meta = nbgrader(cell)
        if meta.get("grade"):
            match = re.fullmatch(r"test_(.+?)(?:_(\d+))?", meta["grade_id"])
            assert match and match.group(1) in solutions, (
                f"test cell {meta['grade_id']} does not name a graded function"
            )
            assert meta.get("locked"), f"test cell {meta['grade_id']} must be locked"
            points[match.group(1)] += meta["points"]
            hidden[match.group(1)] |= "### BEGIN HIDDEN TESTS" in cell.source
            visible = cell.source.split("### BEGIN HIDDEN TESTS")[0]
            assert "check_" in visible or "assert" in visible, (
                f"{meta['grade_id']} has no visible test"
            )
    low, high = COURSE.function_points
    for name in solutions:
        assert hidden[name], f"{name} has no hidden tests"
        assert low <= points[name] <= high, f"{name} is worth {points[name]}, not {low} to {high}"
        assert points[name] == entry.exercise(name).points, (
            f"{name}'s test cells are worth {points[name]} points, course.toml says "
            f"{entry.exercise(name).points}"
        )
    low, high = COURSE.notebook_point_range(entry)
    total = sum(points.values())
    assert low <= total <= high, f"the notebook is worth {total} points, not {low} to {high}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_stored_outputs_are_clean(assignment: str) -> None:
    """The committed solution is executed top to bottom, without errors or warnings."""
    code = [c for c in load(assignment).cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), (
        f"solutions/{assignment} has unexecuted cells: run `make execute NB={assignment}`"
    )
    timed = [c.id for c in code if "execution" in c.metadata]
    assert not timed, (
        f"cells {timed} store execution timestamps, which change on every run: "
        "execute with `make execute` (record_timing=False)"
    )
    assert "widgets" not in load(assignment).metadata, (
        f"solutions/{assignment} stores widget state (hundreds of lines that change with every "
        "widget): execute with `make execute` (store_widget_state=False)"
    )
    counts = [c.execution_count for c in code]
    assert counts == list(range(1, len(code) + 1)), "cells were not executed in order once each"
    for cell in code:
        for output in cell.outputs:
            assert output.output_type != "error", f"cell {cell.id} stores an error"
            assert output.get("name") != "stderr", f"cell {cell.id} writes to stderr"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_readme_links_the_notebook_and_its_colab_badge(assignment: str) -> None:
    readme = (COURSE_ROOT / "README.md").read_text(encoding="utf-8")
    assert f"(notebooks/{assignment}/{assignment}.ipynb)" in readme
    assert f"({colab_url(assignment)})" in readme
