"""Grade every submission of one or more assignments: the pipeline behind ``make grade``.

For each submission (``autograder/submitted/<student>/<assignment>/``):

1. *prepare* (this process, serial, light): read each notebook without trusting it
   (:mod:`.integrity`), run nbgrader's own sanitising preprocessors on it (test cells come
   back from the gradebook), note what the student changed;
2. *execute* (in parallel: Dask workers, local by default): run it in a sandboxed kernel
   and judge each test cell (:mod:`.execute`);
3. *record* (this process, serial, light): nbgrader's ``autograde`` converter, with its
   ``Execute`` step replaced by :class:`ReplayExecute`, which takes the outputs of step 2.
   So the gradebook, the autograded notebooks and the feedback are nbgrader's own.

Then feedback HTML (nbgrader's ``generate_feedback``), and once for the run the grades CSV
(student x notebook x graded cell) and the integrity report. A submission already recorded
with the same files is skipped on the next run unless ``force`` is given, so an interrupted
run picks up where it stopped. Students' files in ``submitted/`` are only ever read.
"""

from __future__ import annotations

import contextlib
import csv
import functools
import hashlib
import json
import os
import shutil
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import nbformat

from .execute import ExecutionResult, _error_output, execute_notebook
from .integrity import (
    compare_with_release,
    is_test_cell,
    normalise,
    read_submission,
    scan_code,
)
from .sandbox import Limits, isolation

__all__ = ["ClassGrader", "Submission"]

WORK = ".grading"
"""Under the course root: staged copies of submissions and the resume state."""
REPORTS = "reports"


@dataclass
class Submission:
    """One student's submission of one assignment."""

    student: str
    assignment: str
    folder: Path
    fingerprint: str = ""
    notebooks: dict[str, dict[str, Any]] = field(default_factory=dict)
    """notebook -> what happened to it (outcome, notes, zeroed tests, events, score)."""
    notes: list[str] = field(default_factory=list)
    error: str = ""


