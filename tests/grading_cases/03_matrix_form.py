"""Wrong and right answers for 03_matrix_form.

Graded by real nbgrader autograde (tests/test_autograde.py).
"""

from instructor.grading_cases import Case

# fmt: off
CASES = [
    # ------------------------------------------------------------------ self_attention_columns
    Case("self_attention_columns", "wrong", "softmax over rows (dim=1)", '''
def self_attention_columns(I, W_q, W_k, W_v):
    Q, K, V = W_q @ I, W_k @ I, W_v @ I
    A_prime = torch.softmax(K.T @ Q / math.sqrt(Q.shape[0]), dim=1)
    return V @ A_prime, A_prime
'''),
    Case("self_attention_columns", "wrong", "no 1/sqrt(q) scaling", '''
def self_attention_columns(I, W_q, W_k, W_v):
    Q, K, V = W_q @ I, W_k @ I, W_v @ I
    A_prime = torch.softmax(K.T @ Q, dim=0)
    return V @ A_prime, A_prime
'''),
    Case("self_attention_columns", "wrong", "scaled by sqrt(r), the input size", '''
def self_attention_columns(I, W_q, W_k, W_v):
    Q, K, V = W_q @ I, W_k @ I, W_v @ I
    A_prime = torch.softmax(K.T @ Q / math.sqrt(I.shape[0]), dim=0)
    return V @ A_prime, A_prime
'''),
    Case("self_attention_columns", "wrong", "scaled by sqrt(v), the value size", '''
def self_attention_columns(I, W_q, W_k, W_v):
    Q, K, V = W_q @ I, W_k @ I, W_v @ I
    A_prime = torch.softmax(K.T @ Q / math.sqrt(V.shape[0]), dim=0)
    return V @ A_prime, A_prime
'''),
    Case("self_attention_columns", "wrong", "returns O transposed (n, v)", '''
def self_attention_columns(I, W_q, W_k, W_v):
    Q, K, V = W_q @ I, W_k @ I, W_v @ I
    A_prime = torch.softmax(K.T @ Q / math.sqrt(Q.shape[0]), dim=0)
    return (V @ A_prime).T, A_prime
'''),
    Case("self_attention_columns", "wrong", "O computed with A_prime transposed", '''
def self_attention_columns(I, W_q, W_k, W_v):
    Q, K, V = W_q @ I, W_k @ I, W_v @ I
    A_prime = torch.softmax(K.T @ Q / math.sqrt(Q.shape[0]), dim=0)
    return V @ A_prime.T, A_prime
'''),
    Case("self_attention_columns", "wrong", "hard-codes float32", '''
def self_attention_columns(I, W_q, W_k, W_v):
    I, W_q, W_k, W_v = I.float(), W_q.float(), W_k.float(), W_v.float()
    Q, K, V = W_q @ I, W_k @ I, W_v @ I
    A_prime = torch.softmax(K.T @ Q / math.sqrt(Q.shape[0]), dim=0)
    return V @ A_prime, A_prime
'''),
    Case("self_attention_columns", "wrong", "scales the input in place", '''
def self_attention_columns(I, W_q, W_k, W_v):
    W_q /= math.sqrt(W_q.shape[0])
    Q, K, V = W_q @ I, W_k @ I, W_v @ I
    A_prime = torch.softmax(K.T @ Q, dim=0)
    return V @ A_prime, A_prime
'''),
    Case("self_attention_columns", "right", "loop over queries, as in the derivation", '''
def self_attention_columns(I, W_q, W_k, W_v):
    n = I.shape[1]
    keys = W_k @ I
    values = W_v @ I
    columns_O, columns_A = [], []
    for j in range(n):
        q_j = W_q @ I[:, j]
        weights = torch.softmax(keys.T @ q_j / q_j.shape[0] ** 0.5, dim=0)
        columns_A.append(weights)
        columns_O.append(values @ weights)
    return torch.stack(columns_O, dim=1), torch.stack(columns_A, dim=1)
'''),
    Case("self_attention_columns", "right", "einsum", '''
def self_attention_columns(I, W_q, W_k, W_v):
    Q = torch.einsum("qr,rn->qn", W_q, I)
    K = torch.einsum("qr,rn->qn", W_k, I)
    V = torch.einsum("vr,rn->vn", W_v, I)
    scores = torch.einsum("qi,qj->ij", K, Q) / math.sqrt(Q.shape[0])
    A_prime = scores.softmax(dim=0)
    return torch.einsum("vi,ij->vj", V, A_prime), A_prime
'''),
    Case("self_attention_columns", "right", "row convention, transposed back", '''
def self_attention_columns(I, W_q, W_k, W_v):
    X = I.T
    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T
    weights = torch.softmax(Q @ K.T / math.sqrt(Q.shape[-1]), dim=-1)
    return (weights @ V).T, weights.T
'''),
    # ------------------------------------------------------------------ attention
    Case("attention", "wrong", "softmax over the queries (dim=-2)", '''
def attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-2)
    return weights @ V, weights
'''),
    Case("attention", "wrong", "no 1/sqrt(d) scaling", '''
def attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ V, weights
'''),
    Case("attention", "wrong", "scaled by sqrt(d_v)", '''
def attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(V.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ V, weights
'''),
    Case("attention", "wrong", "mask inverted (True = blocked)", '''
def attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ V, weights
'''),
    Case("attention", "wrong", "mask multiplied into the weights after the softmax", '''
def attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ V, weights
'''),
    Case("attention", "wrong", "K.T only works without batch dims", '''
def attention(Q, K, V, mask=None):
    scores = Q @ K.T / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ V, weights
'''),
    Case("attention", "wrong", "mask ignored", '''
def attention(Q, K, V, mask=None):
    weights = torch.softmax(Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1]), dim=-1)
    return weights @ V, weights
'''),
    Case("attention", "wrong", "scales Q in place", '''
def attention(Q, K, V, mask=None):
    Q /= math.sqrt(Q.shape[-1])
    scores = Q @ K.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ V, weights
'''),
    Case("attention", "wrong", "only 3-D inputs (bmm)", '''
def attention(Q, K, V, mask=None):
    scores = torch.bmm(Q, K.transpose(1, 2)) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return torch.bmm(weights, V), weights
'''),
    Case("attention", "right", "einsum with torch.where", '''
def attention(Q, K, V, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", Q, K) * Q.shape[-1] ** -0.5
    if mask is not None:
        scores = torch.where(mask, scores, torch.finfo(scores.dtype).min)
    weights = scores.softmax(dim=-1)
    return torch.einsum("...qk,...kv->...qv", weights, V), weights
'''),
    Case("attention", "right", "additive float mask and mT", '''
def attention(Q, K, V, mask=None):
    scores = Q @ K.mT / Q.shape[-1] ** 0.5
    if mask is not None:
        bias = torch.zeros(mask.shape, dtype=scores.dtype).masked_fill(~mask, float("-inf"))
        scores = scores + bias
    scores = scores - scores.amax(dim=-1, keepdim=True)
    weights = scores.exp()
    weights = weights / weights.sum(dim=-1, keepdim=True)
    return weights @ V, weights
'''),
    # ------------------------------------------------------------------ causal_mask
    Case("causal_mask", "wrong", "upper triangle", '''
def causal_mask(n):
    return torch.ones(n, n, dtype=torch.bool).triu()
'''),
    Case("causal_mask", "wrong", "strict lower triangle (diagonal excluded)", '''
def causal_mask(n):
    return torch.ones(n, n, dtype=torch.bool).tril(diagonal=-1)
'''),
    Case("causal_mask", "wrong", "float 0/1 instead of bool", '''
def causal_mask(n):
    return torch.tril(torch.ones(n, n))
'''),
    Case("causal_mask", "wrong", "comparison the wrong way round", '''
def causal_mask(n):
    positions = torch.arange(n)
    return positions[:, None] <= positions[None, :]
'''),
    Case("causal_mask", "right", "arange comparison", '''
def causal_mask(n):
    positions = torch.arange(n)
    return positions[None, :] <= positions[:, None]
'''),
    Case("causal_mask", "right", "not the strict upper triangle", '''
def causal_mask(n):
    return ~torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)
'''),
]
# fmt: on
