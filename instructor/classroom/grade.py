"""Grade every submission of one or more assignments: the pipeline behind ``make grade``.

For each hand-in (``autograder/submitted/<student>/<assignment>/``):

1. *stage* (this process, serial, light): read each notebook without trusting it, run
   nbgrader's own sanitising preprocessors on it, note what the student changed
   (:mod:`.staging`). This step, the fingerprint before it and the recording after run
   inside one boundary per hand-in (:mod:`.containment`): whatever a hand-in holds, it
   ends in its own 0 with the note ``unreadable: <why>``, and the run goes on;
2. *execute* (in parallel: Dask workers, local by default): run it in a sandboxed kernel
   and judge each test cell (:mod:`.execute`);
3. *record* (this process, serial, light): nbgrader's ``autograde`` converter, with its
   ``Execute`` step replaced by :class:`.replay_execute.ReplayExecute`, which takes the outputs of
   step 2 (:mod:`.replay`). So the gradebook, the autograded notebooks and the feedback are
   nbgrader's own.

Before that, each assignment is registered in the gradebook from its source if the
gradebook lacks it or differs (:meth:`.NbgraderCourse.register`: any gradebook, an empty
one included, with the configured due date). Then feedback HTML (:mod:`.feedback`), and
once for the run the grades CSV and the integrity report (:mod:`.reports`), of the students
whose folder is in ``submitted/``, their scores read from the gradebook: a written answer
(graded by hand, in formgrader) is reported as awaiting its grader until it has a manual
score, then with it (its feedback written again), without grading anything again. A
hand-in already recorded with the same files *and* the
same grading (release, tests, points, gradebook, due date, late policy) is skipped on the
next run unless ``force`` is given or its student is named (:mod:`.resume`), so an
interrupted run picks up where it stopped. With a remote scheduler, its workers are checked
first (:mod:`.cluster`). nbgrader's configuration and API: :mod:`.nbgrader_setup`.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from instructor.classroom.worker.isolation import Limits, isolation_note
from instructor.classroom.worker.session import (
    GraderEnvironmentError,
    check_kernel_environment,
    execute_notebook,
    unexecuted,
)
from instructor.paths import COURSE_ROOT
from instructor.student_ids import id_problem, refusal

from .cluster import check_cluster, connect
from .containment import Unreadable, contain, unreadable_staging
from .feedback import lacking_feedback, write_feedback
from .gradebook_reads import from_gradebook
from .gradebook_watch import GradebookWatch
from .integrity_report import awaiting_lines
from .nbgrader_setup import WORK, NbgraderCourse
from .records import ExecutionResult, HandIn, HandInSummary, Outcome
from .replay import record_hand_in
from .reports import run_lines, write_reports
from .resume import ResumeState, fingerprint, grading_context
from .staging import Staged, stage

__all__ = ["ClassGrader"]

REPORTS = "reports"


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
        # One worker per core: the kernels are busy, not waiting, so an extra worker only
        # competes for the cores (3 workers were slower than 2 on 2 cores when measured).
        self.workers = workers or os.cpu_count() or 1
        self.scheduler = scheduler
        self.limits = limits or Limits()
        self.force = force
        self.student_view = student_view
        self.students = list(dict.fromkeys(students)) if students else None
        self.feedback = feedback
        self.progress = progress
        self.state = ResumeState(self.root / WORK / "state")
        self.reports = self.root / REPORTS

    def _folders(self, assignment: str) -> list[str]:
        """The names of the folders of ``submitted/`` that hold ``assignment``, sorted.
        Listed, never globbed with a name: a folder's name is the student's to choose."""
        submitted = self.course.submitted_folder()
        if not submitted.is_dir():
            return []
        return sorted(
            entry.name
            for entry in submitted.iterdir()
            if entry.is_dir() and (entry / assignment).is_dir()
        )

    def present(self, assignment: str) -> list[str]:
        """The students with a folder for ``assignment`` in ``submitted/``, sorted: those
        whose folder's name is a student id (:mod:`instructor.student_ids`) only."""
        return [s for s in self._folders(assignment) if not id_problem(s)]

    def refused(self, assignments: list[str]) -> list[str]:
        """A message for each folder of ``submitted/`` holding one of ``assignments`` whose
        name is no student id: it is not graded (nbgrader would read it as a glob)."""
        names = sorted({s for a in assignments for s in self._folders(a) if id_problem(s)})
        where = f"a folder of {self.course.submitted_folder()}"
        return [refusal(name, where) + " Not graded." for name in names]

    def hand_ins(self, assignment: str) -> list[HandIn]:
        """Every hand-in of ``assignment`` in ``submitted/`` (of the named students only, if
        any), with its fingerprint: its files and what grades it (:func:`.grading_context`)."""
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
        """A Dask client: of the remote scheduler (its workers checked), or of a local
        cluster made for the run."""
        if self.scheduler:
            client = connect(self.scheduler)
            with client:
                check_cluster(client, str(COURSE_ROOT))
                yield client
            return
        from distributed import Client, LocalCluster

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

    def _record(
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
        for assignment in assignments:
            for line in self.course.register(assignment):
                log(line)
        if self.students is not None:
            found = {s for a in assignments for s in self.present(a)}
            for student in self.students:
                if student not in found:
                    log(f"no submission from {student} in {self.course.submitted_folder()}")
        todo: list[HandIn] = []
        skipped = 0
        force = self.force or self.students is not None
        for assignment in assignments:
            for hand_in in self.hand_ins(assignment):
                if not force and self.state.is_recorded(hand_in):
                    skipped += 1
                else:
                    todo.append(hand_in)
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
            for future in as_completed(futures):
                hand_in, name = futures.pop(future)
                try:
                    result = future.result()
                except Exception as error:  # noqa: BLE001 - a worker lost is an outcome
                    reason = f"the grading worker failed ({type(error).__name__}: {error})"
                    notebook = staged[hand_in].notebooks[name]
                    result = unexecuted(notebook, Outcome.GRADER_ERROR, reason)
                results[hand_in][name] = result
                if results[hand_in].keys() == staged[hand_in].notebooks.keys():
                    graded[hand_in] = self._record(
                        hand_in, staged.pop(hand_in), results.pop(hand_in), watch
                    )
                    bar.update()
            bar.close()
            watch.check("while the kernels ran")
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
            if self.feedback:
                regraded = {(h.assignment, h.student) for h in graded}
                lacking = lacking_feedback(self.root, self.state, assignments, self.force)
                missing = [key for key in lacking if key in present]
                missing += sorted((regraded | hand_graded) - set(missing))
                write_feedback(self.course, missing, None if self.scheduler else client, log)
        write_reports(self.reports, summaries, course=self.course, scores_from_gradebook=False)
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
        log(f"grades: {self.reports / 'grades.csv'}; integrity: {self.reports / 'integrity.md'}")
        if self.feedback:
            log(f"feedback: {self.root / 'feedback'}")
        return summaries
