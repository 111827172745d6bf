"""The mistakes a mutant stands for, and the words a message may use to name each one.

Each mutation operator (:mod:`instructor.mutation.operators`) tags its mutants with one
:class:`Mistake`. A visible test that fails a mutant with an ``AssertionError`` *names* it;
where its message also *guesses a cause* (a sentence with a guess marker: "Likely cause",
"looks like", "did you", a question, ...), the guess must be the mutant's own: the guess
must use one of the words :data:`CAUSE_WORDS` lists for the mutant's tag. A guess that names
another mistake costs a student more time than no guess (issue 45).

The vocabulary is the one of ``helpers/checks.py`` (its ``LIKELY_CAUSES`` and the messages of
``check_shape``, ``check_dtype``, ``check_sums_to_one``) and of the grading cases'
``message=`` phrases.
"""

from __future__ import annotations

import re
from enum import Enum

__all__ = ["CAUSE_WORDS", "GUESS_MARKERS", "Mistake", "guess_of", "guess_is_right"]


class Mistake(Enum):
    """A kind of mistake students make with tensors; the value is the tag in reports."""

    DTYPE = "dtype"
    AXIS = "axis"
    KEEPDIM = "keepdim"
    TRANSPOSE = "transpose"
    SCALE = "scale"
    OFF_BY_ONE = "off-by-one"
    COMPARISON = "< vs <="
    MASK_POLARITY = "mask polarity"
    MASK_VALUE = "masked value"
    MAX_NOT_SUBTRACTED = "max not subtracted"
    MAX_CLAMPED = "max clamped at 0"
    IN_PLACE = "input modified in place"
    VIEW = "view of an input returned"
    FORBIDDEN_CALL = "forbidden function called"
    ERROR_DROPPED = "documented error dropped"
    ARGS_SWAPPED = "arguments swapped"
    RESHAPE_ORDER = "split in the wrong order"
    ELEMENTWISE = "* for @"
    LOGIC = "| vs &"
    INT_DIVISION = "/ for //"
    FORMULA = "formula changed"

    @property
    def what(self) -> str:
        """The mistake in words, for reports."""
        return _WHAT[self]


_WHAT = {
    Mistake.DTYPE: "computes in another dtype, or makes a tensor without the input's dtype",
    Mistake.AXIS: "reduces or normalises along another dimension (or over all elements)",
    Mistake.KEEPDIM: "a reduction without keepdim=True",
    Mistake.TRANSPOSE: "a transpose added or removed",
    Mistake.SCALE: "the 1/sqrt(d) scale removed, 1/d, or applied twice",
    Mistake.OFF_BY_ONE: "off by one in a range, a slice, a window or a count",
    Mistake.COMPARISON: "< and <= (or > and >=) swapped",
    Mistake.MASK_POLARITY: "the mask inverted (True taken as blocked)",
    Mistake.MASK_VALUE: "another value for the blocked scores (-1e9, 0)",
    Mistake.MAX_NOT_SUBTRACTED: "the maximum not subtracted before exp (overflows)",
    Mistake.MAX_CLAMPED: "the maximum clamped at 0 before it is subtracted (underflows)",
    Mistake.IN_PLACE: "an input modified in place",
    Mistake.VIEW: "a view of an input returned instead of a new tensor",
    Mistake.FORBIDDEN_CALL: "calls what the exercise forbids (or builds what it forbids)",
    Mistake.ERROR_DROPPED: "a documented ValueError (KeyError) not raised",
    Mistake.ARGS_SWAPPED: "two arguments (or the operands of @) swapped",
    Mistake.RESHAPE_ORDER: "a reshape or a permute with its sizes in the wrong order",
    Mistake.ELEMENTWISE: "the elementwise product for the matrix product, or the reverse",
    Mistake.LOGIC: "| and & swapped: the union of two masks for their intersection, or the reverse",
    Mistake.INT_DIVISION: "/ for //: a float where an index or a size belongs",
    Mistake.FORMULA: "a term, an operator or a function of the formula changed",
}

