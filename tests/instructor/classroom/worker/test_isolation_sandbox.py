"""The sandbox command a kernel starts with."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from instructor.classroom.worker import session
from instructor.classroom.worker.isolation import Isolation, Limits, isolation, sandbox_command
from support.graded_class import graded_with


def test_the_sandbox_binds_only_what_the_kernel_needs(tmp_path: Path) -> None:
    if isolation() != "bwrap":
        pytest.skip("bubblewrap is not available here")
    command = sandbox_command(["python", "-c", "pass"], tmp_path, Limits(), uid=61234)
    joined = " ".join(command)
    assert command[0] == "bwrap" and "--unshare-net" in command
    assert f"--bind {tmp_path} {tmp_path}" in joined
    assert "/solutions" not in joined and "autograder" not in joined
    assert any(part.startswith("--as=") for part in command)


@pytest.mark.parametrize("mode", list(Isolation), ids=str)
def test_a_kernel_s_temporary_files_go_with_its_working_folder(mode: Isolation) -> None:
    """What a notebook writes with :mod:`tempfile` is removed with the notebook, not left in
    the machine's /tmp (which, without bubblewrap, the kernel shares)."""
    code = (
        "import os, tempfile\n"
        "with tempfile.NamedTemporaryFile(suffix='.py', delete=False) as made:\n"
        "    print('made:', made.name)\n"
        "print('inside:', os.path.dirname(made.name) == os.getcwd())"
    )
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    with graded_with(mode):
        result = session.execute_notebook(dict(notebook), "temporary", Limits(cell_seconds=60))
    assert result.outcome == "ok", result.detail
    printed = result.notebook["cells"][0]["outputs"][0]["text"]
    assert "inside: True" in printed, printed
    made = Path(printed.split("made: ")[1].split()[0])
    assert not made.exists()
