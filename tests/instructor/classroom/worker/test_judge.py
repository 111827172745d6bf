"""Test cells judged in the grader's process, against a kernel answering in this process
(the sandboxed kernel: test_session.py): the names a cell reads, passes, failures with the
test's own message, and answers that break the protocol; what the grader records of a cell
for the item analysis (the tags of the known mistakes its message named, the part that
failed, a concept question's answer)."""

from __future__ import annotations

import pytest
import torch

from instructor.classroom.kernel import probe as probe_kernel
from instructor.classroom.worker import CellSeen, FailedPart
from instructor.classroom.worker.judge import ProbeTimeout, free_names, run_test
from instructor.mistake_tags import GENERIC, messages_in

TEST = """\
import torch
from helpers.checks import check_close

out = double(torch.arange(3.0))
mistakes = {"x was not doubled": torch.arange(3.0)}
check_close(out, torch.arange(3.0) * 2, "double(x)", known_mistakes=mistakes)
print("double: tests passed")
"""


def test_free_names_are_what_the_cell_reads_and_never_binds() -> None:
    source = (
        "import torch\nfrom helpers.checks import check_close as cc\n"
        "def ref(x):\n    return x + offset\n"
        "for i in range(3):\n    y = attention(i, answer)\n"
        "try:\n    pass\nexcept ValueError as error:\n    print(error)\n"
    )
    assert free_names(source) == ["answer", "attention", "offset"]


def test_a_right_answer_passes_with_what_the_test_printed(kernel, channel) -> None:
    kernel["double"] = lambda x: 2 * x
    verdict = run_test(TEST, "test_double", channel)
    assert verdict.passed and verdict.probes == 1
    assert [o.output_type for o in verdict.outputs] == ["stream"]
    assert verdict.outputs[0].text == "double: tests passed\n"


def test_a_wrong_answer_fails_with_the_test_s_own_message(kernel, channel) -> None:
    kernel["double"] = lambda x: x
    verdict = run_test(TEST, "test_double", channel)
    assert not verdict.passed
    (error,) = verdict.outputs
    assert error.ename == "AssertionError" and "x was not doubled" in error.evalue


def test_an_undefined_function_fails_with_name_error(kernel, channel) -> None:
    verdict = run_test(TEST, "test_double", channel)
    assert not verdict.passed and verdict.outputs[-1].ename == "NameError"


