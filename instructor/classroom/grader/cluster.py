"""The Dask cluster a grading run executes on: a local one made for the run, or a running
scheduler's, whose workers are checked first (they must import this course, from the same
place)."""

from __future__ import annotations

import contextlib
from typing import Any

__all__ = ["CLUSTER_SECONDS", "ClusterError", "check_cluster", "connect", "enter_client"]


CLUSTER_SECONDS = 10.0
"""How long to wait for the scheduler, a first worker and the workers' checks."""


# Run on the workers from its source: a worker without the course (which could not import
# this module) must still answer why.
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
    return found
"""


class ClusterError(RuntimeError):
    """The cluster cannot grade this course; the message says why and what to do."""


def connect(address: str, timeout: float = CLUSTER_SECONDS) -> Any:
    """A ``distributed.Client`` of the scheduler at ``address``, or :class:`ClusterError`."""
    from distributed import Client

    try:
        return Client(address, timeout=timeout)
    except (OSError, TimeoutError) as error:
        raise ClusterError(
            f"no Dask scheduler answers at {address} within {timeout:g} s ({error}): start "
            f"one with `dask scheduler` and give its address (tcp://HOST:8786) to --scheduler"
        ) from None


def check_cluster(client: Any, course_root: str, timeout: float = CLUSTER_SECONDS) -> int:
    """How many workers ``client``'s cluster has, each importing the course from
    ``course_root``; else :class:`ClusterError`."""
    address = client.scheduler.address
    fix = (
        f"start workers with `dask worker {address}` on machines where the course is at "
        f"{course_root} (a checkout there, with `pip install -e '.[instructor]'` in the "
        "worker's Python), or run without --scheduler to grade on this machine"
    )
    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError:
        raise ClusterError(
            f"the Dask scheduler at {address} has no worker (none joined within {timeout:g} s): "
            + fix
        ) from None
    namespace: dict[str, Any] = {"__name__": "instructor_cluster_check"}
    exec(compile(WORKER_CHECK_SOURCE, "<worker check>", "exec"), namespace)  # noqa: S102 - our source
    try:
        found = client.sync(
            client._run, namespace["check_worker"], on_error="return", callback_timeout=timeout
        )
    except TimeoutError:
        raise ClusterError(
            f"the workers of {address} did not answer the course check within {timeout:g} s "
            "(busy or stuck): " + fix
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
            + fix
        )
    return len(found)


def enter_client(
    stack: contextlib.ExitStack, scheduler: str | None, workers: int, course_root: str
) -> Any:
    """A Dask client entered on ``stack``: of the scheduler at ``scheduler`` (its workers
    checked), else of a local cluster of ``workers`` processes made for the run."""
    if scheduler:
        client = stack.enter_context(connect(scheduler))
        check_cluster(client, course_root)
        return client
    from distributed import Client, LocalCluster

    cluster = stack.enter_context(
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=40,
        )
    )
    return stack.enter_context(Client(cluster))
