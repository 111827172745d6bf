"""The grades CSV, the integrity report and the run's log lines, from summaries."""

from __future__ import annotations

import ast
import csv
import json
from pathlib import Path

from instructor import anatomy
from instructor.classroom.grader.records import (
    CellGrade,
    HandInSummary,
    Manual,
    NotebookSummary,
    ZeroedTest,
    ZeroKind,
    attention,
    cell_outcome,
    zero_reason,
)
from instructor.classroom.grader.reports import (
    COURSE_TOTAL,
    GRADES_HEADER,
    REFERENCE_STUDENT,
    TOTALS_HEADER,
    awaiting_lines,
    best_effort_checks,
    copy_report,
    integrity_markdown,
    run_lines,
    write_reports,
)
from instructor.grading_cases import load_cases

HONEST = HandInSummary(
    "alice",
    "x",
    notebooks={
        "x": NotebookSummary(
            outcome="ok",
            restored=(),
            events=(),
            seconds=1.0,
            score=3.0,
            max_score=3.0,
            cells=(CellGrade("test_b", 1.0, 1.0), CellGrade("test_a", 2.0, 2.0)),
        )
    },
)
HOSTILE = HandInSummary(
    "mallory",
    "x",
    notes=("extra notebook y.ipynb (not graded)",),
    error="nbgrader autograde failed: boom",
    notebooks={
        "x": NotebookSummary(
            outcome="time limit",
            notes=("edited test cell test_a (restored from the gradebook)",),
            flags=("a: imports ctypes",),
            zeroed=(ZeroedTest("test_a", "test_a did not run", ZeroKind.NOT_RUN),),
            restored=("torch.allclose was replaced (before test_a)",),
            events=("started a subprocess",),
            seconds=30.0,
            score=0.0,
            max_score=3.0,
            cells=(CellGrade("test_a", 0.0, 2.0),),
        ),
        "z": NotebookSummary(outcome="missing", notes=("no z.ipynb in the submission",)),
    },
)


def test_an_honest_hand_in_needs_no_look() -> None:
    assert attention(HONEST) == []


def test_everything_about_a_hostile_hand_in_is_listed() -> None:
    assert attention(HOSTILE) == [
        "extra notebook y.ipynb (not graded)",
        "nbgrader autograde failed: boom",
        "x: time limit",
        "x: scored 0, not for wrong answers: time limit",
        "x: edited test cell test_a (restored from the gradebook)",
        "x: test_a scored 0: test_a did not run",
        "x: undone before a test: torch.allclose was replaced (before test_a)",
        "x: the kernel started a subprocess",
        "x: suspicious code: a: imports ctypes",
        "z: missing",
        "z: scored 0, not for wrong answers: missing",
        "z: no z.ipynb in the submission",
    ]


def test_the_reports_are_written(tmp_path: Path) -> None:
    write_reports(tmp_path / "reports", [HONEST, HOSTILE])
    rows = list(csv.reader((tmp_path / "reports" / "grades.csv").open()))
    assert rows == [
        list(GRADES_HEADER),
        ["alice", "x", "x", "test_a", "2.0", "2.0", "passed"],
        ["alice", "x", "x", "test_b", "1.0", "1.0", "passed"],
        ["mallory", "x", "x", "test_a", "0.0", "2.0", "not run"],
    ]
    markdown = (tmp_path / "reports" / "integrity.md").read_text()
    assert markdown.startswith("# Integrity report\n\n1 of 2 submission(s) need a look.\n")
    assert "## mallory / x (0/3)\n- extra notebook" in markdown
    assert "alice" not in markdown
    data = json.loads((tmp_path / "reports" / "integrity.json").read_text())
    assert [HandInSummary.from_json(d) for d in data] == [HONEST, HOSTILE]


def test_the_run_lines_count_outcomes_and_errors() -> None:
    lines = run_lines([HONEST, HOSTILE], skipped=4, seconds=12.34)
    assert lines == [
        "graded 2 submission(s) in 12.3 s (4 skipped); notebooks: 1 missing, 1 ok, 1 time limit",
        "1 grader error(s)",
        "  mallory/x: nbgrader autograde failed: boom",
    ]


def test_the_log_says_what_the_integrity_report_says(tmp_path: Path) -> None:
    """The count comes from the report as written, whoever was graded in this run (a run
    that grades nobody again still reports every hand-in of the report)."""
    said: list[str] = []
    write_reports(tmp_path / "reports", [HONEST, HOSTILE], say=said.append)
    first = (tmp_path / "reports" / "integrity.md").read_text().splitlines()[2]
    assert first == "1 of 2 submission(s) need a look."
    report = tmp_path / "reports" / "integrity.md"
    assert said == [f"integrity report: 1 of 2 submission(s) need a look ({report})"]


