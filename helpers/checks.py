"""Assertions for exercise tests that say *what* is wrong, not just that something is.

Every check raises ``AssertionError`` with a message meant for a student: the
expected and actual shape, the axis a softmax was taken over, the known mistake an
answer matches. They accept ``torch.Tensor`` and ``numpy.ndarray`` alike, so the
numpy notebook (02) and the torch notebooks share them.

None of them contains solution code: where a test wants to name a known mistake it
computes that mistake itself (usually with a library call) and passes it in
``known_mistakes``.

The checks that watch a call while it runs (:func:`check_largest_tensor`,
:func:`check_no_loop_over_positions`, :func:`check_without_loop_over_positions`, and
:func:`check_unchanged` for a change made where the call ran) take their measurements
through one declared hook, :class:`Measurements`: in this process by default
(:data:`IN_PROCESS`); a grader that runs the graded function elsewhere installs its own with
:func:`measured_by`.
"""

from __future__ import annotations

import inspect
import re
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

ArrayLike = torch.Tensor | np.ndarray

__all__ = [
    "GraderStop",
    "IN_PROCESS",
    "Measurements",
    "OverTimeLimit",
    "checked_call",
    "check_choice",
    "check_close",
    "check_largest_tensor",
    "check_dtype",
    "check_no_known_mistake",
    "check_no_loop_over_positions",
    "check_number",
    "check_raises",
    "check_sums_to_one",
    "check_shape",
    "check_type",
    "check_unchanged",
    "check_without_n_by_n",
    "LargestTensor",
    "largest_tensor_made",
    "measured_by",
    "modified_in_place",
]


def _as_numpy(x: Any) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def _shape(x: ArrayLike) -> tuple[int, ...]:
    return tuple(x.shape)


class GraderStop(Exception):
    """An exception of the class grader's own (a probe stopped at its time limit, a kernel
    that died, an answer that broke the protocol), never one of the student's code:
    :func:`checked_call` and the checks let it through, so the grader can say why it stopped."""


MAX_MESSAGE = 600
"""The most characters of an exception's message that :func:`checked_call` quotes."""

_DTYPE_CAUSE = (
    "a dtype mismatch: a tensor made without the input's dtype (torch.zeros(...), "
    "torch.tensor(...), torch.arange(...) default to float32 or int64; pass "
    "dtype=x.dtype, or use torch.zeros_like(x)), or with another argument's dtype"
)

