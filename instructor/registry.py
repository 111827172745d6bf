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

The records are pydantic dataclasses: ``course.toml`` is validated as it is read (unknown
keys refused, each mistake named with the table and the key, :mod:`instructor.toml_schema`),
and every mistake is a :class:`RegistryError`.
"""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    AfterValidator,
    AliasChoices,
    Field,
    Strict,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    ValidatorFunctionWrapHandler,
    field_validator,
    model_validator,
)
from pydantic.dataclasses import dataclass

from instructor.mutation.rules import RULES
from instructor.paths import COURSE_ROOT
from instructor.toml_schema import STRICT_TABLE, mistakes, refused

__all__ = [
    "QUESTION_KINDS",
    "Course",
    "Exercise",
    "Notebook",
    "Question",
    "RegistryError",
    "VisibleCase",
    "load",
    "parse",
    "registry_path",
]


class RegistryError(ValueError):
    """``course.toml`` is malformed, or a lookup names something it does not hold."""


def _reading(info: ValidationInfo) -> str:
    """The id of the notebook whose entry is being read (:meth:`Notebook._reading_it`)."""
    return (info.context or {}).get("notebook", "?")


def _not_blank(text: str) -> str:
    if not text.strip():
        raise refused("is empty")
    return text


Text = Annotated[str, AfterValidator(_not_blank)]
PositivePoints = Annotated[int, Strict(), Field(gt=0)]


@dataclass(frozen=True, config=STRICT_TABLE)
class VisibleCase:
    """A case that a visible test of an exercise must try, as ``course.toml`` declares it:
    ``{ case = "a window wider than the sequence", when = "window >= n" }``.

    Attributes:
        case: what is tried, in words (for the test's message).
        when: a Python expression over the exercise's parameter names (a class's
            ``__init__`` and ``forward`` parameters), true for a call that tries the case;
            ``torch`` and ``np`` may be used (``"mask is not None and mask.dim() == 3"``).
    """

    case: Text
    when: Text

    @field_validator("when")
    @classmethod
    def _an_expression(cls, when: str, info: ValidationInfo) -> str:
        try:
            ast.parse(when, mode="eval")
        except SyntaxError as error:
            case = info.data.get("case")
            raise refused(
                f"when = {when!r} of {case!r} is not a Python expression ({error.msg})"
            ) from None
        return when


@dataclass(frozen=True, config=STRICT_TABLE)
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
    cell_points: tuple[PositivePoints, ...] = Field(
        min_length=1, validation_alias=AliasChoices("points", "cell_points")
    )
    visible_cases: tuple[VisibleCase, ...] | None = None
    """The sizes and limits its docstring or the notebook's text warns about (a window
    wider than the sequence, an empty list), each of which some visible test tries
    (``tests/course/test_visible_cases.py``); ``()`` when there are none, ``None`` when
    course.toml does not say (which that test refuses)."""

    rules: dict[str, str] | None = None
    """The rules its text states (:data:`instructor.mutation.rules.RULES`: ``dtype``,
    ``unchanged``, ``forbidden``, ...), each with the mistake whose mutants break it
    (``{ unchanged = "input modified in place" }``); ``{}`` when it states none, ``None`` when
    course.toml does not say (which ``tests/course/test_rules.py`` refuses)."""

    @field_validator("rules")
    @classmethod
    def _known_rules(
        cls, rules: dict[str, str] | None, info: ValidationInfo
    ) -> dict[str, str] | None:
        where = f"rules of exercise {info.data.get('name')!r} of {_reading(info)}"
        for rule, mistake in (rules or {}).items():
            if rule not in RULES:
                raise refused(
                    f"{where}: unknown rule {rule!r}; the rules are {', '.join(RULES)} "
                    "(instructor/mutation/rules.py)",
                    names_its_place=True,
                )
            breakers = [m.value for m in RULES[rule].broken_by]
            if mistake not in breakers:
                raise refused(
                    f"{where}: rule {rule!r} is broken by the mistake "
                    f"{' or '.join(repr(b) for b in breakers)}, not {mistake!r}",
                    names_its_place=True,
                )
        return rules

    @field_validator("cell_points", mode="wrap")
    @classmethod
    def _one_or_one_per_cell(
        cls, points: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> tuple[int, ...]:
        try:
            return handler(points if isinstance(points, list | tuple) else [points])
        except ValidationError:
            raise refused(
                f"exercise {info.data.get('name')!r} of {_reading(info)} has points = "
                f"{points!r}: a positive integer, or a list of them (one per test cell)",
                names_its_place=True,
            ) from None

    @field_validator("visible_cases", mode="wrap")
    @classmethod
    def _cases_as_declared(
        cls, cases: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> tuple[VisibleCase, ...] | None:
        try:
            return handler(cases)
        except ValidationError as error:
            where = f"visible_cases of exercise {info.data.get('name')!r} of {_reading(info)}"
            if not isinstance(cases, list):
                problem = f"{where} is not a list (write visible_cases = [] for none)"
            else:
                first = error.errors(include_url=False)[0]
                if first["msg"].startswith("when = "):  # _an_expression's words
                    problem = f"{where}: {first['msg']}"
                else:
                    problem = (
                        f'{where}: {cases[int(first["loc"][0])]!r} is not {{ case = "what is '
                        'tried", when = "an expression over the parameters" }'
                    )
            raise refused(problem, names_its_place=True) from None

    @property
    def points(self) -> int:
        """What its test cells are worth together."""
        return sum(self.cell_points)


QuestionKind = Literal["choice", "number", "written"]
QUESTION_KINDS: tuple[str, ...] = get_args(QuestionKind)
QUESTION_RULES: dict[str, tuple[str, int]] = {
    "choice": ("q_", 1),
    "number": ("q_", 1),
    "written": ("written_", 2),
}
"""kind -> (the prefix its name takes, the points it is worth)."""


@dataclass(frozen=True, config=STRICT_TABLE)
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
    options: str | None = None
    """A choice question's letters, ``"abcd"`` (as its ``check_choice(options=...)``)."""
    answer: str | None = None
    """A choice question's right letter (as its hidden ``check_choice(correct=...)``)."""
    wrong: dict[str, str] = Field(default_factory=dict)
    """What the self-study edition says to a wrong answer, as teaching (one or two
    sentences): for a choice question one per wrong option, by its letter; for a number
    question one per mistake students make, by the number it gives (``"6000"``)."""

    @field_validator("kind", mode="before")
    @classmethod
    def _a_kind(cls, kind: Any, info: ValidationInfo) -> Any:
        if kind not in QUESTION_RULES:
            raise refused(
                f"question {info.data.get('name')!r} of {_reading(info)} has kind {kind!r}; "
                f"the kinds are {', '.join(repr(k) for k in QUESTION_KINDS)}",
                names_its_place=True,
            )
        return kind

    @model_validator(mode="after")
    def _named_and_worth_as_its_kind(self, info: ValidationInfo) -> Question:
        prefix, worth = QUESTION_RULES[self.kind]
        what = f"question {self.name!r} of {_reading(info)}"
        if not self.name.startswith(prefix) or not self.name[len(prefix) :].isidentifier():
            raise refused(
                f"{what} is a {self.kind} question: name it {prefix}<what it asks>, in snake_case",
                names_its_place=True,
            )
        if self.points != worth:
            raise refused(
                f"{what} is worth {self.points}; a {self.kind} question is worth {worth} "
                f"(points = {worth})",
                names_its_place=True,
            )
        _check_explanations(self, what)
        return self

    def unexplained(self) -> list[str]:
        """What a concept question's ``wrong`` table still lacks, in words (empty when it
        explains every wrong option, or holds a mistake for a number question)."""
        if self.kind == "choice":
            if self.options is None or self.answer is None:
                return ['its options and its answer (options = "abcd", answer = "b")']
            return [
                f"option ({letter})"
                for letter in self.options
                if letter != self.answer and letter not in self.wrong
            ]
        if self.kind == "number" and not self.wrong:
            return ['a mistake students make and its explanation ("6000" = "...")']
        return []

    @property
    def autograded(self) -> bool:
        return self.kind != "written"


