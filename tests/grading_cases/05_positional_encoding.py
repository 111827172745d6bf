"""Wrong and right answers for 05_positional_encoding.

Graded by real nbgrader autograde (tests/test_autograde.py).
"""

from instructor.grading_cases import Case

# fmt: off
CASES = [
    # ------------------------------------------------------------------ sinusoidal_encoding
    Case("sinusoidal_encoding", "wrong", "sine and cosine swapped", '''
def sinusoidal_encoding(num_positions, d_model):
    if d_model % 2:
        raise ValueError("odd d_model")
    p = torch.arange(num_positions, dtype=torch.float32)[:, None]
    angles = p / 10000 ** (torch.arange(0, d_model, 2) / d_model)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.cos(angles)
    pe[:, 1::2] = torch.sin(angles)
    return pe
'''),
    Case("sinusoidal_encoding", "wrong", "exponent i / d_model with i the pair index", '''
def sinusoidal_encoding(num_positions, d_model):
    if d_model % 2:
        raise ValueError("odd d_model")
    p = torch.arange(num_positions, dtype=torch.float32)[:, None]
    angles = p / 10000 ** (torch.arange(d_model // 2) / d_model)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe
'''),
    Case("sinusoidal_encoding", "wrong", "concatenated [sin | cos] halves, not interleaved", '''
def sinusoidal_encoding(num_positions, d_model):
    if d_model % 2:
        raise ValueError("odd d_model")
    p = torch.arange(num_positions, dtype=torch.float32)[:, None]
    angles = p / 10000 ** (torch.arange(0, d_model, 2) / d_model)
    return torch.cat((torch.sin(angles), torch.cos(angles)), dim=-1)
'''),
    Case("sinusoidal_encoding", "wrong", "positions start at 1", '''
def sinusoidal_encoding(num_positions, d_model):
    if d_model % 2:
        raise ValueError("odd d_model")
    p = torch.arange(1, num_positions + 1, dtype=torch.float32)[:, None]
    angles = p / 10000 ** (torch.arange(0, d_model, 2) / d_model)
    pe = torch.zeros(num_positions, d_model)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe
'''),
    Case("sinusoidal_encoding", "wrong", "no ValueError: an odd d_model is silently truncated", '''
def sinusoidal_encoding(num_positions, d_model):
    p = torch.arange(num_positions, dtype=torch.float32)[:, None]
    angles = p / 10000 ** (torch.arange(0, d_model, 2) / d_model)
    pe = torch.zeros(num_positions, d_model + 1)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe[:, :d_model]
'''),
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
    # ------------------------------------------------------------------ relative_positions
    Case("relative_positions", "wrong", "offsets i - j instead of j - i", '''
def relative_positions(n, max_distance):
    pos = torch.arange(n)
    return (pos[:, None] - pos[None, :]).clamp(-max_distance, max_distance) + max_distance
'''),
    Case("relative_positions", "wrong", "no clipping", '''
def relative_positions(n, max_distance):
    pos = torch.arange(n)
    return pos[None, :] - pos[:, None] + max_distance
'''),
    Case("relative_positions", "wrong", "no + max_distance offset (negative indices)", '''
def relative_positions(n, max_distance):
    pos = torch.arange(n)
    return (pos[None, :] - pos[:, None]).clamp(-max_distance, max_distance)
'''),
    Case("relative_positions", "wrong", "float dtype", '''
def relative_positions(n, max_distance):
    pos = torch.arange(n, dtype=torch.float32)
    return (pos[None, :] - pos[:, None]).clamp(-max_distance, max_distance) + max_distance
'''),
    Case("relative_positions", "wrong", "clipped to [0, 2K] after the offset, not before", '''
def relative_positions(n, max_distance):
    pos = torch.arange(n)
    return (pos[None, :] - pos[:, None] + max_distance).clamp(0, 2 * max_distance + 1)
'''),
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
    Case("apply_rope", "wrong", "rotates the wrong way (sine sign flipped)", '''
def apply_rope(x, positions=None):
    n, d = x.shape[-2:]
    if d % 2:
        raise ValueError("odd d")
    if positions is None:
        positions = torch.arange(n)
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    angles = positions.to(x.dtype)[:, None] * theta
    cos, sin = angles.cos(), angles.sin()
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos + b * sin, -a * sin + b * cos), dim=-1).flatten(-2)
'''),
    Case("apply_rope", "wrong", "half-split layout: pairs (i, i + d/2)", '''
def apply_rope(x, positions=None):
    n, d = x.shape[-2:]
    if d % 2:
        raise ValueError("odd d")
    if positions is None:
        positions = torch.arange(n)
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    angles = positions.to(x.dtype)[:, None] * theta
    cos, sin = angles.cos(), angles.sin()
    a, b = x[..., : d // 2], x[..., d // 2 :]
    return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1)
'''),
    Case("apply_rope", "wrong", "frequency exponent i / d with i the pair index", '''
def apply_rope(x, positions=None):
    n, d = x.shape[-2:]
    if d % 2:
        raise ValueError("odd d")
    if positions is None:
        positions = torch.arange(n)
    theta = 10000.0 ** (-torch.arange(d // 2, dtype=x.dtype) / d)
    angles = positions.to(x.dtype)[:, None] * theta
    cos, sin = angles.cos(), angles.sin()
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
'''),
    Case("apply_rope", "wrong", "default positions start at 1", '''
def apply_rope(x, positions=None):
    n, d = x.shape[-2:]
    if d % 2:
        raise ValueError("odd d")
    if positions is None:
        positions = torch.arange(1, n + 1)
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    angles = positions.to(x.dtype)[:, None] * theta
    cos, sin = angles.cos(), angles.sin()
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
'''),
    Case("apply_rope", "wrong", "hard-codes float32 (output buffer torch.zeros(x.shape))", '''
def apply_rope(x, positions=None):
    n, d = x.shape[-2:]
    if d % 2:
        raise ValueError("odd d")
    if positions is None:
        positions = torch.arange(n)
    theta = 10000.0 ** (-torch.arange(0, d, 2) / d)
    angles = positions[:, None] * theta
    cos, sin = angles.cos(), angles.sin()
    out = torch.zeros(x.shape)
    out[..., 0::2] = x[..., 0::2] * cos - x[..., 1::2] * sin
    out[..., 1::2] = x[..., 0::2] * sin + x[..., 1::2] * cos
    return out
'''),
    Case("apply_rope", "wrong", "rotates x in place", '''
def apply_rope(x, positions=None):
    n, d = x.shape[-2:]
    if d % 2:
        raise ValueError("odd d")
    if positions is None:
        positions = torch.arange(n)
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    angles = positions.to(x.dtype)[:, None] * theta
    cos, sin = angles.cos(), angles.sin()
    a, b = x[..., 0::2].clone(), x[..., 1::2].clone()
    x[..., 0::2] = a * cos - b * sin
    x[..., 1::2] = a * sin + b * cos
    return x
'''),
    Case("apply_rope", "wrong", "ignores the positions argument", '''
def apply_rope(x, positions=None):
    n, d = x.shape[-2:]
    if d % 2:
        raise ValueError("odd d")
    positions = torch.arange(n)
    theta = 10000.0 ** (-torch.arange(0, d, 2, dtype=x.dtype) / d)
    angles = positions.to(x.dtype)[:, None] * theta
    cos, sin = angles.cos(), angles.sin()
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)
'''),
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
]
# fmt: on
