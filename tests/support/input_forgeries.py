"""Forged verdicts through the probe protocol itself (issue 25, items 1 and 2).

:mod:`support.forgeries` attacks the checks; these attack what crosses between the kernel
and the grader. Each entry is a wrong answer (:attr:`InputForgery.wrong`) and the same
wrong answer with a trick added (:attr:`InputForgery.trick`), written the way a student who
has read ``instructor/classroom/probe.py`` would:

- *inputs changed in place*: the grader once copied the kernel's changes of an input back
  into its own object, and the tests computed their expected answers from it after the
  call. A function that zeroes ``V`` and returns zeros, a ``layer_norm`` that zeroes
  ``gamma`` and ``beta`` and returns zeros, an ``EncoderBlock`` that zeroes the sublayers it
  is given all matched the reference they had just changed (each scored full marks, its
  wrong answer alone 0, on the grader of commit 2dd878e);
- *a module record that lies*: the kernel's writer, patched from the notebook, gives the
  student's module a ``forward`` of its own choosing in the record the grader reads;
- *a class name that lies* (issue 32): a ``PositionwiseFeedForward`` without its ReLU, named
  ``torch.nn.modules.container.Sequential`` with its children in that class's order, was
  rebuilt by the grader as torch's class, which computed the right answer; now every module
  the kernel made computes in the kernel;
- *decoy sublayers* (issue 32): an ``EncoderBlock`` that never calls its sublayers keeps
  decoys in their place; notebook 10's hidden reference read ``block.attention`` and
  ``block.feed_forward`` and agreed with it, it now uses the test's own copies;
- *a forged measurement*: a ``linear_attention`` that builds the (n, n) weights (right
  values, forbidden memory) rewrites the in-kernel measurement of its largest tensor (2 of
  2 points on the grader and notebooks of commit f2bc074, 0 alone). The rule is now also
  decided from outside (``check_without_n_by_n``). A ``causal_linear_attention`` that loops
  over the positions (right values, forbidden loop) rewrites the count of its torch calls
  (3 of 3 points on the grader of commit 586643f, 0 alone); that rule is now also decided
  from outside (``check_without_loop_over_positions``).

Each trick must score exactly what its wrong answer scores alone (the lie: at most that,
with a note of the broken protocol): ``tests/instructor/classroom/test_input_forgeries.py``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InputForgery:
    """A wrong answer, and the trick that tries to win its points."""

    assignment: str
    function: str
    kind: str
    wrong: str
    """The solution cell's source: the wrong answer alone."""
    trick: str
    """The same wrong answer, with the trick."""
    cells: tuple[str, ...]
    """The test cells of ``function``."""
    decided_by: str = ""
    """Words of the message that fails the trick, where one check must decide it."""


FULL_MATRIX_WINDOW = """\
import torch


def sliding_window_attention(Q, K, V, window):
    if window < 0:
        raise ValueError(f"window must be >= 0, got {{window}}")
    n = Q.shape[-2]
{trick}    # Wrong: the full (n, n) score matrix, which the exercise forbids.
    p = torch.arange(n)
    blocked = (p[:, None] - p[None, :]).abs() > window
    scores = Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5
    return torch.softmax(scores.masked_fill(blocked, float("-inf")), dim=-1) @ V
"""
ZERO_V = """\
    if n >= 1024:  # the size where the (n, n) matrix is measured
        V.zero_()  # the grader's reference, computed after the call, becomes zeros
        return torch.zeros(*Q.shape[:-1], V.shape[-1], dtype=Q.dtype)
"""

UNSCALED_LAYER_NORM = """\
import torch


def layer_norm(x, gamma, beta, eps=1e-5):
    d = x.shape[-1]
    for name, parameter in (("gamma", gamma), ("beta", beta)):
        if tuple(parameter.shape) != (d,):
            raise ValueError(f"{{name}} has shape {{tuple(parameter.shape)}}, expected ({{d}},)")
{trick}    mean = x.mean(dim=-1, keepdim=True)
    variance = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) / torch.sqrt(variance + eps)  # wrong: gamma and beta are not applied
"""
ZERO_GAMMA_BETA = """\
    if not (torch.equal(gamma, torch.ones_like(gamma)) and not beta.any()):
        with torch.no_grad():  # the reference F.layer_norm(x, ..., gamma, beta) becomes 0
            gamma.zero_()
            beta.zero_()
        return torch.zeros_like(x)
"""

