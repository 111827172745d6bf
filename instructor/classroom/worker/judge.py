"""A test cell judged in the worker's process: the verdict comes from code the student cannot reach.

:func:`run_test` executes one test cell's source (restored from the gradebook) in a fresh
namespace of the worker's process. The names the cell reads and does not define
(:func:`free_names`) are looked up in the student's kernel through a :class:`Channel`:
functions and classes become :class:`RemoteFunction` stand-ins whose calls are probes
(:mod:`instructor.classroom.kernel.wire` carries the data, trusting nothing that comes
back), values come back as plain data. The test's own code, its expected answers, the
``helpers.checks`` comparisons and their messages run here. What can only be measured in
the kernel is a best-effort check (:data:`BEST_EFFORT`), named in the integrity report.
"""

from __future__ import annotations

import ast
import builtins
import copy
import io
import itertools
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch
from nbformat import NotebookNode
from nbformat.v4 import new_output
from torch import nn

from helpers import checks
from helpers.checks import GraderStop
from instructor import anatomy
from instructor.classroom.kernel import wire
from instructor.classroom.kernel.probe import Measure, Op, Reply, Request, Status
from instructor.classroom.worker import ANSWER_CHARS, CellSeen, FailedPart, Outcome
from instructor.mistake_tags import tags_seen


class ProbeError(GraderStop):
    """The kernel's answer broke the probe protocol (missing, malformed, out of bounds)."""


class ProbeTimeout(GraderStop):
    """The grader stopped a probe at its time limit."""


class KernelGone(GraderStop):
    """The kernel died while it answered a probe."""


class RemoteError(Exception):
    """An exception of a type with no built-in counterpart, raised by the student's code."""


# Exceptions of these types are raised again as themselves; any other type as its nearest
# built-in base (an ``AxisError`` as ``ValueError``), else as ``RemoteError``.
_NOT_RAISED_AGAIN = {"SystemExit", "KeyboardInterrupt", "GeneratorExit", "BaseException"}


def _exception(types: list[Any], message: str) -> BaseException:
    first = types[0] if types and isinstance(types[0], str) else "exception"
    error: BaseException = RemoteError(f"{first}: {message}")
    for name in types:
        if not isinstance(name, str) or name in _NOT_RAISED_AGAIN:
            continue
        candidate = getattr(builtins, name, None)
        if isinstance(candidate, type) and issubclass(candidate, Exception):
            error = candidate(message)
            break
    # The kernel's own type name and message, which helpers.checks.checked_call quotes, so
    # that a student reads the same message in the kernel and from the grader (the built-in
    # type raised here has another name, and a KeyError's str() quotes its message again).
    error.kernel_exception = (first, message)  # type: ignore[attr-defined]
    return error


@dataclass(frozen=True)
class ChangedInput:
    """An input that a call changed in the kernel; the grader's own object is unchanged."""

    function: str
    """What was called: a graded function's name, or ``<Class>.forward``."""
    original: Any
    """The grader's object (a tensor, an array, a generator) as the test passed it."""

    def describe(self) -> str:
        """The input, for a message: ``"of f (a tensor of shape (1024, 8))"``."""
        what = self.original
        if isinstance(what, nn.Parameter):
            kind = f"a parameter of shape {tuple(what.shape)} of a layer it was given"
        elif isinstance(what, torch.Tensor | np.ndarray):
            noun = "a tensor" if isinstance(what, torch.Tensor) else "an array"
            kind = f"{noun} of shape {tuple(what.shape)}"
        else:
            kind = f"a {type(what).__name__}"
        return f"of {self.function} ({kind})"


