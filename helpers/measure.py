"""Measure a call's time and peak memory (``measure``), for the notebooks' live measurements.

Taught in notebook 06 (efficient attention), section 5; the instructor's benchmark
commands (``instructor.benchmark_attention``) use it too.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Measurement", "measure", "median_seconds", "peak_memory_mib"]


@dataclass(frozen=True)
class Measurement:
    """Median wall time of a call, and the peak extra memory it needed."""

    seconds: float
    peak_mib: float | None


_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")
_MMAP_THRESHOLD, _TRIM_THRESHOLD = -3, -1  # mallopt parameters (glibc's malloc.h)


def _return_freed_memory_to_the_os() -> None:
    """Make freed memory leave the resident set, so that the next peak is a real one.

    glibc keeps freed blocks for reuse and raises its mmap threshold after a large free;
    later allocations then reuse resident pages and add nothing to the high-water mark.
    A fixed, small mmap threshold gives every large tensor its own mapping, returned on free.
    """
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt(_MMAP_THRESHOLD, 64 * 1024)
        libc.mallopt(_TRIM_THRESHOLD, 64 * 1024)
        libc.malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: measure as is
        pass


def _status_kib(field: str) -> int:
    for line in _STATUS.read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def peak_memory_mib(function: Callable[[], Any]) -> float | None:
    """Peak resident memory that ``function()`` adds to the process, in MiB.

    Linux only: it resets the process's high-water mark (``/proc/self/clear_refs``), runs the
    call, and reads the new mark against the memory in use before. Returns ``None`` where the
    OS cannot tell (macOS, Windows, some sandboxes). Memory that torch frees before returning
    counts: the peak is what matters for "does it fit". Other threads' allocations and
    frees during the call, and file pages the OS reclaims on a busy machine, move the mark
    by a few MiB.
    """
    _return_freed_memory_to_the_os()
    try:
        _CLEAR_REFS.write_text("5")
        before = _status_kib("VmRSS")
    except OSError:
        return None
    function()
    return max(_status_kib("VmHWM") - before, 0) / 1024


def measure(function: Callable[..., Any], *args: Any, repeats: int = 3) -> Measurement:
    """Time ``function(*args)`` (median of ``repeats`` runs after a warm-up run), then
    record the peak memory of one more run (:func:`peak_memory_mib`).

    Memory comes last because measuring it makes glibc hand freed memory back to the OS,
    which makes every later large allocation in the process a little slower: compare
    timings taken in the same process, or run each measurement in a fresh one (as the
    ``attention`` command does).
    """
    seconds = median_seconds(function, *args, repeats=repeats)
    return Measurement(seconds, peak_memory_mib(lambda: function(*args)))


def median_seconds(function: Callable[..., Any], *args: Any, repeats: int = 3) -> float:
    """Median wall time of ``repeats`` calls of ``function(*args)``, after a warm-up call."""
    function(*args)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)
