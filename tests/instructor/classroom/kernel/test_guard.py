"""The guard's watchers, in this process (the guard itself runs inside each student's kernel:
proven end to end in test_grade.py), and the guard installed in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import types
from pathlib import Path

import pytest

from instructor.classroom.kernel import guard


@pytest.fixture
def fake_module(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    module = types.ModuleType("fake_checks")
    module.check = lambda: None
    module.tolerance = 1e-6
    monkeypatch.setitem(sys.modules, "fake_checks", module)
    monkeypatch.setattr(guard, "WATCHED_MODULES", ("fake_checks", "not_imported"))
    return module


def test_replaced_module_functions_are_found_and_put_back(fake_module: types.ModuleType) -> None:
    watch = guard.ModuleWatch()
    genuine = fake_module.check
    fake_module.check = lambda: "always passes"
    del fake_module.tolerance
    assert watch.differences(restore=False) == [
        "fake_checks.check was replaced",
        "fake_checks.tolerance was deleted",
    ]
    assert watch.differences(restore=True)
    assert fake_module.check is genuine and fake_module.tolerance == 1e-6
    assert watch.differences(restore=True) == []


def test_a_replaced_module_object_is_put_back(fake_module: types.ModuleType) -> None:
    watch = guard.ModuleWatch()
    sys.modules["fake_checks"] = types.ModuleType("fake_checks")
    assert "sys.modules['fake_checks'] was replaced" in watch.differences(restore=True)
    assert sys.modules["fake_checks"] is fake_module


def test_methods_added_to_or_replaced_in_watched_classes(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tensor:
        def allclose(self) -> bool:
            return False

    monkeypatch.setattr(guard, "_watched_classes", lambda: [Tensor])
    watch = guard.ClassWatch()
    genuine = Tensor.allclose
    Tensor.allclose = lambda self: True
    Tensor.__eq__ = lambda self, other: True
    where = f"{Tensor.__module__}.{Tensor.__qualname__}"
    assert watch.differences(restore=True) == [
        f"{where}.allclose was replaced",
        f"{where}.__eq__ was added",
    ]
    assert Tensor.allclose is genuine and "__eq__" not in vars(Tensor)


def test_interpreter_hooks_are_found_and_put_back() -> None:
    watch = guard.SysWatch()
    genuine = sys.breakpointhook
    sys.breakpointhook = lambda *a, **k: None
    try:
        assert watch.differences(restore=True) == ["sys.breakpointhook was replaced"]
    finally:
        sys.breakpointhook = genuine
    assert watch.differences(restore=False) == []


def test_outside_ipython_the_shell_watch_has_nothing_to_watch() -> None:
    assert guard.ShellWatch().differences(restore=True) == []


def test_threads_started_by_notebook_code_are_reported() -> None:
    watch = guard.ThreadWatch()
    stop = threading.Event()
    namespace: dict = {"stop": stop}
    exec(compile("def spin():\n    stop.wait(10)\n", "<cell>", "exec"), namespace)  # noqa: S102
    thread = threading.Thread(target=namespace["spin"], name="spinner")
    thread.start()
    try:
        assert watch.differences(restore=True) == ["1 background thread(s) running (spinner)"]
    finally:
        stop.set()
        thread.join()
    assert watch.differences(restore=True) == []


def test_the_audit_log_names_what_the_kernel_did(tmp_path: Path) -> None:
    log = guard.AuditLog(str(tmp_path), ("/course/solutions",))
    log.hook("socket.connect", (None, ("93.184.216.34", 80)))
    log.hook("open", (str(tmp_path / "mine.txt"), "w"))
    log.hook("open", ("/elsewhere/file", "w"))
    log.hook("open", ("/course/solutions/01/01.ipynb", "r"))
    with pytest.raises(RuntimeError):
        log.hook("sys.addaudithook", ())
    assert log.take() == [
        "opened a network connection to ('93.184.216.34', 80)",
        "opened /elsewhere/file for writing",
        "opened /course/solutions/01/01.ipynb",
        "tried to add an audit hook (refused)",
    ]
    assert log.take() == []


GUARDED = """
import sys
import instructor.classroom.kernel.guard as g
third_party = sorted(m for m in sys.modules if m.split(".")[0] not in sys.stdlib_module_names)
g.install({workdir!r})
import math
genuine = math.sqrt
math.sqrt = lambda x: 0
g.check("pre", "test_x", "n1")
assert math.sqrt is genuine
g.check("post", "test_x", "n2")
print("imported:", ",".join(m for m in third_party if not m.startswith(("_", "__"))))
"""


def test_installed_the_guard_reports_and_undoes_once_per_check(tmp_path: Path) -> None:
    code = GUARDED.format(workdir=str(tmp_path))
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    lines = result.stdout.splitlines()
    reports = [json.loads(line.removeprefix(guard.REPORT_PREFIX)) for line in lines[:2]]
    assert [r["nonce"] for r in reports] == ["n1", "n2"]
    assert reports[0]["found"] == ["math.sqrt was replaced"]
    assert reports[1]["found"] == []
    assert lines[2] == (
        "imported: instructor,instructor.classroom,"
        "instructor.classroom.kernel,instructor.classroom.kernel.guard"
    )


def test_a_library_s_own_wrapper_of_its_function_is_no_replacement() -> None:
    """torch._dynamo wraps torch.manual_seed when first imported (a first optimiser step
    does it): the new value is the saved one's wrapper, from torch's own files."""
    import functools

    import torch

    genuine = torch.random.manual_seed
    by_torch = torch._disable_dynamo(genuine)
    assert guard.library_wrapper(torch, by_torch, genuine)
    by_a_student = functools.wraps(genuine)(lambda seed: genuine(0))
    assert not guard.library_wrapper(torch, by_a_student, genuine)
    assert not guard.library_wrapper(torch, by_torch, torch.randn)  # wraps another function
    # torch_geometric, on import, puts functions of its own that call the originals in
    # torch.index_select and torch.select: an installed library's, not the student's.
    import torch_geometric  # noqa: F401

    assert guard.library_wrapper(
        torch, torch.index_select, torch.index_select.__globals__["_old_index_select"]
    )
    # The same shape of function written in a notebook cell is the student's.
    namespace: dict = {"_old": genuine}
    exec(compile("def seed(s):\n    return _old(0)\n", "/tmp/ipykernel_1/9.py", "exec"), namespace)  # noqa: S102
    assert not guard.library_wrapper(torch, namespace["seed"], genuine)


def _run_as_cell(source: str, name: str, namespace: dict) -> None:
    """Run ``source`` as IPython runs a cell: compiled under a name of its own, its text in
    linecache with no mtime."""
    import linecache

    linecache.cache[name] = (len(source), None, source.splitlines(keepends=True), name)
    exec(compile(source, name, "exec"), namespace)  # noqa: S102


def test_the_audit_log_keeps_only_what_the_student_s_code_did(tmp_path: Path) -> None:
    student_code = "def answer():\n    audit.hook('subprocess.Popen', ('sh', ['sh', '-c', 'x']))\n"
    audit = guard.AuditLog(str(tmp_path), (), student=guard.StudentCode([student_code]))
    # The same function defined in a cell of other text: not the student's cell.
    _run_as_cell(student_code + "answer()\n", "/tmp/ipykernel_1/1.py", {"audit": audit})
    assert audit.take() == []
    # The student's cell defines it; a course cell calls it: the act is the student's.
    namespace = {"audit": audit}
    _run_as_cell(student_code, "/tmp/ipykernel_1/2.py", namespace)
    _run_as_cell("answer()\n", "/tmp/ipykernel_1/3.py", namespace)
    assert audit.take() == ["started a subprocess (sh -c x)"]
    # A library's own act, with no student cell on the stack, is not the student's.
    audit.hook("subprocess.Popen", ("fc-list", ["fc-list", "--help"]))
    assert audit.take() == []
    # Without knowledge of the hand-in every act counts.
    everything = guard.AuditLog(str(tmp_path), ())
    everything.hook("subprocess.Popen", ("fc-list", ["fc-list", "--help"]))
    assert everything.take() == ["started a subprocess (fc-list --help)"]
