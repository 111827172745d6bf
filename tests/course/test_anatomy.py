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
from instructor.colab import badge_markdown, colab_setup_source, landing_url
from instructor.facts import stated_points
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


def defined_names(source: str) -> list[str]:
    """The name of each top-level def/class in a cell."""
    return [
        node.name
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef | ast.ClassDef)
    ]


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
def test_first_cell_lists_the_graded_exercises(assignment: str) -> None:
    """The badge cell's "**Graded exercises (N points):**" line names every graded function
    with its points, in the registry's order, and their total."""
    entry = COURSE.notebook(assignment)
    intro = " ".join(load(assignment).cells[0].source.split())
    found = re.search(r"\*\*Graded exercises \((\d+) points?\):\*\* (.*?)\.(?: |$)", intro)
    assert found, (
        "the first cell needs a line '**Graded exercises (N points):** `name` (points), ...'"
    )
    total, listed = int(found.group(1)), re.findall(r"`(\w+)` \((\d+)\)", found.group(2))
    expected = [(exercise.name, str(exercise.points)) for exercise in entry.exercises]
    assert listed == expected, (
        f"the first cell lists the graded exercises as {listed}; course.toml says {expected}"
    )
    assert total == entry.function_points, (
        f"'Graded exercises ({total} points)': course.toml's functions are worth "
        f"{entry.function_points}"
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
        if not anatomy.is_function_cell(cell):
            continue
        name = anatomy.grade_id(cell)
        number = count if pending is not None else count + 1
        want = f"Exercise {number} · `{name}` ({stated_points(entry.exercise(name).points)})"
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

    solutions = []
    for cell in cells:
        if anatomy.is_function_cell(cell):
            definitions = defined_names(cell.source)
            assert len(definitions) == 1, (
                f"solution cell {nbgrader(cell)['grade_id']} must hold exactly one def/class"
            )
            (name,) = definitions
            assert nbgrader(cell)["grade_id"] == name, "a solution cell's grade_id is its name"
            assert "### BEGIN SOLUTION" in cell.source
            solutions.append(name)
    entry = COURSE.notebook(assignment)
    expected = [exercise.name for exercise in entry.exercises]
    assert solutions == expected, (
        "the graded functions differ from course.toml, or their order: "
        f"the notebook has {solutions}, course.toml {expected}"
    )
    questions = {anatomy.grade_id(cell) for cell in anatomy.question_cells(load(assignment))}

    points: dict[str, float] = defaultdict(float)
    hidden: dict[str, bool] = defaultdict(bool)
    for cell in cells:
        meta = nbgrader(cell)
        if anatomy.is_test_cell(cell):
            match = re.fullmatch(r"test_(.+?)(?:_(\d+))?", meta["grade_id"])
            assert match and match.group(1) in {*solutions, *questions}, (
                f"test cell {meta['grade_id']} does not name a graded function or question"
            )
            assert meta.get("locked"), f"test cell {meta['grade_id']} must be locked"
            points[match.group(1)] += meta["points"]
            hidden[match.group(1)] |= "### BEGIN HIDDEN TESTS" in cell.source
            visible = cell.source.split("### BEGIN HIDDEN TESTS")[0]
            assert "check_" in visible or "assert" in visible, (
                f"{meta['grade_id']} has no visible test"
            )
            # What tells a visible failure from a hidden one in a graded notebook.
            anatomy.visible_pass_message(cell.source)
        elif anatomy.is_written_cell(cell):
            points[meta["grade_id"]] += meta["points"]
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
    assert low <= total <= high, (
        f"{assignment} is worth {total} points (functions and questions), not {low} to {high}: "
        "add or remove an exercise or a question"
    )
    assert total == entry.points, (
        f"{assignment}'s graded cells are worth {total} points, course.toml's entry {entry.points}"
    )


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
    assert f"({landing_url(assignment)})" in readme


# Every place that names where students get the course: a Colab badge or a GitHub link
# (".../github/<owner>/<name>/blob/<ref>/..." or "github.com/<owner>/<name>/blob/<ref>/...")
# and a set-up cell's install ("git+https://github.com/<owner>/<name>@<ref>").
COURSE_LINK = re.compile(r"github(?:\.com)?/(?P<repository>[\w.-]+/[\w.-]+)/blob/(?P<ref>[\w.-]+)/")
INSTALL = re.compile(r"git\+https://github\.com/(?P<repository>[\w.-]+/[\w.-]+)@(?P<ref>[\w./-]+)")
PIP_INSTALL = re.compile(r"%pip install --quiet (?!--no-deps)(?P<packages>.*)")


def course_sources() -> list[tuple[str, str]]:
    """(where, text) of the README and of every cell of every solution and student
    notebook."""
    found = [("README.md", (COURSE_ROOT / "README.md").read_text(encoding="utf-8"))]
    for folder in ("solutions", "notebooks"):
        for assignment in ASSIGNMENTS:
            path = COURSE_ROOT / folder / assignment / f"{assignment}.ipynb"
            for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
                found.append((f"{folder}/{assignment} cell {index}", cell.source))
    return found


def test_badges_and_setup_cells_name_the_registrys_repository_and_ref() -> None:
    """The README's badges, the notebooks' badges and their set-up cells agree with
    course.toml's ``repository`` and ``ref``, and the set-up cells install exactly the
    registry's pinned ``colab_packages``: a fork or a release changes course.toml, then
    ``make release`` and ``make readme`` (docs/publishing.md)."""
    expected = (COURSE.repository, COURSE.ref)
    wrong = [
        f"{where}: {match.group(0)!r}"
        for where, text in course_sources()
        for pattern in (COURSE_LINK, INSTALL)
        for match in pattern.finditer(text)
        if (match["repository"], match["ref"]) != expected
    ]
    assert not wrong, (
        f"these name another repository or ref than course.toml's {COURSE.repository}@"
        f"{COURSE.ref}; run `make release` and `make readme` (and `make execute` for a solution "
        "whose set-up cell is stale): " + "; ".join(wrong)
    )
    installs = [where for where, text in course_sources() if INSTALL.search(text)]
    assert len(installs) == 2 * len(ASSIGNMENTS), (
        f"one set-up cell per solution and student notebook installs the course: {installs}"
    )
    for assignment in ASSIGNMENTS:
        setup = load(assignment).cells[1].source
        extra = [m["packages"] for m in PIP_INSTALL.finditer(setup)]
        packages = COURSE.notebook(assignment).colab_packages
        expected_extra = [" ".join(f'"{p}"' for p in packages)] if packages else []
        assert extra == expected_extra, (
            f"{assignment}'s set-up cell installs {extra}; course.toml's colab_packages "
            f"are {list(packages)} (pinned, name==version)"
        )


def mystnb_alt(cell: nbformat.NotebookNode) -> str:
    return str(cell.metadata.get("mystnb", {}).get("image", {}).get("alt", "")).strip()


ALT_MIN_WORDS = 5
FILE_PATH = re.compile(r"^\S*[/\\]\S*$|\.(png|jpe?g|svg|gif)\b", re.IGNORECASE)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_figure_has_alt_text(assignment: str) -> None:
    """A code cell with an image output carries its figure's alt text in the metadata MyST-NB
    reads for the website (``"mystnb": {"image": {"alt": "..."}}``): a sentence saying what
    the figure shows, at least 5 words, not a file name. It survives ``make release``."""
    problems = []
    for index, cell in enumerate(load(assignment).cells):
        if cell.cell_type != "code" or not any(
            "image/png" in output.get("data", {}) for output in cell.outputs
        ):
            continue
        alt = mystnb_alt(cell)
        if len(alt.split()) < ALT_MIN_WORDS or FILE_PATH.search(alt):
            problems.append(f"cell {index} ({cell.get('id')}): {alt!r}")
    assert not problems, (
        f"solutions/{assignment}: figure cells need metadata "
        '"mystnb": {"image": {"alt": "<one sentence: what the figure shows>"}} of at least '
        f"{ALT_MIN_WORDS} words, not a file path: " + "; ".join(problems)
    )
    released = nbformat.read(
        COURSE_ROOT / "notebooks" / assignment / f"{assignment}.ipynb", as_version=4
    )
    solution_alts = {c.get("id"): mystnb_alt(c) for c in load(assignment).cells if mystnb_alt(c)}
    released_alts = {c.get("id"): mystnb_alt(c) for c in released.cells if mystnb_alt(c)}
    assert released_alts == solution_alts, (
        f"notebooks/{assignment} lacks the alt texts of solutions/{assignment}: `make release`"
    )


# The "Check your understanding" section (CONTRIBUTING.md; instructor/templates/notebook.ipynb
# shows one): the last numbered section, right before '## Summary' (or before an optional
# '## N · Going further ...' section, which stays ungraded at the end), holding the notebook's
# concept questions and written answers, each as these cells in this order:
#
#   concept question   markdown  **Question K** · <question>, the options "- (a) ...",
#                                "Answer by setting `q_x` to one letter, e.g. `q_x = "a"`."
#                                (a number question: "... `q_x` to a number, e.g. ...")
#                      code      solution cell q_x: ### BEGIN SOLUTION / q_x = "b" / ### END ...
#                      code      test cell test_q_x, locked, 1 point: check_choice (or
#                                check_number) visible without `correct`, hidden with it
#   written answer     markdown  **Written answer** (2 points, graded by hand) · <question>
#                      markdown  answer cell written_x (solution and graded, 2 points):
#                                **Reference answer.** ... **Rubric (2 points).** - 1 point: ...
CHECK_SECTION = re.compile(r"\d+ · Check your understanding")
OPTIONAL = re.compile(r"\d+ · Going further")  # ungraded sections (tests/course/test_time.py)
CONCEPT_QUESTIONS = (2, 4)
WRITTEN_ANSWERS_IN_THE_COURSE = 4
QUESTION_SOLUTION = re.compile(
    r"### BEGIN SOLUTION\n(?P<name>\w+) = (?P<value>[^\n]+)\n### END SOLUTION\n?"
)
OPTION = re.compile(r"- \((?P<letter>[a-z])\) \S")
RUBRIC_ITEM = re.compile(r"- (?P<points>\d+) points?: \S")
CHECKER = {"choice": "check_choice", "number": "check_number"}
QUESTION_META = {
    "grade": False, "solution": True, "locked": False, "task": False, "schema_version": 3,
}  # fmt: skip
TEST_META = {"grade": True, "solution": False, "locked": True, "task": False, "schema_version": 3}
WRITTEN_META = {
    "grade": True,
    "solution": True,
    "locked": False,
    "task": False,
    "schema_version": 3,
}


def check_section_bounds(assignment: str) -> tuple[int, int]:
    """The index of the '## N · Check your understanding' cell, and that of the cell that
    ends the section ('## Summary', or an optional '## N · Going further' section)."""
    cells = load(assignment).cells
    found = [
        i for i, cell in enumerate(cells) for level, text in headings(cell)
        if level == 2 and CHECK_SECTION.fullmatch(text)
    ]  # fmt: skip
    assert len(found) == 1, (
        f"{assignment}: {len(found)} '## N · Check your understanding' sections; the notebook "
        "needs exactly one, the last numbered section, right before '## Summary' (see "
        "instructor/templates/notebook.ipynb)"
    )
    start, summary = found[0], len(cells) - 2
    later = [
        (i, cell.id, text) for i, cell in enumerate(cells[start + 1 : summary], start + 1)
        for level, text in headings(cell) if level == 2
    ]  # fmt: skip
    required = [(cell_id, text) for _, cell_id, text in later if not OPTIONAL.match(text)]
    assert not required, (
        f"{assignment}: sections {required} come between 'Check your understanding' (cell "
        f"{cells[start].id}) and '## Summary': move the questions' section to the end, right "
        "before the Summary (only an optional '## N · Going further ...' section may follow it)"
    )
    return start, later[0][0] if later else summary


def _call(source: str, function: str) -> list[ast.Call]:
    return [
        node for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == function
    ]  # fmt: skip


def _keywords(call: ast.Call) -> dict[str, ast.expr]:
    return {keyword.arg: keyword.value for keyword in call.keywords}


def answer_kind(cells: list[nbformat.NotebookNode], index: int) -> str:
    """What kind of question the answer cell ``cells[index]`` answers, as the notebook shows
    it: written (a markdown answer), number (its test calls check_number) or choice."""
    if anatomy.is_written_cell(cells[index]):
        return "written"
    following = cells[index + 1] if index + 1 < len(cells) else None
    if following is not None and "check_number(" in following.source:
        return "number"
    return "choice"


def check_concept_question(
    assignment: str,
    number: int,
    question: registry.Question,
    prompt: nbformat.NotebookNode,
    solution: nbformat.NotebookNode,
    test: nbformat.NotebookNode | None,
    imports: dict,
) -> None:
    """One concept question's three cells (see the comment above); ``imports``: the names
    the notebook's imports cell defines."""
    name, kind = question.name, question.kind
    where = f"{assignment}, question {name}"
    assert prompt.cell_type == "markdown" and prompt.source.startswith(
        f"**Question {number}** · "
    ), (
        f"{where}: the cell {prompt.id} above the answer cell must be the question, a markdown "
        f"cell starting '**Question {number}** · ' (questions are numbered 1, 2, ... through "
        "the section)"
    )
    how = "one letter" if kind == "choice" else "a number"
    last = " ".join(prompt.source.rstrip().split("\n\n")[-1].split())  # its last paragraph
    assert re.fullmatch(rf"Answer by setting `{name}` to {how}, e\.g\. `{name} = [^`]+`\.", last), (
        f"{where}: the question (cell {prompt.id}) ends with the paragraph 'Answer by setting "
        f"`{name}` to {how}, e.g. `{name} = ...`.', not {last!r}"
    )
    letters = "".join(
        match["letter"] for line in prompt.source.splitlines() if (match := OPTION.match(line))
    )
    if kind == "choice":
        assert len(letters) >= 3 and letters == "abcdefgh"[: len(letters)], (
            f"{where}: the options (cell {prompt.id}) are a list '- (a) ...', '- (b) ...', ... "
            f"with at least three letters in order; found {letters!r}"
        )

    assert nbgrader(solution) == {**QUESTION_META, "grade_id": name}, (
        f"{where}: the answer cell {solution.id} needs the nbgrader metadata "
        f"{ {**QUESTION_META, 'grade_id': name} }, not {nbgrader(solution)}"
    )
    match = QUESTION_SOLUTION.fullmatch(solution.source)
    assert match and match["name"] == name, (
        f"{where}: the answer cell {solution.id} must be exactly '### BEGIN SOLUTION', "
        f"'{name} = <answer>', '### END SOLUTION'"
    )
    if kind == "choice":
        assert re.fullmatch(r'"[a-z]"', match["value"]) and match["value"][1] in letters, (
            f'{where}: the answer cell {solution.id} sets {name} to one of the letters "'
            f'{letters}" in quotes, e.g. {name} = "b"; it sets {match["value"]}'
        )

    assert test is not None and anatomy.grade_id(test) == f"test_{name}", (
        f"{where}: the answer cell {solution.id} must be followed by its test cell "
        f"test_{name} (code, locked, {question.points} point)"
    )
    assert nbgrader(test) == {**TEST_META, "grade_id": f"test_{name}", "points": question.points}, (
        f"{where}: the test cell {test.id} needs the nbgrader metadata "
        f"{ {**TEST_META, 'grade_id': f'test_{name}', 'points': question.points} }, "
        f"not {nbgrader(test)}"
    )
    visible, _, hidden = test.source.partition(anatomy.HIDDEN_TESTS_MARKER)
    checker = CHECKER[kind]
    assert f"from helpers.checks import {checker}" in visible, (
        f"{where}: the test cell {test.id} imports {checker} from helpers.checks ({kind} question)"
    )
    shown = [c for c in _call(visible, checker) if "correct" not in _keywords(c)]
    secret = [c for c in _call(hidden, checker) if "correct" in _keywords(c)]
    assert shown, (
        f"{where}: the test cell {test.id} calls {checker}({name}, {name!r}"
        f"{', options=...' if kind == 'choice' else ''}) in its visible part (the form only) "
        f"and, inside '### BEGIN HIDDEN TESTS', the same call with correct=... (the answer)"
    )
    assert secret, (
        f"{where}: the hidden tests of cell {test.id} call {checker}(..., correct=...): the "
        "answer is checked only when graded"
    )
    assert all("why" in _keywords(c) for c in secret), (
        f"{where}: the hidden tests of cell {test.id} call {checker}(..., correct=..., why=...): "
        "a wrong answer's feedback explains the right answer's reason"
    )
    for call in shown + secret:
        arguments = [ast.unparse(a) for a in call.args[:2]]
        literal = (
            call.args[1].value
            if len(call.args) > 1 and isinstance(call.args[1], ast.Constant)
            else None
        )
        assert arguments[:1] == [name] and literal == name, (
            f"{where}: cell {test.id} calls {checker}({', '.join(arguments)}, ...); the first "
            f'two arguments are the variable and its name: {checker}({name}, "{name}", ...)'
        )
    if kind == "choice":
        for call in shown + secret:
            options = _keywords(call).get("options")
            assert options is not None and ast.literal_eval(options) == letters, (
                f"{where}: cell {test.id} gives {checker} options="
                f"{ast.unparse(options) if options else 'nothing'}; the question lists "
                f'"{letters}": write options="{letters}"'
            )
    else:
        assert all("relative_tolerance" in _keywords(call) for call in secret), (
            f"{where}: the hidden check_number of cell {test.id} states relative_tolerance= "
            "(0 for a count)"
        )
    # The reference answer passes its own test cell, hidden tests included (after the
    # notebook's imports, which the test cell may use).
    namespace = dict(imports)
    exec(anatomy.strip_solution_markers(solution.source), namespace)  # noqa: S102
    try:
        exec(test.source, namespace)  # noqa: S102
    except AssertionError as error:
        raise AssertionError(
            f"{where}: the reference answer {match['value']} fails its test cell {test.id}: {error}"
        ) from None


def check_written_answer(
    assignment: str,
    question: registry.Question,
    prompt: nbformat.NotebookNode,
    answer: nbformat.NotebookNode,
) -> None:
    """One written answer's two cells (see the comment above)."""
    name, points = question.name, question.points
    where = f"{assignment}, written answer {name}"
    head = f"**Written answer** ({stated_points(points)}, graded by hand) · "
    assert prompt.cell_type == "markdown" and prompt.source.startswith(head), (
        f"{where}: the cell {prompt.id} above the answer cell must be the question, a markdown "
        f"cell starting {head!r}, saying what a full answer covers"
    )
    assert nbgrader(answer) == {**WRITTEN_META, "grade_id": name, "points": points}, (
        f"{where}: the answer cell {answer.id} (markdown) needs the nbgrader metadata "
        f"{ {**WRITTEN_META, 'grade_id': name, 'points': points} }, not {nbgrader(answer)}"
    )
    source = answer.source
    assert source.startswith("**Reference answer.** "), (
        f"{where}: the answer cell {answer.id} starts with '**Reference answer.** ' and a "
        "model answer of 3 to 6 sentences"
    )
    rubric = f"**Rubric ({stated_points(points)}).**"
    assert f"\n\n{rubric}\n" in source, (
        f"{where}: the answer cell {answer.id} has, after the reference answer and an empty "
        f"line, the line {rubric!r}, then the criteria as '- 1 point: ...'"
    )
    items = source.split(rubric, 1)[1].strip().split("\n- ")
    worth = [RUBRIC_ITEM.match("- " + item.removeprefix("- ")) for item in items]
    assert all(worth), (
        f"{where}: the rubric of cell {answer.id} is a list of criteria, each '- N point(s): "
        f"what a grader checks'; found {[item.splitlines()[0] for item in items]}"
    )
    total = sum(int(m["points"]) for m in worth)
    assert total == points, (
        f"{where}: the rubric of cell {answer.id} gives {total} points; the answer is worth "
        f"{points}: make its criteria add up to {points}"
    )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_check_your_understanding(assignment: str) -> None:
    """2 to 4 concept questions (and any written answers), in the section right before the
    Summary, each in its cells as above, as course.toml lists them."""
    entry = COURSE.notebook(assignment)
    cells = load(assignment).cells
    start, summary = check_section_bounds(assignment)
    last_function = max(
        (i for i, c in enumerate(cells) if anatomy.is_function_cell(c)
         or (anatomy.is_test_cell(c) and not anatomy.grade_id(c).startswith("test_q_"))),
        default=-1,
    )  # fmt: skip
    assert last_function < start, (
        f"{assignment}: 'Check your understanding' (cell {cells[start].id}) comes before the "
        f"exercise cell {cells[last_function].id}: place it after the last exercise and its "
        "demo, right before '## Summary'"
    )
    answers = [
        (i, c) for i, c in enumerate(cells)
        if anatomy.is_question_cell(c) or anatomy.is_written_cell(c)
    ]  # fmt: skip
    outside = [c.id for i, c in answers if not start < i < summary]
    assert not outside, (
        f"{assignment}: the answer cells {outside} lie outside 'Check your understanding' "
        f"(from cell {cells[start].id} to cell {cells[summary].id}): move each question with "
        "its cells into that section"
    )
    found = [
        registry.Question(anatomy.grade_id(c), answer_kind(cells, i), nbgrader(c).get("points", 1))
        for i, c in answers
    ]
    assert [(q.name, q.kind, q.points) for q in found] == [
        (q.name, q.kind, q.points) for q in entry.questions
    ], (
        f"{assignment}: the notebook asks {[(q.name, q.kind, q.points) for q in found]}, "
        f"course.toml lists {[(q.name, q.kind, q.points) for q in entry.questions]}: list every "
        "question as a [[notebook.question]] (name, kind, points) in the notebook's order"
    )
    low, high = CONCEPT_QUESTIONS
    concept = entry.concept_questions
    assert low <= len(concept) <= high, (
        f"{assignment} has {len(concept)} autograded concept questions; a notebook has "
        f"{low} to {high} (1 point each) in its 'Check your understanding' section"
    )
    imports: dict = {}
    exec(anatomy.imports_source(load(assignment)), imports)  # noqa: S102
    number = 0
    for (i, cell), question in zip(answers, entry.questions, strict=True):
        prompt = cells[i - 1]
        if question.autograded:
            number += 1
            test = cells[i + 1] if i + 1 < summary else None
            check_concept_question(assignment, number, question, prompt, cell, test, imports)
        else:
            check_written_answer(assignment, question, prompt, cell)


def test_the_course_has_written_answers() -> None:
    written = [(n.id, q.name) for n in COURSE.notebooks for q in n.written_answers]
    assert len(written) >= WRITTEN_ANSWERS_IN_THE_COURSE, (
        f"the course has {len(written)} written answers {written}; it needs at least "
        f"{WRITTEN_ANSWERS_IN_THE_COURSE} (one each in 03, 05, 07 and 10): add a "
        "'**Written answer**' with its answer cell and a [[notebook.question]] of kind "
        '"written" (see instructor/templates/notebook.ipynb)'
    )