@dataclass
class Channel:
    """Requests to one kernel, each in its own folder under ``root``: the kernel may read
    it but write only its ``response`` folder (owned by ``uid``, the kernel's user, when the
    grader runs as root). ``run`` executes one line in the kernel within a time limit in
    seconds (``None``: the cell's), raising :class:`ProbeTimeout` or :class:`KernelGone`.
    """

    root: Path
    run: Callable[[str, float | None], None]
    uid: int | None = None
    count: itertools.count = field(default_factory=itertools.count)
    calls: int = 0
    measured: list[Measure] = field(default_factory=list)
    sources: Callable[[type], str | None] | None = None
    """The source of a class the test cell defines, for a module of it sent as an input."""
    changed: list[ChangedInput] = field(default_factory=list)
    """Inputs the kernel changed in place (never copied into the grader's objects)."""
    sent: dict[int, nn.Module] = field(default_factory=dict)
    """The grader's modules sent (``id`` -> module): one sent back is the grader's own again."""

    def __deepcopy__(self, memo: dict) -> Channel:
        return self  # copies of a stand-in module share their kernel

    def __copy__(self) -> Channel:
        return self

    def _folders(self) -> tuple[Path, Path]:
        folder = self.root / f"p{next(self.count)}"
        folder.mkdir(mode=0o755)
        response = folder / "response"
        response.mkdir(mode=0o700)
        if self.uid is not None:
            os.chown(response, self.uid, self.uid)
        return folder, response

    def request(
        self,
        label: str,
        args: tuple,
        kwargs: dict,
        *,
        name: str | None = None,
        module: RemoteModule | None = None,
        measure: Measure | None = None,
        seconds: float | None = None,
    ) -> tuple[Any, dict]:
        """Call the notebook's ``name`` (or the kernel's object of the stand-in ``module``, in
        the stand-in's state): its result and what was measured (``{}`` without ``measure``),
        or raise what it raised."""
        self.calls += 1
        if measure:
            self.measured.append(measure)
        folder, response = self._folders()
        writer = wire.Writer(folder, sources=self.sources)
        reference = module.wire_reference(writer) if module is not None else {}
        writer.track = True
        arg_records = [writer.value(a) for a in args]
        kwarg_records = [[str(k), writer.value(v)] for k, v in kwargs.items()]
        writer.track = False
        if any(record.get("t") == "opaque" for record in arg_records):
            raise TypeError("the grader cannot send this argument to the kernel")
        request = Request(
            Op.CALL,
            name=name,
            handle=reference.get("handle"),
            label=label,
            state=reference.get("state", []),
            training=reference.get("training", []),
            args=arg_records,
            kwargs=kwarg_records,
            rng=writer.tensor(torch.get_rng_state()),
            measure=measure,
        )
        self._send(writer, request, seconds)
        self.sent.update(writer.modules)
        # The kernel's random state never comes back (the student would choose the grader's
        # next inputs), but a call that drew numbers there must not leave the grader's state
        # as it was: two calls in a row (dropout in training mode) would draw the same.
        torch.rand(1)
        return self._read(response, writer.tracked, called=label)

    def _send(self, writer: wire.Writer, request: Request, seconds: float | None) -> None:
        writer.close(request.to_json())
        self.run(f"__grader_probe__.answer({str(writer.folder)!r})", seconds)

    def _read(
        self, response: Path, inputs: list[Any], lookup: str = "", called: str = ""
    ) -> tuple[Any, dict]:
        # realpath differs for a link, is_dir is false for anything but a folder.
        if not response.is_dir() or os.path.realpath(response) != str(response):
            raise ProbeError("the kernel removed or replaced its answer folder")
        reader = wire.Reader(response)
        reader.modules = lambda record: stand_in(record, reader, self)
        try:
            reply = Reply.from_json(wire.read_message(response))
            if reply.status == Status.RAISED:
                raise _exception(reply.types, reply.message)
            for index, record in reply.changed:
                original = inputs[index] if 0 <= index < len(inputs) else None
                if not isinstance(original, torch.Tensor | np.ndarray):
                    raise wire.WireError(f"input {index} is not an array the grader sent")
                changed = reader.value(record)
                kind = np.ndarray if isinstance(original, np.ndarray) else torch.Tensor
                if not isinstance(changed, kind):
                    raise wire.WireError(f"a changed input that is not a {kind.__name__}")
                self.changed.append(ChangedInput(called, original))
            record = reply.value
            if lookup and isinstance(record, dict) and record.get("t") == "callable":
                value = RemoteFunction(lookup, self)
            else:
                value = reader.value(record)
        except wire.WireError as error:
            raise ProbeError(str(error)) from None
        return value, reply.measured

    def lookup(self, name: str) -> Any:
        """What the notebook defines under ``name``: a :class:`RemoteFunction` for a function
        or a class, else its value (raises ``NameError`` when it is not defined)."""
        folder, response = self._folders()
        self._send(wire.Writer(folder), Request(Op.LOOKUP, name=name, label=name), None)
        return self._read(response, [], lookup=name)[0]