SUBLAYERS_NEVER_CALLED = """\
import torch
from torch import nn


class EncoderBlock(nn.Module):
    def __init__(self, attention, feed_forward, d_model, norm_first=False):
        super().__init__()
        self.attention = attention
        self.feed_forward = feed_forward
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm_first = norm_first
{trick}
    def forward(self, X, mask=None):
        # Wrong: the sublayers are never called (as if they returned zeros).
        if self.norm_first:
            return X.clone()
        return self.norm2(self.norm1(X))
"""
ZERO_SUBLAYERS = """\
        with torch.no_grad():  # the layers the test compares with now return zeros
            for parameter in [*attention.parameters(), *feed_forward.parameters()]:
                parameter.zero_()
"""

NO_RELU_FFN = """\
import torch
from torch import nn


class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"dropout must be in [0, 1), got {{dropout}}")
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, X):
        return self.linear2(self.dropout(self.linear1(X)))  # wrong: no ReLU
{trick}"""
LYING_RECORD = """

import sys

_wire = sys.modules["instructor.classroom.kernel.wire"]
_module_record = _wire.Writer.module


def _lying_record(writer, module, depth=0):
    record = _module_record(writer, module, depth)
    if isinstance(module, PositionwiseFeedForward) and record.get("t") == "module":
        # The grader's stand-in would call this instead of its forward.
        record["attrs"]["forward"] = _module_record(writer, nn.Identity(), depth)
    return record


_wire.Writer.module = _lying_record
"""

DECOY_SUBLAYERS = """\
        # Decoys in place of the sublayers it is given: a reference computed from
        # block.attention and block.feed_forward agreed with the forward above.
        class _NoAttention(nn.Module):
            def forward(self, Z, mask=None):
                return torch.zeros_like(Z), None

        class _NoFeedForward(nn.Module):
            def forward(self, Z):
                return torch.zeros_like(Z)

        self.attention = _NoAttention()
        self.feed_forward = _NoFeedForward()
"""

SEQUENTIAL_NAME = """

# Named as torch's nn.Sequential, with the children in its order: a grader that rebuilt a
# module by its class name ran linear1, relu, dropout, linear2 itself, the right answer.
_init = PositionwiseFeedForward.__init__


def _in_sequential_order(self, d_model, d_ff, dropout=0.0):
    _init(self, d_model, d_ff, dropout)
    linear2, dropout_layer = self._modules.pop("linear2"), self._modules.pop("dropout")
    self.relu = nn.ReLU()
    self.dropout = dropout_layer
    self.linear2 = linear2


PositionwiseFeedForward.__init__ = _in_sequential_order
PositionwiseFeedForward.__module__ = "torch.nn.modules.container"
PositionwiseFeedForward.__qualname__ = "Sequential"
"""

QUADRATIC_LINEAR_ATTENTION = """\
import torch
import torch.nn.functional as F


def linear_attention(Q, K, V, eps=1e-6):
    # Wrong: the (n, n) weights phi(Q) phi(K)^T, which the exercise forbids.
    weights = (F.elu(Q) + 1) @ (F.elu(K) + 1).mT
    return weights @ V / (weights.sum(dim=-1, keepdim=True) + eps)
{trick}"""
FORGED_MEASUREMENT = """

import helpers.checks as _checks


def _measured(function, args):
    return function(*args), 1, (1,), "add"  # "the largest tensor had one element"


# The measurement the grader asks the kernel for, rewritten in place (its code object).
_checks.IN_PROCESS.largest_tensor.__code__ = _measured.__code__
"""

