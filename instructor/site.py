"""The course as a static website for self-learners: ``make site`` (``python -m instructor.site``).

Each notebook becomes one page showing the **student's view**: the prose, the math and the
demo outputs (figures included) of the executed instructor notebook in ``solutions/``, but
every solution cell as the stub the student gets (its source from ``notebooks/``, no
output) and no test cell at all (the hidden tests live there). Nothing is executed: the
outputs are the stored ones.

The student-view notebooks and a landing page (from ``docs/site/index.md`` and the
registry) are written to ``_build/site/``; Sphinx with MyST-NB and sphinx-book-theme
(configured in ``docs/site/conf.py``) renders them into ``_site/``. Both folders are
git-ignored. MathJax is served from the site itself (``_static/mathjax``, copied from the
``jupyter-server-mathjax`` package): the pages load nothing from elsewhere. A page's download
button gives the student notebook with its visible tests (:func:`downloadable_notebooks`).
"""

from __future__ import annotations

import argparse
import base64
import re
import shutil
import sys
import time
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from instructor import anatomy, colab, registry

# WIDGET_VIEW, an ipywidget's output (a slider, a progress bar): without a kernel it shows
# nothing (or a "VBox(...)" repr). An interactive figure's output also carries its static
# figure, a plain image (helpers.plotting.interactive_figure): that stays.
from instructor.feedback import WIDGET_VIEW
from instructor.paths import COURSE_ROOT, released_path, solution_path

__all__ = [
    "CONF_DIR",
    "INSTRUCTOR_MARKERS",
    "BUILD",
    "OUTPUT",
    "SOURCE",
    "build",
    "colab_link",
    "downloadable_notebooks",
    "landing_page",
    "leaks",
    "main",
    "stored_figure",
    "student_view",
    "write_sources",
]

CONF_DIR = COURSE_ROOT / "docs" / "site"
# The build folder: the student views and the landing page (src/), Sphinx's caches and the
# HTML before it moves to OUTPUT. MyST-NB writes the figures next to Sphinx's output folder
# (../jupyter_execute), so that folder is here too, never at the root of the checkout.
BUILD = COURSE_ROOT / "_build" / "site"
SOURCE = BUILD / "src"
OUTPUT = COURSE_ROOT / "_site"

# Text that only the instructor's notebooks hold: the site must never show it.
INSTRUCTOR_MARKERS = (*anatomy.SOLUTION_MARKERS, "BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS")

BADGE = re.compile(r"\[!\[Open In Colab\]\([^)]*\)\]\((?P<url>https://colab\.research[^)]+)\)")
TEMPLATE_FIELD = re.compile(r"\{\{ *(\w+) *\}\}")
# The landing page's figure (docs/site/index.md shows it as landing-figure.png): the stored
# image output of this cell, the soft select's weights and output in notebook 02.
LANDING_FIGURE = ("02_soft_select", "temperature-slider")


def colab_link(url: str) -> str:
    """An "Open in Colab" link as HTML (the badge image would come from Google's server;
    the site loads nothing from elsewhere, so the button is drawn by the site's CSS)."""
    return f'<a class="colab-link" href="{url}">Open in Colab</a>'


def _badge_as_link(source: str, url: str | None = None) -> str:
    """The badge of ``source`` as a link to its own address, or to ``url``."""
    if not BADGE.search(source):
        raise ValueError(f"the badge cell has no Colab badge:\n{source[:300]}")
    return BADGE.sub(lambda match: colab_link(url or match.group("url")), source)


def _shown_outputs(outputs: list) -> list:
    """``outputs`` without widget views: a widget's output keeps its other representations
    (an interactive figure's image), and goes where nothing but its text repr is left."""
    shown = []
    for output in outputs:
        data = output.get("data", {})
        if WIDGET_VIEW in data:
            rest = {mime: value for mime, value in data.items() if mime != WIDGET_VIEW}
            if set(rest) <= {"text/plain"}:
                continue
            output = nbformat.from_dict({**output, "data": rest})
        shown.append(output)
    return shown


