"""Probes between the grader and a kernel, with the kernel's side run in this process (the
sandboxed kernel itself: test_session.py): functions, exceptions, inputs changed in place,
modules and their stand-ins, and answers that break the protocol."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from instructor.classroom.kernel import probe as probe_kernel
from instructor.classroom.worker.judge import (
    ProbeError,
    RemoteError,
    RemoteFunction,
    RemoteModule,
    _exception,
)


def test_a_function_runs_in_the_kernel_on_the_grader_inputs(kernel, channel) -> None:
    kernel["double"] = lambda x, scale=2: (x * scale, x.shape)
    double = channel.lookup("double")
    assert isinstance(double, RemoteFunction) and double.__name__ == "double"
    out, shape = double(torch.arange(3.0), scale=3)
    assert torch.equal(out, torch.tensor([0.0, 3.0, 6.0])) and shape == torch.Size([3])


def test_values_are_looked_up_and_missing_names_raise_name_error(kernel, channel) -> None:
    kernel["answer"] = "B"
    assert channel.lookup("answer") == "B"
    with pytest.raises(NameError):
        channel.lookup("undefined_name")


def test_exceptions_come_back_as_their_built_in_type(kernel, channel) -> None:
    def check(n):
        if n < 0:
            raise ValueError(f"n = {n} is negative")
        raise NotImplementedError

    kernel["check"] = check
    remote = channel.lookup("check")
    with pytest.raises(ValueError, match="n = -1 is negative"):
        remote(-1)
    with pytest.raises(NotImplementedError):
        remote(1)


def test_exception_types_map_to_their_nearest_built_in() -> None:
    axis_error = ["AxisError", "ValueError", "IndexError", "Exception"]
    assert type(_exception(axis_error, "")) is ValueError
    assert type(_exception(["OutOfMemoryError", "RuntimeError"], "")) is RuntimeError
    assert type(_exception(["SystemExit", "BaseException", "object"], "bye")) is RemoteError
    assert type(_exception(["KeyboardInterrupt", "BaseException"], "")) is RemoteError


def test_inputs_changed_in_place_are_recorded_not_copied_back(kernel, channel) -> None:
    """The grader's objects stay as the test made them, so expected answers never depend
    on the kernel; the change is recorded, for the verdict to fail the test."""

    def careless(x):
        x -= x.max()
        return x

    kernel["careless"] = careless
    x = torch.tensor([1.0, 3.0])
    assert torch.equal(channel.lookup("careless")(x), torch.tensor([-2.0, 0.0]))
    assert torch.equal(x, torch.tensor([1.0, 3.0]))
    array = np.array([1.0, 3.0])  # NumPy arrays too (02 is written in NumPy)
    channel.lookup("careless")(array)
    assert np.array_equal(array, [1.0, 3.0])
    assert [c.original for c in channel.changed] == [x, array]
    assert channel.changed[0].describe() == "of careless (a tensor of shape (2,))"
    assert channel.changed[1].describe() == "of careless (an array of shape (2,))"


def test_a_layer_passed_in_comes_back_as_the_graders_own(kernel, channel) -> None:
    """A module that keeps a layer it was given, and zeroes its weights: the grader's layer
    is unchanged, the change recorded, and the module's layer is the grader's object."""

    class Keeper(nn.Module):
        def __init__(self, layer: nn.Module) -> None:
            super().__init__()
            self.layer = layer
            with torch.no_grad():
                layer.weight.zero_()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.layer(x)

    kernel["Keeper"] = Keeper
    linear = nn.Linear(2, 2)
    weight = linear.weight.detach().clone()
    keeper = channel.lookup("Keeper")(linear)
    assert keeper.layer is linear and torch.equal(linear.weight, weight)
    assert [c.original for c in channel.changed] == [linear.weight]
    assert "a parameter of shape (2, 2) of a layer it was given" in channel.changed[0].describe()
    x = torch.ones(2)  # the grader's weights are sent with each call: the layer computes
    assert torch.allclose(keeper(x), linear(x).detach())


def test_torch_global_random_state_is_sent_with_each_call(kernel, channel) -> None:
    kernel["draw"] = lambda: torch.rand(3)
    torch.manual_seed(7)
    remote = channel.lookup("draw")()
    torch.manual_seed(7)
    assert torch.equal(remote, torch.rand(3))


def test_two_calls_in_a_row_draw_different_numbers(kernel, channel) -> None:
    """As in the kernel: dropout left on in evaluation mode differs from call to call (the
    kernel's random state never comes back; the grader's moves on by itself)."""
    kernel["draw"] = lambda: torch.rand(3)
    draw = channel.lookup("draw")
    torch.manual_seed(7)
    assert not torch.equal(draw(), draw())


class Student(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.drop = nn.Dropout(0.5)
        self.d = d

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.proj(x))


def test_a_module_comes_back_as_a_stand_in_that_runs_in_the_kernel(kernel, channel) -> None:
    kernel["Student"] = Student
    module = channel.lookup("Student")(4)
    assert isinstance(module, RemoteModule) and isinstance(module, nn.Module)
    assert isinstance(module.proj, nn.Linear) and isinstance(module.proj, RemoteModule)
    assert module.d == 4
    assert "Student(" in repr(module)
    with torch.no_grad():  # weights set by the grader are the kernel's weights
        module.proj.weight.copy_(torch.eye(4) * 2)
        module.proj.bias.zero_()
    module.eval()
    x = torch.arange(4.0)
    assert torch.equal(module(x), 2 * x)
    twin = copy.deepcopy(module).double()
    assert twin(x.double()).dtype == torch.float64
    module.train()
    assert (module(torch.ones(1000, 4)) == 0).float().mean().item() == pytest.approx(0.5, abs=0.1)


class Doubler(nn.Module):
    def forward(self, x):
        return 2 * x


def test_modules_of_the_grader_are_rebuilt_in_the_kernel(kernel, channel) -> None:
    kernel["apply"] = lambda layer, x: layer(x)
    linear = nn.Linear(2, 2)
    x = torch.ones(2)
    assert torch.allclose(channel.lookup("apply")(linear, x), linear(x).detach())
    source = "class Doubler(nn.Module):\n    def forward(self, x):\n        return 2 * x\n"
    Doubler.__module__ = "__grader_test__"
    channel.sources = lambda cls: source if cls is Doubler else None
    assert torch.equal(channel.lookup("apply")(Doubler(), x), 2 * x)


def test_an_answer_that_is_not_data_breaks_the_protocol(kernel, channel, monkeypatch) -> None:
    kernel["f"] = lambda: torch.zeros(2)
    remote = channel.lookup("f")
    real_answer = probe_kernel.answer

    def pickled(folder: str) -> None:
        real_answer(folder)
        response = Path(folder) / "response"
        (response / "a0.npy").write_bytes(b"\x80\x04not an array")

    monkeypatch.setattr(probe_kernel, "answer", pickled)
    with pytest.raises(ProbeError, match="not an .npy array"):
        remote()

    def no_answer(folder: str) -> None:
        pass

    monkeypatch.setattr(probe_kernel, "answer", no_answer)
    with pytest.raises(ProbeError, match="cannot open message.json"):
        remote()

    def replaced_folder(folder: str) -> None:
        real_answer(folder)
        response = Path(folder) / "response"
        shutil.move(response, Path(folder) / "elsewhere")
        response.symlink_to(Path(folder) / "elsewhere")

    monkeypatch.setattr(probe_kernel, "answer", replaced_folder)
    with pytest.raises(ProbeError, match="removed or replaced its answer folder"):
        remote()

    def removed_folder(folder: str) -> None:
        real_answer(folder)
        shutil.rmtree(Path(folder) / "response")

    monkeypatch.setattr(probe_kernel, "answer", removed_folder)
    with pytest.raises(ProbeError, match="removed or replaced its answer folder"):
        remote()


def _forged(monkeypatch: pytest.MonkeyPatch, edit: Callable[[dict], None]) -> None:
    """The kernel answers, then rewrites the module record of its answer with ``edit``."""
    real_answer = probe_kernel.answer

    def forging(folder: str) -> None:
        real_answer(folder)
        message_file = Path(folder) / "response" / "message.json"
        message = json.loads(message_file.read_text())
        edit(message["value"])
        message_file.write_text(json.dumps(message))

    monkeypatch.setattr(probe_kernel, "answer", forging)


@pytest.mark.parametrize(
    ("edit", "refused"),
    [
        # A torch layer whose forward is the student's module (issue 25's FFN trick).
        (lambda r: r["attrs"].update(forward=dict(r, attrs={})), "'forward'"),
        (lambda r: r["attrs"].update(extra_repr={"t": "str", "v": "x"}), "'extra_repr'"),
        (lambda r: r["attrs"].update(note=r["params"]["weight"]), "not a plain value"),
        (lambda r: r["attrs"].update(_parameters={"t": "none"}), "'_parameters'"),
        (lambda r: r["params"].update(forward=None), "'forward'"),
        (lambda r: r.update({"class": "__grader_test__.Reference_t"}), "did not send"),
        (lambda r: r.update(t="module_ref"), "did not send"),
    ],
    ids=["forward", "method", "tensor-attribute", "internal", "parameter", "class", "reference"],
)
def test_a_module_record_is_data_and_nothing_more(
    kernel, channel, monkeypatch, edit, refused
) -> None:
    kernel["make"] = lambda: nn.Linear(2, 2)
    make = channel.lookup("make")
    assert isinstance(make(), nn.Linear)
    _forged(monkeypatch, edit)
    with pytest.raises(ProbeError, match=refused):
        make()
