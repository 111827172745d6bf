"""Kernels forked from the zygote: as isolated from each other and from the zygote as
kernels started from scratch, and no process of one outlives its notebook."""

from __future__ import annotations

import json
import os

import nbformat
import pytest

from instructor.classroom.worker import session as execute
from instructor.classroom.worker import zygote as forked_kernel
from instructor.classroom.worker.isolation import Limits

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
            if "instructor.classroom.worker.zygote" in open(f"/proc/{{pid}}/cmdline").read():
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


LEAVE_BEHIND = f"""
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
left = {{}}
for key in (0x5A1, 0x5A2):  # two 1 MiB segments anyone may read, as a student would leave them
    shmid = libc.shmget(key, 1 << 20, 0o1000 | 0o666)  # IPC_CREAT
    address = libc.shmat(shmid, None, 0)
    ctypes.memmove(address, b"answers of the first student", 29)
    left[key] = shmid
left["sem"] = libc.semget(0x5A3, 1, 0o1000 | 0o666)
left["msg"] = libc.msgget(0x5A4, 0o1000 | 0o666)
for folder in ("/tmp", "/dev/shm", "/"):  # folders every kernel of the zygote sees
    try:
        with open(folder.rstrip("/") + "/answers.txt", "w") as handle:
            handle.write("answers of the first student")
        left[folder] = "written"
    except OSError:
        left[folder] = "refused"
print("{REPORT}" + json.dumps({{k if isinstance(k, str) else hex(k): v for k, v in left.items()}}))
"""

FIND_LEFTOVERS = f"""
import json, os
found = {{}}
for kind in ("shm", "sem", "msg"):
    rows = open(f"/proc/sysvipc/{{kind}}").read().splitlines()[1:]
    found[kind] = len(rows)
print("{REPORT}" + json.dumps(found))
"""


def test_a_kernel_leaves_no_shared_memory_or_files_for_the_next(limits: Limits) -> None:
    """SysV IPC objects outlive their process, and the next kernel forked from the same
    zygote shares its IPC namespace; the folders every kernel sees are not writable."""
    left = _run(LEAVE_BEHIND, limits)
    folders = {folder: left.pop(folder) for folder in ("/tmp", "/dev/shm", "/")}
    assert folders == {"/tmp": "refused", "/dev/shm": "refused", "/": "refused"}
    assert min(left.values()) >= 0, f"the first kernel could not make its objects: {left}"
    assert _run(FIND_LEFTOVERS, limits) == {"shm": 0, "sem": 0, "msg": 0}


FLOOD = f"""
import json, os, sys
# The kernel's original stdout (ipykernel keeps a copy of it): the zygote's pipe.
fd = getattr(sys.stdout, "_original_stdstream_copy", None) or 1
os.write(fd, bytes(range(128, 256)))  # not UTF-8: the reader must not stop at it
chunk = b"x" * (1 << 20)
for _ in range(256):
    os.write(fd, chunk)
print("{REPORT}" + json.dumps({{"fd": fd}}))
"""


def _resident_mib() -> float:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def test_what_a_kernel_writes_to_its_inherited_output_is_not_kept(limits: Limits) -> None:
    """The zygote's output pipes are read by the grading worker: what a kernel floods them
    with must be dropped as it comes, not gathered in the worker's memory."""
    import time

    _run("print('report: {}')", limits)  # the zygote is up before the first measurement
    before = _resident_mib()
    _run(FLOOD, limits)
    time.sleep(1.0)  # the drain threads take what is still in the pipe
    grown = _resident_mib() - before
    assert grown < 64, f"the grading process grew by {grown:.0f} MiB for 256 MiB of output"
