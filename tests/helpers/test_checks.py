"""The diagnostic checks name the mistake a student made."""

from __future__ import annotations

import ast
import concurrent.futures
import math
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from helpers.checks import (
    MAX_MESSAGE,
    GraderStop,
    check_choice,
    check_close,
    check_dtype,
    check_largest_tensor,
    check_no_known_mistake,
    check_no_loop_over_positions,
    check_number,
    check_raises,
    check_shape,
    check_sums_to_one,
    check_type,
    check_unchanged,
    check_without_loop_over_positions,
    check_without_n_by_n,
    checked_call,
    largest_tensor_made,
)


def fails_with(*fragments: str):
    """Context manager: an AssertionError whose message contains every fragment."""
    return pytest.raises(AssertionError, match="(?s)" + ".*".join(re.escape(f) for f in fragments))


def test_check_shape_passes_and_names_transposition() -> None:
    check_shape(torch.zeros(2, 3), (2, 3), "out")
    with fails_with("out has shape (3, 2), expected (2, 3)", "transposed"):
        check_shape(torch.zeros(3, 2), (2, 3), "out")


def test_check_shape_names_missing_and_extra_dimensions() -> None:
    with fails_with("missing"):
        check_shape(torch.zeros(4, 5), (2, 4, 5), "out")
    with fails_with("extra dimension of size 1"):
        check_shape(torch.zeros(1, 4, 5), (4, 5), "out")
    with fails_with("should be an array/tensor"):
        check_shape([1, 2], (2,), "out")


def test_check_type_and_dtype() -> None:
    check_type(torch.zeros(1), torch.Tensor, "x")
    with fails_with("forget a `return`"):
        check_type(None, torch.Tensor, "x")
    with fails_with("should be a Tensor, got list"):
        check_type([1], torch.Tensor, "x")
    check_dtype(np.zeros(2, dtype=np.float32), np.float32, "x")
    with fails_with("dtype torch.float32, expected torch.float64"):
        check_dtype(torch.zeros(2), torch.float64, "x")
    with fails_with("dtype float64, expected float32."):
        check_dtype(np.zeros(2), np.float32, "x")


def test_check_sums_to_one_names_the_wrong_axis() -> None:
    weights = torch.softmax(torch.randn(3, 4, generator=torch.Generator().manual_seed(0)), dim=0)
    check_sums_to_one(weights, 0, "w")
    with fails_with("sums to one along axis 0 instead of axis 1", "wrong axis"):
        check_sums_to_one(weights, -1, "w")


def test_check_sums_to_one_names_missing_softmax_and_nan() -> None:
    with fails_with("negative entries"):
        check_sums_to_one(torch.tensor([[2.0, -1.0, -0.5]]), 1, "w")
    with fails_with("did you apply the softmax"):
        check_sums_to_one(torch.tensor([[0.2, 0.3]]), 1, "w")
    with fails_with("NaN or inf"):
        check_sums_to_one(np.array([np.nan, 1.0]), 0, "w")


def test_check_close_names_a_known_mistake() -> None:
    g = torch.Generator().manual_seed(1)
    q, k, v = (torch.randn(4, 8, generator=g) for _ in range(3))
    right = F.scaled_dot_product_attention(q, k, v)
    unscaled = F.scaled_dot_product_attention(q, k, v, scale=1.0)
    check_close(right, right.clone(), "out", known_mistakes={"unscaled": unscaled})
    with fails_with("looks like the scores are not scaled by 1/sqrt"):
        check_close(
            unscaled,
            right,
            "out",
            known_mistakes={"the scores are not scaled by 1/sqrt(d)": unscaled},
        )


def test_check_close_reports_the_largest_difference() -> None:
    expected = np.arange(6.0).reshape(2, 3)
    actual = expected.copy()
    actual[1, 2] += 0.5
    with fails_with("largest difference is 0.5 at index (1, 2)", "got 5.5, expected 5"):
        check_close(actual, expected, "out")
    with fails_with("shape"):
        check_close(actual.T, expected, "out")


