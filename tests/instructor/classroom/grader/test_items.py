"""The item analysis (``reports/items.*``) of a hand-made class, every number recomputed here
by a formula of its own (``statistics``, sums over the planted table), never by numpy."""

from __future__ import annotations

import base64
import contextlib
import csv
import json
import math
import sqlite3
import statistics
from dataclasses import replace
from datetime import datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path

import pytest

from instructor.classroom.grader.course import ResumeState
from instructor.classroom.grader.items import (
    UPPER_LOWER,
    Item,
    option_flags,
    rubric_items,
)
from instructor.classroom.grader.items_html import write_items
from instructor.classroom.grader.records import (
    CellGrade,
    CellSeen,
    FailedPart,
    HandInSummary,
    Manual,
    NotebookSummary,
    ZeroedTest,
    ZeroKind,
)
from instructor.classroom.grader.reports import write_reports
from instructor.mistake_tags import GENERIC
from instructor.question_grading import SCHEMA, STORE_NAME
from instructor.registry import parse

A = "01_tiny"
REGISTRY = parse(
    """
[course]
title = "t"
repository = "a/b"
ref = "v0.1.0"
function_points = [1, 3]
notebook_points = [8, 15]
max_exercises = 5
[[notebook]]
id = "01_tiny"
title = "Tiny"
minutes = 10
[[notebook.exercise]]
name = "soft_select"
points = [2, 1]
[[notebook.question]]
name = "q_axis"
kind = "choice"
points = 1
options = "abcd"
answer = "b"
[[notebook.question]]
name = "written_why"
kind = "written"
points = 2
"""
)

# The planted class: per student, the points of test_soft_select (of 2), test_soft_select_2
# (of 1), test_q_axis (of 1) and written_why (of 2: GRADED, AWAITING or UNANSWERED).
# The ids hold "_", which base64 (the embedded figures) never does.
G, W, U = Manual.GRADED, Manual.AWAITING, Manual.UNANSWERED
CLASS = {
    "stu_01": (2, 1, 1, (G, 2)),
    "stu_02": (2, 1, 1, (G, 1)),
    "stu_03": (2, 0, 1, (G, 2)),
    "stu_04": (0, 0, 0, (W, None)),  # test_soft_select zeroed by the grader
    "stu_05": (2, 1, 1, (G, 0)),
    "stu_06": (0, 1, 0, (U, 0)),
    "stu_07": (2, 1, 1, (G, 2)),
    "stu_08": (2, 0, 0, (G, 1)),
    "stu_09": (0, 0, 0, (W, None)),
    "stu_10": (2, 1, 1, (G, 2)),
    "stu_11": (1, 1, 1, (G, 1)),  # partial: failed
    "stu_12": (2, 1, 1, (G, 2)),
}
LATE = {("stu_05", A), ("stu_09", A)}

# What the grader saw: per student, cell -> (failed part, tags), and the answer to q_axis
# (None: a record written before answers were kept).
AXIS, SCALE = "soft_select:softmax-over-the-wrong-axis~0a1b", "soft_select:not-scaled~2c3d"
(IN_PLACE,) = GENERIC
V, H = FailedPart.VISIBLE, FailedPart.HIDDEN
SEEN = {
    "stu_03": {"test_soft_select_2": (H, (SCALE,))},
    "stu_06": {"test_soft_select": (H, (AXIS,))},
    "stu_08": {"test_soft_select_2": (V, (SCALE, IN_PLACE))},
    "stu_09": {"test_soft_select": (H, (AXIS,)), "test_soft_select_2": (V, ())},
    "stu_11": {"test_soft_select": (H, (AXIS,))},
}
ANSWERS = {
    **dict.fromkeys(["stu_01", "stu_03", "stu_05", "stu_07", "stu_10", "stu_11", "stu_12"], "b"),
    **{"stu_02": None, "stu_04": "a", "stu_06": "c", "stu_08": "c", "stu_09": "2"},
}
SECRET = "a note only this hand-in's text holds"
MAXIMA = {"test_soft_select": 2, "test_soft_select_2": 1, "test_q_axis": 1, "written_why": 2}


