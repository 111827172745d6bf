"""Reusable figures: attention heatmaps with token labels, weight bars, masks, waveforms.

Every function draws into a given ``matplotlib`` Axes (or makes one) and returns the Axes,
so notebooks can compose figures. None calls ``plt.show()``: the notebook decides.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.figure import Figure

__all__ = ["plot_attention", "plot_frames", "plot_mask", "plot_scaling", "plot_weight_bars"]


def _to_numpy(x: torch.Tensor | np.ndarray) -> np.ndarray:
    if isinstance(x, torch.Tensor):
        return x.detach().cpu().to(torch.float64).numpy()
    return np.asarray(x, dtype=np.float64)


def _axes(ax: Axes | None, figsize: tuple[float, float]) -> Axes:
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


def plot_attention(
    weights: torch.Tensor | np.ndarray,
    queries: Sequence[str] | None = None,
    keys: Sequence[str] | None = None,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    annotate: bool | None = None,
    cmap: str = "viridis",
    vmin: float | None = 0.0,
    vmax: float | None = None,
    colorbar: bool = True,
) -> Axes:
    """Draw a weight matrix as a heatmap: one row per query, one column per key.

    Args:
        weights: ``(n_queries, n_keys)`` matrix (rows = queries, the row convention).
            For the column convention of notebook 03 pass ``A_prime.T``.
        queries: row labels, length n_queries (e.g. the tokens).
        keys: column labels, length n_keys (default: ``queries`` when square).
        ax: Axes to draw into (default: a new figure).
        title: Axes title.
        annotate: write each value in its cell (default: when the matrix is at most 8 x 8).
        cmap, vmin, vmax: colour map and its range.
        colorbar: add a colour bar.
    Returns:
        The Axes.
    """
    w = _to_numpy(weights)
    if w.ndim != 2:
        raise ValueError(f"weights must be a 2-D matrix (n_queries, n_keys), got shape {w.shape}")
    if keys is None and queries is not None and w.shape[0] == w.shape[1]:
        keys = queries
    for labels, size, what in [(queries, w.shape[0], "queries"), (keys, w.shape[1], "keys")]:
        if labels is not None and len(labels) != size:
            raise ValueError(f"{len(labels)} {what} labels for a matrix with {size} {what}")
    ax = _axes(ax, (0.5 * w.shape[1] + 2, 0.5 * w.shape[0] + 1.5))
    image = ax.imshow(w, cmap=cmap, vmin=vmin, vmax=vmax)
    ax.set_xlabel("key")
    ax.set_ylabel("query")
    if queries is not None:
        ax.set_yticks(range(w.shape[0]), labels=list(queries))
    if keys is not None:
        ax.set_xticks(range(w.shape[1]), labels=list(keys), rotation=45, ha="right")
    if annotate is None:
        annotate = max(w.shape) <= 8
    if annotate:
        high = np.nanmax(w) if vmax is None else vmax
        low = np.nanmin(w) if vmin is None else vmin
        middle = (high + low) / 2
        for (i, j), value in np.ndenumerate(w):
            colour = "black" if value > middle else "white"
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", color=colour, fontsize=8)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    if title:
        ax.set_title(title)
    return ax


def plot_mask(
    mask: torch.Tensor | np.ndarray,
    labels: Sequence[str] | None = None,
    *,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Draw a boolean attention mask: dark = may attend (True), light = blocked (False).

    Args:
        mask: ``(n_queries, n_keys)`` boolean matrix.
        labels: token labels for both axes (square masks only).
        ax, title: as in ``plot_attention``.
    """
    m = _to_numpy(mask)
    ax = plot_attention(
        m, labels, ax=ax, title=title, annotate=False, cmap="Greys", vmin=0, vmax=1, colorbar=False
    )
    ax.set_xticks(np.arange(-0.5, m.shape[1]), minor=True)
    ax.set_yticks(np.arange(-0.5, m.shape[0]), minor=True)
    ax.grid(which="minor", color="lightgray", linewidth=0.5)
    ax.tick_params(which="minor", length=0)
    return ax


