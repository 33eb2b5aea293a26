"""``wlmap describe -f``: one workload's components, pods, gangs and resources, from files; and
the view both forms print (:func:`show`; the live form is :mod:`~workload_map.cli.describe_live`).

Live: GET the object, list its namespace's pods and keep those whose controller chain reaches
it. Offline (``-f``): the object from a file, candidate pods from ``--pods``, the definition from
``--definition`` or the catalog. Both build the engine's ``Workload`` and print its
``describe()`` dict as a table, JSON or YAML.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec

from workload_map.catalog.definitions import AmbiguousDefinition, Definition, gvk_text
from workload_map.catalog.resolution import resolve_gvk
from workload_map.cli.choices import DESCRIBE_OUTPUTS
from workload_map.cli.describe_events import render_events
from workload_map.cli.describe_view import RenderOptions, render_describe
from workload_map.cli.exits import (
    ERROR,
    NO_DEFINITION,
    OK,
    USAGE,
    CliError,
    UsageError,
)
from workload_map.cli.file_workload import Selector, names_with_gvk, pick_workload
from workload_map.cli.manifests import read_manifests, read_single, source_label
from workload_map.cli.render import dump_document
from workload_map.cli.targets import no_definition_error
from workload_map.cli.workload_view import describe_view, engine_errors, view_name
from workload_map.errors import WlmapError
from workload_map.model import Karta, load_karta
from workload_map.model.views import to_json

if TYPE_CHECKING:
    from workload_map.catalog.definitions import Definition
    from workload_map.catalog.resolution import Resolution
    from workload_map.cli.context import Context
    from workload_map.cli.manifests import Manifest
    from workload_map.engine.events import EventsView
    from workload_map.model import GVK

__all__ = ["OUTPUTS", "Found", "check_kind", "definition_from_file", "gang_pods", "run", "show"]

OUTPUTS = DESCRIBE_OUTPUTS


class Found(msgspec.Struct, frozen=True):
    """The workload to describe, its candidate pods and its definition; ``age`` (live) for the
    table, ``where`` (the file and document of ``-f``) for messages; ``events`` (live) reads
    the events section given the names of the pods in the workload's gangs."""

    obj: dict[str, Any]
    pods: list[dict[str, Any]] | None
    definition: Definition
    age: str | None = None
    where: str | None = None
    #: what the definition's references are read from: a resolver (live) or objects (files)
    references: Any = None
    events: Callable[[frozenset[str]], EventsView] | None = None


def run(args: argparse.Namespace, ctx: Context) -> int:
    """``wlmap describe -f FILE`` (the command table's module for describe with ``-f``: it
    enters no cluster code unless a cluster is named for its Kartas)."""
    fmt = ctx.output_for(OUTPUTS, "describe")
    return show(args, ctx, _offline(args, ctx), fmt)


def show(args: argparse.Namespace, ctx: Context, found: Found, fmt: str) -> int:
    """Print the view of ``found`` (live or from a file) in ``fmt``."""

    obj, pods, definition, age = found.obj, found.pods, found.definition, found.age
    view = describe_view(
        obj,
        pods,
        definition,
        explain=args.explain,
        file_mode=args.file is not None,
        where=found.where,
        references=found.references,
    )
    _warn_problems(view, ctx)
    if fmt == "name":
        ctx.stdout.write(view_name(view) + "\n")
        return OK
    if found.events is not None and getattr(args, "show_events", True):
        view["events"] = to_json(found.events(gang_pods(view)))
    if fmt in ("json", "yaml"):
        ctx.stdout.write(dump_document(view, fmt))
        return OK

    explanation = view.pop("explain", None) if args.explain else None
    opts = RenderOptions(
        pod_limit=args.pod_limit, component_limit=args.component_limit, age=age, style=ctx.style
    )
    ctx.stdout.write(render_describe(view, opts))
    if explanation is not None:
        webhook = _webhook_decisions(obj, pods, definition)
        ctx.stdout.write("\nExplain:\n" + _explain_text(explanation, webhook))
    if isinstance(view.get("events"), dict):  # last, as kubectl describe prints them
        ctx.stdout.write("\n" + render_events(view["events"], ctx.style, datetime.now(UTC)))
    return OK


def gang_pods(view: Mapping[str, Any]) -> frozenset[str]:
    """The names of the pods in the view's gangs (subgroups included)."""
    names: set[str] = set()
    stack = list(view.get("podGroups") or [])
    while stack:
        group = stack.pop()
        if isinstance(group, Mapping):
            names.update(str(p) for p in group.get("pods") or [])
            stack.extend(group.get("subGroups") or [])
    return frozenset(names)


