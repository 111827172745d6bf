"""Grade every submission of one or more assignments: the pipeline behind ``make grade``.

Read top-down, in the order of a run. :class:`ClassGrader` registers each assignment in the
gradebook, then for each hand-in (``autograder/submitted/<student>/<assignment>/``):

1. *find*: a hand-in recorded with the same files and grading is skipped unless ``force``
   is given or its student is named (:class:`.course.ResumeState`);
2. *stage* (this process): :func:`stage` reads each notebook without trusting it
   (:mod:`.integrity`), runs nbgrader's sanitising preprocessors and copies it to
   ``.grading/staged/`` with nbgrader's exchange files (:func:`exchange_files`);
3. *execute and judge* (Dask workers, local by default; a remote scheduler's are checked
   first, :func:`check_cluster`): a sandboxed kernel per notebook
   (:mod:`instructor.classroom.worker.session`);
4. *record* (this process): :func:`record_hand_in` runs nbgrader's ``autograde`` with its
   ``Execute`` step replaced by :class:`ReplayExecute`, which pastes in the outputs of
   step 3: the gradebook, the autograded notebooks and the feedback are nbgrader's own;
5. *report* (:mod:`.reports`): feedback HTML (with :mod:`instructor.feedback`), then the
   grades CSVs and the integrity report, the scores read once more from the gradebook.

Steps 1, 2 and 4 run inside one boundary per hand-in (:func:`.records.contain`): whatever a
hand-in holds ends in its own 0 with the note ``unreadable: <why>``, and the run goes on.
What no hand-in causes (``KeyboardInterrupt``, the gradebook watch, the kernel environment
check) runs outside it.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import nbformat
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Dict

from instructor.classroom.grader.course import (
    STAGING_FOLDER,
    WORK,
    GradebookWatch,
    NbgraderCourse,
    ResumeState,
    fingerprint,
    from_gradebook,
    grading_context,
    late_penalties,
)
from instructor.classroom.grader.integrity import (
    compare_with_release,
    mark_student_cells,
    normalise_notebook,
    read_student_file,
    read_submission_file,
    scan_code,
)
from instructor.classroom.grader.records import (
    HandIn,
    HandInSummary,
    NotebookSummary,
    Screening,
    Unreadable,
    contain,
)
from instructor.classroom.grader.reports import (
    awaiting_lines,
    lacking_feedback,
    run_lines,
    write_feedback,
    write_reports,
)
from instructor.classroom.grader.timing import StepTimes
from instructor.classroom.worker import (
    STUDENT_VIEW,
    ExecutionResult,
    GraderEnvironmentError,
    Outcome,
)
from instructor.classroom.worker.isolation import Limits, isolation_note
from instructor.classroom.worker.session import (
    check_kernel_environment,
    execute_notebook,
    unexecuted,
)
from instructor.paths import COURSE_ROOT
from instructor.student_ids import id_problem, refusal

__all__ = ["ClassGrader", "ClusterError"]


class ClassGrader:
    """Grade a class on the nbgrader course at ``root`` (``autograder/`` by default).

    Args:
        root: the nbgrader course root (its ``nbgrader_config.py`` is read).
        db_url: a SQLAlchemy URL for the gradebook (default: the course's, SQLite).
        workers: Dask workers of the embedded ``LocalCluster`` (default: one per core; one
            more was slower in benchmarks/grading.md, the kernels being busy, not waiting).
        scheduler: the address of a running Dask scheduler; then no local cluster is made.
        limits: time, memory and process limits of each notebook.
        force: grade again submissions already recorded with the same files.
        students: grade only these students (again, even if recorded); None: everyone.
        feedback: write feedback HTML for each graded submission.
        progress: show a progress bar.
        student_view: also run each test cell inside the kernel, as the student does, and
            keep those outputs in the autograded notebooks' cell metadata (never graded):
            the course's tests use it to check that both views of every case agree.
        figures: draw the figures into the autograded notebooks; by default they are left
            as their text (no grade depends on them, and drawing costs time).
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
        students: list[str] | None = None,
        feedback: bool = True,
        progress: bool = True,
        student_view: bool = False,
        figures: bool = False,
    ) -> None:
        self.course = NbgraderCourse(root, db_url)
        self.figures = figures
        self.root = self.course.root
        self.workers = workers or os.cpu_count() or 1
        self.scheduler = scheduler
        self.limits = limits or Limits()
        self.force = force
        self.student_view = student_view
        self.students = list(dict.fromkeys(students)) if students else None
        self.feedback = feedback
        self.progress = progress
        self.state = ResumeState(self.root / WORK / "state")
        self.reports = self.root / "reports"
        self.step_times = StepTimes()
        """The step times of the last :meth:`grade` (:mod:`.timing`)."""

    def _folders(self, assignment: str) -> list[str]:
        # Listed, never globbed with a name: a folder's name is the student's to choose.
        submitted = self.course.submitted_folder()
        if not submitted.is_dir():
            return []
        return sorted(
            entry.name
            for entry in submitted.iterdir()
            if entry.is_dir() and (entry / assignment).is_dir()
        )

    def present(self, assignment: str) -> list[str]:
        """The students with a folder for ``assignment`` in ``submitted/`` named by a student id."""
        return [s for s in self._folders(assignment) if not id_problem(s)]

    def refused(self, assignments: list[str]) -> list[str]:
        """Why each folder of ``assignments`` named by no student id is not graded (nbgrader
        would read its name as a glob)."""
        names = sorted({s for a in assignments for s in self._folders(a) if id_problem(s)})
        where = f"a folder of {self.course.submitted_folder()}"
        return [refusal(name, where) + " Not graded." for name in names]

    def hand_ins(self, assignment: str) -> list[HandIn]:
        """Every hand-in of ``assignment`` (of the named students, if any), with its fingerprint."""
        context = grading_context(self.course, assignment)
        students = self.present(assignment)
        if self.students is not None:
            students = [s for s in students if s in self.students]
        folder = self.course.submitted_folder()
        hand_ins = []
        for student in students:
            files = folder / student / assignment
            digest = contain(lambda files=files: fingerprint(files, context))
            # A folder that cannot be read has no fingerprint: it is never taken for one
            # recorded already, and its staging says why it cannot be read.
            hand_ins.append(
                HandIn(student, assignment, files, "" if isinstance(digest, Unreadable) else digest)
            )
        return hand_ins

    def _stage(self, hand_in: HandIn) -> Staged:
        """``hand_in`` staged, or staged as unreadable when staging failed on it."""
        staged = contain(lambda: stage(self.course, hand_in))
        if isinstance(staged, Unreadable):
            return unreadable_staging(self.course, hand_in, staged)
        return staged

    @contextlib.contextmanager
    def _dask(self) -> Iterator[Any]:
        """A client of the remote scheduler (its workers checked), else of a local cluster;
        its start and its close timed (:attr:`step_times`)."""
        stack = contextlib.ExitStack()
        try:
            with self.step_times.timed("cluster_start"):
                client = self._client(stack)
        except BaseException:
            stack.close()
            raise
        try:
            yield client
        finally:
            with self.step_times.timed("cluster_close"):
                stack.close()

    def _client(self, stack: contextlib.ExitStack) -> Any:
        """A Dask client, entered on ``stack`` with the cluster it made, if any."""
        if self.scheduler:
            client = stack.enter_context(connect(self.scheduler))
            check_cluster(client, str(COURSE_ROOT))
            return client
        from distributed import Client, LocalCluster

        cluster = stack.enter_context(
            LocalCluster(
                n_workers=self.workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
                silence_logs=40,
            )
        )
        return stack.enter_context(Client(cluster))

    def _record(
        self,
        hand_in: HandIn,
        staged: Staged,
        executed: dict[str, ExecutionResult],
        watch: GradebookWatch,
    ) -> HandInSummary:
        with self.step_times.timed("record"):
            return self._record_one(hand_in, staged, executed, watch)

    def _record_one(
        self,
        hand_in: HandIn,
        staged: Staged,
        executed: dict[str, ExecutionResult],
        watch: GradebookWatch,
    ) -> HandInSummary:
        watch.check(f"before {hand_in.student}'s {hand_in.assignment} was recorded")
        summary = contain(lambda: record_hand_in(self.course, hand_in, staged, executed))
        if isinstance(summary, Unreadable):
            # Recorded as unreadable instead: zeros, no notebook read again. Should this
            # fail too, the gradebook itself is at fault, and the run stops.
            unreadable = unreadable_staging(self.course, hand_in, summary)
            summary = replace(
                record_hand_in(self.course, hand_in, unreadable, {}),
                error=f"recording failed: {summary.why}",
            )
        watch.recorded(hand_in.assignment, hand_in.student)
        self.state.save(summary)
        return summary

    def grade(
        self, assignments: list[str], log: Callable[[str], None] = print
    ) -> list[HandInSummary]:
        """Grade every pending hand-in of ``assignments``; return the recorded summary of
        every student present in ``submitted/``."""
        from distributed import as_completed
        from tqdm.auto import tqdm

        start = time.perf_counter()
        self.step_times = times = StepTimes()
        with times.timed("find"):
            for assignment in assignments:
                for line in self.course.register(assignment):
                    log(line)
            if self.students is not None:
                seen = {s for a in assignments for s in self.present(a)}
                for student in self.students:
                    if student not in seen:
                        log(f"no submission from {student} in {self.course.submitted_folder()}")
            found = [hand_in for a in assignments for hand_in in self.hand_ins(a)]
        force = self.force or self.students is not None
        todo = [hand_in for hand_in in found if force or not self.state.is_recorded(hand_in)]
        skipped = len(found) - len(todo)
        # Trial runs of bubblewrap and of the cgroups (a subprocess each), so once.
        log(
            f"{len(todo)} submission(s) to grade, {skipped} already graded; "
            f"isolation: {isolation_note()}"
        )
        for line in self.refused(assignments):
            log(line)
        # Scores as they stand: nothing but this run's recordings may change them until the
        # run ends (a kernel reaching the gradebook, without bubblewrap, would).
        watch = GradebookWatch(self.course.gradebook, assignments)
        graded: dict[HandIn, HandInSummary] = {}
        staged: dict[HandIn, Staged] = {}
        results: dict[HandIn, dict[str, ExecutionResult]] = {}
        with self._dask() as client:
            # After the cluster's check: a refused cluster's message is not glued to a bar.
            bar = tqdm(total=len(todo), unit="submission", disable=not self.progress)
            futures = {}
            nothing_to_run = []
            # Runs on a worker next to the first notebooks; nothing is recorded before it
            # has passed, so a kernel that cannot load the grader's code scores no one.
            environment = client.submit(check_kernel_environment, self.limits, pure=False)
            for hand_in in todo:
                with times.timed("stage"):
                    staging = self._stage(hand_in)
                if not staging.notebooks:
                    nothing_to_run.append((hand_in, staging))
                    continue
                staged[hand_in], results[hand_in] = staging, {}
                for name, notebook in staging.notebooks.items():
                    future = client.submit(
                        execute_notebook,
                        notebook,
                        name,
                        self.limits,
                        self.student_view,
                        self.figures,
                        pure=False,
                    )
                    futures[future] = (hand_in, name)
            if todo:
                try:
                    with times.timed("environment_check"):
                        environment.result()
                except GraderEnvironmentError:
                    client.cancel(list(futures))
                    bar.close()
                    raise
            else:
                environment.cancel()
            for hand_in, staging in nothing_to_run:
                graded[hand_in] = self._record(hand_in, staging, {}, watch)
                bar.update()
            # The wait for the workers is the loop's time less the recordings made in it.
            waiting_since, recorded_before = time.perf_counter(), times.record
            for future in as_completed(futures):
                hand_in, name = futures.pop(future)
                try:
                    result = future.result()
                except Exception as error:  # noqa: BLE001 - a worker lost is an outcome
                    reason = f"the grading worker failed ({type(error).__name__}: {error})"
                    notebook = staged[hand_in].notebooks[name]
                    result = unexecuted(notebook, Outcome.GRADER_ERROR, reason)
                results[hand_in][name] = result
                times.kernels.append(result.spent)
                if results[hand_in].keys() == staged[hand_in].notebooks.keys():
                    graded[hand_in] = self._record(
                        hand_in, staged.pop(hand_in), results.pop(hand_in), watch
                    )
                    bar.update()
            times.execute += time.perf_counter() - waiting_since - (times.record - recorded_before)
            bar.close()
            watch.check("while the kernels ran")
            reports_since = time.perf_counter()
            # Feedback and reports: of the students present in submitted/ (a removed folder
            # drops out); a hand-in graded again gets its feedback again.
            present = {(a, s) for a in assignments for s in self.present(a)}
            recorded = [
                s for s in self.state.load(assignments) if (s.assignment, s.student) in present
            ]
            # The gradebook is the record: scores given by hand since (a written answer
            # graded in formgrader) go into the summaries, the state and the feedback.
            summaries = from_gradebook(self.course, recorded)
            hand_graded = set()
            for before, after in zip(recorded, summaries, strict=True):
                if after != before:
                    self.state.save(after)
                    hand_graded.add((after.assignment, after.student))
            # Late penalties on the scores as they now are (hand-given points included),
            # into the gradebook before the feedback shows them; the reports show them too.
            penalties = late_penalties(self.course, summaries)
            if self.feedback:
                regraded = {(h.assignment, h.student) for h in graded}
                lacking = lacking_feedback(self.root, self.state, assignments, self.force)
                missing = [key for key in lacking if key in present]
                missing += sorted((regraded | hand_graded) - set(missing))
                write_feedback(self.course, missing, None if self.scheduler else client, log)
            times.reports += time.perf_counter() - reports_since
        with times.timed("reports"):
            write_reports(self.reports, summaries, course=self.course, penalties=penalties, say=log)
        in_order = [graded[hand_in] for hand_in in todo if hand_in in graded]
        for line in run_lines(in_order, skipped, time.perf_counter() - start):
            log(line)
        by_hand = hand_graded - {(h.assignment, h.student) for h in graded}
        if by_hand:
            log(
                f"{len(by_hand)} submission(s) with scores given by hand since the last "
                "run: taken from the gradebook into the reports"
                + (" and their feedback" if self.feedback else "")
            )
        for line in awaiting_lines(summaries):
            log(line)
        for line in times.lines():
            log(line)
        log(f"grades: {self.reports / 'grades.csv'}; integrity: {self.reports / 'integrity.md'}")
        log(f"item analysis: {self.reports / 'items.html'} (to share: items_anonymous.html)")
        if self.feedback:
            log(f"feedback: {self.root / 'feedback'}")
        return summaries


