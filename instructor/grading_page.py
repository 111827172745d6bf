"""The grading page: one written question across the class, one answer at a time, with the
keyboard (issue 47). A Jupyter server extension of the instructor package, over
:class:`instructor.question_grading.QuestionGrading`.

Enable it in the instructor's server (``make lab`` in ``autograder/``, or the hub's
instructor configuration)::

    c.ServerApp.jpserver_extensions = {"instructor.grading_page": True}
    c.RubricGradingPage.course_root = "/path/to/autograder"   # default: the course's
    c.RubricGradingPage.hide_names = True                      # anonymised ids (default)

and open ``<server>/rubric-grading``: the list of written questions with how many answers
are graded and how many wait; a question's page shows one answer at a time (the student's
text rendered through the course's sanitiser: markdown and math, nothing that runs; what is
not plain is shown as text), the reference answer and the rubric items. Keys 1 to 9 apply
or remove items, ``Enter`` saves and opens the next answer that waits (``Ctrl+Enter`` from
the comment box), ``n`` opens the next without saving, a counter says how many are left; the
order is the stable shuffled order of :meth:`QuestionGrading.answers`, and an answer given to
one grader is not given to another for :data:`LEASE_SECONDS` (unless no other waits). A
save on an answer another grader saved since it was opened is refused (HTTP 409) and the
answer is shown again, with who saved it.

Who may use it: on a JupyterHub, a user in the hub group ``formgrade-<course id>``
(``group``; the user's groups come from the hub with the user's identity); every other user
(a student) gets 403 from the pages and the API. Without a hub, the server's own user.
Every page carries a Content-Security-Policy that runs no script but the page's own (a
nonce) and the server's MathJax.
"""

from __future__ import annotations

import asyncio
import html
import json
import secrets
import time
from pathlib import Path
from typing import Any

from jupyter_server.base.handlers import APIHandler, JupyterHandler
from jupyter_server.utils import url_path_join
from tornado import web
from traitlets import Bool, Unicode
from traitlets.config import Configurable

from instructor.feedback import SHOWN_AS_TEXT, clean_html, markdown_is_plain
from instructor.question_grading import WAITING, Answer, Conflict, GradingError, QuestionGrading

__all__ = ["RubricGradingPage", "render_answer"]

PATH = "rubric-grading"
LEASE_SECONDS = 600
"""How long an answer given to one grader is not given to another (unless none else waits)."""


class RubricGradingPage(Configurable):
    """The grading page's settings (``c.RubricGradingPage.<name>``)."""

    course_root = Unicode("", help="the nbgrader course root (default: autograder/)").tag(
        config=True
    )
    db_url = Unicode("", help="the gradebook's SQLAlchemy URL (default: the course's)").tag(
        config=True
    )
    hide_names = Bool(True, help="show anonymised ids instead of student ids").tag(config=True)
    group = Unicode(
        "", help="the hub group that may grade (default: formgrade-<nbgrader course_id>)"
    ).tag(config=True)

    _grading: QuestionGrading | None = None
    opened: dict[tuple[str, str, str], tuple[str, float]]
    """(assignment, question, student) -> who was last given the answer to grade, and when."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.opened = {}

    @property
    def grading(self) -> QuestionGrading:
        if self._grading is None:
            from instructor.paths import AUTOGRADER

            root = Path(self.course_root) if self.course_root else AUTOGRADER
            self._grading = QuestionGrading(root, db_url=self.db_url or None)
        return self._grading

    def grader_group(self) -> str:
        """The hub group whose members may grade."""
        return self.group or f"formgrade-{self.grading.coursedir.course_id}"


def render_answer(text: str | None) -> str:
    """A student's answer as HTML for the page: plain markdown rendered (nbconvert's
    renderer, then ammonia: formatting only), anything else as its text."""
    if text is None:
        return "<p><em>No autograded notebook holds this answer: run the grader.</em></p>"
    if markdown_is_plain(text):
        from nbconvert.filters.markdown_mistune import markdown2html_mistune

        return clean_html(markdown2html_mistune(text))
    note = SHOWN_AS_TEXT.strip("*")
    return f'<p class="as-text"><em>{html.escape(note)}</em></p><pre>{html.escape(text)}</pre>'


class _Grader:
    """What every handler does first: the page's settings, and who asks."""

    page: RubricGradingPage

    def initialize(self, page: RubricGradingPage) -> None:
        self.page = page

    def grader(self: Any) -> str:
        user = self.current_user
        if not user:
            raise web.HTTPError(403, "log in first")
        group = self.page.grader_group()
        hub_user = getattr(user, "hub_user", None)
        if hub_user is not None and group not in (hub_user.get("groups") or []):
            raise web.HTTPError(403, f"only the hub group {group} may grade")
        return user.username