def student_view(
    solution: NotebookNode, released: NotebookNode, badge_url: str | None = None
) -> NotebookNode:
    """The page's notebook: ``solution`` (executed) as the student sees it.

    Test cells are dropped; each solution cell takes the source of the cell with the same
    id in ``released`` (the stub) and has no output; widget views are dropped (an
    interactive figure's static image stays); the badge's image becomes a plain "Open in
    Colab" link to the same address, or to ``badge_url`` (the self-study edition's);
    nbgrader's metadata and the widget state are dropped, and a solution cell takes the
    stub's metadata too.
    Raises ``ValueError`` when anything of :data:`INSTRUCTOR_MARKERS` would still show.
    """
    stubs = {cell.id: cell for cell in released.cells if anatomy.is_solution_cell(cell)}
    cells = []
    for original in solution.cells:
        if anatomy.is_test_cell(original):
            continue
        cell = nbformat.from_dict(original)
        cell.metadata.pop("nbgrader", None)
        if anatomy.is_solution_cell(original):
            if original.id not in stubs:
                raise ValueError(
                    f"solution cell {original.id!r} has no stub in the student notebook: "
                    "run `make release`"
                )
            cell.source = stubs[original.id].source
            # The stub's metadata: the solution's holds what students never get (a written
            # answer's rubric items, instructor/rubrics.py).
            cell.metadata = nbformat.from_dict(stubs[original.id].metadata)
            cell.metadata.pop("nbgrader", None)
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        elif cell.cell_type == "code":
            cell.outputs = _shown_outputs(cell.outputs)
        if anatomy.has_tag(original, anatomy.BADGE_TAG):
            cell.source = _badge_as_link(cell.source, badge_url)
        cells.append(cell)
    view = nbformat.from_dict(solution)
    view.cells = cells
    view.metadata.pop("widgets", None)
    found = leaks(view)
    if found:
        raise ValueError(f"the student view would show instructor-only text: {found}")
    return view


def leaks(notebook: NotebookNode) -> list[str]:
    """``cell id: marker`` for every cell whose source or outputs hold a :data:`INSTRUCTOR_MARKERS`
    marker."""
    found = []
    for cell in notebook.cells:
        texts = [cell.source]
        for output in cell.get("outputs", ()):
            texts.append(str(output.get("text", "")))
            texts.extend(str(value) for value in output.get("data", {}).values())
        for marker in INSTRUCTOR_MARKERS:
            if any(marker in text for text in texts):
                found.append(f"{cell.get('id')}: {marker}")
    return found


def landing_page(course: registry.Course, template: str) -> str:
    """``template`` (``docs/site/index.md``) with its ``{{ field }}`` s filled in from the
    registry (``title``, ``count``, ``shortest`` and ``longest`` (a notebook's minutes),
    ``total_minutes``, ``hours``, ``notebook_table``, ``toctree``, ``repository``,
    ``ref``)."""
    rows = [
        "| # | notebook | time | you implement | open in Colab |",
        "| --- | --- | ---: | --- | --- |",
    ]
    for notebook in course.notebooks:
        functions = ", ".join(f"`{exercise.name}`" for exercise in notebook.exercises)
        rows.append(
            f"| {notebook.number} | [{notebook.title}]({notebook.id}/{notebook.id}.ipynb) "
            f"| {notebook.minutes} min | {functions} "
            f"| {colab_link(colab.landing_url(notebook.id, course))} |"
        )
    minutes = [notebook.minutes for notebook in course.notebooks]
    fields = {
        "title": course.title,
        "shortest": str(min(minutes)),
        "longest": str(max(minutes)),
        "total_minutes": str(sum(minutes)),
        "hours": f"{sum(minutes) / 60:.1f}",
        "count": str(len(course.notebooks)),
        "notebook_table": "\n".join(rows),
        "toctree": "\n".join(f"{n.id}/{n.id}" for n in course.notebooks),
        "repository": course.repository,
        "ref": course.ref,
    }

    def fill(match: re.Match) -> str:
        if match.group(1) not in fields:
            raise KeyError(f"docs/site/index.md: unknown field {{{{ {match.group(1)} }}}}")
        return fields[match.group(1)]

    return TEMPLATE_FIELD.sub(fill, template)


