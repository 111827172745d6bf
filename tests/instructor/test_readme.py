"""instructor.readme: the README's course table is generated from course.toml and current."""

from __future__ import annotations

import pytest

from instructor import readme, registry
from instructor.colab import landing_url
from instructor.paths import COURSE_ROOT


def test_readme_table_is_current() -> None:
    assert readme.main(["--check"]) == 0, "run `make readme` and commit README.md"


def test_table_has_a_row_per_notebook_with_links_and_points() -> None:
    course = registry.load()
    table = readme.readme_table(course).splitlines()
    assert len(table) == 2 + len(course.notebooks)
    for notebook, row in zip(course.notebooks, table[2:], strict=True):
        assert f"(notebooks/{notebook.id}/{notebook.id}.ipynb)" in row
        assert f"({landing_url(notebook.id)})" in row
        assert f"| {notebook.points} |" in row and f"{notebook.minutes} min" in row
        assert all(f"`{e.name}`" in row for e in notebook.exercises)


def test_update_replaces_only_the_block() -> None:
    course = registry.load()
    text = f"before\n{readme.BEGIN}\nstale\n{readme.END}\nafter\n"
    updated = readme.update(text, course)
    assert updated.startswith("before\n") and updated.endswith("after\n")
    assert "stale" not in updated and readme.readme_table(course) in updated


def test_a_readme_without_markers_is_named() -> None:
    with pytest.raises(ValueError, match="BEGIN course table"):
        readme.update("no markers", registry.load())


def test_check_reports_a_stale_table(tmp_path, capsys) -> None:
    (tmp_path / "course.toml").write_text((COURSE_ROOT / "course.toml").read_text())
    (tmp_path / "README.md").write_text(f"{readme.BEGIN}\nstale\n{readme.END}\n")
    assert readme.main(["--check", "--root", str(tmp_path)]) == 1
    assert "make readme" in capsys.readouterr().out
    assert readme.main(["--root", str(tmp_path)]) == 0
    assert readme.main(["--check", "--root", str(tmp_path)]) == 0
