"""The kernel's side of a probe: run one graded function on the grader's inputs.

Loaded into each student's kernel at start (as ``__grader_probe__``). The grader writes a
request folder (:mod:`.wire`) and executes ``__grader_probe__.answer(folder)`` silently;
:func:`answer` reads the inputs, calls what the notebook defines under that name (or a
module built by an earlier probe), and writes the outputs back as plain data.

Nothing here decides a grade. The student's code runs in this process and may change
anything in it, this module included; whatever it does, what reaches the grader is data
(:class:`.wire.Reader` checks it), and the grader compares it with answers it computed
itself for inputs the kernel sees only now.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from . import module_records, wire
from .protocol import Measure, Op, Reply, Request, Status

__all__ = ["answer", "rebuild"]

_MODULES: dict[int, torch.nn.Module] = {}
"""Modules built by earlier probes (``id`` -> module), so that later probes can call them."""
_FROM_GRADER: dict[int, tuple[torch.nn.Module, int]] = {}
"""Modules rebuilt here from the grader's (``id`` -> (module, the grader's handle)): sent
back, they are references, and the grader uses its own object. The module is kept, so that
its ``id`` is never reused by a module of the student's."""


def _namespace() -> dict[str, Any]:
    from IPython import get_ipython

    shell = get_ipython()
    return shell.user_ns if shell is not None else {}


def _target(request: Request, reader: wire.Reader) -> Any:
    if request.handle is not None:
        module = _MODULES.get(request.handle)
        if module is None:
            raise LookupError("the grader asked for a module this kernel did not build")
        _load_state(module, request.state, request.training, reader)
        return module
    name = request.name
    namespace = _namespace()
    if name not in namespace:
        raise NameError(f"name {name!r} is not defined")
    return namespace[name]


def _is_callable(value: Any) -> bool:
    """A function or a class (called by the tests), as opposed to a value they read."""
    return callable(value) and not isinstance(value, torch.nn.Module | torch.Tensor)


def _load_state(module: torch.nn.Module, state: list, training: list, reader: wire.Reader) -> None:
    """Give ``module`` the grader's parameters, buffers and train/eval flags."""
    for name, record in state:
        owner_path, _, leaf = name.rpartition(".")
        owner = module.get_submodule(owner_path)
        value = reader.value(record)
        if leaf in owner._parameters:
            current = owner._parameters[leaf]
            if current is None:
                owner._parameters[leaf] = torch.nn.Parameter(value)
            else:
                current.data = value.detach()
        else:
            owner._buffers[leaf] = value
    for path, flag in training:
        module.get_submodule(path).training = bool(flag)


def rebuild(record: dict, reader: wire.Reader) -> torch.nn.Module:
    """A module the grader sent: one this kernel built before (``module_ref``), or one of
    the grader's, rebuilt here from its description (torch's layers, or a class the test
    cell defines, from its source)."""
    if record.get("t") == "module_ref":
        module = _MODULES.get(record.get("handle"))
        if module is None:
            raise LookupError("the grader referred to a module this kernel did not build")
        _load_state(module, record.get("state", []), record.get("training", []), reader)
        return module
    cls = module_records.known_layer(record.get("class"))
    if cls is None and isinstance(record.get("source"), str):
        import math

        namespace = {
            "__name__": "__grader_test__",
            "math": math,
            "torch": torch,
            "nn": torch.nn,
            "F": torch.nn.functional,
        }
        exec(record["source"], namespace)  # noqa: S102 - the grader's own test code
        cls = namespace.get(str(record.get("class")).rpartition(".")[2])
    if not isinstance(cls, type) or not issubclass(cls, torch.nn.Module):
        raise TypeError(f"the kernel cannot rebuild a {record.get('class')}")
    module = cls.__new__(cls)
    torch.nn.Module.__init__(module)
    module_records.fill_module(module, record, reader)
    if type(record.get("handle")) is int:
        _FROM_GRADER[id(module)] = (module, record["handle"])
    return module


def _call(target: Any, args: tuple, kwargs: dict, measure: Measure | None) -> tuple[Any, dict]:
    if measure is None:
        return target(*args, **kwargs), {}
    from helpers import checks

    if measure == Measure.LARGEST_TENSOR:
        result, numel, shape, call = checks.IN_PROCESS.largest_tensor(target, args)
        return result, {"numel": numel, "shape": list(shape), "call": call}
    return None, {"count": checks.IN_PROCESS.torch_calls(target, args)}


def answer(folder: str) -> None:
    """Answer the request in ``folder``: write ``response/`` next to it."""
    request_folder = Path(folder)
    out = wire.Writer(request_folder / "response", references=_FROM_GRADER)
    reply: Reply
    try:
        request = Request.from_json(wire.read_message(request_folder))
        reader = wire.Reader(request_folder)
        reader.modules = lambda record: rebuild(record, reader)
        target = _target(request, reader)
        if request.op == Op.LOOKUP:
            found = {"t": "callable"} if _is_callable(target) else out.value(target)
            reply = Reply(Status.RETURNED, value=found)
        else:
            reader.track = True
            args = tuple(reader.value(r) for r in request.args)
            kwargs = {str(k): reader.value(r) for k, r in request.kwargs}
            reader.track = False
            inputs = reader.tracked
            before = [
                t.detach().clone()
                if isinstance(t, torch.Tensor)
                else np.copy(t)
                if isinstance(t, np.ndarray)
                else None
                for t in inputs
            ]
            if request.rng is not None:
                torch.set_rng_state(reader.value(request.rng))
            result, measured = _call(target, args, kwargs, request.measure)
            reply = Reply(
                Status.RETURNED,
                value=out.value(result),
                measured=measured,
                changed=[
                    (index, out.value(now))
                    for index, (now, then) in enumerate(zip(inputs, before, strict=True))
                    if _changed(now, then)
                ],
            )
    except BaseException as error:  # noqa: BLE001 - every failure goes back as data
        try:
            text = str(error)[: wire.MAX_TEXT]
        except BaseException:  # noqa: BLE001 - a message that cannot be printed
            text = "(an exception whose message cannot be shown)"
        types = [str(t.__name__) for t in type(error).__mro__]
        reply = Reply(Status.RAISED, types=types, message=text)
    _MODULES.update(out.modules)
    out.close(reply.to_json())


def _changed(now: Any, then: Any) -> bool:
    """Whether an input differs from its copy taken before the call."""
    if isinstance(now, torch.Tensor):
        return not (now.shape == then.shape and now.dtype == then.dtype and now.equal(then))
    if isinstance(now, np.ndarray):
        return not np.array_equal(now, then, equal_nan=True)
    return False