def plot_weight_bars(
    weights: torch.Tensor | np.ndarray,
    labels: Sequence[str] | None = None,
    *,
    ax: Axes | None = None,
    title: str | None = None,
    ylim: tuple[float, float] | None = (0.0, 1.0),
) -> Axes:
    """Draw one query's weights over the keys as bars.

    Args:
        weights: ``(n_keys,)`` vector.
        labels: key labels, length n_keys.
        ax, title: as in ``plot_attention``.
        ylim: y-axis range (None to let matplotlib choose).
    """
    w = _to_numpy(weights)
    if w.ndim != 1:
        raise ValueError(f"weights must be a vector (n_keys,), got shape {w.shape}")
    ax = _axes(ax, (max(3.0, 0.6 * len(w)), 2.5))
    positions = np.arange(len(w))
    ax.bar(positions, w, color="tab:blue")
    ax.set_xticks(positions, labels=list(labels) if labels is not None else positions)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_ylabel("weight")
    if title:
        ax.set_title(title)
    return ax


def plot_frames(
    signal: torch.Tensor | np.ndarray,
    sample_rate: int,
    frame_length: int,
    hop_length: int,
    *,
    num_frames: int = 4,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Draw a waveform with its first ``num_frames`` analysis windows shaded.

    Args:
        signal: ``(num_samples,)`` waveform.
        sample_rate: samples per second, for a time axis in milliseconds.
        frame_length, hop_length: window and hop in samples.
        num_frames: how many windows to shade.
        ax, title: as in ``plot_attention``.
    """
    x = _to_numpy(signal)
    if x.ndim != 1:
        raise ValueError(f"signal must be 1-D (num_samples,), got shape {x.shape}")
    ax = _axes(ax, (8.0, 2.5))
    shown = min(len(x), hop_length * (num_frames - 1) + frame_length + hop_length)
    t_ms = np.arange(shown) / sample_rate * 1000
    ax.plot(t_ms, x[:shown], color="black", linewidth=0.8)
    colours = plt.get_cmap("tab10")
    for k in range(num_frames):
        start = k * hop_length / sample_rate * 1000
        stop = (k * hop_length + frame_length) / sample_rate * 1000
        ax.axvspan(start, stop, ymin=0.05 + 0.9 * k / num_frames,
                   ymax=0.05 + 0.9 * (k + 1) / num_frames, color=colours(k), alpha=0.3,
                   label=f"frame {k}")  # fmt: skip
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("amplitude")
    ax.legend(loc="upper right", fontsize=8)
    if title:
        ax.set_title(title)
    return ax


def plot_scaling(
    rows: Sequence[dict],
    methods: Sequence[str] | None = None,
    title: str = "Cost of attention against sequence length",
) -> Figure:
    """Two log-log panels, time and peak memory against ``n``, one line per method.

    Args:
        rows: dicts with keys ``method``, ``n``, ``seconds`` and ``peak_mib`` (e.g.
            ``helpers.data.attention_benchmark()``); rows without memory (NaN) are skipped
            in the memory panel.
        methods: which methods to draw, in this order (default: in order of appearance).
        title: the figure title.
    Returns:
        The figure (two Axes).
    """
    if methods is None:
        methods = list(dict.fromkeys(row["method"] for row in rows))
    figure, (time_ax, memory_ax) = plt.subplots(1, 2, figsize=(9, 3.4))
    for method in methods:
        mine = sorted((r for r in rows if r["method"] == method), key=lambda r: r["n"])
        n = [r["n"] for r in mine]
        time_ax.plot(n, [r["seconds"] * 1e3 for r in mine], "o-", label=method)
        with_memory = [r for r in mine if np.isfinite(r["peak_mib"]) and r["peak_mib"] > 0]
        memory_ax.plot(
            [r["n"] for r in with_memory], [r["peak_mib"] for r in with_memory], "o-", label=method
        )
    for ax, label in ((time_ax, "time (ms)"), (memory_ax, "peak extra memory (MiB)")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("sequence length n")
        ax.set_ylabel(label)
        ax.grid(True, which="major", alpha=0.3)
    time_ax.legend(fontsize=8)
    figure.suptitle(title)
    figure.tight_layout()
    return figure
