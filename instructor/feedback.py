"""nbgrader plugins that keep hidden tests out of feedback and make a student's notebook
inert for the instructor's browser.

``autograder/nbgrader_config.py`` merges :func:`feedback_config` (every nbgrader command:
``generate_feedback``, formgrader, ``autograde``), and the class grader uses the same
plugins, so this module imports nothing of :mod:`instructor.classroom`.
:class:`RedactFeedback` shows test cells as students may see them (hidden tests redacted,
long output lines wrapped). :class:`SanitiseNotebook` runs after it in feedback and last in
every autograde: plain markdown stays byte for byte, anything that could act (raw HTML,
unsafe links, a MathJax command of :data:`TEX_ACTIVE`, scripts, SVG) is cleaned by ammonia
(``nh3``), shown as text or dropped with a line saying so. An honest notebook is unchanged,
and sanitising is idempotent.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nh3
from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode
from traitlets import Bool
from traitlets.config import Config

from instructor import anatomy

COURSE_TEMPLATES = Path(__file__).parent / "templates" / "nbconvert"
"""The course's nbconvert templates: its MathJax macro (:func:`template_basedirs`)."""
HIDDEN_NOTE = "# (hidden tests ran here too; their code is not shown)"
REDACTED_LINE = "    ... (a line of a hidden test)"


WRAP_CSS = """
div.output_area pre, div.output_subarea pre, div.output_text pre, .output_error pre {
  white-space: pre-wrap !important;
  overflow-wrap: anywhere;
  word-break: break-word;
  overflow-x: visible !important;
}
"""


_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_NUMBERED = re.compile(r"^\s*(?:-*>)?\s*(?P<number>\d+)(?: (?P<code>.*))?$")
_CARETS = re.compile(r"^[\s^~]+$")


def _code_lines(source: str) -> set[str]:
    return {line.strip() for line in source.splitlines() if line.strip()}


def _redact_text(text: str, hidden: set[str], own_frame: bool, visible_count: int) -> str:
    """``text`` without the lines that quote hidden code; in the test cell's own frame also
    every numbered line past the visible part's ``visible_count`` lines."""
    kept: list[str] = []
    dropping = False
    for line in text.split("\n"):
        plain = _ANSI.sub("", line)
        match = _NUMBERED.match(plain)
        drop = False
        if match:
            code = (match.group("code") or "").strip()
            drop = code in hidden or (own_frame and int(match.group("number")) > visible_count)
        elif len(plain.strip()) >= 8 and plain.strip() in hidden:
            drop = True
        elif dropping and _CARETS.match(plain) and plain.strip():
            drop = True  # Python 3.11's markers under a line taken out
        if drop:
            if not dropping:
                kept.append(REDACTED_LINE)
            dropping = True
        else:
            dropping = False
            kept.append(line)
    return "\n".join(kept)


def redact_test_cell(cell: NotebookNode) -> NotebookNode:
    """A test cell as feedback may show it (changed in place, and returned)."""
    source = cell.source
    visible = anatomy.visible_part(source).rstrip()
    has_hidden = visible != source.rstrip()
    hidden = _code_lines(source) - _code_lines(visible)
    visible_count = len(visible.splitlines())
    if has_hidden:
        cell.source = f"{visible}\n\n{HIDDEN_NOTE}" if visible else HIDDEN_NOTE
    header = re.compile(rf"Cell In\[{cell.get('execution_count')}\]")
    for output in cell.get("outputs", []):
        kind = output.get("output_type")
        if kind == "error":
            output["traceback"] = [
                _redact_text(
                    entry,
                    hidden,
                    bool(has_hidden and header.search(_ANSI.sub("", entry))),
                    visible_count,
                )
                for entry in output.get("traceback", [])
            ]
        elif kind == "stream" and hidden:
            output["text"] = _redact_text(output.get("text", ""), hidden, False, visible_count)
        elif kind in ("execute_result", "display_data") and hidden:
            data = output.get("data", {})
            for mime in ("text/plain", "text/html", "text/markdown"):
                if isinstance(data.get(mime), str):
                    data[mime] = _redact_text(data[mime], hidden, False, visible_count)
    return cell


class RedactFeedback(Preprocessor):
    """Test cells as students may see them, and wrapped output (see the module docstring)."""

    enabled = Bool(True).tag(config=True)  # nbconvert skips a preprocessor not enabled

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]):
        for cell in nb.cells:
            if anatomy.is_test_cell(cell):
                redact_test_cell(cell)
        inlining = resources.setdefault("inlining", {})
        css = inlining.get("css") or []
        inlining["css"] = [*([css] if isinstance(css, str) else css), WRAP_CSS]
        return nb, resources


