"""Where native gangs go in the Workload API: templates, standalone groups, composite groups.

Planning, not building: these rules change the plan's gangs (a gang made standalone, a gang
turned into a ``CompositePodGroup`` with a child PodGroup per subgroup) and say why in
decisions; :mod:`workload_map.gangs.objects` then writes the objects.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from workload_map.engine import PodGroup
from workload_map.gangs.config import NATIVE, GangConfig
from workload_map.gangs.naming import dns_label, dns_subdomain
from workload_map.gangs.plans import MAX_TEMPLATES, Composite, Decision, Gang, Plan
from workload_map.gangs.topology import placement
from workload_map.model import Karta

__all__ = ["make_composites", "mark_standalone"]


def mark_standalone(out: Plan, existing: Sequence[str] | None) -> None:
    """Mark native gangs standalone where no template can hold them: more templates than the
    API allows, or templates an existing Workload lacks (its templates cannot change)."""
    # a composite's children always hold their templates (make_composites checked them)
    native = [g for g in out.gangs if g.backend == NATIVE and g.parent is None]
    templates = sorted({g.template for g in native})
    if len(templates) > MAX_TEMPLATES:
        out.decisions.append(
            Decision(
                "TooManyPodGroupTemplates",
                f"{len(templates)} pod-group templates exceed the Workload API's "
                f"{MAX_TEMPLATES}: PodGroups are created without a Workload (standalone)",
                warning=True,
            )
        )
        for g in native:
            g.standalone = True
        return
    if existing is None:
        return
    missing = sorted(set(templates) - set(existing))
    if missing:
        out.decisions.append(
            Decision(
                "TemplatesImmutable",
                f"the existing Workload has no template {', '.join(missing)} and its templates "
                "cannot change: those PodGroups are created standalone",
            )
        )
        for g in native:
            if g.template in missing:
                g.standalone = True


def make_composites(
    out: Plan,
    groups: Mapping[str, PodGroup],
    config: GangConfig,
    existing: Sequence[str] | None,
    karta: Karta,
    with_pods: set[str],
) -> None:
    """Turn each native gang whose subgroups make up its minimum into a composite group: the
    gang's name and template go to a ``CompositePodGroup`` (gang ``minGroupCount`` = its
    subgroups), each subgroup becomes a child PodGroup its pods join. Only where the cluster
    serves composites, for 2 to 8 subgroups (the API's templates per level; depth 2 of 4), and
    where an existing Workload already holds those templates (they cannot be added), and
    where every component with pods is in a subgroup (``with_pods``: decided from the spec, so
    the webhook, planning one pod, and the controller agree)."""
    if not config.composite_groups:
        return
    kept: list[Gang] = []
    for gang in out.gangs:
        group = groups.get(gang.group)
        subs = [s for s in group.sub_groups if s.min_member > 0] if group is not None else []
        if (
            group is None
            or gang.backend != NATIVE
            or not 2 <= len(subs) <= MAX_TEMPLATES
            or any(s.error is not None for s in group.sub_groups)
            # a stated minimum, or members outside every subgroup: not a sum of gangs
            or sum(s.min_member for s in subs) != gang.min_count
            or not with_pods <= _covered(karta, group)
        ):
            kept.append(gang)
            continue
        children: list[Gang] = []
        for sub in subs:
            found = placement(sub.topology, {}, config.kai_topologies)
            key = found.key if found is not None and config.native_topology else None
            note = {**found.to_dict(), "enforced": key is not None} if found else None
            children.append(
                Gang(
                    name=dns_subdomain(f"{gang.name}-{sub.name}"),
                    group=gang.group,
                    definition=gang.definition,
                    template=dns_label(f"{gang.template}-{sub.name}"),
                    backend=NATIVE,
                    scheduler=gang.scheduler,
                    min_count=sub.min_member,
                    rule=f"subgroup {sub.name}: {sub.rule}",
                    keys=gang.keys,
                    pods=tuple(sorted(sub.pods)),
                    # one class per hierarchy: the gang's
                    priority_class=gang.priority_class,
                    topology_key=key,
                    placement=note,
                    parent=gang.name,
                )
            )
        wanted = [gang.template, *(c.template for c in children)]
        if existing is not None and not set(wanted) <= set(existing):
            out.decisions.append(
                Decision(
                    "TemplatesImmutable",
                    f"pod group {gang.name}: the existing Workload has no composite template "
                    f"{gang.template} and its templates cannot change: one PodGroup as before",
                )
            )
            kept.append(gang)
            continue
        out.composites.append(
            Composite(
                name=gang.name,
                group=gang.group,
                definition=gang.definition,
                template=gang.template,
                min_groups=len(children),
                rule=gang.rule,
                children=tuple(c.name for c in children),
                priority_class=gang.priority_class,
                topology_key=gang.topology_key,
                placement=gang.placement,
            )
        )
        kept.extend(children)
    if out.composites:
        # a Workload holds either pod-group or composite templates: other gangs go standalone
        for g in kept:
            if g.backend == NATIVE and g.parent is None:
                g.standalone = True
    out.gangs = kept


def _covered(karta: Karta, group: PodGroup) -> set[str]:
    """The components a group's subgroups hold (each subgroup's component and those below)."""
    names: set[str] = set()
    for sub in group.sub_groups:
        names.add(sub.name)
        names.update(c.name for c in karta.iter_descendants(sub.name))
    return names
