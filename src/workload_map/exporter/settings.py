"""The exporter's flags, shared by ``wlmap operator`` and ``wlmap exporter`` (same names)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from workload_map.errors import WlmapError

__all__ = ["DEFAULT_ADDRESS", "BindAddressError", "ExporterSettings", "add_flags", "settings_from"]

#: the exporter's own address, apart from the operator's --metrics-bind-address (:8080)
DEFAULT_ADDRESS = ":8082"


class BindAddressError(WlmapError):
    """A bind address that is not ``[HOST]:PORT``."""

    def __init__(self, flag: str, value: str) -> None:
        self.flag, self.value = flag, value
        super().__init__(
            f"{flag}: expected [HOST]:PORT (e.g. :8082 or 127.0.0.1:8082), got {value!r}"
        )


@dataclass(frozen=True)
class ExporterSettings:
    host: str
    port: int
    include_namespaces: tuple[str, ...] = ()
    exclude_namespaces: tuple[str, ...] = ()
    workload_labels: tuple[str, ...] = ()
    rediscover_seconds: float = 60.0


def _split(values: list[str] | None) -> tuple[str, ...]:
    out: list[str] = []
    for value in values or ():
        out.extend(v.strip() for v in value.split(",") if v.strip())
    return tuple(dict.fromkeys(out))


def parse_address(flag: str, value: str) -> tuple[str, int]:
    host, sep, port = value.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise BindAddressError(flag, value)
    host = host.strip("[]")
    return host or "0.0.0.0", int(port)


def add_flags(parser: argparse.ArgumentParser, *, standalone: bool = False) -> None:
    """The exporter's flags; ``standalone`` leaves out the operator's on/off switch."""
    if not standalone:
        parser.add_argument(
            "--enable-workload-metrics",
            action="store_true",
            help="export workloadmap_* workload metrics (on --workload-metrics-bind-address)",
        )
    parser.add_argument(
        "--workload-metrics-bind-address",
        default=DEFAULT_ADDRESS,
        metavar="[HOST]:PORT",
        help=f"where the workload metrics are served (default {DEFAULT_ADDRESS})",
    )
    parser.add_argument(
        "--metrics-namespaces",
        action="append",
        metavar="NS[,NS…]",
        help="export only these namespaces (repeatable or comma-separated; default: all)",
    )
    parser.add_argument(
        "--metrics-exclude-namespaces",
        action="append",
        metavar="NS[,NS…]",
        help="never export these namespaces",
    )
    parser.add_argument(
        "--metrics-workload-labels",
        action="append",
        metavar="KEY[,KEY…]",
        help="workload labels copied onto workloadmap_workload_info as label_<key> (allowlist)",
    )


def settings_from(args: argparse.Namespace) -> ExporterSettings:
    host, port = parse_address(
        "--workload-metrics-bind-address", str(args.workload_metrics_bind_address)
    )
    return ExporterSettings(
        host=host,
        port=port,
        include_namespaces=_split(args.metrics_namespaces),
        exclude_namespaces=_split(args.metrics_exclude_namespaces),
        workload_labels=_split(args.metrics_workload_labels),
    )
