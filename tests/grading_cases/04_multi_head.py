"""Wrong and right answers for 04_multi_head, graded by real nbgrader autograde
(tests/course/test_autograde.py).

A wrong answer is a ``Mutation``: the reference solution with a small edit that makes the
mistake its name gives. Full sources (``Case``) are kept only for right answers.
"""

from instructor.grading_cases import Case, Mutation

# fmt: off
CASES = [
    # ------------------------------------------------------------------------ split_heads
    Mutation("split_heads", "reshape only, no transpose", {
        "X.reshape(*batch, n, num_heads, d // num_heads)":
            "X.reshape(*batch, num_heads, n, d // num_heads)",
        "return heads.transpose(-3, -2)": "return heads",
    }, message="X reshaped straight to (num_heads, n, d_head) without the transpose"),
    Mutation("split_heads", "transposes the last two dims instead", {
        "heads.transpose(-3, -2)": "heads.transpose(-2, -1)",
    }),
    Mutation("split_heads", "converts X to float32 'to be safe'", {
        "*batch, n, d = X.shape": "X = X.float()\n    *batch, n, d = X.shape",
    }, message="split_heads(X, 2) for a float64 X has dtype torch.float32"),
    Mutation("split_heads", "heads as interleaved columns", {
        "X.reshape(*batch, n, num_heads, d // num_heads)":
            "X.reshape(*batch, n, d // num_heads, num_heads)",
        "heads.transpose(-3, -2)": "heads.movedim(-1, -3)",
    }, message="the heads take interleaved columns (head 0 = columns 0, 3): cut each"),
    Mutation("split_heads", "no ValueError: reshape fails with RuntimeError", {
        "    if d % num_heads != 0:\n"
        '        raise ValueError(f"d = {d} is not divisible by num_heads = {num_heads}")\n': "",
    }),
    Mutation("split_heads", "ValueError message without the sizes", {
        'f"d = {d} is not divisible by num_heads = {num_heads}"':
            '"the model dimension must be divisible by the number of heads"',
    }, message="should give d (10) and num_heads (4)"),
    Mutation("split_heads", "only one batch dimension (b, n, d)", {
        "*batch, n, d = X.shape": "b, n, d = X.shape",
        "X.reshape(*batch, n,": "X.reshape(b, n,",
        "heads.transpose(-3, -2)": "heads.transpose(1, 2)",
    }, message="Read the shape as *batch, n, d = X.shape"),
    Mutation("split_heads", "batched means one batch dim: transpose(1, 2)", {
        "return heads.transpose(-3, -2)":
            "return heads.transpose(1, 2) if X.dim() > 2 else heads.transpose(0, 1)",
    }, hidden=True),
    Case("split_heads", "right", "chunk and stack", '''
def split_heads(X, num_heads):
    d = X.shape[-1]
    if d % num_heads:
        raise ValueError(f"cannot split d={d} into num_heads={num_heads} equal heads")
    return torch.stack(X.chunk(num_heads, dim=-1), dim=-3)
'''),
    Case("split_heads", "right", "unflatten and movedim", '''
def split_heads(X, num_heads):
    if X.shape[-1] % num_heads != 0:
        raise ValueError(f"{X.shape[-1]} % {num_heads} != 0 (d, num_heads)")
    return X.unflatten(-1, (num_heads, -1)).movedim(-2, -3)
'''),
    # ------------------------------------------------------------------------ merge_heads
    Mutation("merge_heads", "reshape only, no transpose", {
        "X.transpose(-3, -2).reshape(": "X.reshape(",
    }, message="X reshaped straight to (n, h * dh) without the transpose: swap the"),
    Mutation("merge_heads", "fills a float32 buffer", {
        "    return X.transpose(-3, -2).reshape(*batch, n, h * dh)": (
            "    out = torch.zeros(*batch, n, h * dh)\n"
            "    out[...] = X.transpose(-3, -2).reshape(*batch, n, h * dh)\n"
            "    return out"
        ),
    }, message="merge_heads(X) for a float64 X has dtype torch.float32"),
    Mutation("merge_heads", "heads interleaved (dh before h)", {
        "X.transpose(-3, -2)": "X.permute(*range(len(batch)), -2, -1, -3)",
    }, message="the heads are interleaved (dh before h): row i must be [head 0 | head"),
    Mutation("merge_heads", "view after transpose (RuntimeError)", {
        ".reshape(*batch, n, h * dh)": ".view(*batch, n, h * dh)",
    }, message="(after a transpose or a permute): use .reshape(...) (or .contiguous().view"),
    Mutation("merge_heads", "only 4-D input (b, h, n, dh)", {
        "*batch, h, n, dh = X.shape": "b, h, n, dh = X.shape",
        "X.transpose(-3, -2).reshape(*batch, n, h * dh)": "X.transpose(1, 2).reshape(b, n, h * dh)",
    }, message="Read the shape as *batch, h, n, dh = X.shape"),
    Mutation("merge_heads", "batched means one batch dim: transpose(1, 2)", {
        "X.transpose(-3, -2).reshape(":
            "(X.transpose(1, 2) if X.dim() > 3 else X.transpose(0, 1)).reshape(",
    }, hidden=True),
    Case("merge_heads", "right", "unbind and cat", '''
def merge_heads(X):
    return torch.cat(X.unbind(dim=-3), dim=-1)
'''),
    Case("merge_heads", "right", "movedim and flatten", '''
def merge_heads(X):
    return X.movedim(-3, -2).flatten(-2)
'''),
]


