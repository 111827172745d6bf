"""The grader's guard, loaded into each student's kernel before the notebook's first cell.

Defence in depth: no verdict depends on it. The test cells run in the grader's process
(:mod:`.judge`), and the kernel only answers probes with data. But the student's code still
runs the graded functions in this kernel, so what it replaces there (``torch`` functions,
the ``helpers.checks`` module, builtins, IPython's machinery) is worth knowing. Each watcher
(:class:`ModuleWatch`, ...) snapshots its part when the kernel starts, and the grader runs
:func:`check` in a cell of its own before every test cell: anything replaced is put back
(the probes of that test then run against the genuine functions) and reported, for the
integrity report. An audit hook (:class:`AuditLog`), installed first, refuses new audit
hooks and records network connections, subprocesses and file opens outside the working
folder. Only the standard library is imported: the guard is imported before anything else.

This runs inside the sandbox with the student's code, so a submission written against this
very guard can defeat it (``tests/support/forgeries.py`` does); it is a second line behind
what a student cannot reach: the sandbox, the test cells restored from the gradebook and run
in the grader, and the probes' replies read as data.
"""

from __future__ import annotations

import json
import linecache
import os
import sys
import sysconfig
import threading
import types
from collections.abc import Iterable, Mapping

__all__ = ["REPORT_PREFIX", "STUDENT_CELL", "student_cells"]

REPORT_PREFIX = "__grader_guard__ "
"""Starts the line :func:`check` prints (the grader reads it: :mod:`.session`)."""

STUDENT_CELL = "grader_student_cell"
"""A code cell's metadata key, set by the grader's staging on every code cell of a hand-in
(whatever the file said): whether the student wrote the cell (:class:`StudentCode`)."""


def student_cells(cells: Iterable[Mapping]) -> tuple[str, ...] | None:
    """The sources of the code cells the staging marked as the student's; None when none is
    marked either way (a notebook the grader did not stage: every act is the student's)."""
    code = [c for c in cells if c.get("cell_type") == "code"]
    if not any(STUDENT_CELL in c.get("metadata", {}) for c in code):
        return None
    return tuple(str(c.get("source", "")) for c in code if c["metadata"].get(STUDENT_CELL))


WATCHED_MODULES = (
    "builtins",
    "math",
    "numpy",
    "numpy.linalg",
    "numpy.testing",
    "torch",
    "torch.linalg",
    "torch.nn",
    "torch.nn.functional",
    "torch.testing",
    "helpers",
    "helpers.checks",
    "helpers.data",
    "helpers.plotting",
    "helpers.measure",
    "helpers.reference_layers",
    "helpers.setup",
)
SHELL_METHODS = (
    "run_cell",
    "run_cell_async",
    "run_ast_nodes",
    "run_code",
    "transform_cell",
    "transform_ast",
    "showtraceback",
    "_showtraceback",
    "showsyntaxerror",
    "get_exception_only",
    "CustomTB",
    "set_custom_exc",
    "should_run_async",
)
SHELL_LISTS = ("input_transformers_cleanup", "input_transformers_post", "ast_transformers")
# sys.excepthook, builtins.input and getpass are swapped by ipykernel around every request.
SYS_HOOKS = ("displayhook", "stdout", "stderr", "breakpointhook")
KERNEL_SWAPPED = {("builtins", "input"), ("builtins", "raw_input")}
# Event callbacks these packages register are the kernel's own (matplotlib's inline figures).
TRUSTED_CALLBACK_MODULES = ("matplotlib", "IPython", "ipykernel", "ipywidgets", "tqdm", "comm")
AUDITED = {
    "socket.connect": "opened a network connection",
    "socket.bind": "opened a network socket",
    "subprocess.Popen": "started a subprocess",
    "os.system": "ran a shell command",
    "os.fork": "forked the kernel",
    "os.exec": "replaced the kernel process",
    "os.kill": "sent a signal",
    "ctypes.dlopen": "loaded a C library through ctypes",
    "sys.addaudithook": "tried to add an audit hook (refused)",
}

_MISSING = object()


def _watched_classes() -> list[type]:
    torch = sys.modules.get("torch")
    return [torch.Tensor, torch._C.TensorBase, torch.nn.Module] if torch else []


def _package_folder(owner: object) -> str | None:
    """The folder of the installed package ``owner`` (a module, or a class) belongs to."""
    name = (
        owner.__name__ if isinstance(owner, types.ModuleType) else getattr(owner, "__module__", "")
    )
    top = sys.modules.get(str(name).split(".")[0])
    paths = list(getattr(top, "__path__", None) or ())
    return os.path.realpath(paths[0]) + os.sep if paths else None


