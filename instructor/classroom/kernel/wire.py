"""Values as plain data, for the probes between the grader and a student's kernel.

A probe (:mod:`.judge`, the grader's side; :mod:`.probe`, the kernel's) sends a graded
function's inputs into the sandboxed kernel and its outputs back, both ways in this format
only: a folder holding ``message.json``, where every value is a record ``{"t": kind, ...}``
(:meth:`Writer.value` lists the kinds), and one ``.npy`` file per array, read with
``allow_pickle=False``: object arrays, pickles and code never cross.

The :class:`Reader` trusts nothing: files must be regular files inside the folder (no links),
sizes and nesting are bounded, and any other record raises :class:`WireError`. Only NumPy,
PyTorch and the standard library are imported: the kernel imports this module too.

A module's record names its class and the reading side fills a bare module from it
(:func:`fill_module`, data only). The kernel (:func:`.probe.rebuild`) builds the grader's
modules as the class named (:func:`known_layer`) or from the test cell's source; the grader
(:func:`.judge.stand_in`) never builds a class a kernel names, only a stand-in whose
``forward`` runs in the kernel and which at most poses (``isinstance``) as a known layer.
"""

from __future__ import annotations

import importlib
import io
import json
import math
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

MESSAGE = "message.json"
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
MAX_ARRAY_BYTES = 256 * 1024 * 1024
"""All the arrays of one message together."""
MAX_WIRE_DEPTH = 16
MAX_WIRE_ITEMS = 200_000
MAX_TEXT = 20_000
"""Characters kept of a string (an exception's message, a name)."""

# dtypes NumPy cannot hold travel as raw integers of the same size.
_VIEWED = {torch.bfloat16: torch.int16, torch.float16: torch.float16}
_DTYPES = {
    str(d).removeprefix("torch."): d
    for d in (
        torch.bool,
        torch.uint8,
        torch.int8,
        torch.int16,
        torch.int32,
        torch.int64,
        torch.float16,
        torch.bfloat16,
        torch.float32,
        torch.float64,
        torch.complex64,
        torch.complex128,
    )
}


class WireError(ValueError):
    """A message that is not in the format: the submission broke the probe protocol."""


@dataclass(frozen=True)
class Opaque:
    """A value the format cannot carry (only its type's name came back)."""

    type_name: str

    def __repr__(self) -> str:
        return f"<a {self.type_name} object the grader cannot read>"


def is_plain(value: Any) -> bool:
    """None, a bool, number or string, or a tuple of those: what a module's attribute may be."""
    if value is None or isinstance(value, bool | int | float | str):
        return True
    if isinstance(value, tuple):
        return all(is_plain(v) for v in value)
    return False


@dataclass(kw_only=True)
class _Tracking:
    track: bool = False
    """While true, every tensor, array and generator written (or read) is appended to
    :attr:`tracked`: the reader's list is in the writer's order."""
    tracked: list[Any] = field(default_factory=list)

    def _track(self, value: Any) -> None:
        if self.track:
            self.tracked.append(value)


