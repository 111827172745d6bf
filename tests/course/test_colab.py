"""Colab, proven as far as it can be here: every notebook in a fresh environment with Colab's
own versions of what the notebooks touch.

One virtual environment (one test) holds only what Colab preinstalls, at the versions of
Colab's runtime (``tests/support/colab_runtime.txt``: ipywidgets 7.7.1, IPython 7.34.0,
ipykernel 6.17.1, numpy 2.1.3, matplotlib 3.10.0, tqdm 4.67.3, ..., from
``googlecolab/backend-info``'s ``pip-freeze.txt``; torch is the course machines' CPU
wheel), not the course, and a stand-in ``google.colab`` that the kernel imports at start, as
Colab's does. The notebooks' set-up cell then runs for real: its
``%pip install "git+https://github.com/<REPOSITORY>@<REF>"`` is pointed at a copy of the
checkout (what a push would publish), so pip builds and installs the course exactly as it
would from GitHub (09 also installs torch-geometric from the package index).

For every notebook, what its Colab badge opens (``instructor.colab.landing_url``: the
self-study edition, ``self_study/``, while ``course.toml`` says ``self_study = true``, else
the class's ``notebooks/``):

- **as the learner gets it**: the set-up cell succeeds, ``helpers`` is imported from the
  new environment's site-packages (not from this checkout) next to exactly the pinned
  versions, every cell before the first exercise's test runs, every exercise test cell
  fails with ``NotImplementedError`` (the unsolved exercise), a concept question's test
  cell with ``NameError`` naming its unset variable, a self-study check saying the question
  is not answered yet, and an exercise's further tests saying its visible tests fail first;
- **completed** (each exercise and question answered with the reference solution): it runs
  to the end without any error output and without any stderr output (what a learner would
  see as a red warning), every cell that calls ``interactive_figure`` or ``progress`` shows
  the widget (sliders, a progress bar) next to its static figure or text (built under
  Colab's ipywidgets, not skipped), and in the self-study edition the set-up cell tells the
  learner to save a copy in Drive, every question says right, every exercise's further
  tests pass and the progress cell counts everything; then, in the same kernel, each
  question set to each explained wrong option is told why it is not right, an exercise
  replaced by a wrong answer of ``tests/grading_cases`` that only the hidden tests catch
  fails its further tests (with the case's message), ``reveal`` prints the reference
  solution, and the progress cell counts what is left.

The line of the set-up cell that installs the course is run for real in the first notebook
(pip builds the copy of the checkout); every later notebook must hold the same line, which
is not run again (a second build of the same source would prove nothing new). The set-up
cells' other lines (09's torch-geometric) run as written.

Limits: Colab runs Python 3.13 and torch 2.11.0, this test the machine's Python and torch
2.13.0; the front end is not Colab's (nbclient stores what the kernel sends; what Colab's
browser side draws of a widget is not seen here).

All of it is one test (one environment). The pinned runtime is built once (about 35 s;
``make test`` builds it while the course's environment installs) and kept in pytest's
cache.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from instructor import anatomy, registry
from instructor import colab as badges
from support.colab_image import VERSIONS, colab_pins, colab_runtime, runtime_cache
from support.studentview import (
    ColabEnv,
    assignments,
    colab_target,
    colab_version,
    execute_on_kernelspec,
    learner_case,
    make_colab_env,
    wrong_attempts,
    wrong_option_id,
)

pytestmark = pytest.mark.xdist_group("colab")

PROBE = """import importlib.metadata, json, sys
import helpers
print(json.dumps({"colab": "google.colab" in sys.modules, "helpers": helpers.__file__,
                  "version": importlib.metadata.version("self-attention-course"),
                  "python": sys.executable}))"""

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def execute(env: ColabEnv, notebook: nbformat.NotebookNode, cwd: Path) -> nbformat.NotebookNode:
    """Run ``notebook`` (plus a probe cell) on the stand-in Colab kernel, errors allowed."""
    notebook = nbformat.from_dict(notebook)
    notebook.cells.append(nbformat.v4.new_code_cell(f"{VERSIONS}\n{PROBE}", id="colab-probe"))
    execute_on_kernelspec(
        notebook, env.kernel_dirs, env.kernel_name, cwd, timeout=300, record_timing=False
    )
    return notebook


def errors(notebook: nbformat.NotebookNode) -> list[tuple[int, str, str]]:
    """``(cell index, error name, message)`` of every error output."""
    return [
        (i, out.ename, out.evalue)
        for i, cell in enumerate(notebook.cells)
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.output_type == "error"
    ]


def probe(notebook: nbformat.NotebookNode, env: ColabEnv) -> dict:
    cell = notebook.cells[-1]
    assert not errors(nbformat.v4.new_notebook(cells=[cell])), f"probe failed: {cell.outputs}"
    text = "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")
    found = json.loads(text.strip().splitlines()[-1])
    versions = json.loads(text.strip().splitlines()[-2])
    wrong = {
        name: (pinned, versions.get(name))
        for name, pinned in colab_pins().items()
        if versions.get(name, "").split("+")[0] != pinned
    }
    assert not wrong, f"the kernel's packages are not Colab's pinned versions: {wrong}"
    site = env.site_packages()
    assert found["colab"], "google.colab was not imported in the kernel: the stand-in failed"
    assert Path(found["python"]).parent == env.python.parent, found
    assert Path(found["helpers"]).is_relative_to(site), (
        f"helpers was imported from {found['helpers']}, not from the Colab environment's "
        f"site-packages {site}: the set-up cell did not install the course"
    )
    return found


def stderr(notebook: nbformat.NotebookNode) -> list[tuple[int, str]]:
    """``(cell index, text)`` of every stderr stream output (a red box in a notebook)."""
    return [
        (i, out.text)
        for i, cell in enumerate(notebook.cells)
        if cell.cell_type == "code"
        for out in cell.get("outputs", [])
        if out.output_type == "stream" and out.name == "stderr"
    ]


def calls(notebook: nbformat.NotebookNode, name: str) -> list[int]:
    """The code cells that call ``name`` outside a comment."""
    return [
        i
        for i, cell in enumerate(notebook.cells)
        if cell.cell_type == "code"
        and any(f"{name}(" in line.split("#", 1)[0] for line in cell.source.splitlines())
    ]


def widget_outputs(cell: nbformat.NotebookNode) -> list[dict]:
    """The display outputs of ``cell`` that carry a widget view (with a model id)."""
    return [
        out.data
        for out in cell.get("outputs", [])
        if out.output_type == "display_data"
        and out.get("data", {}).get(WIDGET_VIEW, {}).get("model_id")
    ]


def check_widgets(assignment: str, done: nbformat.NotebookNode) -> int:
    """Every slider cell shows the widget (the sliders) with its static figure; where the
    notebook uses ``progress``, a progress bar widget is shown. The number of slider cells."""
    sliders = calls(done, "interactive_figure")
    for i in sliders:
        shown = widget_outputs(done.cells[i])
        assert shown and all("image/png" in data for data in shown), (
            f"{assignment} (completed) cell {i}: no slider widget over the figure: "
            f"{done.cells[i].outputs}"
        )
    if calls(done, "progress"):
        bars = [
            data
            for cell in done.cells
            for data in widget_outputs(cell)
            if "image/png" not in data and "|" in data.get("text/plain", "")
        ]
        assert bars, f"{assignment} (completed): progress is called but no bar was shown"
    return len(sliders)


def test_every_notebook_runs_on_colab(tmp_path: Path, pytestconfig: pytest.Config) -> None:
    """One test, so one environment, whatever pytest-xdist does with a module's tests."""
    if shutil.which("git") is None:
        pytest.skip("git is missing: the Colab test copies the checkout with git ls-files")
    colab = make_colab_env(tmp_path / "colab", colab_runtime(runtime_cache(pytestconfig)))
    failures = {}
    sliders: dict[str, int] = {}
    course_install: list[str] = []  # the first notebook's line that installs the course
    for assignment in assignments():
        try:
            sliders[assignment] = check_notebook(assignment, colab, tmp_path, course_install)
        except AssertionError as error:
            failures[assignment] = str(error)
    assert not failures, "\n\n".join(f"{a}: {m}" for a, m in failures.items())
    # 02, 04, 05 and 06 have sliders today: the test must have seen them
    assert sum(n > 0 for n in sliders.values()) >= 4, f"slider cells per notebook: {sliders}"


