"""The self-study edition in a kernel, and the class's edition without any of it.

- **The class's edition stays clean**: no question's right answer (a ``correct=`` or
  ``why=`` in a question's check, the whole reason of its hidden test, its reference
  assignment in its answer cell) and no explanation of a wrong option (``course.toml``'s
  ``[notebook.question.wrong]``, whole) stands in ``notebooks/`` or in what
  ``nbgrader generate_assignment`` releases, nor any call of the edition's checks. The same
  search finds the reasons in ``solutions/`` and the explanations in the self-study
  edition's (decoded) cells, so it is a search that can find them.
- **The edition in a kernel** (notebook 01, its demo cells emptied, as the grading tests
  do; one kernel, about 10 s): with the reference answers every question says right, every
  exercise's further tests pass and the progress cell counts everything; then, in the same
  kernel, each question set to a wrong option says not right with that option's
  explanation, an exercise replaced by a wrong answer of ``tests/grading_cases`` that only
  the hidden tests catch fails its further tests with that case's message, ``reveal``
  prints the reference solution, and the progress cell counts what is left.

Notebook 01's kernel here uses this checkout's packages; ``test_colab.py`` makes the same
runs of every notebook's edition on Colab's versions.
"""

from __future__ import annotations

import ast
import time

import nbformat
import pytest

from helpers import self_study as learner
from instructor import anatomy, questions, registry, self_study
from support.graded_class import generated
from support.studentview import learner_case, wrong_attempts, wrong_option_id

COURSE = registry.load()
IDS = COURSE.ids
QUESTION_CHECKS = ("check_choice", "check_number")
CALLS = ("check_answer", "further_tests", "helpers.self_study", "reveal(")


def words(text: str) -> str:
    """``text`` as its normalised words, one space apart (string literals' quotes, markdown
    and punctuation gone), so that a reason split over several literals is found whole."""
    return " " + " ".join(questions.normalised_words(text)) + " "


def keywords(cell: nbformat.NotebookNode) -> list[str]:
    """The ``correct=`` and ``why=`` of the questions' checks in a code cell (its magics left
    out): only the hidden tests pass them."""
    lines = [line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    try:
        tree = ast.parse("\n".join(lines))
    except SyntaxError:
        return []
    return [
        f"{keyword.arg}= in cell {cell.id}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", getattr(node.func, "attr", "")) in QUESTION_CHECKS
        for keyword in node.keywords
        if keyword.arg in ("correct", "why")
    ]


def answers_of(notebook_id: str) -> list[tuple[str, str]]:
    """(what, text) that only a self-learner may see: each concept question's hidden
    reason and each explanation of a wrong answer."""
    solution = anatomy.read_solution(notebook_id)
    tests = {anatomy.grade_id(c): c.source for c in anatomy.test_cells(solution)}
    found = []
    for question in COURSE.notebook(notebook_id).concept_questions:
        why = self_study._hidden_check(tests[f"test_{question.name}"], question.name)["why"]
        found.append((f"{question.name}: the reason of its right answer", why))
        found += [
            (f"{question.name}: the explanation of {key}", text)
            for key, text in question.wrong.items()
        ]
    return found


def leaks(notebook: nbformat.NotebookNode, notebook_id: str) -> list[str]:
    """What ``notebook`` holds of :func:`answers_of` (a text whole, however it is split into
    literals), of a question check's ``correct=`` or ``why=``, of a question's right answer in its
    answer cell, and of the self-study edition's calls."""
    text = "\n".join(cell.source for cell in notebook.cells)
    prose = words(text)
    found = [what for what, answer in answers_of(notebook_id) if words(answer) in prose]
    found += [f"a call of {call}" for call in CALLS if call in text]
    found += [k for cell in notebook.cells if cell.cell_type == "code" for k in keywords(cell)]
    reference = anatomy.solution_sources(anatomy.read_solution(notebook_id))
    for cell in anatomy.question_cells(notebook):
        name = anatomy.grade_id(cell)
        if anatomy.strip_solution_markers(reference[name]).strip() in cell.source:
            found.append(f"the right answer of {name} in its answer cell")
    return found


def test_the_search_finds_what_it_looks_for() -> None:
    """Where the answers are, the search finds them: the reasons in solutions/, the
    explanations in the self-study edition's decoded cells."""
    solution = anatomy.read_solution("03_matrix_form")
    found = leaks(solution, "03_matrix_form")
    assert all(
        f"{q.name}: the reason of its right answer" in found
        for q in COURSE.notebook("03_matrix_form").concept_questions
    )
    assert any(item.startswith("correct=") for item in found)
    assert any(item.startswith("the right answer of") for item in found)
    edition = nbformat.read(self_study.self_study_path("03_matrix_form"), as_version=4)
    decoded = [
        learner.decode(
            "".join(line.strip().strip(",").strip('"') for line in c.source.splitlines()[4:-1])
        )
        for c in edition.cells
        if anatomy.has_tag(c, "self-study-check")
    ]
    shown = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(str(d)) for d in decoded])
    explained = [w for w in leaks(shown, "03_matrix_form") if "explanation" in w]
    assert len(explained) == sum(
        len(q.wrong) for q in COURSE.notebook("03_matrix_form").concept_questions
    )