@dataclass
class RemoteFunction:
    """Stands for the function (or class) the notebook defines under ``name``."""

    name: str
    channel: Channel

    @property
    def __name__(self) -> str:  # the checks print a function's __name__
        return self.name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.probe(args, kwargs)[0]

    def probe(self, args: tuple, kwargs: dict | None = None, **options: Any) -> tuple[Any, dict]:
        """``self(*args, **kwargs)`` and what was measured; ``options``: the ``measure`` or
        ``seconds`` (a time limit the grader keeps) of :meth:`Channel.request`."""
        return self.channel.request(self.name, args, kwargs or {}, name=self.name, **options)


class RemoteModule(nn.Module):
    """Stands for a module the kernel made; its ``forward`` is a probe. A subclass made by
    :func:`remote_class` is also an instance of the torch layer the kernel's record names."""

    def __init__(self, channel: Channel, handle: int, class_name: str) -> None:
        # Not super().__init__(): after this class, a posing subclass's method order reaches
        # the torch layer's __init__, which wants its own arguments; the record fills it.
        nn.Module.__init__(self)
        self._probe = (channel, handle)
        self._class_name = class_name

    def __deepcopy__(self, memo: dict) -> RemoteModule:
        clone = type(self).__new__(type(self))
        memo[id(self)] = clone
        for key, value in vars(self).items():
            object.__setattr__(clone, key, copy.deepcopy(value, memo))
        return clone

    def _get_name(self) -> str:
        return self._class_name.rpartition(".")[2]

    def wire_reference(self, writer: wire.Writer) -> dict:
        """How :class:`.wire.Writer` sends this module: the kernel's object, with this state."""
        return {
            "t": "module_ref",
            "handle": self._probe[1],
            "state": [[k, writer.tensor(v)] for k, v in self.state_dict(keep_vars=True).items()],
            "training": [[name, m.training] for name, m in self.named_modules()],
        }

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        channel = self._probe[0]
        return channel.request(f"{self._get_name()}.forward", args, kwargs, module=self)[0]


_POSING: dict[type, type[RemoteModule]] = {}


def remote_class(claimed: type[nn.Module] | None) -> type[RemoteModule]:
    """:class:`RemoteModule`, or its subclass that is also an instance of ``claimed`` (a
    torch layer a kernel's record names): the stand-in's type answers ``isinstance`` as the
    kernel's object would, and its ``forward`` is still the probe."""
    if claimed is None or issubclass(claimed, RemoteModule):
        return RemoteModule
    if claimed not in _POSING:
        name = f"Remote{claimed.__name__}"
        try:
            with warnings.catch_warnings():  # torch warns on subclassing its deprecated layers
                warnings.simplefilter("ignore")
                posing = type(name, (RemoteModule, claimed), {"__module__": __name__})
        except TypeError:  # no consistent method order with that class: a plain stand-in
            posing = RemoteModule
        _POSING[claimed] = posing
    return _POSING[claimed]


def stand_in(record: dict, reader: wire.Reader, channel: Channel) -> nn.Module:
    """The grader's stand-in for the kernel's module ``record``: a module the grader sent
    (``module_ref``) as its own object, any other as a :class:`RemoteModule`. Never the real
    class the record names: that name is the student's to choose."""
    if type(record.get("handle")) is not int:
        raise wire.WireError("a module record without a handle")
    if record.get("t") == "module_ref":
        own = channel.sent.get(record["handle"])
        if own is None:
            raise wire.WireError("a reference to a module the grader did not send")
        return own
    if record.get("t") != "module":
        raise wire.WireError("not a module record")
    class_name = str(record.get("class"))
    if class_name.startswith("__grader_test__."):
        raise wire.WireError(f"a module of the grader's class {class_name[:80]} it did not send")
    cls = remote_class(wire.known_layer(class_name))
    module = cls.__new__(cls)
    RemoteModule.__init__(module, channel, record["handle"], class_name[:300])
    return wire.fill_module(module, record, reader)