def hand_in(student: str, planted: tuple) -> HandInSummary:
    t1, t2, q, (manual, written) = planted
    cells = (
        CellGrade("test_soft_select", float(t1), 2.0),
        CellGrade("test_soft_select_2", float(t2), 1.0),
        CellGrade("test_q_axis", float(q), 1.0),
        CellGrade("written_why", None if written is None else float(written), 2.0, manual),
    )
    zeroed = (
        (ZeroedTest("test_soft_select", "stopped at its limit", ZeroKind.STOPPED),)
        if student == "stu_04"
        else ()
    )
    seen = tuple(CellSeen(c, tags, part) for c, (part, tags) in SEEN.get(student, {}).items())
    if ANSWERS[student] is not None:
        seen += (CellSeen("test_q_axis", (), None if q else H, ANSWERS[student]),)
    record = NotebookSummary(
        outcome="ok",
        notes=(SECRET,),
        zeroed=zeroed,
        seen=seen,
        score=float(t1 + t2 + q + (written or 0)),
        max_score=6.0,
        cells=cells,
    )
    return HandInSummary(student, A, notes=(SECRET,), notebooks={A: record})


SUMMARIES = [hand_in(s, p) for s, p in CLASS.items()]
TOTALS = [float(t1 + t2 + q + (w or 0)) for t1, t2, q, (_, w) in CLASS.values()]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("reports")
    write_items(folder, SUMMARIES, registry=REGISTRY, late=LATE)
    return folder


def statistic(folder: Path, cell: str, name: str) -> str:
    rows = list(csv.DictReader((folder / "items.csv").open()))
    (found,) = [r["value"] for r in rows if r["cell"] == cell and r["statistic"] == name]
    return found


def close(text: str, expected: float) -> bool:
    return math.isclose(float(text), expected, rel_tol=1e-5, abs_tol=1e-9)


def test_the_assignment_statistics(report: Path) -> None:
    assert statistic(report, "", "n") == "12"
    assert statistic(report, "", "max_score") == "6"
    assert close(statistic(report, "", "mean"), sum(TOTALS) / len(TOTALS))
    assert close(statistic(report, "", "median"), statistics.median(TOTALS))
    assert close(statistic(report, "", "sd"), statistics.stdev(TOTALS))
    assert close(statistic(report, "", "share_late"), 2 / 12)


@pytest.mark.parametrize(("cell", "column"), [("test_soft_select", 0), ("test_soft_select_2", 1)])
def test_each_test_cell_counts_what_was_planted(report: Path, cell: str, column: int) -> None:
    points = [p[column] for p in CLASS.values()]
    passed = sum(p == MAXIMA[cell] for p in points)
    zeroed = 1 if cell == "test_soft_select" else 0
    assert statistic(report, cell, "n") == "12"
    assert statistic(report, cell, "passed") == str(passed)
    assert statistic(report, cell, "zeroed") == str(zeroed)
    assert statistic(report, cell, "failed") == str(12 - passed - zeroed)
    assert close(statistic(report, cell, "share_passing"), passed / 12)
    assert close(statistic(report, cell, "points_lost"), sum(MAXIMA[cell] - p for p in points))


@pytest.mark.parametrize("cell", ["test_soft_select", "test_soft_select_2"])
def test_each_test_cell_counts_the_parts_that_failed(report: Path, cell: str) -> None:
    parts = [seen[cell][0] for seen in SEEN.values() if cell in seen]
    assert statistic(report, cell, "failed_visible") == str(parts.count(V))
    assert statistic(report, cell, "failed_hidden") == str(parts.count(H))


