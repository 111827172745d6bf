"""The probes' data format: every kind of value survives the trip, and anything that is not
in the format (links, pickles, oversized or malformed records) is refused with a WireError."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from instructor.classroom.kernel import wire


def _trip(value, tmp_path: Path):
    writer = wire.Writer(tmp_path / "out")
    record = writer.value(value)
    writer.close({"value": record})
    message = wire.read_message(tmp_path / "out")
    return wire.Reader(tmp_path / "out").value(message["value"])


@pytest.mark.parametrize(
    "dtype",
    [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.bool],
)
def test_tensors_come_back_with_their_dtype_shape_and_values(tmp_path: Path, dtype) -> None:
    tensor = (torch.arange(12).reshape(3, 4) % 3).to(dtype)
    back = _trip(tensor.T, tmp_path)  # a non-contiguous view travels as its values
    assert type(back) is torch.Tensor and back.dtype == dtype
    assert torch.equal(back, tensor.T)


def test_zero_dimensional_and_empty_tensors_keep_their_shape(tmp_path: Path) -> None:
    assert _trip(torch.tensor(3), tmp_path).shape == ()
    assert _trip(torch.zeros(0, 5), tmp_path / "b").shape == (0, 5)


def test_plain_values_come_back_equal(tmp_path: Path) -> None:
    value = {
        "none": None,
        "flags": [True, False],
        "numbers": (1, -2.5, 3 + 4j),
        "text": "saw",
        "dtype": torch.float64,
        "size": torch.Size([2, 3]),
        "array": np.arange(4.0),
        "scalar": np.float64(0.25),
        7: (),
    }
    back = _trip(value, tmp_path)
    assert back.keys() == value.keys()
    assert back["numbers"] == value["numbers"] and back["flags"] == [True, False]
    assert back["dtype"] is torch.float64 and back["size"] == torch.Size([2, 3])
    assert np.array_equal(back["array"], value["array"]) and back["scalar"] == 0.25
    specials = _trip((math.inf, -math.inf, math.nan), tmp_path / "b")
    assert specials[:2] == (math.inf, -math.inf) and math.isnan(specials[2])


def test_a_tensor_subclass_arrives_as_a_plain_tensor(tmp_path: Path) -> None:
    class Liar(torch.Tensor):
        def __eq__(self, other):
            return True

    back = _trip(torch.zeros(2).as_subclass(Liar), tmp_path)
    assert type(back) is torch.Tensor
    assert not torch.equal(back, torch.ones(2))


def test_what_the_format_cannot_carry_comes_back_opaque(tmp_path: Path) -> None:
    back = _trip(object(), tmp_path)
    assert isinstance(back, wire.Opaque) and back.type_name == "object"
    assert isinstance(_trip(np.array([object()]), tmp_path / "b"), wire.Opaque)


def test_a_generator_comes_back_in_the_same_state(tmp_path: Path) -> None:
    generator = torch.Generator().manual_seed(5)
    back = _trip(generator, tmp_path)
    assert torch.equal(torch.rand(3, generator=back), torch.rand(3, generator=generator))


def _message(tmp_path: Path, record: dict) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / wire.MESSAGE).write_text(json.dumps({"value": record}))
    return tmp_path


def _read(folder: Path):
    return wire.Reader(folder).value(wire.read_message(folder)["value"])


def test_a_pickled_array_is_refused(tmp_path: Path) -> None:
    folder = _message(tmp_path, {"t": "ndarray", "array": "a0.npy"})
    np.save(folder / "a0.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(wire.WireError, match="not an .npy array|plain array"):
        _read(folder)


def test_links_and_paths_out_of_the_folder_are_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.npy"
    np.save(secret, np.arange(3))
    folder = _message(tmp_path / "answer", {"t": "ndarray", "array": "a0.npy"})
    os.symlink(secret, folder / "a0.npy")
    with pytest.raises(wire.WireError, match="cannot open a0.npy"):
        _read(folder)
    folder = _message(tmp_path / "escape", {"t": "ndarray", "array": "../secret.npy"})
    with pytest.raises(wire.WireError, match="bad array file name"):
        _read(folder)
    linked = tmp_path / "linked"
    linked.mkdir()
    os.symlink(tmp_path / "answer" / wire.MESSAGE, linked / wire.MESSAGE)
    with pytest.raises(wire.WireError, match="cannot open"):
        wire.read_message(linked)


def test_oversized_answers_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wire, "MAX_ARRAY_BYTES", 1000)
    folder = _message(tmp_path, {"t": "ndarray", "array": "a0.npy"})
    np.save(folder / "a0.npy", np.zeros(1000))
    with pytest.raises(wire.WireError, match="more than"):
        _read(folder)


@pytest.mark.parametrize(
    ("record", "why"),
    [
        ({"t": "pickle", "v": "x"}, "unknown value record"),
        ({"t": "int", "v": "3"}, "unknown value record"),
        ({"t": "float", "v": "1e5000000" * 9}, "short string"),
        ({"t": "tensor", "array": "a0.npy", "dtype": "object"}, "unknown tensor dtype"),
        ({"t": "module", "handle": 1}, "a module where a plain value"),
        ([1, 2], "not a value record"),
        ({"t": "dict", "items": [[{"t": "none"}, {"t": "none"}]]}, "dict key"),
    ],
)
def test_malformed_records_are_refused(tmp_path: Path, record, why: str) -> None:
    with pytest.raises(wire.WireError, match=why):
        _read(_message(tmp_path, record))


def test_a_tensor_whose_array_disagrees_with_its_dtype_is_refused(tmp_path: Path) -> None:
    folder = _message(tmp_path, {"t": "tensor", "array": "a0.npy", "dtype": "float32"})
    np.save(folder / "a0.npy", np.arange(3, dtype=np.int64))
    with pytest.raises(wire.WireError, match="said to be torch.float32"):
        _read(folder)


def test_nesting_is_bounded(tmp_path: Path) -> None:
    record: dict = {"t": "none"}
    for _ in range(wire.MAX_WIRE_DEPTH + 5):
        record = {"t": "list", "items": [record]}
    with pytest.raises(wire.WireError, match="nested too deep"):
        _read(_message(tmp_path, record))


def test_a_message_that_is_not_a_json_object_is_refused(tmp_path: Path) -> None:
    (tmp_path / wire.MESSAGE).write_text("[1, 2]")
    with pytest.raises(wire.WireError, match="not a JSON object"):
        wire.read_message(tmp_path)
    (tmp_path / wire.MESSAGE).write_text("{")
    with pytest.raises(wire.WireError, match="not JSON"):
        wire.read_message(tmp_path)


@pytest.mark.parametrize("name", [wire.MESSAGE, "a0.npy"])
def test_a_fifo_in_place_of_a_file_is_refused_without_waiting(tmp_path: Path, name: str) -> None:
    """Opening a FIFO for reading waits for a writer: a kernel that answers with one must
    not hold the grader (the file is opened non-blocking, then found not regular)."""
    import threading

    if name != wire.MESSAGE:
        record = {"value": {"t": "ndarray", "array": name}}
        (tmp_path / wire.MESSAGE).write_text(json.dumps(record))
    os.mkfifo(tmp_path / name)
    outcome: list[str] = []

    def read() -> None:
        try:
            wire.Reader(tmp_path).value(wire.read_message(tmp_path)["value"])
        except wire.WireError as error:
            outcome.append(str(error))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(timeout=10)
    if reader.is_alive():  # unblock the reader: open the FIFO for writing once
        os.close(os.open(tmp_path / name, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail(f"reading a FIFO named {name} waited for a writer")
    assert outcome == [f"{name} is not a regular file"]
