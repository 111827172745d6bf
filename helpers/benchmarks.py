"""Measure what the course promises about speed and memory; write the tables.

    python -m helpers.benchmarks notebooks          # every notebook -> benchmarks/notebooks.md
    python -m helpers.benchmarks notebooks 03_matrix_form     # some of them
    python -m helpers.benchmarks attention          # notebook 06: attention against length
    make benchmark                                  # both

``notebooks`` measures, for each instructor notebook, in a fresh kernel each time:

- **execute**: wall time of running the notebook top to bottom with nbclient, kernel
  start included (what a student waits for with "Run all");
- **cells**: the sum of the cells' own execution times (the notebook's compute, without
  kernel start);
- **autograde**: wall time of ``nbgrader autograde`` on one submission of the reference
  solution in a temporary course (what one student costs an instructor).

``attention`` times dense and efficient attention for growing sequence lengths (see
:func:`benchmark_attention`); notebook 06 plots its CSV.

Timings are medians over repeated runs. These are measurements, not tests: the suite never
asserts on time. :func:`measure` is also what the notebooks use for their small live
measurements.
"""

from __future__ import annotations

import argparse
import csv
import math
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

# nbformat and nbgrader are imported where needed: notebooks import `measure` from here,
# and should not pay for them.
ROOT = Path(__file__).resolve().parents[1]

__all__ = [
    "Measurement",
    "NotebookTiming",
    "benchmark_attention",
    "main",
    "measure",
    "peak_memory_mib",
    "time_autograde",
    "time_execution",
    "time_notebook",
    "write_table",
]

TARGET_SECONDS = 15.0
"""Each notebook should run in at most this long on a 2-core laptop, kernel start included."""

ATTENTION_CSV = ROOT / "helpers" / "results" / "efficient_attention.csv"
"""Shipped inside the package, so that notebook 06 can plot it on Colab too."""


# -- measuring one call -------------------------------------------------------------------


@dataclass(frozen=True)
class Measurement:
    """Median wall time of a call, and the peak extra memory it needed."""

    seconds: float
    peak_mib: float | None


_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")
_MMAP_THRESHOLD, _TRIM_THRESHOLD = -3, -1  # mallopt parameters (glibc's malloc.h)


def _return_freed_memory_to_the_os() -> None:
    """Make freed memory leave the resident set, so that the next peak is a real one.

    glibc keeps freed blocks for reuse and raises its mmap threshold after a large free;
    later allocations then reuse resident pages and add nothing to the high-water mark.
    A fixed, small mmap threshold gives every large tensor its own mapping, returned on free.
    """
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.mallopt(_MMAP_THRESHOLD, 64 * 1024)
        libc.mallopt(_TRIM_THRESHOLD, 64 * 1024)
        libc.malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: measure as is
        pass


def _status_kib(field: str) -> int:
    for line in _STATUS.read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def peak_memory_mib(function: Callable[[], Any]) -> float | None:
    """Peak resident memory that ``function()`` adds to the process, in MiB.

    Linux only: it resets the process's high-water mark (``/proc/self/clear_refs``), runs the
    call, and reads the new mark against the memory in use before. Returns ``None`` where the
    OS cannot tell (macOS, Windows, some sandboxes). Memory that torch frees before returning
    counts: the peak is what matters for "does it fit".
    """
    _return_freed_memory_to_the_os()
    try:
        _CLEAR_REFS.write_text("5")
        before = _status_kib("VmRSS")
    except OSError:
        return None
    function()
    return max(_status_kib("VmHWM") - before, 0) / 1024


def measure(function: Callable[..., Any], *args: Any, repeats: int = 3) -> Measurement:
    """Time ``function(*args)`` (median of ``repeats`` runs after a warm-up run), then
    record the peak memory of one more run (:func:`peak_memory_mib`).

    Memory comes last because measuring it makes glibc hand freed memory back to the OS,
    which makes every later large allocation in the process a little slower: compare
    timings taken in the same process, or run each measurement in a fresh one (as the
    ``attention`` command does).
    """
    function(*args)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function(*args)
        times.append(time.perf_counter() - start)
    return Measurement(statistics.median(times), peak_memory_mib(lambda: function(*args)))


# -- notebooks ----------------------------------------------------------------------------


@dataclass(frozen=True)
class NotebookTiming:
    """Median timings of one notebook, in seconds."""

    assignment: str
    execute: float
    cells: float
    autograde: float


def _cell_seconds(notebook: Any) -> float:
    """Sum of the cells' execution times, from the timestamps nbclient records."""
    total = 0.0
    for cell in notebook.cells:
        timing = cell.metadata.get("execution", {})
        start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
        if start and end:
            total += (_parse_time(end) - _parse_time(start)).total_seconds()
    return total


