"""Which component, instance and replica each pod belongs to.

The rules are the reference's: with exactly one pod-describing component, every pod is its
(the single-leaf rule); otherwise the first such component, in definition order, whose
``componentTypeSelector`` matches (``keyPath`` present / equal to ``value``, every
``matchLabels`` label equal; both AND-ed). The instance comes from ``componentInstanceSelector``
(compared with the component's instance ids), the replica from the nearest
``replicaSelector`` on the component or an ancestor. Every decision is recorded so ``explain``
can show which expression gave which value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from workload_map.engine.errors import ExtractionError, InstanceNotFoundError
from workload_map.engine.extract import Extractor
from workload_map.engine.runner import Expression, Run, direct
from workload_map.engine.structure import Structure
from workload_map.jq import dumps as jq_dumps
from workload_map.model import ComponentTypeSelector

__all__ = [
    "ACTIVE",
    "FAILED",
    "SUCCEEDED",
    "TERMINATING",
    "Placement",
    "attribute",
    "attribute_all",
    "is_active",
    "is_ready",
    "matches_type",
    "pod_name",
    "pod_state",
    "single_result",
    "single_value",
    "type_matcher",
]

#: a pod's state as kubectl and the Job controller count it: only active pods are current
ACTIVE, TERMINATING, SUCCEEDED, FAILED = "Active", "Terminating", "Succeeded", "Failed"


def pod_state(pod: Mapping[str, Any]) -> str:
    """``Succeeded``/``Failed`` by phase, else ``Terminating`` with a deletionTimestamp, else ``Active``.

    A finished pod stays finished while it is being deleted (the Job controller counts it as
    succeeded or failed, not as terminating); anything unreadable is active.
    """
    status = pod.get("status")
    phase = status.get("phase") if type(status) is dict or isinstance(status, Mapping) else None
    if phase == "Succeeded":
        return SUCCEEDED
    if phase == "Failed":
        return FAILED
    meta = pod.get("metadata")
    if (type(meta) is dict or isinstance(meta, Mapping)) and meta.get("deletionTimestamp"):
        return TERMINATING
    return ACTIVE


def is_active(pod: Mapping[str, Any]) -> bool:
    """Counted as current: not Succeeded or Failed, not terminating."""
    return pod_state(pod) == ACTIVE


def _has_ready_condition(pod: Mapping[str, Any]) -> bool:
    status = pod.get("status")
    conds = status.get("conditions") if isinstance(status, Mapping) else None
    if not isinstance(conds, list):
        return False
    return any(
        isinstance(c, Mapping) and c.get("type") == "Ready" and c.get("status") == "True"
        for c in conds
    )


def is_ready(pod: Mapping[str, Any]) -> bool:
    """Counted as ready: active and its Ready condition is True."""
    return is_active(pod) and _has_ready_condition(pod)


@dataclass(slots=True)
class Placement:
    """Where one pod sits in the workload (component None: no component claims it)."""

    pod: str
    component: str | None = None
    instance: str | None = None
    replica: str | None = None
    replica_component: str | None = None
    reason: str | None = None
    trace: list[tuple[Any, ...]] = field(default_factory=list)
    #: ACTIVE, TERMINATING, SUCCEEDED or FAILED (see :func:`pod_state`)
    state: str = ACTIVE

    @property
    def steps(self) -> list[str]:
        """The decisions that placed the pod, as text (formatted on demand: this runs per pod)."""
        return [str(template).format(*args) for template, *args in self.trace]

    @property
    def attributed(self) -> bool:
        return self.component is not None and self.reason is None

    @property
    def active(self) -> bool:
        """Whether the pod counts as current (finished and terminating pods do not)."""
        return self.state == ACTIVE

    def to_dict(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "component": self.component,
            "instance": self.instance,
            "replica": self.replica,
            "replicaComponent": self.replica_component,
            "unattributedReason": self.reason,
            "state": self.state,
            "steps": list(self.steps),
        }


def pod_name(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata")
    if not isinstance(meta, dict):
        return ""
    return str(meta.get("name") or meta.get("generateName") or "")


def _go_string(value: Any) -> str:
    """A value as Go's ``%v`` prints it (numbers without a trailing ``.0``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    return jq_dumps(value, indent=None)


def single_value(structure: Structure, expr: str, pod: Any) -> str:
    """Exactly one non-empty result, stringified (group keys, instance ids, replica keys)."""
    return single_result(structure.expressions.get(expr), pod)


def single_result(expression: Expression, pod: Any, run: Run = direct) -> str:
    """:func:`single_value` with the expression already looked up (it runs per pod)."""
    values = expression.evaluate(pod) if expression.direct else run(expression, pod)
    if len(values) != 1:
        raise ExtractionError(f"expected single query result, got {len(values)}")
    value = values[0]
    if type(value) is str and value:
        return value
    if value is None or value == "":
        raise ExtractionError(f"query result is empty {'<nil>' if value is None else value}")
    return _go_string(value)


