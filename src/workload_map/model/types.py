"""The typed Karta model: one frozen dataclass per object of the ``run.ai/v1alpha1`` schema.

Every other package (engine, catalog, CLI) reads definitions through these classes, so the
attribute names are stable: snake_case mirrors of the JSON keys, tuples for lists, ``None`` for an
absent optional field. Mappings (``metadata``, ``matchLabels``) stay plain dicts; treat them as
read-only. Loading and dumping live in :mod:`workload_map.model.load`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import field
from typing import Any, ClassVar

from workload_map.model.views import View, json_field

# no __all__: the package (``__init__``) lists what is public

GROUP = "run.ai"
VERSION = "v1alpha1"
KIND = "Karta"
API_VERSION = f"{GROUP}/{VERSION}"


#: The generic statuses in the reference's fixed evaluation/report order (``Phase``'s values but
#: ``Undefined``, the phase when none matches). Written out, not read from :class:`Phase
#: <workload_map.model.phases.Phase>`: the enum is built when it is asked for (a StrEnum of
#: nine members is ~1M instructions of every command that loads the model; a test pins both).
STATUS_ORDER: tuple[str, ...] = tuple(
    "Resuming Suspending Suspended Running Failed Completed Initializing Degraded".split()
)

#: The generic statuses most severe first: the order the reference's UIs show status chips in.
SEVERITY_ORDER: tuple[str, ...] = tuple(
    "Failed Degraded Suspending Resuming Suspended Initializing Running Completed Undefined".split()
)


class GVK(View):
    """A group/version/kind; ``group`` is ``""`` for the core group."""

    group: str = json_field("group")
    version: str = json_field("version")
    kind: str = json_field("kind")

    @classmethod
    def from_api_version(cls, api_version: str, kind: str) -> GVK:
        """The GVK of an object's ``apiVersion`` (``group/version``, or ``version`` for core)."""
        group, _, version = api_version.rpartition("/")
        return cls(group, version, kind)

    @property
    def group_kind(self) -> tuple[str, str]:
        """(group, kind): what a definition covers regardless of the version."""
        return self.group, self.kind

    @property
    def api_version(self) -> str:
        """``group/version``, or just ``version`` for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        # Go's schema.GroupVersionKind.String(): "group/version, Kind=kind" ("/v1, …" for core)
        return f"{self.group}/{self.version}, Kind={self.kind}"


class FragmentedPodSpecDefinition(View):
    """Eleven optional jq paths, each addressing one fragment of a pod spec."""

    scheduler_name_path: str | None = None
    labels_path: str | None = None
    annotations_path: str | None = None
    resources_path: str | None = None
    resource_claims_path: str | None = None
    pod_affinity_path: str | None = None
    node_affinity_path: str | None = None
    containers_path: str | None = None
    container_path: str | None = None
    priority_class_name_path: str | None = None
    image_path: str | None = None


class SpecDefinition(View):
    """Where a component's pods are described: a template, a pod spec (+metadata) or fragments."""

    pod_template_spec_path: str | None = None
    pod_spec_path: str | None = None
    metadata_path: str | None = None
    fragmented_pod_spec_definition: FragmentedPodSpecDefinition | None = None


class ScaleDefinition(View):
    replicas_path: str | None = None
    min_replicas_path: str | None = None
    max_replicas_path: str | None = None


class ComponentTypeSelector(View):
    """Pod → component type: ``key_path`` existence/equality and/or every label equal."""

    key_path: str | None = None
    value: str | None = None
    match_labels: Mapping[str, str] | None = None


class ComponentInstanceSelector(View):
    id_path: str


class ReplicaSelector(View):
    key_path: str


class PodSelector(View):
    component_type_selector: ComponentTypeSelector | None = None
    component_instance_selector: ComponentInstanceSelector | None = None
    replica_selector: ReplicaSelector | None = None


class PhaseDefinition(View):
    path: str


class ConditionsDefinition(View):
    """Where conditions live and which keys name their fields (CRD defaults applied on load)."""

    path: str
    type_field_name: str = "type"
    status_field_name: str = "status"
    message_field_name: str | None = "message"
    reason_field_name: str | None = "reason"


class ConditionMatcher(View):
    type: str
    status: str | None = None
    reason: str | None = None


class ExpressionMatcher(View):
    expression: str
    expected_result: str


class StatusMatcher(View):
    """All present parts must hold (AND); matchers of one status are OR-ed."""

    by_phase: str | None = None
    by_conditions: tuple[ConditionMatcher, ...] = ()
    by_expression: ExpressionMatcher | None = None


class StatusMappings(View):
    initializing: tuple[StatusMatcher, ...] = ()
    running: tuple[StatusMatcher, ...] = ()
    completed: tuple[StatusMatcher, ...] = ()
    failed: tuple[StatusMatcher, ...] = ()
    degraded: tuple[StatusMatcher, ...] = ()
    suspended: tuple[StatusMatcher, ...] = ()
    suspending: tuple[StatusMatcher, ...] = ()
    resuming: tuple[StatusMatcher, ...] = ()

    #: the JSON keys in the schema's (and the CRD's) field order
    KEYS: ClassVar[tuple[str, ...]] = (
        "initializing",
        "running",
        "completed",
        "failed",
        "degraded",
        "suspended",
        "suspending",
        "resuming",
    )

    def entries(self) -> tuple[tuple[str, tuple[StatusMatcher, ...]], ...]:
        """The 8 ``(status, matchers)`` pairs in the reference's fixed order (see STATUS_ORDER)."""
        return tuple((name, getattr(self, name.lower())) for name in STATUS_ORDER)


