"""``Workload``: one workload object seen through its Karta, with or without its pods.

The single entry point of the engine. Everything is computed lazily and cached on the instance;
inputs are never mutated and write methods return new objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cached_property
from typing import Any

from workload_map.engine import resources as res
from workload_map.engine import writeback
from workload_map.engine.describe import describe, instance_request, pod_is_ready
from workload_map.engine.errors import EngineError
from workload_map.engine.extract import ExtractedInstance, Extractor, Scale
from workload_map.engine.gangs import PodGroup, PodGroupResult, build_pod_groups, subtree_scale
from workload_map.engine.objects import plain_items, to_plain, workload_object
from workload_map.engine.owners import partition_pods
from workload_map.engine.pods import Placement, attribute, attribute_all, pod_name
from workload_map.engine.status import UNDEFINED, Status, evaluate_status
from workload_map.engine.structure import Structure, load_definition, prepare
from workload_map.engine.tree import WorkloadTree, build_tree
from workload_map.model import Karta
from workload_map.model.views import to_json

__all__ = ["Workload"]


class Workload:
    """A workload object, its definition and (optionally) its pods.

    ``pods`` may hold any objects of a ``--pods`` file: Pods are the candidates, other objects
    only link owner chains; a pod whose chain reaches a different top owner is left out.
    ``pods=None`` means no pods are known (current/ready are null). ``file_mode`` tells whether
    the object came from a file rather than a live cluster; it defaults to ``pods is None``.
    A ``List`` among ``pods`` is unwrapped.
    """

    def __init__(
        self,
        karta: Karta | Mapping[str, Any] | str,
        obj: Any,
        pods: Iterable[Any] | None = None,
        *,
        definition_name: str | None = None,
        origin: str = "file",
        validate: bool = True,
        file_mode: bool | None = None,
    ):
        self.karta = load_definition(karta)
        self.structure: Structure = prepare(self.karta, validate=validate)
        self.obj: dict[str, Any] = workload_object(
            obj, self.karta.root_gvk, definition=self.karta.name
        )
        self.definition_name = definition_name or self.karta.name
        self.origin = origin
        self._file_mode = file_mode
        self.pods: list[dict[str, Any]] | None = None
        self._excluded: list[tuple[str, str]] = []
        self.candidate_pods: list[dict[str, Any]] = []
        if pods is not None:
            # client objects, list objects (PodList, List) and iterables; anything else is an
            # error naming the argument (engine/objects.py)
            items = plain_items(pods, what="pods")
            self.pods = items
            candidates, excluded = partition_pods(self.obj, items)
            self.candidate_pods = [c for c in candidates if isinstance(c, dict)]
            self._excluded = [(pod_name(p), reason) for p, reason in excluded]

    # -- basics -----------------------------------------------------------------------------
    @property
    def file_mode(self) -> bool:
        return self.pods is None if self._file_mode is None else self._file_mode

    @property
    def uid(self) -> str:
        """The id gang names start from (KAI: the top owner's uid).

        A manifest has no uid: its name stands in, else its ``generateName`` (without the
        trailing ``-``), else ``unnamed`` — never an empty segment (``pg--job``).
        """
        meta = self.obj.get("metadata")
        meta = meta if isinstance(meta, Mapping) else {}
        for key in ("uid", "name", "generateName"):
            value = meta.get(key)
            if isinstance(value, str) and value.strip("-"):
                return value.rstrip("-") if key == "generateName" else value
        return "unnamed"

    @cached_property
    def extractor(self) -> Extractor:
        return Extractor(self.structure, self.obj)

    def instance_ids(self, component: str) -> list[str]:
        return list(self.extractor.instance_ids(component))

    def instances(self, component: str) -> dict[str, ExtractedInstance]:
        """Every instance of ``component`` with the parts its definition describes."""
        return dict(self.extractor.instances(component))

    def pod_template_specs(self, component: str) -> dict[str, dict[str, Any]] | None:
        return self.extractor.pod_template_specs(component)

    def pod_specs(self, component: str) -> dict[str, dict[str, Any]] | None:
        return self.extractor.pod_specs(component)

    def pod_metadata(self, component: str) -> dict[str, dict[str, Any]] | None:
        return self.extractor.pod_metadata(component)

    def fragmented_pod_specs(self, component: str) -> dict[str, dict[str, Any]] | None:
        return self.extractor.fragmented_pod_specs(component)

    def scales(self, component: str) -> dict[str, Scale] | None:
        return self.extractor.scales(component)

    # -- status -----------------------------------------------------------------------------
    def status(self) -> Status | None:
        """Phase, conditions and matched statuses by the root's status definition."""
        return self._status

    @cached_property
    def _status(self) -> Status | None:
        return evaluate_status(self.structure, self.obj, run=self.extractor.run)

    def phases(self) -> list[str]:
        """Every matched generic status in the fixed order, or ``["Undefined"]``."""
        status = self._status
        return list(status.matched) if status is not None else [UNDEFINED]

    # -- pods -------------------------------------------------------------------------------
    @cached_property
    def placements(self) -> list[Placement]:
        return attribute_all(self.structure, self.extractor, self.candidate_pods)

    def attribute(self, pod: Any) -> Placement:
        """Where one pod belongs (component, instance, replica), or why nowhere."""
        plain = to_plain(pod, what="pod")
        if not isinstance(plain, dict):
            raise EngineError("pod: expected a JSON object")
        return attribute(self.structure, self.extractor, plain)

    def unattributed(self) -> list[tuple[str, str]]:
        """(pod name, reason) of the pods no component claims, and those of other owners."""
        out = list(self._excluded)
        out.extend((p.pod, p.reason or "") for p in self.placements if not p.attributed)
        return out

    # -- gangs ------------------------------------------------------------------------------
    @cached_property
    def gangs(self) -> PodGroupResult:
        """The gangs, per candidate pod how it was grouped, and notes on gangs not listed."""
        return build_pod_groups(
            self.extractor,
            self.candidate_pods,
            self.placements,
            self.uid,
            pods_known=self.pods is not None,
        )

    def pod_groups(self) -> list[PodGroup]:
        """The gangs the definition implies for the known pods (no pods: for the spec)."""
        return list(self.gangs.groups)

    def gang_notes(self) -> list[str]:
        """Why gangs the definition names are not listed (no pods needed, keys unknown)."""
        return list(self.gangs.notes)

    def subtree_scale(self, component: str, instance_id: str | None = None) -> int:
        """The reference's ``CalculateSubtreeScale`` (KAI's minAvailable rule)."""
        return subtree_scale(self.extractor, component, instance_id)

    def explain(self) -> list[dict[str, Any]]:
        """Per pod: the expressions and values that placed it, and its group with its minimum."""
        out = []
        for placement, gang in zip(self.placements, self.gangs.assignments, strict=True):
            entry = placement.to_dict()
            entry["gang"] = to_json(gang)
            out.append(entry)
        for name, reason in self._excluded:
            out.append({"pod": name, "component": None, "unattributedReason": reason, "steps": []})
        for note in self.gangs.notes:
            out.append({"pod": None, "component": None, "steps": [], "gang": {"reason": note}})
        return out

    # -- resources --------------------------------------------------------------------------
    def resources(self) -> dict[str, Any]:
        """Desired (spec times desired replicas) and actual (pods) requests per instance/component."""
        by_pod: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for pod, p in zip(self.candidate_pods, self.placements, strict=True):
            if p.attributed and p.component is not None:
                by_pod.setdefault((p.component, p.instance or ""), []).append(pod)
        components: dict[str, Any] = {}
        workload_desired: res.Totals = {}
        workload_actual: res.Totals = {}
        for name in self.structure.order:
            if not self.structure.has_pod_definition(name):
                continue
            instances: dict[str, Any] = {}
            comp_desired: res.Totals = {}
            comp_actual: res.Totals = {}
            for instance_id, inst in self.extractor.instances(name).items():
                per_pod = instance_request(inst)
                count = inst.desired_pods()
                desired = res.scaled(per_pod, count)
                pods = by_pod.get((name, instance_id), [])
                actual = res.add(*(res.pod_request(p.get("spec")) for p in pods))
                instances[instance_id] = {
                    "perPod": res.summarize(per_pod),
                    "desiredPods": count,
                    "observedPods": None if self.pods is None else len(pods),
                    "readyPods": None
                    if self.pods is None
                    else sum(1 for p in pods if pod_is_ready(p)),
                    "desired": res.summarize(desired),
                    "actual": None if self.pods is None else res.summarize(actual),
                }
                comp_desired = res.add(comp_desired, desired)
                comp_actual = res.add(comp_actual, actual)
            components[name] = {
                "instances": instances,
                "desiredPods": sum(i["desiredPods"] for i in instances.values()),
                "observedPods": None
                if self.pods is None
                else sum(i["observedPods"] for i in instances.values()),
                "desired": res.summarize(comp_desired),
                "actual": None if self.pods is None else res.summarize(comp_actual),
            }
            workload_desired = res.add(workload_desired, comp_desired)
            workload_actual = res.add(workload_actual, comp_actual)
        return {
            "components": components,
            "desired": res.summarize(workload_desired),
            "actual": None if self.pods is None else res.summarize(workload_actual),
        }

    # -- views ------------------------------------------------------------------------------
    def tree(self) -> WorkloadTree:
        status = self._status
        return build_tree(
            self.structure,
            self.extractor,
            list(status.matched) if status else None,
            self.placements if self.pods is not None else None,
        )

    def describe(self) -> dict[str, Any]:
        """The ``wlmap describe -o json`` view (INTERFACES.md)."""
        return describe(self)

    def desired_pods(self) -> int:
        total = 0
        for name in self.structure.order:
            if self.structure.has_pod_definition(name):
                total += sum(i.desired_pods() for i in self.extractor.instances(name).values())
        return total

    # -- writes (each returns a new object) ------------------------------------------------
    def update_pod_template(self, component: str, values: Any) -> dict[str, Any]:
        """Merge pod template specs per instance (a mapping by instance id, or one value)."""
        return writeback.update_path(  # type: ignore[no-any-return]
            self.structure,
            self.obj,
            component,
            "pod_template_spec_path",
            "pod template spec",
            values,
        )

    def update_pod_spec(self, component: str, values: Any) -> dict[str, Any]:
        return writeback.update_path(  # type: ignore[no-any-return]
            self.structure, self.obj, component, "pod_spec_path", "pod spec", values
        )

    def update_pod_metadata(self, component: str, values: Any) -> dict[str, Any]:
        return writeback.update_path(  # type: ignore[no-any-return]
            self.structure, self.obj, component, "metadata_path", "pod metadata", values
        )

    def update_fragmented_pod_spec(self, component: str, values: Any) -> dict[str, Any]:
        return writeback.update_fragments(  # type: ignore[no-any-return]
            self.structure, self.obj, component, values
        )

    def suspend(self) -> dict[str, Any]:
        """The object with every suspend action applied (children first, then the root)."""
        return writeback.apply_actions(self.structure, self.obj, "suspend")  # type: ignore[no-any-return]

    def resume(self) -> dict[str, Any]:
        return writeback.apply_actions(self.structure, self.obj, "resume")  # type: ignore[no-any-return]

    def with_object(self, obj: Any) -> Workload:
        """The same definition and pods over another version of the object."""
        return Workload(
            self.karta,
            obj,
            self.pods,
            definition_name=self.definition_name,
            origin=self.origin,
            validate=False,
        )