SECRET_FILE = "submission_secret.txt"
"""What ``nbgrader submit`` writes beside the notebooks: ``secrets.token_hex(64)``."""


_SECRET = re.compile(r"[0-9a-f]{32,256}")


_TIMESTAMP_BYTES = 100  # one date: "2026-11-20 12:00:00.000000 UTC" is 30 bytes


def _small_regular_file(path: Path, limit: int) -> str | None:
    data, _ = read_student_file(path, limit)
    if data is None or not data.isascii():
        return None
    return data.decode("ascii")


def exchange_files(source: Path, staged: Path) -> tuple[str, ...]:
    """Copy nbgrader's exchange files of the hand-in in ``source`` to ``staged``; notes.

    A hand-in without a usable ``submission_secret.txt`` (an LMS download has none; a
    student may edit or delete theirs) gets a new random one: ``release_feedback`` opens
    every hand-in's secret and stops the whole release at the first one missing. Its
    feedback is then released under a name that student's ``fetch_feedback`` cannot find,
    which the note says.
    """
    notes: list[str] = []
    timestamp = source / "timestamp.txt"
    if timestamp.exists() or timestamp.is_symlink():
        text = _small_regular_file(timestamp, _TIMESTAMP_BYTES)
        if text is None:
            notes.append("timestamp.txt is not a short text file (ignored: graded as on time)")
        else:
            (staged / "timestamp.txt").write_text(text, encoding="ascii")
    secret_path = source / SECRET_FILE
    secret = None
    if secret_path.exists() or secret_path.is_symlink():
        secret = _small_regular_file(secret_path, 256)
        if secret is None or not _SECRET.fullmatch(secret):
            secret = None
            notes.append(
                f"{SECRET_FILE} is not what nbgrader submit writes: feedback released through "
                "the exchange cannot be fetched by this student (give it to them by hand)"
            )
    (staged / SECRET_FILE).write_text(secret or secrets.token_hex(64), encoding="ascii")
    return tuple(notes)


