"""Math in the feedback and in formgrader is typeset with no network (issue 44).

nbgrader's feedback and formgrade templates load MathJax from a CDN; where it cannot be
reached (a hub behind a firewall, a laptop offline) every formula stayed raw
(``$\\omega_i$``). The course's macro (``instructor/templates/nbconvert/base/mathjax.html.j2``)
loads the MathJax the Jupyter server serves itself. Tried as the people of a class meet
it: notebook 01's reference course graded by ``nbgrader autograde`` and its feedback
written by the class grader; JupyterLab started on the course root with nbgrader's server
extensions, as the hub's servers run; Debian's Chromium with every request that leaves the
machine refused. The student's feedback page (opened from the server's files) and the
instructor's formgrader page of the same hand-in: MathJax typesets every formula, with no
MathJax error, and no part of MathJax is asked of another machine.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

import nbgrader.api
import pytest

from instructor.classroom.grader.reports import feedback_for
from support.graded_class import SOLUTION, reference_course, reference_group
from support.studentview import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    browser_skip_reason,
    jupyter_lab,
)

ASSIGNMENT = "01_vector_sets"
pytestmark = reference_group(ASSIGNMENT)

MATHJAX_READY = "() => window.MathJax && window.MathJax.isReady === true"
TYPESET = "() => new Promise(done => MathJax.Hub.Queue(() => done(true)))"
MATH_STATE = """() => {
    const shown = [...document.querySelectorAll('.MathJax, .MathJax_Display, .MathJax_CHTML')];
    const raw = [...document.querySelectorAll('p, li, td, h1, h2, h3')]
        .filter(e => !e.closest('pre, code, .MathJax, .MathJax_Display'))
        .map(e => e.innerText)
        .filter(t => /\\$[^$\\s][^$]*\\\\[A-Za-z]/.test(t));
    return {
        typeset: shown.length,
        errors: [...document.querySelectorAll('.MathJax .merror, .MathJax_Error')]
            .map(e => e.textContent || e.getAttribute('title') || '?'),
        raw: raw.slice(0, 3),
    };
}"""


@pytest.fixture(scope="module")
def course_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    course = reference_course(tmp_path_factory, ASSIGNMENT)
    assert feedback_for(course.root, None, ASSIGNMENT, SOLUTION)
    return course.root


def _math_of(page, url: str, name: str) -> dict:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.goto(url)
    page.wait_for_load_state("load")
    try:
        page.wait_for_function(MATHJAX_READY, timeout=60_000)
    except PlaywrightTimeout:
        page.screenshot(path=str(ARTIFACTS / f"math_{name}.png"))
        pytest.fail(f"{name}: MathJax did not start within 60 s ({url.split('?')[0]})")
    page.evaluate(TYPESET)
    state = page.evaluate(MATH_STATE)
    page.screenshot(path=str(ARTIFACTS / f"math_{name}.png"), full_page=False)
    return state


def test_feedback_and_formgrader_typeset_math_without_the_network(
    course_root: Path, tmp_path: Path
) -> None:
    reason = browser_skip_reason()
    if reason:
        pytest.skip(f"browser test skipped: {reason}")
    from playwright.sync_api import sync_playwright

    with nbgrader.api.Gradebook(f"sqlite:///{course_root / 'gradebook.db'}") as gradebook:
        submission = gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, SOLUTION).id
    feedback = f"feedback/{SOLUTION}/{ASSIGNMENT}/{ASSIGNMENT}.html"
    assert (course_root / feedback).exists()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    refused: list[str] = []
    loaded: list[str] = []

    def local_only(route) -> None:
        url = route.request.url
        if urlparse(url).hostname == "127.0.0.1":
            loaded.append(url)
            route.continue_()
        else:
            refused.append(url)
            route.abort()

    with (
        jupyter_lab(course_root, tmp_path, cwd=course_root) as lab,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context()
            context.route("**/*", local_only)
            page = context.new_page()
            pages = {
                "feedback": f"{lab.url}/files/{feedback}?token={lab.token}",
                "formgrader": f"{lab.url}/formgrader/submissions/{submission}?token={lab.token}",
            }
            for name, url in pages.items():
                state = _math_of(page, url, name)
                assert state["typeset"] >= 20, (name, state, lab.log.read_text()[-3000:])
                assert state["errors"] == [], (name, state)
                assert not state["raw"], (name, state)
        finally:
            browser.close()
    assert any("/static/jupyter_server_mathjax/MathJax.js" in url for url in loaded), loaded
    # The notebook's Colab badge is an image from colab.research.google.com: refused, and
    # shown as its alt text. Nothing of MathJax is asked of another machine.
    assert not [url for url in refused if "mathjax" in url.lower()], refused