OPTION_LETTERS = "abcdefgh"


def _check_explanations(question: Question, what: str) -> None:
    """A question's ``options``, ``answer`` and ``wrong`` fit its kind and one another: a
    choice question's options are the letters from (a) on, its answer is one of them, and
    each key of ``wrong`` is a wrong option (an explanation no option needs is refused,
    like the right letter's: its reason is the hidden test's ``why=``); a number question's
    keys are numbers; a written answer has none of them."""
    wrong = question.wrong
    for letter, text in wrong.items():
        if not text.strip():
            raise refused(f"{what}: the explanation of {letter!r} is empty", names_its_place=True)
    if question.kind != "choice":
        if question.options is not None or question.answer is not None:
            raise refused(
                f"{what} is a {question.kind} question: options and answer are a choice "
                "question's (a number question's answer is its hidden test's correct=)",
                names_its_place=True,
            )
        if question.kind == "written" and wrong:
            raise refused(
                f"{what} is a written answer, graded by hand: it has no wrong options to explain",
                names_its_place=True,
            )
        for value in wrong:
            try:
                float(value)
            except ValueError:
                raise refused(
                    f"{what}: wrong = {{ {value!r} = ... }} is not a number; a number "
                    'question explains the numbers that mistakes give ("6000" = "...")',
                    names_its_place=True,
                ) from None
        return
    options, answer = question.options, question.answer
    if options is not None and (len(options) < 2 or options != OPTION_LETTERS[: len(options)]):
        raise refused(
            f"{what} has options = {options!r}: the letters from a on, as its check_choice's "
            'options ("abcd")',
            names_its_place=True,
        )
    if answer is not None and (options is None or answer not in options):
        raise refused(
            f"{what} has answer = {answer!r}, which is not one of its options {options!r}",
            names_its_place=True,
        )
    for letter in wrong:
        if options is None or letter not in options:
            raise refused(
                f"{what} explains option ({letter}), which it does not have "
                f"(options = {options!r})",
                names_its_place=True,
            )
        if letter == answer:
            raise refused(
                f"{what} explains its right answer ({letter}) as a wrong option: the right "
                "answer's reason is its hidden test's why=",
                names_its_place=True,
            )


