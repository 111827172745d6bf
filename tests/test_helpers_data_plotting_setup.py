"""Unit tests of helpers.data, helpers.plotting and helpers.setup."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from helpers import data, plotting, setup  # noqa: E402


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


def test_plot_attention_labels_and_validates() -> None:
    weights = torch.softmax(torch.randn(3, 3), dim=-1)
    ax = plotting.plot_attention(weights, ["i", "saw", "a"], title="w")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["i", "saw", "a"]
    assert len(ax.texts) == 9  # annotated cells
    with pytest.raises(ValueError, match="2-D"):
        plotting.plot_attention(torch.ones(2, 2, 2))
    with pytest.raises(ValueError, match="labels"):
        plotting.plot_attention(torch.ones(2, 3), ["a"])
    plt.close("all")


def test_plot_mask_bars_and_frames() -> None:
    plotting.plot_mask(torch.ones(4, 4, dtype=torch.bool).tril())
    ax = plotting.plot_weight_bars(np.array([0.2, 0.8]), ["a", "b"])
    assert len(ax.patches) == 2
    ax = plotting.plot_frames(data.speech_like_signal(0.1), 16_000, 400, 160, num_frames=3)
    assert len(ax.patches) == 3
    with pytest.raises(ValueError):
        plotting.plot_weight_bars(np.ones((2, 2)))
    plt.close("all")


def test_badge_and_setup_cell() -> None:
    badge = setup.badge_markdown("01_vector_sets")
    assert badge.startswith("[![Open In Colab]")
    assert badge.endswith(
        f"/github/{setup.REPOSITORY}/blob/{setup.BRANCH}/notebooks/01_vector_sets/01_vector_sets.ipynb)"
    )
    source = setup.colab_setup_source()
    assert 'if "google.colab" in sys.modules:' in source and "--no-deps" in source
    assert "torch-geometric" in setup.colab_setup_source(("torch-geometric",))


def test_setup_cell_is_a_no_op_outside_colab() -> None:
    from IPython.core.inputtransformer2 import TransformerManager

    python = TransformerManager().transform_cell(setup.colab_setup_source(("x",)))
    namespace: dict = {"get_ipython": lambda: pytest.fail("installed outside Colab")}
    exec(compile(python, "<setup>", "exec"), namespace)


def test_start_notebook_seeds_everything() -> None:
    setup.start_notebook(3)
    a = (torch.rand(2), np.random.rand(2))
    setup.start_notebook(3)
    b = (torch.rand(2), np.random.rand(2))
    assert torch.equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert torch.get_num_threads() == 1  # same results on any machine; no oversubscription


def test_plot_scaling_draws_time_and_memory() -> None:
    rows = [
        {"method": m, "n": n, "seconds": n**p * 1e-9, "peak_mib": float(n**p) / 1e6}
        for m, p in (("dense", 2), ("linear", 1))
        for n in (256, 512, 1024)
    ]
    rows.append({"method": "linear", "n": 2048, "seconds": 1e-3, "peak_mib": float("nan")})
    figure = plotting.plot_scaling(rows)
    time_ax, memory_ax = figure.axes
    assert [line.get_label() for line in time_ax.lines] == ["dense", "linear"]
    assert len(time_ax.lines[1].get_xdata()) == 4 and len(memory_ax.lines[1].get_xdata()) == 3
    assert time_ax.get_xscale() == "log" and memory_ax.get_yscale() == "log"
    plt.close(figure)


def test_attention_benchmark_ships_every_method_and_length() -> None:
    rows = data.attention_benchmark()
    methods = {row["method"] for row in rows}
    assert methods == {"dense SDPA", "dense + local mask", "sliding window", "linear"}
    lengths = sorted({row["n"] for row in rows})
    assert lengths[0] <= 512 and lengths[-1] >= 16384
    assert all(row["seconds"] > 0 for row in rows)
    assert all(row["max_error"] < 1e-4 for row in rows)
