"""The item analysis of a class of 31 generated from notebook 03's grading cases, its every
count checked against what was planted, and its page opened in Chromium.

Each grading case of ``tests/grading_cases/03_matrix_form.py`` (wrong and right answers,
concept answers) is judged once, in this process, by the class grader's own
``judge.run_test`` on the notebook's real test cells, against a kernel that answers probes
here (as ``test_judge.py``; the sandboxed kernel is ``test_session.py``'s): what the grader
records of each cell (passed, the tags of the known mistakes its message named, the part
that failed, the answer it read). That proves, per case, what ``instructor.mistake_tags``
promises: a wrong case with a message names the mistake its message is, a hidden case fails
the hidden part, a right case names nothing.

The class: students made of one case per function and question (cycled through the cases),
full marks, a zero, two unreadable notebooks and a missing one, late hand-ins, and the
written answer graded by hand, awaiting a grader and unanswered; its records built as the
grader builds them (a cell's score is its points where the verdict passed). Every count of
``items.csv`` is then recounted here from the plan, by plain loops over it.
"""

from __future__ import annotations

import ast
import csv
import itertools
from collections import Counter

import pytest

from instructor import anatomy, registry
from instructor.classroom.grader import records
from instructor.classroom.grader.items_html import write_items
from instructor.classroom.grader.records import CellSeen, FailedPart, Manual
from instructor.classroom.kernel import probe as probe_kernel
from instructor.classroom.worker import Outcome
from instructor.classroom.worker.judge import Channel, run_test
from instructor.grading_cases import Case, load_cases
from instructor.mistake_tags import messages_in
from support.studentview import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, browser_skip_reason

A = "03_matrix_form"
SOLUTION = anatomy.read_solution(A)
TESTS = {anatomy.grade_id(c): c for c in anatomy.test_cells(SOLUTION)}
(WRITTEN,) = [anatomy.grade_id(c) for c in anatomy.written_cells(SOLUTION)]
POINTS = {
    anatomy.grade_id(c): float(c.metadata.nbgrader.points)
    for c in [*TESTS.values(), *anatomy.written_cells(SOLUTION)]
}
ENTRY = registry.load().notebook(A)
# The cases are judged once per process: the module's tests stay on one xdist worker.
pytestmark = pytest.mark.xdist_group("items-class-03")
Verdict = tuple[bool, CellSeen | None]
"""A test cell's verdict: passed, and what the grader saw."""


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> dict[Case, dict[str, Verdict]]:
    """Every case of the notebook, judged on its function's (or question's) test cells."""
    namespace: dict = {}

    def run(code: str, seconds: float | None = None) -> None:
        call = ast.parse(code).body[0].value
        assert isinstance(call, ast.Call)
        probe_kernel.answer(call.args[0].value)

    root = tmp_path_factory.mktemp("probes")
    channel = Channel(root, run)
    imports = anatomy.imports_source(SOLUTION)
    verdicts: dict[Case, dict[str, Verdict]] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(probe_kernel, "_kernel_namespace", lambda: namespace)
        for case in load_cases(A):
            namespace.clear()
            exec(imports, namespace)  # noqa: S102 - the course's own notebook
            exec(case.source, namespace)  # noqa: S102 - the course's own grading case
            verdicts[case] = {}
            for test in anatomy.tests_of(case.function, list(TESTS)):
                verdict = run_test(TESTS[test].source, test, channel)
                verdicts[case][test] = (verdict.passed, verdict.seen)
    return verdicts


def _named(case: Case) -> set[str]:
    """The tags of the known messages of the case's test cells that its promised message
    quotes (a phrase of 20 characters of one of their literal parts, as test_messages.py)."""
    tags = set()
    for test in anatomy.tests_of(case.function, list(TESTS)):
        for message in messages_in(TESTS[test].source, test, case.function):
            text = case.message or ""
            phrases = {text[i : i + 20] for i in range(len(text) - 19)}
            if any(p in c for c in message.chunks for p in phrases):
                tags.add(message.tag)
    return tags


