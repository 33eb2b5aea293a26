"""A structural-schema check of an object against a CRD version's ``openAPIV3Schema``.

Enough of the API server's validation for the PodGroup CRDs the gang backends write to: types,
unknown fields (as strict field validation rejects them), required, enum, minimum, maxLength,
pattern, int32 range, ``anyOf`` and ``x-kubernetes-int-or-string``. The integration contract
test sends the same objects to a real API server with the CRDs installed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

_TYPES: dict[str, Any] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "integer": int,
    "number": (int, float),
}


def crd_schema(path: Path, version: str) -> dict[str, Any]:
    crd = yaml.safe_load(path.read_text())
    for entry in crd["spec"]["versions"]:
        if entry["name"] == version:
            schema: dict[str, Any] = entry["schema"]["openAPIV3Schema"]
            return schema
    raise KeyError(f"{path.name} has no version {version}")


def check(value: Any, schema: dict[str, Any], at: str = "") -> list[str]:
    """Every violation, each with its field path."""
    errors: list[str] = []
    if schema.get("x-kubernetes-int-or-string"):
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            return [f"{at}: must be an integer or a string"]
    elif "anyOf" in schema:
        if all(check(value, option, at) for option in schema["anyOf"]):
            return [f"{at}: matches none of anyOf"]
    kind = schema.get("type")
    if kind and not schema.get("x-kubernetes-int-or-string"):
        expected = _TYPES[kind]
        if isinstance(value, bool) and kind in ("integer", "number"):
            return [f"{at}: must be {kind}"]
        if not isinstance(value, expected):
            return [f"{at}: must be {kind}, got {type(value).__name__}"]
    if isinstance(value, int) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            errors.append(f"{at}: {value} is below the minimum {schema['minimum']}")
        if schema.get("format") == "int32" and not -(2**31) <= value < 2**31:
            errors.append(f"{at}: {value} is out of int32 range")
    if isinstance(value, str):
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{at}: longer than {schema['maxLength']}")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            errors.append(f"{at}: {value!r} does not match {schema['pattern']}")
    if "enum" in schema and value not in schema["enum"]:
        errors.append(f"{at}: {value!r} not in {schema['enum']}")
    if isinstance(value, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties")
        for name in schema.get("required", ()):
            if name not in value:
                errors.append(f"{at}.{name}: required")
        for name, item in value.items():
            if props is not None and name in props:
                errors.extend(check(item, props[name], f"{at}.{name}"))
            elif isinstance(extra, dict):
                errors.extend(check(item, extra, f"{at}.{name}"))
            elif props is not None and name not in ("apiVersion", "kind", "metadata"):
                errors.append(f"{at}.{name}: unknown field")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            errors.extend(check(item, schema["items"], f"{at}[{i}]"))
    return errors
