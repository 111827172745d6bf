"""Kernels forked from the zygote: as isolated from each other and from the zygote as
kernels started from scratch, and no process of one outlives its notebook."""

from __future__ import annotations

import json
import os

import nbformat
import pytest

from instructor.classroom import execute, forked_kernel
from instructor.classroom.sandbox import Limits

pytestmark = pytest.mark.skipif(
    not forked_kernel.zygote_available(), reason="the zygote needs root and bubblewrap"
)

REPORT = "report: "


def _run(code: str, limits: Limits) -> dict:
    """Execute one cell in a forked kernel; the JSON it prints after ``report: ``."""
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    result = execute.execute_notebook(dict(notebook), "forked", limits)
    assert result.outcome == "ok", result.detail
    text = "".join(o.get("text", "") for o in result.notebook["cells"][0]["outputs"] if "text" in o)
    lines = [line for line in text.splitlines() if line.startswith(REPORT)]
    assert lines, f"the cell printed no report: {result.notebook['cells'][0]['outputs']}"
    return json.loads(lines[-1][len(REPORT) :])


ATTACK = f"""
import json, os, socket, subprocess
found = {{"uid": os.getuid(), "euid": os.geteuid()}}
slots = os.path.dirname(os.getcwd())
found["zygote_socket"] = "refused"
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect(os.path.join(slots, ".zygote"))
    found["zygote_socket"] = "connected"
except OSError:
    pass
found["slots"] = "refused"
try:
    os.listdir(slots)
    found["slots"] = "listed"
except OSError:
    pass
found["other_kernel"] = "refused"
try:
    found["other_kernel"] = open(os.path.join(slots, "grade-other", "answer.txt")).read()
except OSError:
    pass
found["zygote_memory"] = "refused"
for pid in os.listdir("/proc"):
    if pid.isdigit() and int(pid) != os.getpid():
        try:
            if "instructor.classroom.zygote" in open(f"/proc/{{pid}}/cmdline").read():
                open(f"/proc/{{pid}}/mem", "rb").read(1)
                found["zygote_memory"] = "read"
        except OSError:
            pass
daemon = subprocess.Popen(["sleep", "300"], start_new_session=True)
found["daemon"] = daemon.pid
print("{REPORT}" + json.dumps(found))
"""


def test_a_forked_kernel_cannot_reach_the_zygote_or_another_kernel(limits: Limits) -> None:
    # Another kernel's folder, as the grader makes it (its user's alone), at a known name.
    other = forked_kernel.zygote_for_worker().slots / "grade-other"
    other.mkdir(mode=0o700, exist_ok=True)
    (other / "answer.txt").write_text("another student's work")
    os.chown(other, 61999, 61999)
    found = _run(ATTACK, limits)
    assert found["uid"] != 0 and found["euid"] != 0, found
    assert found["zygote_socket"] == "refused", found
    assert found["zygote_memory"] == "refused", found
    assert found["slots"] == "refused" and found["other_kernel"] == "refused", found


def test_nothing_a_kernel_starts_outlives_its_notebook(limits: Limits) -> None:
    daemon = _run(ATTACK, limits)["daemon"]
    # The next kernel comes from the same zygote, in the same process namespace.
    check = (
        "import json, os\n"
        f"try:\n    os.kill({daemon}, 0)\n    state = 'alive'\n"
        "except ProcessLookupError:\n    state = 'gone'\n"
        "except PermissionError:\n    state = 'alive'\n"
        f"print('{REPORT}' + json.dumps({{'daemon': state}}))\n"
    )
    assert _run(check, limits) == {"daemon": "gone"}


def test_each_kernel_has_its_own_limits_and_seed(limits: Limits) -> None:
    code = (
        "import json, resource, numpy as np\n"
        "found = {'memory': resource.getrlimit(resource.RLIMIT_AS)[0],\n"
        "         'processes': resource.getrlimit(resource.RLIMIT_NPROC)[0],\n"
        "         'draw': float(np.random.rand())}\n"
        f"print('{REPORT}' + json.dumps(found))\n"
    )
    first, second = _run(code, limits), _run(code, limits)
    assert first["memory"] == limits.memory_mib * 1024 * 1024
    assert first["processes"] == limits.processes
    assert first["draw"] != second["draw"], "forked kernels share numpy's random state"


def test_a_zygote_that_cannot_start_is_an_error_of_the_grader(
    monkeypatch: pytest.MonkeyPatch, limits: Limits
) -> None:
    monkeypatch.setattr(forked_kernel, "_ZYGOTE", None)
    monkeypatch.setattr(
        forked_kernel.Zygote,
        "start",
        classmethod(lambda cls: (_ for _ in ()).throw(forked_kernel.ZygoteError("no course"))),
    )
    with pytest.raises(execute.GraderEnvironmentError, match="cannot load the grader's code"):
        execute.check_kernel_environment(limits)
