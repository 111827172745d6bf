"""The outputs of a notebook, bounded per cell and in all, on every path nbclient takes them
into the notebook (:mod:`instructor.classroom.worker.output_bound`, ``GradingClient``): fed
with the kernel's messages directly, no kernel."""

from __future__ import annotations

import json

import nbformat
import pytest

from instructor.classroom.worker.output_bound import Charge, OutputBudget
from instructor.classroom.worker.session import GradingClient


def _client(cells: int, cell_kib: int = 64, notebook_kib: int = 256) -> GradingClient:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"cell {i}") for i in range(cells)]
    client = GradingClient(nb, budget=OutputBudget(cell_kib * 1024, notebook_kib * 1024))
    client.clear_before_next_output = False  # as nbclient's execute_cell sets it
    return client


def _message(msg_type: str, content: dict) -> dict:
    return {
        "msg_type": msg_type,
        "header": {"msg_type": msg_type, "msg_id": "m"},
        "parent_header": {"msg_id": "parent"},
        "metadata": {},
        "content": content,
    }


def _display(text: str, display_id: str | None = None, update: bool = False) -> dict:
    content: dict = {"data": {"text/plain": text}, "metadata": {}}
    if display_id is not None:
        content["transient"] = {"display_id": display_id}
    return _message("update_display_data" if update else "display_data", content)


def _stream(text: str) -> dict:
    return _message("stream", {"name": "stdout", "text": text})


def _send(client: GradingClient, index: int, message: dict) -> None:
    client.process_message(message, client.nb.cells[index], index)


def _stored(client: GradingClient) -> int:
    return sum(len(json.dumps(cell.outputs)) for cell in client.nb.cells)


def test_the_budget_refuses_past_each_bound_and_stays_stopped() -> None:
    budget = OutputBudget(cell_bytes=100, notebook_bytes=250)
    assert [budget.charge(0, 60) for _ in range(2)] == [Charge.KEPT, Charge.CELL_FULL]
    assert budget.charge(1, 90) is Charge.KEPT
    assert budget.charge(2, 90) is Charge.KEPT
    assert budget.charge(3, 90) is Charge.NOTEBOOK_FULL and budget.stopped_at == 3
    assert budget.charge(4, 1) is Charge.NOTEBOOK_FULL  # the notebook ends as it was then
    assert budget.charge(5, 50, stored=False) is Charge.KEPT  # a guard's: never stored
    assert budget.used == 240 and budget.truncated == {0}
    assert "output bound" in budget.note()
    assert budget.refusal_note(4, Charge.NOTEBOOK_FULL)
    assert not budget.refusal_note(5, Charge.NOTEBOOK_FULL)  # once for the notebook


def test_an_update_of_a_display_shown_often_is_charged_for_every_place() -> None:
    """The issue's 40 MB: one display id shown many times, then one large update."""
    client = _client(2)
    for _ in range(200):
        _send(client, 0, _display("small", "often"))
    _send(client, 1, _display("y" * 10_000, "often", update=True))  # 200 x 10 KB
    assert _stored(client) < 64 * 1024
    assert all(
        o.get("data", {}).get("text/plain") != "y" * 10_000 for o in client.nb.cells[0].outputs
    )
    assert "dropped by the grader" in client.nb.cells[1].outputs[-1]["text"]
    assert client.truncated == {1}


def test_updates_from_many_cells_count_for_the_notebook() -> None:
    client = _client(40)
    _send(client, 0, _display("small", "shown"))
    for index in range(1, 40):  # each 30 KB: under the cap per cell, 1.2 MB in all
        _send(client, index, _display(str(index) * 30_000, "shown", update=True))
        _send(client, index, _stream("z" * 30_000))
    assert _stored(client) <= 256 * 1024 + 40 * 200
    assert client.budget.stopped_at is not None
    notes = [o for c in client.nb.cells for o in c.outputs if "notebook's" in o.get("text", "")]
    assert len(notes) == 1


@pytest.mark.parametrize("kind", ["stream", "display", "clear and print again"])
def test_many_cells_under_the_cap_per_cell_stop_at_the_notebook_bound(kind: str) -> None:
    client = _client(60)
    for index in range(60):
        for _ in range(10):  # 10 x 5 KB per cell: under the cap of 64 KiB
            if kind == "clear and print again":
                _send(client, index, _message("clear_output", {"wait": True}))
            message = _stream("s" * 5_000) if kind != "display" else _display("d" * 5_000)
            _send(client, index, message)
    assert _stored(client) <= 256 * 1024 + 1024
    assert not client.truncated and "output bound" in client.budget.note()


def test_a_guard_cell_is_never_starved_by_the_notebook_bound() -> None:
    client = _client(3, notebook_kib=8)
    client.nb.cells[1].metadata["grader_guard"] = {"phase": "pre"}
    _send(client, 0, _stream("x" * 20_000))
    _send(client, 1, _stream("report"))
    _send(client, 2, _stream("after"))
    assert client.nb.cells[1].outputs[0]["text"] == "report"
    assert all("after" not in o.get("text", "") for o in client.nb.cells[2].outputs)
