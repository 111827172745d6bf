"""Nothing a student wrote runs in the instructor's browser (instructor.feedback).

Each payload of ``tests/support/hostile.py`` is rendered by nbconvert (the classic template,
which nbgrader's feedback and formgrader extend, and the lab one) before and after
:func:`sanitise_notebook`: live before, inert after, the student's text still read.
The class grader end to end (the autograded notebook and the feedback of a hostile student):
``test_grade.py``.
"""

from __future__ import annotations

import copy
import json

import nbformat
import pytest
from nbconvert import HTMLExporter

from instructor.feedback import (
    SHOWN_AS_TEXT,
    SanitiseNotebook,
    clean_html,
    inert_markdown,
    markdown_is_plain,
    sanitise_notebook,
)
from instructor.paths import COURSE_ROOT
from support.hostile import (
    READABLE_ANSWER,
    READABLE_OUTPUT,
    SCRIPT_MARKDOWN,
    SCRIPT_OUTPUTS,
    active_content,
    visible_text,
)

TEMPLATES = ("classic", "lab")
INERT_AS_WRITTEN = {
    "&lt;script&gt;alert('XSS')&lt;/script&gt;",  # references: text already
    "<img src=x onerror=alert(XSS)//",  # no closing '>': markdown escapes it as text
}
"""Payloads nbconvert already shows as text: left as written, and they stay text."""
NOT_LIVE_IN_NBCONVERT = INERT_AS_WRITTEN | {
    # nbconvert's markdown does not read these as a link or a command; another renderer
    # might (a tab in a URL is dropped by browsers): they are shown as text all the same.
    "[x](java&#9;script:alert('XSS'))",
    "$&#92;href{javascript:alert('XSS')}{click}$",
}


def _render(nb: nbformat.NotebookNode, template: str) -> str:
    page, _ = HTMLExporter(template_name=template).from_notebook_node(copy.deepcopy(nb))
    return page


def _notebook(*cells: nbformat.NotebookNode) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = list(cells)
    return nb


def _captured_outputs() -> list[nbformat.NotebookNode]:
    """The outputs SCRIPT_OUTPUTS displays, as a kernel would send them."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    shell = InteractiveShell.instance()
    with capture_output() as captured:
        result = shell.run_cell(SCRIPT_OUTPUTS)
    assert result.success, result
    return [
        nbformat.v4.new_output("display_data", data=o.data, metadata=o.metadata)
        for o in captured.outputs
    ]


@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("payload", SCRIPT_MARKDOWN)
def test_a_markdown_payload_is_inert_and_readable(payload: str, template: str) -> None:
    source = f"{READABLE_ANSWER}\n\n{payload}"
    nb = _notebook(nbformat.v4.new_markdown_cell(source))
    if payload not in NOT_LIVE_IN_NBCONVERT:
        assert active_content(_render(nb, template)), "the payload is not live in nbconvert"
    sanitise_notebook(nb)
    page = _render(nb, template)
    assert active_content(page) == []
    assert READABLE_ANSWER in visible_text(page)
    if payload in INERT_AS_WRITTEN:
        assert nb.cells[0].source == source  # plain: left as written
    else:
        # Shown verbatim: the instructor reads what the student wrote.
        assert nb.cells[0].source == inert_markdown(source)
        assert payload in visible_text(page)


@pytest.mark.parametrize("template", TEMPLATES)
def test_every_payload_in_one_answer(template: str) -> None:
    source = READABLE_ANSWER + "\n\n" + "\n\n".join(SCRIPT_MARKDOWN)
    nb = _notebook(nbformat.v4.new_markdown_cell(source))
    sanitise_notebook(nb)
    page = _render(nb, template)
    assert active_content(page) == []
    assert READABLE_ANSWER in visible_text(page) and SHOWN_AS_TEXT.strip("*") in page


@pytest.mark.parametrize("template", TEMPLATES)
def test_outputs_are_inert_and_readable(template: str) -> None:
    cell = nbformat.v4.new_code_cell(SCRIPT_OUTPUTS, outputs=_captured_outputs())
    nb = _notebook(cell)
    assert active_content(_render(nb, template)), "the outputs are not live in nbconvert"
    sanitise_notebook(nb)
    page = _render(nb, template)
    assert active_content(page) == []
    text = visible_text(page)
    for shown in ("HTML", "MD", "PNG", "WIDTH", "ISOLATED"):
        assert f"{READABLE_OUTPUT}-{shown}" in text, shown
    kinds = {mime for output in nb.cells[0].outputs for mime in output.get("data", {})}
    assert not kinds & {"application/javascript", "image/svg+xml", "text/latex"}, kinds


def test_a_markdown_output_with_html_is_shown_as_its_text() -> None:
    output = nbformat.v4.new_output(
        "display_data", data={"text/markdown": "hi <script>alert('XSS')</script>"}
    )
    sanitise_notebook(_notebook(nbformat.v4.new_code_cell("", outputs=[output])))
    assert output.data == {"text/plain": "hi <script>alert('XSS')</script>"}


def test_html_keeps_its_formatting() -> None:
    table = '<table class="dataframe"><tbody><tr><td><b>1</b></td></tr></tbody></table>'
    assert clean_html(table) == table
    assert clean_html("<p onclick=alert(1) style='color:red'>x</p>") == "<p>x</p>"
    link = clean_html('<a href="https://pytorch.org">docs</a>')
    assert 'href="https://pytorch.org"' in link


@pytest.mark.parametrize(
    "source",
    [
        "plain text, $a < b$ and $x_i$",
        "a <= b and c < d",
        "See <https://arxiv.org/abs/1706.03762> and [docs](https://pytorch.org/x.html)",
        "![badge](https://colab.research.google.com/assets/colab-badge.svg)",
        "```python\nx = '<script>alert(1)</script>'\n```",
        "| a | b |\n|:-:|--:|\n| 1 | 2 |",
        "- [x] done\n- [ ] not yet",
        "![drawing](attachment:drawing.png)",
    ],
)
def test_plain_markdown_stays_as_written(source: str) -> None:
    attachments = {"drawing.png": {"image/png": "iVBORw0KGgo="}}
    assert markdown_is_plain(source, attachments)
    cell = nbformat.v4.new_markdown_cell(source, attachments=attachments)
    sanitise_notebook(_notebook(cell))
    assert cell.source == source


def test_a_mermaid_block_is_shown_as_text() -> None:
    """nbconvert writes a mermaid block's code into the page unescaped."""
    for fence in ("```", "~~~"):
        assert not markdown_is_plain(f"{fence}mermaid\ngraph TD; A-->B\n{fence}")


