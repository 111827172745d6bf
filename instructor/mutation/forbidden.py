"""What an exercise's text forbids, written as whole answers that do it (the operator of
:attr:`Mistake.FORBIDDEN_CALL`): a right result by the way the text rules out.

Each entry replaces the student's lines of the function with the body given (indented by
the engine). The rules come from the notebooks' text: "never builds the n x n matrix" (06,
08, 09), "do not call causal_linear_attention" (08), "do not call F.layer_norm" (10), "no
Python loop over positions" (08), "subtract each target's own maximum" (09), "never
build an (N, N) matrix" (09).
"""

from __future__ import annotations

from instructor.mutation.mistakes import Mistake

__all__ = ["FORBIDDEN"]

_WINDOW_CHECK = """if window < 0:
    raise ValueError(f"window must be >= 0, got {window}")
"""

FORBIDDEN: dict[str, list[tuple[Mistake, str, str]]] = {
    "sliding_window_attention": [
        (
            Mistake.FORBIDDEN_CALL,
            "dense attention with a local mask: builds (n, n) scores",
            _WINDOW_CHECK
            + """positions = torch.arange(Q.shape[-2])
near = (positions[:, None] - positions[None, :]).abs() <= window
scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
return torch.softmax(scores.masked_fill(~near, float("-inf")), dim=-1) @ V
""",
        ),
    ],
    "linear_attention": [
        (
            Mistake.FORBIDDEN_CALL,
            "(phi(Q) phi(K)^T) V: builds the (n_q, n_k) matrix",
            """phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
weights = phi_q @ phi_k.mT
return (weights @ V) / (weights.sum(dim=-1, keepdim=True) + eps)
""",
        ),
    ],
    "causal_linear_attention": [
        (
            Mistake.FORBIDDEN_CALL,
            "causal (phi(Q) phi(K)^T) V with a lower triangle: builds an (n, n) matrix",
            """phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
weights = (phi_q @ phi_k.mT).tril()
return (weights @ V) / (weights.sum(dim=-1, keepdim=True) + eps)
""",
        ),
        (
            Mistake.FORBIDDEN_CALL,
            "a Python loop over the positions",
            """phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
outputs = []
for t in range(Q.shape[-2]):
    S = (phi_k[..., : t + 1, :, None] * V[..., : t + 1, None, :]).sum(dim=-3)
    z = phi_k[..., : t + 1, :].sum(dim=-2)
    q_t = phi_q[..., t, :]
    numerator = (q_t.unsqueeze(-1) * S).sum(dim=-2)
    outputs.append(numerator / ((q_t * z).sum(dim=-1, keepdim=True) + eps))
return torch.stack(outputs, dim=-2)
""",
        ),
    ],
    "linear_attention_recurrent": [
        (
            Mistake.FORBIDDEN_CALL,
            "calls causal_linear_attention",
            "return causal_linear_attention(Q, K, V, eps)\n",
        ),
    ],
    "layer_norm": [
        (
            Mistake.FORBIDDEN_CALL,
            "calls F.layer_norm",
            """d = x.shape[-1]
for name, parameter in (("gamma", gamma), ("beta", beta)):
    if tuple(parameter.shape) != (d,):
        raise ValueError(f"{name} has shape {tuple(parameter.shape)}, expected ({d},)")
return F.layer_norm(x, (d,), gamma, beta, eps)
""",
        ),
    ],
    "edge_softmax": [
        (
            Mistake.FORBIDDEN_CALL,
            "a dense (N, N) matrix of scores, a softmax over its rows",
            """if edge_index.dim() != 2 or edge_index.shape[0] != 2:
    raise ValueError(f"edge_index must have shape (2, E), got {tuple(edge_index.shape)}")
if scores.dim() not in (1, 2) or scores.shape[0] != edge_index.shape[1]:
    raise ValueError(f"scores must have shape (E,) or (E, H), got {tuple(scores.shape)}")
source, target = edge_index
dense = torch.full((num_nodes, num_nodes, *scores.shape[1:]), float("-inf"), dtype=scores.dtype)
dense[target, source] = scores
return torch.softmax(dense, dim=1)[target, source]
""",
        ),
        (
            Mistake.AXIS,
            "subtracts the maximum over all edges, not each target's own",
            """if edge_index.dim() != 2 or edge_index.shape[0] != 2:
    raise ValueError(f"edge_index must have shape (2, E), got {tuple(edge_index.shape)}")
if scores.dim() not in (1, 2) or scores.shape[0] != edge_index.shape[1]:
    raise ValueError(f"scores must have shape (E,) or (E, H), got {tuple(scores.shape)}")
target = edge_index[1]
exp = torch.exp(scores - scores.max())
total = torch.zeros(num_nodes, *scores.shape[1:], dtype=scores.dtype).index_add(0, target, exp)
return exp / total[target]
""",
        ),
    ],
}
"""grade_id -> [(mistake, what it does, the body that does it)]."""
