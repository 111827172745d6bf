"""helpers.measure measures what it says (it never asserts on speed itself)."""

from __future__ import annotations

import pytest
import torch

from helpers.measure import Measurement, measure, peak_memory_mib


def test_peak_memory_sees_a_temporary_allocation() -> None:
    def allocate_64_mib() -> None:
        block = torch.ones(64 * 2**20 // 4)  # float32: 64 MiB, freed on return
        del block

    peak = peak_memory_mib(allocate_64_mib)
    if peak is None:
        pytest.skip("this OS does not report peak resident memory (/proc/self/clear_refs)")
    # A few MiB low on a busy machine (59.0 in a loaded run of the suite): see its docstring.
    assert 48 <= peak < 200


def test_measure_returns_the_median_and_calls_the_function() -> None:
    calls = []
    result = measure(lambda x: calls.append(x), 7, repeats=3)
    assert isinstance(result, Measurement)
    assert calls == [7] * 5  # a warm-up run, three timed runs, one run for the memory
    assert 0 <= result.seconds < 1


def test_median_seconds_warms_up_then_times_each_repeat() -> None:
    from helpers.measure import median_seconds

    calls = []
    seconds = median_seconds(lambda x: calls.append(x), 1, repeats=4)
    assert calls == [1] * 5 and seconds >= 0
