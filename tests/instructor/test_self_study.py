"""instructor.self_study: the self-study edition ``self_study/`` is what the generator makes of
``solutions/`` and ``notebooks/`` today, the class's text with the edition's cells added,
and every question's cell answers each option as ``course.toml`` explains it."""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest

from helpers import self_study as learner
from instructor import anatomy, colab, registry, self_study

COURSE = registry.load()
IDS = COURSE.ids


def committed(notebook_id: str) -> nbformat.NotebookNode:
    return nbformat.read(self_study.self_study_path(notebook_id), as_version=4)


def made(notebook_id: str) -> nbformat.NotebookNode:
    return self_study.edition(
        COURSE.notebook(notebook_id),
        COURSE,
        anatomy.read_solution(notebook_id),
        anatomy.read_released(notebook_id),
    )


def added(notebook: nbformat.NotebookNode, what: str) -> list[nbformat.NotebookNode]:
    return [c for c in notebook.cells if anatomy.has_tag(c, f"{self_study.TAG}-{what}")]


def payload(cell: nbformat.NotebookNode) -> dict[str, Any]:
    """The encoded data of a check or further-tests cell."""
    lines = cell.source.splitlines()
    start = next(i for i, line in enumerate(lines) if line.endswith("(")) + 2
    return learner.decode("".join(line.strip().strip(",").strip('"') for line in lines[start:-1]))


def test_every_notebook_has_its_self_study_edition() -> None:
    folder = self_study.self_study_path(IDS[0]).parents[1]
    assert sorted(p.parent.name for p in folder.glob("*/*.ipynb")) == IDS, (
        "self_study/ and course.toml hold different notebooks: run `make release`"
    )


@pytest.mark.parametrize("notebook_id", IDS)
def test_the_self_study_edition_is_current(notebook_id: str) -> None:
    assert json.loads(nbformat.writes(made(notebook_id))) == json.loads(
        self_study.self_study_path(notebook_id).read_text(encoding="utf-8")
    ), (
        f"self_study/{notebook_id} differs from what instructor.self_study makes of "
        f"solutions/{notebook_id} and notebooks/{notebook_id}: run `make release` and commit it"
    )


@pytest.mark.parametrize("notebook_id", IDS)
def test_the_edition_is_the_class_release_with_its_cells_added(notebook_id: str) -> None:
    """Every cell of the class's student version is there, in order and unchanged, but
    the badge (opening this edition), the set-up cell (the reminder to save a copy) and the
    questions' test cells (their checks); each exercise gets its further tests and its
    reveal cell, the notebook its progress cell, last."""
    notebook, released = committed(notebook_id), anatomy.read_released(notebook_id)
    entry = COURSE.notebook(notebook_id)
    kept = [c for c in notebook.cells if not anatomy.has_tag(c, self_study.TAG)]
    replaced = {f"test_{q.name}" for q in entry.concept_questions}
    assert [c.id for c in kept] == [
        c.id for c in released.cells if anatomy.grade_id(c) not in replaced
    ]
    theirs = {cell.id: cell for cell in released.cells}
    for cell in kept[2:]:
        assert cell == theirs[cell.id], f"cell {cell.id} differs from the class's"
    url = colab.self_study_url(notebook_id, COURSE)
    assert url in notebook.cells[0].source and colab.colab_url(notebook_id) not in kept[0].source
    assert kept[1].source == colab.self_study_setup_source(entry.colab_packages, COURSE)
    assert [payload(c)["kind"] for c in added(notebook, "check")] == [
        q.kind for q in entry.concept_questions
    ]
    further = added(notebook, "further")
    assert [c.id for c in further] == [f"self-study-further-{e.name}" for e in entry.exercises]
    solutions = anatomy.solution_sources(anatomy.read_solution(notebook_id))
    for cell, exercise in zip(further, entry.exercises, strict=True):
        data = payload(cell)
        assert data["solution"] == solutions[exercise.name]
        assert all(test["further"].strip() for test in data["tests"]), "no hidden tests?"
    reveals = added(notebook, "reveal")
    assert all(line.startswith("#") for c in reveals for line in c.source.splitlines()), (
        "the reveal cells only say how: nothing is revealed unless the learner asks"
    )
    assert anatomy.has_tag(notebook.cells[-1], f"{self_study.TAG}-progress")
    assert str([e.name for e in entry.exercises]) in notebook.cells[-1].source


def questions_and_payloads() -> list[tuple[str, registry.Question, dict[str, Any]]]:
    found = []
    for notebook_id in IDS:
        checks = added(committed(notebook_id), "check")
        for question, cell in zip(
            COURSE.notebook(notebook_id).concept_questions, checks, strict=True
        ):
            found.append((notebook_id, question, payload(cell)))
    return found


QUESTIONS = questions_and_payloads()