def _parse_time(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def time_execution(assignment: str) -> tuple[float, float]:
    """Execute ``solutions/<assignment>`` in a fresh kernel; return (wall s, cells s)."""
    import nbformat
    from nbclient import NotebookClient

    from helpers.grading import SOLUTIONS

    path = SOLUTIONS / assignment / f"{assignment}.ipynb"
    notebook = nbformat.read(path, 4)
    client = NotebookClient(
        notebook, timeout=600, record_timing=True, resources={"metadata": {"path": path.parent}}
    )
    start = time.perf_counter()
    client.execute()
    return time.perf_counter() - start, _cell_seconds(notebook)


def time_autograde(assignment: str) -> float:
    """Wall time of ``nbgrader autograde`` of one reference-solution submission."""
    from helpers.grading import Course

    with tempfile.TemporaryDirectory() as folder:
        course = Course(Path(folder), assignment)
        course.generate()
        course.submit("benchmark_student", course.solved())
        start = time.perf_counter()
        course.autograde(command_line=True)
        return time.perf_counter() - start


def time_notebook(assignment: str, repeats: int) -> NotebookTiming:
    """Median execute, cells and autograde times of one notebook."""
    runs = [time_execution(assignment) for _ in range(repeats)]
    grades = [time_autograde(assignment) for _ in range(repeats)]
    return NotebookTiming(
        assignment,
        execute=statistics.median(r[0] for r in runs),
        cells=statistics.median(r[1] for r in runs),
        autograde=statistics.median(grades),
    )


def write_table(timings: list[NotebookTiming], path: Path, repeats: int) -> str:
    """Write the markdown table of ``timings`` to ``path`` and return it."""
    import os
    import platform

    import torch

    lines = [
        "# Notebook timings",
        "",
        f"Measured by `make benchmark` on {datetime.now():%Y-%m-%d}: {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, torch {torch.__version__}; median of {repeats} "
        f"run(s). Target: each notebook executes in at most {TARGET_SECONDS:.0f} s.",
        "",
        "| notebook | execute (s, kernel start included) | cells only (s) | autograde one "
        "submission (s) | within target |",
        "| --- | ---: | ---: | ---: | :---: |",
    ]
    for t in timings:
        ok = "yes" if t.execute <= TARGET_SECONDS else "**no**"
        lines.append(
            f"| {t.assignment} | {t.execute:.1f} | {t.cells:.1f} | {t.autograde:.1f} | {ok} |"
        )
    table = "\n".join(lines) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(table, encoding="utf-8")
    return table


# -- notebook 06: attention against sequence length ----------------------------------------

ATTENTION_METHODS = ("dense SDPA", "dense + local mask", "sliding window", "linear")
ATTENTION_FUNCTIONS = ("local_mask", "sliding_window_attention", "linear_attention")


def reference_functions(assignment: str, names: tuple[str, ...]) -> dict[str, Callable]:
    """The instructor's solutions of ``names``, run from ``solutions/`` (never copied here).

    The notebook's imports cell (the one that calls ``start_notebook``) runs first, so the
    solutions see the names they expect (IPython magics such as ``%matplotlib`` dropped).
    """
    import nbformat

    from helpers.grading import SOLUTIONS, solution_sources

    notebook = nbformat.read(SOLUTIONS / assignment / f"{assignment}.ipynb", 4)
    namespace: dict[str, Any] = {}
    imports = [
        "\n".join(line for line in c.source.splitlines() if not line.lstrip().startswith("%"))
        for c in notebook.cells
        if "start_notebook(" in c.source
    ]
    exec(compile("\n".join(imports), "imports", "exec"), namespace)  # noqa: S102
    sources = solution_sources(notebook)
    for name in names:
        exec(compile(sources[name], name, "exec"), namespace)  # noqa: S102
    return {name: namespace[name] for name in names}


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

    csv_path.parent.mkdir(parents=True, exist_ok=True)
    with csv_path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: f"{v:.6g}" if isinstance(v, float) else v for k, v in row.items()})

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


# -- command line -------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    notebooks = commands.add_parser("notebooks", help="time every notebook and its autograde")
    notebooks.add_argument("names", nargs="*", help="assignments to time (default: all)")
    notebooks.add_argument("--repeats", type=int, default=3, help="runs per measurement")
    notebooks.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "notebooks.md")
    attention = commands.add_parser("attention", help="notebook 06: attention vs length")
    attention.add_argument("--repeats", type=int, default=3, help="runs per measurement")
    attention.add_argument("--csv", type=Path, default=ATTENTION_CSV)
    attention.add_argument(
        "--out", type=Path, default=ROOT / "benchmarks" / "efficient_attention.md"
    )
    args = parser.parse_args(argv)

    if args.command == "attention":
        rows = benchmark_attention(repeats=args.repeats)
        print(write_attention_results(rows, args.csv, args.out))
        print(f"written to {args.csv}, {args.out} and {args.out.with_suffix('.png')}")
        return

    from helpers.grading import assignments

    known = assignments()
    unknown = sorted(set(args.names) - set(known))
    if unknown:
        parser.error(f"no such notebook {unknown}; known: {known}")
    from tqdm.auto import tqdm

    timings = []
    with tqdm(args.names or known, desc="notebooks", unit="notebook") as progress:
        for assignment in progress:
            progress.set_postfix_str(assignment)
            timings.append(time_notebook(assignment, args.repeats))
    print(write_table(timings, args.out, args.repeats))
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
