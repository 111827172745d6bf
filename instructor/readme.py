"""The README's course table, generated from the registry (``course.toml``).

    python -m instructor.readme          # rewrite the table in README.md (``make readme``)
    python -m instructor.readme --check  # exit 1 if README.md's table is out of date

The table sits between two marker comments; everything else in the README is prose.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from instructor import registry
from instructor.colab import landing_url
from instructor.paths import COURSE_ROOT

__all__ = ["BEGIN", "END", "readme_table", "update"]

BEGIN = "<!-- BEGIN course table: generated from course.toml by `make readme` -->"
END = "<!-- END course table -->"
BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"


def readme_table(course: registry.Course) -> str:
    """The markdown table: one row per notebook, in the registry's order; its badges open
    the self-study edition when ``course.toml`` has ``self_study = true``
    (:func:`instructor.colab.landing_url`)."""
    lines = [
        "| # | notebook | time | you implement | points | open in Colab |",
        "| --- | --- | ---: | --- | ---: | --- |",
    ]
    for notebook in course.notebooks:
        functions = ", ".join(f"`{e.name}`" for e in notebook.exercises)
        link = f"notebooks/{notebook.id}/{notebook.id}.ipynb"
        lines.append(
            f"| {notebook.number} | [{notebook.title}]({link}) | {notebook.minutes} min | "
            f"{functions} | {notebook.points} | "
            f"[![Open In Colab]({BADGE_IMAGE})]({landing_url(notebook.id, course)}) |"
        )
    return "\n".join(lines)


def update(text: str, course: registry.Course) -> str:
    """``text`` (a README) with the part between the markers replaced by the table."""
    try:
        head, rest = text.split(BEGIN, 1)
        _, tail = rest.split(END, 1)
    except ValueError:
        raise ValueError(f"README.md has no {BEGIN!r} ... {END!r} block") from None
    return f"{head}{BEGIN}\n{readme_table(course)}\n{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m instructor.readme", description=__doc__)
    parser.add_argument("--check", action="store_true", help="only check, write nothing")
    parser.add_argument("--root", type=Path, default=COURSE_ROOT, help="course checkout")
    args = parser.parse_args(argv)
    path = args.root / "README.md"
    current = path.read_text(encoding="utf-8")
    wanted = update(current, registry.load(args.root))
    if args.check:
        if current != wanted:
            print("README.md's course table differs from course.toml: run `make readme`")
            return 1
        return 0
    path.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
