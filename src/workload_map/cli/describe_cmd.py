"""``wlmap describe``: one workload's components, pods, gangs and resources, live or offline.

Live: GET the object, list its namespace's pods and keep those whose controller chain reaches
it. Offline (``-f``): the object from a file, candidate pods from ``--pods``, the definition from
``--definition`` or the catalog. Both build the engine's ``Workload`` and print its
``describe()`` dict as a table, JSON or YAML.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from workload_map.cli.exits import (
    ERROR,
    NO_DEFINITION,
    NOT_FOUND,
    OK,
    USAGE,
    CliError,
    UsageError,
)
from workload_map.cli.targets import no_definition_error, parse_target, resolve_type

if TYPE_CHECKING:
    from workload_map.catalog.definitions import Definition
    from workload_map.catalog.resolution import Resolution
    from workload_map.cli.context import Context
    from workload_map.cli.manifests import Manifest
    from workload_map.model import GVK

__all__ = ["OUTPUTS", "run"]

OUTPUTS = ("table", "json", "yaml", "name")


class _Found(msgspec.Struct, frozen=True):
    """The workload to describe, its candidate pods and its definition; ``age`` (live) for the
    table, ``where`` (the file and document of ``-f``) for messages."""

    obj: dict[str, Any]
    pods: list[dict[str, Any]] | None
    definition: Definition
    age: str | None = None
    where: str | None = None


def run(args: argparse.Namespace, ctx: Context) -> int:
    fmt = ctx.output_for(OUTPUTS, "describe")
    words = list(args.target)
    if args.file is None and args.definition is None and len(words) == 1 and "/" not in words[0]:
        from workload_map.cli.describe_many import describe_type, names_a_type

        if names_a_type(words[0], ctx):  # kubectl's `describe TYPE`: all of them
            return describe_type(words[0], args, ctx, fmt)
    if args.file is not None:
        found = _offline(args, ctx)
    else:
        if args.pods is not None:
            raise UsageError("--pods only applies with -f FILE; live pods come from the cluster")
        found = _live(args, ctx)
    from workload_map.cli.workload_view import describe_view

    obj, pods, definition, age = found.obj, found.pods, found.definition, found.age
    view = describe_view(
        obj,
        pods,
        definition,
        explain=args.explain,
        file_mode=args.file is not None,
        where=found.where,
    )
    _warn_problems(view, ctx)
    if fmt == "name":
        from workload_map.cli.workload_view import view_name

        ctx.stdout.write(view_name(view) + "\n")
        return OK
    if fmt in ("json", "yaml"):
        from workload_map.cli.render import dump_document

        ctx.stdout.write(dump_document(view, fmt))
        return OK
    from workload_map.cli.describe_view import RenderOptions, render_describe

    explanation = view.pop("explain", None) if args.explain else None
    opts = RenderOptions(
        pod_limit=args.pod_limit, component_limit=args.component_limit, age=age, style=ctx.style
    )
    ctx.stdout.write(render_describe(view, opts))
    if explanation is not None:
        webhook = _webhook_decisions(obj, pods, definition)
        ctx.stdout.write("\nExplain:\n" + _explain_text(explanation, webhook))
    return OK


def _webhook_decisions(
    obj: dict[str, Any], pods: list[dict[str, Any]] | None, definition: Definition
) -> dict[str, dict[str, Any]]:
    """Per pod name, what the gang webhook would set at its creation (as if opted in)."""
    if not pods:
        return {}
    from workload_map.cli.workload_view import engine_errors
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
        from workload_map.cli.render import dump_document

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


def _offline(args: argparse.Namespace, ctx: Context) -> _Found:
    """The workload of ``-f`` (picked among the file's objects), its candidate pods and its
    definition: ``--definition``, else the one resolver's answer for its GVK."""
    from workload_map.cli.file_workload import Selector, names_with_gvk, pick_workload
    from workload_map.cli.manifests import read_manifests, source_label

    if args.file == "-" and (args.pods == "-" or args.definition == "-"):
        raise UsageError("only one of -f, --pods and --definition can read stdin (-)")
    selector = Selector.from_words(list(args.target))
    label = source_label(args.file)
    manifests = read_manifests(args.file, ctx.stdin)
    override = _definition_from_file(args.definition, ctx) if args.definition else None
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
        from workload_map.catalog.definitions import gvk_text

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
    if override is not None:
        _check_kind(override, args.definition, chosen.gvk, chosen.label)
        return _Found(obj, pods, override, where=str(chosen.source))
    gvk = chosen.gvk
    assert gvk is not None  # checked() insists on apiVersion and kind
    return _Found(obj, pods, _definition_for(gvk, resolution(gvk), ctx), where=str(chosen.source))


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


def _check_kind(definition: Definition, path: str, gvk: GVK | None, what: str) -> None:
    """A definition from ``--definition`` must be written for the object's group and kind."""
    from workload_map.catalog.definitions import gvk_text

    root = definition.gvk
    if root is None or gvk is None or _written_for(definition, gvk):
        return
    raise CliError(
        f"--definition {path} describes {gvk_text(root)}, but {what} is {gvk_text(gvk)}",
        ERROR,
        hint="pass a Karta whose root component has the workload's group and kind",
    )


def _definition_from_file(path: str, ctx: Context) -> Definition:
    from workload_map.catalog.definitions import Definition
    from workload_map.cli.manifests import read_single
    from workload_map.errors import WlmapError
    from workload_map.model import Karta, load_karta

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
    from workload_map.catalog.definitions import AmbiguousDefinition
    from workload_map.catalog.resolution import resolve_gvk

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


def _live(args: argparse.Namespace, ctx: Context) -> _Found:
    from workload_map.cli.humanize import age
    from workload_map.cluster.ownership import find_pods
    from workload_map.kube.errors import ClusterError, Forbidden, NotFound
    from workload_map.model import GVK

    type_token, name = parse_target(list(args.target), "describe")
    if type_token is None:
        raise UsageError(
            "describe needs a workload: give it as TYPE/NAME or as TYPE NAME, or -f FILE",
            hint="e.g. wlmap describe jobset/train -n ml",
        )
    from workload_map.cli.describe_many import names_a_type

    if name is None and names_a_type(type_token):
        raise _missing_name(type_token)  # before any cluster access: a plain usage error
    cluster = ctx.cluster()
    try:
        definitions = ctx.definitions(cluster)
        if name is None:
            return _bare_name(type_token, args, ctx, cluster, definitions)
        if args.definition is not None:
            override = _definition_from_file(args.definition, ctx)
            target_res = resolve_type(type_token, cluster, _only(definitions, override))
            definition = override
            res = target_res.resource
            _check_kind(
                override,
                args.definition,
                GVK(res.group, res.version, res.kind),
                f"{type_token}/{name}",
            )
        else:
            target = resolve_type(type_token, cluster, definitions, warn=ctx.warn)
            res, definition = target.resource, target.definition
        namespace = cluster.namespace if res.namespaced else None
        try:
            obj = cluster.get(res, name, namespace)
        except NotFound as exc:
            raise CliError(
                str(exc),
                NOT_FOUND,
                hint=f"list them with: wlmap get {type_token}"
                + (f" -n {namespace}" if namespace else ""),
            ) from exc
        try:
            pods = find_pods(cluster, obj)
        except Forbidden as exc:
            ctx.warn(f"{exc}; showing the workload without its pods")
            pods = None  # unknown (shown as such), not none: 0 would be a lie
    except ClusterError as exc:
        raise CliError(str(exc), ERROR) from exc
    return _Found(obj, pods, definition, age((obj.get("metadata") or {}).get("creationTimestamp")))


def _missing_name(type_token: str) -> UsageError:
    return UsageError(
        f"describe {type_token}: the NAME is missing; give it as TYPE/NAME or as TYPE NAME",
        hint=f"e.g. wlmap describe {type_token}/NAME (list them with wlmap get {type_token})",
    )


def _bare_name(
    word: str, args: argparse.Namespace, ctx: Context, cluster: Any, definitions: Any
) -> _Found:
    """``describe WORD``: a TYPE without NAME (usage error) or a bare workload name."""
    from workload_map.cli.humanize import age
    from workload_map.cli.targets import ambiguous_name_error, find_by_name
    from workload_map.cluster.ownership import find_pods
    from workload_map.kube.discovery import match_type

    if match_type(word, cluster.resources()) or definitions.by_root_kind(word):
        raise _missing_name(word)
    found = find_by_name(word, cluster, definitions)
    if not found:
        where = f"namespace {cluster.namespace}" if cluster.namespace else "the cluster"
        raise CliError(
            f'no workload named "{word}" found in {where} (looked through every covered type)',
            NOT_FOUND,
            hint=f"if {word} is a TYPE, give the NAME too: wlmap describe {word}/NAME; "
            "list workloads with: wlmap get --all-types",
        )
    if len(found) > 1:
        raise ambiguous_name_error(word, found, "describe")
    target, obj = found[0]
    pods = find_pods(cluster, obj)
    created = (obj.get("metadata") or {}).get("creationTimestamp")
    return _Found(obj, pods, target.definition, age(created))


def _only(definitions: Any, override: Definition) -> Any:
    from workload_map.catalog.definitions import Definitions

    return Definitions([override, *[d for d in definitions.all() if d.gvk != override.gvk]])
