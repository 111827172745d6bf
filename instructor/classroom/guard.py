"""The grader's guard, loaded into each student's kernel before the notebook's first cell.

A test cell passes when it runs without an error, so a submission that replaces what the
tests rely on (``torch.allclose``, the ``helpers.checks`` functions, builtins, IPython's error
display, the input transformers that turn a cell's text into code) could pass every test with
a wrong answer. The guard snapshots all of these when the kernel starts and the grader runs
:func:`check` before and after every test cell:

* before: anything replaced is put back (the test then runs against the genuine functions)
  and the replacement is reported;
* after: anything replaced *while the test ran* makes that test's result untrustworthy: the
  grader scores it 0 and reports why.

An audit hook, installed first, refuses new audit hooks (they could run code inside a test)
and records network connections, subprocesses and file opens outside the working folder.

This runs inside the sandbox with the student's code, so a submission written against this
very guard could still defeat it; the README says so. It is a second line behind the things a
student cannot reach: the sandbox, the test cells restored from the gradebook, and the
execution status the grader reads from the kernel's replies.
"""

from __future__ import annotations

import json
import os
import sys
import threading

__all__ = ["check", "install"]

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

_state: dict = {}


def _watched_classes() -> list[type]:
    classes: list[type] = []
    torch = sys.modules.get("torch")
    if torch is not None:
        classes += [torch.Tensor, torch._C.TensorBase, torch.nn.Module]
    return classes


def _shell():
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def _audit(event: str, args: tuple) -> None:
    if event == "sys.addaudithook":
        _state["events"].append(AUDITED[event])
        raise RuntimeError("the grader does not allow audit hooks")
    if event in AUDITED:
        detail = ""
        if event == "socket.connect" and len(args) > 1:
            detail = f" to {args[1]!r}"
        _state["events"].append(AUDITED[event] + detail)
    elif event == "open" and args and isinstance(args[0], str):
        path = os.path.abspath(args[0])
        mode = args[1] if len(args) > 1 and isinstance(args[1], str) else "r"
        if not path.startswith(_state["allowed_prefixes"]) and any(c in mode for c in "wax+"):
            _state["events"].append(f"opened {path} for writing")
        elif path.startswith(_state["forbidden_prefixes"]):
            _state["events"].append(f"opened {path}")


def _snapshot() -> dict:
    modules = {}
    for name in WATCHED_MODULES:
        module = sys.modules.get(name)
        if module is not None:
            modules[name] = (module, dict(vars(module)))
    classes = {cls: dict(vars(cls)) for cls in _watched_classes()}
    shell = _shell()
    shell_state = {}
    if shell is not None:
        shell_state = {
            "instance": {n: vars(shell)[n] for n in SHELL_METHODS if n in vars(shell)},
            "classes": {cls: dict(vars(cls)) for cls in type(shell).__mro__[:-1]},
            "lists": {n: list(getattr(shell, n, [])) for n in SHELL_LISTS},
            "custom_exceptions": shell.custom_exceptions,
            "events": {k: list(v) for k, v in shell.events.callbacks.items()},
            "display_pub": shell.display_pub,
            "displayhook": shell.displayhook,
        }
    return {
        "modules": modules,
        "classes": classes,
        "shell": shell_state,
        "sys": {n: getattr(sys, n) for n in SYS_HOOKS},
        "meta_path": list(sys.meta_path),
        "threads": {t.ident for t in threading.enumerate()},
    }


def install(workdir: str, forbidden: tuple[str, ...] = ()) -> None:
    """Snapshot the kernel's state; called once, before the notebook's first cell.

    Args:
        workdir: the submission's working folder (writes elsewhere are reported).
        forbidden: path prefixes whose opening is reported (the course's sources, if visible).
    """
    for name in ("numpy", "numpy.testing", "torch", "torch.testing", "helpers.checks"):
        try:
            __import__(name)
        except ImportError:
            pass
    _state["events"] = []
    _state["allowed_prefixes"] = (os.path.abspath(workdir), "/dev/")
    _state["forbidden_prefixes"] = tuple(forbidden) or ("\0",)
    _state["snapshot"] = _snapshot()
    sys.addaudithook(_audit)