def _installed_folders() -> tuple[str, ...]:
    """Where installed packages live (the environment's site-packages)."""
    paths = sysconfig.get_paths()
    return tuple(
        os.path.realpath(paths[key]) + os.sep for key in ("purelib", "platlib") if key in paths
    )


def _keeps(new: types.FunctionType, old: object) -> bool:
    """Whether ``new`` holds on to ``old`` to call it: as ``__wrapped__``, a global of its
    module, or a variable of its closure."""
    if vars(new).get("__wrapped__") is old:
        return True
    if any(value is old for value in new.__globals__.values()):
        return True
    return any(cell.cell_contents is old for cell in new.__closure__ or () if _filled(cell))


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


def library_wrapper(owner: object, new: object, old: object) -> bool:
    """Whether ``new`` is an installed library's wrapper of ``old``: a plain function compiled
    from a file of ``owner``'s package or of the environment's installed packages, that holds
    on to ``old`` (``__wrapped__``, a module global, a closure variable) to call it.

    Libraries do this on import or first use (importing ``torch._dynamo``, as a first
    optimiser step does, wraps ``torch.manual_seed``; importing ``torch_geometric`` replaces
    ``torch.index_select`` and ``torch.select`` by functions that call them); it is no act
    of the student's. Code a notebook compiles has no file of an installed package (the
    scan of the code names ``compile`` and ``exec`` apart)."""
    if type(new) is not types.FunctionType or not _keeps(new, old):
        return False
    filename = os.path.realpath(new.__code__.co_filename)
    folders = (_package_folder(owner) or "\0", *_installed_folders())
    return filename.startswith(folders) and os.path.isfile(filename)


def _replaced(
    owner: object, current: Mapping[str, object], saved: dict, where: str, restore: bool
) -> list[str]:
    """What of ``saved`` ``current`` (``owner``'s) no longer holds; ``restore`` puts it back
    (deletes what was ``_MISSING``). A library's own wrapper of a saved value
    (:func:`library_wrapper`) becomes the saved value instead."""
    changed = []
    for key, value in saved.items():
        now = current.get(key, _MISSING)
        if now is value:
            continue
        if library_wrapper(owner, now, value):
            saved[key] = now
        else:
            changed.append(key)
    for key in changed if restore else ():
        if saved[key] is _MISSING:
            delattr(owner, key)
        else:
            setattr(owner, key, saved[key])
    return [f"{where}{key} was replaced" for key in changed]


def _shell():
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def _normalised(code: str) -> str:
    return "\n".join(line.rstrip() for line in code.splitlines()).strip()


class StudentCode:
    """Which running code is the student's: code compiled from the cells the student wrote
    (the hand-in's code cells that are not the release's: answers, edited and added cells).

    What the course's own cells, the libraries they call and the grader's cells do (a first
    figure builds matplotlib's font cache with ``fc-list``) is no act of the student's. An
    act is the student's when any frame on the stack runs code of a student cell: a
    student's function called from a course cell, a thread or callback it started, a probe
    of it. ``None`` (nothing known of the hand-in): every act counts as the student's."""

    def __init__(self, sources: Iterable[str] | None) -> None:
        self.codes: set[str] | None = None
        if sources is None:
            return
        shell = _shell()
        transform = shell.transform_cell if shell is not None else (lambda text: text)
        self.codes = set()
        for source in sources:
            self.codes.add(_normalised(source))
            try:
                self.codes.add(_normalised(transform(source)))
            except Exception:  # noqa: BLE001 - a cell IPython cannot transform runs as typed
                pass

    def on_stack(self) -> bool:
        """Whether the code running now was called, at any depth, from a student cell."""
        if self.codes is None:
            return True
        frame = sys._getframe(1)
        while frame is not None:
            entry = linecache.cache.get(frame.f_code.co_filename)
            # IPython caches each cell's code under a name of its own, with no mtime.
            if entry is not None and len(entry) == 4 and entry[1] is None:
                if _normalised("".join(entry[2])) in self.codes:
                    return True
            frame = frame.f_back
        return False


