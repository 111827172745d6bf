"""Wrong and right answers for __NOTEBOOK__, graded by real nbgrader autograde.

See tests/course/test_autograde.py: each answer replaces the solution cell of its function
or question (a ``Mutation`` edits the reference solution, a ``Case`` gives the whole source).
Every graded function needs at least three wrong answers (the mistakes students really make)
and one right answer written differently; every concept question a plausible wrong option, a
right answer written differently, and the notebook at least one answer of the wrong form with
its message. Written answers have no cases (graded by hand). Written by ``make new`` for the
template's examples: replace them with the cases of this notebook's own functions and questions.
"""

from instructor.grading_cases import Case, Mutation

CASES = [
    # ---------------------------------------------------------------- mean_vector
    Mutation(
        "mean_vector",
        "averaged over the entries of each vector (dim=-1)",
        {"X.mean(dim=-2)": "X.mean(dim=-1)"},
    ),
    Mutation(
        "mean_vector",
        "summed instead of averaged",
        {"X.mean(dim=-2)": "X.sum(dim=-2)"},
    ),
    Mutation(
        "mean_vector",
        "first axis, right only without batch dimensions",
        {"X.mean(dim=-2)": "X.mean(dim=0)"},
    ),
    Case(
        "mean_vector",
        "right",
        "weights 1/n in an einsum",
        """
def mean_vector(X):
    n = X.shape[-2]
    if n == 0:
        raise ValueError("empty set")
    weights = torch.full((n,), 1.0 / n, dtype=X.dtype)
    return torch.einsum("...nd,n->...d", X, weights)
""",
    ),
    # ---------------------------------------------------------------- center
    Mutation("center", "added the mean", {"X - mean_vector": "X + mean_vector"}),
    Mutation(
        "center", "returned the mean itself", {"X - mean_vector(X)": "0 * X + mean_vector(X)"}
    ),
    Mutation(
        "center",
        "subtracted the mean of each vector's entries",
        {"mean_vector(X).unsqueeze(-2)": "X.mean(dim=-1, keepdim=True)"},
    ),
    Case(
        "center",
        "right",
        "keepdim mean",
        "def center(X):\n    return X - X.mean(dim=-2, keepdim=True)\n",
    ),
    # ---------------------------------------------------------------- squared_norms
    Mutation("squared_norms", "the lengths, not squared", {"(X**2).sum(dim=-1)": "X.norm(dim=-1)"}),
    Mutation("squared_norms", "summed over the vectors", {"sum(dim=-1)": "sum(dim=-2)"}),
    Mutation(
        "squared_norms",
        "entries summed, then squared",
        {"(X**2).sum(dim=-1)": "X.sum(dim=-1) ** 2"},
    ),
    Case(
        "squared_norms",
        "right",
        "an einsum",
        'def squared_norms(X):\n    return torch.einsum("...d,...d->...", X, X)\n',
    ),
    # ---------------------------------------------------------------- concept questions
    Case(
        "q_example_mean_order",
        "wrong",
        "(a): the mean taken to follow the rows",
        'q_example_mean_order = "a"\n',
    ),
    Case(
        "q_example_mean_order",
        "wrong",
        "answered with the option's number",
        "q_example_mean_order = 2\n",
        message="should be a string",
    ),
    Case(
        "q_example_mean_order", "right", "upper case with spaces", 'q_example_mean_order = " B "\n'
    ),
    Case(
        "q_example_mean_size",
        "wrong",
        "one number per vector of a set",
        "q_example_mean_size = 640\n",
    ),
    Case(
        "q_example_mean_size",
        "wrong",
        "answered as text",
        'q_example_mean_size = "2048"\n',
        message="should be a number",
    ),
    Case("q_example_mean_size", "right", "the product written out", "q_example_mean_size = 2048\n"),
]
