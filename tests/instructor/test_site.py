"""The website's student view (``instructor/site.py``): what a page may show, without a build.

A small instructor notebook and its student version are made here (badge, prose, a demo
with a figure and a slider, a solution cell, a test cell with hidden tests); then the
course's own notebooks are checked the same way.
"""

from __future__ import annotations

import base64
from dataclasses import replace

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from instructor import anatomy, colab, registry, site
from instructor.paths import released_path

URL = "https://colab.research.google.com/github/o/r/blob/main/notebooks/x/x.ipynb"
PNG = base64.b64encode(b"\x89PNG fake").decode()
SOLUTION_LINE = "return torch.arange(n) * secret_factor"
ALT = "A bar chart of four weights that sum to one"
# An alt text says what a figure shows: a few words, not a file name.
ALT_WORDS = 4


def nbgrader(grade_id: str, *, solution: bool, grade: bool) -> dict:
    return {
        "nbgrader": {
            "grade_id": grade_id,
            "solution": solution,
            "grade": grade,
            "locked": not solution,
            "schema_version": 3,
        }
    }


def pair() -> tuple[nbformat.NotebookNode, nbformat.NotebookNode]:
    """(instructor notebook, executed; student notebook) with the same cell ids."""
    badge = new_markdown_cell(
        f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({URL})"
        "\n\n# 99 · A title\n\nSome math: $x^2$.",
        id="intro",
        metadata={"tags": ["badge"]},
    )
    demo = new_code_cell(
        "plot()",
        id="demo",
        execution_count=3,
        metadata={"mystnb": {"image": {"alt": ALT}}},
        outputs=[
            new_output("stream", name="stdout", text="demo says hi\n"),
            new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"}),
            new_output(
                "display_data",
                data={
                    "application/vnd.jupyter.widget-view+json": {"model_id": "1"},
                    "text/plain": "VBox(children=(IntSlider(value=2)))",
                },
            ),
        ],
    )
    solution = new_code_cell(
        "def f(n):\n    ### BEGIN SOLUTION\n    " + SOLUTION_LINE + "\n    ### END SOLUTION",
        id="f-solution",
        execution_count=4,
        outputs=[new_output("stream", name="stdout", text="solution output\n")],
        metadata=nbgrader("f", solution=True, grade=False),
    )
    test = new_code_cell(
        "assert f(1) == 0\n### BEGIN HIDDEN TESTS\nassert f(2) == 7\n### END HIDDEN TESTS",
        id="test-f",
        execution_count=5,
        outputs=[new_output("stream", name="stdout", text="visible test passed\n")],
        metadata=nbgrader("test_f", solution=False, grade=True),
    )
    prose = new_markdown_cell("After the exercise: $$y = f(x)$$", id="outro")
    instructor = new_notebook(cells=[badge, demo, solution, test, prose])
    instructor.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {}}

    student = nbformat.from_dict(instructor)
    for cell in student.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    student.cells[2].source = "def f(n):\n    # YOUR CODE HERE\n    raise NotImplementedError()"
    student.cells[3].source = "assert f(1) == 0\n"
    return instructor, student


def test_test_cells_are_dropped() -> None:
    view = site.student_view(*pair())
    assert [cell.id for cell in view.cells] == ["intro", "demo", "f-solution", "outro"]
    assert not any(anatomy.is_test_cell(cell) for cell in view.cells)


def test_solution_cells_are_the_students_stubs_without_output() -> None:
    instructor, student = pair()
    cell = next(c for c in site.student_view(instructor, student).cells if c.id == "f-solution")
    assert cell.source == student.cells[2].source
    assert cell.outputs == [] and cell.execution_count is None


def test_other_cells_keep_their_stored_outputs() -> None:
    instructor, student = pair()
    view = site.student_view(instructor, student)
    demo = next(c for c in view.cells if c.id == "demo")
    assert demo.execution_count == 3
    assert demo.outputs[0].text == "demo says hi\n"
    assert demo.outputs[1].data["image/png"] == PNG
    # the slider's widget (nothing without a kernel) is gone, its static figure stays
    assert len(demo.outputs) == 2
    # with its alt text, in the cell's metadata where MyST-NB reads it
    assert demo.metadata["mystnb"] == {"image": {"alt": ALT}}
    assert view.cells[-1].source == instructor.cells[-1].source
    assert "widgets" not in view.metadata


def test_the_badge_becomes_a_local_link_to_the_same_notebook() -> None:
    badge = site.student_view(*pair()).cells[0]
    assert "colab-badge.svg" not in badge.source
    assert site.colab_link(URL) in badge.source
    assert "# 99 · A title" in badge.source and "$x^2$" in badge.source


