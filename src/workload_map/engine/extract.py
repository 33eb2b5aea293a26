"""Reading a component's instances out of a workload object through its definition.

Each result of a path is one instance (arrays and maps alike: gojq yields map values in sorted
key order, which keeps ``instanceIdPath`` and the other paths aligned). A component without
``instanceIdPath`` has the single unnamed instance ``""``. Every ``Get*`` result is keyed by
instance id; a path yielding a different number of results than there are ids is an error,
as in the reference.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from workload_map import jq
from workload_map.engine.errors import DefinitionNotFoundError, EngineError, ExtractionError
from workload_map.engine.runner import Evaluations, Expression, lookup
from workload_map.engine.structure import Structure
from workload_map.jq import ast as jq_ast
from workload_map.model import Component, FragmentedPodSpecDefinition
from workload_map.model.views import View, json_type

__all__ = [
    "FRAGMENT_FIELDS",
    "NO_SCALE",
    "ExtractedInstance",
    "Extractor",
    "Scale",
    "implied_replicas",
    "iterated_reader",
]

#: (JSON field, definition attribute) of the fragmented pod spec, in the reference's order.
FRAGMENT_FIELDS: tuple[tuple[str, str], ...] = (
    ("schedulerName", "scheduler_name_path"),
    ("labels", "labels_path"),
    ("annotations", "annotations_path"),
    ("resources", "resources_path"),
    ("resourceClaims", "resource_claims_path"),
    ("podAffinity", "pod_affinity_path"),
    ("nodeAffinity", "node_affinity_path"),
    ("containers", "containers_path"),
    ("container", "container_path"),
    ("priorityClassName", "priority_class_name_path"),
    ("image", "image_path"),
)
_FRAGMENT_TYPES: dict[str, type] = {
    "schedulerName": str,
    "labels": dict,
    "annotations": dict,
    "resources": dict,
    "resourceClaims": list,
    "podAffinity": dict,
    "nodeAffinity": dict,
    "containers": list,
    "container": dict,
    "priorityClassName": str,
    "image": str,
}


class Scale(View):
    """Replica counts of one instance; None where the definition or the object has none.

    Three contracts read these counts, each by its own method: :meth:`desired_pods` (what the
    project's describe counts), :meth:`gang_minimum` (the project's gang minimum) and
    :meth:`reference_minimum` (the reference's per-instance minimum, for KAI's subtree scale).
    An instance without a scale is :data:`NO_SCALE`.
    """

    replicas: int | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None

    def to_dict(self) -> dict[str, int | None]:
        return {
            "replicas": self.replicas,
            "minReplicas": self.min_replicas,
            "maxReplicas": self.max_replicas,
        }

    def desired_pods(self) -> int:
        """The project's describe contract: replicas, else minReplicas, else 1."""
        if self.replicas is not None:
            return max(self.replicas, 0)
        if self.min_replicas is not None:
            return max(self.min_replicas, 0)
        return 1

    def gang_minimum(self) -> int:
        """The project's gang contract: minReplicas if > 0, else replicas, else 1."""
        if self.min_replicas is not None and self.min_replicas > 0:
            return self.min_replicas
        if self.replicas is not None:
            return max(self.replicas, 0)
        return 1

    def reference_minimum(self) -> int:
        """The reference's minimum: minReplicas if > 0, else replicas if > 0, else 0."""
        if self.min_replicas is not None and self.min_replicas > 0:
            return self.min_replicas
        if self.replicas is not None and self.replicas > 0:
            return self.replicas
        return 0


#: the scale of an instance whose definition or object gives none
NO_SCALE = Scale()