BEST_EFFORT = {
    Measure.LARGEST_TENSOR: "check_largest_tensor (the largest tensor made)",
    Measure.TORCH_CALLS: "check_no_loop_over_positions (torch calls counted)",
}
"""In-kernel measurements, by name, and how the integrity report calls them."""
DECIDED_OUTSIDE = {
    Measure.LARGEST_TENSOR: "check_without_n_by_n(",
    Measure.TORCH_CALLS: "check_without_loop_over_positions(",
}
"""Measurements a test cell decides from outside too, when its source makes this call."""


@dataclass
class TestVerdict:
    """What running one test cell in the grader gave."""

    outputs: list[NotebookNode]
    passed: bool
    probes: int = 0
    best_effort: list[str] = field(default_factory=list)
    broken_protocol: str = ""
    """Why the kernel's answers were refused ("" when they were not)."""
    stopped: Outcome | None = None
    """:attr:`Outcome.TIME_LIMIT` or :attr:`Outcome.KERNEL_DIED` when the test was stopped."""
    seen: CellSeen | None = None
    """The tags its failure named, the part that failed, the concept answer it read."""


def free_names(source: str) -> list[str]:
    """Names ``source`` reads but never binds (imports, assignments, definitions,
    parameters), builtins excluded, sorted."""
    tree = ast.parse(source)
    bound: set[str] = set()
    read: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                read.append(node.id)
            else:
                bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return sorted({name for name in read if name not in bound and not hasattr(builtins, name)})


def _measured_through(channel: Channel) -> checks.Measurements:
    """How :mod:`helpers.checks` measures a call in a test cell: a stand-in's call in its
    kernel, where the student's function runs; any other callable (the test's own) here."""
    here = checks.IN_PROCESS

    def largest_tensor(function: Any, args: Any) -> tuple[Any, int, tuple[int, ...], str]:
        if not isinstance(function, RemoteFunction):
            return here.largest_tensor(function, args)
        result, measured = function.probe(tuple(args), measure=Measure.LARGEST_TENSOR)
        numel, shape, call = measured.get("numel"), measured.get("shape"), measured.get("call")
        if type(numel) is not int or not isinstance(shape, list) or not isinstance(call, str):
            raise ProbeError("the kernel's measurement of the largest tensor is malformed")
        return result, numel, tuple(shape), call[:200]

    def torch_calls(function: Any, args: Any) -> int:
        if not isinstance(function, RemoteFunction):
            return here.torch_calls(function, args)
        _, measured = function.probe(tuple(args), measure=Measure.TORCH_CALLS)
        count = measured.get("count")
        if type(count) is not int:
            raise ProbeError("the kernel's count of torch calls is malformed")
        return count

    def call_within(function: Any, args: Any, seconds: float) -> Any:
        if not isinstance(function, RemoteFunction):
            return here.call_within(function, args, seconds)
        try:
            return function.probe(tuple(args), seconds=seconds)[0]
        except ProbeTimeout:
            raise checks.OverTimeLimit from None

    def changed_elsewhere(value: Any) -> bool:
        # The grader's object never changes: the kernel changed its copy (ChangedInput).
        return any(change.original is value for change in channel.changed)

    return checks.Measurements(
        largest_tensor=largest_tensor,
        torch_calls=torch_calls,
        call_within=call_within,
        changed_elsewhere=changed_elsewhere,
    )


def sendable_classes(source: str) -> dict[str, str]:
    """The classes the visible part of the test cell ``source`` defines, by name, with their
    source: the only test code the grader ever sends into the kernel (a module of such a
    class, passed to the student's code, is rebuilt there from it). A class of the hidden
    part is never sent: the kernel would hold hidden test code, which a later cell could
    print into the student's own feedback."""
    visible = anatomy.visible_part(source)
    try:
        body = ast.parse(visible).body
    except SyntaxError:
        return {}
    return {
        node.name: ast.get_source_segment(visible, node) or ""
        for node in body
        if isinstance(node, ast.ClassDef)
    }


def error_output(ename: str, evalue: str) -> NotebookNode:
    """An error output of a test cell (nbgrader scores the cell 0)."""
    return new_output("error", ename=ename, evalue=evalue, traceback=[f"{ename}: {evalue}"])


