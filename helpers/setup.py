"""Notebook set-up: the Colab badge and install cell, seeding and plot defaults.

Every notebook starts with the same two cells, built from the constants below (a test
checks that they match):

1. a markdown cell with the "Open in Colab" badge, pointing at the *student* version
   of the notebook on the repository's default branch;
2. a code cell that, on Colab only, installs this package from the repository
   (``--no-deps``: Colab already has numpy, torch and matplotlib, and pinning its torch
   would downgrade it). In a local checkout the package is already installed and the
   cell does nothing.

A fork changes ``REPOSITORY`` here and in the notebooks' first two cells
(``tests/test_notebook_structure.py`` names any cell that disagrees).
"""

from __future__ import annotations

import random

import numpy as np
import torch

__all__ = [
    "BRANCH",
    "REPOSITORY",
    "badge_markdown",
    "colab_setup_source",
    "colab_url",
    "start_notebook",
]

REPOSITORY = "self-attention-course/self-attention"
"""``owner/name`` of the course repository on GitHub."""

BRANCH = "main"
"""The branch the Colab badges open."""


def colab_url(assignment: str) -> str:
    """The Colab address of the student notebook ``notebooks/<assignment>/<assignment>.ipynb``."""
    return (
        f"https://colab.research.google.com/github/{REPOSITORY}/blob/{BRANCH}/"
        f"notebooks/{assignment}/{assignment}.ipynb"
    )


def badge_markdown(assignment: str) -> str:
    """The markdown of the "Open in Colab" badge for ``assignment`` (e.g. ``"01_vector_sets"``)."""
    return (
        f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
        f"({colab_url(assignment)})"
    )


def colab_setup_source(extra_packages: tuple[str, ...] = ()) -> str:
    """The source of a notebook's set-up cell.

    Args:
        extra_packages: pip requirements Colab lacks for this notebook (e.g.
            ``("torch-geometric",)`` for the graph notebook).
    """
    install = f'%pip install --quiet --no-deps "git+https://github.com/{REPOSITORY}@{BRANCH}"'
    lines = [
        "# Set-up: on Colab, install the course's helper package; in a local checkout, do nothing.",
        "import sys",
        "",
        'if "google.colab" in sys.modules:',
        f"    {install}",
    ]
    if extra_packages:
        lines.append("    %pip install --quiet " + " ".join(f'"{p}"' for p in extra_packages))
    return "\n".join(lines)


def start_notebook(seed: int = 0) -> None:
    """Seed every random generator, use one CPU thread, set plot and print defaults.

    One thread because the course's tensors are small (threads cost more than they save),
    because results then do not depend on the machine's core count (reproducible outputs),
    and because graders and the test suite run several notebooks side by side: threads of
    several kernels fighting over the same cores slow each of them down many times.

    Args:
        seed: the seed for ``random``, ``numpy`` and ``torch``.
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(1)
    torch.set_printoptions(precision=4, sci_mode=False)
    np.set_printoptions(precision=4, suppress=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"figure.dpi": 90, "figure.figsize": (6.0, 4.0), "axes.grid": False})
