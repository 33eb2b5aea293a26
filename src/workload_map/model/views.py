"""Typed, immutable views serialised to JSON in one place, and their JSON Schema.

The engine's and the CLI's machine outputs are immutable views, declared as dataclasses whose
fields name their JSON key (``json_field``) and built as frozen ``msgspec`` Structs (see
:class:`View`); :func:`to_json` turns any of them into plain JSON and :func:`json_schema`
derives the schema of the same type from its annotations (a type with a ``__json_schema__``
classmethod brings its own, e.g. an object whose schema is a CRD's), so the committed schema
cannot drift from what is printed. No library is used because the needs are small and exact:
pydantic would bring a runtime dependency into the pure core, and ``dataclasses.asdict`` knows
neither JSON names nor fields that are left out when unset.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Union, dataclass_transform, get_args, get_origin, get_type_hints

__all__ = ["View", "json_field", "json_schema", "json_type", "set_field", "to_json"]

_OMIT_NONE: Callable[[Any, Any], bool] = lambda _obj, value: value is None  # noqa: E731
_OMIT_FALSY: Callable[[Any, Any], bool] = lambda _obj, value: not value  # noqa: E731


def json_field(
    name: str,
    *,
    omit: str | Callable[[Any, Any], bool] | None = None,
    description: str = "",
    default: Any = dataclasses.MISSING,
    default_factory: Any = dataclasses.MISSING,
) -> Any:
    """A dataclass field printed as ``name``; ``omit`` ("none", "falsy" or a predicate on
    (object, value)) leaves the key out of the JSON, and makes it optional in the schema."""
    rule = (
        {"none": _OMIT_NONE, "falsy": _OMIT_FALSY}.get(omit, omit)
        if isinstance(omit, str)
        else omit
    )
    metadata = {"json": name, "omit": rule, "description": description}
    if default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


@dataclass_transform(frozen_default=True, field_specifiers=(json_field,))
class _Declared(type):
    """The metaclass of :class:`View`: a subclass's body becomes the view's Struct directly."""

    def __new__(
        mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any], **kwargs: Any
    ) -> Any:
        if bases:  # a declared view: built once, as the Struct (never a class of this metaclass)
            return _struct(name, namespace["__qualname__"], namespace)
        return super().__new__(mcs, name, bases, namespace, **kwargs)


class View(metaclass=_Declared):
    """Declare a view by subclassing: ``class V(View): ...`` is written as a frozen dataclass
    (``json_field`` fields, defaults, methods, ``__post_init__``) and built, in one step, as a
    frozen ``msgspec.Struct`` with the same fields: the engine builds views per pod and per
    gang, and a frozen dataclass pays a Python-level ``object.__setattr__`` per field (about 10
    times the cost of the Struct's C constructor). ``View`` is not among the Struct's bases
    (``isinstance(obj, View)`` is false). The dataclass fields (with their JSON names) are
    attached, so ``dataclasses.fields``/``replace``/``is_dataclass``, :func:`to_json` and
    :func:`json_schema` read a view as they read any dataclass. The class body becomes the
    Struct directly: a class decorator would get a finished plain class whose creation
    (``type.__new__`` filling every slot) is then thrown away, about as costly as the Struct's
    own."""

    __slots__ = ()


def _struct(name: str, qualname: str, body: Mapping[str, Any]) -> Any:
    """The frozen Struct of a view declared by ``body`` (a class namespace or ``__dict__``)."""
    import msgspec  # here, not at module import: only modules that declare views need it

    declared = _declared(body)
    namespace: dict[str, Any] = {}
    for key, value in body.items():
        if key in ("__dict__", "__weakref__") or isinstance(value, dataclasses.Field):
            continue
        namespace[key] = value
    namespace.setdefault("__doc__", None)  # where a plain class has it: the same class __dict__
    for field_name, (_, value) in declared.items():
        if not isinstance(value, dataclasses.Field):
            continue  # a plain default is in the namespace already
        if value.default is not dataclasses.MISSING:
            namespace[field_name] = value.default
        elif value.default_factory is not dataclasses.MISSING:
            namespace[field_name] = msgspec.field(default_factory=value.default_factory)
    namespace["__qualname__"] = qualname
    # the metaclass called directly: types.new_class's Python steps (resolving the bases,
    # preparing and filling a namespace) add nothing for one known base
    meta: Any = type(msgspec.Struct)
    built = meta(name, (msgspec.Struct,), namespace, frozen=True)
    setattr(built, "__dataclass_fields__", _Fields(built, declared))  # noqa: B010
    setattr(built, "__dataclass_params__", _PARAMS)  # noqa: B010 (what dataclasses reads)
    return built


#: what ``dataclasses`` records of a frozen dataclass's options (it reads ``frozen`` of a base
#: class), without making a dataclass to copy them from: that generated and compiled six
#: methods at every import, ~2.7M instructions of each command that loads a view (callgrind)
_PARAMS: Any = types.SimpleNamespace(
    init=True, repr=True, eq=True, order=False, unsafe_hash=False, frozen=True
)


def _declared(body: Mapping[str, Any]) -> dict[str, tuple[Any, Any]]:
    """The fields a class body declares: name -> (annotation, value or ``MISSING``).
    ``ClassVar`` annotations are class attributes, not fields."""
    out: dict[str, tuple[Any, Any]] = {}
    for name, annotation in body.get("__annotations__", {}).items():
        text = annotation if isinstance(annotation, str) else repr(annotation)
        if not text.startswith(("ClassVar", "typing.ClassVar")):
            out[name] = (annotation, body.get(name, dataclasses.MISSING))
    return out


class _Fields:
    """A view's ``__dataclass_fields__`` until it is first read (``dataclasses.fields``,
    ``replace``, ``is_dataclass``, :func:`to_json`, :func:`json_schema`, the loader): then the
    fields are made, as ``dataclasses`` would record them, and put in its place. A command
    reads the fields of few of the views it imports; making them all took ~9k instructions a
    field at every start-up (about 400 fields on a live ``get``'s path)."""

    __slots__ = ("_cls", "_declared")

    def __init__(self, cls: type, declared: dict[str, tuple[Any, Any]]) -> None:
        self._cls = cls
        self._declared = declared

    def __get__(self, obj: object, owner: type | None = None) -> dict[str, dataclasses.Field[Any]]:
        fields: dict[str, dataclasses.Field[Any]] = {}
        for name, (annotation, value) in self._declared.items():
            f: dataclasses.Field[Any] = (
                value if isinstance(value, dataclasses.Field) else dataclasses.field(default=value)
            )
            f.name = name
            f.type = annotation
            f._field_type = dataclasses._FIELD  # type: ignore[attr-defined]
            fields[name] = f
        setattr(self._cls, "__dataclass_fields__", fields)  # noqa: B010 (in place of this)
        return fields


def set_field(obj: Any, name: str, value: Any) -> None:
    """Set a field of a view being built (in its ``__post_init__``): views are frozen."""
    import msgspec

    msgspec.structs.force_setattr(obj, name, value)


_PLAN: dict[type, tuple[tuple[str, str, Callable[[Any, Any], bool] | None], ...]] = {}


def _plan(cls: type) -> tuple[tuple[str, str, Callable[[Any, Any], bool] | None], ...]:
    found = _PLAN.get(cls)
    if found is None:
        found = _PLAN[cls] = tuple(
            (f.name, f.metadata["json"], f.metadata.get("omit"))
            for f in dataclasses.fields(cls)
            if "json" in f.metadata
        )
    return found


_SCALARS = frozenset({str, int, float, bool, type(None)})


def to_json(value: Any) -> Any:
    """Plain JSON (dicts, lists, strings, numbers, booleans, null) of a view or a value."""
    cls = type(value)
    # exact types first, without isinstance (an ABC check each): a describe view is tens of
    # thousands of values
    if cls in _SCALARS:
        return value
    plan = _PLAN.get(cls)
    if plan is not None:
        out: dict[str, Any] = {}
        for attr, key, omit in plan:
            item = getattr(value, attr)
            if omit is not None and omit(value, item):
                continue
            out[key] = item if type(item) in _SCALARS else to_json(item)
        return out
    if cls is tuple or cls is list:
        return [v if type(v) in _SCALARS else to_json(v) for v in value]
    if cls is dict:
        return {str(k): v if type(v) in _SCALARS else to_json(v) for k, v in value.items()}
    return _to_json(value)


def _to_json(value: Any) -> Any:
    """:func:`to_json` of anything but the exact types it handles first."""
    if value is None or isinstance(value, str | int | float | bool):
        return value.value if isinstance(value, enum.Enum) else value
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        _plan(type(value))
        return to_json(value)
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    raise TypeError(f"no JSON form for {type(value).__name__}")


def json_type(value: Any) -> str:
    """The JSON type of a value as jq names it (``null``, ``boolean``, ``number``, …)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


# -- schema ------------------------------------------------------------------------------------
def json_schema(root: type, *, title: str, schema_id: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``root``'s JSON, its dataclasses as ``$defs``."""
    defs: dict[str, Any] = {}
    body = _schema(root, defs, root.__module__)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": schema_id,
        "title": title,
        **body,
        "$defs": dict(sorted(defs.items())),
    }


