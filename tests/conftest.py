"""Test-suite wiring: keep each notebook's nbval cells together on one xdist worker."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # nbval runs a notebook's cells in order in one kernel; splitting them over workers
    # would run cells without their predecessors.
    for item in items:
        path = item.nodeid.split("::")[0]
        if path.endswith(".ipynb"):
            item.add_marker(pytest.mark.xdist_group(path))
