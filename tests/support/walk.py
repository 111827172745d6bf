"""A grading run followed as a reader follows it: which files of the grader it goes through,
and how often it comes back to a file it had already left.

:func:`walk` records, while a function runs, every call that enters a function of a module
under ``package`` from another file, the first time that function is entered (a reader
reads a function once, however many hand-ins go through it). Its stops are those functions'
files in that order, a file named again only after the walk has been elsewhere.
:attr:`Walk.returns` counts the stops at a file that the walk had left before: what a reader
going from ``make grade`` to the reports has to go back to.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Walk:
    stops: tuple[str, ...]
    """The files, in the order the run first entered their functions from elsewhere."""

    @property
    def returns(self) -> int:
        seen: set[str] = set()
        count = 0
        for stop in self.stops:
            count += stop in seen
            seen.add(stop)
        return count

    def entries(self) -> dict[str, int]:
        """How many times the walk enters each file."""
        return {name: self.stops.count(name) for name in dict.fromkeys(self.stops)}


def walk(package: Path, run: Callable[[], Any]) -> Walk:
    """Follow ``run()`` (in this thread and the threads it starts) through ``package``."""
    root = str(package.resolve())
    entered: set[Any] = set()
    stops: list[str] = []
    lock = threading.Lock()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "call":
            return
        code = frame.f_code
        if not code.co_filename.startswith(root) or code in entered:
            return
        caller = frame.f_back
        if caller is not None and caller.f_code.co_filename == code.co_filename:
            return
        name = str(Path(code.co_filename).relative_to(root))
        with lock:
            entered.add(code)
            if not stops or stops[-1] != name:
                stops.append(name)

    sys.setprofile(profile)
    threading.setprofile(profile)
    try:
        run()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]
    return Walk(tuple(stops))
