"""Grading a whole class: sandboxed, tamper-resistant, parallel.

``python -m instructor.classroom grade ...`` (``make grade A=...``).

Modules, one job each:

- :mod:`.grade`: the pipeline (``ClassGrader``: Dask orchestration of the parts below);
- :mod:`.nbgrader_setup`: the course's nbgrader configuration, API and gradebook;
- :mod:`.resume`: the resume state (what is recorded already, with which files);
- :mod:`.staging`: a hand-in read, checked and sanitised before anything runs;
- :mod:`.integrity`: what a submitted file changed in the released notebook;
- :mod:`.execute`: one notebook in a sandboxed kernel, its test cells judged;
- :mod:`.sandbox`: bubblewrap and limits; :mod:`.guard`: runs inside the kernel;
- :mod:`.replay`: the sandboxed outputs recorded through nbgrader's ``autograde``;
- :mod:`.feedback`: nbgrader's feedback HTML; :mod:`.reports`: grades CSV, integrity report;
- :mod:`.records`: the typed records the parts hand each other.

The benchmark against plain nbgrader is :mod:`instructor.benchmark_class_grading`.
Importing this package is cheap: Dask and nbgrader load when grading starts.
"""