@dataclass
class Writer(_Tracking):
    """Writes values into ``folder`` (created): :meth:`value` records, :meth:`close` the JSON."""

    folder: Path
    arrays: int = 0
    modules: dict[int, Any] = field(default_factory=dict)
    """Modules written (``id`` -> module), so that the kernel can find them again."""
    sources: Callable[[type], str | None] | None = None
    """The source of a module's class that the other side cannot import (a class the
    grader's test cell defines), or None."""
    references: dict[int, tuple[Any, int]] = field(default_factory=dict)
    """Modules the other side sent (``id`` -> (module, its handle there)): written back as
    a ``module_ref`` to that handle, so that the other side gets its own object again."""

    def __post_init__(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)

    def _array(self, array: np.ndarray) -> str:
        name = f"a{self.arrays}.npy"
        self.arrays += 1
        np.save(self.folder / name, np.asarray(array, order="C"), allow_pickle=False)
        return name

    def tensor(self, tensor: torch.Tensor) -> dict:
        self._track(tensor)
        plain = torch.Tensor.detach(tensor).cpu()
        if plain.is_sparse or plain.layout != torch.strided:
            plain = plain.to_dense()
        dtype = plain.dtype
        if dtype not in _DTYPES.values():
            return {"t": "opaque", "type": f"tensor of dtype {dtype}"}
        if dtype in _VIEWED:
            plain = plain.contiguous().view(_VIEWED[dtype])
        array = plain.resolve_conj().resolve_neg().contiguous().numpy()
        return {
            "t": "tensor",
            "array": self._array(array),
            "dtype": str(dtype).removeprefix("torch."),
            "requires_grad": bool(tensor.requires_grad),
        }

    def value(self, value: Any, depth: int = 0) -> dict:
        """``value`` as a record: ``none``, ``bool``, ``int``, ``float``, ``complex``, ``str``,
        ``tuple``, ``list``, ``dict``, ``tensor``, ``ndarray``, ``scalar`` (NumPy's),
        ``dtype``, ``size``, ``generator`` (its state), ``module`` (:meth:`module`), else
        ``opaque`` (only its type's name travels)."""
        if depth > MAX_WIRE_DEPTH:
            return {"t": "opaque", "type": "a value nested too deep"}
        if value is None:
            return {"t": "none"}
        if isinstance(value, torch.Tensor):
            return self.tensor(value)
        if isinstance(value, np.ndarray):
            if value.dtype.hasobject:
                return {"t": "opaque", "type": "numpy object array"}
            self._track(value)
            return {"t": "ndarray", "array": self._array(value)}
        if isinstance(value, np.generic):
            if isinstance(value, np.object_):
                return {"t": "opaque", "type": "numpy object"}
            return {"t": "scalar", "array": self._array(np.asarray(value))}
        if type(value) in (bool, int):
            return {"t": type(value).__name__, "v": value}
        if type(value) is float:
            return {"t": "float", "v": repr(value)}
        if type(value) is complex:
            return {"t": "complex", "v": [repr(value.real), repr(value.imag)]}
        if type(value) is str:
            return {"t": "str", "v": value[:MAX_TEXT]}
        if isinstance(value, torch.dtype):
            return {"t": "dtype", "v": str(value).removeprefix("torch.")}
        if type(value) is torch.Size:
            return {"t": "size", "v": [int(v) for v in value]}
        if type(value) in (tuple, list):
            items = [self.value(v, depth + 1) for v in value]
            return {"t": type(value).__name__, "items": items}
        if type(value) is dict and all(type(k) in (str, int) for k in value):
            pairs = [[self.value(k), self.value(v, depth + 1)] for k, v in value.items()]
            return {"t": "dict", "items": pairs}
        if isinstance(value, torch.Generator):
            self._track(value)
            return {"t": "generator", "state": self._array(value.get_state().numpy())}
        if isinstance(value, torch.nn.Module):
            return self.module(value, depth)
        return {"t": "opaque", "type": type(value).__qualname__[:200]}

    def module(self, module: torch.nn.Module, depth: int = 0) -> dict:
        """An ``nn.Module`` as a record: its class, plain attributes, parameters, buffers and
        children (the grader builds a stand-in from it: :mod:`.judge`)."""
        if id(module) in self.references:
            return {"t": "module_ref", "handle": self.references[id(module)][1]}
        reference = getattr(module, "wire_reference", None)
        if callable(reference):
            return reference(self)
        cls = type(module)
        source = self.sources(cls) if self.sources else None
        if self.sources and source is None and cls.__module__ == "__grader_test__":
            # The grader's side (the kernel's writer has no sources, and sends back what it
            # rebuilt): a class of a test's hidden part. Its code, name, attributes and
            # parameters stay in the grader; the test fails here, as the reference's would.
            raise TypeError("the grader sends no class of a test's hidden part to the kernel")
        self.modules[id(module)] = module
        internal = set(vars(torch.nn.Module())) | {"training"}
        attrs = {
            name: self.value(value, depth + 1)
            for name, value in vars(module).items()
            if name not in internal and is_plain(value)
        }
        params, buffers = (
            {name: None if t is None else self.tensor(t) for name, t in tensors.items()}
            for tensors in (module._parameters, module._buffers)
        )
        children = {
            name: None if child is None else self.module(child, depth + 1)
            for name, child in module._modules.items()
        }
        return {
            "t": "module",
            "handle": id(module),
            "class": f"{cls.__module__}.{cls.__qualname__}"[:300],
            "source": source,
            "training": bool(module.training),
            "attrs": attrs,
            "params": params,
            "buffers": buffers,
            "children": children,
        }

    def close(self, message: dict) -> None:
        (self.folder / MESSAGE).write_text(json.dumps(message))


