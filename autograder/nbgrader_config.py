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

# `python -m instructor.classroom grade A --zip download.zip`: an LMS download whose files are
# named <student>_<notebook>.ipynb (student ids without "_"), collected by `nbgrader zip_collect`.
c.FileNameCollectorPlugin.named_regexp = r".*/(?P<student_id>[^/_]+)_(?P<file_id>[^/]+\.ipynb)$"
