"""Wrong and right answers for 09_gnn.

Wrong answers are ``Mutation``s of the reference solution (the mistake as a small edit);
full sources (``Case``) for right answers, and for wrong ones that rewrite the function
(edge_softmax's dense matrix and its flattened heads). Graded by real nbgrader autograde
(tests/course/test_autograde.py).
"""

from instructor.grading_cases import Case, Mutation

# The input checks of adjacency_mask.
ADJACENCY_CHECKS = """\
    if edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError(f"edge_index must have shape (2, E), got {tuple(edge_index.shape)}")
    outside = (edge_index < 0) | (edge_index >= num_nodes)
    if outside.any():
        bad = edge_index[outside][0].item()
        raise ValueError(f"node index {bad} is out of range for num_nodes={num_nodes}")
"""

# The line of graph_attention that gives a node without in-neighbours a zero row.
ZERO_ISOLATED = (
    "    weights = torch.where(has_neighbour, weights, 0.0)  # NaN rows (no in-neighbour) -> 0\n"
)


def sparse_attention(edges: str) -> str:
    """graph_attention written the PyG way, one score per column of ``edges`` (an expression
    over edge_index) and a scatter softmax over the columns that arrive at each node."""
    return f"""
def graph_attention(X, edge_index, W_q, W_k, W_v):
    source, target = {edges}
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
"""


