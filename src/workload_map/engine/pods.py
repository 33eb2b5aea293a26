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
from typing import Any, cast

import msgspec

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
    "matches_type",
    "metadata_field",
    "pod_name",
    "pod_state",
    "replica_field",
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


class Placement(msgspec.Struct, gc=False):
    """Where one pod sits in the workload (component None: no component claims it).

    A mutable ``msgspec.Struct``, not a dataclass: one is built per pod, and the Struct's C
    constructor costs about a quarter of a slotted dataclass's generated ``__init__`` (eight
    attribute stores in Python). Fields, defaults, equality and methods are as a dataclass's.
    ``gc=False``: not tracked by the cyclic collector (a quarter less per construction,
    callgrind), as its fields are strings and tuples of the trace's strings and values, which
    never lead back to a placement.
    """

    pod: str
    component: str | None = None
    instance: str | None = None
    replica: str | None = None
    replica_component: str | None = None
    reason: str | None = None
    #: (template, *args) per decision, formatted by :attr:`steps` (pods placed alike share it)
    trace: tuple[tuple[Any, ...], ...] = ()
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
    return _single(expression.evaluate(pod) if expression.direct else run(expression, pod))


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


#: a pod-selector path read inline, ``.metadata.<section>["key"]``: (section, key)
_Field = tuple[str, str]
#: a field read met a value jq cannot index: the expression itself runs (and raises)
_SURPRISE: Any = object()
#: a pod's decisions, as :attr:`Placement.trace` holds them
_Trace = tuple[tuple[Any, ...], ...]


def metadata_field(expression: Expression | None) -> _Field | None:
    """``(section, key)`` when the expression is exactly ``.metadata.<section>["key"]``.

    On a pod whose metadata is an object such a path is two dictionary reads with jq's results
    (null through a missing or null section); any other value on the way is left to the
    expression, which hands it to the jq engine. Defaults, computed paths and reference
    variables are not fields. Almost every catalog pod selector is one (label and annotation
    reads), and they run per pod.
    """
    if expression is None or expression.variables or expression.path is None:
        return None
    path = expression.path
    if len(path) != 3 or path[0] != "metadata":
        return None
    section, key = path[1], path[2]
    if type(section) is not str or type(key) is not str:
        return None
    return section, key


#: a claimer of pods: (component, matcher, the key path as a field when it is one, the
#: expected value, the matchLabels pairs)
_Claimer = tuple[str, Callable[[Any, Run], bool], _Field | None, str | None, tuple[Any, ...]]
#: an instance decision: (instance, reason, trace so far, replica decisions by selector value)
_Instance = tuple[str | None, str | None, _Trace, dict[Any, tuple[str | None, str | None, _Trace]]]
#: a pod's decision past its component: (instance, replica, replica component, reason, trace)
_Decision = tuple[str | None, str | None, str | None, str | None, _Trace]


#: the most decisions one dictionary keeps (shared ones live as long as the definition: a
#: selector reading a value unique to each pod must not grow one without bound)
_KEPT = 4096


def _plain_pair(key: tuple[Any, Any]) -> bool:
    """Whether a pair of field values is only strings and nulls: the values a decision may be
    shared by (``1``, ``1.0`` and ``true`` are equal keys, but decided apart)."""
    first, second = key
    return (first is None or type(first) is str) and (second is None or type(second) is str)