class AuditLog:
    """The audit hook's findings since the last check (network, processes, file writes),
    each an act of the student's code (:class:`StudentCode`)."""

    def __init__(
        self,
        workdir: str,
        forbidden: tuple[str, ...],
        writable: tuple[str, ...] = (),
        student: StudentCode | None = None,
    ) -> None:
        self.student = student or StudentCode(None)
        self.events: list[str] = []
        self.allowed_prefixes = (
            os.path.abspath(workdir),
            *(os.path.abspath(w) for w in writable),
            "/dev/",
        )
        self.forbidden_prefixes = tuple(forbidden) or ("\0",)

    def hook(self, event: str, args: tuple) -> None:
        if event == "sys.addaudithook":
            self.events.append(AUDITED[event])
            raise RuntimeError("the grader does not allow audit hooks")
        found = ""
        if event in AUDITED:
            detail = ""
            if event == "socket.connect" and len(args) > 1:
                detail = f" to {args[1]!r}"
            elif event == "subprocess.Popen" and len(args) > 1:
                detail = f" ({_command(args[1])})"
            found = AUDITED[event] + detail
        elif event == "open" and args and isinstance(args[0], str):
            path = os.path.abspath(args[0])
            mode = args[1] if len(args) > 1 and isinstance(args[1], str) else "r"
            if not path.startswith(self.allowed_prefixes) and any(c in mode for c in "wax+"):
                found = f"opened {path} for writing"
            elif path.startswith(self.forbidden_prefixes):
                found = f"opened {path}"
        if found and self.student.on_stack():
            self.events.append(found)

    def take(self) -> list[str]:
        """The events since the last call."""
        events, self.events = self.events, []
        return events


def _command(argv: object) -> str:
    """A subprocess's command line, short: the instructor reads which program it ran."""
    parts = [argv] if isinstance(argv, str | bytes) else list(argv or ())[:6]
    text = " ".join(p.decode(errors="replace") if isinstance(p, bytes) else str(p) for p in parts)
    return text if len(text) <= 120 else text[:117] + "..."


class ModuleWatch:
    """The watched modules (``WATCHED_MODULES``): their entries in ``sys.modules`` and the
    functions and values they hold."""

    def __init__(self) -> None:
        self.saved = {}
        for name in WATCHED_MODULES:
            module = sys.modules.get(name)
            if module is not None:
                self.saved[name] = (module, dict(vars(module)))

    def differences(self, restore: bool) -> list[str]:
        found: list[str] = []
        for name, (module, saved) in self.saved.items():
            if sys.modules.get(name) is not module:
                found.append(f"sys.modules[{name!r}] was replaced")
                if restore:
                    sys.modules[name] = module
            current = vars(module)
            for key, value in saved.items():
                if key not in current:
                    found.append(f"{name}.{key} was deleted")
                elif current[key] is not value:
                    if (name, key) in KERNEL_SWAPPED or (
                        name == "builtins" and key.startswith("_") and not key.startswith("__")
                    ):
                        continue  # the kernel's own swaps and IPython's `_`, `__` bookkeeping
                    if library_wrapper(module, current[key], value):
                        saved[key] = current[key]
                        continue
                    found.append(f"{name}.{key} was replaced")
                else:
                    continue
                if restore:
                    setattr(module, key, value)
        return found


class ClassWatch:
    """The methods of the classes the tests use (``torch.Tensor``, ``nn.Module``)."""

    def __init__(self) -> None:
        self.saved = {cls: dict(vars(cls)) for cls in _watched_classes()}

    def differences(self, restore: bool) -> list[str]:
        found: list[str] = []
        for cls, saved in self.saved.items():
            where = f"{cls.__module__}.{cls.__qualname__}"
            found += _replaced(cls, vars(cls), saved, f"{where}.", restore)
            for key in vars(cls).keys() - saved.keys():
                if not key.startswith("__") or key in ("__eq__", "__bool__", "__torch_function__"):
                    found.append(f"{where}.{key} was added")
                    if restore:
                        delattr(cls, key)
        return found


