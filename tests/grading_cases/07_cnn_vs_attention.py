"""Wrong and right answers for 07_cnn_vs_attention.

Graded by real nbgrader autograde (tests/test_autograde.py).
"""

from instructor.grading_cases import Case

# fmt: off
CASES = [
    # ------------------------------------------------------------------ pixels_as_vectors
    Case("pixels_as_vectors", "wrong", "reshape without moving the channel axis", '''
def pixels_as_vectors(img):
    c, h, w = img.shape
    return img.reshape(h * w, c)
'''),
    Case("pixels_as_vectors", "wrong", "H and W swapped (column-major pixel order)", '''
def pixels_as_vectors(img):
    c, h, w = img.shape
    return img.permute(2, 1, 0).reshape(h * w, c)
'''),
    Case("pixels_as_vectors", "wrong", "returns (C, H*W), not transposed", '''
def pixels_as_vectors(img):
    return img.reshape(img.shape[0], -1)
'''),
    Case("pixels_as_vectors", "wrong", "a loop into a float32 buffer (dtype not kept)", '''
def pixels_as_vectors(img):
    c, h, w = img.shape
    out = torch.zeros(h * w, c)
    for r in range(h):
        for col in range(w):
            out[r * w + col] = img[:, r, col]
    return out
'''),
    Case("pixels_as_vectors", "wrong", "only square images: uses H for both sides", '''
def pixels_as_vectors(img):
    c, h, w = img.shape
    return torch.stack([img[:, i // h, i % h] for i in range(h * w)])
'''),
    Case("pixels_as_vectors", "right", "permute then reshape", '''
def pixels_as_vectors(img):
    return img.permute(1, 2, 0).reshape(-1, img.shape[0])
'''),
    Case("pixels_as_vectors", "right", "a loop over the pixels with torch.stack", '''
def pixels_as_vectors(img):
    _, h, w = img.shape
    return torch.stack([img[:, r, c] for r in range(h) for c in range(w)])
'''),
    # ------------------------------------------------------------------ patchify
    Case("patchify", "wrong", "plain reshape, no permute", '''
def patchify(img, patch_size):
    c, h, w = img.shape
    if h % patch_size or w % patch_size:
        raise ValueError(f"H = {h} or W = {w} is not a multiple of {patch_size}")
    return img.reshape(-1, c * patch_size * patch_size)
'''),
    Case("patchify", "wrong", "each patch flattened channel-last (P, P, C)", '''
def patchify(img, patch_size):
    c, h, w = img.shape
    p = patch_size
    if h % p or w % p:
        raise ValueError(f"H = {h} or W = {w} is not a multiple of {p}")
    x = img.permute(1, 2, 0).reshape(h // p, p, w // p, p, c)
    return x.permute(0, 2, 1, 3, 4).reshape(-1, p * p * c)
'''),
    Case("patchify", "wrong", "patches in column-major order", '''
def patchify(img, patch_size):
    c, h, w = img.shape
    p = patch_size
    if h % p or w % p:
        raise ValueError(f"H = {h} or W = {w} is not a multiple of {p}")
    x = img.reshape(c, h // p, p, w // p, p)
    return x.permute(3, 1, 0, 2, 4).reshape(-1, c * p * p)
'''),
    Case("patchify", "wrong", "pixels inside a patch read column by column", '''
def patchify(img, patch_size):
    c, h, w = img.shape
    p = patch_size
    if h % p or w % p:
        raise ValueError(f"H = {h} or W = {w} is not a multiple of {p}")
    x = img.reshape(c, h // p, p, w // p, p)
    return x.permute(1, 3, 0, 4, 2).reshape(-1, c * p * p)
'''),
    Case("patchify", "wrong", "zero-pads to a multiple of P instead of raising", '''
def patchify(img, patch_size):
    c, h, w = img.shape
    p = patch_size
    img = F.pad(img, (0, (-w) % p, 0, (-h) % p))
    return F.unfold(img[None], p, stride=p)[0].T
'''),
    Case("patchify", "wrong", "checks only H, not W", '''
def patchify(img, patch_size):
    c, h, w = img.shape
    p = patch_size
    if h % p:
        raise ValueError(f"H = {h} is not a multiple of {p}")
    return F.unfold(img[None], p, stride=p)[0].T
'''),
    Case("patchify", "wrong", "a loop into a float32 buffer (dtype not kept)", '''
def patchify(img, patch_size):
    c, h, w = img.shape
    p = patch_size
    if h % p or w % p:
        raise ValueError(f"H = {h} or W = {w} is not a multiple of {p}")
    out = torch.zeros((h // p) * (w // p), c * p * p)
    for i in range(h // p):
        for j in range(w // p):
            out[i * (w // p) + j] = img[:, i * p:(i + 1) * p, j * p:(j + 1) * p].reshape(-1)
    return out
'''),
    Case("patchify", "right", "F.unfold with explicit errors", '''
def patchify(img, patch_size):
    _, h, w = img.shape
    if h % patch_size != 0:
        raise ValueError(f"height {h} is not divisible by the patch size {patch_size}")
    if w % patch_size != 0:
        raise ValueError(f"width {w} is not divisible by the patch size {patch_size}")
    return F.unfold(img[None], kernel_size=patch_size, stride=patch_size)[0].T
'''),
    Case("patchify", "right", "a loop over the patches with slicing", '''
def patchify(img, patch_size):
    _, h, w = img.shape
    p = patch_size
    for name, size in (("H", h), ("W", w)):
        if size % p:
            raise ValueError(f"{name} = {size} must be a multiple of patch_size = {p}")
    patches = [
        img[:, i:i + p, j:j + p].flatten() for i in range(0, h, p) for j in range(0, w, p)
    ]
    return torch.stack(patches)
'''),
    Case("patchify", "right", "Tensor.unfold twice", '''
def patchify(img, patch_size):
    c, h, w = img.shape
    p = patch_size
    if h % p or w % p:
        raise ValueError(f"image size H = {h}, W = {w} is not a multiple of P = {p}")
    x = img.unfold(1, p, p).unfold(2, p, p)  # (C, H/P, W/P, P, P)
    return x.permute(1, 2, 0, 3, 4).reshape(-1, c * p * p)
'''),
    # ------------------------------------------------------------------ receptive_field_mask
    Case("receptive_field_mask", "wrong", "flat index window |i - j| <= k // 2 (wraps rows)", '''
def receptive_field_mask(height, width, kernel_size):
    if kernel_size % 2 == 0:
        raise ValueError("kernel_size must be odd")
    i = torch.arange(height * width)
    return (i[:, None] - i[None, :]).abs() <= kernel_size // 2
'''),
    Case("receptive_field_mask", "wrong", "radius kernel_size instead of kernel_size // 2", '''
def receptive_field_mask(height, width, kernel_size):
    if kernel_size % 2 == 0:
        raise ValueError("kernel_size must be odd")
    i = torch.arange(height * width)
    r, c = i // width, i % width
    near_r = (r[:, None] - r[None, :]).abs() <= kernel_size
    return near_r & ((c[:, None] - c[None, :]).abs() <= kernel_size)
'''),
    Case("receptive_field_mask", "wrong", "Manhattan distance: a diamond, not a square", '''
def receptive_field_mask(height, width, kernel_size):
    if kernel_size % 2 == 0:
        raise ValueError("kernel_size must be odd")
    i = torch.arange(height * width)
    r, c = i // width, i % width
    dist = (r[:, None] - r[None, :]).abs() + (c[:, None] - c[None, :]).abs()
    return dist <= kernel_size // 2
'''),
    Case("receptive_field_mask", "wrong", "height and width swapped in the pixel coordinates", '''
def receptive_field_mask(height, width, kernel_size):
    if kernel_size % 2 == 0:
        raise ValueError("kernel_size must be odd")
    i = torch.arange(height * width)
    r, c = i // height, i % height
    near_r = (r[:, None] - r[None, :]).abs() <= kernel_size // 2
    return near_r & ((c[:, None] - c[None, :]).abs() <= kernel_size // 2)
'''),
    Case("receptive_field_mask", "wrong", "no ValueError for an even kernel_size", '''
def receptive_field_mask(height, width, kernel_size):
    i = torch.arange(height * width)
    r, c = i // width, i % width
    near_r = (r[:, None] - r[None, :]).abs() <= kernel_size // 2
    return near_r & ((c[:, None] - c[None, :]).abs() <= kernel_size // 2)
'''),
    Case("receptive_field_mask", "wrong", "a float 0/1 mask instead of bool", '''
def receptive_field_mask(height, width, kernel_size):
    if kernel_size % 2 == 0:
        raise ValueError("kernel_size must be odd")
    i = torch.arange(height * width)
    r, c = i // width, i % width
    near_r = (r[:, None] - r[None, :]).abs() <= kernel_size // 2
    return (near_r & ((c[:, None] - c[None, :]).abs() <= kernel_size // 2)).float()
'''),
    Case("receptive_field_mask", "right", "Kronecker product of two 1-D band masks", '''
def receptive_field_mask(height, width, kernel_size):
    if kernel_size < 1 or kernel_size % 2 != 1:
        raise ValueError(f"kernel_size must be a positive odd number, got {kernel_size}")
    k = kernel_size // 2

    def band(n):
        i = torch.arange(n)
        return ((i[:, None] - i[None, :]).abs() <= k).long()

    return torch.kron(band(height), band(width)).bool()
'''),
    Case("receptive_field_mask", "right", "a double loop over the pixels", '''
def receptive_field_mask(height, width, kernel_size):
    if kernel_size % 2 == 0 or kernel_size <= 0:
        raise ValueError(f"even or non-positive kernel_size {kernel_size}")
    n = height * width
    mask = torch.zeros(n, n, dtype=torch.bool)
    for i in range(n):
        for j in range(n):
            dr = abs(i // width - j // width)
            dc = abs(i % width - j % width)
            mask[i, j] = max(dr, dc) <= kernel_size // 2
    return mask
'''),
]
# fmt: on
