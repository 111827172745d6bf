"""What a student sees in JupyterLab, checked in a real browser.

Starts JupyterLab from this checkout on a copy of notebook 02 (a free loopback port, a
token; the committed ``notebooks/`` is never written to) and drives Debian's Chromium
through Playwright's Python API (no browser download). Like a student, it opens the
notebook and clicks Run > Run All Cells, then checks:

1. the **student version**: the first exercise's test cell shows the ``NotImplementedError``
   message, and the nbgrader extension's **Validate** button is in the notebook toolbar;
2. the **completed version** (every exercise filled in with its solution): after Run All,
   every code cell ran, every figure renders as an image, the slider cell shows exactly
   one figure (under its slider, not a static copy above it as well), and moving the
   temperature slider replaces that figure with one at the new temperature, still one.

Screenshots go to ``tests/artifacts/`` (git-ignored); ``jupyterlab.png`` is the README's.
Skips, saying why, without ``/usr/bin/chromium`` or the ``playwright`` package.
"""

from __future__ import annotations

import shutil

import nbformat
import pytest

from instructor.paths import NOTEBOOKS, SOLUTIONS
from support.studentview import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    Lab,
    browser_skip_reason,
    completed_notebook,
    jupyter_lab,
)

ASSIGNMENT = "02_soft_select"
SLIDER_CELL = "temperature-slider"  # the cell id of the widget the test moves
TIMEOUT_MS = 120_000  # generous: the suite runs other kernels on the same cores meanwhile


def test_what_a_student_sees_in_jupyterlab(tmp_path) -> None:
    """One test, one server and one browser (pytest-xdist may split a module's tests)."""
    reason = browser_skip_reason()
    if reason:
        pytest.skip(f"browser test skipped: {reason}")
    from playwright.sync_api import sync_playwright

    root = tmp_path / "root"
    shutil.copytree(NOTEBOOKS / ASSIGNMENT, root / "student")
    (root / "completed").mkdir()
    nbformat.write(completed_notebook(ASSIGNMENT), root / "completed" / f"{ASSIGNMENT}.ipynb")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with jupyter_lab(root, tmp_path) as lab, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            for name, check in [("student", check_student), ("completed", check_completed)]:
                page = open_and_run_all(browser, lab, f"{name}/{ASSIGNMENT}.ipynb")
                try:
                    check(page)
                except Exception:
                    page.screenshot(path=str(ARTIFACTS / f"failed_{name}.png"))
                    print(page_state(page), lab.log.read_text(errors="replace")[-4000:], sep="\n")
                    raise
                page.close()
        finally:
            browser.close()


def open_and_run_all(browser, lab: Lab, path: str):
    """Open ``path`` in JupyterLab, wait for its kernel, click Run > Run All Cells."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(lab.notebook_url(path))
    page.wait_for_selector(".jp-NotebookPanel .jp-Notebook .jp-Cell")
    lab.wait_for_kernel(path, TIMEOUT_MS / 1000)
    # Run All has started when the first code cell is queued or has run ([*] or [1]). A
    # page still wiring up its kernel skips the cells; then the click is repeated.
    started = """() => {
        const p = document.querySelector('.jp-NotebookPanel .jp-CodeCell .jp-InputArea-prompt');
        return p !== null && /\\[(\\*|\\d+)\\]/.test(p.textContent);
    }"""
    for attempt in range(3):
        page.locator(".lm-MenuBar-item", has_text="Run").first.click()
        page.locator(".lm-Menu-item", has_text="Run All Cells").first.click()
        try:
            page.wait_for_function(started, timeout=15_000)
            break
        except PlaywrightTimeout:
            if attempt == 2:
                raise
    return page


def page_state(page) -> str:
    """What the page shows, for a failure's report: prompts, output types, kernel status."""
    prompts = page.eval_on_selector_all(
        ".jp-NotebookPanel .jp-CodeCell .jp-InputArea-prompt", "els => els.map(e => e.textContent)"
    )
    outputs = page.eval_on_selector_all(
        ".jp-NotebookPanel .jp-OutputArea-output",
        "els => els.map(e => e.getAttribute('data-mime-type'))",
    )
    status = page.locator(".jp-StatusBar-Widget").all_inner_texts()
    return f"prompts: {prompts}\noutputs: {outputs}\nstatus bar: {status}"


