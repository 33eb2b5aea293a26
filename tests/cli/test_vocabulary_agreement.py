"""Requested, pending and held agree, number by number, in the CLI, the web view and the exporter.

One fixture cluster (the example JobSet: four 8-GPU workers and a driver) with a pod of every
kind the vocabulary tells apart: bound and running, pending (no node), finished (a failed
driver attempt, still bound) and terminating (a worker being deleted, still on its node). Each
consumer evaluates it its own way: ``wlmap describe`` (JSON and text), ``wlmap get -o json`` and
``-o wide`` against the in-memory API, the web view's list and vitals, the exporter's series.
The table of every number (``pytest -s`` prints it) is what the issue's note quotes.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.cli.fake_cluster import JOBSET, FakeAPI
from workload_map.cluster.inventory import Inventory
from workload_map.exporter import ExporterHealth, WorkloadCollector
from workload_map.web import views

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "jobset"
GPU = "nvidia.com/gpu"


def _cluster() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    jobset = yaml.safe_load((EXAMPLE / "jobset.yaml").read_text())
    listed = yaml.safe_load((EXAMPLE / "pods.yaml").read_text())["items"]
    mine = [o for o in listed if o["metadata"].get("namespace") == "ml-team"]
    others = [
        o for o in mine if o["kind"] != "Pod" or o["metadata"]["name"].startswith("llm-pretrain-")
    ]
    by_name = {o["metadata"]["name"]: o for o in others if o["kind"] == "Pod"}
    # terminating: a bound worker being deleted (held, not current)
    leaving = by_name["llm-pretrain-workers-0-1-q8w3z"]
    leaving["metadata"]["deletionTimestamp"] = "2026-11-02T10:00:00Z"
    # finished: a failed earlier attempt of the driver, still naming its node (not held)
    failed = copy.deepcopy(by_name["llm-pretrain-driver-0-0-x7k2p"])
    failed["metadata"]["name"] = "llm-pretrain-driver-0-0-a1b2c"
    failed["metadata"]["uid"] = "pod-llm-pretrain-driver-0-0-a1b2c"
    failed["status"] = {"phase": "Failed", "reason": "Error"}
    others.append(failed)
    return jobset, others


def _exporter(inventory: Inventory) -> dict[tuple[str, ...], float]:
    text = WorkloadCollector(inventory, health=ExporterHealth(last_sync=1.0)).exposition()
    out: dict[tuple[str, ...], float] = {}
    for family in text_string_to_metric_families(text.decode()):
        for s in family.samples:
            if s.labels.get("workload") != "llm-pretrain":
                continue
            if s.name in ("workloadmap_workload_pods", "workloadmap_component_pods"):
                key = ("pods", s.labels.get("instance", ""), s.labels["state"])
            elif s.name in ("workloadmap_workload_resources", "workloadmap_component_resources"):
                key = (s.labels["resource"], s.labels.get("instance", ""), s.labels["state"])
            else:
                continue
            out[key] = s.value
    return out


def _web(inventory: Inventory) -> tuple[dict[str, str], views.Row]:
    (entry,) = [e for e in inventory.entries() if e.top_level]
    tiles = {v.label: v for v in views.vitals(entry).items}
    out = {}
    for label, key in (("Pods", "pods"), ("GPUs", GPU), ("CPU (cores)", "cpu")):
        for state in ("requested", "pending", "held"):
            out[f"{key}/{state}"] = getattr(tiles[label], state)
    listing = views.rows(inventory, views.Filters(), dt.datetime.now(dt.UTC))
    (row,) = listing.rows
    return out, row


def test_cli_web_and_exporter_agree_number_by_number(wlmap, tmp_path: Path) -> None:
    jobset, objects = _cluster()
    (tmp_path / "jobset.yaml").write_text(yaml.safe_dump(jobset))
    (tmp_path / "pods.yaml").write_text(yaml.safe_dump({"kind": "List", "items": objects}))

    # the CLI: describe of files, JSON and text
    r = wlmap(
        [
            "describe",
            "-f",
            str(tmp_path / "jobset.yaml"),
            "--pods",
            str(tmp_path / "pods.yaml"),
            "-o",
            "json",
        ]
    )
    assert r.code == 0, r.err
    described = json.loads(r.out)
    text = wlmap(
        ["describe", "-f", str(tmp_path / "jobset.yaml"), "--pods", str(tmp_path / "pods.yaml")]
    )
    assert text.code == 0, text.err
    usage = {
        line.split()[0]: line.split()[1:]
        for line in text.out.splitlines()
        if re.match(r"^  (pods|GPU|CPU) ", line)
    }
    # the CLI: get against the in-memory API (-o json, and the wide table)
    api = FakeAPI(namespace="ml-team").serve(JOBSET)
    api.add(jobset, *objects)
    got = json.loads(wlmap(["get", "jobsets", "-o", "json"], api=api).out)
    (item,) = [i for i in got["items"] if i["name"] == "llm-pretrain"]
    wide = wlmap(["get", "jobsets", "-o", "wide"], api=api).out.splitlines()
    header = wide[0].split()
    (line,) = [row.split() for row in wide[1:] if row.split()[0] == "llm-pretrain"]
    wide_cells = dict(zip(header, line, strict=False))

    inventory = Inventory()
    inventory.apply_documents([jobset, *objects])
    series = _exporter(inventory)
    tiles, row = _web(inventory)

    pods, res = described["pods"], described
    workers = next(c for c in described["components"] if c.get("instance") == "workers")
    table: list[tuple[str, Any, Any, Any, Any, Any]] = []

    def check(what: str, cli: Any, cli_other: Any, web: Any, exporter: Any, want: Any) -> None:
        """Every consumer that shows the number (None: this one does not show it) agrees."""
        table.append((what, cli, cli_other, web, exporter, want))
        shown = [v for v in (cli, cli_other, web, exporter) if v is not None]
        assert shown and all(v == want for v in shown), (what, cli, cli_other, web, exporter)

    check(
        "pods requested",
        pods["desired"],
        int(usage["pods"][0]),
        int(tiles["pods/requested"]),
        series[("pods", "", "desired")],
        5,
    )
    check(
        "pods pending",
        pods["pending"],
        item["pods"]["pending"],
        int(tiles["pods/pending"]),
        series[("pods", "", "pending")],
        1,
    )
    check(
        "pods held",
        pods["held"],
        int(wide_cells["HELD"]),
        int(tiles["pods/held"]),
        series[("pods", "", "held")],
        4,
    )
    check(
        "pods current",
        pods["current"],
        item["pods"]["current"],
        row.entry.summary.totals.current if row.entry.summary else None,
        series[("pods", "", "current")],
        4,
    )
    check(
        "GPUs requested",
        res["resources"]["gpus"],
        item["gpus"],
        row.gpus,
        series[(GPU, "", "requested")],
        32,
    )
    check(
        "GPUs pending",
        res["pendingResources"]["gpus"],
        item["gpusPending"],
        row.gpus_pending,
        series[(GPU, "", "pending")],
        8,
    )
    check(
        "GPUs held",
        res["heldResources"]["gpus"],
        int(wide_cells["GPUS-HELD"]),
        row.gpus_held,
        series[(GPU, "", "held")],
        24,
    )
    check(
        "GPUs held (text, tile)",
        int(usage["GPU"][2]),
        int(tiles[f"{GPU}/held"]),
        row.gpus_held,
        series[(GPU, "", "held")],
        24,
    )
    check(
        "CPU held, cores",
        res["heldResources"]["cpuMillis"] / 1000,
        float(usage["CPU"][2]),
        float(tiles["cpu/held"]),
        series[("cpu", "", "held")],
        98,
    )
    check(
        "CPU pending, cores",
        res["pendingResources"]["cpuMillis"] / 1000,
        float(usage["CPU"][1]),
        float(tiles["cpu/pending"]),
        series[("cpu", "", "pending")],
        32,
    )
    # per component: describe's node and the exporter's component series
    check(
        "workers pods held",
        workers["replicas"]["held"],
        None,
        None,
        series[("pods", "workers", "held")],
        3,
    )
    check(
        "workers GPUs pending",
        workers["pendingResources"]["gpus"],
        None,
        None,
        series[(GPU, "workers", "pending")],
        8,
    )
    check(
        "workers GPUs held",
        workers["heldResources"]["gpus"],
        None,
        None,
        series[(GPU, "workers", "held")],
        24,
    )

    widths = (24, 10, 12, 10, 10, 8)
    head = ("number", "describe", "text/get", "web", "exporter", "expected")
    print()
    print("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
    for cells in table:
        print(
            "  ".join(
                ("-" if c is None else f"{c:g}" if isinstance(c, float) else str(c)).ljust(w)
                for c, w in zip(cells, widths, strict=True)
            )
        )
