"""Wrong and right answers for 01_vector_sets, graded by real nbgrader autograde.

See tests/test_autograde.py: each source replaces the solution cell of its function.
"""

from instructor.grading_cases import Case

CASES = [
    # ---------------------------------------------------------------- one_hot
    Case(
        "one_hot",
        "wrong",
        "transposed, one column per token",
        """
def one_hot(tokens, vocab):
    for token in tokens:
        if token not in vocab:
            raise KeyError(token)
    encoded = torch.zeros(len(vocab), len(tokens))
    for i, token in enumerate(tokens):
        encoded[vocab.index(token), i] = 1.0
    return encoded
""",
    ),
    Case(
        "one_hot",
        "wrong",
        "index off by one, 1-based columns",
        """
def one_hot(tokens, vocab):
    for token in tokens:
        if token not in vocab:
            raise KeyError(token)
    encoded = torch.zeros(len(tokens), len(vocab))
    for i, token in enumerate(tokens):
        encoded[i, (vocab.index(token) + 1) % len(vocab)] = 1.0
    return encoded
""",
    ),
    Case(
        "one_hot",
        "wrong",
        "integer dtype from F.one_hot",
        """
import torch.nn.functional as F


def one_hot(tokens, vocab):
    for token in tokens:
        if token not in vocab:
            raise KeyError(token)
    indices = torch.tensor([vocab.index(t) for t in tokens], dtype=torch.long)
    return F.one_hot(indices, num_classes=len(vocab))
""",
    ),
    Case(
        "one_hot",
        "wrong",
        "unknown tokens skipped silently",
        """
def one_hot(tokens, vocab):
    known = [t for t in tokens if t in vocab]
    encoded = torch.zeros(len(known), len(vocab))
    for i, token in enumerate(known):
        encoded[i, vocab.index(token)] = 1.0
    return encoded
""",
    ),
    Case(
        "one_hot",
        "wrong",
        "unknown tokens become a zero row",
        """
def one_hot(tokens, vocab):
    encoded = torch.zeros(len(tokens), len(vocab))
    for i, token in enumerate(tokens):
        if token in vocab:
            encoded[i, vocab.index(token)] = 1.0
    return encoded
""",
    ),
    Case(
        "one_hot",
        "wrong",
        "ValueError from list.index instead of KeyError",
        """
def one_hot(tokens, vocab):
    encoded = torch.zeros(len(tokens), len(vocab))
    for i, token in enumerate(tokens):
        encoded[i, vocab.index(token)] = 1.0
    return encoded
""",
    ),
    Case(
        "one_hot",
        "wrong",
        "empty token list breaks torch.stack",
        """
def one_hot(tokens, vocab):
    rows = []
    for token in tokens:
        if token not in vocab:
            raise KeyError(f"unknown token {token!r}")
        row = torch.zeros(len(vocab))
        row[vocab.index(token)] = 1.0
        rows.append(row)
    return torch.stack(rows)
""",
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
    # ---------------------------------------------------------------- frame_signal
    Case(
        "frame_signal",
        "wrong",
        "frame count len // hop, end padded with zeros",
        """
import torch.nn.functional as F


def frame_signal(signal, frame_length, hop_length):
    if len(signal) < frame_length:
        raise ValueError("signal shorter than one frame")
    num_frames = len(signal) // hop_length
    needed = (num_frames - 1) * hop_length + frame_length
    padded = F.pad(signal, (0, max(0, needed - len(signal))))
    return torch.stack([padded[k * hop_length : k * hop_length + frame_length]
                        for k in range(num_frames)])
""",
    ),
    Case(
        "frame_signal",
        "wrong",
        "one frame too few, missing the + 1",
        """
def frame_signal(signal, frame_length, hop_length):
    if len(signal) < frame_length:
        raise ValueError("signal shorter than one frame")
    num_frames = max(1, (len(signal) - frame_length) // hop_length)
    return torch.stack([signal[k * hop_length : k * hop_length + frame_length]
                        for k in range(num_frames)])
""",
    ),
    Case(
        "frame_signal",
        "wrong",
        "frame_length used as the hop",
        """
def frame_signal(signal, frame_length, hop_length):
    if len(signal) < frame_length:
        raise ValueError("signal shorter than one frame")
    return signal.unfold(0, frame_length, frame_length)
""",
    ),
    Case(
        "frame_signal",
        "wrong",
        "transposed, one column per frame",
        """
def frame_signal(signal, frame_length, hop_length):
    if len(signal) < frame_length:
        raise ValueError("signal shorter than one frame")
    return signal.unfold(0, frame_length, hop_length).T
""",
    ),
    Case(
        "frame_signal",
        "wrong",
        "last partial frame kept, zero-padded (ceil count)",
        """
import math

import torch.nn.functional as F


def frame_signal(signal, frame_length, hop_length):
    if len(signal) < frame_length:
        raise ValueError("signal shorter than one frame")
    num_frames = 1 + math.ceil((len(signal) - frame_length) / hop_length)
    needed = (num_frames - 1) * hop_length + frame_length
    padded = F.pad(signal, (0, needed - len(signal)))
    return padded.unfold(0, frame_length, hop_length)
""",
    ),
    Case(
        "frame_signal",
        "wrong",
        "unfold without a length check (RuntimeError)",
        """
def frame_signal(signal, frame_length, hop_length):
    return signal.unfold(0, frame_length, hop_length)
""",
    ),
    Case(
        "frame_signal",
        "wrong",
        "hard-coded float32",
        """
def frame_signal(signal, frame_length, hop_length):
    if len(signal) < frame_length:
        raise ValueError("signal shorter than one frame")
    num_frames = 1 + (len(signal) - frame_length) // hop_length
    frames = torch.zeros(num_frames, frame_length)
    for k in range(num_frames):
        frames[k] = signal[k * hop_length : k * hop_length + frame_length]
    return frames
""",
    ),
    Case(
        "frame_signal",
        "right",
        "Tensor.unfold after a length check",
        """
def frame_signal(signal, frame_length, hop_length):
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
    # ---------------------------------------------------------------- context_window
    Case(
        "context_window",
        "wrong",
        "circular padding with torch.roll",
        """
def context_window(X, k):
    return torch.cat([torch.roll(X, shifts=k - j, dims=0) for j in range(2 * k + 1)], dim=1)
""",
    ),
    Case(
        "context_window",
        "wrong",
        "neighbours in reverse order, i+k first",
        """
def context_window(X, k):
    n, d = X.shape
    zeros = X.new_zeros(k, d)
    padded = torch.cat([zeros, X, zeros])
    return torch.cat([padded[j : j + n] for j in reversed(range(2 * k + 1))], dim=1)
""",
    ),
    Case(
        "context_window",
        "wrong",
        "window on one side only, rows i-2k .. i",
        """
def context_window(X, k):
    n, d = X.shape
    padded = torch.cat([X.new_zeros(2 * k, d), X])
    return torch.cat([padded[j : j + n] for j in range(2 * k + 1)], dim=1)
""",
    ),
    Case(
        "context_window",
        "wrong",
        "edge vectors replicated instead of zeros",
        """
def context_window(X, k):
    n = X.shape[0]
    index = (torch.arange(n)[:, None] + torch.arange(-k, k + 1)).clamp(0, n - 1)
    return X[index].reshape(n, -1)
""",
    ),
    Case(
        "context_window",
        "wrong",
        "features interleaved, unfold without transpose",
        """
import torch.nn.functional as F


def context_window(X, k):
    n = X.shape[0]
    return F.pad(X, (0, 0, k, k)).unfold(0, 2 * k + 1, 1).reshape(n, -1)
""",
    ),
    Case(
        "context_window",
        "wrong",
        "padding only as wide as the sequence, breaks for k > n",
        """
def context_window(X, k):
    n, d = X.shape
    width = min(k, n)
    zeros = X.new_zeros(width, d)
    padded = torch.cat([zeros, X, zeros])
    pieces = []
    for j in range(-k, k + 1):
        pieces.append(padded[width + j : width + j + n])
    return torch.cat(pieces, dim=1)
""",
    ),
    Case(
        "context_window",
        "wrong",
        "hard-coded float32 zeros",
        """
def context_window(X, k):
    n, d = X.shape
    out = torch.zeros(n, (2 * k + 1) * d)
    for i in range(n):
        for offset in range(-k, k + 1):
            if 0 <= i + offset < n:
                out[i, (offset + k) * d : (offset + k + 1) * d] = X[i + offset]
    return out
""",
    ),
    Case(
        "context_window",
        "wrong",
        "only k = 1 handled, the visible size",
        """
def context_window(X, k):
    zero = X.new_zeros(1, X.shape[1])
    previous = torch.cat([zero, X[:-1]])
    following = torch.cat([X[1:], zero])
    return torch.cat([previous, X, following], dim=1)
""",
    ),
    Case(
        "context_window",
        "right",
        "double loop into a zero tensor",
        """
def context_window(X, k):
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
    n, d = X.shape
    windows = F.pad(X, (0, 0, k, k)).unfold(0, 2 * k + 1, 1)  # (n, d, 2k + 1)
    return windows.transpose(1, 2).reshape(n, (2 * k + 1) * d)
""",
    ),
]
