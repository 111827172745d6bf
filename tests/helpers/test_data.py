"""Unit tests of helpers.data: the course's small datasets."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest
import torch
import torch.nn.functional as F

from helpers import data


def test_vocabulary_and_sentences() -> None:
    assert data.VOCAB[:5] == ["apple", "bag", "cat", "dog", "elephant"]
    assert len(set(data.VOCAB)) == len(data.VOCAB)
    assert all(token in data.VOCAB for sentence in data.SENTENCES for token in sentence)


def test_embeddings_put_similar_words_close() -> None:
    e = data.word_embeddings(["cat", "dog", "apple", "run", "walk"])
    assert e.shape == (5, len(data.EMBEDDING_FEATURES)) and e.dtype == torch.float32
    similarity = F.cosine_similarity(e[:, None], e[None], dim=-1)
    assert similarity[0, 1] > similarity[0, 2]  # cat ~ dog, more than cat ~ apple
    assert similarity[3, 4] > similarity[3, 0]  # run ~ walk
    with pytest.raises(KeyError, match="zebra"):
        data.word_embeddings(["zebra"])


def test_speech_like_signal_is_deterministic_and_bounded() -> None:
    a, b = data.speech_like_signal(0.5), data.speech_like_signal(0.5)
    assert a.shape == (8000,) and a.dtype == torch.float32
    assert torch.equal(a, b) and not torch.equal(a, data.speech_like_signal(0.5, seed=1))
    assert a.abs().max() <= 1.0
    with pytest.raises(ValueError, match="positive"):
        data.speech_like_signal(0.0)


def test_ethanol_graph() -> None:
    molecule = data.ethanol()
    assert molecule.num_nodes == 9 and molecule.x.shape == (9, 3)
    assert torch.equal(molecule.x.sum(dim=1), torch.ones(9))
    assert molecule.edge_index.shape == (2, 16)
    edges = set(map(tuple, molecule.edge_index.T.tolist()))
    assert all((j, i) in edges for i, j in edges), "bonds go both ways"
    assert [molecule.atoms[i] for i in range(3)] == ["C", "C", "O"]


def test_attention_benchmark_ships_every_method_and_length() -> None:
    rows = data.attention_benchmark()
    methods = {row["method"] for row in rows}
    assert methods == {"dense SDPA", "dense + local mask", "sliding window", "linear"}
    lengths = sorted({row["n"] for row in rows})
    assert lengths[0] <= 512 and lengths[-1] >= 16384
    assert all(row["seconds"] > 0 for row in rows)
    assert all(row["max_error"] < 1e-4 for row in rows)


def test_rnn_attention_benchmark_ships_both_methods_at_every_length() -> None:
    rows = data.rnn_attention_benchmark()
    assert {row["method"] for row in rows} == {"RNN", "causal softmax attention"}
    lengths = sorted({row["n"] for row in rows})
    assert lengths[0] <= 64 and lengths[-1] >= 4096
    for method in ("RNN", "causal softmax attention"):
        assert sorted(row["n"] for row in rows if row["method"] == method) == lengths
    assert all(row["seconds"] > 0 and row["d"] > 0 and row["threads"] >= 1 for row in rows)
