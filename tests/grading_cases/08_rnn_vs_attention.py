"""Wrong and right answers for 08_rnn_vs_attention.

Graded by real nbgrader autograde (tests/test_autograde.py).
"""

from instructor.grading_cases import Case

# The shape checks that the docstring of rnn_forward asks for, shared by the rnn_forward
# answers below, so that each wrong answer is wrong for its own reason only.
RNN_CHECKS = """
    d_h, d_in = W_x.shape[0], X.shape[-1]
    if X.dim() != 2 or W_x.shape[1] != d_in or W_h.shape != (d_h, d_h) or b.shape != (d_h,):
        raise ValueError("shapes do not fit")
    if h0 is not None and h0.shape != (d_h,):
        raise ValueError(f"h0 has shape {tuple(h0.shape)}, expected ({d_h},)")
"""


def rnn(body: str) -> str:
    """An rnn_forward answer: the signature, the shape checks, then ``body``."""
    return "\ndef rnn_forward(X, W_x, W_h, b, h0=None):" + RNN_CHECKS + body


# fmt: off
CASES = [
    # ------------------------------------------------------------------------- rnn_forward
    Case("rnn_forward", "wrong", "h0 included in the output (n + 1 rows)", rnn('''
    h = X.new_zeros(d_h) if h0 is None else h0
    states = [h]
    for x in X:
        h = torch.tanh(W_x @ x + W_h @ h + b)
        states.append(h)
    return torch.stack(states)
''')),
    Case("rnn_forward", "wrong", "returns h_0 .. h_(n-1) (state before each step)", rnn('''
    h = X.new_zeros(d_h) if h0 is None else h0
    states = []
    for x in X:
        states.append(h)
        h = torch.tanh(W_x @ x + W_h @ h + b)
    return torch.stack(states)
''')),
    Case("rnn_forward", "wrong", "returns the last state only", rnn('''
    h = X.new_zeros(d_h) if h0 is None else h0
    for x in X:
        h = torch.tanh(W_x @ x + W_h @ h + b)
    return h
''')),
    Case("rnn_forward", "wrong", "tanh missing", rnn('''
    h = X.new_zeros(d_h) if h0 is None else h0
    states = []
    for x in X:
        h = W_x @ x + W_h @ h + b
        states.append(h)
    return torch.stack(states)
''')),
    Case("rnn_forward", "wrong", "b added outside the tanh", rnn('''
    h = X.new_zeros(d_h) if h0 is None else h0
    states = []
    for x in X:
        h = torch.tanh(W_x @ x + W_h @ h) + b
        states.append(h)
    return torch.stack(states)
''')),
    Case("rnn_forward", "wrong", "W_h transposed (h @ W_h)", rnn('''
    h = X.new_zeros(d_h) if h0 is None else h0
    states = []
    for x in X:
        h = torch.tanh(W_x @ x + h @ W_h + b)
        states.append(h)
    return torch.stack(states)
''')),
    Case("rnn_forward", "wrong", "W_x transposed (X @ W_x), no shape checks", '''
def rnn_forward(X, W_x, W_h, b, h0=None):
    h = X.new_zeros(W_h.shape[0]) if h0 is None else h0
    states = []
    for x_part in X @ W_x + b:
        h = torch.tanh(x_part + W_h @ h)
        states.append(h)
    return torch.stack(states)
'''),
    Case("rnn_forward", "wrong", "h0 ignored (always zeros)", rnn('''
    h = X.new_zeros(d_h)
    states = []
    for x in X:
        h = torch.tanh(W_x @ x + W_h @ h + b)
        states.append(h)
    return torch.stack(states)
''')),
    Case("rnn_forward", "wrong", "default h0 created as float32 zeros", rnn('''
    h = torch.zeros(d_h) if h0 is None else h0
    states = []
    for x in X:
        h = torch.tanh(W_x @ x + W_h @ h + b)
        states.append(h)
    return torch.stack(states)
''')),
    Case("rnn_forward", "wrong", "no shape checks (RuntimeError, not ValueError)", '''
def rnn_forward(X, W_x, W_h, b, h0=None):
    h = X.new_zeros(W_x.shape[0]) if h0 is None else h0
    states = []
    for x in X:
        h = torch.tanh(W_x @ x + W_h @ h + b)
        states.append(h)
    return torch.stack(states)
'''),
    Case("rnn_forward", "right", "one matrix-vector product per step, explicit dtype", rnn('''
    h = torch.zeros(d_h, dtype=X.dtype) if h0 is None else h0
    rows = []
    for t in range(X.shape[0]):
        h = torch.tanh(W_x @ X[t] + W_h @ h + b)
        rows.append(h)
    return torch.stack(rows, dim=0)
''')),
    Case("rnn_forward", "right", "torch.nn.RNN with the weights copied in", rnn('''
    layer = torch.nn.RNN(d_in, d_h, nonlinearity="tanh").to(X.dtype)
    start = X.new_zeros(1, d_h) if h0 is None else h0[None]
    with torch.no_grad():
        layer.weight_ih_l0.copy_(W_x)
        layer.weight_hh_l0.copy_(W_h)
        layer.bias_ih_l0.copy_(b)
        layer.bias_hh_l0.zero_()
        return layer(X, start)[0]
''')),
    # ------------------------------------------------------------- causal_linear_attention
    Case("causal_linear_attention", "wrong", "not causal: sums over all positions", '''
def causal_linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    S = phi_k.transpose(-2, -1) @ V
    z = phi_k.sum(dim=-2, keepdim=True)
    return (phi_q @ S) / ((phi_q * z).sum(dim=-1, keepdim=True) + eps)
'''),
    Case("causal_linear_attention", "wrong", "strictly causal: j < i", '''
def causal_linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    outer = phi_k.unsqueeze(-1) * V.unsqueeze(-2)
    S = torch.cumsum(outer, dim=-3) - outer
    z = torch.cumsum(phi_k, dim=-2) - phi_k
    numerator = (phi_q.unsqueeze(-1) * S).sum(dim=-2)
    return numerator / ((phi_q * z).sum(dim=-1, keepdim=True) + eps)
'''),
    Case("causal_linear_attention", "wrong", "causal softmax attention instead", '''
def causal_linear_attention(Q, K, V, eps=1e-6):
    return F.scaled_dot_product_attention(Q, K, V, is_causal=True)
'''),
    Case("causal_linear_attention", "wrong", "relu feature map", '''
def causal_linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k = torch.relu(Q), torch.relu(K)
    S = torch.cumsum(phi_k.unsqueeze(-1) * V.unsqueeze(-2), dim=-3)
    z = torch.cumsum(phi_k, dim=-2)
    numerator = (phi_q.unsqueeze(-1) * S).sum(dim=-2)
    return numerator / ((phi_q * z).sum(dim=-1, keepdim=True) + eps)
'''),
    Case("causal_linear_attention", "wrong", "denominator missing", '''
def causal_linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    S = torch.cumsum(phi_k.unsqueeze(-1) * V.unsqueeze(-2), dim=-3)
    return (phi_q.unsqueeze(-1) * S).sum(dim=-2)
'''),
    Case("causal_linear_attention", "wrong", "cumsum over d_k instead of positions", '''
def causal_linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    S = torch.cumsum(phi_k.unsqueeze(-1) * V.unsqueeze(-2), dim=-2)
    z = torch.cumsum(phi_k, dim=-1)
    numerator = (phi_q.unsqueeze(-1) * S).sum(dim=-2)
    return numerator / ((phi_q * z).sum(dim=-1, keepdim=True) + eps)
'''),
    Case("causal_linear_attention", "wrong", "phi applied to V too", '''
def causal_linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k, phi_v = F.elu(Q) + 1, F.elu(K) + 1, F.elu(V) + 1
    S = torch.cumsum(phi_k.unsqueeze(-1) * phi_v.unsqueeze(-2), dim=-3)
    z = torch.cumsum(phi_k, dim=-2)
    numerator = (phi_q.unsqueeze(-1) * S).sum(dim=-2)
    return numerator / ((phi_q * z).sum(dim=-1, keepdim=True) + eps)
'''),
    Case("causal_linear_attention", "wrong", "eps argument ignored (1e-6 hard-coded)", '''
def causal_linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    S = torch.cumsum(phi_k.unsqueeze(-1) * V.unsqueeze(-2), dim=-3)
    z = torch.cumsum(phi_k, dim=-2)
    numerator = (phi_q.unsqueeze(-1) * S).sum(dim=-2)
    return numerator / ((phi_q * z).sum(dim=-1, keepdim=True) + 1e-6)
'''),
    Case("causal_linear_attention", "wrong", "transpose(0, 1): only works without batch", '''
def causal_linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    A = (phi_q @ phi_k.transpose(0, 1)).tril()
    return (A @ V) / (A.sum(dim=-1, keepdim=True) + eps)
'''),
    Case("causal_linear_attention", "wrong", "computes in float32", '''
def causal_linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q.float()) + 1, F.elu(K.float()) + 1
    S = torch.cumsum(phi_k.unsqueeze(-1) * V.float().unsqueeze(-2), dim=-3)
    z = torch.cumsum(phi_k, dim=-2)
    numerator = (phi_q.unsqueeze(-1) * S).sum(dim=-2)
    return numerator / ((phi_q * z).sum(dim=-1, keepdim=True) + eps)
'''),
    Case("causal_linear_attention", "right", "masked quadratic form", '''
def causal_linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    n = Q.shape[-2]
    mask = torch.ones(n, n, dtype=torch.bool, device=Q.device).tril()
    A = (phi_q @ phi_k.transpose(-2, -1)).masked_fill(~mask, 0.0)
    return (A @ V) / (A.sum(dim=-1, keepdim=True) + eps)
'''),
    Case("causal_linear_attention", "right", "einsum with cumsum", '''
def causal_linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    S = torch.einsum("...nk,...nv->...nkv", phi_k, V).cumsum(dim=-3)
    z = phi_k.cumsum(dim=-2)
    numerator = torch.einsum("...nk,...nkv->...nv", phi_q, S)
    denominator = torch.einsum("...nk,...nk->...n", phi_q, z).unsqueeze(-1)
    return numerator / (denominator + eps)
'''),
    # ---------------------------------------------------------- linear_attention_recurrent
    Case("linear_attention_recurrent", "wrong", "output read before the state update", '''
def linear_attention_recurrent(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    S = V.new_zeros(*V.shape[:-2], K.shape[-1], V.shape[-1])
    z = K.new_zeros(*K.shape[:-2], K.shape[-1])
    outputs = []
    for t in range(Q.shape[-2]):
        q = phi_q[..., t, :]
        num = (q.unsqueeze(-1) * S).sum(dim=-2)
        outputs.append(num / ((q * z).sum(dim=-1, keepdim=True) + eps))
        S = S + phi_k[..., t, :].unsqueeze(-1) * V[..., t, :].unsqueeze(-2)
        z = z + phi_k[..., t, :]
    return torch.stack(outputs, dim=-2)
'''),
    Case("linear_attention_recurrent", "wrong", "z not accumulated", '''
def linear_attention_recurrent(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    S = V.new_zeros(*V.shape[:-2], K.shape[-1], V.shape[-1])
    outputs = []
    for t in range(Q.shape[-2]):
        q, z = phi_q[..., t, :], phi_k[..., t, :]
        S = S + z.unsqueeze(-1) * V[..., t, :].unsqueeze(-2)
        num = (q.unsqueeze(-1) * S).sum(dim=-2)
        outputs.append(num / ((q * z).sum(dim=-1, keepdim=True) + eps))
    return torch.stack(outputs, dim=-2)
'''),
    Case("linear_attention_recurrent", "wrong", "state reset at every step", '''
def linear_attention_recurrent(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    outputs = []
    for t in range(Q.shape[-2]):
        q, k = phi_q[..., t, :], phi_k[..., t, :]
        S = k.unsqueeze(-1) * V[..., t, :].unsqueeze(-2)
        z = k
        num = (q.unsqueeze(-1) * S).sum(dim=-2)
        outputs.append(num / ((q * z).sum(dim=-1, keepdim=True) + eps))
    return torch.stack(outputs, dim=-2)
'''),
    Case("linear_attention_recurrent", "wrong", "indexes Q[t]: no batch dimensions", '''
def linear_attention_recurrent(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    S = V.new_zeros(K.shape[-1], V.shape[-1])
    z = K.new_zeros(K.shape[-1])
    outputs = []
    for t in range(len(Q)):
        S = S + torch.outer(phi_k[t], V[t])
        z = z + phi_k[t]
        outputs.append(phi_q[t] @ S / (phi_q[t] @ z + eps))
    return torch.stack(outputs)
'''),
    Case("linear_attention_recurrent", "wrong", "final state used for every position", '''
def linear_attention_recurrent(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    S = V.new_zeros(*V.shape[:-2], K.shape[-1], V.shape[-1])
    z = K.new_zeros(*K.shape[:-2], K.shape[-1])
    for t in range(Q.shape[-2]):
        S = S + phi_k[..., t, :].unsqueeze(-1) * V[..., t, :].unsqueeze(-2)
        z = z + phi_k[..., t, :]
    num = phi_q @ S
    return num / ((phi_q * z.unsqueeze(-2)).sum(dim=-1, keepdim=True) + eps)
'''),
    Case("linear_attention_recurrent", "wrong", "eps added to the numerator too", '''
def linear_attention_recurrent(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    S = V.new_zeros(*V.shape[:-2], K.shape[-1], V.shape[-1])
    z = K.new_zeros(*K.shape[:-2], K.shape[-1])
    outputs = []
    for t in range(Q.shape[-2]):
        S = S + phi_k[..., t, :].unsqueeze(-1) * V[..., t, :].unsqueeze(-2)
        z = z + phi_k[..., t, :]
        q = phi_q[..., t, :]
        num = (q.unsqueeze(-1) * S).sum(dim=-2) + eps
        outputs.append(num / ((q * z).sum(dim=-1, keepdim=True) + eps))
    return torch.stack(outputs, dim=-2)
'''),
    Case("linear_attention_recurrent", "right", "matmul on an unsqueezed state", '''
def linear_attention_recurrent(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    batch, d_k, d_v = K.shape[:-2], K.shape[-1], V.shape[-1]
    S = torch.zeros(*batch, d_k, d_v, dtype=V.dtype)
    z = torch.zeros(*batch, d_k, 1, dtype=K.dtype)
    outputs = []
    for t in range(Q.shape[-2]):
        k = phi_k[..., t, :, None]
        S = S + k @ V[..., t, None, :]
        z = z + k
        q = phi_q[..., t, None, :]
        outputs.append((q @ S) / (q @ z + eps))
    return torch.cat(outputs, dim=-2)
'''),
]
