"""The probe protocol's envelope: requests round-trip, and a reply that is not exactly the
protocol's shape is refused before anything in it is read."""

from __future__ import annotations

import pytest

from instructor.classroom.kernel.probe import Measure, Op, Reply, Request, Status
from instructor.classroom.kernel.wire import MAX_TEXT, WireError


def test_a_request_reads_back_as_written() -> None:
    request = Request(
        Op.CALL,
        name="layer_norm",
        label="layer_norm",
        args=[{"t": "int", "v": 3}],
        kwargs=[["eps", {"t": "float", "v": "0.1"}]],
        measure=Measure.LARGEST_TENSOR,
    )
    assert Request.from_json(request.to_json()) == request
    lookup = Request(Op.LOOKUP, name="q_answer")
    assert Request.from_json(lookup.to_json()) == lookup


def test_replies_read_back_as_written() -> None:
    returned = Reply(Status.RETURNED, value={"t": "none"}, measured={"count": 3})
    assert Reply.from_json(returned.to_json()) == returned
    changed = Reply(Status.RETURNED, value={"t": "none"}, changed=[(0, {"t": "none"})])
    assert Reply.from_json(changed.to_json()) == changed
    raised = Reply(Status.RAISED, types=["ValueError", "Exception"], message="bad window")
    assert Reply.from_json(raised.to_json()) == raised


@pytest.mark.parametrize(
    ("data", "refused"),
    [
        ({"status": "passed"}, "unknown status"),
        ({}, "unknown status"),
        ({"status": "raised", "types": "ValueError", "message": "x"}, "without types"),
        ({"status": "raised", "types": ["ValueError"]}, "without types"),
        ({"status": "returned", "value": None, "measured": []}, "not a JSON object"),
        ({"status": "returned", "value": None, "changed": [["0", {}]]}, "pairs"),
        ({"status": "returned", "value": None, "changed": {"0": {}}}, "pairs"),
    ],
)
def test_a_reply_of_another_shape_is_refused(data: dict, refused: str) -> None:
    with pytest.raises(WireError, match=refused):
        Reply.from_json(data)


def test_an_exception_reply_is_bounded() -> None:
    reply = Reply.from_json(
        {"status": "raised", "types": ["E", 3, *["X"] * 100], "message": "m" * (MAX_TEXT + 5)}
    )
    assert reply.types[:2] == ["E", "X"] and len(reply.types) <= 50
    assert len(reply.message) == MAX_TEXT
