"""The environment nbgrader and the kernels it starts run in.

nbgrader runs ``alembic`` and the kernel by name, so this interpreter's ``bin/`` must come
first on ``PATH``; a kernel with ``MPLBACKEND=Agg`` would not store inline figures. Used by
the class grader, the scratch courses of the tests and the benchmarks.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["nbgrader_env"]


def nbgrader_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) with this interpreter's ``bin/`` first
    on ``PATH`` and without ``MPLBACKEND``. Calling it on its own result changes nothing: the
    ``bin/`` is added only where it is not first already."""
    env = dict(os.environ if base is None else base)
    interpreter_bin = str(Path(sys.executable).parent)
    path = env.get("PATH", "")
    if path.split(os.pathsep)[0] != interpreter_bin:
        env["PATH"] = interpreter_bin + os.pathsep + path if path else interpreter_bin
    env.pop("MPLBACKEND", None)
    return env
