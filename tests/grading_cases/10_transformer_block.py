"""Wrong and right answers for 10_transformer_block, graded by real nbgrader autograde
(tests/course/test_autograde.py).

A wrong answer is a ``Mutation``: the reference solution with a small edit that makes the
mistake its name gives. Full sources (``Case``) are kept for right answers.
"""

from instructor.grading_cases import Case, Mutation

# fmt: off
CASES = [
    # ------------------------------------------------------------ PositionwiseFeedForward
    Mutation("PositionwiseFeedForward", "ReLU missing", {
        "hidden = torch.relu(self.linear1(X))": "hidden = self.linear1(X)",
    }),
    Mutation("PositionwiseFeedForward", "ReLU after the second layer too", {
        "return self.linear2(self.dropout(hidden))":
            "return torch.relu(self.linear2(self.dropout(hidden)))",
    }),
    Mutation("PositionwiseFeedForward", "GELU instead of ReLU", {
        "hidden = torch.relu(self.linear1(X))": "hidden = F.gelu(self.linear1(X))",
    }),
    Mutation("PositionwiseFeedForward", "F.dropout left on in eval mode", {
        "self.linear2(self.dropout(hidden))": "self.linear2(F.dropout(hidden, self.dropout.p))",
    }),
    Mutation("PositionwiseFeedForward", "dropout on the output", {
        "return self.linear2(self.dropout(hidden))": "return self.dropout(self.linear2(hidden))",
    }),
    Mutation("PositionwiseFeedForward", "dropout argument ignored", {
        "self.dropout = nn.Dropout(dropout)": "self.dropout = nn.Dropout(0.0)",
    }),
    Mutation("PositionwiseFeedForward", "no ValueError for a bad dropout", {
        "        if not 0.0 <= dropout < 1.0:\n"
        '            raise ValueError(f"dropout must be in [0, 1), got {dropout}")\n': "",
    }),
    Mutation("PositionwiseFeedForward", "hard-codes float32", {
        "hidden = torch.relu(self.linear1(X))":
            "X = X.float()\n"
            "        self.float()\n"
            "        hidden = torch.relu(self.linear1(X))",
    }),
    Case("PositionwiseFeedForward", "right", "F.linear and F.dropout with self.training", '''
class PositionwiseFeedForward(nn.Module):
    def __init__(self, d_model, d_ff, dropout=0.0):
        super().__init__()
        if dropout < 0 or dropout >= 1:
            raise ValueError(f"dropout {dropout} outside [0, 1)")
        self.p = dropout
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, X):
        hidden = F.linear(X, self.linear1.weight, self.linear1.bias).clamp(min=0)
        hidden = F.dropout(hidden, self.p, training=self.training)
        return F.linear(hidden, self.linear2.weight, self.linear2.bias)
'''),
    # ------------------------------------------------------------------------- layer_norm
    Mutation("layer_norm", "unbiased variance (torch.var default)", {
        "variance = ((x - mean) ** 2).mean(dim=-1, keepdim=True)":
            "variance = x.var(dim=-1, keepdim=True)",
    }),
    Mutation("layer_norm", "eps outside the square root", {
        "torch.sqrt(variance + eps)": "(torch.sqrt(variance) + eps)",
    }),
    Mutation("layer_norm", "normalised over the vectors (dim=-2)", {
        "mean = x.mean(dim=-1, keepdim=True)": "mean = x.mean(dim=-2, keepdim=True)",
        "variance = ((x - mean) ** 2).mean(dim=-1, keepdim=True)":
            "variance = ((x - mean) ** 2).mean(dim=-2, keepdim=True)",
    }),
    Mutation("layer_norm", "gamma and beta swapped", {
        "return gamma * (x - mean) / torch.sqrt(variance + eps) + beta":
            "return beta * (x - mean) / torch.sqrt(variance + eps) + gamma",
    }),
    Mutation("layer_norm", "eps argument ignored", {
        "torch.sqrt(variance + eps)": "torch.sqrt(variance + 1e-5)",
    }),
    Mutation("layer_norm", "no ValueError for wrong gamma or beta shapes", {
        "            raise ValueError(\n": "            pass\n            _ = (\n",
    }),
    Mutation("layer_norm", "hard-codes float32", {
        "mean = x.mean(dim=-1, keepdim=True)":
            "x, gamma, beta = x.float(), gamma.float(), beta.float()\n"
            "    mean = x.mean(dim=-1, keepdim=True)",
    }),
    Case("layer_norm", "right", "var_mean and rsqrt", '''
def layer_norm(x, gamma, beta, eps=1e-5):
    if gamma.shape != x.shape[-1:] or beta.shape != x.shape[-1:]:
        raise ValueError(
            f"gamma {tuple(gamma.shape)} and beta {tuple(beta.shape)} must be {tuple(x.shape[-1:])}"
        )
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, unbiased=False)
    return (x - mean) * torch.rsqrt(var + eps) * gamma + beta
'''),
    Case("layer_norm", "right", "sums over the last axis, by hand", '''
def layer_norm(x, gamma, beta, eps=1e-5):
    d = x.shape[-1]
    if list(gamma.shape) != [d]:
        raise ValueError(f"gamma: {list(gamma.shape)} is not [{d}]")
    if list(beta.shape) != [d]:
        raise ValueError(f"beta: {list(beta.shape)} is not [{d}]")
    centred = x - x.sum(dim=-1, keepdim=True) / d
    std = (centred.pow(2).sum(dim=-1, keepdim=True) / d + eps).sqrt()
    return centred / std * gamma + beta
'''),
    # ----------------------------------------------------------------------- EncoderBlock
    Mutation("EncoderBlock", "pre-norm residual taken from the normalised input", {
        "H = X + self.attention(self.norm1(X), mask)[0]":
            "Z = self.norm1(X)\n            H = Z + self.attention(Z, mask)[0]",
        "return H + self.feed_forward(self.norm2(H))":
            "Z = self.norm2(H)\n            return Z + self.feed_forward(Z)",
    }),
    Mutation("EncoderBlock", "no residual connections", {
        "H = X + self.attention(self.norm1(X), mask)[0]":
            "H = self.attention(self.norm1(X), mask)[0]",
        "return H + self.feed_forward(self.norm2(H))": "return self.feed_forward(self.norm2(H))",
        "H = self.norm1(X + self.attention(X, mask)[0])":
            "H = self.norm1(self.attention(X, mask)[0])",
        "return self.norm2(H + self.feed_forward(H))": "return self.norm2(self.feed_forward(H))",
    }),
    Mutation("EncoderBlock", "norm_first ignored (always post-norm)", {
        "self.norm_first = norm_first": "self.norm_first = False",
    }),
    Mutation("EncoderBlock", "post-norm normalises the sublayer output before the residual", {
        "H = self.norm1(X + self.attention(X, mask)[0])":
            "H = X + self.norm1(self.attention(X, mask)[0])",
        "return self.norm2(H + self.feed_forward(H))":
            "return H + self.norm2(self.feed_forward(H))",
    }),
    Mutation("EncoderBlock", "mask not passed to the attention", {
        "self.attention(self.norm1(X), mask)[0]": "self.attention(self.norm1(X))[0]",
        "self.attention(X, mask)[0]": "self.attention(X)[0]",
    }),
    Mutation("EncoderBlock", "norm1 used for both sublayers", {
        "self.feed_forward(self.norm2(H))": "self.feed_forward(self.norm1(H))",
        "return self.norm2(H + self.feed_forward(H))":
            "return self.norm1(H + self.feed_forward(H))",
    }),
    Mutation("EncoderBlock", "pre-norm without the second residual", {
        "return H + self.feed_forward(self.norm2(H))": "return self.feed_forward(self.norm2(H))",
    }),
    Case("EncoderBlock", "right", "one residual helper for both sublayers", '''
class EncoderBlock(nn.Module):
    def __init__(self, attention, feed_forward, d_model, norm_first=False):
        super().__init__()
        self.attention, self.feed_forward = attention, feed_forward
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.pre = bool(norm_first)

    def _residual(self, X, sublayer, norm):
        if self.pre:
            return X + sublayer(norm(X))
        return norm(X + sublayer(X))

    def forward(self, X, mask=None):
        def attend(Z):
            out, _ = self.attention(Z, mask)
            return out

        H = self._residual(X, attend, self.norm1)
        return self._residual(H, self.feed_forward, self.norm2)
'''),
    # ----------------------------------------------------------------------- padding_mask
    Mutation("padding_mask", "True marks the padding (inverted)", {
        "positions < lengths.unsqueeze(-1)": "positions >= lengths.unsqueeze(-1)",
    }),
    Mutation("padding_mask", "one position too many (<=)", {
        "positions < lengths.unsqueeze(-1)": "positions <= lengths.unsqueeze(-1)",
    }),
    Mutation("padding_mask", "masks the queries: shape (batch, n, 1)", {
        "(positions < lengths.unsqueeze(-1)).unsqueeze(-2)":
            "(positions < lengths.unsqueeze(-1)).unsqueeze(-1)",
    }),
    Mutation("padding_mask", "no query dimension: shape (batch, n)", {
        "(positions < lengths.unsqueeze(-1)).unsqueeze(-2)": "(positions < lengths.unsqueeze(-1))",
    }),
    Mutation("padding_mask", "no ValueError for lengths out of range", {
        "    if wrong.numel() > 0:\n": "    if False:\n",
    }),
    Mutation("padding_mask", "only 1-D lengths (batch,)", {
        "(positions < lengths.unsqueeze(-1)).unsqueeze(-2)":
            "(positions < lengths[:, None])[:, None]",
    }),
    Case("padding_mask", "right", "expand and compare", '''
def padding_mask(lengths, n):
    if bool((lengths < 1).any()) or bool((lengths > n).any()):
        bad = [v for v in lengths.flatten().tolist() if v < 1 or v > n]
        raise ValueError(f"length {bad[0]} is not in 1..{n}")
    keys = torch.arange(n).expand(*lengths.shape, 1, n)
    return keys < lengths[..., None, None]
'''),
]
