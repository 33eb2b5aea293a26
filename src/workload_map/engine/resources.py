"""What pods will request, by the kube-scheduler's effective-request rule.

Per pod: the larger of the biggest init container (each one running beside the restartable
sidecars started before it) and the sum of the regular containers plus every restartable init
container (``restartPolicy: Always``); pod-level ``resources`` replace CPU and memory; ``overhead``
is added. Each resource is taken from ``requests``, else from ``limits``. Totals are exact
integers: CPU in millicores, everything else in whole units (bytes, devices). DRA
``resourceClaims`` are counted under :data:`CLAIMS` (their devices live in other objects).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from workload_map.engine.errors import EngineError
from workload_map.engine.extract import ExtractedInstance
from workload_map.engine.quantities import to_millis, to_units
from workload_map.model.views import View, json_field, to_json

__all__ = [
    "CLAIMS",
    "GPU",
    "ResourceSummary",
    "Totals",
    "add",
    "container_request",
    "fragment_request",
    "instance_request",
    "pod_request",
    "request_source",
    "scaled",
    "summarize",
    "total_of",
]

Totals = dict[str, int]

GPU = "nvidia.com/gpu"
CLAIMS = "resourceClaims"
_POD_LEVEL = ("cpu", "memory")


#: parsed quantities by (resource, value): pods of one template repeat the same few values
_AMOUNTS: dict[tuple[str, object], int] = {}


def _amount(name: str, value: object) -> int:
    key = (name, value) if type(value) in (str, int) else None
    if key is not None:
        found = _AMOUNTS.get(key)
        if found is not None:
            return found
    amount = _parse_amount(name, value)
    if key is not None:
        if len(_AMOUNTS) > 4096:
            _AMOUNTS.clear()
        _AMOUNTS[key] = amount
    return amount


def _parse_amount(name: str, value: object) -> int:
    try:
        amount = to_millis(value) if name == "cpu" else to_units(value)
    except EngineError as err:
        raise EngineError(f"resource {name!r}: {err}") from None
    if amount < 0:  # the API server refuses these too
        raise EngineError(f"resource {name!r}: negative quantity {value!r}")
    return amount


def _requirements(resources: object) -> Totals:
    """One ResourceRequirements: requests, else limits, per resource name."""
    if type(resources) is not dict and not isinstance(resources, Mapping):
        return {}
    out: Totals = {}
    for key in ("limits", "requests"):  # requests win
        section = resources.get(key)
        if type(section) is dict or isinstance(section, Mapping):
            for name, value in section.items():
                if value is not None and isinstance(name, str):
                    out[name] = _amount(name, value)
    return out


def container_request(container: object) -> Totals:
    """A container's request per resource (requests, else limits)."""
    if type(container) is not dict and not isinstance(container, Mapping):
        return {}
    return _requirements(container.get("resources"))


def add(*parts: Mapping[str, int]) -> Totals:
    """Resource-wise sum."""
    out: Totals = {}
    for part in parts:
        for name, value in part.items():
            out[name] = out.get(name, 0) + value
    return out


def _max(a: Mapping[str, int], b: Mapping[str, int]) -> Totals:
    out = dict(a)
    for name, value in b.items():
        out[name] = max(out.get(name, 0), value)
    return out


def scaled(totals: Mapping[str, int], count: int) -> Totals:
    """Every resource multiplied by ``count`` (a replica count)."""
    return {name: value * count for name, value in totals.items()}


def _containers(spec: Mapping[str, Any], key: str) -> list[Any]:
    value = spec.get(key)
    return value if type(value) is list or isinstance(value, list) else []


#: pod requests by the containers' declared resources, for specs with nothing else that counts
#: (no init containers, pod-level resources, overhead or claims): the pods of one template
#: repeat the same few, and a fleet's 100k pods would otherwise sum each again
_BY_CONTAINERS: dict[tuple[Any, ...], Totals] = {}
_OTHER_KEYS = ("initContainers", "resources", "overhead", "resourceClaims")