class _Seen:
    """One component's pods within one :meth:`_Plan.place_all` call: its instance ids (or why
    there are none), its selectors, and what each distinct selector value means (instance,
    replica and trace, decided once: a workload's pods share a handful of values, and the
    pods sharing decisions share one trace tuple)."""

    __slots__ = (
        "base",
        "decisions",
        "fields",
        "id_set",
        "ids",
        "instance",
        "instances",
        "problem",
        "replica",
        "unselected",
    )

    def __init__(
        self,
        plan: _Plan,
        component: str,
        step: tuple[Any, ...],
        known: tuple[list[str], frozenset[str]] | str,
    ):
        self.base: _Trace = (step,)
        self.problem = known if isinstance(known, str) else None
        self.ids, self.id_set = ([], frozenset()) if isinstance(known, str) else known
        self.instance = plan.instance[component] if self.ids and self.ids[0] != "" else None
        self.replica = plan.replica[component]
        #: without an instance selector: every pod's decision, or why there is none
        self.unselected: _Instance | str
        if self.ids == [""]:
            self.unselected = ("", None, self.base, {})
        else:
            self.unselected = "no instance selector provided but instance ids are not empty"
        self.instances: dict[Any, _Instance] = {}
        #: the fields a pod's decision is read from when its instance selector is one (and its
        #: replica selector none, or one of the same section), or without an instance to find
        #: when its replica selector is one: (section, first key, replica key or None, the
        #: read of a null section); section None otherwise
        self.fields: tuple[str | None, str, str | None, Any] = (None, "", None, None)
        #: each decision by the field values it was read from (one value, or a pair)
        self.decisions: dict[Any, _Decision] = {}
        instance, replica = self.instance, self.replica
        if instance is not None and instance[2] is not None:
            section, key = instance[2]
            if replica is None:
                self.fields = (section, key, None, None)
            elif replica[3] is not None and replica[3][0] == section:
                self.fields = (section, key, replica[3][1], (None, None))
        elif instance is None and replica is not None and replica[3] is not None:
            self.fields = (replica[3][0], replica[3][1], None, None)
            if self.ids == [""]:
                # instance "" for every pod: a decision is the definition's (its steps and
                # replica selector) and the value's alone, so every object's pods share it (a
                # LeaderWorkerSet's groups would otherwise be decided again per object)
                self.decisions = plan.unselected.setdefault(component, {})

    def decide_instance(self, values: list[Any] | ExtractionError) -> _Instance:
        """The instance an instance selector's outputs (or its error) name."""
        assert self.instance is not None
        id_path = self.instance[0]
        try:
            if isinstance(values, ExtractionError):
                raise values
            value = _single(values)
        except ExtractionError as err:
            return None, f"componentInstanceSelector {id_path}: {err}", self.base, {}
        if value not in self.id_set:
            err2 = InstanceNotFoundError(
                f'could not match instance id "{value}". existing instance ids '
                f"[{' '.join(self.ids)}]"
            )
            return None, str(err2), self.base, {}
        return value, None, (*self.base, ("instance {}: {}", value, id_path)), {}

    def decide_replica(
        self, trace: _Trace, values: list[Any] | ExtractionError
    ) -> tuple[str | None, str | None, _Trace]:
        """(replica key, its component, trace) of a replica selector's outputs (or its error):
        a failure is only a step of the trace (the pod keeps its place without a replica)."""
        assert self.replica is not None
        owner, key_path = self.replica[0], self.replica[1]
        if type(values) is list and len(values) == 1 and type(values[0]) is str and values[0]:
            key = values[0]  # what _single gives, without its call: a label, once per replica
        else:
            try:
                if isinstance(values, ExtractionError):
                    raise values
                key = _single(values)
            except ExtractionError as err:
                return None, None, (*trace, ("replica of {}: {}: {}", owner, key_path, err))
        return key, owner, (*trace, ("replica {} of {}: {}", key, owner, key_path))