def _notebook(outcome: str = "ok", cells=(), zeroed=(), imports_error: str = ""):
    return NotebookSummary(
        outcome=outcome,
        zeroed=tuple(zeroed),
        restored=(),
        events=(),
        seconds=1.0,
        score=sum(c.score or 0 for c in cells),
        max_score=sum(c.max_score or 0 for c in cells),
        cells=tuple(cells),
        imports_error=imports_error,
    )


def test_each_cell_is_passed_failed_not_run_or_zeroed() -> None:
    record = _notebook(
        "time limit",
        [
            CellGrade("test_a", 2.0, 2.0),
            CellGrade("test_b", 0.0, 1.0),
            CellGrade("test_c", 0.0, 1.0),
            CellGrade("test_d", 0.0, 1.0),
        ],
        [
            ZeroedTest("test_c", "stopped by the time limit", ZeroKind.NOT_RUN),
            # Decided by its kind, never by its words.
            ZeroedTest("test_d", "test_d did not run? it broke", ZeroKind.BROKEN_PROTOCOL),
        ],
    )
    assert [cell_outcome(record, g) for g in record.cells] == [
        "passed",
        "failed",
        "not run",
        "zeroed",
    ]
    missing = NotebookSummary(outcome="missing", score=0.0, max_score=1.0, cells=())
    assert cell_outcome(missing, CellGrade("test_a", 0.0, 1.0)) == "not run"


def test_a_blank_notebook_fails_its_tests_and_needs_no_look() -> None:
    blank = HandInSummary(
        "carol", "x", notebooks={"x": _notebook(cells=[CellGrade("test_a", 0.0, 3.0)])}
    )
    assert cell_outcome(blank.notebooks["x"], CellGrade("test_a", 0.0, 3.0)) == "failed"
    assert zero_reason(blank.notebooks["x"]) == ""
    assert attention(blank) == []


def test_a_failing_imports_cell_is_flagged() -> None:
    error = "ModuleNotFoundError: No module named 'seaborn'"
    cells = [CellGrade("test_a", 0.0, 3.0), CellGrade("test_b", 0.0, 3.0)]
    summary = HandInSummary(
        "dave", "x", notebooks={"x": _notebook(cells=cells, imports_error=error)}
    )
    notes = attention(summary)
    assert f"x: the imports cell failed ({error}): every later cell that needs its names fails" in (
        notes
    )
    assert f"x: scored 0, not for wrong answers: its imports cell failed ({error})" in notes
    report = integrity_markdown([HONEST, summary])
    assert "1 of 2 submission(s) need a look." in report and "seaborn" in report
    # With some points the imports cell is still named, the zero is not.
    partial = HandInSummary(
        "erin",
        "x",
        notebooks={"x": _notebook(cells=[CellGrade("test_a", 3.0, 3.0)], imports_error=error)},
    )
    assert [line for line in attention(partial) if "scored 0" in line] == []
    assert any("imports cell failed" in line for line in attention(partial))


def test_every_zero_that_is_not_a_wrong_answer_is_flagged() -> None:
    for outcome in ("time limit", "kernel died", "missing", "unreadable", "grader error"):
        record = NotebookSummary(outcome=outcome, score=0.0, max_score=3.0, cells=())
        assert zero_reason(record) == outcome
    not_run = _notebook(
        cells=[CellGrade("test_a", 0.0, 3.0)],
        zeroed=[ZeroedTest("test_a", "test_a did not run", ZeroKind.NOT_RUN)],
    )
    assert zero_reason(not_run) == "no test cell ran"


