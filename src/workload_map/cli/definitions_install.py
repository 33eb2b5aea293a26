"""``wlmap definitions install|uninstall``: the built-in catalog applied to a cluster as Kartas.

Its own row of the command table (``install`` and ``uninstall`` are reserved words of
``wlmap definitions [NAME]``, INTERFACES.md) with the same connection flags as every command;
the work is done by :mod:`workload_map.cluster.catalog_install`, which the operator's
``--install-catalog`` uses too.
"""

from __future__ import annotations

import argparse
import json

from workload_map.cli.context import Context
from workload_map.cli.exits import ERROR, OK, UsageError
from workload_map.cluster.catalog_install import InstallResult, install, served_gvks, uninstall
from workload_map.kube.api import Api

__all__ = ["run"]

_OUTPUTS = ("text", "json")


def run(args: argparse.Namespace, ctx: Context) -> int:
    verb = args.verb
    output = ctx.own_output or "text"
    if output not in _OUTPUTS:
        raise UsageError(
            f"definitions {verb} does not support -o {output} (use one of: {', '.join(_OUTPUTS)})"
        )
    if not args.names and not args.all_definitions:
        raise UsageError(f"name the definitions to {verb}, or give --all")
    if args.names and args.all_definitions:
        raise UsageError("give NAME… or --all, not both")
    ctx.check_kubeconfig()
    api = Api.connect(ctx.connection, pooled=False)
    try:
        if verb == "install":
            only_served = args.all_definitions and not args.include_unserved
            results = install(
                api,
                args.names,
                all_=args.all_definitions,
                dry_run=args.dry_run,
                force=args.force,
                served=served_gvks(api) if only_served else None,
            )
        else:
            results = uninstall(api, args.names, all_=args.all_definitions, dry_run=args.dry_run)
    finally:
        api.close()
    if output == "json":
        doc = [{"name": r.name, "action": r.action, "detail": r.detail} for r in results]
        ctx.stdout.write(json.dumps(doc, indent=2) + "\n")
    else:
        for r in results:
            if r.action == "not-served":
                continue
            ctx.stdout.write(f"{r}\n")
            if r.action == "updated" and "stale" in r.detail:
                ctx.warn(f"{r.name} was a stale copy; updated to this catalog")
        _say_not_served(ctx, [r for r in results if r.action == "not-served"])
    return ERROR if any(r.failed for r in results) else OK


def _say_not_served(ctx: Context, skipped: list[InstallResult]) -> None:
    """One paragraph for the definitions left out, and how to add them later."""
    if not skipped:
        return
    ctx.stdout.write(
        f"skipped {len(skipped)} definition(s) whose kind this cluster does not serve "
        "(no CRD): " + ", ".join(f"{r.name} ({r.detail})" for r in skipped) + "\n"
        "after installing a kind's CRD: `wlmap definitions install NAME` (or --all again); "
        "--include-unserved installs them now\n"
    )
