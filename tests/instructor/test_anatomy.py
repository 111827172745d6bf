"""instructor.anatomy: the parts of a notebook, found by tags and nbgrader metadata."""

from __future__ import annotations

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from instructor import anatomy, registry


def grader(**meta) -> dict:
    return {"nbgrader": {"schema_version": 3, **meta}}


def small_notebook() -> nbformat.NotebookNode:
    return new_notebook(
        cells=[
            new_markdown_cell("# 01 · T", metadata={"tags": ["badge"]}),
            new_code_cell("import sys", metadata={"tags": ["colab-setup"]}),
            new_code_cell("%matplotlib inline\nimport math", metadata={"tags": ["imports"]}),
            new_code_cell("x = 1  # a demo"),
            new_code_cell(
                "def f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION",
                metadata=grader(grade_id="f", solution=True, grade=False, locked=False),
            ),
            new_code_cell(
                "assert f(1) == 1\n### BEGIN HIDDEN TESTS\nassert f(2) == 2\n### END HIDDEN TESTS",
                metadata=grader(grade_id="test_f", grade=True, solution=False, locked=True),
            ),
            new_code_cell(
                "assert f(3) == 3",
                metadata=grader(grade_id="test_f_2", grade=True, solution=False, locked=True),
            ),
            new_markdown_cell("## 2 · Check your understanding"),
            new_code_cell(
                '### BEGIN SOLUTION\nq_size = "b"\n### END SOLUTION',
                metadata=grader(grade_id="q_size", solution=True, grade=False, locked=False),
            ),
            new_code_cell(
                "check_choice(q_size, 'q_size', options='ab')",
                metadata=grader(
                    grade_id="test_q_size", grade=True, solution=False, locked=True, points=1
                ),
            ),
            new_markdown_cell(
                "**Reference answer.** Because.\n\n**Rubric (2 points).**\n- 2 points: why",
                metadata=grader(
                    grade_id="written_why", solution=True, grade=True, locked=False, points=2
                ),
            ),
        ]
    )


def test_cells_found_by_metadata() -> None:
    notebook = small_notebook()
    assert [anatomy.grade_id(c) for c in anatomy.solution_cells(notebook)] == [
        "f",
        "q_size",
        "written_why",
    ]
    assert [anatomy.grade_id(c) for c in anatomy.function_cells(notebook)] == ["f"]
    assert [anatomy.grade_id(c) for c in anatomy.question_cells(notebook)] == ["q_size"]
    assert [anatomy.grade_id(c) for c in anatomy.written_cells(notebook)] == ["written_why"]
    assert [anatomy.grade_id(c) for c in anatomy.test_cells(notebook)] == [
        "test_f",
        "test_f_2",
        "test_q_size",
    ]
    assert anatomy.imports_cell(notebook).source.endswith("import math")
    assert anatomy.imports_source(notebook) == "import math"  # magics dropped


def test_solution_sources_drop_the_markers() -> None:
    sources = anatomy.solution_sources(small_notebook())
    assert sources["f"] == "def f(x):\n    return x"
    assert sources["q_size"] == 'q_size = "b"'
    assert sources["written_why"].startswith("**Reference answer.**")


def test_test_ids_map_to_their_function() -> None:
    assert anatomy.function_of_test("test_f_2") == "f"
    assert anatomy.function_of_test("test_soft_select") == "soft_select"
    assert anatomy.function_of_test("f") is None
    assert anatomy.function_of_test("test_q_saw_rows") == "q_saw_rows"
    ids = ["test_f", "test_f_2", "test_f_g", "test_g"]
    assert anatomy.tests_of("f", ids) == ["test_f", "test_f_2"]


def test_visible_part_stops_at_the_hidden_tests() -> None:
    source = anatomy.test_cells(small_notebook())[0].source
    assert anatomy.visible_part(source) == "assert f(1) == 1\n"


def test_visible_pass_message_is_the_print_that_ends_the_visible_part() -> None:
    source = 'check(f)\nprint("f: visible tests passed")\n### BEGIN HIDDEN TESTS\nprint("no")\n'
    assert anatomy.visible_pass_message(source) == "f: visible tests passed"
    for wrong in ["assert f(1) == 1\n", 'print(f"f: {x}")\n', 'print("a", "b")\n', ""]:
        with pytest.raises(ValueError, match="must end with print"):
            anatomy.visible_pass_message(wrong)


def test_complete_fills_answers_and_can_empty_demos() -> None:
    notebook = small_notebook()
    done = anatomy.complete(notebook, {"f": "def f(x):\n    return -x"}, demos=False)
    assert anatomy.solution_sources(done)["f"] == "def f(x):\n    return -x"
    assert done.cells[3].source == ""  # the demo
    assert "import math" in done.cells[2].source  # the imports cell stays
    assert anatomy.test_cells(done)[0].source.startswith("assert f(1)")  # tests stay
    assert notebook.cells[3].source == "x = 1  # a demo"  # the original is unchanged
    with pytest.raises(KeyError, match="f"):
        anatomy.complete(notebook, {})


def test_complete_fills_questions_and_leaves_unanswered_ones_as_released() -> None:
    notebook = small_notebook()
    function = {"f": "def f(x):\n    return x"}
    answered = anatomy.complete(notebook, {**function, "q_size": 'q_size = "a"'})
    assert anatomy.question_cells(answered)[0].source == 'q_size = "a"'
    # No answer to a question or a written answer: the cell stays as it was released.
    assert anatomy.written_cells(answered)[0].source == notebook.cells[-1].source
    untouched = anatomy.complete(notebook, function)
    assert anatomy.question_cells(untouched)[0].source == notebook.cells[-3].source
    # The kinds are told apart by metadata: a written answer is no function, nor a test.
    written = anatomy.written_cells(notebook)[0]
    assert not anatomy.is_function_cell(written) and not anatomy.is_test_cell(written)
    assert not anatomy.is_question_cell(written)


def test_a_notebook_without_one_imports_cell_is_named() -> None:
    notebook = small_notebook()
    notebook.cells[2].metadata["tags"] = []
    with pytest.raises(ValueError, match="tagged 'imports'; found 0"):
        anatomy.imports_cell(notebook)


@pytest.mark.parametrize("notebook_id", registry.load().ids)
def test_every_course_notebook_has_its_parts(notebook_id: str) -> None:
    solution = anatomy.read_solution(notebook_id)
    entry = registry.load().notebook(notebook_id)
    names = [e.name for e in entry.exercises]
    assert sorted(anatomy.grade_id(c) for c in anatomy.function_cells(solution)) == sorted(names)
    questions = [q.name for q in entry.questions]
    assert sorted(anatomy.solution_sources(solution)) == sorted(names + questions)
    assert "start_notebook()" in anatomy.imports_cell(solution).source
    released = anatomy.read_released(notebook_id)
    assert "start_notebook()" in anatomy.imports_cell(released).source


def test_reference_functions_run_from_the_solutions() -> None:
    functions = anatomy.reference_functions("03_matrix_form", ("causal_mask",))
    mask = functions["causal_mask"](3)
    assert mask.shape == (3, 3) and bool(mask[2, 0]) and not bool(mask[0, 2])
    with pytest.raises(KeyError, match="no graded function"):
        anatomy.reference_functions("03_matrix_form", ("q_double_length",))
