"""Where native gangs go in the Workload API: templates, standalone groups, composite groups.

Planning, not building: these rules change the plan's gangs (a gang made standalone, a gang
turned into a ``CompositePodGroup`` with a child PodGroup per subgroup, a workload's gangs made
the children of one ``CompositePodGroup`` that starts a minimum of them together) and say why
in decisions; :mod:`workload_map.gangs.objects` then writes the objects.

Depth: the Karta schema states at most two levels (a v2 ``podGroup`` and its flat list of
subgroups; alpha ``podGroups`` whose keys give gang instances, without subgroups), so every
hierarchy written here has depth 2 of the API's 4. Subgroups whose components nest (one below
another) would need a deeper one; they are reported (``SubGroupsNest``) and the gang stays one
PodGroup. A workload-level minimum over gangs that already are composites (depth 3) is reported
the same way (``CompositeNested``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from workload_map.engine import PodGroup
from workload_map.gangs.config import ANNOTATION_MIN_GROUPS, NATIVE, GangConfig
from workload_map.gangs.naming import dns_label, dns_subdomain
from workload_map.gangs.plans import (
    MAX_TEMPLATES,
    Composite,
    Decision,
    Gang,
    Plan,
    workload_object_name,
)
from workload_map.gangs.topology import placement
from workload_map.model import Karta

__all__ = ["GANG_SET_TEMPLATE", "group_gangs", "make_composites", "mark_standalone"]

#: the composite template of a workload whose gangs start together (``group_gangs``)
GANG_SET_TEMPLATE = "gang-set"


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
        nested = _nested(karta, subs)
        if nested is not None and gang.backend == NATIVE:
            out.decisions.append(
                Decision(
                    "SubGroupsNest",
                    f"pod group {gang.name}: subgroup {nested[1]} is below subgroup {nested[0]}: "
                    "their pods overlap, which needs a composite deeper than the definition can "
                    "state: one PodGroup for the whole gang",
                    warning=True,
                )
            )
            kept.append(gang)
            continue
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


def _nested(karta: Karta, subs: Sequence[PodGroup]) -> tuple[str, str] | None:
    """(upper, lower) of the first two subgroups whose components nest, if any."""
    names = {s.name for s in subs}
    for sub in subs:
        below = {c.name for c in karta.iter_descendants(sub.name)} & names
        if below:
            return sub.name, sorted(below)[0]
    return None


def group_gangs(
    out: Plan,
    annotations: Mapping[str, object],
    config: GangConfig,
    existing: Sequence[str] | None,
    complete: bool,
) -> None:
    """Make the workload's native gangs the children of one ``CompositePodGroup`` whose gang
    ``minGroupCount`` is the workload's annotation ``gang-min-groups`` (N of them start
    together, or none). ``complete``: every gang the workload will have is known (none waits
    for keys only pods carry), so too few of them is final.

    The annotation decides, not the gangs counted: the webhook (planning one pod) and the
    controller then agree on every child's ``parentCompositePodGroupName``, which cannot change.
    Refused with an event where it cannot hold: not served, too few gangs, gangs already
    composite (depth 3), more templates than a level holds, several priority classes (one per
    hierarchy), or templates an existing Workload lacks."""
    value = annotations.get(ANNOTATION_MIN_GROUPS)
    if value is None:
        return
    try:
        wanted = int(str(value))
    except ValueError:
        wanted = 0
    if wanted < 2:
        out.decisions.append(
            Decision(
                "BadAnnotation",
                f"annotation {ANNOTATION_MIN_GROUPS}={value!r} is not a whole number of at "
                "least 2: the gangs start independently",
                warning=True,
            )
        )
        return
    said = f"annotation {ANNOTATION_MIN_GROUPS}={wanted}"
    if not config.composite_groups:
        out.decisions.append(
            Decision(
                "CompositeNotServed",
                f"{said}: the cluster does not serve CompositePodGroup "
                "(scheduling.k8s.io/v1alpha3 and its gates): the gangs start independently",
                warning=True,
            )
        )
        return
    if out.composites:
        out.decisions.append(
            Decision(
                "CompositeNested",
                f"{said}: the gangs already are composite groups of their subgroups, and a "
                "composite of composites is not written: each gang starts on its own",
                warning=True,
            )
        )
        return
    roots = [g for g in out.gangs if g.backend == NATIVE]
    if len(roots) < wanted and (complete or not roots):
        out.decisions.append(
            Decision(
                "TooFewGangs",
                f"{said}, but the workload has {len(roots)} native gang(s): a composite group "
                "of them could never start, none is written",
                warning=True,
            )
        )
        return
    templates = sorted({g.template for g in roots})
    problem = None
    if len(templates) > MAX_TEMPLATES:
        problem = (
            f"its gangs use {len(templates)} pod-group templates, over the {MAX_TEMPLATES} "
            "a composite template holds"
        )
    classes = {g.priority_class for g in roots}
    if len(classes) > 1:
        shown = ", ".join(sorted(c or "(none)" for c in classes))
        problem = f"its gangs run with priority classes {shown}, and a hierarchy has one"
    template = GANG_SET_TEMPLATE
    while template in templates:  # a definition may be called gang-set too
        template = dns_label(f"{template}-0")
    if problem is None and existing is not None and not {template, *templates} <= set(existing):
        problem = "the existing Workload lacks its templates, which cannot change"
    if problem is not None:
        out.decisions.append(
            Decision("CompositeRefused", f"{said}: {problem}: the gangs start independently")
        )
        return
    name = dns_subdomain(f"{workload_object_name(out.workload)}-gangs")
    for g in roots:
        g.parent, g.standalone = name, False
    (priority,) = classes
    out.composites.append(
        Composite(
            name=name,
            group=name,
            definition=", ".join(sorted({g.definition for g in roots})),
            template=template,
            min_groups=wanted,
            rule=f"{said}: {wanted} of the workload's gangs start together",
            children=tuple(g.name for g in roots),
            priority_class=priority,
        )
    )
