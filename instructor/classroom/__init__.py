"""Grading a whole class: sandboxed, tamper-resistant, parallel.

``python -m instructor.classroom grade ...`` (``make grade A=...``).

Modules: :mod:`.grade` (the pipeline), :mod:`.execute` (one notebook in a sandboxed kernel),
:mod:`.sandbox` (bubblewrap and limits), :mod:`.guard` (runs inside the kernel),
:mod:`.integrity` (what a submitted file changed), :mod:`.benchmark` (against plain nbgrader).
Importing this package is cheap: Dask and nbgrader load when grading starts.
"""