def _regular_file(path: Path, limit: int) -> bytes:
    """The bytes of ``path``, which must be a regular file (not a link) of at most ``limit``.

    Opened non-blocking: a FIFO in its place would otherwise hold the grader until someone
    writes to it; it is then refused as not regular."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        raise WireError(f"cannot open {path.name}: {error.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise WireError(f"{path.name} is not a regular file")
        if info.st_size > limit:
            raise WireError(f"{path.name} holds {info.st_size:,} bytes, more than {limit:,}")
        with os.fdopen(fd, "rb", closefd=False) as file:
            return file.read(limit + 1)
    finally:
        os.close(fd)


def read_message(folder: Path) -> dict:
    """The JSON message in ``folder``, checked to be a JSON object of bounded size."""
    data = _regular_file(folder / MESSAGE, MAX_MESSAGE_BYTES)
    try:
        message = json.loads(data)
    except (ValueError, RecursionError) as error:
        raise WireError(f"{MESSAGE} is not JSON: {error}") from None
    if not isinstance(message, dict):
        raise WireError(f"{MESSAGE} is not a JSON object")
    return message


@dataclass
class Reader(_Tracking):
    """Reads values written by :class:`Writer` in ``folder``; trusts nothing."""

    folder: Path
    array_bytes: int = 0
    items: int = 0
    modules: Callable[[dict], Any] | None = None
    """Turns a ``module`` or ``module_ref`` record into a module (each side has its own:
    :func:`.judge.stand_in`, :func:`.probe.rebuild`); without it they are refused."""

    def array(self, name: Any) -> np.ndarray:
        if not isinstance(name, str) or not name.endswith(".npy") or "/" in name or name[0] == ".":
            raise WireError(f"bad array file name {str(name)[:80]!r}")
        data = _regular_file(self.folder / name, MAX_ARRAY_BYTES - self.array_bytes)
        self.array_bytes += len(data)
        try:
            array = np.load(io.BytesIO(data), allow_pickle=False)
        except (ValueError, OSError, EOFError) as error:
            raise WireError(f"{name} is not an .npy array: {error}") from None
        if not isinstance(array, np.ndarray) or array.dtype.hasobject:
            raise WireError(f"{name} is not a plain array")
        return array

    def tensor(self, record: dict) -> torch.Tensor:
        dtype = _DTYPES.get(record.get("dtype"))  # type: ignore[arg-type]
        if dtype is None:
            raise WireError(f"unknown tensor dtype {str(record.get('dtype'))[:40]!r}")
        array = self.array(record.get("array"))
        tensor = torch.from_numpy(array.copy())
        if dtype in _VIEWED:
            if tensor.dtype != _VIEWED[dtype]:
                raise WireError("a half-precision tensor in the wrong raw dtype")
            tensor = tensor.view(dtype)
        elif tensor.dtype != dtype:
            raise WireError(f"a tensor said to be {dtype} holds {tensor.dtype}")
        if record.get("requires_grad") is True and (dtype.is_floating_point or dtype.is_complex):
            tensor.requires_grad_(True)
        self._track(tensor)
        return tensor

    def value(self, record: Any, depth: int = 0) -> Any:
        self.items += 1
        if self.items > MAX_WIRE_ITEMS or depth > MAX_WIRE_DEPTH + 2:
            raise WireError("a value too large or nested too deep")
        if not isinstance(record, dict) or not isinstance(record.get("t"), str):
            raise WireError(f"not a value record: {str(record)[:80]}")
        kind = record["t"]
        plain = record.get("v")
        if kind == "none":
            return None
        if kind in ("bool", "int") and type(plain).__name__ == kind:
            return plain
        if kind == "float" and isinstance(plain, str):
            return self._float(plain)
        if kind == "complex" and isinstance(plain, list) and len(plain) == 2:
            return complex(self._float(plain[0]), self._float(plain[1]))
        if kind == "str" and isinstance(plain, str):
            return plain[:MAX_TEXT]
        if kind == "dtype" and plain in _DTYPES:
            return _DTYPES[plain]
        if kind == "size" and isinstance(plain, list) and all(type(v) is int for v in plain):
            return torch.Size(plain)
        if kind in ("tuple", "list") and isinstance(record.get("items"), list):
            items = [self.value(v, depth + 1) for v in record["items"]]
            return tuple(items) if kind == "tuple" else items
        if kind == "dict" and isinstance(record.get("items"), list):
            result = {}
            for pair in record["items"]:
                if not isinstance(pair, list) or len(pair) != 2:
                    raise WireError("a dict item is not a pair")
                key = self.value(pair[0], depth + 1)
                if type(key) not in (str, int):
                    raise WireError("a dict key that is not a string or an integer")
                result[key] = self.value(pair[1], depth + 1)
            return result
        if kind == "tensor":
            return self.tensor(record)
        if kind == "ndarray":
            array = self.array(record.get("array"))
            self._track(array)
            return array
        if kind == "scalar":
            array = self.array(record.get("array"))
            if array.shape != ():
                raise WireError("a NumPy scalar that is not 0-dimensional")
            return array[()]
        if kind == "generator":
            state = self.array(record.get("state"))
            if state.dtype != np.uint8 or state.ndim != 1:
                raise WireError("a generator state that is not bytes")
            generator = torch.Generator()
            try:
                generator.set_state(torch.from_numpy(state.copy()))
            except RuntimeError as error:
                raise WireError(f"a generator state torch refuses: {error}") from None
            self._track(generator)
            return generator
        if kind == "opaque":
            return Opaque(str(record.get("type", "unknown"))[:200])
        if kind in ("module", "module_ref"):
            if self.modules is None:
                raise WireError("a module where a plain value was expected")
            return self.modules(record)
        raise WireError(f"unknown value record {kind[:40]!r}")

    @staticmethod
    def _float(text: Any) -> float:
        if not isinstance(text, str) or len(text) > 40:
            raise WireError("a float that is not a short string")
        try:
            number = float(text)
        except ValueError:
            raise WireError(f"not a float: {text!r}") from None
        if math.isnan(number) and text.lower() not in ("nan", "-nan"):
            raise WireError(f"not a float: {text!r}")
        return number


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
            shown = str(name)[:60]
            usable = (name.isidentifier() or name.isdigit()) and not name.startswith("__")
            if not usable or name in taken:
                raise WireError(f"a module record names {shown!r}, which the module already has")
            if hasattr(type(module), name) and not is_plain(getattr(type(module), name)):
                raise WireError(f"a module record names {shown!r}, which would replace its class's")
            taken.add(name)
    for name, value in record["attrs"].items():
        shown = str(name)[:60]
        plain = reader.value(value)
        if not is_plain(plain):
            raise WireError(f"a module attribute {shown!r} that is not a plain value")
        object.__setattr__(module, name, plain)
    adders = {
        "params": (torch.Tensor, module.register_parameter),
        "buffers": (torch.Tensor, module.register_buffer),
        "children": (torch.nn.Module, module.add_module),
    }
    for key, (kind, add) in adders.items():
        for name, value in record[key].items():
            item = None if value is None else reader.value(value)
            if item is not None and not isinstance(item, kind):
                raise WireError(f"{key}: {str(name)[:60]!r} is not a {kind.__name__}")
            if key == "params" and item is not None:
                item = torch.nn.Parameter(item, item.requires_grad)
            add(str(name), item)
    module.training = bool(record.get("training", True))
    return module


def known_layer(class_name: Any) -> type | None:
    """The class named ``class_name`` if both sides have it: one of ``torch.nn``'s own
    modules, or a layer of :mod:`helpers.reference_layers` (the student package). A name,
    not a proof: the grader only makes its stand-ins pose as the class (:mod:`.judge`)."""
    if not isinstance(class_name, str) or not class_name.startswith(KNOWN_MODULES):
        return None
    module_name, _, qualname = class_name.rpartition(".")
    try:
        cls = getattr(importlib.import_module(module_name), qualname, None)
    except ImportError:
        return None
    return cls if isinstance(cls, type) and issubclass(cls, torch.nn.Module) else None