def _containers_key(spec: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """The declared resources of the containers, hashable; None when the spec has more that
    counts, or values of unexpected types (then the request is computed in full)."""
    for key in _OTHER_KEYS:
        if key in spec:
            return None
    containers = spec.get("containers")
    if type(containers) is not list:
        return None
    parts: list[Any] = []
    for c in containers:
        if type(c) is not dict:
            return None
        r = c.get("resources")
        if r is None:
            parts.append(None)
            continue
        if type(r) is not dict:
            return None
        limits, requests = r.get("limits"), r.get("requests")
        parts.append(
            (
                tuple(limits.items()) if type(limits) is dict else limits,
                tuple(requests.items()) if type(requests) is dict else requests,
            )
        )
    return tuple(parts)


def pod_request(spec: object) -> Totals:
    """The effective request of one pod with this PodSpec (scheduler rule, see module doc)."""
    if type(spec) is not dict and not isinstance(spec, Mapping):
        return {}
    key = _containers_key(spec) if type(spec) is dict else None
    if key is not None:
        try:
            found = _BY_CONTAINERS.get(key)
        except TypeError:  # an unhashable value somewhere: no memo
            key, found = None, None
        if found is not None:
            return dict(found)
    total = _pod_request(spec)
    if key is not None:
        if len(_BY_CONTAINERS) > 4096:
            _BY_CONTAINERS.clear()
        _BY_CONTAINERS[key] = dict(total)
    return total


def _pod_request(spec: Mapping[str, Any]) -> Totals:
    regular = add(*(container_request(c) for c in _containers(spec, "containers")))
    sidecars: Totals = {}
    init_peak: Totals = {}
    for init in _containers(spec, "initContainers"):
        request = container_request(init)
        if isinstance(init, Mapping) and init.get("restartPolicy") == "Always":
            regular = add(regular, request)
            sidecars = add(sidecars, request)
            running = sidecars
        else:
            running = add(request, sidecars)
        init_peak = _max(init_peak, running)
    total = _max(regular, init_peak)
    pod_level = _requirements(spec.get("resources"))
    for name in _POD_LEVEL:
        if name in pod_level:
            total[name] = pod_level[name]
    overhead = spec.get("overhead")
    if isinstance(overhead, Mapping):
        total = add(
            total,
            {n: _amount(n, v) for n, v in overhead.items() if v is not None and isinstance(n, str)},
        )
    claims = spec.get("resourceClaims")
    if isinstance(claims, list) and claims:
        total[CLAIMS] = total.get(CLAIMS, 0) + len(claims)
    return {name: value for name, value in total.items() if value}


def fragment_request(fragment: Mapping[str, Any]) -> Totals:
    """One pod of a fragmented spec: Σ containers + container, else the ``resources`` fragment."""
    parts = [container_request(c) for c in fragment.get("containers") or () if c is not None]
    if isinstance(fragment.get("container"), Mapping):
        parts.append(container_request(fragment["container"]))
    total = add(*parts)
    if not total:
        total = _requirements(fragment.get("resources"))
    claims = fragment.get("resourceClaims")
    if isinstance(claims, list) and claims:
        total[CLAIMS] = total.get(CLAIMS, 0) + len(claims)
    return {name: value for name, value in total.items() if value}


def instance_request(inst: ExtractedInstance) -> Totals:
    """The effective request of one pod of this instance (its template, pod spec or fragments)."""
    source = request_source(inst)
    return {} if source is None else source[0](source[1])


def request_source(inst: ExtractedInstance) -> tuple[Callable[[Any], Totals], object] | None:
    """What :func:`instance_request` reads for this instance: the reader and the part of the
    object it reads (the template's spec, else the pod spec, else the fragments); None when
    the instance describes none. A caller that keeps requests by that part's identity (a
    watch cache's shared subtrees) keys them by it."""
    if inst.pod_template_spec is not None:
        return pod_request, inst.pod_template_spec.get("spec")
    if inst.pod_spec is not None:
        return pod_request, inst.pod_spec
    if inst.fragmented_pod_spec is not None:
        return fragment_request, inst.fragmented_pod_spec
    return None


def _extended(name: str) -> bool:
    return "/" in name and not name.startswith("kubernetes.io/")


class ResourceSummary(View):
    """What pods request: GPUs, CPU, memory, extended resources and DRA claims."""

    gpus: int = json_field("gpus", description="nvidia.com/gpu")
    cpu_millis: int = json_field("cpuMillis")
    memory_bytes: int = json_field("memoryBytes")
    by_resource: Mapping[str, int] = json_field(
        "byResource", description="extended resources (names with a domain), by name"
    )
    gpus_any_vendor: int = json_field("gpusAnyVendor", description="every */gpu resource")
    resource_claims: int = json_field("resourceClaims")

    @classmethod
    def of(cls, totals: Mapping[str, int] | None) -> ResourceSummary:
        totals = totals or {}
        return cls(
            gpus=totals.get(GPU, 0),
            cpu_millis=totals.get("cpu", 0),
            memory_bytes=totals.get("memory", 0),
            by_resource={n: v for n, v in sorted(totals.items()) if _extended(n)},
            gpus_any_vendor=sum(v for n, v in totals.items() if n.endswith("/gpu")),
            resource_claims=totals.get(CLAIMS, 0),
        )


def summarize(totals: Mapping[str, int] | None) -> dict[str, Any]:
    """The JSON of :class:`ResourceSummary` (the ``describe`` shape)."""
    out: dict[str, Any] = to_json(ResourceSummary.of(totals))
    return out


def total_of(parts: Iterable[Mapping[str, int]]) -> Totals:
    """Resource-wise sum of many totals."""
    return add(*parts)