class _Page(_Grader, JupyterHandler):
    _nonce = ""

    @property
    def content_security_policy(self) -> str:
        if not self._nonce:
            self._nonce = secrets.token_urlsafe(16)
        return "; ".join(
            [
                super().content_security_policy,
                f"script-src 'self' 'nonce-{self._nonce}'",
                "object-src 'none'",
                "base-uri 'none'",
                "form-action 'self'",
            ]
        )

    def page_html(self, title: str, body: str, script: str = "") -> str:
        self.content_security_policy  # noqa: B018 - makes the nonce
        mathjax = url_path_join(self.base_url, "static/jupyter_server_mathjax/MathJax.js")
        return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{CSS}</style>
<script nonce="{self._nonce}" src="{mathjax}?config=TeX-AMS_HTML-full,Safe"></script>
</head><body>{body}
<script nonce="{self._nonce}">{script}</script></body></html>"""


class ListHandler(_Page):
    """The written questions, with how many answers are graded and how many wait."""

    @web.authenticated
    async def get(self) -> None:
        self.grader()
        questions = await asyncio.to_thread(self.page.grading.questions)
        rows = "".join(
            f'<tr><td><a href="{html.escape(self._link(q.assignment, q.question))}">'
            f"{html.escape(q.question)}</a></td><td>{html.escape(q.assignment)}</td>"
            f"<td>{q.points:g}</td><td>{q.graded}</td><td>{q.waiting}</td>"
            f"<td>{q.unanswered}</td></tr>"
            for q in questions
        )
        body = (
            "<h1>Written answers</h1><table><tr><th>question</th><th>assignment</th>"
            "<th>points</th><th>graded</th><th>waiting</th><th>unanswered</th></tr>"
            f"{rows}</table>"
        )
        self.finish(self.page_html("Written answers", body))

    def _link(self, assignment: str, question: str) -> str:
        return url_path_join(self.base_url, PATH, "q", assignment, question)


class QuestionHandler(_Page):
    """One question's page: the answers one at a time (the script fetches them)."""

    @web.authenticated
    async def get(self, assignment: str, question: str) -> None:
        self.grader()
        grading = self.page.grading
        try:
            _, rubric = await asyncio.to_thread(grading.find_question, assignment, question)
        except GradingError as error:
            raise web.HTTPError(404, str(error)) from None
        from nbconvert.filters.markdown_mistune import markdown2html_mistune

        items = "".join(
            f'<li data-item="{html.escape(item.id)}"><kbd>{n}</kbd> '
            f"<b>{html.escape(item.label)}</b> ({item.points:+g}) "
            f'<span class="criterion">{html.escape(item.criterion)}</span></li>'
            for n, item in enumerate(rubric.items, start=1)
        )
        home = html.escape(url_path_join(self.base_url, PATH))
        reference = clean_html(markdown2html_mistune(rubric.reference))
        plan = await asyncio.to_thread(grading.plan_regrade, assignment, question)
        regrade = (
            f'<p id="regrade" class="regrade">{_plan_text(plan)} <button id="regrade-button" '
            f'data-count="{len(plan)}">Regrade them</button></p>'
            if plan
            else ""
        )
        body = f"""<p><a href="{home}">All questions</a></p>
<h1>{html.escape(question)} <small>{html.escape(assignment)}, {rubric.points:g} points</small></h1>
{regrade}<p id="counter" aria-live="polite"></p><p id="message" role="alert"></p>
<div class="columns"><section><h2>Answer <span id="who"></span></h2>
<div id="answer" class="answer"></div></section>
<section><h2>Rubric</h2><ol id="items" class="items">{items}</ol>
<p><label>Adjustment <input id="adjustment" type="number" step="0.25" value="0"></label>
Score: <b id="score"></b> / {rubric.points:g}</p>
<p><label>Comment<br><textarea id="comment" rows="3" cols="50"></textarea></label></p>
<p><button id="save">Save and next (Enter)</button> Keys: 1 to 9 apply an item, n skips
to the next answer without saving.</p>
<details><summary>Reference answer</summary>{reference}</details>
</section></div>"""
        config = {
            "api": url_path_join(self.base_url, PATH, "api", assignment, question),
            "xsrf": self.xsrf_token.decode() if isinstance(self.xsrf_token, bytes) else "",
            "points": rubric.points,
            "items": [[item.id, item.points] for item in rubric.items],
        }
        script = f"const CONFIG = {json.dumps(config)};\n{SCRIPT}"
        self.finish(self.page_html(f"Grading {question}", body, script.replace("</", "<\\/")))


