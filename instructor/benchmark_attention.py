"""Notebook 06's measurement: attention against sequence length.

    python -m instructor.benchmark_attention

Times dense and efficient attention for growing sequence lengths (see
:func:`benchmark_attention`) and writes ``helpers/results/efficient_attention.csv``
(shipped with the student package: notebook 06 plots it, on Colab too),
``benchmarks/efficient_attention.md`` and its figure. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import math
from datetime import datetime
from importlib.resources import files
from pathlib import Path
from typing import Any

from helpers.measure import measure
from instructor.anatomy import reference_functions
from instructor.lms.csv_safety import write_csv_records
from instructor.paths import BENCHMARKS

__all__ = ["benchmark_attention", "main", "write_attention_results"]

ATTENTION_CSV = Path(str(files("helpers") / "results" / "efficient_attention.csv"))
"""Shipped inside the student package, so that notebook 06 can plot it on Colab too."""

ATTENTION_METHODS = ("dense SDPA", "dense + local mask", "sliding window", "linear")
ATTENTION_FUNCTIONS = ("local_mask", "sliding_window_attention", "linear_attention")


def _attention_row(method: str, n: int, d: int, window: int, repeats: int) -> dict[str, Any]:
    """One measurement of :func:`benchmark_attention`, made in a fresh process."""
    import torch
    import torch.nn.functional as F

    threads = torch.get_num_threads()
    solution = reference_functions("06_efficient_attention", ATTENTION_FUNCTIONS)
    torch.set_num_threads(threads)  # the notebook's start_notebook() asked for one thread

    def dense(Q, K, V):
        return F.scaled_dot_product_attention(Q, K, V)

    def dense_local(Q, K, V):
        mask = solution["local_mask"](Q.shape[-2], window)
        return F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)

    def sliding(Q, K, V):
        return solution["sliding_window_attention"](Q, K, V, window)

    def linear_quadratic(Q, K, V):
        phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
        weights = phi_q @ phi_k.mT
        return weights @ V / (weights.sum(-1, keepdim=True) + 1e-6)

    function, reference = {
        "dense SDPA": (dense, dense),
        "dense + local mask": (dense_local, dense_local),
        "sliding window": (sliding, dense_local),
        "linear": (solution["linear_attention"], linear_quadratic),
    }[method]
    generator = torch.Generator().manual_seed(n)
    Q, K, V = (torch.randn(n, d, generator=generator) for _ in range(3))
    with torch.no_grad():
        result = measure(function, Q, K, V, repeats=repeats)
        error = 0.0
        if function is not reference:
            error = (function(Q, K, V) - reference(Q, K, V)).abs().max().item()
    return {
        "method": method,
        "n": n,
        "window": window,
        "d": d,
        "seconds": result.seconds,
        "peak_mib": result.peak_mib if result.peak_mib is not None else math.nan,
        "max_error": error,
        "threads": torch.get_num_threads(),
    }


def benchmark_attention(
    lengths: tuple[int, ...] = (512, 1024, 2048, 4096, 8192, 16384),
    d: int = 64,
    window: int = 128,
    repeats: int = 3,
) -> list[dict[str, Any]]:
    """Time and peak memory of four ways to attend, one head, float32, for each length.

    - ``dense SDPA``: ``F.scaled_dot_product_attention`` without a mask (full attention);
    - ``dense + local mask``: the same with ``local_mask(n, window)`` (built inside the call);
    - ``sliding window``: the notebook's ``sliding_window_attention(Q, K, V, window)``;
    - ``linear``: the notebook's ``linear_attention(Q, K, V)``.

    Every (method, n) runs in a fresh process, so that one measurement's memory does not
    hide or inflate the next one's. Each row also records ``max_error``: sliding window
    against dense + local mask, linear attention against its own quadratic form
    ``phi(Q) phi(K)^T V`` (normalised); dense rows 0.
    """
    import itertools
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from tqdm.auto import tqdm

    rows = []
    spawn = multiprocessing.get_context("spawn")
    runs = list(itertools.product(lengths, ATTENTION_METHODS))
    with tqdm(runs, desc="attention", unit="run") as progress:
        for n, method in progress:
            progress.set_postfix_str(f"n={n} {method}")
            with ProcessPoolExecutor(max_workers=1, mp_context=spawn) as pool:
                row = pool.submit(_attention_row, method, n, d, window, repeats).result()
            rows.append(row)
            # tqdm.write prints above the bar instead of tearing it.
            progress.write(
                f"n={n:6d}  {method:18s}  {row['seconds'] * 1e3:9.2f} ms  "
                f"{row['peak_mib']:9.1f} MiB  err {row['max_error']:.1e}"
            )
    return rows


def write_attention_results(rows: list[dict[str, Any]], csv_path: Path, table_path: Path) -> str:
    """Write the CSV (for notebook 06), a markdown table of ratios and the log-log figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import torch

    from helpers.plotting import plot_scaling

    write_csv_records(
        csv_path,
        [{k: f"{v:.6g}" if isinstance(v, float) else v for k, v in r.items()} for r in rows],
    )

    by_key = {(r["method"], r["n"]): r for r in rows}
    window = rows[0]["window"]
    lines = [
        "# Efficient attention against sequence length",
        "",
        f"Measured by `make benchmark` on {datetime.now():%Y-%m-%d}, torch {torch.__version__}, "
        f"{rows[0]['threads']} threads: one head, d = {rows[0]['d']}, float32, window "
        f"w = {window}; median time, peak extra resident memory. Ratios are dense SDPA's cost "
        "divided by the method's; the flop floor of local attention is n / (2w + 1).",
        "",
        "| n | method | time (ms) | peak (MiB) | time ratio | memory ratio | flop floor | "
        "max error |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for row in rows:
        dense = by_key[("dense SDPA", row["n"])]
        floor = row["n"] / (2 * window + 1) if row["method"] == "sliding window" else math.nan
        memory_ratio = dense["peak_mib"] / max(row["peak_mib"], 1e-3)
        lines.append(
            f"| {row['n']} | {row['method']} | {row['seconds'] * 1e3:.1f} | "
            f"{row['peak_mib']:.1f} | {dense['seconds'] / row['seconds']:.1f}x | "
            f"{memory_ratio:.0f}x | {'' if math.isnan(floor) else f'{floor:.0f}x'} | "
            f"{row['max_error']:.1e} |"
        )
    table = "\n".join(lines) + "\n"
    table_path.write_text(table, encoding="utf-8")
    figure = plot_scaling(rows)
    figure.savefig(table_path.with_suffix(".png"), dpi=110, bbox_inches="tight")
    plt.close(figure)
    return table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement")
    parser.add_argument("--csv", type=Path, default=ATTENTION_CSV)
    parser.add_argument("--out", type=Path, default=BENCHMARKS / "efficient_attention.md")
    args = parser.parse_args(argv)
    rows = benchmark_attention(repeats=args.repeats)
    print(write_attention_results(rows, args.csv, args.out))
    print(f"written to {args.csv}, {args.out} and {args.out.with_suffix('.png')}")


if __name__ == "__main__":
    main()
