"""Resolving a definition's references for one workload: what to read, and the bindings.

The engine never reads a cluster. For each reference (in dependency order) it evaluates the
reference's paths on the workload into a :class:`ReferenceRequest`; a *resolver* (a callable
the consumer gives: the CLI's cached reads, the operator's watch caches, or
:func:`objects_resolver` over the documents of files) answers it with the object, the list, or
None for "not there", and raises :class:`ReferenceUnavailable` for "cannot know" (forbidden,
kind not served). Every reference is bound whatever happens, so the workload is still shown
with what can be known: a lookup that found nothing is ``null``, a list ``[]``; each problem is
reported (:attr:`Resolution.problems`), except a missing object of an ``optional`` reference.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from workload_map.engine.errors import EngineError, ExtractionError
from workload_map.engine.runner import ExpressionCache
from workload_map.errors import WlmapError
from workload_map.model import GVK, Karta, Reference
from workload_map.model.references import (
    MAX_LIST_ITEMS,
    forbidden_kind,
    reference_names,
    resolution_order,
)
from workload_map.model.views import View, json_field

__all__ = [
    "ReferenceRequest",
    "ReferenceUnavailable",
    "ReferenceView",
    "Resolution",
    "Resolver",
    "objects_resolver",
    "referenced_kinds",
    "resolve_references",
    "unresolved",
]


class ReferenceRequest(View):
    """One read a resolver answers: an object by name (``object_name``) or a list by labels."""

    name: str
    kind: GVK
    namespace: str | None
    object_name: str | None = None
    match_labels: Mapping[str, str] | None = None
    #: None: the resolver decides (discovery, or the object's own metadata)
    cluster_scoped: bool | None = None

    @property
    def is_list(self) -> bool:
        return self.object_name is None

    def describe(self) -> str:
        """``Kind/name`` (``-n ns``), or ``Kind`` with its selector."""
        where = f" in namespace {self.namespace}" if self.namespace else ""
        if self.object_name is not None:
            return f"{self.kind.kind}/{self.object_name}{where}"
        labels = ",".join(f"{k}={v}" for k, v in sorted((self.match_labels or {}).items()))
        return f"{self.kind.kind} with labels {labels or '(none)'}{where}"


class ReferenceUnavailable(WlmapError):
    """A resolver cannot answer: ``reason`` is ``forbidden``, ``unserved`` or ``error``."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


#: answers a request: the object (lookup), the objects (list), or None when there is none
Resolver = Callable[[ReferenceRequest], Any]


class ReferenceView(View):
    """What one reference resolved to (the ``references`` of ``wlmap describe -o json``)."""

    name: str = json_field("name")
    kind: str | None = json_field("kind", description="apiVersion Kind read")
    namespace: str | None = json_field("namespace")
    object_name: str | None = json_field("objectName", description="null for a list")
    found: int = json_field("found", description="objects bound (0 or 1 for a lookup)")
    problem: str | None = json_field("problem", omit="none", default=None)
    reason: str | None = json_field(
        "reason",
        omit="none",
        default=None,
        description="missing, forbidden, unserved, invalid or error",
    )


class Resolution(View):
    """The bindings of one workload's references and what could not be resolved."""

    bindings: dict[str, Any]
    views: tuple[ReferenceView, ...] = ()

    @property
    def problems(self) -> list[str]:
        """Every reported problem, as one line each (``reference 'runtime': …``)."""
        return [f"reference '{v.name}': {v.problem}" for v in self.views if v.problem]


def _empty(reference: Reference) -> Any:
    return [] if reference.lookup is None else None


def unresolved(karta: Karta, why: str | None = None) -> Resolution:
    """Every reference bound empty; ``why`` (when given) reported for each non-optional one."""
    refs = karta.spec.structure_definition.references
    views = tuple(
        ReferenceView(
            name=r.name,
            kind=None,
            namespace=None,
            object_name=None,
            found=0,
            problem=why if why and not r.optional else None,
            reason="missing" if why and not r.optional else None,
        )
        for r in refs
    )
    return Resolution({r.name: _empty(r) for r in refs}, views)