_MHSA_INIT = '''
class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"{num_heads} heads cannot split d_model = {d_model} evenly")
        self.num_heads = num_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)
'''


def _mhsa(forward: str, init: str = _MHSA_INIT) -> str:
    """A whole class: the usual __init__ and the given forward (indented by 4)."""
    return init + "\n" + forward


CASES += [
    Mutation("MultiHeadSelfAttention", "scaled by sqrt(d_model)", {
        "math.sqrt(Q.shape[-1])": "math.sqrt(X.shape[-1])",
    }),
    Mutation("MultiHeadSelfAttention", "no W_o", {
        "out = self.W_o(merge_heads(weights @ V))": "out = merge_heads(weights @ V)",
    }, message="W_o is not applied to the concatenated heads"),
    Mutation("MultiHeadSelfAttention", "softmax over the queries (dim=-2)", {
        "torch.softmax(scores, dim=-1)": "torch.softmax(scores, dim=-2)",
    }),
    Mutation("MultiHeadSelfAttention", "mask inverted", {
        "masked_fill(~mask.unsqueeze(-3)": "masked_fill(mask.unsqueeze(-3)",
    }),
    Mutation("MultiHeadSelfAttention", "heads split with a reshape, no transpose", {
        "Q = split_heads(self.W_q(X), self.num_heads)":
            "heads = (*X.shape[:-2], self.num_heads, X.shape[-2], -1)  # no transpose\n"
            "        Q = self.W_q(X).reshape(heads)",
        "K = split_heads(self.W_k(X), self.num_heads)": "K = self.W_k(X).reshape(heads)",
        "V = split_heads(self.W_v(X), self.num_heads)": "V = self.W_v(X).reshape(heads)",
        "merge_heads(weights @ V)": "(weights @ V).reshape(X.shape)",
    }),
    Mutation("MultiHeadSelfAttention", "weights averaged over the heads", {
        "return out, weights": "return out, weights.mean(dim=-3)",
    }, message="weights has shape (2, 5, 5): it looks averaged over the heads. Return"),
    Mutation("MultiHeadSelfAttention", "mask not given a head dimension", {
        "~mask.unsqueeze(-3)": "~mask",
    }, message="Likely cause: shapes that do not broadcast"),
    # Only the hidden tests' two batch dimensions with a batched mask see this one.
    Mutation("MultiHeadSelfAttention", "head dimension of a batched mask at position 1", {
        "~mask.unsqueeze(-3)": "~(mask.unsqueeze(1) if mask.dim() > 2 else mask)",
    }, hidden=True),
    # A mistake no visible test wrote a message for (issue 30): checked_call names it.
    Mutation("MultiHeadSelfAttention", "softmax in float32 'for stability' (a new wrong dtype)", {
        "weights = torch.softmax(scores, dim=-1)":
            "weights = torch.softmax(scores, dim=-1, dtype=torch.float32)",
    }, message="Likely cause: a dtype mismatch: a tensor made without the input's dtype"),
    Mutation("MultiHeadSelfAttention", "merged heads viewed as (n, -1) (a new wrong shape)", {
        "out = self.W_o(merge_heads(weights @ V))":
            "out = self.W_o(merge_heads(weights @ V).view(X.shape[-2], -1))",
    }, message="Likely cause: shapes that cannot be multiplied"),
    Mutation("MultiHeadSelfAttention", "W_q of one head's size, (d_model, d_head)", {
        "self.W_q = nn.Linear(d_model, d_model, bias=bias)":
            "self.W_q = nn.Linear(d_model, d_model // num_heads, bias=bias)",
    }, message="; it should be nn.Linear(6, 6, bias=True), stored as self."),
    Mutation("MultiHeadSelfAttention", "bias argument ignored", {
        f"self.{W} = nn.Linear(d_model, d_model, bias=bias)":
            f"self.{W} = nn.Linear(d_model, d_model, bias=True)"
        for W in ("W_q", "W_k", "W_v", "W_o")
    }, message="with bias=False it should be nn.Linear(6, 6, bias=False)"),
    Mutation("MultiHeadSelfAttention", "no error when d_model is not divisible by num_heads", {
        "if d_model % num_heads != 0:\n"
        '            raise ValueError(f"d_model = {d_model} is not divisible by num_heads = '
        '{num_heads}")\n        ': "",
    }, message="should raise ValueError for d_model = 6 and num_heads = 4"),
    Mutation("MultiHeadSelfAttention", "only more heads than features rejected", {
        "if d_model % num_heads != 0:": "if num_heads > d_model:",
    }, message="should raise ValueError for d_model = 6 and num_heads = 4"),
    Mutation("MultiHeadSelfAttention", "hard-codes float32", {
        "Q = split_heads(self.W_q(X), self.num_heads)":
            "X = X.float()\n"
            "        for layer in (self.W_q, self.W_k, self.W_v, self.W_o):\n"
            "            layer.float()\n"
            "        Q = split_heads(self.W_q(X), self.num_heads)",
    }, message="out of the layer in float64 (.double(), float64 X) has dtype torch.float32"),
    # Aimed at the grader (issue 32): the forward ignores W_q..W_o and computes with hidden
    # weights of its own; W_q..W_o are decoys, nn.Linear layers showing the hidden weights
    # whose parameters drop what the test writes into them. A reference computed from the
    # module's W_q..W_o agreed with it (3/3); the test's own weights do not.
    Case("MultiHeadSelfAttention", "wrong", "hidden weights, W_q..W_o decoys that drop writes", '''
class _Kept(nn.Parameter):
    """A parameter that drops what is written into it (copy_ does nothing)."""

    def copy_(self, *args, **kwargs):
        return self


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model = {d_model} is not divisible by num_heads = {num_heads}")
        self.num_heads = num_heads
        g = torch.Generator().manual_seed(0)  # the same hidden weights in every run
        for name in ("W_q", "W_k", "W_v", "W_o"):  # hidden weights: buffers, not parameters
            self.register_buffer(name + "_hidden", torch.randn(d_model, d_model, generator=g) / 3)
            b = torch.randn(d_model, generator=g) / 3 if bias else None
            self.register_buffer(name + "_hidden_bias", b)
            # A decoy: nn.Linear showing the hidden weights, which drops what is written in.
            decoy = nn.Linear(d_model, d_model, bias=bias)
            decoy.weight = _Kept(getattr(self, name + "_hidden").clone())
            if bias:
                decoy.bias = _Kept(b.clone())
            setattr(self, name, decoy)

    def forward(self, X, mask=None):
        def linear(name, Y):  # the hidden weights, never W_q..W_o
            hidden = getattr(self, name + "_hidden"), getattr(self, name + "_hidden_bias")
            return F.linear(Y, *hidden)

        Q = split_heads(linear("W_q", X), self.num_heads)
        K = split_heads(linear("W_k", X), self.num_heads)
        V = split_heads(linear("W_v", X), self.num_heads)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask.unsqueeze(-3), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return linear("W_o", merge_heads(weights @ V)), weights
''', message="weights (compared with nn.MultiheadAttention, average_attn_weights=False) has the "
       "right shape (2, 3, 5, 5) but wrong values"),
    Case("MultiHeadSelfAttention", "right", "einsum, heads split inline", '''
class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if d_model // num_heads * num_heads != d_model:
            raise ValueError(f"d_model = {d_model} is not a multiple of num_heads = {num_heads}")
        self.h = num_heads
        for name in ("W_q", "W_k", "W_v", "W_o"):
            setattr(self, name, nn.Linear(d_model, d_model, bias=bias))

    def forward(self, X, mask=None):
        def heads(Y):
            return Y.unflatten(-1, (self.h, -1))  # (..., n, h, dh)

        Q, K, V = heads(self.W_q(X)), heads(self.W_k(X)), heads(self.W_v(X))
        scores = torch.einsum("...ihc,...jhc->...hij", Q, K) / Q.shape[-1] ** 0.5
        if mask is not None:
            scores = torch.where(mask[..., None, :, :], scores, -torch.inf)
        weights = scores.softmax(dim=-1)
        out = torch.einsum("...hij,...jhc->...ihc", weights, V).flatten(-2)
        return self.W_o(out), weights
'''),
    Case("MultiHeadSelfAttention", "right", "SDPA for the output, explicit weights", _mhsa('''
    def forward(self, X, mask=None):
        Q = split_heads(self.W_q(X), self.num_heads)
        K = split_heads(self.W_k(X), self.num_heads)
        V = split_heads(self.W_v(X), self.num_heads)
        head_mask = None if mask is None else mask.unsqueeze(-3)
        out = F.scaled_dot_product_attention(Q, K, V, attn_mask=head_mask)
        scores = Q @ K.mT / math.sqrt(Q.shape[-1])
        if head_mask is not None:
            scores = scores.masked_fill(~head_mask, float("-inf"))
        return self.W_o(merge_heads(out)), torch.softmax(scores, dim=-1)
''')),
    Case("MultiHeadSelfAttention", "right", "loop over heads", _mhsa('''
    def forward(self, X, mask=None):
        d_head = X.shape[-1] // self.num_heads
        Q, K, V = self.W_q(X), self.W_k(X), self.W_v(X)
        outputs, all_weights = [], []
        for h in range(self.num_heads):
            cols = slice(h * d_head, (h + 1) * d_head)
            scores = Q[..., cols] @ K[..., cols].transpose(-2, -1) / math.sqrt(d_head)
            if mask is not None:
                scores = scores.masked_fill(~mask, float("-inf"))
            weights = torch.softmax(scores, dim=-1)
            outputs.append(weights @ V[..., cols])
            all_weights.append(weights)
        return self.W_o(torch.cat(outputs, dim=-1)), torch.stack(all_weights, dim=-3)
''')),
]

