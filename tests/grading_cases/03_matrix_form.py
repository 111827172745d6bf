"""Wrong and right answers for 03_matrix_form, graded by real nbgrader autograde.

See tests/course/test_autograde.py. A wrong answer is a ``Mutation``: a small change to the
reference solution in solutions/03_matrix_form (``instructor.grading_cases``), which fails
loudly when the reference no longer contains the text it changes. Full sources (``Case``)
remain for right answers and for a wrong answer that no small edit of the reference
expresses (a different formulation with the same mistake).
"""

from instructor.grading_cases import Case, Mutation

MASKING = """    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
"""
"""attention's masking of the scores, as the reference solution writes it."""

# fmt: off
CASES = [
    # ------------------------------------------------------------------ self_attention_columns
    Mutation("self_attention_columns", "softmax over rows (dim=1)", {
        "torch.softmax(A, dim=0)": "torch.softmax(A, dim=1)",
    }),
    Mutation("self_attention_columns", "no 1/sqrt(q) scaling", {
        "K.T @ Q / math.sqrt(Q.shape[0])": "K.T @ Q",
    }),
    Mutation("self_attention_columns", "scaled by sqrt(r), the input size", {
        "math.sqrt(Q.shape[0])": "math.sqrt(I.shape[0])",
    }, message="the scores are divided by sqrt(r), the input size, instead of sqrt(q"),
    Mutation("self_attention_columns", "scaled by sqrt(v), the value size", {
        "math.sqrt(Q.shape[0])": "math.sqrt(V.shape[0])",
    }, message="the scores are divided by sqrt(v), the value size, instead of sqrt(q"),
    Mutation("self_attention_columns", "returns O transposed (n, v)", {
        "return O, A_prime": "return O.T, A_prime",
    }),
    Mutation("self_attention_columns", "O computed with A_prime transposed", {
        "O = V @ A_prime": "O = V @ A_prime.T",
    }, message="O = V @ A_prime.T: column j of O must mix the values with column j of"),
    Mutation("self_attention_columns", "hard-codes float32", {
        "    Q = W_q @ I": (
            "    I, W_q, W_k, W_v = I.float(), W_q.float(), W_k.float(), W_v.float()\n"
            "    Q = W_q @ I"
        ),
    }, message="O for float64 inputs has dtype torch.float32"),
    # A mistake no visible test wrote a message for (issue 30): checked_call names it.
    Mutation("self_attention_columns", "O = A_prime @ V, the row habit (a new wrong shape)", {
        "O = V @ A_prime": "O = A_prime @ V",
    }, message="Likely cause: shapes that cannot be multiplied"),
    Mutation("self_attention_columns", "softmax as exp / sum, overflows for large scores", {
        "torch.softmax(A, dim=0)": "A.exp() / A.exp().sum(dim=0, keepdim=True)",
    }, message="exp of a large score overflows to inf"),
    Mutation("self_attention_columns", "computed in float32, cast back to the inputs' dtype", {
        "    Q = W_q @ I  # (q, n)\n":
            "    dtype = I.dtype\n"
            "    I, W_q, W_k, W_v = I.float(), W_q.float(), W_k.float(), W_v.float()\n"
            "    Q = W_q @ I  # (q, n)\n",
        "return O, A_prime": "return O.to(dtype), A_prime.to(dtype)",
    }, hidden=True),
    Mutation("self_attention_columns", "returns A_prime transposed (one row per query)", {
        "return O, A_prime": "return O, A_prime.T",
    }, message="A_prime is transposed"),
    Mutation("self_attention_columns", "scales the input in place", {
        "    Q = W_q @ I": "    W_q /= math.sqrt(W_q.shape[0])\n    Q = W_q @ I",
        "K.T @ Q / math.sqrt(Q.shape[0])": "K.T @ Q",
    }),
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
    Mutation("attention", "softmax over the queries (dim=-2)", {
        "torch.softmax(scores, dim=-1)": "torch.softmax(scores, dim=-2)",
    }),
    Mutation("attention", "no 1/sqrt(d) scaling", {" / math.sqrt(Q.shape[-1])": ""}),
    Mutation("attention", "scaled by sqrt(d_v)", {
        "math.sqrt(Q.shape[-1])": "math.sqrt(V.shape[-1])",
    }, message="the scores are divided by sqrt(d_v) instead of sqrt(d), the key size"),
    Mutation("attention", "mask inverted (True = blocked)", {
        "masked_fill(~mask": "masked_fill(mask",
    }),
    Mutation("attention", "mask multiplied into the weights after the softmax", {
        MASKING: "",
        "weights = torch.softmax(scores, dim=-1)": "weights = torch.softmax(scores, dim=-1)\n"
                                                  "    if mask is not None:\n"
                                                  "        weights = weights * mask",
    }),
    Mutation("attention", "K.T only works without batch dims", {"K.transpose(-2, -1)": "K.T"},
             message="With leading batch dimensions, transpose only the last two"),
    Mutation("attention", "mask ignored", {MASKING: ""}),
    Mutation("attention", "boolean indexing scores[~mask] = -inf: no broadcasting", {
        MASKING: '    if mask is not None:\n        scores[~mask] = float("-inf")\n',
    }, message="boolean indexing such as scores[~mask]"),
    Mutation("attention", "weights returned transposed (n_k, n_q)", {
        "return weights @ V, weights": "return weights @ V, weights.transpose(-2, -1)",
    }, message="is the result transposed"),
    Mutation("attention", "hard-codes float32", {
        "    scores = Q @ K.transpose(-2, -1)": (
            "    Q, K, V = Q.float(), K.float(), V.float()\n"
            "    scores = Q @ K.transpose(-2, -1)"
        ),
    }, message="out for float64 inputs has dtype torch.float32"),
    Mutation("attention", "scales Q in place", {
        "scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])":
            "Q /= math.sqrt(Q.shape[-1])\n    scores = Q @ K.transpose(-2, -1)",
    }),
    Mutation("attention", "only 3-D inputs (bmm)", {
        "Q @ K.transpose(-2, -1)": "torch.bmm(Q, K.transpose(1, 2))",
        "return weights @ V": "return torch.bmm(weights, V)",
    }, message="any number of leading batch dimensions, none included"),
    # Only the hidden tests' float64 tolerance sees a scale computed in float32.
    Mutation("attention", "scale as torch.sqrt(torch.tensor(d)): float32 precision", {
        "/ math.sqrt(Q.shape[-1])": "/ torch.sqrt(torch.tensor(Q.shape[-1]))",
    }, hidden=True),
    # Mistakes no visible test wrote a message for (issue 30): checked_call names them.
    Mutation("attention", "blocked scores in a float32 buffer (a new wrong dtype)", {
        MASKING: (
            "    if mask is not None:\n"
            "        mask = mask.expand(scores.shape)\n"
            "        blocked = torch.full(scores.shape, float(\"-inf\"))\n"
            "        blocked[mask] = scores[mask]\n"
            "        scores = blocked\n"
        ),
    }, message="Likely cause: a dtype mismatch: a tensor made without the input's dtype"),
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
    Mutation("causal_mask", "upper triangle", {".tril()": ".triu()"},
        message="the upper triangle: query i must see keys j <= i (the past), not j >="),
    Mutation("causal_mask", "strict lower triangle (diagonal excluded)", {
        ".tril()": ".tril(diagonal=-1)",
    }, message="the diagonal is missing: a token may attend to itself (j = i"),
    Mutation("causal_mask", "float 0/1 instead of bool", {
        "torch.ones(n, n, dtype=torch.bool)": "torch.ones(n, n)",
    }, message="expected torch.bool. Build it from a comparison or with"),
    Mutation("causal_mask", "sliced from a block_size = 8 mask built once, too small for n > 8", {
        "return torch.ones(n, n, dtype=torch.bool).tril()":
            "block_size = 8\n"
            "    tril = torch.ones(block_size, block_size, dtype=torch.bool).tril()\n"
            "    return tril[:n, :n]",
    }, hidden=True),
    # A comparison of positions, not the reference's tril: no small edit of it says this.
    Case("causal_mask", "wrong", "comparison the wrong way round", '''
def causal_mask(n):
    positions = torch.arange(n)
    return positions[:, None] <= positions[None, :]
''', message="the upper triangle: query i must see keys j <= i (the past), not j >="),
    Case("causal_mask", "right", "arange comparison", '''
def causal_mask(n):
    positions = torch.arange(n)
    return positions[None, :] <= positions[:, None]
'''),
    Case("causal_mask", "right", "not the strict upper triangle", '''
def causal_mask(n):
    return ~torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)
'''),
    # ------------------------------------------------------------------ concept questions
    Case("q_double_length", "wrong", "(b): the attention matrix taken to grow linearly",
         'q_double_length = "b"\n'),
    Case("q_double_length", "wrong", "(c): the parameters taken to grow with the matrix",
         'q_double_length = "c"\n'),
    Case("q_double_length", "right", "upper case with spaces", 'q_double_length = " D "\n'),
    Case("q_scores_per_minute", "wrong", "frames every 25 ms: the frame length taken as the hop",
         "q_scores_per_minute = 2400**2\n"),
    Case("q_scores_per_minute", "wrong", "one score per frame", "q_scores_per_minute = 6000\n"),
    Case("q_scores_per_minute", "wrong", "half of them: the score matrix taken as symmetric",
         "q_scores_per_minute = 6000 * 5999 // 2\n"),
    Case("q_scores_per_minute", "wrong", "answered with a string",
         'q_scores_per_minute = "36 million"\n', message="should be a number"),
    Case("q_scores_per_minute", "right", "the exact count of frame_signal, 5998 frames",
         "q_scores_per_minute = (1 + (60 * 16_000 - 400) // 160) ** 2\n"),
    Case("q_scores_per_minute", "right", "written out as a float", "q_scores_per_minute = 3.6e7\n"),
    Case("q_causal_saw_rows", "wrong", "(a): the mask ignored",
         'q_causal_saw_rows = "a"\n'),
    Case("q_causal_saw_rows", "wrong", "(b): a query's own key left out",
         'q_causal_saw_rows = "b"\n'),
    Case("q_causal_saw_rows", "right", "upper case",
         'q_causal_saw_rows = "D"\n'),
]
# fmt: on