class _Api(_Grader, APIHandler):
    def answer_json(self, answer: Answer, answers: list[Answer]) -> dict[str, Any]:
        waiting = sum(a.state == WAITING for a in answers)
        return {
            "answer_id": answer.anonymous_id,
            "student": None if self.page.hide_names else answer.key.student,
            "html": render_answer(answer.text),
            "state": answer.state,
            "score": answer.score,
            "items": list(answer.items),
            "adjustment": answer.adjustment,
            "comment": answer.comment,
            "grader": answer.grader,
            "saved_at": answer.saved_at,
            "etag": answer.etag,
            "left": waiting,
            "answered": sum(a.state != "unanswered" for a in answers),
        }

    async def answers(self, assignment: str, question: str) -> list[Answer]:
        try:
            return await asyncio.to_thread(self.page.grading.answers, assignment, question)
        except GradingError as error:
            raise web.HTTPError(404, str(error)) from None

    @staticmethod
    def find(answers: list[Answer], answer_id: str) -> Answer:
        for answer in answers:
            if answer.anonymous_id == answer_id:
                return answer
        raise web.HTTPError(404, f"no answer {answer_id}")

    def next_after(self, answers: list[Answer], after: str | None, grader: str) -> dict[str, Any]:
        """The next answer that waits after ``after``, in the page's order, skipping those
        another grader was given in the last :data:`LEASE_SECONDS` (unless only those are
        left), so that graders of one question do not all open the same answer."""
        start = next((i + 1 for i, a in enumerate(answers) if a.anonymous_id == after), 0)
        waiting = [a for a in answers[start:] + answers[:start] if a.state == WAITING]
        if not waiting:
            left = sum(a.state != "unanswered" for a in answers)
            return {"done": True, "left": 0, "answered": left}
        now = time.monotonic()

        def taken(answer: Answer) -> bool:
            who, when = self.page.opened.get(_key(answer), (grader, 0.0))
            return who != grader and now - when < LEASE_SECONDS

        chosen = next((a for a in waiting if not taken(a)), waiting[0])
        self.page.opened[_key(chosen)] = (grader, now)
        return self.answer_json(chosen, answers)


def _key(answer: Answer) -> tuple[str, str, str]:
    return (answer.key.assignment, answer.key.question, answer.key.student)


class NextHandler(_Api):
    """``GET .../next?after=<answer_id>``: the next answer that waits, in the page's order."""

    @web.authenticated
    async def get(self, assignment: str, question: str) -> None:
        grader = self.grader()
        answers = await self.answers(assignment, question)
        after = self.get_argument("after", None)
        self.finish(json.dumps(self.next_after(answers, after, grader)))