def _differences(restore: bool) -> list[str]:
    """What differs from the snapshot (and, with ``restore``, put it back)."""
    snap = _state["snapshot"]
    found: list[str] = []
    for name, (module, saved) in snap["modules"].items():
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
                found.append(f"{name}.{key} was replaced")
            else:
                continue
            if restore:
                setattr(module, key, value)
    for cls, saved in snap["classes"].items():
        current = dict(vars(cls))
        for key, value in saved.items():
            if current.get(key, _MISSING) is not value:
                found.append(f"{cls.__module__}.{cls.__qualname__}.{key} was replaced")
                if restore:
                    setattr(cls, key, value)
        for key in current.keys() - saved.keys():
            if not key.startswith("__") or key in ("__eq__", "__bool__", "__torch_function__"):
                found.append(f"{cls.__module__}.{cls.__qualname__}.{key} was added")
                if restore:
                    delattr(cls, key)
    shell_snap = snap["shell"]
    shell = _shell()
    if shell is not None and shell_snap:
        instance = vars(shell)
        for key in SHELL_METHODS:
            saved = shell_snap["instance"].get(key, _MISSING)
            if instance.get(key, _MISSING) is not saved:
                found.append(f"IPython's {key} was replaced")
                if restore:
                    if saved is _MISSING:
                        del instance[key]
                    else:
                        instance[key] = saved
        for cls, saved in shell_snap["classes"].items():
            for key, value in saved.items():
                if vars(cls).get(key, _MISSING) is not value:
                    found.append(f"IPython's {cls.__name__}.{key} was replaced")
                    if restore:
                        setattr(cls, key, value)
        for key, saved in shell_snap["lists"].items():
            current = getattr(shell, key, [])
            if list(current) != saved:
                found.append(f"IPython's {key} was changed")
                if restore:
                    current[:] = saved
        if shell.custom_exceptions != shell_snap["custom_exceptions"]:
            found.append("IPython's custom exception handler was set")
            if restore:
                shell.custom_exceptions = shell_snap["custom_exceptions"]
        for event, callbacks in shell.events.callbacks.items():
            foreign = [
                c
                for c in callbacks
                if c not in shell_snap["events"].get(event, [])
                and not _module_of(c).startswith(TRUSTED_CALLBACK_MODULES)
            ]
            if foreign:
                found.append(f"an IPython {event!r} event callback was registered")
                if restore:
                    callbacks[:] = [c for c in callbacks if c not in foreign]
        for key in ("display_pub", "displayhook"):
            if getattr(shell, key) is not shell_snap[key]:
                found.append(f"IPython's {key} was replaced")
                if restore:
                    setattr(shell, key, shell_snap[key])
    for key, value in snap["sys"].items():
        if getattr(sys, key) is not value:
            found.append(f"sys.{key} was replaced")
            if restore:
                setattr(sys, key, value)
    if list(sys.meta_path) != snap["meta_path"]:
        found.append("sys.meta_path was changed")
        if restore:
            sys.meta_path[:] = snap["meta_path"]
    if sys.gettrace() is not None or sys.getprofile() is not None:
        found.append("a trace or profile function was set")
        if restore:
            sys.settrace(None)
            sys.setprofile(None)
    threads = [
        t for t in threading.enumerate() if t.ident not in snap["threads"] and _from_notebook(t)
    ]
    if threads:
        found.append(f"{len(threads)} background thread(s) running ({threads[0].name})")
    return found


_MISSING = object()


def _module_of(function: object) -> str:
    return getattr(function, "__module__", None) or ""


def _from_notebook(thread: threading.Thread) -> bool:
    """Whether a thread runs code written in the notebook (not a library's own thread)."""
    target = getattr(thread, "_target", None) or type(thread).run
    code = getattr(target, "__code__", None)
    filename = code.co_filename if code else ""
    return thread.is_alive() and ("ipykernel_" in filename or filename.startswith("<"))


def check(phase: str, test: str, nonce: str) -> None:
    """Report (and, before a test, undo) every change to what the tests rely on.

    Prints one JSON line that the grader reads from this cell's output.
    """
    found = _differences(restore=True)
    events, _state["events"] = _state["events"], []
    report = {"nonce": nonce, "phase": phase, "test": test, "found": found, "events": events}
    stdout = _state["snapshot"]["sys"]["stdout"]
    stdout.write("__grader_guard__ " + json.dumps(report) + "\n")
    stdout.flush()
