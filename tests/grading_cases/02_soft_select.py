"""Wrong and right answers for 02_soft_select, graded by real nbgrader autograde.

See tests/course/test_autograde.py. A wrong answer is a ``Mutation``: a small change to the
reference solution in solutions/02_soft_select (``instructor.grading_cases``), which fails
loudly when the reference no longer contains the text it changes. Full sources (``Case``)
remain only for right answers, each replacing the solution cell of its function.
"""

from instructor.grading_cases import Case, Mutation

NORMALISE = "    weights = weights / weights.sum()\n"
"""soft_select's normalisation of the weights, as the reference solution writes it."""

CASES = [
    # ---------------------------------------------------------------- hard_select
    Mutation(
        "hard_select",
        "exact equality with ==",
        {"np.allclose(q, key)": "np.all(q == key)"},
        message="q = [0.1 * 6, 0.1 * 8, 0] equals the key K[3] = [0.6, 0.8, 0] up to rounding",
    ),
    Mutation(
        "hard_select",
        "returns the matching key instead of its value",
        {"return V[j].copy()": "return key.copy()"},
        message="the matching KEY K[1]: return the VALUE V[j] of the matching key",
    ),
    Mutation(
        "hard_select",
        "argmax of np.allclose(K, q): one bool for the whole K, so always V[0]",
        {
            "    for j, key in enumerate(K):\n"
            "        if np.allclose(q, key):\n"
            "            return V[j].copy()\n"
            '    raise KeyError(f"no key equals the query {q}")': (
                "    j = np.argmax(np.allclose(K, q))  # the index of the matching key\n"
                "    return V[j].copy()"
            )
        },
        message="the first value V[0], whatever the query",
    ),
    Mutation(
        "hard_select",
        "returns V[0] when no key matches",
        {'raise KeyError(f"no key equals the query {q}")': "return V[0].copy()"},
    ),
    Mutation(
        "hard_select",
        "value of the nearest key, never raises",
        {
            'raise KeyError(f"no key equals the query {q}")': (
                "return V[np.argmin(np.linalg.norm(K - q, axis=1))].copy()"
            )
        },
    ),
    Mutation(
        "hard_select",
        "skips the last key (off by one)",
        {"enumerate(K)": "enumerate(K[:-1])"},
        message="is the last key: does your search visit every key?",
    ),
    Mutation(
        "hard_select",
        "absolute tolerance: too strict for keys of size 1e6",
        {"np.allclose(q, key)": "np.all(np.abs(q - key) < 1e-9)"},
        message="a fixed absolute tolerance is too strict",
        hidden=True,
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
    # A mistake no visible test wrote a message for (issue 30): checked_call names it.
    Case(
        "hard_select",
        "wrong",
        "the matches as a float mask, used as an index (a new wrong dtype)",
        """
def hard_select(q, K, V):
    matches = np.isclose(K, q).all(axis=1).astype(float)  # 1.0 where the key equals q
    if matches.sum() == 0:
        raise KeyError(f"no key equals the query {q}")
    return V[matches][0]
""",
        message="Likely cause: an index of a floating dtype",
    ),
    # ---------------------------------------------------------------- dot_scores
    Mutation(
        "dot_scores",
        "K.T @ q (keys taken as columns)",
        {"return K @ q": "return K.T @ q"},
        message="K holds one key per ROW: check which dimensions your product pairs up",
    ),
    Mutation("dot_scores", "q @ q instead of the keys", {"return K @ q": "return q @ q"}),
    Mutation(
        "dot_scores",
        "scaled by sqrt(d)",
        {"return K @ q": "return K @ q / np.sqrt(q.shape[0]).astype(q.dtype)"},
        message="the scores divided by sqrt(d): dot_scores is unscaled (soft_select",
    ),
    Mutation(
        "dot_scores",
        "dtype hard-coded to float32",
        {"return K @ q": "return (K @ q).astype(np.float32)"},
        message="dot_scores(q, K) for float64 q and K has dtype float32",
    ),
    Mutation(
        "dot_scores",
        "squeezed: a scalar, not shape (1,), when there is one key",
        {"return K @ q": "return np.squeeze(K @ q)"},
        hidden=True,
    ),
    Mutation(
        "dot_scores",
        "sum over the keys axis instead of the features",
        {"return K @ q": "return (K * q).sum(axis=0)"},
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
    Mutation(
        "additive_scores",
        "the tanh is missing",
        {"np.tanh(W_q @ q + K @ W_k.T)": "W_q @ q + K @ W_k.T"},
        message="the tanh is missing",
    ),
    Mutation(
        "additive_scores",
        "W_q applied to the keys, W_k to the query",
        {"W_q @ q + K @ W_k.T": "W_k @ q + K @ W_q.T"},
        message="W_q is applied to the keys and W_k to the query (swapped)",
    ),
    Mutation(
        "additive_scores",
        "hidden units summed instead of dotted with w",
        {"return hidden @ w": "return hidden.sum(axis=1)"},
        message="the hidden units are summed instead of combined with the vector w",
    ),
    Mutation(
        "additive_scores",
        "tanh after the dot product with w",
        {
            "np.tanh(W_q @ q + K @ W_k.T)": "W_q @ q + K @ W_k.T",
            "hidden @ w": "np.tanh(hidden @ w)",
        },
        message="tanh is applied after the dot product with w, not before",
    ),
    Mutation(
        "additive_scores",
        "K @ W_k instead of K @ W_k.T",
        {"K @ W_k.T": "K @ W_k"},
        message="the keys are multiplied by W_k transposed (W_k^T k_j instead of W_k",
    ),
    Mutation(
        "additive_scores",
        "W_k @ K like W_q @ q: the keys are rows, the shapes do not fit",
        {"W_q @ q + K @ W_k.T": "W_q @ q + W_k @ K"},
        message="W_q and W_k have shape (h, d): they turn a d-vector into an h-vector",
    ),
    Mutation(
        "additive_scores",
        "tanh written with exponentials: overflows for large inputs",
        {
            "np.tanh(W_q @ q + K @ W_k.T)": (
                "(np.exp(2 * (W_q @ q + K @ W_k.T)) - 1) / (np.exp(2 * (W_q @ q + K @ W_k.T)) + 1)"
            )
        },
        message="use np.tanh rather than a formula with exponentials",
        hidden=True,
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
    Mutation("softmax", "unstable: no max subtracted", {"np.exp(shifted)": "np.exp(x)"}),
    Mutation("softmax", "default axis 0", {"axis: int = -1": "axis: int = 0"}),
    Mutation(
        "softmax",
        "no exponential: x divided by its sum",
        {"exps = np.exp(shifted)": "exps = x"},
        message="x / x.sum(): the exponential is missing",
    ),
    Mutation(
        "softmax",
        "max over the whole array: rows far apart underflow",
        {"x.max(axis=axis, keepdims=True)": "x.max()"},
        message="the maximum subtracted is not each row's own",
    ),
    Mutation(
        "softmax",
        "subtracts the max in place, modifying x",
        {
            "shifted = x - x.max(axis=axis, keepdims=True)": (
                "x -= x.max(axis=axis, keepdims=True)\n    shifted = x"
            )
        },
    ),
    Mutation(
        "softmax",
        "sum without keepdims",
        {"exps.sum(axis=axis, keepdims=True)": "exps.sum(axis=axis)"},
        message="A max or sum along an axis drops that axis; keepdims=True keeps",
    ),
    Mutation(
        "softmax",
        "always normalises the last axis",
        {
            "x.max(axis=axis, keepdims=True)": "x.max(axis=-1, keepdims=True)",
            "exps.sum(axis=axis, keepdims=True)": "exps.sum(axis=-1, keepdims=True)",
        },
        message="softmax(X, axis=",
    ),
    Mutation(
        "softmax",
        "normalised over the whole array instead of along the axis",
        {"exps.sum(axis=axis, keepdims=True)": "exps.sum()"},
        message="sums to one over the whole array",
    ),
    Mutation(
        "softmax",
        "subtracts the minimum instead of the maximum",
        {"x.max(axis=axis, keepdims=True)": "x.min(axis=axis, keepdims=True)"},
        message="subtract each row's maximum",
        hidden=True,
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
    Mutation(
        "soft_select",
        "no 1/sqrt(d) scaling",
        {"(math.sqrt(d) * temperature)": "temperature"},
        message="the scores are not divided by sqrt(d)",
    ),
    Mutation(
        "soft_select",
        "temperature multiplies the scores",
        {"/ (math.sqrt(d) * temperature)": "/ math.sqrt(d) * temperature"},
        message="the scores are multiplied by the temperature instead of divided by it",
    ),
    Mutation(
        "soft_select",
        "weights not normalised",
        {"np.exp(scores - scores.max())": "np.exp(scores)", NORMALISE: ""},
        message="the weights are not normalised (exp of the scores without dividing by",
    ),
    Mutation(
        "soft_select",
        "weighted sum over the wrong axis",
        {"return weights @ V": "return (V.T * weights).sum(axis=0)"},
        message="soft_select returned one number per KEY (shape (3,)), expected one",
    ),
    Mutation(
        "soft_select",
        "scaled by sqrt(dv) instead of sqrt(d)",
        {"d = q.shape[-1]": "d = V.shape[-1]"},
        message="the scores are divided by sqrt(dv), the VALUE size, not sqrt(d), the",
    ),
    Mutation(
        "soft_select",
        "scaled by d instead of sqrt(d)",
        {"(math.sqrt(d) * temperature)": "(d * temperature)"},
        message="the scores are divided by d instead of sqrt(d)",
    ),
    Mutation(
        "soft_select",
        "unstable exp: NaN at tiny temperatures",
        {"np.exp(scores - scores.max())": "np.exp(scores)"},
        message="the maximum score is not subtracted before exp",
    ),
    Mutation(
        "soft_select",
        "np.sqrt(d) upcasts float32 to float64",
        {"math.sqrt(d)": "np.sqrt(d)"},
        message="Note: np.sqrt(d) is a float64 NumPy scalar that upcasts float32",
    ),
    Mutation(
        "soft_select",
        "squeezes the output: a scalar when dv = 1",
        {"return weights @ V": "return (weights @ V).squeeze()"},
        hidden=True,
    ),
    Case(
        "soft_select",
        "wrong",
        "temperature clamped to 0.01 to avoid overflow, naive exp",
        """
def soft_select(q, K, V, temperature=1.0):
    temperature = max(temperature, 0.01)  # tiny temperatures overflowed
    scores = K @ q / (math.sqrt(q.shape[0]) * temperature)
    weights = np.exp(scores)
    return (weights / weights.sum()) @ V
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
    # A mistake no visible test wrote a message for (issue 30): checked_call names it.
    Mutation(
        "soft_select",
        "V @ weights (a new wrong shape)",
        {"return weights @ V": "return V @ weights"},
        message="Likely cause: shapes that cannot be multiplied",
    ),
]

# ---------------------------------------------------------------------- concept questions
CASES += [
    Case(
        "q_temperature_to_zero",
        "wrong",
        "(c): the key closest in direction",
        'q_temperature_to_zero = "c"\n',
    ),
    Case(
        "q_temperature_to_zero",
        "wrong",
        "(b): the average, the other limit",
        'q_temperature_to_zero = "b"\n',
    ),
    Case(
        "q_temperature_to_zero",
        "right",
        "upper case with spaces",
        'q_temperature_to_zero = " A "\n',
    ),
    Case(
        "q_temperature_to_infinity",
        "wrong",
        "two letters",
        'q_temperature_to_infinity = "a, d"\n',
        message="answer with exactly one letter",
    ),
    Case(
        "q_temperature_to_infinity",
        "wrong",
        "(b): the softmax taken as unchanged by rescaling",
        'q_temperature_to_infinity = "b"\n',
    ),
    Case(
        "q_temperature_to_infinity",
        "wrong",
        "(d): the weights taken to tend to 0",
        'q_temperature_to_infinity = "d"\n',
    ),
    Case("q_temperature_to_infinity", "right", "upper case", 'q_temperature_to_infinity = "C"\n'),
    Case(
        "q_why_sqrt_d",
        "wrong",
        "answered with a number",
        "q_why_sqrt_d = 3\n",
        message="should be a string",
    ),
    Case(
        "q_why_sqrt_d",
        "wrong",
        "(b): the variance taken for the standard deviation",
        'q_why_sqrt_d = "b"\n',
    ),
    Case("q_why_sqrt_d", "wrong", "(d): the d products not added up", 'q_why_sqrt_d = "d"\n'),
    Case("q_why_sqrt_d", "right", "upper case with spaces", 'q_why_sqrt_d = " A "\n'),
]
