"""``nbgrader collect`` that takes only student ids of one shape (:mod:`instructor.student_ids`).

nbgrader's exchange inbound folder is writable by every student, and ``collect`` reads the
student id from each file name there (``<id>+<assignment>+<time>+<random>``): a name
``..+01_vector_sets+...`` is collected into ``submitted/../01_vector_sets``, and with
``--update`` nbgrader first removes whatever is there; an id ``*`` later reaches every
student through nbgrader's globs. :class:`CheckedCollect` is nbgrader's own
``ExchangeCollect`` with each submission's id checked first: a refused one is logged with
why, and not collected. ``autograder/nbgrader_config.py`` makes it the collect step::

    c.ExchangeFactory.collect = "instructor.classroom.exchange_collect.CheckedCollect"
"""

from __future__ import annotations

from nbgrader.exchange.default.collect import ExchangeCollect

from instructor.student_ids import id_problem, refusal

__all__ = ["CheckedCollect"]

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
