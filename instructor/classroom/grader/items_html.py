"""``items.html`` and its figures (:mod:`.items` computes what they show).

One page, no external resource (no script, no stylesheet or font from elsewhere): each figure
is a PNG drawn with matplotlib's Agg canvas (no pyplot, no global state) and embedded as a
``data:`` URL with its alt text. Every text is escaped: an assignment's or a cell's name is
the course's, but a student id is a folder's name. The anonymous version leaves out the
student ids (the hand-ins that failed each cell): counts, shares and figures only; the
figures and their alt texts never name a student.
"""

from __future__ import annotations

import base64
import io
import math
import re
from html import escape
from pathlib import Path

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from instructor.classroom.grader.items import (
    NOT_RECORDED,
    AssignmentItems,
    CellItem,
    ItemKind,
    Saved,
    Stats,
    analyse,
    course_registry,
    csv_rows,
    mistake_texts,
)
from instructor.classroom.grader.records import HandInSummary
from instructor.lms.csv_safety import write_rows
from instructor.registry import Course


def _shown_number(value: float, share: bool = False) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "–"
    return f"{100 * value:.0f} %" if share else f"{value:.3g}"


def figure_png(analysis: AssignmentItems) -> tuple[bytes, str]:
    """The assignment's figure as a PNG, and its alt text: a histogram of the hand-ins'
    scores, and the share of hand-ins passing each autograded cell."""
    stats = analysis.stats
    table = analysis.table
    top = stats["max_score"]
    figure = Figure(figsize=(10, 4), layout="constrained")
    FigureCanvasAgg(figure)
    scores, passing = figure.subplots(1, 2, width_ratios=(1, 1.3))
    # Whole points get a bar each; half points and the like fall into the nearest one.
    edges = np.arange(0, math.ceil(top) + 2) - 0.5 if top else np.array([-0.5, 0.5])
    scores.hist(table.total, bins=edges, color="#4C72B0", edgecolor="white")
    scores.yaxis.set_major_locator(MaxNLocator(integer=True))
    scores.set(xlabel=f"score (of {top:g})", ylabel="hand-ins", title=f"{table.assignment}: scores")
    if not math.isnan(stats["mean"]):
        scores.axvline(stats["mean"], color="#C44E52", linestyle="--", label="mean")
        scores.axvline(stats["median"], color="#55A868", linestyle=":", label="median")
        scores.legend()
    cells = [i for i in analysis.items if i.item.kind != "written" and i.stats.get("n")]
    shares = [i.stats.get("share_passing", i.stats.get("facility", math.nan)) for i in cells]
    passing.barh([i.cell for i in cells], shares, color="#8172B2")
    passing.set(xlim=(0, 1), xlabel="share of hand-ins passing", title="test cells")
    passing.invert_yaxis()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=80)
    worst = min(zip(shares, (i.cell for i in cells), strict=True), default=None)
    alt = (
        f"{table.assignment}: a histogram of the scores of {stats['n']} hand-in(s), out of "
        f"{top:g} (mean {_shown_number(stats['mean'])}, median {_shown_number(stats['median'])}); "
        f"beside it, the share of hand-ins passing each of {len(cells)} autograded cell(s)"
        + (f", least passed: {worst[1]} ({_shown_number(worst[0], share=True)})." if worst else ".")
    )
    return buffer.getvalue(), alt


COLUMNS: dict[ItemKind, tuple[tuple[str, str, bool], ...]] = {
    "test": (
        ("n", "hand-ins", False),
        ("share_passing", "passing", True),
        ("failed", "failed", False),
        ("failed_visible", "of them: visible", False),
        ("failed_hidden", "hidden", False),
        ("zeroed", "zeroed", False),
        ("not_run", "not run", False),
        ("points_lost", "points lost", False),
    ),
    "concept": (
        ("n", "hand-ins", False),
        ("facility", "facility", True),
        ("sd", "SD", False),
        ("discrimination", "discrimination (27 %)", False),
        ("point_biserial", "point-biserial (rest)", False),
    ),
    "written": (
        ("graded", "graded", False),
        ("awaiting", "awaiting", False),
        ("unanswered", "unanswered", False),
    ),
}
"""Per kind: (statistic, heading, shown as a percentage)."""

TITLES: dict[ItemKind, str] = {
    "test": "Test cells (most failing their hidden tests first, then most failed)",
    "concept": "Concept questions",
    "written": "Written answers",
}


def _table(kind: ItemKind, items: tuple[CellItem, ...], anonymous: bool) -> list[str]:
    columns = COLUMNS[kind]
    extra = "points given by hand" if kind == "written" else "not passed by"
    headings = ["notebook", "cell", "item", *(h for _, h, _ in columns)]
    if kind == "written" or not anonymous:
        headings.append(extra)
    if kind == "written":
        headings.append("rubric items applied")
    lines = [f"<h3>{TITLES[kind]}</h3>", "<table>", _row(headings, "th")]
    for i in items:
        cells = [i.notebook, i.cell, i.item.name]
        cells += [_shown_number(i.stats.get(key, math.nan), share) for key, _, share in columns]
        if kind == "written":
            cells += [_points_counts(i.stats, "points_"), _points_counts(i.stats, "rubric_")]
        elif not anonymous:
            cells.append(", ".join(i.failing))
        lines.append(_row(cells, "td"))
    return [*lines, "</table>"]


