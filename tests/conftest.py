"""Fixtures shared by every test folder, and the order in which the test workers take the
suite's groups."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator

import nbgrader.api
import pytest

from support.graded_class import SharedClusters

LONGEST_GROUPS_FIRST = (
    "hostile-kernels",
    "hub",
    "colab",
    "site",
    "packaging",
    "input_forgeries-none",
    "forgeries-none",
    "grade_bounds-none",
    "input_forgeries-bwrap",
    "cpu_capabilities",
    "grade_bounds-bwrap",
    "forgeries-bwrap",
    "new_notebook",
)
"""The xdist groups that take minutes (the most CPU time in a profile of ``make test``),
longest first. pytest-xdist hands out groups in the order they were collected (with
:func:`pytest_configure`'s setting): one of them left for the end keeps one worker busy for
minutes while the other waits."""


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist's default (--loadscope-reorder) hands out the groups with the most tests
    # first, whatever their time: the one-test groups above (the hub's term, Colab) came
    # last, and one worker ran them alone for minutes at the end.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False
    _ask_alembic_once()


def _ask_alembic_once() -> None:
    """nbgrader's ``Gradebook`` asks ``alembic heads`` (a Python process of its own, about a
    second of CPU) for the migration head of every new gradebook, and the suite makes dozens
    in its own processes; the answer is fixed by the installed nbgrader, so each test
    process asks once. nbgrader's commands, run as processes of their own, still ask."""
    if not hasattr(nbgrader.api.get_alembic_version, "cache_info"):
        nbgrader.api.get_alembic_version = functools.cache(nbgrader.api.get_alembic_version)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # nbval's items are a notebook's cells, which run in order in one kernel: one group per
    # notebook (``make test`` runs them in this session, after the groups above).
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.xdist_group(f"nbval-{item.path.stem}"))

    def rank(item: pytest.Item) -> int:
        groups = {m.args[0] for m in item.iter_markers("xdist_group") if m.args}
        return min(
            (LONGEST_GROUPS_FIRST.index(g) for g in groups if g in LONGEST_GROUPS_FIRST),
            default=len(LONGEST_GROUPS_FIRST),
        )

    items.sort(key=rank)  # stable: a group's tests keep their order


@pytest.fixture(scope="session")
def shared_scheduler() -> Iterator[Callable[[], str]]:
    """``shared_scheduler()``: the address of this test process's Dask cluster for the
    isolation in force (:class:`support.graded_class.SharedClusters`), for
    ``ClassGrader(scheduler=...)`` or ``grade --scheduler``."""
    clusters = SharedClusters()
    yield clusters.address
    clusters.close()
