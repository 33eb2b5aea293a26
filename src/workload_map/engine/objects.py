"""Turning whatever a caller holds into plain JSON values.

The engine works on plain dicts; callers often hold client objects instead: ``kubernetes``
models (snake_case attributes, serialised by ``ApiClient().sanitize_for_serialization``),
kr8s objects (``.raw``) and lightkube models (``.to_dict()``). Detection is by duck typing so no
client library is imported here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workload_map.engine.errors import EngineError

__all__ = ["to_plain"]


def to_plain(obj: Any, *, what: str = "object") -> Any:
    """The JSON value of ``obj``: dicts pass through untouched (never copied, never mutated)."""
    if obj is None or isinstance(obj, dict | list | str | int | float | bool):
        return obj
    if isinstance(obj, Mapping):
        return dict(obj)
    raw = getattr(obj, "raw", None)
    if isinstance(raw, Mapping):  # kr8s APIObject
        return dict(raw)
    module = type(obj).__module__ or ""
    if module.startswith("kubernetes.") and hasattr(obj, "openapi_types"):
        from kubernetes.client import ApiClient  # type: ignore[import-untyped]

        return ApiClient().sanitize_for_serialization(obj)
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):  # lightkube models, dynamic-client ResourceInstance
        value = to_dict()
        if isinstance(value, Mapping):
            return dict(value)
    raise EngineError(
        f"{what}: expected a dict or a Kubernetes client object, got {type(obj).__name__}"
    )
