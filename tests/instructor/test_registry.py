"""instructor.registry: course.toml read into typed records, and its mistakes named."""

from __future__ import annotations

import re

import pytest

from instructor import registry
from instructor.registry import RegistryError

MINIMAL = """
[course]
title = "T"
repository = "owner/name"
ref = "v1.0.0"
function_points = [1, 3]
notebook_points = [8, 15]
max_exercises = 5
"""

ENTRY = """
[[notebook]]
id = "{id}"
title = "Title {id}"
minutes = 30

[[notebook.exercise]]
name = "f"
points = 3
"""

QUESTIONS = """
[[notebook.question]]
name = "q_{what}"
kind = "choice"
points = 1

[[notebook.question]]
name = "q_{what}_count"
kind = "number"
points = 1

[[notebook.question]]
name = "written_{what}"
kind = "written"
points = 2
"""


def test_the_course_registry_loads() -> None:
    course = registry.load()
    assert course.ids[0] == "01_vector_sets" and course.ids == sorted(course.ids)
    softmax = course.notebook("02_soft_select").exercise("softmax")
    assert 1 <= softmax.points <= 3 and softmax.cell_points == (softmax.points,)
    one_hot = course.notebook("01_vector_sets").exercise("one_hot")
    assert len(one_hot.cell_points) == 2 and one_hot.points == sum(one_hot.cell_points)
    assert course.notebook("09_gnn").colab_packages[0].startswith("torch-geometric==")
    assert course.ref.startswith("v")


def test_questions_are_read_and_counted_in_the_points() -> None:
    course = registry.parse(MINIMAL + ENTRY.format(id="01_a") + QUESTIONS.format(what="a"))
    notebook = course.notebook("01_a")
    assert [(q.name, q.kind, q.points) for q in notebook.questions] == [
        ("q_a", "choice", 1),
        ("q_a_count", "number", 1),
        ("written_a", "written", 2),
    ]
    assert notebook.points == 3 + 1 + 1 + 2 and notebook.function_points == 3
    assert [q.name for q in notebook.concept_questions] == ["q_a", "q_a_count"]
    assert [q.name for q in notebook.written_answers] == ["written_a"]
    assert notebook.question("written_a").kind == "written"
    with pytest.raises(RegistryError, match="no question 'q_b'"):
        notebook.question("q_b")
    # A notebook without questions has none.
    assert registry.parse(MINIMAL + ENTRY.format(id="01_a")).notebook("01_a").questions == ()


def test_the_course_registry_holds_questions() -> None:
    course = registry.load()
    for notebook in course.notebooks:
        assert notebook.points == notebook.function_points + sum(
            q.points for q in notebook.questions
        )
    assert course.notebook("01_vector_sets").concept_questions


