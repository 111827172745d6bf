"""The hub's hand-in service: a submission fixed when it is made (issue 43).

nbgrader's shared-folder exchange makes each submission a folder in ``inbound/`` that the
student owns and may rewrite: the folder's name (student, time), ``timestamp.txt`` and the
files are all the student's to change after the due date. On the course's hub, ``nbgrader
submit`` (and the Assignments tab's Submit button) instead sends the files to this
JupyterHub service (:class:`instructor.exchange.HubSubmit`), which

- identifies the student by the JupyterHub token of the request (their server's own, or
  one the hub issued them), never by a name the request carries, and takes only members of
  the course's students' group (``nbgrader-<course>``);
- stamps the hand-in with its own clock (UTC, nbgrader's format): a time the student
  writes is never read (a ``timestamp.txt`` they send is dropped);
- writes the files, its ``timestamp.txt`` and a new ``submission_secret.txt`` into a folder
  of its store (``<store>/<course>/inbound/<student>+<assignment>+<time>+<random>``,
  nbgrader's own layout), first under a hidden name and then renamed, so a collect sees
  whole hand-ins only. The service runs as the instructor's system user; the store is the
  instructor's, ``rwx------``: no student can list, write or rename anything there;
- bounds what it keeps (:class:`Quota`): bytes per file and per hand-in, names per hand-in,
  hand-ins per student and assignment, and bytes per student in all.

``instructor.exchange.HubCollect`` collects from the store. ``instructor.hub`` starts this
service (``c.JupyterHub.services``) where ``HubSettings.handin_service`` is on (the default).
"""

from __future__ import annotations

import argparse
import base64
import binascii
import json
import os
import re
import secrets
import shutil
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

__all__ = [
    "ASSIGNMENT_ID",
    "SERVICE_NAME",
    "TIME_FORMAT",
    "HandInError",
    "Quota",
    "main",
    "make_app",
    "store_hand_in",
    "usage",
]

SERVICE_NAME = "handin"
"""The service's name on the hub (``/services/handin/``)."""
TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f %Z"
"""nbgrader's ``Exchange.timestamp_format``: what its collect and ``timestamp.txt`` parse."""
ASSIGNMENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
SERVER_FILES = frozenset({"timestamp.txt", "submission_secret.txt"})
"""Written by the service in every hand-in; the student's own of these names are dropped."""


class HandInError(Exception):
    """A hand-in the service refuses: ``status`` is the HTTP status, the message says why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Quota:
    """What the service keeps of one student. Per hand-in: bytes per file and in all
    (nbgrader's ``max_file_size`` and ``max_dir_size``, which ``nbgrader submit`` applies
    first) and names; per student: hand-ins of one assignment, and bytes of all their
    hand-ins together."""

    file_bytes: int = 5_000_000
    hand_in_bytes: int = 5_000_000
    files: int = 1000
    hand_ins: int = 50
    student_bytes: int = 100_000_000

    @property
    def body_bytes(self) -> int:
        """The largest request body worth reading: base64 of a full hand-in, with room."""
        return self.hand_in_bytes * 4 // 3 + 64 * self.files + (1 << 20)


def _clean_path(path: Any) -> PurePosixPath:
    """A relative path of plain names, or :class:`HandInError`."""
    if not isinstance(path, str) or not path or len(path) > 1000:
        raise HandInError(400, f"bad file path {path!r}")
    parts = path.split("/")
    for part in parts:
        if part in ("", ".", "..") or len(part.encode()) > 255:
            raise HandInError(400, f"bad file path {path!r}")
        if any(ord(ch) < 32 or ch == "\x7f" for ch in part):
            raise HandInError(400, f"bad file path {path!r}")
    if len(parts) > 16:
        raise HandInError(400, f"{path!r} is more than 16 folders deep")
    return PurePosixPath(*parts)


def decode_files(files: Any, quota: Quota) -> dict[PurePosixPath, bytes]:
    """The request's ``[{"path": ..., "content": base64}, ...]``, checked against ``quota``;
    the service's own files (:data:`SERVER_FILES`) at the top dropped."""
    if not isinstance(files, list):
        raise HandInError(400, "files must be a list")
    if len(files) > quota.files:
        raise HandInError(413, f"a hand-in may hold at most {quota.files} files")
    decoded: dict[PurePosixPath, bytes] = {}
    total = 0
    for entry in files:
        if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
            raise HandInError(400, "each file must be {path, content}")
        path = _clean_path(entry.get("path"))
        try:
            content = base64.b64decode(entry["content"], validate=True)
        except (binascii.Error, ValueError):
            raise HandInError(400, f"{path} is not base64") from None
        if len(content) > quota.file_bytes:
            raise HandInError(413, f"{path} is over {quota.file_bytes:,} bytes")
        total += len(content)
        if total > quota.hand_in_bytes:
            raise HandInError(413, f"the hand-in is over {quota.hand_in_bytes:,} bytes")
        if path in decoded or any(parent in decoded for parent in path.parents):
            raise HandInError(400, f"{path} is given twice")
        if str(path) in SERVER_FILES:
            continue
        decoded[path] = content
    return decoded


