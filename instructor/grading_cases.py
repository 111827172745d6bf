"""Wrong and right answers to the graded functions and the concept questions (``Case``,
``Mutation``), and packing them into few submissions.

The test suite proves the grading by running nbgrader itself
(``instructor.scratch_course.ScratchCourse``: ``generate_assignment`` and ``autograde``)
and reading its gradebook; nothing here re-implements scoring. Each notebook's answers
live in ``tests/grading_cases/<id>.py`` as a list ``CASES``:

- a **wrong** answer is usually a ``Mutation``: a change to the reference solution
  (``{"dim=-1": "dim=0"}``), which fails loudly when the reference no longer contains
  the text it changes;
- a **right** answer, or a wrong one that rewrites the whole function, is a ``Case`` with
  its full source;
- an answer to a **concept question** (a solution cell ``q_<what>``) is a ``Case`` whose
  source is one assignment, ``'q_saw_rows = "a"\n'``, like the cell it replaces.

Written answers (``written_<what>``, graded by hand) have no cases: autograde leaves them
to a grader.
"""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass, field
from typing import Literal

from instructor import anatomy
from instructor.paths import COURSE_ROOT

__all__ = [
    "Case",
    "Mutation",
    "MutationError",
    "Submission",
    "check_question_answer",
    "load_cases",
    "pack",
    "reference_solutions",
]

CASES_DIR = COURSE_ROOT / "tests" / "grading_cases"


@dataclass(frozen=True)
class Case:
    """An answer to one graded function, and what grading must make of it.

    Attributes:
        function: the ``grade_id`` of the solution cell the answer replaces: a graded
            function, or a concept question ``q_<what>`` (then ``source`` assigns it).
        kind: ``"wrong"`` must lose points on that function's (question's) tests;
            ``"right"`` must score full marks.
        name: what the answer does, in a few words (becomes the student id and test id).
        source: the whole new source of the solution cell.
        message: for a wrong answer, a phrase the student must see in the output of that
            function's first test cell (the diagnostic written for this mistake); ``None``
            where no particular message is promised.
        hidden: a wrong answer that passes every visible test of its function: only the
            hidden tests catch it (each graded function has one, to show they are needed).
    """

    function: str
    kind: Literal["wrong", "right"]
    name: str
    source: str
    message: str | None = None
    hidden: bool = False

    @property
    def student(self) -> str:
        slug = "".join(ch if ch.isalnum() else "_" for ch in self.name.lower()).strip("_")
        return f"{self.kind}__{self.function}__{slug}"[:120]


class MutationError(ValueError):
    """A mutation no longer applies to the reference solution it changes."""


@dataclass(frozen=True)
class Mutation:
    """A wrong answer written as a change to the reference solution.

    Attributes:
        function: the ``grade_id`` of the solution cell it changes.
        name: the mistake, in a few words.
        edits: ``{old: new}``; each ``old`` must occur exactly once in the reference (add
            context until it does), and is replaced by ``new``.
        message: a phrase the student must see in the output of that function's first
            test cell (see ``Case.message``).
        hidden: only the hidden tests catch it (see ``Case.hidden``).
        kind: always ``"wrong"`` (a mutation that is right is a ``Case``).
    """

    function: str
    name: str
    edits: dict[str, str] = field(hash=False)
    message: str | None = None
    hidden: bool = False
    kind: Literal["wrong"] = "wrong"

    def apply(self, reference: str) -> Case:
        """The wrong answer: ``reference`` with the edits made."""
        source = reference
        for old, new in self.edits.items():
            found = source.count(old)
            if found != 1:
                raise MutationError(
                    f"mutation {self.name!r} of {self.function}: the reference contains "
                    f"{old!r} {found} times, not once; update the case to the reference"
                )
            source = source.replace(old, new)
        try:
            ast.parse(source)
        except SyntaxError as error:
            raise MutationError(
                f"mutation {self.name!r} of {self.function} is not valid Python: {error}"
            ) from None
        return Case(self.function, "wrong", self.name, source, self.message, self.hidden)


def reference_solutions(assignment: str) -> dict[str, str]:
    """grade_id -> reference source of every solution cell of ``solutions/<assignment>``."""
    return anatomy.solution_sources(anatomy.read_solution(assignment))