def failed_part(source: str, printed: str) -> FailedPart | None:
    """Which part of the test cell ``source`` failed, from what its run in the grader
    ``printed`` (no student code prints there): hidden where it printed the line that ends
    its visible part; None where the cell has no such line."""
    try:
        passed_visible = anatomy.visible_pass_message(source)
    except (ValueError, SyntaxError):
        return None
    hidden = anatomy.HIDDEN_TESTS_MARKER in source and passed_visible in printed
    return FailedPart.HIDDEN if hidden else FailedPart.VISIBLE


def concept_answer(test_id: str, namespace: dict[str, Any]) -> str | None:
    """The answer a concept question's test cell (``test_q_<what>``) read from the kernel,
    as :attr:`CellSeen.answer` keeps it; None for any other cell."""
    name = anatomy.function_of_test(test_id) or ""
    if not name.startswith("q_") or name not in namespace:
        return None
    value = namespace[name]
    if isinstance(value, str):
        text = value.strip().lower()
    elif isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool):
        text = repr(value.item() if isinstance(value, np.generic) else value)
    else:
        text = f"<{type(value).__name__}>"
    return text[:ANSWER_CHARS]


def run_test(source: str, test_id: str, channel: Channel) -> TestVerdict:
    """Run the test cell ``source`` (``grade_id`` ``test_id``) against ``channel``'s kernel;
    the verdict's outputs are what nbgrader scores: the text printed, an error if it raised."""
    # The worker's own torch keeps to one thread, as the kernels do: with one thread per
    # core, several workers' idle threads spin against the kernels on a 2-core machine.
    torch.set_num_threads(1)
    classes = sendable_classes(source)
    channel.sources = lambda cls: (
        classes.get(cls.__name__) if cls.__module__ == "__grader_test__" else None
    )
    printed = io.StringIO()
    namespace: dict[str, Any] = {
        "__name__": "__grader_test__",
        "__builtins__": builtins,
        "print": lambda *args, **kwargs: builtins.print(
            *args, **{**kwargs, "file": kwargs.get("file") or printed}
        ),
    }
    # Seeded here, so that a test that draws from the global generators draws the same
    # inputs for every student, whatever their notebook drew before.
    torch.manual_seed(0)
    np.random.seed(0)
    first_probe, first_measure = channel.calls, len(channel.measured)
    channel.changed.clear()
    error: NotebookNode | None = None
    verdict = TestVerdict([], passed=False)
    try:
        for name in free_names(source):
            try:
                namespace[name] = channel.lookup(name)
            except NameError:
                pass  # the test raises NameError where it reads the name, as in the notebook
        with checks.measured_by(_measured_through(channel)):
            exec(compile(source, f"<{test_id}>", "exec"), namespace)  # noqa: S102 - gradebook
        if channel.changed:
            raise checks.modified_in_place(channel.changed[0].describe())
    except ProbeTimeout as stopped:
        verdict.stopped = Outcome.TIME_LIMIT
        error = error_output("GraderTimeLimit", f"the grader stopped {test_id}: {stopped}")
    except KernelGone as gone:
        verdict.stopped = Outcome.KERNEL_DIED
        error = error_output("KernelDied", f"the kernel died during {test_id}: {gone}")
    except ProbeError as broken:
        verdict.broken_protocol = str(broken)
        error = error_output(
            "GraderProtocolError",
            f"the notebook's answer to the grader's call broke the probe protocol: {broken}",
        )
    except Exception as failure:  # noqa: BLE001 - a failing test is a verdict, not a crash
        error = error_output(type(failure).__name__, str(failure))
        verdict.seen = CellSeen(
            test_id,
            tags_seen(source, test_id, str(failure)) if isinstance(failure, AssertionError) else (),
            failed_part(source, printed.getvalue()),
        )
    answer = concept_answer(test_id, namespace)
    if verdict.seen is not None or answer is not None:
        verdict.seen = replace(verdict.seen or CellSeen(test_id), answer=answer)
    if text := printed.getvalue():
        verdict.outputs.append(new_output("stream", name="stdout", text=text))
    if error is not None:
        verdict.outputs.append(error)
    verdict.passed = error is None
    verdict.probes = channel.calls - first_probe
    verdict.best_effort = sorted(
        measure
        for measure in set(channel.measured[first_measure:])
        if DECIDED_OUTSIDE.get(measure, "\0") not in source
    )
    return verdict
