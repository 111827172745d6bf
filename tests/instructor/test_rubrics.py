"""The written answers' rubrics as data (``instructor/rubrics.py``, issue 47): the course's
four are valid, add up to their points, generate their prose rubric, and never reach the
student version; a malformed rubric is refused with a message naming where."""

from __future__ import annotations

import copy
import json

import nbformat
import pytest
from traitlets.config.loader import PyFileConfigLoader

from instructor import anatomy, registry
from instructor.new_notebook import NOTEBOOK_TEMPLATE
from instructor.paths import AUTOGRADER, NOTEBOOKS, solution_path
from instructor.rubrics import (
    METADATA_KEY,
    RubricError,
    StripRubrics,
    course_rubrics,
    notebook_rubrics,
    parse_cell,
    prose,
    sync_notebook,
)
from support.cells import written_answer_cell

WITH_WRITTEN = [n.id for n in registry.load().notebooks if n.written_answers]
ITEMS = [
    {"id": "why", "label": "says why", "points": 1, "note": "You said why.",
     "criterion": "why the rows are equal"},
    {"id": "what", "label": "says what", "points": 1, "note": "You said what 05 adds."},
]  # fmt: skip


def _cell(items: object, points: float = 2) -> nbformat.NotebookNode:
    cell = written_answer_cell(
        "**Reference answer.** Because.\n\n**Rubric (2 points).**\n- 2 points: why",
        "written_x",
        points,
    )
    cell.metadata[METADATA_KEY] = {"items": items}
    return cell


def test_the_courses_rubrics_are_data_and_add_up() -> None:
    rubrics = course_rubrics()
    assert sorted(rubrics) == sorted(
        q.name for n in registry.load().notebooks for q in n.written_answers
    )
    for name, rubric in rubrics.items():
        assert rubric.points == 2 and sum(i.points for i in rubric.items) == 2, name
        assert rubric.reference.startswith("**Reference answer.** "), name
        assert all(i.note and i.label and i.criterion for i in rubric.items), name


@pytest.mark.parametrize("notebook_id", WITH_WRITTEN)
def test_the_prose_rubric_is_generated_from_the_items(notebook_id: str) -> None:
    notebook = nbformat.read(solution_path(notebook_id), as_version=4)
    assert sync_notebook(notebook, notebook_id, write=False) == [], (
        f"solutions/{notebook_id}: the prose rubric differs from its items: run "
        "`python -m instructor.rubrics sync`"
    )


@pytest.mark.parametrize("notebook_id", WITH_WRITTEN)
def test_the_student_version_holds_no_rubric(notebook_id: str) -> None:
    text = (NOTEBOOKS / notebook_id / f"{notebook_id}.ipynb").read_text(encoding="utf-8")
    released = nbformat.reads(text, as_version=4)
    assert not [c for c in released.cells if METADATA_KEY in c.metadata]
    for rubric in course_rubrics().values():
        for item in rubric.items:
            assert item.note not in text and json.dumps(item.note)[1:-1] not in text
            assert item.criterion[:50] not in text


def test_generate_assignment_strips_the_rubric() -> None:
    config = PyFileConfigLoader("nbgrader_config.py", path=str(AUTOGRADER)).load_config()
    assert StripRubrics in config.GenerateAssignment.preprocessors
    notebook = nbformat.v4.new_notebook(cells=[_cell(ITEMS)])
    stripped, _ = StripRubrics().preprocess(copy.deepcopy(notebook), {})
    assert METADATA_KEY not in stripped.cells[0].metadata
    assert stripped.cells[0].metadata["nbgrader"] == notebook.cells[0].metadata["nbgrader"]


def test_prose_and_scores() -> None:
    rubric = parse_cell(_cell([*ITEMS, {"id": "long", "label": "too long", "points": -0.5,
                                        "note": "Shorter, please."}]), "03_x")  # fmt: skip
    assert prose(rubric) == (
        "**Rubric (2 points).**\n- 1 point: why the rows are equal\n"
        "- 1 point: You said what 05 adds.\n- -0.5 points: Shorter, please."
    )
    assert rubric.score(["why", "what"]) == 2
    assert rubric.score(["why", "long"]) == 0.5
    assert rubric.score(["long"]) == 0  # never below 0
    assert rubric.score(["why", "what"], adjustment=1) == 2  # never above the points


@pytest.mark.parametrize(
    ("items", "message"),
    [
        ([{**ITEMS[0], "points": 2}, ITEMS[1]], "items give 3 points"),
        ([ITEMS[0]], "items give 1 point"),
        ([ITEMS[0], {**ITEMS[1], "note": " "}], "rubric item 2 ('what'): the note"),
        (
            [ITEMS[0], {k: v for k, v in ITEMS[1].items() if k != "note"}],
            "item 2 ('what'): no note",
        ),
        ([ITEMS[0], {**ITEMS[1], "id": "why"}], "two rubric items have the id 'why'"),
        ([ITEMS[0], {**ITEMS[1], "id": "Bad Id"}], "id 'Bad Id' is not snake_case"),
        ([ITEMS[0], {**ITEMS[1], "points": 0.3}], "points = 0.3"),
        ([ITEMS[0], {**ITEMS[1], "points": True}], "points = True"),
        ([*ITEMS, {"id": "x", "label": "x", "points": -3, "note": "n"}], "a deduction of 3"),
        ([ITEMS[0], {**ITEMS[1], "colour": "red"}], "unknown keys ['colour']"),
        ([ITEMS[0], {**ITEMS[1], "label": "x" * 41}], "the label is a few words"),
        ([{**ITEMS[0], "id": f"i{n}", "points": 0.25} for n in range(10)], "has 10 items"),
        ("two items", "the rubric is"),
    ],
)
def test_a_malformed_rubric_is_named(items: object, message: str) -> None:
    with pytest.raises(RubricError) as refused:
        parse_cell(_cell(items), "03_matrix_form")
    assert str(refused.value).startswith("03_matrix_form, written_x")
    assert message in str(refused.value)


def test_no_rubric_and_registry_points_are_named() -> None:
    cell = _cell(ITEMS)
    del cell.metadata[METADATA_KEY]
    with pytest.raises(RubricError, match=r"03_x, written_x: no rubric: add \"rubric\""):
        parse_cell(cell, "03_x")
    with pytest.raises(RubricError, match="worth 2 points .* course.toml says 3 points"):
        parse_cell(_cell(ITEMS), "03_x", points=3)


def test_sync_rewrites_the_prose_only() -> None:
    notebook = nbformat.v4.new_notebook(cells=[_cell(ITEMS)])
    assert sync_notebook(notebook, "03_x", write=True) == ["03_x, written_x"]
    (cell,) = notebook.cells
    assert cell.source.startswith("**Reference answer.** Because.\n\n**Rubric (2 points).**\n")
    assert anatomy.grade_id(cell) == "written_x"
    assert sync_notebook(notebook, "03_x", write=False) == []


def test_the_new_notebook_template_has_a_rubric_as_data() -> None:
    """``make new`` copies the template's written answer: its rubric is data too, and its
    prose is generated from it (a new notebook passes the tests above from the start)."""
    template = nbformat.read(NOTEBOOK_TEMPLATE, as_version=4)
    rubrics = notebook_rubrics(template, "template")
    assert len(rubrics) == 1, rubrics
    assert sync_notebook(template, "template", write=False) == []