def load_cases(assignment: str) -> list[Case]:
    """The ``CASES`` of ``tests/grading_cases/<assignment>.py`` (empty if there is none),
    mutations applied to the reference solutions."""
    path = CASES_DIR / f"{assignment}.py"
    if not path.exists():
        return []
    spec = importlib.util.spec_from_file_location(f"grading_cases_{assignment}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    solution = anatomy.read_solution(assignment)
    references = anatomy.solution_sources(solution)
    questions = {anatomy.grade_id(cell) for cell in anatomy.question_cells(solution)}
    written = {anatomy.grade_id(cell) for cell in anatomy.written_cells(solution)}
    where = f"tests/grading_cases/{assignment}.py"
    cases = []
    for entry in module.CASES:
        if entry.function in written:
            raise MutationError(
                f"{where}: {entry.function} is a written answer, graded by hand: it has no "
                "cases (autograde leaves it to a grader)"
            )
        if entry.function not in references:
            raise MutationError(
                f"{where}: no graded function or question {entry.function!r} in "
                f"solutions/{assignment}"
            )
        if entry.hidden and entry.kind != "wrong":
            raise MutationError(
                f"{where}: {entry.name!r}: hidden=True marks a wrong answer (one that only "
                "the hidden tests catch), not a right one"
            )
        if isinstance(entry, Mutation):
            entry = entry.apply(references[entry.function])
        if entry.function in questions:
            check_question_answer(entry, where)
        cases.append(entry)
    return cases


def check_question_answer(case: Case, where: str = "the grading cases") -> None:
    """Raise ``MutationError`` unless ``case`` answers its concept question as the cell
    does: Python that assigns the question's variable at the top level (no ``def``)."""
    try:
        body = ast.parse(case.source).body
    except SyntaxError as error:
        raise MutationError(
            f"{where}: the answer {case.name!r} is not valid Python: {error}"
        ) from None
    assigned = {
        target.id
        for node in body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }
    defines = [node for node in body if isinstance(node, ast.FunctionDef | ast.ClassDef)]
    if case.function not in assigned or defines:
        raise MutationError(
            f"{where}: the answer {case.name!r} to the question {case.function} must assign "
            f"it, as its cell does: e.g. '{case.function} = \"a\"\\n' (no def or class)"
        )


@dataclass(frozen=True)
class Submission:
    """One student notebook carrying several cases, at most one per graded function."""

    student: str
    cases: tuple[Case, ...]

    def replacements(self) -> dict[str, str]:
        return {case.function: case.source for case in self.cases}


def _defined_names(case: Case) -> set[str]:
    """The function's name and every other top-level name the answer defines (imports
    excepted: they rebind the same modules)."""
    names = {case.function}
    for node in ast.parse(case.source).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _used_names(*sources: str) -> set[str]:
    """Every identifier the code uses (docstrings and comments do not count)."""
    return {
        node.id for source in sources for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Name)
    }  # fmt: skip


def pack(cases: list[Case], prefix: str) -> list[Submission]:
    """Put the cases into as few submissions as possible, keeping each grade attributable.

    A submission never holds two cases of one function, nor two answers where one uses a
    name the other defines (a ``soft_select`` answer calling ``softmax``, two answers with a
    helper of the same name). A case replaces its function's reference solution, so only
    the answers' own code matters here; reference solutions of functions left in place
    that call a wrong answer are allowed to lose points with it. Test cells are
    self-contained, so one answer cannot change another function's grade otherwise;
    ``tests/test_autograde.py`` checks that every cell without a wrong answer still
    scores full marks.
    """

    # Each answer parsed once: the pairs below are quadratic in the number of cases.
    defined = {id(case): _defined_names(case) for case in cases}
    used = {id(case): _used_names(case.source) for case in cases}

    def independent(a: Case, b: Case) -> bool:
        return (
            a.function != b.function
            and not defined[id(b)] & used[id(a)]
            and not defined[id(a)] & used[id(b)]
        )

    groups: list[list[Case]] = []
    for case in cases:
        group = next((g for g in groups if all(independent(case, other) for other in g)), None)
        if group is None:
            groups.append([case])
        else:
            group.append(case)
    return [Submission(f"{prefix}{i:02d}", tuple(group)) for i, group in enumerate(groups)]
