"""The wire shape of every Karta object, declared once.

The loader (JSON → dataclasses, with unknown-field and type errors), the dumper (dataclasses →
JSON) and the CRD generator all walk these declarations, so the three can never disagree about a
key name, a required field, a default or a list's merge semantics.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import field
from typing import Any, Literal

from workload_map.model import types as t
from workload_map.model.views import View

__all__ = [
    "BOOL",
    "FREE",
    "INT",
    "POD_EVALUATED",
    "SHAPES",
    "STR",
    "STRMAP",
    "Field",
    "JqField",
    "ListOf",
    "Shape",
    "iter_jq_fields",
    "jq_field_keys",
]

Scalar = Literal["string", "integer", "boolean", "object-free", "string-map"]

STR: Scalar = "string"
INT: Scalar = "integer"
BOOL: Scalar = "boolean"
FREE: Scalar = "object-free"
STRMAP: Scalar = "string-map"


class ListOf(View):
    """A JSON array of ``item`` with Kubernetes list semantics."""

    item: FieldType
    list_type: Literal["atomic", "map", "set"] = "atomic"
    map_keys: tuple[str, ...] = ()


FieldType = Scalar | type | ListOf


class Field(View):
    """One JSON key of an object.

    ``required`` is the CRD's verdict; ``load_default`` (when not None) is what the loader
    substitutes for an absent required key so that the validator, not the loader, explains it.
    ``default`` is a CRD default (applied by the loader too, as an API server would).
    """

    key: str
    attr: str
    type: FieldType
    doc: str
    required: bool = False
    jq: bool = False
    default: str | None = None
    load_default: Any = None
    min_length: int | None = None
    min_items: int | None = None
    min_properties: int | None = None
    enum: tuple[str, ...] = ()


class Shape(View):
    cls: type
    doc: str
    fields: tuple[Field, ...]
    cel: tuple[tuple[str, str], ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    def by_key(self, key: str) -> Field | None:
        for f in self.fields:
            if f.key == key:
                return f
        return None


def _f(key: str, attr: str, typ: FieldType, doc: str, **kw: Any) -> Field:
    return Field(key=key, attr=attr, type=typ, doc=doc, **kw)


def _jq(key: str, attr: str, doc: str, **kw: Any) -> Field:
    return Field(key=key, attr=attr, type=STR, doc=doc, jq=True, **kw)


_GVK = Shape(
    t.GVK,
    "A Kubernetes group, version and kind (group is empty for the core API group).",
    (
        _f(
            "group",
            "group",
            STR,
            "API group; empty for the core group.",
            required=True,
            load_default="",
        ),
        _f("version", "version", STR, "API version.", required=True, load_default=""),
        _f("kind", "kind", STR, "Kind.", required=True, load_default=""),
    ),
)

_FRAGMENTED = Shape(
    t.FragmentedPodSpecDefinition,
    "Paths to individual pod spec fragments, for workloads that do not embed a pod spec.",
    (
        _jq("schedulerNamePath", "scheduler_name_path", "jq path to the scheduler name."),
        _jq("labelsPath", "labels_path", "jq path to the pod labels."),
        _jq("annotationsPath", "annotations_path", "jq path to the pod annotations."),
        _jq("resourcesPath", "resources_path", "jq path to a ResourceRequirements object."),
        _jq(
            "resourceClaimsPath",
            "resource_claims_path",
            "jq path to a list of PodResourceClaims (DRA).",
        ),
        _jq("podAffinityPath", "pod_affinity_path", "jq path to a PodAffinity object."),
        _jq("nodeAffinityPath", "node_affinity_path", "jq path to a NodeAffinity object."),
        _jq("containersPath", "containers_path", "jq path to a list of Containers."),
        _jq("containerPath", "container_path", "jq path to a single Container."),
        _jq(
            "priorityClassNamePath",
            "priority_class_name_path",
            "jq path to the priority class name.",
        ),
        _jq("imagePath", "image_path", "jq path to the main container image."),
    ),
)

_SPEC = Shape(
    t.SpecDefinition,
    "Where the component's pods are described; use exactly one of the three forms.",
    (
        _jq("podTemplateSpecPath", "pod_template_spec_path", "jq path to a PodTemplateSpec."),
        _jq("podSpecPath", "pod_spec_path", "jq path to a PodSpec."),
        _jq(
            "metadataPath",
            "metadata_path",
            "jq path to the pod metadata; meant to accompany podSpecPath.",
        ),
        _f(
            "fragmentedPodSpecDefinition",
            "fragmented_pod_spec_definition",
            _FRAGMENTED.cls,
            "Paths to pod spec fragments.",
        ),
    ),
)

_SCALE = Shape(
    t.ScaleDefinition,
    "Where the component's replica counts are.",
    (
        _jq("replicasPath", "replicas_path", "jq path to the desired replica count."),
        _jq("minReplicasPath", "min_replicas_path", "jq path to the minimum replica count."),
        _jq("maxReplicasPath", "max_replicas_path", "jq path to the maximum replica count."),
    ),
)

_TYPE_SELECTOR = Shape(
    t.ComponentTypeSelector,
    "Tells which pods belong to this component type.",
    (
        _jq("keyPath", "key_path", "jq path on the pod; alone it tests existence.", min_length=1),
        _f("value", "value", STR, "Expected value at keyPath (equality test)."),
        _f(
            "matchLabels",
            "match_labels",
            STRMAP,
            "Labels the pod must all carry.",
            min_properties=1,
        ),
    ),
    cel=(
        (
            "has(self.keyPath) || has(self.matchLabels)",
            "at least one of keyPath or matchLabels must be set",
        ),
        ("!has(self.value) || has(self.keyPath)", "value requires keyPath"),
    ),
)

_INSTANCE_SELECTOR = Shape(
    t.ComponentInstanceSelector,
    "Reads a pod's component instance id.",
    (_jq("idPath", "id_path", "jq path on the pod giving the instance id.", required=True),),
)

_REPLICA_SELECTOR = Shape(
    t.ReplicaSelector,
    "Reads a pod's replica index or group.",
    (_jq("keyPath", "key_path", "jq path on the pod giving the replica key.", required=True),),
)

_POD_SELECTOR = Shape(
    t.PodSelector,
    "How pods are attributed to this component.",
    (
        _f(
            "componentTypeSelector",
            "component_type_selector",
            t.ComponentTypeSelector,
            "Selects the pods of this component type.",
        ),
        _f(
            "componentInstanceSelector",
            "component_instance_selector",
            t.ComponentInstanceSelector,
            "Reads the instance id of a pod.",
        ),
        _f(
            "replicaSelector",
            "replica_selector",
            t.ReplicaSelector,
            "Reads the replica key of a pod.",
        ),
    ),
)

_PHASE = Shape(
    t.PhaseDefinition,
    "Where the workload's phase string is.",
    (_jq("path", "path", "jq path to the phase.", required=True),),
)

_CONDITIONS = Shape(
    t.ConditionsDefinition,
    "Where the workload's conditions are and how their fields are named.",
    (
        _jq("path", "path", "jq path to the list of conditions.", required=True),
        _f("typeFieldName", "type_field_name", STR, "Key of the condition type.", default="type"),
        _f(
            "statusFieldName",
            "status_field_name",
            STR,
            "Key of the condition status.",
            default="status",
        ),
        _f(
            "messageFieldName",
            "message_field_name",
            STR,
            "Key of the condition message.",
            default="message",
        ),
        _f(
            "reasonFieldName",
            "reason_field_name",
            STR,
            "Key of the condition reason.",
            default="reason",
        ),
    ),
)

_CONDITION_MATCHER = Shape(
    t.ConditionMatcher,
    "A condition that must be present with the given status (and reason).",
    (
        _f("type", "type", STR, "Condition type.", required=True),
        _f("status", "status", STR, "Expected condition status."),
        _f("reason", "reason", STR, "Expected condition reason."),
    ),
)

_EXPRESSION_MATCHER = Shape(
    t.ExpressionMatcher,
    "A jq expression whose first result, as text, must equal expectedResult.",
    (
        _jq("expression", "expression", "jq expression over the workload.", required=True),
        _f("expectedResult", "expected_result", STR, "Expected result as a string.", required=True),
    ),
)

_MATCHER = Shape(
    t.StatusMatcher,
    "Every part that is set must hold.",
    (
        _f("byPhase", "by_phase", STR, "Expected phase."),
        _f(
            "byConditions",
            "by_conditions",
            ListOf(t.ConditionMatcher),
            "Conditions that must all match.",
        ),
        _f("byExpression", "by_expression", t.ExpressionMatcher, "An expression that must match."),
    ),
)

_MAPPINGS = Shape(
    t.StatusMappings,
    "For each generic status, matchers of which any may match.",
    tuple(
        _f(name, name, ListOf(t.StatusMatcher), f"Matchers for the {name.capitalize()} status.")
        for name in t.StatusMappings.KEYS
    ),
)

_STATUS = Shape(
    t.StatusDefinition,
    "How the workload's generic status is derived.",
    (
        _f("phaseDefinition", "phase_definition", t.PhaseDefinition, "Where the phase is."),
        _f(
            "conditionsDefinition",
            "conditions_definition",
            t.ConditionsDefinition,
            "Where the conditions are.",
        ),
        _f(
            "statusMappings",
            "status_mappings",
            t.StatusMappings,
            "Matchers per generic status.",
            required=True,
        ),
    ),
)

_ACTION = Shape(
    t.Action,
    "Write a JSON value at a jq path.",
    (
        _jq("path", "path", "jq path to write.", required=True),
        _f("value", "value", STR, "The value to write, JSON-encoded.", required=True),
    ),
)

_SUSPEND = Shape(
    t.SuspendDefinition,
    "Actions that suspend and resume the workload, applied in order.",
    (
        _f(
            "suspendActions",
            "suspend_actions",
            ListOf(t.Action),
            "Actions that suspend.",
            required=True,
            min_items=1,
        ),
        _f(
            "resumeActions",
            "resume_actions",
            ListOf(t.Action),
            "Actions that resume.",
            required=True,
            min_items=1,
        ),
    ),
)

_COMPONENT = Shape(
    t.Component,
    "A component of the workload; without a kind it is a logical grouping.",
    (
        _f(
            "name",
            "name",
            STR,
            "Component name, unique in the definition.",
            required=True,
            load_default="",
        ),
        _f("kind", "kind", t.GVK, "The Kubernetes kind of this component's objects."),
        _f("ownerRef", "owner_ref", STR, "Name of the parent component (children only)."),
        _f("specDefinition", "spec_definition", t.SpecDefinition, "Where the pods are described."),
        _f("scaleDefinition", "scale_definition", t.ScaleDefinition, "Where the replicas are."),
        _f(
            "statusDefinition",
            "status_definition",
            t.StatusDefinition,
            "How status is derived; meant for the root component.",
        ),
        _f(
            "suspendDefinition",
            "suspend_definition",
            t.SuspendDefinition,
            "How to suspend and resume.",
        ),
        _jq("instanceIdPath", "instance_id_path", "jq path enumerating the instance ids."),
        _f("podSelector", "pod_selector", t.PodSelector, "How pods are attributed."),
    ),
)

_KINDS_DOC = (
    "The kinds the reference may name (a consumer watches and is granted read on these); "
    "the first is the default."
)
_REFERENCE_LOOKUP = Shape(
    t.ReferenceLookup,
    "One object, read by name.",
    (
        _f("kinds", "kinds", ListOf(t.GVK, "atomic"), _KINDS_DOC, required=True, min_items=1),
        _jq(
            "kindPath",
            "kind_path",
            "jq path on the workload to the kind to read, one of kinds (null: the first).",
        ),
        _jq(
            "namePath", "name_path", "jq path on the workload to the object's name.", required=True
        ),
        _jq(
            "namespacePath",
            "namespace_path",
            "jq path on the workload to the object's namespace (default: the workload's).",
        ),
        _f(
            "clusterScoped",
            "cluster_scoped",
            BOOL,
            "The kind is cluster-scoped (default: as the API server or the object says).",
        ),
    ),
)

_REFERENCE_LIST = Shape(
    t.ReferenceList,
    "Every object of a kind whose labels match.",
    (
        _f("kinds", "kinds", ListOf(t.GVK, "atomic"), _KINDS_DOC, required=True, min_items=1),
        _jq(
            "kindPath",
            "kind_path",
            "jq path on the workload to the kind to list, one of kinds (null: the first).",
        ),
        _jq(
            "namespacePath",
            "namespace_path",
            "jq path on the workload to the namespace to list (default: the workload's).",
        ),
        _f(
            "clusterScoped",
            "cluster_scoped",
            BOOL,
            "List across the cluster (the kind is cluster-scoped).",
        ),
        _f("matchLabels", "match_labels", STRMAP, "Labels every listed object carries."),
        _jq(
            "matchLabelsPath",
            "match_labels_path",
            "jq path on the workload to a map of labels every listed object carries.",
        ),
    ),
)

_REFERENCE = Shape(
    t.Reference,
    "Another object the definition reads, bound as the jq variable $<name> in the workload's "
    "paths (never in pod-selector paths).",
    (
        _f("name", "name", STR, "The variable name (without $).", required=True, min_length=1),
        _f("lookup", "lookup", t.ReferenceLookup, "Read one object by name."),
        _f("list", "list", t.ReferenceList, "List objects by label selector."),
        _f(
            "optional",
            "optional",
            BOOL,
            "A missing object is expected (no finding); $<name> is then null (or []).",
        ),
        _f(
            "allowConfigMap",
            "allow_config_map",
            BOOL,
            "Allow the reference to read a ConfigMap (Secrets are never readable).",
        ),
    ),
    cel=(
        (
            "has(self.lookup) != has(self.list)",
            "exactly one of lookup or list must be set",
        ),
    ),
)

_STRUCTURE = Shape(
    t.StructureDefinition,
    "The component tree of the workload.",
    (
        _f(
            "rootComponent",
            "root_component",
            t.Component,
            "The workload object itself.",
            required=True,
        ),
        _f(
            "childComponents",
            "child_components",
            ListOf(t.Component, "map", ("name",)),
            "Components below the root.",
        ),
        _f(
            "additionalChildKinds",
            "additional_child_kinds",
            ListOf(t.GVK, "map", ("kind",)),
            "Other kinds the workload creates.",
        ),
        _f(
            "references",
            "references",
            ListOf(t.Reference, "map", ("name",)),
            "Other objects the definition reads, each bound as $<name> (a workload-map "
            "extension; consumers that do not know it ignore the field).",
        ),
    ),
)

_TOPOLOGY = Shape(
    t.Topology,
    "Topology-aware placement for a pod group.",
    (
        _f("topologyName", "topology_name", STR, "Topology name.", required=True),
        _f(
            "preferredTopologyLevel",
            "preferred_topology_level",
            STR,
            "Preferred level.",
            required=True,
        ),
        _f(
            "requiredTopologyLevel",
            "required_topology_level",
            STR,
            "Required level.",
            required=True,
        ),
    ),
)

_SUBGROUP = Shape(
    t.SubGroup,
    "A subgroup formed by one component's subtree.",
    (
        _f("componentName", "component_name", STR, "The component.", required=True),
        _f("topology", "topology", t.Topology, "Topology of the subgroup."),
    ),
)

_POD_GROUP = Shape(
    t.PodGroupMapping,
    "One pod group for the workload, optionally split into subgroups.",
    (
        _f("name", "name", STR, "Pod group key.", required=True),
        _f("topology", "topology", t.Topology, "Topology of the group."),
        _f(
            "subGroups",
            "sub_groups",
            ListOf(t.SubGroup, "map", ("componentName",)),
            "Subgroups, one per component.",
        ),
    ),
)

_MEMBER = Shape(
    t.Member,
    "A component whose pods join the group.",
    (
        _f("componentName", "component_name", STR, "The component.", required=True),
        _f(
            "groupByKeyPaths",
            "group_by_key_paths",
            ListOf(STR, "set"),
            "jq paths on the pod whose values split the group.",
            jq=True,
        ),
        _f(
            "filters",
            "filters",
            ListOf(STR, "set"),
            "jq predicates on the pod, all required.",
            jq=True,
        ),
    ),
)

_POD_GROUPS = Shape(
    t.PodGroupDefinition,
    "A pod group (deprecated alpha form).",
    (
        _f("name", "name", STR, "Group name.", required=True),
        _f(
            "members",
            "members",
            ListOf(t.Member, "map", ("componentName",)),
            "Group members.",
            required=True,
        ),
    ),
)

_GANG = Shape(
    t.GangScheduling,
    "Gang scheduling instructions.",
    (
        _f("podGroup", "pod_group", t.PodGroupMapping, "The pod group (current form)."),
        _f(
            "podGroups",
            "pod_groups",
            ListOf(t.PodGroupDefinition, "map", ("name",)),
            "Pod groups (deprecated form).",
        ),
    ),
)

_INSTRUCTIONS = Shape(
    t.OptimizationInstructions,
    "Instructions for schedulers and optimisers.",
    (_f("gangScheduling", "gang_scheduling", t.GangScheduling, "Gang scheduling."),),
)

_SPEC_TOP = Shape(
    t.KartaSpec,
    "The definition of a workload type.",
    (
        _f(
            "structureDefinition",
            "structure_definition",
            t.StructureDefinition,
            "The component tree.",
            required=True,
        ),
        _f(
            "optimizationInstructions",
            "optimization_instructions",
            t.OptimizationInstructions,
            "Scheduling instructions.",
        ),
    ),
)

_CONDITION = Shape(
    t.KartaCondition,
    "A standard Kubernetes condition.",
    (
        _f("type", "type", STR, "Condition type.", required=True),
        _f(
            "status",
            "status",
            STR,
            "True, False or Unknown.",
            required=True,
            enum=("True", "False", "Unknown"),
        ),
        _f(
            "observedGeneration",
            "observed_generation",
            INT,
            "The generation the condition was set for.",
        ),
        _f(
            "lastTransitionTime",
            "last_transition_time",
            STR,
            "When the status last changed.",
            required=True,
        ),
        _f("reason", "reason", STR, "Machine-readable reason.", required=True),
        _f("message", "message", STR, "Human-readable message.", required=True),
    ),
)

_KARTA_STATUS = Shape(
    t.KartaStatus,
    "Observed state of the definition.",
    (
        _f(
            "conditions",
            "conditions",
            ListOf(t.KartaCondition, "map", ("type",)),
            "Validated, CRDExists and Ready.",
        ),
    ),
)

#: Fields the loader treats as optional although the CRD requires them (an API server fills or
#: enforces them; a hand-written definition or a Go-built one may omit them).
LENIENT_REQUIRED: frozenset[tuple[type, str]] = frozenset(
    {
        (t.KartaCondition, "lastTransitionTime"),
        (t.KartaCondition, "reason"),
        (t.KartaCondition, "message"),
        (t.Topology, "topologyName"),
        (t.Topology, "preferredTopologyLevel"),
        (t.Topology, "requiredTopologyLevel"),
    }
)

SHAPES: dict[type, Shape] = {
    s.cls: s
    for s in (
        _GVK,
        _FRAGMENTED,
        _SPEC,
        _SCALE,
        _TYPE_SELECTOR,
        _INSTANCE_SELECTOR,
        _REPLICA_SELECTOR,
        _POD_SELECTOR,
        _PHASE,
        _CONDITIONS,
        _CONDITION_MATCHER,
        _EXPRESSION_MATCHER,
        _MATCHER,
        _MAPPINGS,
        _STATUS,
        _ACTION,
        _SUSPEND,
        _COMPONENT,
        _STRUCTURE,
        _REFERENCE_LOOKUP,
        _REFERENCE_LIST,
        _REFERENCE,
        _TOPOLOGY,
        _SUBGROUP,
        _POD_GROUP,
        _MEMBER,
        _POD_GROUPS,
        _GANG,
        _INSTRUCTIONS,
        _SPEC_TOP,
        _CONDITION,
        _KARTA_STATUS,
    )
}


def jq_field_keys(cls: type) -> tuple[str, ...]:
    """The JSON keys of ``cls`` that hold jq expressions."""
    return tuple(f.key for f in SHAPES[cls].fields if f.jq)


#: Objects whose jq fields are evaluated against a Pod rather than the workload object.
POD_EVALUATED: frozenset[type] = frozenset(
    {t.ComponentTypeSelector, t.ComponentInstanceSelector, t.ReplicaSelector, t.Member}
)


class JqField(View):
    """One jq expression of a definition, where it is, and what it runs against."""

    path: str
    expression: str
    component: str | None
    target: Literal["workload", "pod"]
    key: str


def iter_jq_fields(karta: t.Karta) -> Iterator[JqField]:
    """Every non-empty jq expression of ``karta`` in document order."""
    yield from _walk(karta.spec, "spec", None)


def _walk(obj: Any, path: str, component: str | None) -> Iterator[JqField]:
    shape = SHAPES.get(type(obj))
    if shape is None:
        return
    if isinstance(obj, t.Component):
        component = obj.name
    target: Literal["workload", "pod"] = "pod" if shape.cls in POD_EVALUATED else "workload"
    for f in shape.fields:
        value = getattr(obj, f.attr)
        if value is None:
            continue
        fpath = f"{path}.{f.key}"
        if f.jq:
            items = (
                [(fpath, value)]
                if isinstance(value, str)
                else [(f"{fpath}[{i}]", v) for i, v in enumerate(value)]
            )
            for ipath, expr in items:
                if expr:
                    yield JqField(ipath, expr, component, target, f.key)
        elif isinstance(f.type, ListOf):
            for i, item in enumerate(value):
                yield from _walk(item, f"{fpath}[{i}]", component)
        elif isinstance(f.type, type):
            yield from _walk(value, fpath, component)
