"""Wrong and right answers for 08_rnn_vs_attention.

Wrong answers are ``Mutation``s of the reference solution (the mistake as a small edit);
full sources (``Case``) only for right answers and for wrong answers that rewrite the
function (another algorithm than the reference's). Graded by real nbgrader autograde
(tests/course/test_autograde.py).
"""

from instructor.grading_cases import Case, Mutation

# The shape checks that the docstring of rnn_forward asks for, shared by the right
# rnn_forward answers below.
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


# rnn_forward without its shape checks (no ValueError: torch's RuntimeError, if any).
NO_SHAPE_CHECKS = {
    "    if X.dim() != 2:\n"
    '        raise ValueError(f"X must have shape (n, d_in), got {tuple(X.shape)}")\n': "",
    'given = {"W_x": W_x, "W_h": W_h, "b": b, "h0": h0}': "given = {}",
}

# The state update of linear_attention_recurrent's loop.
STATE_UPDATE = (
    "        S = S + k_t.unsqueeze(-1) * v_t.unsqueeze(-2)  # add phi(k_t) v_t^T\n"
    "        z = z + k_t\n"
)

# fmt: off
CASES = [
    # ------------------------------------------------------------------------- rnn_forward
    Mutation("rnn_forward", "h0 included in the output (n + 1 rows)", {
        "states = []": "states = [h]",
    }, message="H has n + 1 = 6 rows: return h_1, ..., h_n, without h_0"),
    Mutation("rnn_forward", "returns h_0 .. h_(n-1) (state before each step)", {
        "        h = torch.tanh(input_t + W_h @ h)\n        states.append(h)": (
            "        states.append(h)\n        h = torch.tanh(input_t + W_h @ h)"
        ),
    }, message="the rows are h_0, ..., h_(n-1): return the states after each step"),
    Mutation("rnn_forward", "returns the last state only", {
        "return torch.stack(states)": "return h",
    }),
    Mutation("rnn_forward", "tanh missing", {
        "h = torch.tanh(input_t + W_h @ h)": "h = input_t + W_h @ h",
    }, message="Some hidden states lie outside [-1, 1]: tanh must be applied to the"),
    Mutation("rnn_forward", "b added outside the tanh", {
        "inputs = X @ W_x.T + b": "inputs = X @ W_x.T",
        "torch.tanh(input_t + W_h @ h)": "torch.tanh(input_t + W_h @ h) + b",
    }, message="Some hidden states lie outside [-1, 1]: tanh must be applied to the"),
    Mutation("rnn_forward", "W_h transposed (h @ W_h)", {
        "W_h @ h": "h @ W_h",
    }, message="W_h is transposed: the update uses W_h @ h_(t-1), i.e. h_(t-1) @"),
    Mutation("rnn_forward", "W_x transposed (X @ W_x), no shape checks", {
        **NO_SHAPE_CHECKS,
        "X @ W_x.T": "X @ W_x",
    }, message="check each product's shapes"),
    Mutation("rnn_forward", "h0 ignored (always zeros)", {
        "    h = h0\n": "    h = X.new_zeros(d_h)\n",
    }, message="h0 is ignored: the first step must start from the given h0"),
    Mutation("rnn_forward", "default h0 created as float32 zeros", {
        "h0 = X.new_zeros(d_h)": "h0 = torch.zeros(d_h)",
    }, message="is the default h0 created as float32?"),
    Case("rnn_forward", "wrong", "states written into a float32 buffer", rnn('''
    h = X.new_zeros(d_h) if h0 is None else h0
    H = torch.zeros(X.shape[0], d_h)
    for t in range(X.shape[0]):
        h = torch.tanh(W_x @ X[t] + W_h @ h + b)
        H[t] = h
    return H
'''), message="H for float64 X, W_x, W_h and b (h0=None) has dtype torch.float32"),
    Mutation("rnn_forward", "no shape checks (RuntimeError, not ValueError)", NO_SHAPE_CHECKS),
    Mutation("rnn_forward", "h0's shape not checked (only the weights and b)", {
        'given = {"W_x": W_x, "W_h": W_h, "b": b, "h0": h0}': (
            'given = {"W_x": W_x, "W_h": W_h, "b": b}'
        ),
    }, message="should raise ValueError for h0 of shape (5,) where d_h = 4"),
    Mutation("rnn_forward", "only W_x's shape checked (the one the text gives as an example)", {
        'given = {"W_x": W_x, "W_h": W_h, "b": b, "h0": h0}': 'given = {"W_x": W_x}',
    }, message="should raise ValueError for W_h of shape (4, 5) where d_h = 4"),
    Case("rnn_forward", "wrong", "computed in float32, the result cast back to X's dtype", rnn('''
    h = (X.new_zeros(d_h) if h0 is None else h0).float()
    rows = []
    for t in range(X.shape[0]):
        h = torch.tanh(W_x.float() @ X[t].float() + W_h.float() @ h + b.float())
        rows.append(h)
    return torch.stack(rows).to(X.dtype)
'''), hidden=True),
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
    Mutation("causal_linear_attention", "not causal: sums over all positions", {
        "torch.cumsum(outer, dim=-3)": "outer.sum(dim=-3, keepdim=True)",
        "torch.cumsum(phi_k, dim=-2)": "phi_k.sum(dim=-2, keepdim=True)",
    }, message="every position sees ALL keys: position i may only use keys 0..i"),
    Mutation("causal_linear_attention", "strictly causal: j < i", {
        "torch.cumsum(outer, dim=-3)": "torch.cumsum(outer, dim=-3) - outer",
        "torch.cumsum(phi_k, dim=-2)": "torch.cumsum(phi_k, dim=-2) - phi_k",
    }, message="position i sees only keys j < i: it must also see itself"),
    Case("causal_linear_attention", "wrong", "causal softmax attention instead", '''
def causal_linear_attention(Q, K, V, eps=1e-6):
    return F.scaled_dot_product_attention(Q, K, V, is_causal=True)
''', message="causal SOFTMAX attention: use the feature map"),
    Mutation("causal_linear_attention", "relu feature map", {
        "phi_q = F.elu(Q) + 1": "phi_q = torch.relu(Q)",
        "phi_k = F.elu(K) + 1": "phi_k = torch.relu(K)",
    }, message="the feature map is relu(x), not elu(x) + 1"),
    Mutation("causal_linear_attention", "elu feature map without the + 1", {
        "phi_q = F.elu(Q) + 1": "phi_q = F.elu(Q)",
        "phi_k = F.elu(K) + 1": "phi_k = F.elu(K)",
    }, message="the feature map is elu(x), without the + 1"),
    Mutation("causal_linear_attention", "exp feature map", {
        "phi_q = F.elu(Q) + 1": "phi_q = torch.exp(Q)",
        "phi_k = F.elu(K) + 1": "phi_k = torch.exp(K)",
    }, message="the feature map is exp(x): that is (unscaled) softmax attention"),
    Mutation("causal_linear_attention", "denominator missing", {
        "return numerator / (denominator + eps)": "return numerator",
    }, message="the denominator phi(q_i)^T z_i + eps is missing"),
    Mutation("causal_linear_attention", "cumsum over d_k instead of positions", {
        "torch.cumsum(outer, dim=-3)": "torch.cumsum(outer, dim=-2)",
        "torch.cumsum(phi_k, dim=-2)": "torch.cumsum(phi_k, dim=-1)",
    }),
    Mutation("causal_linear_attention", "phi applied to V too", {
        "* V.unsqueeze(-2)": "* (F.elu(V) + 1).unsqueeze(-2)",
    }, message="phi is applied to V: it acts on queries and keys only"),
    Mutation("causal_linear_attention", "eps argument ignored (1e-6 hard-coded)", {
        "(denominator + eps)": "(denominator + 1e-6)",
    }, message="eps is ignored (or fixed at 1e-6)"),
    Mutation("causal_linear_attention", "running sums in float32, cast back at the end", {
        "S = torch.cumsum(outer, dim=-3)": "S = torch.cumsum(outer.float(), dim=-3)",
        "z = torch.cumsum(phi_k, dim=-2)": "z = torch.cumsum(phi_k.float(), dim=-2)",
        "return numerator / (denominator + eps)":
            "return (numerator / (denominator + eps)).to(Q.dtype)",
    }, hidden=True),
    Case("causal_linear_attention", "wrong", "transpose(0, 1), quadratic, no batch", '''
def causal_linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    A = (phi_q @ phi_k.transpose(0, 1)).tril()
    return (A @ V) / (A.sum(dim=-1, keepdim=True) + eps)
''', message="created a tensor of shape (256, 256)"),
    Case("causal_linear_attention", "wrong", "2-D only: einsum without batch dimensions", '''
def causal_linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    S = torch.einsum("nk,nv->nkv", phi_k, V).cumsum(dim=0)
    z = phi_k.cumsum(dim=0)
    numerator = torch.einsum("nk,nkv->nv", phi_q, S)
    denominator = (phi_q * z).sum(dim=1, keepdim=True)
    return numerator / (denominator + eps)
''', message="Leading batch dimensions are not handled"),
    Case("causal_linear_attention", "wrong", "a Python loop over the positions", '''
def causal_linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    rows = []
    for i in range(Q.shape[-2]):
        weights = phi_k[..., : i + 1, :] @ phi_q[..., i, :, None]  # (..., i + 1, 1)
        rows.append((weights * V[..., : i + 1, :]).sum(-2) / (weights.sum(-2) + eps))
    return torch.stack(rows, dim=-2)
''', message="Take the sums over every prefix at once with torch.cumsum"),
    Mutation("causal_linear_attention", "computes in float32", {
        "phi_q = F.elu(Q) + 1": "phi_q = F.elu(Q.float()) + 1",
        "phi_k = F.elu(K) + 1": "phi_k = F.elu(K.float()) + 1",
        "* V.unsqueeze(-2)": "* V.float().unsqueeze(-2)",
    }, message="out for float64 Q, K, V has dtype torch.float32"),
    Case("causal_linear_attention", "wrong", "masked quadratic form (an (n, n) matrix)", '''
def causal_linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    n = Q.shape[-2]
    mask = torch.ones(n, n, dtype=torch.bool, device=Q.device).tril()
    A = (phi_q @ phi_k.transpose(-2, -1)).masked_fill(~mask, 0.0)
    return (A @ V) / (A.sum(dim=-1, keepdim=True) + eps)
''', message="Do not build the (n, n) weights phi(Q) phi(K)^T or a tril mask"),
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
    Mutation("linear_attention_recurrent", "output read before the state update", {
        STATE_UPDATE: "",
        "        outputs.append(numerator / (denominator + eps))\n": (
            "        outputs.append(numerator / (denominator + eps))\n" + STATE_UPDATE
        ),
    }, message="out_t is computed BEFORE the state update (it sees only positions <"),
    Mutation("linear_attention_recurrent", "z not accumulated", {
        "z = z + k_t": "z = k_t",
    }, message="z is not accumulated: z_t = z_(t-1) + phi(k_t), like S_t"),
    Mutation("linear_attention_recurrent", "state reset at every step", {
        "S = S + k_t": "S = k_t",
        "z = z + k_t": "z = k_t",
    }, message="the state is reset at every step: S_t and z_t must keep the sums of"),
    Mutation("linear_attention_recurrent", "indexes Q[t]: no batch dimensions", {
        "phi_k[..., t, :], V[..., t, :], phi_q[..., t, :]": "phi_k[t], V[t], phi_q[t]",
    }, message="Leading batch dimensions are not handled"),
    Case("linear_attention_recurrent", "wrong", "2-D only: torch.outer on Q[t]", '''
def linear_attention_recurrent(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    S = torch.zeros(K.shape[-1], V.shape[-1], dtype=V.dtype)
    z = torch.zeros(K.shape[-1], dtype=K.dtype)
    outputs = []
    for t in range(Q.shape[0]):
        S = S + torch.outer(phi_k[t], V[t])
        z = z + phi_k[t]
        outputs.append(phi_q[t] @ S / (phi_q[t] @ z + eps))
    return torch.stack(outputs)
''', message="torch.outer takes 1-D vectors only"),
    Case("linear_attention_recurrent", "wrong", "outputs written into a float32 buffer", '''
def linear_attention_recurrent(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    S = V.new_zeros(*V.shape[:-2], K.shape[-1], V.shape[-1])
    z = K.new_zeros(*K.shape[:-2], K.shape[-1])
    out = torch.zeros(V.shape)
    for t in range(Q.shape[-2]):
        S = S + phi_k[..., t, :, None] * V[..., t, None, :]
        z = z + phi_k[..., t, :]
        q = phi_q[..., t, :]
        out[..., t, :] = (q[..., None] * S).sum(-2) / ((q * z).sum(-1, keepdim=True) + eps)
    return out
''', message="out for float64 Q, K, V has dtype torch.float32"),
    Mutation("linear_attention_recurrent", "final state used for every position", {
        "S = S + k_t.unsqueeze(-1) * v_t.unsqueeze(-2)": (
            "S = (phi_k.unsqueeze(-1) * V.unsqueeze(-2)).sum(dim=-3)"
        ),
        "z = z + k_t": "z = phi_k.sum(dim=-2)",
    }, message="every position sees ALL keys: use the state at step t, not the final"),
    Mutation("linear_attention_recurrent", "feature map elu(x), the + 1 forgotten", {
        "phi_q = F.elu(Q) + 1": "phi_q = F.elu(Q)",
        "phi_k = F.elu(K) + 1": "phi_k = F.elu(K)",
    }, message="the feature map is not elu(x) + 1"),
    Mutation("linear_attention_recurrent", "eps added to the numerator too", {
        "numerator = (q_t.unsqueeze(-1) * S).sum(dim=-2)": (
            "numerator = (q_t.unsqueeze(-1) * S).sum(dim=-2) + eps"
        ),
    }, message="out for eps=1.0"),
    Mutation("linear_attention_recurrent", "eps argument ignored (1e-6 hard-coded)", {
        "outputs.append(numerator / (denominator + eps))":
            "outputs.append(numerator / (denominator + 1e-6))",
    }, message="eps is ignored (or fixed at 1e-6)"),
    Mutation("linear_attention_recurrent", "features in float32, cast back at the end", {
        "phi_q = F.elu(Q) + 1": "phi_q = F.elu(Q.float()) + 1",
        "phi_k = F.elu(K) + 1": "phi_k = F.elu(K.float()) + 1",
        "return torch.stack(outputs, dim=-2)": "return torch.stack(outputs, dim=-2).to(Q.dtype)",
    }, hidden=True),
    Mutation("linear_attention_recurrent", "calls causal_linear_attention (the text forbids it)", {
        "    outputs = []\n": "    return causal_linear_attention(Q, K, V, eps)\n",
    }, message="so no call of causal_linear_attention"),
    Mutation("linear_attention_recurrent", "outer product indexed for 2-D (a new shape error)", {
        "S = S + k_t.unsqueeze(-1) * v_t.unsqueeze(-2)": "S = S + k_t[:, None] * v_t[None, :]",
    }, message="Likely cause: shapes that do not broadcast"),
    Case("linear_attention_recurrent", "wrong", "float32 state kept by +=, then a matmul", '''
def linear_attention_recurrent(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    batch, d_k, d_v = K.shape[:-2], K.shape[-1], V.shape[-1]
    S = torch.zeros(*batch, d_k, d_v)  # float32, and += keeps it float32
    z = torch.zeros(*batch, d_k)
    outputs = []
    for t in range(Q.shape[-2]):
        k, q = phi_k[..., t, :], phi_q[..., t, :]
        S += k.unsqueeze(-1) * V[..., t, None, :]
        z += k
        numerator = (q.unsqueeze(-2) @ S).squeeze(-2)
        outputs.append(numerator / ((q * z).sum(-1, keepdim=True) + eps))
    return torch.stack(outputs, dim=-2)
''', message="Likely cause: a dtype mismatch"),
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
    # ------------------------------------------------------------------ concept questions
    Case("q_rnn_sequential", "wrong", "(a): the causal mask taken to make attention sequential",
         'q_rnn_sequential = "a"\n'),
    Case("q_rnn_sequential", "wrong", "(d): the two swapped",
         'q_rnn_sequential = "d"\n'),
    Case("q_rnn_sequential", "right", "upper case with spaces",
         'q_rnn_sequential = " C "\n'),
    Case("q_linear_state_size", "wrong", "the key/value cache of softmax attention",
         "q_linear_state_size = 1000 * (32 + 64)\n"),
    Case("q_linear_state_size", "wrong", "the normaliser z forgotten",
         "q_linear_state_size = 32 * 64\n"),
    Case("q_linear_state_size", "wrong", "one state kept per token",
         "q_linear_state_size = 1000 * (32 * 64 + 32)\n"),
    Case("q_linear_state_size", "wrong", "answered with a tuple of shapes",
         "q_linear_state_size = (32, 64)\n", message="should be a number"),
    Case("q_linear_state_size", "right", "the number written out, as a float",
         "q_linear_state_size = 2080.0\n"),
    Case("q_softmax_no_state", "wrong", "(b): softmax attention taken to keep a constant state",
         'q_softmax_no_state = "b"\n'),
    Case("q_softmax_no_state", "wrong", "(d): the n x n weights taken to be stored",
         'q_softmax_no_state = "d"\n'),
    Case("q_softmax_no_state", "right", "upper case",
         'q_softmax_no_state = "A"\n'),
]