class ExtractedInstance(msgspec.Struct):
    """The parts of one instance that the definition describes (None where it has none).

    A msgspec Struct rather than a dataclass (the same fields, order, defaults, equality, repr
    and mutability): ``@dataclass`` generates and compiles its methods at every import of the
    engine (~2M instructions, callgrind)."""

    instance_id: str
    pod_template_spec: dict[str, Any] | None = None
    pod_spec: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    fragmented_pod_spec: dict[str, Any] | None = None
    scale: Scale | None = None
    extra: dict[str, Any] = msgspec.field(default_factory=dict)
    #: whether the object describes this instance's pods (a template, pod spec or fragment that
    #: is not null): an instance the object leaves out (a Milvus ``standalone`` in cluster mode,
    #: a PyTorchJob without ``Worker``) implies no pods, though the definition names it.
    describes_pods: bool = False

    def desired_pods(self) -> int:
        """Pods the instance implies for this object: 0 when the object does not describe them."""
        return (self.scale or NO_SCALE).desired_pods() if self.describes_pods else 0

    def pod_spec_view(self) -> dict[str, Any] | None:
        """The PodSpec this instance's pods get (template spec or pod spec)."""
        if self.pod_template_spec is not None:
            spec = self.pod_template_spec.get("spec")
            return spec if isinstance(spec, dict) else {}
        return self.pod_spec

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.pod_template_spec is not None:
            out["podTemplateSpec"] = self.pod_template_spec
        if self.pod_spec is not None:
            out["podSpec"] = self.pod_spec
        if self.metadata is not None:
            out["metadata"] = self.metadata
        if self.fragmented_pod_spec is not None:
            out["fragmentedPodSpec"] = self.fragmented_pod_spec
        if self.scale is not None:
            out["scale"] = self.scale.to_dict()
        return out


def _to_int(value: Any, what: str, index: int) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise ExtractionError(
            f"failed to convert object at index {index} to type int32: {what} is a boolean"
        )
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            raise ExtractionError(
                f"failed to convert object at index {index} to type int32: "
                f"{what} value {value} is not an integer"
            )
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            return int(text, 10)
        except ValueError:
            shown = value if len(value) <= 40 else value[:40] + "…"
            raise ExtractionError(
                f'{what} value "{shown}" at index {index} is not a number'
            ) from None
    raise ExtractionError(
        f"failed to convert object at index {index} to type int32: {what} is {type(value).__name__}"
    )


