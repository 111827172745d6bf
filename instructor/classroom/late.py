"""Due dates and late penalties, configured in ``autograder/nbgrader_config.py``.

nbgrader computes lateness itself: ``autograde`` reads each hand-in's ``timestamp.txt``
against its assignment's ``duedate`` in the gradebook, and its ``AssignLatePenalties``
step asks the ``LateSubmissionPlugin`` configured as ``AssignLatePenalties.plugin_class``
what to take off each notebook (nbgrader caps it at the notebook's score). This module adds:

- :class:`Deadlines`: the due date of each assignment (``c.Deadlines.due_dates``), which
  the class grader writes into the gradebook (nbgrader's ``Assignment.duedate``) before
  grading;
- :class:`PerHourPenalty`: a late-submission plugin taking a share of the notebook's score
  per started hour late (``c.PerHourPenalty.percent_per_hour``), after an optional grace
  period.

nbgrader's own plugin (``penalty_method = "none"`` or ``"zero"``) works as ever.
"""

from __future__ import annotations

import math
from datetime import datetime

from nbgrader.plugins import LateSubmissionPlugin
from nbgrader.utils import parse_utc
from traitlets import Dict, Float, Unicode
from traitlets.config import Configurable

__all__ = ["Deadlines", "PerHourPenalty"]


class Deadlines(Configurable):
    """The due date of each assignment, as the class grader records it in the gradebook."""

    due_dates = Dict(
        key_trait=Unicode(),
        value_trait=Unicode(),
        help="assignment -> due date, e.g. '2026-11-20 23:59:00 Europe/Paris' (a time "
        "without a zone is UTC); nbgrader's Assignment.duedate",
    ).tag(config=True)

    def due(self, assignment: str) -> datetime | None:
        """The due date of ``assignment`` (naive UTC, as nbgrader stores it), or None."""
        text = self.due_dates.get(assignment)
        return parse_utc(text) if text else None


class PerHourPenalty(LateSubmissionPlugin):
    """Each started hour late takes ``percent_per_hour`` % of the notebook's score (all of
    it after 100 / percent_per_hour hours); ``grace_minutes`` late cost nothing."""

    percent_per_hour = Float(
        10.0, help="the share of the notebook's score taken per started hour late, in %"
    ).tag(config=True)
    grace_minutes = Float(0.0, help="minutes late that cost nothing").tag(config=True)

    def late_submission_penalty(
        self, student_id: str, score: float, total_seconds_late: float
    ) -> float | None:
        late = total_seconds_late - 60 * self.grace_minutes
        if late <= 0 or not score:
            return None
        hours = math.ceil(late / 3600)
        penalty = min(score, score * self.percent_per_hour * hours / 100)
        self.log.info(
            "%s: %d started hour(s) late, penalty %g of %g", student_id, hours, penalty, score
        )
        return penalty