def setup_cell(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    return next(c for c in notebook.cells if anatomy.has_tag(c, anatomy.SETUP_TAG))


def without_pip(source: str, lines: set[str]) -> str:
    """``source`` with each ``%pip`` line in ``lines`` (all of them: ``lines`` empty) made a
    ``pass`` at its indentation, so that the ``if`` around it still has a body."""
    return "\n".join(
        line[: len(line) - len(line.lstrip())] + "pass  # installed by an earlier run"
        if line.lstrip().startswith("%pip") and (not lines or line.strip() in lines)
        else line
        for line in source.splitlines()
    )


def said(cell: nbformat.NotebookNode) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.output_type == "stream")


def check_notebook(
    assignment: str, colab: ColabEnv, tmp_path: Path, course_install: list[str]
) -> int:
    """What a badge opens, as the learner gets it and completed, on the stand-in Colab; the
    number of slider cells in the completed version.

    The set-up cell's line that installs the course runs for real in the first notebook
    (pip builds the copy of the checkout); the later notebooks must hold the same line, which
    is then not run again (the course is installed: another build would prove nothing new).
    Their other lines (09's torch-geometric) run as written."""
    landing = nbformat.read(colab_target(badges.landing_url(assignment)), as_version=4)
    self_study = any(anatomy.has_tag(c, "self-study-check") for c in landing.cells)
    learner = colab_version(landing, colab.source)
    setup = setup_cell(learner)
    installs = [line.strip() for line in setup.source.splitlines() if str(colab.source) in line]
    assert installs, f"{assignment}: the set-up cell does not install the course"
    if course_install:
        assert installs == course_install, (
            f"{assignment}: the set-up cell installs the course with {installs}, the first "
            f"notebook with {course_install}"
        )
        setup.source = without_pip(setup.source, set(installs))
    else:
        course_install.extend(installs)

    ran = execute(colab, learner, tmp_path)
    assert not [o for o in setup_cell(ran).get("outputs", []) if o.output_type == "error"], (
        setup_cell(ran).outputs
    )
    probe(ran, colab)
    check_unsolved(assignment, ran)

    completed = anatomy.complete(
        landing, anatomy.solution_sources(anatomy.read_solution(assignment))
    )
    setup_cell(completed).source = without_pip(setup_cell(completed).source, set())
    if self_study:
        completed.cells += wrong_attempts(assignment, completed)
    done = execute(colab, completed, tmp_path)
    probe(done, colab)
    failed = [done.cells[i].get("id") for i, *_ in errors(done)]
    expected = ["wrong-exercise"] if self_study else []  # only the wrong answer's further tests
    assert failed == expected, f"{assignment} (completed): errors {errors(done)}"
    assert not stderr(done), f"{assignment} (completed): stderr output {stderr(done)}"
    if self_study:
        check_self_study(assignment, done)
        check_wrong_attempts(assignment, done)
    return check_widgets(assignment, done)


