"""Unit tests of helpers.setup."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import torch

from helpers import setup


def test_start_notebook_seeds_everything() -> None:
    setup.start_notebook(3)
    a = (torch.rand(2), np.random.rand(2))
    setup.start_notebook(3)
    b = (torch.rand(2), np.random.rand(2))
    assert torch.equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert torch.get_num_threads() == 1  # same results on any machine; no oversubscription