LIKELY_CAUSES: tuple[tuple[str, str], ...] = (
    (
        r"must have the same dtype|Expected self\.dtype to be equal to src\.dtype",
        _DTYPE_CAUSE,
    ),
    (
        r"output with shape \[.*\] doesn't match the broadcast shape",
        "an operation in place (+=, .add_(), .mul_(), x[...] = ...) writes its result into a "
        "tensor of another shape: one side has its sizes in the wrong order or a size too "
        "many, or an input is modified in place; compute a new tensor (a = a + b), and never "
        "modify an input in place",
    ),
    (
        r"cannot be multiplied|mat1 and mat2|Expected size for first two dimensions of batch2"
        r"|size mismatch|inconsistent tensor size|Expected .*batch1.* batch2"
        r"|mismatch in its core dimension|not aligned",
        "shapes that cannot be multiplied: an operand is transposed (K instead of K^T, or "
        "K.T on a batch where K.transpose(-2, -1) was meant), the product is taken in the "
        "wrong order, a reduction (sum, mean) or an unsqueeze is taken along another "
        "dimension than meant, or the matrix product @ is written where the elementwise * "
        "was meant",
    ),
    (
        r"must match the size of tensor b|operands could not be broadcast|"
        r"shape mismatch|not broadcastable|doesn't match the broadcast shape",
        "shapes that do not broadcast: a transposed operand, a reduction without "
        "keepdim=True, an unsqueeze along another dimension than meant, a range or a slice "
        "of the wrong length, or a dimension indexed for 2-D inputs only",
    ),
    (
        r"Sizes of tensors must match except in dimension|stack expects each tensor to be "
        r"equal size|all the input arrays? dimensions",
        "pieces of different sizes joined: torch.cat (or torch.stack) along the wrong "
        "dimension, a slice or a window one element too long or too short (an off-by-one), "
        "or a piece built with its sizes in the wrong order",
    ),
    (
        r"used as indices must be|arrays used as indices must be of integer",
        "an index of a floating dtype: indices must be integers (torch.long), so compute "
        "them with torch.arange(n) and integer arithmetic, not in the input's dtype",
    ),
    (
        r"Expected dtype int32/int64 for index|for index but got",
        "an index tensor that is not of an integer dtype (torch.long): the arguments in the "
        "wrong order (values passed where the indices go), or indices computed in a "
        "floating dtype",
    ),
    (
        r"dtype|scalar type|expected .*(Float|Double|Half|Long)|(Float|Double|Long) "
        r"(and|but found) (Float|Double|Long)|can't be cast|not implemented for '\w+'",
        _DTYPE_CAUSE,
    ),
    (
        r"does not have enough dimensions",
        "an operand with fewer dimensions than the product needs (a number or a vector where "
        "a matrix was meant): another argument than meant, or a dimension reduced away",
    ),
    (
        r"values to unpack",
        "too many or too few values to unpack: unpacking x.shape into names (n, d = "
        "x.shape) handles only inputs of one number of dimensions; take the last ones "
        "(n, d = x.shape[-2:]) so that leading batch dimensions pass through",
    ),
    (
        r"number of dimensions|number of dims|desired ordering of dimensions|"
        r"Dimension out of range|expects a tensor with <= 2 dimensions|too many indices"
        r"|dimension specified as",
        "the wrong number of dimensions: the code handles only 2-D inputs (a permute, a .T "
        "or an index written for (n, d)); use negative dimensions (transpose(-2, -1), "
        "x[..., i]) so that leading batch dimensions pass through",
    ),
    (
        r"view size is not compatible with input tensor's size and stride",
        ".view on a tensor not stored row after row (after a transpose or a permute): use "
        ".reshape(...) (or .contiguous().view(...))",
    ),
    (
        r"is invalid for input of size|cannot reshape|shape '\[",
        "a reshape or view to sizes that do not fit: the sizes must multiply to the number "
        "of elements, in the order they are stored",
    ),
    (
        r"IndexError: tuple index out of range",
        "a shape read at a dimension the tensor does not have (x.shape[1] of a 1-D tensor): "
        "the shape of another argument than meant, or another dimension, or one too far (an "
        "off-by-one); count from the end (x.shape[-1]) so that batch dimensions pass through",
    ),
    (
        r"out of bounds|index out of range|out of range|list index",
        "an index past the end: an off-by-one, a size (a window, a number of positions) "
        "larger than the input, or the indices of two dimensions in the wrong order (rows "
        "and columns swapped)",
    ),
    (
        r"mask .* does not match|The shape of the mask",
        "boolean indexing (x[mask]) needs a mask of exactly x's shape; masked_fill and "
        "torch.where broadcast the mask",
    ),
    (
        r"NoneType",
        "a value is None: a helper of yours, or a branch, does not `return` its result, or "
        "None (an optional argument such as mask=None) is passed where a tensor belongs: "
        "the arguments in the wrong order",
    ),
)
"""Patterns of exception messages (regular expressions, searched in ``"Type: message"``) and
the likely cause :func:`checked_call` names for each, the first match winning."""


def _raised(error: BaseException) -> tuple[str, str]:
    """The type name and the message of an exception raised by a student's function, as the
    student's kernel has them: the class grader re-raises an exception of the kernel as a
    built-in type and keeps the kernel's own name and message on it (``kernel_exception``)."""
    kernel = getattr(error, "kernel_exception", None)
    if (
        isinstance(kernel, tuple)
        and len(kernel) == 2
        and all(isinstance(part, str) for part in kernel)
    ):
        return kernel
    try:
        message = str(error)
    except Exception:  # noqa: BLE001 - a message that cannot be printed, as the grader says
        message = "(an exception whose message cannot be shown)"
    return type(error).__name__, message


def _describe(value: Any) -> str:
    """A value passed to a graded function, as the message shows it: a tensor or array by its
    dtype and shape (the same in the student's kernel and in the class grader)."""
    if isinstance(value, torch.Tensor):
        return f"a {str(value.dtype).removeprefix('torch.')} tensor of shape {tuple(value.shape)}"
    if isinstance(value, np.ndarray):
        return f"a {value.dtype} array of shape {tuple(value.shape)}"
    if isinstance(value, nn.Module):
        return f"a {value._get_name()} module"
    if isinstance(value, torch.Generator):
        return "a torch.Generator"
    if isinstance(value, torch.dtype):
        return str(value)
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_describe(v) for v in value[:4]) + (", ..." if len(value) > 4 else "")
        kind = "list" if isinstance(value, list) else "tuple"
        return f"a {kind} of {len(value)} [{inner}]"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _call_name(function: Any) -> str:
    """How a message names the callable: a function or class by its name, a module by its
    class and ``forward`` (a method of one by the class and the method)."""
    if isinstance(function, nn.Module):
        return f"{function._get_name()}.forward"
    owner = getattr(function, "__self__", None)
    if inspect.ismethod(function) and isinstance(owner, nn.Module):
        return f"{owner._get_name()}.{function.__name__}"
    return str(getattr(function, "__name__", type(function).__name__))


