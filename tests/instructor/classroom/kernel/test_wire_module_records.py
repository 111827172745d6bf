"""Modules as records: the classes both sides rebuild by name, and a reference layer of the
student package crossing to the kernel without its source (the records' data-only rule:
test_probe.py)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import torch
from torch import nn

from helpers.reference_layers import TorchAttention
from instructor.classroom.kernel.wire import known_layer
from instructor.classroom.worker.judge import RemoteModule


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("torch.nn.modules.linear.Linear", nn.Linear),
        ("helpers.reference_layers.TorchAttention", TorchAttention),
        ("helpers.reference_layers.run_block", None),  # not a class
        ("helpers.reference_layers.torch.nn.Linear", None),  # not a module of that package
        ("helpers.checks.check_close", None),
        ("__grader_test__.TorchAttention", None),
        ("os.system", None),
        (42, None),
    ],
)
def test_only_torch_s_layers_and_the_reference_layers_are_known(name, cls) -> None:
    assert known_layer(name) is cls


def test_a_reference_layer_crosses_by_its_class_name(kernel, channel, tmp_path: Path) -> None:
    kernel["attend"] = lambda layer, X: (type(layer).__module__, layer(X)[0])
    torch.manual_seed(0)
    layer = TorchAttention(nn.MultiheadAttention(4, 2, batch_first=True)).eval()
    X = torch.randn(1, 3, 4)
    where, out = channel.lookup("attend")(layer, X)
    assert where == "helpers.reference_layers"  # imported in the kernel, not rebuilt from code
    with torch.no_grad():
        torch.testing.assert_close(out, layer(X)[0])
    messages = [json.loads(p.read_text()) for p in channel.root.glob("p*/message.json")]
    records = [a for m in messages for a in m.get("args", []) if a.get("t") == "module"]
    assert records and all(r["source"] is None for r in records)


def test_a_reference_layer_from_the_kernel_only_poses_as_the_class(kernel, channel) -> None:
    """Made in the kernel, a reference layer is a stand-in that answers ``isinstance`` as the
    kernel's object does; its output (and its sublayer's) is the kernel's."""
    kernel["make"] = lambda: TorchAttention(nn.MultiheadAttention(4, 2, batch_first=True))
    torch.manual_seed(0)
    made = channel.lookup("make")().eval()
    assert isinstance(made, TorchAttention) and isinstance(made, RemoteModule)
    assert isinstance(made.mha, nn.MultiheadAttention) and isinstance(made.mha, RemoteModule)
    X = torch.randn(1, 3, 4)
    calls = channel.calls
    with torch.no_grad():
        out, weights = made(X)
    assert channel.calls == calls + 1 and out.shape == (1, 3, 4) and weights.shape == (1, 2, 3, 3)


def _posing_as(module: str, qualname: str) -> type[nn.Module]:
    """A student's feed-forward class that names itself one of torch's (what a record says
    is the student's to choose): its ``forward`` returns zeros."""

    class Posing(nn.Module):
        def __init__(self, d: int) -> None:
            super().__init__()
            self.linear1 = nn.Linear(d, 2 * d)
            self.relu = nn.ReLU()
            self.linear2 = nn.Linear(2 * d, d)

        def forward(self, X: torch.Tensor) -> torch.Tensor:
            return torch.zeros_like(X)

    Posing.__module__, Posing.__qualname__ = module, qualname
    return Posing


@pytest.mark.parametrize(
    ("module", "qualname", "claimed"),
    [
        ("torch.nn.modules.container", "Sequential", nn.Sequential),
        ("torch.nn.modules.linear", "Identity", nn.Identity),
        ("torch.nn.modules.activation", "ReLU", nn.ReLU),
        ("helpers.reference_layers", "TorchAttention", TorchAttention),
        ("torch.nn.modules.container", "NoSuchLayer", None),
    ],
)
def test_a_class_name_never_makes_the_grader_compute_a_kernel_module(
    kernel, channel, module: str, qualname: str, claimed: type | None
) -> None:
    """Renamed as one of torch's layers (nn.Sequential would run linear1, relu, linear2 in
    order, the right answer), a kernel's module still computes in the kernel: zeros."""
    kernel["Student"] = _posing_as(module, qualname)
    made = channel.lookup("Student")(3)
    assert isinstance(made, RemoteModule)
    if claimed is not None:
        assert isinstance(made, claimed)
    X = torch.randn(2, 3)
    with torch.no_grad():
        assert torch.equal(made(X), torch.zeros(2, 3))
        assert torch.equal(copy.deepcopy(made).double()(X.double()), torch.zeros(2, 3).double())


@pytest.mark.parametrize(
    "make",
    [
        lambda: nn.Linear(3, 4),
        lambda: nn.LayerNorm(3),
        lambda: nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 3)),
        lambda: nn.Embedding(7, 3),
        lambda: nn.MultiheadAttention(4, 2, batch_first=True),
    ],
)
def test_torch_s_layers_made_in_the_kernel_keep_their_structure_and_outputs(
    kernel, channel, make
) -> None:
    """An honest layer made in the kernel: the stand-in passes the tests' structural checks,
    takes the weights the test writes, and computes what the real layer computes."""
    kernel["make"] = make
    torch.manual_seed(0)
    made = channel.lookup("make")().eval()
    twin = make().eval()  # the grader's own layer of the same class, for the expected value
    assert isinstance(made, type(twin)) and isinstance(made, RemoteModule)
    assert made.state_dict().keys() == twin.state_dict().keys()
    made.load_state_dict(twin.state_dict())
    x = torch.arange(6).reshape(2, 3) if isinstance(twin, nn.Embedding) else torch.randn(1, 2, 4)
    x = x if isinstance(twin, nn.Embedding | nn.MultiheadAttention) else torch.randn(2, 3)
    args = (x, x, x) if isinstance(twin, nn.MultiheadAttention) else (x,)
    with torch.no_grad():
        torch.testing.assert_close(made(*args), twin(*args))
    assert type(twin).__name__ in repr(made)
