"""The grader's own process: the pipeline, the nbgrader course, records, reports, feedback.

:mod:`.pipeline` reads top-down what a run does (find, stage, execute, judge, record,
report); it hands each notebook to :mod:`instructor.classroom.worker` on a Dask worker and
never imports the student's side (:mod:`instructor.classroom.kernel`) directly.
"""