def test_records_compute_heading_number_and_points() -> None:
    course = registry.parse(MINIMAL + ENTRY.format(id="01_a"))
    notebook = course.notebook("01_a")
    assert notebook.heading == "# 01 · Title 01_a" and notebook.number == "01"
    assert notebook.points == 3
    # The floor holds for every notebook, however few its functions.
    assert course.notebook_point_range(notebook) == (8, 15)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (MINIMAL.replace('ref = "v1.0.0"\n', ""), "no 'ref'"),
        (MINIMAL + ENTRY.format(id="01_a") + ENTRY.format(id="01_a"), "more than once"),
        (MINIMAL + ENTRY.format(id="02_b") + ENTRY.format(id="01_a"), "out of order"),
        (MINIMAL + ENTRY.format(id="01_a").replace("minutes = 30\n", ""), "no 'minutes'"),
        (MINIMAL + ENTRY.format(id="01_a").replace("points = 3\n", ""), "no 'points'"),
        (
            MINIMAL.replace("max_exercises = 5", "max_exercises = 1")
            + ENTRY.format(id="01_a")
            + '[[notebook.exercise]]\nname = "g"\npoints = 2\n',
            "01_a has 2 graded functions; a notebook has at most 1 \\(max_exercises\\)",
        ),
        (
            MINIMAL
            + ENTRY.format(id="01_a")
            + QUESTIONS.format(what="a").replace('"number"', '"essay"'),
            "kind 'essay'; the kinds are 'choice', 'number', 'written'",
        ),
        (
            MINIMAL
            + ENTRY.format(id="01_a")
            + QUESTIONS.format(what="a").replace('kind = "choice"\n', ""),
            "a \\[\\[notebook.question\\]\\] of 01_a has no 'kind'",
        ),
        (
            MINIMAL
            + ENTRY.format(id="01_a")
            + QUESTIONS.format(what="a").replace('"choice"\npoints = 1', '"choice"\npoints = 2'),
            "'q_a' of 01_a is worth 2; a choice question is worth 1",
        ),
        (
            MINIMAL
            + ENTRY.format(id="01_a")
            + QUESTIONS.format(what="a").replace('"written"\npoints = 2', '"written"\npoints = 1'),
            "a written question is worth 2",
        ),
        (
            MINIMAL
            + ENTRY.format(id="01_a")
            + QUESTIONS.format(what="a").replace("q_a_count", "a_count"),
            "name it q_<what it asks>",
        ),
        (
            MINIMAL
            + ENTRY.format(id="01_a")
            + QUESTIONS.format(what="a").replace("written_a", "q_w"),
            "name it written_<what it asks>",
        ),
        (
            MINIMAL
            + ENTRY.format(id="01_a")
            + QUESTIONS.format(what="a")
            + ENTRY.format(id="02_b")
            + QUESTIONS.format(what="a"),
            "the question 'q_a' in 01_a and in 02_b",
        ),
        (
            MINIMAL
            + ENTRY.format(id="01_a")
            + QUESTIONS.format(what="a")
            + QUESTIONS.format(what="a"),
            "the question 'q_a' twice",
        ),
    ],
)
def test_malformed_registries_are_named(text: str, message: str) -> None:
    with pytest.raises(RegistryError, match=message):
        registry.parse(text)


def test_visible_cases_are_read_and_an_undeclared_list_is_none() -> None:
    cases = (
        "visible_cases = [\n"
        "  { case = \"a window wider than the sequence\", when = 'window >= n' },\n"
        "  { case = \"an empty list\", when = 'len(tokens) == 0' },\n]\n"
    )
    course = registry.parse(MINIMAL + ENTRY.format(id="01_a") + cases)
    assert course.notebook("01_a").exercise("f").visible_cases == (
        registry.VisibleCase("a window wider than the sequence", "window >= n"),
        registry.VisibleCase("an empty list", "len(tokens) == 0"),
    )
    none = registry.parse(MINIMAL + ENTRY.format(id="01_a") + "visible_cases = []\n")
    assert none.notebook("01_a").exercise("f").visible_cases == ()
    undeclared = registry.parse(MINIMAL + ENTRY.format(id="01_a"))
    assert undeclared.notebook("01_a").exercise("f").visible_cases is None
    every = [e for n in registry.load().notebooks for e in n.exercises]
    assert all(e.visible_cases is not None for e in every), "course.toml declares them all"


@pytest.mark.parametrize(
    ("cases", "message"),
    [
        ('visible_cases = "window >= n"', "is not a list"),
        ('visible_cases = [{ case = "wide" }]', "is not { case = "),
        ("visible_cases = [{ case = \"wide\", when = 'n', why = 'x' }]", "is not { case = "),
        ("visible_cases = [{ case = \"\", when = 'n' }]", "is not { case = "),
        ("visible_cases = [{ case = \"wide\", when = 'window >=' }]", "is not a Python expression"),
    ],
)
def test_malformed_visible_cases_are_named(cases: str, message: str) -> None:
    with pytest.raises(RegistryError, match=re.escape("visible_cases of exercise 'f' of 01_a")):
        registry.parse(MINIMAL + ENTRY.format(id="01_a") + cases + "\n")
    with pytest.raises(RegistryError, match=re.escape(message)):
        registry.parse(MINIMAL + ENTRY.format(id="01_a") + cases + "\n")


def test_unknown_notebook_and_exercise_say_what_to_do() -> None:
    course = registry.parse(MINIMAL + ENTRY.format(id="01_a"))
    with pytest.raises(RegistryError, match="make new"):
        course.notebook("02_missing")
    with pytest.raises(RegistryError, match="no exercise 'g'"):
        course.notebook("01_a").exercise("g")