def referenced_kinds(karta: Karta) -> tuple[GVK, ...]:
    """Every kind the definition's references may read (watched and granted by consumers)."""
    out: list[GVK] = []
    for ref in karta.spec.structure_definition.references:
        target = ref.target
        for gvk in target.kinds if target is not None else ():
            if gvk not in out and forbidden_kind(gvk, ref) is None:
                out.append(gvk)
    return tuple(out)


def _single_string(values: list[Any], what: str) -> str | None:
    """The one non-empty string a path gave, None for no result or null; else an error."""
    values = [v for v in values if v is not None]
    if not values:
        return None
    if len(values) != 1 or not isinstance(values[0], str):
        raise ExtractionError(f"{what} must give one string, got {values!r:.80}")
    return values[0] or None


def _request(
    reference: Reference,
    obj: Mapping[str, Any],
    cache: ExpressionCache,
    bindings: Mapping[str, Any],
) -> ReferenceRequest | None:
    target = reference.target
    if target is None or not target.kinds:
        return None

    def run(path: str) -> list[Any]:
        return cache.get(path).bound(obj, bindings)

    kind = target.kinds[0]
    if target.kind_path:
        wanted = _single_string(run(target.kind_path), "kindPath")
        if wanted is not None:
            matches = [g for g in target.kinds if wanted in (g.kind, f"{g.kind}.{g.group}")]
            if not matches:
                names = ", ".join(g.kind for g in target.kinds)
                raise ExtractionError(f"kindPath gave {wanted!r}, not one of its kinds ({names})")
            kind = matches[0]
    meta = obj.get("metadata")
    own_ns = meta.get("namespace") if isinstance(meta, Mapping) else None
    namespace: str | None = own_ns if isinstance(own_ns, str) and own_ns else None
    if target.namespace_path:
        namespace = _single_string(run(target.namespace_path), "namespacePath") or namespace
    if target.cluster_scoped:
        namespace = None
    if reference.lookup is not None:
        name = _single_string(run(reference.lookup.name_path), "namePath")
        if name is None:
            return None
        return ReferenceRequest(
            reference.name, kind, namespace, object_name=name, cluster_scoped=target.cluster_scoped
        )
    assert reference.list is not None
    labels: dict[str, str] = dict(reference.list.match_labels or {})
    if reference.list.match_labels_path:
        found = [v for v in run(reference.list.match_labels_path) if v is not None]
        if len(found) > 1 or (found and not isinstance(found[0], Mapping)):
            raise ExtractionError("matchLabelsPath must give one map of labels")
        for key, value in (found[0] if found else {}).items():
            labels[str(key)] = str(value)
    if not labels:
        return None  # no selector: listing every object is not bounded (and not meant)
    return ReferenceRequest(
        reference.name,
        kind,
        namespace,
        match_labels=labels,
        cluster_scoped=target.cluster_scoped,
    )


def _bind(reference: Reference, request: ReferenceRequest, answer: Any) -> tuple[Any, int, str]:
    """The value to bind, how many objects, and a problem ("" when none)."""
    if reference.lookup is not None:
        if answer is None:
            return None, 0, "" if reference.optional else f"{request.describe()} not found"
        if not isinstance(answer, Mapping):
            return None, 0, f"the resolver gave a {type(answer).__name__}, not an object"
        return dict(answer), 1, ""
    items = [dict(o) for o in (answer or []) if isinstance(o, Mapping)]
    items.sort(key=_object_key)
    problem = ""
    if len(items) > MAX_LIST_ITEMS:
        problem = f"{len(items)} objects match, only the first {MAX_LIST_ITEMS} are bound"
        items = items[:MAX_LIST_ITEMS]
    elif not items and not reference.optional:
        problem = f"no {request.describe()}"
    return items, len(items), problem


