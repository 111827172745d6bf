"""Colab, proven as far as it can be here: every notebook in a fresh environment with Colab's
own versions of what the notebooks touch.

One virtual environment (one test) holds only what Colab preinstalls, at the versions of
Colab's runtime (``tests/support/colab_runtime.txt``: ipywidgets 7.7.1, IPython 7.34.0,
ipykernel 6.17.1, numpy 2.1.3, matplotlib 3.10.0, tqdm 4.67.3, ..., from
``googlecolab/backend-info``'s ``pip-freeze.txt``; torch is the course machines' CPU
wheel), not the course, and a stand-in ``google.colab`` that the kernel imports at start, as
Colab's does. Each notebook's set-up cell then runs for real: its
``%pip install "git+https://github.com/<REPOSITORY>@<REF>"`` is pointed at a copy of the
checkout (what a push would publish), so pip builds and installs the course exactly as it
would from GitHub (09 also installs torch-geometric from the package index).

For every notebook:

- the **student version** (``notebooks/``, what the badge opens) runs top to bottom: the
  set-up cell succeeds, ``helpers`` is imported from the new environment's site-packages
  (not from this checkout) next to exactly the pinned versions, every cell before the first
  exercise's test runs, and every exercise test cell fails with ``NotImplementedError`` (the
  unsolved exercise), and every concept question's test cell with ``NameError`` naming the
  question's unset variable;
- the **completed student version** (each exercise filled in with its solution) runs to
  the end without any error output and without any stderr output (what a student would see
  as a red warning), and every cell that calls ``interactive_figure`` or ``progress`` shows
  the widget (sliders, a progress bar) next to its static figure or text: the widgets were
  built under Colab's ipywidgets, not skipped.

Then the **self-study edition** of notebook 01 (``self_study/``, what the badges open),
completed with the reference answers, runs on the same kernel: its set-up cell tells the
learner to save a copy in Drive, every question says right, every exercise's further tests
pass and the progress cell counts everything, without an error or stderr output.

Limits: Colab runs Python 3.13 and torch 2.11.0, this test the machine's Python and torch
2.13.0; the front end is not Colab's (nbclient stores what the kernel sends; what Colab's
browser side draws of a widget is not seen here).

All of it is one test (one environment). The pinned runtime is built once (about 35 s;
``make test`` builds it while the course's environment installs) and kept in pytest's
cache; the test then takes about 3 minutes on two busy cores.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from instructor import anatomy, registry
from instructor.paths import NOTEBOOKS
from support.colab_image import VERSIONS, colab_pins, colab_runtime, runtime_cache
from support.studentview import (
    ColabEnv,
    assignments,
    colab_version,
    completed_notebook,
    execute_on_kernelspec,
    make_colab_env,
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
    for assignment in assignments():
        try:
            sliders[assignment] = check_notebook(assignment, colab, tmp_path)
        except AssertionError as error:
            failures[assignment] = str(error)
    assert not failures, "\n\n".join(f"{a}: {m}" for a, m in failures.items())
    # 02, 04, 05 and 06 have sliders today: the test must have seen them
    assert sum(n > 0 for n in sliders.values()) >= 4, f"slider cells per notebook: {sliders}"
    check_self_study(SELF_STUDY_NOTEBOOK, colab, tmp_path)


SELF_STUDY_NOTEBOOK = "01_vector_sets"


def check_self_study(assignment: str, colab: ColabEnv, tmp_path: Path) -> None:
    """The self-study edition of one notebook, completed with the reference answers, on the
    stand-in Colab (the course installed by the runs above, so its set-up cell runs without
    its ``%pip`` lines): the set-up cell tells the learner to save a copy, every question
    says right, every exercise's further tests pass, the progress cell counts everything,
    and nothing fails or writes to stderr."""
    from instructor import colab as badges
    from instructor import self_study

    edition = nbformat.read(self_study.self_study_path(assignment), as_version=4)
    done = anatomy.complete(edition, anatomy.solution_sources(anatomy.read_solution(assignment)))
    setup = next(c for c in done.cells if anatomy.has_tag(c, anatomy.SETUP_TAG))
    setup.source = "\n".join(
        line for line in setup.source.splitlines() if not line.lstrip().startswith("%pip")
    )
    ran = execute(colab, done, tmp_path)
    probe(ran, colab)
    assert not errors(ran), f"{assignment} (self-study): errors {errors(ran)}"
    assert not stderr(ran), f"{assignment} (self-study): stderr output {stderr(ran)}"

    def said(cell: nbformat.NotebookNode) -> str:
        return "".join(
            o.get("text", "") for o in cell.get("outputs", []) if o.output_type == "stream"
        )

    ran_setup = next(c for c in ran.cells if anatomy.has_tag(c, anatomy.SETUP_TAG))
    assert said(ran_setup) == "".join(badges.SAVE_A_COPY) + "\n"
    entry = registry.load().notebook(assignment)
    checks = [c for c in ran.cells if anatomy.has_tag(c, "self-study-check")]
    assert len(checks) == len(entry.concept_questions)
    assert all(": right. " in said(c) for c in checks), [said(c) for c in checks]
    further = [said(c) for c in ran.cells if anatomy.has_tag(c, "self-study-further")]
    assert further == [f"{e.name}: further tests passed\n" for e in entry.exercises]
    progress = said(ran.cells[-2])  # the last cell is the probe
    n, q = len(entry.exercises), len(entry.concept_questions)
    for line in (
        f"exercises passing their visible tests: {n} of {n}",
        f"exercises passing their further tests: {n} of {n}",
        f"questions answered right: {q} of {q}",
    ):
        assert line in progress, progress


def check_notebook(assignment: str, colab: ColabEnv, tmp_path: Path) -> int:
    """The student version and the completed version of one notebook, on the stand-in Colab;
    the number of slider cells in the completed version."""
    student = nbformat.read(NOTEBOOKS / assignment / f"{assignment}.ipynb", as_version=4)

    ran = execute(colab, colab_version(student, colab.source), tmp_path)
    setup_outputs = ran.cells[1].get("outputs", [])
    assert not [o for o in setup_outputs if o.output_type == "error"], setup_outputs
    probe(ran, colab)
    found = errors(ran)
    tests = [
        i
        for i, c in enumerate(ran.cells)
        if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("grade")
    ]
    # test cell -> the variable of its concept question (``test_q_x`` tests ``q_x``)
    names = {q.name for q in registry.load().notebook(assignment).concept_questions}
    questions = {
        i: anatomy.grade_id(ran.cells[i]).removeprefix("test_")
        for i in tests
        if anatomy.grade_id(ran.cells[i]).removeprefix("test_") in names
    }
    assert found, f"{assignment}: no exercise failed in the student version"
    assert found[0][0] >= tests[0], (
        f"{assignment}: cell {found[0][0]} fails ({found[0][1]}: {found[0][2]}) before the "
        f"first exercise's test cell ({tests[0]})"
    )
    for i, name, message in found:
        # A test cell fails with its exercise's message; a later demo cell may fail on an
        # unimplemented function or on what a failed cell did not compute (the completed run
        # below proves those cells right).
        if i in tests:
            expected = ("NotImplementedError", "")
            if i in questions:
                expected = ("NameError", f"name '{questions[i]}' is not defined")
            assert (name, message if expected[1] else "") == expected, (
                f"{assignment} cell {i}: {name}: {message}"
            )
    assert {i for i, *_ in found} >= set(tests), (
        f"{assignment}: test cells {sorted(set(tests) - {i for i, *_ in found})} passed "
        "without any exercise done"
    )

    # The course is installed now (the set-up cell above did it): the completed run skips
    # the set-up cell's second pip build, which would only cost time.
    completed = completed_notebook(assignment)
    completed.cells[1].source = "# set-up: the course was installed by the student run"
    done = execute(colab, completed, tmp_path)
    probe(done, colab)
    assert not errors(done), f"{assignment} (completed): errors {errors(done)}"
    assert not stderr(done), f"{assignment} (completed): stderr output {stderr(done)}"
    return check_widgets(assignment, done)
