"""Wrong and right answers for 06_efficient_attention, graded by real nbgrader autograde
(tests/course/test_autograde.py).

A wrong answer is a ``Mutation``: the reference solution with a small edit that makes the
mistake its name gives. Full sources (``Case``) are kept for right answers and for the two
wrong bigbird_mask answers that draw their random keys in another way (a loop with randint,
a loop with multinomial), which no small edit of the reference expresses.
"""

from instructor.grading_cases import Case, Mutation

# fmt: off
CASES = [
    # ------------------------------------------------------------------ local_mask
    Mutation("local_mask", "off by one: |i - j| < window", {
        ".abs() <= window": ".abs() < window",
    }),
    Mutation("local_mask", "one-sided (j <= i only)", {
        "return (positions[:, None] - positions[None, :]).abs() <= window":
            "return ((positions[:, None] - positions[None, :]).abs() <= window)"
            " & (positions[None, :] <= positions[:, None])",
    }),
    Mutation("local_mask", "window taken as the total width", {
        ".abs() <= window": ".abs() <= window // 2",
    }),
    Mutation("local_mask", "float mask instead of bool", {
        "return (positions[:, None] - positions[None, :]).abs() <= window":
            "return ((positions[:, None] - positions[None, :]).abs() <= window).float()",
    }),
    Mutation("local_mask", "no error for a negative window", {
        'if window < 0:\n        raise ValueError(f"window must be >= 0, got {window}")\n    ': "",
    }),
    Case("local_mask", "right", "band with triu and tril", '''
def local_mask(n, window):
    if window < 0:
        raise ValueError(f"window must be >= 0, got {window}")
    return torch.ones(n, n, dtype=torch.bool).triu(-window).tril(window)
'''),
    # ------------------------------------------------------------------ stride_mask
    Mutation("stride_mask", "diagonal missing", {
        "return (positions[:, None] - positions[None, :]) % stride == 0":
            "return ((positions[:, None] - positions[None, :]) % stride == 0)"
            " & (positions[:, None] != positions[None, :])",
    }),
    Mutation("stride_mask", "same columns in every row (j % stride)", {
        "(positions[:, None] - positions[None, :])": "positions[None, :].expand(n, n)",
    }),
    Mutation("stride_mask", "one-sided (keys before the query only)", {
        "return (positions[:, None] - positions[None, :]) % stride == 0":
            "offsets = positions[:, None] - positions[None, :]\n"
            "    return (offsets % stride == 0) & (offsets >= 0)",
    }),
    Mutation("stride_mask", "stride 0 not rejected (ZeroDivisionError)", {
        'if stride < 1:\n        raise ValueError(f"stride must be >= 1, got {stride}")\n    ': "",
    }),
    Case("stride_mask", "right", "loop over multiples with diagonals", '''
def stride_mask(n, stride):
    if stride < 1:
        raise ValueError(f"stride must be >= 1, got {stride}")
    mask = torch.zeros(n, n, dtype=torch.bool)
    for offset in range(0, n, stride):
        mask |= torch.ones(n - offset, dtype=torch.bool).diag(offset)
        mask |= torch.ones(n - offset, dtype=torch.bool).diag(-offset)
    return mask
'''),
    # ------------------------------------------------------------------ global_mask
    Mutation("global_mask", "rows only", {
        "return is_global[:, None] | is_global[None, :]":
            "return is_global[:, None].expand(n, n).clone()",
    }),
    Mutation("global_mask", "columns only", {
        "return is_global[:, None] | is_global[None, :]":
            "return is_global[None, :].expand(n, n).clone()",
    }),
    Mutation("global_mask", "intersection of rows and columns", {
        "is_global[:, None] | is_global[None, :]": "is_global[:, None] & is_global[None, :]",
    }),
    Mutation("global_mask", "negative index wraps around (no ValueError)", {
        "    for i in indices:\n"
        "        if not 0 <= i < n:\n"
        '            raise ValueError(f"global token index {i} is out of range for n = {n}")\n':
            "",
    }),
    Mutation("global_mask", "vague error; float index tensor when empty", {
        'f"global token index {i} is out of range for n = {n}"':
            'f"global token index out of range for n = {n}"',
        "is_global[indices] = True": "is_global[torch.tensor(indices)] = True",
    }),
    Case("global_mask", "right", "index_fill on rows and columns", '''
def global_mask(n, global_tokens):
    idx = torch.as_tensor([int(i) for i in global_tokens], dtype=torch.long)
    bad = idx[(idx < 0) | (idx >= n)]
    if len(bad):
        raise ValueError(f"global token {int(bad[0])} is not in 0 .. {n - 1}")
    mask = torch.zeros(n, n, dtype=torch.bool)
    return mask.index_fill(0, idx, True).index_fill(1, idx, True)
'''),
    # ------------------------------------------------------------------ longformer_mask
    Mutation("longformer_mask", "intersection instead of union", {
        "local_mask(n, window) | stride_mask(n, stride) | global_mask(n, global_tokens)":
            "local_mask(n, window) & stride_mask(n, stride) & global_mask(n, global_tokens)",
    }),
    Mutation("longformer_mask", "global part forgotten", {
        " | global_mask(n, global_tokens)": "",
    }),
    Mutation("longformer_mask", "stride part forgotten", {
        " | stride_mask(n, stride)": "",
    }),
    Mutation("longformer_mask", "sum of the masks as integers", {
        "local_mask(n, window) | stride_mask(n, stride) | global_mask(n, global_tokens)":
            "local_mask(n, window).int() + stride_mask(n, stride).int()"
            " + global_mask(n, global_tokens).int()",
    }),
    Case("longformer_mask", "right", "written out without the helpers", '''
def longformer_mask(n, window, stride, global_tokens):
    p = torch.arange(n)
    distance = (p[:, None] - p[None, :]).abs()
    is_global = torch.zeros(n, dtype=torch.bool)
    for i in global_tokens:
        if not 0 <= int(i) < n:
            raise ValueError(f"global token {int(i)} out of range")
        is_global[int(i)] = True
    return (
        (distance <= window)
        | (distance % stride == 0)
        | is_global[:, None]
        | is_global[None, :]
    )
'''),
    # ------------------------------------------------------------------ bigbird_mask
    Case("bigbird_mask", "wrong", "draws with replacement (randint)", '''
def bigbird_mask(n, window, stride, global_tokens, num_random, generator):
    if num_random < 0:
        raise ValueError("num_random must be >= 0")
    mask = longformer_mask(n, window, stride, global_tokens)
    extra = torch.zeros(n, n, dtype=torch.bool)
    for i in range(n):
        free = (~mask[i]).nonzero().flatten()
        if len(free):
            picks = torch.randint(len(free), (num_random,), generator=generator)
            extra[i, free[picks]] = True
    return mask | extra
'''),
    Mutation("bigbird_mask", "draws from all keys, allowed ones included", {
        '.masked_fill(mask, float("inf"))': "",
    }),
    Mutation("bigbird_mask", "the same random keys in every row", {
        "torch.rand(n, n, generator=generator)": "torch.rand(n, generator=generator).expand(n, n)",
    }),
    Mutation("bigbird_mask", "uses the global random state", {
        "torch.rand(n, n, generator=generator)": "torch.rand(n, n)",
    }),
    Case("bigbird_mask", "wrong", "multinomial fails when fewer keys remain", '''
def bigbird_mask(n, window, stride, global_tokens, num_random, generator):
    if num_random < 0:
        raise ValueError("num_random must be >= 0")
    mask = longformer_mask(n, window, stride, global_tokens)
    result = mask.clone()
    for i in range(n):
        weights = (~mask[i]).double()
        if num_random > 0 and weights.sum() > 0:
            picks = torch.multinomial(weights, num_random, generator=generator)
            result[i, picks] = True
    return result
'''),
    Mutation("bigbird_mask", "first blocked keys, not random", {
        "torch.rand(n, n, generator=generator)": "torch.arange(n).double().expand(n, n)",
    }),
    Case("bigbird_mask", "right", "loop over rows with randperm", '''
def bigbird_mask(n, window, stride, global_tokens, num_random, generator):
    if num_random < 0:
        raise ValueError(f"num_random must be >= 0, got {num_random}")
    mask = longformer_mask(n, window, stride, global_tokens)
    result = mask.clone()
    for i in range(n):
        free = (~mask[i]).nonzero().flatten()
        chosen = free[torch.randperm(len(free), generator=generator)[:num_random]]
        result[i, chosen] = True
    return result
'''),
    Case("bigbird_mask", "right", "top-k of random scores among blocked keys", '''
def bigbird_mask(n, window, stride, global_tokens, num_random, generator):
    if num_random < 0:
        raise ValueError(f"num_random must be >= 0, got {num_random}")
    mask = longformer_mask(n, window, stride, global_tokens)
    scores = torch.rand(n, n, generator=generator).masked_fill(mask, -1.0)
    k = min(num_random, n)
    top = scores.topk(k, dim=-1).indices
    chosen = torch.zeros(n, n, dtype=torch.bool).scatter(1, top, True)
    return mask | chosen
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
    }),
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
