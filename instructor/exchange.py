"""nbgrader's exchange with two checks more: student ids of one shape, and a submission
collected only from its owner.

nbgrader's exchange inbound folder is writable by every student, and ``collect`` reads the
student id from each file name there (``<id>+<assignment>+<time>+<random>``): a name
``..+01_vector_sets+...`` is collected into ``submitted/../01_vector_sets``, and with
``--update`` nbgrader first removes whatever is there; an id ``*`` later reaches every
student through nbgrader's globs. :class:`CheckedCollect` is nbgrader's own
``ExchangeCollect`` with each submission's id checked first (:mod:`instructor.student_ids`):
a refused one is logged with why, and not collected. ``autograder/nbgrader_config.py`` makes
it the collect step::

    c.ExchangeFactory.collect = "instructor.exchange.CheckedCollect"

nbgrader's default exchange trusts the name of a submission's folder in ``inbound/``
(``<student>+<assignment>+<timestamp>+<random>``): ``nbgrader submit --student bob`` run
by alice, or a folder alice makes there by hand, is collected as bob's. nbgrader 0.9.6's
``ExchangeCollect.check_owner`` only logs a warning and collects it anyway. On a hub where
students are system users (``make hub`` as root, The Littlest JupyterHub), the folder's
owner is the only thing a student cannot forge: :class:`OwnerCheckedCollect` leaves out
every folder whose owner is not the student its name claims (and every folder holding a
symbolic link), says so in the log, and collects the newest of that student's own
submissions instead. ``instructor.hub`` sets it
(``c.ExchangeFactory.collect``) where the hub's students are real users.
"""

from __future__ import annotations

import glob
import os
import pwd
from collections import defaultdict
from typing import Any

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import check_mode

from instructor.student_ids import id_problem, refusal

__all__ = ["CheckedCollect", "OwnerCheckedCollect", "has_link", "owner_name"]

REMEDY = (
    "Its files in the exchange's inbound folder are left there, not collected; the hub's "
    "user names are the student ids, so such a name was not written by nbgrader submit."
)


class CheckedCollect(ExchangeCollect):
    """nbgrader's collect, of the submissions whose student id fits the allow-list only."""

    def init_src(self) -> None:
        super().init_src()
        kept = []
        for record in self.src_records:
            if id_problem(record["username"]):
                where = f"the exchange's file {record['filename']!r}"
                self.log.error(refusal(record["username"], where, REMEDY))
            else:
                kept.append(record)
        self.src_records = kept


def owner_name(path: str) -> str | None:
    """The user name owning ``path`` (not following a link), or None for an unknown uid."""
    try:
        return pwd.getpwuid(os.lstat(path).st_uid).pw_name
    except KeyError:
        return None


def has_link(folder: str) -> bool:
    """Whether ``folder`` is, or holds at any depth, a symbolic link."""
    if os.path.islink(folder):
        return True
    for parent, folders, files in os.walk(folder):
        if any(os.path.islink(os.path.join(parent, name)) for name in folders + files):
            return True
    return False


class OwnerCheckedCollect(CheckedCollect):
    """The course's collect (:class:`.CheckedCollect`: student ids of one shape only) that
    also skips submissions not owned by the student they name."""

    rejected: list[dict[str, Any]]

    def init_src(self) -> None:
        # nbgrader's init_src, with the checks before the newest submission is chosen
        # (checking only the chosen one would let a forged newer folder hide the real one).
        if self.coursedir.course_id == "":
            self.fail("No course id specified. Re-run with --course flag.")
        self.course_path = os.path.join(self.root, self.coursedir.course_id)
        self.inbound_path = os.path.join(self.course_path, "inbound")
        if not os.path.isdir(self.inbound_path):
            self.fail(f"Course not found: {self.inbound_path}")
        if not check_mode(self.inbound_path, read=True, execute=True):
            self.fail(f"You don't have read permissions for the directory: {self.inbound_path}")
        student_id = self.coursedir.student_id or "*"
        pattern = os.path.join(self.inbound_path, f"{student_id}+{self.coursedir.assignment_id}+*")
        records, self.rejected = [], []
        for path in glob.glob(pattern):
            record = self._path_to_record(path)
            owner = owner_name(path)
            if id_problem(record["username"]):
                # The course's allow-list, as CheckedCollect applies it (its init_src is
                # replaced here: the owner check must come before the newest is chosen).
                where = f"the exchange's file {record['filename']!r}"
                self.log.error(refusal(record["username"], where, REMEDY))
                continue
            if owner != record["username"]:
                why = f"claims to be submitted by {record['username']} but is owned by " + (
                    owner or "an unknown user id"
                )
            elif has_link(path):
                # nbgrader submit copies files, never links: a link was put there by hand,
                # and collect (run with the instructor's rights) would copy what it points to.
                why = "holds a symbolic link"
            else:
                records.append(record)
                continue
            self.rejected.append({**record, "owner": owner, "why": why})
            self.log.error("Not collected: %s %s", path, why)
        by_student: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for record in records:
            by_student[record["username"]].append(record)
        with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gradebook:
            try:
                self.duedate = gradebook.find_assignment(self.coursedir.assignment_id).duedate
            except MissingEntry:
                self.duedate = None
        self.src_records = []
        for own in by_student.values():
            newest_first = self._sort_by_timestamp(own)
            if self.duedate is not None and self.before_duedate:
                on_time = [r for r in newest_first if r["timestamp"] <= self.duedate]
                newest_first = on_time or newest_first
            self.src_records.append(newest_first[0])