def feedback_config() -> Config:
    """nbgrader configuration whose ``generate_feedback`` redacts and sanitises (nbgrader
    0.9's own two preprocessors come first)."""
    from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
    from nbgrader.preprocessors import GetGrades

    config = Config()
    config.GenerateFeedback.preprocessors = [
        GetGrades,
        CSSHTMLHeaderPreprocessor,
        RedactFeedback,
        SanitiseNotebook,
    ]
    config.HTMLExporter.extra_template_basedirs = template_basedirs()
    return config


def template_basedirs() -> list[str]:
    """The course's templates (its MathJax macro: ``templates/nbconvert/base``), then
    nbgrader's (``feedback``, ``formgrade``).

    nbgrader's feedback and formgrade pages load MathJax from a CDN (their templates call
    nbconvert's macro without a URL: ``HTMLExporter.mathjax_url`` reaches neither), so
    their math stayed raw where the CDN cannot be reached. nbconvert looks a template's
    files up in each of these folders in turn, so the course's macro comes first for both;
    ``generate_feedback`` keeps a configured value, and formgrader's own setting is read
    before the configuration files, which then replace it."""
    import nbgrader

    nbgrader_templates = Path(nbgrader.__file__).parent / "server_extensions/formgrader/templates"
    return [str(COURSE_TEMPLATES), str(nbgrader_templates)]


SHOWN_AS_TEXT = (
    "*(Shown as text by the grader: this holds HTML, a link or a formula command that is "
    "not rendered.)*"
)
"""The line above a markdown cell or output shown verbatim (:func:`inert_markdown`)."""


TEX_ACTIVE = re.compile(
    r"\\(?:href|url|class|style|cssId|require|unicode|bbox|html|data|toggle|mmlToken|"
    r"texttip|tooltip|statusline|action)(?![A-Za-z])"
)
"""MathJax commands that make a link, a style, an id or a class, or load code: MathJax
typesets every ``$...$`` of a feedback or formgrader page (outside ``<pre>`` and
``<code>``), so a formula holding one could run ``\\href{javascript:...}``."""


LINK_SCHEMES = frozenset({"http", "https", "mailto"})
"""The URL schemes a student's link or image may use (besides relative URLs)."""


IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
SAFE_TEXT_TYPES = ("text/plain", "application/json")
_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]*$")
_MODEL_ID = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")
ATTACHMENT = "attachment:"


_HTML_ATTRIBUTES = {
    **{tag: set(names) for tag, names in nh3.ALLOWED_ATTRIBUTES.items()},
    "*": {"class", "title", "lang", "dir"},
}


def clean_html(text: str) -> str:
    """``text`` (HTML a student made) with only formatting left: ammonia's default tags and
    attributes (no script, style, svg, form or ``on*``) and ``class``; safe links only."""
    return nh3.clean(
        text,
        attributes=_HTML_ATTRIBUTES,
        url_schemes=set(LINK_SCHEMES),
        strip_comments=True,
        link_rel="noopener noreferrer nofollow",
    )


def _tex_active(text: str) -> bool:
    """Whether ``text``, or what a browser reads in it, holds a command of :data:`TEX_ACTIVE`."""
    return bool(TEX_ACTIVE.search(text) or TEX_ACTIVE.search(html.unescape(text)))


def _relative_without_colon(url: str) -> str | None:
    """A relative URL whose first segment holds no colon (RFC 3986, 4.2: such a colon
    would be read as a scheme's), else None (ammonia then drops it): ``java%09script:``,
    nbconvert's form of ``java&#9;script:``, is no link (another renderer may decode it)."""
    return None if ":" in re.split(r"[/?#]", url, maxsplit=1)[0] else url


_LINK_URL = nh3.Cleaner(
    tags={"a"},
    attributes={"a": {"href"}},
    url_schemes=set(LINK_SCHEMES),
    url_relative=_relative_without_colon,
    link_rel=None,
)


def _url_is_safe(url: str) -> bool:
    """Whether ammonia keeps ``url`` as a link's ``href``; it reads the URL as a browser
    does, so character references, tabs or case do not hide ``javascript:``."""
    link = '<a href="' + url.replace('"', "&quot;") + '"></a>'
    return "href=" in _LINK_URL.clean(link)  # the link without its href where it is dropped