@dataclass(frozen=True)
class Staged:
    """A hand-in, staged: what reading it found, and what is to be executed."""

    notes: tuple[str, ...] = ()
    screenings: dict[str, Screening] = field(default_factory=dict)
    """Every expected notebook, in the gradebook's order."""
    notebooks: dict[str, dict[str, Any]] = field(default_factory=dict)
    """name -> the sanitised notebook to execute (the readable ones only)."""


def stage(course: NbgraderCourse, hand_in: HandIn) -> Staged:
    """Read, check and sanitise ``hand_in``; stage its readable notebooks."""
    folder = course.root / STAGING_FOLDER / hand_in.student / hand_in.assignment
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    expected = course.notebook_names(hand_in.assignment)
    notes = exchange_files(hand_in.folder, folder) + tuple(
        f"extra notebook {path.name} (not graded)"
        for path in sorted(hand_in.folder.glob("*.ipynb"))
        if path.stem not in expected
    )
    screenings: dict[str, Screening] = {}
    notebooks: dict[str, dict[str, Any]] = {}
    for name in expected:
        path = hand_in.folder / f"{name}.ipynb"
        if not path.is_file():
            screenings[name] = Screening(
                name, Outcome.MISSING, (f"no {name}.ipynb in the submission (scored 0)",)
            )
            continue
        reading = read_submission_file(path)
        if reading.notebook is None:
            screenings[name] = Screening(
                name, Outcome.UNREADABLE, (f"{path.name}: {reading.problem} (scored 0)",)
            )
            continue
        released = course.released(hand_in.assignment, name)
        changes = tuple(compare_with_release(reading.notebook, released))
        flags = tuple(scan_code(reading.notebook))
        notebook = normalise_notebook(reading.notebook, released)
        try:
            sanitised = course.sanitise(
                nbformat.from_dict(notebook), hand_in.student, hand_in.assignment, name
            )
        except Exception as error:  # noqa: BLE001 - nbgrader could not make sense of it
            problem = f"nbgrader could not sanitise it ({error!r}; scored 0)"
            screenings[name] = Screening(name, Outcome.UNREADABLE, (*changes, problem), flags)
            continue
        nbformat.write(notebook, folder / f"{name}.ipynb")
        screenings[name] = Screening(name, Outcome.PENDING, changes, flags)
        notebooks[name] = dict(mark_student_cells(sanitised, released))
    return Staged(notes, screenings, notebooks)


