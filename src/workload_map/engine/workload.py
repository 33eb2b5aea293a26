"""``Workload``: one workload object seen through its Karta, with or without its pods.

The single entry point of the engine. Everything is computed lazily and cached on the instance;
inputs are never mutated and write methods return new objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, cast

from workload_map.engine.errors import EngineError
from workload_map.engine.extract import ExtractedInstance, Extractor, Scale
from workload_map.engine.gangs import (
    PodGroup,
    PodGroupResult,
    build_pod_groups,
    subtree_scale,
    v2_members,
    v2_spec_group,
    v2_spec_result,
)
from workload_map.engine.objects import plain_items, to_plain, workload_object
from workload_map.engine.once import cached_property, computed
from workload_map.engine.partition import partition_listed, partition_pods
from workload_map.engine.pods import Placement, attribute, attribute_all, pod_name
from workload_map.engine.references import (
    Resolution,
    Resolver,
    objects_resolver,
    resolve_references,
)
from workload_map.engine.status import UNDEFINED, Status, evaluate_status, status_expressions
from workload_map.engine.structure import Structure, load_definition, prepare
from workload_map.engine.summary import WorkloadSummary, summarize
from workload_map.model import Karta
from workload_map.model.views import to_json

if TYPE_CHECKING:
    from workload_map.engine.describe import DescribeView, Explanation
    from workload_map.engine.resource_view import WorkloadResources
    from workload_map.engine.tree import WorkloadTree

__all__ = ["Workload"]


class Workload:
    """A workload object, its definition and (optionally) its pods.

    ``pods`` may hold any objects of a ``--pods`` file: Pods are the candidates, other objects
    only link owner chains; a pod whose chain reaches a different top owner is left out.
    ``pods=None`` means no pods are known (current/ready are null). ``owned=True`` says the
    caller has already decided these pods are the workload's (by the owner rule of
    ``engine/partition.py``), so they are not partitioned again. ``file_mode`` tells whether
    the object came from a file rather than a live cluster; it defaults to ``pods is None``.
    A ``List`` among ``pods`` is unwrapped. ``shared_inputs=True`` says the object and pods
    are a watch cache's (replaced on change, never changed in place), so expression results
    are shared with other workloads holding equal values (``engine/equal_inputs.py``).
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
        references: Resolver | Iterable[Any] | Resolution | None = None,
        owned: bool = False,
        shared_inputs: bool = False,
    ) -> None:
        self.karta = loaded = load_definition(karta)
        #: the objects are a watch cache's, never changed in place: expression results may be
        #: shared with other workloads holding the same values (engine/equal_inputs.py)
        self._shared_inputs = shared_inputs
        self.structure: Structure = prepare(loaded, validate=validate)
        name = loaded.name  # a property: read once (a Workload is made per object listed)
        self.obj: dict[str, Any] = workload_object(obj, loaded.root_gvk, definition=name)
        #: the definition's references for this object: ``references`` is a resolver
        #: (a callable answering :class:`ReferenceRequest`), the objects at hand, or a
        #: :class:`Resolution` already made; without it every reference is unresolved
        self._references = references
        if isinstance(references, Resolution):
            self.resolution = references
        elif not loaded.spec.structure_definition.references:
            self.resolution = Resolution({})
        else:
            resolver = (
                references
                if references is None or callable(references)
                else objects_resolver(plain_items(references, what="references"))
            )
            self.resolution = resolve_references(
                loaded, self.obj, resolver, cache=self.structure.expressions
            )
        self.definition_name = definition_name or name
        self.origin = origin
        self._file_mode = file_mode
        self.pods: list[dict[str, Any]] | None = None
        self.excluded: list[tuple[str, str]] = []
        self.candidate_pods: list[dict[str, Any]] = []
        split = None
        if type(pods) is list and not owned:
            split = partition_listed(self.obj, pods)
        if split is not None and type(pods) is list:
            # a list of plain objects (pods listed, most files): plain_items would give it as
            # it is, and the candidates are all plain pods
            self.pods = list(pods)
            self.candidate_pods = cast(list[dict[str, Any]], split[0])
            self.excluded = [(pod_name(p), reason) for p, reason in split[1]]
        elif pods is not None:
            # client objects, list objects (PodList, List) and iterables; anything else is an
            # error naming the argument (engine/objects.py)
            items = plain_items(pods, what="pods")
            self.pods = items
            if owned:
                # the caller applied the owner rule already (the inventory links pods through
                # the same walk_chain and label_verdict): every pod given is a candidate
                self.candidate_pods = [p for p in items if type(p) is dict]
            else:
                candidates, excluded = partition_pods(self.obj, items)
                self.candidate_pods = [c for c in candidates if isinstance(c, dict)]
                self.excluded = [(pod_name(p), reason) for p, reason in excluded]

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
        bindings = self.resolution.bindings
        extractor = Extractor(self.structure, self.obj, bindings)
        if self._shared_inputs and not bindings:
            # (here: a command whose objects are not a watch cache's loads no table of equal
            # inputs, engine.equal_inputs with engine.reads: ~1.3M instructions of a live get)
            from workload_map.engine.equal_inputs import SharedEvaluations

            extractor.run = SharedEvaluations(bindings)
        return extractor

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
        run = self.extractor.run
        if getattr(run, "shared", False):
            # a fleet's workloads share equal status inputs (engine/equal_inputs.py)
            from workload_map.engine.equal_inputs import derived  # loaded: run is its own

            structure = self.structure
            return derived(
                structure.memo,
                "status",
                lambda: status_expressions(structure),
                self.obj,
                lambda: evaluate_status(structure, self.obj, run=run),
            )
        return evaluate_status(self.structure, self.obj, run=run)

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
        out = list(self.excluded)
        out.extend((p.pod, p.reason or "") for p in self.placements if not p.attributed)
        return out

    # -- gangs ------------------------------------------------------------------------------
    @cached_property
    def gangs(self) -> PodGroupResult:
        """The gangs, per candidate pod how it was grouped, and notes on gangs not listed."""
        made: PodGroup | None = computed(self, "spec_group")
        if made is not None:
            # the group :attr:`spec_group` made (the gang planner's, when it planned first):
            # only its members are read from the placements
            return v2_members(made, self.placements)
        return build_pod_groups(
            self.extractor,
            self.candidate_pods,
            self.placements,
            self.uid,
            pods_known=self.pods is not None,
        )

    def derived_gangs(self) -> PodGroupResult | None:
        """:attr:`gangs` when a consumer derived them already, else None (deriving nothing): a
        reader that can answer more cheaply takes them only where they exist."""
        found: PodGroupResult | None = computed(self, "gangs")
        return found

    @cached_property
    def spec_group(self) -> PodGroup | None:
        """The v2 group without subgroups from the object alone, its members left out; None
        for any other form (``engine.gangs.v2_spec_group``)."""
        return v2_spec_group(self.extractor, self.uid)

    def spec_gangs(self) -> PodGroupResult | None:
        """:attr:`gangs` but for the members and the pods' assignments, without attributing
        any pod: for the v2 group without subgroups only (else None). A later :attr:`gangs`
        reuses the group."""
        group = self.spec_group
        return None if group is None else v2_spec_result(group)

    def pod_groups(self) -> list[PodGroup]:
        """The gangs the definition implies for the known pods (no pods: for the spec)."""
        return list(self.gangs.groups)

    def gang_notes(self) -> list[str]:
        """Why gangs the definition names are not listed (no pods needed, keys unknown), and
        which pods join no gang."""
        return [*self.gangs.notes, *self.gangs.ungrouped]

    def subtree_scale(self, component: str, instance_id: str | None = None) -> int:
        """The reference's ``CalculateSubtreeScale`` (KAI's minAvailable rule)."""
        return subtree_scale(self.extractor, component, instance_id)

    def explanations(self) -> tuple[Explanation, ...]:
        """Per pod: the expressions and values that placed it, and its group with its minimum."""
        from workload_map.engine.describe import explanations  # see view()

        return explanations(self)

    def explain(self) -> list[dict[str, Any]]:
        """The JSON of :meth:`explanations` (``describe --explain``)."""
        out: list[dict[str, Any]] = to_json(self.explanations())
        return out

    # -- resources --------------------------------------------------------------------------
    def resource_view(self) -> WorkloadResources:
        """Desired (spec times desired pods) and actual (pods) requests per instance/component."""
        from workload_map.engine.resource_view import workload_resources  # see view()

        return workload_resources(self)

    def resources(self) -> dict[str, Any]:
        """The JSON of :meth:`resource_view`."""
        out: dict[str, Any] = to_json(self.resource_view())
        return out

    # -- views ------------------------------------------------------------------------------
    def tree(self) -> WorkloadTree:
        from workload_map.engine.tree import build_tree  # see view()

        status = self._status
        return build_tree(
            self.structure,
            self.extractor,
            list(status.matched) if status else None,
            self.placements if self.pods is not None else None,
        )

    def summary(self) -> WorkloadSummary:
        """The shared evaluation: phases, pod counts, requested/pending/held, gangs (no tree)."""
        return self._summary

    @cached_property
    def _summary(self) -> WorkloadSummary:
        return summarize(self)

    def view(self, *, explain: bool = False) -> DescribeView:
        """The typed describe view (``explain``: with how each pod was placed and grouped)."""
        # the views (describe's, the resources', the tree's: ~20 view classes and the
        # modules they need) load when a workload is first viewed so: a get reads only
        # the summary (6M instructions of a live get, docs/cli.md)
        from workload_map.engine.describe import describe

        return describe(self, explain=explain)

    def describe(self, *, explain: bool = False) -> dict[str, Any]:
        """The ``wlmap describe -o json`` view: the JSON of :meth:`view` (schemas/describe.json)."""
        out: dict[str, Any] = to_json(self.view(explain=explain))
        return out

    def desired_pods(self) -> int:
        """Pods the spec implies for the whole workload (``pods.desired`` of the view)."""
        return sum(
            i.desired_pods()
            for name in self.structure.pod_bearing
            for i in self.extractor.instances(name).values()
        )

    # -- writes (each returns a new object) ------------------------------------------------
    def update_pod_template(
        self, component: str, values: Any, *, instance: str | None = None
    ) -> dict[str, Any]:
        """Merge pod template specs per instance: a mapping by instance id (every id), a list in
        id order, or, with ``instance``, the one template of that instance (others untouched)."""
        return self._update_path(
            component, "pod_template_spec_path", "pod template spec", values, instance
        )

    def update_pod_spec(
        self, component: str, values: Any, *, instance: str | None = None
    ) -> dict[str, Any]:
        """Merge pod specs per instance (as :meth:`update_pod_template`)."""
        return self._update_path(component, "pod_spec_path", "pod spec", values, instance)

    def update_pod_metadata(
        self, component: str, values: Any, *, instance: str | None = None
    ) -> dict[str, Any]:
        """Merge pod metadata per instance (as :meth:`update_pod_template`)."""
        return self._update_path(component, "metadata_path", "pod metadata", values, instance)

    def update_fragmented_pod_spec(
        self, component: str, values: Any, *, instance: str | None = None
    ) -> dict[str, Any]:
        """Merge fragmented pod spec fields per instance (as :meth:`update_pod_template`)."""
        from workload_map.engine import writeback  # the writes: see view()

        return writeback.update_fragments(  # type: ignore[no-any-return]
            self.structure, self.obj, component, values, instance
        )

    def _update_path(
        self, component: str, attr: str, label: str, values: Any, instance: str | None
    ) -> dict[str, Any]:
        from workload_map.engine import writeback  # the writes: see view()

        return writeback.update_path(  # type: ignore[no-any-return]
            self.structure, self.obj, component, attr, label, values, instance
        )

    def suspend(self) -> dict[str, Any]:
        """The object with every suspend action applied (children first, then the root)."""
        from workload_map.engine import writeback  # the writes: see view()

        return writeback.apply_actions(self.structure, self.obj, "suspend")  # type: ignore[no-any-return]

    def resume(self) -> dict[str, Any]:
        from workload_map.engine import writeback  # the writes: see view()

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
            references=self._references,
        )
