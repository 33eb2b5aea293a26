"""``wlmap definitions``: the workload types wlmap understands, and where each comes from.

Works offline (the built-in catalog) and, when a cluster is configured, merges the cluster's
Karta objects (origin ``cluster``). ``-o json|yaml`` prints Karta objects ready for
``kubectl apply`` or ``wlmap validate -``.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from workload_map.cli.choices import DEFINITIONS_OUTPUTS
from workload_map.cli.exits import ERROR, NO_DEFINITION, OK, CliError, UsageError
from workload_map.cli.outputs import DefinitionsList, InvalidKarta, KartaObject
from workload_map.cli.render import dump_document, format_table
from workload_map.cli.suggest import did_you_mean
from workload_map.cli.targets import definition_kind_match
from workload_map.model.views import to_json

if TYPE_CHECKING:
    from workload_map.catalog.definitions import Definition
    from workload_map.cli.context import Context

__all__ = ["OUTPUTS", "run"]

OUTPUTS = DEFINITIONS_OUTPUTS


def run(args: argparse.Namespace, ctx: Context) -> int:
    fmt = ctx.output_for(OUTPUTS, "definitions")
    if args.name and (args.group is not None or args.kind or args.def_version):
        raise UsageError("give a NAME or filters (--group/--kind/--version), not both")
    if args.kind and args.group is None:
        raise UsageError("--kind needs --group (use --group '' or --group core for the core group)")
    group = _CORE_ALIASES.get(args.group, args.group)
    if args.def_version and not args.kind:
        raise UsageError("--version needs --kind")
    definitions = ctx.definitions(ctx.optional_cluster())
    if args.name:
        found = definitions.by_name(args.name)
        if found is None:
            found = _by_kind(args.name, definitions)
        broken = next((b for b in definitions.broken if b.name == args.name), None)
        if found is None and broken is not None:
            return _show_broken(broken, fmt, ctx)
        if found is None:
            # names are long slugs: offer kinds too ("jobst" → "jobset")
            words = [d.name for d in definitions.all()] + [k.lower() for k in definitions.kinds()]
            raise CliError(
                f'no definition named "{args.name}"',
                ERROR,
                hint=did_you_mean(args.name, words) or "list them with: wlmap definitions",
            )
        if fmt in ("json", "yaml"):
            ctx.stdout.write(dump_document(_clean(found.source), fmt))
        elif fmt == "name":
            ctx.stdout.write(f"karta.run.ai/{found.name}\n")
        else:
            ctx.stdout.write(_detail(found))
        return OK
    items = definitions.all()
    if group is not None:
        items = [d for d in items if d.gvk is not None and d.gvk.group == group]
    if args.kind:
        items = [d for d in items if d.gvk is not None and d.gvk.kind.lower() == args.kind.lower()]
    if args.def_version:
        items = [d for d in items if d.gvk is not None and d.gvk.version == args.def_version]
    if not items and (group is not None or args.kind):
        raise CliError(
            "no definition matches " + _filters(args),
            NO_DEFINITION,
            hint="list them with: wlmap definitions",
        )
    items.sort(key=lambda d: d.name)
    # cluster Kartas that do not even load are listed too (unless a filter rules them out)
    unloadable = [b for b in definitions.broken if not any(d.name == b.name for d in items)]
    if group is not None or args.kind or args.def_version:
        unloadable = []
    invalid = [(d.name, d.problem) for d in items if d.problem] + [
        (b.name, b.problem) for b in unloadable
    ]
    for name, problem in invalid:
        ctx.warn(f'cluster Karta "{name}" is invalid: {problem}')
    if fmt in ("json", "yaml"):
        doc = DefinitionsList(
            items=tuple(KartaObject(_clean(d.source)) for d in items),
            count=len(items),
            invalid=tuple(InvalidKarta(n, str(p)) for n, p in invalid),
        )
        ctx.stdout.write(dump_document(to_json(doc), fmt))
        return OK
    if fmt == "name":
        for d in items:
            ctx.stdout.write(f"karta.run.ai/{d.name}\n")
        return OK

    rows = [
        [
            d.name,
            d.kind or "<none>",
            d.gvk.api_version if d.gvk else "<none>",
            f"{d.origin} (INVALID)"
            if d.problem
            else f"{d.origin} (STALE)"
            if d.stale
            else d.origin,
            _components(d, args.component_limit),
        ]
        for d in items
    ]
    for b in unloadable:
        kind, api_version = _gvk_parts(b.gvk)
        rows.append([b.name, kind, api_version, "cluster (INVALID)", "-"])
    for line in format_table(["NAME", "KIND", "APIVERSION", "ORIGIN", "COMPONENTS"], rows):
        ctx.stdout.write(line + "\n")
    return OK


def _clean(source: dict[str, Any]) -> dict[str, Any]:
    """The Karta object without what the server manages (``kubectl get -o yaml`` shows
    ``managedFields`` only on request): it stays ready for ``kubectl apply``."""
    meta = source.get("metadata")
    if not isinstance(meta, dict) or "managedFields" not in meta:
        return source
    return {**source, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}


def _gvk_parts(text: str | None) -> tuple[str, str]:
    if not text:
        return "<none>", "<none>"
    api_version, _, kind = text.partition(", Kind=")
    return kind or "<none>", api_version or "<none>"


def _show_broken(broken: Any, fmt: str, ctx: Context) -> int:
    """A cluster Karta that does not load: what it is and why (exit 1)."""
    if fmt in ("json", "yaml"):
        ctx.stdout.write(
            dump_document(_clean(broken.raw or {"metadata": {"name": broken.name}}), fmt)
        )
    elif fmt == "name":
        ctx.stdout.write(f"karta.run.ai/{broken.name}\n")
    else:
        kind, api_version = _gvk_parts(broken.gvk)
        ctx.stdout.write(
            f"Name:       {broken.name}\nOrigin:     cluster\n"
            f"Workload:   {kind} ({api_version})\nProblem:    {broken.problem}\n"
        )
    raise CliError(f'cluster Karta "{broken.name}" is invalid: {broken.problem}', ERROR)


# what users type for the core group ("" in a GVK), as kubectl's api-resources shows it
_CORE_ALIASES = {"core": "", "v1": ""}


def _by_kind(word: str, definitions: Any) -> Definition | None:
    """``wlmap definitions raycluster``: a kind (or plural) naming exactly one definition."""

    found = definition_kind_match(word, definitions)
    if len(found) > 1:
        names = ", ".join(d.name for d in found)
        raise CliError(
            f'"{word}" is covered by {len(found)} definitions: {names}',
            ERROR,
            hint="give one NAME, or filter: wlmap definitions --group GROUP --kind KIND",
        )
    return found[0] if found else None


def _filters(args: argparse.Namespace) -> str:
    parts = []
    if args.group is not None:
        parts.append(f"--group {args.group!r}")
    if args.kind:
        parts.append(f"--kind {args.kind}")
    if args.def_version:
        parts.append(f"--version {args.def_version}")
    return " ".join(parts)


def _components(d: Definition, limit: int) -> str:
    names = [c.name for c in d.karta.components()]
    if limit and len(names) > limit + 1:
        return ", ".join(names[: limit + 1]) + f", +{len(names) - limit - 1} more"
    return ", ".join(names)


def _detail(d: Definition) -> str:
    karta = d.karta
    lines = [f"Name:       {d.name}", f"Origin:     {d.origin}"]
    if d.problem:
        lines.append(f"Problem:    INVALID: {d.problem}")
    if d.note:
        lines.append(f"Note:       {d.note}")
    gvk = karta.root_gvk
    if gvk is not None:
        lines.append(f"Workload:   {gvk.kind} ({gvk.api_version})")
    lines.append("Components:")

    def walk(name: str, indent: str) -> None:
        children = karta.children_of(name)
        for index, child in enumerate(children):
            last = index == len(children) - 1
            lines.append(f"{indent}{'`-- ' if last else '|-- '}{_component_line(child)}")
            walk(child.name, indent + ("    " if last else "|   "))

    lines.append(f"  {_component_line(karta.root)}")
    walk(karta.root.name, "  ")
    status = karta.root.status_definition
    if status is not None:
        mapped = [name for name, matchers in status.status_mappings.entries() if matchers]
        lines.append(f"Statuses:   {', '.join(mapped) if mapped else '<none>'}")
    suspendable = [c.name for c in karta.components() if c.suspend_definition is not None]
    if suspendable:
        lines.append(f"Suspend:    {', '.join(suspendable)}")
    gang = karta.gang_scheduling
    if gang is not None:
        if gang.pod_group is not None:
            subs = ", ".join(s.component_name for s in gang.pod_group.sub_groups)
            lines.append(
                f"Gangs:      podGroup {gang.pod_group.name}"
                + (f" (subgroups: {subs})" if subs else "")
            )
        for group in gang.pod_groups:
            members = ", ".join(m.component_name for m in group.members)
            lines.append(f"Gangs:      podGroups {group.name} (members: {members})")
    lines.append("")
    lines.append(f"(wlmap definitions {d.name} -o yaml prints the whole definition)")
    return "\n".join(lines) + "\n"


def _component_line(comp: Any) -> str:
    kind = f" {comp.kind.kind}" if comp.kind is not None else " (grouping)"
    bits = []
    if comp.spec_definition is not None:
        bits.append("pods")
    if comp.scale_definition is not None:
        bits.append("scale")
    if comp.instance_id_path:
        bits.append("instances")
    return f"{comp.name}{kind}" + (f"  [{', '.join(bits)}]" if bits else "")
