"""The number of issue 45, per notebook and function: of the mutants the hidden tests kill,
how many the visible tests name, with the right cause; written to ``benchmarks/mutants.md``.

``python -m instructor.mutation`` (``make mutants``) classifies every notebook's mutants
(:mod:`instructor.mutation.run`) and writes the report; ``tests/instructor/test_mutation.py``
computes the same :class:`Tally` and fails below its bar.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from instructor.mutation.equivalents import Equivalent
from instructor.mutation.run import Cause, MutantOutcome, Sighting

__all__ = ["Tally", "markdown", "tally"]


@dataclass
class Tally:
    """Counts over a set of outcomes (a function, a notebook, the course)."""

    made: int = 0
    killed: int = 0
    named: int = 0
    raw: int = 0
    silent: int = 0
    guessed: int = 0
    right: int = 0
    equivalent: int = 0
    survivors: list[MutantOutcome] = field(default_factory=list)
    stale: list[MutantOutcome] = field(default_factory=list)
    """Listed as equivalent, yet killed: the entry is out of date."""

    def add(self, outcome: MutantOutcome, listed: bool) -> None:
        self.made += 1
        if not outcome.killed:
            if listed:
                self.equivalent += 1
            else:
                self.survivors.append(outcome)
            return
        if listed:
            self.stale.append(outcome)
        self.killed += 1
        self.named += outcome.seen is Sighting.NAMED
        self.raw += outcome.seen is Sighting.RAW
        self.silent += outcome.seen is Sighting.SILENT
        self.guessed += outcome.cause is not Cause.NONE
        self.right += outcome.cause is Cause.RIGHT

    @property
    def named_share(self) -> float:
        return self.named / self.killed if self.killed else 1.0

    @property
    def right_share(self) -> float:
        return self.right / self.guessed if self.guessed else 1.0

    def row(self, label: str) -> str:
        return (
            f"| {label} | {self.made} | {self.killed} | {self.named} | "
            f"{100 * self.named_share:.1f}% | {self.raw} | {self.silent} | "
            f"{self.right}/{self.guessed} | {self.equivalent} | {len(self.survivors)} |"
        )


def tally(outcomes: Iterable[MutantOutcome], listed: dict[str, Equivalent]) -> Tally:
    total = Tally()
    for outcome in outcomes:
        total.add(outcome, outcome.mutant.key in listed)
    return total


HEADER = (
    "| | made | killed | named | named / killed | raw exception | silent | right cause / "
    "guesses | equivalent | survivors |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
    "| ---: | ---: |"
)


def _quote(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")[:300]


def markdown(results: dict[str, list[MutantOutcome]], listed: dict[str, Equivalent]) -> str:
    """The report: the table, then every mutant that is not named right, by kind."""
    everything = [o for outcomes in results.values() for o in outcomes]
    course = tally(everything, listed)
    lines = [
        "# Mutants: every mistake the hidden tests catch, named by the visible tests",
        "",
        "Written by `make mutants` (`python -m instructor.mutation`; issue 45). Each graded",
        "function's reference solution is mutated by the operators of `instructor/mutation/`",
        "(each mutant tagged with the mistake it stands for) and run, in-process, against its",
        "test cells: **killed** = some test cell fails (the mutant loses points); **named** = a",
        "visible test fails it with an `AssertionError`; **raw exception** = the first visible",
        "failure is another exception; **silent** = killed by the hidden tests only; **right",
        "cause / guesses** = of the named mutants whose message guesses a cause, those whose",
        "guess uses the words of the mutant's own mistake (`instructor/mutation/mistakes.py`);",
        "**equivalent** = not killed and reviewed in `mutants.toml`; **survivors** = not killed",
        "and not reviewed (holes in the hidden tests, or equivalents to review).",
        "",
        HEADER,
        course.row("**course**"),
    ]
    for assignment, outcomes in results.items():
        lines.append(tally(outcomes, listed).row(f"**{assignment}**"))
        for function in dict.fromkeys(o.mutant.function for o in outcomes):
            own = [o for o in outcomes if o.mutant.function == function]
            lines.append(tally(own, listed).row(f"{assignment} · `{function}`"))
    kinds = dict.fromkeys(o.mutant.mistake for o in everything)
    lines += ["", "## By mistake", "", HEADER]
    for mistake in kinds:
        own = [o for o in everything if o.mutant.mistake is mistake]
        lines.append(tally(own, listed).row(f"{mistake.value}"))

    def listing(title: str, chosen: list[MutantOutcome], with_message: bool = True) -> None:
        lines.extend(["", f"## {title} ({len(chosen)})", ""])
        for o in chosen:
            text = f"- `{_quote(o.mutant.key)}` ({o.mutant.mistake.value})"
            if with_message:
                text += f": {o.where}: {_quote(o.message)}"
            lines.append(text)

    killed = [o for o in everything if o.killed]
    listing("Raw exceptions", [o for o in killed if o.seen is Sighting.RAW])
    listing("Killed by the hidden tests only", [o for o in killed if o.seen is Sighting.SILENT])
    listing(
        "A likely cause that is not the mutant's", [o for o in killed if o.cause is Cause.WRONG]
    )
    listing("Survivors", course.survivors, with_message=False)
    listing("Listed as equivalent but killed (out of date)", course.stale)
    lines.extend(["", f"## Equivalent ({course.equivalent}, reviewed in mutants.toml)", ""])
    keys = {o.mutant.key for o in everything if not o.killed}
    for key, entry in listed.items():
        if key in keys:
            lines.append(f"- `{_quote(key)}`: {entry.reason}")
    return "\n".join(lines) + "\n"