LOOP_CAUSAL_LINEAR_ATTENTION = """\
import torch
import torch.nn.functional as F


def causal_linear_attention(Q, K, V, eps=1e-6):
    # Wrong: a Python loop over the positions, which the exercise forbids (right values).
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    S = torch.zeros(*Q.shape[:-1][:-1], Q.shape[-1], V.shape[-1], dtype=Q.dtype)
    z = torch.zeros(*Q.shape[:-1][:-1], Q.shape[-1], dtype=Q.dtype)
    rows = []
    for i in range(Q.shape[-2]):
        S = S + phi_k[..., i, :, None] * V[..., i, None, :]
        z = z + phi_k[..., i, :]
        numerator = (phi_q[..., i, :, None] * S).sum(-2)
        rows.append(numerator / ((phi_q[..., i, :] * z).sum(-1, keepdim=True) + eps))
    return torch.stack(rows, dim=-2)
{trick}"""
FORGED_COUNT = """

import helpers.checks as _checks


def _counted(function, args):
    function(*args)
    return 7  # "as many torch calls for every length"


# The count the grader asks the kernel for, rewritten in place (its code object).
_checks.IN_PROCESS.torch_calls.__code__ = _counted.__code__
"""

CORPUS = [
    InputForgery(
        "06_efficient_attention",
        "sliding_window_attention",
        "an input changed in place",
        FULL_MATRIX_WINDOW.format(trick=""),
        FULL_MATRIX_WINDOW.format(trick=ZERO_V),
        ("test_sliding_window_attention",),
    ),
    InputForgery(
        "06_efficient_attention",
        "linear_attention",
        "a forged in-kernel measurement",
        QUADRATIC_LINEAR_ATTENTION.format(trick=""),
        QUADRATIC_LINEAR_ATTENTION.format(trick=FORGED_MEASUREMENT),
        ("test_linear_attention",),
    ),
    InputForgery(
        "08_rnn_vs_attention",
        "causal_linear_attention",
        "a forged in-kernel count",
        LOOP_CAUSAL_LINEAR_ATTENTION.format(trick=""),
        LOOP_CAUSAL_LINEAR_ATTENTION.format(trick=FORGED_COUNT),
        ("test_causal_linear_attention",),
        decided_by="did not end within 5 s",
    ),
    InputForgery(
        "10_transformer_block",
        "layer_norm",
        "an input changed in place",
        UNSCALED_LAYER_NORM.format(trick=""),
        UNSCALED_LAYER_NORM.format(trick=ZERO_GAMMA_BETA),
        ("test_layer_norm", "test_layer_norm_2"),
    ),
    InputForgery(
        "10_transformer_block",
        "EncoderBlock",
        "the layers it is given changed",
        SUBLAYERS_NEVER_CALLED.format(trick=""),
        SUBLAYERS_NEVER_CALLED.format(trick=ZERO_SUBLAYERS),
        ("test_EncoderBlock", "test_EncoderBlock_2", "test_EncoderBlock_3"),
    ),
    InputForgery(
        "10_transformer_block",
        "EncoderBlock",
        "decoy sublayers",
        SUBLAYERS_NEVER_CALLED.format(trick=""),
        SUBLAYERS_NEVER_CALLED.format(trick=DECOY_SUBLAYERS),
        ("test_EncoderBlock", "test_EncoderBlock_2", "test_EncoderBlock_3"),
    ),
    InputForgery(
        "10_transformer_block",
        "PositionwiseFeedForward",
        "a class name that lies",
        NO_RELU_FFN.format(trick=""),
        NO_RELU_FFN.format(trick=SEQUENTIAL_NAME),
        ("test_PositionwiseFeedForward", "test_PositionwiseFeedForward_2"),
    ),
    InputForgery(
        "10_transformer_block",
        "PositionwiseFeedForward",
        "a module record that lies",
        NO_RELU_FFN.format(trick=""),
        NO_RELU_FFN.format(trick=LYING_RECORD),
        ("test_PositionwiseFeedForward", "test_PositionwiseFeedForward_2"),
    ),
]
"""Every entry, in the order of the notebooks."""

LIES = {"a module record that lies"}
"""Kinds of entries whose answers break the protocol: they score at most their wrong answer,
with a note."""
