"""The first two cells of every notebook: the Colab badge and the Colab set-up cell.

Both are generated from the registry (``course.toml``: ``repository``, ``branch`` and the
notebook's ``colab_packages``); the anatomy tests check that every notebook's cells equal
what these functions make, and ``make new`` writes them into a new notebook.
"""

from __future__ import annotations

from instructor import registry

__all__ = ["badge_markdown", "colab_setup_source", "colab_url"]


def colab_url(notebook_id: str) -> str:
    """The Colab address of the student notebook ``notebooks/<id>/<id>.ipynb``."""
    course = registry.load()
    return (
        f"https://colab.research.google.com/github/{course.repository}/blob/{course.branch}/"
        f"notebooks/{notebook_id}/{notebook_id}.ipynb"
    )


def badge_markdown(notebook_id: str) -> str:
    """The markdown of the "Open in Colab" badge for a notebook."""
    return (
        f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
        f"({colab_url(notebook_id)})"
    )


def colab_setup_source(extra_packages: tuple[str, ...] = ()) -> str:
    """The source of a notebook's set-up cell: on Colab, install the course's student
    package from the repository (``--no-deps``: Colab already has numpy, torch and
    matplotlib, and pinning its torch would downgrade it), plus ``extra_packages`` Colab
    lacks; in a local checkout, nothing."""
    course = registry.load()
    install = (
        f'%pip install --quiet --no-deps "git+https://github.com/{course.repository}'
        f'@{course.branch}"'
    )
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