def _describe_call(function: Any, args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
    parts = [_describe(a) for a in args] + [f"{k}={_describe(v)}" for k, v in kwargs.items()]
    return f"{_call_name(function)}({', '.join(parts)})"


_SIZES = re.compile(r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\)")


def likely_cause(type_name: str, message: str) -> str:
    """The likely cause of an exception (by :data:`LIKELY_CAUSES`), or ``""``. Two sizes
    that do not broadcast and are one apart are most likely an off-by-one."""
    text = f"{type_name}: {message}"
    sizes = _SIZES.search(message)
    if sizes and abs(int(sizes[1]) - int(sizes[2])) == 1:
        return (
            f"shapes that do not broadcast, of sizes {sizes[1]} and {sizes[2]}, one apart: a "
            "range, a slice or a window one element too long or too short (an off-by-one), a "
            "transposed operand, or an unsqueeze, a reduction or a size taken along another "
            "dimension than meant"
        )
    for pattern, cause in LIKELY_CAUSES:
        if re.search(pattern, text, flags=re.IGNORECASE):
            return cause
    return ""


def call_failure(
    function: Any,
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    error: BaseException,
    hint: str = "",
) -> AssertionError:
    """The failure of a call of a graded function that raised ``error``: the call (its name,
    the dtypes and shapes passed), the exception, its likely cause and ``hint``."""
    type_name, message = _raised(error)
    message = " ".join(message.split())  # torch's messages span lines; one line reads better
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 3] + "..."
    text = f"{_describe_call(function, args, kwargs)} raised {type_name}: {message}"
    cause = likely_cause(type_name, message)
    for more in (f"Likely cause: {cause}." if cause else "", hint):
        if more:
            text += (" " if text.endswith((".", "!", "?")) else ". ") + more
    return AssertionError(text)


