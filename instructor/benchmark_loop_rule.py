"""How far notebook 08's outside check of "no loop over positions" is from each answer.

    python -m instructor.benchmark_loop_rule

``check_without_loop_over_positions`` calls ``causal_linear_attention`` on 4,194,304
positions (d_k = d_v = 1, float64) under a time limit of 5 s that the class grader keeps.
This times, on one CPU thread, the reference solution on those inputs, a loop that makes
torch calls for every position (timed on 65,536 positions and scaled to 4,194,304: it
would run past the limit) and a loop over Python floats, which makes no torch call per
position, and writes ``benchmarks/loop_rule.md``. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from instructor.anatomy import reference_functions
from instructor.benchmark_rnn_vs_attention import cpu_name, load_average
from instructor.paths import BENCHMARKS

__all__ = ["LIMIT_SECONDS", "POSITIONS", "main"]

POSITIONS = 2**22
"""The length ``check_without_loop_over_positions`` is given in notebook 08."""
LIMIT_SECONDS = 5.0
"""Its time limit there."""
SAMPLE = 2**16
"""Positions the torch loop is timed on (it is then scaled to :data:`POSITIONS`)."""


def _torch_loop(Q, K, V, eps=1e-6):  # type: ignore[no-untyped-def]
    import torch
    import torch.nn.functional as F

    phi_q, phi_k = F.elu(Q) + 1, F.elu(K) + 1
    S = torch.zeros(Q.shape[-1], V.shape[-1], dtype=Q.dtype)
    z = torch.zeros(Q.shape[-1], dtype=Q.dtype)
    rows = []
    for i in range(Q.shape[-2]):
        S = S + phi_k[i, :, None] * V[i, None, :]
        z = z + phi_k[i]
        rows.append((phi_q[i, :, None] * S).sum(-2) / ((phi_q[i] * z).sum(-1, keepdim=True) + eps))
    return torch.stack(rows)


def _float_loop(Q, K, V, eps=1e-6):  # type: ignore[no-untyped-def]
    import torch
    import torch.nn.functional as F

    phi_q, phi_k = (F.elu(Q) + 1)[:, 0].tolist(), (F.elu(K) + 1)[:, 0].tolist()
    s = z = 0.0
    out = []
    for q, k, v in zip(phi_q, phi_k, V[:, 0].tolist(), strict=True):
        s += k * v
        z += k
        out.append(q * s / (q * z + eps))
    return torch.tensor(out, dtype=Q.dtype)[:, None]


def _seconds(function: Callable, n: int) -> float:
    import torch

    generator = torch.Generator().manual_seed(n)
    Q, K, V = (torch.randn(n, 1, generator=generator, dtype=torch.float64) for _ in range(3))
    start = time.perf_counter()
    function(Q, K, V)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=BENCHMARKS / "loop_rule.md")
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    reference = reference_functions("08_rnn_vs_attention", ("causal_linear_attention",))
    timed = {
        "reference solution (cumsum)": _seconds(reference["causal_linear_attention"], POSITIONS),
        "a loop of torch calls per position (scaled from 65,536 positions)": (
            _seconds(_torch_loop, SAMPLE) * POSITIONS / SAMPLE
        ),
        "a loop over Python floats (`.tolist()`)": _seconds(_float_loop, POSITIONS),
    }
    lines = [
        "# Notebook 08's loop rule, decided from outside",
        "",
        f"Measured by `python -m instructor.benchmark_loop_rule` on {datetime.now():%Y-%m-%d} "
        f"on {cpu_name()}, torch {torch.__version__}, 1 thread, load average {load_average()}: "
        f"`causal_linear_attention` on {POSITIONS:,} positions, d_k = d_v = 1, float64, one "
        f"run each. `check_without_loop_over_positions` fails an answer that has not ended "
        f"within {LIMIT_SECONDS:g} s.",
        "",
        "| answer | seconds | within the limit |",
        "| --- | ---: | --- |",
    ]
    for answer, seconds in timed.items():
        lines.append(f"| {answer} | {seconds:.2f} | {'yes' if seconds < LIMIT_SECONDS else 'no'} |")
    table = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(table, encoding="utf-8")
    print(table)
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