# fmt: off
CASES = [
    # ------------------------------------------------------------------ adjacency_mask
    Mutation("adjacency_mask", "A instead of A.T, source and target swapped", {
        "mask[target, source] = True": "mask[source, target] = True",
    }),
    Mutation("adjacency_mask", "self-loops always added", {
        "mask = torch.zeros(num_nodes, num_nodes, dtype=torch.bool)": (
            "mask = torch.eye(num_nodes, dtype=torch.bool)"
        ),
    }, message="self-loops were added although add_self_loops=False"),
    Mutation("adjacency_mask", "add_self_loops ignored, never added", {
        "    if add_self_loops:\n        mask |= torch.eye(num_nodes, dtype=torch.bool)\n": "",
    }, message="the self-loops are missing: add_self_loops=True must set the diagonal"),
    Mutation("adjacency_mask", "float mask instead of bool", {
        "return mask": "return mask.float()",
    }, message="expected torch.bool. PyTorch ADDS a float mask to the scores"),
    Mutation("adjacency_mask", "int64 mask, like to_dense_adj(...).T.long()", {
        "return mask": "return mask.long()",
    }, message="expected torch.bool. PyTorch ADDS a float mask to the scores"),
    Mutation("adjacency_mask", "size from edge_index.max() + 1 instead of num_nodes", {
        "mask = torch.zeros(num_nodes, num_nodes, dtype=torch.bool)": (
            "n = int(edge_index.max()) + 1 if edge_index.numel() else num_nodes\n"
            "    mask = torch.zeros(n, n, dtype=torch.bool)"
        ),
        "torch.eye(num_nodes, dtype=torch.bool)": "torch.eye(n, dtype=torch.bool)",
    }, message="adjacency_mask(edge_index, 5) has shape (4, 4), expected (5, 5): take"),
    Mutation("adjacency_mask", "no validation of the input", {ADJACENCY_CHECKS: ""}),
    Mutation("adjacency_mask", "indices checked with min() and max() (fails for E = 0)", {
        "    outside = (edge_index < 0) | (edge_index >= num_nodes)\n    if outside.any():\n":
            "    if edge_index.min() < 0 or edge_index.max() >= num_nodes:\n"
            "        outside = (edge_index < 0) | (edge_index >= num_nodes)\n",
    }, message="E = 0 is allowed: an edge_index of shape (2, 0) has no edge"),
    Mutation("adjacency_mask", "negative indices not rejected", {
        "outside = (edge_index < 0) | (edge_index >= num_nodes)": (
            "outside = edge_index >= num_nodes"
        ),
    }, message="should raise ValueError for a negative node index -1"),
    Mutation("adjacency_mask", "only edge_index.shape[0] checked, not its dimensions", {
        "if edge_index.dim() != 2 or edge_index.shape[0] != 2:": "if edge_index.shape[0] != 2:",
    }, message="should raise ValueError for an edge_index of shape (2, 4, 1): 3-D"),
    Mutation("adjacency_mask", "only the sources (edge_index[0]) checked for their range", {
        "outside = (edge_index < 0) | (edge_index >= num_nodes)": (
            "outside = (edge_index[0] < 0) | (edge_index[0] >= num_nodes)"
        ),
        "bad = edge_index[outside][0].item()": "bad = edge_index[0][outside][0].item()",
    }, hidden=True),
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
    Mutation("graph_attention", "K not transposed in the scores (a new shape error)", {
        "scores = Q @ K.T / math.sqrt(Q.shape[-1])": "scores = Q @ K / math.sqrt(Q.shape[-1])",
    }, message="Likely cause: shapes that cannot be multiplied"),
    Mutation("graph_attention", "mask transposed, attends over out-neighbours", {
        "adjacency_mask(edge_index, X.shape[0])": "adjacency_mask(edge_index, X.shape[0]).T",
    }, message="the mask is transposed: node i attended over its OUT-neighbours"),
    Mutation("graph_attention", "no 1/sqrt(d_k) scaling", {
        "scores = Q @ K.T / math.sqrt(Q.shape[-1])": "scores = Q @ K.T",
    }, message="the scores are not divided by sqrt(d_k)"),
    Mutation("graph_attention", "scaled by sqrt(d), the input size", {
        "math.sqrt(Q.shape[-1])": "math.sqrt(X.shape[-1])",
    }, message="the scores are divided by sqrt(d), the input size"),
    Mutation("graph_attention", "softmax over all nodes, no mask", {
        "mask = adjacency_mask(edge_index, X.shape[0])": (
            "mask = torch.ones(X.shape[0], X.shape[0], dtype=torch.bool)"
        ),
    }, message="the mask is ignored: the softmax runs over all nodes"),
    Mutation("graph_attention", "softmax over the queries (dim=0)", {
        'float("-inf")), dim=-1)': 'float("-inf")), dim=0)',
    }, message="normalises over the wrong axis"),
    Mutation("graph_attention", "NaN for nodes without in-neighbours", {
        ZERO_ISOLATED: "",
    }, message="Nodes 3 and 4 have no in-neighbour"),
    Mutation("graph_attention", "uniform weights (mean of all V) for isolated nodes", {
        'float("-inf")': "-1e9",
        ZERO_ISOLATED: "",
    }, message="got the mean of all values, i.e. uniform weights over all nodes"),
    Mutation("graph_attention", "weights not transposed, X @ W_q", {
        "Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T": "Q, K, V = X @ W_q, X @ W_k, X @ W_v",
    }, message="With X (N, d) and W_q (d_k, d), the queries are Q = X @ W_q.T of"),
    Mutation("graph_attention", "self-loops added", {
        "adjacency_mask(edge_index, X.shape[0])": (
            "adjacency_mask(edge_index, X.shape[0], add_self_loops=True)"
        ),
    }, message="self-loops were added: a node attends to itself only if"),
    Mutation("graph_attention", "hard-codes float32", {
        "    Q, K, V =": "    X, W_q, W_k, W_v = X.float(), W_q.float(), W_k.float(), W_v.float()\n"
        "    Q, K, V =",
    }, message="for float64 inputs has dtype torch.float32"),
    Mutation("graph_attention", "softmax by hand without subtracting the max (overflows)", {
        'weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)': (
            "exp = torch.exp(scores) * mask\n"
            "    weights = exp / exp.sum(dim=-1, keepdim=True)"
        ),
    }, message="graph_attention gives NaN or inf for the inputs 60 * X"),
    Mutation("graph_attention", "the softmax in float32, cast back: float64 loses its precision", {
        'weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)': (
            'weights = torch.softmax(scores.float().masked_fill(~mask, float("-inf")), dim=-1)'
            ".to(X.dtype)"
        ),
    }, hidden=True),
    Case("graph_attention", "wrong", "PyG's way: a softmax per column, a duplicate counted twice",
         sparse_attention("edge_index"), message="a duplicate edge was counted twice"),
    Case("graph_attention", "right", "sparse, duplicates removed, then a scatter softmax",
         sparse_attention("edge_index.unique(dim=1)")),
    Case("graph_attention", "right", "loop over nodes, F.scaled_dot_product_attention", '''
def graph_attention(X, edge_index, W_q, W_k, W_v):
    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T
    rows = []
    for i in range(X.shape[0]):
        sources = edge_index[0][edge_index[1] == i].unique()  # a duplicate edge counts once
        if len(sources) == 0:
            rows.append(torch.zeros(V.shape[-1], dtype=X.dtype))
        else:
            rows.append(F.scaled_dot_product_attention(Q[i : i + 1], K[sources], V[sources])[0])
    return torch.stack(rows)
'''),
    Case("graph_attention", "right", "PyG: coalesce, then torch_geometric.utils.softmax", '''
def graph_attention(X, edge_index, W_q, W_k, W_v):
    from torch_geometric.utils import coalesce, softmax

    source, target = coalesce(edge_index, num_nodes=X.shape[0])  # duplicates removed
    Q, K, V = X @ W_q.T, X @ W_k.T, X @ W_v.T
    scores = (Q[target] * K[source]).sum(dim=-1) / Q.shape[-1] ** 0.5  # (E,)
    alpha = softmax(scores, target, num_nodes=X.shape[0])
    out = torch.zeros(X.shape[0], V.shape[-1], dtype=X.dtype)
    return out.index_add(0, target, alpha[:, None] * V[source])
'''),
    # ------------------------------------------------------------------ edge_softmax
    Mutation("edge_softmax", "buffers sized by the largest target (fails for E = 0)", {
        'best = torch.full((num_nodes, *heads), float("-inf"), dtype=scores.dtype)':
            'best = torch.full((int(target.max()) + 1, *heads), float("-inf"), dtype=scores.dtype)',
    }, message="E = 0 is allowed (no edges, no weights)"),
    Mutation("edge_softmax", "sums in a float32 buffer (a new dtype error)", {
        "total = torch.zeros(num_nodes, *heads, dtype=scores.dtype)":
            "total = torch.zeros(num_nodes, *heads)",
    }, message="Likely cause: a dtype mismatch"),
    Mutation("edge_softmax", "grouped by the source, edge_index[0]", {
        "target = edge_index[1]  # (E,)": "target = edge_index[0]  # (E,)",
    }, message="grouped by their SOURCE"),
    Mutation("edge_softmax", "one softmax over all edges", {
        "return exp / total[target]": "return torch.softmax(scores, dim=0)",
    }, message="one softmax over all E edges"),
    Mutation("edge_softmax", "no shift: exp of the raw scores overflows", {
        "exp = torch.exp(scores - best[target])": "exp = torch.exp(scores)",
    }, message="edge_softmax gives NaN or inf for scores near 1000: exp(1000) overflows"),
    Mutation("edge_softmax", "shifted by the maximum over all edges", {
        "exp = torch.exp(scores - best[target])": "exp = torch.exp(scores - scores.max())",
    }, message="the largest score over ALL edges"),
    Mutation("edge_softmax", "scores (E,) only: the index is not expanded over the heads", {
        "index = target.reshape(-1, *[1] * len(heads)).expand_as(scores)": "index = target",
    }, message="With H heads the index of each edge's target must cover every head"),
    Case("edge_softmax", "wrong", "heads flattened: one softmax over a node's edges and heads", '''
def edge_softmax(scores, edge_index, num_nodes):
    if edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError("edge_index must be (2, E)")
    if scores.dim() not in (1, 2) or scores.shape[0] != edge_index.shape[1]:
        raise ValueError("one score per edge")
    heads = scores.shape[1] if scores.dim() == 2 else 1
    flat = scores.reshape(-1)  # (E * H,)
    target = edge_index[1].repeat_interleave(heads)  # (E * H,)
    best = torch.full((num_nodes,), float("-inf"), dtype=scores.dtype)
    best = best.scatter_reduce(0, target, flat, reduce="amax")
    exp = torch.exp(flat - best[target])
    total = torch.zeros(num_nodes, dtype=scores.dtype).index_add(0, target, exp)
    return (exp / total[target]).reshape(scores.shape)
''', message="each node's softmax ran over its edges AND the heads together"),
    Mutation("edge_softmax", "not normalised: exp of the shifted scores", {
        "return exp / total[target]": "return exp",
    }, message="the weights of the edges that arrive at a node must sum to 1"),
    Mutation("edge_softmax", "shifted in place: the scores are modified", {
        "exp = torch.exp(scores - best[target])": "exp = torch.exp(scores.sub_(best[target]))",
    }, message="was modified in place"),
    Mutation("edge_softmax", "hard-codes float32", {
        "    target = edge_index[1]  # (E,)": "    scores = scores.float()\n"
        "    target = edge_index[1]  # (E,)",
    }, message="for float64 scores has dtype torch.float32"),
    Mutation("edge_softmax", "no check of the input shapes", {
        "    if edge_index.dim() != 2 or edge_index.shape[0] != 2:\n": "    if False:\n",
        "    if scores.dim() not in (1, 2) or scores.shape[0] != edge_index.shape[1]:\n":
            "    if False:\n",
    }, message="should raise ValueError"),
    Mutation("edge_softmax", "only the number of scores checked, not their dimensions", {
        "scores.dim() not in (1, 2) or scores.shape[0]": "scores.shape[0]",
    }, message="should raise ValueError for scores of shape (6, 2, 1)"),
    Mutation("edge_softmax", "only edge_index.shape[0] checked, not its dimensions", {
        "if edge_index.dim() != 2 or edge_index.shape[0] != 2:": "if edge_index.shape[0] != 2:",
    }, message="should raise ValueError for an edge_index of shape (2, 6, 1): 3-D"),
    Mutation("edge_softmax", "only more than 2 dimensions of scores rejected, not 0-D", {
        "scores.dim() not in (1, 2) or scores.shape[0]": "scores.dim() > 2 or scores.shape[0]",
    }, hidden=True),
    Case("edge_softmax", "wrong", "dense: an (N, N) masked score matrix, read at the edges", '''
def edge_softmax(scores, edge_index, num_nodes):
    if edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError("edge_index must be (2, E)")
    if scores.dim() not in (1, 2) or scores.shape[0] != edge_index.shape[1]:
        raise ValueError("one score per edge")
    source, target = edge_index
    dense = torch.full((num_nodes, num_nodes, *scores.shape[1:]), float("-inf"),
                       dtype=scores.dtype)
    dense[target, source] = scores  # row = target i, column = source j
    weights = torch.softmax(dense, dim=1).nan_to_num(0.0)
    return weights[target, source]
''', message="One weight per edge: never build an (N, N) matrix"),
    Case("edge_softmax", "right", "loop over the target nodes, torch.softmax per node", '''
def edge_softmax(scores, edge_index, num_nodes):
    if edge_index.ndim != 2 or len(edge_index) != 2:
        raise ValueError(f"edge_index must be (2, E), got {list(edge_index.shape)}")
    if scores.ndim not in (1, 2) or len(scores) != edge_index.shape[1]:
        raise ValueError(f"need one row of scores per edge, got {list(scores.shape)}")
    alpha = torch.empty_like(scores)
    for node in edge_index[1].unique().tolist():
        arriving = edge_index[1] == node
        alpha[arriving] = torch.softmax(scores[arriving], dim=0)
    return alpha
'''),
    Case("edge_softmax", "right", "PyG's torch_geometric.utils.softmax", '''
def edge_softmax(scores, edge_index, num_nodes):
    from torch_geometric.utils import softmax

    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError("edge_index must have shape (2, E)")
    if scores.dim() not in (1, 2) or scores.size(0) != edge_index.size(1):
        raise ValueError("scores must be (E,) or (E, H)")
    return softmax(scores, edge_index[1], num_nodes=num_nodes)
'''),
    # ------------------------------------------------------------------ concept questions
    Case("q_adjacency_restricts", "wrong", "answered with a number", "q_adjacency_restricts = 2\n",
         message="should be a string"),
    Case("q_adjacency_restricts", "wrong", "(b): the outgoing edges, the transposed mask",
         'q_adjacency_restricts = "b"\n'),
    Case("q_adjacency_restricts", "wrong", "(c): the edges taken as undirected",
         'q_adjacency_restricts = "c"\n'),
    Case("q_adjacency_restricts", "right", "upper case with spaces",
         'q_adjacency_restricts = " A "\n'),
    Case("q_complete_graph", "wrong", "(b): all edges taken to mean equal weights",
         'q_complete_graph = "b"\n'),
    Case("q_complete_graph", "wrong", "(d): the self-loops taken to win the softmax",
         'q_complete_graph = "d"\n'),
    Case("q_complete_graph", "right", "upper case", 'q_complete_graph = "A"\n'),
    Case("q_karate_weights", "wrong", "the dense N x N matrix", "q_karate_weights = 34**2\n"),
    Case("q_karate_weights", "wrong", "the self-loops forgotten", "q_karate_weights = 156\n"),
    Case("q_karate_weights", "wrong", "each friendship counted once",
         "q_karate_weights = 78 + 34\n"),
    Case("q_karate_weights", "wrong", "answered with None", "q_karate_weights = None\n",
         message="not answered yet"),
    Case("q_karate_weights", "right", "as a float", "q_karate_weights = 190.0\n"),
]
