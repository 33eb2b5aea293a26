"""``wlmap describe TYPE/NAME``, ``describe TYPE NAME``, ``describe NAME`` and ``describe TYPE``:
live, from the cluster.

GET the object, list its namespace's pods and keep those whose controller chain reaches it;
the view is printed by :func:`workload_map.cli.describe_cmd.show`, as for ``describe -f``. A
module of its own so that ``describe -f`` (the command table picks by ``-f``) loads no cluster
code.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from workload_map.catalog.definitions import Definitions
from workload_map.cli.describe_cmd import (
    OUTPUTS,
    Found,
    check_kind,
    definition_from_file,
    show,
)
from workload_map.cli.describe_many import describe_type, names_a_type
from workload_map.cli.exits import ERROR, NOT_FOUND, CliError, UsageError
from workload_map.cli.humanize import age
from workload_map.cli.live_targets import ambiguous_name_error, find_by_name, resolve_type
from workload_map.cli.targets import parse_target
from workload_map.cluster.events import workload_events
from workload_map.cluster.ownership import find_pods
from workload_map.cluster.references import cluster_resolver
from workload_map.kube.errors import ClusterError, Forbidden, NotFound
from workload_map.model import GVK

if TYPE_CHECKING:
    from workload_map.catalog.definitions import Definition
    from workload_map.cli.context import Context

__all__ = ["run"]


def run(args: argparse.Namespace, ctx: Context) -> int:
    fmt = ctx.output_for(OUTPUTS, "describe")
    words = list(args.target)
    if args.definition is None and len(words) == 1 and "/" not in words[0]:
        if names_a_type(words[0], ctx):  # kubectl's `describe TYPE`: all of them
            return describe_type(words[0], args, ctx, fmt)
    if args.pods is not None:
        raise UsageError("--pods only applies with -f FILE; live pods come from the cluster")
    return show(args, ctx, _live(args, ctx), fmt)


def _live(args: argparse.Namespace, ctx: Context) -> Found:

    type_token, name = parse_target(list(args.target), "describe")
    if type_token is None:
        raise UsageError(
            "describe needs a workload: give it as TYPE/NAME or as TYPE NAME, or -f FILE",
            hint="e.g. wlmap describe jobset/train -n ml",
        )

    if name is None and names_a_type(type_token):
        raise _missing_name(type_token)  # before any cluster access: a plain usage error
    cluster = ctx.cluster()
    try:
        definitions = ctx.definitions(cluster)
        if name is None:
            return _bare_name(type_token, args, ctx, cluster, definitions)
        if args.definition is not None:
            override = definition_from_file(args.definition, ctx)
            target_res = resolve_type(type_token, cluster, _only(definitions, override))
            definition = override
            res = target_res.resource
            check_kind(
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
    created = (obj.get("metadata") or {}).get("creationTimestamp")
    return Found(
        obj,
        pods,
        definition,
        age(created),
        events=_events(cluster, obj, pods),
        references=cluster_resolver(cluster),
    )


def _events(cluster: Any, obj: dict[str, Any], pods: list[dict[str, Any]] | None) -> Any:
    """The events reader of :class:`Found` (read only when the section is shown)."""
    return lambda gang: workload_events(cluster, obj, pods, gang_pods=gang)


def _missing_name(type_token: str) -> UsageError:
    return UsageError(
        f"describe {type_token}: the NAME is missing; give it as TYPE/NAME or as TYPE NAME",
        hint=f"e.g. wlmap describe {type_token}/NAME (list them with wlmap get {type_token})",
    )


def _bare_name(
    word: str, args: argparse.Namespace, ctx: Context, cluster: Any, definitions: Any
) -> Found:
    """``describe WORD``: a TYPE without NAME (usage error) or a bare workload name."""

    if cluster.match_type(word) or definitions.by_root_kind(word):
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
    return Found(
        obj,
        pods,
        target.definition,
        age(created),
        events=_events(cluster, obj, pods),
        references=cluster_resolver(cluster),
    )


def _only(definitions: Any, override: Definition) -> Any:

    return Definitions([override, *[d for d in definitions.all() if d.gvk != override.gvk]])