def unreadable_staging(course: NbgraderCourse, hand_in: HandIn, failure: Unreadable) -> Staged:
    """``hand_in`` staged as unreadable: every expected notebook scores 0 with the note. The
    staging folder is emptied, so that recording finds no notebook of this hand-in to read."""
    shutil.rmtree(
        course.root / STAGING_FOLDER / hand_in.student / hand_in.assignment, ignore_errors=True
    )
    note = f"{failure.note} (scored 0)"
    return Staged(
        screenings={
            name: Screening(name, Outcome.UNREADABLE, (note,))
            for name in course.notebook_names(hand_in.assignment)
        }
    )


def record_hand_in(
    course: NbgraderCourse,
    hand_in: HandIn,
    staged: Staged,
    executed: dict[str, ExecutionResult],
) -> HandInSummary:
    """Record ``hand_in``'s grades into the gradebook (zeros where nothing could run)."""
    notebooks = {
        name: NotebookSummary.screened(screening) for name, screening in staged.screenings.items()
    }
    for name, result in executed.items():
        notebooks[name] = notebooks[name].executed(result)
    error = ""
    if executed:
        # nbgrader's autograde on the staged copy, with the outputs of ``executed``;
        # notebooks without a result (missing, unreadable) are left to it: it scores them 0.
        api: Any = course.recording_api
        api.config.ReplayExecute.executed = {name: r.notebook for name, r in executed.items()}
        try:
            with warnings.catch_warnings():
                # nbgrader 0.9's own SQLAlchemy autoflush warnings: its CLI logs them too.
                warnings.simplefilter("ignore")
                outcome = api.autograde(hand_in.assignment, hand_in.student, force=True)
        finally:
            api.config.ReplayExecute.executed = {}
        if not outcome["success"]:
            error = "nbgrader autograde failed: " + outcome.get("error", "")[-2000:]
    else:
        course.record_zeros(hand_in.student, hand_in.assignment, list(notebooks))
    for name, (score, max_score, cells) in course.scores(
        hand_in.student, hand_in.assignment, list(notebooks)
    ).items():
        notebooks[name] = replace(notebooks[name], score=score, max_score=max_score, cells=cells)
    return HandInSummary(
        hand_in.student, hand_in.assignment, hand_in.fingerprint, staged.notes, error, notebooks
    )


