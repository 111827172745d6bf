"""Grading a whole class: sandboxed, tamper-resistant, parallel.

``python -m instructor.classroom grade ...`` (``make grade A=...``; :mod:`.__main__` parses
the command line and calls :class:`.grader.pipeline.ClassGrader`).

Three packages, by where their code runs (import-linter keeps the layers: ``make lint``):

- :mod:`.kernel`: what the student's kernel imports (:mod:`.kernel.guard`, the probe's
  kernel side and its messages :mod:`.kernel.probe`, the values on the wire
  :mod:`.kernel.wire`); it imports nothing of the other two;
- :mod:`.worker`: what a grading worker runs for one notebook: the kernels' isolation
  (:mod:`.worker.isolation`), the zygote that forks them (:mod:`.worker.zygote`), the
  notebook's run (:mod:`.worker.session`) and the judge of its test cells
  (:mod:`.worker.judge`); it imports the kernel side, never the grader's;
- :mod:`.grader`: the grader's own process: :mod:`.grader.pipeline` (find, stage, execute,
  judge, record, report), :mod:`.grader.course` (nbgrader's configuration, gradebook, late
  penalty, resume state), :mod:`.grader.records`, :mod:`.grader.reports`,
  :mod:`.grader.feedback` and :mod:`.grader.integrity`.

LMS downloads are read by :mod:`instructor.lms.intake` (``--zip``), grades for an LMS
written by :mod:`instructor.lms.export`. Importing this package is cheap: nothing is
imported until a module of it is. ``docs/architecture.md`` follows one grading run and one
probe through these modules.
"""