def _schema(tp: Any, defs: dict[str, Any], module: str) -> dict[str, Any]:
    origin = get_origin(tp)
    if tp is Any or tp is object:
        return {}
    if tp is type(None):
        return {"type": "null"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is str:
        return {"type": "string"}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return {"enum": [m.value for m in tp]}
    if origin in (Union, types.UnionType):
        options = [_schema(a, defs, module) for a in get_args(tp)]
        if all(set(o) == {"type"} for o in options):  # str | None -> ["string", "null"]
            return {"type": [o["type"] for o in options]}
        return {"anyOf": options}
    if origin is typing.Literal:
        return {"enum": list(get_args(tp))}
    if origin in (tuple, list) or tp in (tuple, list):
        args = get_args(tp)
        item = args[0] if args else Any
        return {"type": "array", "items": _schema(item, defs, module)}
    if origin in (dict, Mapping) or tp in (dict, Mapping) or origin is typing.Mapping:
        args = get_args(tp)
        value = args[1] if len(args) == 2 else Any
        return {"type": "object", "additionalProperties": _schema(value, defs, module)}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        name = tp.__name__
        if name not in defs:
            defs[name] = {}  # placeholder: recursive types refer to themselves
            defs[name] = _object_schema(tp, defs)
        return {"$ref": f"#/$defs/{name}"}
    own = getattr(tp, "__json_schema__", None)
    if isinstance(tp, type) and callable(own):  # a type whose schema is written elsewhere
        defs.setdefault(tp.__name__, own())
        return {"$ref": f"#/$defs/{tp.__name__}"}
    raise TypeError(f"no JSON Schema for {tp!r}")


def _object_schema(cls: type, defs: dict[str, Any]) -> dict[str, Any]:
    hints = get_type_hints(cls)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for f in dataclasses.fields(cls):
        if "json" not in f.metadata:
            continue
        prop = _schema(hints[f.name], defs, cls.__module__)
        if f.metadata.get("description"):
            prop = {"description": f.metadata["description"], **prop}
        properties[f.metadata["json"]] = prop
        if f.metadata.get("omit") is None:
            required.append(f.metadata["json"])
    out: dict[str, Any] = {"type": "object"}
    doc = (cls.__doc__ or "").strip().splitlines()
    if doc and not doc[0].startswith(cls.__name__ + "("):
        out["description"] = doc[0]
    out["properties"] = properties
    out["required"] = required
    out["additionalProperties"] = False
    return out