def test_each_case_is_recorded_as_it_promises(judged: dict[Case, dict[str, Verdict]]) -> None:
    named = 0
    for case, cells in judged.items():
        seen = [s for _, s in cells.values() if s is not None]
        tags = {t for s in seen for t in s.tags}
        if case.kind == "right":
            assert all(passed for passed, _ in cells.values()), case
            assert not tags, case
            continue
        assert not all(passed for passed, _ in cells.values()), case
        if case.hidden:
            assert {s.failed for s in seen} == {FailedPart.HIDDEN}, case
        if case.message and (promised := _named(case)):
            assert tags & promised, (case, tags, promised)
            named += 1
    assert named >= 10


def _plan(judged: dict[Case, dict[str, Verdict]]) -> dict[str, dict]:
    """Per student: the case per function and question, the written answer's grade, and the
    notebook's outcome."""
    by_item = {
        item: [c for c in judged if c.function == item]
        for item in [*(e.name for e in ENTRY.exercises), *(q.name for q in ENTRY.concept_questions)]
    }
    right = {item: next(c for c in cases if c.kind == "right") for item, cases in by_item.items()}
    zero = {
        item: next(
            c for c in cases if c.kind == "wrong" and not any(p for p, _ in judged[c].values())
        )
        for item, cases in by_item.items()
    }
    written = itertools.cycle(
        [(Manual.GRADED, 2), (Manual.GRADED, 1), (Manual.AWAITING, None), (Manual.GRADED, 0)]
        + [(Manual.UNANSWERED, 0)]
    )
    plan = {"full_01": {"cases": right, "written": (Manual.GRADED, 2), "outcome": Outcome.OK}}
    plan["zero_01"] = {"cases": zero, "written": (Manual.UNANSWERED, 0), "outcome": Outcome.OK}
    for i in range(26):
        cases = {item: cases[i % len(cases)] for item, cases in by_item.items()}
        plan[f"student_{i:02d}"] = {"cases": cases, "written": next(written), "outcome": Outcome.OK}
    for name, outcome in [
        ("unreadable_01", Outcome.UNREADABLE),
        ("unreadable_02", Outcome.UNREADABLE),
        ("missing_01", Outcome.MISSING),
    ]:
        plan[name] = {"cases": {}, "written": (Manual.UNANSWERED, 0), "outcome": outcome}
    return plan


def _verdicts(judged: dict, planned: dict) -> dict[str, Verdict]:
    return {test: v for case in planned["cases"].values() for test, v in judged[case].items()}


def _summary(student: str, planned: dict, verdicts: dict[str, Verdict]) -> records.HandInSummary:
    """The hand-in's record, as the grader writes it from the verdicts and the gradebook."""
    manual, points = planned["written"]
    passed = {test: verdicts.get(test, (False, None))[0] for test in TESTS}
    cells = tuple(
        records.CellGrade(test, POINTS[test] if passed[test] else 0.0, POINTS[test])
        for test in TESTS
    ) + (records.CellGrade(WRITTEN, None if points is None else float(points), 2.0, manual),)
    record = records.NotebookSummary(
        outcome=planned["outcome"],
        score=sum(g.score or 0 for g in cells),
        max_score=sum(POINTS.values()),
        cells=cells,
        seen=tuple(s for _, s in verdicts.values() if s is not None),
    )
    return records.HandInSummary(student, A, notebooks={A: record})


