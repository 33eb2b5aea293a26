"""Turning whatever a caller holds into plain JSON values.

The engine works on plain dicts; callers often hold client objects instead. Accepted, besides
dicts (passed through untouched, never copied or mutated):

- ``kubernetes`` typed models (``V1Pod``, ``V1PodList``...). Release 37 generates pydantic
  models: ``model_dump(mode="json", by_alias=True, exclude_none=True)`` gives the API's own JSON
  (camelCase keys, RFC 3339 ``Z`` timestamps) ten times faster than
  ``ApiClient().sanitize_for_serialization``, and builds no ``ApiClient`` per object. Models of
  older releases (``openapi_types``/``attribute_map``) are walked directly, also without one.
- ``kubernetes.dynamic`` ``ResourceInstance`` (lists included) and its ``ResourceField``
  values (``instance.items``): ``to_dict()``.
- kr8s objects: ``.raw``. lightkube models and generic resources: ``.to_dict()``.
- Any other ``Mapping``.

Lists: :func:`plain_items` takes an iterable of such objects or one list object (a ``*List``
dict, a typed ``V1PodList``, a dynamic list, lightkube/kr8s iterables), unwraps nested lists,
and gives list items without ``apiVersion``/``kind`` (what the API server and the typed clients
return inside a list) the list's own item type. A string, a number or a list of non-objects is
rejected with an error naming the argument and the position, never silently ignored.

Detection is by type and module name, so no client library is imported here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from workload_map.engine.errors import EngineError

__all__ = ["is_list_object", "plain_items", "to_plain", "workload_object"]

_SCALARS = (str, bytes, bytearray, int, float, bool)


def to_plain(obj: Any, *, what: str = "object") -> Any:
    """The JSON value of ``obj``: dicts pass through untouched (never copied, never mutated)."""
    if obj is None or type(obj) is dict or isinstance(obj, list | str | int | float | bool):
        return obj
    if isinstance(obj, dict) and not _client_module(type(obj)):
        return obj  # an OrderedDict or a caller's own dict type: already JSON-like
    converted = _convert(obj)
    if converted is not _UNKNOWN:
        return converted
    raise EngineError(
        f"{what}: expected a dict or a Kubernetes client object "
        f"(kubernetes, kr8s, lightkube), got {_type_name(obj)}"
    )


_UNKNOWN: Any = object()


def _convert(obj: Any) -> Any:
    cls = type(obj)
    module = cls.__module__ or ""
    if isinstance(obj, Mapping) and not _client_module(cls):
        return dict(obj)
    if module.startswith("kubernetes.dynamic"):
        # ResourceInstance / ResourceField answer every attribute name (None when absent), so
        # duck typing would misread them: only their own to_dict() is trusted.
        return obj.to_dict()
    if module.startswith("kubernetes.client"):
        dump = getattr(cls, "model_dump", None)
        if callable(dump):  # release 37+: pydantic models
            return _typed_kind(cls, obj.model_dump(mode="json", by_alias=True, exclude_none=True))
        if hasattr(cls, "openapi_types") and hasattr(cls, "attribute_map"):
            return _typed_kind(cls, _legacy_model(obj))
    if module.startswith("kr8s"):
        raw = getattr(obj, "raw", None)
        if isinstance(raw, Mapping):
            return _plain_tree(raw)
    if module.startswith("box"):  # kr8s' raw values
        return _plain_tree(obj)
    if module.startswith("lightkube") or hasattr(cls, "to_dict"):
        to_dict = getattr(obj, "to_dict", None)
        if callable(to_dict):
            value = to_dict()
            if isinstance(value, Mapping):
                return dict(value)
    raw = getattr(cls, "raw", None)  # a kr8s-like object defined elsewhere: raw as a property
    if raw is not None:
        value = getattr(obj, "raw", None)
        if isinstance(value, Mapping):
            return _plain_tree(value)
    return _UNKNOWN


def _client_module(cls: type) -> bool:
    """Types of the client libraries, some of which subclass dict (lightkube's generic
    resources, kr8s' ``box.Box``): converted, not passed through."""
    module = cls.__module__ or ""
    return module.startswith(("kubernetes", "lightkube", "kr8s", "box"))


def _typed_kind(cls: type, value: Any) -> Any:
    """A typed model knows its kind even where the API left it out (``list_namespaced_pod()``
    items have ``kind: None``): ``V1Pod`` -> ``Pod``. The group is not in the class name, so
    ``apiVersion`` is filled in for the core group's ``v1`` kinds only."""
    if not isinstance(value, dict) or value.get("kind") or "metadata" not in value:
        return value
    import re

    m = re.fullmatch(r"(V\d+(?:alpha\d+|beta\d+)?)([A-Z]\w*)", cls.__name__)
    if m is None or m.group(2).endswith("List"):
        return value
    out = {"kind": m.group(2), **value}
    if m.group(2) in _CORE_V1 and m.group(1) == "V1" and not value.get("apiVersion"):
        out["apiVersion"] = "v1"
    return out


_CORE_V1 = frozenset(
    {"Pod", "Node", "Namespace", "Service", "ConfigMap", "Secret", "PersistentVolumeClaim", "Event"}
)


def _plain_tree(value: Any) -> Any:
    """Mappings and sequences (kr8s keeps a ``box.Box``) down to dicts and lists."""
    if isinstance(value, dict) and type(value) is dict:
        if all(type(v) in (str, int, float, bool) or v is None for v in value.values()):
            return value
    if isinstance(value, Mapping):
        return {str(k): _plain_tree(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain_tree(v) for v in value]
    return value


def _legacy_model(obj: Any) -> Any:
    """A model of the pre-37 generator: ``attribute_map`` gives each attribute's JSON name."""
    import datetime

    if obj is None or isinstance(obj, str | int | float | bool):
        return obj
    if isinstance(obj, list | tuple):
        return [_legacy_model(v) for v in obj]
    if isinstance(obj, dict):
        return {k: _legacy_model(v) for k, v in obj.items()}
    if isinstance(obj, datetime.datetime | datetime.date):
        return obj.isoformat().replace("+00:00", "Z")
    names = getattr(type(obj), "attribute_map", None)
    if not isinstance(names, dict):
        return obj
    out = {}
    for attr, key in names.items():
        value = getattr(obj, attr, None)
        if value is not None:
            out[key] = _legacy_model(value)
    return out


def is_list_object(value: Any) -> bool:
    """True for a ``kind: *List`` object with ``items`` (a PodList, a ``List``)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get("items"), list)
        and (str(value.get("kind") or "").endswith("List") or "kind" not in value)
    )


def plain_items(value: Any, *, what: str = "pods") -> list[dict[str, Any]]:
    """Every object of ``value`` as a plain dict: an iterable of objects or one list object.

    Items of a list object lacking ``apiVersion``/``kind`` get the list's item type (``PodList``
    -> ``Pod``); raises :class:`EngineError` naming ``what`` (and the index) otherwise.
    """
    if value is None or isinstance(value, _SCALARS):
        raise EngineError(
            f"{what}: expected a list of Kubernetes objects or a list object (e.g. a PodList), "
            f"got {_type_name(value)}"
        )
    out: list[dict[str, Any]] = []
    if not isinstance(value, dict | list | tuple):
        plain = _convert(value)
        if plain is not _UNKNOWN:
            value = plain
    if isinstance(value, dict):
        if not is_list_object(value):
            raise EngineError(
                f"{what}: expected a list of objects or a list object with items, got one "
                f"{value.get('kind') or 'object'} (wrap a single object in a list)"
            )
        _add_list(value, out, what)
        return out
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        raise EngineError(
            f"{what}: expected a list of Kubernetes objects or a list object, "
            f"got {_type_name(value)}"
        )
    append = out.append
    for index, item in enumerate(value):
        if type(item) is dict and type(item.get("items")) is not list:
            append(item)  # a plain object, not a list: most items, so checked first and cheaply
            continue
        where = f"{what}[{index}]"
        if type(item) is dict:
            plain_item: Any = item
        elif item is None or isinstance(item, (*_SCALARS, list, tuple)):
            raise EngineError(f"{where}: expected a Kubernetes object, got {_type_name(item)}")
        else:
            plain_item = to_plain(item, what=where)
        if not isinstance(plain_item, dict):
            raise EngineError(f"{where}: expected a Kubernetes object, got {_type_name(item)}")
        if is_list_object(plain_item):
            _add_list(plain_item, out, where)
        else:
            out.append(plain_item)
    return out


def _add_list(doc: dict[str, Any], out: list[dict[str, Any]], what: str) -> None:
    kind = str(doc.get("kind") or "")
    item_kind = kind[: -len("List")] if kind.endswith("List") and kind != "List" else ""
    api_version = doc.get("apiVersion")
    for index, entry in enumerate(doc.get("items") or []):
        where = f"{what}.items[{index}]"
        plain = entry if type(entry) is dict else to_plain(entry, what=where)
        if not isinstance(plain, dict):
            raise EngineError(f"{where}: expected a Kubernetes object, got {_type_name(entry)}")
        if item_kind and ("kind" not in plain or "apiVersion" not in plain):
            # what list responses look like: the items' type is the list's
            plain = {"apiVersion": api_version, "kind": item_kind, **plain}
        if is_list_object(plain):
            _add_list(plain, out, where)
        else:
            out.append(plain)


def workload_object(obj: Any, root: Any = None, *, definition: str | None = None) -> dict[str, Any]:
    """``obj`` as one plain workload object checked against the definition's root GVK
    (``root``: a model ``GVK`` or None).

    A typed object may lack ``apiVersion``/``kind`` (list items): the root's are filled in. An
    object of another group or kind than the root is refused: evaluating a definition against
    the wrong type gives plausible nonsense, not an error. Versions may differ (a definition
    written for another version of the same type is a documented fallback).
    """
    plain = to_plain(obj, what="workload")
    if not isinstance(plain, dict):
        raise EngineError(f"workload: expected one Kubernetes object, got {_type_name(plain)}")
    if "items" in plain and is_list_object(plain):  # (the key first: this runs per object)
        raise EngineError(
            f"workload: expected one object, got a {plain.get('kind') or 'list'} of "
            f"{len(plain['items'])} items (pass each item as its own Workload)"
        )
    if root is None or not getattr(root, "kind", None):
        return plain
    kind, api_version = plain.get("kind"), plain.get("apiVersion")
    if not kind or not api_version:
        filled = dict(plain)
        filled.setdefault("apiVersion", root.api_version)
        filled["apiVersion"] = filled["apiVersion"] or root.api_version
        filled["kind"] = kind or root.kind
        return filled
    group = str(api_version).rpartition("/")[0]
    if kind != root.kind or group != root.group:
        name = f" {definition}" if definition else ""
        raise EngineError(
            f"workload: the definition{name} describes {root.kind} ({root.api_version}), "
            f"but the object is a {kind} ({api_version}); use the definition of {kind}"
        )
    return plain


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        shown = value if len(value) <= 20 else value[:17] + "..."
        return f"a string ({shown!r})"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"a number ({value!r})"
    if isinstance(value, list | tuple):
        return "a list"
    cls = type(value)
    module = cls.__module__ or ""
    return cls.__name__ if module in ("builtins", "") else f"{module}.{cls.__name__}"
