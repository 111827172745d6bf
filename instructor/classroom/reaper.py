"""Ending every process a kernel leaves behind, found by the grader, not by the kernel.

With bubblewrap each kernel has a PID namespace of its own (everything in it dies with it),
and the zygote's kernels each have a user id of their own (every process of it is killed).
Without bubblewrap neither holds: a process a kernel starts with a double fork and
``setsid`` leaves its process group and session, outlives the notebook and can reach what
the grader's user can (the gradebook among it).

The grading process therefore becomes a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``,
Linux 3.4): an orphan among its descendants is re-parented to it instead of to init, so
every process a kernel leaves is, once the kernel has ended, a child of the grader.
:func:`reaped` kills the children that were not there before the notebook, then theirs, until
none is left. Where the call is refused (not Linux), nothing is reaped and the guide says so.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
from collections.abc import Iterator
from pathlib import Path

__all__ = ["children", "reaped"]

_PR_SET_CHILD_SUBREAPER = 36
_ROUNDS = 100
"""Kill rounds at most: each round kills the children re-parented by the previous one."""


def _become_subreaper() -> bool:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def children() -> set[int]:
    """The process ids whose parent is this process (read from ``/proc``)."""
    me, found = os.getpid(), set()
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            # The fields after the command name, which may itself hold spaces or ")".
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
            if int(fields[1]) == me:
                found.add(int(entry.name))
    return found


@contextlib.contextmanager
def reaped() -> Iterator[None]:
    """Run the block (one notebook's kernel, started and ended inside it); afterwards kill
    every child of this process that the block left, and every orphan they leave in turn."""
    if not _become_subreaper():
        yield
        return
    before = children()
    try:
        yield
    finally:
        for _ in range(_ROUNDS):
            left = children() - before
            if not left:
                break
            for pid in left:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            for pid in left:
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, 0)