class AnswerHandler(_Api):
    """``GET``: one answer; ``POST`` {items, adjustment, comment, etag}: save it (409 where it
    changed since it was read), and the next answer that waits."""

    @web.authenticated
    async def get(self, assignment: str, question: str, answer_id: str) -> None:
        self.grader()
        answers = await self.answers(assignment, question)
        self.finish(json.dumps(self.answer_json(self.find(answers, answer_id), answers)))

    @web.authenticated
    async def post(self, assignment: str, question: str, answer_id: str) -> None:
        grader = self.grader()
        answers = await self.answers(assignment, question)
        answer = self.find(answers, answer_id)
        try:
            body = json.loads(self.request.body or b"{}")
            items = body.get("items", [])
            if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                raise GradingError("items is a list of item ids")
            saved = await asyncio.to_thread(
                self.page.grading.save,
                assignment,
                question,
                answer.key.student,
                items=items,
                adjustment=float(body.get("adjustment") or 0),
                comment=str(body.get("comment") or ""),
                etag=str(body.get("etag", "")),
                grader=grader,
            )
        except Conflict as error:
            self.set_status(409)
            self.finish(json.dumps({"message": str(error)}))
            return
        except (GradingError, ValueError, TypeError) as error:
            raise web.HTTPError(400, str(error)) from None
        answers = await self.answers(assignment, question)
        self.finish(
            json.dumps(
                {
                    "saved": self.answer_json(saved, answers),
                    "next": self.next_after(answers, answer_id, grader),
                }
            )
        )


class RegradeHandler(_Api):
    """``POST`` {count}: regrade the answers a changed rubric item was applied to, if they
    are still the ``count`` the page showed (409 otherwise: nothing written)."""

    @web.authenticated
    async def post(self, assignment: str, question: str) -> None:
        grader = self.grader()
        grading = self.page.grading
        try:
            count = int(json.loads(self.request.body or b"{}").get("count", -1))
            plan = await asyncio.to_thread(grading.plan_regrade, assignment, question)
            if len(plan) != count:
                self.set_status(409)
                self.finish(json.dumps({"message": f"{_plan_text(plan)}: look again"}))
                return
            await asyncio.to_thread(grading.regrade, plan, grader)
        except Conflict as error:
            self.set_status(409)
            self.finish(json.dumps({"message": str(error)}))
            return
        except (GradingError, ValueError, TypeError, AttributeError) as error:
            raise web.HTTPError(400, str(error)) from None
        changed = [
            {"answer_id": c.answer.anonymous_id, "old": c.answer.score, "new": c.new_score}
            for c in plan
            if c.score_changed
        ]
        message = f"{len(plan)} answer(s) regraded; {len(changed)} score(s) changed"
        self.finish(json.dumps({"message": message, "changed": changed}))


def _plan_text(plan: list[Any]) -> str:
    changed = sum(change.score_changed for change in plan)
    return (
        f"{len(plan)} answer(s) use a rubric item whose points or note changed since they were "
        f"graded; {changed} score(s) would change"
    )


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "instructor.grading_page"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    page = RubricGradingPage(parent=serverapp)
    base = url_path_join(serverapp.web_app.settings["base_url"], PATH)
    part = "([^/]+)"
    handlers = [
        (base + "/?", ListHandler),
        (url_path_join(base, "q", part, part) + "/?", QuestionHandler),
        (url_path_join(base, "api", part, part, "next"), NextHandler),
        (url_path_join(base, "api", part, part, "answers", part), AnswerHandler),
        (url_path_join(base, "api", part, part, "regrade"), RegradeHandler),
    ]
    serverapp.web_app.add_handlers(".*$", [(p, h, {"page": page}) for p, h in handlers])
    serverapp.log.info("Grading by question at %s", base)


