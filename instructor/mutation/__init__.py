"""Mutation analysis of the graded functions (issue 45): mistakes generated, not listed.

* :mod:`~instructor.mutation.source`, :mod:`~instructor.mutation.operators`,
  :mod:`~instructor.mutation.rewrites`, :mod:`~instructor.mutation.forbidden`: the operators,
  rewrites of a reference solution's syntax tree, each tagged with a
  :class:`~instructor.mutation.mistakes.Mistake`;
* :mod:`~instructor.mutation.engine`: the mutants of every graded function and class;
* :mod:`~instructor.mutation.run`: each mutant against its test cells, in-process;
* :mod:`~instructor.mutation.equivalents`: the reviewed equivalent mutants (``mutants.toml``);
* :mod:`~instructor.mutation.report`: ``benchmarks/mutants.md`` (``make mutants``).
"""