def _options(items: tuple[CellItem, ...]) -> list[str]:
    """The choice questions' options: the share choosing each, overall and in the upper
    and lower 27 %, and what the shares flag."""
    chosen = [i for i in items if i.item.options and i.stats.get("answers")]
    if not chosen:
        return []
    lines = [
        "<h3>Options chosen (choice questions)</h3>",
        "<table>",
        _row(["notebook", "cell", "option", "chosen", "upper 27 %", "lower 27 %", "flag"], "th"),
    ]
    for i in chosen:
        for letter in [*(i.item.options or ""), "other"]:
            key = f"option_{letter}" if letter != "other" else "other"
            right = " (right)" if letter == i.item.answer else ""
            flag = "; ".join(f for f in i.flags if f.startswith(f"({letter})"))
            cells = [i.notebook, i.cell, f"({letter}){right}" if letter != "other" else letter]
            cells += [_shown_number(i.stats.get(k, math.nan), True) for k in (key, f"{key}_upper")]
            cells += [_shown_number(i.stats.get(f"{key}_lower", math.nan), True), flag]
            lines.append(_row(cells, "td"))
    return [*lines, "</table>"]


def _mistakes(analysis: AssignmentItems, anonymous: bool) -> list[str]:
    """The named mistakes, the most made first: "k of n: <message> in <function>"."""
    if not analysis.mistakes:
        return []
    n = analysis.stats["n"]
    headings = ["students", "mistake (its message)", "function", "cells", "tag"]
    lines = [
        "<h3>Named mistakes (the most made first)</h3>",
        "<table>",
        _row([*headings, *([] if anonymous else ["hand-ins"])], "th"),
    ]
    for m in analysis.mistakes:
        cells = [f"{len(m.students)} of {n}", m.text, m.function, ", ".join(m.cells), m.tag]
        lines.append(_row([*cells, *([] if anonymous else [", ".join(m.students)])], "td"))
    return [*lines, "</table>"]


def _points_counts(stats: Stats, prefix: str) -> str:
    """``points_<p>`` (the answers given p points) or ``rubric_<item>`` (the answers graded
    with the item) as ``p: count, ...``."""
    given = [
        (k.removeprefix(prefix), v)
        for k, v in stats.items()
        if k.startswith(prefix) and k != "rubric_graded"
    ]
    text = ", ".join(f"{points}: {count}" for points, count in given) or "–"
    return f"{text} (of {stats['rubric_graded']})" if prefix == "rubric_" and given else text


def _row(cells: list[str], tag: str) -> str:
    return "<tr>" + "".join(f"<{tag}>{escape(str(c))}</{tag}>" for c in cells) + "</tr>"


STYLE = (
    "body{font-family:sans-serif;max-width:70em;margin:auto;padding:1em}"
    "table{border-collapse:collapse;margin-bottom:1em}"
    "th,td{border:1px solid #ccc;padding:.2em .5em;text-align:right}"
    "th:nth-child(-n+3),td:nth-child(-n+3){text-align:left}img{max-width:100%}"
)


def items_html(
    analyses: list[AssignmentItems], figures: dict[str, tuple[bytes, str]], anonymous: bool
) -> str:
    """The report's page; ``anonymous``: without any student id."""
    title = "Item analysis" + (" (anonymous)" if anonymous else "")
    lines = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{title}</title><style>{STYLE}</style></head><body>",
        f"<h1>{title}</h1>",
        "<p>From the recorded scores (docs/instructors.md: how to read each number). "
        f"{escape(NOT_RECORDED)}</p>",
    ]
    for analysis in analyses:
        stats = analysis.stats
        name = analysis.table.assignment
        png, alt = figures[name]
        late = _shown_number(stats["share_late"], share=True)
        lines += [
            f"<h2>{escape(name)}</h2>",
            f"<p>{stats['n']} hand-in(s), out of {stats['max_score']:g} points: mean "
            f"{_shown_number(stats['mean'])}, median {_shown_number(stats['median'])}, "
            f"standard deviation {_shown_number(stats['sd'])}, late {late}.</p>",
            f'<img src="data:image/png;base64,{base64.b64encode(png).decode()}" '
            f'alt="{escape(alt)}">',
        ]
        lines += _mistakes(analysis, anonymous)
        for kind in COLUMNS:
            if items := analysis.of_kind(kind):
                lines += _table(kind, items, anonymous)
            if kind == "concept":
                lines += _options(items)
    return "\n".join([*lines, "</body></html>"]) + "\n"


def write_items(
    folder: Path,
    summaries: list[HandInSummary],
    *,
    registry: Course | None = None,
    late: set[tuple[str, str]] | None = None,
    rubrics: Saved | None = None,
) -> list[AssignmentItems]:
    """``items.csv``, ``items.html``, ``items_anonymous.html`` and one figure per assignment
    (``items_<assignment>.png``) in ``folder``; return the analyses."""
    registry = registry if registry is not None else course_registry()
    assignments = list(dict.fromkeys(s.assignment for s in summaries))
    texts = mistake_texts(registry)
    analyses = [analyse(a, summaries, registry, late, texts, rubrics) for a in assignments]
    folder.mkdir(parents=True, exist_ok=True)
    write_rows(folder / "items.csv", csv_rows(analyses))
    figures = {a.table.assignment: figure_png(a) for a in analyses}
    for assignment, (png, _) in figures.items():
        (folder / f"items_{_file_name(assignment)}.png").write_bytes(png)
    (folder / "items.html").write_text(items_html(analyses, figures, anonymous=False))
    (folder / "items_anonymous.html").write_text(items_html(analyses, figures, anonymous=True))
    return analyses


def _file_name(assignment: str) -> str:
    """``assignment`` as part of a file name (an assignment id is the course's, but not
    every course names them as this one does)."""
    return re.sub(r"[^\w.-]", "_", assignment)
