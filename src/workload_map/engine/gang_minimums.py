"""Gang minimums: how many pods a gang needs before the scheduler may admit it.

Two rules. :func:`subtree_scale` is the reference's ``CalculateSubtreeScale`` (KAI's
minAvailable), kept for compatibility. :class:`GangCounter` is the project's contract: a group
needs the pods the definition implies for all of its member components, and when its keys
split the members by instance or by replica, only that instance's or replica's share; pods the
operator creates only after admission are not counted, and no minimum exceeds the pods that
can exist before admission.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workload_map.engine import resources as res
from workload_map.engine.errors import EngineError, ExtractionError
from workload_map.engine.extract import NO_SCALE, ExtractedInstance, Extractor, implied_replicas
from workload_map.engine.pods import Placement
from workload_map.engine.resources import instance_request
from workload_map.model import Member, PodGroupDefinition
from workload_map.model.extensions import (
    CREATED_LATER,
    GANG_MIN_MEMBER,
    GangExtensions,
    gang_extensions,
)
from workload_map.model.views import View

__all__ = [
    "AlphaMinimum",
    "GangCounter",
    "Members",
    "alpha_minimum",
    "dimensions",
    "pinned_minimum",
    "subtree_scale",
]


# -- the reference's subtree-scale rule -------------------------------------------------------
def subtree_scale(extractor: Extractor, component: str, instance_id: str | None = None) -> int:
    """The reference's ``CalculateSubtreeScale`` (KAI's minAvailable), exactly."""
    structure = extractor.structure
    if instance_id == "":
        raise ExtractionError("instance id is empty")
    if component not in structure.components:
        raise ExtractionError(f"component {component} not found")
    by_definition = any(c.scale_definition is not None for c in structure.components.values())

    def own(name: str, inst: str | None) -> int:
        scales = extractor.scales(name)
        if inst is not None:
            if scales is None or inst not in scales:
                raise ExtractionError(f"instance id {inst} not found")
            return scales[inst].reference_minimum()
        return sum(s.reference_minimum() for s in scales.values()) if scales else 0

    def below(name: str, seen: tuple[str, ...]) -> list[str]:
        # a component owned through a cycle (only without validation) is not counted again
        return [c for c in structure.children[name] if c not in seen]

    def by_scale(name: str, inst: str | None, seen: tuple[str, ...]) -> int:
        value = own(name, inst)
        if structure.is_childless(name):
            return value
        seen = (*seen, name)
        children = sum(by_scale(child, None, seen) for child in below(name, seen))
        if children == 0:
            return value
        if value == 0:
            return children
        return value * children

    def by_leaves(name: str, inst: str | None, seen: tuple[str, ...]) -> int:
        if structure.is_childless(name):
            # the reference's leaves are pod-bearing components: a childless one without a pod
            # definition (a grouping or status-only component) counts no pods
            if not structure.has_pod_definition(name):
                return 0
            ids = extractor.instance_ids(name)
            if inst is not None:
                if inst not in ids:
                    raise ExtractionError(f"instance id {inst} not found")
                return 1
            return len(ids) if ids and ids != [""] else 1
        seen = (*seen, name)
        return sum(by_leaves(child, None, seen) for child in below(name, seen))

    if by_definition:
        return by_scale(component, instance_id, ())
    return by_leaves(component, instance_id, ())


# -- our minimum rule --------------------------------------------------------------------------
#: the stated minimum not read yet (None is a read that found none)
_UNREAD = object()


class GangCounter:
    """Pods the definition implies for parts of the tree, by the gang-minimum rule."""

    def __init__(self, extractor: Extractor, placements: Sequence[Placement]):
        self.structure = extractor.structure
        self.extractor = extractor
        self.placements = placements
        self._observed_replicas: dict[str, int] | None = None
        # the definition's gang annotations, read once per definition (not per workload)
        extensions = self.structure.memo.get("gang extensions")
        if not isinstance(extensions, GangExtensions):
            extensions = self.structure.memo["gang extensions"] = gang_extensions(
                self.structure.karta
            )
        self.extensions = extensions
        self._late: dict[str, frozenset[str]] = {}
        #: :meth:`_instances` by the names asked for
        self._described: dict[tuple[str, ...], list[tuple[str, str, ExtractedInstance]]] = {}
        self._stated: object = _UNREAD
        #: per grouping component: its replicas' later pods and reservation (every group of
        #: one definition asks the same)
        self._replica_later: dict[str, int] = {}
        self._replica_reserved: dict[str, dict[str, Any] | None] = {}
        #: the minimum of each (group definition, instance pins, replica component) of
        #: :func:`alpha_minimum`, with the definition it was computed for
        self.alpha_minimums: dict[
            tuple[int, tuple[tuple[str, str], ...], str | None],
            tuple[PodGroupDefinition, AlphaMinimum],
        ] = {}

    def _evaluate(self, key: str, expr: str) -> list[Any]:
        try:
            return list(
                self.extractor.run(self.structure.expressions.get(expr), self.extractor.obj)
            )
        except EngineError as err:
            raise ExtractionError(f"annotation {key}: {err}") from err

    def late(self, name: str) -> frozenset[str]:
        """The instances of ``name`` created only after admission (``created-after-admission``)."""
        found = self._late.get(name)
        if found is None:
            expr = self.extensions.created_later.get(name)
            found = frozenset()
            if expr is not None and self.structure.has_pod_definition(name):
                values = self._evaluate(CREATED_LATER + name, expr)
                ids = self.extractor.instance_ids(name)
                if any(v is True for v in values):
                    found = frozenset(ids)
                else:
                    found = frozenset(v for v in values if isinstance(v, str) and v in ids)
            self._late[name] = found
        return found

    def stated_minimum(self) -> int | None:
        """The workload's own minimum (``gang-min-member``), None when it states none; read
        once (every alpha group of the workload applies it)."""
        if self._stated is _UNREAD:
            self._stated = self._read_stated()
        return self._stated if isinstance(self._stated, int) else None

    def _read_stated(self) -> int | None:
        expr = self.extensions.min_member
        if expr is None:
            return None
        values = [v for v in self._evaluate(GANG_MIN_MEMBER, expr) if v is not None]
        if not values:
            return None
        value = values[0]
        if isinstance(value, str) and value.strip().isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
            raise ExtractionError(f"annotation {GANG_MIN_MEMBER}: {value!r} is not a whole number")
        return max(int(value), 0)

    def instance_minimums(self, name: str) -> dict[str, int]:
        """Per instance the pods it needs; 0 for an instance the object leaves out, and for
        one whose pods are created after admission."""
        if not self.structure.has_pod_definition(name):
            return {}
        late = self.late(name)
        return {
            i: (inst.scale or NO_SCALE).gang_minimum()
            if inst.describes_pods and i not in late
            else 0
            for i, inst in self.extractor.instances(name).items()
        }

    def _instances(self, names: Sequence[str]) -> list[tuple[str, str, ExtractedInstance]]:
        """(component, instance id, instance) of every instance under ``names`` whose pods the
        object describes; found once per ``names`` (several minimums of a group ask), by plain
        loops (generators and comprehensions are calls: this runs per workload)."""
        key = tuple(names)
        found = self._described.get(key)
        if found is None:
            found = []
            structure = self.structure
            seen: set[str] = set()
            for top in names:
                for name in structure.subtree(top):
                    if name in seen:
                        continue
                    seen.add(name)
                    if structure.has_pod_definition(name):
                        for i, inst in self.extractor.instances(name).items():
                            if inst.describes_pods:
                                found.append((name, i, inst))
            self._described[key] = found
        return found

    def capacity(self, names: Sequence[str]) -> int:
        """Pods under ``names`` that can exist before admission (the spec's count, not the
        minimum): no minimum may exceed it."""
        total = 0
        for c, i, inst in self._instances(names):
            if i not in self.late(c):
                total += inst.desired_pods()
        return total

    def created_later(self, names: Sequence[str]) -> int:
        """Pods under ``names`` the operator creates only after admission."""
        total = 0
        for c, i, inst in self._instances(names):
            if i in self.late(c):
                total += inst.desired_pods()
        return total

    def reserved(self, names: Sequence[str]) -> dict[str, Any] | None:
        """The requests of every pod under ``names``, the later ones included (minResources)."""
        try:
            totals = res.add(
                *(
                    res.scaled(instance_request(inst), inst.desired_pods())
                    for _, _, inst in self._instances(names)
                )
            )
        except EngineError:
            return None
        return res.summarize(totals)

    def bounded(self, names: Sequence[str], minimum: int, rule: str) -> tuple[int, str]:
        """``minimum`` capped at the pods that can exist before admission."""
        cap = self.capacity(names)
        if minimum > cap:
            return cap, f"{rule}; capped at the {cap} pods that can exist before admission"
        return minimum, rule

    def described(self, name: str) -> bool:
        """Whether the object describes the pods of some instance under ``name``."""
        return any(
            inst.describes_pods
            for comp in self.structure.subtree(name)
            if self.structure.has_pod_definition(comp)
            for inst in self.extractor.instances(comp).values()
        )

    def subtree(self, name: str, only: Mapping[str, str] | None = None) -> int:
        """Σ over pod-bearing components under ``name``; ``only`` pins some to one instance."""
        total = 0
        for comp in self.structure.subtree(name):
            for inst, count in self.instance_minimums(comp).items():
                if only and comp in only and only[comp] != inst:
                    continue
                total += count
        return total

    def replica_count(self, component: str) -> int:
        if self._observed_replicas is None:
            seen: dict[str, set[str]] = {}
            for p in self.placements:
                if p.replica_component and p.replica is not None:
                    seen.setdefault(p.replica_component, set()).add(p.replica)
            self._observed_replicas = {k: len(v) for k, v in seen.items()}
        return max(self._observed_replicas.get(component, 0), 1)

    def replica_share(self, component: str, only: Mapping[str, str] | None) -> tuple[int, str]:
        """Pods one replica of ``component`` implies."""
        comp = self.structure.components[component]
        scales = self.extractor.scales(component) if comp.scale_definition else None
        if (
            scales
            and not self.structure.has_pod_definition(component)
            and self.structure.children.get(component)
        ):
            value = next(iter(scales.values())).gang_minimum()
            rule = f"one replica of {component}: its own scale ({value} pods)"
            later = self.replica_later(component)
            if later:
                # the scale counts every pod of the replica, those created later too
                lowered = max(value - later, 0)
                return lowered, f"{rule}, less {later} created after admission"
            return value, rule
        total = self.subtree(component, only)
        count = self.replica_count(component)
        return -(-total // count), (
            f"one replica of {component}: {total} pods over {count} observed replicas"
        )

    def replicas_of(self, component: str) -> int:
        """How many replicas of grouping ``component`` there are: the spec's, else observed."""
        implied = implied_replicas(self.extractor, component)
        return implied if implied else self.replica_count(component)

    def replica_later(self, component: str) -> int:
        """Pods of one replica of ``component`` created after admission: the later pods under
        it spread over its replicas, rounded up (no replica's minimum may count one)."""
        found = self._replica_later.get(component)
        if found is None:
            later = self.created_later([component])
            found = -(-later // self.replicas_of(component)) if later else 0
            self._replica_later[component] = found
        return found

    def replica_reserved(self, component: str) -> dict[str, Any] | None:
        """The requests of every pod of one replica of ``component``, the later ones included;
        None when an instance's pods do not divide evenly over the replicas."""
        if component not in self._replica_reserved:
            self._replica_reserved[component] = self._reserve_replica(component)
        return self._replica_reserved[component]

    def _reserve_replica(self, component: str) -> dict[str, Any] | None:
        count = self.replicas_of(component)
        parts = []
        for _, _, inst in self._instances([component]):
            pods = inst.desired_pods()
            if pods % count:
                return None
            try:
                parts.append(res.scaled(instance_request(inst), pods // count))
            except EngineError:
                return None
        return res.summarize(res.add(*parts))

    def members_capacity(
        self, members: Sequence[Member], pins: Mapping[str, str], replica_of: str | None
    ) -> int:
        """Pods of one alpha group that can exist before admission (a stated minimum's cap):
        one replica's share where the keys split by replica, the pinned instances' pods where
        they pin instances, else every such pod of the members."""
        if replica_of is not None:
            comp = self.structure.components[replica_of]
            scales = self.extractor.scales(replica_of) if comp.scale_definition else None
            if (
                scales
                and not self.structure.has_pod_definition(replica_of)
                and self.structure.children.get(replica_of)
            ):
                own = next(iter(scales.values())).desired_pods()
                return max(own - self.replica_later(replica_of), 0)
            return -(-self.capacity([replica_of]) // self.replicas_of(replica_of))
        names = [m.component_name for m in members if m.component_name in self.structure.components]
        return sum(
            inst.desired_pods()
            for c, i, inst in self._instances(names)
            if i not in self.late(c) and (c not in pins or pins[c] == i)
        )

    def members_later(
        self, members: Sequence[Member], pins: Mapping[str, str], replica_of: str | None
    ) -> tuple[int, dict[str, Any] | None]:
        """Pods of one alpha group created after admission, and then the requests of all its
        pods (its ``minResources``); (0, None) when it has none."""
        if replica_of is not None:
            later = self.replica_later(replica_of)
            return (later, self.replica_reserved(replica_of)) if later else (0, None)
        if pins:
            return 0, None  # an instance-pinned group: its instance is created or not as a whole
        names = [m.component_name for m in members if m.component_name in self.structure.components]
        later = self.created_later(names)
        return (later, self.reserved(names)) if later else (0, None)

    def members_minimum(
        self, members: Sequence[Member], pins: Mapping[str, str], replica_of: str | None
    ) -> tuple[int, str]:
        """The minimum of a group of ``members`` whose pods have these keys, and the rule."""
        if replica_of is not None:
            return self.replica_share(replica_of, pins)
        names = [m.component_name for m in members if m.component_name in self.structure.components]
        total = sum(self.subtree(n, pins) for n in names)
        parts = ", ".join(names)
        if pins:
            scope = ", ".join(f"{c} instance {i}" for c, i in pins.items())
            return total, f"pods implied for {parts}, keys pin {scope}"
        return total, f"pods implied for {parts}"


#: the pods of one group: per key tuple, the placements of the pods that have it (the first
#: pod of the group first)
Members = Sequence[tuple[tuple[str, ...], Sequence[Placement]]]


def dimensions(members: Members) -> tuple[dict[str, str], str | None]:
    """Which instance / replica the group's keys pin (checked on every pod of the group).

    A key pins an instance when it is every pod's instance id (all of one component), else a
    replica when it is every pod's replica key (all of one replica component).
    """
    if not members or not members[0][1]:
        return {}, None
    first_keys, first_pods = members[0]
    first = first_pods[0]
    instance_pins: dict[str, str] = {}
    replica_of: str | None = None
    # plain loops, not all() or a helper per key: this runs per group
    for index, value in enumerate(first_keys):
        # the first pod has the first keys: a key it does not match pins nothing (a LWS
        # group's name key), without the loops below (this runs per group)
        if first.instance != value and first.replica != value:
            continue
        if first.instance:
            component = first.component
            for keys, pods in members:
                wanted = keys[index]
                for p in pods:
                    if p.instance != wanted or p.component != component:
                        break
                else:
                    continue
                break
            else:
                if component is not None:
                    instance_pins[component] = value
                continue
        if first.replica is not None:
            owner = first.replica_component
            for keys, pods in members:
                wanted = keys[index]
                for p in pods:
                    if p.replica != wanted or p.replica_component != owner:
                        break
                else:
                    continue
                break
            else:
                replica_of = owner
    return instance_pins, replica_of


class AlphaMinimum(View):
    """One alpha group's minimum, its rule, an extraction failure, and its later pods."""

    minimum: int
    rule: str
    error: str | None = None
    later: int = 0
    reserved: dict[str, Any] | None = None


def alpha_minimum(
    counter: GangCounter, definition: PodGroupDefinition, members: Members
) -> AlphaMinimum:
    """The minimum of one alpha group; an extraction failure is the group's error.

    It depends only on the definition and on what the keys pin (:func:`dimensions`): groups
    of one workload that pin alike (every replica's group of a LeaderWorkerSet) share it.
    """
    pins, replica_of = dimensions(members)
    return pinned_minimum(counter, definition, pins, replica_of)


def pinned_minimum(
    counter: GangCounter,
    definition: PodGroupDefinition,
    pins: Mapping[str, str],
    replica_of: str | None,
) -> AlphaMinimum:
    """:func:`alpha_minimum` of a group whose keys pin ``pins`` and ``replica_of`` (what
    :func:`dimensions` finds), computed once per workload for each such pinning."""
    key = (id(definition), tuple(pins.items()) if pins else (), replica_of)
    found = counter.alpha_minimums.get(key)
    if found is None or found[0] is not definition:
        found = counter.alpha_minimums[key] = (
            definition,
            _alpha_minimum(counter, definition, pins, replica_of),
        )
    return found[1]


def _alpha_minimum(
    counter: GangCounter,
    definition: PodGroupDefinition,
    pins: Mapping[str, str],
    replica_of: str | None,
) -> AlphaMinimum:
    try:
        minimum, rule = counter.members_minimum(definition.members, pins, replica_of)
        stated = counter.stated_minimum()
        if stated is not None:
            # the workload's own minimum, per group, never above what the group can hold
            cap = counter.members_capacity(definition.members, pins, replica_of)
            minimum = min(stated, cap)
            rule = f"stated by the workload ({counter.extensions.min_member} = {stated})"
            if stated > cap:
                rule += f"; capped at the {cap} pods of the group that can exist before admission"
        later, reserved = counter.members_later(definition.members, pins, replica_of)
    except ExtractionError as err:
        return AlphaMinimum(0, "", str(err))
    return AlphaMinimum(minimum, rule, None, later, reserved)
