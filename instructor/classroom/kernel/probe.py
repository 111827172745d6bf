"""The probe protocol: what the grader asks a student's kernel, and what the kernel replies.

One probe is one request folder (:mod:`.wire`): the grader writes a :class:`Request` as its
``message.json`` and runs ``__grader_probe__.answer(folder)`` in the kernel, where this module
is loaded at start; :func:`answer` calls what the notebook defines under the requested name
(or a module an earlier probe built) and writes a :class:`Reply` into ``response/``. The
values inside are :mod:`.wire` records; this module types the envelope around them.

Nothing here decides a grade. The student's code runs in this process and may change
anything in it, this module included; whatever it does, what reaches the grader is data
(:meth:`Reply.from_json` and :class:`.wire.Reader` check it, and anything else raises
:class:`.wire.WireError`), compared with answers the grader computed itself for inputs the
kernel sees only now.
"""

from __future__ import annotations

import copy
import math
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

import numpy as np
import torch

from instructor.classroom.kernel import wire
from instructor.classroom.kernel.wire import MAX_TEXT, WireError

__all__ = ["Measure", "Op", "Reply", "Request", "Status"]


class Op(StrEnum):
    """What a request asks."""

    CALL = "call"
    """Call a function or class of the notebook, or a module an earlier probe built."""
    LOOKUP = "lookup"
    """Say what the notebook defines under a name: a callable, or its value."""


class Measure(StrEnum):
    """An in-kernel measurement of a call (``helpers.checks``' ``_..._while`` primitives)."""

    LARGEST_TENSOR = "largest_tensor"
    TORCH_CALLS = "torch_calls"


class Status(StrEnum):
    """How the kernel's side of a call ended."""

    RETURNED = "returned"
    RAISED = "raised"


@dataclass(frozen=True)
class Request:
    """One call (or look-up) the grader asks of the kernel."""

    op: Op
    name: str | None = None
    """The notebook's name to call or look up (None: :attr:`handle`)."""
    handle: int | None = None
    """A module an earlier probe built, by the kernel's handle."""
    label: str = ""
    """What is called, for messages (``layer_norm``, ``EncoderBlock.forward``)."""
    state: list[list[Any]] = field(default_factory=list)
    """``[name, tensor record]``: the parameters and buffers of the module :attr:`handle`."""
    training: list[list[Any]] = field(default_factory=list)
    """``[submodule path, flag]``: train/eval flags of the module :attr:`handle`."""
    args: list[dict] = field(default_factory=list)
    kwargs: list[list[Any]] = field(default_factory=list)
    """``[name, value record]``."""
    rng: dict | None = None
    """The grader's torch random state, as a tensor record."""
    measure: Measure | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Request:
        """The request the grader wrote (the kernel reads it; the grader is trusted)."""
        request = cls(**data)
        measure = None if request.measure is None else Measure(request.measure)
        return replace(request, op=Op(request.op), measure=measure)


@dataclass(frozen=True)
class Reply:
    """The kernel's answer: a value (:attr:`Status.RETURNED`) or an exception (``RAISED``)."""

    status: Status
    value: dict | None = None
    """The result, as a value record."""
    measured: dict[str, Any] = field(default_factory=dict)
    """What :attr:`Request.measure` asked for (checked by the grader where it is used)."""
    changed: list[tuple[int, dict]] = field(default_factory=list)
    """``(index, value record)``: inputs the call changed in place, by their index among the
    tensors, arrays and generators of the request's arguments (in writing order)."""
    types: list[str] = field(default_factory=list)
    """The exception's type and its bases, most derived first."""
    message: str = ""
    """The exception's message."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"changed": [list(pair) for pair in self.changed]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Reply:
        """The kernel's reply, checked: anything but this shape raises :class:`WireError`."""
        status = data.get("status")
        if status == Status.RAISED:
            types, message = data.get("types"), data.get("message")
            if not isinstance(types, list) or not isinstance(message, str):
                raise WireError("an exception record without types or message")
            kept = [t for t in types[:50] if isinstance(t, str)]
            return cls(Status.RAISED, types=kept, message=message[:MAX_TEXT])
        if status != Status.RETURNED:
            raise WireError(f"unknown status {str(status)[:40]!r}")
        measured = data.get("measured", {})
        if not isinstance(measured, dict):
            raise WireError("measurements that are not a JSON object")
        changed = data.get("changed", [])
        if not isinstance(changed, list) or not all(
            isinstance(p, list) and len(p) == 2 and type(p[0]) is int for p in changed
        ):
            raise WireError("a list of changed inputs that is not [index, value] pairs")
        return cls(
            Status.RETURNED,
            value=data.get("value"),
            measured=measured,
            changed=[(p[0], p[1]) for p in changed],
        )


_MODULES: dict[int, torch.nn.Module] = {}
"""Modules built by earlier probes (``id`` -> module), so that later probes can call them."""
_FROM_GRADER: dict[int, tuple[torch.nn.Module, int]] = {}
"""Modules rebuilt here from the grader's (``id`` -> (module, the grader's handle)): sent
back, they are references, and the grader uses its own object. The module is kept, so that
its ``id`` is never reused by a module of the student's."""


def _kernel_namespace() -> dict[str, Any]:
    from IPython import get_ipython

    shell = get_ipython()
    return shell.user_ns if shell is not None else {}


def _built(handle: Any, state: list, training: list, reader: wire.Reader) -> torch.nn.Module:
    """A module an earlier probe built, given the grader's parameters, buffers and
    train/eval flags for it."""
    module = _MODULES.get(handle)
    if module is None:
        raise LookupError("the grader asked for a module this kernel did not build")
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
    return module


def _target(request: Request, reader: wire.Reader) -> Any:
    if request.handle is not None:
        return _built(request.handle, request.state, request.training, reader)
    namespace = _kernel_namespace()
    if request.name not in namespace:
        raise NameError(f"name {request.name!r} is not defined")
    return namespace[request.name]


def rebuild(record: dict, reader: wire.Reader) -> torch.nn.Module:
    """A module the grader sent: one this kernel built before (``module_ref``), or one of
    the grader's, rebuilt here from its description (torch's layers, or a class the test
    cell defines, from its source)."""
    if record.get("t") == "module_ref":
        return _built(
            record.get("handle"), record.get("state", []), record.get("training", []), reader
        )
    cls = wire.known_layer(record.get("class"))
    if cls is None and isinstance(record.get("source"), str):
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
    wire.fill_module(module, record, reader)
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
            # A function or a class (the tests call it), as opposed to a value they read.
            called = callable(target) and not isinstance(target, torch.nn.Module | torch.Tensor)
            found = {"t": "callable"} if called else out.value(target)
            reply = Reply(Status.RETURNED, value=found)
        else:
            reader.track = True
            args = tuple(reader.value(r) for r in request.args)
            kwargs = {str(k): reader.value(r) for k, r in request.kwargs}
            reader.track = False
            inputs = reader.tracked
            before = copy.deepcopy(inputs)
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
