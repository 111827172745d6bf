"""``instructor.nbgrader_env``: the environment nbgrader's subprocesses get."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from instructor.nbgrader_env import nbgrader_env


def test_this_interpreter_comes_first_once_and_no_backend() -> None:
    base = {"PATH": "/usr/bin", "MPLBACKEND": "Agg", "HOME": "/home/x"}
    env = nbgrader_env(base)
    interpreter_bin = str(Path(sys.executable).parent)
    assert env["PATH"] == interpreter_bin + os.pathsep + "/usr/bin"
    assert "MPLBACKEND" not in env and env["HOME"] == "/home/x"
    assert nbgrader_env(env) == env  # called again (every API call does): PATH does not grow
    assert base == {"PATH": "/usr/bin", "MPLBACKEND": "Agg", "HOME": "/home/x"}  # a copy
