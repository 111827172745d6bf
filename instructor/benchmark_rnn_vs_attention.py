"""Notebook 08's measurement: an RNN's loop against causal softmax attention.

    python -m instructor.benchmark_rnn_vs_attention

Times the notebook's ``rnn_forward`` (a Python loop of n steps) and causal softmax
attention (``F.scaled_dot_product_attention(X, X, X, is_causal=True)``) on one CPU thread
for sequence lengths beyond what the notebook can afford in its 15 s, and writes
``helpers/results/rnn_vs_attention.csv`` (shipped with the student package: notebook 08
plots it next to the student's own measurement, on Colab too) and
``benchmarks/rnn_vs_attention.md``. A measurement, not a test.
"""

from __future__ import annotations

import argparse
from datetime import datetime
from importlib.resources import files
from pathlib import Path
from typing import Any

from helpers.measure import median_seconds
from instructor.anatomy import reference_functions
from instructor.lms.csv_safety import write_csv_records
from instructor.paths import BENCHMARKS

__all__ = ["benchmark_rnn_vs_attention", "cpu_name", "load_average", "main", "write_results"]

RESULTS_CSV = Path(str(files("helpers") / "results" / "rnn_vs_attention.csv"))
"""Shipped inside the student package, so that notebook 08 can plot it on Colab too."""

METHODS = ("RNN", "causal softmax attention")
LENGTHS = (64, 128, 256, 512, 1024, 2048, 4096, 8192)


def benchmark_rnn_vs_attention(
    lengths: tuple[int, ...] = LENGTHS, d: int = 32, repeats: int = 3
) -> list[dict[str, Any]]:
    """Median seconds of the two methods for each length, float32, one thread, as in the
    notebook (same weights' scale, same ``d``; the notebook's imports cell sets one thread)."""
    import torch
    import torch.nn.functional as F

    rnn_forward = reference_functions("08_rnn_vs_attention", ("rnn_forward",))["rnn_forward"]
    torch.set_num_threads(1)

    def causal_softmax_attention(X: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(X, X, X, is_causal=True)

    generator = torch.Generator().manual_seed(2)
    W_x = torch.randn(d, d, generator=generator) / d**0.5
    W_h = torch.randn(d, d, generator=generator) / d**0.5
    b = torch.zeros(d)
    rows = []
    with torch.no_grad():
        for n in lengths:
            X = torch.randn(n, d, generator=generator)
            timed = {
                "RNN": median_seconds(rnn_forward, X, W_x, W_h, b, repeats=repeats),
                "causal softmax attention": median_seconds(
                    causal_softmax_attention, X, repeats=repeats
                ),
            }
            for method in METHODS:
                rows.append(
                    {
                        "method": method,
                        "n": n,
                        "d": d,
                        "seconds": timed[method],
                        "threads": torch.get_num_threads(),
                    }
                )
            print(f"n={n:5d}  RNN {timed['RNN'] * 1e3:9.2f} ms  attention "
                  f"{timed['causal softmax attention'] * 1e3:9.2f} ms", flush=True)  # fmt: skip
    return rows


def cpu_name() -> str:
    """The CPU's model name (Linux), or the platform's description."""
    import platform

    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average() -> str:
    """The 1-minute load average (busy machines time slower), or "unknown"."""
    import os

    try:
        return f"{os.getloadavg()[0]:.1f}"
    except (AttributeError, OSError):
        return "unknown"


def write_results(rows: list[dict[str, Any]], csv_path: Path, table_path: Path) -> str:
    """Write the CSV (for notebook 08) and a markdown table; return the table."""
    import torch

    write_csv_records(
        csv_path,
        [{k: f"{v:.6g}" if isinstance(v, float) else v for k, v in r.items()} for r in rows],
    )
    seconds = {(r["method"], r["n"]): r["seconds"] for r in rows}
    lengths = sorted({r["n"] for r in rows})
    lines = [
        "# An RNN's loop against causal softmax attention",
        "",
        f"Measured by `python -m instructor.benchmark_rnn_vs_attention` on "
        f"{datetime.now():%Y-%m-%d} on {cpu_name()}, torch {torch.__version__}, "
        f"{rows[0]['threads']} thread(s), load average {load_average()}, "
        f"float32, d = {rows[0]['d']}: notebook 08's `rnn_forward` (reference solution) and "
        "`F.scaled_dot_product_attention(X, X, X, is_causal=True)`, median of the runs after a "
        "warm-up. Written to `helpers/results/rnn_vs_attention.csv`, which notebook 08 plots.",
        "",
        "| n | RNN (ms) | attention (ms) | attention / RNN |",
        "| ---: | ---: | ---: | ---: |",
    ]
    for n in lengths:
        rnn, attention = seconds[("RNN", n)], seconds[("causal softmax attention", n)]
        lines.append(f"| {n} | {rnn * 1e3:.2f} | {attention * 1e3:.2f} | {attention / rnn:.2f} |")
    table = "\n".join(lines) + "\n"
    table_path.parent.mkdir(parents=True, exist_ok=True)
    table_path.write_text(table, encoding="utf-8")
    return table


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="runs per measurement")
    parser.add_argument("--csv", type=Path, default=RESULTS_CSV)
    parser.add_argument("--out", type=Path, default=BENCHMARKS / "rnn_vs_attention.md")
    args = parser.parse_args(argv)
    rows = benchmark_rnn_vs_attention(repeats=args.repeats)
    print(write_results(rows, args.csv, args.out))
    print(f"written to {args.csv} and {args.out}")


if __name__ == "__main__":
    main()
