"""Small, deterministic data for the notebooks: made here, never downloaded.

- a toy vocabulary, sentences and hand-made word embeddings (similar words, similar vectors);
- a synthetic speech-like signal (a few vowel-like sounds with pauses);
- a small molecule as a graph (atoms are nodes with one-hot element vectors);
- the measured cost of dense and efficient attention (``make benchmark`` writes it);
- the measured time of an RNN's loop and of causal softmax attention (notebook 08).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import torch

__all__ = [
    "EMBEDDING_FEATURES",
    "SENTENCES",
    "VOCAB",
    "Molecule",
    "attention_benchmark",
    "ethanol",
    "rnn_attention_benchmark",
    "speech_like_signal",
    "word_embeddings",
]

VOCAB: list[str] = [
    "apple", "bag", "cat", "dog", "elephant",
    "i", "saw", "a", "this", "is", "good", "bad", "run", "walk",
]  # fmt: skip
"""The toy vocabulary; its first five words are the lecture's one-hot example."""

SENTENCES: list[list[str]] = [
    ["i", "saw", "a", "saw"],
    ["this", "is", "a", "cat"],
    ["this", "is", "good"],
    ["a", "dog", "saw", "a", "cat"],
]
"""Example sentences, already split into tokens (all in ``VOCAB``)."""

EMBEDDING_FEATURES: list[str] = ["animal", "food", "object", "action", "function", "sentiment"]
"""What each coordinate of ``word_embeddings`` stands for (a hand-made, readable embedding)."""

