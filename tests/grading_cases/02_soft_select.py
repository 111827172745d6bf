"""Wrong and right answers for 02_soft_select, graded by real nbgrader autograde.

See tests/test_autograde.py: each source replaces the solution cell of its function.
"""

from instructor.grading_cases import Case

CASES = [
    # ---------------------------------------------------------------- hard_select
    Case(
        "hard_select",
        "wrong",
        "exact equality with ==",
        """
def hard_select(q, K, V):
    for j in range(len(K)):
        if np.all(K[j] == q):
            return V[j]
    raise KeyError("no key equals the query")
""",
    ),
    Case(
        "hard_select",
        "wrong",
        "returns the matching key instead of its value",
        """
def hard_select(q, K, V):
    for j in range(len(K)):
        if np.allclose(q, K[j]):
            return K[j].copy()
    raise KeyError("no key equals the query")
""",
    ),
    Case(
        "hard_select",
        "wrong",
        "returns V[0] when no key matches",
        """
def hard_select(q, K, V):
    for j in range(len(K)):
        if np.allclose(q, K[j]):
            return V[j].copy()
    return V[0].copy()
""",
    ),
    Case(
        "hard_select",
        "wrong",
        "value of the nearest key, never raises",
        """
def hard_select(q, K, V):
    j = np.argmin(np.linalg.norm(K - q, axis=1))
    return V[j].copy()
""",
    ),
    Case(
        "hard_select",
        "wrong",
        "skips the last key (off by one)",
        """
def hard_select(q, K, V):
    for j in range(len(K) - 1):
        if np.allclose(q, K[j]):
            return V[j].copy()
    raise KeyError("no key equals the query")
""",
    ),
    Case(
        "hard_select",
        "right",
        "vectorised isclose and the indicator sum",
        """
def hard_select(q, K, V):
    indicator = np.isclose(K, q, rtol=1e-5, atol=1e-8).all(axis=1)  # (n,) booleans
    if not indicator.any():
        raise KeyError(f"no key equals {q}")
    return (indicator[:, None] * V).sum(axis=0).astype(V.dtype)
""",
    ),
    Case(
        "hard_select",
        "right",
        "list of the matching indices",
        """
def hard_select(q, K, V):
    matches = [j for j, k in enumerate(K) if np.allclose(q, k)]
    if not matches:
        raise KeyError("query not found")
    return V[matches[0]]
""",
    ),
    # ---------------------------------------------------------------- dot_scores
    Case(
        "dot_scores",
        "wrong",
        "K.T @ q (keys taken as columns)",
        """
def dot_scores(q, K):
    return K.T @ q
""",
    ),
    Case(
        "dot_scores",
        "wrong",
        "q @ q instead of the keys",
        """
def dot_scores(q, K):
    return q @ q
""",
    ),
    Case(
        "dot_scores",
        "wrong",
        "scaled by sqrt(d)",
        """
def dot_scores(q, K):
    return K @ q / np.sqrt(q.shape[0]).astype(q.dtype)
""",
    ),
    Case(
        "dot_scores",
        "wrong",
        "dtype hard-coded to float32",
        """
def dot_scores(q, K):
    return (K @ q).astype(np.float32)
""",
    ),
    Case(
        "dot_scores",
        "wrong",
        "sum over the keys axis instead of the features",
        """
def dot_scores(q, K):
    return (K * q).sum(axis=0)
""",
    ),
    Case(
        "dot_scores",
        "right",
        "einsum",
        """
def dot_scores(q, K):
    return np.einsum("nd,d->n", K, q)
""",
    ),
    Case(
        "dot_scores",
        "right",
        "loop of np.dot",
        """
def dot_scores(q, K):
    return np.array([np.dot(k, q) for k in K], dtype=np.result_type(q, K))
""",
    ),
    # ---------------------------------------------------------------- additive_scores
    Case(
        "additive_scores",
        "wrong",
        "the tanh is missing",
        """
def additive_scores(q, K, W_q, W_k, w):
    return (W_q @ q + K @ W_k.T) @ w
""",
    ),
    Case(
        "additive_scores",
        "wrong",
        "W_q applied to the keys, W_k to the query",
        """
def additive_scores(q, K, W_q, W_k, w):
    return np.tanh(W_k @ q + K @ W_q.T) @ w
""",
    ),
    Case(
        "additive_scores",
        "wrong",
        "hidden units summed instead of dotted with w",
        """
def additive_scores(q, K, W_q, W_k, w):
    return np.tanh(W_q @ q + K @ W_k.T).sum(axis=1)
""",
    ),
    Case(
        "additive_scores",
        "wrong",
        "tanh after the dot product with w",
        """
def additive_scores(q, K, W_q, W_k, w):
    return np.tanh((W_q @ q + K @ W_k.T) @ w)
""",
    ),
    Case(
        "additive_scores",
        "wrong",
        "K @ W_k instead of K @ W_k.T",
        """
def additive_scores(q, K, W_q, W_k, w):
    return np.tanh(W_q @ q + K @ W_k) @ w
""",
    ),
    Case(
        "additive_scores",
        "right",
        "a loop over the keys",
        """
def additive_scores(q, K, W_q, W_k, w):
    query_part = W_q @ q
    return np.array([w @ np.tanh(query_part + W_k @ k) for k in K], dtype=q.dtype)
""",
    ),
    Case(
        "additive_scores",
        "right",
        "einsum",
        """
def additive_scores(q, K, W_q, W_k, w):
    hidden = np.tanh(np.einsum("hd,d->h", W_q, q)[None, :] + np.einsum("hd,nd->nh", W_k, K))
    return np.einsum("nh,h->n", hidden, w)
""",
    ),
    # ---------------------------------------------------------------- softmax
    Case(
        "softmax",
        "wrong",
        "unstable: no max subtracted",
        """
def softmax(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
""",
    ),
    Case(
        "softmax",
        "wrong",
        "default axis 0",
        """
def softmax(x, axis=0):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
""",
    ),
    Case(
        "softmax",
        "wrong",
        "no exponential: x divided by its sum",
        """
def softmax(x, axis=-1):
    return x / x.sum(axis=axis, keepdims=True)
""",
    ),
    Case(
        "softmax",
        "wrong",
        "max over the whole array: rows far apart underflow",
        """
def softmax(x, axis=-1):
    e = np.exp(x - x.max())
    return e / e.sum(axis=axis, keepdims=True)
""",
    ),
    Case(
        "softmax",
        "wrong",
        "subtracts the max in place, modifying x",
        """
def softmax(x, axis=-1):
    x -= x.max(axis=axis, keepdims=True)
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
""",
    ),
    Case(
        "softmax",
        "wrong",
        "sum without keepdims",
        """
def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis)
""",
    ),
    Case(
        "softmax",
        "wrong",
        "always normalises the last axis",
        """
def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
""",
    ),
    Case(
        "softmax",
        "right",
        "log-sum-exp form",
        """
def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    log_norm = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
    return np.exp(x - log_norm)
""",
    ),
    Case(
        "softmax",
        "right",
        "move the axis last, then back",
        """
def softmax(x, axis=-1):
    y = np.moveaxis(x, axis, -1)
    e = np.exp(y - y.max(axis=-1)[..., None])
    out = e / e.sum(axis=-1)[..., None]
    return np.moveaxis(out, -1, axis)
""",
    ),
    # ---------------------------------------------------------------- soft_select
    Case(
        "soft_select",
        "wrong",
        "no 1/sqrt(d) scaling",
        """
def soft_select(q, K, V, temperature=1.0):
    s = (K @ q) / temperature
    e = np.exp(s - s.max())
    return (e / e.sum()) @ V
""",
    ),
    Case(
        "soft_select",
        "wrong",
        "temperature multiplies the scores",
        """
def soft_select(q, K, V, temperature=1.0):
    s = (K @ q) / math.sqrt(q.shape[0]) * temperature
    e = np.exp(s - s.max())
    return (e / e.sum()) @ V
""",
    ),
    Case(
        "soft_select",
        "wrong",
        "weights not normalised",
        """
def soft_select(q, K, V, temperature=1.0):
    s = (K @ q) / (math.sqrt(q.shape[0]) * temperature)
    return np.exp(s) @ V
""",
    ),
    Case(
        "soft_select",
        "wrong",
        "weighted sum over the wrong axis",
        """
def soft_select(q, K, V, temperature=1.0):
    s = (K @ q) / (math.sqrt(q.shape[0]) * temperature)
    e = np.exp(s - s.max())
    weights = e / e.sum()
    return (V.T * weights).sum(axis=0)
""",
    ),
    Case(
        "soft_select",
        "wrong",
        "scaled by sqrt(dv) instead of sqrt(d)",
        """
def soft_select(q, K, V, temperature=1.0):
    s = (K @ q) / (math.sqrt(V.shape[1]) * temperature)
    e = np.exp(s - s.max())
    return (e / e.sum()) @ V
""",
    ),
    Case(
        "soft_select",
        "wrong",
        "scaled by d instead of sqrt(d)",
        """
def soft_select(q, K, V, temperature=1.0):
    s = (K @ q) / (q.shape[0] * temperature)
    e = np.exp(s - s.max())
    return (e / e.sum()) @ V
""",
    ),
    Case(
        "soft_select",
        "wrong",
        "unstable exp: NaN at tiny temperatures",
        """
def soft_select(q, K, V, temperature=1.0):
    e = np.exp((K @ q) / (math.sqrt(q.shape[0]) * temperature))
    return (e / e.sum()) @ V
""",
    ),
    Case(
        "soft_select",
        "wrong",
        "np.sqrt(d) upcasts float32 to float64",
        """
def soft_select(q, K, V, temperature=1.0):
    s = (K @ q) / (np.sqrt(q.shape[0]) * temperature)
    e = np.exp(s - s.max())
    return (e / e.sum()) @ V
""",
    ),
    Case(
        "soft_select",
        "right",
        "calls dot_scores and softmax from above",
        """
def soft_select(q, K, V, temperature=1.0):
    weights = softmax(dot_scores(q, K) / (math.sqrt(K.shape[1]) * temperature))
    return weights @ V
""",
    ),
    Case(
        "soft_select",
        "right",
        "einsum and log-sum-exp, scale in the query's dtype",
        """
def soft_select(q, K, V, temperature=1.0):
    scale = q.dtype.type(1.0 / (np.sqrt(q.shape[0]) * temperature))
    s = np.einsum("nd,d->n", K, q) * scale
    log_weights = s - (s.max() + np.log(np.exp(s - s.max()).sum()))
    return np.einsum("n,nv->v", np.exp(log_weights), V)
""",
    ),
]