class _Plan:
    """What attributing a pod needs from one definition, looked up once (it runs per pod)."""

    def __init__(self, structure: Structure):
        self.leaves = structure.pod_bearing
        # the leaves that can claim pods, in definition order, and their trace steps (one
        # shared tuple each: recorded per pod); the rest cannot
        self.claimers: list[_Claimer] = []
        self.steps: dict[str, tuple[str, ...]] = {}
        self.unselectable: list[str] = []
        self.only: tuple[str, ...] | None = (
            (_ONLY, self.leaves[0]) if len(self.leaves) == 1 else None
        )
        if self.only is not None:
            self.steps[self.leaves[0]] = self.only
        for name in self.leaves:
            comp = structure.components[name]
            selector = comp.pod_selector.component_type_selector if comp.pod_selector else None
            if selector is None or (not selector.key_path and not selector.match_labels):
                self.unselectable.append(name)
                continue
            if self.only is None:
                self.steps[name] = ("component {}: {}", name, _selector_text(selector))
            key = structure.selectors.get(selector.key_path) if selector.key_path else None
            labels = tuple(selector.match_labels.items()) if selector.match_labels else ()
            self.claimers.append(
                (
                    name,
                    type_matcher(structure, selector),
                    metadata_field(key),
                    selector.value,
                    labels,
                )
            )
        #: the claimers as (section, key, expected, matchLabels, component) when each reads
        #: a field (``place_all``'s loop for them; anything else takes ``_claim``)
        self.tight: tuple[tuple[str, str, str | None, tuple[Any, ...], str], ...] | None = (
            tuple((c[2][0], c[2][1], c[3], c[4], c[0]) for c in self.claimers if c[2] is not None)
            if all(c[2] is not None for c in self.claimers)
            else None
        )
        self.unclaimed = "no component's componentTypeSelector matches"
        #: decisions shared by every object's pods, by component (see :class:`_Seen`)
        self.unselected: dict[str, dict[Any, _Decision]] = {}
        if self.unselectable:
            self.unclaimed += (
                f"; {', '.join(self.unselectable)} cannot claim pods: several components "
                "describe pods and these have no componentTypeSelector"
            )
        if not self.leaves:
            self.unclaimed = "the definition has no component that describes pods"
        self.instance: dict[str, tuple[str, Expression, _Field | None] | None] = {}
        self.replica: dict[str, tuple[str, str, Expression, _Field | None] | None] = {}
        for name, comp in structure.components.items():
            ids = comp.pod_selector.component_instance_selector if comp.pod_selector else None
            if ids is not None and ids.id_path:
                expression = structure.selectors.get(ids.id_path)
                self.instance[name] = (ids.id_path, expression, metadata_field(expression))
            else:
                self.instance[name] = None
            self.replica[name] = None
            for owner_name in [name, *structure.ancestors(name)]:
                owner = structure.components[owner_name]
                replica = owner.pod_selector.replica_selector if owner.pod_selector else None
                if replica is not None and replica.key_path:
                    expression = structure.selectors.get(replica.key_path)
                    self.replica[name] = (
                        owner_name,
                        replica.key_path,
                        expression,
                        metadata_field(expression),
                    )
                    break

    def component(self, pod: Any, placement: Placement, run: Run = direct) -> str | None:
        if self.only is not None:
            placement.trace += (self.only,)
            return self.only[1]
        for name, match, *_ in self.claimers:
            if match(pod, run):
                placement.trace += (self.steps[name],)
                return name
        placement.reason = self.unclaimed
        return None

    def _seen(self, extractor: Extractor, component: str) -> _Seen:
        """The component's instance ids (a list and a set), or why there are none."""
        step = self.steps[component]
        try:
            ids = extractor.instance_ids(component)
        except ExtractionError as err:
            return _Seen(self, component, step, str(err))
        if not ids:
            return _Seen(
                self, component, step, f"component {component} has no instances in the object"
            )
        return _Seen(self, component, step, (ids, extractor.instance_id_set(component)))

    def place_all(
        self, extractor: Extractor, pods: Iterable[Mapping[str, Any]], run: Run
    ) -> list[Placement]:
        """The placements of pods of one object (errors become a placement's ``reason``).

        ``run`` evaluates the pods' expressions: the workload's memo (the pods of a view are
        asked again by gangs), or :func:`direct` for one-off questions. What is the same for
        every pod of a component (its instance ids, its selectors) is looked up once, label
        and annotation selectors are read inline (:func:`metadata_field`), and what a
        selector value means is decided once per distinct value (:class:`_Seen`). Pods are
        many and each is visited once, so the loop reads as few of a pod's objects as it can
        and allocates one object per pod.
        """
        out: list[Placement] = []
        seen_of: dict[str, _Seen] = {}
        last: str | None = None  # the component of ``seen``
        seen = cast(_Seen, None)
        # ``seen``'s decisions and the fields they are read from
        decisions: dict[Any, _Decision] = {}
        f_section: str | None = None
        f_first, f_second, f_null = "", None, None
        # the single leaf's name (None: the claimers decide), and ``seen``'s problem: read once,
        # not per pod
        only = self.only[1] if self.only is not None else None
        problem: str | None = None
        tight = self.tight
        for pod in pods:
            # a plain object's keys are read by subscript (cheaper than .get by about a
            # quarter, callgrind) where a pod almost always has them; a missing one is a
            # KeyError taken as .get's None
            meta: Any = None
            if type(pod) is dict:
                try:
                    meta = pod["metadata"]
                except KeyError:
                    pass
            if type(meta) is not dict:
                # the inline reads need a plain pod and metadata object
                out.append(self.place_odd(extractor, pod, run, seen_of))
                continue
            try:
                name = meta["name"] or meta.get("generateName") or ""
            except KeyError:
                name = meta.get("generateName") or ""
            if type(name) is not str:
                name = str(name)
            try:
                status = pod["status"]
            except KeyError:
                status = None
            if type(status) is dict:  # pod_state() inlined: per pod
                try:
                    phase = status["phase"]
                except KeyError:
                    phase = None
                if phase == SUCCEEDED or phase == FAILED:
                    state = SUCCEEDED if phase == SUCCEEDED else FAILED
                # mostly absent: a containment test costs less than .get's call
                elif "deletionTimestamp" in meta and meta["deletionTimestamp"]:  # noqa: RUF019
                    state = TERMINATING
                else:
                    state = ACTIVE
            else:
                state = pod_state(pod)
            value: Any
            if only is not None:  # the single-leaf rule, without a call per pod
                component = only
            else:
                found_by: str | None = None
                odd = tight is None
                if tight is not None:
                    for section_name, key, expected, labels, claimer in tight:
                        section = meta.get(section_name)
                        if type(section) is dict:
                            value = section.get(key)
                        elif section is None:
                            value = None
                        else:
                            odd = True  # the jq engine decides (raises)
                            break
                        # present: not null; a value: equal (only a str equals a str)
                        if value is not None if expected is None else value == expected:
                            if not labels or _labels_match(meta, labels):
                                found_by = claimer
                                break
                if odd:
                    try:
                        found_by = self._claim(pod, meta, run)
                    except ExtractionError as err:
                        why = f"componentTypeSelector: {err}"
                        out.append(Placement(name, None, None, None, None, why, (), state))
                        continue
                if found_by is None:
                    out.append(Placement(name, None, None, None, None, self.unclaimed, (), state))
                    continue
                component = found_by
            if component is not last:  # pods of one component mostly come together
                looked = seen_of.get(component)
                if looked is None:
                    looked = seen_of[component] = self._seen(extractor, component)
                seen, last = looked, component
                decisions = seen.decisions
                f_section, f_first, f_second, f_null = seen.fields
                problem = seen.problem
            if problem is not None:
                out.append(Placement(name, component, None, None, None, problem, seen.base, state))
                continue
            # the selectors' fields looked up among the decisions made: a hit is what the
            # reads below give those values (only values that are all strings or null are
            # entered, and only a str equals a str); a miss is decided below
            read: Any = _SURPRISE
            if f_section is not None:
                try:  # (by subscript: the selectors' section, nearly every pod has it)
                    section = meta[f_section]
                except KeyError:
                    section = None
                if type(section) is dict:
                    read = (
                        section.get(f_first)
                        if f_second is None
                        else (section.get(f_first), section.get(f_second))
                    )
                elif section is None:
                    read = f_null
                try:
                    hit = decisions.get(read)
                except TypeError:  # an unhashable value (a list or an object)
                    hit, read = None, _SURPRISE
                if hit is not None:
                    instance, replica, owner, reason, trace = hit
                    out.append(
                        Placement(name, component, instance, replica, owner, reason, trace, state)
                    )
                    continue
            selector = seen.instance
            decided: _Instance | str
            if selector is None:
                decided = seen.unselected
            else:
                field_ = selector[2]
                value = _SURPRISE
                if field_ is not None:
                    section = meta.get(field_[0])
                    if type(section) is dict:
                        value = section.get(field_[1])
                    elif section is None:
                        value = None
                if value is _SURPRISE:
                    decided = seen.decide_instance(_outputs(run, selector[1], pod))
                elif type(value) is str:
                    found = seen.instances.get(value)
                    if found is None:
                        found = seen.instances[value] = seen.decide_instance([value])
                    decided = found
                else:
                    decided = seen.decide_instance([value])
            replica = owner = None
            replica_selector = seen.replica
            if isinstance(decided, str):
                instance, reason, trace = None, decided, seen.base
            else:
                instance, reason, trace, replicas = decided
                if reason is None and replica_selector is not None:
                    field_ = replica_selector[3]
                    value = _SURPRISE
                    if field_ is not None:
                        section = meta.get(field_[0])
                        if type(section) is dict:
                            value = section.get(field_[1])
                        elif section is None:
                            value = None
                    if value is _SURPRISE:
                        outputs = _outputs(run, replica_selector[2], pod)
                        replica, owner, trace = seen.decide_replica(trace, outputs)
                    elif type(value) is str:
                        known = replicas.get(value)
                        if known is None:
                            known = replicas[value] = seen.decide_replica(trace, [value])
                        replica, owner, trace = known
                    else:
                        replica, owner, trace = seen.decide_replica(trace, [value])
            if (
                read is not _SURPRISE
                and ((read is None or type(read) is str) if f_second is None else _plain_pair(read))
                and len(decisions) < _KEPT
            ):
                decisions[read] = (instance, replica, owner, reason, trace)
            out.append(Placement(name, component, instance, replica, owner, reason, trace, state))
        return out

    def _claim(self, pod: Mapping[str, Any], meta: dict[str, Any], run: Run) -> str | None:
        """The claiming component of a plain pod, each selector read inline where it is a
        field and the section an object (else its expression runs: it raises on what jq cannot
        index); raises ExtractionError."""
        value: Any
        for claimer, match, field_, expected, labels in self.claimers:
            if field_ is None:
                claimed = match(pod, run)
            else:
                section = meta.get(field_[0])
                if type(section) is dict:
                    value = section.get(field_[1])
                elif section is None:
                    value = None
                else:
                    claimed = match(pod, run)
                    value = _SURPRISE
                if value is not _SURPRISE:
                    claimed = value is not None if expected is None else value == expected
                    if claimed and labels:
                        claimed = _labels_match(meta, labels)
            if claimed:
                return claimer
        return None

    def place_odd(
        self, extractor: Extractor, pod: Mapping[str, Any], run: Run, seen_of: dict[str, _Seen]
    ) -> Placement:
        """The placement of a pod that is not a plain object or whose metadata is not one:
        the plain rule, every selector run as its expression (``place_all``'s reference)."""
        meta = pod.get("metadata")
        name = ""
        if type(meta) is dict:
            name = meta.get("name") or meta.get("generateName") or ""
            if type(name) is not str:
                name = str(name)
        state = pod_state(pod)
        if self.only is not None:
            component: str | None = self.only[1]
        else:
            try:
                component = next((c for c, match, *_ in self.claimers if match(pod, run)), None)
            except ExtractionError as err:
                why = f"componentTypeSelector: {err}"
                return Placement(name, None, None, None, None, why, (), state)
        if component is None:
            return Placement(name, None, None, None, None, self.unclaimed, (), state)
        seen = seen_of.get(component)
        if seen is None:
            seen = seen_of[component] = self._seen(extractor, component)
        if seen.problem is not None:
            return Placement(name, component, None, None, None, seen.problem, seen.base, state)
        decided = (
            seen.unselected
            if seen.instance is None
            else seen.decide_instance(_outputs(run, seen.instance[1], pod))
        )
        if isinstance(decided, str):
            return Placement(name, component, None, None, None, decided, seen.base, state)
        instance, reason, trace, _ = decided
        replica = owner = None
        if reason is None and seen.replica is not None:
            outputs = _outputs(run, seen.replica[2], pod)
            replica, owner, trace = seen.decide_replica(trace, outputs)
        return Placement(name, component, instance, replica, owner, reason, trace, state)