def test_nothing_of_the_instructor_leaks() -> None:
    instructor, student = pair()
    view = site.student_view(instructor, student)
    text = nbformat.writes(view)
    for marker in (*site.INSTRUCTOR_MARKERS, SOLUTION_LINE, "assert f(2) == 7", "solution output"):
        assert marker not in text
    assert not any("nbgrader" in cell.metadata for cell in view.cells)
    # the inputs are left as they were
    assert SOLUTION_LINE in instructor.cells[2].source and len(instructor.cells) == 5


def test_a_solution_cell_without_a_stub_is_an_error() -> None:
    instructor, student = pair()
    student.cells[2].id = "renamed"
    with pytest.raises(ValueError, match="f-solution"):
        site.student_view(instructor, student)


def test_a_marker_outside_the_solution_cells_is_an_error() -> None:
    instructor, student = pair()
    instructor.cells[1].source = "### BEGIN SOLUTION\nplot()"
    with pytest.raises(ValueError, match="demo"):
        site.student_view(instructor, student)


@pytest.mark.parametrize("notebook_id", registry.load().ids)
def test_the_course_notebooks_student_views(notebook_id: str) -> None:
    solution = anatomy.read_solution(notebook_id)
    released = anatomy.read_released(notebook_id)
    view = site.student_view(solution, released)
    assert not site.leaks(view)
    assert not any(anatomy.is_test_cell(cell) for cell in view.cells)
    stubs = {cell.id: cell.source for cell in anatomy.solution_cells(released)}
    for cell in anatomy.solution_cells(view):
        assert cell.source == stubs[cell.id]
    # A written answer's rubric items (notes, criteria) are the grader's, never the page's.
    assert not [cell.id for cell in view.cells if "rubric" in cell.metadata]
    assert colab.colab_url(notebook_id) in view.cells[0].source
    figures = [
        cell
        for cell in view.cells
        if any("image/png" in output.get("data", {}) for output in cell.get("outputs", ()))
    ]
    assert figures, "no figure on the page"
    for cell in figures:
        alt = cell.metadata.get("mystnb", {}).get("image", {}).get("alt", "")
        assert len(alt.split()) >= ALT_WORDS and not alt.lower().endswith(".png"), (
            f"cell {cell.id}: a figure needs the alt text that says what it shows "
            '(metadata {"mystnb": {"image": {"alt": ...}}} in solutions/)'
        )


def test_the_landing_page_lists_the_notebooks_in_order() -> None:
    course = registry.load()
    page = site.landing_page(course, (site.CONF_DIR / "index.md").read_text())
    assert "{{" not in page
    positions = [page.index(f"({n.id}/{n.id}.ipynb)") for n in course.notebooks]
    assert positions == sorted(positions)
    for notebook in course.notebooks:
        assert f"{notebook.minutes} min" in page
        assert colab.landing_url(notebook.id) in page
    with pytest.raises(KeyError, match="nope"):
        site.landing_page(course, "{{ nope }}")


def test_the_landing_pages_times_are_the_registrys() -> None:
    course = registry.load()
    minutes = [notebook.minutes for notebook in course.notebooks]
    page = site.landing_page(course, (site.CONF_DIR / "index.md").read_text())
    assert " ".join(page.split()).count(f"each take {min(minutes)} to {max(minutes)} minutes") == 1
    assert f"About {sum(minutes)} minutes" in page
    assert "half an hour" not in page
    shorter = [replace(n, minutes=5) for n in course.notebooks]
    page = site.landing_page(replace(course, notebooks=shorter), "{{ shortest }}-{{ longest }}")
    assert page == "5-5"


def test_the_download_button_gives_the_student_notebooks(tmp_path) -> None:
    ids = registry.load().ids
    for notebook_id in ids:
        page_source = tmp_path / "_sources" / notebook_id / f"{notebook_id}.ipynb"
        page_source.parent.mkdir(parents=True)
        page_source.write_text("the student view, without the tests")
    replaced = site.downloadable_notebooks(tmp_path)
    assert len(replaced) == len(ids)
    for notebook_id, path in zip(ids, replaced, strict=True):
        assert path.read_bytes() == released_path(notebook_id).read_bytes()
    (tmp_path / "_sources" / ids[0] / f"{ids[0]}.ipynb").unlink()
    with pytest.raises(RuntimeError, match=ids[0]):
        site.downloadable_notebooks(tmp_path)


def test_the_landing_figure_is_a_stored_png() -> None:
    notebook_id, cell_id = site.LANDING_FIGURE
    assert site.stored_figure(anatomy.read_solution(notebook_id), cell_id).startswith(b"\x89PNG")
