"""Grade every submission of one or more assignments: the pipeline behind ``make grade``.

Read top-down, in the order of a run. :class:`ClassGrader` registers each assignment in the
gradebook, then for each hand-in (``autograder/submitted/<student>/<assignment>/``):

1. *find*: a hand-in recorded with the same files and grading is skipped unless ``force``
   is given or its student is named (:class:`.course.ResumeState`);
2. *stage* (this process, :mod:`.stage`): each notebook read without trusting it
   (:mod:`.integrity`), sanitised by nbgrader's preprocessors, copied to
   ``.grading/staged/`` with nbgrader's exchange files;
3. *execute and judge* (Dask workers, :mod:`.cluster`: local by default; a remote
   scheduler's are checked first): a sandboxed kernel per notebook
   (:mod:`instructor.classroom.worker.session`);
4. *record* (this process, :mod:`.record`): nbgrader's ``autograde`` with its ``Execute``
   step replaced by one that pastes in the outputs of step 3: the gradebook, the autograded
   notebooks and the feedback are nbgrader's own;
5. *report* (:mod:`.reports`): feedback HTML (with :mod:`instructor.feedback`), then the
   grades CSVs and the integrity report, the scores read once more from the gradebook.

Staging feeds the workers as each hand-in is staged, and each hand-in is recorded as soon as
its notebooks are back, while the others execute. Each step is timed (:mod:`.timing`).

Steps 1, 2 and 4 run inside one boundary per hand-in (:func:`.records.contain`): whatever a
hand-in holds ends in its own 0 with the note ``unreadable: <why>``, and the run goes on.
What no hand-in causes (``KeyboardInterrupt``, the gradebook watch, the kernel environment
check) runs outside it.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from instructor.classroom.grader.cluster import enter_client
from instructor.classroom.grader.course import (
    WORK,
    GradebookWatch,
    NbgraderCourse,
    ResumeState,
    fingerprint,
    from_gradebook,
    grading_context,
    late_penalties,
)
from instructor.classroom.grader.excluded import read_excluded, without
from instructor.classroom.grader.items import AssignmentItems, late_hand_ins, rubric_items
from instructor.classroom.grader.items_html import write_items
from instructor.classroom.grader.record import record_hand_in
from instructor.classroom.grader.records import (
    HandIn,
    HandInSummary,
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
from instructor.classroom.grader.stage import Staged, stage, unreadable_staging
from instructor.classroom.grader.timing import StepTimes
from instructor.classroom.worker import (
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

__all__ = ["ClassGrader"]


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

    def write_item_analysis(self, assignments: list[str]) -> list[AssignmentItems]:
        """``python -m instructor.classroom items``: the item analysis of the students present
        in ``submitted/``, as ``make grade`` writes it, from the records and the gradebook's
        scores (given by hand since included), grading nothing."""
        _, recorded = self._recorded(assignments)
        summaries = without(from_gradebook(self.course, recorded), read_excluded(self.root))
        late = late_hand_ins(self.course, summaries)
        rubrics = rubric_items(self.course.root)
        return write_items(self.reports, summaries, late=late, rubrics=rubrics)

    def _recorded(self, assignments: list[str]) -> tuple[set[tuple[str, str]], list[HandInSummary]]:
        """(assignment, student) of every hand-in present in ``submitted/``, and the recorded
        summaries of those (a removed folder drops out)."""
        present = {(a, s) for a in assignments for s in self.present(a)}
        recorded = [s for s in self.state.load(assignments) if (s.assignment, s.student) in present]
        return present, recorded

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
                client = enter_client(stack, self.scheduler, self.workers, str(COURSE_ROOT))
        except BaseException:
            stack.close()
            raise
        try:
            yield client
        finally:
            with self.step_times.timed("cluster_close"):
                stack.close()

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
            present, recorded = self._recorded(assignments)
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