class Extractor:
    """Extraction of every component of one object (results cached per component)."""

    def __init__(self, structure: Structure, obj: Any, bindings: Mapping[str, Any] | None = None):
        self.structure = structure
        self.obj = obj
        self._ids: dict[str, list[str]] = {}
        self._instances: dict[str, dict[str, ExtractedInstance]] = {}
        self._scales: dict[str, dict[str, Scale] | None] = {}
        #: every expression evaluation of this workload (object and pods), memoised, with the
        #: workload's resolved references bound as ``$name``
        self.run = Evaluations(bindings)
        #: what was read but is invalid (a negative replica count), reported by ``describe``
        self.problems: list[str] = []
        self._id_sets: dict[str, frozenset[str]] = {}

    # -- helpers ---------------------------------------------------------------------------
    def _component(self, name: str) -> Component:
        comp = self.structure.components.get(name)
        if comp is None:
            raise ExtractionError(f"component {name} not found")
        return comp

    def _eval(self, component: Component, field_name: str, expr: str) -> list[Any]:
        expression = self.structure.expressions.get(expr)
        if not expression.direct and expression.timed_out is None:
            key = ("iterated reader", expr)
            memo = self.structure.memo
            reader: IteratedReader | None = (
                memo[key] if key in memo else memo.setdefault(key, iterated_reader(expression))
            )
            if reader is not None:
                found = reader(self.obj)
                if found is not None:
                    return found
        try:
            return self.run(expression, self.obj)
        except ExtractionError as err:
            raise ExtractionError(f"component '{component.name}' {field_name}: {err}") from err

    def _align(self, component: Component, field_name: str, values: list[Any]) -> dict[str, Any]:
        ids = self.instance_ids(component.name)
        if len(ids) != len(values):
            raise ExtractionError(
                f"component '{component.name}' {field_name}: instance ids count ({len(ids)}) "
                f"does not match results count ({len(values)})"
            )
        return dict(zip(ids, values, strict=True))

    def _objects(
        self, component: Component, field_name: str, expr: str
    ) -> list[dict[str, Any] | None]:
        """The results as objects; ``null`` stays None (the reference's zero value is ``{}``)."""
        out: list[dict[str, Any] | None] = []
        for index, value in enumerate(self._eval(component, field_name, expr)):
            if value is None or isinstance(value, dict):
                out.append(value)
            else:
                raise ExtractionError(
                    f"component '{component.name}' {field_name}: failed to convert object at "
                    f"index {index}: expected an object, got {type(value).__name__}"
                )
        return out

    # -- instance ids ----------------------------------------------------------------------
    def instance_ids(self, name: str) -> list[str]:
        """The component's instance ids; ``[""]`` without ``instanceIdPath``."""
        found = self._ids.get(name)
        if found is not None:
            return found
        comp = self._component(name)
        if not comp.instance_id_path:
            ids = [""]
        else:
            values = self._eval(comp, "instanceIdPath", comp.instance_id_path)
            ids = []
            for index, value in enumerate(values):
                if not isinstance(value, str):
                    raise ExtractionError(
                        f"component '{name}' instanceIdPath: failed to convert object at index "
                        f"{index} to type string: got {json_type(value)}"
                    )
                ids.append(value)
            if any(v == "" for v in ids):
                raise ExtractionError(
                    f"component '{name}' instanceIdPath: instance id path contained empty "
                    f"string values [{','.join(ids)}]"
                )
        self._ids[name] = ids
        return ids

    def instance_id_set(self, name: str) -> frozenset[str]:
        """The instance ids as a set (membership checks per pod)."""
        found = self._id_sets.get(name)
        if found is None:
            found = self._id_sets[name] = frozenset(self.instance_ids(name))
        return found

    # -- parts -----------------------------------------------------------------------------
    def _part(
        self, name: str, attr: str, field_name: str, *, lenient: bool = False
    ) -> dict[str, dict[str, Any] | None] | None:
        """One pod-spec part per instance (None: not defined); ``null`` results stay None.

        ``lenient``: a single-instance component whose path yields nothing has no such part
        (the reference's getters call that a count mismatch).
        """
        comp = self._component(name)
        path = getattr(comp.spec_definition, attr) if comp.spec_definition else None
        if not path:
            return None
        values = self._objects(comp, field_name, path)
        if lenient and not values and self.instance_ids(name) == [""]:
            return {}
        return self._align(comp, field_name, values)

    @staticmethod
    def _zero(values: dict[str, dict[str, Any] | None] | None) -> dict[str, dict[str, Any]] | None:
        if values is None:
            return None
        return {k: {} if v is None else v for k, v in values.items()}

    def pod_template_specs(self, name: str) -> dict[str, dict[str, Any]] | None:
        return self._zero(self._part(name, "pod_template_spec_path", "podTemplateSpecPath"))

    def pod_specs(self, name: str) -> dict[str, dict[str, Any]] | None:
        return self._zero(self._part(name, "pod_spec_path", "podSpecPath"))

    def pod_metadata(self, name: str) -> dict[str, dict[str, Any]] | None:
        return self._zero(self._part(name, "metadata_path", "metadataPath"))

    def fragmented_pod_specs(self, name: str) -> dict[str, dict[str, Any]] | None:
        return self._fragments(name)

    def _fragments(self, name: str, *, lenient: bool = False) -> dict[str, dict[str, Any]] | None:
        comp = self._component(name)
        frag = comp.spec_definition.fragmented_pod_spec_definition if comp.spec_definition else None
        if frag is None:
            return None
        columns = self._fragment_columns(comp, frag)
        count = max((len(v) for v in columns.values()), default=0)
        rows: list[dict[str, Any]] = []
        for index in range(count):
            row: dict[str, Any] = {}
            for key, values in columns.items():
                value = values[index] if index < len(values) else None
                if value is not None:
                    row[key] = value
            rows.append(row)
        if lenient and not rows and self.instance_ids(name) == [""]:
            return {}
        return self._align(comp, "fragmentedPodSpecDefinition", rows)

    def _fragment_columns(
        self, comp: Component, frag: FragmentedPodSpecDefinition
    ) -> dict[str, list[Any]]:
        columns: dict[str, list[Any]] = {}
        for key, attr in FRAGMENT_FIELDS:
            path = getattr(frag, attr)
            if not path:
                continue
            values = self._eval(comp, attr, path)
            expected = _FRAGMENT_TYPES[key]
            for index, value in enumerate(values):
                if value is not None and not isinstance(value, expected):
                    raise ExtractionError(
                        f"component '{comp.name}' {attr}: failed to convert object at index "
                        f"{index} to type {expected.__name__}: got {json_type(value)}"
                    )
            columns[key] = values
        return columns

    def scales(self, name: str) -> dict[str, Scale] | None:
        if name in self._scales:
            return self._scales[name]
        found = self._scales[name] = self._read_scales(name)
        return found

    def _read_scales(self, name: str) -> dict[str, Scale] | None:
        comp = self._component(name)
        sd = comp.scale_definition
        if sd is None or not (sd.replicas_path or sd.min_replicas_path or sd.max_replicas_path):
            return None
        # plain loops, not comprehensions or helpers (each a call): this runs per workload
        columns: list[list[int | None]] = []
        count = 0
        for what, field_name, path in (
            ("replicas", "replicasPath", sd.replicas_path),
            ("minReplicas", "minReplicasPath", sd.min_replicas_path),
            ("maxReplicas", "maxReplicasPath", sd.max_replicas_path),
        ):
            column: list[int | None] = []
            if path:
                index = 0
                for value in self._eval(comp, field_name, path):
                    # an int (not a bool) or null is what _to_int gives for it
                    column.append(
                        value
                        if value is None or type(value) is int
                        else _to_int(value, what, index)
                    )
                    index += 1
                count = max(count, index)
            columns.append(column)
        replicas, least, most = columns
        rows = []
        for i in range(count):
            rows.append(
                Scale(
                    replicas[i] if i < len(replicas) else None,
                    least[i] if i < len(least) else None,
                    most[i] if i < len(most) else None,
                )
            )
        return self._align(comp, "scaleDefinition", rows)

    def instances(self, name: str) -> dict[str, ExtractedInstance]:
        """Every instance with the parts that exist (reference ``GetExtractedInstances``).

        ``describes_pods`` tells whether the object describes the instance's pods: its
        template or pod spec is not null, or (fragmented) some fragment is set or its scale is
        given. A single-instance component whose spec path yields nothing is left without
        that part instead of failing.
        """
        found = self._instances.get(name)
        if found is not None:
            return found
        ids = self.instance_ids(name)
        out: dict[str, ExtractedInstance] = {}
        for i in ids:  # a loop, not a comprehension (a call): this runs per workload
            out[i] = ExtractedInstance(instance_id=i)
        spec = self._component(name).spec_definition
        spec_given: dict[str, bool] = {}
        for attr, path_attr, field_name in (
            ("pod_template_spec", "pod_template_spec_path", "podTemplateSpecPath"),
            ("pod_spec", "pod_spec_path", "podSpecPath"),
            ("metadata", "metadata_path", "metadataPath"),
        ):
            # a part the definition does not describe is none (what _part says), without the call
            values = (
                self._part(name, path_attr, field_name, lenient=True)
                if spec is not None and getattr(spec, path_attr)
                else None
            )
            if values is None:
                continue
            for key, value in values.items():
                setattr(out[key], attr, {} if value is None else value)
                if attr != "metadata":
                    spec_given[key] = value is not None
        fragments = (
            self._fragments(name, lenient=True)
            if spec is not None and spec.fragmented_pod_spec_definition is not None
            else None
        )
        if fragments is not None:
            for key, row in fragments.items():
                out[key].fragmented_pod_spec = row
                spec_given[key] = any(_is_set(v) for v in row.values())
        scales = self.scales(name)
        if scales is not None:
            for key, scale in scales.items():
                out[key].scale = self._valid_scale(name, key, scale)
        root = self._fragment_root(name) if fragments is not None else None
        for key, inst in out.items():
            given = spec_given.get(key, False)
            if not given and fragments is not None:
                if root is not None:  # the object holds the component: its fragments may be unset
                    given = lookup(self.obj, root) is not None
                elif inst.scale is not None:
                    scale = inst.scale
                    given = (scale.replicas, scale.min_replicas, scale.max_replicas) != (None,) * 3
            inst.describes_pods = given
        self._instances[name] = out
        return out

    def _valid_scale(self, name: str, instance_id: str, scale: Scale) -> Scale:
        """The scale, or all zeros when a count is negative (reported in ``problems``).

        A negative count is invalid (the API server refuses ``parallelism: -3``); the instance
        then counts 0 everywhere — desired pods, its minimum and its gang share — rather than
        0 desired pods but a minimum of 1.
        """
        replicas, least, most = scale.replicas, scale.min_replicas, scale.max_replicas
        if (
            (replicas is None or replicas >= 0)
            and (least is None or least >= 0)
            and (most is None or most >= 0)
        ):
            return scale  # nearly always, found without the report's dict (per instance)
        values = {"replicas": replicas, "minReplicas": least, "maxReplicas": most}
        negative = [f"{k} {v}" for k, v in values.items() if v is not None and v < 0]
        if not negative:
            return scale
        where = f" instance {instance_id!r}" if instance_id else ""
        self.problems.append(
            f"component '{name}'{where} scaleDefinition: {', '.join(negative)} is negative, "
            "not a number of pods; the instance counts 0 pods (an operator may use it to hand "
            "scaling to an autoscaler)"
        )
        return Scale(*(None if v is None else 0 for v in values.values()))

    def _fragment_root(self, name: str) -> tuple[str | int, ...] | None:
        """Where a single-instance fragmented component lives in the object, when its paths say.

        The deepest location shared by every fragment path (``.spec.components.proxy`` for
        ``.spec.components.proxy.resources`` and ``….podLabels``); None when a path is not a
        plain field path, the component has instances, or the paths share nothing.
        """
        if name in self.structure.fragment_roots:
            return self.structure.fragment_roots[name]
        comp = self._component(name)
        frag = comp.spec_definition.fragmented_pod_spec_definition if comp.spec_definition else None
        root: tuple[str | int, ...] | None = None
        if frag is not None and not comp.instance_id_path:
            parents: list[tuple[str | int, ...]] = []
            for _, attr in FRAGMENT_FIELDS:
                path = getattr(frag, attr)
                if not path:
                    continue
                steps = self.structure.expressions.get(path).path
                if not steps:
                    parents = []
                    break
                parents.append(steps[:-1])
            if parents:
                common: list[str | int] = []
                for step in zip(*parents, strict=False):
                    if any(s != step[0] for s in step):
                        break
                    common.append(step[0])
                root = tuple(common) or None
        self.structure.fragment_roots[name] = root
        return root

    def require(self, name: str, what: str) -> None:
        """Raise the reference's DefinitionNotFoundError when a part is not defined."""
        comp = self._component(name)
        spec = comp.spec_definition
        missing = {
            "spec": spec is None,
            "pod template spec": spec is None or not spec.pod_template_spec_path,
            "pod spec": spec is None or not spec.pod_spec_path,
            "pod metadata": spec is None or not spec.metadata_path,
            "fragmented pod spec": spec is None or spec.fragmented_pod_spec_definition is None,
            "scale": comp.scale_definition is None,
            "status": comp.status_definition is None,
        }[what]
        if missing:
            raise DefinitionNotFoundError(f"component {name} does not have {what} definition")