def _webhook_decisions(
    obj: dict[str, Any], pods: list[dict[str, Any]] | None, definition: Definition
) -> dict[str, dict[str, Any]]:
    """Per pod name, what the gang webhook would set at its creation (as if opted in)."""
    if not pods:
        return {}
    # lazy: the gang room (~25 ms of imports) only for --explain
    from workload_map.gangs import pod_decisions

    candidates: list[Mapping[str, Any]] = [p for p in pods if p.get("kind") == "Pod"]
    try:
        decisions = pod_decisions(definition.karta, obj, candidates)
    except engine_errors():
        return {}  # the view above already reports what the engine could not evaluate
    return {str(d.get("pod")): d for d in decisions if d.get("pod")}


def _webhook_line(decision: dict[str, Any]) -> str:
    backend, group = decision.get("backend"), decision.get("podGroup")
    if not backend or not group:
        return f"      webhook: sets nothing ({decision.get('reason') or 'no gang'})"
    if decision.get("schedulingGroup"):
        how = f"spec.schedulingGroup.podGroupName={group}"
    else:
        marks = {**(decision.get("labels") or {}), **(decision.get("annotations") or {})}
        how = ", ".join(
            f"{k}={v}" for k, v in sorted(marks.items()) if not k.startswith("workload-map.run.ai/")
        )
    return f"      webhook: {backend} gang {group} ({how})"


def _warn_problems(view: dict[str, Any], ctx: Context) -> None:
    """What the engine could not work out, as ``warning:`` lines. The exit code stays 0 (as
    kubectl's warnings): the view is still printed, with the affected numbers at 0."""
    for message in view.get("errors") or []:
        ctx.warn(str(message))
    reasons = view.get("unattributedReasons")
    if not isinstance(reasons, dict):
        return
    by_reason: dict[str, list[str]] = {}
    for pod, reason in reasons.items():
        by_reason.setdefault(str(reason or "no reason given"), []).append(str(pod))
    for reason, pods in by_reason.items():
        shown = ", ".join(pods[:3]) + (f", +{len(pods) - 3} more" if len(pods) > 3 else "")
        noun = "pod" if len(pods) == 1 else "pods"
        ctx.warn(f"{len(pods)} {noun} not attributed ({reason}): {shown}")


def _explain_text(explanation: Any, webhook: dict[str, dict[str, Any]] | None = None) -> str:
    """Per pod: where it was placed and why, then its gang and what the gang webhook would set
    at its creation; YAML for shapes we do not know."""
    if isinstance(explanation, str):
        return "".join(f"  {line}\n" for line in explanation.rstrip("\n").splitlines())
    if not isinstance(explanation, list) or not all(isinstance(e, dict) for e in explanation):
        text = dump_document(explanation, "yaml")
        return "".join(f"  {line}\n" for line in text.rstrip("\n").splitlines())
    lines: list[str] = []
    for entry in explanation:
        place = "/".join(
            str(entry[k]) for k in ("component", "instance") if entry.get(k) not in (None, "")
        )
        if entry.get("replica") is not None:
            place += f"[{entry['replica']}]"
        if entry.get("pod") is None:
            # a note about the workload as a whole (e.g. a gang that implies no pods)
            lines.append("  (workload)")
        elif entry.get("unattributedReason"):
            lines.append(f"  {entry.get('pod')}: not attributed ({entry['unattributedReason']})")
        else:
            lines.append(f"  {entry.get('pod')} -> {place or '<no component>'}")
        lines.extend(f"      {step}" for step in entry.get("steps") or [])
        gang = entry.get("gang") or {}
        if gang.get("group"):
            rule = f": {gang['minMemberRule']}" if gang.get("minMemberRule") else ""
            lines.append(f"      gang {gang['group']} (min {gang.get('minMember')}{rule})")
            for key in gang.get("keys") or []:
                lines.append(f"        key {key.get('path')} = {key.get('value')}")
            sub = gang.get("subGroup")
            if isinstance(sub, dict):
                lines.append(f"        subgroup {sub.get('name')} (min {sub.get('minMember')})")
        elif gang.get("reason"):
            lines.append(f"      no gang: {gang['reason']}")
        decision = (webhook or {}).get(str(entry.get("pod")))
        if decision is not None:
            lines.append(_webhook_line(decision))
    return "\n".join(lines) + "\n"