def _labels_match(meta: dict[str, Any], labels: tuple[Any, ...]) -> bool:
    """The matchLabels half of a type selector, on a pod's metadata object."""
    pod_labels = meta.get("labels")
    if not isinstance(pod_labels, dict):
        return False
    for label, wanted in labels:
        if pod_labels.get(label) != wanted:
            return False
    return True


def _outputs(run: Run, expression: Expression, pod: Any) -> list[Any] | ExtractionError:
    """The expression's outputs on the pod, or its error (decided on like a result)."""
    try:
        return run(expression, pod) if not expression.direct else expression.evaluate(pod)
    except ExtractionError as err:
        return err


def _single(values: list[Any]) -> str:
    """:func:`single_result` on an expression's outputs."""
    if len(values) != 1:
        raise ExtractionError(f"expected single query result, got {len(values)}")
    value = values[0]
    if type(value) is str and value:
        return value
    if value is None or value == "":
        raise ExtractionError(f"query result is empty {'<nil>' if value is None else value}")
    return _go_string(value)


_ONLY = "component {}: the only component describing pods"


def _plan(structure: Structure) -> _Plan:
    plan = structure.memo.get("attribution")
    if not isinstance(plan, _Plan):
        plan = structure.memo["attribution"] = _Plan(structure)
    return plan


def replica_field(structure: Structure, component: str) -> tuple[str, _Field] | None:
    """``(owner, (section, key))`` when the pods of ``component`` are placed without an
    instance selector and by a replica selector (its own or its nearest ancestor's, of
    ``owner``) that reads one metadata field: every such pod placed without a reason then has
    the instance ``""`` and, as its replica, what that field's expression gives as one string
    (gang_rules decides per definition what a group key reading the same field pins)."""
    plan = _plan(structure)
    if plan.instance.get(component) is not None:
        return None
    replica = plan.replica.get(component)
    if replica is None or replica[3] is None:
        return None
    return replica[0], replica[3]


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
