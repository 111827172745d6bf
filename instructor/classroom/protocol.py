"""The probe protocol: what the grader asks a student's kernel, and what the kernel replies.

One probe is one request folder (:mod:`.wire`): the grader writes a :class:`Request` as its
``message.json``, with the arrays next to it, and runs ``__grader_probe__.answer(folder)``
in the kernel; the kernel (:mod:`.probe_kernel`) writes a :class:`Reply` into the folder's
``response/``. Both sides use these classes, and :meth:`Reply.from_json` trusts nothing: a
reply that is not exactly this shape raises :class:`.wire.WireError` (the submission broke
the protocol).

Values inside a request or a reply (the arguments, the result, the changed inputs) are
:mod:`.wire` records; this module types the envelope around them. Only the standard library
is imported: the kernel imports this module too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from .wire import MAX_TEXT, WireError

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
        return {
            "op": str(self.op),
            "name": self.name,
            "handle": self.handle,
            "label": self.label,
            "state": self.state,
            "training": self.training,
            "args": self.args,
            "kwargs": self.kwargs,
            "rng": self.rng,
            "measure": None if self.measure is None else str(self.measure),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Request:
        """The request the grader wrote (the kernel reads it; the grader is trusted)."""
        measure = data.get("measure")
        return cls(
            op=Op(data.get("op", Op.CALL)),
            name=data.get("name"),
            handle=data.get("handle"),
            label=str(data.get("label", "")),
            state=list(data.get("state", [])),
            training=list(data.get("training", [])),
            args=list(data.get("args", [])),
            kwargs=list(data.get("kwargs", [])),
            rng=data.get("rng"),
            measure=None if measure is None else Measure(measure),
        )


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
        if self.status == Status.RAISED:
            return {"status": str(self.status), "types": self.types, "message": self.message}
        return {
            "status": str(self.status),
            "value": self.value,
            "measured": self.measured,
            "mutated": [[index, record] for index, record in self.changed],
        }

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
        changed = data.get("mutated", [])
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
