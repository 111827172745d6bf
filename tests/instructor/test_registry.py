"""instructor.registry: course.toml read into typed records, and its mistakes named."""

from __future__ import annotations

import pytest

from instructor import registry
from instructor.registry import RegistryError

MINIMAL = """
[course]
title = "T"
repository = "owner/name"
branch = "main"
function_points = [1, 3]
notebook_points = [8, 15]
"""

ENTRY = """
[[notebook]]
id = "{id}"
title = "Title {id}"
minutes = 30

[[notebook.exercise]]
name = "f"
parameters = ["x", "y"]
points = 3
"""


def test_the_course_registry_loads() -> None:
    course = registry.load()
    assert course.ids[0] == "01_vector_sets" and course.ids == sorted(course.ids)
    softmax = course.notebook("02_soft_select").exercise("softmax")
    assert softmax.parameters == ("x", "axis") and 1 <= softmax.points <= 3
    mha = course.notebook("04_multi_head").exercise("MultiHeadSelfAttention")
    assert mha.contract == mha.methods and mha.methods[0].startswith("__init__(")
    assert course.notebook("09_gnn").colab_packages == ("torch-geometric",)


def test_records_compute_heading_number_and_points() -> None:
    course = registry.parse(MINIMAL + ENTRY.format(id="01_a"))
    notebook = course.notebook("01_a")
    assert notebook.heading == "# 01 · Title 01_a" and notebook.number == "01"
    assert notebook.points == 3
    # One function at most 3 points: the floor of 8 cannot apply.
    assert course.notebook_point_range(notebook) == (3, 15)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (MINIMAL.replace('branch = "main"\n', ""), "no 'branch'"),
        (MINIMAL + ENTRY.format(id="01_a") + ENTRY.format(id="01_a"), "more than once"),
        (MINIMAL + ENTRY.format(id="02_b") + ENTRY.format(id="01_a"), "out of order"),
        (MINIMAL + ENTRY.format(id="01_a").replace("minutes = 30\n", ""), "no 'minutes'"),
        (MINIMAL + ENTRY.format(id="01_a").replace("points = 3\n", ""), "no 'points'"),
    ],
)
def test_malformed_registries_are_named(text: str, message: str) -> None:
    with pytest.raises(RegistryError, match=message):
        registry.parse(text)


def test_unknown_notebook_and_exercise_say_what_to_do() -> None:
    course = registry.parse(MINIMAL + ENTRY.format(id="01_a"))
    with pytest.raises(RegistryError, match="make new"):
        course.notebook("02_missing")
    with pytest.raises(RegistryError, match="no exercise 'g'"):
        course.notebook("01_a").exercise("g")


def test_a_missing_registry_is_named(tmp_path) -> None:
    with pytest.raises(RegistryError, match="no course registry"):
        registry.load(tmp_path)


def test_ids_command(capsys) -> None:
    registry.main(["ids"])
    assert capsys.readouterr().out.split() == registry.load().ids