def test_best_effort_checks_are_stated_once_per_notebook_and_flag_no_one(
    tmp_path: Path,
) -> None:
    """The rules measured inside the student's kernel are listed per notebook (the union
    over hand-ins: a notebook stopped early asked fewer), worded for the instructor, and
    put no student in the list of hand-ins to read."""
    largest = "check_largest_tensor (the largest tensor made) in test_sliding_window_attention"
    calls = "check_no_loop_over_positions (torch calls counted) in test_causal_linear_attention"

    def hand_in(student: str, assignment: str, best_effort: tuple[str, ...]) -> HandInSummary:
        record = NotebookSummary(
            outcome="ok",
            restored=(),
            events=(),
            seconds=1.0,
            score=1.0,
            max_score=1.0,
            cells=(CellGrade("test_a", 1.0, 1.0),),
            best_effort=best_effort,
        )
        return HandInSummary(student, assignment, notebooks={assignment: record})

    summaries = [
        hand_in("alice", "06_efficient_attention", (largest,)),
        hand_in("bob", "06_efficient_attention", (largest,)),
        hand_in("alice", "08_rnn_vs_attention", (calls,)),
        hand_in("bob", "08_rnn_vs_attention", (calls, largest.replace("sliding_window", "rnn"))),
        hand_in("alice", "01_vector_sets", ()),
    ]
    assert best_effort_checks(summaries) == {
        ("06_efficient_attention", "06_efficient_attention"): [largest],
        ("08_rnn_vs_attention", "08_rnn_vs_attention"): [
            "check_largest_tensor (the largest tensor made) in test_rnn_attention",
            calls,
        ],
    }
    assert all(attention(summary) == [] for summary in summaries)
    write_reports(tmp_path, summaries)
    report = (tmp_path / "integrity.md").read_text()
    assert report.startswith("# Integrity report\n\n0 of 5 submission(s) need a look.\n")
    assert report.count("## Best-effort checks") == 2 and "01_vector_sets" not in report
    section = report.split("## Best-effort checks: 06_efficient_attention / 06_eff", 1)[1]
    section = section.split("\n## ", 1)[0]
    assert "inside the student's own kernel" in section and "forge" in section
    assert section.count(largest) == 1
    assert "alice" not in report and "bob" not in report
    data = json.loads((tmp_path / "integrity.json").read_text())
    assert data[0]["notebooks"]["06_efficient_attention"]["best_effort"] == [largest]
    assert [HandInSummary.from_json(d) for d in data] == summaries


def _totals(folder: Path) -> list[dict[str, str]]:
    with (folder / "totals.csv").open() as handle:
        reader = csv.DictReader(handle)
        assert tuple(reader.fieldnames or ()) == TOTALS_HEADER
        return list(reader)


def test_totals_per_assignment_and_over_the_course(tmp_path: Path) -> None:
    y = HandInSummary(
        "alice", "y", notebooks={"y": _notebook(cells=[CellGrade("test_a", 4.0, 6.0)])}
    )
    write_reports(tmp_path, [HONEST, HOSTILE, y])
    rows = _totals(tmp_path)
    assert rows == [
        {"student": "alice", "assignment": "x", "score": "3", "max_score": "3",
         "late_penalty": "", "final": "3", "awaiting_manual": "0"},
        {"student": "alice", "assignment": "y", "score": "4", "max_score": "6",
         "late_penalty": "", "final": "4", "awaiting_manual": "0"},
        {"student": "alice", "assignment": COURSE_TOTAL, "score": "7", "max_score": "9",
         "late_penalty": "", "final": "7", "awaiting_manual": "0"},
        {"student": "mallory", "assignment": "x", "score": "0", "max_score": "3",
         "late_penalty": "", "final": "0", "awaiting_manual": "0"},
        {"student": "mallory", "assignment": "y", "score": "", "max_score": "6",
         "late_penalty": "", "final": "", "awaiting_manual": ""},
        {"student": "mallory", "assignment": COURSE_TOTAL, "score": "0", "max_score": "9",
         "late_penalty": "", "final": "0", "awaiting_manual": "0"},
    ]  # fmt: skip


def test_a_written_answer_awaiting_its_grader_is_pending_not_zero(tmp_path: Path) -> None:
    cells = [
        CellGrade("test_a", 3.0, 3.0),
        CellGrade("written_a", None, 2.0, Manual.AWAITING),
        CellGrade("written_b", 1.5, 2.0, Manual.GRADED),
        CellGrade("written_c", 0.0, 2.0, Manual.UNANSWERED),
    ]
    bob = HandInSummary("bob", "x", notebooks={"x": _notebook(cells=cells)})
    record = bob.notebooks["x"]
    assert [cell_outcome(record, g) for g in cells] == [
        "passed",
        "awaiting manual grading",
        "graded by hand",
        "unanswered",
    ]
    assert (bob.awaiting, bob.awaiting_points) == ([("x", cells[1])], 2.0)
    missing = NotebookSummary(outcome="missing", cells=tuple(cells))
    assert cell_outcome(missing, cells[3]) == "not run"
    write_reports(tmp_path, [HONEST, bob])
    bob_rows = [r for r in _totals(tmp_path) if r["student"] == "bob"]
    assert [(r["final"], r["awaiting_manual"]) for r in bob_rows] == [("", "2"), ("", "2")]
    grades = {r["cell"]: r for r in csv.DictReader((tmp_path / "grades.csv").open())}
    assert (grades["written_a"]["score"], grades["written_c"]["score"]) == ("", "0.0")
    moodle = list(csv.reader((tmp_path / "moodle.csv").open()))
    assert moodle[1:] == [["alice", "3"], ["bob", ""]]
    report = (tmp_path / "integrity.md").read_text()
    assert "| bob | x | x: written_a | 2 |" in report
    assert "formgrader" in report
    assert awaiting_lines([HONEST, bob]) == [
        line for line in awaiting_lines([bob]) if line.startswith("1 written answer(s) of 1 ")
    ]
    assert awaiting_lines([HONEST]) == []