def _offline(args: argparse.Namespace, ctx: Context) -> Found:
    """The workload of ``-f`` (picked among the file's objects), its candidate pods and its
    definition: ``--definition``, else the one resolver's answer for its GVK."""

    if args.file == "-" and (args.pods == "-" or args.definition == "-"):
        raise UsageError("only one of -f, --pods and --definition can read stdin (-)")
    selector = Selector.from_words(list(args.target))
    label = source_label(args.file)
    manifests = read_manifests(args.file, ctx.stdin)
    override = definition_from_file(args.definition, ctx) if args.definition else None
    found: dict[GVK, Resolution | None] = {}

    def resolution(gvk: GVK) -> Resolution | None:
        if gvk not in found:
            found[gvk] = _resolve(gvk, ctx)
        return found[gvk]

    def covered(manifest: Manifest) -> bool:
        gvk = manifest.gvk
        if gvk is None:
            return False
        if override is not None:
            return _written_for(override, gvk)
        return resolution(gvk) is not None

    try:
        chosen, others = pick_workload(manifests, label, selector=selector, covered=covered)
    except CliError as exc:
        if override is None or override.gvk is None or exc.code != NO_DEFINITION:
            raise

        raise CliError(
            f"--definition {args.definition} describes {gvk_text(override.gvk)}, and no object "
            f"in {label} has that group and kind",
            ERROR,
            hint=f"it holds: {names_with_gvk(manifests)}",
        ) from exc
    obj = _with_namespace(chosen.obj, ctx, label)
    pods: list[dict[str, Any]] | None = None
    if args.pods is not None:
        # the file's other objects (owned Jobs, ReplicaSets, …) can link pods to the workload
        pods = [m.obj for m in read_manifests(args.pods, ctx.stdin)]
        pods += [m.obj for m in others if m.obj.get("kind") != "Pod"]
    # a definition's references are read from the file's other objects and --ref files
    refs = [m.obj for m in others] + reference_objects(getattr(args, "ref", None), ctx)
    if override is not None:
        check_kind(override, args.definition, chosen.gvk, chosen.label)
        return Found(obj, pods, override, where=str(chosen.source), references=refs)
    gvk = chosen.gvk
    assert gvk is not None  # checked() insists on apiVersion and kind
    definition = _definition_for(gvk, resolution(gvk), ctx)
    return Found(obj, pods, definition, where=str(chosen.source), references=refs)


def reference_objects(paths: list[str] | None, ctx: Context) -> list[dict[str, Any]]:
    """Every object of the ``--ref`` files (the objects a definition's references read)."""
    out: list[dict[str, Any]] = []
    for path in paths or ():
        out += [m.obj for m in read_manifests(path, ctx.stdin)]
    return out


def _with_namespace(obj: dict[str, Any], ctx: Context, label: str) -> dict[str, Any]:
    """``-n`` fills in a missing namespace; a different one in the file is an error (kubectl)."""
    wanted = ctx.connection.namespace
    if not wanted:
        return obj
    meta = obj.get("metadata") or {}
    own = meta.get("namespace")
    if own and own != wanted:
        raise UsageError(
            f'the namespace from the provided object "{own}" does not match the namespace '
            f'"{wanted}"',
            hint=f"{label} is in namespace {own}: pass -n {own}, or leave -n out",
        )
    if own:
        return obj
    return {**obj, "metadata": {**meta, "namespace": wanted}}


def _written_for(definition: Definition, gvk: GVK) -> bool:
    """Whether ``definition`` can read an object of ``gvk``: its root has the same group and
    kind (any version), or names no kind at all."""
    root = definition.gvk
    return root is None or root.group_kind == gvk.group_kind


def check_kind(definition: Definition, path: str, gvk: GVK | None, what: str) -> None:
    """A definition from ``--definition`` must be written for the object's group and kind."""

    root = definition.gvk
    if root is None or gvk is None or _written_for(definition, gvk):
        return
    raise CliError(
        f"--definition {path} describes {gvk_text(root)}, but {what} is {gvk_text(gvk)}",
        ERROR,
        hint="pass a Karta whose root component has the workload's group and kind",
    )


def definition_from_file(path: str, ctx: Context) -> Definition:

    doc = read_single(path, ctx.stdin).obj
    try:
        karta = load_karta(doc)
    except WlmapError as exc:
        raise CliError(f"--definition {path}: not a usable Karta: {exc}", ERROR) from exc
    if not isinstance(karta, Karta):
        raise CliError(f"--definition {path}: expected one Karta", USAGE)
    name = karta.name or path
    return Definition(karta, name, "file", doc)


def _resolve(wanted: GVK, ctx: Context) -> Resolution | None:
    """The one resolver's answer for an object of ``wanted`` read from a file: the cluster's
    Kartas first when a cluster is named explicitly (``--context``/``--kubeconfig``), then the
    catalog."""

    definitions = ctx.definitions(ctx.optional_cluster(explicit_only=True))
    try:
        return resolve_gvk(wanted, definitions)
    except AmbiguousDefinition as exc:
        raise CliError(str(exc), ERROR) from exc


def _definition_for(gvk: GVK, found: Resolution | None, ctx: Context) -> Definition:
    """The resolved definition (a fallback to another version warns); exit 4 without one."""
    if found is None:
        error = no_definition_error(gvk=gvk)
        if gvk.group_kind == ("run.ai", "Karta"):
            error.hint = (
                "this is a Karta (a definition), not a workload: check it with wlmap validate "
                "FILE, or apply it with describe -f WORKLOAD --definition FILE"
            )
        raise error
    if found.note:
        ctx.warn(found.note)
    return found.definition
