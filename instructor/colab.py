"""The first two cells of every notebook: the Colab badge and the Colab set-up cell.

Both are generated from the registry (``course.toml``: ``repository``, ``ref`` and the
notebook's ``colab_packages``): the badge opens the student notebook at that ref, the set-up
cell installs the course's package from that ref (``git+https://github.com/<owner>/<name>@<ref>``,
a release tag or a commit, which the registry checks) and the notebook's pinned extra
packages. The anatomy tests check that every notebook's cells, and the README's badges, equal
what these functions make; ``make new`` writes them into a new notebook.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from instructor import registry
from instructor.paths import solution_path

__all__ = [
    "SAVE_A_COPY",
    "SELF_STUDY_FOLDER",
    "badge_markdown",
    "colab_setup_source",
    "colab_url",
    "install_url",
    "landing_url",
    "publish_check",
    "self_study_setup_source",
    "self_study_url",
    "sync_notebooks",
]

SELF_STUDY_FOLDER = "self_study"
"""Where the self-study edition lies beside ``notebooks/`` (:mod:`instructor.self_study`)."""
SAVE_A_COPY = (
    "Colab does not save your edits to a notebook opened from GitHub: ",
    "save a copy in your Drive first (File > Save a copy in Drive) and work in the copy.",
)
"""What the self-study edition's set-up cell prints on Colab, and only there (two lines of
source, one line printed)."""


def colab_url(
    notebook_id: str, course: registry.Course | None = None, folder: str = "notebooks"
) -> str:
    """The Colab address of the student notebook ``notebooks/<id>/<id>.ipynb`` (or of the
    same notebook in ``folder``: the self-study edition's, :func:`self_study_url`)."""
    course = course or registry.load()
    return (
        f"https://colab.research.google.com/github/{course.repository}/blob/{course.ref}/"
        f"{folder}/{notebook_id}/{notebook_id}.ipynb"
    )


def self_study_url(notebook_id: str, course: registry.Course | None = None) -> str:
    """The Colab address of the self-study edition ``self_study/<id>/<id>.ipynb``."""
    return colab_url(notebook_id, course, SELF_STUDY_FOLDER)


def landing_url(notebook_id: str, course: registry.Course | None = None) -> str:
    """Where the README's and the website's badges send a learner: the self-study edition
    when ``course.toml`` has ``self_study = true``, else the class's ``notebooks/``."""
    course = course or registry.load()
    return (
        self_study_url(notebook_id, course) if course.self_study else colab_url(notebook_id, course)
    )


def install_url(course: registry.Course | None = None) -> str:
    """What pip installs the course from: ``git+https://github.com/<owner>/<name>@<ref>``."""
    course = course or registry.load()
    return f"git+https://github.com/{course.repository}@{course.ref}"


def badge_markdown(notebook_id: str, course: registry.Course | None = None) -> str:
    """The markdown of the "Open in Colab" badge for a notebook."""
    return (
        f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]"
        f"({colab_url(notebook_id, course)})"
    )


def colab_setup_source(
    extra_packages: tuple[str, ...] = (), course: registry.Course | None = None
) -> str:
    """The source of a notebook's set-up cell: on Colab, install the course's student
    package from the repository at the registry's ref (``--no-deps``: Colab already has
    numpy, torch and matplotlib, and pinning its torch would downgrade it), plus
    ``extra_packages`` Colab lacks (pinned: ``name==version``); in a local checkout,
    nothing."""
    install = f'%pip install --quiet --no-deps "{install_url(course)}"'
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


def self_study_setup_source(
    extra_packages: tuple[str, ...] = (), course: registry.Course | None = None
) -> str:
    """The self-study edition's set-up cell: :func:`colab_setup_source`, and on Colab only
    the reminder to save a copy in Drive (:data:`SAVE_A_COPY`)."""
    lines = ["    print(", *(f'        "{part}"' for part in SAVE_A_COPY), "    )"]
    return "\n".join([colab_setup_source(extra_packages, course), *lines])


