"""Where a grading run's time goes, step by step: what ``make grade`` logs last and the
class-grading benchmark (``python -m instructor.benchmark_class_grading``) tabulates.

Two clocks. The grader process times its own steps (:class:`StepTimes`), one after the
other, so they add up to the run's wall time. The workers time each notebook
(:class:`instructor.classroom.worker.KernelSeconds`, carried back in its result): those run
side by side, so their sums are core-seconds, set beside the wall time the grader spent
waiting for them (:attr:`StepTimes.execute`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, fields

from instructor.classroom.worker import KernelSeconds

__all__ = ["StepTimes"]


@dataclass
class StepTimes:
    """Seconds of one run, by step, on the grader's clock (each step's time summed over the
    run where it happens once per hand-in), and the workers' core-seconds by part."""

    cluster_start: float = 0.0
    """The Dask cluster started (or a remote one reached and its workers checked)."""
    find: float = 0.0
    """The gradebook's assignments registered, the hand-ins listed and fingerprinted."""
    stage: float = 0.0
    """Each hand-in read, sanitised and copied for the workers (this process)."""
    environment_check: float = 0.0
    """Waiting for one kernel to prove it loads the grader's code (it runs beside staging)."""
    execute: float = 0.0
    """Waiting for the workers' notebooks, recording left out."""
    record: float = 0.0
    """nbgrader's autograde step on each executed hand-in: the gradebook, the notebooks."""
    reports: float = 0.0
    """Scores read back, late penalties, feedback, the grades and integrity reports and the
    item analysis."""
    cluster_close: float = 0.0
    kernels: list[KernelSeconds] = field(default_factory=list)
    """Each executed notebook's time on its worker."""

    STEPS = (
        "cluster_start",
        "find",
        "stage",
        "environment_check",
        "execute",
        "record",
        "reports",
        "cluster_close",
    )

    @contextmanager
    def timed(self, step: str) -> Iterator[None]:
        """Add the time spent inside the block to ``step`` (one of :attr:`STEPS`)."""
        if step not in self.STEPS:
            raise ValueError(f"no grading step {step!r}; the steps are {', '.join(self.STEPS)}")
        began = time.perf_counter()
        try:
            yield
        finally:
            setattr(self, step, getattr(self, step) + time.perf_counter() - began)

    @property
    def total(self) -> float:
        """The run's wall time on the grader's clock: its steps one after the other."""
        return sum(getattr(self, step) for step in self.STEPS)

    @property
    def fixed(self) -> float:
        """What the run costs whatever the class's size: the cluster and the kernel
        environment's check (the reports grow with the class, slowly, and are counted apart)."""
        return self.cluster_start + self.environment_check + self.cluster_close

    def worker_seconds(self) -> KernelSeconds:
        """The workers' core-seconds summed over every executed notebook, by part."""
        return KernelSeconds(
            **{f.name: sum(getattr(k, f.name) for k in self.kernels) for f in fields(KernelSeconds)}
        )

    def lines(self) -> list[str]:
        """The run's step times, for its log."""
        steps = ", ".join(
            f"{step.replace('_', ' ')} {getattr(self, step):.1f}" for step in self.STEPS
        )
        spent = self.worker_seconds()
        parts = ", ".join(f"{f.name} {getattr(spent, f.name):.1f}" for f in fields(KernelSeconds))
        return [
            f"steps (s): {steps}; total {self.total:.1f}",
            f"workers (core-s over {len(self.kernels)} notebook(s)): {parts}",
        ]
