"""Wrong and right answers for 06_efficient_attention, graded by real nbgrader autograde
(tests/course/test_autograde.py).

A wrong answer is a ``Mutation``: the reference solution with a small edit that makes the
mistake its name gives. Full sources (``Case``) are kept for right answers. ``message=`` is
the phrase the student must read in the function's first test cell for that mistake.

stride_mask, longformer_mask and bigbird_mask are worked examples of the optional section 7
(ungraded), so they have no cases here.
"""

from instructor.grading_cases import Case, Mutation

# fmt: off
CASES = [
    # ------------------------------------------------------------------ local_mask
    Mutation("local_mask", "off by one: |i - j| < window", {
        ".abs() <= window": ".abs() < window",
    }, message="off by one"),
    Mutation("local_mask", "one-sided (j <= i only)", {
        "return (positions[:, None] - positions[None, :]).abs() <= window":
            "return ((positions[:, None] - positions[None, :]).abs() <= window)"
            " & (positions[None, :] <= positions[:, None])",
    }, message="one-sided"),
    Mutation("local_mask", "window taken as the total width", {
        ".abs() <= window": ".abs() <= window // 2",
    }, message="the window read as the total width"),
    Mutation("local_mask", "window taken as the total width, minus the query", {
        ".abs() <= window": ".abs() <= (window - 1) // 2",
    }, message="the window read as the total width"),
    Mutation("local_mask", "float mask instead of bool", {
        "return (positions[:, None] - positions[None, :]).abs() <= window":
            "return ((positions[:, None] - positions[None, :]).abs() <= window).float()",
    }, message="expected torch.bool"),
    Mutation("local_mask", "no error for a negative window", {
        'if window < 0:\n        raise ValueError(f"window must be >= 0, got {window}")\n    ': "",
    }, message="should raise ValueError for a negative window"),
    Case("local_mask", "right", "band with triu and tril", '''
def local_mask(n, window):
    if window < 0:
        raise ValueError(f"window must be >= 0, got {window}")
    return torch.ones(n, n, dtype=torch.bool).triu(-window).tril(window)
'''),
    Case("local_mask", "right", "loop over offsets with diag", '''
def local_mask(n, window):
    if window < 0:
        raise ValueError(f"window must be >= 0, got {window}")
    mask = torch.zeros(n, n, dtype=torch.bool)
    for offset in range(-min(window, n - 1), min(window, n - 1) + 1):
        mask |= torch.ones(n - abs(offset), dtype=torch.bool).diag(offset)
    return mask
'''),
    # ------------------------------------------------------------------ global_mask
    Mutation("global_mask", "rows only", {
        "return is_global[:, None] | is_global[None, :]":
            "return is_global[:, None].expand(n, n).clone()",
    }, message="only the rows"),
    Mutation("global_mask", "columns only", {
        "return is_global[:, None] | is_global[None, :]":
            "return is_global[None, :].expand(n, n).clone()",
    }, message="only the columns"),
    Mutation("global_mask", "intersection of rows and columns", {
        "is_global[:, None] | is_global[None, :]": "is_global[:, None] & is_global[None, :]",
    }, message="an intersection"),
    Mutation("global_mask", "no range check: -1 wraps to the last token", {
        "    for i in indices:\n"
        "        if not 0 <= i < n:\n"
        '            raise ValueError(f"global token index {i} is out of range for n = {n}")\n':
            "",
    }, message="should raise ValueError for a negative index"),
    Mutation("global_mask", "only indices >= n rejected", {
        "if not 0 <= i < n:": "if i >= n:",
    }, message="should raise ValueError for a negative index"),
    Mutation("global_mask", "vague error that does not name the index", {
        'f"global token index {i} is out of range for n = {n}"':
            'f"global token index out of range for n = {n}"',
    }, message="should mention '-1'"),
    Mutation("global_mask", "float index tensor when the list is empty", {
        "is_global[indices] = True": "is_global[torch.tensor(indices)] = True",
    }, message="An empty list of global tokens must give an all-False mask"),
    Case("global_mask", "right", "index_fill on rows and columns", '''
def global_mask(n, global_tokens):
    idx = torch.as_tensor([int(i) for i in global_tokens], dtype=torch.long)
    bad = idx[(idx < 0) | (idx >= n)]
    if len(bad):
        raise ValueError(f"global token {int(bad[0])} is not in 0 .. {n - 1}")
    mask = torch.zeros(n, n, dtype=torch.bool)
    return mask.index_fill(0, idx, True).index_fill(1, idx, True)
'''),
    # ------------------------------------------------------------------ sliding_window_attention
    Mutation("sliding_window_attention", "builds the full local mask (dense)", {
        "block, chunk = 32, 1024": "block, chunk = n, n  # one block: all n queries",
    }),
    Mutation("sliding_window_attention", "no 1/sqrt(d) scaling", {
        "Q[..., start:stop, :] / math.sqrt(d)": "Q[..., start:stop, :]",
    }),
    Mutation("sliding_window_attention", "off by one: |i - j| < window", {
        ".abs() <= window": ".abs() < max(window, 1)",
    }),
    Mutation("sliding_window_attention", "unfold over zero padding, edges not masked", {
        "scores.masked_fill_(~(band & exists)": "scores.masked_fill_(~band",
    }),
    Mutation("sliding_window_attention", "hard-codes float32", {
        "n, d = Q.shape[-2], Q.shape[-1]":
            "Q, K, V = Q.float(), K.float(), V.float()\n    n, d = Q.shape[-2], Q.shape[-1]",
    }, message="keep the dtype of their input"),
    Mutation("sliding_window_attention", "output buffer created in float32", {
        "out = Q.new_empty((*Q.shape[:-1], V.shape[-1]))":
            "out = torch.empty((*Q.shape[:-1], V.shape[-1]))",
    }, message="keep the dtype of their input"),
    Mutation("sliding_window_attention", "keys converted to float32 (matmul fails on float64)", {
        "k = F.pad(K[..., lo:hi, :]": "k = F.pad(K[..., lo:hi, :].float()",
    }, message="raised RuntimeError on float64 inputs"),
    Mutation("sliding_window_attention", "drops the last partial block", {
        "num_blocks = -(-(stop - start) // block)": "num_blocks = (stop - start) // block",
    }),
    Case("sliding_window_attention", "right", "unfold with a validity mask at the edges", '''
def sliding_window_attention(Q, K, V, window):
    if window < 0:
        raise ValueError(f"window must be >= 0, got {window}")
    n, d = Q.shape[-2], Q.shape[-1]
    width = 2 * window + 1
    K_win = F.pad(K, (0, 0, window, window)).unfold(-2, width, 1)  # (..., n, d, width)
    V_win = F.pad(V, (0, 0, window, window)).unfold(-2, width, 1)  # (..., n, d_v, width)
    scores = (Q.unsqueeze(-2) @ K_win).squeeze(-2) / math.sqrt(d)  # (..., n, width)
    key_pos = torch.arange(n)[:, None] + torch.arange(width)[None, :] - window
    valid = (key_pos >= 0) & (key_pos < n)
    weights = torch.softmax(scores.masked_fill(~valid, float("-inf")), dim=-1)
    return (V_win @ weights.unsqueeze(-1)).squeeze(-1)
'''),
    Case("sliding_window_attention", "right", "one query at a time", '''
def sliding_window_attention(Q, K, V, window):
    if window < 0:
        raise ValueError(f"window must be >= 0, got {window}")
    n, d = Q.shape[-2], Q.shape[-1]
    rows = []
    for i in range(n):
        lo, hi = max(0, i - window), min(n, i + window + 1)
        scores = Q[..., i : i + 1, :] @ K[..., lo:hi, :].mT / d**0.5
        rows.append(scores.softmax(dim=-1) @ V[..., lo:hi, :])
    return torch.cat(rows, dim=-2)
'''),
    # ------------------------------------------------------------------ linear_attention
    Mutation("linear_attention", "relu feature map", {
        "phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1": "phi_q, phi_k = F.relu(Q), F.relu(K)",
    }),
    Mutation("linear_attention", "softmax feature map", {
        "phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1":
            "phi_q, phi_k = Q.softmax(dim=-1), K.softmax(dim=-1)",
    }),
    Mutation("linear_attention", "denominator missing", {
        "return numerator / denominator": "return numerator",
    }),
    Mutation("linear_attention", "phi applied to V as well", {
        "S = phi_k.mT @ V": "S = phi_k.mT @ (F.elu(V) + 1)",
    }),
    Mutation("linear_attention", "features in float32 (matmul fails on float64)", {
        "phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1":
            "phi_q, phi_k = F.elu(Q.float()) + 1, F.elu(K.float()) + 1",
    }, message="raised RuntimeError on float64 inputs"),
    Mutation("linear_attention", "result cast to float32", {
        "return numerator / denominator": "return (numerator / denominator).float()",
    }, message="keep the dtype of their input"),
    Mutation("linear_attention", "eps ignored (hard-coded 1e-6)", {
        "z.unsqueeze(-1) + eps": "z.unsqueeze(-1) + 1e-6",
    }),
    Mutation("linear_attention", "quadratic form builds the n x n matrix", {
        "numerator = phi_q @ S": "numerator = (phi_q @ phi_k.mT) @ V",
    }),
    Mutation("linear_attention", "normalised per key instead of per query", {
        "denominator = phi_q @ z.unsqueeze(-1) + eps":
            "denominator = phi_q.sum(dim=-1, keepdim=True) * phi_k.shape[-2] + eps",
    }),
    Case("linear_attention", "right", "einsum", '''
def linear_attention(Q, K, V, eps=1e-6):
    phi_q = torch.nn.functional.elu(Q) + 1
    phi_k = torch.nn.functional.elu(K) + 1
    S = torch.einsum("...nd,...ne->...de", phi_k, V)
    z = phi_k.sum(dim=-2)
    numerator = torch.einsum("...nd,...de->...ne", phi_q, S)
    denominator = torch.einsum("...nd,...d->...n", phi_q, z)[..., None] + eps
    return numerator / denominator
'''),
]
# fmt: on
