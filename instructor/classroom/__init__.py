"""Grading a whole class: sandboxed, tamper-resistant, parallel.

``python -m instructor.classroom grade ...`` (``make grade A=...``).

Modules, one job each:

- :mod:`.grade`: the pipeline (``ClassGrader``: Dask orchestration of the parts below);
- :mod:`.nbgrader_setup`: the course's nbgrader configuration, API and gradebook;
- :mod:`.resume`: the resume state (what is recorded already, with which files and which
  tests, points, gradebook and late settings);
- :mod:`.cluster`: the check that a Dask scheduler's workers can grade (``--scheduler``);
- :mod:`.late`: a per-hour late penalty, an nbgrader ``LateSubmissionPlugin``;
- :mod:`.staging`: a hand-in read, checked and sanitised before anything runs;
  :mod:`.containment`: the boundary per hand-in (any failure reading it is its own 0);
- :mod:`.exchange_collect`: ``nbgrader collect`` of student ids of one shape only
  (:mod:`instructor.student_ids`);
- :mod:`.integrity`: what a submitted file changed in the released notebook;
- :mod:`.execute`: one notebook in a sandboxed kernel, its test cells judged
  (:mod:`.kernel_session`: the kernel, the nbclient client and the judge of its test cells);
- :mod:`.verdict`: one test cell run in the grader's process; :mod:`.probe`: the grader's
  side of a call into the kernel, :mod:`.probe_kernel` the kernel's, :mod:`.protocol` the
  requests and replies between them, :mod:`.wire` the values inside those
  (:mod:`.module_records`: the modules among them);
- :mod:`.sandbox`: bubblewrap and limits; :mod:`.cgroups`: a cgroup per kernel (its limits
  as a whole, its processes, its CPU time); :mod:`.guard`: runs inside the kernel;
- :mod:`.reaper`: every process a kernel leaves is ended with its notebook;
- :mod:`.gradebook_watch`: a score changed during a run, not by the grader, stops it;
- :mod:`.zygote`: a sandboxed process that has imported torch once and forks each
  notebook's kernel; :mod:`.forked_kernel`: the grader's side of it (as root with bwrap);
- :mod:`.replay`: the sandboxed outputs recorded through nbgrader's ``autograde``, whose
  ``Execute`` step :mod:`.replay_execute` replaces;
- :mod:`.feedback`: nbgrader's feedback HTML (:mod:`.feedback_preprocessor` its
  preprocessor); :mod:`.reports`: every report of a run, by job in :mod:`.outcomes` (what a
  cell and a hand-in came to), :mod:`.grade_tables` (grades, totals, LMS exports),
  :mod:`.integrity_report`, :mod:`.copies` (near copies) and :mod:`.gradebook_reads`;
- :mod:`.sanitise`: what a student wrote, made inert in feedback and autograded notebooks;
- :mod:`.similarity`: near copies of the solutions or of each other;
- :mod:`.records`: the typed records the parts hand each other.

LMS downloads are read by :mod:`instructor.lms.intake`, grades for an LMS written by
:mod:`instructor.lms.export`: one module per LMS in :mod:`instructor.lms`; every CSV cell
goes through :mod:`instructor.lms.csv_safety`.

The benchmark against plain nbgrader is :mod:`instructor.benchmark_class_grading`.
Importing this package is cheap: Dask and nbgrader load when grading starts.
``docs/architecture.md`` follows one grading run and one probe through these modules.
"""
