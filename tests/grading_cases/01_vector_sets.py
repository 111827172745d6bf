"""Wrong and right answers for 01_vector_sets, graded by real nbgrader autograde.

See tests/course/test_autograde.py. A wrong answer is a ``Mutation``: a small change to the
reference solution in solutions/01_vector_sets (``instructor.grading_cases``), which fails
loudly when the reference no longer contains the text it changes. Full sources (``Case``)
remain only for right answers, each replacing the solution cell of its function.
"""

from instructor.grading_cases import Case, Mutation

CHECK_TOKENS = """    for token in tokens:
        if token not in vocab:
            raise KeyError(f"token {token!r} is not in the vocabulary")
"""
"""one_hot's check for unknown tokens, as the reference solution writes it."""

CHECK_LENGTH = (
    "    if length < frame_length:\n"
    '        raise ValueError(f"the signal has {length} samples, fewer than one frame of '
    '{frame_length}")\n'
)
"""frame_signal's check for a signal shorter than one frame."""

FRAME_COUNT = "num_frames = 1 + (length - frame_length) // hop_length"

CASES = [
    # ---------------------------------------------------------------- one_hot
    Mutation("one_hot", "transposed, one column per token", {"return encoded": "return encoded.T"}),
    Mutation(
        "one_hot",
        "built (V, n) by columns, transposed only when the shape is wrong",
        {
            "encoded = torch.zeros(len(tokens), len(vocab), dtype=torch.float32)": (
                "encoded = torch.zeros(len(vocab), len(tokens), dtype=torch.float32)"
            ),
            "encoded[torch.arange(len(tokens)), columns] = 1.0": (
                "encoded[columns, torch.arange(len(tokens))] = 1.0\n"
                "    if encoded.shape != (len(tokens), len(vocab)):\n"
                "        encoded = encoded.T"
            ),
        },
        message="transposed: one column per token instead of one row",
    ),
    Mutation(
        "one_hot",
        "index off by one, 1-based columns",
        {"[vocab.index(token) for": "[(vocab.index(token) + 1) % len(vocab) for"},
        message="the 1 sits one column too far right (index off by one",
    ),
    Mutation(
        "one_hot",
        "integer dtype from F.one_hot",
        {"dtype=torch.float32": "dtype=torch.long"},
        message="expected torch.float32: one-hot vectors are multiplied with float",
    ),
    Mutation(
        "one_hot",
        "unknown tokens skipped silently",
        {CHECK_TOKENS: "    tokens = [token for token in tokens if token in vocab]\n"},
    ),
    Mutation(
        "one_hot",
        "unknown tokens become a zero row",
        {
            CHECK_TOKENS: "",
            "[vocab.index(token) for": "[vocab.index(token) if token in vocab else -1 for",
            "columns] = 1.0": "columns] = (columns >= 0).float()",
        },
    ),
    Mutation("one_hot", "ValueError from list.index instead of KeyError", {CHECK_TOKENS: ""}),
    Mutation(
        "one_hot",
        "columns from the sorted vocabulary, right only when vocab is sorted",
        {"[vocab.index(token) for": "[sorted(vocab).index(token) for"},
        hidden=True,
    ),
    Mutation(
        "one_hot",
        "empty token list breaks torch.stack",
        {"return encoded": "return torch.stack(list(encoded))"},
        message="torch.stack needs at least one tensor",
    ),
    Case(
        "one_hot",
        "right",
        "F.one_hot with a dict lookup",
        """
import torch.nn.functional as F


def one_hot(tokens, vocab):
    position = {}
    for j, word in enumerate(vocab):
        position.setdefault(word, j)
    try:
        indices = [position[token] for token in tokens]
    except KeyError as error:
        raise KeyError(f"{error.args[0]!r} is not in the vocabulary") from None
    return F.one_hot(torch.tensor(indices, dtype=torch.long), len(vocab)).to(torch.float32)
""",
    ),
    Case(
        "one_hot",
        "right",
        "rows of an identity matrix",
        """
def one_hot(tokens, vocab):
    unknown = [t for t in tokens if t not in vocab]
    if unknown:
        raise KeyError(unknown[0])
    indices = torch.tensor([vocab.index(t) for t in tokens], dtype=torch.long)
    return torch.eye(len(vocab))[indices]
""",
    ),
    # Mistakes no visible test wrote a message for (issue 30): checked_call names them.
    Mutation(
        "one_hot",
        "column indices made as float32 (a new wrong dtype)",
        {
            "columns = torch.tensor([vocab.index(token) for token in tokens], dtype=torch.long)": (
                "columns = torch.tensor([vocab.index(token) for token in tokens], "
                "dtype=torch.float32)"
            )
        },
        message="raised IndexError: tensors used as indices must be long",
    ),
    # ---------------------------------------------------------------- frame_signal
    Mutation(
        "frame_signal",
        "frame count len // hop, end padded with zeros",
        {
            FRAME_COUNT: "num_frames = length // hop_length",
            "return signal[index]": (
                "needed = (num_frames - 1) * hop_length + frame_length\n"
                "    padded = torch.cat([signal, signal.new_zeros(max(0, needed - length))])\n"
                "    return padded[index]"
            ),
        },
        message="2 = 4. It looks like len(signal) // hop_length frames",
    ),
    Mutation(
        "frame_signal",
        "one frame too few, missing the + 1",
        {FRAME_COUNT: "num_frames = max(1, (length - frame_length) // hop_length)"},
        message="2 = 4. It looks like one frame too few",
    ),
    Mutation(
        "frame_signal",
        "frame_length used as the hop",
        {
            "// hop_length": "// frame_length",
            "torch.arange(num_frames) * hop_length": "torch.arange(num_frames) * frame_length",
        },
        message="2 = 4. It looks like frames that do not overlap",
    ),
    Mutation(
        "frame_signal",
        "transposed, one column per frame",
        {"return signal[index]": "return signal[index].T"},
    ),
    Mutation(
        "frame_signal",
        "last partial frame kept, zero-padded (ceil count)",
        {
            FRAME_COUNT: "num_frames = 1 + -(-(length - frame_length) // hop_length)",
            "return signal[index]": (
                "needed = (num_frames - 1) * hop_length + frame_length\n"
                "    padded = torch.cat([signal, signal.new_zeros(needed - length)])\n"
                "    return padded[index]"
            ),
        },
        message="2 = 4. It looks like the end was padded to fit a last",
    ),
    Mutation(
        "frame_signal",
        "unfold without a length check (RuntimeError)",
        {
            CHECK_LENGTH: "",
            "return signal[index]": "return signal.unfold(0, frame_length, hop_length)",
        },
    ),
    Mutation(
        "frame_signal",
        "hard-coded float32",
        {"return signal[index]": "return signal[index].to(torch.float32)"},
        message="frame_signal of a float64 signal has dtype torch.float32",
    ),
    Mutation(
        "frame_signal",
        "hop_length not checked: a hop of 0 divides by zero",
        {"if frame_length <= 0 or hop_length <= 0:": "if frame_length <= 0:"},
        message="should raise ValueError for hop_length = 0 (a hop must be positive)",
    ),
    Mutation(
        "frame_signal",
        "a 2-D signal not refused (only the lengths checked)",
        {"    if signal.dim() != 1:\n": "    if False:\n"},
        message="should raise ValueError for a 2-D signal (50, 2)",
    ),
    Mutation(
        "frame_signal",
        "frames gathered in float32, cast back to the signal's dtype",
        {"return signal[index]": "return signal.float()[index].to(signal.dtype)"},
        hidden=True,
    ),
    Case(
        "frame_signal",
        "right",
        "Tensor.unfold after a length check",
        """
def frame_signal(signal, frame_length, hop_length):
    if signal.dim() != 1 or min(frame_length, hop_length) < 1:
        raise ValueError("a 1-D signal and a positive frame length and hop are needed")
    if signal.shape[0] < frame_length:
        raise ValueError(f"{signal.shape[0]} samples is shorter than one frame ({frame_length})")
    return signal.unfold(0, frame_length, hop_length).clone()
""",
    ),
    Case(
        "frame_signal",
        "right",
        "Python loop and torch.stack",
        """
def frame_signal(signal, frame_length, hop_length):
    if signal.ndim != 1:
        raise ValueError("the signal must be 1-D")
    if frame_length <= 0 or hop_length <= 0:
        raise ValueError("frame_length and hop_length must be positive")
    if len(signal) < frame_length:
        raise ValueError("signal shorter than one frame")
    frames = []
    start = 0
    while start + frame_length <= len(signal):
        frames.append(signal[start : start + frame_length])
        start += hop_length
    return torch.stack(frames)
""",
    ),
    # Mistakes no visible test wrote a message for (issue 30): checked_call names them.
    Mutation(
        "frame_signal",
        "frame starts in the signal's dtype (a new wrong dtype)",
        {
            "starts = torch.arange(num_frames) * hop_length": (
                "starts = torch.arange(num_frames, dtype=signal.dtype) * hop_length"
            )
        },
        message="Likely cause: an index of a floating dtype",
    ),
    Mutation(
        "frame_signal",
        "frame starts not made a column (a new wrong shape)",
        {
            "index = starts[:, None] + torch.arange(frame_length)": (
                "index = starts + torch.arange(frame_length)"
            )
        },
        message="frame_signal(a float32 tensor of shape (12,), 5, 2) raised RuntimeError: The size",
    ),
    # ---------------------------------------------------------------- context_window
    Mutation(
        "context_window",
        "circular padding with torch.roll",
        {"[padded[j : j + n] for": "[torch.roll(X, shifts=k - j, dims=0) for"},
        message="circular padding (e.g. torch.roll): the first row sees the last",
    ),
    Mutation(
        "context_window",
        "neighbours in reverse order, i+k first",
        {"for j in range(2 * k + 1)]": "for j in reversed(range(2 * k + 1))]"},
        message="the neighbours in reverse order (i+k first); row i must start with",
    ),
    Mutation(
        "context_window",
        "window on one side only, rows i-2k .. i",
        {"[padding, X, padding]": "[padding, padding, X]"},
        message="a window of 2k + 1 vectors ending at i (rows i-2k .. i) instead of",
    ),
    Mutation(
        "context_window",
        "edge vectors replicated instead of zeros",
        {"[padding, X, padding]": "[X[:1].expand(k, d), X, X[-1:].expand(k, d)]"},
        message="the edge vector repeated instead of zero padding",
    ),
    Mutation(
        "context_window",
        "features interleaved, unfold without transpose",
        {"return torch.cat(": "return torch.stack(", "], dim=1)": "], dim=2).reshape(n, -1)"},
        message="the features interleaved (first coordinate of every neighbour, then",
    ),
    Mutation(
        "context_window",
        "left neighbours only, rows i-k .. i",
        {"[padding, X, padding]": "[padding, X]", "range(2 * k + 1)": "range(k + 1)"},
        message="the window covers only one side. Row i needs rows i-k .. i+k",
    ),
    Mutation(
        "context_window",
        "padding only as wide as the sequence, breaks for k > n",
        {"X.new_zeros(k, d)": "X.new_zeros(min(k, n), d)"},
        message="Pad with k zero vectors at each end, whatever n is",
        hidden=True,
    ),
    Mutation(
        "context_window",
        "hard-coded float32 zeros",
        {
            "return torch.cat(": "out = torch.zeros(n, (2 * k + 1) * d)\n    out[:] = torch.cat(",
            "], dim=1)": "], dim=1)\n    return out",
        },
    ),
    Mutation(
        "context_window",
        "only k = 1 handled, the visible size",
        {
            "X.new_zeros(k, d)": "X.new_zeros(1, d)",
            "for j in range(2 * k + 1)": "for j in range(3)",
        },
    ),
    Mutation(
        "context_window",
        "no check of X's dimensions, the shape read from its last two",
        {
            'if X.dim() != 2:\n        raise ValueError(f"X must be 2-D (n, d), got shape '
            '{tuple(X.shape)}")\n    ': "",
            "n, d = X.shape": "n, d = X.shape[-2:]",
        },
        message="should raise ValueError for X of shape (2, 3, 2)",
    ),
    Mutation(
        "context_window",
        "no error for a negative k",
        {'if k < 0:\n        raise ValueError(f"k must be >= 0, got {k}")\n    ': ""},
        message="should raise ValueError for a negative k (k = -1)",
    ),
    Case(
        "context_window",
        "right",
        "double loop into a zero tensor",
        """
def context_window(X, k):
    if X.ndim != 2 or k < 0:
        raise ValueError(f"need a 2-D X and k >= 0, got shape {tuple(X.shape)} and k = {k}")
    n, d = X.shape
    out = X.new_zeros(n, 2 * k + 1, d)
    for i in range(n):
        for slot, j in enumerate(range(i - k, i + k + 1)):
            if 0 <= j < n:
                out[i, slot] = X[j]
    return out.reshape(n, (2 * k + 1) * d)
""",
    ),
    Case(
        "context_window",
        "right",
        "F.pad, unfold, then transpose",
        """
import torch.nn.functional as F


def context_window(X, k):
    if k < 0:  # a 1-D or 3-D X raises ValueError in the unpacking below
        raise ValueError(f"k must be >= 0, got {k}")
    n, d = X.shape
    windows = F.pad(X, (0, 0, k, k)).unfold(0, 2 * k + 1, 1)  # (n, d, 2k + 1)
    return windows.transpose(1, 2).reshape(n, (2 * k + 1) * d)
""",
    ),
    # A mistake no visible test wrote a message for (issue 30): checked_call names it.
    Mutation(
        "context_window",
        "zero padding of shape (d, k) (a new wrong shape)",
        {"padding = X.new_zeros(k, d)": "padding = X.new_zeros(d, k)"},
        message="Likely cause: pieces of different sizes joined",
    ),
    # ---------------------------------------------------------------- concept questions
    Case(
        "q_one_hot_distance",
        "wrong",
        "answered with the option's number",
        "q_one_hot_distance = 3\n",
        message="should be a string",
    ),
    Case(
        "q_one_hot_distance",
        "wrong",
        "(d): the gap between the columns",
        'q_one_hot_distance = "d"\n',
    ),
    Case(
        "q_one_hot_distance",
        "wrong",
        "(c): the square root forgotten",
        'q_one_hot_distance = "c"\n',
    ),
    Case("q_one_hot_distance", "right", "upper case", 'q_one_hot_distance = " B "\n'),
    Case(
        "q_frames_in_10_seconds",
        "wrong",
        "one frame per hop, 10 s / 10 ms, ignoring the frame that must fit",
        "q_frames_in_10_seconds = 1000\n",
    ),
    Case(
        "q_frames_in_10_seconds",
        "wrong",
        "frames side by side, 10 s / 25 ms: the overlap forgotten",
        "q_frames_in_10_seconds = 400\n",
    ),
    Case(
        "q_frames_in_10_seconds",
        "wrong",
        "answered as text",
        'q_frames_in_10_seconds = "998"\n',
        message="should be a number",
    ),
    Case(
        "q_frames_in_10_seconds", "right", "the count written out", "q_frames_in_10_seconds = 998\n"
    ),
    Case("q_frames_in_10_seconds", "right", "as a float", "q_frames_in_10_seconds = 998.0\n"),
    Case(
        "q_whole_sentence_window",
        "wrong",
        "(c): the sentence's words times d",
        'q_whole_sentence_window = "c"\n',
    ),
    Case(
        "q_whole_sentence_window",
        "wrong",
        "(b): one side of the window",
        'q_whole_sentence_window = "b"\n',
    ),
    Case(
        "q_whole_sentence_window",
        "wrong",
        "(a): the old input size",
        'q_whole_sentence_window = "a"\n',
    ),
    Case("q_whole_sentence_window", "right", "upper case", 'q_whole_sentence_window = "D"\n'),
]
