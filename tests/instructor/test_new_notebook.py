"""``make new`` (``python -m instructor.new_notebook``) in a scratch copy of the course: the
new notebook, its ``course.toml`` entry and its grading cases follow the anatomy, and pass
the anatomy tests and the release check as they stand; bad ids are refused.

The copy holds the working tree's files (tracked, and untracked but not ignored: work not yet
committed included), and the instructor package is pointed at it with
``SELF_ATTENTION_COURSE``; the real checkout is never written to.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from instructor import anatomy, registry
from instructor.colab import badge_markdown, colab_setup_source
from instructor.grading_cases import Case, Mutation
from instructor.nbgrader_env import nbgrader_env
from instructor.new_notebook import (
    ID_PATTERN,
    NOTEBOOK_TEMPLATE,
    NewNotebookError,
    check_new_id,
    registry_entry,
    with_entry,
)
from instructor.paths import COURSE_ROOT, ROOT_VARIABLE

NEW = "99_example"
TITLE = 'Example: a "quoted" title · with a dot'

# The module's tests share one copy: keep them on one xdist worker (--dist loadgroup).
pytestmark = pytest.mark.xdist_group("new_notebook")


# What the generator and the checks read; not build outputs or documentation sites that
# may sit untracked in the working tree.
COURSE_PARTS = (
    "Makefile", "README.md", "course.toml", "pyproject.toml",
    "autograder", "helpers", "instructor", "notebooks", "solutions", "tests",
)  # fmt: skip


def course_files() -> list[str]:
    """The course's files in the working tree that git does not ignore (tracked or not)."""
    command = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    try:
        listed = subprocess.run(
            [*command, "--", *COURSE_PARTS], cwd=COURSE_ROOT, capture_output=True
        )
    except OSError as error:
        pytest.skip(f"no git to list the course's files: {error}")
    if listed.returncode != 0 and b"not a git repository" in listed.stderr:
        pytest.skip("the course is not a git checkout: no file list to copy")
    assert listed.returncode == 0, f"git ls-files failed: {listed.stderr.decode()}"
    return sorted({name for name in listed.stdout.decode().split("\0") if name})


def copy_course(destination: Path) -> Path:
    for name in course_files():
        target = destination / name
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copy2(COURSE_ROOT / name, target)
        except (FileNotFoundError, IsADirectoryError):
            pass  # listed, but deleted in the working tree (or since): not part of it
    return destination


def environment(root: Path) -> dict[str, str]:
    env = nbgrader_env()
    env[ROOT_VARIABLE] = str(root)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # the copy stays as the commands leave it
    for name in [n for n in env if n.startswith("PYTEST_")]:  # a fresh pytest session
        del env[name]
    return env


