"""The course registry, ``course.toml``: what the course holds, as typed records.

Everything that needs the notebook list, the graded functions and their points, or the
concept questions and written answers, reads it from here: the anatomy tests,
the README's generated table, the release check, the grading-case checks and ``make new``.

A notebook's entry lists its graded functions (``[[notebook.exercise]]``), then its questions
(``[[notebook.question]]``): concept questions answered with a letter or a number
(``kind = "choice"`` or ``"number"``, named ``q_<what>``, 1 point, autograded) and written
answers (``kind = "written"``, named ``written_<what>``, 2 points, graded by hand). A
notebook is worth its functions' and its questions' points together. An exercise also lists
the sizes and limits its text warns about (``visible_cases``, :class:`VisibleCase`), which
its visible tests must try.
"""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal, get_args

from instructor.paths import COURSE_ROOT

__all__ = [
    "QUESTION_KINDS",
    "Course",
    "Exercise",
    "Notebook",
    "Question",
    "RegistryError",
    "VisibleCase",
    "check_colab_package",
    "check_ref",
    "load",
    "registry_path",
]


class RegistryError(ValueError):
    """``course.toml`` is malformed, or a lookup names something it does not hold."""


@dataclass(frozen=True)
class Exercise:
    """A graded function (or class) of a notebook.

    Attributes:
        name: the function's name, which is also its solution cell's ``grade_id`` (its
            parameters are the solution's own, written nowhere else).
        cell_points: what each of its test cells is worth (``test_<name>``,
            ``test_<name>_2``, ...): ``points = [2, 1]`` in course.toml, or one cell worth
            ``points = 3``.
    """

    name: str
    cell_points: tuple[int, ...]
    visible_cases: tuple[VisibleCase, ...] | None = None
    """The sizes and limits its docstring or the notebook's text warns about (a window
    wider than the sequence, an empty list), each of which some visible test tries
    (``tests/course/test_visible_cases.py``); ``()`` when there are none, ``None`` when
    course.toml does not say (which that test refuses)."""

    @property
    def points(self) -> int:
        """What its test cells are worth together."""
        return sum(self.cell_points)


@dataclass(frozen=True)
class VisibleCase:
    """A case that a visible test of an exercise must try, as ``course.toml`` declares it:
    ``{ case = "a window wider than the sequence", when = "window >= n" }``.

    Attributes:
        case: what is tried, in words (for the test's message).
        when: a Python expression over the exercise's parameter names (a class's
            ``__init__`` and ``forward`` parameters), true for a call that tries the case;
            ``torch`` and ``np`` may be used (``"mask is not None and mask.dim() == 3"``).
    """

    case: str
    when: str


QuestionKind = Literal["choice", "number", "written"]
QUESTION_KINDS: tuple[str, ...] = get_args(QuestionKind)
QUESTION_RULES: dict[str, tuple[str, int]] = {
    "choice": ("q_", 1),
    "number": ("q_", 1),
    "written": ("written_", 2),
}
"""kind -> (the prefix its name takes, the points it is worth)."""


@dataclass(frozen=True)
class Question:
    """A question of a notebook's "Check your understanding" section.

    Attributes:
        name: the ``grade_id`` of its answer cell: ``q_<what>`` for a concept question
            (the variable the student sets), ``written_<what>`` for a written answer.
        kind: ``"choice"`` (one letter), ``"number"`` (a number): autograded, 1 point;
            ``"written"``: a markdown answer graded by hand with a rubric, 2 points.
        points: what it is worth (1, or 2 for a written answer).
    """

    name: str
    kind: QuestionKind
    points: int

    @property
    def autograded(self) -> bool:
        return self.kind != "written"


@dataclass(frozen=True)
class Notebook:
    """One notebook of the course: ``solutions/<id>/<id>.ipynb`` and its student version."""

    id: str
    title: str
    minutes: int
    colab_packages: tuple[str, ...]
    exercises: tuple[Exercise, ...]
    questions: tuple[Question, ...] = ()

    @property
    def number(self) -> str:
        return self.id.split("_", 1)[0]

    @property
    def points(self) -> int:
        """The notebook's worth: its graded functions' and its questions' points."""
        return self.function_points + sum(question.points for question in self.questions)

    @property
    def function_points(self) -> int:
        return sum(exercise.points for exercise in self.exercises)

    @property
    def concept_questions(self) -> tuple[Question, ...]:
        """The autograded questions (``choice`` and ``number``)."""
        return tuple(question for question in self.questions if question.autograded)

    @property
    def written_answers(self) -> tuple[Question, ...]:
        return tuple(question for question in self.questions if not question.autograded)

    @property
    def heading(self) -> str:
        """The notebook's title line: ``# NN · Title``."""
        return f"# {self.number} · {self.title}"

    def exercise(self, name: str) -> Exercise:
        for exercise in self.exercises:
            if exercise.name == name:
                return exercise
        raise RegistryError(f"{self.id} has no exercise {name!r} in course.toml")

    def question(self, name: str) -> Question:
        for question in self.questions:
            if question.name == name:
                return question
        raise RegistryError(f"{self.id} has no question {name!r} in course.toml")