@pytest.fixture(scope="module")
def planted(judged: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    plan = _plan(judged)
    verdicts = {student: _verdicts(judged, planned) for student, planned in plan.items()}
    summaries = [_summary(s, plan[s], verdicts[s]) for s in plan]
    late = {(s, A) for i, s in enumerate(plan) if i % 4 == 1}
    folder = tmp_path_factory.mktemp("reports")
    write_items(folder, summaries, registry=registry.load(), late=late)
    rows = list(csv.DictReader((folder / "items.csv").open()))
    table = {(r["kind"], r["cell"], r["statistic"]): r["value"] for r in rows}
    return {"plan": plan, "verdicts": verdicts, "summaries": summaries, "late": late,
            "folder": folder, "table": table, "rows": rows}  # fmt: skip


def test_the_class_has_every_kind_of_outcome(planted: dict) -> None:
    totals = {s.student: s.score for s in planted["summaries"]}
    top = sum(POINTS.values())
    assert len(totals) >= 30
    assert totals["full_01"] == top and totals["zero_01"] == 0
    assert any(0 < t < top for t in totals.values())
    outcomes = Counter(p["outcome"] for p in planted["plan"].values())
    assert outcomes[Outcome.UNREADABLE] and outcomes[Outcome.MISSING]
    written = Counter(p["written"][0] for p in planted["plan"].values())
    assert written[Manual.AWAITING] and written[Manual.GRADED] and written[Manual.UNANSWERED]
    assert planted["late"]
    table = planted["table"]
    assert table[("assignment", "", "n")] == str(len(totals))
    late = len(planted["late"]) / len(totals)
    assert float(table[("assignment", "", "share_late")]) == pytest.approx(late, rel=1e-5)


def test_every_test_cell_counts_what_was_planted(planted: dict) -> None:
    table = planted["table"]
    for test in TESTS:
        kind = "concept" if test.startswith("test_q_") else "test"
        ran = [v[test] for v in planted["verdicts"].values() if test in v]
        if kind == "test":
            parts = Counter(s.failed for passed, s in ran if not passed and s is not None)
            assert table[(kind, test, "passed")] == str(sum(p for p, _ in ran))
            assert table[(kind, test, "failed")] == str(sum(not p for p, _ in ran))
            assert table[(kind, test, "not_run")] == str(len(planted["plan"]) - len(ran))
            assert table[(kind, test, "failed_visible")] == str(parts[FailedPart.VISIBLE])
            assert table[(kind, test, "failed_hidden")] == str(parts[FailedPart.HIDDEN])
        else:
            n = len(planted["plan"])  # every hand-in has a score for it, 0 where not run
            facility = sum(p for p, _ in ran) / n
            assert float(table[(kind, test, "facility")]) == pytest.approx(facility, rel=1e-5)


def test_every_named_mistake_counts_the_students_who_made_it(planted: dict) -> None:
    made: dict[tuple[str, str], set[str]] = {}  # (tag, function) -> students
    for student, verdicts in planted["verdicts"].items():
        for test, (_, seen) in verdicts.items():
            for tag in seen.tags if seen else ():
                function = anatomy.function_of_test(test) or ""
                made.setdefault((tag, function), set()).add(student)
    assert len(made) >= 8
    n = len(planted["plan"])
    listed = [r for r in planted["rows"] if r["kind"] == "mistake"]
    counts = [int(r["value"]) for r in listed if r["statistic"] == "students"]
    assert counts == sorted(counts, reverse=True)
    found = {(r["cell"], r["item"], r["statistic"]): float(r["value"]) for r in listed}
    assert {key[:2] for key in found} == set(made)
    for key, students in made.items():
        assert found[(*key, "students")] == len(students)
        assert found[(*key, "share")] == pytest.approx(len(students) / n, rel=1e-5)


def test_every_option_counts_the_students_who_chose_it(planted: dict) -> None:
    for question in ENTRY.concept_questions:
        if question.kind != "choice":
            continue
        test = f"test_{question.name}"
        answers = [v[test][1].answer for v in planted["verdicts"].values() if test in v]
        for letter in question.options or "":
            share = float(planted["table"][("concept", test, f"option_{letter}")])
            assert share == pytest.approx(answers.count(letter) / len(answers), rel=1e-5), letter


def test_the_page_opens_in_chromium_with_every_figure_drawn(planted: dict) -> None:
    reason = browser_skip_reason()
    if reason:
        pytest.skip(f"browser test skipped: {reason}")
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for name in ("items.html", "items_anonymous.html"):
                page = browser.new_page(viewport={"width": 1100, "height": 1400})
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.goto((planted["folder"] / name).as_uri())
                drawn = page.eval_on_selector_all(
                    "img", "imgs => imgs.map(i => i.complete && i.naturalWidth > 0 && !!i.alt)"
                )
                assert drawn and all(drawn), (name, drawn)
                text = page.inner_text("body")
                assert "Named mistakes" in text and "Options chosen" in text
                if name == "items.html":
                    page.screenshot(path=str(ARTIFACTS / "items_report.png"))
                else:
                    assert "student_" not in text and "full_01" not in text
                page.close()
        finally:
            browser.close()
    assert errors == []