def cell_index(cell_id: str) -> int:
    """The position of a cell (by its id) in the student notebook."""
    student = nbformat.read(NOTEBOOKS / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    return next(i for i, c in enumerate(student.cells) if c.id == cell_id)


def code_cell(page, index: int):
    """The notebook's cell number ``index`` (from 0) in the page."""
    return page.locator(f".jp-Notebook .jp-Cell[data-windowed-list-index='{index}']").first


def check_one_figure_under_the_slider(cell, slider, when: str) -> None:
    """The slider cell shows one figure (the widget's), under the slider, and no error."""
    shown = cell.locator(".jp-OutputArea-output img")
    count = shown.count()
    assert count == 1, (
        f"{when}, the slider cell shows {count} figures, 1 expected: a live JupyterLab must "
        "show the widget's figure only, not the stored static image as well"
    )
    assert "Error displaying widget" not in cell.locator(".jp-Cell-outputArea").inner_text()
    figure_box, slider_box = shown.first.bounding_box(), slider.bounding_box()
    assert figure_box["y"] >= slider_box["y"] + slider_box["height"] - 1, (
        f"{when}, the figure is not under the slider"
    )


def check_student(page) -> None:
    """After Run All on the student version: the first exercise's message, Validate."""
    # The first exercise's test cell: Run All stops there with the exercise's message.
    error = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    error.first.wait_for(state="attached")
    student = nbformat.read(NOTEBOOKS / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    first_test = next(
        i for i, c in enumerate(student.cells) if c.metadata.get("nbgrader", {}).get("grade")
    )
    failing = code_cell(page, first_test)
    failing.scroll_into_view_if_needed()
    assert "NotImplementedError" in failing.locator(".jp-OutputArea").inner_text()
    validate = page.locator(".jp-NotebookPanel-toolbar .validate-button")
    validate.wait_for()
    assert "Validate" in validate.inner_text()
    page.screenshot(path=str(ARTIFACTS / "student_run_all.png"))


def check_completed(page) -> None:
    """After Run All on the completed version: no error, every figure, a working slider."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect

    solution = nbformat.read(SOLUTIONS / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    figures = sum(
        1
        for c in solution.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if "image/png" in o.get("data", {})
    )
    code_cells = sum(1 for c in solution.cells if c.cell_type == "code")
    # Run All is done when every code cell shows an execution count ([12], not [*] or [ ]).
    page.wait_for_function(
        """n => {
            const prompts = [...document.querySelectorAll(
                '.jp-NotebookPanel .jp-CodeCell .jp-InputArea-prompt')];
            return prompts.length === n && prompts.every(p => /\\[\\d+\\]/.test(p.textContent));
        }""",
        arg=code_cells,
        timeout=TIMEOUT_MS,
    )
    errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']")
    assert errors.count() == 0, errors.first.inner_text()
    images = page.locator(".jp-NotebookPanel .jp-OutputArea-output img")
    assert images.count() >= figures, f"{images.count()} images shown, {figures} expected"

    cell = code_cell(page, cell_index(SLIDER_CELL))
    cell.scroll_into_view_if_needed()
    slider = cell.locator(".widget-slider, .jupyter-widgets.widget-hslider").first
    slider.wait_for()
    figure = cell.locator(".widget-output img").first  # the figure at the default, in the widget
    try:
        figure.wait_for(timeout=30_000)
    except PlaywrightTimeout:
        raise AssertionError(
            "after Run All the slider's widget holds no figure: the figure at the default "
            "values belongs under the slider, in the widget, not in an output of its own"
        ) from None
    check_one_figure_under_the_slider(cell, slider, "after Run All")
    before = figure.get_attribute("src")
    assert before and before.startswith("data:image/png"), before
    readout = cell.locator(".widget-readout").first
    readout_before = readout.inner_text()
    # Drag the handle to the cold end of the slider, as a student would.
    handle = cell.locator(".noUi-handle").first
    track = cell.locator(".noUi-target").first
    box, end = handle.bounding_box(), track.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(end["x"] + 2, box["y"] + box["height"] / 2, steps=8)
    page.mouse.up()
    assert readout.inner_text() != readout_before
    # The kernel redraws the figure at the new temperature, in place of the first one.
    expect(figure).not_to_have_attribute("src", before, timeout=60_000)
    after = figure.get_attribute("src")
    assert after and after.startswith("data:image/png") and after != before
    check_one_figure_under_the_slider(cell, slider, "after moving the slider")
    figure.scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "jupyterlab.png"))