@dataclass(frozen=True)
class Course:
    """The whole registry.

    ``repository`` (GitHub ``owner/name``) and ``ref`` (a release tag or a commit, never a
    moving branch) are where the Colab badges open the student notebooks and what the
    set-up cells install (``instructor.colab``); docs/publishing.md says how to set them.
    """

    title: str
    repository: str
    ref: str
    function_points: tuple[int, int]
    notebook_points: tuple[int, int]
    max_exercises: int
    """Graded functions a notebook may have at most."""
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
        """The points a notebook may be worth (``notebook_points``, the same for every
        notebook: one with too few functions to reach the floor needs another exercise)."""
        return self.notebook_points


def registry_path(root: Path | None = None) -> Path:
    return (root or COURSE_ROOT) / "course.toml"


MOVING_REFS = frozenset({"main", "master", "head", "develop", "dev", "trunk", "latest", "stable"})
"""Branch names (lower-cased) that ``ref`` may not be: what they name changes with every push."""
RELEASE_TAG = re.compile(r"v?\d+(?:\.\d+)*(?:[-.][0-9A-Za-z]+)*")
COMMIT = re.compile(r"[0-9a-f]{7,40}")
REPOSITORY = re.compile(r"[\w.-]+/[\w.-]+")
PINNED_PACKAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[\w,.-]+\])?==\d[\w.!+-]*")
"""A requirement pinned to one version: ``name==version`` (extras allowed)."""


def check_ref(ref: str) -> str:
    """``ref`` if it is a release tag (``v0.1.0``, ``2026.1``, ``v1.0.0-rc1``) or a commit
    (7 to 40 hex digits); a branch such as ``main`` is refused: the badges and set-up cells
    would follow every later push, so a student could get code the course was not tested
    with."""
    if ref.lower() in MOVING_REFS or not (RELEASE_TAG.fullmatch(ref) or COMMIT.fullmatch(ref)):
        raise RegistryError(
            f"course.toml: ref = {ref!r} is not a release tag or a commit; a branch such as "
            "'main' moves with every push, so the Colab badges and set-up cells would install "
            'code the course was not tested with. Name a release tag (ref = "v0.1.0") or a '
            "commit (7 to 40 hex digits); see docs/publishing.md"
        )
    return ref


def check_colab_package(notebook_id: str, package: str) -> str:
    """``package`` if it is pinned to one version (``name==version``)."""
    if not PINNED_PACKAGE.fullmatch(package):
        name = re.split(r"[<>=!~ ;@\[]", package, maxsplit=1)[0]
        raise RegistryError(
            f"course.toml: colab package {package!r} of {notebook_id} is not pinned to one "
            f"version: write '{name}==<version>', the version the course is tested with "
            f"(`.venv/bin/pip show {name}`)"
        )
    return package


def _exercise(notebook_id: str, entry: dict) -> Exercise:
    try:
        points = entry["points"]
        cells = tuple(points) if isinstance(points, list) else (points,)
        if not cells or not all(type(p) is int and p > 0 for p in cells):
            raise RegistryError(
                f"course.toml: exercise {entry['name']!r} of {notebook_id} has points = "
                f"{points!r}: a positive integer, or a list of them (one per test cell)"
            )
        return Exercise(
            name=entry["name"],
            cell_points=cells,
            visible_cases=_visible_cases(notebook_id, entry["name"], entry.get("visible_cases")),
        )
    except KeyError as missing:
        raise RegistryError(
            f"course.toml: an exercise of {notebook_id} has no {missing.args[0]!r}"
        ) from None