def test_an_image_attachment_that_is_not_there_is_shown_as_text() -> None:
    assert not markdown_is_plain("![x](attachment:missing.png)", {})


def test_an_answer_shown_as_text_cannot_close_its_fence() -> None:
    source = "```\n<script>alert('XSS')</script>\n````\n`````"
    inert = inert_markdown(source)
    assert markdown_is_plain(inert)
    page = _render(_notebook(nbformat.v4.new_markdown_cell(inert)), "classic")
    assert active_content(page) == [] and "alert('XSS')" in visible_text(page)


def test_sanitising_twice_changes_nothing() -> None:
    nb = _notebook(
        nbformat.v4.new_markdown_cell("\n\n".join(SCRIPT_MARKDOWN)),
        nbformat.v4.new_code_cell(SCRIPT_OUTPUTS, outputs=_captured_outputs()),
    )
    once = json.dumps(sanitise_notebook(nb), sort_keys=True)
    assert json.dumps(sanitise_notebook(nb), sort_keys=True) == once


def test_widget_state_is_removed() -> None:
    nb = _notebook()
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    assert "widgets" not in sanitise_notebook(nb).metadata


@pytest.mark.parametrize(
    "path",
    sorted(
        str(p.relative_to(COURSE_ROOT))
        for folder in ("notebooks", "solutions")
        for p in (COURSE_ROOT / folder).glob("*/*.ipynb")
    ),
)
def test_the_course_notebooks_are_left_as_they_are(path: str) -> None:
    """Every released and solved notebook (their outputs, widgets and figures included)
    is plain: sanitising changes nothing an honest student hands in."""
    nb = nbformat.read(COURSE_ROOT / path, as_version=4)
    before = json.dumps(nb, sort_keys=True)
    assert json.dumps(sanitise_notebook(nb), sort_keys=True) == before


def test_the_preprocessor_sanitises() -> None:
    nb = _notebook(nbformat.v4.new_markdown_cell("<script>alert('XSS')</script>"))
    done, _ = SanitiseNotebook().preprocess(nb, {})
    assert done.cells[0].source.startswith(SHOWN_AS_TEXT)
    assert SanitiseNotebook().enabled


def test_the_class_grader_sanitises_its_autograded_notebooks() -> None:
    """Last of the autograde preprocessors, after the scores are saved (so no score depends
    on it): what formgrader shows is the sanitised notebook."""
    from instructor.classroom.grader.record import replay_steps

    preprocessors = replay_steps()
    assert preprocessors[-1] is SanitiseNotebook
    assert [p.__name__ for p in preprocessors].index("SaveAutoGrades") < len(preprocessors) - 1