@pytest.mark.parametrize("notebook_id", IDS)
def test_the_class_edition_holds_no_answer_and_no_explanation(
    notebook_id: str, tmp_path_factory
) -> None:
    committed = anatomy.read_released(notebook_id)
    assert leaks(committed, notebook_id) == [], f"notebooks/{notebook_id}"
    release = generated(tmp_path_factory, notebook_id).root / "release" / notebook_id
    made = nbformat.read(release / f"{notebook_id}.ipynb", as_version=4)
    assert leaks(made, notebook_id) == [], f"generate_assignment's release of {notebook_id}"


# The edition in a kernel ------------------------------------------------------------------

NOTEBOOK = "01_vector_sets"


def emptied_demos(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Every code cell a learner may change freely emptied (the demos), as the grading
    tests do; the edition's own cells, the imports, the answers and the tests stay."""
    for cell in notebook.cells:
        if cell.cell_type == "code" and not (
            anatomy.has_tag(cell, self_study.TAG)
            or anatomy.has_tag(cell, anatomy.IMPORTS_TAG)
            or anatomy.is_solution_cell(cell)
            or anatomy.is_test_cell(cell)
        ):
            cell.source = ""
    return notebook


def outputs(cell: nbformat.NotebookNode) -> str:
    return "".join(
        out.get("text", "")
        if out.output_type == "stream"
        else f"{out.get('ename')}: {out.get('evalue')}"
        for out in cell.get("outputs", [])
    )


@pytest.fixture(scope="module")
def ran() -> tuple[nbformat.NotebookNode, float]:
    edition = nbformat.read(self_study.self_study_path(NOTEBOOK), as_version=4)
    notebook = emptied_demos(
        anatomy.complete(edition, anatomy.solution_sources(anatomy.read_solution(NOTEBOOK)))
    )
    notebook.cells += wrong_attempts(NOTEBOOK, notebook)
    from nbclient import NotebookClient

    start = time.monotonic()
    NotebookClient(notebook, timeout=120, allow_errors=True, record_timing=False).execute()
    return notebook, time.monotonic() - start


def by_id(notebook: nbformat.NotebookNode, cell_id: str) -> nbformat.NotebookNode:
    return next(cell for cell in notebook.cells if cell.id == cell_id)


@pytest.mark.xdist_group("self-study-kernel")
def test_with_the_reference_answers_everything_is_right(ran) -> None:
    notebook, seconds = ran
    entry = COURSE.notebook(NOTEBOOK)
    for question in entry.concept_questions:
        assert ": right. " in outputs(by_id(notebook, f"self-study-check-{question.name}"))
    for exercise in entry.exercises:
        said = outputs(by_id(notebook, f"self-study-further-{exercise.name}"))
        assert said == f"{exercise.name}: further tests passed\n"
    progress = outputs(by_id(notebook, "self-study-progress"))
    n, q = len(entry.exercises), len(entry.concept_questions)
    assert f"exercises passing their visible tests: {n} of {n}" in progress
    assert f"exercises passing their further tests: {n} of {n}" in progress
    assert f"questions answered right: {q} of {q}" in progress
    errors = [
        c.id for c in notebook.cells if "error" in [o.output_type for o in c.get("outputs", [])]
    ]
    assert errors == ["wrong-exercise"], "only the wrong answer's further tests fail"
    print(f"{NOTEBOOK}'s self-study edition ran in {seconds:.1f} s")


@pytest.mark.xdist_group("self-study-kernel")
def test_a_wrong_answer_is_told_why(ran) -> None:
    notebook, _ = ran
    entry = COURSE.notebook(NOTEBOOK)
    for question in entry.concept_questions:
        for key, explanation in question.wrong.items():
            said = " ".join(outputs(by_id(notebook, wrong_option_id(question.name, key))).split())
            assert ": not right. " in said and " ".join(explanation.split()) in said, said
    case = learner_case(NOTEBOOK)
    failed = outputs(by_id(notebook, "wrong-exercise"))
    assert failed.startswith(f"AssertionError: {case.function}: a further test failed: ")
    assert case.message in failed
    reference = anatomy.solution_sources(anatomy.read_solution(NOTEBOOK))[case.function]
    assert reference in outputs(by_id(notebook, "reveal"))
    progress = outputs(by_id(notebook, "progress-again"))
    n = len(entry.exercises)
    assert f"exercises passing their visible tests: {n} of {n}" in progress
    assert f"exercises passing their further tests: {n - 1} of {n}" in progress
    assert f"questions answered right: 0 of {len(entry.concept_questions)}" in progress