def checked_call(function: Callable[..., Any], *args: Any, hint: str = "", **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``; an exception it raises becomes an ``AssertionError``
    that names the call, the exception and its likely cause.

    Every visible test calls a graded function (or class, or a graded module: ``checked_call
    (block, x)`` runs its ``forward``) through this helper, so that a student whose code
    fails reads which call failed on which inputs and why, wherever the bug hits first.
    ``NotImplementedError`` (an exercise not done yet) goes through unchanged, and so does
    a :class:`GraderStop` of the class grader. The message is the same in the student's kernel
    and in the class grader, where ``function`` is a stand-in whose calls run in the kernel.

    Args:
        function: the graded function, class or module.
        args, kwargs: what it is called with.
        hint: what most likely went wrong in this call (the exercise's own diagnosis),
            added to the message.
    Returns:
        What ``function`` returned.
    """
    try:
        return function(*args, **kwargs)
    except NotImplementedError as error:
        # The exercise's stub raises NotImplementedError() with no message; torch raises one
        # with a message for an operation its dtype lacks ("bitwise_or_cpu" not implemented
        # for 'Float'), which is the student's mistake, reported like any other.
        if not _raised(error)[1]:
            raise
        raise call_failure(function, args, kwargs, error, hint) from None
    except GraderStop:
        raise
    except Exception as error:  # noqa: BLE001 - reported to the student
        raise call_failure(function, args, kwargs, error, hint) from None


def check_type(value: Any, expected: type | tuple[type, ...], name: str) -> None:
    """Fail unless ``value`` is an instance of ``expected`` (e.g. ``torch.Tensor``)."""
    if value is None:
        raise AssertionError(f"{name} is None: did you forget a `return` statement?")
    if not isinstance(value, expected):
        wanted = (
            expected.__name__
            if isinstance(expected, type)
            else " or ".join(t.__name__ for t in expected)
        )
        raise AssertionError(f"{name} should be a {wanted}, got {type(value).__name__}.")


def check_shape(actual: ArrayLike, expected: Sequence[int], name: str) -> None:
    """Fail unless ``actual.shape == expected``; name a transposed or missing dimension.

    Args:
        actual: the array or tensor to check, any shape.
        expected: the shape it should have.
        name: what ``actual`` is called in the exercise, used in the message.
    """
    if not hasattr(actual, "shape"):
        raise AssertionError(
            f"{name} should be an array/tensor of shape {tuple(expected)}, "
            f"got a {type(actual).__name__}."
        )
    got, want = _shape(actual), tuple(int(s) for s in expected)
    if got == want:
        return
    message = f"{name} has shape {got}, expected {want}."
    if len(got) == len(want) and sorted(got) == sorted(want):
        message += (
            " Same sizes in another order: is the result transposed (rows and columns swapped)?"
        )
    elif len(got) == len(want) + 1 and 1 in got:
        message += " There is an extra dimension of size 1: squeeze it or index it away."
    elif len(got) + 1 == len(want):
        message += " A dimension is missing: did you drop a batch or head dimension?"
    elif len(got) < len(want):
        message += " Too few dimensions: leading batch dimensions must be kept."
    raise AssertionError(message)


def check_dtype(actual: ArrayLike, expected: Any, name: str) -> None:
    """Fail unless ``actual`` has dtype ``expected`` (a torch or numpy dtype)."""
    got = actual.dtype
    if isinstance(actual, np.ndarray):
        expected = np.dtype(expected)  # so that np.float32 prints as float32
    if got != expected:
        raise AssertionError(
            f"{name} has dtype {got}, expected {expected}. "
            "Graded functions keep the dtype of their input (float32 stays float32, "
            "float64 stays float64); avoid creating tensors with a fixed dtype."
        )


def check_sums_to_one(
    weights: ArrayLike,
    dim: int,
    name: str,
    *,
    what: str = "the keys",
    atol: float = 1e-5,
) -> None:
    """Fail unless ``weights`` sums to one along ``dim``; name the axis it does sum over.

    Args:
        weights: attention weights or probabilities, any shape.
        dim: the axis that must sum to one (the keys' axis).
        name: the name used in the message.
        what: what ``dim`` indexes, for the message.
        atol: tolerance on each sum.
    """
    w = _as_numpy(weights).astype(np.float64)
    if not np.all(np.isfinite(w)):
        raise AssertionError(
            f"{name} contains NaN or inf. A softmax of large scores overflows unless you "
            "subtract the maximum first; a row where every key is masked has no valid weights."
        )
    if w.ndim == 0:
        raise AssertionError(f"{name} is a scalar; expected weights over {what}.")
    dim = dim % w.ndim
    if np.allclose(w.sum(axis=dim), 1.0, atol=atol):
        return
    others = [a for a in range(w.ndim) if a != dim and np.allclose(w.sum(axis=a), 1.0, atol=atol)]
    if others:
        raise AssertionError(
            f"{name} sums to one along axis {others[0]} instead of axis {dim} "
            f"(of shape {w.shape}): the softmax is taken over the wrong axis, or the weights "
            f"are transposed. It must normalise over {what}."
        )
    if np.any(w < -atol):
        raise AssertionError(
            f"{name} has negative entries: weights must be a softmax (non-negative, summing "
            f"to one over {what})."
        )
    raise AssertionError(
        f"{name} does not sum to one along axis {dim} ({what}): did you apply the softmax? "
        f"First sums: {np.round(w.sum(axis=dim).ravel()[:4], 4).tolist()}."
    )


def check_close(
    actual: ArrayLike,
    expected: ArrayLike,
    name: str,
    *,
    known_mistakes: Mapping[str, ArrayLike] | None = None,
    atol: float = 1e-5,
    rtol: float = 1e-4,
) -> None:
    """Fail unless ``actual`` equals ``expected`` within tolerance; name a known mistake.

    Args:
        actual: the student's result.
        expected: the correct result (same shape).
        name: the name used in the message.
        known_mistakes: description -> the result that mistake would produce (e.g.
            ``{"the scores are not scaled by 1/sqrt(d)": unscaled}``). When ``actual``
            matches one of them, the message names it.
        atol, rtol: tolerances, as in ``numpy.allclose``.
    """
    check_shape(actual, _shape(expected), name)
    a = _as_numpy(actual).astype(np.float64)
    e = _as_numpy(expected).astype(np.float64)
    if np.allclose(a, e, atol=atol, rtol=rtol, equal_nan=False):
        return
    check_no_known_mistake(a, name, known_mistakes or {}, atol=atol, rtol=rtol)
    if not np.all(np.isfinite(a)):
        raise AssertionError(f"{name} contains NaN or inf where the expected values are finite.")
    diff = np.abs(a - e)
    index = np.unravel_index(int(np.argmax(diff)), diff.shape) if diff.ndim else ()
    raise AssertionError(
        f"{name} has the right shape {a.shape} but wrong values: the largest difference is "
        f"{diff.max():.3g} at index {tuple(int(i) for i in index)} "
        f"(got {a[index]:.6g}, expected {e[index]:.6g})."
    )


def check_no_known_mistake(
    actual: ArrayLike,
    name: str,
    known_mistakes: Mapping[str, ArrayLike],
    *,
    atol: float = 1e-5,
    rtol: float = 1e-4,
) -> None:
    """Fail if ``actual`` equals the result of one of the ``known_mistakes``; pass otherwise.

    ``check_close`` does this after its comparison fails. Call it on its own *before* a
    generic check (a count per row, the first few numbers) that every wrong answer would
    fail with a message naming no mistake, so that a named mistake is named first.

    Args:
        actual: the student's result.
        name: the name used in the message.
        known_mistakes: description -> the result that mistake would produce; a result of
            another shape than ``actual`` is skipped.
        atol, rtol: tolerances, as in ``numpy.allclose``.
    """
    a = _as_numpy(actual).astype(np.float64)
    for description, wrong in known_mistakes.items():
        w = _as_numpy(wrong).astype(np.float64)
        if w.shape == a.shape and np.allclose(a, w, atol=atol, rtol=rtol):
            raise AssertionError(f"{name} is not right: it looks like {description}.")


def modified_in_place(name: str) -> AssertionError:
    """The failure of an input modified in place (the class grader raises it too, for an
    input its test cell did not check)."""
    return AssertionError(
        f"The input {name} was modified in place. Graded functions must not change their "
        "inputs: work on new tensors (avoid `+=`, `[...] =`, `.add_()` on inputs)."
    )


def check_unchanged(before: ArrayLike, after: ArrayLike, name: str) -> None:
    """Fail if an input was modified in place (``before`` is a copy taken before the call),
    here or where the call ran (:attr:`Measurements.changed_elsewhere`)."""
    if (
        _MEASUREMENTS.get().changed_elsewhere(after)
        or _shape(before) != _shape(after)
        or not np.array_equal(_as_numpy(before), _as_numpy(after))
    ):
        raise modified_in_place(name)


def check_raises(
    exception: type[BaseException],
    function: Callable[..., Any],
    *args: Any,
    mentions: str | None = None,
    why: str = "",
    **kwargs: Any,
) -> BaseException:
    """Fail unless ``function(*args, **kwargs)`` raises ``exception``.

    Args:
        exception: the exception type expected (subclasses accepted).
        function: the function under test.
        mentions: a string the error message must contain (e.g. the offending token).
        why: the situation, for the message ("an out-of-vocabulary token").
    Returns:
        The exception raised, for further checks.
    """
    situation = f" for {why}" if why else ""
    try:
        function(*args, **kwargs)
    except exception as error:
        if mentions is not None and mentions not in str(error):
            raise AssertionError(
                f"{function.__name__} raised {exception.__name__}{situation}, but its message "
                f"{str(error)!r} should mention {mentions!r}."
            ) from None
        return error
    except (NotImplementedError, GraderStop):
        raise
    except Exception as error:  # noqa: BLE001 - reported to the student
        type_name, message = _raised(error)
        raise AssertionError(
            f"{_call_name(function)} should raise {exception.__name__}{situation}, "
            f"but raised {type_name}: {message}"
        ) from None
    raise AssertionError(
        f"{function.__name__} should raise {exception.__name__}{situation}, but returned normally."
    )


class _LargestTensor(torch.overrides.TorchFunctionMode):
    """Record the largest storage behind any tensor that a torch call returns."""

    def __init__(self) -> None:
        super().__init__()
        self.numel = 0
        self.shape: tuple[int, ...] = ()
        self.call = ""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        outputs = result if isinstance(result, (tuple, list)) else (result,)
        for output in outputs:
            if isinstance(output, torch.Tensor) and output.layout == torch.strided:
                # The storage, not the view: an expand() or unfold() allocates nothing.
                numel = output.untyped_storage().nbytes() // max(output.element_size(), 1)
                if numel > self.numel:
                    self.numel, self.shape = numel, tuple(output.shape)
                    self.call = getattr(func, "__name__", str(func))
        return result


class _TorchCalls(torch.overrides.TorchFunctionMode):
    """Count the torch functions and tensor methods called (nested calls inside torch
    itself are not seen: the mode is off while one of its calls runs)."""

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.count += 1
        return func(*args, **(kwargs or {}))


def _largest_tensor_in_process(
    function: Callable[..., Any], args: Sequence[Any]
) -> tuple[Any, int, tuple[int, ...], str]:
    """``function(*args)``, and the largest tensor torch made meanwhile, watched in this
    process: its number of elements, its shape and the call that made it."""
    watcher = _LargestTensor()
    with watcher:
        result = function(*args)
    return result, watcher.numel, watcher.shape, watcher.call


def _torch_calls_in_process(function: Callable[..., Any], args: Sequence[Any]) -> int:
    """The number of torch calls made by ``function(*args)``, counted in this process."""
    counter = _TorchCalls()
    with counter:
        function(*args)
    return counter.count


class OverTimeLimit(Exception):
    """A call ran past the time limit of :func:`check_without_loop_over_positions` (what
    :attr:`Measurements.call_within` raises then)."""


def _call_within_in_process(
    function: Callable[..., Any], args: Sequence[Any], seconds: float
) -> Any:
    """``function(*args)``, or raise :class:`OverTimeLimit` once it has run ``seconds``."""
    alarm = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    previous: Any = None
    if alarm:

        def stop(signum: int, frame: Any) -> None:
            raise OverTimeLimit

        # None where the handler was not set from Python: the default is put back then.
        previous = signal.signal(signal.SIGALRM, stop) or signal.SIG_DFL
        signal.setitimer(signal.ITIMER_REAL, seconds)
    start = time.perf_counter()
    try:
        result = function(*args)
    finally:
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    # Without an alarm (Windows, a thread), or when the function swallowed it: the clock.
    if time.perf_counter() - start > seconds:
        raise OverTimeLimit
    return result


def _changed_nowhere_else(value: Any) -> bool:
    """In the process that ran the call, an input it changed is changed right here."""
    return False


@dataclass(frozen=True, kw_only=True)
class Measurements:
    """How the checks that watch a call take their measurements: the one hook through which
    a grader measures a rule from outside the process that holds the graded function.

    The defaults (:data:`IN_PROCESS`) measure here, where the function runs in a student's
    kernel. A grader whose test cells call stand-ins for functions that run elsewhere (the
    class grader's probes into a sandboxed kernel) installs its own with :func:`measured_by`,
    the only supported way: nothing of this module is replaced. Each field receives the
    callable the check was given and the positional arguments of the call.

    Attributes:
        largest_tensor: ``(function, args) -> (result, numel, shape, call)``: what
            ``function(*args)`` returned, and the largest tensor torch made meanwhile (its
            number of elements, its shape and the name of the call that made it), for
            :func:`check_largest_tensor`.
        torch_calls: ``(function, args) -> count``: the number of torch calls
            ``function(*args)`` made, for :func:`check_no_loop_over_positions`.
        call_within: ``(function, args, seconds) -> result``: ``function(*args)``, raising
            :class:`OverTimeLimit` once it has run ``seconds``, for
            :func:`check_without_loop_over_positions`.
        changed_elsewhere: ``(value) -> bool``: whether a call changed ``value`` in place
            where it ran, though this copy is unchanged, for :func:`check_unchanged`.
    """

    largest_tensor: Callable[
        [Callable[..., Any], Sequence[Any]], tuple[Any, int, tuple[int, ...], str]
    ] = _largest_tensor_in_process
    torch_calls: Callable[[Callable[..., Any], Sequence[Any]], int] = _torch_calls_in_process
    call_within: Callable[[Callable[..., Any], Sequence[Any], float], Any] = _call_within_in_process
    changed_elsewhere: Callable[[Any], bool] = _changed_nowhere_else


IN_PROCESS = Measurements()
"""The measurements taken in this process, where the graded function runs: the default."""

# A context variable, not a module global: the class grader runs test cells on threads of
# one process, each with its own kernel, and a thread starts with the default.
_MEASUREMENTS: ContextVar[Measurements] = ContextVar("measurements", default=IN_PROCESS)


@contextmanager
def measured_by(measurements: Measurements) -> Iterator[Measurements]:
    """Take the checks' measurements with ``measurements`` inside the ``with`` block, in
    this thread (and context) only; the ones before are put back on leaving it."""
    token = _MEASUREMENTS.set(measurements)
    try:
        yield measurements
    finally:
        _MEASUREMENTS.reset(token)


def _largest_tensor_while(
    function: Callable[..., Any], args: Sequence[Any]
) -> tuple[Any, int, tuple[int, ...], str]:
    """``function(*args)``, and the largest tensor torch made meanwhile: its number of
    elements, its shape and the call that made it (by :attr:`Measurements.largest_tensor`
    of the measurements in use)."""
    return _MEASUREMENTS.get().largest_tensor(function, args)


def _torch_calls_while(function: Callable[..., Any], args: Sequence[Any]) -> int:
    """The number of torch calls made by ``function(*args)`` (by
    :attr:`Measurements.torch_calls` of the measurements in use)."""
    return _MEASUREMENTS.get().torch_calls(function, args)


def _call_within(function: Callable[..., Any], args: Sequence[Any], seconds: float) -> Any:
    """``function(*args)``, or raise :class:`OverTimeLimit` once it has run ``seconds`` (by
    :attr:`Measurements.call_within` of the measurements in use)."""
    return _MEASUREMENTS.get().call_within(function, args, seconds)


@dataclass(frozen=True)
class LargestTensor:
    """What a watched call returned, and the largest tensor torch made while it ran."""

    result: Any
    """What the call returned."""
    numel: int
    """The largest tensor's number of elements (0 if torch made none)."""
    shape: tuple[int, ...]
    """Its shape."""
    call: str
    """The name of the torch call that made it (``"layer_norm"`` for ``F.layer_norm``)."""


def largest_tensor_made(function: Callable[..., Any], args: Sequence[Any]) -> LargestTensor:
    """Run ``function(*args)``, watching every torch call it makes; return what it returned
    and the largest tensor made meanwhile, with the call that made it.

    For a rule about *how* an answer computes (no ``(n, n)`` matrix, no library call that
    does the exercise): :func:`check_largest_tensor` is the usual check built on it. An
    exception of the call becomes an ``AssertionError`` naming it, as :func:`checked_call`
    does.
    """
    try:
        return LargestTensor(*_largest_tensor_while(function, args))
    except (NotImplementedError, GraderStop):
        raise
    except Exception as error:  # noqa: BLE001 - reported to the student, as checked_call does
        raise call_failure(function, args, {}, error) from None


def check_largest_tensor(
    function: Callable[..., Any],
    args: Sequence[Any],
    max_numel: int,
    name: str,
    hint: str = "",
) -> Any:
    """Run ``function(*args)``; fail if torch made a tensor of more than ``max_numel`` elements.

    Every torch call made while ``function`` runs is watched (through a
    ``torch.overrides.TorchFunctionMode``), and the size of the storage behind each tensor it
    returns is recorded: views such as ``expand`` or ``unfold`` cost nothing, a new ``(n, n)``
    tensor costs ``n * n`` elements. Use it to test that an answer never builds a big matrix.

    Args:
        function: the graded function.
        args: its positional arguments.
        max_numel: the largest tensor (in elements) a correct answer needs, with some margin.
        name: what to call the function's work in the message.
        hint: how to avoid the big tensor, for the message.
    Returns:
        What ``function`` returned, for further checks.
    """
    made = largest_tensor_made(function, args)
    if made.numel > max_numel:
        raise AssertionError(
            f"{name} created a tensor of shape {made.shape} (in `{made.call}`), with "
            f"{made.numel:,} elements; a memory-efficient answer needs at most "
            f"{max_numel:,} here. {hint}".rstrip()
        )
    return made.result


def check_without_n_by_n(
    function: Callable[..., Any], args: Sequence[Any], n: int, name: str, hint: str = ""
) -> Any:
    """Run ``function(*args)`` on inputs of length ``n`` so large that an ``(n, n)`` float64
    tensor (``8 * n * n`` bytes) does not fit in the grader's memory; fail, naming the rule,
    if the call runs out of memory.

    Unlike :func:`check_largest_tensor`, nothing is measured while ``function`` runs: the
    grader sees the outcome only (an answer, or a failed allocation), so the student's own
    process cannot forge it.

    Args:
        function: the graded function.
        args: its positional arguments, float64 tensors of length ``n``.
        n: the length.
        name: what to call the function's work in the message.
        hint: how to avoid the ``(n, n)`` tensor, for the message.
    Returns:
        What ``function`` returned, for further checks.
    """
    try:
        return function(*args)
    except (NotImplementedError, GraderStop):
        raise
    except MemoryError:
        pass
    except Exception as error:  # noqa: BLE001 - reported to the student, as checked_call does
        type_name, message = _raised(error)
        if type_name != "RuntimeError" or "alloc" not in message:
            raise call_failure(function, args, {}, error) from None
    gib = 8 * n * n / 2**30
    raise AssertionError(
        f"{name} ran out of memory: an (n, n) float64 tensor for n = {n:,} takes {gib:.0f} GiB, "
        f"more than the grader allows. {hint}".rstrip()
    )


def check_no_loop_over_positions(
    function: Callable[..., Any],
    make_inputs: Callable[[int], Sequence[Any]],
    sizes: tuple[int, int] = (8, 64),
    name: str | None = None,
    hint: str = "",
) -> dict[int, int]:
    """Fail if ``function`` makes more torch calls for a longer sequence: a Python loop.

    ``function(*make_inputs(n))`` runs once for each length ``n`` in ``sizes`` while a
    ``torch.overrides.TorchFunctionMode`` counts every torch function and tensor method it
    calls (``F.elu``, ``@``, ``cumsum``, ``x[..., t, :]``...). A vectorised answer makes the
    same calls whatever ``n``; a loop over the positions makes a few more for every
    position. The check fails when the count grows by at least one call for every two
    positions added (so ``log n`` steps, such as a parallel scan, still pass).

    Args:
        function: the graded function.
        make_inputs: ``n`` -> its positional arguments for a sequence of length ``n``.
        sizes: the two lengths compared, the smaller first.
        name: what to call the function in the message (default: its ``__name__``).
        hint: how to avoid the loop, for the message.
    Returns:
        ``{n: number of torch calls}`` for each length.
    """
    name = name or getattr(function, "__name__", "the function")
    small, large = sizes
    counts = {}
    for n in (small, large):
        args = make_inputs(n)
        try:
            counts[n] = _torch_calls_while(function, args)
        except (NotImplementedError, GraderStop):
            raise
        except Exception as error:  # noqa: BLE001 - reported to the student
            type_name, message = _raised(error)
            cause = likely_cause(type_name, message)
            raise AssertionError(
                f"{name} raised {type_name} for a sequence of length n = {n}: {message}"
                + (f". Likely cause: {cause}." if cause else "")
            ) from None
    if counts[large] - counts[small] >= max((large - small) // 2, 1):
        raise AssertionError(
            f"{name} makes {counts[small]} torch calls for n = {small} but {counts[large]} for "
            f"n = {large}: the work grows with the length, which means a Python loop over "
            f"positions (a `for` over t, a list comprehension over the rows). Compute all "
            f"positions at once with tensor operations. {hint}".rstrip()
        )
    return counts


def check_without_loop_over_positions(
    function: Callable[..., Any],
    args: Sequence[Any],
    n: int,
    name: str,
    seconds: float = 5.0,
    hint: str = "",
) -> Any:
    """Run ``function(*args)`` on inputs of ``n`` positions, so many that a Python loop over
    them cannot end within ``seconds``; fail, naming the rule, if the call does not.

    Unlike :func:`check_no_loop_over_positions`, nothing is counted while ``function``
    runs: the class grader keeps the time limit itself, outside the student's process, so
    that process cannot forge it. Each torch call costs microseconds, so a loop over
    millions of positions takes tens of seconds where tensor operations take a fraction of
    one. (A loop over Python floats, which makes no torch call per position, is faster:
    for ``n`` in the millions it may end in time.)

    Args:
        function: the graded function.
        args: its positional arguments for a sequence of ``n`` positions.
        n: the number of positions.
        name: what to call the function's work in the message.
        seconds: the time limit.
        hint: how to avoid the loop, for the message.
    Returns:
        What ``function`` returned, for further checks.
    """
    try:
        return _call_within(function, args, seconds)
    except OverTimeLimit:
        pass
    except (NotImplementedError, GraderStop):
        raise
    except Exception as error:  # noqa: BLE001 - reported to the student, as checked_call does
        raise call_failure(function, args, {}, error) from None
    raise AssertionError(
        f"{name} did not end within {seconds:g} s: a Python loop over the {n:,} positions "
        f"(a `for` over t, a list comprehension over the rows) makes torch calls for each of "
        f"them. Compute all positions at once with tensor operations. {hint}".rstrip()
    )


def check_choice(
    answer: Any, name: str, options: str, correct: str | None = None, why: str = ""
) -> None:
    """A concept question answered with one letter (the notebooks' "Check your understanding").

    Args:
        answer: what the student set, e.g. ``"b"`` (upper case and spaces are accepted).
        name: the answer's variable, for the message (``"q_saw_rows"``).
        options: the letters allowed, e.g. ``"abcd"``.
        correct: the right letter; only hidden tests pass it.
        why: the reason of the right answer, shown when the answer is wrong; only hidden tests
            pass it.
    """
    letters = ", ".join(f'"{o}"' for o in options)
    if answer is None or answer is Ellipsis:
        raise AssertionError(f"{name} is not answered yet: set it to one letter, one of {letters}.")
    if not isinstance(answer, str):
        raise AssertionError(
            f"{name} should be a string, one letter of {letters}, got {type(answer).__name__} "
            f'{answer!r}. Write it in quotes, e.g. {name} = "{options[0]}".'
        )
    letter = answer.strip().lower()
    if len(letter) != 1 or letter not in options:
        raise AssertionError(f"{name} is {answer!r}: answer with exactly one letter of {letters}.")
    if correct is not None and letter != correct:
        raise AssertionError(f"{name} = {answer!r} is not the right answer. {why}".rstrip())


def _one_number(answer: Any, name: str) -> Any:
    """``answer.item()`` for a tensor or array of one int or float element (what a count like
    ``mask.sum()`` gives); ``answer`` itself for anything else."""
    if not isinstance(answer, torch.Tensor | np.ndarray | np.generic):
        return answer
    size = answer.numel() if isinstance(answer, torch.Tensor) else answer.size
    if size != 1:
        shape = tuple(answer.shape)
        raise AssertionError(
            f"{name} holds {size} numbers (a {type(answer).__name__} of shape {shape}); "
            "the answer is one number."
        )
    dtype = answer.dtype
    if isinstance(answer, torch.Tensor):
        numeric = dtype.is_floating_point or not (dtype.is_complex or dtype == torch.bool)
    else:
        numeric = np.issubdtype(dtype, np.integer) or np.issubdtype(dtype, np.floating)
    if not numeric:
        raise AssertionError(
            f"{name} should be a number (an int or a float), got a {type(answer).__name__} "
            f"of dtype {dtype}."
        )
    return answer.item()


def check_number(
    answer: Any,
    name: str,
    correct: float | None = None,
    relative_tolerance: float = 0.0,
    why: str = "",
) -> None:
    """A concept question answered with a number (a count, a size, a ratio).

    Args:
        answer: what the student set, an int or a float, or a tensor or array holding one
            number (``local_mask(1000, 10).sum()``: its ``.item()`` is taken); a bool, a
            string or several numbers are refused.
        name: the answer's variable, for the message (``"q_scores_per_minute"``).
        correct: the right value; only hidden tests pass it.
        relative_tolerance: how far from ``correct`` still counts as right (0: exactly).
        why: the reason of the right answer, shown when the answer is wrong; only hidden tests
            pass it.
    """
    if answer is None or answer is Ellipsis:
        raise AssertionError(f"{name} is not answered yet: set it to a number.")
    answer = _one_number(answer, name)
    if isinstance(answer, bool) or not isinstance(answer, int | float | np.integer | np.floating):
        raise AssertionError(
            f"{name} should be a number (an int or a float), got {type(answer).__name__} "
            f"{answer!r}. Write the number itself, or an expression that computes it."
        )
    if not np.isfinite(answer):
        raise AssertionError(f"{name} is {answer!r}: answer with a finite number.")
    if correct is not None and abs(answer - correct) > relative_tolerance * abs(correct):
        raise AssertionError(f"{name} = {answer!r} is not the right answer. {why}".rstrip())
