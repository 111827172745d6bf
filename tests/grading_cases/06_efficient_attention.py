"""Wrong and right answers for 06_efficient_attention, graded by real nbgrader autograde
(tests/course/test_autograde.py).

A wrong answer is a ``Mutation``: the reference solution with a small edit that makes the
mistake its name gives. Full sources (``Case``) are kept for right answers. ``message=`` is
the phrase the student must read in the function's first test cell for that mistake.

stride_mask, longformer_mask and bigbird_mask are worked examples of the optional section 8
(ungraded), so they have no cases here.
"""

from instructor.grading_cases import Case, Mutation

# fmt: off
CASES = [
    # ------------------------------------------------------------------ local_mask
    Mutation("local_mask", "off by one: |i - j| < window", {
        ".abs() <= window": ".abs() < window",
    }, message="|i - j| < window: the keys exactly `window` steps away are missing"),
    Mutation("local_mask", "one-sided (j <= i only)", {
        "return (positions[:, None] - positions[None, :]).abs() <= window":
            "return ((positions[:, None] - positions[None, :]).abs() <= window)"
            " & (positions[None, :] <= positions[:, None])",
    }, message="one-sided: a query must also see the keys after it (j > i)"),
    Mutation("local_mask", "window taken as the total width", {
        ".abs() <= window": ".abs() <= window // 2",
    }, message="the window read as the total width"),
    Mutation("local_mask", "window taken as the total width, minus the query", {
        ".abs() <= window": ".abs() <= (window - 1) // 2",
    }, message="the window read as the total width"),
    Mutation("local_mask", "float mask instead of bool", {
        "return (positions[:, None] - positions[None, :]).abs() <= window":
            "return ((positions[:, None] - positions[None, :]).abs() <= window).float()",
    }, message="local_mask(8, 3) has dtype"),
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
    Case("local_mask", "wrong", "diagonals offset by up to window, not clamped to n - 1", '''
def local_mask(n, window):
    if window < 0:
        raise ValueError(f"window must be >= 0, got {window}")
    mask = torch.zeros(n, n, dtype=torch.bool)
    for offset in range(-window, window + 1):
        mask |= torch.ones(n - abs(offset), dtype=torch.bool).diag(offset)
    return mask
''', message="The window may reach past the ends of the sequence (even window >= n)"),
    Mutation("local_mask", "a window wider than the sequence refused", {
        "if window < 0:": "if window < 0 or window >= n:",
    }, message="The window may reach past the ends of the sequence"),
    Mutation("local_mask", "only window == -1 refused (tried on -1 alone)", {
        "if window < 0:": "if window == -1:",
    }, hidden=True),
    # ------------------------------------------------------------------ global_mask
    Mutation("global_mask", "rows only", {
        "return is_global[:, None] | is_global[None, :]":
            "return is_global[:, None].expand(n, n).clone()",
    }, message="only the rows: every token must also attend TO the global tokens"),
    Mutation("global_mask", "columns only", {
        "return is_global[:, None] | is_global[None, :]":
            "return is_global[None, :].expand(n, n).clone()",
    }, message="only the columns"),
    Mutation("global_mask", "intersection of rows and columns", {
        "is_global[:, None] | is_global[None, :]": "is_global[:, None] & is_global[None, :]",
    }, message="rows AND columns (an intersection): it is rows OR columns"),
    Mutation("global_mask", "float mask: rows and columns set to 1.0", {
        "is_global = torch.zeros(n, dtype=torch.bool)": "is_global = torch.zeros(n)",
        "is_global[indices] = True": "is_global[indices] = 1.0",
        "return is_global[:, None] | is_global[None, :]":
            "return torch.maximum(is_global[:, None], is_global[None, :])",
    }, message="global_mask(6, [0, 3]) has dtype"),
    Mutation("global_mask", "no range check: -1 wraps to the last token", {
        "    for i in indices:\n"
        "        if not 0 <= i < n:\n"
        '            raise ValueError(f"global token index {i} is out of range for n = {n}")\n':
            "",
    }, message="should raise ValueError for a negative index"),
    Mutation("global_mask", "only indices >= n rejected", {
        "if not 0 <= i < n:": "if i >= n:",
    }, message="should raise ValueError for a negative index"),
    Mutation("global_mask", "only negative indices rejected (an index >= n raises IndexError)", {
        "if not 0 <= i < n:": "if i < 0:",
    }, message="should raise ValueError for an index past n - 1"),
    Mutation("global_mask", "vague error that does not name the index", {
        'f"global token index {i} is out of range for n = {n}"':
            'f"global token index out of range for n = {n}"',
    }, message="should mention '-1'"),
    Mutation("global_mask", "float index tensor when the list is empty", {
        "is_global[indices] = True": "is_global[torch.tensor(indices)] = True",
    }, message="An empty list of global tokens must give an all-False mask"),
    Mutation("global_mask", "emptiness tested with `not global_tokens` (fails on a tensor)", {
        "    indices = [int(i) for i in global_tokens]\n":
            "    if not global_tokens:\n"
            "        return torch.zeros(n, n, dtype=torch.bool)\n"
            "    indices = [int(i) for i in global_tokens]\n",
    }, message="global_tokens may be a 1-D integer tensor"),
    Mutation("global_mask", "off by one in the range check: an index equal to n passes", {
        "if not 0 <= i < n:": "if not 0 <= i <= n:",
    }, message="should raise ValueError for an index equal to n = 6"),
    Mutation("global_mask", "only -1 refused of the negative indices (tried on -1 alone)", {
        "if not 0 <= i < n:": "if i == -1 or i >= n:",
    }, hidden=True),
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
    }, message="must never build the n x n score matrix or mask"),
    Mutation("sliding_window_attention", "no error for a negative window", {
        'if window < 0:\n        raise ValueError(f"window must be >= 0, got {window}")\n    ': "",
    }, message="should raise ValueError for a negative window"),
    Mutation("sliding_window_attention", "no 1/sqrt(d) scaling", {
        "Q[..., start:stop, :] / math.sqrt(d)": "Q[..., start:stop, :]",
    }, message="the scores are not scaled by 1/sqrt"),
    Mutation("sliding_window_attention", "off by one: |i - j| < window", {
        ".abs() <= window": ".abs() < max(window, 1)",
    }, message="|i - j| < window (off by one): the keys exactly `window` away are"),
    Mutation("sliding_window_attention", "unfold over zero padding, edges not masked", {
        "scores.masked_fill_(~(band & exists)": "scores.masked_fill_(~band",
    }, message="the zero-padded keys at the edges take part in the softmax: mask them"),
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
    }, message="On float64 inputs a tensor you create is float32"),
    Mutation("sliding_window_attention", "a window wider than the sequence refused", {
        "if window < 0:": "if window < 0 or window >= Q.shape[-2]:",
    }, message="window >= n: the window reaches past both ends of the sequence"),
    Case("sliding_window_attention", "wrong", "plain softmax attention, the window ignored", '''
def sliding_window_attention(Q, K, V, window):
    if window < 0:
        raise ValueError(f"window must be >= 0, got {window}")
    scores = Q @ K.mT / math.sqrt(Q.shape[-1])
    return torch.softmax(scores, dim=-1) @ V
''', message="full attention: the window is ignored"),
    Mutation("sliding_window_attention", "drops the last partial block", {
        "num_blocks = -(-(stop - start) // block)": "num_blocks = (stop - start) // block",
    }, message="round the number of blocks up and let the last block be shorter"),
    Mutation("sliding_window_attention", "assumes no batch dimension: n = len(Q)", {
        "n, d = Q.shape[-2], Q.shape[-1]": "n, d = len(Q), Q.shape[-1]",
        # zeros, not new_empty: the rows it never writes must not differ from run to run
        "out = Q.new_empty(": "out = Q.new_zeros(",
    }, message="sliding_window_attention for Q, K (2, 7, 4) and V (2, 7, 3), window 1"),
    Case("sliding_window_attention", "wrong", "2-D inputs only: n, d = Q.shape", '''
def sliding_window_attention(Q, K, V, window):
    if window < 0:
        raise ValueError(f"window must be >= 0, got {window}")
    n, d = Q.shape
    rows = []
    for i in range(n):
        lo, hi = max(0, i - window), min(n, i + window + 1)
        scores = Q[i] @ K[lo:hi].T / d**0.5
        rows.append(scores.softmax(dim=-1) @ V[lo:hi])
    return torch.stack(rows)
''', message="Q, K and V may have leading batch dimensions (...) and V its own last size d_v"),
    Case("sliding_window_attention", "wrong", "one batch dimension at most (bmm)", '''
def sliding_window_attention(Q, K, V, window):
    if window < 0:
        raise ValueError(f"window must be >= 0, got {window}")
    if Q.dim() == 2:
        return sliding_window_attention(Q[None], K[None], V[None], window)[0]
    batch, n, d = Q.shape
    rows = []
    for i in range(n):
        lo, hi = max(0, i - window), min(n, i + window + 1)
        scores = torch.bmm(Q[:, i : i + 1, :], K[:, lo:hi, :].transpose(1, 2)) / d**0.5
        rows.append(torch.bmm(scores.softmax(dim=-1), V[:, lo:hi, :]))
    return torch.cat(rows, dim=1)
''', hidden=True),
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
    }, message="phi(x) = relu(x): the feature map is elu(x) + 1"),
    Mutation("linear_attention", "softmax feature map", {
        "phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1":
            "phi_q, phi_k = Q.softmax(dim=-1), K.softmax(dim=-1)",
    }),
    Mutation("linear_attention", "denominator missing", {
        "return numerator / denominator": "return numerator",
    }, message="the denominator is missing: divide by phi(q_i)^T z"),
    Mutation("linear_attention", "phi applied to V as well", {
        "S = phi_k.mT @ V": "S = phi_k.mT @ (F.elu(V) + 1)",
    }, message="phi is applied to V too: only queries and keys go through phi"),
    Mutation("linear_attention", "features in float32 (matmul fails on float64)", {
        "phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1":
            "phi_q, phi_k = F.elu(Q.float()) + 1, F.elu(K.float()) + 1",
    }, message="a tensor you create or convert is float32"),
    Mutation("linear_attention", "keys summed with a float32 vector of ones (a new dtype error)", {
        "z = phi_k.sum(dim=-2)": "z = torch.ones(K.shape[-2]) @ phi_k",
    }, message="Likely cause: a dtype mismatch"),
    Mutation("linear_attention", "transpose(0, 1) for phi(K)^T (a new shape error on a batch)", {
        "S = phi_k.mT @ V": "S = phi_k.transpose(0, 1) @ V",
    }, message="Likely cause: shapes that do not broadcast"),
    Mutation("linear_attention", "result cast to float32", {
        "return numerator / denominator": "return (numerator / denominator).float()",
    }, message="keep the dtype of their input"),
    Mutation("linear_attention", "eps ignored (hard-coded 1e-6)", {
        "z.unsqueeze(-1) + eps": "z.unsqueeze(-1) + 1e-6",
    }, message="eps is ignored (or fixed at 1e-6)"),
    Mutation("linear_attention", "quadratic form builds the n x n matrix", {
        "numerator = phi_q @ S": "numerator = (phi_q @ phi_k.mT) @ V",
    }, message="Compute phi(K)^T V and the sum of phi(K) first"),
    Mutation("linear_attention", "normalised per key instead of per query", {
        "denominator = phi_q @ z.unsqueeze(-1) + eps":
            "denominator = phi_q.sum(dim=-1, keepdim=True) * phi_k.shape[-2] + eps",
    }),
    Case("linear_attention", "wrong", "softmax attention, no feature map", '''
def linear_attention(Q, K, V, eps=1e-6):
    scores = Q @ K.mT / math.sqrt(Q.shape[-1])
    return torch.softmax(scores, dim=-1) @ V
''', message="softmax attention: linear attention replaces exp(q.k) by phi(q).phi(k)"),
    Mutation("linear_attention", "assumes no batch dimension: keys summed over dim 0", {
        "z = phi_k.sum(dim=-2)": "z = phi_k.sum(dim=0)",
    }, message="may have leading batch dimensions (...): index, sum and transpose"),
    Case("linear_attention", "wrong", "one batch dimension at most (bmm)", '''
def linear_attention(Q, K, V, eps=1e-6):
    if Q.dim() == 2:
        return linear_attention(Q[None], K[None], V[None], eps)[0]
    phi_q = torch.nn.functional.elu(Q) + 1
    phi_k = torch.nn.functional.elu(K) + 1
    S = torch.bmm(phi_k.transpose(1, 2), V)
    z = phi_k.sum(dim=1)
    return torch.bmm(phi_q, S) / (torch.bmm(phi_q, z.unsqueeze(2)) + eps)
''', hidden=True),
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
    # ------------------------------------------------------------------ concept questions
    Case("q_bigbird_mask", "wrong", "(d): a stride counted, 'Longformer + random' taken literally",
         'q_bigbird_mask = "d"\n'),
    Case("q_bigbird_mask", "wrong", "(b): the random keys forgotten",
         'q_bigbird_mask = "b"\n'),
    Case("q_bigbird_mask", "right", "upper case with spaces",
         'q_bigbird_mask = " C "\n'),
    Case("q_local_pairs", "wrong", "2w + 1 keys in every row: the edges ignored",
         "q_local_pairs = 1000 * 21\n"),
    Case("q_local_pairs", "wrong", "the diagonal forgotten: 2w keys per row",
         "q_local_pairs = 1000 * 20 - 10 * 11\n"),
    Case("q_local_pairs", "wrong", "the size of the mask, not its True entries",
         "q_local_pairs = 1000**2\n"),
    Case("q_local_pairs", "wrong", "answered with a string", 'q_local_pairs = "20890"\n',
         message="should be a number"),
    Case("q_local_pairs", "right", "the number written out, as a float",
         "q_local_pairs = 20890.0\n"),
    Case("q_local_pairs", "right", "the full mask minus the two blocked triangles",
         "q_local_pairs = 1000**2 - 2 * (989 * 990 // 2)\n"),
    Case("q_local_pairs", "right", "counted by the function: a tensor of one element",
         "q_local_pairs = local_mask(1000, 10).sum()\n"),
    Case("q_local_pairs", "wrong", "the keys per row, not their total",
         "q_local_pairs = local_mask(1000, 10).sum(dim=-1)\n", message="holds 1000 numbers"),
    Case("q_linear_beats_dense", "wrong", "(a): linear in n taken as cheaper at every n",
         'q_linear_beats_dense = "a"\n'),
    Case("q_linear_beats_dense", "wrong", "(c): n compared with d**2 instead of d",
         'q_linear_beats_dense = "c"\n'),
    Case("q_linear_beats_dense", "wrong", "(d): linear attention taken as a reordered mask",
         'q_linear_beats_dense = "d"\n'),
    Case("q_linear_beats_dense", "wrong", "answered with a list", 'q_linear_beats_dense = ["b"]\n',
         message="should be a string"),
    Case("q_linear_beats_dense", "right", "upper case", 'q_linear_beats_dense = "B"\n'),
]
# fmt: on