def test_a_missing_registry_is_named(tmp_path) -> None:
    with pytest.raises(RegistryError, match="no course registry"):
        registry.load(tmp_path)


def test_ids_command(capsys) -> None:
    registry.main(["ids"])
    assert capsys.readouterr().out.split() == registry.load().ids


@pytest.mark.parametrize("ref", ["v0.1.0", "1.2", "2026.11", "v1.0.0-rc1", "0123abc", "a" * 40])
def test_a_release_tag_or_a_commit_is_a_ref(ref: str) -> None:
    assert registry.parse(MINIMAL.replace('"v1.0.0"', f'"{ref}"')).ref == ref


@pytest.mark.parametrize("ref", ["main", "master", "HEAD", "develop", "feature/x", "v1 beta", ""])
def test_a_moving_ref_is_refused(ref: str) -> None:
    """A badge or a set-up cell that names a branch installs whatever was pushed last, not
    what the course was tested with."""
    with pytest.raises(RegistryError, match=f"ref = '{re.escape(ref)}' is not a release tag or a"):
        registry.parse(MINIMAL.replace('"v1.0.0"', f'"{ref}"'))


def test_a_branch_key_is_named() -> None:
    with pytest.raises(RegistryError, match="names a 'branch'; name a release tag or a commit"):
        registry.parse(MINIMAL.replace('ref = "v1.0.0"', 'branch = "main"'))


def test_a_repository_must_be_owner_and_name() -> None:
    with pytest.raises(RegistryError, match="is not a GitHub 'owner/name'"):
        registry.parse(MINIMAL.replace('"owner/name"', '"https://github.com/owner/name"'))


@pytest.mark.parametrize(
    "package",
    ["torch-geometric", "torch-geometric>=2.8", "torch_geometric==2.*", "x @ https://a/b"],
)
def test_an_unpinned_colab_package_is_refused(package: str) -> None:
    entry = ENTRY.format(id="01_a").replace(
        "minutes = 30\n", f"minutes = 30\ncolab_packages = [{package!r}]\n"
    )
    name = re.split(r"[<>=@ ]", package)[0]
    with pytest.raises(
        RegistryError,
        match=f"colab package .* of 01_a is not pinned .*'{re.escape(name)}==<version>'",
    ):
        registry.parse(MINIMAL + entry)


def test_a_pinned_colab_package_is_kept() -> None:
    entry = ENTRY.format(id="01_a").replace(
        "minutes = 30\n", 'minutes = 30\ncolab_packages = ["torch-geometric==2.8.1", "a[b]==1"]\n'
    )
    assert registry.parse(MINIMAL + entry).notebook("01_a").colab_packages == (
        "torch-geometric==2.8.1",
        "a[b]==1",
    )


def test_an_unknown_key_is_named_with_its_table_and_the_keys_it_takes() -> None:
    """course.toml is read by pydantic models that refuse a key they do not name (a typo
    would otherwise be ignored silently)."""
    entry = ENTRY.format(id="01_a").replace("points = 3\n", "points = 3\nponts = 2\n")
    with pytest.raises(
        RegistryError,
        match=re.escape(
            "course.toml a [[notebook.exercise]] of 01_a: unknown keys ['ponts']: "
            "use ['name', 'points', 'rules', 'visible_cases']"
        ),
    ):
        registry.parse(MINIMAL + entry)
    with pytest.raises(
        RegistryError, match=re.escape("course.toml [course]: unknown keys ['titel']")
    ):
        registry.parse(MINIMAL.replace("title", "titel"))


EXPLAINED = """
[[notebook.question]]
name = "q_{what}"
kind = "choice"
points = 1
options = "abcd"
answer = "b"

[notebook.question.wrong]
a = "Why (a) is wrong."
c = "Why (c) is wrong."
d = "Why (d) is wrong."

[[notebook.question]]
name = "q_{what}_count"
kind = "number"
points = 1

[notebook.question.wrong]
"6000" = "Why 6000 is wrong."
"""
SELF_STUDY = MINIMAL.replace("max_exercises = 5", "max_exercises = 5\nself_study = true")


