"""What a submitted notebook file did to the released one, read before anything runs.

nbgrader's own sanitising puts test cells back from the gradebook (edited, retyped and, with
``OverwriteCells.add_missing_cells``, deleted ones) and drops duplicated cell ids; these
checks name each such attempt for the integrity report, and catch what makes a file
ungradable (empty, not JSON, nested deeper than any notebook, not a notebook, nbgrader
metadata of another shape than nbgrader's schema). Nothing below reads a cell's
``metadata.nbgrader`` before :func:`read_submission` has checked it. A scan of the code
flags what honest answers never need: replacing library functions, reaching into the
kernel, the network, processes. After the run, :func:`imports_failure` reads the executed
notebook's imports cell: when it raised (a ``ModuleNotFoundError``), every later cell that
needs its names fails too.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path

import jsonschema
import nbformat
from jsonschema.exceptions import best_match
from jsonschema.protocols import Validator
from nbformat import NotebookNode
from nbgrader.nbgraderformat import MetadataValidator

from instructor.anatomy import IMPORTS_TAG, is_test_cell
from instructor.classroom.kernel.guard import STUDENT_CELL


@dataclass
class Reading:
    """A submitted file, read: its notebook, or why there is none."""

    notebook: NotebookNode | None
    problem: str = ""


MAX_JSON_DEPTH = 64
"""The deepest nesting of JSON a submitted notebook may have. nbformat's own notebooks
nest about 8 deep (a widget's state a few more); every later step (nbformat, nbgrader,
pickling for a worker) recurses through the file, so deeper is refused here, whole."""


def _deeper_than(data: object, limit: int) -> bool:
    # Iterative: a file that nests 100,000 deep is measured without recursion.
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((value, depth + 1) for value in item.values())
        elif isinstance(item, list):
            stack.extend((value, depth + 1) for value in item)
    return False


@functools.cache
def _metadata_validator() -> Validator:
    """A validator for nbgrader's cell metadata schema, built once: ``jsonschema.validate``
    checks the schema itself against its metaschema on every call (most of its time). Its
    errors are ranked as ``jsonschema.validate`` ranks them (``best_match``)."""
    schema = MetadataValidator().schema
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    return validator(schema)


def read_submission(text: str) -> Reading:
    """Parse a submitted ``.ipynb`` file without trusting it to be one."""
    if not text.strip():
        return Reading(None, "empty file")
    try:
        data = json.loads(text)
    except RecursionError:
        return Reading(None, f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    except ValueError as error:
        return Reading(None, f"not valid JSON ({str(error)[:200]})")
    if _deeper_than(data, MAX_JSON_DEPTH):
        return Reading(None, f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    if not isinstance(data, dict) or "cells" not in data:
        return Reading(None, "valid JSON but not a notebook (no cells)")
    try:
        notebook = nbformat.reads(text, as_version=4)
        nbformat.validate(notebook)
    except Exception as error:  # noqa: BLE001 - nbformat raises several kinds
        message = str(error).splitlines()[0][:200] if str(error) else ""
        return Reading(None, f"not a valid notebook ({type(error).__name__}: {message})")
    # Each cell's own nbgrader metadata, against the schema version nbgrader's autograde reads;
    # not nbgrader's rules between cells: its sanitising repairs a duplicated or retyped test cell.
    for index, cell in enumerate(notebook.cells):
        if "nbgrader" not in cell.metadata:
            continue
        error = best_match(_metadata_validator().iter_errors(cell.metadata["nbgrader"]))
        if error is not None:
            where = "".join(f"[{part!r}]" for part in error.absolute_path)
            problem = f"cell {index}: metadata.nbgrader{where}: {error.message[:200]}"
            return Reading(None, f"nbgrader metadata not of nbgrader's schema ({problem})")
    return Reading(notebook)


MAX_NOTEBOOK_BYTES = 32 * 2**20
"""The largest notebook file read (32 MiB). The course's executed notebooks, figures
included, are under 0.5 MiB; a larger file is refused before it is read into memory."""


def read_student_file(path: Path, limit: int) -> tuple[bytes | None, str]:
    """The bytes of the regular file ``path`` (at most ``limit``), else None and why. A link
    (to ``/dev/zero``, to another student's file) is not followed."""
    if path.is_symlink():
        return None, "a symbolic link, not a file"
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        return None, f"cannot be opened ({error.strerror})"
    with os.fdopen(descriptor, "rb") as file:
        if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
            return None, "not a regular file"
        data = file.read(limit + 1)
    if len(data) > limit:
        return None, f"larger than {limit / 2**20:g} MiB"
    return data, ""


def read_submission_file(path: Path, limit: int = MAX_NOTEBOOK_BYTES) -> Reading:
    """:func:`read_submission` of the file at ``path``, read by :func:`read_student_file`."""
    data, problem = read_student_file(path, limit)
    if data is None:
        return Reading(None, problem)
    return read_submission(data.decode("utf-8", errors="replace"))


def _graded_cells(nb: NotebookNode) -> list[tuple[str, NotebookNode]]:
    marked = [(cell.get("metadata", {}).get("nbgrader", {}), cell) for cell in nb.cells]
    return [(meta["grade_id"], cell) for meta, cell in marked if "grade_id" in meta]


def compare_with_release(submitted: NotebookNode, released: NotebookNode) -> list[str]:
    """What the student did to the released notebook's nbgrader cells."""
    notes: list[str] = []
    mine = _graded_cells(submitted)
    theirs = dict(_graded_cells(released))
    for grade_id, original in theirs.items():
        kind = "test cell" if is_test_cell(original) else "cell"
        copies = [cell for gid, cell in mine if gid == grade_id]
        if not copies:
            if is_test_cell(original) or original.metadata["nbgrader"].get("locked"):
                notes.append(f"deleted {kind} {grade_id} (restored from the gradebook)")
            continue
        if len(copies) > 1:
            notes.append(f"duplicated {kind} {grade_id} ({len(copies)} copies; one kept)")
        cell = copies[0]
        if cell.cell_type != original.cell_type:
            notes.append(
                f"changed {kind} {grade_id} from {original.cell_type} to {cell.cell_type} "
                "(restored)"
            )
        elif is_test_cell(original) and cell.source != original.source:
            notes.append(f"edited test cell {grade_id} (restored from the gradebook)")
        keys = ("grade", "solution", "locked", "points")
        if any(
            cell.metadata["nbgrader"].get(k) != original.metadata["nbgrader"].get(k) for k in keys
        ):
            notes.append(f"changed the nbgrader metadata of {grade_id} (restored)")
    for grade_id, _cell in mine:
        if grade_id not in theirs:
            notes.append(f"cell with an nbgrader id of its own, {grade_id!r} (not graded)")
    first_seen = list(dict.fromkeys(gid for gid, _ in mine if gid in theirs))
    expected = [gid for gid in theirs if gid in first_seen]
    if first_seen != expected:
        moved = [a for a, b in zip(first_seen, expected, strict=True) if a != b]
        notes.append("moved cells out of their released order: " + ", ".join(moved))
    return notes


def normalise_notebook(submitted: NotebookNode, released: NotebookNode) -> NotebookNode:
    """A copy nbgrader can sanitise: nbgrader marks only on the first cell of each released id.

    Another copy, or an id the release lacks, would stop nbgrader 0.9 (a ``KeyError`` in
    ``OverwriteCells``) or ask for a grade the gradebook lacks; they stay as plain cells."""
    notebook = nbformat.from_dict(json.loads(json.dumps(submitted)))
    known = dict(_graded_cells(released))
    seen: set[str] = set()
    for cell in notebook.cells:
        meta = cell.get("metadata", {})
        if "nbgrader" not in meta:
            continue
        grade_id = meta["nbgrader"].get("grade_id")
        if grade_id not in known or grade_id in seen:
            del meta["nbgrader"]
        else:
            seen.add(grade_id)
            # Points and flags are the release's, whatever the file claims.
            meta["nbgrader"] = json.loads(json.dumps(known[grade_id].metadata["nbgrader"]))
    return notebook


def mark_student_cells(notebook: NotebookNode, released: NotebookNode) -> NotebookNode:
    """``notebook`` with every code cell marked (``metadata[STUDENT_CELL]``, whatever the file
    said) as the student's or not: the student's when its source is no code cell's of the
    release. The guard reports what the kernel does only when the student's code does it:
    the course's own cells (the set-up, figures, a training loop) are not the student's act."""
    course = {_plain(cell.source) for cell in released.cells if cell.cell_type == "code"}
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.metadata[STUDENT_CELL] = _plain(cell.source) not in course
        else:
            cell.metadata.pop(STUDENT_CELL, None)
    return notebook


def _plain(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.splitlines()).strip()


SUSPICIOUS_MODULES = {
    "torch",
    "np",
    "numpy",
    "F",
    "nn",
    "math",
    "builtins",
    "helpers",
    "checks",
    "sys",
    "IPython",
}


SUSPICIOUS_CALLS = {
    "get_ipython": "reaches into the kernel (get_ipython)",
    "setattr": "replaces attributes with setattr",
    "addaudithook": "adds an audit hook",
    "settrace": "sets a trace function",
    "set_custom_exc": "installs an exception handler in IPython",
    "fork": "forks the process",
    "system": "runs a shell command",
    "Popen": "starts a subprocess",
    "connect": "opens a connection",
    "create_connection": "opens a network connection",
    "_exit": "ends the kernel process",
}


CODE_FROM_TEXT = {
    "exec": "runs code made from text (exec)",
    "eval": "evaluates code made from text (eval)",
    "compile": "compiles code from text (compile)",
}
"""Called by name only (``re.compile`` and ``model.eval`` are other functions): code made
at run time can claim any file name, a library's included."""


SUSPICIOUS_IMPORTS = {
    "ctypes",
    "gc",
    "inspect",
    "socket",
    "subprocess",
    "urllib",
    "http",
    "builtins",
    "IPython",
}


def scan_code(nb: NotebookNode) -> list[str]:
    """Flags for code outside the test cells that honest answers never need."""
    flags: list[str] = []
    for cell in nb.cells:
        if cell.cell_type != "code" or is_test_cell(cell):
            continue
        source = "\n".join(
            line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!"))
        )
        where = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") or cell.get("id", "?")
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue  # the kernel will say so, in the cell's own output
        except (RecursionError, MemoryError):
            # Deeper than Python's parser goes: no answer needs it, and the kernel will
            # refuse it too; the hand-in is still graded.
            flags.append(f"{where}: code nested too deep to scan")
            continue
        for node in ast.walk(tree):
            found = None
            if isinstance(node, ast.Assign | ast.AugAssign | ast.Delete):
                for target in getattr(node, "targets", None) or [node.target]:
                    if isinstance(target, ast.Attribute):
                        base = target.value
                        while isinstance(base, ast.Attribute):
                            base = base.value
                        if isinstance(base, ast.Name) and base.id in SUSPICIOUS_MODULES:
                            found = f"assigns {ast.unparse(target)}"
            elif isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in SUSPICIOUS_CALLS:
                    found = SUSPICIOUS_CALLS[name]
                elif isinstance(func, ast.Name) and func.id in CODE_FROM_TEXT:
                    found = CODE_FROM_TEXT[func.id]
            elif isinstance(node, ast.Import | ast.ImportFrom):
                names = [a.name for a in node.names] if type(node) is ast.Import else [node.module]
                for top in (name.split(".")[0] for name in names if name):
                    if top in SUSPICIOUS_IMPORTS:
                        found = f"imports {top}"
            elif isinstance(node, ast.Name) and "grader" in node.id.lower():
                found = f"names the grader ({node.id})"
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                if "solutions/" in node.value or "gradebook" in node.value:
                    found = f"refers to {node.value!r}"
            if found and f"{where}: {found}" not in flags:
                flags.append(f"{where}: {found}")
    return flags


def imports_failure(notebook: NotebookNode | dict) -> str:
    """The error the executed notebook's imports cell raised (``"ModuleNotFoundError: No
    module named 'x'"``), or ``""`` when it ran cleanly (or has no outputs)."""
    for cell in notebook.get("cells", []):
        tags = cell.get("metadata", {}).get("tags", ())
        if cell.get("cell_type") != "code" or IMPORTS_TAG not in tags:
            continue
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                return f"{output.get('ename', 'Error')}: {output.get('evalue', '')}".strip()
    return ""
