"""``instructor.facts``: a function's points, written in course.toml only, reach every place
its notebook states them, and a notebook laid out otherwise is named."""

from __future__ import annotations

import dataclasses

import pytest

from instructor import anatomy, facts, registry

NOTEBOOK = "10_transformer_block"


def _with_points(entry: registry.Notebook, name: str, cells: tuple[int, ...]) -> registry.Notebook:
    exercises = tuple(
        dataclasses.replace(e, cell_points=cells) if e.name == name else e for e in entry.exercises
    )
    return dataclasses.replace(entry, exercises=exercises)


def test_the_solutions_state_course_toml_s_points() -> None:
    assert facts.main(["--check"]) == 0


def test_a_point_changed_in_course_toml_is_written_everywhere() -> None:
    notebook = anatomy.read_solution(NOTEBOOK)
    entry = _with_points(registry.load().notebook(NOTEBOOK), "layer_norm", (3, 1))
    changes = facts.sync_facts(notebook, entry)
    assert changes == [
        "test_layer_norm: 2 -> 3 points",
        "'Graded exercises' line: 11 points",
        "heading of layer_norm: 3 -> 4 points",
        "time: about 105 -> 110 minutes",  # 5 minutes per point (instructor.time_rule)
    ]
    points = {anatomy.grade_id(c): c.metadata.nbgrader.points for c in anatomy.test_cells(notebook)}
    assert (points["test_layer_norm"], points["test_layer_norm_2"]) == (3, 1)
    text = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    assert "### Exercise 2 · `layer_norm` (4 points)" in text
    assert (
        "**Graded exercises (11 points):** `PositionwiseFeedForward` (2), `layer_norm` (4)," in text
    )
    assert "about 110 minutes" in notebook.cells[0].source
    assert facts.sync_facts(notebook, entry) == []  # written once, then nothing to do


def test_course_toml_gets_the_rule_s_minutes() -> None:
    text = registry.registry_path().read_text(encoding="utf-8")
    course = registry.load()
    minutes = {n: course.notebook(n).minutes for n in course.ids}
    assert facts.sync_registry(text, minutes) == (text, [])
    changed, changes = facts.sync_registry(text, {**minutes, NOTEBOOK: 110})
    assert changes == [f"{NOTEBOOK}: course.toml minutes {minutes[NOTEBOOK]} -> 110"]
    assert registry.parse(changed).notebook(NOTEBOOK).minutes == 110
    assert registry.parse(changed).notebook("09_gnn").minutes == minutes["09_gnn"]


def test_a_notebook_laid_out_otherwise_is_named() -> None:
    notebook = anatomy.read_solution(NOTEBOOK)
    entry = _with_points(registry.load().notebook(NOTEBOOK), "layer_norm", (3,))
    with pytest.raises(facts.FactsError, match=r"layer_norm has test cells \['test_layer_norm'"):
        facts.sync_facts(notebook, entry)