def stored_figure(notebook: NotebookNode, cell_id: str) -> bytes:
    """The first PNG image among the stored outputs of the cell ``cell_id``."""
    for cell in notebook.cells:
        if cell.get("id") == cell_id:
            for output in cell.get("outputs", ()):
                if "image/png" in output.get("data", {}):
                    return base64.b64decode(output.data["image/png"])
            raise ValueError(f"cell {cell_id!r} has no stored image output")
    raise ValueError(f"no cell {cell_id!r} (the landing page's figure: LANDING_FIGURE)")


def write_sources(source: Path = SOURCE) -> list[Path]:
    """Write the landing page and every notebook's student view to ``source`` (emptied
    first); returns the notebooks written, in the registry's order."""
    course = registry.load()
    if source.exists():
        shutil.rmtree(source)
    source.mkdir(parents=True)
    (source / "index.md").write_text(
        landing_page(course, (CONF_DIR / "index.md").read_text(encoding="utf-8")),
        encoding="utf-8",
    )
    notebook_id, cell_id = LANDING_FIGURE
    (source / "landing-figure.png").write_bytes(
        stored_figure(anatomy.read_solution(notebook_id), cell_id)
    )
    written = []
    for notebook_id in course.ids:
        for path in (solution_path(notebook_id), released_path(notebook_id)):
            if not path.exists():
                raise ValueError(
                    f"course.toml lists {notebook_id} but {path.relative_to(COURSE_ROOT)} is "
                    "missing (`make release` makes the student version from solutions/)"
                )
        view = student_view(
            anatomy.read_solution(notebook_id),
            anatomy.read_released(notebook_id),
            colab.landing_url(notebook_id, course),
        )
        path = source / notebook_id / f"{notebook_id}.ipynb"
        path.parent.mkdir()
        nbformat.write(view, path)
        written.append(path)
    return written


def downloadable_notebooks(html: Path) -> list[Path]:
    """Put the student notebook, with its visible tests (``notebooks/<id>/<id>.ipynb``, the
    class's edition), where each page's download button points: sphinx-book-theme offers
    the page's source, ``_sources/<id>/<id>.ipynb`` (the student view, without the tests).
    Returns the files replaced; raises ``RuntimeError`` where Sphinx wrote none."""
    replaced = []
    for notebook_id in registry.load().ids:
        target = html / "_sources" / notebook_id / f"{notebook_id}.ipynb"
        if not target.exists():
            raise RuntimeError(
                f"no {target.relative_to(html)} for the download button to replace (did the "
                "theme's download button or Sphinx's html_copy_source change?)"
            )
        shutil.copyfile(released_path(notebook_id), target)
        replaced.append(target)
    return replaced


def build(output: Path = OUTPUT, *, workdir: Path = BUILD, quiet: bool = True) -> Path:
    """The whole site, from scratch: student views to ``workdir/src``, HTML to ``output``
    (through ``workdir/html``). Returns ``output / "index.html"``; raises
    ``RuntimeError`` on a Sphinx error or warning."""
    from sphinx.cmd.build import build_main

    if workdir.exists():
        shutil.rmtree(workdir)
    write_sources(workdir / "src")
    html = workdir / "html"
    arguments = ["-b", "html", "-c", str(CONF_DIR), "-d", str(workdir / "doctrees")]
    arguments += ["-W", "--keep-going", "-j", "auto"] + (["-q"] if quiet else [])
    status = build_main([*arguments, str(workdir / "src"), str(html)])
    if status != 0:
        raise RuntimeError(f"sphinx-build failed (exit status {status}); see its messages above")
    downloadable_notebooks(html)
    if output.exists():
        shutil.rmtree(output)
    output.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(html, output)
    return output / "index.html"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m instructor.site", description=__doc__)
    parser.add_argument("--output", type=Path, default=OUTPUT, help="default: _site/")
    parser.add_argument(
        "--workdir", type=Path, default=BUILD, help="the build folder (default: _build/site/)"
    )
    parser.add_argument("--verbose", action="store_true", help="Sphinx's progress messages")
    args = parser.parse_args(argv)
    start = time.monotonic()
    try:
        index = build(args.output.resolve(), workdir=args.workdir.resolve(), quiet=not args.verbose)
    except (RuntimeError, ValueError) as error:
        print(f"site: {error}", file=sys.stderr)
        return 1
    print(f"site built in {time.monotonic() - start:.0f} s: open {index}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
