"""Learning management systems: one module per LMS behind one interface
(:class:`instructor.lms.base.Lms`: how its download names files, who its students are, how
its grade import file is written), and what they share:

- :mod:`.canvas`, :mod:`.moodle`, :mod:`.blackboard`, :mod:`.plain`: the LMSs, listed once
  in :data:`LMSS` (the intake's layouts, the exports, ``--lms``'s choices);
- :mod:`.intake`: reading a download into nbgrader's ``submitted/``;
- :mod:`.times`: submission times the instructor exported from the LMS (``--times``);
- :mod:`.roster`: who each student is in the LMS (``lms_students.json``);
- :mod:`.table`: the grades the exports are written from; :mod:`.export` writes them all;
- :mod:`.config`: ``autograder/lms.toml``, each assignment's title and id in each LMS;
- :mod:`.csv_safety`: no cell a spreadsheet runs;
- :mod:`.errors`: what a download, ``--times`` or ``lms.toml`` that cannot be read raises.

Adding an LMS: a module with an :class:`~instructor.lms.base.Lms` subclass, one entry in
:data:`LMSS`, and its tests (a download and an import check from that LMS's own rules).
"""

from __future__ import annotations

from .base import Lms
from .blackboard import Blackboard
from .canvas import Canvas
from .moodle import Moodle
from .plain import Plain

__all__ = ["LMSS", "Lms", "lms_named", "lms_names"]

LMSS: tuple[Lms, ...] = (Canvas(), Moodle(), Blackboard(), Plain())
"""Every LMS, in the order the layouts are tried and the exports written."""


def lms_names() -> tuple[str, ...]:
    return tuple(lms.name for lms in LMSS)


def lms_named(name: str) -> Lms:
    for lms in LMSS:
        if lms.name == name:
            return lms
    raise KeyError(name)
