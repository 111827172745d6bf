"""Facts written once: each function's points and each notebook's time, where they are stated.

A function's points are written in ``course.toml`` only (``points = 3``, or ``points = [2, 1]``
for tests split over ``test_<name>`` and ``test_<name>_2``); a notebook's time is the time
rule's (:mod:`.time_rule`). ``python -m instructor.facts`` (part of ``make release``) writes
them where they are stated:

- the ``points`` of each test cell (nbgrader's metadata);
- each exercise heading, ``### Exercise N · `name` (P points)``;
- the first cell's ``**Graded exercises (T points):** `name` (P), ...`` line;
- the first cell's "about N minutes" and ``minutes = N`` in ``course.toml``.

``--check`` changes nothing and lists what differs (the course's tests run it). A notebook
whose test cells or lines do not match what course.toml lists (a function added or renamed)
is an error naming it: the anatomy tests and ``CONTRIBUTING.md`` say how such a notebook is
laid out.
"""

from __future__ import annotations

import argparse
import re
import sys

import nbformat
from nbformat import NotebookNode

from . import anatomy, registry
from .paths import solution_path
from .registry import registry_path
from .time_rule import notebook_minutes

__all__ = ["FactsError", "main", "stated_points", "sync_facts"]

EXERCISE = re.compile(r"(### Exercise \d+ · `(?P<name>[^`]+)` \()(?P<points>\d+) points?(\))")
STATED_MINUTES = re.compile(r"about (\d+) minutes")
GRADED_LINE = re.compile(
    r"\*\*Graded exercises \((?P<total>\d+) points?\):\*\*(?P<list>.*?)\.(?= |$)", re.S
)


class FactsError(RuntimeError):
    """A notebook's layout does not match what course.toml lists."""


def stated_points(points: int) -> str:
    """``3 points``, ``1 point``: as headings state them."""
    return f"{points} point{'s' if points != 1 else ''}"


def sync_facts(notebook: NotebookNode, entry: registry.Notebook) -> list[str]:
    """Write ``entry``'s points into ``notebook`` (in place); what changed, for a message."""
    changes: list[str] = []
    cells = {anatomy.grade_id(cell): cell for cell in anatomy.test_cells(notebook)}
    test_ids = list(cells)
    for exercise in entry.exercises:
        ids = anatomy.tests_of(exercise.name, test_ids)
        if len(ids) != len(exercise.cell_points):
            raise FactsError(
                f"{entry.id}: {exercise.name} has test cells {ids}; course.toml gives points "
                f"for {len(exercise.cell_points)} (points = {list(exercise.cell_points)})"
            )
        for cell_id, points in zip(ids, exercise.cell_points, strict=True):
            meta = cells[cell_id].metadata["nbgrader"]
            if meta.get("points") != points:
                changes.append(f"{cell_id}: {meta.get('points')} -> {points} points")
                meta["points"] = points
    worth = {exercise.name: exercise.points for exercise in entry.exercises}

    def heading(match: re.Match) -> str:
        name = match["name"]
        if name not in worth:
            raise FactsError(f"{entry.id}: an exercise heading names {name!r}, not in course.toml")
        if int(match["points"]) != worth[name]:
            changes.append(f"heading of {name}: {match['points']} -> {worth[name]} points")
        return f"{match.group(1)}{stated_points(worth[name])}{match.group(4)}"

    def graded_line(match: re.Match) -> str:
        listed = match["list"]
        for name, points in worth.items():
            pattern = re.compile(rf"(`{re.escape(name)}` \()(\d+)(\))")
            if not pattern.search(listed):
                raise FactsError(f"{entry.id}: the 'Graded exercises' line does not list {name}")
            listed = pattern.sub(rf"\g<1>{points}\g<3>", listed)
        line = f"**Graded exercises ({entry.function_points} points):**{listed}."
        if line != match.group(0):
            changes.append(f"'Graded exercises' line: {entry.function_points} points")
        return line

    for cell in notebook.cells:
        if cell.cell_type != "markdown":
            continue
        cell.source = EXERCISE.sub(heading, cell.source)
        cell.source = GRADED_LINE.sub(graded_line, cell.source)
    minutes = notebook_minutes(notebook, entry)
    first = notebook.cells[0]
    stated = STATED_MINUTES.findall(first.source)
    if len(stated) != 1:
        raise FactsError(f"{entry.id}: the first cell should state 'about N minutes' once")
    if int(stated[0]) != minutes:
        changes.append(f"time: about {stated[0]} -> {minutes} minutes")
        first.source = STATED_MINUTES.sub(f"about {minutes} minutes", first.source)
    return changes


def sync_registry(text: str, minutes: dict[str, int]) -> tuple[str, list[str]]:
    """``course.toml``'s ``text`` with each notebook's ``minutes = N`` set; what changed."""
    changes = []
    for notebook_id, value in minutes.items():
        block = re.search(
            rf'^id = "{re.escape(notebook_id)}"\n(?:(?!\[\[notebook\]\]).*\n)*?minutes = (\d+)$',
            text,
            re.M,
        )
        if block is None:
            raise FactsError(f"course.toml: no 'minutes = N' in the entry of {notebook_id}")
        if int(block.group(1)) != value:
            changes.append(f"{notebook_id}: course.toml minutes {block.group(1)} -> {value}")
            text = text[: block.start(1)] + str(value) + text[block.end(1) :]
    return text, changes


def sync(notebook_id: str, course: registry.Course, check: bool) -> tuple[list[str], int]:
    """Sync one solution notebook (unless ``check``): what differs, each line named, and
    the notebook's minutes."""
    path = solution_path(notebook_id)
    notebook = nbformat.read(path, as_version=4)
    entry = course.notebook(notebook_id)
    changes = sync_facts(notebook, entry)
    if changes and not check:
        nbformat.write(notebook, path)
    return [f"{notebook_id}: {change}" for change in changes], notebook_minutes(notebook, entry)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m instructor.facts",
        description="Write course.toml's points into the solution notebooks.",
    )
    parser.add_argument("notebooks", nargs="*", help="notebook ids (default: all)")
    parser.add_argument("--check", action="store_true", help="change nothing; list differences")
    args = parser.parse_args(argv)
    course = registry.load()
    changes: list[str] = []
    minutes: dict[str, int] = {}
    try:
        for notebook_id in args.notebooks or course.ids:
            found, minutes[notebook_id] = sync(notebook_id, course, args.check)
            changes += found
        path = registry_path()
        text, found = sync_registry(path.read_text(encoding="utf-8"), minutes)
        changes += found
        if found and not args.check:
            path.write_text(text, encoding="utf-8")
    except (FactsError, registry.RegistryError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for change in changes:
        print(("differs: " if args.check else "wrote: ") + change)
    return 1 if args.check and changes else 0


if __name__ == "__main__":
    raise SystemExit(main())
