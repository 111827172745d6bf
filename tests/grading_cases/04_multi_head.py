"""Wrong and right answers for 04_multi_head.

Graded by real nbgrader autograde (tests/test_autograde.py).
"""

from instructor.grading_cases import Case

# fmt: off
CASES = [
    # ------------------------------------------------------------------------ split_heads
    Case("split_heads", "wrong", "reshape only, no transpose", '''
def split_heads(X, num_heads):
    *batch, n, d = X.shape
    if d % num_heads != 0:
        raise ValueError(f"d = {d} is not divisible by num_heads = {num_heads}")
    return X.reshape(*batch, num_heads, n, d // num_heads)
'''),
    Case("split_heads", "wrong", "transposes the last two dims instead", '''
def split_heads(X, num_heads):
    *batch, n, d = X.shape
    if d % num_heads != 0:
        raise ValueError(f"d = {d} is not divisible by num_heads = {num_heads}")
    return X.reshape(*batch, n, num_heads, d // num_heads).transpose(-2, -1)
'''),
    Case("split_heads", "wrong", "heads as interleaved columns", '''
def split_heads(X, num_heads):
    *batch, n, d = X.shape
    if d % num_heads != 0:
        raise ValueError(f"d = {d} is not divisible by num_heads = {num_heads}")
    heads = X.reshape(*batch, n, d // num_heads, num_heads)  # (..., n, dh, h)
    return heads.movedim(-1, -3)  # (..., h, n, dh)
'''),
    Case("split_heads", "wrong", "no ValueError: reshape fails with RuntimeError", '''
def split_heads(X, num_heads):
    *batch, n, d = X.shape
    return X.reshape(*batch, n, num_heads, d // num_heads).transpose(-3, -2)
'''),
    Case("split_heads", "wrong", "ValueError message without the sizes", '''
def split_heads(X, num_heads):
    *batch, n, d = X.shape
    if d % num_heads != 0:
        raise ValueError("the model dimension must be divisible by the number of heads")
    return X.reshape(*batch, n, num_heads, d // num_heads).transpose(-3, -2)
'''),
    Case("split_heads", "wrong", "only one batch dimension (b, n, d)", '''
def split_heads(X, num_heads):
    b, n, d = X.shape
    if d % num_heads != 0:
        raise ValueError(f"d = {d} is not divisible by num_heads = {num_heads}")
    return X.reshape(b, n, num_heads, d // num_heads).transpose(1, 2)
'''),
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
    Case("merge_heads", "wrong", "reshape only, no transpose", '''
def merge_heads(X):
    *batch, h, n, dh = X.shape
    return X.reshape(*batch, n, h * dh)
'''),
    Case("merge_heads", "wrong", "heads interleaved (dh before h)", '''
def merge_heads(X):
    *batch, h, n, dh = X.shape
    return X.permute(*range(len(batch)), -2, -1, -3).reshape(*batch, n, h * dh)
'''),
    Case("merge_heads", "wrong", "view after transpose (RuntimeError)", '''
def merge_heads(X):
    *batch, h, n, dh = X.shape
    return X.transpose(-3, -2).view(*batch, n, h * dh)
'''),
    Case("merge_heads", "wrong", "only 4-D input (b, h, n, dh)", '''
def merge_heads(X):
    b, h, n, dh = X.shape
    return X.transpose(1, 2).reshape(b, n, h * dh)
'''),
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
    Case("MultiHeadSelfAttention", "wrong", "scaled by sqrt(d_model)", _mhsa('''
    def forward(self, X, mask=None):
        Q = split_heads(self.W_q(X), self.num_heads)
        K = split_heads(self.W_k(X), self.num_heads)
        V = split_heads(self.W_v(X), self.num_heads)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(X.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask.unsqueeze(-3), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.W_o(merge_heads(weights @ V)), weights
''')),
    Case("MultiHeadSelfAttention", "wrong", "no W_o", _mhsa('''
    def forward(self, X, mask=None):
        Q = split_heads(self.W_q(X), self.num_heads)
        K = split_heads(self.W_k(X), self.num_heads)
        V = split_heads(self.W_v(X), self.num_heads)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask.unsqueeze(-3), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return merge_heads(weights @ V), weights
''')),
    Case("MultiHeadSelfAttention", "wrong", "softmax over the queries (dim=-2)", _mhsa('''
    def forward(self, X, mask=None):
        Q = split_heads(self.W_q(X), self.num_heads)
        K = split_heads(self.W_k(X), self.num_heads)
        V = split_heads(self.W_v(X), self.num_heads)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask.unsqueeze(-3), float("-inf"))
        weights = torch.softmax(scores, dim=-2)
        return self.W_o(merge_heads(weights @ V)), weights
''')),
    Case("MultiHeadSelfAttention", "wrong", "mask inverted", _mhsa('''
    def forward(self, X, mask=None):
        Q = split_heads(self.W_q(X), self.num_heads)
        K = split_heads(self.W_k(X), self.num_heads)
        V = split_heads(self.W_v(X), self.num_heads)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(mask.unsqueeze(-3), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.W_o(merge_heads(weights @ V)), weights
''')),
    Case("MultiHeadSelfAttention", "wrong", "heads split with a reshape, no transpose", _mhsa('''
    def forward(self, X, mask=None):
        *batch, n, d = X.shape
        h = self.num_heads

        def heads(Y):
            return Y.reshape(*batch, h, n, d // h)

        Q, K, V = heads(self.W_q(X)), heads(self.W_k(X)), heads(self.W_v(X))
        scores = Q @ K.transpose(-2, -1) / math.sqrt(d // h)
        if mask is not None:
            scores = scores.masked_fill(~mask.unsqueeze(-3), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.W_o((weights @ V).reshape(*batch, n, d)), weights
''')),
    Case("MultiHeadSelfAttention", "wrong", "weights averaged over the heads", _mhsa('''
    def forward(self, X, mask=None):
        Q = split_heads(self.W_q(X), self.num_heads)
        K = split_heads(self.W_k(X), self.num_heads)
        V = split_heads(self.W_v(X), self.num_heads)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask.unsqueeze(-3), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.W_o(merge_heads(weights @ V)), weights.mean(dim=-3)
''')),
    Case("MultiHeadSelfAttention", "wrong", "mask not given a head dimension", _mhsa('''
    def forward(self, X, mask=None):
        Q = split_heads(self.W_q(X), self.num_heads)
        K = split_heads(self.W_k(X), self.num_heads)
        V = split_heads(self.W_v(X), self.num_heads)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.W_o(merge_heads(weights @ V)), weights
''')),
    Case("MultiHeadSelfAttention", "wrong", "bias argument ignored", _mhsa('''
    def forward(self, X, mask=None):
        Q = split_heads(self.W_q(X), self.num_heads)
        K = split_heads(self.W_k(X), self.num_heads)
        V = split_heads(self.W_v(X), self.num_heads)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask.unsqueeze(-3), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.W_o(merge_heads(weights @ V)), weights
''', init=_MHSA_INIT.replace("bias=bias", "bias=True"))),
    Case("MultiHeadSelfAttention", "wrong", "hard-codes float32", _mhsa('''
    def forward(self, X, mask=None):
        X = X.float()
        for layer in (self.W_q, self.W_k, self.W_v, self.W_o):
            layer.float()
        Q = split_heads(self.W_q(X), self.num_heads)
        K = split_heads(self.W_k(X), self.num_heads)
        V = split_heads(self.W_v(X), self.num_heads)
        scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
        if mask is not None:
            scores = scores.masked_fill(~mask.unsqueeze(-3), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        return self.W_o(merge_heads(weights @ V)), weights
''')),
    Case("MultiHeadSelfAttention", "right", "einsum, heads split inline", '''
class MultiHeadSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
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
