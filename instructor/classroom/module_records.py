"""Modules as records of the wire (:mod:`.wire`): what a record may give a module, and
which classes both sides rebuild by name.

A record (:meth:`.wire.Writer.module`) names the module's class and carries its plain
attributes, parameters, buffers and children. The reading side builds the module from it
and then fills it (:func:`fill_module`), which refuses anything but data:

* the kernel (:func:`.probe_kernel.rebuild`) rebuilds a module the grader sent as the class
  it names (:func:`known_layer`), or from the test cell's source;
* the grader (:func:`.probe.stand_in`) never builds a real class from a kernel's record: the
  class name is the student's to choose. A kernel's module is a stand-in whose ``forward``
  runs in the kernel; one that names a class of :func:`known_layer` poses as that class
  (``isinstance``) and nothing more.
"""

from __future__ import annotations

import importlib
from typing import Any

import torch

from .wire import Reader, WireError, is_plain

__all__ = ["KNOWN_MODULES", "fill_module", "known_layer"]

KNOWN_MODULES = ("torch.nn.modules.", "helpers.reference_layers.")
"""Where a class named by a record is imported from: the kernel builds the grader's modules
of these classes as themselves; the grader's stand-in for a kernel's module only poses as
one."""


def fill_module(module: torch.nn.Module, record: dict, reader: Reader) -> torch.nn.Module:
    """Give the bare ``module`` (``nn.Module.__init__`` only) what ``record`` describes: its
    plain attributes, parameters, buffers, children and train/eval flag.

    An attribute is data and nothing more: a plain value (:func:`is_plain`) under a name that
    neither the bare module nor its class holds. A ``forward``, a method, a property or a
    module or tensor where a plain value belongs breaks the protocol."""
    taken = set(vars(module)) | {"training"}
    for key in ("attrs", "params", "buffers", "children"):
        if not isinstance(record.get(key), dict):
            raise WireError(f"a module record without {key}")
        for name in record[key]:
            _check_name(module, name, taken)
            taken.add(name)
    for name, value in record["attrs"].items():
        shown = str(name)[:60]
        plain = reader.value(value)
        if not is_plain(plain):
            raise WireError(f"a module attribute {shown!r} that is not a plain value")
        object.__setattr__(module, name, plain)
    for name, value in record["params"].items():
        tensor = None if value is None else reader.value(value)
        if tensor is not None and not isinstance(tensor, torch.Tensor):
            raise WireError(f"parameter {name} is not a tensor")
        parameter = None if tensor is None else torch.nn.Parameter(tensor, tensor.requires_grad)
        module.register_parameter(str(name), parameter)
    for name, value in record["buffers"].items():
        tensor = None if value is None else reader.value(value)
        if tensor is not None and not isinstance(tensor, torch.Tensor):
            raise WireError(f"buffer {name} is not a tensor")
        module.register_buffer(str(name), tensor)
    for name, child in record["children"].items():
        sub = None if child is None else reader.value(child)
        if sub is not None and not isinstance(sub, torch.nn.Module):
            raise WireError(f"child {name} is not a module")
        module.add_module(str(name), sub)
    module.training = bool(record.get("training", True))
    return module


def _check_name(module: torch.nn.Module, name: str, taken: set[str]) -> None:
    """Refuse a name of a module record that is not new to the bare module and its class."""
    shown = str(name)[:60]
    if not (name.isidentifier() or name.isdigit()) or name.startswith("__") or name in taken:
        raise WireError(f"a module record names {shown!r}, which the module already has")
    if hasattr(type(module), name) and not is_plain(getattr(type(module), name)):
        raise WireError(f"a module record names {shown!r}, which would replace its class's")


def known_layer(class_name: Any) -> type | None:
    """The class named ``class_name`` if both sides have it: one of ``torch.nn``'s own
    modules, or a layer of :mod:`helpers.reference_layers` (the student package). A name,
    not a proof: the grader only makes its stand-ins pose as the class (:mod:`.probe`)."""
    if not isinstance(class_name, str) or not class_name.startswith(KNOWN_MODULES):
        return None
    module_name, _, qualname = class_name.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), qualname, None)
    except ImportError:
        return None
    return cls if isinstance(cls, type) and issubclass(cls, torch.nn.Module) else None