def check_unsolved(assignment: str, ran: nbformat.NotebookNode) -> None:
    """As the learner gets it: every cell before the first exercise's test cell runs, and each
    test cell fails as an unsolved exercise makes it: a test cell with ``NotImplementedError``,
    a concept question's test cell with ``NameError`` naming its unset variable, a question's
    check (self-study) saying it is not answered yet, an exercise's further tests saying its
    visible tests fail first."""
    found = errors(ran)
    names = {q.name for q in registry.load().notebook(assignment).concept_questions}
    expected: dict[int, tuple[str, str]] = {}
    for i, cell in enumerate(ran.cells):
        if cell.cell_type != "code":
            continue
        if cell.metadata.get("nbgrader", {}).get("grade"):
            question = anatomy.grade_id(cell).removeprefix("test_")
            expected[i] = (
                ("NameError", f"name '{question}' is not defined")
                if question in names
                else ("NotImplementedError", "")
            )
        elif anatomy.has_tag(cell, "self-study-check"):
            expected[i] = ("AssertionError", "is not answered yet")
        elif anatomy.has_tag(cell, "self-study-further"):
            expected[i] = ("AssertionError", "its visible tests fail first")
    assert found, f"{assignment}: no exercise failed in the unsolved notebook"
    assert found[0][0] >= min(expected), (
        f"{assignment}: cell {found[0][0]} fails ({found[0][1]}: {found[0][2]}) before the "
        f"first exercise's test cell ({min(expected)})"
    )
    for i, name, message in found:
        # A later demo cell may fail on an unimplemented function or on what a failed cell
        # did not compute (the completed run proves those cells right).
        if i in expected:
            assert name == expected[i][0] and expected[i][1] in message, (
                f"{assignment} cell {i}: {name}: {message} (expected {expected[i]})"
            )
    assert {i for i, *_ in found} >= set(expected), (
        f"{assignment}: cells {sorted(set(expected) - {i for i, *_ in found})} passed without "
        "any exercise done"
    )


