"""torch's own layers arranged as notebook 10's tests compare a student's ``EncoderBlock``.

The three ``EncoderBlock`` test cells build the same pair from one seed: PyTorch's
``nn.TransformerEncoderLayer`` and the student's block given that layer's own sublayers and
LayerNorm weights (:func:`encoder_blocks`), then call the block with the mistakes a student
makes named instead of raw exceptions (:func:`run_block`). Nothing here computes an answer of
an exercise: the reference is torch's layer.

The class grader sends a :class:`TorchAttention` into the student's kernel by its class name
(this module is installed on both sides), never by its source.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from helpers.checks import GraderStop, call_failure, check_type, checked_call

__all__ = ["TorchAttention", "blocked_mask", "encoder_blocks", "run_block"]


class TorchAttention(nn.Module):
    """``nn.MultiheadAttention`` as self-attention, called like the course's
    ``MultiHeadSelfAttention``: ``(X, mask=None) -> (out, weights)``, mask True = may attend.

    Args:
        mha: the attention layer, ``batch_first=True``.
    """

    def __init__(self, mha: nn.MultiheadAttention) -> None:
        super().__init__()
        self.mha = mha

    def forward(
        self, X: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """X (batch, n, d_model) or (n, d_model), mask (n, n) or (batch, n, n) -> out of X's
        shape, weights per head."""
        if mask is not None:
            # Checked here, so that a mask of another shape fails with the same message
            # whatever path nn.MultiheadAttention takes (its fast path, used without
            # gradients, words the error otherwise; the class grader's probe may take either).
            n = X.shape[-2]
            shapes = [(n, n)] + ([(X.shape[0], n, n)] if X.dim() == 3 else [])
            if tuple(mask.shape) not in shapes:
                raise RuntimeError(
                    f"the attention sublayer takes a mask of shape "
                    f"{' or '.join(str(s) for s in shapes)} for X of shape {tuple(X.shape)}, "
                    f"not {tuple(mask.shape)}"
                )
        blocked = blocked_mask(mask, self.mha.num_heads)  # nn.MultiheadAttention: True = blocked
        return self.mha(X, X, X, attn_mask=blocked, average_attn_weights=False)


def blocked_mask(mask: torch.Tensor | None, heads: int) -> torch.Tensor | None:
    """The course's mask (True = may attend) as ``nn.MultiheadAttention``'s ``attn_mask``
    (True = blocked): an (n, n) mask as it is, a mask per set of vectors (batch, n, n)
    repeated for each head, (batch * heads, n, n), as torch asks."""
    if mask is None:
        return None
    if mask.dim() == 2:
        return ~mask
    return (~mask).repeat_interleave(heads, dim=0)


def encoder_blocks(
    encoder_block: Any, norm_first: bool, seed: int, d: int = 8, heads: int = 2, d_ff: int = 16
) -> tuple[nn.TransformerEncoderLayer, nn.Module, nn.Sequential]:
    """``nn.TransformerEncoderLayer`` (eval mode, no dropout) with random LayerNorm weights, and
    the student's block built from its sublayers, with the same LayerNorm weights.

    Args:
        encoder_block: the student's ``EncoderBlock`` class.
        norm_first: pre-norm (True) or post-norm (False), for both.
        seed: seeds torch's global generator, which builds the layer.
        d: ``d_model``.
        heads: the number of attention heads.
        d_ff: the feed-forward sublayer's hidden size.
    Returns:
        ``(layer, block, feed_forward)``: torch's layer, the student's block, and the
        feed-forward sublayer both share.
    """
    torch.manual_seed(seed)
    layer = nn.TransformerEncoderLayer(
        d, heads, d_ff, dropout=0.0, batch_first=True, norm_first=norm_first
    ).eval()
    with torch.no_grad():
        for norm in (layer.norm1, layer.norm2):
            norm.weight.copy_(torch.randn(d) / 2 + 1)
            norm.bias.copy_(torch.randn(d) / 2)
    feed_forward = nn.Sequential(layer.linear1, nn.ReLU(), layer.linear2)
    block = checked_call(
        encoder_block, TorchAttention(layer.self_attn), feed_forward, d, norm_first=norm_first
    )
    check_type(block, nn.Module, "EncoderBlock(...)")
    for name in ("norm1", "norm2"):
        norm = getattr(block, name, None)
        if not isinstance(norm, nn.LayerNorm) or tuple(norm.normalized_shape) != (d,):
            raise AssertionError(
                f"EncoderBlock(..., d_model={d}).{name} is {norm!r}; it should be "
                f"nn.LayerNorm({d}), stored as self.{name} in __init__."
            )
        getattr(block, name).load_state_dict(getattr(layer, name).state_dict())
    return layer, block, feed_forward


def run_block(
    block: nn.Module, X: torch.Tensor, mask: torch.Tensor | None, where: str
) -> torch.Tensor:
    """``block(X)`` or ``block(X, mask)`` without gradients, with the plausible mistakes
    named instead of raw exceptions.

    Args:
        block: the student's block.
        X: (..., n, d_model) inputs.
        mask: (n, n) or (batch, n, n) booleans, True = may attend, or None.
        where: what the call is, for the messages.
    Returns:
        Y, (..., n, d_model).
    """
    args = (X,) if mask is None else (X, mask)
    try:
        with torch.no_grad():
            out = block(*args)
    except (NotImplementedError, GraderStop):
        raise
    except Exception as error:  # noqa: BLE001 - reported to the student, as checked_call does
        # As checked_call: the call, the exception and its likely cause, then the diagnosis
        # of this exercise for the two kinds of exception a block's mistakes raise.
        hint = ""
        if isinstance(error, TypeError):
            hint = (
                f"In {where}: self.attention(Z, mask) returns a pair (out, weights), like "
                "MultiHeadSelfAttention: keep out, e.g. `out, _ = self.attention(Z, mask)`, "
                "before adding it to the residual."
            )
        elif isinstance(error, RuntimeError):
            hint = (
                f"In {where}: Pass the mask on to self.attention unchanged: do not add a head "
                "dimension (mask.unsqueeze(-3)) or transpose it, the attention sublayer "
                "broadcasts it itself; and keep X's shape (..., n, d_model)."
            )
        raise call_failure(block, args, {}, error, hint) from None
    if isinstance(out, tuple):
        raise AssertionError(
            f"{where} returned a tuple: the block returns the tensor Y only (keep out of the "
            "attention's (out, weights) pair inside forward)."
        )
    return out
