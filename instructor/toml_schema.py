"""The course's TOML files (``course.toml``, ``autograder/lms.toml``) read by pydantic: a
key the schema does not name is refused, and each mistake is told with the file, the table,
the key and the problem (:func:`mistakes`).

A table is a :class:`Table` model, or a pydantic dataclass configured with :data:`STRICT_TABLE`
where the records must stay dataclasses; a check pydantic cannot express is a validator
that raises :func:`refused` with the problem in words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import UnionType
from typing import Any, Union, get_args, get_origin

from pydantic import AliasChoices, BaseModel, ConfigDict, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails, PydanticCustomError

__all__ = ["STRICT_TABLE", "Table", "mistakes", "refused"]

STRICT_TABLE = ConfigDict(extra="forbid", coerce_numbers_to_str=True)
"""Unknown keys refused; a number where text is expected read as text (an id written
without quotes). A pydantic dataclass takes ``frozen=True`` from its decorator."""

_REFUSED = "refused"  # the problem, placed in its table by mistakes()
_REFUSED_NAMED = "refused_named"  # the problem, naming its own place
_UNKNOWN_KEY = ("extra_forbidden", "unexpected_keyword_argument")  # models, dataclasses


class Table(BaseModel):
    """One table of a TOML file (:data:`STRICT_TABLE`), frozen."""

    model_config = ConfigDict(**STRICT_TABLE, frozen=True)


def refused(problem: str, *, names_its_place: bool = False) -> PydanticCustomError:
    """The error a validator raises: ``problem`` says what is wrong, the key and the value
    included; :func:`mistakes` puts the file and the table before it, or only the file
    where ``problem`` names its place itself."""
    return PydanticCustomError(_REFUSED_NAMED if names_its_place else _REFUSED, problem)


def _fields(table: Any) -> dict[str, FieldInfo]:
    """A model's or a pydantic dataclass's fields by the key TOML gives them (a field's
    first validation alias, else its name)."""
    fields: dict[str, FieldInfo] = getattr(table, "__pydantic_fields__", None) or {}
    keys = {}
    for name, field in fields.items():
        alias = field.validation_alias
        if isinstance(alias, AliasChoices):
            alias = alias.choices[0]
        keys[alias if isinstance(alias, str) else name] = field
    return keys


def _without_none(annotation: Any) -> Any:
    """``X`` for ``X | None``."""
    args = [arg for arg in get_args(annotation) if arg is not type(None)]
    optional = get_origin(annotation) in (Union, UnionType) and len(args) == 1
    return args[0] if optional else annotation


def _table_at(root: Any, path: Sequence[int | str]) -> Any:
    """The model (or pydantic dataclass) of the table at ``path``, a pydantic error's
    location: through fields, ``dict[str, Table]`` values and ``tuple[Table, ...]``
    entries; None where ``path`` ends at a value."""
    annotation: Any = root
    for part in path:
        if _fields(annotation):
            field = _fields(annotation).get(str(part))
            annotation = field.annotation if field else None
        else:  # part is a dict's key or a tuple's index
            args = get_args(annotation) or (None,)
            annotation = args[-1] if get_origin(annotation) in (dict, Mapping) else args[0]
        annotation = _without_none(annotation)
    return annotation if _fields(annotation) else None


def _label(entry: Any) -> str:
    """An entry of an array of tables by its ``id`` or ``name``."""
    if isinstance(entry, Mapping):
        for key in ("id", "name"):
            if isinstance(entry.get(key), str):
                return entry[key]
    return "?"


def _table_name(data: Any, path: Sequence[int | str], top: str) -> str:
    """The table at ``path`` as TOML writes it: ``[moodle]``, ``[assignments.01_a]``,
    ``[[notebook]] 01_a``, ``a [[notebook.question]] of 01_a``; ``top`` for the top level."""
    names: list[str] = []
    owner = entry = ""
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
    if not path:
        return top
    table = ".".join(names)
    if not isinstance(path[-1], int):
        return f"[{table}]"
    return f"a [[{table}]] of {owner}" if owner else f"[[{table}]] {entry}"


def mistakes(error: ValidationError, root: Any, data: Any, file: str, top: str = "") -> list[str]:
    """What ``error`` (``root``, a model or pydantic dataclass, validating ``data`` read
    from ``file``) says, one line a mistake: the file and the table (``top`` names the
    top level's, where ``data`` holds one table's keys there), the key, the problem. The
    unknown keys of one table make one line, with the keys it takes."""
    lines: list[str] = []
    unknown: dict[tuple[int | str, ...], list[str]] = {}
    details: list[ErrorDetails] = error.errors(include_url=False)
    for detail in details:
        loc = detail["loc"]
        path, key = loc[:-1], loc[-1] if loc else ""
        # A table's own validator refuses it as a whole: its location is the table's.
        refused_table = detail["type"] == _REFUSED and _table_at(root, loc) is not None
        where = _table_name(data, loc if refused_table else path, top)
        place = f"{file} {where}" if where else file
        if detail["type"] in _UNKNOWN_KEY:
            unknown.setdefault(path, []).append(str(key))
        elif detail["type"] == _REFUSED_NAMED:
            lines.append(f"{file}: {detail['msg']}")
        elif detail["type"] == _REFUSED:
            lines.append(f"{place}: {detail['msg']}")
        elif detail["type"] == "missing":
            lines.append(f"{place} has no {key!r}")
        else:
            lines.append(f"{place}: {key} = {detail['input']!r}: {detail['msg']}")
    for path, keys in unknown.items():
        where = _table_name(data, path, top)
        place = f"{file} {where}" if where else file
        known = sorted(_fields(_table_at(root, path)))
        lines.append(f"{place}: unknown keys {sorted(keys)}: use {known}")
    return lines
