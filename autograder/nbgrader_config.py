"""nbgrader configuration of the course; run every nbgrader command from this folder.

The instructor notebooks in ../solutions are nbgrader's source; `nbgrader generate_assignment`
writes the student versions into ../notebooks (committed). Submissions, autograded
notebooks, feedback and the gradebook live here and are git-ignored.
"""

import os

c = get_config()  # noqa: F821 - provided by nbgrader when it loads this file

c.CourseDirectory.course_id = "self-attention"
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.source_directory = "../solutions"
c.CourseDirectory.release_directory = "../notebooks"

# Autograding: a cell that runs longer than this fails (and scores 0) instead of hanging
# the whole class. The notebooks run in seconds; a minute is generous on a slow laptop.
c.Execute.timeout = 60
# A student who deletes a test cell must not get away with it: put it back from the
# gradebook so it runs and scores as released.
c.OverwriteCells.add_missing_cells = True

# Due dates and late penalties, applied by nbgrader's autograde (and so by the class grader,
# `python -m instructor.classroom grade`, which records through it):
# - the due date of each assignment (a time without a zone is UTC). The class grader writes
#   it into the gradebook (nbgrader's Assignment.duedate) before grading; nbgrader compares
#   it with each submission's timestamp.txt (`nbgrader collect`, or the LMS's time for
#   `--zip`: Blackboard's attempt time; Canvas's LATE mark; the zip entries' times with
#   `--zip-times`). A submission without timestamp.txt is on time.
#   c.Deadlines.due_dates = {"01_vector_sets": "2026-11-20 23:59:00 Europe/Paris"}
# - the penalty: nbgrader's LateSubmissionPlugin takes nothing (penalty_method "none", the
#   default) or the whole notebook's score ("zero"):
#   c.LateSubmissionPlugin.penalty_method = "zero"
#   or a share of the notebook's score per started hour late, after a grace period:
#   c.AssignLatePenalties.plugin_class = "instructor.classroom.grader.course.PerHourPenalty"
#   c.PerHourPenalty.percent_per_hour = 10
#   c.PerHourPenalty.grace_minutes = 15
# Changing a due date or the penalty grades the assignment's submissions again.
c.Deadlines.due_dates = {}
c.LateSubmissionPlugin.penalty_method = "none"

# `python -m instructor.classroom grade A --zip download.zip [--lms NAME] [--pattern REGEX]
# [--times times.csv]` reads an LMS download itself (one module per LMS in instructor/lms/;
# `--help` lists them; titles and ids in each LMS: lms.toml next to this file). For
# nbgrader's own `nbgrader zip_collect`: files named <student>_<notebook>.ipynb (student ids
# without "_").
c.FileNameCollectorPlugin.named_regexp = r".*/(?P<student_id>[^/_]+)_(?P<file_id>[^/]+\.ipynb)$"

# `nbgrader collect` takes a student id from each file name in the exchange's inbound
# folder, which every student can write: only ids of one shape (letters, digits, . _ @ -;
# instructor/student_ids.py) are collected, the others are logged and left there.
c.ExchangeFactory.collect = "instructor.exchange.CheckedCollect"

# Feedback never shows hidden tests or solution lines: each test cell's visible part, the
# student's error message whole and wrapped (instructor/feedback.py).
# The class grader and a plain `nbgrader generate_feedback` both read this.
from instructor.feedback import feedback_config  # noqa: E402

c.merge(feedback_config())

# Validate (the command and JupyterLab's button) shows each failing test's name and the
# course's message first and whole, then, where it helps, the traceback without the frames
# inside helpers/ (instructor/validation.py). The cell's source too, with:
#   c.CourseValidation.show_cell = True
from instructor.validation import use_course_validation  # noqa: E402

use_course_validation()

# Feedback is released per hand-in: one student's folder (no timestamp.txt, an unreadable
# secret) leaves out that student only, with the reason logged (instructor/exchange.py).
c.ExchangeFactory.release_feedback = "instructor.exchange.ContainedReleaseFeedback"

# The student version holds no rubric: the written answers' rubric items (their criteria and
# the notes students get once graded) sit in the solution cells' metadata
# (instructor/rubrics.py); nbgrader's own steps, then their removal.
from nbgrader.converters import GenerateAssignment  # noqa: E402

from instructor.rubrics import StripRubrics  # noqa: E402

c.GenerateAssignment.preprocessors = [
    *GenerateAssignment.class_traits()["preprocessors"].default(),
    StripRubrics,
]
