"""Grading a whole class: sandboxed, tamper-resistant, parallel (``make grade A=...``).

Three packages, by where their code runs (import-linter keeps the layers: ``make lint``):
:mod:`.kernel`, what the student's kernel imports; :mod:`.worker`, what a grading worker
runs for one notebook; :mod:`.grader`, the grader's own process (:mod:`.grader.pipeline`
reads a run top-down). :mod:`.__main__` only parses the command line. Importing this
package is cheap: nothing is imported until a module of it is. ``docs/architecture.md``
follows one grading run and one probe through these modules.
"""
