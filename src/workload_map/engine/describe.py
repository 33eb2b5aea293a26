"""The ``describe`` view: the workload's components with desired and observed pods and requests.

This is the JSON ``wlmap describe -o json`` prints (see INTERFACES.md). Placement follows the
reference CLI: a pod-bearing root is itself a component node, otherwise the root's children are
the top nodes; a component with several instances is one node per instance; a component with a
``replicaSelector`` is split per observed replica key (``name[key]``) when pods are known;
grouping components that end up with nothing under them are dropped, and so are instances the
object leaves out (template or pod spec null, no fragment set) unless pods of theirs are known.
Numbers: a pod-bearing instance the object describes implies ``replicas``, else
``minReplicas``, else 1 pods (one it leaves out: none), each requesting the scheduler's
effective request of its spec.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workload_map.engine import resources as res
from workload_map.engine.errors import EngineError
from workload_map.engine.extract import NO_SCALE, ExtractedInstance, implied_replicas
from workload_map.model.views import to_json

if TYPE_CHECKING:
    from workload_map.engine.pods import Placement
    from workload_map.engine.workload import Workload

__all__ = ["describe", "instance_request", "pod_is_ready", "pod_reason"]


def instance_request(inst: ExtractedInstance) -> res.Totals:
    """The effective request of one pod of this instance."""
    if inst.pod_template_spec is not None:
        return res.pod_request(inst.pod_template_spec.get("spec"))
    if inst.pod_spec is not None:
        return res.pod_request(inst.pod_spec)
    if inst.fragmented_pod_spec is not None:
        return res.fragment_request(inst.fragmented_pod_spec)
    return {}


def _conditions(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    status = pod.get("status")
    conds = status.get("conditions") if isinstance(status, Mapping) else None
    return [c for c in conds if isinstance(c, Mapping)] if isinstance(conds, list) else []


def pod_is_ready(pod: Mapping[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in _conditions(pod))


def _text(value: Any) -> str | None:
    """A non-empty string field, else None (objects from anywhere may hold anything)."""
    return value if isinstance(value, str) and value else None


def _terminated_reason(statuses: Any) -> str | None:
    """What kubectl shows for a container that ended badly: the kubelet's reason (OOMKilled,
    Error, ...), else ``Signal:N`` / ``ExitCode:N``; a clean exit is no reason."""
    for cs in statuses if isinstance(statuses, list) else ():
        state = cs.get("state") if isinstance(cs, Mapping) else None
        ended = state.get("terminated") if isinstance(state, Mapping) else None
        if not isinstance(ended, Mapping):
            continue
        reason, code, signal = (
            _text(ended.get("reason")),
            ended.get("exitCode"),
            ended.get("signal"),
        )
        if reason == "Completed" and not code:
            continue
        if reason:
            return reason
        if isinstance(signal, int) and signal:
            return f"Signal:{signal}"
        if isinstance(code, int) and code:
            return f"ExitCode:{code}"
    return None


def pod_reason(pod: Mapping[str, Any]) -> str | None:
    """Why a pod is not fine: unscheduled, pod reason, a container's waiting reason, how a
    container ended (OOMKilled, as kubectl shows it), not ready."""
    conds = _conditions(pod)
    for c in conds:
        if (
            c.get("type") == "PodScheduled"
            and c.get("status") == "False"
            and _text(c.get("reason"))
        ):
            return _text(c.get("reason"))
    status = pod.get("status")
    if isinstance(status, Mapping):
        if _text(status.get("reason")):
            return _text(status.get("reason"))
        for key in ("initContainerStatuses", "containerStatuses"):
            statuses = status.get(key)
            for cs in statuses if isinstance(statuses, list) else ():
                state = cs.get("state") if isinstance(cs, Mapping) else None
                waiting = state.get("waiting") if isinstance(state, Mapping) else None
                if isinstance(waiting, Mapping) and _text(waiting.get("reason")):
                    return _text(waiting.get("reason"))
        if status.get("phase") != "Succeeded":
            terminated = _terminated_reason(status.get("containerStatuses"))
            if terminated is not None:
                return terminated
    for c in conds:
        if c.get("type") == "Ready" and c.get("status") == "False" and _text(c.get("reason")):
            if isinstance(status, Mapping) and status.get("phase") == "Succeeded":
                return None
            return _text(c.get("reason"))
    return None


def _pod_request(pod: Mapping[str, Any]) -> res.Totals:
    try:
        return res.pod_request(pod.get("spec"))
    except EngineError:
        return {}  # a pod with an unreadable quantity requests nothing we can count


def _pod_entry(pod: Mapping[str, Any], placement: Placement) -> dict[str, Any]:
    status = pod.get("status") if isinstance(pod.get("status"), Mapping) else {}
    spec = pod.get("spec") if isinstance(pod.get("spec"), Mapping) else {}
    request = _pod_request(pod)
    entry: dict[str, Any] = {
        "name": placement.pod,
        "phase": _text(status.get("phase")) if isinstance(status, Mapping) else None,
        "ready": pod_is_ready(pod),
        "node": _text(spec.get("nodeName")) if isinstance(spec, Mapping) else None,
        "gpus": request.get(res.GPU, 0),
    }
    reason = pod_reason(pod)
    if reason:
        entry["reason"] = reason
    if placement.instance:
        entry["instance"] = placement.instance
    if placement.replica is not None:
        entry["replica"] = placement.replica
    return entry


#: replica indexes without pods are listed (``group[3]`` of a missing LWS group) up to this many
MAX_LISTED_REPLICAS = 1000


def _replica_sort_key(key: str) -> tuple[int, int | str]:
    return (0, int(key)) if key.isdigit() else (1, key)


class _Builder:
    """Builds the component nodes of one workload (pods grouped by component and instance)."""

    def __init__(self, wl: Workload):
        self.wl = wl
        self.structure = wl.structure
        self.extractor = wl.extractor
        self.pods_known = wl.pods is not None
        self.errors: list[str] = []
        self.entries: dict[tuple[str, str], list[tuple[Placement, Mapping[str, Any]]]] = {}
        for pod, placement in zip(wl.candidate_pods, wl.placements, strict=True):
            if placement.attributed and placement.component is not None:
                key = (placement.component, placement.instance or "")
                self.entries.setdefault(key, []).append((placement, pod))

    def kind(self, name: str) -> dict[str, str] | None:
        comp = self.structure.components[name]
        if comp.kind is None:
            return None
        return {"group": comp.kind.group, "version": comp.kind.version, "kind": comp.kind.kind}

    def nodes(
        self, name: str, replica: tuple[str, str | None] | None, divisor: int
    ) -> list[dict[str, Any]]:
        comp = self.structure.components[name]
        selector = comp.pod_selector.replica_selector if comp.pod_selector else None
        split = selector is not None and replica is None
        try:
            instances = self.extractor.instances(name)
        except EngineError as err:
            self.error(str(err))
            return [self._error_node(name, str(err))]
        out = []
        for _, inst in sorted(instances.items()):
            nodes = self._replica_split(name, inst) if split else None
            if nodes is None:
                node = self.node(name, inst, replica, divisor)
                nodes = [node] if node is not None else []
            out.extend(nodes)
        return out

    def error(self, message: str) -> None:
        if message not in self.errors:
            self.errors.append(message)

    def _error_node(self, name: str, message: str) -> dict[str, Any]:
        current = ready = None
        if self.pods_known:
            mine = [
                pod
                for (comp, _), entries in self.entries.items()
                if comp == name
                for _, pod in entries
            ]
            current, ready = len(mine), sum(1 for pod in mine if pod_is_ready(pod))
        return {
            "name": name,
            "component": name,
            "instance": None,
            "kind": self.kind(name),
            "replicas": {
                "desired": 0,
                "current": current,
                "ready": ready,
                "min": None,
                "max": None,
            },
            "resources": res.summarize({}),
            "pods": [],
            "children": [],
            "error": message,
            "_totals": {},
        }

    def _replica_split(self, name: str, inst: ExtractedInstance) -> list[dict[str, Any]] | None:
        """One node per replica key (``name[key]``): those seen on pods and those the spec implies.

        A grouping component whose scale is one replica's pods (an LWS ``group``) lists every
        index from 0 to the replicas its pods imply — with or without pods, so a file shows
        ``group[0]``, ``group[1]`` as a live workload does, and a missing group shows as empty.
        """
        pod_bearing = self.structure.has_pod_definition(name)
        members = {name} if pod_bearing else set(self.structure.subtree(name))
        mine = [
            p
            for p in self.wl.placements
            if p.attributed
            and p.component in members
            and (not pod_bearing or (p.instance or "") == inst.instance_id)
        ]
        keys = {p.replica for p in mine if p.replica_component == name and p.replica is not None}
        unkeyed = any(p.replica is None for p in mine)
        count = len(keys)
        implied = implied_replicas(self.extractor, name)
        if implied is not None and all(k.isdigit() for k in keys):
            count = implied
            if count <= MAX_LISTED_REPLICAS:
                keys |= {str(i) for i in range(count)}
        if not keys:
            return None
        out = []
        for key in sorted(keys, key=_replica_sort_key):
            node = self.node(name, inst, (name, key), count)
            if node is not None:
                node["name"] = f"{node['name']}[{key}]"
                node["replica"] = key
                out.append(node)
        if unkeyed:  # pods whose replica key could not be read stay visible
            node = self.node(name, inst, (name, None), count)
            if node is not None:
                node["name"] = f"{node['name']}[?]"
                node["replica"] = None
                out.append(node)
        return out

    def node(
        self,
        name: str,
        inst: ExtractedInstance,
        replica: tuple[str, str | None] | None,
        divisor: int,
    ) -> dict[str, Any] | None:
        comp = self.structure.components[name]
        pod_bearing = comp.has_pod_definition
        children: list[dict[str, Any]] = []
        for child in self.structure.children[name]:
            children.extend(self.nodes(child, replica, divisor))
        pods: list[tuple[Placement, Mapping[str, Any]]] = []
        if pod_bearing:
            pods = [
                (p, pod)
                for p, pod in self.entries.get((name, inst.instance_id), [])
                if replica is None or p.replica == replica[1]
            ]
        scale = inst.scale
        desired = 0
        totals: res.Totals = {}
        if pod_bearing and inst.describes_pods:
            desired = (scale or NO_SCALE).desired_pods()
            if divisor > 1:
                desired = -(-desired // divisor)  # ceil, exact for any size
            try:
                totals = res.scaled(instance_request(inst), desired)
            except EngineError as err:
                self.error(f"component '{name}': {err}")
        if not children and not pods:
            if not pod_bearing and scale is None:
                return None  # a grouping component with nothing under it
            if pod_bearing and not inst.describes_pods:
                return None  # an instance the object leaves out, and no pods of it
        current: int | None = None
        ready: int | None = None
        if self.pods_known:
            current = len(pods) + sum(c["replicas"]["current"] or 0 for c in children)
            ready = sum(1 for _, pod in pods if pod_is_ready(pod)) + sum(
                c["replicas"]["ready"] or 0 for c in children
            )
        desired += sum(c["replicas"]["desired"] for c in children)
        child_totals = [c["_totals"] for c in children]
        totals = res.add(totals, *child_totals)
        node: dict[str, Any] = {
            "name": inst.instance_id or name,
            "component": name,
            "instance": inst.instance_id or None,
            "kind": self.kind(name),
            "replicas": {
                "desired": desired,
                "current": current,
                "ready": ready,
                "min": scale.min_replicas if scale else None,
                "max": scale.max_replicas if scale else None,
            },
            "resources": res.summarize(totals),
            "pods": [_pod_entry(pod, p) for p, pod in sorted(pods, key=lambda e: e[0].pod)],
            "children": children,
            "_totals": totals,
        }
        return node


def _strip(nodes: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for node in nodes:
        node = dict(node)
        node.pop("_totals", None)
        node["children"] = _strip(node["children"])
        out.append(node)
    return out


def describe(wl: Workload) -> dict[str, Any]:
    """The describe JSON of a workload (see the module doc and INTERFACES.md)."""
    structure = wl.structure
    obj = wl.obj if isinstance(wl.obj, Mapping) else {}
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    builder = _Builder(wl)
    root = structure.root
    if root.has_pod_definition:
        nodes = builder.nodes(root.name, None, 1)
    else:
        nodes = []
        for child in structure.children[root.name]:
            nodes.extend(builder.nodes(child, None, 1))
    desired = 0
    totals: res.Totals = {}
    for name in structure.order:
        if not structure.has_pod_definition(name):
            continue
        try:
            instances = wl.extractor.instances(name)
        except EngineError:
            continue  # reported by the component's node
        for inst in instances.values():
            count = inst.desired_pods()
            desired += count
            try:
                totals = res.add(totals, res.scaled(instance_request(inst), count))
            except EngineError as err:
                builder.error(f"component '{name}': {err}")
    attributed = [
        (p, pod) for p, pod in zip(wl.placements, wl.candidate_pods, strict=True) if p.attributed
    ]
    try:
        status = wl.status()
        phases = wl.phases()
    except EngineError as err:
        builder.error(f"status: {err}")
        status, phases = None, ["Undefined"]
    unattributed = wl.unattributed()
    out: dict[str, Any] = {
        "apiVersion": _text(obj.get("apiVersion")),
        "kind": _text(obj.get("kind")),
        "name": _text(meta.get("name")) if isinstance(meta, Mapping) else None,
        "namespace": _text(meta.get("namespace")) if isinstance(meta, Mapping) else None,
        "uid": _text(meta.get("uid")) if isinstance(meta, Mapping) else None,
        "definition": {"name": wl.definition_name, "origin": wl.origin},
        "fileMode": wl.file_mode,
        "phases": phases,
        "pods": {
            "desired": desired,
            "current": len(attributed) if wl.pods is not None else None,
            "ready": sum(1 for _, pod in attributed if pod_is_ready(pod))
            if wl.pods is not None
            else None,
        },
        "resources": res.summarize(totals),
        "components": _strip(nodes),
        "podGroups": [to_json(g) for g in wl.pod_groups()],
        "unattributedPods": [name for name, _ in unattributed],
        "unattributedReasons": dict(unattributed),
        "errors": builder.errors,
    }
    for problem in wl.extractor.problems:
        builder.error(problem)
    notes = wl.gang_notes()
    if notes:
        out["podGroupNotes"] = notes
    if wl.pods is not None:
        actual = res.add(*(_pod_request(pod) for _, pod in attributed))
        out["observedResources"] = res.summarize(actual)
    if status is not None:
        out["status"] = {
            "phase": status.phase,
            "conditions": [c.to_dict() for c in status.conditions],
        }
    return out
