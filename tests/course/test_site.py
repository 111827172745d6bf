"""The course website (``make site``), checked in a real browser.

Builds the site once into a temporary folder, serves it with ``http.server`` on a free
loopback port and opens the landing page and every notebook's page in Debian's Chromium
through Playwright (no browser download), at a desktop's size (1280x900) and a phone's
(390x844). Every request that leaves the loopback server is blocked and counted: the pages
must load nothing from elsewhere. On each page, at both sizes:

- the math is typeset by the site's own MathJax (no raw ``\\(...\\)`` or ``$...$`` left);
- at least one figure has loaded, and every figure has alt text that says what it shows
  (a few words from the notebook, not its file name);
- the page does not scroll sideways;
- no sentence speaks of cells the page does not show (the test cells);
- axe-core finds no serious or critical accessibility violation;
- a notebook's page has an "Open in Colab" link to the notebook the badges open (the
  self-study edition while ``course.toml`` says so), a file of the checkout at the path the
  release publishes, and a click on it asks Colab for that address (Colab itself cannot be
  reached from here); its download button gives the class's student notebook, byte for
  byte, visible tests included;
- nothing of the instructor's shows: no solution or hidden-test marker, and no line of a
  reference solution that no student notebook holds.

The sidebar buttons open the site's navigation and the page's contents (a drawer on the
phone, the sidebar hidden and shown on the desktop), and the site's search finds
"sinusoidal" in notebook 05. A screenshot of notebook 05's page goes to
``tests/artifacts/website.png`` (``docs/website.png``, the README's, is a copy). Skips,
saying why, without ``/usr/bin/chromium`` or the ``playwright`` package. axe-core comes
from the npm registry (``npm install axe-core@4`` into pytest's cache folder, once); where
npm or the registry is missing, a page's other checks run and the test then skips, saying
why.
"""

from __future__ import annotations

import functools
import html as htmllib
import http.server
import json
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from instructor import anatomy, colab, registry
from instructor.paths import COURSE_ROOT, released_path
from support.studentview import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    browser_skip_reason,
    colab_target,
    free_port,
)

pytestmark = pytest.mark.xdist_group("site")

IDS = registry.load().ids
# Like test_browser.py's jupyterlab.png: written to tests/artifacts/ (git-ignored), and
# copied by hand to docs/website.png, the README's, when the page changes.
SCREENSHOT = ARTIFACTS / "website.png"
SCREENSHOT_PAGE = "05_positional_encoding"
SEARCH_TERM, SEARCH_PAGE = "sinusoidal", "05_positional_encoding"
TIMEOUT_MS = 60_000
# What a click on a sidebar button may take to show its effect.
CLICK_MS = 10_000
VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
# axe-core from the npm registry: its 4.x, the impacts that fail a page.
AXE = "axe-core@4"
AXE_FAILS = ("serious", "critical")
# An alt text says what a figure shows: a few words, not a file name (MyST-NB's default).
ALT_WORDS = 4
IMAGE_FILE = re.compile(r"\.(?:png|jpe?g|gif|svg)$", re.IGNORECASE)
# The site leaves the test cells out: no sentence may point at them.
UNSHOWN_CELLS = re.compile(
    r"\btest cells?\b|\bcells? (?:below|above|after)\b[^.]{0,60}\btests?\b"
    r"|\btests? (?:below|above)\b|\bnext cell tests\b",
    re.IGNORECASE,
)
COLAB = re.compile(
    r"https://colab\.research\.google\.com/github/[\w.-]+/[\w.-]+/blob/[\w./-]+/"
    r"(?:notebooks|self_study)/(?P<a>[\w-]+)/(?P<b>[\w-]+)\.ipynb"
)
MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "HIDDEN TESTS")
# MathJax 2 adds hidden MathML for screen readers; its CSS names MathJax's TeX fonts, which
# jupyter-server-mathjax does not ship (the typeset math uses its STIX-Web fonts). Chromium
# asks for them for the hidden copy only: a 404 there changes nothing on screen.
HIDDEN_MATHML_FONTS = "/_static/mathjax/fonts/HTML-CSS/TeX/otf/"


def student_text() -> str:
    """Every student notebook's sources: what students get anyway. Notebook 10 restates
    04's attention in a demo, so a line may be one notebook's solution and another's demo."""
    return "\n".join(
        cell.source for notebook_id in IDS for cell in anatomy.read_released(notebook_id).cells
    )


