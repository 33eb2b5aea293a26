"""Writing pod templates, pod specs, metadata, fragments and suspend/resume values back.

Every write is all-or-nothing: it works on a copy-on-write view of the object and either
returns the new object or raises :class:`WriteRefusedError` with the input untouched. Refused:
a path that does not address stored locations (a computed view, unless the value is unchanged),
a value count that does not match the instances, and any change to ``apiVersion``, ``kind``,
``metadata.name``, ``metadata.uid`` or ``status``.

A supplied value is merged onto the stored fragment, not swapped in: keys it does not mention
stay (so fields the caller never saw survive), a key set to ``null`` is removed, and lists of
named things (containers, init containers, volumes, env, …) merge item by item on their key as
in a strategic merge patch; other lists are replaced whole. Extracting and writing back the same
values therefore gives back an identical object. Unset fragments are never written as ``null``.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from workload_map import jq
from workload_map.engine.errors import DefinitionNotFoundError, ExtractionError, WriteRefusedError
from workload_map.engine.extract import FRAGMENT_FIELDS, Extractor
from workload_map.engine.runner import lookup
from workload_map.engine.structure import Structure
from workload_map.model import Component

__all__ = [
    "MERGE_KEYS",
    "apply_actions",
    "merge",
    "update_fragments",
    "update_path",
]

#: List fields merged item by item, and the key that identifies an item (core/v1 patch keys).
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "volumes": "name",
    "env": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "ports": "containerPort",
    "imagePullSecrets": "name",
    "hostAliases": "ip",
    "resourceClaims": "name",
    "claims": "name",
    "readinessGates": "conditionType",
    "schedulingGates": "name",
    "resizePolicy": "resourceName",
}

_IDENTITY = (("apiVersion",), ("kind",), ("metadata", "name"), ("metadata", "uid"), ("status",))
_ABSENT = object()


def _setpath(value: Any, path: Sequence[str | int], new: Any, where: str) -> Any:
    """jq's ``setpath`` (a copy; containers created, lists null-padded), refused on a mismatch."""
    try:
        return jq.setpath(value, path, new)
    except jq.JqError as err:
        raise WriteRefusedError(where, str(err)) from None


def merge(old: Any, new: Any, key: str | None = None) -> Any:
    """``new`` merged onto ``old`` (see the module doc)."""
    if isinstance(new, dict) and isinstance(old, dict):
        out = dict(old)
        for k, v in new.items():
            if v is None:
                if out.get(k) is not None:
                    del out[k]
                continue
            out[k] = merge(old.get(k), v, k)
        return out
    if isinstance(new, list) and isinstance(old, list) and key in MERGE_KEYS:
        field = MERGE_KEYS[key]
        # merge by the patch key only when every item has a plain (hashable) one
        if all(isinstance(i, dict) and isinstance(i.get(field), str | int) for i in [*old, *new]):
            stored = {i[field]: i for i in old}
            return [merge(stored.get(i[field]), i) for i in new]
    return copy.deepcopy(new)


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == {} or value == []


def _check_identity(before: Any, after: Any, path: str) -> None:
    for field in _IDENTITY:
        if lookup(before, field) != lookup(after, field) or (
            _exists(before, field) != _exists(after, field)
        ):
            raise WriteRefusedError(path, f"the write would change {'.'.join(field)}")


def _align(
    extractor: Extractor,
    component: Component,
    path: str,
    values: Any,
    instance: str | None = None,
) -> list[Any]:
    """The supplied values, one per instance id (a mapping by id, or a list in id order).

    With ``instance``, ``values`` is the one value of that instance and every other instance
    gets ``None`` (left as it is).
    """
    ids = extractor.instance_ids(component.name)
    name = component.name
    if instance is not None:
        if instance not in ids:
            known = ", ".join(repr(i) for i in ids) or "none"
            raise WriteRefusedError(
                path, f"component '{name}' has no instance '{instance}' (its instances: {known})"
            )
        if not component.instance_id_path:
            return [values]
        return [values if i == instance else None for i in ids]
    if not component.instance_id_path:
        if isinstance(values, Mapping) and set(values) == {""}:
            return [values[""]]
        if isinstance(values, list):
            if len(values) != 1:
                raise WriteRefusedError(
                    path,
                    f"component '{name}' has one instance but {len(values)} values were supplied",
                )
            return list(values)
        return [values]
    if isinstance(values, Mapping):
        missing = [i for i in ids if i not in values]
        if missing:
            given = [i for i in ids if i in values]
            one = f"instance='{given[0]}'" if len(given) == 1 else "instance=ID"
            # the reference's wording first, then what the caller can do about it
            raise WriteRefusedError(
                path,
                f"value not found for instance id: {missing[0]} (component '{name}' has "
                f"instances {', '.join(ids)}: give a value for each, or update one with "
                f"{one} and its value alone)",
            )
        return [values[i] for i in ids]
    if isinstance(values, list):
        if len(values) != len(ids):
            raise WriteRefusedError(
                path,
                f"component '{name}' has {len(ids)} instances but {len(values)} values were "
                f"supplied",
            )
        return list(values)
    raise WriteRefusedError(
        path,
        f"component '{name}': expected a mapping of instance id to value, or a list "
        f"(or one value with instance=ID)",
    )