def test_check_close_accepts_float64_and_numpy_against_torch() -> None:
    x = torch.linspace(0, 1, 5, dtype=torch.float64)
    check_close(x.numpy(), x.float(), "x")


def test_check_unchanged() -> None:
    x = torch.ones(3)
    before = x.clone()
    check_unchanged(before, x, "X")
    x += 1
    with fails_with("modified in place"):
        check_unchanged(before, x, "X")


def test_check_raises() -> None:
    def lookup(key: str) -> int:
        return {"a": 1}[key]

    error = check_raises(KeyError, lookup, "zebra", mentions="zebra", why="an unknown key")
    assert isinstance(error, KeyError)
    with fails_with("should raise ValueError for an unknown key, but raised KeyError"):
        check_raises(ValueError, lookup, "zebra", why="an unknown key")
    with fails_with("returned normally"):
        check_raises(KeyError, lookup, "a")
    with fails_with("should mention 'giraffe'"):
        check_raises(KeyError, lookup, "zebra", mentions="giraffe")


def test_check_raises_lets_not_implemented_through() -> None:
    def stub() -> None:
        raise NotImplementedError()

    with pytest.raises(NotImplementedError):
        check_raises(ValueError, stub)


def test_messages_are_finite_for_inf_results() -> None:
    with fails_with("NaN or inf"):
        check_close(np.array([math.inf, 0.0]), np.array([1.0, 0.0]), "x")


def test_check_largest_tensor_counts_allocations_not_views() -> None:
    x = torch.randn(64, 4)

    def windows(t: torch.Tensor) -> torch.Tensor:
        return t.unfold(0, 3, 1).expand(5, -1, -1, -1)  # views: no new storage

    out = check_largest_tensor(windows, (x,), max_numel=64 * 4, name="windows")
    assert out.shape == (5, 62, 4, 3)

    def scores(t: torch.Tensor) -> torch.Tensor:
        return t @ t.T

    with fails_with("scores created a tensor of shape (64, 64)", "4,096 elements", "Use blocks"):
        check_largest_tensor(scores, (x,), max_numel=1000, name="scores", hint="Use blocks.")

    def mask_only(t: torch.Tensor) -> torch.Tensor:
        return torch.ones(t.shape[0], t.shape[0], dtype=torch.bool)

    with fails_with("shape (64, 64)"):
        check_largest_tensor(mask_only, (x,), max_numel=1000, name="mask_only")


