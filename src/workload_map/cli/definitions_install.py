"""``wlmap definitions install|uninstall``: the built-in catalog applied to a cluster as Kartas.

A separate parser from ``wlmap definitions [NAME]`` because ``install`` and ``uninstall`` are
reserved words there (INTERFACES.md); the work is done by
:mod:`workload_map.cluster.catalog_install`, which the operator's ``--install-catalog`` uses
too.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import IO

__all__ = ["main"]


def _parser(verb: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=f"wlmap definitions {verb}",
        description=(
            "Apply built-in definitions to the cluster as Karta objects (server-side apply; a "
            "user's own Karta of the same type is never replaced)"
            if verb == "install"
            else "Delete installed copies of built-in definitions (a user's own Karta is kept)"
        ),
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="built-in definition names")
    p.add_argument("--all", action="store_true", help="every built-in definition")
    p.add_argument("--dry-run", action="store_true", help="ask the server, change nothing")
    if verb == "install":
        p.add_argument(
            "--force",
            action="store_true",
            help="take over a Karta of the same name that is not a catalog copy (never deletes "
            "another Karta of the same type)",
        )
    p.add_argument("--kubeconfig", help="kubeconfig file")
    p.add_argument("--context", help="kubeconfig context")
    p.add_argument("-o", "--output", choices=("text", "json"), default="text")
    return p


def main(
    verb: str,
    argv: Sequence[str],
    stdout: IO[str] | None = None,
    stderr: IO[str] | None = None,
) -> int:
    from workload_map.cluster.catalog_install import install, uninstall
    from workload_map.errors import WlmapError
    from workload_map.kube.api import Api
    from workload_map.kube.options import from_flags

    out = stdout or sys.stdout
    err = stderr or sys.stderr
    parser = _parser(verb)
    try:
        args = parser.parse_args(list(argv))
    except SystemExit as exc:
        return int(exc.code or 0) and 2
    if not args.names and not args.all:
        err.write(f"error: name the definitions to {verb}, or give --all\n")
        return 2
    if args.names and args.all:
        err.write("error: give NAME… or --all, not both\n")
        return 2
    try:
        api = Api.connect(from_flags(args), pooled=False)
        if verb == "install":
            results = install(
                api, args.names, all_=args.all, dry_run=args.dry_run, force=args.force
            )
        else:
            results = uninstall(api, args.names, all_=args.all, dry_run=args.dry_run)
    except WlmapError as exc:
        err.write(f"error: {exc}\n")
        return 1
    if args.output == "json":
        doc = [{"name": r.name, "action": r.action, "detail": r.detail} for r in results]
        out.write(json.dumps(doc, indent=2) + "\n")
    else:
        for r in results:
            out.write(f"{r}\n")
            if r.action == "updated" and "stale" in r.detail:
                err.write(f"warning: {r.name} was a stale copy; updated to this catalog\n")
    return 1 if any(r.failed for r in results) else 0
