"""``python -m instructor.mutation [NOTEBOOK...]`` (``make mutants``): classify the mutants of
every notebook (or those named) and write ``benchmarks/mutants.md``."""

from __future__ import annotations

import argparse
import time

from instructor import registry
from instructor.mutation.equivalents import equivalents
from instructor.mutation.report import markdown, tally
from instructor.mutation.run import classify_isolated
from instructor.paths import BENCHMARKS


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m instructor.mutation")
    parser.add_argument("notebooks", nargs="*", help="notebook ids (default: all)")
    args = parser.parse_args(argv)
    ids = args.notebooks or registry.load().ids
    start = time.perf_counter()
    results = classify_isolated(ids)
    listed = equivalents()
    if not args.notebooks:  # a partial run never overwrites the course's report
        (BENCHMARKS / "mutants.md").write_text(markdown(results, listed), encoding="utf-8")
    total = tally([o for outcomes in results.values() for o in outcomes], listed)
    print(
        f"{total.made} mutants, {total.killed} killed, {total.named} named "
        f"({100 * total.named_share:.1f}%), {total.raw} raw, {total.silent} silent, "
        f"right cause {total.right}/{total.guessed}, {total.equivalent} equivalent, "
        f"{len(total.survivors)} survivors, in {time.perf_counter() - start:.0f} s"
    )


if __name__ == "__main__":
    main()