def test_largest_tensor_made_names_the_call_that_made_it() -> None:
    """A rule about how an answer computes (10's "no F.layer_norm") reads the call's name."""
    x, gamma, beta = torch.randn(3, 4), torch.ones(4), torch.zeros(4)

    def library(t: torch.Tensor, g: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(t, (4,), g, b)

    def by_hand(t: torch.Tensor, g: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        centred = t - t.mean(-1, keepdim=True)
        return g * centred / (centred.pow(2).mean(-1, keepdim=True) + 1e-5).sqrt() + b

    made = largest_tensor_made(library, (x, gamma, beta))
    assert (made.call, made.shape, made.numel) == ("layer_norm", (3, 4), 12)
    assert torch.equal(made.result, F.layer_norm(x, (4,), gamma, beta))
    assert largest_tensor_made(by_hand, (x, gamma, beta)).call != "layer_norm"
    assert largest_tensor_made(lambda: 3, ()).numel == 0

    def transposed(t: torch.Tensor, g: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return t @ t  # (3, 4) @ (3, 4)

    with fails_with("transposed(", "RuntimeError", "Likely cause"):
        largest_tensor_made(transposed, (x, gamma, beta))


def test_check_no_known_mistake_names_it_and_passes_otherwise() -> None:
    right, transposed = torch.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(3, 2).T
    mistakes = {"H and W swapped": transposed, "another shape": torch.zeros(3)}
    check_no_known_mistake(right, "out", mistakes)
    with fails_with("out is not right: it looks like H and W swapped."):
        check_no_known_mistake(transposed, "out", mistakes)


def _phi(x: torch.Tensor) -> torch.Tensor:
    return F.elu(x) + 1


def _causal_cumsum(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    S = torch.cumsum(_phi(K).unsqueeze(-1) * V.unsqueeze(-2), dim=-3)
    z = torch.cumsum(_phi(K), dim=-2)
    numerator = (_phi(Q).unsqueeze(-1) * S).sum(dim=-2)
    return numerator / ((_phi(Q) * z).sum(dim=-1, keepdim=True) + 1e-6)


def _causal_loop(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    rows = []
    for i in range(Q.shape[-2]):
        weights = _phi(K[: i + 1]) @ _phi(Q[i])
        rows.append(weights @ V[: i + 1] / (weights.sum() + 1e-6))
    return torch.stack(rows)


def _causal_quadratic(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    weights = (_phi(Q) @ _phi(K).mT).tril()
    return weights @ V / (weights.sum(dim=-1, keepdim=True) + 1e-6)


def _inputs(n: int) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(n)
    return tuple(torch.randn(n, 2, generator=g, dtype=torch.float64) for _ in range(3))


def test_the_three_causal_forms_agree() -> None:
    Q, K, V = _inputs(16)
    torch.testing.assert_close(_causal_loop(Q, K, V), _causal_cumsum(Q, K, V))
    torch.testing.assert_close(_causal_quadratic(Q, K, V), _causal_cumsum(Q, K, V))


def test_check_no_loop_over_positions_fails_a_loop() -> None:
    with fails_with("_causal_loop makes", "for n = 8 but", "Python loop over positions", "cumsum"):
        check_no_loop_over_positions(_causal_loop, _inputs, hint="Use cumsum.")


def test_check_no_loop_over_positions_passes_vectorised_answers() -> None:
    counts = check_no_loop_over_positions(_causal_cumsum, _inputs, sizes=(8, 64))
    assert counts[8] == counts[64] > 0
    # An O(n^2) answer has no loop: this check passes it, check_largest_tensor does not.
    check_no_loop_over_positions(_causal_quadratic, _inputs)
    check_largest_tensor(_causal_cumsum, _inputs(64), 64 * 2 * 2 * 2, "cumsum form")
    with fails_with("created a tensor of shape (64, 64)"):
        check_largest_tensor(_causal_quadratic, _inputs(64), 64 * 2 * 2 * 2, "quadratic form")


def test_check_no_loop_over_positions_wraps_errors_and_lets_stubs_through() -> None:
    def two_d_only(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
        return torch.outer(Q, K)

    with fails_with("two_d_only raised RuntimeError for a sequence of length n = 8"):
        check_no_loop_over_positions(two_d_only, _inputs, name="two_d_only")

    def stub(*args: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError()

    with pytest.raises(NotImplementedError):
        check_no_loop_over_positions(stub, _inputs)


def test_check_no_loop_over_positions_allows_a_logarithmic_scan() -> None:
    def scan(x: torch.Tensor) -> torch.Tensor:  # Hillis-Steele prefix sum: log2(n) steps
        shift = 1
        while shift < x.shape[0]:
            x = x + F.pad(x[:-shift], (0, 0, shift, 0))
            shift *= 2
        return x

    x = torch.randn(16, 2, dtype=torch.float64)
    torch.testing.assert_close(scan(x), x.cumsum(0))
    check_no_loop_over_positions(scan, lambda n: (torch.randn(n, 2),))


def test_check_choice_gives_the_reason_of_the_right_answer() -> None:
    why = "Softmax weights are positive and sum to one."
    check_choice("b", "q_x", options="abc", correct="b", why=why)
    check_choice(" B ", "q_x", options="abc", correct="b", why=why)
    with fails_with("q_x = 'a' is not the right answer. Softmax weights are positive"):
        check_choice("a", "q_x", options="abc", correct="b", why=why)
    with pytest.raises(AssertionError) as error:
        check_choice("a", "q_x", options="abc", correct="b")
    assert str(error.value) == "q_x = 'a' is not the right answer."
    with pytest.raises(AssertionError) as error:  # a malformed answer is not told the reason
        check_choice("z", "q_x", options="abc", correct="b", why=why)
    assert why not in str(error.value)


def test_check_number_gives_the_reason_of_the_right_answer() -> None:
    why = "The scores form an n x n matrix: 8 * 8 = 64."
    check_number(64, "q_n", correct=64, why=why)
    check_number(65.0, "q_n", correct=64, relative_tolerance=0.05, why=why)
    with fails_with("q_n = 8 is not the right answer. The scores form an n x n matrix"):
        check_number(8, "q_n", correct=64, why=why)
    with pytest.raises(AssertionError) as error:
        check_number(8, "q_n", correct=64)
    assert str(error.value) == "q_n = 8 is not the right answer."
    with pytest.raises(AssertionError) as error:  # a malformed answer is not told the reason
        check_number("64", "q_n", correct=64, why=why)
    assert why not in str(error.value)


def test_check_number_takes_a_tensor_or_array_of_one_number() -> None:
    mask = torch.ones(4, 5, dtype=torch.bool)
    check_number(mask.sum(), "q_n", correct=20)  # a count, as `mask.sum()` gives it
    check_number(torch.tensor([20.0]), "q_n", correct=20)
    check_number(np.array(20), "q_n", correct=20)
    check_number(np.float32(20.0), "q_n", correct=20)
    with fails_with("q_n = 19 is not the right answer."):
        check_number(mask.sum() - 1, "q_n", correct=20)
    with fails_with("q_n holds 2 numbers (a Tensor of shape (2,)); the answer is one number."):
        check_number(torch.tensor([1.0, 2.0]), "q_n", correct=20)
    with fails_with("q_n should be a number (an int or a float), got a Tensor of dtype torch.bool"):
        check_number(torch.tensor(True), "q_n", correct=1)
    with fails_with("q_n is nan: answer with a finite number."):
        check_number(torch.tensor(float("nan")), "q_n")


def test_check_without_n_by_n_names_the_rule_when_memory_runs_out() -> None:
    def quadratic(x: torch.Tensor) -> torch.Tensor:
        raise RuntimeError(
            "DefaultCPUAllocator: can't allocate memory: you tried to allocate 8589934592 bytes."
        )

    with pytest.raises(AssertionError) as error:
        check_without_n_by_n(quadratic, (torch.zeros(3),), 32768, "f(x)", "Use blocks.")
    assert str(error.value) == (
        "f(x) ran out of memory: an (n, n) float64 tensor for n = 32,768 takes 8 GiB, more "
        "than the grader allows. Use blocks."
    )
    with pytest.raises(AssertionError, match="ran out of memory"):
        check_without_n_by_n(lambda x: [0] * 2**62, (1,), 10, "g")  # MemoryError
    x = torch.arange(3.0)
    assert torch.equal(check_without_n_by_n(lambda t: 2 * t, (x,), 3, "double"), 2 * x)
    with fails_with("shapes cannot be multiplied", "Likely cause"):  # not memory: as checked_call
        check_without_n_by_n(lambda t: t @ torch.ones(2, 2), (x,), 3, "h")


def _sleeps(steps: list[int]) -> Callable[[torch.Tensor], torch.Tensor]:
    """A function that takes 100 steps of 10 ms (1 s), counting them in ``steps``."""

    def slow(x: torch.Tensor) -> torch.Tensor:
        for _ in range(100):
            steps.append(1)
            time.sleep(0.01)
        return x

    return slow


def test_check_without_loop_over_positions_fails_a_call_past_its_time_limit() -> None:
    x = torch.ones(8, 1)
    with pytest.raises(AssertionError) as error:
        check_without_loop_over_positions(
            _sleeps([]), (x,), 2**22, "prefix(x)", seconds=0.2, hint="Use cumsum."
        )
    assert str(error.value) == (
        "prefix(x) did not end within 0.2 s: a Python loop over the 4,194,304 positions (a "
        "`for` over t, a list comprehension over the rows) makes torch calls for each of them. "
        "Compute all positions at once with tensor operations. Use cumsum."
    )
    out = check_without_loop_over_positions(lambda t: t.cumsum(0), (x,), 8, "prefix(x)")
    assert out[-1].item() == 8
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL  # the handler is put back
    with fails_with("_raise_value_error(", "raised ValueError: raw"):  # as checked_call says
        check_without_loop_over_positions(_raise_value_error, (x,), 10, "h")


ALARM = """\
import time
from helpers.checks import OverTimeLimit, _call_within

steps = []
def slow():
    try:
        for _ in range(100):
            steps.append(1)
            time.sleep(0.01)
    finally:
        print(len(steps))
try:
    _call_within(slow, (), 0.2)
except OverTimeLimit:
    print("stopped")
"""


def test_on_the_main_thread_an_alarm_stops_the_call_at_the_limit() -> None:
    # A process of its own: pytest-xdist runs tests off the main thread, where no alarm is.
    done = subprocess.run(
        [sys.executable, "-c", ALARM], capture_output=True, text=True, check=True, timeout=60
    )
    steps, outcome = done.stdout.split()
    assert outcome == "stopped" and int(steps) < 100, done.stdout  # cut short, not run out


def test_without_an_alarm_the_clock_decides() -> None:
    def swallows_the_alarm(t: torch.Tensor) -> torch.Tensor:
        try:
            return _sleeps([])(t)
        except Exception:  # noqa: BLE001 - the student's code may catch it
            time.sleep(0.3)
            return t

    x = torch.ones(8, 1)
    with fails_with("did not end within 0.2 s"):
        check_without_loop_over_positions(swallows_the_alarm, (x,), 8, "f", seconds=0.2)

    def in_a_thread() -> str:  # no SIGALRM off the main thread: the clock decides
        try:
            check_without_loop_over_positions(_sleeps([]), (x,), 8, "g", 0.2)
        except AssertionError as error:
            return str(error)
        return ""

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        assert "g did not end within 0.2 s" in pool.submit(in_a_thread).result()


def _raise_value_error(x: torch.Tensor) -> None:
    raise ValueError("raw")


# -- checked_call ---------------------------------------------------------------------------


def _transposed_product(Q: torch.Tensor, K: torch.Tensor) -> torch.Tensor:
    return Q @ K  # K^T was meant


def _float32_buffer(x: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(x.shape[0], 3)  # no dtype=x.dtype: float32 whatever x is
    return out.scatter(0, torch.zeros(1, 3, dtype=torch.long), x[:1, :3])


def _two_d_unpack(x: torch.Tensor) -> torch.Tensor:
    n, d = x.shape
    return x.reshape(n, d)


def _two_d_permute(x: torch.Tensor) -> torch.Tensor:
    return x.permute(1, 0)


def _wrong_view(x: torch.Tensor) -> torch.Tensor:
    return x.view(-1, 7)


def _past_the_end(x: torch.Tensor) -> torch.Tensor:
    return x[x.shape[0]]


def _mask_indexing(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    x = x.clone()
    x[~mask] = float("-inf")
    return x


def _no_return(x: torch.Tensor) -> torch.Tensor:
    helper = None
    return helper + x  # type: ignore[operator]


X23 = torch.ones(2, 3)


@pytest.mark.parametrize(
    ("function", "args", "cause"),
    [
        (_transposed_product, (X23, torch.ones(4, 3)), "an operand is transposed"),
        (_float32_buffer, (torch.ones(2, 3, dtype=torch.float64),), "without the input's dtype"),
        (_two_d_unpack, (torch.ones(2, 2, 3),), "n, d = x.shape[-2:]"),
        (_two_d_permute, (torch.ones(2, 2, 3),), "handles only 2-D inputs"),
        (_wrong_view, (X23,), "sizes must multiply"),
        (_past_the_end, (X23,), "an index past the end"),
        (_mask_indexing, (torch.ones(2, 2, 3), torch.ones(2, 3, dtype=torch.bool)), "masked_fill"),
        (_no_return, (X23,), "does not `return`"),
        (lambda x: x + torch.ones(4), (X23,), "do not broadcast"),
        (lambda x: torch.cat([x, x.T]), (X23,), "torch.cat (or torch.stack) along the wrong"),
        (lambda x: x.T.view(6), (X23,), "not stored row after row"),
        (lambda x: x.numpy() @ x.numpy(), (X23,), "an operand is transposed"),  # numpy's matmul
        (lambda x: x[torch.arange(2, dtype=x.dtype)], (X23,), "indices must be integers"),
        # issue 45: each cause is one the mutants show for that exception, not another's
        (lambda x: torch.ones(3).add_(x), (X23,), "an operation in place"),
        (lambda x: x + torch.ones(2), (X23,), "of sizes 3 and 2, one apart"),
        (lambda x: x[0].shape[1], (X23,), "a shape read at a dimension the tensor does not"),
        (lambda x: torch.zeros(3).index_add(0, x[0], x[0]), (X23,), "not of an integer dtype"),
        (
            lambda x: torch.nn.functional.linear(x.double(), x),
            (X23,),
            "a tensor made without the input's dtype",
        ),
        (lambda x: x.numpy()[0, 0] @ x.numpy(), (X23,), "fewer dimensions than the product"),
    ],
)
def test_checked_call_names_the_call_the_exception_and_its_likely_cause(
    function: Callable[..., torch.Tensor], args: tuple, cause: str
) -> None:
    with pytest.raises(AssertionError) as failure:
        checked_call(function, *args)
    message = str(failure.value)
    described = ", ".join(
        f"a {str(a.dtype).removeprefix('torch.')} tensor of shape {tuple(a.shape)}" for a in args
    )
    assert message.startswith(f"{function.__name__}({described}) raised "), message
    assert "Likely cause: " in message and cause in message, message


def test_checked_call_returns_the_result_and_passes_keywords() -> None:
    def scaled(x: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
        return x * scale

    assert torch.equal(checked_call(scaled, torch.ones(2), scale=3.0), torch.full((2,), 3.0))


def test_checked_call_names_keywords_modules_values_and_adds_the_hint() -> None:
    def fails(*args: object, **kwargs: object) -> None:
        raise ValueError("no\n   good")

    with pytest.raises(AssertionError) as failure:
        checked_call(
            fails,
            [1, 2],
            np.zeros((2, 1)),
            nn.Linear(2, 2),
            3,
            mask=None,
            dtype=torch.float64,
            hint="Build the mask first.",
        )
    assert str(failure.value) == (
        "fails(a list of 2 [1, 2], a float64 array of shape (2, 1), a Linear module, 3, "
        "mask=None, dtype=torch.float64) raised ValueError: no good. Build the mask first."
    )


def test_checked_call_names_a_module_by_its_class_and_forward() -> None:
    class TwoD(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.permute(1, 0)

    with pytest.raises(AssertionError, match=r"^TwoD\.forward\(a float32 tensor of shape "):
        checked_call(TwoD(), torch.ones(1, 2, 3))
    with pytest.raises(AssertionError, match=r"^TwoD\.forward\(a float32 tensor of shape "):
        checked_call(TwoD().forward, torch.ones(1, 2, 3))

    class Broken(nn.Module):
        def __init__(self, d: int) -> None:
            super().__init__()
            raise KeyError("d_model")

    with pytest.raises(AssertionError, match=r"^Broken\(4\) raised KeyError: 'd_model'$"):
        checked_call(Broken, 4)


def test_checked_call_lets_stubs_and_the_graders_own_stops_through() -> None:
    def stub(x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError()

    with pytest.raises(NotImplementedError):
        checked_call(stub, X23)

    class Stopped(GraderStop):
        pass

    def stopped(x: torch.Tensor) -> torch.Tensor:
        raise Stopped("the grader stopped the probe")

    with pytest.raises(Stopped):
        checked_call(stopped, X23)


def test_checked_call_shortens_a_long_message() -> None:
    def long(x: torch.Tensor) -> None:
        raise RuntimeError("x" * 5000)

    with pytest.raises(AssertionError) as failure:
        checked_call(long, X23)
    assert str(failure.value).endswith("x" * (MAX_MESSAGE - 3) + "...")


class _OwnError(Exception):
    """An exception class of the student's own: no built-in type of that name."""


def _raises_from_the_kernel(kind: str) -> Callable[[torch.Tensor], torch.Tensor]:
    def mistaken(x: torch.Tensor) -> torch.Tensor:
        if kind == "runtime":
            return x @ x  # mat1 and mat2 shapes cannot be multiplied
        if kind == "key":
            return {"a": x}["b"]
        if kind == "axis":
            return torch.as_tensor(np.sum(x.numpy(), axis=5))  # numpy's AxisError
        if kind == "linalg":
            return torch.linalg.inv(torch.zeros(2, 2, dtype=x.dtype))  # torch's _LinAlgError
        if kind == "unprintable":

            class Unprintable(Exception):
                def __str__(self) -> str:
                    raise ValueError

            raise Unprintable
        raise _OwnError("my own check failed")

    mistaken.__name__ = "mistaken"
    return mistaken


@pytest.mark.parametrize("kind", ["runtime", "key", "axis", "linalg", "unprintable", "own"])
def test_checked_call_gives_the_same_message_in_the_kernel_and_in_the_class_grader(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In the class grader ``mistaken`` is a probe: the kernel (here answered in this process,
    as tests/instructor/classroom/conftest.py does) sends the exception back as data and the
    grader raises it again as a built-in type; the student reads the same message."""
    from instructor.classroom.kernel import probe as probe_kernel
    from instructor.classroom.worker.judge import Channel

    function = _raises_from_the_kernel(kind)
    monkeypatch.setattr(probe_kernel, "_kernel_namespace", lambda: {"mistaken": function})

    def run(code: str, seconds: float | None = None) -> None:
        probe_kernel.answer(ast.literal_eval(code.partition("(")[2].rpartition(")")[0]))

    (tmp_path / "probes").mkdir()
    remote = Channel(tmp_path / "probes", run).lookup("mistaken")
    x = torch.eye(2, 3)
    with pytest.raises(AssertionError) as in_kernel:
        checked_call(function, x)
    with pytest.raises(AssertionError) as in_grader:
        checked_call(remote, x)
    assert str(in_grader.value) == str(in_kernel.value)
    assert str(in_kernel.value).startswith(
        "mistaken(a float32 tensor of shape (2, 3)) raised "
        + {
            "runtime": "RuntimeError: mat1 and mat2",
            "key": "KeyError: 'b'",
            "axis": "AxisError: axis 5",
            "linalg": "_LinAlgError: ",
            "unprintable": "Unprintable: (an exception whose message cannot be shown)",
            "own": "_OwnError: my own check failed",
        }[kind]
    ), str(in_kernel.value)


def test_the_checks_that_call_a_graded_function_name_its_failures_as_checked_call_does() -> None:
    def two_d_only(x: torch.Tensor) -> torch.Tensor:
        return x.permute(1, 0)

    batched = (torch.ones(1, 2, 3),)
    expected = "two_d_only(a float32 tensor of shape (1, 2, 3)) raised RuntimeError: "
    for check in (
        lambda: check_largest_tensor(two_d_only, batched, 100, "two_d_only"),
        lambda: check_without_n_by_n(two_d_only, batched, 3, "two_d_only"),
        lambda: check_without_loop_over_positions(two_d_only, batched, 3, "two_d_only"),
    ):
        with pytest.raises(AssertionError, match=f"^{re.escape(expected)}.*Likely cause: the "):
            check()
    with fails_with("two_d_only should raise KeyError, but raised RuntimeError: permute"):
        check_raises(KeyError, two_d_only, *batched)