def test_the_test_cells_name_their_function_and_come_most_failing_hidden_first(
    report: Path,
) -> None:
    rows = list(csv.DictReader((report / "items.csv").open()))
    tests = list(dict.fromkeys((r["cell"], r["item"]) for r in rows if r["kind"] == "test"))
    # test_soft_select: 3 of 12 failed, all 3 their hidden tests; test_soft_select_2: 4
    # failed, 1 its hidden tests.
    assert tests == [("test_soft_select", "soft_select"), ("test_soft_select_2", "soft_select")]


def test_the_named_mistakes_count_the_students_most_made_first(report: Path) -> None:
    made: dict[str, set[str]] = {}
    for student, cells in SEEN.items():
        for _, tags in cells.values():
            for tag in tags:
                made.setdefault(tag, set()).add(student)
    rows = list(csv.DictReader((report / "items.csv").open()))
    mistakes = [r for r in rows if r["kind"] == "mistake"]
    assert [r["cell"] for r in mistakes if r["statistic"] == "students"] == [AXIS, SCALE, IN_PLACE]
    for tag, students in made.items():
        assert statistic(report, tag, "students") == str(len(students))
        assert close(statistic(report, tag, "share"), len(students) / len(CLASS))
    assert {r["item"] for r in mistakes} == {"soft_select"}
    named = (report / "items.html").read_text()
    assert "3 of 12" in named and "stu_06, stu_09, stu_11" in named


def test_the_options_chosen_and_their_flags(report: Path) -> None:
    recorded = {s: a for s, a in ANSWERS.items() if a is not None}
    n = len(recorded)
    assert statistic(report, "test_q_axis", "answers") == str(n)
    ranked = [recorded[s] for _, s in sorted((TOTALS[list(CLASS).index(s)], s) for s in recorded)]
    k = max(1, round(UPPER_LOWER * n))
    for letter in "abcd":
        chosen = sum(a == letter for a in recorded.values())
        assert close(statistic(report, "test_q_axis", f"option_{letter}"), chosen / n)
        upper = sum(a == letter for a in ranked[-k:]) / k
        lower = sum(a == letter for a in ranked[:k]) / k
        assert close(statistic(report, "test_q_axis", f"option_{letter}_upper"), upper)
        assert close(statistic(report, "test_q_axis", f"option_{letter}_lower"), lower)
    assert close(statistic(report, "test_q_axis", "other"), 1 / n)  # "2"
    page = (report / "items_anonymous.html").read_text()
    assert "(d) is chosen by no one" in page


def test_the_concept_question_statistics(report: Path) -> None:
    x = [float(p[2]) for p in CLASS.values()]
    rest = [t - xi for t, xi in zip(TOTALS, x, strict=True)]
    n = len(x)
    # Pearson's r written out: the covariance over the product of the deviations.
    mx, mr = sum(x) / n, sum(rest) / n
    covariance = sum((a - mx) * (b - mr) for a, b in zip(x, rest, strict=True))
    r = covariance / math.sqrt(sum((a - mx) ** 2 for a in x) * sum((b - mr) ** 2 for b in rest))
    assert math.isclose(r, statistics.correlation(x, rest))
    # Upper and lower 27 %, ranked by the hand-in's score, ties by student id.
    k = max(1, round(UPPER_LOWER * n))
    ranked = [xi for _, _, xi in sorted(zip(TOTALS, CLASS, x, strict=True))]
    discrimination = sum(ranked[-k:]) / k - sum(ranked[:k]) / k
    assert statistic(report, "test_q_axis", "n") == "12"
    assert close(statistic(report, "test_q_axis", "facility"), sum(x) / n)
    assert close(statistic(report, "test_q_axis", "sd"), statistics.stdev(x))
    assert close(statistic(report, "test_q_axis", "discrimination"), discrimination)
    assert close(statistic(report, "test_q_axis", "point_biserial"), r)


