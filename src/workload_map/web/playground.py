"""The playground: a pasted workload (and pods, and optionally a Karta) → describe view and
findings, offline. Every jq evaluation is bounded by the engine's deadline; inputs by size."""

from __future__ import annotations

from typing import Any

from workload_map.catalog import catalog
from workload_map.engine import Workload
from workload_map.errors import WlmapError
from workload_map.model import load_karta, validate
from workload_map.model.load import KartaLoadError, parse_documents

__all__ = ["MAX_INPUT", "evaluate"]

MAX_INPUT = 2 * 2**20  # per field


def _documents(text: str, what: str) -> list[dict[str, Any]]:
    if len(text) > MAX_INPUT:
        raise _Input(f"{what}: larger than {MAX_INPUT // 2**20} MiB")
    try:
        # the CLI's one splitter: YAML or JSON streams, Lists expanded, timestamps as text
        docs = parse_documents(text)
    except KartaLoadError as exc:
        raise _Input(f"{what}: {exc}") from None
    out: list[dict[str, Any]] = []
    for doc in docs:
        if isinstance(doc, dict):
            out.append(doc)
        else:
            raise _Input(f"{what}: expected objects, found a {type(doc).__name__}")
    return out


class _Input(WlmapError):
    pass


def _finding(f: Any) -> dict[str, Any]:
    return {
        "path": f.path,
        "code": str(f.code),
        "severity": str(f.severity),
        "message": f.message,
        "component": f.component,
        "offset": f.offset,
    }


def evaluate(workload: str, pods: str, karta: str) -> dict[str, Any]:
    """The describe view of the pasted workload, with the definition's findings."""
    out: dict[str, Any] = {"view": None, "findings": [], "error": None, "definition": None}
    try:
        objects = _documents(workload, "workload")
        if not objects:
            out["error"] = "workload: paste a workload object (YAML or JSON)"
            return out
        obj = objects[0]
        pod_objects = _documents(pods, "pods") if pods.strip() else None
        if karta.strip():
            definitions = _documents(karta, "Karta")
            if len(definitions) != 1:
                raise _Input("Karta: paste exactly one Karta")
            definition = load_karta(definitions[0])
            origin = "file"
        else:
            api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
            group, _, version = api_version.rpartition("/")
            found = catalog.get(group, version, kind)
            if found is None:
                raise _Input(
                    f"no built-in definition covers {kind or '(no kind)'} ({api_version or 'no apiVersion'}): paste a Karta"
                )
            definition, origin = found, "catalog"
        findings = validate(definition)
        out["findings"] = [_finding(f) for f in findings]
        out["definition"] = {"name": definition.name, "origin": origin}
        if any(f.is_error for f in findings):
            out["error"] = "the definition is not valid (see the findings)"
            return out
        wl = Workload(definition, obj, pods=pod_objects, origin=origin, validate=False)
        out["view"] = wl.describe()
    except WlmapError as exc:
        out["error"] = str(exc)
    return out