class ShellWatch:
    """IPython's shell: its methods, input transformers, exception handlers, event
    callbacks and display hooks (nothing to watch outside IPython)."""

    def __init__(self) -> None:
        shell = _shell()
        self.shell = shell
        if shell is None:
            return
        self.instance = {n: vars(shell).get(n, _MISSING) for n in SHELL_METHODS}
        self.classes = {cls: dict(vars(cls)) for cls in type(shell).__mro__[:-1]}
        self.lists = {n: list(getattr(shell, n, [])) for n in SHELL_LISTS}
        self.custom_exceptions = shell.custom_exceptions
        self.events = {k: list(v) for k, v in shell.events.callbacks.items()}
        self.hooks = {key: getattr(shell, key) for key in ("display_pub", "displayhook")}

    def differences(self, restore: bool) -> list[str]:
        shell = _shell()
        if self.shell is None or shell is None:
            return []
        found = _replaced(shell, vars(shell), self.instance, "IPython's ", restore)
        for cls, saved in self.classes.items():
            found += _replaced(cls, vars(cls), saved, f"IPython's {cls.__name__}.", restore)
        for key, saved in self.lists.items():
            current = getattr(shell, key, [])
            if list(current) != saved:
                found.append(f"IPython's {key} was changed")
                if restore:
                    current[:] = saved
        if shell.custom_exceptions != self.custom_exceptions:
            found.append("IPython's custom exception handler was set")
            if restore:
                shell.custom_exceptions = self.custom_exceptions
        for event, callbacks in shell.events.callbacks.items():
            foreign = [
                c
                for c in callbacks
                if c not in self.events.get(event, [])
                and not (getattr(c, "__module__", None) or "").startswith(TRUSTED_CALLBACK_MODULES)
            ]
            if foreign:
                found.append(f"an IPython {event!r} event callback was registered")
                if restore:
                    callbacks[:] = [c for c in callbacks if c not in foreign]
        hooks = {key: getattr(shell, key) for key in self.hooks}
        return found + _replaced(shell, hooks, self.hooks, "IPython's ", restore)


class SysWatch:
    """The interpreter's hooks: ``sys`` streams and display hooks (``SYS_HOOKS``), the import
    system's ``meta_path``, trace and profile functions."""

    def __init__(self) -> None:
        self.hooks = {n: getattr(sys, n) for n in SYS_HOOKS}
        self.meta_path = list(sys.meta_path)

    def differences(self, restore: bool) -> list[str]:
        found = _replaced(sys, vars(sys), self.hooks, "sys.", restore)
        if list(sys.meta_path) != self.meta_path:
            found.append("sys.meta_path was changed")
            if restore:
                sys.meta_path[:] = self.meta_path
        if sys.gettrace() is not None or sys.getprofile() is not None:
            found.append("a trace or profile function was set")
            if restore:
                sys.settrace(None)
                sys.setprofile(None)
        return found


def _from_notebook(thread: threading.Thread) -> bool:
    """Whether a thread runs code written in the notebook (not a library's own thread)."""
    target = getattr(thread, "_target", None) or type(thread).run
    code = getattr(target, "__code__", None)
    filename = code.co_filename if code else ""
    return thread.is_alive() and ("ipykernel_" in filename or filename.startswith("<"))


class ThreadWatch:
    """Threads started by the notebook's code (reported; a thread cannot be undone)."""

    def __init__(self) -> None:
        self.known = {t.ident for t in threading.enumerate()}

    def differences(self, restore: bool) -> list[str]:  # the watchers' protocol
        threads = [
            t for t in threading.enumerate() if t.ident not in self.known and _from_notebook(t)
        ]
        if threads:
            return [f"{len(threads)} background thread(s) running ({threads[0].name})"]
        return []


class Guard:
    """The guard's state in the kernel: the audit log and the watchers, in report order."""

    def __init__(self, audit: AuditLog) -> None:
        self.audit = audit
        self.sys = SysWatch()
        self.watchers = (ModuleWatch(), ClassWatch(), ShellWatch(), self.sys, ThreadWatch())


_guard: Guard | None = None


def install(
    workdir: str,
    forbidden: tuple[str, ...] = (),
    writable: tuple[str, ...] = (),
    student_cells: tuple[str, ...] | None = None,
) -> None:
    """Snapshot the kernel's state; called once, before the notebook's first cell.

    Args:
        workdir: the submission's working folder (writes elsewhere are reported).
        forbidden: path prefixes whose opening is reported (the course's sources, if visible).
        writable: other folders the kernel writes to (the probes' answers).
        student_cells: the sources of the cells the student wrote (:class:`StudentCode`);
            None: every act is reported.
    """
    global _guard
    for name in ("numpy", "numpy.testing", "torch", "torch.testing", "helpers.checks"):
        try:
            __import__(name)
        except ImportError:
            pass
    _guard = Guard(AuditLog(workdir, forbidden, writable, StudentCode(student_cells)))
    sys.addaudithook(_guard.audit.hook)


def check(phase: str, test: str, nonce: str) -> None:
    """Report (and, before a test, undo) every change to what the tests rely on.

    Prints one JSON line that the grader reads from this cell's output.
    """
    found = [item for watcher in _guard.watchers for item in watcher.differences(restore=True)]
    events = _guard.audit.take()
    report = {"nonce": nonce, "phase": phase, "test": test, "found": found, "events": events}
    stdout = _guard.sys.hooks["stdout"]  # the kernel's own, whatever the notebook's sys.stdout
    stdout.write(REPORT_PREFIX + json.dumps(report) + "\n")
    stdout.flush()