def test_a_student_whose_folder_was_removed_disappears(tmp_path: Path) -> None:
    write_reports(tmp_path, [HONEST, HOSTILE], present_students={"alice"})
    for name in ("grades.csv", "totals.csv", "moodle.csv"):
        rows = list(csv.reader((tmp_path / name).open()))
        assert "mallory" not in {cell for row in rows for cell in row}, name
    assert "mallory" not in (tmp_path / "integrity.md").read_text()
    data = json.loads((tmp_path / "integrity.json").read_text())
    assert [d["student"] for d in data] == ["alice"]


class _Renamer(ast.NodeTransformer):
    """Every argument and local variable of a function renamed (``v0``, ``v1``, ...)."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}

    def _new(self, name: str) -> str:
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg = self._new(node.arg)
        return node

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if isinstance(node.ctx, ast.Store):
            node.id = self._new(node.id)
        elif node.id in self.names:
            node.id = self.names[node.id]
        return node


def _renamed(source: str) -> str:
    tree = ast.parse(source)
    function = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    renamer = _Renamer()
    for arg in function.args.args:
        renamer._new(arg.arg)
    return ast.unparse(renamer.visit(tree))


def test_copies_of_the_solutions_and_of_a_classmate_are_found() -> None:
    assignment = "06_efficient_attention"
    released = anatomy.read_released(assignment)
    solution = anatomy.read_solution(assignment)
    stubs = anatomy.solution_sources(released)
    right = [case for case in load_cases(assignment) if case.kind == "right"]
    assert len(right) >= 5
    submissions = {
        case.student: [anatomy.complete(released, {**stubs, case.function: case.source})]
        for case in right
    }
    honest = next(case for case in right if case.function == "linear_attention")
    submissions["copier"] = [anatomy.complete(released, {**stubs, honest.function: honest.source})]
    reference = anatomy.solution_sources(solution)["sliding_window_attention"]
    submissions["renamer"] = [
        anatomy.complete(released, {**stubs, "sliding_window_attention": _renamed(reference)})
    ]
    assert "v0" in _renamed(reference) and _renamed(reference) != reference
    pairs = copy_report(submissions, [solution], [released])
    found = {(frozenset((p.student_a, p.student_b)), p.function) for p in pairs}
    assert found == {
        (frozenset(("copier", honest.student)), "linear_attention"),
        (frozenset(("renamer", REFERENCE_STUDENT)), "sliding_window_attention"),
    }, pairs
    assert all(p.similarity >= 0.75 for p in pairs)
    summaries = [HandInSummary(s, assignment) for s in sorted(submissions)]
    report = integrity_markdown(summaries, {assignment: pairs})
    # Both students of a pair are listed: which one copied is for the instructor to find.
    assert f"3 of {len(summaries)} submission(s) need a look." in report
    assert "## Near copies" in report
    assert "| 06_efficient_attention | sliding_window_attention | renamer | solutions/ |" in report
    assert "near copy of the reference solution" in report


def test_what_the_exchange_left_out_is_in_the_integrity_report() -> None:
    from instructor.exchange import ExchangeRecord

    records = [
        ExchangeRecord("collect", "x", "bob", "inbound/bob+x+1", "a time that does not parse"),
        ExchangeRecord("release_feedback", "x", "eve|x\n## eve", "feedback/eve", "a link"),
    ]
    markdown = integrity_markdown([HONEST], exchange=records)
    section = markdown.split("## Left out by the exchange\n", 1)[1]
    assert "| collect | x | bob | left out | a time that does not parse |" in section
    assert "| release_feedback | x | eve\\|x ## eve | left out | a link |" in section
    assert markdown.count("\n## ") == 1  # the student's name made no heading of its own