def run(root: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args],
        cwd=root,
        env=environment(root),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def new_notebook(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run(root, "-m", "instructor.new_notebook", *args)


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A copy of the course in which ``99_example`` was created (not executed yet); its
    ``course.toml`` as it was before is kept in ``course.toml.before``."""
    root = copy_course(tmp_path_factory.mktemp("course"))
    assert not (root / "solutions" / NEW).exists(), f"the course already has {NEW}"
    shutil.copy(root / "course.toml", root / "course.toml.before")
    created = new_notebook(root, NEW, "--title", TITLE, "--minutes", "25")
    assert created.returncode == 0, created.stderr
    return root


def test_registry_entry_is_appended_with_the_examples(course: Path) -> None:
    before = (course / "course.toml.before").read_text(encoding="utf-8")
    after = (course / "course.toml").read_text(encoding="utf-8")
    assert after.startswith(before), (
        "the entry is appended; the file's text, comments included, stays"
    )
    entry = registry.parse(after).notebook(NEW)
    assert (entry.title, entry.minutes, entry.colab_packages) == (TITLE, 25, ())
    assert [(e.name, e.points) for e in entry.exercises] == [
        ("mean_vector", 3),
        ("center", 2),
        ("squared_norms", 1),
    ]
    assert [(q.name, q.kind, q.points) for q in entry.questions] == [
        ("q_example_mean_order", "choice", 1),
        ("q_example_mean_size", "number", 1),
        ("written_example_mean_tagging", "written", 2),
    ]
    low, high = registry.parse(after).notebook_points
    assert low <= entry.points <= high, "the template is worth what a notebook must be"
    assert entry.heading == f"# 99 · {TITLE}"


def test_notebook_follows_the_anatomy(course: Path) -> None:
    notebook = nbformat.read(course / "solutions" / NEW / f"{NEW}.ipynb", as_version=4)
    nbformat.validate(notebook)
    cells = notebook.cells
    assert cells[0].source.startswith(badge_markdown(NEW) + "\n")
    assert f"# 99 · {TITLE}" in cells[0].source.splitlines()[1:3]
    assert "about 25 minutes" in cells[0].source
    assert "{{" not in cells[0].source, "every placeholder of the badge cell is filled in"
    assert cells[1].source == colab_setup_source(())
    assert anatomy.has_tag(cells[0], anatomy.BADGE_TAG)
    assert anatomy.has_tag(cells[1], anatomy.SETUP_TAG)
    assert "start_notebook()" in anatomy.imports_cell(notebook).source
    ids = [cell.id for cell in cells]
    template_ids = {cell.id for cell in nbformat.read(NOTEBOOK_TEMPLATE, as_version=4).cells}
    assert len(set(ids)) == len(ids) and not set(ids) & template_ids, "fresh cell ids"
    assert [anatomy.grade_id(c) for c in anatomy.function_cells(notebook)] == [
        "mean_vector",
        "center",
        "squared_norms",
    ]
    assert [anatomy.grade_id(c) for c in anatomy.question_cells(notebook)] == [
        "q_example_mean_order",
        "q_example_mean_size",
    ]
    assert [anatomy.grade_id(c) for c in anatomy.written_cells(notebook)] == [
        "written_example_mean_tagging"
    ]
    test = anatomy.test_cells(notebook)[0]
    assert anatomy.grade_id(test) == "test_mean_vector" and test.metadata.nbgrader.points == 3
    visible = anatomy.visible_part(test.source)
    assert "known_mistakes" in visible and 'print("mean_vector: visible tests passed")' in visible
    assert "### END HIDDEN TESTS" in test.source
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in cells[1:])
    assert [c.source.splitlines()[0] for c in cells[-2:]] == ["## Summary", "## Further reading"]


def test_grading_cases_apply_to_the_reference(course: Path) -> None:
    path = course / "tests" / "grading_cases" / f"{NEW}.py"
    assert NEW in path.read_text(encoding="utf-8")
    spec = importlib.util.spec_from_file_location("new_cases", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    notebook = nbformat.read(course / "solutions" / NEW / f"{NEW}.ipynb", as_version=4)
    references = anatomy.solution_sources(notebook)
    cases = [
        c.apply(references[c.function]) if isinstance(c, Mutation) else c for c in module.CASES
    ]
    assert all(isinstance(c, Case) for c in cases)
    for function in ("mean_vector", "center", "squared_norms"):
        kinds = sorted(c.kind for c in cases if c.function == function)
        assert kinds == ["right", "wrong", "wrong", "wrong"], (function, kinds)
    for question in ("q_example_mean_order", "q_example_mean_size"):
        assert {c.kind for c in cases if c.function == question} == {"right", "wrong"}
        assert any(c.message for c in cases if c.function == question), question


@pytest.mark.parametrize(
    ("notebook_id", "message"),
    [
        (NEW, "exists already"),
        ("01_vector_sets", "exists already"),
        ("01_other_topic", "number 01 is taken by 01_vector_sets"),
        ("9_topic", "is not a notebook id"),
        ("10-topic", "is not a notebook id"),
        ("10_Topic", "is not a notebook id"),
        ("10_", "is not a notebook id"),
    ],
)
def test_refuses_an_existing_or_malformed_id(course: Path, notebook_id: str, message: str) -> None:
    files_before = sorted(course.rglob("*"))
    registry_before = (course / "course.toml").read_bytes()
    refused = new_notebook(course, notebook_id, "--title", "Another")
    assert refused.returncode == 2 and message in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr, "a refusal is one clear line, not a traceback"
    assert (course / "course.toml").read_bytes() == registry_before, "course.toml is untouched"
    assert sorted(course.rglob("*")) == files_before, "no file is written"


def test_refuses_a_second_notebook_while_the_examples_are_held(course: Path) -> None:
    """The new notebook still holds the template's example questions, whose names are
    unique in the course: a second ``make new`` asks to replace them first."""
    refused = new_notebook(course, "11_other", "--title", "Other")
    assert refused.returncode == 2 and f"{NEW} still holds the template's example questions" in (
        refused.stderr
    ), refused.stderr
    assert not (course / "solutions" / "11_other").exists()


def test_refuses_an_empty_title(course: Path) -> None:
    refused = new_notebook(course, "11_other", "--title", " ")
    assert refused.returncode == 2 and "give the notebook a title" in refused.stderr
    assert not (course / "solutions" / "11_other").exists()


def test_refuses_files_left_without_an_entry(tmp_path: Path) -> None:
    course = registry.parse((COURSE_ROOT / "course.toml").read_text(encoding="utf-8"))
    (tmp_path / "tests" / "grading_cases").mkdir(parents=True)
    (tmp_path / "tests" / "grading_cases" / "11_left.py").write_text("CASES = []\n")
    with pytest.raises(NewNotebookError, match="tests/grading_cases/11_left.py is there"):
        check_new_id("11_left", course, tmp_path)
    check_new_id("11_fresh", course, tmp_path)


def test_entry_goes_in_id_order_with_the_comments_kept() -> None:
    text = (
        "# header\n[course]\ntitle = 'x'\n\n[[notebook]]\nid = \"01_a\"\n\n"
        '# about 03\n[[notebook]]\nid = "03_c"\n'
    )
    entry = registry_entry("02_b", "B", 30, [registry.Exercise("f", (2,))])
    inserted = with_entry(text, "02_b", entry)
    assert inserted.index('"01_a"') < inserted.index('"02_b"') < inserted.index("# about 03")
    assert inserted.index("# about 03") < inserted.index('"03_c"')
    assert inserted.startswith("# header\n") and inserted.count("\n# about 03\n") == 1
    appended = with_entry(text, "04_d", entry)
    assert appended.startswith(text) and appended.endswith(entry)
    assert ID_PATTERN.fullmatch("10_multi_word_topic") and not ID_PATTERN.fullmatch("10__x")


def test_new_notebook_passes_the_course_checks(course: Path) -> None:
    """HEAVY (about 30 s): what ``make new`` does after the generator (execute the notebook,
    release it alone, regenerate the README), then the copy's anatomy tests, release
    check and visible-test checks (every call through checked_call, every parameter and
    documented shape tried), run by pytest in the copy. (The autograde round trip and
    nbval of the new notebook, a few minutes more, are not run here.)"""
    executed = run(
        course,
        "-m",
        "nbconvert",
        "--to",
        "notebook",
        "--execute",
        "--inplace",
        "--ExecutePreprocessor.record_timing=False",
        "--ExecutePreprocessor.store_widget_state=False",
        f"solutions/{NEW}/{NEW}.ipynb",
    )
    assert executed.returncode == 0, executed.stderr[-3000:]
    released = subprocess.run(
        [sys.executable, "-m", "nbgrader", "generate_assignment", NEW, "--force"],
        cwd=course / "autograder",
        env=environment(course),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert released.returncode == 0, released.stderr[-3000:]
    readme = run(course, "-m", "instructor.readme")
    assert readme.returncode == 0, readme.stderr[-3000:]

    checks = run(
        course,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/course/test_anatomy.py",
        "tests/course/test_release.py",
        "tests/course/test_visible_calls.py",
        "tests/course/test_visible_cases.py",
        "-k",
        f"{NEW} or vice_versa or same_notebooks",
    )
    assert checks.returncode == 0, checks.stdout[-6000:] + checks.stderr[-2000:]
    assert f"(notebooks/{NEW}/{NEW}.ipynb)" in (course / "README.md").read_text(encoding="utf-8")
