"""Wrong and right answers for 07_cnn_vs_attention.

Wrong answers are ``Mutation``s of the reference solution (the mistake as a small edit);
full sources (``Case``) only for right answers and for wrong answers that rewrite the
function (a loop where the reference is vectorised). Graded by real nbgrader autograde
(tests/course/test_autograde.py).
"""

from instructor.grading_cases import Case, Mutation

# fmt: off
CASES = [
    # ------------------------------------------------------------------ pixels_as_vectors
    Mutation("pixels_as_vectors", "reshape without moving the channel axis", {
        ".transpose(-2, -1)": ".reshape(-1, img.shape[0])",
    }, message="img.reshape(H * W, C): a reshape does not move the channel axis, it"),
    Mutation("pixels_as_vectors", "H and W swapped (column-major pixel order)", {
        "img.flatten(-2)": "img.transpose(-2, -1).flatten(-2)",
    }, message="the pixels are numbered column by column (H and W swapped): pixel (r"),
    Mutation("pixels_as_vectors", "returns (C, H*W), not transposed", {
        ".transpose(-2, -1)": "",
    }),
    Case("pixels_as_vectors", "wrong", "a loop into a float32 buffer (dtype not kept)", '''
def pixels_as_vectors(img):
    c, h, w = img.shape
    out = torch.zeros(h * w, c)
    for r in range(h):
        for col in range(w):
            out[r * w + col] = img[:, r, col]
    return out
''', message="for a float64 img has dtype torch.float32, expected torch.float64"),
    Mutation("pixels_as_vectors", "only square images: uses H for both sides", {
        "img.flatten(-2)": "img.reshape(img.shape[0], img.shape[1] * img.shape[1])",
    }, message="Images need not be square: there are H * W"),
    Mutation("pixels_as_vectors", "squeezed: a one-channel image loses its channel axis", {
        ".transpose(-2, -1)": ".transpose(-2, -1).squeeze()",
    }, message="it has lost its channel axis (a .squeeze()?)"),
    Case("pixels_as_vectors", "wrong", "channels hard-coded to 3 (RGB)", '''
def pixels_as_vectors(img):
    return img.permute(1, 2, 0).reshape(-1, 3)
''', message="the number of channels is hard-coded to 3 (RGB)"),
    Case("pixels_as_vectors", "wrong", "computed in float32, cast back to img's dtype", '''
def pixels_as_vectors(img):
    pixels = img.float().permute(1, 2, 0).reshape(-1, img.shape[0])
    return pixels.to(img.dtype)
''', hidden=True),
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
    Mutation("patchify", "plain reshape, no permute", {
        "patches.permute(1, 3, 0, 2, 4)": "patches",
    }, message="a plain reshape does not gather the P x P squares"),
    Mutation("patchify", "each patch flattened channel-last (P, P, C)", {
        "permute(1, 3, 0, 2, 4)": "permute(1, 3, 2, 4, 0)",
    }, message="each patch is flattened channel-last (P, P, C)"),
    Mutation("patchify", "patches in column-major order", {
        "permute(1, 3, 0, 2, 4)": "permute(3, 1, 0, 2, 4)",
    }, message="the patches are in column-major order"),
    Mutation("patchify", "pixels inside a patch read column by column", {
        "permute(1, 3, 0, 2, 4)": "permute(1, 3, 0, 4, 2)",
    }, message="the pixels inside each patch are read column by column (dy and dx swapped in the"),
    Mutation("patchify", "zero-pads to a multiple of P instead of raising", {
        "    for name, size in": (
            "    img = F.pad(img, (0, (-w) % p, 0, (-h) % p))\n"
            "    c, h, w = img.shape\n"
            "    for name, size in"
        ),
    }),
    Mutation("patchify", "checks only H, not W", {
        '[("height H", h), ("width W", w)]': '[("height H", h)]',
    }),
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
''', message="patchify(img, 2) for a float64 img has dtype torch.float32"),
    Case("patchify", "wrong", "only square images: H // P patches along both sides", '''
def patchify(img, patch_size):
    c, h, w = img.shape
    p = patch_size
    if h % p or w % p:
        raise ValueError(f"H = {h} and W = {w} must be multiples of patch_size = {p}")
    side = h // p  # the number of patches along a side
    patches = img.reshape(c, side, p, side, p).permute(1, 3, 0, 2, 4)
    return patches.reshape(-1, c * p * p)
''', message="Images need not be square: there are H / P rows and W / P columns"),
    Mutation("patchify", ".view after the permute (a new error: not contiguous)", {
        "return patches.reshape(-1, c * p * p)": "return patches.view(-1, c * p * p)",
    }, message="Likely cause: .view on a tensor not stored row after row"),
    Case("patchify", "wrong", "a convolution with a float32 identity kernel (a new dtype error)",
         '''
def patchify(img, patch_size):
    c, h, w = img.shape
    p = patch_size
    for name, size in [("height H", h), ("width W", w)]:
        if size % p != 0:
            raise ValueError(f"the image {name} = {size} is not a multiple of patch_size = {p}")
    # a convolution whose filters each pick one number of the patch (an identity kernel)
    weight = torch.eye(c * p * p).reshape(c * p * p, c, p, p)
    patches = F.conv2d(img[None], weight, stride=p)[0]  # (C*P*P, H/P, W/P)
    return patches.flatten(1).T
''', message="Likely cause: a dtype mismatch"),
    Case("patchify", "wrong", "F.unfold then .squeeze() (drops the axis of a single patch)", '''
def patchify(img, patch_size):
    _, h, w = img.shape
    if h % patch_size or w % patch_size:
        raise ValueError(f"H = {h} and W = {w} must be multiples of patch_size = {patch_size}")
    return F.unfold(img.unsqueeze(0), patch_size, stride=patch_size).squeeze().T
''', message="it has lost its patch axis (a .squeeze()?)"),
    Case("patchify", "wrong", "F.unfold in float32, cast back to img's dtype", '''
def patchify(img, patch_size):
    _, h, w = img.shape
    if h % patch_size or w % patch_size:
        raise ValueError(f"H = {h} and W = {w} must be multiples of patch_size = {patch_size}")
    patches = F.unfold(img[None].float(), patch_size, stride=patch_size)[0].T
    return patches.to(img.dtype)
''', hidden=True),
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
    Mutation("receptive_field_mask", "flat index window |i - j| <= k // 2 (wraps rows)", {
        "rows, cols = index // width, index % width": "rows, cols = index, index",
    }, message="a window |i - j| <= K // 2 on the flat pixel index"),
    Mutation("receptive_field_mask", "radius kernel_size instead of kernel_size // 2", {
        "radius = kernel_size // 2": "radius = kernel_size",
    }, message="the window radius is K instead of K // 2"),
    Mutation("receptive_field_mask", "Manhattan distance: a diamond, not a square", {
        "return near_rows & near_cols": (
            "return (rows[:, None] - rows[None, :]).abs() + (cols[:, None] - cols[None, :]).abs()"
            " <= radius"
        ),
    }, message="a diamond |dr| + |dc| <= K // 2 (Manhattan distance)"),
    Mutation("receptive_field_mask", "height and width swapped in the pixel coordinates", {
        "index // width, index % width": "index // height, index % height",
    }, message="height and width swapped: pixel i is at row i // W"),
    Mutation("receptive_field_mask", "always the 3 x 3 neighbourhood (kernel_size ignored)", {
        "radius = kernel_size // 2": "radius = 1",
    }, message="kernel_size 1: each pixel sees only itself"),
    Mutation("receptive_field_mask", "a kernel wider than the image refused", {
        "if kernel_size < 1 or kernel_size % 2 == 0:":
            "if kernel_size < 1 or kernel_size % 2 == 0 or kernel_size > min(height, width):",
    }, message="A kernel may be wider than the image: the window is cut at the image's"),
    Mutation("receptive_field_mask", "every pixel once the kernel is wider than the shorter side", {
        "    radius = kernel_size // 2\n":
            "    if kernel_size > min(height, width):\n"
            "        return torch.ones(height * width, height * width, dtype=torch.bool)\n"
            "    radius = kernel_size // 2\n",
    }, hidden=True),
    Mutation("receptive_field_mask", "only even sizes refused: a negative odd size passes", {
        "if kernel_size < 1 or kernel_size % 2 == 0:": "if kernel_size % 2 == 0:",
    }, message="should raise ValueError for a negative kernel_size = -3"),
    Mutation("receptive_field_mask", "no ValueError for an even kernel_size", {
        "if kernel_size < 1 or kernel_size % 2 == 0:": "if kernel_size < 1:",
    }),
    Mutation("receptive_field_mask", "a float 0/1 mask instead of bool", {
        "return near_rows & near_cols": "return (near_rows & near_cols).float()",
    }),
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
    # ------------------------------------------------------------------ concept questions
    Case("q_receptive_field_keys", "wrong", "(a): notebook 06's 1-D window on the flat index",
         'q_receptive_field_keys = "a"\n'),
    Case("q_receptive_field_keys", "wrong", "(b): the diamond, the diagonal neighbours missing",
         'q_receptive_field_keys = "b"\n'),
    Case("q_receptive_field_keys", "wrong", "(d): nine neighbours on the flat index",
         'q_receptive_field_keys = "d"\n'),
    Case("q_receptive_field_keys", "right", "upper case with spaces",
         'q_receptive_field_keys = " C "\n'),
    Case("q_attention_needs_data", "wrong", "two letters", 'q_attention_needs_data = "bc"\n',
         message="exactly one letter"),
    Case("q_attention_needs_data", "wrong", "(a): more heads, a bigger family still",
         'q_attention_needs_data = "a"\n'),
    Case("q_attention_needs_data", "wrong", "(c): more epochs over the same data",
         'q_attention_needs_data = "c"\n'),
    Case("q_attention_needs_data", "right", "upper case",
         'q_attention_needs_data = "D"\n'),
    Case("q_vit_patches", "wrong", "the area divided by P, not by P**2",
         "q_vit_patches = 384**2 // 16\n"),
    Case("q_vit_patches", "wrong", "the patches of one row only", "q_vit_patches = 24\n"),
    Case("q_vit_patches", "wrong", "each colour channel counted as its own patch",
         "q_vit_patches = 3 * 576\n"),
    Case("q_vit_patches", "wrong", "answered with a string", 'q_vit_patches = "576"\n',
         message="should be a number"),
    Case("q_vit_patches", "right", "as a float, from the image area",
         "q_vit_patches = 384 * 384 / 16**2\n"),
]
# fmt: on
