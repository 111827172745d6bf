"""Modules as records: the classes both sides rebuild by name, and a reference layer of the
student package crossing to the kernel without its source (the records' data-only rule:
test_probe.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from torch import nn

from helpers.reference_layers import TorchAttention
from instructor.classroom.module_records import known_layer


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


def test_a_reference_layer_from_the_kernel_is_the_real_class(kernel, channel) -> None:
    kernel["make"] = lambda: TorchAttention(nn.MultiheadAttention(4, 2, batch_first=True))
    made = channel.lookup("make")()
    assert type(made) is TorchAttention and type(made.mha) is nn.MultiheadAttention
