"""``wlmap get`` over several clusters (``--context A --context B``, ``--all-contexts``).

Each cluster is listed through its own context (its server, its credentials, its default
namespace) by the one-cluster path, which hands its rows back instead of printing them; the
rows come back marked with their context. A cluster that cannot be listed is a failure naming
its context, not the end of the command. Its own module so that one-cluster ``get`` (the usual
case) loads none of it, and so that the command module keeps to the listing itself.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

import msgspec

from workload_map.cli.exits import ERROR, CliError, UsageError
from workload_map.kube.errors import ClusterError
from workload_map.kube.kubeconfig import kubeconfig_contexts

if TYPE_CHECKING:
    from workload_map.cli.context import Context
    from workload_map.cli.get_rows import Row

__all__ = ["OneCluster", "contexts", "gather"]

#: lists one cluster through the given context into the given list (the command's own path)
OneCluster = Callable[["Context", list["Row"]], object]


def contexts(ctx: Context) -> list[str]:
    """The contexts ``get`` lists: those named (in order, once each), or with
    ``--all-contexts`` every context of the kubeconfig."""
    if not ctx.all_contexts:
        return list(dict.fromkeys(ctx.contexts))
    ctx.check_kubeconfig()
    names = kubeconfig_contexts(ctx.connection)
    if not names:
        raise CliError("--all-contexts: the kubeconfig has no contexts", ERROR)
    return names


def gather(
    args: argparse.Namespace, ctx: Context, one_cluster: OneCluster
) -> tuple[list[Row], bool]:
    """Every context's rows, each marked with its context (a CLUSTER column and a ``cluster``
    key), and whether some cluster failed. Each failure is a warning naming its context; when
    every cluster failed, the failures together are the error."""
    if getattr(args, "watch", False) or getattr(args, "watch_only", False):
        raise UsageError("watch follows one cluster: name one --context")
    rows: list[Row] = []
    failed: list[str] = []
    for name in contexts(ctx):
        sub = msgspec.structs.replace(
            ctx,
            connection=msgspec.structs.replace(ctx.connection, context=name),
            contexts=(name,),
            all_contexts=False,
            warnings=[],
            _cluster=None,
            _definitions=None,
        )
        collected: list[Row] = []
        try:
            one_cluster(sub, collected)
        except UsageError:
            raise  # the same for every cluster
        except (CliError, ClusterError) as exc:
            failed.append(f"context {name}: {exc}")
        sub.flush_warnings(prefix=f"context {name}: ")
        for row in collected:
            row.cluster = name
            row.view = {"cluster": name, **row.view}
        rows.extend(collected)
    if failed and not rows:
        raise CliError("; ".join(failed), ERROR)
    for message in failed:
        ctx.warn(message)
    return rows, bool(failed)
