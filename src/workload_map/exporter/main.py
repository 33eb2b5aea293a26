"""``wlmap exporter``: the workload metrics exporter without the operator.

The same flags as the operator's exporter (``--workload-metrics-bind-address`` …) plus
kubectl's connection flags (:mod:`workload_map.kube.flags`; in a pod, the service account). One replica: it
exports workload series itself (run the operator with ``--enable-workload-metrics`` for
leader-elected replicas).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections.abc import Sequence

from workload_map.errors import WlmapError
from workload_map.exporter.service import ExporterService
from workload_map.exporter.settings import add_flags, settings_from
from workload_map.kube.cache import InformerSet
from workload_map.kube.connect_api import open_api
from workload_map.kube.flags import add_connection_flags
from workload_map.kube.options import connection_options

__all__ = ["build_parser", "main"]


def build_parser(prog: str = "wlmap exporter") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Serve workloadmap_* metrics: every pod joined to its workload, every "
        "workload's phase, pods and resources, from watches of the cluster.",
    )
    # kubectl's connection flags, the same set as every wlmap command's; -n is a shorthand
    # for --metrics-namespaces (the exporter watches the whole cluster otherwise)
    add_connection_flags(parser, namespace_help="export only this namespace")
    parser.add_argument(
        "--log-level", default="info", choices=["debug", "info", "warning", "error"]
    )
    add_flags(parser, standalone=True)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        options = connection_options(args, os.environ)
    except ValueError as exc:
        parser.error(str(exc))
    if args.namespace and not args.metrics_namespaces:
        args.metrics_namespaces = [args.namespace]
    logging.basicConfig(
        level=getattr(logging, args.log_level.upper()),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        settings = settings_from(args)
        api = open_api(options)
        informers = InformerSet(api.transport())
        service = ExporterService(settings, api.transport(), informers).start()
    except WlmapError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    print(
        f"serving workload metrics on {settings.host}:{service.port}", file=sys.stderr, flush=True
    )
    stop.wait()
    service.stop()
    informers.stop()
    return 0
