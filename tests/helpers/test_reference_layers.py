"""Notebook 10's reference layers: torch's layer and a block built from its sublayers agree,
and the mistakes a student's block makes are named."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from helpers.reference_layers import TorchAttention, encoder_blocks, run_block


class Block(nn.Module):
    """A right EncoderBlock, post-norm or pre-norm."""

    def __init__(self, attention, feed_forward, d_model, norm_first=False, returns_pair=False):
        super().__init__()
        self.attention, self.feed_forward = attention, feed_forward
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.norm_first, self.returns_pair = norm_first, returns_pair

    def forward(self, X, mask=None):
        att = lambda Z: self.attention(Z, mask)[0]  # noqa: E731
        if self.norm_first:
            H = X + att(self.norm1(X))
            Y = H + self.feed_forward(self.norm2(H))
        else:
            H = self.norm1(X + att(X))
            Y = self.norm2(H + self.feed_forward(H))
        return (Y, None) if self.returns_pair else Y


@pytest.mark.parametrize("norm_first", [False, True])
def test_a_right_block_matches_torch_s_layer(norm_first: bool) -> None:
    layer, block, _ = encoder_blocks(Block, norm_first=norm_first, seed=1)
    X = torch.randn(2, 5, 8)
    causal = torch.ones(5, 5, dtype=torch.bool).tril()
    with torch.no_grad():
        torch.testing.assert_close(run_block(block, X, None, "b"), layer(X))
        torch.testing.assert_close(run_block(block, X, causal, "b"), layer(X, src_mask=~causal))


def test_torch_attention_takes_the_course_s_mask() -> None:
    attention = TorchAttention(nn.MultiheadAttention(4, 2, batch_first=True))
    X = torch.randn(1, 3, 4)
    only_self = torch.eye(3, dtype=torch.bool)  # True = may attend
    out, weights = attention(X, only_self)
    assert weights.shape == (1, 2, 3, 3)
    torch.testing.assert_close(weights[0, 0], torch.eye(3))


def test_torch_attention_takes_a_mask_per_set_of_vectors() -> None:
    attention = TorchAttention(nn.MultiheadAttention(4, 2, batch_first=True))
    X = torch.randn(2, 3, 4)
    only_self, every_key = torch.eye(3, dtype=torch.bool), torch.ones(3, 3, dtype=torch.bool)
    _, weights = attention(X, torch.stack([only_self, every_key]))  # (batch, n, n)
    for head in range(2):
        torch.testing.assert_close(weights[0, head], torch.eye(3))
    assert (weights[1] > 0).all()


def test_the_mistakes_are_named() -> None:
    class NoNorms(nn.Module):
        def __init__(self, attention, feed_forward, d_model, norm_first=False):
            super().__init__()

    with pytest.raises(AssertionError, match=r"norm1 is None; it should be nn.LayerNorm\(8\)"):
        encoder_blocks(NoNorms, norm_first=False, seed=1)
    _, block, _ = encoder_blocks(
        lambda *a, **k: Block(*a, **k, returns_pair=True), norm_first=False, seed=1
    )
    with pytest.raises(AssertionError, match="returned a tuple: the block returns the tensor"):
        run_block(block, torch.randn(1, 2, 8), None, "the block")
    _, block, _ = encoder_blocks(Block, norm_first=False, seed=1)
    # As checked_call: the call and the exception, then this exercise's diagnosis.
    with pytest.raises(
        AssertionError, match=r"Block.forward\(.*raised RuntimeError: .*Pass the mask on"
    ):
        run_block(block, torch.randn(1, 2, 8), torch.ones(2, 2, 2, 2, dtype=torch.bool), "b")

    class Raises(nn.Module):
        def __init__(self, attention, feed_forward, d_model, norm_first=False):
            raise RuntimeError("broken constructor")

    with pytest.raises(AssertionError, match="Raises.*raised RuntimeError: broken constructor"):
        encoder_blocks(Raises, norm_first=False, seed=1)

    class Stub(nn.Module):
        def forward(self, X, mask=None):
            raise NotImplementedError

    with pytest.raises(NotImplementedError):  # an unsolved exercise stays unsolved
        run_block(Stub(), torch.randn(1, 2, 8), None, "b")