def publish_check() -> int:
    """``make publish-check``: print where students get the course (the install source, each
    badge's address, and the class's edition's where the badges open the self-study one)
    and ask GitHub whether the ref is published there. Returns 0 when ``git ls-remote``
    finds the tag, 1 when it answers without it, 2 when it cannot be asked
    (no network, or the ref is a commit, which ``ls-remote`` cannot look up)."""
    course = registry.load()
    remote = f"https://github.com/{course.repository}"
    print(f"install: pip install {install_url(course)!r}")
    for notebook_id in course.ids:
        print(f"badge:   {landing_url(notebook_id, course)}")
        if course.self_study:  # the badges open the self-study edition; the class's is here
            print(f"class:   {colab_url(notebook_id, course)}")
    packages = sorted({p for notebook in course.notebooks for p in notebook.colab_packages})
    print(f"pinned Colab packages: {', '.join(packages) or 'none'}")
    if registry.COMMIT.fullmatch(course.ref):
        print(f"{course.ref} is a commit: check it with `pip install` (docs/publishing.md)")
        return 2
    try:
        found = subprocess.run(
            ["git", "ls-remote", "--tags", remote, f"refs/tags/{course.ref}"],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        print(f"could not ask {remote}: {error}")
        return 2
    if found.returncode != 0:
        print(f"could not ask {remote} (no network, or no such repository): {found.stderr.strip()}")
        return 2
    if not found.stdout.strip():
        print(f"NOT PUBLISHED: {remote} has no tag {course.ref}: push it (docs/publishing.md)")
        return 1
    print(f"published: {remote} has tag {course.ref} ({found.stdout.split()[0][:12]})")
    return 0


def sync_notebooks(root: Path | None = None) -> list[str]:
    """Rewrite the badge line and the set-up cell of every solution notebook from the
    registry (``make release`` runs it before nbgrader): a new ``repository``, ``ref`` or
    pinned package reaches every notebook. Writes only the notebooks whose cells change and
    returns their ids; the set-up cell has no output, so nothing needs re-executing."""
    import nbformat

    from instructor import anatomy  # imports nbformat: only for this command

    course = registry.load(root)
    changed = []
    for notebook in course.notebooks:
        path = solution_path(notebook.id, root)
        solution = nbformat.read(path, as_version=4)
        badge, setup = solution.cells[0], solution.cells[1]
        if not (
            anatomy.has_tag(badge, anatomy.BADGE_TAG) and anatomy.has_tag(setup, anatomy.SETUP_TAG)
        ):
            raise ValueError(
                f"{path}: the first two cells are not tagged 'badge' and 'colab-setup' "
                "(CONTRIBUTING.md, Anatomy of a notebook)"
            )
        first, _, rest = badge.source.partition("\n")
        new_badge = badge_markdown(notebook.id, course) + ("\n" + rest if rest else "")
        if not first.startswith("[![Open In Colab]"):
            new_badge = badge_markdown(notebook.id, course) + "\n" + badge.source
        new_setup = colab_setup_source(notebook.colab_packages, course)
        if (badge.source, setup.source) != (new_badge, new_setup):
            badge.source, setup.source = new_badge, new_setup
            nbformat.write(solution, path)
            changed.append(notebook.id)
    return changed


def main(argv: list[str] | None = None) -> int:
    """``python -m instructor.colab sync`` (badges and set-up cells from the registry) or
    ``python -m instructor.colab publish-check``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m instructor.colab")
    parser.add_argument("command", choices=["sync", "publish-check"])
    if parser.parse_args(argv).command == "sync":
        for notebook_id in sync_notebooks():
            print(f"solutions/{notebook_id}: badge and set-up cell rewritten from course.toml")
        return 0
    return publish_check()


if __name__ == "__main__":
    raise SystemExit(main())