def _visible_cases(notebook_id: str, name: str, entries: Any) -> tuple[VisibleCase, ...] | None:
    """``visible_cases`` of an exercise: a list of ``{ case = "...", when = "..." }`` tables,
    each ``when`` a Python expression."""
    if entries is None:
        return None
    where = f"course.toml: visible_cases of exercise {name!r} of {notebook_id}"
    if not isinstance(entries, list):
        raise RegistryError(f"{where} is not a list (write visible_cases = [] for none)")
    cases = []
    for entry in entries:
        if (
            not isinstance(entry, dict)
            or set(entry) != {"case", "when"}
            or not all(isinstance(entry[k], str) and entry[k].strip() for k in entry)
        ):
            raise RegistryError(
                f'{where}: {entry!r} is not {{ case = "what is tried", when = "an expression '
                'over the parameters" }'
            )
        try:
            ast.parse(entry["when"], mode="eval")
        except SyntaxError as error:
            raise RegistryError(
                f"{where}: when = {entry['when']!r} of {entry['case']!r} is not a Python "
                f"expression ({error.msg})"
            ) from None
        cases.append(VisibleCase(entry["case"], entry["when"]))
    return tuple(cases)


def _question(notebook_id: str, entry: dict) -> Question:
    try:
        name, kind, points = entry["name"], entry["kind"], int(entry["points"])
    except KeyError as missing:
        raise RegistryError(
            f"course.toml: a [[notebook.question]] of {notebook_id} has no {missing.args[0]!r}"
        ) from None
    if kind not in QUESTION_RULES:
        raise RegistryError(
            f"course.toml: question {name!r} of {notebook_id} has kind {kind!r}; the kinds are "
            f"{', '.join(repr(k) for k in QUESTION_KINDS)}"
        )
    prefix, worth = QUESTION_RULES[kind]
    if not name.startswith(prefix) or not name[len(prefix) :].isidentifier():
        raise RegistryError(
            f"course.toml: question {name!r} of {notebook_id} is a {kind} question: name it "
            f"{prefix}<what it asks>, in snake_case"
        )
    if points != worth:
        raise RegistryError(
            f"course.toml: question {name!r} of {notebook_id} is worth {points}; a {kind} "
            f"question is worth {worth} (points = {worth})"
        )
    return Question(name=name, kind=kind, points=points)


def _notebook(entry: dict) -> Notebook:
    try:
        notebook_id = entry["id"]
        return Notebook(
            id=notebook_id,
            title=entry["title"],
            minutes=int(entry["minutes"]),
            colab_packages=tuple(
                check_colab_package(notebook_id, package)
                for package in entry.get("colab_packages", ())
            ),
            exercises=tuple(_exercise(notebook_id, e) for e in entry.get("exercise", ())),
            questions=tuple(_question(notebook_id, q) for q in entry.get("question", ())),
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
        if "branch" in course:
            raise RegistryError(
                "course.toml: [course] names a 'branch'; name a release tag or a commit as "
                "'ref' instead (ref = \"v0.1.0\"): a branch moves with every push"
            )
        if not REPOSITORY.fullmatch(course["repository"]):
            raise RegistryError(
                f"course.toml: repository = {course['repository']!r} is not a GitHub 'owner/name'"
            )
        registry = Course(
            title=course["title"],
            repository=course["repository"],
            ref=check_ref(course["ref"]),
            function_points=tuple(course["function_points"]),
            notebook_points=tuple(course["notebook_points"]),
            max_exercises=int(course["max_exercises"]),
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
    for notebook in registry.notebooks:
        if len(notebook.exercises) > registry.max_exercises:
            raise RegistryError(
                f"course.toml: {notebook.id} has {len(notebook.exercises)} graded functions; "
                f"a notebook has at most {registry.max_exercises} (max_exercises): split it"
            )
    _check_unique_names(registry)
    return registry


def _check_unique_names(course: Course) -> None:
    """A question's name is its answer cell's ``grade_id`` and, for a concept question, the
    variable the student sets: it is unique in the course, and no graded function's name."""
    seen: dict[str, str] = {}
    for notebook in course.notebooks:
        functions = {exercise.name for exercise in notebook.exercises}
        for question in notebook.questions:
            if question.name in functions:
                raise RegistryError(
                    f"course.toml: {notebook.id} has a graded function and a question both "
                    f"named {question.name!r}: rename the question"
                )
            if question.name in seen:
                where = (
                    "twice"
                    if seen[question.name] == notebook.id
                    else (f"in {seen[question.name]} and in {notebook.id}")
                )
                raise RegistryError(
                    f"course.toml lists the question {question.name!r} {where}: a question's "
                    "name is unique in the course (it says what the question asks)"
                )
            seen[question.name] = notebook.id


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