CSS = """
body { font-family: sans-serif; margin: 1.5em; max-width: 80em; }
table { border-collapse: collapse; } td, th { border: 1px solid #ccc; padding: 0.3em 0.6em; }
.columns { display: flex; gap: 2em; } .columns section { flex: 1; }
.answer { border: 1px solid #ccc; padding: 0.5em 1em; min-height: 6em; }
.answer pre { white-space: pre-wrap; }
.items li { margin: 0.4em 0; padding: 0.2em; cursor: pointer; }
.items li.on { background: #dfd; } .criterion { color: #555; font-size: 0.9em; }
#message { color: #a00; } .regrade { background: #ffd; padding: 0.5em; }
"""

SCRIPT = r"""
let current = null;
const $ = (id) => document.getElementById(id);
const applied = new Set();
function score() {
  let total = Number($("adjustment").value) || 0;
  for (const [id, points] of CONFIG.items) if (applied.has(id)) total += points;
  return Math.round(Math.min(Math.max(total, 0), CONFIG.points) * 100) / 100;
}
function draw() {
  for (const li of $("items").children) li.classList.toggle("on", applied.has(li.dataset.item));
  $("score").textContent = score();
}
function show(data) {
  $("counter").textContent = `${data.left} of ${data.answered} left`;
  if (data.done) {
    current = null;
    $("answer").textContent = "Every answer is graded.";
    $("who").textContent = "";
    return;
  }
  current = data;
  $("answer").innerHTML = data.html;  // sanitised by the server (instructor.feedback)
  $("who").textContent = (data.student || data.answer_id)
    + (data.grader ? ` (graded by ${data.grader})` : "");
  applied.clear();
  for (const id of data.items) applied.add(id);
  $("adjustment").value = data.adjustment || 0;
  $("comment").value = data.comment || "";
  draw();
  if (window.MathJax && MathJax.Hub) MathJax.Hub.Queue(["Typeset", MathJax.Hub, $("answer")]);
}
async function call(url, options) {
  const response = await fetch(url, {credentials: "same-origin", ...options,
    headers: {"X-XSRFToken": CONFIG.xsrf, "Content-Type": "application/json"}});
  return [response.status, await response.json()];
}
async function next(after) {
  const [status, data] = await call(`${CONFIG.api}/next` + (after ? `?after=${after}` : ""));
  if (status === 200) show(data); else $("message").textContent = data.message;
}
async function save() {
  if (!current) return;
  const body = JSON.stringify({items: [...applied], adjustment: Number($("adjustment").value) || 0,
    comment: $("comment").value, etag: current.etag});
  const [status, data] = await call(`${CONFIG.api}/answers/${current.answer_id}`,
    {method: "POST", body});
  if (status === 200) { $("message").textContent = ""; show(data.next); return; }
  $("message").textContent = data.message || `error ${status}`;
  if (status === 409) {
    const [again, fresh] = await call(`${CONFIG.api}/answers/${current.answer_id}`);
    if (again === 200) show(fresh);
  }
}
document.addEventListener("keydown", (event) => {
  const typing = ["TEXTAREA", "INPUT"].includes(event.target.tagName);
  if (event.key === "Enter" && (!typing || event.ctrlKey || event.target.id === "adjustment")) {
    event.preventDefault();
    save();
  } else if (!typing && event.key === "n") {
    next(current ? current.answer_id : null);
  } else if (!typing && /^[1-9]$/.test(event.key)) {
    const item = CONFIG.items[Number(event.key) - 1];
    if (item) { applied.has(item[0]) ? applied.delete(item[0]) : applied.add(item[0]); draw(); }
  }
});
for (const li of $("items").children) li.addEventListener("click", () => {
  const id = li.dataset.item;
  applied.has(id) ? applied.delete(id) : applied.add(id);
  draw();
});
$("adjustment").addEventListener("input", draw);
$("save").addEventListener("click", save);
const regrade = $("regrade-button");
if (regrade) regrade.addEventListener("click", async () => {
  const count = Number(regrade.dataset.count);
  if (!confirm(`Regrade ${count} answer(s) with the rubric as it is now?`)) return;
  const [status, data] = await call(`${CONFIG.api}/regrade`,
    {method: "POST", body: JSON.stringify({count})});
  $("regrade").textContent = data.message || `error ${status}`;
});
next(null);
"""