def _fingerprint(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(folder)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _replay_preprocessor() -> type:
    from nbgrader.preprocessors import NbGraderPreprocessor

    class ReplayExecute(NbGraderPreprocessor):
        """nbgrader's ``Execute`` step, replaced: outputs come from the sandboxed run."""

        results: ClassVar[dict[tuple[str, str, str], dict]] = {}

        def preprocess(self, nb, resources):  # noqa: ANN001 - nbconvert's signature
            info = resources["nbgrader"]
            key = (info["student"], info["assignment"], info["notebook"])
            executed = nbformat.from_dict(self.results[key])
            if [c.source for c in executed.cells] != [c.source for c in nb.cells]:
                raise RuntimeError(f"{key}: the executed notebook is not the one sanitised")
            for cell, ran in zip(nb.cells, executed.cells, strict=True):
                if cell.cell_type == "code":
                    cell.outputs = ran.get("outputs", [])
                    cell.execution_count = ran.get("execution_count")
            return nb, resources

    return ReplayExecute


class ClassGrader:
    """Grade a class on the nbgrader course at ``root`` (``autograder/`` by default).

    Args:
        root: the nbgrader course root (its ``nbgrader_config.py`` is read).
        db_url: a SQLAlchemy URL for the gradebook (default: the course's, SQLite).
        workers: Dask workers of the embedded ``LocalCluster`` (default: cores + 1).
        scheduler: the address of a running Dask scheduler; then no local cluster is made.
        limits: time, memory and process limits of each notebook.
        force: grade again submissions already recorded with the same files.
        feedback: write feedback HTML for each graded submission.
        progress: show a progress bar.
    """

    def __init__(
        self,
        root: Path,
        *,
        db_url: str | None = None,
        workers: int | None = None,
        scheduler: str | None = None,
        limits: Limits | None = None,
        force: bool = False,
        feedback: bool = True,
        progress: bool = True,
    ) -> None:
        self.root = Path(root).resolve()
        self.db_url = db_url
        # One worker more than cores: a kernel waiting on start-up or on the grader leaves its
        # core idle, which the extra worker fills (measured: benchmarks/grading.md).
        self.workers = workers or (os.cpu_count() or 1) + 1
        self.scheduler = scheduler
        self.limits = limits or Limits()
        self.force = force
        self.feedback = feedback
        self.progress = progress
        self.api = self._api()
        self.coursedir = self.api.coursedir
        self.work = self.root / WORK
        self.reports = self.root / REPORTS

    # ----------------------------------------------------------------- nbgrader plumbing
    def _config(self, staged: bool = False) -> Any:
        from traitlets.config.loader import PyFileConfigLoader

        config = PyFileConfigLoader("nbgrader_config.py", path=str(self.root)).load_config()
        config.CourseDirectory.root = str(self.root)
        if self.db_url:
            config.CourseDirectory.db_url = self.db_url
        if staged:
            from nbconvert.preprocessors import ClearMetadataPreprocessor
            from nbgrader.preprocessors import (
                AssignLatePenalties,
                CheckCellMetadata,
                IgnorePattern,
                LimitOutput,
                SaveAutoGrades,
            )

            config.CourseDirectory.submitted_directory = f"{WORK}/staged"
            config.Autograde.autograde_preprocessors = [
                _replay_preprocessor(),
                IgnorePattern,
                ClearMetadataPreprocessor,
                LimitOutput,
                SaveAutoGrades,
                AssignLatePenalties,
                CheckCellMetadata,
            ]
        return config

    def _api(self, staged: bool = False) -> Any:
        from nbgrader.apps import NbGraderAPI
        from nbgrader.coursedir import CourseDirectory

        from ..grading import nbgrader_env

        os.environ.update(nbgrader_env())
        config = self._config(staged)
        return NbGraderAPI(coursedir=CourseDirectory(config=config), config=config)

    @functools.cached_property
    def _recording_api(self) -> Any:
        """The API whose autograde replays the sandboxed outputs on the staged copies."""
        return self._api(staged=True)

    def _gradebook(self) -> Any:
        from nbgrader.api import Gradebook

        return Gradebook(self.coursedir.db_url, self.coursedir.course_id)

    def _sanitise(self, nb: nbformat.NotebookNode, submission: Submission, name: str) -> Any:
        """nbgrader's ``Autograde.sanitize_preprocessors``, run on one notebook."""
        from nbgrader.converters import Autograde

        converter = Autograde(coursedir=self.coursedir, parent=self.api)
        resources = {
            "nbgrader": {
                "student": submission.student,
                "assignment": submission.assignment,
                "notebook": name,
                "db_url": self.coursedir.db_url,
            },
            "unique_key": name,
        }
        with warnings.catch_warnings():
            # nbformat's MissingIDFieldWarning on cells nbgrader itself adds back.
            warnings.simplefilter("ignore")
            for preprocessor_class in converter.sanitize_preprocessors:
                preprocessor = preprocessor_class(parent=converter)
                nb, resources = preprocessor.preprocess(nb, resources)
        return nb

    # ----------------------------------------------------------------------- the steps
    def submissions(self, assignment: str) -> list[Submission]:
        """Every submission of ``assignment`` in ``submitted/``."""
        submitted = Path(self.coursedir.format_path(self.coursedir.submitted_directory, ".", "."))
        found = []
        for folder in sorted(submitted.glob(f"*/{assignment}")):
            if folder.is_dir():
                found.append(Submission(folder.parent.name, assignment, folder))
        return found

    def _state_file(self, submission: Submission) -> Path:
        return self.work / "state" / submission.assignment / f"{submission.student}.json"

    def _already_graded(self, submission: Submission) -> bool:
        state = self._state_file(submission)
        if self.force or not state.exists():
            return False
        return json.loads(state.read_text()).get("fingerprint") == submission.fingerprint

    def _notebook_names(self, assignment: str) -> list[str]:
        with self._gradebook() as gb:
            return [nb.name for nb in gb.find_assignment(assignment).notebooks]

    def _released(self, assignment: str, name: str) -> nbformat.NotebookNode:
        release = Path(
            self.coursedir.format_path(self.coursedir.release_directory, ".", assignment)
        )
        return nbformat.read(release / f"{name}.ipynb", as_version=4)

    def prepare(self, submission: Submission) -> dict[str, dict]:
        """Read, check and sanitise; stage the readable notebooks. Returns name -> notebook."""
        staged = self.work / "staged" / submission.student / submission.assignment
        shutil.rmtree(staged, ignore_errors=True)
        staged.mkdir(parents=True)
        timestamp = submission.folder / "timestamp.txt"
        if timestamp.is_file():
            shutil.copy(timestamp, staged / "timestamp.txt")
        expected = self._notebook_names(submission.assignment)
        for path in sorted(submission.folder.glob("*.ipynb")):
            if path.stem not in expected:
                submission.notes.append(f"extra notebook {path.name} (not graded)")
        tasks = {}
        for name in expected:
            record: dict[str, Any] = {"outcome": "", "notes": [], "flags": [], "zeroed": {}}
            submission.notebooks[name] = record
            path = submission.folder / f"{name}.ipynb"
            if not path.is_file():
                record["outcome"] = "missing"
                record["notes"].append(f"no {name}.ipynb in the submission (scored 0)")
                continue
            reading = read_submission(path.read_text(errors="replace"))
            if reading.notebook is None:
                record["outcome"] = "unreadable"
                record["notes"].append(f"{path.name}: {reading.problem} (scored 0)")
                continue
            released = self._released(submission.assignment, name)
            record["notes"] += compare_with_release(reading.notebook, released)
            record["flags"] = scan_code(reading.notebook)
            notebook = normalise(reading.notebook, released)
            try:
                sanitised = self._sanitise(nbformat.from_dict(notebook), submission, name)
            except Exception as error:  # noqa: BLE001 - nbgrader could not make sense of it
                record["outcome"] = "unreadable"
                record["notes"].append(f"nbgrader could not sanitise it ({error!r}; scored 0)")
                continue
            nbformat.write(notebook, staged / f"{name}.ipynb")
            tasks[name] = dict(sanitised)
        return tasks

    def record(self, submission: Submission, executed: dict[str, dict]) -> None:
        """Write the grades with nbgrader's autograde converter (outputs replayed)."""
        replay = self._recording_api
        replay_class = replay.config.Autograde.autograde_preprocessors[0]
        for name, result in executed.items():
            record = submission.notebooks[name]
            record["outcome"] = result["outcome"]
            if result["detail"]:
                record["notes"].append(result["detail"])
            record["zeroed"] = result["zeroed"]
            record["restored"] = result["restored"]
            record["events"] = result["events"]
            if result["truncated_cells"]:
                record["notes"].append(
                    f"output truncated in {len(result['truncated_cells'])} cell(s)"
                )
            record["seconds"] = round(result["seconds"], 2)
            replay_class.results[(submission.student, submission.assignment, name)] = result[
                "notebook"
            ]
        if executed:
            with warnings.catch_warnings():
                # nbgrader 0.9's own SQLAlchemy autoflush warnings: harmless, its CLI logs them.
                warnings.simplefilter("ignore")
                outcome = replay.autograde(submission.assignment, submission.student, force=True)
            if not outcome["success"]:
                submission.error = "nbgrader autograde failed: " + outcome.get("error", "")[-2000:]
        else:
            self._record_nothing_gradable(submission)
        for name in executed:
            replay_class.results.pop((submission.student, submission.assignment, name), None)
        self._store_scores(submission)
        state = self._state_file(submission)
        state.parent.mkdir(parents=True, exist_ok=True)
        state.write_text(json.dumps(self._summary_of(submission), indent=1))

    def _record_nothing_gradable(self, submission: Submission) -> None:
        """No readable notebook at all: nbgrader's converter would refuse; record zeros."""
        with self._gradebook() as gb:
            gb.update_or_create_student(submission.student)
            gb.update_or_create_submission(submission.assignment, submission.student)
            for name in submission.notebooks:
                notebook = gb.find_submission_notebook(
                    name, submission.assignment, submission.student
                )
                for grade in notebook.grades:
                    grade.auto_score = 0
                    grade.needs_manual_grade = False
            gb.db.commit()

    def _store_scores(self, submission: Submission) -> None:
        with self._gradebook() as gb:
            for name, record in submission.notebooks.items():
                try:
                    notebook = gb.find_submission_notebook(
                        name, submission.assignment, submission.student
                    )
                except Exception:  # noqa: BLE001 - nothing recorded for it
                    continue
                record["score"] = notebook.score
                record["max_score"] = notebook.max_score
                record["cells"] = {g.name: [g.score, g.max_score] for g in notebook.grades}

    @staticmethod
    def _summary_of(submission: Submission) -> dict[str, Any]:
        return {
            "student": submission.student,
            "assignment": submission.assignment,
            "fingerprint": submission.fingerprint,
            "notes": submission.notes,
            "error": submission.error,
            "notebooks": submission.notebooks,
        }

    # ------------------------------------------------------------------------ the run
    @contextlib.contextmanager
    def _dask(self) -> Iterator[Any]:
        from distributed import Client, LocalCluster

        if self.scheduler:
            with Client(self.scheduler) as client:
                yield client
            return
        with (
            LocalCluster(
                n_workers=self.workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
                silence_logs=40,
            ) as cluster,
            Client(cluster) as client,
        ):
            yield client

    def grade(
        self, assignments: list[str], log: Callable[[str], None] = print
    ) -> list[dict[str, Any]]:
        """Grade every pending submission of ``assignments``; return one summary each."""
        from distributed import as_completed
        from tqdm.auto import tqdm

        start = time.perf_counter()
        todo: list[Submission] = []
        skipped = 0
        for assignment in assignments:
            for submission in self.submissions(assignment):
                submission.fingerprint = _fingerprint(submission.folder)
                if self._already_graded(submission):
                    skipped += 1
                else:
                    todo.append(submission)
        log(
            f"{len(todo)} submission(s) to grade, {skipped} already graded; "
            f"isolation: {isolation()}"
            + ("" if isolation() == "bwrap" else " (NOT isolated: see the README)")
        )
        pending: dict[tuple[str, str], dict[str, dict]] = {}
        waiting: dict[tuple[str, str], set[str]] = {}
        by_key = {(s.student, s.assignment): s for s in todo}
        bar = tqdm(total=len(todo), unit="submission", disable=not self.progress)
        with self._dask() as client:
            futures = {}
            for submission in todo:
                key = (submission.student, submission.assignment)
                tasks = self.prepare(submission)
                pending[key] = {}
                waiting[key] = set(tasks)
                if not tasks:
                    self.record(submission, {})
                    bar.update()
                for name, notebook in tasks.items():
                    future = client.submit(
                        execute_notebook, notebook, name, self.limits, pure=False
                    )
                    futures[future] = (key, name)
            for future in as_completed(futures):
                key, name = futures.pop(future)
                try:
                    result = future.result()
                except Exception as error:  # noqa: BLE001 - a worker lost is an outcome
                    result = self._lost(by_key[key], name, error)
                pending[key][name] = result
                waiting[key].discard(name)
                if not waiting[key]:
                    self.record(by_key[key], pending.pop(key))
                    bar.update()
            bar.close()
            if self.feedback:
                self._write_feedback(assignments, client, log)
        summaries = self.write_reports(assignments)
        self._log_summary(todo, skipped, time.perf_counter() - start, log)
        return summaries

    def _write_feedback(self, assignments: list[str], client: Any, log: Callable) -> None:
        """nbgrader's feedback HTML for every recorded submission that lacks it.

        Feedback only reads the gradebook and the autograded notebooks, so on this machine
        (the embedded cluster) the workers write it in parallel.
        """
        missing = []
        for assignment in assignments:
            for state in sorted((self.work / "state" / assignment).glob("*.json")):
                student = state.stem
                folder = self.root / "feedback" / student / assignment
                if self.force or not folder.is_dir() or not any(folder.glob("*.html")):
                    missing.append((assignment, student))
        if not missing:
            return
        if self.scheduler:
            results = [_feedback(self.root, self.db_url, a, s) for a, s in missing]
        else:
            futures = client.map(
                _feedback,
                [self.root] * len(missing),
                [self.db_url] * len(missing),
                [a for a, _ in missing],
                [s for _, s in missing],
                pure=False,
            )
            results = client.gather(futures)
        failed = [f"{a}/{s}" for (a, s), ok in zip(missing, results, strict=True) if not ok]
        log(f"feedback written for {len(missing) - len(failed)} submission(s)")
        if failed:
            log("feedback failed for: " + ", ".join(failed))

    def _lost(self, submission: Submission, name: str, error: BaseException) -> dict:
        """A notebook whose worker failed: every test cell scores 0, the reason is kept."""
        staged = self.work / "staged" / submission.student / submission.assignment
        nb = self._sanitise(nbformat.read(staged / f"{name}.ipynb", 4), submission, name)
        reason = f"the grading worker failed ({type(error).__name__}: {error})"
        zeroed = {}
        for cell in nb.cells:
            if is_test_cell(cell):
                cell.outputs = [_error_output(reason)]
                zeroed[cell.metadata.nbgrader.grade_id] = reason
        return ExecutionResult(
            dict(nb), outcome="grader error", detail=reason, zeroed=zeroed
        ).to_dict()

    # ---------------------------------------------------------------------- reports
    def write_reports(self, assignments: list[str]) -> list[dict[str, Any]]:
        """The grades CSV and the integrity report, from every recorded submission."""
        self.reports.mkdir(parents=True, exist_ok=True)
        summaries = []
        for assignment in assignments:
            for state in sorted((self.work / "state" / assignment).glob("*.json")):
                summaries.append(json.loads(state.read_text()))
        with (self.reports / "grades.csv").open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(
                ["student", "assignment", "notebook", "cell", "score", "max_score", "outcome"]
            )
            for summary in summaries:
                for name, record in summary["notebooks"].items():
                    for cell, (score, max_score) in sorted(record.get("cells", {}).items()):
                        writer.writerow(
                            [
                                summary["student"],
                                summary["assignment"],
                                name,
                                cell,
                                score,
                                max_score,
                                record["outcome"],
                            ]
                        )
        (self.reports / "integrity.json").write_text(json.dumps(summaries, indent=1))
        (self.reports / "integrity.md").write_text(_integrity_markdown(summaries))
        return summaries

    def _log_summary(
        self, graded: list[Submission], skipped: int, seconds: float, log: Callable[[str], None]
    ) -> None:
        outcomes: dict[str, int] = {}
        flagged = 0
        for submission in graded:
            for record in submission.notebooks.values():
                outcomes[record["outcome"]] = outcomes.get(record["outcome"], 0) + 1
            if _attention(self._summary_of(submission)):
                flagged += 1
        errors = [s for s in graded if s.error]
        log(
            f"graded {len(graded)} submission(s) in {seconds:.1f} s ({skipped} skipped); "
            "notebooks: " + ", ".join(f"{n} {k}" for k, n in sorted(outcomes.items()))
        )
        log(f"{flagged} submission(s) in the integrity report; {len(errors)} grader error(s)")
        for submission in errors:
            log(f"  {submission.student}/{submission.assignment}: {submission.error[:300]}")
        log(f"grades: {self.reports / 'grades.csv'}; integrity: {self.reports / 'integrity.md'}")
        if self.feedback:
            log(f"feedback: {self.root / 'feedback'}")


def _feedback(root: Path, db_url: str | None, assignment: str, student: str) -> bool:
    """Run nbgrader's ``generate_feedback`` for one submission (in a worker)."""
    grader = ClassGrader(root, db_url=db_url, feedback=False, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bool(grader.api.generate_feedback(assignment, student)["success"])


def _attention(summary: dict[str, Any]) -> list[str]:
    """Everything about one submission that an instructor should read."""
    lines = list(summary["notes"])
    if summary.get("error"):
        lines.append(summary["error"])
    for name, record in summary["notebooks"].items():
        if record["outcome"] not in ("ok", ""):
            lines.append(f"{name}: {record['outcome']}")
        lines += [f"{name}: {note}" for note in record.get("notes", [])]
        lines += [f"{name}: {test} scored 0: {why}" for test, why in record["zeroed"].items()]
        lines += [f"{name}: undone before a test: {item}" for item in record.get("restored", [])]
        lines += [f"{name}: the kernel {event}" for event in record.get("events", [])]
        lines += [f"{name}: suspicious code: {flag}" for flag in record.get("flags", [])]
    return list(dict.fromkeys(lines))


def _integrity_markdown(summaries: list[dict[str, Any]]) -> str:
    lines = ["# Integrity report", ""]
    flagged = [(s, _attention(s)) for s in summaries]
    flagged = [(s, notes) for s, notes in flagged if notes]
    lines.append(f"{len(flagged)} of {len(summaries)} submission(s) need a look.")
    for summary, notes in flagged:
        score = sum(r.get("score") or 0 for r in summary["notebooks"].values())
        total = sum(r.get("max_score") or 0 for r in summary["notebooks"].values())
        lines += ["", f"## {summary['student']} / {summary['assignment']} ({score:g}/{total:g})"]
        lines += [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"