class ReplayExecute(NbGraderPreprocessor):
    """nbgrader's ``Execute`` step, replaced: outputs come from the sandboxed run."""

    executed = Dict(
        help="notebook name -> the executed notebook (nbformat dict) of the sandboxed run"
    ).tag(config=True)

    def preprocess(self, nb, resources):  # nbconvert's signature
        info = resources["nbgrader"]
        name = info["notebook"]
        where = (info["student"], info["assignment"], name)
        if name not in self.executed:
            raise RuntimeError(f"{where}: no executed notebook to replay")
        executed = nbformat.from_dict(self.executed[name])
        if [c.source for c in executed.cells] != [c.source for c in nb.cells]:
            raise RuntimeError(f"{where}: the executed notebook is not the one sanitised")
        for cell, ran in zip(nb.cells, executed.cells, strict=True):
            if cell.cell_type == "code":
                cell.outputs = ran.get("outputs", [])
                cell.execution_count = ran.get("execution_count")
                if STUDENT_VIEW in ran.get("metadata", {}):
                    cell.metadata[STUDENT_VIEW] = ran.metadata[STUDENT_VIEW]
        return nb, resources


CLUSTER_SECONDS = 10.0
"""How long to wait for the scheduler, a first worker and the workers' checks."""


# Run on the workers from its source: a worker without the course (which could not import
# this module) must still answer why.
WORKER_CHECK_SOURCE = """
def check_worker():
    import os, sys
    found = {"python": sys.executable, "cwd": os.getcwd()}
    try:
        import helpers
        import instructor.paths
    except BaseException as error:
        found["error"] = f"{type(error).__name__}: {error}"
        return found
    found["course_root"] = str(instructor.paths.COURSE_ROOT)
    return found
"""


