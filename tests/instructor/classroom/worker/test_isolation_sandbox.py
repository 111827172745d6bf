"""The sandbox command a kernel starts with."""

from __future__ import annotations

from pathlib import Path

import pytest

from instructor.classroom.worker.isolation import Limits, isolation, sandbox_command


def test_the_sandbox_binds_only_what_the_kernel_needs(tmp_path: Path) -> None:
    if isolation() != "bwrap":
        pytest.skip("bubblewrap is not available here")
    command = sandbox_command(["python", "-c", "pass"], tmp_path, Limits(), uid=61234)
    joined = " ".join(command)
    assert command[0] == "bwrap" and "--unshare-net" in command
    assert f"--bind {tmp_path} {tmp_path}" in joined
    assert "/solutions" not in joined and "autograder" not in joined
    assert any(part.startswith("--as=") for part in command)