def _outside_code(rendered: str) -> str:
    """The text of ``rendered`` HTML outside ``<pre>`` and ``<code>`` (which MathJax skips),
    as ammonia parses it, character references read."""
    return html.unescape(
        nh3.clean(rendered, tags=set(), clean_content_tags={"pre", "code"}, attributes={})
    )


def _render_noting(source: str, attachments: dict[str, Any]) -> tuple[str, list[str]]:
    """Markdown ``source`` as nbconvert's own renderer writes it, and what it found in it
    that is not plain."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath

    found: list[str] = []

    class Noting(IPythonRenderer):
        def block_html(self, html: str) -> str:
            found.append("raw HTML")
            return ""

        inline_html = block_html

        def link(self, text: str, url: str, title: str | None = None) -> str:
            if not _url_is_safe(url):
                found.append(f"a link to {url[:40]!r}")
            return super().link(text, url, title)

        def image(self, text: str, url: str, title: str | None = None) -> str:
            # nbconvert embeds one of the cell's attachments as a data: URL.
            attached = url.startswith(ATTACHMENT) and url[len(ATTACHMENT) :] in attachments
            if not attached and not _url_is_safe(url):
                found.append(f"an image from {url[:40]!r}")
            return ""

        def block_code(self, code: str, info: str | None = None) -> str:
            if info and info.strip().lower().startswith("mermaid"):
                found.append("a mermaid block")
                return ""
            return super().block_code(code, info)

    def noting_formulas(render: Callable[..., str]) -> Callable[..., str]:
        def checked(renderer: IPythonRenderer, *texts: str) -> str:
            if _tex_active("".join(texts)):
                found.append("a MathJax command")
            return render(renderer, *texts)

        return checked

    # Every piece of text MathJax would typeset: prose, formulas, LaTeX environments.
    for method in ("text", "block_math", "inline_math", "latex_environment"):
        setattr(Noting, method, noting_formulas(getattr(IPythonRenderer, method)))
    renderer = Noting(escape=False, attachments=attachments)
    return MarkdownWithMath(renderer=renderer).render(source), found


def markdown_is_plain(source: str, attachments: dict[str, Any] | None = None) -> bool:
    """Whether markdown ``source`` renders (in nbconvert, for feedback and formgrader) with
    nothing active: see the module docstring."""
    if not any(mark in source for mark in ("<", ":", "\\", "`", "~", "&", "]")):
        return True  # no tag, link, URL, command, entity or fenced block: nothing to look at
    if not attachments and len(source) <= CACHED_MARKDOWN_CHARS:
        return _plain_without_attachments(source)
    return _rendered_plain(source, attachments or {})


CACHED_MARKDOWN_CHARS = 20_000
"""The longest markdown text whose verdict is kept: the course's cells are under 5,000
characters; a submission's megabyte of text is judged every time, not kept in memory."""


@functools.lru_cache(maxsize=4096)
def _plain_without_attachments(source: str) -> bool:
    # Every student's notebook repeats the released markdown: each text is rendered once.
    return _rendered_plain(source, {})


def _rendered_plain(source: str, attachments: dict[str, Any]) -> bool:
    try:
        rendered, found = _render_noting(source, dict(attachments))
    except Exception:  # noqa: BLE001 - what nbconvert cannot render is shown as text
        return False
    # What the renderer wrote outside raw HTML (noted above) is formatting; its text is
    # read once more as the browser gets it, where MathJax would typeset a command.
    return not found and not _tex_active(_outside_code(rendered))


