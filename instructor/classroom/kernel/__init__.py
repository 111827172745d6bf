"""What the student's kernel imports: the guard, the probe's kernel side, the wire format.

Everything here runs beside untrusted code, in the sandbox; it imports nothing of
:mod:`instructor.classroom.worker` or :mod:`instructor.classroom.grader` (an import-linter
contract in ``pyproject.toml``), so a change reaches the student's kernel only through a file
of this folder.
"""