PINNED_PACKAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(?:\[[\w,.-]+\])?==\d[\w.!+-]*")
"""A requirement pinned to one version: ``name==version`` (extras allowed)."""


@dataclass(frozen=True, config=STRICT_TABLE)
class Notebook:
    """One notebook of the course: ``solutions/<id>/<id>.ipynb`` and its student version."""

    id: str
    title: str
    minutes: int
    colab_packages: tuple[str, ...] = ()
    exercises: tuple[Exercise, ...] = Field(
        default=(), validation_alias=AliasChoices("exercise", "exercises")
    )
    questions: tuple[Question, ...] = Field(
        default=(), validation_alias=AliasChoices("question", "questions")
    )

    @model_validator(mode="wrap")
    @classmethod
    def _reading_it(
        cls, entry: Any, handler: ValidatorFunctionWrapHandler, info: ValidationInfo
    ) -> Notebook:
        # Its exercises' and questions' messages name the notebook (_reading): the entries
        # are read one after another, so the context holds the one being read.
        if isinstance(entry, Mapping) and info.context is not None:
            info.context["notebook"] = entry.get("id", "?")
        return handler(entry)

    @field_validator("colab_packages")
    @classmethod
    def _pinned(cls, packages: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        for package in packages:
            if not PINNED_PACKAGE.fullmatch(package):
                name = re.split(r"[<>=!~ ;@\[]", package, maxsplit=1)[0]
                raise refused(
                    f"colab package {package!r} of {info.data.get('id')} is not pinned to one "
                    f"version: write '{name}==<version>', the version the course is tested "
                    f"with (`.venv/bin/pip show {name}`)",
                    names_its_place=True,
                )
        return packages

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


def registry_path(root: Path | None = None) -> Path:
    return (root or COURSE_ROOT) / "course.toml"


MOVING_REFS = frozenset({"main", "master", "head", "develop", "dev", "trunk", "latest", "stable"})
"""Branch names (lower-cased) that ``ref`` may not be: what they name changes with every push."""
RELEASE_TAG = re.compile(r"v?\d+(?:\.\d+)*(?:[-.][0-9A-Za-z]+)*")
COMMIT = re.compile(r"[0-9a-f]{7,40}")
REPOSITORY = re.compile(r"[\w.-]+/[\w.-]+")


def _release_or_commit(ref: str) -> str:
    """``ref`` if it is a release tag (``v0.1.0``, ``2026.1``, ``v1.0.0-rc1``) or a commit
    (7 to 40 hex digits); a branch such as ``main`` is refused: the badges and set-up cells
    would follow every later push, so a student could get code the course was not tested
    with."""
    if ref.lower() in MOVING_REFS or not (RELEASE_TAG.fullmatch(ref) or COMMIT.fullmatch(ref)):
        raise refused(
            f"ref = {ref!r} is not a release tag or a commit; a branch such as 'main' moves "
            "with every push, so the Colab badges and set-up cells would install code the "
            'course was not tested with. Name a release tag (ref = "v0.1.0") or a commit (7 '
            "to 40 hex digits); see docs/publishing.md"
        )
    return ref


def _owner_and_name(repository: str) -> str:
    if not REPOSITORY.fullmatch(repository):
        raise refused(f"repository = {repository!r} is not a GitHub 'owner/name'")
    return repository


@dataclass(frozen=True, config=STRICT_TABLE)
class Course:
    """The whole registry.

    ``repository`` (GitHub ``owner/name``) and ``ref`` (a release tag or a commit, never a
    moving branch) are where the Colab badges open the student notebooks and what the
    set-up cells install (``instructor.colab``); docs/publishing.md says how to set them.
    """

    title: str
    repository: Annotated[str, AfterValidator(_owner_and_name)]
    ref: Annotated[str, AfterValidator(_release_or_commit)]
    function_points: tuple[int, int]
    notebook_points: tuple[int, int]
    max_exercises: int
    """Graded functions a notebook may have at most."""
    self_study: Annotated[bool, Strict()] = False
    """Whether the course has its self-study edition (``self_study/``, made by ``make
    release``, :mod:`instructor.self_study`) and the README's and the website's Colab badges
    open it. Every concept question then explains each of its wrong answers (``wrong``).
    ``false`` for the weeks of a term: no self-study edition, the badges open
    ``notebooks/``."""
    notebooks: tuple[Notebook, ...] = Field(
        default=(), validation_alias=AliasChoices("notebook", "notebooks")
    )

    @model_validator(mode="before")
    @classmethod
    def _no_branch(cls, table: Any) -> Any:
        if isinstance(table, Mapping) and "branch" in table:
            raise refused(
                "[course] names a 'branch'; name a release tag or a commit as 'ref' instead "
                '(ref = "v0.1.0"): a branch moves with every push',
                names_its_place=True,
            )
        return table

    @model_validator(mode="after")
    def _notebooks_once_in_order(self) -> Course:
        ids = self.ids
        duplicates = sorted({i for i in ids if ids.count(i) > 1})
        if duplicates:
            raise refused(f"[[notebook]] {duplicates} more than once", names_its_place=True)
        if ids != sorted(ids):
            raise refused(f"the notebooks are out of order: {ids}", names_its_place=True)
        for notebook in self.notebooks:
            if len(notebook.exercises) > self.max_exercises:
                raise refused(
                    f"{notebook.id} has {len(notebook.exercises)} graded functions; a "
                    f"notebook has at most {self.max_exercises} (max_exercises): split it",
                    names_its_place=True,
                )
        _check_unique_names(self)
        if self.self_study:
            _check_explained(self)
        return self

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


def _check_unique_names(course: Course) -> None:
    """A question's name is its answer cell's ``grade_id`` and, for a concept question, the
    variable the student sets: it is unique in the course, and no graded function's name."""
    seen: dict[str, str] = {}
    for notebook in course.notebooks:
        functions = {exercise.name for exercise in notebook.exercises}
        for question in notebook.questions:
            if question.name in functions:
                raise refused(
                    f"{notebook.id} has a graded function and a question both named "
                    f"{question.name!r}: rename the question",
                    names_its_place=True,
                )
            if question.name in seen:
                where = (
                    "twice"
                    if seen[question.name] == notebook.id
                    else (f"in {seen[question.name]} and in {notebook.id}")
                )
                raise refused(
                    f"found the question {question.name!r} {where}: a question's name is "
                    "unique in the course (it says what the question asks)",
                    names_its_place=True,
                )
            seen[question.name] = notebook.id


def _check_explained(course: Course) -> None:
    """With the self-study edition on, every concept question explains its wrong answers:
    the self-study edition says, to a learner who picks a wrong option, why it is wrong."""
    for notebook in course.notebooks:
        for question in notebook.concept_questions:
            missing = question.unexplained()
            if missing:
                raise refused(
                    f"question {question.name!r} of {notebook.id} has no explanation of "
                    f"{', '.join(missing)}: with self_study = true every concept question "
                    "explains each wrong answer, in one or two sentences, in its "
                    "[notebook.question.wrong] table",
                    names_its_place=True,
                )


def parse(text: str) -> Course:
    """The registry held in ``text`` (the contents of a ``course.toml``)."""
    data = tomllib.loads(text)
    # [mutants] names the file of reviewed equivalent mutants (instructor.mutation reads it).
    unknown = sorted(set(data) - {"course", "notebook", "mutants"})
    if unknown:
        raise RegistryError(
            f"course.toml: unknown tables {unknown}: use [course], [[notebook]], [mutants]"
        )
    # The record is flat: [course]'s keys beside the [[notebook]] entries.
    table = {**data.get("course", {}), "notebook": data.get("notebook", [])}
    try:
        return _COURSE.validate_python(table, context={})
    except ValidationError as error:
        raise RegistryError(
            "\n".join(mistakes(error, Course, table, "course.toml", "[course]"))
        ) from None


_COURSE = TypeAdapter(Course)


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
