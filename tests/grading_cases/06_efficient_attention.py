"""Wrong and right answers for 06_efficient_attention.

Graded by real nbgrader autograde (tests/test_autograde.py).
"""

from instructor.grading_cases import Case

# fmt: off
CASES = [
    # ------------------------------------------------------------------ local_mask
    Case("local_mask", "wrong", "off by one: |i - j| < window", '''
def local_mask(n, window):
    if window < 0:
        raise ValueError("negative window")
    p = torch.arange(n)
    return (p[:, None] - p[None, :]).abs() < window
'''),
    Case("local_mask", "wrong", "one-sided (j <= i only)", '''
def local_mask(n, window):
    if window < 0:
        raise ValueError("negative window")
    p = torch.arange(n)
    diff = p[:, None] - p[None, :]
    return (diff >= 0) & (diff <= window)
'''),
    Case("local_mask", "wrong", "window taken as the total width", '''
def local_mask(n, window):
    if window < 0:
        raise ValueError("negative window")
    p = torch.arange(n)
    return (p[:, None] - p[None, :]).abs() <= window // 2
'''),
    Case("local_mask", "wrong", "float mask instead of bool", '''
def local_mask(n, window):
    if window < 0:
        raise ValueError("negative window")
    p = torch.arange(n)
    return ((p[:, None] - p[None, :]).abs() <= window).float()
'''),
    Case("local_mask", "wrong", "no error for a negative window", '''
def local_mask(n, window):
    p = torch.arange(n)
    return (p[:, None] - p[None, :]).abs() <= window
'''),
    Case("local_mask", "right", "band with triu and tril", '''
def local_mask(n, window):
    if window < 0:
        raise ValueError(f"window must be >= 0, got {window}")
    return torch.ones(n, n, dtype=torch.bool).triu(-window).tril(window)
'''),
    # ------------------------------------------------------------------ stride_mask
    Case("stride_mask", "wrong", "diagonal missing", '''
def stride_mask(n, stride):
    if stride < 1:
        raise ValueError("stride must be >= 1")
    p = torch.arange(n)
    d = (p[:, None] - p[None, :]).abs()
    return (d % stride == 0) & (d > 0)
'''),
    Case("stride_mask", "wrong", "same columns in every row (j % stride)", '''
def stride_mask(n, stride):
    if stride < 1:
        raise ValueError("stride must be >= 1")
    p = torch.arange(n)
    return (p[None, :] % stride == 0).expand(n, n).clone()
'''),
    Case("stride_mask", "wrong", "one-sided (keys before the query only)", '''
def stride_mask(n, stride):
    if stride < 1:
        raise ValueError("stride must be >= 1")
    p = torch.arange(n)
    d = p[:, None] - p[None, :]
    return (d % stride == 0) & (d >= 0)
'''),
    Case("stride_mask", "wrong", "stride 0 not rejected (ZeroDivisionError)", '''
def stride_mask(n, stride):
    return torch.tensor([[abs(i - j) % stride == 0 for j in range(n)] for i in range(n)])
'''),
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
    Case("global_mask", "wrong", "rows only", '''
def global_mask(n, global_tokens):
    mask = torch.zeros(n, n, dtype=torch.bool)
    for i in global_tokens:
        if not 0 <= int(i) < n:
            raise ValueError(f"index {int(i)} out of range")
        mask[int(i), :] = True
    return mask
'''),
    Case("global_mask", "wrong", "columns only", '''
def global_mask(n, global_tokens):
    mask = torch.zeros(n, n, dtype=torch.bool)
    for i in global_tokens:
        if not 0 <= int(i) < n:
            raise ValueError(f"index {int(i)} out of range")
        mask[:, int(i)] = True
    return mask
'''),
    Case("global_mask", "wrong", "intersection of rows and columns", '''
def global_mask(n, global_tokens):
    g = torch.zeros(n, dtype=torch.bool)
    for i in global_tokens:
        if not 0 <= int(i) < n:
            raise ValueError(f"index {int(i)} out of range")
        g[int(i)] = True
    return g[:, None] & g[None, :]
'''),
    Case("global_mask", "wrong", "negative index wraps around (no ValueError)", '''
def global_mask(n, global_tokens):
    g = torch.zeros(n, dtype=torch.bool)
    for i in global_tokens:
        g[int(i)] = True
    return g[:, None] | g[None, :]
'''),
    Case("global_mask", "wrong", "vague error; float index tensor when empty", '''
def global_mask(n, global_tokens):
    idx = torch.tensor(list(global_tokens))
    if ((idx < 0) | (idx >= n)).any():
        raise ValueError(f"global token index out of range for n = {n}")
    mask = torch.zeros(n, n, dtype=torch.bool)
    mask[idx, :] = True
    mask[:, idx] = True
    return mask
'''),
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
    Case("longformer_mask", "wrong", "intersection instead of union", '''
def longformer_mask(n, window, stride, global_tokens):
    return local_mask(n, window) & stride_mask(n, stride) & global_mask(n, global_tokens)
'''),
    Case("longformer_mask", "wrong", "global part forgotten", '''
def longformer_mask(n, window, stride, global_tokens):
    return local_mask(n, window) | stride_mask(n, stride)
'''),
    Case("longformer_mask", "wrong", "stride part forgotten", '''
def longformer_mask(n, window, stride, global_tokens):
    return local_mask(n, window) | global_mask(n, global_tokens)
'''),
    Case("longformer_mask", "wrong", "sum of the masks as integers", '''
def longformer_mask(n, window, stride, global_tokens):
    return local_mask(n, window).int() + stride_mask(n, stride).int() + global_mask(
        n, global_tokens
    ).int()
'''),
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
    Case("bigbird_mask", "wrong", "draws from all keys, allowed ones included", '''
def bigbird_mask(n, window, stride, global_tokens, num_random, generator):
    if num_random < 0:
        raise ValueError("num_random must be >= 0")
    mask = longformer_mask(n, window, stride, global_tokens)
    extra = torch.zeros(n, n, dtype=torch.bool)
    for i in range(n):
        picks = torch.randperm(n, generator=generator)[:num_random]
        extra[i, picks] = True
    return mask | extra
'''),
    Case("bigbird_mask", "wrong", "the same random keys in every row", '''
def bigbird_mask(n, window, stride, global_tokens, num_random, generator):
    if num_random < 0:
        raise ValueError("num_random must be >= 0")
    mask = longformer_mask(n, window, stride, global_tokens)
    order = torch.randperm(n, generator=generator)
    result = mask.clone()
    for i in range(n):
        free = [int(j) for j in order if not mask[i, j]]
        result[i, free[:num_random]] = True
    return result
'''),
    Case("bigbird_mask", "wrong", "uses the global random state", '''
def bigbird_mask(n, window, stride, global_tokens, num_random, generator):
    if num_random < 0:
        raise ValueError("num_random must be >= 0")
    mask = longformer_mask(n, window, stride, global_tokens)
    noise = torch.rand(n, n).masked_fill(mask, float("inf"))
    rank = noise.argsort(dim=-1).argsort(dim=-1)
    return mask | (rank < num_random)
'''),
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
    Case("bigbird_mask", "wrong", "first blocked keys, not random", '''
def bigbird_mask(n, window, stride, global_tokens, num_random, generator):
    if num_random < 0:
        raise ValueError("num_random must be >= 0")
    mask = longformer_mask(n, window, stride, global_tokens)
    rank = (~mask).long().cumsum(dim=-1)
    return mask | (~mask & (rank <= num_random))
'''),
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
    Case("sliding_window_attention", "wrong", "builds the full local mask (dense)", '''
def sliding_window_attention(Q, K, V, window):
    if window < 0:
        raise ValueError("negative window")
    n = Q.shape[-2]
    p = torch.arange(n)
    mask = (p[:, None] - p[None, :]).abs() <= window
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)
'''),
    Case("sliding_window_attention", "wrong", "no 1/sqrt(d) scaling", '''
def sliding_window_attention(Q, K, V, window):
    if window < 0:
        raise ValueError("negative window")
    n = Q.shape[-2]
    out = []
    for start in range(0, n, 16):
        end = min(start + 16, n)
        lo, hi = max(0, start - window), min(n, end + window)
        scores = Q[..., start:end, :] @ K[..., lo:hi, :].mT
        far = (torch.arange(start, end)[:, None] - torch.arange(lo, hi)).abs() > window
        out.append(torch.softmax(scores.masked_fill(far, float("-inf")), -1) @ V[..., lo:hi, :])
    return torch.cat(out, dim=-2)
'''),
    Case("sliding_window_attention", "wrong", "off by one: |i - j| < window", '''
def sliding_window_attention(Q, K, V, window):
    if window < 0:
        raise ValueError("negative window")
    n, d = Q.shape[-2], Q.shape[-1]
    out = []
    for start in range(0, n, 16):
        end = min(start + 16, n)
        lo, hi = max(0, start - window), min(n, end + window)
        scores = Q[..., start:end, :] @ K[..., lo:hi, :].mT / math.sqrt(d)
        far = (torch.arange(start, end)[:, None] - torch.arange(lo, hi)).abs() >= max(window, 1)
        out.append(torch.softmax(scores.masked_fill(far, float("-inf")), -1) @ V[..., lo:hi, :])
    return torch.cat(out, dim=-2)
'''),
    Case("sliding_window_attention", "wrong", "unfold over zero padding, edges not masked", '''
def sliding_window_attention(Q, K, V, window):
    if window < 0:
        raise ValueError("negative window")
    d = Q.shape[-1]
    K_pad = F.pad(K, (0, 0, window, window))
    V_pad = F.pad(V, (0, 0, window, window))
    K_win = K_pad.unfold(-2, 2 * window + 1, 1)  # (..., n, d, 2w+1)
    V_win = V_pad.unfold(-2, 2 * window + 1, 1)  # (..., n, d_v, 2w+1)
    scores = (Q.unsqueeze(-2) @ K_win).squeeze(-2) / math.sqrt(d)  # (..., n, 2w+1)
    weights = torch.softmax(scores, dim=-1)
    return (V_win @ weights.unsqueeze(-1)).squeeze(-1)
'''),
    Case("sliding_window_attention", "wrong", "hard-codes float32", '''
def sliding_window_attention(Q, K, V, window):
    if window < 0:
        raise ValueError("negative window")
    Q, K, V = Q.float(), K.float(), V.float()
    n, d = Q.shape[-2], Q.shape[-1]
    out = []
    for start in range(0, n, 16):
        end = min(start + 16, n)
        lo, hi = max(0, start - window), min(n, end + window)
        scores = Q[..., start:end, :] @ K[..., lo:hi, :].mT / math.sqrt(d)
        far = (torch.arange(start, end)[:, None] - torch.arange(lo, hi)).abs() > window
        out.append(torch.softmax(scores.masked_fill(far, float("-inf")), -1) @ V[..., lo:hi, :])
    return torch.cat(out, dim=-2)
'''),
    Case("sliding_window_attention", "wrong", "drops the last partial block", '''
def sliding_window_attention(Q, K, V, window):
    if window < 0:
        raise ValueError("negative window")
    n, d = Q.shape[-2], Q.shape[-1]
    block = max(window, 16)
    out = []
    for start in range(0, n - block + 1, block):
        end = start + block
        lo, hi = max(0, start - window), min(n, end + window)
        scores = Q[..., start:end, :] @ K[..., lo:hi, :].mT / math.sqrt(d)
        far = (torch.arange(start, end)[:, None] - torch.arange(lo, hi)).abs() > window
        out.append(torch.softmax(scores.masked_fill(far, float("-inf")), -1) @ V[..., lo:hi, :])
    return torch.cat(out, dim=-2)
'''),
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
    Case("linear_attention", "wrong", "relu feature map", '''
def linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.relu(Q), F.relu(K)
    S = phi_k.mT @ V
    z = phi_k.sum(dim=-2)
    return (phi_q @ S) / (phi_q @ z.unsqueeze(-1) + eps)
'''),
    Case("linear_attention", "wrong", "softmax feature map", '''
def linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k = Q.softmax(dim=-1), K.softmax(dim=-1)
    S = phi_k.mT @ V
    z = phi_k.sum(dim=-2)
    return (phi_q @ S) / (phi_q @ z.unsqueeze(-1) + eps)
'''),
    Case("linear_attention", "wrong", "denominator missing", '''
def linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    return phi_q @ (phi_k.mT @ V)
'''),
    Case("linear_attention", "wrong", "phi applied to V as well", '''
def linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k, phi_v = F.elu(Q) + 1, F.elu(K) + 1, F.elu(V) + 1
    S = phi_k.mT @ phi_v
    z = phi_k.sum(dim=-2)
    return (phi_q @ S) / (phi_q @ z.unsqueeze(-1) + eps)
'''),
    Case("linear_attention", "wrong", "eps ignored (hard-coded 1e-6)", '''
def linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    S = phi_k.mT @ V
    z = phi_k.sum(dim=-2)
    return (phi_q @ S) / (phi_q @ z.unsqueeze(-1) + 1e-6)
'''),
    Case("linear_attention", "wrong", "quadratic form builds the n x n matrix", '''
def linear_attention(Q, K, V, eps=1e-6):
    weights = (F.elu(Q) + 1) @ (F.elu(K) + 1).mT
    return weights @ V / (weights.sum(dim=-1, keepdim=True) + eps)
'''),
    Case("linear_attention", "wrong", "normalised per key instead of per query", '''
def linear_attention(Q, K, V, eps=1e-6):
    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    S = phi_k.mT @ V
    return (phi_q @ S) / (phi_q.sum(dim=-1, keepdim=True) * phi_k.shape[-2] + eps)
'''),
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
