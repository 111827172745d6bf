"""What the grading worker runs: the kernels' isolation, the zygote, one notebook's run, the judge.

It imports :mod:`instructor.classroom.kernel` (the start lines it gives each kernel, the
probe's messages) and nothing of :mod:`instructor.classroom.grader`: the types it hands back
(:class:`.session.ExecutionResult`, :class:`.session.Outcome`) are defined here.
"""