# Hand-picked feature values: animals share "animal", verbs share "action", and so on,
# so that cosine similarity groups words the way a trained embedding would.
_FEATURES: dict[str, list[float]] = {
    "apple": [0.0, 1.0, 0.3, 0.0, 0.0, 0.2],
    "bag": [0.0, 0.1, 1.0, 0.0, 0.0, 0.0],
    "cat": [1.0, 0.0, 0.1, 0.1, 0.0, 0.1],
    "dog": [1.0, 0.0, 0.1, 0.2, 0.0, 0.1],
    "elephant": [0.9, 0.0, 0.3, 0.1, 0.0, 0.0],
    "i": [0.3, 0.0, 0.0, 0.1, 0.8, 0.0],
    "saw": [0.0, 0.0, 0.4, 0.9, 0.1, 0.0],
    "a": [0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
    "this": [0.0, 0.0, 0.1, 0.0, 0.9, 0.0],
    "is": [0.0, 0.0, 0.0, 0.3, 0.9, 0.0],
    "good": [0.0, 0.1, 0.0, 0.0, 0.2, 1.0],
    "bad": [0.0, 0.1, 0.0, 0.0, 0.2, -1.0],
    "run": [0.1, 0.0, 0.0, 1.0, 0.0, 0.1],
    "walk": [0.1, 0.0, 0.0, 0.9, 0.0, 0.1],
}


def word_embeddings(words: list[str] | None = None) -> torch.Tensor:
    """Hand-made word embeddings, one row per word.

    Args:
        words: words from ``VOCAB`` (default: all of ``VOCAB``, in order).
    Returns:
        float32 tensor of shape ``(len(words), len(EMBEDDING_FEATURES))``.
    Raises:
        KeyError: naming a word that has no embedding.
    """
    words = VOCAB if words is None else words
    unknown = [w for w in words if w not in _FEATURES]
    if unknown:
        raise KeyError(f"no embedding for {unknown}; known words: {sorted(_FEATURES)}")
    return torch.tensor([_FEATURES[w] for w in words], dtype=torch.float32)


def speech_like_signal(
    duration: float = 1.0, sample_rate: int = 16_000, seed: int = 0
) -> torch.Tensor:
    """A deterministic speech-like waveform: vowel-like bursts separated by near-silence.

    Each burst is a few harmonics of a fundamental between 110 and 220 Hz under a smooth
    envelope, plus a little noise, which is enough for frames to look different where the
    "sound" changes.

    Args:
        duration: length in seconds (> 0).
        sample_rate: samples per second (> 0).
        seed: seed for the burst pitches and the noise.
    Returns:
        float32 tensor of shape ``(round(duration * sample_rate),)``, values in about [-1, 1].
    """
    if duration <= 0 or sample_rate <= 0:
        raise ValueError(
            f"duration and sample_rate must be positive, got {duration} and {sample_rate}"
        )
    generator = torch.Generator().manual_seed(seed)
    n = round(duration * sample_rate)
    t = torch.arange(n, dtype=torch.float64) / sample_rate
    signal = torch.zeros(n, dtype=torch.float64)
    num_bursts = max(1, round(4 * duration))
    burst_length = duration / num_bursts
    for b in range(num_bursts):
        start, stop = b * burst_length, b * burst_length + 0.7 * burst_length
        inside = (t >= start) & (t < stop)
        envelope = torch.sin(math.pi * (t - start) / (stop - start)).clamp(min=0) * inside
        f0 = 110.0 + 110.0 * torch.rand((), generator=generator, dtype=torch.float64)
        for harmonic, amplitude in [(1, 1.0), (2, 0.5), (3, 0.3), (5, 0.15)]:
            signal += amplitude * envelope * torch.sin(2 * math.pi * harmonic * f0 * t)
    signal += 0.01 * torch.randn(n, generator=generator, dtype=torch.float64)
    return (signal / signal.abs().max()).float()


@dataclass(frozen=True)
class Molecule:
    """A molecule as a graph: node features are one-hot element vectors.

    Attributes:
        name: the molecule's name.
        elements: the element alphabet of the one-hot vectors, e.g. ``["H", "C", "O"]``.
        atoms: the element of each node, length N.
        x: float32 node features of shape ``(N, len(elements))``.
        edge_index: long tensor of shape ``(2, E)`` holding each bond in both directions
            (row 0 the source, row 1 the target, as in PyTorch Geometric).
    """

    name: str
    elements: list[str]
    atoms: list[str]
    x: torch.Tensor
    edge_index: torch.Tensor

    @property
    def num_nodes(self) -> int:
        return len(self.atoms)


def ethanol() -> Molecule:
    """Ethanol, C2H5OH: 9 atoms, 8 bonds, node vectors one-hot over ``["H", "C", "O"]``."""
    elements = ["H", "C", "O"]
    atoms = ["C", "C", "O", "H", "H", "H", "H", "H", "H"]
    bonds = [(0, 1), (1, 2), (0, 3), (0, 4), (0, 5), (1, 6), (1, 7), (2, 8)]
    x = torch.zeros(len(atoms), len(elements))
    x[torch.arange(len(atoms)), torch.tensor([elements.index(a) for a in atoms])] = 1.0
    directed = bonds + [(j, i) for i, j in bonds]
    edge_index = torch.tensor(directed, dtype=torch.long).T.contiguous()
    return Molecule("ethanol", elements, atoms, x, edge_index)


def attention_benchmark() -> list[dict[str, Any]]:
    """The rows of ``helpers/results/efficient_attention.csv``, numbers as numbers.

    Written by ``python -m instructor.benchmark_attention`` (part of ``make benchmark``): for
    each ``method`` ("dense SDPA", "dense + local mask", "sliding window", "linear") and
    sequence length ``n``, the median ``seconds`` and the peak extra memory ``peak_mib`` of one
    head with ``d`` features and local ``window``, plus ``max_error`` against the reference.
    """
    text = (files("helpers") / "results" / "efficient_attention.csv").read_text(encoding="utf-8")
    rows = []
    for row in csv.DictReader(text.splitlines()):
        rows.append(
            {
                "method": row["method"],
                **{key: int(row[key]) for key in ("n", "window", "d")},
                **{key: float(row[key]) for key in ("seconds", "peak_mib", "max_error")},
            }
        )
    return rows


def rnn_attention_benchmark() -> list[dict[str, Any]]:
    """The rows of ``helpers/results/rnn_vs_attention.csv``, numbers as numbers.

    Written by ``python -m instructor.benchmark_rnn_vs_attention``: for each ``method``
    ("RNN": notebook 08's ``rnn_forward``, a loop of n steps; "causal softmax attention":
    ``F.scaled_dot_product_attention`` with ``is_causal=True``) and sequence length ``n``, the
    median ``seconds`` of one call with ``d`` features, float32, on ``threads`` CPU threads.
    """
    text = (files("helpers") / "results" / "rnn_vs_attention.csv").read_text(encoding="utf-8")
    rows = []
    for row in csv.DictReader(text.splitlines()):
        rows.append(
            {
                "method": row["method"],
                **{key: int(row[key]) for key in ("n", "d", "threads")},
                "seconds": float(row["seconds"]),
            }
        )
    return rows