def test_explanations_of_wrong_answers_are_read() -> None:
    course = registry.parse(SELF_STUDY + ENTRY.format(id="01_a") + EXPLAINED.format(what="a"))
    choice, number = course.notebook("01_a").questions
    assert course.self_study
    assert (choice.options, choice.answer) == ("abcd", "b")
    assert choice.wrong == {
        "a": "Why (a) is wrong.",
        "c": "Why (c) is wrong.",
        "d": "Why (d) is wrong.",
    }
    assert number.wrong == {"6000": "Why 6000 is wrong."}
    assert choice.unexplained() == number.unexplained() == []
    # Without the self-study edition nothing needs explaining (a course of the old form).
    plain = registry.parse(MINIMAL + ENTRY.format(id="01_a") + QUESTIONS.format(what="a"))
    assert not plain.self_study


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        # a wrong option without its explanation: the question and the option named
        (
            ('d = "Why (d) is wrong."\n', ""),
            "question 'q_a' of 01_a has no explanation of option \\(d\\)",
        ),
        (
            ('"6000" = "Why 6000 is wrong."\n', ""),
            "question 'q_a_count' of 01_a has no explanation of a mistake students make",
        ),
        (
            (
                'options = "abcd"\nanswer = "b"\n\n[notebook.question.wrong]\n'
                'a = "Why (a) is wrong."\nc = "Why (c) is wrong."\nd = "Why (d) is wrong."\n',
                "",
            ),
            "question 'q_a' of 01_a has no explanation of its options and its answer",
        ),
        (
            ('a = "Why (a) is wrong."', 'b = "Why (b) is right."'),
            "explains its right answer \\(b\\)",
        ),
        (('a = "Why (a) is wrong."', 'e = "No such option."'), "explains option \\(e\\), which it"),
        (('a = "Why (a) is wrong."', 'a = " "'), "the explanation of 'a' is empty"),
        (('answer = "b"', 'answer = "x"'), "answer = 'x', which is not one of its options"),
        (('options = "abcd"', 'options = "abd"'), "options = 'abd': the letters from a on"),
        (('"6000" = ', '"six thousand" = '), "'six thousand' = ... \\} is not a number"),
    ],
)
def test_a_question_without_its_explanations_is_refused(
    edit: tuple[str, str], message: str
) -> None:
    text = SELF_STUDY + ENTRY.format(id="01_a") + EXPLAINED.format(what="a")
    old, new = edit
    assert text.count(old) == 1
    with pytest.raises(RegistryError, match=message):
        registry.parse(text.replace(old, new))


def test_every_concept_question_of_the_course_explains_its_wrong_answers() -> None:
    """The self-study edition is on, and each of the course's concept questions explains
    every wrong option (a choice question) or a mistake (a number question)."""
    course = registry.load()
    assert course.self_study
    questions = [q for n in course.notebooks for q in n.concept_questions]
    assert len(questions) == 30
    for question in questions:
        assert question.unexplained() == [], question.name
        if question.kind == "choice":
            assert len(question.wrong) == len(question.options) - 1
        for text in question.wrong.values():
            sentences = re.split(r"(?<![.][.])(?<=[.!?])\s+(?=[A-Z0-9\"])", text.strip())
            assert len(sentences) <= 2 and len(text) <= 330, (question.name, text)


def test_rules_are_read_and_each_names_a_mistake_that_breaks_it() -> None:
    rules = 'rules = { dtype = "dtype", unchanged = "input modified in place" }\n'
    course = registry.parse(MINIMAL + ENTRY.format(id="01_a") + rules)
    assert course.notebook("01_a").exercise("f").rules == {
        "dtype": "dtype",
        "unchanged": "input modified in place",
    }
    assert (
        registry.parse(MINIMAL + ENTRY.format(id="01_a")).notebook("01_a").exercise("f").rules
        is None
    )


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ('rules = { tidy = "dtype" }', "unknown rule 'tidy'; the rules are dtype, unchanged"),
        ('rules = { dtype = "axis" }', "rule 'dtype' is broken by the mistake 'dtype', not 'axis'"),
    ],
)
def test_an_unknown_rule_or_a_mistake_that_does_not_break_it_is_named(
    rules: str, message: str
) -> None:
    with pytest.raises(RegistryError, match=re.escape("rules of exercise 'f' of 01_a: " + message)):
        registry.parse(MINIMAL + ENTRY.format(id="01_a") + rules + "\n")