def solution_lines(notebook_id: str) -> set[str]:
    """The lines of a notebook's reference solutions (stripped, longer than 20 characters)
    that no student notebook holds: none of them may appear on the site."""
    given = student_text()
    return {
        line.strip()
        for cell in anatomy.solution_cells(anatomy.read_solution(notebook_id))
        for line in cell.source.splitlines()
        if len(line.strip()) > 20 and line.strip() not in given
    }


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args) -> None:
        pass


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The site, built once from the checkout."""
    work = tmp_path_factory.mktemp("site")
    command = [sys.executable, "-m", "instructor.site", "--output", str(work / "out")]
    command += ["--workdir", str(work / "build")]
    built = subprocess.run(command, cwd=COURSE_ROOT, capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    return work / "out"


@pytest.fixture(scope="module")
def server(built):
    handler = functools.partial(QuietHandler, directory=str(built))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join()


@pytest.fixture(scope="module")
def browser():
    reason = browser_skip_reason()
    if reason:
        pytest.skip(f"browser test skipped: {reason}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class Visit:
    """A page opened with every request off the loopback server blocked and noted."""

    def __init__(self, browser, server: str, path: str, size: str = "desktop") -> None:
        self.outside: list[str] = []
        self.failed: list[str] = []
        self.page = browser.new_page(viewport=VIEWPORTS[size])
        self.page.set_default_timeout(TIMEOUT_MS)
        self.page.route("**/*", self._route(server))
        self.page.on(
            "response",
            lambda r: (
                self.failed.append(f"{r.status} {r.url}")
                if r.status >= 400 and HIDDEN_MATHML_FONTS not in r.url
                else None
            ),
        )
        self.page.goto(f"{server}/{path}", wait_until="load")

    def _route(self, server: str):
        def route(route) -> None:
            url = route.request.url
            if url.startswith(server + "/") or url.startswith("data:"):
                route.continue_()
            else:
                self.outside.append(url)
                route.abort()

        return route

    def typeset(self) -> None:
        """Wait until MathJax (2.7) has typeset the page."""
        self.page.wait_for_function("() => window.MathJax && window.MathJax.Hub")
        self.page.evaluate("() => new Promise(done => MathJax.Hub.Queue(() => done(true)))")

    def math(self) -> dict:
        """How the page's math came out: Sphinx's math elements, how many MathJax typeset,
        the TeX errors, and the paragraphs that still show TeX delimiters."""
        return self.page.evaluate(
            r"""() => {
              const math = [...document.querySelectorAll('article .math.nohighlight')];
              const typeset = math.filter(m => m.querySelector(
                'script[type^="math/tex"]') && m.querySelector('.MathJax, .MathJax_Display'));
              const raw = [];
              for (const p of document.querySelectorAll('article p, article li, article td')) {
                const copy = p.cloneNode(true);
                copy.querySelectorAll('code, pre, script').forEach(e => e.remove());
                const text = copy.textContent;
                if (/\\\(|\\\[|\$[^$\s][^$]*\$/.test(text)) raw.push(text.slice(0, 120));
              }
              return {
                count: math.length,
                typeset: typeset.length,
                errors: document.querySelectorAll('.MathJax .merror, .MathJax_Error').length,
                raw: raw,
              };
            }"""
        )

    def figures(self) -> int:
        return self.page.evaluate(
            """() => [...document.querySelectorAll('article img')].filter(
                 img => img.src.includes('/_images/') && img.complete && img.naturalWidth > 0
               ).length"""
        )

    def figure_alts(self) -> dict[str, str]:
        """Every figure's file name and its alt text."""
        return self.page.evaluate(
            """() => Object.fromEntries([...document.querySelectorAll('article img')]
                 .filter(img => img.src.includes('/_images/'))
                 .map(img => [img.src.split('/').pop(), img.getAttribute('alt') || '']))"""
        )

    def sideways(self) -> dict:
        """The page's width against the window's, and the elements that stick out (not
        counting those inside a box that scrolls by itself: code, tables, display math)."""
        return self.page.evaluate(
            """() => ({
              scroll: document.documentElement.scrollWidth,
              window: window.innerWidth,
              out: [...document.querySelectorAll('body *')]
                .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
                .filter(e => !e.closest('pre, table, .MathJax_Display, dialog, .bd-sidebar'))
                .slice(0, 5)
                .map(e => `${e.tagName.toLowerCase()}.${e.className}: `
                          + (e.textContent || '').trim().slice(0, 60)),
            })"""
        )

    def axe(self, script: str) -> list[str]:
        """axe-core's serious and critical violations: rule, impact, where."""
        self.page.add_script_tag(content=script)
        violations = self.page.evaluate("() => axe.run().then(r => r.violations)")
        return [
            f"{v['id']} ({v['impact']}): {v['help']}; at "
            + ", ".join(" ".join(node["target"]) for node in v["nodes"][:3])
            for v in violations
            if v["impact"] in AXE_FAILS
        ]

    def download_link(self) -> str:
        """The address the download button's ".ipynb" item points at (opened as a reader
        would: the button, then the item)."""
        self.page.locator(".dropdown-download-buttons > button").click()
        item = self.page.locator(".dropdown-download-buttons .btn-download-source-button")
        item.wait_for(state="visible")
        return item.evaluate("a => a.href")

    def colab_links(self) -> list[str]:
        return self.page.eval_on_selector_all(
            "a[href*='colab.research.google.com']", "links => links.map(a => a.href)"
        )

    def follow_link(self, href: str) -> str:
        """Click the page's link to ``href`` as a reader would; the address the browser then
        asks for, from this page or a tab it opens (the request goes nowhere: the test
        machines reach no site but this server)."""
        link = self.page.locator(f'a[href="{href}"]:visible').first
        link.scroll_into_view_if_needed()
        with self.page.context.expect_event(
            "request", predicate=lambda request: request.url.split("#")[0] == href
        ) as asked:
            link.click()
        return asked.value.url

    def text(self) -> str:
        return self.page.evaluate("() => document.body.innerText")

    def close(self) -> None:
        self.page.close()


def check_common(visit: Visit, *, leaked: set[str], axe: str | None) -> None:
    math = visit.math()
    assert math["count"] > 0, "no math on the page"
    assert math["typeset"] == math["count"], f"MathJax typeset {math['typeset']} of {math}"
    assert math["errors"] == 0, "MathJax reports TeX errors"
    assert not math["raw"], f"paragraphs with untypeset TeX: {math['raw']}"
    assert visit.figures() > 0, "no figure loaded"
    alts = visit.figure_alts()
    poor = {
        name: alt
        for name, alt in alts.items()
        if len(alt.split()) < ALT_WORDS or "_images/" in alt or IMAGE_FILE.search(alt)
    }
    assert not poor, (
        f"figures without an alt text that says what they show (the cell's metadata "
        f'{{"mystnb": {{"image": {{"alt": ...}}}}}} in solutions/): {poor}'
    )
    width = visit.sideways()
    assert width["scroll"] <= width["window"] + 1, f"the page scrolls sideways: {width}"
    text = visit.text()
    unshown = UNSHOWN_CELLS.findall(text)
    assert not unshown, f"the page speaks of cells it does not show: {unshown}"
    for marker in MARKERS:
        assert marker not in text
    shown = [line for line in leaked if line in text]
    assert not shown, f"lines of the reference solutions on the page: {shown[:5]}"
    assert not visit.outside, f"requests off the site (blocked): {visit.outside}"
    assert not visit.failed, f"requests that failed: {visit.failed}"
    if axe is not None:
        violations = visit.axe(axe)
        assert not violations, "axe-core: " + "\n".join(violations)


def axe_skip(axe: str | None, reason: str) -> None:
    """After a page's other checks: skip, saying why, where axe-core could not run."""
    if axe is None:
        pytest.skip(f"all other checks passed; axe-core not run: {reason}")


@pytest.fixture(scope="module")
def axe_core(request, tmp_path_factory) -> tuple[str | None, str]:
    """(axe-core's axe.min.js, "") from the npm registry, installed once into pytest's
    cache folder; (None, why) where npm or the registry is missing."""
    cache = getattr(request.config, "cache", None)
    folder = cache.mkdir("axe-core") if cache else tmp_path_factory.mktemp("axe-core")
    script = Path(folder) / "node_modules" / "axe-core" / "axe.min.js"
    if not script.exists():
        npm = shutil.which("npm")
        if npm is None:
            return None, "npm is missing (install Node.js)"
        command = [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", AXE]
        try:
            installed = subprocess.run(command, capture_output=True, text=True, timeout=180)
        except subprocess.TimeoutExpired:
            return None, f"`npm install {AXE}` took over 180 s (no registry?)"
        if installed.returncode != 0 or not script.exists():
            return None, f"`npm install {AXE}` failed: {installed.stderr.strip()[-300:]}"
    return script.read_text(encoding="utf-8"), ""


@pytest.fixture(scope="module")
def all_solution_lines() -> set[str]:
    return set().union(*(solution_lines(notebook_id) for notebook_id in IDS))


@pytest.mark.parametrize("size", VIEWPORTS)
def test_landing_page(browser, server, all_solution_lines, axe_core, size) -> None:
    axe, why = axe_core
    visit = Visit(browser, server, "index.html", size)
    try:
        visit.typeset()
        check_common(visit, leaked=all_solution_lines, axe=axe)
        text = visit.text()
        course = registry.load()
        for notebook in course.notebooks:
            assert notebook.title in text
            assert f"{notebook.minutes} min" in text
        # the times in the prose are the registry's too
        minutes = [notebook.minutes for notebook in course.notebooks]
        assert f"each take {min(minutes)} to {max(minutes)} minutes" in text
        assert f"About {sum(minutes)} minutes" in text
        assert "half an hour" not in text
        assert "make lab" in text and "docs/instructors.md" in text
        # the notebooks in the registry's order, each with its Colab link
        assert [text.index(n.title) for n in course.notebooks] == sorted(
            text.index(n.title) for n in course.notebooks
        )
        assert set(visit.colab_links()) >= {colab.landing_url(i) for i in IDS}
    except Exception:
        visit.page.screenshot(path=str(failure_shot(f"index_{size}")), full_page=True)
        raise
    finally:
        visit.close()
    axe_skip(axe, why)


@pytest.mark.parametrize("size", VIEWPORTS)
@pytest.mark.parametrize("notebook_id", IDS)
def test_notebook_page(browser, server, all_solution_lines, axe_core, notebook_id, size) -> None:
    axe, why = axe_core
    visit = Visit(browser, server, f"{notebook_id}/{notebook_id}.html", size)
    try:
        visit.typeset()
        check_common(visit, leaked=all_solution_lines, axe=axe)
        assert registry.load().notebook(notebook_id).title in visit.page.title()
        links = visit.colab_links()
        assert links, "no Colab link"
        for link in links:
            match = COLAB.fullmatch(link)
            assert match and match["a"] == match["b"] == notebook_id, link
        assert colab.landing_url(notebook_id) in links
        # the link opens a notebook of the checkout: the self-study edition while
        # course.toml's self_study is on, at the path the release publishes
        opened = colab_target(colab.landing_url(notebook_id))
        assert opened.is_file(), opened
        # the exercises are stubs
        assert "raise NotImplementedError()" in visit.text()
        # the download button gives the student notebook with its visible tests (the
        # class's edition), not the page's source (the student view without them)
        link = visit.download_link()
        assert link.startswith(server + "/"), link
        downloaded = visit.page.request.get(link)
        assert downloaded.ok, f"{downloaded.status} {link}"
        assert downloaded.body() == released_path(notebook_id).read_bytes(), (
            f"the download button ({link}) does not give notebooks/{notebook_id}/"
            f"{notebook_id}.ipynb"
        )
        if notebook_id == SCREENSHOT_PAGE and size == "desktop":
            save_screenshot(visit.page)
        # a reader's click on the badge asks Colab for that notebook (last: it leaves the page)
        assert visit.follow_link(colab.landing_url(notebook_id)) == colab.landing_url(notebook_id)
    except Exception:
        visit.page.screenshot(path=str(failure_shot(f"{notebook_id}_{size}")), full_page=True)
        raise
    finally:
        visit.close()
    axe_skip(axe, why)


NAVIGATION_PAGES = ["index.html", f"{IDS[1]}/{IDS[1]}.html"]


@pytest.mark.parametrize("size", VIEWPORTS)
@pytest.mark.parametrize("path", NAVIGATION_PAGES)
def test_the_sidebar_buttons_open_the_navigation(browser, server, path, size) -> None:
    """The buttons a reader sees at the top of the article: on a phone, the menu button
    opens a drawer with every notebook (a tap on one goes there) and the contents button
    one with the page's sections; on a desktop both sidebars show and the menu button
    hides and shows the site's navigation (pydata-sphinx-theme #2451, sphinx-book-theme
    #988: the themes' scripts wired up hidden copies of the buttons only)."""
    last = IDS[-1]
    visit = Visit(browser, server, path, size)
    page = visit.page
    try:
        menu = page.locator(".primary-toggle:visible")
        contents = page.locator(".secondary-toggle:visible")
        site_link = f"a[href$='{last}/{last}.html']"
        primary = page.locator(f"#pst-primary-sidebar {site_link}")
        if size == "phone":
            assert menu.count() == 1 and contents.count() == 1
            assert not primary.is_visible(), "the site's navigation shows before any tap"
            menu.click()
            drawer = page.locator("dialog#pst-primary-sidebar-modal[open]")
            drawer.wait_for(state="visible", timeout=CLICK_MS)
            drawer.locator(site_link).click()
            page.wait_for_url(f"**/{last}/{last}.html", timeout=CLICK_MS)
            page.goto(f"{server}/{path}", wait_until="load")
            page.locator(".secondary-toggle:visible").click()
            drawer = page.locator("dialog#pst-secondary-sidebar-modal[open]")
            drawer.wait_for(state="visible", timeout=CLICK_MS)
            sections = drawer.locator("a.nav-link")
            assert sections.count() > 0 and sections.first.is_visible()
            page.keyboard.press("Escape")
            drawer.wait_for(state="detached", timeout=CLICK_MS)
        else:
            assert menu.count() == 1 and contents.count() == 0
            assert primary.is_visible(), "no site navigation on the desktop"
            assert page.locator("#pst-secondary-sidebar a.nav-link").first.is_visible()
            menu.click()
            primary.wait_for(state="hidden", timeout=CLICK_MS)
            menu.click()
            primary.wait_for(state="visible", timeout=CLICK_MS)
        assert not visit.outside, f"requests off the site (blocked): {visit.outside}"
    except Exception:
        page.screenshot(path=str(failure_shot(f"navigation_{size}")), full_page=True)
        raise
    finally:
        visit.close()


def test_search_finds_a_term_of_notebook_05(browser, server) -> None:
    visit = Visit(browser, server, f"search.html?q={SEARCH_TERM}")
    try:
        visit.page.wait_for_selector("#search-results ul.search li a")
        hrefs = visit.page.eval_on_selector_all(
            "#search-results ul.search li a", "links => links.map(a => a.href)"
        )
        assert any(f"{SEARCH_PAGE}/{SEARCH_PAGE}.html" in href for href in hrefs), hrefs
        assert not visit.outside, f"requests off the site (blocked): {visit.outside}"
    except Exception:
        visit.page.screenshot(path=str(failure_shot("search")), full_page=True)
        raise
    finally:
        visit.close()


def test_no_file_of_the_site_holds_instructor_text(built) -> None:
    """Every text file of the site (HTML, the search index, the downloadable notebooks)."""
    suffixes = {".html", ".js", ".ipynb", ".txt", ".json", ".md"}
    files = [
        path
        for path in built.rglob("*")
        if path.suffix in suffixes and "mathjax" not in path.relative_to(built).parts[:2]
    ]
    assert files
    for path in files:
        text = path.read_text(errors="replace")
        for marker in MARKERS:
            assert marker not in text, f"{marker!r} in {path.relative_to(built)}"
    for notebook_id in IDS:
        notebook = json.loads(
            (built / "_sources" / notebook_id / f"{notebook_id}.ipynb").read_text()
        )
        sources = "\n".join("".join(cell["source"]) for cell in notebook["cells"])
        shown = [line for line in solution_lines(notebook_id) if line in sources]
        assert not shown, f"{notebook_id}: reference solution lines: {shown[:5]}"


def article_text(html: str) -> str:
    """The text of a built page's article (no tags, scripts or styles)."""
    article = re.search(r"<article.*?</article>", html, re.DOTALL)
    assert article, "no <article> on the page"
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", article.group(0), flags=re.DOTALL)
    return re.sub(r"\s+", " ", htmllib.unescape(re.sub(r"<[^>]+>", " ", body)))


@pytest.mark.parametrize("notebook_id", IDS)
def test_the_built_page_of(built, notebook_id) -> None:
    """Without a browser: the page's figures carry the alt texts of the notebook's cells,
    no sentence points at a test cell, and the download button's file is the student
    notebook (notebooks/<id>/<id>.ipynb), byte for byte."""
    html = (built / notebook_id / f"{notebook_id}.html").read_text(encoding="utf-8")
    alts = [
        htmllib.unescape(alt)
        for alt in re.findall(r'<img alt="([^"]*)"[^>]*src="\.\./_images/', html)
    ]
    expected = {
        cell.metadata.get("mystnb", {}).get("image", {}).get("alt")
        for cell in anatomy.read_solution(notebook_id).cells
        if any("image/png" in o.get("data", {}) for o in cell.get("outputs", []))
    }
    assert alts, "no figure on the page"
    assert len(alts) == html.count('src="../_images/'), "a figure without alt text"
    assert set(alts) <= expected - {None}, (
        f"figures whose alt text is not their cell's (mystnb.image.alt): "
        f"{sorted(set(alts) - expected)[:3]}"
    )
    assert not UNSHOWN_CELLS.findall(article_text(html))
    source = built / "_sources" / notebook_id / f"{notebook_id}.ipynb"
    assert f"../_sources/{notebook_id}/{notebook_id}.ipynb" in html
    assert source.read_bytes() == released_path(notebook_id).read_bytes()


def test_every_slider_shows_its_static_figure_once() -> None:
    """A slider's output (helpers.plotting.interactive_figure) carries the static figure and
    the widget's view; the site has no kernel, so its page shows the figure, once, and no
    widget view (no browser needed)."""
    from instructor import site

    sliders = 0
    for notebook_id in IDS:
        solution = anatomy.read_solution(notebook_id)
        view = site.student_view(solution, anatomy.read_released(notebook_id))
        shown = {cell.id: cell for cell in view.cells}
        for cell in solution.cells:
            outputs = cell.get("outputs", [])
            if not any(site.WIDGET_VIEW in o.get("data", {}) for o in outputs):
                continue
            if not any("image/png" in o.get("data", {}) for o in outputs):
                continue  # a progress bar
            sliders += 1
            page = shown[cell.id].outputs
            images = [o for o in page if "image/png" in o.get("data", {})]
            views = [o for o in page if site.WIDGET_VIEW in o.get("data", {})]
            assert len(images) == 1 and not views, (
                f"{notebook_id}, cell {cell.id}: the page shows {len(images)} figures and "
                f"{len(views)} widget views; a slider shows its static figure once"
            )
    assert sliders >= 4, f"{sliders} sliders found in the notebooks, at least 4 expected"


@pytest.mark.parametrize("template", ["lab", "classic"])
def test_every_slider_shows_one_figure_in_static_html(template: str) -> None:
    """Outside a live front end (nbconvert's HTML, as GitHub and nbviewer show a notebook
    from its stored outputs, without widget state): each slider's cell shows one image."""
    import nbformat
    from nbconvert import HTMLExporter

    from instructor import site

    exporter = HTMLExporter(template_name=template)
    sliders = 0
    for notebook_id in IDS:
        solution = anatomy.read_solution(notebook_id)
        for cell in solution.cells:
            outputs = cell.get("outputs", [])
            if not any(
                site.WIDGET_VIEW in o.get("data", {}) and "image/png" in o.get("data", {})
                for o in outputs
            ):
                continue
            sliders += 1
            alone = nbformat.v4.new_notebook(metadata=solution.metadata, cells=[cell])
            body, _ = exporter.from_notebook_node(alone)
            images = body.count("<img")
            assert images == 1, (
                f"{notebook_id}, cell {cell.id}: nbconvert's {template} HTML shows {images} "
                "figures; a slider's cell shows one"
            )
    assert sliders >= 4, f"{sliders} sliders found in the notebooks, at least 4 expected"


def save_screenshot(page) -> None:
    """Notebook 05's first exercise: its prose and math, the exercise as a stub, and the
    figure of the solution's stored output."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size({"width": 1280, "height": 1350})
    page.locator("article h3", has_text="Exercise 1").first.evaluate(
        "h => window.scrollTo(0, h.getBoundingClientRect().top + window.scrollY - 70)"
    )
    page.wait_for_timeout(300)
    page.screenshot(path=str(SCREENSHOT))


def failure_shot(name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / f"site_failed_{name}.png"