class ClusterError(RuntimeError):
    """The cluster cannot grade this course; the message says why and what to do."""


def connect(address: str, timeout: float = CLUSTER_SECONDS) -> Any:
    """A ``distributed.Client`` of the scheduler at ``address``, or :class:`ClusterError`."""
    from distributed import Client

    try:
        return Client(address, timeout=timeout)
    except (OSError, TimeoutError) as error:
        raise ClusterError(
            f"no Dask scheduler answers at {address} within {timeout:g} s ({error}): start "
            f"one with `dask scheduler` and give its address (tcp://HOST:8786) to --scheduler"
        ) from None


def check_cluster(client: Any, course_root: str, timeout: float = CLUSTER_SECONDS) -> int:
    """How many workers ``client``'s cluster has, each importing the course from
    ``course_root``; else :class:`ClusterError`."""
    address = client.scheduler.address
    fix = (
        f"start workers with `dask worker {address}` on machines where the course is at "
        f"{course_root} (a checkout there, with `pip install -e '.[instructor]'` in the "
        "worker's Python), or run without --scheduler to grade on this machine"
    )
    try:
        client.wait_for_workers(1, timeout=timeout)
    except TimeoutError:
        raise ClusterError(
            f"the Dask scheduler at {address} has no worker (none joined within {timeout:g} s): "
            + fix
        ) from None
    namespace: dict[str, Any] = {"__name__": "instructor_cluster_check"}
    exec(compile(WORKER_CHECK_SOURCE, "<worker check>", "exec"), namespace)  # noqa: S102 - our source
    try:
        found = client.sync(
            client._run, namespace["check_worker"], on_error="return", callback_timeout=timeout
        )
    except TimeoutError:
        raise ClusterError(
            f"the workers of {address} did not answer the course check within {timeout:g} s "
            "(busy or stuck): " + fix
        ) from None
    problems = []
    for worker, answer in sorted(found.items()):
        if isinstance(answer, BaseException):
            problems.append(f"{worker}: the check failed ({type(answer).__name__}: {answer})")
        elif "error" in answer:
            problems.append(
                f"{worker}: cannot import the course ({answer['error']}; its Python is "
                f"{answer['python']}, working directory {answer['cwd']})"
            )
        elif answer["course_root"] != course_root:
            problems.append(
                f"{worker}: imports the course from {answer['course_root']}, not {course_root}"
            )
    if problems:
        raise ClusterError(
            f"{len(problems)} of {len(found)} worker(s) of {address} cannot grade this course:\n"
            + "\n".join(f"  {line}" for line in problems)
            + "\nTo fix: "
            + fix
        )
    return len(found)