def _folder_bytes(folder: Path) -> int:
    total = 0
    for dirpath, _, filenames in os.walk(folder):
        for name in filenames:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


def usage(inbound: Path, student: str, assignment: str) -> tuple[int, int]:
    """``student``'s hand-ins of ``assignment`` in ``inbound``, and the bytes of all of
    theirs."""
    count = total = 0
    try:
        names = os.listdir(inbound)
    except FileNotFoundError:
        return 0, 0
    for name in names:
        parts = name.split("+")
        if len(parts) < 3 or parts[0] != student:
            continue
        if parts[1] == assignment:
            count += 1
        total += _folder_bytes(inbound / name)
    return count, total


def store_hand_in(
    inbound: Path,
    student: str,
    assignment: str,
    files: Any,
    quota: Quota,
    now: datetime | None = None,
) -> dict[str, str]:
    """Keep one hand-in of ``student`` in ``inbound``; what the client needs back.

    The time is the service's (``now``, or the clock); the folder is written under a
    hidden name, then renamed to ``<student>+<assignment>+<time>+<random>``.

    Raises:
        HandInError: refused (bad request, or over the quota); nothing is kept.
    """
    if not ASSIGNMENT_ID.match(assignment):
        raise HandInError(400, f"bad assignment id {assignment!r}")
    decoded = decode_files(files, quota)
    inbound.mkdir(parents=True, exist_ok=True, mode=0o700)
    count, total = usage(inbound, student, assignment)
    if count >= quota.hand_ins:
        raise HandInError(
            429,
            f"{student} has handed in {assignment} {count} times, the most this course "
            "keeps: ask your instructor",
        )
    size = sum(len(content) for content in decoded.values())
    if total + size > quota.student_bytes:
        raise HandInError(
            413,
            f"{student}'s hand-ins would take {total + size:,} bytes, over the "
            f"{quota.student_bytes:,} this course keeps per student: ask your instructor",
        )
    moment = (now or datetime.now(UTC)).astimezone(UTC)
    timestamp = moment.strftime(TIME_FORMAT)
    secret = secrets.token_hex(64)
    random = base64.urlsafe_b64encode(os.urandom(9)).decode("ascii")
    name = f"{student}+{assignment}+{timestamp}+{random}"
    partial = inbound / f".partial-{random}"
    partial.mkdir(mode=0o700)
    try:
        for path, content in {
            **decoded,
            PurePosixPath("timestamp.txt"): timestamp.encode(),
            PurePosixPath("submission_secret.txt"): secret.encode(),
        }.items():
            target = partial.joinpath(*path.parts)
            try:
                target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            except (FileExistsError, NotADirectoryError, IsADirectoryError):
                raise HandInError(400, f"{path} is both a file and a folder") from None
            with os.fdopen(fd, "wb") as out:
                out.write(content)
        os.rename(partial, inbound / name)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return {"student": student, "assignment": assignment, "timestamp": timestamp, "secret": secret}


