"""``instructor.time_rule``: prose words are counted as its docstring says, and the rule adds
its terms and rounds up."""

from __future__ import annotations

from instructor.time_rule import prose_words, rule_minutes


def test_the_rule_counts_words_as_documented() -> None:
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    notebook = new_notebook(
        cells=[
            new_markdown_cell("## 1 · Two words\n\n- one `edge_index` $x_i$ -- |---|"),
            new_markdown_cell("$$\nA = QK^T\n$$\n\n```python\nnot prose here\n```\nthree"),
            new_code_cell("code is not prose"),
            new_markdown_cell("## 2 · Going further: optional\n\nskipped words here"),
            new_markdown_cell("### Still optional\n\nskipped"),
            new_markdown_cell("## Summary\n\nlast"),
        ]
    )
    # 1, Two, words, one, `edge_index`, three, Summary, last; not "##", "·", "-", "--",
    # "|---|", the math, the code, nor the Going further section.
    assert prose_words(notebook) == 8
    assert rule_minutes(0, 8) == 40 and rule_minutes(1, 8) == 45 and rule_minutes(750, 7) == 40
    # 3 concept questions (6 minutes) and a written answer (5): 40 + 11 -> 55.
    assert rule_minutes(0, 8, questions=3, written=1) == 55
    assert rule_minutes(0, 8, questions=2) == 45 and rule_minutes(0, 7, written=1) == 40
    # Three exercises (15 minutes) of 8 points: 40 + 15 -> 55.
    assert rule_minutes(0, 8, exercises=3) == 55


def test_a_written_answers_reference_is_not_prose() -> None:
    from nbformat.v4 import new_markdown_cell, new_notebook

    question = new_markdown_cell("**Written answer** (2 points, graded by hand) · Why?")
    answer = new_markdown_cell(
        "**Reference answer.** Because of many words here.",
        metadata={"nbgrader": {"solution": True, "grade": True, "points": 2}},
    )
    assert prose_words(new_notebook(cells=[question])) == 8
    assert prose_words(new_notebook(cells=[question, answer])) == 8
