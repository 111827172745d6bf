"""Fixtures shared by every test folder."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from support.graded_class import SharedClusters


@pytest.fixture(scope="session")
def shared_scheduler() -> Iterator[Callable[[], str]]:
    """``shared_scheduler()``: the address of this test process's Dask cluster for the
    isolation in force (:class:`support.graded_class.SharedClusters`), for
    ``ClassGrader(scheduler=...)`` or ``grade --scheduler``."""
    clusters = SharedClusters()
    yield clusters.address
    clusters.close()