def implied_replicas(extractor: Extractor, name: str) -> int | None:
    """How many replicas of a grouping component the spec implies, when it says.

    A component without a pod template of its own whose scale is the pods of one replica (a
    LeaderWorkerSet ``group`` of ``size``) has as many replicas as the pods under it divide
    by that size (instances the object leaves out, such as an LWS leader template, still take
    their share). None when the component is not such a group or the numbers do not divide.
    """
    structure = extractor.structure
    if structure.has_pod_definition(name) or not structure.children.get(name):
        return None
    try:
        scales = extractor.scales(name)
    except EngineError:
        return None
    if not scales or len(scales) != 1:
        return None
    own = next(iter(scales.values())).desired_pods()
    total = 0
    for child in structure.subtree(name):
        if child == name or not structure.has_pod_definition(child):
            continue
        try:
            instances = extractor.instances(child)
        except EngineError:
            return None
        total += sum((i.scale or NO_SCALE).desired_pods() for i in instances.values())
    if own <= 0 or total % own or total // own == 0:
        return None
    return total // own


def _is_set(value: Any) -> bool:
    """A fragment value the reference would write back ("" / {} / [] / null are unset)."""
    return value is not None and value != "" and value != {} and value != []


#: reads an iterated path off an object: its outputs, or None where the jq engine must decide
IteratedReader = Callable[[Any], list[Any] | None]