def _writes(
    structure: Structure,
    obj: Any,
    path: str,
    values: list[Any],
    broadcast: bool,
    skip_empty_absent: bool = False,
    list_key: str | None = None,
) -> Any:
    """``obj`` with each value merged at its location; raises, writing nothing, when refused."""
    expression = structure.expressions.get(path)
    try:
        locations = expression.paths(obj)
    except ExtractionError as err:
        # a computed view: only an unchanged value may be "written" (a no-op)
        current = expression.all(obj)
        supplied = values * len(current) if broadcast and len(values) == 1 else values
        if len(supplied) == len(current) and all(
            v is None or merge(c, v, list_key) == c for c, v in zip(current, supplied, strict=True)
        ):
            return obj
        raise WriteRefusedError(path, str(err)) from None
    for location in locations:
        if any(
            isinstance(s, bool) or not isinstance(s, str | int) or (isinstance(s, int) and s < 0)
            for s in location
        ):
            raise WriteRefusedError(path, f"location {location} is a slice or a negative index")
    if broadcast:
        if len(values) != 1:
            raise WriteRefusedError(path, f"expected one value, got {len(values)}")
        values = values * len(locations)
    elif len(locations) != len(values):
        raise WriteRefusedError(
            path,
            f"path '{path}' resolves {len(locations)} locations but {len(values)} values were supplied",
        )
    result = obj
    for location, value in zip(locations, values, strict=True):
        if value is None:
            continue
        stored = lookup(result, tuple(location))
        if skip_empty_absent and stored is None and _empty(value):
            continue
        merged = merge(stored, value, list_key)
        if merged == stored and (stored is not None or _exists(result, location)):
            continue
        result = _setpath(result, location, merged, path)
    _check_identity(obj, result, path)
    return result


def _exists(value: Any, path: Sequence[str | int]) -> bool:
    for step in path:
        if isinstance(step, str):
            if not isinstance(value, dict) or step not in value:
                return False
            value = value[step]
        else:
            if not isinstance(value, list) or not -len(value) <= step < len(value):
                return False
            value = value[step]
    return True


def update_path(
    structure: Structure,
    obj: Any,
    component: str,
    attr: str,
    label: str,
    values: Any,
    instance: str | None = None,
) -> Any:
    """Write a pod template spec / pod spec / metadata per instance (``attr`` of specDefinition);
    with ``instance``, ``values`` is that one instance's value and the others stay as they are."""
    comp = structure.components.get(component)
    if comp is None:
        raise DefinitionNotFoundError(f"component {component} not found")
    spec = comp.spec_definition
    path = getattr(spec, attr) if spec is not None else None
    if not path:
        raise DefinitionNotFoundError(f"component {component} does not have {label} definition")
    extractor = Extractor(structure, obj)
    aligned = _align(extractor, comp, path, values, instance)
    for value in aligned:
        if value is not None and not isinstance(value, Mapping):
            raise WriteRefusedError(
                path, f"component '{component}': {label} values must be objects"
            )
    return _writes(structure, obj, path, aligned, broadcast=not comp.instance_id_path)


def update_fragments(
    structure: Structure, obj: Any, component: str, values: Any, instance: str | None = None
) -> Any:
    """Write fragmented pod spec fields per instance, all of them or none (``instance``: that
    one instance's fields)."""
    comp = structure.components.get(component)
    if comp is None:
        raise DefinitionNotFoundError(f"component {component} not found")
    frag = comp.spec_definition.fragmented_pod_spec_definition if comp.spec_definition else None
    if frag is None:
        raise DefinitionNotFoundError(
            f"component {component} does not have fragmented pod spec definition"
        )
    extractor = Extractor(structure, obj)
    aligned = _align(extractor, comp, component, values, instance)
    result = obj
    for key, attr in FRAGMENT_FIELDS:
        column = [v.get(key) if isinstance(v, Mapping) else None for v in aligned]
        if not any(isinstance(v, Mapping) and key in v for v in aligned):
            continue
        path = getattr(frag, attr)
        if not path:
            if any(not _empty(v) for v in column):
                raise WriteRefusedError(key, "path is not defined and values are not empty")
            continue
        if all(_empty(v) for v in column):
            current = structure.eval(path, result)
            if all(_empty(c) for c in current):
                continue
        result = _writes(
            structure,
            result,
            path,
            column,
            broadcast=not comp.instance_id_path,
            skip_empty_absent=True,
            list_key=key,
        )
    _check_identity(obj, result, component)
    return result


def apply_actions(structure: Structure, obj: Any, which: str) -> Any:
    """Apply every component's suspend (``which="suspend"``) or resume actions, children first."""
    ordered = [*structure.order[1:], structure.order[0]]
    result = obj
    found = False
    for name in ordered:
        definition = structure.components[name].suspend_definition
        if definition is None:
            continue
        actions = definition.suspend_actions if which == "suspend" else definition.resume_actions
        found = True
        label = "suspendActions" if which == "suspend" else "resumeActions"
        for index, action in enumerate(actions):
            try:
                value = json.loads(action.value)
            except ValueError as err:
                raise WriteRefusedError(
                    action.path, f"{label}[{index}]: failed to decode value: {err}"
                ) from None
            try:
                locations = structure.expressions.get(action.path).paths(result)
            except ExtractionError as err:
                raise WriteRefusedError(action.path, f"{label}[{index}]: {err}") from None
            for location in locations:
                result = _setpath(result, location, copy.deepcopy(value), action.path)
    if not found:
        raise DefinitionNotFoundError(
            f"component {structure.root.name} does not have suspendDefinition"
        )
    _check_identity(obj, result, which)
    return result
