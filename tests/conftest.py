"""Fixtures shared by every test folder, and the order in which the test workers take the
suite's groups."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from support.graded_class import SharedClusters

LONGEST_GROUPS_FIRST = (
    "hostile-kernels",
    "colab",
    "hub",
    "input_forgeries-none",
    "input_forgeries-bwrap",
    "forgeries-none",
    "packaging",
    "forgeries-bwrap",
    "new_notebook",
    "cpu_capabilities",
    "site",
)
"""The xdist groups that take minutes (the slowest tests of ``make test``'s durations),
longest first. pytest-xdist hands out groups in the order they were collected: one of them
left for the end keeps one worker busy for minutes while the other waits."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
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