def test_the_written_answers_count_the_points_given_by_hand(report: Path) -> None:
    planted = [w for *_, w in CLASS.values()]
    given = [points for manual, points in planted if manual == G]
    assert statistic(report, "written_why", "graded") == str(len(given))
    assert statistic(report, "written_why", "awaiting") == str(sum(m == W for m, _ in planted))
    assert statistic(report, "written_why", "unanswered") == str(sum(m == U for m, _ in planted))
    for points in (0, 1, 2):
        assert statistic(report, "written_why", f"points_{points}") == str(given.count(points))


class Page(HTMLParser):
    """The tags and text of a page, as the standard library parses it."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


@pytest.mark.parametrize("page", ["items.html", "items_anonymous.html"])
def test_the_pages_parse_and_every_figure_is_embedded_with_alt_text(
    report: Path, page: str
) -> None:
    parsed = Page((report / page).read_text())
    images = [attrs for tag, attrs in parsed.tags if tag == "img"]
    assert len(images) == 1
    for attrs in images:
        assert (attrs.get("alt") or "").strip()
        src = attrs["src"] or ""
        assert src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1]).startswith(b"\x89PNG")
    assert not [tag for tag, _ in parsed.tags if tag in ("script", "link", "iframe")]
    links = [v for _, attrs in parsed.tags for k, v in attrs.items() if k in ("src", "href")]
    assert all(v and v.startswith("data:") for v in links)
    assert (report / f"items_{A}.png").read_bytes().startswith(b"\x89PNG")


def test_the_anonymous_page_names_no_student(report: Path) -> None:
    anonymous = (report / "items_anonymous.html").read_text()
    named = (report / "items.html").read_text()
    assert not [s for s in CLASS if s in anonymous]
    # The named page lists who failed each cell; neither shows what a hand-in holds.
    assert "stu_11" in named and "stu_01" not in named  # stu_01 passed every test cell
    assert SECRET not in anonymous and SECRET not in named
    assert "rubric" in anonymous  # says the rubric items are not recorded


def test_write_reports_writes_the_items_late_as_the_penalties_say(tmp_path: Path) -> None:
    write_reports(tmp_path, SUMMARIES, penalties={("stu_05", A): 1.0, ("stu_06", A): 0.0})
    assert close(statistic(tmp_path, "", "share_late"), 1 / 12)
    assert (tmp_path / "items_anonymous.html").is_file()


RENAMED = {
    "test_soft_select": "test_one_hot",
    "test_soft_select_2": "test_one_hot_2",
    "test_q_axis": "test_q_one_hot_distance",
}


def as_01_vector_sets(summary: HandInSummary) -> HandInSummary:
    """``summary``'s autograded cells as cells of this course's 01_vector_sets."""
    record = summary.notebooks[A]
    cells = tuple(replace(g, cell=RENAMED[g.cell]) for g in record.cells or () if g.cell in RENAMED)
    score = sum(g.score or 0 for g in cells)
    record = replace(record, cells=cells, score=score, max_score=4.0, zeroed=())
    return HandInSummary(summary.student, "01_vector_sets", notebooks={"01_vector_sets": record})


def test_the_items_command_reports_the_recorded_hand_ins_present(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From the records and the gradebook (late: as it has the hand-ins), grading nothing."""
    from nbgrader.api import Gradebook

    from instructor.classroom.__main__ import main
    from instructor.nbgrader_env import nbgrader_env
    from instructor.scratch_course import ScratchCourse

    monkeypatch.setenv("PATH", nbgrader_env()["PATH"])  # nbgrader runs alembic by name
    assignment = "01_vector_sets"
    course = ScratchCourse(tmp_path, assignment)
    due = datetime(2026, 11, 20, 12, 0, 0)
    with Gradebook(course.db_url) as gb:
        gb.add_assignment(assignment, duedate=due)
        for student in CLASS:
            gb.add_student(student)
            minutes = 30 if (student, A) in LATE else -30
            gb.add_submission(assignment, student, timestamp=due + timedelta(minutes=minutes))
    state = ResumeState(tmp_path / ".grading" / "state")
    for summary in SUMMARIES:
        state.save(as_01_vector_sets(summary))
        if summary.student != "stu_12":  # its folder removed: left out, as make grade does
            (tmp_path / "submitted" / summary.student / assignment).mkdir(parents=True)
    assert main(["items", assignment, "--root", str(tmp_path), "--db", course.db_url]) == 0
    reports = tmp_path / "reports"
    assert statistic(reports, "", "n") == "11"
    assert close(statistic(reports, "", "share_late"), 2 / 11)
    assert statistic(reports, "test_one_hot_2", "passed") == str(
        sum(p[1] == 1 for s, p in CLASS.items() if s != "stu_12")
    )
    rows = list(csv.DictReader((reports / "items.csv").open()))
    assert {r["item"] for r in rows if r["cell"] == "test_q_one_hot_distance"} == {
        "q_one_hot_distance"
    }


