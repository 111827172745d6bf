"""instructor.colab: the badge and set-up cells, from the registry."""

from __future__ import annotations

import re
import shutil
import subprocess
from importlib import metadata

import pytest

from instructor import colab, registry
from instructor.paths import COURSE_ROOT

# The form tests/support/studentview.py replaces by a local path to run a set-up cell here.
INSTALL_STRING = re.compile(r'"git\+https://github\.com/[\w.-]+/[\w.-]+@[\w./-]+"')


def test_badge_and_setup_cell() -> None:
    course = registry.load()
    badge = colab.badge_markdown("01_vector_sets")
    assert badge.startswith("[![Open In Colab]")
    assert badge.endswith(
        f"/github/{course.repository}/blob/{course.ref}/notebooks/01_vector_sets/01_vector_sets.ipynb)"
    )
    source = colab.colab_setup_source()
    assert 'if "google.colab" in sys.modules:' in source and "--no-deps" in source
    assert "torch-geometric" in colab.colab_setup_source(("torch-geometric",))


def test_setup_cell_installs_the_registrys_ref() -> None:
    """The set-up cell installs ``git+https://github.com/<repository>@<ref>``, in the form the
    Colab test rewrites to a local copy, and each pinned package as the registry writes it."""
    course = registry.load()
    assert colab.install_url() == f"git+https://github.com/{course.repository}@{course.ref}"
    source = colab.colab_setup_source(("torch-geometric==2.8.1",))
    [install] = INSTALL_STRING.findall(source)
    assert install == f'"{colab.install_url()}"'
    assert '%pip install --quiet "torch-geometric==2.8.1"' in source


@pytest.mark.parametrize(
    "package",
    sorted({p for notebook in registry.load().notebooks for p in notebook.colab_packages}),
)
def test_colab_packages_pin_the_version_the_course_is_tested_with(package: str) -> None:
    """Colab installs the version the notebooks ran with here (this environment's)."""
    name, pinned = package.split("==")
    name = name.split("[")[0]
    try:
        installed = metadata.version(name)
    except metadata.PackageNotFoundError:
        pytest.skip(f"{name} is not installed here")
    assert pinned == installed, (
        f"course.toml pins {package!r} for Colab; the course is tested with {name} {installed}: "
        "pin that version (then `make release`)"
    )


def test_setup_cell_is_a_no_op_outside_colab() -> None:
    from IPython.core.inputtransformer2 import TransformerManager

    python = TransformerManager().transform_cell(colab.colab_setup_source(("x",)))
    namespace: dict = {"get_ipython": lambda: pytest.fail("installed outside Colab")}
    exec(compile(python, "<setup>", "exec"), namespace)  # noqa: S102 - the set-up cell, ours


@pytest.mark.parametrize(
    ("returncode", "stdout", "expected", "says"),
    [
        (0, "0123456789abcdef\trefs/tags/v0.1.0\n", 0, "published: "),
        (0, "", 1, "NOT PUBLISHED"),
        (128, "", 2, "could not ask"),
    ],
)
def test_publish_check(monkeypatch, capsys, returncode, stdout, expected, says) -> None:
    """``make publish-check`` prints the install source and every badge, then reports what
    ``git ls-remote`` answers for the registry's tag."""
    course = registry.load()
    asked = []

    def ls_remote(command, **kwargs):
        asked.append(command)
        return subprocess.CompletedProcess(command, returncode, stdout, "fatal: no network")

    monkeypatch.setattr(colab.subprocess, "run", ls_remote)
    assert colab.publish_check() == expected
    out = capsys.readouterr().out
    assert colab.install_url() in out and says in out
    assert all(colab.colab_url(notebook_id) in out for notebook_id in course.ids)
    assert all(colab.landing_url(notebook_id) in out for notebook_id in course.ids)
    assert asked == [
        [
            "git",
            "ls-remote",
            "--tags",
            f"https://github.com/{course.repository}",
            f"refs/tags/{course.ref}",
        ]
    ]


def test_sync_rewrites_badges_and_setup_cells_from_the_registry(tmp_path) -> None:
    """`make release` first runs `python -m instructor.colab sync`: a new ref in course.toml
    reaches every solution notebook's badge and set-up cell, and nothing else changes."""
    import nbformat

    from instructor.paths import COURSE_ROOT

    shutil.copytree(COURSE_ROOT / "solutions", tmp_path / "solutions")
    toml = (COURSE_ROOT / "course.toml").read_text(encoding="utf-8")
    course = registry.load()
    (tmp_path / "course.toml").write_text(
        toml.replace(f'ref = "{course.ref}"', 'ref = "v9.9.9"'), encoding="utf-8"
    )
    before = nbformat.read(tmp_path / "solutions/09_gnn/09_gnn.ipynb", as_version=4)
    assert colab.sync_notebooks(tmp_path) == course.ids
    after = nbformat.read(tmp_path / "solutions/09_gnn/09_gnn.ipynb", as_version=4)
    assert "/blob/v9.9.9/notebooks/09_gnn/09_gnn.ipynb)" in after.cells[0].source
    assert f'{course.repository}@v9.9.9"' in after.cells[1].source
    assert "torch-geometric==" in after.cells[1].source
    assert after.cells[0].source.split("\n")[1:] == before.cells[0].source.split("\n")[1:]
    assert after.cells[2:] == before.cells[2:]
    assert colab.sync_notebooks(tmp_path) == []  # a second run changes nothing


def test_the_self_study_setup_cell_says_to_save_a_copy_on_colab_only(monkeypatch, capsys) -> None:
    """The self-study edition's set-up cell installs as the class's does and, on Colab
    only, tells the learner to save a copy in Drive."""
    import sys
    import types

    from IPython.core.inputtransformer2 import TransformerManager

    source = colab.self_study_setup_source(("x==1",))
    assert source.startswith(colab.colab_setup_source(("x==1",)) + "\n")
    python = TransformerManager().transform_cell(source)
    namespace: dict = {"get_ipython": lambda: pytest.fail("installed outside Colab")}
    exec(compile(python, "<setup>", "exec"), namespace)  # noqa: S102 - the set-up cell, ours
    assert capsys.readouterr().out == ""
    magics: list[str] = []
    shell = types.SimpleNamespace(run_line_magic=lambda name, line: magics.append(line))
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    exec(compile(python, "<setup>", "exec"), {"get_ipython": lambda: shell})  # noqa: S102
    assert len(magics) == 2 and colab.install_url() in magics[0]
    assert capsys.readouterr().out == "".join(colab.SAVE_A_COPY) + "\n"
    assert "Save a copy in Drive" in "".join(colab.SAVE_A_COPY)


def test_the_badges_open_the_self_study_edition_when_it_is_on() -> None:
    course = registry.load()
    assert course.self_study
    for notebook_id in course.ids:
        url = colab.landing_url(notebook_id)
        assert url == colab.self_study_url(notebook_id)
        assert url.endswith(f"/self_study/{notebook_id}/{notebook_id}.ipynb")
        assert url.replace("/self_study/", "/notebooks/") == colab.colab_url(notebook_id)
        # what the badge opens is in the checkout (the release publishes it at the ref)
        assert (COURSE_ROOT / url.split(f"/blob/{course.ref}/", 1)[1]).is_file(), url
