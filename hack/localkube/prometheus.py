"""Debian's prometheus (``make prometheus``) as a child process on loopback, and its HTTP query
API: what the exporter's tests and ``make demo-cluster`` scrape our metrics with."""

from __future__ import annotations

import contextlib
import json
import shutil
import time
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from .plane import BinariesMissing, HarnessError, Proc, http_ok, spawn, wait_for
from .ports import free_port

__all__ = ["INSTALL_HINT", "Prometheus", "scrape_config", "start_prometheus", "wait_http"]

INSTALL_HINT = "install it with `make prometheus` (Debian's prometheus package, as root)"


class Prometheus:
    """The HTTP query API of a Prometheus at ``127.0.0.1:port``."""

    def __init__(self, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}"

    def query(self, expr: str) -> list[dict[str, Any]]:
        """The instant vector of ``expr``; HarnessError when Prometheus refuses it."""
        url = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        with urllib.request.urlopen(url, timeout=5) as resp:
            doc = json.load(resp)
        if doc.get("status") != "success":
            raise HarnessError(f"{expr}: {doc}")
        return list(doc["data"]["result"])

    def wait(self, expr: str, count: int, timeout: float = 60.0) -> list[dict[str, Any]]:
        """``expr``'s result once it has ``count`` series or more (HarnessError after
        ``timeout`` seconds, naming what it last had)."""
        deadline = time.monotonic() + timeout
        result: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                result = self.query(expr)
                if len(result) >= count:
                    return result
            time.sleep(0.5)
        raise HarnessError(f"{expr}: expected {count} series, got {result}")


def wait_http(url: str, timeout: float = 60.0) -> str:
    """The body of ``url`` once it answers (HarnessError after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                return str(resp.read().decode())
        except OSError as exc:
            last = exc
            time.sleep(0.3)
    raise HarnessError(f"{url} did not answer: {last}")


def scrape_config(targets: Mapping[str, int], *, rules: Path | None = None) -> dict[str, Any]:
    """A configuration scraping ``127.0.0.1:port`` of each job name in ``targets`` and
    evaluating ``rules`` every second: a test or a demo sees a change within seconds."""
    return {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(rules)] if rules is not None else [],
        "scrape_configs": [
            {"job_name": job, "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}
            for job, port in targets.items()
        ],
    }


def start_prometheus(
    config: dict[str, Any], workdir: Path, *, timeout: float
) -> tuple[Proc, Prometheus]:
    """``prometheus`` with ``config`` (written to ``workdir/prometheus.yml``, its data in
    ``workdir/prometheus-data``) on a free loopback port, ready (``/-/ready``) within
    ``timeout`` seconds; the caller stops the returned process."""
    binary = shutil.which("prometheus")
    if binary is None:
        raise BinariesMissing(f"prometheus is not on PATH: {INSTALL_HINT}")
    config_file = workdir / "prometheus.yml"
    config_file.write_text(yaml.safe_dump(config))
    port = free_port()
    proc = spawn(
        "prometheus",
        [
            binary,
            f"--config.file={config_file}",
            f"--storage.tsdb.path={workdir / 'prometheus-data'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
        ],
        workdir / "prometheus.log",
    )
    try:
        wait_for(proc, lambda: http_ok(f"http://127.0.0.1:{port}/-/ready"), "prometheus", timeout)
    except BaseException:
        proc.stop()
        raise
    return proc, Prometheus(port)
