"""The reviewed mutants that no test can kill: ``mutants.toml``, which ``course.toml``'s
``[mutants]`` table names.

Each entry is a mutant's key (:attr:`instructor.mutation.engine.Mutant.key`) and a one-line
reason why it computes what the reference computes on every input the specification allows
(or why the difference is one no test should decide). A mutant that the hidden tests miss
and that is not listed here is a hole in the hidden tests, and the report says so.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from instructor.paths import COURSE_ROOT

__all__ = ["Equivalent", "equivalents", "registry_file"]

DEFAULT = "mutants.toml"


@dataclass(frozen=True)
class Equivalent:
    key: str
    reason: str


def registry_file(root: Path | None = None) -> Path:
    """The file course.toml's ``[mutants] equivalents`` names (``mutants.toml`` by default)."""
    root = root or COURSE_ROOT
    course = tomllib.loads((root / "course.toml").read_text(encoding="utf-8"))
    return root / course.get("mutants", {}).get("equivalents", DEFAULT)


@cache
def equivalents(root: Path | None = None) -> dict[str, Equivalent]:
    """key -> the reviewed equivalent mutant; a key listed twice, or without a reason, is
    refused."""
    path = registry_file(root)
    if not path.exists():
        return {}
    found: dict[str, Equivalent] = {}
    for entry in tomllib.loads(path.read_text(encoding="utf-8")).get("equivalent", []):
        key, reason = entry.get("key", ""), entry.get("reason", "").strip()
        if not key or not reason:
            raise ValueError(f"{path.name}: every [[equivalent]] needs a key and a reason: {entry}")
        if key in found:
            raise ValueError(f"{path.name}: {key!r} is listed twice")
        found[key] = Equivalent(key, reason)
    return found