GUESS_MARKERS = re.compile(
    r"likely cause|looks like|did you|is the result|same sizes in another order|"
    r"there is an extra dimension|a dimension is missing|too few dimensions|"
    r"over the wrong axis|overflows unless|which means|probably|\?(?=\s|$)",
    re.IGNORECASE,
)
"""Where a message starts to guess a cause: what comes before says what was seen (shapes,
dtypes, values expected and got), what comes after is the guess and its explanation. A
question mark counts where it ends a sentence: one inside an exception's own text (numpy's
signature "(n?,k),(k,m?)") guesses nothing."""

CAUSE_WORDS: dict[Mistake, str | None] = {
    Mistake.DTYPE: r"dtype|float32|float64|double|fixed dtype",
    Mistake.AXIS: r"axis|dim|dimension|along|over (all|the) |columns?|rows?|per (row|column)|"
    r"each (row|column|target|query|key)",
    Mistake.KEEPDIM: r"keepdim|broadcast|dimension",
    Mistake.TRANSPOSE: r"transpos|another order|rows and columns|\.T\b|\.mT|convention|"
    r"upper triangle|wrong order",
    Mistake.SCALE: r"sqrt|scal|divided",
    Mistake.OFF_BY_ONE: r"off-by-one|off by one|window|diagonal|last|first|edge|past the end|"
    r"count|number of|one (more|fewer)|padding|neighbour|itself|\bk\b|range|length|offset|"
    r"clip|exactly|larger than",
    Mistake.COMPARISON: r"<=|<|>=|>|diagonal|strict|inclusive|itself|edge|boundary|window|"
    r"clip|exactly",
    Mistake.MASK_POLARITY: r"invert|True means|True = |blocked|upper triangle|future|past|"
    r"the mask|allowed",
    Mistake.MASK_VALUE: r"-inf|1e9|blocked|masked|exactly 0|before the softmax",
    Mistake.MAX_NOT_SUBTRACTED: r"maximum|overflow|stable|NaN|inf\b",
    Mistake.MAX_CLAMPED: r"maximum|underflow|overflow|stable|NaN|clamp|negative",
    Mistake.IN_PLACE: r"in place|modif|change",
    Mistake.VIEW: r"view|copy|in place|modif|shares|changed",
    Mistake.FORBIDDEN_CALL: r"call|n, n|N, N|n x n|\(n_q, n_k\)|memory|matrix|loop",
    Mistake.ERROR_DROPPED: r"raise|Error",
    Mistake.ARGS_SWAPPED: r"swap|order|transpos|argument|another order|convention",
    Mistake.RESHAPE_ORDER: r"head|order|split|transpos|permut|reshape|channel|row-major|"
    r"column by column|column-major|interleav|pairs?",
    Mistake.ELEMENTWISE: r"matrix product|@|matmul|elementwise|broadcast",
    Mistake.LOGIC: r"\||&|union|intersection|both|either|rows? and (its )?columns?|every row|"
    r"every column|\bmask",
    Mistake.INT_DIVISION: r"//|integer|float|division|divisible",
    Mistake.FORMULA: None,
}
"""For each mistake, the words (a regular expression, case-insensitive) of which a guess that
names it uses at least one. ``FORMULA`` (a term, an operator or a function changed) is the
catch-all of mutants whose mistake has no name of its own: its guesses are not judged."""


def guess_of(message: str) -> str:
    """The part of ``message`` from its first guess marker on (empty when it only says what
    it saw)."""
    found = GUESS_MARKERS.search(message)
    return message[found.start() :] if found else ""


def guess_is_right(mistake: Mistake, message: str) -> bool | None:
    """Whether the guess of ``message`` names ``mistake``; None when it guesses nothing, or
    when the mistake has no words to judge a guess by (:attr:`Mistake.FORMULA`)."""
    guess = guess_of(message)
    words = CAUSE_WORDS[mistake]
    if not guess or words is None:
        return None
    return re.search(words, guess, flags=re.IGNORECASE) is not None