def iterated_reader(expression: Expression) -> IteratedReader | None:
    """A direct reader of ``PREFIX[]?.REST`` or ``PREFIX[].REST`` (``PREFIX``, ``REST``: object
    keys; ``.spec.replicatedJobs[]?.name``): instance paths, read once per object and
    component, where the jq engine costs most of reading a workload's instances.

    The reader gives jq's outputs where the values have the expected types (objects along the
    prefix, an array to iterate — or null under ``?`` —, objects or null along the rest, fewer
    outputs than the result cap) and None for anything else, which the jq engine then decides
    (and fails on as it fails). None when the expression is not of that form.
    """
    if expression.variables or expression.direct:
        return None
    try:
        tree = jq.parse(expression.text)
    except jq.JqError:
        return None
    rest: list[str] = []
    node: Any = tree
    while isinstance(node, jq_ast.Index):
        key = _literal_key(node.key)
        if key is None:
            return None
        rest.append(key)
        node = node.target
    optional = isinstance(node, jq_ast.Optional)
    if optional:
        node = node.target
    if not isinstance(node, jq_ast.Iterate):
        return None
    prefix = jq.constant_path(node.target)
    if prefix is None or not all(type(step) is str for step in prefix):
        return None
    keys = tuple(str(step) for step in prefix)
    tail = tuple(reversed(rest))
    cap = jq.DEFAULT_LIMITS.max_results

    def read(obj: Any) -> list[Any] | None:
        value = obj
        for key in keys:
            if type(value) is dict:
                value = value.get(key)
            elif value is not None:
                return None  # jq indexes a non-object: its error
        if value is None:
            return [] if optional else None  # ``null[]`` fails, ``null[]?`` is empty
        if type(value) is not list or (cap is not None and len(value) >= cap):
            return None  # objects iterate in jq's key order; scalars fail; the cap fails
        out: list[Any] = []
        for item in value:
            for key in tail:
                if type(item) is dict:
                    item = item.get(key)
                elif item is not None:
                    return None
            out.append(item)
        return out

    return read


def _literal_key(node: Any) -> str | None:
    """The key of ``.name`` / ``."name"`` / ``["name"]``, else None."""
    if isinstance(node, jq_ast.Literal) and node.kind == "string" and type(node.value) is str:
        return node.value
    return None