# ---------------------------------------------------------------------- concept questions
CASES += [
    Case("q_multi_head_weights", "wrong", "full-size d_model x d_model matrices for every head",
         "q_multi_head_weights = 8 * 4 * 512**2\n"),
    Case("q_multi_head_weights", "wrong", "W_o forgotten", "q_multi_head_weights = 3 * 512**2\n"),
    Case("q_multi_head_weights", "wrong", "d_head x d_head matrices per head",
         "q_multi_head_weights = 8 * 4 * 64**2\n"),
    Case("q_multi_head_weights", "wrong", "the expression in quotes",
         'q_multi_head_weights = "4 * 512**2"\n', message="should be a number"),
    Case("q_multi_head_weights", "right", "the number written out",
         "q_multi_head_weights = 1_048_576\n"),
    Case("q_one_head_subtraction", "wrong", "(b): the weights taken as free",
         'q_one_head_subtraction = "b"\n'),
    Case("q_one_head_subtraction", "wrong", "(c): weights that do not sum to one",
         'q_one_head_subtraction = "c"\n'),
    Case("q_one_head_subtraction", "right", "upper case with spaces",
         'q_one_head_subtraction = " A "\n'),
    Case("q_head_scale", "wrong", "(a): scaled by sqrt(d_model), not sqrt(d_head)",
         'q_head_scale = "a"\n'),
    Case("q_head_scale", "wrong", "(d): the square root forgotten", 'q_head_scale = "d"\n'),
    Case("q_head_scale", "right", "upper case", 'q_head_scale = "B"\n'),
]
