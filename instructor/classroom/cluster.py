"""Checking a Dask cluster before grading on it (``--scheduler``).

The workers of a remote scheduler run the notebooks: each must import the course
(``instructor``, ``helpers``) from a checkout at the same path as this machine's, since the
graded notebooks and the sandbox refer to it. :func:`check_cluster` finds out within seconds
(workers present, a worker check run on each) and otherwise raises :class:`ClusterError` with what
to do, instead of a run that waits forever or fails notebook by notebook.
"""

from __future__ import annotations

from typing import Any

__all__ = ["WORKER_CHECK_SOURCE", "ClusterError", "check_cluster", "connect"]

CONNECT_SECONDS = 10.0
"""How long to try to reach the scheduler."""
WORKER_SECONDS = 10.0
"""How long to wait for a first worker, and for the worker checks' answers."""

# The worker check runs on the workers from its source (no import of this module there: a worker
# without the course must still answer why).
WORKER_CHECK_SOURCE = """
def check_worker():
    import os, sys
    found = {"python": sys.executable, "cwd": os.getcwd()}
    try:
        import helpers
        import instructor.paths
    except BaseException as error:
        found["error"] = f"{type(error).__name__}: {error}"
        return found
    found["course_root"] = str(instructor.paths.COURSE_ROOT)
    found["instructor"] = os.path.dirname(instructor.__file__)
    return found
"""


class ClusterError(RuntimeError):
    """The cluster cannot grade this course; the message says why and what to do."""


def _worker_check() -> Any:
    namespace: dict[str, Any] = {"__name__": "instructor_cluster_check"}
    exec(compile(WORKER_CHECK_SOURCE, "<worker check>", "exec"), namespace)  # noqa: S102 - our source
    return namespace["check_worker"]


def _fix(address: str, root: str) -> str:
    return (
        f"start workers with `dask worker {address}` on machines where the course is at "
        f"{root} (a checkout there, with `pip install -e '.[instructor]'` in the worker's "
        "Python), or run without --scheduler to grade on this machine"
    )


def connect(address: str, timeout: float = CONNECT_SECONDS) -> Any:
    """A ``distributed.Client`` of the scheduler at ``address``, or :class:`ClusterError`."""
    from distributed import Client

    try:
        return Client(address, timeout=timeout)
    except (OSError, TimeoutError) as error:
        raise ClusterError(
            f"no Dask scheduler answers at {address} within {timeout:g} s ({error}): start "
            f"one with `dask scheduler` and give its address (tcp://HOST:8786) to --scheduler"
        ) from None


def check_cluster(client: Any, course_root: str, timeout: float = WORKER_SECONDS) -> int:
    """Check that ``client``'s cluster has workers and that each imports the course from
    ``course_root``; return how many workers there are, or raise :class:`ClusterError`."""
    address = client.scheduler.address
    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError:
        raise ClusterError(
            f"the Dask scheduler at {address} has no worker (none joined within {timeout:g} s): "
            + _fix(address, course_root)
        ) from None
    try:
        found = client.sync(
            client._run, _worker_check(), on_error="return", callback_timeout=timeout
        )
    except TimeoutError:
        raise ClusterError(
            f"the workers of {address} did not answer the course check within {timeout:g} s "
            "(busy or stuck): " + _fix(address, course_root)
        ) from None
    problems = []
    for worker, answer in sorted(found.items()):
        if isinstance(answer, BaseException):
            problems.append(f"{worker}: the check failed ({type(answer).__name__}: {answer})")
        elif "error" in answer:
            problems.append(
                f"{worker}: cannot import the course ({answer['error']}; its Python is "
                f"{answer['python']}, working directory {answer['cwd']})"
            )
        elif answer["course_root"] != course_root:
            problems.append(
                f"{worker}: imports the course from {answer['course_root']}, not {course_root}"
            )
    if problems:
        raise ClusterError(
            f"{len(problems)} of {len(found)} worker(s) of {address} cannot grade this course:\n"
            + "\n".join(f"  {line}" for line in problems)
            + "\nTo fix: "
            + _fix(address, course_root)
        )
    return len(found)
