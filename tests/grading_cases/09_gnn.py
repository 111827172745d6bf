"""Wrong and right answers for 09_gnn.

Graded by real nbgrader autograde (tests/test_autograde.py).
"""

from instructor.grading_cases import Case

# fmt: off
CASES = [
    # ------------------------------------------------------------------ adjacency_mask
    Case("adjacency_mask", "wrong", "A instead of A.T, source and target swapped", '''
def adjacency_mask(edge_index, num_nodes, add_self_loops=False):
    if edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError(f"edge_index must have shape (2, E), got {tuple(edge_index.shape)}")
    if ((edge_index < 0) | (edge_index >= num_nodes)).any():
        bad = edge_index[(edge_index < 0) | (edge_index >= num_nodes)][0].item()
        raise ValueError(f"node index {bad} out of range")
    mask = torch.zeros(num_nodes, num_nodes, dtype=torch.bool)
    mask[edge_index[0], edge_index[1]] = True
    if add_self_loops:
        mask |= torch.eye(num_nodes, dtype=torch.bool)
    return mask
'''),
    Case("adjacency_mask", "wrong", "self-loops always added", '''
def adjacency_mask(edge_index, num_nodes, add_self_loops=False):
    if edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError(f"edge_index must have shape (2, E), got {tuple(edge_index.shape)}")
    if ((edge_index < 0) | (edge_index >= num_nodes)).any():
        bad = edge_index[(edge_index < 0) | (edge_index >= num_nodes)][0].item()
        raise ValueError(f"node index {bad} out of range")
    mask = torch.eye(num_nodes, dtype=torch.bool)
    mask[edge_index[1], edge_index[0]] = True
    return mask
'''),
    Case("adjacency_mask", "wrong", "add_self_loops ignored, never added", '''
def adjacency_mask(edge_index, num_nodes, add_self_loops=False):
    if edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError(f"edge_index must have shape (2, E), got {tuple(edge_index.shape)}")
    if ((edge_index < 0) | (edge_index >= num_nodes)).any():
        bad = edge_index[(edge_index < 0) | (edge_index >= num_nodes)][0].item()
        raise ValueError(f"node index {bad} out of range")
    mask = torch.zeros(num_nodes, num_nodes, dtype=torch.bool)
    mask[edge_index[1], edge_index[0]] = True
    return mask
'''),
    Case("adjacency_mask", "wrong", "float mask instead of bool", '''
def adjacency_mask(edge_index, num_nodes, add_self_loops=False):
    if edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError(f"edge_index must have shape (2, E), got {tuple(edge_index.shape)}")
    if ((edge_index < 0) | (edge_index >= num_nodes)).any():
        bad = edge_index[(edge_index < 0) | (edge_index >= num_nodes)][0].item()
        raise ValueError(f"node index {bad} out of range")
    mask = torch.zeros(num_nodes, num_nodes)
    mask[edge_index[1], edge_index[0]] = 1.0
    if add_self_loops:
        mask = mask + torch.eye(num_nodes) * (mask.diagonal() == 0)
    return mask
'''),
    Case("adjacency_mask", "wrong", "int64 mask, like to_dense_adj(...).T.long()", '''
def adjacency_mask(edge_index, num_nodes, add_self_loops=False):
    if edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError(f"edge_index must have shape (2, E), got {tuple(edge_index.shape)}")
    if ((edge_index < 0) | (edge_index >= num_nodes)).any():
        bad = edge_index[(edge_index < 0) | (edge_index >= num_nodes)][0].item()
        raise ValueError(f"node index {bad} out of range")
    mask = torch.zeros(num_nodes, num_nodes, dtype=torch.long)
    mask[edge_index[1], edge_index[0]] = 1
    if add_self_loops:
        mask.fill_diagonal_(1)
    return mask
'''),
    Case("adjacency_mask", "wrong", "size from edge_index.max() + 1 instead of num_nodes", '''
def adjacency_mask(edge_index, num_nodes, add_self_loops=False):
    if edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError(f"edge_index must have shape (2, E), got {tuple(edge_index.shape)}")
    if ((edge_index < 0) | (edge_index >= num_nodes)).any():
        bad = edge_index[(edge_index < 0) | (edge_index >= num_nodes)][0].item()
        raise ValueError(f"node index {bad} out of range")
    n = int(edge_index.max()) + 1 if edge_index.numel() else num_nodes
    mask = torch.zeros(n, n, dtype=torch.bool)
    mask[edge_index[1], edge_index[0]] = True
    if add_self_loops:
        mask |= torch.eye(n, dtype=torch.bool)
    return mask
'''),
    Case("adjacency_mask", "wrong", "no validation of the input", '''
def adjacency_mask(edge_index, num_nodes, add_self_loops=False):
    mask = torch.zeros(num_nodes, num_nodes, dtype=torch.bool)
    mask[edge_index[1], edge_index[0]] = True
    if add_self_loops:
        mask |= torch.eye(num_nodes, dtype=torch.bool)
    return mask
'''),
    Case("adjacency_mask", "wrong", "negative indices not rejected", '''
def adjacency_mask(edge_index, num_nodes, add_self_loops=False):
    if edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError(f"edge_index must have shape (2, E), got {tuple(edge_index.shape)}")
    if (edge_index >= num_nodes).any():
        bad = edge_index[edge_index >= num_nodes][0].item()
        raise ValueError(f"node index {bad} out of range")
    mask = torch.zeros(num_nodes, num_nodes, dtype=torch.bool)
    mask[edge_index[1], edge_index[0]] = True
    if add_self_loops:
        mask |= torch.eye(num_nodes, dtype=torch.bool)
    return mask
'''),
    Case("adjacency_mask", "right", "loop over the edges", '''
def adjacency_mask(edge_index, num_nodes, add_self_loops=False):
    if len(edge_index.shape) != 2 or len(edge_index) != 2:
        raise ValueError(f"expected edge_index of shape (2, E), got {list(edge_index.shape)}")
    mask = torch.zeros(num_nodes, num_nodes, dtype=torch.bool)
    for source, target in edge_index.T.tolist():
        for node in (source, target):
            if not 0 <= node < num_nodes:
                raise ValueError(f"node {node} is not in 0..{num_nodes - 1}")
        mask[target, source] = True
    if add_self_loops:
        for i in range(num_nodes):
            mask[i, i] = True
    return mask
'''),
    Case("adjacency_mask", "right", "one-hot matrices: mask = onehot(dst).T @ onehot(src) > 0", '''
def adjacency_mask(edge_index, num_nodes, add_self_loops=False):
    if edge_index.ndim != 2 or edge_index.size(0) != 2:
        raise ValueError("edge_index must be (2, E)")
    for value in edge_index.unique().tolist():
        if value < 0 or value >= num_nodes:
            raise ValueError(f"index {value} is outside [0, {num_nodes})")
    src = F.one_hot(edge_index[0], num_nodes).float()  # (E, N)
    dst = F.one_hot(edge_index[1], num_nodes).float()  # (E, N)
    mask = (dst.T @ src) > 0
    if add_self_loops:
        mask = mask | torch.eye(num_nodes, dtype=torch.bool)
    return mask
'''),
    # ------------------------------------------------------------------ graph_attention
    Case("graph_attention", "wrong", "mask transposed, attends over out-neighbours", '''
def graph_attention(X, edge_index, W_q, W_k, W_v):
    n = X.shape[0]
    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T
    mask = torch.zeros(n, n, dtype=torch.bool)
    mask[edge_index[0], edge_index[1]] = True
    scores = (Q @ K.T / math.sqrt(Q.shape[-1])).masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ V
'''),
    Case("graph_attention", "wrong", "no 1/sqrt(d_k) scaling", '''
def graph_attention(X, edge_index, W_q, W_k, W_v):
    n = X.shape[0]
    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T
    mask = torch.zeros(n, n, dtype=torch.bool)
    mask[edge_index[1], edge_index[0]] = True
    scores = (Q @ K.T).masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ V
'''),
    Case("graph_attention", "wrong", "scaled by sqrt(d), the input size", '''
def graph_attention(X, edge_index, W_q, W_k, W_v):
    n = X.shape[0]
    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T
    mask = torch.zeros(n, n, dtype=torch.bool)
    mask[edge_index[1], edge_index[0]] = True
    scores = (Q @ K.T / math.sqrt(X.shape[-1])).masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ V
'''),
    Case("graph_attention", "wrong", "softmax over all nodes, no mask", '''
def graph_attention(X, edge_index, W_q, W_k, W_v):
    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T
    weights = torch.softmax(Q @ K.T / math.sqrt(Q.shape[-1]), dim=-1)
    return weights @ V
'''),
    Case("graph_attention", "wrong", "softmax over the queries (dim=0)", '''
def graph_attention(X, edge_index, W_q, W_k, W_v):
    n = X.shape[0]
    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T
    mask = torch.zeros(n, n, dtype=torch.bool)
    mask[edge_index[1], edge_index[0]] = True
    scores = (Q @ K.T / math.sqrt(Q.shape[-1])).masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=0).nan_to_num(0.0)
    return weights @ V
'''),
    Case("graph_attention", "wrong", "NaN for nodes without in-neighbours", '''
def graph_attention(X, edge_index, W_q, W_k, W_v):
    n = X.shape[0]
    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T
    mask = torch.zeros(n, n, dtype=torch.bool)
    mask[edge_index[1], edge_index[0]] = True
    scores = (Q @ K.T / math.sqrt(Q.shape[-1])).masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V
'''),
    Case("graph_attention", "wrong", "uniform weights (mean of all V) for isolated nodes", '''
def graph_attention(X, edge_index, W_q, W_k, W_v):
    n = X.shape[0]
    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T
    mask = torch.zeros(n, n, dtype=torch.bool)
    mask[edge_index[1], edge_index[0]] = True
    scores = (Q @ K.T / math.sqrt(Q.shape[-1])).masked_fill(~mask, -1e9)
    return torch.softmax(scores, dim=-1) @ V
'''),
    Case("graph_attention", "wrong", "weights not transposed, X @ W_q", '''
def graph_attention(X, edge_index, W_q, W_k, W_v):
    n = X.shape[0]
    Q, K, V = X @ W_q, X @ W_k, X @ W_v
    mask = torch.zeros(n, n, dtype=torch.bool)
    mask[edge_index[1], edge_index[0]] = True
    scores = (Q @ K.T / math.sqrt(Q.shape[-1])).masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ V
'''),
    Case("graph_attention", "wrong", "self-loops added", '''
def graph_attention(X, edge_index, W_q, W_k, W_v):
    n = X.shape[0]
    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T
    mask = torch.eye(n, dtype=torch.bool)
    mask[edge_index[1], edge_index[0]] = True
    scores = (Q @ K.T / math.sqrt(Q.shape[-1])).masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ V
'''),
    Case("graph_attention", "wrong", "hard-codes float32", '''
def graph_attention(X, edge_index, W_q, W_k, W_v):
    n = X.shape[0]
    X, W_q, W_k, W_v = X.float(), W_q.float(), W_k.float(), W_v.float()
    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T
    mask = torch.zeros(n, n, dtype=torch.bool)
    mask[edge_index[1], edge_index[0]] = True
    scores = (Q @ K.T / math.sqrt(Q.shape[-1])).masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return weights @ V
'''),
    Case("graph_attention", "right", "sparse, one score per edge, scatter softmax", '''
def graph_attention(X, edge_index, W_q, W_k, W_v):
    source, target = edge_index
    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T
    scores = (Q[target] * K[source]).sum(dim=-1) / Q.shape[-1] ** 0.5  # (E,)
    n = X.shape[0]
    best = torch.full((n,), float("-inf"), dtype=X.dtype)
    best = best.scatter_reduce(0, target, scores, reduce="amax")
    exp = torch.exp(scores - best[target])  # (E,)
    total = torch.zeros(n, dtype=X.dtype).index_add(0, target, exp)
    alpha = exp / total[target]  # softmax over the edges into each target
    out = torch.zeros(n, V.shape[-1], dtype=X.dtype)
    return out.index_add(0, target, alpha[:, None] * V[source])
'''),
    Case("graph_attention", "right", "loop over nodes, F.scaled_dot_product_attention", '''
def graph_attention(X, edge_index, W_q, W_k, W_v):
    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T
    rows = []
    for i in range(X.shape[0]):
        sources = edge_index[0][edge_index[1] == i]
        if len(sources) == 0:
            rows.append(torch.zeros(V.shape[-1], dtype=X.dtype))
        else:
            rows.append(F.scaled_dot_product_attention(Q[i : i + 1], K[sources], V[sources])[0])
    return torch.stack(rows)
'''),
]
