"""The course's TOML files (``course.toml``, ``autograder/lms.toml``) read by pydantic
models: a key the schema does not name is refused, and each mistake is told with the file,
the table, the key and the problem (:func:`mistakes`).

A model of a table derives from :class:`Table`; a check pydantic cannot express is a
validator that raises :func:`refused` with the whole problem in words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic_core import ErrorDetails, PydanticCustomError

__all__ = ["Table", "mistakes", "refused"]

REFUSED = "refused"


class Table(BaseModel):
    """One table of a TOML file: frozen, unknown keys refused (``extra="forbid"``); a number
    where text is expected is read as text (an id written without quotes)."""

    model_config = ConfigDict(extra="forbid", frozen=True, coerce_numbers_to_str=True)


def refused(problem: str) -> PydanticCustomError:
    """The error a validator raises: ``problem`` says what is wrong, the key and value
    included (:func:`mistakes` puts the file and the table before it)."""
    return PydanticCustomError(REFUSED, problem)


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _without_none(annotation: Any) -> Any:
    """``X`` for ``X | None``."""
    args = [arg for arg in get_args(annotation) if arg is not type(None)]
    return (
        args[0] if get_origin(annotation) in (Union, UnionType) and len(args) == 1 else annotation
    )


def _model_at(model: type[BaseModel], path: Sequence[int | str]) -> type[BaseModel] | None:
    """The model of the table at ``path`` (a pydantic error's location without its key),
    through fields, ``dict[str, Model]`` values and ``tuple[Model, ...]`` entries."""
    annotation: Any = model
    for part in path:
        if _is_model(annotation):
            field = annotation.model_fields.get(str(part))
            annotation = field.annotation if field else None
        else:  # part is a dict's key or a tuple's index
            args = get_args(annotation) or (None,)
            annotation = args[-1] if get_origin(annotation) in (dict, Mapping) else args[0]
        annotation = _without_none(annotation)
    return annotation if _is_model(annotation) else None


def _label(entry: Any) -> str:
    """An array entry named by its ``id`` or ``name``, else by its place."""
    if isinstance(entry, Mapping):
        for key in ("id", "name"):
            if isinstance(entry.get(key), str):
                return entry[key]
    return "?"


def _where(data: Any, path: Sequence[int | str]) -> str:
    """The table at ``path`` as TOML writes it: ``[moodle]``, ``[assignments.01_a]``,
    ``[[notebook]] 01_a``, ``a [[notebook.question]] of 01_a``."""
    names: list[str] = []
    owner = ""
    entry = ""
    value = data
    for part in path:
        try:
            value = value[part]
        except (KeyError, IndexError, TypeError):
            value = None
        if isinstance(part, int):
            owner, entry = entry, _label(value)
        else:
            names.append(part)
    table = ".".join(names)
    if not path:
        return ""
    if not isinstance(path[-1], int):
        return f"[{table}]"
    return f"a [[{table}]] of {owner}" if owner else f"[[{table}]] {entry}"


def mistakes(error: ValidationError, model: type[BaseModel], data: Any, file: str) -> list[str]:
    """What ``error`` (``model`` validating ``data``, read from ``file``) says, one line a
    mistake: the file and table, the key, the problem. The unknown keys of one table make
    one line, with the keys it takes."""
    lines: list[str] = []
    unknown: dict[tuple[int | str, ...], list[str]] = {}
    details: list[ErrorDetails] = error.errors(include_url=False)
    for detail in details:
        loc = detail["loc"]
        path, key = loc[:-1], loc[-1] if loc else ""
        # A table's own validator refuses it as a whole: its location is the table's.
        table_refused = detail["type"] == REFUSED and _model_at(model, loc) is not None
        where = _where(data, loc if table_refused else path)
        place = f"{file} {where}" if where else file
        if detail["type"] == "extra_forbidden":
            unknown.setdefault(path, []).append(str(key))
        elif detail["type"] == REFUSED:
            lines.append(f"{place}: {detail['msg']}")
        elif detail["type"] == "missing":
            lines.append(f"{place} has no {key!r}")
        else:
            lines.append(f"{place}: {key} = {detail['input']!r}: {detail['msg']}")
    for path, keys in unknown.items():
        table = _model_at(model, path)
        known = sorted(table.model_fields) if table else []
        where = _where(data, path)
        place = f"{file} {where}" if where else file
        lines.append(f"{place}: unknown keys {sorted(keys)}: use {known}")
    return lines