def test_a_class_of_one_with_a_missing_notebook_has_no_statistic_it_cannot_have(
    tmp_path: Path,
) -> None:
    missing = HandInSummary("stu_13", A, notebooks={A: NotebookSummary(outcome="missing")})
    (analysis,) = write_items(tmp_path, [SUMMARIES[0], missing], registry=REGISTRY)
    assert analysis.stats["n"] == 2 and analysis.stats["median"] == TOTALS[0] / 2
    (concept,) = analysis.of_kind("concept")
    assert concept.stats["n"] == 1  # the missing notebook has no grade for it
    for name in ("sd", "discrimination", "point_biserial"):
        assert math.isnan(concept.stats[name])
    assert statistic(tmp_path, "", "share_late") == ""  # not known without a gradebook
    assert statistic(tmp_path, "test_q_axis", "point_biserial") == ""


def test_the_options_are_flagged_as_their_shares_say() -> None:
    item = Item("concept", "q_axis", "abcd", "b")
    shares = {"a": (0.2, 0.5, 0.0), "b": (0.6, 0.25, 0.75), "c": (0.2, 0.25, 0.25), "d": (0, 0, 0)}
    stats = {"answers": 20.0}
    for letter, (share, upper, lower) in shares.items():
        stats |= {f"option_{letter}": share, f"option_{letter}_upper": upper}
        stats |= {f"option_{letter}_lower": lower}
    assert option_flags(item, stats) == (
        "(a) is chosen more by the upper group than the lower",
        "(b), the right answer, is chosen less by the upper group",
        "(d) is chosen by no one",
    )
    assert option_flags(item, {"answers": 0}) == ()


def test_the_rubric_items_applied_are_counted_where_their_score_holds(tmp_path: Path) -> None:
    """From the question grading tool's store: an answer whose score changed since (in
    formgrader) is left out."""
    saves = {  # student: (items, score saved); the gradebook's: CLASS
        "stu_01": (["names_axis", "example"], 2.0),
        "stu_02": (["names_axis"], 1.0),
        "stu_03": (["names_axis"], 1.0),  # stale: the gradebook has 2
    }
    with contextlib.closing(sqlite3.connect(tmp_path / STORE_NAME)) as store:
        store.executescript(SCHEMA)
        store.executemany(
            "INSERT INTO saves VALUES (?, ?, ?, ?, ?, '', 0, '', ?, 'ta', '', 1)",
            [(A, A, "written_why", s, json.dumps(i), p) for s, (i, p) in saves.items()],
        )
        store.commit()
    write_items(tmp_path, SUMMARIES, registry=REGISTRY, rubrics=rubric_items(tmp_path))
    assert statistic(tmp_path, "written_why", "rubric_graded") == "2"
    assert statistic(tmp_path, "written_why", "rubric_names_axis") == "2"
    assert statistic(tmp_path, "written_why", "rubric_example") == "1"
    assert "example: 1, names_axis: 2 (of 2)" in (tmp_path / "items_anonymous.html").read_text()
