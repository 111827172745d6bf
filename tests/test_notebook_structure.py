"""Every instructor notebook follows the course's anatomy (CONTRIBUTING.md) and contract.

The contract below is the syllabus's list of graded functions with their parameters
(COURSE.md): students, graders and later notebooks rely on these names.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict

import nbformat
import pytest

from helpers.grading import SOLUTIONS, assignments
from helpers.setup import badge_markdown, colab_setup_source, colab_url

GRADED_FUNCTIONS: dict[str, dict[str, list[str]]] = {
    "01_vector_sets": {
        "one_hot": ["tokens", "vocab"],
        "frame_signal": ["signal", "frame_length", "hop_length"],
        "context_window": ["X", "k"],
    },
    "02_soft_select": {
        "hard_select": ["q", "K", "V"],
        "dot_scores": ["q", "K"],
        "additive_scores": ["q", "K", "W_q", "W_k", "w"],
        "softmax": ["x", "axis"],
        "soft_select": ["q", "K", "V", "temperature"],
    },
    "03_matrix_form": {
        "self_attention_columns": ["I", "W_q", "W_k", "W_v"],
        "attention": ["Q", "K", "V", "mask"],
        "causal_mask": ["n"],
    },
    "04_multi_head": {
        "split_heads": ["X", "num_heads"],
        "merge_heads": ["X"],
        "MultiHeadSelfAttention": [
            "__init__(self, d_model, num_heads, bias)",
            "forward(self, X, mask)",
        ],
    },
    "05_positional_encoding": {
        "sinusoidal_encoding": ["num_positions", "d_model"],
        "relative_positions": ["n", "max_distance"],
        "apply_rope": ["x", "positions"],
    },
    "06_efficient_attention": {
        "local_mask": ["n", "window"],
        "stride_mask": ["n", "stride"],
        "global_mask": ["n", "global_tokens"],
        "longformer_mask": ["n", "window", "stride", "global_tokens"],
        "bigbird_mask": ["n", "window", "stride", "global_tokens", "num_random", "generator"],
        "sliding_window_attention": ["Q", "K", "V", "window"],
        "linear_attention": ["Q", "K", "V", "eps"],
    },
    "07_cnn_vs_attention": {
        "pixels_as_vectors": ["img"],
        "patchify": ["img", "patch_size"],
        "receptive_field_mask": ["height", "width", "kernel_size"],
    },
    "08_rnn_vs_attention": {
        "rnn_forward": ["X", "W_x", "W_h", "b", "h0"],
        "causal_linear_attention": ["Q", "K", "V", "eps"],
        "linear_attention_recurrent": ["Q", "K", "V", "eps"],
    },
    "09_gnn": {
        "adjacency_mask": ["edge_index", "num_nodes", "add_self_loops"],
        "graph_attention": ["X", "edge_index", "W_q", "W_k", "W_v"],
    },
}

NBGRADER_KEYS = {
    "grade", "solution", "locked", "task", "grade_id", "points", "checksum", "cell_type",
    "schema_version",
}  # fmt: skip

ASSIGNMENTS = assignments()


def load(assignment: str) -> nbformat.NotebookNode:
    return nbformat.read(SOLUTIONS / assignment / f"{assignment}.ipynb", 4)


def nbgrader(cell: nbformat.NotebookNode) -> dict:
    return cell.metadata.get("nbgrader", {})


def defined_names(source: str) -> list[tuple[str, list[str]]]:
    """(name, parameters) of each top-level def/class in a cell: a function's parameter
    names; a class's public methods as ``name(parameters)``."""
    tree = ast.parse(source)
    found = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found.append((node.name, [a.arg for a in node.args.args]))
        elif isinstance(node, ast.ClassDef):
            methods = [
                f"{m.name}({', '.join(a.arg for a in m.args.args)})"
                for m in node.body
                if isinstance(m, ast.FunctionDef) and (m.name == "__init__" or m.name[0] != "_")
            ]
            found.append((node.name, methods))
    return found