class StatusDefinition(View):
    phase_definition: PhaseDefinition | None = None
    conditions_definition: ConditionsDefinition | None = None
    status_mappings: StatusMappings = field(default_factory=StatusMappings)


class Action(View):
    """Write ``value`` (JSON-encoded text) to ``path``."""

    path: str
    value: str


class SuspendDefinition(View):
    suspend_actions: tuple[Action, ...] = ()
    resume_actions: tuple[Action, ...] = ()


class Component(View):
    """A root or child component; ``kind is None`` makes it a logical grouping."""

    name: str
    kind: GVK | None = None
    owner_ref: str | None = None
    spec_definition: SpecDefinition | None = None
    scale_definition: ScaleDefinition | None = None
    status_definition: StatusDefinition | None = None
    suspend_definition: SuspendDefinition | None = None
    instance_id_path: str | None = None
    pod_selector: PodSelector | None = None

    @property
    def has_pod_definition(self) -> bool:
        """Whether the component describes pods: a pod template, a pod spec or fragments."""
        spec = self.spec_definition
        return spec is not None and bool(
            spec.pod_template_spec_path
            or spec.pod_spec_path
            or spec.fragmented_pod_spec_definition is not None
        )


class ReferenceLookup(View):
    """One object read by name: its kind (one of ``kinds``, chosen by ``kind_path``), its name
    and namespace (jq paths on the workload; the namespace defaults to the workload's)."""

    name_path: str
    kinds: tuple[GVK, ...] = ()
    kind_path: str | None = None
    namespace_path: str | None = None
    cluster_scoped: bool | None = None


class ReferenceList(View):
    """Every object of a kind whose labels match (``match_labels`` and/or the map a jq path on
    the workload yields), in a namespace (default the workload's) or cluster-wide."""

    kinds: tuple[GVK, ...] = ()
    kind_path: str | None = None
    namespace_path: str | None = None
    cluster_scoped: bool | None = None
    match_labels: dict[str, str] | None = None
    match_labels_path: str | None = None


class Reference(View):
    """Another object a definition reads, bound as ``$<name>`` in the workload's paths: the
    object (``lookup``; null when absent) or an array of objects (``list``)."""

    name: str
    lookup: ReferenceLookup | None = None
    list: ReferenceList | None = None
    optional: bool | None = None
    allow_config_map: bool | None = None

    @property
    def target(self) -> ReferenceLookup | ReferenceList | None:
        """The lookup or the list (whichever is set; the lookup when both are)."""
        return self.lookup if self.lookup is not None else self.list


class StructureDefinition(View):
    root_component: Component
    child_components: tuple[Component, ...] = ()
    additional_child_kinds: tuple[GVK, ...] = ()
    references: tuple[Reference, ...] = ()


class Topology(View):
    topology_name: str | None = None
    preferred_topology_level: str | None = None
    required_topology_level: str | None = None


class SubGroup(View):
    component_name: str
    topology: Topology | None = None


class PodGroupMapping(View):
    """The v2 ``podGroup`` form: one group, optional topology and per-component subgroups."""

    name: str
    topology: Topology | None = None
    sub_groups: tuple[SubGroup, ...] = ()


class Member(View):
    component_name: str
    group_by_key_paths: tuple[str, ...] = ()
    filters: tuple[str, ...] = ()


class PodGroupDefinition(View):
    """The deprecated alpha ``podGroups[]`` form."""

    name: str
    members: tuple[Member, ...] = ()


class GangScheduling(View):
    pod_group: PodGroupMapping | None = None
    pod_groups: tuple[PodGroupDefinition, ...] = ()


class OptimizationInstructions(View):
    gang_scheduling: GangScheduling | None = None


class KartaSpec(View):
    structure_definition: StructureDefinition
    optimization_instructions: OptimizationInstructions | None = None


class KartaCondition(View):
    """A ``metav1.Condition`` on the Karta object itself (written by an operator)."""

    type: str
    status: str
    reason: str | None = None
    message: str | None = None
    last_transition_time: str | None = None
    observed_generation: int | None = None


class KartaStatus(View):
    conditions: tuple[KartaCondition, ...] = ()


class Karta(View):
    """A whole ``run.ai/v1alpha1`` Karta object."""

    api_version: str
    kind: str
    metadata: dict[str, Any]
    spec: KartaSpec
    status: KartaStatus | None = None

    @property
    def name(self) -> str | None:
        """``metadata.name`` when set."""
        value = self.metadata.get("name")
        return value if isinstance(value, str) else None

    @property
    def root(self) -> Component:
        return self.spec.structure_definition.root_component

    @property
    def root_gvk(self) -> GVK | None:
        """The workload type this definition describes (the root component's kind)."""
        return self.root.kind

    def components(self) -> tuple[Component, ...]:
        """Root first, then the children in definition order."""
        return (self.root, *self.spec.structure_definition.child_components)

    def component(self, name: str) -> Component | None:
        """The first component with this name, or None."""
        for comp in self.components():
            if comp.name == name:
                return comp
        return None

    def children_of(self, name: str) -> tuple[Component, ...]:
        """Direct children (``ownerRef == name``) in definition order."""
        return tuple(
            c for c in self.spec.structure_definition.child_components if c.owner_ref == name
        )

    def iter_descendants(self, name: str) -> Iterator[Component]:
        """Every component below ``name`` (depth first; safe against ownership cycles)."""
        seen = {name}
        stack = list(reversed(self.children_of(name)))
        while stack:
            comp = stack.pop()
            if comp.name in seen:
                continue
            seen.add(comp.name)
            yield comp
            stack.extend(reversed(self.children_of(comp.name)))

    @property
    def gang_scheduling(self) -> GangScheduling | None:
        instructions = self.spec.optimization_instructions
        return instructions.gang_scheduling if instructions else None