# ------------------------------------------------------------------------------ service
def make_app(course: str, store: Path, exchange: Path, quota: Quota, prefix: str) -> Any:
    """The tornado application of the service (its API under ``prefix``)."""
    from jupyterhub.services.auth import HubAuthenticated
    from tornado import web

    group = f"nbgrader-{course}"
    inbound = store / course / "inbound"

    class SubmitHandler(HubAuthenticated, web.RequestHandler):
        """``POST {prefix}submit``: ``{"course", "assignment", "files"}`` with the header
        ``Authorization: token <the student's JupyterHub token>``."""

        def check_xsrf_cookie(self) -> None:
            return  # a token in a header, never a cookie: no cross-site request can send it

        def write_error(self, status_code: int, **kwargs: Any) -> None:
            self.finish({"message": self._reason})

        def refuse(self, status: int, message: str) -> None:
            self.set_status(status)
            self.finish({"message": message})

        def post(self) -> None:
            user = self.get_current_user()
            if not user or user.get("kind", "user") != "user":
                return self.refuse(403, "no JupyterHub user: send the user's own token")
            groups = user.get("groups")
            if groups is None:
                return self.refuse(403, "the token may not read its user's groups")
            if group not in groups:
                return self.refuse(403, f"{user['name']} is not a student of {course}")
            try:
                body = json.loads(self.request.body)
            except ValueError:
                return self.refuse(400, "the body is not JSON")
            if not isinstance(body, dict) or body.get("course") != course:
                return self.refuse(404, f"this service takes hand-ins of {course} only")
            assignment = body.get("assignment")
            if not isinstance(assignment, str) or not ASSIGNMENT_ID.match(assignment):
                return self.refuse(400, f"bad assignment id {assignment!r}")
            if not (exchange / course / "outbound" / assignment).is_dir():
                return self.refuse(404, f"{assignment} is not released")
            try:
                kept = store_hand_in(inbound, user["name"], assignment, body.get("files"), quota)
            except HandInError as error:
                self.log_refusal(user["name"], assignment, error)
                return self.refuse(error.status, str(error))
            print(
                f"[handin] kept {kept['student']} {assignment} at {kept['timestamp']}", flush=True
            )
            self.finish(kept)

        def log_refusal(self, student: str, assignment: str, error: HandInError) -> None:
            print(f"[handin] refused {student} {assignment}: {error}", flush=True)

    return web.Application(
        [(prefix.rstrip("/") + "/submit", SubmitHandler)],
        xsrf_cookies=False,
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m instructor.handin", description=__doc__)
    parser.add_argument("--course", required=True)
    parser.add_argument("--store", type=Path, required=True, help="the instructor's store")
    parser.add_argument("--exchange", type=Path, required=True, help="nbgrader's exchange root")
    for name, value in vars(Quota()).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=int, default=value)
    args = parser.parse_args(argv)
    quota = Quota(**{name: getattr(args, name) for name in vars(Quota())})
    args.store.mkdir(parents=True, exist_ok=True)
    os.chmod(args.store, stat.S_IRWXU)  # the instructor's alone
    from urllib.parse import urlparse

    from tornado.httpserver import HTTPServer
    from tornado.ioloop import IOLoop

    url = urlparse(os.environ["JUPYTERHUB_SERVICE_URL"])
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", f"/services/{SERVICE_NAME}/")
    app = make_app(args.course, args.store, args.exchange, quota, prefix)
    server = HTTPServer(app, max_body_size=quota.body_bytes)
    server.listen(url.port or 80, url.hostname or "127.0.0.1")
    print(f"[handin] {args.course}: hand-ins kept in {args.store}, {quota}", flush=True)
    IOLoop.current().start()


if __name__ == "__main__":
    main()