def _object_key(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def resolve_references(
    karta: Karta,
    obj: Mapping[str, Any],
    resolver: Resolver | None,
    *,
    cache: ExpressionCache | None = None,
) -> Resolution:
    """Resolve every reference of ``karta`` for the workload ``obj`` through ``resolver``."""
    refs = karta.spec.structure_definition.references
    if not refs:
        return Resolution({})
    if resolver is None:
        return unresolved(karta, "no referenced objects were given")
    cache = cache if cache is not None else ExpressionCache(reference_names(karta))
    order, cycles = resolution_order(karta)
    bindings: dict[str, Any] = {r.name: _empty(r) for r in refs}
    views: dict[str, ReferenceView] = {}
    for cycle in cycles:
        for name in cycle:
            views[name] = ReferenceView(
                name, None, None, None, 0, "references form a cycle", "invalid"
            )
    for ref in order:
        try:
            request = _request(ref, obj, cache, bindings)
        except EngineError as err:
            views[ref.name] = ReferenceView(ref.name, None, None, None, 0, str(err), "invalid")
            continue
        if request is None:
            problem = None if ref.optional else "the workload names no object to read"
            views[ref.name] = ReferenceView(
                ref.name, None, None, None, 0, problem, "missing" if problem else None
            )
            continue
        kind = f"{request.kind.api_version} {request.kind.kind}"
        why = forbidden_kind(request.kind, ref)
        if why is not None:
            views[ref.name] = ReferenceView(
                ref.name, kind, request.namespace, request.object_name, 0, why, "forbidden"
            )
            continue
        try:
            answer = resolver(request)
        except ReferenceUnavailable as err:
            views[ref.name] = ReferenceView(
                ref.name,
                kind,
                request.namespace,
                request.object_name,
                0,
                f"{request.describe()}: {err}",
                err.reason,
            )
            continue
        value, found, problem = _bind(ref, request, answer)
        bindings[ref.name] = value
        namespace = request.namespace
        if isinstance(value, Mapping):  # what was read says where it lives (cluster-scoped: none)
            namespace = _object_key(value)[0] or None
        views[ref.name] = ReferenceView(
            ref.name,
            kind,
            namespace,
            request.object_name,
            found,
            problem or None,
            ("missing" if found == 0 else "truncated") if problem else None,
        )
    return Resolution(bindings, tuple(views[r.name] for r in refs if r.name in views))


def _labels(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return labels if isinstance(labels, Mapping) else {}


def objects_resolver(objects: Iterable[Any]) -> Resolver:
    """A resolver over objects at hand (the other documents of files, ``--ref`` files).

    An object matches a request by group, kind, name (or labels) and namespace; an object
    without a namespace matches any namespace (a manifest often omits it, and cluster-scoped
    objects have none). The version is not compared: a file may hold another served version.
    """
    pool = [o for o in objects if isinstance(o, Mapping)]

    def matches(obj: Mapping[str, Any], request: ReferenceRequest) -> bool:
        api_version = obj.get("apiVersion")
        if not isinstance(api_version, str) or obj.get("kind") != request.kind.kind:
            return False
        if GVK.from_api_version(api_version, request.kind.kind).group != request.kind.group:
            return False
        meta = obj.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        namespace = meta.get("namespace")
        if request.namespace and namespace and namespace != request.namespace:
            return False
        if request.object_name is not None:
            return bool(meta.get("name") == request.object_name)
        labels = _labels(obj)
        return all(labels.get(k) == v for k, v in (request.match_labels or {}).items())

    def resolve(request: ReferenceRequest) -> Any:
        found = [o for o in pool if matches(o, request)]
        if request.object_name is not None:
            # prefer the object in the request's namespace over one without a namespace
            found.sort(key=lambda o: _object_key(o)[0] != (request.namespace or ""))
            return found[0] if found else None
        return found

    return resolve
