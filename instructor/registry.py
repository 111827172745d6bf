"""The course registry, ``course.toml``: what the course holds, as typed records.

Everything that needs the notebook list, the graded functions, their parameters or their
points reads it from here: the anatomy tests, the README's generated table, the release
check, the grading-case checks and ``make new``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from instructor.paths import COURSE_ROOT

__all__ = ["Course", "Exercise", "Notebook", "RegistryError", "load", "registry_path"]


class RegistryError(ValueError):
    """``course.toml`` is malformed, or a lookup names something it does not hold."""


@dataclass(frozen=True)
class Exercise:
    """A graded function (or class) of a notebook.

    Attributes:
        name: the function's name, which is also its solution cell's ``grade_id``.
        parameters: the function's parameter names, in order (empty for a class).
        methods: a class's ``__init__`` and public methods as ``name(parameters)``
            (empty for a function).
        points: what its test cells are worth together.
    """

    name: str
    parameters: tuple[str, ...]
    methods: tuple[str, ...]
    points: int

    @property
    def contract(self) -> tuple[str, ...]:
        """What the solution cell's definition must show: parameters or methods."""
        return self.methods or self.parameters


@dataclass(frozen=True)
class Notebook:
    """One notebook of the course: ``solutions/<id>/<id>.ipynb`` and its student version."""

    id: str
    title: str
    minutes: int
    colab_packages: tuple[str, ...]
    exercises: tuple[Exercise, ...]

    @property
    def number(self) -> str:
        return self.id.split("_", 1)[0]

    @property
    def points(self) -> int:
        return sum(exercise.points for exercise in self.exercises)

    @property
    def heading(self) -> str:
        """The notebook's title line: ``# NN · Title``."""
        return f"# {self.number} · {self.title}"

    def exercise(self, name: str) -> Exercise:
        for exercise in self.exercises:
            if exercise.name == name:
                return exercise
        raise RegistryError(f"{self.id} has no exercise {name!r} in course.toml")


@dataclass(frozen=True)
class Course:
    """The whole registry."""

    title: str
    repository: str
    branch: str
    function_points: tuple[int, int]
    notebook_points: tuple[int, int]
    notebooks: tuple[Notebook, ...]

    @property
    def ids(self) -> list[str]:
        return [notebook.id for notebook in self.notebooks]

    def notebook(self, notebook_id: str) -> Notebook:
        for notebook in self.notebooks:
            if notebook.id == notebook_id:
                return notebook
        raise RegistryError(
            f"no notebook {notebook_id!r} in course.toml (known: {', '.join(self.ids)}); "
            "add a [[notebook]] entry, or run `make new NB=...`"
        )

    def notebook_point_range(self, notebook: Notebook) -> tuple[int, int]:
        """The points a notebook may be worth: ``notebook_points``, with the floor lowered
        where its function list cannot reach it at the most points per function."""
        low, high = self.notebook_points
        return min(low, self.function_points[1] * len(notebook.exercises)), high


def registry_path(root: Path | None = None) -> Path:
    return (root or COURSE_ROOT) / "course.toml"


def _exercise(notebook_id: str, entry: dict) -> Exercise:
    try:
        return Exercise(
            name=entry["name"],
            parameters=tuple(entry.get("parameters", ())),
            methods=tuple(entry.get("methods", ())),
            points=int(entry["points"]),
        )
    except KeyError as missing:
        raise RegistryError(
            f"course.toml: an exercise of {notebook_id} has no {missing.args[0]!r}"
        ) from None


def _notebook(entry: dict) -> Notebook:
    try:
        notebook_id = entry["id"]
        return Notebook(
            id=notebook_id,
            title=entry["title"],
            minutes=int(entry["minutes"]),
            colab_packages=tuple(entry.get("colab_packages", ())),
            exercises=tuple(_exercise(notebook_id, e) for e in entry.get("exercise", ())),
        )
    except KeyError as missing:
        raise RegistryError(
            f"course.toml: a [[notebook]] entry has no {missing.args[0]!r} ({entry})"
        ) from None


def parse(text: str) -> Course:
    """The registry held in ``text`` (the contents of a ``course.toml``)."""
    data = tomllib.loads(text)
    try:
        course = data["course"]
        registry = Course(
            title=course["title"],
            repository=course["repository"],
            branch=course["branch"],
            function_points=tuple(course["function_points"]),
            notebook_points=tuple(course["notebook_points"]),
            notebooks=tuple(_notebook(entry) for entry in data.get("notebook", ())),
        )
    except KeyError as missing:
        raise RegistryError(f"course.toml: [course] has no {missing.args[0]!r}") from None
    ids = registry.ids
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise RegistryError(f"course.toml lists {duplicates} more than once")
    if ids != sorted(ids):
        raise RegistryError(f"course.toml lists the notebooks out of order: {ids}")
    return registry


@cache
def load(root: Path | None = None) -> Course:
    """The registry of the course at ``root`` (default: this course)."""
    path = registry_path(root)
    try:
        return parse(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RegistryError(f"no course registry at {path}") from None


def main(argv: list[str] | None = None) -> None:
    """``python -m instructor.registry ids``: the notebook ids, one per line (for make)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m instructor.registry")
    parser.add_argument("what", choices=["ids"])
    parser.parse_args(argv)
    print("\n".join(load().ids))


if __name__ == "__main__":
    main()