def inert_markdown(source: str) -> str:
    """``source`` shown verbatim, in a fence longer than any backtick run in it."""
    longest = max((len(run) for run in re.findall(r"`+", source)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{SHOWN_AS_TEXT}\n\n{fence}text\n{source}\n{fence}"


def _is_base64(value: Any) -> bool:
    return isinstance(value, str) and bool(_BASE64.match(value))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _clean_metadata(metadata: dict[str, Any]) -> dict[str, Any]:
    """An output's metadata without what nbconvert writes into a tag unquoted or as a
    path (``width``/``height`` only as numbers, no ``filenames``), nor ``isolated`` (its
    own iframe would escape the cleaned page)."""
    cleaned: dict[str, Any] = {}
    for key, value in metadata.items():
        if key in ("filenames", "isolated"):
            continue
        if key in ("width", "height") and not _is_number(value):
            continue
        if isinstance(value, dict):
            value = _clean_metadata(value)
        cleaned[key] = value
    return cleaned


def _joined_text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def sanitise_output(output: NotebookNode | dict[str, Any]) -> Any:
    """One output made inert (changed in place, and returned): see the module docstring."""
    if "metadata" in output and isinstance(output["metadata"], dict):
        output["metadata"] = type(output["metadata"])(_clean_metadata(output["metadata"]))
    if output.get("output_type") not in ("display_data", "execute_result"):
        return output  # streams and errors: nbconvert escapes them
    data = output.get("data") or {}
    removed: list[str] = []
    kept: dict[str, Any] = {}
    as_text = ""  # an HTML or markdown output shown as its text instead
    for mime, value in data.items():
        if mime in SAFE_TEXT_TYPES:
            kept[mime] = value
        elif mime == "text/html":
            text = _joined_text(value)
            cleaned = clean_html(text)
            if _tex_active(text) or _tex_active(cleaned):
                removed.append(mime)
                as_text = as_text or text
            else:
                kept[mime] = value if cleaned == text else cleaned
        elif mime == "text/markdown":
            text = _joined_text(value)
            if markdown_is_plain(text):
                kept[mime] = value
            else:
                removed.append(mime)
                as_text = text
        elif mime == "text/latex":
            if _tex_active(_joined_text(value)):
                removed.append(mime)
            else:
                kept[mime] = value
        elif mime in IMAGE_TYPES:
            if _is_base64(value):
                kept[mime] = value
            else:
                removed.append(mime)
        elif mime == WIDGET_VIEW:
            if (
                isinstance(value, dict)
                and set(value) <= {"model_id", "version_major", "version_minor"}
                and _MODEL_ID.match(str(value.get("model_id", "")))
                and all(_is_number(value.get(k, 0)) for k in ("version_major", "version_minor"))
            ):
                kept[mime] = value
            else:
                removed.append(mime)
        else:
            removed.append(mime)
    if as_text:
        kept["text/plain"] = as_text
    elif removed and not (set(kept) - {WIDGET_VIEW}):
        kept["text/plain"] = f"[{', '.join(removed)} output removed by the grader]"
    if kept != dict(data):
        output["data"] = type(data)(kept) if isinstance(data, dict) else kept
    return output


def _clean_attachments(attachments: dict[str, Any]) -> dict[str, Any]:
    return {
        name: {mime: value for mime, value in bundle.items() if mime in IMAGE_TYPES}
        for name, bundle in attachments.items()
        if isinstance(bundle, dict)
        and any(mime in IMAGE_TYPES and _is_base64(value) for mime, value in bundle.items())
    }


def sanitise_cell(cell: NotebookNode) -> NotebookNode:
    """One cell made inert (changed in place, and returned)."""
    if not isinstance(cell.get("execution_count", None), int | None):
        cell["execution_count"] = None
    if "attachments" in cell:
        attachments = cell["attachments"]
        cleaned = _clean_attachments(attachments) if isinstance(attachments, dict) else {}
        if cleaned != attachments:
            cell["attachments"] = type(attachments)(cleaned) if cleaned else {}
    if cell.get("cell_type") == "markdown":
        source = _joined_text(cell.get("source", ""))
        if not markdown_is_plain(source, cell.get("attachments")):
            cell["source"] = inert_markdown(source)
    elif cell.get("cell_type") == "raw":
        # nbconvert's HTML templates clean a raw cell's HTML themselves (bleach); MathJax
        # would still typeset its text: one with a command of TEX_ACTIVE goes in <pre>.
        source = _joined_text(cell.get("source", ""))
        if _tex_active(source):
            cell["source"] = f"<pre>{html.escape(source)}</pre>"
    for output in cell.get("outputs", []) or []:
        sanitise_output(output)
    return cell


def sanitise_notebook(nb: NotebookNode) -> NotebookNode:
    """Every cell made inert, and the widget state nbconvert would load removed (in place)."""
    if isinstance(nb.get("metadata"), dict):
        nb["metadata"].pop("widgets", None)
    for cell in nb.get("cells", []):
        sanitise_cell(cell)
    return nb


class SanitiseNotebook(Preprocessor):
    """:func:`sanitise_notebook` as an nbconvert preprocessor (for nbgrader's converters)."""

    enabled = Bool(True).tag(config=True)  # nbconvert skips a preprocessor not enabled

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]):
        return sanitise_notebook(nb), resources