def check_self_study(assignment: str, done: nbformat.NotebookNode) -> None:
    """The self-study edition completed with the reference answers: the set-up cell tells the
    learner to save a copy, every question says right, every exercise's further tests pass,
    and the progress cell counts everything."""
    assert said(setup_cell(done)) == "".join(badges.SAVE_A_COPY) + "\n"
    entry = registry.load().notebook(assignment)
    checks = [c for c in done.cells if anatomy.has_tag(c, "self-study-check")]
    assert len(checks) == len(entry.concept_questions)
    assert all(": right. " in said(c) for c in checks), [said(c) for c in checks]
    further = [said(c) for c in done.cells if anatomy.has_tag(c, "self-study-further")]
    assert further == [f"{e.name}: further tests passed\n" for e in entry.exercises]
    progress = said(next(c for c in done.cells if anatomy.has_tag(c, "self-study-progress")))
    n, q = len(entry.exercises), len(entry.concept_questions)
    for line in (
        f"exercises passing their visible tests: {n} of {n}",
        f"exercises passing their further tests: {n} of {n}",
        f"questions answered right: {q} of {q}",
    ):
        assert line in progress, progress


def check_wrong_attempts(assignment: str, done: nbformat.NotebookNode) -> None:
    """After the reference answers, a learner's wrong attempts (``wrong_attempts``): each
    wrong option of each question is told not right with its explanation from
    ``course.toml``; a wrong answer that only the hidden tests catch fails its further tests
    (with the case's message, where it has one); ``reveal`` prints the reference solution;
    the progress cell counts what is left."""
    cells = {c.get("id"): c for c in done.cells}
    entry = registry.load().notebook(assignment)
    for question in entry.concept_questions:
        for key, explanation in question.wrong.items():
            told = " ".join(said(cells[wrong_option_id(question.name, key)]).split())
            assert ": not right. " in told and " ".join(explanation.split()) in told, told
    case = learner_case(assignment)
    (error,) = [o for o in cells["wrong-exercise"].outputs if o.output_type == "error"]
    assert error.evalue.startswith(f"{case.function}: a further test failed: "), error.evalue
    assert (case.message or "") in error.evalue, (case.message, error.evalue)
    reference = anatomy.solution_sources(anatomy.read_solution(assignment))[case.function]
    assert reference in said(cells["reveal"])
    # The wrong answer's exercise fails its further tests; an exercise that calls it (04's
    # MultiHeadSelfAttention calls split_heads) may fail with it.
    progress = said(cells["progress-again"])
    n = len(entry.exercises)
    passing = re.search(rf"exercises passing their further tests: (\d+) of {n}\n", progress)
    assert passing and int(passing.group(1)) < n, progress
    assert re.search(rf"{case.function} +visible tests pass, further tests fail", progress)
    assert f"questions answered right: 0 of {len(entry.concept_questions)}" in progress
