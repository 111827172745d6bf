"""The grading run's step times (``instructor.classroom.grader.timing``)."""

from __future__ import annotations

import time

import pytest

from instructor.benchmark_class_grading import step_table
from instructor.classroom.grader.timing import StepTimes
from instructor.classroom.worker import KernelSeconds


def test_a_timed_block_adds_its_time_to_its_step_only() -> None:
    times = StepTimes()
    for _ in range(2):
        with times.timed("stage"):
            time.sleep(0.01)
    assert times.stage >= 0.02
    assert times.total == pytest.approx(times.stage)
    assert times.record == 0


def test_a_block_that_raises_is_timed_too() -> None:
    times = StepTimes()
    with pytest.raises(KeyError), times.timed("record"):
        time.sleep(0.01)
        raise KeyError("x")
    assert times.record >= 0.01


def test_an_unknown_step_is_named() -> None:
    with pytest.raises(ValueError, match="no grading step 'staging'; the steps are cluster_start"):
        with StepTimes().timed("staging"):
            pass


def test_the_fixed_cost_is_the_cluster_and_the_environment_check() -> None:
    times = StepTimes(cluster_start=1.0, environment_check=2.0, cluster_close=0.5, record=9.0)
    assert times.fixed == 3.5
    assert times.total == 12.5


def test_workers_seconds_are_summed_by_part() -> None:
    times = StepTimes(
        kernels=[KernelSeconds(1.0, 2.0, 3.0, 0.5), KernelSeconds(0.5, 1.0, 1.0, 0.25)]
    )
    assert times.worker_seconds() == KernelSeconds(1.5, 3.0, 4.0, 0.75)
    first, second = times.lines()
    assert first.startswith("steps (s): cluster start 0.0, find 0.0")
    assert second == (
        "workers (core-s over 2 notebook(s)): start 1.5, cells 3.0, tests 4.0, finish 0.8"
    )


def test_the_benchmark_table_has_a_row_per_step_and_a_column_per_run() -> None:
    steps = {"default": StepTimes(cluster_start=2.0, record=3.0), "again": StepTimes(reports=1.0)}
    table = step_table(steps, {"default": 5.5, "again": 1.2})
    header = next(line for line in table if line.startswith("| step |"))
    assert header == "| step | default | again |"
    assert "| record | 3.0 | 0.0 |" in table
    assert "| **total (grader's clock)** | **5.0** | **1.0** |" in table
    assert "| wall, timed around `grade` | 5.5 | 1.2 |" in table
    fixed = [line for line in table if line.startswith("- Fixed cost of the default run")]
    assert fixed and "2.0 s of 5.0 s" in fixed[0]
