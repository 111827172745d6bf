"""Wrong and right answers for 05_positional_encoding, graded by real nbgrader autograde
(tests/course/test_autograde.py).

A wrong answer is a ``Mutation``: the reference solution with a small edit that makes the
mistake its name gives. Full sources (``Case``) are kept only for right answers.
"""

from instructor.grading_cases import Case, Mutation

# fmt: off
CASES = [
    # ------------------------------------------------------------------ sinusoidal_encoding
    Mutation("sinusoidal_encoding", "sine and cosine swapped", {
        "torch.stack((angles.sin(), angles.cos()), dim=-1)":
            "torch.stack((angles.cos(), angles.sin()), dim=-1)",
    }, message="sine and cosine swapped, stacked in the wrong order: PE[p, 2i] is the sine"),
    Mutation("sinusoidal_encoding", "exponent i / d_model with i the pair index", {
        "torch.arange(0, d_model, 2, dtype=torch.float64)":
            "torch.arange(d_model // 2, dtype=torch.float64)",
    }, message="the frequency uses i / d_model instead of 2i / d_model (i = the pair"),
    Mutation("sinusoidal_encoding", "exponent 2 * (2i) / d_model: the column index doubled", {
        "10000 ** (two_i / d_model)": "10000 ** (2 * two_i / d_model)",
    }, message="the frequency uses 2j / d_model with j = the column index 2i"),
    Mutation("sinusoidal_encoding", "concatenated [sin | cos] halves, not interleaved", {
        "torch.stack((angles.sin(), angles.cos()), dim=-1)":
            "torch.cat((angles.sin(), angles.cos()), dim=-1)",
        "return pe.flatten(-2).to(": "return pe.to(",
    }, message="the sines and the cosines are concatenated [sin | cos] instead of"),
    Mutation("sinusoidal_encoding", "positions start at 1", {
        "torch.arange(num_positions, dtype=torch.float64)":
            "torch.arange(1, num_positions + 1, dtype=torch.float64)",
    }, message="the positions start at 1: the first row is position p = 0"),
    Mutation("sinusoidal_encoding", "no ValueError: an odd d_model is silently truncated", {
        "    if d_model % 2 != 0:\n"
        '        raise ValueError(f"d_model must be even (sine/cosine pairs), got {d_model}")\n':
            "",
        "return pe.flatten(-2).to(": "return pe.flatten(-2)[:, :d_model].to(",
    }),
    Mutation("sinusoidal_encoding", "returns float64, the dtype of its angles", {
        "return pe.flatten(-2).to(torch.get_default_dtype())": "return pe.flatten(-2)",
    }, message="the docstring promises PyTorch's default dtype"),
    Mutation("sinusoidal_encoding", "exponent 2i / num_positions: the two sizes mixed up", {
        "10000 ** (two_i / d_model)": "10000 ** (two_i / num_positions)",
    }, hidden=True),
    Case("sinusoidal_encoding", "right", "a double loop with math.sin and math.cos", '''
def sinusoidal_encoding(num_positions, d_model):
    if d_model % 2 == 1:
        raise ValueError(f"d_model must be even, got {d_model}")
    pe = torch.zeros(num_positions, d_model)
    for p in range(num_positions):
        for i in range(d_model // 2):
            angle = p / 10000 ** (2 * i / d_model)
            pe[p, 2 * i] = math.sin(angle)
            pe[p, 2 * i + 1] = math.cos(angle)
    return pe
'''),
    Case("sinusoidal_encoding", "right", "exp/log frequencies in float32", '''
def sinusoidal_encoding(num_positions, d_model):
    if d_model % 2 != 0:
        raise ValueError("d_model must be even")
    position = torch.arange(num_positions).unsqueeze(1).float()
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * -(math.log(10000.0) / d_model))
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe
'''),
    # A mistake no visible test wrote a message for (issue 30): checked_call names it.
    Mutation("sinusoidal_encoding", "float64 angles put in a float32 buffer (a new wrong dtype)", {
        "pe = torch.stack((angles.sin(), angles.cos()), dim=-1)  # (P, d_model / 2, 2)\n"
        "    return pe.flatten(-2).to(torch.get_default_dtype())":
            "pe = torch.zeros(num_positions, d_model)\n"
            "    pe[:, torch.arange(0, d_model, 2)] = angles.sin()\n"
            "    pe[:, torch.arange(1, d_model, 2)] = angles.cos()\n"
            "    return pe",
    }, message="Likely cause: a dtype mismatch: a tensor made without the input's dtype"),
    # ------------------------------------------------------------------ relative_positions
    Mutation("relative_positions", "offsets i - j instead of j - i", {
        "positions[None, :] - positions[:, None]": "positions[:, None] - positions[None, :]",
    }, message="the offsets are i - j instead of j - i (the table is transposed"),
    Mutation("relative_positions", "no clipping", {
        "offsets.clamp(-max_distance, max_distance) + max_distance": "offsets + max_distance",
    }, message="the offsets are not clipped to [-max_distance, max_distance]"),
    Mutation("relative_positions", "no + max_distance offset (negative indices)", {
        "offsets.clamp(-max_distance, max_distance) + max_distance":
            "offsets.clamp(-max_distance, max_distance)",
    }, message="max_distance is not added: indices must start at 0"),
    Mutation("relative_positions", "float dtype", {
        "torch.arange(n)": "torch.arange(n, dtype=torch.float32)",
    }, message="expected torch.int64 (long): the result indexes a table"),
    Mutation("relative_positions", "clipped to [0, 2r] after the offset, not before", {
        "offsets.clamp(-max_distance, max_distance) + max_distance":
            "(offsets + max_distance).clamp(0, 2 * max_distance + 1)",
    }),
    Mutation("relative_positions", "max_distance capped at n - 1 (the table shrunk)", {
        "positions = torch.arange(n)\n":
            "positions = torch.arange(n)\n"
            "    max_distance = min(max_distance, n - 1)  # no offset is larger than n - 1\n",
    }, hidden=True),
    Case("relative_positions", "right", "a double loop with min and max", '''
def relative_positions(n, max_distance):
    table = torch.empty(n, n, dtype=torch.long)
    for i in range(n):
        for j in range(n):
            table[i, j] = max(-max_distance, min(j - i, max_distance)) + max_distance
    return table
'''),
    Case("relative_positions", "right", "torch.clip on a subtraction of meshgrids", '''
def relative_positions(n, max_distance):
    rows, cols = torch.meshgrid(torch.arange(n), torch.arange(n), indexing="ij")
    return torch.clip(cols - rows, min=-max_distance, max=max_distance) + max_distance
'''),
    # ------------------------------------------------------------------ apply_rope
    Mutation("apply_rope", "rotates the wrong way (sine sign flipped)", {
        "(x_even * cos - x_odd * sin, x_even * sin + x_odd * cos)":
            "(x_even * cos + x_odd * sin, -x_even * sin + x_odd * cos)",
    }, message="the rotation goes the wrong way (the sign of the sine is flipped"),
    Mutation("apply_rope", "half-split layout: pairs (i, i + d/2)", {
        "x[..., 0::2], x[..., 1::2]": "x[..., : d // 2], x[..., d // 2 :]",
        "rotated = torch.stack(": "rotated = torch.cat(",
        "return rotated.flatten(-2)": "return rotated",
    }, message="the pairs are (i, i + d/2), the 'half-split' layout, not (2i, 2i+1"),
    Mutation("apply_rope", "frequency exponent i / d with i the pair index", {
        "torch.arange(0, d, 2, dtype=x.dtype, device=x.device)":
            "torch.arange(d // 2, dtype=x.dtype, device=x.device)",
    }, message="the frequency uses i / d instead of 2i / d (i = the pair index"),
    Mutation("apply_rope", "default positions start at 1", {
        "torch.arange(n, device=x.device)": "torch.arange(1, n + 1, device=x.device)",
    }, message="the positions start at 1: the first row is position 0 and is not"),
    Mutation("apply_rope", "hard-codes float32 (output buffer torch.zeros(x.shape))", {
        "return rotated.flatten(-2)":
            "out = torch.zeros(x.shape)\n"
            "    out[...] = rotated.flatten(-2)\n"
            "    return out",
    }, message="apply_rope(x) for a float64 x has dtype torch.float32"),
    Mutation("apply_rope", "rotates x in place", {
        "return rotated.flatten(-2)": "return x.copy_(rotated.flatten(-2))",
    }),
    Mutation("apply_rope", "ignores the positions argument", {
        "if positions is None:\n        positions = ": "positions = ",
    }, message="the positions argument is ignored (rows rotated by 0, 1, 2"),
    Mutation("apply_rope", "angles in float32 for a float64 x (.float())", {
        "torch.arange(0, d, 2, dtype=x.dtype, device=x.device)":
            "torch.arange(0, d, 2, device=x.device).float()",
        "positions.to(x.dtype)": "positions.float()",
    }),
    Mutation("apply_rope", "frequencies in float32 for a float64 x (arange without dtype)", {
        "torch.arange(0, d, 2, dtype=x.dtype, device=x.device)":
            "torch.arange(0, d, 2, device=x.device)",
    }, message="is right only to about float32 precision"),
    # Named since the visible tests call apply_rope on an x without a batch dimension.
    Mutation("apply_rope", "n = x.shape[1], the Keras (batch, n, d) habit", {
        "n, d = x.shape[-2], x.shape[-1]": "n, d = x.shape[1], x.shape[-1]",
    }, message="no batch dimension has shape"),
    # Right for no batch dimension and for one (all the visible tests try); two batch
    # dimensions, which the docstring allows, are the hidden tests'.
    Mutation("apply_rope", "at most one batch dimension: b, n, d = x.shape", {
        "    n, d = x.shape[-2], x.shape[-1]\n":
            "    if x.dim() == 2:\n"
            "        return apply_rope(x[None], positions)[0]\n"
            "    b, n, d = x.shape  # (batch, n, d), as in Keras\n",
    }, hidden=True),
    Case("apply_rope", "right", "complex numbers with torch.view_as_complex and torch.polar", '''
def apply_rope(x, positions=None):
    n, d = x.shape[-2], x.shape[-1]
    if d % 2 != 0:
        raise ValueError(f"d must be even, got {d}")
    if positions is None:
        positions = torch.arange(n)
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    angles = positions.to(x.dtype)[:, None] * theta  # (n, d/2)
    z = torch.view_as_complex(x.reshape(*x.shape[:-1], d // 2, 2).contiguous())
    rotation = torch.polar(torch.ones_like(angles), angles)
    return torch.view_as_real(z * rotation).flatten(-2)
'''),
    Case("apply_rope", "right", "a loop over the pairs with 2x2 rotation matrices", '''
def apply_rope(x, positions=None):
    n, d = x.shape[-2], x.shape[-1]
    if d % 2 == 1:
        raise ValueError("the last dimension must be even")
    if positions is None:
        positions = torch.arange(n)
    p = positions.to(x.dtype)
    columns = []
    for i in range(d // 2):
        angle = p * 10000.0 ** (-2 * i / d)  # (n,)
        c, s = torch.cos(angle), torch.sin(angle)
        R = torch.stack((torch.stack((c, -s), -1), torch.stack((s, c), -1)), -2)  # (n, 2, 2)
        pair = x[..., 2 * i : 2 * i + 2]  # (..., n, 2)
        columns.append(torch.einsum("nab,...nb->...na", R, pair))
    return torch.cat(columns, dim=-1)
'''),
    # A mistake no visible test wrote a message for (issue 30): checked_call names it.
    Mutation("apply_rope", "positions not made a column (a new wrong shape)", {
        "angles = positions.to(x.dtype)[:, None] * theta": "angles = positions.to(x.dtype) * theta",
    }, message="Likely cause: shapes that do not broadcast"),
    # ------------------------------------------------------------------ concept questions
    Case("q_swap_two_words", "wrong", "(a): the outputs taken to stay in place",
         'q_swap_two_words = "a"\n'),
    Case("q_swap_two_words", "wrong", "(d): every output taken to change",
         'q_swap_two_words = "d"\n'),
    Case("q_swap_two_words", "right", "upper case",
         'q_swap_two_words = "B"\n'),
    Case("q_rope_offset", "wrong", "answered with a number", "q_rope_offset = 3\n",
         message="should be a string"),
    Case("q_rope_offset", "wrong", "(a): the distance |p' - p| taken for the offset",
         'q_rope_offset = "a"\n'),
    Case("q_rope_offset", "wrong", "(b): the ratio of the positions kept",
         'q_rope_offset = "b"\n'),
    Case("q_rope_offset", "wrong", "(d): rotations taken to change nothing",
         'q_rope_offset = "d"\n'),
    Case("q_rope_offset", "right", "upper case with spaces",
         'q_rope_offset = " C "\n'),
    Case("q_sinusoid_period", "wrong", "1 / omega: the 2 pi forgotten",
         "q_sinusoid_period = 100\n"),
    Case("q_sinusoid_period", "wrong", "exponent i / d_model with the pair index",
         "q_sinusoid_period = 62.83\n"),
    Case("q_sinusoid_period", "wrong", "the period of the first pair, i = 0",
         "q_sinusoid_period = 6.283\n"),
    Case("q_sinusoid_period", "wrong", "the number in quotes", 'q_sinusoid_period = "628"\n',
         message="should be a number"),
    Case("q_sinusoid_period", "right", "rounded to one decimal", "q_sinusoid_period = 628.3\n"),
    Case("q_sinusoid_period", "right", "from the frequency",
         "q_sinusoid_period = 2 * math.pi / 10000 ** (-2 / 4)\n"),
]
# fmt: on
