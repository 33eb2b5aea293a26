"""``wlmap serve``: start the web view (cluster from the kubeconfig, or ``-f DIR`` files)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import webbrowser
from collections.abc import Sequence
from pathlib import Path

import msgspec
from aiohttp import web

from workload_map.errors import WlmapError
from workload_map.kube.flags import add_connection_flags
from workload_map.kube.kubeconfig import kubeconfig_contexts
from workload_map.kube.options import connection_options
from workload_map.web.app import WebSettings, build_app
from workload_map.web.source import FileSource, LiveSource, MultiSource, Source

__all__ = ["build_parser", "main"]


def build_parser(prog: str = "wlmap serve") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog,
        description="A local, read-only web view of every workload: tree, gangs, GPUs and "
        "definitions, with your kubeconfig's permissions.",
    )
    p.add_argument(
        "--address",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1; only loopback Hosts are served)",
    )
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any free one)")
    p.add_argument("--open", action="store_true", help="open the browser at the address")
    p.add_argument(
        "-f",
        "--filename",
        type=Path,
        metavar="DIR",
        help="serve the workloads, pods and Kartas of these files (no cluster)",
    )
    p.add_argument(
        "--ref",
        dest="refs",
        action="append",
        type=Path,
        default=[],
        metavar="FILE",
        help="with -f: objects the definitions' references read (a TrainJob's runtime), "
        "not shown as workloads (repeatable)",
    )
    # kubectl's connection flags, the same set as every wlmap command's
    add_connection_flags(
        p,
        several_contexts=True,
        several_namespaces=True,
        namespace_help="only these namespaces (repeatable; enough with one namespace's rights)",
    )
    p.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"])
    return p


async def _serve(args: argparse.Namespace) -> int:
    # handlers first: a stop asked for while the source connects or the site starts (a
    # supervisor's SIGTERM right after the URL is printed) ends the server cleanly, not the
    # process by the signal's default action
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    source: Source
    if args.filename is not None:
        source = FileSource(args.filename, refs=args.refs)
    elif args.several is not None:
        connections = {
            name: msgspec.structs.replace(args.connection, context=name) for name in args.several
        }
        source = await asyncio.to_thread(
            MultiSource, connections, namespaces=tuple(args.namespace or ())
        )
    else:
        source = await asyncio.to_thread(
            LiveSource, args.connection, namespaces=tuple(args.namespace or ())
        )
    settings = WebSettings(address=args.address)
    runner = web.AppRunner(build_app(source, settings), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, args.address, args.port)
    await site.start()
    port = runner.addresses[0][1] if runner.addresses else args.port
    host = "127.0.0.1" if args.address in ("127.0.0.1", "0.0.0.0", "") else args.address
    url = f"http://{host}:{port}/?token={settings.token}"
    print(f"wlmap serve: open {url}", flush=True)
    if args.open:
        webbrowser.open(url)
    await stop.wait()
    await runner.cleanup()
    source.close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        args.connection = connection_options(args, os.environ, default_timeout=10.0)
    except ValueError as exc:
        parser.error(str(exc))
    if args.refs and args.filename is None:
        parser.error("--ref gives the objects of -f files' references; a cluster is read live")
    # several clusters: each context through its own connection (its credentials)
    args.several = None
    if len(set(args.contexts or ())) > 1 or args.all_contexts:
        if args.filename is not None:
            parser.error("-f serves files: it takes no --context")
        try:
            args.several = (
                kubeconfig_contexts(args.connection)
                if args.all_contexts
                else list(dict.fromkeys(args.contexts))
            )
        except WlmapError as exc:
            parser.error(str(exc))
        if not args.several:
            parser.error("--all-contexts: the kubeconfig has no contexts")
    logging.basicConfig(
        level=getattr(logging, args.log_level.upper()),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        return asyncio.run(_serve(args))
    except WlmapError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: cannot listen on {args.address}:{args.port}: {exc}", file=sys.stderr)
        return 1