def matches_type(structure: Structure, selector: ComponentTypeSelector | None, pod: Any) -> bool:
    """The reference's ``MatchesComponentType`` (plus ``matchLabels``)."""
    if selector is None or (not selector.key_path and not selector.match_labels):
        return False
    if selector.key_path:
        values = structure.selectors.get(selector.key_path).evaluate(pod)
        if selector.value is None:
            if not any(v is not None for v in values):
                return False
        elif not any(isinstance(v, str) and v == selector.value for v in values):
            return False
    if selector.match_labels:
        meta = pod.get("metadata") if isinstance(pod, dict) else None
        labels = meta.get("labels") if isinstance(meta, dict) else None
        if not isinstance(labels, dict):
            return False
        for key, value in selector.match_labels.items():
            if labels.get(key) != value:
                return False
    return True


def type_matcher(
    structure: Structure, selector: ComponentTypeSelector
) -> Callable[[Any, Run], bool]:
    """:func:`matches_type` for one selector, its expression looked up once."""
    if not selector.key_path and not selector.match_labels:
        return lambda pod, run: False
    key = structure.selectors.get(selector.key_path) if selector.key_path else None
    walk = key.evaluate if key is not None and key.direct else None
    expected = selector.value
    labels = tuple(selector.match_labels.items()) if selector.match_labels else ()

    def match(pod: Any, run: Run) -> bool:
        if key is not None:
            # a constant path is walked directly: what any ``run`` does with it (runner.py)
            values = walk(pod) if walk is not None else run(key, pod)
            if expected is None:
                for v in values:  # present: some value is not null (a loop, not all(): per pod)
                    if v is not None:
                        break
                else:
                    return False
            elif expected not in values:  # a str equals only a str
                return False
        if labels:
            meta = pod.get("metadata") if isinstance(pod, dict) else None
            pod_labels = meta.get("labels") if isinstance(meta, dict) else None
            if not isinstance(pod_labels, dict):
                return False
            for name, value in labels:
                if pod_labels.get(name) != value:
                    return False
        return True

    return match


def _selector_text(selector: ComponentTypeSelector) -> str:
    parts = []
    if selector.key_path:
        parts.append(
            f"{selector.key_path} == {selector.value!r}"
            if selector.value is not None
            else f"{selector.key_path} is present"
        )
    if selector.match_labels:
        parts.append(f"matchLabels {dict(selector.match_labels)}")
    return " and ".join(parts)


