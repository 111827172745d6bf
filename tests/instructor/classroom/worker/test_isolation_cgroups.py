"""``cgroups``: a kernel's cgroup in either version, from the mounts a machine has.

The parsing is checked on the mount tables of three kinds of machine; the rest on this
machine's own hierarchies, each version alone (cgroup v1 only, v2 only): what a cgroup of
that version keeps (every process, even one that left its session; the CPU time) and
limits (processes), and what :meth:`Layout.missing` then names. Needs root and writable
cgroups: skipped otherwise (the grader then says what is not isolated,
``test_kernels_share_nothing.py``).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from instructor.classroom.worker import isolation as cgroups

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

MIB = 1024 * 1024

# This machine's kind: v1 controllers, an empty v2 hierarchy, the memory cgroup nested.
MIXED_MOUNTS = """\
30 25 0:26 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
31 25 0:27 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
32 25 0:28 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
33 25 0:29 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
34 25 0:30 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
35 25 0:31 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
MIXED_CGROUP = """\
9:name=systemd:/
8:pids:/
4:memory:/process_api/42d7
2:cpuacct:/
1:cpu:/
0::/
"""
# A systemd machine: v2 only, the grader in a session scope.
UNIFIED_MOUNTS = "29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"
UNIFIED_CGROUP = "0::/user.slice/user-1000.slice/session-2.scope\n"
# A container: cpu and cpuacct mounted together, the mount's root the container's cgroup.
CONTAINER_MOUNTS = (
    "40 35 0:40 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro,nosuid - cgroup cgroup rw,cpuacct,cpu\n"
)
CONTAINER_CGROUP = "3:cpu,cpuacct:/docker/abc\n"


def test_the_grader_s_own_cgroup_is_found_in_each_hierarchy() -> None:
    mixed = cgroups._mounts(MIXED_MOUNTS, MIXED_CGROUP)
    assert [(m.version, str(m.directory), sorted(m.controllers)) for m in mixed] == [
        (1, "/sys/fs/cgroup/cpu", ["cpu"]),
        (1, "/sys/fs/cgroup/cpuacct", ["cpuacct"]),
        (1, "/sys/fs/cgroup/memory/process_api/42d7", ["memory"]),
        (1, "/sys/fs/cgroup/pids", ["pids"]),
        (2, "/sys/fs/cgroup/unified", []),
    ]
    unified = cgroups._mounts(UNIFIED_MOUNTS, UNIFIED_CGROUP)
    assert [str(m.directory) for m in unified] == [
        "/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope"
    ]
    container = cgroups._mounts(CONTAINER_MOUNTS, CONTAINER_CGROUP)
    assert [(str(m.directory), sorted(m.controllers)) for m in container] == [
        ("/sys/fs/cgroup/cpu,cpuacct", ["cpu", "cpuacct"])
    ]


def test_nothing_written_means_everything_is_named() -> None:
    assert cgroups.Layout().missing() == list(cgroups.WHAT.values())
    assert cgroups.Layout().describe() == "no cgroups"


@pytest.fixture(params=[1, 2])
def version_alone(request: pytest.FixtureRequest) -> Iterator[cgroups.Layout]:
    """This machine's hierarchies of one version only, as a layout of their own."""
    mounts = [m for m in cgroups._mounts() if m.version == request.param]
    found = cgroups._discover(mounts)
    if not found.bases:
        pytest.skip(f"no cgroup v{request.param} hierarchy can be written here")
    yield found
    for base in found.bases:
        cgroups._remove_folder(base.path)


# A process that starts a daemon (double fork, session of its own, parent gone), then works
# 0.5 s of CPU time and waits.
TREE = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(300)
    os._exit(0)
os.wait()
start = time.process_time()
while time.process_time() - start < 0.5:
    pass
print("ready", flush=True)
time.sleep(300)
"""


def test_a_kernel_cgroup_keeps_every_process_and_its_cpu_time(
    version_alone: cgroups.Layout,
) -> None:
    group = cgroups.kernel_cgroup(512 * MIB, 1.0, 16, version_alone)
    assert group is not None
    before = group.cpu_seconds()
    process = subprocess.Popen(
        group.enter_command([sys.executable, "-c", TREE]), stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        members = group.pids()
        assert process.pid in members and len(members) == 2, members  # the daemon too
        used = group.cpu_seconds()
        if version_alone.clock is not None:
            assert before is not None and used is not None and used - before >= 0.45
        group.kill()
        assert group.pids() == set()
        assert process.wait(timeout=10) == -9
        for pid in members:
            assert not Path(f"/proc/{pid}").exists() or _zombie(pid)
    finally:
        process.kill()
        group.close()
    assert not any(folder.exists() for _, folder in group.folders)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z"
    except OSError:
        return True


FORKS = """
import os, time
forked = 0
for _ in range(40):
    try:
        if os.fork() == 0:
            os.close(1)  # the test reads the parent's line: it must not wait for the children
            os.close(2)
            time.sleep(30)
            os._exit(0)
        forked += 1
    except OSError:
        break
print(forked, flush=True)
"""


def test_the_limits_are_those_of_the_kernel_as_a_whole(version_alone: cgroups.Layout) -> None:
    """What each version limits here; the rest is named as not isolated."""
    group = cgroups.kernel_cgroup(512 * MIB, 0.5, 8, version_alone)
    assert group is not None
    try:
        done = subprocess.run(
            group.enter_command([sys.executable, "-c", FORKS]),
            capture_output=True,
            text=True,
            timeout=60,
        )
        forked = int(done.stdout)
        if "pids" in version_alone.controllers:
            assert forked < 8, f"{forked} children with a limit of 8 tasks"
        else:
            assert cgroups.WHAT["pids"] in version_alone.missing()
        written = {
            name: (folder / name).read_text().strip()
            for _, folder in group.folders
            for name in ("cpu.cfs_quota_us", "cpu.max", "memory.limit_in_bytes", "memory.max")
            if (folder / name).exists()
        }
        if "cpu" in version_alone.controllers:
            assert written.get("cpu.cfs_quota_us", written.get("cpu.max", "")).startswith("50000")
        if "memory" in version_alone.controllers:
            memory = written.get("memory.limit_in_bytes", written.get("memory.max"))
            assert memory == str(512 * MIB), written
        for controller in set(cgroups.CONTROLLERS) - version_alone.controllers:
            assert cgroups.WHAT[controller] in version_alone.missing()
    finally:
        group.close()


def test_the_folders_of_a_grader_that_died_are_swept(version_alone: cgroups.Layout) -> None:
    """A Dask worker ended by its nanny removes nothing: the next grader to start ends what
    its kernels left and removes its folders."""
    base = version_alone.bases[0]
    finished = subprocess.Popen(["true"])
    finished.wait()
    stale = base.path.parent / f"grade-{finished.pid}-0dead"
    kernel = stale / "kernel-0dead"
    kernel.mkdir(parents=True)
    left = subprocess.Popen(
        cgroups._enter_prefix([kernel / "cgroup.procs"]) + ["sleep", "300"],
    )
    try:
        for _ in range(1000):  # until the shell has moved itself in
            if str(left.pid) in (kernel / "cgroup.procs").read_text().split():
                break
            time.sleep(0.01)
        mount = cgroups._Mount(base.version, base.path.parent, frozenset())
        cgroups._sweep(mount)
        assert left.wait(timeout=10) == -9
        assert not stale.exists()
        assert base.path.exists()  # a live grader's folder stays
    finally:
        left.kill()
        cgroups._remove_folder(kernel)
        cgroups._remove_folder(stale)
