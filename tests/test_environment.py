"""The two ways to install the course name the same packages with the same versions."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib

from packaging.requirements import Requirement

from instructor.paths import COURSE_ROOT

ROOT = COURSE_ROOT


def pyproject_requirements() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = project["dependencies"] + [
        r for extra in project["optional-dependencies"].values() for r in extra
    ]
    # An extra that includes another ("self-attention-course[grading]") is not a package.
    return {
        Requirement(r).name.lower(): str(Requirement(r).specifier)
        for r in listed
        if Requirement(r).name != project["name"]
    }


def environment_requirements() -> dict[str, str]:
    """The pip requirements of environment.yml (a plain list, so no YAML parser is needed)."""
    lines = (ROOT / "environment.yml").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"\s+- pip:\s*$", line))
    requirements = {}
    for line in lines[start + 1 :]:
        item = re.match(r"\s+- (.+)$", line)
        if not item:
            break
        if item.group(1).startswith("-e"):
            continue
        requirement = Requirement(item.group(1))
        requirements[requirement.name.lower()] = str(requirement.specifier)
    return requirements


def test_environment_yml_and_pyproject_agree() -> None:
    assert environment_requirements() == pyproject_requirements()


def test_torch_cannot_resolve_past_the_cpu_wheel() -> None:
    """A torch range admitting releases after 2.13.0 would pull GBs of CUDA wheels."""
    specifier = Requirement(
        next(
            r
            for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
            if r.startswith("torch")
        )
    ).specifier
    assert specifier.contains("2.13.0")
    assert not specifier.contains("2.13.1") and not specifier.contains("2.14.0")


def test_importing_nbformat_builds_no_parser() -> None:
    """jsonschema 4.25+ imports rfc3987-syntax, whose Lark parsers cost every process that
    imports nbformat about a second (docs/decisions.md): the cap on jsonschema keeps it out."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, nbformat; print(sorted({'lark', 'rfc3987_syntax'} & set(sys.modules)))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert loaded == "[]", f"importing nbformat loads {loaded}: see jsonschema in docs/decisions.md"
