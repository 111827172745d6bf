"""Notebook 10's text states what its runs print (issue 24).

The numbers of section 5 and of the written answer's reference come from the gradient-norm
run; the claims that bare attention layers make the vectors collapse (section 1) and that
encoder blocks keep them apart (section 4) from the spreads those runs print. The stored
outputs are the run's: nbval re-executes the notebook and compares them.
"""

from __future__ import annotations

import re

import pytest

from instructor import anatomy

NOTEBOOK = "10_transformer_block"
GRADIENT_LINE = re.compile(
    r"(?P<depth>\d+) blocks, (?P<arrangement>post-norm|pre-norm)\s*: block 1 / block \d+ = "
    r"(?P<first_over_last>\d+\.\d), largest / smallest = (?P<ratio>\d+\.\d)"
)
SPREAD_LINE = re.compile(r"after (?:layer|block) 6: (?:shape \(4, 6\), )?spread (\d\.\d+)")


@pytest.fixture(scope="module")
def cells() -> dict[str, tuple[str, str]]:
    """Cell id -> (its source with whitespace collapsed, its printed text)."""
    solution = anatomy.read_solution(NOTEBOOK)
    found = {}
    for cell in solution.cells:
        printed = "".join(
            o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream"
        )
        found[cell.get("id")] = (" ".join(cell.source.split()), printed)
    return found


@pytest.fixture(scope="module")
def gradients(cells: dict[str, tuple[str, str]]) -> dict[tuple[int, str], tuple[str, str]]:
    """(depth, arrangement) -> (block 1 / last block, largest / smallest), as printed."""
    printed = cells["e6f97175"][1]
    found = {
        (int(m["depth"]), m["arrangement"]): (m["first_over_last"], m["ratio"])
        for m in GRADIENT_LINE.finditer(printed)
    }
    assert set(found) == {(d, a) for d in (6, 48) for a in ("post-norm", "pre-norm")}, printed
    return found


def test_section_5_states_the_printed_ratios(cells, gradients) -> None:
    text = cells["4b29670d"][0]
    post6, pre6 = gradients[6, "post-norm"][1], gradients[6, "pre-norm"][1]
    post48_first, post48 = gradients[48, "post-norm"]
    pre48 = gradients[48, "pre-norm"][1]
    for claim in (
        f"largest / smallest {post6} for post-norm, {pre6} for pre-norm",
        f"(block 1 / block 48 = {post48_first}, largest / smallest {post48})",
        f"spreads by a factor of {pre48}",
        f"(a factor {post6} with 6 blocks, {post48} with 48)",
    ):
        assert claim in text, f"section 5 should say {claim!r}: the run printed {gradients}"
    # "block 48 gets about three times what block 1 gets"
    assert "about three times" in text and round(1 / float(post48_first)) == 3


def test_the_written_answer_states_the_printed_ratios(cells, gradients) -> None:
    answer = cells["written-pre-norm-answer"][0]
    post6, post48 = gradients[6, "post-norm"][1], gradients[48, "post-norm"][1]
    pre48 = gradients[48, "pre-norm"][1]
    assert f"largest / smallest {post6} with 6 blocks, {post48} with 48" in answer
    assert f"({pre48} with 48 blocks)" in answer


def test_attention_alone_collapses_and_blocks_keep_the_vectors_apart(cells) -> None:
    bare = float(SPREAD_LINE.search(cells["f6192ffe"][1]).group(1))
    blocks = float(SPREAD_LINE.search(cells["34e21ff5"][1]).group(1))
    assert bare < 0.01, "section 1 says six attention layers make the four vectors one"
    assert blocks > 0.3, "section 4 says six encoder blocks keep the four vectors apart"