def test_a_result_that_lies_about_itself_is_only_data(kernel, channel) -> None:
    class AlwaysClose(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func in (torch.allclose, torch.isclose, torch.equal):
                return True
            return super().__torch_function__(func, types, args, kwargs or {})

    kernel["double"] = lambda x: torch.zeros(3).as_subclass(AlwaysClose)
    verdict = run_test(TEST, "test_double", channel)
    assert not verdict.passed and "x was not doubled" not in verdict.outputs[-1].evalue


def test_an_answer_that_breaks_the_protocol_is_named(kernel, channel, monkeypatch) -> None:
    kernel["double"] = lambda x: 2 * x
    monkeypatch.setattr(probe_kernel, "answer", lambda folder: None)
    verdict = run_test(TEST, "test_double", channel)
    assert not verdict.passed and verdict.broken_protocol
    assert verdict.outputs[-1].ename == "GraderProtocolError"


MODULE_TEST = """\
import torch
from torch import nn

class Visible_t(nn.Module):
    def forward(self, x):
        return x + 1

print(apply(Visible_t(), torch.zeros(2)))
print("apply: tests passed")

### BEGIN HIDDEN TESTS
class Hidden_t(nn.Module):
    SECRET = "hidden-expected-answer-1234"

    def forward(self, x):
        return x - 1

print(apply(Hidden_t(), torch.zeros(2)))
### END HIDDEN TESTS
"""


def test_no_class_of_the_hidden_part_is_sent_into_the_kernel(kernel, channel) -> None:
    """A module of the visible part's class is rebuilt in the kernel from its source; one of
    the hidden part's never leaves the grader: no request folder holds its code."""
    kernel["apply"] = lambda layer, x: layer(x)
    verdict = run_test(MODULE_TEST, "test_apply", channel)
    assert verdict.outputs[0].text.startswith("tensor([1., 1.])\napply: tests passed\n")
    assert not verdict.passed and verdict.outputs[-1].ename == "TypeError"
    sent = "".join(path.read_text() for path in channel.root.rglob("message.json"))
    assert "class Visible_t" in sent
    assert "Hidden_t" not in sent and "hidden-expected-answer-1234" not in sent


UNCHANGED_TEST = """\
import torch
from helpers.checks import check_close, check_unchanged

x = torch.arange(3.0)
out = double(x)
{check}check_close(out, x * 2, "double(x)")
"""


def _doubles_and_zeroes(x: torch.Tensor) -> torch.Tensor:
    out = 2 * x
    x.zero_()  # a right answer, then its input changed in place
    return out


def test_an_input_changed_in_place_fails_with_check_unchanged_s_own_message(
    kernel, channel
) -> None:
    """Where the cell checks the input, with that check's message (as in the kernel)."""
    kernel["double"] = _doubles_and_zeroes
    source = UNCHANGED_TEST.format(check='check_unchanged(torch.arange(3.0), x, "x")\n')
    verdict = run_test(source, "test_double", channel)
    (error,) = verdict.outputs
    assert not verdict.passed and error.ename == "AssertionError"
    assert error.evalue.startswith("The input x was modified in place. Graded functions must")


def test_an_input_changed_in_place_fails_a_cell_that_does_not_check_it(kernel, channel) -> None:
    """The expected answer comes from the grader's own x (the kernel's zeroed copy would
    make it zeros); the change still fails the test, naming the function."""
    kernel["double"] = _doubles_and_zeroes
    verdict = run_test(UNCHANGED_TEST.format(check=""), "test_double", channel)
    (error,) = verdict.outputs
    assert not verdict.passed and error.ename == "AssertionError"
    assert error.evalue.startswith(
        "The input of double (a tensor of shape (3,)) was modified in place."
    )
    kernel["double"] = lambda x: 2 * x  # the record is per test cell
    assert run_test(UNCHANGED_TEST.format(check=""), "test_double", channel).passed


MEASURED_TEST = """\
import torch
from helpers.checks import check_largest_tensor, check_without_n_by_n

check_largest_tensor(double, (torch.ones(4),), max_numel=100, name="double")
{outside}"""


def test_a_measurement_decided_from_outside_too_is_not_best_effort(kernel, channel) -> None:
    kernel["double"] = lambda x: 2 * x
    alone = run_test(MEASURED_TEST.format(outside=""), "test_double", channel)
    assert alone.passed and alone.best_effort == ["largest_tensor"]
    outside = 'check_without_n_by_n(double, (torch.ones(4),), 4, "double")\n'
    both = run_test(MEASURED_TEST.format(outside=outside), "test_double", channel)
    assert both.passed and both.best_effort == []


LOOP_TEST = """\
import torch
from helpers.checks import check_no_loop_over_positions, check_without_loop_over_positions

check_no_loop_over_positions(prefix, lambda n: (torch.ones(n, 1),), name="prefix")
out = check_without_loop_over_positions(prefix, (torch.ones(64, 1),), 64, "prefix", seconds=2)
print(int(out[-1]))
"""


def test_the_loop_rule_is_decided_by_a_time_limit_the_grader_keeps(
    kernel, channel, monkeypatch
) -> None:
    kernel["prefix"] = lambda x: x.cumsum(0)
    limits: list[float | None] = []
    kernel_is_slow = False
    answer = channel.run

    def run(code: str, seconds: float | None = None) -> None:
        limits.append(seconds)
        if seconds is not None and kernel_is_slow:  # what KernelSession.probe raises
            raise ProbeTimeout(f"the call ran longer than {seconds:g} s")
        answer(code, seconds)

    monkeypatch.setattr(channel, "run", run)
    verdict = run_test(LOOP_TEST, "test_prefix", channel)
    assert verdict.passed and verdict.outputs[0].text == "64\n"
    assert verdict.best_effort == [] and limits.count(2) == 1
    kernel_is_slow = True  # a loop the kernel's count says is none (a forged count)
    verdict = run_test(LOOP_TEST, "test_prefix", channel)
    assert not verdict.passed and not verdict.stopped
    assert verdict.outputs[-1].evalue.startswith("prefix did not end within 2 s")


SEEN_TEST = """\
import torch
from helpers.checks import check_close

out = double(torch.arange(3.0))
mistakes = {"x was not doubled but kept as it is": torch.arange(3.0)}
check_close(out, torch.arange(3.0) * 2, "double(x)", known_mistakes=mistakes)
print("double: visible tests passed")
### BEGIN HIDDEN TESTS
big = double(torch.ones(5))
squared = {f"x squared, not doubled {1}": big * 0}
check_close(big, torch.full((5,), 2.0), "double(ones)", known_mistakes=squared)
### END HIDDEN TESTS
"""
CONCEPT_TEST = """\
from helpers.checks import check_choice

check_choice(q_axis, "q_axis", "abcd")
print("q_axis: visible tests passed")
### BEGIN HIDDEN TESTS
check_choice(q_axis, "q_axis", "abcd", correct="b")
### END HIDDEN TESTS
"""


def test_the_grader_records_the_tags_and_the_part_that_failed(kernel, channel) -> None:
    (kept, squared) = messages_in(SEEN_TEST, "test_double", "double")
    assert not kept.hidden and squared.hidden and squared.text == "x squared, not doubled {}"
    kernel["double"] = lambda x: x
    verdict = run_test(SEEN_TEST, "test_double", channel)
    assert verdict.seen == CellSeen("test_double", (kept.tag,), FailedPart.VISIBLE)
    kernel["double"] = lambda x: 2 * x if x.shape == (3,) else x * 0
    verdict = run_test(SEEN_TEST, "test_double", channel)
    assert verdict.seen == CellSeen("test_double", (squared.tag,), FailedPart.HIDDEN)
    kernel["double"] = lambda x: 2 * x + (x.shape != (3,))  # a mistake of no known name
    verdict = run_test(SEEN_TEST, "test_double", channel)
    assert verdict.seen == CellSeen("test_double", (), FailedPart.HIDDEN)
    kernel["double"] = lambda x: 2 * x
    assert run_test(SEEN_TEST, "test_double", channel).seen is None


def test_an_input_changed_in_place_is_the_generic_tag(kernel, channel) -> None:
    kernel["double"] = lambda x: x.mul_(2)
    verdict = run_test(SEEN_TEST, "test_double", channel)
    assert not verdict.passed and verdict.seen is not None
    assert verdict.seen.tags == tuple(GENERIC)


@pytest.mark.parametrize(
    ("answer", "recorded", "failed"),
    [(" B ", "b", None), ("c", "c", FailedPart.HIDDEN), (2, "2", FailedPart.VISIBLE)],
)
def test_the_grader_records_a_concept_answer(kernel, channel, answer, recorded, failed) -> None:
    kernel["q_axis"] = answer
    verdict = run_test(CONCEPT_TEST, "test_q_axis", channel)
    assert verdict.seen == CellSeen("test_q_axis", (), failed, recorded)
