"""The errors of reading what an LMS gave (a download, ``--times``, ``lms.toml``), in a
module of their own: :mod:`.base` and :mod:`.config` both raise them, and neither imports
the other for them (no import cycle in :mod:`instructor.lms`)."""

from __future__ import annotations

__all__ = ["IntakeError", "SubmissionExists", "UnknownLayout"]


class IntakeError(ValueError):
    """An LMS download that cannot be read as asked."""


class UnknownLayout(IntakeError):
    """The zip's file names fit no layout, or several: pass ``lms`` or ``pattern``."""


class SubmissionExists(IntakeError):
    """``write_submissions`` would overwrite a different submission (pass ``replace=True``)."""