@pytest.mark.parametrize(
    ("notebook_id", "question", "data"), QUESTIONS, ids=[q.name for _, q, _ in QUESTIONS]
)
def test_each_question_says_right_or_why_each_wrong_answer_is_wrong(
    notebook_id: str, question: registry.Question, data: dict[str, Any], capsys
) -> None:
    """Run as its cell runs it: the reference answer is right (with the hidden test's
    reason), and each wrong option, or each known mistake of a number question, is not,
    with the explanation course.toml gives it."""
    reference = anatomy.solution_sources(anatomy.read_solution(notebook_id))[question.name]
    cell = f'check_answer("{question.name}", data)'
    namespace = {"check_answer": learner.check_answer, "data": learner.encode(data)}
    exec("import math\n" + reference + "\n" + cell, dict(namespace))  # noqa: S102
    assert ": right. " in capsys.readouterr().out
    for wrong, explanation in question.wrong.items():
        answer = f'"{wrong}"' if question.kind == "choice" else wrong
        exec(f"{question.name} = {answer}\n{cell}", dict(namespace))  # noqa: S102
        out = " ".join(capsys.readouterr().out.split())
        assert ": not right. " in out and " ".join(explanation.split()) in out, out
    assert len(question.wrong) >= (len(question.options) - 1 if question.options else 1)


def test_the_registry_and_the_hidden_test_must_agree() -> None:
    solution = anatomy.read_solution("03_matrix_form")
    test = next(c.source for c in anatomy.test_cells(solution) if "q_double_length" in c.source)
    question = COURSE.notebook("03_matrix_form").question("q_double_length")
    assert self_study.question_payload(question, test)["correct"] == "d"
    other = registry.Question(
        **{**question.__dict__, "answer": "a", "wrong": {"b": "x", "c": "y", "d": "z"}}
    )
    with pytest.raises(
        self_study.SelfStudyError, match="disagree: options 'abcd' / 'abcd', answer 'a' / 'd'"
    ):
        self_study.question_payload(other, test)
    number = COURSE.notebook("03_matrix_form").question("q_scores_per_minute")
    test = next(c.source for c in anatomy.test_cells(solution) if "q_scores_per_minute" in c.source)
    accepted = registry.Question(**{**number.__dict__, "wrong": {"36000000": "x"}})
    with pytest.raises(
        self_study.SelfStudyError, match="the hidden test's correct=36000000 accepts"
    ):
        self_study.question_payload(accepted, test)


def test_with_the_setting_off_the_release_removes_the_edition(tmp_path: Path) -> None:
    text = registry.registry_path().read_text(encoding="utf-8")
    assert "self_study = true" in text
    (tmp_path / "course.toml").write_text(text.replace("self_study = true", "self_study = false"))
    (tmp_path / "self_study" / "01_vector_sets").mkdir(parents=True)
    shutil.copy(
        self_study.self_study_path("01_vector_sets"), tmp_path / "self_study" / "01_vector_sets"
    )
    assert self_study.build_edition(tmp_path) == []
    assert not (tmp_path / "self_study").exists()
    off = registry.load(tmp_path)
    assert colab.landing_url("01_vector_sets", off) == colab.colab_url("01_vector_sets", off)
    assert colab.landing_url("01_vector_sets") == colab.self_study_url("01_vector_sets")


def _names(source: str) -> set[str]:
    """The names a cell's code binds or reads (IPython's ``%`` and ``!`` lines left out)."""
    code = "\n".join(
        line[: len(line) - len(line.lstrip())] + "pass"
        if line.lstrip().startswith(("%", "!"))
        else line
        for line in source.splitlines()
    )
    names: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
    return names


@pytest.mark.parametrize("notebook_id", IDS)
def test_the_editions_names_shadow_nothing_of_the_notebook(notebook_id: str) -> None:
    """A name the edition's own cells bring in (``check_answer``, ``progress_report``, ...)
    is no name the class's cells bind or use: a learner's training cell calling the course's
    ``progress`` bar got the edition's function of that name instead."""
    notebook = committed(notebook_id)
    edition_cells = [c for c in notebook.cells if anatomy.has_tag(c, self_study.TAG)]
    imports = set().union(
        *(_names(c.source) for c in edition_cells if c.cell_type == "code" and "import" in c.source)
    )
    theirs = set().union(
        *(
            _names(c.source)
            for c in anatomy.read_released(notebook_id).cells
            if c.cell_type == "code"
        )
    )
    assert imports, "the edition imports nothing of helpers.self_study"
    assert not imports & theirs, (
        f"{notebook_id}: the self-study edition's {sorted(imports & theirs)} shadow the "
        "notebook's own names"
    )


@pytest.mark.parametrize("notebook_id", IDS)
def test_no_question_s_example_is_its_right_answer(notebook_id: str) -> None:
    """A question ends with "Answer by setting `q` to ..., e.g. `q = ...`": that example is
    never the right answer (a learner who copies the format would be given it), checked by
    the edition's own check of the answer."""
    solution = anatomy.read_solution(notebook_id)
    prose = "\n".join(c.source for c in solution.cells if c.cell_type == "markdown")
    tests = {anatomy.grade_id(c): c.source for c in anatomy.test_cells(solution)}
    for question in COURSE.notebook(notebook_id).concept_questions:
        found = re.search(rf"e\.g\. `{question.name} = ([^`]+)`", prose)
        assert found, f"{notebook_id}: {question.name} has no example answer"
        example = ast.literal_eval(found.group(1))
        payload = self_study.question_payload(question, tests[f"test_{question.name}"])
        right, _ = learner._verdict(question.name, example, payload)
        assert not right, (
            f"{notebook_id}: the example `{question.name} = {found.group(1)}` is the question's "
            "right answer: give another one"
        )
