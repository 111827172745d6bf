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

from helpers.checks import check_type

__all__ = ["TorchAttention", "encoder_blocks", "run_block"]


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
        """X (batch, n, d_model), mask (n, n) -> out (batch, n, d_model), weights per head."""
        blocked = None if mask is None else ~mask  # nn.MultiheadAttention: True = blocked
        return self.mha(X, X, X, attn_mask=blocked, average_attn_weights=False)


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
    block = encoder_block(TorchAttention(layer.self_attn), feed_forward, d, norm_first=norm_first)
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
        mask: (n, n) booleans, True = may attend, or None.
        where: what the call is, for the messages.
    Returns:
        Y, (..., n, d_model).
    """
    try:
        with torch.no_grad():
            out = block(X) if mask is None else block(X, mask)
    except NotImplementedError:
        raise
    except TypeError as error:
        raise AssertionError(
            f"{where} raised TypeError: {error}. self.attention(Z, mask) returns a pair "
            "(out, weights), like MultiHeadSelfAttention: keep out, e.g. "
            "`out, _ = self.attention(Z, mask)`, before adding it to the residual."
        ) from None
    except RuntimeError:
        raise AssertionError(
            f"{where} raised RuntimeError (a shape that torch refused). Pass the mask on to "
            "self.attention unchanged: do not add a head dimension (mask.unsqueeze(-3)) or "
            "transpose it, the attention sublayer broadcasts it itself; and keep X's shape "
            "(..., n, d_model)."
        ) from None
    if isinstance(out, tuple):
        raise AssertionError(
            f"{where} returned a tuple: the block returns the tensor Y only (keep out of the "
            "attention's (out, weights) pair inside forward)."
        )
    return out