def test_the_syllabus_notebooks_exist() -> None:
    missing = sorted(set(GRADED_FUNCTIONS) - set(ASSIGNMENTS))
    assert not missing, f"no instructor notebook for {missing}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_opening_cells(assignment: str) -> None:
    cells = load(assignment).cells
    assert cells[0].cell_type == "markdown" and cells[0].source.startswith(
        badge_markdown(assignment)
    ), "the first cell must start with helpers.setup.badge_markdown(assignment)"
    intro = cells[0].source.lower()
    assert "goal" in intro and re.search(r"\d+\s*minutes", intro), (
        "the first cell states the learning goals and the estimated time in minutes"
    )
    assert cells[1].cell_type == "code" and cells[1].source.startswith(colab_setup_source()), (
        "the second cell must be helpers.setup.colab_setup_source()"
    )
    assert any("start_notebook()" in c.source for c in cells[2:4] if c.cell_type == "code"), (
        "the imports cell calls helpers.setup.start_notebook() to seed everything"
    )


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_closing_sections(assignment: str) -> None:
    headings = [
        line.lstrip("#").strip().lower()
        for cell in load(assignment).cells
        if cell.cell_type == "markdown"
        for line in cell.source.splitlines()
        if line.startswith("#")
    ]
    assert "summary" in headings, "a '## Summary' section is missing"
    assert "further reading" in headings, "a '## Further reading' section is missing"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_graded_cells_follow_the_contract(assignment: str) -> None:
    cells = load(assignment).cells
    ids = [nbgrader(c)["grade_id"] for c in cells if nbgrader(c)]
    assert len(ids) == len(set(ids)), f"duplicate grade_ids: {ids}"
    for cell in cells:
        if nbgrader(cell):
            assert set(nbgrader(cell)) <= NBGRADER_KEYS, f"unknown nbgrader keys in {cell.id}"

    solutions = {}
    for cell in cells:
        if nbgrader(cell).get("solution"):
            definitions = defined_names(cell.source)
            assert len(definitions) == 1, (
                f"solution cell {nbgrader(cell)['grade_id']} must hold exactly one def/class"
            )
            name, parameters = definitions[0]
            assert nbgrader(cell)["grade_id"] == name, "a solution cell's grade_id is its name"
            assert "### BEGIN SOLUTION" in cell.source
            solutions[name] = parameters
    expected = GRADED_FUNCTIONS.get(assignment)
    if expected is not None:
        assert solutions == expected, "graded functions or their parameters differ from COURSE.md"

    points: dict[str, float] = defaultdict(float)
    hidden: dict[str, bool] = defaultdict(bool)
    for cell in cells:
        meta = nbgrader(cell)
        if meta.get("grade"):
            match = re.fullmatch(r"test_(.+?)(?:_(\d+))?", meta["grade_id"])
            assert match and match.group(1) in solutions, (
                f"test cell {meta['grade_id']} does not name a graded function"
            )
            assert meta.get("locked"), f"test cell {meta['grade_id']} must be locked"
            points[match.group(1)] += meta["points"]
            hidden[match.group(1)] |= "### BEGIN HIDDEN TESTS" in cell.source
            visible = cell.source.split("### BEGIN HIDDEN TESTS")[0]
            assert "check_" in visible or "assert" in visible, (
                f"{meta['grade_id']} has no visible test"
            )
    for name in solutions:
        assert 1 <= points[name] <= 3, f"{name} is worth {points[name]} points, not 1 to 3"
        assert hidden[name], f"{name} has no hidden tests"
    # 8 to 15 points per notebook, except where the syllabus lists too few functions to reach
    # 8 at 3 points each (09 has two): the function list wins (README, "Decisions").
    floor = min(8, 3 * len(solutions))
    total = sum(points.values())
    assert floor <= total <= 15, f"the notebook is worth {total} points, not {floor} to 15"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_stored_outputs_are_clean(assignment: str) -> None:
    """The committed solution is executed top to bottom, without errors or warnings."""
    code = [c for c in load(assignment).cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), (
        f"solutions/{assignment} has unexecuted cells: run `make execute NB={assignment}`"
    )
    timed = [c.id for c in code if "execution" in c.metadata]
    assert not timed, (
        f"cells {timed} store execution timestamps, which change on every run: "
        "execute with `make execute` (record_timing=False)"
    )
    assert "widgets" not in load(assignment).metadata, (
        f"solutions/{assignment} stores widget state (hundreds of lines that change with every "
        "widget): execute with `make execute` (store_widget_state=False)"
    )
    counts = [c.execution_count for c in code]
    assert counts == list(range(1, len(code) + 1)), "cells were not executed in order once each"
    for cell in code:
        for output in cell.outputs:
            assert output.output_type != "error", f"cell {cell.id} stores an error"
            assert output.get("name") != "stderr", f"cell {cell.id} writes to stderr"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_readme_links_the_notebook_and_its_colab_badge(assignment: str) -> None:
    readme = (SOLUTIONS.parent / "README.md").read_text(encoding="utf-8")
    assert f"(notebooks/{assignment}/{assignment}.ipynb)" in readme
    assert f"({colab_url(assignment)})" in readme
