"""Wrong and right answers for __NOTEBOOK__, graded by real nbgrader autograde.

See tests/course/test_autograde.py: each answer replaces the solution cell of its function
(a ``Mutation`` edits the reference solution, a ``Case`` gives the whole source). Every graded
function needs at least three wrong answers (the mistakes students really make) and one right
answer written differently. Written by ``make new`` for the template's example exercise
``mean_vector``: replace them with the cases of this notebook's own functions.
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
]