class _Plan:
    """What attributing a pod needs from one definition, looked up once (it runs per pod)."""

    def __init__(self, structure: Structure):
        self.leaves = structure.pod_bearing
        # (component, its trace step, matcher) of the leaves that can claim pods (the step is
        # one shared tuple: it is recorded per pod); the rest cannot
        self.claimers: list[tuple[str, tuple[str, ...], Callable[[Any, Run], bool]]] = []
        self.unselectable: list[str] = []
        self.only: tuple[str, ...] | None = (
            (_ONLY, self.leaves[0]) if len(self.leaves) == 1 else None
        )
        for name in self.leaves:
            comp = structure.components[name]
            selector = comp.pod_selector.component_type_selector if comp.pod_selector else None
            if selector is None or (not selector.key_path and not selector.match_labels):
                self.unselectable.append(name)
            else:
                step = ("component {}: {}", name, _selector_text(selector))
                self.claimers.append((name, step, type_matcher(structure, selector)))
        self.instance: dict[str, tuple[str, Expression] | None] = {}
        self.replica: dict[str, tuple[str, str, Expression] | None] = {}
        for name, comp in structure.components.items():
            ids = comp.pod_selector.component_instance_selector if comp.pod_selector else None
            self.instance[name] = (
                (ids.id_path, structure.selectors.get(ids.id_path))
                if ids is not None and ids.id_path
                else None
            )
            self.replica[name] = None
            for owner_name in [name, *structure.ancestors(name)]:
                owner = structure.components[owner_name]
                replica = owner.pod_selector.replica_selector if owner.pod_selector else None
                if replica is not None and replica.key_path:
                    expression = structure.selectors.get(replica.key_path)
                    self.replica[name] = (owner_name, replica.key_path, expression)
                    break

    def component(self, pod: Any, placement: Placement, run: Run = direct) -> str | None:
        if self.only is not None:
            placement.trace.append(self.only)
            return self.only[1]
        if not self.leaves:
            placement.reason = "the definition has no component that describes pods"
            return None
        for name, step, match in self.claimers:
            if match(pod, run):
                placement.trace.append(step)
                return name
        reason = "no component's componentTypeSelector matches"
        if self.unselectable:
            reason += (
                f"; {', '.join(self.unselectable)} cannot claim pods: several components "
                "describe pods and these have no componentTypeSelector"
            )
        placement.reason = reason
        return None

    def _ids(self, extractor: Extractor, component: str) -> tuple[list[str], frozenset[str]] | str:
        """The component's instance ids (a list and a set), or why there are none."""
        try:
            ids = extractor.instance_ids(component)
        except ExtractionError as err:
            return str(err)
        if not ids:
            return f"component {component} has no instances in the object"
        return ids, extractor.instance_id_set(component)

    def place_all(
        self, extractor: Extractor, pods: Iterable[Mapping[str, Any]], run: Run
    ) -> list[Placement]:
        """The placements of pods of one object (errors become a placement's ``reason``).

        ``run`` evaluates the pods' expressions: the workload's memo (the pods of a view are
        asked again by gangs), or :func:`direct` for one-off questions. What is the same for
        every pod of a component (its instance ids, its selectors) is looked up once.
        """
        out: list[Placement] = []
        ids_of: dict[str, tuple[list[str], frozenset[str]] | str] = {}
        only = self.only
        for pod in pods:
            meta = pod.get("metadata")
            name = ""
            if type(meta) is dict:
                name = meta.get("name") or meta.get("generateName") or ""
                if type(name) is not str:
                    name = str(name)
            status = pod.get("status")
            if type(status) is dict and type(meta) is dict:  # pod_state() inlined: per pod
                phase = status.get("phase")
                if phase == SUCCEEDED or phase == FAILED:
                    state = SUCCEEDED if phase == SUCCEEDED else FAILED
                else:
                    state = TERMINATING if meta.get("deletionTimestamp") else ACTIVE
            else:
                state = pod_state(pod)
            placement = Placement(name)  # no keyword: it costs a third of the constructor
            if state is not ACTIVE:
                placement.state = state
            out.append(placement)
            if only is not None:  # the single-leaf rule, without a call per pod
                placement.trace.append(only)
                component = only[1]
            else:
                try:
                    claimed = self.component(pod, placement, run)
                except ExtractionError as err:
                    placement.reason = f"componentTypeSelector: {err}"
                    continue
                if claimed is None:
                    continue
                component = claimed
            placement.component = component
            known = ids_of.get(component)
            if known is None:
                known = ids_of[component] = self._ids(extractor, component)
            if isinstance(known, str):
                placement.reason = known
                continue
            ids, id_set = known
            selector = self.instance[component]
            if selector is not None and ids[0] != "":
                id_path, expression = selector
                try:
                    value = single_result(expression, pod, run)
                except ExtractionError as err:
                    placement.reason = f"componentInstanceSelector {id_path}: {err}"
                    continue
                if value not in id_set:
                    err2 = InstanceNotFoundError(
                        f'could not match instance id "{value}". existing instance ids '
                        f"[{' '.join(ids)}]"
                    )
                    placement.reason = str(err2)
                    continue
                placement.instance = value
                placement.trace.append(("instance {}: {}", value, id_path))
            elif ids == [""]:
                placement.instance = ""
            else:
                placement.reason = "no instance selector provided but instance ids are not empty"
                continue
            replica = self.replica[component]
            if replica is not None:
                owner, key_path, expression = replica
                try:
                    key = single_result(expression, pod, run)
                    placement.replica = key
                    placement.replica_component = owner
                    placement.trace.append(("replica {} of {}: {}", key, owner, key_path))
                except ExtractionError as err:
                    placement.trace.append(("replica of {}: {}: {}", owner, key_path, err))
        return out


_ONLY = "component {}: the only component describing pods"


def _plan(structure: Structure) -> _Plan:
    plan = structure.memo.get("attribution")
    if not isinstance(plan, _Plan):
        plan = structure.memo["attribution"] = _Plan(structure)
    return plan


def infer_component(structure: Structure, pod: Any, placement: Placement) -> str | None:
    """The pod's component (None with ``placement.reason`` set when none claims it)."""
    return _plan(structure).component(pod, placement)


def attribute(structure: Structure, extractor: Extractor, pod: Mapping[str, Any]) -> Placement:
    """The placement of one pod (errors become the placement's ``reason``; not memoised)."""
    return _plan(structure).place_all(extractor, (pod,), direct)[0]


def attribute_all(
    structure: Structure, extractor: Extractor, pods: Iterable[Mapping[str, Any]]
) -> list[Placement]:
    """The placements of many pods of one object (the definition's plan looked up once)."""
    return _plan(structure).place_all(extractor, pods, extractor.run)
