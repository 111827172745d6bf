"""What a notebook prints does not depend on the CPU it runs on.

nbval compares every stored output of ``solutions/`` with a fresh run, so a cell that prints
floating-point noise (the difference between two ways of computing the same thing, in the
last digits) passes on the machine that executed it and fails on a CPU whose kernels round
differently: torch picks its kernels by the CPU's vector units (``ATEN_CPU_CAPABILITY``:
``default``, ``avx2``, ``avx512`` on x86), and the BLAS and the thread count change the order
of sums. Comparisons print a bound or a verdict instead ("equal to ... within 1e-5: True",
"below 1e-09: True"), never the noise.

Two checks:

- **static**, on every stored output of every solution notebook (cheap, no kernel). The rule:
  a number printed *with mantissa digits* (``6.94e-11``, ``0.0e+00``, ``0.0000012``) whose
  magnitude is below ``1e-5`` is refused, with the notebook, the cell and the number. Below
  ``1e-5`` (float32's rounding of a number near 1 is ``6e-8``; a difference of two ways of
  computing it lies anywhere below about ``1e-5``) such digits are noise, or sit next to it.
  Allowed: a bound written without mantissa digits (``1e-12``, ``1e-06``: ``f"{bound:.0e}"``
  or ``g`` of a power of ten), which is a literal the code chose, not a measurement; a zero
  written in fixed point (``0.0000``, a rounded display); and any number whose value the
  cell's own source writes as a literal (an input echoed back, like ``+ 1e-12`` in a label).
- **dynamic**: nbval on the notebooks that used to print noise, in a fresh process under each
  ``ATEN_CPU_CAPABILITY`` that torch offers on this CPU other than the one it picks by itself
  (a capability the CPU cannot run is skipped, saying so: a probe that runs some of its
  kernels falls back to another one, or dies of SIGILL). About 30 s per capability.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from functools import cache

import nbformat
import pytest

from instructor import anatomy, registry
from instructor.paths import COURSE_ROOT

NOISE_BELOW = 1e-5
NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")
TEXT_OUTPUTS = ("text/plain", "text/markdown", "text/html", "text/latex")

# The notebooks that printed noise before their comparisons printed verdicts (issue 21):
# nbval runs them under every other CPU capability.
AFFECTED = (
    "02_soft_select",
    "07_cnn_vs_attention",
    "08_rnn_vs_attention",
    "09_gnn",
    "10_transformer_block",
)
# What ATEN_CPU_CAPABILITY accepts (torch's CPU kernel dispatch): x86 and ARM.
CAPABILITIES = ("default", "avx2", "avx512", "sve256")


def output_texts(cell: nbformat.NotebookNode) -> list[str]:
    texts = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            texts.append(output.text)
        elif "data" in output:
            texts.extend(output.data[kind] for kind in TEXT_OUTPUTS if kind in output.data)
    return texts


def is_noise(token: str) -> bool:
    """Whether a printed number is below NOISE_BELOW and written with mantissa digits."""
    value = float(token)
    if abs(value) >= NOISE_BELOW:
        return False
    mantissa, _, exponent = token.lower().lstrip("+-").partition("e")
    if "." not in mantissa:
        return False  # a bound such as 1e-12: no digits beyond its power of ten
    return value != 0 or bool(exponent)  # 0.0e+00 is a measured zero; 0.0000 a rounded display


def noisy_numbers(notebook: nbformat.NotebookNode) -> list[tuple[int, str, str]]:
    """(cell index, cell id, number) of each printed number the rule refuses."""
    found = []
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        literals = {float(token) for token in NUMBER.findall(cell.source)}
        for text in output_texts(cell):
            for token in NUMBER.findall(text):
                if is_noise(token) and float(token) not in literals:
                    found.append((index, cell.get("id", "?"), token))
    return found


@pytest.mark.parametrize("assignment", registry.load().ids)
def test_no_stored_output_prints_noise(assignment: str) -> None:
    found = noisy_numbers(anatomy.read_solution(assignment))
    assert not found, (
        f"solutions/{assignment} prints numbers below {NOISE_BELOW:g} with their digits, which "
        "depend on the CPU's kernels (nbval fails elsewhere): print a bound or a verdict "
        '(f"equal within 1e-6: {bool(error < 1e-6)}"), then `make execute`: '
        + "; ".join(f"cell {index} ({cell_id}): {token}" for index, cell_id, token in found)
    )


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        # What the notebooks printed before (issue 21), each refused.
        ("max |soft_select - hard_select| = 6.94e-11", ["6.94e-11"]),
        ("T = 0.001   max |soft_select - hard_select| = 1.33e-108", ["1.33e-108"]),
        ("alpha = 20: max |attention - conv| = 2.6e-09", ["2.6e-09"]),
        ("largest difference: 0.0e+00", ["0.0e+00"]),
        ("max |graph_attention - TransformerConv| = 1.1e-16", ["1.1e-16"]),
        ("post-norm: largest difference to nn.TransformerEncoderLayer 4.8e-07", ["4.8e-07"]),
        ("tensor([1.0000e+00, -2.3000e-07])", ["-2.3000e-07"]),
        ("error 0.0000012", ["0.0000012"]),
        # Bounds, verdicts, rounded displays and ordinary numbers pass.
        ("equal to nn.TransformerEncoderLayer within 1e-5: True", []),
        ("max |soft_select - hard_select| below 1e-09: True", []),
        ("tensor([0.0000, 0.2500, 0.7500])", []),
        ("edge 0 -> 1: weight 1.92e-05, loss 0.693", []),
    ],
)
def test_the_rule(text: str, refused: list[str]) -> None:
    cell = nbformat.v4.new_code_cell("print(...)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    notebook = nbformat.v4.new_notebook(cells=[cell])
    assert [token for _, _, token in noisy_numbers(notebook)] == refused


def test_a_literal_of_the_source_is_allowed() -> None:
    """An input the code writes itself (here 1.5e-7) may be printed back."""
    cell = nbformat.v4.new_code_cell("for eps in [0.0, 1.5e-7]:\n    print(eps)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="0.0\n1.5e-07\n")]
    assert noisy_numbers(nbformat.v4.new_notebook(cells=[cell])) == []


def capability_env(capability: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    if capability is not None:
        env["ATEN_CPU_CAPABILITY"] = capability
    return env


PROBE = """\
import torch
x = torch.linspace(-4, 4, 4099, dtype=torch.float32)
torch.softmax(x, 0).sum().item(), (x.double().exp() @ x.double()).item()
print(torch.backends.cpu.get_cpu_capability())
"""
"""Names the kernels torch takes, after running some of them: torch 2.13 takes the kernels
``ATEN_CPU_CAPABILITY`` names whether or not the CPU has their instructions, and a kernel
the CPU cannot run kills the process (SIGILL: an nbval cell then waits for its dead kernel
until the cell's timeout)."""


@cache
def capability_taken(capability: str | None) -> str:
    """The kernels torch uses in a fresh process under ``ATEN_CPU_CAPABILITY=capability``
    (``None``: unset, the CPU's own), or ``"none: <why>"`` where the CPU cannot run them."""
    run = subprocess.run(
        [sys.executable, "-c", PROBE],
        env=capability_env(capability),
        capture_output=True,
        text=True,
        timeout=120,
    )
    if run.returncode < 0:
        return f"none: its kernels killed the process ({signal.Signals(-run.returncode).name})"
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout.split()[-1].lower()


@pytest.mark.xdist_group("cpu_capabilities")
@pytest.mark.parametrize("capability", CAPABILITIES)
def test_nbval_passes_under_every_cpu_capability(capability: str) -> None:
    """nbval of the affected notebooks passes with torch's kernels for another CPU."""
    own = capability_taken(None)
    if capability == own:
        pytest.skip(f"{capability} is this CPU's own: the nbval run of `make test` covers it")
    taken = capability_taken(capability)
    if taken != capability:
        pytest.skip(f"this CPU cannot run torch's {capability} kernels (torch takes {taken})")
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:xdist",
        "--nbval",
        "--nbval-current-env",
        "--nbval-cell-timeout=120",
        *(f"solutions/{assignment}" for assignment in AFFECTED),
    ]
    run = subprocess.run(
        command,
        cwd=COURSE_ROOT,
        env=capability_env(capability),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, (
        f"nbval fails under ATEN_CPU_CAPABILITY={capability}: a stored output depends on the "
        f"CPU's kernels; print a bound or a verdict instead.\n{run.stdout[-6000:]}"
    )
